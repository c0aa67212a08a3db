//! `sygv` checked with LAPACK's `dsgt01` measures — `‖A·Z − B·Z·Λ‖_F /
//! (‖A‖_F·‖Z‖_F·n·ε)` and `‖Zᵀ·B·Z − I‖_F / (n·ε)`, both below 30 — and its
//! eigenvalues against faer's standard EVD of `L⁻¹·A·L⁻ᵀ` formed directly,
//! to 1e-10 relative; errors for every malformed argument.

use super::test_support::{
    check_malformed_arguments, mul, pool, spd, sym, tridiagonal_matrix, wilkinson, with_spectrum,
};
use super::*;
use crate::probe::{frobenius, Part};
use crate::random_matrix;
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Par, Side as FaerSide};

const THRESHOLD: f64 = 30.0;

/// The eigenvalues of `L⁻¹·A·L⁻ᵀ` formed directly with faer (sequential).
fn reference_eigenvalues(a: &Mat<f64>, b: &Mat<f64>) -> Vec<f64> {
    let n = a.nrows();
    if n == 0 {
        return Vec::new();
    }
    let l = b.llt(FaerSide::Lower).expect("B is SPD").L().to_owned();
    let mut x = a.clone();
    solve_lower_triangular_in_place(l.as_ref(), x.as_mut(), Par::Seq);
    let mut c = x.transpose().to_owned();
    solve_lower_triangular_in_place(l.as_ref(), c.as_mut(), Par::Seq);
    let c = Mat::from_fn(n, n, |i, j| 0.5 * (c[(i, j)] + c[(j, i)]));
    let mut w = c.self_adjoint_eigenvalues(FaerSide::Lower).expect("converges");
    w.sort_by(f64::total_cmp);
    w
}

/// `err / scale`, or `err` for a zero scale (the empty matrix).
fn ratio(err: f64, scale: f64) -> f64 {
    if scale == 0.0 {
        err
    } else {
        err / scale
    }
}

/// Runs `sygv_with` (lower) on `threads` participants and checks everything.
fn check(threads: usize, n: usize, nb: usize) {
    let (a, b) = (sym(n, 100 + n as u64), spd(n, 200 + n as u64));
    check_pencil(&a, &b, threads, nb, &format!("n {n} nb {nb} on {threads}"));
}

/// Runs `sygv_with` (lower) on the pencil `(a, b)` and checks everything.
fn check_pencil(a: &Mat<f64>, b: &Mat<f64>, threads: usize, nb: usize, what: &str) {
    check_pencil_uplo(Uplo::Lower, a, b, threads, nb, what);
}

/// Runs `sygv_with(uplo, ..)` on the pencil `(a, b)` and checks everything:
/// the triangles opposite `uplo` poisoned with NaN and left untouched, the
/// Cholesky factor, dsgt01's two ratios, the eigenvalues.
fn check_pencil_uplo(uplo: Uplo, a: &Mat<f64>, b: &Mat<f64>, threads: usize, nb: usize, what: &str) {
    let n = a.nrows();
    let outside = |i: usize, j: usize| match uplo {
        Uplo::Lower => i < j,
        Uplo::Upper => i > j,
    };
    let (mut z, mut l, mut w) = (a.clone(), b.clone(), vec![f64::NAN; n]);
    for j in 0..n {
        for i in 0..n {
            if outside(i, j) {
                z[(i, j)] = f64::NAN;
                l[(i, j)] = f64::NAN;
            }
        }
    }
    pool(threads).install(|| sygv_with(uplo, z.as_mut(), l.as_mut(), &mut w, nb)).expect("a definite pencil");
    assert!(w.windows(2).all(|p| p[0] <= p[1]), "{what}: eigenvalues not ascending");
    // b holds the factor in its uplo triangle, the other one untouched.
    for j in 0..n {
        for i in 0..n {
            if outside(i, j) {
                assert!(l[(i, j)].is_nan(), "{what}: b written at ({i}, {j}) outside {uplo:?}");
            }
        }
    }
    // L (lower) with B = L·Lᵀ: the lower triangle, or the transposed upper one (B = Uᵀ·U).
    let lower = Mat::from_fn(n, n, |i, j| match uplo {
        Uplo::Lower if i >= j => l[(i, j)],
        Uplo::Upper if i >= j => l[(j, i)],
        _ => 0.0,
    });
    let llt = mul(lower.as_ref(), lower.transpose());
    let eps = f64::EPSILON;
    let nf = n.max(1) as f64;
    let chol =
        ratio(frobenius((&llt - b).as_ref(), Part::Full), frobenius(b.as_ref(), Part::Full) * nf * eps);
    assert!(chol < THRESHOLD, "{what}: ‖L·Lᵀ − B‖ ratio {chol}");
    // A·Z − B·Z·Λ
    let az = mul(a.as_ref(), z.as_ref());
    let bz = mul(b.as_ref(), z.as_ref());
    let r = Mat::from_fn(n, n, |i, j| az[(i, j)] - bz[(i, j)] * w[j]);
    let scale = frobenius(a.as_ref(), Part::Full) * frobenius(z.as_ref(), Part::Full) * nf * eps;
    let res = ratio(frobenius(r.as_ref(), Part::Full), scale);
    assert!(res < THRESHOLD, "{what}: ‖A·Z − B·Z·Λ‖ ratio {res}");
    // Zᵀ·B·Z − I
    let ztbz = mul(z.transpose(), bz.as_ref());
    let orth = Mat::from_fn(n, n, |i, j| ztbz[(i, j)] - if i == j { 1.0 } else { 0.0 });
    let orth = frobenius(orth.as_ref(), Part::Full) / (nf * eps);
    assert!(orth < THRESHOLD, "{what}: ‖Zᵀ·B·Z − I‖ ratio {orth}");
    // The eigenvalues against the reference.
    let want = reference_eigenvalues(a, b);
    let big = want.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(f64::MIN_POSITIVE);
    for (i, (got, want)) in w.iter().zip(&want).enumerate() {
        assert!((got - want).abs() <= 1e-10 * big, "{what}: λ{i} = {got}, reference {want}");
    }
}

