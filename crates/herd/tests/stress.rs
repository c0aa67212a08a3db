//! Mixed work from several threads at once on pools whose participants sleep
//! at every opportunity (passive and tiny spin windows), under a watchdog: a
//! lost wake-up fails the test with a message instead of hanging CI.
//!
//! This found a real bug: a participant woken *for work* while it slept for
//! another reason left without taking the work, and everyone else slept on
//! (fixed by `Sleepers::retract` / the `owe_wake` rule in the idle loop).

use herd::{Dispatch, Pool, Sched, Schedule, WaitPolicy};
use std::sync::atomic::{AtomicUsize, Ordering};
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
