//! LLVM libomp's (and Intel's) `KMP_*` variables, read so that job scripts,
//! site modules and programs written for libomp place and size their threads
//! the same way under herd (libgomp ignores all of them).
//!
//! | variable | accepted forms | becomes |
//! |---|---|---|
//! | `KMP_AFFINITY` | libomp's grammar ([`affinity`](self::affinity)): `compact`, `granularity=fine,scatter`, `compact,1,0`, `explicit,proclist=[0,2,{4,5}]`, `none`, ... | the place list and `close` binding libomp's placement amounts to ([`order`](self::order)); with a type it overrides `OMP_PLACES`, `OMP_PROC_BIND` and `GOMP_CPU_AFFINITY`, each set one with libomp's warning (`OMP_PLACES: ignored because KMP_AFFINITY has been defined`); `verbose` prints the places and turns `OMP_DISPLAY_AFFINITY` on |
//! | `KMP_BLOCKTIME` | `infinite` (any word starting `infinit`), or a non-negative number with an optional unit `s`, `m` (minutes), `h`, `d`; default milliseconds: `0`, `200`, `1s` | the time a waiting thread spins before it sleeps: `0` passive, `infinite` active; wins over `OMP_WAIT_POLICY` as in libomp (libgomp's own `GOMP_SPINCOUNT` wins over it) |
//! | `KMP_STACKSIZE` | `<n>[B\|K\|M\|G\|T][B]`, default **bytes**: `4M`, `65536` | worker stack size; overrides `OMP_STACKSIZE` and `GOMP_STACKSIZE` (libomp's priority) |
//! | `KMP_TEAMS_THREAD_LIMIT` | positive integer | `OMP_TEAMS_THREAD_LIMIT`, when that is unset |
//! | `KMP_DEVICE_THREAD_LIMIT`, `KMP_ALL_THREADS` | positive integer | `OMP_THREAD_LIMIT`, when that is unset |
//! | `KMP_SETTINGS` | `true`/`false`, `1`/`0`, `on`/`off`, `yes`/`no` | `OMP_DISPLAY_ENV=true`, when that is unset |
//!
//! `HERD_*` variables still win over all of these. libomp's variables that
//! change where or how many threads run but have no herd reading
//! ([`NOT_READ`]: `KMP_HW_SUBSET`, `KMP_PLACE_THREADS`, `KMP_LIBRARY`, ...)
//! get one warning each naming what to use instead; the rest (barrier
//! patterns, lock kinds, debugging aids) are ignored silently, as libgomp
//! ignores them all.

pub mod affinity;
pub mod order;

pub use affinity::{parse_affinity, AffinityType, Granularity, KmpAffinity, AFFINITY};

use super::parse::{keyword, unsigned, THREAD_LIMIT_FORMS};
use super::{EnvError, OmpEnv, ProcBind, INFINITE_SPIN, NANOS_PER_SPIN};
use herd::config::parse;
use herd::topology::PlacesSpec;
use herd::DisplayEnv;

/// `KMP_BLOCKTIME`
pub const BLOCKTIME: &str = "KMP_BLOCKTIME";
/// `KMP_STACKSIZE`
pub const STACKSIZE: &str = "KMP_STACKSIZE";
/// `KMP_TEAMS_THREAD_LIMIT`
pub const TEAMS_THREAD_LIMIT: &str = "KMP_TEAMS_THREAD_LIMIT";
/// `KMP_DEVICE_THREAD_LIMIT`
pub const DEVICE_THREAD_LIMIT: &str = "KMP_DEVICE_THREAD_LIMIT";
/// `KMP_ALL_THREADS` (libomp's older name of `KMP_DEVICE_THREAD_LIMIT`)
pub const ALL_THREADS: &str = "KMP_ALL_THREADS";
/// `KMP_SETTINGS`
pub const SETTINGS: &str = "KMP_SETTINGS";

/// Every `KMP_*` variable [`parse`] reads, in the order it checks them.
pub const VARS: &[&str] =
    &[AFFINITY, BLOCKTIME, STACKSIZE, TEAMS_THREAD_LIMIT, DEVICE_THREAD_LIMIT, ALL_THREADS, SETTINGS];

