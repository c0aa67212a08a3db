//! Property tests of the `HERD_*` parser (`Config::from_lookup`): any string,
//! and many near-valid ones (numbers with suffixes, huge numbers, lists,
//! place syntax, unicode digits, blanks), never panics or hangs; an invalid
//! value is an `InvalidSetting` naming the variable, the value as given and
//! the accepted forms.
//!
//! The runs are deterministic (a fixed seed, no regression files); set
//! `HERD_FUZZ_SEED` to explore other inputs.

use herd::config::Config;
use herd::topology::PlacesSpec;
use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, RngSeed};

/// Every variable `Config::from_lookup` reads, with a piece of its accepted
/// forms that its error message must contain.
const VARS: &[(&str, &str)] = &[
    ("HERD_NUM_THREADS", "a positive integer"),
    ("HERD_PLACES", "threads|cores|ll_caches|sockets|numa_domains"),
    ("HERD_BIND", "one of false, true, close, spread"),
    ("HERD_DISPATCH", "one of lj, lja, ljaml, pw, pwa, pwaml"),
    ("HERD_WAIT", "one of active, passive, spin:<microseconds>"),
    ("HERD_RESERVE", "a non-negative integer"),
    ("HERD_DISPLAY_ENV", "one of false, true, verbose"),
    ("HERD_TOPOLOGY", "(never invalid when parsed)"),
    ("HERD_TRACE", "a path to a JSON file"),
    ("HERD_SCHED", "one of mts, ws, central, fifo, lifo"),
    ("HERD_SHEPHERD", "one of numa, package, l3, l2, core"),
    ("HERD_WORKERS_PER_SHEPHERD", "a positive integer"),
    ("HERD_STEAL_CHUNK", "a positive integer"),
    ("HERD_THROTTLE", "one of off, auto, or a positive integer"),
    ("HERD_STACK_SIZE", "a size in bytes with an optional suffix B, K, M or G"),
];

fn config(cases: u32) -> PtConfig {
    let seed = std::env::var("HERD_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x4845_5244_0013);
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

/// A decimal number of any size, as text: small, near the integer limits, huge.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => (0u64..20).prop_map(|n| n.to_string()),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => Just("4294967295".to_string()),
        1 => Just("4294967296".to_string()),
        1 => Just("9223372036854775807".to_string()),
        1 => Just("-9223372036854775808".to_string()),
        1 => Just("18446744073709551615".to_string()),
        1 => Just("18446744073709551616".to_string()),
        1 => "[0-9]{20,40}",
        1 => "-?0{0,3}[0-9]{0,3}",
    ]
}

/// Numbers with signs, spaces, suffixes, prefixes and unicode digits.
fn number_like() -> impl Strategy<Value = String> {
    prop_oneof![
        (number(), "[ \t]{0,2}", "[bBkKmMgGtTxXe]{0,2}", "[ \t]{0,2}")
            .prop_map(|(n, s1, suf, s2)| format!("{s1}{n}{s2}{suf}{s1}")),
        "[+-]?(0x)?[0-9]{0,6}([.,e][0-9]{0,3})?",
        "[٠-٩０-９¹²³]{1,4}[kKｋ]?",
        (number(), "[ ]{0,2}").prop_map(|(n, s)| format!("spin:{s}{n}")),
        "(?i)spin[:;]?[ 0-9a-z:-]{0,8}",
    ]
}

/// An interval or exclusion inside a place: `n`, `n:len`, `n:len:stride`, `!n`.
fn res() -> impl Strategy<Value = String> {
    (
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
        })
}

