//! Position interpolation (Chen et al. 2023, transformers' `linear`):
//! `inv_freq[k] = 1 / base^(2k/dim) / factor`.

use serde::Serialize;

use super::params::{check_factor, required, ConfigView};
use super::{c, pos_freqs, Regime, Regimes, RopeKind};
use crate::{Real, Result};

/// Linear scaling (position interpolation).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Linear {
    /// Interpolation factor (≥ 1; config key `factor`, required).
    pub factor: f64,
}

impl RopeKind for Linear {
    const NAME: &'static str = "linear";
    const ALIASES: &'static [&'static str] = &[];
    const SCALES: bool = true;

    fn from_config(view: &mut ConfigView) -> Result<Self> {
        Ok(Linear {
            factor: required(view.num("factor")?, "factor", "linear")?,
        })
    }

    fn check(&self, _rotary_dim: usize) -> Result<()> {
        check_factor("factor", self.factor, 1.0)
    }

    /// `1 / base^(2k/dim) / factor`.
    fn inv_freq<T: Real>(&self, base: f64, dim: usize, _seq_len: Option<u64>) -> Vec<T> {
        pos_freqs::<T>(base, dim)
            .into_iter()
            .map(|p| T::one() / p / c::<T>(self.factor))
            .collect()
    }

    fn regimes(&self, _base: f64, dim: usize, _seq_len: Option<u64>) -> Regimes {
        Regimes::all(Regime::Divided, dim)
    }

    fn power_law(&self) -> bool {
        true
    }
}
