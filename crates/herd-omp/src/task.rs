//! Explicit tasks: `GOMP_task` (deferred or included, `final`, `if`,
//! dependences), `taskwait`, `taskgroup`, `taskyield`, `taskloop`.
//!
//! **Deferred tasks** are herd jobs: pushed on the creating member's deque
//! (`herd::rt::push`), so idle members steal them and members waiting in a
//! barrier, taskwait or taskgroup run them. A task is *included* (run at once
//! on the encountering thread) when its `if` clause is false, it is final or
//! inside a final task, the team has one thread, or — lazy task creation, as
//! herd's `join` — when it has no dependences and its creator already has
//! enough queued and nobody is taking from it (see `should_defer`; an OpenMP
//! runtime may run any task immediately).
//!
//! **Counting.** `refs` = 1 (the task itself, until it finishes) + its
//! unfinished children. `taskwait` waits for `refs == 1`. A finishing child
//! drops its parent's reference as its last access to the parent and wakes
//! the parent's runner if that left only the parent's own; whoever drops the
//! last reference of a heap task frees it. Implicit and included tasks live
//! in the team or on a stack and are never freed by count: an included task
//! waits for its children before its frame goes away. Taskgroups count every
//! task created while they are innermost, including descendants (a task
//! inherits its creator's group). The team counts deferred tasks per barrier
//! epoch and per member (see `team`): created by the creating member,
//! finished by the member that ran the task, as each task's very last act.
//!
//! **Dependences** (sibling tasks, OpenMP 4.5 §2.13.9): each parent keeps a
//! table from address to the last writer's node and the readers since. A new
//! task's predecessors are the last writer (for `in`) or the readers since,
//! else the last writer (for `out`/`inout`/`mutexinoutset`/`inoutset`, all
//! treated as `inout` — a legal, stricter order). An edge is added under the
//! predecessor node's lock only if it has not finished; a node releases its
//! successors under that lock when its task finishes. A task starts with one
//! extra count that its creator drops after registering every edge, so it
//! cannot start half-registered. Only the parent touches its table (a task
//! runs on one thread at a time), so the table needs no lock.

use crate::icv::Icv;
use crate::team::Team;
use crate::thread::{self, ThreadState};
use crate::wait::{self, Observe};
use std::alloc::Layout;
use std::cell::{Cell, UnsafeCell};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

pub(crate) const FLAG_UNTIED: u32 = 1 << 0;
pub(crate) const FLAG_FINAL: u32 = 1 << 1;
pub(crate) const FLAG_DEPEND: u32 = 1 << 3;
pub(crate) const FLAG_UP: u32 = 1 << 8;
pub(crate) const FLAG_GRAINSIZE: u32 = 1 << 9;
pub(crate) const FLAG_IF: u32 = 1 << 10;
pub(crate) const FLAG_NOGROUP: u32 = 1 << 11;
pub(crate) const FLAG_REDUCTION: u32 = 1 << 12;
pub(crate) const FLAG_DETACH: u32 = 1 << 13;
pub(crate) const FLAG_STRICT: u32 = 1 << 14;

const DEPEND_IN: usize = 1;

/// The body of a task as gcc outlines it.
pub(crate) type TaskFn = unsafe extern "C" fn(*mut c_void);
/// gcc's copy function for `firstprivate` objects with copy constructors.
pub(crate) type CopyFn = unsafe extern "C" fn(*mut c_void, *mut c_void);

