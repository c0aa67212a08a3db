//! Task reductions (OpenMP 5.0): `taskgroup task_reduction`, `in_reduction`
//! on `task`/`taskloop`, `reduction` on `taskloop`, and `reduction(task, …)`
//! on `parallel`, loops, `sections` and `scope`.
//!
//! **The compiler's descriptor.** gcc describes a construct's reduction
//! variables in an array of words (libgomp's layout, which the generated code
//! reads back): `[0]` count, `[1]` bytes of one thread's block (padded by gcc),
//! `[2]` alignment on input and, once registered, the base of the private
//! blocks, `[3]` allocator (-1: default), `[4]` next array of the same
//! registration (gcc: 0) and, once registered, the enclosing registration,
//! `[5]` runtime word (here: the registration's lookup index), `[6]` end of
//! the blocks; then three words per variable: its address, its offset in a
//! block (entries sorted by offset), and a runtime word (the array).
//!
//! **Registration** allocates `[1] × nthreads` zeroed bytes — one block per
//! team member, `nthreads` being the team size, which the generated code
//! reads back as `omp_get_num_threads()` when it combines — and makes the
//! array the innermost registration of the encountering task's innermost
//! taskgroup ([`TaskGroup::reductions`]; a nested taskgroup inherits it).
//! Member `i`'s copy of a variable is at `base + i × size + offset`; gcc's
//! code initialises a block the first time it is used (a flag in the block,
//! hence the zeroing) and, after the taskgroup ends, combines every block
//! into the original variables, then calls `GOMP_taskgroup_reduction_unregister`,
//! which frees the blocks.
//!
//! **Remap** (`GOMP_task_reduction_remap`, at the start of an `in_reduction`
//! task): each address is either an original variable — looked up in the
//! innermost registration's index, then in the enclosing ones (the innermost
//! registration of an address wins) — or already a private copy of some
//! member (a task passing its copy on): found by the block range it lies in.
//! Either becomes the *running* member's copy at the same offset. Copies are
//! per member, not per task: tasks run on a member one at a time (herd's tasks
//! are tied), so they update the member's copy in sequence.
//!
//! **Concurrency.** Everything a remap reads (the blocks' base, the index,
//! the group's registration) is written by the registering thread before it
//! creates the tasks that read it, and the task's publication (herd's deque
//! push, or the region's broadcast) orders the two; afterwards it is read-only
//! until unregistration, which comes after every task of the group finished.
//! The team-wide forms share one allocation: for `parallel`, the encountering
//! thread registers once the team size is known, every implicit task gets
//! the registration's group, and the members start the body together (a
//! start gate: gcc's body initialises the member's copy unconditionally, so
//! no task may run on a member before its body has started); for worksharing constructs each member opens its
//! own taskgroup and registers its own array, the first member to reach the
//! construct allocating and the others copying its base and end (through the
//! worksharing entry, published like the construct's parameters). Member 0
//! frees the blocks in `GOMP_workshare_task_reduction_unregister`, after the
//! construct's barrier and the combination.

mod gate;

use super::group::{self, taskgroup_end, TaskGroup};
use super::record::current;
use crate::thread;
use gate::StartGate;
use std::cell::{Cell, OnceCell};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

const CNT: usize = 0;
const SIZE: usize = 1;
const BASE: usize = 2;
const NEXT: usize = 4;
const INDEX: usize = 5;
const END: usize = 6;
const ENTRIES: usize = 7;

/// One registration's lookup structures, kept in its head array's word 5.
struct Index {
    /// Original address → its entry (3 words) and the array holding it,
    /// sorted by address.
    by_addr: Vec<(usize, *const usize, *const usize)>,
    /// The arrays of this registration (gcc emits one).
    arrays: Vec<*mut usize>,
    /// The enclosing registration (null: none).
    outer: *mut usize,
}

