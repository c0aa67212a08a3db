//! Explicit tasks: `GOMP_task` (deferred or included, `final`, `if`,
//! dependences), `taskwait`, `taskgroup`, `taskyield`, `taskloop`.
//!
//! **Deferred tasks** are herd jobs: pushed on the creating member's deque
//! (`herd::rt::push`), so idle members steal them and members waiting in a
//! barrier, taskwait or taskgroup run them. A task is *included* (run at once
//! on the encountering thread) when its `if` clause is false, it is created
//! inside a final task (a final task itself is deferred like any other), the
//! team has one thread, or — lazy task creation, as herd's `join` — when it
//! has no dependences and no `detach` and its creator already has enough
//! queued and nobody is taking from it (see `should_defer`; an OpenMP
//! runtime may run any task immediately).
//!
//! **Counting.** `refs` = 1 (the task itself, until it finishes) + its
//! unfinished children. `taskwait` waits for `refs == 1`. A finishing child
//! drops its parent's reference as its last access to the parent and wakes
//! the parent's runner if that left only the parent's own; whoever drops the
//! last reference of a heap record frees it. Implicit tasks live in the
//! team. An included task keeps its record in its frame until it defers a
//! child; then the record moves to the heap (`promoted`) and the task ends
//! without waiting for its children, as libgomp's does not: the copy goes
//! when the last reference does (`run_included`). Only a frame record that
//! cannot move (a team of one, a final task) waits for deferred children
//! (detached, or with dependences) before its frame goes. Taskgroups count every
//! task created while they are innermost, including descendants (a task
//! inherits its creator's group). The team counts deferred tasks per barrier
//! epoch and per member (see `team`): created by the creating member,
//! finished by the member that ran the task, as each task's very last act.
//!
//! **Waiting** (taskwait, taskyield, a taskgroup's end, an included task's
//! predecessors) starts only the waiting task's descendants — the task
//! scheduling constraint: `constraint`. A heap task's record lives until its
//! `keep` count (1 + the heap tasks below it on the lineage chain) reaches
//! zero, so that the ancestry test never reads a freed record.
//!
//! Files: `record` (the task record and the current task), `constraint`
//! (the task scheduling constraint), `deps`
//! (dependences), `detach` (detached tasks and their events), `group`
//! (taskgroups), `reduction` (task reductions), `taskloop`; creation,
//! running and completion are here.

mod constraint;
mod deps;
mod detach;
mod group;
mod record;
mod reduction;
mod taskloop;

pub(crate) use detach::fulfill as fulfill_event;
pub(crate) use group::{cancel as cancel_group, cancelled as group_cancelled, TaskGroup};
pub(crate) use group::{taskgroup_end, taskgroup_start};
pub(crate) use record::{current, Task};
pub(crate) use reduction::RegionReductions;
pub(crate) use reduction::{remap as task_reduction_remap, taskgroup_register, taskgroup_unregister};
pub(crate) use reduction::{workshare_group_start, workshare_register, workshare_unregister};
pub(crate) use taskloop::taskloop;

use crate::team::Team;
use crate::thread::{self, ThreadState};
use crate::wait::Observe;
use deps::{parse_depend, DepNode};
use std::alloc::Layout;
use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::sync::Arc;

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

/// The body of a task as gcc outlines it.
pub(crate) type TaskFn = unsafe extern "C" fn(*mut c_void);
/// gcc's copy function for `firstprivate` objects with copy constructors.
pub(crate) type CopyFn = unsafe extern "C" fn(*mut c_void, *mut c_void);

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
    /// `detach(event)`: where the event handle goes (with `FLAG_DETACH`).
    pub detach: *mut usize,
}

