//! Item collections: single-assignment maps from keys to shared values.
//!
//! The collection is a set of shards (a key's hash picks one), each a mutex over a map of
//! entries, so steps on different cores rarely meet at one lock. Everything below happens
//! under the lock of the key's shard. (The shards are written here rather than taken from a
//! concurrent map crate because the waiter registration must happen inside the shard's
//! critical section, and the protocol is model-checked under loom.) An entry is created by the first
//! `put` or by the first step that waits for the key; it holds the value (an `Arc`, so a
//! `get` shares it), the id of the step that produced it, the number of gets left before
//! it is freed, and the steps waiting for it. A `put` takes the waiters out under the lock
//! and decrements each one's pending count outside it; the step whose count reaches zero
//! is enabled. A waiter is counted (its `pending` incremented) under the same lock that
//! makes it visible to a put, so a put can never decrement a count before its increment;
//! the prescriber holds one extra count while it probes, so a step cannot be enabled
//! before all its dependencies were probed (model-checked in `models.rs`).
//!
//! The waiter lists are also the record of what blocked steps lack: at quiescence every
//! step still waiting sits in the list of each absent item it waits for
//! ([`Collection::blocked`]), so nothing else is kept per step.

use crate::error::FlowError;
use crate::graph::Shared;
use crate::step::Inst;
use crate::sync::{lock, Mutex, MutexGuard, Ordering};
use crossbeam_utils::CachePadded;
use std::collections::hash_map::Entry as MapEntry;
use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher, Hash};
use std::sync::{Arc, OnceLock};

/// Shards per collection (a power of two; few under loom, to keep models small).
const SHARDS: usize = if cfg!(loom) { 2 } else { 64 };

type KeyFn<K> = Box<dyn Fn(&K) -> usize + Send + Sync>;
type NodesFn<K> = Box<dyn Fn(&K) -> Vec<usize> + Send + Sync>;
type PutHook<K, V> = Box<dyn Fn(&K, &Arc<V>, &[usize]) + Send + Sync>;

struct Entry<V> {
    value: Option<Arc<V>>,
    put: bool,
    producer: u64,
    gets_left: usize,
    waiters: Vec<Arc<Inst>>,
}

impl<V> Entry<V> {
    fn empty() -> Self {
        Entry { value: None, put: false, producer: 0, gets_left: 0, waiters: Vec::new() }
    }
}

/// One shard: entries and the number of values it holds.
struct Shard<K, V> {
    map: HashMap<K, Entry<V>>,
    live: usize,
}

/// A shard behind its lock, alone on its cache line(s).
type Locked<K, V> = CachePadded<Mutex<Shard<K, V>>>;

pub(crate) struct ItemColl<K, V> {
    pub(crate) name: Arc<str>,
    shards: Box<[Locked<K, V>]>,
    /// Picks the shard; fixed keys (deterministic, as loom needs), the maps inside the
    /// shards have their own random ones.
    hasher: BuildHasherDefault<DefaultHasher>,
    get_count: OnceLock<KeyFn<K>>,
    consumed_on: OnceLock<NodesFn<K>>,
    /// Called after each put from a step or the environment (not after [`Injector`] puts):
    /// the hook of a multi-node layer that forwards items to the nodes consuming them.
    ///
    /// [`Injector`]: crate::Injector
    on_put: OnceLock<PutHook<K, V>>,
}

/// What a `get` inside a step found.
pub(crate) enum Got<V> {
    Value(Arc<V>, u64),
    /// Absent: the step was registered as a waiter.
    Absent,
    Freed,
}

