//! A persistent thread's *port*: where it receives region posts and
//! acknowledges them — one cache line holding its parker, its mailbox, the
//! region's share header and its acknowledgement.

use super::region::{BroadcastContext, Region, Share};
use crate::sync::{Observe, Parker};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Where a persistent thread receives region shares: a mailbox and the parker
/// it sleeps on, on one cache line so that the master's post and the worker's
/// spin touch a single line.
///
/// Post protocol: the mailbox holds a post number (16 bits) and an address
/// (48 bits). The master `swap`s in the next post (`SeqCst`, a
/// read-modify-write) and then wakes the worker only if it announced that it
/// sleeps ([`Parker::unpark_if_sleeping`]); the worker's last check before
/// sleeping reads the mailbox with a read-modify-write. The worker never writes
/// the mailbox: it remembers the last post number it consumed. When its share
/// is done it `swap`s the post number into `ack` and wakes the master only if
/// the master announced that it sleeps; the master's last check before sleeping
/// reads `ack` with a read-modify-write. A region thus moves this one line from
/// master to worker and back: about one cache-line round trip.
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
