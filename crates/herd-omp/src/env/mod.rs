//! The OpenMP environment: parsing of the `OMP_*` variables (and libgomp's
//! `GOMP_SPINCOUNT`), their mapping onto herd's settings, and the
//! `OMP_DISPLAY_ENV` report.
//!
//! Files: this one holds the variable table, the parsed types and the
//! entry points [`parse`] / [`parse_all`]; [`kmp`] libomp's `KMP_*`
//! variables (`KMP_AFFINITY`, `KMP_BLOCKTIME`, ...) and how they override
//! these; `parse` the value parsers;
//! `places` the libgomp treatment of unusable CPUs in `OMP_PLACES`
//! ([`usable_places`]); `to_herd` the mapping onto herd's settings ([`apply`]); `report` the
//! `OMP_DISPLAY_ENV` report ([`display`], [`DisplayIcvs`]).
//!
//! # Parsing
//!
//! [`parse`] reads every variable through a lookup function (a variable name
//! to its value; never `std::env` directly, so it holds no process-global
//! state and tests need not touch the environment). A variable that is unset,
//! or empty once trimmed, is `None`. Values are trimmed, keywords are
//! case-insensitive and spaces are allowed around list items, the schedule
//! modifier, the chunk and size units, as libgomp allows them. Integers are
//! ASCII decimal digits only (no sign), as in herd's `HERD_*` variables.
//!
//! Every invalid value is an [`EnvError`] naming the variable, the value as
//! given (untrimmed) and all the accepted forms, in the format of herd's
//! `HERD_*` errors: `invalid value "0" for OMP_NUM_THREADS: expected ...`.
//! [`parse`] returns the first error, in the order of the table below;
//! [`parse_all`] keeps going, leaves every invalid variable unset (what
//! libgomp does, after a warning) and returns every error.
//!
//! | variable | accepted forms | parsed as |
//! |---|---|---|
//! | `OMP_NUM_THREADS` | positive integers, comma-separated, one per nesting level: `4`, `4,2,1` | `Vec<usize>`, outermost first |
//! | `OMP_SCHEDULE` | `[monotonic:\|nonmonotonic:]kind[,chunk]`, kind `static\|dynamic\|guided\|auto`, chunk a positive integer: `dynamic,4`, `nonmonotonic:guided` | [`OmpSchedule`] |
//! | `OMP_PROC_BIND` | `true`, `false`, or a comma list of `primary\|master\|close\|spread` (one per level): `spread,close` | [`ProcBind`] list |
//! | `OMP_PLACES` | herd's place syntax ([`herd::topology::places`]): `threads`, `cores(4)`, `ll_caches`, `numa_domains`, `sockets`, `{0,1},{2:2}`, `{0:2}:4:2` | [`PlacesSpec`]; CPUs the process cannot use are dropped at start-up, as libgomp does ([`usable_places`]) |
//! | `OMP_DYNAMIC` | `true\|false` | `bool` |
//! | `OMP_NESTED` | `true\|false` (deprecated since OpenMP 5.0, still accepted) | `bool` |
//! | `OMP_CANCELLATION` | `true\|false` | `bool` |
//! | `OMP_MAX_ACTIVE_LEVELS` | non-negative integer | `usize` |
//! | `OMP_THREAD_LIMIT` | positive integer | `usize` |
//! | `OMP_NUM_TEAMS` | positive integer | `usize` |
//! | `OMP_TEAMS_THREAD_LIMIT` | positive integer | `usize` |
//! | `OMP_MAX_TASK_PRIORITY` | non-negative integer up to 2147483647 (an `int`) | `i32` |
//! | `OMP_DEFAULT_DEVICE` | non-negative integer up to 2147483647 (an `int`) | `i32` |
//! | `OMP_STACKSIZE` | `<n>[B\|K\|M\|G]`, unit case-insensitive, default K (KiB): `512K`, `4 M`, `8192` | bytes, `u64` |
//! | `OMP_WAIT_POLICY` | `active\|passive` | [`OmpWaitPolicy`] |
//! | `OMP_DISPLAY_ENV` | `true\|false\|verbose` | [`DisplayEnv`] |
//! | `OMP_DISPLAY_AFFINITY` | `true\|false` | `bool` |
//! | `OMP_AFFINITY_FORMAT` | any text, kept as given (fields are checked when used; see `affinity_format`) | `String` |
//! | `OMP_ALLOCATOR` | a predefined allocator name, or a memory space name with optional `:trait=value,...` (OpenMP 5.1): `omp_cgroup_mem_alloc`, `omp_default_mem_space:alignment=64,pool_size=1048576` | [`OmpAllocator`] |
//! | `GOMP_SPINCOUNT` | `infinite`, `infinity`, or a non-negative integer with an optional decimal suffix `k\|M\|G\|T` (case-insensitive): `300000`, `300k` | spins, `u64` ([`INFINITE_SPIN`] for infinite) |
//! | `GOMP_CPU_AFFINITY` | CPU numbers below 65536, ranges `a-b` and strided ranges `a-b:s`, separated by spaces or commas: `0 3 1-2 4-15:2` | `Vec<u32>`, in the order given; one place per CPU when neither `OMP_PLACES` nor `OMP_PROC_BIND=false` is set (libgomp's rule; see [`OmpEnv::cpu_affinity`]) |
//! | `GOMP_STACKSIZE` | as `OMP_STACKSIZE` | read only when `OMP_STACKSIZE` is unset, into [`OmpEnv::stacksize`] (libgomp's rule) |
//!
//! Deliberate differences from libgomp 12 (which warns and ignores instead
//! of failing): a chunk of `0` is rejected (the OpenMP specification says
//! positive; libgomp silently uses its default), as are a stack size of `0`
//! and a negative `GOMP_SPINCOUNT` (libgomp wraps it to "infinite").
//! `OMP_MAX_ACTIVE_LEVELS` and `OMP_THREAD_LIMIT` accept any value that fits
//! a `usize`; [`DisplayIcvs::from_omp`] clamps them as libgomp does. A chunk
//! given with `auto` is accepted and kept, and ignored by the report (as in
//! libgomp).
//!

