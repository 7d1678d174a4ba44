//! LongRoPE (Phi-3; legacy name `su`): per-plane rescale factors,
//! `inv_freq[k] = 1 / (ext_k · base^(2k/dim))` with `ext = short_factor` up to the original
//! context (or without a sequence length) and `long_factor` beyond it, and an attention factor
//! `√(1 + ln(factor)/ln(original))` (1 when factor ≤ 1) unless the config gives one.

use serde::Serialize;

use super::params::{check_factor, list, ConfigView};
use super::{c, pos_freqs, Regime, Regimes, RopeKind};
use crate::{Error, Real, Result};

/// LongRoPE scaling.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Longrope {
    /// Per-plane factors used when `seq_len ≤ original` (or no seq_len).
    pub short_factor: Vec<f64>,
    /// Per-plane factors used when `seq_len > original`.
    pub long_factor: Vec<f64>,
    /// Context extension factor (explicit, or max/original).
    pub factor: f64,
    /// Pre-training context.
    pub original_max_position_embeddings: u64,
    /// Explicit attention factor, when given.
    pub attention_factor: Option<f64>,
}

impl RopeKind for Longrope {
    const NAME: &'static str = "longrope";
    const ALIASES: &'static [&'static str] = &["su"];
    const SCALES: bool = true;

    fn from_config(view: &mut ConfigView) -> Result<Self> {
        let orig = view.original()?;
        let factor = match view.num("factor")? {
            Some(f) => f,
            None => {
                view.need_max("longrope's default factor is max/original")? as f64 / orig as f64
            }
        };
        Ok(Longrope {
            short_factor: list(view.params, "short_factor")?,
            long_factor: list(view.params, "long_factor")?,
            factor,
            original_max_position_embeddings: orig,
            attention_factor: view.num("attention_factor")?,
        })
    }

    fn check(&self, rotary_dim: usize) -> Result<()> {
        let half = rotary_dim / 2;
        for (key, list) in [
            ("short_factor", &self.short_factor),
            ("long_factor", &self.long_factor),
        ] {
            if list.len() != half {
                return Err(Error::invalid(
                    format!("rope parameter {key}"),
                    format!("a list of {} numbers", list.len()),
                    format!("{half} numbers, one per plane (rotary dimension {rotary_dim} / 2)"),
                ));
            }
            if let Some(v) = list.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
                return Err(Error::invalid(
                    format!("rope parameter {key}"),
                    format!("entry {v}"),
                    "finite numbers > 0",
                ));
            }
        }
        check_factor("factor", self.factor, 0.0)?;
        if self.original_max_position_embeddings < 2 {
            return Err(Error::invalid(
                "original_max_position_embeddings",
                self.original_max_position_embeddings,
                "a context length ≥ 2",
            ));
        }
        if let Some(a) = self.attention_factor {
            check_factor("attention_factor", a, 0.0)?;
        }
        Ok(())
    }

    /// `1 / (ext_k · base^(2k/dim))`, the long factors beyond the original context.
    fn inv_freq<T: Real>(&self, base: f64, dim: usize, seq_len: Option<u64>) -> Vec<T> {
        let long = seq_len.is_some_and(|s| s > self.original_max_position_embeddings);
        let ext = if long {
            &self.long_factor
        } else {
            &self.short_factor
        };
        pos_freqs::<T>(base, dim)
            .into_iter()
            .zip(ext)
            .map(|(p, &e)| T::one() / (c::<T>(e) * p))
            .collect()
    }

    fn attention_factor(&self) -> f64 {
        match self.attention_factor {
            Some(a) => a,
            None if self.factor <= 1.0 => 1.0,
            None => (1.0 + self.factor.ln() / (self.original_max_position_embeddings as f64).ln())
                .sqrt(),
        }
    }

    fn regimes(&self, _base: f64, dim: usize, _seq_len: Option<u64>) -> Regimes {
        Regimes::all(Regime::Rescaled, dim)
    }

    fn contexts(&self) -> (Option<u64>, Option<u64>) {
        let o = self.original_max_position_embeddings;
        (Some(o), Some((self.factor * o as f64).round() as u64))
    }

    /// The long factors apply from sequence length original + 1.
    fn switch_at(&self) -> Option<u64> {
        Some(self.original_max_position_embeddings + 1)
    }

    fn power_law(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::RopeScaling;
    use super::*;
    use crate::position::frequencies::RotaryFrequencies;

    #[test]
    fn longrope_switches_sets_after_the_original_context() {
        let s = RopeScaling::Longrope(Longrope {
            short_factor: vec![1.0, 2.0],
            long_factor: vec![4.0, 8.0],
            factor: 32.0,
            original_max_position_embeddings: 4096,
            attention_factor: None,
        });
        let at = |n| RotaryFrequencies::from_scaling(10000.0, 4, 4, &s, n).unwrap();
        assert_eq!(at(None).inv_freq, vec![1.0, 0.01 / 2.0]);
        assert_eq!(at(Some(4096)).inv_freq, at(None).inv_freq);
        assert_eq!(at(Some(4097)).inv_freq, vec![0.25, 0.01 / 8.0]);
        assert_eq!(
            at(None).attention_factor,
            (1.0 + 32f64.ln() / 4096f64.ln()).sqrt()
        );
    }
}
