//! Hugging Face `config.json` → rotary configuration (being written; the signatures below are
//! the interface the audit uses).

use std::path::Path;

use crate::position::frequencies::RotaryFrequencies;
use crate::{Error, Result};

/// A model's rotary configuration as read from its `config.json`.
#[derive(Debug, Clone)]
pub struct RopeConfig {
    /// The raw JSON, kept for reporting.
    pub raw: serde_json::Value,
}

impl RopeConfig {
    /// The frequencies and attention factor the implementation computes at initialisation
    /// (`seq_len = None`) or for a given sequence length (dynamic NTK, LongRoPE long factors).
    pub fn frequencies(&self, _seq_len: Option<u64>) -> Result<RotaryFrequencies> {
        Err(Error::invalid(
            "config",
            "(not yet implemented)",
            "a later build",
        ))
    }
}

/// Reads and validates a `config.json`.
pub fn load_config(path: &Path) -> Result<RopeConfig> {
    Err(Error::io(path, "config loading not yet implemented"))
}

/// A built-in configuration typed from a well-known model's public `config.json`.
pub fn preset(name: &str) -> Result<RopeConfig> {
    Err(Error::invalid(
        "preset",
        name,
        "a known preset (not yet implemented)",
    ))
}

/// The names of the built-in presets.
pub fn preset_names() -> Vec<&'static str> {
    Vec::new()
}