/// Reads word `i` of a descriptor.
///
/// # Safety
/// `d` is a descriptor array of at least `i + 1` words.
#[inline]
unsafe fn w(d: *const usize, i: usize) -> usize {
    // SAFETY: the caller's contract.
    unsafe { *d.add(i) }
}

/// Zeroed blocks for `nthreads` members of `size` bytes, aligned to `align`.
fn alloc_blocks(size: usize, nthreads: usize, align: usize) -> *mut u8 {
    let Some(bytes) = size.checked_mul(nthreads) else {
        crate::unsupported::fatal("task reduction: private copies do not fit in memory");
    };
    let align = align.max(std::mem::size_of::<usize>()).next_power_of_two();
    let mut p: *mut libc::c_void = std::ptr::null_mut();
    // SAFETY: `align` is a power of two multiple of the pointer size.
    let rc = unsafe { libc::posix_memalign(&mut p, align, bytes.max(1)) };
    if rc != 0 || p.is_null() {
        crate::unsupported::fatal(&format!(
            "task reduction: cannot allocate {bytes} bytes of private copies ({nthreads} threads)"
        ));
    }
    // SAFETY: a fresh block of at least `bytes` bytes.
    unsafe { std::ptr::write_bytes(p as *mut u8, 0, bytes) };
    p as *mut u8
}

/// Registers the descriptor chain at `data` for `nthreads` members, inside
/// the registration `outer` (null: none). `orig`: the same construct's
/// descriptor as registered by the member that allocated the blocks
/// (worksharing constructs); `None`: allocate them.
///
/// # Safety
/// `data` (and `orig`) are gcc descriptor chains as described in the module
/// documentation, alive until unregistered.
unsafe fn register(data: *mut usize, outer: *mut usize, mut orig: Option<*const usize>, nthreads: usize) {
    let mut arrays = Vec::with_capacity(1);
    let mut d = data;
    // SAFETY: the caller's contract: each array's header and entries.
    unsafe {
        loop {
            match orig {
                Some(o) => {
                    *d.add(BASE) = w(o, BASE);
                    *d.add(END) = w(o, END);
                    orig = Some(w(o, NEXT) as *const usize);
                }
                None => {
                    let (size, align) = (w(d, SIZE), w(d, BASE));
                    let base = alloc_blocks(size, nthreads, align) as usize;
                    *d.add(BASE) = base;
                    *d.add(END) = base + size * nthreads;
                }
            }
            *d.add(INDEX) = 0;
            arrays.push(d);
            let next = w(d, NEXT);
            if next == 0 {
                *d.add(NEXT) = outer as usize;
                break;
            }
            d = next as *mut usize;
        }
        let mut by_addr = Vec::new();
        for &a in &arrays {
            for j in 0..w(a, CNT) {
                let e = a.add(ENTRIES + 3 * j);
                *e.add(2) = a as usize;
                by_addr.push((*e, e as *const usize, a as *const usize));
            }
        }
        by_addr.sort_unstable_by_key(|x| x.0);
        let index = Box::new(Index { by_addr, arrays, outer });
        *data.add(INDEX) = Box::into_raw(index) as usize;
    }
}

/// Drops the registration at `data`; frees its blocks if `free_blocks`.
///
/// # Safety
/// `data` was registered and not yet unregistered; with `free_blocks`, no
/// other array refers to its blocks any more.
unsafe fn unregister(data: *mut usize, free_blocks: bool) {
    // SAFETY: the caller's contract; word 5 holds the boxed index.
    unsafe {
        let index = w(data, INDEX) as *mut Index;
        if index.is_null() {
            crate::unsupported::fatal("GOMP_taskgroup_reduction_unregister of an unregistered reduction");
        }
        let index = Box::from_raw(index);
        *data.add(INDEX) = 0;
        if free_blocks {
            for &a in &index.arrays {
                libc::free(w(a, BASE) as *mut libc::c_void);
            }
        }
    }
}

