//! Parsing of the `HERD_*` variables.
//!
//! Every variable goes through [`parse`], which reads it through a lookup
//! function (never `std::env` directly, so tests need not touch the process
//! environment). A variable that is unset, or empty once trimmed, is `None`:
//! herd decides. Values are trimmed and keywords are case-insensitive. Every
//! invalid value is an [`Error::InvalidSetting`](crate::Error::InvalidSetting)
//! naming the variable, the value as given and all the accepted forms.
//!
//! Two helpers do all the value parsing: [`keyword`] (one word out of a fixed
//! table) and [`unsigned`] (a decimal integer with a lower bound). Every
//! variable is one of those, a combination of them (`HERD_WAIT`), or a string
//! checked elsewhere (`HERD_PLACES`, `HERD_TOPOLOGY`, `HERD_TRACE`).

use super::parse;
use super::{Bind, Config, Dispatch, DisplayEnv, Sched, ShepherdLevel, Throttle, WaitPolicy};
use crate::topology::PlacesSpec;
use crate::{Error, Result};
use std::path::PathBuf;
use std::time::Duration;

/// `HERD_NUM_THREADS`
pub(crate) const NUM_THREADS: &str = "HERD_NUM_THREADS";
/// `HERD_PLACES`
pub(crate) const PLACES: &str = "HERD_PLACES";
/// `HERD_BIND`
pub(crate) const BIND: &str = "HERD_BIND";
/// `HERD_DISPATCH`
pub(crate) const DISPATCH: &str = "HERD_DISPATCH";
/// `HERD_WAIT`
pub(crate) const WAIT: &str = "HERD_WAIT";
/// `HERD_RESERVE`
pub(crate) const RESERVE: &str = "HERD_RESERVE";
/// `HERD_DISPLAY_ENV`
pub(crate) const DISPLAY_ENV: &str = "HERD_DISPLAY_ENV";
/// `HERD_TOPOLOGY`
pub(crate) const TOPOLOGY: &str = "HERD_TOPOLOGY";
/// `HERD_TRACE`
pub(crate) const TRACE: &str = "HERD_TRACE";

/// `HERD_SCHED`
pub(crate) const SCHED: &str = "HERD_SCHED";
/// `HERD_SHEPHERD`
pub(crate) const SHEPHERD: &str = "HERD_SHEPHERD";
/// `HERD_WORKERS_PER_SHEPHERD`
pub(crate) const WORKERS_PER_SHEPHERD: &str = "HERD_WORKERS_PER_SHEPHERD";
/// `HERD_STEAL_CHUNK`
pub(crate) const STEAL_CHUNK: &str = "HERD_STEAL_CHUNK";
/// `HERD_THROTTLE`
pub(crate) const THROTTLE: &str = "HERD_THROTTLE";
/// `HERD_STACK_SIZE`
pub(crate) const STACK_SIZE: &str = "HERD_STACK_SIZE";

/// `HERD_OMP_LIB`: where `herd run` finds herd's OpenMP library (read by
/// the CLI, not by [`parse`]).
pub(crate) const OMP_LIB: &str = "HERD_OMP_LIB";
/// `HERD_SYGV_TWO_STAGE_FROM`: the order from which herd-la's `sygv`
/// reduces to tridiagonal in two stages (read by herd-la, not by
/// [`parse`]).
pub(crate) const SYGV_TWO_STAGE_FROM: &str = "HERD_SYGV_TWO_STAGE_FROM";
/// Every `HERD_*` variable herd reads: those [`parse`] reads, and
/// [`OMP_LIB`] and [`SYGV_TWO_STAGE_FROM`]; any other is reported as
/// unknown.
pub(crate) const KNOWN: &[&str] = &[
    NUM_THREADS,
    PLACES,
    BIND,
    DISPATCH,
    WAIT,
    RESERVE,
    DISPLAY_ENV,
    TOPOLOGY,
    TRACE,
    SCHED,
    SHEPHERD,
    WORKERS_PER_SHEPHERD,
    STEAL_CHUNK,
    THROTTLE,
    STACK_SIZE,
    OMP_LIB,
    SYGV_TWO_STAGE_FROM,
];

