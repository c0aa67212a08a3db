//! The distributed tiled Cholesky factorization (lower) on [`DistGraph`]: the step structure
//! of herd-la's dataflow Cholesky (`herd_la::potrf_flow`: `potrf(k)`, `trsm(i, k)`,
//! `update(i, j, k)`, its priorities and its tile kernels, [`herd_la::Backend`]) with the
//! tiles spread 2-D block-cyclically over a [`ProcessGrid`].
//!
//! * Each rank generates and keeps the lower tiles it owns ([`tiles`]: `A = G + n·I`, no rank
//!   ever holds the global matrix). Each step runs on the owner of the tile it writes
//!   (`compute_on`), updating that tile in place.
//! * Item `ver[(i, j, v)]` (no data, never leaves its rank) says tile (i, j) has had its first
//!   `v` updates; item `fin[(i, k)]` is the final factor tile `L(i, k)`, put by `potrf(k)`
//!   or `trsm(i, k)` (the tile moves from the local store into the item, no copy) and
//!   forwarded to the ranks of the steps that read it (`consumed_on`): the owners of the
//!   tiles of column `k` below the diagonal for `L(k, k)`; of row `i` (columns `k+1..=i`)
//!   and column `i` (rows `i..nt`) for `L(i, k)`. On those ranks it is freed after its last
//!   local get (get-count); the owner keeps its own final tiles: they are the factor.
//!
//! Verification: [`DistFactor::residual`] is the O(n²) check `‖A·x − L·(Lᵀ·x)‖₂ /
//! (max(‖A‖_F, ‖L‖_F²)·‖x‖₂·n·ε)` computed from each rank's tiles with two all-reduces of
//! length-n vectors (herd-la's `residual_probe` scaling; a backward-stable factorization
//! gives values of order 1, the tests accept below [`RESIDUAL_LIMIT`]);
//! [`DistFactor::gather`] brings the factor to every rank for comparisons at small n.

pub mod tiles;

use crate::error::{MpiError, Result};
use crate::flow::{wire::F64s, DistGraph, DistStats};
use crate::{Mpi, ProcessGrid};
use herd_flow::{Ctx, Deps, Items, StepError, Tuner};
use herd_la::{potrf_priority, Backend, LaError, Tile, TiledMatrix};
use serde::de::Deserializer;
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The residual below which a factor is accepted (herd-la's tests use the same bound for
/// its scaled residuals).
pub const RESIDUAL_LIMIT: f64 = 10.0;

type Ver = (usize, usize, usize);
type Pos = (usize, usize);

/// A factor tile as an item: serialized as its shape and its elements' raw bytes.
#[derive(Debug)]
pub struct TileItem(pub Tile);

impl Serialize for TileItem {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        // The elements go as one run of raw bytes (wire::F64s), copied once into the message.
        (self.0.rows() as u32, self.0.cols() as u32, serde_bytes_ref(self.0.data())).serialize(s)
    }
}

/// The raw bytes of `f64`s as a serde byte string.
fn serde_bytes_ref(d: &[f64]) -> RawBytes<'_> {
    RawBytes(crate::flow::wire::f64_bytes(d))
}

struct RawBytes<'a>(&'a [u8]);

impl Serialize for RawBytes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

impl<'de> Deserialize<'de> for TileItem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<TileItem, D::Error> {
        use serde::de::Error;
        let (rows, cols, data): (u32, u32, F64s) = Deserialize::deserialize(d)?;
        let (rows, cols) = (rows as usize, cols as usize);
        if data.0.len() != rows * cols {
            return Err(D::Error::custom(format!("a {rows}×{cols} tile with {} elements", data.0.len())));
        }
        let mut t = Tile::zeros(rows, cols);
        t.data_mut().copy_from_slice(&data.0);
        Ok(TileItem(t))
    }
}

/// The shape of a distributed factorization.
#[derive(Clone, Copy, Debug)]
struct Shape {
    n: usize,
    nb: usize,
    nt: usize,
    grid: ProcessGrid,
}

