//! The distribution: an `n × n` complex matrix in row-major order, split into `P` slabs of
//! whole rows. Rank `r` owns rows `r·n/P .. (r+1)·n/P`; `n` must be divisible by `P` so that
//! every slab and every all-to-all block has the same size (`m × m`, `m = n/P`).

use crate::error::{MpiError, Result};
use std::ops::Range;

/// One rank's share of an `n × n` matrix distributed by rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slab {
    /// The matrix order.
    pub n: usize,
    /// The number of ranks.
    pub ranks: usize,
    /// This rank.
    pub rank: usize,
}

impl Slab {
    /// The slab of `rank` among `ranks`. Errors: `n == 0`, `ranks == 0`, `rank >= ranks`, or
    /// `n` not divisible by `ranks`.
    pub fn new(n: usize, ranks: usize, rank: usize) -> Result<Slab> {
        if n == 0 {
            return Err(MpiError::Invalid("2-D FFT: n = 0; the order must be at least 1".into()));
        }
        if ranks == 0 || rank >= ranks {
            return Err(MpiError::Invalid(format!("2-D FFT: rank {rank} is not one of {ranks} ranks")));
        }
        if !n.is_multiple_of(ranks) {
            return Err(MpiError::Invalid(format!(
                "2-D FFT: n = {n} is not divisible by the {ranks} ranks; the slab distribution needs \
                 n to be a multiple of the number of ranks (the next such order is {})",
                n.next_multiple_of(ranks)
            )));
        }
        Ok(Slab { n, ranks, rank })
    }

    /// Rows (of the input) or columns (of the transposed output) per rank: `n / P`.
    pub fn m(&self) -> usize {
        self.n / self.ranks
    }

    /// The global indices of this rank's rows (input) or output columns (transposed output).
    pub fn range(&self) -> Range<usize> {
        self.rank * self.m()..(self.rank + 1) * self.m()
    }

    /// Elements this rank holds: `m · n`.
    pub fn local_len(&self) -> usize {
        self.m() * self.n
    }

    /// The local part of a whole `n × n` row-major matrix (its rows `range()`).
    pub fn of<'a, T>(&self, whole: &'a [T]) -> &'a [T] {
        let r = self.range();
        &whole[r.start * self.n..r.end * self.n]
    }

    /// Checks that a local buffer has `m · n` elements.
    pub(crate) fn check_len(&self, what: &str, len: usize) -> Result<()> {
        if len != self.local_len() {
            return Err(MpiError::Invalid(format!(
                "2-D FFT: {what} has {len} elements; rank {} of {} needs n/P · n = {} · {} = {}",
                self.rank,
                self.ranks,
                self.m(),
                self.n,
                self.local_len()
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slabs() {
        let s = Slab::new(48, 4, 2).unwrap();
        assert_eq!((s.m(), s.range(), s.local_len()), (12, 24..36, 12 * 48));
        let whole: Vec<usize> = (0..48 * 48).collect();
        assert_eq!(s.of(&whole)[0], 24 * 48);
        assert!(s.check_len("x", 12 * 48).is_ok());
        assert!(s.check_len("x", 12 * 47).is_err());
    }

    #[test]
    fn bad_orders() {
        let e = Slab::new(50, 4, 0).unwrap_err().to_string();
        assert!(e.contains("n = 50") && e.contains("4 ranks"), "{e}");
        assert!(Slab::new(0, 1, 0).is_err());
        assert!(Slab::new(8, 2, 2).is_err());
    }
}
