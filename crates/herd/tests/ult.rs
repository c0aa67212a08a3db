//! Lightweight threads, full/empty bits and the software-thread barrier.
//!
//! Tests that could hang on a lost wake-up run under a watchdog, so that a
//! hang fails with a message instead of stalling the run.

// ThreadSanitizer cannot follow corosensei's stack switches (its fiber API
// must be called in the frame that switches, inside corosensei's assembly),
// so `make tsan` (which sets `herd_tsan`) leaves these tests out; the
// protocols they exercise are loom-modelled (`feb::loom_tests`).
#![cfg(not(herd_tsan))]

use herd::ult::{self, UltHandle};
use herd::{Barrier, Bind, Feb, Pool, WaitPolicy};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Runs `f` on its own thread and fails if it takes longer than `secs`.
fn watchdog<R: Send + 'static>(secs: u64, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        let _ = tx.send(r);
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(Ok(r)) => r,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(_) => panic!("watchdog: no completion within {secs} s (lost wake-up or deadlock?)"),
    }
}

/// A small pool (master + one worker) that sleeps when idle, unbound: fewer
/// workers than lightweight threads everywhere below.
fn small_pool() -> Pool {
    Pool::builder().num_threads(2).bind(Bind::False).wait(WaitPolicy::Passive).build().expect("pool")
}

/// A pool's participant runs queued jobs until `cond` holds (`cond` is
/// changed without a wake-up, so this polls).
fn run_until(cond: impl Fn() -> bool) {
    while !cond() {
        if !herd::rt::run_one() {
            std::thread::yield_now();
        }
    }
}

fn join_all<R>(hs: Vec<UltHandle<R>>) -> Vec<R> {
    hs.into_iter().map(|h| h.join().expect("no panic")).collect()
}

#[test]
fn spawn_join_many_with_results() {
    watchdog(60, || {
        // From outside any pool (global pool) ...
        let hs: Vec<_> = (0..2000u64).map(|i| ult::spawn(move || i * 3)).collect();
        assert_eq!(join_all(hs).iter().sum::<u64>(), 3 * 1999 * 2000 / 2);
        // ... and from inside one, nested: threads spawning and joining threads.
        let pool = small_pool();
        let total = pool.install(|| {
            let hs: Vec<_> = (0..50u64)
                .map(|i| {
                    ult::spawn(move || {
                        assert!(ult::current_is_ult());
                        let kids: Vec<_> = (0..20u64).map(|k| ult::spawn(move || i * 20 + k)).collect();
                        join_all(kids).iter().sum::<u64>()
                    })
                })
                .collect();
            join_all(hs).iter().sum::<u64>()
        });
        assert_eq!(total, 999 * 1000 / 2);
    });
}

#[test]
fn panic_reaches_join_and_pool_stays_usable() {
    watchdog(60, || {
        let pool = small_pool();
        pool.install(|| {
            let h = ult::spawn(|| -> u32 { panic!("boom in a lightweight thread") });
            let err = h.join().expect_err("the panic is returned");
            assert_eq!(err.downcast_ref::<&str>(), Some(&"boom in a lightweight thread"));
            // The runtime (and the stack the panicking thread used) still works.
            let hs: Vec<_> = (0..100u32).map(|i| ult::spawn(move || i)).collect();
            assert_eq!(join_all(hs).iter().sum::<u32>(), 4950);
        });
        assert_eq!(pool.install(|| herd::join(|| 1, || 2)), (1, 2));
    });
}

#[test]
fn is_finished_and_detached_threads() {
    watchdog(60, || {
        let pool = small_pool();
        pool.install(|| {
            let gate = Arc::new(Feb::new_empty(()));
            let started = Arc::new(AtomicUsize::new(0));
            let (g, s) = (gate.clone(), started.clone());
            let h = ult::spawn(move || {
                s.store(1, Ordering::Release);
                g.read_ff()
            });
            run_until(|| started.load(Ordering::Acquire) == 1);
            assert!(!h.is_finished(), "blocked on an empty word");
            gate.fill();
            h.join().unwrap();
            assert!(gate.is_full());
            // A dropped handle detaches; the thread still runs.
            let done = Arc::new(Feb::new_empty(0u32));
            let d = done.clone();
            drop(ult::spawn(move || d.write_ef(7)));
            assert_eq!(done.read_fe(), 7);
        });
    });
}

