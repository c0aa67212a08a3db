//! The distributed tiled Cholesky under mpirun: the gathered factor equals the single-rank
//! herd-la factorization of the same matrix, and the distributed residual accepts it.

use herd_mpi::potrf::{factor, factor_distributed, factor_distributed_traced, tiles, Order, RESIDUAL_LIMIT};
use herd_mpi::{mpi_test, Mpi, Options, ProcessGrid};
use std::sync::Arc;

mpi_test!(fn factor_matches_single_rank_herd_la() ranks [1, 2, 4] within 180 {
    let mpi = Arc::new(Mpi::init(Options::default()).unwrap());
    let grid = ProcessGrid::square(mpi.size()).unwrap();
    // n a multiple of nb, not one, smaller than one tile, and zero
    for (n, nb, seed) in [(96usize, 16usize, 1u64), (100, 16, 2), (53, 8, 3), (7, 16, 4), (0, 4, 5)] {
        let (f, stats, _) = factor_distributed(&mpi, n, nb, grid, seed).unwrap();
        let nt = n.div_ceil(nb);
        // potrf nt + trsm nt(nt-1)/2 + updates Σ_k (nt-k-1)(nt-k)/2
        let steps: usize = (0..nt).map(|k| 1 + (nt - k - 1) + (nt - k - 1) * (nt - k) / 2).sum();
        assert_eq!(stats.executed_total, steps as u64, "n={n} nb={nb}");
        let l = f.gather(&mpi).unwrap();
        let mut want = tiles::global_matrix(n, nb, seed).unwrap();
        herd_la::potrf_seq_tiled(&mut want).unwrap();
        let mut worst = 0.0f64;
        for j in 0..n {
            for i in j..n {
                let (g, w) = (l.get(i, j).unwrap(), want.get(i, j).unwrap());
                worst = worst.max((g - w).abs() / w.abs().max(1.0));
            }
        }
        // The same kernels on the same tiles in the same per-tile order: equal up to rounding.
        assert!(worst <= 1e-13, "n={n} nb={nb} ranks={}: largest difference {worst:e}", mpi.size());
        let r = f.residual(&mpi).unwrap();
        assert!(r < RESIDUAL_LIMIT, "n={n} nb={nb}: residual {r}");
        // the O(n³) residual of the gathered factor agrees that it is a factor
        if n > 0 {
            let a = tiles::global_matrix(n, nb, seed).unwrap().to_faer();
            let r3 = herd_la::residual(a.as_ref(), l.to_faer().as_ref()).unwrap();
            assert!(r3 < RESIDUAL_LIMIT, "n={n}: {r3}");
        }
    }
    drop(Arc::try_unwrap(mpi).ok().expect("released"));
});

mpi_test!(fn residual_catches_a_wrong_factor_and_bad_arguments_are_refused() ranks [2] within 120 {
    let mpi = Arc::new(Mpi::init(Options::default()).unwrap());
    let grid = ProcessGrid::square(2).unwrap();
    let run = factor(&mpi, 300, 32, grid, 9).unwrap();
    assert!(run.residual < RESIDUAL_LIMIT, "{}", run.residual);
    assert!(run.messages > 0 && run.bytes > 300 * 300 * 8 / 4, "{run:?}");
    // a factor of another matrix (other seed) does not pass the check of this one
    let (f, _, _) = factor_distributed(&mpi, 64, 16, grid, 10).unwrap();
    let (g, _, _) = factor_distributed(&mpi, 64, 16, grid, 11).unwrap();
    assert!(f.residual(&mpi).unwrap() < RESIDUAL_LIMIT);
    let swapped = herd_mpi::potrf::DistFactor::with_seed(g, 10);
    assert!(swapped.residual(&mpi).unwrap() > 1e6, "a wrong factor is rejected");
    assert!(factor(&mpi, 10, 0, grid, 1).is_err(), "nb = 0");
    assert!(factor(&mpi, 10, 4, ProcessGrid { rows: 2, cols: 2 }, 1).is_err(), "grid of 4 on 2 ranks");
    drop(Arc::try_unwrap(mpi).ok().expect("released"));
});

mpi_test!(fn both_step_orders_factor_and_the_trace_covers_the_span() ranks [2, 3] within 120 {
    let mpi = Arc::new(Mpi::init(Options::default()).unwrap());
    let grid = ProcessGrid::square(mpi.size()).unwrap();
    let (n, nb, seed) = (150usize, 16usize, 7u64);
    let mut want = tiles::global_matrix(n, nb, seed).unwrap();
    herd_la::potrf_seq_tiled(&mut want).unwrap();
    for order in [Order::Columns, Order::OneNode] {
        let (f, stats, secs, idle) = factor_distributed_traced(&mpi, n, nb, grid, seed, order, true).unwrap();
        let l = f.gather(&mpi).unwrap();
        for j in 0..n {
            for i in j..n {
                let (g, w) = (l.get(i, j).unwrap(), want.get(i, j).unwrap());
                assert!((g - w).abs() <= 1e-13 * w.abs().max(1.0), "{order:?}: L({i}, {j}) = {g}, not {w}");
            }
        }
        assert!(f.residual(&mpi).unwrap() < RESIDUAL_LIMIT);
        let idle = idle.expect("traced");
        let threads = herd::current_num_threads() as f64;
        assert!(stats.local.executed > 0 && idle.busy > 0.0, "{order:?}: {idle:?}");
        assert!(idle.gaps >= 0.0 && idle.gaps <= idle.span && idle.span <= secs + 1e-3, "{order:?}: {idle:?}, {secs} s");
        assert!(idle.busy <= idle.span * threads + 1e-3, "{order:?}: {idle:?}");
    }
    let (_, _, _, none) = factor_distributed_traced(&mpi, 40, 8, grid, 1, Order::Columns, false).unwrap();
    assert!(none.is_none(), "no trace asked");
    drop(Arc::try_unwrap(mpi).ok().expect("released"));
});
