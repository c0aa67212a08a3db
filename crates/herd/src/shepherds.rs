//! Shepherds: the locality domains of a pool (maestro-qthreads-scheduling.txt
//! §3.3). Participants whose PUs share one node of the chosen topology level
//! (`HERD_SHEPHERD`: numa, package, l3, l2, core; default: the level that
//! shares the last-level cache) form one shepherd; `HERD_WORKERS_PER_SHEPHERD`
//! splits larger groups. Under the `mts` and `fifo` schedulers each shepherd
//! has one queue, so that related tasks meet in a shared cache, and remote
//! steals go to the nearest other shepherd first.

use crate::config::ShepherdLevel;
use crate::placement::Placement;
use crate::topology::{Distance, Pu, Topology};
use serde::Serialize;

/// The shepherds of a pool; see the module documentation.
#[derive(Clone, Debug, Serialize)]
pub struct Shepherds {
    /// The level the domains were formed at.
    pub level: ShepherdLevel,
    /// Each shepherd's participant indices, in index order.
    pub members: Vec<Vec<usize>>,
    /// For each participant, its shepherd.
    pub of: Vec<usize>,
    /// For each participant, its position within its shepherd (0 first).
    pub rank: Vec<usize>,
    /// For each shepherd, the other shepherds nearest first (topology
    /// distance between their first participants' PUs, then index).
    pub nearest: Vec<Vec<usize>>,
}

impl Shepherds {
    /// Groups the participants of `placement` on `topo`. `level`: `None` for
    /// the level sharing the last-level cache; `per`: most members per
    /// shepherd.
    pub fn plan(
        topo: &Topology,
        placement: &Placement,
        level: Option<ShepherdLevel>,
        per: Option<usize>,
    ) -> Shepherds {
        let level = level.unwrap_or_else(|| default_level(topo));
        let pus = topo.pus();
        let mut keys: Vec<usize> = Vec::new();
        let mut members: Vec<Vec<usize>> = Vec::new();
        for i in 0..placement.num_threads {
            let key = domain(&pus[placement.pu_of(i)], level);
            match keys.iter().position(|&k| k == key) {
                Some(h) => members[h].push(i),
                None => {
                    keys.push(key);
                    members.push(vec![i]);
                }
            }
        }
        if let Some(per) = per.filter(|&p| p > 0) {
            members = members
                .into_iter()
                .flat_map(|m| m.chunks(per).map(<[usize]>::to_vec).collect::<Vec<_>>())
                .collect();
        }
        let n = placement.num_threads;
        let (mut of, mut rank) = (vec![0; n], vec![0; n]);
        for (h, m) in members.iter().enumerate() {
            for (r, &i) in m.iter().enumerate() {
                of[i] = h;
                rank[i] = r;
            }
        }
        let first_pu = |h: usize| placement.pu_of(members[h][0]);
        let nearest = (0..members.len())
            .map(|h| {
                let mut v: Vec<usize> = (0..members.len()).filter(|&g| g != h).collect();
                v.sort_by_key(|&g| (topo.distance(first_pu(h), first_pu(g)), g));
                v
            })
            .collect();
        Shepherds { level, members, of, rank, nearest }
    }

    /// Number of shepherds.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Always false: a pool has at least one participant.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The distance class between two shepherds' first participants.
    pub fn distance(&self, topo: &Topology, placement: &Placement, a: usize, b: usize) -> Distance {
        topo.distance(placement.pu_of(self.members[a][0]), placement.pu_of(self.members[b][0]))
    }
}

/// The level whose nodes share the last-level cache: L3 if the machine has
/// one, else L2, else the package.
fn default_level(topo: &Topology) -> ShepherdLevel {
    let pus = topo.pus();
    if pus.iter().all(|p| p.l3.is_some()) {
        ShepherdLevel::L3
    } else if pus.iter().all(|p| p.l2.is_some()) {
        ShepherdLevel::L2
    } else {
        ShepherdLevel::Package
    }
}

/// The node of `level` holding `pu` (a missing cache falls back to the next
/// level up that exists).
fn domain(pu: &Pu, level: ShepherdLevel) -> usize {
    match level {
        ShepherdLevel::Numa => pu.numa,
        ShepherdLevel::Package => pu.package,
        ShepherdLevel::L3 => pu.l3.map_or(pu.package, |c| c),
        ShepherdLevel::L2 => pu.l2.or(pu.l3).map_or(pu.package, |c| c),
        ShepherdLevel::Core => pu.core,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Bind, Dispatch};
    use crate::placement::{plan, PlacementRequest};

    fn layout(desc: &str, n: Option<usize>) -> (Topology, Placement) {
        let topo = Topology::synthetic(desc).unwrap();
        let pl = plan(
            &topo,
            &PlacementRequest {
                num_threads: n,
                places: None,
                bind: Bind::default(),
                dispatch: Dispatch::default(),
                reserve: 0,
            },
        )
        .unwrap();
        (topo, pl)
    }

    #[test]
    fn default_is_the_llc_level() {
        let (topo, pl) = layout("pack:4 l3:1 core:8 pu:1", None);
        let s = Shepherds::plan(&topo, &pl, None, None);
        assert_eq!(s.level, ShepherdLevel::L3);
        assert_eq!(s.len(), 4);
        assert!(s.members.iter().all(|m| m.len() == 8));
        assert_eq!(s.of[9], 1);
        assert_eq!(s.rank[9], 1);
        assert_eq!(s.nearest[0], vec![1, 2, 3]);
    }

    #[test]
    fn levels_and_splitting() {
        let (topo, pl) = layout("pack:2 l3:2 l2:2 core:2 pu:1", None);
        assert_eq!(Shepherds::plan(&topo, &pl, Some(ShepherdLevel::Package), None).len(), 2);
        assert_eq!(Shepherds::plan(&topo, &pl, Some(ShepherdLevel::L3), None).len(), 4);
        assert_eq!(Shepherds::plan(&topo, &pl, Some(ShepherdLevel::L2), None).len(), 8);
        assert_eq!(Shepherds::plan(&topo, &pl, Some(ShepherdLevel::Core), None).len(), 16);
        let s = Shepherds::plan(&topo, &pl, Some(ShepherdLevel::Package), Some(3));
        assert_eq!(s.members.iter().map(Vec::len).collect::<Vec<_>>(), vec![3, 3, 2, 3, 3, 2]);
        // The nearest other shepherd of L3 domain 0 is its package sibling.
        let s = Shepherds::plan(&topo, &pl, Some(ShepherdLevel::L3), None);
        assert_eq!(s.nearest[0][0], 1);
    }

    #[test]
    fn fewer_participants_than_pus() {
        let (topo, pl) = layout("pack:4 l3:1 core:8 pu:1", Some(3));
        let s = Shepherds::plan(&topo, &pl, None, None);
        assert_eq!(s.members.iter().flatten().count(), 3);
    }
}
