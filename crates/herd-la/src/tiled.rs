//! [`TiledMatrix`]: a dense `f64` matrix stored as contiguous column-major tiles.
//!
//! # Layout
//!
//! An `m × n` matrix with tile size `nb` has `mt = ⌈m / nb⌉` tile rows and `nt = ⌈n / nb⌉` tile
//! columns. Tile `(i, j)` covers rows `i·nb .. min((i+1)·nb, m)` and columns
//! `j·nb .. min((j+1)·nb, n)`; its elements are stored contiguously in column-major order with
//! leading dimension equal to the tile's row count. Tiles in the last tile row/column are smaller
//! when `m` or `n` is not a multiple of `nb`.
//!
//! # Concurrency
//!
//! Every tile sits behind its own [`RwLock`], so a `TiledMatrix` shared through an `Arc` lets
//! different tasks read and write *different* tiles at the same time with safe code only:
//! [`TiledMatrix::tile`] takes a shared lock and [`TiledMatrix::tile_mut`] an exclusive one, both
//! through `&self`. A dataflow scheduler that orders the tasks by their dependencies never
//! contends on a lock, so the cost is one uncontended atomic operation per tile access.
//! Holding a [`TileRef`] and asking for a [`TileMut`] of the same tile on the same thread
//! deadlocks, exactly as with any `RwLock`; the tile kernels never need that.
//!
//! Lock poisoning (a panic while a tile was held) is ignored: the data of a tile is plain `f64`s,
//! so there is no invariant a panic could break.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use faer::{Mat, MatMut, MatRef};

use crate::LaError;

/// One tile: a `rows × cols` block stored contiguously in column-major order (`ld = rows`).
#[derive(Debug, Clone, PartialEq)]
pub struct Tile {
    rows: usize,
    cols: usize,
    data: Vec<f64>,
}

impl Tile {
    /// A zero-filled `rows × cols` tile.
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Tile { rows, cols, data: vec![0.0; rows * cols] }
    }

    /// A tile holding a copy of `m` (any strides).
    pub fn from_faer(m: MatRef<'_, f64>) -> Self {
        let mut t = Tile::zeros(m.nrows(), m.ncols());
        t.as_faer_mut().copy_from(m);
        t
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The elements, column-major, leading dimension [`Tile::rows`].
    pub fn data(&self) -> &[f64] {
        &self.data
    }

    /// The elements, mutable, column-major, leading dimension [`Tile::rows`].
    pub fn data_mut(&mut self) -> &mut [f64] {
        &mut self.data
    }

    /// A faer view of the tile.
    pub fn as_faer(&self) -> MatRef<'_, f64> {
        MatRef::from_column_major_slice(&self.data, self.rows, self.cols)
    }

    /// A mutable faer view of the tile.
    pub fn as_faer_mut(&mut self) -> MatMut<'_, f64> {
        MatMut::from_column_major_slice_mut(&mut self.data, self.rows, self.cols)
    }
}

/// Shared access to one tile of a [`TiledMatrix`] (holds the tile's read lock).
#[derive(Debug)]
pub struct TileRef<'a>(RwLockReadGuard<'a, Tile>);

impl Deref for TileRef<'_> {
    type Target = Tile;
    fn deref(&self) -> &Tile {
        &self.0
    }
}

/// Exclusive access to one tile of a [`TiledMatrix`] (holds the tile's write lock).
#[derive(Debug)]
pub struct TileMut<'a>(RwLockWriteGuard<'a, Tile>);

impl Deref for TileMut<'_> {
    type Target = Tile;
    fn deref(&self) -> &Tile {
        &self.0
    }
}

impl DerefMut for TileMut<'_> {
    fn deref_mut(&mut self) -> &mut Tile {
        &mut self.0
    }
}

/// A dense `m × n` `f64` matrix stored as `nb × nb` tiles; see the [module docs](self).
#[derive(Debug)]
pub struct TiledMatrix {
    nrows: usize,
    ncols: usize,
    nb: usize,
    mt: usize,
    nt: usize,
    /// Tile `(i, j)` is at index `i + j * mt`.
    tiles: Vec<RwLock<Tile>>,
}

