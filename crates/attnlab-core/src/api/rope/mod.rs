//! The rope commands: `rope identity`, `rope score`, `rope period`, `rope resolve` and
//! `rope audit` (URLs spell them `rope/identity`, …), and the frequency source they share.
//!
//! A frequency set comes from exactly one of: explicit frequencies (`omega`), a base and a
//! rotary dimension (`base` + `dim`), a Hugging Face `config.json` (`config`: a path, or the
//! file's contents inline) or a built-in model preset (`preset`). It is resolved here, in the
//! core, so the CLI, the web lab and Python accept and refuse the same sources with the same
//! messages.

pub mod audit;
pub mod engines;
pub mod identity;
pub mod period;
pub mod resolve;
pub mod score;
pub mod usage;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::value::{Count, List};
use super::Context;
use crate::config::{self, RopeConfig};
use crate::limits;
use crate::position::frequencies::{parse_omega_list, Omega, RotaryFrequencies};
use crate::text::shorten;
use crate::{Error, Result};

/// A `config.json`: a file the user names, or its contents (the web page and Python pass the
/// object, never a path).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ConfigSource {
    /// A path to a `config.json`.
    Path(PathBuf),
    /// The JSON object itself.
    Inline(serde_json::Map<String, serde_json::Value>),
}

impl ConfigSource {
    /// Reads and validates the config. Paths are read only when `allow_files`.
    ///
    /// # Errors
    /// A path when files are not allowed; an unreadable file; everything
    /// [`RopeConfig::from_json`] rejects.
    pub fn load(&self, allow_files: bool) -> Result<RopeConfig> {
        self.load_with(allow_files, &crate::limits::Limits::default())
    }

    /// [`ConfigSource::load`] within `limits` (a path through the input gate).
    ///
    /// # Errors
    /// See [`ConfigSource::load`]; FIFOs, devices, files over `limits.max_file_bytes`.
    pub fn load_with(
        &self,
        allow_files: bool,
        limits: &crate::limits::Limits,
    ) -> Result<RopeConfig> {
        match self {
            ConfigSource::Path(p) if !allow_files => Err(Error::invalid(
                "config",
                shorten(&p.display().to_string()),
                "the config.json object inline here (this front end reads no files a request names)",
            )),
            ConfigSource::Path(p) => config::load_config_with(p, limits),
            ConfigSource::Inline(map) => {
                RopeConfig::from_json(serde_json::Value::Object(map.clone()), "inline config")
            }
        }
    }
}

/// Where a frequency set comes from: exactly one of `omega`, `base` + `dim`, `config`, `preset`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FrequencySource {
    /// Explicit frequencies, comma-separated expressions (`pi/2,pi/3` stay exact; `0.25` is a
    /// float), or a list.
    pub omega: Option<List>,
    /// Base θ of ω_k = θ^(−2k/D) (with `dim`).
    pub base: Option<f64>,
    /// Rotary dimension D (even; with `base`).
    pub dim: Option<Count>,
    /// A Hugging Face `config.json` (a path, or the object).
    pub config: Option<ConfigSource>,
    /// A built-in model preset.
    pub preset: Option<String>,
    /// A GGUF model file (or a known model name): its rope metadata read as a config
    /// ([`crate::model::ModelInfo::rope_config`]).
    pub model: Option<String>,
}

/// A resolved frequency set: the frequencies, the exact expressions when given, and the config
/// that supplied it (whose frequencies are re-evaluated at the context, see
/// [`Frequencies::at_context`]).
#[derive(Debug, Clone)]
pub struct Frequencies {
    /// The frequencies (and how a model builds them).
    pub freqs: RotaryFrequencies,
    /// The explicit frequencies, exact multiples of π kept exact.
    pub omegas: Option<Vec<Omega>>,
    /// The config the set came from.
    pub config: Option<RopeConfig>,
}

