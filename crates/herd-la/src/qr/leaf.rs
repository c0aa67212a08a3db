//! The panel's leaf (`dgeqr2` on at most [`PANEL_LEAF`] columns) with its
//! rows cut into pieces spread over the pool: one fork–join per column.
//!
//! The sequential leaf is what stays on one core in a panel on many
//! participants (about a third of a 4000 × 128 panel, BENCHMARKS.md "QR's
//! panel"), and a panel is on `geqrf`'s critical path. Column `i`'s
//! reflector needs `‖x‖` (`x` = column `i` below the diagonal) and, to apply
//! it to the columns `k > i` on its right, `vᵀ·C_k`, with `v = (1, x·scale)`
//! and `scale = 1/(alpha − beta)` known only once the norm is. Both come
//! from **one reduction over the unscaled column**: `s = Σ x_j²` and
//! `d_k = Σ x_j·C_k[j]` (rows `j > i`), since `vᵀ·C_k = C_k[i] + scale·d_k`.
//! So a phase is, on every piece of rows at once: apply column `i − 1`'s
//! reflector (`C_k[j] −= tau·w_k·scale·x_j`, then `x ← x·scale`, the stored
//! `v`) and sum column `i`'s `s` and `d_k` over the piece; then the caller
//! combines the pieces' sums, forms column `i`'s reflector and row `i`
//! alone, and starts the next phase. Row `i` is the caller's between phases;
//! the pieces hold the rows below it.
//!
//! Pieces are [`PIECE_ROWS`] rows on fixed boundaries and their sums are
//! added up the same tree of joins whoever runs them: the result has the
//! same bits on any number of participants (not those of the sequential
//! `geqr2`, whose `vᵀ·C_k` is summed from the scaled `v`; they agree to
//! rounding). A participant that is not free never holds the caller up: a
//! piece nobody steals runs on the caller, as any `herd::join`.
//!
//! The sum of squares is taken unscaled, as [`nrm2`](super::norm::nrm2)
//! does; where it overflowed or came near underflow (or `beta` is below
//! LAPACK's safe minimum), the rest of the leaf is left to the sequential
//! [`geqr2`], which scales as LAPACK does.

use faer::reborrow::{Reborrow, ReborrowMut};
use faer::MatMut;

use super::householder::{geqr2, PANEL_LEAF};
use super::norm::dot;

/// Rows per piece: one phase's work on a piece (an update and up to 16 dot
/// products of this length, ~30 kflop) is worth a stolen job; its rows of
/// the leaf (64 KiB) stay in the core's L2 between the two.
pub(crate) const PIECE_ROWS: usize = 512;

/// A leaf is cut into pieces from this many rows (and when the pool has more
/// than one participant).
const MIN_ROWS: usize = 2 * PIECE_ROWS;

/// A piece's (or a sum of pieces') reduction for column `c`: `[s, d_{c+1},
/// d_{c+2}, …]`, `s = Σ x_j²`, `d_k = Σ x_j·C_k[j]` over its rows `j > c`.
type Sums = [f64; PANEL_LEAF + 1];

/// Column `i`'s reflector as the pieces apply it: `C_k[j] −= f[k]·x_j` for
/// `k > i` (`f[k] = tau·w_k·scale`), then `x_j ← x_j·scale`.
struct Apply {
    i: usize,
    scale: f64,
    f: [f64; PANEL_LEAF],
}

/// Whether [`geqr2_par`] would cut an `r × w` leaf into pieces on the
/// current pool.
pub(crate) fn worth_pieces(r: usize, w: usize) -> bool {
    w <= PANEL_LEAF && w <= r && r >= MIN_ROWS && herd::current_num_threads() > 1
}

/// LAPACK's `dgeqr2` on the column-major `r × w` leaf `a` (`w ≤ r`,
/// `w ≤ PANEL_LEAF`), `tau[..w]` written: the same reflectors as
/// [`geqr2`] up to rounding, the rows cut into pieces on the pool.
pub(crate) fn geqr2_par(mut a: MatMut<'_, f64>, tau: &mut [f64]) {
    let (r, w) = (a.nrows(), a.ncols());
    assert!(w <= PANEL_LEAF && w <= r, "a leaf of {r} x {w}");
    // LAPACK's DLAMCH('S') / DLAMCH('E'), as `larfg`.
    let safmin = f64::MIN_POSITIVE / (f64::EPSILON * 0.5);
    let mut sums = over_pieces(a.rb_mut().subrows_mut(1, r - 1), 1, None, Some(0));
    for i in 0..w {
        // Column i's reflector from the sums over rows j > i.
        let s = sums[0];
        let below = r - i - 1;
        let safe = below as f64 * f64::MIN_POSITIVE / f64::EPSILON;
        let alpha = a[(i, i)];
        let beta = -alpha.hypot(s.sqrt()).copysign(alpha);
        if below == 0 || !(s.is_finite() && s >= safe) || beta.abs() < safmin || !beta.is_finite() {
            // A zero, tiny, huge or non-finite column (or the last row):
            // LAPACK's scaled path, sequentially, for the rest of the leaf.
            geqr2(a.submatrix_mut(i, i, r - i, w - i), &mut tau[i..w]);
            return;
        }
        let t = (beta - alpha) / beta;
        let scale = 1.0 / (alpha - beta);
        tau[i] = t;
        let mut f = [0.0; PANEL_LEAF];
        for k in i + 1..w {
            let wk = a[(i, k)] + scale * sums[k - i];
            a[(i, k)] -= t * wk;
            f[k] = t * wk * scale;
        }
        a[(i, i)] = beta;
        let next = (i + 1 < w).then_some(i + 1);
        sums = over_pieces(a.rb_mut().subrows_mut(i + 1, below), i + 1, Some(&Apply { i, scale, f }), next);
    }
}

