//! Every task kernel at its small size, sequentially, on a 2-worker herd
//! pool under every scheduler, and on a 2-thread Rayon pool: each run checks
//! its own result (`Bench::measure` fails on a wrong one).

use herd_bench::tasks::{self, Runtime, Size};

#[test]
fn every_kernel_on_every_runtime() {
    let pools: Vec<herd::Pool> = herd::Sched::ALL
        .iter()
        .map(|&s| herd::Pool::builder().num_threads(2).scheduler(s).build().expect("herd pool"))
        .collect();
    let rayon = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("Rayon pool");
    let runtimes: Vec<(String, Runtime)> = std::iter::once(("seq".to_string(), Runtime::Seq))
        .chain(pools.iter().map(|p| (format!("herd {}", p.scheduler()), Runtime::Herd(p))))
        .chain(std::iter::once(("rayon".to_string(), Runtime::Rayon(&rayon))))
        .collect();
    for bench in tasks::suite(Size::Small) {
        for (name, rt) in &runtimes {
            if let Err(e) = bench.measure(*rt) {
                panic!("{} on {name}: {e}", bench.name());
            }
        }
    }
}

#[test]
fn cutoffs_keep_results_right() {
    let pool = herd::Pool::builder().num_threads(2).build().expect("herd pool");
    for name in tasks::NAMES {
        let bench = tasks::kernel(name, Size::Small, Some(2)).expect("a known kernel");
        bench.measure(Runtime::Herd(&pool)).unwrap_or_else(|e| panic!("{name} with grain 2: {e}"));
    }
    assert!(tasks::kernel("nope", Size::Small, None).is_none());
}
