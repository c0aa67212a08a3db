//! `getrs`: solving `A·X = B` or `Aᵀ·X = B` with the factors of [`getrf`](super::getrf).

use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_unit_lower_triangular_in_place,
    solve_unit_upper_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{MatMut, MatRef, Par};

use super::kernels::{laswp, laswp_back};
use crate::error::invalid;
use crate::{LaError, Op};

/// Right-hand sides solved together by one participant, at least.
const MIN_COLS: usize = 16;

/// LAPACK's `dgetrs`: solves `op(A)·X = B` in place in `b` (`n × nrhs`)
/// with the factors `lu` (`n × n`) and pivots `ipiv` of `A = P·L·U` that
/// [`getrf`](super::getrf) computed. `Op::NoTrans` solves `A·X = B`,
/// `Op::Trans` `Aᵀ·X = B`. The right-hand sides are cut into column blocks
/// spread over the current herd pool with `crate::spread`, each solved with
/// faer's sequential triangular solves.
///
/// As in LAPACK, a zero on `U`'s diagonal is not checked for (the solution
/// then holds infinities or NaNs); call it only after `getrf` returned
/// `Ok(None)` when that matters.
///
/// # Errors
/// [`LaError::InvalidArgument`] naming `lu` when it is not square, `ipiv`
/// when its length is not `n` or an entry `ipiv[i]` is outside `i..n` (which
/// `getrf` never produces), `b` when it has not `n` rows; checked before `b`
/// is modified.
pub fn getrs(op: Op, lu: MatRef<'_, f64>, ipiv: &[usize], b: MatMut<'_, f64>) -> Result<(), LaError> {
    let n = lu.nrows();
    if lu.ncols() != n {
        return Err(invalid("lu", format!("the factors must be square, not {} x {}", n, lu.ncols())));
    }
    if ipiv.len() != n {
        return Err(invalid("ipiv", format!("length {} but the factors are {n} x {n}", ipiv.len())));
    }
    if let Some((i, &p)) = ipiv.iter().enumerate().find(|&(i, &p)| p < i || p >= n) {
        return Err(invalid("ipiv", format!("ipiv[{i}] = {p} is outside {i}..{n}")));
    }
    if b.nrows() != n {
        return Err(invalid("b", format!("{} rows but the factors are {n} x {n}", b.nrows())));
    }
    if n == 0 || b.ncols() == 0 {
        return Ok(());
    }
    let parts = (b.ncols() / MIN_COLS).clamp(1, herd::current_num_threads().max(1));
    split(b, parts, &|x| solve_block(op, lu, ipiv, x));
    Ok(())
}

/// One block of right-hand sides, sequentially.
fn solve_block(op: Op, lu: MatRef<'_, f64>, ipiv: &[usize], mut x: MatMut<'_, f64>) {
    match op {
        Op::NoTrans => {
            // A = P·L·U: X = U⁻¹·L⁻¹·Pᵀ·B, Pᵀ being the interchanges in order.
            laswp(x.as_mut(), ipiv, 0);
            solve_unit_lower_triangular_in_place(lu, x.as_mut(), Par::Seq);
            solve_upper_triangular_in_place(lu, x, Par::Seq);
        }
        Op::Trans => {
            // Aᵀ = Uᵀ·Lᵀ·Pᵀ: X = P·L⁻ᵀ·U⁻ᵀ·B, P the interchanges in reverse.
            solve_lower_triangular_in_place(lu.transpose(), x.as_mut(), Par::Seq);
            solve_unit_upper_triangular_in_place(lu.transpose(), x.as_mut(), Par::Seq);
            laswp_back(x, ipiv, 0);
        }
    }
}

/// Runs `f` on `parts` column blocks of `b`, spread with
/// [`crate::spread::for_each`].
fn split<F: Fn(MatMut<'_, f64>) + Sync>(b: MatMut<'_, f64>, parts: usize, f: &F) {
    crate::spread::for_each(crate::spread::col_parts(b, parts), &|(block, _)| f(block));
}
