//! LU factorization with partial pivoting (LAPACK's `dgetrf`) and the solve
//! with its factors (`dgetrs`), on the participants of the current herd pool.
//!
//! [`getrf`] / [`Getrf`] factor a column-major `m × n` matrix (any shape)
//! in place as `A = P·L·U`, stored as LAPACK's `dgetrf` stores it: `U` on
//! and above the diagonal, `L` (unit diagonal, not stored) below; `ipiv`
//! holds the interchanges, 0-based (LAPACK's `IPIV − 1`): row `i` was
//! interchanged with row `ipiv[i] ≥ i`, in order `i = 0, 1, …`. LAPACK's
//! `dgetrs` accepts the factors once `ipiv` is made 1-based.
//!
//! The algorithm is the right-looking blocked LU: panels of `nb` columns,
//! each factored by the recursive `dgetrf2` (`kernels.rs`; the pivot is the
//! first entry of largest magnitude, as `idamax` picks it, so pivots and
//! factors match LAPACK's up to rounding), the columns right of a panel
//! updated by it (interchanges, triangular solve, GEMM) in column tiles.
//! Two schedules ([`LuSchedule`]): by default a dataflow of tile tasks on a
//! `herd::scope` (`dataflow.rs`), each task spawned when its inputs are
//! ready, the next panel's update and factorization going first — look-ahead
//! without a barrier between steps; or depth-one look-ahead with
//! `herd::join` (`schedule.rs`). Every kernel is faer's sequential
//! (`Par::Seq`) triangular solve or matrix multiply; the parallelism is
//! herd's.
//!
//! **Singular matrices** are reported as LAPACK reports them: `Ok(Some(j))`
//! for the first exactly zero pivot `U(j, j)` (LAPACK's `INFO = j + 1`),
//! the factorization completed anyway (no division by that pivot: its
//! column of `L` is left as it is).
//!
//! **NaN and infinities** are not rejected: they are computed with as
//! LAPACK computes with them (a NaN is never chosen as pivot unless it is the
//! first entry of its column — `|x| > max` is false for NaN — and a NaN pivot
//! is not zero, so its column is divided by it); the factors then hold NaNs.
//! Nothing panics and nothing hangs on such input.

mod check;
mod dataflow;
mod kernels;
mod schedule;
mod solve;
#[cfg(test)]
mod tests;

pub use check::getrf_probe;
pub use solve::getrs;

use faer::MatMut;

use crate::LaError;

/// Panel width chosen by [`Getrf::new`]. On 2 AMD Zen 4 cores (shared with
/// other jobs, so noisy), n = 1000, 2000 and 4000: 256 ran at least as fast
/// as 96, 128 and 192 (the trailing GEMMs' inner dimension is `nb`, and
/// faer's kernel wants it large), and faster than 320 and 384 at n = 4000.
const DEFAULT_NB: usize = 256;

/// LAPACK's `dgetrf`: `A = P·L·U` in place (`L` unit lower, `U` upper) on
/// the current herd pool, with the default panel width; see [`Getrf::run`].
///
/// ```
/// use herd_la::{getrf, getrs, random_matrix, Op};
/// let a = random_matrix(100, 100, 1);
/// let mut lu = a.clone();
/// let mut ipiv = vec![0; 100];
/// assert_eq!(getrf(lu.as_mut(), &mut ipiv).unwrap(), None);
/// // Solve A·x = b for b = A·1.
/// let mut b = faer::Mat::from_fn(100, 1, |i, _| (0..100).map(|j| a[(i, j)]).sum::<f64>());
/// getrs(Op::NoTrans, lu.as_ref(), &ipiv, b.as_mut()).unwrap();
/// assert!((0..100).all(|i| (b[(i, 0)] - 1.0).abs() < 1e-8));
/// ```
pub fn getrf(a: MatMut<'_, f64>, ipiv: &mut [usize]) -> Result<Option<usize>, LaError> {
    Getrf::new().run(a, ipiv)
}

/// The settings of an LU factorization: the panel width `nb`.
///
/// ```
/// use herd_la::{random_matrix, Getrf};
/// let mut a = random_matrix(300, 200, 1);
/// let mut ipiv = vec![0; 200];
/// let info = Getrf::new().block(64).run(a.as_mut(), &mut ipiv).unwrap();
/// assert_eq!(info, None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Getrf {
    nb: Option<usize>,
    schedule: LuSchedule,
}

