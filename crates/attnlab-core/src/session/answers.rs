//! Scripted answers: the answers document (`--answers FILE` in TOML or JSON, or the `answers`
//! of a [`crate::api::session::SessionRequest`]) mapping step ids to predictions.
//!
//! TOML:
//! ```toml
//! embedding_dim = "no"
//! rope_scores = [1, 0, -1, 0, 1]
//! [rope_repeat_chosen]
//! answer = 6
//! reason = "pi/3 is a sixth of a turn"
//! omega = "pi/3"
//! ```
//! JSON: `{"embedding_dim": "no", "rope_repeat_chosen": {"answer": 6, "omega": "pi/3"}}`.
//! Booleans mean yes/no; arrays are joined with commas; a table holds `answer`, an optional
//! `reason` and overrides of the step's settings.
//!
//! One key is not a step: `resume = true` says the document continues a saved progress (the
//! records of the steps it does not answer are carried over from the state file named with
//! `--state`). Without it the document is graded on its own.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::answer::Answer;
use super::param::Settings;
use crate::{Error, Result};

/// One step's scripted entry: the answer as typed, and overrides of the varied quantities.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScriptedAnswer {
    /// The answer, as text.
    pub answer: String,
    /// Parameter overrides, as text.
    pub settings: BTreeMap<String, String>,
    /// The reason for the prediction, if given.
    pub reason: Option<String>,
}

impl ScriptedAnswer {
    /// An answer with no overrides and no reason.
    pub fn new(answer: impl Into<String>) -> Self {
        ScriptedAnswer {
            answer: answer.into(),
            ..Default::default()
        }
    }

    /// Reads one entry of an answers document: an answer (string, number, boolean, list) or a
    /// table with `answer`, an optional `reason` and settings.
    ///
    /// # Errors
    /// Anything else, naming the step.
    pub fn from_value(id: &str, v: &Value) -> Result<ScriptedAnswer> {
        let bad = |what: &str, expected: &str| {
            Error::invalid(
                format!("{what} of step {}", crate::text::shorten(id)),
                crate::text::shorten(&v.to_string()),
                expected,
            )
        };
        let Value::Object(t) = v else {
            return Ok(ScriptedAnswer::new(value_text(v).ok_or_else(|| {
                bad(
                    "entry",
                    "an answer (a string, number, boolean or list) or a table with \"answer\"",
                )
            })?));
        };
        let answer = t.get("answer").and_then(value_text).ok_or_else(|| {
            bad(
                "entry",
                "a table with an \"answer\" (plus optional settings)",
            )
        })?;
        let reason = match t.get("reason") {
            None => None,
            Some(Value::String(r)) => Some(r.clone()),
            Some(_) => return Err(bad("reason", "a string")),
        };
        let mut settings = BTreeMap::new();
        for (k, x) in t.iter().filter(|(k, _)| *k != "answer" && *k != "reason") {
            let s = value_text(x).ok_or_else(|| {
                bad(
                    &format!("setting {}", crate::text::shorten(k)),
                    "a string, number or list",
                )
            })?;
            settings.insert(k.clone(), s);
        }
        Ok(ScriptedAnswer {
            answer,
            settings,
            reason,
        })
    }

    /// The entry as an answers document writes it: the bare answer, or a table when there are
    /// settings or a reason.
    pub fn to_value(&self) -> Value {
        if self.settings.is_empty() && self.reason.is_none() {
            return Value::String(self.answer.clone());
        }
        let mut t = serde_json::Map::new();
        t.insert("answer".into(), Value::String(self.answer.clone()));
        if let Some(r) = &self.reason {
            t.insert("reason".into(), Value::String(r.clone()));
        }
        for (k, v) in &self.settings {
            t.insert(k.clone(), Value::String(v.clone()));
        }
        Value::Object(t)
    }
}

impl Serialize for ScriptedAnswer {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl<'de> Deserialize<'de> for ScriptedAnswer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        ScriptedAnswer::from_value("", &v).map_err(serde::de::Error::custom)
    }
}

/// A checked scripted step: its settings and its parsed prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The settings.
    pub settings: Settings,
    /// The prediction.
    pub prediction: Answer,
    /// The reason for it, if given.
    pub reason: Option<String>,
}

