//! Detached tasks (`detach(event)`, OpenMP 5.0) and `omp_fulfill_event`.
//!
//! **Completion.** A detached task completes when its body has finished
//! *and* its event is fulfilled, in either order, on any threads. Its record
//! counts the outstanding parts ([`Parts`], 2 at creation); the end of the
//! body and the fulfilment each take one with a `SeqCst` decrement, and
//! whichever takes the last one completes the task — exactly once (loom model
//! below). Until then the task is unfinished for everything that waits for
//! it: a deferred task's `finish` (dependence successors, taskgroup count,
//! parent's children, barrier counts) runs only at completion, and the
//! thread of an included one (`if(0)`, inside a final task, a team of one)
//! waits after the body until the fulfilment.
//!
//! **Events.** The handle given to the program names an [`Event`] record,
//! 64-byte aligned, never freed but recycled through a per-thread free list:
//! handle = address | generation mod 64. The record's word holds the full
//! generation and whether it is armed. Fulfilling bumps the generation and
//! disarms it (one compare-and-swap), so a second fulfilment of a handle —
//! racing, later, or after the record was reused (unless reused a multiple
//! of 64 times since) — is reported as an error instead of completing some
//! other task. Arming and recycling touch the calling thread's list; a
//! shared spare list is locked once per 64 events, only by a thread that
//! runs out (it arms more than it fulfils) or has too many (the reverse),
//! so records stay bounded by the events alive plus 128 per thread.
//!
//! **Teams of one** defer detached tasks as libgomp does: the body runs at
//! once, the task completes at the fulfilment, and the thread's waits
//! (taskwait, taskgroup end, barrier, end of region, dependences) wait for
//! it — so a later task of the thread may fulfil an earlier one's event.
//! Undeferred detached tasks (`if(0)`, inside a final task, outside any
//! parallel region) make their thread wait after the body, as libgomp's do;
//! an event only a later task of that thread fulfils never is (herd says so
//! on stderr after 5 s rather than hang silently). So does an included task
//! of a team of one that ends with a detached child still pending (it waits
//! for its children: its record lives on its thread's stack).
//! A fulfilment from a thread outside the team that completes a task runs
//! the completion — and dependence successors it makes ready — there, and
//! wakes the team's drain (no member finished the task, so none would).

use super::record::Task;
use crate::wait::Observe;
use std::cell::RefCell;
use std::sync::Mutex;

#[cfg(loom)]
use loom::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Outstanding parts of a task's completion: 0 for a task without `detach`;
/// 2 (body, event) for a detached one until each part is taken.
pub(crate) struct Parts(AtomicUsize);

impl Parts {
    pub(crate) fn new() -> Parts {
        Parts(AtomicUsize::new(0))
    }

    /// Marks the task detached: two parts outstanding. Before it is shared.
    pub(super) fn arm(&self) {
        self.0.store(2, Ordering::Relaxed);
    }

    /// Whether the task was created with `detach` and is not complete.
    pub(super) fn pending(&self) -> bool {
        self.0.load(Ordering::Acquire) != 0
    }

    /// Takes one part; true for the last one (the caller completes the task).
    /// `SeqCst`: a waiting thread's sleep check is a `SeqCst` read.
    pub(super) fn take(&self) -> bool {
        self.0.fetch_sub(1, Ordering::SeqCst) == 1
    }
}

impl Observe for Parts {
    type Value = usize;
    fn observe(&self, last: bool) -> usize {
        if last {
            self.0.fetch_add(0, Ordering::SeqCst)
        } else {
            self.0.load(Ordering::Acquire)
        }
    }
}

const ARMED: usize = 1;
const GEN_MASK: usize = 63;

/// An event handle's record (see the module documentation).
#[repr(align(64))]
pub(crate) struct Event {
    /// generation << 1 | ARMED.
    word: AtomicUsize,
    task: AtomicPtr<Task>,
}

