//! Worksharing constructs: loops (every schedule, `long` and `unsigned long
//! long`, ordered), sections, single and copyprivate.
//!
//! **Ring protocol.** Every member numbers the worksharing constructs it meets
//! (OpenMP makes all members meet the same ones in the same order); construct
//! `s` uses entry `s mod WS_RING` of the team's ring. An entry's `state` is
//! `4s` when it is free for construct `s`, `4s + 1` while the first member to
//! arrive initialises it, `4s + 2` when it is ready. The first arrival wins a
//! compare-exchange `4s → 4s+1`, writes the construct's parameters, and
//! publishes them with a `Release` store of `4s + 2`; later arrivals wait for
//! that value (`Acquire`). Each member leaving the construct increments
//! `left`; the last one resets it and stores `4(s + WS_RING)` (`Release`),
//! handing the entry to the construct `WS_RING` later — a member that ran that
//! far ahead (nowait) waits for it. Iterations are handed out from `next` with
//! `fetch_add` (dynamic) or a compare-exchange loop (guided).
//!
//! **Ordered.** Chunks partition the iteration space in increasing order, so
//! the turn is an iteration index: the member holding chunk `[a, b)` may
//! enter an ordered section when `turn == a`; when it finishes the chunk it
//! waits for `turn == a` and stores `b`, waking the one member waiting for
//! turn `b` (`ordered.rs`). A member finishes its chunk before taking the
//! next, so the lowest unfinished chunk never waits and the order cannot
//! deadlock.
//!
//! **No task runs in these waits** (for a free or a ready entry, for an
//! ordered turn): none of them is a task scheduling point, so the member
//! spins and sleeps without taking queued tasks (`wait::until_without_tasks`);
//! the tasks wait for a scheduling point of some member.

use crate::icv::{Sched, SchedKind};
use crate::ordered::TurnWaiters;
use crate::team::{Team, WS_RING};
use crate::thread::{self, ThreadState};
use crate::wait::{self, AtomicU32, AtomicU64, Observe};
use crossbeam_utils::CachePadded;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicPtr, Ordering};

/// One entry of the team's worksharing ring.
pub(crate) struct WorkShare {
    /// The words the members write, apart from the read-mostly rest.
    hot: CachePadded<Hot>,
    /// Nonzero once a member cancelled this loop or sections (`cancel`):
    /// no more chunks are handed out. Reset by the initialiser.
    cancelled: AtomicU32,
    /// `copyprivate`: the single thread's data.
    copy: AtomicPtr<u8>,
    /// Parameters, written by the initialiser before `state = 4s+2`.
    params: UnsafeCell<LoopParams>,
    /// A `dynamic` loop, not ordered, whose chunks can be claimed with a
    /// plain `fetch_add` (no member's overshoot can wrap the counter):
    /// [`loop_next`]'s fast path. Written with `params`.
    plain_dynamic: UnsafeCell<bool>,
    /// `GOMP_loop_start`'s `mem`: zeroed team-shared memory.
    mem: UnsafeCell<Vec<u64>>,
    /// Task reductions (`reduction(task, …)`): the initialiser's registered
    /// descriptor, whose blocks the other members share (see `task::reduction`).
    task_reductions: AtomicPtr<usize>,
    /// Doacross loops: the posted words (see `doacross`), built by the
    /// initialiser, dropped by the last member to leave.
    doacross: UnsafeCell<Option<Box<crate::doacross::Doacross>>>,
    /// Ordered loops: who waits for which turn (`ordered.rs`).
    turn_waiters: TurnWaiters,
}

/// The words the members write: per construct (`state`, `left`) and per
/// chunk (`next`, `turn`). Every chunk request also reads the entry's
/// read-mostly words (`params`, `cancelled`); sharing a line with the word
/// the requests bounce between cores would make each of those reads a miss
/// too (libgomp's `gomp_work_share` keeps `next` apart for the same reason),
/// while a construct without chunks (`single`) touches this line only.
struct Hot {
    state: AtomicU64,
    left: AtomicU32,
    /// Next iteration index to hand out (dynamic, guided, sections).
    next: AtomicU64,
    /// Ordered loops: the first index of the chunk whose turn it is.
    turn: AtomicU64,
}

