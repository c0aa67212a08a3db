//! The grammar of libomp's `KMP_AFFINITY` (LLVM 14's, which Intel's
//! compilers share): a comma-separated list of modifiers, one type, and up to
//! two integers, `permute` and `offset`:
//!
//! ```text
//! KMP_AFFINITY=[<modifier>,...]<type>[,<permute>][,<offset>]
//!   modifier: granularity=<level> | gran=<level> | proclist=[<item>,...]
//!             | [no]verbose | [no]warnings | [no]respect | [no]duplicates | [no]dups
//!   level:    fine | thread | core | tile | module | l1_cache | l2_cache | l3_cache
//!             | ll_cache | die | socket | package | numa_domain | node | proc_group | <n>
//!   item:     <cpu> | <cpu>-<cpu>[:<stride>] | {<cpu>,...}
//!   type:     compact | scatter | balanced | explicit | none | disabled | logical | physical
//! ```
//!
//! Keywords are case-insensitive and may stand in any order. Where libomp
//! warns and goes on (a parameter given twice, an unknown word, a `proclist`
//! without `explicit`, integers after a type that takes none), herd stops
//! with an error naming the variable, the value and these forms, as it does
//! for every `OMP_*` variable. A `proclist` without a type means `explicit`,
//! as in libomp.

use super::super::parse::MAX_LISTED_CPUS;
use super::super::EnvError;
use herd::config::parse;

/// `KMP_AFFINITY`.
pub const AFFINITY: &str = "KMP_AFFINITY";

/// The accepted forms of `KMP_AFFINITY`.
pub(super) const AFFINITY_FORMS: &str = "a comma-separated list of one type (compact, scatter, balanced, \
     explicit, none, disabled, logical, physical), the modifiers granularity=<fine|thread|core|tile|module|\
     l1_cache|l2_cache|l3_cache|ll_cache|die|socket|package|numa_domain|node|proc_group|n>, \
     proclist=[<cpu|a-b[:stride]|{cpu,...}>,...] (for explicit), [no]verbose, [no]warnings, [no]respect, \
     [no]duplicates, each at most once (a range spans at most 65536 CPUs, a proclist 1048576 entries), and after compact, scatter, balanced, logical or physical up to two \
     integers (permute, offset); e.g. compact, granularity=fine,compact,1,0 or explicit,proclist=[0,2,{4,5}]";

/// How threads are assigned to the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AffinityType {
    /// `compact`: each thread next to the previous one (OpenMP's `close`).
    Compact,
    /// `scatter`: threads spread over the whole machine, outermost level first.
    Scatter,
    /// `balanced`: spread over cores, neighbours on one core when threads
    /// outnumber cores (herd orders places as for `scatter`; see
    /// [`order`](super::order)).
    Balanced,
    /// `explicit`: thread *i* on the *i*-th `proclist` entry.
    Explicit,
    /// `none`: threads are not bound.
    None,
    /// `disabled`: no affinity at all.
    Disabled,
    /// `logical` (deprecated): `compact` with the offset counted in cores.
    Logical,
    /// `physical` (deprecated): one thread per core first, offset in cores.
    Physical,
}

/// The `granularity=` level: the unit a thread is bound to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Granularity {
    /// `fine` or `thread`: one hardware thread (PU).
    Thread,
    /// `core`.
    Core,
    /// `l1_cache`.
    L1,
    /// `l2_cache`.
    L2,
    /// `tile`: cores sharing an L2 (herd groups by the L2).
    Tile,
    /// `module`: cores sharing an L2 on AMD's modules (herd groups by the L2).
    Module,
    /// `l3_cache`.
    L3,
    /// `ll_cache`: the last-level cache.
    LlCache,
    /// `die` (herd's topology has no die level: the package).
    Die,
    /// `numa_domain` or `node`.
    Numa,
    /// `socket` or `package`.
    Socket,
    /// `proc_group` (a Windows processor group: the package here).
    ProcGroup,
    /// `<n>`: `n` topology levels above the hardware thread.
    Levels(u32),
}

