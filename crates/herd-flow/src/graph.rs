//! The graph: owns the collections, runs enabled steps as herd jobs, detects quiescence.
//!
//! Enabled steps wait in the graph's [`ReadyQueue`] (highest [`Tuner::priority`] first,
//! then first enabled first). [`Graph::wait`] runs a `herd::scope` on the current pool (the
//! global pool outside any) with at most one *drainer* job per worker; a drainer pops the
//! best step, runs it, commits its puts — which may enable steps and start more drainers —
//! and pops again until the queue is empty (protocol in `ready.rs`). The scope ends when
//! every drainer has retired: then no step is running or enabled (quiescence), and steps
//! still waiting for items are reported as [`FlowError::Unsatisfied`] from the items'
//! waiter lists.
//!
//! [`Tuner::priority`]: crate::Tuner::priority

use crate::error::{Blocked, FlowError, StepError};
use crate::items::{Collection, Items};
use crate::ready::ReadyQueue;
use crate::step::{Ctx, Inst, Steps};
use crate::sync::{lock, AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Mutex, Ordering};
use crate::tags::Tags;
use crate::timeline::{self, StepRecord};
use crate::tuner::{DefaultTuner, Tuner};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;
use std::hash::Hash;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How steps wait for their items; chosen per graph (before tags are put).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Discipline {
    /// Intel CnC's default: a step runs as soon as its tag is put; a `get` of a missing item
    /// suspends it and it is re-run from the start when the item is put. Tuner `depends`
    /// declarations are ignored.
    Requeue,
    /// The default: a step whose tuner declares its items with [`Tuner::depends`] is
    /// scheduled only once they are all present, so it is never requeued for them. A step
    /// without declarations behaves as under `Requeue`.
    #[default]
    DependencyCounted,
    /// The program puts each tag from the step that produces the step's last input, so steps
    /// are prescribed only when their data exists. The runtime treats steps as under
    /// `Requeue` (declarations ignored); the requeue count measures how well the program
    /// keeps to the rule (0 when it does).
    OnTheFly,
}

impl Discipline {
    fn code(self) -> u8 {
        match self {
            Discipline::Requeue => 0,
            Discipline::DependencyCounted => 1,
            Discipline::OnTheFly => 2,
        }
    }
    fn from_code(c: u8) -> Self {
        match c {
            0 => Discipline::Requeue,
            2 => Discipline::OnTheFly,
            _ => Discipline::DependencyCounted,
        }
    }
}

/// Counters of a graph, returned by [`Graph::wait`] and [`Graph::stats`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Step instances created by tag puts.
    pub prescribed: u64,
    /// Step executions that completed (returned `Ok`).
    pub executed: u64,
    /// Step executions abandoned on a missing item (each re-run later).
    pub requeued: u64,
    /// Time spent in abandoned executions.
    pub requeue_time: Duration,
    /// Tags ignored by memoizing tag collections.
    pub duplicate_tags: u64,
    /// Steps per node answered by [`Tuner::compute_on`].
    pub compute_on: BTreeMap<usize, u64>,
    /// Items per node answered by [`Items::with_consumed_on`].
    pub consumed_on: BTreeMap<usize, u64>,
}

/// State shared by the graph, its handles and its jobs.
pub(crate) struct Shared {
    name: String,
    discipline: AtomicU8,
    ready: ReadyQueue<Arc<Inst>>,
    next_id: AtomicU64,
    stopped: AtomicBool,
    error: Mutex<Option<FlowError>>,
    prescribed: AtomicU64,
    executed: AtomicU64,
    requeued: AtomicU64,
    requeue_ns: AtomicU64,
    duplicate_tags: AtomicU64,
    compute_on: Mutex<BTreeMap<usize, u64>>,
    consumed_on: Mutex<BTreeMap<usize, u64>>,
    timeline_on: AtomicBool,
    timeline: Mutex<Vec<StepRecord>>,
    start: Instant,
    workers: AtomicUsize,
    collections: Mutex<Vec<Arc<dyn Collection>>>,
    /// Whether `poll` holds a hook (read on every drainer batch without taking the lock).
    has_poll: AtomicBool,
    poll: Mutex<Option<Arc<PollFn>>>,
}

