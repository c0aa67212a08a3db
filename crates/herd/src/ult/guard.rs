//! Reporting lightweight-thread stack overflows.
//!
//! A thread's stack has a guard page below it (see `stack`); running past the
//! stack faults there. While a worker resumes a lightweight thread it records
//! that stack's guard page and size in a thread-local ([`Running`]). A
//! `SIGSEGV`/`SIGBUS` handler, installed once with `SA_ONSTACK` on the first
//! spawn, checks whether the faulting address lies in the guard page of the
//! stack the faulting thread is running, and then writes
//! `herd: lightweight thread stack overflow (stack N bytes; raise HERD_STACK_SIZE)`
//! to stderr with `write(2)` and aborts. Other faults go to the handler that
//! was installed before (Rust's own reports main-thread overflows), or get
//! the default action.
//!
//! The handler runs on the thread's alternate signal stack (the overflowed
//! stack has no room left). Rust gives one to the main thread and the threads
//! it spawns; [`ensure_altstack`] gives one to any other thread before it
//! first runs a lightweight thread.

use std::cell::{Cell, RefCell};
use std::sync::{Once, OnceLock};

thread_local! {
    /// `[guard low, guard high, stack size]` of the lightweight thread this
    /// thread runs, or zeros.
    static RUNNING: Cell<[usize; 3]> = const { Cell::new([0; 3]) };
    static ALTSTACK: RefCell<Option<AltStack>> = const { RefCell::new(None) };
    static ALTSTACK_CHECKED: Cell<bool> = const { Cell::new(false) };
}

/// Records the stack of the lightweight thread being resumed on this thread
/// for the fault handler, restoring the previous record (a lightweight thread
/// may resume another) when dropped.
pub(crate) struct Running {
    prev: [usize; 3],
}

impl Running {
    pub(crate) fn enter(guard: (usize, usize), size: usize) -> Running {
        Running { prev: RUNNING.with(|r| r.replace([guard.0, guard.1, size])) }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.with(|r| r.set(self.prev));
    }
}

static PREVIOUS: [OnceLock<libc::sigaction>; 2] = [OnceLock::new(), OnceLock::new()];
const SIGNALS: [libc::c_int; 2] = [libc::SIGSEGV, libc::SIGBUS];

/// Installs the fault handler (once per process).
pub(crate) fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for (i, &sig) in SIGNALS.iter().enumerate() {
            // SAFETY: sigaction with a valid signal number and a zeroed
            // (valid) sigaction to read the current action into.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                    continue;
                }
                // Recorded before our handler can run.
                let _ = PREVIOUS[i].set(old);
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = handler as *const () as usize;
                new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut new.sa_mask);
                libc::sigaction(sig, &new, std::ptr::null_mut());
            }
        }
    });
}

/// The fault handler; async-signal-safe (a thread-local read of a
/// const-initialised `Cell`, `write`, `abort`, `sigaction`).
unsafe extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    let [low, high, size] = RUNNING.try_with(|r| r.get()).unwrap_or([0; 3]);
    if low <= addr && addr < high {
        report(size);
        // SAFETY: abort is async-signal-safe.
        unsafe { libc::abort() };
    }
    let i = usize::from(sig != libc::SIGSEGV);
    // SAFETY: chaining to the action that was installed before ours, with the
    // arguments the kernel gave us.
    unsafe { chain(sig, PREVIOUS[i].get(), info, ctx) };
}

unsafe fn chain(
    sig: libc::c_int,
    prev: Option<&libc::sigaction>,
    info: *mut libc::siginfo_t,
    ctx: *mut libc::c_void,
) {
    match prev {
        Some(p) if p.sa_sigaction != libc::SIG_DFL && p.sa_sigaction != libc::SIG_IGN => {
            if p.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: an SA_SIGINFO action holds a three-argument handler.
                let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                    unsafe { std::mem::transmute(p.sa_sigaction) };
                f(sig, info, ctx);
            } else {
                // SAFETY: otherwise it holds a one-argument handler.
                let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(p.sa_sigaction) };
                f(sig);
            }
        }
        _ => {
            // Default action: reinstall it and return; the faulting
            // instruction runs again and the process gets the signal's
            // default disposition (a core dump).
            // SAFETY: a zeroed sigaction with SIG_DFL is a valid action.
            unsafe {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
    }
}