/// A task (implicit, included or deferred); see the module documentation.
pub(crate) struct Task {
    /// The data-environment ICVs (written only by the running thread).
    pub icv: Cell<Icv>,
    /// The team whose members run it (null: no parallel region).
    pub team: Cell<*const Team>,
    parent: Cell<*const Task>,
    /// In a final task (`omp_in_final`): its descendants are included.
    pub in_final: Cell<bool>,
    heap: Cell<bool>,
    /// An implicit task (a member's share of a region).
    implicit: Cell<bool>,
    refs: AtomicUsize,
    /// Team number of the thread running it (whom a finishing child wakes).
    runner: AtomicUsize,
    /// The innermost taskgroup for tasks it creates.
    pub group: Cell<*const TaskGroup>,
    /// The group this task is counted in.
    counted_in: Cell<*const TaskGroup>,
    /// Barrier epoch it belongs to (implicit tasks: updated at each barrier).
    pub epoch: Cell<u32>,
    /// Dependence table of its children.
    deps: UnsafeCell<Option<Box<DepTable>>>,
    /// Its own dependence node, when it has dependences.
    node: UnsafeCell<Option<Arc<DepNode>>>,
    /// Unfinished predecessors + 1 while its creator registers edges.
    npred: AtomicUsize,
    /// Implicit tasks: the creating member's queue length after its last
    /// deferral (see `should_defer`).
    queued: Cell<usize>,
    func: Cell<Option<TaskFn>>,
    data: Cell<*mut c_void>,
    layout: Cell<Option<Layout>>,
}

// SAFETY: the `Cell`/`UnsafeCell` fields are used only by the thread running
// the task (or its creator before it is published by the push, a `SeqCst`
// operation on the deque); fields other threads touch are atomic.
unsafe impl Sync for Task {}

/// A `taskgroup` region.
pub(crate) struct TaskGroup {
    count: AtomicUsize,
    prev: *const TaskGroup,
    /// Team number of the thread that waits at its end.
    waiter: usize,
    team: *const Team,
}

#[derive(Default)]
struct DepTable {
    map: HashMap<usize, DepEntry>,
}

#[derive(Default)]
struct DepEntry {
    last_out: Option<Arc<DepNode>>,
    readers: Vec<Arc<DepNode>>,
}

#[derive(Default)]
struct DepNode {
    state: Mutex<NodeState>,
}

#[derive(Default)]
struct NodeState {
    done: bool,
    successors: Vec<TaskPtr>,
}

#[derive(Clone, Copy)]
struct TaskPtr(*const Task);
// SAFETY: a successor task is alive until it has run, which needs this node
// to release it.
unsafe impl Send for TaskPtr {}

const DEFAULT_ICV: Icv = Icv {
    nthreads: 1,
    dynamic: false,
    run_sched: crate::icv::Sched { kind: crate::icv::SchedKind::Dynamic, chunk: 1, monotonic: false },
    bind: crate::icv::ProcBind::False,
    max_active_levels: 1,
    thread_limit: u32::MAX,
    default_device: 0,
};

impl Task {
    fn blank(icv: Icv) -> Task {
        Task {
            icv: Cell::new(icv),
            team: Cell::new(std::ptr::null()),
            parent: Cell::new(std::ptr::null()),
            in_final: Cell::new(false),
            heap: Cell::new(false),
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
        }
    }

