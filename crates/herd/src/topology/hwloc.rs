//! Reading the topology through hwloc (`hwlocality`): the real machine
//! ([`detect`]) or an hwloc synthetic description ([`synthetic`]), both turned
//! into herd's plain [`TopologyData`] by the same code ([`build_data`]).

use super::{Node, NodeKind, Pu, Source, TopologyData};
use crate::{Error, Result};
use hwlocality::cpu::binding::CpuBindingFlags;
use hwlocality::cpu::cpuset::CpuSet;
use hwlocality::object::attributes::ObjectAttributes;
use hwlocality::object::types::ObjectType;
use hwlocality::object::TopologyObject;
use hwlocality::topology::builder::BuildFlags;

/// Binds threads through hwloc.
///
/// `hwlocality::Topology` is `Send + Sync` (hwlocality implements both: a
/// loaded topology is never mutated through `&Topology`, and hwloc documents
/// its query and binding functions as thread-safe on a topology that is not
/// being modified). So the handle can sit in the `Arc<TopologyData>` shared by
/// all workers without a lock, and no `unsafe` is needed here. The assertion
/// below keeps that property checked at compile time.
pub(crate) struct Binder {
    topology: hwlocality::Topology,
}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Binder>();
};

impl Binder {
    /// Binds the calling thread to exactly the PUs with these OS numbers.
    pub(crate) fn bind_current_thread(&self, os: &[u32]) -> Result<()> {
        let first = os.first().copied().unwrap_or(0);
        if os.is_empty() {
            return Err(Error::Bind { pu: first, reason: "empty set of PUs".into() });
        }
        let mut set = CpuSet::new();
        for &pu in os {
            if !self.topology.cpuset().is_set(pu as usize) {
                return Err(Error::Bind { pu, reason: "no such PU on this machine".into() });
            }
            set.set(pu as usize);
        }
        // Strict first (fail instead of binding somewhere else); some systems
        // cannot do strict thread binding, then fall back to best effort.
        let strict = CpuBindingFlags::THREAD | CpuBindingFlags::STRICT;
        match self.topology.bind_cpu(&set, strict) {
            Ok(()) => Ok(()),
            Err(_) => self.topology.bind_cpu(&set, CpuBindingFlags::THREAD).map_err(|e| Error::Bind {
                pu: first,
                reason: if os.len() > 1 { format!("{e} (binding to PUs {os:?})") } else { e.to_string() },
            }),
        }
    }
}

/// Reads this machine: PUs allowed (cgroups) and in the process's affinity mask.
pub(crate) fn detect() -> Result<TopologyData> {
    let topology = hwlocality::Topology::builder()
        .with_flags(BuildFlags::INCLUDE_DISALLOWED)
        .map_err(|e| Error::Topology(format!("cannot configure hwloc: {e}")))?
        .build()
        .map_err(|e| Error::Topology(format!("hwloc cannot read this machine's topology: {e}")))?;

    let mut usable = topology.cpuset().clone_target();
    usable &= topology.allowed_cpuset().clone_target();
    // The process's affinity mask (union over its threads on Linux), so that
    // `taskset` restricts herd. If the OS cannot tell, keep the allowed set.
    let binding = topology
        .cpu_binding(CpuBindingFlags::PROCESS)
        .or_else(|_| topology.cpu_binding(CpuBindingFlags::THREAD));
    if let Ok(mask) = binding {
        if mask.intersects(&usable) {
            usable &= mask;
        }
    }
    if usable.is_empty() {
        return Err(Error::Topology(
            "no usable PU: the allowed cpuset and the affinity mask do not intersect".into(),
        ));
    }
    let data = build_data(&topology, &usable, Source::Detected)?;
    Ok(TopologyData { binder: Some(Binder { topology }), ..data })
}

/// Builds a topology from an hwloc synthetic description.
pub(crate) fn synthetic(description: &str) -> Result<TopologyData> {
    const FORM: &str = "an hwloc synthetic description is a list of levels \
                        \"type:count\" from the top down, ending with pu, such as \
                        \"pack:2 l3:1 core:4 pu:2\" or \"numa:2 pack:1 l2:4 core:1 pu:2\"";
    if description.trim().is_empty() {
        return Err(Error::Topology(format!("empty synthetic description; {FORM}")));
    }
    let topology = hwlocality::Topology::builder()
        .from_synthetic(description)
        .map_err(|e| {
            let why = diagnose_synthetic(description).unwrap_or_else(|| e.to_string());
            Error::Topology(format!("invalid synthetic description {description:?}: {why}; {FORM}"))
        })?
        .build()
        .map_err(|e| {
            Error::Topology(format!(
                "hwloc could not build the synthetic topology {description:?} ({e}); {FORM}"
            ))
        })?;
    let usable = topology.cpuset().clone_target();
    build_data(&topology, &usable, Source::Synthetic(description.to_string()))
}

/// A guess at what is wrong in a synthetic description hwloc rejected (hwloc
/// itself only says "invalid"). Only called after hwloc failed, so it never
/// rejects anything hwloc accepts; `None` when no simple cause is found.
fn diagnose_synthetic(description: &str) -> Option<String> {
    let levels: Vec<&str> = description.split_whitespace().collect();
    for level in &levels {
        // Attributes such as `pack:2(memory=1GB)` or `[numa]` are hwloc's business.
        if level.contains(['(', '[', '{']) {
            return None;
        }
        let Some((ty, count)) = level.split_once(':') else {
            return Some(format!("level {level:?} is not of the form type:count"));
        };
        if ty.is_empty() {
            return Some(format!("level {level:?} has no type"));
        }
        match count.parse::<u64>() {
            Ok(0) => return Some(format!("level {level:?} has a count of 0")),
            Ok(_) => {}
            Err(_) => {
                return Some(format!("the count {count:?} of level {level:?} is not a positive integer"))
            }
        }
    }
    let last = levels.last()?.split_once(':')?.0;
    if !last.eq_ignore_ascii_case("pu") {
        return Some(format!("the last level must be pu, not {last:?}"));
    }
    Some("hwloc rejected it (unknown level type, or levels in an impossible order)".into())
}

