//! Tiled Cholesky (lower) as a herd-flow graph (cnc-dense-linear-algebra.txt
//! §3): one step per tile operation, scheduled when its inputs are ready.
//!
//! **Items are tile versions.** The tiles stay in the [`TiledMatrix`] and are
//! updated in place; the item collection `tile` holds version tokens: key
//! `(i, j, v)` says that tile (i, j) has received its first `v` updates (the
//! final factor tile L(i, k) is version `k + 1`). A step gets the tokens of
//! everything it reads and writes, so the graph's dependencies are exactly
//! the data flow and no two steps touching one tile can overlap (each tile's
//! lock is then never contended; it only checks that claim).
//!
//! * `potrf(k)`: gets (k, k, k); factors tile (k, k); puts (k, k, k + 1).
//! * `trsm(i, k)`, i > k: gets (i, k, k), (k, k, k + 1); A(i,k) ← A(i,k)·L(k,k)⁻ᵀ;
//!   puts (i, k, k + 1).
//! * `update(i, j, k)`, k < j ≤ i: gets (i, j, k), (i, k, k + 1), (j, k, k + 1);
//!   A(i,j) −= L(i,k)·L(j,k)ᵀ (SYRK on the diagonal, GEMM below); puts
//!   (i, j, k + 1).
//!
//! **Scheduling** (`discipline`), with critical-path priorities throughout
//! (earlier panels first; within a panel the factorization, then the
//! triangular solves, then the updates of the next panel — the look-ahead —
//! then the rest):
//! * `DependencyCounted` (the default): every step declares its tokens in its
//!   tuner's `depends` and runs only when they exist — no requeue; all tags
//!   are put up front;
//! * `Requeue` (Intel CnC's default): all tags up front, declarations
//!   ignored, a step that gets a missing token is re-run when it appears —
//!   the paper's "requeued steps" cost;
//! * `OnTheFly`: only `potrf(0)`'s tag is put up front; `potrf(k)` puts the
//!   tags of its panel's solves, `trsm(i, k)` those of the updates of row
//!   `i`, and `update(k+1, k+1, k)` that of `potrf(k + 1)`. A solve or update
//!   whose other inputs are not there yet is requeued.

use crate::cholesky::{check_potrf_input, potrf_diagonal_tile};
use crate::kernels::Backend;
use crate::{LaError, TiledMatrix};
use herd_flow::{Ctx, Deps, Discipline, FlowError, Graph, Items, StepError, Tags, Tuner};
use std::sync::{Arc, Mutex};

type Key = (usize, usize, usize);

/// What a dataflow factorization did.
#[derive(Debug)]
pub struct FlowReport {
    /// herd-flow's statistics (steps prescribed, executed, requeued).
    pub stats: herd_flow::Stats,
    /// The timeline (Chrome trace JSON with the executed DAG), when asked for.
    pub timeline: Option<serde_json::Value>,
}

/// Priority of a tiled-Cholesky step of panel `k` among `nt` panels: earlier
/// panels first; within panel `k`, POTRF (`class` 3), then TRSM (2), then the
/// next panel's updates (1, the look-ahead), then the other updates (0). Shared
/// with herd-mpi's distributed Cholesky.
pub fn priority(nt: usize, k: usize, class: i64) -> i64 {
    (nt - k) as i64 * 4 + class
}

struct PotrfTuner {
    tiles: Items<Key, ()>,
    nt: usize,
}
impl Tuner<usize> for PotrfTuner {
    fn depends(&self, &k: &usize, deps: &mut Deps) {
        deps.item(&self.tiles, (k, k, k));
    }
    fn priority(&self, &k: &usize) -> i64 {
        priority(self.nt, k, 3)
    }
}

struct TrsmTuner {
    tiles: Items<Key, ()>,
    nt: usize,
}
impl Tuner<(usize, usize)> for TrsmTuner {
    fn depends(&self, &(i, k): &(usize, usize), deps: &mut Deps) {
        deps.item(&self.tiles, (i, k, k));
        deps.item(&self.tiles, (k, k, k + 1));
    }
    fn priority(&self, &(_, k): &(usize, usize)) -> i64 {
        priority(self.nt, k, 2)
    }
}

