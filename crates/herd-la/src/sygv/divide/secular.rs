//! The secular equation of a merge: the roots `λ₀ < λ₁ < … < λ_{k−1}` of
//!
//! ```text
//! f(λ) = 1/ρ + Σⱼ zⱼ² / (dⱼ − λ)
//! ```
//!
//! for poles `d` strictly ascending, `ρ > 0` and `‖z‖₂ = 1` (the eigenvalues
//! of `diag(d) + ρ·z·zᵀ`), as LAPACK's `dlaed4` finds them (Ren-Cang Li's
//! method): root `i` lies in `(dᵢ, dᵢ₊₁)` (the last in `(d_{k−1}, d_{k−1} + ρ)`);
//! it is sought as `τ` from the **nearer pole** (the origin), so that the
//! differences `dⱼ − λᵢ = (dⱼ − d_origin) − τ` — what the eigenvectors are
//! built from — carry full relative accuracy. Each step fits `f` by a
//! rational function with the two poles around the root (or, when the
//! root is near a pole and `f` without that pole has the wrong sign, the
//! three nearest poles: `dlaed6`'s Gragg–Thornton–Warner cubic iteration)
//! and takes its zero; a step leaving the bracket `[lo, hi]` that every
//! evaluation narrows is replaced by bisection, so the iteration cannot
//! escape. It stops when `|f(λ)|` is below `ε` times LAPACK's running bound
//! of the rounding error of `f`. Where LAPACK reports failure (30 steps, or
//! `dlaed6`'s 40) this module takes a Newton step or finishes by bisection
//! in the bracket instead. The `k = 2` case has a closed form (`dlaed5`).
//!
//! Each root reads only `d`, `z`, `ρ` and writes its own column: the roots
//! of a merge are computed in parallel by the caller.

use super::EPS;

/// Rational-interpolation steps before bisection takes over (LAPACK's
/// `MAXIT` of `dlaed4`).
const MAX_STEPS: usize = 30;
/// Steps of the three-pole iteration (`dlaed6`'s `MAXIT`).
const MAX_STEPS_THREE: usize = 40;

/// Root `i` of the secular equation with `k = d.len() ≥ 3` poles; writes
/// `delta[j] = dⱼ − λᵢ` (accurate differences, see the module
/// documentation) and returns `λᵢ`.
pub(super) fn root(i: usize, d: &[f64], z: &[f64], rho: f64, delta: &mut [f64]) -> f64 {
    debug_assert!(d.len() >= 3 && i < d.len());
    if i + 1 == d.len() {
        last_root(d, z, rho, delta)
    } else {
        inner_root(i, d, z, rho, delta)
    }
}

/// `Σ_{j} zⱼ²/δⱼ` over the given range (ascending), its derivative
/// `Σ zⱼ²/δⱼ²`, and `|Σ partial sums|` (LAPACK's error term `ERRETM`).
fn lower_sums(z: &[f64], delta: &[f64]) -> (f64, f64, f64) {
    let (mut psi, mut dpsi, mut err) = (0.0, 0.0, 0.0);
    for (&zj, &dj) in z.iter().zip(delta) {
        let t = zj / dj;
        psi += zj * t;
        dpsi += t * t;
        err += psi;
    }
    (psi, dpsi, err.abs())
}

/// As [`lower_sums`] over the range taken from its end down (the poles
/// above the root; the partial sums are positive there).
fn upper_sums(z: &[f64], delta: &[f64]) -> (f64, f64, f64) {
    let (mut phi, mut dphi, mut err) = (0.0, 0.0, 0.0);
    for (&zj, &dj) in z.iter().zip(delta).rev() {
        let t = zj / dj;
        phi += zj * t;
        dphi += t * t;
        err += phi;
    }
    (phi, dphi, err)
}

/// `delta[j] = (dⱼ − origin) − τ`.
fn shift(d: &[f64], origin: f64, tau: f64, delta: &mut [f64]) {
    for (dl, &dj) in delta.iter_mut().zip(d) {
        *dl = (dj - origin) - tau;
    }
}

/// The zero `(a − √(a² − 4bc))/(2c)` of `c·η² − a·η + b` (`c ≠ 0`), in
/// the form without cancellation for the sign of `a` (LAPACK's steps).
fn stable_quadratic(a: f64, b: f64, c: f64) -> f64 {
    let s = (a * a - 4.0 * b * c).abs().sqrt();
    if a <= 0.0 {
        (a - s) / (2.0 * c)
    } else {
        2.0 * b / (a + s)
    }
}

