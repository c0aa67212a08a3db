//! LAPACK entry points (Fortran calling convention: every argument by
//! reference; `INFO` as LAPACK sets it), one file per routine family.

mod lu;
mod potrf;
mod qr;
mod sygv;

pub use lu::{dgesv_, dgetrf_, dgetrs_};
pub(crate) use lu::{getrf_into, pivots, solve};
pub use potrf::dpotrf_;
pub(crate) use potrf::{first_bad_row, potrf};
pub use qr::{dgeqrf_, dorgqr_, dormqr_};
pub(crate) use sygv::sygv_info;
pub use sygv::{dsygv_, dsygvd_};
