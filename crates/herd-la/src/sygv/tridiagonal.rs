//! Eigenvalues and eigenvectors of a symmetric tridiagonal matrix `T`
//! (diagonal `d`, off-diagonal `e`) on the herd pool, as LAPACK's `dstebz`
//! and `dstein` compute them for `dsyevx`:
//!
//! * `T` is split where an off-diagonal entry is negligible
//!   (`|eᵢ| ≤ ε·√(|dᵢ|·|dᵢ₊₁|)`) into unreduced blocks, each solved alone;
//! * every eigenvalue by **bisection** on Sturm counts (the number of
//!   negative pivots of `T − x·I`), to about `2ε·‖T‖`; eigenvalues are
//!   independent, so they are computed in chunks of [`LANES`] interleaved
//!   bisections (independent dependency chains hide the division latency),
//!   the chunks spread with `herd::join`;
//! * every eigenvector by **inverse iteration** (three solves with the LU
//!   factorization with partial pivoting of `T − λ·I`, `O(m)` each, from a
//!   deterministic pseudo-random start), vectors of eigenvalues closer than
//!   `min(10⁻³, 1/m)·‖T‖` (a cluster) orthogonalized against each other (classical
//!   Gram–Schmidt twice, as faer matrix–vector products) after each solve; clusters are independent and spread
//!   with `herd::join`.
//!
//! The work is `O(n²)` (plus `O(c²·m)` for a cluster of `c` in a block of
//! `m`) against the `O(n³)` of the reduction around it, and every part is
//! parallel over eigenvalues or clusters.

use faer::linalg::matmul::matmul;
use faer::{Accum, Col, ColMut, MatMut, MatRef, Par};

use crate::rng::SplitMix64;

/// Bisections run interleaved in one loop over the matrix.
pub(super) const LANES: usize = 8;
/// Eigenvalues (or clusters' columns) below which a range is not split
/// further between participants.
const GRAIN: usize = 32;
/// Inverse-iteration solves per eigenvector.
const SOLVES: usize = 3;
/// Eigenvalues of a block of order `m` closer than `min(CLUSTER, 1/m)`
/// times its `‖T‖₁` form a cluster. LAPACK's `dstein` uses `10⁻³` alone,
/// which at `n = 4000` chains most of a random spectrum into clusters of
/// hundreds (866 measured: 7 s of Gram–Schmidt on one participant). A pair
/// of eigenvectors at relative gap `g` left unorthogonalized deviates by
/// about `ε/g` from orthogonality, at most `m·ε` with `g ≥ 1/m`: within
/// LAPACK's `‖Zᵀ·Z − I‖/(n·ε)` test.
const CLUSTER: f64 = 1e-3;

/// The eigenvalues (ascending) of the tridiagonal `(d, e)` into `w` and its
/// orthonormal eigenvectors into the columns of `v` (`n × n`, overwritten),
/// column `j` belonging to `w[j]`.
pub(super) fn eigen(d: &[f64], e: &[f64], w: &mut [f64], mut v: MatMut<'_, f64>) {
    let n = d.len();
    if n == 0 {
        return;
    }
    v.fill(0.0);
    let blocks = split(d, e);
    // Eigenvalues of every block, in the block's columns of w.
    eigenvalues(d, e, &blocks, w);
    // Work units: clusters of the blocks' eigenvalues, as column ranges.
    let mut units = Vec::new();
    for &(p, q) in &blocks {
        let threshold = CLUSTER.min(1.0 / (q - p) as f64) * one_norm(&d[p..q], &e[p..q - 1]);
        let mut c0 = p;
        for j in p + 1..=q {
            if j == q || w[j] - w[j - 1] > threshold {
                units.push(Unit { cols: (c0, j), block: (p, q) });
                c0 = j;
            }
        }
    }
    let w_ro: &[f64] = w;
    vectors(d, e, w_ro, &units, v, 0);
}

/// Unreduced diagonal blocks `[p, q)` of `T`.
fn split(d: &[f64], e: &[f64]) -> Vec<(usize, usize)> {
    let n = d.len();
    let mut blocks = Vec::new();
    let mut p = 0;
    for i in 0..n.saturating_sub(1) {
        if e[i].abs() <= f64::EPSILON * (d[i].abs() * d[i + 1].abs()).sqrt() || e[i] == 0.0 {
            blocks.push((p, i + 1));
            p = i + 1;
        }
    }
    blocks.push((p, n));
    blocks
}

