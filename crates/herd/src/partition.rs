//! Loop partitioning arithmetic, shared by herd's loops
//! ([`Pool::for_each`](crate::Pool::for_each) and friends) and herd-omp's
//! worksharing loops: which iterations of `0..len` a participant `i` of `n`
//! owns under a static schedule, and how large the next guided chunk is.
//!
//! Pure functions on `u64` (herd-omp's `unsigned long long` loops span the
//! whole range); callers with `usize` indices convert losslessly. Nothing
//! overflows: a chunk whose start would not fit in a `u64` does not exist,
//! and an end is clamped to `len`.
//!
//! The rules are OpenMP's for `schedule(static)` (one contiguous block per
//! participant, the first `len % n` blocks one iteration longer, in
//! participant order) and `schedule(static, chunk)` (chunks of `chunk`
//! dealt round-robin: participant `i`'s `t`-th chunk is chunk number
//! `t * n + i`), and the usual guided rule (`ceil(remaining / n)`, at least
//! `min_chunk`, at most what remains).

use std::ops::Range;

/// Participant `i`'s block of a static block partition of `0..len` among
/// `n` participants (`i < n`, `n >= 1`): blocks are contiguous, in
/// participant order, and the first `len % n` are one iteration longer.
/// Empty when `n > len` and `i >= len`.
#[inline]
pub fn block(len: u64, i: u64, n: u64) -> Range<u64> {
    debug_assert!(n >= 1 && i < n);
    let q = len / n;
    let r = len % n;
    // i * q <= len (i < n), so nothing overflows.
    let start = i * q + i.min(r);
    start..start + q + u64::from(i < r)
}

/// The participant (of `n`) whose [`block`] of `0..len` holds iteration
/// `idx` (`idx < len`): the inverse of [`block`].
#[inline]
pub fn block_owner(len: u64, idx: u64, n: u64) -> u64 {
    debug_assert!(n >= 1 && idx < len);
    let q = len / n;
    let r = len % n;
    // The first `r` blocks have `q + 1` iterations, the others `q`.
    let big = r * (q + 1);
    if idx < big {
        idx / (q + 1)
    } else {
        r + (idx - big) / q
    }
}

/// Chunk number `trip` of participant `i` (of `n`) under a static schedule
/// of `0..len` with chunk size `chunk`: chunk `trip * n + i` of size `chunk`
/// (the last one clamped to `len`), or `None` when there is no such chunk.
/// `chunk == 0` means one block per participant ([`block`]): its only chunk
/// is trip 0 (`None` if empty).
#[inline]
pub fn static_chunk(len: u64, chunk: u64, i: u64, n: u64, trip: u64) -> Option<Range<u64>> {
    debug_assert!(n >= 1 && i < n);
    if chunk == 0 {
        if trip > 0 {
            return None;
        }
        let b = block(len, i, n);
        return (b.start < b.end).then_some(b);
    }
    let k = trip.checked_mul(n)?.checked_add(i)?;
    let a = k.checked_mul(chunk)?;
    (a < len).then(|| a..a.saturating_add(chunk).min(len))
}

/// Every chunk of participant `i` under a static schedule (see
/// [`static_chunk`]), in order.
pub fn static_chunks(len: u64, chunk: u64, i: u64, n: u64) -> impl Iterator<Item = Range<u64>> {
    let mut trip = 0u64;
    std::iter::from_fn(move || {
        let c = static_chunk(len, chunk, i, n, trip)?;
        trip += 1;
        Some(c)
    })
}

