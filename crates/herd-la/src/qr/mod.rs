//! Householder QR on herd, in LAPACK's representation: [`geqrf`] (`dgeqrf`),
//! [`orgqr`] (`dorgqr`) and [`ormqr`] (`dormqr`) for column-major `f64`
//! matrices of any shape; [`Qr`] chooses the block size;
//! [`qr_residual_probe`] checks a factorization in `O(mn)`.
//!
//! `geqrf` leaves `R` on and above the diagonal and the Householder vectors
//! `v_i` below it (`v_i(i) = 1` implicit, `v_i(j) = 0` for `j < i`), with
//! `Q = H_0·H_1···H_{k−1}`, `H_i = I − tau[i]·v_i·v_iᵀ`, `k = min(m, n)`, and
//! `tau` by `dlarfg`'s conventions (`beta = −sign(alpha)·‖x‖`,
//! `tau = (beta − alpha)/beta`, `tau = 0` when the column below the diagonal
//! is already zero): LAPACK's `dorgqr`/`dormqr` accept herd's output and
//! herd's accept LAPACK's.
//!
//! How (module files):
//! * `householder.rs` — the sequential kernels: `dlarfg`, the unblocked
//!   `dgeqr2`, and the recursive panel (halves, the left one's reflectors
//!   applied to the right one with matrix products);
//! * `leaf.rs` — the panel's leaf with its rows cut into pieces on the pool
//!   (one reduction per column gives the norm and the products with the
//!   columns on its right), where a leaf is tall and the pool has more than
//!   one participant;
//! * `block.rs` — a block of reflectors in compact-WY form (`dlarft`'s `T`,
//!   `dlarfb`'s `W = Vᵀ·C`, `C −= V·(op(T)·W)`), faer's sequential products;
//! * `factor.rs` — `geqrf`'s schedule: blocked right-looking QR with a
//!   look-ahead of one panel, the trailing update cut into column blocks,
//!   all on `herd::join`;
//! * `apply.rs` — `ormqr`/`orgqr`: the target's columns (rows) cut into
//!   blocks spread over the pool, each taking every reflector block;
//! * `split.rs` — the cutting and spreading.
//!
//! NaN and infinite entries are computed with, as LAPACK does (no check, no
//! error, no panic). A view with a non-unit row stride is copied to a
//! column-major buffer and back.
//!
//! ```
//! use herd_la::{geqrf, orgqr, ormqr, random_matrix, Op, Side};
//! let a = random_matrix(300, 200, 1);
//! let mut qr = a.clone();
//! let mut tau = vec![0.0; 200];
//! geqrf(qr.as_mut(), &mut tau).unwrap();
//! // Qᵀ·A = R.
//! let mut c = a.clone();
//! ormqr(Side::Left, Op::Trans, qr.as_ref(), &tau, c.as_mut()).unwrap();
//! assert!((c[(0, 0)] - qr[(0, 0)]).abs() < 1e-12);
//! assert!(c[(5, 0)].abs() < 1e-12);
//! // The first 200 columns of Q.
//! let mut q = qr.clone();
//! orgqr(q.as_mut(), &tau).unwrap();
//! assert!((q.col(3).norm_l2() - 1.0).abs() < 1e-12);
//! ```

mod apply;
pub(crate) mod block;
mod factor;
pub(crate) mod householder;
mod leaf;
mod norm;
pub(crate) mod split;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod timing;

use faer::{Col, Mat, MatMut, MatRef, Par};

use crate::error::invalid;
use crate::probe::{frobenius, Part};
use crate::rng::SplitMix64;
use crate::{LaError, Op, Side};

/// The block size of [`Qr::new`]: panels (and reflector blocks) of this many
/// columns.
pub const DEFAULT_QR_BLOCK: usize = 128;

/// The settings of the QR routines: the block size `nb` — columns per panel
/// of [`Qr::geqrf`] and reflectors per block applied by [`Qr::orgqr`] and
/// [`Qr::ormqr`] (any `nb ≥ 1` gives the same result up to rounding).
///
/// ```
/// use herd_la::{random_matrix, Qr};
/// let mut a = random_matrix(100, 70, 1);
/// let mut tau = vec![0.0; 70];
/// Qr::new().block_size(32).geqrf(a.as_mut(), &mut tau).unwrap();
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Qr {
    nb: usize,
}

impl Default for Qr {
    fn default() -> Qr {
        Qr::new()
    }
}

