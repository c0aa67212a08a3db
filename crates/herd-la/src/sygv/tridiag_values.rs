//! The eigenvalues of a symmetric tridiagonal matrix `T` (diagonal `d`,
//! off-diagonal `e`) without its eigenvectors — the step LAPACK's
//! `dsyev`/`dsygv` take with `dsterf` for `jobz = 'N'`.
//!
//! faer's tridiagonal solver does it ([`tridiagonal_self_adjoint_evd`]
//! with no `U`): implicit symmetric QR iteration with Wilkinson's shift on
//! `T` scaled to `max |T| = 1`, `eᵢ` set to zero where `|eᵢ| < ε·‖(dᵢ,
//! dᵢ₊₁)‖` (absolute accuracy `O(ε·‖T‖)` for every eigenvalue, the bound
//! LAPACK's tests hold `dsterf` to), `O(n²)` flops and `O(n)` memory. It is
//! not `dsterf`'s root-free Pal–Walker–Kahan variant (no square root per
//! rotation, and QL or QR per block by which end is larger, for graded
//! matrices). Measured on the 2-vCPU host (`values_phase_times` in
//! `values_tests.rs`, BENCHMARKS.md "sygv eigenvalues only (session 28)"):
//! 0.14–0.21 s at n = 2000 and 0.39–0.46 s at n = 4000, against 0.68–0.79 s
//! and 3.4–3.5 s for the two-stage reduction before it (11–21 %; about a
//! tenth to a fifth of the whole values-only `sygv`). A root-free solver of
//! our own could take part of that off; until one is measured to, the
//! field-standard dependency stays.
//!
//! faer gives up after `32·n²` sweeps (`NoConvergence`, not seen in
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
