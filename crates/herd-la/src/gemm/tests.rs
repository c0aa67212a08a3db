//! `gemm` against a reference product, with the error scaled like LAPACK's
//! test ratios: `‖C − C_ref‖_F ≤ c·k·ε·(|α|·‖A‖_F·‖B‖_F + |β|·‖C₀‖_F)`.

use super::blocks::Grid;
use super::counts::PackCounts;
use super::dispatch::Kernel;
use super::*;
use crate::probe::{frobenius, Part};
use crate::random_matrix;
use faer::linalg::matmul::matmul;
use faer::Mat;
use faer::{Accum, Par};
use std::sync::atomic::Ordering;

/// The ratio's bound `c` (LAPACK's testing uses thresholds of 10–30).
const THRESHOLD: f64 = 10.0;

fn pool(threads: usize) -> herd::Pool {
    herd::Pool::builder().num_threads(threads).build().expect("a test pool")
}

fn stored(op: Op, rows: usize, cols: usize, seed: u64) -> Mat<f64> {
    match op {
        Op::NoTrans => random_matrix(rows, cols, seed),
        Op::Trans => random_matrix(cols, rows, seed),
    }
}

/// `α·op(A)·op(B) + β·C₀`: a triple loop for small products, faer's
/// sequential product beyond; `β = 0` ignores `C₀`, `α = 0` ignores A and B.
fn reference(
    op_a: Op,
    op_b: Op,
    alpha: f64,
    a: &Mat<f64>,
    b: &Mat<f64>,
    beta: f64,
    c0: &Mat<f64>,
) -> Mat<f64> {
    let (a, b) = (op_a.apply(a.as_ref()), op_b.apply(b.as_ref()));
    let (m, n, k) = (c0.nrows(), c0.ncols(), a.ncols());
    let mut ab = Mat::zeros(m, n);
    if alpha != 0.0 {
        if m * n * k <= 70 * 70 * 70 {
            for j in 0..n {
                for i in 0..m {
                    ab[(i, j)] = (0..k).map(|p| a[(i, p)] * b[(p, j)]).sum::<f64>();
                }
            }
        } else {
            matmul(ab.as_mut(), Accum::Replace, a, b, 1.0, Par::Seq);
        }
    }
    Mat::from_fn(m, n, |i, j| {
        let prod = if alpha == 0.0 { 0.0 } else { alpha * ab[(i, j)] };
        if beta == 0.0 {
            prod
        } else {
            prod + beta * c0[(i, j)]
        }
    })
}

/// Every block by the kernel under test, whatever its size.
const ALWAYS: fn(Kernel, usize, usize) -> Kernel = |kernel, _, _| kernel;

/// The kernels this CPU can run: every packed one (AVX-512 and AVX2 on an
/// AVX-512 machine) and faer's portable dispatch.
fn kernels() -> Vec<Kernel> {
    let mut all = Kernel::packed_kernels();
    all.push(Kernel::Faer);
    all
}

/// LAPACK's test ratio of `c` against `want`.
fn ratio(
    (c, want): (&Mat<f64>, &Mat<f64>),
    (alpha, a, b, k): (f64, &Mat<f64>, &Mat<f64>, usize),
    beta: f64,
    c0: &Mat<f64>,
) -> f64 {
    let err = frobenius((c - want).as_ref(), Part::Full);
    let scale = alpha.abs() * frobenius(a.as_ref(), Part::Full) * frobenius(b.as_ref(), Part::Full)
        + beta.abs() * frobenius(c0.as_ref(), Part::Full);
    if err == 0.0 {
        0.0
    } else {
        err / (scale * k.max(1) as f64 * f64::EPSILON)
    }
}

/// Runs one product on `threads` participants with `blocking`, with every
/// kernel the CPU can run, and checks it.
#[allow(clippy::too_many_arguments)]
fn check(
    threads: usize,
    op_a: Op,
    op_b: Op,
    shape: (usize, usize, usize),
    alpha: f64,
    beta: f64,
    blocking: Blocking,
) {
    check_on(&pool(threads), op_a, op_b, shape, alpha, beta, blocking);
}

