//! `taskgroup`: counts every task created while it is innermost,
//! descendants included, and waits for the count to reach zero at its end.

use super::record::current;
use crate::team::Team;
use crate::thread;
use crate::wait::{self, Observe};
use std::sync::atomic::AtomicUsize;

/// A `taskgroup` region.
pub(crate) struct TaskGroup {
    pub(super) count: AtomicUsize,
    pub(super) prev: *const TaskGroup,
    /// Team number of the thread that waits at its end.
    pub(super) waiter: usize,
    pub(super) team: *const Team,
}

/// `GOMP_taskgroup_start`.
pub(crate) fn taskgroup_start() {
    thread::with(|ts| {
        let task = current(ts);
        let g = Box::new(TaskGroup {
            count: AtomicUsize::new(0),
            prev: task.group.get(),
            waiter: ts.num.get() as usize,
            team: task.team.get(),
        });
        task.group.set(Box::into_raw(g));
    })
}

/// `GOMP_taskgroup_end`: waits for every task of the group, descendants included.
pub(crate) fn taskgroup_end() {
    thread::with(|ts| {
        let task = current(ts);
        let g = task.group.get();
        if g.is_null() {
            crate::unsupported::fatal("GOMP_taskgroup_end without a matching GOMP_taskgroup_start");
        }
        // SAFETY: created by taskgroup_start and freed only here.
        let group = unsafe { &*g };
        wait::until(|last| group.count.observe(last) == 0);
        task.group.set(group.prev);
        // SAFETY: count is zero: no task refers to the group any more.
        drop(unsafe { Box::from_raw(g as *mut TaskGroup) });
    })
}