/// LAPACK's `dgeqrf`: `A = Q·R` in place on the current herd pool, with
/// [`Qr::new`]'s block size. On return `R` is on and above the diagonal;
/// below it the Householder vectors `v_i` (`v_i(i) = 1` implicit),
/// `Q = H_0·H_1···H_{k−1}`, `H_i = I − tau[i]·v_i·v_iᵀ`, `k = min(m, n)`.
///
/// # Errors
/// See [`Qr::geqrf`].
pub fn geqrf(a: MatMut<'_, f64>, tau: &mut [f64]) -> Result<(), LaError> {
    Qr::new().geqrf(a, tau)
}

/// LAPACK's `dorgqr`: overwrites the `m × n` matrix `a` (`n ≤ m`) holding
/// the vectors of `k = tau.len() ≤ n` reflectors (as [`geqrf`] leaves them)
/// with the first `n` columns of `Q = H_0···H_{k−1}`.
///
/// # Errors
/// See [`Qr::orgqr`].
pub fn orgqr(a: MatMut<'_, f64>, tau: &[f64]) -> Result<(), LaError> {
    Qr::new().orgqr(a, tau)
}

/// LAPACK's `dormqr`: `C ← op(Q)·C` ([`Side::Left`]) or `C·op(Q)`
/// ([`Side::Right`]) with `Q = H_0···H_{k−1}` from [`geqrf`]'s `a` (its
/// first `k = tau.len()` columns) and `tau`.
///
/// # Errors
/// See [`Qr::ormqr`].
pub fn ormqr(
    side: Side,
    trans: Op,
    a: MatRef<'_, f64>,
    tau: &[f64],
    c: MatMut<'_, f64>,
) -> Result<(), LaError> {
    Qr::new().ormqr(side, trans, a, tau, c)
}

impl Qr {
    /// Blocks of [`DEFAULT_QR_BLOCK`] columns.
    pub fn new() -> Qr {
        Qr { nb: DEFAULT_QR_BLOCK }
    }

    /// The same settings with blocks of `nb` columns (checked when a routine
    /// runs: at least 1).
    pub fn block_size(self, nb: usize) -> Qr {
        Qr { nb }
    }

    /// The block size.
    pub fn nb(&self) -> usize {
        self.nb
    }

    fn check_nb(&self) -> Result<(), LaError> {
        if self.nb == 0 {
            return Err(LaError::InvalidTileSize { nb: 0 });
        }
        Ok(())
    }

    /// [`geqrf`] with this block size: blocked right-looking Householder QR
    /// with a one-panel look-ahead on the participants of the current herd
    /// pool (the global pool outside any; `pool.install` chooses one).
    /// Writes `tau[..min(m, n)]` (a longer `tau` keeps its other entries).
    ///
    /// # Errors
    /// Checked before anything is written: [`LaError::InvalidTileSize`] for a
    /// block size of 0; [`LaError::InvalidArgument`] naming `tau` when it has
    /// fewer than `min(m, n)` entries.
    pub fn geqrf(&self, a: MatMut<'_, f64>, tau: &mut [f64]) -> Result<(), LaError> {
        self.check_nb()?;
        let k = a.nrows().min(a.ncols());
        if tau.len() < k {
            return Err(invalid("tau", format!("has {} entries but min(m, n) = {k}", tau.len())));
        }
        let nb = self.nb;
        column_major(a, |a| factor::geqrf_blocked(a, &mut tau[..k], nb))?;
        Ok(())
    }

    /// [`orgqr`] with this block size, the columns of `Q` formed in parallel
    /// on the current herd pool.
    ///
    /// # Errors
    /// Checked before anything is written: [`LaError::InvalidTileSize`] for a
    /// block size of 0; [`LaError::InvalidArgument`] naming `a` when it has
    /// more columns than rows, `tau` when it has more entries than `a` has
    /// columns.
    pub fn orgqr(&self, a: MatMut<'_, f64>, tau: &[f64]) -> Result<(), LaError> {
        self.check_nb()?;
        let (m, n) = (a.nrows(), a.ncols());
        if n > m {
            return Err(invalid("a", format!("is {m} x {n}: orgqr needs n ≤ m")));
        }
        if tau.len() > n {
            return Err(invalid(
                "tau",
                format!("has {} entries (reflectors) but a has {n} columns", tau.len()),
            ));
        }
        let nb = self.nb;
        column_major(a, |a| apply::orgqr_blocked(a, tau, nb))?;
        Ok(())
    }

