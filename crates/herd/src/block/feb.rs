//! Full/empty bits: a word with a full/empty state, as in Qthreads
//! (maestro-qthreads-scheduling.txt §2).
//!
//! **Protocol.** The value, the full bit and three FIFO queues of blocked
//! parties — `read_ff` readers, `read_fe` readers, `write_ef` writers — sit
//! under one lock. A blocked party queues a [`Slot`] on its own stack (its
//! [`Waiter`] and, for a writer, the value it writes) and blocks with the
//! waiter protocol (`block::waiter`): a lightweight thread suspends, an OS
//! thread waits or parks. Invariant, whenever the lock is free: a full word
//! has no queued readers, an empty word no queued writers.
//!
//! Every operation that changes the state ends by *serving* the queues, under
//! the lock, with direct hand-off: while the word is full, every queued
//! `read_ff` gets a copy, then the first `read_fe` gets the value and the word
//! becomes empty; while it is empty, the first `write_ef`'s value is stored
//! and the word becomes full; and so on until no queued party can proceed.
//! The served slots are unlinked into a list, and woken after the lock is
//! released (each exactly once; a slot is read before its waiter is woken,
//! after which its owner may return). So many waiters on one word are all
//! served, none is lost, and each value written is read by exactly one
//! `read_fe`.
//!
//! Loom models (`loom_tests`): a writer racing a reader that is registering
//! and suspending (no lost wake-up), and several writers and readers (each
//! value delivered exactly once).

use crate::block::waiter::Waiter;
use std::cell::{Cell, UnsafeCell};
use std::ptr;

#[cfg(loom)]
use loom::sync::{Mutex, MutexGuard};
#[cfg(not(loom))]
use std::sync::{Mutex, MutexGuard};

/// A word with a full/empty bit (Qthreads' FEB): reads can wait for it to be
/// full and writes for it to be empty, from lightweight threads (which
/// suspend, freeing their worker) and OS threads (which wait) alike.
///
/// Blocked parties queue in FIFO order per kind and are served by direct
/// hand-off: a write that fills the word first serves every waiting
/// [`read_ff`](Feb::read_ff), then hands the value to the first waiting
/// [`read_fe`](Feb::read_fe) (the word is empty again), which admits the
/// first waiting [`write_ef`](Feb::write_ef), and so on. So every waiter is
/// served and each value written with `write_ef` is read by exactly one
/// `read_fe` (unless overwritten by [`write_f`](Feb::write_f)). Reads return
/// clones.
///
/// ```
/// let w = herd::Feb::new_empty(0);
/// w.write_ef(5); // empty → full
/// assert_eq!(w.read_ff(), 5); // stays full
/// assert_eq!(w.read_fe(), 5); // full → empty
/// assert!(!w.is_full());
/// ```
pub struct Feb<T> {
    state: Mutex<State<T>>,
}

// SAFETY: the value and the queued slots are only touched under the lock
// (like `Mutex<T>`, `T: Send` suffices: values move between threads, and
// clones are taken under the lock). Slots belong to blocked parties that stay
// alive until woken.
unsafe impl<T: Send> Send for Feb<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Feb<T> {}

struct State<T> {
    value: T,
    full: bool,
    ff: Queue<T>,
    fe: Queue<T>,
    ef: Queue<T>,
}

/// A blocked party's record, on its stack.
struct Slot<T> {
    waiter: Waiter,
    /// A reader's result (set by the server), a writer's value (taken by it).
    value: UnsafeCell<Option<T>>,
    next: Cell<*const Slot<T>>,
}

/// An intrusive FIFO of slots.
struct Queue<T> {
    head: *const Slot<T>,
    tail: *const Slot<T>,
}

impl<T> Queue<T> {
    const fn new() -> Queue<T> {
        Queue { head: ptr::null(), tail: ptr::null() }
    }

    fn push(&mut self, s: *const Slot<T>) {
        // SAFETY: queued slots are alive (their owners are blocked) and only
        // linked under the FEB's lock.
        unsafe {
            (*s).next.set(ptr::null());
            if self.tail.is_null() {
                self.head = s;
            } else {
                (*self.tail).next.set(s);
            }
        }
        self.tail = s;
    }

