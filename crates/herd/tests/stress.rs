//! Mixed work from several threads at once on pools whose participants sleep
//! at every opportunity (passive and tiny spin windows), under a watchdog: a
//! lost wake-up fails the test with a message instead of hanging CI.
//!
//! This found a real bug: a participant woken *for work* while it slept for
//! another reason left without taking the work, and everyone else slept on
//! (fixed by `Sleepers::retract` / the `owe_wake` rule in the idle loop).

use herd::{Dispatch, Pool, Sched, Schedule, WaitPolicy};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod common;
use common::fib;

fn mixed_load(p: &Pool, rounds: usize) {
    std::thread::scope(|s| {
        for t in 0..3 {
            s.spawn(move || {
                for k in 0..rounds {
                    match (t + k) % 4 {
                        0 => assert_eq!(p.broadcast(|c| c.index()).len(), p.num_threads()),
                        1 => assert_eq!(p.install(|| fib(12)), 144),
                        2 => {
                            let c = AtomicUsize::new(0);
                            p.scope(|s| {
                                for _ in 0..20 {
                                    s.spawn(|_| {
                                        c.fetch_add(1, Ordering::Relaxed);
                                    });
                                }
                            });
                            assert_eq!(c.load(Ordering::Relaxed), 20);
                        }
                        _ => {
                            let c = AtomicUsize::new(0);
                            p.for_each(0..1000, Schedule::Dynamic { chunk: 7 }, |_| {
                                c.fetch_add(1, Ordering::Relaxed);
                            });
                            assert_eq!(c.load(Ordering::Relaxed), 1000);
                        }
                    }
                }
            });
        }
    });
}

#[test]
fn no_lost_wakeups_under_mixed_concurrent_load() {
    let budget = Duration::from_secs(6);
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let start = Instant::now();
        let mut rounds = 0;
        while start.elapsed() < budget {
            for (i, (wait, dispatch)) in [
                (WaitPolicy::Passive, Dispatch::Pwaml),
                (WaitPolicy::Spin(Duration::from_micros(3)), Dispatch::Pwaml),
                (WaitPolicy::Passive, Dispatch::Pw),
                (WaitPolicy::Spin(Duration::from_micros(1)), Dispatch::Pwa),
            ]
            .into_iter()
            .enumerate()
            {
                // Every scheduler meets every wait/dispatch pair over four rounds.
                let sched = Sched::ALL[(rounds + i) % Sched::ALL.len()];
                let p = Pool::builder()
                    .num_threads(3)
                    .wait(wait)
                    .dispatch(dispatch)
                    .scheduler(sched)
                    .build()
                    .unwrap();
                mixed_load(&p, 100);
            }
            rounds += 1;
        }
        done_tx.send(rounds).unwrap();
    });
    match done_rx.recv_timeout(budget + Duration::from_secs(60)) {
        Ok(rounds) => assert!(rounds >= Sched::ALL.len(), "only {rounds} rounds"),
        Err(_) => panic!("no progress for 60 s past the budget: a participant sleeps through pending work"),
    }
}

/// The payload of a task's deliberate panic: the task's id.
struct TaskPanic(usize);

/// Tasks run per scheduler by `a_million_tasks_with_panics_on_every_scheduler`.
const TASKS: usize = 1_000_000;
/// Tasks per top-level call (each caught by the caller on its own).
const UNIT: usize = 1000;
/// About one task in this many panics.
const PANIC_ONE_IN: u64 = 512;

/// SplitMix64: a fixed pseudo-random choice per (seed, task).
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn panics(seed: u64, id: usize) -> bool {
    mix(seed ^ id as u64).is_multiple_of(PANIC_ONE_IN)
}

/// Tasks run by a worker rather than the caller (participant 0).
static ON_WORKERS: AtomicUsize = AtomicUsize::new(0);

/// One tiny task: count the run, maybe panic.
fn task(runs: &[AtomicU8], seed: u64, id: usize) {
    runs[id].fetch_add(1, Ordering::Relaxed);
    if herd::current_thread_index() != Some(0) {
        ON_WORKERS.fetch_add(1, Ordering::Relaxed);
    }
    if panics(seed, id) {
        std::panic::panic_any(TaskPanic(id));
    }
}

/// The tasks of `ids` as the leaves of a binary tree of `join`s.
fn join_tree(runs: &[AtomicU8], seed: u64, ids: std::ops::Range<usize>) {
    if ids.len() == 1 {
        return task(runs, seed, ids.start);
    }
    let mid = ids.start + ids.len() / 2;
    herd::join(|| join_tree(runs, seed, ids.start..mid), || join_tree(runs, seed, mid..ids.end));
}

/// The tasks of `ids` spawned into `s`, 32 at a time by spawned group tasks.
fn spawn_tasks<'s>(s: &herd::Scope<'s>, runs: &'s [AtomicU8], seed: u64, ids: std::ops::Range<usize>) {
    for lo in ids.clone().step_by(32) {
        let hi = (lo + 32).min(ids.end);
        s.spawn(move |s| {
            for id in lo..hi {
                s.spawn(move |_| task(runs, seed, id));
            }
        });
    }
}