/// `max_i |dᵢ| + |eᵢ₋₁| + |eᵢ|` (`‖T‖₁`), at least the smallest normal number.
fn one_norm(d: &[f64], e: &[f64]) -> f64 {
    let m = d.len();
    (0..m)
        .map(|i| {
            let l = if i > 0 { e[i - 1].abs() } else { 0.0 };
            let r = if i + 1 < m { e[i].abs() } else { 0.0 };
            d[i].abs() + l + r
        })
        .fold(f64::MIN_POSITIVE, f64::max)
}

/// A block's eigenvalues `[k0, k1)` (0-based within the block), by
/// interleaved bisection, into `w` (the block's slice).
#[derive(Clone, Copy)]
struct Block<'a> {
    d: &'a [f64],
    e2: &'a [f64],
    lo: f64,
    hi: f64,
    pivmin: f64,
    tol: f64,
}

impl Block<'_> {
    /// Eigenvalues `k0 .. k0 + w.len()` of the block into `w`.
    fn bisect(&self, k0: usize, w: &mut [f64]) {
        if w.len() > GRAIN.max(LANES) {
            let mid = (w.len() / 2).next_multiple_of(LANES).min(w.len());
            let (l, r) = w.split_at_mut(mid);
            herd::join(|| self.bisect(k0, l), || self.bisect(k0 + mid, r));
            return;
        }
        for (c, chunk) in w.chunks_mut(LANES).enumerate() {
            self.bisect_lanes(k0 + c * LANES, chunk);
        }
    }

    /// Up to `LANES` eigenvalues `k0 ..` at once.
    fn bisect_lanes(&self, k0: usize, out: &mut [f64]) {
        let lanes = out.len();
        let mut lo = [self.lo; LANES];
        let mut hi = [self.hi; LANES];
        // At most 2100 halvings are possible in f64; the width test ends far sooner.
        for _ in 0..2100 {
            let mut x = [0.0; LANES];
            let mut busy = false;
            for l in 0..lanes {
                x[l] = 0.5 * (lo[l] + hi[l]);
                let width = hi[l] - lo[l];
                let done = width <= self.tol + 2.0 * f64::EPSILON * lo[l].abs().max(hi[l].abs())
                    || x[l] <= lo[l]
                    || x[l] >= hi[l];
                busy |= !done;
            }
            if !busy {
                break;
            }
            let counts = self.sturm(&x);
            for l in 0..lanes {
                if counts[l] > k0 + l {
                    hi[l] = x[l];
                } else {
                    lo[l] = x[l];
                }
            }
        }
        for l in 0..lanes {
            out[l] = 0.5 * (lo[l] + hi[l]);
        }
    }

    /// The number of eigenvalues below each `x` (negative pivots of the
    /// `LDLᵀ` factorization of `T − x·I`).
    fn sturm(&self, x: &[f64; LANES]) -> [usize; LANES] {
        // Branch-free over fixed-size lanes, so that the compiler can keep
        // the lanes in vector registers; counts kept as f64 for the same
        // reason (exact up to 2⁵³).
        let mut count = [0.0f64; LANES];
        let mut q = [0.0; LANES];
        let pivmin = self.pivmin;
        for l in 0..LANES {
            q[l] = self.d[0] - x[l];
        }
        let step = |q: &mut [f64; LANES], count: &mut [f64; LANES]| {
            for l in 0..LANES {
                q[l] = if q[l].abs() < pivmin { -pivmin } else { q[l] };
                count[l] += if q[l] < 0.0 { 1.0 } else { 0.0 };
            }
        };
        step(&mut q, &mut count);
        for (&d, &e2) in self.d[1..].iter().zip(self.e2) {
            for l in 0..LANES {
                q[l] = d - x[l] - e2 / q[l];
            }
            step(&mut q, &mut count);
        }
        count.map(|c| c as usize)
    }
}

