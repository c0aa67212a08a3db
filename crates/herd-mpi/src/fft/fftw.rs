//! The anchor: FFTW's own MPI 2-D FFT (`libfftw3_mpi`, FFTW 3.3) on the same distribution
//! and with the same transposed output layout (`FFTW_MPI_TRANSPOSED_OUT`), threaded with
//! `libfftw3_threads` on as many threads as herd's pool has per rank.
//!
//! FFTW-MPI calls MPI itself (planning and `fftw_execute` run its all-to-all transposes;
//! destroying a plan frees its communicators), so every FFTW call here runs on herd-mpi's
//! communicator thread through [`Mpi::run`], which is also where MPI was initialized: the
//! FUNNELED contract holds. FFTW's own worker threads only compute.

use super::local::C64;
use super::slab::Slab;
use crate::error::{MpiError, Result};
use crate::Mpi;
use mpi::ffi::MPI_Comm;
use mpi::raw::AsRaw;
use std::ffi::{c_int, c_uint, c_void};
use std::sync::OnceLock;

type FftwPlan = *mut c_void;

const FFTW_FORWARD: c_int = -1;
const FFTW_MEASURE: c_uint = 0;
const FFTW_ESTIMATE: c_uint = 1 << 6;
const FFTW_MPI_TRANSPOSED_OUT: c_uint = 1 << 30;

#[link(name = "fftw3_mpi")]
extern "C" {
    fn fftw_mpi_init();
    fn fftw_mpi_local_size_2d_transposed(
        n0: isize,
        n1: isize,
        comm: MPI_Comm,
        local_n0: *mut isize,
        local_0_start: *mut isize,
        local_n1: *mut isize,
        local_1_start: *mut isize,
    ) -> isize;
    fn fftw_mpi_plan_dft_2d(
        n0: isize,
        n1: isize,
        input: *mut C64,
        output: *mut C64,
        comm: MPI_Comm,
        sign: c_int,
        flags: c_uint,
    ) -> FftwPlan;
}

#[link(name = "fftw3_threads")]
extern "C" {
    fn fftw_init_threads() -> c_int;
    fn fftw_plan_with_nthreads(nthreads: c_int);
}

#[link(name = "fftw3")]
extern "C" {
    fn fftw_execute(plan: FftwPlan);
    fn fftw_destroy_plan(plan: FftwPlan);
    fn fftw_alloc_complex(n: usize) -> *mut C64;
    fn fftw_free(p: *mut c_void);
}

/// How long FFTW plans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Planning {
    /// `FFTW_ESTIMATE`: a heuristic plan, made at once (the tests).
    Estimate,
    /// `FFTW_MEASURE`: FFTW times candidate plans (seconds for n = 4096) and keeps the
    /// fastest; the benchmark's choice, so that the anchor is FFTW at its usual best.
    Measure,
}

/// A buffer from `fftw_alloc_complex` (SIMD-aligned).
struct FftwBuf {
    ptr: *mut C64,
    len: usize,
}

// SAFETY: an FftwBuf owns its allocation exclusively (like a Box); moving it to another
// thread moves that ownership.
unsafe impl Send for FftwBuf {}

impl FftwBuf {
    fn new(len: usize) -> Result<FftwBuf> {
        // SAFETY: fftw_alloc_complex is malloc with FFTW's alignment; any length is valid.
        let ptr = unsafe { fftw_alloc_complex(len.max(1)) };
        if ptr.is_null() {
            return Err(MpiError::Invalid(format!("FFTW: cannot allocate {len} complex numbers")));
        }
        // SAFETY: `len` elements were just allocated; zeroes are valid complex numbers.
        unsafe { std::ptr::write_bytes(ptr, 0, len.max(1)) };
        Ok(FftwBuf { ptr, len })
    }

    fn slice(&self) -> &[C64] {
        // SAFETY: `len` initialized elements owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    fn slice_mut(&mut self) -> &mut [C64] {
        // SAFETY: `len` initialized elements owned by self, borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for FftwBuf {
    fn drop(&mut self) {
        // SAFETY: allocated by fftw_alloc_complex, freed once; no plan uses it any more
        // (Fftw2d destroys its plan before its buffers drop).
        unsafe { fftw_free(self.ptr.cast()) };
    }
}

/// Raw FFTW pointers carried to the communicator thread.
struct Raw<T>(T);
// SAFETY: the plan and buffers are used by one thread at a time: the caller waits in
// `Mpi::run` while the communicator thread uses them.
unsafe impl<T> Send for Raw<T> {}

/// FFTW-MPI's forward `n × n` complex 2-D FFT on this rank's slab, transposed output.
pub struct Fftw2d<'m> {
    mpi: &'m Mpi,
    slab: Slab,
    plan: FftwPlan,
    input: FftwBuf,
    output: FftwBuf,
    threads: usize,
    planning: Planning,
}

