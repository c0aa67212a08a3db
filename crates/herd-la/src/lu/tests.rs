//! `getrf` against an unblocked reference LU (same pivots, same factors up
//! to rounding), LAPACK's residual ratio `‖P·L·U − A‖_F / (‖A‖_F·max(m, n)·ε)`
//! (exact `O(n³)` reconstruction up to n = 1000, the `O(n²)` probe beyond),
//! singular and non-finite input, argument errors, pools of 1, 2 and 4
//! participants, and `getrs`.

use super::check::getrf_probe;
use super::kernels::laswp_back;
use super::*;
use crate::probe::{frobenius, Part};
use crate::{random_matrix, Op};
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};

/// LAPACK's testing threshold for the scaled residuals.
const THRESHOLD: f64 = 30.0;

fn pool(threads: usize) -> herd::Pool {
    herd::Pool::builder().num_threads(threads).build().expect("a test pool")
}

/// Straightforward unblocked right-looking LU with partial pivoting, the
/// pivot the first entry of largest magnitude (as `idamax`), a zero pivot
/// recorded and skipped as LAPACK's `dgetf2` does.
fn reference(a: &Mat<f64>) -> (Mat<f64>, Vec<usize>, Option<usize>) {
    let (m, n) = (a.nrows(), a.ncols());
    let mut a = a.clone();
    let mut ipiv = vec![0; m.min(n)];
    let mut info = None;
    for k in 0..m.min(n) {
        let mut p = k;
        for i in k + 1..m {
            if a[(i, k)].abs() > a[(p, k)].abs() {
                p = i;
            }
        }
        ipiv[k] = p;
        if a[(p, k)] == 0.0 {
            info = info.or(Some(k));
            continue;
        }
        for j in 0..n {
            let t = a[(k, j)];
            a[(k, j)] = a[(p, j)];
            a[(p, j)] = t;
        }
        for i in k + 1..m {
            a[(i, k)] /= a[(k, k)];
        }
        for j in k + 1..n {
            for i in k + 1..m {
                a[(i, j)] -= a[(i, k)] * a[(k, j)];
            }
        }
    }
    (a, ipiv, info)
}

/// Factors a copy of `a` with panels of `nb` (the default when `None`) and
/// `schedule`.
fn factor_with(
    a: &Mat<f64>,
    nb: Option<usize>,
    schedule: LuSchedule,
) -> (Mat<f64>, Vec<usize>, Option<usize>) {
    let mut lu = a.clone();
    let mut ipiv = vec![usize::MAX; a.nrows().min(a.ncols())];
    let settings = nb.map_or(Getrf::new(), |nb| Getrf::new().block(nb)).schedule(schedule);
    let info = settings.run(lu.as_mut(), &mut ipiv).expect("valid arguments");
    (lu, ipiv, info)
}

/// [`factor_with`] with both schedules, which must agree (pivots, INFO,
/// NaN positions, factors to rounding); the `Join` result.
fn factor(a: &Mat<f64>, nb: Option<usize>) -> (Mat<f64>, Vec<usize>, Option<usize>) {
    let joined = factor_with(a, nb, LuSchedule::Join);
    let (lu, ipiv, info) = factor_with(a, nb, LuSchedule::Dataflow);
    let shape = (a.nrows(), a.ncols());
    assert_eq!(ipiv, joined.1, "{shape:?} nb={nb:?}: pivots of the two schedules");
    assert_eq!(info, joined.2, "{shape:?} nb={nb:?}: INFO of the two schedules");
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            let (x, y) = (lu[(i, j)], joined.0[(i, j)]);
            let same = (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= 1e-12 * (1.0 + y.abs());
            assert!(same, "{shape:?} nb={nb:?}: ({i}, {j}) {x} vs {y}");
        }
    }
    joined
}

/// `‖P·L·U − A‖_F / (‖A‖_F·max(m, n)·ε)`, `P·L·U` formed explicitly.
fn residual(a: &Mat<f64>, lu: &Mat<f64>, ipiv: &[usize]) -> f64 {
    let (m, n) = (a.nrows(), a.ncols());
    let mn = m.min(n);
    let l = Mat::from_fn(m, mn, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Greater => lu[(i, j)],
        std::cmp::Ordering::Equal => 1.0,
        std::cmp::Ordering::Less => 0.0,
    });
    let u = Mat::from_fn(mn, n, |i, j| if i <= j { lu[(i, j)] } else { 0.0 });
    let mut plu = Mat::zeros(m, n);
    matmul(plu.as_mut(), Accum::Replace, l.as_ref(), u.as_ref(), 1.0, Par::Seq);
    laswp_back(plu.as_mut(), ipiv, 0);
    let err = frobenius((&plu - a).as_ref(), Part::Full);
    if err == 0.0 {
        return 0.0;
    }
    err / (frobenius(a.as_ref(), Part::Full) * m.max(n) as f64 * f64::EPSILON)
}

