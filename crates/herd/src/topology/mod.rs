//! What herd knows about the machine: PUs, cores, caches, packages and NUMA
//! nodes, restricted to the PUs this process may use.
//!
//! The model is plain data (so that it can be built from a real machine through
//! hwloc, from an hwloc synthetic description, and printed or serialised), plus
//! the [`Distance`] between two PUs that drives every placement decision.
//!
//! * [`Topology::detect`] reads the machine (hwloc, restricted to the allowed
//!   cpuset *and* the process's current affinity mask, so `taskset` and cgroups
//!   are honoured);
//! * [`Topology::synthetic`] builds a machine from a description such as
//!   `pack:4 l3:1 core:8 pu:1`; threads are never bound on such a topology;
//! * [`Topology::from_env`] picks between the two from `HERD_TOPOLOGY`.

mod hwloc;
pub mod places;

pub use places::{Place, PlacesSpec};

use serde::Serialize;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

/// One processing unit (hardware thread) the process may use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Pu {
    /// Position in [`Topology::pus`] (topology order: PUs of one core are
    /// adjacent, cores of one cache are adjacent, and so on).
    pub index: usize,
    /// The operating system's number for this PU (what `taskset` and
    /// `sched_setaffinity` use, and what explicit `HERD_PLACES` lists name).
    pub os_index: u32,
    /// Logical index of the core holding this PU.
    pub core: usize,
    /// Logical index of the L1 data cache above this PU, if any.
    pub l1: Option<usize>,
    /// Logical index of the L2 cache above this PU, if any.
    pub l2: Option<usize>,
    /// Logical index of the L3 cache above this PU, if any.
    pub l3: Option<usize>,
    /// Logical index of the package (socket).
    pub package: usize,
    /// Logical index of the NUMA node.
    pub numa: usize,
}

/// How far apart two PUs are, from nearest to farthest. The order of the
/// variants is the order of the distance: `Same < SameCore < SharedL2 < ...`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Distance {
    /// The same PU.
    Same,
    /// Two hardware threads of one core.
    SameCore,
    /// Different cores sharing an L2 cache.
    SharedL2,
    /// Different L2s sharing an L3 cache.
    SharedL3,
    /// The same package without a shared cache.
    SamePackage,
    /// The same NUMA node but different packages.
    SameNuma,
    /// Different packages and NUMA nodes.
    Remote,
}

/// Kind of a node in the display tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// The whole machine.
    Machine,
    /// A package (socket).
    Package,
    /// A NUMA node.
    Numa,
    /// A level-3 cache.
    L3,
    /// A level-2 cache.
    L2,
    /// A level-1 data cache.
    L1,
    /// A core.
    Core,
    /// A processing unit.
    Pu,
    /// An hwloc group or other container.
    Group,
}

/// A node of the topology tree, as shown by `herd topo`. Only allowed PUs and
/// their ancestors appear.
#[derive(Clone, Debug, Serialize)]
pub struct Node {
    /// What this node is.
    pub kind: NodeKind,
    /// hwloc logical index within its kind.
    pub logical: usize,
    /// OS index, where hwloc knows one (PUs, packages, NUMA nodes).
    pub os_index: Option<u32>,
    /// Size in bytes for caches, memory size for NUMA nodes, where known.
    pub size: Option<u64>,
    /// Children, in topology order.
    pub children: Vec<Node>,
}

/// Where a [`Topology`] came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Read from this machine through hwloc.
    Detected,
    /// Built from an hwloc synthetic description; binding is skipped.
    Synthetic(String),
}

/// The machine as herd sees it. Cheap to clone.
#[derive(Clone)]
pub struct Topology {
    inner: Arc<TopologyData>,
}

pub(crate) struct TopologyData {
    pub(crate) pus: Vec<Pu>,
    pub(crate) tree: Node,
    pub(crate) source: Source,
    /// Per level, the size in bytes of one cache of that level (L1, L2, L3), if present.
    pub(crate) cache_sizes: [Option<u64>; 3],
    /// Number of OS PUs in the whole machine (allowed or not).
    pub(crate) total_pus: usize,
    /// hwloc handle for binding; `None` on synthetic topologies.
    pub(crate) binder: Option<hwloc::Binder>,
}

