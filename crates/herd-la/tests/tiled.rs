use faer::Mat;
use herd_la::{LaError, TiledMatrix};

fn pattern(m: usize, n: usize) -> Vec<f64> {
    (0..m * n).map(|k| k as f64 * 0.5 - 3.0).collect()
}

#[test]
fn col_major_round_trip() {
    for n in [0, 1, 5, 64, 100] {
        for nb in [1, 7, 32] {
            let a = pattern(n, n);
            let t = TiledMatrix::from_col_major(n, nb, &a, n.max(1)).unwrap();
            assert_eq!(t.mt(), n.div_ceil(nb));
            assert_eq!(t.to_col_major(), a, "n={n} nb={nb}");
            for i in 0..n {
                for j in 0..n {
                    assert_eq!(t.get(i, j), Some(a[j * n + i]));
                }
            }
            assert_eq!(t.get(n, 0), None);
        }
    }
}

#[test]
fn col_major_with_padding_lda() {
    let (m, n, lda) = (5, 3, 8);
    let buf: Vec<f64> = (0..lda * n).map(|k| k as f64).collect();
    let t = TiledMatrix::from_col_major_rect(m, n, 2, &buf, lda).unwrap();
    let out = t.to_col_major();
    for j in 0..n {
        for i in 0..m {
            assert_eq!(out[j * m + i], buf[j * lda + i]);
        }
    }
}

#[test]
fn faer_round_trip_and_tile_layout() {
    for n in [0, 1, 5, 64, 100] {
        for nb in [1, 7, 32] {
            let a = Mat::from_fn(n, n, |i, j| (i * 1000 + j) as f64);
            let t = TiledMatrix::from_faer(a.as_ref(), nb).unwrap();
            assert_eq!(t.to_faer(), a, "n={n} nb={nb}");
            // via column-major too
            let t2 = TiledMatrix::from_col_major(n, nb, &t.to_col_major(), n).unwrap();
            assert_eq!(t2.to_faer(), a);
            // every tile is contiguous column-major with ld = its row count
            for ti in 0..t.mt() {
                for tj in 0..t.nt() {
                    let tile = t.tile(ti, tj);
                    assert_eq!(tile.rows(), t.tile_rows(ti));
                    assert_eq!(tile.cols(), t.tile_cols(tj));
                    assert_eq!(tile.data().len(), tile.rows() * tile.cols());
                    for c in 0..tile.cols() {
                        for r in 0..tile.rows() {
                            let expect = ((ti * nb + r) * 1000 + tj * nb + c) as f64;
                            assert_eq!(tile.data()[c * tile.rows() + r], expect);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn rectangular_round_trip_with_edge_tiles() {
    let a = Mat::from_fn(10, 23, |i, j| (i as f64) - 2.0 * j as f64);
    let t = TiledMatrix::from_faer(a.as_ref(), 7).unwrap();
    assert_eq!((t.mt(), t.nt()), (2, 4));
    assert_eq!((t.tile(1, 3).rows(), t.tile(1, 3).cols()), (3, 2));
    assert_eq!(t.to_faer(), a);
    assert_eq!(t.clone().to_faer(), a);
}

#[test]
fn bad_construction_arguments_are_errors() {
    assert_eq!(TiledMatrix::zeros(3, 3, 0).unwrap_err(), LaError::InvalidTileSize { nb: 0 });
    let a = pattern(4, 4);
    assert!(matches!(TiledMatrix::from_col_major(4, 0, &a, 4), Err(LaError::InvalidTileSize { nb: 0 })));
    assert!(matches!(TiledMatrix::from_col_major(4, 2, &a, 3), Err(LaError::ShapeMismatch(_))));
    assert!(matches!(TiledMatrix::from_col_major(4, 2, &a[..15], 4), Err(LaError::ShapeMismatch(_))));
    assert!(matches!(TiledMatrix::from_col_major(5, 2, &a, 5), Err(LaError::ShapeMismatch(_))));
    let m = Mat::<f64>::zeros(2, 2);
    assert!(matches!(TiledMatrix::from_faer(m.as_ref(), 0), Err(LaError::InvalidTileSize { nb: 0 })));
    let t = TiledMatrix::zeros(4, 4, 2).unwrap();
    assert!(t.try_tile(2, 0).is_none());
    assert!(t.try_tile_mut(0, 2).is_none());
    assert!(!t.set(4, 0, 1.0));
}

#[test]
fn different_tiles_mutated_concurrently() {
    use std::sync::Arc;
    let t = Arc::new(TiledMatrix::zeros(40, 40, 8).unwrap());
    std::thread::scope(|s| {
        for ti in 0..t.mt() {
            let t = Arc::clone(&t);
            s.spawn(move || {
                for tj in 0..t.nt() {
                    let mut tile = t.tile_mut(ti, tj);
                    for x in tile.data_mut() {
                        *x = (ti * 10 + tj) as f64;
                    }
                }
            });
        }
    });
    for i in 0..40 {
        for j in 0..40 {
            assert_eq!(t.get(i, j), Some(((i / 8) * 10 + j / 8) as f64));
        }
    }
}
