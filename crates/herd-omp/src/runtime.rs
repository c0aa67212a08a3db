//! Process-wide state: the settings read once from the environment, and the
//! herd pools that teams run on.
//!
//! **Pools.** Outermost regions run on the *root* pool, built on first use
//! from `HERD_*` and `OMP_*` (HERD wins) with `nthreads-var` participants;
//! team member `i` is always the pool's participant `i`, the same OS thread
//! region after region (so `threadprivate` data persists). A region asking
//! for more threads than the root pool has replaces it with a larger one
//! (the old pool's threads stay parked; threadprivate values need not persist
//! when the team size changes). Nested active regions run on a pool private
//! to the encountering thread (its master), grown the same way, unbound so
//! that the outer threads' binding stays. Teams are cached per pool and size.

use crate::icv::Global;
use crate::team::Team;
use herd::rt::PoolHandle;
use herd::Pool;
use std::cell::{RefCell, UnsafeCell};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, OnceLock};

/// The settings, parsed once.
pub(crate) struct Runtime {
    pub global: Global,
    pub herd: herd::Config,
    pub omp: crate::env::OmpEnv,
}

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The runtime settings; reading the environment on first use. An invalid
/// `OMP_*` or `HERD_*` value ends the program with a message naming the
/// variable, the value and the accepted forms.
pub(crate) fn runtime() -> &'static Runtime {
    RUNTIME.get_or_init(|| match init() {
        Ok(r) => r,
        Err(msg) => {
            eprintln!("herd-omp: error: {msg}");
            std::process::exit(1);
        }
    })
}

/// The process-wide ICVs.
pub(crate) fn global() -> &'static Global {
    &runtime().global
}

fn init() -> Result<Runtime, String> {
    let omp = crate::env::parse(|k| std::env::var(k).ok()).map_err(|e| e.to_string())?;
    let herd = herd::Config::from_env().map_err(|e| e.to_string())?;
    // Preloaded beside the program's libgomp: undo its binding of this thread.
    crate::preload::restore_affinity()?;
    let mut herd = crate::env::apply(&omp, herd);
    // Without OMP_STACKSIZE, workers get what libgomp's get: the default
    // thread stack, i.e. the stack rlimit (programs size their stack arrays
    // for it), not Rust's 2 MiB.
    if herd.stack_size.is_none() {
        herd.stack_size = Some(default_stack());
    }
    let global = crate::settings::global_from(&omp, &herd);
    Ok(Runtime { global, herd, omp })
}

/// The default worker stack: the soft stack rlimit when it is finite (as
/// glibc sizes new threads), else 8 MiB; at least 64 KiB.
fn default_stack() -> usize {
    const FALLBACK: usize = 8 << 20;
    let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: a valid out-pointer.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut r) } == 0;
    if !ok || r.rlim_cur == libc::RLIM_INFINITY {
        return FALLBACK;
    }
    usize::try_from(r.rlim_cur).unwrap_or(FALLBACK).clamp(64 << 10, 1 << 30)
}

/// A pool and the teams cached on it (by size).
pub(crate) struct Root {
    pub pool: Pool,
    pub handle: PoolHandle,
    /// Teams by size; touched only by the pool's master (under its master role).
    teams: UnsafeCell<Vec<Option<Box<Team>>>>,
}

// SAFETY: `teams` is used only inside `herd::rt::enter` on this pool, i.e.
// by the one thread holding the master role.
unsafe impl Sync for Root {}

impl Root {
    fn build(n: usize, nested: bool) -> Root {
        let mut cfg = runtime().herd.clone();
        cfg.num_threads = Some(n);
        cfg.display_env = None;
        let mut b = herd::PoolBuilder::from_config(cfg);
        if nested {
            b = b.bind(herd::Bind::False).keep_master_binding();
        }
        let pool = match b.build() {
            Ok(p) => p,
            Err(e) => {
                eprintln!("herd-omp: error: cannot start {n} threads: {e}");
                std::process::exit(1);
            }
        };
        let handle = PoolHandle::of(&pool);
        Root { pool, handle, teams: UnsafeCell::new(Vec::new()) }
    }

    /// The team of `n` members (built on first use).
    ///
    /// # Safety
    /// The caller holds this pool's master role and no other reference to
    /// the team is live.
    pub(crate) unsafe fn team(&self, n: usize) -> &Team {
        // SAFETY: the caller's contract.
        let teams = unsafe { &mut *self.teams.get() };
        if teams.len() <= n {
            teams.resize_with(n + 1, || None);
        }
        teams[n].get_or_insert_with(|| Box::new(Team::new(n, Some(self.handle.clone()))))
    }
}

static ROOT: AtomicPtr<Root> = AtomicPtr::new(std::ptr::null_mut());
static ROOT_GROW: Mutex<()> = Mutex::new(());

/// The root pool, with at least `n` participants (0: as configured).
pub(crate) fn root(n: usize) -> &'static Root {
    let r = ROOT.load(Ordering::Acquire);
    // SAFETY: roots are leaked, never freed.
    if let Some(r) = unsafe { r.as_ref() } {
        if r.pool.num_threads() >= n {
            return r;
        }
    }
    grow_root(n)
}

#[cold]
fn grow_root(n: usize) -> &'static Root {
    let _g = ROOT_GROW.lock().unwrap_or_else(|e| e.into_inner());
    let cur = ROOT.load(Ordering::Acquire);
    // SAFETY: as above.
    if let Some(r) = unsafe { cur.as_ref() } {
        if r.pool.num_threads() >= n {
            return r;
        }
    }
    let want = if n == 0 { global().initial.nthreads as usize } else { n };
    let root: &'static Root = Box::leak(Box::new(Root::build(want.max(1), false)));
    ROOT.store(root as *const Root as *mut Root, Ordering::Release);
    root
}

thread_local! {
    /// Pools for nested active regions led by this thread.
    static NESTED: RefCell<Option<&'static Root>> = const { RefCell::new(None) };
}

/// The calling thread's private pool for nested regions, with at least `n` participants.
pub(crate) fn nested_root(n: usize) -> &'static Root {
    NESTED.with(|cell| {
        let mut c = cell.borrow_mut();
        match *c {
            Some(r) if r.pool.num_threads() >= n => r,
            _ => {
                // The previous pool (if any) is left parked: a task of it may
                // still refer to its teams.
                let r: &'static Root = Box::leak(Box::new(Root::build(n, true)));
                *c = Some(r);
                r
            }
        }
    })
}