/// Size of the next guided chunk when `remaining` iterations are left for
/// `n` participants: `ceil(remaining / n)`, at least `min_chunk`, at most
/// `remaining` (0 when nothing remains).
#[inline]
pub fn guided_chunk(remaining: u64, n: u64, min_chunk: u64) -> u64 {
    debug_assert!(n >= 1);
    remaining.div_ceil(n).max(min_chunk).min(remaining)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every index of `0..len` owned exactly once, chunks in increasing order.
    fn check_cover(len: u64, chunk: u64, n: u64) {
        let mut seen = vec![0u32; len as usize];
        for i in 0..n {
            let mut last_end = 0;
            for c in static_chunks(len, chunk, i, n) {
                assert!(c.start < c.end && c.end <= len, "len {len} chunk {chunk} n {n} i {i}: {c:?}");
                assert!(c.start >= last_end);
                last_end = c.end;
                for k in c {
                    seen[k as usize] += 1;
                }
            }
        }
        assert!(seen.iter().all(|&s| s == 1), "len {len} chunk {chunk} n {n}: {seen:?}");
    }

    #[test]
    fn static_covers_exactly() {
        for len in [0u64, 1, 2, 7, 16, 100, 257] {
            for n in 1..=9u64 {
                for chunk in [0u64, 1, 2, 3, 64, 1000] {
                    check_cover(len, chunk, n);
                }
            }
        }
    }

    #[test]
    fn block_owner_inverts_block() {
        for len in [1u64, 2, 7, 16, 100, 257] {
            for n in 1..=9u64 {
                for i in 0..n {
                    for idx in block(len, i, n) {
                        assert_eq!(block_owner(len, idx, n), i, "len {len} n {n} idx {idx}");
                    }
                }
            }
        }
        assert_eq!(block_owner(u64::MAX, u64::MAX - 1, 2), 1);
        assert_eq!(block_owner(u64::MAX, 0, 2), 0);
    }

    #[test]
    fn blocks() {
        assert_eq!(block(10, 0, 3), 0..4);
        assert_eq!(block(10, 1, 3), 4..7);
        assert_eq!(block(10, 2, 3), 7..10);
        // len 0 and n > len.
        assert!(block(0, 0, 4).is_empty());
        assert_eq!(block(2, 1, 4), 1..2);
        assert!(block(2, 3, 4).is_empty());
        assert_eq!(static_chunk(2, 0, 3, 4, 0), None);
        assert_eq!(static_chunk(2, 0, 1, 4, 0), Some(1..2));
        assert_eq!(static_chunk(2, 0, 1, 4, 1), None);
        // Whole u64 range.
        assert_eq!(block(u64::MAX, 0, 1), 0..u64::MAX);
        let b = block(u64::MAX, 1, 2);
        assert_eq!(b.end, u64::MAX);
        assert_eq!(block(u64::MAX, 0, 2).end, b.start);
    }

    #[test]
    fn chunks() {
        // Chunk 1: round-robin single iterations.
        assert_eq!(static_chunk(5, 1, 1, 2, 0), Some(1..2));
        assert_eq!(static_chunk(5, 1, 1, 2, 1), Some(3..4));
        assert_eq!(static_chunk(5, 1, 1, 2, 2), None);
        // Last chunk clamped.
        assert_eq!(static_chunk(10, 4, 0, 2, 1), Some(8..10));
        // Near u64::MAX: no overflow, clamped, then None.
        let len = u64::MAX;
        let chunk = u64::MAX / 2;
        assert_eq!(static_chunk(len, chunk, 0, 2, 0), Some(0..chunk));
        assert_eq!(static_chunk(len, chunk, 1, 2, 0), Some(chunk..2 * chunk));
        assert_eq!(static_chunk(len, chunk, 0, 2, 1), Some(2 * chunk..u64::MAX));
        assert_eq!(static_chunk(len, chunk, 1, 2, 1), None); // 3 * chunk overflows
        assert_eq!(static_chunk(len, u64::MAX - 1, 1, 2, 0), Some(u64::MAX - 1..u64::MAX));
        assert_eq!(static_chunk(len, u64::MAX, 1, 2, 0), None);
        assert_eq!(static_chunk(len, 1, 0, 3, u64::MAX), None);
        assert_eq!(static_chunks(len, u64::MAX - 1, 0, 2).count(), 1);
    }

    #[test]
    fn guided() {
        assert_eq!(guided_chunk(0, 4, 1), 0);
        assert_eq!(guided_chunk(10, 4, 1), 3);
        assert_eq!(guided_chunk(10, 4, 5), 5);
        assert_eq!(guided_chunk(3, 4, 5), 3);
        assert_eq!(guided_chunk(1, 100, 1), 1);
        assert_eq!(guided_chunk(u64::MAX, 1, 1), u64::MAX);
        assert_eq!(guided_chunk(u64::MAX, 2, 1), u64::MAX / 2 + 1);
        assert_eq!(guided_chunk(u64::MAX, 3, u64::MAX), u64::MAX);
        // Successive chunks cover everything and shrink.
        let (mut left, mut last) = (1000u64, u64::MAX);
        while left > 0 {
            let c = guided_chunk(left, 4, 7);
            assert!(c >= 1 && c <= left && c <= last);
            last = c;
            left -= c;
        }
    }
}