/// A parsed `KMP_AFFINITY`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KmpAffinity {
    /// The type; `None` when only modifiers were given (then `OMP_PLACES`
    /// and `OMP_PROC_BIND` keep their say, as in libomp).
    pub kind: Option<AffinityType>,
    /// `granularity=`; `None` for libomp's default, the core.
    pub granularity: Option<Granularity>,
    /// `proclist=`: each entry's OS CPU numbers (one for a number, several
    /// for a `{...}` set; a range gives one entry per CPU).
    pub proclist: Option<Vec<Vec<u32>>>,
    /// The first integer: how many of the innermost levels become the most
    /// significant in the order (0 by default).
    pub permute: u32,
    /// The second integer: the place thread 0 starts at (0 by default).
    pub offset: u32,
    /// `verbose`: print the resolved places and each thread's binding.
    pub verbose: bool,
    /// `warnings` (the default): warn about what is approximated or dropped.
    pub warnings: bool,
    /// `respect` (the default): stay within the process's CPU set.
    pub respect: bool,
    /// `duplicates` (the default): one place per hardware thread, even where
    /// the granularity makes several equal.
    pub dups: bool,
}

const TYPES: &[(&str, AffinityType)] = &[
    ("compact", AffinityType::Compact),
    ("scatter", AffinityType::Scatter),
    ("balanced", AffinityType::Balanced),
    ("explicit", AffinityType::Explicit),
    ("none", AffinityType::None),
    ("disabled", AffinityType::Disabled),
    ("logical", AffinityType::Logical),
    ("physical", AffinityType::Physical),
];

const LEVELS: &[(&str, Granularity)] = &[
    ("fine", Granularity::Thread),
    ("thread", Granularity::Thread),
    ("core", Granularity::Core),
    ("tile", Granularity::Tile),
    ("module", Granularity::Module),
    ("l1_cache", Granularity::L1),
    ("l2_cache", Granularity::L2),
    ("l3_cache", Granularity::L3),
    ("ll_cache", Granularity::LlCache),
    ("die", Granularity::Die),
    ("socket", Granularity::Socket),
    ("package", Granularity::Socket),
    ("numa_domain", Granularity::Numa),
    ("node", Granularity::Numa),
    ("proc_group", Granularity::ProcGroup),
];

/// The flags `[no]word`: which field each sets.
#[derive(Clone, Copy)]
enum Flag {
    Verbose,
    Warnings,
    Respect,
    Dups,
}

const FLAGS: &[(&str, Flag)] = &[
    ("verbose", Flag::Verbose),
    ("warnings", Flag::Warnings),
    ("respect", Flag::Respect),
    ("duplicates", Flag::Dups),
    ("dups", Flag::Dups),
];

