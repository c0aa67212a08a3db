//! The registry: the shared state of one pool — participant slots, their
//! parkers and mailboxes, the scheduler, and the persistent worker threads.
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
//!
//! **Idle protocol** ([`Registry::wait_until`]): a waiting occupant runs its
//! own newest job, else steals (nearest victims first), else spins for the
//! configured time, else announces itself *sleepy* (a `SeqCst` flag plus a
//! counter), re-checks its condition and the queues, and parks. A thread
//! that makes work stealable ([`Registry::notify_work`]) does a `SeqCst`
//! read-modify-write of the counter and, if it is non-zero, claims one sleepy
//! flag and unparks that slot (protocol and proof: `sync::Sleepers`).

use super::region::Region;
use crate::config::{Dispatch, WaitPolicy};
use crate::placement::Placement;
use crate::sched::{JobRef, Scheduler, WorkStealing};
use crate::sync::{Parker, Sleepers};
use crate::topology::Topology;
use crate::trace;
use crossbeam_utils::CachePadded;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Where a persistent thread receives region shares: a mailbox and the parker
/// it sleeps on, on one cache line so that the master's post and the worker's
/// spin touch a single line.
#[derive(Default)]
pub(crate) struct Port {
    pub(crate) parker: Parker,
    pub(crate) mailbox: AtomicPtr<Region>,
}

/// Per-participant state.
pub(crate) struct Slot {
    pub(crate) port: CachePadded<Port>,
    /// Counters: jobs run, successful steals.
    pub(crate) jobs_run: AtomicU64,
    pub(crate) steals: AtomicU64,
}

/// Shared state of a pool; see the module documentation.
pub(crate) struct Registry {
    pub(crate) id: usize,
    pub(crate) topology: Topology,
    pub(crate) placement: Placement,
    pub(crate) dispatch: Dispatch,
    /// `None`: never sleep; `Some(d)`: spin for `d`, then sleep.
    spin: Option<Duration>,
    pub(crate) sched: WorkStealing,
    pub(crate) slots: Box<[Slot]>,
    /// The proxy that runs share 0 under PW/PWA.
    pub(crate) proxy: CachePadded<Port>,
    /// The master sleeps here while it only waits (non-master-last dispatch).
    pub(crate) master_parker: CachePadded<Parker>,
    pub(crate) master_lock: Mutex<()>,
    pub(crate) region_active: AtomicBool,
    sleepers: Sleepers,
    pub(crate) terminate: AtomicBool,
    pub(crate) threads: Mutex<Vec<JoinHandle<()>>>,
}

static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

thread_local! {
    /// The registry and slot the current thread occupies, if any.
    static CURRENT: Cell<(*const Registry, usize)> = const { Cell::new((std::ptr::null(), 0)) };
    /// The registry whose master PU this thread was last bound to.
    static MASTER_BOUND: Cell<usize> = const { Cell::new(0) };
}

/// The registry and slot the calling thread occupies (null if none).
#[inline]
pub(crate) fn current() -> (*const Registry, usize) {
    CURRENT.with(|c| c.get())
}

/// Restores the previous occupancy when dropped (also on unwinding).
pub(crate) struct Occupancy {
    prev: (*const Registry, usize),
}

impl Occupancy {
    /// Marks the calling thread as the occupant of `slot` of `reg`.
    pub(crate) fn enter(reg: &Registry, slot: usize) -> Occupancy {
        let prev = CURRENT.with(|c| c.replace((reg as *const Registry, slot)));
        Occupancy { prev }
    }
}

impl Drop for Occupancy {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.prev));
    }
}