impl Shape {
    fn owner(&self, i: usize, j: usize) -> usize {
        self.grid.owner(i, j)
    }
    /// The ranks of the steps that read `L(i, k)`, and how many of them run on `rank`.
    fn consumers(&self, i: usize, k: usize) -> Vec<usize> {
        let mut out = Vec::new();
        if i == k {
            out.extend((k + 1..self.nt).map(|m| self.owner(m, k)));
        } else {
            out.extend((k + 1..=i).map(|j| self.owner(i, j)));
            out.extend((i + 1..self.nt).map(|m| self.owner(m, i)));
        }
        out.sort_unstable();
        out.dedup();
        out
    }
    fn local_gets(&self, i: usize, k: usize, rank: usize) -> usize {
        if i == k {
            (k + 1..self.nt).filter(|&m| self.owner(m, k) == rank).count()
        } else {
            (k + 1..=i).filter(|&j| self.owner(i, j) == rank).count()
                + (i + 1..self.nt).filter(|&m| self.owner(m, i) == rank).count()
        }
    }
    /// The lower tiles `rank` owns, row by row.
    fn owned(&self, rank: usize) -> impl Iterator<Item = Pos> + '_ {
        (0..self.nt)
            .flat_map(move |i| (0..=i).map(move |j| (i, j)))
            .filter(move |&(i, j)| self.owner(i, j) == rank)
    }
}

struct PotrfTuner {
    s: Shape,
    ver: Items<Ver, ()>,
}
impl Tuner<usize> for PotrfTuner {
    fn depends(&self, &k: &usize, deps: &mut Deps) {
        deps.item(&self.ver, (k, k, k));
    }
    fn priority(&self, &k: &usize) -> i64 {
        potrf_priority(self.s.nt, k, 3)
    }
    fn compute_on(&self, &k: &usize) -> usize {
        self.s.owner(k, k)
    }
}

struct TrsmTuner {
    s: Shape,
    ver: Items<Ver, ()>,
    fin: Items<Pos, TileItem>,
}
impl Tuner<Pos> for TrsmTuner {
    fn depends(&self, &(i, k): &Pos, deps: &mut Deps) {
        deps.item(&self.ver, (i, k, k));
        deps.item(&self.fin, (k, k));
    }
    fn priority(&self, &(_, k): &Pos) -> i64 {
        potrf_priority(self.s.nt, k, 2)
    }
    fn compute_on(&self, &(i, k): &Pos) -> usize {
        self.s.owner(i, k)
    }
}

struct UpdateTuner {
    s: Shape,
    ver: Items<Ver, ()>,
    fin: Items<Pos, TileItem>,
}
impl Tuner<Ver> for UpdateTuner {
    fn depends(&self, &(i, j, k): &Ver, deps: &mut Deps) {
        deps.item(&self.ver, (i, j, k));
        deps.item(&self.fin, (i, k));
        if j != i {
            deps.item(&self.fin, (j, k));
        }
    }
    fn priority(&self, &(_, j, k): &Ver) -> i64 {
        potrf_priority(self.s.nt, k, i64::from(j == k + 1))
    }
    fn compute_on(&self, &(i, j, _): &Ver) -> usize {
        self.s.owner(i, j)
    }
}

/// The tiles a rank owns while they are being updated.
type Store = HashMap<Pos, Mutex<Tile>>;

fn la(e: LaError) -> StepError {
    StepError::msg(e)
}

/// Takes the finished tile out of the store (it becomes the item).
fn take(store: &Store, p: Pos) -> Tile {
    std::mem::replace(&mut *store[&p].lock().unwrap_or_else(|e| e.into_inner()), Tile::zeros(0, 0))
}

/// One rank's share of a distributed factor: the final tiles `L(i, j)` it owns.
pub struct DistFactor {
    s: Shape,
    rank: usize,
    seed: u64,
    tiles: BTreeMap<Pos, Arc<TileItem>>,
}

/// What [`factor`] did and found.
#[derive(Debug, Clone)]
pub struct PotrfRun {
    /// Order of the matrix.
    pub n: usize,
    /// Tile size.
    pub nb: usize,
    /// The process grid.
    pub grid: ProcessGrid,
    /// herd threads per rank.
    pub threads: usize,
    /// Seconds of the factorization (from a barrier to the end of the graph's `wait`, the
    /// slowest rank's).
    pub seconds: f64,
    /// The scaled residual ([`DistFactor::residual`]).
    pub residual: f64,
    /// This rank's graph counters.
    pub stats: DistStats,
    /// Messages all ranks sent.
    pub messages: u64,
    /// Bytes all ranks sent.
    pub bytes: u64,
}