/// The last root (in `(d_{k−1}, d_{k−1} + ρ]`), origin `d_{k−1}`.
fn last_root(d: &[f64], z: &[f64], rho: f64, delta: &mut [f64]) -> f64 {
    let k = d.len();
    let (a1, a0) = (k - 2, k - 1);
    let origin = d[a0];
    let rhoinv = 1.0 / rho;
    // Initial guess from the two last poles, the others frozen at ρ/2.
    let midpt = rho / 2.0;
    shift(d, origin, midpt, delta);
    let psi: f64 = z[..k - 2].iter().zip(&delta[..k - 2]).map(|(zj, dj)| zj * zj / dj).sum();
    let c = rhoinv + psi;
    let w = c + z[a1] * z[a1] / delta[a1] + z[a0] * z[a0] / delta[a0];
    let del = d[a0] - d[a1];
    let guess = |c: f64| {
        let a = -c * del + z[a1] * z[a1] + z[a0] * z[a0];
        let b = z[a0] * z[a0] * del;
        let s = (a * a + 4.0 * b * c).sqrt();
        if a < 0.0 {
            2.0 * b / (s - a)
        } else {
            (a + s) / (2.0 * c)
        }
    };
    let (mut tau, mut lo, mut hi);
    if w <= 0.0 {
        let temp = z[a1] * z[a1] / (del + rho) + z[a0] * z[a0] / rho;
        tau = if c <= temp { rho } else { guess(c) };
        // d_{k−1} + ρ/2 ≤ λ < d_{k−1} + τ ≤ d_{k−1} + ρ.
        (lo, hi) = (midpt, rho);
    } else {
        tau = guess(c);
        (lo, hi) = (0.0, midpt);
    }
    shift(d, origin, tau, delta);
    for step in 0..MAX_STEPS {
        let (psi, dpsi, err) = lower_sums(&z[..a0], &delta[..a0]);
        let t = z[a0] / delta[a0];
        let phi = z[a0] * t;
        let dphi = t * t;
        let erretm = 8.0 * (-phi - psi) + err - phi + rhoinv + tau.abs() * (dpsi + dphi);
        let w = rhoinv + phi + psi;
        if w.abs() <= EPS * erretm {
            return origin + tau;
        }
        narrow(w, tau, &mut lo, &mut hi);
        // Interpolate by the two last poles.
        let mut c = w - delta[a1] * dpsi - delta[a0] * dphi;
        let a = (delta[a1] + delta[a0]) * w - delta[a1] * delta[a0] * (dpsi + dphi);
        let b = delta[a1] * delta[a0] * w;
        if step == 0 && c < 0.0 {
            c = c.abs();
        }
        let mut eta = if c == 0.0 {
            -w / (dpsi + dphi)
        } else if a >= 0.0 {
            (a + (a * a - 4.0 * b * c).abs().sqrt()) / (2.0 * c)
        } else {
            2.0 * b / (a - (a * a - 4.0 * b * c).abs().sqrt())
        };
        // η must have the sign opposite to w; rounding aside, a Newton step.
        if w * eta > 0.0 {
            eta = -w / (dpsi + dphi);
        }
        eta = keep_in_bracket(tau, eta, w, lo, hi);
        delta.iter_mut().for_each(|x| *x -= eta);
        tau += eta;
    }
    origin + bisect(d, z, rhoinv, origin, lo, hi, delta)
}

/// A step `η` from `τ` leaving `[lo, hi]` replaced by half the way to the
/// bracket's end on the side the root lies (by the sign of `w`).
fn keep_in_bracket(tau: f64, eta: f64, w: f64, lo: f64, hi: f64) -> f64 {
    let next = tau + eta;
    if next > hi || next < lo || next.is_nan() {
        if w < 0.0 {
            (hi - tau) / 2.0
        } else {
            (lo - tau) / 2.0
        }
    } else {
        eta
    }
}

