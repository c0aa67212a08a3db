//! Step 2 of `sygv`: the reduction to standard form `C = L⁻¹·A·L⁻ᵀ`, LAPACK's
//! blocked `dsygst` (itype 1, uplo 'L') on herd's BLAS-3: only the lower
//! triangles of `A` and `L` are read, only `A`'s lower triangle is written,
//! `n³` flops. For each block column `k` of `NB` columns (`A₁₁` the diagonal
//! block, `A₂₁` below it, `A₂₂` the trailing matrix; `L` likewise):
//!
//! 1. `A₁₁ ← L₁₁⁻¹·A₁₁·L₁₁⁻ᵀ` — small, sequential (faer solves);
//! 2. `A₂₁ ← A₂₁·L₁₁⁻ᵀ` — [`trsm`], right side: parallel over rows of `A₂₁`;
//! 3. `A₂₁ ← A₂₁ − ½·L₂₁·A₁₁` — [`gemm`];
//! 4. `A₂₂ ← A₂₂ − A₂₁·L₂₁ᵀ − L₂₁·A₂₁ᵀ` — [`syr2k`], lower triangle;
//! 5. `A₂₁ ← A₂₁ − ½·L₂₁·A₁₁` — [`gemm`];
//! 6. `A₂₁ ← L₂₂⁻¹·A₂₁` — [`trsm`] with `NB` right-hand sides: blocked
//!    substitution, parallel in its `gemm` updates.
//!
//! Every step is parallel inside, bulk-synchronous between (a join per
//! call). A tiled `sygst` in the Cholesky's herd-flow graph would let these
//! updates start on the tiles of `L` already factored.

use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Mat, MatMut, MatRef, Par};

use crate::syrk::syr2k;
use crate::trsm::trsm;
use crate::Side;
use crate::{gemm, Diag, LaError, Op, Uplo};

/// Columns of a block step.
const NB: usize = 128;

/// Overwrites the lower triangle of `a` (read: its lower triangle) by the
/// lower triangle of `C = L⁻¹·A·L⁻ᵀ`, `L` the lower triangle of `l`.
pub(super) fn reduce(mut a: MatMut<'_, f64>, l: MatRef<'_, f64>) -> Result<(), LaError> {
    let n = a.nrows();
    for k in (0..n).step_by(NB) {
        let kb = NB.min(n - k);
        let l11 = l.submatrix(k, k, kb, kb);
        let a11 = diagonal_block(a.as_mut().submatrix_mut(k, k, kb, kb), l11);
        if k + kb == n {
            break;
        }
        let m = n - k - kb;
        let l21 = l.submatrix(k + kb, k, m, kb);
        let l22 = l.submatrix(k + kb, k + kb, m, m);
        let (_, _, below, a22) = a.as_mut().split_at_mut(k + kb, k + kb);
        let mut a21 = below.subcols_mut(k, kb);
        trsm(Side::Right, Uplo::Lower, Op::Trans, Diag::NonUnit, 1.0, l11, a21.as_mut())?;
        gemm(Op::NoTrans, Op::NoTrans, -0.5, l21, a11.as_ref(), 1.0, a21.as_mut())?;
        syr2k(Uplo::Lower, Op::NoTrans, -1.0, a21.as_ref(), l21, 1.0, a22)?;
        gemm(Op::NoTrans, Op::NoTrans, -0.5, l21, a11.as_ref(), 1.0, a21.as_mut())?;
        trsm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, 1.0, l22, a21)?;
    }
    Ok(())
}

/// `A₁₁ ← L₁₁⁻¹·A₁₁·L₁₁⁻ᵀ` on the lower triangle of `a11`; returns the new
/// `A₁₁` in full (symmetric).
fn diagonal_block(mut a11: MatMut<'_, f64>, l11: MatRef<'_, f64>) -> Mat<f64> {
    let kb = a11.nrows();
    let mut full = Mat::from_fn(kb, kb, |i, j| if i >= j { a11[(i, j)] } else { a11[(j, i)] });
    solve_lower_triangular_in_place(l11, full.as_mut(), Par::Seq);
    let mut c = full.transpose().to_owned();
    solve_lower_triangular_in_place(l11, c.as_mut(), Par::Seq);
    let c = Mat::from_fn(kb, kb, |i, j| if i >= j { c[(i, j)] } else { c[(j, i)] });
    for j in 0..kb {
        for i in j..kb {
            a11[(i, j)] = c[(i, j)];
        }
    }
    c
}
