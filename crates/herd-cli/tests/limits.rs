//! Bad input and requests beyond the machine: every one is refused up front,
//! quickly, with a message naming the problem and the documented exit status
//! (2: bad input; 3: a limit of the machine or process; see `herd --help`).

use std::os::unix::process::ExitStatusExt;
use std::process::Output;
use std::time::{Duration, Instant};

mod common;

use common::{herd, ok, stderr, stdout};

/// How long a refusal may take (the binary starts, reads the topology,
/// perhaps builds a default pool; the machine may be loaded).
const QUICK: Duration = Duration::from_secs(15);

/// Runs `herd args` with `env`, expecting exit status `code` within
/// [`QUICK`], no panic, and every needle in stderr.
fn refused(args: &[&str], env: &[(&str, &str)], code: i32, needles: &[&str]) -> Output {
    let mut cmd = herd(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let o = cmd.output().expect("herd runs");
    let took = start.elapsed();
    let e = stderr(&o);
    assert_eq!(o.status.signal(), None, "{args:?} {env:?}: killed by a signal: {e}");
    assert_eq!(o.status.code(), Some(code), "{args:?} {env:?}: {e}");
    assert!(took < QUICK, "{args:?} {env:?}: took {took:?}");
    assert!(!e.contains("panicked") && !e.contains("aborting"), "{args:?}: {e}");
    for n in needles {
        assert!(e.contains(n), "{args:?} {env:?}: {n:?} missing: {e}");
    }
    o
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[test]
fn la_potrf_sizes_below_the_minimum_are_usage_errors() {
    for n in ["0", "1", "31"] {
        refused(&["la", "potrf", "-n", n], &[], 2, &[&format!("'{n}'"), "32.."]);
    }
    refused(&["la", "potrf", "-n", "100", "--nb", "0"], &[], 2, &["--nb"]);
    refused(&["la", "potrf", "-n", "100", "--reps", "0"], &[], 2, &["--reps"]);
    refused(&["la", "potrf", "-n", "-5"], &[], 2, &["-5"]);
}

#[test]
fn la_potrf_larger_than_memory_is_a_limit_error() {
    if herd::limits::mem_available().is_none() {
        eprintln!("no MemAvailable: skipped");
        return;
    }
    // Used to panic inside faer on an 800 TB allocation.
    let o = refused(&["la", "potrf", "-n", "10000000"], &[], 3, &["herd: ", "-n 10000000", "MemAvailable"]);
    // Both numbers, in bytes.
    let e = stderr(&o);
    assert_eq!(e.matches(" bytes").count(), 2, "{e}");
    // 3 n×n f64 matrices.
    assert!(e.contains("2400000000000000 bytes"), "{e}");
    // gemm: A, B, C, C's input and a difference.
    let o = refused(&["la", "gemm", "-n", "10000000"], &[], 3, &["herd: ", "-n 10000000", "MemAvailable"]);
    assert!(stderr(&o).contains("4000000000000000 bytes"), "{}", stderr(&o));
}

/// `--threads 500` used to allocate a 64 MiB flush buffer per participant
/// with no check (32 GiB on a 24 GiB machine). The synthetic topology fixes
/// the buffer at 64 MiB (twice its 64 MiB L3, capped); the participant count
/// is raised where the machine has the memory for 500.
#[test]
fn pmo_flush_buffers_beyond_memory_are_a_limit_error() {
    let Some(avail) = herd::limits::mem_available() else {
        eprintln!("no MemAvailable: skipped");
        return;
    };
    let threads = (avail / (64 << 20) + 1).max(500).to_string();
    refused(
        &["pmo", "--quick", "--sizes", "64", "--threads", &threads],
        &[("HERD_TOPOLOGY", "pack:1 l3:1(size=64MiB) core:2 pu:1")],
        3,
        &[&format!("{threads} cache-flush buffer(s) of 64.0 MiB"), "MemAvailable"],
    );
}

/// More threads than the process can create: an error naming the limit,
/// not std's abort ("failed to set up alternative stack guard page").
#[test]
fn more_threads_than_the_process_can_have_is_a_limit_error() {
    let max = read_u64("/proc/sys/kernel/threads-max").unwrap_or(1 << 20);
    let pids = read_u64("/proc/sys/kernel/pid_max").unwrap_or(1 << 22);
    let huge = (2 * max.max(pids) + 1000).to_string();
    // The map count allows about vm.max_map_count / 4 threads: just above it
    // is where std used to abort.
    let over_maps = read_u64("/proc/sys/vm/max_map_count").map(|m| (m / 4 + 200).to_string());
    for n in [Some("99999".to_string()), Some(huge), over_maps].into_iter().flatten() {
        let env = [("HERD_NUM_THREADS", n.as_str())];
        let needle = format!("pool of {n} participant(s)");
        for args in [
            &["topo"][..],
            &["la", "potrf", "-n", "64", "--reps", "1"],
            &["bench", "overhead", "--iters", "1", "--reps", "1"],
        ] {
            refused(args, &env, 3, &["herd: cannot start", &needle, "at most"]);
        }
        // `herd pmo` builds its default pool from the environment too.
        refused(&["pmo", "--quick", "--sizes", "64", "--trials", "1"], &env, 3, &[&needle]);
    }
}

#[test]
fn numeric_options_out_of_range_are_usage_errors() {
    let cases: &[(&[&str], &str)] = &[
        (&["pmo", "--threads", "0"], "--threads"),
        (&["pmo", "--threads", "2000000"], "--threads"),
        (&["pmo", "--sizes", "64,0"], "--sizes"),
        (&["pmo", "--sizes", "4"], "--sizes"),
        (&["pmo", "--sizes", "64,x"], "--sizes"),
        (&["pmo", "-k", "0"], "--rank"),
        (&["pmo", "--trials", "0"], "--trials"),
        (&["pmo", "--trials", "2000000"], "--trials"),
        (&["bench", "overhead", "--iters", "0"], "--iters"),
        (&["bench", "overhead", "--reps", "0"], "--reps"),
        (&["bench", "overhead", "--iters", "99999999999999999999"], "--iters"),
        (&["trace", "analyze", "x.json", "--workers", "0"], "--workers"),
        (&["trace", "show", "x.json", "--width", "10"], "--width"),
        (&["monitor", "--interval-ms", "0"], "--interval-ms"),
    ];
    for (args, needle) in cases {
        refused(args, &[], 2, &[needle]);
    }
}

#[test]
fn invalid_environment_and_limits_keep_their_statuses_across_commands() {
    // The same invalid variable: status 2 whichever command reads it.
    let env = [("HERD_NUM_THREADS", "zero")];
    for args in [
        &["topo"][..],
        &["la", "potrf", "-n", "64", "--reps", "1"],
        &["bench", "overhead", "--iters", "1", "--reps", "1"],
        &["pmo", "--quick", "--sizes", "64", "--trials", "1"],
    ] {
        refused(args, &env, 2, &["HERD_NUM_THREADS", "\"zero\""]);
    }
}

#[test]
fn exit_statuses_are_documented_in_help() {
    let o = ok(&mut herd(&["--help"]));
    let s = stdout(&o);
    assert!(s.contains("Exit status:"), "{s}");
    for line in ["0  success", "1  the command ran and failed", "2  bad input", "3  the request exceeds"] {
        assert!(s.contains(line), "{line:?} missing: {s}");
    }
}
