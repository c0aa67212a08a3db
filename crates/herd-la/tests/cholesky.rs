use faer::{Mat, Side};
use herd_la::{potrf_flops, potrf_seq_tiled, random_spd, residual, LaError, TiledMatrix};

fn factor(a: &Mat<f64>, nb: usize) -> Result<Mat<f64>, LaError> {
    let mut t = TiledMatrix::from_faer(a.as_ref(), nb)?;
    potrf_seq_tiled(&mut t)?;
    Ok(t.to_faer())
}

fn lower(l: &Mat<f64>) -> Mat<f64> {
    Mat::from_fn(l.nrows(), l.ncols(), |i, j| if i >= j { l[(i, j)] } else { 0.0 })
}

#[test]
fn residual_small_for_many_sizes() {
    for (n, nb) in [
        (0, 4),
        (1, 1),
        (1, 8),
        (2, 1),
        (5, 2),
        (7, 7),
        (8, 3),
        (17, 4),
        (33, 8),
        (40, 40),
        (50, 64),
        (64, 16),
        (97, 32),
    ] {
        let a = random_spd(n, n as u64 + 11);
        let l = factor(&a, nb).unwrap();
        let r = residual(a.as_ref(), l.as_ref()).unwrap();
        assert!(r < 10.0, "n={n} nb={nb} residual={r}");
    }
}

#[test]
fn upper_triangle_left_untouched() {
    let a = random_spd(13, 3);
    let l = factor(&a, 4).unwrap();
    for j in 0..13 {
        for i in 0..j {
            assert_eq!(l[(i, j)], a[(i, j)]);
        }
    }
}

#[test]
fn residual_detects_a_wrong_factor() {
    let a = random_spd(20, 5);
    let mut l = factor(&a, 6).unwrap();
    l[(10, 3)] += 1e-6;
    assert!(residual(a.as_ref(), l.as_ref()).unwrap() > 100.0);
}

#[test]
fn matches_faer_llt() {
    for (n, nb) in [(1, 3), (30, 7), (64, 32), (100, 32)] {
        let a = random_spd(n, 99);
        let ours = lower(&factor(&a, nb).unwrap());
        let reference = a.as_ref().llt(Side::Lower).unwrap();
        let diff = &ours - reference.L();
        let scale = reference.L().norm_max();
        assert!(diff.norm_max() <= 1e-12 * scale, "n={n} nb={nb} diff={}", diff.norm_max());
    }
}

#[test]
fn empty_and_one_by_one() {
    let mut t = TiledMatrix::zeros(0, 0, 3).unwrap();
    assert_eq!(potrf_seq_tiled(&mut t), Ok(()));
    let a = Mat::from_fn(1, 1, |_, _| 9.0);
    let l = factor(&a, 5).unwrap();
    assert_eq!(l[(0, 0)], 3.0);
    let a = Mat::from_fn(1, 1, |_, _| -1.0);
    assert_eq!(factor(&a, 5).unwrap_err(), LaError::NotPositiveDefinite { column: 0 });
    let a = Mat::from_fn(1, 1, |_, _| 0.0);
    assert_eq!(factor(&a, 1).unwrap_err(), LaError::NotPositiveDefinite { column: 0 });
}

#[test]
fn not_positive_definite_names_the_failing_column() {
    // Identity except one negative pivot: the failing column is exactly `bad`.
    for (n, nb, bad) in [(10, 3, 0), (10, 3, 4), (10, 3, 9), (20, 8, 16), (20, 8, 7)] {
        let mut a = random_spd(n, 1);
        a[(bad, bad)] = -1.0;
        let err = factor(&a, nb).unwrap_err();
        assert_eq!(err, LaError::NotPositiveDefinite { column: bad }, "n={n} nb={nb}");
    }
    // Singular but positive semidefinite: rank-1 matrix x xᵀ fails at column 1.
    let x = [1.0, 2.0, 3.0, 4.0, 5.0];
    let a = Mat::from_fn(5, 5, |i, j| x[i] * x[j]);
    match factor(&a, 2).unwrap_err() {
        LaError::NotPositiveDefinite { column } => assert_eq!(column, 1),
        e => panic!("unexpected {e}"),
    }
}

#[test]
fn non_finite_input_is_reported_with_position() {
    for (bad, row, col) in [(f64::NAN, 5, 2), (f64::INFINITY, 3, 3), (f64::NEG_INFINITY, 11, 9)] {
        let mut a = random_spd(12, 2);
        a[(row, col)] = bad;
        a[(col, row)] = bad;
        let mut t = TiledMatrix::from_faer(a.as_ref(), 5).unwrap();
        let before = t.to_faer();
        assert_eq!(potrf_seq_tiled(&mut t), Err(LaError::NonFinite { row, col }));
        // nothing was modified (compare bit patterns: NaN != NaN)
        let after = t.to_faer();
        for j in 0..12 {
            for i in 0..12 {
                assert_eq!(after[(i, j)].to_bits(), before[(i, j)].to_bits());
            }
        }
    }
    // NaN only in the (unreferenced) strict upper triangle is ignored, as in LAPACK.
    let mut a = random_spd(6, 2);
    a[(0, 5)] = f64::NAN;
    assert!(factor(&a, 4).is_ok());
}

#[test]
fn shape_errors() {
    let a = Mat::from_fn(4, 6, |i, j| (i + j) as f64);
    let mut t = TiledMatrix::from_faer(a.as_ref(), 2).unwrap();
    assert_eq!(potrf_seq_tiled(&mut t), Err(LaError::NotSquare { rows: 4, cols: 6 }));
    let sq = random_spd(4, 0);
    assert!(matches!(residual(a.as_ref(), sq.as_ref()), Err(LaError::NotSquare { rows: 4, cols: 6 })));
    let other = random_spd(5, 0);
    assert!(matches!(residual(sq.as_ref(), other.as_ref()), Err(LaError::ShapeMismatch(_))));
    assert!(matches!(TiledMatrix::from_faer(sq.as_ref(), 0), Err(LaError::InvalidTileSize { nb: 0 })));
}

#[test]
fn random_spd_is_deterministic_and_symmetric() {
    let a = random_spd(9, 42);
    assert_eq!(a, random_spd(9, 42));
    assert_ne!(a, random_spd(9, 43));
    assert_eq!(a, a.transpose().to_owned());
    assert_eq!(potrf_flops(30), 9000.0);
}
