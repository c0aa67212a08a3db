//! [`PoolInfo`]: what a pool sees and decides, for `herd topo`,
//! `HERD_DISPLAY_ENV` and tools.

use super::registry::Registry;
use crate::config::{Dispatch, Sched, ShepherdLevel};
use crate::topology::{Distance, Node, NodeKind, Pu, Source};
use serde::Serialize;
use std::fmt::Write;

/// One participant and where it runs.
#[derive(Clone, Debug, Serialize)]
pub struct WorkerInfo {
    /// Participant index (0 is the master).
    pub index: usize,
    /// OS index of its PU (the first PU of its place).
    pub pu: u32,
    /// OS indices of every PU of its place.
    pub place: Vec<u32>,
    /// Index of its place in [`PoolInfo::places`].
    pub place_index: usize,
    /// Distance from the master's PU.
    pub distance: Distance,
    /// Position in the master's wake order (`None` for the master).
    pub wake_rank: Option<usize>,
    /// Under master-last persistent dispatch (PWAML), the participant that
    /// posts regions to this one in the wake tree (`None` for the master).
    pub wake_parent: Option<usize>,
    /// Its depth in the wake tree (posts from the master to it).
    pub wake_depth: u32,
}

/// One shepherd (locality domain) of a pool.
#[derive(Clone, Debug, Serialize)]
pub struct ShepherdInfo {
    /// Shepherd index.
    pub index: usize,
    /// Its participants (0 is the master).
    pub workers: Vec<usize>,
    /// OS indices of its participants' PUs.
    pub pus: Vec<u32>,
    /// The most of its workers that take jobs now (throttling).
    pub active_limit: usize,
}

/// A snapshot of a pool's layout and settings. Serialises to the JSON of
/// `herd topo --json`.
#[derive(Clone, Debug, Serialize)]
pub struct PoolInfo {
    /// Where the topology came from.
    pub topology: Source,
    /// Usable PUs.
    pub pus: Vec<Pu>,
    /// Sizes in bytes of one L1, L2, L3 cache (null where absent).
    pub cache_sizes: [Option<u64>; 3],
    /// The topology tree.
    pub tree: Node,
    /// Participants per region.
    pub num_threads: usize,
    /// The place list (OS PU indices of each place), as OpenMP numbers places.
    pub places: Vec<Vec<u32>>,
    /// OS index of the master's PU.
    pub master_pu: u32,
    /// Every participant, master first.
    pub workers: Vec<WorkerInfo>,
    /// Participant indices in the order the master signals them.
    pub wake_order: Vec<usize>,
    /// The longest chain of posts from the master in a full region (the
    /// wake tree's depth; 0 unless dispatch is PWAML).
    pub wake_tree_depth: u32,
    /// Dispatch strategy.
    pub dispatch: Dispatch,
    /// Task scheduler.
    pub scheduler: Sched,
    /// Topology level of the shepherds.
    pub shepherd_level: ShepherdLevel,
    /// The shepherds, with their workers and PUs.
    pub shepherds: Vec<ShepherdInfo>,
    /// Wait policy in effect: "active", "passive" or "spin:<µs>".
    pub wait: String,
    /// Threads are bound to their places.
    pub bound: bool,
    /// More runnable threads than usable PUs.
    pub oversubscribed: bool,
    /// Cores reserved for the OS.
    pub reserved_cores: Vec<usize>,
    /// Remarks about decisions taken.
    pub notes: Vec<String>,
}

