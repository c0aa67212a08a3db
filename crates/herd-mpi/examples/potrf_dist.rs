//! Times the distributed Cholesky against herd-la's one-process dataflow Cholesky on the
//! same matrix (measurement driver for issue 16's target).
//!
//! `potrf_dist dist N NB REPS [trace|trace-one-node]` (under mpirun, any number of ranks:
//! `herd_mpi::potrf::factor`; with `trace`, each rank prints its compute participants' step
//! span, busy and idle seconds from the step timeline instead, `potrf::factor_distributed_traced`;
//! `trace-one-node` does the same with herd-la's one-process step order, `potrf::Order::OneNode`)
//! `potrf_dist flow N NB REPS` (one process: `herd_la::potrf_flow` on the global matrix)
//! Prints one line per repetition on rank 0: mode, ranks, threads, n, nb, seconds, residual.

use herd_mpi::potrf::{factor, factor_distributed_traced, tiles, Order};
use herd_mpi::{Mpi, Options, ProcessGrid};
use std::sync::Arc;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: potrf_dist dist|flow N NB REPS [trace|trace-one-node]";
    let mode = args.get(1).expect(usage).clone();
    let num = |i: usize| -> usize { args.get(i).expect(usage).parse().expect(usage) };
    let (n, nb, reps) = (num(2), num(3), num(4));
    match mode.as_str() {
        "dist" => {
            // MPI first: ranks on one node claim their share of it before herd's pool exists.
            let mpi = Arc::new(Mpi::init(Options::default()).expect("MPI"));
            let threads = herd::current_num_threads();
            let grid = ProcessGrid::square(mpi.size()).expect("grid");
            let (trace, order) = match args.get(5).map(String::as_str) {
                None => (false, Order::Columns),
                Some("trace") => (true, Order::Columns),
                Some("trace-one-node") => (true, Order::OneNode),
                Some(other) => panic!("{usage}: the fifth argument is not {other:?}"),
            };
            for rep in 0..reps {
                if trace {
                    let cpu0 = mpi.stats().cpu_ns;
                    let (_, stats, s, idle) =
                        factor_distributed_traced(&mpi, n, nb, grid, rep as u64 + 1, order, true)
                            .expect("factor");
                    let idle = idle.expect("traced");
                    let comm_cpu = (mpi.stats().cpu_ns - cpu0) as f64 * 1e-9;
                    println!(
                        "trace order={order:?} rank={} seconds={s:.4} span={:.4} busy={:.4} idle={:.4} comm_cpu={comm_cpu:.4} sent={}",
                        mpi.rank(),
                        idle.span,
                        idle.busy,
                        idle.gaps,
                        stats.sent
                    );
                    continue;
                }
                let run = factor(&mpi, n, nb, grid, rep as u64 + 1).expect("factor");
                if mpi.rank() == 0 {
                    println!(
                        "dist ranks={} threads={threads} n={n} nb={nb} seconds={:.4} residual={:.2e} messages={} MiB={:.1}",
                        mpi.size(),
                        run.seconds,
                        run.residual,
                        run.messages,
                        run.bytes as f64 / (1 << 20) as f64
                    );
                }
            }
            drop(Arc::try_unwrap(mpi).ok().expect("released"));
        }
        "flow" => {
            let threads = herd::current_num_threads();
            for rep in 0..reps {
                let a = tiles::global_matrix(n, nb, rep as u64 + 1).expect("matrix");
                let orig = a.to_faer();
                let a = Arc::new(a);
                let t0 = Instant::now();
                herd_la::potrf_flow(
                    &a,
                    herd_la::Backend::Faer,
                    herd_flow::Discipline::DependencyCounted,
                    false,
                )
                .expect("potrf_flow");
                let s = t0.elapsed().as_secs_f64();
                let r = herd_la::residual_probe(orig.as_ref(), a.to_faer().as_ref(), 7).expect("residual");
                println!("flow ranks=1 threads={threads} n={n} nb={nb} seconds={s:.4} residual={r:.2e}");
            }
        }
        _ => panic!("{usage}"),
    }
}
