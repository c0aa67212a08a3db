//! `fork()` and the global pool: a forked child (which has only the thread
//! that forked) builds a new global pool on first use instead of waiting for
//! the parent's workers; a child that narrows its CPU mask first gets a pool
//! within it. Each child is stopped by `alarm` if it hangs, so a regression
//! fails here instead of hanging the suite. (Its own test binary: the child
//! must not inherit other tests' pools mid-operation.)
//!
//! ThreadSanitizer stops a child that starts threads after a multi-threaded
//! process forked (its `die_after_fork`), so `make tsan` (which sets
//! `herd_tsan`) leaves this test out.
#![cfg(not(herd_tsan))]

use std::sync::atomic::{AtomicUsize, Ordering};

fn fib(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        let (a, b) = herd::join(|| fib(n - 1), || fib(n - 2));
        a + b
    }
}

/// The calling thread's CPU mask.
fn mask() -> libc::cpu_set_t {
    // SAFETY: plain data, valid all zero; a valid out-pointer of its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set), 0);
        set
    }
}

fn cpus(set: &libc::cpu_set_t) -> Vec<usize> {
    // SAFETY: indices below CPU_SETSIZE.
    (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, set) }).collect()
}

/// What a child checks; its exit status: 0 if all is well.
fn child(narrow: bool) -> i32 {
    let mut only = None;
    if narrow {
        let last = *cpus(&mask()).last().expect("a CPU");
        // SAFETY: plain data; a valid mask of its size.
        unsafe {
            let mut one: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(last, &mut one);
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &one) != 0 {
                return 2;
            }
        }
        only = Some(last);
    }
    if fib(20) != 6765 {
        return 3;
    }
    let outside = AtomicUsize::new(0);
    let ran = AtomicUsize::new(0);
    let threads = std::sync::Mutex::new(std::collections::HashSet::new());
    herd::scope(|s| {
        for _ in 0..64 {
            s.spawn(|_| {
                ran.fetch_add(1, Ordering::Relaxed);
                threads.lock().unwrap().insert(std::thread::current().id());
                std::thread::sleep(std::time::Duration::from_millis(1));
                if let Some(cpu) = only {
                    if cpus(&mask()) != [cpu] {
                        outside.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    if ran.load(Ordering::Relaxed) != 64 {
        return 4;
    }
    if outside.load(Ordering::Relaxed) != 0 {
        return 5;
    }
    if narrow && herd::current_num_threads() != 1 {
        return 6;
    }
    // The child's pool has workers of its own: jobs that sleep are taken by
    // them (with the parent's pool, only the child's thread would run them).
    if herd::current_num_threads() > 1 && threads.lock().unwrap().len() < 2 {
        return 7;
    }
    0
}

#[test]
fn forked_children_build_their_own_global_pool() {
    // The parent's pool exists (with its workers) before the fork.
    assert_eq!(fib(18), 2584);
    let parent_threads = herd::current_num_threads();
    for narrow in [false, true] {
        // SAFETY: the child runs only `child` (herd and libc) and `_exit`s.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // SAFETY: async-signal-safe calls; `_exit` skips the harness.
            unsafe {
                libc::alarm(20);
                let code = std::panic::catch_unwind(|| child(narrow)).unwrap_or(9);
                libc::_exit(code);
            }
        }
        let mut status = 0;
        // SAFETY: a child of this process; a valid out-pointer.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "child (narrowed mask: {narrow}) failed: exited {}, signal {}",
            if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -1 },
            if libc::WIFSIGNALED(status) { libc::WTERMSIG(status) } else { 0 }
        );
    }
    // The parent's pool is untouched.
    assert_eq!(herd::current_num_threads(), parent_threads);
    assert_eq!(fib(18), 2584);
}