impl std::fmt::Debug for Topology {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Topology")
            .field("source", &self.inner.source)
            .field("pus", &self.inner.pus.len())
            .finish()
    }
}

/// The cached [`Topology::detect`] reading: null until the first, or after
/// [`Topology::forget_detected`]; otherwise a leaked box.
static DETECTED: AtomicPtr<Result<Topology, String>> = AtomicPtr::new(std::ptr::null_mut());

impl Topology {
    /// Reads this machine through hwloc, restricted to the PUs the process may
    /// use (allowed cpuset intersected with the affinity mask).
    ///
    /// The machine is read once per process and the result reused: herd pins
    /// the threads it uses, so a later reading of the affinity mask would see
    /// herd's own pinning (the master's single PU) instead of what `taskset` or
    /// the batch system granted. A forked child whose affinity mask may differ
    /// calls [`Topology::forget_detected`] (from a `pthread_atfork` child
    /// handler, after restoring its thread's mask) so that its next call reads
    /// the machine again.
    pub fn detect() -> crate::Result<Topology> {
        let cached = DETECTED.load(Ordering::Acquire);
        // SAFETY: a non-null pointer is a leaked box, never freed.
        let detected = match unsafe { cached.as_ref() } {
            Some(d) => d,
            None => {
                let fresh = hwloc::detect().map(Topology::from_data).map_err(|e| match e {
                    crate::Error::Topology(m) => m,
                    other => other.to_string(),
                });
                let fresh: &'static Result<Topology, String> = Box::leak(Box::new(fresh));
                // Racing first readers each leak one reading; the first stored wins.
                match DETECTED.compare_exchange(
                    std::ptr::null_mut(),
                    fresh as *const _ as *mut _,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => fresh,
                    // SAFETY: as above, a leaked box.
                    Err(winner) => unsafe { &*winner },
                }
            }
        };
        detected.clone().map_err(crate::Error::Topology)
    }

    /// Makes the next [`Topology::detect`] read the machine again. Only a
    /// store: async-signal-safe, for a `fork` child handler. The previous
    /// reading stays allocated (a thread may still hold it).
    pub fn forget_detected() {
        DETECTED.store(std::ptr::null_mut(), Ordering::Release);
    }

    /// Builds a topology from an hwloc synthetic description such as
    /// `pack:4 l3:1 core:8 pu:1`. Threads are never bound on it.
    pub fn synthetic(description: &str) -> crate::Result<Topology> {
        hwloc::synthetic(description).map(Topology::from_data)
    }

    /// `HERD_TOPOLOGY` if set (a synthetic description), else [`Topology::detect`].
    pub fn from_env() -> crate::Result<Topology> {
        match std::env::var("HERD_TOPOLOGY") {
            Ok(desc) if !desc.trim().is_empty() => Topology::synthetic(&desc).map_err(|e| {
                crate::Error::invalid(
                    "HERD_TOPOLOGY",
                    &desc,
                    format!("an hwloc synthetic description such as \"pack:2 l3:1 core:4 pu:2\" ({e})"),
                )
            }),
            _ => Topology::detect(),
        }
    }

    pub(crate) fn from_data(data: TopologyData) -> Topology {
        Topology { inner: Arc::new(data) }
    }

    /// The usable PUs in topology order.
    pub fn pus(&self) -> &[Pu] {
        &self.inner.pus
    }

    /// The display tree (machine at the root).
    pub fn tree(&self) -> &Node {
        &self.inner.tree
    }

    /// Where this topology came from.
    pub fn source(&self) -> &Source {
        &self.inner.source
    }

    /// True for a synthetic topology (threads are not bound).
    pub fn is_synthetic(&self) -> bool {
        matches!(self.inner.source, Source::Synthetic(_))
    }

