//! Value types of requests that accept more than one spelling, so the CLI, JSON bodies and
//! Python keywords all mean the same thing: counts (`4096`, `"1e6"`, `"2^20"`, `"128k"`),
//! lists written as text or as arrays, and blocks given as a file or inline.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use ndarray::Array2;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::blocks::Blocks;
use crate::{Error, Result};

/// A whole number written as `4096`, `1e6`, `2^20`, `128k`, `1M` (k = 1024, M = 1024²,
/// G = 1024³, the way context lengths are named), or given as a JSON number.
///
/// ```
/// use attnlab_core::api::value::Count;
/// assert_eq!(Count::parse("2^17").unwrap().get(), 131072);
/// assert_eq!(Count::parse("128k").unwrap().get(), 131072);
/// assert_eq!(Count::parse("1M").unwrap().get(), 1 << 20);
/// assert_eq!(Count::parse("1e6").unwrap().get(), 1_000_000);
/// assert!(Count::parse("1.5").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Count(pub u64);

impl Count {
    /// The value.
    pub fn get(self) -> u64 {
        self.0
    }

    /// Parses a count.
    ///
    /// # Errors
    /// Anything that is not a non-negative whole number below 2⁶⁴.
    pub fn parse(s: &str) -> Result<Count> {
        Self::parse_str(s).ok_or_else(|| {
            Error::invalid(
                "count",
                crate::text::shorten(s),
                "a whole number such as 4096, 1e6, 2^20 or 128k",
            )
        })
    }

    fn parse_str(s: &str) -> Option<Count> {
        let t = s.trim();
        if let Ok(v) = t.parse::<u64>() {
            return Some(Count(v));
        }
        if let Some((b, e)) = t.split_once('^') {
            return b
                .trim()
                .parse::<u64>()
                .ok()?
                .checked_pow(e.trim().parse::<u32>().ok()?)
                .map(Count);
        }
        let (digits, unit) = match t.char_indices().last()? {
            (i, 'k' | 'K') => (&t[..i], 1u64 << 10),
            (i, 'm' | 'M') => (&t[..i], 1 << 20),
            (i, 'g' | 'G') => (&t[..i], 1 << 30),
            _ => (t, 1),
        };
        if unit > 1 {
            return digits
                .trim()
                .parse::<u64>()
                .ok()?
                .checked_mul(unit)
                .map(Count);
        }
        let v: f64 = t.parse().ok()?;
        (v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < 1.8e19).then_some(Count(v as u64))
    }
}

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::str::FromStr for Count {
    type Err = Error;
    fn from_str(s: &str) -> Result<Count> {
        Count::parse(s)
    }
}

impl Serialize for Count {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Float(f64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(v) => Ok(Count(v)),
            Raw::Float(v) => Count::parse_str(&v.to_string())
                .ok_or_else(|| serde::de::Error::custom(format!("{v} is not a whole number"))),
            Raw::Text(t) => Count::parse(&t).map_err(serde::de::Error::custom),
        }
    }
}

/// A list given as one comma-separated string (`"pi/2,pi/3"`, `"2,0,3,1"`) or as a JSON array
/// (`["pi/2", "pi/3"]`, `[2, 0, 3, 1]`); stored as the items' texts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct List(pub Vec<String>);

impl List {
    /// The list from its comma-separated text.
    pub fn parse(text: &str) -> List {
        List(text.split(',').map(|s| s.trim().to_string()).collect())
    }

    /// The items joined by commas (as the CLI takes them).
    pub fn joined(&self) -> String {
        self.0.join(",")
    }
}

impl Serialize for List {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for List {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Item {
            Int(u64),
            Float(f64),
            Text(String),
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Items(Vec<Item>),
        }
        Ok(match Raw::deserialize(d)? {
            Raw::Text(t) => List::parse(&t),
            Raw::Items(items) => List(
                items
                    .into_iter()
                    .map(|i| match i {
                        Item::Int(v) => v.to_string(),
                        Item::Float(v) => crate::number::short(v),
                        Item::Text(t) => t,
                    })
                    .collect(),
            ),
        })
    }
}

/// Fixed blocks: a file the user names, or matrices given inline (the web page and Python pass
/// arrays, never paths).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum BlocksSource {
    /// A `.json`, `.npy`, `.npz`, `.safetensors` file or a directory of `.npy` files.
    Path(PathBuf),
    /// Named matrices as nested row-major arrays, and optionally a vocabulary.
    Inline(InlineBlocks),
}

/// Blocks given inline.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct InlineBlocks {
    /// The vocabulary's tokens, one per row of `E`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vocab: Option<Vec<String>>,
    /// The matrices by name (`E`, `Wq`, `Wk`, `Wv`, `Wo`, `X`, `U`).
    #[serde(flatten)]
    pub arrays: BTreeMap<String, Vec<Vec<f64>>>,
}

impl BlocksSource {
    /// Loads the blocks. Paths are read only when `allow_files` (the web server never reads a
    /// path a request names).
    ///
    /// # Errors
    /// A path when files are not allowed; unreadable or malformed blocks.
    pub fn load(&self, allow_files: bool) -> Result<Blocks> {
        self.load_with(allow_files, &crate::limits::Limits::default())
    }

