//! The Hugging Face rope types (transformers 5.x `ROPE_INIT_FUNCTIONS` and the per-model
//! `compute_default_rope_parameters`), one module per type holding its parameters, how a
//! `config.json` fills them in (keys, class defaults, validation) and its formula:
//! [`default`], [`linear`], [`dynamic`], [`yarn`], [`longrope`], [`llama3`]. The enum
//! [`RopeScaling`] (with [`RopeType`], the same set without parameters) lists them; adding a type
//! is one module and one line of the `rope_types!` list below.
//!
//! Each formula is evaluated twice:
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
//! Symbols: `base` = `rope_theta`, `dim` = rotary dimension, `k = 0..dim/2`.

pub mod default;
pub mod dynamic;
pub mod linear;
pub mod llama3;
pub mod longrope;
pub mod mrope;
pub(crate) mod params;
pub mod proportional;
pub mod yarn;

use serde::Serialize;

pub use default::Unscaled;
pub use dynamic::{dynamic_base, Dynamic};
pub use linear::Linear;
pub use llama3::Llama3;
pub use longrope::Longrope;
pub use mrope::Mrope;
pub use proportional::Proportional;
pub use yarn::{yarn_correction_range, yarn_get_mscale, Yarn};

use super::RotaryFrequencies;
use crate::{Error, Real, Result};
use params::ConfigView;

/// What every rope type provides: its Hugging Face name, how a config fills its parameters,
/// their validation, the frequencies and the cos/sin attention factor. No method has a default:
/// a new type states each of them.
pub(crate) trait RopeKind: Sized {
    /// The type's name as Hugging Face spells it (`rope_type`).
    const NAME: &'static str;
    /// Legacy names read as this type (`su` for longrope).
    const ALIASES: &'static [&'static str];
    /// Whether the type changes the default frequencies b^(−2k/d) (false for the default rope
    /// and for M-RoPE, which only splits them into position axes): a scaled type has effective
    /// frequencies, scaling bands and a drift against the unscaled rotation.
    const SCALES: bool;
    /// The parameters from a config's rope parameters (keys, class defaults, notes).
    fn from_config(view: &mut ConfigView) -> Result<Self>;
    /// Validates the parameters for a rotary dimension.
    fn check(&self, rotary_dim: usize) -> Result<()>;
    /// `inv_freq` in `T` (f64: the formula as written; f32: torch's float32 operations).
    fn inv_freq<T: Real>(&self, base: f64, dim: usize, seq_len: Option<u64>) -> Vec<T>;
    /// The factor multiplying cos and sin (1 unless the type sets one).
    fn attention_factor(&self) -> f64 {
        1.0
    }
    /// The base the default formula is effectively evaluated with (dynamic NTK stretches it;
    /// every other type keeps `base`).
    fn effective_base(&self, base: f64, _dim: usize, _seq_len: Option<u64>) -> f64 {
        base
    }
    /// What the type does to each plane, and YaRN's ramp.
    fn regimes(&self, base: f64, dim: usize, seq_len: Option<u64>) -> Regimes;
    /// The pre-training context and the length the scaling is meant for (factor × original),
    /// for the types that state them (none by default).
    fn contexts(&self) -> (Option<u64>, Option<u64>) {
        (None, None)
    }
    /// The first sequence length whose frequencies differ from the initial ones (LongRoPE's
    /// switch to the long factors; dynamic NTK's stretch), if the type has one (none by
    /// default).
    fn switch_at(&self) -> Option<u64> {
        None
    }
    /// Whether ω_k(b) = c_k·b^(−2k/dim) for constants c_k (≥ 0) independent of the base b: true
    /// for every type that only divides the default frequencies (or stretches the base by a
    /// constant), false where the division depends on the base (llama3's bands, YaRN's ramp).
    fn power_law(&self) -> bool;
}

crate::choice! {
    /// What a rope type does to one plane's frequency.
    pub enum Regime("plane regime") {
        /// The default frequency (no scaling).
        Unscaled = "unscaled",
        /// Kept at its default frequency by a scaling type (llama3's short wavelengths, YaRN's
        /// extrapolated planes).
        Kept = "kept",
        /// Between kept and divided (llama3's blend band, YaRN's ramp).
        Blended = "blended",
        /// Divided by the full factor (linear, llama3's long wavelengths, YaRN's interpolated
        /// planes).
        Divided = "divided",
        /// Divided by a per-plane factor (LongRoPE).
        Rescaled = "rescaled",
        /// Evaluated with a stretched base (dynamic NTK beyond its context).
        Stretched = "stretched",
        /// Not rotated (ω = 0: proportional rope's NoPE planes).
        NotRotated = "not_rotated",
    }
}