// SAFETY: `params`, `mem` and `doacross` are written only by the initialiser before the
// `Release` store that makes the entry ready, and read by members only after
// an `Acquire` load saw it ready; the rest is atomic.
unsafe impl Sync for WorkShare {}

/// A loop's iteration space, normalised to indices `0..count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LoopParams {
    pub count: u64,
    pub kind: SchedKind,
    /// Chunk size (≥ 1); for guided the minimum chunk.
    pub chunk: u64,
    pub ordered: bool,
    /// The original bounds, to map indices back.
    pub space: Space,
}

/// The original loop: `start + i * incr`, signed (`long`) or unsigned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Space {
    Long { start: i64, incr: i64 },
    Ull { start: u64, incr: u64 },
}

impl Default for LoopParams {
    fn default() -> Self {
        LoopParams {
            count: 0,
            kind: SchedKind::Static,
            chunk: 1,
            ordered: false,
            space: Space::Long { start: 0, incr: 1 },
        }
    }
}

impl WorkShare {
    /// Entry for construct `s` of a team of `n`.
    pub(crate) fn new(s: u64, n: usize) -> WorkShare {
        WorkShare {
            hot: CachePadded::new(Hot {
                state: AtomicU64::new(4 * s),
                left: AtomicU32::new(0),
                next: AtomicU64::new(0),
                turn: AtomicU64::new(0),
            }),
            cancelled: AtomicU32::new(0),
            copy: AtomicPtr::new(std::ptr::null_mut()),
            params: UnsafeCell::new(LoopParams::default()),
            plain_dynamic: UnsafeCell::new(false),
            mem: UnsafeCell::new(Vec::new()),
            task_reductions: AtomicPtr::new(std::ptr::null_mut()),
            doacross: UnsafeCell::new(None),
            turn_waiters: TurnWaiters::new(n),
        }
    }

    fn params(&self) -> &LoopParams {
        // SAFETY: see the Sync impl: read after the entry was seen ready.
        unsafe { &*self.params.get() }
    }

    #[inline]
    fn plain_dynamic(&self) -> bool {
        // SAFETY: as `params`.
        unsafe { *self.plain_dynamic.get() }
    }
}

/// Iteration count of `for (i = start; i < end (or > end); i += incr)`.
pub(crate) fn count_long(start: i64, end: i64, incr: i64) -> u64 {
    let (s, e, i) = (start as i128, end as i128, incr as i128);
    if i > 0 && e > s {
        ((e - s + i - 1) / i) as u64
    } else if i < 0 && s > e {
        ((s - e - i - 1) / -i) as u64
    } else {
        0
    }
}

/// Iteration count of an `unsigned long long` loop (`up`: counting up).
pub(crate) fn count_ull(up: bool, start: u64, end: u64, incr: u64) -> u64 {
    if up {
        if end > start && incr != 0 {
            (end - start).div_ceil(incr)
        } else {
            0
        }
    } else {
        let step = incr.wrapping_neg();
        if start > end && step != 0 {
            (start - end).div_ceil(step)
        } else {
            0
        }
    }
}

/// The `[start, end)` of indices `[a, b)` in the original loop's terms.
pub(crate) fn bounds(space: Space, a: u64, b: u64) -> (u64, u64) {
    match space {
        Space::Long { start, incr } => (
            start.wrapping_add((a as i64).wrapping_mul(incr)) as u64,
            start.wrapping_add((b as i64).wrapping_mul(incr)) as u64,
        ),
        Space::Ull { start, incr } => {
            (start.wrapping_add(a.wrapping_mul(incr)), start.wrapping_add(b.wrapping_mul(incr)))
        }
    }
}

/// A team of one for code outside any parallel region (orphaned constructs
/// run by the initial thread): its worksharing state lives in thread state.
fn lone_team() -> &'static Team {
    thread_local! {
        static LONE: &'static Team = Box::leak(Box::new(Team::new(1, None)));
    }
    LONE.with(|t| *t)
}

/// The calling thread's team (a private team of one outside regions) and number.
#[inline]
pub(crate) fn team_of(ts: &ThreadState) -> (&Team, usize) {
    match ts.team() {
        Some(t) => (t, ts.num.get() as usize),
        None => (lone_team(), 0),
    }
}

