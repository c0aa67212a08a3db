use faer::Mat;
use herd_la::{potrf_seq_tiled_with, random_spd, residual, Backend, LaError, Tile, TiledMatrix};

fn backends() -> Vec<Backend> {
    #[allow(unused_mut)]
    let mut v = vec![Backend::Faer];
    #[cfg(feature = "openblas")]
    v.push(Backend::OpenBlas);
    v
}

fn tile_from(m: &Mat<f64>) -> Tile {
    Tile::from_faer(m.as_ref())
}

fn rand_mat(m: usize, n: usize, seed: u64) -> Mat<f64> {
    let s = random_spd(m.max(n), seed);
    Mat::from_fn(m, n, |i, j| s[(i, j)] / (m.max(n) as f64))
}

fn close(a: &Mat<f64>, b: faer::MatRef<'_, f64>) -> bool {
    (a - b).norm_max() <= 1e-12 * (1.0 + a.norm_max())
}

#[test]
fn kernels_match_dense_formulas() {
    for backend in backends() {
        let (m, nb) = (5, 4);
        // POTRF
        let a = random_spd(nb, 1);
        let mut t = tile_from(&a);
        backend.potrf(&mut t).unwrap();
        let l = Mat::from_fn(nb, nb, |i, j| if i >= j { t.as_faer()[(i, j)] } else { 0.0 });
        assert!(residual(a.as_ref(), l.as_ref()).unwrap() < 10.0, "{backend:?}");
        for j in 0..nb {
            for i in 0..j {
                assert_eq!(t.as_faer()[(i, j)], a[(i, j)], "{backend:?} potrf touched the upper triangle");
            }
        }
        // TRSM: X = B L^{-T}  ⇔  X Lᵀ = B
        let b = rand_mat(m, nb, 2);
        let mut x = tile_from(&b);
        backend.trsm(&tile_from(&l), &mut x).unwrap();
        assert!(close(&(x.as_faer() * l.transpose()), b.as_ref()), "{backend:?} trsm");
        // SYRK: lower of C - A Aᵀ, upper untouched
        let c = random_spd(m, 3);
        let ak = rand_mat(m, nb, 4);
        let mut ct = tile_from(&c);
        backend.syrk(&tile_from(&ak), &mut ct).unwrap();
        let expect = &c - &ak * ak.transpose();
        for j in 0..m {
            for i in 0..m {
                let want = if i >= j { expect[(i, j)] } else { c[(i, j)] };
                assert!((ct.as_faer()[(i, j)] - want).abs() < 1e-12, "{backend:?} syrk ({i},{j})");
            }
        }
        // GEMM: C - A Bᵀ
        let c = rand_mat(m, 3, 5);
        let (a2, b2) = (rand_mat(m, nb, 6), rand_mat(3, nb, 7));
        let mut ct = tile_from(&c);
        backend.gemm(&tile_from(&a2), &tile_from(&b2), &mut ct).unwrap();
        assert!(close(&(&c - &a2 * b2.transpose()), ct.as_faer()), "{backend:?} gemm");
    }
}

#[test]
fn kernel_shape_errors() {
    for backend in backends() {
        let mut rect = Tile::zeros(3, 2);
        assert_eq!(backend.potrf(&mut rect), Err(LaError::NotSquare { rows: 3, cols: 2 }));
        let sq3 = Tile::zeros(3, 3);
        assert!(matches!(backend.trsm(&sq3, &mut rect), Err(LaError::ShapeMismatch(_))));
        assert!(matches!(backend.syrk(&sq3, &mut Tile::zeros(2, 2)), Err(LaError::ShapeMismatch(_))));
        assert!(matches!(
            backend.gemm(&Tile::zeros(3, 2), &Tile::zeros(2, 3), &mut Tile::zeros(3, 2)),
            Err(LaError::ShapeMismatch(_))
        ));
        let mut bad = tile_from(&Mat::from_fn(3, 3, |i, j| if i == j { [4.0, -1.0, 4.0][i] } else { 0.0 }));
        assert_eq!(backend.potrf(&mut bad), Err(LaError::NotPositiveDefinite { column: 1 }));
    }
}

#[test]
fn tiled_cholesky_same_for_every_backend() {
    for backend in backends() {
        for (n, nb) in [(0, 3), (1, 2), (23, 5), (48, 16)] {
            let a = random_spd(n, 8);
            let mut t = TiledMatrix::from_faer(a.as_ref(), nb).unwrap();
            potrf_seq_tiled_with(&mut t, backend).unwrap();
            let l = t.to_faer();
            assert!(residual(a.as_ref(), l.as_ref()).unwrap() < 10.0, "{backend:?} n={n} nb={nb}");
            let mut reference = TiledMatrix::from_faer(a.as_ref(), nb).unwrap();
            potrf_seq_tiled_with(&mut reference, Backend::Faer).unwrap();
            assert!(close(&l, reference.to_faer().as_ref()), "{backend:?} n={n} differs from faer");
        }
        let mut a = random_spd(12, 9);
        a[(7, 7)] = -5.0;
        let mut t = TiledMatrix::from_faer(a.as_ref(), 5).unwrap();
        assert_eq!(potrf_seq_tiled_with(&mut t, backend), Err(LaError::NotPositiveDefinite { column: 7 }));
    }
}
