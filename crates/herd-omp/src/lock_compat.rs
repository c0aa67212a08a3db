//! The OpenMP 2.5 lock entry points, symbol version `OMP_1.0`: what a
//! program linked against libgomp before gcc 4.4 calls (libgomp keeps them
//! beside the `OMP_3.0` defaults, so such a program still loads).
//!
//! A 2.5 simple lock is the same 32-bit word as a 3.0 one, so those entry
//! points are the 3.0 ones under the old version. A 2.5 nestable lock is
//! 8 bytes — the owning *thread*'s id and the nesting count — where a 3.0
//! one (`sync::NestLock`) is 16 bytes owned by a *task*; it gets its own
//! implementation here: the owner word is the lock (0 free), taken by a
//! compare-exchange and waited on with a futex (`atomic-wait`), as
//! libgomp's `omp_nest_lock_25_t`. In Fortran both kinds fit their integer
//! (4 and 8 bytes), so the Fortran forms act on the variable itself.
//!
//! The old names are bound to `OMP_1.0` by `.symver` (the linker's version
//! script gives the same names their `OMP_3.0` default).
#![allow(clippy::missing_safety_doc)]

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU32, Ordering};

/// libgomp's `omp_nest_lock_25_t`.
#[repr(C)]
struct NestLock25 {
    owner: AtomicU32,
    count: AtomicU32,
}

thread_local! {
    static TID: Cell<u32> = const { Cell::new(0) };
}

/// The calling thread's id (never 0), cached.
fn tid() -> u32 {
    TID.with(|t| {
        if t.get() == 0 {
            // SAFETY: gettid has no preconditions.
            t.set(unsafe { libc::gettid() } as u32);
        }
        t.get()
    })
}

impl NestLock25 {
    /// # Safety
    /// `p` is an 8-byte, 4-aligned lock the program owns.
    unsafe fn at<'a>(p: *mut c_void) -> &'a NestLock25 {
        // SAFETY: the caller's contract; two u32 words.
        unsafe { &*(p as *const NestLock25) }
    }

    fn init(&self) {
        self.owner.store(0, Ordering::Relaxed);
        self.count.store(0, Ordering::Relaxed);
    }

    /// Takes the lock (or nests once more): the new count, or 0 if another
    /// thread holds it and `wait` is false.
    fn take(&self, wait: bool) -> c_int {
        let me = tid();
        loop {
            match self.owner.compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => {
                    self.count.store(1, Ordering::Relaxed);
                    return 1;
                }
                // Only the owner writes the count while it owns the lock.
                Err(o) if o == me => return (self.count.fetch_add(1, Ordering::Relaxed) + 1) as c_int,
                Err(_) if !wait => return 0,
                Err(o) => atomic_wait::wait(&self.owner, o),
            }
        }
    }

    fn unset(&self) {
        if self.count.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.owner.store(0, Ordering::Release);
            atomic_wait::wake_one(&self.owner);
        }
    }
}

/// Defines `$name` (a local name) and binds `$export@OMP_1.0` to it.
///
/// The body first passes its argument through `black_box`, so that it can
/// never be identical to the `OMP_3.0` entry point it delegates to: rustc
/// merges identical functions into aliases, and an alias of `omp_init_lock`
/// bound to `omp_init_lock@OMP_1.0` takes the default `omp_init_lock@@OMP_3.0`
/// out of the library (seen: the simple locks lost their 3.0 versions).
/// `tests/abi/check-versions.sh` checks both versions of every name.
macro_rules! v1 {
    ($($name:ident => $export:literal ($l:ident: $ty:ty) $(-> $ret:ty)? $body:block)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name($l: $ty) $(-> $ret)? {
            let $l = std::hint::black_box($l);
            $body
        }
        std::arch::global_asm!(concat!(".symver ", stringify!($name), ", ", $export, "@OMP_1.0"));
    )*};
}

use crate::api::{omp_destroy_lock, omp_init_lock, omp_set_lock, omp_test_lock, omp_unset_lock};

