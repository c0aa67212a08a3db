//! The scale model of herd's distributed tiled Cholesky: measured tile-kernel times and
//! message costs, and a replay of the tiled Cholesky task graph on `P` simulated nodes
//! ([`replay`]) predicting its time and efficiency on machines this one cannot be. See
//! `README.md` for the model, its assumptions and the numbers.

pub mod replay;

use crate::error::{MpiError, Result};
use crate::grid::ProcessGrid;
use crate::measure::median;
use crate::{spd, Mpi};
use replay::{simulate, Dag, Machine};
use serde::Serialize;
use std::time::Instant;

/// Seconds of each tile kernel on one core for full `nb × nb` tiles.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct KernelTimes {
    /// Tile size they were measured at.
    pub nb: usize,
    /// POTRF of a diagonal tile.
    pub potrf: f64,
    /// TRSM of a tile by a diagonal factor.
    pub trsm: f64,
    /// SYRK update of a diagonal tile.
    pub syrk: f64,
    /// GEMM update of an off-diagonal tile.
    pub gemm: f64,
}

/// A fitted message cost: one message of `b` bytes takes `alpha + beta · b` seconds.
#[derive(Clone, Debug, Serialize)]
pub struct MessageCost {
    /// Latency, seconds.
    pub alpha: f64,
    /// Seconds per byte (the inverse bandwidth).
    pub beta: f64,
    /// The measurements fitted: `(bytes, one-way seconds)` medians.
    pub samples: Vec<(usize, f64)>,
}

/// What the model needs: kernel times and a message cost.
#[derive(Clone, Debug, Serialize)]
pub struct Costs {
    /// Tile kernels, one core.
    pub kernels: KernelTimes,
    /// Latency, seconds.
    pub alpha: f64,
    /// Seconds per byte.
    pub beta: f64,
}

/// A predicted run.
#[derive(Clone, Debug, Serialize)]
pub struct Prediction {
    /// Matrix order.
    pub n: usize,
    /// Tile size.
    pub nb: usize,
    /// Nodes.
    pub nodes: usize,
    /// Compute cores per node.
    pub cores_per_node: usize,
    /// The node grid (2-D block-cyclic ownership of the written tile).
    pub grid: ProcessGrid,
    /// Tasks in the graph.
    pub tasks: usize,
    /// Predicted seconds.
    pub seconds: f64,
    /// Total kernel time, core-seconds.
    pub work: f64,
    /// Compute-only critical path, seconds.
    pub critical_path: f64,
    /// `max(work / (nodes · cores), critical_path)`: no schedule is faster.
    pub lower_bound: f64,
    /// `work / (nodes · cores · seconds)`: the share of all cores' time spent in kernels.
    pub efficiency: f64,
    /// Messages between nodes.
    pub messages: u64,
    /// Bytes between nodes.
    pub bytes: f64,
    /// The busiest node communicator's occupancy, seconds.
    pub max_comm_busy: f64,
    /// `n³/3` flops per predicted second, GFLOP/s.
    pub gflops: f64,
}

/// The tile Cholesky task graph of an `n × n` matrix in `nb` tiles (the last one ragged when
/// `nb` does not divide `n`) on a node grid: POTRF(k), TRSM(k, i), SYRK(k, i), GEMM(k, i, j)
/// for `i > j > k`, each on the owner of the tile it writes, with the dependences of the
/// right-looking algorithm (herd-la's tiled Cholesky): the tile's previous update, and the
/// factors it reads. Kernel costs of ragged tiles scale with their flops.
pub fn cholesky_dag(n: usize, nb: usize, grid: ProcessGrid, k: &KernelTimes) -> Dag {
    let t = n.div_ceil(nb);
    let b = |i: usize| if i + 1 == t { n - i * nb } else { nb } as f64;
    let full = (nb as f64).powi(3);
    let bytes = |i: usize, j: usize| b(i) * b(j) * 8.0;
    let mut dag = Dag::new();
    let mut last: Vec<Option<u32>> = vec![None; t * t];
    let mut trsm = vec![0u32; t];
    let mut preds: Vec<u32> = Vec::with_capacity(3);
    for kk in 0..t {
        let bk = b(kk);
        preds.clear();
        preds.extend(last[kk * t + kk]);
        let p = dag.add(k.potrf * bk.powi(3) / full, grid.owner(kk, kk), bytes(kk, kk), &preds);
        last[kk * t + kk] = Some(p);
        for i in kk + 1..t {
            preds.clear();
            preds.push(p);
            preds.extend(last[i * t + kk]);
            let id = dag.add(k.trsm * b(i) * bk * bk / full, grid.owner(i, kk), bytes(i, kk), &preds);
            last[i * t + kk] = Some(id);
            trsm[i] = id;
        }
        for i in kk + 1..t {
            preds.clear();
            preds.push(trsm[i]);
            preds.extend(last[i * t + i]);
            let id = dag.add(k.syrk * b(i) * b(i) * bk / full, grid.owner(i, i), bytes(i, i), &preds);
            last[i * t + i] = Some(id);
            for j in kk + 1..i {
                preds.clear();
                preds.extend([trsm[i], trsm[j]]);
                preds.extend(last[i * t + j]);
                let id = dag.add(k.gemm * b(i) * b(j) * bk / full, grid.owner(i, j), bytes(i, j), &preds);
                last[i * t + j] = Some(id);
            }
        }
    }
    dag
}