struct UpdateTuner {
    tiles: Items<Key, ()>,
    nt: usize,
}
impl Tuner<Key> for UpdateTuner {
    fn depends(&self, &(i, j, k): &Key, deps: &mut Deps) {
        deps.item(&self.tiles, (i, j, k));
        deps.item(&self.tiles, (i, k, k + 1));
        deps.item(&self.tiles, (j, k, k + 1));
    }
    fn priority(&self, &(_, j, k): &Key) -> i64 {
        priority(self.nt, k, i64::from(j == k + 1))
    }
}

/// Factors `a` (its lower triangle) in place as `L·Lᵀ` with a herd-flow
/// graph on the current herd pool (the global pool outside any; use
/// `pool.install(|| potrf_flow(..))` to choose), each tile operation a step
/// run with `backend`'s sequential kernels, scheduled by `discipline` (see
/// the module documentation). `timeline`: record each step's worker and
/// times (see [`FlowReport::timeline`]).
///
/// Errors like LAPACK's `dpotrf`: [`LaError::NotSquare`], [`LaError::NonFinite`]
/// (checked before anything is modified), [`LaError::NotPositiveDefinite`]
/// naming the global column whose pivot failed (the graph stops; `a` is then
/// partly factored).
pub fn potrf_flow(
    a: &Arc<TiledMatrix>,
    backend: Backend,
    discipline: Discipline,
    timeline: bool,
) -> Result<FlowReport, LaError> {
    check_potrf_input(a)?;
    cholesky_graph(a, a.nt(), backend, discipline, timeline)
}

/// The three tile operations of the tiled Cholesky, on whatever holds the
/// tiles: herd-la's [`TiledMatrix`] (tiles of their own, each behind a
/// lock), or tile views of the caller's matrix (`in_place.rs`). The graph's
/// version tokens give a step the tile it writes alone and the tiles it
/// reads unchanged while it runs.
pub(crate) trait CholeskyTiles: Send + Sync + 'static {
    /// Factors diagonal tile (k, k); a failed pivot names its global column.
    fn potrf(&self, backend: Backend, k: usize) -> Result<(), LaError>;
    /// A(i, k) ← A(i, k)·L(k, k)⁻ᵀ.
    fn trsm(&self, backend: Backend, i: usize, k: usize) -> Result<(), LaError>;
    /// A(i, j) −= L(i, k)·L(j, k)ᵀ (SYRK on the diagonal, GEMM below it).
    fn update(&self, backend: Backend, i: usize, j: usize, k: usize) -> Result<(), LaError>;
}

impl CholeskyTiles for TiledMatrix {
    fn potrf(&self, backend: Backend, k: usize) -> Result<(), LaError> {
        potrf_diagonal_tile(backend, self, k)
    }
    fn trsm(&self, backend: Backend, i: usize, k: usize) -> Result<(), LaError> {
        backend.trsm(&self.tile(k, k), &mut self.tile_mut(i, k))
    }
    fn update(&self, backend: Backend, i: usize, j: usize, k: usize) -> Result<(), LaError> {
        if i == j {
            backend.syrk(&self.tile(i, k), &mut self.tile_mut(i, i))
        } else {
            backend.gemm(&self.tile(i, k), &self.tile(j, k), &mut self.tile_mut(i, j))
        }
    }
}