/// A place list in OpenMP syntax, near-valid: places `{...}` or bare numbers,
/// replicated `:count:stride`, excluded `!`, with stray spaces and commas.
fn places_like() -> impl Strategy<Value = String> {
    let place = (
        proptest::bool::weighted(0.15),
        prop_oneof![
            proptest::collection::vec(res(), 0..4).prop_map(|v| format!("{{{}}}", v.join(","))),
            number(),
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
        4 => (proptest::collection::vec(place, 1..5), "[ ,]{0,1}").prop_map(|(v, sep)| format!("{}{sep}", v.join(","))),
        1 => ("(?i)(threads|cores|ll_caches|sockets|numa_domains|core|thread)", proptest::option::of(number()), "[ )]{0,2}")
            .prop_map(|(name, n, close)| match n {
                Some(n) => format!("{name}({n}{close}"),
                None => name,
            }),
        1 => "[{}!:, 0-9-]{0,16}",
    ]
}

/// Keywords of every variable, in any case, misspelt or with extra bits.
fn keyword_like() -> impl Strategy<Value = String> {
    "(?i)(true|false|close|spread|lj|lja|ljaml|pw|pwa|pwaml|active|passive|verbose|mts|ws|central|fifo|lifo|numa|package|l3|l2|core|off|auto)[ ,a-z0-9]{0,2}"
}

/// A value of any kind: arbitrary unicode, or near-valid.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => any::<String>(),
        1 => "\\PC{0,20}",
        1 => Just(String::new()),
        1 => "[ \t\n\r\u{0}\u{a0}\u{2003}]{1,4}",
        3 => number_like(),
        3 => places_like(),
        2 => keyword_like(),
        1 => "[a-z0-9]{1,8}(,[a-z0-9 ]{0,4}){1,4}",
    ]
}

/// Checks an outcome of parsing `var=value`: no error, or one naming the
/// variable, the value as given and the accepted forms.
fn check(var: &str, value: &str, r: &herd::Result<Config>) -> Result<(), TestCaseError> {
    let Err(e) = r else { return Ok(()) };
    let herd::Error::InvalidSetting { name, value: given, expected } = e else {
        return Err(TestCaseError::fail(format!("{var}={value:?}: not an InvalidSetting: {e:?}")));
    };
    prop_assert_eq!(name.as_str(), var);
    prop_assert_eq!(given.as_str(), value);
    let forms = VARS.iter().find(|(v, _)| *v == var).map(|(_, f)| *f).unwrap();
    prop_assert!(expected.contains(forms), "{var}={value:?}: forms {expected:?} lack {forms:?}");
    let msg = e.to_string();
    prop_assert!(msg.contains(var) && msg.contains(&format!("{value:?}")), "{msg}");
    Ok(())
}

fn parse_one(var: &str, value: &str) -> herd::Result<Config> {
    Config::from_lookup(|name| (name == var).then(|| value.to_string()))
}

proptest! {
    #![proptest_config(config(20000))]

    /// Any value of any variable: no panic; an error names the variable and the value.
    #[test]
    fn any_value_of_any_variable(var in 0..VARS.len(), value in value()) {
        let var = VARS[var].0;
        let r = parse_one(var, &value);
        check(var, &value, &r)?;
    }
}

