//! Progress kept between sittings: the [`State`] (finished steps, in the order they were done),
//! its JSON file format, and the [`Score`].
//!
//! The format is `{"version": 1, "records": [StepRecord, …]}` (pretty-printed, one trailing
//! newline). Every state file attnlab has written loads: records whose evidence was written as
//! text (`{"label": …, "value": …}`, before the evidence was typed) keep it as
//! [`super::Evidence::Recorded`]. The web lab stores the same JSON ([`State::from_json`],
//! [`State::to_json`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::engine::{Step, StepRecord};
use crate::files;
use crate::limits::Limits;
use crate::{Error, Result};

/// How long a save waits for another run's lock before giving up.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// The file a (possibly symbolic) path names: links are followed, relative ones from their
/// own directory, at most 40 deep. The file need not exist.
///
/// # Errors
/// A loop of links, or a link that cannot be read.
pub fn real_target(path: &Path) -> Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&p).map_err(|e| Error::io_source(&p, e))?;
                p = match p.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(Error::io(path, "more than 40 levels of symbolic links"))
}

/// The lock file of a state file: `<file>.lock` beside it (it stays, empty, after a save).
fn lock_path(target: &Path) -> PathBuf {
    let mut name = target.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    target.with_file_name(name)
}

/// Takes the exclusive writer lock of `target`, waiting at most [`LOCK_TIMEOUT`].
fn lock(target: &Path) -> Result<std::fs::File> {
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::write_source(dir, e))?;
    }
    let path = lock_path(target);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| Error::write_source(&path, e))?;
    let start = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < LOCK_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Error::write(
                    target,
                    format!(
                        "another attnlab run has held its lock ({}) for {} s",
                        crate::text::shorten_path(&path),
                        LOCK_TIMEOUT.as_secs()
                    ),
                ))
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::write_source(&path, e)),
        }
    }
}

