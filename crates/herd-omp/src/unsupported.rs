//! Entry points herd does not implement end the program with a message
//! naming them — never silently wrong results.
//!
//! Several threads of a team often reach the same fatal error at once (a
//! bad affinity format, a lock misused by every member): the first one
//! prints and ends the program; the others wait for the end instead of
//! printing the message again.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the first thread that ends the program.
static ENDING: AtomicBool = AtomicBool::new(false);

/// Prints `line` and ends the program with exit status 1, as libgomp's
/// `gomp_fatal` does (it used to abort: status 134 and a core file where
/// libgomp's users and test harnesses expect 1), or, if another thread is
/// already ending the program, waits for it. The C streams are flushed
/// first, so the program's buffered output is not lost, but no `atexit`
/// handler runs: one that joined threads or took a lock the failing
/// thread's team holds could hang where the program should end.
fn end(line: std::fmt::Arguments) -> ! {
    if ENDING.swap(true, Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
    eprintln!("{line}");
    // SAFETY: fflush(NULL) flushes every C output stream; _exit ends the
    // process at once, with no Rust or C code run after it.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::_exit(1)
    }
}

/// Ends the program: `what` is not supported by herd.
#[cold]
pub(crate) fn unsupported(what: &str) -> ! {
    end(format_args!(
        "herd-omp: fatal: {what} is not supported by herd's OpenMP runtime \
         (run the program with libgomp instead, or see README \"Running OpenMP programs on herd\")"
    ))
}

/// Ends the program on a broken invariant of the calling program.
#[cold]
pub(crate) fn fatal(what: &str) -> ! {
    end(format_args!("herd-omp: fatal: {what}"))
}
