//! The task record: what every task (implicit, included, deferred) carries,
//! and the task a thread is running.

use super::deps::{DepNode, DepTable};
use super::group::TaskGroup;
use super::TaskFn;
use crate::icv::Icv;
use crate::team::Team;
use crate::thread::ThreadState;
use crate::wait::Observe;
use std::alloc::Layout;
use std::cell::{Cell, UnsafeCell};
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A task (implicit, included or deferred); see the module documentation.
pub(crate) struct Task {
    /// The data-environment ICVs (written only by the running thread).
    pub icv: Cell<Icv>,
    /// The team whose members run it (null: no parallel region).
    pub team: Cell<*const Team>,
    pub(super) parent: Cell<*const Task>,
    /// Its *lineage parent*: its nearest ancestor that is an anchor (a heap,
    /// implicit or initial task; included tasks are skipped, their frames
    /// die while their descendants live). Null for implicit and initial
    /// tasks. See `constraint` for why this chain is always alive.
    pub(super) lin_parent: Cell<*const Task>,
    /// Anchors above it on the lineage chain (implicit and initial tasks: 0).
    pub(super) lin_depth: Cell<u32>,
    /// A heap, implicit or initial task: a lineage parent of the deferred
    /// tasks below it.
    pub(super) anchor: Cell<bool>,
    /// Heap tasks: 1 (released when `refs` reaches zero, where the record
    /// used to be freed) + the heap tasks whose `lin_parent` it is and whose
    /// records are not yet freed. The record is freed at zero, so a live
    /// task's lineage chain is alive.
    pub(super) keep: AtomicUsize,
    /// An untied task: the scheduling constraint does not restrict starting it.
    pub(super) untied: Cell<bool>,
    /// In a final task (`omp_in_final`): its descendants are included.
    pub in_final: Cell<bool>,
    /// A deferred task (a queued job, on the heap).
    pub(super) heap: Cell<bool>,
    /// Its record is on the heap (a deferred task's, or an included task's
    /// that deferred a child) and is freed when `refs` reaches zero.
    pub(super) boxed: Cell<bool>,
    /// An included task's record in its frame that moves to the heap if the
    /// task defers a child (`promoted`); `moved_to` is then that copy.
    pub(super) promotable: Cell<bool>,
    pub(super) moved_to: Cell<*const Task>,
    /// An implicit task (a member's share of a region).
    pub(super) implicit: Cell<bool>,
    pub(super) refs: AtomicUsize,
    /// Team number of the thread running it (whom a finishing child wakes).
    pub(super) runner: AtomicUsize,
    /// The innermost taskgroup for tasks it creates.
    pub group: Cell<*const TaskGroup>,
    /// The group this task is counted in.
    pub(super) counted_in: Cell<*const TaskGroup>,
    /// Barrier epoch it belongs to (implicit tasks: updated at each barrier).
    pub epoch: Cell<u32>,
    /// Dependence table of its children.
    pub(super) deps: UnsafeCell<Option<Box<DepTable>>>,
    /// Its own dependence node, when it has dependences.
    pub(super) node: UnsafeCell<Option<Arc<DepNode>>>,
    /// Unfinished predecessors + 1 while its creator registers edges.
    pub(super) npred: AtomicUsize,
    /// Implicit tasks: the creating member's queue length after its last
    /// deferral (see `should_defer`).
    pub(super) queued: Cell<usize>,
    pub(super) func: Cell<Option<TaskFn>>,
    pub(super) data: Cell<*mut c_void>,
    pub(super) layout: Cell<Option<Layout>>,
    /// It runs even when cancelled: its arguments were copy-constructed
    /// (gcc's copy function; its body destroys them, as libgomp's), or it is
    /// detached (see `defer`).
    pub(super) must_run: Cell<bool>,
    /// Outstanding parts of a detached task's completion (see `detach`).
    pub(super) parts: super::detach::Parts,
}

// SAFETY: the `Cell`/`UnsafeCell` fields are used only by the thread running
// the task (or its creator before it is published by the push, a `SeqCst`
// operation on the deque); fields other threads touch are atomic.
unsafe impl Sync for Task {}

const DEFAULT_ICV: Icv = Icv {
    nthreads: 1,
    dynamic: false,
    run_sched: crate::icv::Sched { kind: crate::icv::SchedKind::Dynamic, chunk: 1, monotonic: false },
    bind: crate::icv::ProcBind::False,
    max_active_levels: 1,
    thread_limit: u32::MAX,
    default_device: 0,
    def_allocator: crate::memory::DEFAULT_MEM_ALLOC,
};

