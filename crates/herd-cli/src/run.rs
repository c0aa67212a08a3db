//! `herd run [OPTIONS] [--] CMD [ARGS...]`: runs an unmodified OpenMP
//! program (`gcc -fopenmp`) on herd's OpenMP runtime.
//!
//! * The options set the matching `HERD_*` variables for the program
//!   (`--threads` → `HERD_NUM_THREADS`, ...). The resulting `HERD_*`
//!   environment (inherited variables plus options) is checked with herd's
//!   own parser before anything is started, so a bad value is reported here,
//!   naming the option, the variable, the value and the accepted forms.
//! * The library is `$HERD_OMP_LIB` if set, else `libherd_omp.so` next to the
//!   running `herd` executable (`target/release/` after `make omp`); `gomp/`
//!   next to it holds the same library built as `libgomp.so.1`. By default
//!   `gomp/libgomp.so.1` is put first in `LD_PRELOAD`, so that the program's
//!   libgomp dependency resolves to the preloaded object (the loader matches
//!   the soname) and libgomp itself is never loaded; only when
//!   `gomp/libgomp.so.1` does not exist is the library itself preloaded (the
//!   program's libgomp is then loaded too; herd-omp undoes its binding of the
//!   initial thread). With `--replace` the `gomp/` directory is put first in
//!   `LD_LIBRARY_PATH` instead. Existing values are kept after herd's.
//!   `HERD_OMP_LIB` itself is not passed on (it is `herd run`'s, not the
//!   runtime's). [`LOADING`] says the same in `herd run --help`.
//! * The program replaces this process (`exec`), so signals, the process id
//!   and the exit status are the program's own. If it cannot be started the
//!   error names it and the status is 127 (not found) or 126 (not
//!   executable), as in a shell.

use crate::error::CliError;
use crate::CliResult;
use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the library is, when not next to the executable.
const LIB_VAR: &str = "HERD_OMP_LIB";
/// The library's file name.
const LIB_NAME: &str = "libherd_omp.so";
/// The folder next to the library holding it as `libgomp.so.1`.
const GOMP_DIR: &str = "gomp";
/// The library's name in the `gomp` folder.
const GOMP_NAME: &str = "libgomp.so.1";
/// How to build the library.
const BUILD_HINT: &str = "build it with `make omp` (which writes target/release/libherd_omp.so and \
                          target/release/gomp/libgomp.so.1), or set HERD_OMP_LIB to the library's path";

/// What `herd run` loads, for `herd run --help`.
const LOADING: &str = "What is loaded: herd's library is $HERD_OMP_LIB, else libherd_omp.so next to this \
executable; gomp/libgomp.so.1 next to it is the same library built under libgomp's name. herd run sets \
LD_PRELOAD=<library's directory>/gomp/libgomp.so.1, so the program's libgomp.so.1 dependency resolves to \
herd and libgomp itself is never loaded (when gomp/libgomp.so.1 does not exist, the library itself is \
preloaded instead). With --replace it sets LD_LIBRARY_PATH=<library's directory>/gomp instead. Values \
already in LD_PRELOAD / LD_LIBRARY_PATH are kept after herd's; -v prints what is set.";

