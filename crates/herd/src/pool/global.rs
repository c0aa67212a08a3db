//! The process's global pool: the one [`join`](super::join),
//! [`scope`](super::scope) and library routines use outside any pool, built
//! on first use from the `HERD_*` environment or provided by a host runtime
//! (herd's OpenMP runtime provides its root pool).
//!
//! **`fork()`.** A forked child has only the thread that called `fork`: a
//! built global pool's workers are not there, and its first `join` would
//! wait for them for ever. `pthread_atfork` handlers (registered when the
//! pool is built) make the child forget that pool (leaked, not dropped:
//! dropping joins threads that do not exist) and set its thread's CPU mask
//! back to the CPUs the parent's pool was laid out on (herd pinned the
//! parent's master thread to one of them); the child's next `global()`
//! reads the machine again and builds a new pool from the same builder, so
//! a child that narrowed its mask first gets a pool within it. A provided
//! pool is the provider's to handle (herd's OpenMP runtime does). A `fork`
//! from inside a pool operation (a worker, or a master inside `join`) leaves
//! the child inside work whose other participants it lacks: as with OpenMP,
//! the child may not use herd then.

use super::{Pool, PoolBuilder, Registry};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::{Arc, OnceLock};

/// The process's global pool: built here, or provided by a host runtime.
/// One `OnceLock` holds either, so that building and providing go through a
/// single initialisation and can never both happen (a check of one cell
/// followed by a set of another could let a `global()` on another thread
/// build a second pool in between).
enum Global {
    /// Built from the `HERD_*` environment (or by
    /// [`PoolBuilder::build_global`]).
    Built(Built),
    /// Where the pool comes from when a host runtime owns the process's
    /// workers (see [`provide_global`]).
    Provided(fn() -> &'static Pool),
}

static GLOBAL: OnceLock<Global> = OnceLock::new();

/// The global pool: the one a host runtime provides ([`provide_global`]),
/// else built on first use from the `HERD_*` environment.
///
/// # Panics
/// If the environment holds an invalid setting; the message names the
/// variable, the value and the accepted forms. Use
/// [`PoolBuilder::build_global`] to handle that as an error instead.
pub fn global() -> &'static Pool {
    let global = GLOBAL.get_or_init(|| {
        let built = PoolBuilder::from_env().and_then(|b| Ok((b.clone(), b.build()?)));
        match built {
            Ok((builder, pool)) => Global::Built(Built::new(builder, pool)),
            Err(e) => panic!("herd: cannot build the global pool: {e}"),
        }
    });
    match global {
        Global::Built(b) => b.pool(),
        Global::Provided(source) => source(),
    }
}

/// A global pool herd built, and how to build it again in a forked child.
struct Built {
    /// The pool: a leaked box; null in a forked child until its first use.
    pool: AtomicPtr<Pool>,
    /// What built it (boxed: most processes never fork).
    builder: Box<PoolBuilder>,
}

/// Held while a forked child's global pool is built, and across a `fork`
/// (so that no child starts with it held by a thread it lacks). A flag, not
/// a `Mutex`: the fork handlers take it in one call and release it in
/// another, and the child releases what its parent's thread took.
static REBUILD: AtomicBool = AtomicBool::new(false);

fn lock() {
    while REBUILD.swap(true, Ordering::Acquire) {
        std::thread::yield_now();
    }
}

fn unlock() {
    REBUILD.store(false, Ordering::Release);
}

impl Built {
    fn new(builder: PoolBuilder, pool: Pool) -> Built {
        register_fork_handlers();
        Built { pool: AtomicPtr::new(Box::into_raw(Box::new(pool))), builder: Box::new(builder) }
    }

    fn pool(&'static self) -> &'static Pool {
        // SAFETY: non-null only as a leaked box, never freed.
        match unsafe { self.pool.load(Ordering::Acquire).as_ref() } {
            Some(pool) => pool,
            None => self.rebuild(),
        }
    }

    /// In a forked child, the first use: a new pool from the same builder,
    /// on the machine as the child now sees it.
    #[cold]
    fn rebuild(&'static self) -> &'static Pool {
        lock();
        // SAFETY: as in `pool`.
        let pool = match unsafe { self.pool.load(Ordering::Acquire).as_ref() } {
            Some(pool) => pool,
            None => match self.builder.clone().build() {
                Ok(pool) => {
                    let pool = Box::into_raw(Box::new(pool));
                    self.pool.store(pool, Ordering::Release);
                    // SAFETY: just leaked.
                    unsafe { &*pool }
                }
                Err(e) => {
                    unlock();
                    panic!("herd: cannot build the global pool in a forked child: {e}")
                }
            },
        };
        unlock();
        pool
    }
}

/// Registers the `fork` handlers, once per process.
fn register_fork_handlers() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: the handlers are `extern "C"` functions of this crate that
        // live as long as the process; they take and release a flag and, in
        // the child, forget the pool (nothing is freed) and make system calls.
        let rc = unsafe {
            libc::pthread_atfork(Some(before_fork), Some(after_fork_parent), Some(after_fork_child))
        };
        if rc != 0 {
            eprintln!(
                "herd: warning: pthread_atfork failed ({rc}): a forked child must not use herd's global pool"
            );
        }
    });
}

extern "C" fn before_fork() {
    lock();
}

extern "C" fn after_fork_parent() {
    unlock();
}

extern "C" fn after_fork_child() {
    if let Some(Global::Built(b)) = GLOBAL.get() {
        // SAFETY: as in `Built::pool`; read before it is forgotten.
        if let Some(pool) = unsafe { b.pool.load(Ordering::Acquire).as_ref() } {
            pool.registry.topology.release_current_thread();
        }
        b.pool.store(std::ptr::null_mut(), Ordering::Release);
        crate::Topology::forget_detected();
    }
    unlock();
}

/// Makes `source` the global pool's provider: from now on [`global`] — and
/// so [`join`], [`scope`] and every library routine called from a thread
/// outside any pool — runs on the pool `source()` returns, instead of a pool
/// of its own. This is how one process keeps **one set of workers**: herd's
/// OpenMP runtime provides its root pool (the threads its parallel regions
/// run on), so that herd-la's routines called from the program's serial
/// code run on those threads and not on a second team
/// (`thread-management-overhead-atlas.txt` §IV-A). `source` may return a
/// different (larger) pool over time; each call uses the one it returns.
///
/// # Errors
/// When the global pool was already built, or a provider already set: two
/// pools would then serve one process.
pub fn provide_global(source: fn() -> &'static Pool) -> crate::Result<()> {
    GLOBAL.set(Global::Provided(source)).map_err(|_| {
        crate::Error::Placement(match GLOBAL.get() {
            Some(Global::Provided(_)) => "the global pool already has a provider".into(),
            _ => "the global pool was already built; a provider must be set before its first use".into(),
        })
    })
}

/// True once the global pool exists or has a provider: [`global`] will not
/// build one from the environment.
pub fn global_is_set() -> bool {
    GLOBAL.get().is_some()
}

pub(crate) fn global_registry() -> &'static Arc<Registry> {
    &global().registry
}

/// Makes `pool`, built by `builder`, the global pool, unless one was built
/// or provided already (then an error).
pub(crate) fn set_global(builder: PoolBuilder, pool: Pool) -> Result<(), ()> {
    let mut offered = Some((builder, pool));
    GLOBAL.get_or_init(|| {
        let (builder, pool) = offered.take().expect("offered once");
        Global::Built(Built::new(builder, pool))
    });
    match offered {
        None => Ok(()),
        Some(_) => Err(()),
    }
}