    /// A new task created by `parent`: its data environment, team, innermost
    /// taskgroup and barrier epoch are the parent's.
    fn child_of(parent: &Task) -> Task {
        let t = Task::blank(parent.icv.get());
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

    /// Waits (running other tasks) until every child has finished: only the
    /// task's own reference is left.
    pub(crate) fn wait_children(&self) {
        wait::until(|last| self.refs.observe(last) == 1);
    }
}

/// The calling thread's initial task (outside any parallel region).
pub(crate) fn initial_task() -> &'static Task {
    thread_local! {
        static INITIAL: &'static Task = Box::leak(Box::new(Task::blank(crate::runtime::global().initial)));
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

/// Parses gcc's `depend` array into `(address, is_in)` pairs.
///
/// # Safety
/// `depend` is the array gcc passed to `GOMP_task` (either layout).
unsafe fn parse_depend(depend: *mut *mut c_void) -> Vec<(usize, bool)> {
    // SAFETY: the caller's contract: the layout is libgomp's.
    unsafe {
        let at = |i: usize| *depend.add(i) as usize;
        let mut out = Vec::new();
        if at(0) != 0 {
            // Old layout: [total, n_out, out/inout..., in...].
            let (total, nout) = (at(0), at(1));
            for i in 0..total {
                out.push((at(2 + i), i >= nout));
            }
        } else {
            // New layout: [0, total, n_out_inout, n_mutexinoutset, n_in,
            // addresses..., then depobj pointers to {addr, kind}].
            let (total, nout, nmutex, nin) = (at(1), at(2), at(3), at(4));
            let direct = nout + nmutex + nin;
            for i in 0..direct.min(total) {
                out.push((at(5 + i), i >= nout + nmutex));
            }
            for i in direct..total {
                let obj = at(5 + i) as *const usize;
                let (addr, kind) = (*obj, *obj.add(1));
                out.push((addr, kind == DEPEND_IN));
            }
        }
        out
    }
}

impl DepTable {
    /// Registers `node` (of `task`) with `deps`; counts its unfinished
    /// predecessors into `task.npred` and records them for it.
    fn register(&mut self, deps: &[(usize, bool)], node: &Arc<DepNode>, task: *const Task) {
        for &(addr, is_in) in deps {
            let e = self.map.entry(addr).or_default();
            if is_in {
                if let Some(w) = &e.last_out {
                    add_edge(w, node, task);
                }
                if !e.readers.iter().any(|r| Arc::ptr_eq(r, node)) {
                    e.readers.push(node.clone());
                }
            } else {
                if e.readers.is_empty() {
                    if let Some(w) = &e.last_out {
                        add_edge(w, node, task);
                    }
                } else {
                    for r in &e.readers {
                        add_edge(r, node, task);
                    }
                }
                e.readers.clear();
                e.last_out = Some(node.clone());
            }
        }
    }
}

fn add_edge(pred: &Arc<DepNode>, node: &Arc<DepNode>, task: *const Task) {
    if Arc::ptr_eq(pred, node) {
        return;
    }
    let mut st = pred.state.lock().unwrap_or_else(|e| e.into_inner());
    if !st.done {
        st.successors.push(TaskPtr(task));
        // SAFETY: `task` is being created by the caller and not yet runnable.
        unsafe { (*task).npred.fetch_add(1, Ordering::Relaxed) };
    }
}

impl DepNode {
    /// Marks the node finished and makes ready successors runnable.
    fn finish(&self) {
        let successors = {
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            st.done = true;
            std::mem::take(&mut st.successors)
        };
        for TaskPtr(t) in successors {
            // SAFETY: a successor stays alive until it runs, which needs this release.
            unsafe {
                if (*t).heap.get() {
                    if (*t).npred.fetch_sub(1, Ordering::AcqRel) == 1 {
                        schedule(t);
                    }
                } else {
                    // An included task waiting on its thread: wake it. Read
                    // what waking needs first: it may return at once.
                    let (runner, team) = ((*t).runner.load(Ordering::Relaxed), (*t).team.get());
                    if (*t).npred.fetch_sub(1, Ordering::SeqCst) == 1 {
                        if let Some(team) = team.as_ref() {
                            team.wake(runner);
                        }
                    }
                }
            }
        }
    }
}

/// The encountering context of a new task.
struct Encounter<'a> {
    parent: &'a Task,
    team: Option<&'a Team>,
    num: usize,
}

fn encounter(ts: &ThreadState) -> Encounter<'static> {
    let parent = current(ts);
    // SAFETY: the team outlives its tasks.
    let team = unsafe { parent.team.get().as_ref() };
    Encounter { parent, team, num: ts.num.get() as usize }
}

/// Arguments of one task creation.
pub(crate) struct Spawn {
    pub func: TaskFn,
    pub data: *mut c_void,
    pub cpyfn: Option<CopyFn>,
    pub arg_size: usize,
    pub arg_align: usize,
    pub if_clause: bool,
    pub flags: u32,
    pub depend: *mut *mut c_void,
    /// Called on the task's own copy of the arguments (taskloop bounds).
    pub patch: Option<(u64, u64)>,
}