/// Enters the next worksharing construct. Returns the entry and whether the
/// caller must initialise it (then it calls [`publish`]).
fn enter<'t>(team: &'t Team, ts: &ThreadState) -> (&'t WorkShare, bool) {
    let s = enter_prepared(ts);
    let ws = &*team.ws[(s % WS_RING as u64) as usize];
    let free = 4 * s;
    // Normally free already; else the entry still serves the construct
    // WS_RING before this one (we ran ahead with nowait).
    wait::until_without_tasks(|last| ws.hot.state.observe(last) >= free);
    if ws.hot.state.load(Ordering::Acquire) == free
        && ws.hot.state.compare_exchange(free, free + 1, Ordering::Acquire, Ordering::Acquire).is_ok()
    {
        return (ws, true);
    }
    (ws, false)
}

/// Makes the entry ready (initialiser only).
fn publish(team: &Team, ws: &WorkShare, ts: &ThreadState) {
    // A read-modify-write, as `leave`'s: the members are woken only if they
    // sleep (`unpark_if_sleeping`), which is sound only when the condition
    // was made true by a `SeqCst` read-modify-write (herd's `sync/README.md`,
    // rule 1). A `Release` store could still sit in the store buffer while
    // the parker loads ran, missing a member that had just gone to sleep.
    ws.hot.state.swap(4 * ts.ws_cur.get() + 2, Ordering::SeqCst);
    if team.n > 1 {
        team.wake_all();
    }
}

/// Waits until the construct's entry is ready (non-initialisers).
fn await_ready(ws: &WorkShare, ts: &ThreadState) {
    let ready = 4 * ts.ws_cur.get() + 2;
    wait::until_without_tasks(|last| ws.hot.state.observe(last) == ready);
}

/// The calling member is done with its current construct.
pub(crate) fn leave(team: &Team, ts: &ThreadState) {
    ts.ws_open.set(false);
    let s = ts.ws_cur.get();
    let ws = &*team.ws[(s % WS_RING as u64) as usize];
    if ws.hot.left.fetch_add(1, Ordering::AcqRel) + 1 == team.n as u32 {
        ws.hot.left.store(0, Ordering::Relaxed);
        // SAFETY: every member left, so nobody reads the entry any more.
        unsafe {
            (*ws.mem.get()).clear();
            *ws.doacross.get() = None;
        }
        ws.hot.state.swap(4 * (s + WS_RING as u64), Ordering::SeqCst);
        if team.n > 1 {
            team.wake_all();
        }
    }
}

/// The current construct's entry.
fn current<'t>(team: &'t Team, ts: &ThreadState) -> &'t WorkShare {
    &team.ws[(ts.ws_cur.get() % WS_RING as u64) as usize]
}

// ---------------------------------------------------------------- loops --

/// Starts a loop construct with the given parameters (every member calls
/// it); `mem`: `GOMP_loop_start`'s request for zeroed team-shared memory.
pub(crate) fn loop_start(p: LoopParams, mem: Option<*mut *mut libc::c_void>) {
    loop_start_reducing(p, mem, std::ptr::null_mut())
}

/// [`loop_start`] of a construct with task reductions described by `red`
/// (null: none); the caller has opened the member's taskgroup.
pub(crate) fn loop_start_reducing(p: LoopParams, mem: Option<*mut *mut libc::c_void>, red: *mut usize) {
    loop_start_with(p, mem, red, |_| None)
}

/// [`loop_start_reducing`] of a doacross loop: the initialiser stores
/// `doacross(team size)` in the entry before publishing it.
pub(crate) fn loop_start_with(
    p: LoopParams,
    mem: Option<*mut *mut libc::c_void>,
    red: *mut usize,
    doacross: impl FnOnce(usize) -> Option<Box<crate::doacross::Doacross>>,
) {
    thread::with(|ts| {
        let (team, _) = team_of(ts);
        let (ws, init) = enter(team, ts);
        if init {
            init_loop(ws, p, mem, team.n);
            // SAFETY: the initialiser, before publishing (see the Sync impl).
            unsafe { *ws.doacross.get() = doacross(team.n) };
            register_reductions(ws, red, true);
            publish(team, ws, ts);
        } else {
            await_ready(ws, ts);
            register_reductions(ws, red, false);
        }
        if let Some(m) = mem {
            // SAFETY: ready, so `mem` was sized by the initialiser.
            unsafe { *m = (*ws.mem.get()).as_mut_ptr() as *mut libc::c_void };
        }
    })
}

