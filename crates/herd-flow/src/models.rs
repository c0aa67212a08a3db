//! loom models of herd-flow's protocols (`make test-loom`, or
//! `RUSTFLAGS="--cfg loom" cargo test -p herd-flow --release --lib models`):
//! * the ready queue's drainers (`ready.rs`): every queued step runs exactly once and no
//!   step is left queued when the last drainer retires, whatever the interleaving of pushes
//!   and retirements, also when the environment queues steps from another thread during a
//!   `wait`;
//! * dependency counting (`items.rs`): a step with two declared items, probed while both are
//!   put concurrently, is enabled exactly once and only after both puts;
//! * the requeue race: a step's failed `get` against a concurrent `put` of the item — the step
//!   either sees the value or is re-enabled by the put, never both, never neither;
//! * single assignment: of two concurrent puts of one key exactly one fails.

use crate::error::StepError;
use crate::items::{Got, ItemColl};
use crate::ready::ReadyQueue;
use crate::step::{Body, Ctx, Inst};
use crate::sync::{AtomicUsize, Ordering};
use loom::thread::{self, JoinHandle};
use std::sync::{Arc, Mutex as StdMutex};

struct Nop;
impl Body for Nop {
    fn run(&self, _: &Ctx<'_>) -> Result<(), StepError> {
        Ok(())
    }
    fn tag(&self) -> String {
        String::new()
    }
    fn collection(&self) -> &str {
        "s"
    }
}

fn inst() -> Arc<Inst> {
    Inst::new_arc(1, 0, Nop)
}

/// Steps are numbers; running step `s` queues `children(s)`. Drainers are loom threads.
struct Drain {
    q: ReadyQueue<usize>,
    ran: Vec<AtomicUsize>,
    children: fn(usize) -> Vec<usize>,
    /// Handles of every drainer spawned (bookkeeping only, not part of the protocol).
    handles: StdMutex<Vec<JoinHandle<()>>>,
}

fn spawn(d: &Arc<Drain>, n: usize) {
    for _ in 0..n {
        let d2 = d.clone();
        let h = thread::spawn(move || {
            let mut batch = Vec::new();
            while d2.q.pop_or_retire(|| false, &mut batch) {
                for s in batch.drain(..) {
                    d2.ran[s].fetch_add(1, Ordering::Relaxed);
                    let more = d2.q.push_all((d2.children)(s).into_iter().map(|c| (c as i64, c)));
                    spawn(&d2, more);
                }
            }
        });
        d.handles.lock().unwrap().push(h);
    }
}

/// Joins every drainer, including those spawned while joining.
fn join_all(d: &Drain) {
    loop {
        let next = d.handles.lock().unwrap().pop();
        let Some(h) = next else { return };
        h.join().unwrap();
    }
}

fn drain_model(steps: usize, limit: usize, children: fn(usize) -> Vec<usize>) {
    loom::model(move || {
        let d = Arc::new(Drain {
            q: ReadyQueue::new(),
            ran: (0..steps).map(|_| AtomicUsize::new(0)).collect(),
            children,
            handles: StdMutex::new(Vec::new()),
        });
        assert_eq!(d.q.push_all([(0, 0)]), 0);
        let n = d.q.start(limit);
        assert_eq!(n, 1);
        spawn(&d, n);
        join_all(&d);
        for (s, r) in d.ran.iter().enumerate() {
            assert_eq!(r.load(Ordering::Relaxed), 1, "step {s} ran {r:?} times");
        }
        assert_eq!(d.q.len(), 0);
        assert_eq!(d.q.close(), 0, "a drainer is still counted");
    });
}

#[test]
fn models_drainers_chain() {
    // 0 → 1 → 2: each push races with the other drainer's retirement.
    drain_model(3, 2, |s| if s < 2 { vec![s + 1] } else { vec![] });
}

#[test]
fn models_drainers_fan_out() {
    // 0 → {1, 2}: two drainers race for the two children.
    drain_model(3, 2, |s| if s == 0 { vec![1, 2] } else { vec![] });
}

#[test]
fn models_environment_queues_during_wait() {
    // The environment queues step 1 on another thread while `wait` runs step 0; whichever
    // way they interleave, `wait` (called again after the environment's put, as a program
    // would) runs both exactly once and no drainer stays counted.
    loom::model(|| {
        let d = Arc::new(Drain {
            q: ReadyQueue::new(),
            ran: (0..2).map(|_| AtomicUsize::new(0)).collect(),
            children: |_| vec![],
            handles: StdMutex::new(Vec::new()),
        });
        d.q.queue_all([(0, 0)]);
        let env = {
            let d = d.clone();
            thread::spawn(move || d.q.queue_all([(0, 1)]))
        };
        let wait = |d: &Arc<Drain>| {
            while d.q.len() > 0 {
                spawn(d, d.q.start(1));
                join_all(d);
                assert_eq!(d.q.close(), 0, "a drainer is still counted");
            }
        };
        wait(&d);
        env.join().unwrap();
        wait(&d);
        for (s, r) in d.ran.iter().enumerate() {
            assert_eq!(r.load(Ordering::Relaxed), 1, "step {s}");
        }
    });
}

#[test]
fn models_dependency_count() {
    loom::model(|| {
        let items = Arc::new(ItemColl::<u32, u32>::new("a"));
        let enabled = Arc::new(AtomicUsize::new(0));
        let step = inst();
        let putters: Vec<_> = [1u32, 2]
            .into_iter()
            .map(|k| {
                let (items, enabled) = (items.clone(), enabled.clone());
                thread::spawn(move || {
                    let mut en = Vec::new();
                    items.put(k, k * 10, 0, &mut en).unwrap();
                    if !en.is_empty() {
                        assert!(items.is_put(&1) && items.is_put(&2), "enabled before both puts");
                        enabled.fetch_add(en.len(), Ordering::Relaxed);
                    }
                })
            })
            .collect();
        // The prescriber: probes both, then drops its own count.
        items.probe(1, &step);
        items.probe(2, &step);
        if step.release() {
            assert!(items.is_put(&1) && items.is_put(&2), "enabled before both puts");
            enabled.fetch_add(1, Ordering::Relaxed);
        }
        for p in putters {
            p.join().unwrap();
        }
        assert_eq!(enabled.load(Ordering::Relaxed), 1);
    });
}

#[test]
fn models_requeue_get_against_put() {
    loom::model(|| {
        let items = Arc::new(ItemColl::<u32, u32>::new("a"));
        let step = inst();
        // The step is running: its prescription count is gone.
        assert!(step.release());
        let putter = {
            let items = items.clone();
            thread::spawn(move || {
                let mut en = Vec::new();
                items.put(7, 70, 0, &mut en).unwrap();
                en.len()
            })
        };
        let saw_value = matches!(items.get_or_wait(&7, &step), Got::Value(..));
        let reenabled = putter.join().unwrap();
        assert_eq!(usize::from(saw_value) + reenabled, 1, "saw {saw_value}, re-enabled {reenabled}");
    });
}

#[test]
fn models_single_assignment() {
    loom::model(|| {
        let items = Arc::new(ItemColl::<u32, u32>::new("a"));
        let hs: Vec<_> = [1u32, 2]
            .into_iter()
            .map(|v| {
                let items = items.clone();
                thread::spawn(move || items.put(5, v, 0, &mut Vec::new()).is_ok())
            })
            .collect();
        let ok: usize = hs.into_iter().map(|h| usize::from(h.join().unwrap())).sum();
        assert_eq!(ok, 1);
    });
}
