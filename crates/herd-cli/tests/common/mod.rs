//! Helpers shared by the end-to-end tests of the `herd` binary (included with `mod common`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `herd` with every inherited `HERD_*` variable removed.
pub fn herd(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_herd"));
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("HERD_") {
            cmd.env_remove(k);
        }
    }
    cmd.args(args);
    cmd
}

pub fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("herd runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `cmd`, expecting success.
pub fn ok(cmd: &mut Command) -> Output {
    let o = run(cmd);
    assert!(o.status.success(), "{:?} failed: {}\n{}", cmd, stderr(&o), stdout(&o));
    o
}

/// A fresh path in the test's temporary directory (removed if it exists).
pub fn tmp(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("herd-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}
