//! Which side of a matrix an operator is applied on (LAPACK's `SIDE`
//! argument, `'L'` or `'R'`), shared by the routines that apply an
//! orthogonal or triangular factor to another matrix ([`ormqr`](crate::ormqr),
//! [`trsm`](crate::trsm()), ...).

/// Whether an operator `op(Q)` multiplies `C` from the left or the right.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Side {
    /// `C ← op(Q)·C`, `op(A)·X = α·B` (LAPACK's `'L'`).
    #[default]
    Left,
    /// `C ← C·op(Q)`, `X·op(A) = α·B` (LAPACK's `'R'`).
    Right,
}
