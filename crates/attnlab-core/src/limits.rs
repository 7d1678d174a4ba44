//! Work and memory limits: every request is refused up front, before anything is allocated,
//! when the work it asks for — estimated from all of its parameters together — exceeds them.
//!
//! A request's [`Budget`] is its estimated peak memory in bytes and its operation count; each
//! command's `api::<command>::budget(&Request)` computes it from the request alone (and, for
//! inputs read from files, again from the shapes the file headers declare, before their data is
//! read). [`Budget::check`] compares it with the [`Limits`] the front end put in the
//! [`crate::api::Context`]: the CLI's `--max-memory`, `--max-work`, `--max-file-size`, the web
//! server's own (lower) limits, Python's keyword arguments. `docs/LIMITS.md` lists every limit
//! and what it protects.
//!
//! **Operations** are counted as floating-point operations: a multiply–add is 2, an `exp`,
//! `sin` or `cos` is [`TRANSCENDENTAL`]. The default work limit is about 10 s of attnlab's
//! release build on one core of the reference machine (see `docs/LIMITS.md` for the
//! measurement); estimates are upper bounds within a small factor, never exact timings.
//!
//! ```
//! use attnlab_core::limits::{Budget, Limits};
//! let small = Budget::new(1 << 20, 1_000_000);
//! assert!(small.check("a forward pass", &Limits::default()).is_ok());
//! let huge = Budget::new(1 << 40, 1);
//! let e = huge.check("a forward pass", &Limits::default()).unwrap_err();
//! assert_eq!(e.kind(), attnlab_core::ErrorKind::Limit);
//! assert!(e.to_string().contains("1 TiB") && e.to_string().contains("--max-memory"));
//! ```

use serde::{Deserialize, Serialize};

use crate::number;
use crate::{Error, Result};

/// The default memory limit: 1 GiB.
pub const DEFAULT_MAX_MEMORY: u64 = 1 << 30;
/// The default work limit: 2³⁵ ≈ 3.4·10¹⁰ operations (about 10 s; see the module docs).
pub const DEFAULT_MAX_WORK: u64 = 1 << 35;
/// The default cap on the bytes read from one input file: 64 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 64 << 20;
/// What one `exp`, `sin`, `cos` or `ln` counts as, in operations.
pub const TRANSCENDENTAL: u64 = 20;

/// The limits a run is held to. Front ends set them; `Default` is the CLI's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// Largest estimated peak memory of a request, in bytes (`--max-memory`).
    pub max_memory: u64,
    /// Largest estimated operation count of a request (`--max-work`).
    pub max_work: u64,
    /// Largest number of bytes read from one input file (`--max-file-size`).
    pub max_file_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_memory: DEFAULT_MAX_MEMORY,
            max_work: DEFAULT_MAX_WORK,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
        }
    }
}

impl Limits {
    /// An error when `bytes` (what a file declares it holds, converted to f64) exceed the
    /// memory limit; `what` names the file and the block.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Limit`] over the limit.
    pub fn check_memory(&self, what: impl std::fmt::Display, bytes: u64) -> Result<()> {
        Budget::new(bytes, 0).check(what, self)
    }
}

/// What a request needs: estimated peak memory and operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Budget {
    /// Estimated peak memory, in bytes.
    pub bytes: u64,
    /// Estimated operations (see the module docs for the unit).
    pub ops: u64,
}

impl Budget {
    /// A budget of `bytes` and `ops`.
    pub const fn new(bytes: u64, ops: u64) -> Self {
        Budget { bytes, ops }
    }

    /// Both parts added (saturating).
    #[must_use]
    pub fn plus(self, other: Budget) -> Budget {
        Budget {
            bytes: self.bytes.saturating_add(other.bytes),
            ops: self.ops.saturating_add(other.ops),
        }
    }

    /// The work repeated `times` times, the memory not (a loop that reuses its buffers).
    #[must_use]
    pub fn repeated(self, times: u64) -> Budget {
        Budget {
            bytes: self.bytes,
            ops: self.ops.saturating_mul(times),
        }
    }

    /// Refuses the request when either part exceeds its limit. `what` describes the request
    /// with the parameters that drive the estimate (`"attend with n = 4096, d = 4096"`).
    ///
    /// # Errors
    /// [`crate::ErrorKind::Limit`], naming the estimate, the limit and the option that raises it.
    pub fn check(&self, what: impl std::fmt::Display, limits: &Limits) -> Result<()> {
        if self.bytes > limits.max_memory {
            return Err(Error::limit(
                what,
                format!("about {} of memory", number::bytes(self.bytes)),
                format!(
                    "{} (raise it with --max-memory)",
                    number::bytes(limits.max_memory)
                ),
            ));
        }
        if self.ops > limits.max_work {
            return Err(Error::limit(
                what,
                format!("about {} operations", number::ops(self.ops)),
                format!(
                    "{} (raise it with --max-work)",
                    number::ops(limits.max_work)
                ),
            ));
        }
        Ok(())
    }
}

/// The product of `factors`, saturating at `u64::MAX` (estimates never wrap around).
///
/// ```
/// assert_eq!(attnlab_core::limits::product(&[4096, 4096, 8]), 1 << 27);
/// assert_eq!(attnlab_core::limits::product(&[u64::MAX, 2]), u64::MAX);
/// ```
pub fn product(factors: &[u64]) -> u64 {
    factors.iter().fold(1u64, |p, &f| p.saturating_mul(f))
}

/// Bytes of `count` f64 matrices of `rows × cols`.
pub fn matrices(count: u64, rows: u64, cols: u64) -> u64 {
    product(&[count, rows, cols, 8])
}

/// `usize` → `u64` (lossless on every platform Rust supports: `usize` is at most 64 bits).
pub fn u(x: usize) -> u64 {
    x as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_limit_exceeded_is_named_with_its_option() {
        let l = Limits {
            max_memory: 1000,
            max_work: 1000,
            max_file_bytes: 1000,
        };
        assert!(Budget::new(1000, 1000).check("x", &l).is_ok());
        let mem = Budget::new(1001, 0).check("x", &l).unwrap_err().to_string();
        assert_eq!(
            mem,
            "x would need about 1001 bytes of memory, over the limit of 1000 bytes (raise it with --max-memory)"
        );
        let ops = Budget::new(0, 2_000_000)
            .check("x", &l)
            .unwrap_err()
            .to_string();
        assert!(
            ops.contains("2e6 operations") && ops.contains("--max-work"),
            "{ops}"
        );
        assert_eq!(
            Budget::new(u64::MAX, 1).plus(Budget::new(1, u64::MAX)),
            Budget::new(u64::MAX, u64::MAX)
        );
    }
}
