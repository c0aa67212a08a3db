//! Parallel regions: choosing the team size (OpenMP 4.5 §2.5.1), forming the
//! team on a herd pool, and running every member's implicit task.
//!
//! A region runs as one `herd::rt::broadcast_raw` of its team size: member
//! `i` is pool participant `i`, and the post carries only the team, which
//! holds the region's description. Each member points its thread state at the team
//! and at its implicit task, runs the outlined body, and restores its state;
//! there is no barrier at the end: the master, after every member has
//! returned, waits (running tasks) until the team has no outstanding task —
//! the end-of-region barrier's only remaining duty. Regions of one thread
//! (serialized: `if(0)`, `num_threads(1)`, beyond `max-active-levels`) run on
//! the encountering thread with a team of one.

use crate::env::ProcBind;
use crate::icv::Icv;
use crate::placement;
use crate::runtime::{self, Root};
use crate::task::{self, Task};
use crate::team::Team;
use crate::thread::{self, ThreadState};
use crate::ws::{self, LoopParams};
use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};

/// gcc's outlined region body.
pub(crate) type RegionFn = unsafe extern "C" fn(*mut c_void);

/// Team size for a region requesting `requested` threads (0: not given)
/// from a task with ICVs `icv`, at `active_levels` enclosing active regions.
/// (gcc passes a false `if` clause as `num_threads` 1.)
pub(crate) fn team_size(requested: u32, icv: &Icv, active_levels: u32) -> usize {
    if active_levels >= icv.max_active_levels {
        return 1;
    }
    let n = if requested > 0 { requested } else { icv.nthreads };
    n.min(icv.thread_limit).max(1) as usize
}

/// Threads of the initial thread's contention group working beyond it, kept
/// only while `thread-limit-var` is finite (`OMP_THREAD_LIMIT`): unlimited,
/// as by default, a region touches no process-wide word. (Each host team is
/// a contention group of its own, with its count in its `league::Seat`.)
static BUSY: AtomicU32 = AtomicU32::new(0);

/// The threads a region has taken from `thread-limit-var`; given back when
/// dropped (the region has ended).
struct Busy<'a> {
    team: usize,
    taken: u32,
    busy: &'a AtomicU32,
}