/// Silences the default hook's report of the deliberate panics (thousands
/// of them; with RUST_BACKTRACE set, each would also take a backtrace).
fn quiet_task_panics() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<TaskPanic>().is_none() {
                default(info)
            }
        }));
    });
}

/// The id in a caught panic payload.
fn panic_id(p: Box<dyn std::any::Any + Send>) -> usize {
    match p.downcast::<TaskPanic>() {
        Ok(t) => t.0,
        Err(p) => std::panic::resume_unwind(p),
    }
}

/// 10^6 tiny tasks per scheduler (4 participants), about one in 512 panicking, in units of
/// 1000 tasks, each unit one call from outside the pool: a tree of `join`s
/// (even units) or a `scope` of spawned tasks (odd units). For every unit:
/// the caller catches a panic exactly when one of its tasks panicked, and
/// its payload is one of those tasks' (for `join`, the leftmost: `a`'s panic
/// wins over `b`'s at every level); every task of the unit, panicking or
/// not, ran exactly once by the time the call returned. Afterwards the pool
/// runs a correct workload. Under a watchdog.
#[test]
fn a_million_tasks_with_panics_on_every_scheduler() {
    quiet_task_panics();
    let (done_tx, done_rx) = mpsc::channel();
    let stress = std::thread::spawn(move || {
        for (k, sched) in Sched::ALL.into_iter().enumerate() {
            let start = Instant::now();
            let seed = mix(0x4845_5244_1300 + k as u64);
            let pool = Pool::builder().num_threads(4).scheduler(sched).build().unwrap();
            ON_WORKERS.store(0, Ordering::Relaxed);
            let runs: Vec<AtomicU8> = (0..TASKS).map(|_| AtomicU8::new(0)).collect();
            let runs = &runs[..];
            let mut caught = 0;
            for unit in 0..TASKS / UNIT {
                let ids = unit * UNIT..(unit + 1) * UNIT;
                let panicking: Vec<usize> = ids.clone().filter(|&id| panics(seed, id)).collect();
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    if unit % 2 == 0 {
                        let mid = ids.start + UNIT / 2;
                        pool.join(
                            || join_tree(runs, seed, ids.start..mid),
                            || join_tree(runs, seed, mid..ids.end),
                        );
                    } else {
                        pool.scope(|s| spawn_tasks(s, runs, seed, ids.clone()));
                    }
                }));
                match r.map_err(panic_id) {
                    Ok(()) => {
                        assert!(panicking.is_empty(), "{sched}: unit {unit}: panics of {panicking:?} lost")
                    }
                    Err(id) if unit % 2 == 0 => {
                        assert_eq!(
                            Some(&id),
                            panicking.first(),
                            "{sched}: unit {unit}: not the leftmost panic"
                        )
                    }
                    Err(id) => assert!(
                        panicking.contains(&id),
                        "{sched}: unit {unit}: panic {id} not of {panicking:?}"
                    ),
                }
                caught += usize::from(!panicking.is_empty());
                if let Some(id) = ids.clone().find(|&id| runs[id].load(Ordering::Relaxed) != 1) {
                    panic!("{sched}: unit {unit}: task {id} ran {} times", runs[id].load(Ordering::Relaxed));
                }
            }
            assert!(caught > 100 && caught < TASKS / UNIT, "{sched}: {caught} units panicked");
            let on_workers = ON_WORKERS.load(Ordering::Relaxed);
            assert!(on_workers > 0, "{sched}: the workers ran none of the tasks");
            // The pool is still whole.
            assert_eq!(pool.install(|| fib(20)), 6765, "{sched}");
            let c = AtomicUsize::new(0);
            pool.scope(|s| {
                for _ in 0..10_000 {
                    s.spawn(|_| {
                        c.fetch_add(1, Ordering::Relaxed);
                    });
                }
            });
            assert_eq!(c.load(Ordering::Relaxed), 10_000, "{sched}");
            let c = AtomicUsize::new(0);
            pool.for_each(0..10_000, Schedule::Dynamic { chunk: 7 }, |_| {
                c.fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(c.load(Ordering::Relaxed), 10_000, "{sched}");
            eprintln!(
                "{sched}: {TASKS} tasks ({on_workers} on workers), {caught} of {} calls panicked, {:?}",
                TASKS / UNIT,
                start.elapsed()
            );
        }
        done_tx.send(()).unwrap();
    });
    match done_rx.recv_timeout(Duration::from_secs(180)) {
        Ok(()) => stress.join().unwrap(),
        // The stress thread failed: its panic is the test's.
        Err(mpsc::RecvTimeoutError::Disconnected) => std::panic::resume_unwind(stress.join().unwrap_err()),
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("no progress for 180 s: a task or a wake-up was lost"),
    }
}