/// Parses `KMP_AFFINITY` (`v` trimmed, `raw` as given).
pub fn parse_affinity(raw: &str, v: &str) -> Result<KmpAffinity, EnvError> {
    let invalid = || EnvError::new(AFFINITY, raw, AFFINITY_FORMS);
    let mut a = KmpAffinity {
        kind: None,
        granularity: None,
        proclist: None,
        permute: 0,
        offset: 0,
        verbose: false,
        warnings: true,
        respect: true,
        dups: true,
    };
    let mut seen_flags = [false; 4];
    let mut numbers: Vec<u32> = Vec::new();
    for token in split_top_level(v).ok_or_else(invalid)? {
        let token = token.trim();
        let lower = token.to_ascii_lowercase();
        if let Some(kind) = parse::keyword(token, TYPES) {
            if a.kind.replace(kind).is_some() || !numbers.is_empty() {
                return Err(invalid());
            }
        } else if let Some((key, value)) = lower.split_once('=') {
            match key.trim() {
                "granularity" | "gran" => {
                    let value = value.trim();
                    let level = parse::keyword(value, LEVELS)
                        .or_else(|| parse::unsigned(value, 0).map(Granularity::Levels))
                        .ok_or_else(invalid)?;
                    if a.granularity.replace(level).is_some() {
                        return Err(invalid());
                    }
                }
                "proclist" => {
                    let list = value
                        .trim()
                        .strip_prefix('[')
                        .and_then(|s| s.strip_suffix(']'))
                        .ok_or_else(invalid)?;
                    if a.proclist.replace(proc_list(list).ok_or_else(invalid)?).is_some() {
                        return Err(invalid());
                    }
                }
                _ => return Err(invalid()),
            }
        } else if let Some(n) = parse::unsigned::<u32>(token, 0) {
            if a.kind.is_none() || numbers.len() == 2 {
                return Err(invalid());
            }
            numbers.push(n);
        } else {
            let (on, word) = match lower.strip_prefix("no") {
                Some(rest) if parse::keyword(rest, FLAGS).is_some() => (false, rest),
                _ => (true, lower.as_str()),
            };
            let flag = parse::keyword(word, FLAGS).ok_or_else(invalid)?;
            let (seen, field) = match flag {
                Flag::Verbose => (&mut seen_flags[0], &mut a.verbose),
                Flag::Warnings => (&mut seen_flags[1], &mut a.warnings),
                Flag::Respect => (&mut seen_flags[2], &mut a.respect),
                Flag::Dups => (&mut seen_flags[3], &mut a.dups),
            };
            if std::mem::replace(seen, true) {
                return Err(invalid());
            }
            *field = on;
        }
    }
    if a.proclist.is_some() && a.kind.is_none() {
        a.kind = Some(AffinityType::Explicit);
    }
    let takes_numbers = matches!(
        a.kind,
        Some(
            AffinityType::Compact
                | AffinityType::Scatter
                | AffinityType::Balanced
                | AffinityType::Logical
                | AffinityType::Physical
        )
    );
    if (a.kind == Some(AffinityType::Explicit)) != a.proclist.is_some()
        || (!numbers.is_empty() && !takes_numbers)
    {
        return Err(invalid());
    }
    // logical and physical take one integer, the offset.
    match (a.kind, numbers.as_slice()) {
        (Some(AffinityType::Logical | AffinityType::Physical), [_, _]) => return Err(invalid()),
        (Some(AffinityType::Logical | AffinityType::Physical), [offset]) => a.offset = *offset,
        (_, [permute, rest @ ..]) => {
            a.permute = *permute;
            a.offset = rest.first().copied().unwrap_or(0);
        }
        (_, []) => {}
    }
    Ok(a)
}

/// `v` cut at the commas outside `[...]` and `{...}`; `None` for an empty
/// item or unbalanced brackets.
fn split_top_level(v: &str) -> Option<Vec<&str>> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in v.char_indices() {
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&v[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    }
    items.push(&v[start..]);
    (depth == 0 && items.iter().all(|s| !s.trim().is_empty())).then_some(items)
}