#[test]
fn lapack_sizes_on_two_participants() {
    for n in [0, 1, 2, 7, 64, 65, 513] {
        check(2, n, 32);
    }
}

#[test]
fn tile_sizes_that_do_and_do_not_divide() {
    check(2, 64, 64);
    check(2, 64, 16);
    check(2, 65, 64);
    check(2, 65, 1000);
    check(2, 513, 171);
    check(2, 513, 128);
}

#[test]
fn pools_of_1_2_4() {
    for threads in [1, 2, 4] {
        check(threads, 65, 16);
        check(threads, 300, 64);
    }
}

#[test]
fn default_tiles() {
    let n = 200;
    let (a, b) = (sym(n, 1), spd(n, 2));
    let (mut z, mut l, mut w) = (a.clone(), b.clone(), vec![0.0; n]);
    pool(2).install(|| sygv(z.as_mut(), l.as_mut(), &mut w)).expect("definite");
    let want = reference_eigenvalues(&a, &b);
    assert!(w.iter().zip(&want).all(|(x, y)| (x - y).abs() < 1e-10 * want[n - 1].abs().max(want[0].abs())));
}

#[test]
fn b_not_positive_definite_names_the_column() {
    let n = 65;
    let a = sym(n, 3);
    let mut b = crate::random_spd(n, 4);
    b[(37, 37)] = -1.0;
    let (mut z, mut l, mut w) = (a.clone(), b.clone(), vec![0.0; n]);
    let e = pool(2).install(|| sygv_with(Uplo::Lower, z.as_mut(), l.as_mut(), &mut w, 16));
    assert_eq!(e, Err(LaError::NotPositiveDefinite { column: 37 }));
    assert!(l == b, "b must be unchanged");
    // A zero pivot in the very first column.
    let mut b = crate::random_spd(n, 4);
    b[(0, 0)] = 0.0;
    let mut l = b.clone();
    let e = sygv(z.as_mut(), l.as_mut(), &mut w);
    assert_eq!(e, Err(LaError::NotPositiveDefinite { column: 0 }));
}

#[test]
fn non_finite_inputs() {
    let n = 20;
    let (a, b) = (sym(n, 5), spd(n, 6));
    let mut w = vec![0.0; n];
    let (mut z, mut l) = (a.clone(), b.clone());
    z[(9, 4)] = f64::NAN;
    z[(15, 12)] = f64::INFINITY;
    assert_eq!(sygv(z.as_mut(), l.as_mut(), &mut w), Err(LaError::NonFinite { row: 9, col: 4 }));
    let (mut z, mut l) = (a.clone(), b.clone());
    l[(7, 7)] = f64::NEG_INFINITY;
    assert_eq!(sygv(z.as_mut(), l.as_mut(), &mut w), Err(LaError::NonFinite { row: 7, col: 7 }));
    assert!(l[(7, 7)] == f64::NEG_INFINITY && l[(8, 7)] == b[(8, 7)], "b unchanged");
    // NaN in A and B above the diagonal is never read.
    let (mut z, mut l) = (a.clone(), b.clone());
    z[(2, 11)] = f64::NAN;
    l[(3, 19)] = f64::NAN;
    sygv(z.as_mut(), l.as_mut(), &mut w).expect("upper triangles are not read");
    assert!(w.iter().all(|x| x.is_finite()));
}

