//! The value parsers of the `OMP_*` variables: one function per value
//! grammar, each returning the parsed value or an [`EnvError`] naming the
//! variable, the value as given and the accepted forms (the `*_FORMS` texts).

use super::*;
use crate::memory::{key, val, TraitValue, ENV_TRAITS, MEM_SPACES, PREDEFINED_ALLOCATORS};
use herd::config::parse;

pub(super) const NUM_THREADS_FORMS: &str =
    "a positive integer, or a comma-separated list of positive integers \
                                 (one per nesting level), e.g. 4 or 4,2,1";
pub(super) const SCHEDULE_FORMS: &str =
    "[monotonic:|nonmonotonic:]kind[,chunk] with kind one of static, dynamic, \
                              guided, auto (case-insensitive) and chunk a positive integer, \
                              e.g. static, dynamic,4 or nonmonotonic:guided,8";
pub(super) const PROC_BIND_FORMS: &str = "true, false, or a comma-separated list of primary, master, close, \
                               spread (one per nesting level; case-insensitive), e.g. spread or spread,close";
pub(super) const BOOL_FORMS: &str = "one of true, false (case-insensitive)";
pub(super) const MAX_ACTIVE_LEVELS_FORMS: &str =
    "a non-negative integer (the most nested active parallel levels)";
pub(super) const THREAD_LIMIT_FORMS: &str = "a positive integer (the most threads in the program)";
pub(super) const NUM_TEAMS_FORMS: &str = "a positive integer (the most teams a teams construct creates)";
pub(super) const TEAMS_THREAD_LIMIT_FORMS: &str =
    "a positive integer (the most threads of each team a teams construct creates)";
pub(super) const MAX_TASK_PRIORITY_FORMS: &str = "a non-negative integer up to 2147483647";
pub(super) const DEFAULT_DEVICE_FORMS: &str = "a non-negative integer up to 2147483647 (a device number)";
pub(super) const STACKSIZE_FORMS: &str =
    "a positive size <n>[B|K|M|G] (unit case-insensitive, default K = KiB; \
                               at most 16 EiB), e.g. 512K, 4M or 8192";
pub(super) const CPU_AFFINITY_FORMS: &str = "CPU numbers below 65536, ranges a-b (a <= b) and strided \
     ranges a-b:s (s >= 1), separated by spaces or commas (at most 1048576 CPUs in all), e.g. 0 3 1-2 4-15:2";
pub(super) const WAIT_POLICY_FORMS: &str = "one of active, passive (case-insensitive)";
pub(super) const DISPLAY_ENV_FORMS: &str = "one of true, false, verbose (case-insensitive)";
pub(super) const SPINCOUNT_FORMS: &str =
    "infinite, infinity, or a non-negative integer with an optional decimal \
                               suffix k, M, G or T (case-insensitive; at most 18446744073709551615), \
                               e.g. 300000 or 300k";

pub(super) const BOOLS: &[(&str, bool)] = &[("true", true), ("false", false)];
pub(super) const WAIT_POLICIES: &[(&str, OmpWaitPolicy)] =
    &[("active", OmpWaitPolicy::Active), ("passive", OmpWaitPolicy::Passive)];
pub(super) const DISPLAY_ENVS: &[(&str, DisplayEnv)] =
    &[("true", DisplayEnv::True), ("false", DisplayEnv::False), ("verbose", DisplayEnv::Verbose)];
pub(super) const KINDS: &[(&str, ScheduleKind)] = &[
    ("static", ScheduleKind::Static),
    ("dynamic", ScheduleKind::Dynamic),
    ("guided", ScheduleKind::Guided),
    ("auto", ScheduleKind::Auto),
];
pub(super) const MODIFIERS: &[(&str, ScheduleModifier)] =
    &[("monotonic", ScheduleModifier::Monotonic), ("nonmonotonic", ScheduleModifier::Nonmonotonic)];
