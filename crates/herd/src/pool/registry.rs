//! The registry: the shared state of one pool — participant slots and their
//! ports, the scheduler, the shepherds, the throttling limits — and the
//! small operations on it. The roles that act on it live beside it:
//! `worker.rs` (the persistent threads and which slot a thread occupies),
//! `idle.rs` (waiting, finding work, waking for work), `master.rs` (taking
//! the master role), `region.rs` (fork-join regions).
//!
//! **Slots.** A region of `n` participants has slots `0..n`; slot 0 is the
//! master's. A thread *occupies* a slot while it acts as that participant; only
//! the occupant touches the slot's deque and sleeps on its parker. Persistent
//! workers occupy slots `1..n` for their whole life; a thread from outside
//! occupies slot 0 while it holds the master lock; under launch-and-join
//! dispatch the region's fresh threads occupy slots `1..n` (and slot 0 for the
//! non-master-last variants, while the master only waits), and under
//! non-master-last persistent dispatch a persistent *proxy* thread occupies
//! slot 0 for the region while the master waits on its own parker.

use super::lazy::LazyJoins;
use super::port::Port;
use super::refused::RefusedQueues;
use super::tree::WakeTree;
use crate::config::Sched;
use crate::config::{Dispatch, WaitPolicy};
use crate::placement::Placement;
use crate::sched::{AllCounters, JobRef, Pending, Queues, Scheduler};
use crate::shepherds::Shepherds;
use crate::sync::{Cascade, Parked, Parker, Sleepers};
use crate::topology::Topology;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

/// Shared state of a pool; see the module documentation.
pub(crate) struct Registry {
    pub(crate) id: usize,
    pub(crate) topology: Topology,
    pub(crate) placement: Placement,
    pub(crate) dispatch: Dispatch,
    /// `None`: never sleep; `Some(d)`: spin for `d`, then sleep.
    pub(crate) spin: Option<Duration>,
    pub(crate) sched: Queues,
    /// Per slot, its jobs still queued: `join`'s lazy-splitting test.
    pub(crate) pending: Arc<Pending>,
    /// Per slot, the `join` continuations not yet exposed (`lazy.rs`).
    lazy: Box<[CachePadded<LazyJoins>]>,
    /// The locality domains (`HERD_SHEPHERD`).
    pub(crate) shepherds: Shepherds,
    /// Per-slot scheduling counters.
    pub(crate) counters: AllCounters,
    /// Per shepherd, the most workers that take jobs (`HERD_THROTTLE`): the
    /// member of rank `r` takes jobs only while `r < limit` (rank 0, which
    /// holds the master in shepherd 0, always does). Read at every job
    /// boundary of the idle loop; see [`Registry::set_active_limit`].
    pub(crate) limits: Box<[CachePadded<AtomicUsize>]>,
    /// One port per participant slot (slot 0's parker is the master's).
    pub(crate) slots: Box<[CachePadded<Port>]>,
    /// The proxy that runs share 0 under PW/PWA.
    pub(crate) proxy: CachePadded<Port>,
    /// The master sleeps here while it only waits (non-master-last dispatch).
    pub(crate) master_parker: CachePadded<Parker>,
    /// Taken by a thread entering as master; padded: it is written per call.
    pub(crate) master_lock: CachePadded<Mutex<()>>,
    /// A region is running. Written only by the master; on its own line so
    /// that the master's writes never disturb lines that workers spin on.
    pub(crate) region_active: CachePadded<AtomicBool>,
    /// Number of the next post (16 bits used), advanced by the master per
    /// region; see [`Port`].
    posts: CachePadded<AtomicU64>,
    pub(crate) sleepers: Sleepers,
    /// Participants asleep in [`crate::rt::wait_until`] (`sync/parked.rs`):
    /// a runtime waking every member that may wait on a word it changed
    /// loads this first ([`crate::rt::PoolHandle::wake_waiting`]).
    pub(crate) parked_waiters: Parked,
    /// Hand-off words of the wake-up cascade of
    /// [`crate::rt::PoolHandle::wake_waiting`] (`sync/cascade.rs`), taken by
    /// each participant after each park.
    pub(crate) cascade: Cascade,
    /// Per slot, the jobs its occupant took while it could run only some
    /// jobs (`admit.rs`) and refused: pushed by that occupant (and on the
    /// master's, a job handed back by `find_work`), taken by
    /// anyone; with a per-group summary of where they are (`refused.rs`).
    pub(crate) refused: RefusedQueues<JobRef>,
    /// Participants allowed to take jobs: slots `0..team`. A region of fewer
    /// participants than the pool (`rt::broadcast_n`) lowers it for its
    /// duration, so that workers outside the region neither steal its jobs
    /// nor are woken for them.
    pub(crate) team: AtomicUsize,
    /// Entering as master leaves the thread's binding alone.
    pub(crate) keep_master_binding: bool,
    /// Print the per-worker counters when the pool ends
    /// (`HERD_DISPLAY_ENV=verbose`).
    pub(crate) report_stats: bool,
    pub(crate) threads: Mutex<Vec<JoinHandle<()>>>,
    /// The region wake tree of each region size (index `n`), built on first use.
    trees: Box<[OnceLock<WakeTree>]>,
}

static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

