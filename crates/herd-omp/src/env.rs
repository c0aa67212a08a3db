//! The OpenMP environment: parsing of the `OMP_*` variables (and libgomp's
//! `GOMP_SPINCOUNT`), their mapping onto herd's settings, and the
//! `OMP_DISPLAY_ENV` report.
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
//! | `OMP_PLACES` | herd's place syntax ([`herd::topology::places`]): `threads`, `cores(4)`, `ll_caches`, `numa_domains`, `sockets`, `{0,1},{2:2}`, `{0:2}:4:2` | [`PlacesSpec`] |
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
//! | `GOMP_SPINCOUNT` | `infinite`, `infinity`, or a non-negative integer with an optional decimal suffix `k\|M\|G\|T` (case-insensitive): `300000`, `300k` | spins, `u64` ([`INFINITE_SPIN`] for infinite) |
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
//! # Mapping onto herd
//!
//! [`apply`] fills every `None` field of a [`herd::Config`] (normally from
//! [`herd::Config::from_env`]) from the OpenMP value, so a `HERD_*` variable
//! always wins over its OpenMP counterpart:
//!
//! * `num_threads` ← the first (outermost) `OMP_NUM_THREADS` value;
//! * `places` ← `OMP_PLACES`;
//! * `bind` ← the first `OMP_PROC_BIND` value: `true` → [`Bind::True`],
//!   `primary`/`master` and `close` → [`Bind::Close`] (herd has no "all on the
//!   primary's place" mode; close keeps the team nearest to it), `spread` →
//!   [`Bind::Spread`], `false` → [`Bind::False`];
//! * `wait` ← `GOMP_SPINCOUNT` if set (`0` → [`WaitPolicy::Passive`],
//!   infinite → [`WaitPolicy::Active`], `n` → [`WaitPolicy::Spin`] of `n` ×
//!   [`NANOS_PER_SPIN`] ns; libgomp too lets `GOMP_SPINCOUNT` override
//!   `OMP_WAIT_POLICY`), else `OMP_WAIT_POLICY` (`active` →
//!   [`WaitPolicy::Active`], `passive` → [`WaitPolicy::Passive`]);
//! * `display_env` ← `OMP_DISPLAY_ENV`;
//! * `stack_size` ← `OMP_STACKSIZE`, raised to [`MIN_WORKER_STACK`] (herd's
//!   pool refuses smaller worker stacks; libgomp too cannot honour tiny sizes:
//!   it warns below 16 KiB).
//!
//! The other variables are OpenMP ICVs with no herd counterpart; the runtime
//! keeps them itself (including `OMP_THREAD_LIMIT`, which caps team sizes, and
//! the inner levels of the `OMP_NUM_THREADS` and `OMP_PROC_BIND` lists).
//!
//! # The `OMP_DISPLAY_ENV` report
//!
//! [`display`] renders the resolved ICVs ([`DisplayIcvs`]) exactly as libgomp
//! 12 prints them (`_OPENMP = '201511'`, values upper-case in single quotes,
//! two-space indent; `verbose` adds the `GOMP_*` lines).
//! [`DisplayIcvs::from_omp`] applies libgomp's defaults and resolution rules
//! to an [`OmpEnv`]; [`format_places`] writes a place list as libgomp does
//! (`{0:4},{4:4}`).

use herd::topology::PlacesSpec;
use herd::{Bind, DisplayEnv, WaitPolicy};
use std::fmt::Write as _;
use std::time::Duration;

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
/// `GOMP_SPINCOUNT` (libgomp's)
pub const SPINCOUNT: &str = "GOMP_SPINCOUNT";

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
    SPINCOUNT,
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

const NUM_THREADS_FORMS: &str = "a positive integer, or a comma-separated list of positive integers \
                                 (one per nesting level), e.g. 4 or 4,2,1";
const SCHEDULE_FORMS: &str = "[monotonic:|nonmonotonic:]kind[,chunk] with kind one of static, dynamic, \
                              guided, auto (case-insensitive) and chunk a positive integer, \
                              e.g. static, dynamic,4 or nonmonotonic:guided,8";
const PROC_BIND_FORMS: &str = "true, false, or a comma-separated list of primary, master, close, \
                               spread (one per nesting level; case-insensitive), e.g. spread or spread,close";
const BOOL_FORMS: &str = "one of true, false (case-insensitive)";
const MAX_ACTIVE_LEVELS_FORMS: &str = "a non-negative integer (the most nested active parallel levels)";
const THREAD_LIMIT_FORMS: &str = "a positive integer (the most threads in the program)";
const NUM_TEAMS_FORMS: &str = "a positive integer (the most teams a teams construct creates)";
const TEAMS_THREAD_LIMIT_FORMS: &str =
    "a positive integer (the most threads of each team a teams construct creates)";
