//! `HERD_*` parsing through `Config::from_lookup`: one test per invalid value
//! per variable (each checks that the message names the variable, the value
//! and the accepted forms), then the valid forms.

use herd::{Bind, Config, Dispatch, DisplayEnv, WaitPolicy};
use std::path::PathBuf;
use std::time::Duration;

fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let vars: Vec<(String, String)> = vars.iter().map(|&(k, v)| (k.to_string(), v.to_string())).collect();
    move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

fn parse(vars: &[(&str, &str)]) -> herd::Result<Config> {
    Config::from_lookup(lookup(vars))
}

fn parse_one(var: &str, value: &str) -> Config {
    parse(&[(var, value)]).unwrap_or_else(|e| panic!("{var}={value:?}: {e}"))
}

/// `var=value` is rejected with a message naming the variable, the value as
/// given, and every one of `forms`.
fn assert_invalid(var: &str, value: &str, forms: &[&str]) {
    let err = match parse(&[(var, value)]) {
        Ok(c) => panic!("{var}={value:?} accepted: {c:?}"),
        Err(e) => e,
    };
    assert!(matches!(err, herd::Error::InvalidSetting { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(var), "{msg}");
    assert!(msg.contains(&format!("{value:?}")), "{msg}");
    for form in forms {
        assert!(msg.contains(form), "{msg} lacks {form:?}");
    }
}

macro_rules! invalid {
    ($($test:ident: $var:literal = $value:expr => [$($form:expr),*];)*) => {
        $(
            #[test]
            fn $test() {
                assert_invalid($var, $value, &[$($form),*]);
            }
        )*
    };
}

const POSITIVE: &str = "a positive integer (participants per region, master included)";
const NON_NEGATIVE: &str = "a non-negative integer (cores left idle for the OS)";
const BINDS: &str = "one of false, true, close, spread";
const DISPATCHES: &str = "one of lj, lja, ljaml, pw, pwa, pwaml";
const WAITS: &str = "one of active, passive, spin:<microseconds>";
const MICROS: &str = "a non-negative integer";
const DISPLAYS: &str = "one of false, true, verbose";

invalid! {
    num_threads_zero: "HERD_NUM_THREADS" = "0" => [POSITIVE];
    num_threads_negative: "HERD_NUM_THREADS" = "-2" => [POSITIVE];
    num_threads_garbage: "HERD_NUM_THREADS" = "four" => [POSITIVE];
    num_threads_fraction: "HERD_NUM_THREADS" = "1.5" => [POSITIVE];
    num_threads_plus_sign: "HERD_NUM_THREADS" = "+4" => [POSITIVE];
    num_threads_trailing_words: "HERD_NUM_THREADS" = "4 threads" => [POSITIVE];
    num_threads_overflow: "HERD_NUM_THREADS" = "99999999999999999999999" => [POSITIVE];

    places_garbage: "HERD_PLACES" = "{0,1" => [];

    bind_yes: "HERD_BIND" = "yes" => [BINDS];
    bind_master: "HERD_BIND" = "master" => [BINDS];
    bind_primary: "HERD_BIND" = "primary" => [BINDS];
    bind_number: "HERD_BIND" = "1" => [BINDS];

    dispatch_unknown: "HERD_DISPATCH" = "pool" => [DISPATCHES];
    dispatch_suffix: "HERD_DISPATCH" = "pwamlx" => [DISPATCHES];
    dispatch_uppercase_typo: "HERD_DISPATCH" = "LJAM" => [DISPATCHES];

    wait_spin_without_time: "HERD_WAIT" = "spin:" => [WAITS, MICROS];
    wait_spin_negative: "HERD_WAIT" = "spin:-1" => [WAITS, MICROS];
    wait_spin_garbage: "HERD_WAIT" = "spin:abc" => [WAITS, MICROS];
    wait_spin_units: "HERD_WAIT" = "spin:10us" => [WAITS, MICROS];
    wait_bare_spin: "HERD_WAIT" = "spin" => [WAITS, MICROS];
    wait_unknown_word: "HERD_WAIT" = "sleepy" => [WAITS, MICROS];
    wait_active_with_time: "HERD_WAIT" = "active:5" => [WAITS, MICROS];

    reserve_negative: "HERD_RESERVE" = "-1" => [NON_NEGATIVE];
    reserve_garbage: "HERD_RESERVE" = "some" => [NON_NEGATIVE];
    reserve_fraction: "HERD_RESERVE" = "0.5" => [NON_NEGATIVE];
    reserve_overflow: "HERD_RESERVE" = "18446744073709551616" => [NON_NEGATIVE];

    display_env_number: "HERD_DISPLAY_ENV" = "1" => [DISPLAYS];
    display_env_yes: "HERD_DISPLAY_ENV" = "yes" => [DISPLAYS];
    display_env_unknown: "HERD_DISPLAY_ENV" = "loud" => [DISPLAYS];

    trace_missing_directory: "HERD_TRACE" = "/nonexistent-herd-dir/trace.json" =>
        ["a path to a JSON file to create, in an existing directory",
         "directory /nonexistent-herd-dir does not exist"];
}

#[test]
fn trace_is_a_directory() {
    let dir = std::env::temp_dir();
    assert_invalid(
        "HERD_TRACE",
        dir.to_str().unwrap(),
        &["a path to a JSON file to create, in an existing directory", "this is a directory"],
    );
}

#[test]
fn places_error_names_the_variable() {
    for bad in ["{0,1", "cores(", "nonsense"] {
        let msg = parse(&[("HERD_PLACES", bad)]).unwrap_err().to_string();
        assert!(msg.contains("HERD_PLACES") && msg.contains(&format!("{bad:?}")), "{msg}");
    }
}

#[test]
fn places_valid() {
    assert!(parse_one("HERD_PLACES", "threads").places.is_some());
    assert!(parse_one("HERD_PLACES", " {0,1},{2:2} ").places.is_some());
}

#[test]
fn nothing_set_means_herd_decides() {
    let c = parse(&[]).unwrap();
    assert_eq!(c.num_threads, None);
    assert!(c.places.is_none());
    assert_eq!((c.bind, c.dispatch, c.wait), (None, None, None));
    assert_eq!((c.reserve, c.display_env), (None, None));
    assert_eq!((c.topology, c.trace), (None, None));
}

#[test]
fn empty_and_blank_values_are_unset() {
    for var in [
        "HERD_NUM_THREADS",
        "HERD_PLACES",
        "HERD_BIND",
        "HERD_DISPATCH",
        "HERD_WAIT",
        "HERD_RESERVE",
        "HERD_DISPLAY_ENV",
        "HERD_TOPOLOGY",
        "HERD_TRACE",
    ] {
        for blank in ["", "   ", "\t\n"] {
            let c = parse_one(var, blank);
            assert!(c.num_threads.is_none() && c.places.is_none() && c.bind.is_none());
            assert!(c.dispatch.is_none() && c.wait.is_none() && c.reserve.is_none());
            assert!(c.display_env.is_none() && c.topology.is_none() && c.trace.is_none());
        }
    }
}

#[test]
fn num_threads_valid() {
    assert_eq!(parse_one("HERD_NUM_THREADS", "1").num_threads, Some(1));
    assert_eq!(parse_one("HERD_NUM_THREADS", " 64 ").num_threads, Some(64));
    assert_eq!(parse_one("HERD_NUM_THREADS", "007").num_threads, Some(7));
}

#[test]
fn bind_valid_any_case() {
    for (v, b) in
        [("false", Bind::False), ("TRUE", Bind::True), ("Close", Bind::Close), (" spread ", Bind::Spread)]
    {
        assert_eq!(parse_one("HERD_BIND", v).bind, Some(b), "{v}");
    }
}

#[test]
fn dispatch_valid_any_case() {
    for d in Dispatch::ALL {
        assert_eq!(parse_one("HERD_DISPATCH", d.name()).dispatch, Some(d));
        assert_eq!(parse_one("HERD_DISPATCH", &d.to_string()).dispatch, Some(d));
    }
}

#[test]
fn wait_valid() {
    assert_eq!(parse_one("HERD_WAIT", "active").wait, Some(WaitPolicy::Active));
    assert_eq!(parse_one("HERD_WAIT", "PASSIVE").wait, Some(WaitPolicy::Passive));
    assert_eq!(parse_one("HERD_WAIT", "spin:0").wait, Some(WaitPolicy::Spin(Duration::ZERO)));
    assert_eq!(parse_one("HERD_WAIT", " Spin:250 ").wait, Some(WaitPolicy::Spin(Duration::from_micros(250))));
}

#[test]
fn reserve_valid() {
    assert_eq!(parse_one("HERD_RESERVE", "0").reserve, Some(0));
    assert_eq!(parse_one("HERD_RESERVE", "3").reserve, Some(3));
}

#[test]
fn display_env_valid() {
    for (v, d) in [("false", DisplayEnv::False), ("True", DisplayEnv::True), ("VERBOSE", DisplayEnv::Verbose)]
    {
        assert_eq!(parse_one("HERD_DISPLAY_ENV", v).display_env, Some(d), "{v}");
    }
}

#[test]
fn topology_is_kept_trimmed() {
    assert_eq!(
        parse_one("HERD_TOPOLOGY", "  pack:2 core:4 pu:2 ").topology.as_deref(),
        Some("pack:2 core:4 pu:2")
    );
}

#[test]
fn trace_valid_paths() {
    let file = std::env::temp_dir().join("herd-config-env-test.json");
    let c = parse_one("HERD_TRACE", file.to_str().unwrap());
    assert_eq!(c.trace, Some(file));
    assert_eq!(parse_one("HERD_TRACE", "trace.json").trace, Some(PathBuf::from("trace.json")));
}

#[test]
fn everything_at_once() {
    let c = parse(&[
        ("HERD_NUM_THREADS", "4"),
        ("HERD_BIND", "spread"),
        ("HERD_DISPATCH", "pwa"),
        ("HERD_WAIT", "spin:10"),
        ("HERD_RESERVE", "1"),
        ("HERD_DISPLAY_ENV", "verbose"),
        ("HERD_TOPOLOGY", "pack:1 core:4 pu:1"),
        ("HERD_NUM_THREAD", "9"), // a typo: not read here
    ])
    .unwrap();
    assert_eq!(c.num_threads, Some(4));
    assert_eq!(c.bind, Some(Bind::Spread));
    assert_eq!(c.dispatch, Some(Dispatch::Pwa));
    assert_eq!(c.wait, Some(WaitPolicy::Spin(Duration::from_micros(10))));
    assert_eq!(c.reserve, Some(1));
    assert_eq!(c.display_env, Some(DisplayEnv::Verbose));
    assert_eq!(c.topology.as_deref(), Some("pack:1 core:4 pu:1"));
}

#[test]
fn first_invalid_variable_is_reported_even_with_valid_ones() {
    let msg = parse(&[("HERD_NUM_THREADS", "4"), ("HERD_WAIT", "spin:x")]).unwrap_err().to_string();
    assert!(msg.contains("HERD_WAIT") && msg.contains("\"spin:x\""), "{msg}");
}