/// Per-plane regimes of a rope type and, for YaRN, its ramp in plane-index units.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Regimes {
    /// One regime per plane.
    pub planes: Vec<Regime>,
    /// YaRN: the ramp runs from plane `low` (kept up to here) to plane `high` (divided from here).
    pub ramp: Option<(f64, f64)>,
}

impl Regimes {
    /// Every plane in one regime.
    pub fn all(regime: Regime, dim: usize) -> Regimes {
        Regimes {
            planes: vec![regime; dim / 2],
            ramp: None,
        }
    }
}

/// `pow` as torch computes it on float32 tensors (within 1 ulp): in f64, rounded once to `T`.
/// For `T = f64` this is the plain power.
fn pw<T: Real>(b: T, e: T) -> T {
    T::from_f64(b.to_f64().powf(e.to_f64()))
}

/// A Python scalar as torch uses it with a `T` tensor (rounded to `T`).
fn c<T: Real>(x: f64) -> T {
    T::from_f64(x)
}

/// `base ** (arange(0, dim, 2) / dim)` in `T`.
fn pos_freqs<T: Real>(base: f64, dim: usize) -> Vec<T> {
    (0..dim / 2)
        .map(|k| pw(c::<T>(base), c::<T>((2 * k) as f64) / c::<T>(dim as f64)))
        .collect()
}