/// The team size and member number of the calling thread.
fn team_and_num() -> (usize, usize) {
    thread::with(|ts| (ts.team().map_or(1, |t| t.n), ts.num.get() as usize))
}

/// The innermost taskgroup of the calling task.
fn innermost_group(what: &str) -> &'static TaskGroup {
    let g = thread::with(|ts| current(ts).group.get());
    if g.is_null() {
        crate::unsupported::fatal(&format!("{what} outside a taskgroup"));
    }
    // SAFETY: a taskgroup outlives the code and the tasks inside it.
    unsafe { &*g }
}

/// `GOMP_taskgroup_reduction_register`: registers `data` in the innermost
/// taskgroup of the calling task, one private block per team member.
///
/// # Safety
/// `data` is gcc's descriptor, alive until its unregistration.
pub(crate) unsafe fn taskgroup_register(data: *mut usize) {
    let group = innermost_group("GOMP_taskgroup_reduction_register");
    let (n, _) = team_and_num();
    // SAFETY: the caller's contract.
    unsafe { register(data, group.reductions.load(Ordering::Relaxed), None, n) };
    group.reductions.store(data, Ordering::Relaxed);
}

/// `GOMP_taskgroup_reduction_unregister`: frees the private blocks (the
/// generated code has combined them).
///
/// # Safety
/// `data` was registered by [`taskgroup_register`] (or a region's).
pub(crate) unsafe fn taskgroup_unregister(data: *mut usize) {
    // SAFETY: the caller's contract.
    unsafe { unregister(data, true) }
}

/// Finds the entry of original address `p` in the registrations from
/// `data` outwards: (entry, array).
///
/// # Safety
/// `data` is a live registration chain.
unsafe fn find_original(mut data: *mut usize, p: usize) -> Option<(*const usize, *const usize)> {
    while !data.is_null() {
        // SAFETY: a live registration's index.
        let index = unsafe { &*(w(data, INDEX) as *const Index) };
        if let Ok(i) = index.by_addr.binary_search_by_key(&p, |x| x.0) {
            let (_, e, a) = index.by_addr[i];
            return Some((e, a));
        }
        data = index.outer;
    }
    None
}

/// Finds the array whose blocks contain `p` (a private copy), from `data`
/// outwards.
///
/// # Safety
/// `data` is a live registration chain.
unsafe fn find_copy(mut data: *mut usize, p: usize) -> Option<*const usize> {
    while !data.is_null() {
        // SAFETY: a live registration's index and arrays.
        unsafe {
            let index = &*(w(data, INDEX) as *const Index);
            for &a in &index.arrays {
                if p >= w(a, BASE) && p < w(a, END) {
                    return Some(a);
                }
            }
            data = index.outer;
        }
    }
    None
}

/// Member `id`'s block in array `a`, checked against the blocks registered.
///
/// # Safety
/// `a` is a registered array.
unsafe fn block(a: *const usize, id: usize) -> usize {
    // SAFETY: the caller's contract.
    let (base, size, end) = unsafe { (w(a, BASE), w(a, SIZE), w(a, END)) };
    let nthreads = (end - base).checked_div(size).unwrap_or(0);
    if id >= nthreads {
        crate::unsupported::fatal(&format!(
            "task reduction: thread {id} has no private copy (the reduction was registered for {nthreads} threads)"
        ));
    }
    base + id * size
}

/// `GOMP_task_reduction_remap(cnt, cntorig, ptrs)`: replaces each of the
/// `cnt` addresses (an original variable or some member's copy of it) by the
/// calling member's copy; for `i < cntorig` also stores the original's
/// address at `ptrs[cnt + i]`.
///
/// # Safety
/// `ptrs` holds `cnt + cntorig` pointers, as gcc emits.
pub(crate) unsafe fn remap(cnt: usize, cntorig: usize, ptrs: *mut *mut libc::c_void) {
    let data = innermost_group("GOMP_task_reduction_remap").reductions.load(Ordering::Relaxed);
    let (_, id) = team_and_num();
    // SAFETY: the caller's contract; `data` is the group's live registration.
    unsafe { remap_in(data, id, cnt, cntorig, ptrs) }
}

