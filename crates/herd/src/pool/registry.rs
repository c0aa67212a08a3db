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

use super::region::{BroadcastContext, Region, Share};
use crate::config::Sched;
use crate::config::{Dispatch, WaitPolicy};
use crate::placement::Placement;
use crate::sched::{AllCounters, JobRef, Pending, Queues, Scheduler, Target};
use crate::shepherds::Shepherds;
use crate::sync::{Parker, Sleepers};
use crate::topology::Topology;
use crate::trace;
use crossbeam_utils::CachePadded;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Where a persistent thread receives region shares: a mailbox and the parker
/// it sleeps on, on one cache line so that the master's post and the worker's
/// spin touch a single line.
///
/// Post protocol: the mailbox holds a post number (16 bits) and an address
/// (48 bits). The master `swap`s in the next post (`SeqCst`, a
/// read-modify-write) and then wakes the worker only if it announced that it
/// sleeps ([`Parker::unpark_if_sleeping`]); the worker's last check before
/// sleeping reads the mailbox with a read-modify-write. The worker never writes
/// the mailbox: it remembers the last post number it consumed. When its share
/// is done it `swap`s the post number into `ack` and wakes the master only if
/// the master announced that it sleeps; the master's last check before sleeping
/// reads `ack` with a read-modify-write. A region thus moves this one line from
/// master to worker and back: about one cache-line round trip.
#[derive(Default)]
pub(crate) struct Port {
    pub(crate) parker: Parker,
    /// `post number << 48 | address` of a [`Region`] or [`TERMINATE`].
    mailbox: AtomicU64,
    /// The last post number whose share this port's thread completed.
    ack: AtomicU64,
    /// The region's [`Share`] header, written before the mailbox (whose
    /// `SeqCst` swap publishes them): `func`, `data`, `size << 1 | timed`.
    func: AtomicUsize,
    data: AtomicUsize,
    size_timed: AtomicUsize,
}

/// Mailbox address telling a persistent thread to exit.
const TERMINATE: u64 = 1;
const ADDRESS_BITS: u32 = 48;

impl Port {
    /// The post number after `seen`'s, if any: `last` is the check before sleeping.
    #[inline]
    fn has_mail(&self, seen: u64, last: bool) -> bool {
        let v = if last {
            self.mailbox.fetch_add(0, Ordering::SeqCst)
        } else {
            self.mailbox.load(Ordering::Acquire)
        };
        v >> ADDRESS_BITS != seen
    }

    /// Posts `region` as post number `number` and wakes the owner.
    #[inline]
    pub(crate) fn post(&self, number: u64, region: &Region) {
        let s = region.share;
        self.func.store(s.func as usize, Ordering::Relaxed);
        self.data.store(s.data as usize, Ordering::Relaxed);
        self.size_timed.store((s.size << 1) | usize::from(s.timed), Ordering::Relaxed);
        self.post_address(number, region as *const Region as u64);
    }

    /// The header of the region just received (after an `Acquire` read of
    /// the mailbox that saw its post).
    #[inline]
    fn share(&self) -> Share {
        let st = self.size_timed.load(Ordering::Relaxed);
        // SAFETY: `func` holds a value stored by `post` from a function
        // pointer of exactly this type, published by the mailbox swap.
        let func = unsafe {
            std::mem::transmute::<usize, unsafe fn(*const (), BroadcastContext)>(
                self.func.load(Ordering::Relaxed),
            )
        };
        Share {
            func,
            data: self.data.load(Ordering::Relaxed) as *const (),
            size: st >> 1,
            timed: st & 1 != 0,
        }
    }

    #[inline]
    fn post_address(&self, number: u64, address: u64) {
        debug_assert!(address >> ADDRESS_BITS == 0, "user-space addresses fit in 48 bits");
        self.mailbox.swap((number << ADDRESS_BITS) | address, Ordering::SeqCst);
        self.parker.unpark_if_sleeping();
    }

    /// True when the share of post `number` is complete. `last`: the check
    /// before sleeping (a read-modify-write).
    #[inline]
    pub(crate) fn acked(&self, number: u64, last: bool) -> bool {
        let v = if last { self.ack.fetch_add(0, Ordering::SeqCst) } else { self.ack.load(Ordering::Acquire) };
        v == number
    }
}

