//! Additive positional information: a position-dependent matrix `P` added to the input, `H + P`,
//! before attention sees it. Row `p` of `P` belongs to *slot* `p`, not to a token, so when the
//! tokens are shuffled their positional content no longer matches where they ended up — which
//! is exactly why the permutation check fails afterwards (seed 000, exercise 3).

use ndarray::Array2;

use crate::rng::Gaussian;
use crate::{Error, Result};

/// The seed's crude signal: every component of row `p` is `p · scale`.
pub fn index_signal(n: usize, d: usize, scale: f64) -> Array2<f64> {
    Array2::from_shape_fn((n, d), |(p, _)| p as f64 * scale)
}

/// Sinusoidal encodings (Vaswani et al. 2017, §3.5):
/// `P[p, 2i] = sin(p / base^(2i/d))`, `P[p, 2i+1] = cos(p / base^(2i/d))` (base 10000 in the
/// paper; interleaved sin/cos layout, as in the paper — not the `[sin | cos]` concatenation some
/// code uses).
///
/// # Errors
/// `base ≤ 1` or not finite.
pub fn sinusoidal(n: usize, d: usize, base: f64) -> Result<Array2<f64>> {
    if !(base.is_finite() && base > 1.0) {
        return Err(Error::invalid(
            "sinusoidal base",
            base,
            "a finite number > 1 (the paper uses 10000)",
        ));
    }
    Ok(Array2::from_shape_fn((n, d), |(p, c)| {
        let i = (c / 2) as f64;
        let angle = p as f64 / base.powf(2.0 * i / d as f64);
        if c % 2 == 0 {
            angle.sin()
        } else {
            angle.cos()
        }
    }))
}

/// A "learned" table: i.i.d. N(0, σ²) entries drawn from `rng` (a stand-in for trained
/// parameters; nothing is trained here).
pub fn learned_table(n: usize, d: usize, sigma: f64, rng: &mut dyn Gaussian) -> Array2<f64> {
    rng.randn(n, d).mapv(|x| sigma * x)
}

/// Which additive encoding to use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Additive {
    /// [`index_signal`] with the given scale.
    Index {
        /// Multiplier of the position index.
        scale: f64,
    },
    /// [`sinusoidal`] with the given base.
    Sinusoidal {
        /// The base (10000 in the paper).
        base: f64,
    },
    /// [`learned_table`] drawn with the given seed and σ.
    Learned {
        /// Seed of the table's generator (`StdGaussian`).
        seed: u64,
        /// Standard deviation of the entries.
        sigma: f64,
    },
}

impl Additive {
    /// The `n × d` matrix `P`.
    ///
    /// # Errors
    /// See [`sinusoidal`].
    pub fn matrix(self, n: usize, d: usize) -> Result<Array2<f64>> {
        match self {
            Additive::Index { scale } => Ok(index_signal(n, d, scale)),
            Additive::Sinusoidal { base } => sinusoidal(n, d, base),
            Additive::Learned { seed, sigma } => Ok(learned_table(
                n,
                d,
                sigma,
                &mut crate::rng::StdGaussian::new(seed),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sinusoidal_matches_the_paper_formula() {
        let p = sinusoidal(3, 4, 10000.0).unwrap();
        assert_eq!(p[[0, 0]], 0.0);
        assert_eq!(p[[0, 1]], 1.0);
        assert_eq!(p[[2, 0]], 2f64.sin());
        // Column 2 is plane i = 1: angle = 2 / 10000^(2/4) = 0.02.
        assert!((p[[2, 2]] - 0.02f64.sin()).abs() < 1e-17);
        assert!(sinusoidal(3, 4, 1.0).is_err());
    }

    #[test]
    fn index_signal_is_p_times_scale() {
        let p = index_signal(3, 2, 0.1);
        assert_eq!(p.row(2).to_vec(), vec![0.2, 0.2]);
    }
}