const NUM_THREADS_FORMS: &str = "a positive integer (participants per region, master included)";
const RESERVE_FORMS: &str = "a non-negative integer (cores left idle for the OS)";
const WAIT_FORMS: &str = "one of active, passive, spin:<microseconds> \
     (microseconds: a non-negative integer, e.g. spin:200)";

const WORKERS_PER_SHEPHERD_FORMS: &str = "a positive integer (most workers in one shepherd)";
const STEAL_CHUNK_FORMS: &str = "a positive integer (tasks taken by one remote steal)";
const THROTTLE_FORMS: &str = "one of off, auto, or a positive integer (active workers per shepherd)";
const STACK_SIZE_FORMS: &str = "a size in bytes with an optional suffix B, K, M or G \
     (no suffix: kilobytes, as OMP_STACKSIZE), at least 16K, e.g. 64K";

const SCHEDS: &[(&str, Sched)] = &[
    ("mts", Sched::Mts),
    ("ws", Sched::Ws),
    ("central", Sched::Central),
    ("fifo", Sched::Fifo),
    ("lifo", Sched::Lifo),
];

const SHEPHERDS: &[(&str, ShepherdLevel)] = &[
    ("numa", ShepherdLevel::Numa),
    ("package", ShepherdLevel::Package),
    ("l3", ShepherdLevel::L3),
    ("l2", ShepherdLevel::L2),
    ("core", ShepherdLevel::Core),
];

/// The smallest lightweight-thread stack accepted (16 KiB).
pub(crate) const MIN_ULT_STACK: usize = 16 << 10;

const BINDS: &[(&str, Bind)] =
    &[("false", Bind::False), ("true", Bind::True), ("close", Bind::Close), ("spread", Bind::Spread)];

const DISPATCHES: &[(&str, Dispatch)] = &[
    ("lj", Dispatch::Lj),
    ("lja", Dispatch::Lja),
    ("ljaml", Dispatch::Ljaml),
    ("pw", Dispatch::Pw),
    ("pwa", Dispatch::Pwa),
    ("pwaml", Dispatch::Pwaml),
];

const DISPLAY_ENVS: &[(&str, DisplayEnv)] =
    &[("false", DisplayEnv::False), ("true", DisplayEnv::True), ("verbose", DisplayEnv::Verbose)];

const WAIT_WORDS: &[(&str, WaitPolicy)] = &[("active", WaitPolicy::Active), ("passive", WaitPolicy::Passive)];

