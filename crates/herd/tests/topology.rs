//! Topology detection, synthetic topologies, distances, places and placement.

use herd::placement::{plan, PlacementRequest};
use herd::topology::places::AbstractPlace;
use herd::topology::{Distance, Node, NodeKind, Place, PlacesSpec, Source};
use herd::{Bind, Dispatch, Error, Topology};

fn synth(desc: &str) -> Topology {
    Topology::synthetic(desc).unwrap_or_else(|e| panic!("{desc}: {e}"))
}

fn count(node: &Node, kind: NodeKind) -> usize {
    usize::from(node.kind == kind) + node.children.iter().map(|c| count(c, kind)).sum::<usize>()
}

fn places(topo: &Topology, spec: &str) -> Vec<Vec<usize>> {
    PlacesSpec::parse("HERD_PLACES", spec)
        .and_then(|s| s.resolve(topo))
        .unwrap_or_else(|e| panic!("{spec}: {e}"))
        .into_iter()
        .map(|p: Place| p.pus)
        .collect()
}

fn resolve_err(topo: &Topology, spec: &str) -> String {
    let parsed = PlacesSpec::parse("HERD_PLACES", spec).unwrap();
    match parsed.resolve(topo) {
        Err(e @ Error::Placement(_)) => e.to_string(),
        other => panic!("{spec}: expected a placement error, got {other:?}"),
    }
}

#[test]
fn synthetic_four_packages() {
    let t = synth("pack:4 l3:1 core:8 pu:1");
    assert_eq!(t.pus().len(), 32);
    assert_eq!(t.total_pus(), 32);
    assert_eq!(t.num_packages(), 4);
    assert_eq!(t.num_cores(), 32);
    assert!(t.is_synthetic());
    assert_eq!(t.source(), &Source::Synthetic("pack:4 l3:1 core:8 pu:1".to_string()));
    for (i, pu) in t.pus().iter().enumerate() {
        assert_eq!(pu.index, i);
        assert_eq!(pu.os_index, i as u32);
        assert_eq!(pu.package, i / 8);
        assert_eq!(pu.l3, Some(i / 8));
        assert_eq!(pu.l2, None);
        assert_eq!(pu.core, i);
    }
    assert!(t.cache_size(3).is_some());
    assert_eq!(t.cache_size(2), None);
    assert_eq!(t.cache_size(1), None);
    assert_eq!(t.last_level_cache(), t.cache_size(3));

    let tree = t.tree();
    assert_eq!(tree.kind, NodeKind::Machine);
    assert_eq!(count(tree, NodeKind::Package), 4);
    assert_eq!(count(tree, NodeKind::L3), 4);
    assert_eq!(count(tree, NodeKind::Core), 32);
    assert_eq!(count(tree, NodeKind::Pu), 32);
    assert_eq!(count(tree, NodeKind::L2), 0);
    // hwloc gives a synthetic description without numa one NUMA node, at the machine.
    assert_eq!(count(tree, NodeKind::Numa), 1);
    assert_eq!(t.num_numa_nodes(), 1);
}

#[test]
fn synthetic_tree_shape_and_sizes() {
    let t = synth("numa:2 pack:1 l3:1 l2:4 core:1 pu:2");
    assert_eq!(t.pus().len(), 16);
    assert_eq!(t.num_packages(), 2);
    assert_eq!(t.num_numa_nodes(), 2);
    assert_eq!(t.num_cores(), 8);
    let tree = t.tree();
    // The NUMA nodes sit in their packages.
    assert_eq!(tree.children.len(), 2);
    for (i, pack) in tree.children.iter().enumerate() {
        assert_eq!(pack.kind, NodeKind::Package);
        assert_eq!(pack.logical, i);
        let numa = &pack.children[0];
        assert_eq!(numa.kind, NodeKind::Numa);
        assert_eq!(numa.logical, i);
        assert!(numa.size.is_some_and(|s| s > 0));
        assert_eq!(pack.children[1].kind, NodeKind::L3);
    }
    let l3 = &tree.children[0].children[1];
    assert!(l3.size.is_some_and(|s| s > 0));
    assert_eq!(l3.children.len(), 4);
    assert_eq!(l3.children[0].kind, NodeKind::L2);
    assert_eq!(l3.children[0].children[0].kind, NodeKind::Core);
    assert_eq!(l3.children[0].children[0].children.len(), 2);
    assert_eq!(t.cache_size(2), l3.children[0].size);
    assert_eq!(t.cache_size(3), l3.size);
    assert_eq!(t.pus()[8].numa, 1);
    assert_eq!(t.pus()[7].numa, 0);
}

#[test]
fn distances_smt_caches_packages() {
    let t = synth("pack:2 l3:1 l2:2 core:2 pu:2");
    assert_eq!(t.pus().len(), 16);
    assert_eq!(t.distance(0, 0), Distance::Same);
    assert_eq!(t.distance(0, 1), Distance::SameCore);
    assert_eq!(t.distance(0, 2), Distance::SharedL2);
    assert_eq!(t.distance(0, 4), Distance::SharedL3);
    assert_eq!(t.distance(7, 2), Distance::SharedL3);
    assert_eq!(t.distance(7, 4), Distance::SharedL2);
    // One NUMA node for the machine: another package is SameNuma.
    assert_eq!(t.distance(0, 8), Distance::SameNuma);
    assert_eq!(t.distance(15, 0), Distance::SameNuma);
}