/// [`remap`] for member `id` in the registration chain from `data`.
///
/// # Safety
/// As [`remap`]; `data` is null or a live registration chain.
unsafe fn remap_in(data: *mut usize, id: usize, cnt: usize, cntorig: usize, ptrs: *mut *mut libc::c_void) {
    for i in 0..cnt {
        // SAFETY: gcc's array of `cnt + cntorig` pointers; the registrations
        // are alive while tasks of their group run.
        unsafe {
            let p = *ptrs.add(i) as usize;
            if let Some((e, a)) = find_original(data, p) {
                *ptrs.add(i) = (block(a, id) + w(e, 1)) as *mut libc::c_void;
                if i < cntorig {
                    *ptrs.add(cnt + i) = w(e, 0) as *mut libc::c_void;
                }
                continue;
            }
            let Some(a) = find_copy(data, p) else {
                crate::unsupported::fatal(&format!(
                    "couldn't find matching task_reduction or reduction with task modifier for {p:#x}"
                ));
            };
            let off = (p - w(a, BASE)) % w(a, SIZE);
            *ptrs.add(i) = (block(a, id) + off) as *mut libc::c_void;
            if i < cntorig {
                let entries = (0..w(a, CNT)).map(|j| a.add(ENTRIES + 3 * j));
                let Some(e) = entries.into_iter().find(|&e| w(e, 1) == off) else {
                    crate::unsupported::fatal(&format!(
                        "couldn't find the original of task reduction copy {p:#x}"
                    ));
                };
                *ptrs.add(cnt + i) = w(e, 0) as *mut libc::c_void;
            }
        }
    }
}

/// `GOMP_parallel_reductions`: the registration every implicit task of a
/// region shares, made once the team size is known.
///
/// **Start gate.** gcc's region body initialises the member's copy
/// unconditionally, first thing; a herd participant may take a task of the
/// team before it starts its own share, and an update that task made to the
/// member's copy would be overwritten. So every member of such a region
/// waits, before running the body, until all have arrived: once past the
/// gate, a member is in the body, where it runs tasks only at scheduling
/// points, after the initialisation. The arrival climbs a combining tree
/// (O(log n) adds, at most a few per line) and the wait runs no task (the
/// gate is no task scheduling point): see `reduction/gate.rs`.
pub(crate) struct RegionReductions {
    group: Box<TaskGroup>,
    data: *mut usize,
    nthreads: Cell<usize>,
    /// Built by [`RegionReductions::register`], before the members start.
    gate: OnceCell<StartGate>,
}

impl RegionReductions {
    /// For the descriptor `data` (not yet registered).
    pub(crate) fn new(data: *mut usize) -> RegionReductions {
        let group = Box::new(TaskGroup {
            count: AtomicUsize::new(0),
            prev: std::ptr::null(),
            waiter: 0,
            team: std::ptr::null(),
            reductions: AtomicPtr::new(data),
            region: true,
            workshare: false,
            cancelled: AtomicBool::new(false),
        });
        RegionReductions { group, data, nthreads: Cell::new(0), gate: OnceCell::new() }
    }

    /// The start gate (see the type's documentation), as the calling member
    /// of the registered team: returns once every member has called it.
    pub(crate) fn gate(&self) {
        let Some(gate) = self.gate.get() else {
            crate::unsupported::fatal("task reduction region started before its registration");
        };
        thread::with(|ts| gate.pass(ts.team(), ts.num.get() as usize));
    }

    /// Allocates the blocks of a team of `n` (the encountering thread,
    /// before the members start).
    pub(crate) fn register(&self, n: usize) {
        self.nthreads.set(n);
        if self.gate.set(StartGate::new(n)).is_err() {
            crate::unsupported::fatal("a task reduction region registered twice");
        }
        // SAFETY: gcc's descriptor, first word of the region's data block,
        // alive until the generated code unregisters it after the region.
        unsafe { register(self.data, std::ptr::null_mut(), None, n) };
    }