pub mod kmp;
mod parse;
mod places;
mod report;
mod to_herd;

pub use places::*;
pub use report::*;
pub use to_herd::*;

use herd::topology::PlacesSpec;
use herd::{DisplayEnv, WaitPolicy};
use parse::*;

/// `OMP_NUM_THREADS`
pub const NUM_THREADS: &str = "OMP_NUM_THREADS";
/// `OMP_SCHEDULE`
pub const SCHEDULE: &str = "OMP_SCHEDULE";
/// `OMP_PROC_BIND`
pub const PROC_BIND: &str = "OMP_PROC_BIND";
/// `OMP_PLACES`
pub const PLACES: &str = "OMP_PLACES";
/// `OMP_DYNAMIC`
pub const DYNAMIC: &str = "OMP_DYNAMIC";
/// `OMP_NESTED` (deprecated)
pub const NESTED: &str = "OMP_NESTED";
/// `OMP_CANCELLATION`
pub const CANCELLATION: &str = "OMP_CANCELLATION";
/// `OMP_MAX_ACTIVE_LEVELS`
pub const MAX_ACTIVE_LEVELS: &str = "OMP_MAX_ACTIVE_LEVELS";
/// `OMP_THREAD_LIMIT`
pub const THREAD_LIMIT: &str = "OMP_THREAD_LIMIT";
/// `OMP_NUM_TEAMS`
pub const NUM_TEAMS: &str = "OMP_NUM_TEAMS";
/// `OMP_TEAMS_THREAD_LIMIT`
pub const TEAMS_THREAD_LIMIT: &str = "OMP_TEAMS_THREAD_LIMIT";
/// `OMP_MAX_TASK_PRIORITY`
pub const MAX_TASK_PRIORITY: &str = "OMP_MAX_TASK_PRIORITY";
/// `OMP_DEFAULT_DEVICE`
pub const DEFAULT_DEVICE: &str = "OMP_DEFAULT_DEVICE";
/// `OMP_STACKSIZE`
pub const STACKSIZE: &str = "OMP_STACKSIZE";
/// `OMP_WAIT_POLICY`
pub const WAIT_POLICY: &str = "OMP_WAIT_POLICY";
/// `OMP_DISPLAY_ENV`
pub const DISPLAY_ENV: &str = "OMP_DISPLAY_ENV";
/// `OMP_DISPLAY_AFFINITY`
pub const DISPLAY_AFFINITY: &str = "OMP_DISPLAY_AFFINITY";
/// `OMP_AFFINITY_FORMAT`
pub const AFFINITY_FORMAT: &str = "OMP_AFFINITY_FORMAT";
/// `OMP_ALLOCATOR`
pub const ALLOCATOR: &str = "OMP_ALLOCATOR";
/// `GOMP_SPINCOUNT` (libgomp's)
pub const SPINCOUNT: &str = "GOMP_SPINCOUNT";
/// `GOMP_CPU_AFFINITY` (libgomp's)
pub const CPU_AFFINITY: &str = "GOMP_CPU_AFFINITY";
/// `GOMP_STACKSIZE` (libgomp's)
pub const GOMP_STACKSIZE: &str = "GOMP_STACKSIZE";