    fn pop(&mut self) -> Option<*const Slot<T>> {
        let s = self.head;
        if s.is_null() {
            return None;
        }
        // SAFETY: as in `push`.
        self.head = unsafe { (*s).next.get() };
        if self.head.is_null() {
            self.tail = ptr::null();
        }
        Some(s)
    }
}

#[derive(Clone, Copy)]
enum Kind {
    ReadFF,
    ReadFE,
    WriteEF,
}

impl<T: Clone> Feb<T> {
    /// A full word holding `value`.
    pub fn new_full(value: T) -> Feb<T> {
        Feb::with(value, true)
    }

    /// An empty word holding `value` (which a [`fill`](Feb::fill) would
    /// expose).
    pub fn new_empty(value: T) -> Feb<T> {
        Feb::with(value, false)
    }

    fn with(value: T, full: bool) -> Feb<T> {
        Feb { state: Mutex::new(State { value, full, ff: Queue::new(), fe: Queue::new(), ef: Queue::new() }) }
    }

    /// Waits until the word is full, reads it and leaves it full
    /// (`readFF`).
    pub fn read_ff(&self) -> T {
        self.access(Kind::ReadFF, None, Waiter::current).expect("readers receive a value")
    }

    /// Waits until the word is full, reads it and leaves it empty
    /// (`readFE`).
    pub fn read_fe(&self) -> T {
        self.access(Kind::ReadFE, None, Waiter::current).expect("readers receive a value")
    }

    /// Waits until the word is empty, writes `value` and leaves it full
    /// (`writeEF`).
    pub fn write_ef(&self, value: T) {
        self.access(Kind::WriteEF, Some(value), Waiter::current);
    }

    /// Writes `value` and leaves the word full, without waiting (`writeF`).
    pub fn write_f(&self, value: T) {
        self.change(|st| {
            st.value = value;
            st.full = true;
        });
    }

    /// Marks the word full, keeping its value (`fill`).
    pub fn fill(&self) {
        self.change(|st| st.full = true);
    }

    /// Marks the word empty (`empty`).
    pub fn empty(&self) {
        self.change(|st| st.full = false);
    }

    /// True if the word is full (a snapshot).
    pub fn is_full(&self) -> bool {
        self.lock().full
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies `f` under the lock, then serves the queues.
    fn change(&self, f: impl FnOnce(&mut State<T>)) {
        let mut st = self.lock();
        f(&mut st);
        let woken = st.serve();
        drop(st);
        wake_all(woken);
    }

    /// A waiting operation; `waiter` makes the caller's waiter if it must
    /// block. Returns the value read.
    fn access(&self, kind: Kind, value: Option<T>, waiter: impl FnOnce() -> Waiter) -> Option<T> {
        let mut st = self.lock();
        match (kind, st.full) {
            (Kind::ReadFF, true) => return Some(st.value.clone()),
            (Kind::ReadFE, true) => {
                let v = st.value.clone();
                st.full = false;
                let woken = st.serve();
                drop(st);
                wake_all(woken);
                return Some(v);
            }
            (Kind::WriteEF, false) => {
                st.value = value.expect("writers bring a value");
                st.full = true;
                let woken = st.serve();
                drop(st);
                wake_all(woken);
                return None;
            }
            _ => {}
        }
        let slot = Slot { waiter: waiter(), value: UnsafeCell::new(value), next: Cell::new(ptr::null()) };
        match kind {
            Kind::ReadFF => st.ff.push(&slot),
            Kind::ReadFE => st.fe.push(&slot),
            Kind::WriteEF => st.ef.push(&slot),
        }
        drop(st);
        slot.waiter.wait();
        slot.value.into_inner()
    }
}

impl<T: Clone> State<T> {
    /// Serves queued parties while one can proceed (see the module
    /// documentation); returns them, unlinked, to be woken after unlocking.
    fn serve(&mut self) -> Queue<T> {
        let mut woken = Queue::new();
        loop {
            if self.full {
                while let Some(r) = self.ff.pop() {
                    // SAFETY: a queued slot is alive and ours under the lock.
                    unsafe { *(*r).value.get() = Some(self.value.clone()) };
                    woken.push(r);
                }
                let Some(r) = self.fe.pop() else { break };
                // SAFETY: as above.
                unsafe { *(*r).value.get() = Some(self.value.clone()) };
                self.full = false;
                woken.push(r);
            } else {
                let Some(w) = self.ef.pop() else { break };
                // SAFETY: as above.
                self.value = unsafe { (*(*w).value.get()).take() }.expect("queued writers hold a value");
                self.full = true;
                woken.push(w);
            }
        }
        woken
    }
}

/// Wakes the served slots (after the lock is released).
fn wake_all<T>(mut woken: Queue<T>) {
    while let Some(s) = woken.pop() {
        // SAFETY: `s` was served and unlinked under the lock and its owner is
        // still blocked; `pop` read its link before this wake, after which
        // the owner may return and free it.
        unsafe { Waiter::wake(&(*s).waiter) };
    }
}

impl<T: Clone + Default> Default for Feb<T> {
    /// An empty word holding `T::default()`.
    fn default() -> Feb<T> {
        Feb::new_empty(T::default())
    }
}

impl<T: Clone + std::fmt::Debug> std::fmt::Debug for Feb<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.lock();
        f.debug_struct("Feb").field("full", &st.full).field("value", &st.value).finish()
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::block::waiter::model::ModelUlt;
    use crate::sync::Parker;
    use loom::sync::Arc;
    use loom::thread;

