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

/// Prints `line` and aborts, or, if another thread is already ending the
/// program, waits for it.
fn end(line: std::fmt::Arguments) -> ! {
    if ENDING.swap(true, Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
    eprintln!("{line}");
    std::process::abort()
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