const MAX_TASK_PRIORITY_FORMS: &str = "a non-negative integer up to 2147483647";
const DEFAULT_DEVICE_FORMS: &str = "a non-negative integer up to 2147483647 (a device number)";
const STACKSIZE_FORMS: &str = "a positive size <n>[B|K|M|G] (unit case-insensitive, default K = KiB; \
                               at most 16 EiB), e.g. 512K, 4M or 8192";
const WAIT_POLICY_FORMS: &str = "one of active, passive (case-insensitive)";
const DISPLAY_ENV_FORMS: &str = "one of true, false, verbose (case-insensitive)";
const SPINCOUNT_FORMS: &str = "infinite, infinity, or a non-negative integer with an optional decimal \
                               suffix k, M, G or T (case-insensitive; at most 18446744073709551615), \
                               e.g. 300000 or 300k";

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

/// `OMP_SCHEDULE` kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScheduleKind {
    /// `static`
    Static,
    /// `dynamic`
    Dynamic,
    /// `guided`
    Guided,
    /// `auto`: the implementation decides.
    Auto,
}

impl ScheduleKind {
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

/// One `OMP_PROC_BIND` value (`bind-var`, per nesting level).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProcBind {
    /// `false`: no binding (only alone).
    False,
    /// `true`: bind, the policy left to the implementation (only alone).
    True,
    /// `primary` (or its deprecated spelling `master`): every thread on the
    /// primary thread's place.
    Primary,
    /// `close`: threads on consecutive places, starting at the primary's.
    Close,
    /// `spread`: threads spread evenly over the places.
    Spread,
}

impl ProcBind {
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

    /// The closest [`herd::Bind`].
    pub fn to_herd(self) -> Bind {
        match self {
            ProcBind::False => Bind::False,
            ProcBind::True => Bind::True,
            ProcBind::Primary | ProcBind::Close => Bind::Close,
            ProcBind::Spread => Bind::Spread,
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
    /// `GOMP_SPINCOUNT`, in spins; [`INFINITE_SPIN`] for `infinite`.
    pub spin_count: Option<u64>,
}

impl OmpEnv {
    /// The herd wait policy this environment asks for, if any (see the
    /// module documentation): `GOMP_SPINCOUNT` first, then `OMP_WAIT_POLICY`.
    pub fn herd_wait(&self) -> Option<WaitPolicy> {
        match (self.spin_count, self.wait_policy) {
            (Some(0), _) => Some(WaitPolicy::Passive),
            (Some(INFINITE_SPIN), _) => Some(WaitPolicy::Active),
            (Some(n), _) => Some(WaitPolicy::Spin(Duration::from_nanos(n.saturating_mul(NANOS_PER_SPIN)))),
            (None, Some(OmpWaitPolicy::Active)) => Some(WaitPolicy::Active),
            (None, Some(OmpWaitPolicy::Passive)) => Some(WaitPolicy::Passive),
            (None, None) => None,
        }
    }
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
        spin_count: r.read(SPINCOUNT, spincount),
    };
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

/// Fills every unset field of `herd` (the `HERD_*` settings) from the OpenMP
/// environment; see the module documentation for the mapping. A `HERD_*`
/// value always wins.
pub fn apply(omp: &OmpEnv, mut herd: herd::Config) -> herd::Config {
    if herd.num_threads.is_none() {
        herd.num_threads = omp.num_threads.as_ref().and_then(|levels| levels.first().copied());
    }
    if herd.places.is_none() {
        herd.places = omp.places.clone();
    }
    if herd.bind.is_none() {
        herd.bind = omp.proc_bind.as_ref().and_then(|levels| levels.first()).map(|b| b.to_herd());
    }
    if herd.wait.is_none() {
        herd.wait = omp.herd_wait();
    }
    if herd.display_env.is_none() {
        herd.display_env = omp.display_env;
    }
    if herd.stack_size.is_none() {
        herd.stack_size =
            omp.stacksize.map(|bytes| usize::try_from(bytes.max(MIN_WORKER_STACK)).unwrap_or(usize::MAX));
    }
    herd
}

const BOOLS: &[(&str, bool)] = &[("true", true), ("false", false)];
const WAIT_POLICIES: &[(&str, OmpWaitPolicy)] =
    &[("active", OmpWaitPolicy::Active), ("passive", OmpWaitPolicy::Passive)];
const DISPLAY_ENVS: &[(&str, DisplayEnv)] =
    &[("true", DisplayEnv::True), ("false", DisplayEnv::False), ("verbose", DisplayEnv::Verbose)];
const KINDS: &[(&str, ScheduleKind)] = &[
    ("static", ScheduleKind::Static),
    ("dynamic", ScheduleKind::Dynamic),
    ("guided", ScheduleKind::Guided),
    ("auto", ScheduleKind::Auto),
];
const MODIFIERS: &[(&str, ScheduleModifier)] =
    &[("monotonic", ScheduleModifier::Monotonic), ("nonmonotonic", ScheduleModifier::Nonmonotonic)];
const BIND_LEVELS: &[(&str, ProcBind)] = &[
    ("primary", ProcBind::Primary),
    ("master", ProcBind::Primary),
    ("close", ProcBind::Close),
    ("spread", ProcBind::Spread),
];
const BIND_ALONE: &[(&str, ProcBind)] = &[("true", ProcBind::True), ("false", ProcBind::False)];

/// One word out of `table`, compared case-insensitively; `forms` in the error.
fn keyword<T: Copy>(var: &str, raw: &str, v: &str, table: &[(&str, T)], forms: &str) -> Result<T, EnvError> {
    lookup_word(v, table).ok_or_else(|| EnvError::new(var, raw, forms))
}

fn lookup_word<T: Copy>(v: &str, table: &[(&str, T)]) -> Option<T> {
    table.iter().find(|(word, _)| word.eq_ignore_ascii_case(v)).map(|&(_, t)| t)
}

fn boolean(var: &str, raw: &str, v: &str) -> Result<bool, EnvError> {
    keyword(var, raw, v, BOOLS, BOOL_FORMS)
}

/// A decimal integer of ASCII digits (no sign), `None` if it is not one or
/// does not fit a `u64`.
fn digits(v: &str) -> Option<u64> {
    (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())).then(|| v.parse().ok()).flatten()
}

/// A decimal integer `>= min` that fits in `T`; anything else is an error with
/// `forms` as the accepted forms.
fn unsigned<T: TryFrom<u64>>(var: &str, raw: &str, v: &str, min: u64, forms: &str) -> Result<T, EnvError> {
    digits(v)
        .filter(|&n| n >= min)
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| EnvError::new(var, raw, forms))
}