    fn ult_reader_races_writer(broken: bool) {
        loom::model(move || {
            let feb = Arc::new(Feb::new_empty(0u32));
            let f = feb.clone();
            let reader = thread::spawn(move || {
                let mut u = ModelUlt::new();
                u.broken = broken;
                f.access(Kind::ReadFE, None, || Waiter::ult(u.blockable())).unwrap()
            });
            feb.access(Kind::WriteEF, Some(7), || unreachable!("the word starts empty"));
            assert_eq!(reader.join().unwrap(), 7);
            assert!(!feb.is_full());
        });
    }

    /// A lightweight thread registering and suspending on an empty word
    /// races a writer: it is always resumed, with the value.
    #[test]
    fn feb_ult_reader_races_writer() {
        ult_reader_races_writer(false);
    }

    /// The same model with the worker's `NOTIFIED` check skipped (it parks
    /// unconditionally): the wake that comes before the suspension is lost
    /// and loom finds the hang.
    #[test]
    #[should_panic(expected = "Model exceeded maximum number of branches")]
    fn feb_weakened_protocol_loses_wakeup() {
        ult_reader_races_writer(true);
    }

    /// Two writers (a lightweight thread and an OS thread that parks) and a
    /// lightweight reader that reads twice: each value is read exactly once
    /// and every party completes.
    #[test]
    fn feb_each_value_read_once() {
        loom::model(|| {
            let feb = Arc::new(Feb::new_empty(0u32));
            let f1 = feb.clone();
            let w1 = thread::spawn(move || {
                let u = ModelUlt::new();
                f1.access(Kind::WriteEF, Some(1), || Waiter::ult(u.blockable()));
            });
            let f2 = feb.clone();
            let w2 = thread::spawn(move || {
                let p = Parker::new();
                f2.access(Kind::WriteEF, Some(2), || Waiter::thread(&p));
            });
            let u = ModelUlt::new();
            let a = feb.access(Kind::ReadFE, None, || Waiter::ult(u.blockable())).unwrap();
            let b = feb.access(Kind::ReadFE, None, || Waiter::ult(u.blockable())).unwrap();
            w1.join().unwrap();
            w2.join().unwrap();
            let mut got = [a, b];
            got.sort_unstable();
            assert_eq!(got, [1, 2]);
            assert!(!feb.is_full());
        });
    }
}
