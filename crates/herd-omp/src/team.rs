//! A team: the threads of one parallel region, its barrier, its worksharing
//! ring and its counts of outstanding tasks.
//!
//! **Barrier protocol.** Barrier number `b` (each thread counts its barriers;
//! OpenMP makes every member meet the same ones). Two members exchange
//! signals (one dissemination round): each stores `b` into its *own* flag (a
//! plain `Release` store: no stall), waits for the other's flag, then issues
//! a `SeqCst` fence and wakes the other if it sleeps. Three or more members
//! use a **combining tree** of fan-in [`FANIN`] over member numbers (herd
//! numbers participants in topology order, so siblings are neighbours):
//! member `i > 0`'s parent is `i / FANIN`, so the children of `p > 0` are the
//! aligned group `p*FANIN .. p*FANIN + FANIN` and those of 0 are `1 ..
//! FANIN`; the depth is at most `ceil(log_FANIN n)`.
//! * *Arrival*, up the tree: a member waits until its `arrive` word (one line
//!   per member, written only by its children) counts all its children,
//!   resets it to 0, then adds one to its parent's with a `SeqCst`
//!   read-modify-write; the child whose addition completes the parent's count
//!   wakes the parent if it sleeps (one wake at most per member).
//! * *Release*, down the tree: the root, once its children arrived, and every
//!   other member once released, stores `b` into its own `release` word
//!   (`Release`), issues a `SeqCst` fence and wakes each of its children that
//!   sleeps (at most `FANIN` wakes per member; nobody issues a sequence of
//!   `n` wakes). A child waits for its parent's `release` to reach `b`.
//!
//! A member about to sleep (in `herd::rt::wait_until`, after announcing it on
//! its parker with a `SeqCst` compare-exchange) issues a `SeqCst` fence and
//! re-checks with a read-modify-write. No lost wake-up: if the sleeper's
//! re-check reads a value before the signal, it precedes the signaller's
//! fence (or read-modify-write) in the single total order, so the
//! signaller's `SeqCst` load of the sleeper's parker sees the announcement.
//! A parent resets its `arrive` before it releases, and its children add for
//! the next barrier only after they saw that release, so the word is reused.
//!
//! **Task drain.** Then each member waits, running tasks, until no task of
//! the barrier's *epoch* is outstanding. Tasks are counted per epoch parity
//! (`epoch & 1`: a member that leaves the barrier early and creates a task of
//! the next epoch cannot hold back members still draining this one) and per
//! member, on the member's own line: `created` by the member creating a task,
//! `finished` by the member finishing one — no word that every member writes.
//! `task_epoch[parity]` is set to the epoch by the first task of an epoch
//! (written once, read-shared after), so a barrier of an epoch without tasks
//! skips the drain. The drain reads every member's `finished`, then every
//! member's `created`, and is done when the sums are equal: a finish seen
//! implies its creation is seen (creation happens before the finish), and
//! by induction over the task tree every task of the epoch — created by an
//! implicit task before the barrier, or by a task of the epoch, whose finish
//! was seen — was seen created and finished. (Reading `created` first can
//! see a creation's finish without it; loom model.) In teams of more than
//! `DRAIN_SUMMERS` members: drained is stable (no task of the epoch is left
//! to create one), so whoever finds it marks the epoch in `drained_mark`, a
//! line written once or twice per epoch: the root, every member arrived,
//! checks once before it releases the tree, and if it finds the epoch
//! drained it marks it so, and the members skip the drain (one sum per
//! barrier, not one per member). Otherwise every member drains, and reading
//! `2n` counters on every spin of `n` drainers — lines the finishers write
//! — would be `O(n²)` transfers per spin round: a member sums on every
//! `⌈n / DRAIN_SUMMERS⌉`-th spinning check (staggered by member number, so
//! about `DRAIN_SUMMERS` members sum per round) and reads the drainers'
//! mark on the others (a separate entry from the root's: a member entering
//! the drain after another marked it must still wake its neighbours, which
//! may sleep in it). A drainer that sees the epoch drained (or marked) issues a
//! `SeqCst` fence and wakes its tree neighbours (parent and children) if
//! they sleep; they pass it on. Every task of the epoch runs on a member
//! waiting in the drain (or inside a task it runs), so the member that
//! finishes the last one sums within `⌈n / DRAIN_SUMMERS⌉` checks and starts
//! the wake-up. A drainer about to sleep re-checks the sums with
//! read-modify-writes: if it missed a finish, that finish, the drainer that
//! saw it (directly or through the mark, whose release and acquire carry
//! the finish), and its wake, come later in the total order.
//!
//! **End of region.** The master (after every member returned) waits until
//! both parities are drained, running tasks; before it sleeps it sets
//! `end_sleep`, and a finishing task that sees `end_sleep` wakes the master
//! if it sleeps (one `SeqCst` load of the master's parker word), and the
//! master re-checks the sums. The finisher does not sum the counts itself:
//! that cost every task O(n) read-modify-writes of the members' lines
//! while the master slept (a `parallel` + `master` task tree at 128
//! threads). Nothing is lost: the finisher's increment and its load of the
//! parker are ordered against the master's announcement and its
//! read-modify-write re-check in the total order, so either the re-check
//! sees the finish or the finisher sees the master asleep. The master is
//! woken at most once per sleep: after a wake it re-checks and spins its
//! window again before it sleeps.
//!
//! Two threads: one exchange, about 30 ns above one cache-line round trip
//! between them (BENCHMARKS.md).