pub(super) const BIND_LEVELS: &[(&str, ProcBind)] = &[
    ("primary", ProcBind::Primary),
    ("master", ProcBind::Primary),
    ("close", ProcBind::Close),
    ("spread", ProcBind::Spread),
];
pub(super) const BIND_ALONE: &[(&str, ProcBind)] = &[("true", ProcBind::True), ("false", ProcBind::False)];

/// One word out of `table`, compared case-insensitively; `forms` in the error.
pub(super) fn keyword<T: Copy>(
    var: &str,
    raw: &str,
    v: &str,
    table: &[(&str, T)],
    forms: &str,
) -> Result<T, EnvError> {
    parse::keyword(v, table).ok_or_else(|| EnvError::new(var, raw, forms))
}

pub(super) fn boolean(var: &str, raw: &str, v: &str) -> Result<bool, EnvError> {
    keyword(var, raw, v, BOOLS, BOOL_FORMS)
}

/// A decimal integer `>= min` that fits in `T`; anything else is an error with
/// `forms` as the accepted forms.
pub(super) fn unsigned<T: TryFrom<u64>>(
    var: &str,
    raw: &str,
    v: &str,
    min: u64,
    forms: &str,
) -> Result<T, EnvError> {
    parse::unsigned(v, min).ok_or_else(|| EnvError::new(var, raw, forms))
}

pub(super) fn num_threads(raw: &str, v: &str) -> Result<Vec<usize>, EnvError> {
    parse::unsigned_list(v, 1).ok_or_else(|| EnvError::new(NUM_THREADS, raw, NUM_THREADS_FORMS))
}

pub(super) fn schedule(raw: &str, v: &str) -> Result<OmpSchedule, EnvError> {
    let invalid = || EnvError::new(SCHEDULE, raw, SCHEDULE_FORMS);
    let (modifier, rest) = match v.split_once(':') {
        Some((m, rest)) => (Some(parse::keyword(m.trim(), MODIFIERS).ok_or_else(invalid)?), rest),
        None => (None, v),
    };
    let (kind, chunk) = match rest.split_once(',') {
        Some((kind, chunk)) => (kind, Some(chunk)),
        None => (rest, None),
    };
    let kind = parse::keyword(kind.trim(), KINDS).ok_or_else(invalid)?;
    let chunk = chunk.map(|c| unsigned(SCHEDULE, raw, c.trim(), 1, SCHEDULE_FORMS)).transpose()?;
    Ok(OmpSchedule { kind, chunk, modifier })
}

pub(super) fn proc_bind(raw: &str, v: &str) -> Result<Vec<ProcBind>, EnvError> {
    if let Some(alone) = parse::keyword(v, BIND_ALONE) {
        return Ok(vec![alone]);
    }
    v.split(',').map(|item| keyword(PROC_BIND, raw, item.trim(), BIND_LEVELS, PROC_BIND_FORMS)).collect()
}

pub(super) fn places(raw: &str, v: &str) -> Result<PlacesSpec, EnvError> {
    PlacesSpec::parse(PLACES, v).map_err(|e| match e {
        herd::Error::InvalidSetting { expected, .. } => EnvError::new(PLACES, raw, expected),
        other => EnvError::new(PLACES, raw, other.to_string()),
    })
}

pub(super) fn stacksize(raw: &str, v: &str) -> Result<u64, EnvError> {
    stacksize_of(STACKSIZE, raw, v)
}

/// A stack size in `OMP_STACKSIZE`'s grammar, for `var`.
pub(super) fn stacksize_of(var: &str, raw: &str, v: &str) -> Result<u64, EnvError> {
    parse::size_bytes(v).ok_or_else(|| EnvError::new(var, raw, STACKSIZE_FORMS))
}

/// The most CPUs a `GOMP_CPU_AFFINITY` or `KMP_AFFINITY` proclist may list
/// in all (repeats included): bounds what a long value can make us allocate.
pub(super) const MAX_LISTED_CPUS: usize = 1 << 20;

