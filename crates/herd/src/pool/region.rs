//! Fork-join regions: `broadcast` runs a closure once on every participant,
//! dispatched by one of the six strategies of the ATLAS thread-management
//! paper ([`Dispatch`]).
//!
//! Protocol (master-last persistent workers, the default): the master builds a
//! [`Region`] on its stack and posts its address with a fresh post number down
//! the region's wake tree (`tree.rs`): to its own ⌈log₂ n⌉ children, most
//! distant subtree first, each of which forwards the post to its children
//! before running its share (`port.rs`, `worker.rs`). The master runs share 0
//! itself, then waits until its children acknowledge that post number —
//! running stolen jobs while it waits. A participant acknowledges (a `SeqCst`
//! swap into its port, its very last access to the region) only after its own
//! children have, and wakes its parent only if the parent announced that it
//! sleeps. Each port line is touched by one parent and one child. A panic in
//! any share is caught, the first one kept, and re-raised on the master after
//! every share has finished, so the pool stays usable.
//!
//! Launch-and-join strategies create (and join) fresh threads for the region
//! instead; non-master-last strategies run share 0 on another thread (a fresh
//! one, or the persistent proxy) bound to the master's place, while the master
//! only waits.

use super::registry::Registry;
use super::worker::Occupancy;
use crate::config::Dispatch;
use crate::trace;
use std::any::Any;
use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a participant knows about the region it runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BroadcastContext {
    index: usize,
    num_threads: usize,
}

impl BroadcastContext {
    /// This participant's index, `0..num_threads()`; 0 is the master.
    #[inline]
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of participants in the region.
    #[inline]
    pub fn num_threads(&self) -> usize {
        self.num_threads
    }

    /// The half-open block `[start, end)` of `0..len` that a static block
    /// partition gives this participant.
    #[inline]
    pub fn block(&self, len: usize) -> std::ops::Range<usize> {
        block(len, self.index, self.num_threads)
    }
}

/// Participant `i`'s block of a static partition of `0..len` among `n`
/// (`crate::partition::block` on `usize`).
#[inline]
pub(crate) fn block(len: usize, i: usize, n: usize) -> std::ops::Range<usize> {
    let b = crate::partition::block(len as u64, i as u64, n as u64);
    b.start as usize..b.end as usize
}

/// Times of one region, for the ATLAS paper's measures (see [`crate::measure`]).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct RegionTiming {
    /// Full parallel time: from the master starting the dispatch to the last
    /// share being known complete.
    pub fpt: Duration,
    /// Per-core time of each participant: the time spent inside its share.
    pub pct: Vec<Duration>,
}

/// What every participant needs to run its share: copied into each worker's
/// port by the post, so that a worker reads a single cache line.
#[derive(Clone, Copy)]
pub(crate) struct Share {
    pub(crate) func: unsafe fn(*const (), BroadcastContext),
    pub(crate) data: *const (),
    pub(crate) size: usize,
    pub(crate) timed: bool,
}

/// A region in flight; lives on the master's stack.
pub(crate) struct Region {
    pub(crate) share: Share,
    /// Nanoseconds inside each share, when timing.
    pct: Option<Box<[AtomicU64]>>,
    panic: Mutex<Panicked>,
}

/// The panics of a region's shares: the first payload, and which shares
/// panicked (their result slots were never written).
#[derive(Default)]
struct Panicked {
    first: Option<Box<dyn Any + Send>>,
    shares: Vec<usize>,
}

impl Region {
    /// Runs share `index` on the calling thread, which occupies slot `index`.
    /// Completion is signalled by the caller (a port acknowledgement, or the
    /// end of a launch-and-join thread).
    pub(crate) fn run_share(r: &Region, index: usize) {
        // SAFETY: `r` is a live region and `r.share` its own header.
        unsafe { Region::run(r.share, r, index) }
    }

