//! The distributed tiled Cholesky factorization (lower) on [`DistGraph`]: the step structure
//! of herd-la's dataflow Cholesky (`herd_la::potrf_flow`: `potrf(k)`, `trsm(i, k)`,
//! `update(i, j, k)` and its tile kernels, [`herd_la::Backend`]) with the tiles spread 2-D
//! block-cyclically over a [`ProcessGrid`]. Its own step order ([`priority`], [`Order`]):
//! columns in order, so the rank of column `k + 1` factors and sends that panel before it
//! runs step `k`'s trailing updates.
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
//!   local get (get-count); the owner keeps its own final tiles: they are the factor. A tile
//!   is sent once per destination rank, not once per consumer step; a received tile is
//!   decoded straight from the message into its `Tile` (one copy).
//!
//! Verification: [`DistFactor::residual`] is the O(n²) check `‖A·x − L·(Lᵀ·x)‖₂ /
//! (max(‖A‖_F, ‖L‖_F²)·‖x‖₂·n·ε)` computed from each rank's tiles with two all-reduces of
//! length-n vectors (herd-la's `residual_probe` scaling; a backward-stable factorization
//! gives values of order 1, the tests accept below [`RESIDUAL_LIMIT`]);
//! [`DistFactor::gather`] brings the factor to every rank for comparisons at small n.

pub mod tiles;

use crate::error::{MpiError, Result};
use crate::flow::{DistGraph, DistStats};
use crate::{Mpi, ProcessGrid};
use herd_flow::{Ctx, Deps, Items, StepError, Tuner};
use herd_la::{Backend, LaError, Tile, TiledMatrix};
use serde::de::{DeserializeSeed, Deserializer, SeqAccess, Visitor};
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
    /// Reads the shape, then copies the elements' bytes straight from the message into the
    /// tile: one copy on receipt (no intermediate vector of `f64`s).
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<TileItem, D::Error> {
        d.deserialize_tuple(3, TileVisitor)
    }
}

/// Visits `(rows, cols, bytes)`.
struct TileVisitor;

impl<'de> Visitor<'de> for TileVisitor {
    type Value = TileItem;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a tile: rows, cols and the raw bytes of rows·cols f64s")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<TileItem, A::Error> {
        use serde::de::Error;
        let rows: u32 = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(0, &self))?;
        let cols: u32 = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(1, &self))?;
        let tile = Tile::zeros(rows as usize, cols as usize);
        seq.next_element_seed(TileBytes(tile))?
            .map(TileItem)
            .ok_or_else(|| A::Error::invalid_length(2, &self))
    }
}

/// Fills a tile of known shape from a byte string.
struct TileBytes(Tile);

impl<'de> DeserializeSeed<'de> for TileBytes {
    type Value = Tile;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Tile, D::Error> {
        d.deserialize_bytes(self)
    }
}

impl<'de> Visitor<'de> for TileBytes {
    type Value = Tile;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "the {} bytes of a {}×{} tile", self.0.data().len() * 8, self.0.rows(), self.0.cols())
    }
    fn visit_bytes<E: serde::de::Error>(self, b: &[u8]) -> std::result::Result<Tile, E> {
        let mut t = self.0;
        let (rows, cols) = (t.rows(), t.cols());
        let dst = crate::flow::wire::f64_bytes_mut(t.data_mut());
        if b.len() != dst.len() {
            return Err(E::custom(format!(
                "a {rows}×{cols} tile with {} bytes of elements (needs {})",
                b.len(),
                dst.len()
            )));
        }
        dst.copy_from_slice(b);
        Ok(t)
    }
}

/// The shape of a distributed factorization.
#[derive(Clone, Copy, Debug)]
struct Shape {
    n: usize,
    nb: usize,
    nt: usize,
    grid: ProcessGrid,
    order: Order,
}

/// The order in which a rank runs its ready steps (the steps' priorities).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// [`priority`]: columns in order (the default).
    #[default]
    Columns,
    /// herd-la's one-process order (`herd_la::potrf_priority`), for comparison.
    OneNode,
}

