//! All eigenvalues of a symmetric tridiagonal matrix `T` (diagonal `d`,
//! off-diagonal `e`) by the square-root-free implicit QL/QR iteration of
//! Pal, Walker and Kahan — the algorithm of LAPACK's `dsterf`, written
//! here from its description (Parlett, *The Symmetric Eigenvalue Problem*,
//! ch. 8, root-free QL; `dsterf`'s documentation):
//!
//! 1. **Split.** `T` is cut into unreduced blocks where
//!    `|eᵢ| ≤ ε·√|dᵢ|·√|dᵢ₊₁|` (ε = 2⁻⁵³, LAPACK's `dlamch('E')`); each
//!    block is solved on its own.
//! 2. **Scale.** A block whose largest entry `‖·‖_max` lies above
//!    `SSFMAX = √Ω/3` or below `SSFMIN = √ω/ε²` (Ω, ω the largest and the
//!    smallest normal numbers) is scaled into that range, so that neither
//!    the squares below nor the products `dᵢ·dᵢ₊₁` over- or underflow
//!    (the `/3` leaves room for the eigenvalues, at most `3·‖T‖_max` by
//!    Gershgorin), and scaled back at the end. `dsterf` scales with
//!    `dlascl` by `SSFMAX/‖·‖`; we scale by the power of two nearest below
//!    that ratio (above it for `SSFMIN`), which is exact.
//! 3. **QL or QR.** The iteration deflates eigenvalues at one end of the
//!    block and chases towards the other; for graded matrices it must
//!    deflate at the small end. `dsterf` takes QL (deflation at the top)
//!    when `|d_first| ≤ |d_last|` and QR otherwise. QR on a block is QL on
//!    the block with its rows and columns reversed, so we reverse the block
//!    in place (`O(m)`, eigenvalues are a set) and keep one QL loop.
//! 4. **Squares.** The iteration works on `eᵢ²` only: the root-free
//!    rotation below needs no `eᵢ`, which is what spares the square root
//!    of every Givens rotation in ordinary QL (LAPACK's `dsteqr`, faer's
//!    tridiagonal QR). The deflation test becomes
//!    `eᵢ² ≤ ε²·|dᵢ·dᵢ₊₁|`.
//! 5. **2 × 2 blocks** left at the top are solved in closed form (the
//!    eigenvalues of `[[a, b], [b, c]]`, LAPACK's `dlae2`: the larger in
//!    magnitude from `(a + c ± hypot(a − c, 2b))/2`, the other from the
//!    determinant, without cancellation).
//! 6. **Shift.** Otherwise one QL sweep from the bottom of the unreduced
//!    part `[l, m]` to its top with the eigenvalue of the leading 2 × 2
//!    closer to `d_l` as the shift σ (Wilkinson's choice; the root of
//!    `1 + ρ²` by a `dlapy2`-style hypot that does not overflow).
//! 7. **Root-free sweep** (Pal–Walker–Kahan): with
//!    `γ = d_m − σ`, `p = γ²` and for `i = m − 1` down to `l`:
//!    `r = p + eᵢ²`, `e²ᵢ₊₁ ← s·r`, `c = p/r`, `s = eᵢ²/r`,
//!    `γ ← c·(dᵢ − σ) − s·γ_old`, `dᵢ₊₁ ← γ_old + (dᵢ − γ)`,
//!    `p = γ²/c` (or `c_old·eᵢ²` when `c = 0`); then `e²_l = s·p`,
//!    `d_l = σ + γ`. `c` and `s` are the squares of the rotation's cosine
//!    and sine, so no square root is taken.
//! 8. **Budget.** At most `30·n` sweeps for the whole matrix
//!    (`dsterf`'s `MAXIT·N`); past it the solver stops and reports how many
//!    off-diagonal entries are still nonzero (`dsterf`'s `info > 0`).
//!
//! The eigenvalues come back ascending. Each is accurate to `O(ε·‖T‖)`
//! absolutely (the iteration is backward stable), the bound LAPACK's tests
//! hold `dsterf` to; the tests below check `c·n·ε·‖T‖₁` with `c = 4`.

