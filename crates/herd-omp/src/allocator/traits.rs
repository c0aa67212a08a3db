//! User allocators: `omp_init_allocator`'s traits, read and checked, and
//! the allocator records that handles above the predefined ones point to
//! (see the parent module for the handles and how blocks use them).

use crate::memory::{
    is_predefined, key, named_value, val, HIGH_BW_MEM_SPACE, LOW_LAT_MEM_SPACE, MANAGED_MEM_SPACE,
    NULL_ALLOCATOR,
};
use crate::memory::{ACCESSES, FALLBACKS, PARTITIONS, PINNED, SYNC_HINTS};
#[cfg(loom)]
use loom::sync::atomic::AtomicUsize;
use std::ffi::c_int;
#[cfg(not(loom))]
use std::sync::atomic::AtomicUsize;

/// `omp_alloctrait_t`.
#[repr(C)]
pub(crate) struct Trait {
    pub(super) key: c_int,
    pub(super) value: usize,
}

/// What to do when an allocation fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fallback {
    DefaultMem,
    Null,
    Abort,
    Allocator(usize),
}

/// A user allocator's traits (the hints sync_hint, access and partition are
/// validated and kept for completeness; one memory domain makes them moot).
#[derive(Debug)]
pub(super) struct Traits {
    #[allow(dead_code)]
    memspace: usize,
    pub(super) alignment: usize,
    #[allow(dead_code)]
    sync_hint: usize,
    #[allow(dead_code)]
    access: usize,
    /// `usize::MAX`: unbounded (no accounting).
    pub(super) pool_size: usize,
    pub(super) fallback: Fallback,
    /// Blocks are page-locked (`mlock`); one that cannot be fails.
    pub(super) pinned: bool,
    #[allow(dead_code)]
    partition: usize,
}

/// What an `omp_allocator_handle_t` above the predefined ones points to.
pub(super) struct Allocator {
    pub(super) traits: Traits,
    /// Live bytes charged to the pool (only used when `pool_size` is bounded).
    pub(super) used: AtomicUsize,
}

/// Reads `n` traits; `None` for an invalid key or value (libgomp: the
/// allocator is then `omp_null_allocator`).
fn parse(memspace: usize, traits: &[Trait]) -> Option<Traits> {
    if memspace > LOW_LAT_MEM_SPACE && memspace != MANAGED_MEM_SPACE {
        return None;
    }
    let mut t = Traits {
        memspace,
        alignment: 1,
        sync_hint: val::CONTENDED,
        access: val::ALL,
        pool_size: usize::MAX,
        fallback: Fallback::DefaultMem,
        pinned: false,
        partition: val::ENVIRONMENT,
    };
    let mut fb_data = NULL_ALLOCATOR;
    let mut fallback = val::DEFAULT_MEM_FB;
    for tr in traits {
        let v = tr.value;
        match tr.key {
            key::SYNC_HINT => t.sync_hint = named_value(v, SYNC_HINTS, val::CONTENDED)?,
            key::ALIGNMENT => {
                t.alignment = match v {
                    val::DEFAULT => 1,
                    v if v.is_power_of_two() => v,
                    _ => return None,
                }
            }
            key::ACCESS => t.access = named_value(v, ACCESSES, val::ALL)?,
            key::POOL_SIZE => t.pool_size = v, // omp_atv_default is usize::MAX: unbounded
            key::FALLBACK if v == val::ALLOCATOR_FB => fallback = v,
            key::FALLBACK => fallback = named_value(v, FALLBACKS, val::DEFAULT_MEM_FB)?,
            key::FB_DATA => fb_data = v,
            key::PINNED => t.pinned = named_value(v, PINNED, val::FALSE)? == val::TRUE,
            key::PARTITION => t.partition = named_value(v, PARTITIONS, val::ENVIRONMENT)?,
            _ => return None,
        }
    }
    t.fallback = match fallback {
        val::NULL_FB => Fallback::Null,
        val::ABORT_FB => Fallback::Abort,
        val::ALLOCATOR_FB => Fallback::Allocator(fb_data),
        _ => Fallback::DefaultMem,
    };
    // No high-bandwidth memory here (libgomp without memkind).
    if memspace == HIGH_BW_MEM_SPACE {
        return None;
    }
    Some(t)
}

