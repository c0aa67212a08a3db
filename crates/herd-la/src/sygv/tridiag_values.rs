//! The eigenvalues of a symmetric tridiagonal matrix `T` (diagonal `d`,
//! off-diagonal `e`) without its eigenvectors — the step LAPACK's
//! `dsyev`/`dsygv` take with `dsterf` for `jobz = 'N'`.
//!
//! faer's tridiagonal solver does it ([`tridiagonal_self_adjoint_evd`]
//! with no `U`): implicit symmetric QR iteration with Wilkinson's shift on
//! `T` scaled to `max |T| = 1`, `eᵢ` set to zero where `|eᵢ| < ε·‖(dᵢ,
//! dᵢ₊₁)‖` (absolute accuracy `O(ε·‖T‖)` for every eigenvalue, the bound
//! LAPACK's tests hold `dsterf` to), `O(n²)` flops and `O(n)` memory. It is
//! not `dsterf`'s root-free Pal–Walker–Kahan variant (which also chooses QL
//! or QR per block by which end is larger, for graded matrices), but on
//! this job the `O(n²)` solver is a few percent of the `O(n³)` reduction
//! before it (BENCHMARKS.md "sygv eigenvalues only (session 28)"), so a
//! field-standard dependency is kept rather than a solver of our own.
//!
//! faer gives up after `30·n²` sweeps (`NoConvergence`, not seen in
//! practice); the eigenvalues are then taken from herd's divide and
//! conquer (`divide/`), which always converges, at the price of `n²`
//! memory for eigenvectors thrown away.

use faer::diag::{DiagMut, DiagRef};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::tridiagonal_self_adjoint_evd;
use faer::linalg::temp_mat_scratch;
use faer::{Mat, Par};

use super::divide;

/// The eigenvalues of the tridiagonal `(d, e)` (`n` and `n − 1` entries)
/// into `w` (`n`), ascending.
pub(super) fn eigenvalues(d: &[f64], e: &[f64], w: &mut [f64]) {
    let n = d.len();
    assert!(w.len() == n && e.len() == n.saturating_sub(1));
    if n == 0 {
        return;
    }
    if !qr_iteration(d, e, w) {
        let mut v = Mat::<f64>::zeros(n, n);
        divide::eigen(d, e, w, v.as_mut());
    }
    // faer sorts its eigenvalues; divide and conquer sorts them per block.
    w.sort_by(f64::total_cmp);
}

/// faer's QR iteration without vectors; `false` if it did not converge.
fn qr_iteration(d: &[f64], e: &[f64], w: &mut [f64]) -> bool {
    let n = d.len();
    // faer copies `d` and `e` into two columns of `n` on its stack.
    let mut mem = MemBuffer::new(temp_mat_scratch::<f64>(n, 1).array(2));
    tridiagonal_self_adjoint_evd(
        DiagRef::from_slice(d),
        DiagRef::from_slice(e),
        DiagMut::from_slice_mut(w),
        None,
        Par::Seq,
        MemStack::new(&mut mem),
        Default::default(),
    )
    .is_ok()
}