#[test]
fn malformed_arguments_are_named() {
    check_malformed_arguments(sygv, sygv_with);
}

/// Spectra that stress the tridiagonal eigensolver: tight clusters, exactly
/// repeated eigenvalues, Wilkinson's nearly-equal pairs, a zero matrix (the
/// tridiagonal matrix splits into 1 × 1 blocks). With `B = I`, `C = A`.
#[test]
fn clustered_and_repeated_eigenvalues() {
    let n = 300;
    let id = Mat::<f64>::identity(n, n);
    let clusters: Vec<f64> = (0..n).map(|i| (i / 30) as f64 + 1e-13 * i as f64).collect();
    check_pencil(&with_spectrum(&clusters, 1), &id, 2, 64, "10 clusters of 30 within 3e-12");
    let two: Vec<f64> = (0..n).map(|i| if i % 3 == 0 { -1.0 } else { 1.0 }).collect();
    check_pencil(&with_spectrum(&two, 2), &id, 2, 64, "eigenvalues ±1 only");
    let mut one_big = vec![0.0; n];
    one_big[7] = 5.0;
    check_pencil(&with_spectrum(&one_big, 3), &id, 4, 64, "rank one");
    check_pencil(&Mat::zeros(n, n), &id, 2, 64, "A = 0");
    check_pencil(&id, &id, 2, 64, "A = B = I");
    // A diagonal A with repeated entries and a non-trivial B.
    let diag = Mat::from_fn(n, n, |i, j| if i == j { (i % 4) as f64 } else { 0.0 });
    check_pencil(&diag, &spd(n, 9), 2, 64, "diagonal A, random B");
    // Wilkinson's W+: tridiagonal, d = |m − i|, e = 1, pairs equal to many digits.
    for m in [10, 100] {
        let k = 2 * m + 1;
        check_pencil(&wilkinson(m), &Mat::identity(k, k), 2, 16, &format!("Wilkinson W+ of order {k}"));
    }
}

#[test]
fn upper_triangles() {
    for n in [0, 1, 2, 7, 65, 513] {
        let (a, b) = (sym(n, 300 + n as u64), spd(n, 400 + n as u64));
        check_pencil_uplo(Uplo::Upper, &a, &b, 2, 64, &format!("upper n {n}"));
    }
    check_pencil_uplo(Uplo::Upper, &sym(100, 1), &spd(100, 2), 4, 33, "upper n 100 nb 33 on 4");
    // Errors in the upper case: coordinates of the upper triangle, the pivot's column.
    let n = 20;
    let (mut a, mut b, mut w) = (sym(n, 5), spd(n, 6), vec![0.0; n]);
    a[(3, 9)] = f64::NAN;
    let e = sygv_with(Uplo::Upper, a.as_mut(), b.as_mut(), &mut w, 8);
    assert_eq!(e, Err(LaError::NonFinite { row: 3, col: 9 }));
    let (mut a, mut b) = (sym(n, 5), crate::random_spd(n, 6));
    b[(11, 11)] = -1.0;
    let e = sygv_with(Uplo::Upper, a.as_mut(), b.as_mut(), &mut w, 8);
    assert_eq!(e, Err(LaError::NotPositiveDefinite { column: 11 }));
}

/// The tridiagonal solver (divide and conquer) alone on a random
/// tridiagonal matrix of order 1500: `‖T·V − V·Λ‖_F/(‖T‖_F·n·ε)` and
/// `‖Vᵀ·V − I‖_F/(n·ε)` below 30, eigenvalues ascending (the solver's own
/// tests are in `divide/tests.rs`).
#[test]
fn tridiagonal_solver_alone() {
    let n = 1500;
    let r = random_matrix(n, 2, 77);
    let d: Vec<f64> = (0..n).map(|i| r[(i, 0)]).collect();
    let e: Vec<f64> = (0..n - 1).map(|i| r[(i, 1)]).collect();
    let (mut w, mut v) = (vec![0.0; n], Mat::<f64>::zeros(n, n));
    pool(2).install(|| divide::eigen(&d, &e, &mut w, v.as_mut()));
    assert!(w.windows(2).all(|p| p[0] <= p[1]));
    let t = tridiagonal_matrix(&d, &e);
    let tv = mul(t.as_ref(), v.as_ref());
    let r = Mat::from_fn(n, n, |i, j| tv[(i, j)] - v[(i, j)] * w[j]);
    let eps = f64::EPSILON * n as f64;
    let res = frobenius(r.as_ref(), Part::Full) / (frobenius(t.as_ref(), Part::Full) * eps);
    let vtv = mul(v.transpose(), v.as_ref());
    let orth = Mat::from_fn(n, n, |i, j| vtv[(i, j)] - if i == j { 1.0 } else { 0.0 });
    let orth = frobenius(orth.as_ref(), Part::Full) / eps;
    assert!(res < THRESHOLD && orth < THRESHOLD, "residual ratio {res}, orthogonality ratio {orth}");
}