use crate::parallel::Spec;
use crate::task::Task;
use crate::wait::{self, AtomicU32, AtomicU64, Observe};
use crate::ws::WorkShare;
use crossbeam_utils::CachePadded;
use herd::rt::PoolHandle;
use std::cell::Cell;
use std::sync::atomic::Ordering;

/// Worksharing constructs a member may run ahead of the slowest (nowait).
/// libgomp allocates a construct's record on demand, so its members never
/// wait for a slow one; a ring of 64 lets a member run 63 `nowait`
/// constructs ahead (gcc's cancel-parallel-3 runs 14 while one member sleeps;
/// with 8 the others waited for it). A region resets only the entries it
/// used (`ws::finish_region`), so the length costs no time, 16 KiB a team.
#[cfg(not(loom))]
pub(crate) const WS_RING: usize = 64;
/// A short ring under loom, so that recycling is explored.
#[cfg(loom)]
pub(crate) const WS_RING: usize = 2;
/// Children per member in the barrier tree (and the most wakes a member
/// issues to release its children) when every member has a CPU.
pub(crate) const FANIN: usize = 4;

/// The barrier tree's children per node for `n` members of which
/// `concurrency` can run at once. With a CPU each, [`FANIN`]: a node's
/// arrival word is written by few cores and the release is `log_FANIN n`
/// hops of cache-line transfers. Oversubscribed, with `k = ⌈n /
/// concurrency⌉` members per CPU, each hop is a context switch to one
/// particular thread, which waits behind the others of its CPU; only about
/// `concurrency` members write a node's word at once, so the tree is
/// widened `k` times (so it is flat while `n ≤ FANIN·k + 1`, e.g. 16
/// members on 2 CPUs): EPCC barrier at 16 threads on 2 CPUs, fan-in 4 →
/// 16: 89–98 → 8–19 µs.
fn barrier_fanin(n: usize, concurrency: usize) -> usize {
    FANIN * n.div_ceil(concurrency.max(1))
}

/// About how many members of a team sum the task counts per spinning check
/// of a task drain (see the module documentation): each member sums on
/// every `⌈n / DRAIN_SUMMERS⌉`-th of its spinning checks, staggered by
/// member number, and reads the drained mark on the others.
pub(crate) const DRAIN_SUMMERS: usize = 8;

/// The words a member writes in the barrier (its own line).
#[derive(Default)]
struct Own {
    /// Tree: the last barrier number released to its children; two
    /// members: its signal.
    release: AtomicU32,
    /// Wakes it issued (conditional: each wakes the target only if it
    /// sleeps), counted always (relaxed, single writer) for the structural
    /// tests: releasing children, completing a parent's arrival, passing a
    /// drained epoch on.
    wakes_release: std::sync::atomic::AtomicU64,
    wakes_arrive: std::sync::atomic::AtomicU64,
    wakes_drain: std::sync::atomic::AtomicU64,
    /// Its spinning checks in task drains, and how many of them summed the
    /// members' counts (counted as the wakes are; see [`DRAIN_SUMMERS`]).
    drain_checks: std::sync::atomic::AtomicU64,
    drain_sums: std::sync::atomic::AtomicU64,
}

/// A member's task counts by epoch parity (its own line).
#[derive(Default)]
pub(crate) struct Counts {
    created: [AtomicU64; 2],
    finished: [AtomicU64; 2],
}

/// The threads of one parallel region; see the module documentation.
pub(crate) struct Team {
    pub n: usize,
    /// Nesting level of the region (1: outermost).
    pub level: Cell<u32>,
    /// Active (more than one thread) regions enclosing and including this one.
    pub active_level: Cell<u32>,
    /// The encountering thread's team and number there (null at level 1).
    pub parent: Cell<*const Team>,
    pub parent_num: Cell<u32>,
    /// The host team the region runs in (null: none; see `league`).
    pub league: Cell<*const crate::league::Seat>,
    /// Wakes members; `None` for a team of one.
    pub handle: Option<PoolHandle>,
    /// Children per tree node (`FANIN`; smaller in loom models).
    fanin: usize,
    /// Arrivals of each member's children in the current barrier.
    arrive: Box<[CachePadded<AtomicU32>]>,
    own: Box<[CachePadded<Own>]>,
    /// Outstanding deferred tasks: per member, by creation epoch parity.
    counts: Box<[CachePadded<Counts>]>,
    /// The latest epoch of each parity that created a task.
    task_epoch: CachePadded<[AtomicU32; 2]>,
    /// The latest epoch of each parity found drained: `[parity]` by the
    /// root before it released the barrier (nobody drains that epoch),
    /// `[2 + parity]` by a drainer (its neighbours may sleep in the drain and
    /// need the wake-up). Written once per such epoch, read-shared.
    drained_mark: CachePadded<[AtomicU32; 4]>,
    /// A drainer sums the counts on every `drain_every`-th spinning check.
    drain_every: u32,
    /// Nonzero while the master may sleep in the end-of-region drain.
    end_sleep: CachePadded<AtomicU32>,
    /// Cancellation (see `cancel`): nonzero once a member cancelled the
    /// region; and, for `cancel for`/`sections` of a loop the members
    /// schedule themselves, the canceller's barrier epoch + 1. Each written
    /// by the canceller, read by the others; reset by the master between
    /// regions.
    pub(crate) cancelled: CachePadded<AtomicU32>,
    pub(crate) ws_cancel: CachePadded<AtomicU32>,
    pub ws: Box<[CachePadded<WorkShare>; WS_RING]>,
    /// Each member's implicit task; reused region after region.
    pub implicit: Box<[CachePadded<Task>]>,
    /// Where the next region's worksharing and barrier numbering starts
    /// (written by the master between regions).
    pub ws_base: Cell<u64>,
    pub epoch_base: Cell<u32>,
    /// Where the next region's `single` numbering starts (see
    /// `ws::single_start`).
    pub single_base: Cell<u64>,
    /// One more than the highest `single` number a member has claimed.
    pub(crate) single_claimed: CachePadded<AtomicU64>,
    /// What the members run (written by the master before a region, and
    /// only when it differs from the previous region's, so that members of
    /// repeated regions find it in their caches).
    pub spec: Cell<Option<Spec>>,
    /// The master's worksharing, barrier and `single` numbers at the end of
    /// its share.
    pub end: CachePadded<Cell<(u64, u32, u64)>>,
    /// Under loom: each member's model parker (see `wait::until`).
    #[cfg(loom)]
    pub(crate) model_parkers: Vec<std::sync::Arc<wait::ModelParker>>,
}