/// `GOMP_task` and taskloop's task creation.
pub(crate) fn spawn(s: Spawn) {
    thread::with(|ts| {
        let enc = encounter(ts);
        if crate::cancel::enabled() && crate::cancel::task_cancelled(enc.team, enc.parent.group.get()) {
            // A cancelled region or taskgroup creates no task (libgomp's
            // GOMP_task does the same).
            return;
        }
        let final_ = enc.parent.in_final.get() || s.flags & FLAG_FINAL != 0;
        let deps = if s.flags & FLAG_DEPEND != 0 && !s.depend.is_null() {
            // SAFETY: gcc's depend array.
            unsafe { parse_depend(s.depend) }
        } else {
            Vec::new()
        };
        // Deferred unless the `if` clause is false, the task is inside a
        // final task, or (without dependences or detach) the team has one
        // thread or enough is queued.
        // A final task itself may be deferred; only its descendants are
        // included (`in_final` of their parent).
        // In a team of one, a detached task, or one with dependences, is
        // deferred too (it runs at once all the same, or as soon as its
        // predecessors have completed; see `schedule`): its completion may
        // wait for an event a later task of the thread fulfils, which an
        // undeferred task's thread could never reach.
        let detach = s.flags & FLAG_DETACH != 0;
        let defer_in = enc.team.filter(|t| {
            s.if_clause
                && !enc.parent.in_final.get()
                && (detach
                    || !deps.is_empty()
                    || (t.n > 1 && should_defer(enc.parent, t, herd::rt::local_queue_len())))
        });
        match defer_in {
            Some(team) => {
                let enc = Encounter { parent: promoted(ts, enc.parent), ..enc };
                defer(&enc, team, &s, &deps, final_)
            }
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
///
/// Where the task may defer children (a team of several threads, outside a
/// final task), it ends as soon as its body and its predecessors' and
/// event's waits have, without waiting for its deferred children, as
/// libgomp's included tasks do: its record starts in the frame and moves to
/// the heap when it defers its first child (`promoted`; at once for a task
/// with dependences or `detach`, whose record others point to from the
/// start), and the last reference frees that copy. A record that stayed in
/// the frame would have to wait here for every deferred child — a child
/// that another member stole and runs — and such a wait may start only the
/// included task's children (it is no anchor), so at 16 members most of
/// them spun there, refusing each other's tasks (a binary tree of 131,071
/// `in_reduction` tasks: 103 ms at 8 threads, over 15 s at 16, against 7
/// and 17 ms for libgomp). Most included tasks defer nothing and never
/// allocate (a record per included task cost fib(30), 2.7 million tasks
/// at 2 threads, 24 → 40 ms).
fn run_included(ts: &ThreadState, enc: &Encounter<'_>, s: &Spawn, final_: bool, deps: &[(usize, bool)]) {
    let may_defer = enc.team.is_some_and(|t| t.n > 1) && !final_ && !enc.parent.in_final.get();
    let upfront = may_defer && (s.flags & FLAG_DETACH != 0 || !deps.is_empty());
    let frame = (!upfront).then(|| Task::child_of(enc.parent));
    let task: &Task = match &frame {
        Some(f) => {
            f.promotable.set(may_defer);
            f
        }
        None => new_record(enc.parent, Layout::new::<Task>(), false),
    };
    task.in_final.set(final_);
    task.runner.store(enc.num, Ordering::Relaxed);
    if s.flags & FLAG_DETACH != 0 {
        // SAFETY: gcc's pointer to the event handle variable, and its
        // argument block, whose first word is the task's copy of it (the
        // copy for the body, if any, is made below, after this).
        unsafe { publish_event(s.detach, s.data, detach::arm(task)) };
    }
    let node = (!deps.is_empty()).then(|| {
        let node = Arc::new(DepNode::default());
        task.npred.store(1, Ordering::Relaxed);
        // SAFETY: only the parent's thread (this one) touches its table.
        unsafe {
            let table = &mut *enc.parent.deps.get();
            table.get_or_insert_with(Default::default).register(deps, &node, task);
        }
        if task.npred.fetch_sub(1, Ordering::AcqRel) != 1 {
            constraint::wait(
                enc.parent,
                None,
                |last| task.npred.observe(last) == 0,
                "a detached predecessor's event",
            );
        }
        node
    });
    let saved = ts.task.replace(task);
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
    // The record the task ends with: its heap copy if it deferred a child.
    // SAFETY: a copy `promoted` made is alive while this task holds its
    // own reference, dropped below.
    let task: &Task = match frame.as_ref().map(|f| f.moved_to.get()) {
        Some(moved) if !moved.is_null() => unsafe { &*moved },
        _ => task,
    };
    if !task.boxed.get() {
        // A frame record that could not move (a team of one, a final
        // task's): its deferred children (detached, or with dependences)
        // must finish before the frame goes.
        task.wait_children();
    }
    if task.parts.pending() {
        detach::wait_fulfilled(task, enc.team);
    }
    ts.task.set(saved);
    if let Some(node) = node {
        node.finish(schedule);
    }
    if task.boxed.get() {
        // Its own reference: frees the record now, or lets its last child
        // do it (`release` of the parent in `finish`). Only this thread adds
        // references (deferring the task's children, which it no longer
        // does), so a count of 1 is final: freed without a read-modify-write
        // (the common case, a task none of whose children is unfinished).
        if task.refs.load(Ordering::Acquire) == 1 {
            // SAFETY: the record's only reference is ours; not an anchor,
            // so nothing else counts on it (`keep` is 1).
            unsafe { drop_keep(task) };
        } else if let Some(team) = enc.team {
            release(task, team);
        }
    }
}

/// Gives a detached task's event handle to the program: the encountering
/// task's variable and the first word of the body's argument block (gcc
/// passes the handle to the body there, as libgomp fills it).
///
/// # Safety
/// `var` is gcc's `detach` pointer; `block` the argument block (or null).
unsafe fn publish_event(var: *mut usize, block: *mut c_void, handle: usize) {
    // SAFETY: the caller's contract; gcc puts the handle first in the block.
    unsafe {
        var.write_unaligned(handle);
        if !block.is_null() {
            (block as *mut usize).write_unaligned(handle);
        }
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

/// `parent`, the task about to defer a child, with a record that can
/// outlive its frame: an included task's frame record that may move
/// (`run_included`) is copied to the heap on its first deferred child, and
/// the thread's current task becomes the copy. Nothing else points to a
/// frame record until then (included children take its lineage parent, not
/// its address; no child was deferred; dependences and `detach` put the
/// record on the heap from the start), so the copy is a move.
fn promoted(ts: &ThreadState, parent: &'static Task) -> &'static Task {
    if !parent.promotable.get() {
        return parent;
    }
    let layout = Layout::new::<Task>();
    let p = alloc_record(layout);
    // SAFETY: `p` is a fresh block of a record's layout; the frame record
    // is copied into it bit for bit while no other thread can touch it (see
    // above), and the frame gives up what it owned (its children's
    // dependence table; it has no node of its own), so nothing is dropped
    // twice. The copy is freed by `drop_keep` with this layout.
    let copy = unsafe {
        std::ptr::copy_nonoverlapping(parent as *const Task, p, 1);
        std::ptr::write(parent.deps.get(), None);
        std::ptr::write(parent.node.get(), None);
        &*p
    };
    copy.promotable.set(false);
    copy.boxed.set(true);
    copy.layout.set(Some(layout));
    parent.promotable.set(false);
    parent.moved_to.set(copy);
    ts.task.set(copy);
    copy
}

/// A fresh block of `layout` for a heap record (`layout` starts with a
/// record's size and alignment), uninitialised; ends the program if memory
/// is exhausted, as the global allocator does.
fn alloc_record(layout: Layout) -> *mut Task {
    debug_assert!(
        layout.size() >= std::mem::size_of::<Task>() && layout.align() >= std::mem::align_of::<Task>()
    );
    // SAFETY: `layout` has a non-zero size (a record's at least).
    let p = unsafe { std::alloc::alloc(layout) };
    if p.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    p as *mut Task
}

/// A new heap task record created by `parent`, in a fresh block of
/// `layout` (whose prefix is the record), freed by [`drop_keep`]. An
/// `anchor` (a deferred task) is a lineage parent of the deferred tasks
/// below it (see `constraint`) and holds a `keep` on its own lineage parent
/// until it is freed; an included task's record is not (the lineage skips
/// included tasks, as it did when their records lived in their frames).
fn new_record(parent: &Task, layout: Layout, anchor: bool) -> &'static Task {
    let t = alloc_record(layout);
    // SAFETY: a fresh block of `layout`; the record is written before use
    // and freed only by `drop_keep`, with this layout.
    let task = unsafe {
        t.write(Task::child_of(parent));
        &*t
    };
    task.boxed.set(true);
    task.layout.set(Some(layout));
    if anchor {
        task.heap.set(true);
        task.anchor.set(true);
        // The new record holds its lineage parent until it is freed (see
        // `constraint`); the parent (or, for an included parent, its running
        // lineage parent) is alive here.
        // SAFETY: as just said.
        if let Some(lp) = unsafe { task.lin_parent.get().as_ref() } {
            if lp.heap.get() {
                lp.keep.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    task
}

/// Creates a deferred task and makes it runnable when its dependences allow.
fn defer(enc: &Encounter<'_>, team: &Team, s: &Spawn, deps: &[(usize, bool)], final_: bool) {
    // One allocation: the task header, then the argument block.
    let header = Layout::new::<Task>();
    let args = arg_layout(s.arg_size, s.arg_align);
    let (layout, offset) = header.extend(args).expect("task layout");
    let task = new_record(enc.parent, layout.pad_to_align(), true);
    // SAFETY: the block holds the argument block at `offset`.
    unsafe { copy_args((task as *const Task as *mut u8).add(offset) as *mut c_void, s) };
    debug_assert!(std::ptr::eq(task.team.get(), team));
    task.parent.set(enc.parent);
    task.in_final.set(final_);
    task.untied.set(s.flags & FLAG_UNTIED != 0);
    task.func.set(Some(s.func));
    task.data.set(
        // SAFETY: within the block.
        unsafe { (task as *const Task as *mut u8).add(offset) } as *mut c_void,
    );
    // Runs even when cancelled: copy-constructed arguments (its body
    // destroys them, as libgomp's), and a detached task (its body may be
    // what fulfils the event whose handle the program already holds).
    task.must_run.set(s.cpyfn.is_some() || s.flags & FLAG_DETACH != 0);
    if s.flags & FLAG_DETACH != 0 {
        // SAFETY: gcc's pointer to the event handle variable and the task's
        // own copy of the argument block (first word: its copy of the
        // handle); the task is not yet runnable.
        unsafe { publish_event(s.detach, task.data.get(), detach::arm(task)) };
    }
    let mut group = task.group.get();
    // SAFETY: the group outlives its tasks. A region's reduction group is
    // not waited for (the region's end is): no count.
    if !group.is_null() && unsafe { (*group).region } {
        group = std::ptr::null();
    }
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

/// Makes a deferred task runnable. A team of one runs it here and now: its
/// one thread is this one (creating it, or completing its last
/// predecessor), or a thread fulfilling a predecessor's event; the pool the
/// thread may belong to is an enclosing team's, whose members must not take
/// it.
fn schedule(task: *const Task) {
    // SAFETY: the task is alive until it has run, and its team until then.
    if unsafe { (*(*task).team.get()).n } <= 1 {
        // SAFETY: as above.
        unsafe { run_deferred(task as *const ()) };
        return;
    }
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
    // SAFETY: the team outlives its tasks.
    let alone = unsafe { (*task.team.get()).n <= 1 };
    // Member `i` of a team is participant `i` of its pool; a team of one's
    // thread may be a participant of an enclosing team's.
    let num = if alone { 0 } else { herd::current_thread_index().unwrap_or(0) };
    task.runner.store(num, Ordering::Relaxed);
    thread::with(|ts| {
        let (team, n, cur) = (ts.team.get(), ts.num.get(), ts.task.get());
        ts.team.set(task.team.get());
        ts.num.set(num as u32);
        ts.task.set(task);
        let f = task.func.get().expect("deferred task has a body");
        // Discarded when its region or taskgroup was cancelled before it
        // started: completed without running its body (`finish` below).
        // SAFETY: the team outlives its tasks.
        let discard = crate::cancel::enabled()
            && !task.must_run.get()
            && crate::cancel::task_cancelled(unsafe { task.team.get().as_ref() }, task.counted_in.get());
        if !discard {
            // SAFETY: gcc's outlined body with the task's own argument block.
            unsafe { f(task.data.get()) };
        }
        ts.team.set(team);
        ts.num.set(n);
        ts.task.set(cur);
    });
    // A detached task completes when its event is fulfilled too.
    if task.parts.pending() && !detach::body_done(task) {
        return;
    }
    finish(task);
}

/// A deferred task's completion; see the module documentation for the order.
/// Runs on the thread that ran it, or (detached) on the one that fulfilled
/// its event last.
fn finish(task: &Task) {
    // SAFETY: only this task's thread touches these (a detached task's body
    // has ended before its last part was taken, `SeqCst`).
    unsafe {
        *task.deps.get() = None;
        if let Some(node) = (*task.node.get()).take() {
            node.finish(schedule);
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
        let boxed = (*task).boxed.get();
        match (*task).refs.fetch_sub(1, Ordering::SeqCst) {
            1 if boxed => drop_keep(task),
            2 => team.wake(runner),
            _ => {}
        }
    }
}

/// Drops one `keep` of heap task `task`: at zero frees it and drops the
/// `keep` it held on its lineage parent, and so on up the chain.
///
/// # Safety
/// The caller holds one of `task`'s `keep` counts.
unsafe fn drop_keep(mut task: *const Task) {
    loop {
        // SAFETY: the caller's (or the previous round's) count keeps it alive.
        unsafe {
            // Counts are only added by a running task (for the tasks it and
            // its included descendants defer), which holds one itself: a
            // count of 1 while we hold one is ours alone and cannot grow, so
            // the record is freed without a read-modify-write (the common
            // case: a task without deferred children).
            let keep = &(*task).keep;
            if keep.load(Ordering::Acquire) != 1 && keep.fetch_sub(1, Ordering::AcqRel) != 1 {
                return;
            }
            // Only an anchor holds a count on its lineage parent.
            let up = if (*task).anchor.get() { (*task).lin_parent.get() } else { std::ptr::null() };
            let layout = (*task).layout.get().expect("heap task layout");
            std::ptr::drop_in_place(task as *mut Task);
            std::alloc::dealloc(task as *mut u8, layout);
            // `up` is alive: the freed record held a count on it until now.
            if up.is_null() || !(*up).heap.get() {
                return;
            }
            task = up;
        }
    }
}

/// `GOMP_taskwait`.
pub(crate) fn taskwait() {
    thread::with(|ts| current(ts).wait_children())
}

/// `GOMP_taskyield`: runs one queued descendant of the current task, if any.
pub(crate) fn taskyield() {
    thread::with(|ts| constraint::yield_to_descendant(current(ts)))
}

/// The body of the empty task standing for `taskwait depend`.
unsafe extern "C" fn empty_task(_: *mut c_void) {}

/// `GOMP_taskwait_depend` (`nowait`: `GOMP_taskwait_depend_nowait`, gcc 13):
/// an empty task with the dependences — included, so the encountering task
/// waits for exactly the predecessors they name; with `nowait`, a deferred
/// one that only orders later sibling tasks after those predecessors.
pub(crate) fn taskwait_depend(depend: *mut *mut c_void, nowait: bool) {
    static NO_ARGS: u8 = 0;
    spawn(Spawn {
        func: empty_task,
        data: &NO_ARGS as *const u8 as *mut c_void,
        cpyfn: None,
        arg_size: 0,
        arg_align: 1,
        if_clause: nowait,
        flags: FLAG_DEPEND,
        depend,
        patch: None,
        detach: std::ptr::null_mut(),
    })
}

/// The end of an included task whose record is on the heap (`run_included`)
/// against its last deferred child's `release` of it, model-checked: the
/// record is freed exactly once, and only after the child's last access.
/// The owner frees at once when it reads `refs == 1` (`Acquire`, pairing
/// with the child's decrement), else drops its reference like the child.
/// With the owner's load `Relaxed` (`weaken`), loom reports the free racing
/// with the child's read of the record.
#[cfg(all(test, loom))]
mod loom_models {
    use loom::cell::UnsafeCell;
    use loom::sync::atomic::{AtomicUsize, Ordering};
    use loom::sync::Arc;

    struct Record {
        refs: AtomicUsize,
        runner: UnsafeCell<usize>,
        freed: AtomicUsize,
    }

    impl Record {
        /// `release`'s decrement; the freeing side "frees" by writing the
        /// record, which loom checks against every unordered access.
        fn release(&self) {
            // SAFETY: loom's cell; a read racing with the free is what the
            // model looks for.
            let _runner = self.runner.with(|p| unsafe { *p });
            if self.refs.fetch_sub(1, Ordering::SeqCst) == 1 {
                self.free();
            }
        }

        fn free(&self) {
            // SAFETY: loom's cell; stands for the free (a write).
            self.runner.with_mut(|p| unsafe { *p = usize::MAX });
            self.freed.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn included_end(weaken: bool) {
        loom::model(move || {
            // Its own reference and one deferred child's.
            let rec = Arc::new(Record {
                refs: AtomicUsize::new(2),
                runner: UnsafeCell::new(0),
                freed: AtomicUsize::new(0),
            });
            let child = {
                let rec = rec.clone();
                loom::thread::spawn(move || rec.release())
            };
            let order = if weaken { Ordering::Relaxed } else { Ordering::Acquire };
            if rec.refs.load(order) == 1 {
                rec.free();
            } else {
                rec.release();
            }
            child.join().unwrap();
            assert_eq!(rec.freed.load(Ordering::Relaxed), 1, "freed exactly once");
        });
    }

    #[test]
    fn included_record_freed_once_after_its_last_child() {
        included_end(false);
    }

    #[test]
    #[should_panic]
    fn included_record_weakened_fails() {
        included_end(true);
    }
}
