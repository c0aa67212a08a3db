//! `OMP_DISPLAY_ENV` / `omp_display_env`: the OpenMP block, then herd's pool.

/// Prints the settings in effect to stderr.
pub(crate) fn print(verbose: bool) {
    let root = crate::runtime::root(0);
    eprint!("{}", root.pool.info().render(verbose));
}