impl Event {
    fn new() -> Event {
        Event { word: AtomicUsize::new(0), task: AtomicPtr::new(std::ptr::null_mut()) }
    }

    /// Arms the event for `task`; returns the program's handle.
    fn arm(&self, task: *const Task) -> usize {
        let gen = self.word.load(Ordering::Relaxed) >> 1;
        self.task.store(task as *mut Task, Ordering::Relaxed);
        // Release: the program may pass the handle on by its own means.
        self.word.store(gen << 1 | ARMED, Ordering::Release);
        self as *const Event as usize | (gen & GEN_MASK)
    }

    /// Fulfils the event named by `handle` (whose generation bits are `gen`):
    /// the task it was armed for, or `None` if it is not armed for this handle.
    fn try_fulfil(&self, gen: usize) -> Option<*const Task> {
        let cur = self.word.load(Ordering::Acquire);
        if cur & ARMED == 0 || (cur >> 1) & GEN_MASK != gen {
            return None;
        }
        let task = self.task.load(Ordering::Relaxed);
        let next = ((cur >> 1) + 1) << 1;
        self.word
            .compare_exchange(cur, next, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| task as *const Task)
    }
}

/// Events a thread hands on in batches of [`BATCH`]: one that fulfils more
/// than it arms (a progress thread fulfilling others' events) would
/// otherwise keep records its own list never reuses while the arming
/// threads allocate new ones, without bound.
static SPARE: Mutex<Vec<&'static Event>> = Mutex::new(Vec::new());
const BATCH: usize = 64;

