//! The asymmetric fence of the doacross post/sleep handshake.
//!
//! A post must not lose a waiter that is going to sleep: the poster writes
//! its posted word and then reads the slot's waiter registration, the
//! waiter registers and then re-reads the posted word, and one of the two
//! must see the other (a store→load order on each side). Paid by the poster
//! as a `SeqCst` read-modify-write, that order costs every post a locked
//! instruction, which stalls the poster until it owns the posted line —
//! the line the waiter is spinning on, so each post waits out a cross-core
//! transfer (the wavefront of `bench/omp_doacross.c` spent 2.6 of its
//! 10.4 ms there at 2 threads). Waiters sleep rarely and posts are on every
//! iteration, so the cost is moved to the sleeper: the poster's side is a
//! compiler fence ([`light`]), and a waiter that registered calls
//! [`heavy`] before its last check — Linux's
//! `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, which runs a full memory
//! barrier on every CPU that is running a thread of the process at that
//! moment (threads not running have a context switch, itself a full barrier,
//! between their earlier and later accesses). So the heavy fence falls
//! somewhere in the poster's program: before the poster's store (then its
//! later load of the registration, made before the heavy fence, sees it) or
//! after it (then the store is visible to the waiter's re-check after the
//! heavy fence) — the pairing the membarrier(2) manual documents.
//!
//! [`available`] registers the process once (`MEMBARRIER_CMD_REGISTER_
//! PRIVATE_EXPEDITED`); where the kernel or a seccomp filter refuses,
//! the post keeps the read-modify-write (`Doacross` asks once per loop).
//!
//! Under loom (which has no asymmetric fence) the pairing is modelled by
//! what membarrier(2) guarantees: a `SeqCst` fence in the waiter (the
//! system call) and one in the poster between its store and its load (the
//! barrier the call runs on the poster's CPU), the latter present only
//! because the waiter calls [`heavy`]. `HERD_OMP_WEAKEN=doacross-no-heavy-fence`
//! removes the waiter's call and with it both fences, and the doacross model
//! then loses a wake-up.

/// The poster's side: orders the compiler only (the CPU's order comes from
/// the waiter's [`heavy`]).
#[cfg(not(loom))]
#[inline(always)]
pub(crate) fn light() {
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
}

/// Under loom: the fence the waiter's [`heavy`] places in the poster's
/// program (see the module doc).
#[cfg(loom)]
pub(crate) fn light() {
    heavy();
}

#[cfg(not(loom))]
mod sys {
    use std::sync::atomic::{AtomicU8, Ordering};

    const REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;
    pub(super) const PRIVATE_EXPEDITED: libc::c_int = 1 << 3;

    /// 0: not asked yet; 1: registered; 2: refused.
    static STATE: AtomicU8 = AtomicU8::new(0);

    pub(super) fn membarrier(cmd: libc::c_int) -> libc::c_long {
        // SAFETY: membarrier(2) takes a command, flags and a CPU id and
        // touches no memory of the caller.
        unsafe { libc::syscall(libc::SYS_membarrier, cmd, 0 as libc::c_uint, 0 as libc::c_int) }
    }

    pub(super) fn available() -> bool {
        match STATE.load(Ordering::Acquire) {
            1 => true,
            2 => false,
            _ => {
                // Registering twice is harmless (threads racing here agree).
                let ok = membarrier(REGISTER_PRIVATE_EXPEDITED) == 0;
                STATE.store(if ok { 1 } else { 2 }, Ordering::Release);
                ok
            }
        }
    }
}

/// Whether [`heavy`] is available (registers the process on the first call).
#[cfg(not(loom))]
pub(crate) fn available() -> bool {
    sys::available()
}

/// The waiter's side: a full barrier on every running thread of the process.
/// Only after [`available`] returned true.
#[cfg(not(loom))]
pub(crate) fn heavy() {
    let r = sys::membarrier(sys::PRIVATE_EXPEDITED);
    // After a successful registration the command cannot fail (membarrier(2):
    // EPERM only for an unregistered process); a failure would mean lost
    // wake-ups, so it stops the program rather than risk a hang.
    assert!(r == 0, "herd-omp: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed after registration");
}

/// Under loom: the waiter's full barrier (see the module doc).
#[cfg(loom)]
pub(crate) fn heavy() {
    if !crate::wait::weakened("doacross-no-heavy-fence") {
        loom::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    }
}

/// Under loom the models choose the post's variant themselves.
#[cfg(loom)]
pub(crate) fn available() -> bool {
    true
}

#[cfg(all(test, not(loom)))]
mod tests {
    /// The heavy fence works on this machine once registered (or the
    /// process is refused, and the posts keep their read-modify-write).
    #[test]
    fn heavy_after_registration() {
        if super::available() {
            super::heavy();
            assert!(super::available(), "the registration is remembered");
        }
    }
}