/// A multi-node layer's hook that brings received items and tags in ([`Graph::set_poll`]).
type PollFn = dyn Fn(&mut Injector<'_>) + Send + Sync;

impl Shared {
    /// Registers a collection; returns its number (collections are numbered in creation
    /// order, the same on every node of an SPMD graph).
    pub(crate) fn register_collection(&self, c: Arc<dyn Collection>) -> usize {
        let mut all = lock(&self.collections);
        all.push(c);
        all.len() - 1
    }
    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }
    pub(crate) fn counts_dependencies(&self) -> bool {
        Discipline::from_code(self.discipline.load(Ordering::Relaxed)) == Discipline::DependencyCounted
    }
    pub(crate) fn prescribed(&self) {
        self.prescribed.fetch_add(1, Ordering::Relaxed);
    }
    pub(crate) fn duplicate_tag(&self) {
        self.duplicate_tags.fetch_add(1, Ordering::Relaxed);
    }
    pub(crate) fn record_compute_on(&self, node: usize) {
        *lock(&self.compute_on).entry(node).or_default() += 1;
    }
    pub(crate) fn record_consumed_on(&self, node: usize) {
        *lock(&self.consumed_on).entry(node).or_default() += 1;
    }
    /// Queues steps enabled from outside a step, without starting drainers: the running
    /// `wait`'s drainers or its next round, or the next `wait`, run them.
    pub(crate) fn queue(&self, enabled: Vec<Arc<Inst>>) {
        self.ready.queue_all(enabled.into_iter().map(|i| (i.priority, i)));
    }

    fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    fn fail(&self, e: FlowError) {
        lock(&self.error).get_or_insert(e);
        self.stopped.store(true, Ordering::Release);
    }

    fn stats(&self) -> Stats {
        Stats {
            prescribed: self.prescribed.load(Ordering::Relaxed),
            executed: self.executed.load(Ordering::Relaxed),
            requeued: self.requeued.load(Ordering::Relaxed),
            requeue_time: Duration::from_nanos(self.requeue_ns.load(Ordering::Relaxed)),
            duplicate_tags: self.duplicate_tags.load(Ordering::Relaxed),
            compute_on: lock(&self.compute_on).clone(),
            consumed_on: lock(&self.consumed_on).clone(),
        }
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

fn spawn_drainers(s: &herd::Scope<'_>, sh: &Arc<Shared>, n: usize) {
    for _ in 0..n {
        let sh = sh.clone();
        s.spawn(move |s| drain(s, &sh));
    }
}

/// Counters a drainer keeps to itself and adds to the graph's when it retires (one shared
/// write per drainer, not per step).
#[derive(Default)]
struct Local {
    executed: u64,
}

/// One drainer: runs the best enabled step until none is left (see `ready.rs`).
fn drain(s: &herd::Scope<'_>, sh: &Arc<Shared>) {
    let mut local = Local::default();
    let mut batch = Vec::new();
    while sh.ready.pop_or_retire(|| sh.stopped.load(Ordering::Acquire), &mut batch) {
        for inst in batch.drain(..) {
            // After a failure the rest of the batch is discarded, as queued steps are.
            if !sh.stopped.load(Ordering::Acquire) {
                run_step(s, sh, &inst, &mut local);
            }
        }
        if sh.has_poll.load(Ordering::Relaxed) {
            poll(s, sh);
        }
    }
    sh.executed.fetch_add(local.executed, Ordering::Relaxed);
}

/// A drainer runs the multi-node layer's hook between its batches: what it brings in may
/// enable steps, queued as a step's puts are (this drainer pops again before retiring).
fn poll(s: &herd::Scope<'_>, sh: &Arc<Shared>) {
    let hook = lock(&sh.poll).clone();
    if let Some(hook) = hook {
        let mut inj = Injector { shared: sh, enabled: Vec::new() };
        hook(&mut inj);
        if !inj.enabled.is_empty() {
            let n = sh.ready.push_all(inj.enabled.into_iter().map(|i| (i.priority, i)));
            spawn_drainers(s, sh, n);
        }
    }
}

/// Brings items and tags that a multi-node layer received into a graph's collections
/// ([`Graph::set_poll`], [`Graph::inject`]): its puts do not call [`Items::on_put`] hooks and
/// its prescriptions are not routed, since they arrived where they belong.
pub struct Injector<'a> {
    shared: &'a Arc<Shared>,
    enabled: Vec<Arc<Inst>>,
}

impl Injector<'_> {
    /// Puts a received item (no producer step; the `on_put` hook is not called).
    pub fn put<K, V>(&mut self, items: &Items<K, V>, key: K, value: V) -> Result<(), FlowError>
    where
        K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
        V: Send + Sync + 'static,
    {
        items.coll.put(key, value, 0, &mut self.enabled)
    }

    /// Prescribes the step of `steps` for a received tag on this node (not routed again).
    pub fn prescribe<K>(&mut self, steps: &Steps<K>, tag: K)
    where
        K: Clone + Debug + Send + Sync + 'static,
    {
        steps.prescribe_here(self.shared, tag, &mut self.enabled);
    }

    /// [`Injector::prescribe`] for a tag the [`Steps::route`] forwarder was handed with
    /// `memo`: `Some(n)` when it was put into the memoizing tag collection number `n`, whose
    /// tags prescribe each step once on this node whichever nodes put them (a duplicate is
    /// counted in [`Stats::duplicate_tags`]).
    pub fn prescribe_from<K>(&mut self, steps: &Steps<K>, tag: K, memo: Option<u32>)
    where
        K: Clone + Debug + Send + Sync + 'static,
    {
        if steps.first_here(memo, &tag) {
            steps.prescribe_here(self.shared, tag, &mut self.enabled);
        } else {
            self.shared.duplicate_tag();
        }
    }

    /// Stops the graph without an error of its own (another node failed): running steps
    /// finish, no other starts, and [`Graph::run`] returns `Ok` with the queued steps discarded.
    pub fn halt(&self) {
        self.shared.stopped.store(true, Ordering::Release);
    }
}