/// `GOMP_task` and taskloop's task creation.
pub(crate) fn spawn(s: Spawn) {
    thread::with(|ts| {
        let enc = encounter(ts);
        let final_ = enc.parent.in_final.get() || s.flags & FLAG_FINAL != 0;
        let deps = if s.flags & FLAG_DEPEND != 0 && !s.depend.is_null() {
            // SAFETY: gcc's depend array.
            unsafe { parse_depend(s.depend) }
        } else {
            Vec::new()
        };
        // Deferred unless the `if` clause is false, the task is final, the
        // team has one thread, or (without dependences) enough is queued.
        let defer_in = enc.team.filter(|t| {
            t.n > 1
                && s.if_clause
                && !final_
                && (!deps.is_empty() || should_defer(enc.parent, t, herd::rt::local_queue_len()))
        });
        match defer_in {
            Some(team) => defer(&enc, team, &s, &deps),
            None => run_included(ts, &enc, &s, final_, &deps),
        }
    })
}

/// Whether a new task (without dependences) of `parent` is deferred, given
/// `len` tasks already queued on the creating member. Tasks of explicit
/// tasks — recursive task trees — use lazy task creation (one stealable task
/// per member is kept, as herd's `join` does), so the fine-grained leaves
/// cost a function call.
///
/// An implicit task producing tasks in a loop (a `single` filling the queue)
/// is the only source of work for the others, so it keeps deferring while
/// its queue is short (fewer than `16n`, at least 32), and beyond that as long
/// as others take tasks from it (its queue shrank since its previous
/// deferral); it runs a task itself only when the queue is deep *and* nobody
/// took anything since — the others are busy, and the queue keeps them fed
/// while it runs one. Never more than `64n` queued (libgomp's bound; libomp
/// runs a task at once when its 256-entry deque is full).
fn should_defer(parent: &Task, team: &Team, len: usize) -> bool {
    if !parent.implicit.get() {
        return len < 1;
    }
    let (low, high) = ((16 * team.n).max(32), 64 * team.n);
    let taken = parent.queued.get() > len;
    let defer = len < high && (len < low || taken);
    parent.queued.set(if defer { len + 1 } else { len });
    defer
}

/// Runs a task at once on the encountering thread. With dependences it is
/// registered like a deferred sibling (so that later siblings order after
/// it) and waits until its predecessors have finished; the last of them
/// wakes it (see [`DepNode::finish`]).
fn run_included(ts: &ThreadState, enc: &Encounter<'_>, s: &Spawn, final_: bool, deps: &[(usize, bool)]) {
    let task = Task::child_of(enc.parent);
    task.in_final.set(final_);
    task.runner.store(enc.num, Ordering::Relaxed);
    let node = (!deps.is_empty()).then(|| {
        let node = Arc::new(DepNode::default());
        task.npred.store(1, Ordering::Relaxed);
        // SAFETY: only the parent's thread (this one) touches its table.
        unsafe {
            let table = &mut *enc.parent.deps.get();
            table.get_or_insert_with(Default::default).register(deps, &node, &task);
        }
        if task.npred.fetch_sub(1, Ordering::AcqRel) != 1 {
            wait::until(|last| task.npred.observe(last) == 0);
        }
        node
    });
    let saved = ts.task.replace(&task);
    let needs_copy = s.cpyfn.is_some() || s.patch.is_some();
    if needs_copy {
        let layout = arg_layout(s.arg_size, s.arg_align);
        // SAFETY: a fresh buffer of the argument block's size and alignment.
        unsafe {
            let buf = std::alloc::alloc(layout) as *mut c_void;
            if buf.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            copy_args(buf, s);
            (s.func)(buf);
            std::alloc::dealloc(buf as *mut u8, layout);
        }
    } else {
        // SAFETY: gcc's outlined body with its argument block, valid during the call.
        unsafe { (s.func)(s.data) };
    }
    task.wait_children();
    ts.task.set(saved);
    if let Some(node) = node {
        node.finish();
    }
}

fn arg_layout(size: usize, align: usize) -> Layout {
    Layout::from_size_align(size.max(1), align.max(1).next_power_of_two()).expect("task argument layout")
}