proptest! {
    #![proptest_config(config(4000))]

    /// Every variable set at once: the error (the first invalid one) names
    /// one of them, with its own value.
    #[test]
    fn every_variable_at_once(values in proptest::collection::vec(value(), VARS.len())) {
        let r = Config::from_lookup(|name| VARS.iter().position(|(v, _)| *v == name).map(|i| values[i].clone()));
        if let Err(herd::Error::InvalidSetting { name, .. }) = &r {
            let i = VARS.iter().position(|(v, _)| *v == name.as_str());
            prop_assert!(i.is_some(), "unknown variable {name}");
            check(name, &values[i.unwrap()], &r)?;
        } else if let Err(e) = &r {
            prop_assert!(false, "not an InvalidSetting: {e:?}");
        }
    }

    /// Place lists, near-valid: no panic, no runaway expansion; a list that
    /// parses has no empty place; `PlacesSpec::parse` agrees with
    /// `HERD_PLACES`.
    #[test]
    fn places_lists(value in places_like()) {
        let r = parse_one("HERD_PLACES", &value);
        check("HERD_PLACES", &value, &r)?;
        match (r, PlacesSpec::parse("HERD_PLACES", &value)) {
            (Ok(c), Ok(spec)) => {
                prop_assert_eq!(c.places.as_ref(), Some(&spec));
                if let PlacesSpec::Explicit(list) = spec {
                    prop_assert!(!list.is_empty() && list.iter().all(|p| !p.is_empty()));
                    prop_assert!(list.iter().map(Vec::len).sum::<usize>() <= 1 << 20);
                }
            }
            (Err(_), Err(_)) => {}
            // A blank variable is unset, a blank list is an error.
            (Ok(c), Err(_)) if value.trim().is_empty() => prop_assert!(c.places.is_none()),
            (a, b) => prop_assert!(false, "HERD_PLACES {:?} vs PlacesSpec {:?}", a.map(|c| c.places), b),
        }
    }

    /// Decimal integers round-trip through every integer variable, spaces
    /// around them allowed; a value too large is an error, not a wrap.
    #[test]
    fn integers_round_trip(n in prop_oneof![0u64..100, any::<u64>()], pad in "[ \t]{0,2}") {
        let text = format!("{pad}{n}{pad}");
        let c = parse_one("HERD_NUM_THREADS", &text);
        prop_assert_eq!(c.ok().and_then(|c| c.num_threads), (n >= 1).then_some(n as usize));
        let c = parse_one("HERD_RESERVE", &text);
        prop_assert_eq!(c.ok().and_then(|c| c.reserve), Some(n as usize));
        for (suffix, shift) in [("", 10u32), ("B", 0), ("k", 10), ("M", 20), ("g", 30)] {
            let want = n.checked_mul(1 << shift).filter(|&b| b >= 16 << 10);
            let text = format!("{n}{suffix}");
            let r = parse_one("HERD_STACK_SIZE", &text);
            check("HERD_STACK_SIZE", &text, &r)?;
            prop_assert_eq!(r.ok().and_then(|c| c.ult_stack_size).map(|b| b as u64), want, "{}", text);
        }
    }

    /// `{start:len:stride}` expands to exactly the PU numbers
    /// start + k·stride, or is an error when one of them is not a PU number.
    #[test]
    fn intervals_expand_exactly(start in prop_oneof![0u32..64, any::<u32>()], len in 1u32..40,
                                stride in prop_oneof![-8i64..8, any::<i64>()]) {
        let text = format!("{{{start}:{len}:{stride}}}");
        let want: Option<Vec<u32>> = (0..i128::from(len))
            .map(|k| u32::try_from(i128::from(start) + k * i128::from(stride)).ok())
            .collect();
        match (PlacesSpec::parse("HERD_PLACES", &text), want) {
            (Ok(PlacesSpec::Explicit(list)), Some(mut want)) => {
                want.sort_unstable();
                want.dedup();
                prop_assert_eq!(list, vec![want]);
            }
            (Err(e), None) => prop_assert!(e.to_string().contains("which does not exist"), "{e}"),
            (got, want) => prop_assert!(false, "{text}: got {got:?}, want {want:?}"),
        }
    }
}

/// Intervals and replications at the integer limits are errors naming the PU
/// number reached (computed without overflow), and lists that expand to
/// billions of PU numbers (which took gigabytes and minutes before the limit)
/// are prompt errors; each names the variable and the value. "Prompt" is
/// measured against this build on this machine: no error may take more than
/// four times as long as parsing the largest lists allowed (a million PUs,
/// which an error case may expand before it stops), plus 250 ms — a fixed
/// 2 s failed once under ThreadSanitizer's debug build on a loaded machine,
/// where the allowed lists themselves take about that long.
#[test]
fn place_arithmetic_limits() {
    // The largest lists allowed still parse; the slowest of them is the yardstick.
    let mut base = std::time::Duration::ZERO;
    for value in ["{0:1048576}", "{0:1024}:1024", "{0}:1048576:0"] {
        let start = std::time::Instant::now();
        assert!(parse_one("HERD_PLACES", value).is_ok(), "{value}");
        base = base.max(start.elapsed());
    }
    let limit = base * 4 + std::time::Duration::from_millis(250);
    for (value, why) in [
        ("{0:3:-9223372036854775808}", "reaches PU -9223372036854775808"),
        ("{4294967295:2:9223372036854775807}", "reaches PU 9223372041149743102"),
        ("{0}:3:9223372036854775807", "reaches PU 9223372036854775807"),
        ("{0:4294967295}", "more than 1048576 PUs"),
        ("{0:4294967295:0}", "more than 1048576 PUs"),
        ("{0}:4294967295:0", "more than 1048576 PUs"),
        ("{0:1024}:1025", "more than 1048576 PUs"),
        ("{0:1048576},{0}", "more than 1048576 PUs"),
    ] {
        let start = std::time::Instant::now();
        let e = parse_one("HERD_PLACES", value).expect_err(value).to_string();
        assert!(e.contains("HERD_PLACES") && e.contains(&format!("{value:?}")) && e.contains(why), "{e}");
        assert!(start.elapsed() < limit, "{value}: {:?} (limit {limit:?})", start.elapsed());
    }
}