/// LAPACK's `dlamch('E')`: the relative rounding error `2⁻⁵³`.
const EPS: f64 = f64::EPSILON / 2.0;

/// Sweeps allowed per row of `T` (`dsterf`'s `MAXIT`).
const MAXIT: usize = 30;

/// The upper end of the range unreduced blocks are scaled into:
/// `√Ω / 3` (Ω the largest normal number, LAPACK's `SSFMAX`).
fn ssfmax() -> f64 {
    (1.0 / f64::MIN_POSITIVE).sqrt() / 3.0
}

/// The lower end: `√ω / ε²` (ω the smallest normal number, `SSFMIN`).
fn ssfmin() -> f64 {
    f64::MIN_POSITIVE.sqrt() / (EPS * EPS)
}

/// The eigenvalues of the symmetric tridiagonal `(d, e)` (`n` and `n − 1`
/// entries) into `d`, ascending; `e` is destroyed.
///
/// `Err(k)` when the iteration ran out of its `30·n` sweeps with `k ≥ 1`
/// off-diagonal entries not yet zero (LAPACK's `info = k`): `d` then holds
/// a mix of eigenvalues and unfinished diagonal entries, in no order.
///
/// Non-finite input (a NaN or an infinity anywhere in `d` or `e`, `n ≥ 2`):
/// no iteration at all — `d` is filled with NaN and `Err(n − 1)` returned
/// (`dsterf` would sweep on the NaNs until its budget ran out and then
/// report `info > 0`). A single entry (`n = 1`) is its own eigenvalue,
/// NaN or not.
pub(super) fn sterf(d: &mut [f64], e: &mut [f64]) -> Result<(), usize> {
    sterf_with_budget(d, e, MAXIT)
}

/// [`sterf`] with `maxit · n` sweeps allowed (tests force the budget out).
fn sterf_with_budget(d: &mut [f64], e: &mut [f64], maxit: usize) -> Result<(), usize> {
    let n = d.len();
    assert_eq!(e.len(), n.saturating_sub(1), "e must have n - 1 entries");
    if n <= 1 {
        return Ok(());
    }
    if !d.iter().chain(e.iter()).all(|x| x.is_finite()) {
        d.fill(f64::NAN);
        return Err(n - 1);
    }

    // Sweeps left for the whole matrix.
    let mut budget = maxit.saturating_mul(n);
    // `start` is the first row of the part of `T` not yet split off.
    let mut start = 0;
    while start < n {
        // Step 1: the unreduced block [start, end] ends at the first
        // negligible off-diagonal entry (set to zero), or at row n − 1.
        let mut end = start;
        while end + 1 < n {
            if e[end].abs() <= d[end].abs().sqrt() * d[end + 1].abs().sqrt() * EPS {
                e[end] = 0.0;
                break;
            }
            end += 1;
        }
        let (first, last) = (start, end);
        start = end + 1;
        if first == last {
            continue; // 1 × 1: d[first] is an eigenvalue.
        }
        let converged = solve_block(&mut d[first..=last], &mut e[first..last], &mut budget);
        if !converged {
            // dsterf's count: off-diagonal entries still nonzero, in the
            // abandoned block and in the blocks never reached.
            return Err(e.iter().filter(|&&x| x != 0.0).count());
        }
    }
    d.sort_unstable_by(f64::total_cmp);
    Ok(())
}

