//! The Hugging Face rope types (transformers 5.x `ROPE_INIT_FUNCTIONS` and the per-model
//! `compute_default_rope_parameters`), each evaluated twice:
//!
//! * in `f64`, step by step as the formula is written (`RotaryFrequencies::inv_freq`);
//! * in `f32`, emulating the torch float32 operations one by one (`inv_freq_f32`): the exponent
//!   `f32(2k) / f32(dim)`, the power `f32(base) ** e` (computed in f64 and rounded once — torch's
//!   vectorised `powf` is within 1 ulp of that), reciprocals and products in f32, Python scalars
//!   rounded to f32 where torch does (`tensor op scalar` casts the scalar to the tensor's dtype),
//!   and `scalar / tensor` computed as torch does it: `reciprocal(tensor) * scalar`.
//!
//! Attention factors are Python floats in transformers, so they are computed in f64 only.
//!
//! Symbols below: `base` = `rope_theta`, `dim` = rotary dimension, `k = 0..dim/2`.

use serde::Serialize;

use super::RotaryFrequencies;
use crate::{Error, Real, Result};

/// A rope type with its parameters, defaults already applied (see `crate::config` for how
/// a `config.json` fills them in).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "rope_type", rename_all = "snake_case")]
pub enum RopeScaling {
    /// `inv_freq[k] = 1 / base^(2k/dim)`, attention factor 1.
    Default,
    /// Position interpolation: `inv_freq = default / factor`.
    Linear {
        /// Interpolation factor (≥ 1).
        factor: f64,
    },
    /// Dynamic NTK: at sequence length `s = max(seq_len, L)` (L = max_position_embeddings),
    /// `base' = base · (factor·s/L − (factor − 1))^(dim/(dim−2))`, then the default formula.
    Dynamic {
        /// Scaling factor (≥ 1).
        factor: f64,
        /// `max_position_embeddings` (L).
        max_position_embeddings: u64,
    },
    /// YaRN (Peng et al. 2023): a per-plane blend of the original and the interpolated
    /// frequencies with a linear ramp over the correction range, plus an attention factor.
    Yarn {
        /// Scaling factor (≥ 1).
        factor: f64,
        /// Pre-training context used for the correction range.
        original_max_position_embeddings: u64,
        /// Explicit cos/sin attention factor, when the config gives one.
        attention_factor: Option<f64>,
        /// `mscale` (DeepSeek), numerator of the attention factor.
        mscale: Option<f64>,
        /// `mscale_all_dim` (DeepSeek), denominator of the attention factor.
        mscale_all_dim: Option<f64>,
        /// Rotations that mark the extrapolation boundary (default 32).
        beta_fast: f64,
        /// Rotations that mark the interpolation boundary (default 1).
        beta_slow: f64,
        /// Floor/ceil the correction range (default true; gpt-oss sets false).
        truncate: bool,
    },
    /// LongRoPE (Phi-3, legacy name `su`): per-plane rescale factors, short set up to the
    /// original context and long set beyond it.
    Longrope {
        /// Per-plane factors used when `seq_len ≤ original` (or no seq_len).
        short_factor: Vec<f64>,
        /// Per-plane factors used when `seq_len > original`.
        long_factor: Vec<f64>,
        /// Context extension factor (explicit, or max/original).
        factor: f64,
        /// Pre-training context.
        original_max_position_embeddings: u64,
        /// Explicit attention factor, when given.
        attention_factor: Option<f64>,
    },
    /// Llama 3.1: long wavelengths divided by `factor`, short ones kept, a smooth blend between.
    Llama3 {
        /// Division factor for long wavelengths.
        factor: f64,
        /// Wavelengths above `original / low_freq_factor` are divided by `factor`.
        low_freq_factor: f64,
        /// Wavelengths below `original / high_freq_factor` are kept.
        high_freq_factor: f64,
        /// Pre-training context.
        original_max_position_embeddings: u64,
    },
}