/// The tiled Cholesky graph of `nt × nt` tiles held by `a` (see the module
/// documentation); returns once every step has finished (or, after a
/// failure, every running step has).
pub(crate) fn cholesky_graph<M: CholeskyTiles>(
    a: &Arc<M>,
    nt: usize,
    backend: Backend,
    discipline: Discipline,
    timeline: bool,
) -> Result<FlowReport, LaError> {
    let g = Graph::builder().name("cholesky").discipline(discipline).timeline(timeline).build();
    let tiles = g.items::<Key, ()>("tile");
    let on_the_fly = discipline == Discipline::OnTheFly;
    let potrf_tags: Tags<usize> = g.tags("k");
    let trsm_tags: Tags<(usize, usize)> = g.tags("ik");
    let update_tags: Tags<Key> = g.tags("ijk");
    let failure: Arc<Mutex<Option<LaError>>> = Arc::default();

    let fail = {
        let failure = failure.clone();
        move |e: LaError| -> StepError {
            let msg = e.to_string();
            failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
            StepError::msg(msg)
        }
    };

    let potrf = {
        let (m, t, fail, next) = (a.clone(), tiles.clone(), fail.clone(), trsm_tags.clone());
        g.steps_tuned("potrf", PotrfTuner { tiles: tiles.clone(), nt }, move |&k: &usize, ctx: &Ctx<'_>| {
            ctx.get(&t, &(k, k, k))?;
            m.potrf(backend, k).map_err(&fail)?;
            ctx.put(&t, (k, k, k + 1), ())?;
            if on_the_fly {
                (k + 1..nt).for_each(|i| ctx.put_tag(&next, (i, k)));
            }
            Ok(())
        })
    };
    let trsm = {
        let (m, t, fail, next) = (a.clone(), tiles.clone(), fail.clone(), update_tags.clone());
        g.steps_tuned(
            "trsm",
            TrsmTuner { tiles: tiles.clone(), nt },
            move |&(i, k): &(usize, usize), ctx: &Ctx<'_>| {
                ctx.get(&t, &(i, k, k))?;
                ctx.get(&t, &(k, k, k + 1))?;
                m.trsm(backend, i, k).map_err(&fail)?;
                ctx.put(&t, (i, k, k + 1), ())?;
                if on_the_fly {
                    (k + 1..=i).for_each(|j| ctx.put_tag(&next, (i, j, k)));
                }
                Ok(())
            },
        )
    };
    let update = {
        let (m, t, next) = (a.clone(), tiles.clone(), potrf_tags.clone());
        g.steps_tuned(
            "update",
            UpdateTuner { tiles: tiles.clone(), nt },
            move |&(i, j, k): &Key, ctx: &Ctx<'_>| {
                ctx.get(&t, &(i, j, k))?;
                ctx.get(&t, &(i, k, k + 1))?;
                ctx.get(&t, &(j, k, k + 1))?;
                m.update(backend, i, j, k).map_err(&fail)?;
                ctx.put(&t, (i, j, k + 1), ())?;
                if on_the_fly && i == k + 1 && j == k + 1 {
                    ctx.put_tag(&next, k + 1);
                }
                Ok(())
            },
        )
    };
    potrf_tags.prescribes(&potrf);
    trsm_tags.prescribes(&trsm);
    update_tags.prescribes(&update);

    for i in 0..nt {
        for j in 0..=i {
            tiles.put((i, j, 0), ()).map_err(flow_bug)?;
        }
    }
    if on_the_fly {
        if nt > 0 {
            potrf_tags.put(0);
        }
    } else {
        put_all_tags(nt, &potrf_tags, &trsm_tags, &update_tags);
    }
    match g.wait() {
        Ok(stats) => Ok(FlowReport { stats, timeline: timeline.then(|| g.timeline_json()) }),
        Err(e) => {
            Err(failure.lock().unwrap_or_else(|p| p.into_inner()).take().unwrap_or_else(|| flow_bug(e)))
        }
    }
}

/// Every step's tag, up front.
fn put_all_tags(nt: usize, potrf: &Tags<usize>, trsm: &Tags<(usize, usize)>, update: &Tags<Key>) {
    for k in 0..nt {
        potrf.put(k);
        for i in k + 1..nt {
            trsm.put((i, k));
            for j in k + 1..=i {
                update.put((i, j, k));
            }
        }
    }
}

/// A herd-flow error that the graph's construction rules out.
fn flow_bug(e: FlowError) -> LaError {
    LaError::ShapeMismatch(format!("internal dataflow error: {e}"))
}
