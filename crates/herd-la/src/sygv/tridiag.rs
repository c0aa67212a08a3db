//! The Householder reduction of a symmetric matrix to tridiagonal form,
//! `A = Q·T·Qᵀ`, on the herd pool: LAPACK's blocked `dsytrd` with `dlatrd`
//! panels (uplo 'L'), and LAPACK's output — `d`, `e`, `tau`, the reflectors'
//! essential parts below the subdiagonal of `A` (reflector `j` is
//! `H_j = I − τ_j·v·vᵀ`, `v = (0…0, 1, A[j+2.., j])` with the 1 in row
//! `j + 1`), so that `Q = H₀·H₁···H_{n−2}` is applied by
//! [`ormqr`](crate::ormqr) on `A[1.., ..n−1]`.
//!
//! For each panel of [`NB`] columns:
//!
//! * each column is brought up to date with the panel's earlier reflectors
//!   (`A[i.., i] −= V·W[i, ..]ᵀ + W·V[i, ..]ᵀ`, small matrix–vector
//!   products on the caller), its reflector generated (faer's
//!   `make_householder_in_place`), and `w = τ·S·v` formed with the
//!   **symmetric matrix–vector product** of the trailing matrix `S` — half
//!   of the `4n³/3` flops, memory-bound. It runs on the pool ([`symv`]):
//!   the columns of `S`'s lower triangle are cut into pieces of equal area,
//!   two per participant (spread with `herd::join`), each read **once** by
//!   a fused kernel that takes four columns at a time and forms
//!   both the piece's dot products (`Sᵀ·v`, rows of its own columns) and its
//!   column updates (`S·v`, into a private vector); the private vectors are
//!   summed afterwards (over row blocks, in parallel when there are many);
//! * after the panel, the trailing matrix takes the panel's rank-`2·NB`
//!   update `S −= V·Wᵀ + W·Vᵀ` with [`syr2k`] on herd (BLAS-3, the other
//!   half of the flops).
//!
//! The kernel is written with AVX-512 and with AVX2 + FMA intrinsics (and
//! portably), the variant chosen at run time from the CPU's features, so no
//! CPU runs an instruction it lacks. (Written as plain Rust loops, LLVM
//! vectorized it across the four columns with shuffles: 1.7× slower than
//! faer's reduction on one core.)

use faer::linalg::householder::make_householder_in_place;
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};

use crate::syrk::syr2k;
use crate::{Op, Uplo};

/// Columns per panel (LAPACK's `dsytrd` block size for `dlatrd`).
pub(super) const NB: usize = 32;
/// Below this many entries of `S`'s lower triangle the product is one piece
/// on the caller: the pool's fork–join would cost more than it saves.
const SEQUENTIAL_BELOW: usize = 96 * 96;
/// Pieces of each product per participant: a participant slowed down (a
/// core shared with other processes) holds up at most one small piece, the
/// others taking the rest by work stealing.
const PIECES_PER_PARTICIPANT: usize = 2;
/// Rows below which the partial vectors are summed on the caller.
const SUM_GRAIN: usize = 4096;

/// The tridiagonal reduction of the symmetric, column-major (unit row
/// stride) `a` (`n × n`, lower triangle read): `d` (`n`) gets `T`'s
/// diagonal, `e` and `tau` (`n − 1` each) its subdiagonal and the
/// reflectors' factors; the strict lower triangle of `a` is overwritten as
/// LAPACK's `dsytrd` leaves it (`e` on the subdiagonal, the reflectors
/// below), its upper triangle is not touched.
pub(super) fn reduce(mut a: MatMut<'_, f64>, d: &mut [f64], e: &mut [f64], tau: &mut [f64]) {
    let n = a.nrows();
    assert!(a.ncols() == n && d.len() == n && e.len() == n.saturating_sub(1) && tau.len() == e.len());
    assert!(n <= 1 || a.row_stride() == 1, "tridiag::reduce needs unit row stride");
    if n == 0 {
        return;
    }
    let kernel = Kernel::detect();
    let mut wbuf = Mat::<f64>::zeros(n, NB.min(n));
    let mut scratch = Scratch::new(n, PIECES_PER_PARTICIPANT * herd::current_num_threads().max(1));
    let mut k = 0;
    while k + 1 < n {
        let b = NB.min(n - 1 - k);
        let m = n - k;
        let mut w = wbuf.as_mut().submatrix_mut(0, 0, m, b);
        let trailing = a.as_mut().submatrix_mut(k, k, m, m);
        panel(trailing, w.as_mut(), &mut e[k..k + b], &mut tau[k..k + b], kernel, &mut scratch);
        // S −= V·Wᵀ + W·Vᵀ on the trailing matrix, the panel's unit entries in place.
        let (panel_cols, mut rest) = a.as_mut().submatrix_mut(k, k, m, m).split_at_col_mut(b);
        let v = panel_cols.as_ref().subrows(b, m - b);
        let s = rest.as_mut().subrows_mut(b, m - b);
        syr2k(Uplo::Lower, Op::NoTrans, -1.0, v, w.as_ref().subrows(b, m - b), 1.0, s)
            .expect("shapes agree by construction");
        for (i, &ei) in e[k..k + b].iter().enumerate() {
            a[(k + i + 1, k + i)] = ei;
        }
        k += b;
    }
    for (i, di) in d.iter_mut().enumerate() {
        *di = a[(i, i)];
    }
}