// SAFETY (every body): the caller's lock, by OpenMP's contract.
v1! {
    herd_omp_init_lock_25 => "omp_init_lock" (l: *mut c_void) { unsafe { omp_init_lock(l) } }
    herd_omp_destroy_lock_25 => "omp_destroy_lock" (l: *mut c_void) { unsafe { omp_destroy_lock(l) } }
    herd_omp_set_lock_25 => "omp_set_lock" (l: *mut c_void) { unsafe { omp_set_lock(l) } }
    herd_omp_unset_lock_25 => "omp_unset_lock" (l: *mut c_void) { unsafe { omp_unset_lock(l) } }
    herd_omp_test_lock_25 => "omp_test_lock" (l: *mut c_void) -> c_int { unsafe { omp_test_lock(l) } }
    herd_omp_init_lock_25_f => "omp_init_lock_" (l: *mut c_void) { unsafe { omp_init_lock(l) } }
    herd_omp_destroy_lock_25_f => "omp_destroy_lock_" (l: *mut c_void) { unsafe { omp_destroy_lock(l) } }
    herd_omp_set_lock_25_f => "omp_set_lock_" (l: *mut c_void) { unsafe { omp_set_lock(l) } }
    herd_omp_unset_lock_25_f => "omp_unset_lock_" (l: *mut c_void) { unsafe { omp_unset_lock(l) } }
    herd_omp_test_lock_25_f => "omp_test_lock_" (l: *mut c_void) -> c_int { unsafe { omp_test_lock(l) } }
    herd_omp_init_nest_lock_25 => "omp_init_nest_lock" (l: *mut c_void) { unsafe { NestLock25::at(l) }.init() }
    herd_omp_destroy_nest_lock_25 => "omp_destroy_nest_lock" (l: *mut c_void) { let _ = l; }
    herd_omp_set_nest_lock_25 => "omp_set_nest_lock" (l: *mut c_void) { unsafe { NestLock25::at(l) }.take(true); }
    herd_omp_unset_nest_lock_25 => "omp_unset_nest_lock" (l: *mut c_void) { unsafe { NestLock25::at(l) }.unset() }
    herd_omp_test_nest_lock_25 => "omp_test_nest_lock" (l: *mut c_void) -> c_int { unsafe { NestLock25::at(l) }.take(false) }
    herd_omp_init_nest_lock_25_f => "omp_init_nest_lock_" (l: *mut c_void) { unsafe { NestLock25::at(l) }.init() }
    herd_omp_destroy_nest_lock_25_f => "omp_destroy_nest_lock_" (l: *mut c_void) { let _ = l; }
    herd_omp_set_nest_lock_25_f => "omp_set_nest_lock_" (l: *mut c_void) { unsafe { NestLock25::at(l) }.take(true); }
    herd_omp_unset_nest_lock_25_f => "omp_unset_nest_lock_" (l: *mut c_void) { unsafe { NestLock25::at(l) }.unset() }
    herd_omp_test_nest_lock_25_f => "omp_test_nest_lock_" (l: *mut c_void) -> c_int { unsafe { NestLock25::at(l) }.take(false) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_nestable_25_lock_nests_for_its_thread_and_excludes_others() {
        let mut raw = [0u32; 2];
        let p = raw.as_mut_ptr() as *mut c_void;
        // SAFETY: an 8-byte lock on this stack, used by this thread only.
        unsafe {
            herd_omp_init_nest_lock_25(p);
            assert_eq!(herd_omp_test_nest_lock_25(p), 1);
            herd_omp_set_nest_lock_25(p);
            assert_eq!(herd_omp_test_nest_lock_25(p), 3);
            for _ in 0..3 {
                herd_omp_unset_nest_lock_25(p);
            }
        }
        assert_eq!(raw, [0, 0], "free again: owner 0, count 0");

        // Mutual exclusion under contention: 4 threads, non-atomic
        // read-modify-writes of a shared counter inside the lock.
        struct Shared(NestLock25, std::cell::UnsafeCell<u64>);
        // SAFETY: the counter is touched only under the lock.
        unsafe impl Sync for Shared {}
        let s = Arc::new(Shared(NestLock25 { owner: AtomicU32::new(0), count: AtomicU32::new(0) }, 0.into()));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let s = s.clone();
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        s.0.take(true);
                        s.0.take(true);
                        // SAFETY: under the lock.
                        unsafe { *s.1.get() += 1 };
                        s.0.unset();
                        s.0.unset();
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        // SAFETY: every thread has finished.
        assert_eq!(unsafe { *s.1.get() }, 80_000);
    }
}