/// How [`Getrf`] schedules the blocked factorization on the herd pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LuSchedule {
    /// Depth-one look-ahead with `herd::join`: in each step the next panel's
    /// update and factorization beside the rest of the trailing update, a
    /// join of both before the next step (`schedule.rs`).
    Join,
    /// Column-tile tasks on a `herd::scope`, each spawned when its inputs are
    /// ready: no barrier between steps, look-ahead as deep as the
    /// dependencies allow (`dataflow.rs`). The default: with the same load
    /// on 2 shared cores it ran 1.1–1.25× faster than [`LuSchedule::Join`]
    /// at n = 2000 and 4000 (alternating runs of `examples/getrf_bench.rs`).
    #[default]
    Dataflow,
}

impl Getrf {
    /// The default settings: panels of 256 columns (the whole matrix as one
    /// recursive panel when `min(m, n)` is at most that).
    pub fn new() -> Getrf {
        Getrf { nb: None, schedule: LuSchedule::Dataflow }
    }

    /// Panels of `nb` columns (at least 1; checked by [`Getrf::run`]).
    pub fn block(self, nb: usize) -> Getrf {
        Getrf { nb: Some(nb), ..self }
    }

    /// The schedule ([`LuSchedule::Dataflow`] by default).
    pub fn schedule(self, schedule: LuSchedule) -> Getrf {
        Getrf { schedule, ..self }
    }

    /// The panel width [`Getrf::run`] uses for an `m × n` matrix: the one
    /// set with [`Getrf::block`], else 256 capped at `min(m, n)` (at least 1).
    pub fn block_size(&self, m: usize, n: usize) -> usize {
        self.nb.unwrap_or(DEFAULT_NB.min(m.min(n).max(1)))
    }

    /// Factors `a` (`m × n`, any strides, any shape including empty) in
    /// place as `A = P·L·U` on the participants of the current herd pool —
    /// the global pool when the caller is in none; `pool.install(|| ..)`
    /// chooses one. `ipiv` (length `min(m, n)`) receives the interchanges:
    /// row `i` was interchanged with row `ipiv[i]` (0-based, LAPACK's
    /// `IPIV − 1`), applied in order.
    ///
    /// Returns `Ok(None)` when every pivot is nonzero, `Ok(Some(j))` when
    /// `U(j, j)` is exactly zero, `j` the first such (LAPACK's `INFO = j + 1`);
    /// the factorization is completed in either case. NaN and infinite
    /// entries are computed with, not rejected (see the module
    /// documentation).
    ///
    /// # Errors
    /// Checked before `a` or `ipiv` is touched:
    /// * [`LaError::InvalidArgument`] naming `ipiv` when its length is not
    ///   `min(m, n)`;
    /// * [`LaError::InvalidTileSize`] when a panel width of 0 was set.
    pub fn run(&self, a: MatMut<'_, f64>, ipiv: &mut [usize]) -> Result<Option<usize>, LaError> {
        self.run_traced(a, ipiv, false).map(|(info, _)| info)
    }

    /// [`Getrf::run`], also returning the run's timeline with the
    /// [`LuSchedule::Dataflow`] schedule: every panel factorization and tile
    /// update with its participant, times and dependencies, as herd-flow's
    /// timeline JSON (`herd_flow::timeline`), which `herd trace show` draws
    /// and `herd trace analyze` bounds by its critical path. `None` with
    /// [`LuSchedule::Join`] (its steps are joins, not tasks with
    /// dependencies).
    ///
    /// # Errors
    /// As [`Getrf::run`].
    pub fn run_with_timeline(
        &self,
        a: MatMut<'_, f64>,
        ipiv: &mut [usize],
    ) -> Result<(Option<usize>, Option<serde_json::Value>), LaError> {
        self.run_traced(a, ipiv, true)
    }

    fn run_traced(
        &self,
        a: MatMut<'_, f64>,
        ipiv: &mut [usize],
        timeline: bool,
    ) -> Result<(Option<usize>, Option<serde_json::Value>), LaError> {
        let mn = a.nrows().min(a.ncols());
        if ipiv.len() != mn {
            return Err(LaError::InvalidArgument {
                argument: "ipiv",
                reason: format!(
                    "length {} but min(m, n) = {mn} for a {} x {} matrix",
                    ipiv.len(),
                    a.nrows(),
                    a.ncols()
                ),
            });
        }
        if self.nb == Some(0) {
            return Err(LaError::InvalidTileSize { nb: 0 });
        }
        let nb = self.block_size(a.nrows(), a.ncols());
        Ok(match self.schedule {
            LuSchedule::Join => (schedule::getrf_blocked(a, ipiv, nb), None),
            LuSchedule::Dataflow => dataflow::getrf_dataflow(a, ipiv, nb, timeline),
        })
    }
}