    /// Runs share `index` of the region at `region` whose header is `share`;
    /// reads `*region` only when timing or after a panic.
    ///
    /// # Safety
    /// `region` is live and `share` is its header.
    pub(crate) unsafe fn run(share: Share, region: *const Region, index: usize) {
        if trace::enabled() {
            trace::begin(trace::Kind::Share, index as u64);
        }
        let ctx = BroadcastContext { index, num_threads: share.size };
        let start = share.timed.then(Instant::now);
        // SAFETY: `func` and `data` were built together by `broadcast` from a
        // `Fn + Sync` closure that outlives the region.
        let result = panic::catch_unwind(AssertUnwindSafe(|| unsafe { (share.func)(share.data, ctx) }));
        // The region itself (a line of the master's stack) is touched only
        // when timing or after a panic.
        if let Some(start) = start {
            // SAFETY: the caller's contract: the region is live.
            if let Some(pct) = unsafe { &(*region).pct } {
                pct[index].store(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
            }
        }
        if let Err(p) = result {
            // SAFETY: as above.
            let mut panicked = unsafe { &(*region).panic }.lock().unwrap_or_else(|e| e.into_inner());
            panicked.first.get_or_insert(p);
            panicked.shares.push(index);
        }
        if trace::enabled() {
            trace::end(trace::Kind::Share, index as u64);
        }
    }
}

/// A broadcast's closure and result slots, on their own cache lines.
#[repr(C, align(128))]
struct Job<F, R> {
    f: F,
    results: Results<R>,
}

impl<F: Fn(BroadcastContext) -> R + Sync, R: Send> Job<F, R> {
    /// The type-erased share function: runs `f` and stores its result.
    ///
    /// # Safety
    /// `data` points to a live `Job<F, R>`; each index runs once.
    unsafe fn run(data: *const (), ctx: BroadcastContext) {
        // SAFETY: the caller's contract.
        let job = unsafe { &*(data as *const Job<F, R>) };
        let r = (job.f)(ctx);
        debug_assert!(ctx.index < job.results.0.len());
        // SAFETY: see `Results`; `ctx.index < size == results.len()`. Unchecked
        // so that a share returning `()` reads nothing from the master's stack.
        unsafe { (*job.results.0.get_unchecked(ctx.index).0.get()).write(r) };
    }
}

/// Per-participant result slots of a broadcast.
///
/// `MaybeUninit`, not `Option`: for `R = ()` the slots are zero-sized, so an
/// empty region allocates nothing and no participant writes to shared memory.
/// A slot is initialised exactly when its share returned without panicking.
/// Each slot has its own cache lines, so participants writing their results
/// never contend (a zero-sized result still takes no memory: a zero-sized
/// type stays zero-sized at any alignment).
struct Results<R>(Box<[ResultSlot<R>]>);

#[repr(align(128))]
struct ResultSlot<R>(UnsafeCell<MaybeUninit<R>>);
// SAFETY: participant `i` writes only slot `i`, and the master reads them all
// only after every port's acknowledgement (a `SeqCst` swap, read with
// `Acquire`) has shown that all shares returned.
unsafe impl<R: Send> Sync for Results<R> {}

impl Registry {
    /// Runs `f` once on each participant and returns the results by index.
    /// The caller must occupy slot 0 (the master). If a region is already
    /// running, the call is a nested region and runs serialized on the caller
    /// (one participant), as OpenMP does beyond its active-levels limit.
    pub(crate) fn broadcast<F, R>(&self, f: F, timed: bool) -> (Vec<R>, Option<RegionTiming>)
    where
        F: Fn(BroadcastContext) -> R + Sync,
        R: Send,
    {
        self.broadcast_n(self.num_threads(), f, timed, None)
    }