impl Clone for TiledMatrix {
    fn clone(&self) -> Self {
        TiledMatrix {
            nrows: self.nrows,
            ncols: self.ncols,
            nb: self.nb,
            mt: self.mt,
            nt: self.nt,
            tiles: self
                .tiles
                .iter()
                .map(|t| RwLock::new(t.read().unwrap_or_else(PoisonError::into_inner).clone()))
                .collect(),
        }
    }
}

impl TiledMatrix {
    /// A zero `nrows × ncols` matrix with tile size `nb`.
    ///
    /// # Errors
    /// [`LaError::InvalidTileSize`] if `nb == 0`; [`LaError::ShapeMismatch`]
    /// if `nrows × ncols` values of `f64` do not fit in the address space.
    pub fn zeros(nrows: usize, ncols: usize, nb: usize) -> Result<Self, LaError> {
        if nb == 0 {
            return Err(LaError::InvalidTileSize { nb });
        }
        let max = isize::MAX as usize / std::mem::size_of::<f64>();
        if nrows.checked_mul(ncols).is_none_or(|values| values > max) {
            return Err(LaError::ShapeMismatch(format!(
                "a {nrows} x {ncols} matrix of f64 does not fit in the address space"
            )));
        }
        let mt = nrows.div_ceil(nb);
        let nt = ncols.div_ceil(nb);
        let mut tiles = Vec::with_capacity(mt * nt);
        for j in 0..nt {
            let cols = (ncols - j * nb).min(nb);
            for i in 0..mt {
                let rows = (nrows - i * nb).min(nb);
                tiles.push(RwLock::new(Tile::zeros(rows, cols)));
            }
        }
        Ok(TiledMatrix { nrows, ncols, nb, mt, nt, tiles })
    }

    /// Builds an `n × n` tiled matrix from a column-major buffer `a` with leading dimension `lda`.
    ///
    /// # Errors
    /// [`LaError::InvalidTileSize`] if `nb == 0`; [`LaError::ShapeMismatch`] if `lda < n` (for
    /// `n > 0`) or `a` is too short.
    pub fn from_col_major(n: usize, nb: usize, a: &[f64], lda: usize) -> Result<Self, LaError> {
        Self::from_col_major_rect(n, n, nb, a, lda)
    }

    /// Builds an `m × n` tiled matrix from a column-major buffer `a` with leading dimension `lda`.
    ///
    /// # Errors
    /// As [`TiledMatrix::from_col_major`], with `lda < m` in place of `lda < n`.
    pub fn from_col_major_rect(
        m: usize,
        n: usize,
        nb: usize,
        a: &[f64],
        lda: usize,
    ) -> Result<Self, LaError> {
        let mut t = Self::zeros(m, n, nb)?;
        if m == 0 || n == 0 {
            return Ok(t);
        }
        if lda < m {
            return Err(LaError::ShapeMismatch(format!("lda = {lda} is less than the row count {m}")));
        }
        let needed = (n - 1).checked_mul(lda).and_then(|x| x.checked_add(m));
        match needed {
            Some(needed) if a.len() >= needed => {}
            _ => {
                return Err(LaError::ShapeMismatch(format!(
                    "buffer of {} elements is too short for a {m} x {n} matrix with lda = {lda}",
                    a.len()
                )))
            }
        }
        let (mt, nb) = (t.mt, t.nb);
        for (idx, lock) in t.tiles.iter_mut().enumerate() {
            let (i, j) = (idx % mt, idx / mt);
            let tile = lock.get_mut().unwrap_or_else(PoisonError::into_inner);
            let rows = tile.rows;
            for c in 0..tile.cols {
                let src = (j * nb + c) * lda + i * nb;
                tile.data[c * rows..(c + 1) * rows].copy_from_slice(&a[src..src + rows]);
            }
        }
        Ok(t)
    }

    /// Builds a tiled matrix from a faer matrix view (any shape and strides).
    ///
    /// # Errors
    /// [`LaError::InvalidTileSize`] if `nb == 0`.
    pub fn from_faer(a: MatRef<'_, f64>, nb: usize) -> Result<Self, LaError> {
        let mut t = Self::zeros(a.nrows(), a.ncols(), nb)?;
        let mt = t.mt;
        for (idx, lock) in t.tiles.iter_mut().enumerate() {
            let (i, j) = (idx % mt, idx / mt);
            let tile = lock.get_mut().unwrap_or_else(PoisonError::into_inner);
            let (rows, cols) = (tile.rows, tile.cols);
            tile.as_faer_mut().copy_from(a.submatrix(i * nb, j * nb, rows, cols));
        }
        Ok(t)
    }