/// Registers a member's task-reduction descriptor `red` (if any) for the
/// construct of entry `ws`: the initialiser allocates the private blocks
/// (before publishing the entry), the others share them (after it is ready).
fn register_reductions(ws: &WorkShare, red: *mut usize, init: bool) {
    if red.is_null() {
        return;
    }
    if init {
        // SAFETY: gcc's descriptor, alive until the construct's end, when
        // every member has registered (they do before leaving the construct).
        unsafe { crate::task::workshare_register(red, None) };
        ws.task_reductions.store(red, Ordering::Relaxed);
    } else {
        let first = ws.task_reductions.load(Ordering::Relaxed);
        // SAFETY: the initialiser registered `first` before publishing.
        unsafe { crate::task::workshare_register(red, Some(first)) };
    }
}

/// `GOMP_scope_start` with task reductions: a worksharing entry only to
/// choose the member that allocates the private blocks (scope is not
/// worksharing; the generated code ends it with a barrier).
pub(crate) fn scope_start(red: *mut usize) {
    thread::with(|ts| {
        let (team, _) = team_of(ts);
        let (ws, init) = enter(team, ts);
        if init {
            register_reductions(ws, red, true);
            publish(team, ws, ts);
        } else {
            await_ready(ws, ts);
            register_reductions(ws, red, false);
        }
        leave(team, ts);
    })
}

fn init_loop(ws: &WorkShare, p: LoopParams, mem: Option<*mut *mut libc::c_void>, n: usize) {
    // fetch_add unless the overshoot of every member's last request could
    // wrap around (compares first: the products cannot overflow then).
    let fetch_add_safe = (p.count < 1 << 62 && p.chunk < 1 << 30 && n < 1 << 30)
        || p.chunk.checked_mul(n as u64 + 1).and_then(|o| p.count.checked_add(o)).is_some();
    // SAFETY: we are the initialiser (state 4s+1): nobody else reads these yet.
    unsafe {
        *ws.params.get() = p;
        *ws.plain_dynamic.get() = p.kind == SchedKind::Dynamic && !p.ordered && fetch_add_safe;
        if let Some(m) = mem {
            let bytes = *m as usize;
            *ws.mem.get() = vec![0u64; bytes.div_ceil(8).max(1)];
        }
    }
    ws.hot.next.store(0, Ordering::Relaxed);
    ws.cancelled.store(0, Ordering::Relaxed);
    ws.hot.turn.store(0, Ordering::Relaxed);
    ws.turn_waiters.reset();
}

/// Initialises the first construct of a combined `parallel loop` /
/// `parallel sections` before the team starts (master only; members then
/// call [`enter_prepared`]).
pub(crate) fn prepare_first(team: &Team, p: LoopParams) {
    let s = team.ws_base.get();
    let ws = &*team.ws[(s % WS_RING as u64) as usize];
    debug_assert_eq!(ws.hot.state.load(Ordering::Relaxed), 4 * s);
    init_loop(ws, p, None, team.n);
    ws.hot.state.store(4 * s + 2, Ordering::Release);
}

/// After a region (every member has returned) whose members' construct
/// numbering ended at `next`: the next region starts there, and each ring
/// entry is made free for the next construct number that maps to it. The
/// reset is needed because gcc's combined `parallel loop` bodies may compute
/// a static schedule themselves and never call `GOMP_loop_end*` for the
/// prepared construct, and members of a cancelled region leave constructs
/// without leaving them (`force`: the region was cancelled).
///
/// Only the entries of the region's constructs (`base..next`, at most the
/// whole ring) are reset: any other entry is free for the smallest construct
/// number at or above `base` that maps to it, which is at or above `next`
/// too, hence also the smallest at or above `next` — already right. So a
/// region costs one line per construct it ran, however long the ring.
pub(crate) fn finish_region(team: &Team, next: u64, force: bool) {
    let base = team.ws_base.get();
    if next == base && !force {
        return;
    }
    team.ws_base.set(next);
    let r = WS_RING as u64;
    // A cancelled region resets every entry (its members may have left
    // constructs half-way, beyond what `next` says).
    let used = if force { r } else { next.wrapping_sub(base).min(r) };
    for k in 0..used {
        let j = (base.wrapping_add(k) % r) as usize;
        let ws = &team.ws[j];
        let j = j as u64;
        // The smallest s >= next with s % WS_RING == j.
        let s = next + (j + r - next % r) % r;
        ws.hot.left.store(0, Ordering::Relaxed);
        // SAFETY: no member uses the entry any more.
        unsafe {
            (*ws.mem.get()).clear();
            *ws.doacross.get() = None;
        }
        ws.hot.state.store(4 * s, Ordering::Relaxed);
    }
}