impl Registry {
    pub(crate) fn new(
        topology: Topology,
        placement: Placement,
        dispatch: Dispatch,
        wait: WaitPolicy,
        sched: Sched,
        shepherds: Shepherds,
        steal_chunk: Option<usize>,
    ) -> Registry {
        let n = placement.num_threads;
        let pending = Arc::new(Pending::new(n));
        let spin = if placement.oversubscribed {
            Some(Duration::ZERO)
        } else {
            match wait {
                WaitPolicy::Active => None,
                WaitPolicy::Passive => Some(Duration::ZERO),
                WaitPolicy::Spin(d) => Some(d),
            }
        };
        let refused = RefusedQueues::new(n, &shepherds.members);
        Registry {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            topology,
            dispatch,
            spin,
            sched: Queues::new(sched, &shepherds, steal_chunk, &pending),
            pending,
            lazy: (0..n).map(|_| CachePadded::new(LazyJoins::default())).collect(),
            counters: AllCounters::new(n),
            limits: shepherds.members.iter().map(|m| CachePadded::new(AtomicUsize::new(m.len()))).collect(),
            shepherds,
            slots: (0..n).map(|_| CachePadded::new(Port::default())).collect(),
            proxy: CachePadded::new(Port::default()),
            master_parker: CachePadded::new(Parker::new()),
            master_lock: CachePadded::new(Mutex::new(())),
            region_active: CachePadded::new(AtomicBool::new(false)),
            posts: CachePadded::new(AtomicU64::new(1)),
            sleepers: Sleepers::new(n),
            parked_waiters: Parked::new(),
            cascade: Cascade::new(n),
            refused,
            team: AtomicUsize::new(n),
            keep_master_binding: false,
            report_stats: false,
            threads: Mutex::new(Vec::new()),
            trees: (0..=n).map(|_| OnceLock::new()).collect(),
            placement,
        }
    }

    /// The wake tree of a region of the first `n` participants (see `tree.rs`).
    #[inline]
    pub(crate) fn tree(&self, n: usize) -> &WakeTree {
        self.trees[n].get_or_init(|| {
            let pus = self.topology.pus().len().max(1);
            let master = self.placement.pu_of(0);
            WakeTree::new(n, |s| (self.placement.pu_of(s) + pus - master) % pus)
        })
    }

    /// `None`: never sleep; `Some(d)`: spin for `d`, then sleep.
    pub(crate) fn spin(&self) -> Option<Duration> {
        self.spin
    }

    #[inline]
    pub(crate) fn num_threads(&self) -> usize {
        self.slots.len()
    }

    /// Where the master waits for a region's shares: its slot's parker when it
    /// takes part (master last), else its own.
    #[inline]
    pub(crate) fn region_waiter(&self) -> &Parker {
        if self.dispatch.master_last() {
            self.parker(0)
        } else {
            &self.master_parker
        }
    }

    /// The parker the occupant of `slot` sleeps on.
    #[inline]
    pub(crate) fn parker(&self, slot: usize) -> &Parker {
        &self.slots[slot].parker
    }

    /// The `join` continuations of the occupant of `slot` (only it may call).
    #[inline]
    pub(crate) fn lazy(&self, slot: usize) -> &LazyJoins {
        &self.lazy[slot]
    }

    /// Which scheduler this pool runs.
    pub(crate) fn sched_kind(&self) -> Sched {
        self.sched.kind()
    }

    /// True when the occupant of `slot` is throttled: its rank in its
    /// shepherd is at or above the shepherd's active limit.
    #[inline]
    pub(crate) fn throttled(&self, slot: usize) -> bool {
        self.shepherds.rank[slot] >= self.limits[self.shepherds.of[slot]].load(Ordering::Relaxed)
    }

    /// The active-worker limit of shepherd `h`.
    pub(crate) fn active_limit(&self, h: usize) -> usize {
        self.limits[h].load(Ordering::Relaxed)
    }

    /// Sets the most workers of shepherd `h` that take jobs (clamped to
    /// `1..=members`). Lowering it takes effect at each worker's next job
    /// boundary (a running job is never pre-empted); raising it wakes the
    /// workers it re-activates.
    ///
    /// Protocol: a throttled worker does not announce itself to pushers (so
    /// no wake-up for work is spent on it); before sleeping it re-reads the
    /// limit with a read-modify-write after announcing `SLEEPING` on its
    /// parker, and this `swap` is followed by `unpark_if_sleeping` on each
    /// re-activated worker — the parker's no-lost-wake-up rule.
    pub(crate) fn set_active_limit(&self, h: usize, n: usize) {
        let members = &self.shepherds.members[h];
        let n = n.clamp(1, members.len());
        let old = self.limits[h].swap(n, Ordering::SeqCst);
        if n > old {
            for &slot in &members[old..n] {
                self.parker(slot).unpark_if_sleeping();
            }
        }
    }

    /// previous limit. Called by the master around a smaller region.
    pub(crate) fn set_team(&self, n: usize) -> usize {
        self.sched.set_team(n);
        self.team.swap(n, Ordering::Relaxed)
    }

    /// Starts a new post (once per region, by the master): its number.
    #[inline]
    pub(crate) fn next_post(&self) -> u64 {
        // Only the master (under the master lock) or the dropping pool posts.
        let n = self.posts.load(Ordering::Relaxed);
        self.posts.store(n.wrapping_add(1), Ordering::Relaxed);
        n & 0xffff
    }
}
