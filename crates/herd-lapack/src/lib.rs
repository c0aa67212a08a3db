//! # herd-lapack — LAPACK and BLAS names backed by herd
//!
//! A C ABI shared library, `target/release/libherd_lapack.so`, exporting
//! LAPACK's and BLAS's names with their calling conventions (Fortran's
//! `dgemm_`/`dpotrf_`, `cblas.h`'s `cblas_dgemm`, `lapacke.h`'s
//! `LAPACKE_dpotrf`), computed by herd-la on herd's pool. Preloaded in front
//! of the system's LAPACK,
//!
//! ```sh
//! LD_PRELOAD=target/release/libherd_lapack.so python3 my_numpy_program.py
//! ```
//!
//! an existing program (C, Fortran, NumPy/SciPy, R, Julia) gets herd for these
//! routines with nothing rebuilt, and every routine this library does not
//! define resolves, as before, to the system library.
//!
//! * Integers are LAPACK's LP64 `int` (32 bits), as Debian's `liblapack.so.3`.
//! * Arguments are checked as the reference routines check them: a bad one
//!   goes to the process's `xerbla_` (the program's own, or the system
//!   library's, which prints LAPACK's message) and comes back as `INFO = −i`;
//!   nothing is read or written then.
//! * The routines run on herd's global pool, built from `HERD_*` on the first
//!   call (an invalid value is reported once, and the routines then run on one
//!   thread). The calling thread is the pool's master for the call, pinned to
//!   the master's place as every herd master is.
//! * `herd_lapack_calls("dgemm")` tells how many calls of a routine the calling
//!   thread made through this library (a test's proof that a program's calls
//!   reached herd).
//!
//! Modules: [`blas`], [`cblas`], [`lapack`], [`lapacke`] (one per calling
//! convention); [`ffi`] holds what they share.
#![warn(missing_docs)]
#![allow(non_snake_case)] // LAPACKE_* are C names.

pub mod blas;
pub mod cblas;
pub mod ffi;
pub mod lapack;
pub mod lapacke;