    /// The taskgroup each implicit task starts in.
    pub(crate) fn group(&self) -> *const TaskGroup {
        &*self.group
    }

    /// The team size registered (what `GOMP_parallel_reductions` returns).
    pub(crate) fn nthreads(&self) -> usize {
        self.nthreads.get()
    }
}

/// Before a worksharing construct with task reductions: the member's own
/// taskgroup for the construct (every member calls it).
pub(crate) fn workshare_group_start() {
    group::start(true);
}

/// Registers a member's worksharing descriptor `data` in its taskgroup:
/// `first` is `None` for the member that initialises the construct (it
/// allocates), else the initialiser's registered descriptor.
///
/// # Safety
/// `data` (and `first`) are gcc descriptors; `first` is registered.
pub(crate) unsafe fn workshare_register(data: *mut usize, first: Option<*const usize>) {
    let group = innermost_group("a worksharing construct's task reduction");
    let (n, _) = team_and_num();
    // SAFETY: the caller's contract.
    unsafe { register(data, group.reductions.load(Ordering::Relaxed), first, n) };
    group.reductions.store(data, Ordering::Relaxed);
}

/// `GOMP_workshare_task_reduction_unregister(cancelled)`: ends the member's
/// taskgroup; member 0 frees the blocks (after the combination); then the
/// construct's barrier unless cancelled.
pub(crate) fn workshare_unregister(cancelled: bool) {
    let data = innermost_group("GOMP_workshare_task_reduction_unregister").reductions.load(Ordering::Relaxed);
    taskgroup_end();
    let (_, id) = team_and_num();
    // SAFETY: `data` is this member's registration of the construct; member
    // 0 runs after the construct's barrier, when no task uses the blocks
    // and the generated code has combined them.
    unsafe { unregister(data, id == 0) };
    if !cancelled {
        crate::sync::barrier();
    }
}

