//! Triangular solve with many right-hand sides on herd (BLAS's `dtrsm`):
//! `B ← α·op(A)⁻¹·B` ([`Side::Left`]) or `B ← α·B·op(A)⁻¹`
//! ([`Side::Right`]), `A` triangular ([`Uplo`], [`Diag`]), `op` a
//! transpose or not ([`Op`]).
//!
//! Every right-hand side is an independent solve, so `B` is cut into
//! column blocks (left side) or row blocks (right side) — about one per
//! participant of the current herd pool, none narrower than
//! `MIN_BLOCK` unless `B` is — and each block is one sequential faer
//! triangular solve (`faer::linalg::triangular_solve`, `Par::Seq`). The
//! blocks are disjoint `MatMut` views split off `B` and spread with
//! `herd::join` (`blocks.rs`); `A` is shared read-only. The split adds no
//! synchronisation beyond the joins (depth `log₂` of the block count).
//!
//! With fewer right-hand sides than that gives every participant a block,
//! the solve runs by row blocks instead, the updates between them by the
//! parallel `gemm` (`substitution.rs`).
//!
//! A right-side solve `X·op(A) = α·B` is the left-side solve
//! `op(A)ᵀ·Xᵀ = α·Bᵀ` on the transposed view of `B` (only strides change).
//!
//! BLAS semantics: `α = 0` sets `B` to zero without reading `A` or `B`; NaN
//! and infinite entries are otherwise computed with (no check, no error);
//! the triangle of `A` opposite `uplo`, and its diagonal for
//! [`Diag::Unit`], are never read.

mod blocks;
mod substitution;
#[cfg(test)]
mod tests;

use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_unit_lower_triangular_in_place,
    solve_unit_upper_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{MatMut, MatRef, Par};

use crate::error::invalid;
use crate::{Diag, LaError, Op, Side, Uplo};

/// `B ← α·op(A)⁻¹·B` (`side = Left`) or `B ← α·B·op(A)⁻¹` (`side = Right`)
/// on the current herd pool (the global pool outside any;
/// `pool.install(|| trsm(..))` chooses one): BLAS's `dtrsm` for faer views
/// of any strides. `A` is `m × m` for the left side and `n × n` for the
/// right side, `B` is `m × n`; only `A`'s `uplo` triangle is read (without
/// its diagonal for [`Diag::Unit`]).
///
/// No pivoting and no singularity test, as BLAS: a zero on `A`'s diagonal
/// gives infinities or NaNs in `B`.
///
/// ```
/// use herd_la::{trsm, Side};
/// use herd_la::{random_matrix, Diag, Op, Uplo};
/// let mut l = random_matrix(50, 50, 1);
/// for i in 0..50 { l[(i, i)] += 50.0; }
/// let b = random_matrix(50, 20, 2);
/// let mut x = b.clone();
/// trsm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, 1.0, l.as_ref(), x.as_mut()).unwrap();
/// // L·X = B, with L the lower triangle of `l`.
/// let lower = faer::Mat::from_fn(50, 50, |i, j| if i >= j { l[(i, j)] } else { 0.0 });
/// assert!((&lower * &x - &b).norm_max() < 1e-12);
/// ```
///
/// # Errors
/// Checked before anything is read or written, in BLAS's argument order:
/// [`LaError::InvalidArgument`] naming `a` when `A` is not square or its
/// order is not `B`'s row count (left) or column count (right).
pub fn trsm(
    side: Side,
    uplo: Uplo,
    trans: Op,
    diag: Diag,
    alpha: f64,
    a: MatRef<'_, f64>,
    b: MatMut<'_, f64>,
) -> Result<(), LaError> {
    if a.nrows() != a.ncols() {
        return Err(invalid("a", format!("A is {} x {}, not square", a.nrows(), a.ncols())));
    }
    let (m, n) = (b.nrows(), b.ncols());
    let (order, which) = match side {
        Side::Left => (m, "rows"),
        Side::Right => (n, "columns"),
    };
    if a.nrows() != order {
        return Err(invalid("a", format!("A has order {} but B has {order} {which}", a.nrows())));
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    // The left-side solve T·Y = α·R: T = op(A) and R = B for the left side,
    // T = op(A)ᵀ and R = Bᵀ for the right side.
    let op_a = match trans {
        Op::NoTrans => a,
        Op::Trans => a.transpose(),
    };
    let (t, rhs, t_transposed) = match side {
        Side::Left => (op_a, b, trans == Op::Trans),
        Side::Right => (op_a.transpose(), b.transpose_mut(), trans == Op::NoTrans),
    };
    let lower = (uplo == Uplo::Lower) != t_transposed;
    let kind = Kind { lower, unit: diag == Diag::Unit };
    let participants = herd::current_num_threads();
    let width = blocks::width(t.nrows(), rhs.ncols(), participants);
    let narrow = alpha != 0.0 && substitution::worthwhile(t.nrows(), rhs.ncols(), width, participants);
    let mut rhs = rhs;
    blocks::for_each_col_block(rhs.as_mut(), width, &|mut block: MatMut<'_, f64>| {
        if alpha == 0.0 {
            block.fill(0.0);
            return;
        }
        if alpha != 1.0 {
            for j in 0..block.ncols() {
                block.as_mut().col_mut(j).iter_mut().for_each(|x| *x *= alpha);
            }
        }
        if !narrow {
            kind.solve(t, block);
        }
    });
    if narrow {
        substitution::solve(kind, t, rhs)?;
    }
    Ok(())
}

/// The shape of the triangular matrix of a left-side solve.
#[derive(Clone, Copy)]
struct Kind {
    lower: bool,
    unit: bool,
}

impl Kind {
    /// `rhs ← T⁻¹·rhs`, one sequential faer solve.
    fn solve(self, t: MatRef<'_, f64>, rhs: MatMut<'_, f64>) {
        match (self.lower, self.unit) {
            (true, false) => solve_lower_triangular_in_place(t, rhs, Par::Seq),
            (true, true) => solve_unit_lower_triangular_in_place(t, rhs, Par::Seq),
            (false, false) => solve_upper_triangular_in_place(t, rhs, Par::Seq),
            (false, true) => solve_unit_upper_triangular_in_place(t, rhs, Par::Seq),
        }
    }
}