/// Every variable [`parse`] reads, in the order it checks them.
pub const VARS: &[&str] = &[
    NUM_THREADS,
    SCHEDULE,
    PROC_BIND,
    PLACES,
    DYNAMIC,
    NESTED,
    CANCELLATION,
    MAX_ACTIVE_LEVELS,
    THREAD_LIMIT,
    NUM_TEAMS,
    TEAMS_THREAD_LIMIT,
    MAX_TASK_PRIORITY,
    DEFAULT_DEVICE,
    STACKSIZE,
    WAIT_POLICY,
    DISPLAY_ENV,
    DISPLAY_AFFINITY,
    AFFINITY_FORMAT,
    ALLOCATOR,
    SPINCOUNT,
    CPU_AFFINITY,
    GOMP_STACKSIZE,
];

/// The `GOMP_SPINCOUNT` value of `infinite` / `infinity` (libgomp's too).
pub const INFINITE_SPIN: u64 = u64::MAX;

/// Approximate duration of one libgomp spin iteration, used to turn
/// `GOMP_SPINCOUNT` into herd's spin time: libgomp's default of 300000 spins
/// becomes 300 µs, close to herd's default of 200 µs.
pub const NANOS_PER_SPIN: u64 = 1;

/// The smallest worker stack [`apply`] asks herd for (herd's pool builder
/// refuses less than 64 KiB).
pub const MIN_WORKER_STACK: u64 = 64 << 10;

/// The `_OPENMP` version libgomp 12 reports (OpenMP 4.5).
pub const OPENMP_VERSION: u32 = 201511;

/// An invalid value of an OpenMP variable: which variable, the value as given
/// and the accepted forms (the same message format as herd's `HERD_*` errors).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid value {value:?} for {name}: expected {expected}")]
pub struct EnvError {
    /// The variable, e.g. `OMP_NUM_THREADS`.
    pub name: String,
    /// The value as given (untrimmed).
    pub value: String,
    /// The accepted forms, spelled out for a human.
    pub expected: String,
}

impl EnvError {
    fn new(name: &str, value: &str, expected: impl Into<String>) -> EnvError {
        EnvError { name: name.to_string(), value: value.to_string(), expected: expected.into() }
    }
}

/// `OMP_SCHEDULE` kinds (`run-sched-var`), with gcc's encoding of
/// `omp_sched_t` (`GFS_*` in libgomp) as discriminants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ScheduleKind {
    /// `static`
    Static = 1,
    /// `dynamic`
    Dynamic = 2,
    /// `guided`
    Guided = 3,
    /// `auto`: the implementation decides.
    Auto = 4,
}

impl ScheduleKind {
    /// Decodes `omp_sched_t` / gcc's schedule number (the
    /// `omp_sched_monotonic` bit removed).
    pub(crate) fn from_raw(v: u32) -> Option<ScheduleKind> {
        match v & !crate::icv::MONOTONIC {
            1 => Some(ScheduleKind::Static),
            2 => Some(ScheduleKind::Dynamic),
            3 => Some(ScheduleKind::Guided),
            4 => Some(ScheduleKind::Auto),
            _ => None,
        }
    }

    /// The upper-case name used in the report (`STATIC`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ScheduleKind::Static => "STATIC",
            ScheduleKind::Dynamic => "DYNAMIC",
            ScheduleKind::Guided => "GUIDED",
            ScheduleKind::Auto => "AUTO",
        }
    }
}

