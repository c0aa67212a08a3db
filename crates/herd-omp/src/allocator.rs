//! OpenMP memory allocators (OpenMP 5.0 §2.11, §3.13): `omp_init_allocator`
//! with its traits, `omp_alloc` and its family, `GOMP_alloc`/`GOMP_free`.
//!
//! # Handles
//!
//! An `omp_allocator_handle_t` is either one of the predefined allocators
//! (`omp_default_mem_alloc` = 1 … `omp_thread_mem_alloc` = 8) or the address
//! of a leaked [`Allocator`] made by `omp_init_allocator` and freed by
//! `omp_destroy_allocator`. `omp_null_allocator` (0) means "the calling task's
//! `def-allocator-var`" where an allocation names it.
//!
//! # Blocks
//!
//! Every block is one `malloc`/`calloc` with a [`Header`] just below the
//! pointer handed out: the malloc'ed base, the block's size (what the pool is
//! charged) and the allocator that made it. So `omp_free` and `omp_realloc`
//! find a block's allocator without the caller naming it, as libgomp does.
//! Alignment above malloc's is obtained by over-allocating and rounding up.
//!
//! # Pools and fallback
//!
//! An allocator with a `pool_size` trait has one atomic counter of live bytes
//! (allocators without one have none: no shared write on their fast path). A
//! block is charged by a compare-and-swap that fails rather than exceed the
//! pool; the free uncharges it. When an allocation fails (pool exhausted or
//! malloc failed) the allocator's `fallback` decides, as in libgomp 12:
//! `default_mem_fb` retries on `omp_default_mem_alloc` (keeping the
//! alignment), `null_fb` returns NULL, `abort_fb` ends the program, and
//! `allocator_fb` retries on the allocator named by `fb_data`.
//!
//! # Memory spaces
//!
//! This is a host without high-bandwidth or pinned memory support (libgomp
//! 12 without memkind): as libgomp, `omp_init_allocator` answers
//! `omp_null_allocator` for `omp_high_bw_mem_space` and for `pinned: true`;
//! the other memory spaces, and every predefined allocator, are ordinary
//! memory. Invalid trait keys or values also give `omp_null_allocator`.
#![allow(clippy::missing_safety_doc)]

use crate::unsupported::fatal;
use crate::{task, thread};
#[cfg(loom)]
use loom::sync::atomic::AtomicUsize;
use std::ffi::{c_int, c_void};
#[cfg(not(loom))]
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;

/// `omp_null_allocator`.
pub(crate) const NULL_ALLOCATOR: usize = 0;
/// `omp_default_mem_alloc`.
pub(crate) const DEFAULT_MEM_ALLOC: usize = 1;
/// `omp_thread_mem_alloc`, the last predefined allocator.
const LAST_PREDEFINED: usize = 8;

/// Memory spaces (`omp_memspace_handle_t`).
#[cfg(test)]
const DEFAULT_MEM_SPACE: usize = 0;
const HIGH_BW_MEM_SPACE: usize = 3;
const LOW_LAT_MEM_SPACE: usize = 4;

/// Trait keys (`omp_alloctrait_key_t`).
mod key {
    pub const SYNC_HINT: i32 = 1;
    pub const ALIGNMENT: i32 = 2;
    pub const ACCESS: i32 = 3;
    pub const POOL_SIZE: i32 = 4;
    pub const FALLBACK: i32 = 5;
    pub const FB_DATA: i32 = 6;
    pub const PINNED: i32 = 7;
    pub const PARTITION: i32 = 8;
}

/// Trait values (`omp_alloctrait_value_t`).
mod val {
    pub const DEFAULT: usize = usize::MAX; // omp_atv_default = -1
    pub const FALSE: usize = 0;
    pub const TRUE: usize = 1;
    pub const CONTENDED: usize = 3;
    pub const UNCONTENDED: usize = 4;
    pub const SERIALIZED: usize = 5;
    pub const PRIVATE: usize = 6;
    pub const ALL: usize = 7;
    pub const THREAD: usize = 8;
    pub const PTEAM: usize = 9;
    pub const CGROUP: usize = 10;
    pub const DEFAULT_MEM_FB: usize = 11;
    pub const NULL_FB: usize = 12;
    pub const ABORT_FB: usize = 13;
    pub const ALLOCATOR_FB: usize = 14;
    pub const ENVIRONMENT: usize = 15;
    pub const NEAREST: usize = 16;
    pub const BLOCKED: usize = 17;
    pub const INTERLEAVED: usize = 18;
}

/// `omp_alloctrait_t`.
#[repr(C)]
pub(crate) struct Trait {
    key: c_int,
    value: usize,
}