#[test]
fn distances_numa_per_package() {
    let t = synth("numa:2 pack:1 l3:1 l2:4 core:1 pu:2");
    assert_eq!(t.distance(0, 1), Distance::SameCore);
    assert_eq!(t.distance(0, 2), Distance::SharedL3);
    assert_eq!(t.distance(0, 8), Distance::Remote);
}

#[test]
fn distances_without_shared_cache() {
    let t = synth("pack:2 l2:2 core:2 pu:1");
    assert_eq!(t.distance(0, 1), Distance::SharedL2);
    assert_eq!(t.distance(0, 2), Distance::SamePackage);
    assert_eq!(t.distance(0, 4), Distance::SameNuma);

    // NUMA nodes inside packages: another node of the same package is still SamePackage.
    let t = synth("pack:2 numa:2 core:2 pu:1");
    assert_eq!(t.num_numa_nodes(), 4);
    assert_eq!(t.distance(0, 2), Distance::SamePackage);
    assert_eq!(t.distance(0, 4), Distance::Remote);
}

#[test]
fn synthetic_errors() {
    for bad in ["garbage", "", "pack:0 pu:1", "pack:2 core:x pu:1"] {
        match Topology::synthetic(bad) {
            Err(Error::Topology(msg)) => {
                assert!(msg.contains("synthetic description"), "{msg}");
                assert!(msg.contains("pack:2 l3:1 core:4 pu:2"), "{msg}");
            }
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    let msg = Topology::synthetic("garbage").unwrap_err().to_string();
    assert!(msg.contains("\"garbage\""), "{msg}");
    assert!(msg.contains("not of the form type:count"), "{msg}");
    let msg = Topology::synthetic("pack:2 core:x pu:1").unwrap_err().to_string();
    assert!(msg.contains("the count \"x\""), "{msg}");
    let msg = Topology::synthetic("pack:0 pu:1").unwrap_err().to_string();
    assert!(msg.contains("count of 0"), "{msg}");
    let msg = Topology::synthetic("pack:2 core:2").unwrap_err().to_string();
    assert!(msg.contains("last level must be pu"), "{msg}");
    let msg = Topology::synthetic("pack:2 foo:2 pu:2").unwrap_err().to_string();
    assert!(msg.contains("unknown level type"), "{msg}");
    // Upper-case PU is fine for hwloc.
    assert_eq!(synth("pack:2 core:2 PU:2").pus().len(), 8);
}

#[test]
fn synthetic_has_no_binder() {
    let t = synth("pack:1 core:2 pu:1");
    assert!(!t.bind_current_thread(&[0]).unwrap());
    assert_eq!(t.current_pu(), None);
}

#[test]
fn detect_this_machine() {
    let t = Topology::detect().expect("detect");
    assert_eq!(t.source(), &Source::Detected);
    assert!(!t.pus().is_empty());
    assert!(t.total_pus() >= t.pus().len());
    let mut os: Vec<u32> = t.pus().iter().map(|p| p.os_index).collect();
    os.sort_unstable();
    os.dedup();
    assert_eq!(os.len(), t.pus().len(), "OS indices are unique");
    for (i, p) in t.pus().iter().enumerate() {
        assert_eq!(p.index, i);
        assert_eq!(t.pu_by_os_index(p.os_index), Some(p));
    }
    assert_eq!(count(t.tree(), NodeKind::Pu), t.pus().len());
    assert!(t.num_cores() >= 1 && t.num_cores() <= t.pus().len());
}

#[test]
fn detect_and_bind() {
    let t = Topology::detect().expect("detect");
    // Bind a scratch thread, not the test harness's thread.
    let t2 = t.clone();
    std::thread::spawn(move || {
        assert!(t2.bind_current_thread(&[0]).expect("bind to PU 0"));
        assert_eq!(t2.current_pu(), Some(0));
        let all: Vec<usize> = (0..t2.pus().len()).collect();
        assert!(t2.bind_current_thread(&all).expect("bind to all"));
    })
    .join()
    .unwrap();
}

#[test]
fn resolve_abstract_places() {
    let t = synth("pack:2 l3:1 l2:2 core:2 pu:2");
    let threads = places(&t, "threads");
    assert_eq!(threads.len(), 16);
    assert_eq!(threads[5], vec![5]);
    let cores = places(&t, "cores");
    assert_eq!(cores.len(), 8);
    assert_eq!(cores[0], vec![0, 1]);
    assert_eq!(cores[7], vec![14, 15]);
    let llc = places(&t, "ll_caches");
    assert_eq!(llc, vec![(0..8).collect::<Vec<_>>(), (8..16).collect()]);
    assert_eq!(places(&t, "sockets"), llc);
    assert_eq!(places(&t, "numa_domains"), vec![(0..16).collect::<Vec<_>>()]);
    assert_eq!(places(&t, "cores(3)"), vec![vec![0, 1], vec![2, 3], vec![4, 5]]);
    assert_eq!(places(&t, "Threads(1)"), vec![vec![0]]);

    // Last-level cache falls back to L2 when there is no L3.
    let t = synth("pack:2 l2:2 core:2 pu:1");
    assert_eq!(places(&t, "ll_caches"), vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]]);
    // ...and to cores when there is no cache.
    let t = synth("pack:2 core:2 pu:2");
    assert_eq!(places(&t, "ll_caches"), places(&t, "cores"));

    let t = synth("numa:2 pack:1 l3:1 l2:4 core:1 pu:2");
    assert_eq!(places(&t, "numa_domains"), vec![(0..8).collect::<Vec<_>>(), (8..16).collect()]);
}

