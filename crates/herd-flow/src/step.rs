//! Step collections ([`Steps`]), step instances and the context a step runs with ([`Ctx`]).
//!
//! A step's puts (items and tags) and its get-count decrements are buffered in its [`Ctx`]
//! and committed only when the step returns `Ok`. A step suspended on a missing item (or
//! failed) therefore has no effect, and re-running it from the start is safe — the
//! requeue discipline needs this, since Intel CnC's rule "get everything before putting
//! anything" is not checked by the compiler.

use crate::error::{FlowError, Missing, StepError};
use crate::graph::Shared;
use crate::items::{Got, Items};
use crate::sync::{AtomicU32, AtomicUsize, Ordering};
use crate::tags::Tags;
use crate::tuner::Tuner;
use std::cell::{Cell, RefCell};
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::{Arc, OnceLock};

pub(crate) type StepFn<K> = Box<dyn Fn(&K, &Ctx<'_>) -> Result<(), StepError> + Send + Sync>;

pub(crate) struct StepColl<K> {
    pub(crate) name: Arc<str>,
    pub(crate) f: StepFn<K>,
    pub(crate) tuner: Box<dyn Tuner<K>>,
    /// Set by a multi-node layer: tags whose `compute_on` is another node go there.
    route: OnceLock<Route<K>>,
}

/// Sends a tag to the node it names (the node's number, the tag, and the number of the
/// memoizing tag collection it was put into, if it was).
type Forward<K> = Box<dyn Fn(usize, &K, Option<u32>) + Send + Sync>;

/// Whether (memoizing tag collection, tag) comes to this node's steps for the first time.
type First<K> = Box<dyn Fn(u32, &K) -> bool + Send + Sync>;

/// Where a step collection's remote tags go: this node's number and the forwarder; and
/// the tags of memoizing collections already prescribed here, from any node: a memoizing
/// tag collection ignores only the tags put *on its node* again, so a tag that two nodes
/// put is deduplicated where its step runs.
struct Route<K> {
    node: usize,
    forward: Forward<K>,
    first: First<K>,
}

/// The tag-typed part of a step instance.
pub(crate) trait Body: Send + Sync {
    fn run(&self, ctx: &Ctx<'_>) -> Result<(), StepError>;
    fn tag(&self) -> String;
    /// The step collection's name.
    fn collection(&self) -> &str;
}

struct StepBody<K> {
    coll: Arc<StepColl<K>>,
    tag: K,
}

impl<K: Debug + Send + Sync> Body for StepBody<K> {
    fn run(&self, ctx: &Ctx<'_>) -> Result<(), StepError> {
        (self.coll.f)(&self.tag, ctx)
    }
    fn tag(&self) -> String {
        format!("{:?}", self.tag)
    }
    fn collection(&self) -> &str {
        &self.coll.name
    }
}

/// One prescribed step: a step collection and a tag, in one allocation with its scheduling
/// state (`Arc<InstOf<StepBody<K>>>` coerces to `Arc<Inst>`).
pub(crate) struct InstOf<B: ?Sized> {
    pub(crate) id: u64,
    pub(crate) priority: i64,
    /// Items still missing (dependency counting) or 1 while suspended on a get.
    pub(crate) pending: AtomicUsize,
    pub(crate) requeues: AtomicU32,
    body: B,
}

/// A step instance of any tag type.
pub(crate) type Inst = InstOf<dyn Body>;

impl Inst {
    /// A step instance with `pending` = 1 (the prescriber's count, see `items.rs`).
    pub(crate) fn new_arc(id: u64, priority: i64, body: impl Body + 'static) -> Arc<Inst> {
        Arc::new(InstOf { id, priority, pending: AtomicUsize::new(1), requeues: AtomicU32::new(0), body })
    }

    pub(crate) fn tag(&self) -> String {
        self.body.tag()
    }

    /// The step collection's name.
    pub(crate) fn collection(&self) -> &str {
        self.body.collection()
    }

    /// Drops one pending count; `true` when it was the last (the step is enabled).
    pub(crate) fn release(&self) -> bool {
        self.pending.fetch_sub(1, Ordering::AcqRel) == 1
    }

    pub(crate) fn run(&self, ctx: &Ctx<'_>) -> Result<(), StepError> {
        self.body.run(ctx)
    }
}

/// A handle to a step collection (cheap to clone); attach it to a tag collection with
/// [`Tags::prescribes`].
pub struct Steps<K> {
    pub(crate) coll: Arc<StepColl<K>>,
}

impl<K> Clone for Steps<K> {
    fn clone(&self) -> Self {
        Steps { coll: self.coll.clone() }
    }
}

impl<K: Clone + Debug + Send + Sync + 'static> Steps<K> {
    pub(crate) fn new<F, T>(name: &str, tuner: T, f: F) -> Self
    where
        F: Fn(&K, &Ctx<'_>) -> Result<(), StepError> + Send + Sync + 'static,
        T: Tuner<K> + 'static,
    {
        Steps {
            coll: Arc::new(StepColl {
                name: name.into(),
                f: Box::new(f),
                tuner: Box::new(tuner),
                route: OnceLock::new(),
            }),
        }
    }

    /// Makes this node `node` of a multi-node graph: from now on a tag whose
    /// [`Tuner::compute_on`] is another node is not prescribed here but handed to
    /// `forward(node, &tag, memo)` (which sends it there, where it is prescribed through
    /// [`Injector::prescribe_from`](crate::Injector::prescribe_from) with `memo`). `memo` is
    /// the number of the tag collection the tag was put into when that collection memoizes
    /// ([`Tags::memoize`](crate::Tags::memoize)): each node prescribes a step for such a tag
    /// once, whichever nodes put it. Only the first call has an effect.
    pub fn route(&self, node: usize, forward: impl Fn(usize, &K, Option<u32>) + Send + Sync + 'static)
    where
        K: Eq + Hash,
    {
        let seen = std::sync::Mutex::new(std::collections::HashSet::<(u32, K)>::new());
        let first: First<K> = Box::new(move |coll, tag| {
            seen.lock().unwrap_or_else(|e| e.into_inner()).insert((coll, tag.clone()))
        });
        let _ = self.coll.route.set(Route { node, forward: Box::new(forward), first });
    }

    /// False when `memo` names a memoizing tag collection and this routed collection
    /// already prescribed `tag` from it on this node (see [`Steps::route`]).
    pub(crate) fn first_here(&self, memo: Option<u32>, tag: &K) -> bool {
        match (self.coll.route.get(), memo) {
            (Some(r), Some(coll)) => (r.first)(coll, tag),
            _ => true,
        }
    }

    /// The node [`Tuner::compute_on`] names for `tag`.
    pub fn compute_on(&self, tag: &K) -> usize {
        self.coll.tuner.compute_on(tag)
    }

    /// The collection's name.
    pub fn name(&self) -> &str {
        &self.coll.name
    }

    /// Creates the instance for `tag` and schedules it according to `shared`'s discipline.
    /// Routed to another node when the collection has a route and `compute_on` names one.
    /// `memo`: the number of the memoizing tag collection the tag was put into, if it was.
    pub(crate) fn prescribe(&self, shared: &Shared, tag: K, memo: Option<u32>, enabled: &mut Vec<Arc<Inst>>) {
        let c = &self.coll;
        let node = c.tuner.compute_on(&tag);
        shared.record_compute_on(node);
        if let Some(r) = c.route.get() {
            if node != r.node {
                (r.forward)(node, &tag, memo);
                return;
            }
        }
        if !self.first_here(memo, &tag) {
            shared.duplicate_tag();
            return;
        }
        self.prescribe_here(shared, tag, enabled);
    }

    /// Creates the instance for `tag` on this node (no routing).
    pub(crate) fn prescribe_here(&self, shared: &Shared, tag: K, enabled: &mut Vec<Arc<Inst>>) {
        let c = &self.coll;
        let priority = c.tuner.priority(&tag);
        let use_deps = shared.counts_dependencies() && !c.tuner.preschedule(&tag);
        let mut deps = crate::tuner::Deps::default();
        if use_deps {
            c.tuner.depends(&tag, &mut deps);
        }
        let inst = Inst::new_arc(shared.next_id(), priority, StepBody { coll: c.clone(), tag });
        shared.prescribed();
        for probe in deps.probes {
            probe(&inst);
        }
        if inst.release() {
            enabled.push(inst);
        }
    }
}

type PutFn<'a> = Box<dyn FnOnce(&Shared, u64, &mut Vec<Arc<Inst>>) -> Result<(), FlowError> + 'a>;

/// The context of one step execution: gets items, puts items and tags.
pub struct Ctx<'a> {
    pub(crate) shared: &'a Arc<Shared>,
    pub(crate) inst: &'a Arc<Inst>,
    pub(crate) puts: RefCell<Vec<PutFn<'a>>>,
    pub(crate) gets: RefCell<Vec<Box<dyn FnOnce() + 'a>>>,
    pub(crate) deps: RefCell<Vec<u64>>,
    pub(crate) suspended: Cell<bool>,
    pub(crate) fatal: RefCell<Option<FlowError>>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(shared: &'a Arc<Shared>, inst: &'a Arc<Inst>) -> Self {
        Ctx {
            shared,
            inst,
            puts: RefCell::new(Vec::new()),
            gets: RefCell::new(Vec::new()),
            deps: RefCell::new(Vec::new()),
            suspended: Cell::new(false),
            fatal: RefCell::new(None),
        }
    }

    /// Gets an item: the shared value, or `Err(Missing)` when it was not put yet — return it
    /// with `?`; the step is then re-run from the start when the item is put.
    pub fn get<K, V>(&self, items: &Items<K, V>, key: &K) -> Result<Arc<V>, Missing>
    where
        K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
        V: Send + Sync + 'static,
    {
        let missing = || Missing { collection: items.coll.name.to_string(), key: format!("{key:?}") };
        match items.coll.get_or_wait(key, self.inst) {
            Got::Value(v, producer) => {
                if producer != 0 {
                    self.deps.borrow_mut().push(producer);
                }
                if items.coll.counts_gets() {
                    let coll = items.coll.clone();
                    let key = key.clone();
                    self.gets.borrow_mut().push(Box::new(move || coll.count_get(&key)));
                }
                Ok(v)
            }
            Got::Absent => {
                self.suspended.set(true);
                Err(missing())
            }
            Got::Freed => {
                let m = missing();
                self.fatal
                    .borrow_mut()
                    .get_or_insert(FlowError::Freed { collection: m.collection.clone(), key: m.key.clone() });
                self.suspended.set(true);
                Err(m)
            }
        }
    }

    /// Puts an item (committed when the step returns `Ok`). A key already put is reported
    /// at once as [`FlowError::DoublePut`]; two puts of one key by concurrent steps are
    /// caught at commit and stop the graph with the same error.
    pub fn put<K, V>(&self, items: &Items<K, V>, key: K, value: V) -> Result<(), FlowError>
    where
        K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
        V: Send + Sync + 'static,
    {
        if items.coll.is_put(&key) {
            return Err(FlowError::DoublePut {
                collection: items.coll.name.to_string(),
                key: format!("{key:?}"),
            });
        }
        let coll = items.coll.clone();
        self.puts.borrow_mut().push(Box::new(move |sh, id, en| coll.put_counted(sh, key, value, id, en)));
        Ok(())
    }

    /// Puts a tag (committed when the step returns `Ok`): prescribes the attached steps.
    pub fn put_tag<K>(&self, tags: &Tags<K>, tag: K)
    where
        K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
    {
        let tags = tags.clone();
        self.puts.borrow_mut().push(Box::new(move |sh, _, en| {
            tags.prescribe_into(sh, tag, en);
            Ok(())
        }));
    }

    /// The id of this step instance (as in the timeline).
    pub fn step_id(&self) -> u64 {
        self.inst.id
    }

    /// Commits the buffered puts and get counts; returns the steps they enabled.
    pub(crate) fn commit(self, enabled: &mut Vec<Arc<Inst>>) -> Result<(), FlowError> {
        for g in self.gets.into_inner() {
            g();
        }
        for p in self.puts.into_inner() {
            p(self.shared, self.inst.id, enabled)?;
        }
        Ok(())
    }
}
