//! Multimodal RoPE (Qwen2-VL, Qwen2.5-VL; legacy `type: "mrope"`): the default frequencies
//! `inv_freq[k] = 1 / base^(2k/dim)`, with the planes split into contiguous sections rotated by
//! the temporal, height and width position ids (`mrope_section`, default `[16, 24, 24]` planes in
//! transformers' `Qwen2VLRotaryEmbedding`). For text tokens the three position ids are equal (the
//! token index), so every plane turns by `index · inv_freq[k]`: on text-only input M-RoPE is
//! exactly the default rope. transformers' config class rewrites the type to `default`.

use serde::Serialize;

use super::params::{list, ConfigView};
use super::{Regimes, RopeKind, Unscaled};
use crate::{Error, Real, Result};

/// M-RoPE: the default frequencies and the section split.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mrope {
    /// Planes per position axis (temporal, height, width).
    pub mrope_section: Vec<u64>,
    /// Qwen3-VL's `mrope_interleaved`: the axes take turns plane by plane instead of contiguous
    /// sections.
    pub interleaved: bool,
}

impl RopeKind for Mrope {
    const NAME: &'static str = "mrope";
    const ALIASES: &'static [&'static str] = &[];
    const SCALES: bool = false;

    fn from_config(view: &mut ConfigView) -> Result<Self> {
        let mrope_section = match view.params.get("mrope_section") {
            Some(serde_json::Value::Null) | None => {
                view.notes.push(
                    "mrope without mrope_section: transformers' Qwen2VLRotaryEmbedding default [16, 24, 24]"
                        .into(),
                );
                vec![16, 24, 24]
            }
            Some(_) => list(view.params, "mrope_section")?
                .into_iter()
                .map(|x| {
                    if x >= 0.0 && x.fract() == 0.0 {
                        Ok(x as u64)
                    } else {
                        Err(Error::invalid(
                            "rope parameter mrope_section",
                            x,
                            "whole numbers of planes",
                        ))
                    }
                })
                .collect::<Result<_>>()?,
        };
        let interleaved = super::params::boolean(view.params, "mrope_interleaved")?
            .or(super::params::boolean(view.top, "mrope_interleaved")?)
            .unwrap_or(false);
        let names = ["temporal", "height", "width"];
        let split: Vec<String> = mrope_section
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{n} {}", names.get(i).copied().unwrap_or("extra")))
            .collect();
        view.notes.push(format!(
            "mrope: the planes are split into sections rotated by separate position ids ({}{}); for text-only input the three ids are equal to the token index, so every plane turns exactly as in the default rope (audited here); image/video tokens advance the sections differently",
            split.join(", "),
            if interleaved { ", interleaved plane by plane" } else { ", contiguous" }
        ));
        Ok(Mrope {
            mrope_section,
            interleaved,
        })
    }

    fn check(&self, rotary_dim: usize) -> Result<()> {
        let planes: u64 = self.mrope_section.iter().sum();
        if planes != (rotary_dim / 2) as u64 {
            return Err(Error::invalid(
                "rope parameter mrope_section",
                format!(
                    "[{}] ({planes} planes)",
                    self.mrope_section
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                format!(
                    "sections adding up to {} planes (rotary dimension {rotary_dim} / 2)",
                    rotary_dim / 2
                ),
            ));
        }
        Ok(())
    }

    /// `1 / base^(2k/dim)`: on text positions M-RoPE is the default rope, so every frequency
    /// property is [`Unscaled`]'s (below, and the trait's defaults, which are its too).
    fn inv_freq<T: Real>(&self, base: f64, dim: usize, seq_len: Option<u64>) -> Vec<T> {
        Unscaled.inv_freq(base, dim, seq_len)
    }

    fn regimes(&self, base: f64, dim: usize, seq_len: Option<u64>) -> Regimes {
        Unscaled.regimes(base, dim, seq_len)
    }

    fn power_law(&self) -> bool {
        Unscaled.power_law()
    }
}