/// The eigenvalues of one unreduced block (`m = d.len() ≥ 2` rows, `e` its
/// `m − 1` off-diagonal entries, none negligible by the split test) into
/// `d`, in any order; `e` destroyed. `false` if the budget ran out first.
fn solve_block(d: &mut [f64], e: &mut [f64], budget: &mut usize) -> bool {
    // Step 2: scale into [SSFMIN, SSFMAX] by a power of two.
    let norm = d.iter().chain(e.iter()).fold(0.0f64, |a, x| a.max(x.abs()));
    if norm == 0.0 {
        return true; // The zero matrix (already zero e's would have split).
    }
    let scale = if norm > ssfmax() {
        pow2_at_most(ssfmax() / norm)
    } else if norm < ssfmin() {
        pow2_at_least(ssfmin() / norm)
    } else {
        1.0
    };
    if scale != 1.0 {
        d.iter_mut().chain(e.iter_mut()).for_each(|x| *x *= scale);
    }

    // Step 4: from here on e holds the squares eᵢ².
    e.iter_mut().for_each(|x| *x *= *x);

    // Step 3: QL when the top is the smaller end, else QR as QL on the
    // reversed block.
    if d[d.len() - 1].abs() < d[0].abs() {
        d.reverse();
        e.reverse();
    }
    let converged = ql(d, e, budget);

    if scale != 1.0 {
        // 1/scale is a power of two as well: unscaling is exact unless
        // an eigenvalue itself over- or underflows.
        let unscale = 1.0 / scale;
        d.iter_mut().for_each(|x| *x *= unscale);
    }
    converged
}

/// Steps 5–7: QL iteration on the scaled block `(d, e²)` (`e` holding the
/// squared off-diagonal), deflating eigenvalues at the top; `false` if the
/// budget ran out.
fn ql(d: &mut [f64], e2: &mut [f64], budget: &mut usize) -> bool {
    let last = d.len() - 1;
    let eps2 = EPS * EPS;
    // Rows above `l` hold eigenvalues already.
    let mut l = 0;
    while l <= last {
        // The unreduced part [l, m]: m is the first row whose squared
        // off-diagonal below is negligible, or the last row.
        let mut m = l;
        while m < last && e2[m].abs() > eps2 * (d[m] * d[m + 1]).abs() {
            m += 1;
        }
        if m < last {
            e2[m] = 0.0;
        }
        if m == l {
            // d[l] has converged: the next row.
            l += 1;
            continue;
        }
        if m == l + 1 {
            // Step 5: a 2 × 2 at the top, in closed form.
            let (rt1, rt2) = eig2(d[l], e2[l].sqrt(), d[l + 1]);
            d[l] = rt1;
            d[l + 1] = rt2;
            e2[l] = 0.0;
            l += 2;
            continue;
        }
        if *budget == 0 {
            return false;
        }
        *budget -= 1;

        // Step 6: the shift, the eigenvalue of [[d_l, e_l], [e_l, d_{l+1}]]
        // closer to d_l: σ = d_l − e_l / (ρ + sign(ρ)·√(1 + ρ²)) with
        // ρ = (d_{l+1} − d_l) / (2·e_l).
        let p = d[l];
        let el = e2[l].sqrt();
        let rho = (d[l + 1] - p) / (2.0 * el);
        let root = hypot(rho, 1.0);
        let sigma = p - el / (rho + if rho >= 0.0 { root } else { -root });

        // Step 7: one root-free sweep from row m up to row l. `c` and `s`
        // are the squared cosine and sine of the current rotation, `gamma`
        // the shifted diagonal entry being carried up, `p` its square
        // divided by c (the squared length the next rotation annihilates).
        let mut c = 1.0;
        let mut s = 0.0;
        let mut gamma = d[m] - sigma;
        let mut p = gamma * gamma;
        for i in (l..m).rev() {
            let bb = e2[i];
            let r = p + bb;
            if i + 1 < m {
                // The squared off-diagonal below row i+1 after the previous
                // rotation.
                e2[i + 1] = s * r;
            }
            let old_c = c;
            c = p / r;
            s = bb / r;
            let old_gamma = gamma;
            let alpha = d[i];
            gamma = c * (alpha - sigma) - s * old_gamma;
            d[i + 1] = old_gamma + (alpha - gamma);
            p = if c != 0.0 { gamma * gamma / c } else { old_c * bb };
        }
        e2[l] = s * p;
        d[l] = sigma + gamma;
    }
    true
}