/// An answers document: step id → [`ScriptedAnswer`]. Serialised as the document itself
/// (a JSON object of entries), so a request body carries it exactly as a JSON answers file
/// holds it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AnswerSheet {
    /// The entries by step id.
    pub entries: BTreeMap<String, ScriptedAnswer>,
    /// `resume = true`: continue from the saved progress (the steps this document does not
    /// answer keep their saved records); otherwise the document is graded on its own.
    pub resume: bool,
}

/// The key of an answers document that is not a step: `resume = true`.
pub const RESUME_KEY: &str = "resume";

/// The text of an answer or setting value: booleans as yes/no, numbers as written, arrays
/// joined with commas.
fn value_text(v: &Value) -> Option<String> {
    match v {
        Value::Bool(true) => Some("yes".into()),
        Value::Bool(false) => Some("no".into()),
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        Value::Array(a) => a
            .iter()
            .map(value_text)
            .collect::<Option<Vec<_>>>()
            .map(|v| v.join(",")),
        _ => None,
    }
}

/// The syntax of an answers file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// JSON.
    Json,
    /// TOML.
    Toml,
    /// JSON if it parses, else TOML.
    Either,
}

impl Syntax {
    /// The syntax a file name implies: `.json` JSON, `.toml` TOML, anything else either.
    pub fn of(path: &Path) -> Syntax {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("json") => Syntax::Json,
            Some("toml") => Syntax::Toml,
            _ => Syntax::Either,
        }
    }
}

impl AnswerSheet {
    /// Parses an answers document from its text.
    ///
    /// # Errors
    /// Malformed JSON or TOML (`source` names the text in the message), or entries that are
    /// neither an answer nor a table with one.
    pub fn parse(text: &str, syntax: Syntax, source: impl AsRef<Path>) -> Result<AnswerSheet> {
        let source = source.as_ref();
        let from_toml = |t: &str| -> Result<Value> {
            let v: toml::Value = toml::from_str(t).map_err(|e| {
                Error::io(
                    source,
                    format!("invalid TOML: {}", crate::text::clip(e.message())),
                )
            })?;
            serde_json::to_value(v).map_err(|e| Error::io_source(source, e))
        };
        let value = match syntax {
            Syntax::Json => serde_json::from_str(text).map_err(|e| {
                Error::io(
                    source,
                    format!("invalid JSON: {}", crate::text::clip(&e.to_string())),
                )
            })?,
            Syntax::Toml => from_toml(text)?,
            Syntax::Either => match serde_json::from_str(text) {
                Ok(v) => v,
                Err(_) => from_toml(text)?,
            },
        };
        Self::from_value(&value).map_err(|e| Error::io(source, e))
    }

    /// Reads a `.toml` or `.json` file (other extensions: JSON if it parses, else TOML).
    ///
    /// # Errors
    /// Unreadable or malformed files, entries that are neither an answer nor a table with one.
    pub fn load(path: &Path) -> Result<AnswerSheet> {
        Self::load_with(path, &crate::limits::Limits::default())
    }

    /// [`AnswerSheet::load`] through the input gate: a regular file, a pipe with a writer or
    /// standard input (`-`), of at most `limits.max_file_bytes` bytes
    /// ([`crate::files::read_input`]).
    ///
    /// # Errors
    /// See [`AnswerSheet::load`]; devices, a pipe with no writer, files over the cap.
    pub fn load_with(path: &Path, limits: &crate::limits::Limits) -> Result<AnswerSheet> {
        let text = crate::files::read_input_text(path, limits)?;
        Self::parse(&text, Syntax::of(path), path)
    }

