//! `fork()`: a child process has only the thread that called `fork`. The
//! pools' threads (the root pool's workers, the nested pools that thread
//! leads) are not there, so the child's first parallel region would post to
//! members that never come and wait for ever — libgomp's behaviour, which
//! hangs Python's `multiprocessing` children that call an OpenMP library.
//! herd forgets those pools in the child (`pthread_atfork`), without
//! dropping them: dropping joins their threads, which do not exist there.
//! The child's next region builds a new root pool from the same settings;
//! the ICVs are the parent's, as everything else the child inherits.
//!
//! The root pool is replaced under a lock (`runtime::grow_root`): the fork
//! handlers take it before the fork and release it after, in the parent and
//! in the child, so no child starts with it held by a thread it does not
//! have.
//!
//! A `fork` from inside a parallel region leaves the child in the middle of
//! a region whose other members do not exist; as with libgomp, such a
//! child may run no OpenMP construct of that region (its process may still
//! `exec` or `_exit`).

use crate::runtime;
use std::sync::Once;

/// Registers the handlers, once per process (from the runtime's first use,
/// before any pool exists).
pub(crate) fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: the handlers are `extern "C"` functions of this library that
        // live as long as the process; they only take and release the root
        // lock and, in the child, forget pools (no allocation is freed).
        let rc = unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) };
        if rc != 0 {
            eprintln!("herd-omp: warning: pthread_atfork failed ({rc}): a forked child must not use OpenMP");
        }
    });
}

extern "C" fn prepare() {
    runtime::lock_roots();
}

extern "C" fn parent() {
    runtime::unlock_roots();
}

extern "C" fn child() {
    runtime::forget_pools_in_child();
    runtime::unlock_roots();
}