/// `fftw_init_threads` and `fftw_mpi_init`, once per process (on the communicator thread).
fn init_once() -> Result<()> {
    static INIT: OnceLock<bool> = OnceLock::new();
    // SAFETY: FFTW's documented initialization order (threads, then MPI), after MPI_Init,
    // run once; fftw_init_threads returns 0 on failure.
    let ok = *INIT.get_or_init(|| unsafe {
        let ok = fftw_init_threads() != 0;
        fftw_mpi_init();
        ok
    });
    if ok {
        Ok(())
    } else {
        Err(MpiError::Invalid("FFTW: fftw_init_threads failed".into()))
    }
}

impl<'m> Fftw2d<'m> {
    /// Plans FFTW-MPI's forward transform of order `n` (collective: every rank calls it with
    /// the same arguments) with `threads` threads per rank. With [`Planning::Measure`] the
    /// buffers are overwritten while planning; fill [`Fftw2d::input_mut`] afterwards.
    /// Errors: `n` as for [`super::Fft2d::new`], `threads == 0`, or FFTW choosing another
    /// distribution than the slab (it does not when `P` divides `n`).
    pub fn new(mpi: &'m Mpi, n: usize, threads: usize, planning: Planning) -> Result<Fftw2d<'m>> {
        let slab = Slab::new(n, mpi.size(), mpi.rank())?;
        if threads == 0 || threads > c_int::MAX as usize {
            return Err(MpiError::Invalid(format!("FFTW: {threads} threads; at least 1 is needed")));
        }
        let flags = FFTW_MPI_TRANSPOSED_OUT
            | match planning {
                Planning::Estimate => FFTW_ESTIMATE,
                Planning::Measure => FFTW_MEASURE,
            };
        let made = mpi.run(move |world| -> Result<(Raw<FftwPlan>, FftwBuf, FftwBuf)> {
            init_once()?;
            let comm = world.as_raw();
            let (mut ln0, mut s0, mut ln1, mut s1) = (0isize, 0isize, 0isize, 0isize);
            // SAFETY: FFTW initialized above; the out-pointers are valid locals; `comm` is the
            // live world communicator of this (the MPI) thread.
            let alloc = unsafe {
                fftw_mpi_local_size_2d_transposed(
                    n as isize, n as isize, comm, &mut ln0, &mut s0, &mut ln1, &mut s1,
                )
            };
            let (m, start) = (slab.m() as isize, slab.range().start as isize);
            if (ln0, s0, ln1, s1) != (m, start, m, start) {
                return Err(MpiError::Invalid(format!(
                    "FFTW: rank {} got rows {s0}+{ln0} and output rows {s1}+{ln1}, not the slab {start}+{m}",
                    slab.rank
                )));
            }
            let len = slab.local_len().max(alloc as usize);
            let mut input = FftwBuf::new(len)?;
            let mut output = FftwBuf::new(len)?;
            // SAFETY: as above; the buffers hold FFTW's `alloc_local` elements and outlive the
            // plan (Fftw2d destroys the plan first).
            let plan = unsafe {
                fftw_plan_with_nthreads(threads as c_int);
                fftw_mpi_plan_dft_2d(n as isize, n as isize, input.ptr, output.ptr, comm, FFTW_FORWARD, flags)
            };
            if plan.is_null() {
                return Err(MpiError::Invalid(format!(
                    "FFTW: fftw_mpi_plan_dft_2d({n}, {n}) returned no plan"
                )));
            }
            input.len = slab.local_len();
            output.len = slab.local_len();
            Ok((Raw(plan), input, output))
        })?;
        let (Raw(plan), input, output) = made;
        Ok(Fftw2d { mpi, slab, plan, input, output, threads, planning })
    }

    /// This rank's input slab (`n/P · n`, row-major), to fill before [`Fftw2d::execute`].
    pub fn input_mut(&mut self) -> &mut [C64] {
        self.input.slice_mut()
    }

    /// This rank's slab of the transposed result, after [`Fftw2d::execute`].
    pub fn output(&self) -> &[C64] {
        self.output.slice()
    }

    /// Runs the plan (collective), on the communicator thread. FFTW may overwrite the input.
    pub fn execute(&mut self) {
        let plan = Raw(self.plan);
        self.mpi.run(move |_| {
            let plan = plan;
            // SAFETY: a valid plan whose buffers are alive and not otherwise borrowed (the
            // caller holds &mut self while it waits here); on the MPI thread.
            unsafe { fftw_execute(plan.0) }
        });
    }

    /// Copies `rows` in, executes, and returns a copy of the output.
    pub fn forward(&mut self, rows: &[C64]) -> Result<Vec<C64>> {
        self.slab.check_len("the input", rows.len())?;
        self.input_mut().copy_from_slice(rows);
        self.execute();
        Ok(self.output().to_vec())
    }

    /// The threads per rank FFTW was planned with.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// How it was planned.
    pub fn planning(&self) -> Planning {
        self.planning
    }
}

impl Drop for Fftw2d<'_> {
    fn drop(&mut self) {
        let plan = Raw(self.plan);
        // Collective like planning: every rank drops its Fftw2d.
        self.mpi.run(move |_| {
            let plan = plan;
            // SAFETY: the plan was made by fftw_mpi_plan_dft_2d and is destroyed once, on the
            // MPI thread, before the buffers it uses are freed (fields drop after this).
            unsafe { fftw_destroy_plan(plan.0) }
        });
    }
}
