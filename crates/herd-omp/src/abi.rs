//! The `GOMP_*` entry points gcc emits (libgomp's `libgomp_g.h`), each a
//! thin translation to herd-omp's modules. Signatures follow gcc 12.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use crate::icv::{Sched, SchedKind, MONOTONIC};
use crate::parallel::{parallel, RegionFn};
use crate::task::{self, CopyFn, Spawn, TaskFn};
use crate::unsupported::unsupported;
use crate::ws::{self, LoopParams};
use crate::{sync, thread};
use std::ffi::{c_char, c_int, c_long, c_uint, c_ulong, c_ulonglong, c_void};

type Ull = c_ulonglong;

// ------------------------------------------------------------ parallel --

#[no_mangle]
pub unsafe extern "C" fn GOMP_parallel(f: RegionFn, data: *mut c_void, num_threads: c_uint, flags: c_uint) {
    parallel(f, data, num_threads, flags, None)
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_parallel_start(f: RegionFn, data: *mut c_void, n: c_uint) {
    crate::split::start(f, data, n, None)
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_parallel_end() {
    crate::split::end()
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_parallel_reductions(
    f: RegionFn,
    data: *mut c_void,
    num_threads: c_uint,
    flags: c_uint,
) -> c_uint {
    crate::parallel::parallel_reductions(f, data, num_threads, flags)
}

// ------------------------------------------------------------- barrier --

#[no_mangle]
pub unsafe extern "C" fn GOMP_barrier() {
    sync::barrier()
}

// ------------------------------------------------------------ critical --

#[no_mangle]
pub unsafe extern "C" fn GOMP_critical_start() {
    sync::critical_start()
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_critical_end() {
    sync::critical_end()
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_critical_name_start(pptr: *mut *mut c_void) {
    // SAFETY: gcc's `.gomp_critical_user_NAME` variable.
    sync::lock(unsafe { sync::critical_word(pptr) })
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_critical_name_end(pptr: *mut *mut c_void) {
    // SAFETY: as above.
    sync::unlock(unsafe { sync::critical_word(pptr) })
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_atomic_start() {
    sync::atomic_start()
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_atomic_end() {
    sync::atomic_end()
}

// --------------------------------------------------------------- loops --

fn sched(kind: SchedKind, chunk: c_long, monotonic: bool) -> Sched {
    Sched { kind, chunk, monotonic }
}

pub(crate) fn runtime_sched() -> Sched {
    thread::with(|ts| task::current(ts).icv.get().run_sched)
}

/// Decodes `GOMP_loop_start`'s schedule argument (0: runtime).
pub(crate) fn decode_sched(s: c_long, chunk: i64) -> Sched {
    match SchedKind::from_raw(s as u32) {
        Some(kind) => Sched { kind, chunk, monotonic: (s as u32) & MONOTONIC != 0 },
        None => runtime_sched(),
    }
}

pub(crate) unsafe fn next_long(istart: *mut c_long, iend: *mut c_long) -> bool {
    match ws::loop_next() {
        Some((a, b)) => {
            // SAFETY: gcc's output pointers.
            unsafe {
                *istart = a as c_long;
                *iend = b as c_long;
            }
            true
        }
        None => false,
    }
}

pub(crate) unsafe fn next_ull(istart: *mut Ull, iend: *mut Ull) -> bool {
    match ws::loop_next() {
        Some((a, b)) => {
            // SAFETY: gcc's output pointers.
            unsafe {
                *istart = a;
                *iend = b;
            }
            true
        }
        None => false,
    }
}

unsafe fn start_long(
    start: c_long,
    end: c_long,
    incr: c_long,
    s: Sched,
    ordered: bool,
    istart: *mut c_long,
    iend: *mut c_long,
) -> bool {
    ws::loop_start(ws::long_params(start, end, incr, s, ordered), None);
    // SAFETY: forwarded.
    unsafe { next_long(istart, iend) }
}

unsafe fn start_ull(
    up: bool,
    start: Ull,
    end: Ull,
    incr: Ull,
    s: Sched,
    ordered: bool,
    istart: *mut Ull,
    iend: *mut Ull,
) -> bool {
    ws::loop_start(ws::ull_params(up, start, end, incr, s, ordered), None);
    // SAFETY: forwarded.
    unsafe { next_ull(istart, iend) }
}

macro_rules! loop_start_fns {
    ($($name:ident => $kind:ident, $mono:expr, $ordered:expr;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            start: c_long, end: c_long, incr: c_long, chunk: c_long,
            istart: *mut c_long, iend: *mut c_long,
        ) -> bool {
            // SAFETY: gcc's arguments.
            unsafe { start_long(start, end, incr, sched(SchedKind::$kind, chunk, $mono), $ordered, istart, iend) }
        }
    )*};
}

loop_start_fns! {
    GOMP_loop_static_start => Static, true, false;
    GOMP_loop_dynamic_start => Dynamic, true, false;
    GOMP_loop_guided_start => Guided, true, false;
    GOMP_loop_nonmonotonic_dynamic_start => Dynamic, false, false;
    GOMP_loop_nonmonotonic_guided_start => Guided, false, false;
    GOMP_loop_ordered_static_start => Static, true, true;
    GOMP_loop_ordered_dynamic_start => Dynamic, true, true;
    GOMP_loop_ordered_guided_start => Guided, true, true;
}

macro_rules! loop_runtime_start_fns {
    ($($name:ident => $ordered:expr;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            start: c_long, end: c_long, incr: c_long, istart: *mut c_long, iend: *mut c_long,
        ) -> bool {
            // SAFETY: gcc's arguments.
            unsafe { start_long(start, end, incr, runtime_sched(), $ordered, istart, iend) }
        }
    )*};
}

loop_runtime_start_fns! {
    GOMP_loop_runtime_start => false;
    GOMP_loop_nonmonotonic_runtime_start => false;
    GOMP_loop_maybe_nonmonotonic_runtime_start => false;
    GOMP_loop_ordered_runtime_start => true;
}

macro_rules! loop_next_fns {
    ($($name:ident),*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(istart: *mut c_long, iend: *mut c_long) -> bool {
            // SAFETY: gcc's output pointers.
            unsafe { next_long(istart, iend) }
        }
    )*};
}

loop_next_fns!(
    GOMP_loop_static_next,
    GOMP_loop_dynamic_next,
    GOMP_loop_guided_next,
    GOMP_loop_runtime_next,
    GOMP_loop_nonmonotonic_dynamic_next,
    GOMP_loop_nonmonotonic_guided_next,
    GOMP_loop_nonmonotonic_runtime_next,
    GOMP_loop_maybe_nonmonotonic_runtime_next,
    GOMP_loop_ordered_static_next,
    GOMP_loop_ordered_dynamic_next,
    GOMP_loop_ordered_guided_next,
    GOMP_loop_ordered_runtime_next
);

unsafe fn loop_start_generic(
    p: LoopParams,
    istart_null: bool,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    if !reductions.is_null() {
        task::workshare_group_start();
    }
    ws::loop_start_reducing(p, (!mem.is_null()).then_some(mem), reductions);
    !istart_null
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_loop_start(
    start: c_long,
    end: c_long,
    incr: c_long,
    sched: c_long,
    chunk: c_long,
    istart: *mut c_long,
    iend: *mut c_long,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    let p = ws::long_params(start, end, incr, decode_sched(sched, chunk), false);
    // SAFETY: gcc's arguments.
    unsafe { loop_start_generic(p, istart.is_null(), reductions, mem) && next_long(istart, iend) }
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_loop_ordered_start(
    start: c_long,
    end: c_long,
    incr: c_long,
    sched: c_long,
    chunk: c_long,
    istart: *mut c_long,
    iend: *mut c_long,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    let p = ws::long_params(start, end, incr, decode_sched(sched, chunk), true);
    // SAFETY: gcc's arguments.
    unsafe { loop_start_generic(p, istart.is_null(), reductions, mem) && next_long(istart, iend) }
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_loop_end() {
    ws::loop_end(true)
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_loop_end_nowait() {
    ws::loop_end(false)
}

// ---------------------------------------------------------- ull loops --

macro_rules! ull_start_fns {
    ($($name:ident => $kind:ident, $mono:expr, $ordered:expr;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            up: bool, start: Ull, end: Ull, incr: Ull, chunk: Ull, istart: *mut Ull, iend: *mut Ull,
        ) -> bool {
            let s = Sched { kind: SchedKind::$kind, chunk: chunk.min(i64::MAX as u64) as i64, monotonic: $mono };
            // SAFETY: gcc's arguments.
            unsafe { start_ull(up, start, end, incr, s, $ordered, istart, iend) }
        }
    )*};
}

ull_start_fns! {
    GOMP_loop_ull_static_start => Static, true, false;
    GOMP_loop_ull_dynamic_start => Dynamic, true, false;
    GOMP_loop_ull_guided_start => Guided, true, false;
    GOMP_loop_ull_nonmonotonic_dynamic_start => Dynamic, false, false;
    GOMP_loop_ull_nonmonotonic_guided_start => Guided, false, false;
    GOMP_loop_ull_ordered_static_start => Static, true, true;
    GOMP_loop_ull_ordered_dynamic_start => Dynamic, true, true;
    GOMP_loop_ull_ordered_guided_start => Guided, true, true;
}

macro_rules! ull_runtime_start_fns {
    ($($name:ident => $ordered:expr;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            up: bool, start: Ull, end: Ull, incr: Ull, istart: *mut Ull, iend: *mut Ull,
        ) -> bool {
            // SAFETY: gcc's arguments.
            unsafe { start_ull(up, start, end, incr, runtime_sched(), $ordered, istart, iend) }
        }
    )*};
}

ull_runtime_start_fns! {
    GOMP_loop_ull_runtime_start => false;
    GOMP_loop_ull_nonmonotonic_runtime_start => false;
    GOMP_loop_ull_maybe_nonmonotonic_runtime_start => false;
    GOMP_loop_ull_ordered_runtime_start => true;
}

macro_rules! ull_next_fns {
    ($($name:ident),*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(istart: *mut Ull, iend: *mut Ull) -> bool {
            // SAFETY: gcc's output pointers.
            unsafe { next_ull(istart, iend) }
        }
    )*};
}

ull_next_fns!(
    GOMP_loop_ull_static_next,
    GOMP_loop_ull_dynamic_next,
    GOMP_loop_ull_guided_next,
    GOMP_loop_ull_runtime_next,
    GOMP_loop_ull_nonmonotonic_dynamic_next,
    GOMP_loop_ull_nonmonotonic_guided_next,
    GOMP_loop_ull_nonmonotonic_runtime_next,
    GOMP_loop_ull_maybe_nonmonotonic_runtime_next,
    GOMP_loop_ull_ordered_static_next,
    GOMP_loop_ull_ordered_dynamic_next,
    GOMP_loop_ull_ordered_guided_next,
    GOMP_loop_ull_ordered_runtime_next
);

#[no_mangle]
pub unsafe extern "C" fn GOMP_loop_ull_start(
    up: bool,
    start: Ull,
    end: Ull,
    incr: Ull,
    sched: c_long,
    chunk: Ull,
    istart: *mut Ull,
    iend: *mut Ull,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    let s = decode_sched(sched, chunk.min(i64::MAX as u64) as i64);
    let p = ws::ull_params(up, start, end, incr, s, false);
    // SAFETY: gcc's arguments.
    unsafe { loop_start_generic(p, istart.is_null(), reductions, mem) && next_ull(istart, iend) }
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_loop_ull_ordered_start(
    up: bool,
    start: Ull,
    end: Ull,
    incr: Ull,
    sched: c_long,
    chunk: Ull,
    istart: *mut Ull,
    iend: *mut Ull,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    let s = decode_sched(sched, chunk.min(i64::MAX as u64) as i64);
    let p = ws::ull_params(up, start, end, incr, s, true);
    // SAFETY: gcc's arguments.
    unsafe { loop_start_generic(p, istart.is_null(), reductions, mem) && next_ull(istart, iend) }
}

// ------------------------------------- ordered (doacross: see `doacross`) --

#[no_mangle]
pub unsafe extern "C" fn GOMP_ordered_start() {
    ws::ordered_start()
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_ordered_end() {}

macro_rules! unsupported_fns {
    ($($name:ident ( $($arg:ident : $ty:ty),* ) $(-> $ret:ty)? => $what:expr;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name($(_: $ty),*) $(-> $ret)? {
            unsupported($what)
        }
    )*};
}

unsupported_fns! {
    GOMP_target_ext(a: c_int, b: RegionFn, c: usize, d: *mut *mut c_void, e: *mut usize, f: *mut u16, g: c_uint, h: *mut *mut c_void, i: *mut *mut c_void) => "offloading (target regions)";
    GOMP_target_data_ext(a: c_int, b: usize, c: *mut *mut c_void, d: *mut usize, e: *mut u16) => "offloading (target data)";
    GOMP_target_end_data() => "offloading (target data)";
    GOMP_target(a: c_int, b: RegionFn, c: *const c_void, d: usize, e: *mut *mut c_void, f: *mut usize, g: *mut u8) => "offloading (target regions)";
    GOMP_target_data(a: c_int, b: *const c_void, c: usize, d: *mut *mut c_void, e: *mut usize, f: *mut u8) => "offloading (target data)";
    GOMP_target_update(a: c_int, b: *const c_void, c: usize, d: *mut *mut c_void, e: *mut usize, f: *mut u8) => "offloading (target update)";
    GOMP_teams(a: c_uint, b: c_uint) => "teams (inside target regions)";
    GOMP_teams4(a: c_uint, b: c_uint, c: c_uint, d: bool) -> bool => "teams inside target regions (offloading)";
    GOMP_target_update_ext(a: c_int, b: usize, c: *mut *mut c_void, d: *mut usize, e: *mut u16, f: c_uint, g: *mut *mut c_void) => "offloading (target update)";
    GOMP_target_enter_exit_data(a: c_int, b: usize, c: *mut *mut c_void, d: *mut usize, e: *mut u16, f: c_uint, g: *mut *mut c_void) => "offloading (target enter/exit data)";
    // gcc 14's `declare target indirect`: called by code running on an
    // offload device only (libgomp's host version traps).
    GOMP_target_map_indirect_ptr(a: *mut c_void) -> *mut c_void => "offloading (indirect calls on a device)";
}

/// Offload images register themselves at start-up; with no device there is
/// nothing to do (a target region itself is refused).
#[no_mangle]
pub unsafe extern "C" fn GOMP_offload_register_ver(
    _v: c_uint,
    _h: *const c_void,
    _t: c_int,
    _d: *const c_void,
) {
}
#[no_mangle]
pub unsafe extern "C" fn GOMP_offload_register(_h: *const c_void, _t: c_int, _d: *const c_void) {}
#[no_mangle]
pub unsafe extern "C" fn GOMP_offload_unregister(_h: *const c_void, _t: c_int, _d: *const c_void) {}
#[no_mangle]
pub unsafe extern "C" fn GOMP_offload_unregister_ver(
    _v: c_uint,
    _h: *const c_void,
    _t: c_int,
    _d: *const c_void,
) {
}

// ------------------------------------------------ combined parallel loops --

unsafe fn parallel_loop(f: RegionFn, data: *mut c_void, n: c_uint, p: LoopParams, flags: c_uint) {
    parallel(f, data, n, flags, Some(p))
}

macro_rules! parallel_loop_fns {
    ($($name:ident => $kind:ident, $mono:expr;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            f: RegionFn, data: *mut c_void, num_threads: c_uint,
            start: c_long, end: c_long, incr: c_long, chunk: c_long, flags: c_uint,
        ) {
            let p = ws::long_params(start, end, incr, sched(SchedKind::$kind, chunk, $mono), false);
            // SAFETY: gcc's arguments.
            unsafe { parallel_loop(f, data, num_threads, p, flags) }
        }
    )*};
}

parallel_loop_fns! {
    GOMP_parallel_loop_static => Static, true;
    GOMP_parallel_loop_dynamic => Dynamic, true;
    GOMP_parallel_loop_guided => Guided, true;
    GOMP_parallel_loop_nonmonotonic_dynamic => Dynamic, false;
    GOMP_parallel_loop_nonmonotonic_guided => Guided, false;
}

macro_rules! parallel_loop_runtime_fns {
    ($($name:ident),*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            f: RegionFn, data: *mut c_void, num_threads: c_uint,
            start: c_long, end: c_long, incr: c_long, flags: c_uint,
        ) {
            let p = ws::long_params(start, end, incr, runtime_sched(), false);
            // SAFETY: gcc's arguments.
            unsafe { parallel_loop(f, data, num_threads, p, flags) }
        }
    )*};
}

parallel_loop_runtime_fns!(
    GOMP_parallel_loop_runtime,
    GOMP_parallel_loop_nonmonotonic_runtime,
    GOMP_parallel_loop_maybe_nonmonotonic_runtime
);

/// The split forms of the combined constructs (gcc before 4.9; see
/// `split`): the region starts with its loop prepared, and the caller runs
/// member 0's share until `GOMP_parallel_end`.
macro_rules! parallel_loop_start_fns {
    ($($name:ident => $kind:ident;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            f: RegionFn, data: *mut c_void, num_threads: c_uint,
            start: c_long, end: c_long, incr: c_long, chunk: c_long,
        ) {
            let p = ws::long_params(start, end, incr, sched(SchedKind::$kind, chunk, true), false);
            crate::split::start(f, data, num_threads, Some(p))
        }
    )*};
}

parallel_loop_start_fns! {
    GOMP_parallel_loop_static_start => Static;
    GOMP_parallel_loop_dynamic_start => Dynamic;
    GOMP_parallel_loop_guided_start => Guided;
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_parallel_loop_runtime_start(
    f: RegionFn,
    data: *mut c_void,
    num_threads: c_uint,
    start: c_long,
    end: c_long,
    incr: c_long,
) {
    let p = ws::long_params(start, end, incr, runtime_sched(), false);
    crate::split::start(f, data, num_threads, Some(p))
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_parallel_sections_start(
    f: RegionFn,
    data: *mut c_void,
    num_threads: c_uint,
    count: c_uint,
) {
    crate::split::start(f, data, num_threads, Some(ws::sections_params(count)))
}

// ------------------------------------------------------------ sections --

#[no_mangle]
pub unsafe extern "C" fn GOMP_sections_start(count: c_uint) -> c_uint {
    ws::sections_start(count)
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_sections2_start(
    count: c_uint,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> c_uint {
    if !reductions.is_null() {
        task::workshare_group_start();
        ws::loop_start_reducing(ws::sections_params(count), (!mem.is_null()).then_some(mem), reductions);
        return ws::sections_next();
    }
    if mem.is_null() {
        ws::sections_start(count)
    } else {
        ws::loop_start(ws::sections_params(count), Some(mem));
        ws::sections_next()
    }
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_sections_next() -> c_uint {
    ws::sections_next()
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_sections_end() {
    ws::loop_end(true)
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_sections_end_nowait() {
    ws::loop_end(false)
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_parallel_sections(
    f: RegionFn,
    data: *mut c_void,
    num_threads: c_uint,
    count: c_uint,
    flags: c_uint,
) {
    parallel(f, data, num_threads, flags, Some(ws::sections_params(count)))
}

// -------------------------------------------------------------- single --

#[no_mangle]
pub unsafe extern "C" fn GOMP_single_start() -> bool {
    ws::single_start()
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_single_copy_start() -> *mut c_void {
    ws::single_copy_start() as *mut c_void
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_single_copy_end(data: *mut c_void) {
    ws::single_copy_end(data as *mut u8)
}

/// `#pragma omp scope` (5.1): nothing to set up without reductions.
#[no_mangle]
pub unsafe extern "C" fn GOMP_scope_start(reductions: *mut usize) {
    if !reductions.is_null() {
        task::workshare_group_start();
        ws::scope_start(reductions);
    }
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_taskgroup_reduction_register(data: *mut usize) {
    // SAFETY: gcc's descriptor.
    unsafe { task::taskgroup_register(data) }
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_taskgroup_reduction_unregister(data: *mut usize) {
    // SAFETY: gcc's descriptor, registered before.
    unsafe { task::taskgroup_unregister(data) }
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_task_reduction_remap(cnt: usize, cntorig: usize, ptrs: *mut *mut c_void) {
    // SAFETY: gcc's array of `cnt + cntorig` pointers.
    unsafe { task::task_reduction_remap(cnt, cntorig, ptrs) }
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_workshare_task_reduction_unregister(cancelled: bool) {
    task::workshare_unregister(cancelled)
}

// --------------------------------------------------------------- tasks --

#[no_mangle]
pub unsafe extern "C" fn GOMP_task(
    f: TaskFn,
    data: *mut c_void,
    cpyfn: Option<CopyFn>,
    arg_size: c_long,
    arg_align: c_long,
    if_clause: bool,
    flags: c_uint,
    depend: *mut *mut c_void,
    _priority: c_int,
    detach: *mut c_void,
) {
    if flags & task::FLAG_DETACH != 0 && detach.is_null() {
        crate::unsupported::fatal("GOMP_task: FLAG_DETACH without an event handle pointer");
    }
    task::spawn(Spawn {
        func: f,
        data,
        cpyfn,
        arg_size: arg_size as usize,
        arg_align: arg_align as usize,
        if_clause,
        flags,
        depend,
        patch: None,
        detach: if flags & task::FLAG_DETACH != 0 { detach as *mut usize } else { std::ptr::null_mut() },
    })
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_taskwait() {
    task::taskwait()
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_taskwait_depend(depend: *mut *mut c_void) {
    task::taskwait_depend(depend, false)
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_taskwait_depend_nowait(depend: *mut *mut c_void) {
    task::taskwait_depend(depend, true)
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_taskyield() {
    task::taskyield()
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_taskgroup_start() {
    task::taskgroup_start()
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_taskgroup_end() {
    task::taskgroup_end()
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_taskloop(
    f: TaskFn,
    data: *mut c_void,
    cpyfn: Option<CopyFn>,
    arg_size: c_long,
    arg_align: c_long,
    flags: c_uint,
    num_tasks: c_ulong,
    _priority: c_int,
    start: c_long,
    end: c_long,
    step: c_long,
) {
    let count = ws::count_long(start, end, step);
    let space = ws::Space::Long { start, incr: step };
    task::taskloop(f, data, cpyfn, arg_size as usize, arg_align as usize, flags, num_tasks, count, |a, b| {
        ws::bounds(space, a, b)
    })
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_taskloop_ull(
    f: TaskFn,
    data: *mut c_void,
    cpyfn: Option<CopyFn>,
    arg_size: c_long,
    arg_align: c_long,
    flags: c_uint,
    num_tasks: c_ulong,
    _priority: c_int,
    start: Ull,
    end: Ull,
    step: Ull,
) {
    let up = flags & task::FLAG_UP != 0;
    let count = ws::count_ull(up, start, end, step);
    let space = ws::Space::Ull { start, incr: step };
    task::taskloop(f, data, cpyfn, arg_size as usize, arg_align as usize, flags, num_tasks, count, |a, b| {
        ws::bounds(space, a, b)
    })
}

// --------------------------------------------------- error, allocation --

unsafe fn message(msg: *const c_char, len: usize) -> Option<String> {
    if msg.is_null() {
        return None;
    }
    // SAFETY: gcc passes either a NUL-terminated string (len == usize::MAX)
    // or `len` bytes.
    Some(unsafe {
        if len == usize::MAX {
            std::ffi::CStr::from_ptr(msg).to_string_lossy().into_owned()
        } else {
            String::from_utf8_lossy(std::slice::from_raw_parts(msg as *const u8, len)).into_owned()
        }
    })
}

/// Reports an `error` directive as libgomp words it, byte for byte: the
/// report is the program's own message (its `message` clause), and programs'
/// test suites match libgomp's wording (gcc's `error-1.c` does), so herd
/// keeps it rather than its own `herd-omp:` prefix. One write.
fn error_directive(severity: &str, msg: Option<String>) {
    use std::io::Write;
    let text = match msg {
        Some(m) => format!("\nlibgomp: {severity}error directive encountered: {m}\n"),
        None => format!("\nlibgomp: {severity}error directive encountered\n"),
    };
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// `#pragma omp error severity(warning)` at execution.
#[no_mangle]
pub unsafe extern "C" fn GOMP_warning(msg: *const c_char, len: usize) {
    // SAFETY: forwarded.
    error_directive("", unsafe { message(msg, len) });
}

/// `#pragma omp error severity(fatal)` at execution: ends the program with
/// exit status 1, as libgomp.
#[no_mangle]
pub unsafe extern "C" fn GOMP_error(msg: *const c_char, len: usize) {
    // SAFETY: forwarded.
    error_directive("fatal error: ", unsafe { message(msg, len) });
    std::process::exit(1);
}

// GOMP_alloc and GOMP_free live in `allocator`.
