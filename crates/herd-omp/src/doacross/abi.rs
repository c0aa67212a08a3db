//! The doacross entry points of the libgomp ABI: the loop starts
//! (`GOMP_loop_doacross_*_start`, `GOMP_loop_ull_doacross_*_start`,
//! `GOMP_loop_doacross_start`), `GOMP_doacross_post` and the C-variadic
//! `GOMP_doacross_wait` (an assembly shim; see [`wait_shim`]).

use super::loop_start;
use crate::abi::{decode_sched, next_long, next_ull, runtime_sched};
use crate::icv::{Sched, SchedKind};
use crate::ws;
use std::ffi::{c_long, c_uint, c_ulonglong, c_void};
use std::sync::atomic::Ordering;

type Ull = c_ulonglong;

/// # Safety
/// `counts` points to `ncounts` values (gcc's array).
unsafe fn counts_of<T: Copy + Into<i128>>(ncounts: c_uint, counts: *const T) -> Vec<u64> {
    if ncounts == 0 || counts.is_null() {
        return Vec::new();
    }
    // SAFETY: the caller's contract.
    let s = unsafe { std::slice::from_raw_parts(counts, ncounts as usize) };
    s.iter().map(|&c| c.into().clamp(0, u64::MAX as i128) as u64).collect()
}

fn sched(kind: SchedKind, chunk: i64) -> Sched {
    Sched { kind, chunk, monotonic: true }
}

macro_rules! doacross_start_fns {
    ($($name:ident => $kind:ident;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            ncounts: c_uint, counts: *mut c_long, chunk: c_long, istart: *mut c_long, iend: *mut c_long,
        ) -> bool {
            // SAFETY: gcc's array of `ncounts` counts and output pointers.
            unsafe {
                loop_start(counts_of(ncounts, counts), sched(SchedKind::$kind, chunk), None, std::ptr::null_mut());
                next_long(istart, iend)
            }
        }
    )*};
}

doacross_start_fns! {
    GOMP_loop_doacross_static_start => Static;
    GOMP_loop_doacross_dynamic_start => Dynamic;
    GOMP_loop_doacross_guided_start => Guided;
}

macro_rules! ull_doacross_start_fns {
    ($($name:ident => $kind:ident;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            ncounts: c_uint, counts: *mut Ull, chunk: Ull, istart: *mut Ull, iend: *mut Ull,
        ) -> bool {
            let chunk = chunk.min(i64::MAX as u64) as i64;
            // SAFETY: gcc's array of `ncounts` counts and output pointers.
            unsafe {
                loop_start(counts_of(ncounts, counts), sched(SchedKind::$kind, chunk), None, std::ptr::null_mut());
                next_ull(istart, iend)
            }
        }
    )*};
}