fn num_threads(raw: &str, v: &str) -> Result<Vec<usize>, EnvError> {
    v.split(',').map(|item| unsigned(NUM_THREADS, raw, item.trim(), 1, NUM_THREADS_FORMS)).collect()
}

fn schedule(raw: &str, v: &str) -> Result<OmpSchedule, EnvError> {
    let invalid = || EnvError::new(SCHEDULE, raw, SCHEDULE_FORMS);
    let (modifier, rest) = match v.split_once(':') {
        Some((m, rest)) => (Some(lookup_word(m.trim(), MODIFIERS).ok_or_else(invalid)?), rest),
        None => (None, v),
    };
    let (kind, chunk) = match rest.split_once(',') {
        Some((kind, chunk)) => (kind, Some(chunk)),
        None => (rest, None),
    };
    let kind = lookup_word(kind.trim(), KINDS).ok_or_else(invalid)?;
    let chunk = chunk.map(|c| unsigned(SCHEDULE, raw, c.trim(), 1, SCHEDULE_FORMS)).transpose()?;
    Ok(OmpSchedule { kind, chunk, modifier })
}

fn proc_bind(raw: &str, v: &str) -> Result<Vec<ProcBind>, EnvError> {
    if let Some(alone) = lookup_word(v, BIND_ALONE) {
        return Ok(vec![alone]);
    }
    v.split(',').map(|item| keyword(PROC_BIND, raw, item.trim(), BIND_LEVELS, PROC_BIND_FORMS)).collect()
}

fn places(raw: &str, v: &str) -> Result<PlacesSpec, EnvError> {
    PlacesSpec::parse(PLACES, v).map_err(|e| match e {
        herd::Error::InvalidSetting { expected, .. } => EnvError::new(PLACES, raw, expected),
        other => EnvError::new(PLACES, raw, other.to_string()),
    })
}

/// `<digits><spaces><unit>` split, the unit being one optional ASCII letter.
fn number_and_suffix(v: &str) -> (&str, Option<char>) {
    match v.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (v[..i].trim_end(), Some(c)),
        _ => (v, None),
    }
}

fn stacksize(raw: &str, v: &str) -> Result<u64, EnvError> {
    let invalid = || EnvError::new(STACKSIZE, raw, STACKSIZE_FORMS);
    let (n, unit) = number_and_suffix(v);
    let shift = match unit.map(|c| c.to_ascii_lowercase()) {
        Some('b') => 0,
        None | Some('k') => 10,
        Some('m') => 20,
        Some('g') => 30,
        Some(_) => return Err(invalid()),
    };
    let n = digits(n).filter(|&n| n > 0).ok_or_else(invalid)?;
    n.checked_mul(1 << shift).ok_or_else(invalid)
}

