//! The generalized symmetric-definite eigenproblem `A·x = λ·B·x` (LAPACK's
//! `dsygv` with itype = 1, jobz = 'V', uplo = 'L' — or 'U' through
//! [`sygv_with`]): all eigenvalues and
//! eigenvectors, on herd where the paper's algorithm is BLAS-3
//! (*Concurrent Collections for dense linear algebra*, "Generalized
//! Symmetric Eigensolver"):
//!
//! 1. `B = L·Lᵀ`: the tiled Cholesky as a herd-flow graph
//!    ([`potrf_flow`](crate::potrf_flow), `factor.rs`) — parallel over tiles,
//!    asynchronous, critical-path priorities;
//! 2. `C = L⁻¹·A·L⁻ᵀ` (`standard.rs`): LAPACK's blocked `dsygst` on herd's
//!    [`trsm`](crate::trsm()), [`syr2k`](crate::syr2k()) and
//!    [`gemm`](crate::gemm()) — parallel inside each call;
//! 3. `C = Z·Λ·Zᵀ` (`evd.rs`), all on herd: LAPACK's blocked Householder
//!    tridiagonal reduction `C = Q·T·Qᵀ` (`tridiag.rs`: the symmetric
//!    matrix–vector product of each column spread over the participants,
//!    the trailing rank-`2·nb` updates by [`syr2k`](crate::syr2k())), or
//!    from a crossover order on the two-stage reduction (`two_stage/`:
//!    dense to band by matrix products, band to tridiagonal by bulge
//!    chasing, two back-transformations); the
//!    eigenpairs `T = V·Λ·Vᵀ` by Cuppen's divide and conquer as LAPACK's
//!    `dstedc` (`divide/`: the halves solved in parallel by `herd::join`,
//!    each merge's deflation, secular-equation roots in parallel and
//!    eigenvector update by [`gemm`](crate::gemm())); and `Z = Q·V` by
//!    [`ormqr`](crate::ormqr()) over column blocks of `V`;
//! 4. `X = L⁻ᵀ·Z`: one triangular solve with `trsm` on herd.
//!
//! The steps are **bulk-synchronous** for now: each starts when the one
//! before has finished on all participants. The paper's asynchrony — the
//! reduction to standard form starting on the tiles of `L` already factored
//! — would need steps 1 and 2 in one herd-flow graph with a tiled `sygst`.
//!
//! Eigenvalues only (LAPACK's `jobz = 'N'`): [`sygv_values`] and
//! [`sygv_values_with`] (`values.rs`) take steps 1 and 2, the tridiagonal
//! reduction of step 3 (two stages from a lower crossover: nothing is
//! back-transformed) and `T`'s eigenvalues by root-free QL/QR iteration
//! (`tridiag_values.rs`, `sterf.rs`); no eigenvector is formed.
//!
//! Flops: [`sygv_flops`](crate::sygv_flops).

mod copy;
mod divide;
mod evd;
mod factor;
mod standard;
mod sterf;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
mod tridiag;
mod tridiag_values;
mod two_stage;
mod values;
#[cfg(test)]
mod values_tests;

pub use values::{sygv_values, sygv_values_with};

use faer::{Mat, MatMut, MatRef};

use crate::error::invalid;
use crate::trsm::trsm;
use crate::Side;
use crate::{Diag, LaError, Op, Uplo};

/// Tile size of the Cholesky graph chosen by [`sygv`] from order `4·TILE`
/// on (half of it below: more tiles for the participants to share).
const TILE: usize = 256;

/// Solves `A·x = λ·B·x` for symmetric `A` and symmetric positive definite
/// `B` (both `n × n`, only their lower triangles read), on the current herd
/// pool (the global pool outside any; `pool.install(|| sygv(..))` chooses
/// one). Eigenvalues ascending in `w`; `a` overwritten by the eigenvectors
/// `Z` (column `i` belongs to `w[i]`), normalized `Zᵀ·B·Z = I`; the lower
/// triangle of `b` overwritten by its Cholesky factor `L` (the strict upper
/// triangle of `b` is not touched). See the [module documentation](self)
/// for the steps and which of them run in parallel.
///
/// ```
/// use herd_la::{random_matrix, random_spd, sygv};
/// let n = 40;
/// let r = random_matrix(n, n, 1);
/// let a = &r + r.transpose();
/// let b = random_spd(n, 2);
/// let (mut z, mut l, mut w) = (a.clone(), b.clone(), vec![0.0; n]);
/// sygv(z.as_mut(), l.as_mut(), &mut w).unwrap();
/// // A·Z = B·Z·Λ
/// let lambda = faer::Mat::from_fn(n, n, |i, j| if i == j { w[i] } else { 0.0 });
/// assert!((&a * &z - &b * &z * &lambda).norm_max() < 1e-10);
/// assert!(w.windows(2).all(|p| p[0] <= p[1]));
/// ```
///
/// # Errors
/// Checked in this order; nothing is written unless noted:
/// * [`LaError::InvalidArgument`] naming `a` when `A` is not square, `b`
///   when `B` is not square or not of `A`'s order, `w` when `w.len() != n`;
/// * [`LaError::NonFinite`] with the first NaN or infinity (column-major
///   order) of `A`'s lower triangle, then of `B`'s;
/// * [`LaError::NotPositiveDefinite`] with the 0-based column whose pivot
///   failed in the Cholesky factorization of `B` (LAPACK's `INFO = n +
///   column + 1`); `b` is unchanged.
pub fn sygv(a: MatMut<'_, f64>, b: MatMut<'_, f64>, w: &mut [f64]) -> Result<(), LaError> {
    let n = a.nrows();
    sygv_with(Uplo::Lower, a, b, w, default_tile(n))
}

