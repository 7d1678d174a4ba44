//! The quantities a student may set before predicting ([`Param`]), how each is parsed and
//! validated ([`ParamKind`]), and the validated values a step runs with ([`Settings`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::answer::quoted;
use crate::position::frequencies::{parse_omega_list, Omega};
use crate::symmetry::Permutation;
use crate::tokenizer::Vocabulary;
use crate::{Error, Result};

/// What kind of quantity a parameter is, and so how it is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A permutation of `0..n` (numpy's `X[perm]` list).
    Permutation {
        /// Sequence length.
        n: usize,
    },
    /// Two different tokens of the course vocabulary `(A, B, .)`.
    Pair,
    /// A finite real number.
    Real,
    /// A position `t` with `min ≤ t < n`.
    Position {
        /// Smallest allowed.
        min: usize,
        /// Sequence length.
        n: usize,
    },
    /// One rotation frequency; with `rational`, it must be a rational multiple of π.
    Omega {
        /// Require an exact (rational multiple of π) frequency.
        rational: bool,
    },
    /// A comma-separated list of frequencies.
    Omegas,
    /// 1 to 12 integer separations.
    Separations,
    /// An integer between `min` and `max`.
    Count {
        /// Smallest allowed.
        min: usize,
        /// Largest allowed.
        max: usize,
    },
}

/// A quantity the student may set before predicting.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Its name (the key in an answers file).
    pub name: &'static str,
    /// What it is, in words.
    pub what: &'static str,
    /// How it is parsed.
    pub kind: ParamKind,
    /// Its default, as typed.
    pub default: &'static str,
}

/// The most separations `rope_scores` asks about, and their largest magnitude.
const MAX_SEPARATIONS: usize = 12;
const MAX_SEPARATION: i64 = 1_000_000;

impl Param {
    /// The accepted form, in words (what the refusal of [`Param::validate`] says would be
    /// accepted).
    pub fn form(&self) -> String {
        match self.kind {
            ParamKind::Permutation { n } => format!(
                "a permutation of 0..{} as a comma-separated list, e.g. {}",
                n.saturating_sub(1),
                (0..n)
                    .rev()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            ParamKind::Pair => {
                "two different tokens of A, B, . separated by a space, e.g. A B".into()
            }
            ParamKind::Real => "a finite number, e.g. 0.1".into(),
            ParamKind::Position { min, n } => {
                format!("a whole number from {min} to {}", n.saturating_sub(1))
            }
            ParamKind::Omega { rational: false } => "a frequency, e.g. pi/2, 2*pi/7 or 0.25".into(),
            ParamKind::Omega { rational: true } => {
                "a rational multiple of pi, e.g. pi/3, 2*pi/7 or 3*pi/4".into()
            }
            ParamKind::Omegas => "frequencies separated by commas, e.g. pi/2,pi/3".into(),
            ParamKind::Separations => {
                "1 to 12 whole numbers separated by commas, e.g. 0,1,2,3,4".into()
            }
            ParamKind::Count { min, max } => format!("a whole number from {min} to {max}"),
        }
    }

    /// Validates `text` and returns its canonical form (the form settings are stored in).
    ///
    /// # Errors
    /// Text not of the accepted form; the message names the parameter and the form.
    pub fn validate(&self, text: &str) -> Result<String> {
        let t = text.trim();
        let bad = || Error::invalid(self.name, quoted(t), self.form());
        match self.kind {
            ParamKind::Permutation { n } => Permutation::parse(t, n)
                .map(|p| join(p.as_slice()))
                .map_err(|_| bad()),
            ParamKind::Pair => {
                let ids = Vocabulary::example().encode(t).map_err(|_| bad())?;
                if ids.len() != 2 || ids[0] == ids[1] {
                    return Err(bad());
                }
                Ok(t.split_whitespace().collect::<Vec<_>>().join(" "))
            }
            ParamKind::Real => t
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .map(|_| t.to_string())
                .ok_or_else(bad),
            ParamKind::Position { min, n } => t
                .parse::<usize>()
                .ok()
                .filter(|&v| v >= min && v < n)
                .map(|v| v.to_string())
                .ok_or_else(bad),
            ParamKind::Omega { rational } => {
                let w = Omega::parse(t).map_err(|_| bad())?;
                if rational && w.turns_fraction().is_none() {
                    return Err(Error::invalid(
                        self.name,
                        format!(
                            "{} (not a rational multiple of pi: it never repeats exactly)",
                            quoted(t)
                        ),
                        self.form(),
                    ));
                }
                Ok(w.label())
            }
            ParamKind::Omegas => parse_omega_list(t)
                .map(|l| l.iter().map(|w| w.label()).collect::<Vec<_>>().join(","))
                .map_err(|_| bad()),
            ParamKind::Separations => {
                let v = parse_ints(t).ok_or_else(bad)?;
                if v.is_empty()
                    || v.len() > MAX_SEPARATIONS
                    || v.iter().any(|s| s.abs() > MAX_SEPARATION)
                {
                    return Err(bad());
                }
                Ok(join(&v))
            }
            ParamKind::Count { min, max } => t
                .parse::<usize>()
                .ok()
                .filter(|v| (min..=max).contains(v))
                .map(|v| v.to_string())
                .ok_or_else(bad),
        }
    }
}

fn join<T: ToString>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn parse_ints(t: &str) -> Option<Vec<i64>> {
    t.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<i64>().ok())
        .collect()
}

