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
//! This is a host without high-bandwidth memory (libgomp without memkind):
//! as libgomp, `omp_init_allocator` answers `omp_null_allocator` for
//! `omp_high_bw_mem_space`. The other memory spaces, and every predefined
//! allocator, are ordinary memory, except pinned memory: an allocator with
//! `pinned: true`, or gcc 14's `ompx_gnu_pinned_mem_alloc` (200), maps each
//! block as whole pages of its own and page-locks them (`mlock`, so the
//! process's `RLIMIT_MEMLOCK` bounds them, as in libgomp); a block that
//! cannot be locked is a failed allocation (the allocator's fallback; NULL
//! for `ompx_gnu_pinned_mem_alloc`), and freeing unmaps it. gcc 16's
//! `ompx_gnu_managed_mem_alloc` (201) and `ompx_gnu_managed_mem_space` are
//! memory shared with offload devices: with none, ordinary memory. Invalid
//! trait keys or values give `omp_null_allocator`.
#![allow(clippy::missing_safety_doc)]

use crate::unsupported::fatal;
use crate::{task, thread};
#[cfg(loom)]
use loom::sync::atomic::AtomicUsize;
use std::ffi::{c_int, c_void};
#[cfg(not(loom))]
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;

pub(crate) mod traits;

#[cfg(all(test, not(loom)))]
use crate::memory::{key, val, DEFAULT_MEM_SPACE};
use crate::memory::{DEFAULT_MEM_ALLOC, NULL_ALLOCATOR, PINNED_MEM_ALLOC};
use herd::limits::page_size;
use traits::{destroy, make, user, Allocator, Fallback, Trait};

/// Stored just below every block handed out.
#[repr(C, align(16))]
struct Header {
    /// What malloc returned.
    base: *mut u8,
    /// Bytes malloc'ed (charged to the pool).
    block: usize,
    /// The allocator that made the block.
    allocator: usize,
    /// Bytes of the locked mapping at `base` (a large pinned block),
    /// [`SHARED_PAGE`] (a small one), or 0 (`base` came from malloc).
    mapped: usize,
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

/// Bytes a block of `size` bytes aligned to `align` takes (what its pool
/// is charged); `None` on overflow.
fn block_size(align: usize, size: usize) -> Option<usize> {
    size.checked_add(HEADER + align.saturating_sub(MALLOC_ALIGN))
}

/// One attempt on one allocator (no fallback). `None` on failure.
fn attempt(align: usize, size: usize, handle: usize, zero: bool) -> Option<*mut c_void> {
    let block = block_size(align, size)?;
    let pool = bounded(handle);
    if let Some(a) = pool {
        if !charge(&a.used, block, a.traits.pool_size) {
            return None;
        }
    }
    let p = place(align, size, block, handle, zero);
    if p.is_none() {
        if let Some(a) = pool {
            uncharge(&a.used, block);
        }
    }
    p
}

/// An allocator with a bounded pool.
fn bounded(handle: usize) -> Option<&'static Allocator> {
    user(handle).filter(|a| a.traits.pool_size != usize::MAX)
}

/// Takes `block` bytes (see [`block_size`]) — from malloc, or a locked
/// mapping for a pinned allocator — and writes the header of a block of
/// `size` bytes aligned to `align` made by `handle`; charges nothing.
fn place(align: usize, size: usize, block: usize, handle: usize, zero: bool) -> Option<*mut c_void> {
    let pad = align.saturating_sub(MALLOC_ALIGN);
    let (base, mapped) = if pinned(handle) {
        pinned_memory(block, zero)?
    } else {
        // SAFETY: plain C allocation of `block` bytes.
        let base = unsafe {
            if zero {
                libc::calloc(1, block)
            } else {
                libc::malloc(block)
            }
        } as *mut u8;
        if base.is_null() {
            return None;
        }
        (base, 0)
    };
    let user_addr = (base as usize + HEADER + pad) & !(align.max(MALLOC_ALIGN) - 1);
    let ptr = user_addr as *mut c_void;
    debug_assert!(user_addr + size <= base as usize + block);
    // SAFETY: `user_addr - HEADER >= base` and `user_addr + size <= base + block`
    // (rounding down from base+HEADER+pad moves back at most pad bytes, and
    // base is MALLOC_ALIGN-aligned so it never goes below base+HEADER).
    unsafe { (ptr as *mut Header).sub(1).write(Header { base, block, allocator: handle, mapped }) };
    Some(ptr)
}

