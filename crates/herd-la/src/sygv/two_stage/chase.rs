//! Stage 2 of the two-stage reduction: the symmetric band matrix `B`
//! (half-bandwidth `nb`) to tridiagonal `T = Q₂ᵀ·B·Q₂` by Householder bulge
//! chasing, as LAPACK's `dsytrd_sb2st` with the `dsb2st_kernels` (uplo
//! 'L'), sequential.
//!
//! Sweep `i` (one per column, `0 ≤ i < n − 1`) takes column `i` to
//! tridiagonal form and chases the bulge it creates down the band:
//!
//! * step 0: a reflector `H` of `B[i + 1..i + 1 + nb, i]` (LAPACK's kernel
//!   type 1) annihilates the column below its subdiagonal, and is applied to
//!   the diagonal block `B[s..s + l, s..s + l]` from both sides (`dlarfy`);
//! * step `k ≥ 1` (types 2 and 3): the previous `H`, applied from the right
//!   to the block under the diagonal block, fills it (the bulge); a new
//!   reflector of the block's first column annihilates that column below
//!   the band and is applied from the left to the block's other columns,
//!   then to the next diagonal block from both sides, and so on to the end
//!   of the matrix.
//!
//! Only the first column of each bulge is annihilated; the rest is removed
//! by the next sweep, so the fill never passes `2·nb − 1` diagonals: the
//! band is stored by diagonals in [`Band`] with room for them, each column
//! contiguous and each block a strided view of the same buffer.
//!
//! `O(n²·nb)` flops in loops of length at most `nb`, compiled for the CPU's
//! widest vectors (AVX-512, AVX2 + FMA, or portable), chosen at run time.
//! The reflectors are kept in [`Sweeps`] for the back-transformation.

use faer::MatRef;

use crate::qr::householder::larfg;

/// A symmetric band matrix by diagonals: entry `(r, c)` (`0 ≤ r − c <
/// ld`) at `c·ld + (r − c) = r + c·(ld − 1)`, so column `c`'s entries are
/// contiguous and any block whose entries all lie on stored diagonals is a
/// column-major view with column stride `ld − 1`.
pub(super) struct Band {
    ab: Vec<f64>,
    n: usize,
    nb: usize,
    /// Stored diagonals: `2·nb` (the band and the bulge).
    ld: usize,
}

impl Band {
    /// The band of half-bandwidth `nb ≥ 1` of the lower triangle of the
    /// square `a` (entries `0 ≤ r − c ≤ nb`; the rest of `a` is not read).
    pub(super) fn from_lower(a: MatRef<'_, f64>, nb: usize) -> Band {
        assert!(nb >= 1 && a.nrows() == a.ncols());
        let (n, ld) = (a.nrows(), 2 * nb);
        let mut ab = vec![0.0; n * ld];
        for c in 0..n {
            for r in c..n.min(c + nb + 1) {
                ab[c * ld + r - c] = a[(r, c)];
            }
        }
        Band { ab, n, nb, ld }
    }
}

/// The reflectors of the chase: sweep `i`, step `k` has `H = I − τ·v·vᵀ`
/// acting on rows `s = i + 1 + k·nb` to `s + l − 1`, `l = min(nb, n − s)`,
/// with `v[0] = 1`; `B = Q₂·T·Q₂ᵀ` with `Q₂` their product in the order of
/// the chase (sweep by sweep, each in step order).
pub(super) struct Sweeps {
    pub(super) n: usize,
    pub(super) nb: usize,
    /// Per sweep `i`: the vectors of its steps one after the other, indexed
    /// by row `− (i + 1)` (`n − 1 − i` entries).
    v: Vec<Vec<f64>>,
    /// Per sweep: `τ` of each step.
    tau: Vec<Vec<f64>>,
}

impl Sweeps {
    /// Sweep `i`'s reflector at step `k` as (first row, `v`, `τ`), or `None`
    /// past the end of the matrix.
    pub(super) fn reflector(&self, i: usize, k: usize) -> Option<(usize, &[f64], f64)> {
        let s = i + 1 + k * self.nb;
        if i + 1 >= self.n || s >= self.n {
            return None;
        }
        let l = self.nb.min(self.n - s);
        let off = s - i - 1;
        Some((s, &self.v[i][off..off + l], self.tau[i][k]))
    }
}