    /// Copies the matrix out into a column-major buffer with leading dimension `nrows`.
    pub fn to_col_major(&self) -> Vec<f64> {
        let m = self.nrows;
        let mut out = vec![0.0; m * self.ncols];
        for j in 0..self.nt {
            for i in 0..self.mt {
                let tile = self.tile(i, j);
                let rows = tile.rows;
                for c in 0..tile.cols {
                    let dst = (j * self.nb + c) * m + i * self.nb;
                    out[dst..dst + rows].copy_from_slice(&tile.data[c * rows..(c + 1) * rows]);
                }
            }
        }
        out
    }

    /// Copies the matrix out into a faer matrix.
    pub fn to_faer(&self) -> Mat<f64> {
        let mut out = Mat::zeros(self.nrows, self.ncols);
        for j in 0..self.nt {
            for i in 0..self.mt {
                let tile = self.tile(i, j);
                out.as_mut()
                    .submatrix_mut(i * self.nb, j * self.nb, tile.rows, tile.cols)
                    .copy_from(tile.as_faer());
            }
        }
        out
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// Tile size `nb`.
    pub fn nb(&self) -> usize {
        self.nb
    }

    /// Number of tile rows, `⌈nrows / nb⌉`.
    pub fn mt(&self) -> usize {
        self.mt
    }

    /// Number of tile columns, `⌈ncols / nb⌉`.
    pub fn nt(&self) -> usize {
        self.nt
    }

    /// Row count of tiles in tile row `i` (0 if `i` is out of range).
    pub fn tile_rows(&self, i: usize) -> usize {
        if i < self.mt {
            (self.nrows - i * self.nb).min(self.nb)
        } else {
            0
        }
    }

    /// Column count of tiles in tile column `j` (0 if `j` is out of range).
    pub fn tile_cols(&self, j: usize) -> usize {
        if j < self.nt {
            (self.ncols - j * self.nb).min(self.nb)
        } else {
            0
        }
    }

    fn lock(&self, i: usize, j: usize) -> &RwLock<Tile> {
        assert!(
            i < self.mt && j < self.nt,
            "tile ({i}, {j}) out of range for a {} x {} tile grid",
            self.mt,
            self.nt
        );
        &self.tiles[i + j * self.mt]
    }

    /// Shared access to tile `(i, j)`; blocks while another thread holds it exclusively.
    ///
    /// # Panics
    /// If `i >= mt()` or `j >= nt()` (a programming error, like slice indexing); use
    /// [`TiledMatrix::try_tile`] for a checked version.
    pub fn tile(&self, i: usize, j: usize) -> TileRef<'_> {
        TileRef(self.lock(i, j).read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Exclusive access to tile `(i, j)` through a shared reference, so that different tasks can
    /// update different tiles concurrently; blocks while another thread holds the tile.
    ///
    /// # Panics
    /// If `i >= mt()` or `j >= nt()`; use [`TiledMatrix::try_tile_mut`] for a checked version.
    pub fn tile_mut(&self, i: usize, j: usize) -> TileMut<'_> {
        TileMut(self.lock(i, j).write().unwrap_or_else(PoisonError::into_inner))
    }

    /// Checked [`TiledMatrix::tile`]: `None` when `(i, j)` is out of range.
    pub fn try_tile(&self, i: usize, j: usize) -> Option<TileRef<'_>> {
        (i < self.mt && j < self.nt).then(|| self.tile(i, j))
    }

