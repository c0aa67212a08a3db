//! Property tests of the `OMP_*` parser (`herd_omp::env::parse`): any string,
//! and many near-valid ones (lists, schedules, sizes with units, spin counts
//! with suffixes, place syntax such as `{0:4}:8:4`, huge numbers, unicode,
//! blanks), never panics or hangs; an invalid value is an `EnvError` naming
//! the variable, the value as given (untrimmed) and the accepted forms; what
//! parses goes through `apply` and the `OMP_DISPLAY_ENV` report without a
//! panic either.
//!
//! The runs are deterministic (a fixed seed, no regression files); set
//! `HERD_FUZZ_SEED` to explore other inputs.

use herd_omp::env::{self, DisplayIcvs, EnvError, OmpEnv, VARS};
use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, RngSeed};

/// A piece of each variable's accepted forms, which its error must contain.
fn forms(var: &str) -> &'static str {
    match var {
        "OMP_NUM_THREADS" => "comma-separated list of positive integers",
        "OMP_SCHEDULE" => "[monotonic:|nonmonotonic:]kind[,chunk]",
        "OMP_PROC_BIND" => "true, false, or a comma-separated list of primary, master, close",
        "OMP_PLACES" => "threads|cores|ll_caches|sockets|numa_domains",
        "OMP_DYNAMIC" | "OMP_NESTED" | "OMP_CANCELLATION" | "OMP_DISPLAY_AFFINITY" => "one of true, false",
        "OMP_MAX_ACTIVE_LEVELS" => "a non-negative integer",
        "OMP_THREAD_LIMIT" | "OMP_NUM_TEAMS" | "OMP_TEAMS_THREAD_LIMIT" => "a positive integer",
        "OMP_MAX_TASK_PRIORITY" | "OMP_DEFAULT_DEVICE" => "a non-negative integer up to 2147483647",
        "OMP_STACKSIZE" => "a positive size <n>[B|K|M|G]",
        "OMP_WAIT_POLICY" => "one of active, passive",
        "OMP_DISPLAY_ENV" => "one of true, false, verbose",
        "GOMP_SPINCOUNT" => "infinite, infinity, or a non-negative integer",
        "OMP_ALLOCATOR" => "a predefined allocator (omp_default_mem_alloc,",
        "GOMP_CPU_AFFINITY" => "CPU numbers below 65536, ranges a-b",
        "GOMP_STACKSIZE" => "a positive size <n>[B|K|M|G]",
        "KMP_AFFINITY" => "a comma-separated list of one type (compact, scatter",
        "KMP_BLOCKTIME" => "infinite, or a non-negative number with an optional unit",
        "KMP_STACKSIZE" => "a positive size <n>[B|K|M|G|T][B]",
        "KMP_TEAMS_THREAD_LIMIT" | "KMP_DEVICE_THREAD_LIMIT" | "KMP_ALL_THREADS" => "a positive integer",
        "KMP_SETTINGS" => "one of true, false, 1, 0, on, off, yes, no",
        // Any text is a format (fields are checked when it is used).
        "OMP_AFFINITY_FORMAT" => panic!("OMP_AFFINITY_FORMAT accepts every value"),
        other => panic!("no forms for {other}"),
    }
}

fn config(cases: u32) -> PtConfig {
    let seed = std::env::var("HERD_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x4f4d_5000_0013);
    // Under ThreadSanitizer (a debug build, every access checked) an eighth
    // of the cases: these properties test parsers, not concurrency.
    let cases = if cfg!(herd_tsan) { (cases / 8).max(16) } else { cases };
    PtConfig {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        max_shrink_iters: 2048,
        ..PtConfig::default()
    }
}

/// A decimal number of any size, as text.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => (0u64..20).prop_map(|n| n.to_string()),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => Just("2147483647".to_string()),
        1 => Just("2147483648".to_string()),
        1 => Just("4294967296".to_string()),
        1 => Just("9223372036854775807".to_string()),
        1 => Just("-9223372036854775808".to_string()),
        1 => Just("18446744073709551615".to_string()),
        1 => Just("18446744073709551616".to_string()),
        1 => "[0-9]{20,40}",
        1 => "-?0{0,3}[0-9]{0,3}",
    ]
}