/// Reduces `band` to tridiagonal: its diagonal into `d` (`n`), its
/// subdiagonal into `e` (`n − 1`); returns the reflectors.
pub(super) fn chase(mut band: Band, d: &mut [f64], e: &mut [f64]) -> Sweeps {
    dispatch::<true>(&mut band, d, e)
}

/// [`chase`] for the eigenvalues only: the reflectors are not kept (each
/// sweep's vectors go through one scratch buffer instead of the `n²/2`
/// values of [`Sweeps`], 64 MB at `n = 4000`).
pub(super) fn chase_values(mut band: Band, d: &mut [f64], e: &mut [f64]) {
    dispatch::<false>(&mut band, d, e);
}

/// The sweeps, compiled for the widest vectors the CPU has; `KEEP`: keep
/// the reflectors (else the returned [`Sweeps`] is empty).
fn dispatch<const KEEP: bool>(band: &mut Band, d: &mut [f64], e: &mut [f64]) -> Sweeps {
    assert!(d.len() == band.n && e.len() == band.n.saturating_sub(1));
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU reports avx512f, the only feature the function enables.
            return unsafe { chase_avx512::<KEEP>(band, d, e) };
        }
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU reports avx2 and fma, the features the function enables.
            return unsafe { chase_avx2::<KEEP>(band, d, e) };
        }
    }
    chase_loops::<KEEP>(band, d, e)
}

/// [`chase_loops`] compiled with AVX-512.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn chase_avx512<const KEEP: bool>(band: &mut Band, d: &mut [f64], e: &mut [f64]) -> Sweeps {
    chase_loops::<KEEP>(band, d, e)
}

/// [`chase_loops`] compiled with AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn chase_avx2<const KEEP: bool>(band: &mut Band, d: &mut [f64], e: &mut [f64]) -> Sweeps {
    chase_loops::<KEEP>(band, d, e)
}

/// The sweeps (inlined into the callers above, so its loops are vectorized
/// for their features).
#[inline(always)]
fn chase_loops<const KEEP: bool>(band: &mut Band, d: &mut [f64], e: &mut [f64]) -> Sweeps {
    let (n, nb, ld1) = (band.n, band.nb, band.ld - 1);
    let ab = band.ab.as_mut_slice();
    let mut vs = Vec::with_capacity(if KEEP { n } else { 0 });
    let mut taus = Vec::with_capacity(if KEEP { n } else { 0 });
    let (mut w, mut x) = (vec![0.0; nb], vec![0.0; nb]);
    // Without `KEEP`, every sweep's vectors and `τ`s reuse these.
    let (mut scratch_v, mut scratch_t) = (vec![0.0; n.saturating_sub(1)], Vec::new());
    for i in 0..n.saturating_sub(1) {
        let (mut vi, mut ti) = if KEEP {
            (vec![0.0; n - 1 - i], Vec::with_capacity((n - 1 - i).div_ceil(nb)))
        } else {
            scratch_t.clear();
            (std::mem::take(&mut scratch_v), std::mem::take(&mut scratch_t))
        };
        // The column the step's reflector annihilates, and its first row.
        let (mut col, mut s) = (i, i + 1);
        loop {
            let l = nb.min(n - s);
            let o = s + col * ld1;
            let tau = larfg(&mut ab[o..o + l]);
            let off = s - i - 1;
            vi[off] = 1.0;
            vi[off + 1..off + l].copy_from_slice(&ab[o + 1..o + l]);
            ab[o + 1..o + l].fill(0.0);
            ti.push(tau);
            let v = &vi[off..off + l];
            if tau != 0.0 {
                // The bulge's other columns (none at step 0), then the diagonal block.
                left_apply(ab, ld1, s, col + 1..s, v, tau);
                two_sided(ab, ld1, s, v, tau, &mut w);
            }
            if s + l >= n {
                break;
            }
            if tau != 0.0 {
                right_apply(ab, ld1, s + l, nb.min(n - s - l), s, v, tau, &mut x);
            }
            col = s;
            s += l;
        }
        if KEEP {
            vs.push(vi);
            taus.push(ti);
        } else {
            (scratch_v, scratch_t) = (vi, ti);
        }
    }
    for (i, di) in d.iter_mut().enumerate() {
        *di = ab[i + i * ld1];
    }
    for (i, ei) in e.iter_mut().enumerate() {
        *ei = ab[i + 1 + i * ld1];
    }
    Sweeps { n, nb, v: vs, tau: taus }
}