// SAFETY: the `Cell` fields are written only by the master between regions
// (or while building the team) and read by members during a region, after
// the post that starts it; everything shared during a region is atomic.
unsafe impl Sync for Team {}
// SAFETY: as above.
unsafe impl Send for Team {}

/// Drained marks (`Team::drained_mark`, entry `i` of parity `i & 1`) that
/// no epoch of that parity equals (as `task_epoch`'s initial values:
/// u32::MAX is odd, 0 even).
const NO_MARK: [u32; 4] = [u32::MAX, 0, u32::MAX, 0];

/// `v` has reached barrier number `number` (wrapping).
#[inline]
fn reached(v: u32, number: u32) -> bool {
    v.wrapping_sub(number) as i32 >= 0
}

/// Adds one to a counter written only by the calling thread.
#[inline]
fn bump(c: &std::sync::atomic::AtomicU64) {
    c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

impl Team {
    pub(crate) fn new(n: usize, handle: Option<PoolHandle>) -> Team {
        let fanin = barrier_fanin(n, handle.as_ref().map_or(n, PoolHandle::concurrency));
        Team::with_fanin(n, handle, fanin)
    }

    /// A team whose barrier tree has `fanin` children per node (loom models
    /// use 2, to get a deep tree from few threads).
    pub(crate) fn with_fanin(n: usize, handle: Option<PoolHandle>, fanin: usize) -> Team {
        assert!(fanin >= 2);
        Team {
            n,
            level: Cell::new(0),
            active_level: Cell::new(0),
            parent: Cell::new(std::ptr::null()),
            parent_num: Cell::new(0),
            league: Cell::new(std::ptr::null()),
            handle,
            fanin,
            arrive: (0..n).map(|_| CachePadded::new(AtomicU32::new(0))).collect(),
            own: (0..n).map(|_| CachePadded::new(Own::default())).collect(),
            counts: (0..n).map(|_| CachePadded::new(Counts::default())).collect(),
            // Epoch 0 with no task yet: u32::MAX is never an epoch of parity 0
            // before wrapping, and 0 never one of parity 1.
            task_epoch: CachePadded::new([AtomicU32::new(u32::MAX), AtomicU32::new(0)]),
            drained_mark: CachePadded::new(NO_MARK.map(AtomicU32::new)),
            drain_every: n.div_ceil(DRAIN_SUMMERS).max(1) as u32,
            end_sleep: CachePadded::new(AtomicU32::new(0)),
            cancelled: CachePadded::new(AtomicU32::new(0)),
            ws_cancel: CachePadded::new(AtomicU32::new(0)),
            ws: (0..WS_RING)
                .map(|i| CachePadded::new(WorkShare::new(i as u64, n)))
                .collect::<Box<[_]>>()
                .try_into()
                .unwrap_or_else(|_| unreachable!("WS_RING entries")),
            implicit: (0..n).map(|_| CachePadded::new(Task::implicit_blank())).collect(),
            ws_base: Cell::new(0),
            epoch_base: Cell::new(0),
            single_base: Cell::new(0),
            single_claimed: CachePadded::new(AtomicU64::new(0)),
            spec: Cell::new(None),
            end: CachePadded::new(Cell::new((0, 0, 0))),
            #[cfg(loom)]
            model_parkers: (0..n).map(|_| std::sync::Arc::new(wait::ModelParker::default())).collect(),
        }
    }

    /// Whether the team has more members than its pool has CPUs to run
    /// them at once (waiters that spin then take a CPU from a member).
    pub(crate) fn crowded(&self) -> bool {
        self.handle.as_ref().is_some_and(|h| h.concurrency() < self.n)
    }

    /// Waits until `done` holds, as a member of `team` (`None`: a thread
    /// outside any region): by the members' protocol (`wait::until`, woken by
    /// [`Team::wake`]) in a team of several; polling alone in a team of one
    /// (no pool handle wakes it: see `wait::until_alone`, whose report names
    /// `what`). Only detached tasks keep a team of one waiting.
    #[inline]
    pub(crate) fn wait_in(team: Option<&Team>, done: impl Fn(bool) -> bool, what: &str) {
        match team {
            Some(t) if t.n > 1 => wait::until(done),
            _ if done(false) => {}
            _ => wait::until_alone(done, what),
        }
    }

    /// Wakes every member that sleeps (after the read-modify-write that made
    /// its condition true): one load of the pool's count of sleeping waiters
    /// when none sleeps (`herd::rt::PoolHandle::wake_waiting`), not a load
    /// of every member's parker line on each worksharing construct; when
    /// some sleep, herd's wake-up cascade (each woken member wakes the
    /// sleepers of its subtree), so that no thread issues a wake-up per
    /// sleeper.
    pub(crate) fn wake_all(&self) {
        if let Some(h) = &self.handle {
            h.wake_waiting(0..self.n);
        }
        #[cfg(loom)]
        for p in self.model_parkers.iter().take(self.n) {
            p.unpark_if_sleeping();
        }
    }

    /// Wakes member `i` if it sleeps.
    #[inline]
    pub(crate) fn wake(&self, i: usize) {
        if let Some(h) = &self.handle {
            h.wake(i);
        }
        #[cfg(loom)]
        if let Some(p) = self.model_parkers.get(i) {
            p.unpark_if_sleeping();
        }
    }

    /// Member `i`'s parent in the barrier tree (`i > 0`).
    #[inline]
    pub(crate) fn tree_parent(&self, i: usize) -> usize {
        debug_assert!(i > 0);
        i / self.fanin
    }

    /// Member `i`'s children in the barrier tree.
    #[inline]
    pub(crate) fn tree_children(&self, i: usize) -> std::ops::Range<usize> {
        let first = if i == 0 { 1 } else { i * self.fanin };
        let end = if i == 0 { self.fanin } else { first.saturating_add(self.fanin) };
        first.min(self.n)..end.min(self.n)
    }

    /// Depth of member `i` in the barrier tree (the root: 0).
    #[cfg_attr(not(all(test, not(loom))), allow(dead_code))]
    pub(crate) fn tree_depth(&self, mut i: usize) -> u32 {
        let mut d = 0;
        while i > 0 {
            i = self.tree_parent(i);
            d += 1;
        }
        d
    }

    /// Wakes issued by member `i` so far: (releasing children, completing
    /// a parent's arrival, passing a drained epoch on).
    #[cfg_attr(not(all(test, not(loom))), allow(dead_code))]
    pub(crate) fn wakes_issued(&self, i: usize) -> (u64, u64, u64) {
        let o = &self.own[i];
        (
            o.wakes_release.load(Ordering::Relaxed),
            o.wakes_arrive.load(Ordering::Relaxed),
            o.wakes_drain.load(Ordering::Relaxed),
        )
    }

    // ------------------------------------------------------------ tasks --

    /// Member `num` creates a deferred task of `epoch`.
    #[inline]
    pub(crate) fn task_created(&self, num: usize, epoch: u32) {
        let p = (epoch & 1) as usize;
        let e = &self.task_epoch[p];
        if e.load(Ordering::Relaxed) != epoch {
            e.store(epoch, Ordering::Relaxed);
        }
        self.counts[num].created[p].fetch_add(1, Ordering::Relaxed);
    }

    /// Member `num` finished a deferred task of `epoch` (its very last
    /// access to the task): counts it and, if the master may sleep in the
    /// end-of-region drain, wakes it to re-check (see the module
    /// documentation: the finisher does not sum the counts itself, which
    /// would cost every task O(n) read-modify-writes of other members' lines).
    #[inline]
    pub(crate) fn task_finished(&self, num: usize, epoch: u32) {
        let p = (epoch & 1) as usize;
        self.counts[num].finished[p].fetch_add(1, Ordering::SeqCst);
        if wait::weakened("end_wake") {
            return; // weakened for the loom demonstration
        }
        if self.end_sleep.load(Ordering::SeqCst) != 0 {
            self.wake(0);
        }
    }

    /// True when every task counted in parity `p` has finished: the sum of
    /// the members' `finished`, then of their `created` (in this order; see
    /// the module documentation). `last`: read-modify-writes.
    fn sums_equal(&self, p: usize, last: bool) -> bool {
        let sum = |field: fn(&Counts) -> &[AtomicU64; 2]| {
            self.counts.iter().fold(0u64, |acc, c| acc.wrapping_add(field(c)[p].observe(last)))
        };
        // (Weakened for the loom demonstration: `created` first.)
        if wait::weakened("drain_order") {
            let cre = sum(|c| &c.created);
            return cre == sum(|c| &c.finished);
        }
        let fin = sum(|c| &c.finished);
        fin == sum(|c| &c.created)
    }

    /// True when no task of `epoch` is outstanding (from a member that
    /// passed barrier `epoch + 1`'s tree, or the master after the region).
    #[inline]
    pub(crate) fn drained(&self, epoch: u32, last: bool) -> bool {
        let p = (epoch & 1) as usize;
        self.task_epoch[p].load(Ordering::Acquire) != epoch || {
            if last {
                wait::fence(Ordering::SeqCst);
            }
            self.sums_equal(p, last)
        }
    }

    /// The master's end-of-region check (every member has returned; its
    /// final epoch is `epoch`): no task of `epoch` or `epoch - 1` is
    /// outstanding. Before sleeping (`last`) it asks finishing tasks to wake
    /// it (`end_sleep`, see the module documentation).
    pub(crate) fn region_drained(&self, epoch: u32, last: bool) -> bool {
        if last && self.end_sleep.load(Ordering::Relaxed) == 0 {
            self.end_sleep.swap(1, Ordering::SeqCst);
        }
        if self.cancelled.load(Ordering::Relaxed) != 0 {
            // Cancelled: members left at different barrier counts (a member
            // may have passed a barrier the master left early), so every
            // task counted, of either parity, must have finished.
            if last {
                wait::fence(Ordering::SeqCst);
            }
            return self.sums_equal(0, last) && self.sums_equal(1, last);
        }
        self.drained(epoch, last) && self.drained(epoch.wrapping_sub(1), last)
    }

    /// After a cancelled region (every member has returned, some from the
    /// middle of a barrier): the next region's barriers start at `epoch`,
    /// with no arrival counted and every release word at `epoch`.
    pub(crate) fn reset_barrier(&self, epoch: u32) {
        for a in self.arrive.iter() {
            a.store(0, Ordering::Relaxed);
        }
        for o in self.own.iter() {
            o.release.store(epoch, Ordering::Relaxed);
        }
        // Members may have marked epochs the next region numbers again.
        for (m, none) in self.drained_mark.iter().zip(NO_MARK) {
            m.store(none, Ordering::Relaxed);
        }
    }

    /// After the end-of-region drain: finishing tasks need not check any more.
    pub(crate) fn region_done(&self) {
        if self.end_sleep.load(Ordering::Relaxed) != 0 {
            self.end_sleep.store(0, Ordering::Relaxed);
        }
    }

    // ---------------------------------------------------------- barrier --

    /// The team barrier for member `me`, whose implicit task has passed
    /// `epoch` barriers; returns the new epoch. Runs tasks while it waits.
    pub(crate) fn barrier(&self, me: usize, epoch: u32) -> u32 {
        match self.barrier_or(me, epoch, |_| false) {
            Some(number) => number,
            None => unreachable!("a barrier that cannot stop stopped"),
        }
    }

    /// The barrier, left early (`None`) as soon as `stop(last)` holds
    /// (`last`: the check before sleeping; see `wait::until`): a cancellable
    /// barrier. A member that stops leaves the barrier's words inconsistent
    /// (arrivals counted, signals given): only a cancelled region stops, and
    /// its master resets them ([`Team::reset_barrier`]). With `|_| false`
    /// this is the plain barrier, at no cost.
    #[inline]
    pub(crate) fn barrier_or(
        &self,
        me: usize,
        epoch: u32,
        stop: impl Fn(bool) -> bool + Copy,
    ) -> Option<u32> {
        let number = epoch.wrapping_add(1);
        let passed = match self.n {
            0 | 1 => true,
            2 => self.exchange(me, number, stop),
            _ => self.tree(me, number, stop),
        };
        (passed && self.drain(me, epoch, stop)).then_some(number)
    }

    /// Two members: one dissemination round; false if stopped.
    fn exchange(&self, me: usize, number: u32, stop: impl Fn(bool) -> bool) -> bool {
        let other = 1 - me;
        // Signal by a plain store into our own flag: no stall.
        self.own[me].release.store(number, Ordering::Release);
        let theirs = &self.own[other].release;
        wait::until(|last| {
            if last {
                // About to sleep: order our signal before the re-check.
                wait::fence(Ordering::SeqCst);
            }
            reached(theirs.observe(last), number) || stop(last)
        });
        if stop(false) && !reached(theirs.load(Ordering::Acquire), number) {
            return false;
        }
        // The other may have gone to sleep before it saw our signal: wake
        // it (cheap now: the store has long left the store buffer).
        wait::fence(Ordering::SeqCst);
        bump(&self.own[me].wakes_release);
        self.wake(other);
        true
    }

    /// Three or more members: the combining tree; false if stopped.
    pub(crate) fn tree(&self, me: usize, number: u32, stop: impl Fn(bool) -> bool) -> bool {
        let kids = self.tree_children(me);
        // (Weakened for the loom demonstration: release without waiting.)
        if !kids.is_empty() && !wait::weakened("release_early") {
            let want = kids.len() as u32;
            let arrive = &self.arrive[me];
            wait::until(|last| arrive.observe(last) == want || stop(last));
            if stop(false) && arrive.load(Ordering::Acquire) != want {
                return false;
            }
            // Children add for the next barrier only after our release.
            arrive.store(0, Ordering::Relaxed);
            if me == 0 {
                self.mark_if_drained(number);
            }
        }
        if me > 0 {
            let p = self.tree_parent(me);
            let want = self.tree_children(p).len() as u32;
            if self.arrive[p].fetch_add(1, Ordering::SeqCst) + 1 == want {
                bump(&self.own[me].wakes_arrive);
                self.wake(p);
            }
            let rel = &self.own[p].release;
            // (Weakened for the loom demonstration: a plain load before sleeping.)
            let rmw = !wait::weakened("sleeper_load");
            wait::until(|last| reached(rel.observe(last && rmw), number) || stop(last));
            if stop(false) && !reached(rel.load(Ordering::Acquire), number) {
                return false;
            }
        }
        if !kids.is_empty() {
            // A read-modify-write (herd's `unpark_if_sleeping` rule): a
            // child whose re-check came first is read from, so its sleep
            // announcement happens before our load of its parker.
            // (Weakened for the loom demonstration: a plain store.)
            if wait::weakened("release_store") {
                self.own[me].release.store(number, Ordering::SeqCst);
            } else {
                self.own[me].release.swap(number, Ordering::SeqCst);
            }
            for c in kids {
                bump(&self.own[me].wakes_release);
                self.wake(c);
            }
        }
        true
    }

    /// Waits (running tasks) until no task of `epoch` is outstanding, then
    /// passes that on to the tree neighbours that sleep.
    /// False if stopped first.
    pub(crate) fn drain(&self, me: usize, epoch: u32, stop: impl Fn(bool) -> bool) -> bool {
        let p = (epoch & 1) as usize;
        if self.task_epoch[p].load(Ordering::Relaxed) != epoch
            || (self.marks() && self.drained_mark[p].load(Ordering::Acquire) == epoch)
        {
            // No task of this epoch was ever created (every member sees the
            // same: the creations happened before the barrier), or the root
            // found the epoch drained before it released the barrier (every
            // member sees that too: nobody waits in this drain, and no
            // neighbour needs a wake). A drainer's mark does not end the
            // drain here: a neighbour may sleep in it, waiting for our wake.
            return true;
        }
        // (Weakened for the loom demonstration: a drainer's mark ends the
        // drain at entry too, without the wakes.)
        if wait::weakened("drain_entry_mark") && self.drained_mark[2 + p].load(Ordering::Acquire) == epoch {
            return true;
        }
        let tick = Cell::new(me as u32);
        Team::wait_in(
            Some(self),
            |last| self.drain_check(me, epoch, last, &tick) || stop(last),
            "its detached tasks at a barrier",
        );
        if stop(false) && !self.drained(epoch, false) {
            return false;
        }
        wait::fence(Ordering::SeqCst);
        let o = &self.own[me];
        if me > 0 {
            bump(&o.wakes_drain);
            self.wake(self.tree_parent(me));
        }
        for c in self.tree_children(me) {
            bump(&o.wakes_drain);
            self.wake(c);
        }
        true
    }

    /// One check of member `me`'s drain of `epoch` (`tick`: its count of
    /// checks, started at `me`): the drained mark, then — on every
    /// `drain_every`-th spinning check, and on the check before sleeping,
    /// with read-modify-writes — the sums; marks the epoch drained when
    /// they say so. With every member summing on every spin, `n` drainers
    /// would read `2n` lines each per spin, lines the finishers write:
    /// `O(n²)` transfers per spin round; staggered, about [`DRAIN_SUMMERS`]
    /// members sum per round and the others read one line written once.
    fn drain_check(&self, me: usize, epoch: u32, last: bool, tick: &Cell<u32>) -> bool {
        if !self.marks() {
            return self.drained(epoch, last);
        }
        let mark = &self.drained_mark[2 + (epoch & 1) as usize];
        // The mark implies drained (stable: no task of the epoch is left to
        // create another), so a plain load may end even the check before
        // sleeping; only "not drained" must come from read-modify-writes.
        if mark.load(Ordering::Acquire) == epoch {
            return true;
        }
        // (Weakened for the loom demonstration: the check before sleeping
        // reads only the mark.)
        if last && wait::weakened("drain_last_mark_only") {
            return false;
        }
        if !last {
            let o = &self.own[me];
            bump(&o.drain_checks);
            let t = tick.get().wrapping_add(1);
            tick.set(t);
            if !t.is_multiple_of(self.drain_every) {
                return false;
            }
            bump(&o.drain_sums);
        }
        let drained = self.drained(epoch, last);
        if drained && mark.load(Ordering::Relaxed) != epoch {
            mark.store(epoch, Ordering::Release);
        }
        drained
    }

    /// The root, every member arrived at barrier `number`: marks the epoch
    /// before it drained if no task of it is outstanding (the members then
    /// skip their drains: one sum per barrier instead of one per member).
    /// Stable: every member's creations outside tasks came before its
    /// arrival, and no task of the epoch is left to create another. The
    /// root's release orders the mark before every member's drain.
    fn mark_if_drained(&self, number: u32) {
        if !self.marks() {
            return;
        }
        let epoch = number.wrapping_sub(1);
        let p = (epoch & 1) as usize;
        if self.task_epoch[p].load(Ordering::Relaxed) == epoch && self.sums_equal(p, false) {
            bump(&self.own[0].drain_sums);
            self.drained_mark[p].store(epoch, Ordering::Relaxed);
        }
    }

    /// Whether the drains use the drained mark: in teams of more than
    /// [`DRAIN_SUMMERS`]. In smaller ones every check sums (`2n ≤ 16`
    /// counters), and the mark would only add a line that moves between the
    /// members' caches once per barrier: EPCC `task-barrier`, 2 threads, 7
    /// alternating rounds, 0.81–0.87 µs without, 0.90–1.08 µs with.
    #[inline]
    fn marks(&self) -> bool {
        self.drain_every > 1
    }

    /// Member `i`'s spinning drain checks so far, and how many of them (and
    /// of its checks as the root at the release) summed the counts.
    #[cfg_attr(not(all(test, not(loom))), allow(dead_code))]
    pub(crate) fn drain_checks(&self, i: usize) -> (u64, u64) {
        let o = &self.own[i];
        (o.drain_checks.load(Ordering::Relaxed), o.drain_sums.load(Ordering::Relaxed))
    }

    /// Loom models: sum on every `k`-th spinning check (so that the mark
    /// is exercised in a small team).
    #[cfg(all(test, loom))]
    pub(crate) fn with_drain_every(mut self, k: u32) -> Team {
        self.drain_every = k.max(1);
        self
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// ceil(log_b(n)) for n >= 1.
    fn ceil_log(n: usize, b: usize) -> u32 {
        let (mut k, mut p) = (0, 1usize);
        while p < n {
            p *= b;
            k += 1;
        }
        k
    }

    #[test]
    fn tree_shape() {
        for n in 3..=300 {
            let t = Team::new(n, None);
            let mut parent_of = vec![None; n];
            for p in 0..n {
                let kids = t.tree_children(p);
                assert!(kids.len() <= FANIN, "n {n}: member {p} has {} children", kids.len());
                for c in kids {
                    assert!(parent_of[c].replace(p).is_none());
                    assert_eq!(t.tree_parent(c), p);
                }
            }
            assert!(parent_of[0].is_none() && parent_of[1..].iter().all(Option::is_some), "n {n}");
            let depth = (0..n).map(|i| t.tree_depth(i)).max().unwrap();
            assert!(depth <= ceil_log(n, FANIN), "n {n}: depth {depth}");
        }
    }

    /// Every member of `team` (all of `pool`) passes `barriers` barriers.
    fn run_barriers(pool: &herd::Pool, team: &Team, barriers: u64) {
        herd::rt::broadcast_n(
            pool,
            team.n,
            |ctx| {
                let mut epoch = 0;
                for _ in 0..barriers {
                    epoch = team.barrier(ctx.index(), epoch);
                }
            },
            &|_| true,
        );
    }

    /// A pool on the synthetic 64-PU `pack:4 l3:1 core:16 pu:1`, and a team
    /// of all its participants.
    fn team_of_64() -> (herd::Pool, Team) {
        let topo = herd::Topology::synthetic("pack:4 l3:1 core:16 pu:1").unwrap();
        let pool = herd::Pool::builder().topology(topo).build().unwrap();
        assert_eq!(pool.num_threads(), 64);
        let team = Team::new(64, Some(PoolHandle::of(&pool)));
        (pool, team)
    }

    /// A synthetic 64-thread team (`pack:4 l3:1 core:16 pu:1`) runs 50
    /// barriers: every member issues at most `FANIN` wakes per barrier to
    /// release its children (exactly one per child) and at most one to
    /// complete its parent's arrival; the release depth is at most
    /// `ceil(log_FANIN 64)` = 3.
    #[test]
    fn wakes_per_member_on_64_threads() {
        let (pool, team) = team_of_64();
        let n = team.n;
        const BARRIERS: u64 = 50;
        run_barriers(&pool, &team, BARRIERS);
        for i in 0..n {
            let (release, arrive, drain) = team.wakes_issued(i);
            let kids = team.tree_children(i).len() as u64;
            assert!(kids <= FANIN as u64);
            assert_eq!(release, kids * BARRIERS, "member {i}: release wakes");
            assert!(arrive <= BARRIERS, "member {i}: {arrive} arrival wakes in {BARRIERS} barriers");
            assert_eq!(drain, 0, "no tasks, no drain wakes");
            assert!(team.tree_depth(i) <= ceil_log(n, FANIN));
        }
        assert_eq!(ceil_log(n, FANIN), 3);
        assert_eq!((0..n).map(|i| team.tree_depth(i)).max(), Some(3));
    }

    /// 64 members, 50 barriers, every member creating and finishing a
    /// task of each epoch before the barrier: the root finds each epoch
    /// drained before it releases, so nobody drains — one sum of the
    /// counts per barrier, no drain wakes. (Each member used to sum the
    /// `2n` counts and wake its neighbours: 64 sums and 126 wakes a barrier.)
    #[test]
    fn tasks_done_before_the_barrier_cost_one_sum() {
        let (pool, team) = team_of_64();
        let n = team.n;
        const BARRIERS: u32 = 50;
        herd::rt::broadcast_n(
            &pool,
            n,
            |ctx| {
                let me = ctx.index();
                let mut epoch = 0;
                for _ in 0..BARRIERS {
                    team.task_created(me, epoch);
                    team.task_finished(me, epoch);
                    epoch = team.barrier(me, epoch);
                }
            },
            &|_| true,
        );
        for i in 0..n {
            assert_eq!(team.wakes_issued(i).2, 0, "member {i}: drain wakes");
            let (checks, sums) = team.drain_checks(i);
            assert_eq!(checks, 0, "member {i} drained");
            assert_eq!(sums, if i == 0 { u64::from(BARRIERS) } else { 0 }, "member {i}: sums");
        }
    }

    /// A task that the last member defers before each barrier.
    struct Held<'a> {
        team: &'a Team,
        epoch: u32,
        done: std::sync::atomic::AtomicBool,
        /// It started before the root released the barrier.
        early: std::sync::atomic::AtomicBool,
    }

    /// Runs a [`Held`] task on the participant that took it: first waits
    /// until the root has released the barrier (so that the root's check
    /// finds it outstanding and the members drain) — for at most 200 ms,
    /// since a member that has not arrived may be the one running it — then
    /// runs 2 ms.
    unsafe fn run_held(data: *const ()) {
        // SAFETY: `data` is a `Held` the test keeps, with its team, until
        // every member has passed the barrier that waits for this finish.
        let h = unsafe { &*(data as *const Held<'_>) };
        let start = std::time::Instant::now();
        while !reached(h.team.own[0].release.load(Ordering::Acquire), h.epoch + 1) {
            if start.elapsed() > std::time::Duration::from_millis(200) {
                h.early.store(true, Ordering::Relaxed);
                break;
            }
            std::thread::yield_now();
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
        h.done.store(true, Ordering::Relaxed);
        let me = herd::current_thread_index().expect("a job runs on a participant");
        h.team.task_finished(me, h.epoch);
    }

    /// 64 members drain an epoch whose one task (a leaf's) runs 2 ms after
    /// the release, 5 times: nobody leaves before the task finished, and
    /// each member summed the counts on at most one in `⌈64 /
    /// DRAIN_SUMMERS⌉` = 8 of its spinning checks (plus one per drain for
    /// the stagger, and the root's check at the release), reading the
    /// drained mark on the others. (Every check used to sum: 128 lines per
    /// spin per member.)
    #[test]
    fn drainers_sum_on_a_share_of_their_checks() {
        let (pool, team) = team_of_64();
        let n = team.n;
        let every = n.div_ceil(DRAIN_SUMMERS) as u64;
        assert_eq!(every, 8);
        const ROUNDS: usize = 5;
        let helds: Vec<Held<'_>> = (0..ROUNDS)
            .map(|r| Held { team: &team, epoch: r as u32, done: false.into(), early: false.into() })
            .collect();
        let helds = &helds;
        herd::rt::broadcast_n(
            &pool,
            n,
            |ctx| {
                let me = ctx.index();
                let mut epoch = 0;
                for h in helds {
                    // A leaf's task: the leaf takes it back once it arrived.
                    if me == n - 1 {
                        team.task_created(me, epoch);
                        // SAFETY: `h` and the team outlive the barrier below,
                        // which no member passes before the job finished.
                        assert!(unsafe { herd::rt::push(h as *const Held<'_> as *const (), run_held) });
                    }
                    epoch = team.barrier(me, epoch);
                    assert!(h.done.load(Ordering::Relaxed), "member {me} left the drain early");
                }
            },
            &|_| true,
        );
        let mut all_checks = 0;
        for i in 0..n {
            let (checks, sums) = team.drain_checks(i);
            let root = if i == 0 { ROUNDS as u64 } else { 0 };
            assert!(
                sums <= checks / every + ROUNDS as u64 + root,
                "member {i}: {sums} sums in {checks} checks"
            );
            all_checks += checks;
        }
        let drained = helds.iter().filter(|h| !h.early.load(Ordering::Relaxed)).count();
        assert!(drained > 0, "every task ran before its barrier's release");
        assert!(all_checks >= (n * drained) as u64, "{all_checks} checks in {drained} drains of {n} members");
    }

    #[test]
    fn the_tree_widens_with_members_per_cpu() {
        assert_eq!(barrier_fanin(64, 64), FANIN);
        assert_eq!(barrier_fanin(3, 3), FANIN);
        assert_eq!(barrier_fanin(4, 2), 2 * FANIN);
        assert_eq!(barrier_fanin(16, 2), 8 * FANIN);
        assert_eq!(barrier_fanin(256, 128), 2 * FANIN);
        assert_eq!(barrier_fanin(5, 0), 5 * FANIN);
    }

    /// 16 members on a synthetic 2-PU machine: the pool is oversubscribed
    /// 8×, so the tree is flat (every member a child of the root), and 50
    /// barriers complete with the root issuing every release wake.
    #[test]
    fn an_oversubscribed_team_gets_a_flat_tree() {
        let topo = herd::Topology::synthetic("core:2 pu:1").unwrap();
        let pool = herd::Pool::builder().topology(topo).num_threads(16).build().unwrap();
        assert!(pool.info().oversubscribed);
        let handle = PoolHandle::of(&pool);
        assert_eq!(handle.concurrency(), 2);
        let n = 16;
        let team = Team::new(n, Some(handle));
        assert_eq!(team.fanin, 8 * FANIN);
        assert!((1..n).all(|i| team.tree_depth(i) == 1));
        const BARRIERS: u64 = 50;
        run_barriers(&pool, &team, BARRIERS);
        assert_eq!(team.wakes_issued(0).0, (n as u64 - 1) * BARRIERS);
        assert!((1..n).all(|i| team.wakes_issued(i).0 == 0));
    }
}
