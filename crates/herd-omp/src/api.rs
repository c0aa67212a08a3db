//! The `omp_*` user API (OpenMP 4.5 §3, plus the 5.x queries gcc 12's
//! `omp.h` declares that a host-only runtime can answer).
#![allow(clippy::missing_safety_doc, clippy::too_many_arguments)]

use crate::icv::{SchedKind, MONOTONIC, SUPPORTED_ACTIVE_LEVELS};
use crate::sync::{self, NestLock};
use crate::team::Team;
use crate::{runtime, task, thread};
use std::ffi::{c_double, c_int, c_void};
use std::sync::atomic::AtomicU32;
use std::sync::OnceLock;

fn with_icv<R>(f: impl FnOnce(&task::Task) -> R) -> R {
    thread::with(|ts| f(task::current(ts)))
}

fn update_icv(f: impl FnOnce(&mut crate::icv::Icv)) {
    with_icv(|t| {
        let mut icv = t.icv.get();
        f(&mut icv);
        t.icv.set(icv);
    })
}

// ---------------------------------------------------------- team queries --

#[no_mangle]
pub extern "C" fn omp_set_num_threads(n: c_int) {
    update_icv(|i| i.nthreads = n.max(1) as u32)
}

#[no_mangle]
pub extern "C" fn omp_get_num_threads() -> c_int {
    thread::with(|ts| ts.team().map_or(1, |t| t.n as c_int))
}

#[no_mangle]
pub extern "C" fn omp_get_max_threads() -> c_int {
    with_icv(|t| t.icv.get().nthreads as c_int)
}

#[no_mangle]
pub extern "C" fn omp_get_thread_num() -> c_int {
    thread::with(|ts| ts.num.get() as c_int)
}

#[no_mangle]
pub extern "C" fn omp_get_num_procs() -> c_int {
    crate::settings::usable_pus() as c_int
}

#[no_mangle]
pub extern "C" fn omp_in_parallel() -> c_int {
    thread::with(|ts| ts.team().is_some_and(|t| t.active_level.get() > 0) as c_int)
}

#[no_mangle]
pub extern "C" fn omp_set_dynamic(v: c_int) {
    update_icv(|i| i.dynamic = v != 0)
}

#[no_mangle]
pub extern "C" fn omp_get_dynamic() -> c_int {
    with_icv(|t| t.icv.get().dynamic as c_int)
}

#[no_mangle]
pub extern "C" fn omp_set_nested(v: c_int) {
    update_icv(|i| i.max_active_levels = if v != 0 { SUPPORTED_ACTIVE_LEVELS } else { 1 })
}

#[no_mangle]
pub extern "C" fn omp_get_nested() -> c_int {
    with_icv(|t| (t.icv.get().max_active_levels > 1) as c_int)
}

#[no_mangle]
pub extern "C" fn omp_set_schedule(kind: c_int, chunk: c_int) {
    let Some(k) = SchedKind::from_raw(kind as u32) else { return };
    update_icv(|i| {
        i.run_sched.kind = k;
        i.run_sched.monotonic = (kind as u32) & MONOTONIC != 0;
        i.run_sched.chunk = match k {
            SchedKind::Static => chunk.max(0) as i64,
            SchedKind::Auto => 0,
            _ => chunk.max(1) as i64,
        };
    })
}

#[no_mangle]
pub unsafe extern "C" fn omp_get_schedule(kind: *mut c_int, chunk: *mut c_int) {
    let s = with_icv(|t| t.icv.get().run_sched);
    let k = s.kind as u32 | if s.monotonic { MONOTONIC } else { 0 };
    // SAFETY: the caller's output pointers.
    unsafe {
        *kind = k as c_int;
        *chunk = s.chunk.min(c_int::MAX as i64) as c_int;
    }
}

#[no_mangle]
pub extern "C" fn omp_get_thread_limit() -> c_int {
    with_icv(|t| t.icv.get().thread_limit.min(c_int::MAX as u32) as c_int)
}

#[no_mangle]
pub extern "C" fn omp_set_max_active_levels(n: c_int) {
    if n >= 0 {
        update_icv(|i| i.max_active_levels = (n as u32).min(SUPPORTED_ACTIVE_LEVELS))
    }
}

#[no_mangle]
pub extern "C" fn omp_get_max_active_levels() -> c_int {
    with_icv(|t| t.icv.get().max_active_levels as c_int)
}

#[no_mangle]
pub extern "C" fn omp_get_supported_active_levels() -> c_int {
    SUPPORTED_ACTIVE_LEVELS as c_int
}