impl<K, V> ItemColl<K, V>
where
    K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
    V: Send + Sync + 'static,
{
    pub(crate) fn new(name: &str) -> Self {
        ItemColl {
            name: name.into(),
            shards: (0..SHARDS)
                .map(|_| CachePadded::new(Mutex::new(Shard { map: HashMap::new(), live: 0 })))
                .collect(),
            hasher: BuildHasherDefault::default(),
            get_count: OnceLock::new(),
            consumed_on: OnceLock::new(),
            on_put: OnceLock::new(),
        }
    }

    /// The locked shard of `key`.
    fn shard(&self, key: &K) -> MutexGuard<'_, Shard<K, V>> {
        lock(&self.shards[self.hasher.hash_one(key) as usize % SHARDS])
    }

    /// Every shard in turn, locked (for whole-collection views).
    fn each_shard(&self, mut f: impl FnMut(&mut Shard<K, V>)) {
        for s in self.shards.iter() {
            f(&mut lock(s));
        }
    }

    /// Puts `value`; steps whose last missing item this was are pushed on `enabled`.
    pub(crate) fn put(
        &self,
        key: K,
        value: V,
        producer: u64,
        enabled: &mut Vec<Arc<Inst>>,
    ) -> Result<(), FlowError> {
        self.put_arc(key, Arc::new(value), producer, enabled)
    }

    /// [`put`](Self::put) of a value already in an `Arc`.
    pub(crate) fn put_arc(
        &self,
        key: K,
        value: Arc<V>,
        producer: u64,
        enabled: &mut Vec<Arc<Inst>>,
    ) -> Result<(), FlowError> {
        let gets = self.get_count.get().map_or(0, |f| f(&key));
        let waiters = {
            let mut shard = self.shard(&key);
            let entry = match shard.map.entry(key) {
                MapEntry::Occupied(e) if e.get().put => {
                    return Err(FlowError::DoublePut {
                        collection: self.name.to_string(),
                        key: format!("{:?}", e.key()),
                    })
                }
                MapEntry::Occupied(e) => e.into_mut(),
                MapEntry::Vacant(e) => e.insert(Entry::empty()),
            };
            entry.value = Some(value);
            entry.put = true;
            entry.producer = producer;
            entry.gets_left = gets;
            let waiters = std::mem::take(&mut entry.waiters);
            shard.live += 1;
            waiters
        };
        for w in waiters {
            if w.release() {
                enabled.push(w);
            }
        }
        Ok(())
    }

    /// [`put`](Self::put), counting the `consumed_on` answer for the key in `shared`'s stats,
    /// then calling the put hook (if any) with the stored value.
    pub(crate) fn put_counted(
        &self,
        shared: &Shared,
        key: K,
        value: V,
        producer: u64,
        enabled: &mut Vec<Arc<Inst>>,
    ) -> Result<(), FlowError> {
        let nodes = self.consumed_on.get().map_or_else(Vec::new, |f| f(&key));
        for &node in &nodes {
            shared.record_consumed_on(node);
        }
        let value = Arc::new(value);
        match self.on_put.get() {
            None => self.put_arc(key, value, producer, enabled),
            Some(hook) => {
                self.put_arc(key.clone(), value.clone(), producer, enabled)?;
                hook(&key, &value, &nodes);
                Ok(())
            }
        }
    }

    /// Whether `key` was put (and is not already a double put).
    pub(crate) fn is_put(&self, key: &K) -> bool {
        self.shard(key).map.get(key).is_some_and(|e| e.put)
    }

    /// A step's `get`: the value, or registers `inst` as a waiter.
    pub(crate) fn get_or_wait(&self, key: &K, inst: &Arc<Inst>) -> Got<V> {
        let mut shard = self.shard(key);
        match shard.map.get_mut(key) {
            Some(e) if e.put => match &e.value {
                Some(v) => Got::Value(v.clone(), e.producer),
                None => Got::Freed,
            },
            Some(e) => {
                Self::register(e, inst);
                Got::Absent
            }
            None => {
                let mut e = Entry::empty();
                Self::register(&mut e, inst);
                shard.map.insert(key.clone(), e);
                Got::Absent
            }
        }
    }

    /// Counts `inst` as waiting for the entry and lists it there; under the shard's lock,
    /// so the count is up before a put can see the waiter.
    fn register(e: &mut Entry<V>, inst: &Arc<Inst>) {
        inst.pending.fetch_add(1, Ordering::AcqRel);
        e.waiters.push(inst.clone());
    }

    /// Dependency probe: `true` if present, else registers `inst` as a waiter.
    pub(crate) fn probe(&self, key: K, inst: &Arc<Inst>) -> bool {
        let mut shard = self.shard(&key);
        let e = shard.map.entry(key).or_insert_with(Entry::empty);
        if e.put {
            return true;
        }
        Self::register(e, inst);
        false
    }

    /// Whether the collection frees items after a get-count (else gets are not counted).
    pub(crate) fn counts_gets(&self) -> bool {
        self.get_count.get().is_some()
    }

    /// Counts one completed get of `key`; frees the value after the last declared one.
    pub(crate) fn count_get(&self, key: &K) {
        let mut shard = self.shard(key);
        if let Some(e) = shard.map.get_mut(key) {
            if e.gets_left > 0 {
                e.gets_left -= 1;
                if e.gets_left == 0 && e.value.take().is_some() {
                    shard.live -= 1;
                }
            }
        }
    }

    pub(crate) fn clear_waiters(&self) {
        self.each_shard(|s| s.map.values_mut().for_each(|e| e.waiters.clear()));
    }
}

/// Type-erased view of a collection, for the graph.
pub(crate) trait Collection: Send + Sync {
    /// Drops the collection's references to steps (the graph breaks its reference cycles
    /// — steps → handles → graph state → waiting steps — when it is dropped).
    fn clear(&self);
    /// Appends `(step, collection, key)` for every step waiting for an absent item.
    fn blocked(&self, _out: &mut Vec<(Arc<Inst>, String, String)>) {}
}

