use faer::Mat;
use herd_la::{potrf_seq_tiled_with, random_spd, residual, Backend, LaError, Tile, TiledMatrix};

fn backends() -> Vec<Backend> {
    #[allow(unused_mut)]
    let mut v = vec![Backend::Herd, Backend::Faer];
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
        // 700 in tiles of 320: herd's GEMM and SYRK take the 320-wide tiles with the packed
        // product where the CPU has AVX-512F, and leave the 60-wide edge tiles to faer.
        for (n, nb) in [(0, 3), (1, 2), (23, 5), (48, 16), (700, 320)] {
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

/// `Backend::Herd`'s GEMM on tiles wide enough for herd's packed product (where the CPU has
/// AVX-512F; faer's elsewhere) and on narrower ones, against the dense formula.
#[test]
fn herd_gemm_kernel_on_wide_and_narrow_tiles() {
    for (m, n, k) in [(320, 320, 320), (336, 400, 333), (320, 330, 1), (319, 400, 360), (17, 5, 3)] {
        let (a, b, c0) = (rand_mat(m, k, 21), rand_mat(n, k, 22), rand_mat(m, n, 23));
        let mut c = tile_from(&c0);
        Backend::Herd.gemm(&tile_from(&a), &tile_from(&b), &mut c).unwrap();
        let want = &c0 - &a * b.transpose();
        assert!(close(&want, c.as_faer()), "{m} x {n} x {k}");
    }
}

/// `Backend::Herd`'s SYRK (herd's packed product on the micro-tiles on and below the diagonal,
/// where the CPU has AVX-512F and the tile is wide enough; faer's elsewhere): the lower
/// triangle against the dense formula, the strict upper triangle untouched, on column-major
/// and row-major (transposed) views, depths beyond one packed slice, and edge tiles.
#[test]
fn herd_syrk_kernel_writes_the_lower_triangle_only() {
    for (n, k) in [(320, 320), (345, 333), (320, 1), (400, 800), (336, 336), (300, 400), (17, 5)] {
        let (a, c0) = (rand_mat(n, k, 31), rand_mat(n, n, 32));
        let want = &c0 - &a * a.transpose();
        for row_major in [false, true] {
            let mut c = if row_major { c0.transpose().to_owned() } else { c0.clone() };
            let view = if row_major { c.as_mut().transpose_mut() } else { c.as_mut() };
            herd_la::kernels::herd_syrk(a.as_ref(), view);
            let got = if row_major { c.transpose().to_owned() } else { c };
            for j in 0..n {
                for i in 0..n {
                    if i >= j {
                        let tol = 1e-12 * (1.0 + want.norm_max());
                        assert!((got[(i, j)] - want[(i, j)]).abs() <= tol, "{n} x {k} ({i}, {j})");
                    } else {
                        assert_eq!(got[(i, j)].to_bits(), c0[(i, j)].to_bits(), "{n} x {k} upper ({i}, {j})");
                    }
                }
            }
        }
    }
}