/// [`check`] on `pool`.
#[allow(clippy::too_many_arguments)]
fn check_on(
    pool: &herd::Pool,
    op_a: Op,
    op_b: Op,
    (m, n, k): (usize, usize, usize),
    alpha: f64,
    beta: f64,
    blocking: Blocking,
) {
    let a = stored(op_a, m, k, 1 + m as u64);
    let b = stored(op_b, k, n, 2 + n as u64);
    let c0 = random_matrix(m, n, 3 + k as u64);
    let want = reference(op_a, op_b, alpha, &a, &b, beta, &c0);
    for kernel in kernels() {
        let mut c = c0.clone();
        pool.install(|| {
            Gemm::new(op_a, op_b, alpha, beta).blocking(blocking).run_with(
                kernel,
                ALWAYS,
                a.as_ref(),
                b.as_ref(),
                c.as_mut(),
            )
        })
        .expect("valid arguments");
        let ratio = ratio((&c, &want), (alpha, &a, &b, k), beta, &c0);
        let threads = pool.num_threads();
        assert!(
            ratio < THRESHOLD,
            "{kernel:?} {threads} threads {op_a:?}{op_b:?} m={m} n={n} k={k} alpha={alpha} beta={beta} {blocking:?}: ratio {ratio}"
        );
    }
}

const OPS: [(Op, Op); 4] =
    [(Op::NoTrans, Op::NoTrans), (Op::NoTrans, Op::Trans), (Op::Trans, Op::NoTrans), (Op::Trans, Op::Trans)];

#[test]
fn square_sizes_every_transpose() {
    for n in [0, 1, 2, 7, 64, 65, 513] {
        for (op_a, op_b) in OPS {
            check(2, op_a, op_b, (n, n, n), 1.5, -0.5, Blocking::Auto);
        }
    }
}

#[test]
fn non_square_shapes() {
    for (m, n, k) in
        [(1, 7, 2), (7, 1, 65), (65, 2, 7), (200, 33, 513), (33, 300, 64), (513, 65, 1), (130, 257, 0)]
    {
        for (op_a, op_b) in OPS {
            check(2, op_a, op_b, (m, n, k), -1.0, 1.0, Blocking::Auto);
        }
    }
}

#[test]
fn block_sizes_that_do_and_do_not_divide() {
    // 192 = 3·64: blocks of 64 divide it, 50 and 100 do not; 1 is the smallest block.
    for (rows, cols) in [(64, 64), (50, 100), (192, 1), (1, 7), (500, 500)] {
        check(2, Op::NoTrans, Op::NoTrans, (192, 192, 65), 1.0, 1.0, Blocking::Fixed { rows, cols });
        check(3, Op::Trans, Op::NoTrans, (65, 192, 64), 2.0, 0.0, Blocking::Fixed { rows, cols });
    }
}

#[test]
fn thread_counts() {
    for threads in [1, 2, 3] {
        check(threads, Op::NoTrans, Op::Trans, (300, 301, 40), 1.0, 1.0, Blocking::Auto);
    }
}

#[test]
fn rank_k_update() {
    // The ATLAS paper's kernel: C ← C − A·Bᵀ with K small against C.
    for k in [1, 40, 56] {
        check(2, Op::NoTrans, Op::Trans, (513, 513, k), -1.0, 1.0, Blocking::Auto);
    }
}

#[test]
fn alpha_beta_special_values() {
    for (alpha, beta) in [(0.0, 0.0), (0.0, 1.0), (0.0, -2.0), (1.0, 0.0), (-1.0, 1.0), (0.5, 3.0)] {
        for (m, n, k) in [(7, 7, 7), (65, 64, 65), (513, 64, 33)] {
            check(2, Op::NoTrans, Op::NoTrans, (m, n, k), alpha, beta, Blocking::Auto);
        }
    }
}

/// `C` full of NaN, `a` and `b` finite.
fn nan_c_product(m: usize, n: usize, k: usize, alpha: f64, beta: f64) -> Mat<f64> {
    let (a, b) = (random_matrix(m, k, 5), random_matrix(k, n, 6));
    let mut c = Mat::from_fn(m, n, |_, _| f64::NAN);
    pool(2)
        .install(|| gemm(Op::NoTrans, Op::NoTrans, alpha, a.as_ref(), b.as_ref(), beta, c.as_mut()))
        .expect("valid arguments");
    c
}