/// `taskloop reduction(…)`: registers the descriptor gcc passes as the third
/// word of the argument block in the taskloop's taskgroup; with no
/// iterations (`register` false) tells the generated code there is nothing
/// to combine (base 0), as libgomp does.
///
/// # Safety
/// `data` is gcc's taskloop argument block with the descriptor pointer at word 2.
pub(crate) unsafe fn taskloop_register(data: *mut libc::c_void, register: bool) {
    // SAFETY: the caller's contract.
    unsafe {
        let d = *(data as *const *mut usize).add(2);
        if register {
            taskgroup_register(d);
        } else {
            *d.add(BASE) = 0;
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::ffi::c_void;

    /// A descriptor as gcc builds it: `vars` (address, offset), block `size`.
    fn descriptor(size: usize, vars: &[(usize, usize)]) -> Vec<usize> {
        let mut d = vec![vars.len(), size, 64, usize::MAX, 0, 0, 0];
        for &(addr, off) in vars {
            d.extend([addr, off, 0]);
        }
        d
    }

    fn remap1(data: &mut [usize], id: usize, p: usize) -> (usize, usize) {
        let mut ptrs = [p as *mut c_void, std::ptr::null_mut()];
        // SAFETY: two pointers for cnt = cntorig = 1; `data` is registered.
        unsafe { remap_in(data.as_mut_ptr(), id, 1, 1, ptrs.as_mut_ptr()) };
        (ptrs[0] as usize, ptrs[1] as usize)
    }

    #[test]
    fn blocks_per_member_zeroed_and_remapped() {
        let (x, y) = (0x1000usize, 0x2000usize);
        let mut d = descriptor(64, &[(x, 0), (y, 8)]);
        // SAFETY: a well-formed descriptor, unregistered below.
        unsafe { register(d.as_mut_ptr(), std::ptr::null_mut(), None, 3) };
        let base = d[BASE];
        assert_eq!(base % 64, 0, "aligned as asked");
        assert_eq!(d[END], base + 3 * 64);
        assert_eq!(d[NEXT], 0);
        // SAFETY: the blocks are 3 * 64 bytes.
        assert!(unsafe { std::slice::from_raw_parts(base as *const u8, 192) }.iter().all(|&b| b == 0));
        assert_eq!(remap1(&mut d, 0, x), (base, x));
        assert_eq!(remap1(&mut d, 2, y), (base + 128 + 8, y));
        // A copy passed on (member 1's copy of y) becomes member 2's, with its original.
        assert_eq!(remap1(&mut d, 2, base + 64 + 8), (base + 128 + 8, y));
        // SAFETY: registered above.
        unsafe { unregister(d.as_mut_ptr(), true) };
        assert_eq!(d[INDEX], 0);
    }

    #[test]
    fn nested_registrations_innermost_wins() {
        let (x, y) = (0x1000usize, 0x3000usize);
        let mut outer = descriptor(16, &[(x, 0)]);
        let mut inner = descriptor(32, &[(y, 0), (x, 16)]);
        // SAFETY: well-formed descriptors; the inner one inside the outer.
        unsafe {
            register(outer.as_mut_ptr(), std::ptr::null_mut(), None, 2);
            register(inner.as_mut_ptr(), outer.as_mut_ptr(), None, 2);
        }
        assert_eq!(inner[NEXT], outer.as_ptr() as usize, "linked to the enclosing registration");
        // x is registered in both: the inner one's copy.
        assert_eq!(remap1(&mut inner, 1, x).0, inner[BASE] + 32 + 16);
        // an outer-only variable, looked up from the inner registration
        let mut outer_only = descriptor(16, &[(0x5000, 0)]);
        // SAFETY: as above, a third registration inside the inner one.
        unsafe { register(outer_only.as_mut_ptr(), inner.as_mut_ptr(), None, 2) };
        assert_eq!(remap1(&mut outer_only, 1, y).0, inner[BASE] + 32);
        // a copy of the outer registration's x passed on
        assert_eq!(remap1(&mut outer_only, 0, outer[BASE] + 16).0, outer[BASE]);
        // SAFETY: registered above, innermost first.
        unsafe {
            unregister(outer_only.as_mut_ptr(), true);
            unregister(inner.as_mut_ptr(), true);
            unregister(outer.as_mut_ptr(), true);
        }
    }

    #[test]
    fn followers_share_the_first_members_blocks() {
        let x = 0x1000usize;
        let mut first = descriptor(64, &[(x, 0)]);
        let mut other = descriptor(64, &[(x, 0)]);
        // SAFETY: well-formed descriptors; `first` registered before `other` copies it.
        unsafe {
            register(first.as_mut_ptr(), std::ptr::null_mut(), None, 2);
            register(other.as_mut_ptr(), std::ptr::null_mut(), Some(first.as_ptr()), 2);
        }
        assert_eq!((other[BASE], other[END]), (first[BASE], first[END]));
        assert_eq!(remap1(&mut other, 1, x).0, first[BASE] + 64);
        // SAFETY: the follower drops only its index; the first frees the blocks.
        unsafe {
            unregister(other.as_mut_ptr(), false);
            unregister(first.as_mut_ptr(), true);
        }
    }
}

/// loom model of the team-wide registration: the first member of a
/// worksharing construct allocates the blocks and publishes its descriptor
/// as the worksharing ring publishes a construct (a `Relaxed` pointer store,
/// then the entry's state by a `SeqCst` swap; the others wait for the state
/// with `Acquire`); the other member registers its own descriptor from the
/// first's while the first already looks up and updates its copy. Checks, over
/// every interleaving, that the follower shares the first's blocks, that the
/// two members' copies are distinct, that a copy passed from one member to
/// the other is remapped to the receiver's, and that combining after both
/// finished gives the sum. The descriptor words themselves are plain memory,
/// which loom does not track: their ordering is the ring's (modelled in
/// `loom_models.rs`); this model checks the protocol's logic under all
/// interleavings.
#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use loom::sync::atomic::{AtomicPtr, AtomicU64};
    use loom::sync::Arc;
    use std::ffi::c_void;

    struct Shared {
        x: Box<u64>,
        state: AtomicU64,
        first: AtomicPtr<usize>,
        /// Member 0's copy address, passed to member 1 (as a task would).
        passed: AtomicPtr<u64>,
    }

    fn descriptor(x: usize) -> Box<[usize; 10]> {
        Box::new([1, 64, 64, usize::MAX, 0, 0, 0, x, 0, 0])
    }

    fn remap_one(d: &mut [usize; 10], id: usize, p: usize) -> *mut u64 {
        let mut ptrs = [p as *mut c_void];
        // SAFETY: `d` is registered; one pointer, no original asked.
        unsafe { remap_in(d.as_mut_ptr(), id, 1, 0, ptrs.as_mut_ptr()) };
        ptrs[0] as *mut u64
    }

    #[test]
    fn loom_models_task_reduction_registration() {
        loom::model(|| {
            let sh = Arc::new(Shared {
                x: Box::new(0),
                state: AtomicU64::new(0),
                first: AtomicPtr::new(std::ptr::null_mut()),
                passed: AtomicPtr::new(std::ptr::null_mut()),
            });
            let xa = &*sh.x as *const u64 as usize;
            let sh1 = sh.clone();
            let follower = loom::thread::spawn(move || {
                let mut d = descriptor(xa);
                // HERD_OMP_WEAKEN=taskred-nowait: the follower does not wait
                // for the publication (loom: "registered before publication").
                let weak = std::env::var("HERD_OMP_WEAKEN").is_ok_and(|v| v == "taskred-nowait");
                while !weak && sh1.state.load(Ordering::Acquire) != 2 {
                    loom::thread::yield_now();
                }
                let first = sh1.first.load(Ordering::Relaxed);
                assert!(!first.is_null(), "follower registered before publication");
                // SAFETY: `first` was registered before the state was published.
                unsafe { register(d.as_mut_ptr(), std::ptr::null_mut(), Some(first), 2) };
                let mine = remap_one(&mut d, 1, xa);
                // SAFETY: member 1's copy, only member 1 writes it.
                unsafe { *mine += 10 };
                let passed = loop {
                    let p = sh1.passed.load(Ordering::Acquire);
                    if !p.is_null() {
                        break p;
                    }
                    loom::thread::yield_now();
                };
                assert_ne!(passed, mine, "members have distinct copies");
                assert_eq!(
                    remap_one(&mut d, 1, passed as usize),
                    mine,
                    "a passed copy maps to the receiver's"
                );
                // SAFETY: registered above; the first frees the blocks.
                unsafe { unregister(d.as_mut_ptr(), false) };
            });
            let mut d = descriptor(xa);
            // SAFETY: a well-formed descriptor.
            unsafe { register(d.as_mut_ptr(), std::ptr::null_mut(), None, 2) };
            sh.first.store(d.as_mut_ptr(), Ordering::Relaxed);
            sh.state.swap(2, Ordering::SeqCst);
            let mine = remap_one(&mut d, 0, xa);
            // SAFETY: member 0's copy.
            unsafe { *mine += 1 };
            sh.passed.store(mine, Ordering::Release);
            follower.join().unwrap();
            // The combination the generated code does after the barrier.
            let base = d[BASE] as *const u64;
            // SAFETY: two 64-byte blocks, both members done.
            let sum = unsafe { *base + *base.add(8) };
            assert_eq!(sum, 11);
            // SAFETY: registered above.
            unsafe { unregister(d.as_mut_ptr(), true) };
        });
    }
}
