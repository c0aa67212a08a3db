//! Value grammars shared by herd's `HERD_*` variables and herd-omp's `OMP_*`
//! ones, so that both read a number, a keyword or a size the same way.
//!
//! Each function takes the value already trimmed and returns `None` when it
//! is invalid; the caller words the error (its variable, the value as given
//! and its accepted forms), as each crate has its own error type.
//!
//! * integers are ASCII decimal digits only: no sign, no spaces, no `0x`;
//! * keywords are compared case-insensitively against a fixed table;
//! * a size is `<n>[B|K|M|G]` with `n >= 1`, the unit case-insensitive and
//!   optionally after spaces; no unit means KiB (OpenMP's `OMP_STACKSIZE`
//!   grammar, which `HERD_STACK_SIZE` follows).

/// A decimal integer of ASCII digits; `None` if it is not one or exceeds `u64`.
pub fn decimal(v: &str) -> Option<u64> {
    (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())).then(|| v.parse().ok()).flatten()
}

/// A [`decimal`] integer `>= min` that fits in `T`.
pub fn unsigned<T: TryFrom<u64>>(v: &str, min: u64) -> Option<T> {
    decimal(v).filter(|&n| n >= min).and_then(|n| T::try_from(n).ok())
}

/// A comma-separated list of [`unsigned`] integers (spaces allowed around
/// each item); `None` if any item is invalid or empty.
pub fn unsigned_list<T: TryFrom<u64>>(v: &str, min: u64) -> Option<Vec<T>> {
    v.split(',').map(|item| unsigned(item.trim(), min)).collect()
}

/// The value of the word `v` in `table`, compared case-insensitively.
pub fn keyword<T: Copy>(v: &str, table: &[(&str, T)]) -> Option<T> {
    table.iter().find(|(word, _)| word.eq_ignore_ascii_case(v)).map(|&(_, t)| t)
}

/// `one of a, b, c (case-insensitive)`: the accepted forms of a keyword table.
pub fn keyword_forms<T>(table: &[(&str, T)]) -> String {
    let words: Vec<&str> = table.iter().map(|(w, _)| *w).collect();
    format!("one of {} (case-insensitive)", words.join(", "))
}

/// `<digits><spaces><letter>` split: the number and its one optional ASCII
/// letter suffix (the unit).
pub fn number_and_suffix(v: &str) -> (&str, Option<char>) {
    match v.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (v[..i].trim_end(), Some(c)),
        _ => (v, None),
    }
}

/// A size `<n>[B|K|M|G]` in bytes (see the module documentation); `None` if
/// invalid, zero or over `u64`.
pub fn size_bytes(v: &str) -> Option<u64> {
    let (n, unit) = number_and_suffix(v);
    let shift = match unit.map(|c| c.to_ascii_lowercase()) {
        Some('b') => 0,
        None | Some('k') => 10,
        Some('m') => 20,
        Some('g') => 30,
        Some(_) => return None,
    };
    decimal(n).filter(|&n| n > 0)?.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_ascii_digits_only() {
        assert_eq!(decimal("0"), Some(0));
        assert_eq!(decimal("18446744073709551615"), Some(u64::MAX));
        for bad in ["", "+1", "-1", "1.0", "1e3", "0x10", "1 2", " 1", "18446744073709551616", "٣"] {
            assert_eq!(decimal(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn unsigned_bounds_and_width() {
        assert_eq!(unsigned::<u64>("0", 0), Some(0));
        assert_eq!(unsigned::<u64>("0", 1), None);
        assert_eq!(unsigned::<u8>("255", 0), Some(255));
        assert_eq!(unsigned::<u8>("256", 0), None);
    }

    #[test]
    fn unsigned_lists() {
        assert_eq!(unsigned_list::<usize>("4, 2 ,1", 1), Some(vec![4, 2, 1]));
        assert_eq!(unsigned_list::<usize>("4", 1), Some(vec![4]));
        for bad in ["4,", ",4", "4,,2", "4,0", "4,x", ""] {
            assert_eq!(unsigned_list::<usize>(bad, 1), None, "{bad:?}");
        }
    }

    #[test]
    fn keywords() {
        let table = [("active", 1), ("passive", 2)];
        assert_eq!(keyword("PaSsIvE", &table), Some(2));
        assert_eq!(keyword("idle", &table), None);
        assert_eq!(keyword_forms(&table), "one of active, passive (case-insensitive)");
    }

    #[test]
    fn sizes() {
        assert_eq!(size_bytes("8192"), Some(8192 << 10));
        assert_eq!(size_bytes("512k"), Some(512 << 10));
        assert_eq!(size_bytes("4 M"), Some(4 << 20));
        assert_eq!(size_bytes("1G"), Some(1 << 30));
        assert_eq!(size_bytes("100b"), Some(100));
        for bad in ["0", "0K", "4Q", "4KB", "K", "-4", "4.5M", "17179869184G"] {
            assert_eq!(size_bytes(bad), None, "{bad:?}");
        }
    }
}
