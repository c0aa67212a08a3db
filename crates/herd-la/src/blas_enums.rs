//! The BLAS arguments shared by the triangular and symmetric routines:
//! which triangle of a matrix is referenced ([`Uplo`], BLAS's `UPLO`) and
//! whether a triangular matrix has an implicit unit diagonal ([`Diag`],
//! BLAS's `DIAG`). The transpose argument is [`Op`](crate::Op).

/// Which triangle of a symmetric or triangular matrix is referenced
/// (BLAS's `UPLO`, `'L'` or `'U'`); the other triangle is neither read nor
/// written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Uplo {
    /// The lower triangle (with the diagonal).
    #[default]
    Lower,
    /// The upper triangle (with the diagonal).
    Upper,
}

impl Uplo {
    /// The other triangle: the one a transposed view of the matrix keeps.
    pub fn flip(self) -> Uplo {
        match self {
            Uplo::Lower => Uplo::Upper,
            Uplo::Upper => Uplo::Lower,
        }
    }
}

/// Whether a triangular matrix has a unit diagonal (BLAS's `DIAG`, `'U'` or
/// `'N'`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Diag {
    /// The diagonal is taken to be all ones and is not read.
    Unit,
    /// The diagonal is read from the matrix.
    #[default]
    NonUnit,
}