/// Copies the argument block into `dst` (with gcc's copy function if any)
/// and patches taskloop bounds into its first two words.
unsafe fn copy_args(dst: *mut c_void, s: &Spawn) {
    // SAFETY: `dst` holds `arg_size` bytes; `data` is gcc's block of that size.
    unsafe {
        match s.cpyfn {
            Some(c) => c(dst, s.data),
            None => std::ptr::copy_nonoverlapping(s.data as *const u8, dst as *mut u8, s.arg_size),
        }
        if let Some((a, b)) = s.patch {
            let w = dst as *mut u64;
            w.write_unaligned(a);
            w.add(1).write_unaligned(b);
        }
    }
}

/// Creates a deferred task and makes it runnable when its dependences allow.
fn defer(enc: &Encounter<'_>, team: &Team, s: &Spawn, deps: &[(usize, bool)]) {
    // One allocation: the task header, then the argument block.
    let header = Layout::new::<Task>();
    let args = arg_layout(s.arg_size, s.arg_align);
    let (layout, offset) = header.extend(args).expect("task layout");
    let layout = layout.pad_to_align();
    // SAFETY: a fresh block of `layout`; the header is written before use.
    let task = unsafe {
        let p = std::alloc::alloc(layout);
        if p.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        let t = p as *mut Task;
        t.write(Task::child_of(enc.parent));
        let data = p.add(offset) as *mut c_void;
        copy_args(data, s);
        &*t
    };
    debug_assert!(std::ptr::eq(task.team.get(), team));
    task.parent.set(enc.parent);
    task.heap.set(true);
    task.func.set(Some(s.func));
    task.data.set(
        // SAFETY: within the block.
        unsafe { (task as *const Task as *mut u8).add(offset) } as *mut c_void,
    );
    task.layout.set(Some(layout));
    let group = task.group.get();
    task.counted_in.set(group);
    let epoch = task.epoch.get();
    enc.parent.refs.fetch_add(1, Ordering::Relaxed);
    if !group.is_null() {
        // SAFETY: a group outlives the tasks counted in it.
        unsafe { (*group).count.fetch_add(1, Ordering::Relaxed) };
    }
    team.task_created(enc.num, epoch);
    if deps.is_empty() {
        schedule(task);
        return;
    }
    let node = Arc::new(DepNode::default());
    task.npred.store(1, Ordering::Relaxed);
    // SAFETY: the node slot is the new task's, not yet shared; the parent's
    // table is touched only by the parent's thread (this one).
    unsafe {
        *task.node.get() = Some(node.clone());
        let table = &mut *enc.parent.deps.get();
        table.get_or_insert_with(Default::default).register(deps, &node, task);
    }
    if task.npred.fetch_sub(1, Ordering::AcqRel) == 1 {
        schedule(task);
    }
}

/// Makes a deferred task runnable.
fn schedule(task: *const Task) {
    // SAFETY: the task is alive until it has run; running it is `run_deferred`.
    let pushed = unsafe { herd::rt::push(task as *const (), run_deferred) };
    if !pushed {
        // Not on a participant (cannot happen for team tasks): run it here.
        // SAFETY: as above.
        unsafe { run_deferred(task as *const ()) };
    }
}

/// Runs a deferred task on whichever member took it.
unsafe fn run_deferred(p: *const ()) {
    // SAFETY: `p` is a live heap task, run exactly once.
    let task = unsafe { &*(p as *const Task) };
    let num = herd::current_thread_index().unwrap_or(0);
    task.runner.store(num, Ordering::Relaxed);
    thread::with(|ts| {
        let (team, n, cur) = (ts.team.get(), ts.num.get(), ts.task.get());
        ts.team.set(task.team.get());
        ts.num.set(num as u32);
        ts.task.set(task);
        let f = task.func.get().expect("deferred task has a body");
        // SAFETY: gcc's outlined body with the task's own argument block.
        unsafe { f(task.data.get()) };
        ts.team.set(team);
        ts.num.set(n);
        ts.task.set(cur);
    });
    finish(task);
}