/// Numbers with spaces, units and suffixes (sizes, spin counts), signs,
/// unicode digits.
fn number_like() -> impl Strategy<Value = String> {
    prop_oneof![
        (number(), "[ \t]{0,2}", "[bBkKmMgGtTqx]{0,2}").prop_map(|(n, s, u)| format!("{s}{n}{s}{u}{s}")),
        "[+-]?(0x)?[0-9]{0,6}([.,e][0-9]{0,3})?",
        "[٠-٩０-９¹²³]{1,4}[kKｋ]?",
        "(?i)infinit[ey]{0,2}",
    ]
}

/// Comma lists of numbers or words (`OMP_NUM_THREADS`, `OMP_PROC_BIND`).
fn list_like() -> impl Strategy<Value = String> {
    let item = prop_oneof![number(), "(?i)(primary|master|close|spread|true|false)", "[ ]{0,2}",];
    (proptest::collection::vec(item, 1..5), "[ ]{0,2}").prop_map(|(v, s)| v.join(&format!("{s},{s}")))
}

/// `OMP_SCHEDULE`-like: `[modifier:]kind[,chunk]` with mistakes.
fn schedule_like() -> impl Strategy<Value = String> {
    (
        proptest::option::of("(?i)(monotonic|nonmonotonic|simd|monotonic:nonmonotonic)"),
        "(?i)(static|dynamic|guided|auto|runtime|)",
        proptest::option::of(number()),
        "[ ,:]{0,2}",
    )
        .prop_map(|(m, kind, chunk, tail)| {
            let mut s = m.map(|m| format!("{m}:")).unwrap_or_default() + &kind;
            if let Some(c) = chunk {
                s += &format!(",{c}");
            }
            s + &tail
        })
}

/// A place list, near-valid (`{0:4}:8:4`, `{0,!1},2`, `cores(4)`, ...).
fn places_like() -> impl Strategy<Value = String> {
    let res = (
        proptest::bool::weighted(0.15),
        number(),
        proptest::option::of((number(), proptest::option::of(number()))),
    )
        .prop_map(|(not, n, tail)| {
            let mut s = if not { format!("!{n}") } else { n };
            if let Some((len, stride)) = tail {
                s += &format!(":{len}");
                if let Some(stride) = stride {
                    s += &format!(":{stride}");
                }
            }
            s
        });
    let place = (
        proptest::bool::weighted(0.15),
        prop_oneof![
            proptest::collection::vec(res, 0..4).prop_map(|v| format!("{{{}}}", v.join(","))),
            number()
        ],
        proptest::option::of((number(), proptest::option::of(number()))),
    )
        .prop_map(|(not, p, rep)| {
            let mut s = if not { format!("!{p}") } else { p };
            if let Some((count, stride)) = rep {
                s += &format!(":{count}");
                if let Some(stride) = stride {
                    s += &format!(":{stride}");
                }
            }
            s
        });
    prop_oneof![
        4 => proptest::collection::vec(place, 1..5).prop_map(|v| v.join(",")),
        1 => ("(?i)(threads|cores|ll_caches|sockets|numa_domains)", proptest::option::of(number()))
            .prop_map(|(name, n)| n.map_or(name.clone(), |n| format!("{name}({n})"))),
        1 => "[{}!:, 0-9-]{0,16}",
    ]
}

/// A value of any kind.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => any::<String>(),
        1 => "\\PC{0,20}",
        1 => Just(String::new()),
        1 => "[ \t\n\r\u{0}\u{a0}\u{2003}]{1,4}",
        3 => number_like(),
        2 => list_like(),
        2 => schedule_like(),
        3 => places_like(),
        1 => "(?i)(true|false|active|passive|verbose|yes|on)[ ]?",
        1 => "(?i)omp_(default|cgroup|high_bw|bogus)_mem_(alloc|space)(:(alignment|pool_size|pinned|fallback)=[0-9a-z_]{0,6}(,[a-z]{1,9}=[0-9]{1,3})?)?",
        2 => cpu_list_like(),
        3 => kmp_affinity_like(),
    ]
}