/// A member's step to its next construct, returning its number: on its
/// own for the construct made by [`prepare_first`], and as [`enter`]'s
/// first step.
pub(crate) fn enter_prepared(ts: &ThreadState) -> u64 {
    let s = ts.ws_next.get();
    ts.ws_next.set(s + 1);
    ts.ws_cur.set(s);
    ts.ws_open.set(true);
    ts.static_trip.set(0);
    ts.ordered_chunk.set(None);
    s
}

/// The next chunk of the current loop for the calling member, as original
/// bounds; `None` when it has no more. Inlined into the `GOMP_loop_*_next`
/// entry points: a `schedule(dynamic, 1)` loop calls it per iteration.
#[inline]
pub(crate) fn loop_next() -> Option<(u64, u64)> {
    thread::with(
        #[inline(always)]
        |ts| {
            let (team, me) = team_of(ts);
            let ws = current(team, ts);
            // The common dynamic loop: one check, one fetch_add (libgomp's
            // `gomp_iter_dynamic_next` shape); everything else out of line.
            if !ws.plain_dynamic() {
                return loop_next_general(team, me, ws, ts);
            }
            let p = ws.params();
            // Cancelled (`cancel for`): no more chunks. The word sits with
            // the read-mostly parameters, off the chunk counter's line, so
            // the check costs no miss.
            if ws.cancelled.load(Ordering::Relaxed) != 0 {
                return None;
            }
            let a = ws.hot.next.fetch_add(p.chunk, Ordering::Relaxed);
            if a >= p.count {
                return None;
            }
            Some(bounds(p.space, a, (a + p.chunk).min(p.count)))
        },
    )
}

/// [`loop_next`] of every loop but a plain dynamic one.
#[inline(never)]
fn loop_next_general(team: &Team, me: usize, ws: &WorkShare, ts: &ThreadState) -> Option<(u64, u64)> {
    let p = ws.params();
    if p.ordered {
        finish_ordered_chunk(team, ws, ts);
    }
    if ws.cancelled.load(Ordering::Relaxed) != 0 {
        return None;
    }
    let (a, b) = match p.kind {
        SchedKind::Static | SchedKind::Auto => {
            let trip = ts.static_trip.get();
            ts.static_trip.set(trip + 1);
            static_chunk(p, team.n as u64, me as u64, trip)?
        }
        // Ordered, or a count so close to the top that a member's
        // overshoot could wrap the counter.
        SchedKind::Dynamic => claim(&ws.hot.next, p.count, |a| a.saturating_add(p.chunk).min(p.count))?,
        SchedKind::Guided => {
            let n = team.n as u64;
            claim(&ws.hot.next, p.count, |a| a + herd::partition::guided_chunk(p.count - a, n, p.chunk))?
        }
    };
    if p.ordered {
        ts.ordered_chunk.set(Some((a, b)));
    }
    Some(bounds(p.space, a, b))
}

/// Compare-exchange loop handing out `[a, end(a))` from `next`; `None`
/// once `count` is reached.
fn claim(next: &AtomicU64, count: u64, end: impl Fn(u64) -> u64) -> Option<(u64, u64)> {
    let mut a = next.load(Ordering::Relaxed);
    loop {
        if a >= count {
            return None;
        }
        let b = end(a);
        match next.compare_exchange_weak(a, b, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return Some((a, b)),
            Err(v) => a = v,
        }
    }
}