/// The `monotonic:` / `nonmonotonic:` prefix of `OMP_SCHEDULE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScheduleModifier {
    /// `monotonic:`: each thread takes its chunks in increasing order.
    Monotonic,
    /// `nonmonotonic:`: chunks may be taken in any order (allows stealing).
    Nonmonotonic,
}

/// `OMP_SCHEDULE` (the `run-sched-var` ICV).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OmpSchedule {
    /// The kind.
    pub kind: ScheduleKind,
    /// The chunk size; `None` when not given (the kind's default).
    pub chunk: Option<usize>,
    /// The modifier; `None` when not given.
    pub modifier: Option<ScheduleModifier>,
}

impl Default for OmpSchedule {
    /// libgomp's default `run-sched-var`: `dynamic` with its default chunk.
    fn default() -> Self {
        OmpSchedule { kind: ScheduleKind::Dynamic, chunk: None, modifier: None }
    }
}

/// One `OMP_PROC_BIND` value (`bind-var`, per nesting level), with gcc's
/// encoding of `omp_proc_bind_t` as discriminants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ProcBind {
    /// `false`: no binding (only alone).
    False = 0,
    /// `true`: bind, the policy left to the implementation (only alone).
    True = 1,
    /// `primary` (or its deprecated spelling `master`): every thread on the
    /// primary thread's place.
    Primary = 2,
    /// `close`: threads on consecutive places, starting at the primary's.
    Close = 3,
    /// `spread`: threads spread evenly over the places.
    Spread = 4,
}

impl ProcBind {
    /// Decodes `omp_proc_bind_t` / the `proc_bind` clause gcc passes in
    /// `GOMP_parallel`'s flags (0, `false`, and unknown values: none).
    pub(crate) fn from_raw(v: u32) -> Option<ProcBind> {
        match v {
            1 => Some(ProcBind::True),
            2 => Some(ProcBind::Primary),
            3 => Some(ProcBind::Close),
            4 => Some(ProcBind::Spread),
            _ => None,
        }
    }

    /// The name used in the report, as libgomp 12 prints it (`primary` is
    /// printed `MASTER`).
    pub fn name(self) -> &'static str {
        match self {
            ProcBind::False => "FALSE",
            ProcBind::True => "TRUE",
            ProcBind::Primary => "MASTER",
            ProcBind::Close => "CLOSE",
            ProcBind::Spread => "SPREAD",
        }
    }
}

/// `OMP_WAIT_POLICY`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum OmpWaitPolicy {
    /// `active`: waiting threads keep spinning.
    Active,
    /// `passive`: waiting threads yield the processor (libgomp's report shows
    /// `PASSIVE` when the variable is unset, so this is the default).
    #[default]
    Passive,
}

impl OmpWaitPolicy {
    /// `ACTIVE` or `PASSIVE`.
    pub fn name(self) -> &'static str {
        match self {
            OmpWaitPolicy::Active => "ACTIVE",
            OmpWaitPolicy::Passive => "PASSIVE",
        }
    }
}

/// `OMP_ALLOCATOR` (`def-allocator-var`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OmpAllocator {
    /// As the report prints it: the name in lower case, then the traits as
    /// given (`:key=value,...`, lower case, without spaces).
    pub spelled: String,
    /// What it names.
    pub kind: AllocatorKind,
}

/// What `OMP_ALLOCATOR` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllocatorKind {
    /// A predefined allocator (its `omp_allocator_handle_t`); a memory space
    /// without traits names its predefined allocator.
    Predefined(usize),
    /// An allocator to make, as `omp_init_allocator` would, in the memory
    /// space (`omp_memspace_handle_t`) with the traits (key, value: omp.h's
    /// numbers).
    Traits {
        /// The memory space.
        memspace: usize,
        /// The traits, in the order given.
        traits: Vec<(i32, usize)>,
    },
}