/// `β = 0` on every kernel, whatever the block size (the public `gemm`
/// above gives blocks this small to faer): the packed kernels' whole tiles,
/// edge tiles and row-major `C` never read the NaN in `C`.
#[test]
fn every_kernel_with_beta_zero_ignores_nan_in_c() {
    for kernel in kernels() {
        for (m, n, k) in [(16, 14, 3), (8, 6, 5), (37, 29, 70), (300, 200, 40)] {
            let (a, b) = (random_matrix(m, k, 5), random_matrix(k, n, 6));
            for row_major in [false, true] {
                let mut store = Mat::from_fn(m.max(n), m.max(n), |_, _| f64::NAN);
                let c = if row_major {
                    store.as_mut().submatrix_mut(0, 0, n, m).transpose_mut()
                } else {
                    store.as_mut().submatrix_mut(0, 0, m, n)
                };
                pool(1)
                    .install(|| {
                        Gemm::new(Op::NoTrans, Op::NoTrans, 1.5, 0.0).run_with(
                            kernel,
                            ALWAYS,
                            a.as_ref(),
                            b.as_ref(),
                            c,
                        )
                    })
                    .expect("valid arguments");
                let c = if row_major {
                    store.as_ref().submatrix(0, 0, n, m).transpose().to_owned()
                } else {
                    store.as_ref().submatrix(0, 0, m, n).to_owned()
                };
                assert!(
                    c.as_ref().is_all_finite(),
                    "{kernel:?} {m}x{n}x{k} row-major {row_major}: NaN left in C"
                );
                let want = reference(Op::NoTrans, Op::NoTrans, 1.5, &a, &b, 0.0, &Mat::zeros(m, n));
                let r = ratio((&c, &want), (1.5, &a, &b, k), 0.0, &Mat::zeros(m, n));
                assert!(r < THRESHOLD, "{kernel:?} {m}x{n}x{k}: ratio {r}");
            }
        }
    }
}

#[test]
fn beta_zero_ignores_nan_in_c() {
    for (m, n, k) in [
        (1, 1, 1),
        (3, 5, 2),
        (16, 16, 16),
        (64, 1, 64),
        (1, 64, 64),
        (100, 100, 1),
        (513, 65, 64),
        (9, 9, 0),
    ] {
        for alpha in [1.0, 0.0] {
            let c = nan_c_product(m, n, k, alpha, 0.0);
            assert!(c.as_ref().is_all_finite(), "m={m} n={n} k={k} alpha={alpha}: NaN left in C");
        }
    }
}

#[test]
fn nan_is_computed_with_not_rejected() {
    // β ≠ 0: NaN in C stays, as in BLAS.
    let c = nan_c_product(70, 70, 70, 1.0, 1.0);
    assert!(c[(3, 4)].is_nan());
    // NaN in A reaches the rows of C it touches, unless α = 0.
    let mut a = random_matrix(80, 80, 1);
    a[(5, 9)] = f64::NAN;
    let b = random_matrix(80, 80, 2);
    for alpha in [1.0, 0.0] {
        let mut c = Mat::zeros(80, 80);
        gemm(Op::NoTrans, Op::NoTrans, alpha, a.as_ref(), b.as_ref(), 0.0, c.as_mut()).expect("valid");
        assert_eq!(c[(5, 0)].is_nan(), alpha != 0.0, "alpha={alpha}");
        assert!(c[(6, 0)].is_finite());
    }
}

#[test]
fn strided_views() {
    // Sub-views of larger matrices (column stride above the row count) and a
    // transposed (row-major) C.
    let big = random_matrix(300, 300, 9);
    let (a, b) = (big.as_ref().submatrix(3, 5, 150, 70), big.as_ref().submatrix(100, 200, 70, 90));
    let mut c = Mat::<f64>::zeros(90, 150);
    gemm(Op::NoTrans, Op::NoTrans, 1.0, a, b, 0.0, c.as_mut().transpose_mut()).expect("valid");
    let mut want = Mat::<f64>::zeros(150, 90);
    matmul(want.as_mut(), Accum::Replace, a, b, 1.0, Par::Seq);
    let err = frobenius((c.transpose() - &want).as_ref(), Part::Full);
    assert!(err <= 10.0 * 70.0 * f64::EPSILON * frobenius(want.as_ref(), Part::Full).max(1.0) * 10.0);
}