/// A deferred task's completion; see the module documentation for the order.
fn finish(task: &Task) {
    // SAFETY: only this task's thread touches these.
    unsafe {
        *task.deps.get() = None;
        if let Some(node) = (*task.node.get()).take() {
            node.finish();
        }
    }
    let group = task.counted_in.get();
    if !group.is_null() {
        // SAFETY: the group lives until its count reaches zero, which this
        // decrement may cause: everything is read before it.
        unsafe {
            let (waiter, team) = ((*group).waiter, (*group).team);
            if (*group).count.fetch_sub(1, Ordering::SeqCst) == 1 {
                if let Some(t) = team.as_ref() {
                    t.wake(waiter);
                }
            }
        }
    }
    // SAFETY: the team outlives its tasks (it waits for their counts, the
    // very last thing a task touches).
    let team = unsafe { &*task.team.get() };
    let (epoch, num) = (task.epoch.get(), task.runner.load(Ordering::Relaxed));
    release(task.parent.get(), team);
    release(task, team);
    team.task_finished(num, epoch);
}

/// Drops one reference of `task`: frees a finished heap task at zero, and
/// wakes its runner when only its own reference is left (a taskwait).
fn release(task: *const Task, team: &Team) {
    if task.is_null() {
        return;
    }
    // SAFETY: we hold a reference, so the task is alive until the decrement.
    unsafe {
        let runner = (*task).runner.load(Ordering::Relaxed);
        let heap = (*task).heap.get();
        match (*task).refs.fetch_sub(1, Ordering::SeqCst) {
            1 if heap => {
                let layout = (*task).layout.get().expect("heap task layout");
                std::ptr::drop_in_place(task as *mut Task);
                std::alloc::dealloc(task as *mut u8, layout);
            }
            2 => team.wake(runner),
            _ => {}
        }
    }
}

/// `GOMP_taskwait`.
pub(crate) fn taskwait() {
    thread::with(|ts| current(ts).wait_children())
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

/// `GOMP_taskyield`: runs one queued task, if any.
pub(crate) fn taskyield() {
    herd::rt::run_one();
}

/// `GOMP_taskloop` / `GOMP_taskloop_ull` after normalisation: `count`
/// iterations whose `[a, b)` index ranges map to original bounds by `bounds`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn taskloop(
    func: TaskFn,
    data: *mut c_void,
    cpyfn: Option<CopyFn>,
    arg_size: usize,
    arg_align: usize,
    flags: u32,
    num_tasks: u64,
    count: u64,
    bounds: impl Fn(u64, u64) -> (u64, u64),
) {
    if flags & FLAG_REDUCTION != 0 {
        crate::unsupported::unsupported("GOMP_taskloop with task reductions (OpenMP 5.0 reduction clause)");
    }
    if count == 0 {
        return;
    }
    let nthreads = thread::with(|ts| ts.team().map_or(1, |t| t.n)) as u64;
    let ntasks = if flags & FLAG_GRAINSIZE != 0 {
        let g = num_tasks.max(1);
        if flags & FLAG_STRICT != 0 {
            count.div_ceil(g)
        } else {
            (count / g).max(1)
        }
    } else if num_tasks > 0 {
        num_tasks.min(count)
    } else {
        nthreads.min(count)
    };
    let strict_grain =
        (flags & (FLAG_GRAINSIZE | FLAG_STRICT) == FLAG_GRAINSIZE | FLAG_STRICT).then_some(num_tasks.max(1));
    let group = flags & FLAG_NOGROUP == 0;
    if group {
        taskgroup_start();
    }
    let (q, r) = (count / ntasks, count % ntasks);
    let mut a = 0u64;
    for i in 0..ntasks {
        let len = match strict_grain {
            Some(g) => g.min(count - a),
            None => q + u64::from(i < r),
        };
        let b = a + len;
        spawn(Spawn {
            func,
            data,
            cpyfn,
            arg_size,
            arg_align,
            if_clause: flags & FLAG_IF != 0,
            flags: flags & (FLAG_FINAL | FLAG_UNTIED),
            depend: std::ptr::null_mut(),
            patch: Some(bounds(a, b)),
        });
        a = b;
    }
    if group {
        taskgroup_end();
    }
}
