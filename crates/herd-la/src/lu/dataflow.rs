//! The blocked right-looking LU as a dataflow of column-tile tasks on a
//! `herd::scope`, without a barrier between steps (look-ahead as deep as the
//! dependencies allow).
//!
//! The matrix is cut into column tiles of `nb` columns; tile `k < ⌈min(m, n)/nb⌉`
//! is panel `k`. Two kinds of task:
//!
//! * `F(k)`: factor panel `k` (recursive `dgetrf2` on its rows `k·nb..`);
//!   needs tile `k` updated by panels `0..k`;
//! * `U(t, k)`, `t > k`: update tile `t` by panel `k` (interchanges,
//!   triangular solve, GEMM); needs tile `t` updated by panels `0..k` and
//!   `F(k)`.
//!
//! Each tile has a version (how many panels have updated it). A finishing
//! `U(t, k)` bumps tile `t`'s version and spawns what became ready — `F(k + 1)`
//! when `t = k + 1`, else `U(t, k + 1)` if `F(k + 1)` is done; a finishing
//! `F(k)` spawns `U(t, k)` for every tile already at version `k`, the next
//! panel's last so that its participant runs it first (a scope's own jobs
//! run newest first): the critical path goes ahead while the other
//! participants update tiles by older panels. Both checks happen under one
//! mutex, so each task is spawned exactly once; the mutex is held for
//! `O(1)` per update and `O(tiles)` per panel, never during a kernel.
//!
//! Every tile's view is moved into the task working on it and back (a
//! `Mutex<Option<MatMut>>` per tile, never contended by construction); a
//! factored panel becomes a shared `MatRef` read by the updates. The
//! interchanges of later panels are applied to the columns left of them
//! after the scope, every panel's columns independently.
//!
//! Why a `herd::scope` rather than a herd-flow graph like the Cholesky's
//! (`flow.rs`): herd-flow's steps are `'static` closures, so the matrix would
//! have to be copied into owned tiles (`TiledMatrix`) and back, `O(n²)` extra
//! memory and traffic; scope tasks borrow disjoint views of the caller's
//! column-major matrix directly, without `unsafe`. What herd-flow would add —
//! critical-path priorities — is approximated by the spawn order (the next
//! panel's chain runs first on its participant, the others steal the older
//! updates).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use faer::reborrow::IntoConst;
use faer::{MatMut, MatRef};

use super::kernels::{gemm_parts, getrf2, laswp, update_block};
use herd_flow::timeline::StepRecord;

/// As in `schedule.rs`: pieces per participant of a tile's GEMM, and the
/// largest piece in multiply–adds.
const PIECES_PER_PARTICIPANT: usize = 4;
const MAX_PIECE: usize = 1 << 26;

/// A factored panel: rows `k·nb..m` of its tile and its pivots (row indices
/// of the whole matrix).
struct Factored<'a> {
    panel: MatRef<'a, f64>,
    piv: Vec<usize>,
}

/// Which tasks have run.
struct Progress {
    /// Panels whose update tile `t` has received.
    version: Vec<usize>,
    /// Panels factored (they are factored in order).
    factored: usize,
}

struct Dag<'a> {
    m: usize,
    nb: usize,
    panels: usize,
    participants: usize,
    tiles: Vec<Mutex<Option<MatMut<'a, f64>>>>,
    factored: Vec<OnceLock<Factored<'a>>>,
    progress: Mutex<Progress>,
    /// The first zero pivot (`usize::MAX`: none yet).
    info: AtomicUsize,
    /// Each task's worker and times, when a timeline was asked for.
    timeline: Option<Timeline>,
}

/// The executed tasks as herd-flow step records (`herd_flow::timeline`), so
/// that `herd trace show/analyze` draw the run and bound it by its critical
/// path: `F(k)` depends on `U(k, k − 1)`; `U(t, k)` on `F(k)` and
/// `U(t, k − 1)`. A task's time is its wall time on the participant that
/// started it (the panel factorization and a tile's GEMM may share their
/// work with idle participants through `join`).
struct Timeline {
    start: Instant,
    tiles: usize,
    records: Mutex<Vec<StepRecord>>,
}

impl Timeline {
    /// A task's id: one per (panel, tile) pair, `F(k)` at tile `k`.
    fn id(&self, t: usize, k: usize) -> u64 {
        (k * self.tiles + t) as u64 + 1
    }

    fn record(&self, t: usize, k: usize, began: Instant) {
        let end = Instant::now();
        let (collection, tag, deps) = if t == k {
            ("factor", format!("{k}"), if k == 0 { vec![] } else { vec![self.id(k, k - 1)] })
        } else {
            let mut deps = vec![self.id(k, k)];
            if k > 0 {
                deps.push(self.id(t, k - 1));
            }
            deps.sort_unstable();
            ("update", format!("({t}, {k})"), deps)
        };
        let ns = |i: Instant| i.duration_since(self.start).as_nanos() as u64;
        let r = StepRecord {
            id: self.id(t, k),
            collection: collection.into(),
            tag,
            worker: herd::current_thread_index().unwrap_or(0),
            start_ns: ns(began),
            end_ns: ns(end),
            requeues: 0,
            deps,
        };
        self.records.lock().unwrap_or_else(|p| p.into_inner()).push(r);
    }
}