/// `GOMP_CPU_AFFINITY`: libgomp's list of CPUs, ranges and strided ranges,
/// separated by spaces or commas, every range expanded in order.
pub(super) fn cpu_affinity(raw: &str, v: &str) -> Result<Vec<u32>, EnvError> {
    const LIMIT: u32 = 65536;
    let invalid = || EnvError::new(CPU_AFFINITY, raw, CPU_AFFINITY_FORMS);
    let cpu = |s: &str| parse::unsigned::<u32>(s.trim(), 0).filter(|&c| c < LIMIT).ok_or_else(invalid);
    let mut cpus = Vec::new();
    for item in v.split(|c: char| c == ',' || c.is_ascii_whitespace()).filter(|s| !s.is_empty()) {
        let (range, stride) = match item.split_once(':') {
            Some((range, s)) => (range, cpu(s).ok().filter(|&s| s >= 1).ok_or_else(invalid)?),
            None => (item, 1),
        };
        let (first, last) = match range.split_once('-') {
            Some((a, b)) => (cpu(a)?, cpu(b)?),
            None if item.contains(':') => return Err(invalid()),
            None => (cpu(range)?, cpu(range)?),
        };
        if last < first {
            return Err(invalid());
        }
        cpus.extend((first..=last).step_by(stride as usize));
        if cpus.len() > MAX_LISTED_CPUS {
            return Err(invalid());
        }
    }
    if cpus.is_empty() {
        return Err(invalid());
    }
    Ok(cpus)
}

pub(super) fn spincount(raw: &str, v: &str) -> Result<u64, EnvError> {
    if v.eq_ignore_ascii_case("infinite") || v.eq_ignore_ascii_case("infinity") {
        return Ok(INFINITE_SPIN);
    }
    let invalid = || EnvError::new(SPINCOUNT, raw, SPINCOUNT_FORMS);
    let (n, unit) = parse::number_and_suffix(v);
    let mult: u64 = match unit.map(|c| c.to_ascii_lowercase()) {
        None => 1,
        Some('k') => 1_000,
        Some('m') => 1_000_000,
        Some('g') => 1_000_000_000,
        Some('t') => 1_000_000_000_000,
        Some(_) => return Err(invalid()),
    };
    parse::decimal(n).and_then(|n| n.checked_mul(mult)).ok_or_else(invalid)
}

/// The accepted forms of `OMP_ALLOCATOR`, spelled out from the tables.
fn allocator_forms() -> String {
    let names = |t: &[(&str, usize)]| t.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
    let spaces: Vec<&str> = MEM_SPACES.iter().map(|(n, _, _)| *n).collect();
    let traits: Vec<String> = ENV_TRAITS
        .iter()
        .map(|(n, _, v)| match v {
            TraitValue::Named(t) => {
                format!("{n}={}", t.iter().map(|(w, _)| *w).collect::<Vec<_>>().join("|"))
            }
            TraitValue::Positive { power_of_two: true } => format!("{n}=<a power of two>"),
            TraitValue::Positive { power_of_two: false } => format!("{n}=<a positive number of bytes>"),
            TraitValue::Allocator => format!("{n}=<a predefined allocator> (with fallback=allocator_fb)"),
        })
        .collect();
    format!(
        "a predefined allocator ({}), or a memory space ({}) optionally followed by \
         :trait=value,... with traits {} (case-insensitive), e.g. omp_cgroup_mem_alloc or \
         omp_default_mem_space:alignment=64,pool_size=1048576",
        names(PREDEFINED_ALLOCATORS),
        spaces.join(", "),
        traits.join(", ")
    )
}