/// libomp variables herd does not read that change where, how many or how
/// threads run, with what to use instead (each gets a warning when set).
pub const NOT_READ: &[(&str, &str)] = &[
    ("KMP_HW_SUBSET", "OMP_PLACES (e.g. cores(8) or an explicit list) with OMP_NUM_THREADS"),
    ("KMP_PLACE_THREADS", "OMP_PLACES (e.g. cores(8) or an explicit list) with OMP_NUM_THREADS"),
    ("KMP_LIBRARY", "OMP_WAIT_POLICY (active or passive) or KMP_BLOCKTIME"),
    ("KMP_DYNAMIC_MODE", "OMP_DYNAMIC"),
    ("KMP_TOPOLOGY_METHOD", "HERD_TOPOLOGY for a synthetic topology"),
    ("KMP_NUM_THREADS", "OMP_NUM_THREADS"),
];

const BLOCKTIME_FORMS: &str =
    "infinite, or a non-negative number with an optional unit s, m (minutes), h or d \
                               (default milliseconds), e.g. 0, 200 or 1s";
const STACKSIZE_FORMS: &str = "a positive size <n>[B|K|M|G|T][B] (unit case-insensitive, default bytes), \
                               e.g. 4M, 512k or 65536";
const SETTINGS_FORMS: &str = "one of true, false, 1, 0, on, off, yes, no (case-insensitive)";
const SETTINGS_WORDS: &[(&str, bool)] = &[
    ("true", true),
    ("false", false),
    ("1", true),
    ("0", false),
    ("on", true),
    ("off", false),
    ("yes", true),
    ("no", false),
];

/// The most milliseconds `KMP_BLOCKTIME` takes short of infinite (libomp's
/// `INT_MAX − 1`).
const MAX_BLOCKTIME_MS: u64 = i32::MAX as u64 - 1;

/// The `KMP_*` settings as given: one field per variable, `None` when unset.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KmpEnv {
    /// `KMP_AFFINITY`.
    pub affinity: Option<KmpAffinity>,
    /// `KMP_BLOCKTIME` in milliseconds; `u64::MAX` for infinite.
    pub blocktime_ms: Option<u64>,
    /// `KMP_STACKSIZE` in bytes.
    pub stacksize: Option<u64>,
    /// `KMP_TEAMS_THREAD_LIMIT`.
    pub teams_thread_limit: Option<usize>,
    /// `KMP_DEVICE_THREAD_LIMIT`, else `KMP_ALL_THREADS`.
    pub thread_limit: Option<usize>,
    /// `KMP_SETTINGS`.
    pub settings: Option<bool>,
}

/// What [`KmpEnv::apply`] has to say: warnings, and the `verbose` report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Notes {
    /// Warnings (an overridden variable, an approximation, a dropped CPU).
    pub warnings: Vec<String>,
    /// Information `KMP_AFFINITY=verbose` asks for.
    pub info: Vec<String>,
}

/// Reads the `KMP_*` variables through `lookup`; the first invalid value (in
/// the order of [`VARS`]) is the error, naming the variable, the value and
/// the accepted forms.
pub fn parse(lookup: &dyn Fn(&str) -> Option<String>) -> Result<KmpEnv, EnvError> {
    // (value as given, trimmed) of a set, non-blank variable.
    let get = |name: &str| lookup(name).filter(|raw| !raw.trim().is_empty()).map(|raw| (raw.clone(), raw));
    let mut env = KmpEnv::default();
    if let Some((raw, v)) = get(AFFINITY) {
        env.affinity = Some(parse_affinity(&raw, v.trim())?);
    }
    if let Some((raw, v)) = get(BLOCKTIME) {
        env.blocktime_ms = Some(blocktime(&raw, v.trim())?);
    }
    if let Some((raw, v)) = get(STACKSIZE) {
        env.stacksize = Some(
            size_bytes_default_b(v.trim()).ok_or_else(|| EnvError::new(STACKSIZE, &raw, STACKSIZE_FORMS))?,
        );
    }
    if let Some((raw, v)) = get(TEAMS_THREAD_LIMIT) {
        env.teams_thread_limit = Some(unsigned(TEAMS_THREAD_LIMIT, &raw, v.trim(), 1, THREAD_LIMIT_FORMS)?);
    }
    for name in [DEVICE_THREAD_LIMIT, ALL_THREADS] {
        if let Some((raw, v)) = get(name) {
            let n = unsigned(name, &raw, v.trim(), 1, THREAD_LIMIT_FORMS)?;
            env.thread_limit.get_or_insert(n);
        }
    }
    if let Some((raw, v)) = get(SETTINGS) {
        env.settings = Some(keyword(SETTINGS, &raw, v.trim(), SETTINGS_WORDS, SETTINGS_FORMS)?);
    }
    Ok(env)
}

