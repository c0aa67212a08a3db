//! The task scheduling constraint (OpenMP 5.2 §12.9.6): a thread whose tied
//! task is suspended in `taskwait`, `taskyield`, at a taskgroup's end or
//! before an included task whose predecessors have not finished may start
//! only new tied tasks that descend from that task (new untied tasks: any).
//! Without it a thread could start, inside a task that holds a lock,
//! another task that takes the same lock (a deadlock), or run a task that
//! changes the suspended task's threadprivate data (gcc's
//! `task-reduction-8.c`: tasks of one member update that member's copy
//! without atomics). Barriers and the end of a region are not constrained
//! (the implicit task is suspended in a barrier region, which the rule
//! exempts).
//!
//! herd keeps tasks in its deques, which a thief cannot search;
//! [`herd::rt::wait_until_admitting`] takes jobs as usual and hands the ones
//! this rule refuses on (`herd/src/pool/admit.rs`: into the refused queue
//! of the first waiter [`Descendants::wake_for`] names, which looks there
//! before stealing, and which every participant searches; a waiter takes
//! from the others' refused queues only tasks it admits).
//! [`Descendants::wake_for`] names the waiters a refused task may
//! be needed by — its parent's runner (a `taskwait`, or an included
//! sibling's predecessors) and its taskgroup's waiter — which are exactly
//! the waits that need it to finish; both admit it, so a refused task is
//! always wanted by a waiter that may run it, or by nobody but the barrier.
//!
//! **The ancestry test reads no freed memory, by construction.** Each task
//! has a *lineage parent*: its nearest ancestor that is an *anchor* (a heap
//! task, or an implicit or initial task; included tasks live in a stack
//! frame that ends while their descendants live on, so they are skipped),
//! and its depth on that chain. A heap task's record is freed only when its
//! `keep` count reaches zero: 1 (dropped where the record used to be freed,
//! when the task has finished and so have its children) + one per heap task
//! whose lineage parent it is, held by that task's record until it is
//! freed. So a live task's lineage chain is alive up to its implicit task
//! (alive until the region ends, after every task of it), and
//! [`Task::descends_from`] walks it by depth: O(depth difference), reading
//! only fields written before each task was published.
//!
//! (The first version walked `parent` pointers, which a task held only until
//! it finished: a grandparent could be freed under the walk. Per-thread
//! marks or interval labels would avoid the walk, but no labelling of a
//! tree that grows at every node is both exact and constant-size; the
//! `keep` count costs one read-modify-write on the lineage parent at
//! creation and one when the record is freed.)
//!
//! A waiting *included* task is not an anchor: it admits its children
//! (whose `parent` it is: once it defers a child its record is on the heap
//! and freed by the last of them, so the pointer never names a dead
//! record) and, at a
//! taskgroup's end, the group's tasks. Both are its descendants, and they
//! are every task its wait needs. An included task does not wait for its
//! children at its end (`run_included`): only `taskwait`, a taskgroup's end
//! and its own predecessors make it wait.

use super::group::TaskGroup;
use super::record::Task;
use super::run_deferred;
use crate::team::Team;
use crate::wait;
use std::sync::atomic::Ordering;

/// The jobs a thread may start while task `of` waits (at the end of
/// `group`, if any).
pub(super) struct Descendants<'a> {
    of: &'a Task,
    group: Option<&'a TaskGroup>,
}

/// The deferred task a job runs, if it runs one (herd-omp pushes no other
/// jobs; a runtime built on herd might).
fn as_task(data: *const (), run: unsafe fn(*const ())) -> Option<&'static Task> {
    let ours: unsafe fn(*const ()) = run_deferred;
    // SAFETY: a job run by `run_deferred` is a queued heap task, alive until
    // it has run (the caller holds the job: it has not run).
    (run as usize == ours as usize).then(|| unsafe { &*(data as *const Task) })
}

impl Descendants<'_> {
    /// Whether task `t` may start now.
    fn admits(&self, t: &Task) -> bool {
        t.untied.get()
            || std::ptr::eq(t.parent.get(), self.of)
            || self.group.is_some_and(|g| std::ptr::eq(t.counted_in.get(), g))
            || (self.of.anchor.get() && t.descends_from(self.of))
    }
}