/// Root `i < k − 1`, in `(dᵢ, dᵢ₊₁)`.
fn inner_root(i: usize, d: &[f64], z: &[f64], rho: f64, delta: &mut [f64]) -> f64 {
    let k = d.len();
    let ip1 = i + 1;
    let rhoinv = 1.0 / rho;
    // Initial guess: the poles other than i, i + 1 frozen at the midpoint.
    let del = d[ip1] - d[i];
    let midpt = del / 2.0;
    shift(d, d[i], midpt, delta);
    let psi: f64 = z[..i].iter().zip(&delta[..i]).map(|(zj, dj)| zj * zj / dj).sum();
    let phi: f64 = z[i + 2..].iter().zip(&delta[i + 2..]).rev().map(|(zj, dj)| zj * zj / dj).sum();
    let c = rhoinv + psi + phi;
    let w = c + z[i] * z[i] / delta[i] + z[ip1] * z[ip1] / delta[ip1];
    // orgati: the root is in the lower half, measured from dᵢ; otherwise
    // from dᵢ₊₁.
    let orgati = w > 0.0;
    let (mut tau, mut lo, mut hi);
    if orgati {
        let a = c * del + z[i] * z[i] + z[ip1] * z[ip1];
        let b = z[i] * z[i] * del;
        let s = (a * a - 4.0 * b * c).abs().sqrt();
        tau = if a > 0.0 { 2.0 * b / (a + s) } else { (a - s) / (2.0 * c) };
        (lo, hi) = (0.0, midpt);
    } else {
        let a = c * del - z[i] * z[i] - z[ip1] * z[ip1];
        let b = z[ip1] * z[ip1] * del;
        let s = (a * a + 4.0 * b * c).abs().sqrt();
        tau = if a < 0.0 { 2.0 * b / (a - s) } else { -(a + s) / (2.0 * c) };
        (lo, hi) = (-midpt, 0.0);
    }
    let ii = if orgati { i } else { ip1 };
    let origin = d[ii];
    shift(d, origin, tau, delta);
    // Three-pole interpolation when f without pole ii has the sign that
    // pushes the root towards the other neighbour (never at the ends).
    let mut three = false;
    let mut switched = false;
    let mut prew = 0.0f64;
    let mut zz = [0.0; 3];
    for step in 0..MAX_STEPS {
        let (psi, mut dpsi, err_lo) = lower_sums(&z[..ii], &delta[..ii]);
        let (phi, mut dphi, err_hi) = upper_sums(&z[ii + 1..], &delta[ii + 1..]);
        let mut w = rhoinv + phi + psi;
        if step == 0 {
            three = ii != 0 && ii != k - 1 && if orgati { w < 0.0 } else { w > 0.0 };
        }
        let t = z[ii] / delta[ii];
        let dw = dpsi + dphi + t * t;
        let t = z[ii] * t;
        w += t;
        let erretm = 8.0 * (phi - psi) + err_lo + err_hi + 2.0 * rhoinv + 3.0 * t.abs() + tau.abs() * dw;
        if step == 1 {
            switched = if orgati { -w > prew.abs() / 10.0 } else { w > prew.abs() / 10.0 };
        } else if step > 1 && w * prew > 0.0 && w.abs() > prew.abs() / 10.0 {
            switched = !switched;
        }
        if w.abs() <= EPS * erretm {
            return origin + tau;
        }
        narrow(w, tau, &mut lo, &mut hi);
        let mut eta;
        if !three {
            // Interpolate by the poles i and i + 1.
            let c = if !switched {
                if orgati {
                    w - delta[ip1] * dw - (d[i] - d[ip1]) * (z[i] / delta[i]).powi(2)
                } else {
                    w - delta[i] * dw - (d[ip1] - d[i]) * (z[ip1] / delta[ip1]).powi(2)
                }
            } else {
                let t = z[ii] / delta[ii];
                if orgati {
                    dpsi += t * t;
                } else {
                    dphi += t * t;
                }
                w - delta[i] * dpsi - delta[ip1] * dphi
            };
            let mut a = (delta[i] + delta[ip1]) * w - delta[i] * delta[ip1] * dw;
            let b = delta[i] * delta[ip1] * w;
            eta = if c == 0.0 {
                if a == 0.0 {
                    a = if !switched {
                        if orgati {
                            z[i] * z[i] + delta[ip1] * delta[ip1] * (dpsi + dphi)
                        } else {
                            z[ip1] * z[ip1] + delta[i] * delta[i] * (dpsi + dphi)
                        }
                    } else {
                        delta[i] * delta[i] * dpsi + delta[ip1] * delta[ip1] * dphi
                    };
                }
                b / a
            } else {
                stable_quadratic(a, b, c)
            };
        } else {
            // Interpolate by the poles ii − 1, ii, ii + 1.
            let (iim1, iip1) = (ii - 1, ii + 1);
            let base = rhoinv + psi + phi;
            let c;
            if switched {
                c = base - delta[iim1] * dpsi - delta[iip1] * dphi;
                zz[0] = delta[iim1] * delta[iim1] * dpsi;
                zz[2] = delta[iip1] * delta[iip1] * dphi;
            } else if orgati {
                let t1 = (z[iim1] / delta[iim1]).powi(2);
                c = base - delta[iip1] * (dpsi + dphi) - (d[iim1] - d[iip1]) * t1;
                zz[0] = z[iim1] * z[iim1];
                zz[2] = delta[iip1] * delta[iip1] * ((dpsi - t1) + dphi);
            } else {
                let t1 = (z[iip1] / delta[iip1]).powi(2);
                c = base - delta[iim1] * (dpsi + dphi) - (d[iip1] - d[iim1]) * t1;
                zz[0] = delta[iim1] * delta[iim1] * (dpsi + (dphi - t1));
                zz[2] = z[iip1] * z[iip1];
            }
            zz[1] = z[ii] * z[ii];
            let poles = [delta[iim1], delta[ii], delta[iip1]];
            eta = three_poles(step == 0, orgati, c, poles, zz, w).unwrap_or(-w / dw);
        }
        if w * eta >= 0.0 {
            eta = -w / dw;
        }
        eta = keep_in_bracket(tau, eta, w, lo, hi);
        prew = w;
        delta.iter_mut().for_each(|x| *x -= eta);
        tau += eta;
    }
    origin + bisect(d, z, rhoinv, origin, lo, hi, delta)
}

