//! LAPACK entry points (Fortran calling convention: every argument by
//! reference; `INFO` as LAPACK sets it), one file per routine family.

mod potrf;
mod qr;

pub use potrf::dpotrf_;
pub(crate) use potrf::potrf;
pub use qr::{dgeqrf_, dorgqr_, dormqr_};