/// Blocked lightweight threads free their worker: far more threads than
/// workers block on words that a thread spawned last fills; an OS thread
/// outside the pool fills another later, and the threads resume (on
/// whichever worker) with the values.
#[test]
fn blocked_threads_release_workers_and_resume_later() {
    watchdog(60, || {
        let pool = small_pool();
        let words: Arc<Vec<Feb<usize>>> = Arc::new((0..64).map(|_| Feb::default()).collect());
        let late = Arc::new(Feb::new_empty(0usize));
        let w = words.clone();
        let l = late.clone();
        let filler = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            l.write_ef(1000);
        });
        let sum = pool.install(move || {
            let hs: Vec<_> = (0..64)
                .map(|i| {
                    let w = w.clone();
                    let l = late.clone();
                    ult::spawn(move || {
                        let v = w[i].read_fe();
                        // Block again, on a word an OS thread fills.
                        let extra = if i == 0 { l.read_fe() } else { 0 };
                        v + extra
                    })
                })
                .collect();
            let w = w.clone();
            let producer = ult::spawn(move || (0..64).for_each(|i| w[i].write_ef(i + 1)));
            producer.join().unwrap();
            join_all(hs).iter().sum::<usize>()
        });
        filler.join().unwrap();
        assert_eq!(sum, 64 * 65 / 2 + 1000);
        assert!(words.iter().all(|w| !w.is_full()));
    });
}

#[test]
fn feb_operations() {
    let w = Feb::new_full(1);
    assert!(w.is_full());
    assert_eq!(w.read_ff(), 1);
    assert!(w.is_full());
    assert_eq!(w.read_fe(), 1);
    assert!(!w.is_full());
    w.write_ef(2);
    assert!(w.is_full());
    w.write_f(3); // no wait: overwrites a full word
    assert_eq!(w.read_ff(), 3);
    w.empty();
    assert!(!w.is_full());
    w.fill(); // the value is kept
    assert_eq!(w.read_fe(), 3);
    let d: Feb<String> = Feb::default();
    assert!(!d.is_full());
    d.write_f("x".into());
    assert_eq!(d.read_fe(), "x");
    let e = Feb::new_empty(9);
    assert!(!e.is_full());
    e.fill();
    assert_eq!(e.read_ff(), 9);
}

/// Writers wait for empty; `empty()` admits the first queued writer.
#[test]
fn feb_queued_writer_is_admitted_by_empty() {
    watchdog(60, || {
        let w = Arc::new(Feb::new_full(0));
        let w2 = w.clone();
        let h = ult::spawn(move || w2.write_ef(5));
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(w.read_ff(), 0, "the writer waits while the word is full");
        w.empty();
        h.join().unwrap();
        assert_eq!(w.read_fe(), 5);
    });
}

fn check_each_once(values: Vec<usize>, n: usize) {
    let mut seen = vec![false; n];
    for v in values {
        assert!(!seen[v], "value {v} delivered twice");
        seen[v] = true;
    }
    assert!(seen.iter().all(|&s| s), "a value was lost");
}

/// 8 writers × 1000 values and 8 readers on one word: every value is read
/// exactly once.
#[test]
fn feb_many_writers_and_readers_one_word() {
    const W: usize = 8;
    const PER: usize = 1000;
    watchdog(120, || {
        let pool = small_pool();
        let got = pool.install(|| {
            let word = Arc::new(Feb::new_empty(usize::MAX));
            let writers: Vec<_> = (0..W)
                .map(|k| {
                    let word = word.clone();
                    ult::spawn(move || (0..PER).for_each(|i| word.write_ef(k * PER + i)))
                })
                .collect();
            let readers: Vec<_> = (0..W)
                .map(|_| {
                    let word = word.clone();
                    ult::spawn(move || (0..PER).map(|_| word.read_fe()).collect::<Vec<_>>())
                })
                .collect();
            join_all(writers);
            join_all(readers).concat()
        });
        assert_eq!(got.len(), W * PER);
        check_each_once(got, W * PER);
    });
}

