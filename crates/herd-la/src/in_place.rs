//! The dataflow Cholesky on the caller's own matrix: the graph of `flow.rs`
//! run on tile *views* of a strided matrix instead of a [`TiledMatrix`]'s
//! tiles, so a LAPACK caller's `dpotrf_` needs no `n²` copy in and out (nor
//! the memory for one).
//!
//! Why this is sound without a lock per tile: the graph's version tokens are
//! the data flow — a step runs only when it holds the tokens of every tile it
//! touches, it writes one tile, and no other step reads or writes that tile
//! until the step has put its new version. So at any time each tile has
//! either one writer or only readers, as a lock would enforce.
//!
//! [`TiledMatrix`]: crate::TiledMatrix

use crate::flow::{cholesky_graph, CholeskyTiles, FlowReport};
use crate::kernels::{faer_gemm, faer_potrf, faer_syrk, faer_trsm, herd_gemm, herd_syrk, Backend};
use crate::LaError;
use faer::{MatMut, MatRef};
use herd_flow::Discipline;
use std::sync::Arc;

/// The lower tiles of an `n × n` matrix in someone else's memory, with any
/// strides (a transposed column-major matrix has row stride `lda`).
struct StridedTiles {
    ptr: *mut f64,
    n: usize,
    nb: usize,
    row_stride: isize,
    col_stride: isize,
}

// SAFETY: the views are handed only to the graph's steps, which the version
// tokens order so that a tile has one writer or only readers at a time (the
// module documentation); the memory outlives every step because
// `potrf_flow_in_place` borrows it until the graph has finished.
unsafe impl Send for StridedTiles {}
// SAFETY: as for `Send`.
unsafe impl Sync for StridedTiles {}

impl StridedTiles {
    fn extent(&self, t: usize) -> usize {
        self.nb.min(self.n - t * self.nb)
    }

    fn offset(&self, i: usize, j: usize) -> isize {
        // In bounds of the caller's allocation (i, j < nt), so it fits isize.
        (i * self.nb) as isize * self.row_stride + (j * self.nb) as isize * self.col_stride
    }

    /// Tile (i, j), read.
    ///
    /// # Safety
    /// No step writes tile (i, j) while the view lives.
    unsafe fn view(&self, i: usize, j: usize) -> MatRef<'_, f64> {
        // SAFETY: inside the borrowed matrix (i, j < nt); the caller's contract
        // rules out a concurrent writer.
        unsafe {
            MatRef::from_raw_parts(
                self.ptr.offset(self.offset(i, j)),
                self.extent(i),
                self.extent(j),
                self.row_stride,
                self.col_stride,
            )
        }
    }

    /// Tile (i, j), written.
    ///
    /// # Safety
    /// The calling step is the only one touching tile (i, j) while the view
    /// lives.
    #[allow(clippy::mut_from_ref)] // the exclusivity is the graph's, stated above
    unsafe fn view_mut(&self, i: usize, j: usize) -> MatMut<'_, f64> {
        // SAFETY: inside the borrowed matrix; exclusive by the caller's contract.
        unsafe {
            MatMut::from_raw_parts_mut(
                self.ptr.offset(self.offset(i, j)),
                self.extent(i),
                self.extent(j),
                self.row_stride,
                self.col_stride,
            )
        }
    }
}

impl CholeskyTiles for StridedTiles {
    fn potrf(&self, _: Backend, k: usize) -> Result<(), LaError> {
        // SAFETY: potrf(k) holds tile (k, k)'s token, so it alone touches it.
        faer_potrf(unsafe { self.view_mut(k, k) })
            .map_err(|column| LaError::NotPositiveDefinite { column: k * self.nb + column })
    }

    fn trsm(&self, _: Backend, i: usize, k: usize) -> Result<(), LaError> {
        // SAFETY: trsm(i, k) writes (i, k) alone and reads the final L(k, k),
        // which no step writes any more.
        unsafe { faer_trsm(self.view(k, k), self.view_mut(i, k)) };
        Ok(())
    }

    fn update(&self, backend: Backend, i: usize, j: usize, k: usize) -> Result<(), LaError> {
        // SAFETY: update(i, j, k) writes (i, j) alone and reads the final
        // L(i, k) and L(j, k) (k < j ≤ i, so neither is (i, j)).
        unsafe {
            match (backend, i == j) {
                (Backend::Faer, true) => faer_syrk(self.view(i, k), self.view_mut(i, i)),
                (Backend::Faer, false) => faer_gemm(self.view(i, k), self.view(j, k), self.view_mut(i, j)),
                // herd's kernels, also for `Backend::OpenBlas`, whose bindings
                // take contiguous tiles, not strided views.
                (_, true) => herd_syrk(self.view(i, k), self.view_mut(i, i)),
                (_, false) => herd_gemm(self.view(i, k), self.view(j, k), self.view_mut(i, j)),
            }
        }
        Ok(())
    }
}