impl<'a> Busy<'a> {
    /// Takes up to `n - 1` threads beyond the encountering one, as many as
    /// `limit` leaves (OpenMP 5.2 §10.1.1: a team gets fewer threads when the
    /// busy ones and the asked ones would pass the limit); `busy` counts the
    /// contention group's working threads.
    fn reserve(n: usize, limit: u32, busy: &'a AtomicU32) -> Busy<'a> {
        if limit == u32::MAX || n <= 1 {
            return Busy { team: n, taken: 0, busy };
        }
        let want = (n - 1).min(u32::MAX as usize) as u32;
        let mut taken = 0;
        let _ = busy.fetch_update(Ordering::AcqRel, Ordering::Acquire, |busy| {
            // The initial thread counts against the limit too.
            taken = want.min(limit.saturating_sub(1).saturating_sub(busy));
            Some(busy + taken)
        });
        Busy { team: taken as usize + 1, taken, busy }
    }

    fn team(&self) -> usize {
        self.team
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        if self.taken > 0 {
            self.busy.fetch_sub(self.taken, Ordering::AcqRel);
        }
    }
}

/// Runs a parallel region; `first`: a combined construct's loop or sections,
/// set up before the members start. `flags & 7` is the `proc_bind` clause
/// (0: none; members place themselves, see `placement`).
pub(crate) fn parallel(
    f: RegionFn,
    data: *mut c_void,
    requested: u32,
    flags: u32,
    first: Option<LoopParams>,
) {
    parallel_in(f, data, requested, flags, first, std::ptr::null())
}

/// `GOMP_parallel_reductions`: a region with `reduction(task, …)`, whose
/// descriptor is the first word of `data`; every implicit task starts in the
/// registration's taskgroup. Returns the team size (the generated code
/// combines that many private copies).
pub(crate) fn parallel_reductions(f: RegionFn, data: *mut c_void, requested: u32, flags: u32) -> u32 {
    // SAFETY: gcc passes the descriptor's address as the block's first word.
    let red = task::RegionReductions::new(unsafe { *(data as *const *mut usize) });
    parallel_in(f, data, requested, flags, None, &red);
    red.nthreads() as u32
}

fn parallel_in(
    f: RegionFn,
    data: *mut c_void,
    requested: u32,
    flags: u32,
    first: Option<LoopParams>,
    red: *const task::RegionReductions,
) {
    thread::with(|ts| {
        let parent = task::current(ts);
        let icv = parent.icv.get();
        let outer = ts.team();
        let (level, active) = outer.map_or((0, 0), |t| (t.level.get(), t.active_level.get()));
        let n = team_size(requested, &icv, active);
        let busy = crate::league::seat(ts).map_or(&BUSY, |s| &s.busy);
        let limit = Busy::reserve(n, icv.thread_limit, busy);
        let n = limit.team();
        let g = runtime::global();
        let mut child = icv;
        child.nthreads = g.nthreads_at(level + 1, icv.nthreads);
        // The members' bind-var: the list's element for their level, else the
        // clause's policy (where binding is on), else the parent's value —
        // libgomp's rule, which programs observe through omp_get_proc_bind.
        let clause = ProcBind::from_raw(flags & 7).filter(|_| icv.bind != ProcBind::False);
        child.bind = g.bind_at(level + 1, clause.unwrap_or(icv.bind));
        let layout = if n > 1 { placement::layout(flags & 7, icv.bind, ts.partition.get()) } else { None };
        let spec = Spec { f, data, first, child, red, layout };
        let at = Nesting { level: level + 1, active: active + 1 };
        if n == 1 || !lead(ts, outer, n, &spec, at) {
            run_serialized(ts, &spec, Nesting { level: level + 1, active });
        }
    })
}

/// Runs an active region of `n > 1` members led by the calling thread;
/// false when no threads could be had for it (the caller serializes it).
///
/// A thread outside every herd pool (the initial thread, also inside
/// serialized regions, or any user thread) leads from the root pool; a
/// member of a running team leads a nested team from a pool lent to it. A
/// root pool busy with another thread's region: this thread leads its team
/// from a lent pool, as libgomp gives each thread a team.
#[inline(never)]
fn lead(ts: &ThreadState, outer: Option<&Team>, n: usize, spec: &Spec, at: Nesting) -> bool {
    if herd::current_thread_index().is_none() {
        let root = runtime::root(n);
        // Fewer threads when the process could not start more.
        let n = n.min(root.pool.num_threads());
        if n == 1 {
            return false;
        }
        if herd::rt::try_enter(&root.pool, || run_team(ts, root, n, spec, at)).is_ok() {
            return true;
        }
    }
    let demand = demand(outer, n).saturating_mul(crate::league::width(ts));
    match runtime::nested_root(n, runtime::nested_passive(demand)) {
        Some(pool) => {
            run_team(ts, &pool, n, spec, at);
            true
        }
        None => false,
    }
}

/// Threads a region of `n` adds to its enclosing active teams: the product
/// of their sizes and `n` (saturating).
fn demand(mut team: Option<&Team>, n: usize) -> usize {
    let mut d = n;
    while let Some(t) = team {
        d = d.saturating_mul(t.n.max(1));
        // SAFETY: an enclosing team outlives the regions nested in it.
        team = unsafe { t.parent.get().as_ref() };
    }
    d
}

/// What every member needs to start; kept in the team (see `Team::spec`).
#[derive(Clone, Copy)]
pub(crate) struct Spec {
    f: RegionFn,
    data: *mut c_void,
    first: Option<LoopParams>,
    child: Icv,
    /// `GOMP_parallel_reductions`' registration (null: none).
    red: *const task::RegionReductions,
    /// Where the members run (`None`: threads stay where they are).
    layout: Option<placement::Layout>,
}

impl Spec {
    fn red(&self) -> Option<&task::RegionReductions> {
        // SAFETY: the registration lives on the encountering thread's stack
        // for the whole region.
        unsafe { self.red.as_ref() }
    }
}

impl PartialEq for Spec {
    fn eq(&self, o: &Spec) -> bool {
        self.f as usize == o.f as usize
            && self.data == o.data
            && self.first == o.first
            && self.child == o.child
            && self.red == o.red
            && self.layout == o.layout
    }
}

/// Where a region sits: its nesting level and the active regions up to and
/// including it.
#[derive(Clone, Copy)]
struct Nesting {
    level: u32,
    active: u32,
}

// SAFETY: `data` is gcc's argument block, shared by design among the members.
unsafe impl Sync for Spec {}

/// Writes the region's description into the (cached) team. Each field is
/// written only when it changes: the team's header shares its cache line
/// with what the members read, so that regions like the previous one cost
/// no extra line transfer.
fn setup(team: &Team, ts: &ThreadState, spec: &Spec, at: Nesting) {
    fn put<T: Copy + PartialEq>(c: &Cell<T>, v: T) {
        if c.get() != v {
            c.set(v);
        }
    }
    put(&team.level, at.level);
    put(&team.active_level, at.active);
    put(&team.parent, ts.team.get());
    put(&team.parent_num, ts.num.get());
    put(&team.league, ts.league.get());
    put(&team.spec, Some(*spec));
    if let Some(p) = spec.first {
        ws::prepare_first(team, p);
    }
}

fn run_team(ts: &ThreadState, root: &Root, n: usize, spec: &Spec, at: Nesting) {
    herd::rt::enter(&root.pool, || {
        // SAFETY: we hold the pool's master role.
        let team = unsafe { root.team(n) };
        if let Some(r) = spec.red() {
            r.register(n);
        }
        setup(team, ts, spec, at);
        // SAFETY: `share` only reads the team, which outlives the region,
        // and each member touches only its own implicit task.
        unsafe {
            herd::rt::broadcast_raw(&root.pool, n, share, team as *const Team as *const (), &|last| {
                team.region_drained(team.end.get().1, last)
            })
        };
        team.region_done();
        let (ws_end, epoch_end, single_end) = team.end.get();
        let cancelled = crate::cancel::end_region(team, epoch_end);
        ws::finish_region(team, ws_end, cancelled);
        ws::finish_singles(team, single_end, cancelled);
        if epoch_end != team.epoch_base.get() {
            team.epoch_base.set(epoch_end);
        }
    });
}

/// A member's share of a region: `data` is the team.
///
/// # Safety
/// `data` points to the team of a running region, whose `spec` is set.
unsafe fn share(data: *const (), ctx: herd::BroadcastContext) {
    // SAFETY: the caller's contract.
    let team = unsafe { &*(data as *const Team) };
    let i = ctx.index();
    let spec = team.spec.get().expect("a region's team has its spec");
    thread::with(|ts| {
        let end = member(team, ts, i, &spec);
        if i == 0 {
            team.end.set(end);
        }
    })
}

/// Member `i`'s implicit task; returns its final worksharing, barrier and
/// `single` numbers.
fn member(team: &Team, ts: &ThreadState, i: usize, spec: &Spec) -> (u64, u32, u64) {
    let saved = ts.save();
    let task: &Task = &team.implicit[i];
    task.reset_implicit(team, i, spec.child, team.epoch_base.get());
    if let Some(r) = spec.red() {
        task.group.set(r.group());
    }
    ts.team.set(team);
    ts.num.set(i as u32);
    ts.task.set(task);
    ts.ws_next.set(team.ws_base.get());
    ts.single_next.set(team.single_base.get());
    ts.epoch.set(team.epoch_base.get());
    ts.ordered_chunk.set(None);
    ts.league.set(team.league.get());
    if let Some(l) = &spec.layout {
        ts.partition.set(placement::enter_member(l, team.n, i));
    }
    crate::affinity_format::region_entered();
    if spec.first.is_some() {
        ws::enter_prepared(ts);
    }
    if let Some(r) = spec.red() {
        r.gate();
    }
    // SAFETY: gcc's outlined body with its argument block.
    unsafe { (spec.f)(spec.data) };
    let end = (ts.ws_next.get(), ts.epoch.get(), ts.single_next.get());
    ts.restore(saved);
    end
}

thread_local! {
    /// Teams of one for serialized regions, by nesting level.
    static SERIAL: std::cell::RefCell<Vec<&'static Team>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn run_serialized(ts: &ThreadState, spec: &Spec, at: Nesting) {
    let level = at.level as usize;
    let team: &'static Team = SERIAL.with(|s| {
        let mut s = s.borrow_mut();
        while s.len() <= level {
            s.push(Box::leak(Box::new(Team::new(1, None))));
        }
        s[level]
    });
    if let Some(r) = spec.red() {
        r.register(1);
    }
    setup(team, ts, spec, at);
    let (ws_end, epoch_end, single_end) = member(team, ts, 0, spec);
    // Detached tasks may still wait for their events (see `task::detach`).
    Team::wait_in(
        Some(team),
        |_| team.region_drained(epoch_end, false),
        "a detached task's event (end of region)",
    );
    let cancelled = crate::cancel::end_region(team, epoch_end);
    ws::finish_region(team, ws_end, cancelled);
    ws::finish_singles(team, single_end, cancelled);
}
