//! Process-wide state: the settings read once from the environment, and the
//! herd pools that teams run on.
//!
//! **Pools.** Outermost regions run on the *root* pool, built on first use
//! from `HERD_*` and `OMP_*` (HERD wins) with `nthreads-var` participants;
//! team member `i` is always the pool's participant `i`, the same OS thread
//! region after region (so `threadprivate` data persists). A region asking
//! for more threads than the root pool has replaces it with a larger one
//! (the old pool's threads stay parked — a thread may still hold it — so the
//! root grows at least twofold, or to the usable PUs; threadprivate values
//! need not persist when the team size changes). Nested active regions run
//! on pools lent to the encountering thread (their master) from its own idle
//! nested pools, unbound so that the outer threads' binding stays; see
//! [`Nested`] for why their threads stay bounded. Teams are cached per pool
//! and size.

use crate::icv::Global;
use crate::team::Team;
use herd::rt::PoolHandle;
use herd::Pool;
use std::cell::{RefCell, UnsafeCell};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The settings, parsed once.
pub(crate) struct Runtime {
    pub global: Global,
    pub herd: herd::Config,
    pub omp: crate::env::OmpEnv,
    /// The PUs the process may run on, read at start-up (before any pool
    /// pins a thread: a pinned thread's own mask says 1), and read again in
    /// a forked child's first region (see [`refit_after_fork`]).
    pus: AtomicUsize,
    /// The initial thread's affinity mask at start-up, which a forked child's
    /// thread gets back (`fork.rs`): the child then starts from the
    /// process's CPUs, not from the single PU herd pinned its parent's
    /// thread to. `None` if it could not be read.
    start_mask: Option<libc::cpu_set_t>,
}

impl Runtime {
    /// The PUs the process may run on (see the field).
    pub(crate) fn pus(&self) -> usize {
        self.pus.load(Ordering::Relaxed)
    }
}

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The runtime settings; reading the environment on first use. An invalid
/// `OMP_*` or `HERD_*` value ends the program with a message naming the
/// variable, the value and the accepted forms.
pub(crate) fn runtime() -> &'static Runtime {
    RUNTIME.get_or_init(|| match init() {
        Ok(r) => {
            crate::fork::register();
            r
        }
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
    let lookup = |k: &str| std::env::var(k).ok();
    let mut omp = crate::env::parse(lookup).map_err(|e| e.to_string())?;
    let kmp = crate::env::kmp::parse(&lookup).map_err(|e| e.to_string())?;
    let herd = herd::Config::from_env().map_err(|e| e.to_string())?;
    // Preloaded beside the program's libgomp: undo its binding of this thread.
    crate::preload::restore_affinity()?;
    // libomp's KMP_* variables, with libomp's priorities over the OMP_* ones.
    let notes = kmp.apply(&mut omp, &|k| lookup(k).is_some_and(|v| !v.trim().is_empty()), || {
        herd::Topology::from_env().ok()
    });
    for w in notes.warnings.iter().chain(&crate::env::kmp::not_read_warnings(&lookup)) {
        eprintln!("herd-omp: warning: {w}");
    }
    for line in &notes.info {
        eprintln!("herd-omp: {line}");
    }
    // OMP_PLACES (not HERD_PLACES, which wins and stays strict) loses the
    // CPUs this process cannot use and is cut to what exists, as under libgomp.
    if herd.places.is_none() && omp.places.is_some() {
        let topo = herd::Topology::from_env().map_err(|e| e.to_string())?;
        if let Some(warning) = omp.fit_places(&topo) {
            eprintln!("herd-omp: warning: {warning}");
        }
    }
    let mut herd = crate::env::apply(&omp, herd);
    // Without OMP_STACKSIZE, workers get what libgomp's get: the default
    // thread stack, i.e. the stack rlimit (programs size their stack arrays
    // for it), not Rust's 2 MiB.
    if herd.stack_size.is_none() {
        herd.stack_size = Some(default_stack());
    }
    let mut global = crate::settings::global_from(&omp, &herd);
    global.initial.def_allocator = def_allocator(&omp);
    let pus = AtomicUsize::new(std::thread::available_parallelism().map_or(1, |p| p.get()));
    // SAFETY: cpu_set_t is plain data, valid all zero; a valid out-pointer of its size.
    let start_mask = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0).then_some(set)
    };
    Ok(Runtime { global, herd, omp, pus, start_mask })
}