/// [`potrf_flow`](crate::potrf_flow) on `a` itself: its lower triangle is
/// factored in place as `L·Lᵀ` by the same graph of `nb × nb` tiles
/// ([`Backend::default`]'s sequential kernels, on the current herd pool), reading and writing only
/// the lower triangle. `a` may have any strides (the transposed view of a
/// column-major matrix factors its upper triangle as `Uᵀ·U`).
///
/// Unlike `potrf_flow`, nothing is scanned up front: a NaN or an infinity in
/// the triangle makes the first pivot it reaches not positive, which is
/// reported as such, as LAPACK's `dpotrf` reports it.
///
/// # Errors
/// [`LaError::NotSquare`]; [`LaError::ShapeMismatch`] for `nb = 0`;
/// [`LaError::NotPositiveDefinite`] naming the global column whose pivot
/// failed (the graph stops; `a` is then partly factored).
pub fn potrf_flow_in_place(
    a: MatMut<'_, f64>,
    nb: usize,
    discipline: Discipline,
) -> Result<FlowReport, LaError> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(LaError::NotSquare { rows: n, cols: a.ncols() });
    }
    if nb == 0 {
        return Err(LaError::ShapeMismatch("potrf_flow_in_place: the tile size must be at least 1".into()));
    }
    let tiles = Arc::new(StridedTiles {
        ptr: a.as_ptr_mut(),
        n,
        nb,
        row_stride: a.row_stride(),
        col_stride: a.col_stride(),
    });
    // The graph has finished every step when this returns (herd-flow's
    // `wait` runs its drainers in a scope), so no view outlives the borrow
    // of `a`.
    cholesky_graph(&tiles, n.div_ceil(nb), Backend::default(), discipline, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{random_spd, residual};
    use faer::Mat;

    #[test]
    fn factors_in_place_like_the_sequential_kernel() {
        for (n, nb) in [(1, 4), (7, 3), (64, 16), (100, 32), (129, 64), (300, 64)] {
            let a = random_spd(n, 11 + n as u64);
            let mut l = a.clone();
            potrf_flow_in_place(l.as_mut(), nb, Discipline::DependencyCounted).unwrap();
            let r = residual(a.as_ref(), l.as_ref()).unwrap();
            assert!(r < 10.0, "n = {n}, nb = {nb}: residual {r}");
            // The strict upper triangle is the caller's, untouched.
            for j in 1..n {
                for i in 0..j {
                    assert_eq!(l[(i, j)], a[(i, j)], "n = {n}: upper ({i}, {j}) changed");
                }
            }
        }
    }

    #[test]
    fn a_transposed_view_factors_the_upper_triangle() {
        let n = 150;
        let a = random_spd(n, 5);
        let mut u = a.clone();
        potrf_flow_in_place(u.as_mut().transpose_mut(), 32, Discipline::OnTheFly).unwrap();
        // Uᵀ·U = A, with U the upper triangle; the strict lower one untouched.
        let mut lower = Mat::<f64>::zeros(n, n);
        for j in 0..n {
            for i in 0..=j {
                lower[(j, i)] = u[(i, j)];
            }
            for i in j + 1..n {
                assert_eq!(u[(i, j)], a[(i, j)]);
            }
        }
        let r = residual(a.as_ref(), lower.as_ref()).unwrap();
        assert!(r < 10.0, "residual {r}");
    }

    #[test]
    fn a_strided_submatrix_leaves_the_rest_alone() {
        // A 90 × 90 matrix inside a 100-row allocation (lda = 100).
        let n = 90;
        let a = random_spd(n, 9);
        let mut big = Mat::<f64>::from_fn(100, n, |i, j| if i < n { a[(i, j)] } else { -7.0 });
        potrf_flow_in_place(big.as_mut().submatrix_mut(0, 0, n, n), 16, Discipline::Requeue).unwrap();
        assert!((n..100).all(|i| (0..n).all(|j| big[(i, j)] == -7.0)));
        let r = residual(a.as_ref(), big.as_ref().submatrix(0, 0, n, n)).unwrap();
        assert!(r < 10.0, "residual {r}");
    }

    #[test]
    fn failures_name_the_pivot_lapack_names() {
        let n = 120;
        // Not positive definite at column 70: the leading minor of order 71.
        let mut a = random_spd(n, 3);
        a[(70, 70)] = -1.0e6;
        let e = potrf_flow_in_place(a.as_mut(), 32, Discipline::DependencyCounted).unwrap_err();
        assert!(matches!(e, LaError::NotPositiveDefinite { column: 70 }), "{e:?}");
        // A NaN below the diagonal at row 90 reaches pivot 90 first.
        let mut a = random_spd(n, 4);
        a[(90, 10)] = f64::NAN;
        let e = potrf_flow_in_place(a.as_mut(), 32, Discipline::DependencyCounted).unwrap_err();
        assert!(matches!(e, LaError::NotPositiveDefinite { column: 90 }), "{e:?}");
        // An infinity on the diagonal.
        let mut a = random_spd(n, 5);
        a[(33, 33)] = f64::INFINITY;
        let e = potrf_flow_in_place(a.as_mut(), 32, Discipline::DependencyCounted).unwrap_err();
        assert!(matches!(e, LaError::NotPositiveDefinite { column: 33 }), "{e:?}");
        let mut rect = Mat::<f64>::zeros(3, 4);
        assert!(matches!(
            potrf_flow_in_place(rect.as_mut(), 2, Discipline::DependencyCounted),
            Err(LaError::NotSquare { .. })
        ));
        let mut a = random_spd(4, 1);
        assert!(potrf_flow_in_place(a.as_mut(), 0, Discipline::DependencyCounted).is_err());
    }
}
