//! Reading rope parameters (and the few top-level keys they depend on) from a `config.json`
//! object: typed accessors whose errors name the key, and the view of a config that each rope
//! type's parser reads.

use serde_json::{Map, Value};

use crate::{Error, Result};

/// A bad value of a config key: `invalid config key {key}: {value}; expected {expected}`.
pub(crate) fn bad(key: &str, v: &Value, expected: &str) -> Error {
    Error::invalid(format!("config key {key}"), v, expected)
}

/// A number, or `None` when the key is absent or null.
pub(crate) fn num(obj: &Map<String, Value>, key: &str) -> Result<Option<f64>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(v) => Err(bad(key, v, "a number")),
    }
}

/// A non-negative integer (an integral JSON number below 2⁵³), or `None`.
pub(crate) fn uint(obj: &Map<String, Value>, key: &str) -> Result<Option<u64>> {
    match num(obj, key)? {
        None => Ok(None),
        Some(x) if x >= 0.0 && x.fract() == 0.0 && x < 2f64.powi(53) => Ok(Some(x as u64)),
        // An integer, but beyond the range where JSON numbers (binary64) are exact.
        Some(x) if x >= 2f64.powi(53) && x.fract() == 0.0 => Err(bad(
            key,
            &obj[key],
            "a non-negative integer below 2^53 = 9007199254740992 (larger JSON numbers are not exact integers; a context that long is no model's)",
        )),
        Some(_) => Err(bad(key, &obj[key], "a non-negative integer")),
    }
}

/// A string, or `None`.
pub(crate) fn text<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(bad(key, v, "a string")),
    }
}

/// `true`/`false`, or `None`.
pub(crate) fn boolean(obj: &Map<String, Value>, key: &str) -> Result<Option<bool>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(bad(key, v, "true or false")),
    }
}

/// A required list of numbers.
pub(crate) fn list(obj: &Map<String, Value>, key: &str) -> Result<Vec<f64>> {
    match obj.get(key) {
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| v.as_f64().ok_or_else(|| bad(key, v, "a list of numbers")))
            .collect(),
        None | Some(Value::Null) => Err(Error::invalid(
            "config",
            format!("missing rope parameter {key}"),
            "a list of numbers, one per plane",
        )),
        Some(v) => Err(bad(key, v, "a list of numbers")),
    }
}

/// A parameter the rope type requires.
pub(crate) fn required(v: Option<f64>, key: &str, rope_type: &str) -> Result<f64> {
    v.ok_or_else(|| {
        Error::invalid(
            "config",
            format!("missing rope parameter {key}"),
            format!("a number: rope type {rope_type} requires {key}"),
        )
    })
}

/// A finite number > 0.
pub(crate) fn positive(v: f64, key: &str) -> Result<f64> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(Error::invalid(
            format!("config key {key}"),
            v,
            "a finite number > 0",
        ))
    }
}

/// A factor-like parameter: finite and ≥ `min`.
pub(crate) fn check_factor(key: &str, v: f64, min: f64) -> Result<()> {
    if !(v.is_finite() && v >= min) {
        return Err(Error::invalid(
            format!("rope parameter {key}"),
            v,
            format!("a finite number ≥ {min}"),
        ));
    }
    Ok(())
}

/// A context length that must be positive.
pub(crate) fn check_context(key: &str, v: u64) -> Result<()> {
    if v == 0 {
        return Err(Error::invalid(key, 0, "a positive context length"));
    }
    Ok(())
}

/// What a rope type's parser sees of a `config.json`: its rope parameters (`rope_scaling` or
/// `rope_parameters`), the top level, the model type and `max_position_embeddings`; it may add
/// notes (defaults applied, mismatches).
pub(crate) struct ConfigView<'a> {
    /// The rope parameters object.
    pub params: &'a Map<String, Value>,
    /// The top level of the config (of `text_config` for multimodal wrappers).
    pub top: &'a Map<String, Value>,
    /// `model_type` ("" when absent).
    pub model_type: &'a str,
    /// `max_position_embeddings` (or `n_positions`).
    pub max_position_embeddings: Option<u64>,
    /// Decisions taken while reading, in words.
    pub notes: &'a mut Vec<String>,
}

impl ConfigView<'_> {
    /// A number among the rope parameters.
    pub fn num(&self, key: &str) -> Result<Option<f64>> {
        num(self.params, key)
    }

    /// `max_position_embeddings`, required here because `what`.
    pub fn need_max(&self, what: &str) -> Result<u64> {
        self.max_position_embeddings.ok_or_else(|| {
            Error::invalid(
                "config",
                "missing max_position_embeddings",
                format!("a context length ({what})"),
            )
        })
    }

    /// The pre-training context of llama3 / yarn / longrope: a top-level
    /// `original_max_position_embeddings` (Phi-3's class default 4096 when absent), else the
    /// parameters' value, else `max_position_embeddings`.
    pub fn original(&self) -> Result<u64> {
        let top_orig = match uint(self.top, "original_max_position_embeddings")? {
            Some(o) => Some(o),
            None if self.model_type == "phi3" => Some(4096),
            None => None,
        };
        match (
            top_orig,
            uint(self.params, "original_max_position_embeddings")?,
        ) {
            (Some(o), _) | (None, Some(o)) => Ok(o),
            (None, None) => self.need_max("original_max_position_embeddings defaults to it"),
        }
    }
}
