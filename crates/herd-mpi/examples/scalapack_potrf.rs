//! ScaLAPACK's pdpotrf on the shared SPD matrix, timed a few times:
//!
//! ```text
//! mpirun -np 2 target/release/examples/scalapack_potrf [n=8000] [nb=256] [reps=3] [threads=herd's]
//! ```
//!
//! Rank 0 prints each run and the median, and one JSON line.

use herd_mpi::scalapack::pdpotrf_with;
use herd_mpi::{Mpi, Options, ProcessGrid};

fn arg(i: usize, default: usize) -> usize {
    std::env::args()
        .nth(i)
        .map_or(default, |s| s.parse().unwrap_or_else(|_| panic!("argument {i}: {s:?} is not a count")))
}

fn main() -> herd_mpi::Result<()> {
    let (n, nb, reps) = (arg(1, 8000), arg(2, 256), arg(3, 3));
    let threads = arg(4, herd::current_num_threads());
    let mpi = Mpi::init(Options::default())?;
    let grid = ProcessGrid::square(mpi.size())?;
    let mut secs = Vec::new();
    let mut last = None;
    for rep in 0..reps {
        let run = pdpotrf_with(&mpi, n, nb, grid, 42, threads)?;
        if mpi.rank() == 0 {
            println!(
                "pdpotrf n {n} nb {nb} grid {}x{} ranks {} blas threads {:?} ({:?}): run {rep}: {:.3} s, {:.1} GFLOP/s, residual {:.3e}",
                grid.rows, grid.cols, mpi.size(), run.blas_threads, run.blas_core, run.seconds, run.gflops(), run.residual
            );
        }
        secs.push(run.seconds);
        last = Some(run);
    }
    secs.sort_by(f64::total_cmp);
    if let (0, Some(run)) = (mpi.rank(), last) {
        let median = secs[secs.len() / 2];
        println!("median {median:.3} s of {reps}");
        println!(
            "{}",
            serde_json::json!({"scalapack": {"median": median, "samples": secs, "n": n, "nb": nb,
                "ranks": mpi.size(), "grid": grid, "blas_threads": run.blas_threads,
                "blas_core": run.blas_core, "residual": run.residual}})
        );
    }
    Ok(())
}
