//! The runtime driven through its C entry points from Rust, so that the
//! team, worksharing and task protocols also run under ThreadSanitizer
//! (`make tsan`) and in `cargo test`: regions, barriers, dynamic and ordered
//! loops, single, copyprivate-free sections, tasks with taskwait and
//! taskgroup, dependences.

use std::ffi::{c_long, c_uint, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

// Link the library (its `#[no_mangle]` entry points).
use herd_omp as _;

type Fn1 = unsafe extern "C" fn(*mut c_void);

extern "C" {
    fn GOMP_parallel(f: Fn1, data: *mut c_void, num_threads: c_uint, flags: c_uint);
    fn GOMP_barrier();
    fn GOMP_loop_dynamic_start(
        s: c_long,
        e: c_long,
        i: c_long,
        c: c_long,
        is: *mut c_long,
        ie: *mut c_long,
    ) -> bool;
    fn GOMP_loop_dynamic_next(is: *mut c_long, ie: *mut c_long) -> bool;
    fn GOMP_loop_ordered_dynamic_start(
        s: c_long,
        e: c_long,
        i: c_long,
        c: c_long,
        is: *mut c_long,
        ie: *mut c_long,
    ) -> bool;
    fn GOMP_loop_ordered_dynamic_next(is: *mut c_long, ie: *mut c_long) -> bool;
    fn GOMP_ordered_start();
    fn GOMP_ordered_end();
    fn GOMP_loop_end();
    fn GOMP_single_start() -> bool;
    fn GOMP_task(
        f: Fn1,
        data: *mut c_void,
        cpyfn: Option<unsafe extern "C" fn(*mut c_void, *mut c_void)>,
        arg_size: c_long,
        arg_align: c_long,
        if_clause: bool,
        flags: c_uint,
        depend: *mut *mut c_void,
        priority: i32,
        detach: *mut c_void,
    );
    fn GOMP_taskwait();
    fn GOMP_taskgroup_start();
    fn GOMP_taskgroup_end();
    fn omp_get_thread_num() -> i32;
    fn omp_get_num_threads() -> i32;
}

const N: usize = 2000;

struct Shared {
    hits: Vec<AtomicUsize>,
    order: std::sync::Mutex<Vec<usize>>,
    singles: AtomicUsize,
    tasks: AtomicUsize,
    phase: AtomicUsize,
    bad_phase: AtomicUsize,
    chain: AtomicUsize,
    chain_bad: AtomicUsize,
}

/// A deferrable task whose argument block is the pointer `arg` (copied).
fn task_on(f: Fn1, mut arg: *const Shared) {
    // SAFETY: an 8-byte argument block that GOMP_task copies.
    unsafe {
        GOMP_task(
            f,
            &mut arg as *mut _ as *mut c_void,
            None,
            8,
            8,
            true,
            0,
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
        )
    };
}

unsafe extern "C" fn count_task(data: *mut c_void) {
    // SAFETY: the task's argument block holds a pointer to `Shared`.
    let s = unsafe { &**(data as *const *const Shared) };
    s.tasks.fetch_add(1, Ordering::Relaxed);
}

unsafe extern "C" fn spawning_task(data: *mut c_void) {
    // SAFETY: as above.
    let p = unsafe { *(data as *const *const Shared) };
    for _ in 0..4 {
        task_on(count_task, p);
    }
}

/// A task in a dependence chain on one address: each must see its predecessor's step.
unsafe extern "C" fn chain_task(data: *mut c_void) {
    // SAFETY: the block is (pointer to Shared, step).
    let (p, step) = unsafe { *(data as *const (*const Shared, usize)) };
    // SAFETY: `Shared` outlives the region.
    let s = unsafe { &*p };
    if s.chain.load(Ordering::Relaxed) != step {
        s.chain_bad.fetch_add(1, Ordering::Relaxed);
    }
    s.chain.store(step + 1, Ordering::Relaxed);
}

unsafe extern "C" fn body(data: *mut c_void) {
    // SAFETY: `data` is the test's `Shared`.
    let s = unsafe { &*(data as *const Shared) };
    let n = unsafe { omp_get_num_threads() } as usize;
    let me = unsafe { omp_get_thread_num() } as usize;
    // Barrier phases.
    for round in 0..50 {
        s.phase.fetch_add(1, Ordering::Relaxed);
        unsafe { GOMP_barrier() };
        if s.phase.load(Ordering::Relaxed) != (round + 1) * n {
            s.bad_phase.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { GOMP_barrier() };
    }
    // A dynamic loop: every index once.
    let (mut a, mut b) = (0, 0);
    let mut more = unsafe { GOMP_loop_dynamic_start(0, N as c_long, 1, 7, &mut a, &mut b) };
    while more {
        for i in a..b {
            s.hits[i as usize].fetch_add(1, Ordering::Relaxed);
        }
        more = unsafe { GOMP_loop_dynamic_next(&mut a, &mut b) };
    }
    unsafe { GOMP_loop_end() };
    // An ordered loop: sections in iteration order.
    let mut more = unsafe { GOMP_loop_ordered_dynamic_start(0, 200, 1, 3, &mut a, &mut b) };
    while more {
        for i in a..b {
            unsafe { GOMP_ordered_start() };
            s.order.lock().unwrap().push(i as usize);
            unsafe { GOMP_ordered_end() };
        }
        more = unsafe { GOMP_loop_ordered_dynamic_next(&mut a, &mut b) };
    }
    unsafe { GOMP_loop_end() };
    // single, many times (nowait).
    for _ in 0..100 {
        if unsafe { GOMP_single_start() } {
            s.singles.fetch_add(1, Ordering::Relaxed);
        }
    }
    unsafe { GOMP_barrier() };
    // Tasks from every member, waited for; nested tasks in a taskgroup.
    let arg = s as *const Shared;
    for _ in 0..200 {
        task_on(count_task, arg);
    }
    unsafe { GOMP_taskwait() };
    unsafe { GOMP_taskgroup_start() };
    for _ in 0..50 {
        task_on(spawning_task, arg);
    }
    unsafe { GOMP_taskgroup_end() };
    // A dependence chain created by member 0 (depend(inout: chain)).
    if me == 0 {
        let addr = &s.chain as *const AtomicUsize as *mut c_void;
        // Old layout: [total, n_out, addresses...].
        // (counts stored as pointer-sized words, as gcc does)
        let one = std::ptr::without_provenance_mut::<c_void>(1);
        let mut deps: [*mut c_void; 3] = [one, one, addr];
        for step in 0..100usize {
            let mut blk = (s as *const Shared, step);
            unsafe {
                GOMP_task(
                    chain_task,
                    &mut blk as *mut _ as *mut c_void,
                    None,
                    16,
                    8,
                    true,
                    8,
                    deps.as_mut_ptr(),
                    0,
                    std::ptr::null_mut(),
                )
            };
        }
    }
    // The implicit barrier at the end of the region completes every task.
}

#[test]
fn constructs_through_the_c_entry_points() {
    for threads in [2u32, 3] {
        let s = Shared {
            hits: (0..N).map(|_| AtomicUsize::new(0)).collect(),
            order: std::sync::Mutex::new(Vec::new()),
            singles: AtomicUsize::new(0),
            tasks: AtomicUsize::new(0),
            phase: AtomicUsize::new(0),
            bad_phase: AtomicUsize::new(0),
            chain: AtomicUsize::new(0),
            chain_bad: AtomicUsize::new(0),
        };
        unsafe { GOMP_parallel(body, &s as *const Shared as *mut c_void, threads, 0) };
        let n = threads as usize;
        assert_eq!(s.bad_phase.load(Ordering::Relaxed), 0, "a barrier let a member through early");
        assert!(
            s.hits.iter().all(|h| h.load(Ordering::Relaxed) == 1),
            "a loop index did not run exactly once"
        );
        assert_eq!(*s.order.lock().unwrap(), (0..200).collect::<Vec<_>>(), "ordered sections out of order");
        assert_eq!(s.singles.load(Ordering::Relaxed), 100, "single ran other than once per construct");
        assert_eq!(s.tasks.load(Ordering::Relaxed), n * (200 + 50 * 4), "tasks lost or run twice");
        assert_eq!(
            s.chain.load(Ordering::Relaxed),
            100,
            "the dependence chain did not finish by the region's end"
        );
        assert_eq!(s.chain_bad.load(Ordering::Relaxed), 0, "a chained task ran before its predecessor");
    }
}
