//! The stack pool of lightweight threads.
//!
//! Stacks are corosensei [`DefaultStack`]s (`mmap`ed, with a guard page below
//! the usable part) of `HERD_STACK_SIZE` bytes (default
//! [`DEFAULT_ULT_STACK`](crate::config::DEFAULT_ULT_STACK)). A stack is taken
//! when a lightweight thread first runs (not when it is spawned, so queued
//! threads cost no stack) and given back when it returns; a stack is never
//! freed while a thread runs on it. Each OS thread keeps a small cache; it
//! exchanges batches with a global free list, which keeps up to
//! [`GLOBAL_BYTES`] of stacks and unmaps the rest.
//!
//! Every stack is one `mmap` of two mappings (guard and usable part), so the
//! number of lightweight threads that are *blocked at the same time* is
//! bounded by the kernel's map limit (`vm.max_map_count`, 65530 by default:
//! about 32 000 stacks).

use crate::pool::limits::page_size;
use corosensei::stack::{DefaultStack, Stack};
use std::cell::RefCell;
use std::sync::{Mutex, OnceLock};

/// Stacks an OS thread keeps for itself.
const LOCAL_MAX: usize = 32;
/// Stacks moved between a thread's cache and the global list at once.
const BATCH: usize = 16;
/// The most stack memory (address space) the global list keeps.
const GLOBAL_BYTES: usize = 64 << 20;

static GLOBAL: Mutex<Vec<DefaultStack>> = Mutex::new(Vec::new());

/// A thread's cache; its stacks go back to the global list when it exits.
struct Local(Vec<DefaultStack>);

impl Drop for Local {
    fn drop(&mut self) {
        give_global(self.0.drain(..));
    }
}

thread_local! {
    static LOCAL: RefCell<Local> = const { RefCell::new(Local(Vec::new())) };
}

/// The usable size of a lightweight thread's stack, in bytes: the
/// `HERD_STACK_SIZE` environment variable (read once), else the default.
pub fn size() -> usize {
    static SIZE: OnceLock<usize> = OnceLock::new();
    *SIZE.get_or_init(|| {
        let page = page_size();
        let bytes = crate::config::Config::from_env()
            .ok()
            .and_then(|c| c.ult_stack_size)
            .unwrap_or(crate::config::DEFAULT_ULT_STACK);
        bytes.div_ceil(page) * page
    })
}

/// A stack from the calling thread's cache, the global list, or a new mapping.
pub(crate) fn take() -> std::io::Result<DefaultStack> {
    let cached = LOCAL.try_with(|l| {
        let mut l = l.borrow_mut();
        if l.0.is_empty() {
            let mut g = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
            let from = g.len().saturating_sub(BATCH);
            l.0.extend(g.drain(from..));
        }
        l.0.pop()
    });
    match cached {
        Ok(Some(s)) => Ok(s),
        _ => DefaultStack::new(size()),
    }
}

/// Returns a stack no thread runs on any more.
pub(crate) fn give(stack: DefaultStack) {
    // If the thread is exiting (its cache is gone) the closure, and with it
    // the stack, is dropped: the stack is unmapped.
    let _ = LOCAL.try_with(move |l| {
        let mut l = l.borrow_mut();
        l.0.push(stack);
        if l.0.len() > LOCAL_MAX {
            let from = l.0.len() - BATCH;
            give_global(l.0.drain(from..));
        }
    });
}

fn give_global(stacks: impl Iterator<Item = DefaultStack>) {
    let max = (GLOBAL_BYTES / size()).max(BATCH);
    let mut excess = Vec::new();
    {
        let mut g = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
        for s in stacks {
            if g.len() < max {
                g.push(s);
            } else {
                excess.push(s);
            }
        }
    }
    // Unmapped outside the lock.
    drop(excess);
}

/// The guard page of `stack`: `[low, high)`.
pub(crate) fn guard_of(stack: &DefaultStack) -> (usize, usize) {
    let low = stack.limit().get();
    (low, low + page_size())
}