/// `dlatrd` on the trailing matrix `a` (`m × m`) for its first `b < m`
/// columns: their reflectors (`e`, `tau`, the essential parts in place, a 1
/// left on each column's subdiagonal for the trailing update) and `W`
/// (`m × b`) with `A_next = A − V·Wᵀ − W·Vᵀ`.
fn panel(
    mut a: MatMut<'_, f64>,
    mut w: MatMut<'_, f64>,
    e: &mut [f64],
    tau: &mut [f64],
    kernel: Kernel,
    scratch: &mut Scratch,
) {
    let m = a.nrows();
    let b = e.len();
    let mut t = vec![0.0; b];
    for i in 0..b {
        if i > 0 {
            // A[i.., i] −= A[i.., ..i]·W[i, ..i]ᵀ + W[i.., ..i]·A[i, ..i]ᵀ.
            let (done, mut rest) = a.as_mut().split_at_col_mut(i);
            let col = rest.as_mut().submatrix_mut(i, 0, m - i, 1);
            let wi = w.as_ref().submatrix(i, 0, 1, i).transpose().to_owned();
            let ai = done.as_ref().submatrix(i, 0, 1, i).transpose().to_owned();
            let mut col = col;
            matmul(col.as_mut(), Accum::Add, done.as_ref().subrows(i, m - i), wi.as_ref(), -1.0, Par::Seq);
            matmul(
                col.as_mut(),
                Accum::Add,
                w.as_ref().submatrix(i, 0, m - i, i),
                ai.as_ref(),
                -1.0,
                Par::Seq,
            );
        }
        // The reflector of A[i + 1.., i].
        let (mut head, tail) = a.as_mut().col_mut(i).subrows_mut(i + 1, m - i - 1).split_at_row_mut(1);
        let head = &mut head[0];
        let info = make_householder_in_place(head, tail);
        let t_i = if info.tau.is_finite() { 1.0 / info.tau } else { 0.0 };
        tau[i] = t_i;
        e[i] = *head;
        *head = 1.0;
        let p = m - i - 1;
        let v = a.as_ref().col(i).subrows(i + 1, p);
        let v = v.try_as_col_major().expect("unit row stride").as_slice();
        // W[i + 1.., i] = τ·(S·v − V·(Wᵀ·v) − W·(Vᵀ·v)) with S = A[i + 1.., i + 1..].
        let (w_done, mut w_rest) = w.as_mut().split_at_col_mut(i);
        let wcol = w_rest.as_mut().col_mut(0).subrows_mut(i + 1, p);
        let wcol = wcol.try_as_col_major_mut().expect("W is column-major").as_slice_mut();
        if t_i == 0.0 {
            wcol.iter_mut().for_each(|x| *x = 0.0);
            continue;
        }
        symv(a.as_ref().submatrix(i + 1, i + 1, p, p), v, wcol, kernel, scratch);
        if i > 0 {
            let vm = faer::ColRef::from_slice(v).as_mat();
            let mut tm = faer::ColMut::from_slice_mut(&mut t[..i]).as_mat_mut();
            let mut wm = faer::ColMut::from_slice_mut(wcol).as_mat_mut();
            let w_old = w_done.as_ref().subrows(i + 1, p);
            let v_old = a.as_ref().submatrix(i + 1, 0, p, i);
            matmul(tm.as_mut(), Accum::Replace, w_old.transpose(), vm, 1.0, Par::Seq);
            matmul(wm.as_mut(), Accum::Add, v_old, tm.as_ref(), -1.0, Par::Seq);
            matmul(tm.as_mut(), Accum::Replace, v_old.transpose(), vm, 1.0, Par::Seq);
            matmul(wm.as_mut(), Accum::Add, w_old, tm.as_ref(), -1.0, Par::Seq);
        }
        wcol.iter_mut().for_each(|x| *x *= t_i);
        let alpha = -0.5 * t_i * wcol.iter().zip(v).map(|(x, y)| x * y).sum::<f64>();
        wcol.iter_mut().zip(v).for_each(|(x, y)| *x += alpha * y);
    }
}