#[no_mangle]
pub extern "C" fn omp_get_level() -> c_int {
    thread::with(|ts| ts.team().map_or(0, |t| t.level.get() as c_int))
}

#[no_mangle]
pub extern "C" fn omp_get_active_level() -> c_int {
    thread::with(|ts| ts.team().map_or(0, |t| t.active_level.get() as c_int))
}

/// Thread number and team size of the calling thread's ancestor at `level`.
fn ancestor(level: c_int) -> Option<(c_int, c_int)> {
    thread::with(|ts| {
        let cur = ts.team().map_or(0, |t| t.level.get() as c_int);
        if level < 0 || level > cur {
            return None;
        }
        if level == 0 {
            return Some((0, 1));
        }
        let mut team: *const Team = ts.team.get();
        let mut num = ts.num.get();
        // SAFETY: enclosing teams outlive the regions nested in them.
        // Each parent is one level up, so the walk ends within `cur` steps.
        unsafe {
            while (*team).level.get() as c_int > level {
                debug_assert!((*(*team).parent.get()).level.get() < (*team).level.get());
                num = (*team).parent_num.get();
                team = (*team).parent.get();
            }
            Some((num as c_int, (*team).n as c_int))
        }
    })
}

#[no_mangle]
pub extern "C" fn omp_get_ancestor_thread_num(level: c_int) -> c_int {
    ancestor(level).map_or(-1, |a| a.0)
}

#[no_mangle]
pub extern "C" fn omp_get_team_size(level: c_int) -> c_int {
    ancestor(level).map_or(-1, |a| a.1)
}

#[no_mangle]
pub extern "C" fn omp_in_final() -> c_int {
    with_icv(|t| t.in_final.get() as c_int)
}

/// OpenMP 5.2: in an explicit task (not an implicit or the initial task).
#[no_mangle]
pub extern "C" fn omp_in_explicit_task() -> c_int {
    with_icv(|t| t.is_explicit() as c_int)
}

#[no_mangle]
pub extern "C" fn omp_get_cancellation() -> c_int {
    runtime::global().cancellation as c_int
}

#[no_mangle]
pub extern "C" fn omp_get_max_task_priority() -> c_int {
    runtime::global().max_task_priority
}

// --------------------------------------------------------------- timing --

#[no_mangle]
pub extern "C" fn omp_get_wtime() -> c_double {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

#[no_mangle]
pub extern "C" fn omp_get_wtick() -> c_double {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: as above.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9).max(1e-9)
}

// ---------------------------------------------------------------- locks --

unsafe fn word<'a>(lock: *mut c_void) -> &'a AtomicU32 {
    // SAFETY: gcc's `omp_lock_t` is an aligned 32-bit word owned by the lock.
    unsafe { AtomicU32::from_ptr(lock as *mut u32) }
}

unsafe fn nest<'a>(lock: *mut c_void) -> &'a NestLock {
    // SAFETY: gcc's `omp_nest_lock_t` has `NestLock`'s layout.
    unsafe { &*(lock as *const NestLock) }
}

#[no_mangle]
pub unsafe extern "C" fn omp_init_lock(lock: *mut c_void) {
    // SAFETY: the caller's lock.
    unsafe { word(lock) }.store(0, std::sync::atomic::Ordering::Relaxed)
}

#[no_mangle]
pub unsafe extern "C" fn omp_destroy_lock(_lock: *mut c_void) {}

#[no_mangle]
pub unsafe extern "C" fn omp_set_lock(lock: *mut c_void) {
    // SAFETY: the caller's lock.
    sync::lock(unsafe { word(lock) })
}

#[no_mangle]
pub unsafe extern "C" fn omp_unset_lock(lock: *mut c_void) {
    // SAFETY: the caller's lock.
    sync::unlock(unsafe { word(lock) })
}

