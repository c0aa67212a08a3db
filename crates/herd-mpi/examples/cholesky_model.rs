//! The scale model of the distributed tiled Cholesky: measures tile kernels (rank 0, one core)
//! and the message cost (ping-pong between ranks 0 and 1 through the communicator thread),
//! then replays the graph on 1, 2, 4, 16 and 64 simulated nodes of 16 cores:
//!
//! ```text
//! mpirun -np 2 target/release/examples/cholesky_model [nb=256] [cores=16]
//! ```
//!
//! Strong scaling at n = 64 000; weak scaling (constant memory per node) at n = 8000·√P.
//! Each is predicted with the measured message cost and with an assumed network
//! (α = 2 µs, 12.5 GB/s: 100 Gb/s InfiniBand), which this machine cannot measure.

use herd_mpi::model::{measure_kernels, measure_messages, predict, Costs, Prediction};
use herd_mpi::{Mpi, Options};
use std::time::Instant;

fn arg(i: usize, default: usize) -> usize {
    std::env::args()
        .nth(i)
        .map_or(default, |s| s.parse().unwrap_or_else(|_| panic!("argument {i}: {s:?} is not a count")))
}

fn main() -> herd_mpi::Result<()> {
    let (nb, cores) = (arg(1, 256), arg(2, 16));
    let mpi = Mpi::init(Options::default())?;
    let sizes: Vec<usize> = [8usize, 1 << 10, 1 << 14, 1 << 17, nb * nb * 8, 1 << 21].to_vec();
    let msg = measure_messages(&mpi, &sizes, 21)?;
    mpi.barrier();
    let kernels = if mpi.rank() == 0 { Some(measure_kernels(nb, 21)?) } else { None };
    mpi.barrier();
    let Some(kernels) = kernels else { return Ok(()) };
    println!(
        "message one-way medians (bytes, µs): {:?}",
        msg.samples.iter().map(|s| (s.0, (s.1 * 1e7).round() / 10.0)).collect::<Vec<_>>()
    );
    println!(
        "fit: alpha {:.2} µs, beta {:.4} ns/byte ({:.2} GB/s)",
        msg.alpha * 1e6,
        msg.beta * 1e9,
        1e-9 / msg.beta
    );
    println!(
        "tile kernels nb {nb} (faer, 1 core, ms): potrf {:.3} trsm {:.3} syrk {:.3} gemm {:.3} ({:.1} GFLOP/s gemm)",
        kernels.potrf * 1e3,
        kernels.trsm * 1e3,
        kernels.syrk * 1e3,
        kernels.gemm * 1e3,
        2.0 * (nb as f64).powi(3) / kernels.gemm / 1e9
    );
    let networks = [("measured", msg.alpha, msg.beta), ("assumed IB 2us 12.5GB/s", 2e-6, 1.0 / 12.5e9)];
    let mut json = Vec::new();
    for (net, alpha, beta) in networks {
        let costs = Costs { kernels, alpha, beta };
        for (series, nfor) in [
            ("strong n=64000", &(|_p: usize| 64_000usize) as &dyn Fn(usize) -> usize),
            ("weak n=8000*sqrt(P)", &|p: usize| (8000.0 * (p as f64).sqrt()).round() as usize),
        ] {
            println!("\n{net}, {series}, {cores} cores/node");
            println!(
                "{:>5} {:>7} {:>9} {:>9} {:>9} {:>9} {:>8} {:>9} {:>9} {:>6}",
                "P", "n", "tasks", "T s", "W/(Pc) s", "CP s", "eff", "vs 1 node", "GFLOP/s", "sim s"
            );
            let mut t1: Option<Prediction> = None;
            for p in [1usize, 2, 4, 16, 64] {
                let n = nfor(p);
                let clock = Instant::now();
                let pr = predict(&costs, n, nb, p, cores)?;
                let sim = clock.elapsed().as_secs_f64();
                // strong: T1 / (P T_P); weak: (T1 · work_P / work_1) / (P T_P)
                let rel =
                    t1.as_ref().map_or(1.0, |b| b.seconds * (pr.work / b.work) / (p as f64 * pr.seconds));
                println!(
                    "{:>5} {:>7} {:>9} {:>9.3} {:>9.3} {:>9.3} {:>7.1}% {:>8.1}% {:>9.0} {:>6.1}",
                    p,
                    n,
                    pr.tasks,
                    pr.seconds,
                    pr.work / (p * cores) as f64,
                    pr.critical_path,
                    pr.efficiency * 100.0,
                    rel * 100.0,
                    pr.gflops,
                    sim
                );
                json.push(serde_json::json!({"network": net, "series": series, "prediction": pr, "relative_to_1_node": rel}));
                if p == 1 {
                    t1 = Some(pr);
                }
            }
        }
    }
    println!("{}", serde_json::json!({"kernels": kernels, "messages": msg, "predictions": json}));
    Ok(())
}