/// Factors `a` in place with panels of `nb` columns (`nb ≥ 1`) as a
/// dataflow of tile tasks; `ipiv` (length `min(m, n)`) receives the pivots.
/// Returns the first zero pivot.
///
/// With `timeline`, also the executed tasks as herd-flow's timeline JSON
/// (see [`Timeline`]).
pub(super) fn getrf_dataflow(
    mut a: MatMut<'_, f64>,
    ipiv: &mut [usize],
    nb: usize,
    timeline: bool,
) -> (Option<usize>, Option<serde_json::Value>) {
    let (m, n) = (a.nrows(), a.ncols());
    let mn = m.min(n);
    if mn == 0 {
        return (None, None);
    }
    let (info, json) = {
        let mut tiles = Vec::with_capacity(n.div_ceil(nb));
        let mut rest = a.as_mut();
        while rest.ncols() > 0 {
            let w = nb.min(rest.ncols());
            let (t, r) = rest.split_at_col_mut(w);
            tiles.push(Mutex::new(Some(t)));
            rest = r;
        }
        let count = tiles.len();
        let panels = mn.div_ceil(nb);
        let dag = Dag {
            m,
            nb,
            panels,
            participants: herd::current_num_threads().max(1),
            tiles,
            factored: (0..panels).map(|_| OnceLock::new()).collect(),
            progress: Mutex::new(Progress { version: vec![0; count], factored: 0 }),
            info: AtomicUsize::new(usize::MAX),
            timeline: timeline.then(|| Timeline {
                start: Instant::now(),
                tiles: count,
                records: Mutex::default(),
            }),
        };
        herd::scope(|s| dag.factor(s, 0));
        for (k, f) in dag.factored.iter().enumerate() {
            let f = f.get().expect("every panel is factored before the scope ends");
            ipiv[k * nb..k * nb + f.piv.len()].copy_from_slice(&f.piv);
        }
        let json = dag.timeline.map(|t| {
            let records = t.records.into_inner().unwrap_or_else(|p| p.into_inner());
            herd_flow::timeline::to_json("getrf", dag.participants, &records)
        });
        (dag.info.load(Ordering::Relaxed), json)
    };
    apply_left(a.subcols_mut(0, mn), ipiv, nb, 0);
    ((info != usize::MAX).then_some(info), json)
}

impl<'a> Dag<'a> {
    fn progress(&self) -> MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes tile `t`'s view; its dependencies guarantee nobody holds it.
    fn take(&self, t: usize) -> MatMut<'a, f64> {
        self.tiles[t].lock().unwrap_or_else(|p| p.into_inner()).take().expect("one task per tile at a time")
    }

    fn put(&self, t: usize, tile: MatMut<'a, f64>) {
        *self.tiles[t].lock().unwrap_or_else(|p| p.into_inner()) = Some(tile);
    }

    /// `F(k)`, then spawns the updates it made ready.
    fn factor<'s>(&'s self, s: &herd::Scope<'s>, k: usize) {
        let began = self.timeline.as_ref().map(|_| Instant::now());
        let (m, j) = (self.m, k * self.nb);
        let mut tile = self.take(k);
        let mut piv = vec![0; tile.ncols().min(m - j)];
        let found = getrf2(tile.as_mut().subrows_mut(j, m - j), &mut piv, self.participants);
        piv.iter_mut().for_each(|p| *p += j);
        if let Some(f) = found {
            self.info.fetch_min(j + f, Ordering::Relaxed);
        }
        let panel = tile.into_const().subrows(j, m - j);
        // Set once: F(k) runs once.
        let _ = self.factored[k].set(Factored { panel, piv });
        if let (Some(t), Some(began)) = (&self.timeline, began) {
            t.record(k, k, began);
        }
        let ready: Vec<usize> = {
            let mut p = self.progress();
            p.factored = k + 1;
            (k + 1..p.version.len()).filter(|&t| p.version[t] == k).collect()
        };
        for &t in ready.iter().rev() {
            s.spawn(move |s| self.update(s, t, k));
        }
    }

    /// `U(t, k)`, then spawns what it made ready.
    fn update<'s>(&'s self, s: &herd::Scope<'s>, t: usize, k: usize) {
        let Some(f) = self.factored[k].get() else { return };
        let began = self.timeline.as_ref().map(|_| Instant::now());
        let mut tile = self.take(t);
        let (rows, width, jb) = (self.m - k * self.nb - f.piv.len(), tile.ncols(), f.piv.len());
        let remaining = self.tiles.len() - k - 1;
        let by_load = (PIECES_PER_PARTICIPANT * self.participants).div_ceil(remaining.max(1));
        let by_size = rows.saturating_mul(width).saturating_mul(jb) / MAX_PIECE;
        let parts = gemm_parts(by_load.max(by_size), rows, width, jb);
        update_block(tile.as_mut(), f.panel, &f.piv, k * self.nb, parts);
        self.put(t, tile);
        if let (Some(tl), Some(began)) = (&self.timeline, began) {
            tl.record(t, k, began);
        }
        let next = k + 1;
        let spawn_factor = {
            let mut p = self.progress();
            p.version[t] = next;
            if next >= self.panels {
                None
            } else if t == next {
                Some(true)
            } else if p.factored > next {
                Some(false)
            } else {
                None
            }
        };
        match spawn_factor {
            Some(true) => s.spawn(move |s| self.factor(s, next)),
            Some(false) => s.spawn(move |s| self.update(s, t, next)),
            None => {}
        }
    }
}

/// Applies to the columns of every panel the interchanges of the panels
/// right of it. `a` holds the panels from the one starting at column `col0`
/// (a multiple of `nb`) on; the panels are independent and spread with
/// [`crate::spread::for_each`].
fn apply_left(a: MatMut<'_, f64>, ipiv: &[usize], nb: usize, col0: usize) {
    crate::spread::for_each(crate::spread::col_blocks(a, nb), &|(panel, c0): (MatMut<'_, f64>, usize)| {
        let after = col0 + c0 + panel.ncols();
        if after < ipiv.len() {
            laswp(panel, &ipiv[after..], after);
        }
    });
}
