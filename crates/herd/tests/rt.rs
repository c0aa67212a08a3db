//! The low-level hooks of `herd::rt`: regions of part of a pool, waiting
//! and waking, raw jobs, and the drain condition.

use herd::rt::{self, PoolHandle};
use herd::Pool;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

fn pool(n: usize) -> Pool {
    Pool::builder().num_threads(n).build().unwrap()
}

#[test]
fn broadcast_n_runs_exactly_the_first_n() {
    let p = pool(4);
    for n in 1..=4 {
        let seen = Mutex::new(Vec::new());
        rt::broadcast_n(&p, n, |ctx| seen.lock().unwrap().push((ctx.index(), ctx.num_threads())), &|_| true);
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        assert_eq!(seen, (0..n).map(|i| (i, n)).collect::<Vec<_>>());
    }
}

/// Jobs pushed inside a region of 2 of 4 participants run only on those 2,
/// and the drain condition makes the region wait for them.
#[test]
fn jobs_of_a_smaller_region_stay_in_it() {
    // Active waiting: idle workers keep looking for jobs (where the pool is
    // oversubscribed they sleep instead, and must not be woken for the jobs).
    let p = Pool::builder().num_threads(4).wait(herd::WaitPolicy::Active).build().unwrap();
    static RAN_ON: Mutex<Vec<usize>> = Mutex::new(Vec::new());
    static LEFT: AtomicUsize = AtomicUsize::new(0);
    static HANDLE: Mutex<Option<PoolHandle>> = Mutex::new(None);
    *HANDLE.lock().unwrap() = Some(PoolHandle::of(&p));
    unsafe fn job(_: *const ()) {
        std::thread::sleep(std::time::Duration::from_micros(200));
        RAN_ON.lock().unwrap().push(herd::current_thread_index().unwrap());
        if LEFT.fetch_sub(1, Ordering::SeqCst) == 1 {
            let h = HANDLE.lock().unwrap().clone().unwrap();
            h.wake(0);
            h.wake(1);
        }
    }
    for _ in 0..20 {
        LEFT.store(16, Ordering::SeqCst);
        rt::broadcast_n(
            &p,
            2,
            |ctx| {
                if ctx.index() == 0 {
                    for _ in 0..16 {
                        // SAFETY: `job` is a plain function with no data.
                        assert!(unsafe { rt::push(std::ptr::null(), job) });
                    }
                }
            },
            &|last| {
                let v = if last { LEFT.fetch_add(0, Ordering::SeqCst) } else { LEFT.load(Ordering::SeqCst) };
                v == 0
            },
        );
        assert_eq!(LEFT.load(Ordering::SeqCst), 0, "the region returned before its jobs finished");
    }
    let ran = RAN_ON.lock().unwrap();
    assert_eq!(ran.len(), 20 * 16);
    assert!(ran.iter().all(|&i| i < 2), "a participant outside the region ran its job: {ran:?}");
}

/// A participant sleeping in `wait_until` is woken by `PoolHandle::wake`
/// after a read-modify-write of its condition (passive waiting, many rounds).
#[test]
fn wait_until_and_wake() {
    wait_until_woken_by(|h| h.wake(1));
}

/// The same with `PoolHandle::wake_waiting`, which skips the parkers when
/// the pool's count of sleeping waiters is zero: the count must see every
/// participant that sleeps.
#[test]
fn wait_until_and_wake_waiting() {
    wait_until_woken_by(|h| h.wake_waiting(0..2));
}

fn wait_until_woken_by(wake: impl Fn(&PoolHandle) + Sync) {
    let p = Pool::builder().num_threads(2).wait(herd::WaitPolicy::Passive).build().unwrap();
    let h = PoolHandle::of(&p);
    let flag = AtomicUsize::new(0);
    for round in 1..=200usize {
        rt::broadcast_n(
            &p,
            2,
            |ctx| {
                if ctx.index() == 1 {
                    rt::wait_until(|last| {
                        let v = if last {
                            flag.fetch_add(0, Ordering::SeqCst)
                        } else {
                            flag.load(Ordering::Acquire)
                        };
                        v >= round
                    });
                } else {
                    std::thread::yield_now();
                    flag.fetch_add(1, Ordering::SeqCst);
                    wake(&h);
                }
            },
            &|_| true,
        );
    }
    assert_eq!(flag.load(Ordering::SeqCst), 200);
}

