//! Doacross loops: `ordered(n)` with `depend(sink: v)` / `depend(source)`
//! (`GOMP_loop_doacross_*_start`, `GOMP_doacross_post`, `GOMP_doacross_wait`
//! and their `ull` forms).
//!
//! **ABI.** gcc normalises the outermost doacross loop to `0..counts[0]` step
//! 1 and hands its chunks out as an ordinary loop (the `*_next` entry points
//! continue it); the `ncounts` dimensions are the loops of the nest, each
//! given by its iteration count, and `post`/`wait` name an iteration by its
//! vector of 0-based indices. `wait` is C-variadic with exactly `ncounts`
//! arguments (see [`wait_shim`]).
//!
//! **Posted words.** Every iteration belongs to one *slot*, and the
//! iterations of a slot are all run, in lexicographic order, by one thread:
//! under a static schedule one slot per member (the owner of the outermost
//! index), under dynamic one per chunk, under guided one per outermost
//! index (guided chunks have no fixed grid). A slot holds `1 +` the flattened
//! index of the last iteration its thread posted (0: none). `post` stores to
//! the poster's own slot — padded to a cache line while the slots fit in
//! 1 MiB — so the post fast path writes no line another poster writes.
//! `wait(v)` reads `v`'s slot until it is at least `1 + flat(v)`; since the
//! slot's thread posts in order, everything up to `v` of that slot is then
//! posted (and its writes visible: the post is a release, the reads
//! acquire). A sink vector outside the iteration space returns at once.
//!
//! **Sleeping.** A waiter spins and then sleeps as herd participants do,
//! running no task meanwhile (`wait::until_without_tasks`: a doacross wait
//! is not a task scheduling point). Just before its last check it counts itself in
//! `sleepers` (a `SeqCst` read-modify-write, before its `SeqCst` re-read of
//! the slot); a poster swaps its slot (`SeqCst`) and then loads `sleepers`:
//! one of the two sees the other, so either the waiter sees the post or the
//! poster sees the sleeper and wakes the team. `sleepers` is written only on
//! that slow path.

use crate::team::Team;
use crate::wait::{self, AtomicU32, AtomicU64, Observe};
use crate::ws::{self, LoopParams, Space};
use std::cell::Cell;
use std::sync::atomic::Ordering;

/// How a loop's iterations map onto slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SlotMap {
    /// Static, one block per member of `n` over `len` outer iterations.
    Blocks { len: u64, n: u64 },
    /// Static with chunk `chunk`, dealt round-robin to `n` members.
    RoundRobin { chunk: u64, n: u64 },
    /// Dynamic (one slot per chunk) or guided (`chunk` 1: per outer index).
    PerChunk { chunk: u64 },
}

impl SlotMap {
    fn slot(self, i0: u64) -> u64 {
        match self {
            SlotMap::Blocks { len, n } => herd::partition::block_owner(len, i0, n),
            SlotMap::RoundRobin { chunk, n } => (i0 / chunk) % n,
            SlotMap::PerChunk { chunk } => i0 / chunk,
        }
    }

    fn slots(self, len: u64) -> u64 {
        match self {
            SlotMap::Blocks { n, .. } | SlotMap::RoundRobin { n, .. } => n,
            SlotMap::PerChunk { chunk } => len.div_ceil(chunk),
        }
    }
}

/// A doacross loop's shared state (owned by its worksharing entry).
pub(crate) struct Doacross {
    /// Iteration count of each dimension (all ≥ 1).
    counts: Box<[u64]>,
    map: SlotMap,
    /// Slot `k` is `words[k * stride]`.
    words: Box<[AtomicU64]>,
    stride: usize,
    /// Waiters about to sleep (see the module doc).
    sleepers: AtomicU32,
}

/// Iterations of [`Doacross::wait`]'s tight spin before the general wait.
#[cfg(not(loom))]
const SPIN: u32 = 4000;

/// Slot padding: one cache line (8 words) each while the slots fit in this.
const PAD_LIMIT_BYTES: u64 = 1 << 20;

