//! Llama 3.1 (transformers' `llama3`): wavelengths `2π/ω` above `original/low_freq_factor` are
//! divided by `factor`, those below `original/high_freq_factor` kept, and a smooth blend
//! `(1 − s)·ω/factor + s·ω` with `s = (original/λ − low)/(high − low)` in between.

use serde::Serialize;

use super::params::{check_context, check_factor, positive, required, ConfigView};
use super::{c, pos_freqs, Regime, Regimes, RopeKind};
use crate::{Error, Real, Result};

/// Llama 3.1 scaling.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Llama3 {
    /// Division factor for long wavelengths (≥ 1; required).
    pub factor: f64,
    /// Wavelengths above `original / low_freq_factor` are divided by `factor` (required, > 0).
    pub low_freq_factor: f64,
    /// Wavelengths below `original / high_freq_factor` are kept (required, ≥ low_freq_factor;
    /// equal to it leaves no blend band).
    pub high_freq_factor: f64,
    /// Pre-training context.
    pub original_max_position_embeddings: u64,
}

impl RopeKind for Llama3 {
    const NAME: &'static str = "llama3";
    const ALIASES: &'static [&'static str] = &[];
    const SCALES: bool = true;

    fn from_config(view: &mut ConfigView) -> Result<Self> {
        Ok(Llama3 {
            factor: required(view.num("factor")?, "factor", "llama3")?,
            low_freq_factor: positive(
                required(view.num("low_freq_factor")?, "low_freq_factor", "llama3")?,
                "low_freq_factor",
            )?,
            high_freq_factor: required(
                view.num("high_freq_factor")?,
                "high_freq_factor",
                "llama3",
            )?,
            original_max_position_embeddings: view.original()?,
        })
    }

    fn check(&self, _rotary_dim: usize) -> Result<()> {
        check_factor("factor", self.factor, 1.0)?;
        check_factor("low_freq_factor", self.low_freq_factor, f64::MIN_POSITIVE)?;
        // transformers only warns when high ≤ low; high == low (Llama-4 Scout: 1 and 1) empties
        // the blend band, which the formula handles as written. high < low would make the
        // "kept" and "divided" bands overlap: refused.
        if !(self.high_freq_factor.is_finite() && self.high_freq_factor >= self.low_freq_factor) {
            return Err(Error::invalid(
                "rope parameter high_freq_factor",
                self.high_freq_factor,
                format!(
                    "a finite number ≥ low_freq_factor ({})",
                    self.low_freq_factor
                ),
            ));
        }
        check_context(
            "original_max_position_embeddings",
            self.original_max_position_embeddings,
        )
    }

    /// The three bands of the module doc, op by op as transformers evaluates them.
    fn inv_freq<T: Real>(&self, base: f64, dim: usize, _seq_len: Option<u64>) -> Vec<T> {
        let one = T::one();
        let old = self.original_max_position_embeddings as f64;
        let low_wl = old / self.low_freq_factor;
        let high_wl = old / self.high_freq_factor;
        let f = c::<T>(self.factor);
        pos_freqs::<T>(base, dim)
            .into_iter()
            .map(|p| {
                let inv = one / p;
                // torch: `2π / t` is `reciprocal(t) * 2π`; `old / t` likewise.
                let wavelen = one / inv * c::<T>(2.0 * std::f64::consts::PI);
                let inv_l = if wavelen > c::<T>(low_wl) {
                    inv / f
                } else {
                    inv
                };
                let smooth = (one / wavelen * c::<T>(old) - c::<T>(self.low_freq_factor))
                    / c::<T>(self.high_freq_factor - self.low_freq_factor);
                let smoothed = (one - smooth) * inv_l / f + smooth * inv_l;
                // torch's `~(w < high_wl) * ~(w > low_wl)`, negations kept as written.
                #[allow(clippy::neg_cmp_op_on_partial_ord)]
                let medium = !(wavelen < c::<T>(high_wl)) && !(wavelen > c::<T>(low_wl));
                if medium {
                    smoothed
                } else {
                    inv_l
                }
            })
            .collect()
    }

    /// Bands by the default wavelength 2π/ω: < original/high kept, > original/low divided,
    /// blended between (f64, as [`Self::inv_freq`] decides them).
    fn regimes(&self, base: f64, dim: usize, _seq_len: Option<u64>) -> Regimes {
        let old = self.original_max_position_embeddings as f64;
        let (low_wl, high_wl) = (old / self.low_freq_factor, old / self.high_freq_factor);
        Regimes {
            planes: pos_freqs::<f64>(base, dim)
                .into_iter()
                .map(|p| {
                    let wavelen = p * (2.0 * std::f64::consts::PI);
                    if wavelen > low_wl {
                        Regime::Divided
                    } else if wavelen < high_wl {
                        Regime::Kept
                    } else {
                        Regime::Blended
                    }
                })
                .collect(),
            ramp: None,
        }
    }

    fn contexts(&self) -> (Option<u64>, Option<u64>) {
        let o = self.original_max_position_embeddings;
        (Some(o), Some((self.factor * o as f64).round() as u64))
    }

    fn power_law(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::super::{RopeScaling, Unscaled};
    use super::*;
    use crate::position::frequencies::RotaryFrequencies;

    #[test]
    fn llama3_bands() {
        let s = RopeScaling::Llama3(Llama3 {
            factor: 8.0,
            low_freq_factor: 1.0,
            high_freq_factor: 4.0,
            original_max_position_embeddings: 8192,
        });
        let f = RotaryFrequencies::from_scaling(500000.0, 128, 128, &s, None).unwrap();
        let d = RotaryFrequencies::from_scaling(
            500000.0,
            128,
            128,
            &RopeScaling::Default(Unscaled),
            None,
        )
        .unwrap();
        for (k, (a, b)) in f.inv_freq.iter().zip(&d.inv_freq).enumerate() {
            let wl = 2.0 * std::f64::consts::PI / b;
            if wl < 2048.0 {
                assert_eq!(a, b, "plane {k} (wavelength {wl}) must be untouched");
            } else if wl > 8192.0 {
                assert!(
                    (a - b / 8.0).abs() <= 2.0 * f64::EPSILON * a,
                    "plane {k} must be divided by 8"
                );
            } else {
                assert!(*a < *b && *a > b / 8.0, "plane {k} is blended");
            }
        }
    }
}
