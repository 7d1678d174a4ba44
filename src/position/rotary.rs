//! Rotary position embeddings — TEMPORARY minimal version used by the core until the full
//! module (layouts, partial rotary, references) is merged.

use ndarray::{Array2, ArrayView2};

use crate::position::frequencies::{reduce_angle, RotaryFrequencies};
use crate::{Real, Result};

/// Pairing convention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Adjacent pairs (2k, 2k+1).
    Interleaved,
    /// Pairs (k, k + d/2).
    HalfSplit,
}

/// A rotary map.
#[derive(Debug, Clone)]
pub struct Rotary {
    /// Per-plane frequencies.
    pub inv_freq: Vec<f64>,
    /// Pairing.
    pub layout: Layout,
}

impl Rotary {
    /// From a frequency set.
    pub fn from_frequencies(f: &RotaryFrequencies, layout: Layout) -> Self {
        Rotary {
            inv_freq: f.inv_freq.clone(),
            layout,
        }
    }

    /// Rotates row r by positions[r]·ω_k in plane k.
    pub fn apply<T: Real>(&self, x: ArrayView2<T>, positions: &[i64]) -> Result<Array2<T>> {
        let mut out = x.to_owned();
        let half = self.inv_freq.len();
        for (r, &p) in positions.iter().enumerate() {
            for (k, &w) in self.inv_freq.iter().enumerate() {
                let (a, b) = match self.layout {
                    Layout::Interleaved => (2 * k, 2 * k + 1),
                    Layout::HalfSplit => (k, k + half),
                };
                let th = reduce_angle(p as f64, w);
                let (s, c) = (T::from_f64(th.sin()), T::from_f64(th.cos()));
                let (u, v) = (x[[r, a]], x[[r, b]]);
                out[[r, a]] = u * c - v * s;
                out[[r, b]] = u * s + v * c;
            }
        }
        Ok(out)
    }
}
