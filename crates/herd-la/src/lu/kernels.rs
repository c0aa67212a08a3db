//! The sequential kernels of the LU factorization: the pivot search
//! (`idamax`), the row interchanges (`dlaswp`), the recursive panel
//! factorization (`dgetrf2`) and the update of a column block by a factored
//! panel (`dlaswp` + `dtrsm` + `dgemm`), all on faer views with faer's
//! sequential (`Par::Seq`) triangular solve and matrix multiply.

use faer::linalg::triangular_solve::solve_unit_lower_triangular_in_place;
use faer::{ColRef, MatMut, MatRef, Par};

/// LAPACK's `dlamch('S')`: the smallest `x` whose reciprocal does not
/// overflow. Below it `dgetrf2` divides by the pivot instead of multiplying
/// by its reciprocal.
const SFMIN: f64 = f64::MIN_POSITIVE;

/// The index of the first entry of largest magnitude (BLAS's `idamax`,
/// 0-based): the first one on ties; a NaN is never chosen unless it is the
/// first entry (`|x| > max` is false for NaN), as in the reference BLAS.
/// 0 for an empty column.
pub(super) fn idamax(x: ColRef<'_, f64>) -> usize {
    let mut best = 0;
    let mut max = match x.iter().next() {
        Some(v) => v.abs(),
        None => return 0,
    };
    for (i, v) in x.iter().enumerate().skip(1) {
        if v.abs() > max {
            max = v.abs();
            best = i;
        }
    }
    best
}

/// LAPACK's `dlaswp` with increment 1: for `k` in order, interchanges rows
/// `first + k` and `piv[k]` of `a` (row indices of `a`, every one below
/// `a.nrows()`, which the callers guarantee). Column by column, so that each
/// column's swaps stay in one contiguous column of storage.
pub(super) fn laswp(mut a: MatMut<'_, f64>, piv: &[usize], first: usize) {
    for j in 0..a.ncols() {
        let col = a.as_mut().col_mut(j);
        match col.try_as_col_major_mut() {
            Some(col) => {
                let s = col.as_slice_mut();
                for (k, &p) in piv.iter().enumerate() {
                    s.swap(first + k, p);
                }
            }
            None => {
                let mut col = a.as_mut().col_mut(j);
                for (k, &p) in piv.iter().enumerate() {
                    let (i, t) = (first + k, col[first + k]);
                    col[i] = col[p];
                    col[p] = t;
                }
            }
        }
    }
}

/// [`laswp`] with the interchanges applied in reverse order (`dlaswp` with
/// increment −1): undoes [`laswp`] with the same arguments.
pub(super) fn laswp_back(mut a: MatMut<'_, f64>, piv: &[usize], first: usize) {
    for j in 0..a.ncols() {
        let mut col = a.as_mut().col_mut(j);
        for (k, &p) in piv.iter().enumerate().rev() {
            let (i, t) = (first + k, col[first + k]);
            col[i] = col[p];
            col[p] = t;
        }
    }
}

