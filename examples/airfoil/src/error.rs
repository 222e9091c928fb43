//! The Airfoil driver's error type, `AirfoilError`: a grid file that cannot be read or
//! parsed, a backend this build lacks, bad options, or an `op2::Error` from building the
//! carriers or running a loop. It lets the driver report all of these through one type.
use std::path::PathBuf;

/// Errors of the Airfoil driver: reading a grid file, or a loop failing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AirfoilError {
    /// The grid file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The grid file is malformed.
    #[error("{path}:{line}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        message: String,
    },
    /// Something this build was made without (a Cargo feature) was asked for.
    #[error("{what} needs op2 built with the `{feature}` feature (cargo run --features {feature} ...)")]
    NotBuiltIn {
        /// The feature.
        feature: &'static str,
        /// What was asked for.
        what: String,
    },
    /// Options that do not go together.
    #[error("{0}")]
    Usage(String),
    /// An op2 error (building the carriers or running a loop).
    #[error(transparent)]
    Op2(#[from] op2::Error),
}
