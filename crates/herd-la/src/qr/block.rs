//! A block of `w` consecutive reflectors in compact-WY form
//! (`H₀·H₁···H_{w−1} = I − V·T·Vᵀ`, Schreiber and Van Loan) and its
//! application to a matrix with matrix products (LAPACK's `dlarft` and
//! `dlarfb` for `DIRECT = 'F'`, `STOREV = 'C'`). Sequential: callers spread
//! blocks of the target over the herd pool.
//!
//! `V` is read where `geqrf` leaves it — below the diagonal of the factored
//! columns — not copied: only its top `w × w` triangle (ones on the
//! diagonal, zeros above, which the stored matrix holds `R` in place of) is
//! kept explicitly, and every product with `V` is two products, one with
//! that triangle and one with the stored rows below it. Copying `V` whole
//! (`r × w`, once per level of the recursive panel) made a 4000 × 128 panel
//! take 14.5 ms on one participant of the 2-vCPU Xeon, against 7.2 ms
//! without (BENCHMARKS.md "QR's panel"). The large products go to herd's
//! GEMM kernel where it takes their shape (`gemm::add_product`).

use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, Mat, MatMut, MatRef, Par};

use crate::gemm::add_product;
use crate::Op;

/// A full (rectangular) operand of a triangular product.
const RECT: BlockStructure = BlockStructure::Rectangular;

/// Where the reflectors' vectors are stored.
enum Stored<'a> {
    /// In the caller's factored matrix.
    View(MatRef<'a, f64>),
    /// In a matrix of the block's own (the caller's storage is to be
    /// overwritten, or was built for the block).
    Owned(Mat<f64>),
}

/// `w` reflectors whose vectors have `r ≥ w` rows: `V` (unit lower
/// trapezoidal) and the upper triangular `T`.
pub(crate) struct Block<'a> {
    /// `r × w`: `v_i` below the diagonal of column `i`; what is on and
    /// above the diagonal is not read.
    stored: Stored<'a>,
    /// The top `w × w` of `V`: ones on the diagonal, zeros above, the
    /// stored vectors below.
    top: Mat<f64>,
    /// `w × w`, upper triangular (zeros below), `T[i, i] = tau[i]`.
    t: Mat<f64>,
}

impl<'a> Block<'a> {
    /// The block of the reflectors stored below the diagonal of the first
    /// `tau.len()` columns of `a` (`r × ≥w`, `w = tau.len() ≤ r`, as `geqrf`
    /// leaves them; any strides), with their `tau`, read in place: `T`
    /// formed as `dlarft` does — `T[..i, i] = −tau[i]·T[..i, ..i]·(V[:, ..i]ᵀ·v_i)`,
    /// column `i` zero when `tau[i] = 0`.
    pub(crate) fn from_panel(a: MatRef<'a, f64>, tau: &[f64]) -> Block<'a> {
        Block::formed(Stored::View(a.subcols(0, tau.len())), tau)
    }

    /// [`Block::from_panel`] with the block keeping `v` (its vectors below
    /// the diagonal of its `tau.len()` columns) as its own.
    pub(crate) fn from_owned(v: Mat<f64>, tau: &[f64]) -> Block<'static> {
        debug_assert_eq!(v.ncols(), tau.len());
        Block::formed(Stored::Owned(v), tau)
    }