#[test]
fn mismatched_shapes_name_the_argument() {
    let (a, b) = (Mat::<f64>::zeros(4, 3), Mat::<f64>::zeros(3, 5));
    let mut c = Mat::<f64>::zeros(4, 5);
    let arg = |r: Result<(), LaError>| match r {
        Err(LaError::InvalidArgument { argument, .. }) => argument,
        other => panic!("expected InvalidArgument, got {other:?}"),
    };
    let run = |op_a, op_b, c: MatMut<'_, f64>| gemm(op_a, op_b, 1.0, a.as_ref(), b.as_ref(), 0.0, c);
    assert_eq!(arg(run(Op::Trans, Op::NoTrans, c.as_mut())), "a");
    assert_eq!(arg(run(Op::NoTrans, Op::Trans, c.as_mut())), "b");
    assert_eq!(arg(run(Op::NoTrans, Op::NoTrans, c.as_mut().transpose_mut())), "a");
    assert_eq!(arg(run(Op::NoTrans, Op::NoTrans, c.as_mut().subcols_mut(0, 4))), "b");
    assert!(run(Op::NoTrans, Op::NoTrans, c.as_mut()).is_ok());
    let fixed = Blocking::Fixed { rows: 0, cols: 4 };
    let r =
        Gemm::new(Op::NoTrans, Op::NoTrans, 1.0, 0.0).blocking(fixed).run(a.as_ref(), b.as_ref(), c.as_mut());
    assert_eq!(r, Err(LaError::InvalidTileSize { nb: 0 }));
}

#[test]
fn auto_grid() {
    // One participant or a small product: one block.
    assert_eq!(Grid::auto((4000, 4000, 4000), 1), Grid { mb: 4000, nb: 4000, br: 1, bc: 1 });
    assert_eq!(Grid::auto((50, 50, 50), 2), Grid { mb: 50, nb: 50, br: 1, bc: 1 });
    // Square: halves of rows; wide: columns; no block thinner than 64 unless C is.
    assert_eq!(Grid::auto((4000, 4000, 4000), 2), Grid { mb: 2000, nb: 4000, br: 2, bc: 1 });
    assert_eq!(Grid::auto((100, 4000, 4000), 2), Grid { mb: 100, nb: 2000, br: 1, bc: 2 });
    assert_eq!(Grid::auto((4000, 100, 4000), 2), Grid { mb: 2000, nb: 100, br: 2, bc: 1 });
    assert_eq!(Grid::auto((40, 4000, 40), 4), Grid { mb: 40, nb: 1000, br: 1, bc: 4 });
    // At least as many blocks as participants whenever the shape allows.
    for p in 2..=16 {
        for (m, n) in [(1000, 1000), (513, 4000), (4000, 65), (300, 300)] {
            let g = Grid::auto((m, n, 256), p);
            assert!(g.br * g.bc >= p.min((m / 64) * (n / 64)), "p={p} {m}x{n}: {g:?}");
            assert!(g.mb * g.br >= m && g.nb * g.bc >= n && (g.br - 1) * g.mb < m && (g.bc - 1) * g.nb < n);
        }
    }
}

/// Sizes around the micro-tile's rows (16), its columns (14) and the cache
/// blocks' depth (`KC`), every transpose, on one participant (one block,
/// so the packed product sees exactly these shapes).
#[test]
fn micro_tile_and_depth_edges() {
    let one = pool(1);
    let mut depths: Vec<usize> = cache_blocks().iter().flat_map(|&(kc, _, _)| [kc - 1, kc, kc + 1]).collect();
    depths.extend([1, 2, 17]);
    depths.sort_unstable();
    depths.dedup();
    // The AVX-512 tile is 16 × 14, the AVX2 one 8 × 6.
    for m in [1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 33] {
        for n in [1, 5, 6, 7, 13, 14, 15, 27, 28, 29] {
            for &k in &depths {
                for (op_a, op_b) in OPS {
                    check_on(&one, op_a, op_b, (m, n, k), 0.75, -1.25, Blocking::Auto);
                }
            }
        }
    }
}

/// Sizes around the row and column cache blocks (`MC`, `NC`) and two
/// depth slices, with `β = 0` and `β ≠ 0`.
#[test]
fn cache_block_edges() {
    let one = pool(1);
    for (kc, mc, nc) in cache_blocks() {
        for (m, n, k) in [(mc - 1, 20, 2 * kc + 1), (mc + 1, 15, 3), (17, nc + 1, 5), (2 * mc + 3, nc - 1, 2)]
        {
            for (op_a, op_b) in [(Op::NoTrans, Op::NoTrans), (Op::Trans, Op::Trans)] {
                for beta in [0.0, 0.5] {
                    check_on(&one, op_a, op_b, (m, n, k), 1.0, beta, Blocking::Auto);
                }
            }
        }
    }
}

/// The cache blocks `(KC, MC, NC)` of every packed kernel this CPU runs;
/// where there is none, sizes of the same role (faer's path has no such
/// edges, the tests still run the shapes).
fn cache_blocks() -> Vec<(usize, usize, usize)> {
    let all: Vec<_> = Kernel::packed_kernels().into_iter().filter_map(Kernel::cache_blocks).collect();
    if all.is_empty() {
        vec![(256, 480, 4032)]
    } else {
        all
    }
}

