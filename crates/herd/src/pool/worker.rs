//! The persistent threads: their main loop (wait for a post, run the share,
//! acknowledge), shutdown, binding to places, and which registry slot the
//! calling thread occupies (`CURRENT`), with the one safe way to reach it.

use super::idle::AdaptiveSpin;
use super::lazy;
use super::port::{ADDRESS_BITS, TERMINATE};
use super::region::Region;
use super::registry::Registry;
use crate::config::Dispatch;
use crate::trace;
use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

thread_local! {
    /// The registry and slot the current thread occupies, if any.
    static CURRENT: Cell<(*const Registry, usize)> = const { Cell::new((std::ptr::null(), 0)) };
    /// The registry whose master PU this thread was last bound to.
    static MASTER_BOUND: Cell<usize> = const { Cell::new(0) };
}

/// The registry and slot the calling thread occupies (null if none).
#[inline]
fn current() -> (*const Registry, usize) {
    CURRENT.with(|c| c.get())
}

/// Restores the previous occupancy when dropped (also on unwinding).
pub(crate) struct Occupancy {
    prev: (*const Registry, usize),
    prev_depth: u32,
}

impl Occupancy {
    /// Marks the calling thread as the occupant of `slot` of `reg`.
    pub(crate) fn enter(reg: &Registry, slot: usize) -> Occupancy {
        let prev = CURRENT.with(|c| c.replace((reg as *const Registry, slot)));
        Occupancy { prev, prev_depth: lazy::swap_depth(0) }
    }
}

impl Drop for Occupancy {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.prev));
        lazy::swap_depth(self.prev_depth);
    }
}

/// The registry and slot the calling thread occupies, if any, lent to `f`.
///
/// This is the one place that turns `CURRENT`'s raw pointer into a
/// reference: a registry outlives every occupancy of it (persistent workers
/// hold an `Arc` of it; a master, a launch-and-join thread or a proxy
/// occupies it through a borrow that spans the occupancy), and the
/// occupancy spans `f` (an inner occupancy of another pool, entered inside
/// `f`, is restored before `f` returns).
#[inline]
pub(crate) fn with_current<R>(f: impl FnOnce(Option<(&Registry, usize)>) -> R) -> R {
    let (reg, slot) = current();
    // SAFETY: see above: a non-null `CURRENT` names a live registry for at
    // least as long as this call.
    f(unsafe { reg.as_ref() }.map(|r| (r, slot)))
}

/// The slot the calling thread occupies in `reg`, if it is a participant of it.
#[inline]
pub(crate) fn slot_in(reg: &Registry) -> Option<usize> {
    let (cur, slot) = current();
    std::ptr::eq(cur, reg).then_some(slot)
}

/// A new strong reference to the registry the calling thread occupies.
pub(crate) fn current_arc() -> Option<(Arc<Registry>, usize)> {
    let (reg, slot) = current();
    if reg.is_null() {
        return None;
    }
    // SAFETY: every registry is built inside an `Arc` (`PoolBuilder::build`)
    // and occupied through a reference into it, so `reg` is `Arc::as_ptr` of
    // a live `Arc` (the caller occupies it); we take a new strong reference.
    let arc = unsafe {
        Arc::increment_strong_count(reg);
        Arc::from_raw(reg)
    };
    Some((arc, slot))
}

impl Registry {
    /// Binds the calling thread to participant `i`'s place, if binding is on.
    pub(crate) fn bind_participant(&self, i: usize) {
        if self.placement.bound {
            if let Err(e) = self.topology.bind_current_thread(self.placement.pus_of(i)) {
                eprintln!("herd: warning: {e}; participant {i} runs unbound");
            }
        }
    }

    /// Binds the calling (master) thread to the master's place once per pool.
    /// Entering an unbound pool after a bound one releases the thread to all
    /// usable PUs again, so that one pool's pinning does not leak into another.
    pub(crate) fn bind_master_once(&self) {
        if self.keep_master_binding {
            return;
        }
        let previous = MASTER_BOUND.with(|b| b.get());
        if self.placement.bound {
            if previous != self.id {
                MASTER_BOUND.with(|b| b.set(self.id));
                self.bind_participant(0);
            }
        } else if previous != 0 && !self.topology.is_synthetic() {
            MASTER_BOUND.with(|b| b.set(0));
            let all: Vec<usize> = (0..self.topology.pus().len()).collect();
            if let Err(e) = self.topology.bind_current_thread(&all) {
                eprintln!("herd: warning: could not release the master's binding: {e}");
            }
        }
    }

