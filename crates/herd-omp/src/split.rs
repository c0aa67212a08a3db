//! The split-parallel ABI of gcc before 4.9: the caller runs
//! `GOMP_parallel_start(fn, data, n); fn(data); GOMP_parallel_end();`, so
//! team member 0's share runs in the caller's own frame, between two calls.
//!
//! A herd region runs inside one call (the master takes part and returns
//! when the region is over), so the call is split by running the region on
//! a coroutine (corosensei) on the calling thread: every member but 0 runs
//! `fn(data)`; member 0's share *suspends* the coroutine, so
//! `GOMP_parallel_start` returns into the caller with member 0's team state
//! in place (thread-locals of this very thread, frames kept on the
//! coroutine's stack); `GOMP_parallel_end` resumes it, member 0's share
//! returns, and the region ends like any other (its closing barrier, the
//! workers released). Regions opened this way nest: each thread keeps a
//! stack of open ones, closed innermost first. The combined split forms
//! (`parallel for`, `parallel sections`) are the same with the region's
//! first worksharing construct prepared.
//!
//! Why our own code: this is the bridge between libgomp's split ABI and
//! herd's region model, not a general facility.

use crate::parallel::{parallel, RegionFn};
use crate::ws::LoopParams;
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::cell::{Cell, RefCell};
use std::ffi::c_void;

/// Stack of the coroutine that holds a split region's own frames (the
/// region's bookkeeping and any task member 0 runs at its closing barrier).
const STACK: usize = 8 << 20;

/// What every member's share needs.
struct Split {
    f: RegionFn,
    data: *mut c_void,
    /// The coroutine's yielder, set when it starts.
    yielder: Cell<*const Yielder<(), ()>>,
}

type Region = Coroutine<(), (), (), DefaultStack>;

thread_local! {
    /// The split regions this thread opened and has not closed, innermost last.
    static OPEN: RefCell<Vec<(Region, Box<Split>)>> = const { RefCell::new(Vec::new()) };
}

/// Each member's share: member 0 suspends (the caller runs `fn(data)`
/// itself), the others run `fn(data)`.
unsafe extern "C" fn share(p: *mut c_void) {
    // SAFETY: `p` is the `Split` that `start` keeps alive until `end`.
    let s = unsafe { &*(p as *const Split) };
    if crate::api::omp_get_thread_num() == 0 {
        // SAFETY: set by the coroutine before the region started; the
        // coroutine is running (this is its stack).
        unsafe { (*s.yielder.get()).suspend(()) };
    } else {
        // SAFETY: the caller's region function and data, as GOMP_parallel_start got them.
        unsafe { (s.f)(s.data) };
    }
}

/// `GOMP_parallel_start`, and with `first` the combined forms
/// (`GOMP_parallel_loop_*_start`, `GOMP_parallel_sections_start`: the
/// region's first worksharing construct prepared as their non-split
/// counterparts prepare it).
pub(crate) fn start(f: RegionFn, data: *mut c_void, num_threads: u32, first: Option<LoopParams>) {
    let split = Box::new(Split { f, data, yielder: Cell::new(std::ptr::null()) });
    let p = &*split as *const Split as usize;
    let stack = DefaultStack::new(STACK).unwrap_or_else(|e| {
        crate::unsupported::unsupported(&format!("GOMP_parallel_start: no stack for the region ({e})"))
    });
    let mut region: Region = Coroutine::with_stack(stack, move |y: &Yielder<(), ()>, ()| {
        // SAFETY: `p` is the boxed `Split`, alive until `end` has run the
        // coroutine to completion.
        unsafe { (*(p as *const Split)).yielder.set(y) };
        parallel(share, p as *mut c_void, num_threads, 0, first);
    });
    match region.resume(()) {
        CoroutineResult::Yield(()) => OPEN.with(|o| o.borrow_mut().push((region, split))),
        CoroutineResult::Return(()) => unreachable!("member 0's share always suspends"),
    }
}

/// `GOMP_parallel_end`.
pub(crate) fn end() {
    let Some((mut region, split)) = OPEN.with(|o| o.borrow_mut().pop()) else {
        crate::unsupported::unsupported("GOMP_parallel_end without GOMP_parallel_start on this thread")
    };
    match region.resume(()) {
        CoroutineResult::Return(()) => drop(split),
        CoroutineResult::Yield(()) => unreachable!("a split region suspends once"),
    }
}