impl Registry {
    pub(crate) fn new(
        topology: Topology,
        placement: Placement,
        dispatch: Dispatch,
        wait: WaitPolicy,
    ) -> Registry {
        let n = placement.num_threads;
        // Victims nearest first (topology distance), then by index.
        let victims = (0..n)
            .map(|i| {
                let mut v: Vec<usize> = (0..n).filter(|&j| j != i).collect();
                let pi = placement.pu_of(i);
                v.sort_by_key(|&j| (topology.distance(pi, placement.pu_of(j)), j));
                v
            })
            .collect();
        let spin = if placement.oversubscribed {
            Some(Duration::ZERO)
        } else {
            match wait {
                WaitPolicy::Active => None,
                WaitPolicy::Passive => Some(Duration::ZERO),
                WaitPolicy::Spin(d) => Some(d),
            }
        };
        Registry {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            topology,
            dispatch,
            spin,
            sched: WorkStealing::new(victims),
            slots: (0..n)
                .map(|_| Slot {
                    port: CachePadded::new(Port::default()),
                    jobs_run: AtomicU64::new(0),
                    steals: AtomicU64::new(0),
                })
                .collect(),
            proxy: CachePadded::new(Port::default()),
            master_parker: CachePadded::new(Parker::new()),
            master_lock: Mutex::new(()),
            region_active: AtomicBool::new(false),
            sleepers: Sleepers::new(n),
            terminate: AtomicBool::new(false),
            threads: Mutex::new(Vec::new()),
            placement,
        }
    }

    /// `None`: never sleep; `Some(d)`: spin for `d`, then sleep.
    pub(crate) fn spin(&self) -> Option<Duration> {
        self.spin
    }

    #[inline]
    pub(crate) fn num_threads(&self) -> usize {
        self.slots.len()
    }

    /// The parker the occupant of `slot` sleeps on.
    #[inline]
    pub(crate) fn parker(&self, slot: usize) -> &Parker {
        &self.slots[slot].port.parker
    }

    /// Binds the calling thread to participant `i`'s place, if binding is on.
    pub(crate) fn bind_participant(&self, i: usize) {
        if self.placement.bound {
            if let Err(e) = self.topology.bind_current_thread(self.placement.pus_of(i)) {
                eprintln!("herd: warning: {e}; participant {i} runs unbound");
            }
        }
    }

    /// Binds the calling (master) thread to the master's place once per pool.
    pub(crate) fn bind_master_once(&self) {
        if self.placement.bound && MASTER_BOUND.with(|b| b.replace(self.id)) != self.id {
            self.bind_participant(0);
        }
    }

    /// Makes work visible to sleeping participants: call after pushing.
    #[inline]
    pub(crate) fn notify_work(&self) {
        if self.sleepers.notify_one(|slot| self.parker(slot)).is_some() && trace::enabled() {
            trace::instant(trace::Kind::Wake, 0);
        }
    }

    /// Runs `job` as the occupant of `slot`.
    #[inline]
    pub(crate) fn run_job(&self, slot: usize, job: JobRef) {
        if trace::enabled() {
            trace::begin(trace::Kind::Task, slot as u64);
        }
        // SAFETY: every JobRef in the queues is executed exactly once: it was
        // removed from its queue by this pop/steal.
        unsafe { job.execute() };
        if trace::enabled() {
            trace::end(trace::Kind::Task, slot as u64);
        }
        self.slots[slot].jobs_run.fetch_add(1, Ordering::Relaxed);
    }

    /// Finds a job for `slot`: its own newest, else a stolen one.
    #[inline]
    pub(crate) fn find_work(&self, slot: usize) -> Option<JobRef> {
        // SAFETY: the caller occupies `slot`.
        if let Some(job) = unsafe { self.sched.pop(slot) } {
            return Some(job);
        }
        let job = self.sched.steal(slot)?;
        self.slots[slot].steals.fetch_add(1, Ordering::Relaxed);
        if trace::enabled() {
            trace::instant(trace::Kind::Steal, slot as u64);
        }
        Some(job)
    }

    /// Waits until `done(_)` holds. `slot` is the slot the caller occupies (it
    /// then runs jobs while waiting), or `None` for a thread that only waits
    /// (the proxy's idle loop, the master of a non-master-last region);
    /// `parker` is where the caller sleeps, the one its wakers unpark.
    /// `done(true)` is the last check before sleeping, after `SLEEPING` is
    /// announced (see [`Parker::park_unless`]); `done(false)` the cheap check
    /// while spinning.
    pub(crate) fn wait_until(&self, slot: Option<usize>, parker: &Parker, done: impl Fn(bool) -> bool) {
        self.wait_with(slot, parker, self.spin, done)
    }

