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

/// EPCC's `taskwait` pattern on every participant at once: each of 8
/// busy-waiting participants pushes one job of its own and waits admitting
/// only its own jobs, 3000 times. The others, waiting too, steal those jobs
/// and must refuse them; every wait must end (a job refused for a waiter is
/// sent to it), and refused jobs must not wander: fewer refusals than jobs.
/// (On 2 vCPUs the preempted waiters steal little; where jobs wandered from
/// queue to queue, as at 16 cores before refused jobs were sent to their
/// waiter, a job was refused many times over.)
#[test]
fn taskwait_storm_refusals_stay_bounded() {
    const P: usize = 8;
    const ROUNDS: usize = 3000;
    static DONE: [AtomicUsize; P] = [const { AtomicUsize::new(0) }; P];
    static HANDLE: Mutex<Option<PoolHandle>> = Mutex::new(None);
    // The job's data is its waiter's index + 1.
    unsafe fn job(data: *const ()) {
        let w = data as usize - 1;
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_micros(2) {}
        DONE[w].fetch_add(1, Ordering::SeqCst);
        HANDLE.lock().unwrap().clone().unwrap().wake(w);
    }
    struct Own(usize);
    impl rt::Admit for Own {
        fn admit(&self, data: *const (), _run: unsafe fn(*const ())) -> bool {
            data as usize == self.0 + 1
        }
        fn wake_for(&self, data: *const (), _run: unsafe fn(*const ())) -> [Option<usize>; 2] {
            [Some(data as usize - 1), None]
        }
    }
    for sched in [herd::Sched::Mts, herd::Sched::Ws] {
        let p =
            Pool::builder().num_threads(P).scheduler(sched).wait(herd::WaitPolicy::Active).build().unwrap();
        *HANDLE.lock().unwrap() = Some(PoolHandle::of(&p));
        for d in DONE.iter() {
            d.store(0, Ordering::SeqCst);
        }
        p.reset_stats();
        let t = std::time::Instant::now();
        rt::broadcast_n(
            &p,
            P,
            |ctx| {
                let me = ctx.index();
                for r in 1..=ROUNDS {
                    // SAFETY: `job` reads no memory through its data.
                    assert!(unsafe { rt::push((me + 1) as *const (), job) });
                    rt::wait_until_admitting(
                        |last| {
                            let v = if last {
                                DONE[me].fetch_add(0, Ordering::SeqCst)
                            } else {
                                DONE[me].load(Ordering::SeqCst)
                            };
                            v >= r
                        },
                        &Own(me),
                    );
                }
            },
            &|_| true,
        );
        let took = t.elapsed();
        let refusals: u64 = p.stats().iter().map(|s| s.refusals).sum();
        let jobs = (P * ROUNDS) as u64;
        eprintln!("{sched:?}: {refusals} refusals for {jobs} jobs in {took:?}");
        assert!(refusals < jobs, "{sched:?}: {refusals} refusals for {jobs} jobs");
    }
}