/// The largest entrywise difference relative to the largest entry of `want`.
fn relative_diff(got: MatRef<'_, f64>, want: MatRef<'_, f64>) -> f64 {
    let scale = frobenius(want, Part::Full).max(1.0);
    frobenius((got - want).as_ref(), Part::Full) / scale
}

#[test]
fn matches_the_unblocked_reference() {
    let shapes = [(0, 0), (0, 5), (5, 0), (1, 1), (2, 2), (7, 7), (7, 3), (3, 7), (1, 9), (9, 1)];
    let more = [(64, 64), (65, 65), (65, 30), (30, 65), (100, 100)];
    for (m, n) in shapes.into_iter().chain(more) {
        let a = random_matrix(m, n, 11 + (m * 131 + n) as u64);
        let (want, want_piv, want_info) = reference(&a);
        for nb in [None, Some(1), Some(2), Some(3), Some(8), Some(16), Some(32), Some(64), Some(100)] {
            let (lu, ipiv, info) = factor(&a, nb);
            assert_eq!(ipiv, want_piv, "{m}x{n} nb={nb:?}: pivots");
            assert_eq!(info, want_info, "{m}x{n} nb={nb:?}: info");
            let diff = relative_diff(lu.as_ref(), want.as_ref());
            assert!(diff < 1e-12, "{m}x{n} nb={nb:?}: factors differ by {diff:e}");
            let r = residual(&a, &lu, &ipiv);
            assert!(r < THRESHOLD, "{m}x{n} nb={nb:?}: residual {r}");
        }
    }
}

#[test]
fn residuals_square() {
    for n in [0, 1, 2, 7, 64, 65, 513, 1000] {
        let a = random_matrix(n, n, 7 + n as u64);
        // Panel widths dividing n (n itself, 1 for n ≤ 65, 8 | 64, 5 | 65, 19·27 = 513, 8 | 1000)
        // and not.
        let nbs: &[Option<usize>] = match n {
            0..=7 => &[None, Some(1), Some(3), Some(64)],
            64 => &[None, Some(8), Some(24), Some(64)],
            65 => &[None, Some(5), Some(16), Some(64)],
            513 => &[None, Some(27), Some(64), Some(100)],
            _ => &[None, Some(100), Some(96)],
        };
        for &nb in nbs {
            let (lu, ipiv, info) = factor(&a, nb);
            assert_eq!(info, None, "n={n} nb={nb:?}");
            assert!(ipiv.iter().enumerate().all(|(i, &p)| p >= i && p < n), "n={n} nb={nb:?}");
            let r = residual(&a, &lu, &ipiv);
            assert!(r < THRESHOLD, "n={n} nb={nb:?}: residual {r}");
            let p = getrf_probe(a.as_ref(), lu.as_ref(), &ipiv, 3).expect("shapes agree");
            assert!(p < THRESHOLD, "n={n} nb={nb:?}: probe {p}");
        }
    }
}

#[test]
fn residuals_rectangular() {
    for (m, n) in [(1000, 513), (513, 1000), (700, 65), (65, 700), (2, 7), (7, 2), (300, 1), (1, 300)] {
        let a = random_matrix(m, n, 5 + (m + 3 * n) as u64);
        for nb in [None, Some(64), Some(50)] {
            let (lu, ipiv, info) = factor(&a, nb);
            assert_eq!(info, None, "{m}x{n} nb={nb:?}");
            let r = residual(&a, &lu, &ipiv);
            assert!(r < THRESHOLD, "{m}x{n} nb={nb:?}: residual {r}");
            let p = getrf_probe(a.as_ref(), lu.as_ref(), &ipiv, 4).expect("shapes agree");
            assert!(p < THRESHOLD, "{m}x{n} nb={nb:?}: probe {p}");
        }
    }
}

#[test]
fn large_checked_by_the_probe() {
    let n = 1500;
    let a = random_matrix(n, n, 99);
    let (mut lu, ipiv, info) = pool(4).install(|| factor(&a, Some(128)));
    assert_eq!(info, None);
    let p = getrf_probe(a.as_ref(), lu.as_ref(), &ipiv, 5).expect("shapes agree");
    assert!(p < THRESHOLD, "probe {p}");
    // The probe sees an error of one entry.
    lu[(1200, 300)] += 1e-6;
    let bad = getrf_probe(a.as_ref(), lu.as_ref(), &ipiv, 5).expect("shapes agree");
    assert!(bad > 100.0, "probe of a wrong factor: {bad}");
}