/// Runs one step and commits its effects (or records its requeue or failure).
fn run_step(s: &herd::Scope<'_>, sh: &Arc<Shared>, inst: &Arc<Inst>, local: &mut Local) {
    let ctx = Ctx::new(sh, inst);
    let t0 = sh.now_ns();
    let res = panic::catch_unwind(AssertUnwindSafe(|| inst.run(&ctx)));
    let fail = |e: FlowError| sh.fail(e);
    let r = match res {
        Err(p) => {
            return fail(FlowError::Panic {
                collection: inst.collection().to_string(),
                tag: inst.tag(),
                message: panic_message(&*p),
            })
        }
        Ok(r) => r,
    };
    if let Some(e) = ctx.fatal.borrow_mut().take() {
        return fail(e);
    }
    match r {
        Err(StepError::Failed(e)) => match e.downcast::<FlowError>() {
            Ok(fe) => fail(*fe),
            Err(e) => fail(FlowError::Step {
                collection: inst.collection().to_string(),
                tag: inst.tag(),
                error: e.to_string(),
            }),
        },
        _ if ctx.suspended.get() => {
            let t1 = sh.now_ns();
            sh.requeued.fetch_add(1, Ordering::Relaxed);
            sh.requeue_ns.fetch_add(t1 - t0, Ordering::Relaxed);
            inst.requeues.fetch_add(1, Ordering::Relaxed);
        }
        Err(StepError::Missing(m)) => fail(FlowError::Step {
            // A `Missing` not made by `Ctx::get` of this execution.
            collection: inst.collection().to_string(),
            tag: inst.tag(),
            error: format!("returned Missing({}[{}]) without a failed get", m.collection, m.key),
        }),
        Ok(()) => {
            let t1 = sh.now_ns();
            let mut deps = std::mem::take(&mut *ctx.deps.borrow_mut());
            let mut enabled = Vec::new();
            if let Err(e) = ctx.commit(&mut enabled) {
                fail(e);
            }
            local.executed += 1;
            if sh.timeline_on.load(Ordering::Relaxed) {
                deps.sort_unstable();
                deps.dedup();
                lock(&sh.timeline).push(StepRecord {
                    id: inst.id,
                    collection: inst.collection().to_string(),
                    tag: inst.tag(),
                    worker: herd::current_thread_index().unwrap_or(0),
                    start_ns: t0,
                    end_ns: t1,
                    requeues: inst.requeues.load(Ordering::Relaxed),
                    deps,
                });
            }
            if !enabled.is_empty() {
                let n = sh.ready.push_all(enabled.into_iter().map(|i| (i.priority, i)));
                spawn_drainers(s, sh, n);
            }
        }
    }
}

/// A Concurrent Collections graph: owns item, tag and step collections and runs the steps
/// on herd's pool. See the [crate documentation](crate).
pub struct Graph {
    shared: Arc<Shared>,
}

/// Builds a [`Graph`] with options.
#[derive(Debug, Default)]
pub struct GraphBuilder {
    name: String,
    discipline: Discipline,
    timeline: bool,
}

