//! The task scheduling constraint (OpenMP 5.2 §13.10): a thread whose tied
//! task is suspended in `taskwait`, `taskyield`, at a taskgroup's end or
//! before an included task whose predecessors have not finished may start only
//! descendants of that task (untied tasks: any). Without it a thread could
//! start, inside a task that holds a lock, another task that takes the same
//! lock (a deadlock), or run a task that changes the suspended task's
//! threadprivate data; gcc's own tests rely on it (`task-reduction-8.c`:
//! tasks of one member update that member's copy without atomics).
//!
//! herd keeps tasks in its deques, which a thief cannot search; its
//! [`herd::rt::wait_until_admitting`] takes jobs as usual and hands the ones
//! this rule refuses on (`herd/src/pool/admit.rs`). The rule here:
//! `Descendants::admit` walks the task's ancestors up to the waiting task's
//! depth (`Task::descends_from`), and `Descendants::rejected` names the
//! waiters that may need a refused task, for herd to wake: its parent's
//! runner (a `taskwait`) and its taskgroup's waiter (team numbers are the
//! pool's participant indices).
//!
//! Barriers, the end of a region and a detached task's wait are not
//! constrained (at a barrier the implicit task is suspended in a barrier
//! region, which the rule exempts).

use super::record::Task;
use super::run_deferred;
use crate::wait;
use std::sync::atomic::Ordering;

/// The jobs a thread may run while task `of` waits.
struct Descendants<'a> {
    of: &'a Task,
}

/// Whether a job is a deferred task (herd-omp pushes no other jobs).
fn as_task(data: *const (), run: unsafe fn(*const ())) -> Option<&'static Task> {
    let ours: unsafe fn(*const ()) = run_deferred;
    // SAFETY: a job run by `run_deferred` is a queued heap task, alive until
    // it has run (the caller holds the job: it has not run).
    (run as usize == ours as usize).then(|| unsafe { &*(data as *const Task) })
}

impl herd::rt::Admit for Descendants<'_> {
    fn admit(&self, data: *const (), run: unsafe fn(*const ())) -> bool {
        as_task(data, run).is_none_or(|t| t.untied.get() || t.descends_from(self.of))
    }

    fn rejected(&self, data: *const (), run: unsafe fn(*const ())) -> [Option<usize>; 2] {
        let Some(t) = as_task(data, run) else { return [None; 2] };
        // SAFETY: a queued task's parent and taskgroup are alive (each
        // counts it until it finishes); the task is not yet queued again.
        unsafe {
            [
                t.parent.get().as_ref().map(|p| p.runner.load(Ordering::Relaxed)),
                t.counted_in.get().as_ref().map(|g| g.waiter),
            ]
        }
    }
}

/// `taskyield`: runs one queued descendant of `of`, the yielding task, if
/// it has unfinished children (a task that has none yields nothing: its
/// only other descendants would be orphaned grandchildren, and looking for
/// them in a spin loop would only stir the queues; libgomp's taskyield does
/// nothing at all).
pub(super) fn yield_to_descendant(of: &Task) {
    if of.refs.load(Ordering::Relaxed) > 1 {
        herd::rt::run_one_admitting(&Descendants { of });
    }
}

/// Waits until `done(_)` holds (the contract of `wait::until`), running
/// only descendants of `of`, the task that waits.
pub(super) fn wait_descendants(of: &Task, done: impl Fn(bool) -> bool) {
    wait::until_admitting(done, &Descendants { of })
}