fn spincount(raw: &str, v: &str) -> Result<u64, EnvError> {
    if v.eq_ignore_ascii_case("infinite") || v.eq_ignore_ascii_case("infinity") {
        return Ok(INFINITE_SPIN);
    }
    let invalid = || EnvError::new(SPINCOUNT, raw, SPINCOUNT_FORMS);
    let (n, unit) = number_and_suffix(v);
    let mult: u64 = match unit.map(|c| c.to_ascii_lowercase()) {
        None => 1,
        Some('k') => 1_000,
        Some('m') => 1_000_000,
        Some('g') => 1_000_000_000,
        Some('t') => 1_000_000_000_000,
        Some(_) => return Err(invalid()),
    };
    digits(n).and_then(|n| n.checked_mul(mult)).ok_or_else(invalid)
}

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
    use herd::topology::places::AbstractPlace;
    use std::collections::HashMap;

    /// A lookup over `vars`.
    fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name: &str| map.get(name).cloned()
    }

    fn one(var: &str, value: &str) -> OmpEnv {
        parse(env_of(&[(var, value)])).unwrap_or_else(|e| panic!("{var}={value:?}: {e}"))
    }

    /// The error for `var=value`, checked to name the variable, the value as
    /// given and the accepted forms.
    fn invalid(var: &str, value: &str, forms: &str) -> EnvError {
        let e = parse(env_of(&[(var, value)])).expect_err(value);
        assert_eq!((e.name.as_str(), e.value.as_str()), (var, value));
        let text = e.to_string();
        assert!(text.starts_with(&format!("invalid value {value:?} for {var}: expected ")), "{text}");
        assert!(text.contains(forms), "{text}");
        e
    }

    #[test]
    fn nothing_set_is_all_none() {
        assert_eq!(parse(|_| None).unwrap(), OmpEnv::default());
        let (env, errors) = parse_all(|_| None);
        assert_eq!(env, OmpEnv::default());
        assert!(errors.is_empty());
    }

    #[test]
    fn blank_values_are_unset() {
        for var in VARS {
            assert_eq!(one(var, ""), OmpEnv::default(), "{var}");
            assert_eq!(one(var, " \t "), OmpEnv::default(), "{var}");
        }
    }

    #[test]
    fn other_variables_are_not_read() {
        let read = std::cell::RefCell::new(Vec::new());
        let _ = parse(|name: &str| {
            read.borrow_mut().push(name.to_string());
            None
        });
        assert_eq!(read.into_inner(), VARS);
    }

    #[test]
    fn num_threads_valid() {
        assert_eq!(one(NUM_THREADS, "4").num_threads, Some(vec![4]));
        assert_eq!(one(NUM_THREADS, "4,2,1").num_threads, Some(vec![4, 2, 1]));
        assert_eq!(one(NUM_THREADS, " 3 , 2 ").num_threads, Some(vec![3, 2]));
        assert_eq!(one(NUM_THREADS, "1").num_threads, Some(vec![1]));
    }

    #[test]
    fn num_threads_zero() {
        invalid(NUM_THREADS, "0", NUM_THREADS_FORMS);
    }

    #[test]
    fn num_threads_zero_inner_level() {
        invalid(NUM_THREADS, "4,0", NUM_THREADS_FORMS);
    }

    #[test]
    fn num_threads_negative() {
        invalid(NUM_THREADS, "-1", NUM_THREADS_FORMS);
    }

    #[test]
    fn num_threads_junk() {
        invalid(NUM_THREADS, "four", NUM_THREADS_FORMS);
    }

    #[test]
    fn num_threads_empty_item() {
        invalid(NUM_THREADS, "4,,2", NUM_THREADS_FORMS);
    }

    #[test]
    fn num_threads_trailing_comma() {
        invalid(NUM_THREADS, "4,", NUM_THREADS_FORMS);
    }

    #[test]
    fn num_threads_overflow() {
        invalid(NUM_THREADS, "99999999999999999999", NUM_THREADS_FORMS);
    }

    fn sched(v: &str) -> OmpSchedule {
        one(SCHEDULE, v).schedule.expect("schedule")
    }

    #[test]
    fn schedule_valid() {
        use ScheduleKind::*;
        use ScheduleModifier::*;
        let s = |kind, chunk, modifier| OmpSchedule { kind, chunk, modifier };
        assert_eq!(sched("static"), s(Static, None, None));
        assert_eq!(sched("STATIC,4"), s(Static, Some(4), None));
        assert_eq!(sched("Dynamic"), s(Dynamic, None, None));
        assert_eq!(sched(" dynamic , 5 "), s(Dynamic, Some(5), None));
        assert_eq!(sched("guided,1"), s(Guided, Some(1), None));
        assert_eq!(sched("auto"), s(Auto, None, None));
        assert_eq!(sched("monotonic:dynamic,3"), s(Dynamic, Some(3), Some(Monotonic)));
        assert_eq!(sched("NONMONOTONIC:guided"), s(Guided, None, Some(Nonmonotonic)));
        assert_eq!(sched("monotonic : static , 2"), s(Static, Some(2), Some(Monotonic)));
        // libgomp accepts (and ignores) a chunk with auto; it is kept.
        assert_eq!(sched("auto,4"), s(Auto, Some(4), None));
    }

    #[test]
    fn schedule_unknown_kind() {
        invalid(SCHEDULE, "runtime", SCHEDULE_FORMS);
    }

    #[test]
    fn schedule_junk() {
        invalid(SCHEDULE, "foo", SCHEDULE_FORMS);
    }

    #[test]
    fn schedule_chunk_zero() {
        invalid(SCHEDULE, "dynamic,0", SCHEDULE_FORMS);
    }

    #[test]
    fn schedule_chunk_negative() {
        invalid(SCHEDULE, "dynamic,-1", SCHEDULE_FORMS);
    }

    #[test]
    fn schedule_chunk_junk() {
        invalid(SCHEDULE, "dynamic,x", SCHEDULE_FORMS);
    }

    #[test]
    fn schedule_chunk_missing() {
        invalid(SCHEDULE, "dynamic ,", SCHEDULE_FORMS);
    }

    #[test]
    fn schedule_two_chunks() {
        invalid(SCHEDULE, "dynamic,2,3", SCHEDULE_FORMS);
    }

    #[test]
    fn schedule_unknown_modifier() {
        invalid(SCHEDULE, "simd:static", SCHEDULE_FORMS);
    }

    #[test]
    fn schedule_modifier_with_comma() {
        invalid(SCHEDULE, "monotonic,static", SCHEDULE_FORMS);
    }

    #[test]
    fn schedule_modifier_alone() {
        invalid(SCHEDULE, "monotonic:", SCHEDULE_FORMS);
    }

    #[test]
    fn schedule_two_modifiers() {
        invalid(SCHEDULE, "monotonic:nonmonotonic:dynamic", SCHEDULE_FORMS);
    }

    #[test]
    fn proc_bind_valid() {
        use ProcBind::*;
        let pb = |v| one(PROC_BIND, v).proc_bind.expect("proc_bind");
        assert_eq!(pb("true"), [True]);
        assert_eq!(pb("FALSE"), [False]);
        assert_eq!(pb("master"), [Primary]);
        assert_eq!(pb("primary"), [Primary]);
        assert_eq!(pb("close"), [Close]);
        assert_eq!(pb("Spread"), [Spread]);
        assert_eq!(pb("spread,close"), [Spread, Close]);
        assert_eq!(pb(" Spread , CLOSE , primary "), [Spread, Close, Primary]);
    }

    #[test]
    fn proc_bind_junk() {
        invalid(PROC_BIND, "yes", PROC_BIND_FORMS);
    }

    #[test]
    fn proc_bind_false_in_list() {
        invalid(PROC_BIND, "false,close", PROC_BIND_FORMS);
    }

    #[test]
    fn proc_bind_true_in_list() {
        invalid(PROC_BIND, "close,true", PROC_BIND_FORMS);
    }

    #[test]
    fn proc_bind_empty_item() {
        invalid(PROC_BIND, "close,", PROC_BIND_FORMS);
    }

    #[test]
    fn places_valid() {
        let pl = |v| one(PLACES, v).places.expect("places");
        assert_eq!(pl("threads"), PlacesSpec::Abstract(AbstractPlace::Threads, None));
        assert_eq!(pl("Cores(4)"), PlacesSpec::Abstract(AbstractPlace::Cores, Some(4)));
        assert_eq!(pl("ll_caches"), PlacesSpec::Abstract(AbstractPlace::LlCaches, None));
        assert_eq!(pl("numa_domains"), PlacesSpec::Abstract(AbstractPlace::NumaDomains, None));
        assert_eq!(pl("sockets(1)"), PlacesSpec::Abstract(AbstractPlace::Sockets, Some(1)));
        assert_eq!(pl(" {0,1},{2:2} "), PlacesSpec::Explicit(vec![vec![0, 1], vec![2, 3]]));
        assert_eq!(pl("{0:2}:2:2"), PlacesSpec::Explicit(vec![vec![0, 1], vec![2, 3]]));
    }

    #[test]
    fn places_unknown_name() {
        let e = invalid(PLACES, "thread", "threads|cores|ll_caches|sockets|numa_domains");
        assert!(e.expected.contains("\"thread\" is not an abstract place name"), "{e}");
    }

    #[test]
    fn places_bad_list() {
        let e = invalid(PLACES, " {0,1 ", "{0,1},{2,3}");
        assert!(e.expected.contains("expected ',' or '}'"), "{e}");
    }

    #[test]
    fn places_zero_count() {
        invalid(PLACES, "cores(0)", "optionally with a count");
    }

    #[test]
    fn booleans_valid() {
        for (var, get) in [
            (DYNAMIC, (|e: &OmpEnv| e.dynamic) as fn(&OmpEnv) -> Option<bool>),
            (NESTED, |e: &OmpEnv| e.nested),
            (CANCELLATION, |e: &OmpEnv| e.cancellation),
        ] {
            assert_eq!(get(&one(var, "true")), Some(true), "{var}");
            assert_eq!(get(&one(var, " TRUE ")), Some(true), "{var}");
            assert_eq!(get(&one(var, "False")), Some(false), "{var}");
        }
    }

    #[test]
    fn dynamic_yes() {
        invalid(DYNAMIC, "yes", BOOL_FORMS);
    }

    #[test]
    fn dynamic_one() {
        invalid(DYNAMIC, "1", BOOL_FORMS);
    }

    #[test]
    fn dynamic_space_inside() {
        invalid(DYNAMIC, "tr ue", BOOL_FORMS);
    }

    #[test]
    fn nested_junk() {
        invalid(NESTED, "maybe", BOOL_FORMS);
    }

    #[test]
    fn cancellation_junk() {
        invalid(CANCELLATION, "on", BOOL_FORMS);
    }

    #[test]
    fn integers_valid() {
        assert_eq!(one(MAX_ACTIVE_LEVELS, "0").max_active_levels, Some(0));
        assert_eq!(one(MAX_ACTIVE_LEVELS, " 300 ").max_active_levels, Some(300));
        assert_eq!(one(THREAD_LIMIT, "1").thread_limit, Some(1));
        assert_eq!(one(THREAD_LIMIT, "64").thread_limit, Some(64));
        assert_eq!(one(MAX_TASK_PRIORITY, "0").max_task_priority, Some(0));
        assert_eq!(one(MAX_TASK_PRIORITY, "2147483647").max_task_priority, Some(i32::MAX));
        assert_eq!(one(DEFAULT_DEVICE, "0").default_device, Some(0));
        assert_eq!(one(DEFAULT_DEVICE, "3").default_device, Some(3));
    }

    #[test]
    fn teams_icvs() {
        assert_eq!(one(NUM_TEAMS, "4").num_teams, Some(4));
        assert_eq!(one(TEAMS_THREAD_LIMIT, " 6 ").teams_thread_limit, Some(6));
        invalid(NUM_TEAMS, "0", NUM_TEAMS_FORMS);
        invalid(NUM_TEAMS, "many", NUM_TEAMS_FORMS);
        invalid(TEAMS_THREAD_LIMIT, "0", TEAMS_THREAD_LIMIT_FORMS);
        let d = DisplayIcvs::from_omp(
            &OmpEnv { num_teams: Some(4), teams_thread_limit: Some(6), ..OmpEnv::default() },
            2,
        );
        assert_eq!((d.num_teams, d.teams_thread_limit), (4, 6));
    }

    #[test]
    fn max_active_levels_negative() {
        invalid(MAX_ACTIVE_LEVELS, "-1", MAX_ACTIVE_LEVELS_FORMS);
    }

    #[test]
    fn max_active_levels_junk() {
        invalid(MAX_ACTIVE_LEVELS, "x", MAX_ACTIVE_LEVELS_FORMS);
    }

    #[test]
    fn thread_limit_zero() {
        invalid(THREAD_LIMIT, "0", THREAD_LIMIT_FORMS);
    }

    #[test]
    fn thread_limit_junk() {
        invalid(THREAD_LIMIT, "lots", THREAD_LIMIT_FORMS);
    }

    #[test]
    fn max_task_priority_negative() {
        invalid(MAX_TASK_PRIORITY, "-1", MAX_TASK_PRIORITY_FORMS);
    }

    #[test]
    fn max_task_priority_too_large() {
        invalid(MAX_TASK_PRIORITY, "2147483648", MAX_TASK_PRIORITY_FORMS);
    }

    #[test]
    fn default_device_negative() {
        invalid(DEFAULT_DEVICE, "-1", DEFAULT_DEVICE_FORMS);
    }

    #[test]
    fn default_device_junk() {
        invalid(DEFAULT_DEVICE, "gpu0", DEFAULT_DEVICE_FORMS);
    }

    #[test]
    fn stacksize_valid() {
        let st = |v| one(STACKSIZE, v).stacksize.expect("stacksize");
        assert_eq!(st("100"), 100 << 10);
        assert_eq!(st("100 B"), 100);
        assert_eq!(st("1b"), 1);
        assert_eq!(st("4k"), 4 << 10);
        assert_eq!(st("  4 K  "), 4 << 10);
        assert_eq!(st("2M"), 2 << 20);
        assert_eq!(st("10 m"), 10 << 20);
        assert_eq!(st("1G"), 1 << 30);
        assert_eq!(st("8g"), 8 << 30);
        assert_eq!(st("17179869183G"), 17179869183 << 30);
    }

    #[test]
    fn stacksize_zero() {
        invalid(STACKSIZE, "0", STACKSIZE_FORMS);
    }

    #[test]
    fn stacksize_zero_with_unit() {
        invalid(STACKSIZE, "0M", STACKSIZE_FORMS);
    }

    #[test]
    fn stacksize_unknown_unit() {
        invalid(STACKSIZE, "10x", STACKSIZE_FORMS);
    }

    #[test]
    fn stacksize_two_letter_unit() {
        invalid(STACKSIZE, "2MB", STACKSIZE_FORMS);
    }

    #[test]
    fn stacksize_unit_alone() {
        invalid(STACKSIZE, "M", STACKSIZE_FORMS);
    }

    #[test]
    fn stacksize_negative() {
        invalid(STACKSIZE, "-1", STACKSIZE_FORMS);
    }

    #[test]
    fn stacksize_overflow() {
        invalid(STACKSIZE, "17179869184G", STACKSIZE_FORMS);
    }

    #[test]
    fn stacksize_number_overflow() {
        invalid(STACKSIZE, "99999999999999999999", STACKSIZE_FORMS);
    }

    #[test]
    fn wait_policy_valid() {
        assert_eq!(one(WAIT_POLICY, "active").wait_policy, Some(OmpWaitPolicy::Active));
        assert_eq!(one(WAIT_POLICY, " PASSIVE ").wait_policy, Some(OmpWaitPolicy::Passive));
    }

    #[test]
    fn wait_policy_junk() {
        invalid(WAIT_POLICY, "spin", WAIT_POLICY_FORMS);
    }

    #[test]
    fn display_env_valid() {
        assert_eq!(one(DISPLAY_ENV, "true").display_env, Some(DisplayEnv::True));
        assert_eq!(one(DISPLAY_ENV, "FALSE").display_env, Some(DisplayEnv::False));
        assert_eq!(one(DISPLAY_ENV, " Verbose ").display_env, Some(DisplayEnv::Verbose));
    }

    #[test]
    fn display_env_junk() {
        invalid(DISPLAY_ENV, "yes", DISPLAY_ENV_FORMS);
    }

    #[test]
    fn spincount_valid() {
        let sc = |v| one(SPINCOUNT, v).spin_count.expect("spin_count");
        assert_eq!(sc("0"), 0);
        assert_eq!(sc("1000"), 1000);
        assert_eq!(sc("10k"), 10_000);
        assert_eq!(sc("10 K"), 10_000);
        assert_eq!(sc("1M"), 1_000_000);
        assert_eq!(sc("2g"), 2_000_000_000);
        assert_eq!(sc("3T"), 3_000_000_000_000);
        assert_eq!(sc("infinite"), INFINITE_SPIN);
        assert_eq!(sc(" INFINITY "), INFINITE_SPIN);
        assert_eq!(sc("18446744073709551615"), u64::MAX);
    }

    #[test]
    fn spincount_negative() {
        invalid(SPINCOUNT, "-1", SPINCOUNT_FORMS);
    }

    #[test]
    fn spincount_junk() {
        invalid(SPINCOUNT, "x", SPINCOUNT_FORMS);
    }

    #[test]
    fn spincount_unknown_suffix() {
        invalid(SPINCOUNT, "10q", SPINCOUNT_FORMS);
    }

    #[test]
    fn spincount_overflow() {
        invalid(SPINCOUNT, "99999999999999999999999", SPINCOUNT_FORMS);
    }

    #[test]
    fn spincount_suffix_overflow() {
        invalid(SPINCOUNT, "18446744073709552k", SPINCOUNT_FORMS);
    }

    #[test]
    fn parse_reports_the_first_error_and_parse_all_every_one() {
        let lookup = || {
            env_of(&[
                (SPINCOUNT, "x"),
                (NUM_THREADS, "0"),
                (SCHEDULE, "guided,2"),
                (WAIT_POLICY, "spin"),
                (DYNAMIC, "true"),
            ])
        };
        let e = parse(lookup()).unwrap_err();
        assert_eq!(e.name, NUM_THREADS);
        let (env, errors) = parse_all(lookup());
        let names: Vec<&str> = errors.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, [NUM_THREADS, WAIT_POLICY, SPINCOUNT]);
        assert_eq!(env.num_threads, None);
        assert_eq!(env.wait_policy, None);
        assert_eq!(env.dynamic, Some(true));
        assert_eq!(env.schedule.map(|s| (s.kind, s.chunk)), Some((ScheduleKind::Guided, Some(2))));
    }

    /// `herd::Config` from `HERD_*` pairs, through herd's own parser.
    fn herd_config(vars: &[(&str, &str)]) -> herd::Config {
        herd::Config::from_lookup(env_of(vars)).expect("valid HERD_* settings")
    }

    fn full_omp() -> OmpEnv {
        parse(env_of(&[
            (NUM_THREADS, "4,2"),
            (PLACES, "cores"),
            (PROC_BIND, "spread,close"),
            (WAIT_POLICY, "active"),
            (DISPLAY_ENV, "verbose"),
            (STACKSIZE, "4M"),
        ]))
        .expect("valid")
    }

    #[test]
    fn apply_fills_unset_herd_settings() {
        let c = apply(&full_omp(), herd_config(&[]));
        assert_eq!(c.num_threads, Some(4));
        assert_eq!(c.places, Some(PlacesSpec::Abstract(AbstractPlace::Cores, None)));
        assert_eq!(c.bind, Some(Bind::Spread));
        assert_eq!(c.wait, Some(WaitPolicy::Active));
        assert_eq!(c.display_env, Some(DisplayEnv::Verbose));
        assert_eq!(c.stack_size, Some(4 << 20));
        assert!(c.dispatch.is_none() && c.reserve.is_none() && c.topology.is_none() && c.trace.is_none());
    }

    #[test]
    fn apply_herd_wins() {
        let herd = herd_config(&[
            ("HERD_NUM_THREADS", "3"),
            ("HERD_PLACES", "threads(2)"),
            ("HERD_BIND", "false"),
            ("HERD_WAIT", "spin:50"),
            ("HERD_DISPLAY_ENV", "false"),
            ("HERD_DISPATCH", "lj"),
        ]);
        let c = apply(&full_omp(), herd);
        assert_eq!(c.num_threads, Some(3));
        assert_eq!(c.places, Some(PlacesSpec::Abstract(AbstractPlace::Threads, Some(2))));
        assert_eq!(c.bind, Some(Bind::False));
        assert_eq!(c.wait, Some(WaitPolicy::Spin(Duration::from_micros(50))));
        assert_eq!(c.display_env, Some(DisplayEnv::False));
        assert_eq!(c.dispatch, Some(herd::Dispatch::Lj));
        // No HERD_* twin: a stack size set by the embedder wins.
        let c = apply(&full_omp(), herd::Config { stack_size: Some(1 << 20), ..herd::Config::default() });
        assert_eq!(c.stack_size, Some(1 << 20));
    }

    #[test]
    fn apply_raises_tiny_stacks_to_herds_minimum() {
        let c = apply(&one(STACKSIZE, "1K"), herd::Config::default());
        assert_eq!(c.stack_size, Some(64 << 10));
        let c = apply(&one(STACKSIZE, "64K"), herd::Config::default());
        assert_eq!(c.stack_size, Some(64 << 10));
        let c = apply(&one(STACKSIZE, "65B"), herd::Config::default());
        assert_eq!(c.stack_size, Some(64 << 10));
    }

    #[test]
    fn applied_settings_build_a_pool() {
        let omp = one(STACKSIZE, "1K");
        let config = apply(&omp, herd_config(&[("HERD_NUM_THREADS", "2"), ("HERD_BIND", "false")]));
        let pool = herd::PoolBuilder::from_config(config).build().expect("pool");
        assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1]);
    }

    #[test]
    fn apply_with_nothing_set_changes_nothing() {
        let c = apply(&OmpEnv::default(), herd_config(&[("HERD_NUM_THREADS", "2")]));
        assert_eq!(c.num_threads, Some(2));
        assert!(c.places.is_none() && c.bind.is_none() && c.wait.is_none() && c.display_env.is_none());
        assert!(c.stack_size.is_none());
    }

    #[test]
    fn apply_bind_mapping() {
        for (v, bind) in [
            ("true", Bind::True),
            ("false", Bind::False),
            ("master", Bind::Close),
            ("primary", Bind::Close),
            ("close", Bind::Close),
            ("spread", Bind::Spread),
            ("close,spread", Bind::Close),
        ] {
            assert_eq!(apply(&one(PROC_BIND, v), herd::Config::default()).bind, Some(bind), "{v}");
        }
    }

    #[test]
    fn wait_mapping() {
        let w = |vars: &[(&str, &str)]| parse(env_of(vars)).expect("valid").herd_wait();
        assert_eq!(w(&[]), None);
        assert_eq!(w(&[(WAIT_POLICY, "active")]), Some(WaitPolicy::Active));
        assert_eq!(w(&[(WAIT_POLICY, "passive")]), Some(WaitPolicy::Passive));
        assert_eq!(w(&[(SPINCOUNT, "0")]), Some(WaitPolicy::Passive));
        assert_eq!(w(&[(SPINCOUNT, "infinite")]), Some(WaitPolicy::Active));
        assert_eq!(w(&[(SPINCOUNT, "300k")]), Some(WaitPolicy::Spin(Duration::from_micros(300))));
        // GOMP_SPINCOUNT overrides OMP_WAIT_POLICY, as in libgomp.
        assert_eq!(
            w(&[(WAIT_POLICY, "active"), (SPINCOUNT, "1000")]),
            Some(WaitPolicy::Spin(Duration::from_micros(1)))
        );
        assert_eq!(w(&[(WAIT_POLICY, "active"), (SPINCOUNT, "0")]), Some(WaitPolicy::Passive));
    }

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