/// A temporary file name in `target`'s directory no other writer uses: the target's name, the
/// process id, the time and a counter.
fn temp_path(target: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut name = std::ffi::OsString::from(".");
    name.push(target.file_name().unwrap_or_default());
    name.push(format!(
        ".{}.{nanos}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    target.with_file_name(name)
}

/// Under the lock of the real file `path` names: reads the state saved there now (`None` when
/// there is none), asks `next` for the state to write, and writes it through a unique
/// temporary file renamed over the target.
fn write_locked(
    path: &Path,
    read_current: bool,
    next: impl FnOnce(Option<State>) -> Result<State>,
) -> Result<()> {
    let target = real_target(path)?;
    let _lock = lock(&target)?;
    let found = if read_current {
        files::read_text(&target, &Limits::default())
    } else {
        Err(Error::io_source(
            &target,
            std::io::Error::from(std::io::ErrorKind::NotFound),
        ))
    };
    let current = match found {
        Ok(t) => Some(State::from_json(&t, &target).map_err(|e| {
            Error::write(
                &target,
                format!("it holds something other than a saved session, left as it is ({e}); move it away or use --reset"),
            )
        })?),
        Err(e) if e.kind() == crate::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let state = next(current)?;
    let tmp = temp_path(&target);
    let written = (|| -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        if let Ok(meta) = std::fs::metadata(&target) {
            f.set_permissions(meta.permissions())?;
        }
        f.write_all(state.to_json().as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, &target)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::write_source(&target, e));
    }
    Ok(())
}

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

/// Why an interactive run stopped before the last step (a scripted run never stops early: it
/// grades every answer and names the missing steps).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Pause {
    /// The student ended the input (Ctrl-D, `quit`).
    InputEnded,
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
                format!(
                    "not an attnlab session state file ({}); start over with --reset",
                    crate::text::clip(&e.to_string())
                ),
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
        Self::load_with(path, &Limits::default())
    }

    /// [`State::load`] through the input gate ([`crate::files`]): a regular file (symbolic
    /// links followed) of at most `limits.max_file_bytes` bytes; a missing file is a fresh
    /// start.
    ///
    /// # Errors
    /// See [`State::load`]; FIFOs, devices, files over the cap.
    pub fn load_with(path: &Path, limits: &Limits) -> Result<State> {
        match files::read_text(path, limits) {
            Ok(t) => Self::from_json(&t, path),
            Err(e) if e.kind() == crate::ErrorKind::NotFound => Ok(State::default()),
            Err(e) => Err(e),
        }
    }

    /// Saves the state without ever losing a saved record: under the writer lock, the records
    /// of the file as it is now (another run may have added some) that this state lacks are
    /// kept, then the union is written (see [`State::save_replacing`] for how).
    ///
    /// # Errors
    /// The file cannot be locked, read or written, or it holds something that is not a state
    /// file of this version (it is then left as it is).
    pub fn save(&self, path: &Path) -> Result<()> {
        write_locked(path, true, |current| {
            let mut merged = self.clone();
            if let Some(on_disk) = current {
                for r in on_disk.records {
                    if !merged.done(&r.id) {
                        merged.records.push(r);
                    }
                }
            }
            Ok(merged)
        })
    }

    /// Replaces the saved state by this one (`--reset`: the user asked to forget). Like
    /// [`State::save`]: symbolic links are followed to the real file, which is replaced
    /// atomically by a uniquely named temporary file in its own directory (an interrupted or
    /// failed write leaves the old file whole), under an exclusive lock on `<file>.lock` so
    /// concurrent runs never interleave.
    ///
    /// # Errors
    /// The file cannot be locked or written.
    pub fn save_replacing(&self, path: &Path) -> Result<()> {
        write_locked(path, false, |_| Ok(self.clone()))
    }

    /// Forgets the saved progress: removes the real file a (possibly symbolic) path names,
    /// under the writer lock. A missing file is not an error.
    ///
    /// # Errors
    /// The file cannot be locked or removed.
    pub fn remove(path: &Path) -> Result<()> {
        let target = real_target(path)?;
        let _lock = lock(&target)?;
        match std::fs::remove_file(&target) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::write_source(&target, e)),
        }
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

    fn record(i: usize, answer: bool) -> StepRecord {
        let all = steps();
        let set = all[i].settings(&BTreeMap::new()).unwrap();
        all[i].evaluate(&set, &Answer::YesNo(answer)).unwrap()
    }

    fn yes_no_steps() -> Vec<usize> {
        // Steps whose answer is yes/no (the first, embedding_dim, is one).
        steps()
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                s.evaluate(&s.settings(&BTreeMap::new()).unwrap(), &Answer::YesNo(true))
                    .is_ok()
            })
            .map(|(i, _)| i)
            .collect()
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    #[test]
    fn a_save_from_a_stale_state_keeps_what_another_run_saved() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let ids = yes_no_steps();
        let mut a = State::default();
        a.record(record(ids[0], true));
        a.save(&path).unwrap();
        // Another run, started from an empty state, saves a different step: both are kept.
        let mut b = State::default();
        b.record(record(ids[1], false));
        b.save(&path).unwrap();
        let back = State::load(&path).unwrap();
        assert!(back.done(steps()[ids[0]].id) && back.done(steps()[ids[1]].id));
        // --reset replaces.
        State::default().save_replacing(&path).unwrap();
        assert!(State::load(&path).unwrap().records.is_empty());
        // A file that is not a state is never overwritten by a save.
        std::fs::write(&path, "my notes").unwrap();
        let e = a.save(&path).unwrap_err().to_string();
        assert!(e.contains("left as it is"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "my notes");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn saving_through_a_symlink_writes_the_real_file_and_keeps_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let real_dir = dir.path().join("real");
        std::fs::create_dir(&real_dir).unwrap();
        let real = real_dir.join("progress.json");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("real/progress.json", &link).unwrap();
        let ids = yes_no_steps();
        let mut first = State::default();
        first.record(record(ids[0], true));
        first.save(&real).unwrap();
        let mut second = State::default();
        second.record(record(ids[1], true));
        second.save(&link).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let back = State::load(&real).unwrap();
        assert_eq!(back.records.len(), 2, "the target's records were kept");
        assert!(leftovers(&real_dir).is_empty() && leftovers(dir.path()).is_empty());
        State::remove(&link).unwrap();
        assert!(!real.exists() && std::fs::symlink_metadata(&link).is_ok());
    }

    #[test]
    fn concurrent_writers_never_lose_a_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let ids = yes_no_steps();
        std::thread::scope(|s| {
            for (k, &i) in ids.iter().enumerate() {
                let path = &path;
                s.spawn(move || {
                    for round in 0..5 {
                        let mut st = State::default();
                        st.record(record(i, (k + round) % 2 == 0));
                        st.save(path).unwrap();
                    }
                });
            }
        });
        let back = State::load(&path).unwrap();
        assert_eq!(back.records.len(), ids.len());
        assert!(leftovers(dir.path()).is_empty());
    }
}
