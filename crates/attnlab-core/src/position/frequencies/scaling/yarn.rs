//! YaRN (Peng et al. 2023, transformers' `yarn`): a per-plane blend of the original and the
//! interpolated frequencies with a linear ramp over the correction range, and an attention
//! factor that scales cos and sin.
//!
//! `inv_freq[j] = interpolation·(1 − extra) + extrapolation·extra` with
//! `extrapolation = 1/base^(2j/dim)`, `interpolation = extrapolation/factor`,
//! `extra = 1 − clamp((j − low)/(high − low), 0, 1)` and `(low, high)` from
//! [`yarn_correction_range`].

use serde::Serialize;

use super::params::{boolean, check_context, check_factor, ConfigView};
use super::{c, pos_freqs, Regime, Regimes, RopeKind};
use crate::{Error, Real, Result};

/// YaRN scaling.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Yarn {
    /// Scaling factor (≥ 1; config key `factor`, default max_position_embeddings / original).
    pub factor: f64,
    /// Pre-training context used for the correction range.
    pub original_max_position_embeddings: u64,
    /// Explicit cos/sin attention factor, when the config gives one.
    pub attention_factor: Option<f64>,
    /// `mscale` (DeepSeek), numerator of the attention factor.
    pub mscale: Option<f64>,
    /// `mscale_all_dim` (DeepSeek), denominator of the attention factor.
    pub mscale_all_dim: Option<f64>,
    /// Rotations that mark the extrapolation boundary (default 32).
    pub beta_fast: f64,
    /// Rotations that mark the interpolation boundary (default 1).
    pub beta_slow: f64,
    /// Floor/ceil the correction range (default true; gpt-oss sets false).
    pub truncate: bool,
}

/// YaRN's `get_mscale(s, m) = 1 if s ≤ 1 else 0.1·m·ln(s) + 1` (also DeepSeek's `yarn_get_mscale`).
pub fn yarn_get_mscale(scale: f64, mscale: f64) -> f64 {
    if scale <= 1.0 {
        1.0
    } else {
        0.1 * mscale * scale.ln() + 1.0
    }
}

/// YaRN's correction range in dimension-index units:
/// `d(r) = dim·ln(orig / (2π·r)) / (2·ln base)`, `low = d(beta_fast)`, `high = d(beta_slow)`,
/// floored/ceiled when `truncate`, then clamped to `[0, dim−1]`.
pub fn yarn_correction_range(
    beta_fast: f64,
    beta_slow: f64,
    dim: usize,
    base: f64,
    orig: f64,
    truncate: bool,
) -> (f64, f64) {
    let d = dim as f64;
    let corr = |r: f64| (d * (orig / (r * 2.0 * std::f64::consts::PI)).ln()) / (2.0 * base.ln());
    let (mut low, mut high) = (corr(beta_fast), corr(beta_slow));
    if truncate {
        low = low.floor();
        high = high.ceil();
    }
    (low.max(0.0), high.min(d - 1.0))
}