/// The eigenvalues of the symmetric `[[a, b], [b, c]]`, the larger in
/// magnitude first (the role of LAPACK's `dlae2`). The larger comes from
/// `(a + c ± √((a − c)² + 4b²)) / 2` with the sign of `a + c` (no
/// cancellation); the smaller from the determinant `a·c − b²` divided by
/// it, arranged so that no product overflows.
fn eig2(a: f64, b: f64, c: f64) -> (f64, f64) {
    let sum = a + c;
    let (big, small) = if a.abs() > c.abs() { (a, c) } else { (c, a) };
    // √((a − c)² + (2b)²) without over- or underflow.
    let rt = hypot(a - c, 2.0 * b);
    if sum == 0.0 {
        // Eigenvalues ±rt/2.
        return (0.5 * rt, -0.5 * rt);
    }
    let rt1 = 0.5 * (sum + sum.signum() * rt);
    // det / rt1, with det = big·small − b² formed as quotients.
    let rt2 = (big / rt1) * small - (b / rt1) * b;
    (rt1, rt2)
}

/// `√(x² + y²)` without destructive over- or underflow, the way LAPACK's
/// `dlapy2` forms it: the larger magnitude times `√(1 + (small/large)²)`.
fn hypot(x: f64, y: f64) -> f64 {
    let (x, y) = (x.abs(), y.abs());
    let (big, small) = if x >= y { (x, y) } else { (y, x) };
    if small == 0.0 || big > f64::MAX {
        // Also an infinite `big`: the sum is infinite.
        big
    } else {
        let q = small / big;
        big * (1.0 + q * q).sqrt()
    }
}

/// The largest power of two `≤ x` (`x` positive, normal).
fn pow2_at_most(x: f64) -> f64 {
    debug_assert!(x.is_normal() && x > 0.0);
    // Clearing the mantissa of a positive normal number leaves 2^⌊log₂ x⌋.
    f64::from_bits(x.to_bits() & 0xfff0_0000_0000_0000)
}

/// The smallest power of two `≥ x` (`x` positive, normal, below `Ω/2`).
fn pow2_at_least(x: f64) -> f64 {
    let low = pow2_at_most(x);
    if low == x {
        low
    } else {
        2.0 * low
    }
}

#[cfg(test)]
mod tests {
    //! `sterf` against three references — Sturm-sequence bisection (below,
    //! independent of any QR code), faer's tridiagonal QR
    //! (`tridiag_values::faer_qr`) and herd's divide and conquer
    //! (`divide::eigen`) — and against closed forms, with the absolute
    //! bound of a backward-stable tridiagonal eigensolver:
    //!
    //! `|λᵢ − refᵢ| ≤ 4 · n · ε · ‖T‖₁` for every `i` (ε = 2⁻⁵², `‖T‖₁` the
    //! largest absolute column sum, an upper bound of `‖T‖₂`).
    //!
    //! LAPACK's `dchkst` holds `dsterf` to `max |λᵢ − refᵢ| / (ulp · max |λ|)
    //! < 50` against `dsteqr`; the bound here is that with `n` in place of
    //! the constant, so the tests print the largest observed
    //! `|λᵢ − refᵢ| / (n · ε · ‖T‖₁)` too (run with `--nocapture`).

    use super::super::test_support::pool;
    use super::super::{divide, tridiag_values};
    use super::*;
    use crate::random_matrix;
    use faer::Mat;

    /// The constant `c` of the bound `c · n · ε · ‖T‖₁`.
    const C: f64 = 4.0;

    /// The orders of LAPACK's tests and more.
    const ORDERS: [usize; 9] = [0, 1, 2, 3, 7, 64, 65, 513, 1000];

    /// `‖T‖₁`: the largest absolute column sum of the tridiagonal `(d, e)`.
    fn norm1(d: &[f64], e: &[f64]) -> f64 {
        (0..d.len()).fold(0.0f64, |m, i| {
            let up = if i > 0 { e[i - 1].abs() } else { 0.0 };
            let down = if i < e.len() { e[i].abs() } else { 0.0 };
            m.max(d[i].abs() + up + down)
        })
    }

    /// `sterf` on copies of `(d, e)`: the eigenvalues, checked converged and
    /// ascending.
    fn run(d: &[f64], e: &[f64], what: &str) -> Vec<f64> {
        let (mut w, mut e2) = (d.to_vec(), e.to_vec());
        assert_eq!(sterf(&mut w, &mut e2), Ok(()), "{what}: no convergence");
        assert!(w.windows(2).all(|p| p[0] <= p[1]), "{what}: not ascending");
        w
    }