/// `GOMP_CPU_AFFINITY`-like: CPUs, ranges and strides, spaces or commas.
fn cpu_list_like() -> impl Strategy<Value = String> {
    let item = (number(), proptest::option::of((number(), proptest::option::of(number())))).prop_map(
        |(a, r)| match r {
            None => a,
            Some((b, None)) => format!("{a}-{b}"),
            Some((b, Some(s))) => format!("{a}-{b}:{s}"),
        },
    );
    (proptest::collection::vec(item, 1..6), "[ ,]{1,2}").prop_map(|(v, sep)| v.join(&sep))
}

/// `KMP_AFFINITY`-like: modifiers, a type, integers, proclists, in any order.
fn kmp_affinity_like() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        "(?i)(compact|scatter|balanced|explicit|none|disabled|logical|physical)",
        "(?i)(no)?(verbose|warnings|respect|duplicates|dups)",
        "(?i)gran(ularity)?=(fine|thread|core|tile|module|l[1-3]_cache|ll_cache|die|socket|package|numa_domain|node|proc_group|[0-9]{1,3}|atom)",
        cpu_list_like().prop_map(|l| format!("proclist=[{}]", l.replace(' ', ","))),
        "proclist=\\[\\{[0-9]{1,2}(,[0-9]{1,2}){0,3}\\}\\]",
        number(),
    ];
    proptest::collection::vec(token, 1..6).prop_map(|v| v.join(","))
}

/// An error names the variable, the value as given and the accepted forms.
fn check_error(var: &str, value: &str, e: &EnvError) -> Result<(), TestCaseError> {
    prop_assert_eq!(e.name.as_str(), var);
    prop_assert_eq!(e.value.as_str(), value);
    prop_assert!(e.expected.contains(forms(var)), "{var}={value:?}: {e}");
    let text = e.to_string();
    prop_assert!(text.contains(var) && text.contains(&format!("{value:?}")), "{text}");
    Ok(())
}

/// What parsed can be applied to herd's settings and reported.
fn use_env(omp: &OmpEnv) {
    let _ = env::apply(omp, herd::Config::default());
    let _ = omp.herd_wait();
    let icvs = DisplayIcvs::from_omp(omp, 4);
    let _ = env::display(&icvs, true);
}

proptest! {
    #![proptest_config(config(20000))]

    /// Any value of any variable.
    #[test]
    fn any_value_of_any_variable(var in 0..VARS.len(), value in value()) {
        let var = VARS[var];
        match env::parse(|name| (name == var).then(|| value.clone())) {
            Ok(omp) => use_env(&omp),
            Err(e) => check_error(var, &value, &e)?,
        }
    }
}