/// One warning per [`NOT_READ`] variable that is set.
pub fn not_read_warnings(lookup: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    NOT_READ
        .iter()
        .filter(|(name, _)| lookup(name).is_some_and(|v| !v.trim().is_empty()))
        .map(|(name, instead)| format!("{name} is libomp's and herd does not read it; use {instead}"))
        .collect()
}

impl KmpEnv {
    /// Applies these settings onto `omp` with libomp's priorities (see the
    /// module documentation). `set` says whether a variable is set (for the
    /// warnings about overridden ones); `topo` gives the machine, asked for
    /// only when `KMP_AFFINITY` has a type.
    pub fn apply(
        &self,
        omp: &mut OmpEnv,
        set: &dyn Fn(&str) -> bool,
        topo: impl FnOnce() -> Option<herd::Topology>,
    ) -> Notes {
        let mut notes = Notes::default();
        let ignored = |var: &str, because: &str| format!("{var}: ignored because {because} has been defined");
        if let Some(a) = self.affinity.as_ref().filter(|a| a.kind.is_some()) {
            for var in [super::PLACES, super::CPU_AFFINITY, super::PROC_BIND] {
                if set(var) {
                    notes.warnings.push(ignored(var, AFFINITY));
                }
            }
            match topo() {
                Some(topo) => {
                    let r = order::resolve(a, &topo);
                    notes.warnings.extend(r.warnings);
                    omp.places_from_cpu_affinity = false;
                    match r.places {
                        Some(list) => {
                            if a.verbose {
                                notes.info.push(format!(
                                    "{AFFINITY}: {} places {}; threads are bound close over them (thread i on \
                                     place i while threads do not outnumber places)",
                                    list.len(),
                                    super::format_places(&list),
                                ));
                            }
                            omp.places = Some(PlacesSpec::Explicit(list));
                            omp.proc_bind = Some(vec![ProcBind::Close]);
                        }
                        None => {
                            if a.verbose {
                                notes.info.push(format!("{AFFINITY}: threads are not bound"));
                            }
                            omp.places = None;
                            omp.proc_bind = Some(vec![ProcBind::False]);
                        }
                    }
                }
                None => notes
                    .warnings
                    .push(format!("{AFFINITY}: the machine's topology could not be read; ignored")),
            }
        }
        if self.affinity.as_ref().is_some_and(|a| a.verbose) {
            omp.display_affinity.get_or_insert(true);
        }
        if let Some(ms) = self.blocktime_ms {
            if omp.spin_count.is_some() {
                notes.warnings.push(ignored(BLOCKTIME, super::SPINCOUNT));
            } else {
                omp.spin_count = Some(match ms {
                    u64::MAX => INFINITE_SPIN,
                    ms => ms.saturating_mul(1_000_000 / NANOS_PER_SPIN),
                });
            }
        }
        if let Some(bytes) = self.stacksize {
            for var in [super::STACKSIZE, super::GOMP_STACKSIZE] {
                if set(var) {
                    notes.warnings.push(ignored(var, STACKSIZE));
                }
            }
            omp.stacksize = Some(bytes);
        }
        let mut fill = |field: &mut Option<usize>, value: Option<usize>, kmp: &str, omp_var: &str| {
            if let Some(n) = value {
                match field {
                    Some(_) => notes.warnings.push(ignored(kmp, omp_var)),
                    None => *field = Some(n),
                }
            }
        };
        fill(
            &mut omp.teams_thread_limit,
            self.teams_thread_limit,
            TEAMS_THREAD_LIMIT,
            super::TEAMS_THREAD_LIMIT,
        );
        fill(&mut omp.thread_limit, self.thread_limit, DEVICE_THREAD_LIMIT, super::THREAD_LIMIT);
        if self.settings == Some(true) && omp.display_env.is_none() {
            omp.display_env = Some(DisplayEnv::True);
        }
        notes
    }
}

/// `KMP_BLOCKTIME` in milliseconds (`u64::MAX` for infinite), libomp's
/// grammar: a number (decimals allowed) and one optional unit letter.
fn blocktime(raw: &str, v: &str) -> Result<u64, EnvError> {
    if v.get(..7).is_some_and(|p| p.eq_ignore_ascii_case("infinit")) {
        return Ok(u64::MAX);
    }
    let invalid = || EnvError::new(BLOCKTIME, raw, BLOCKTIME_FORMS);
    let (n, unit) = parse::number_and_suffix(v);
    let factor: f64 = match unit.map(|c| c.to_ascii_lowercase()) {
        None => 1.0,
        Some('s') => 1e3,
        Some('m') => 60e3,
        Some('h') => 3600e3,
        Some('d') => 86400e3,
        Some(_) => return Err(invalid()),
    };
    let digits_ok = !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    let value: f64 = n.parse().ok().filter(|_| digits_ok).ok_or_else(invalid)?;
    Ok(((value * factor) as u64).min(MAX_BLOCKTIME_MS))
}

