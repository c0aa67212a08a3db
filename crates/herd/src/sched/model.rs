//! What the loom models of the bulk-steal schedulers (`mts.rs`, `lifo.rs`)
//! and the tests of the idle look (`mts.rs`, `deques.rs`) share: synthetic
//! machines, stand-in jobs, and the check that a shepherd never has two
//! remote stealers at once.

use super::JobRef;
use crate::placement::{plan, PlacementRequest};
use crate::shepherds::Shepherds;
use crate::sync::atomic::{AtomicUsize, Ordering};
use crate::topology::Topology;

/// The shepherds of the synthetic machine `desc` (hwloc's synthetic
/// description), one participant per PU.
pub(crate) fn machine(desc: &str) -> Shepherds {
    let topo = Topology::synthetic(desc).unwrap();
    let pl = plan(
        &topo,
        &PlacementRequest {
            num_threads: None,
            places: None,
            bind: Default::default(),
            dispatch: Default::default(),
            reserve: 0,
        },
    )
    .unwrap();
    Shepherds::plan(&topo, &pl, None, None)
}

/// Two shepherds of two workers (a synthetic machine of two L3s).
#[cfg_attr(not(loom), allow(dead_code))]
pub(crate) fn layout() -> Shepherds {
    machine("l3:2 core:2 pu:1")
}

unsafe fn nothing(_: *const ()) {}

/// Job number `id` (never executed: the models only move jobs).
pub(crate) fn job(id: usize) -> JobRef {
    // SAFETY: the models never execute these jobs; they only move them.
    unsafe { JobRef::new(id as *const (), nothing) }
}

/// The number of a job made by [`job`].
pub(crate) fn id(j: JobRef) -> usize {
    j.data() as usize
}

/// Held by a worker inside its shepherd's remote steal; a second one at the
/// same time fails the model.
#[cfg_attr(not(loom), allow(dead_code))]
pub(crate) struct OneStealer<'a>(&'a AtomicUsize);

#[cfg_attr(not(loom), allow(dead_code))]
impl<'a> OneStealer<'a> {
    pub(crate) fn enter(n: &'a AtomicUsize) -> Self {
        assert_eq!(n.fetch_add(1, Ordering::SeqCst), 0, "two workers steal for one shepherd");
        OneStealer(n)
    }
}

impl Drop for OneStealer<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