ull_doacross_start_fns! {
    GOMP_loop_ull_doacross_static_start => Static;
    GOMP_loop_ull_doacross_dynamic_start => Dynamic;
    GOMP_loop_ull_doacross_guided_start => Guided;
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_loop_doacross_runtime_start(
    ncounts: c_uint,
    counts: *mut c_long,
    istart: *mut c_long,
    iend: *mut c_long,
) -> bool {
    // SAFETY: gcc's array of `ncounts` counts and output pointers.
    unsafe {
        loop_start(counts_of(ncounts, counts), runtime_sched(), None, std::ptr::null_mut());
        next_long(istart, iend)
    }
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_loop_ull_doacross_runtime_start(
    ncounts: c_uint,
    counts: *mut Ull,
    istart: *mut Ull,
    iend: *mut Ull,
) -> bool {
    // SAFETY: gcc's array of `ncounts` counts and output pointers.
    unsafe {
        loop_start(counts_of(ncounts, counts), runtime_sched(), None, std::ptr::null_mut());
        next_ull(istart, iend)
    }
}

/// Opens the member's taskgroup for task reductions (as `GOMP_loop_start`).
fn reductions_group(reductions: *mut usize) {
    if !reductions.is_null() {
        crate::task::workshare_group_start();
    }
}

/// `GOMP_loop_doacross_start` (OpenMP 5.0): the schedule as
/// `GOMP_loop_start`'s, task reductions and team-shared `mem`; a null
/// `istart` asks for no first chunk.
#[no_mangle]
pub unsafe extern "C" fn GOMP_loop_doacross_start(
    ncounts: c_uint,
    counts: *mut c_long,
    sched: c_long,
    chunk: c_long,
    istart: *mut c_long,
    iend: *mut c_long,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    reductions_group(reductions);
    // SAFETY: gcc's arguments.
    unsafe {
        loop_start(
            counts_of(ncounts, counts),
            decode_sched(sched, chunk),
            (!mem.is_null()).then_some(mem),
            reductions,
        );
        !istart.is_null() && next_long(istart, iend)
    }
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_loop_ull_doacross_start(
    ncounts: c_uint,
    counts: *mut Ull,
    sched: c_long,
    chunk: Ull,
    istart: *mut Ull,
    iend: *mut Ull,
    reductions: *mut usize,
    mem: *mut *mut c_void,
) -> bool {
    reductions_group(reductions);
    let s = decode_sched(sched, chunk.min(i64::MAX as u64) as i64);
    // SAFETY: gcc's arguments.
    unsafe {
        loop_start(counts_of(ncounts, counts), s, (!mem.is_null()).then_some(mem), reductions);
        !istart.is_null() && next_ull(istart, iend)
    }
}

/// `GOMP_doacross_post(long *counts)`: iteration `counts[0..ncounts]` is done.
#[no_mangle]
pub unsafe extern "C" fn GOMP_doacross_post(counts: *mut c_long) {
    ws::with_doacross(|d, team, me| {
        // SAFETY: gcc passes the iteration's `ncounts` indices.
        let v = unsafe { std::slice::from_raw_parts(counts, d.dims()) };
        d.post(team, me, v.iter().map(|&x| x as u64));
    });
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_doacross_ull_post(counts: *mut Ull) {
    ws::with_doacross(|d, team, me| {
        // SAFETY: as above.
        let v = unsafe { std::slice::from_raw_parts(counts, d.dims()) };
        d.post(team, me, v.iter().copied());
    });
}

/// The `k`-th variadic argument of a `wait` (see [`wait_shim`]).
///
/// # Safety
/// `regs` holds the six register arguments, `stack` the caller's stack
/// arguments, of which there are at least `k - 5` when `k >= 6`.
unsafe fn arg(regs: *const u64, stack: *const u64, k: usize) -> u64 {
    // SAFETY: the caller's contract.
    unsafe {
        if k < 6 {
            *regs.add(k)
        } else {
            *stack.add(k - 6)
        }
    }
}

/// Body of `GOMP_doacross_wait` / `GOMP_doacross_ull_wait`, called by the
/// assembly shim with the spilled register arguments and the caller's stack
/// arguments (both `long` and `unsigned long long` are 8-byte integers here,
/// and gcc never passes a negative index: it converts sinks to 0-based).
///
/// # Safety
/// As [`arg`], for the current loop's `ncounts` arguments.
#[no_mangle]
unsafe extern "C" fn herd_omp_doacross_wait_body(regs: *const u64, stack: *const u64) {
    let waited = ws::with_doacross(|d, _, me| {
        // SAFETY: the caller passed the loop's `ncounts` arguments.
        d.wait(me, (0..d.dims()).map(|k| unsafe { arg(regs, stack, k) }));
    });
    // A team of one (or an empty nest) needs no wait, but the caller's
    // reads after the wait must not move above it. (A real wait ends with
    // an acquire load of the posted word: no fence, which would cost a
    // store-buffer drain on every wait.)
    if waited.is_none() {
        std::sync::atomic::fence(Ordering::SeqCst);
    }
}

/// `GOMP_doacross_wait(long first, ...)` and `GOMP_doacross_ull_wait(unsigned
/// long long first, ...)` are C-variadic, which stable Rust cannot define.
/// The argument count is the current loop's `ncounts`, known only at run
/// time, so a fixed Rust signature would read stack slots the caller never
/// wrote once `ncounts > 6`. Instead this shim, per the x86-64 System V ABI
/// (variadic integer arguments are passed exactly as fixed ones: the first
/// six in rdi, rsi, rdx, rcx, r8, r9, the rest on the stack above the return
/// address; `al`, the vector-register count, is irrelevant to integer
/// arguments), spills the six registers into a 16-byte aligned buffer of
/// its frame and calls [`herd_omp_doacross_wait_body`] with that buffer and
/// the address of the first stack argument (entry `rsp + 8`). The body
/// reads exactly `ncounts` of them.
#[cfg(target_arch = "x86_64")]
mod wait_shim {
    std::arch::global_asm!(
        ".pushsection .text.herd_omp_doacross_wait,\"ax\",@progbits",
        ".globl GOMP_doacross_wait",
        ".type GOMP_doacross_wait,@function",
        ".globl GOMP_doacross_ull_wait",
        ".type GOMP_doacross_ull_wait,@function",
        ".p2align 4",
        "GOMP_doacross_wait:",
        "GOMP_doacross_ull_wait:",
        // rsp ≡ 8 (mod 16) at entry; 56 bytes make it 16-aligned for the call.
        "sub rsp, 56",
        "mov [rsp], rdi",
        "mov [rsp + 8], rsi",
        "mov [rsp + 16], rdx",
        "mov [rsp + 24], rcx",
        "mov [rsp + 32], r8",
        "mov [rsp + 40], r9",
        "mov rdi, rsp",
        "lea rsi, [rsp + 64]",
        "call {body}@PLT",
        "add rsp, 56",
        "ret",
        ".size GOMP_doacross_wait, . - GOMP_doacross_wait",
        ".size GOMP_doacross_ull_wait, . - GOMP_doacross_ull_wait",
        ".popsection",
        body = sym super::herd_omp_doacross_wait_body,
    );
}

#[cfg(not(target_arch = "x86_64"))]
compile_error!("herd-omp's GOMP_doacross_wait shim is written for x86-64 only");