impl GraphBuilder {
    /// The graph's name (in errors' context and the timeline).
    pub fn name(mut self, name: &str) -> Self {
        self.name = name.to_string();
        self
    }
    /// The scheduling discipline.
    pub fn discipline(mut self, d: Discipline) -> Self {
        self.discipline = d;
        self
    }
    /// Record a timeline of step executions.
    pub fn timeline(mut self, on: bool) -> Self {
        self.timeline = on;
        self
    }
    /// Builds the graph.
    pub fn build(self) -> Graph {
        let g = Graph::new(&self.name);
        g.set_discipline(self.discipline);
        g.record_timeline(self.timeline);
        g
    }
}

impl Graph {
    /// An empty graph with the default discipline ([`Discipline::DependencyCounted`]).
    pub fn new(name: &str) -> Self {
        Graph {
            shared: Arc::new(Shared {
                name: name.to_string(),
                discipline: AtomicU8::new(Discipline::default().code()),
                ready: ReadyQueue::new(),
                next_id: AtomicU64::new(1),
                stopped: AtomicBool::new(false),
                error: Mutex::new(None),
                prescribed: AtomicU64::new(0),
                executed: AtomicU64::new(0),
                requeued: AtomicU64::new(0),
                requeue_ns: AtomicU64::new(0),
                duplicate_tags: AtomicU64::new(0),
                compute_on: Mutex::new(BTreeMap::new()),
                consumed_on: Mutex::new(BTreeMap::new()),
                timeline_on: AtomicBool::new(false),
                timeline: Mutex::new(Vec::new()),
                start: Instant::now(),
                workers: AtomicUsize::new(0),
                collections: Mutex::new(Vec::new()),
                has_poll: AtomicBool::new(false),
                poll: Mutex::new(None),
            }),
        }
    }

    /// A builder.
    pub fn builder() -> GraphBuilder {
        GraphBuilder::default()
    }

    /// The graph's name.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// Sets the scheduling discipline; it applies to steps prescribed afterwards.
    pub fn set_discipline(&self, d: Discipline) {
        self.shared.discipline.store(d.code(), Ordering::Relaxed);
    }

    /// The scheduling discipline.
    pub fn discipline(&self) -> Discipline {
        Discipline::from_code(self.shared.discipline.load(Ordering::Relaxed))
    }

    /// Turns the step timeline on or off.
    pub fn record_timeline(&self, on: bool) {
        self.shared.timeline_on.store(on, Ordering::Relaxed);
    }

    /// A new item collection.
    pub fn items<K, V>(&self, name: &str) -> Items<K, V>
    where
        K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
        V: Send + Sync + 'static,
    {
        Items::new(name, self.shared.clone())
    }

    /// A new tag collection.
    pub fn tags<K>(&self, name: &str) -> Tags<K>
    where
        K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
    {
        Tags::new(name, self.shared.clone())
    }