    /// [`Registry::broadcast`] with the first `n` participants only
    /// (`1 <= n <= num_threads`); the others take no part and, for the
    /// region's duration, take none of its jobs. With a `drain` condition,
    /// after every share has been acknowledged the master also waits
    /// (running jobs) until it holds — for jobs the shares left behind; same
    /// contract as [`Registry::wait_until`]'s condition.
    pub(crate) fn broadcast_n<F, R>(
        &self,
        n: usize,
        f: F,
        timed: bool,
        drain: Option<&dyn Fn(bool) -> bool>,
    ) -> (Vec<R>, Option<RegionTiming>)
    where
        F: Fn(BroadcastContext) -> R + Sync,
        R: Send,
    {
        debug_assert!(n >= 1 && n <= self.num_threads());
        if n <= 1 || !self.is_master() || self.region_active.swap(true, Ordering::Acquire) {
            let start = Instant::now();
            let r = f(BroadcastContext { index: 0, num_threads: 1 });
            if let Some(drain) = drain {
                super::idle::wait_current(drain);
            }
            let t = start.elapsed();
            let timing = timed.then(|| RegionTiming { fpt: t, pct: vec![t] });
            return (vec![r], timing);
        }
        // What the shares read — the closure and the result slots — sits alone
        // on its cache lines, so that the master's own stack traffic (its
        // share, its wait loop) never invalidates a line the workers read.
        let job = Job {
            f,
            results: Results::<R>(
                (0..n).map(|_| ResultSlot(UnsafeCell::new(MaybeUninit::uninit()))).collect(),
            ),
        };
        let share =
            Share { func: Job::<F, R>::run, data: &job as *const Job<F, R> as *const (), size: n, timed };
        let (fpt, panicked, pct) = self.run_region(share, drain);
        if let Some(p) = panicked.first {
            for (i, slot) in job.results.0.iter().enumerate() {
                if !panicked.shares.contains(&i) {
                    // SAFETY: share `i` returned, so its slot was written; it
                    // is dropped once, here.
                    unsafe { (*slot.0.get()).assume_init_drop() };
                }
            }
            panic::resume_unwind(p);
        }
        let timing = pct.map(|pct| RegionTiming { fpt, pct });
        let out = job
            .results
            .0
            .into_vec()
            .into_iter()
            // SAFETY: no share panicked, so every slot was written.
            .map(|c| unsafe { c.0.into_inner().assume_init() })
            .collect();
        (out, timing)
    }

