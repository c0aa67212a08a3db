//! The `OMP_DISPLAY_ENV` report.
//!
//! [`display`] renders the resolved ICVs ([`DisplayIcvs`]) exactly as libgomp
//! 12 prints them (`_OPENMP = '201511'`, values upper-case in single quotes,
//! two-space indent; `verbose` adds the `GOMP_*` lines).
//! [`DisplayIcvs::from_omp`] applies libgomp's defaults and resolution rules
//! to an [`OmpEnv`]; [`format_places`] writes a place list as libgomp does
//! (`{0:4},{4:4}`).

use super::*;
use std::fmt::Write as _;

/// The resolved ICVs shown by the `OMP_DISPLAY_ENV` report, one field per line
/// of libgomp's report. [`Default`] gives libgomp's defaults for a program
/// with no OpenMP variable set (one thread; the runtime fills in the real
/// team size and places).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisplayIcvs {
    /// `_OPENMP` ([`OPENMP_VERSION`]).
    pub openmp_version: u32,
    /// `OMP_DYNAMIC` (`dyn-var`).
    pub dynamic: bool,
    /// `OMP_NUM_THREADS` (`nthreads-var`, per level).
    pub num_threads: Vec<usize>,
    /// `OMP_SCHEDULE` (`run-sched-var`).
    pub schedule: OmpSchedule,
    /// `OMP_PROC_BIND` (`bind-var`, per level).
    pub proc_bind: Vec<ProcBind>,
    /// `OMP_PLACES`, as printed, e.g. `{0},{1}` (see [`format_places`]); empty
    /// when there is no place list (libgomp: binding off).
    pub places: String,
    /// `OMP_STACKSIZE` (`stacksize-var`) in bytes; `0` for the system default.
    pub stacksize: u64,
    /// `OMP_WAIT_POLICY` (`wait-policy-var`).
    pub wait_policy: OmpWaitPolicy,
    /// `OMP_THREAD_LIMIT` (`thread-limit-var`); libgomp prints 4294967295 when unlimited.
    pub thread_limit: u64,
    /// `OMP_MAX_ACTIVE_LEVELS` (`max-active-levels-var`); `OMP_NESTED` is
    /// printed `TRUE` when this is above 1, as libgomp does.
    pub max_active_levels: u64,
    /// `OMP_NUM_TEAMS` (`nteams-var`); 0: not set.
    pub num_teams: u64,
    /// `OMP_TEAMS_THREAD_LIMIT` (`teams-thread-limit-var`); 0: not set.
    pub teams_thread_limit: u64,
    /// `OMP_CANCELLATION` (`cancel-var`).
    pub cancellation: bool,
    /// `OMP_DEFAULT_DEVICE` (`default-device-var`).
    pub default_device: i32,
    /// `OMP_MAX_TASK_PRIORITY` (`max-task-priority-var`).
    pub max_task_priority: i32,
    /// `OMP_DISPLAY_AFFINITY` (`display-affinity-var`).
    pub display_affinity: bool,
    /// `OMP_AFFINITY_FORMAT` (`affinity-format-var`).
    pub affinity_format: String,
    /// `OMP_ALLOCATOR` (`def-allocator-var`).
    pub allocator: String,
    /// `OMP_TARGET_OFFLOAD` (`target-offload-var`): `DEFAULT`, `MANDATORY` or `DISABLED`.
    pub target_offload: String,
    /// `GOMP_CPU_AFFINITY` (verbose only), as printed.
    pub cpu_affinity: String,
    /// `GOMP_SPINCOUNT` (verbose only): spins before sleeping.
    pub spin_count: u64,
}