/// The OpenMP environment as given: one field per variable, `None` when unset.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OmpEnv {
    /// `OMP_NUM_THREADS`: threads per nesting level, outermost first; never empty.
    pub num_threads: Option<Vec<usize>>,
    /// `OMP_SCHEDULE`.
    pub schedule: Option<OmpSchedule>,
    /// `OMP_PROC_BIND`: per nesting level, outermost first; never empty;
    /// [`ProcBind::False`] and [`ProcBind::True`] only alone.
    pub proc_bind: Option<Vec<ProcBind>>,
    /// `OMP_PLACES`, parsed, not yet resolved against the topology.
    pub places: Option<PlacesSpec>,
    /// `OMP_DYNAMIC`.
    pub dynamic: Option<bool>,
    /// `OMP_NESTED` (deprecated).
    pub nested: Option<bool>,
    /// `OMP_CANCELLATION`.
    pub cancellation: Option<bool>,
    /// `OMP_MAX_ACTIVE_LEVELS`.
    pub max_active_levels: Option<usize>,
    /// `OMP_THREAD_LIMIT`: at least 1.
    pub thread_limit: Option<usize>,
    /// `OMP_NUM_TEAMS`: at least 1.
    pub num_teams: Option<usize>,
    /// `OMP_TEAMS_THREAD_LIMIT`: at least 1.
    pub teams_thread_limit: Option<usize>,
    /// `OMP_MAX_TASK_PRIORITY`: non-negative.
    pub max_task_priority: Option<i32>,
    /// `OMP_DEFAULT_DEVICE`: non-negative.
    pub default_device: Option<i32>,
    /// `OMP_STACKSIZE`, in bytes: at least 1.
    pub stacksize: Option<u64>,
    /// `OMP_WAIT_POLICY`.
    pub wait_policy: Option<OmpWaitPolicy>,
    /// `OMP_DISPLAY_ENV`.
    pub display_env: Option<DisplayEnv>,
    /// `OMP_DISPLAY_AFFINITY`.
    pub display_affinity: Option<bool>,
    /// `OMP_AFFINITY_FORMAT`, as given (untrimmed).
    pub affinity_format: Option<String>,
    /// `OMP_ALLOCATOR`.
    pub allocator: Option<OmpAllocator>,
    /// `GOMP_SPINCOUNT`, in spins; [`INFINITE_SPIN`] for `infinite`.
    pub spin_count: Option<u64>,
    /// `GOMP_CPU_AFFINITY`: the CPUs in the order given. As in libgomp it
    /// becomes the place list (one place per CPU, and `bind-var` true) only
    /// when `OMP_PLACES` is unset and `OMP_PROC_BIND` is not `false`: then
    /// [`parse_all`] has already put it into [`places`](Self::places).
    pub cpu_affinity: Option<Vec<u32>>,
    /// Whether [`places`](Self::places) was made from `GOMP_CPU_AFFINITY`
    /// (so that warnings about it name that variable).
    pub places_from_cpu_affinity: bool,
}

/// Reads every OpenMP variable through `lookup`; the first invalid value (in
/// the order of [`VARS`]) is the error.
pub fn parse(lookup: impl Fn(&str) -> Option<String>) -> Result<OmpEnv, EnvError> {
    let (env, mut errors) = parse_all(lookup);
    if errors.is_empty() {
        Ok(env)
    } else {
        Err(errors.swap_remove(0))
    }
}

