//! Dynamic NTK scaling (transformers' `dynamic`): at sequence length `s = max(seq_len, L)`
//! (L = `max_position_embeddings`), `base' = base · (factor·s/L − (factor − 1))^(dim/(dim−2))`,
//! then the default formula with `base'`.

use serde::Serialize;

use super::params::{check_context, check_factor, required, ConfigView};
use super::{pos_freqs, Regime, Regimes, RopeKind};
use crate::{Error, Real, Result};

/// Dynamic NTK scaling.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Dynamic {
    /// Scaling factor (≥ 1; config key `factor`, required).
    pub factor: f64,
    /// `max_position_embeddings` (L), required.
    pub max_position_embeddings: u64,
}

/// Dynamic NTK's base at sequence length `s = max(seq_len, L)`:
/// `base · (factor·s/L − (factor − 1))^(dim/(dim−2))` (equal to `base` for s ≤ L).
pub fn dynamic_base(base: f64, factor: f64, l: u64, seq_len: Option<u64>, dim: usize) -> f64 {
    let l = l as f64;
    let s = seq_len.map_or(l, |s| (s as f64).max(l));
    let d = dim as f64;
    base * ((factor * s / l) - (factor - 1.0)).powf(d / (d - 2.0))
}

impl RopeKind for Dynamic {
    const NAME: &'static str = "dynamic";
    const ALIASES: &'static [&'static str] = &[];
    const SCALES: bool = true;

    fn from_config(view: &mut ConfigView) -> Result<Self> {
        Ok(Dynamic {
            factor: required(view.num("factor")?, "factor", "dynamic")?,
            max_position_embeddings: view.need_max("dynamic scaling is relative to it")?,
        })
    }

    fn check(&self, rotary_dim: usize) -> Result<()> {
        check_factor("factor", self.factor, 1.0)?;
        if rotary_dim < 4 {
            return Err(Error::invalid(
                "rotary dimension",
                rotary_dim,
                "≥ 4 for dynamic scaling (the exponent is dim/(dim−2))",
            ));
        }
        check_context("max_position_embeddings", self.max_position_embeddings)
    }

    /// The default formula with [`dynamic_base`].
    fn inv_freq<T: Real>(&self, base: f64, dim: usize, seq_len: Option<u64>) -> Vec<T> {
        let new_base = self.effective_base(base, dim, seq_len);
        pos_freqs::<T>(new_base, dim)
            .into_iter()
            .map(|p| T::one() / p)
            .collect()
    }

    fn effective_base(&self, base: f64, dim: usize, seq_len: Option<u64>) -> f64 {
        dynamic_base(
            base,
            self.factor,
            self.max_position_embeddings,
            seq_len,
            dim,
        )
    }

    fn regimes(&self, base: f64, dim: usize, seq_len: Option<u64>) -> Regimes {
        let stretched = self.effective_base(base, dim, seq_len) != base;
        Regimes::all(
            if stretched {
                Regime::Stretched
            } else {
                Regime::Unscaled
            },
            dim,
        )
    }

    fn contexts(&self) -> (Option<u64>, Option<u64>) {
        (Some(self.max_position_embeddings), None)
    }

    /// Beyond `max_position_embeddings` the base grows with every new length.
    fn switch_at(&self) -> Option<u64> {
        Some(self.max_position_embeddings + 1)
    }

    fn power_law(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::{RopeScaling, Unscaled};
    use super::*;
    use crate::position::frequencies::RotaryFrequencies;

    #[test]
    fn dynamic_is_default_at_init_and_stretches_the_base_beyond() {
        let s = RopeScaling::Dynamic(Dynamic {
            factor: 2.0,
            max_position_embeddings: 4096,
        });
        let init = RotaryFrequencies::from_scaling(10000.0, 64, 64, &s, None).unwrap();
        let short = RotaryFrequencies::from_scaling(10000.0, 64, 64, &s, Some(100)).unwrap();
        let default =
            RotaryFrequencies::from_scaling(10000.0, 64, 64, &RopeScaling::Default(Unscaled), None)
                .unwrap();
        assert_eq!(init.inv_freq, default.inv_freq);
        assert_eq!(short.inv_freq, default.inv_freq);
        let long = RotaryFrequencies::from_scaling(10000.0, 64, 64, &s, Some(8192)).unwrap();
        // base' = 10000 · (2·2 − 1)^(64/62) = 10000 · 3^(32/31).
        let b = 10000.0 * 3f64.powf(64.0 / 62.0);
        let want = 1.0 / b.powf(2.0 / 64.0);
        assert!((long.inv_freq[1] - want).abs() <= 4.0 * f64::EPSILON * want);
        // The effective base is reported: configured at init, stretched beyond L (same formula,
        // same operations, so equal to the bit).
        assert_eq!(
            (init.base, init.effective_base),
            (Some(10000.0), Some(10000.0))
        );
        assert_eq!(long.effective_base, Some(b));
    }
}