/// `B ← H·B·H` on the diagonal block `B[s..s + l, s..s + l]` (lower
/// triangle), `H = I − τ·v·vᵀ`, `l = v.len()`, as LAPACK's `dlarfy`:
/// `w = τ·B·v`, `w −= ½·τ·(wᵀ·v)·v`, `B −= v·wᵀ + w·vᵀ`.
#[inline(always)]
fn two_sided(ab: &mut [f64], ld1: usize, s: usize, v: &[f64], tau: f64, w: &mut [f64]) {
    let l = v.len();
    let w = &mut w[..l];
    w.fill(0.0);
    for j in 0..l {
        let o = (s + j) * (ld1 + 1);
        let col = &ab[o..o + l - j];
        let vj = v[j];
        w[j] += dot(col, &v[j..]);
        w[j + 1..].iter_mut().zip(&col[1..]).for_each(|(wr, a)| *wr += a * vj);
    }
    w.iter_mut().for_each(|x| *x *= tau);
    let alpha = -0.5 * tau * dot(w, v);
    w.iter_mut().zip(v).for_each(|(x, vr)| *x += alpha * vr);
    for j in 0..l {
        let o = (s + j) * (ld1 + 1);
        let (vj, wj) = (v[j], w[j]);
        for ((a, vr), wr) in ab[o..o + l - j].iter_mut().zip(&v[j..]).zip(&w[j..]) {
            *a -= vr * wj + wr * vj;
        }
    }
}

/// `B ← B·H` for the block `B[r0..r0 + m, s..s + l]`: `x = B·v`,
/// `B −= τ·x·vᵀ`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn right_apply(
    ab: &mut [f64],
    ld1: usize,
    r0: usize,
    m: usize,
    s: usize,
    v: &[f64],
    tau: f64,
    x: &mut [f64],
) {
    let x = &mut x[..m];
    x.fill(0.0);
    for (j, &vj) in v.iter().enumerate() {
        let o = r0 + (s + j) * ld1;
        x.iter_mut().zip(&ab[o..o + m]).for_each(|(xr, a)| *xr += a * vj);
    }
    for (j, &vj) in v.iter().enumerate() {
        let o = r0 + (s + j) * ld1;
        let f = tau * vj;
        ab[o..o + m].iter_mut().zip(x.iter()).for_each(|(a, xr)| *a -= f * xr);
    }
}

/// `B ← H·B` for the block `B[s..s + l, cols]`: each column `b`,
/// `b −= τ·(vᵀ·b)·v`.
#[inline(always)]
fn left_apply(ab: &mut [f64], ld1: usize, s: usize, cols: std::ops::Range<usize>, v: &[f64], tau: f64) {
    let l = v.len();
    for c in cols {
        let o = s + c * ld1;
        let b = &mut ab[o..o + l];
        let f = tau * dot(b, v);
        b.iter_mut().zip(v).for_each(|(a, vr)| *a -= f * vr);
    }
}

/// Lanes of [`dot`]'s partial sums.
const LANES: usize = 8;

/// `aᵀ·b` (`a.len() == b.len()`) with [`LANES`] partial sums, which the
/// compiler keeps in one vector register (a single running sum would be a
/// chain of dependent scalar additions).
#[inline(always)]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f64 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    let mut acc = [0.0; LANES];
    for (x, y) in ca.zip(cb) {
        for t in 0..LANES {
            acc[t] += x[t] * y[t];
        }
    }
    acc.iter().sum::<f64>() + tail
}
