//! Proportional RoPE (transformers 5.x `proportional`, Gemma-4's full-attention layers): of the
//! `head_dim/2` planes the first `n = int(partial_rotary_factor · head_dim // 2)` rotate with
//! `inv_freq[k] = 1 / base^(2k/head_dim) / factor` — the exponent over the *whole* head, unlike
//! partial rotary — and the rest have `inv_freq = 0` (NoPE planes: cos 1, sin 0, never turn).
//! The rotary dimension is the whole head.

use serde::Serialize;

use super::params::{check_factor, num, ConfigView};
use super::{c, pw, Regime, Regimes, RopeKind};
use crate::{Error, Real, Result};

/// Proportional RoPE.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Proportional {
    /// The fraction of the head's planes that rotate (config key `partial_rotary_factor`,
    /// default 1).
    pub partial_rotary_factor: f64,
    /// Divides every frequency (config key `factor`, default 1).
    pub factor: f64,
}

impl Proportional {
    /// `int(partial_rotary_factor · head_dim // 2)`: the rotating planes.
    pub fn rotating_planes(&self, head_dim: usize) -> usize {
        ((self.partial_rotary_factor * head_dim as f64) / 2.0).floor() as usize
    }
}

impl RopeKind for Proportional {
    const NAME: &'static str = "proportional";
    const ALIASES: &'static [&'static str] = &[];
    const SCALES: bool = true;

    fn from_config(view: &mut ConfigView) -> Result<Self> {
        let partial = match num(view.params, "partial_rotary_factor")?
            .or(num(view.top, "partial_rotary_factor")?)
        {
            Some(f) => f,
            None => {
                view.notes.push("proportional rope without partial_rotary_factor: 1 (every plane rotates, as linear scaling would)".into());
                1.0
            }
        };
        Ok(Proportional {
            partial_rotary_factor: partial,
            factor: view.num("factor")?.unwrap_or(1.0),
        })
    }

    fn check(&self, rotary_dim: usize) -> Result<()> {
        if !(self.partial_rotary_factor > 0.0 && self.partial_rotary_factor <= 1.0) {
            return Err(Error::invalid(
                "rope parameter partial_rotary_factor",
                self.partial_rotary_factor,
                "a fraction in (0, 1]",
            ));
        }
        if self.rotating_planes(rotary_dim) == 0 {
            return Err(Error::invalid(
                "rope parameter partial_rotary_factor",
                self.partial_rotary_factor,
                format!("at least one rotating plane of {}", rotary_dim / 2),
            ));
        }
        check_factor("factor", self.factor, f64::MIN_POSITIVE)
    }

    /// The first planes `1/base^(2k/head_dim)`, the rest 0; all divided by `factor`
    /// (torch: `cat(1/base**(arange(0, 2n, 2)/head_dim), zeros) / factor`).
    fn inv_freq<T: Real>(&self, base: f64, dim: usize, _seq_len: Option<u64>) -> Vec<T> {
        let n = self.rotating_planes(dim);
        (0..dim / 2)
            .map(|k| {
                let w = if k < n {
                    T::one() / pw(c::<T>(base), c::<T>((2 * k) as f64) / c::<T>(dim as f64))
                } else {
                    T::zero()
                };
                w / c::<T>(self.factor)
            })
            .collect()
    }

    fn regimes(&self, _base: f64, dim: usize, _seq_len: Option<u64>) -> Regimes {
        let n = self.rotating_planes(dim);
        let on = if self.factor == 1.0 {
            Regime::Unscaled
        } else {
            Regime::Divided
        };
        Regimes {
            planes: (0..dim / 2)
                .map(|k| if k < n { on } else { Regime::NotRotated })
                .collect(),
            ramp: None,
        }
    }

    fn power_law(&self) -> bool {
        true
    }
}