/// What to do when an allocation fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fallback {
    DefaultMem,
    Null,
    Abort,
    Allocator(usize),
}

/// A user allocator's traits (the hints sync_hint, access and partition are
/// validated and kept for completeness; one memory domain makes them moot).
#[derive(Debug)]
struct Traits {
    #[allow(dead_code)]
    memspace: usize,
    alignment: usize,
    #[allow(dead_code)]
    sync_hint: usize,
    #[allow(dead_code)]
    access: usize,
    /// `usize::MAX`: unbounded (no accounting).
    pool_size: usize,
    fallback: Fallback,
    #[allow(dead_code)]
    partition: usize,
}

/// What an `omp_allocator_handle_t` above the predefined ones points to.
struct Allocator {
    traits: Traits,
    /// Live bytes charged to the pool (only used when `pool_size` is bounded).
    used: AtomicUsize,
}

/// Reads `n` traits; `None` for an invalid key or value (libgomp: the
/// allocator is then `omp_null_allocator`).
fn parse(memspace: usize, traits: &[Trait]) -> Option<Traits> {
    if memspace > LOW_LAT_MEM_SPACE {
        return None;
    }
    let mut t = Traits {
        memspace,
        alignment: 1,
        sync_hint: val::CONTENDED,
        access: val::ALL,
        pool_size: usize::MAX,
        fallback: Fallback::DefaultMem,
        partition: val::ENVIRONMENT,
    };
    let mut fb_data = NULL_ALLOCATOR;
    let mut fallback = val::DEFAULT_MEM_FB;
    let mut pinned = false;
    for tr in traits {
        let v = tr.value;
        match tr.key {
            key::SYNC_HINT => {
                t.sync_hint = match v {
                    val::DEFAULT => val::CONTENDED,
                    val::CONTENDED | val::UNCONTENDED | val::SERIALIZED | val::PRIVATE => v,
                    _ => return None,
                }
            }
            key::ALIGNMENT => {
                t.alignment = match v {
                    val::DEFAULT => 1,
                    v if v.is_power_of_two() => v,
                    _ => return None,
                }
            }
            key::ACCESS => {
                t.access = match v {
                    val::DEFAULT => val::ALL,
                    val::ALL | val::CGROUP | val::PTEAM | val::THREAD => v,
                    _ => return None,
                }
            }
            key::POOL_SIZE => t.pool_size = v, // omp_atv_default is usize::MAX: unbounded
            key::FALLBACK => {
                fallback = match v {
                    val::DEFAULT => val::DEFAULT_MEM_FB,
                    val::DEFAULT_MEM_FB | val::NULL_FB | val::ABORT_FB | val::ALLOCATOR_FB => v,
                    _ => return None,
                }
            }
            key::FB_DATA => fb_data = v,
            key::PINNED => {
                pinned = match v {
                    val::DEFAULT | val::FALSE => false,
                    val::TRUE => true,
                    _ => return None,
                }
            }
            key::PARTITION => {
                t.partition = match v {
                    val::DEFAULT => val::ENVIRONMENT,
                    val::ENVIRONMENT | val::NEAREST | val::BLOCKED | val::INTERLEAVED => v,
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
    t.fallback = match fallback {
        val::NULL_FB => Fallback::Null,
        val::ABORT_FB => Fallback::Abort,
        val::ALLOCATOR_FB => Fallback::Allocator(fb_data),
        _ => Fallback::DefaultMem,
    };
    // No pinned or high-bandwidth memory here (libgomp 12 without memkind).
    if pinned || memspace == HIGH_BW_MEM_SPACE {
        return None;
    }
    Some(t)
}

/// The user allocator behind `handle`, `None` for a predefined one.
fn user(handle: usize) -> Option<&'static Allocator> {
    // SAFETY: handles above the predefined ones are `Allocator`s leaked by
    // omp_init_allocator and not yet destroyed (destroying an allocator with
    // live blocks, or using it afterwards, is the program's error).
    (handle > LAST_PREDEFINED).then(|| unsafe { &*(handle as *const Allocator) })
}

/// Stored just below every block handed out.
#[repr(C, align(16))]
struct Header {
    /// What malloc returned.
    base: *mut u8,
    /// Bytes malloc'ed (charged to the pool).
    block: usize,
    /// The allocator that made the block.
    allocator: usize,
}

const HEADER: usize = std::mem::size_of::<Header>();
/// malloc's alignment on the supported targets.
const MALLOC_ALIGN: usize = 16;

/// # Safety
/// `ptr` was handed out by [`allocate`] and not freed.
unsafe fn header<'a>(ptr: *mut c_void) -> &'a mut Header {
    // SAFETY: the caller's contract; the header sits right below the block.
    unsafe { &mut *(ptr as *mut Header).sub(1) }
}

/// Charges `block` bytes to a pool of `limit` bytes whose live bytes are
/// `used`; false (nothing charged) if that would exceed the limit. Relaxed:
/// the counter orders nothing but itself (the memory comes from malloc).
fn charge(used: &AtomicUsize, block: usize, limit: usize) -> bool {
    used.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| u.checked_add(block).filter(|&n| n <= limit))
        .is_ok()
}

/// Gives back what [`charge`] took.
fn uncharge(used: &AtomicUsize, block: usize) {
    used.fetch_sub(block, Ordering::Relaxed);
}

/// One attempt on one allocator (no fallback). `None` on failure.
fn attempt(align: usize, size: usize, handle: usize, zero: bool) -> Option<*mut c_void> {
    let pad = align.saturating_sub(MALLOC_ALIGN);
    let block = size.checked_add(HEADER + pad)?;
    let pool = user(handle).filter(|a| a.traits.pool_size != usize::MAX);
    if let Some(a) = pool {
        if !charge(&a.used, block, a.traits.pool_size) {
            return None;
        }
    }
    // SAFETY: plain C allocation of `block` bytes.
    let base = unsafe {
        if zero {
            libc::calloc(1, block)
        } else {
            libc::malloc(block)
        }
    } as *mut u8;
    if base.is_null() {
        if let Some(a) = pool {
            uncharge(&a.used, block);
        }
        return None;
    }
    let user_addr = (base as usize + HEADER + pad) & !(align.max(MALLOC_ALIGN) - 1);
    let ptr = user_addr as *mut c_void;
    // SAFETY: `user_addr - HEADER >= base` and `user_addr + size <= base + block`
    // (rounding down from base+HEADER+pad moves back at most pad bytes, and
    // base is MALLOC_ALIGN-aligned so it never goes below base+HEADER).
    unsafe { (ptr as *mut Header).sub(1).write(Header { base, block, allocator: handle }) };
    Some(ptr)
}

/// The allocator an allocation naming `handle` uses.
fn resolve(handle: usize) -> usize {
    if handle == NULL_ALLOCATOR {
        match default_allocator() {
            NULL_ALLOCATOR => DEFAULT_MEM_ALLOC,
            a => a,
        }
    } else {
        handle
    }
}

/// Allocates `size` bytes aligned to `align` from `handle`, applying the
/// allocators' fallbacks. NULL for size 0 (as libgomp), a non-power-of-two
/// alignment, or a failure whose fallback is `null_fb`.
pub(crate) fn allocate(align: usize, size: usize, handle: usize, zero: bool) -> *mut c_void {
    if size == 0 {
        return std::ptr::null_mut();
    }
    if align != 0 && !align.is_power_of_two() {
        eprintln!(
            "herd-omp: warning: omp allocation with alignment {align}, not a power of two: returning NULL"
        );
        return std::ptr::null_mut();
    }
    let mut align = align.max(1);
    let mut handle = resolve(handle);
    // allocator_fb chains end within this many hops unless they loop.
    for _ in 0..64 {
        let a = user(handle);
        if let Some(a) = a {
            align = align.max(a.traits.alignment);
        }
        if let Some(p) = attempt(align, size, handle, zero) {
            return p;
        }
        match a.map(|a| a.traits.fallback) {
            // A predefined allocator is plain malloc: retrying cannot help.
            None | Some(Fallback::Null) => return std::ptr::null_mut(),
            Some(Fallback::DefaultMem) => handle = DEFAULT_MEM_ALLOC,
            Some(Fallback::Abort) => {
                fatal(&format!("out of memory allocating {size} bytes (allocator fallback abort_fb)"))
            }
            Some(Fallback::Allocator(fb)) => handle = resolve(fb),
        }
    }
    fatal("omp allocation: the allocators' allocator_fb fallbacks form a cycle")
}

/// Frees a block from [`allocate`] (NULL: nothing), uncharging its pool.
///
/// # Safety
/// `ptr` is NULL or a live block from [`allocate`].
pub(crate) unsafe fn free(ptr: *mut c_void) {
    if ptr.is_null() {
        return;
    }
    // SAFETY: the caller's contract.
    let h = unsafe { header(ptr) };
    if let Some(a) = user(h.allocator).filter(|a| a.traits.pool_size != usize::MAX) {
        uncharge(&a.used, h.block);
    }
    // SAFETY: `base` came from malloc/calloc and is freed once.
    unsafe { libc::free(h.base as *mut c_void) }
}

// ------------------------------------------------------------ the omp_* API --

#[no_mangle]
pub extern "C" fn omp_alloc(size: usize, allocator: usize) -> *mut c_void {
    allocate(1, size, allocator, false)
}

#[no_mangle]
pub extern "C" fn omp_aligned_alloc(align: usize, size: usize, allocator: usize) -> *mut c_void {
    allocate(align, size, allocator, false)
}

#[no_mangle]
pub extern "C" fn omp_calloc(n: usize, size: usize, allocator: usize) -> *mut c_void {
    omp_aligned_calloc(1, n, size, allocator)
}

#[no_mangle]
pub extern "C" fn omp_aligned_calloc(align: usize, n: usize, size: usize, allocator: usize) -> *mut c_void {
    match n.checked_mul(size) {
        Some(total) => allocate(align, total, allocator, true),
        None => allocate(align, usize::MAX, allocator, true), // fails, then falls back as an allocation would
    }
}

/// `omp_realloc(ptr, size, allocator, free_allocator)`: a new block from
/// `allocator` (the block's own when `omp_null_allocator`) holding the old
/// contents; the old block is freed only on success.
#[no_mangle]
pub unsafe extern "C" fn omp_realloc(
    ptr: *mut c_void,
    size: usize,
    allocator: usize,
    free_allocator: usize,
) -> *mut c_void {
    if ptr.is_null() {
        return allocate(1, size, allocator, false);
    }
    if size == 0 {
        // SAFETY: the caller's block.
        unsafe { omp_free(ptr, free_allocator) };
        return std::ptr::null_mut();
    }
    // SAFETY: the caller's live block.
    let h = unsafe { header(ptr) };
    let old_size = h.block - (ptr as usize - h.base as usize);
    let allocator = if allocator == NULL_ALLOCATOR { h.allocator } else { allocator };
    let new = allocate(1, size, allocator, false);
    if !new.is_null() {
        // SAFETY: both blocks hold at least the bytes copied; distinct blocks.
        unsafe {
            std::ptr::copy_nonoverlapping(ptr as *const u8, new as *mut u8, old_size.min(size));
            free(ptr);
        }
    }
    new
}

#[no_mangle]
pub unsafe extern "C" fn omp_free(ptr: *mut c_void, _allocator: usize) {
    // SAFETY: the caller's block (the header names its allocator).
    unsafe { free(ptr) }
}

#[no_mangle]
pub unsafe extern "C" fn omp_init_allocator(memspace: usize, ntraits: c_int, traits: *const Trait) -> usize {
    let traits = match usize::try_from(ntraits) {
        Ok(n) if n > 0 && !traits.is_null() => {
            // SAFETY: the caller passes `ntraits` traits.
            unsafe { std::slice::from_raw_parts(traits, n) }
        }
        _ => &[],
    };
    match parse(memspace, traits) {
        Some(traits) => Box::into_raw(Box::new(Allocator { traits, used: AtomicUsize::new(0) })) as usize,
        None => NULL_ALLOCATOR,
    }
}

#[no_mangle]
pub unsafe extern "C" fn omp_destroy_allocator(allocator: usize) {
    if allocator > LAST_PREDEFINED {
        // SAFETY: made by omp_init_allocator and destroyed once.
        drop(unsafe { Box::from_raw(allocator as *mut Allocator) })
    }
}

/// The calling task's `def-allocator-var`.
fn default_allocator() -> usize {
    thread::with(|ts| task::current(ts).icv.get().def_allocator)
}

#[no_mangle]
pub extern "C" fn omp_get_default_allocator() -> usize {
    default_allocator()
}

#[no_mangle]
pub extern "C" fn omp_set_default_allocator(allocator: usize) {
    thread::with(|ts| {
        let t = task::current(ts);
        let mut icv = t.icv.get();
        icv.def_allocator = allocator;
        t.icv.set(icv);
    })
}

// ------------------------------------------------------ the GOMP_* entries --

/// `GOMP_alloc` (the `allocate` directive): as `omp_aligned_alloc`, but a
/// failure of a non-empty allocation ends the program, as in libgomp.
#[no_mangle]
pub extern "C" fn GOMP_alloc(align: usize, size: usize, allocator: usize) -> *mut c_void {
    let p = allocate(align, size, allocator, false);
    if p.is_null() && size != 0 {
        fatal(&format!("out of memory allocating {size} bytes (allocate directive)"));
    }
    p
}

#[no_mangle]
pub unsafe extern "C" fn GOMP_free(ptr: *mut c_void, _allocator: usize) {
    // SAFETY: the caller's block from GOMP_alloc.
    unsafe { free(ptr) }
}

/// Blocks gfortran's `allocators` directive made (gcc 14): `GOMP_add_alloc`
/// records one, `GOMP_is_alloc` answers whether a pointer is one and forgets
/// it (the program then frees it with `GOMP_free` or reallocates it).
fn fortran_blocks() -> std::sync::MutexGuard<'static, std::collections::BTreeSet<usize>> {
    static BLOCKS: std::sync::Mutex<std::collections::BTreeSet<usize>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    BLOCKS.lock().unwrap_or_else(|e| e.into_inner())
}

#[no_mangle]
pub extern "C" fn GOMP_add_alloc(ptr: *mut c_void) {
    if !ptr.is_null() {
        fortran_blocks().insert(ptr as usize);
    }
}

#[no_mangle]
pub extern "C" fn GOMP_is_alloc(ptr: *mut c_void) -> bool {
    fortran_blocks().remove(&(ptr as usize))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn tr(key: c_int, value: usize) -> Trait {
        Trait { key, value }
    }

    #[test]
    fn invalid_traits_are_refused() {
        assert!(parse(DEFAULT_MEM_SPACE, &[tr(key::ALIGNMENT, 3)]).is_none());
        assert!(parse(DEFAULT_MEM_SPACE, &[tr(key::ALIGNMENT, 0)]).is_none());
        assert!(parse(DEFAULT_MEM_SPACE, &[tr(9, 1)]).is_none());
        assert!(parse(DEFAULT_MEM_SPACE, &[tr(key::PINNED, val::TRUE)]).is_none());
        assert!(parse(HIGH_BW_MEM_SPACE, &[]).is_none());
        assert!(parse(5, &[]).is_none());
        assert!(parse(DEFAULT_MEM_SPACE, &[tr(key::FALLBACK, val::TRUE)]).is_none());
        assert!(parse(LOW_LAT_MEM_SPACE, &[tr(key::ALIGNMENT, 64)]).is_some());
    }

    #[test]
    fn alignment_and_pool_are_honoured() {
        let traits = [tr(key::ALIGNMENT, 4096), tr(key::POOL_SIZE, 10_000), tr(key::FALLBACK, val::NULL_FB)];
        // SAFETY: valid traits.
        let a = unsafe { omp_init_allocator(DEFAULT_MEM_SPACE, 3, traits.as_ptr()) };
        assert_ne!(a, NULL_ALLOCATOR);
        let p = allocate(1, 1000, a, false);
        assert!(!p.is_null() && (p as usize).is_multiple_of(4096));
        assert!(allocate(1, 8000, a, false).is_null(), "the pool is bounded");
        // SAFETY: live block.
        unsafe { free(p) };
        let q = allocate(1, 4000, a, true);
        assert!(!q.is_null());
        // SAFETY: `q` holds 4000 zeroed bytes.
        assert!(unsafe { std::slice::from_raw_parts(q as *const u8, 4000) }.iter().all(|&b| b == 0));
        // SAFETY: live block, then the allocator has none.
        unsafe {
            free(q);
            omp_destroy_allocator(a);
        }
    }
}

/// loom model of the pool accounting (`make test-loom`).
#[cfg(all(test, loom))]
mod loom_models {
    use super::{charge, uncharge, AtomicUsize};
    use loom::sync::Arc;
    use std::sync::atomic::Ordering;

    /// Two threads each take 60 bytes of a 100-byte pool twice, giving them
    /// back in between: never do both hold a block at once, and the pool
    /// ends empty. (With `charge` weakened to a load, a check and a store,
    /// loom finds a lost update: the pool does not end empty.)
    #[test]
    fn pool_never_exceeds_its_size() {
        loom::model(|| {
            let used = Arc::new(AtomicUsize::new(0));
            let holders = Arc::new(AtomicUsize::new(0));
            let worker = |used: Arc<AtomicUsize>, holders: Arc<AtomicUsize>| {
                move || {
                    for _ in 0..2 {
                        if charge(&used, 60, 100) {
                            assert_eq!(
                                holders.fetch_add(1, Ordering::SeqCst),
                                0,
                                "two blocks in a 100-byte pool"
                            );
                            holders.fetch_sub(1, Ordering::SeqCst);
                            uncharge(&used, 60);
                        }
                    }
                }
            };
            let t = loom::thread::spawn(worker(used.clone(), holders.clone()));
            worker(used.clone(), holders.clone())();
            t.join().unwrap();
            assert_eq!(used.load(Ordering::Relaxed), 0);
        });
    }
}