/// `def-allocator-var` from `OMP_ALLOCATOR`: a predefined allocator, or one
/// made from a memory space and traits; one this host cannot make (high
/// bandwidth or pinned memory) leaves the default, with a warning.
fn def_allocator(omp: &crate::env::OmpEnv) -> usize {
    use crate::env::AllocatorKind;
    let Some(a) = &omp.allocator else {
        return crate::memory::DEFAULT_MEM_ALLOC;
    };
    match &a.kind {
        AllocatorKind::Predefined(h) => *h,
        AllocatorKind::Traits { memspace, traits } => {
            crate::allocator::traits::from_env(*memspace, traits).unwrap_or_else(|| {
                eprintln!(
                    "herd-omp: warning: OMP_ALLOCATOR={:?}: this host has no such memory (no high-bandwidth or \
                     pinned memory, as libgomp without memkind); using omp_default_mem_alloc",
                    a.spelled
                );
                crate::memory::DEFAULT_MEM_ALLOC
            })
        }
    }
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
    /// Built to wait passively (a nested pool for an oversubscribed nest).
    passive: bool,
}

// SAFETY: `teams` is used only inside `herd::rt::enter` on this pool, i.e.
// by the one thread holding the master role.
unsafe impl Sync for Root {}

impl Root {
    fn build(n: usize, nested: bool, passive: bool) -> Result<Root, String> {
        let mut cfg = herd_config().clone();
        cfg.num_threads = Some(n);
        cfg.display_env = None;
        if passive {
            cfg.wait = Some(herd::WaitPolicy::Passive);
        }
        let mut b = herd::PoolBuilder::from_config(cfg);
        if nested {
            b = b.bind(herd::Bind::False).keep_master_binding();
        }
        let pool = b.build().map_err(|e| format!("cannot start {n} threads: {e}"))?;
        let handle = PoolHandle::of(&pool);
        Ok(Root { pool, handle, teams: UnsafeCell::new(Vec::new()), passive })
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

/// Held while the root pool is replaced, and across a `fork` (`fork.rs`).
/// A flag rather than a `Mutex`: the fork handlers take it in one call and
/// release it in another, and the child releases a lock its parent's thread
/// took. Growth is rare and short, so waiters yield.
static ROOT_GROW: AtomicBool = AtomicBool::new(false);

/// Takes the root lock.
pub(crate) fn lock_roots() {
    while ROOT_GROW.swap(true, Ordering::Acquire) {
        std::thread::yield_now();
    }
}

/// Releases the root lock.
pub(crate) fn unlock_roots() {
    ROOT_GROW.store(false, Ordering::Release);
}

/// In a forked child (`fork.rs`), with the root lock held: forgets the root
/// pool and this thread's idle nested pools, whose threads the child does not
/// have (leaked, not dropped: dropping would join them). The next region
/// builds a new root.
pub(crate) fn forget_pools_in_child() {
    // The thread's start-up mask back (herd pinned it in the parent), and
    // the machine to be read again at the first region: by then the child
    // may have narrowed its mask (a process pool pinning each worker).
    if let Some(mask) = RUNTIME.get().and_then(|r| r.start_mask.as_ref()) {
        // SAFETY: a valid mask of its size; a system call, async-signal-safe.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), mask) };
    }
    herd::Topology::forget_detected();
    crate::settings::forget_usable_pus();
    REFIT.store(true, Ordering::Relaxed);
    ROOT.store(std::ptr::null_mut(), Ordering::Release);
    let _ = NESTED.try_with(|c| {
        if let Ok(mut idle) = c.try_borrow_mut() {
            std::mem::forget(std::mem::take(&mut *idle));
        }
    });
}

/// Set in a forked child until its first root pool is built: the settings
/// are then fitted to the CPUs the child may use ([`refit_after_fork`]).
static REFIT: AtomicBool = AtomicBool::new(false);

/// herd's settings fitted to a forked child's CPUs (a leaked box), or null:
/// then [`Runtime::herd`] as read at start-up.
static CHILD_HERD: AtomicPtr<herd::Config> = AtomicPtr::new(std::ptr::null_mut());

/// The herd settings pools are built from.
fn herd_config() -> &'static herd::Config {
    // SAFETY: non-null only as a leaked box, never freed.
    unsafe { CHILD_HERD.load(Ordering::Acquire).as_ref() }.unwrap_or(&runtime().herd)
}

/// In a forked child, with the root lock held, before its first root pool:
/// reads the machine again (the child's thread may have narrowed its mask
/// since the fork) and fits the settings to it as start-up does: the usable
/// PU count, and explicit places losing the CPUs the child cannot use (with
/// the start-up warning). A synthetic `HERD_TOPOLOGY` is left alone.
fn refit_after_fork() {
    let rt = runtime();
    if rt.herd.topology.is_some() {
        return;
    }
    let Ok(topo) = herd::Topology::detect() else { return };
    rt.pus.store(topo.pus().len().max(1), Ordering::Relaxed);
    let mut cfg = herd_config().clone();
    let mut omp = crate::env::OmpEnv {
        places: cfg.places.take(),
        places_from_cpu_affinity: rt.omp.places_from_cpu_affinity,
        ..Default::default()
    };
    if let Some(warning) = omp.fit_places(&topo) {
        eprintln!("herd-omp: warning: in a forked child: {warning}");
    }
    cfg.places = omp.places;
    CHILD_HERD.store(Box::into_raw(Box::new(cfg)), Ordering::Release);
}

/// Releases the root lock when dropped.
struct RootGuard;

impl Drop for RootGuard {
    fn drop(&mut self) {
        unlock_roots();
    }
}

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
    lock_roots();
    let _g = RootGuard;
    if REFIT.swap(false, Ordering::Relaxed) {
        refit_after_fork();
    }
    let cur = ROOT.load(Ordering::Acquire);
    // SAFETY: as above.
    if let Some(r) = unsafe { cur.as_ref() } {
        if r.pool.num_threads() >= n {
            return r;
        }
    }
    // SAFETY: as above.
    let want = match unsafe { cur.as_ref() } {
        None if n == 0 => global().initial.nthreads as usize,
        None => n,
        // The replaced pool stays (a thread may still hold it); growing at
        // least to twice its size, or to the usable PUs, keeps the threads
        // of all roots within about four times the largest team.
        Some(r) => n.max(grown(r.pool.num_threads())),
    };
    let built = Root::build(want.max(1), false, false).or_else(|e| match want > n && n > 0 {
        true => Root::build(n, false, false),
        false => Err(e),
    });
    // SAFETY: as above.
    let root = match (built, unsafe { cur.as_ref() }) {
        (Ok(r), _) => r,
        // The process cannot have more threads: the teams stay as large as
        // the pool they have (the specification leaves the team size
        // implementation defined when the threads cannot be provided).
        (Err(e), Some(r)) => {
            warn_fewer(&e, r.pool.num_threads());
            return r;
        }
        (Err(e), None) => {
            eprintln!("herd-omp: error: {e}");
            std::process::exit(1);
        }
    };
    let root: &'static Root = Box::leak(Box::new(root));
    ROOT.store(root as *const Root as *mut Root, Ordering::Release);
    root
}