/// Options of `herd run`.
#[derive(clap::Args, Debug)]
#[command(override_usage = "herd run [OPTIONS] [--] CMD [ARGS]...", after_long_help = LOADING)]
pub struct RunArgs {
    /// Participants per region, master included (HERD_NUM_THREADS).
    #[arg(long, value_name = "N")]
    threads: Option<String>,
    /// Places (HERD_PLACES): threads, cores, ll_caches, sockets, numa_domains,
    /// optionally with a count such as cores(4), or a list such as {0,1},{2:2}.
    #[arg(long, value_name = "SPEC")]
    places: Option<String>,
    /// Binding of participants to places (HERD_BIND): false, true, close, spread.
    #[arg(long, value_name = "KIND")]
    bind: Option<String>,
    /// Region dispatch strategy (HERD_DISPATCH): lj, lja, ljaml, pw, pwa, pwaml.
    #[arg(long, value_name = "D")]
    dispatch: Option<String>,
    /// Idle policy (HERD_WAIT): active, passive, spin:<microseconds>.
    #[arg(long, value_name = "POLICY")]
    wait: Option<String>,
    /// Cores (the last ones) left idle for the OS (HERD_RESERVE).
    #[arg(long, value_name = "N")]
    reserve: Option<String>,
    /// Lay out a machine you do not have (HERD_TOPOLOGY), an hwloc synthetic
    /// description such as "pack:2 l3:1 core:4 pu:1".
    #[arg(long, value_name = "DESC")]
    topology: Option<String>,
    /// Print the resolved configuration at start-up (HERD_DISPLAY_ENV=true;
    /// --display-env=verbose for more).
    #[arg(long, value_name = "LEVEL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    display_env: Option<String>,
    /// Write a Chrome trace-event JSON file (HERD_TRACE).
    #[arg(long, value_name = "FILE")]
    trace: Option<String>,
    /// Replace libgomp through LD_LIBRARY_PATH=<library's directory>/gomp
    /// instead of preloading gomp/libgomp.so.1 (LD_PRELOAD). For programs
    /// linked with libgomp.so.1.
    #[arg(long)]
    replace: bool,
    /// Print the environment set and the command on stderr before running it.
    #[arg(short, long)]
    verbose: bool,
    /// The program to run, and its arguments.
    #[arg(value_name = "CMD", required = true, trailing_var_arg = true)]
    command: Vec<OsString>,
}

impl RunArgs {
    /// `(option, variable, value)` for every option given.
    fn settings(&self) -> Vec<(&'static str, &'static str, &str)> {
        let all = [
            ("--threads", "HERD_NUM_THREADS", &self.threads),
            ("--places", "HERD_PLACES", &self.places),
            ("--bind", "HERD_BIND", &self.bind),
            ("--dispatch", "HERD_DISPATCH", &self.dispatch),
            ("--wait", "HERD_WAIT", &self.wait),
            ("--reserve", "HERD_RESERVE", &self.reserve),
            ("--topology", "HERD_TOPOLOGY", &self.topology),
            ("--display-env", "HERD_DISPLAY_ENV", &self.display_env),
            ("--trace", "HERD_TRACE", &self.trace),
        ];
        all.into_iter().filter_map(|(opt, var, v)| v.as_deref().map(|v| (opt, var, v))).collect()
    }
}

/// Runs the program; returns only if it could not be started.
pub fn run(args: &RunArgs) -> CliResult {
    let settings = args.settings();
    check_settings(&settings)?;
    let (var, value) = if args.replace {
        let dir = gomp_dir(&library_path()?)?;
        ("LD_LIBRARY_PATH", prepend(&dir, "LD_LIBRARY_PATH", &[':', ';'])?)
    } else {
        // Preload the build named libgomp.so.1 when it is there: the
        // program's own libgomp.so.1 dependency is then satisfied by it (the
        // loader matches the soname of an already loaded object), so libgomp
        // is never loaded beside herd — no second runtime initialising itself.
        let lib = library()?;
        let lib = gomp_dir(&lib).map(|d| d.join(GOMP_NAME)).unwrap_or(lib);
        ("LD_PRELOAD", prepend(&lib, "LD_PRELOAD", &[':', ' ', '\t', '\n'])?)
    };
    let Some((program, rest)) = args.command.split_first() else {
        return Err(CliError::Usage("no command given: herd run [OPTIONS] [--] CMD [ARGS...]".into()));
    };
    let mut cmd = Command::new(program);
    cmd.args(rest).env(var, &value).env_remove(LIB_VAR);
    for &(_, name, v) in &settings {
        cmd.env(name, v);
    }
    if args.verbose {
        let mut words = vec![format!("{var}={}", quote(&value.to_string_lossy()))];
        words.extend(settings.iter().map(|&(_, name, v)| format!("{name}={}", quote(v))));
        words.extend(args.command.iter().map(|w| quote(&w.to_string_lossy())));
        eprintln!("herd run: {}", words.join(" "));
    }
    let err = cmd.exec();
    // Still here: the program was not started.
    eprintln!("herd: cannot run {:?}: {err}", program.to_string_lossy());
    std::process::exit(if err.kind() == std::io::ErrorKind::NotFound { 127 } else { 126 });
}

