//! ScaLAPACK's `pdpotrf` as the anchor of herd's distributed Cholesky: the same SPD matrix
//! ([`crate::spd`]) in the same 2-D block-cyclic layout ([`ProcessGrid`], row-major ranks),
//! factored by Debian's `libscalapack-openmpi` on a BLACS grid, timed, and verified with a
//! distributed residual. See `README.md`.
//!
//! Everything that touches BLACS or ScaLAPACK (grid set-up, the factorization, the reductions
//! of the check) runs inside one [`Mpi::run`] closure, i.e. on the communicator thread, which
//! owns MPI (`MPI_THREAD_FUNNELED`). ScaLAPACK's node-local BLAS is whatever `libblas.so.3`
//! resolves to — on Debian with `libopenblas0-pthread`, threaded OpenBLAS — and its thread
//! count is set to the caller's herd thread count before the factorization
//! ([`ScalapackRun::blas_threads`] reports what OpenBLAS accepted).

pub mod ffi;
pub mod matrix;

use crate::error::{MpiError, Result};
use crate::grid::ProcessGrid;
use crate::{spd, Mpi};
use matrix::LocalMatrix;
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use serde::Serialize;
use std::ffi::c_int;
use std::time::Instant;

/// The tag of the point-to-point messages that gather the factor to rank 0.
const GATHER_TAG: i32 = 32_601;

/// One `pdpotrf` run.
#[derive(Clone, Debug, Serialize)]
pub struct ScalapackRun {
    /// Matrix order.
    pub n: usize,
    /// Block size.
    pub nb: usize,
    /// The process grid.
    pub grid: ProcessGrid,
    /// Seconds in `pdpotrf` (from a barrier before to a barrier after; the maximum over ranks).
    pub seconds: f64,
    /// `‖A x − L (Lᵀ x)‖₂ / (‖A‖_F ‖x‖₂ n ε)`; of order 1 or below for a backward-stable
    /// factorization.
    pub residual: f64,
    /// `pdpotrf`'s INFO, agreed over ranks: 0 in every `Ok` result (a nonzero INFO is an
    /// error), kept for reports.
    pub info: i32,
    /// OpenBLAS's thread count during the run (`None` when the BLAS is not OpenBLAS).
    pub blas_threads: Option<usize>,
    /// OpenBLAS's kernel family, when known.
    pub blas_core: Option<String>,
}

impl ScalapackRun {
    /// `n³ / 3` flops per second.
    pub fn gflops(&self) -> f64 {
        (self.n as f64).powi(3) / 3.0 / self.seconds / 1e9
    }
}

/// Factors the `n × n` matrix [`spd::entry`]`(·, ·, n, seed)` with `pdpotrf('L')` on `grid`
/// (blocks `nb × nb`), with OpenBLAS on as many threads per rank as the calling herd pool has
/// ([`herd::current_num_threads`]). Collective: every rank calls it with the same arguments.
///
/// # Errors
/// [`MpiError::Invalid`] when `n` or `nb` is 0 or beyond 32-bit ScaLAPACK, or `grid` does not
/// have `mpi.size()` ranks or BLACS disagrees with it; [`MpiError::Remote`] when `pdpotrf`
/// returns a nonzero INFO (the rank that saw it and the value).
pub fn pdpotrf(mpi: &Mpi, n: usize, nb: usize, grid: ProcessGrid, seed: u64) -> Result<ScalapackRun> {
    pdpotrf_with(mpi, n, nb, grid, seed, herd::current_num_threads())
}

/// [`pdpotrf`] with an explicit OpenBLAS thread count per rank.
///
/// # Errors
/// As [`pdpotrf`]; also [`MpiError::Invalid`] for 0 threads.
pub fn pdpotrf_with(
    mpi: &Mpi,
    n: usize,
    nb: usize,
    grid: ProcessGrid,
    seed: u64,
    threads: usize,
) -> Result<ScalapackRun> {
    run(mpi, n, nb, grid, seed, threads, false).map(|(r, _)| r)
}

/// [`pdpotrf`], and the factor gathered to rank 0: `Some(l)` there (`n × n` column-major,
/// lower triangle `L`, strict upper triangle 0), `None` elsewhere. For tests: rank 0 holds
/// the whole matrix.
///
/// # Errors
/// As [`pdpotrf`].
pub fn pdpotrf_gathered(
    mpi: &Mpi,
    n: usize,
    nb: usize,
    grid: ProcessGrid,
    seed: u64,
) -> Result<(ScalapackRun, Option<Vec<f64>>)> {
    run(mpi, n, nb, grid, seed, herd::current_num_threads(), true)
}