#[test]
fn pools_of_one_two_and_four_participants() {
    let a = random_matrix(513, 513, 21);
    let (_, want_piv, _) = reference(&a);
    for threads in [1, 2, 4] {
        for nb in [None, Some(64), Some(100)] {
            let (lu, ipiv, info) = pool(threads).install(|| factor(&a, nb));
            assert_eq!(info, None);
            assert_eq!(ipiv, want_piv, "{threads} threads, nb={nb:?}");
            let r = residual(&a, &lu, &ipiv);
            assert!(r < THRESHOLD, "{threads} threads, nb={nb:?}: residual {r}");
        }
    }
}

#[test]
fn strided_views() {
    // A row-major matrix (the transpose of a column-major one) and a view
    // with a column stride larger than its row count.
    let a = random_matrix(90, 70, 8);
    let (want, want_piv, _) = reference(&a);
    let mut t = a.transpose().to_owned();
    let mut ipiv = vec![0; 70];
    Getrf::new().block(16).run(t.as_mut().transpose_mut(), &mut ipiv).expect("valid");
    assert_eq!(ipiv, want_piv);
    assert!(relative_diff(t.transpose(), want.as_ref()) < 1e-12);
    let mut big = Mat::<f64>::zeros(100, 80);
    big.as_mut().submatrix_mut(5, 3, 90, 70).copy_from(a.as_ref());
    let mut ipiv = vec![0; 70];
    Getrf::new().block(16).run(big.as_mut().submatrix_mut(5, 3, 90, 70), &mut ipiv).expect("valid");
    assert_eq!(ipiv, want_piv);
    assert!(relative_diff(big.as_ref().submatrix(5, 3, 90, 70), want.as_ref()) < 1e-12);
    assert_eq!(big[(0, 0)], 0.0);
    assert_eq!(big[(99, 79)], 0.0);
}

#[test]
fn exactly_singular() {
    // A zero column: INFO names it; the rest is still factored.
    for (n, col, nb) in [(7, 3, Some(2)), (7, 0, None), (65, 40, Some(16)), (200, 150, Some(64))] {
        let mut a = random_matrix(n, n, 31 + n as u64);
        a.as_mut().col_mut(col).fill(0.0);
        let (_, want_piv, want_info) = reference(&a);
        let (lu, ipiv, info) = factor(&a, nb);
        assert_eq!(want_info, Some(col), "n={n}: the reference");
        assert_eq!(info, Some(col), "n={n}: zero column {col}");
        assert_eq!(ipiv, want_piv, "n={n}");
        assert_eq!(ipiv[col], col, "n={n}: no interchange at a zero pivot");
        let r = residual(&a, &lu, &ipiv);
        assert!(r < THRESHOLD, "n={n}: residual {r}");
    }
    // A repeated row holding the column's largest entry: the first of the
    // two is the pivot (idamax's tie rule), the second becomes exactly zero,
    // the last pivot is zero.
    for (n, nb) in [(7, None), (65, Some(16)), (130, Some(32))] {
        let mut a = random_matrix(n, n, 41 + n as u64);
        let (r1, r2) = (2, n - 2);
        a[(r1, 0)] = 10.0;
        for j in 0..n {
            a[(r2, j)] = a[(r1, j)];
        }
        let (lu, ipiv, info) = factor(&a, nb);
        assert_eq!(ipiv[0], r1, "n={n}: the first of the tied rows");
        assert_eq!(info, Some(n - 1), "n={n}: repeated row");
        assert_eq!(lu[(n - 1, n - 1)], 0.0);
        let r = residual(&a, &lu, &ipiv);
        assert!(r < THRESHOLD, "n={n}: residual {r}");
    }
    // All zeros: every pivot is zero, nothing is interchanged.
    let z = Mat::<f64>::zeros(9, 6);
    let (lu, ipiv, info) = factor(&z, Some(4));
    assert_eq!(info, Some(0));
    assert_eq!(ipiv, (0..6).collect::<Vec<_>>());
    assert!(lu.col_iter().all(|c| c.iter().all(|&x| x == 0.0)));
}