/// Makes the root pool herd's global pool (`herd::provide_global`), so that
/// herd code in this process called from outside any region — herd-la's
/// routines behind `dgemm_`/`dpotrf_` in this library, a Rust library's
/// `herd::join` — runs on the threads the parallel regions run on, with the
/// calling thread as their master, instead of starting a second team. Called
/// from within a region, such code already runs on the member's own pool
/// (its jobs go to the member's deque, where team members waiting at a
/// barrier take them). Nothing is built here: the root pool is made on first
/// use, from `OMP_*`/`HERD_*`, as for a region.
pub(crate) fn provide_global() {
    if let Err(e) = herd::provide_global(|| &root(0).pool) {
        eprintln!("herd-omp: warning: herd code in this process keeps its own pool: {e}");
    }
}

/// Says, once per process, that a team gets fewer threads than it asked for.
#[cold]
pub(crate) fn warn_fewer(why: &str, given: usize) {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!("herd-omp: warning: {why}; teams that need more run with {given} thread(s)");
    }
}

/// The next root size after `old` participants: doubled, but not past the
/// usable PUs unless already there.
fn grown(old: usize) -> usize {
    let pus = runtime().pus();
    if old >= pus {
        2 * old
    } else {
        (2 * old).min(pus)
    }
}

thread_local! {
    /// The idle nested pools of this thread (see [`Nested`]). Boxed: a pool
    /// moves between this list and the region it is lent to (`Nested`) as
    /// one pointer, not by copying the `Root`.
    #[allow(clippy::vec_box)]
    static NESTED: RefCell<Vec<Box<Root>>> = const { RefCell::new(Vec::new()) };
}