    /// A new step collection with the default tuner. `f(tag, ctx)` is the step.
    pub fn steps<K, F>(&self, name: &str, f: F) -> Steps<K>
    where
        K: Clone + Debug + Send + Sync + 'static,
        F: Fn(&K, &Ctx<'_>) -> Result<(), StepError> + Send + Sync + 'static,
    {
        Steps::new(name, DefaultTuner, f)
    }

    /// A new step collection with a tuner.
    pub fn steps_tuned<K, T, F>(&self, name: &str, tuner: T, f: F) -> Steps<K>
    where
        K: Clone + Debug + Send + Sync + 'static,
        T: Tuner<K> + 'static,
        F: Fn(&K, &Ctx<'_>) -> Result<(), StepError> + Send + Sync + 'static,
    {
        Steps::new(name, tuner, f)
    }

    /// Runs enabled steps until none is running or enabled, on the current herd pool (the
    /// global pool when called outside any; use `pool.install(|| graph.wait())` to pick one).
    ///
    /// Returns the statistics, or: the first step error or panic (the graph stops: running
    /// steps finish, no other starts, enabled steps are discarded); or
    /// [`FlowError::Unsatisfied`] listing the steps still waiting for items that were never
    /// put (they stay prescribed: putting the items and waiting again runs them).
    pub fn wait(&self) -> Result<Stats, FlowError> {
        self.run()?;
        let blocked = self.blocked();
        if !blocked.is_empty() {
            return Err(FlowError::Unsatisfied(blocked));
        }
        Ok(self.shared.stats())
    }

    /// The first half of [`wait`](Self::wait), for a multi-node layer: runs the enabled steps
    /// until none is running or enabled on this node, without diagnosing blocked steps.
    /// Returns the first step error or panic (the graph stops as in `wait`); after
    /// [`Injector::halt`] returns `Ok` with the queued steps discarded.
    pub fn run(&self) -> Result<(), FlowError> {
        let sh = &self.shared;
        let workers = herd::current_num_threads();
        sh.workers.store(workers, Ordering::Relaxed);
        // Rounds: steps queued by another thread after a round's drainers retired are run
        // by the next (protocol in `ready.rs`).
        while sh.ready.len() > 0 && !sh.stopped.load(Ordering::Acquire) {
            herd::scope(|s| spawn_drainers(s, sh, sh.ready.start(workers)));
            // 0 unless another thread is in `wait` on this graph too (its drainers finish the
            // queue; both calls return once it is empty).
            sh.ready.close();
        }
        let err = lock(&sh.error).take();
        if err.is_some() || sh.stopped.load(Ordering::Acquire) {
            drop(sh.ready.clear());
            sh.stopped.store(false, Ordering::Release);
        }
        match err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The steps waiting for items that are absent, with what each lacks (sorted by step
    /// collection and tag): [`FlowError::Unsatisfied`]'s list when the graph is quiescent.
    pub fn blocked(&self) -> Vec<Blocked> {
        let mut waiters = Vec::new();
        for c in lock(&self.shared.collections).iter() {
            c.blocked(&mut waiters);
        }
        let mut by_step: HashMap<u64, Blocked> = HashMap::new();
        for (inst, coll, key) in waiters {
            by_step
                .entry(inst.id)
                .or_insert_with(|| Blocked {
                    step_collection: inst.collection().to_string(),
                    tag: inst.tag(),
                    missing: Vec::new(),
                })
                .missing
                .push((coll, key));
        }
        let mut blocked: Vec<Blocked> = by_step.into_values().collect();
        for b in &mut blocked {
            b.missing.sort();
        }
        blocked.sort_by(|a, b| (&a.step_collection, &a.tag).cmp(&(&b.step_collection, &b.tag)));
        blocked
    }

    /// Installs a multi-node layer's hook that brings received items and tags in: drainers
    /// call it between their batches of steps (so received data reaches the collections
    /// from compute participants while the graph runs). Replaces any previous hook; the
    /// graph drops it when dropped.
    pub fn set_poll(&self, hook: impl Fn(&mut Injector<'_>) + Send + Sync + 'static) {
        *lock(&self.shared.poll) = Some(Arc::new(hook));
        self.shared.has_poll.store(true, Ordering::Relaxed);
    }

    /// Runs `f` with an [`Injector`] from outside the steps (the environment); the steps its
    /// puts and prescriptions enable are queued for [`run`](Self::run) or [`wait`](Self::wait).
    pub fn inject<R>(&self, f: impl FnOnce(&mut Injector<'_>) -> R) -> R {
        let mut inj = Injector { shared: &self.shared, enabled: Vec::new() };
        let r = f(&mut inj);
        let enabled = std::mem::take(&mut inj.enabled);
        self.shared.queue(enabled);
        r
    }

    /// Whether steps are enabled and not yet run on this node.
    pub fn has_ready(&self) -> bool {
        self.shared.ready.len() > 0
    }

    /// The statistics so far (during a `wait`, `executed` counts the steps of drainers that
    /// have retired: each drainer adds its count when it finishes).
    pub fn stats(&self) -> Stats {
        self.shared.stats()
    }

    /// The recorded step executions, in completion order.
    pub fn timeline(&self) -> Vec<StepRecord> {
        lock(&self.shared.timeline).clone()
    }

    /// The timeline as Chrome trace-event JSON (format in [`timeline`](crate::timeline)).
    pub fn timeline_json(&self) -> serde_json::Value {
        let workers = self.shared.workers.load(Ordering::Relaxed).max(1);
        timeline::to_json(&self.shared.name, workers, &lock(&self.shared.timeline))
    }

    /// Writes [`timeline_json`](Self::timeline_json) to `path`.
    pub fn write_timeline(&self, path: impl AsRef<Path>) -> Result<(), FlowError> {
        let text = serde_json::to_string(&self.timeline_json()).map_err(std::io::Error::other)?;
        std::fs::write(path, text)?;
        Ok(())
    }
}

impl Drop for Graph {
    /// Breaks the reference cycles (steps → handles → graph state → waiting steps).
    fn drop(&mut self) {
        let sh = &self.shared;
        sh.has_poll.store(false, Ordering::Relaxed);
        drop(lock(&sh.poll).take());
        drop(sh.ready.clear());
        for c in lock(&sh.collections).drain(..) {
            c.clear();
        }
    }
}