/// Operands that are sub-views of larger matrices (column strides above
/// their row counts, padding around them), every transpose, `C` a padded
/// sub-view too, and a row-major `C`: the padding is never written.
#[test]
fn padded_operands_every_transpose() {
    let (m, n, k) = (37, 31, 45);
    for (op_a, op_b) in OPS {
        for row_major_c in [false, true] {
            let a_big = random_matrix(70, 70, 11);
            let b_big = random_matrix(70, 70, 12);
            let (ar, ac) = if op_a == Op::NoTrans { (m, k) } else { (k, m) };
            let (br, bc) = if op_b == Op::NoTrans { (k, n) } else { (n, k) };
            let (a, b) = (a_big.as_ref().submatrix(3, 5, ar, ac), b_big.as_ref().submatrix(7, 2, br, bc));
            let (a_own, b_own) = (a.to_owned(), b.to_owned());
            let c0 = random_matrix(m, n, 13);
            let want = reference(op_a, op_b, -0.5, &a_own, &b_own, 2.0, &c0);
            for kernel in kernels() {
                let mut c_big = Mat::<f64>::from_fn(80, 80, |_, _| f64::NAN);
                let run = |c: MatMut<'_, f64>| {
                    pool(2)
                        .install(|| Gemm::new(op_a, op_b, -0.5, 2.0).run_with(kernel, ALWAYS, a, b, c))
                        .expect("valid arguments")
                };
                let c = if row_major_c {
                    let mut view = c_big.as_mut().submatrix_mut(4, 6, n, m);
                    view.copy_from(c0.transpose());
                    run(view.transpose_mut());
                    c_big.as_ref().submatrix(4, 6, n, m).transpose().to_owned()
                } else {
                    let mut view = c_big.as_mut().submatrix_mut(4, 6, m, n);
                    view.copy_from(&c0);
                    run(view);
                    c_big.as_ref().submatrix(4, 6, m, n).to_owned()
                };
                let ratio = ratio((&c, &want), (-0.5, &a_own, &b_own, k), 2.0, &c0);
                assert!(
                    ratio < THRESHOLD,
                    "{kernel:?} {op_a:?}{op_b:?} row-major C {row_major_c}: ratio {ratio}"
                );
                let (r0, c0_, rows, cols) = if row_major_c { (4, 6, n, m) } else { (4, 6, m, n) };
                for j in 0..80 {
                    for i in 0..80 {
                        let inside = (r0..r0 + rows).contains(&i) && (c0_..c0_ + cols).contains(&j);
                        assert!(inside || c_big[(i, j)].is_nan(), "{kernel:?}: padding ({i}, {j}) written");
                    }
                }
            }
        }
    }
}

/// Each packed kernel and faer's portable path agree entry by entry to
/// rounding on a product large enough to use every loop of the packed one.
#[test]
fn dispatched_and_portable_kernels_agree() {
    let (m, n, k) = (700, 450, 900);
    let (a, b) = (random_matrix(m, k, 21), random_matrix(k, n, 22));
    let c0 = random_matrix(m, n, 23);
    let mut results = Vec::new();
    for kernel in kernels() {
        let mut c = c0.clone();
        pool(2)
            .install(|| {
                Gemm::new(Op::NoTrans, Op::NoTrans, 1.0, 1.0).run_with(
                    kernel,
                    ALWAYS,
                    a.as_ref(),
                    b.as_ref(),
                    c.as_mut(),
                )
            })
            .expect("valid arguments");
        results.push(c);
    }
    // Both are within γ_{k+1}·(|A|·|B| + |C₀|) of the exact entry (the
    // standard dot-product bound), so within twice that of each other.
    let abs = |x: &Mat<f64>| Mat::from_fn(x.nrows(), x.ncols(), |i, j| x[(i, j)].abs());
    let mut abs_ab = Mat::zeros(m, n);
    matmul(abs_ab.as_mut(), Accum::Replace, abs(&a).as_ref(), abs(&b).as_ref(), 1.0, Par::Seq);
    let gamma = (k + 1) as f64 * f64::EPSILON / (1.0 - (k + 1) as f64 * f64::EPSILON);
    let portable = results.last().expect("faer's kernel is always run");
    for (kernel, packed) in kernels().iter().zip(&results) {
        for j in 0..n {
            for i in 0..m {
                let d = (packed[(i, j)] - portable[(i, j)]).abs();
                let bound = 2.0 * gamma * (abs_ab[(i, j)] + c0[(i, j)].abs());
                assert!(d <= bound, "{kernel:?} ({i}, {j}): {d:e} > {bound:e}");
            }
        }
    }
}

