//! The CLI's error type: every failure ends as `herd: <message>` on stderr.

use std::path::PathBuf;

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The runtime refused the configuration (an invalid `HERD_*` value, ...).
    #[error("{0}")]
    Herd(#[from] herd::Error),
    /// A command-line value that clap could not check by itself.
    #[error("{0}")]
    Usage(String),
    /// Writing an output file failed.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// JSON encoding failed.
    #[error("cannot encode JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Drawing a chart failed.
    #[error("cannot draw {}: {message}", path.display())]
    Plot {
        /// The chart file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A parallel result differs from the serial one.
    #[error("verification failed: {0}")]
    Verify(String),
}

impl CliError {
    /// Process exit status: 2 for configuration and usage errors, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Herd(_) | CliError::Usage(_) => 2,
            _ => 1,
        }
    }
}

/// Writes `contents` to `path` (creating missing parent folders), naming the
/// file in the error.
pub fn write_file(path: &std::path::Path, contents: impl AsRef<[u8]>) -> Result<(), CliError> {
    create_parent(path)?;
    std::fs::write(path, contents).map_err(|source| CliError::Write { path: path.to_path_buf(), source })
}

/// Creates the folder that will hold `path`, if missing.
pub fn create_parent(path: &std::path::Path) -> Result<(), CliError> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir)
            .map_err(|source| CliError::Write { path: path.to_path_buf(), source }),
        _ => Ok(()),
    }
}