/// Runs the tridiagonal reduction of `a` on `threads` participants and
/// checks LAPACK's `dsyt21` measures for it: `‖A − Q·T·Qᵀ‖_F/(n·‖A‖_F·ε)`
/// and `‖Qᵀ·Q − I‖_F/(n·ε)` below 30 (`Q` formed by `ormqr` from the
/// reflectors, as `sygv`'s back-transformation applies it), and the strict
/// upper triangle of `a` untouched. Returns the `tau`s.
fn check_reduction(a: &Mat<f64>, threads: usize, what: &str) -> Vec<f64> {
    let n = a.nrows();
    let mut c = Mat::from_fn(n, n, |i, j| if i >= j { a[(i, j)] } else { f64::NAN });
    let (mut d, mut e, mut tau) =
        (vec![0.0; n], vec![0.0; n.saturating_sub(1)], vec![0.0; n.saturating_sub(1)]);
    pool(threads).install(|| tridiag::reduce(c.as_mut(), &mut d, &mut e, &mut tau));
    for j in 0..n {
        for i in 0..j {
            assert!(c[(i, j)].is_nan(), "{what}: upper triangle written at ({i}, {j})");
        }
    }
    for j in 0..n.saturating_sub(1) {
        assert_eq!(c[(j + 1, j)], e[j], "{what}: e[{j}] not on the subdiagonal");
    }
    let mut q = Mat::<f64>::identity(n, n);
    if n > 1 {
        crate::ormqr(
            crate::Side::Left,
            Op::NoTrans,
            c.as_ref().submatrix(1, 0, n - 1, n - 1),
            &tau,
            q.as_mut().subrows_mut(1, n - 1),
        )
        .expect("shapes agree");
    }
    let t = tridiagonal_matrix(&d, &e);
    let qt = mul(q.as_ref(), t.as_ref());
    let qtq = mul(qt.as_ref(), q.transpose());
    let eps = f64::EPSILON;
    let nf = n.max(1) as f64;
    let res = ratio(frobenius((&qtq - a).as_ref(), Part::Full), nf * frobenius(a.as_ref(), Part::Full) * eps);
    assert!(res < THRESHOLD, "{what}: ‖A − Q·T·Qᵀ‖ ratio {res}");
    let qq = mul(q.transpose(), q.as_ref());
    let orth = frobenius((&qq - Mat::<f64>::identity(n, n)).as_ref(), Part::Full) / (nf * eps);
    assert!(orth < THRESHOLD, "{what}: ‖Qᵀ·Q − I‖ ratio {orth}");
    tau
}

#[test]
fn tridiagonal_reduction_sizes_around_the_panel() {
    let nb = tridiag::NB;
    for n in [0, 1, 2, 3, 7, nb - 1, nb, nb + 1, 2 * nb + 1, 65, 137, 300, 513] {
        for threads in [1, 2, 4] {
            check_reduction(&sym(n, 500 + n as u64), threads, &format!("n {n} on {threads}"));
        }
    }
}

/// Columns with nothing below the subdiagonal give reflectors with
/// `τ = 0` (`H = I`): a tridiagonal matrix (all of them), a diagonal one
/// (the subdiagonal zero too), and two decoupled blocks (one `τ = 0` in the
/// middle of a panel, the trailing block then reduced on its own).
#[test]
fn tridiagonal_reduction_with_zero_columns() {
    let n = 70;
    let tri =
        Mat::from_fn(n, n, |i, j| if i.abs_diff(j) <= 1 { 1.0 + ((i + j) * 7 % 5) as f64 } else { 0.0 });
    let tau = check_reduction(&tri, 2, "tridiagonal");
    assert!(tau.iter().all(|&t| t == 0.0), "a tridiagonal matrix needs no reflector");
    let diag = Mat::from_fn(n, n, |i, j| if i == j { i as f64 - 30.0 } else { 0.0 });
    let tau = check_reduction(&diag, 2, "diagonal");
    assert!(tau.iter().all(|&t| t == 0.0));
    let (b1, b2) = (40, 230);
    let (s1, s2) = (sym(b1, 7), sym(b2, 8));
    let blocks = Mat::from_fn(b1 + b2, b1 + b2, |i, j| match (i < b1, j < b1) {
        (true, true) => s1[(i, j)],
        (false, false) => s2[(i - b1, j - b1)],
        _ => 0.0,
    });
    let tau = check_reduction(&blocks, 2, "two blocks");
    assert_eq!(tau[b1 - 1], 0.0, "the first block's last column is zero below the diagonal");
    assert!(tau[b1] != 0.0, "the second block is reduced");
}
