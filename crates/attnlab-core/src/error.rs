//! The library's error type: every fallible operation names the bad value and what would be accepted.

use thiserror::Error;

/// Errors returned by attnlab's library functions.
///
/// Each variant carries enough context for a one-line message that names the bad value and the
/// accepted range, so the command-line front end can print it verbatim and exit with code 2.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// A value is outside what an operation accepts.
    #[error("invalid {what}: {value}; expected {expected}")]
    Invalid {
        /// What the value is (an option name, a parameter, a field).
        what: String,
        /// The offending value, as the user wrote it or as computed.
        value: String,
        /// What would have been accepted.
        expected: String,
    },
    /// Two arrays (or an array and a declared size) do not fit together.
    #[error("shape mismatch in {op}: expected {expected}, got {got}")]
    Shape {
        /// The operation or block that failed.
        op: String,
        /// The expected shape, in words or as `rows×cols`.
        expected: String,
        /// The shape that was given.
        got: String,
    },
    /// A file could not be read or parsed.
    #[error("cannot read {path}: {reason}")]
    Io {
        /// The file's path.
        path: String,
        /// Why it failed.
        reason: String,
    },
    /// A file could not be written.
    #[error("cannot write {path}: {reason}")]
    Write {
        /// The file's path.
        path: String,
        /// Why it failed.
        reason: String,
    },
}

impl Error {
    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(
        what: impl Into<String>,
        value: impl ToString,
        expected: impl Into<String>,
    ) -> Self {
        Error::Invalid {
            what: what.into(),
            value: value.to_string(),
            expected: expected.into(),
        }
    }

    /// Shorthand for [`Error::Shape`].
    pub fn shape(
        op: impl Into<String>,
        expected: impl Into<String>,
        got: impl Into<String>,
    ) -> Self {
        Error::Shape {
            op: op.into(),
            expected: expected.into(),
            got: got.into(),
        }
    }

    /// Shorthand for [`Error::Io`].
    pub fn io(path: impl AsRef<std::path::Path>, reason: impl ToString) -> Self {
        Error::Io {
            path: path.as_ref().display().to_string(),
            reason: reason.to_string(),
        }
    }
}

impl Error {
    /// Shorthand for [`Error::Write`].
    pub fn write(path: impl AsRef<std::path::Path>, reason: impl ToString) -> Self {
        Error::Write {
            path: path.as_ref().display().to_string(),
            reason: reason.to_string(),
        }
    }
}

/// Result alias used throughout the library.
pub type Result<T> = std::result::Result<T, Error>;