/// libgomp's `OMP_THREAD_LIMIT` when unset (`UINT_MAX`).
pub const UNLIMITED_THREADS: u64 = u32::MAX as u64;
/// libgomp's ceiling on `max-active-levels-var` (`UCHAR_MAX`).
pub const SUPPORTED_ACTIVE_LEVELS: u64 = 255;
/// libgomp's `GOMP_SPINCOUNT` when neither it nor `OMP_WAIT_POLICY` is set.
pub const DEFAULT_SPIN_COUNT: u64 = 300_000;
/// libgomp's `GOMP_SPINCOUNT` under `OMP_WAIT_POLICY=active`.
pub const ACTIVE_SPIN_COUNT: u64 = 30_000_000_000;

impl Default for DisplayIcvs {
    fn default() -> Self {
        DisplayIcvs {
            openmp_version: OPENMP_VERSION,
            dynamic: false,
            num_threads: vec![1],
            schedule: OmpSchedule::default(),
            proc_bind: vec![ProcBind::False],
            places: String::new(),
            stacksize: 0,
            wait_policy: OmpWaitPolicy::Passive,
            thread_limit: UNLIMITED_THREADS,
            max_active_levels: 1,
            num_teams: 0,
            teams_thread_limit: 0,
            cancellation: false,
            default_device: 0,
            max_task_priority: 0,
            display_affinity: false,
            affinity_format: "level %L thread %i affinity %A".into(),
            allocator: "omp_default_mem_alloc".into(),
            target_offload: "DEFAULT".into(),
            cpu_affinity: String::new(),
            spin_count: DEFAULT_SPIN_COUNT,
        }
    }
}

impl DisplayIcvs {
    /// The ICVs libgomp 12 would derive from `omp`, with `default_num_threads`
    /// (the team size when `OMP_NUM_THREADS` is unset) and no place list:
    ///
    /// * `max-active-levels`: `OMP_MAX_ACTIVE_LEVELS` if set, else 255 if
    ///   `OMP_NESTED=true` and 1 if `false`, else 255 if `OMP_NUM_THREADS` or
    ///   `OMP_PROC_BIND` lists more than one level, else 1; at most 255;
    /// * `bind-var`: `OMP_PROC_BIND`, else `TRUE` if `OMP_PLACES` is set, else `FALSE`;
    /// * `thread-limit`: `OMP_THREAD_LIMIT`, at most 4294967295 (unlimited);
    /// * spin count: `GOMP_SPINCOUNT`, else 30000000000 under
    ///   `OMP_WAIT_POLICY=active`, 0 under `passive`, 300000 otherwise.
    ///
    /// The runtime then sets [`places`](Self::places) (see [`format_places`])
    /// and overrides whatever herd resolved differently.
    pub fn from_omp(omp: &OmpEnv, default_num_threads: usize) -> DisplayIcvs {
        let d = DisplayIcvs::default();
        let levels = |v: Option<usize>| v.unwrap_or(0) > 1;
        let nested_lists =
            levels(omp.num_threads.as_ref().map(Vec::len)) || levels(omp.proc_bind.as_ref().map(Vec::len));
        let max_active_levels = match (omp.max_active_levels, omp.nested) {
            (Some(n), _) => n as u64,
            (None, Some(nested)) => {
                if nested {
                    SUPPORTED_ACTIVE_LEVELS
                } else {
                    1
                }
            }
            (None, None) => {
                if nested_lists {
                    SUPPORTED_ACTIVE_LEVELS
                } else {
                    1
                }
            }
        };
        let proc_bind = match (&omp.proc_bind, &omp.places) {
            (Some(list), _) => list.clone(),
            (None, Some(_)) => vec![ProcBind::True],
            (None, None) => vec![ProcBind::False],
        };
        let spin_count = omp.spin_count.unwrap_or(match omp.wait_policy {
            Some(OmpWaitPolicy::Active) => ACTIVE_SPIN_COUNT,
            Some(OmpWaitPolicy::Passive) => 0,
            None => DEFAULT_SPIN_COUNT,
        });
        DisplayIcvs {
            dynamic: omp.dynamic.unwrap_or(d.dynamic),
            num_threads: omp.num_threads.clone().unwrap_or_else(|| vec![default_num_threads]),
            schedule: omp.schedule.unwrap_or(d.schedule),
            proc_bind,
            stacksize: omp.stacksize.unwrap_or(d.stacksize),
            wait_policy: omp.wait_policy.unwrap_or(d.wait_policy),
            thread_limit: omp.thread_limit.map_or(d.thread_limit, |n| (n as u64).min(UNLIMITED_THREADS)),
            num_teams: omp.num_teams.map_or(d.num_teams, |n| (n as u64).min(i32::MAX as u64)),
            teams_thread_limit: omp
                .teams_thread_limit
                .map_or(d.teams_thread_limit, |n| (n as u64).min(i32::MAX as u64)),
            max_active_levels: max_active_levels.min(SUPPORTED_ACTIVE_LEVELS),
            cancellation: omp.cancellation.unwrap_or(d.cancellation),
            default_device: omp.default_device.unwrap_or(d.default_device),
            max_task_priority: omp.max_task_priority.unwrap_or(d.max_task_priority),
            spin_count,
            display_affinity: omp.display_affinity.unwrap_or(d.display_affinity),
            affinity_format: omp.affinity_format.clone().unwrap_or(d.affinity_format),
            allocator: omp.allocator.as_ref().map_or(d.allocator, |a| a.spelled.clone()),
            ..d
        }
    }
}

