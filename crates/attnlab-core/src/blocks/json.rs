//! `.json` blocks, parsed in one pass straight into flat `f64` buffers: no intermediate JSON
//! tree (which would take ~50 bytes per number), ragged rows and non-numbers refused at the
//! entry they occur, and the number of values counted against the memory limit as they arrive.

use std::cell::{Cell, RefCell};
use std::fmt;

use ndarray::Array2;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::text::shorten;

/// What a `.json` blocks document holds, in file order.
#[derive(Debug, Default)]
pub struct Parsed {
    /// The matrices, in file order.
    pub arrays: Vec<(String, Array2<f64>)>,
    /// The `"vocab"` entry.
    pub vocab: Option<Vec<String>>,
}

/// Why a document was refused: a message of our own (the block named), or serde_json's
/// syntax error (with its line and column).
#[derive(Debug)]
pub enum Refusal {
    /// A message naming the block and the entry.
    Block(String),
    /// More values than the memory limit allows.
    TooMany {
        /// The values read before stopping.
        values: u64,
    },
    /// Not JSON, or not the shape of a blocks document.
    Syntax(String),
}

struct State<'a> {
    /// How many more values fit.
    remaining: Cell<u64>,
    /// The first refusal of our own (serde carries only a string).
    refusal: RefCell<Option<Refusal>>,
    names: &'a [&'a str],
}

impl State<'_> {
    fn refuse<E: de::Error>(&self, r: Refusal) -> E {
        let text = match &r {
            Refusal::Block(m) | Refusal::Syntax(m) => m.clone(),
            Refusal::TooMany { .. } => "too many values".into(),
        };
        self.refusal.borrow_mut().get_or_insert(r);
        E::custom(text)
    }
}

/// Parses a blocks document. `max_values` is how many f64 values the memory limit allows;
/// `names` are the accepted block names.
///
/// # Errors
/// See [`Refusal`].
pub fn parse(bytes: &[u8], max_values: u64, names: &[&str]) -> Result<Parsed, Refusal> {
    let state = State {
        remaining: Cell::new(max_values),
        refusal: RefCell::new(None),
        names,
    };
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let result = de
        .deserialize_map(DocVisitor { state: &state })
        .and_then(|p| de.end().map(|()| p));
    match result {
        Ok(p) => Ok(p),
        Err(e) => Err(state
            .refusal
            .into_inner()
            .unwrap_or_else(|| Refusal::Syntax(e.to_string()))),
    }
}

struct DocVisitor<'a> {
    state: &'a State<'a>,
}

impl<'de> Visitor<'de> for DocVisitor<'_> {
    type Value = Parsed;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object mapping block names to nested arrays")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parsed, A::Error> {
        let mut out = Parsed::default();
        while let Some(key) = map.next_key::<String>()? {
            if key == "vocab" {
                if out.vocab.is_some() {
                    return Err(self
                        .state
                        .refuse(Refusal::Block("\"vocab\" appears twice".into())));
                }
                out.vocab = Some(map.next_value_seed(VocabSeed)?);
                continue;
            }
            if !self.state.names.contains(&key.as_str()) {
                return Err(self.state.refuse(Refusal::Block(format!(
                    "unknown block \"{}\"; expected one of {} (and \"vocab\")",
                    shorten(&key),
                    self.state.names.join(", ")
                ))));
            }
            if out.arrays.iter().any(|(k, _)| *k == key) {
                return Err(self
                    .state
                    .refuse(Refusal::Block(format!("block {key} appears twice"))));
            }
            let a = map.next_value_seed(MatrixSeed {
                state: self.state,
                name: &key,
            })?;
            out.arrays.push((key, a));
        }
        Ok(out)
    }
}

struct VocabSeed;

impl<'de> DeserializeSeed<'de> for VocabSeed {
    type Value = Vec<String>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<String>, D::Error> {
        d.deserialize_seq(VocabVisitor)
    }
}

struct VocabVisitor;

impl<'de> Visitor<'de> for VocabVisitor {
    type Value = Vec<String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("\"vocab\" to be an array of strings")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
        let mut out = Vec::new();
        while let Some(t) = seq.next_element::<String>()? {
            out.push(t);
        }
        Ok(out)
    }
}

struct MatrixSeed<'a> {
    state: &'a State<'a>,
    name: &'a str,
}

impl<'de> DeserializeSeed<'de> for MatrixSeed<'_> {
    type Value = Array2<f64>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Array2<f64>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for MatrixSeed<'_> {
    type Value = Array2<f64>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "block {} to be a 2-D array (a list of rows)", self.name)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Array2<f64>, A::Error> {
        let mut flat = Vec::new();
        let mut cols: Option<usize> = None;
        let mut rows = 0usize;
        loop {
            let row = RowSeed {
                state: self.state,
                name: self.name,
                row: rows,
                out: &mut flat,
            };
            let Some(len) = seq.next_element_seed(row)? else {
                break;
            };
            match cols {
                None => cols = Some(len),
                Some(c) if c != len => {
                    return Err(self.state.refuse(Refusal::Block(format!(
                        "block {} has rows of different lengths (row 0 has {c} entries, row {rows} has {len})",
                        self.name
                    ))))
                }
                Some(_) => {}
            }
            rows += 1;
        }
        let cols = cols.unwrap_or(0);
        Array2::from_shape_vec((rows, cols), flat).map_err(|e| {
            self.state
                .refuse(Refusal::Block(format!("block {}: {e}", self.name)))
        })
    }
}

