//! `taskgroup`: counts every task created while it is innermost,
//! descendants included, and waits for the count to reach zero at its end.
//! It also carries the innermost task-reduction registration (see
//! `reduction`), inherited from the enclosing group. A `cancel taskgroup`
//! sets its `cancelled` word (see `cancel`).

use super::record::current;
use crate::team::Team;
use crate::thread;
use crate::wait::Observe;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

/// A `taskgroup` region.
pub(crate) struct TaskGroup {
    pub(super) count: AtomicUsize,
    pub(super) prev: *const TaskGroup,
    /// Team number of the thread that waits at its end.
    pub(super) waiter: usize,
    pub(super) team: *const Team,
    /// The innermost task-reduction descriptor registered in it or an
    /// enclosing group (null: none); written by the group's thread before
    /// it creates the tasks that read it.
    pub(super) reductions: AtomicPtr<usize>,
    /// A parallel region's reduction group (`GOMP_parallel_reductions`):
    /// nobody waits for it (the region's end does), so tasks are not counted.
    pub(super) region: bool,
    /// The implicit group of a worksharing construct with `reduction(task,
    /// …)`: not a `taskgroup` construct, so a `cancel taskgroup` in it
    /// cancels the enclosing group (as libgomp's `GOMP_cancel` does).
    pub(super) workshare: bool,
    /// Set once by `cancel taskgroup`; read when its tasks start.
    pub(super) cancelled: AtomicBool,
}

/// Cancels group `g` (`cancel taskgroup`; null: no enclosing group), or the
/// group enclosing it if `g` is a worksharing construct's implicit one.
pub(crate) fn cancel(g: *const TaskGroup) {
    // SAFETY: the canceller's innermost group is alive (it ends only after
    // the task that encounters the cancel), and so are the groups enclosing it.
    let g = unsafe { g.as_ref() }.map(|g| match unsafe { g.prev.as_ref() } {
        Some(outer) if g.workshare => outer,
        _ => g,
    });
    if let Some(g) = g {
        if !g.cancelled.load(Ordering::Relaxed) {
            g.cancelled.store(true, Ordering::Release);
        }
    }
}

/// Whether group `g` or a group enclosing it was cancelled: its tasks that
/// have not started are discarded, and its running ones see cancellation
/// points true. (A task of an inner group belongs to the outer one's
/// taskgroup set too.)
pub(crate) fn cancelled(mut g: *const TaskGroup) -> bool {
    // SAFETY: each group of the chain is alive: the task asking is counted
    // in `g` (or runs it), and a group outlives the task that runs its
    // region, which is counted in (or runs) the group enclosing it.
    while let Some(group) = unsafe { g.as_ref() } {
        if group.cancelled.load(Ordering::Acquire) {
            return true;
        }
        g = group.prev;
    }
    false
}

/// `GOMP_taskgroup_start`.
pub(crate) fn taskgroup_start() {
    start(false)
}

/// Starts a taskgroup; `workshare`: a worksharing construct's implicit one.
pub(super) fn start(workshare: bool) {
    thread::with(|ts| {
        let task = current(ts);
        let prev = task.group.get();
        // SAFETY: the enclosing group outlives this one.
        let reductions =
            unsafe { prev.as_ref() }.map_or(std::ptr::null_mut(), |p| p.reductions.load(Ordering::Relaxed));
        let g = Box::new(TaskGroup {
            count: AtomicUsize::new(0),
            prev,
            waiter: ts.num.get() as usize,
            team: task.team.get(),
            reductions: AtomicPtr::new(reductions),
            region: false,
            workshare,
            cancelled: AtomicBool::new(false),
        });
        task.group.set(Box::into_raw(g));
    })
}

/// `GOMP_taskgroup_end`: waits for every task of the group, descendants included.
pub(crate) fn taskgroup_end() {
    thread::with(|ts| {
        let task = current(ts);
        let g = task.group.get();
        // SAFETY: a non-null group is alive (a region's lives until the region ends).
        if g.is_null() || unsafe { (*g).region } {
            crate::unsupported::fatal("GOMP_taskgroup_end without a matching GOMP_taskgroup_start");
        }
        // SAFETY: created by taskgroup_start and freed only here.
        let group = unsafe { &*g };
        super::constraint::wait(
            task,
            Some(group),
            |last| group.count.observe(last) == 0,
            "a detached task's event (taskgroup end)",
        );
        task.group.set(group.prev);
        // SAFETY: count is zero: no task refers to the group any more.
        drop(unsafe { Box::from_raw(g as *mut TaskGroup) });
    })
}
