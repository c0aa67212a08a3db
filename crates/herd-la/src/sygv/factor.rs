//! Step 1 of `sygv`: the Cholesky factor `B = L·Lᵀ` with the herd-flow
//! graph of [`potrf_flow`] (tiles of `nb × nb`, critical-path priorities,
//! `Backend::default()`'s tile kernels), the lower triangle of `B` copied into
//! the tiles and the factor copied back, both on the herd pool.

use std::sync::Arc;

use faer::{MatMut, MatRef};
use herd_flow::Discipline;

use super::copy;
use crate::{potrf_flow, Backend, LaError, TiledMatrix};

/// Replaces the lower triangle of `b` (square) by its Cholesky factor `L`;
/// the strict upper triangle is not touched.
///
/// # Errors
/// As [`potrf_flow`]: [`LaError::NonFinite`] for a NaN or infinity in
/// `B`'s lower triangle, [`LaError::NotPositiveDefinite`] with the failing
/// column. `b` is then unchanged (the graph works on a tiled copy).
pub(super) fn cholesky(mut b: MatMut<'_, f64>, nb: usize) -> Result<(), LaError> {
    let n = b.nrows();
    let tiles = Arc::new(TiledMatrix::zeros(n, n, nb)?);
    to_tiles(b.as_ref(), &tiles);
    potrf_flow(&tiles, Backend::default(), Discipline::DependencyCounted, false)?;
    let width = tiles.nb();
    copy::for_each_col_block(b.as_mut(), width, &|mut block: MatMut<'_, f64>, col0| {
        let j = col0 / width;
        for i in j..tiles.mt() {
            let tile = tiles.tile(i, j);
            let src = tile.as_faer();
            let mut dst = block.as_mut().submatrix_mut(i * width, 0, src.nrows(), src.ncols());
            if i == j {
                // The diagonal tile: its lower triangle only.
                for c in 0..src.ncols() {
                    for r in c..src.nrows() {
                        dst[(r, c)] = src[(r, c)];
                    }
                }
            } else {
                dst.copy_from(src);
            }
        }
    });
    Ok(())
}

/// Copies the tiles on and below the diagonal of `b` into `tiles` (the
/// ones above stay zero: the factorization never reads them), one herd job
/// per tile column.
fn to_tiles(b: MatRef<'_, f64>, tiles: &TiledMatrix) {
    let nb = tiles.nb();
    herd::scope(|s| {
        for j in 0..tiles.nt() {
            s.spawn(move |_| {
                for i in j..tiles.mt() {
                    let mut tile = tiles.tile_mut(i, j);
                    let (rows, cols) = (tile.rows(), tile.cols());
                    tile.as_faer_mut().copy_from(b.submatrix(i * nb, j * nb, rows, cols));
                }
            });
        }
    });
}
