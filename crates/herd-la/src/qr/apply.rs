//! `ormqr` and `orgqr`: `Q` (or `Qᵀ`) applied to a matrix from `geqrf`'s
//! reflectors, in blocks of `nb` reflectors (compact-WY, [`Block`]). The
//! target's columns (for `Q·C`, `Qᵀ·C`, and `orgqr`) or rows (for `C·Q`,
//! `C·Qᵀ`) are independent, so they are cut into blocks spread over the herd
//! pool, each block taking all the reflector blocks in turn: no barrier
//! between reflector blocks. A target with too few of them to go round the
//! participants gets the reflector blocks one after the other instead, each
//! spread over row pieces of the target with a reduction. A target with fewer than [`UNBLOCKED_BELOW`]
//! such columns (a probe vector) gets the reflectors one at a time
//! (`dorm2r`), `O(m·k)` per column.

use faer::{MatMut, MatRef};

use super::block::Block;
use super::split::{apply_left_par, for_cols, for_rows, par_map, piece};
use crate::{Op, Side};

/// Targets with fewer independent columns (rows) than this get the
/// reflectors one at a time: forming `T` would cost more than applying them.
pub(crate) const UNBLOCKED_BELOW: usize = 8;
/// Narrowest block of the target's columns (rows) given to one participant.
const MIN_PIECE: usize = 32;

/// The blocks of `nb` reflectors of `a` (`nq × ≥k`) and `tau` (`k`), each
/// with the row its vectors start at, formed in parallel by `form` (a
/// block's reflectors `nq − kb` rows, its `tau`).
fn blocks<'a, 'b, F>(a: MatRef<'a, f64>, tau: &[f64], nb: usize, form: F) -> Vec<(usize, Block<'b>)>
where
    F: Fn(MatRef<'a, f64>, &[f64]) -> Block<'b> + Sync,
{
    let nq = a.nrows();
    par_map(tau.len().div_ceil(nb), &|j| {
        let kb = j * nb;
        let w = nb.min(tau.len() - kb);
        (kb, form(a.submatrix(kb, kb, nq - kb, w), &tau[kb..kb + w]))
    })
}

/// Whether `op(Q)` applied from `side` takes the reflectors first to last.
fn forward(side: Side, op: Op) -> bool {
    matches!((side, op), (Side::Left, Op::Trans) | (Side::Right, Op::NoTrans))
}

/// `C ← op(Q)·C` or `C·op(Q)` with the column-major `c` and the `k =
/// tau.len()` reflectors of `a` (`nq × ≥k`, `nq` = `c`'s rows for
/// [`Side::Left`], its columns for [`Side::Right`]; any strides).
pub(crate) fn ormqr_blocked(
    side: Side,
    op: Op,
    a: MatRef<'_, f64>,
    tau: &[f64],
    c: MatMut<'_, f64>,
    nb: usize,
) {
    let independent = match side {
        Side::Left => c.ncols(),
        Side::Right => c.nrows(),
    };
    if tau.is_empty() || independent == 0 {
        return;
    }
    if independent < UNBLOCKED_BELOW {
        unblocked(side, op, a, tau, c);
        return;
    }
    let blocks = blocks(a, tau, nb, Block::from_panel);
    let fwd = forward(side, op);
    if independent < narrow_below() {
        // Too few columns (rows) to keep every participant busy: the
        // reflector blocks one after the other, each spread over row pieces
        // of the target with a reduction. `C·op(H) = (op(H)ᵀ·Cᵀ)ᵀ`, and
        // `op(H)ᵀ` is `H` with the other transpose.
        let (mut target, op) = match side {
            Side::Left => (c, op),
            Side::Right => (c.transpose_mut(), flip(op)),
        };
        let each = |(kb, blk): &(usize, Block<'_>)| {
            apply_left_par(blk, op, target.as_mut().subrows_mut(*kb, blk.rows()));
        };
        if fwd {
            blocks.iter().for_each(each);
        } else {
            blocks.iter().rev().for_each(each);
        }
        return;
    }
    let run = |mut target: MatMut<'_, f64>, _| {
        let each = |(kb, blk): &(usize, Block<'_>)| match side {
            Side::Left => blk.apply_left(op, target.as_mut().subrows_mut(*kb, blk.rows())),
            Side::Right => blk.apply_right(op, target.as_mut().subcols_mut(*kb, blk.rows())),
        };
        if fwd {
            blocks.iter().for_each(each);
        } else {
            blocks.iter().rev().for_each(each);
        }
    };
    let width = piece(independent, MIN_PIECE);
    match side {
        Side::Left => for_cols(c, width, &run),
        Side::Right => for_rows(c, width, &run),
    }
}

