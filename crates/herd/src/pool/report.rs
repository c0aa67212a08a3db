//! The per-worker counters at the end of a run: printed on stderr when the
//! pool was built with `HERD_DISPLAY_ENV=verbose`, and written into the
//! trace (`otherData.worker_stats`) when `HERD_TRACE` is on — when the pool
//! is dropped, or at process exit for pools still alive then (the global
//! pool, pools a runtime keeps for the whole run).

use super::registry::Registry;
use crate::trace;
use crate::WorkerStats;
use std::fmt::Write;
use std::sync::{Arc, Mutex, Once, Weak};

/// Pools to report on at exit.
static LIVE: Mutex<Vec<Weak<Registry>>> = Mutex::new(Vec::new());
static AT_EXIT: Once = Once::new();

/// Remembers `reg` for the report at exit (call when it is built with a
/// report wanted).
pub(crate) fn watch(reg: &Arc<Registry>) {
    LIVE.lock().unwrap_or_else(|e| e.into_inner()).push(Arc::downgrade(reg));
    AT_EXIT.call_once(|| {
        // SAFETY: `report_at_exit` is an `extern "C" fn()` that never unwinds
        // (it catches panics); registering it has no other precondition.
        unsafe { libc::atexit(report_at_exit) };
    });
}

/// Reports on `reg` now (at drop) if it asked for a report.
pub(crate) fn report(reg: &Registry) {
    if !reg.report_stats && !trace::enabled() {
        return;
    }
    let stats = reg.counters.snapshot(&reg.shepherds.of);
    if trace::enabled() {
        trace::record_stats(reg.id, reg.sched_kind().name(), &stats);
    }
    if reg.report_stats {
        eprint!("{}", render(reg.id, reg.sched_kind().name(), &stats));
    }
}

extern "C" fn report_at_exit() {
    let _ = std::panic::catch_unwind(|| {
        let live: Vec<Weak<Registry>> = std::mem::take(&mut *LIVE.lock().unwrap_or_else(|e| e.into_inner()));
        for reg in live.iter().filter_map(Weak::upgrade) {
            report(&reg);
        }
    });
}

/// The table printed on stderr.
pub(crate) fn render(pool: usize, scheduler: &str, stats: &[WorkerStats]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "herd: pool {pool} ({scheduler}) per-worker counters:");
    let _ = writeln!(
        s,
        "herd:   {:>6} {:>4} {:>12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>12}",
        "worker", "shep", "tasks", "chunks", "local st.", "remote st.", "moved", "failed st.", "idle ms"
    );
    for w in stats {
        let _ = writeln!(
            s,
            "herd:   {:>6} {:>4} {:>12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>12.3}",
            w.index,
            w.shepherd,
            w.tasks,
            w.chunks,
            w.local_steals,
            w.remote_steals,
            w.stolen_tasks,
            w.failed_steals,
            w.idle_ns as f64 / 1e6
        );
    }
    s
}