/// On a CPU with AVX-512F the dispatch picks herd's AVX-512 kernel, on one
/// with AVX2 and FMA but not AVX-512F its AVX2 kernel, and faer's
/// elsewhere.
#[test]
fn dispatch_follows_the_cpu() {
    let detected = Kernel::detect();
    #[cfg(target_arch = "x86_64")]
    {
        let avx512 = is_x86_feature_detected!("avx512f");
        let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
        assert_eq!(matches!(detected, Kernel::Avx512(_)), avx512);
        assert_eq!(matches!(detected, Kernel::Avx2(_)), avx2 && !avx512);
        assert_eq!(matches!(detected, Kernel::Faer), !avx2 && !avx512);
    }
    #[cfg(not(target_arch = "x86_64"))]
    assert!(matches!(detected, Kernel::Faer));
    assert_eq!(super::gemm_kernel(), detected.name());
}

/// `Gemm::run` leaves narrow blocks to faer and keeps wide ones on the
/// detected kernel.
#[test]
fn narrow_blocks_go_to_faer() {
    let detected = Kernel::detect();
    for (rows, cols) in [(1, 4000), (255, 255), (4000, 100)] {
        assert!(matches!(detected.for_block(rows, cols), Kernel::Faer), "{rows}x{cols}");
    }
    for (rows, cols) in [(256, 256), (2000, 4000)] {
        assert_eq!(format!("{:?}", detected.for_block(rows, cols)), format!("{detected:?}"), "{rows}x{cols}");
    }
}

/// The grid `Blocking::Auto` cuts for large pools: the row blocks of a grid
/// column (its "column group") all need the same panels of `B`, so without
/// shared panels `B` is packed `br` times per call (issue 15). Recorded for
/// P = 16, 64, 128 (the pools of the nodes herd is for).
#[test]
fn auto_grid_of_large_pools() {
    let cut = |shape, p| {
        let g = Grid::auto(shape, p);
        (g.br, g.bc)
    };
    // Square n = 4000 and n = 8000 products, the rank-K update (K = 256):
    // `br` row blocks per grid column, so `B` packed `br` times per call
    // without shared panels (132 blocks for 128: the squarest cut).
    for shape in [(4000, 4000, 4000), (8000, 8000, 8000), (4000, 4000, 256)] {
        assert_eq!(cut(shape, 2), (2, 1));
        assert_eq!(cut(shape, 16), (4, 4));
        assert_eq!(cut(shape, 64), (8, 8));
        assert_eq!(cut(shape, 128), (12, 11));
    }
    assert_eq!(cut((4000, 4000, 256), 8), (3, 3));
    assert_eq!(cut((2000, 2000, 2000), 8), (3, 3));
    // n = 2000 on 128: blocks of 168 × 182, under the packed product's
    // smallest side (faer's kernel, nothing shared).
    assert_eq!(Grid::auto((2000, 2000, 64), 128), Grid { mb: 168, nb: 182, br: 12, bc: 11 });
}

/// `B` packed once per panel per column group: the values of every panel of
/// every group's columns, `k × (its columns rounded up to NR per panel)`.
#[cfg(target_arch = "x86_64")]
fn b_once(kernel: Kernel, grid: Grid, n: usize, k: usize) -> usize {
    (0..grid.bc)
        .map(|g| {
            let cols = grid.nb.min(n - g * grid.nb);
            let (nr, (_, nc_step)) = kernel.packing(cols, k).expect("a packed kernel");
            (0..cols)
                .step_by(nc_step)
                .map(|jc| nc_step.min(cols - jc).next_multiple_of(nr) * k)
                .sum::<usize>()
        })
        .sum()
}

/// Runs `gemm` (every block on the packed kernel) with `sharing` on `pool`
/// and returns `C` and the counts.
fn counted(
    pool: &herd::Pool,
    kernel: Kernel,
    sharing: Sharing,
    (m, n, k): (usize, usize, usize),
    blocking: Blocking,
) -> (Mat<f64>, PackCounts) {
    let (a, b) = (random_matrix(m, k, 31), random_matrix(n, k, 32));
    let mut c = random_matrix(m, n, 33);
    let counts = pool
        .install(|| {
            Gemm::new(Op::NoTrans, Op::Trans, -1.0, 1.0).blocking(blocking).run_counted(
                kernel,
                ALWAYS,
                sharing,
                a.as_ref(),
                b.as_ref(),
                c.as_mut(),
            )
        })
        .expect("valid arguments");
    (c, counts)
}