/// The partial vectors of the pieces of [`symv`]: one column per piece.
struct Scratch {
    partial: Mat<f64>,
}

impl Scratch {
    fn new(n: usize, pieces: usize) -> Scratch {
        Scratch { partial: Mat::zeros(n, pieces) }
    }
}

/// `y = S·v` for the symmetric `s` (`p × p`, lower triangle read, unit row
/// stride), on the pool: column pieces of equal area of the lower triangle,
/// one per column of `scratch` (one piece when `S` is small), each read
/// once.
fn symv(s: MatRef<'_, f64>, v: &[f64], y: &mut [f64], kernel: Kernel, scratch: &mut Scratch) {
    let p = s.nrows();
    let pieces = if p * p / 2 < SEQUENTIAL_BELOW { 1 } else { scratch.partial.ncols() };
    // Piece c owns columns [start(c), start(c + 1)): equal shares of p²/2.
    let start = |c: usize| -> usize {
        if c >= pieces {
            return p;
        }
        let f = c as f64 / pieces as f64;
        ((1.0 - (1.0 - f).sqrt()) * p as f64) as usize
    };
    let partial = scratch.partial.as_mut().subrows_mut(0, p).subcols_mut(0, pieces);
    fill(s, v, partial, 0, pieces, &start, kernel);
    // y[r] = Σ over the pieces that start at or before r.
    let partial = scratch.partial.as_ref().subrows(0, p).subcols(0, pieces);
    sum_rows(partial, &start, 0, y);
}

/// Pieces `[c0, c1)` of [`symv`] into the columns of `partial` (piece `c0`
/// in column 0), split between participants with `herd::join`.
fn fill(
    s: MatRef<'_, f64>,
    v: &[f64],
    partial: MatMut<'_, f64>,
    c0: usize,
    c1: usize,
    start: &(dyn Fn(usize) -> usize + Sync),
    kernel: Kernel,
) {
    if c1 - c0 > 1 {
        let mid = c0 + (c1 - c0) / 2;
        let (l, r) = partial.split_at_col_mut(mid - c0);
        herd::join(|| fill(s, v, l, c0, mid, start, kernel), || fill(s, v, r, mid, c1, start, kernel));
        return;
    }
    let p = s.nrows();
    let (j0, j1) = (start(c0), start(c0 + 1));
    let mut partial = partial;
    let y =
        partial.as_mut().col_mut(0).try_as_col_major_mut().expect("scratch is column-major").as_slice_mut();
    y[j0..].iter_mut().for_each(|x| *x = 0.0);
    let col = |j: usize| s.col(j).try_as_col_major().expect("unit row stride").as_slice();
    let mut j = j0;
    // Four columns at a time: their top 4 × 4 triangle by hand, the rows
    // below in one pass of the kernel (four streams of `A`, `v` and `y`
    // loaded once for the four).
    while j + COLS <= j1 {
        let cols: [&[f64]; COLS] = std::array::from_fn(|c| &col(j + c)[j + COLS..]);
        let vj: [f64; COLS] = std::array::from_fn(|c| v[j + c]);
        let dots = kernel.dot_axpy(cols, &v[j + COLS..], &mut y[j + COLS..], vj);
        for c in 0..COLS {
            let a = col(j + c);
            let mut own = a[j + c] * vj[c] + dots[c];
            for r in j + c + 1..j + COLS {
                own += a[r] * v[r];
                y[r] += a[r] * vj[c];
            }
            y[j + c] += own;
        }
        j += COLS;
    }
    for j in j..j1 {
        let a = col(j);
        let mut own = a[j] * v[j];
        for r in j + 1..p {
            own += a[r] * v[r];
            y[r] += a[r] * v[j];
        }
        y[j] += own;
    }
}