/// OS threads and lightweight threads on one word, both roles.
#[test]
fn feb_mixes_os_threads_and_ults() {
    const PER: usize = 500;
    watchdog(120, || {
        let pool = small_pool();
        let got = pool.install(|| {
            let word = Arc::new(Feb::new_empty(usize::MAX));
            let os: Vec<_> = (2..4)
                .map(|k| {
                    let w = word.clone();
                    let writer = std::thread::spawn(move || (0..PER).for_each(|i| w.write_ef(k * PER + i)));
                    let w = word.clone();
                    let reader =
                        std::thread::spawn(move || (0..PER).map(|_| w.read_fe()).collect::<Vec<_>>());
                    (writer, reader)
                })
                .collect();
            let mut ult_readers = Vec::new();
            let mut ult_writers = Vec::new();
            for k in 0..2 {
                let w = word.clone();
                ult_writers.push(ult::spawn(move || (0..PER).for_each(|i| w.write_ef(k * PER + i))));
                let w = word.clone();
                ult_readers.push(ult::spawn(move || (0..PER).map(|_| w.read_fe()).collect::<Vec<_>>()));
            }
            // The master runs lightweight threads while it joins them.
            let mut got = join_all(ult_readers).concat();
            join_all(ult_writers);
            for (w, r) in os {
                w.join().unwrap();
                got.extend(r.join().unwrap());
            }
            got
        });
        check_each_once(got, 4 * PER);
    });
}

/// `read_ff` waiters are all served by one write, and the word stays full.
#[test]
fn feb_read_ff_broadcast() {
    watchdog(60, || {
        let pool = small_pool();
        let word = Arc::new(Feb::new_empty(0u32));
        let w = word.clone();
        let got = pool.install(move || {
            let started = Arc::new(AtomicUsize::new(0));
            let hs: Vec<_> = (0..200)
                .map(|_| {
                    let w = w.clone();
                    let s = started.clone();
                    ult::spawn(move || {
                        s.fetch_add(1, Ordering::Relaxed);
                        w.read_ff()
                    })
                })
                .collect();
            // Let them queue up (they suspend, so this finishes), then write once.
            run_until(|| started.load(Ordering::Relaxed) == 200);
            w.write_f(42);
            join_all(hs)
        });
        assert!(got.iter().all(|&v| v == 42));
        assert!(word.is_full());
    });
}

/// One million lightweight threads (100 000 in debug builds) each block on
/// its own word until a producer fills it, in batches of 1000 started
/// threads (each started, unfinished thread holds a stack).
#[test]
fn a_million_ults_block_and_wake() {
    const TOTAL: usize = if cfg!(debug_assertions) { 100_000 } else { 1_000_000 };
    const BATCH: usize = 1000;
    watchdog(120, || {
        let pool = small_pool();
        let total = pool.install(|| {
            let mut total = 0usize;
            for _ in 0..TOTAL / BATCH {
                let words: Arc<Vec<Feb<usize>>> = Arc::new((0..BATCH).map(|_| Feb::default()).collect());
                let started = Arc::new(AtomicUsize::new(0));
                let hs: Vec<_> = (0..BATCH)
                    .map(|i| {
                        let w = words.clone();
                        let s = started.clone();
                        ult::spawn(move || {
                            s.fetch_add(1, Ordering::Relaxed);
                            w[i].read_fe()
                        })
                    })
                    .collect();
                // All started (all but the few running right now are
                // suspended on their empty word), then the producer fills.
                run_until(|| started.load(Ordering::Relaxed) == BATCH);
                (0..BATCH).for_each(|i| words[i].write_ef(1));
                total += join_all(hs).iter().sum::<usize>();
            }
            total
        });
        assert_eq!(total, TOTAL);
    });
}