impl PoolInfo {
    pub(crate) fn of(reg: &Registry) -> PoolInfo {
        let topo = &reg.topology;
        let pl = &reg.placement;
        let pus = topo.pus();
        let os = |i: usize| pus[i].os_index;
        let tree = (reg.dispatch == crate::config::Dispatch::Pwaml).then(|| reg.tree(pl.num_threads));
        let workers = (0..pl.num_threads)
            .map(|i| WorkerInfo {
                wake_parent: tree.and_then(|t| t.parent(i)),
                wake_depth: tree.map_or(0, |t| t.depth_of(i)),
                index: i,
                pu: os(pl.pu_of(i)),
                place: pl.pus_of(i).iter().map(|&p| os(p)).collect(),
                place_index: pl.place_of[i],
                distance: pl.distance_from_master[i],
                wake_rank: pl.wake_order.iter().position(|&w| w == i),
            })
            .collect();
        PoolInfo {
            topology: topo.source().clone(),
            pus: pus.to_vec(),
            cache_sizes: [topo.cache_size(1), topo.cache_size(2), topo.cache_size(3)],
            tree: topo.tree().clone(),
            num_threads: pl.num_threads,
            places: pl.places.iter().map(|p| p.pus.iter().map(|&i| os(i)).collect()).collect(),
            master_pu: os(pl.master_pu()),
            workers,
            wake_order: pl.wake_order.clone(),
            wake_tree_depth: tree.map_or(0, |t| t.depth()),
            dispatch: reg.dispatch,
            scheduler: reg.sched_kind(),
            shepherd_level: reg.shepherds.level,
            shepherds: reg
                .shepherds
                .members
                .iter()
                .enumerate()
                .map(|(h, m)| ShepherdInfo {
                    index: h,
                    workers: m.clone(),
                    pus: m.iter().map(|&i| os(pl.pu_of(i))).collect(),
                    active_limit: reg.active_limit(h),
                })
                .collect(),
            wait: match reg.spin() {
                None => "active".into(),
                Some(d) if d.is_zero() => "passive".into(),
                Some(d) => format!("spin:{}", d.as_micros()),
            },
            bound: pl.bound,
            oversubscribed: pl.oversubscribed,
            reserved_cores: pl.reserved_cores.clone(),
            notes: pl.notes.clone(),
        }
    }

    /// Human-readable report; `tree` adds the topology tree.
    pub fn render(&self, tree: bool) -> String {
        let mut s = String::new();
        let src = match &self.topology {
            Source::Detected => "this machine (hwloc)".to_string(),
            Source::Synthetic(d) => format!("synthetic \"{d}\""),
        };
        let _ = writeln!(s, "herd: topology: {src}, {} usable PU(s)", self.pus.len());
        if tree {
            render_node(&mut s, &self.tree, 1);
        }
        let _ = writeln!(
            s,
            "herd: {} participant(s), dispatch {}, wait {}, {}",
            self.num_threads,
            self.dispatch,
            self.wait,
            if self.bound { "bound" } else { "unbound" }
        );
        let _ = writeln!(s, "herd: master on PU {}", self.master_pu);
        let _ = writeln!(
            s,
            "herd: scheduler {}, {} shepherd(s) at level {}",
            self.scheduler,
            self.shepherds.len(),
            self.shepherd_level.name()
        );
        for sh in &self.shepherds {
            let limit = if sh.active_limit < sh.workers.len() {
                format!(", throttled to {} active", sh.active_limit)
            } else {
                String::new()
            };
            let _ = writeln!(
                s,
                "herd:   shepherd {:>3}: participants {:?} on PUs {:?}{limit}",
                sh.index, sh.workers, sh.pus
            );
        }
        for w in &self.workers {
            let role = if w.index == 0 { "master" } else { "worker" };
            let wake = match (w.wake_parent, w.wake_rank) {
                (Some(p), _) => format!(", posted by {p} (depth {})", w.wake_depth),
                (None, Some(r)) => format!(", woken #{}", r + 1),
                (None, None) if self.wake_tree_depth > 0 => {
                    format!(", runs last; wake tree depth {}", self.wake_tree_depth)
                }
                (None, None) => ", runs last".into(),
            };
            let _ = writeln!(
                s,
                "herd:   {role} {:>3} -> PU {:>4}  place {:?}  {:?}{wake}",
                w.index, w.pu, w.place, w.distance
            );
        }
        for n in &self.notes {
            let _ = writeln!(s, "herd: note: {n}");
        }
        s
    }
}

fn render_node(s: &mut String, n: &Node, depth: usize) {
    let name = match n.kind {
        NodeKind::Machine => "Machine".to_string(),
        NodeKind::Package => format!("Package L#{}", n.logical),
        NodeKind::Numa => format!("NUMANode L#{}", n.logical),
        NodeKind::L3 => format!("L3 L#{}", n.logical),
        NodeKind::L2 => format!("L2 L#{}", n.logical),
        NodeKind::L1 => format!("L1d L#{}", n.logical),
        NodeKind::Core => format!("Core L#{}", n.logical),
        NodeKind::Pu => format!("PU L#{}", n.logical),
        NodeKind::Group => format!("Group L#{}", n.logical),
    };
    let os = n.os_index.map(|o| format!(" (P#{o})")).unwrap_or_default();
    let size = n.size.map(|b| format!(" {}", human_bytes(b))).unwrap_or_default();
    let _ = writeln!(s, "{}{name}{os}{size}", "  ".repeat(depth));
    for c in &n.children {
        render_node(s, c, depth + 1);
    }
}

/// `32 KiB`, `1.5 MiB`, ...
pub(crate) fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}
