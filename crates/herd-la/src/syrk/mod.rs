//! Symmetric rank-k and rank-2k updates on herd (BLAS's `dsyrk`, and
//! `dsyr2k` in [`syr2k`]): `C ← α·A·Aᵀ + β·C`
//! ([`Op::NoTrans`], `A` `n × k`) or `C ← α·Aᵀ·A + β·C` ([`Op::Trans`], `A`
//! `k × n`), only the [`Uplo`] triangle of the `n × n` `C` read and written.
//!
//! The triangle is cut recursively: `C = [C₁₁ ·; C₂₁ C₂₂]` (lower; the upper
//! case mirrors it with `C₁₂`), the two diagonal blocks recursed into and the
//! off-diagonal block computed by the parallel [`gemm`](crate::gemm()) —
//! the three at once with `herd::join`. A diagonal block at most
//! `leaf` rows (`leaf.rs`: about `n / (2·P)` for `P` participants, at least
//! 64) is one sequential faer triangular product
//! (`faer::linalg::matmul::triangular::matmul`, `Par::Seq`), which computes
//! only its triangle. The off-diagonal blocks carry two thirds of the work
//! and are themselves cut into blocks by `gemm`, so the whole update exposes
//! about `P` or more independent blocks at every level.
//!
//! BLAS semantics: `β = 0` sets the triangle without reading it; `α = 0` or
//! `k = 0` scales the triangle by `β` without reading `A`; the other
//! triangle of `C` is never touched.

#[cfg(test)]
mod tests;

use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, MatMut, MatRef, Par};

use crate::error::invalid;
use crate::{gemm, LaError, Op, Uplo};

/// Below this many multiply–adds (`n²·k / 2`) the update is one
/// sequential faer call on the caller.
const SEQUENTIAL_BELOW: usize = 96 * 96 * 96;
/// The smallest diagonal block cut further.
const MIN_LEAF: usize = 64;
/// Split points are rounded to a multiple of this (a cache line of `f64`).
const ALIGN: usize = 8;

/// `C ← α·op(A)·op(A)ᵀ + β·C` on the `uplo` triangle of `C`, on the
/// current herd pool (the global pool outside any; `pool.install(|| ..)`
/// chooses one): BLAS's `dsyrk` for faer views of any strides. With
/// `trans = NoTrans`, `op(A) = A` is `n × k`; with `Trans`, `A` is `k × n`.
///
/// ```
/// use herd_la::syrk::syrk;
/// use herd_la::{random_matrix, Op, Uplo};
/// let a = random_matrix(30, 5, 1);
/// let mut c = faer::Mat::<f64>::zeros(30, 30);
/// syrk(Uplo::Lower, Op::NoTrans, 1.0, a.as_ref(), 0.0, c.as_mut()).unwrap();
/// let full = &a * a.transpose();
/// assert!((c[(20, 3)] - full[(20, 3)]).abs() < 1e-12);
/// assert_eq!(c[(3, 20)], 0.0); // the upper triangle is not written
/// ```
///
/// # Errors
/// Checked before anything is read or written, in BLAS's argument order:
/// [`LaError::InvalidArgument`] naming `a` when `op(A)` has not `C`'s
/// order as its row count, and `c` when `C` is not square.
pub fn syrk(
    uplo: Uplo,
    trans: Op,
    alpha: f64,
    a: MatRef<'_, f64>,
    beta: f64,
    c: MatMut<'_, f64>,
) -> Result<(), LaError> {
    let g = match trans {
        Op::NoTrans => a,
        Op::Trans => a.transpose(),
    };
    let n = c.nrows();
    if g.nrows() != n {
        let what = if trans == Op::NoTrans { "rows" } else { "columns" };
        return Err(invalid("a", format!("A has {} {what} but C has order {n}", g.nrows())));
    }
    if c.ncols() != n {
        return Err(invalid("c", format!("C is {} x {}, not square", c.nrows(), c.ncols())));
    }
    if n == 0 {
        return Ok(());
    }
    let update = Update { uplo, alpha, beta, leaf: leaf(n, g.ncols(), herd::current_num_threads()) };
    update.run(g, None, c)
}

/// `C ← α·(op(A)·op(B)ᵀ + op(B)·op(A)ᵀ) + β·C` on the `uplo` triangle of
/// `C`, on the current herd pool: BLAS's `dsyr2k`, cut like [`syrk`] (two
/// products per block). With `trans = NoTrans`, `op(A) = A` and
/// `op(B) = B` are `n × k`; with `Trans`, `A` and `B` are `k × n`.
///
/// # Errors
/// Checked before anything is read or written, in BLAS's argument order:
/// [`LaError::InvalidArgument`] naming `a` when `op(A)` has not `C`'s
/// order as its row count, `b` when `B` has not `A`'s shape, and `c` when
/// `C` is not square.
pub fn syr2k(
    uplo: Uplo,
    trans: Op,
    alpha: f64,
    a: MatRef<'_, f64>,
    b: MatRef<'_, f64>,
    beta: f64,
    c: MatMut<'_, f64>,
) -> Result<(), LaError> {
    let (g, h) = match trans {
        Op::NoTrans => (a, b),
        Op::Trans => (a.transpose(), b.transpose()),
    };
    let n = c.nrows();
    if g.nrows() != n {
        let what = if trans == Op::NoTrans { "rows" } else { "columns" };
        return Err(invalid("a", format!("A has {} {what} but C has order {n}", g.nrows())));
    }
    if (b.nrows(), b.ncols()) != (a.nrows(), a.ncols()) {
        return Err(invalid(
            "b",
            format!("B is {} x {} but A is {} x {}", b.nrows(), b.ncols(), a.nrows(), a.ncols()),
        ));
    }
    if c.ncols() != n {
        return Err(invalid("c", format!("C is {} x {}, not square", c.nrows(), c.ncols())));
    }
    if n == 0 {
        return Ok(());
    }
    let update = Update { uplo, alpha, beta, leaf: leaf(n, 2 * g.ncols(), herd::current_num_threads()) };
    update.run(g, Some(h), c)
}