/// A place list as libgomp prints it: each place in braces, its PUs in
/// increasing order, runs of consecutive PUs as `start:length`:
/// `[[0], [1]]` → `{0},{1}`; `[[0, 1, 2, 3, 6]]` → `{0:4,6}`.
pub fn format_places(places: &[Vec<u32>]) -> String {
    let mut out = String::new();
    for (i, place) in places.iter().enumerate() {
        let mut pus = place.clone();
        pus.sort_unstable();
        pus.dedup();
        if i > 0 {
            out.push(',');
        }
        out.push('{');
        let mut k = 0;
        while k < pus.len() {
            let mut len = 1;
            while k + len < pus.len() && u64::from(pus[k + len]) == u64::from(pus[k]) + len as u64 {
                len += 1;
            }
            if k > 0 {
                out.push(',');
            }
            let _ = write!(out, "{}", pus[k]);
            if len > 1 {
                let _ = write!(out, ":{len}");
            }
            k += len;
        }
        out.push('}');
    }
    out
}

/// `OMP_SCHEDULE` as libgomp prints it: the modifier only where it differs
/// from libgomp's default (`static` is monotonic unless `nonmonotonic:` is
/// given; the other kinds are monotonic only with `monotonic:`), the chunk
/// only where it differs from the kind's default (0 for `static`, 1 for
/// `dynamic` and `guided`, never for `auto`).
fn schedule_text(s: &OmpSchedule) -> String {
    let monotonic = match s.modifier {
        Some(ScheduleModifier::Monotonic) => true,
        Some(ScheduleModifier::Nonmonotonic) => false,
        None => s.kind == ScheduleKind::Static,
    };
    let prefix = match (monotonic, s.kind == ScheduleKind::Static) {
        (true, false) => "MONOTONIC:",
        (false, true) => "NONMONOTONIC:",
        _ => "",
    };
    let default_chunk = match s.kind {
        ScheduleKind::Static => Some(0),
        ScheduleKind::Dynamic | ScheduleKind::Guided => Some(1),
        ScheduleKind::Auto => None,
    };
    let chunk = match (s.chunk, default_chunk) {
        (Some(c), Some(default)) if c != default => format!(",{c}"),
        _ => String::new(),
    };
    format!("{prefix}{}{chunk}", s.kind.name())
}

fn flag(b: bool) -> &'static str {
    if b {
        "TRUE"
    } else {
        "FALSE"
    }
}

fn join<T>(items: &[T], f: impl Fn(&T) -> String) -> String {
    items.iter().map(f).collect::<Vec<_>>().join(",")
}