/// The root by bisection of `f` in `τ ∈ [lo, hi]` from `origin` (the
/// bracket every step kept), for the rare root the interpolation did not
/// settle; leaves `delta` at the result and returns `τ`.
fn bisect(
    d: &[f64],
    z: &[f64],
    rhoinv: f64,
    origin: f64,
    mut lo: f64,
    mut hi: f64,
    delta: &mut [f64],
) -> f64 {
    for _ in 0..2100 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        shift(d, origin, mid, delta);
        let f: f64 = rhoinv + z.iter().zip(delta.iter()).map(|(zj, dj)| zj * zj / dj).sum::<f64>();
        if f <= 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let tau = 0.5 * (lo + hi);
    shift(d, origin, tau, delta);
    tau
}

/// `dlaed6`: the step `τ` from the current point to the zero of
/// `g(x) = c + Σ_{m<3} zz_m / (p_m − x)` between the poles `p₁` and `p₂`
/// (`orgati`) or `p₀` and `p₁`, where `g(0) = finit`; `None` where LAPACK
/// reports failure.
fn three_poles(first: bool, orgati: bool, c: f64, p: [f64; 3], zz: [f64; 3], finit: f64) -> Option<f64> {
    let (mut lbd, mut ubd) = if orgati { (p[1], p[2]) } else { (p[0], p[1]) };
    if finit < 0.0 {
        lbd = 0.0;
    } else {
        ubd = 0.0;
    }
    let mut tau = 0.0;
    if first {
        // Initial guess: the zero of the two-pole model, the third pole
        // frozen at the midpoint.
        let (a, b, cc) = if orgati {
            let t = (p[2] - p[1]) / 2.0;
            let cc = c + zz[0] / ((p[0] - p[1]) - t);
            (cc * (p[1] + p[2]) + zz[1] + zz[2], cc * p[1] * p[2] + zz[1] * p[2] + zz[2] * p[1], cc)
        } else {
            let t = (p[0] - p[1]) / 2.0;
            let cc = c + zz[2] / ((p[2] - p[1]) - t);
            (cc * (p[0] + p[1]) + zz[0] + zz[1], cc * p[0] * p[1] + zz[0] * p[1] + zz[1] * p[0], cc)
        };
        let s = a.abs().max(b.abs()).max(cc.abs());
        if s > 0.0 {
            let (a, b, cc) = (a / s, b / s, cc / s);
            tau = if cc == 0.0 { b / a } else { stable_quadratic(a, b, cc) };
        }
        if !(lbd..=ubd).contains(&tau) {
            tau = (lbd + ubd) / 2.0;
        }
        if p.contains(&tau) {
            tau = 0.0;
        } else {
            let g = finit + (0..3).map(|m| tau * zz[m] / (p[m] * (p[m] - tau))).sum::<f64>();
            if g <= 0.0 {
                lbd = tau;
            } else {
                ubd = tau;
            }
            if finit.abs() <= g.abs() {
                tau = 0.0;
            }
        }
    }
    // Scale up (by 2^340 or 2^680) when the root is so near a pole that
    // 1/(p − τ)³ could overflow.
    let small1 = 2f64.powi(-340);
    let small2 = small1 * small1;
    let near = if orgati {
        (p[1] - tau).abs().min((p[2] - tau).abs())
    } else {
        (p[0] - tau).abs().min((p[1] - tau).abs())
    };
    let (mut ps, mut zs, mut unscale) = (p, zz, 1.0);
    if near <= small1 {
        let (up, down) = if near <= small2 { (1.0 / small2, small2) } else { (1.0 / small1, small1) };
        for m in 0..3 {
            ps[m] *= up;
            zs[m] *= up;
        }
        tau *= up;
        lbd *= up;
        ubd *= up;
        unscale = down;
    }
    let eval = |tau: f64| {
        let (mut fc, mut err, mut df, mut ddf) = (0.0, 0.0, 0.0, 0.0);
        for m in 0..3 {
            let t = 1.0 / (ps[m] - tau);
            let t1 = zs[m] * t;
            let t2 = t1 * t;
            let t4 = t1 / ps[m];
            fc += t4;
            err += t4.abs();
            df += t2;
            ddf += t2 * t;
        }
        (finit + tau * fc, err, df, ddf)
    };
    let (mut f, _, mut df, mut ddf) = eval(tau);
    if f.abs() <= 0.0 {
        return Some(tau * unscale);
    }
    if f <= 0.0 {
        lbd = tau;
    } else {
        ubd = tau;
    }
    // Gragg–Thornton–Warner: cubically convergent, monotone.
    for _ in 1..MAX_STEPS_THREE {
        let (t1, t2) = if orgati { (ps[1] - tau, ps[2] - tau) } else { (ps[0] - tau, ps[1] - tau) };
        let a = (t1 + t2) * f - t1 * t2 * df;
        let b = t1 * t2 * f;
        let cc = f - (t1 + t2) * df + t1 * t2 * ddf;
        let s = a.abs().max(b.abs()).max(cc.abs());
        let mut eta = if s == 0.0 {
            -f / df
        } else {
            let (a, b, cc) = (a / s, b / s, cc / s);
            if cc == 0.0 {
                b / a
            } else {
                stable_quadratic(a, b, cc)
            }
        };
        if f * eta >= 0.0 {
            eta = -f / df;
        }
        tau += eta;
        if !(lbd..=ubd).contains(&tau) {
            tau = (lbd + ubd) / 2.0;
        }
        let (nf, err, ndf, nddf) = eval(tau);
        (f, df, ddf) = (nf, ndf, nddf);
        let erretm = 8.0 * (finit.abs() + tau.abs() * err) + tau.abs() * df;
        if f.abs() <= EPS * erretm {
            return Some(tau * unscale);
        }
        if f <= 0.0 {
            lbd = tau;
        } else {
            ubd = tau;
        }
    }
    None
}