/// One phase on the rows `row0..row0 + p.nrows()` of the leaf (`p`, all its
/// columns), cut at multiples of [`PIECE_ROWS`] and spread by a tree of
/// joins whose shape depends only on the rows; returns the sums for `next`.
fn over_pieces(p: MatMut<'_, f64>, row0: usize, apply: Option<&Apply>, next: Option<usize>) -> Sums {
    let end = row0 + p.nrows();
    let (first, last) = (row0 / PIECE_ROWS, end.div_ceil(PIECE_ROWS));
    if last - first <= 1 {
        return piece(p, row0, apply, next);
    }
    let mid = (first + (last - first) / 2) * PIECE_ROWS;
    let (top, bottom) = p.split_at_row_mut(mid - row0);
    let (mut x, y) =
        herd::join(|| over_pieces(top, row0, apply, next), || over_pieces(bottom, mid, apply, next));
    for (a, b) in x.iter_mut().zip(y) {
        *a += b;
    }
    x
}

/// One piece's phase, on the widest vectors the CPU has (every path gives
/// the same bits: no fused multiply-add is formed, and the sums are
/// [`dot`]'s).
fn piece(p: MatMut<'_, f64>, row0: usize, apply: Option<&Apply>, next: Option<usize>) -> Sums {
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked just above).
            return unsafe { piece_avx512(p, row0, apply, next) };
        }
        if is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { piece_avx2(p, row0, apply, next) };
        }
    }
    piece_any(p, row0, apply, next)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn piece_avx512(p: MatMut<'_, f64>, row0: usize, apply: Option<&Apply>, next: Option<usize>) -> Sums {
    piece_any(p, row0, apply, next)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn piece_avx2(p: MatMut<'_, f64>, row0: usize, apply: Option<&Apply>, next: Option<usize>) -> Sums {
    piece_any(p, row0, apply, next)
}

/// Column `j` of `p` as a slice (the leaf has unit row stride).
fn col(p: faer::MatRef<'_, f64>, j: usize) -> &[f64] {
    p.col(j).try_as_col_major().expect("qr views have unit row stride").as_slice()
}

#[inline(always)]
fn piece_any(mut p: MatMut<'_, f64>, row0: usize, apply: Option<&Apply>, next: Option<usize>) -> Sums {
    let w = p.ncols();
    if let Some(ap) = apply {
        // Every row of the piece lies below row `ap.i`.
        let (left, mut right) = p.rb_mut().split_at_col_mut(ap.i + 1);
        let x = super::householder::col_mut(left, ap.i);
        for k in ap.i + 1..w {
            let fk = ap.f[k];
            let ck = super::householder::col_mut(right.rb_mut(), k - ap.i - 1);
            for (c, xj) in ck.iter_mut().zip(x.iter()) {
                *c -= fk * *xj;
            }
        }
        for xj in x.iter_mut() {
            *xj *= ap.scale;
        }
    }
    let mut sums = [0.0; PANEL_LEAF + 1];
    if let Some(c) = next {
        // Rows `j > c`: the piece may start at row `c` itself.
        let skip = (c + 1).saturating_sub(row0).min(p.nrows());
        let q = p.rb().subrows(skip, p.nrows() - skip);
        let y = col(q, c);
        sums[0] = dot(y, y);
        for k in c + 1..w {
            sums[k - c] = dot(y, col(q, k));
        }
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random_matrix;
    use faer::Mat;

    fn on_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
        herd::Pool::builder().num_threads(threads).build().expect("a pool").install(f)
    }

    fn max_diff(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
        let mut m = 0.0f64;
        for j in 0..a.ncols() {
            for i in 0..a.nrows() {
                m = m.max((a[(i, j)] - b[(i, j)]).abs());
            }
        }
        m
    }

    /// The pieces give `geqr2`'s reflectors to rounding, on leaves whose
    /// rows are and are not a multiple of the piece, and whose width is and
    /// is not the leaf's.
    #[test]
    fn matches_the_sequential_leaf() {
        for (r, w) in [(4000, 16), (1537, 13), (2 * PIECE_ROWS, 1), (3 * PIECE_ROWS + 1, 16)] {
            let a = random_matrix(r, w, 7);
            let (mut seq, mut par) = (a.clone(), a.clone());
            let (mut ts, mut tp) = (vec![0.0; w], vec![0.0; w]);
            geqr2(seq.as_mut(), &mut ts);
            on_pool(4, || geqr2_par(par.as_mut(), &mut tp));
            let scale = (0..w).map(|j| seq[(j, j)].abs()).fold(1.0, f64::max);
            assert!(max_diff(&seq, &par) <= 1e-12 * scale, "{r} x {w}: {}", max_diff(&seq, &par));
            for (x, y) in ts.iter().zip(&tp) {
                assert!((x - y).abs() <= 1e-13, "{r} x {w}: tau {x} against {y}");
            }
        }
    }

    /// The same bits on 1, 2, 3 and 8 participants (the pieces and their
    /// tree do not depend on who runs them).
    #[test]
    fn the_same_bits_on_any_number_of_participants() {
        let a = random_matrix(3000, 16, 11);
        let run = |threads: usize| {
            let mut x = a.clone();
            let mut tau = vec![0.0; 16];
            // One participant: call it directly (`worth_pieces` says no,
            // but the pieces still run, all on the caller).
            on_pool(threads, || geqr2_par(x.as_mut(), &mut tau));
            (x, tau)
        };
        let (x1, t1) = run(1);
        for threads in [2, 3, 8] {
            let (x, t) = run(threads);
            assert!(x1.as_ref() == x.as_ref(), "{threads} participants changed the factors");
            assert!(t1.iter().zip(&t).all(|(a, b)| a.to_bits() == b.to_bits()), "{threads}: tau");
        }
    }

    /// Zero, tiny (squares underflow) and huge (squares overflow) columns go
    /// to the sequential, scaled path from there on, and still give
    /// LAPACK's reflectors.
    #[test]
    fn extreme_columns_fall_back_to_the_scaled_path() {
        let (r, w) = (2500, 8);
        for (col, factor) in [(0, 0.0), (3, 1e-170), (5, 1e170), (2, f64::NAN)] {
            let mut a = random_matrix(r, w, 5);
            for i in col + 1..r {
                a[(i, col)] *= factor;
            }
            let (mut seq, mut par) = (a.clone(), a.clone());
            let (mut ts, mut tp) = (vec![0.0; w], vec![0.0; w]);
            geqr2(seq.as_mut(), &mut ts);
            on_pool(2, || geqr2_par(par.as_mut(), &mut tp));
            if factor.is_nan() {
                assert!(tp[col].is_nan() || par[(col, col)].is_nan(), "a NaN column propagates");
                continue;
            }
            for j in 0..w {
                for i in 0..r {
                    let (x, y) = (seq[(i, j)], par[(i, j)]);
                    let tol = 1e-12 * x.abs().max(seq[(j.min(r - 1), j)].abs()).max(f64::MIN_POSITIVE);
                    assert!((x - y).abs() <= tol, "column {col} × {factor}: ({i}, {j}) {x} against {y}");
                }
            }
            for (x, y) in ts.iter().zip(&tp) {
                assert!((x - y).abs() <= 1e-13, "column {col} × {factor}: tau {x} against {y}");
            }
        }
    }
}

/// Times of the sequential leaf and of the pieces on 1 and 2 participants
/// (`LEAF_ROWS`, default 4000; `cargo test --release -p herd-la --lib
/// leaf_times -- --ignored --nocapture`).
#[cfg(test)]
#[test]
#[ignore = "a timing, not a check"]
fn leaf_times() {
    use crate::random_matrix;
    let r: usize = std::env::var("LEAF_ROWS").ok().and_then(|v| v.parse().ok()).unwrap_or(4000);
    let a = random_matrix(r, PANEL_LEAF, 3);
    let time = |f: &dyn Fn(MatMut<'_, f64>, &mut [f64])| {
        let mut best = f64::INFINITY;
        for _ in 0..200 {
            let mut x = a.clone();
            let mut tau = vec![0.0; PANEL_LEAF];
            let t0 = std::time::Instant::now();
            f(x.as_mut(), &mut tau);
            best = best.min(t0.elapsed().as_secs_f64());
        }
        best * 1e3
    };
    for threads in [1, 2] {
        let pool = herd::Pool::builder().num_threads(threads).build().expect("a pool");
        let seq = pool.install(|| time(&|x, t| geqr2(x, t)));
        let par = pool.install(|| time(&|x, t| geqr2_par(x, t)));
        println!(
            "{r} x {PANEL_LEAF}, {threads} participants: geqr2 {seq:.4} ms, pieces {par:.4} ms (best of 200)"
        );
    }
}