/// Whether `handle`'s blocks are page-locked.
fn pinned(handle: usize) -> bool {
    handle == PINNED_MEM_ALLOC || user(handle).is_some_and(|a| a.traits.pinned)
}

/// `bytes` of page-locked memory (zeroed if `zero`), and the header's
/// `mapped` for it: a block of at most a quarter page shares a locked page
/// with others ([`SHARED_PAGE`]; so ten small pinned blocks lock one page,
/// not ten, as in libgomp); a larger one is a locked mapping of its own.
fn pinned_memory(bytes: usize, zero: bool) -> Option<(*mut u8, usize)> {
    let page = page_size();
    if bytes > page / 4 {
        return map_locked(bytes);
    }
    let mut pages = shared_pages();
    let bytes = bytes.next_multiple_of(MALLOC_ALIGN);
    let at = match pages.iter_mut().rev().find(|s| s.next + bytes <= page) {
        Some(s) => s,
        None => {
            let (base, _) = map_locked(page)?;
            pages.push(SharedPage { base: base as usize, next: 0, live: 0 });
            pages.last_mut().expect("just pushed")
        }
    };
    let p = (at.base + at.next) as *mut u8;
    at.next += bytes;
    at.live += 1;
    if zero {
        // SAFETY: `bytes` bytes of the page at `p` belong to this block.
        unsafe { std::ptr::write_bytes(p, 0, bytes) };
    }
    Some((p, SHARED_PAGE))
}

/// A header's `mapped` for a block inside a [`SharedPage`].
const SHARED_PAGE: usize = usize::MAX;

/// A locked page that small pinned blocks are cut from (in order; the
/// page is unmapped when its last block is freed).
struct SharedPage {
    base: usize,
    /// Bytes handed out.
    next: usize,
    /// Blocks not yet freed.
    live: usize,
}

/// The shared pinned pages. Pinned allocations are rare and large in the
/// programs that use them (buffers for transfers), so one lock serves.
fn shared_pages() -> std::sync::MutexGuard<'static, Vec<SharedPage>> {
    static PAGES: std::sync::Mutex<Vec<SharedPage>> = std::sync::Mutex::new(Vec::new());
    PAGES.lock().unwrap_or_else(|e| e.into_inner())
}

/// A private anonymous mapping of at least `bytes` (zeroed, page-aligned),
/// page-locked: its base and length; `None` if it cannot be mapped or
/// locked (nothing is left mapped then).
fn map_locked(bytes: usize) -> Option<(*mut u8, usize)> {
    let len = bytes.checked_next_multiple_of(page_size())?;
    // SAFETY: a new anonymous mapping; no existing memory is touched.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return None;
    }
    // SAFETY: `base..base+len` is the mapping just made.
    if unsafe { libc::mlock(base, len) } != 0 {
        // SAFETY: as above; nothing else refers to it.
        unsafe { libc::munmap(base, len) };
        return None;
    }
    Some((base as *mut u8, len))
}

/// Gives back a block's memory: `base` and `mapped` from its header.
///
/// # Safety
/// `base` is a live block's, released once.
unsafe fn release(base: *mut u8, mapped: usize) {
    match mapped {
        // SAFETY: the caller's contract: a malloc'ed base.
        0 => unsafe { libc::free(base as *mut c_void) },
        SHARED_PAGE => {
            let mut pages = shared_pages();
            let page = base as usize & !(page_size() - 1);
            let i = pages.iter().position(|s| s.base == page).expect("a shared pinned page");
            pages[i].live -= 1;
            if pages[i].live == 0 {
                let s = pages.swap_remove(i);
                // SAFETY: the page's last block is gone; nothing refers to it.
                unsafe { libc::munmap(s.base as *mut c_void, page_size()) };
            }
        }
        // SAFETY: the caller's contract: a mapping of `mapped` bytes
        // (unmapping also unlocks it).
        len => unsafe {
            libc::munmap(base as *mut c_void, len);
        },
    }
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
    allocate_with(align, size, handle, |align, h| attempt(align, size, h, zero))
}