/// Predicts the distributed tiled Cholesky of order `n` in `nb` tiles on `nodes` nodes
/// (the most square grid, [`ProcessGrid::square`]) with `cores_per_node` compute cores each.
///
/// # Errors
/// [`MpiError::Invalid`] when `n`, `nb`, `nodes` or `cores_per_node` is 0, or `nb` is not the
/// tile size the kernels were measured at.
pub fn predict(
    costs: &Costs,
    n: usize,
    nb: usize,
    nodes: usize,
    cores_per_node: usize,
) -> Result<Prediction> {
    if n == 0 || nb == 0 || cores_per_node == 0 {
        return Err(MpiError::Invalid(format!(
            "predict: n = {n}, nb = {nb} and cores_per_node = {cores_per_node} must all be at least 1"
        )));
    }
    if nb != costs.kernels.nb {
        return Err(MpiError::Invalid(format!(
            "predict: nb = {nb}, but the kernel times were measured at nb = {}",
            costs.kernels.nb
        )));
    }
    let grid = ProcessGrid::square(nodes)?;
    let dag = cholesky_dag(n, nb, grid, &costs.kernels);
    let machine = Machine { nodes, cores: cores_per_node, alpha: costs.alpha, beta: costs.beta };
    let s = simulate(&dag, &machine);
    let cores = (nodes * cores_per_node) as f64;
    Ok(Prediction {
        n,
        nb,
        nodes,
        cores_per_node,
        grid,
        tasks: dag.len(),
        seconds: s.makespan,
        work: s.work,
        critical_path: s.critical_path,
        lower_bound: (s.work / cores).max(s.critical_path),
        efficiency: s.work / (cores * s.makespan),
        messages: s.messages,
        bytes: s.bytes,
        max_comm_busy: s.max_comm_busy,
        gflops: (n as f64).powi(3) / 3.0 / s.makespan / 1e9,
    })
}

/// Times herd-la's single-threaded faer tile kernels (the ones herd's tiled Cholesky runs) on
/// `nb × nb` tiles of the [`spd`] matrix on the calling thread: the median of `reps` runs
/// each (inputs copied outside the timing).
///
/// # Errors
/// [`MpiError::Invalid`] for `nb` or `reps` 0.
pub fn measure_kernels(nb: usize, reps: usize) -> Result<KernelTimes> {
    use herd_la::kernels::{faer_gemm, faer_potrf, faer_syrk, faer_trsm};
    if nb == 0 || reps == 0 {
        return Err(MpiError::Invalid(format!(
            "measure_kernels: nb = {nb} and reps = {reps} must be at least 1"
        )));
    }
    let n = 2 * nb;
    let tile =
        |bi: usize, bj: usize| faer::Mat::from_fn(nb, nb, |i, j| spd::entry(bi * nb + i, bj * nb + j, n, 5));
    let a00 = tile(0, 0);
    let mut l00 = a00.clone();
    faer_potrf(l00.as_mut())
        .map_err(|c| MpiError::Invalid(format!("measure_kernels: tile not SPD at {c}")))?;
    let a10 = tile(1, 0);
    let a11 = tile(1, 1);
    let time = |f: &mut dyn FnMut() -> f64| median(&(0..reps).map(|_| f()).collect::<Vec<_>>());
    let potrf = time(&mut || {
        let mut a = a00.clone();
        let t = Instant::now();
        let _ = faer_potrf(a.as_mut());
        t.elapsed().as_secs_f64()
    });
    let trsm = time(&mut || {
        let mut a = a10.clone();
        let t = Instant::now();
        faer_trsm(l00.as_ref(), a.as_mut());
        t.elapsed().as_secs_f64()
    });
    let syrk = time(&mut || {
        let mut c = a11.clone();
        let t = Instant::now();
        faer_syrk(a10.as_ref(), c.as_mut());
        t.elapsed().as_secs_f64()
    });
    let gemm = time(&mut || {
        let mut c = a11.clone();
        let t = Instant::now();
        faer_gemm(a10.as_ref(), a00.as_ref(), c.as_mut());
        t.elapsed().as_secs_f64()
    });
    Ok(KernelTimes { nb, potrf, trsm, syrk, gemm })
}