#[test]
fn non_finite_input_is_computed_with() {
    for (n, nb) in [(7, Some(3)), (65, Some(16)), (200, None)] {
        for (i, j, v) in [
            (0, 0, f64::NAN),
            (n / 2, n / 3, f64::NAN),
            (n - 1, n - 1, f64::INFINITY),
            (3, 1, f64::NEG_INFINITY),
        ] {
            let mut a = random_matrix(n, n, 3);
            a[(i, j)] = v;
            let (lu, ipiv, _) = factor(&a, nb);
            assert!(ipiv.iter().enumerate().all(|(k, &p)| p >= k && p < n), "n={n} ({i},{j})={v}");
            assert!(lu.col_iter().any(|c| c.iter().any(|x| !x.is_finite())), "n={n} ({i},{j})={v}");
        }
    }
    // A NaN is not chosen as pivot over a finite entry after it.
    let mut a = Mat::from_fn(3, 3, |i, j| (1 + i + 3 * j) as f64);
    a[(1, 0)] = f64::NAN;
    let (_, ipiv, _) = factor(&a, None);
    assert_eq!(ipiv[0], 2);
}

#[test]
fn argument_errors() {
    let mut a = random_matrix(5, 3, 1);
    for len in [0, 2, 4, 5] {
        let mut ipiv = vec![0; len];
        let err = getrf(a.as_mut(), &mut ipiv).unwrap_err();
        assert!(matches!(err, LaError::InvalidArgument { argument: "ipiv", .. }), "{err}");
    }
    let before = a.clone();
    let mut ipiv = vec![0; 3];
    assert_eq!(Getrf::new().block(0).run(a.as_mut(), &mut ipiv), Err(LaError::InvalidTileSize { nb: 0 }));
    assert_eq!(a, before, "nothing is modified on an error");

    let (lu, piv) = (random_matrix(4, 4, 2), vec![0, 1, 2, 3]);
    let mut b = random_matrix(4, 2, 3);
    let arg = |r: Result<(), LaError>| match r {
        Err(LaError::InvalidArgument { argument, .. }) => argument,
        other => panic!("expected an invalid argument, got {other:?}"),
    };
    assert_eq!(arg(getrs(Op::NoTrans, random_matrix(4, 3, 1).as_ref(), &piv[..3], b.as_mut())), "lu");
    assert_eq!(arg(getrs(Op::NoTrans, lu.as_ref(), &piv[..3], b.as_mut())), "ipiv");
    assert_eq!(arg(getrs(Op::NoTrans, lu.as_ref(), &[0, 0, 2, 3], b.as_mut())), "ipiv");
    assert_eq!(arg(getrs(Op::Trans, lu.as_ref(), &[0, 1, 2, 4], b.as_mut())), "ipiv");
    assert_eq!(arg(getrs(Op::Trans, lu.as_ref(), &piv, random_matrix(3, 2, 1).as_mut())), "b");
    assert_eq!(arg(getrf_probe(random_matrix(4, 3, 1).as_ref(), lu.as_ref(), &piv, 1).map(|_| ())), "lu");
}

#[test]
fn getrs_solves_both_ways() {
    for (n, nrhs) in [(0, 3), (1, 1), (7, 2), (65, 40), (300, 37)] {
        let a = random_matrix(n, n, 17 + n as u64);
        let (lu, ipiv, info) = factor(&a, Some(32));
        assert_eq!(info, None);
        for op in [Op::NoTrans, Op::Trans] {
            let b = random_matrix(n, nrhs, 23);
            let mut x = b.clone();
            pool(4).install(|| getrs(op, lu.as_ref(), &ipiv, x.as_mut())).expect("valid");
            let op_a = if op == Op::Trans { a.transpose() } else { a.as_ref() };
            let mut r = b.clone();
            matmul(r.as_mut(), Accum::Add, op_a, x.as_ref(), -1.0, Par::Seq);
            let err = frobenius(r.as_ref(), Part::Full);
            let scale = frobenius(a.as_ref(), Part::Full)
                * frobenius(x.as_ref(), Part::Full)
                * n as f64
                * f64::EPSILON;
            assert!(err <= THRESHOLD * scale, "n={n} {op:?}: {}", err / scale);
        }
    }
}

#[test]
fn flop_count() {
    assert_eq!(crate::getrf_flops(0, 0), 0.0);
    // LAPACK counts one operation (the reciprocal of the pivot) for n = 1.
    assert!((crate::getrf_flops(1, 1) - 1.0).abs() < 1e-12);
    let n = 3000.0;
    let f = crate::getrf_flops(3000, 3000);
    assert!((f / (2.0 * n * n * n / 3.0) - 1.0).abs() < 1e-3);
    assert_eq!(crate::getrf_flops(500, 300), crate::getrf_flops(300, 500));
}

