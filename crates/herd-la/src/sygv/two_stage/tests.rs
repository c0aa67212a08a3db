//! Each stage checked with LAPACK's `dsyt21` measures — `‖A − Q·B·Qᵀ‖_F /
//! (n·‖A‖_F·ε)` and `‖Qᵀ·Q − I‖_F / (n·ε)`, both below 30 — on random,
//! diagonal, tridiagonal and graded matrices, orders around the band
//! width; the band and the tridiagonal matrix against faer's eigenvalues of
//! `A`; the blocked back-transformation against the reflectors applied one
//! at a time.

use faer::{Mat, Side as FaerSide};

use super::back::apply_q2;
use super::chase::{chase, chase_values, Band, Sweeps};
use super::*;
use crate::sygv::test_support::{mul, pool, sym, tridiagonal_matrix};

const THRESHOLD: f64 = 30.0;

/// A random symmetric matrix graded from 1 down to about `1e-12` along
/// the diagonal: `a[i, j] = r[i, j]·g^(i + j)`.
fn graded(n: usize, seed: u64) -> Mat<f64> {
    let g = if n > 1 { 1e-6f64.powf(1.0 / (n - 1) as f64) } else { 1.0 };
    let r = sym(n, seed);
    Mat::from_fn(n, n, |i, j| r[(i, j)] * g.powi((i + j) as i32))
}

/// The symmetric matrix of the lower band (`r − c ≤ nb`) of `a`.
fn band_of(a: &Mat<f64>, nb: usize) -> Mat<f64> {
    let n = a.nrows();
    Mat::from_fn(n, n, |i, j| if i.abs_diff(j) <= nb { a[(i.max(j), i.min(j))] } else { 0.0 })
}

/// `dsyt21`'s two ratios for `a = q·b·qᵀ`: (decomposition, orthogonality).
fn ratios(a: &Mat<f64>, q: &Mat<f64>, b: &Mat<f64>) -> (f64, f64) {
    let n = a.nrows();
    if n == 0 {
        return (0.0, 0.0);
    }
    let eps = f64::EPSILON;
    let qb = mul(q.as_ref(), b.as_ref());
    let r = a - mul(qb.as_ref(), q.transpose());
    let an = a.norm_l2().max(f64::MIN_POSITIVE);
    let o = mul(q.transpose(), q.as_ref()) - Mat::<f64>::identity(n, n);
    (r.norm_l2() / (n as f64 * an * eps), o.norm_l2() / (n as f64 * eps))
}

fn eigenvalues(a: &Mat<f64>) -> Vec<f64> {
    if a.nrows() == 0 {
        return Vec::new();
    }
    let mut w = a.self_adjoint_eigenvalues(FaerSide::Lower).expect("converges");
    w.sort_by(f64::total_cmp);
    w
}

fn assert_same_spectrum(got: &[f64], want: &[f64], scale: f64, what: &str) {
    assert_eq!(got.len(), want.len());
    let tol = 1e-12 * (1.0 + scale) * (got.len().max(1) as f64).sqrt();
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= tol, "{what}: eigenvalue {g} against {w}");
    }
}

/// The matrices each stage is checked on: random, diagonal, tridiagonal,
/// graded.
fn cases(n: usize, seed: u64) -> Vec<(&'static str, Mat<f64>)> {
    let r = sym(n, seed);
    vec![
        ("random", r.clone()),
        ("diagonal", Mat::from_fn(n, n, |i, j| if i == j { r[(i, i)] } else { 0.0 })),
        ("tridiagonal", Mat::from_fn(n, n, |i, j| if i.abs_diff(j) <= 1 { r[(i, j)] } else { 0.0 })),
        ("graded", graded(n, seed + 1)),
    ]
}

/// `(n, nb)` around the band width: n = 0, 1, 2, below, at and above `nb`,
/// not multiples of it, and a few panels.
const SHAPES: &[(usize, usize)] = &[
    (0, 4),
    (1, 4),
    (2, 4),
    (3, 4),
    (4, 4),
    (5, 4),
    (6, 4),
    (11, 4),
    (13, 3),
    (30, 8),
    (37, 5),
    (70, 16),
    (90, 32),
];

