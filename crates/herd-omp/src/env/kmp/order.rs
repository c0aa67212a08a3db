//! `KMP_AFFINITY` resolved on the machine: the place list libomp would bind
//! thread *i* to the *i*-th entry of, and the binding.
//!
//! libomp labels every hardware thread with its position in the topology
//! tree (socket, then any NUMA node or L3 that is a level of its own, core,
//! thread in the core), each label counted within its parent. `compact`
//! sorts the threads by those labels, outermost first; `permute = p` makes
//! the `p` innermost labels the most significant (innermost first);
//! `scatter` is `compact` with `p = depth − 1 − permute`, so consecutive
//! threads land as far apart as the machine allows. Each sorted thread then
//! stands for its granularity unit (its core for `granularity=core`, ...):
//! with `duplicates` (the default) every hardware thread gives an entry, so
//! `compact` at core granularity puts two threads on each two-way SMT core
//! before moving on, as libomp does; with `noduplicates` each unit appears
//! once. Thread *i* is bound to entry `(i + offset) mod n`.
//!
//! herd expresses that as OpenMP places and `close` binding: the place list
//! is the entries, rotated by `offset` so that thread 0 is on place 0 (libomp
//! numbers the places unrotated, so `omp_get_place_num` differs by the
//! offset; which thread runs where does not). `explicit` makes one place per
//! `proclist` entry, each widened to its granularity unit; CPUs outside the
//! process's set are left out with a warning, as libomp does.
//!
//! Approximations, each warned about unless `nowarnings` is given:
//! `balanced` orders as `scatter` (the same placement while threads do not
//! outnumber cores; beyond that libomp keeps neighbours on one core);
//! `die` and `proc_group` granularity bind to the package; `norespect`
//! (use CPUs outside the process's set) is not honoured.

use super::affinity::{AffinityType, Granularity, KmpAffinity, AFFINITY};
use herd::topology::Pu;
use herd::Topology;

/// What `KMP_AFFINITY` asks for on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The places (OS CPU numbers), thread *i* on place *i* modulo their
    /// number; `None` for no binding (`none`, `disabled`, or nothing usable).
    pub places: Option<Vec<Vec<u32>>>,
    /// Warnings to print (empty with `nowarnings`).
    pub warnings: Vec<String>,
}