/// `dlaed5`, the secular equation with two poles: root `i ∈ {0, 1}` and
/// its normalized eigenvector of `diag(d) + ρ·z·zᵀ` (in closed form).
pub(super) fn pair(i: usize, d: [f64; 2], z: [f64; 2], rho: f64) -> (f64, [f64; 2]) {
    let del = d[1] - d[0];
    let zsq = z[0] * z[0] + z[1] * z[1];
    let (lambda, v) = if i == 0 && 1.0 + 2.0 * rho * (z[1] * z[1] - z[0] * z[0]) / del > 0.0 {
        // Lower root, nearer d₀.
        let b = del + rho * zsq;
        let c = rho * z[0] * z[0] * del;
        let tau = 2.0 * c / (b + (b * b - 4.0 * c).abs().sqrt());
        (d[0] + tau, [-z[0] / tau, z[1] / (del - tau)])
    } else {
        // From d₁: the lower root nearer d₁, or the upper root.
        let b = -del + rho * zsq;
        let c = rho * z[1] * z[1] * del;
        let s = (b * b + 4.0 * c).sqrt();
        let tau = match (i, b > 0.0) {
            (0, true) => -2.0 * c / (b + s),
            (0, false) => (b - s) / 2.0,
            (_, true) => (b + s) / 2.0,
            (_, false) => 2.0 * c / (-b + s),
        };
        (d[1] + tau, [-z[0] / (del + tau), -z[1] / tau])
    };
    let norm = v[0].hypot(v[1]);
    (lambda, [v[0] / norm, v[1] / norm])
}