/// LAPACK's `dgetrf2`: the recursive LU with partial pivoting of the whole
/// view `a` (`m × n`, any shape), in place. `piv` (length `min(m, n)`)
/// receives the pivot rows as row indices of `a`. Returns the first zero
/// pivot (index into `a`'s diagonal), the factorization being completed
/// anyway.
///
/// The columns are halved (`n₁ = min(m, n)/2`): the left half factored
/// recursively, its interchanges applied to the right half, the top of the
/// right half solved with the unit lower triangle, the bottom updated by a
/// GEMM, the bottom factored recursively and its interchanges applied back
/// to the left half — so most of the flops of a panel are in a GEMM.
///
/// Used for the panels rather than faer's sequential partial-pivoting LU
/// (`lu_in_place`, `Par::Seq`): on one Zen 4 core it was 8–15 % faster on
/// 4000 × 256, 4000 × 128 and 2000 × 256 panels (minimum of 15 alternating
/// runs each: 6.4 against 7.1 ms, 2.1 against 2.5, 3.0 against 3.2), and it
/// gives LAPACK's interchanges directly where faer returns a permutation.
///
/// The GEMMs of the recursion are cut into at most `parts` row blocks spread
/// with `crate::spread` (see [`gemm_parts`]), so that idle participants can help
/// with a panel on the critical path; `parts = 1` keeps it on the caller.
pub(super) fn getrf2(mut a: MatMut<'_, f64>, piv: &mut [usize], parts: usize) -> Option<usize> {
    let (m, n) = (a.nrows(), a.ncols());
    let mn = m.min(n);
    debug_assert_eq!(piv.len(), mn);
    if mn == 0 {
        return None;
    }
    if m == 1 {
        // One row: no interchange is possible.
        piv[0] = 0;
        return (a[(0, 0)] == 0.0).then_some(0);
    }
    if n == 1 {
        let p = idamax(a.as_ref().col(0));
        piv[0] = p;
        // `!= 0.0` holds for NaN: a NaN pivot is divided by, as LAPACK does.
        if a[(p, 0)] == 0.0 {
            return Some(0);
        }
        let mut col = a.as_mut().col_mut(0);
        if p != 0 {
            let t = col[0];
            col[0] = col[p];
            col[p] = t;
        }
        let pivot = col[0];
        let below = col.subrows_mut(1, m - 1);
        if pivot.abs() >= SFMIN {
            let r = 1.0 / pivot;
            below.iter_mut().for_each(|x| *x *= r);
        } else {
            below.iter_mut().for_each(|x| *x /= pivot);
        }
        return None;
    }
    let n1 = mn / 2;
    let (mut left, mut right) = a.split_at_col_mut(n1);
    let info1 = getrf2(left.as_mut(), &mut piv[..n1], parts);
    laswp(right.as_mut(), &piv[..n1], 0);
    let (l_top, l_bot) = left.as_ref().split_at_row(n1);
    let (mut r_top, r_bot) = right.split_at_row_mut(n1);
    solve_unit_lower_triangular_in_place(l_top, r_top.as_mut(), Par::Seq);
    let mut r_bot = r_bot;
    let gemm_parts = gemm_parts(parts, r_bot.nrows(), r_bot.ncols(), n1);
    gemm_rows(r_bot.as_mut(), l_bot, r_top.as_ref(), gemm_parts);
    let info2 = getrf2(r_bot, &mut piv[n1..mn], parts);
    piv[n1..mn].iter_mut().for_each(|p| *p += n1);
    laswp(left, &piv[n1..mn], n1);
    info1.or(info2.map(|j| j + n1))
}

/// Updates the column block `c` (all `m` rows of some columns right of the
/// panel) by the factored panel `panel` (`m − j` rows: `L₁₁` unit lower on
/// top, `L₂₁` below) whose pivots are `piv` (row indices of the whole
/// matrix, at least `j`): the interchanges (`dlaswp`), `C₁ ← L₁₁⁻¹·C₁`
/// (`dtrsm`) for the `jb` rows `j..j + jb`, then `C₂ ← C₂ − L₂₁·C₁`
/// (`dgemm`) for the rows below, that last product cut into `row_parts`
/// row blocks spread with [`crate::spread::for_each`].
pub(super) fn update_block(
    c: MatMut<'_, f64>,
    panel: MatRef<'_, f64>,
    piv: &[usize],
    j: usize,
    row_parts: usize,
) {
    let jb = piv.len();
    let mut c = c;
    laswp(c.as_mut(), piv, j);
    let (_, c) = c.split_at_row_mut(j);
    let (l11, l21) = panel.split_at_row(jb);
    let l11 = l11.subcols(0, jb);
    let l21 = l21.subcols(0, jb);
    let (mut c1, c2) = c.split_at_row_mut(jb);
    solve_unit_lower_triangular_in_place(l11, c1.as_mut(), Par::Seq);
    gemm_rows(c2, l21, c1.as_ref(), row_parts);
}

/// Multiply–adds below which a GEMM piece is not cut further: about 0.1 ms
/// of one core, so that handing a piece out costs a negligible share.
const MIN_PIECE: usize = 1 << 22;

/// How many row blocks an `m × n × k` GEMM is cut into: at most `parts`,
/// none with fewer than [`MIN_PIECE`] multiply–adds.
pub(super) fn gemm_parts(parts: usize, m: usize, n: usize, k: usize) -> usize {
    (m.saturating_mul(n).saturating_mul(k) / MIN_PIECE).clamp(1, parts.max(1))
}

/// `c ← c − l·u` in `parts` blocks of rows (multiples of 8 rows), spread
/// with [`crate::spread::for_each`].
fn gemm_rows(c: MatMut<'_, f64>, l: MatRef<'_, f64>, u: MatRef<'_, f64>, parts: usize) {
    let m = c.nrows();
    if parts <= 1 || m < 16 {
        crate::gemm::sub_product(c, l, u);
        return;
    }
    let cuts = (1..parts).map(|k| (m * k / parts).next_multiple_of(8).min(m));
    let blocks = crate::spread::col_blocks_at(c.transpose_mut(), cuts);
    crate::spread::for_each(blocks, &|(ct, row0): (MatMut<'_, f64>, usize)| {
        let rows = ct.ncols();
        crate::gemm::sub_product(ct.transpose_mut(), l.subrows(row0, rows), u);
    });
}
