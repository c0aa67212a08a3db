//! A persistent thread's *port*: where it receives region posts and
//! acknowledges them — one cache line holding its parker, its mailbox, the
//! region's share header and its acknowledgement.

use super::region::{BroadcastContext, Region, Share};
use crate::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use crate::sync::{Observe, Parker};

/// Where a persistent thread receives region shares: a mailbox and the parker
/// it sleeps on, on one cache line so that the master's post and the worker's
/// spin touch a single line.
///
/// Post protocol: the mailbox holds a post number (16 bits) and an address
/// (48 bits). The poster — the worker's parent in the wake tree (the master
/// for its own children), or the master for every worker under the flat
/// dispatches — `swap`s in the next post (`SeqCst`, a read-modify-write) and
/// then wakes the worker only if it announced that it sleeps
/// ([`Parker::unpark_if_sleeping`]); the worker's last check before sleeping
/// reads the mailbox with a read-modify-write. The worker never writes the
/// mailbox: it remembers the last post number it consumed. When its share
/// (and its subtree's) is done it `swap`s the post number into `ack` and
/// wakes the poster only if it announced that it sleeps; the poster's last
/// check before sleeping reads `ack` with a read-modify-write. A region thus
/// moves this one line from parent to child and back.
#[derive(Default)]
pub(crate) struct Port {
    pub(crate) parker: Parker,
    /// `post number << 48 | address` of a [`Region`] or [`TERMINATE`].
    pub(crate) mailbox: AtomicU64,
    /// The last post number whose share this port's thread completed.
    pub(crate) ack: AtomicU64,
    /// The region's [`Share`] header, written before the mailbox (whose
    /// `SeqCst` swap publishes them): `func`, `data`, `size << 1 | timed`.
    func: AtomicUsize,
    data: AtomicUsize,
    size_timed: AtomicUsize,
}

/// Mailbox address telling a persistent thread to exit.
pub(crate) const TERMINATE: u64 = 1;
pub(crate) const ADDRESS_BITS: u32 = 48;

impl Port {
    /// The post number after `seen`'s, if any: `last` is the check before sleeping.
    #[inline]
    pub(crate) fn has_mail(&self, seen: u64, last: bool) -> bool {
        let v = self.mailbox.observe(last);
        v >> ADDRESS_BITS != seen
    }

    /// Posts `region` as post number `number` and wakes the owner.
    #[inline]
    pub(crate) fn post(&self, number: u64, region: &Region) -> bool {
        self.forward(number, region.share, region as *const Region)
    }

    /// Posts the region at `region` whose header is `s` as post number
    /// `number` (a participant forwarding a post down the wake tree) and
    /// wakes the owner if it sleeps. Returns whether a wake-up was issued.
    #[inline]
    pub(crate) fn forward(&self, number: u64, s: Share, region: *const Region) -> bool {
        self.func.store(s.func as usize, Ordering::Relaxed);
        self.data.store(s.data as usize, Ordering::Relaxed);
        self.size_timed.store((s.size << 1) | usize::from(s.timed), Ordering::Relaxed);
        self.post_address(number, region as u64)
    }

    /// The header of the region just received (after an `Acquire` read of
    /// the mailbox that saw its post).
    #[inline]
    pub(crate) fn share(&self) -> Share {
        let st = self.size_timed.load(Ordering::Relaxed);
        // SAFETY: `func` holds a value stored by `post` from a function
        // pointer of exactly this type, published by the mailbox swap.
        let func = unsafe {
            std::mem::transmute::<usize, unsafe fn(*const (), BroadcastContext)>(
                self.func.load(Ordering::Relaxed),
            )
        };
        Share {
            func,
            data: self.data.load(Ordering::Relaxed) as *const (),
            size: st >> 1,
            timed: st & 1 != 0,
        }
    }

    #[inline]
    pub(crate) fn post_address(&self, number: u64, address: u64) -> bool {
        debug_assert!(address >> ADDRESS_BITS == 0, "user-space addresses fit in 48 bits");
        self.mailbox.swap((number << ADDRESS_BITS) | address, Ordering::SeqCst);
        self.parker.unpark_if_sleeping()
    }

    /// True when the share of post `number` is complete. `last`: the check
    /// before sleeping (a read-modify-write).
    #[inline]
    pub(crate) fn acked(&self, number: u64, last: bool) -> bool {
        self.ack.observe(last) == number
    }
}

/// Models of the region protocol down and up the wake tree, on real ports
/// and parkers (the same post/acknowledge/sleep steps as `worker_main`).
/// Seen to fail when weakened: acknowledging before waiting for the child
/// (`region_down_and_up_a_chain`: "A acknowledged before B ran"), and
/// acknowledging without waking the parent (`partial_region_posts_no_outsider`
/// never ends: the master sleeps through the acknowledgement).
#[cfg(all(test, loom))]
mod tests {
    use super::*;
    use crate::sync::atomic::AtomicU64 as Ran;
    use loom::sync::Arc;

