//! Tag collections: putting a tag prescribes one step of every attached step collection.

use crate::graph::Shared;
use crate::items::Collection;
use crate::step::{Inst, Steps};
use std::collections::HashSet;
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};

/// Prescribes a tag's step (the tag, and the collection's number if it memoizes).
type Prescriber<K> = Box<dyn Fn(&Shared, K, Option<u32>, &mut Vec<Arc<Inst>>) + Send + Sync>;

pub(crate) struct TagColl<K> {
    pub(crate) name: Arc<str>,
    /// The collection's number in its graph (the same on every node).
    id: std::sync::OnceLock<u32>,
    prescribes: Mutex<Vec<Arc<Prescriber<K>>>>,
    memo: Mutex<Option<HashSet<K>>>,
}

impl<K: Send + Sync> Collection for TagColl<K> {
    fn clear(&self) {
        self.prescribes.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

/// A handle to a tag collection of a [`Graph`](crate::Graph) (cheap to clone).
pub struct Tags<K> {
    pub(crate) coll: Arc<TagColl<K>>,
    pub(crate) shared: Arc<Shared>,
}

impl<K> Clone for Tags<K> {
    fn clone(&self) -> Self {
        Tags { coll: self.coll.clone(), shared: self.shared.clone() }
    }
}

impl<K> Tags<K>
where
    K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
{
    pub(crate) fn new(name: &str, shared: Arc<Shared>) -> Self {
        let coll = Arc::new(TagColl {
            name: name.into(),
            id: std::sync::OnceLock::new(),
            prescribes: Mutex::new(Vec::new()),
            memo: Mutex::new(None),
        });
        let id = shared.register_collection(coll.clone());
        let _ = coll.id.set(u32::try_from(id).expect("fewer than 2³² collections"));
        Tags { coll, shared }
    }

    /// The collection's name.
    pub fn name(&self) -> &str {
        &self.coll.name
    }

    /// Attaches a step collection: every tag put from now on prescribes one of its steps.
    pub fn prescribes(&self, steps: &Steps<K>) -> &Self {
        let steps = steps.clone();
        let p: Prescriber<K> = Box::new(move |sh, tag, memo, en| steps.prescribe(sh, tag, memo, en));
        self.lock().push(Arc::new(p));
        self
    }

    /// Memoizes tags: a tag put again is ignored (counted in [`Stats::duplicate_tags`](crate::Stats)).
    /// In a multi-node graph ([`Steps::route`]) this holds for the whole graph: each node
    /// ignores the tags put on it before, and a step's node ignores a tag another node put
    /// too.
    pub fn memoize(&self) -> &Self {
        let mut m = self.coll.memo.lock().unwrap_or_else(|e| e.into_inner());
        m.get_or_insert_with(HashSet::new);
        self
    }

    /// Puts a tag from the environment; its steps are run by a [`Graph::wait`](crate::Graph::wait)
    /// in progress (the put may come from another thread) if it has not returned yet, else by
    /// the next one.
    pub fn put(&self, tag: K) {
        let mut enabled = Vec::new();
        self.prescribe_into(&self.shared, tag, &mut enabled);
        self.shared.queue(enabled);
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Arc<Prescriber<K>>>> {
        self.coll.prescribes.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn prescribe_into(&self, shared: &Shared, tag: K, enabled: &mut Vec<Arc<Inst>>) {
        let memo = {
            let mut memo = self.coll.memo.lock().unwrap_or_else(|e| e.into_inner());
            match memo.as_mut() {
                Some(set) => {
                    if !set.insert(tag.clone()) {
                        shared.duplicate_tag();
                        return;
                    }
                    self.coll.id.get().copied()
                }
                None => None,
            }
        };
        let ps: Vec<_> = self.lock().clone();
        for p in &ps {
            p(shared, tag.clone(), memo, enabled);
        }
    }
}