    /// Reads a parsed answers document (a JSON object of entries).
    ///
    /// # Errors
    /// Not an object, or an entry that is neither an answer nor a table with one.
    pub fn from_value(value: &Value) -> Result<AnswerSheet> {
        let obj = value.as_object().ok_or_else(|| {
            Error::invalid(
                "answers",
                crate::text::shorten(&value.to_string()),
                "a table mapping step ids to answers",
            )
        })?;
        let resume = match obj.get(RESUME_KEY) {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                return Err(Error::invalid(
                    "resume in the answers",
                    crate::text::shorten(&other.to_string()),
                    "true or false",
                ))
            }
        };
        let entries = obj
            .iter()
            .filter(|(id, _)| id.as_str() != RESUME_KEY)
            .map(|(id, v)| Ok((id.clone(), ScriptedAnswer::from_value(id, v)?)))
            .collect::<Result<_>>()?;
        Ok(AnswerSheet { entries, resume })
    }

    /// The document as JSON (each entry as [`ScriptedAnswer::to_value`] writes it).
    pub fn to_value(&self) -> Value {
        let mut map: serde_json::Map<String, Value> = self
            .entries
            .iter()
            .map(|(k, v)| (k.clone(), v.to_value()))
            .collect();
        if self.resume {
            map.insert(RESUME_KEY.into(), Value::Bool(true));
        }
        Value::Object(map)
    }
}

impl Serialize for AnswerSheet {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl<'de> Deserialize<'de> for AnswerSheet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        AnswerSheet::from_value(&v).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Session;
    use super::*;

    #[test]
    fn answer_sheets_from_toml_and_json() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("a.toml");
        std::fs::write(
            &t,
            "embedding_dim = false\nrope_scores = [1, 0, -1, 0, 1]\n[rope_scores_x]\nanswer = 1\n",
        )
        .unwrap();
        let sheet = AnswerSheet::load(&t).unwrap();
        assert_eq!(sheet.entries["embedding_dim"].answer, "no");
        assert_eq!(sheet.entries["rope_scores"].answer, "1,0,-1,0,1");
        // Unknown step ids are reported with the list of known ones.
        let session = Session::course();
        let e = session.prepare_all(&sheet).unwrap_err().to_string();
        assert!(
            e.contains("rope_scores_x") && e.contains("embedding_dim"),
            "{e}"
        );
        let j = dir.path().join("a.json");
        std::fs::write(&j, r#"{"rope_scores": {"answer": [1, 0.5, -0.5], "omega": "pi/3", "separations": [0, 1, 2]}}"#).unwrap();
        let prepared = session
            .prepare_all(&AnswerSheet::load(&j).unwrap())
            .unwrap();
        assert_eq!(
            prepared["rope_scores"].prediction,
            Answer::Numbers(vec![1.0, 0.5, -0.5])
        );
        assert_eq!(prepared["rope_scores"].settings.0["omega"], "pi/3");
        // The answer count follows the overridden separations: 5 numbers for 3 separations is an
        // error naming the step and the form.
        std::fs::write(
            &j,
            r#"{"rope_scores": {"answer": "1 0 -1 0 1", "separations": "0,1,2"}}"#,
        )
        .unwrap();
        let e = session
            .prepare_all(&AnswerSheet::load(&j).unwrap())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("answer to step rope_scores") && e.contains("3 numbers"),
            "{e}"
        );
        // Entries that are not answers name the step.
        let e = AnswerSheet::parse(r#"{"readouts": {"reason": "x"}}"#, Syntax::Json, "body")
            .unwrap_err()
            .to_string();
        assert!(e.contains("readouts") && e.contains("\"answer\""), "{e}");
    }

    #[test]
    fn a_document_serialises_as_itself() {
        let text = r#"{"embedding_dim": "no", "rope_repeat_chosen": {"answer": 6, "omega": "pi/3", "reason": "a sixth"}}"#;
        let sheet: AnswerSheet = serde_json::from_str(text).unwrap();
        assert_eq!(sheet.entries["rope_repeat_chosen"].answer, "6");
        let back: AnswerSheet =
            serde_json::from_value(serde_json::to_value(&sheet).unwrap()).unwrap();
        assert_eq!(back, sheet);
        assert!(serde_json::from_str::<AnswerSheet>("[1]").is_err());
        // `resume` is not a step: it says the document continues a saved progress.
        let r: AnswerSheet =
            serde_json::from_str(r#"{"resume": true, "embedding_dim": "no"}"#).unwrap();
        assert!(r.resume && r.entries.len() == 1);
        assert_eq!(
            serde_json::from_value::<AnswerSheet>(r.to_value()).unwrap(),
            r
        );
        let e = serde_json::from_str::<AnswerSheet>(r#"{"resume": "yes"}"#).unwrap_err();
        assert!(e.to_string().contains("true or false"), "{e}");
    }
}