/// The eigenvalues of every block into `w[p..q]`, ascending within each.
fn eigenvalues(d: &[f64], e: &[f64], blocks: &[(usize, usize)], w: &mut [f64]) {
    let e2: Vec<f64> = e.iter().map(|x| x * x).collect();
    let mut rest = w;
    for &(p, q) in blocks {
        let (mine, tail) = rest.split_at_mut(q - p);
        rest = tail;
        let (d, e) = (&d[p..q], &e[p..q - 1]);
        if q - p == 1 {
            mine[0] = d[0];
            continue;
        }
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for i in 0..d.len() {
            let l = if i > 0 { e[i - 1].abs() } else { 0.0 };
            let r = if i + 1 < d.len() { e[i].abs() } else { 0.0 };
            lo = lo.min(d[i] - l - r);
            hi = hi.max(d[i] + l + r);
        }
        let norm = lo.abs().max(hi.abs());
        let emax = e2[p..q - 1].iter().fold(1.0f64, |m, &x| m.max(x));
        let pivmin = f64::MIN_POSITIVE * emax;
        let tol = 2.0 * f64::EPSILON * norm + 2.0 * pivmin;
        // Widen the Gershgorin interval so both ends strictly contain the spectrum.
        let pad = 2.0 * f64::EPSILON * norm * d.len() as f64 + 2.0 * pivmin;
        let block = Block { d, e2: &e2[p..q - 1], lo: lo - pad, hi: hi + pad, pivmin, tol };
        block.bisect(0, mine);
        // Bisection yields them ascending up to rounding; make it exact.
        mine.sort_by(f64::total_cmp);
    }
}

/// A cluster: the eigenvalue columns `cols` of the block `block` (rows and
/// columns `[p, q)` of `T`).
#[derive(Clone, Copy)]
struct Unit {
    cols: (usize, usize),
    block: (usize, usize),
}

/// The eigenvectors of `units` into `v`, whose first column is global
/// column `col0`; units split between participants with `herd::join`.
fn vectors(d: &[f64], e: &[f64], w: &[f64], units: &[Unit], v: MatMut<'_, f64>, col0: usize) {
    let cols: usize = units.iter().map(|u| u.cols.1 - u.cols.0).sum();
    if units.len() > 1 && cols > GRAIN {
        let mid = units.len() / 2;
        let (l, r) = v.split_at_col_mut(units[mid].cols.0 - col0);
        let (ul, ur) = units.split_at(mid);
        herd::join(|| vectors(d, e, w, ul, l, col0), || vectors(d, e, w, ur, r, units[mid].cols.0));
        return;
    }
    let mut v = v;
    for u in units {
        let (p, q) = u.block;
        let (c0, c1) = u.cols;
        let mut cluster = v.as_mut().subcols_mut(c0 - col0, c1 - c0).subrows_mut(p, q - p);
        cluster_vectors(&d[p..q], &e[p..q - 1], &w[c0..c1], c0 as u64, cluster.as_mut());
    }
}

/// The eigenvectors of one cluster of eigenvalues `w` of the unreduced
/// block `(d, e)` into the columns of `z` (`m × w.len()`).
fn cluster_vectors(d: &[f64], e: &[f64], w: &[f64], seed: u64, mut z: MatMut<'_, f64>) {
    let m = d.len();
    if m == 1 {
        z[(0, 0)] = 1.0;
        return;
    }
    let norm = one_norm(d, e);
    let mut lu = TridiagonalLu::new(m);
    let mut x = vec![0.0; m];
    let mut h = Col::<f64>::zeros(w.len());
    let separation = 10.0 * f64::EPSILON * norm;
    let mut previous = f64::NEG_INFINITY;
    for (k, &lambda) in w.iter().enumerate() {
        // Shifts of a cluster at least 10·ε·‖T‖ apart, as dstein makes them.
        let shift = if lambda - previous < separation { previous + separation } else { lambda };
        previous = shift;
        lu.factor(d, e, shift, norm);
        let mut rng = SplitMix64::new(0x5EED ^ seed.wrapping_add(k as u64).wrapping_mul(0x9E37_79B9));
        x.iter_mut().for_each(|v| *v = rng.next_signed());
        let (done, mut rest) = z.as_mut().split_at_col_mut(k);
        for _ in 0..SOLVES {
            scale_to_unit(&mut x);
            lu.solve(&mut x);
            if k > 0 {
                orthogonalize(done.as_ref(), &mut x, &mut h);
            }
        }
        scale_to_unit(&mut x);
        // A deterministic sign: the largest entry positive.
        let big = x.iter().copied().fold(0.0f64, |a, b| if b.abs() > a.abs() { b } else { a });
        let sign = if big < 0.0 { -1.0 } else { 1.0 };
        let mut col = rest.as_mut().col_mut(0);
        (0..m).for_each(|i| col[i] = sign * x[i]);
    }
}

