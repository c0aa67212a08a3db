//! Item collections: single-assignment maps from keys to shared values.
//!
//! One mutex per collection guards a map of entries. An entry is created by the first
//! `put` or by the first step that waits for the key; it holds the value (an `Arc`, so a
//! `get` shares it), the id of the step that produced it, the number of gets left before
//! it is freed, and the steps waiting for it. A `put` takes the waiters out under the lock
//! and decrements each one's pending count outside it; the step whose count reaches zero
//! is enabled.

use crate::error::FlowError;
use crate::graph::Shared;
use crate::step::Inst;
use std::collections::hash_map::Entry as MapEntry;
use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

type KeyFn<K> = Box<dyn Fn(&K) -> usize + Send + Sync>;

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

pub(crate) struct ItemColl<K, V> {
    pub(crate) name: Arc<str>,
    map: Mutex<HashMap<K, Entry<V>>>,
    get_count: OnceLock<KeyFn<K>>,
    consumed_on: OnceLock<KeyFn<K>>,
    live: AtomicUsize,
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
    fn lock(&self) -> MutexGuard<'_, HashMap<K, Entry<V>>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Puts `value`; steps whose last missing item this was are pushed on `enabled`.
    pub(crate) fn put(
        &self,
        shared: &Shared,
        key: K,
        value: V,
        producer: u64,
        enabled: &mut Vec<Arc<Inst>>,
    ) -> Result<(), FlowError> {
        let gets = self.get_count.get().map_or(0, |f| f(&key));
        if let Some(f) = self.consumed_on.get() {
            shared.record_consumed_on(f(&key));
        }
        let waiters = {
            let mut map = self.lock();
            let entry = match map.entry(key) {
                MapEntry::Occupied(e) if e.get().put => {
                    return Err(FlowError::DoublePut {
                        collection: self.name.to_string(),
                        key: format!("{:?}", e.key()),
                    })
                }
                MapEntry::Occupied(e) => e.into_mut(),
                MapEntry::Vacant(e) => e.insert(Entry::empty()),
            };
            entry.value = Some(Arc::new(value));
            entry.put = true;
            entry.producer = producer;
            entry.gets_left = gets;
            self.live.fetch_add(1, Ordering::Relaxed);
            std::mem::take(&mut entry.waiters)
        };
        for w in waiters {
            w.satisfied(&self.name);
            if w.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
                enabled.push(w);
            }
        }
        Ok(())
    }

    /// Whether `key` was put (and is not already a double put).
    pub(crate) fn is_put(&self, key: &K) -> bool {
        self.lock().get(key).is_some_and(|e| e.put)
    }

    /// A step's `get`: the value, or registers `inst` as a waiter.
    pub(crate) fn get_or_wait(&self, key: &K, inst: &Arc<Inst>, shared: &Shared) -> Got<V> {
        let mut map = self.lock();
        match map.get_mut(key) {
            Some(e) if e.put => match &e.value {
                Some(v) => Got::Value(v.clone(), e.producer),
                None => Got::Freed,
            },
            Some(e) => {
                Self::register(e, inst, &self.name, key, shared);
                Got::Absent
            }
            None => {
                let mut e = Entry::empty();
                Self::register(&mut e, inst, &self.name, key, shared);
                map.insert(key.clone(), e);
                Got::Absent
            }
        }
    }

    fn register(e: &mut Entry<V>, inst: &Arc<Inst>, name: &Arc<str>, key: &K, shared: &Shared) {
        // Counted before the waiter is visible to a put (both under the collection lock).
        inst.pending.fetch_add(1, Ordering::AcqRel);
        inst.add_missing(name, format!("{key:?}"));
        shared.add_waiting(inst);
        e.waiters.push(inst.clone());
    }

    /// Dependency probe: `true` if present, else registers `inst` as a waiter.
    pub(crate) fn probe(&self, key: K, inst: &Arc<Inst>) -> bool {
        let mut map = self.lock();
        let e = map.entry(key.clone()).or_insert_with(Entry::empty);
        if e.put {
            return true;
        }
        inst.pending.fetch_add(1, Ordering::AcqRel);
        inst.add_missing(&self.name, format!("{key:?}"));
        e.waiters.push(inst.clone());
        false
    }

    /// Counts one completed get of `key`; frees the value after the last declared one.
    pub(crate) fn count_get(&self, key: &K) {
        let mut map = self.lock();
        if let Some(e) = map.get_mut(key) {
            if e.gets_left > 0 {
                e.gets_left -= 1;
                if e.gets_left == 0 && e.value.take().is_some() {
                    self.live.fetch_sub(1, Ordering::Relaxed);
                }
            }
        }
    }

    pub(crate) fn clear_waiters(&self) {
        for e in self.lock().values_mut() {
            e.waiters.clear();
        }
    }
}

/// Type-erased view used by the graph to break reference cycles when it is dropped.
pub(crate) trait Clear: Send + Sync {
    fn clear(&self);
}

impl<K, V> Clear for ItemColl<K, V>
where
    K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
    V: Send + Sync + 'static,
{
    fn clear(&self) {
        self.clear_waiters();
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
        let coll = Arc::new(ItemColl {
            name: name.into(),
            map: Mutex::new(HashMap::new()),
            get_count: OnceLock::new(),
            consumed_on: OnceLock::new(),
            live: AtomicUsize::new(0),
        });
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
    /// first call has an effect.
    pub fn with_consumed_on(self, f: impl Fn(&K) -> usize + Send + Sync + 'static) -> Self {
        let _ = self.coll.consumed_on.set(Box::new(f));
        self
    }

    /// The collection's name.
    pub fn name(&self) -> &str {
        &self.coll.name
    }

    /// Puts an item from the environment. Steps waiting for it become enabled and run at the
    /// next [`Graph::wait`](crate::Graph::wait).
    pub fn put(&self, key: K, value: V) -> Result<(), FlowError> {
        let mut enabled = Vec::new();
        self.coll.put(&self.shared, key, value, 0, &mut enabled)?;
        self.shared.enqueue_all(enabled);
        Ok(())
    }

    /// The item, if it was put and not freed (does not count as a get).
    pub fn get(&self, key: &K) -> Option<Arc<V>> {
        self.coll.lock().get(key).and_then(|e| e.value.clone())
    }

    /// Whether `key` was put (even if freed since).
    pub fn contains(&self, key: &K) -> bool {
        self.coll.is_put(key)
    }

    /// Number of items held (put and not freed by their get-count).
    pub fn len(&self) -> usize {
        self.coll.live.load(Ordering::Relaxed)
    }

    /// Whether no item is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