impl<K, V> Collection for ItemColl<K, V>
where
    K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
    V: Send + Sync + 'static,
{
    fn clear(&self) {
        self.clear_waiters();
    }
    fn blocked(&self, out: &mut Vec<(Arc<Inst>, String, String)>) {
        self.each_shard(|s| {
            for (k, e) in &s.map {
                for w in &e.waiters {
                    out.push((w.clone(), self.name.to_string(), format!("{k:?}")));
                }
            }
        });
    }
}

/// A handle to an item collection of a [`Graph`](crate::Graph) (cheap to clone).
///
/// Items are single-assignment: a second `put` of a key is [`FlowError::DoublePut`]. Inside
/// a step use [`Ctx::get`](crate::Ctx::get) and [`Ctx::put`](crate::Ctx::put); the methods
/// here are for the environment (before or after [`Graph::wait`](crate::Graph::wait)).
pub struct Items<K, V> {
    pub(crate) coll: Arc<ItemColl<K, V>>,
    pub(crate) shared: Arc<Shared>,
}

impl<K, V> Clone for Items<K, V> {
    fn clone(&self) -> Self {
        Items { coll: self.coll.clone(), shared: self.shared.clone() }
    }
}

impl<K, V> Items<K, V>
where
    K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
    V: Send + Sync + 'static,
{
    pub(crate) fn new(name: &str, shared: Arc<Shared>) -> Self {
        let coll = Arc::new(ItemColl::new(name));
        shared.register_collection(coll.clone());
        Items { coll, shared }
    }

    /// Frees each item after its `f(key)`-th get by a step (0: never freed). Set it before
    /// the first put; only the first call has an effect.
    pub fn with_get_count(self, f: impl Fn(&K) -> usize + Send + Sync + 'static) -> Self {
        let _ = self.coll.get_count.set(Box::new(f));
        self
    }

    /// The node each item will be consumed on (a hook for a multi-node layer; on one node the
    /// answers are only counted in [`Stats::consumed_on`](crate::Stats::consumed_on)). Only the
    /// first call of this or [`with_consumers`](Self::with_consumers) has an effect.
    pub fn with_consumed_on(self, f: impl Fn(&K) -> usize + Send + Sync + 'static) -> Self {
        let _ = self.coll.consumed_on.set(Box::new(move |k| vec![f(k)]));
        self
    }

    /// The nodes each item will be consumed on, when there may be several (each answer is
    /// counted in [`Stats::consumed_on`](crate::Stats::consumed_on); a multi-node layer
    /// forwards the item to each of them). Only the first call of this or
    /// [`with_consumed_on`](Self::with_consumed_on) has an effect.
    pub fn with_consumers(self, f: impl Fn(&K) -> Vec<usize> + Send + Sync + 'static) -> Self {
        let _ = self.coll.consumed_on.set(Box::new(f));
        self
    }

    /// The nodes `key` will be consumed on, as [`with_consumed_on`](Self::with_consumed_on) or
    /// [`with_consumers`](Self::with_consumers) answer (empty when neither was set).
    pub fn consumed_on(&self, key: &K) -> Vec<usize> {
        self.coll.consumed_on.get().map_or_else(Vec::new, |f| f(key))
    }

    /// A hook called with each item put on this node by a step (at its commit) or by the
    /// environment, after it is stored, with the nodes [`consumed_on`](Self::consumed_on)
    /// names for it — not with items put through an
    /// [`Injector`](crate::Injector), which are those a multi-node layer received. The
    /// multi-node layer forwards items to the nodes that consume them with it. Only the
    /// first call has an effect.
    pub fn on_put(&self, hook: impl Fn(&K, &Arc<V>, &[usize]) + Send + Sync + 'static) {
        let _ = self.coll.on_put.set(Box::new(hook));
    }

    /// The collection's name.
    pub fn name(&self) -> &str {
        &self.coll.name
    }

    /// Puts an item from the environment. Steps waiting for it become enabled; a
    /// [`Graph::wait`](crate::Graph::wait) in progress (the put may come from another thread)
    /// runs them if it has not returned yet, else the next one does.
    pub fn put(&self, key: K, value: V) -> Result<(), FlowError> {
        let mut enabled = Vec::new();
        self.coll.put_counted(&self.shared, key, value, 0, &mut enabled)?;
        self.shared.queue(enabled);
        Ok(())
    }

    /// The item, if it was put and not freed (does not count as a get).
    pub fn get(&self, key: &K) -> Option<Arc<V>> {
        self.coll.shard(key).map.get(key).and_then(|e| e.value.clone())
    }

    /// Whether `key` was put (even if freed since).
    pub fn contains(&self, key: &K) -> bool {
        self.coll.is_put(key)
    }

    /// Number of items held (put and not freed by their get-count).
    pub fn len(&self) -> usize {
        let mut n = 0;
        self.coll.each_shard(|s| n += s.live);
        n
    }

    /// Whether no item is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