/// The tile size [`sygv`] uses for order `n`.
pub fn default_tile(n: usize) -> usize {
    if n < 4 * TILE {
        TILE / 2
    } else {
        TILE
    }
}

/// [`sygv`] reading the `uplo` triangles of `A` and `B`, with `nb × nb`
/// tiles in the Cholesky graph of `B` (any `nb ≥ 1`; it need not divide
/// `n`). For [`Uplo::Upper`] (LAPACK's uplo = 'U') `b`'s upper triangle is
/// overwritten by `U` with `B = Uᵀ·U` and its strict lower triangle is not
/// touched; the routine runs the lower case on the transposed views and
/// transposes the eigenvectors back in place (`O(n²)`, sequential).
///
/// # Errors
/// As [`sygv`] (with `(row, col)` of the upper triangle for
/// [`LaError::NonFinite`] under [`Uplo::Upper`]), and
/// [`LaError::InvalidTileSize`] for `nb = 0` (checked after the arguments'
/// shapes).
pub fn sygv_with(
    uplo: Uplo,
    a: MatMut<'_, f64>,
    b: MatMut<'_, f64>,
    w: &mut [f64],
    nb: usize,
) -> Result<(), LaError> {
    solve(Job::Vectors, uplo, a, b, w, nb)
}

/// What a `sygv` call computes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Job {
    /// Eigenvalues and eigenvectors ([`sygv_with`]).
    Vectors,
    /// Eigenvalues only ([`sygv_values_with`]).
    Values,
}

/// [`sygv_with`] or [`sygv_values_with`], as `job` says: the checks, then
/// the lower case (on the transposed views for [`Uplo::Upper`]).
fn solve(
    job: Job,
    uplo: Uplo,
    mut a: MatMut<'_, f64>,
    b: MatMut<'_, f64>,
    w: &mut [f64],
    nb: usize,
) -> Result<(), LaError> {
    check(a.as_ref(), b.as_ref(), w)?;
    if nb == 0 {
        return Err(LaError::InvalidTileSize { nb });
    }
    match uplo {
        Uplo::Lower => lower(job, a, b, w, nb),
        Uplo::Upper => {
            lower(job, a.as_mut().transpose_mut(), b.transpose_mut(), w, nb).map_err(|e| match e {
                LaError::NonFinite { row, col } => LaError::NonFinite { row: col, col: row },
                other => other,
            })?;
            if job == Job::Vectors {
                transpose_in_place(a);
            }
            Ok(())
        }
    }
}

/// The lower case on checked arguments.
fn lower(
    job: Job,
    mut a: MatMut<'_, f64>,
    mut b: MatMut<'_, f64>,
    w: &mut [f64],
    nb: usize,
) -> Result<(), LaError> {
    let n = a.nrows();
    if let Some((row, col)) = first_non_finite_lower(a.as_ref()) {
        return Err(LaError::NonFinite { row, col });
    }
    if n == 0 {
        return Ok(());
    }
    factor::cholesky(b.as_mut(), nb)?;
    let l = b.as_ref();
    standard::reduce(a.as_mut(), l)?;
    if job == Job::Values {
        evd::eigenvalues(a, w);
        return Ok(());
    }
    let mut s = Mat::<f64>::zeros(n, n);
    evd::eigen(a.as_mut(), w, s.as_mut());
    {
        let s = s.as_ref();
        copy::for_each_col_block(a.as_mut(), copy::width(n), &|mut block: MatMut<'_, f64>, col0| {
            block.copy_from(s.subcols(col0, block.ncols()));
        });
    }
    trsm(Side::Left, Uplo::Lower, Op::Trans, Diag::NonUnit, 1.0, l, a)
}

/// `a ← aᵀ` for a square `a`.
fn transpose_in_place(mut a: MatMut<'_, f64>) {
    let n = a.nrows();
    for j in 1..n {
        for i in 0..j {
            let (x, y) = (a[(i, j)], a[(j, i)]);
            a[(i, j)] = y;
            a[(j, i)] = x;
        }
    }
}

/// The shape checks, in the argument order.
fn check(a: MatRef<'_, f64>, b: MatRef<'_, f64>, w: &[f64]) -> Result<(), LaError> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(invalid("a", format!("A is {n} x {}, not square", a.ncols())));
    }
    if b.nrows() != b.ncols() {
        return Err(invalid("b", format!("B is {} x {}, not square", b.nrows(), b.ncols())));
    }
    if b.nrows() != n {
        return Err(invalid("b", format!("B has order {} but A has {n}", b.nrows())));
    }
    if w.len() != n {
        return Err(invalid("w", format!("w has {} entries but A has order {n}", w.len())));
    }
    Ok(())
}

/// The first NaN or infinity of the lower triangle of the square `a`, in
/// column-major order, as `(row, col)`; columns scanned in blocks on the
/// herd pool.
fn first_non_finite_lower(a: MatRef<'_, f64>) -> Option<(usize, usize)> {
    let n = a.nrows();
    let first_in = |c0: usize, c1: usize| -> Option<(usize, usize)> {
        (c0..c1).find_map(|j| (j..n).find(|&i| !a[(i, j)].is_finite()).map(|i| (i, j)))
    };
    let chunk = copy::width(n);
    fn search(
        c0: usize,
        c1: usize,
        chunk: usize,
        f: &(dyn Fn(usize, usize) -> Option<(usize, usize)> + Sync),
    ) -> Option<(usize, usize)> {
        if c1 - c0 <= chunk {
            return f(c0, c1);
        }
        let mid = c0 + (c1 - c0) / 2;
        let (l, r) = herd::join(|| search(c0, mid, chunk, f), || search(mid, c1, chunk, f));
        l.or(r)
    }
    search(0, n, chunk.max(1), &first_in)
}