/// [`allocate`], with `attempt(align, handle)` making each attempt (on the
/// allocator asked for, then on its fallbacks).
fn allocate_with(
    align: usize,
    size: usize,
    handle: usize,
    mut attempt: impl FnMut(usize, usize) -> Option<*mut c_void>,
) -> *mut c_void {
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
        if let Some(p) = attempt(align, handle) {
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
    if let Some(a) = bounded(h.allocator) {
        uncharge(&a.used, h.block);
    }
    // SAFETY: the block's memory, released once.
    unsafe { release(h.base, h.mapped) }
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

/// `omp_realloc(ptr, size, allocator, free_allocator)`: a block from
/// `allocator` (the block's own when `omp_null_allocator`, and its
/// fallbacks) holding the old contents; the old block is freed only on
/// success. Where the allocator that serves is the block's own, the block is
/// resized rather than copied: within its bounded pool charging only the
/// growth ([`realloc_in_pool`]), or by the C `realloc` for a plain block
/// ([`realloc_plain`]; so a pinned allocation that falls back to default
/// memory leaves a default-memory block where it is, as libgomp does).
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
    let (own, old_size) = (h.allocator, h.block - (ptr as usize - h.base as usize));
    let allocator = if allocator == NULL_ALLOCATOR { own } else { allocator };
    let mut copied = false;
    let new = allocate_with(1, size, allocator, |align, handle| {
        if handle == own {
            // SAFETY: the caller's live block; on success it is the result.
            let resized = unsafe {
                if bounded(own).is_some() {
                    realloc_in_pool(ptr, size, own)
                } else {
                    realloc_plain(ptr, size, align)
                }
            };
            if resized.is_some() {
                return resized;
            }
        }
        let p = attempt(align, size, handle, false)?;
        copied = true;
        Some(p)
    });
    if copied {
        // SAFETY: both blocks hold at least the bytes copied; distinct blocks.
        unsafe {
            std::ptr::copy_nonoverlapping(ptr as *const u8, new as *mut u8, old_size.min(size));
            free(ptr);
        }
    }
    new
}

/// `omp_realloc` of a malloc'ed block with malloc's alignment into its
/// own unbounded allocator, asking no more alignment: the C `realloc` (which
/// may grow or shrink it in place). `None`: not this case, or it failed.
///
/// # Safety
/// `ptr` is a live block from [`allocate`].
unsafe fn realloc_plain(ptr: *mut c_void, size: usize, align: usize) -> Option<*mut c_void> {
    // SAFETY: the caller's contract.
    let h = unsafe { header(ptr) };
    if h.mapped != 0 || ptr as usize != h.base as usize + HEADER || align > MALLOC_ALIGN {
        return None;
    }
    let block = size.checked_add(HEADER)?;
    let allocator = h.allocator;
    // SAFETY: `base` came from malloc; on success the old block is gone and
    // the new one starts with room for the header.
    let base = unsafe { libc::realloc(h.base as *mut c_void, block) } as *mut u8;
    if base.is_null() {
        return None;
    }
    // SAFETY: `block` bytes at `base`, the header first.
    let ptr = unsafe { base.add(HEADER) } as *mut c_void;
    // SAFETY: as above.
    unsafe { (ptr as *mut Header).sub(1).write(Header { base, block, allocator, mapped: 0 }) };
    Some(ptr)
}

/// `omp_realloc` of a block of a bounded pool into the same allocator: the
/// pool is charged only the growth (the old block's bytes are its own
/// already), as libgomp does — a block of 3,071 bytes grows to 3,072 in a
/// 4,096-byte pool. `None`: not this case, or it failed (the caller goes on
/// as for any reallocation, with the allocator's fallback).
///
/// # Safety
/// `ptr` is a live block from [`allocate`].
unsafe fn realloc_in_pool(ptr: *mut c_void, size: usize, allocator: usize) -> Option<*mut c_void> {
    // SAFETY: the caller's contract.
    let h = unsafe { header(ptr) };
    let a = bounded(allocator).filter(|_| h.allocator == allocator)?;
    let align = a.traits.alignment.max(1);
    let block = block_size(align, size)?;
    let grow = block.saturating_sub(h.block);
    if grow > 0 && !charge(&a.used, grow, a.traits.pool_size) {
        return None;
    }
    let Some(new) = place(align, size, block, allocator, false) else {
        if grow > 0 {
            uncharge(&a.used, grow);
        }
        return None;
    };
    let (old_base, old_block, old_mapped) = (h.base, h.block, h.mapped);
    let old_size = old_block - (ptr as usize - old_base as usize);
    // SAFETY: both blocks hold at least the bytes copied; distinct blocks;
    // the old block is freed once, its charge kept for the new one.
    unsafe {
        std::ptr::copy_nonoverlapping(ptr as *const u8, new as *mut u8, old_size.min(size));
        release(old_base, old_mapped);
    }
    if old_block > block {
        uncharge(&a.used, old_block - block);
    }
    Some(new)
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
    make(memspace, traits)
}

#[no_mangle]
pub unsafe extern "C" fn omp_destroy_allocator(allocator: usize) {
    // SAFETY: the caller's contract (made by omp_init_allocator, destroyed once).
    unsafe { destroy(allocator) }
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

    /// The process's page-locked memory (`VmLck` in /proc/self/status), kB.
    fn locked_kb() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
        let line = status.lines().find(|l| l.starts_with("VmLck:")).expect("a VmLck line");
        line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("VmLck in kB")
    }

    /// Whether page locking shows in VmLck here: a page mapped and locked
    /// by hand. (ThreadSanitizer's `mlock` does nothing and says it
    /// succeeded, so under `make tsan` it does not show.)
    fn locking_shows() -> bool {
        let before = locked_kb();
        let Some((base, len)) = map_locked(1) else { return false };
        let shows = locked_kb() > before;
        // SAFETY: the mapping just made, released once.
        unsafe { release(base, len) };
        shows
    }

    /// Pinned blocks (gcc 14's `ompx_gnu_pinned_mem_alloc`, and the
    /// `pinned` trait) are page-locked while they live, aligned, zeroed by
    /// calloc, reallocated with their contents, unlocked when freed, small
    /// ones sharing a page —
    /// or, where the process may lock nothing, NULL from the predefined
    /// allocator and ordinary memory by a user allocator's default fallback.
    /// (Handle 200 used to be taken for the address of a user allocator.)
    #[test]
    fn pinned_blocks_are_locked_until_freed() {
        use crate::memory::PINNED_MEM_ALLOC;
        // One test locks memory in this process, so VmLck is its own.
        let shows = locking_shows();
        let locked_kb = || if shows { locked_kb() } else { 0 };
        let before = locked_kb();
        let p = omp_aligned_calloc(256, 3, 10_000, PINNED_MEM_ALLOC);
        let traits = [tr(key::PINNED, val::TRUE)];
        // SAFETY: valid traits.
        let a = unsafe { omp_init_allocator(DEFAULT_MEM_SPACE, 1, traits.as_ptr()) };
        assert_ne!(a, NULL_ALLOCATOR, "pinned memory is supported");
        let q = allocate(1, 5000, a, false);
        assert!(!q.is_null());
        if p.is_null() {
            // No page may be locked here (RLIMIT_MEMLOCK, no CAP_IPC_LOCK):
            // the user allocator fell back to ordinary memory.
            assert_eq!(locked_kb(), before);
            // SAFETY: live block; then the allocator has none.
            unsafe {
                free(q);
                omp_destroy_allocator(a);
            }
            return;
        }
        assert!((p as usize).is_multiple_of(256));
        // SAFETY: `p` holds 30,000 zeroed bytes, `q` 5,000.
        unsafe {
            assert!(std::slice::from_raw_parts(p as *const u8, 30_000).iter().all(|&b| b == 0));
            *(p as *mut u8) = 9;
            std::ptr::write_bytes(q as *mut u8, 1, 5000);
        }
        // 30,000 + header in whole pages, and 5,000 + header.
        assert!(!shows || locked_kb() >= before + 32 + 8, "{} kB locked, {before} before", locked_kb());
        // SAFETY: live blocks, each freed once; then the allocator has none.
        unsafe {
            let p = omp_realloc(p, 100_000, NULL_ALLOCATOR, NULL_ALLOCATOR);
            assert!(!p.is_null() && *(p as *mut u8) == 9, "reallocated with its contents");
            assert!(!shows || locked_kb() >= before + 100 + 8);
            free(p);
            free(q);
            omp_destroy_allocator(a);
        }
        assert_eq!(locked_kb(), before, "freeing unlocks");
        // Small blocks share a locked page (libgomp's alloc-pinned-8).
        let small: Vec<_> = (0..10).map(|i| omp_calloc(1, 10 + i, PINNED_MEM_ALLOC)).collect();
        assert!(small.iter().all(|p| !p.is_null() && (*p as usize).is_multiple_of(MALLOC_ALIGN)));
        let page_kb = page_size() as u64 / 1024;
        assert_eq!(locked_kb(), if shows { before + page_kb } else { 0 }, "ten small blocks lock one page");
        for (i, &p) in small.iter().enumerate() {
            // SAFETY: live zeroed blocks of 10 + i bytes, each freed once.
            unsafe {
                assert!(std::slice::from_raw_parts(p as *const u8, 10 + i).iter().all(|&b| b == 0));
                std::ptr::write_bytes(p as *mut u8, 0xff, 10 + i);
                free(p);
            }
        }
        assert_eq!(locked_kb(), before, "the page goes with its last block");
    }

    /// `omp_realloc` of a default-memory block into its own allocator is
    /// the C `realloc`: the same size keeps the pointer (libgomp's
    /// alloc-pinned-3 relies on it after a pinned allocation fell back to
    /// default memory), growth keeps the contents; an over-aligned block is
    /// copied to a block aligned as before.
    #[test]
    fn realloc_into_the_own_allocator_resizes() {
        let p = omp_alloc(4000, DEFAULT_MEM_ALLOC);
        // SAFETY: live blocks of the sizes written; each freed once.
        unsafe {
            *(p as *mut u8) = 5;
            // The C realloc keeps a block of the same size in place here
            // (glibc; not ThreadSanitizer's, which always moves it).
            let probe = libc::malloc(4000 + HEADER);
            let moved = libc::realloc(probe, 4000 + HEADER);
            let in_place = moved == probe;
            libc::free(moved);
            let same = omp_realloc(p, 4000, DEFAULT_MEM_ALLOC, DEFAULT_MEM_ALLOC);
            assert!(!in_place || same == p, "resized in place");
            assert_eq!(*(same as *mut u8), 5);
            let p = same;
            let q = omp_realloc(p, 1 << 20, NULL_ALLOCATOR, DEFAULT_MEM_ALLOC);
            assert!(!q.is_null() && *(q as *mut u8) == 5);
            free(q);
            let traits = [tr(key::ALIGNMENT, 256)];
            let a = omp_init_allocator(DEFAULT_MEM_SPACE, 1, traits.as_ptr());
            let r = allocate(1, 100, a, false);
            *(r as *mut u8) = 6;
            let r = omp_realloc(r, 5000, a, a);
            assert!((r as usize).is_multiple_of(256) && *(r as *mut u8) == 6);
            free(r);
            omp_destroy_allocator(a);
        }
    }

    /// gcc 16's managed memory, with no offload device: ordinary memory.
    #[test]
    fn managed_memory_is_host_memory_without_devices() {
        use crate::memory::{MANAGED_MEM_ALLOC, MANAGED_MEM_SPACE};
        let p = omp_alloc(64, MANAGED_MEM_ALLOC);
        assert!(!p.is_null());
        // SAFETY: valid (no) traits.
        let a = unsafe { omp_init_allocator(MANAGED_MEM_SPACE, 0, std::ptr::null()) };
        assert_ne!(a, NULL_ALLOCATOR);
        let q = allocate(1, 64, a, false);
        assert!(!q.is_null());
        // SAFETY: live blocks; then the allocator has none.
        unsafe {
            free(p);
            free(q);
            omp_destroy_allocator(a);
        }
    }

    /// `omp_realloc` within one bounded pool charges only the growth (a
    /// block filling most of the pool can still grow), refuses growth past
    /// the pool, and gives back a shrink; the pool ends empty.
    #[test]
    fn realloc_in_a_pool_charges_the_growth() {
        let traits = [tr(key::POOL_SIZE, 4096), tr(key::FALLBACK, val::NULL_FB)];
        // SAFETY: valid traits.
        let a = unsafe { omp_init_allocator(DEFAULT_MEM_SPACE, 2, traits.as_ptr()) };
        let used = || user(a).unwrap().used.load(Ordering::Relaxed);
        let p = allocate(1, 3071, a, false);
        assert!(!p.is_null());
        // SAFETY: live blocks of the sizes written; each freed once.
        unsafe {
            *(p as *mut u8) = 7;
            let p = omp_realloc(p, 3072, a, a);
            assert!(!p.is_null(), "growing by one byte in the same pool fits");
            assert_eq!(*(p as *mut u8), 7);
            assert_eq!(used(), 3072 + HEADER);
            let q = allocate(1, 4, a, false);
            assert!(!q.is_null());
            assert!(omp_realloc(q, 3072, a, a).is_null(), "two blocks of 3072 do not fit in 4096");
            let p = omp_realloc(p, 100, a, a);
            assert_eq!((*(p as *mut u8), used()), (7, 100 + HEADER + 4 + HEADER), "a shrink gives back");
            free(p);
            free(q);
            assert_eq!(used(), 0);
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