    /// Checked [`TiledMatrix::tile_mut`]: `None` when `(i, j)` is out of range.
    pub fn try_tile_mut(&self, i: usize, j: usize) -> Option<TileMut<'_>> {
        (i < self.mt && j < self.nt).then(|| self.tile_mut(i, j))
    }

    /// Lock-free exclusive access to tile `(i, j)` when the matrix is not shared.
    ///
    /// # Panics
    /// If `(i, j)` is out of range.
    pub fn tile_get_mut(&mut self, i: usize, j: usize) -> &mut Tile {
        let mt = self.mt;
        assert!(i < mt && j < self.nt, "tile ({i}, {j}) out of range");
        self.tiles[i + j * mt].get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    /// Element `(row, col)` (global indices), or `None` when out of range.
    pub fn get(&self, row: usize, col: usize) -> Option<f64> {
        if row >= self.nrows || col >= self.ncols {
            return None;
        }
        let tile = self.tile(row / self.nb, col / self.nb);
        Some(tile.data[(col % self.nb) * tile.rows + row % self.nb])
    }

    /// Sets element `(row, col)` (global indices); returns `false` when out of range.
    pub fn set(&self, row: usize, col: usize, value: f64) -> bool {
        if row >= self.nrows || col >= self.ncols {
            return false;
        }
        let mut tile = self.tile_mut(row / self.nb, col / self.nb);
        let rows = tile.rows;
        tile.data[(col % self.nb) * rows + row % self.nb] = value;
        true
    }

    /// The first NaN or infinite element of the lower triangle (including the diagonal) in
    /// column-major order, as global `(row, col)`. Scans on the current herd pool (the global
    /// pool outside any).
    pub fn first_non_finite_lower(&self) -> Option<(usize, usize)> {
        // Fast pass over whole tiles (a non-finite entry above the diagonal of a diagonal tile
        // only sends us to the exact search below, which looks at the lower triangle alone).
        // One herd job per tile column, on the current pool: the pass is memory-bound and two
        // cores scan faster than one.
        let suspect = AtomicBool::new(false);
        herd::scope(|s| {
            for j in 0..self.nt {
                let suspect = &suspect;
                s.spawn(move |_| {
                    if (j..self.mt).any(|i| any_non_finite(&self.tile(i, j).data)) {
                        suspect.store(true, Ordering::Relaxed);
                    }
                });
            }
        });
        let suspect = suspect.into_inner();
        if !suspect {
            return None;
        }
        for j in 0..self.nt {
            for c in 0..self.tile_cols(j) {
                let col = j * self.nb + c;
                for i in (col / self.nb)..self.mt {
                    let tile = self.tile(i, j);
                    let rows = tile.rows;
                    let start = if i == col / self.nb { col % self.nb } else { 0 };
                    if let Some(r) =
                        tile.data[c * rows + start..(c + 1) * rows].iter().position(|x| !x.is_finite())
                    {
                        return Some((i * self.nb + start + r, col));
                    }
                }
            }
        }
        None
    }
}

/// Whether `data` holds a NaN or an infinity. `x * 0.0` is 0 for finite `x` and NaN otherwise,
/// so a sum of them is NaN exactly when one is not finite; eight independent sums make the
/// loop branch-free and vectorizable (a plain `iter().any(..)` scans one element per cycle,
/// which cost 5 % of a 2-core factorization of n = 4000).
fn any_non_finite(data: &[f64]) -> bool {
    let mut acc = [0.0f64; 8];
    let chunks = data.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, &x) in acc.iter_mut().zip(c) {
            *a += x * 0.0;
        }
    }
    let tail: f64 = rest.iter().map(|&x| x * 0.0).sum();
    (acc.iter().sum::<f64>() + tail).is_nan()
}

#[cfg(test)]
mod tests {
    use super::any_non_finite;

    #[test]
    fn non_finite_found_anywhere() {
        for len in [0, 1, 7, 8, 9, 17, 64] {
            let v = vec![1.5f64; len];
            assert!(!any_non_finite(&v));
            for pos in 0..len {
                for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                    let mut w = v.clone();
                    w[pos] = bad;
                    assert!(any_non_finite(&w), "len {len} pos {pos} {bad}");
                }
            }
        }
        assert!(!any_non_finite(&[f64::MAX, f64::MIN, -0.0, f64::MIN_POSITIVE]));
    }

    #[test]
    fn a_matrix_larger_than_the_address_space_is_an_error() {
        for (m, n) in [(usize::MAX, 2), (1 << 32, 1 << 32), (10_000_000_000, 10_000_000_000)] {
            let Err(e) = super::TiledMatrix::zeros(m, n, 256) else { panic!("{m} x {n} accepted") };
            assert!(e.to_string().contains("does not fit in the address space"), "{e}");
        }
    }
}
