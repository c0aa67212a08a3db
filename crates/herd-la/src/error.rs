//! The error type of `herd-la`, modelled on LAPACK's `INFO` codes.

/// Errors returned by tiled matrix construction, tile kernels and factorizations.
///
/// Nothing in this crate panics on bad input; every malformed argument maps to one of these
/// variants.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaError {
    /// The matrix is not (numerically) positive definite: the pivot of global column `column`
    /// (0-based, i.e. LAPACK's `INFO − 1`) was not positive. The leading `column × column`
    /// block has been factored; later columns are left in an unspecified state.
    #[error("matrix is not positive definite: the pivot of column {column} is not positive")]
    NotPositiveDefinite {
        /// 0-based global column whose pivot failed.
        column: usize,
    },
    /// The input contains a NaN or an infinity at (`row`, `col`) (0-based, global indices).
    #[error("non-finite input value at ({row}, {col})")]
    NonFinite {
        /// 0-based row of the first non-finite value found.
        row: usize,
        /// 0-based column of the first non-finite value found.
        col: usize,
    },
    /// The operation needs a square matrix.
    #[error("matrix is not square: {rows} x {cols}")]
    NotSquare {
        /// Number of rows.
        rows: usize,
        /// Number of columns.
        cols: usize,
    },
    /// Dimensions of two operands, or of a buffer and its declared shape, do not agree.
    #[error("shape mismatch: {0}")]
    ShapeMismatch(String),
    /// An argument does not agree with the others (LAPACK's `INFO = −i`, with the argument
    /// named instead of numbered), e.g. a GEMM operand whose shape does not fit `C`.
    #[error("invalid argument {argument}: {reason}")]
    InvalidArgument {
        /// The argument's name in the routine's signature (`"a"`, `"b"`, ...).
        argument: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The tile size is not usable (it must be at least 1).
    #[error("invalid tile size {nb}: it must be at least 1")]
    InvalidTileSize {
        /// The rejected tile size.
        nb: usize,
    },
    /// A routine's workspace does not fit in the memory the system has
    /// available (`MemAvailable`); nothing was modified. The message says
    /// what needed how much.
    #[error("not enough memory: {0}")]
    OutOfMemory(String),
}

/// [`LaError::InvalidArgument`] naming `argument`, the routines' one way to
/// build it.
pub(crate) fn invalid(argument: &'static str, reason: String) -> LaError {
    LaError::InvalidArgument { argument, reason }
}