#[test]
fn block_sizes() {
    assert_eq!(Getrf::new().block_size(4000, 4000), 256);
    assert_eq!(Getrf::new().block_size(1000, 10), 10);
    assert_eq!(Getrf::new().block_size(0, 0), 1);
    assert_eq!(Getrf::new().block(64).block_size(10, 10), 64);
}

#[test]
fn many_small_tiles_on_four_participants() {
    // Dozens of tiles and hundreds of tasks per factorization: every
    // interleaving the schedules allow must give the reference's pivots.
    for (m, n, nb) in [(300, 300, 8), (301, 157, 5), (157, 301, 7)] {
        let a = random_matrix(m, n, 61 + nb as u64);
        let (want, want_piv, _) = reference(&a);
        for _ in 0..5 {
            let (lu, ipiv, info) = pool(4).install(|| factor(&a, Some(nb)));
            assert_eq!(info, None);
            assert_eq!(ipiv, want_piv, "{m}x{n} nb={nb}");
            assert!(relative_diff(lu.as_ref(), want.as_ref()) < 1e-12, "{m}x{n} nb={nb}");
        }
    }
}

#[test]
fn nested_in_a_parallel_region() {
    // Two factorizations at once from inside a join on the same pool: they
    // share its participants (no second team) and neither waits forever.
    let (a, b) = (random_matrix(400, 400, 71), random_matrix(300, 350, 72));
    let ((_, pa, _), (_, pb, _)) = (reference(&a), reference(&b));
    let ((lu_a, ipiv_a, _), (lu_b, ipiv_b, _)) =
        pool(2).install(|| herd::join(|| factor(&a, Some(48)), || factor(&b, Some(64))));
    assert_eq!(ipiv_a, pa);
    assert_eq!(ipiv_b, pb);
    assert!(residual(&a, &lu_a, &ipiv_a) < THRESHOLD);
    assert!(residual(&b, &lu_b, &ipiv_b) < THRESHOLD);
}

#[test]
fn the_timeline_is_the_executed_dag() {
    // 500 x 400, panels of 100: 4 panels, 4 column tiles; F(k) for every
    // panel, U(t, k) for every tile right of panel k.
    let (m, n, nb) = (500, 400, 100);
    let a = random_matrix(m, n, 81);
    let (_, want_piv, _) = reference(&a);
    let mut lu = a.clone();
    let mut ipiv = vec![0; n];
    let (info, json) =
        pool(2).install(|| Getrf::new().block(nb).run_with_timeline(lu.as_mut(), &mut ipiv)).unwrap();
    assert_eq!(info, None);
    assert_eq!(ipiv, want_piv, "a timed run factors as an untimed one");
    let json = json.expect("the dataflow schedule records a timeline");
    assert_eq!(json["otherData"]["graph"], "getrf");
    let events = json["traceEvents"].as_array().unwrap();
    let (panels, tiles) = (4u64, 4u64);
    let updates: u64 = (0..panels).map(|k| tiles - k - 1).sum();
    assert_eq!(events.len() as u64, panels + updates);
    let id = |t: u64, k: u64| k * tiles + t + 1;
    let mut end_of = std::collections::HashMap::new();
    for e in events {
        let a = &e["args"];
        end_of.insert(a["id"].as_u64().unwrap(), e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap());
    }
    for e in events {
        let args = &e["args"];
        let me = args["id"].as_u64().unwrap();
        let deps: Vec<u64> = args["deps"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap()).collect();
        let (k, t) = ((me - 1) / tiles, (me - 1) % tiles);
        let want: Vec<u64> = match (e["name"].as_str().unwrap(), k) {
            ("factor", 0) => vec![],
            ("factor", k) => vec![id(k, k - 1)],
            ("update", 0) => vec![id(0, 0)],
            ("update", k) => vec![id(k, k), id(t, k - 1)]
                .into_iter()
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
            (other, _) => panic!("unexpected step {other}"),
        };
        assert_eq!(deps, want, "step {me} ({})", e["name"]);
        // A task starts after every task it depends on has ended.
        for d in deps {
            assert!(end_of[&d] <= e["ts"].as_f64().unwrap() + 1e-3, "step {me} started before {d} ended");
        }
    }
    // The join schedule has no task graph to record.
    let mut lu = a.clone();
    let (_, none) =
        Getrf::new().block(nb).schedule(LuSchedule::Join).run_with_timeline(lu.as_mut(), &mut ipiv).unwrap();
    assert!(none.is_none());
}