/// Static schedule: member `me` of `n`, its `trip`-th chunk (chunk 0: one
/// block per member); the arithmetic is `herd::partition`'s, shared with
/// herd's own loops.
fn static_chunk(p: &LoopParams, n: u64, me: u64, trip: u64) -> Option<(u64, u64)> {
    herd::partition::static_chunk(p.count, p.chunk, me, n, trip).map(|r| (r.start, r.end))
}

/// Ends the calling member's part in the current loop (`GOMP_loop_end*`).
pub(crate) fn loop_end(barrier: bool) {
    thread::with(|ts| {
        let (team, me) = team_of(ts);
        let ws = current(team, ts);
        if ws.params().ordered {
            finish_ordered_chunk(team, ws, ts);
        }
        leave(team, ts);
        if barrier {
            crate::sync::barrier_in(team, me, ts);
        }
    })
}

/// Runs `f` on the current loop's doacross state, if it has one, with the
/// team and the caller's member number.
pub(crate) fn with_doacross<R>(f: impl FnOnce(&crate::doacross::Doacross, &Team, usize) -> R) -> Option<R> {
    thread::with(|ts| {
        let (team, me) = team_of(ts);
        let ws = current(team, ts);
        // SAFETY: the caller is inside the loop (between its start and its
        // end), so the entry is ready and not yet reset.
        let d = unsafe { (*ws.doacross.get()).as_deref() }?;
        Some(f(d, team, me))
    })
}

fn finish_ordered_chunk(team: &Team, ws: &WorkShare, ts: &ThreadState) {
    if let Some((a, b)) = ts.ordered_chunk.take() {
        wait_turn(team, ws, ts, a);
        ws.turn_waiters.pass(team, &ws.hot.turn, b, turn_key(ws.params(), team.n, b));
    }
}

/// Waits (as the calling member) until it is turn `a` of the current loop.
fn wait_turn(team: &Team, ws: &WorkShare, ts: &ThreadState, a: u64) {
    if ws.hot.turn.load(Ordering::Acquire) == a {
        return;
    }
    let key = turn_key(ws.params(), team.n, a);
    ws.turn_waiters.wait(&ws.hot.turn, a, key, ts.num.get() as usize);
}

/// The waiter-table slot of the chunk starting at `a` (see `ordered.rs`):
/// the chunk's number modulo `n`, or the block's owner under a static
/// schedule of one block per member.
fn turn_key(p: &LoopParams, n: usize, a: u64) -> usize {
    let n = n.max(1) as u64;
    let key = match (p.kind, p.chunk) {
        (SchedKind::Static | SchedKind::Auto, 0) if p.count > 0 => {
            herd::partition::block_owner(p.count, a.min(p.count - 1), n)
        }
        (SchedKind::Static | SchedKind::Auto, 0) => 0,
        (_, chunk) => a / chunk.max(1) % n,
    };
    (key % n) as usize
}

/// `GOMP_ordered_start`: waits for the turn of the calling member's chunk.
pub(crate) fn ordered_start() {
    thread::with(|ts| {
        let Some((a, _)) = ts.ordered_chunk.get() else { return };
        let (team, _) = team_of(ts);
        wait_turn(team, current(team, ts), ts, a);
    })
}

/// Builds loop parameters from a `long` loop.
pub(crate) fn long_params(start: i64, end: i64, incr: i64, sched: Sched, ordered: bool) -> LoopParams {
    LoopParams {
        count: count_long(start, end, incr),
        kind: sched.kind,
        chunk: chunk_of(sched),
        ordered,
        space: Space::Long { start, incr },
    }
}

/// Builds loop parameters from an `unsigned long long` loop.
pub(crate) fn ull_params(
    up: bool,
    start: u64,
    end: u64,
    incr: u64,
    sched: Sched,
    ordered: bool,
) -> LoopParams {
    LoopParams {
        count: count_ull(up, start, end, incr),
        kind: sched.kind,
        chunk: chunk_of(sched),
        ordered,
        space: Space::Ull { start, incr },
    }
}

fn chunk_of(s: Sched) -> u64 {
    match s.kind {
        // 0: one block per member (auto is run as static without a chunk).
        SchedKind::Static => s.chunk.max(0) as u64,
        SchedKind::Auto => 0,
        SchedKind::Dynamic | SchedKind::Guided => s.chunk.max(1) as u64,
    }
}