    /// Asserts `max |got − want| ≤ C · n · ε · norm` (`norm` of `T`) and
    /// returns that maximum over `n · ε · norm`.
    fn within(got: &[f64], want: &[f64], norm: f64, what: &str) -> f64 {
        assert_eq!(got.len(), want.len(), "{what}");
        let n = got.len().max(1) as f64;
        let unit = n * f64::EPSILON * norm;
        let diff = got.iter().zip(want).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(diff <= C * unit, "{what}: max |λ − ref| = {diff:e} > {C}·n·ε·‖T‖₁ = {:e}", C * unit);
        if unit > 0.0 {
            diff / unit
        } else {
            0.0
        }
    }

    /// The number of eigenvalues of `T` below `x` (Sturm count: the
    /// negative pivots of `T − x·I = L·D·Lᵀ`, a zero pivot replaced by
    /// `−pivmin` as in LAPACK's `dlaebz`).
    fn count_below(d: &[f64], e2: &[f64], x: f64, pivmin: f64) -> usize {
        let mut count = 0;
        let mut q = 1.0;
        for i in 0..d.len() {
            q = d[i] - x - if i > 0 { e2[i - 1] / q } else { 0.0 };
            if q.abs() < pivmin {
                q = -pivmin;
            }
            if q < 0.0 {
                count += 1;
            }
        }
        count
    }

