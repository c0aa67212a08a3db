//! Tuners: per step collection hints to the scheduler ([`Tuner`]) and the dependency
//! declarations they make ([`Deps`]).

use crate::items::Items;
use crate::step::Inst;
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::Arc;

type Probe = Box<dyn FnOnce(&Arc<Inst>) -> bool + Send>;

/// Items a step declares it will get, filled by [`Tuner::depends`].
///
/// Under [`Discipline::DependencyCounted`](crate::Discipline::DependencyCounted) a step is
/// scheduled only once every declared item is present, so it is never requeued for them.
#[derive(Default)]
pub struct Deps {
    pub(crate) probes: Vec<Probe>,
}

impl Deps {
    /// Declares that the step will get `key` from `items`.
    pub fn item<K, V>(&mut self, items: &Items<K, V>, key: K)
    where
        K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
        V: Send + Sync + 'static,
    {
        let coll = items.coll.clone();
        self.probes.push(Box::new(move |inst| coll.probe(key, inst)));
    }

    /// Number of declared items.
    pub fn len(&self) -> usize {
        self.probes.len()
    }

    /// Whether no item was declared.
    pub fn is_empty(&self) -> bool {
        self.probes.is_empty()
    }
}

/// Scheduling hints of one step collection (Intel CnC's step tuner). Every method has a
/// default, so `impl Tuner<K> for T {}` is the plain tuner.
pub trait Tuner<K>: Send + Sync {
    /// Declares the items the step for `tag` will get (see [`Deps`]).
    fn depends(&self, _tag: &K, _deps: &mut Deps) {}

    /// Priority of the step: among enabled steps, higher runs first (ties: first enabled first).
    fn priority(&self, _tag: &K) -> i64 {
        0
    }

    /// `true`: the step is scheduled as soon as it is prescribed, ignoring its declared
    /// dependencies (it is requeued if it finds an item missing).
    fn preschedule(&self, _tag: &K) -> bool {
        false
    }

    /// The node (process) the step should run on. On one node this is only recorded
    /// ([`Stats::compute_on`](crate::Stats::compute_on)).
    fn compute_on(&self, _tag: &K) -> usize {
        0
    }
}

/// The tuner with every default.
#[derive(Debug, Default, Clone, Copy)]
pub struct DefaultTuner;

impl<K> Tuner<K> for DefaultTuner {}