/// For the loom models: one member's part in a dynamic loop with explicit
/// thread state — enter, initialise or wait, claim indices, leave.
#[cfg(all(test, loom))]
pub(crate) fn model_claims(team: &Team, ts: &ThreadState, p: LoopParams) -> Vec<u64> {
    let (ws, init) = enter(team, ts);
    if init {
        init_loop(ws, p, None, team.n);
        publish(team, ws, ts);
    } else {
        await_ready(ws, ts);
    }
    let count = ws.params().count;
    let mut out = Vec::new();
    loop {
        let a = ws.hot.next.fetch_add(1, Ordering::Relaxed);
        if a >= count {
            break;
        }
        out.push(a);
    }
    leave(team, ts);
    out
}

/// `cancel for`/`sections` by a member inside the library-scheduled
/// construct it is in (`ts.ws_open`): stops handing out its chunks.
pub(crate) fn cancel_current(team: &Team, ts: &ThreadState) {
    let ws = current(team, ts);
    if ws.cancelled.load(Ordering::Relaxed) == 0 {
        ws.cancelled.store(1, Ordering::Relaxed);
    }
}

/// Whether the library-scheduled construct the caller is in was cancelled.
pub(crate) fn current_cancelled(team: &Team, ts: &ThreadState) -> bool {
    current(team, ts).cancelled.load(Ordering::Relaxed) != 0
}

// ------------------------------------------------------------- sections --

/// `GOMP_sections_start(count)`: the first section (1-based) for the caller, 0 if none.
pub(crate) fn sections_start(count: u32) -> u32 {
    loop_start(sections_params(count), None);
    sections_next()
}

/// Sections as a loop over section numbers `1..=count`, one per request.
pub(crate) fn sections_params(count: u32) -> LoopParams {
    LoopParams {
        count: u64::from(count),
        kind: SchedKind::Dynamic,
        chunk: 1,
        ordered: false,
        space: Space::Long { start: 1, incr: 1 },
    }
}

/// `GOMP_sections_next`.
pub(crate) fn sections_next() -> u32 {
    loop_next().map_or(0, |(a, _)| a as u32)
}

// ------------------------------------------------------ single/copyprivate --

/// `GOMP_single_start` (a `single` without `copyprivate`): true for the
/// one member that runs the block.
///
/// Such a single shares nothing but the decision, so it takes no ring entry:
/// the members number their singles (`single_next`, from the team's
/// `single_base`), and the first to raise the team's `single_claimed` past
/// its number runs it. A member that reads the word already past its number
/// stops there (a read); only the winner, and a member that read a stale
/// value, write — one line, written about once per single, instead of the
/// ring entry whose count every member incremented and whose last member
/// then ran the O(n) wake loop. `single nowait` in a loop
/// (`bench/omp_chunks.sh`; before = d94a43d, with the ring-entry single
/// and the cost changes listed in BENCHMARKS.md next to it): 7.9 → 2.7 ns
/// at 1 thread (libgomp 4.3), 51 → 35 ns at 2 threads (libgomp 30).
pub(crate) fn single_start() -> bool {
    thread::with(|ts| {
        let (team, _) = team_of(ts);
        team.n == 1 || claim_single(team, ts)
    })
}

/// The member `ts` of `team` meets its next single: true if it claims it.
pub(crate) fn claim_single(team: &Team, ts: &ThreadState) -> bool {
    let s = ts.single_next.get();
    ts.single_next.set(s + 1);
    let claimed = &team.single_claimed;
    let mut cur = claimed.load(Ordering::Relaxed);
    if wait::weakened("single_cas") {
        // Weakened for the loom demonstration: a plain store claims.
        claimed.store(s + 1, Ordering::Relaxed);
        return cur <= s;
    }
    while cur <= s {
        match claimed.compare_exchange_weak(cur, s + 1, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(now) => cur = now,
        }
    }
    false
}

/// After a region whose master ended its `single` numbering at `next`: the
/// next region's singles start there — or past every number claimed, if the
/// region was cancelled (`force`: members may have run ahead of the master).
pub(crate) fn finish_singles(team: &Team, next: u64, force: bool) {
    let next = if force { next.max(team.single_claimed.load(Ordering::Relaxed)) } else { next };
    if next != team.single_base.get() {
        team.single_base.set(next);
    }
}

