//! `herd mpi …` end to end under `mpirun -np 2` (loopback, oversubscribed, with a deadline):
//! each command's JSON line from rank 0, its checks, and a bad argument failing every rank
//! with a message instead of a hang.

use herd_mpi::testing::{mpirun, run_with_deadline};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

fn herd_mpi(np: usize, args: &[&str]) -> (bool, String, String) {
    let exe = Path::new(env!("CARGO_BIN_EXE_herd"));
    let mut cmd = mpirun(np, exe, args);
    cmd.env("HERD_NUM_THREADS", "1");
    let (status, out, err) = run_with_deadline(&mut cmd, Duration::from_secs(240));
    let status =
        status.unwrap_or_else(|| panic!("herd {args:?} under mpirun -np {np} timed out\n{out}\n{err}"));
    (status.success(), out, err)
}

/// The one JSON line rank 0 prints.
fn json_line(out: &str) -> Value {
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with('{')).collect();
    assert_eq!(lines.len(), 1, "one JSON line from rank 0 only:\n{out}");
    serde_json::from_str(lines[0]).expect("valid JSON")
}

fn median_of(v: &Value, entry: &str) -> f64 {
    let m = v[entry]["median"].as_f64().unwrap_or_else(|| panic!("{entry}.median in {v}"));
    let samples = v[entry]["samples"].as_array().unwrap_or_else(|| panic!("{entry}.samples in {v}"));
    assert!(!samples.is_empty() && m > 0.0, "{entry}: {v}");
    m
}

#[test]
fn potrf_against_scalapack() {
    let (ok, out, err) = herd_mpi(2, &["mpi", "potrf", "-n", "300", "--nb", "64", "--reps", "2", "--json"]);
    assert!(ok, "{out}\n{err}");
    let v = json_line(&out);
    assert_eq!(v["ranks"], 2);
    assert_eq!(v["grid"], serde_json::json!([1, 2]));
    for e in ["herd", "scalapack"] {
        median_of(&v, e);
        for r in v[e]["residuals"].as_array().unwrap() {
            assert!(r.as_f64().unwrap() < 10.0, "{e} residual {r}");
        }
    }
}

#[test]
fn fft_overlapped_bulk_and_fftw() {
    let (ok, out, err) =
        herd_mpi(2, &["mpi", "fft", "-n", "64", "--reps", "2", "--fftw-plan", "estimate", "--json"]);
    assert!(ok, "{out}\n{err}");
    let v = json_line(&out);
    for e in ["overlapped", "bulk", "fftw"] {
        median_of(&v, e);
    }
    assert_eq!(v["check"]["overlapped_vs_bulk_max_abs"], 0.0);
}

#[test]
fn copy_and_exchange() {
    let (ok, out, err) = herd_mpi(
        2,
        &["mpi", "copy", "--size", "1M", "--reps", "2", "--chunk", "96K", "--window-chunk", "200K", "--json"],
    );
    assert!(ok, "{out}\n{err}");
    let v = json_line(&out);
    let ex = &v["exchange"];
    for e in ["herd_pack_isend", "herd_pipelined", "herd_shared_window", "mpi_vector"] {
        median_of(ex, e);
    }
    // 2048 rows × 1024 f64 = 16 MiB in chunks of at most 96 KiB
    assert_eq!(ex["herd_pipelined"]["chunk_bytes"], 96 << 10, "{ex}");
    assert_eq!(ex["herd_pipelined"]["chunks"], (16usize << 20).div_ceil(96 << 10), "{ex}");
    assert!(ex["speedup"].as_f64().unwrap() > 0.0 && ex["speedup_pipelined"].as_f64().unwrap() > 0.0, "{ex}");
    // the two ranks share this machine: the shared window is used
    assert_eq!(ex["herd_shared_window"]["route"], "SharedWindow", "{ex}");
    assert_eq!(ex["herd_shared_window"]["slots"], 4, "{ex}");
    assert_eq!(ex["herd_shared_window"]["chunks"], (16usize << 20).div_ceil(200 << 10), "{ex}");
    assert!(ex["speedup_shared_window"].as_f64().unwrap() > 0.0, "{ex}");
}

#[test]
fn bad_arguments_fail_every_rank_with_a_message() {
    let (ok, out, err) = herd_mpi(2, &["mpi", "fft", "-n", "63"]);
    assert!(!ok, "n = 63 on 2 ranks must fail\n{out}");
    assert!(err.contains("63"), "the message names the value:\n{err}");
    let (ok, _, err) = herd_mpi(2, &["mpi", "potrf", "-n", "100", "--grid", "3x1"]);
    assert!(!ok);
    assert!(err.contains("--grid 3x1"), "{err}");
}