/// The shared part: PUs, tree and cache sizes of `topology`, restricted to `usable`.
fn build_data(topology: &hwlocality::Topology, usable: &CpuSet, source: Source) -> Result<TopologyData> {
    let numa_nodes: Vec<&TopologyObject> = topology.objects_with_type(ObjectType::NUMANode).collect();

    let mut pus = Vec::new();
    for obj in topology.objects_with_type(ObjectType::PU) {
        let Some(os) = obj.os_index() else { continue };
        if !usable.is_set(os) {
            continue;
        }
        let ancestor = |ty| obj.first_ancestor_with_type(ty).map(|a| a.logical_index());
        let os_index = u32::try_from(os)
            .map_err(|_| Error::Topology(format!("PU OS index {os} does not fit in 32 bits")))?;
        let numa = numa_nodes
            .iter()
            .find(|n| n.cpuset().is_some_and(|c| c.is_set(os)))
            .map_or(0, |n| n.logical_index());
        pus.push(Pu {
            index: pus.len(),
            os_index,
            core: ancestor(ObjectType::Core).unwrap_or(obj.logical_index()),
            l1: ancestor(ObjectType::L1Cache),
            l2: ancestor(ObjectType::L2Cache),
            l3: ancestor(ObjectType::L3Cache),
            package: ancestor(ObjectType::Package).unwrap_or(0),
            numa,
        });
    }
    if pus.is_empty() {
        return Err(Error::Topology("hwloc reports no usable PU".into()));
    }

    let root = topology.root_object();
    let tree = Node {
        kind: NodeKind::Machine,
        logical: root.logical_index(),
        os_index: None,
        size: nonzero(root.total_memory()),
        children: children(root, usable),
    };

    let cache_size = |ty: ObjectType| {
        let mut caches = topology.objects_with_type(ty);
        let first = caches.clone().next();
        caches.find(|c| intersects_usable(c, usable)).or(first).map(|c| object_size(c).unwrap_or(0))
    };
    let cache_sizes =
        [cache_size(ObjectType::L1Cache), cache_size(ObjectType::L2Cache), cache_size(ObjectType::L3Cache)];

    Ok(TopologyData {
        pus,
        tree,
        source,
        cache_sizes,
        total_pus: topology.objects_with_type(ObjectType::PU).len(),
        binder: None,
    })
}

/// herd's kind for an hwloc object type; `None` for types that are not shown
/// (their children are attached to the nearest shown ancestor).
fn node_kind(ty: ObjectType) -> Option<NodeKind> {
    Some(match ty {
        ObjectType::Machine => NodeKind::Machine,
        ObjectType::Package => NodeKind::Package,
        ObjectType::NUMANode => NodeKind::Numa,
        ObjectType::L3Cache => NodeKind::L3,
        ObjectType::L2Cache => NodeKind::L2,
        ObjectType::L1Cache => NodeKind::L1,
        ObjectType::Core => NodeKind::Core,
        ObjectType::PU => NodeKind::Pu,
        ObjectType::Group | ObjectType::Die => NodeKind::Group,
        _ => return None,
    })
}

fn intersects_usable(obj: &TopologyObject, usable: &CpuSet) -> bool {
    obj.cpuset().is_some_and(|c| c.intersects(usable))
}

fn nonzero(x: u64) -> Option<u64> {
    (x != 0).then_some(x)
}

/// Cache size, or local memory for a NUMA node, in bytes.
fn object_size(obj: &TopologyObject) -> Option<u64> {
    match obj.attributes()? {
        ObjectAttributes::Cache(c) => c.size().map(|s| s.get()),
        ObjectAttributes::NUMANode(n) => n.local_memory().map(|s| s.get()),
        _ => None,
    }
}

/// The shown children of `obj`: NUMA nodes attached to it first (hwloc 2 keeps
/// them as memory children, possibly below memory-side caches), then its
/// normal children; objects without usable PUs are left out, objects of
/// unshown types are replaced by their own children.
fn children(obj: &TopologyObject, usable: &CpuSet) -> Vec<Node> {
    let mut out = Vec::new();
    let mut memory: Vec<&TopologyObject> = obj.memory_children().collect();
    while let Some(m) = memory.pop() {
        if m.object_type() == ObjectType::NUMANode {
            if intersects_usable(m, usable) {
                out.push(leaf(m, NodeKind::Numa));
            }
        } else {
            // Memory-side cache: its NUMA nodes are below it.
            memory.extend(m.memory_children());
        }
    }
    out.sort_by_key(|n| n.logical);
    for child in obj.normal_children() {
        if !intersects_usable(child, usable) {
            continue;
        }
        match node_kind(child.object_type()) {
            Some(kind) => out.push(Node { children: children(child, usable), ..leaf(child, kind) }),
            None => out.extend(children(child, usable)),
        }
    }
    out
}

fn leaf(obj: &TopologyObject, kind: NodeKind) -> Node {
    Node {
        kind,
        logical: obj.logical_index(),
        os_index: obj.os_index().and_then(|i| u32::try_from(i).ok()),
        size: object_size(obj),
        children: Vec::new(),
    }
}
