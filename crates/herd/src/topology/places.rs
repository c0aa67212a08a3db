//! `HERD_PLACES` / `OMP_PLACES`: the OpenMP place-list syntax, parsed and then
//! resolved against a [`Topology`].
//!
//! Accepted forms (OpenMP 5.x):
//!
//! * an abstract name, case-insensitive, optionally with a count:
//!   `threads`, `cores`, `ll_caches`, `sockets`, `numa_domains`, `cores(4)`;
//! * an explicit list of places, separated by commas. A place is `{...}` (a
//!   list of OS PU numbers `n`, intervals `n:len` and `n:len:stride`, and
//!   exclusions `!n`) or a bare PU number. A place may be replicated as
//!   `place:count` or `place:count:stride` (each copy shifted by `stride`,
//!   default 1), and `!place` removes an earlier, identical place from the list.
//!
//! Examples: `{0,1},{2,3}`, `{0:4}` (= `{0,1,2,3}`), `{0:4:2}` (= `{0,2,4,6}`),
//! `{0:2}:4:2` (= `{0,1},{2,3},{4,5},{6,7}`), `{0:8,!3}`, `0,1,2,3`.

use super::Topology;
use crate::{Error, Result};
use serde::Serialize;

/// The abstract place names of OpenMP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AbstractPlace {
    /// One place per PU.
    Threads,
    /// One place per core.
    Cores,
    /// One place per last-level cache.
    LlCaches,
    /// One place per package.
    Sockets,
    /// One place per NUMA node.
    NumaDomains,
}

impl AbstractPlace {
    const ALL: [AbstractPlace; 5] = [
        AbstractPlace::Threads,
        AbstractPlace::Cores,
        AbstractPlace::LlCaches,
        AbstractPlace::Sockets,
        AbstractPlace::NumaDomains,
    ];

    /// The OpenMP name.
    pub fn name(self) -> &'static str {
        match self {
            AbstractPlace::Threads => "threads",
            AbstractPlace::Cores => "cores",
            AbstractPlace::LlCaches => "ll_caches",
            AbstractPlace::Sockets => "sockets",
            AbstractPlace::NumaDomains => "numa_domains",
        }
    }
}

/// A parsed, not yet resolved, place list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlacesSpec {
    /// `threads`, `cores(4)`, ...: an abstract name with an optional count.
    Abstract(AbstractPlace, Option<usize>),
    /// An explicit list of places, each a set of OS PU numbers.
    Explicit(Vec<Vec<u32>>),
}

/// One place: a set of usable PUs (indices into [`Topology::pus`]), in topology order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Place {
    /// Indices into [`Topology::pus`].
    pub pus: Vec<usize>,
}

/// The accepted forms, for error messages.
const EXPECTED: &str = "threads|cores|ll_caches|sockets|numa_domains, optionally with a count \
                        such as cores(4), or an explicit list of places of OS PU numbers such as \
                        {0,1},{2,3} or {0:4} (interval n:len) or {0:4:2} (n:len:stride) or \
                        {0:2}:4:2 (a place replicated count times with a stride), with ! to exclude";

