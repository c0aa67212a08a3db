//! Structural scale tests: what a region costs in posts and wake-up system
//! calls on a synthetic 64-participant machine (hwloc synthetic topology,
//! oversubscribed here, so every worker sleeps between regions and every
//! post must wake it). These hold on any machine; they are the evidence
//! that no thread issues a sequence of P wake-ups on a region path.

use herd::{Pool, Topology, WaitPolicy};

fn ceil_log2(n: usize) -> u64 {
    n.next_power_of_two().trailing_zeros() as u64
}

fn pool64() -> Pool {
    let topo = Topology::synthetic("pack:4 l3:1 core:16 pu:1").unwrap();
    Pool::builder().topology(topo).num_threads(64).wait(WaitPolicy::Passive).build().unwrap()
}

/// Every region reaches all 64 participants with 63 posts; the master sends
/// ⌈log₂ 64⌉ = 6 and issues at most 6 wake-ups per region (the flat
/// dispatch sent 63 and issued up to 63, one after another); no participant
/// sends more than 6; the tree is 6 deep.
#[test]
fn region_posts_and_wakes_are_logarithmic_on_64_workers() {
    let pool = pool64();
    let n = pool.num_threads();
    assert_eq!(n, 64);
    assert_eq!(pool.info().wake_tree_depth as u64, ceil_log2(n));
    let regions = 40u64;
    pool.reset_stats();
    for r in 0..regions {
        let seen = pool.broadcast(|ctx| ctx.index() as u64 + r);
        assert_eq!(seen, (0..64).map(|i| i + r).collect::<Vec<_>>());
        // Let the workers fall asleep again, so that the next post must wake.
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let stats = pool.stats();
    let total_posts: u64 = stats.iter().map(|s| s.posts).sum();
    assert_eq!(
        total_posts,
        regions * (n as u64 - 1),
        "every participant is posted to exactly once per region"
    );
    let master = &stats[0];
    assert_eq!(master.posts, regions * ceil_log2(n), "the master posts to its children only");
    assert!(
        master.wakes <= regions * ceil_log2(n),
        "master woke {} times in {regions} regions",
        master.wakes
    );
    for s in &stats {
        assert!(s.posts <= regions * ceil_log2(n), "participant {} posted {}", s.index, s.posts);
        assert!(s.wakes <= regions * ceil_log2(n), "participant {} woke {}", s.index, s.wakes);
    }
    // The workers did sleep (Passive, oversubscribed): the wakes are real.
    let all_wakes: u64 = stats.iter().map(|s| s.wakes).sum();
    assert!(all_wakes > 0, "no wake-up at all: the test did not exercise sleeping workers");
}

/// A region of part of the pool (as OpenMP's `num_threads`) builds its own
/// tree over the first `m` participants: `m - 1` posts, none to outsiders.
#[test]
fn partial_regions_post_only_to_members() {
    let pool = pool64();
    for m in [2usize, 5, 17, 33, 63] {
        pool.reset_stats();
        let seen = std::sync::Mutex::new(Vec::new());
        herd::rt::broadcast_n(&pool, m, |ctx| seen.lock().unwrap().push(ctx.index()), &|_| true);
        let mut seen = seen.into_inner().unwrap();
        seen.sort_unstable();
        assert_eq!(seen, (0..m).collect::<Vec<_>>());
        let stats = pool.stats();
        assert_eq!(stats.iter().map(|s| s.posts).sum::<u64>(), m as u64 - 1, "m={m}");
        assert!(stats[m..].iter().all(|s| s.posts == 0), "m={m}: an outsider posted");
        assert_eq!(stats[0].posts, ceil_log2(m), "m={m}");
    }
}

/// Panics in shares anywhere in the tree reach the master and leave the
/// pool usable (the tree's acknowledgements still complete).
#[test]
fn panics_anywhere_in_the_tree_reach_the_master() {
    let pool = pool64();
    for bad in [1usize, 7, 32, 63] {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.broadcast(|ctx| {
                if ctx.index() == bad {
                    panic!("share {bad}");
                }
            })
        }));
        assert!(r.is_err());
        assert_eq!(pool.broadcast(|ctx| ctx.index()).len(), 64);
    }
}
