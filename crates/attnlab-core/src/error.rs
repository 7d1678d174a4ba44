//! The library's error type: every fallible operation names the bad value and what would be
//! accepted, says what kind of failure it is, and keeps the underlying error as its source.

use std::error::Error as StdError;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// What kind of failure an [`Error`] is. Front ends map every kind to exit code 2 (bad usage or
/// bad input; a failed *check* is not an error but a report whose verdict is negative), the web
/// server to HTTP 400, Python to `ValueError` (or `OSError` for files; a failing layer
/// function to the exception it raised, chained).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// A value is outside what an operation accepts.
    InvalidValue,
    /// Two arrays (or an array and a declared size) do not fit together.
    Shape,
    /// A named file does not exist.
    NotFound,
    /// A file could not be read or parsed.
    Read,
    /// A file (or standard output) could not be written.
    Write,
    /// The request asks for more work or memory than the limits allow.
    Limit,
    /// A result is not finite (the inputs overflow the dtype).
    NonFinite,
    /// The run was cancelled (Ctrl-C, a time limit).
    Cancelled,
    /// A layer the caller supplied as a function (Python's `check_equivariance(f, X)`) failed:
    /// it raised, or returned something that is not an (n, d′) array of its input's dtype.
    Layer,
}

/// Errors returned by attnlab's library functions.
///
/// The message is one line naming the bad value and the accepted range, so a front end can print
/// it verbatim. [`Error::kind`] tells a missing file from a bad value; [`StdError::source`]
/// gives the underlying error (an `std::io::Error`, a JSON parse error) where there is one.
#[derive(Clone)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    source: Option<Arc<dyn StdError + Send + Sync + 'static>>,
}

impl Error {
    fn new(kind: ErrorKind, message: String) -> Self {
        Error {
            kind,
            message,
            source: None,
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The one-line message (the same as `to_string()`).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// A value outside what an operation accepts: `invalid {what}: {value}; expected {expected}`.
    ///
    /// ```
    /// let e = attnlab_core::Error::invalid("heads", 0, "at least 1");
    /// assert_eq!(e.to_string(), "invalid heads: 0; expected at least 1");
    /// assert_eq!(e.kind(), attnlab_core::ErrorKind::InvalidValue);
    /// ```
    pub fn invalid(
        what: impl fmt::Display,
        value: impl fmt::Display,
        expected: impl fmt::Display,
    ) -> Self {
        Self::new(
            ErrorKind::InvalidValue,
            format!("invalid {what}: {value}; expected {expected}"),
        )
    }

    /// Arrays that do not fit: `shape mismatch in {op}: expected {expected}, got {got}`.
    pub fn shape(
        op: impl fmt::Display,
        expected: impl fmt::Display,
        got: impl fmt::Display,
    ) -> Self {
        Self::new(
            ErrorKind::Shape,
            format!("shape mismatch in {op}: expected {expected}, got {got}"),
        )
    }

    /// A file that cannot be read or parsed: `cannot read {path}: {reason}`.
    pub fn io(path: impl AsRef<Path>, reason: impl fmt::Display) -> Self {
        Self::new(
            ErrorKind::Read,
            format!(
                "cannot read {}: {reason}",
                crate::text::shorten_path(path.as_ref())
            ),
        )
    }

    /// Like [`Error::io`], keeping `source` (an `std::io::Error` of kind `NotFound` makes the
    /// error [`ErrorKind::NotFound`]).
    pub fn io_source(
        path: impl AsRef<Path>,
        source: impl StdError + Send + Sync + 'static,
    ) -> Self {
        let mut e = Self::io(path, &source);
        let not_found = (&source as &dyn StdError)
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound);
        if not_found {
            e.kind = ErrorKind::NotFound;
        }
        e.source = Some(Arc::new(source));
        e
    }

    /// A file that cannot be written: `cannot write {path}: {reason}`.
    pub fn write(path: impl AsRef<Path>, reason: impl fmt::Display) -> Self {
        Self::new(
            ErrorKind::Write,
            format!(
                "cannot write {}: {reason}",
                crate::text::shorten_path(path.as_ref())
            ),
        )
    }

    /// Like [`Error::write`], keeping `source`.
    pub fn write_source(
        path: impl AsRef<Path>,
        source: impl StdError + Send + Sync + 'static,
    ) -> Self {
        let mut e = Self::write(path, &source);
        e.source = Some(Arc::new(source));
        e
    }

    /// A request over a work or memory limit: names the estimate and the limit.
    pub fn limit(
        what: impl fmt::Display,
        estimate: impl fmt::Display,
        limit: impl fmt::Display,
    ) -> Self {
        Self::new(
            ErrorKind::Limit,
            format!("{what} would need {estimate}, over the limit of {limit}"),
        )
    }

    /// A result that is not finite.
    pub fn non_finite(what: impl fmt::Display, hint: impl fmt::Display) -> Self {
        Self::new(
            ErrorKind::NonFinite,
            format!("{what} is not finite (inf or NaN); {hint}"),
        )
    }

    /// A failure of a layer the caller supplied as a function; `message` says what it did
    /// (`f raised ZeroDivisionError: division by zero (on a 4×4 float64 input)`).
    pub fn layer(message: impl fmt::Display) -> Self {
        Self::new(ErrorKind::Layer, message.to_string())
    }

    /// Something named that does not exist, with a message saying how to get it (a model
    /// name whose file is not in the cache).
    pub fn not_found(message: impl fmt::Display) -> Self {
        Self::new(ErrorKind::NotFound, message.to_string())
    }

    /// A cancelled run.
    pub fn cancelled(what: impl fmt::Display) -> Self {
        Self::new(ErrorKind::Cancelled, format!("{what} was cancelled"))
    }

    /// The same error with `context: ` in front of its message (kind and source kept).
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.kind)
            .field("message", &self.message)
            .field("source", &self.source.as_ref().map(|s| s.to_string()))
            .finish()
    }
}

impl PartialEq for Error {
    /// Errors are equal when their kind and message are (sources are not compared).
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.message == other.message
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source
            .as_deref()
            .map(|s| s as &(dyn StdError + 'static))
    }
}

/// Result alias used throughout the library.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_not_a_bad_value_and_keeps_its_source() {
        let io = std::fs::read("/nonexistent/attnlab/file").unwrap_err();
        let e = Error::io_source("/nonexistent/attnlab/file", io);
        assert_eq!(e.kind(), ErrorKind::NotFound);
        assert!(e
            .to_string()
            .starts_with("cannot read /nonexistent/attnlab/file: "));
        let src = e.source().expect("source kept");
        assert_eq!(
            src.downcast_ref::<std::io::Error>().map(|x| x.kind()),
            Some(std::io::ErrorKind::NotFound)
        );
        let bad = Error::invalid("heads", 0, "at least 1");
        assert_eq!(bad.kind(), ErrorKind::InvalidValue);
        assert!(bad.source().is_none());
    }
}