/// Resolves `a` (which has a type) on `topo`.
pub fn resolve(a: &KmpAffinity, topo: &Topology) -> Resolved {
    let mut warnings = Vec::new();
    let kind = a.kind.unwrap_or(AffinityType::None);
    if !a.respect {
        warnings.push(format!(
            "{AFFINITY}: norespect is not honoured: herd binds only to CPUs of the process's CPU set"
        ));
    }
    let pus = topo.pus();
    let levels = Levels::of(pus);
    let gran = a.granularity.unwrap_or(Granularity::Core);
    match gran {
        Granularity::Die | Granularity::ProcGroup => warnings.push(format!(
            "{AFFINITY}: granularity={} is taken as the package (herd's topology has no such level)",
            if gran == Granularity::Die { "die" } else { "proc_group" }
        )),
        Granularity::Tile | Granularity::Module => warnings.push(format!(
            "{AFFINITY}: granularity={} is taken as the L2 cache's cores",
            if gran == Granularity::Tile { "tile" } else { "module" }
        )),
        _ => {}
    }
    let unit = |pu: &Pu| levels.unit_of(pu, gran);
    // Each unit's OS CPUs, in one pass (the places are built in O(P log P)).
    let mut units: std::collections::HashMap<(usize, usize), Vec<u32>> = Default::default();
    for pu in pus {
        units.entry(unit(pu)).or_default().push(pu.os_index);
    }
    units.values_mut().for_each(|m| m.sort_unstable());
    let mask = |key: (usize, usize)| -> Vec<u32> { units[&key].clone() };
    let mut places: Vec<Vec<u32>> = match kind {
        AffinityType::None | AffinityType::Disabled => return finish(None, warnings, a),
        AffinityType::Explicit => {
            let mut unusable: Vec<u32> = Vec::new();
            let mut list = Vec::new();
            for entry in a.proclist.as_deref().unwrap_or_default() {
                let mut place: Vec<u32> = Vec::new();
                for &cpu in entry {
                    match topo.pu_by_os_index(cpu) {
                        Some(pu) => place.extend(mask(unit(pu))),
                        None => unusable.push(cpu),
                    }
                }
                place.sort_unstable();
                place.dedup();
                if !place.is_empty() {
                    list.push(place);
                }
            }
            if !unusable.is_empty() {
                unusable.sort_unstable();
                unusable.dedup();
                let cpus: Vec<usize> = unusable.iter().map(|&c| c as usize).collect();
                warnings.push(format!(
                    "{AFFINITY}: proclist names CPU(s) {} that this process cannot use; they are left out",
                    crate::affinity_format::cpu_list(&cpus)
                ));
            }
            list
        }
        _ => {
            let depth = levels.depth();
            let threads_per_core = levels.max_threads_per_core();
            let (compact, offset_unit) = match kind {
                AffinityType::Compact => ((a.permute as usize).min(depth - 1), 1),
                AffinityType::Scatter | AffinityType::Balanced => {
                    let p = a.permute as usize;
                    (if p >= depth { 0 } else { depth - 1 - p }, 1)
                }
                AffinityType::Logical => (0, threads_per_core),
                _ /* Physical */ => (usize::from(threads_per_core > 1 && depth > 1), threads_per_core),
            };
            if kind == AffinityType::Balanced {
                warnings.push(format!(
                    "{AFFINITY}: balanced is ordered as scatter (the same placement while threads do not \
                     outnumber cores)"
                ));
            }
            let mut order: Vec<usize> = (0..pus.len()).collect();
            order.sort_by_cached_key(|&i| levels.compact_key(i, compact));
            let mut list: Vec<Vec<u32>> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for i in order {
                let key = unit(&pus[i]);
                if a.dups || seen.insert(key) {
                    list.push(mask(key));
                }
            }
            if !list.is_empty() {
                let n = list.len();
                list.rotate_left((a.offset as usize).saturating_mul(offset_unit) % n);
            }
            list
        }
    };
    if places.is_empty() {
        warnings.push(format!("{AFFINITY}: no usable CPU is left; threads are not bound"));
        return finish(None, warnings, a);
    }
    places.shrink_to_fit();
    finish(Some(places), warnings, a)
}

fn finish(places: Option<Vec<Vec<u32>>>, warnings: Vec<String>, a: &KmpAffinity) -> Resolved {
    Resolved { places, warnings: if a.warnings { warnings } else { Vec::new() } }
}

/// Each PU's labels, level by level, outermost first (package, then NUMA
/// node and L3 where each is a level of its own, core, thread in the core),
/// each counted within its parent as libomp's `sub_ids` are.
struct Levels {
    /// `sub[l][i]`: PU `i`'s label at level `l`.
    sub: Vec<Vec<usize>>,
    /// Kept levels, outermost first, with the key of each PU's unit there.
    keys: Vec<Vec<usize>>,
    /// Whether the machine has an L3 (the last-level cache then).
    has_l3: bool,
}

