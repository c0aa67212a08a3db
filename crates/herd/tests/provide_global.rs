//! `herd::provide_global`: a host runtime's pool becomes the global pool
//! (one set of workers for the process). A test binary of its own: the
//! global pool is process-wide state.

use std::sync::OnceLock;

static HOST: OnceLock<herd::Pool> = OnceLock::new();

fn host() -> &'static herd::Pool {
    HOST.get_or_init(|| herd::Pool::builder().num_threads(3).build().expect("host pool"))
}

#[test]
fn a_provided_pool_is_the_global_one() {
    assert!(!herd::global_is_set());
    herd::provide_global(host).expect("first provider");
    assert!(herd::global_is_set());
    // global() is the host's pool, built by the provider on first use.
    assert!(std::ptr::eq(herd::global(), host()));
    assert_eq!(herd::current_num_threads(), 3);
    // join and scope from a thread outside any pool run on the host's
    // participants: every index that took part is one of its three.
    let seen = std::sync::Mutex::new(Vec::new());
    herd::scope(|s| {
        for _ in 0..64 {
            s.spawn(|_| {
                let i = herd::current_thread_index().expect("inside the host pool");
                std::thread::sleep(std::time::Duration::from_micros(200));
                seen.lock().unwrap().push(i);
            });
        }
    });
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 64);
    assert!(seen.iter().all(|&i| i < 3), "{seen:?}");
    let (a, b) = herd::join(herd::current_num_threads, herd::current_num_threads);
    assert_eq!((a, b), (3, 3));
    // No second pool may serve the process: another provider, or building the
    // global pool, is refused with a message.
    let again = herd::provide_global(host).unwrap_err().to_string();
    assert!(again.contains("already has a provider"), "{again}");
    let built = herd::Pool::builder().num_threads(1).build_global().unwrap_err().to_string();
    assert!(built.contains("already"), "{built}");
    assert!(std::ptr::eq(herd::global(), host()));
}
