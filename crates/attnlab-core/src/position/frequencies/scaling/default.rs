//! The default rope (RoFormer, Llama): `inv_freq[k] = 1 / base^(2k/dim)`, no parameters,
//! attention factor 1.

use serde::Serialize;

use super::params::ConfigView;
use super::{pos_freqs, Regime, Regimes, RopeKind};
use crate::{Real, Result};

/// The unscaled (default) rope type: no parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Unscaled;

impl RopeKind for Unscaled {
    const NAME: &'static str = "default";
    const ALIASES: &'static [&'static str] = &[];
    const SCALES: bool = false;

    fn from_config(_: &mut ConfigView) -> Result<Self> {
        Ok(Unscaled)
    }

    fn check(&self, _rotary_dim: usize) -> Result<()> {
        Ok(())
    }

    /// `1 / base^(2k/dim)`.
    fn inv_freq<T: Real>(&self, base: f64, dim: usize, _seq_len: Option<u64>) -> Vec<T> {
        pos_freqs::<T>(base, dim)
            .into_iter()
            .map(|p| T::one() / p)
            .collect()
    }

    fn regimes(&self, _base: f64, dim: usize, _seq_len: Option<u64>) -> Regimes {
        Regimes::all(Regime::Unscaled, dim)
    }

    fn power_law(&self) -> bool {
        true
    }
}