/// Shared state of a pool; see the module documentation.
pub(crate) struct Registry {
    pub(crate) id: usize,
    pub(crate) topology: Topology,
    pub(crate) placement: Placement,
    pub(crate) dispatch: Dispatch,
    /// `None`: never sleep; `Some(d)`: spin for `d`, then sleep.
    spin: Option<Duration>,
    pub(crate) sched: Queues,
    /// Per slot, its jobs still queued: `join`'s lazy-splitting test.
    pub(crate) pending: Arc<Pending>,
    /// The locality domains (`HERD_SHEPHERD`).
    pub(crate) shepherds: Shepherds,
    /// Per-slot scheduling counters.
    pub(crate) counters: AllCounters,
    /// Per shepherd, the most workers that take jobs (`HERD_THROTTLE`): the
    /// member of rank `r` takes jobs only while `r < limit` (rank 0, which
    /// holds the master in shepherd 0, always does). Read at every job
    /// boundary of the idle loop; see [`Registry::set_active_limit`].
    limits: Box<[CachePadded<AtomicUsize>]>,
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
    sleepers: Sleepers,
    /// Participants allowed to take jobs: slots `0..team`. A region of fewer
    /// participants than the pool (`rt::broadcast_n`) lowers it for its
    /// duration, so that workers outside the region neither steal its jobs
    /// nor are woken for them.
    team: AtomicUsize,
    /// Entering as master leaves the thread's binding alone.
    pub(crate) keep_master_binding: bool,
    /// Print the per-worker counters when the pool ends
    /// (`HERD_DISPLAY_ENV=verbose`).
    pub(crate) report_stats: bool,
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
        Registry {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            topology,
            dispatch,
            spin,
            sched: Queues::new(sched, &shepherds, steal_chunk, &pending),
            pending,
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
            team: AtomicUsize::new(n),
            keep_master_binding: false,
            report_stats: false,
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

    /// Binds the calling thread to participant `i`'s place, if binding is on.
    pub(crate) fn bind_participant(&self, i: usize) {
        if self.placement.bound {
            if let Err(e) = self.topology.bind_current_thread(self.placement.pus_of(i)) {
                eprintln!("herd: warning: {e}; participant {i} runs unbound");
            }
        }
    }

    /// Binds the calling (master) thread to the master's place once per pool.
    /// Entering an unbound pool after a bound one releases the thread to all
    /// usable PUs again, so that one pool's pinning does not leak into another.
    pub(crate) fn bind_master_once(&self) {
        if self.keep_master_binding {
            return;
        }
        let previous = MASTER_BOUND.with(|b| b.get());
        if self.placement.bound {
            if previous != self.id {
                MASTER_BOUND.with(|b| b.set(self.id));
                self.bind_participant(0);
            }
        } else if previous != 0 && !self.topology.is_synthetic() {
            MASTER_BOUND.with(|b| b.set(0));
            let all: Vec<usize> = (0..self.topology.pus().len()).collect();
            if let Err(e) = self.topology.bind_current_thread(&all) {
                eprintln!("herd: warning: could not release the master's binding: {e}");
            }
        }
    }

    /// Makes work visible to sleeping participants: call after queueing a
    /// job for `target`. `near` is the slot that queued it (0 from outside):
    /// sleepers of its shepherd are woken first, since they take the job
    /// from the shared queue without a remote steal.
    #[inline]
    pub(crate) fn notify_work(&self, target: Target, near: usize) {
        let woken = self.sleepers.notify_one(
            || {
                let start = match target {
                    Target::Anyone => self.shepherds.members[self.shepherds.of[near]][0],
                    Target::Shepherd(h) => self.shepherds.members[h][0],
                };
                let team = self.team.load(Ordering::Relaxed);
                let eligible = move |slot: usize| {
                    slot < team
                        && match target {
                            Target::Anyone => true,
                            Target::Shepherd(h) => self.shepherds.of[slot] == h,
                        }
                };
                (start, eligible)
            },
            |slot| self.parker(slot),
        );
        if woken.is_some() && trace::enabled() {
            trace::instant(trace::Kind::Wake, 0);
        }
    }

    /// Queues `job` as the occupant of `slot` and wakes a sleeper for it.
    #[inline]
    pub(crate) fn push_job(&self, slot: usize, job: JobRef) {
        // SAFETY: the caller occupies `slot`.
        let target = unsafe { self.sched.push(slot, job) };
        self.notify_work(target, slot);
    }

    /// Queues `job` from any thread: on the calling participant's own queue
    /// if it is one of this pool's, else for the workers of `shepherd` (a
    /// lightweight thread resumes in its shepherd).
    pub(crate) fn submit(&self, job: JobRef, shepherd: usize) {
        let (reg, slot) = current();
        let ours = std::ptr::eq(reg, self);
        let target = if ours && self.shepherds.of[slot] == shepherd {
            // SAFETY: the calling thread occupies `slot` of this registry.
            unsafe { self.sched.push(slot, job) }
        } else {
            self.sched.submit(job, shepherd)
        };
        self.notify_work(target, if ours { slot } else { self.shepherds.members[shepherd][0] });
    }

    /// Queues `job` from a thread outside the pool.
    pub(crate) fn inject(&self, job: JobRef) {
        let target = self.sched.inject(job);
        self.notify_work(target, 0);
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

    /// Runs `job` as the occupant of `slot`.
    #[inline]
    pub(crate) fn run_job(&self, slot: usize, job: JobRef) {
        crate::sched::counters::bump(&self.counters.of(slot).tasks, 1);
        if trace::enabled() {
            trace::begin(trace::Kind::Task, slot as u64);
        }
        // SAFETY: every JobRef in the queues is executed exactly once: it was
        // removed from its queue by this pop/steal.
        unsafe { job.execute() };
        if trace::enabled() {
            trace::end(trace::Kind::Task, slot as u64);
        }
    }

    /// Finds a job for `slot`: its own newest, else a stolen one.
    #[inline]
    pub(crate) fn find_work(&self, slot: usize) -> Option<JobRef> {
        if slot >= self.team.load(Ordering::Relaxed) || self.throttled(slot) {
            return None;
        }
        // SAFETY: the caller occupies `slot`.
        if let Some(job) = unsafe { self.sched.pop(slot) } {
            return Some(job);
        }
        let stolen = self.sched.steal(slot, self.counters.of(slot));
        for _ in 0..stolen.moved {
            self.notify_work(Target::Shepherd(self.shepherds.of[slot]), slot);
        }
        let job = stolen.job?;
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
        // Start past a steal point: a region's master and a worker that has
        // just acknowledged its share check their condition first.
        let mut spins: u32 = 1;
        // A pusher woke us for work that we have not taken (see
        // `Sleepers::retract`): pass the wake on if we leave.
        let mut owe_wake = false;
        // Idle since the first search for work that found nothing.
        let mut idle_since: Option<Instant> = None;
        let stop_idle = |since: &mut Option<Instant>| {
            if let (Some(t), Some(s)) = (since.take(), slot) {
                crate::sched::counters::bump(&self.counters.of(s).idle_ns, t.elapsed().as_nanos() as u64);
            }
        };
        loop {
            if done(false) {
                stop_idle(&mut idle_since);
                if owe_wake {
                    self.notify_work(Target::Anyone, slot.unwrap_or(0));
                }
                return;
            }
            if let Some(s) = slot {
                if spins.is_multiple_of(STEAL_EVERY) {
                    if let Some(job) = self.find_work(s) {
                        stop_idle(&mut idle_since);
                        owe_wake = false;
                        self.run_job(s, job);
                        spin_started = None;
                        spins = 1;
                        continue;
                    }
                }
            }
            spins = spins.wrapping_add(1);
            // Idle time is counted from the first clock point (every
            // `CLOCK_EVERY` spins, or before sleeping), so that short waits —
            // a barrier that completes within a few spins — read no clock.
            if slot.is_some() && idle_since.is_none() && spins.is_multiple_of(CLOCK_EVERY) {
                idle_since = Some(Instant::now());
            }
            match spin {
                None => {
                    std::hint::spin_loop();
                    continue;
                }
                Some(limit) if !limit.is_zero() => {
                    if !spins.is_multiple_of(CLOCK_EVERY) {
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
            if slot.is_some() && idle_since.is_none() {
                idle_since = Some(Instant::now());
            }
            // Sleep protocol. A throttled participant does not announce
            // itself to pushers; it is woken by `set_active_limit` instead.
            let token = parker.prepare();
            let throttled = slot.is_some_and(|s| self.throttled(s));
            let announced = slot.filter(|_| !throttled);
            if let Some(s) = announced {
                self.sleepers.announce(s);
            }
            let wake_now = done(false)
                || announced.is_some_and(|s| s < self.team.load(Ordering::Relaxed) && self.sched.has_work(s));
            if !wake_now {
                if trace::enabled() {
                    trace::begin(trace::Kind::Sleep, slot.unwrap_or(usize::MAX) as u64);
                }
                parker.park_unless(token, || done(true) || (throttled && self.unthrottled_now(slot)));
                if trace::enabled() {
                    trace::end(trace::Kind::Sleep, slot.unwrap_or(usize::MAX) as u64);
                }
            }
            if let Some(s) = announced {
                if !self.sleepers.retract(s) {
                    owe_wake = true;
                }
            }
            spin_started = None;
            spins = 0;
        }
    }

    /// The last check of a throttled participant before sleeping: a
    /// read-modify-write of its shepherd's limit (see `set_active_limit`).
    #[cold]
    fn unthrottled_now(&self, slot: Option<usize>) -> bool {
        slot.is_some_and(|s| {
            self.shepherds.rank[s] < self.limits[self.shepherds.of[s]].fetch_add(0, Ordering::SeqCst)
        })
    }

    /// Limits job taking to slots `0..n` (see the `team` field); returns the
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

    /// Main loop of a persistent thread. `slot` is its participant slot, or
    /// `None` for the proxy of non-master-last dispatch (which runs share 0).
    pub(crate) fn worker_main(self: Arc<Registry>, slot: Option<usize>) {
        let (port, share) = match slot {
            Some(s) => (&*self.slots[s], s),
            None => (&*self.proxy, 0),
        };
        self.bind_participant(share);
        if trace::enabled() {
            let what = if slot.is_some() { "worker" } else { "proxy of" };
            let pu = self.topology.pus()[self.placement.pu_of(share)].os_index;
            trace::name_thread(&format!("{what} {share} (PU {pu})"));
        }
        let _occupancy = slot.map(|s| Occupancy::enter(&self, s));
        // The proxy shares the master's place (it is the paper's thread on the
        // master's core): spinning there would only delay the master, so it
        // idles asleep, like the paper's workers blocked on a condition.
        let spin = if slot.is_some() { self.spin() } else { Some(Duration::ZERO) };
        let mut seen = 0;
        loop {
            self.wait_with(slot, &port.parker, spin, |last| port.has_mail(seen, last));
            let mail = port.mailbox.load(Ordering::Acquire);
            seen = mail >> ADDRESS_BITS;
            let address = mail & ((1 << ADDRESS_BITS) - 1);
            if address == TERMINATE {
                return;
            }
            let region = address as *const Region;
            let header = port.share();
            // SAFETY: the master keeps the region alive until this port
            // acknowledges the post, which is our last access to it.
            unsafe {
                if slot.is_none() {
                    let _occ = Occupancy::enter(&self, 0);
                    Region::run(header, region, 0);
                } else {
                    Region::run(header, region, share);
                }
            }
            port.ack.swap(seen, Ordering::SeqCst);
            self.region_waiter().unpark_if_sleeping();
        }
    }

    /// Stops and joins the persistent threads.
    pub(crate) fn shut_down(&self) {
        // No region is in flight (the pool is being dropped), so every
        // persistent thread is idle or about to be: tell each to leave.
        let number = self.next_post();
        for slot in self.slots.iter().skip(1) {
            slot.post_address(number, TERMINATE);
        }
        self.proxy.post_address(number, TERMINATE);
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for t in threads {
            let _ = t.join();
        }
    }
}