/// Shared panels give the same `C`, bit for bit, as every block packing its
/// own (same packed values, same kernel, same order of operations), checked
/// against the reference too, with the default ring and with one that holds
/// every panel; with the latter (and with the default one when the product
/// has no more panels than it has slots: rank-K updates), `B` is
/// packed exactly once per panel per column group, against `br` times per
/// panel without sharing; `A` is packed as often either way. P = 1..8
/// participants, rank-K (one panel deep) and deeper products, edges.
#[cfg(target_arch = "x86_64")]
#[test]
fn shared_b_panels_packed_once_per_group() {
    for kernel in Kernel::packed_kernels() {
        for threads in 1..=8 {
            let pool = pool(threads);
            for (m, n, k) in [
                (1000usize, 600usize, 64usize),
                (700, 900, 256),
                (1030, 517, 385),
                (640, 1100, 1000),
                (900, 300, 1),
            ] {
                let shape = (m, n, k);
                let blockings = [
                    Blocking::Auto,
                    Blocking::Fixed { rows: m.div_ceil(threads.max(2)), cols: n },
                    Blocking::Fixed { rows: 200, cols: 300 },
                ];
                for blocking in blockings {
                    let grid = Grid::new(blocking, shape, threads).expect("a grid");
                    let (c_old, old) = counted(&pool, kernel, Sharing::Never, shape, blocking);
                    let (c_new, new) = counted(&pool, kernel, Sharing::Ring(usize::MAX), shape, blocking);
                    let (c_auto, auto) = counted(&pool, kernel, Sharing::Auto, shape, blocking);
                    let what = format!("P={threads} {m}x{n}x{k} {grid:?}");
                    assert!(c_auto == c_old, "{what}: the default ring");
                    assert!(
                        auto.b <= old.b && auto.b - auto.b_private <= b_once(kernel, grid, n, k),
                        "{what}: {auto:?}"
                    );
                    assert!(c_old
                        .col_iter()
                        .zip(c_new.col_iter())
                        .all(|(x, y)| x.iter().zip(y.iter()).all(|(u, v)| u.to_bits() == v.to_bits())));
                    let (a, b) = (random_matrix(m, k, 31), random_matrix(n, k, 32));
                    let want = reference(Op::NoTrans, Op::Trans, -1.0, &a, &b, 1.0, &random_matrix(m, n, 33));
                    let r = ratio((&c_new, &want), (-1.0, &a, &b, k), 1.0, &random_matrix(m, n, 33));
                    assert!(r < THRESHOLD, "{what}: ratio {r}");
                    let once = b_once(kernel, grid, n, k);
                    assert_eq!(old.b, grid.br * once, "{what}: without sharing, B once per block");
                    assert_eq!(old.b_private, old.b, "{what}");
                    assert_eq!(new.a, old.a, "{what}: A packed as before");
                    let panels = (0..grid.bc)
                        .map(|g| {
                            let cols = grid.nb.min(n - g * grid.nb);
                            let (_, (kc, nc)) = kernel.packing(cols, k).expect("a packed kernel");
                            k.div_ceil(kc) * cols.div_ceil(nc)
                        })
                        .max();
                    if grid.br >= SHARE_MIN_MEMBERS && panels <= Some(RING_SLOTS) {
                        assert_eq!(auto.b, once, "{what}: every panel in the default ring, B once per group");
                    }
                    if grid.br < SHARE_MIN_MEMBERS {
                        assert_eq!(auto, old, "{what}: groups this small pack per block by default");
                    }
                    if grid.br >= 2 {
                        assert_eq!(new.b, once, "{what}: B once per panel per group");
                        assert_eq!(new.b_private, 0, "{what}");
                    } else {
                        assert_eq!(new, old, "{what}: a group of one block packs as before");
                    }
                }
            }
        }
    }
}