impl Levels {
    fn of(pus: &[Pu]) -> Levels {
        let count = |k: &[usize]| k.iter().collect::<std::collections::HashSet<_>>().len();
        let package: Vec<usize> = pus.iter().map(|p| p.package).collect();
        let core: Vec<usize> = pus.iter().map(|p| p.core).collect();
        let thread: Vec<usize> = (0..pus.len()).collect();
        let nc = count(&core);
        // NUMA nodes and L3s are levels only where they split packages and
        // group several cores (libomp drops layers equivalent to another).
        let mut keys = vec![package];
        for k in [
            pus.iter().map(|p| p.numa).collect::<Vec<_>>(),
            pus.iter().map(|p| p.l3.unwrap_or(p.package)).collect(),
        ] {
            let n = count(&k);
            if n > count(keys.last().expect("package")) && n < nc {
                keys.push(k);
            }
        }
        keys.push(core);
        keys.push(thread);
        // Labels within the parent, in topology order of first appearance.
        let mut sub = Vec::with_capacity(keys.len());
        for (l, k) in keys.iter().enumerate() {
            let mut next: std::collections::HashMap<usize, usize> = Default::default();
            let mut label: std::collections::HashMap<(usize, usize), usize> = Default::default();
            let labels = (0..pus.len())
                .map(|i| {
                    let parent = if l == 0 { 0 } else { keys[l - 1][i] };
                    *label.entry((parent, k[i])).or_insert_with(|| {
                        let n = next.entry(parent).or_insert(0);
                        *n += 1;
                        *n - 1
                    })
                })
                .collect();
            sub.push(labels);
        }
        Levels { sub, keys, has_l3: pus.iter().any(|p| p.l3.is_some()) }
    }

    fn depth(&self) -> usize {
        self.sub.len()
    }

    /// The most hardware threads on one core.
    fn max_threads_per_core(&self) -> usize {
        self.sub.last().map_or(1, |t| t.iter().max().map_or(1, |&m| m + 1))
    }

    /// libomp's `compare_compact` key of PU `i`: the `compact` innermost
    /// labels, innermost first, then the others from the outermost.
    fn compact_key(&self, i: usize, compact: usize) -> Vec<usize> {
        let depth = self.depth();
        (0..compact)
            .map(|k| self.sub[depth - 1 - k][i])
            .chain((0..depth - compact).map(|l| self.sub[l][i]))
            .collect()
    }