/// Stage 1 alone: `A = Q₁·B·Q₁ᵀ` with `B` of half-bandwidth `nb` (nothing
/// stored beyond), `Q₁` orthogonal, `B` with `A`'s eigenvalues.
#[test]
fn stage_one_band_is_orthogonally_similar() {
    for &(n, nb) in SHAPES {
        for (kind, a) in cases(n, 10 + n as u64) {
            let what = format!("{kind} n {n} nb {nb}");
            let nbc = nb.min(n.saturating_sub(1)).max(1);
            let mut r = a.clone();
            let mut tau = vec![0.0; n.saturating_sub(nbc)];
            pool(2).install(|| band::reduce(r.as_mut(), nbc, &mut tau));
            let b = band_of(&r, nbc);
            let mut q = Mat::<f64>::identity(n, n);
            if !tau.is_empty() {
                let k = tau.len();
                ormqr(
                    Side::Left,
                    Op::NoTrans,
                    r.as_ref().submatrix(nbc, 0, n - nbc, k),
                    &tau,
                    q.as_mut().subrows_mut(nbc, n - nbc),
                )
                .unwrap();
            }
            let (res, orth) = ratios(&a, &q, &b);
            assert!(res < THRESHOLD && orth < THRESHOLD, "{what}: residual {res}, orthogonality {orth}");
            assert_same_spectrum(&eigenvalues(&b), &eigenvalues(&a), a.norm_max(), &what);
        }
    }
}

/// `Q₂` applied to the identity one reflector at a time, in reverse order
/// of the chase (the reference for the blocked [`apply_q2`]).
fn q2_unblocked(sweeps: &Sweeps) -> Mat<f64> {
    let n = sweeps.n;
    let mut q = Mat::<f64>::identity(n, n);
    for i in (0..n.saturating_sub(1)).rev() {
        let steps = (0..).take_while(|&k| sweeps.reflector(i, k).is_some()).count();
        for k in (0..steps).rev() {
            let (s, v, tau) = sweeps.reflector(i, k).unwrap();
            for c in 0..n {
                let dot: f64 = v.iter().enumerate().map(|(t, x)| x * q[(s + t, c)]).sum();
                for (t, x) in v.iter().enumerate() {
                    q[(s + t, c)] -= tau * dot * x;
                }
            }
        }
    }
    q
}

/// Stage 2 alone on band matrices: `B = Q₂·T·Q₂ᵀ`, `Q₂` orthogonal, `T`
/// with `B`'s eigenvalues, and the blocked `Q₂` equal to the reflectors
/// applied one by one.
#[test]
fn stage_two_chase_is_orthogonally_similar() {
    for &(n, nb) in SHAPES {
        for (kind, a) in cases(n, 20 + n as u64) {
            let what = format!("{kind} band n {n} nb {nb}");
            let nbc = nb.min(n.saturating_sub(1)).max(1);
            let b = band_of(&a, nbc);
            let (mut d, mut e) = (vec![0.0; n], vec![0.0; n.saturating_sub(1)]);
            let sweeps = chase(Band::from_lower(b.as_ref(), nbc), &mut d, &mut e);
            let mut q = Mat::<f64>::identity(n, n);
            pool(2).install(|| apply_q2(&sweeps, q.as_mut()));
            let t = tridiagonal_matrix(&d, &e);
            let (res, orth) = ratios(&b, &q, &t);
            assert!(res < THRESHOLD && orth < THRESHOLD, "{what}: residual {res}, orthogonality {orth}");
            assert_same_spectrum(&eigenvalues(&t), &eigenvalues(&b), b.norm_max(), &what);
            let diff = (&q - q2_unblocked(&sweeps)).norm_max();
            assert!(diff < 1e-13 * n.max(1) as f64, "{what}: blocked Q₂ differs by {diff}");
        }
    }
}