/// The values of a step's parameters: name → canonical text, validated by [`Param::validate`]
/// (stored as such in state files: `{"perm": "2,0,3,1"}`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Settings(pub BTreeMap<String, String>);

impl Settings {
    /// The canonical text of `name`.
    ///
    /// # Errors
    /// A name that is not a parameter of the step.
    pub fn raw(&self, name: &str) -> Result<&str> {
        self.0
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| Error::invalid("setting", name, "a parameter of this step"))
    }

    /// `name` as a permutation of `0..n`.
    ///
    /// # Errors
    /// A missing setting, or one that is not a permutation of `0..n`.
    pub fn perm(&self, name: &str, n: usize) -> Result<Permutation> {
        Permutation::parse(self.raw(name)?, n)
    }

    /// `name` as a real number.
    ///
    /// # Errors
    /// A missing setting, or one that is not a number.
    pub fn real(&self, name: &str) -> Result<f64> {
        let t = self.raw(name)?;
        t.parse()
            .map_err(|_| Error::invalid(name, quoted(t), "a number"))
    }

    /// `name` as a whole number.
    ///
    /// # Errors
    /// A missing setting, or one that is not a whole number.
    pub fn count(&self, name: &str) -> Result<usize> {
        let t = self.raw(name)?;
        t.parse()
            .map_err(|_| Error::invalid(name, quoted(t), "a whole number"))
    }

    /// `name` as one frequency.
    ///
    /// # Errors
    /// A missing setting, or one [`Omega::parse`] rejects.
    pub fn omega(&self, name: &str) -> Result<Omega> {
        Omega::parse(self.raw(name)?)
    }

    /// `name` as a list of frequencies.
    ///
    /// # Errors
    /// A missing setting, or one [`parse_omega_list`] rejects.
    pub fn omegas(&self, name: &str) -> Result<Vec<Omega>> {
        parse_omega_list(self.raw(name)?)
    }

    /// `name` as a list of whole numbers.
    ///
    /// # Errors
    /// A missing setting, or one that is not a list of whole numbers.
    pub fn ints(&self, name: &str) -> Result<Vec<i64>> {
        let t = self.raw(name)?;
        parse_ints(t).ok_or_else(|| Error::invalid(name, quoted(t), "whole numbers"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_validate_to_their_canonical_form() {
        let p = Param {
            name: "pair",
            what: "",
            kind: ParamKind::Pair,
            default: "A B",
        };
        assert_eq!(p.validate(" B   A ").unwrap(), "B A");
        assert!(p.validate("A A").is_err() && p.validate("A B .").is_err());
        let w = Param {
            name: "omega",
            what: "",
            kind: ParamKind::Omega { rational: false },
            default: "",
        };
        assert_eq!(w.validate("2*pi/4").unwrap(), "pi/2");
        let r = Param {
            kind: ParamKind::Omega { rational: true },
            ..w.clone()
        };
        assert!(r
            .validate("0.5")
            .unwrap_err()
            .to_string()
            .contains("never repeats exactly"));
        let s = Param {
            name: "separations",
            what: "",
            kind: ParamKind::Separations,
            default: "",
        };
        assert_eq!(s.validate("0 1, -2").unwrap(), "0,1,-2");
        assert!(s.validate("").is_err() && s.validate("1,2000000").is_err());
        let perm = Param {
            name: "perm",
            what: "",
            kind: ParamKind::Permutation { n: 4 },
            default: "",
        };
        assert_eq!(perm.validate("3, 2,1,0").unwrap(), "3,2,1,0");
        assert!(perm
            .validate("0,0,1,2")
            .unwrap_err()
            .to_string()
            .contains("e.g. 3,2,1,0"));
    }
}