    /// [`ormqr`] with this block size, the columns (for [`Side::Left`]) or
    /// rows ([`Side::Right`]) of `C` spread over the current herd pool.
    ///
    /// # Errors
    /// Checked before anything is written: [`LaError::InvalidTileSize`] for a
    /// block size of 0; [`LaError::InvalidArgument`] naming `a` when its row
    /// count is not `C`'s order on `side` (rows for the left, columns for the
    /// right), `tau` when it has more entries than `a` has rows or columns.
    pub fn ormqr(
        &self,
        side: Side,
        trans: Op,
        a: MatRef<'_, f64>,
        tau: &[f64],
        c: MatMut<'_, f64>,
    ) -> Result<(), LaError> {
        self.check_nb()?;
        let nq = match side {
            Side::Left => c.nrows(),
            Side::Right => c.ncols(),
        };
        if a.nrows() != nq {
            let what = if side == Side::Left { "rows" } else { "columns" };
            return Err(invalid(
                "a",
                format!("has {} rows but C has {nq} {what} (side {side:?})", a.nrows()),
            ));
        }
        let k = tau.len();
        if k > a.nrows().min(a.ncols()) {
            return Err(invalid(
                "tau",
                format!("has {k} entries (reflectors) but a is {} x {}", a.nrows(), a.ncols()),
            ));
        }
        let nb = self.nb;
        column_major(c, |c| apply::ormqr_blocked(side, trans, a, tau, c, nb))?;
        Ok(())
    }
}

/// Runs `f` on `a` itself when its rows are contiguous, else on a
/// column-major copy written back afterwards (the blocked kernels need
/// contiguous columns).
///
/// # Errors
/// [`LaError::OutOfMemory`] when the copy would not fit in `MemAvailable`:
/// `a` is then untouched, where allocating it would abort the process.
fn column_major(mut a: MatMut<'_, f64>, f: impl FnOnce(MatMut<'_, f64>)) -> Result<(), LaError> {
    if a.row_stride() == 1 {
        f(a);
        return Ok(());
    }
    let bytes = a.nrows() as u128 * a.ncols() as u128 * 8;
    herd::limits::check_memory("the column-major copy of a strided (row-major) matrix", bytes)
        .map_err(|e| LaError::OutOfMemory(e.to_string()))?;
    let mut copy = a.to_owned();
    f(copy.as_mut());
    a.copy_from(&copy);
    Ok(())
}

/// The scaled residual of a QR factorization in `O(mn)`, as HPL checks a
/// solution: for a random `x` (SplitMix64, `seed`), `A·x` against
/// `Q·(R·x)`, `Q` applied by [`ormqr`] from `qr` and `tau` (as [`geqrf`]
/// leaves them for `a`):
///
/// ```text
/// ‖A·x − Q·(R·x)‖₂ / (‖A‖_F · ‖x‖₂ · max(m, n) · ε)
/// ```
///
/// Of order 1 for a backward-stable factorization; LAPACK's tests accept up
/// to 30. `0.0` for empty shapes; NaN when an entry is NaN.
///
/// # Errors
/// [`LaError::InvalidArgument`] naming `qr` when its shape is not `a`'s,
/// `tau` when it has not `min(m, n)` entries.
pub fn qr_residual_probe(
    a: MatRef<'_, f64>,
    qr: MatRef<'_, f64>,
    tau: &[f64],
    seed: u64,
) -> Result<f64, LaError> {
    let (m, n) = (a.nrows(), a.ncols());
    if (qr.nrows(), qr.ncols()) != (m, n) {
        return Err(invalid("qr", format!("is {} x {} but a is {m} x {n}", qr.nrows(), qr.ncols())));
    }
    let k = m.min(n);
    if tau.len() != k {
        return Err(invalid("tau", format!("has {} entries but min(m, n) = {k}", tau.len())));
    }
    let mut rng = SplitMix64::new(seed);
    let x = Col::from_fn(n, |_| rng.next_signed());
    let mut ax = Mat::zeros(m, 1);
    faer::linalg::matmul::matmul(ax.as_mut(), faer::Accum::Replace, a, x.as_mat(), 1.0, Par::Seq);
    let mut qrx =
        Mat::from_fn(m, 1, |i, _| if i < k { (i..n).map(|j| qr[(i, j)] * x[j]).sum() } else { 0.0 });
    ormqr(Side::Left, Op::NoTrans, qr, tau, qrx.as_mut())?;
    let num = (ax - qrx).norm_l2();
    if num == 0.0 {
        return Ok(0.0);
    }
    let den = frobenius(a, Part::Full) * x.norm_l2() * m.max(n) as f64 * f64::EPSILON;
    Ok(num / den)
}