/// The chase for the eigenvalues only (no reflector kept) gives exactly the
/// tridiagonal matrix the chase with reflectors gives.
#[test]
fn chase_without_reflectors_gives_the_same_tridiagonal() {
    for &(n, nb) in SHAPES {
        for (kind, a) in cases(n, 40 + n as u64) {
            let nbc = nb.min(n.saturating_sub(1)).max(1);
            let b = band_of(&a, nbc);
            let (mut d1, mut e1) = (vec![0.0; n], vec![0.0; n.saturating_sub(1)]);
            let (mut d2, mut e2) = (d1.clone(), e1.clone());
            drop(chase(Band::from_lower(b.as_ref(), nbc), &mut d1, &mut e1));
            chase_values(Band::from_lower(b.as_ref(), nbc), &mut d2, &mut e2);
            assert_eq!((d1, e1), (d2, e2), "{kind} band n {n} nb {nb}");
        }
    }
}

/// Both stages and the back-transformation: `A = Q·T·Qᵀ`, `Q` orthogonal,
/// `T` with `A`'s eigenvalues, on 1, 2 and 3 participants.
#[test]
fn two_stages_reduce_to_tridiagonal() {
    for threads in [1, 2, 3] {
        for &(n, nb) in SHAPES {
            for (kind, a) in cases(n, 30 + n as u64) {
                let what = format!("{kind} n {n} nb {nb} on {threads}");
                let (r, q, d, e) = pool(threads).install(|| {
                    let mut r = a.clone();
                    let (mut d, mut e) = (vec![0.0; n], vec![0.0; n.saturating_sub(1)]);
                    let refl = reduce(r.as_mut(), nb, &mut d, &mut e);
                    let mut q = Mat::<f64>::identity(n, n);
                    back_transform(r.as_ref(), &refl, q.as_mut());
                    (r, q, d, e)
                });
                let t = tridiagonal_matrix(&d, &e);
                let (res, orth) = ratios(&a, &q, &t);
                assert!(res < THRESHOLD && orth < THRESHOLD, "{what}: residual {res}, orthogonality {orth}");
                assert_same_spectrum(&eigenvalues(&t), &eigenvalues(&a), a.norm_max(), &what);
                // The upper triangle is not touched.
                for j in 0..n {
                    for i in 0..j {
                        assert_eq!(r[(i, j)], a[(i, j)], "{what}: upper ({i}, {j}) written");
                    }
                }
            }
        }
    }
}

/// A larger order with the production band width, several panels and
/// reflector groups.
#[test]
fn production_band_at_a_few_hundred() {
    let n = 300;
    let a = sym(n, 77);
    let (mut r, mut d, mut e) = (a.clone(), vec![0.0; n], vec![0.0; n - 1]);
    let q = pool(2).install(|| {
        let refl = reduce(r.as_mut(), BAND, &mut d, &mut e);
        let mut q = Mat::<f64>::identity(n, n);
        back_transform(r.as_ref(), &refl, q.as_mut());
        q
    });
    let (res, orth) = ratios(&a, &q, &tridiagonal_matrix(&d, &e));
    assert!(res < THRESHOLD && orth < THRESHOLD, "residual {res}, orthogonality {orth}");
}

/// `sygv`'s eigendecomposition step with the two stages: `C = Z·Λ·Zᵀ`
/// to `dsyt21`'s thresholds, `Z` orthogonal, `Λ` ascending and equal to
/// faer's eigenvalues of `C`.
#[test]
fn eigendecomposition_through_two_stages() {
    use crate::sygv::evd::{eigen_by, Reduction};
    for (n, nb) in [(0, 8), (1, 8), (2, 8), (5, 8), (33, 8), (100, 32), (150, 16)] {
        for (kind, c) in cases(n, 40 + n as u64) {
            let what = format!("{kind} n {n} nb {nb}");
            let (mut w, mut z, mut r) = (vec![0.0; n], Mat::<f64>::zeros(n, n), c.clone());
            pool(2).install(|| eigen_by(Reduction::TwoStage(nb), r.as_mut(), &mut w, z.as_mut()));
            let lambda = Mat::from_fn(n, n, |i, j| if i == j { w[i] } else { 0.0 });
            let (res, orth) = ratios(&c, &z, &lambda);
            assert!(res < THRESHOLD && orth < THRESHOLD, "{what}: residual {res}, orthogonality {orth}");
            assert!(w.windows(2).all(|p| p[0] <= p[1]), "{what}: not ascending");
            assert_same_spectrum(&w, &eigenvalues(&c), c.norm_max(), &what);
        }
    }
}