#[test]
fn hooks_off_the_pool() {
    // Not a participant: nothing is pushed, nothing run, waiting still works.
    // SAFETY: never called.
    assert!(!unsafe { rt::push(std::ptr::null(), |_| unreachable!()) });
    assert!(!rt::run_one());
    assert_eq!(rt::local_queue_len(), 0);
    let n = AtomicUsize::new(0);
    rt::wait_until(|_| n.fetch_add(1, Ordering::Relaxed) > 100);
}

/// `broadcast_raw` runs `func(data, ctx)` once per participant, and a panic
/// in a share reaches the caller with the pool still usable.
#[test]
fn broadcast_raw_runs_each_share_once_and_propagates_panics() {
    let p = pool(3);
    let hits: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
    unsafe fn share(data: *const (), ctx: herd::BroadcastContext) {
        // SAFETY: `data` is the test's `hits`, alive for the call.
        let hits = unsafe { &*(data as *const Vec<AtomicUsize>) };
        hits[ctx.index()].fetch_add(1, Ordering::SeqCst);
    }
    for n in 1..=3 {
        // SAFETY: `share` only touches `hits`, which outlives the call.
        unsafe { rt::broadcast_raw(&p, n, share, &hits as *const _ as *const (), &|_| true) };
    }
    let counts: Vec<usize> = hits.iter().map(|h| h.load(Ordering::SeqCst)).collect();
    assert_eq!(counts, [3, 2, 1]);

    unsafe fn boom(_: *const (), ctx: herd::BroadcastContext) {
        if ctx.index() == 1 {
            panic!("share 1 fails");
        }
    }
    // SAFETY: `boom` touches nothing.
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
        rt::broadcast_raw(&p, 3, boom, std::ptr::null(), &|_| true)
    }));
    assert!(r.is_err());
    // SAFETY: as above.
    unsafe { rt::broadcast_raw(&p, 3, share, &hits as *const _ as *const (), &|_| true) };
    assert_eq!(hits[2].load(Ordering::SeqCst), 2);
}

/// `wait_until_admitting`: the waiter runs only the jobs it admits; the ones
/// it refuses (taken from its own deque or stolen) still run, on the other
/// participants, and the wait ends.
#[test]
fn admitting_waiter_runs_only_admitted_jobs() {
    static RAN: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());
    static LEFT: AtomicUsize = AtomicUsize::new(0);
    static HANDLE: Mutex<Option<PoolHandle>> = Mutex::new(None);
    // The job's tag travels as its (never dereferenced) data pointer.
    unsafe fn job(data: *const ()) {
        std::thread::sleep(std::time::Duration::from_micros(100));
        RAN.lock().unwrap().push((data as usize, herd::current_thread_index().unwrap()));
        if LEFT.fetch_sub(1, Ordering::SeqCst) == 1 {
            HANDLE.lock().unwrap().clone().unwrap().wake(0);
        }
    }
    struct EvenTags;
    impl rt::Admit for EvenTags {
        fn admit(&self, data: *const (), _run: unsafe fn(*const ())) -> bool {
            (data as usize).is_multiple_of(2)
        }
        fn wake_for(&self, _data: *const (), _run: unsafe fn(*const ())) -> [Option<usize>; 2] {
            [None, None]
        }
    }
    for sched in [herd::Sched::Mts, herd::Sched::Ws, herd::Sched::Central, herd::Sched::Lifo] {
        let p = Pool::builder().num_threads(3).scheduler(sched).build().unwrap();
        *HANDLE.lock().unwrap() = Some(PoolHandle::of(&p));
        for _ in 0..10 {
            RAN.lock().unwrap().clear();
            LEFT.store(16, Ordering::SeqCst);
            rt::broadcast_n(
                &p,
                3,
                |ctx| {
                    if ctx.index() == 0 {
                        for tag in 1..=16usize {
                            // SAFETY: `job` never dereferences its data.
                            assert!(unsafe { rt::push(tag as *const (), job) });
                        }
                        rt::wait_until_admitting(
                            |last| {
                                let v = if last {
                                    LEFT.fetch_add(0, Ordering::SeqCst)
                                } else {
                                    LEFT.load(Ordering::SeqCst)
                                };
                                v == 0
                            },
                            &EvenTags,
                        );
                    }
                },
                &|_| true,
            );
            let ran = RAN.lock().unwrap().clone();
            assert_eq!(ran.len(), 16, "{sched:?}: every job ran once: {ran:?}");
            for (tag, on) in ran {
                assert!(on != 0 || tag % 2 == 0, "{sched:?}: the waiter ran refused job {tag}");
            }
        }
    }
}