/// `GOMP_single_copy_start`: null for the member that runs the block; the
/// others wait for its data and receive the pointer.
pub(crate) fn single_copy_start() -> *mut u8 {
    thread::with(|ts| {
        let (team, _) = team_of(ts);
        let (ws, init) = enter(team, ts);
        if init {
            return std::ptr::null_mut();
        }
        await_ready(ws, ts);
        let data = ws.copy.load(Ordering::Acquire);
        leave(team, ts);
        data
    })
}

/// `GOMP_single_copy_end(data)`: the runner publishes its data.
pub(crate) fn single_copy_end(data: *mut u8) {
    thread::with(|ts| {
        let (team, _) = team_of(ts);
        let ws = current(team, ts);
        ws.copy.store(data, Ordering::Relaxed);
        publish(team, ws, ts);
        leave(team, ts);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(count_long(0, 10, 1), 10);
        assert_eq!(count_long(0, 10, 3), 4);
        assert_eq!(count_long(10, 0, -2), 5);
        assert_eq!(count_long(10, 10, 1), 0);
        assert_eq!(count_long(5, 0, 1), 0);
        assert_eq!(count_long(i64::MIN, i64::MAX, 1), u64::MAX);
        assert_eq!(count_ull(true, 0, 10, 3), 4);
        assert_eq!(count_ull(false, 10, 0, 2u64.wrapping_neg()), 5);
        assert_eq!(count_ull(true, 1 << 40, (1 << 40) + 100, 7), 15);
    }

    #[test]
    fn static_blocks_cover_exactly() {
        for count in [0u64, 1, 7, 100] {
            for n in 1..5u64 {
                for chunk in [0u64, 1, 3] {
                    let p = LoopParams { count, chunk, ..Default::default() };
                    let mut seen = vec![0; count as usize];
                    for me in 0..n {
                        let mut trip = 0;
                        while let Some((a, b)) = static_chunk(&p, n, me, trip) {
                            (a..b).for_each(|i| seen[i as usize] += 1);
                            trip += 1;
                        }
                    }
                    assert!(seen.iter().all(|&c| c == 1), "count {count} n {n} chunk {chunk}");
                }
            }
        }
    }

    /// After regions of 0 to 2 × WS_RING constructs (the first left ready,
    /// as a combined loop gcc schedules itself leaves its prepared construct),
    /// every entry is free for the smallest construct number at or above the
    /// next region's first that maps to it, with no member counted.
    #[test]
    fn finish_region_frees_every_entry_for_the_next() {
        let team = Team::new(1, None);
        let r = WS_RING as u64;
        for k in [0u64, 1, 3, r - 1, r, r + 5, 2 * r, 1] {
            let base = team.ws_base.get();
            for s in base..base + k {
                let ws = &team.ws[(s % r) as usize];
                assert_eq!(ws.hot.state.load(Ordering::Relaxed), 4 * s, "construct {s} finds its entry free");
                // The first is abandoned ready in short regions (a combined
                // loop's prepared construct that gcc scheduled itself: the
                // region's only construct), the others left.
                let done = s != base || k > r;
                ws.hot.state.store(if done { 4 * (s + r) } else { 4 * s + 2 }, Ordering::Relaxed);
                ws.hot.left.store(if done { 0 } else { 1 }, Ordering::Relaxed);
            }
            finish_region(&team, base + k, false);
            let next = base + k;
            for (j, ws) in team.ws.iter().enumerate() {
                let s = (next..next + r).find(|s| s % r == j as u64).unwrap();
                assert_eq!(ws.hot.state.load(Ordering::Relaxed), 4 * s, "entry {j} after a region of {k}");
                assert_eq!(ws.hot.left.load(Ordering::Relaxed), 0);
            }
        }
    }

    #[test]
    fn bounds_map_back() {
        assert_eq!(bounds(Space::Long { start: 10, incr: -2 }, 1, 3), (8, 4));
        assert_eq!(bounds(Space::Ull { start: 5, incr: 3 }, 2, 4), (11, 17));
    }
}