impl Doacross {
    /// The state for a loop of `p` over `counts` in a team of `n`; `None`
    /// when no synchronisation is needed (a team of one, an empty nest).
    pub(crate) fn new(p: &LoopParams, counts: &[u64], n: usize) -> Option<Box<Doacross>> {
        if n <= 1 || counts.is_empty() || counts.contains(&0) {
            return None;
        }
        if counts.iter().try_fold(1u64, |a, &c| a.checked_mul(c)).is_none_or(|t| t == u64::MAX) {
            crate::unsupported::unsupported(
                "a doacross loop nest of 2^64 iterations or more (its iterations cannot be numbered)",
            );
        }
        let len = counts[0];
        let n = n as u64;
        let map = match p.kind {
            crate::icv::SchedKind::Static | crate::icv::SchedKind::Auto if p.chunk == 0 => {
                SlotMap::Blocks { len, n }
            }
            crate::icv::SchedKind::Static | crate::icv::SchedKind::Auto => {
                SlotMap::RoundRobin { chunk: p.chunk, n }
            }
            crate::icv::SchedKind::Dynamic => SlotMap::PerChunk { chunk: p.chunk.max(1) },
            crate::icv::SchedKind::Guided => SlotMap::PerChunk { chunk: 1 },
        };
        let slots = map.slots(len);
        let stride = if slots.saturating_mul(64) <= PAD_LIMIT_BYTES { 8 } else { 1 };
        let words = (0..slots as usize * stride).map(|_| AtomicU64::new(0)).collect();
        Some(Box::new(Doacross { counts: counts.into(), map, words, stride, sleepers: AtomicU32::new(0) }))
    }

    /// `1 +` the flattened index of `v`, or `None` if `v` lies outside the
    /// iteration space. `v` yields one index per dimension.
    fn flat(&self, v: impl Iterator<Item = u64>) -> Option<(u64, u64)> {
        let mut flat = 0u64;
        let mut first = None;
        let mut seen = 0;
        for (x, &c) in v.zip(self.counts.iter()) {
            if x >= c {
                return None;
            }
            first.get_or_insert(x);
            // No overflow: the product of the counts is below u64::MAX (new).
            flat = flat * c + x;
            seen += 1;
        }
        debug_assert_eq!(seen, self.counts.len());
        Some((first?, flat + 1))
    }

    fn word(&self, i0: u64) -> &AtomicU64 {
        &self.words[self.map.slot(i0) as usize * self.stride]
    }

    /// Marks iteration `v` done (the poster's own slot).
    pub(crate) fn post(&self, team: &Team, v: impl Iterator<Item = u64>) {
        let Some((i0, f)) = self.flat(v) else { return };
        let w = self.word(i0);
        if wait::weakened("doacross-post-nowake") {
            w.store(f, Ordering::Release);
            return;
        }
        // SeqCst read-modify-write, then the SeqCst load of `sleepers`: see
        // the module doc (a sleeper counted itself before its last check).
        w.swap(f, Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) != 0 {
            team.wake_all();
        }
    }