impl herd::rt::Admit for Descendants<'_> {
    fn admit(&self, data: *const (), run: unsafe fn(*const ())) -> bool {
        as_task(data, run).is_none_or(|t| self.admits(t))
    }

    fn wake_for(&self, data: *const (), run: unsafe fn(*const ())) -> [Option<usize>; 2] {
        let Some(t) = as_task(data, run) else { return [None; 2] };
        // SAFETY: a queued task's parent and taskgroup are alive (each counts
        // it until it finishes); the task is not queued again yet.
        unsafe {
            [
                t.parent.get().as_ref().map(|p| p.runner.load(Ordering::Relaxed)),
                t.counted_in.get().as_ref().map(|g| g.waiter),
            ]
        }
    }
}

/// `taskyield`: runs one queued descendant of `of`, the yielding task, if
/// it has unfinished children (a task without any yields nothing: looking
/// for orphaned grandchildren in a spin loop would only stir the queues;
/// libgomp's taskyield does nothing at all).
pub(super) fn yield_to_descendant(of: &Task) {
    if of.refs.load(Ordering::Relaxed) > 1 {
        herd::rt::run_one_admitting(&Descendants { of, group: None });
    }
}

/// Waits until `done(_)` holds (the contract of `wait::until`), starting
/// only descendants of `of`, the task that waits (at the end of `group`, if
/// any). A thread alone in its team waits as `Team::wait_in` says (it has no
/// queue: its tasks ran when they were created).
pub(super) fn wait(of: &Task, group: Option<&TaskGroup>, done: impl Fn(bool) -> bool, what: &str) {
    // SAFETY: the team outlives its tasks.
    match unsafe { of.team.get().as_ref() } {
        Some(t) if t.n > 1 => wait::until_admitting(done, &Descendants { of, group }),
        team => Team::wait_in(team, done, what),
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::record::Task;
    use super::Descendants;

    /// An anchor (heap) child of `parent`, as `defer` marks it.
    fn heap_child(parent: &Task) -> Task {
        let t = Task::child_of(parent);
        t.parent.set(parent);
        t.heap.set(true);
        t.anchor.set(true);
        t
    }

    /// An included child of `parent`, as `run_included` makes it.
    fn included_child(parent: &Task) -> Task {
        let t = Task::child_of(parent);
        t.parent.set(parent);
        t
    }

    /// The lineage chain skips included tasks and reaches every anchor
    /// ancestor at its depth; siblings, cousins and descendants of others
    /// are refused.
    #[test]
    fn lineage_reaches_anchor_ancestors_only() {
        let root = Task::implicit_blank();
        root.anchor.set(true);
        let a = heap_child(&root);
        let b = heap_child(&a);
        let inc = included_child(&b);
        let c = heap_child(&inc); // created by an included task of `b`
        let d = heap_child(&c);
        let sibling = heap_child(&a);
        let cousin = heap_child(&sibling);
        assert!(std::ptr::eq(c.lin_parent.get(), &b), "included tasks are skipped");
        assert_eq!(d.lin_depth.get(), 4);
        for anc in [&root, &a, &b, &c] {
            assert!(d.descends_from(anc), "depth {}", anc.lin_depth.get());
        }
        assert!(!d.descends_from(&d), "not its own descendant");
        assert!(!d.descends_from(&sibling));
        assert!(!c.descends_from(&d), "an ancestor is not a descendant");
        assert!(!cousin.descends_from(&b));
        assert!(cousin.descends_from(&a));
    }

    /// What a waiting task admits: its descendants (through its lineage, or
    /// an included waiter's children and group tasks), untied tasks; not a
    /// sibling's task.
    #[test]
    fn waiters_admit_descendants_and_untied_tasks() {
        let root = Task::implicit_blank();
        root.anchor.set(true);
        let a = heap_child(&root);
        let child = heap_child(&a);
        let grandchild = heap_child(&child);
        let other = heap_child(&root);
        let of_a = Descendants { of: &a, group: None };
        assert!(of_a.admits(&grandchild));
        assert!(!of_a.admits(&heap_child(&other)));
        let untied = heap_child(&other);
        untied.untied.set(true);
        assert!(of_a.admits(&untied));
        // An included waiter: its children only (no lineage of its own).
        let inc = included_child(&a);
        let of_inc = Descendants { of: &inc, group: None };
        assert!(of_inc.admits(&heap_child(&inc)));
        assert!(!of_inc.admits(&heap_child(&a)));
    }
}
