//! `herd::provide_global` racing with `herd::global()` on other threads:
//! building and providing are one initialisation, so the process ends up
//! with exactly one global pool — every `global()` returns the same pool,
//! and the provider is refused exactly when a pool was built first. (A test
//! binary of its own: the global pool is process-wide state.)

use std::sync::{Barrier, OnceLock};

static HOST: OnceLock<herd::Pool> = OnceLock::new();

fn host() -> &'static herd::Pool {
    HOST.get_or_init(|| herd::Pool::builder().num_threads(2).build().expect("host pool"))
}

#[test]
fn one_global_pool_whoever_wins() {
    let start = Barrier::new(5);
    let (seen, provided) = std::thread::scope(|s| {
        let getters: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    herd::global() as *const herd::Pool as usize
                })
            })
            .collect();
        start.wait();
        let provided = herd::provide_global(host);
        (getters.into_iter().map(|h| h.join().unwrap()).collect::<Vec<_>>(), provided)
    });
    let global = herd::global() as *const herd::Pool as usize;
    assert!(seen.iter().all(|&p| p == global), "two global pools: {seen:x?} and {global:x}");
    match provided {
        Ok(()) => assert_eq!(global, host() as *const herd::Pool as usize),
        Err(e) => {
            assert!(e.to_string().contains("already built"), "{e}");
            assert!(HOST.get().is_none(), "the refused provider was called");
        }
    }
    assert!(herd::global_is_set());
    // Whatever won, a second provider is refused.
    assert!(herd::provide_global(host).is_err());
}