/// Reads every `HERD_*` variable through `lookup`.
pub(super) fn parse(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Config> {
    // `raw` is the value as given (reported in errors), `v` the trimmed value.
    let get = |name: &str| -> Option<(String, String)> {
        let raw = lookup(name)?;
        let v = raw.trim().to_string();
        (!v.is_empty()).then_some((raw, v))
    };
    let mut c = Config::default();
    if let Some((raw, v)) = get(NUM_THREADS) {
        c.num_threads = Some(unsigned(NUM_THREADS, &raw, &v, 1, NUM_THREADS_FORMS)?);
    }
    if let Some((raw, v)) = get(PLACES) {
        c.places = Some(PlacesSpec::parse(PLACES, &v).map_err(|e| restore_raw(e, &v, &raw))?);
    }
    if let Some((raw, v)) = get(BIND) {
        c.bind = Some(keyword(BIND, &raw, &v, BINDS)?);
    }
    if let Some((raw, v)) = get(DISPATCH) {
        c.dispatch = Some(keyword(DISPATCH, &raw, &v, DISPATCHES)?);
    }
    if let Some((raw, v)) = get(WAIT) {
        c.wait = Some(wait(&raw, &v)?);
    }
    if let Some((raw, v)) = get(RESERVE) {
        c.reserve = Some(unsigned(RESERVE, &raw, &v, 0, RESERVE_FORMS)?);
    }
    if let Some((raw, v)) = get(DISPLAY_ENV) {
        c.display_env = Some(keyword(DISPLAY_ENV, &raw, &v, DISPLAY_ENVS)?);
    }
    if let Some((_, v)) = get(TOPOLOGY) {
        // An hwloc synthetic description, validated when the topology is built.
        c.topology = Some(v);
    }
    if let Some((raw, v)) = get(TRACE) {
        c.trace = Some(trace_path(&raw, &v)?);
    }
    if let Some((raw, v)) = get(SCHED) {
        c.sched = Some(keyword(SCHED, &raw, &v, SCHEDS)?);
    }
    if let Some((raw, v)) = get(SHEPHERD) {
        c.shepherd = Some(keyword(SHEPHERD, &raw, &v, SHEPHERDS)?);
    }
    if let Some((raw, v)) = get(WORKERS_PER_SHEPHERD) {
        c.workers_per_shepherd =
            Some(unsigned(WORKERS_PER_SHEPHERD, &raw, &v, 1, WORKERS_PER_SHEPHERD_FORMS)?);
    }
    if let Some((raw, v)) = get(STEAL_CHUNK) {
        c.steal_chunk = Some(unsigned(STEAL_CHUNK, &raw, &v, 1, STEAL_CHUNK_FORMS)?);
    }
    if let Some((raw, v)) = get(THROTTLE) {
        c.throttle = Some(throttle(&raw, &v)?);
    }
    if let Some((raw, v)) = get(STACK_SIZE) {
        c.ult_stack_size = Some(stack_size(&raw, &v)?);
    }
    Ok(c)
}

/// `HERD_THROTTLE`: `off`, `auto` or a positive integer.
fn throttle(raw: &str, v: &str) -> Result<Throttle> {
    if v.eq_ignore_ascii_case("off") {
        Ok(Throttle::Off)
    } else if v.eq_ignore_ascii_case("auto") {
        Ok(Throttle::Auto)
    } else {
        unsigned(THROTTLE, raw, v, 1, THROTTLE_FORMS).map(Throttle::Fixed)
    }
}

/// `HERD_STACK_SIZE`: `<n>[B|K|M|G]`, no suffix meaning kilobytes (as
/// OpenMP's `OMP_STACKSIZE`), at least [`MIN_ULT_STACK`].
fn stack_size(raw: &str, v: &str) -> Result<usize> {
    parse::size_bytes(v)
        .and_then(|b| usize::try_from(b).ok())
        .filter(|&b| b >= MIN_ULT_STACK)
        .ok_or_else(|| Error::invalid(STACK_SIZE, raw, STACK_SIZE_FORMS))
}

/// One word out of `table`, compared case-insensitively. The error lists every
/// word of the table.
fn keyword<T: Copy>(var: &str, raw: &str, v: &str, table: &[(&str, T)]) -> Result<T> {
    parse::keyword(v, table).ok_or_else(|| Error::invalid(var, raw, parse::keyword_forms(table)))
}

/// A decimal integer `>= min` (ASCII digits only: no sign, no spaces inside)
/// that fits in `T`; anything else, including a value too large, is an error
/// with `forms` as the accepted forms.
fn unsigned<T: TryFrom<u64>>(var: &str, raw: &str, v: &str, min: u64, forms: &str) -> Result<T> {
    parse::unsigned(v, min).ok_or_else(|| Error::invalid(var, raw, forms))
}

/// `HERD_WAIT`: `active`, `passive` or `spin:<microseconds>`.
fn wait(raw: &str, v: &str) -> Result<WaitPolicy> {
    const SPIN: &str = "spin:";
    match v.get(..SPIN.len()) {
        Some(prefix) if prefix.eq_ignore_ascii_case(SPIN) => {
            let micros: u64 = unsigned(WAIT, raw, v[SPIN.len()..].trim(), 0, WAIT_FORMS)?;
            Ok(WaitPolicy::Spin(Duration::from_micros(micros)))
        }
        _ => keyword(WAIT, raw, v, WAIT_WORDS).map_err(|_| Error::invalid(WAIT, raw, WAIT_FORMS)),
    }
}

/// `HERD_TRACE`: a file path whose directory exists (the file itself is
/// created, or replaced, when the trace is written).
fn trace_path(raw: &str, v: &str) -> Result<PathBuf> {
    let path = PathBuf::from(v);
    let forms = |why: String| {
        format!(
            "a path to a JSON file to create, in an existing directory, \
             e.g. /tmp/herd-trace.json ({why})"
        )
    };
    if path.is_dir() {
        return Err(Error::invalid(TRACE, raw, forms("this is a directory".into())));
    }
    match path.parent() {
        // A bare file name (parent "") lives in the current directory.
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => {
            Err(Error::invalid(TRACE, raw, forms(format!("directory {} does not exist", dir.display()))))
        }
        None => Err(Error::invalid(TRACE, raw, forms("not a file path".into()))),
        _ => Ok(path),
    }
}

/// `PlacesSpec::parse` saw the trimmed value; report the value as given.
fn restore_raw(e: Error, trimmed: &str, raw: &str) -> Error {
    match e {
        Error::InvalidSetting { name, value, expected } if value == trimmed => {
            Error::InvalidSetting { name, value: raw.to_string(), expected }
        }
        e => e,
    }
}

/// Names in `vars` that start with `HERD_` but are not variables herd reads
/// (typos such as `HERD_NUM_THREAD`), in the order given; pair each with
/// [`suggest`] to warn the user.
pub(crate) fn unknown_herd_vars(vars: impl Iterator<Item = String>) -> Vec<String> {
    vars.filter(|v| v.starts_with("HERD_") && !KNOWN.contains(&v.as_str())).collect()
}

/// The known variable closest to `name` (case-insensitive edit distance), if
/// it is close enough to be a plausible typo: at most 3 edits, and fewer than
/// half the length of the part after `HERD_`.
pub(crate) fn suggest(name: &str) -> Option<&'static str> {
    let name = name.to_ascii_uppercase();
    let (best, dist) = KNOWN.iter().map(|&k| (k, edit_distance(&name, k))).min_by_key(|&(_, d)| d)?;
    let stem = name.strip_prefix("HERD_").unwrap_or(&name).chars().count();
    (dist <= 3 && dist * 2 < stem.max(2)).then_some(best)
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let subst = prev[j] + usize::from(ca != cb);
            cur[j + 1] = subst.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_one(var: &str, value: &str) -> Result<Config> {
        let (var, value) = (var.to_string(), value.to_string());
        parse(&move |name: &str| (name == var).then(|| value.clone()))
    }

    fn err_text(var: &str, value: &str) -> String {
        parse_one(var, value).expect_err(value).to_string()
    }

    #[test]
    fn nothing_set_is_all_none() {
        let c = parse(&|_| None).unwrap();
        assert!(c.num_threads.is_none() && c.places.is_none() && c.bind.is_none());
        assert!(c.dispatch.is_none() && c.wait.is_none() && c.reserve.is_none());
        assert!(c.display_env.is_none() && c.topology.is_none() && c.trace.is_none());
    }

    #[test]
    fn blank_values_are_unset() {
        for var in KNOWN {
            let c = parse_one(var, "  \t ").unwrap();
            assert!(c.num_threads.is_none() && c.places.is_none() && c.trace.is_none(), "{var}");
            assert!(c.topology.is_none() && c.wait.is_none(), "{var}");
        }
    }

    #[test]
    fn keyword_helper_is_case_insensitive_and_lists_forms() {
        assert_eq!(keyword("X", "ClOsE", "ClOsE", BINDS).unwrap(), Bind::Close);
        let e = keyword("X", "nope", "nope", BINDS).unwrap_err().to_string();
        assert!(e.contains("one of false, true, close, spread (case-insensitive)"), "{e}");
    }

    #[test]
    fn unsigned_helper_bounds_and_garbage() {
        assert_eq!(unsigned::<u64>("X", "0", "0", 0, "f").unwrap(), 0);
        assert!(unsigned::<u64>("X", "0", "0", 1, "f").is_err());
        assert!(unsigned::<u8>("X", "256", "256", 0, "f").is_err());
        for bad in ["", "+1", "-1", "1.0", "1e3", "0x10", "1 2", "18446744073709551616"] {
            assert!(unsigned::<u64>("X", bad, bad, 0, "f").is_err(), "{bad:?}");
        }
        assert_eq!(unsigned::<u64>("X", "", "18446744073709551615", 0, "f").unwrap(), u64::MAX);
    }

    #[test]
    fn wait_forms() {
        assert_eq!(wait("", "ACTIVE").unwrap(), WaitPolicy::Active);
        assert_eq!(wait("", "passive").unwrap(), WaitPolicy::Passive);
        assert_eq!(wait("", "Spin:0").unwrap(), WaitPolicy::Spin(Duration::ZERO));
        assert_eq!(wait("", "spin: 50").unwrap(), WaitPolicy::Spin(Duration::from_micros(50)));
        for bad in ["spin:", "spin:-1", "spin:abc", "spin", "spinning", "sleep", "spin:1:2"] {
            let e = wait(bad, bad).unwrap_err().to_string();
            assert!(e.contains(WAIT) && e.contains(WAIT_FORMS), "{e}");
        }
    }

    #[test]
    fn maestro_settings() {
        assert_eq!(parse_one(SCHED, "WS").unwrap().sched, Some(Sched::Ws));
        assert_eq!(parse_one(SHEPHERD, "l2").unwrap().shepherd, Some(ShepherdLevel::L2));
        assert_eq!(parse_one(WORKERS_PER_SHEPHERD, "4").unwrap().workers_per_shepherd, Some(4));
        assert_eq!(parse_one(STEAL_CHUNK, "3").unwrap().steal_chunk, Some(3));
        assert_eq!(parse_one(THROTTLE, "Auto").unwrap().throttle, Some(Throttle::Auto));
        assert_eq!(parse_one(THROTTLE, "off").unwrap().throttle, Some(Throttle::Off));
        assert_eq!(parse_one(THROTTLE, "2").unwrap().throttle, Some(Throttle::Fixed(2)));
        assert_eq!(parse_one(STACK_SIZE, "64").unwrap().ult_stack_size, Some(64 << 10));
        assert_eq!(parse_one(STACK_SIZE, "1m").unwrap().ult_stack_size, Some(1 << 20));
        assert_eq!(parse_one(STACK_SIZE, "32768B").unwrap().ult_stack_size, Some(32768));
        for (var, bad, forms) in [
            (SCHED, "stack", "one of mts, ws, central, fifo, lifo"),
            (SHEPHERD, "socket", "one of numa, package, l3, l2, core"),
            (WORKERS_PER_SHEPHERD, "0", WORKERS_PER_SHEPHERD_FORMS),
            (STEAL_CHUNK, "-1", STEAL_CHUNK_FORMS),
            (THROTTLE, "0", THROTTLE_FORMS),
            (THROTTLE, "on", THROTTLE_FORMS),
            (STACK_SIZE, "4K", STACK_SIZE_FORMS),
            (STACK_SIZE, "64X", STACK_SIZE_FORMS),
            (STACK_SIZE, "99999999999999G", STACK_SIZE_FORMS),
        ] {
            let e = err_text(var, bad);
            assert!(e.contains(var) && e.contains(bad) && e.contains(forms), "{e}");
        }
    }

    #[test]
    fn raw_value_is_reported() {
        let e = err_text(BIND, "  maybe ");
        assert!(e.contains("\"  maybe \""), "{e}");
    }

    #[test]
    fn trace_path_checks_directory() {
        let dir = std::env::temp_dir();
        let ok = dir.join("herd-env-unit.json");
        assert_eq!(parse_one(TRACE, ok.to_str().unwrap()).unwrap().trace.unwrap(), ok);
        assert_eq!(parse_one(TRACE, "trace.json").unwrap().trace.unwrap(), PathBuf::from("trace.json"));
        let e = err_text(TRACE, "/no/such/dir/t.json");
        assert!(e.contains("directory /no/such/dir does not exist"), "{e}");
        let e = err_text(TRACE, dir.to_str().unwrap());
        assert!(e.contains("this is a directory"), "{e}");
    }

    #[test]
    fn unknown_vars_and_suggestions() {
        let vars = ["HERD_NUM_THREAD", "PATH", "HERD_BIND", "HERD_PLACE", "HERDX", "HERD_WHATEVER"]
            .map(String::from);
        assert_eq!(unknown_herd_vars(vars.into_iter()), ["HERD_NUM_THREAD", "HERD_PLACE", "HERD_WHATEVER"]);
        assert_eq!(suggest("HERD_NUM_THREAD"), Some(NUM_THREADS));
        assert_eq!(suggest("herd_num_threads"), Some(NUM_THREADS));
        assert_eq!(suggest("HERD_PLACE"), Some(PLACES));
        assert_eq!(suggest("HERD_DISPLAYENV"), Some(DISPLAY_ENV));
        assert_eq!(suggest("HERD_WAITS"), Some(WAIT));
        assert_eq!(suggest("HERD_TRACES"), Some(TRACE));
        assert_eq!(suggest("HERD_WHATEVER"), None);
        assert_eq!(suggest("HERD_X"), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