fn check_args(mpi: &Mpi, n: usize, nb: usize, grid: ProcessGrid) -> Result<Shape> {
    if nb == 0 {
        return Err(MpiError::Invalid("potrf: the tile size nb must be at least 1".into()));
    }
    if grid.size() != mpi.size() {
        return Err(MpiError::Invalid(format!(
            "potrf: a {}×{} process grid needs {} ranks, this run has {}",
            grid.rows,
            grid.cols,
            grid.size(),
            mpi.size()
        )));
    }
    Ok(Shape { n, nb, nt: n.div_ceil(nb), grid })
}

/// Factors the `n × n` test matrix of [`tiles`] (with `seed`) in tiles of `nb` over the ranks
/// of `grid` (which must match the number of ranks), then checks the factor with the
/// distributed residual. Collective. Errors: bad arguments, a step error on any rank (named),
/// MPI failures; a residual above [`RESIDUAL_LIMIT`] is returned in the result, not an error.
pub fn factor(mpi: &Arc<Mpi>, n: usize, nb: usize, grid: ProcessGrid, seed: u64) -> Result<PotrfRun> {
    let (f, stats, seconds) = factor_distributed(mpi, n, nb, grid, seed)?;
    let residual = f.residual(mpi)?;
    let sums = allreduce_sum(mpi, vec![stats.sent as f64, stats.bytes_sent as f64]);
    Ok(PotrfRun {
        n,
        nb,
        grid,
        threads: herd::current_num_threads(),
        seconds,
        residual,
        stats,
        messages: sums[0] as u64,
        bytes: sums[1] as u64,
    })
}

