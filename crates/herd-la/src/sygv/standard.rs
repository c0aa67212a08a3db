//! Step 2 of `sygv`: the reduction to standard form `C = L⁻¹·A·L⁻ᵀ`
//! (LAPACK's `dsygst`, itype 1) with two whole-matrix triangular solves on
//! herd ([`trsm`]):
//!
//! 1. `S ← sym(A)`: the full symmetric matrix from `A`'s lower triangle;
//! 2. `S ← L⁻¹·S`;
//! 3. `A ← Sᵀ` — since `A` is symmetric, `(L⁻¹·A)ᵀ = A·L⁻ᵀ`;
//! 4. `A ← L⁻¹·A = L⁻¹·A·L⁻ᵀ = C`.
//!
//! Both solves are left-side, lower, on column-major right-hand sides, cut
//! by `trsm` into column blocks over the participants; the copies are
//! column blocks too. This costs `2n³` flops where LAPACK's blocked
//! `dsygst` needs `n³` (it exploits the symmetry of `C`); a tiled `sygst`
//! in the Cholesky's herd-flow graph would halve the work and let the
//! reduction start on the tiles of `L` already factored.

use faer::{MatMut, MatRef};

use super::copy;
use crate::trsm::{trsm, Side};
use crate::{Diag, LaError, Op, Uplo};

/// Overwrites `a` (its lower triangle read) by the full symmetric
/// `C = L⁻¹·A·L⁻ᵀ`, with `l` the lower triangle of `l` and `s` an `n × n`
/// workspace.
pub(super) fn reduce(
    mut a: MatMut<'_, f64>,
    l: MatRef<'_, f64>,
    mut s: MatMut<'_, f64>,
) -> Result<(), LaError> {
    let n = a.nrows();
    let width = copy::width(n);
    {
        let a = a.as_ref();
        copy::for_each_col_block(s.as_mut(), width, &|mut block: MatMut<'_, f64>, col0| {
            for c in 0..block.ncols() {
                let j = col0 + c;
                for i in 0..n {
                    block[(i, c)] = if i >= j { a[(i, j)] } else { a[(j, i)] };
                }
            }
        });
    }
    trsm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, 1.0, l, s.as_mut())?;
    {
        let s = s.as_ref();
        copy::for_each_col_block(a.as_mut(), width, &|mut block: MatMut<'_, f64>, col0| {
            let rows = s.subrows(col0, block.ncols()).transpose();
            block.copy_from(rows);
        });
    }
    trsm(Side::Left, Uplo::Lower, Op::NoTrans, Diag::NonUnit, 1.0, l, a)
}
