//! `OMP_DISPLAY_ENV` / `omp_display_env`: libgomp's OpenMP block (the ICVs
//! as herd resolved them), then herd's own pool report (places, worker→PU
//! map, wake order, wait policy).

/// Prints the settings in effect to stderr.
pub(crate) fn print(verbose: bool) {
    let rt = crate::runtime::runtime();
    let root = crate::runtime::root(0);
    let info = root.pool.info();
    let mut icvs = crate::settings::display_icvs(&rt.omp, &rt.herd);
    if info.bound {
        icvs.places = crate::env::format_places(&info.places);
    }
    eprint!("{}", crate::env::display(&icvs, verbose));
    eprint!("{}", info.render(verbose));
}