/// Reads every OpenMP variable through `lookup`, as libgomp does: an invalid
/// value leaves its variable unset. Returns the environment and every error,
/// in the order of [`VARS`].
pub fn parse_all(lookup: impl Fn(&str) -> Option<String>) -> (OmpEnv, Vec<EnvError>) {
    let mut r = Reader { lookup: &lookup, errors: Vec::new() };
    // Struct fields are evaluated in the order written: the order of `VARS`.
    let env = OmpEnv {
        num_threads: r.read(NUM_THREADS, num_threads),
        schedule: r.read(SCHEDULE, schedule),
        proc_bind: r.read(PROC_BIND, proc_bind),
        places: r.read(PLACES, places),
        dynamic: r.read(DYNAMIC, |raw, v| boolean(DYNAMIC, raw, v)),
        nested: r.read(NESTED, |raw, v| boolean(NESTED, raw, v)),
        cancellation: r.read(CANCELLATION, |raw, v| boolean(CANCELLATION, raw, v)),
        max_active_levels: r.read(MAX_ACTIVE_LEVELS, |raw, v| {
            unsigned(MAX_ACTIVE_LEVELS, raw, v, 0, MAX_ACTIVE_LEVELS_FORMS)
        }),
        thread_limit: r.read(THREAD_LIMIT, |raw, v| unsigned(THREAD_LIMIT, raw, v, 1, THREAD_LIMIT_FORMS)),
        num_teams: r.read(NUM_TEAMS, |raw, v| unsigned(NUM_TEAMS, raw, v, 1, NUM_TEAMS_FORMS)),
        teams_thread_limit: r.read(TEAMS_THREAD_LIMIT, |raw, v| {
            unsigned(TEAMS_THREAD_LIMIT, raw, v, 1, TEAMS_THREAD_LIMIT_FORMS)
        }),
        max_task_priority: r.read(MAX_TASK_PRIORITY, |raw, v| {
            unsigned(MAX_TASK_PRIORITY, raw, v, 0, MAX_TASK_PRIORITY_FORMS)
        }),
        default_device: r
            .read(DEFAULT_DEVICE, |raw, v| unsigned(DEFAULT_DEVICE, raw, v, 0, DEFAULT_DEVICE_FORMS)),
        stacksize: r.read(STACKSIZE, stacksize),
        wait_policy: r
            .read(WAIT_POLICY, |raw, v| keyword(WAIT_POLICY, raw, v, WAIT_POLICIES, WAIT_POLICY_FORMS)),
        display_env: r
            .read(DISPLAY_ENV, |raw, v| keyword(DISPLAY_ENV, raw, v, DISPLAY_ENVS, DISPLAY_ENV_FORMS)),
        display_affinity: r.read(DISPLAY_AFFINITY, |raw, v| boolean(DISPLAY_AFFINITY, raw, v)),
        affinity_format: r.read(AFFINITY_FORMAT, |raw, _| Ok(raw.to_string())),
        allocator: r.read(ALLOCATOR, allocator),
        spin_count: r.read(SPINCOUNT, spincount),
        cpu_affinity: r.read(CPU_AFFINITY, cpu_affinity),
        places_from_cpu_affinity: false,
    };
    let mut env = env;
    // libgomp reads GOMP_STACKSIZE only when OMP_STACKSIZE gave nothing.
    if env.stacksize.is_none() {
        env.stacksize = r.read(GOMP_STACKSIZE, |raw, v| stacksize_of(GOMP_STACKSIZE, raw, v));
    }
    // GOMP_CPU_AFFINITY is the place list unless OMP_PLACES is set or
    // OMP_PROC_BIND is false (libgomp's initialize_env order).
    let unbound = env.proc_bind.as_deref() == Some(&[ProcBind::False][..]);
    if let (None, false, Some(cpus)) = (&env.places, unbound, &env.cpu_affinity) {
        env.places = Some(PlacesSpec::Explicit(cpus.iter().map(|&c| vec![c]).collect()));
        env.places_from_cpu_affinity = true;
    }
    (env, r.errors)
}

/// Reads variables one by one, collecting errors.
struct Reader<'a> {
    lookup: &'a dyn Fn(&str) -> Option<String>,
    errors: Vec<EnvError>,
}

impl Reader<'_> {
    /// `None` if `name` is unset or blank; else `parse(raw, trimmed)`, an
    /// error being recorded and giving `None`.
    fn read<T>(&mut self, name: &str, parse: impl FnOnce(&str, &str) -> Result<T, EnvError>) -> Option<T> {
        let raw = (self.lookup)(name)?;
        let v = raw.trim();
        if v.is_empty() {
            return None;
        }
        parse(&raw, v).map_err(|e| self.errors.push(e)).ok()
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use std::collections::HashMap;

    /// A lookup over `vars`.
    pub(crate) fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name: &str| map.get(name).cloned()
    }

    pub(crate) fn one(var: &str, value: &str) -> OmpEnv {
        parse(env_of(&[(var, value)])).unwrap_or_else(|e| panic!("{var}={value:?}: {e}"))
    }

    /// The error for `var=value`, checked to name the variable, the value as
    /// given and the accepted forms.
    pub(crate) fn invalid(var: &str, value: &str, forms: &str) -> EnvError {
        let e = parse(env_of(&[(var, value)])).expect_err(value);
        assert_eq!((e.name.as_str(), e.value.as_str()), (var, value));
        let text = e.to_string();
        assert!(text.starts_with(&format!("invalid value {value:?} for {var}: expected ")), "{text}");
        assert!(text.contains(forms), "{text}");
        e
    }

    /// `OMP_SCHEDULE=v`, parsed.
    pub(crate) fn sched(v: &str) -> OmpSchedule {
        one(SCHEDULE, v).schedule.expect("schedule")
    }
}