    /// Runs a region of `share.size` participants (the caller is the master,
    /// `share.size >= 2`, no region active): posts, runs share 0, waits for
    /// the acknowledgements and then for `drain`. Returns the full parallel
    /// time, the shares' panics and, when timing, each share's time.
    fn run_region(
        &self,
        share: Share,
        drain: Option<&dyn Fn(bool) -> bool>,
    ) -> (Duration, Panicked, Option<Vec<Duration>>) {
        let (n, timed) = (share.size, share.timed);
        struct Active<'a>(&'a Registry);
        impl Drop for Active<'_> {
            fn drop(&mut self) {
                self.0.region_active.store(false, Ordering::Release);
            }
        }
        let _active = Active(self);
        struct Team<'a>(&'a Registry, usize);
        impl Drop for Team<'_> {
            fn drop(&mut self) {
                self.0.set_team(self.1);
            }
        }
        let _team = (n < self.num_threads()).then(|| Team(self, self.set_team(n)));

        let master_last = self.dispatch.master_last();
        let region = Region {
            share,
            pct: timed.then(|| (0..n).map(|_| AtomicU64::new(0)).collect()),
            panic: Mutex::new(Panicked::default()),
        };

        if trace::enabled() {
            trace::begin(trace::Kind::Region, n as u64);
        }
        let start = timed.then(Instant::now);
        match self.dispatch {
            Dispatch::Pwaml => {
                // Down the wake tree: the master posts to its children only
                // (most distant subtree first); each forwards to its own.
                let number = self.next_post();
                let tree = self.tree(n);
                self.post_children(tree, 0, number, share, &region);
                Region::run_share(&region, 0);
                self.wait_until(Some(0), self.region_waiter(), |last| {
                    tree.children(0).all(|c| self.slots[c].acked(number, last))
                        && drain.is_none_or(|d| d(last))
                });
            }
            Dispatch::Pw | Dispatch::Pwa => {
                let number = self.next_post();
                self.proxy.post(number, &region);
                for w in 1..n {
                    self.slots[w].post(number, &region);
                }
                // The master only waits, asleep, as in the paper's PW.
                self.wait_with(None, self.region_waiter(), Some(Duration::ZERO), |last| {
                    self.proxy.acked(number, last) && (1..n).all(|w| self.slots[w].acked(number, last))
                });
            }
            Dispatch::Lj | Dispatch::Lja | Dispatch::Ljaml => {
                self.launch_and_join(&region, master_last);
            }
        }
        if let Some(drain) = drain.filter(|_| !matches!(self.dispatch, Dispatch::Pwaml)) {
            self.wait_until(Some(0), self.parker(0), drain);
        }
        let fpt = start.map(|s| s.elapsed()).unwrap_or_default();
        if trace::enabled() {
            trace::end(trace::Kind::Region, n as u64);
        }
        let panicked = std::mem::take(&mut *region.panic.lock().unwrap_or_else(|e| e.into_inner()));
        let pct = region
            .pct
            .as_ref()
            .map(|pct| pct.iter().map(|t| Duration::from_nanos(t.load(Ordering::Relaxed))).collect());
        (fpt, panicked, pct)
    }

    /// Posts region `region` (header `share`, post `number`) to the wake-tree
    /// children of `slot`, which the caller occupies, counting the posts and
    /// the wake-ups it issued.
    #[inline]
    pub(crate) fn post_children(
        &self,
        tree: &super::tree::WakeTree,
        slot: usize,
        number: u64,
        share: Share,
        region: *const Region,
    ) {
        let (mut posts, mut wakes) = (0, 0);
        for c in tree.children(slot) {
            posts += 1;
            wakes += u64::from(self.slots[c].forward(number, share, region));
        }
        let counters = self.counters.of(slot);
        crate::sched::counters::bump(&counters.posts, posts);
        if wakes > 0 {
            crate::sched::counters::bump(&counters.wakes, wakes);
        }
    }

    /// A region whose shares call `func(data, ctx)` directly: what the post
    /// carries (function and data pointer, in the worker's port line) is all
    /// a participant reads to start. Same rules as [`Registry::broadcast_n`];
    /// a panic in a share is re-raised on the caller after all finished.
    ///
    /// # Safety
    /// `func(data, ctx)` must be sound on every participant for the region's
    /// duration (`data` shared, `Sync`).
    pub(crate) unsafe fn broadcast_raw(
        &self,
        n: usize,
        func: unsafe fn(*const (), BroadcastContext),
        data: *const (),
        drain: &dyn Fn(bool) -> bool,
    ) {
        debug_assert!(n >= 1 && n <= self.num_threads());
        if n <= 1 || !self.is_master() || self.region_active.swap(true, Ordering::Acquire) {
            // SAFETY: the caller's contract.
            unsafe { func(data, BroadcastContext { index: 0, num_threads: 1 }) };
            super::idle::wait_current(drain);
            return;
        }
        let (_, panicked, _) = self.run_region(Share { func, data, size: n, timed: false }, Some(drain));
        if let Some(p) = panicked.first {
            panic::resume_unwind(p);
        }
    }

    /// Launch and join: one fresh thread per share not run by the master.
    fn launch_and_join(&self, region: &Region, master_last: bool) {
        let n = region.share.size;
        let order: Vec<usize> = if master_last {
            self.placement.wake_order.iter().copied().filter(|&w| w < n).collect()
        } else {
            (0..n).collect()
        };
        let region_addr = region as *const Region as usize;
        std::thread::scope(|s| {
            for &i in &order {
                let spawned =
                    std::thread::Builder::new().name(format!("herd-lj-{i}")).spawn_scoped(s, move || {
                        self.bind_participant(i);
                        let _occ = Occupancy::enter(self, i);
                        // SAFETY: the region outlives this scoped thread.
                        Region::run_share(unsafe { &*(region_addr as *const Region) }, i);
                    });
                if let Err(e) = spawned {
                    // Run the share here rather than lose it.
                    eprintln!(
                        "herd: warning: could not launch a thread ({e}); running share {i} on the master"
                    );
                    let _occ = Occupancy::enter(self, i);
                    Region::run_share(region, i);
                }
            }
            if master_last {
                Region::run_share(region, 0);
            }
        });
    }
}