impl PlacesSpec {
    /// Parses `spec`; `var` names the setting in error messages.
    pub fn parse(var: &str, spec: &str) -> Result<PlacesSpec> {
        let invalid = |why: String| Error::invalid(var, spec, format!("{EXPECTED} ({why})"));
        let trimmed = spec.trim();
        if trimmed.is_empty() {
            return Err(invalid("the value is empty".into()));
        }
        if trimmed.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return parse_abstract(trimmed).map_err(invalid);
        }
        let mut parser = Parser { s: spec.as_bytes(), pos: 0 };
        parser.place_list().map(PlacesSpec::Explicit).map_err(invalid)
    }

    /// Resolves the list against `topo`.
    pub fn resolve(&self, topo: &Topology) -> Result<Vec<Place>> {
        match self {
            PlacesSpec::Abstract(kind, count) => {
                let places = abstract_places(*kind, topo);
                match *count {
                    None => Ok(places),
                    Some(n) if n <= places.len() => Ok(places.into_iter().take(n).collect()),
                    Some(n) => Err(Error::Placement(format!(
                        "{}({n}) asks for {n} places but only {} {} exist among the usable PUs",
                        kind.name(),
                        places.len(),
                        kind.name()
                    ))),
                }
            }
            PlacesSpec::Explicit(list) => list
                .iter()
                .enumerate()
                .map(|(i, os_list)| {
                    if os_list.is_empty() {
                        return Err(Error::Placement(format!("place {i} is empty")));
                    }
                    let mut pus = os_list
                        .iter()
                        .map(|&os| {
                            topo.pu_by_os_index(os).map(|p| p.index).ok_or_else(|| {
                                Error::Placement(format!(
                                    "place {i} names PU {os}, which is not usable; usable PUs (OS numbers): {}",
                                    usable_list(topo)
                                ))
                            })
                        })
                        .collect::<Result<Vec<usize>>>()?;
                    pus.sort_unstable();
                    pus.dedup();
                    Ok(Place { pus })
                })
                .collect(),
        }
    }
}

/// The OS numbers of the usable PUs, as ranges (`0-3,8,10-11`).
fn usable_list(topo: &Topology) -> String {
    let mut os: Vec<u32> = topo.pus().iter().map(|p| p.os_index).collect();
    os.sort_unstable();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < os.len() {
        let mut j = i;
        while j + 1 < os.len() && os[j + 1] == os[j] + 1 {
            j += 1;
        }
        out.push(if j == i { os[i].to_string() } else { format!("{}-{}", os[i], os[j]) });
        i = j + 1;
    }
    out.join(",")
}

/// One place per group of usable PUs sharing the kind's resource, in topology order.
fn abstract_places(kind: AbstractPlace, topo: &Topology) -> Vec<Place> {
    // The key tags the level so that a PU without an L3 (say) never lands in
    // the group of an unrelated L2 with the same logical index.
    let key = |p: &super::Pu| -> (u8, usize) {
        match kind {
            AbstractPlace::Threads => (0, p.index),
            AbstractPlace::Cores => (0, p.core),
            AbstractPlace::LlCaches => {
                p.l3.map(|c| (3, c)).or(p.l2.map(|c| (2, c))).or(p.l1.map(|c| (1, c))).unwrap_or((0, p.core))
            }
            AbstractPlace::Sockets => (0, p.package),
            AbstractPlace::NumaDomains => (0, p.numa),
        }
    };
    let mut keys: Vec<(u8, usize)> = Vec::new();
    let mut places: Vec<Place> = Vec::new();
    for p in topo.pus() {
        let k = key(p);
        match keys.iter().position(|&x| x == k) {
            Some(i) => places[i].pus.push(p.index),
            None => {
                keys.push(k);
                places.push(Place { pus: vec![p.index] });
            }
        }
    }
    places
}

fn parse_abstract(s: &str) -> std::result::Result<PlacesSpec, String> {
    let (name, count) = match s.find('(') {
        None => (s, None),
        Some(open) => {
            let rest = s[open + 1..].trim_end();
            let Some(inner) = rest.strip_suffix(')') else {
                return Err(format!("the count after {:?} must be closed by ')'", s[..open].trim()));
            };
            let inner = inner.trim();
            let n: usize =
                inner.parse().map_err(|_| format!("the count {inner:?} is not a positive integer"))?;
            if n == 0 {
                return Err("the count must be at least 1".into());
            }
            (&s[..open], Some(n))
        }
    };
    let name = name.trim();
    AbstractPlace::ALL
        .into_iter()
        .find(|k| k.name().eq_ignore_ascii_case(name))
        .map(|k| PlacesSpec::Abstract(k, count))
        .ok_or_else(|| format!("{name:?} is not an abstract place name"))
}