/// The factorization alone: this rank's share of the factor, its graph counters, and the
/// seconds (slowest rank) from a barrier to the end of the graph.
pub fn factor_distributed(
    mpi: &Arc<Mpi>,
    n: usize,
    nb: usize,
    grid: ProcessGrid,
    seed: u64,
) -> Result<(DistFactor, DistStats, f64)> {
    let s = check_args(mpi, n, nb, grid)?;
    let rank = mpi.rank();
    let backend = Backend::default();
    let store: Arc<Store> = Arc::new(
        s.owned(rank).map(|(i, j)| ((i, j), Mutex::new(tiles::matrix_tile(n, nb, seed, i, j)))).collect(),
    );
    let dg = DistGraph::new(mpi, "potrf");
    let ver = dg.items::<Ver, ()>("ver").with_consumed_on(move |&(i, j, _)| s.owner(i, j));
    let fin = dg
        .items::<Pos, TileItem>("fin")
        .with_consumers(move |&(i, k)| s.consumers(i, k))
        .with_get_count(move |&(i, k)| if s.owner(i, k) == rank { 0 } else { s.local_gets(i, k, rank) });

    let potrf = {
        let (st, v, f) = (store.clone(), ver.clone(), fin.clone());
        dg.steps_tuned("potrf", PotrfTuner { s, ver: ver.clone() }, move |&k: &usize, ctx: &Ctx<'_>| {
            ctx.get(&v, &(k, k, k))?;
            {
                let mut t = st[&(k, k)].lock().unwrap_or_else(|e| e.into_inner());
                backend.potrf(&mut t).map_err(|e| match e {
                    LaError::NotPositiveDefinite { column } => {
                        la(LaError::NotPositiveDefinite { column: k * nb + column })
                    }
                    e => la(e),
                })?;
            }
            ctx.put(&f, (k, k), TileItem(take(&st, (k, k))))?;
            Ok(())
        })
    };
    let trsm = {
        let (st, v, f) = (store.clone(), ver.clone(), fin.clone());
        dg.steps_tuned(
            "trsm",
            TrsmTuner { s, ver: ver.clone(), fin: fin.clone() },
            move |&(i, k): &Pos, ctx: &Ctx<'_>| {
                ctx.get(&v, &(i, k, k))?;
                let l = ctx.get(&f, &(k, k))?;
                backend.trsm(&l.0, &mut st[&(i, k)].lock().unwrap_or_else(|e| e.into_inner())).map_err(la)?;
                ctx.put(&f, (i, k), TileItem(take(&st, (i, k))))?;
                Ok(())
            },
        )
    };
    let update = {
        let (st, v, f) = (store.clone(), ver.clone(), fin.clone());
        dg.steps_tuned(
            "update",
            UpdateTuner { s, ver: ver.clone(), fin: fin.clone() },
            move |&(i, j, k): &Ver, ctx: &Ctx<'_>| {
                ctx.get(&v, &(i, j, k))?;
                let li = ctx.get(&f, &(i, k))?;
                let mut t = st[&(i, j)].lock().unwrap_or_else(|e| e.into_inner());
                if i == j {
                    backend.syrk(&li.0, &mut t).map_err(la)?;
                } else {
                    let lj = ctx.get(&f, &(j, k))?;
                    backend.gemm(&li.0, &lj.0, &mut t).map_err(la)?;
                }
                drop(t);
                ctx.put(&v, (i, j, k + 1), ())?;
                Ok(())
            },
        )
    };
    let (pt, tt, ut) = (dg.tags::<usize>("k"), dg.tags::<Pos>("ik"), dg.tags::<Ver>("ijk"));
    pt.prescribes(&potrf);
    tt.prescribes(&trsm);
    ut.prescribes(&update);

    mpi.barrier();
    let t0 = Instant::now();
    // Each rank puts its own tiles' initial versions and the tags of its own steps (a tag
    // put elsewhere would be routed here).
    for (i, j) in s.owned(rank) {
        ver.put((i, j, 0), ()).map_err(|e| MpiError::Invalid(e.to_string()))?;
        if i == j {
            pt.put(i);
        } else {
            tt.put((i, j));
        }
        // update(i, j, k) writes tile (i, j) for every k < j.
        for k in 0..j {
            ut.put((i, j, k));
        }
    }
    let stats = dg.wait()?;
    let local = t0.elapsed().as_secs_f64();
    let seconds = allreduce_max(mpi, local);
    let tiles = s
        .owned(rank)
        .map(|p| {
            fin.get(&p).map(|t| (p, t)).ok_or_else(|| {
                MpiError::Invalid(format!(
                    "potrf: rank {rank} lacks its final tile {p:?} after the graph ended"
                ))
            })
        })
        .collect::<Result<BTreeMap<_, _>>>()?;
    Ok((DistFactor { s, rank, seed, tiles }, stats, seconds))
}

fn allreduce_sum(mpi: &Mpi, v: Vec<f64>) -> Vec<f64> {
    use mpi::collective::{CommunicatorCollectives, SystemOperation};
    mpi.run(move |w| {
        let mut out = vec![0.0; v.len()];
        w.all_reduce_into(&v[..], &mut out[..], SystemOperation::sum());
        out
    })
}

fn allreduce_max(mpi: &Mpi, x: f64) -> f64 {
    use mpi::collective::{CommunicatorCollectives, SystemOperation};
    mpi.run(move |w| {
        let mut out = 0.0;
        w.all_reduce_into(&x, &mut out, SystemOperation::max());
        out
    })
}

/// `y[r0..] += op(T)·x[c0..]` over the tile's lower triangle only when `lower`.
fn tile_matvec(t: &Tile, trans: bool, lower: bool, x: &[f64], y: &mut [f64]) {
    let (r, c, d) = (t.rows(), t.cols(), t.data());
    for jj in 0..c {
        let col = &d[jj * r..(jj + 1) * r];
        let start = if lower { jj } else { 0 };
        if trans {
            let mut acc = 0.0;
            for ii in start..r {
                acc += col[ii] * x[ii];
            }
            y[jj] += acc;
        } else {
            let xj = x[jj];
            for ii in start..r {
                y[ii] += col[ii] * xj;
            }
        }
    }
}