/// A nested pool lent to the region the calling thread leads; given back to
/// the thread's idle pools when dropped (the region has ended then: its
/// members are parked and its tasks done).
///
/// **Bounded threads.** Each thread keeps the pools of the nested regions it
/// leads, idle between regions, and lends them to itself only: a region takes
/// the smallest idle pool with enough participants and the wait policy it
/// needs (a larger pool runs a partial region); when none fits, the largest idle one is shut
/// down (its threads joined) and replaced by one of the size asked. A thread
/// leads at most one region per nesting level at a time, so it holds at most
/// `max-active-levels` pools, each no larger than the largest team it has
/// asked for at once: the threads of the process stay bounded by the largest
/// concurrent demand, whatever sequence of team sizes it asks for. The
/// region start touches only this thread's list (no process-wide lock or
/// line). Pools go when the thread ends.
pub(crate) struct Nested(Option<Box<Root>>);

impl std::ops::Deref for Nested {
    type Target = Root;
    fn deref(&self) -> &Root {
        self.0.as_ref().expect("a lent pool")
    }
}

impl Drop for Nested {
    fn drop(&mut self) {
        if let Some(r) = self.0.take() {
            // At thread exit the list may be gone: the pool then ends here.
            let _ = NESTED.try_with(|c| c.borrow_mut().push(r));
        }
    }
}

/// Whether a nested region whose teams, its own and the enclosing active
/// ones, multiply to `demand` threads should wait passively: when they
/// outnumber the usable PUs and the user chose no wait policy. (A nested
/// pool on its own never looks oversubscribed to herd, which counts only its
/// participants: spinning members of four teams on two cores would take each
/// other's time slices.)
pub(crate) fn nested_passive(demand: usize) -> bool {
    let rt = runtime();
    demand > rt.pus() && rt.herd.wait.is_none()
}

/// A pool for a nested region of `n` members, led by the calling thread,
/// waiting passively if `passive` (see [`nested_passive`]); `None` (after a
/// warning) when the threads cannot be started: the region is serialized.
pub(crate) fn nested_root(n: usize, passive: bool) -> Option<Nested> {
    let (fit, retire) = NESTED.with(|cell| {
        let mut idle = cell.borrow_mut();
        let best = (0..idle.len())
            .filter(|&i| idle[i].pool.num_threads() >= n && idle[i].passive == passive)
            .min_by_key(|&i| idle[i].pool.num_threads());
        match best {
            Some(i) => (Some(idle.swap_remove(i)), None),
            None => {
                let largest = (0..idle.len()).max_by_key(|&i| idle[i].pool.num_threads());
                (None, largest.map(|i| idle.swap_remove(i)))
            }
        }
    });
    // Joins the retired pool's threads, outside the borrow.
    drop(retire);
    let pool = match fit {
        Some(p) => p,
        None => match Root::build(n, true, passive) {
            Ok(r) => Box::new(r),
            Err(e) => {
                warn_fewer(&e, 1);
                return None;
            }
        },
    };
    Some(Nested(Some(pool)))
}