/// Targets with fewer independent columns (rows) than this are spread by
/// row pieces of each reflector block instead of by column pieces: two
/// pieces of [`MIN_PIECE`] per participant.
fn narrow_below() -> usize {
    let participants = herd::current_num_threads().max(1);
    if participants == 1 {
        0
    } else {
        2 * participants * MIN_PIECE
    }
}

/// The other transpose.
fn flip(op: Op) -> Op {
    match op {
        Op::NoTrans => Op::Trans,
        Op::Trans => Op::NoTrans,
    }
}

/// `a` (`m × n`, column-major, `k = tau.len() ≤ n ≤ m` reflectors in its
/// first `k` columns) overwritten with the first `n` columns of `Q`: the
/// reflector blocks copied out, `a` set to `I`, and `Q·I` formed column
/// block by column block. Block `j` (vectors from row `k_j`) leaves the
/// columns before `k_j` as they are (`e_c` with `c < k_j` is orthogonal to
/// its vectors), so it is applied to `Q[k_j.., k_j..]` only, as `dorgqr`
/// does.
pub(crate) fn orgqr_blocked(a: MatMut<'_, f64>, tau: &[f64], nb: usize) {
    // Copies: `a` is overwritten with `Q` while they are applied.
    let blocks =
        if tau.is_empty() { Vec::new() } else { blocks(a.as_ref(), tau, nb, Block::copied_from_panel) };
    if a.ncols() < narrow_below() {
        // Few columns: each reflector block spread over row pieces.
        let mut q = a;
        q.fill(0.0);
        for j in 0..q.ncols() {
            q[(j, j)] = 1.0;
        }
        for (kb, blk) in blocks.iter().rev() {
            let cols = q.ncols() - kb;
            apply_left_par(blk, Op::NoTrans, q.as_mut().submatrix_mut(*kb, *kb, blk.rows(), cols));
        }
        return;
    }
    let width = piece(a.ncols(), MIN_PIECE);
    for_cols(a, width, &|mut q: MatMut<'_, f64>, col0| {
        q.fill(0.0);
        for j in 0..q.ncols() {
            if col0 + j < q.nrows() {
                q[(col0 + j, j)] = 1.0;
            }
        }
        for (kb, blk) in blocks.iter().rev() {
            let from = kb.saturating_sub(col0);
            if from >= q.ncols() {
                continue;
            }
            let cols = q.ncols() - from;
            blk.apply_left(Op::NoTrans, q.as_mut().submatrix_mut(*kb, from, blk.rows(), cols));
        }
    });
}

/// `dorm2r`: the reflectors applied one at a time (`H_i = I − tau_i·v·vᵀ`,
/// `v` read from `a`'s column `i` below the diagonal, `v(i) = 1`), column
/// by column of `c` — `O(nq·k)` per column of `C` (row for
/// [`Side::Right`]).
fn unblocked(side: Side, op: Op, a: MatRef<'_, f64>, tau: &[f64], mut c: MatMut<'_, f64>) {
    let nq = a.nrows();
    let apply = |i: usize, c: &mut MatMut<'_, f64>| {
        let t = tau[i];
        if t == 0.0 {
            return;
        }
        let v = a.col(i);
        match side {
            Side::Left => {
                for j in 0..c.ncols() {
                    let mut dot = c[(i, j)];
                    for r in i + 1..nq {
                        dot += v[r] * c[(r, j)];
                    }
                    let s = t * dot;
                    c[(i, j)] -= s;
                    for r in i + 1..nq {
                        c[(r, j)] -= s * v[r];
                    }
                }
            }
            Side::Right => {
                let rows = c.nrows();
                let mut w: Vec<f64> = (0..rows).map(|row| c[(row, i)]).collect();
                for r in i + 1..nq {
                    let vr = v[r];
                    for (row, wr) in w.iter_mut().enumerate() {
                        *wr += c[(row, r)] * vr;
                    }
                }
                for (row, wr) in w.iter().enumerate() {
                    c[(row, i)] -= t * wr;
                }
                for r in i + 1..nq {
                    let vr = v[r];
                    for (row, wr) in w.iter().enumerate() {
                        c[(row, r)] -= t * wr * vr;
                    }
                }
            }
        }
    };
    if forward(side, op) {
        (0..tau.len()).for_each(|i| apply(i, &mut c));
    } else {
        (0..tau.len()).rev().for_each(|i| apply(i, &mut c));
    }
}