    /// [`Block::from_panel`] on a copy of `a`'s first `tau.len()` columns:
    /// for callers that overwrite `a` while the block is in use.
    pub(crate) fn copied_from_panel(a: MatRef<'_, f64>, tau: &[f64]) -> Block<'static> {
        Block::from_owned(a.subcols(0, tau.len()).to_owned(), tau)
    }

    fn formed(stored: Stored<'a>, tau: &[f64]) -> Block<'a> {
        let v = stored_ref(&stored);
        let (top, w) = (top_of(v), v.ncols());
        // G = VᵀV: the top triangle's part and the stored rows' below it.
        let mut g = Mat::zeros(w, w);
        matmul(g.as_mut(), Accum::Replace, top.transpose(), top.as_ref(), 1.0, Par::Seq);
        let below = v.subrows(w, v.nrows() - w);
        matmul(g.as_mut(), Accum::Add, below.transpose(), below, 1.0, Par::Seq);
        let mut t = Mat::<f64>::zeros(w, w);
        for i in 0..w {
            if tau[i] == 0.0 {
                continue;
            }
            for row in 0..i {
                let s: f64 = (row..i).map(|c| t[(row, c)] * g[(c, i)]).sum();
                t[(row, i)] = -tau[i] * s;
            }
            t[(i, i)] = tau[i];
        }
        Block { stored, top, t }
    }

    /// Rows `row0..row0 + h` of `second`'s vectors' part of the coupling
    /// `V₁ᵀ·V₂` of [`Block::joined_t`]: one term of it summed over row
    /// pieces (`row0 + h ≤ second.rows()`).
    pub(crate) fn coupling(first: &Block<'_>, second: &Block<'_>, row0: usize, h: usize) -> Mat<f64> {
        let mut x = Mat::zeros(first.width(), second.width());
        for (v2, off) in second.pieces(row0, h) {
            x += first.left_product(first.width() + row0 + off, v2);
        }
        x
    }

    /// `T` of the `w₁ + w₂` consecutive reflectors of the blocks `first`
    /// (the first `w₁`, vectors of `r` rows) and `second` (the next `w₂`,
    /// vectors from row `w₁`: `V = [V₁, (0; V₂)]`), as `dgeqrt3` joins
    /// them: `T = [T₁, −T₁·(V₁ᵀ·V₂)·T₂; 0, T₂]`, given the coupling
    /// `x = V₁ᵀ·V₂` (the sum of [`Block::coupling`] over `second`'s rows;
    /// `2·(r − w₁)·w₁·w₂` flops, the only product over the rows: `T` is not
    /// formed anew). [`Block::with_t`] makes the joined block.
    pub(crate) fn joined_t(first: &Block<'_>, second: &Block<'_>, x: Mat<f64>) -> Mat<f64> {
        let (w1, w2) = (first.width(), second.width());
        debug_assert_eq!(second.rows() + w1, first.rows());
        debug_assert!(x.nrows() == w1 && x.ncols() == w2);
        let mut y = Mat::zeros(w1, w2);
        matmul(y.as_mut(), Accum::Replace, first.t.as_ref(), x.as_ref(), 1.0, Par::Seq);
        let mut t = Mat::zeros(w1 + w2, w1 + w2);
        t.as_mut().submatrix_mut(0, 0, w1, w1).copy_from(&first.t);
        t.as_mut().submatrix_mut(w1, w1, w2, w2).copy_from(&second.t);
        matmul(
            t.as_mut().submatrix_mut(0, w1, w1, w2),
            Accum::Replace,
            y.as_ref(),
            second.t.as_ref(),
            -1.0,
            Par::Seq,
        );
        t
    }

    /// The block of the reflectors stored below the diagonal of `a`'s
    /// columns (`r × w`), read in place, whose `T` (`w × w`) is `t`, as
    /// [`Block::joined_t`] gives it for two blocks of `a`'s columns.
    pub(crate) fn with_t(a: MatRef<'a, f64>, t: Mat<f64>) -> Block<'a> {
        debug_assert!(t.nrows() == a.ncols() && t.ncols() == a.ncols());
        Block { top: top_of(a), stored: Stored::View(a), t }
    }
}

/// The stored vectors as a view.
fn stored_ref<'s>(stored: &'s Stored<'_>) -> MatRef<'s, f64> {
    match stored {
        Stored::View(v) => *v,
        Stored::Owned(v) => v.as_ref(),
    }
}

/// The explicit top `w × w` of the `V` stored in `v` (`r × w`, `r ≥ w`).
fn top_of(v: MatRef<'_, f64>) -> Mat<f64> {
    let w = v.ncols();
    assert!(v.nrows() >= w, "a block of {w} reflectors needs at least {w} rows, has {}", v.nrows());
    Mat::from_fn(w, w, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Less => 0.0,
        std::cmp::Ordering::Equal => 1.0,
        std::cmp::Ordering::Greater => v[(i, j)],
    })
}

impl Block<'_> {
    /// `V` explicitly: `r × w`, ones on the diagonal, zeros above.
    pub(crate) fn explicit_v(&self) -> Mat<f64> {
        let (r, w) = (self.rows(), self.width());
        let mut v = Mat::zeros(r, w);
        v.as_mut().subrows_mut(0, w).copy_from(&self.top);
        v.as_mut().subrows_mut(w, r - w).copy_from(self.stored().subrows(w, r - w));
        v
    }

    fn stored(&self) -> MatRef<'_, f64> {
        stored_ref(&self.stored)
    }