impl Task {
    pub(super) fn blank(icv: Icv) -> Task {
        Task {
            icv: Cell::new(icv),
            team: Cell::new(std::ptr::null()),
            parent: Cell::new(std::ptr::null()),
            lin_parent: Cell::new(std::ptr::null()),
            lin_depth: Cell::new(0),
            anchor: Cell::new(false),
            keep: AtomicUsize::new(1),
            untied: Cell::new(false),
            in_final: Cell::new(false),
            heap: Cell::new(false),
            boxed: Cell::new(false),
            promotable: Cell::new(false),
            moved_to: Cell::new(std::ptr::null()),
            implicit: Cell::new(false),
            refs: AtomicUsize::new(1),
            runner: AtomicUsize::new(0),
            group: Cell::new(std::ptr::null()),
            counted_in: Cell::new(std::ptr::null()),
            epoch: Cell::new(0),
            deps: UnsafeCell::new(None),
            node: UnsafeCell::new(None),
            npred: AtomicUsize::new(0),
            queued: Cell::new(0),
            func: Cell::new(None),
            data: Cell::new(std::ptr::null_mut()),
            layout: Cell::new(None),
            must_run: Cell::new(false),
            parts: super::detach::Parts::new(),
        }
    }

    /// A new task created by `parent`: its data environment, team, innermost
    /// taskgroup and barrier epoch are the parent's.
    pub(super) fn child_of(parent: &Task) -> Task {
        let t = Task::blank(parent.icv.get());
        let lp: *const Task = if parent.anchor.get() { parent } else { parent.lin_parent.get() };
        t.lin_parent.set(lp);
        // SAFETY: `lp` is the running parent, or the lineage parent of a
        // running included parent, which runs inline inside it: alive.
        t.lin_depth.set(unsafe { lp.as_ref() }.map_or(0, |a| a.lin_depth.get() + 1));
        t.team.set(parent.team.get());
        t.group.set(parent.group.get());
        t.epoch.set(parent.epoch.get());
        t
    }

    /// An implicit task's storage in a team, reset by [`Task::reset_implicit`].
    pub(crate) fn implicit_blank() -> Task {
        Task::blank(DEFAULT_ICV)
    }

    /// Prepares a team's implicit task for member `num` of a new region.
    pub(crate) fn reset_implicit(&self, team: &Team, num: usize, icv: Icv, epoch: u32) {
        self.icv.set(icv);
        self.team.set(team);
        self.parent.set(std::ptr::null());
        self.lin_parent.set(std::ptr::null());
        self.lin_depth.set(0);
        self.anchor.set(true);
        self.in_final.set(false);
        self.implicit.set(true);
        self.runner.store(num, Ordering::Relaxed);
        self.group.set(std::ptr::null());
        self.counted_in.set(std::ptr::null());
        self.epoch.set(epoch);
        self.queued.set(0);
        // SAFETY: only this member uses its implicit task; the previous
        // region's children all finished before it ended.
        unsafe { *self.deps.get() = None };
        debug_assert_eq!(self.refs.load(Ordering::Relaxed), 1);
    }

    /// An explicit task (`omp_in_explicit_task`): neither a region's
    /// implicit task nor a thread's initial task.
    pub(crate) fn is_explicit(&self) -> bool {
        !self.implicit.get() && !std::ptr::eq(self, initial_task())
    }

    /// Waits (running its descendants: the task scheduling constraint) until
    /// every child has finished: only the task's own reference is left.
    pub(crate) fn wait_children(&self) {
        super::constraint::wait(
            self,
            None,
            |last| self.refs.observe(last) == 1,
            "a detached child task's event (taskwait)",
        );
    }

    /// Whether `anchor` (a heap, implicit or initial task) is an ancestor
    /// of this task: `anchor` is on its lineage chain at `anchor`'s depth.
    /// Reads only lineage fields, written before each task was published;
    /// every record on the chain is alive (see `constraint`).
    pub(super) fn descends_from(&self, anchor: &Task) -> bool {
        let target = anchor.lin_depth.get();
        let mut depth = self.lin_depth.get();
        let mut p = self.lin_parent.get();
        while depth > target + 1 {
            // SAFETY: `p` is on a live task's lineage chain (see above).
            match unsafe { p.as_ref() } {
                Some(a) => p = a.lin_parent.get(),
                None => return false,
            }
            depth -= 1;
        }
        depth == target + 1 && std::ptr::eq(p, anchor)
    }
}

/// The calling thread's initial task (outside any parallel region).
pub(crate) fn initial_task() -> &'static Task {
    thread_local! {
        static INITIAL: &'static Task = {
            let t = Box::leak(Box::new(Task::blank(crate::runtime::global().initial)));
            t.anchor.set(true);
            t
        };
    }
    INITIAL.with(|t| *t)
}

/// The task the calling thread runs.
#[inline]
pub(crate) fn current(ts: &ThreadState) -> &'static Task {
    let t = ts.task.get();
    if t.is_null() {
        initial_task()
    } else {
        // SAFETY: the current task outlives the code running in it.
        unsafe { &*t }
    }
}
