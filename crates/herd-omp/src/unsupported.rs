//! Entry points herd does not implement end the program with a message
//! naming them — never silently wrong results.

/// Ends the program: `what` is not supported by herd.
#[cold]
pub(crate) fn unsupported(what: &str) -> ! {
    eprintln!(
        "herd-omp: fatal: {what} is not supported by herd's OpenMP runtime \
         (run the program with libgomp instead, or see README \"Running OpenMP programs on herd\")"
    );
    std::process::abort()
}

/// Ends the program on a broken invariant of the calling program.
#[cold]
pub(crate) fn fatal(what: &str) -> ! {
    eprintln!("herd-omp: fatal: {what}");
    std::process::abort()
}