/// `y[r] = Σ_c partial[r, c]` over the pieces `c` with `start(c) ≤ r`, for
/// the rows `row0..row0 + y.len()`; row blocks split with `herd::join`
/// when there are many.
fn sum_rows(partial: MatRef<'_, f64>, start: &(dyn Fn(usize) -> usize + Sync), row0: usize, y: &mut [f64]) {
    let rows = y.len();
    if rows * partial.ncols() > SUM_GRAIN * 4 && rows > SUM_GRAIN {
        let mid = rows / 2;
        let (l, r) = y.split_at_mut(mid);
        herd::join(|| sum_rows(partial, start, row0, l), || sum_rows(partial, start, row0 + mid, r));
        return;
    }
    y.iter_mut().for_each(|x| *x = 0.0);
    for c in 0..partial.ncols() {
        let from = start(c).max(row0);
        if from >= row0 + rows {
            continue;
        }
        let col = partial.col(c).try_as_col_major().expect("scratch is column-major").as_slice();
        for r in from..row0 + rows {
            y[r - row0] += col[r];
        }
    }
}

/// Columns the kernel takes at once.
const COLS: usize = 4;

/// The fused kernel `y += Σ_c cols[c]·vj[c]`, returning `cols[c]ᵀ·v` for
/// each `c`, compiled for the CPU's widest vectors.
#[derive(Clone, Copy)]
enum Kernel {
    #[cfg(target_arch = "x86_64")]
    Avx512,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    Baseline,
}

impl Kernel {
    /// The best variant this CPU runs.
    fn detect() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f") {
                return Kernel::Avx512;
            }
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                return Kernel::Avx2;
            }
        }
        Kernel::Baseline
    }

    /// `y += Σ_c cols[c]·vj[c]`; returns `[cols[c]ᵀ·v]` (all slices of
    /// one length).
    fn dot_axpy(self, cols: [&[f64]; COLS], v: &[f64], y: &mut [f64], vj: [f64; COLS]) -> [f64; COLS] {
        match self {
            // SAFETY: `detect` chose this variant only where the CPU reports avx512f.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { dot_axpy_avx512(cols, v, y, vj) },
            // SAFETY: `detect` chose this variant only where the CPU reports avx2 and fma.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { dot_axpy_avx2(cols, v, y, vj) },
            Kernel::Baseline => dot_axpy(cols, v, y, vj),
        }
    }
}

/// The kernel with AVX-512 intrinsics: eight rows of the four columns per
/// step, one vector of dot products per column, the update of `y` as a
/// sum tree (two chains of two multiply–adds).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn dot_axpy_avx512(cols: [&[f64]; COLS], v: &[f64], y: &mut [f64], vj: [f64; COLS]) -> [f64; COLS] {
    use std::arch::x86_64::*;
    const W: usize = 8;
    let n = v.len();
    let (y, cols) = (&mut y[..n], cols.map(|c| &c[..n]));
    let body = n - n % W;
    let b = vj.map(|x| _mm512_set1_pd(x));
    let mut acc = [_mm512_setzero_pd(); COLS];
    let mut i = 0;
    while i < body {
        // SAFETY: i + W ≤ body ≤ n, and `v`, `y` and every column have n
        // entries (sliced above), so each 8-wide load and store is in bounds.
        unsafe {
            let x = _mm512_loadu_pd(v.as_ptr().add(i));
            let m = cols.map(|c| _mm512_loadu_pd(c.as_ptr().add(i)));
            for c in 0..COLS {
                acc[c] = _mm512_fmadd_pd(m[c], x, acc[c]);
            }
            let t0 = _mm512_fmadd_pd(m[1], b[1], _mm512_mul_pd(m[0], b[0]));
            let t1 = _mm512_fmadd_pd(m[3], b[3], _mm512_mul_pd(m[2], b[2]));
            let yp = y.as_mut_ptr().add(i);
            _mm512_storeu_pd(yp, _mm512_add_pd(_mm512_loadu_pd(yp), _mm512_add_pd(t0, t1)));
        }
        i += W;
    }
    let mut dots = [0.0; COLS];
    for c in 0..COLS {
        let mut lanes = [0.0f64; W];
        // SAFETY: `lanes` holds exactly W = 8 f64.
        unsafe { _mm512_storeu_pd(lanes.as_mut_ptr(), acc[c]) };
        dots[c] = lanes.iter().sum::<f64>();
    }
    tail(cols, v, y, vj, body, &mut dots);
    dots
}