/// The user allocator behind `handle`, `None` for a predefined one.
pub(super) fn user(handle: usize) -> Option<&'static Allocator> {
    // SAFETY: handles above the predefined ones are `Allocator`s leaked by
    // omp_init_allocator and not yet destroyed (destroying an allocator with
    // live blocks, or using it afterwards, is the program's error).
    (!is_predefined(handle)).then(|| unsafe { &*(handle as *const Allocator) })
}

/// A user allocator in `memspace` with `traits`, as `omp_init_allocator`
/// makes it: its handle, or `omp_null_allocator` for an invalid key or value
/// or memory this host lacks.
pub(super) fn make(memspace: usize, traits: &[Trait]) -> usize {
    match parse(memspace, traits) {
        Some(traits) => Box::into_raw(Box::new(Allocator { traits, used: AtomicUsize::new(0) })) as usize,
        None => NULL_ALLOCATOR,
    }
}

/// `omp_destroy_allocator`.
///
/// # Safety
/// A handle above the predefined ones was made by [`make`] and is destroyed
/// once, with no block of it still live.
pub(super) unsafe fn destroy(handle: usize) {
    if !is_predefined(handle) {
        // SAFETY: the caller's contract.
        drop(unsafe { Box::from_raw(handle as *mut Allocator) })
    }
}

/// The allocator `OMP_ALLOCATOR` describes by a memory space and traits
/// (omp.h's numbers; already checked by the parser): `None` when it cannot
/// be made here (high-bandwidth memory, which this host lacks).
pub(crate) fn from_env(memspace: usize, traits: &[(i32, usize)]) -> Option<usize> {
    let traits: Vec<Trait> = traits.iter().map(|&(key, value)| Trait { key, value }).collect();
    Some(make(memspace, &traits)).filter(|&h| h != NULL_ALLOCATOR)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::memory::DEFAULT_MEM_SPACE;

    fn tr(key: c_int, value: usize) -> Trait {
        Trait { key, value }
    }

    #[test]
    fn invalid_traits_are_refused() {
        assert!(parse(DEFAULT_MEM_SPACE, &[tr(key::ALIGNMENT, 3)]).is_none());
        assert!(parse(DEFAULT_MEM_SPACE, &[tr(key::ALIGNMENT, 0)]).is_none());
        assert!(parse(DEFAULT_MEM_SPACE, &[tr(9, 1)]).is_none());
        assert!(parse(DEFAULT_MEM_SPACE, &[tr(key::PINNED, 2)]).is_none());
        assert!(parse(DEFAULT_MEM_SPACE, &[tr(key::PINNED, val::TRUE)]).is_some_and(|t| t.pinned));
        assert!(parse(MANAGED_MEM_SPACE, &[]).is_some());
        assert!(parse(HIGH_BW_MEM_SPACE, &[]).is_none());
        assert!(parse(5, &[]).is_none());
        assert!(parse(DEFAULT_MEM_SPACE, &[tr(key::FALLBACK, val::TRUE)]).is_none());
        assert!(parse(LOW_LAT_MEM_SPACE, &[tr(key::ALIGNMENT, 64)]).is_some());
    }

    /// `OMP_ALLOCATOR`'s memory-space form makes an allocator with its
    /// traits; memory this host lacks makes none.
    #[test]
    fn from_env_makes_or_refuses() {
        let h = from_env(DEFAULT_MEM_SPACE, &[(key::ALIGNMENT, 256), (key::POOL_SIZE, 4096)]).expect("made");
        let a = user(h).expect("a user allocator");
        assert_eq!((a.traits.alignment, a.traits.pool_size), (256, 4096));
        // SAFETY: made above, no live block.
        unsafe { destroy(h) };
        assert_eq!(from_env(HIGH_BW_MEM_SPACE, &[]), None);
    }
}
