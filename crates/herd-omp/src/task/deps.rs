//! Dependences between sibling tasks.
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

use super::record::Task;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

const DEPEND_IN: usize = 1;

#[derive(Default)]
pub(super) struct DepTable {
    pub(super) map: HashMap<usize, DepEntry>,
}

#[derive(Default)]
pub(super) struct DepEntry {
    pub(super) last_out: Option<Arc<DepNode>>,
    pub(super) readers: Vec<Arc<DepNode>>,
}

#[derive(Default)]
pub(super) struct DepNode {
    pub(super) state: Mutex<NodeState>,
}

#[derive(Default)]
pub(super) struct NodeState {
    pub(super) done: bool,
    pub(super) successors: Vec<TaskPtr>,
}

#[derive(Clone, Copy)]
pub(super) struct TaskPtr(*const Task);
// SAFETY: a successor task is alive until it has run, which needs this node
// to release it.
unsafe impl Send for TaskPtr {}

/// Parses gcc's `depend` array into `(address, is_in)` pairs.
///
/// # Safety
/// `depend` is the array gcc passed to `GOMP_task` (either layout).
pub(super) unsafe fn parse_depend(depend: *mut *mut c_void) -> Vec<(usize, bool)> {
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
    pub(super) fn register(&mut self, deps: &[(usize, bool)], node: &Arc<DepNode>, task: *const Task) {
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
    /// Marks the node finished and makes ready successors runnable: a
    /// deferred successor whose last predecessor this was goes to `ready`.
    pub(super) fn finish(&self, ready: impl Fn(*const Task)) {
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
                        ready(t);
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