    unsafe fn share_fn(_: *const (), _: BroadcastContext) {}

    /// A stand-in region address (never dereferenced by the models).
    const REGION: usize = 0x1000;

    fn share(size: usize) -> Share {
        Share { func: share_fn, data: std::ptr::null(), size, timed: false }
    }

    /// The waiting of `Registry::wait_with` without jobs: check, announce
    /// `SLEEPING`, re-check with a read-modify-write, sleep. `sleep: false`
    /// spins (yields) on the cheap check instead.
    fn wait(parker: &Parker, sleep: bool, cond: impl Fn(bool) -> bool) {
        loop {
            let t = parker.prepare();
            if cond(false) {
                return;
            }
            if sleep {
                parker.park_unless(t, || cond(true));
            } else {
                loom::thread::yield_now();
            }
        }
    }

    /// One participant's handling of its first post: wait for it, forward
    /// to `children` (in a region of three), run, wait for the children,
    /// acknowledge, wake the parent if it sleeps.
    fn participant(
        ports: &[Port; 3],
        ran: &[Ran; 3],
        sleep: bool,
        (me, parent): (usize, usize),
        children: &[usize],
    ) {
        let port = &ports[me];
        wait(&port.parker, sleep, |last| port.has_mail(0, last));
        let mail = port.mailbox.load(Ordering::Acquire);
        let number = mail >> ADDRESS_BITS;
        let header = port.share();
        assert_eq!(mail & ((1 << ADDRESS_BITS) - 1), REGION as u64);
        let children: &[usize] = if header.size == 3 { children } else { &[] };
        for &c in children {
            ports[c].forward(number, header, REGION as *const Region);
        }
        ran[me].fetch_add(1, Ordering::Relaxed);
        wait(&port.parker, sleep, |last| children.iter().all(|&c| ports[c].acked(number, last)));
        port.ack.swap(number, Ordering::SeqCst);
        ports[parent].parker.unpark_if_sleeping();
    }

    /// A region of three: the master (slot 0) posts to A (slot 1), which
    /// forwards to B (slot 2). In every interleaving each runs its share
    /// once, B before A acknowledges and both before the master sees the
    /// region complete, and the headers forwarded are the region's. The
    /// participants spin here: with the sleep step (loom's futex stand-in
    /// yields until the word changes), or with two spinners at once, one
    /// execution exceeds loom's branch limit even at 10 000 branches — loom
    /// has no fairness; the sleep step is checked by the two-thread model
    /// below and by `sync::parker`'s `conditional_wake_of_rmw_condition`.
    #[test]
    fn region_down_and_up_a_chain() {
        loom::model(|| {
            let ports: Arc<[Port; 3]> = Arc::new(Default::default());
            let ran: Arc<[Ran; 3]> = Arc::new(Default::default());
            let (p, r) = (ports.clone(), ran.clone());
            let a = loom::thread::spawn(move || participant(&p, &r, false, (1, 0), &[2]));
            let (p, r) = (ports.clone(), ran.clone());
            let b = loom::thread::spawn(move || participant(&p, &r, false, (2, 1), &[]));
            ports[1].forward(1, share(3), REGION as *const Region);
            // The master looks once at an arbitrary point, then joins A
            // instead of spinning on its acknowledgement: loom has no
            // fairness, and two spinners at once can yield to each other
            // for ever.
            let complete = |last| {
                let acked = ports[1].acked(1, last);
                if acked {
                    assert_eq!(ran[1].load(Ordering::Relaxed), 1);
                    assert_eq!(ran[2].load(Ordering::Relaxed), 1, "A acknowledged before B ran");
                }
                acked
            };
            complete(false);
            a.join().unwrap();
            assert!(complete(true));
            b.join().unwrap();
        });
    }

    /// A region of part of the pool (two of three, as `rt::broadcast_n`):
    /// A's tree has no child, so B — outside the region — is never posted
    /// and A acknowledges on its own. Both sides sleep when they find
    /// nothing: no post and no acknowledgement is slept through.
    #[test]
    fn partial_region_posts_no_outsider() {
        loom::model(|| {
            let ports: Arc<[Port; 3]> = Arc::new(Default::default());
            let ran: Arc<[Ran; 3]> = Arc::new(Default::default());
            let (p, r) = (ports.clone(), ran.clone());
            let a = loom::thread::spawn(move || participant(&p, &r, true, (1, 0), &[2]));
            ports[1].forward(1, share(2), REGION as *const Region);
            wait(&ports[0].parker, true, |last| ports[1].acked(1, last));
            assert_eq!(ran[1].load(Ordering::Relaxed), 1);
            assert_eq!(ran[2].load(Ordering::Relaxed), 0);
            assert!(!ports[2].has_mail(0, false), "an outsider was posted");
            a.join().unwrap();
        });
    }
}