/// The most PU numbers an explicit list may name in all (its places' sizes
/// added up, intervals and replications expanded): far above any machine,
/// low enough that `{0:4000000000}` is an error rather than gigabytes.
const MAX_PUS: usize = 1 << 20;

/// `start + k * stride` as a PU number, or `Err` with the value reached if
/// that is negative or past `u32::MAX` (computed in `i128`: no overflow).
fn shift(start: u32, k: i64, stride: i64) -> std::result::Result<u32, i128> {
    let pu = i128::from(start) + i128::from(k) * i128::from(stride);
    u32::try_from(pu).map_err(|_| pu)
}

/// Recursive-descent parser for explicit place lists. Places are kept as
/// sorted, deduplicated sets of OS PU numbers.
struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

type PResult<T> = std::result::Result<T, String>;

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.s.get(self.pos).is_some_and(u8::is_ascii_whitespace) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.pos).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Description of where the parser stands, for error messages.
    fn here(&mut self) -> String {
        self.skip_ws();
        match self.s.get(self.pos) {
            None => "at the end".into(),
            Some(_) => {
                let rest = String::from_utf8_lossy(&self.s[self.pos..]);
                let shown: String = rest.chars().take(12).collect();
                format!("at position {} ({shown:?})", self.pos)
            }
        }
    }

    fn number(&mut self, what: &str) -> PResult<i64> {
        self.skip_ws();
        let start = self.pos;
        if self.s.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        while self.s.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
        if text.is_empty() || text == "-" {
            self.pos = start;
            return Err(format!("expected {what} {}", self.here()));
        }
        text.parse().map_err(|_| format!("{what} {text} is out of range"))
    }

    fn unsigned(&mut self, what: &str) -> PResult<u32> {
        let start = self.pos;
        let n = self.number(what)?;
        u32::try_from(n).map_err(|_| {
            self.pos = start;
            format!("{what} {n} {} is not a valid PU number", self.here())
        })
    }

    /// `:len` and `:len:stride` after a PU number or a place, if present.
    fn len_stride(&mut self) -> PResult<(u32, i64)> {
        if !self.eat(b':') {
            return Ok((1, 1));
        }
        let len = self.number("a length")?;
        if len < 1 {
            return Err(format!("the length {len} must be at least 1"));
        }
        let stride = if self.eat(b':') { self.number("a stride")? } else { 1 };
        let len = u32::try_from(len).map_err(|_| format!("the length {len} is too large"))?;
        Ok((len, stride))
    }

    /// `n`, `n:len`, `n:len:stride` (the PU numbers it covers) or `!n`.
    fn res_interval(&mut self, place: &mut Vec<u32>) -> PResult<()> {
        let negate = self.eat(b'!');
        let start = self.unsigned("a PU number")?;
        if negate {
            if self.peek() == Some(b':') {
                return Err(format!("an exclusion !{start} cannot have an interval {}", self.here()));
            }
            place.retain(|&p| p != start);
            return Ok(());
        }
        let (len, stride) = self.len_stride()?;
        if place.len().saturating_add(len as usize) > MAX_PUS {
            return Err(format!(
                "the interval {start}:{len}:{stride} makes the place name more than {MAX_PUS} PUs"
            ));
        }
        for k in 0..i64::from(len) {
            let pu = shift(start, k, stride).map_err(|pu| {
                format!("the interval {start}:{len}:{stride} reaches PU {pu}, which does not exist")
            })?;
            place.push(pu);
        }
        Ok(())
    }

    /// `{res-list}` or a bare PU number.
    fn place(&mut self) -> PResult<Vec<u32>> {
        let mut place = Vec::new();
        if self.eat(b'{') {
            if self.peek() == Some(b'}') {
                return Err(format!("empty place {{}} {}", self.here()));
            }
            loop {
                self.res_interval(&mut place)?;
                if self.eat(b'}') {
                    break;
                }
                if !self.eat(b',') {
                    return Err(format!("expected ',' or '}}' {}", self.here()));
                }
            }
        } else if self.peek().is_some_and(|c| c.is_ascii_digit()) {
            place.push(self.unsigned("a PU number")?);
        } else {
            return Err(format!("expected a place {{...}} or a PU number {}", self.here()));
        }
        place.sort_unstable();
        place.dedup();
        Ok(place)
    }

    fn place_list(&mut self) -> PResult<Vec<Vec<u32>>> {
        let mut list: Vec<Vec<u32>> = Vec::new();
        // PU numbers named by `list`, all places added up (at most MAX_PUS).
        let mut named = 0usize;
        loop {
            let at = self.pos;
            let negate = self.eat(b'!');
            let place = self.place()?;
            if place.is_empty() {
                self.pos = at;
                return Err(format!("the place {} excludes every PU it names", self.here()));
            }
            if negate {
                if self.peek() == Some(b':') {
                    return Err(format!("an excluded place cannot be replicated {}", self.here()));
                }
                match list.iter().position(|p| *p == place) {
                    Some(i) => {
                        named -= list.remove(i).len();
                    }
                    None => {
                        return Err(format!("!{place:?} excludes a place that is not in the list before it"))
                    }
                }
            } else {
                let (len, stride) = self.len_stride()?;
                if named.saturating_add(place.len().saturating_mul(len as usize)) > MAX_PUS {
                    return Err(format!(
                        "replicating the place {place:?} {len} times makes the list name more than {MAX_PUS} PUs"
                    ));
                }
                for k in 0..i64::from(len) {
                    let shifted = place
                        .iter()
                        .map(|&p| {
                            shift(p, k, stride).map_err(|q| {
                                format!("replicating the place {place:?} {len} times with stride {stride} reaches PU {q}, which does not exist")
                            })
                        })
                        .collect::<PResult<Vec<u32>>>()?;
                    named += shifted.len();
                    list.push(shifted);
                }
            }
            if self.peek().is_none() {
                break;
            }
            if !self.eat(b',') {
                return Err(format!("expected ',' between places {}", self.here()));
            }
        }
        if list.is_empty() {
            return Err("every place was excluded".into());
        }
        Ok(list)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> PlacesSpec {
        PlacesSpec::parse("HERD_PLACES", s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    fn explicit(s: &str) -> Vec<Vec<u32>> {
        match ok(s) {
            PlacesSpec::Explicit(v) => v,
            other => panic!("{s:?} gave {other:?}"),
        }
    }

    fn err(s: &str) -> String {
        match PlacesSpec::parse("HERD_PLACES", s) {
            Ok(v) => panic!("{s:?} should fail, gave {v:?}"),
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.contains("HERD_PLACES"), "{msg}");
                assert!(msg.contains("ll_caches"), "{msg}");
                assert!(msg.contains("{0,1},{2,3}"), "{msg}");
                msg
            }
        }
    }

    #[test]
    fn abstract_names() {
        use AbstractPlace::*;
        assert_eq!(ok("threads"), PlacesSpec::Abstract(Threads, None));
        assert_eq!(ok("cores"), PlacesSpec::Abstract(Cores, None));
        assert_eq!(ok("ll_caches"), PlacesSpec::Abstract(LlCaches, None));
        assert_eq!(ok("sockets"), PlacesSpec::Abstract(Sockets, None));
        assert_eq!(ok("numa_domains"), PlacesSpec::Abstract(NumaDomains, None));
        assert_eq!(ok("  Cores(4) "), PlacesSpec::Abstract(Cores, Some(4)));
        assert_eq!(ok("THREADS ( 2 )"), PlacesSpec::Abstract(Threads, Some(2)));
        assert_eq!(ok("Sockets(1)"), PlacesSpec::Abstract(Sockets, Some(1)));
    }

    #[test]
    fn abstract_names_invalid() {
        assert!(err("thread").contains("\"thread\" is not an abstract place name"));
        assert!(err("cores(0)").contains("at least 1"));
        assert!(err("cores(-1)").contains("not a positive integer"));
        assert!(err("cores()").contains("not a positive integer"));
        assert!(err("cores(x)").contains("not a positive integer"));
        assert!(err("cores(4").contains("closed by ')'"));
        assert!(err("cores(4)x").contains("closed by ')'"));
        err("cores 4");
        err("sockets,cores");
        assert!(err("").contains("empty"));
        assert!(err("   ").contains("empty"));
    }

    #[test]
    fn explicit_lists() {
        assert_eq!(explicit("{0,1},{2,3}"), vec![vec![0, 1], vec![2, 3]]);
        assert_eq!(explicit(" { 0 , 1 } , { 2,3 } "), vec![vec![0, 1], vec![2, 3]]);
        assert_eq!(explicit("{3,1,1}"), vec![vec![1, 3]]);
        assert_eq!(explicit("0,1,2"), vec![vec![0], vec![1], vec![2]]);
    }

    #[test]
    fn intervals() {
        assert_eq!(explicit("{0:4}"), vec![vec![0, 1, 2, 3]]);
        assert_eq!(explicit("{0:4:2}"), vec![vec![0, 2, 4, 6]]);
        assert_eq!(explicit("{6:3:-2}"), vec![vec![2, 4, 6]]);
        assert_eq!(explicit("{0:2,8:2}"), vec![vec![0, 1, 8, 9]]);
        assert_eq!(explicit("{ 0 : 4 : 2 }"), vec![vec![0, 2, 4, 6]]);
    }

    #[test]
    fn replicated_places() {
        assert_eq!(explicit("{0:2}:4:2"), vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]]);
        assert_eq!(explicit("{0,1}:2"), vec![vec![0, 1], vec![1, 2]]);
        assert_eq!(explicit("0:3"), vec![vec![0], vec![1], vec![2]]);
        assert_eq!(explicit("{4}:2:-4"), vec![vec![4], vec![0]]);
        assert_eq!(explicit("{0:2}:2:4,{16}"), vec![vec![0, 1], vec![4, 5], vec![16]]);
    }

    #[test]
    fn exclusions() {
        assert_eq!(explicit("{0:8,!3}"), vec![vec![0, 1, 2, 4, 5, 6, 7]]);
        assert_eq!(
            explicit("{0:4}:4:4,!{4:4}"),
            vec![vec![0, 1, 2, 3], vec![8, 9, 10, 11], vec![12, 13, 14, 15]]
        );
        assert_eq!(explicit("0,1,2,!1"), vec![vec![0], vec![2]]);
    }

    #[test]
    fn explicit_invalid() {
        assert!(err("{}").contains("empty place"));
        assert!(err("{0,1").contains("expected ',' or '}'"));
        assert!(err("{0,,1}").contains("expected a PU number"));
        assert!(err("{0;1}").contains("position 2"));
        assert!(err("{0},").contains("expected a place"));
        assert!(err(",{0}").contains("expected a place"));
        assert!(err("{0}{1}").contains("expected ',' between places"));
        assert!(err("{0:0}").contains("at least 1"));
        assert!(err("{0:}").contains("expected a length"));
        assert!(err("{0:2:}").contains("expected a stride"));
        assert!(err("{-1}").contains("not a valid PU number"));
        assert!(err("{1:4:-1}").contains("does not exist"));
        assert!(err("{1}:3:-1").contains("does not exist"));
        assert!(err("{0}:0").contains("at least 1"));
        assert!(err("{0,!0}").contains("excludes every PU"));
        assert!(err("{!0:2}").contains("cannot have an interval"));
        assert!(err("{0},!{1}").contains("not in the list"));
        assert!(err("{0},!{0}:2").contains("cannot be replicated"));
        assert!(err("{0},!{0}").contains("every place was excluded"));
        assert!(err("{99999999999}").contains("not a valid PU number"));
        assert!(err("{99999999999999999999}").contains("out of range"));
        err("{0}x");
        err("{a}");
    }
}