macro_rules! rope_types {
    ($( $(#[$meta:meta])* $variant:ident($ty:ident) ),+ $(,)?) => {
        /// A rope type with its parameters, defaults already applied (see `crate::config` for
        /// how a `config.json` fills them in).
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[serde(tag = "rope_type", rename_all = "snake_case")]
        pub enum RopeScaling {
            $( $(#[$meta])* $variant($ty) ),+
        }

        /// The rope types without their parameters (serde names = Hugging Face's).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
        #[serde(rename_all = "snake_case")]
        pub enum RopeType {
            $( $(#[$meta])* $variant ),+
        }

        impl RopeType {
            /// Every type, in the order messages list them.
            pub const ALL: &'static [RopeType] = &[$(RopeType::$variant),+];

            /// The type's name as Hugging Face spells it.
            pub fn name(self) -> &'static str {
                match self {
                    $(RopeType::$variant => <$ty as RopeKind>::NAME),+
                }
            }

            /// Whether the type changes the default frequencies ([`RopeKind::SCALES`]).
            pub fn scales(self) -> bool {
                match self {
                    $(RopeType::$variant => <$ty as RopeKind>::SCALES),+
                }
            }

            /// Legacy names read as this type.
            pub fn aliases(self) -> &'static [&'static str] {
                match self {
                    $(RopeType::$variant => <$ty as RopeKind>::ALIASES),+
                }
            }
        }

        impl RopeScaling {
            /// The type without its parameters.
            pub fn rope_type(&self) -> RopeType {
                match self {
                    $(RopeScaling::$variant(_) => RopeType::$variant),+
                }
            }

            /// Reads the parameters of type `t` from a config.
            pub(crate) fn from_config(t: RopeType, view: &mut ConfigView) -> Result<Self> {
                match t {
                    $(RopeType::$variant => <$ty as RopeKind>::from_config(view).map(RopeScaling::$variant)),+
                }
            }

            fn check(&self, rotary_dim: usize) -> Result<()> {
                match self {
                    $(RopeScaling::$variant(p) => p.check(rotary_dim)),+
                }
            }

            fn inv_freq<T: Real>(&self, base: f64, dim: usize, seq_len: Option<u64>) -> Vec<T> {
                match self {
                    $(RopeScaling::$variant(p) => p.inv_freq::<T>(base, dim, seq_len)),+
                }
            }

            /// The cos/sin attention factor (see each type's module).
            pub fn attention_factor(&self) -> f64 {
                match self {
                    $(RopeScaling::$variant(p) => p.attention_factor()),+
                }
            }

            /// The base the frequencies are evaluated with at `seq_len` (differs from `base`
            /// only for dynamic NTK beyond the original context).
            pub fn effective_base(&self, base: f64, dim: usize, seq_len: Option<u64>) -> f64 {
                match self {
                    $(RopeScaling::$variant(p) => p.effective_base(base, dim, seq_len)),+
                }
            }

            /// What the type does to each plane (see [`Regime`]) and YaRN's ramp.
            pub fn regimes(&self, base: f64, dim: usize, seq_len: Option<u64>) -> Regimes {
                match self {
                    $(RopeScaling::$variant(p) => p.regimes(base, dim, seq_len)),+
                }
            }

            /// (pre-training context, intended context = factor × original) where the type
            /// states them.
            pub fn contexts(&self) -> (Option<u64>, Option<u64>) {
                match self {
                    $(RopeScaling::$variant(p) => p.contexts()),+
                }
            }

            /// The first sequence length with different frequencies (LongRoPE, dynamic NTK).
            pub fn switch_at(&self) -> Option<u64> {
                match self {
                    $(RopeScaling::$variant(p) => p.switch_at()),+
                }
            }

            /// Whether ω_k(b) = c_k·b^(−2k/dim) with c_k independent of b.
            pub fn power_law(&self) -> bool {
                match self {
                    $(RopeScaling::$variant(p) => p.power_law()),+
                }
            }

            /// `inv_freq` in f64 for a base (the family the effective minimum base is searched
            /// over).
            pub fn inv_freq_f64(&self, base: f64, dim: usize, seq_len: Option<u64>) -> Vec<f64> {
                self.inv_freq::<f64>(base, dim, seq_len)
            }
        }
    };
}

rope_types! {
    /// `inv_freq[k] = 1 / base^(2k/dim)`, attention factor 1 ([`default`]).
    Default(Unscaled),
    /// Position interpolation: `inv_freq = default / factor` ([`linear`]).
    Linear(Linear),
    /// Dynamic NTK: the default formula with a base stretched beyond L ([`dynamic`]).
    Dynamic(Dynamic),
    /// YaRN: a per-plane ramp between original and interpolated frequencies ([`yarn`]).
    Yarn(Yarn),
    /// LongRoPE: per-plane factors, short and long sets ([`longrope`]).
    Longrope(Longrope),
    /// Llama 3.1: long wavelengths divided, short kept, blended between ([`llama3`]).
    Llama3(Llama3),
    /// Multimodal RoPE: the default frequencies split into position axes ([`mrope`]).
    Mrope(Mrope),
    /// Proportional: the first planes rotate with the whole head's exponent, the rest not at all
    /// ([`proportional`]).
    Proportional(Proportional),
}

impl RopeType {
    /// Parses a config's type name (`rope_type`, else the legacy `type`); a legacy alias is
    /// noted (`legacy rope type "su" is longrope`).
    ///
    /// ```
    /// use attnlab_core::position::frequencies::RopeType;
    /// let mut notes = Vec::new();
    /// assert_eq!(RopeType::from_config_name("su", &mut notes).unwrap(), RopeType::Longrope);
    /// assert_eq!(notes, ["legacy rope type \"su\" is longrope"]);
    /// let e = RopeType::from_config_name("ntk", &mut notes).unwrap_err().to_string();
    /// assert!(e.contains("\"ntk\"") && e.contains("longrope (or su)"), "{e}");
    /// ```
    ///
    /// # Errors
    /// An unknown name (the message names it and lists the known ones).
    pub fn from_config_name(name: &str, notes: &mut Vec<String>) -> Result<RopeType> {
        for &t in RopeType::ALL {
            if t.name() == name {
                return Ok(t);
            }
            if t.aliases().contains(&name) {
                notes.push(format!("legacy rope type {name:?} is {}", t.name()));
                return Ok(t);
            }
        }
        let accepted: Vec<String> = RopeType::ALL
            .iter()
            .map(|t| match t.aliases() {
                [] => t.name().to_string(),
                a => format!("{} (or {})", t.name(), a.join(", ")),
            })
            .collect();
        Err(Error::invalid(
            "rope type",
            format!("{name:?}"),
            format!("one of {}", accepted.join(", ")),
        ))
    }
}

impl std::fmt::Display for RopeType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl RopeScaling {
    /// The type's name as Hugging Face spells it.
    pub fn name(&self) -> &'static str {
        self.rope_type().name()
    }
}

/// The cos/sin attention factor of a rope type (a Python float in transformers): see
/// [`RopeScaling::attention_factor`].
pub fn attention_factor(scaling: &RopeScaling) -> f64 {
    scaling.attention_factor()
}

impl RotaryFrequencies {
    /// The frequencies a Hugging Face rope type computes for rotary dimension `rotary_dim` of a
    /// head of `head_dim` columns, at initialisation (`seq_len = None`) or for a sequence length
    /// (dynamic NTK, LongRoPE's long factors): `inv_freq` in f64, `inv_freq_f32` as torch
    /// computes it in float32, and the attention factor. See each type's module for its formula.
    ///
    /// ```
    /// use attnlab_core::position::frequencies::{Linear, RopeScaling, RotaryFrequencies};
    /// let s = RopeScaling::Linear(Linear { factor: 4.0 });
    /// let f = RotaryFrequencies::from_scaling(10000.0, 128, 128, &s, None).unwrap();
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
        scaling.check(rotary_dim)?;
        Ok(RotaryFrequencies {
            inv_freq: scaling.inv_freq::<f64>(base, rotary_dim, seq_len),
            inv_freq_f32: scaling.inv_freq::<f32>(base, rotary_dim, seq_len),
            attention_factor: scaling.attention_factor(),
            rotary_dim,
            head_dim,
            base: Some(base),
            effective_base: Some(scaling.effective_base(base, rotary_dim, seq_len)),
            context: None,
            source: format!(
                "{} rope, base {}, rotary dim {rotary_dim} of {head_dim}",
                scaling.name(),
                crate::number::short(base)
            ),
            rope_type: scaling.name().into(),
            softmax_scale_multiplier: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_equals_from_base() {
        // Same formula, written as 1/base^(2k/d) here and base^(−2k/d) there: ≤ 2 ulp apart.
        let a =
            RotaryFrequencies::from_scaling(10000.0, 64, 64, &RopeScaling::Default(Unscaled), None)
                .unwrap();
        let b = RotaryFrequencies::from_base(10000.0, 64).unwrap();
        for (x, y) in a.inv_freq.iter().zip(&b.inv_freq) {
            assert!(f64::ulps_between(*x, *y) <= 2, "{x} {y}");
        }
        assert_eq!(a.inv_freq_f32, b.inv_freq_f32);
    }

    #[test]
    fn every_type_has_one_name_and_serialises_with_it() {
        let names: Vec<&str> = RopeType::ALL.iter().map(|t| t.name()).collect();
        assert_eq!(
            names,
            [
                "default",
                "linear",
                "dynamic",
                "yarn",
                "longrope",
                "llama3",
                "mrope",
                "proportional"
            ]
        );
        for &t in RopeType::ALL {
            assert_eq!(serde_json::to_value(t).unwrap(), t.name());
            let mut notes = Vec::new();
            assert_eq!(RopeType::from_config_name(t.name(), &mut notes).unwrap(), t);
            assert!(notes.is_empty());
        }
        let s = serde_json::to_value(RopeScaling::Linear(Linear { factor: 2.0 })).unwrap();
        assert_eq!(s, serde_json::json!({"rope_type": "linear", "factor": 2.0}));
        let s = serde_json::to_value(RopeScaling::Default(Unscaled)).unwrap();
        assert_eq!(s, serde_json::json!({"rope_type": "default"}));
    }

    #[test]
    fn bad_parameters_are_rejected_with_the_key() {
        let e = |b: f64, r: usize, s: &RopeScaling| {
            RotaryFrequencies::from_scaling(b, 64, r, s, None)
                .unwrap_err()
                .to_string()
        };
        let d = RopeScaling::Default(Unscaled);
        assert!(e(1.0, 64, &d).contains("rope_theta"));
        assert!(e(10000.0, 63, &d).contains("63"));
        assert!(e(10000.0, 66, &d).contains("head dimension 64"));
        assert!(e(10000.0, 64, &RopeScaling::Linear(Linear { factor: 0.5 })).contains("factor"));
        let bad = RopeScaling::Longrope(Longrope {
            short_factor: vec![1.0; 3],
            long_factor: vec![1.0; 32],
            factor: 2.0,
            original_max_position_embeddings: 4096,
            attention_factor: None,
        });
        let m = e(10000.0, 64, &bad);
        assert!(
            m.contains("short_factor") && m.contains("32 numbers"),
            "{m}"
        );
    }
}