/// The `OMP_DISPLAY_ENV` report, exactly as libgomp 12 prints it (every line
/// ends with a newline, the last one included); `verbose` adds the `GOMP_*`
/// lines of `OMP_DISPLAY_ENV=verbose`.
pub fn display(icvs: &DisplayIcvs, verbose: bool) -> String {
    let mut lines: Vec<(&str, String)> = vec![
        ("_OPENMP", icvs.openmp_version.to_string()),
        ("OMP_DYNAMIC", flag(icvs.dynamic).into()),
        ("OMP_NESTED", flag(icvs.max_active_levels > 1).into()),
        ("OMP_NUM_THREADS", join(&icvs.num_threads, usize::to_string)),
        ("OMP_SCHEDULE", schedule_text(&icvs.schedule)),
        ("OMP_PROC_BIND", join(&icvs.proc_bind, |b| b.name().to_string())),
        ("OMP_PLACES", icvs.places.clone()),
        ("OMP_STACKSIZE", icvs.stacksize.to_string()),
        ("OMP_WAIT_POLICY", icvs.wait_policy.name().into()),
        ("OMP_THREAD_LIMIT", icvs.thread_limit.to_string()),
        ("OMP_MAX_ACTIVE_LEVELS", icvs.max_active_levels.to_string()),
        ("OMP_NUM_TEAMS", icvs.num_teams.to_string()),
        ("OMP_TEAMS_THREAD_LIMIT", icvs.teams_thread_limit.to_string()),
        ("OMP_CANCELLATION", flag(icvs.cancellation).into()),
        ("OMP_DEFAULT_DEVICE", icvs.default_device.to_string()),
        ("OMP_MAX_TASK_PRIORITY", icvs.max_task_priority.to_string()),
        ("OMP_DISPLAY_AFFINITY", flag(icvs.display_affinity).into()),
        ("OMP_AFFINITY_FORMAT", icvs.affinity_format.clone()),
        ("OMP_ALLOCATOR", icvs.allocator.clone()),
        ("OMP_TARGET_OFFLOAD", icvs.target_offload.clone()),
    ];
    if verbose {
        lines.push(("GOMP_CPU_AFFINITY", icvs.cpu_affinity.clone()));
        lines.push(("GOMP_STACKSIZE", icvs.stacksize.to_string()));
        lines.push(("GOMP_SPINCOUNT", icvs.spin_count.to_string()));
    }
    let mut out = String::from("\nOPENMP DISPLAY ENVIRONMENT BEGIN\n");
    for (name, value) in lines {
        let _ = writeln!(out, "  {name} = '{value}'");
    }
    out.push_str("OPENMP DISPLAY ENVIRONMENT END\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::test_support::*;

    #[test]
    fn places_format_like_libgomp() {
        assert_eq!(format_places(&[vec![0], vec![1]]), "{0},{1}");
        assert_eq!(format_places(&[vec![0, 1]]), "{0:2}");
        assert_eq!(format_places(&[vec![1], vec![0]]), "{1},{0}");
        assert_eq!(format_places(&[vec![6, 0, 2, 1, 3, 3]]), "{0:4,6}");
        assert_eq!(format_places(&[vec![0, 2, 4], vec![8, 9, 10, 11, 13, 14]]), "{0,2,4},{8:4,13:2}");
        assert_eq!(format_places(&[]), "");
    }

    #[test]
    fn schedule_text_like_libgomp() {
        // Each pair: OMP_SCHEDULE as given, libgomp 12's report of it.
        for (given, shown) in [
            ("static", "STATIC"),
            ("static,4", "STATIC,4"),
            ("monotonic:static", "STATIC"),
            ("nonmonotonic:static", "NONMONOTONIC:STATIC"),
            ("MONOTONIC:STATIC,2", "STATIC,2"),
            ("static,1", "STATIC,1"),
            ("dynamic", "DYNAMIC"),
            ("dynamic,1", "DYNAMIC"),
            (" Dynamic , 5 ", "DYNAMIC,5"),
            ("monotonic:dynamic,3", "MONOTONIC:DYNAMIC,3"),
            ("nonmonotonic:dynamic", "DYNAMIC"),
            ("guided", "GUIDED"),
            ("monotonic : guided", "MONOTONIC:GUIDED"),
            ("nonmonotonic:guided,2", "GUIDED,2"),
            ("auto", "AUTO"),
            ("auto,4", "AUTO"),
            ("monotonic:auto", "MONOTONIC:AUTO"),
            ("nonmonotonic:auto", "AUTO"),
        ] {
            assert_eq!(schedule_text(&sched(given)), shown, "{given}");
        }
    }

    /// libgomp 12.2 (Debian 12), `OMP_DISPLAY_ENV=true` and nothing else set,
    /// on 2 CPUs.
    const LIBGOMP_DEFAULT: &str = "
OPENMP DISPLAY ENVIRONMENT BEGIN
  _OPENMP = '201511'
  OMP_DYNAMIC = 'FALSE'
  OMP_NESTED = 'FALSE'
  OMP_NUM_THREADS = '2'
  OMP_SCHEDULE = 'DYNAMIC'
  OMP_PROC_BIND = 'FALSE'
  OMP_PLACES = ''
  OMP_STACKSIZE = '0'
  OMP_WAIT_POLICY = 'PASSIVE'
  OMP_THREAD_LIMIT = '4294967295'
  OMP_MAX_ACTIVE_LEVELS = '1'
  OMP_NUM_TEAMS = '0'
  OMP_TEAMS_THREAD_LIMIT = '0'
  OMP_CANCELLATION = 'FALSE'
  OMP_DEFAULT_DEVICE = '0'
  OMP_MAX_TASK_PRIORITY = '0'
  OMP_DISPLAY_AFFINITY = 'FALSE'
  OMP_AFFINITY_FORMAT = 'level %L thread %i affinity %A'
  OMP_ALLOCATOR = 'omp_default_mem_alloc'
  OMP_TARGET_OFFLOAD = 'DEFAULT'
OPENMP DISPLAY ENVIRONMENT END
";

    /// As [`LIBGOMP_DEFAULT`], `OMP_DISPLAY_ENV=verbose`.
    const LIBGOMP_DEFAULT_VERBOSE: &str = "
OPENMP DISPLAY ENVIRONMENT BEGIN
  _OPENMP = '201511'
  OMP_DYNAMIC = 'FALSE'
  OMP_NESTED = 'FALSE'
  OMP_NUM_THREADS = '2'
  OMP_SCHEDULE = 'DYNAMIC'
  OMP_PROC_BIND = 'FALSE'
  OMP_PLACES = ''
  OMP_STACKSIZE = '0'
  OMP_WAIT_POLICY = 'PASSIVE'
  OMP_THREAD_LIMIT = '4294967295'
  OMP_MAX_ACTIVE_LEVELS = '1'
  OMP_NUM_TEAMS = '0'
  OMP_TEAMS_THREAD_LIMIT = '0'
  OMP_CANCELLATION = 'FALSE'
  OMP_DEFAULT_DEVICE = '0'
  OMP_MAX_TASK_PRIORITY = '0'
  OMP_DISPLAY_AFFINITY = 'FALSE'
  OMP_AFFINITY_FORMAT = 'level %L thread %i affinity %A'
  OMP_ALLOCATOR = 'omp_default_mem_alloc'
  OMP_TARGET_OFFLOAD = 'DEFAULT'
  GOMP_CPU_AFFINITY = ''
  GOMP_STACKSIZE = '0'
  GOMP_SPINCOUNT = '300000'
OPENMP DISPLAY ENVIRONMENT END
";

    /// `OMP_DISPLAY_ENV=verbose OMP_NUM_THREADS=4,2
    /// OMP_SCHEDULE=nonmonotonic:guided,7 OMP_PROC_BIND=spread,close
    /// OMP_PLACES=cores OMP_STACKSIZE=2M OMP_WAIT_POLICY=active
    /// OMP_DYNAMIC=true OMP_CANCELLATION=true OMP_THREAD_LIMIT=8
    /// OMP_DEFAULT_DEVICE=3 OMP_MAX_TASK_PRIORITY=5 OMP_MAX_ACTIVE_LEVELS=3`.
    const LIBGOMP_FULL_VERBOSE: &str = "
OPENMP DISPLAY ENVIRONMENT BEGIN
  _OPENMP = '201511'
  OMP_DYNAMIC = 'TRUE'
  OMP_NESTED = 'TRUE'
  OMP_NUM_THREADS = '4,2'
  OMP_SCHEDULE = 'GUIDED,7'
  OMP_PROC_BIND = 'SPREAD,CLOSE'
  OMP_PLACES = '{0},{1}'
  OMP_STACKSIZE = '2097152'
  OMP_WAIT_POLICY = 'ACTIVE'
  OMP_THREAD_LIMIT = '8'
  OMP_MAX_ACTIVE_LEVELS = '3'
  OMP_NUM_TEAMS = '0'
  OMP_TEAMS_THREAD_LIMIT = '0'
  OMP_CANCELLATION = 'TRUE'
  OMP_DEFAULT_DEVICE = '3'
  OMP_MAX_TASK_PRIORITY = '5'
  OMP_DISPLAY_AFFINITY = 'FALSE'
  OMP_AFFINITY_FORMAT = 'level %L thread %i affinity %A'
  OMP_ALLOCATOR = 'omp_default_mem_alloc'
  OMP_TARGET_OFFLOAD = 'DEFAULT'
  GOMP_CPU_AFFINITY = ''
  GOMP_STACKSIZE = '2097152'
  GOMP_SPINCOUNT = '30000000000'
OPENMP DISPLAY ENVIRONMENT END
";

    /// `OMP_DISPLAY_ENV=verbose OMP_SCHEDULE=static,4 OMP_PLACES={0,1}
    /// GOMP_SPINCOUNT=10k OMP_WAIT_POLICY=active`.
    const LIBGOMP_SPIN_VERBOSE: &str = "
OPENMP DISPLAY ENVIRONMENT BEGIN
  _OPENMP = '201511'
  OMP_DYNAMIC = 'FALSE'
  OMP_NESTED = 'FALSE'
  OMP_NUM_THREADS = '2'
  OMP_SCHEDULE = 'STATIC,4'
  OMP_PROC_BIND = 'TRUE'
  OMP_PLACES = '{0:2}'
  OMP_STACKSIZE = '0'
  OMP_WAIT_POLICY = 'ACTIVE'
  OMP_THREAD_LIMIT = '4294967295'
  OMP_MAX_ACTIVE_LEVELS = '1'
  OMP_NUM_TEAMS = '0'
  OMP_TEAMS_THREAD_LIMIT = '0'
  OMP_CANCELLATION = 'FALSE'
  OMP_DEFAULT_DEVICE = '0'
  OMP_MAX_TASK_PRIORITY = '0'
  OMP_DISPLAY_AFFINITY = 'FALSE'
  OMP_AFFINITY_FORMAT = 'level %L thread %i affinity %A'
  OMP_ALLOCATOR = 'omp_default_mem_alloc'
  OMP_TARGET_OFFLOAD = 'DEFAULT'
  GOMP_CPU_AFFINITY = ''
  GOMP_STACKSIZE = '0'
  GOMP_SPINCOUNT = '10000'
OPENMP DISPLAY ENVIRONMENT END
";

    #[test]
    fn display_matches_libgomp_defaults() {
        let icvs = DisplayIcvs::from_omp(&OmpEnv::default(), 2);
        assert_eq!(display(&icvs, false), LIBGOMP_DEFAULT);
        assert_eq!(display(&icvs, true), LIBGOMP_DEFAULT_VERBOSE);
        let d = DisplayIcvs { num_threads: vec![2], ..DisplayIcvs::default() };
        assert_eq!(d, icvs);
    }

    #[test]
    fn display_matches_libgomp_with_everything_set() {
        let omp = parse(env_of(&[
            (DISPLAY_ENV, "verbose"),
            (NUM_THREADS, "4,2"),
            (SCHEDULE, "nonmonotonic:guided,7"),
            (PROC_BIND, "spread,close"),
            (PLACES, "cores"),
            (STACKSIZE, "2M"),
            (WAIT_POLICY, "active"),
            (DYNAMIC, "true"),
            (CANCELLATION, "true"),
            (THREAD_LIMIT, "8"),
            (DEFAULT_DEVICE, "3"),
            (MAX_TASK_PRIORITY, "5"),
            (MAX_ACTIVE_LEVELS, "3"),
        ]))
        .expect("valid");
        let icvs =
            DisplayIcvs { places: format_places(&[vec![0], vec![1]]), ..DisplayIcvs::from_omp(&omp, 2) };
        assert_eq!(display(&icvs, true), LIBGOMP_FULL_VERBOSE);
    }

    #[test]
    fn display_matches_libgomp_spin_count_and_implied_binding() {
        let omp = parse(env_of(&[
            (SCHEDULE, "static,4"),
            (PLACES, "{0,1}"),
            (SPINCOUNT, "10k"),
            (WAIT_POLICY, "active"),
        ]))
        .expect("valid");
        let icvs = DisplayIcvs { places: format_places(&[vec![0, 1]]), ..DisplayIcvs::from_omp(&omp, 2) };
        assert_eq!(display(&icvs, true), LIBGOMP_SPIN_VERBOSE);
    }

    #[test]
    fn from_omp_nesting_rules() {
        let levels = |vars: &[(&str, &str)]| {
            let omp = parse(env_of(vars)).expect("valid");
            DisplayIcvs::from_omp(&omp, 2).max_active_levels
        };
        // Values observed with libgomp 12.
        assert_eq!(levels(&[]), 1);
        assert_eq!(levels(&[(NUM_THREADS, "4,2,1")]), 255);
        assert_eq!(levels(&[(PROC_BIND, "spread,close")]), 255);
        assert_eq!(levels(&[(NESTED, "true")]), 255);
        assert_eq!(levels(&[(NESTED, "false"), (NUM_THREADS, "4,2")]), 1);
        assert_eq!(levels(&[(NESTED, "true"), (MAX_ACTIVE_LEVELS, "2")]), 2);
        assert_eq!(levels(&[(NESTED, "false"), (MAX_ACTIVE_LEVELS, "3")]), 3);
        assert_eq!(levels(&[(MAX_ACTIVE_LEVELS, "0")]), 0);
        assert_eq!(levels(&[(MAX_ACTIVE_LEVELS, "99999999999")]), 255);
    }

    #[test]
    fn from_omp_limits_and_spin_counts() {
        let icvs = |vars: &[(&str, &str)]| DisplayIcvs::from_omp(&parse(env_of(vars)).expect("valid"), 2);
        assert_eq!(icvs(&[(THREAD_LIMIT, "99999999999")]).thread_limit, UNLIMITED_THREADS);
        assert_eq!(icvs(&[(WAIT_POLICY, "passive")]).spin_count, 0);
        assert_eq!(icvs(&[(WAIT_POLICY, "active")]).spin_count, ACTIVE_SPIN_COUNT);
        assert_eq!(icvs(&[(SPINCOUNT, "infinity")]).spin_count, u64::MAX);
        assert_eq!(icvs(&[(PROC_BIND, "master")]).proc_bind, [ProcBind::Primary]);
        let primary = display(&icvs(&[(PROC_BIND, "primary,master")]), false);
        assert!(primary.contains("  OMP_PROC_BIND = 'MASTER,MASTER'\n"), "{primary}");
    }
}
