//! ScaLAPACK's pdpotrf under mpirun on 1, 2 and 4 ranks: the factor gathered to rank 0
//! against faer's sequential Cholesky of the same generated matrix, the distributed residual,
//! and the errors for invalid input.

use herd_mpi::scalapack::{pdpotrf, pdpotrf_gathered, pdpotrf_with};
use herd_mpi::{mpi_test, spd, Mpi, MpiError, Options, ProcessGrid};

fn sequential_l(n: usize, seed: u64) -> faer::Mat<f64> {
    let a = faer::Mat::from_fn(n, n, |i, j| spd::entry(i, j, n, seed));
    a.llt(faer::Side::Lower).expect("the generator is SPD").L().to_owned()
}

mpi_test!(fn pdpotrf_matches_sequential_cholesky() ranks [1, 2, 4] within 120 {
    let mpi = Mpi::init(Options::default()).unwrap();
    let grids = [ProcessGrid::square(mpi.size()).unwrap(), ProcessGrid::new(mpi.size(), 1, mpi.size()).unwrap()];
    for grid in grids {
        for (n, nb, seed) in [(37, 8, 1u64), (64, 16, 2), (200, 32, 3), (5, 16, 4)] {
            let (run, l) = pdpotrf_gathered(&mpi, n, nb, grid, seed).unwrap();
            assert_eq!(run.info, 0);
            assert!(run.seconds > 0.0 && run.seconds.is_finite());
            assert!(run.residual < 1.0, "n {n} nb {nb} grid {grid:?}: residual {}", run.residual);
            if mpi.rank() == 0 {
                let l = l.expect("rank 0 holds the factor");
                let want = sequential_l(n, seed);
                let mut worst = 0.0f64;
                for j in 0..n {
                    for i in 0..n {
                        worst = worst.max((l[i + j * n] - want[(i, j)]).abs());
                    }
                }
                // |L| ≤ sqrt(n + 1); both factorizations are backward stable.
                assert!(worst < 1e-12 * (n as f64), "n {n} nb {nb} grid {grid:?}: max |ΔL| = {worst}");
            } else {
                assert!(l.is_none());
            }
        }
    }
    // the timed path without the gather agrees on the residual
    let run = pdpotrf_with(&mpi, 120, 16, ProcessGrid::square(mpi.size()).unwrap(), 7, 1).unwrap();
    assert!(run.residual < 1.0, "{}", run.residual);
});

mpi_test!(fn pdpotrf_rejects_invalid_input() ranks [1, 2] within 60 {
    let mpi = Mpi::init(Options::default()).unwrap();
    let p = mpi.size();
    let good = ProcessGrid::square(p).unwrap();
    let msg = |e: MpiError| e.to_string();
    let e = msg(pdpotrf(&mpi, 0, 8, good, 1).unwrap_err());
    assert!(e.contains("n = 0"), "{e}");
    let e = msg(pdpotrf(&mpi, 10, 0, good, 1).unwrap_err());
    assert!(e.contains("nb = 0"), "{e}");
    let wrong = ProcessGrid { rows: 2, cols: p };
    let e = msg(pdpotrf(&mpi, 10, 4, wrong, 1).unwrap_err());
    assert!(e.contains(&format!("2×{p} process grid does not match the {p} MPI ranks")), "{e}");
    let e = msg(pdpotrf_with(&mpi, 10, 4, good, 1, 0).unwrap_err());
    assert!(e.contains("thread count"), "{e}");
    // still usable after the errors
    assert!(pdpotrf(&mpi, 10, 4, good, 1).unwrap().residual < 1.0);
});