impl Shape {
    /// The priority of the step writing tile `(i, j)` with step `k`'s update (see [`priority`]).
    fn priority(&self, i: usize, j: usize, k: usize) -> i64 {
        match self.order {
            Order::Columns => priority(self.nt, i, j, k),
            Order::OneNode if j == k => herd_la::potrf_priority(self.nt, k, if i == k { 3 } else { 2 }),
            Order::OneNode => herd_la::potrf_priority(self.nt, k, i64::from(j == k + 1)),
        }
    }
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

/// Priority (higher first) of the step that writes tile `(i, j)` with the update of step `k`
/// (`potrf(k)` is `(k, k, k)`, `trsm(i, k)` is `(i, k, k)`: the last write of their tiles):
/// columns in order, within a column its rows in order, within a tile its updates in order.
///
/// herd-la's one-process order (`herd_la::potrf_priority`: step `k`'s panel, then the next panel's
/// updates, then the rest of step `k`) lets the trailing updates of step `k` run before
/// `potrf(k + 1)` and `trsm(·, k + 1)`. On one node idle threads pick the panel up; with the
/// columns dealt over ranks the panel is the rank's only way to feed the others: the rank of
/// column `k + 1` must factor it and send `L(·, k + 1)` before its own trailing updates, or
/// the ranks that need it idle (the critical path runs through every column's panel, one
/// rank after the other). Rows in order send `L(i, k)` in the order the consumers' updates
/// of column `k + 1` (row by row) need them. Distinct for every step while `nt ≤ 2²⁰`.
pub fn priority(nt: usize, i: usize, j: usize, k: usize) -> i64 {
    let nt = nt as i64;
    let (i, j, k) = (i as i64, j as i64, k as i64);
    ((nt - j) * nt + (nt - i)) * (nt + 1) + (nt - k)
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
        self.s.priority(k, k, k)
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
    fn priority(&self, &(i, k): &Pos) -> i64 {
        self.s.priority(i, k, k)
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
    fn priority(&self, &(i, j, k): &Ver) -> i64 {
        self.s.priority(i, j, k)
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
    Ok(Shape { n, nb, nt: n.div_ceil(nb), grid, order: Order::Columns })
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
    factor_distributed_traced(mpi, n, nb, grid, seed, Order::Columns, false).map(|(f, st, s, _)| (f, st, s))
}

/// How this rank's compute participants spent the factorization (from herd-flow's step
/// timeline): for finding where a distributed run loses time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Idle {
    /// Seconds from the first step's start to the last step's end on this rank.
    pub span: f64,
    /// Seconds inside steps, summed over the participants.
    pub busy: f64,
    /// Seconds in the gaps of the merged step intervals (no participant in a step).
    pub gaps: f64,
}

impl Idle {
    /// From a step timeline.
    pub fn of(tl: &[herd_flow::timeline::StepRecord]) -> Idle {
        let mut iv: Vec<(u64, u64)> = tl.iter().map(|r| (r.start_ns, r.end_ns)).collect();
        iv.sort_unstable();
        let busy: u64 = iv.iter().map(|&(a, b)| b - a).sum();
        let (mut gaps, mut reach) = (0u64, iv.first().map_or(0, |iv| iv.0));
        for &(a, b) in &iv {
            gaps += a.saturating_sub(reach);
            reach = reach.max(b);
        }
        let span = reach - iv.first().map_or(reach, |iv| iv.0);
        Idle { span: span as f64 * 1e-9, busy: busy as f64 * 1e-9, gaps: gaps as f64 * 1e-9 }
    }
}

/// [`factor_distributed`] with the steps run in `order`, and this rank's [`Idle`] when
/// `trace` (herd-flow records the step timeline: one lock and one record per step).
pub fn factor_distributed_traced(
    mpi: &Arc<Mpi>,
    n: usize,
    nb: usize,
    grid: ProcessGrid,
    seed: u64,
    order: Order,
    trace: bool,
) -> Result<(DistFactor, DistStats, f64, Option<Idle>)> {
    let s = Shape { order, ..check_args(mpi, n, nb, grid)? };
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

    dg.graph().record_timeline(trace);
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
    let idle = trace.then(|| Idle::of(&dg.graph().timeline()));
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
    Ok((DistFactor { s, rank, seed, tiles }, stats, seconds, idle))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::wire;

    #[test]
    fn tile_items_round_trip_in_one_copy_and_bad_lengths_are_refused() {
        for (r, c) in [(5usize, 3usize), (1, 1), (0, 0), (256, 7)] {
            let mut t = Tile::zeros(r, c);
            for (x, v) in t.data_mut().iter_mut().enumerate() {
                *v = x as f64 * 0.5 - 3.0;
            }
            let mut bytes = Vec::new();
            wire::encode(&TileItem(t.clone()), &mut bytes).unwrap();
            let back: TileItem = wire::decode(&bytes).unwrap();
            assert_eq!(back.0, t, "{r}×{c}");
        }
        // A 2×2 tile that carries three elements' bytes.
        let mut bytes = Vec::new();
        wire::encode(&(2u32, 2u32, RawBytes(&[0u8; 24])), &mut bytes).unwrap();
        let e = wire::decode::<TileItem>(&bytes).unwrap_err();
        assert!(e.contains("2×2 tile with 24 bytes"), "{e}");
        assert!(wire::decode::<TileItem>(&bytes[..3]).is_err(), "truncated");
    }

    /// Every step's priority, by (i, j, k) as in `priority`.
    fn steps(nt: usize) -> Vec<(usize, usize, usize)> {
        let mut v = Vec::new();
        for j in 0..nt {
            for i in j..nt {
                for k in 0..=j {
                    v.push((i, j, k));
                }
            }
        }
        v
    }

    #[test]
    fn priorities_put_each_column_before_the_next_and_are_distinct() {
        for nt in [1usize, 2, 5, 9] {
            let all = steps(nt);
            let mut seen = std::collections::HashSet::new();
            for &(i, j, k) in &all {
                let p = priority(nt, i, j, k);
                assert!(seen.insert(p), "nt={nt}: ({i}, {j}, {k}) shares its priority");
                for &(i2, j2, k2) in &all {
                    let q = priority(nt, i2, j2, k2);
                    if (j, i, k) < (j2, i2, k2) {
                        assert!(p > q, "nt={nt}: ({i},{j},{k}) must precede ({i2},{j2},{k2})");
                    }
                }
            }
            // the panel of column k + 1 (its potrf and trsms) goes before step k's trailing
            // updates, which herd-la's order runs first
            if nt >= 4 {
                let (k, i) = (0, nt - 1);
                assert!(priority(nt, k + 1, k + 1, k + 1) > priority(nt, i, k + 2, k));
                assert!(priority(nt, i, k + 1, k + 1) > priority(nt, i, k + 2, k));
            }
        }
        // distinct and ordered at the largest documented size too
        let nt = 1 << 20;
        assert!(priority(nt, nt - 1, nt - 1, nt - 1) > 0);
        assert!(priority(nt, 0, 0, 0) > priority(nt, 1, 0, 0));
        assert!(priority(nt, nt - 1, 0, 0) > priority(nt, 1, 1, 0));
    }
}