fn validate(mpi: &Mpi, n: usize, nb: usize, grid: ProcessGrid, threads: usize) -> Result<()> {
    let max = c_int::MAX as usize;
    if n == 0 || n > max {
        return Err(MpiError::Invalid(format!("pdpotrf: n = {n} must be in 1..={max}")));
    }
    if nb == 0 || nb > max {
        return Err(MpiError::Invalid(format!("pdpotrf: nb = {nb} must be in 1..={max}")));
    }
    if grid.rows == 0 || grid.cols == 0 || grid.size() != mpi.size() {
        return Err(MpiError::Invalid(format!(
            "pdpotrf: a {}×{} process grid does not match the {} MPI ranks",
            grid.rows,
            grid.cols,
            mpi.size()
        )));
    }
    if threads == 0 {
        return Err(MpiError::Invalid("pdpotrf: the BLAS thread count must be at least 1".into()));
    }
    Ok(())
}

fn run(
    mpi: &Mpi,
    n: usize,
    nb: usize,
    grid: ProcessGrid,
    seed: u64,
    threads: usize,
    gather: bool,
) -> Result<(ScalapackRun, Option<Vec<f64>>)> {
    validate(mpi, n, nb, grid, threads)?;
    let rank = mpi.rank();
    mpi.run(move |world| {
        let ctx = Grid::init(grid, rank, world.size() as usize)?;
        let out = factor_on(world, &ctx, n, nb, grid, seed, threads, gather);
        drop(ctx);
        out
    })
}

/// A BLACS grid context, exited on drop.
struct Grid(c_int);

impl Grid {
    fn init(grid: ProcessGrid, rank: usize, size: usize) -> Result<Grid> {
        let (mut me, mut np) = (0, 0);
        let mut ctx: c_int = 0;
        // SAFETY: BLACS calls on the communicator thread (the only thread that calls MPI);
        // the out-pointers are to live locals; "Row" is NUL-terminated.
        unsafe {
            ffi::Cblacs_pinfo(&mut me, &mut np);
            ffi::Cblacs_get(-1, 0, &mut ctx);
            ffi::Cblacs_gridinit(&mut ctx, c"Row".as_ptr(), grid.rows as c_int, grid.cols as c_int);
        }
        let g = Grid(ctx);
        if me as usize != rank || np as usize != size {
            return Err(MpiError::Invalid(format!(
                "BLACS sees process {me} of {np}, MPI rank {rank} of {size}"
            )));
        }
        let (mut pr, mut pc, mut r, mut c) = (0, 0, 0, 0);
        // SAFETY: as above; `ctx` is the grid just created.
        unsafe { ffi::Cblacs_gridinfo(ctx, &mut pr, &mut pc, &mut r, &mut c) };
        let want = grid.coords(rank);
        if (pr as usize, pc as usize) != (grid.rows, grid.cols) || r < 0 || (r as usize, c as usize) != want {
            return Err(MpiError::Invalid(format!(
                "BLACS placed rank {rank} at ({r}, {c}) of a {pr}×{pc} grid; herd's row-major {}×{} grid has it at {want:?}",
                grid.rows, grid.cols
            )));
        }
        Ok(g)
    }
}

impl Drop for Grid {
    fn drop(&mut self) {
        // SAFETY: the context came from Cblacs_gridinit; this runs on the communicator
        // thread (inside the `Mpi::run` closure that created it).
        unsafe { ffi::Cblacs_gridexit(self.0) };
    }
}

#[allow(clippy::too_many_arguments)]
fn factor_on(
    world: &SimpleCommunicator,
    ctx: &Grid,
    n: usize,
    nb: usize,
    grid: ProcessGrid,
    seed: u64,
    threads: usize,
    gather: bool,
) -> Result<(ScalapackRun, Option<Vec<f64>>)> {
    let rank = world.rank() as usize;
    let mut a = LocalMatrix::from_fn(n, nb, grid, rank, |i, j| spd::entry(i, j, n, seed));
    // Cross-check the local shape with ScaLAPACK's own numroc.
    let (ni, nbi, zero) = (n as c_int, nb as c_int, 0 as c_int);
    let (pr, pc) = (grid.rows as c_int, grid.cols as c_int);
    let (myr, myc) = (a.myrow as c_int, a.mycol as c_int);
    // SAFETY: numroc_ reads five ints through live pointers.
    let (mloc, nloc) =
        unsafe { (ffi::numroc_(&ni, &nbi, &myr, &zero, &pr), ffi::numroc_(&ni, &nbi, &myc, &zero, &pc)) };
    if (mloc as usize, nloc as usize) != (a.mloc, a.nloc) {
        return Err(MpiError::Invalid(format!(
            "numroc gives a {mloc}×{nloc} local part, herd's grid {}×{}",
            a.mloc, a.nloc
        )));
    }
    let lld = c_int::try_from(a.lld).map_err(|_| {
        MpiError::Invalid(format!("pdpotrf: local leading dimension {} exceeds 32 bits", a.lld))
    })?;
    let mut desc = [0 as c_int; 9];
    let mut info: c_int = 0;
    // SAFETY: descinit_ writes 9 ints to `desc` and reads the others through live pointers.
    unsafe { ffi::descinit_(desc.as_mut_ptr(), &ni, &ni, &nbi, &nbi, &zero, &zero, &ctx.0, &lld, &mut info) };
    if info != 0 {
        return Err(MpiError::Invalid(format!("descinit rejected argument {} (n {n}, nb {nb})", -info)));
    }
    let blas_threads = ffi::set_blas_threads(threads);
    let one: c_int = 1;
    world.barrier();
    let t0 = Instant::now();
    // SAFETY: `a.data` is the lld × nloc column-major local array that `desc` describes;
    // called on the communicator thread on every rank of the grid.
    unsafe {
        ffi::pdpotrf_(c"L".as_ptr(), &ni, a.data.as_mut_ptr(), &one, &one, desc.as_ptr(), &mut info, 1)
    };
    world.barrier();
    let local = t0.elapsed().as_secs_f64();
    let mut seconds = 0.0;
    world.all_reduce_into(&local, &mut seconds, SystemOperation::max());
    let (mut lo, mut hi) = (0 as c_int, 0 as c_int);
    world.all_reduce_into(&info, &mut lo, SystemOperation::min());
    world.all_reduce_into(&info, &mut hi, SystemOperation::max());
    let agreed = if hi != 0 { hi } else { lo };
    if agreed != 0 {
        let what = if agreed > 0 {
            format!("pdpotrf: the leading minor of order {agreed} is not positive definite (INFO = {agreed})")
        } else {
            format!("pdpotrf: argument {} had an illegal value (INFO = {agreed})", -agreed)
        };
        return Err(MpiError::Remote { rank, message: what });
    }
    let residual = residual(world, &a, seed);
    let gathered = if gather { gather_lower(world, &mut a)? } else { None };
    let run = ScalapackRun {
        n,
        nb,
        grid,
        seconds,
        residual,
        info: agreed,
        blas_threads,
        blas_core: ffi::blas_corename(),
    };
    Ok((run, gathered))
}