impl FrequencySource {
    /// Resolves the source; `default` (base, dim) when none is given, else an error.
    ///
    /// ```
    /// use attnlab_core::api::{rope::FrequencySource, Context};
    /// let src = FrequencySource { omega: Some("pi/2,pi/3".parse().unwrap()), ..Default::default() };
    /// let f = src.load(&Context::default(), None).unwrap();
    /// assert_eq!(f.freqs.inv_freq.len(), 2);
    /// assert!(FrequencySource::default().load(&Context::default(), None).is_err());
    /// ```
    ///
    /// # Errors
    /// Several sources, `base` without `dim` (or the reverse), none without a default, and
    /// whatever the chosen source rejects (frequencies, base, dimension, config, preset name).
    pub fn load(&self, ctx: &Context, default: Option<(f64, usize)>) -> Result<Frequencies> {
        let given = self.omega.is_some() as u8
            + (self.base.is_some() || self.dim.is_some()) as u8
            + self.config.is_some() as u8
            + self.preset.is_some() as u8
            + self.model.is_some() as u8;
        if given > 1 {
            return Err(Error::invalid(
                "frequency source",
                "several given",
                "exactly one of --omega, --base/--dim, --config, --preset, --model",
            ));
        }
        let plain = |freqs| Frequencies {
            freqs,
            omegas: None,
            config: None,
        };
        if let Some(o) = &self.omega {
            let omegas = parse_omega_list(&o.joined())?;
            return Ok(Frequencies {
                freqs: RotaryFrequencies::from_omegas(&omegas),
                omegas: Some(omegas),
                config: None,
            });
        }
        if self.base.is_some() || self.dim.is_some() {
            let (Some(base), Some(dim)) = (self.base, self.dim) else {
                return Err(Error::invalid(
                    "frequency source",
                    "--base and --dim must go together",
                    "both, e.g. --base 10000 --dim 128",
                ));
            };
            let dim = usize::try_from(dim.get()).unwrap_or(usize::MAX);
            return Ok(plain(RotaryFrequencies::from_base(base, dim)?));
        }
        let cfg = match (&self.config, &self.preset, &self.model) {
            (Some(c), _, _) => Some(c.load_with(ctx.allow_files, &ctx.limits)?),
            (None, Some(name), _) => Some(config::preset(name)?),
            (None, None, Some(m)) => {
                let f = crate::api::model::open(m, ctx)?;
                let json = crate::model::ModelInfo::from_gguf(&f)?.rope_config();
                Some(ConfigSource::Inline(json).load_with(false, &ctx.limits)?)
            }
            (None, None, None) => None,
        };
        if let Some(cfg) = cfg {
            return Ok(Frequencies {
                freqs: cfg.frequencies(None)?,
                omegas: None,
                config: Some(cfg),
            });
        }
        match default {
            Some((b, d)) => Ok(plain(RotaryFrequencies::from_base(b, d)?)),
            None => Err(Error::invalid(
                "frequency source",
                "none given",
                "one of --omega LIST, --base B --dim D, --config FILE, --preset NAME, --model FILE",
            )),
        }
    }
}

impl Frequencies {
    /// The context L: `context`, else the config's default context
    /// ([`RopeConfig::default_context`]: `max_position_embeddings`, or factor × original when a
    /// scaling type states a larger intended length); a config's
    /// frequencies are re-evaluated at that sequence length (dynamic NTK and LongRoPE depend on
    /// it). `cap` is the command's largest context, checked here too so that a config's huge
    /// `max_position_embeddings` gets a message that names it and asks for `--context`.
    ///
    /// # Errors
    /// No context and no config context; a context of 0 or above `cap`.
    pub fn at_context(&mut self, context: Option<Count>, cap: u64) -> Result<u64> {
        let l = match context {
            Some(c) => c.get(),
            None => {
                let l = match &self.config {
                    Some(c) => c.default_context(),
                    None => self.freqs.context,
                };
                let l = l.ok_or_else(|| {
                    Error::invalid(
                        "context",
                        "missing",
                        "--context L (required unless a config gives max_position_embeddings)",
                    )
                })?;
                if l > cap {
                    return Err(Error::invalid(
                        "context",
                        format!("{l} (the config's max_position_embeddings or intended length)"),
                        format!("an explicit --context L with L ≤ {cap} for this command"),
                    ));
                }
                l
            }
        };
        if l == 0 || l > cap {
            return Err(Error::invalid(
                "context",
                l,
                format!("a number of positions in 1..={cap}"),
            ));
        }
        if let Some(cfg) = &self.config {
            self.freqs = cfg.frequencies(Some(l))?;
        }
        Ok(l)
    }