    /// All eigenvalues of `T`, ascending, by bisection on the Sturm count
    /// (LAPACK's `dstebz` idea): each to within a few `ε·‖T‖` absolutely,
    /// independently of any QR code. `T`'s squares must not overflow.
    fn bisection(d: &[f64], e: &[f64]) -> Vec<f64> {
        let n = d.len();
        let e2: Vec<f64> = e.iter().map(|x| x * x).collect();
        let norm = norm1(d, e);
        let pivmin = f64::MIN_POSITIVE * e2.iter().fold(1.0f64, |m, &x| m.max(x));
        let (lo0, hi0) = (-norm - f64::MIN_POSITIVE, norm + f64::MIN_POSITIVE);
        (0..n)
            .map(|k| {
                // The smallest x with more than k eigenvalues below it.
                let (mut lo, mut hi) = (lo0, hi0);
                while hi - lo > 0.25 * f64::EPSILON * norm {
                    let mid = 0.5 * (lo + hi);
                    if mid <= lo || mid >= hi {
                        break;
                    }
                    if count_below(d, &e2, mid, pivmin) > k {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                0.5 * (lo + hi)
            })
            .collect()
    }

    /// faer's QR iteration (the solver before `sterf`), ascending.
    fn faer(d: &[f64], e: &[f64]) -> Vec<f64> {
        let mut w = vec![0.0; d.len()];
        assert!(tridiag_values::faer_qr(d, e, &mut w), "faer did not converge");
        w
    }

    /// herd's divide and conquer, ascending.
    fn divide_and_conquer(d: &[f64], e: &[f64]) -> Vec<f64> {
        let n = d.len();
        let (mut w, mut v) = (vec![0.0; n], Mat::<f64>::zeros(n, n));
        pool(2).install(|| divide::eigen(d, e, &mut w, v.as_mut()));
        w.sort_by(f64::total_cmp);
        w
    }

    /// `sterf` on `(d, e)` against the three references; the largest
    /// ratio observed. Bisection is skipped above order 1000 (its cost is
    /// `O(n²)` per digit) and when the squares of `T` would overflow.
    fn check(d: &[f64], e: &[f64], what: &str) -> f64 {
        let got = run(d, e, what);
        if d.is_empty() {
            return 0.0;
        }
        let norm = norm1(d, e);
        let mut worst = within(&got, &faer(d, e), norm, &format!("{what} vs faer QR"));
        worst = worst.max(within(&got, &divide_and_conquer(d, e), norm, &format!("{what} vs divide")));
        if d.len() <= 1000 && norm < 1e150 {
            worst = worst.max(within(&got, &bisection(d, e), norm, &format!("{what} vs bisection")));
        }
        println!("{what}: max |λ − ref| / (n·ε·‖T‖₁) = {worst:.3}");
        worst
    }

    /// A random tridiagonal of order `n`, entries in (−1, 1).
    fn random(n: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
        let r = random_matrix(n, 2, seed);
        let d = (0..n).map(|i| r[(i, 0)]).collect();
        let e = (0..n.saturating_sub(1)).map(|i| r[(i, 1)]).collect();
        (d, e)
    }

    #[test]
    fn random_tridiagonals_of_every_order() {
        for n in ORDERS {
            for seed in [1, 2] {
                let (d, e) = random(n, 100 * n as u64 + seed);
                check(&d, &e, &format!("random n {n} seed {seed}"));
            }
        }
    }

    /// The second difference `tridiag(1, −2, 1)`: eigenvalues
    /// `−2 + 2·cos(kπ/(n+1)) = −4·sin²(kπ/(2(n+1)))`, `k = 1..n`; and its
    /// negative `tridiag(−1, 2, −1)`, `4·sin²(kπ/(2(n+1)))`.
    #[test]
    fn second_difference_closed_form() {
        for n in ORDERS.into_iter().filter(|&n| n > 0) {
            let angle = |k: usize| k as f64 * std::f64::consts::PI / (2.0 * (n + 1) as f64);
            for sign in [1.0, -1.0] {
                let d = vec![-2.0 * sign; n];
                let e = vec![sign; n - 1];
                let mut want: Vec<f64> = (1..=n).map(|k| -4.0 * sign * angle(k).sin().powi(2)).collect();
                want.sort_by(f64::total_cmp);
                let what = format!("second difference n {n} sign {sign}");
                let got = run(&d, &e, &what);
                let ratio = within(&got, &want, norm1(&d, &e), &format!("{what} vs closed form"));
                println!("{what} vs closed form: {ratio:.3}");
                check(&d, &e, &what);
            }
        }
    }

    /// Wilkinson's `W₂₁⁺` (`dᵢ = |10 − i|`, `eᵢ = 1`): eigenvalues in
    /// pairs equal to many digits, the largest 10.746194182903…
    #[test]
    fn wilkinson_w21_plus() {
        let d: Vec<f64> = (0..21).map(|i| (10.0 - i as f64).abs()).collect();
        let e = vec![1.0; 20];
        check(&d, &e, "W21+");
        let w = run(&d, &e, "W21+");
        // The largest pair, Wilkinson's 10.7461941829034 and …033.
        assert!((w[20] - 10.746194182903).abs() < 1e-11, "{}", w[20]);
        assert!((w[20] - w[19]).abs() < 1e-12, "{} {}", w[20], w[19]);
        // And W+ of the larger orders the other tests use.
        for m in [50, 100, 500] {
            let d: Vec<f64> = (0..=2 * m).map(|i| (m as f64 - i as f64).abs()).collect();
            check(&d, &vec![1.0; 2 * m], &format!("W{}+", 2 * m + 1));
        }
    }

    /// Graded matrices, `dᵢ = 10⁻ⁱ`-ish down the diagonal with `eᵢ` the
    /// geometric mean of its neighbours (strongly coupled), and reversed
    /// (QL for one, QR for the other); slower grading over larger orders.
    #[test]
    fn graded_both_ways() {
        for (n, step) in [(7, 1.0), (40, 1.0), (64, 0.5), (300, 0.1), (1000, 0.03)] {
            let d: Vec<f64> = (0..n).map(|i| 10f64.powf(-step * i as f64)).collect();
            let e: Vec<f64> = (0..n - 1).map(|i| 10f64.powf(-step * (i as f64 + 0.5))).collect();
            check(&d, &e, &format!("graded down n {n} step {step}"));
            let (dr, er): (Vec<f64>, Vec<f64>) =
                (d.iter().rev().copied().collect(), e.iter().rev().copied().collect());
            check(&dr, &er, &format!("graded up n {n} step {step}"));
            // Alternating signs on the diagonal too.
            let ds: Vec<f64> = d.iter().enumerate().map(|(i, x)| if i % 2 == 0 { *x } else { -x }).collect();
            check(&ds, &e, &format!("graded ± n {n} step {step}"));
        }
    }

    /// Zero off-diagonal entries (the matrix splits), negligible ones (the
    /// split test), a diagonal and the zero matrix, 2 × 2 blocks only.
    #[test]
    fn splits_diagonal_and_zero() {
        for n in [7, 64, 65, 513] {
            let (d, mut e) = random(n, 7 * n as u64);
            for (i, x) in e.iter_mut().enumerate() {
                if i % 10 == 9 || i % 13 == 0 {
                    *x = 0.0;
                }
            }
            check(&d, &e, &format!("zeros in e, n {n}"));
            // Below the split test: |eᵢ| ≤ ε·√|dᵢ·dᵢ₊₁| for some i.
            let (d, mut e) = random(n, 8 * n as u64);
            for (i, x) in e.iter_mut().enumerate() {
                if i % 5 == 2 {
                    *x = 1e-3 * EPS * (d[i].abs().sqrt() * d[i + 1].abs().sqrt());
                }
            }
            check(&d, &e, &format!("negligible e, n {n}"));
            // Blocks of 2 × 2 only (closed form, no sweep).
            let (d, mut e) = random(n, 9 * n as u64);
            for (i, x) in e.iter_mut().enumerate() {
                if i % 2 == 1 {
                    *x = 0.0;
                }
            }
            check(&d, &e, &format!("2 × 2 blocks, n {n}"));
            let mut w = d.clone();
            let mut e0 = e.clone();
            assert_eq!(sterf_with_budget(&mut w, &mut e0, 0), Ok(()), "2 × 2 blocks need no sweep");
            // A diagonal matrix: its diagonal, sorted, exactly.
            let e = vec![0.0; n - 1];
            let mut want = d.clone();
            want.sort_by(f64::total_cmp);
            assert_eq!(run(&d, &e, "diagonal"), want);
            // The zero matrix.
            assert_eq!(run(&vec![0.0; n], &e, "zero"), vec![0.0; n]);
            // Zero diagonal: the eigenvalues of tridiag(1, 0, 1) are 2·cos(kπ/(n+1)).
            let d0 = vec![0.0; n];
            let e1 = vec![1.0; n - 1];
            let mut want: Vec<f64> =
                (1..=n).map(|k| 2.0 * (k as f64 * std::f64::consts::PI / (n + 1) as f64).cos()).collect();
            want.sort_by(f64::total_cmp);
            within(&run(&d0, &e1, "zero diagonal"), &want, 2.0, "zero diagonal vs closed form");
        }
    }

    /// `s·T` for `s` far from 1 (`1e±150`, where `dsterf`'s scaling is
    /// needed for the squares and products, and `1e±300`): the eigenvalues
    /// are `s` times those of `T`, to the same relative bound.
    #[test]
    fn huge_and_tiny_scalings() {
        for n in [2, 3, 7, 65, 513] {
            let (d, e) = random(n, 11 * n as u64);
            let base = run(&d, &e, "unscaled");
            let norm = norm1(&d, &e);
            for s in [1e150, 1e-150, 1e300, 1e-300] {
                let ds: Vec<f64> = d.iter().map(|x| x * s).collect();
                let es: Vec<f64> = e.iter().map(|x| x * s).collect();
                let what = format!("n {n} scaled by {s:e}");
                let got = run(&ds, &es, &what);
                let want: Vec<f64> = base.iter().map(|x| x * s).collect();
                let ratio = within(&got, &want, s * norm, &format!("{what} vs s·λ(T)"));
                println!("{what}: {ratio:.3}");
                if (1e-150..=1e150).contains(&s) {
                    check(&ds, &es, &what);
                }
            }
        }
        // The second difference at 1e±150 against its closed form.
        let n = 100;
        for s in [1e150, 1e-150] {
            let d = vec![2.0 * s; n];
            let e = vec![-s; n - 1];
            let want: Vec<f64> = (1..=n)
                .map(|k| 4.0 * s * (k as f64 * std::f64::consts::PI / (2.0 * (n + 1) as f64)).sin().powi(2))
                .collect();
            within(&run(&d, &e, "scaled second difference"), &want, 4.0 * s, "scaled second difference");
        }
    }

    /// NaN and infinities: no iteration, `Err(n − 1)` and all NaN (and all
    /// NaN from `tridiag_values::eigenvalues`, no fallback); a 1 × 1 NaN is
    /// its own eigenvalue.
    #[test]
    fn nan_and_infinity_do_not_hang() {
        let n = 1000;
        for (in_d, at, bad) in [
            (true, 3, f64::NAN),
            (false, 500, f64::NAN),
            (true, 999, f64::INFINITY),
            (false, 0, f64::NEG_INFINITY),
        ] {
            let (mut d, mut e) = random(n, 5);
            if in_d {
                d[at] = bad;
            } else {
                e[at] = bad;
            }
            let (mut w, mut e2) = (d.clone(), e.clone());
            assert_eq!(sterf(&mut w, &mut e2), Err(n - 1));
            assert!(w.iter().all(|x| x.is_nan()));
            let mut w = vec![0.0; n];
            tridiag_values::eigenvalues(&d, &e, &mut w);
            assert!(w.iter().all(|x| x.is_nan()));
        }
        let mut w = [f64::NAN];
        assert_eq!(sterf(&mut w, &mut []), Ok(()));
        assert!(w[0].is_nan());
    }

    /// The budget: none at all stops at the first sweep, with every
    /// off-diagonal entry of the block still nonzero reported; an ordinary
    /// run stays far from `30·n`.
    #[test]
    fn budget_exhausted_is_reported() {
        let (d, e) = random(10, 3);
        let (mut w, mut e2) = (d.clone(), e.clone());
        assert_eq!(sterf_with_budget(&mut w, &mut e2, 0), Err(9));
        // Two blocks split by a zero: the first abandoned, the second never
        // reached; the zero is not counted.
        let (d, mut e) = random(12, 4);
        e[5] = 0.0;
        let (mut w, mut e2) = (d.clone(), e.clone());
        assert_eq!(sterf_with_budget(&mut w, &mut e2, 0), Err(10));
        // A random matrix takes about 2.2 sweeps per row (measured 2.24 at
        // orders 500 and 2000): 3 per row suffice, 30 leave ample room.
        let (d, e) = random(500, 6);
        let (mut w, mut e2) = (d.clone(), e.clone());
        assert_eq!(sterf_with_budget(&mut w, &mut e2, 3), Ok(()));
    }

    /// The closed-form 2 × 2 solver.
    #[test]
    fn two_by_two() {
        let cases: [([f64; 3], [f64; 2]); 6] = [
            ([1.0, 0.0, 1.0], [1.0, 1.0]),
            ([0.0, 1.0, 0.0], [1.0, -1.0]),
            ([2.0, 1.0, 2.0], [3.0, 1.0]),
            ([-2.0, 1.0, -2.0], [-3.0, -1.0]),
            ([1e300, 1e300, 1e300], [2e300, 0.0]),
            ([4.0, 2.0, 1.0], [5.0, 0.0]),
        ];
        for ([a, b, c], [big, small]) in cases {
            let (r1, r2) = eig2(a, b, c);
            let scale = a.abs().max(b.abs()).max(c.abs());
            assert!((r1 - big).abs() <= 4.0 * f64::EPSILON * scale, "{a} {b} {c}: {r1}");
            assert!((r2 - small).abs() <= 4.0 * f64::EPSILON * scale, "{a} {b} {c}: {r2}");
        }
        assert_eq!(hypot(3.0, 4.0), 5.0);
        assert_eq!(hypot(3e300, 4e300), 5e300);
        assert_eq!(hypot(0.0, -2.0), 2.0);
        assert_eq!(pow2_at_most(3.0), 2.0);
        assert_eq!(pow2_at_least(3.0), 4.0);
        assert_eq!(pow2_at_least(0.25), 0.25);
    }
}