/// `‖A x − L (Lᵀ x)‖₂ / (‖A‖_F ‖x‖₂ n ε)` from the local factor (lower triangle of `a`) and
/// `A` regenerated from [`spd::entry`]: two sum-reductions of `O(n)` values; local work
/// `O(n² / P)`.
fn residual(world: &SimpleCommunicator, a: &LocalMatrix, seed: u64) -> f64 {
    let n = a.n;
    // [A x | Lᵀ x | ‖A‖_F²], each rank's share.
    let mut part = vec![0.0; 2 * n + 1];
    for lj in 0..a.nloc {
        let j = a.col(lj);
        for li in 0..a.mloc {
            let i = a.row(li);
            let aij = spd::entry(i, j, n, seed);
            part[i] += aij * spd::probe(j);
            part[2 * n] += aij * aij;
            if i >= j {
                part[n + j] += a.at(li, lj) * spd::probe(i);
            }
        }
    }
    let mut sum = vec![0.0; 2 * n + 1];
    world.all_reduce_into(&part[..], &mut sum[..], SystemOperation::sum());
    let y = &sum[n..2 * n];
    let mut lpart = vec![0.0; n];
    for lj in 0..a.nloc {
        let j = a.col(lj);
        for li in 0..a.mloc {
            let i = a.row(li);
            if i >= j {
                lpart[i] += a.at(li, lj) * y[j];
            }
        }
    }
    let mut ly = vec![0.0; n];
    world.all_reduce_into(&lpart[..], &mut ly[..], SystemOperation::sum());
    let r: f64 = (0..n).map(|i| (sum[i] - ly[i]).powi(2)).sum::<f64>().sqrt();
    let xnorm: f64 = (0..n).map(|i| spd::probe(i).powi(2)).sum::<f64>().sqrt();
    r / (sum[2 * n].sqrt() * xnorm * n as f64 * f64::EPSILON)
}

/// Sends every rank's local array to rank 0, which assembles the lower triangle.
fn gather_lower(world: &SimpleCommunicator, a: &mut LocalMatrix) -> Result<Option<Vec<f64>>> {
    let rank = world.rank() as usize;
    if a.data.len() > c_int::MAX as usize {
        return Err(MpiError::Invalid(format!(
            "gather: a local part of {} values exceeds 32 bits",
            a.data.len()
        )));
    }
    if rank != 0 {
        world.process_at_rank(0).send_with_tag(&a.data[..], GATHER_TAG);
        return Ok(None);
    }
    let (n, nb, grid) = (a.n, a.nb, a.grid);
    let mut l = vec![0.0; n * n];
    for r in 0..grid.size() {
        let part = if r == 0 {
            a.clone()
        } else {
            let mut p = LocalMatrix::from_fn(n, nb, grid, r, |_, _| 0.0);
            world.process_at_rank(r as i32).receive_into_with_tag(&mut p.data[..], GATHER_TAG);
            p
        };
        for lj in 0..part.nloc {
            let j = part.col(lj);
            for li in 0..part.mloc {
                let i = part.row(li);
                if i >= j {
                    l[i + j * n] = part.at(li, lj);
                }
            }
        }
    }
    Ok(Some(l))
}