impl RopeKind for Yarn {
    const NAME: &'static str = "yarn";
    const ALIASES: &'static [&'static str] = &[];
    const SCALES: bool = true;

    fn from_config(view: &mut ConfigView) -> Result<Self> {
        let orig = view.original()?;
        let factor = match view.num("factor")? {
            Some(f) => f,
            None => {
                let m = view.need_max("yarn's default factor is max/original")?;
                view.notes.push(format!(
                    "yarn factor defaulted to max_position_embeddings / original = {m}/{orig}"
                ));
                m as f64 / orig as f64
            }
        };
        if let Some(m) = view.max_position_embeddings {
            let implied = m as f64 / orig as f64;
            if implied != factor && implied != 1.0 {
                view.notes.push(format!(
                    "yarn factor {factor} differs from max_position_embeddings / original = {m}/{orig} = {implied}; the explicit factor is used (as transformers 5.x does)"
                ));
            }
        }
        Ok(Yarn {
            factor,
            original_max_position_embeddings: orig,
            attention_factor: view.num("attention_factor")?,
            mscale: view.num("mscale")?,
            mscale_all_dim: view.num("mscale_all_dim")?,
            // Python `get("beta_fast") or 32`: 0 and null also mean the default.
            beta_fast: view.num("beta_fast")?.filter(|b| *b != 0.0).unwrap_or(32.0),
            beta_slow: view.num("beta_slow")?.filter(|b| *b != 0.0).unwrap_or(1.0),
            truncate: boolean(view.params, "truncate")?.unwrap_or(true),
        })
    }

    fn check(&self, _rotary_dim: usize) -> Result<()> {
        check_factor("factor", self.factor, 1.0)?;
        check_context(
            "original_max_position_embeddings",
            self.original_max_position_embeddings,
        )?;
        if let Some(a) = self.attention_factor {
            check_factor("attention_factor", a, 0.0)?;
        }
        for (k, v) in [("beta_fast", self.beta_fast), ("beta_slow", self.beta_slow)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::invalid(
                    format!("rope parameter {k}"),
                    v,
                    "a finite number > 0",
                ));
            }
        }
        Ok(())
    }

    /// The ramp blend of the module doc, op by op as transformers evaluates it.
    fn inv_freq<T: Real>(&self, base: f64, dim: usize, _seq_len: Option<u64>) -> Vec<T> {
        let one = T::one();
        let (low, high) = yarn_correction_range(
            self.beta_fast,
            self.beta_slow,
            dim,
            base,
            self.original_max_position_embeddings as f64,
            self.truncate,
        );
        let high = if low == high { high + 0.001 } else { high };
        pos_freqs::<T>(base, dim)
            .into_iter()
            .enumerate()
            .map(|(j, p)| {
                let extrapolation = one / p;
                let interpolation = one / (c::<T>(self.factor) * p);
                let lin = (c::<T>(j as f64) - c::<T>(low)) / c::<T>(high - low);
                let ramp = if lin < T::zero() {
                    T::zero()
                } else if lin > one {
                    one
                } else {
                    lin
                };
                let extra = one - ramp;
                interpolation * (one - extra) + extrapolation * extra
            })
            .collect()
    }

    /// The explicit value, else `get_mscale(factor, mscale)/get_mscale(factor, mscale_all_dim)`
    /// when both are given and non-zero, else `get_mscale(factor)` (a Python float in
    /// transformers).
    fn attention_factor(&self) -> f64 {
        if let Some(a) = self.attention_factor {
            return a;
        }
        match (self.mscale, self.mscale_all_dim) {
            (Some(m), Some(md)) if m != 0.0 && md != 0.0 => {
                yarn_get_mscale(self.factor, m) / yarn_get_mscale(self.factor, md)
            }
            (Some(_) | None, Some(_) | None) => yarn_get_mscale(self.factor, 1.0),
        }
    }

    /// Planes up to the ramp's start are kept, from its end divided, blended between.
    fn regimes(&self, base: f64, dim: usize, _seq_len: Option<u64>) -> Regimes {
        let (low, high) = yarn_correction_range(
            self.beta_fast,
            self.beta_slow,
            dim,
            base,
            self.original_max_position_embeddings as f64,
            self.truncate,
        );
        let hi = if low == high { high + 0.001 } else { high };
        Regimes {
            planes: (0..dim / 2)
                .map(|j| {
                    let ramp = (j as f64 - low) / (hi - low);
                    if ramp <= 0.0 {
                        Regime::Kept
                    } else if ramp >= 1.0 {
                        Regime::Divided
                    } else {
                        Regime::Blended
                    }
                })
                .collect(),
            ramp: Some((low, high)),
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
    use super::super::RopeScaling;
    use super::*;
    use crate::position::frequencies::RotaryFrequencies;

    fn yarn(truncate: bool) -> RopeScaling {
        RopeScaling::Yarn(Yarn {
            factor: 32.0,
            original_max_position_embeddings: 4096,
            attention_factor: None,
            mscale: None,
            mscale_all_dim: None,
            beta_fast: 32.0,
            beta_slow: 1.0,
            truncate,
        })
    }

    #[test]
    fn yarn_keeps_fast_planes_and_interpolates_slow_ones() {
        let f = RotaryFrequencies::from_scaling(150000.0, 64, 64, &yarn(false), None).unwrap();
        let d = RotaryFrequencies::from_base(150000.0, 64).unwrap();
        // Plane 0 has wavelength 2π ≪ 4096/32: kept exactly (extra = 1, ramp = 0).
        assert_eq!(f.inv_freq[0], 1.0);
        // The last plane is fully interpolated: default / 32 (within 2 ulp: two roundings differ).
        let last = *f.inv_freq.last().unwrap();
        assert!((last - d.inv_freq.last().unwrap() / 32.0).abs() <= 4.0 * f64::EPSILON * last);
        // attention factor = 0.1 ln 32 + 1.
        assert_eq!(f.attention_factor, 0.1 * 32f64.ln() + 1.0);
        // truncate changes the ramp (gpt-oss's reason for the flag), so the sets differ.
        let t = RotaryFrequencies::from_scaling(150000.0, 64, 64, &yarn(true), None).unwrap();
        assert_ne!(t.inv_freq, f.inv_freq);
    }
}
