//! Triangular solves with few right-hand sides: blocked substitution, the
//! parallelism in the updates.
//!
//! When the right-hand sides are too few to give every participant a
//! column block of its own (`B` narrower than about `P · MIN_BLOCK`
//! columns), the solve `T·X = B` runs over row blocks of [`ROWS`] rows — in
//! order for a lower `T`, in reverse for an upper one: each diagonal block
//! `T_ii·X_i = B_i` is a sequential faer solve (its columns spread like the
//! wide case's), and the rows still to solve are updated with
//! `B_rest ← B_rest − T_rest,i·X_i` by the parallel [`gemm`](crate::gemm()),
//! which carries nearly all the flops and cuts them over the participants
//! whatever the number of columns. One join per row block.

use faer::{MatMut, MatRef};

use super::{blocks, Kind};
use crate::{gemm, LaError, Op};

/// Rows of a diagonal block.
pub(super) const ROWS: usize = 256;

/// Whether blocked substitution beats column blocks: more than one
/// participant, fewer column blocks than participants, and at least two row
/// blocks of work.
pub(super) fn worthwhile(k: usize, ncols: usize, width: usize, participants: usize) -> bool {
    participants > 1 && ncols.div_ceil(width.max(1)) < participants && k >= 2 * ROWS
}

/// `x ← T⁻¹·x` (`T` = `t` of shape `kind`) by row blocks.
pub(super) fn solve(kind: Kind, t: MatRef<'_, f64>, mut x: MatMut<'_, f64>) -> Result<(), LaError> {
    let k = t.nrows();
    let ncols = x.ncols();
    let steps = k.div_ceil(ROWS);
    let participants = herd::current_num_threads();
    for s in 0..steps {
        let i = if kind.lower { s } else { steps - 1 - s };
        let (r0, r) = (i * ROWS, ROWS.min(k - i * ROWS));
        let diagonal = t.submatrix(r0, r0, r, r);
        let width = blocks::width(r, ncols, participants);
        if kind.lower {
            let (top, rest) = x.as_mut().split_at_row_mut(r0 + r);
            let mut xi = top.subrows_mut(r0, r);
            blocks::for_each_col_block(xi.as_mut(), width, &|b: MatMut<'_, f64>| kind.solve(diagonal, b));
            if rest.nrows() > 0 {
                let below = t.submatrix(r0 + r, r0, k - r0 - r, r);
                gemm(Op::NoTrans, Op::NoTrans, -1.0, below, xi.as_ref(), 1.0, rest)?;
            }
        } else {
            let (rest, bottom) = x.as_mut().split_at_row_mut(r0);
            let mut xi = bottom.subrows_mut(0, r);
            blocks::for_each_col_block(xi.as_mut(), width, &|b: MatMut<'_, f64>| kind.solve(diagonal, b));
            if r0 > 0 {
                let above = t.submatrix(0, r0, r0, r);
                gemm(Op::NoTrans, Op::NoTrans, -1.0, above, xi.as_ref(), 1.0, rest)?;
            }
        }
    }
    Ok(())
}
