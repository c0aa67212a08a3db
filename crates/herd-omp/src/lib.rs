//! # herd-omp — the libgomp ABI on herd
//!
//! Programs compiled with `gcc -fopenmp` call libgomp's `GOMP_*` and `omp_*`
//! entry points. This crate provides them on herd's pool and scheduler, so an
//! unmodified program runs on herd when `libherd_omp.so` is preloaded (`herd
//! run`) or stands in for `libgomp.so.1` (`LD_LIBRARY_PATH=target/release/gomp`).
//!
//! Layers: [`icv`] and `settings` (internal control variables from the
//! environment), `runtime` (the pools teams run on), `team` (a region's
//! threads, barrier, worksharing ring), `parallel` (forming teams), `ws`
//! (loops, sections, single), `doacross` (doacross loops), `task` (tasks,
//! dependences, taskgroups, taskloop, detached tasks), `cancel`
//! (cancellation), `sync` (critical, atomic, locks), and the C entry points
//! in `abi` (`GOMP_*`) and `api` (`omp_*`).

mod abi;
mod affinity_format;
mod allocator;
mod api;
mod cancel;
mod device_uid;
mod display;
mod doacross;
pub mod env;
mod fork;
mod fortran;
mod icv;
mod interop;
mod league;
mod lock_compat;
#[cfg(all(test, loom))]
mod loom_models;
mod memory;
mod openacc;
mod ordered;
mod parallel;
mod placement;
mod preload;
mod runtime;
mod settings;
mod split;
mod sync;
mod target_memory;
mod task;
mod team;
mod teams;
mod thread;
mod unsupported;
mod wait;
mod ws;

// With the `lapack` feature (as `make omp` builds it), the library also
// carries herd's LAPACK/BLAS entry points (`dgemm_`, `dpotrf_`, …, from
// herd-lapack), which run on the same root pool as the parallel regions:
// one set of workers for the whole process (see `runtime::provide_global`).
#[cfg(feature = "lapack")]
extern crate herd_lapack;

/// Reads the environment when the library is loaded, as libgomp does, so
/// that an invalid `OMP_*`/`HERD_*` value is reported before the program runs
/// and `OMP_DISPLAY_ENV` prints at start-up.
extern "C" fn init() {
    let rt = runtime::runtime();
    runtime::provide_global();
    if let Some(verbose) = settings::display_requested(&rt.herd) {
        display::print(verbose);
    }
}

#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = init;