/// Writes the overflow message with `write(2)` (no allocation, no locks).
fn report(size: usize) {
    let mut buf = [0u8; 128];
    let n = message(size, &mut buf);
    // SAFETY: writing our own initialised buffer to stderr.
    unsafe { libc::write(libc::STDERR_FILENO, buf.as_ptr().cast(), n) };
}

/// Formats the overflow message into `buf`; returns its length.
fn message(size: usize, buf: &mut [u8; 128]) -> usize {
    let mut n = 0;
    let mut put = |bytes: &[u8]| {
        for &b in bytes {
            if n < buf.len() {
                buf[n] = b;
                n += 1;
            }
        }
    };
    put(b"herd: lightweight thread stack overflow (stack ");
    let mut digits = [0u8; 20];
    let mut d = digits.len();
    let mut v = size;
    loop {
        d -= 1;
        digits[d] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    put(&digits[d..]);
    put(b" bytes; raise HERD_STACK_SIZE)\n");
    n
}

/// An alternate signal stack this module mapped for a thread.
struct AltStack {
    base: *mut libc::c_void,
    len: usize,
}

impl Drop for AltStack {
    fn drop(&mut self) {
        // SAFETY: disable the alternate stack before unmapping it; it is ours
        // (installed by `ensure_altstack` on this thread).
        unsafe {
            let disable =
                libc::stack_t { ss_sp: std::ptr::null_mut(), ss_flags: libc::SS_DISABLE, ss_size: 0 };
            libc::sigaltstack(&disable, std::ptr::null_mut());
            libc::munmap(self.base, self.len);
        }
    }
}

/// Makes sure the calling thread has an alternate signal stack (checked once
/// per thread; one is mapped only if the thread has none).
#[inline]
pub(crate) fn ensure_altstack() {
    if !ALTSTACK_CHECKED.with(|c| c.replace(true)) {
        install_altstack();
    }
}

#[cold]
fn install_altstack() {
    const LEN: usize = 64 << 10;
    // SAFETY: querying the current alternate stack into a zeroed (valid) stack_t.
    let (rc, cur) = unsafe {
        let mut cur: libc::stack_t = std::mem::zeroed();
        (libc::sigaltstack(std::ptr::null(), &mut cur), cur)
    };
    if rc != 0 || cur.ss_flags & libc::SS_DISABLE == 0 {
        return;
    }
    // SAFETY: a fresh private anonymous mapping.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            LEN,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return;
    }
    let stack = libc::stack_t { ss_sp: base, ss_flags: 0, ss_size: LEN };
    // SAFETY: `base` is a mapping of LEN bytes that lives until the thread's
    // `AltStack` is dropped (which disables it first).
    if unsafe { libc::sigaltstack(&stack, std::ptr::null_mut()) } != 0 {
        // SAFETY: the mapping was not installed; unmap it.
        unsafe { libc::munmap(base, LEN) };
        return;
    }
    let _ = ALTSTACK.try_with(|a| *a.borrow_mut() = Some(AltStack { base, len: LEN }));
}

#[cfg(all(test, not(loom)))]
mod tests {
    #[test]
    fn message_names_the_size() {
        let mut buf = [0u8; 128];
        for (size, text) in [(65536, "65536"), (0, "0"), (16384, "16384")] {
            let n = super::message(size, &mut buf);
            let want = format!(
                "herd: lightweight thread stack overflow (stack {text} bytes; raise HERD_STACK_SIZE)\n"
            );
            assert_eq!(std::str::from_utf8(&buf[..n]).unwrap(), want);
        }
    }
}