/// More lightweight threads than workers (16 on 2) through several phases of
/// a barrier: each phase starts only when all arrived, one leader per phase.
#[test]
fn barrier_with_more_ults_than_workers() {
    const N: usize = 16;
    const PHASES: usize = 6;
    watchdog(60, || {
        let pool = small_pool();
        pool.install(|| {
            let barrier = Arc::new(Barrier::new(N));
            let arrived: Arc<Vec<AtomicUsize>> = Arc::new((0..PHASES).map(|_| AtomicUsize::new(0)).collect());
            let hs: Vec<_> = (0..N)
                .map(|_| {
                    let b = barrier.clone();
                    let a = arrived.clone();
                    ult::spawn(move || {
                        let mut leader = 0;
                        for p in 0..PHASES {
                            a[p].fetch_add(1, Ordering::SeqCst);
                            leader += usize::from(b.wait());
                            assert_eq!(a[p].load(Ordering::SeqCst), N, "left phase {p} early");
                        }
                        leader
                    })
                })
                .collect();
            assert_eq!(join_all(hs).iter().sum::<usize>(), PHASES);
        });
    });
}

/// A barrier shared by lightweight threads and OS threads.
#[test]
fn barrier_mixes_os_threads_and_ults() {
    const PHASES: usize = 20;
    watchdog(60, || {
        let pool = small_pool();
        let barrier = Arc::new(Barrier::new(6));
        let count = Arc::new(AtomicUsize::new(0));
        let phase = |b: &Barrier, c: &AtomicUsize| {
            for p in 0..PHASES {
                c.fetch_add(1, Ordering::SeqCst);
                b.wait();
                assert!(c.load(Ordering::SeqCst) >= 6 * (p + 1), "left phase {p} early");
            }
        };
        pool.install(|| {
            let os: Vec<_> = (0..2)
                .map(|_| {
                    let (b, c) = (barrier.clone(), count.clone());
                    std::thread::spawn(move || phase(&b, &c))
                })
                .collect();
            let ults: Vec<_> = (0..4)
                .map(|_| {
                    let (b, c) = (barrier.clone(), count.clone());
                    ult::spawn(move || phase(&b, &c))
                })
                .collect();
            join_all(ults);
            os.into_iter().for_each(|t| t.join().unwrap());
        });
        assert_eq!(count.load(Ordering::SeqCst), 6 * PHASES);
    });
}

/// A thread that polls with `yield_now` lets the thread it waits for run,
/// even on a pool whose only participant is the master and with a LIFO
/// queue (re-queueing alone would pick the poller again forever).
#[test]
fn yield_now_lets_others_run() {
    watchdog(60, || {
        let pool = Pool::builder().num_threads(1).bind(Bind::False).build().unwrap();
        let polls = pool.install(|| {
            ult::spawn(|| {
                let flag = Arc::new(AtomicUsize::new(0));
                let f = flag.clone();
                let setter = ult::spawn(move || f.store(1, Ordering::Release));
                let mut polls = 0;
                while flag.load(Ordering::Acquire) == 0 {
                    ult::yield_now();
                    polls += 1;
                }
                setter.join().unwrap();
                polls
            })
            .join()
            .unwrap()
        });
        assert!(polls >= 1);
    });
}

/// Deep recursion on a lightweight thread hits the guard page; the process
/// reports it and aborts. Run in a child process (this test re-executes
/// itself with `HERD_TEST_OVERFLOW_CHILD` set).
#[test]
fn stack_overflow_is_reported() {
    if std::env::var_os("HERD_TEST_OVERFLOW_CHILD").is_some() {
        #[inline(never)]
        fn deep(n: u64) -> u64 {
            let pad = std::hint::black_box([n; 64]);
            if n == u64::MAX {
                return 0;
            }
            deep(n + 1).wrapping_add(pad[(n % 64) as usize])
        }
        let h = ult::spawn(|| deep(0));
        let _ = h.join();
        unreachable!("the overflow aborts the process");
    }
    use std::os::unix::process::ExitStatusExt;
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["stack_overflow_is_reported", "--exact", "--nocapture", "--test-threads=1"])
        .env("HERD_TEST_OVERFLOW_CHILD", "1")
        .env("HERD_STACK_SIZE", "32K")
        .env("HERD_NUM_THREADS", "2")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), Some(libc::SIGABRT), "child: {:?}\n{stderr}", out.status);
    assert!(
        stderr.contains("herd: lightweight thread stack overflow (stack 32768 bytes; raise HERD_STACK_SIZE)"),
        "stderr: {stderr}"
    );
}