    /// Waits until iteration `v` is posted (at once if `v` is outside the
    /// iteration space).
    pub(crate) fn wait(&self, v: impl Iterator<Item = u64>) {
        let Some((i0, f)) = self.flat(v) else { return };
        let w = self.word(i0);
        // A short tight spin first: the post a wavefront waits for is
        // usually a few hundred nanoseconds away, less than the wake-up
        // latency of the general wait.
        #[cfg(not(loom))]
        for _ in 0..SPIN {
            if w.load(Ordering::Acquire) >= f {
                return;
            }
            std::hint::spin_loop();
        }
        let counted = Cell::new(false);
        wait::until_without_tasks(|last| {
            if last && !counted.get() {
                self.sleepers.fetch_add(1, Ordering::SeqCst);
                counted.set(true);
            }
            w.observe(last) >= f
        });
        if counted.get() {
            self.sleepers.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// The number of dimensions (`ncounts`).
    pub(crate) fn dims(&self) -> usize {
        self.counts.len()
    }
}

/// Loop parameters of a doacross loop: the outermost dimension, normalised.
fn params(count0: u64, sched: crate::icv::Sched) -> LoopParams {
    let mut p = ws::long_params(0, 0, 1, sched, false);
    p.count = count0;
    p.space = Space::Long { start: 0, incr: 1 };
    p
}

/// Starts a doacross loop (every member): the worksharing entry's
/// initialiser builds the posted words before the entry is published.
pub(crate) fn loop_start(
    counts: Vec<u64>,
    sched: crate::icv::Sched,
    mem: Option<*mut *mut libc::c_void>,
    red: *mut usize,
) {
    let p = params(counts.first().copied().unwrap_or(0), sched);
    ws::loop_start_with(p, mem, red, |n| Doacross::new(&p, &counts, n));
}

// ------------------------------------------------------------ entry points --

use crate::abi::{decode_sched, next_long, next_ull, runtime_sched};
use crate::icv::{Sched, SchedKind};
use std::ffi::{c_long, c_uint, c_ulonglong, c_void};

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
    ws::with_doacross(|d, team| {
        // SAFETY: gcc passes the iteration's `ncounts` indices.
        let v = unsafe { std::slice::from_raw_parts(counts, d.dims()) };
        d.post(team, v.iter().map(|&x| x as u64));
    });
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_doacross_ull_post(counts: *mut Ull) {
    ws::with_doacross(|d, team| {
        // SAFETY: as above.
        let v = unsafe { std::slice::from_raw_parts(counts, d.dims()) };
        d.post(team, v.iter().copied());
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
    ws::with_doacross(|d, _| {
        // SAFETY: the caller passed the loop's `ncounts` arguments.
        d.wait((0..d.dims()).map(|k| unsafe { arg(regs, stack, k) }));
    });
    // A team of one (or an empty nest) needs no wait, but the caller's
    // reads after the wait must not move above it.
    std::sync::atomic::fence(Ordering::SeqCst);
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

/// loom model of post/wait: a waiter never passes before the post it
/// depends on (the poster's earlier write is visible after the wait), and a
/// waiter that went to sleep is always woken (a lost wake-up is a loom
/// deadlock). With `HERD_OMP_WEAKEN=doacross-post-nowake` (post neither
/// reads `sleepers` nor wakes) loom reports the deadlock.
#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use crate::icv::SchedKind;
    use loom::sync::atomic::AtomicUsize;
    use loom::sync::Arc;

    #[test]
    fn doacross_post_then_wait() {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(3);
        b.check(|| {
            let team = Arc::new(Team::new(2, None));
            let sched = crate::icv::Sched { kind: SchedKind::Static, chunk: 0, monotonic: true };
            // Two outer iterations, static blocks: member 0 owns 0, member 1 owns 1.
            let d = Arc::new(*Doacross::new(&params(2, sched), &[2, 1], 2).unwrap());
            let data = Arc::new(AtomicUsize::new(0));
            let (t2, d2, data2) = (team.clone(), d.clone(), data.clone());
            let waiter = loom::thread::spawn(move || {
                wait::model_enter(&t2.model_parkers[1]);
                d2.wait([0u64, 0].into_iter());
                assert_eq!(data2.load(Ordering::Relaxed), 7, "wait passed before the post");
                d2.post(&t2, [1u64, 0].into_iter());
            });
            data.store(7, Ordering::Relaxed);
            d.post(&team, [0u64, 0].into_iter());
            // A sink outside the space returns at once.
            d.wait([5u64, 0].into_iter());
            waiter.join().unwrap();
            // 1 + flat(1, 0) = 1 + (1 * 1 + 0).
            assert_eq!(d.word(1).load(Ordering::Relaxed), 2, "iteration (1, 0) posted");
        });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Every slot is run by one thread: the slot of an outer index is its
    /// owner under the static schedules, its chunk under dynamic.
    #[test]
    fn slots_match_the_schedules() {
        for len in [1u64, 2, 7, 100] {
            for n in 1..6u64 {
                for chunk in [0u64, 1, 3] {
                    let map = if chunk == 0 {
                        SlotMap::Blocks { len, n }
                    } else {
                        SlotMap::RoundRobin { chunk, n }
                    };
                    for me in 0..n {
                        for r in herd::partition::static_chunks(len, chunk, me, n) {
                            for i in r {
                                assert_eq!(map.slot(i), me, "len {len} n {n} chunk {chunk} i {i}");
                            }
                        }
                    }
                    assert!(map.slots(len) == n);
                }
            }
            let dynamic = SlotMap::PerChunk { chunk: 3 };
            assert_eq!(dynamic.slots(len), len.div_ceil(3));
            assert_eq!(dynamic.slot(len - 1), (len - 1) / 3);
        }
    }

    #[test]
    fn flat_numbers_lexicographically_and_rejects_outside() {
        let p =
            params(4, crate::icv::Sched { kind: crate::icv::SchedKind::Dynamic, chunk: 1, monotonic: true });
        let d = Doacross::new(&p, &[4, 3, 2], 2).unwrap();
        assert_eq!(d.flat([0u64, 0, 0].into_iter()), Some((0, 1)));
        assert_eq!(d.flat([1u64, 2, 1].into_iter()), Some((1, 1 + 6 + 4 + 1)));
        assert_eq!(d.flat([4u64, 0, 0].into_iter()), None);
        assert_eq!(d.flat([0u64, (-1i64) as u64, 0].into_iter()), None);
        assert!(Doacross::new(&p, &[4, 0], 2).is_none(), "an empty nest needs no state");
        assert!(Doacross::new(&p, &[4], 1).is_none(), "a team of one needs no state");
    }
}