#[test]
fn resolve_count_too_large() {
    let t = synth("pack:2 l3:1 core:2 pu:1");
    let msg = resolve_err(&t, "sockets(3)");
    assert!(msg.contains("only 2"), "{msg}");
    let msg = resolve_err(&t, "cores(5)");
    assert!(msg.contains("only 4"), "{msg}");
}

#[test]
fn resolve_explicit_places() {
    let t = synth("pack:2 l3:1 core:4 pu:1");
    assert_eq!(places(&t, "{0,1},{2,3}"), vec![vec![0, 1], vec![2, 3]]);
    assert_eq!(places(&t, "{0:2}:4:2"), vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]]);
    assert_eq!(places(&t, "{7,3,3}"), vec![vec![3, 7]]);
    assert_eq!(places(&t, "{0:4:2}"), vec![vec![0, 2, 4, 6]]);
    let msg = resolve_err(&t, "{0,8}");
    assert!(msg.contains("PU 8"), "{msg}");
    assert!(msg.contains("0-7"), "{msg}");
    let empty = PlacesSpec::Explicit(vec![vec![0], vec![]]);
    assert!(matches!(empty.resolve(&t), Err(Error::Placement(_))));
}

#[test]
fn parse_invalid_is_invalid_setting() {
    for bad in ["bogus", "cores(0)", "{0,1", "{}", "{0}:0"] {
        match PlacesSpec::parse("OMP_PLACES", bad) {
            Err(Error::InvalidSetting { name, value, expected }) => {
                assert_eq!(name, "OMP_PLACES");
                assert_eq!(value, bad);
                assert!(expected.contains("threads|cores|ll_caches|sockets|numa_domains"));
            }
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    assert_eq!(
        PlacesSpec::parse("OMP_PLACES", "ll_caches(2)").unwrap(),
        PlacesSpec::Abstract(AbstractPlace::LlCaches, Some(2))
    );
}

fn request(num_threads: Option<usize>, bind: Bind) -> PlacementRequest<'static> {
    PlacementRequest { num_threads, places: None, bind, dispatch: Dispatch::Pwaml, reserve: 0 }
}

#[test]
fn plan_master_last_wake_order() {
    let t = synth("pack:4 l3:1 core:8 pu:1");
    let p = plan(&t, &request(Some(32), Bind::True)).unwrap();
    assert_eq!(p.num_threads, 32);
    assert_eq!(p.master_pu(), 0);
    assert!(!p.bound, "synthetic topologies are never bound");
    assert_eq!(p.wake_order.len(), 31);
    let master = &t.pus()[p.master_pu()];
    // The 24 participants on other packages come first...
    for &i in &p.wake_order[..24] {
        let d = p.distance_from_master[i];
        assert!(matches!(d, Distance::Remote | Distance::SameNuma), "{i}: {d:?}");
        assert_ne!(t.pus()[p.pu_of(i)].package, master.package);
    }
    // ...the 7 sharing the master's L3 last.
    for &i in &p.wake_order[24..] {
        assert_eq!(p.distance_from_master[i], Distance::SharedL3);
        assert_eq!(t.pus()[p.pu_of(i)].l3, master.l3);
    }
    let mut sorted = p.wake_order.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (1..32).collect::<Vec<_>>());
}

#[test]
fn plan_spread_over_packages() {
    let t = synth("pack:4 l3:1 core:8 pu:1");
    let p = plan(&t, &request(Some(4), Bind::Spread)).unwrap();
    let mut packages: Vec<usize> = (0..4).map(|i| t.pus()[p.pu_of(i)].package).collect();
    packages.sort_unstable();
    assert_eq!(packages, vec![0, 1, 2, 3]);
    assert_eq!(p.master_pu(), 0);
}

#[test]
fn plan_with_places() {
    let t = synth("pack:2 l3:1 core:4 pu:2");
    let spec = PlacesSpec::parse("HERD_PLACES", "cores").unwrap();
    let req = PlacementRequest { places: Some(&spec), ..request(None, Bind::Close) };
    let p = plan(&t, &req).unwrap();
    assert_eq!(p.num_threads, 8);
    assert_eq!(p.pus_of(1), &[2, 3]);
}
