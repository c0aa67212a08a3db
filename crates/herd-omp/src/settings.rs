//! From the parsed environment to the process-wide ICVs, with libgomp's
//! derivations (see [`DisplayIcvs::from_omp`]): `max-active-levels` from
//! `OMP_NESTED` or per-level lists, `bind-var` true when only `OMP_PLACES`
//! is set, the run schedule's default chunk.

use crate::env::{DisplayIcvs, OmpEnv, ScheduleModifier};
use crate::icv::{Global, Icv, ProcBind, Sched, SchedKind, SUPPORTED_ACTIVE_LEVELS};

/// The resolved OpenMP view of the settings (also what `OMP_DISPLAY_ENV` prints).
pub(crate) fn display_icvs(omp: &OmpEnv, herd: &herd::Config) -> DisplayIcvs {
    let mut d = DisplayIcvs::from_omp(omp, default_threads(herd));
    // HERD_NUM_THREADS wins over OMP_NUM_THREADS for the outermost level.
    if let (Some(n), Some(first)) = (herd.num_threads, d.num_threads.first_mut()) {
        *first = n;
    }
    d
}

/// The process-wide ICVs.
pub(crate) fn global_from(omp: &OmpEnv, herd: &herd::Config) -> Global {
    let d = display_icvs(omp, herd);
    let sat = |v: u64| v.min(u32::MAX as u64) as u32;
    let nthreads_list: Vec<u32> = d.num_threads.iter().map(|&n| sat(n as u64).max(1)).collect();
    let bind_list: Vec<ProcBind> = d.proc_bind.clone();
    let s = d.schedule;
    let kind = s.kind;
    let default_chunk = if kind == SchedKind::Static || kind == SchedKind::Auto { 0 } else { 1 };
    let initial = Icv {
        nthreads: nthreads_list[0],
        dynamic: d.dynamic,
        run_sched: Sched {
            kind,
            chunk: s.chunk.map_or(default_chunk, |c| c.min(i64::MAX as usize) as i64),
            monotonic: s.modifier == Some(ScheduleModifier::Monotonic),
        },
        bind: bind_list[0],
        max_active_levels: sat(d.max_active_levels).min(SUPPORTED_ACTIVE_LEVELS),
        thread_limit: sat(d.thread_limit).max(1),
        default_device: d.default_device,
        def_allocator: crate::memory::DEFAULT_MEM_ALLOC,
    };
    Global {
        initial,
        nthreads_list,
        bind_list,
        cancellation: d.cancellation,
        max_task_priority: d.max_task_priority,
    }
}

/// One thread per usable PU unless `HERD_NUM_THREADS`/`OMP_NUM_THREADS` say otherwise.
fn default_threads(herd: &herd::Config) -> usize {
    herd.num_threads.unwrap_or_else(usable_pus)
}

/// [`usable_pus`]' cache; 0 until read (and again in a forked child).
static USABLE_PUS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The PUs herd may use (`HERD_TOPOLOGY` respected; at least 1), read once
/// per process: a forked child reads them again ([`forget_usable_pus`]), so
/// `omp_get_num_procs` in a child that narrowed its CPU mask counts the
/// CPUs it kept, as libgomp's does.
pub(crate) fn usable_pus() -> usize {
    use std::sync::atomic::Ordering;
    match USABLE_PUS.load(Ordering::Relaxed) {
        0 => {
            let n = herd::Topology::from_env().map(|t| t.pus().len()).unwrap_or(1).max(1);
            USABLE_PUS.store(n, Ordering::Relaxed);
            n
        }
        n => n,
    }
}

/// In a forked child (async-signal-safe: one store): the next
/// [`usable_pus`] reads the machine again.
pub(crate) fn forget_usable_pus() {
    USABLE_PUS.store(0, std::sync::atomic::Ordering::Relaxed);
}

/// `Some(verbose)` when `OMP_DISPLAY_ENV` or `HERD_DISPLAY_ENV` asks for the
/// settings to be printed (herd's settings hold the merged value).
pub(crate) fn display_requested(herd: &herd::Config) -> Option<bool> {
    match herd.display_env {
        Some(herd::DisplayEnv::True) => Some(false),
        Some(herd::DisplayEnv::Verbose) => Some(true),
        _ => None,
    }
}