/// A thread's fulfilled events, ready to be armed again; handed to
/// [`SPARE`] when the thread exits.
struct FreeList(Vec<&'static Event>);

impl Drop for FreeList {
    fn drop(&mut self) {
        spare().append(&mut self.0);
    }
}

fn spare() -> std::sync::MutexGuard<'static, Vec<&'static Event>> {
    SPARE.lock().unwrap_or_else(|e| e.into_inner())
}

thread_local! {
    static FREE: RefCell<FreeList> = const { RefCell::new(FreeList(Vec::new())) };
}

/// Makes `task` detached and returns its event handle for the program.
pub(super) fn arm(task: &Task) -> usize {
    task.parts.arm();
    let ev = FREE.with(|f| {
        let list = &mut f.borrow_mut().0;
        if list.is_empty() {
            let mut spare = spare();
            let keep = spare.len().saturating_sub(BATCH);
            list.extend(spare.drain(keep..));
        }
        list.pop()
    });
    ev.unwrap_or_else(|| Box::leak(Box::new(Event::new()))).arm(task)
}

/// Keeps a fulfilled event for this thread's next `arm`, passing a batch on
/// when the list is long.
fn recycle(ev: &'static Event) {
    FREE.with(|f| {
        let list = &mut f.borrow_mut().0;
        list.push(ev);
        if list.len() > 2 * BATCH {
            spare().extend(list.drain(..BATCH));
        }
    })
}

/// The end of a detached task's body: true if the task is complete now
/// (its event was fulfilled), so the caller completes it.
pub(super) fn body_done(task: &Task) -> bool {
    task.parts.take()
}

/// `omp_fulfill_event`.
pub(crate) fn fulfill(handle: usize) {
    let ev = (handle & !GEN_MASK) as *const Event;
    if ev.is_null() {
        crate::unsupported::fatal("omp_fulfill_event: a null event handle (not an event of a detached task)");
    }
    // SAFETY: a non-null handle came from `arm` (the program's contract):
    // event records are never freed.
    let ev: &'static Event = unsafe { &*ev };
    let Some(task) = ev.try_fulfil(handle & GEN_MASK) else {
        crate::unsupported::fatal(&format!(
            "omp_fulfill_event: event {handle:#x} is already fulfilled (an event may be fulfilled only once)"
        ))
    };
    recycle(ev);
    // SAFETY: the task cannot complete before this part is taken: alive.
    let t = unsafe { &*task };
    if t.heap.get() {
        let team = t.team.get();
        if body_done(t) {
            super::finish(t);
            // Completed here, maybe by a thread outside the team: no member
            // re-checks the barrier drain on returning from this task (the
            // drain's rule, see `team`), so wake member 0, the root of the
            // drain's wake tree; a drainer that sees the epoch drained
            // wakes its neighbours. (As `Team::task_finished`, this touches
            // the team after the count: teams outlive their regions.)
            // SAFETY: as above.
            if let Some(team) = unsafe { team.as_ref() } {
                team.wake(0);
            }
        }
    } else {
        // An included task: its thread waits for the count; read what
        // waking it needs first (it may return and drop the task at once).
        let (runner, team) = (t.runner.load(std::sync::atomic::Ordering::Relaxed), t.team.get());
        if body_done(t) {
            // SAFETY: the team outlives its tasks' waits.
            if let Some(team) = unsafe { team.as_ref() } {
                team.wake(runner);
            }
        }
    }
}

/// An included detached task's thread, after its body: waits until the
/// event is fulfilled (alone in its team, by polling: see `Team::wait_in`).
pub(super) fn wait_fulfilled(task: &Task, team: Option<&crate::team::Team>) {
    if body_done(task) {
        return;
    }
    crate::team::Team::wait_in(
        team,
        |last| task.parts.observe(last) == 0,
        "omp_fulfill_event of an undeferred detached task (if(0), final, or outside any parallel region)",
    );
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Events armed on one thread and fulfilled on another (a progress
    /// thread) are reused: the records stay bounded by the events alive plus
    /// the two threads' lists, however many are armed in all.
    #[test]
    fn events_fulfilled_elsewhere_are_reused() {
        let tasks: Vec<Task> = (0..100).map(|_| Task::implicit_blank()).collect();
        let mut records = std::collections::HashSet::new();
        for _ in 0..100 {
            let handles: Vec<usize> = tasks.iter().map(arm).collect();
            records.extend(handles.iter().map(|h| h & !GEN_MASK));
            std::thread::spawn(move || handles.into_iter().for_each(fulfill)).join().unwrap();
        }
        assert!(records.len() <= 100 + 3 * BATCH, "{} event records for 100 alive at a time", records.len());
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use loom::sync::Arc;

    /// The end of the body races with the fulfilment (and a second,
    /// erroneous fulfilment): exactly one of body end and first fulfilment
    /// completes the task, exactly once; the second fulfilment is refused.
    #[test]
    fn detach_fulfil_races_body_end() {
        loom::model(|| {
            let parts = Arc::new(Parts::new());
            parts.arm();
            let ev = Arc::new(Event::new());
            let h = ev.arm(std::ptr::null());
            let gen = h & GEN_MASK;
            let (p2, e2) = (parts.clone(), ev.clone());
            let fulfiller = loom::thread::spawn(move || {
                let first = e2.try_fulfil(gen).is_some();
                let completed = first && p2.take();
                let second = e2.try_fulfil(gen).is_some();
                (first, completed, second)
            });
            let body_completed = parts.take();
            let (first, fulfil_completed, second) = fulfiller.join().unwrap();
            assert!(first, "the first fulfilment is accepted");
            assert!(!second, "a second fulfilment is refused");
            assert!(body_completed ^ fulfil_completed, "exactly one completes the task");
            assert_eq!(parts.0.load(Ordering::SeqCst), 0);
        });
    }

    /// Two fulfilments race: exactly one is accepted.
    #[test]
    fn detach_double_fulfil_race() {
        loom::model(|| {
            let ev = Arc::new(Event::new());
            let gen = ev.arm(std::ptr::null()) & GEN_MASK;
            let e2 = ev.clone();
            let t = loom::thread::spawn(move || e2.try_fulfil(gen).is_some());
            let a = ev.try_fulfil(gen).is_some();
            let b = t.join().unwrap();
            assert!(a ^ b, "exactly one fulfilment is accepted");
        });
    }
}
