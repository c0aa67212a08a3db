//! `OMP_DISPLAY_ENV` / `omp_display_env`: libgomp's OpenMP block (the ICVs
//! as herd resolved them), then herd's own pool report (places, worker→PU
//! map, wake order, wait policy), the `HERD_*` settings in effect that the
//! pool report does not show (throttling, steal chunk, trace file), and what
//! was done about a libgomp loaded beside herd (see `preload`).

use std::fmt::Write as _;

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
    let mut text = info.render(verbose);
    text.push_str(&herd_settings(&rt.herd, root.pool.monitor(), verbose));
    if let Some(note) = crate::preload::note() {
        let _ = writeln!(text, "herd: note: {note}");
    }
    eprint!("{text}");
}

/// The lines for the `HERD_*` settings the pool report leaves out, as herd's
/// own pool report (`HERD_DISPLAY_ENV`) words them where it has them.
fn herd_settings(cfg: &herd::Config, monitor: Option<&herd::throttle::Monitor>, verbose: bool) -> String {
    let mut s = String::new();
    match (cfg.throttle.unwrap_or_default(), monitor) {
        (herd::Throttle::Fixed(n), _) => {
            let _ = writeln!(s, "herd: throttle: at most {n} active per shepherd");
        }
        (_, Some(m)) => s.push_str(&m.describe(verbose)),
        (herd::Throttle::Auto, None) => s.push_str("herd: throttle auto: no contention monitor\n"),
        (herd::Throttle::Off, None) => s.push_str("herd: throttle off\n"),
    }
    if let Some(n) = cfg.steal_chunk {
        let _ = writeln!(s, "herd: steal chunk {n} (HERD_STEAL_CHUNK)");
    }
    if let Some(path) = &cfg.trace {
        let _ = writeln!(s, "herd: trace written to {} at exit (HERD_TRACE)", path.display());
    }
    s
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::herd_settings;

    fn with_throttle(t: herd::Throttle) -> String {
        let cfg = herd::Config { throttle: Some(t), ..herd::Config::default() };
        herd_settings(&cfg, None, false)
    }

    #[test]
    fn the_report_names_the_throttle_setting() {
        assert!(with_throttle(herd::Throttle::Auto).contains("throttle auto"));
        assert!(with_throttle(herd::Throttle::Fixed(3)).contains("at most 3 active per shepherd"));
        assert!(with_throttle(herd::Throttle::Off).contains("throttle off"));
        let cfg = herd::Config { steal_chunk: Some(7), ..herd::Config::default() };
        assert!(herd_settings(&cfg, None, false).contains("steal chunk 7 (HERD_STEAL_CHUNK)"));
    }
}