proptest! {
    #![proptest_config(config(4000))]

    /// Every variable set at once: `parse_all` reports one error per invalid
    /// variable, in the order of `VARS`, and `parse` the first of them.
    #[test]
    fn every_variable_at_once(values in proptest::collection::vec(value(), VARS.len())) {
        let lookup = |name: &str| VARS.iter().position(|v| *v == name).map(|i| values[i].clone());
        let (omp, errors) = env::parse_all(lookup);
        use_env(&omp);
        let mut last = None;
        for e in &errors {
            let i = VARS.iter().position(|v| *v == e.name).expect("a known variable");
            prop_assert!(last < Some(i), "errors out of order: {errors:?}");
            last = Some(i);
            check_error(VARS[i], &values[i], e)?;
        }
        match env::parse(lookup) {
            Ok(parsed) => prop_assert!(errors.is_empty() && parsed == omp),
            Err(e) => prop_assert_eq!(Some(&e), errors.first()),
        }
    }

    /// `OMP_PLACES` near-valid lists: no runaway expansion, no empty place.
    #[test]
    fn places_lists(value in places_like()) {
        match env::parse(|name| (name == env::PLACES).then(|| value.clone())) {
            Ok(omp) => {
                if let Some(herd::topology::PlacesSpec::Explicit(list)) = &omp.places {
                    prop_assert!(!list.is_empty() && list.iter().all(|p| !p.is_empty()));
                    prop_assert!(list.iter().map(Vec::len).sum::<usize>() <= 1 << 20);
                    let _ = env::format_places(list);
                }
                use_env(&omp);
            }
            Err(e) => check_error(env::PLACES, &value, &e)?,
        }
    }

    /// Sizes and spin counts: the unit arithmetic never wraps.
    #[test]
    fn sizes_and_spin_counts(n in prop_oneof![0u64..100, any::<u64>()], pad in "[ ]{0,2}") {
        for (unit, shift) in [("", 10u32), ("b", 0), ("K", 10), ("m", 20), ("G", 30)] {
            let text = format!("{pad}{n}{pad}{unit}");
            let want = n.checked_mul(1 << shift).filter(|_| n > 0);
            let r = env::parse(|name| (name == env::STACKSIZE).then(|| text.clone()));
            prop_assert_eq!(r.as_ref().ok().and_then(|o| o.stacksize), want, "{:?}", text);
        }
        for (suffix, mult) in [("", 1u64), ("k", 1_000), ("M", 1_000_000), ("g", 1_000_000_000), ("T", 1_000_000_000_000)] {
            let text = format!("{n}{suffix}");
            let r = env::parse(|name| (name == env::SPINCOUNT).then(|| text.clone()));
            prop_assert_eq!(r.ok().and_then(|o| o.spin_count), n.checked_mul(mult), "{:?}", text);
        }
    }
}

/// Place lists at the integer limits or expanding past the limit are prompt
/// errors naming `OMP_PLACES` and the value.
#[test]
fn place_arithmetic_limits() {
    for value in [
        "{0:4294967295}",
        "{0:4}:4294967295:0",
        "{0:3:-9223372036854775808}",
        "{4294967295}:2:9223372036854775807",
        "{0:4}:8:4294967295",
    ] {
        let start = std::time::Instant::now();
        let e = env::parse(|name| (name == env::PLACES).then(|| value.to_string())).expect_err(value);
        assert_eq!((e.name.as_str(), e.value.as_str()), (env::PLACES, value));
        assert!(start.elapsed().as_secs() < 2, "{value}: {:?}", start.elapsed());
    }
    let ok = env::parse(|name| (name == env::PLACES).then(|| "{0:4}:8:4".to_string())).unwrap();
    assert_eq!(
        env::format_places(match &ok.places {
            Some(herd::topology::PlacesSpec::Explicit(list)) => list,
            other => panic!("{other:?}"),
        }),
        "{0:4},{4:4},{8:4},{12:4},{16:4},{20:4},{24:4},{28:4}"
    );
}

proptest! {
    #![proptest_config(config(6000))]

    /// libomp's `KMP_*` variables: any value parses or is an error naming
    /// the variable, the value and the forms; what parses is applied, with
    /// `KMP_AFFINITY` resolved on synthetic machines, without a panic and
    /// with every place non-empty and within the machine.
    #[test]
    fn kmp_variables(var in 0..env::kmp::VARS.len(), value in value(),
                     topo in prop_oneof![Just("pack:2 core:2 pu:2"), Just("pack:2 l3:2 core:2 pu:1"), Just("numa:2 pack:1 l2:2 core:2 pu:2")]) {
        let var = env::kmp::VARS[var];
        let lookup = |name: &str| (name == var).then(|| value.clone());
        match env::kmp::parse(&lookup) {
            Ok(kmp) => {
                let mut omp = OmpEnv::default();
                let t = herd::Topology::synthetic(topo).expect("a synthetic topology");
                let n = t.pus().len() as u32;
                let _ = kmp.apply(&mut omp, &|_| false, || Some(t));
                if let Some(herd::topology::PlacesSpec::Explicit(list)) = &omp.places {
                    prop_assert!(!list.is_empty() && list.iter().all(|p| !p.is_empty() && p.iter().all(|&c| c < n)));
                }
                use_env(&omp);
            }
            Err(e) => check_error(var, &value, &e)?,
        }
    }
}