impl RopeScaling {
    /// The type's name as Hugging Face spells it.
    pub fn name(&self) -> &'static str {
        match self {
            RopeScaling::Default => "default",
            RopeScaling::Linear { .. } => "linear",
            RopeScaling::Dynamic { .. } => "dynamic",
            RopeScaling::Yarn { .. } => "yarn",
            RopeScaling::Longrope { .. } => "longrope",
            RopeScaling::Llama3 { .. } => "llama3",
        }
    }
}

/// Dynamic NTK's base at sequence length `s = max(seq_len, L)`:
/// `base · (factor·s/L − (factor − 1))^(dim/(dim−2))` (equal to `base` for s ≤ L).
pub fn dynamic_base(base: f64, factor: f64, l: u64, seq_len: Option<u64>, dim: usize) -> f64 {
    let l = l as f64;
    let s = seq_len.map_or(l, |s| (s as f64).max(l));
    let d = dim as f64;
    base * ((factor * s / l) - (factor - 1.0)).powf(d / (d - 2.0))
}

/// YaRN's `get_mscale(s, m) = 1 if s ≤ 1 else 0.1·m·ln(s) + 1` (also DeepSeek's `yarn_get_mscale`).
pub fn yarn_get_mscale(scale: f64, mscale: f64) -> f64 {
    if scale <= 1.0 {
        1.0
    } else {
        0.1 * mscale * scale.ln() + 1.0
    }
}

fn check_factor(key: &str, v: f64, min: f64) -> Result<()> {
    if !(v.is_finite() && v >= min) {
        return Err(Error::invalid(
            format!("rope parameter {key}"),
            v,
            format!("a finite number ≥ {min}"),
        ));
    }
    Ok(())
}

/// `pow` as torch computes it on float32 tensors (within 1 ulp): in f64, rounded once to `T`.
/// For `T = f64` this is the plain power.
fn pw<T: Real>(b: T, e: T) -> T {
    T::from_f64(b.to_f64().powf(e.to_f64()))
}

fn c<T: Real>(x: f64) -> T {
    T::from_f64(x)
}

/// `base ** (arange(0, dim, 2) / dim)` in `T`.
fn pos_freqs<T: Real>(base: f64, dim: usize) -> Vec<T> {
    (0..dim / 2)
        .map(|k| pw(c::<T>(base), c::<T>((2 * k) as f64) / c::<T>(dim as f64)))
        .collect()
}