    /// [`Registry::wait_until`] with an explicit spin policy (`None`: spin
    /// forever; `Some(ZERO)`: sleep at once).
    pub(crate) fn wait_with(
        &self,
        slot: Option<usize>,
        parker: &Parker,
        spin: Option<Duration>,
        done: impl Fn(bool) -> bool,
    ) {
        // While spinning, the condition (usually one cache line of our own) is
        // checked every iteration and the queues every `STEAL_EVERY`, so that a
        // region post is noticed within a few nanoseconds while idle
        // participants still pick up stealable work promptly.
        const STEAL_EVERY: u32 = 8;
        const CLOCK_EVERY: u32 = 64;
        let mut spin_started: Option<Instant> = None;
        let mut spins: u32 = 0;
        loop {
            if done(false) {
                return;
            }
            if let Some(s) = slot {
                if spins % STEAL_EVERY == 0 {
                    if let Some(job) = self.find_work(s) {
                        self.run_job(s, job);
                        spin_started = None;
                        spins = 0;
                        continue;
                    }
                }
            }
            spins = spins.wrapping_add(1);
            match spin {
                None => {
                    std::hint::spin_loop();
                    continue;
                }
                Some(limit) if !limit.is_zero() => {
                    if spins % CLOCK_EVERY != 0 {
                        std::hint::spin_loop();
                        continue;
                    }
                    let start = *spin_started.get_or_insert_with(Instant::now);
                    if start.elapsed() < limit {
                        continue;
                    }
                }
                Some(_) => {}
            }
            // Sleep protocol.
            let token = parker.prepare();
            if let Some(s) = slot {
                self.sleepers.announce(s);
            }
            let wake_now = done(false) || (slot.is_some() && self.sched.has_work());
            if !wake_now {
                if trace::enabled() {
                    trace::begin(trace::Kind::Sleep, slot.unwrap_or(usize::MAX) as u64);
                }
                parker.park_unless(token, || done(true));
                if trace::enabled() {
                    trace::end(trace::Kind::Sleep, slot.unwrap_or(usize::MAX) as u64);
                }
            }
            if let Some(s) = slot {
                self.sleepers.retract(s);
            }
            spin_started = None;
            spins = 0;
        }
    }

    /// Posts a region share to a persistent thread's port.
    #[inline]
    pub(crate) fn post(port: &Port, region: *const Region) {
        port.mailbox.store(region as *mut Region, Ordering::Release);
        port.parker.unpark();
    }

    /// Main loop of a persistent thread. `slot` is its participant slot, or
    /// `None` for the proxy of non-master-last dispatch (which runs share 0).
    pub(crate) fn worker_main(self: Arc<Registry>, slot: Option<usize>) {
        let (port, share) = match slot {
            Some(s) => (&*self.slots[s].port, s),
            None => (&*self.proxy, 0),
        };
        self.bind_participant(share);
        if trace::enabled() {
            let what = if slot.is_some() { "worker" } else { "proxy of" };
            let pu = self.topology.pus()[self.placement.pu_of(share)].os_index;
            trace::name_thread(&format!("{what} {share} (PU {pu})"));
        }
        let _occupancy = slot.map(|s| Occupancy::enter(&self, s));
        loop {
            self.wait_until(slot, &port.parker, |_| {
                !port.mailbox.load(Ordering::Acquire).is_null() || self.terminate.load(Ordering::Acquire)
            });
            let region = port.mailbox.swap(std::ptr::null_mut(), Ordering::Acquire);
            if !region.is_null() {
                // SAFETY: the master keeps the region alive until every share
                // has counted down its latch, which `run_share` does last.
                unsafe {
                    if slot.is_none() {
                        let _occ = Occupancy::enter(&self, 0);
                        Region::run_share(region, 0);
                    } else {
                        Region::run_share(region, share);
                    }
                }
                continue;
            }
            if self.terminate.load(Ordering::Acquire) {
                return;
            }
        }
    }

    /// Stops and joins the persistent threads.
    pub(crate) fn shut_down(&self) {
        if std::env::var_os("HERD_DEBUG_STATS").is_some() {
            for (i, s) in self.slots.iter().enumerate() {
                eprintln!(
                    "slot {i}: jobs {} steals {}",
                    s.jobs_run.load(Ordering::Relaxed),
                    s.steals.load(Ordering::Relaxed)
                );
            }
        }
        self.terminate.store(true, Ordering::Release);
        for slot in self.slots.iter() {
            slot.port.parker.unpark();
        }
        self.proxy.parker.unpark();
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for t in threads {
            let _ = t.join();
        }
    }
}