/// `word` as a shell would need it: in single quotes unless it is plain.
fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Checks the `HERD_*` environment the program will see (inherited variables
/// overridden by the options) with herd's own parser.
fn check_settings(settings: &[(&'static str, &'static str, &str)]) -> CliResult {
    let lookup = |name: &str| -> Option<String> {
        match settings.iter().find(|(_, var, _)| *var == name) {
            Some((_, _, v)) => Some(v.to_string()),
            None => std::env::var(name).ok(),
        }
    };
    // Names the option when the bad value came from one.
    let blame = |e: herd::Error| -> CliError {
        let option = match &e {
            herd::Error::InvalidSetting { name, .. } => {
                settings.iter().find(|(_, var, _)| var == name).map(|(opt, _, _)| *opt)
            }
            _ => None,
        };
        match option {
            Some(opt) => CliError::Usage(format!("{opt}: {e}")),
            None => CliError::Herd(e),
        }
    };
    herd::Config::from_lookup(lookup).map_err(blame)?;
    // HERD_TOPOLOGY is checked when the topology is built: do it now.
    if let Some(desc) = lookup("HERD_TOPOLOGY").filter(|d| !d.trim().is_empty()) {
        herd::Topology::synthetic(desc.trim()).map_err(|e| {
            let from = settings.iter().any(|(_, var, _)| *var == "HERD_TOPOLOGY");
            let what = if from { "--topology" } else { "HERD_TOPOLOGY" };
            CliError::Usage(format!("{what} {desc:?}: {e}"))
        })?;
    }
    Ok(())
}

/// Where the library should be: `$HERD_OMP_LIB`, else next to this executable.
/// Made absolute, so that it still holds if the program changes directory.
fn library_path() -> CliResult<PathBuf> {
    let path = match std::env::var_os(LIB_VAR).filter(|v| !v.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => {
            let exe = std::env::current_exe().map_err(|e| {
                CliError::Failed(format!(
                    "cannot find the herd executable ({e}) to locate {LIB_NAME} next to it; \
                     set HERD_OMP_LIB to the library's path"
                ))
            })?;
            exe.parent().unwrap_or(Path::new("/")).join(LIB_NAME)
        }
    };
    std::path::absolute(&path).map_err(|e| CliError::Usage(format!("{LIB_VAR}={}: {e}", path.display())))
}

/// The library, which must exist.
fn library() -> CliResult<PathBuf> {
    let lib = library_path()?;
    if lib.is_file() {
        return Ok(lib);
    }
    Err(match std::env::var_os(LIB_VAR).filter(|v| !v.is_empty()) {
        Some(_) => {
            CliError::Usage(format!("{LIB_VAR} names {}, which is not a file: {BUILD_HINT}", lib.display()))
        }
        None => {
            CliError::Failed(format!("herd's OpenMP library {} does not exist: {BUILD_HINT}", lib.display()))
        }
    })
}

/// The `gomp/` folder next to `lib`, which must hold `libgomp.so.1`.
fn gomp_dir(lib: &Path) -> CliResult<PathBuf> {
    let dir = lib.parent().unwrap_or(Path::new("/")).join(GOMP_DIR);
    if dir.join(GOMP_NAME).is_file() {
        return Ok(dir);
    }
    let msg =
        format!("--replace needs {}, which does not exist: {BUILD_HINT}", dir.join(GOMP_NAME).display());
    // Named by the user (HERD_OMP_LIB): bad input; else herd is not built.
    Err(match std::env::var_os(LIB_VAR).filter(|v| !v.is_empty()) {
        Some(_) => CliError::Usage(msg),
        None => CliError::Failed(msg),
    })
}

/// `path` followed by the current value of `var` (if any), separated by ':'.
/// `path` must not contain any of the list's `separators`, which the dynamic
/// loader would split it at.
fn prepend(path: &Path, var: &str, separators: &[char]) -> CliResult<OsString> {
    let text = path.to_string_lossy();
    if text.contains(separators) {
        return Err(CliError::Usage(format!(
            "{} cannot go in {var}: the dynamic loader would split it at {:?}; move it or link to it \
             from a path without such characters",
            path.display(),
            separators.iter().filter(|&&c| text.contains(c)).collect::<String>()
        )));
    }
    let mut value = path.as_os_str().to_os_string();
    if let Some(old) = std::env::var_os(var).filter(|v| !v.is_empty()) {
        value.push(OsStr::new(":"));
        value.push(old);
    }
    Ok(value)
}