/// `<n>[B|K|M|G|T][B]` in bytes, default bytes (`KMP_STACKSIZE`); `None` if
/// invalid, zero or over `u64`.
fn size_bytes_default_b(v: &str) -> Option<u64> {
    let lower = v.to_ascii_lowercase();
    let body = match lower.strip_suffix('b') {
        Some(rest) if rest.trim_end().ends_with(|c: char| "kmgt".contains(c)) => rest.trim_end(),
        _ => lower.as_str(),
    };
    let (n, unit) = parse::number_and_suffix(body);
    let shift = match unit {
        None | Some('b') => 0,
        Some('k') => 10,
        Some('m') => 20,
        Some('g') => 30,
        Some('t') => 40,
        Some(_) => return None,
    };
    parse::decimal(n).filter(|&n| n > 0)?.checked_mul(1u64 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::test_support::env_of;

    fn kmp(vars: &[(&str, &str)]) -> KmpEnv {
        parse(&env_of(vars)).expect("valid")
    }

    #[test]
    fn nothing_set_is_all_none() {
        assert_eq!(kmp(&[]), KmpEnv::default());
        assert_eq!(kmp(&[(AFFINITY, " "), (BLOCKTIME, "")]), KmpEnv::default());
    }

    #[test]
    fn blocktime_forms() {
        let bt = |v| kmp(&[(BLOCKTIME, v)]).blocktime_ms.unwrap();
        assert_eq!(bt("0"), 0);
        assert_eq!(bt("200"), 200);
        assert_eq!(bt("1s"), 1000);
        assert_eq!(bt("0.5S"), 500);
        assert_eq!(bt("2m"), 120_000);
        assert_eq!(bt("infinite"), u64::MAX);
        assert_eq!(bt("INFINITY"), u64::MAX);
        assert_eq!(bt("99999999999"), MAX_BLOCKTIME_MS);
        for bad in ["-1", "x", "10ms", "1e3", "s", "1 2", "infini\u{e9}", "\u{3a9}\u{3a9}\u{3a9}\u{3a9}"] {
            let e = parse(&env_of(&[(BLOCKTIME, bad)])).expect_err(bad);
            assert_eq!((e.name.as_str(), e.value.as_str()), (BLOCKTIME, bad));
            assert!(e.to_string().contains("minutes"), "{e}");
        }
    }

    #[test]
    fn stacksize_defaults_to_bytes() {
        let st = |v| kmp(&[(STACKSIZE, v)]).stacksize.unwrap();
        assert_eq!(st("65536"), 65536);
        assert_eq!(st("4M"), 4 << 20);
        assert_eq!(st("4mb"), 4 << 20);
        assert_eq!(st("512 k"), 512 << 10);
        assert_eq!(st("100B"), 100);
        assert_eq!(st("1T"), 1 << 40);
        for bad in ["0", "4X", "M", "-4M", "4MM"] {
            assert!(parse(&env_of(&[(STACKSIZE, bad)])).is_err(), "{bad}");
        }
    }

    #[test]
    fn limits_and_settings() {
        let k = kmp(&[(TEAMS_THREAD_LIMIT, "3"), (ALL_THREADS, "7"), (SETTINGS, "on")]);
        assert_eq!((k.teams_thread_limit, k.thread_limit, k.settings), (Some(3), Some(7), Some(true)));
        // KMP_DEVICE_THREAD_LIMIT wins over its older name.
        assert_eq!(kmp(&[(DEVICE_THREAD_LIMIT, "5"), (ALL_THREADS, "7")]).thread_limit, Some(5));
        assert!(parse(&env_of(&[(TEAMS_THREAD_LIMIT, "0")])).is_err());
        assert!(parse(&env_of(&[(SETTINGS, "maybe")])).is_err());
    }

    fn topo() -> Option<herd::Topology> {
        herd::Topology::synthetic("pack:2 core:2 pu:1").ok()
    }

    #[test]
    fn affinity_overrides_omp_places_and_proc_bind_with_libomps_warning() {
        let vars =
            [(AFFINITY, "granularity=fine,scatter"), ("OMP_PLACES", "cores"), ("OMP_PROC_BIND", "spread")];
        let lookup = env_of(&vars);
        let mut omp = crate::env::parse(&lookup).unwrap();
        let notes = kmp(&vars).apply(&mut omp, &|v| lookup(v).is_some(), topo);
        assert_eq!(omp.places, Some(PlacesSpec::Explicit(vec![vec![0], vec![2], vec![1], vec![3]])));
        assert_eq!(omp.proc_bind, Some(vec![ProcBind::Close]));
        assert_eq!(
            notes.warnings,
            vec![
                "OMP_PLACES: ignored because KMP_AFFINITY has been defined".to_string(),
                "OMP_PROC_BIND: ignored because KMP_AFFINITY has been defined".to_string()
            ]
        );
        assert!(notes.info.is_empty());
    }

    #[test]
    fn affinity_without_a_type_leaves_omp_settings() {
        let vars = [(AFFINITY, "verbose,granularity=core"), ("OMP_PLACES", "cores")];
        let lookup = env_of(&vars);
        let mut omp = crate::env::parse(&lookup).unwrap();
        let before = omp.places.clone();
        let notes = kmp(&vars).apply(&mut omp, &|v| lookup(v).is_some(), || panic!("no topology needed"));
        assert_eq!(omp.places, before);
        assert!(notes.warnings.is_empty());
        assert_eq!(omp.display_affinity, Some(true));
    }

    #[test]
    fn affinity_none_unbinds_and_verbose_reports() {
        let mut omp = OmpEnv::default();
        let notes = kmp(&[(AFFINITY, "verbose,none")]).apply(&mut omp, &|_| false, topo);
        assert_eq!((omp.places.clone(), omp.proc_bind.clone()), (None, Some(vec![ProcBind::False])));
        assert_eq!(notes.info, vec!["KMP_AFFINITY: threads are not bound".to_string()]);
        let notes = kmp(&[(AFFINITY, "verbose,compact")]).apply(&mut omp, &|_| false, topo);
        assert_eq!(notes.info.len(), 1);
        assert!(notes.info[0].contains("4 places {0},{1},{2},{3}"), "{:?}", notes.info);
    }

    #[test]
    fn blocktime_becomes_the_spin_time_unless_gomp_spincount_is_set() {
        let mut omp = OmpEnv { wait_policy: Some(crate::env::OmpWaitPolicy::Active), ..OmpEnv::default() };
        kmp(&[(BLOCKTIME, "0")]).apply(&mut omp, &|_| false, topo);
        assert_eq!(omp.herd_wait(), Some(herd::WaitPolicy::Passive));
        let mut omp = OmpEnv::default();
        kmp(&[(BLOCKTIME, "3")]).apply(&mut omp, &|_| false, topo);
        assert_eq!(omp.herd_wait(), Some(herd::WaitPolicy::Spin(std::time::Duration::from_millis(3))));
        let mut omp = OmpEnv { spin_count: Some(10), ..OmpEnv::default() };
        let notes = kmp(&[(BLOCKTIME, "infinite")]).apply(&mut omp, &|_| false, topo);
        assert_eq!(omp.spin_count, Some(10));
        assert_eq!(
            notes.warnings,
            vec!["KMP_BLOCKTIME: ignored because GOMP_SPINCOUNT has been defined".to_string()]
        );
    }

    #[test]
    fn stacksize_and_limits_priorities() {
        let mut omp = OmpEnv { stacksize: Some(1 << 20), thread_limit: Some(4), ..OmpEnv::default() };
        let notes = kmp(&[(STACKSIZE, "8M"), (ALL_THREADS, "9"), (TEAMS_THREAD_LIMIT, "2"), (SETTINGS, "1")])
            .apply(&mut omp, &|v| v == "OMP_STACKSIZE", topo);
        assert_eq!(omp.stacksize, Some(8 << 20));
        assert_eq!((omp.thread_limit, omp.teams_thread_limit), (Some(4), Some(2)));
        assert_eq!(omp.display_env, Some(DisplayEnv::True));
        assert_eq!(
            notes.warnings,
            vec![
                "OMP_STACKSIZE: ignored because KMP_STACKSIZE has been defined".to_string(),
                "KMP_DEVICE_THREAD_LIMIT: ignored because OMP_THREAD_LIMIT has been defined".to_string()
            ]
        );
    }

    #[test]
    fn not_read_variables_are_named_with_their_replacement() {
        let w = not_read_warnings(&env_of(&[("KMP_HW_SUBSET", "1s,4c"), ("KMP_FORKJOIN_BARRIER", "2,2")]));
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("KMP_HW_SUBSET is libomp's") && w[0].contains("OMP_PLACES"), "{w:?}");
    }
}