    /// Loads the blocks within `limits` (paths through the input gate, [`Blocks::load_with`];
    /// inline matrices checked for shape, finiteness and memory).
    ///
    /// # Errors
    /// See [`BlocksSource::load`]; blocks over the limits.
    pub fn load_in(&self, ctx: &super::Context) -> Result<Blocks> {
        self.load_with(ctx.allow_files, &ctx.limits)
    }

    fn load_with(&self, allow_files: bool, limits: &crate::limits::Limits) -> Result<Blocks> {
        match self {
            BlocksSource::Path(p) if !allow_files => Err(Error::invalid(
                "blocks",
                crate::text::shorten(&p.display().to_string()),
                "inline matrices here (this front end reads no files a request names)",
            )),
            BlocksSource::Path(p) => Blocks::load_with(p, limits),
            BlocksSource::Inline(inline) => {
                let mut blocks = Blocks {
                    vocab: inline.vocab.clone(),
                    ..Blocks::default()
                };
                let values: usize = inline.arrays.values().flatten().map(Vec::len).sum();
                limits.check_memory(
                    "the inline blocks",
                    crate::limits::matrices(1, crate::limits::u(values), 1),
                )?;
                for (name, rows) in &inline.arrays {
                    let r = rows.len();
                    let c = rows.first().map_or(0, Vec::len);
                    if rows.iter().any(|row| row.len() != c) || r == 0 || c == 0 {
                        let lengths: Vec<String> =
                            rows.iter().map(|r| r.len().to_string()).take(8).collect();
                        return Err(Error::shape(
                            format!("block {}", crate::text::shorten(name)),
                            "a non-empty rectangular matrix (rows of equal length)",
                            format!(
                                "{r} row{} of lengths {}{}",
                                if r == 1 { "" } else { "s" },
                                lengths.join(", "),
                                if r > 8 { ", …" } else { "" }
                            ),
                        ));
                    }
                    let flat: Vec<f64> = rows.iter().flatten().copied().collect();
                    if let Some(bad) = flat.iter().find(|v| !v.is_finite()) {
                        return Err(Error::invalid(
                            format!("block {}", crate::text::shorten(name)),
                            bad,
                            "finite numbers",
                        ));
                    }
                    let a = Array2::from_shape_vec((r, c), flat)
                        .map_err(|e| Error::shape(format!("block {name}"), "a matrix", e))?;
                    blocks.insert(std::path::Path::new("inline blocks"), name, a)?;
                }
                Ok(blocks)
            }
        }
    }
}

impl std::str::FromStr for List {
    type Err = Error;
    fn from_str(s: &str) -> Result<List> {
        Ok(List::parse(s))
    }
}

/// Serde for a seed (`#[serde(with = "seed")]`): a JSON number or a string of decimal digits,
/// so a front end whose numbers are binary64 (JavaScript) sends any 64-bit seed exactly
/// (2⁵³ + 1 as `"9007199254740993"`). Serialises as a number.
///
/// ```
/// #[derive(serde::Deserialize)]
/// struct S { #[serde(with = "attnlab_core::api::value::seed")] seed: u64 }
/// let s: S = serde_json::from_str(r#"{"seed": "9007199254740993"}"#).unwrap();
/// assert_eq!(s.seed, 9_007_199_254_740_993);
/// let s: S = serde_json::from_str(r#"{"seed": 7}"#).unwrap();
/// assert_eq!(s.seed, 7);
/// assert!(serde_json::from_str::<S>(r#"{"seed": "-1"}"#).is_err());
/// assert!(serde_json::from_str::<S>(r#"{"seed": 1.5}"#).is_err());
/// ```
pub mod seed {
    use serde::de::{self, Deserializer, Visitor};
    use serde::Serializer;

    const EXPECTED: &str =
        "a whole number from 0 to 18446744073709551615 (a number or a string of digits)";

    struct SeedVisitor;

    impl Visitor<'_> for SeedVisitor {
        type Value = u64;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(EXPECTED)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v)
                .map_err(|_| E::custom(format!("invalid seed: {v}; expected {EXPECTED}")))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<u64, E> {
            Err(E::custom(format!(
                "invalid seed: {}; expected {EXPECTED}",
                crate::present::number::short(v)
            )))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
            let t = v.trim();
            if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
                if let Ok(s) = t.parse::<u64>() {
                    return Ok(s);
                }
            }
            Err(E::custom(format!(
                "invalid seed: {}; expected {EXPECTED}",
                crate::present::text::shorten(v)
            )))
        }
    }

    /// Reads a seed from a number or a string of digits.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        d.deserialize_any(SeedVisitor)
    }

    /// Writes the seed as a number.
    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(*v)
    }

    /// The same for an optional seed (`null` or absent is `None`).
    pub mod option {
        use serde::{Deserialize, Deserializer, Serializer};

        #[derive(Deserialize)]
        struct Wrapped(#[serde(with = "super")] u64);

        /// Reads an optional seed.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
            Ok(Option::<Wrapped>::deserialize(d)?.map(|w| w.0))
        }

        /// Writes an optional seed as a number or `null`.
        pub fn serialize<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
            match v {
                Some(x) => s.serialize_u64(*x),
                None => s.serialize_none(),
            }
        }
    }
}
