//! The eigenvalues of a symmetric tridiagonal matrix `T` (diagonal `d`,
//! off-diagonal `e`) without its eigenvectors — the step LAPACK's
//! `dsyev`/`dsygv` take with `dsterf` for `jobz = 'N'`.
//!
//! `sterf.rs` does it: LAPACK's `dsterf` algorithm (Pal–Walker–Kahan's
//! root-free implicit QL/QR — no square root per rotation, QL or QR per
//! unreduced block by which end is larger, each block scaled into a safe
//! range), `O(n²)` flops and `O(n)` memory, every eigenvalue to `O(ε·‖T‖)`
//! absolutely. It replaced faer's implicit QR iteration
//! (`tridiagonal_self_adjoint_evd` without `U`: a square root per
//! rotation, kept as the test-only reference `faer_qr`), being about
//! 2.2 times as fast on the values path's tridiagonals: on the 2-vCPU host
//! (`sterf_against_faer_qr_times` in `values_tests.rs`, the two in
//! alternation on the reduction of the same matrix, three rounds)
//! 0.045–0.046 s against 0.102–0.105 s at n = 2000, and 0.173–0.178 s
//! against 0.389–0.394 s at n = 4000; in `values_phase_times` the phase
//! went from 0.095–0.102 s to 0.045–0.048 s at n = 2000 and from
//! 0.370–0.397 s to 0.174–0.181 s at n = 4000 (one outlier of 0.27 s on a
//! loaded host), against 0.25–0.36 s and 1.5–2.4 s for the reductions
//! before it. A random tridiagonal takes about 2.2 sweeps per row.
//!
//! If `sterf` runs out of its `30·n` sweeps (not seen in practice), the
//! eigenvalues are taken from herd's divide and conquer (`divide/`), which
//! always converges, at the price of `n²` memory for eigenvectors thrown
//! away. A NaN or an infinity in `T` gives all-NaN eigenvalues (no
//! iteration, no fallback).

use faer::Mat;

use super::divide;
use super::sterf::sterf;

/// The eigenvalues of the tridiagonal `(d, e)` (`n` and `n − 1` entries)
/// into `w` (`n`), ascending; all NaN if `d` or `e` holds a NaN or an
/// infinity.
pub(super) fn eigenvalues(d: &[f64], e: &[f64], w: &mut [f64]) {
    let n = d.len();
    assert!(w.len() == n && e.len() == n.saturating_sub(1));
    if n == 0 {
        return;
    }
    w.copy_from_slice(d);
    let mut e2 = e.to_vec();
    if sterf(w, &mut e2).is_err() {
        if d.iter().chain(e).all(|x| x.is_finite()) {
            let mut v = Mat::<f64>::zeros(n, n);
            divide::eigen(d, e, w, v.as_mut());
            // Divide and conquer sorts its eigenvalues per block only.
            w.sort_by(f64::total_cmp);
        } else {
            // sterf has filled w with NaN without iterating.
            debug_assert!(w.iter().all(|x| x.is_nan()));
        }
    }
}

/// faer's implicit QR iteration without vectors (the solver this module
/// used before `sterf`), kept as a reference for the tests and the timing
/// harness: eigenvalues into `w`, ascending; `false` if it did not
/// converge.
#[cfg(test)]
pub(super) fn faer_qr(d: &[f64], e: &[f64], w: &mut [f64]) -> bool {
    use faer::diag::{DiagMut, DiagRef};
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::evd::tridiagonal_self_adjoint_evd;
    use faer::linalg::temp_mat_scratch;
    use faer::Par;

    let n = d.len();
    if n == 0 {
        return true;
    }
    // faer copies `d` and `e` into two columns of `n` on its stack.
    let mut mem = MemBuffer::new(temp_mat_scratch::<f64>(n, 1).array(2));
    let ok = tridiagonal_self_adjoint_evd(
        DiagRef::from_slice(d),
        DiagRef::from_slice(e),
        DiagMut::from_slice_mut(w),
        None,
        Par::Seq,
        MemStack::new(&mut mem),
        Default::default(),
    )
    .is_ok();
    // Without vectors faer leaves its eigenvalues unsorted.
    w.sort_by(f64::total_cmp);
    ok
}