/// The tag of the ping-pong messages.
const PING_TAG: i32 = 32_602;

/// Measures one-way message time by ping-pong between ranks 0 and 1 through the
/// communicator thread ([`Mpi::isend`] / [`Mpi::irecv`], as the distributed Cholesky moves
/// tiles) for each size in `sizes` (bytes, rounded down to whole `f64`s), the median of `reps`
/// round trips halved after one warm-up, and fits `alpha + beta · bytes` by least squares.
/// Collective: every rank calls it; ranks beyond 1 only wait; all get rank 0's fit.
///
/// # Errors
/// [`MpiError::Invalid`] with fewer than 2 ranks, fewer than 2 distinct sizes, or 0 reps;
/// communication errors.
pub fn measure_messages(mpi: &Mpi, sizes: &[usize], reps: usize) -> Result<MessageCost> {
    let mut distinct: Vec<usize> = sizes.iter().map(|s| s / 8 * 8).collect();
    distinct.sort_unstable();
    distinct.dedup();
    if mpi.size() < 2 || distinct.len() < 2 || reps == 0 {
        return Err(MpiError::Invalid(format!(
            "measure_messages needs 2 or more ranks (have {}), 2 or more distinct sizes (have {}) and reps ≥ 1 (have {reps})",
            mpi.size(),
            distinct.len()
        )));
    }
    mpi.barrier();
    let mut samples = Vec::new();
    for &size in &distinct {
        let count = size / 8;
        let mut times = Vec::with_capacity(reps);
        for rep in 0..=reps {
            match mpi.rank() {
                0 => {
                    let t = Instant::now();
                    let rx = mpi.irecv::<f64>(1, PING_TAG, count)?;
                    mpi.isend(1, PING_TAG, vec![1.0; count])?.wait()?;
                    rx.wait()?;
                    if rep > 0 {
                        times.push(t.elapsed().as_secs_f64() / 2.0);
                    }
                }
                1 => {
                    let got = mpi.irecv::<f64>(0, PING_TAG, count)?.wait()?;
                    mpi.isend(0, PING_TAG, got)?.wait()?;
                }
                _ => {}
            }
        }
        if mpi.rank() == 0 {
            samples.push((size, median(&times)));
        }
    }
    // least squares on rank 0, broadcast
    let mut fit = [0.0f64; 2];
    if mpi.rank() == 0 {
        let m = samples.len() as f64;
        let sx: f64 = samples.iter().map(|s| s.0 as f64).sum();
        let sy: f64 = samples.iter().map(|s| s.1).sum();
        let sxx: f64 = samples.iter().map(|s| (s.0 as f64).powi(2)).sum();
        let sxy: f64 = samples.iter().map(|s| s.0 as f64 * s.1).sum();
        let beta = (m * sxy - sx * sy) / (m * sxx - sx * sx);
        fit = [(sy - beta * sx) / m, beta];
    }
    let mut flat: Vec<f64> = samples.iter().flat_map(|s| [s.0 as f64, s.1]).collect();
    flat.resize(2 * distinct.len(), 0.0);
    let (fit, flat) = mpi.run(move |w| {
        use mpi::collective::Root;
        use mpi::topology::Communicator;
        let root = w.process_at_rank(0);
        root.broadcast_into(&mut fit[..]);
        root.broadcast_into(&mut flat[..]);
        (fit, flat)
    });
    let samples = flat.chunks(2).map(|c| (c[0] as usize, c[1])).collect();
    Ok(MessageCost { alpha: fit[0], beta: fit[1], samples })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit() -> KernelTimes {
        KernelTimes { nb: 10, potrf: 1.0, trsm: 1.0, syrk: 1.0, gemm: 1.0 }
    }

    #[test]
    fn task_counts_and_work() {
        let g = ProcessGrid::square(1).unwrap();
        for t in [1usize, 2, 3, 7] {
            let dag = cholesky_dag(10 * t, 10, g, &unit());
            let want = t + t * (t - 1) + t * (t - 1) * t.saturating_sub(2) / 6;
            assert_eq!(dag.len(), want, "{t} tiles");
            assert_eq!(dag.work(), want as f64);
        }
    }

    #[test]
    fn one_core_takes_the_work_and_many_cores_the_critical_path() {
        let k = KernelTimes { nb: 8, potrf: 1.0, trsm: 3.0, syrk: 3.0, gemm: 2.0 };
        let costs = Costs { kernels: k, alpha: 0.0, beta: 0.0 };
        let one = predict(&costs, 8 * 6, 8, 1, 1).unwrap();
        assert_eq!(one.seconds, one.work);
        assert_eq!(one.efficiency, 1.0);
        // 6 tiles: at most 15 GEMMs run at once; 4 nodes × 8 cores with free messages
        let wide = predict(&costs, 8 * 6, 8, 4, 8).unwrap();
        assert!(
            (wide.seconds - wide.critical_path).abs() < 1e-9,
            "{} vs {}",
            wide.seconds,
            wide.critical_path
        );
        // critical path by hand: per k < 5 POTRF, TRSM, then the SYRK feeding the next POTRF, and
        // at the end POTRF(5): 5 (1 + 3 + 3) + 1 = 36; the path through a GEMM into the next
        // TRSM, POTRF + TRSM + GEMM = 6, is shorter than POTRF + TRSM + SYRK + POTRF = 7.
        assert_eq!(wide.critical_path, 36.0);
        assert!(wide.seconds >= wide.lower_bound - 1e-9);
    }

    #[test]
    fn two_tiles_on_two_nodes_by_hand() {
        // 1×2 grid: POTRF(0), TRSM(1,0) on node 0; SYRK(1,1), POTRF(1) on node 1; the TRSM
        // output (8×8×8 bytes) crosses once.
        let k = KernelTimes { nb: 8, potrf: 1.0, trsm: 2.0, syrk: 3.0, gemm: 4.0 };
        let costs = Costs { kernels: k, alpha: 0.5, beta: 0.001 };
        let p = predict(&costs, 16, 8, 2, 4).unwrap();
        assert!((p.seconds - (1.0 + 2.0 + 0.5 + 0.512 + 3.0 + 1.0)).abs() < 1e-12, "{}", p.seconds);
        assert_eq!(p.messages, 1);
    }

    #[test]
    fn ragged_tiles_scale_by_flops() {
        let g = ProcessGrid::square(1).unwrap();
        let k = KernelTimes { nb: 10, potrf: 1.0, trsm: 1.0, syrk: 1.0, gemm: 1.0 };
        // 15 = 10 + 5: POTRF 1 + TRSM 0.5 + SYRK 0.25 + POTRF 0.125
        let dag = cholesky_dag(15, 10, g, &k);
        assert!((dag.work() - 1.875).abs() < 1e-12);
    }

    #[test]
    fn invalid_predictions() {
        let costs = Costs { kernels: unit(), alpha: 0.0, beta: 0.0 };
        assert!(predict(&costs, 100, 20, 4, 2).unwrap_err().to_string().contains("measured at nb = 10"));
        assert!(predict(&costs, 0, 10, 4, 2).is_err());
        assert!(predict(&costs, 100, 10, 0, 2).is_err());
        assert!(predict(&costs, 100, 10, 4, 0).is_err());
    }

    #[test]
    fn kernels_measure_positive() {
        let k = measure_kernels(32, 3).unwrap();
        assert!(k.potrf > 0.0 && k.trsm > 0.0 && k.syrk > 0.0 && k.gemm > 0.0, "{k:?}");
        assert!(measure_kernels(0, 3).is_err());
    }
}