/// The inside of `proclist=[...]`: numbers, ranges `a-b[:s]` (one entry per
/// CPU; the stride may be negative, running down) and sets `{a,b,...}`.
fn proc_list(v: &str) -> Option<Vec<Vec<u32>>> {
    let cpu = |s: &str| parse::unsigned::<u32>(s.trim(), 0);
    let mut out = Vec::new();
    for item in split_top_level(v)? {
        let item = item.trim();
        if let Some(set) = item.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            out.push(set.split(',').map(cpu).collect::<Option<Vec<u32>>>()?);
            continue;
        }
        let (range, stride) = match item.split_once(':') {
            Some((r, s)) => {
                let s = s.trim();
                let (neg, digits) = s.strip_prefix('-').map_or((false, s), |d| (true, d));
                let n = i64::from(cpu(digits).filter(|&n| n > 0)?);
                (r, if neg { -n } else { n })
            }
            None => (item, 1),
        };
        let (first, last) = match range.split_once('-') {
            Some((a, b)) => (cpu(a)?, cpu(b)?),
            None if item.contains(':') => return None,
            None => (cpu(range)?, cpu(range)?),
        };
        if (stride > 0) != (last >= first) && first != last {
            return None;
        }
        // libomp's bound on one range; and ours on the whole list.
        if (i64::from(last) - i64::from(first)).abs() / stride.abs() > 65536 {
            return None;
        }
        let (mut c, last) = (i64::from(first), i64::from(last));
        while (stride > 0 && c <= last) || (stride < 0 && c >= last) {
            out.push(vec![c as u32]);
            c += stride;
        }
        if out.len() > MAX_LISTED_CPUS {
            return None;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(v: &str) -> KmpAffinity {
        parse_affinity(v, v.trim()).unwrap_or_else(|e| panic!("{v:?}: {e}"))
    }

    #[test]
    fn types_granularity_and_integers() {
        let a = ok("granularity=fine,compact,1,0");
        assert_eq!(a.kind, Some(AffinityType::Compact));
        assert_eq!(a.granularity, Some(Granularity::Thread));
        assert_eq!((a.permute, a.offset), (1, 0));
        assert!(a.warnings && a.respect && a.dups && !a.verbose);
        let a = ok("Scatter , 2 ,3");
        assert_eq!((a.kind, a.permute, a.offset), (Some(AffinityType::Scatter), 2, 3));
        assert_eq!(ok("gran=socket,balanced").granularity, Some(Granularity::Socket));
        assert_eq!(ok("granularity=2,compact").granularity, Some(Granularity::Levels(2)));
        assert_eq!(ok("granularity=NODE,compact").granularity, Some(Granularity::Numa));
        assert_eq!(ok("none").kind, Some(AffinityType::None));
        assert_eq!(ok("disabled").kind, Some(AffinityType::Disabled));
        let a = ok("physical,3");
        assert_eq!((a.kind, a.permute, a.offset), (Some(AffinityType::Physical), 0, 3));
    }

    #[test]
    fn modifiers_alone_leave_the_type_unset() {
        let a = ok("verbose,granularity=core");
        assert_eq!(a.kind, None);
        assert!(a.verbose);
        let a = ok("noverbose,nowarnings,norespect,nodups,compact");
        assert!(!a.verbose && !a.warnings && !a.respect && !a.dups);
        assert!(!ok("noduplicates,scatter").dups);
    }

    #[test]
    fn proclists() {
        let a = ok("explicit,proclist=[3,0-2,{4, 5},8-12:2,3-1:-1]");
        assert_eq!(
            a.proclist,
            Some(vec![
                vec![3],
                vec![0],
                vec![1],
                vec![2],
                vec![4, 5],
                vec![8],
                vec![10],
                vec![12],
                vec![3],
                vec![2],
                vec![1]
            ])
        );
        // A proclist alone means explicit (libomp's rule).
        assert_eq!(ok("granularity=fine,proclist=[1,0]").kind, Some(AffinityType::Explicit));
    }

    #[test]
    fn invalid_values_name_the_variable_and_the_forms() {
        for bad in [
            "bogus",
            "compact,scatter",
            "compact,1,2,3",
            "1,compact",
            "granularity=atom,compact",
            "granularity=core,gran=thread,compact",
            "verbose,noverbose,compact",
            "compact,proclist=[0]",
            "explicit",
            "explicit,1",
            "none,0",
            "logical,1,2",
            "compact,,1",
            "explicit,proclist=[0",
            "explicit,proclist=[a]",
            "explicit,proclist=[3-1]",
            "explicit,proclist=[0-4:0]",
            "explicit,proclist=[{}]",
            "explicit,proclist=[0-4294967295]",
            "proclist=0",
            "compact,",
        ] {
            let e = parse_affinity(bad, bad).expect_err(bad);
            assert_eq!((e.name.as_str(), e.value.as_str()), (AFFINITY, bad));
            assert!(e.to_string().contains("granularity=<fine|thread|core"), "{e}");
        }
    }
}