    /// The unit of `pu` at granularity `g`: a (kind, id) pair, equal for the
    /// PUs that share the unit.
    fn unit_of(&self, pu: &Pu, g: Granularity) -> (usize, usize) {
        let llc = |p: &Pu| p.l3.map(|c| (7, c)).or(p.l2.map(|c| (6, c))).unwrap_or((5, p.package));
        match g {
            Granularity::Thread => (0, pu.index),
            Granularity::Core => (1, pu.core),
            Granularity::L1 => pu.l1.map_or((1, pu.core), |c| (2, c)),
            Granularity::L2 | Granularity::Tile | Granularity::Module => {
                pu.l2.map_or((1, pu.core), |c| (6, c))
            }
            Granularity::L3 => pu.l3.map_or((5, pu.package), |c| (7, c)),
            Granularity::LlCache => {
                if self.has_l3 {
                    llc(pu)
                } else {
                    pu.l2.map_or((5, pu.package), |c| (6, c))
                }
            }
            Granularity::Numa => (8, pu.numa),
            Granularity::Socket | Granularity::Die | Granularity::ProcGroup => (5, pu.package),
            Granularity::Levels(n) => {
                // n levels above the hardware thread, at most the package.
                let l = self.depth().saturating_sub(1 + n as usize);
                (10 + l, self.keys[l][pu.index])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::affinity::parse_affinity;
    use super::*;

    fn places(topo: &str, v: &str) -> Option<Vec<Vec<u32>>> {
        let t = Topology::synthetic(topo).expect("topology");
        let a = parse_affinity(v, v).expect("valid");
        resolve(&a, &t).places
    }

    fn one_each(v: &[u32]) -> Vec<Vec<u32>> {
        v.iter().map(|&c| vec![c]).collect()
    }

    // "pack:2 core:2 pu:2": OS CPUs 0..7 in topology order; core c holds PUs
    // 2c and 2c+1; package 0 holds cores 0-1.
    const SMT: &str = "pack:2 core:2 pu:2";

    #[test]
    fn compact_fills_each_core_then_package() {
        assert_eq!(places(SMT, "granularity=fine,compact"), Some(one_each(&[0, 1, 2, 3, 4, 5, 6, 7])));
        // Core granularity with duplicates: each core twice, as libomp binds.
        assert_eq!(
            places(SMT, "compact"),
            Some(vec![
                vec![0, 1],
                vec![0, 1],
                vec![2, 3],
                vec![2, 3],
                vec![4, 5],
                vec![4, 5],
                vec![6, 7],
                vec![6, 7]
            ])
        );
        assert_eq!(places(SMT, "nodups,compact"), Some(vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]]));
        assert_eq!(
            places(SMT, "granularity=socket,nodups,compact"),
            Some(vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]])
        );
    }

    #[test]
    fn compact_permute_puts_hyperthreads_last() {
        // compact,1: the thread-in-core label first: one thread per core first.
        assert_eq!(places(SMT, "granularity=fine,compact,1,0"), Some(one_each(&[0, 2, 4, 6, 1, 3, 5, 7])));
        // compact,2: thread-in-core, then core-in-package, then package: scatter's order.
        assert_eq!(places(SMT, "granularity=fine,compact,2"), Some(one_each(&[0, 4, 2, 6, 1, 5, 3, 7])));
    }

    #[test]
    fn scatter_alternates_packages_then_cores() {
        assert_eq!(places(SMT, "granularity=fine,scatter"), Some(one_each(&[0, 4, 2, 6, 1, 5, 3, 7])));
        assert_eq!(
            places(SMT, "granularity=core,nodups,scatter"),
            Some(vec![vec![0, 1], vec![4, 5], vec![2, 3], vec![6, 7]])
        );
    }

    #[test]
    fn offset_rotates_so_thread_0_starts_there() {
        assert_eq!(places(SMT, "granularity=fine,compact,0,3"), Some(one_each(&[3, 4, 5, 6, 7, 0, 1, 2])));
        // logical/physical count the offset in cores.
        assert_eq!(places(SMT, "granularity=fine,logical,1"), Some(one_each(&[2, 3, 4, 5, 6, 7, 0, 1])));
        assert_eq!(places(SMT, "granularity=fine,physical"), Some(one_each(&[0, 2, 4, 6, 1, 3, 5, 7])));
    }

    #[test]
    fn explicit_widens_to_the_granularity_and_drops_unusable_cpus() {
        assert_eq!(
            places(SMT, "granularity=fine,explicit,proclist=[7,{0,2}]"),
            Some(vec![vec![7], vec![0, 2]])
        );
        assert_eq!(places(SMT, "explicit,proclist=[3,4]"), Some(vec![vec![2, 3], vec![4, 5]]));
        let t = Topology::synthetic(SMT).unwrap();
        let v = "granularity=fine,explicit,proclist=[1,99]";
        let r = resolve(&parse_affinity(v, v).unwrap(), &t);
        assert_eq!(r.places, Some(vec![vec![1]]));
        assert!(r.warnings.iter().any(|w| w.contains("CPU(s) 99")), "{:?}", r.warnings);
        let v = "granularity=fine,nowarnings,explicit,proclist=[1,99]";
        assert!(resolve(&parse_affinity(v, v).unwrap(), &t).warnings.is_empty());
        assert_eq!(places(SMT, "explicit,proclist=[99]"), None);
    }

    #[test]
    fn none_and_disabled_bind_nothing() {
        assert_eq!(places(SMT, "none"), None);
        assert_eq!(places(SMT, "granularity=fine,disabled"), None);
    }

    #[test]
    fn l3_splitting_a_package_is_a_level_of_its_own() {
        // Two L3s per package, two cores each: scatter spreads over L3s within
        // a package before using a second core of one L3.
        let topo = "pack:2 l3:2 core:2 pu:1";
        assert_eq!(places(topo, "granularity=fine,scatter"), Some(one_each(&[0, 4, 2, 6, 1, 5, 3, 7])));
        assert_eq!(
            places(topo, "granularity=l3_cache,nodups,compact"),
            Some(vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]])
        );
        // granularity=1: one level above the thread, the core.
        assert_eq!(
            places("pack:1 core:2 pu:2", "granularity=1,nodups,compact"),
            Some(vec![vec![0, 1], vec![2, 3]])
        );
    }
}