    /// Size in bytes of one cache of level 1, 2 or 3, if the machine has it.
    pub fn cache_size(&self, level: usize) -> Option<u64> {
        level.checked_sub(1).and_then(|i| self.inner.cache_sizes.get(i).copied().flatten())
    }

    /// Size in bytes of the last-level cache.
    pub fn last_level_cache(&self) -> Option<u64> {
        (1..=3).rev().find_map(|l| self.cache_size(l))
    }

    /// Number of PUs of the whole machine, including those the process may not use.
    pub fn total_pus(&self) -> usize {
        self.inner.total_pus
    }

    /// Number of distinct cores among the usable PUs.
    pub fn num_cores(&self) -> usize {
        count_distinct(self.pus().iter().map(|p| p.core))
    }

    /// Number of distinct packages among the usable PUs.
    pub fn num_packages(&self) -> usize {
        count_distinct(self.pus().iter().map(|p| p.package))
    }

    /// Number of distinct NUMA nodes among the usable PUs.
    pub fn num_numa_nodes(&self) -> usize {
        count_distinct(self.pus().iter().map(|p| p.numa))
    }

    /// The PU with the given OS index, if usable.
    pub fn pu_by_os_index(&self, os_index: u32) -> Option<&Pu> {
        self.pus().iter().find(|p| p.os_index == os_index)
    }

    /// The distance between two usable PUs, given by their [`Pu::index`].
    pub fn distance(&self, a: usize, b: usize) -> Distance {
        distance(&self.inner.pus[a], &self.inner.pus[b])
    }

    /// Binds the calling thread to the given PUs (indices into [`Topology::pus`]).
    /// Returns `Ok(false)` without doing anything on a synthetic topology.
    pub fn bind_current_thread(&self, pus: &[usize]) -> crate::Result<bool> {
        match &self.inner.binder {
            None => Ok(false),
            Some(b) => {
                let os: Vec<u32> = pus.iter().map(|&i| self.inner.pus[i].os_index).collect();
                b.bind_current_thread(&os).map(|()| true)
            }
        }
    }

    /// Lets the calling thread run on every PU of this (detected) topology
    /// again, through one system call and no allocation (it is called in a
    /// `fork` child handler). Does nothing on a synthetic topology.
    pub fn release_current_thread(&self) {
        if self.inner.binder.is_none() {
            return;
        }
        // SAFETY: cpu_set_t is plain data, valid all zero; CPU_SET is given
        // indices below CPU_SETSIZE only.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for pu in &self.inner.pus {
            if (pu.os_index as usize) < libc::CPU_SETSIZE as usize {
                // SAFETY: see above.
                unsafe { libc::CPU_SET(pu.os_index as usize, &mut set) };
            }
        }
        // SAFETY: a valid mask of its size for the calling thread (0).
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    }

    /// The OS index of the PU the calling thread last ran on, if known.
    pub fn current_pu(&self) -> Option<usize> {
        // SAFETY: sched_getcpu has no preconditions; it returns -1 on error.
        let cpu = unsafe { libc::sched_getcpu() };
        if cpu < 0 || self.is_synthetic() {
            return None;
        }
        self.pu_by_os_index(cpu as u32).map(|p| p.index)
    }
}

/// The distance between two PUs (see [`Distance`]).
pub fn distance(a: &Pu, b: &Pu) -> Distance {
    if a.index == b.index {
        Distance::Same
    } else if a.core == b.core {
        Distance::SameCore
    } else if a.l2.is_some() && a.l2 == b.l2 {
        Distance::SharedL2
    } else if a.l3.is_some() && a.l3 == b.l3 {
        Distance::SharedL3
    } else if a.package == b.package {
        Distance::SamePackage
    } else if a.numa == b.numa {
        Distance::SameNuma
    } else {
        Distance::Remote
    }
}

fn count_distinct(it: impl Iterator<Item = usize>) -> usize {
    let mut v: Vec<usize> = it.collect();
    v.sort_unstable();
    v.dedup();
    v.len()
}