/// `OMP_ALLOCATOR` (OpenMP 5.1 §6.21): a predefined allocator, or a memory
/// space with optional traits; each trait at most once.
pub(super) fn allocator(raw: &str, v: &str) -> Result<OmpAllocator, EnvError> {
    let err = || EnvError::new(ALLOCATOR, raw, allocator_forms());
    let (name, traits) = match v.split_once(':') {
        Some((n, t)) => (n.trim(), Some(t)),
        None => (v, None),
    };
    let mut spelled = name.to_ascii_lowercase();
    if traits.is_none() {
        if let Some(h) = parse::keyword(name, PREDEFINED_ALLOCATORS) {
            return Ok(OmpAllocator { spelled, kind: AllocatorKind::Predefined(h) });
        }
    }
    let (_, memspace, own) =
        *MEM_SPACES.iter().find(|(n, _, _)| n.eq_ignore_ascii_case(name)).ok_or_else(err)?;
    let Some(traits) = traits else {
        return Ok(OmpAllocator { spelled, kind: AllocatorKind::Predefined(own) });
    };
    let mut list: Vec<(i32, usize)> = Vec::new();
    for (i, item) in traits.split(',').enumerate() {
        let (k, value) = item.split_once('=').ok_or_else(err)?;
        let (k, value) = (k.trim(), value.trim());
        let (kname, key, kind) =
            ENV_TRAITS.iter().find(|(n, _, _)| n.eq_ignore_ascii_case(k)).ok_or_else(err)?;
        if list.iter().any(|&(seen, _)| seen == *key) {
            return Err(err());
        }
        let v = match kind {
            TraitValue::Named(t) => parse::keyword(value, t),
            TraitValue::Positive { power_of_two } => {
                parse::unsigned::<usize>(value, 1).filter(|n| !power_of_two || n.is_power_of_two())
            }
            TraitValue::Allocator => parse::keyword(value, PREDEFINED_ALLOCATORS),
        }
        .ok_or_else(err)?;
        list.push((*key, v));
        spelled.push(if i == 0 { ':' } else { ',' });
        spelled.push_str(&format!("{kname}={}", value.to_ascii_lowercase()));
    }
    // `allocator_fb` falls back on the allocator `fb_data` names: one without
    // the other is a mistake (OpenMP 5.1 §2.13.2).
    let has =
        |k: i32, v: Option<usize>| list.iter().any(|&(key, val)| key == k && v.is_none_or(|v| v == val));
    if has(key::FALLBACK, Some(val::ALLOCATOR_FB)) != has(key::FB_DATA, None) {
        return Err(err());
    }
    Ok(OmpAllocator { spelled, kind: AllocatorKind::Traits { memspace, traits: list } })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::test_support::*;
    use herd::topology::places::AbstractPlace;

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
    fn gomp_stacksize_only_without_omp_stacksize() {
        assert_eq!(one(GOMP_STACKSIZE, "4M").stacksize, Some(4 << 20));
        assert_eq!(one(GOMP_STACKSIZE, "100").stacksize, Some(100 << 10));
        let both = parse(env_of(&[(STACKSIZE, "1M"), (GOMP_STACKSIZE, "4M")])).unwrap();
        assert_eq!(both.stacksize, Some(1 << 20));
        // Not read at all when OMP_STACKSIZE is valid (libgomp's order).
        let both = parse(env_of(&[(STACKSIZE, "1M"), (GOMP_STACKSIZE, "junk")])).unwrap();
        assert_eq!(both.stacksize, Some(1 << 20));
        let e = invalid(GOMP_STACKSIZE, "0", STACKSIZE_FORMS);
        assert_eq!(e.name, GOMP_STACKSIZE);
    }

    #[test]
    fn cpu_affinity_lists_ranges_and_strides() {
        let cpus = |v| one(CPU_AFFINITY, v).cpu_affinity.expect("cpu affinity");
        assert_eq!(cpus("0 3 1-2 4-15:2"), vec![0, 3, 1, 2, 4, 6, 8, 10, 12, 14]);
        assert_eq!(cpus("1,0"), vec![1, 0]);
        assert_eq!(cpus(" 2 ,\t5-6 "), vec![2, 5, 6]);
        assert_eq!(cpus("7-7"), vec![7]);
        assert_eq!(cpus("0-9:4"), vec![0, 4, 8]);
        assert_eq!(cpus("65535"), vec![65535]);
        let many = vec!["0-65535"; 17].join(" ");
        for bad in ["x", "65536", "3-1", "0-4:0", "1:2", "-1", "1-", "0-4:", ",", "1 2a", many.as_str()] {
            invalid(CPU_AFFINITY, bad, CPU_AFFINITY_FORMS);
        }
    }

    #[test]
    fn cpu_affinity_is_the_place_list_as_in_libgomp() {
        let env = one(CPU_AFFINITY, "1 0");
        assert_eq!(env.places, Some(PlacesSpec::Explicit(vec![vec![1], vec![0]])));
        // bind-var becomes true, as with OMP_PLACES alone.
        assert_eq!(DisplayIcvs::from_omp(&env, 2).proc_bind, vec![ProcBind::True]);
        // OMP_PLACES wins; OMP_PROC_BIND=false turns it off; other binds keep it.
        let env = parse(env_of(&[(CPU_AFFINITY, "1"), (PLACES, "cores")])).unwrap();
        assert_eq!(env.places, Some(PlacesSpec::Abstract(AbstractPlace::Cores, None)));
        let env = parse(env_of(&[(CPU_AFFINITY, "1"), (PROC_BIND, "false")])).unwrap();
        assert_eq!(env.places, None);
        let env = parse(env_of(&[(CPU_AFFINITY, "1"), (PROC_BIND, "spread")])).unwrap();
        assert_eq!(env.places, Some(PlacesSpec::Explicit(vec![vec![1]])));
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

    #[test]
    fn allocator_predefined_and_memspace() {
        let a = one(ALLOCATOR, " OMP_CGroup_Mem_Alloc ").allocator.unwrap();
        assert_eq!((a.spelled.as_str(), a.kind), ("omp_cgroup_mem_alloc", AllocatorKind::Predefined(6)));
        let a = one(ALLOCATOR, "omp_low_lat_mem_space").allocator.unwrap();
        assert_eq!(a.kind, AllocatorKind::Predefined(5), "a space alone names its predefined allocator");
        let a = one(ALLOCATOR, "omp_default_mem_space: Alignment = 64 , pool_size=1048576,fallback=NULL_FB")
            .allocator
            .unwrap();
        assert_eq!(a.spelled, "omp_default_mem_space:alignment=64,pool_size=1048576,fallback=null_fb");
        assert_eq!(
            a.kind,
            AllocatorKind::Traits {
                memspace: 0,
                traits: vec![(key::ALIGNMENT, 64), (key::POOL_SIZE, 1048576), (key::FALLBACK, val::NULL_FB)]
            }
        );
        // libomp's testsuite form (env/omp51_alloc_env.c): fb_data names a predefined allocator.
        let a = one(
            ALLOCATOR,
            "omp_high_bw_mem_space:pool_size=1048576,fallback=allocator_fb,fb_data=omp_low_lat_mem_alloc",
        )
        .allocator
        .unwrap();
        assert_eq!(
            a.kind,
            AllocatorKind::Traits {
                memspace: crate::memory::HIGH_BW_MEM_SPACE,
                traits: vec![
                    (key::POOL_SIZE, 1048576),
                    (key::FALLBACK, val::ALLOCATOR_FB),
                    (key::FB_DATA, 5)
                ]
            }
        );
    }

    #[test]
    fn allocator_invalid() {
        for bad in [
            "omp_nonesuch_alloc",
            "omp_default_mem_alloc:alignment=64", // traits go with a memory space
            "omp_default_mem_space:alignment=48", // not a power of two
            "omp_default_mem_space:alignment=0",
            "omp_default_mem_space:pool_size=-1",
            "omp_default_mem_space:fallback=allocator_fb", // needs fb_data
            "omp_default_mem_space:fb_data=omp_low_lat_mem_alloc", // needs allocator_fb
            "omp_default_mem_space:fallback=allocator_fb,fb_data=1", // a predefined allocator by name
            "omp_default_mem_space:fallback=allocator_fb,fb_data=omp_default_mem_space",
            "omp_default_mem_space:pinned=maybe",
            "omp_default_mem_space:alignment=64,alignment=128", // twice
            "omp_default_mem_space:alignment",
            "omp_default_mem_space:",
            "7",
        ] {
            let e = invalid(ALLOCATOR, bad, "a predefined allocator (omp_default_mem_alloc,");
            assert!(e.expected.contains("partition=environment|nearest|blocked|interleaved"), "{e}");
        }
    }
}
