//! Progress kept between sittings: the [`State`] (finished steps, in the order they were done),
//! its JSON file format, and the [`Score`].
//!
//! The format is `{"version": 1, "records": [StepRecord, …]}` (pretty-printed, one trailing
//! newline). Every state file attnlab has written loads: records whose evidence was written as
//! text (`{"label": …, "value": …}`, before the evidence was typed) keep it as
//! [`super::Evidence::Recorded`]. The web lab stores the same JSON ([`State::from_json`],
//! [`State::to_json`]).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::engine::{Step, StepRecord};
use crate::{Error, Result};

/// The state format this version reads and writes.
pub const STATE_VERSION: u32 = 1;

/// Progress kept between runs: the finished steps, in the order they were done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Format version ([`STATE_VERSION`]).
    pub version: u32,
    /// The finished steps.
    pub records: Vec<StepRecord>,
}

impl Default for State {
    fn default() -> Self {
        State {
            version: STATE_VERSION,
            records: Vec::new(),
        }
    }
}

/// The score so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Score {
    /// Right predictions.
    pub correct: usize,
    /// Finished steps.
    pub answered: usize,
    /// Steps in the session.
    pub total: usize,
}

impl State {
    /// Parses the JSON of a state file.
    ///
    /// # Errors
    /// Text that is not a state of this version; `source` names it in the message (a path, or
    /// "the saved state").
    pub fn from_json(text: &str, source: impl AsRef<Path>) -> Result<State> {
        let source = source.as_ref();
        let state: State = serde_json::from_str(text).map_err(|e| {
            Error::io(
                source,
                format!("not an attnlab session state file ({e}); start over with --reset"),
            )
        })?;
        state.check_version(source)?;
        Ok(state)
    }

    /// An error unless the state is of the version this build reads.
    ///
    /// # Errors
    /// Another version; `source` names the state in the message.
    pub fn check_version(&self, source: impl AsRef<Path>) -> Result<()> {
        if self.version == STATE_VERSION {
            return Ok(());
        }
        Err(Error::io(
            source,
            format!(
                "state file version {} (expected {STATE_VERSION}); start over with --reset",
                self.version
            ),
        ))
    }

    /// The JSON of a state file: pretty-printed, ending in a newline.
    pub fn to_json(&self) -> String {
        // Serialising plain data (strings, numbers, enums) cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// Loads the state; a missing file is a fresh start.
    ///
    /// # Errors
    /// An unreadable file, or one that is not a state file of this version.
    pub fn load(path: &Path) -> Result<State> {
        match std::fs::read_to_string(path) {
            Ok(t) => Self::from_json(&t, path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::default()),
            Err(e) => Err(Error::io_source(path, e)),
        }
    }

    /// Writes the state (creating the directory), via a temporary file and a rename so an
    /// interrupted write never leaves half a file.
    ///
    /// # Errors
    /// The file cannot be written.
    pub fn save(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::write_source(dir, e))?;
        }
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, self.to_json()).map_err(|e| Error::write_source(&tmp, e))?;
        std::fs::rename(&tmp, path).map_err(|e| Error::write_source(path, e))
    }

    /// Whether step `id` is finished.
    pub fn done(&self, id: &str) -> bool {
        self.records.iter().any(|r| r.id == id)
    }

    /// Records a finished step (replacing an earlier record of the same step).
    pub fn record(&mut self, r: StepRecord) {
        self.records.retain(|x| x.id != r.id);
        self.records.push(r);
    }

    /// The score over the session's steps (records of unknown steps are ignored).
    pub fn score(&self, steps: &[Step]) -> Score {
        let known: Vec<&StepRecord> = self
            .records
            .iter()
            .filter(|r| steps.iter().any(|s| s.id == r.id))
            .collect();
        Score {
            correct: known.iter().filter(|r| r.correct).count(),
            answered: known.len(),
            total: steps.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::super::{steps, Answer};
    use super::*;

    /// State files written by the version before the evidence was typed (the CLI's test data):
    /// they load, and writing them back gives the same bytes.
    #[test]
    fn state_files_of_the_previous_version_load_and_write_back_byte_for_byte() {
        for old in [
            include_str!("../../../attnlab-cli/tests/data/session_state_v1_partial.json"),
            include_str!("../../../attnlab-cli/tests/data/session_state_v1_complete.json"),
        ] {
            let state = State::from_json(old, "old.json").unwrap();
            assert!(state.records.iter().all(|r| r
                .evidence
                .iter()
                .all(|e| matches!(e, super::super::Evidence::Recorded { .. }))));
            assert_eq!(state.to_json(), old);
        }
    }

    #[test]
    fn state_round_trips_and_scores() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/state.json");
        let mut st = State::load(&path).unwrap();
        assert!(st.records.is_empty());
        let all = steps();
        let s0 = &all[0];
        let set = s0.settings(&BTreeMap::new()).unwrap();
        st.record(s0.evaluate(&set, &Answer::YesNo(true)).unwrap());
        st.record(s0.evaluate(&set, &Answer::YesNo(false)).unwrap());
        st.save(&path).unwrap();
        let back = State::load(&path).unwrap();
        assert_eq!(back, st);
        assert_eq!(
            back.score(&all),
            Score {
                correct: 1,
                answered: 1,
                total: all.len()
            }
        );
        std::fs::write(&path, "{").unwrap();
        assert!(State::load(&path)
            .unwrap_err()
            .to_string()
            .contains("--reset"));
        std::fs::write(&path, r#"{"version": 2, "records": []}"#).unwrap();
        assert!(State::load(&path)
            .unwrap_err()
            .to_string()
            .contains("version 2 (expected 1)"));
    }
}