/// `x ← (I − Q·Qᵀ)·x` for the orthonormal columns `q`, by classical
/// Gram–Schmidt applied twice (as accurate as modified Gram–Schmidt, and two
/// matrix–vector products with faer's vectorized kernels instead of `2k`
/// dot products and updates); `h` is workspace of at least `q.ncols()`.
fn orthogonalize(q: MatRef<'_, f64>, x: &mut [f64], h: &mut Col<f64>) {
    let k = q.ncols();
    let mut h = h.as_mut().subrows_mut(0, k);
    let mut xv = ColMut::from_slice_mut(x);
    for _ in 0..2 {
        matmul(h.as_mut(), Accum::Replace, q.transpose(), xv.as_ref(), 1.0, Par::Seq);
        matmul(xv.as_mut(), Accum::Add, q, h.as_ref(), -1.0, Par::Seq);
    }
}

/// `x / ‖x‖₂` (a unit vector `e₀` for a zero or non-finite `x`).
fn scale_to_unit(x: &mut [f64]) {
    let big = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if big == 0.0 || x.iter().any(|v| !v.is_finite()) {
        x.iter_mut().for_each(|v| *v = 0.0);
        x[0] = 1.0;
        return;
    }
    let s: f64 = x.iter().map(|v| (v / big) * (v / big)).sum::<f64>().sqrt() * big;
    x.iter_mut().for_each(|v| *v /= s);
}

/// The LU factorization with partial pivoting of a tridiagonal `T − λ·I`
/// (LAPACK's `dgttrf`): `U` has two superdiagonals.
struct TridiagonalLu {
    /// Multipliers.
    l: Vec<f64>,
    /// The reciprocals of `U`'s diagonal, then `U`'s first and second
    /// superdiagonals.
    u0: Vec<f64>,
    u1: Vec<f64>,
    u2: Vec<f64>,
    /// Whether rows `i` and `i + 1` were swapped at step `i`.
    swap: Vec<bool>,
}

impl TridiagonalLu {
    fn new(m: usize) -> Self {
        TridiagonalLu {
            l: vec![0.0; m],
            u0: vec![0.0; m],
            u1: vec![0.0; m],
            u2: vec![0.0; m],
            swap: vec![false; m],
        }
    }

    /// Factors `T − shift·I`; a pivot below `ε·norm` is replaced by `±ε·norm`, which
    /// inverse iteration tolerates (it only needs a large solution).
    fn factor(&mut self, d: &[f64], e: &[f64], shift: f64, norm: f64) {
        let m = d.len();
        let tiny = (f64::EPSILON * norm).max(f64::MIN_POSITIVE);
        let guard = |p: f64| {
            if p.abs() >= tiny {
                p
            } else if p < 0.0 {
                -tiny
            } else {
                tiny
            }
        };
        // Current row i: (a, b, c) = entries in columns i, i+1, i+2.
        let mut a = d[0] - shift;
        let mut b = if m > 1 { e[0] } else { 0.0 };
        let mut c = 0.0;
        for i in 0..m {
            if i + 1 == m {
                self.u0[i] = 1.0 / guard(a);
                self.u1[i] = 0.0;
                self.u2[i] = 0.0;
                self.swap[i] = false;
                break;
            }
            // Next row i + 1: entries in columns i, i+1, i+2.
            let (na, nb, nc) = (e[i], d[i + 1] - shift, if i + 2 < m { e[i + 1] } else { 0.0 });
            if a.abs() >= na.abs() {
                let piv = guard(a);
                let mult = na / piv;
                self.swap[i] = false;
                self.l[i] = mult;
                self.u0[i] = 1.0 / piv;
                self.u1[i] = b;
                self.u2[i] = c;
                a = nb - mult * b;
                b = nc - mult * c;
                c = 0.0;
            } else {
                let mult = a / na;
                self.swap[i] = true;
                self.l[i] = mult;
                self.u0[i] = 1.0 / guard(na);
                self.u1[i] = nb;
                self.u2[i] = nc;
                a = b - mult * nb;
                b = c - mult * nc;
                c = 0.0;
            }
        }
    }

    /// `x ← (T − shift·I)⁻¹·x`.
    fn solve(&self, x: &mut [f64]) {
        let m = x.len();
        for i in 0..m.saturating_sub(1) {
            if self.swap[i] {
                x.swap(i, i + 1);
            }
            x[i + 1] -= self.l[i] * x[i];
        }
        for i in (0..m).rev() {
            let mut s = x[i];
            if i + 1 < m {
                s -= self.u1[i] * x[i + 1];
            }
            if i + 2 < m {
                s -= self.u2[i] * x[i + 2];
            }
            x[i] = s * self.u0[i];
        }
    }
}
