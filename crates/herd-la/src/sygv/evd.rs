//! Step 3 of `sygv`: the symmetric eigendecomposition `C = Z·Λ·Zᵀ` with
//! faer's self-adjoint EVD (`faer::linalg::evd::self_adjoint_evd`), on one
//! participant (`Par::Seq`): Householder tridiagonal reduction (`4n³/3`
//! flops, half of them in memory-bound symmetric matrix–vector products),
//! divide and conquer on the tridiagonal matrix, and the back-transformation
//! of its eigenvectors by the Householder reflectors (`2n³`).
//!
//! This is the sequential part of `sygv`. On herd it would need: a
//! two-stage reduction (dense → band by tiled QR-like steps, which are
//! BLAS-3 and parallel over tiles as a herd-flow graph; band → tridiagonal
//! by bulge chasing, pipelined over sweeps), a parallel divide and conquer
//! (the two halves of each split are independent: `herd::join`), and the
//! back-transformations applied to column blocks of `Z` (independent, like
//! the right-hand sides of `trsm`). faer 0.24 does not expose its
//! tridiagonal eigensolver separately (`tridiag_evd` is crate-private), so
//! not even the last step can be split off here without reimplementing it.

use faer::diag::Diag;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::{self_adjoint_evd, self_adjoint_evd_scratch, ComputeEigenvectors};
use faer::{MatMut, MatRef, Par};

use crate::LaError;

/// Eigenvalues of the symmetric `c` (lower triangle read) into `w`,
/// ascending, and the orthonormal eigenvectors into the columns of `z`.
///
/// # Errors
/// [`LaError::NoConvergence`] when the tridiagonal eigensolver does not
/// converge.
pub(super) fn eigen(c: MatRef<'_, f64>, w: &mut [f64], mut z: MatMut<'_, f64>) -> Result<(), LaError> {
    let n = c.nrows();
    let mut s = Diag::<f64>::zeros(n);
    let req = self_adjoint_evd_scratch::<f64>(n, ComputeEigenvectors::Yes, Par::Seq, Default::default());
    let mut mem = MemBuffer::new(req);
    self_adjoint_evd(c, s.as_mut(), Some(z.as_mut()), Par::Seq, MemStack::new(&mut mem), Default::default())
        .map_err(|_| LaError::NoConvergence)?;
    let s = s.column_vector();
    for (i, w) in w.iter_mut().enumerate() {
        *w = s[i];
    }
    sort_ascending(w, z);
    Ok(())
}

/// Sorts `w` ascending and permutes the columns of `z` with it (a no-op
/// when `w` is sorted already, as faer returns it).
fn sort_ascending(w: &mut [f64], mut z: MatMut<'_, f64>) {
    if w.windows(2).all(|p| p[0] <= p[1]) {
        return;
    }
    let mut order: Vec<usize> = (0..w.len()).collect();
    order.sort_by(|&i, &j| w[i].total_cmp(&w[j]));
    let (ws, zs) = (w.to_vec(), z.to_owned());
    for (dst, &src) in order.iter().enumerate() {
        w[dst] = ws[src];
        z.as_mut().col_mut(dst).copy_from(zs.col(src));
    }
}