/// A ring smaller than the panels (slots reused): members that come late
/// or find a slot still read pack privately, never wait; `C` is still bit
/// for bit the unshared one, each panel is packed into the ring at most
/// once, and no panel is packed more often than without sharing.
#[cfg(target_arch = "x86_64")]
#[test]
fn small_ring_reuses_slots_and_falls_back() {
    for kernel in Kernel::packed_kernels() {
        // 8 panels deep (k = 3000: kc = 375) for each group; ring of 2 slots.
        let (m, n, k) = (600, 500, 3000);
        let ring = 2;
        for threads in [1, 2, 3, 4, 8] {
            let pool = pool(threads);
            for blocking in
                [Blocking::Fixed { rows: 100, cols: 500 }, Blocking::Fixed { rows: 150, cols: 250 }]
            {
                let grid = Grid::new(blocking, (m, n, k), threads).expect("a grid");
                let (c_old, old) = counted(&pool, kernel, Sharing::Never, (m, n, k), blocking);
                let (c_new, new) = counted(&pool, kernel, Sharing::Ring(ring), (m, n, k), blocking);
                let what = format!("P={threads} {grid:?} {new:?}");
                assert!(c_old
                    .col_iter()
                    .zip(c_new.col_iter())
                    .all(|(x, y)| x.iter().zip(y.iter()).all(|(u, v)| u.to_bits() == v.to_bits())));
                let once = b_once(kernel, grid, n, k);
                assert!(new.b - new.b_private <= once, "{what}: a panel packed twice into the ring");
                assert!(new.b >= once && new.b <= old.b, "{what}");
                assert_eq!(new.a, old.a, "{what}");
            }
        }
    }
}

/// Fewer participants than members, and members that never come together:
/// one participant runs a group's blocks one after another (the first packs
/// every panel, the others find them packed); two products at once on a
/// 2-participant pool, each from one side of a `join`, with 8-member groups;
/// a product beside a participant kept busy. All finish with `C` right.
#[cfg(target_arch = "x86_64")]
#[test]
fn absent_and_busy_members_never_block() {
    for kernel in Kernel::packed_kernels() {
        let (m, n, k) = (800, 700, 500);
        let eight = Blocking::Fixed { rows: 100, cols: 350 };
        let grid = Grid::new(eight, (m, n, k), 1).expect("a grid");
        let (c_ref, _) = counted(&pool(1), kernel, Sharing::Never, (m, n, k), eight);
        let (c_one, one) = counted(&pool(1), kernel, Sharing::Auto, (m, n, k), eight);
        assert_eq!(one.b, b_once(kernel, grid, n, k), "one participant packs B once per group");
        assert!(c_one == c_ref);
        let two = pool(2);
        let (x, y) = two.install(|| {
            herd::join(
                || counted(&two, kernel, Sharing::Auto, (m, n, k), eight),
                || counted(&two, kernel, Sharing::Auto, (m, n, k), eight),
            )
        });
        assert!(x.0 == c_ref && y.0 == c_ref);
        let busy = std::sync::atomic::AtomicBool::new(false);
        let (_, z) = two.install(|| {
            herd::join(
                || {
                    let t = std::time::Instant::now();
                    while t.elapsed() < std::time::Duration::from_millis(200) && !busy.load(Ordering::Relaxed)
                    {
                        std::hint::spin_loop();
                    }
                },
                || {
                    let r = counted(&two, kernel, Sharing::Auto, (m, n, k), eight);
                    busy.store(true, Ordering::Relaxed);
                    r
                },
            )
        });
        assert!(z.0 == c_ref);
    }
}

/// Every block of the grid can run at the same time as every other: with as
/// many participants as blocks, each block waits (up to 3 s) until all have
/// started. As the leaves of a `herd::join` tree they could not be sure to —
/// a participant blocked in a leaf exposes nothing, and a join exposes more
/// than one continuation only while participants sleep (one per join call
/// spread a 16-block product over about 2 of 16 cores); spawned in a scope,
/// every block is stealable at once.
#[test]
fn every_block_can_run_at_once() {
    use std::sync::atomic::{AtomicBool, AtomicUsize};
    use std::time::{Duration, Instant};
    const BLOCKS: usize = 8;
    let pool = pool(BLOCKS);
    let mut c = Mat::<f64>::zeros(64 * BLOCKS, 64);
    let grid = Grid::new(Blocking::Fixed { rows: 64, cols: 64 }, (64 * BLOCKS, 64, 1), BLOCKS).unwrap();
    assert_eq!(grid.br * grid.bc, BLOCKS);
    let (started, together) = (AtomicUsize::new(0), AtomicBool::new(true));
    pool.install(|| {
        for_each_block(c.as_mut(), grid, &|_, _, _| {
            started.fetch_add(1, Ordering::SeqCst);
            let t = Instant::now();
            while started.load(Ordering::SeqCst) < BLOCKS {
                if t.elapsed() > Duration::from_secs(3) {
                    together.store(false, Ordering::SeqCst);
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    });
    assert_eq!(started.load(Ordering::SeqCst), BLOCKS);
    assert!(together.load(Ordering::SeqCst), "some block started only after another had given up waiting");
}