    /// The notes the config reader took (defaults applied, keys ignored); empty for other
    /// sources.
    pub fn notes(&self) -> Vec<String> {
        self.config
            .as_ref()
            .map(|c| c.notes.clone())
            .unwrap_or_default()
    }

    /// The set as frequencies: the exact expressions when given, else the non-zero
    /// frequencies (planes with ω = 0 never turn and add nothing to any margin).
    ///
    /// # Errors
    /// A frequency outside the accepted range.
    pub fn rotating(&self) -> Result<Vec<Omega>> {
        match &self.omegas {
            Some(o) => Ok(o.clone()),
            None => self
                .freqs
                .inv_freq
                .iter()
                .filter(|&&w| w != 0.0)
                .map(|&w| Omega::float(w))
                .collect(),
        }
    }
}

impl FrequencySource {
    /// How many planes the source declares, as far as the request says without reading a
    /// file: the number of expressions, D/2, else 64 (a typical head); the commands check
    /// their budget again with the loaded set.
    pub fn declared_planes(&self) -> u64 {
        match (&self.omega, self.dim) {
            (Some(o), _) => limits::u(o.0.len()),
            (None, Some(d)) => d.get() / 2,
            (None, None) => 64,
        }
    }
}

/// `"{command} with P planes{extra}"`, for limit messages.
pub fn describe(command: &str, planes: u64, extra: &str) -> String {
    format!(
        "{command} with {planes} plane{}{extra}",
        if planes == 1 { "" } else { "s" }
    )
}

/// Checks a phase tolerance: (0, π] radians.
///
/// # Errors
/// Anything else.
pub fn check_tol(tol: f64) -> Result<f64> {
    if !(tol > 0.0 && tol <= std::f64::consts::PI) {
        return Err(Error::invalid(
            "tol",
            crate::number::short(tol),
            "a phase tolerance in (0, π] radians",
        ));
    }
    Ok(tol)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rope_requests_come_from_json_under_both_spellings() {
        use crate::api::{self, Request};
        let body = serde_json::json!({"omega": "pi/2,pi/3", "context": "13"});
        for name in ["rope resolve", "rope/resolve"] {
            let req = Request::from_json(name, body.clone()).unwrap();
            assert_eq!(req.command(), "rope resolve");
            let report = api::run(&req).unwrap();
            assert!(!report.outcome().holds(), "the set aliases at 12 < 13");
        }
        let e = Request::from_json("rope/audit", serde_json::json!({"omegas": "pi/2"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("omegas") && e.contains("skip_min_base"), "{e}");
        let req = Request::from_json(
            "rope/score",
            serde_json::json!({"omega": ["pi/2"], "max_sep": 4}),
        )
        .unwrap();
        assert_eq!(req.command(), "rope score");
        assert!(Request::from_json("rope/nothing", serde_json::json!({})).is_err());
    }

    #[test]
    fn config_paths_are_refused_without_files_and_inline_configs_load() {
        let src = FrequencySource {
            config: Some(ConfigSource::Path("/etc/config.json".into())),
            ..Default::default()
        };
        let ctx = Context {
            allow_files: false,
            ..Context::default()
        };
        let e = src.load(&ctx, None).unwrap_err().to_string();
        assert!(
            e.contains("/etc/config.json") && e.contains("inline"),
            "{e}"
        );
        let body = serde_json::json!({"config": {"model_type": "llama", "hidden_size": 512,
            "num_attention_heads": 8, "max_position_embeddings": 256}});
        let src: FrequencySource = serde_json::from_value(body).unwrap();
        let mut f = src.load(&ctx, None).unwrap();
        assert_eq!(f.at_context(None, 1 << 20).unwrap(), 256);
        assert_eq!(f.freqs.rotary_dim, 64);
        // The class default of LlamaConfig, named with the transformers version it comes from.
        assert_eq!(
            f.notes(),
            ["no rope_theta: class default 10000 of model type llama (transformers 5.24.0)"]
        );
    }
}
