//! A block of `w` consecutive reflectors in compact-WY form
//! (`H₀·H₁···H_{w−1} = I − V·T·Vᵀ`, Schreiber and Van Loan) and its
//! application to a matrix with matrix products (LAPACK's `dlarft` and
//! `dlarfb` for `DIRECT = 'F'`, `STOREV = 'C'`). Sequential: callers spread
//! blocks of the target over the herd pool.

use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, Mat, MatMut, MatRef, Par};

use crate::Op;

/// A full (rectangular) operand of a triangular product.
const RECT: BlockStructure = BlockStructure::Rectangular;

/// `V` (explicit: ones on the diagonal, zeros above) and the upper
/// triangular `T` of `w` reflectors whose vectors have `r` rows.
pub(crate) struct Block {
    /// `r × w`, unit lower trapezoidal, stored in full.
    v: Mat<f64>,
    /// `w × w`, upper triangular (zeros below), `T[i, i] = tau[i]`.
    t: Mat<f64>,
}

impl Block {
    /// The block of the reflectors stored below the diagonal of the first
    /// `tau.len()` columns of `a` (`r × ≥w`, `w = tau.len() ≤ r`, as `geqrf`
    /// leaves them; any strides), with their `tau`: `V` copied out, `T` formed
    /// as `dlarft` does — `T[..i, i] = −tau[i]·T[..i, ..i]·(V[:, ..i]ᵀ·v_i)`,
    /// column `i` zero when `tau[i] = 0`.
    pub(crate) fn from_panel(a: MatRef<'_, f64>, tau: &[f64]) -> Block {
        let (r, w) = (a.nrows(), tau.len());
        let v = Mat::from_fn(r, w, |i, j| match i.cmp(&j) {
            std::cmp::Ordering::Less => 0.0,
            std::cmp::Ordering::Equal => 1.0,
            std::cmp::Ordering::Greater => a[(i, j)],
        });
        let mut g = Mat::zeros(w, w);
        matmul(g.as_mut(), Accum::Replace, v.as_ref().transpose(), v.as_ref(), 1.0, Par::Seq);
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
        Block { v, t }
    }

    /// The block of `w₁ + w₂` consecutive reflectors from the blocks `first`
    /// (the first `w₁`, vectors of `r` rows) and `second` (the next `w₂`,
    /// vectors from row `w₁`: `V = [V₁, (0; V₂)]`), as
    /// `dgeqrt3` joins them: `T = [T₁, −T₁·(V₁ᵀ·V₂)·T₂; 0, T₂]` — only the
    /// coupling `V₁ᵀ·V₂` is a product over the rows, `2·(r − w₁)·w₁·w₂`
    /// flops instead of forming `T` anew.
    pub(crate) fn join(first: &Block, second: &Block) -> Block {
        let (w1, w2) = (first.width(), second.width());
        let w = w1 + w2;
        let r = first.rows();
        let mut x = Mat::zeros(w1, w2);
        let v1_low = first.v.as_ref().subrows(w1, r - w1);
        matmul(x.as_mut(), Accum::Replace, v1_low.transpose(), second.v.as_ref(), 1.0, Par::Seq);
        let mut y = Mat::zeros(w1, w2);
        matmul(y.as_mut(), Accum::Replace, first.t.as_ref(), x.as_ref(), 1.0, Par::Seq);
        let mut t = Mat::zeros(w, w);
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
        let mut v = Mat::zeros(r, w);
        v.as_mut().subcols_mut(0, w1).copy_from(&first.v);
        v.as_mut().submatrix_mut(w1, w1, r - w1, w2).copy_from(&second.v);
        Block { v, t }
    }

    /// `V`: `r × w`, unit lower trapezoidal, stored in full.
    pub(crate) fn v(&self) -> MatRef<'_, f64> {
        self.v.as_ref()
    }

    /// `T`: `w × w`, upper triangular (zeros below).
    pub(crate) fn t(&self) -> MatRef<'_, f64> {
        self.t.as_ref()
    }

    /// Reflectors in the block.
    pub(crate) fn width(&self) -> usize {
        self.v.ncols()
    }

    /// Rows of the reflectors' vectors.
    pub(crate) fn rows(&self) -> usize {
        self.v.nrows()
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
        let v = self.v.as_ref().subrows(row0, c.nrows());
        matmul(x.as_mut(), Accum::Replace, v.transpose(), c, 1.0, Par::Seq);
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
    pub(crate) fn subtract_left(&self, row0: usize, y: MatRef<'_, f64>, c: MatMut<'_, f64>) {
        let v = self.v.as_ref().subrows(row0, c.nrows());
        matmul(c, Accum::Add, v, y, -1.0, Par::Seq);
    }

    /// `C ← C·op(H)` for the `nr × r` view `c`: `W = C·V`, `W ← W·op(T)`,
    /// `C −= W·Vᵀ`.
    pub(crate) fn apply_right(&self, op: Op, c: MatMut<'_, f64>) {
        let (v, w) = (self.v.as_ref(), self.v.ncols());
        if w == 0 || c.nrows() == 0 {
            return;
        }
        let mut x = Mat::zeros(c.nrows(), w);
        matmul(x.as_mut(), Accum::Replace, c.as_ref(), v, 1.0, Par::Seq);
        let mut y = Mat::zeros(c.nrows(), w);
        let (t, shape) = self.op_t(op);
        triangular::matmul(y.as_mut(), RECT, Accum::Replace, x.as_ref(), RECT, t, shape, 1.0, Par::Seq);
        matmul(c, Accum::Add, y.as_ref(), v.transpose(), -1.0, Par::Seq);
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