/// The order at or below which a diagonal block is one sequential call.
fn leaf(n: usize, k: usize, participants: usize) -> usize {
    if participants <= 1 || n.saturating_mul(n).saturating_mul(k) / 2 < SEQUENTIAL_BELOW {
        return n;
    }
    (n / (2 * participants)).max(MIN_LEAF)
}

/// The settings of one update.
#[derive(Clone, Copy)]
struct Update {
    uplo: Uplo,
    alpha: f64,
    beta: f64,
    leaf: usize,
}

impl Update {
    /// The update of the diagonal block `c` (square) from the rows `g` of
    /// `op(A)` and `h` of `op(B)` that belong to it (`h = None`: `syrk`).
    fn run(self, g: MatRef<'_, f64>, h: Option<MatRef<'_, f64>>, c: MatMut<'_, f64>) -> Result<(), LaError> {
        let n = c.nrows();
        if n <= self.leaf {
            self.diagonal(g, h, c);
            return Ok(());
        }
        let half = (n / 2).next_multiple_of(ALIGN).min(n - 1);
        let (c11, c12, c21, c22) = c.split_at_mut(half, half);
        let (g1, g2) = g.split_at_row(half);
        let (h1, h2) = match h {
            Some(h) => {
                let (h1, h2) = h.split_at_row(half);
                (Some(h1), Some(h2))
            }
            None => (None, None),
        };
        let (r, (r1, r2)) = herd::join(
            || match self.uplo {
                Uplo::Lower => self.off_diagonal((g2, h2), (g1, h1), c21),
                Uplo::Upper => self.off_diagonal((g1, h1), (g2, h2), c12),
            },
            || herd::join(|| self.run(g1, h1, c11), || self.run(g2, h2, c22)),
        );
        r.and(r1).and(r2)
    }

    /// `c ← α·(g_r·g_cᵀ) + β·c`, or `α·(g_r·h_cᵀ + h_r·g_cᵀ) + β·c`, by the
    /// parallel gemm.
    fn off_diagonal(
        self,
        (g_r, h_r): (MatRef<'_, f64>, Option<MatRef<'_, f64>>),
        (g_c, h_c): (MatRef<'_, f64>, Option<MatRef<'_, f64>>),
        mut c: MatMut<'_, f64>,
    ) -> Result<(), LaError> {
        match (h_r, h_c) {
            (Some(h_r), Some(h_c)) => {
                gemm(Op::NoTrans, Op::Trans, self.alpha, g_r, h_c, self.beta, c.as_mut())?;
                gemm(Op::NoTrans, Op::Trans, self.alpha, h_r, g_c, 1.0, c)
            }
            _ => gemm(Op::NoTrans, Op::Trans, self.alpha, g_r, g_c, self.beta, c),
        }
    }

    /// One or two sequential triangular products on a diagonal block.
    fn diagonal(self, g: MatRef<'_, f64>, h: Option<MatRef<'_, f64>>, mut c: MatMut<'_, f64>) {
        scale_triangle(c.as_mut(), self.uplo, self.beta);
        if self.alpha == 0.0 || g.ncols() == 0 {
            return;
        }
        let structure = match self.uplo {
            Uplo::Lower => BlockStructure::TriangularLower,
            Uplo::Upper => BlockStructure::TriangularUpper,
        };
        let pairs = match h {
            Some(h) => [(g, h), (h, g)].to_vec(),
            None => [(g, g)].to_vec(),
        };
        for (x, y) in pairs {
            triangular::matmul(
                c.as_mut(),
                structure,
                Accum::Add,
                x,
                BlockStructure::Rectangular,
                y.transpose(),
                BlockStructure::Rectangular,
                self.alpha,
                Par::Seq,
            );
        }
    }
}

/// The `uplo` triangle of `c` times `beta`; `beta = 0` writes zeros without
/// reading.
fn scale_triangle(mut c: MatMut<'_, f64>, uplo: Uplo, beta: f64) {
    if beta == 1.0 {
        return;
    }
    let n = c.nrows();
    for j in 0..n {
        let rows = match uplo {
            Uplo::Lower => j..n,
            Uplo::Upper => 0..j + 1,
        };
        for i in rows {
            c[(i, j)] = if beta == 0.0 { 0.0 } else { beta * c[(i, j)] };
        }
    }
}
