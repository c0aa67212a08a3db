//! Fork-join regions: `broadcast` runs a closure once on every participant,
//! dispatched by one of the six strategies of the ATLAS thread-management
//! paper ([`Dispatch`]).
//!
//! Protocol (master-last persistent workers, the default): the master builds a
//! [`Region`] on its stack with a [`CountLatch`] of `n - 1`, stores a pointer to
//! it in each worker's mailbox (most distant worker first) and unparks it, then
//! runs share 0 itself, then waits on the latch — running stolen jobs while it
//! waits. Each worker runs its share and counts the latch down as its very last
//! access to the region; the last one unparks the master. A panic in any share
//! is caught, the first one kept, and re-raised on the master after every share
//! has finished, so the pool stays usable.
//!
//! Launch-and-join strategies create (and join) fresh threads for the region
//! instead; non-master-last strategies run share 0 on another thread (a fresh
//! one, or the persistent proxy) bound to the master's place, while the master
//! only waits.

use super::registry::{Occupancy, Registry};
use crate::config::Dispatch;
use crate::sync::latch::Latch;
use crate::sync::CountLatch;
use crate::trace;
use std::any::Any;
use std::cell::UnsafeCell;
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

/// Participant `i`'s block of a static partition of `0..len` among `n`.
#[inline]
pub(crate) fn block(len: usize, i: usize, n: usize) -> std::ops::Range<usize> {
    let q = len / n;
    let r = len % n;
    let start = i * q + i.min(r);
    start..start + q + usize::from(i < r)
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

/// A region in flight; lives on the master's stack.
pub(crate) struct Region {
    func: unsafe fn(*const (), BroadcastContext),
    data: *const (),
    size: usize,
    latch: CountLatch,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Nanoseconds inside each share, when timing.
    pct: Option<Box<[AtomicU64]>>,
}

impl Region {
    /// Runs share `index` on the calling thread, which occupies slot `index`,
    /// then counts the latch down (its last access to the region).
    ///
    /// # Safety
    /// `this` points to a live region whose latch still counts this share.
    pub(crate) unsafe fn run_share(this: *const Region, index: usize) {
        // SAFETY: caller's contract; the region stays alive until the latch
        // reaches zero, and our decrement below is our last access.
        unsafe {
            let r = &*this;
            Region::run_share_body(r, index);
            Latch::set(&r.latch);
        }
    }

    /// Runs share `index` without touching the latch.
    fn run_share_body(r: &Region, index: usize) {
        if trace::enabled() {
            trace::begin(trace::Kind::Share, index as u64);
        }
        let ctx = BroadcastContext { index, num_threads: r.size };
        let start = r.pct.as_ref().map(|_| Instant::now());
        // SAFETY: `func` and `data` were built together by `broadcast` from a
        // `Fn + Sync` closure that outlives the region.
        let result = panic::catch_unwind(AssertUnwindSafe(|| unsafe { (r.func)(r.data, ctx) }));
        if let (Some(pct), Some(start)) = (&r.pct, start) {
            pct[index].store(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        }
        if let Err(p) = result {
            let mut slot = r.panic.lock().unwrap_or_else(|e| e.into_inner());
            slot.get_or_insert(p);
        }
        if trace::enabled() {
            trace::end(trace::Kind::Share, index as u64);
        }
    }
}

/// Per-participant result slots of a broadcast.
struct Results<R>(Box<[UnsafeCell<Option<R>>]>);
// SAFETY: participant `i` writes only slot `i`, and the master reads them all
// only after the region latch (Acquire) has seen every write.
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
        if !self.is_master() || self.region_active.swap(true, Ordering::Acquire) {
            let start = Instant::now();
            let r = f(BroadcastContext { index: 0, num_threads: 1 });
            let t = start.elapsed();
            let timing = timed.then(|| RegionTiming { fpt: t, pct: vec![t] });
            return (vec![r], timing);
        }
        struct Active<'a>(&'a Registry);
        impl Drop for Active<'_> {
            fn drop(&mut self) {
                self.0.region_active.store(false, Ordering::Release);
            }
        }
        let _active = Active(self);

        let n = self.num_threads();
        let results = Results::<R>((0..n).map(|_| UnsafeCell::new(None)).collect());
        let call = |ctx: BroadcastContext| {
            let r = f(ctx);
            // SAFETY: see `Results`.
            unsafe { *results.0[ctx.index].get() = Some(r) };
        };
        let master_last = self.dispatch.master_last();
        let waiter = if master_last { self.parker(0) } else { &*self.master_parker };
        let shares_elsewhere = if master_last { n - 1 } else { n };
        let region = Region {
            func: erased_of(&call),
            data: &call as *const _ as *const (),
            size: n,
            latch: CountLatch::new(shares_elsewhere, waiter),
            panic: Mutex::new(None),
            pct: timed.then(|| (0..n).map(|_| AtomicU64::new(0)).collect()),
        };
        // Type-erased trampoline for `call`.
        unsafe fn erased<C: Fn(BroadcastContext)>(data: *const (), ctx: BroadcastContext) {
            // SAFETY: `data` is `&call` of the matching type, alive for the region.
            unsafe { (*(data as *const C))(ctx) }
        }
        fn erased_of<C: Fn(BroadcastContext)>(_: &C) -> unsafe fn(*const (), BroadcastContext) {
            erased::<C>
        }

        if trace::enabled() {
            trace::begin(trace::Kind::Region, n as u64);
        }
        let start = Instant::now();
        match self.dispatch {
            Dispatch::Pwaml => {
                for &w in &self.placement.wake_order {
                    Registry::post(&self.slots[w].port, &region);
                }
                Region::run_share_body(&region, 0);
                self.wait_until(Some(0), self.parker(0), |last| region.latch.probe(last));
            }
            Dispatch::Pw | Dispatch::Pwa => {
                Registry::post(&self.proxy, &region);
                for w in 1..n {
                    Registry::post(&self.slots[w].port, &region);
                }
                // The master only waits, asleep, as in the paper's PW.
                self.wait_with(None, &self.master_parker, Some(Duration::ZERO), |last| {
                    region.latch.probe(last)
                });
            }
            Dispatch::Lj | Dispatch::Lja | Dispatch::Ljaml => {
                self.launch_and_join(&region, master_last);
            }
        }
        let fpt = start.elapsed();
        if trace::enabled() {
            trace::end(trace::Kind::Region, n as u64);
        }
        let panic = region.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(p) = panic {
            panic::resume_unwind(p);
        }
        let timing = region.pct.as_ref().map(|pct| RegionTiming {
            fpt,
            pct: pct.iter().map(|t| Duration::from_nanos(t.load(Ordering::Relaxed))).collect(),
        });
        drop(region);
        let out = results
            .0
            .into_vec()
            .into_iter()
            .map(|c| c.into_inner().expect("every participant ran its share"))
            .collect();
        (out, timing)
    }

    /// Launch and join: one fresh thread per share not run by the master.
    fn launch_and_join(&self, region: &Region, master_last: bool) {
        let n = region.size;
        let order: Vec<usize> =
            if master_last { self.placement.wake_order.clone() } else { (0..n).collect() };
        let region_addr = region as *const Region as usize;
        std::thread::scope(|s| {
            for &i in &order {
                let spawned =
                    std::thread::Builder::new().name(format!("herd-lj-{i}")).spawn_scoped(s, move || {
                        self.bind_participant(i);
                        let _occ = Occupancy::enter(self, i);
                        // SAFETY: the region outlives this scoped thread.
                        unsafe { Region::run_share(region_addr as *const Region, i) };
                    });
                if let Err(e) = spawned {
                    // Run the share here rather than lose it.
                    eprintln!(
                        "herd: warning: could not launch a thread ({e}); running share {i} on the master"
                    );
                    let _occ = Occupancy::enter(self, i);
                    // SAFETY: as above.
                    unsafe { Region::run_share(region, i) };
                }
            }
            if master_last {
                Region::run_share_body(region, 0);
            }
        });
    }

    /// True when the calling thread occupies slot 0 of this registry.
    #[inline]
    pub(crate) fn is_master(&self) -> bool {
        let (reg, slot) = super::registry::current();
        std::ptr::eq(reg, self) && slot == 0
    }
}