/// Narrows the root's bracket `[lo, hi]` (offsets from the origin) by the
/// sign of the secular function `w` at `tau`: the function increases
/// between its poles, so the root lies above a `tau` where it is not
/// positive and below one where it is.
fn narrow(w: f64, tau: f64, lo: &mut f64, hi: &mut f64) {
    if w <= 0.0 {
        *lo = lo.max(tau);
    } else {
        *hi = hi.min(tau);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_interlace_and_zero_the_equation() {
        let mut rng = crate::rng::SplitMix64::new(11);
        for k in [3usize, 4, 7, 50, 300] {
            let mut d: Vec<f64> = (0..k).map(|_| rng.next_signed()).collect();
            d.sort_by(f64::total_cmp);
            let mut z: Vec<f64> = (0..k).map(|_| rng.next_signed()).collect();
            let norm = z.iter().map(|x| x * x).sum::<f64>().sqrt();
            z.iter_mut().for_each(|x| *x /= norm);
            for rho in [1e-3, 0.7, 30.0] {
                let mut delta = vec![0.0; k];
                let mut prev = f64::NEG_INFINITY;
                for i in 0..k {
                    let l = root(i, &d, &z, rho, &mut delta);
                    assert!(l > d[i] && l > prev, "k {k} rho {rho} root {i} out of order");
                    if i + 1 < k {
                        assert!(l < d[i + 1], "k {k} rho {rho} root {i} above its pole");
                    } else {
                        assert!(l <= d[i] + rho * (1.0 + 4.0 * EPS));
                    }
                    for j in 0..k {
                        assert!((delta[j] - (d[j] - l)).abs() <= 4.0 * EPS * (d[j].abs() + l.abs()));
                    }
                    // The root is a zero of f up to its conditioning.
                    let scale: f64 =
                        z.iter().zip(&delta).map(|(zj, dj)| zj * zj / dj.abs()).sum::<f64>() + 1.0 / rho;
                    let f = 1.0 / rho + z.iter().zip(&delta).map(|(zj, dj)| zj * zj / dj).sum::<f64>();
                    assert!(f.abs() <= 1e3 * k as f64 * EPS * scale, "k {k} rho {rho} root {i}: f {f}");
                    prev = l;
                }
            }
        }
    }

    #[test]
    fn two_poles_match_the_2x2_eigenproblem() {
        for (d, z, rho) in [
            ([0.0f64, 1.0], [0.6f64, 0.8], 0.5f64),
            ([-1.0, 3.0], [0.8, -0.6], 4.0),
            ([1.0, 1.0 + 1e-9], [1e-5, 1.0], 1.0),
        ] {
            let norm = z[0].hypot(z[1]);
            let z = [z[0] / norm, z[1] / norm];
            let (a, b, c) = (d[0] + rho * z[0] * z[0], rho * z[0] * z[1], d[1] + rho * z[1] * z[1]);
            let mean = (a + c) / 2.0;
            let r = ((a - c) / 2.0).hypot(b);
            for (i, expect) in [(0, mean - r), (1, mean + r)] {
                let (l, v) = pair(i, d, z, rho);
                assert!((l - expect).abs() <= 8.0 * EPS * (mean.abs() + r), "{d:?} {i}: {l} vs {expect}");
                let res = [(a - l) * v[0] + b * v[1], b * v[0] + (c - l) * v[1]];
                assert!(res[0].hypot(res[1]) <= 16.0 * EPS * (mean.abs() + r));
                assert!((v[0].hypot(v[1]) - 1.0).abs() <= 4.0 * EPS);
            }
        }
    }
}