    /// Main loop of a persistent thread. `slot` is its participant slot, or
    /// `None` for the proxy of non-master-last dispatch (which runs share 0).
    pub(crate) fn worker_main(self: Arc<Registry>, slot: Option<usize>) {
        let (port, share) = match slot {
            Some(s) => (&*self.slots[s], s),
            None => (&*self.proxy, 0),
        };
        self.bind_participant(share);
        if trace::enabled() {
            let what = if slot.is_some() { "worker" } else { "proxy of" };
            let pu = self.topology.pus()[self.placement.pu_of(share)].os_index;
            trace::name_thread(&format!("{what} {share} (PU {pu})"));
        }
        let _occupancy = slot.map(|s| Occupancy::enter(&self, s));
        // The proxy shares the master's place (it is the paper's thread on the
        // master's core): spinning there would only delay the master, so it
        // idles asleep, like the paper's workers blocked on a condition.
        let spin = if slot.is_some() { self.spin() } else { Some(Duration::ZERO) };
        // Between regions the spin window adapts to the observed gaps (a
        // configured window of zero — passive — or none — active — stays).
        let mut adaptive = spin.filter(|d| !d.is_zero()).map(AdaptiveSpin::new);
        let mut seen = 0;
        loop {
            let window = adaptive.map_or(spin, |a| Some(a.window()));
            let waited = self.wait_with(slot, &port.parker, window, |last| port.has_mail(seen, last));
            if let Some(a) = adaptive.as_mut() {
                a.observe(waited);
            }
            let mail = port.mailbox.load(Ordering::Acquire);
            seen = mail >> ADDRESS_BITS;
            let address = mail & ((1 << ADDRESS_BITS) - 1);
            if address == TERMINATE {
                return;
            }
            let region = address as *const Region;
            let header = port.share();
            // Under PWAML a worker is a node of the wake tree: it forwards
            // the post before its share and collects its children's
            // acknowledgements after it. Other dispatches (and the proxy)
            // are flat: no children, and the acknowledgement goes to the
            // master.
            let tree = slot.filter(|_| self.dispatch == Dispatch::Pwaml).map(|s| (s, self.tree(header.size)));
            if let Some((s, tree)) = tree {
                self.post_children(tree, s, seen, header, region);
            }
            // SAFETY: the master keeps the region alive until its children
            // acknowledge, which they do only after their whole subtree
            // (this port included) has: the acknowledgement below is our
            // last access to it.
            unsafe {
                if slot.is_none() {
                    let _occ = Occupancy::enter(&self, 0);
                    Region::run(header, region, 0);
                } else {
                    Region::run(header, region, share);
                }
            }
            if let Some((s, tree)) = tree {
                self.wait_with(Some(s), &port.parker, spin, |last| {
                    tree.children(s).all(|c| self.slots[c].acked(seen, last))
                });
            }
            port.ack.swap(seen, Ordering::SeqCst);
            let waiter = match tree.and_then(|(s, t)| t.parent(s)) {
                Some(parent) if parent != 0 => self.parker(parent),
                _ => self.region_waiter(),
            };
            if waiter.unpark_if_sleeping() {
                if let Some(s) = slot {
                    crate::sched::counters::bump(&self.counters.of(s).wakes, 1);
                }
            }
        }
    }

    /// Stops and joins the persistent threads.
    pub(crate) fn shut_down(&self) {
        // No region is in flight (the pool is being dropped), so every
        // persistent thread is idle or about to be: tell each to leave.
        let number = self.next_post();
        for slot in self.slots.iter().skip(1) {
            slot.post_address(number, TERMINATE);
        }
        self.proxy.post_address(number, TERMINATE);
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for t in threads {
            let _ = t.join();
        }
    }
}