    /// Rows `row0..row0 + h` of `V` as at most two pieces, each with its
    /// first row's offset in that range: the part in the explicit top
    /// triangle, the part in the stored rows below it (either may be empty).
    fn pieces(&self, row0: usize, h: usize) -> impl Iterator<Item = (MatRef<'_, f64>, usize)> {
        let w = self.width();
        let end = row0 + h;
        let (a0, a1) = (row0.min(w), end.min(w));
        let (b0, b1) = (row0.max(w), end.max(w));
        [(self.top.as_ref().subrows(a0, a1 - a0), 0), (self.stored().subrows(b0, b1 - b0), a1 - a0)]
            .into_iter()
            .filter(|(v, _)| v.nrows() > 0)
    }

    /// `T`: `w × w`, upper triangular (zeros below).
    pub(crate) fn t(&self) -> MatRef<'_, f64> {
        self.t.as_ref()
    }

    /// Reflectors in the block.
    pub(crate) fn width(&self) -> usize {
        self.top.ncols()
    }

    /// Rows of the reflectors' vectors.
    pub(crate) fn rows(&self) -> usize {
        self.stored().nrows()
    }

    /// `C ← op(H)·C` for the `r × nc` view `c`, `H = I − V·T·Vᵀ`:
    /// `W = Vᵀ·C`, `W ← op(T)·W`, `C −= V·W`.
    pub(crate) fn apply_left(&self, op: Op, c: MatMut<'_, f64>) {
        if self.width() == 0 || c.ncols() == 0 {
            return;
        }
        let w = self.left_product(0, c.as_ref());
        let y = self.times_t(op, w.as_ref());
        self.subtract_left(0, y.as_ref(), c);
    }

    /// `V[row0.., :]ᵀ·C` for the `rows × nc` piece `c` of a target whose
    /// row `row0` faces `V`'s row `row0`: one term of `W = Vᵀ·C` summed over
    /// row pieces.
    pub(crate) fn left_product(&self, row0: usize, c: MatRef<'_, f64>) -> Mat<f64> {
        let mut x = Mat::zeros(self.width(), c.ncols());
        for (v, off) in self.pieces(row0, c.nrows()) {
            add_product(x.as_mut(), 1.0, v.transpose(), c.subrows(off, v.nrows()));
        }
        x
    }

    /// `op(T)·W`.
    pub(crate) fn times_t(&self, op: Op, w: MatRef<'_, f64>) -> Mat<f64> {
        let mut y = Mat::zeros(self.width(), w.ncols());
        let (t, shape) = self.op_t(op);
        triangular::matmul(y.as_mut(), RECT, Accum::Replace, t, shape, w, RECT, 1.0, Par::Seq);
        y
    }

    /// `C −= V[row0.., :]·Y` for the piece `c` starting at row `row0`.
    pub(crate) fn subtract_left(&self, row0: usize, y: MatRef<'_, f64>, mut c: MatMut<'_, f64>) {
        for (v, off) in self.pieces(row0, c.nrows()) {
            add_product(c.as_mut().subrows_mut(off, v.nrows()), -1.0, v, y);
        }
    }

    /// `C ← C·op(H)` for the `nr × r` view `c`: `W = C·V`, `W ← W·op(T)`,
    /// `C −= W·Vᵀ`.
    pub(crate) fn apply_right(&self, op: Op, mut c: MatMut<'_, f64>) {
        let w = self.width();
        if w == 0 || c.nrows() == 0 {
            return;
        }
        let mut x = Mat::zeros(c.nrows(), w);
        for (v, off) in self.pieces(0, self.rows()) {
            matmul(x.as_mut(), Accum::Add, c.as_ref().subcols(off, v.nrows()), v, 1.0, Par::Seq);
        }
        let mut y = Mat::zeros(c.nrows(), w);
        let (t, shape) = self.op_t(op);
        triangular::matmul(y.as_mut(), RECT, Accum::Replace, x.as_ref(), RECT, t, shape, 1.0, Par::Seq);
        for (v, off) in self.pieces(0, self.rows()) {
            matmul(
                c.as_mut().subcols_mut(off, v.nrows()),
                Accum::Add,
                y.as_ref(),
                v.transpose(),
                -1.0,
                Par::Seq,
            );
        }
    }

    /// `T` or `Tᵀ`, and its triangle: products with it read only that
    /// triangle (half the flops of a full product).
    fn op_t(&self, op: Op) -> (MatRef<'_, f64>, BlockStructure) {
        match op {
            Op::NoTrans => (self.t.as_ref(), BlockStructure::TriangularUpper),
            Op::Trans => (self.t.as_ref().transpose(), BlockStructure::TriangularLower),
        }
    }
}