impl DistFactor {
    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The same tiles, checked against the matrix of another seed (a factor of the wrong
    /// matrix, for testing that [`residual`](Self::residual) rejects one).
    pub fn with_seed(self, seed: u64) -> DistFactor {
        DistFactor { seed, ..self }
    }

    /// The final tiles this rank owns.
    pub fn tiles(&self) -> impl Iterator<Item = (Pos, &Tile)> {
        self.tiles.iter().map(|(&p, t)| (p, &t.0))
    }

    /// The distributed O(n²) residual `‖A·x − L·(Lᵀ·x)‖₂ / (max(‖A‖_F, ‖L‖_F²)·‖x‖₂·n·ε)`
    /// with the probe vector of [`tiles::probe_vector`]; `A`'s tiles are generated again
    /// from the seed. Collective (two all-reduces of length-n vectors).
    pub fn residual(&self, mpi: &Mpi) -> Result<f64> {
        let Shape { n, nb, .. } = self.s;
        if n == 0 {
            return Ok(0.0);
        }
        let x = tiles::probe_vector(n);
        // y = Lᵀx
        let mut y = vec![0.0; n];
        for (&(i, j), t) in &self.tiles {
            let (yi, xi) = (j * nb, i * nb);
            let (r, c) = (t.0.rows(), t.0.cols());
            tile_matvec(&t.0, true, i == j, &x[xi..xi + r], &mut y[yi..yi + c]);
        }
        let y = allreduce_sum(mpi, y);
        // z = L y, w = A x, and the squared norms, in one reduction.
        let mut zw = vec![0.0; 2 * n + 2];
        let (a2, l2) = (2 * n, 2 * n + 1);
        for (&(i, j), t) in &self.tiles {
            let (r, c) = (t.0.rows(), t.0.cols());
            let (ri, cj) = (i * nb, j * nb);
            tile_matvec(&t.0, false, i == j, &y[cj..cj + c], &mut zw[ri..ri + r]);
            let a = tiles::matrix_tile(n, nb, self.seed, i, j);
            tile_matvec(&a, false, false, &x[cj..cj + c], &mut zw[n + ri..n + ri + r]);
            if i != j {
                tile_matvec(&a, true, false, &x[ri..ri + r], &mut zw[n + cj..n + cj + c]);
            }
            let sq: f64 = a.data().iter().map(|v| v * v).sum();
            zw[a2] += if i == j { sq } else { 2.0 * sq };
            for jj in 0..c {
                let start = if i == j { jj } else { 0 };
                zw[l2] += t.0.data()[jj * r + start..(jj + 1) * r].iter().map(|v| v * v).sum::<f64>();
            }
        }
        let zw = allreduce_sum(mpi, zw);
        let diff = (0..n).map(|k| (zw[n + k] - zw[k]).powi(2)).sum::<f64>().sqrt();
        let xn = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        let scale = zw[a2].sqrt().max(zw[l2]) * xn * n as f64 * f64::EPSILON;
        Ok(if diff == 0.0 { 0.0 } else { diff / scale })
    }

    /// The whole factor on every rank (lower triangle; the strict upper triangle of the
    /// diagonal tiles as the input had it) — an all-gather of n²/2 values: for small n.
    /// Collective.
    pub fn gather(&self, mpi: &Mpi) -> Result<TiledMatrix> {
        let Shape { n, nb, .. } = self.s;
        let mut mine = Vec::new();
        for t in self.tiles.values() {
            mine.extend_from_slice(crate::flow::wire::f64_bytes(t.0.data()));
        }
        let all = crate::flow::allgather_bytes(mpi, mine)?;
        let mut out = TiledMatrix::zeros(n, n, nb).map_err(|e| MpiError::Invalid(e.to_string()))?;
        for (r, bytes) in all.iter().enumerate() {
            let vals = crate::flow::wire::f64s_from_bytes(bytes)
                .ok_or_else(|| MpiError::Invalid(format!("rank {r}'s tiles: {} bytes", bytes.len())))?;
            let mut at = 0;
            for (i, j) in self.s.owned(r) {
                let t = out.tile_get_mut(i, j);
                let len = t.rows() * t.cols();
                let src = vals.get(at..at + len).ok_or_else(|| {
                    MpiError::Invalid(format!("rank {r} sent {} values, too few for its tiles", vals.len()))
                })?;
                t.data_mut().copy_from_slice(src);
                at += len;
            }
        }
        Ok(out)
    }
}