/// Two admitting waiters and nobody else: participant 0 pushes every job
/// and runs only even tags until they have all run, participant 1 only odd
/// ones until every job has run (so it never leaves its wait to run the
/// even ones itself). Each takes (pops
/// or steals) jobs it must refuse, which only the other may run; both waits
/// end, every job runs once, and never inside the wait of a participant
/// that refuses it (outside its wait a participant may run any job).
#[test]
fn two_admitting_waiters_hand_jobs_to_each_other() {
    static RAN: Mutex<Vec<(usize, usize, bool)>> = Mutex::new(Vec::new());
    // Jobs left of each parity, and in all.
    static LEFT: [AtomicUsize; 3] = [AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0)];
    static HANDLE: Mutex<Option<PoolHandle>> = Mutex::new(None);
    static IN_WAIT: [AtomicBool; 2] = [AtomicBool::new(false), AtomicBool::new(false)];
    unsafe fn job(data: *const ()) {
        let tag = data as usize;
        std::thread::sleep(std::time::Duration::from_micros(50));
        let on = herd::current_thread_index().unwrap();
        RAN.lock().unwrap().push((tag, on, IN_WAIT[on].load(Ordering::SeqCst)));
        if LEFT[tag % 2].fetch_sub(1, Ordering::SeqCst) == 1 {
            HANDLE.lock().unwrap().clone().unwrap().wake(0);
        }
        if LEFT[2].fetch_sub(1, Ordering::SeqCst) == 1 {
            HANDLE.lock().unwrap().clone().unwrap().wake(1);
        }
    }
    /// Participant `0` admits even tags, `1` odd ones.
    struct Parity(usize);
    impl rt::Admit for Parity {
        fn admit(&self, data: *const (), _run: unsafe fn(*const ())) -> bool {
            data as usize % 2 == self.0
        }
        fn wake_for(&self, data: *const (), _run: unsafe fn(*const ())) -> [Option<usize>; 2] {
            [Some(data as usize % 2), None]
        }
    }
    for sched in [herd::Sched::Mts, herd::Sched::Ws, herd::Sched::Central, herd::Sched::Lifo] {
        let p = Pool::builder().num_threads(2).scheduler(sched).build().unwrap();
        *HANDLE.lock().unwrap() = Some(PoolHandle::of(&p));
        for _ in 0..10 {
            RAN.lock().unwrap().clear();
            LEFT[0].store(16, Ordering::SeqCst);
            LEFT[1].store(16, Ordering::SeqCst);
            LEFT[2].store(32, Ordering::SeqCst);
            rt::broadcast_n(
                &p,
                2,
                |ctx| {
                    let me = ctx.index();
                    if me == 0 {
                        for tag in 1..=32usize {
                            // SAFETY: `job` never dereferences its data.
                            assert!(unsafe { rt::push(tag as *const (), job) });
                        }
                    }
                    IN_WAIT[me].store(true, Ordering::SeqCst);
                    // Participant 0 waits for the even jobs, 1 for all.
                    let left = &LEFT[2 * me];
                    rt::wait_until_admitting(
                        |last| {
                            let v = if last {
                                left.fetch_add(0, Ordering::SeqCst)
                            } else {
                                left.load(Ordering::SeqCst)
                            };
                            v == 0
                        },
                        &Parity(me),
                    );
                    IN_WAIT[me].store(false, Ordering::SeqCst);
                },
                &|_| true,
            );
            let ran = RAN.lock().unwrap().clone();
            assert_eq!(ran.len(), 32, "{sched:?}: every job ran once: {ran:?}");
            let mut tags: Vec<usize> = ran.iter().map(|r| r.0).collect();
            tags.sort();
            assert_eq!(tags, (1..=32).collect::<Vec<_>>(), "{sched:?}");
            for (tag, on, waiting) in ran {
                assert!(!waiting || tag % 2 == on, "{sched:?}: job {tag} ran inside participant {on}'s wait");
            }
        }
    }
}