#[no_mangle]
pub unsafe extern "C" fn omp_test_lock(lock: *mut c_void) -> c_int {
    // SAFETY: the caller's lock.
    sync::try_lock(unsafe { word(lock) }) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn omp_init_nest_lock(lock: *mut c_void) {
    // SAFETY: the caller's lock.
    unsafe { nest(lock) }.init()
}

#[no_mangle]
pub unsafe extern "C" fn omp_destroy_nest_lock(_lock: *mut c_void) {}

#[no_mangle]
pub unsafe extern "C" fn omp_set_nest_lock(lock: *mut c_void) {
    // SAFETY: the caller's lock.
    unsafe { nest(lock) }.set()
}

#[no_mangle]
pub unsafe extern "C" fn omp_unset_nest_lock(lock: *mut c_void) {
    // SAFETY: the caller's lock.
    unsafe { nest(lock) }.unset()
}

#[no_mangle]
pub unsafe extern "C" fn omp_test_nest_lock(lock: *mut c_void) -> c_int {
    // SAFETY: the caller's lock.
    unsafe { nest(lock) }.test()
}

#[no_mangle]
pub unsafe extern "C" fn omp_init_lock_with_hint(lock: *mut c_void, _hint: c_int) {
    // SAFETY: forwarded.
    unsafe { omp_init_lock(lock) }
}

#[no_mangle]
pub unsafe extern "C" fn omp_init_nest_lock_with_hint(lock: *mut c_void, _hint: c_int) {
    // SAFETY: forwarded.
    unsafe { omp_init_nest_lock(lock) }
}

// --------------------------------------------------------------- places --

/// The root pool's place list (reported even when threads are not bound).
fn places() -> &'static (Vec<Vec<u32>>,) {
    static PLACES: OnceLock<(Vec<Vec<u32>>,)> = OnceLock::new();
    PLACES.get_or_init(|| (runtime::root(0).pool.info().places,))
}

#[no_mangle]
pub extern "C" fn omp_get_proc_bind() -> c_int {
    with_icv(|t| t.icv.get().bind as c_int)
}

#[no_mangle]
pub extern "C" fn omp_get_num_places() -> c_int {
    places().0.len() as c_int
}

#[no_mangle]
pub extern "C" fn omp_get_place_num_procs(place: c_int) -> c_int {
    usize::try_from(place).ok().and_then(|p| places().0.get(p)).map_or(0, |p| p.len() as c_int)
}

#[no_mangle]
pub unsafe extern "C" fn omp_get_place_proc_ids(place: c_int, ids: *mut c_int) {
    if let Some(p) = usize::try_from(place).ok().and_then(|p| places().0.get(p)) {
        for (i, &pu) in p.iter().enumerate() {
            // SAFETY: the caller provides omp_get_place_num_procs(place) slots.
            unsafe { *ids.add(i) = pu as c_int };
        }
    }
}

/// The calling thread's place (-1 when threads are not bound).
#[no_mangle]
pub extern "C" fn omp_get_place_num() -> c_int {
    thread::with(|ts| crate::placement::place_num(ts.partition.get()).map_or(-1, |p| p as c_int))
}

/// The calling thread's place partition (`place-partition-var`): the whole
/// place list when threads are not bound.
fn partition() -> crate::placement::Partition {
    let all = crate::placement::Partition { off: 0, len: places().0.len() as u32 };
    match crate::placement::places() {
        Some(p) => thread::with(|ts| crate::placement::partition_of(ts.partition.get(), p)),
        None => all,
    }
}

#[no_mangle]
pub extern "C" fn omp_get_partition_num_places() -> c_int {
    partition().len as c_int
}

#[no_mangle]
pub unsafe extern "C" fn omp_get_partition_place_nums(nums: *mut c_int) {
    let p = partition();
    for (k, place) in (p.off..p.off + p.len).enumerate() {
        // SAFETY: the caller provides omp_get_partition_num_places() slots.
        unsafe { *nums.add(k) = place as c_int };
    }
}

// -------------------------------------------------------- devices, teams --

#[no_mangle]
pub extern "C" fn omp_set_default_device(d: c_int) {
    update_icv(|i| i.default_device = d)
}

#[no_mangle]
pub extern "C" fn omp_get_default_device() -> c_int {
    with_icv(|t| t.icv.get().default_device)
}

#[no_mangle]
pub extern "C" fn omp_get_num_devices() -> c_int {
    0
}

#[no_mangle]
pub extern "C" fn omp_get_device_num() -> c_int {
    omp_get_initial_device()
}

#[no_mangle]
pub extern "C" fn omp_get_initial_device() -> c_int {
    0
}

#[no_mangle]
pub extern "C" fn omp_is_initial_device() -> c_int {
    1
}

/// Nothing to pause: herd's idle workers already sleep. Returns 0 (success).
#[no_mangle]
pub extern "C" fn omp_pause_resource(_kind: c_int, _device: c_int) -> c_int {
    0
}

#[no_mangle]
pub extern "C" fn omp_pause_resource_all(_kind: c_int) -> c_int {
    0
}

#[no_mangle]
pub extern "C" fn omp_display_env(verbose: c_int) {
    crate::display::print(verbose != 0)
}

#[no_mangle]
pub extern "C" fn omp_fulfill_event(e: usize) {
    crate::task::fulfill_event(e)
}

// The affinity-format routines live in `affinity_format`, the omp_target_*
// memory routines in `target_memory`.