/// The per-type inverse frequencies in `T` (see the module doc for the op-by-op rules).
fn inv_freq_in<T: Real>(
    base: f64,
    dim: usize,
    scaling: &RopeScaling,
    seq_len: Option<u64>,
) -> Vec<T> {
    let one = T::one();
    match scaling {
        RopeScaling::Default => pos_freqs::<T>(base, dim)
            .into_iter()
            .map(|p| one / p)
            .collect(),
        RopeScaling::Linear { factor } => pos_freqs::<T>(base, dim)
            .into_iter()
            .map(|p| one / p / c::<T>(*factor))
            .collect(),
        RopeScaling::Dynamic {
            factor,
            max_position_embeddings,
        } => {
            let new_base = dynamic_base(base, *factor, *max_position_embeddings, seq_len, dim);
            pos_freqs::<T>(new_base, dim)
                .into_iter()
                .map(|p| one / p)
                .collect()
        }
        RopeScaling::Yarn {
            factor,
            original_max_position_embeddings,
            beta_fast,
            beta_slow,
            truncate,
            ..
        } => {
            let (low, high) = yarn_correction_range(
                *beta_fast,
                *beta_slow,
                dim,
                base,
                *original_max_position_embeddings as f64,
                *truncate,
            );
            let high = if low == high { high + 0.001 } else { high };
            let p = pos_freqs::<T>(base, dim);
            p.into_iter()
                .enumerate()
                .map(|(j, p)| {
                    let extrapolation = one / p;
                    let interpolation = one / (c::<T>(*factor) * p);
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
        RopeScaling::Longrope {
            short_factor,
            long_factor,
            original_max_position_embeddings,
            ..
        } => {
            let ext = match seq_len {
                Some(s) if s > *original_max_position_embeddings => long_factor,
                _ => short_factor,
            };
            pos_freqs::<T>(base, dim)
                .into_iter()
                .zip(ext)
                .map(|(p, &e)| one / (c::<T>(e) * p))
                .collect()
        }
        RopeScaling::Llama3 {
            factor,
            low_freq_factor,
            high_freq_factor,
            original_max_position_embeddings,
        } => {
            let old = *original_max_position_embeddings as f64;
            let low_wl = old / low_freq_factor;
            let high_wl = old / high_freq_factor;
            let f = c::<T>(*factor);
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
                    let smooth = (one / wavelen * c::<T>(old) - c::<T>(*low_freq_factor))
                        / c::<T>(high_freq_factor - low_freq_factor);
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

/// The cos/sin attention factor of each type (a Python float in transformers):
/// yarn — the explicit value, else `get_mscale(factor, mscale)/get_mscale(factor, mscale_all_dim)`
/// when both are non-zero, else `get_mscale(factor)`; longrope — the explicit value, else
/// `1` if factor ≤ 1, else `√(1 + ln(factor)/ln(original))`; all others 1.
pub fn attention_factor(scaling: &RopeScaling) -> f64 {
    match scaling {
        RopeScaling::Yarn {
            factor,
            attention_factor,
            mscale,
            mscale_all_dim,
            ..
        } => match (attention_factor, mscale, mscale_all_dim) {
            (Some(a), _, _) => *a,
            (None, Some(m), Some(md)) if *m != 0.0 && *md != 0.0 => {
                yarn_get_mscale(*factor, *m) / yarn_get_mscale(*factor, *md)
            }
            _ => yarn_get_mscale(*factor, 1.0),
        },
        RopeScaling::Longrope {
            factor,
            original_max_position_embeddings,
            attention_factor,
            ..
        } => match attention_factor {
            Some(a) => *a,
            None if *factor <= 1.0 => 1.0,
            None => (1.0 + factor.ln() / (*original_max_position_embeddings as f64).ln()).sqrt(),
        },
        _ => 1.0,
    }
}

impl RotaryFrequencies {
    /// The frequencies a Hugging Face rope type computes for rotary dimension `rotary_dim` of a
    /// head of `head_dim` columns, at initialisation (`seq_len = None`) or for a sequence length
    /// (dynamic NTK, LongRoPE's long factors): `inv_freq` in f64, `inv_freq_f32` as torch
    /// computes it in float32, and the attention factor. See [`RopeScaling`] for the formulas.
    ///
    /// ```
    /// use attnlab_core::position::frequencies::{RopeScaling, RotaryFrequencies};
    /// let f = RotaryFrequencies::from_scaling(10000.0, 128, 128, &RopeScaling::Linear { factor: 4.0 }, None).unwrap();
    /// assert_eq!(f.inv_freq[0], 0.25);
    /// assert!((f.inv_freq[1] - 10000f64.powf(-2.0 / 128.0) / 4.0).abs() < 1e-16);
    /// ```
    ///
    /// # Errors
    /// base ≤ 1 or non-finite; rotary dimension odd, < 2 (< 4 for dynamic) or > head_dim; a
    /// factor < 1 for linear/dynamic/yarn/llama3; LongRoPE factor lists whose length is not
    /// `rotary_dim/2` or with non-positive entries; llama3 with `high_freq_factor ≤ low_freq_factor`;
    /// an original context of 0.
    pub fn from_scaling(
        base: f64,
        head_dim: usize,
        rotary_dim: usize,
        scaling: &RopeScaling,
        seq_len: Option<u64>,
    ) -> Result<Self> {
        if !(base.is_finite() && base > 1.0) {
            return Err(Error::invalid(
                "rope_theta (base)",
                base,
                "a finite number > 1 (e.g. 10000)",
            ));
        }
        super::check_rotary_dim(rotary_dim)?;
        super::check_head_dim(head_dim)?;
        if rotary_dim > head_dim {
            return Err(Error::invalid(
                "rotary dimension",
                rotary_dim,
                format!("at most the head dimension {head_dim}"),
            ));
        }
        let half = rotary_dim / 2;
        match scaling {
            RopeScaling::Default => {}
            RopeScaling::Linear { factor } => check_factor("factor", *factor, 1.0)?,
            RopeScaling::Dynamic {
                factor,
                max_position_embeddings,
            } => {
                check_factor("factor", *factor, 1.0)?;
                if rotary_dim < 4 {
                    return Err(Error::invalid(
                        "rotary dimension",
                        rotary_dim,
                        "≥ 4 for dynamic scaling (the exponent is dim/(dim−2))",
                    ));
                }
                if *max_position_embeddings == 0 {
                    return Err(Error::invalid(
                        "max_position_embeddings",
                        0,
                        "a positive context length",
                    ));
                }
            }
            RopeScaling::Yarn {
                factor,
                original_max_position_embeddings,
                attention_factor,
                beta_fast,
                beta_slow,
                ..
            } => {
                check_factor("factor", *factor, 1.0)?;
                if *original_max_position_embeddings == 0 {
                    return Err(Error::invalid(
                        "original_max_position_embeddings",
                        0,
                        "a positive context length",
                    ));
                }
                if let Some(a) = attention_factor {
                    check_factor("attention_factor", *a, 0.0)?;
                }
                for (k, v) in [("beta_fast", beta_fast), ("beta_slow", beta_slow)] {
                    if !(v.is_finite() && *v > 0.0) {
                        return Err(Error::invalid(
                            format!("rope parameter {k}"),
                            v,
                            "a finite number > 0",
                        ));
                    }
                }
            }
            RopeScaling::Longrope {
                short_factor,
                long_factor,
                factor,
                original_max_position_embeddings,
                attention_factor,
            } => {
                for (key, list) in [("short_factor", short_factor), ("long_factor", long_factor)] {
                    if list.len() != half {
                        return Err(Error::invalid(
                            format!("rope parameter {key}"),
                            format!("a list of {} numbers", list.len()),
                            format!(
                                "{half} numbers, one per plane (rotary dimension {rotary_dim} / 2)"
                            ),
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
                check_factor("factor", *factor, 0.0)?;
                if *original_max_position_embeddings < 2 {
                    return Err(Error::invalid(
                        "original_max_position_embeddings",
                        original_max_position_embeddings,
                        "a context length ≥ 2",
                    ));
                }
                if let Some(a) = attention_factor {
                    check_factor("attention_factor", *a, 0.0)?;
                }
            }
            RopeScaling::Llama3 {
                factor,
                low_freq_factor,
                high_freq_factor,
                original_max_position_embeddings,
            } => {
                check_factor("factor", *factor, 1.0)?;
                check_factor("low_freq_factor", *low_freq_factor, f64::MIN_POSITIVE)?;
                if !(high_freq_factor.is_finite() && high_freq_factor > low_freq_factor) {
                    return Err(Error::invalid(
                        "rope parameter high_freq_factor",
                        high_freq_factor,
                        format!("a finite number > low_freq_factor ({low_freq_factor})"),
                    ));
                }
                if *original_max_position_embeddings == 0 {
                    return Err(Error::invalid(
                        "original_max_position_embeddings",
                        0,
                        "a positive context length",
                    ));
                }
            }
        }
        let inv_freq = inv_freq_in::<f64>(base, rotary_dim, scaling, seq_len);
        let inv_freq_f32 = inv_freq_in::<f32>(base, rotary_dim, scaling, seq_len);
        Ok(RotaryFrequencies {
            inv_freq,
            inv_freq_f32,
            attention_factor: attention_factor(scaling),
            rotary_dim,
            head_dim,
            base: Some(base),
            effective_base: Some(match scaling {
                RopeScaling::Dynamic {
                    factor,
                    max_position_embeddings,
                } => dynamic_base(base, *factor, *max_position_embeddings, seq_len, rotary_dim),
                _ => base,
            }),
            context: None,
            source: format!(
                "{} rope, base {}, rotary dim {rotary_dim} of {head_dim}",
                scaling.name(),
                super::short_number(base)
            ),
            rope_type: scaling.name().into(),
            softmax_scale_multiplier: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yarn(truncate: bool) -> RopeScaling {
        RopeScaling::Yarn {
            factor: 32.0,
            original_max_position_embeddings: 4096,
            attention_factor: None,
            mscale: None,
            mscale_all_dim: None,
            beta_fast: 32.0,
            beta_slow: 1.0,
            truncate,
        }
    }

    #[test]
    fn default_equals_from_base() {
        // Same formula, written as 1/base^(2k/d) here and base^(−2k/d) there: ≤ 2 ulp apart.
        let a =
            RotaryFrequencies::from_scaling(10000.0, 64, 64, &RopeScaling::Default, None).unwrap();
        let b = RotaryFrequencies::from_base(10000.0, 64).unwrap();
        for (x, y) in a.inv_freq.iter().zip(&b.inv_freq) {
            assert!(f64::ulps_between(*x, *y) <= 2, "{x} {y}");
        }
        assert_eq!(a.inv_freq_f32, b.inv_freq_f32);
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

    #[test]
    fn dynamic_is_default_at_init_and_stretches_the_base_beyond() {
        let s = RopeScaling::Dynamic {
            factor: 2.0,
            max_position_embeddings: 4096,
        };
        let init = RotaryFrequencies::from_scaling(10000.0, 64, 64, &s, None).unwrap();
        let short = RotaryFrequencies::from_scaling(10000.0, 64, 64, &s, Some(100)).unwrap();
        let default =
            RotaryFrequencies::from_scaling(10000.0, 64, 64, &RopeScaling::Default, None).unwrap();
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

    #[test]
    fn llama3_bands() {
        let s = RopeScaling::Llama3 {
            factor: 8.0,
            low_freq_factor: 1.0,
            high_freq_factor: 4.0,
            original_max_position_embeddings: 8192,
        };
        let f = RotaryFrequencies::from_scaling(500000.0, 128, 128, &s, None).unwrap();
        let d = RotaryFrequencies::from_scaling(500000.0, 128, 128, &RopeScaling::Default, None)
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

    #[test]
    fn longrope_switches_sets_after_the_original_context() {
        let s = RopeScaling::Longrope {
            short_factor: vec![1.0, 2.0],
            long_factor: vec![4.0, 8.0],
            factor: 32.0,
            original_max_position_embeddings: 4096,
            attention_factor: None,
        };
        let at = |n| RotaryFrequencies::from_scaling(10000.0, 4, 4, &s, n).unwrap();
        assert_eq!(at(None).inv_freq, vec![1.0, 0.01 / 2.0]);
        assert_eq!(at(Some(4096)).inv_freq, at(None).inv_freq);
        assert_eq!(at(Some(4097)).inv_freq, vec![0.25, 0.01 / 8.0]);
        assert_eq!(
            at(None).attention_factor,
            (1.0 + 32f64.ln() / 4096f64.ln()).sqrt()
        );
    }

    #[test]
    fn bad_parameters_are_rejected_with_the_key() {
        let e = |b: f64, r: usize, s: &RopeScaling| {
            RotaryFrequencies::from_scaling(b, 64, r, s, None)
                .unwrap_err()
                .to_string()
        };
        assert!(e(1.0, 64, &RopeScaling::Default).contains("rope_theta"));
        assert!(e(10000.0, 63, &RopeScaling::Default).contains("63"));
        assert!(e(10000.0, 66, &RopeScaling::Default).contains("head dimension 64"));
        assert!(e(10000.0, 64, &RopeScaling::Linear { factor: 0.5 }).contains("factor"));
        let bad = RopeScaling::Longrope {
            short_factor: vec![1.0; 3],
            long_factor: vec![1.0; 32],
            factor: 2.0,
            original_max_position_embeddings: 4096,
            attention_factor: None,
        };
        let m = e(10000.0, 64, &bad);
        assert!(
            m.contains("short_factor") && m.contains("32 numbers"),
            "{m}"
        );
    }
}