struct RowSeed<'a, 'b> {
    state: &'a State<'a>,
    name: &'a str,
    row: usize,
    out: &'b mut Vec<f64>,
}

impl<'de> DeserializeSeed<'de> for RowSeed<'_, '_> {
    type Value = usize;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for RowSeed<'_, '_> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "row {} of block {} to be an array of numbers",
            self.row, self.name
        )
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut col = 0usize;
        loop {
            let entry = EntrySeed {
                state: self.state,
                name: self.name,
                at: (self.row, col),
            };
            let Some(v) = seq.next_element_seed(entry)? else {
                break;
            };
            let left = self.state.remaining.get();
            if left == 0 {
                let values = crate::limits::u(self.out.len()) + 1;
                return Err(self.state.refuse(Refusal::TooMany { values }));
            }
            self.state.remaining.set(left - 1);
            self.out.push(v);
            col += 1;
        }
        Ok(col)
    }
}

struct EntrySeed<'a> {
    state: &'a State<'a>,
    name: &'a str,
    at: (usize, usize),
}

impl<'de> DeserializeSeed<'de> for EntrySeed<'_> {
    type Value = f64;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<f64, D::Error> {
        d.deserialize_any(self)
    }
}

impl EntrySeed<'_> {
    fn not_a_number<E: de::Error>(&self, shown: &str) -> E {
        self.state.refuse(Refusal::Block(format!(
            "block {}[{},{}] = {} is not a number",
            self.name,
            self.at.0,
            self.at.1,
            shorten(shown)
        )))
    }
}

impl<'de> Visitor<'de> for EntrySeed<'_> {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "a number at block {}[{},{}]",
            self.name, self.at.0, self.at.1
        )
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        Ok(v)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }
    /// JSON has no NaN/Inf literals; accept the strings numpy users write ("NaN", "inf"), which
    /// the finiteness check then refuses by position.
    fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
        v.trim()
            .parse::<f64>()
            .map_err(|_| self.not_a_number(&format!("\"{v}\"")))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<f64, E> {
        Err(self.not_a_number(&v.to_string()))
    }
    fn visit_unit<E: de::Error>(self) -> Result<f64, E> {
        Err(self.not_a_number("null"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<f64, A::Error> {
        Err(self.state.refuse(Refusal::Block(format!(
            "block {} has more than 2 dimensions (an array at [{},{}])",
            self.name, self.at.0, self.at.1
        ))))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<f64, A::Error> {
        Err(self.not_a_number("an object"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: &[&str] = &["E", "Wq"];

    fn msg(text: &str, max: u64) -> String {
        match parse(text.as_bytes(), max, NAMES).unwrap_err() {
            Refusal::Block(m) | Refusal::Syntax(m) => m,
            Refusal::TooMany { values } => format!("too many: {values}"),
        }
    }

    #[test]
    fn each_refusal_names_the_block_and_the_entry() {
        let p = parse(
            br#"{"Wq": [[1, 2], [3, "4.5"]], "vocab": ["a"]}"#,
            10,
            NAMES,
        )
        .unwrap();
        assert_eq!(p.arrays[0].1, ndarray::array![[1.0, 2.0], [3.0, 4.5]]);
        assert_eq!(p.vocab, Some(vec!["a".to_string()]));
        assert!(msg(r#"{"Wq": [[1, 2], [3]]}"#, 10).contains("row 1 has 1"));
        assert!(msg(r#"{"Wq": [[1, true]]}"#, 10).contains("Wq[0,1] = true"));
        assert!(msg(r#"{"Wq": [[[1]]]}"#, 10).contains("more than 2 dimensions"));
        assert!(msg(r#"{"W": [[1]]}"#, 10).contains("unknown block \"W\""));
        assert!(msg(r#"{"Wq": [[1]], "Wq": [[1]]}"#, 10).contains("twice"));
        assert_eq!(msg(r#"{"Wq": [[1, 2, 3]]}"#, 2), "too many: 3");
        assert!(msg(r#"{"Wq": 3}"#, 10).contains("block Wq to be a 2-D array"));
        assert!(msg(r#"{"vocab": [1]}"#, 10).contains("string"));
        assert!(msg("{", 10).contains("EOF"));
        assert!(msg(r#"{"Wq": [[1]]} x"#, 10).contains("trailing"));
        assert!(msg("[1]", 10).contains("JSON object"));
    }
}