/// The kernel with AVX2 + FMA intrinsics, as [`dot_axpy_avx512`] with
/// four-wide vectors.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn dot_axpy_avx2(cols: [&[f64]; COLS], v: &[f64], y: &mut [f64], vj: [f64; COLS]) -> [f64; COLS] {
    use std::arch::x86_64::*;
    const W: usize = 4;
    let n = v.len();
    let (y, cols) = (&mut y[..n], cols.map(|c| &c[..n]));
    let body = n - n % W;
    let b = vj.map(|x| _mm256_set1_pd(x));
    let mut acc = [_mm256_setzero_pd(); COLS];
    let mut i = 0;
    while i < body {
        // SAFETY: i + W ≤ body ≤ n, and `v`, `y` and every column have n
        // entries (sliced above), so each 4-wide load and store is in bounds.
        unsafe {
            let x = _mm256_loadu_pd(v.as_ptr().add(i));
            let m = cols.map(|c| _mm256_loadu_pd(c.as_ptr().add(i)));
            for c in 0..COLS {
                acc[c] = _mm256_fmadd_pd(m[c], x, acc[c]);
            }
            let t0 = _mm256_fmadd_pd(m[1], b[1], _mm256_mul_pd(m[0], b[0]));
            let t1 = _mm256_fmadd_pd(m[3], b[3], _mm256_mul_pd(m[2], b[2]));
            let yp = y.as_mut_ptr().add(i);
            _mm256_storeu_pd(yp, _mm256_add_pd(_mm256_loadu_pd(yp), _mm256_add_pd(t0, t1)));
        }
        i += W;
    }
    let mut dots = [0.0; COLS];
    for c in 0..COLS {
        let mut lanes = [0.0f64; W];
        // SAFETY: `lanes` holds exactly W = 4 f64.
        unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), acc[c]) };
        dots[c] = lanes.iter().sum::<f64>();
    }
    tail(cols, v, y, vj, body, &mut dots);
    dots
}

/// Rows `from..` of the kernel, one at a time.
fn tail(
    cols: [&[f64]; COLS],
    v: &[f64],
    y: &mut [f64],
    vj: [f64; COLS],
    from: usize,
    dots: &mut [f64; COLS],
) {
    for i in from..v.len() {
        for c in 0..COLS {
            dots[c] += cols[c][i] * v[i];
            y[i] += cols[c][i] * vj[c];
        }
    }
}

/// The portable kernel (CPUs without AVX2): one row at a time.
fn dot_axpy(cols: [&[f64]; COLS], v: &[f64], y: &mut [f64], vj: [f64; COLS]) -> [f64; COLS] {
    let mut dots = [0.0; COLS];
    tail(cols, v, y, vj, 0, &mut dots);
    dots
}
#[cfg(test)]
mod kernel_tests {
    use super::*;

    /// Every variant this CPU runs, on lengths around the lane count,
    /// against the plain sums.
    #[test]
    fn variants_agree_with_the_plain_sums() {
        let mut variants = vec![Kernel::Baseline];
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                variants.push(Kernel::Avx2);
            }
            if std::is_x86_feature_detected!("avx512f") {
                variants.push(Kernel::Avx512);
            }
        }
        for n in [0, 1, 7, 8, 9, 31, 100] {
            let x = |k: usize| ((k * 37 % 101) as f64 - 50.0) / 25.0;
            let cols: Vec<Vec<f64>> = (0..COLS).map(|c| (0..n).map(|i| x(i + 7 * c)).collect()).collect();
            let v: Vec<f64> = (0..n).map(|i| x(3 * i + 1)).collect();
            let vj: [f64; COLS] = std::array::from_fn(|c| x(c + 11));
            let y0: Vec<f64> = (0..n).map(|i| x(5 * i + 2)).collect();
            for &kernel in &variants {
                let mut y = y0.clone();
                let dots = kernel.dot_axpy(std::array::from_fn(|c| cols[c].as_slice()), &v, &mut y, vj);
                for c in 0..COLS {
                    let want: f64 = (0..n).map(|i| cols[c][i] * v[i]).sum();
                    assert!((dots[c] - want).abs() <= 1e-12 * (1.0 + want.abs()), "n {n} column {c}");
                }
                for i in 0..n {
                    let want = y0[i] + (0..COLS).map(|c| cols[c][i] * vj[c]).sum::<f64>();
                    assert!((y[i] - want).abs() <= 1e-12 * (1.0 + want.abs()), "n {n} row {i}");
                }
            }
        }
    }
}
