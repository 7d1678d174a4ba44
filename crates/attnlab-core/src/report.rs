//! The leaf pieces every report is made of: what it concluded ([`Outcome`], the exit code) and
//! how a matrix is serialised ([`rows`]). It imports nothing of the crate, so computing modules
//! (the lab, the claims) use it without reaching up into `api`.

use ndarray::Array2;
use serde::Serialize;

/// What a command concluded: the checked property holds (exit code 0) or fails (exit code 1).
/// Errors (bad input) are not outcomes: they are [`crate::Error`]s (exit code 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Success, or the checked property holds.
    Holds,
    /// The checked property does not hold.
    Fails,
}

impl Outcome {
    /// `Holds` when `ok`, else `Fails`.
    pub fn from_bool(ok: bool) -> Self {
        if ok {
            Outcome::Holds
        } else {
            Outcome::Fails
        }
    }

    /// Whether it holds.
    pub fn holds(self) -> bool {
        self == Outcome::Holds
    }

    /// The process exit code: 0 or 1.
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Holds => 0,
            Outcome::Fails => 1,
        }
    }
}

/// A matrix as row-major nested arrays, streamed (no intermediate `Vec<Vec<f64>>`).
pub fn rows<S: serde::Serializer>(a: &Array2<f64>, s: S) -> std::result::Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(a.nrows()))?;
    for row in a.rows() {
        seq.serialize_element(&Row(row))?;
    }
    seq.end()
}

struct Row<'a>(ndarray::ArrayView1<'a, f64>);

impl Serialize for Row<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter())
    }
}
