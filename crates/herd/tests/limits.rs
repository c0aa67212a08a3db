//! A pool asked for more threads than the process can have is an error that
//! names the limit — never an abort — and a worker the OS refuses midway
//! leaves nothing behind.
//!
//! Each test runs its body in a child process (this test binary, running
//! only that test): an abort then shows as the child's failure instead of
//! killing the harness, and the child's thread count is not disturbed by
//! other tests running beside it.

use herd::{Dispatch, Error, Pool, PoolBuilder, Schedule};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

mod common;

/// Set in the child process (not `HERD_*`: herd warns about unknown ones).
const CHILD: &str = "LIMITS_TEST_CHILD";

fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// Runs test `name` alone in a child process with `env` added, and asserts
/// that it ran and passed, within `limit`.
fn in_child(name: &str, env: &[(&str, String)], limit: Duration) {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    cmd.args([name, "--exact", "--test-threads=1", "--nocapture"]).env(CHILD, "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let o = cmd.output().expect("child runs");
    let took = start.elapsed();
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "child {name}: {:?}\n{out}\n{err}", o.status);
    assert!(out.contains("1 passed"), "child {name} did not run the test:\n{out}");
    assert!(took < limit, "child {name} took {took:?}");
    eprint!("{err}");
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Threads of this process.
fn threads_now() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}

/// Waits (up to 5 s) for the thread count to come back to `n`: a joined
/// thread may still be listed for a moment while the kernel reaps it.
fn threads_back_to(n: usize) -> usize {
    let end = Instant::now() + Duration::from_secs(5);
    loop {
        let now = threads_now();
        if now <= n || Instant::now() > end {
            return now;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Builds from `HERD_*` (as the CLI does) and expects an [`Error::Limit`].
fn expect_limit(builder: PoolBuilder) -> (String, String) {
    let start = Instant::now();
    let before = threads_now();
    match builder.build() {
        Ok(p) => panic!("a pool of {} participants was built", p.num_threads()),
        Err(Error::Limit { limit, message }) => {
            assert!(start.elapsed() < Duration::from_secs(5), "took {:?}", start.elapsed());
            assert_eq!(threads_now(), before, "a thread was started");
            eprintln!("limit {limit}: {message}");
            (limit, message)
        }
        Err(e) => panic!("not a limit error: {e:?}"),
    }
}

#[test]
fn huge_request_is_an_error_not_an_abort() {
    if !is_child() {
        // Far above every limit on threads (and of the machine's PU count).
        let max = read_u64("/proc/sys/kernel/threads-max").unwrap_or(1 << 20);
        let pids = read_u64("/proc/sys/kernel/pid_max").unwrap_or(1 << 22);
        let n = 2 * max.max(pids) + 1000;
        in_child(
            "huge_request_is_an_error_not_an_abort",
            &[("HERD_NUM_THREADS", n.to_string())],
            Duration::from_secs(30),
        );
        return;
    }
    let n = std::env::var("HERD_NUM_THREADS").unwrap();
    for dispatch in [None, Some(Dispatch::Lj), Some(Dispatch::Pw)] {
        let mut b = PoolBuilder::from_env().expect("valid settings");
        if let Some(d) = dispatch {
            b = b.dispatch(d);
        }
        // The tightest limit of this machine is named (here: usually
        // vm.max_map_count or kernel.pid_max).
        let (limit, message) = expect_limit(b);
        assert!(!limit.is_empty() && message.contains(&limit), "{limit}: {message}");
        assert!(message.contains(&format!("pool of {n} participant(s)")), "{message}");
    }
    // The process is intact: a pool of a sensible size works.
    let pool = Pool::builder().num_threads(2).build().expect("small pool");
    assert_eq!(pool.join(|| 1, || 2), (1, 2));
}

/// Each thread costs 4 mappings (stack, guard page, std's signal stack and
/// its guard page); a request over `vm.max_map_count` used to abort in std
/// ("failed to set up alternative stack guard page").
#[test]
fn map_count_limit_is_an_error_not_an_abort() {
    let Some(max_maps) = read_u64("/proc/sys/vm/max_map_count") else {
        eprintln!("no /proc/sys/vm/max_map_count: skipped");
        return;
    };
    let n = max_maps / 4 + 200;
    if !is_child() {
        in_child(
            "map_count_limit_is_an_error_not_an_abort",
            &[("HERD_NUM_THREADS", n.to_string())],
            Duration::from_secs(30),
        );
        return;
    }
    let (limit, message) = expect_limit(PoolBuilder::from_env().expect("valid settings"));
    // Limits checked before the map count (threads, process ids) may be
    // lower on this machine; any of them is an error, not an abort.
    if limit == "vm.max_map_count" {
        assert!(message.contains("max_map_count") && message.contains(&max_maps.to_string()), "{message}");
    } else {
        eprintln!("{limit} is lower than the map count here: map-count check not reached");
    }
}

/// A worker refused at thread `k`: the error names the failure, every
/// thread started is gone, and the next pool works.
#[test]
fn refused_worker_leaves_no_thread_behind() {
    if !is_child() {
        in_child("refused_worker_leaves_no_thread_behind", &[], Duration::from_secs(120));
        return;
    }
    const N: usize = 5;
    for dispatch in [Dispatch::Pwaml, Dispatch::Pw, Dispatch::Pwa] {
        // Master-last: N − 1 workers; otherwise also the proxy.
        let total = if dispatch.master_last() { N - 1 } else { N };
        for k in [0, 1, total - 1] {
            let before = threads_now();
            let err = Pool::builder()
                .num_threads(N)
                .dispatch(dispatch)
                .fail_spawn_after(k)
                .build()
                .expect_err("the injected failure is an error");
            match &err {
                Error::WorkerSpawn { started, total: t, .. } => {
                    assert_eq!((*started, *t), (k, total), "{dispatch}: {err}");
                }
                e => panic!("{dispatch}: not a spawn error: {e:?}"),
            }
            let text = err.to_string();
            assert!(
                text.contains(&format!("worker thread {} of {total}", k + 1))
                    && text.contains("fail_spawn_after"),
                "{text}"
            );
            assert_eq!(threads_back_to(before), before, "{dispatch}, k = {k}: threads left behind");

            // The next pool builds and runs regions, joins and loops.
            let pool = Pool::builder().num_threads(N).dispatch(dispatch).build().expect("next pool");
            let ran = AtomicUsize::new(0);
            pool.broadcast(|ctx| {
                ran.fetch_add(1 << (4 * ctx.index()), Ordering::Relaxed);
            });
            assert_eq!(ran.load(Ordering::Relaxed), 0x11111, "{dispatch}: every participant once");
            assert_eq!(pool.install(|| common::fib(20)), 6765);
            let sum = AtomicUsize::new(0);
            pool.for_each(0..1000, Schedule::Dynamic { chunk: 7 }, |i| {
                sum.fetch_add(i, Ordering::Relaxed);
            });
            assert_eq!(sum.into_inner(), 999 * 1000 / 2);
            drop(pool);
            assert_eq!(threads_back_to(before), before, "{dispatch}: the good pool's threads stay");
        }
    }
}

/// Launch-and-join pools start no thread in `build`: the injection point
/// is never reached and the pool works.
#[test]
fn launch_and_join_pools_start_nothing_at_build() {
    let pool = Pool::builder().num_threads(3).dispatch(Dispatch::Lj).fail_spawn_after(0).build().expect("LJ");
    assert_eq!(pool.join(|| 3, || 4), (3, 4));
}