/// A job refused for a waiter reaches it directly. Participant 0 pushes
/// decoys (jobs nobody waits for: `wake_for` names nobody) and then its own
/// job J, and stays out of any wait until participant 1 — an admitting
/// waiter that admits none of them — has stolen and refused J (the decoys,
/// pushed first, were stolen before it).
/// Then 0 waits for J: it must find J in one look without taking, and
/// refusing, any decoy. (Refused jobs used to go to the refuser's own
/// queue, an `Injector` a searcher could not filter: 0 took a decoy first,
/// refused it in turn, and at 16 busy waiters jobs wandered from queue to
/// queue — EPCC `taskwait` cost 149 µs per task at 16 threads.)
#[test]
fn a_refused_job_goes_to_its_waiter() {
    const DECOYS: usize = 6;
    const J: usize = 1000;
    static REFUSED_BY_1: AtomicUsize = AtomicUsize::new(0);
    static RAN: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());
    static STOP: AtomicBool = AtomicBool::new(false);
    static J_DONE: AtomicBool = AtomicBool::new(false);
    static DECOYS_LEFT: AtomicUsize = AtomicUsize::new(0);
    static HANDLE: Mutex<Option<PoolHandle>> = Mutex::new(None);
    unsafe fn job(data: *const ()) {
        let tag = data as usize;
        RAN.lock().unwrap().push((tag, herd::current_thread_index().unwrap()));
        let h = HANDLE.lock().unwrap().clone().unwrap();
        if tag == J {
            J_DONE.store(true, Ordering::SeqCst);
            h.wake(0);
        } else if DECOYS_LEFT.fetch_sub(1, Ordering::SeqCst) == 1 {
            h.wake(0);
        }
    }
    /// Admits tag `.0` (`.1`: participant 1, which counts its refusals of
    /// J); J is named for participant 0, the decoys for nobody.
    struct Admits(usize, bool);
    impl rt::Admit for Admits {
        fn admit(&self, data: *const (), _run: unsafe fn(*const ())) -> bool {
            let ok = data as usize == self.0;
            if !ok && self.1 && data as usize == J {
                REFUSED_BY_1.fetch_add(1, Ordering::SeqCst);
            }
            ok
        }
        fn wake_for(&self, data: *const (), _run: unsafe fn(*const ())) -> [Option<usize>; 2] {
            [(data as usize == J).then_some(0), None]
        }
    }
    let wait = |flag: &'static AtomicBool, admit: &Admits| {
        rt::wait_until_admitting(
            |last| if last { flag.fetch_or(false, Ordering::SeqCst) } else { flag.load(Ordering::SeqCst) },
            admit,
        )
    };
    for sched in [herd::Sched::Mts, herd::Sched::Ws] {
        let p =
            Pool::builder().num_threads(2).scheduler(sched).wait(herd::WaitPolicy::Active).build().unwrap();
        *HANDLE.lock().unwrap() = Some(PoolHandle::of(&p));
        for _ in 0..20 {
            RAN.lock().unwrap().clear();
            REFUSED_BY_1.store(0, Ordering::SeqCst);
            STOP.store(false, Ordering::SeqCst);
            J_DONE.store(false, Ordering::SeqCst);
            DECOYS_LEFT.store(DECOYS, Ordering::SeqCst);
            p.reset_stats();
            let refusals_of_0 = AtomicUsize::new(usize::MAX);
            rt::broadcast_n(
                &p,
                2,
                |ctx| {
                    if ctx.index() == 1 {
                        wait(&STOP, &Admits(1, true));
                        return;
                    }
                    for tag in (1..=DECOYS).map(|d| d + 1).chain([J]) {
                        // SAFETY: `job` reads no memory through its data.
                        assert!(unsafe { rt::push(tag as *const (), job) });
                    }
                    let t = std::time::Instant::now();
                    while REFUSED_BY_1.load(Ordering::SeqCst) == 0 {
                        assert!(
                            t.elapsed().as_secs() < 20,
                            "{sched:?}: participant 1 did not steal the jobs"
                        );
                        std::hint::spin_loop();
                    }
                    wait(&J_DONE, &Admits(J, false));
                    refusals_of_0.store(p.stats()[0].refusals as usize, Ordering::SeqCst);
                    STOP.store(true, Ordering::SeqCst);
                    PoolHandle::of(&p).wake(1);
                },
                &|last| {
                    let left = if last {
                        DECOYS_LEFT.fetch_add(0, Ordering::SeqCst)
                    } else {
                        DECOYS_LEFT.load(Ordering::SeqCst)
                    };
                    left == 0
                },
            );
            let ran = RAN.lock().unwrap().clone();
            assert_eq!(ran.len(), DECOYS + 1, "{sched:?}: every job ran once: {ran:?}");
            assert!(ran.contains(&(J, 0)), "{sched:?}: J ran on its waiter: {ran:?}");
            assert_eq!(
                refusals_of_0.load(Ordering::SeqCst),
                0,
                "{sched:?}: the waiter refused a decoy to reach J"
            );
        }
    }
}
