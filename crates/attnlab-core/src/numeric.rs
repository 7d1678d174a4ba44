//! Floating-point types the library computes in, and the precisions it emulates.
//!
//! [`Real`] is implemented for `f32` and `f64`, the two types a layer can run in. [`Dtype`] names
//! the four precisions the rotary audit reasons about (`f64`, `f32`, `bf16`, `f16`); the two half
//! precisions are emulated exactly with the `half` crate (round to nearest, ties to even).

use std::fmt::{Debug, Display};

use ndarray::LinalgScalar;

use crate::choice::Choice;

/// A real floating-point scalar a layer can be evaluated in (`f32` or `f64`).
///
/// Arithmetic goes through [`LinalgScalar`], so matrix products of `f32`/`f64` arrays take
/// ndarray's GEMM path (`matrixmultiply`'s `sgemm`/`dgemm`).
///
/// Every `Real` has the fused attention kernel's element operations (the sealed supertrait
/// `float::Float`: FMA, the vectorised exponential, the micro-kernel), so generic
/// code runs the kernel in its own type without a type test.
pub trait Real:
    LinalgScalar
    + PartialOrd
    + Debug
    + Display
    + Send
    + Sync
    + std::ops::Neg<Output = Self>
    + 'static
    + crate::float::Float
{
    /// Unit roundoff times two: the gap between 1 and the next representable number.
    const EPSILON: Self;
    /// The dtype's name as the CLI spells it.
    const NAME: &'static str;
    /// The dtype as a value.
    const DTYPE: Dtype;
    /// Converts from `f64`, rounding to nearest.
    fn from_f64(x: f64) -> Self;
    /// Converts to `f64` exactly.
    fn to_f64(self) -> f64;
    /// `e^x`.
    fn exp(self) -> Self;
    /// `√x`.
    fn sqrt(self) -> Self;
    /// `tanh x`.
    fn tanh(self) -> Self;
    /// `|x|`.
    fn abs(self) -> Self;
    /// Whether `x` is neither infinite nor NaN.
    fn is_finite(self) -> bool;
    /// Distance in units in the last place between two values of this type
    /// (0 for equal values, including `+0` vs `-0`).
    fn ulps_between(a: Self, b: Self) -> u64;
}

macro_rules! impl_real {
    ($t:ty, $name:expr, $dtype:expr, $bits:ty, $signed:ty) => {
        impl Real for $t {
            const EPSILON: Self = <$t>::EPSILON;
            const NAME: &'static str = $name;
            const DTYPE: Dtype = $dtype;
            #[inline]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            #[inline]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline]
            fn tanh(self) -> Self {
                <$t>::tanh(self)
            }
            #[inline]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            fn ulps_between(a: Self, b: Self) -> u64 {
                if a == b {
                    return 0;
                }
                if a.is_nan() || b.is_nan() {
                    return u64::MAX;
                }
                // Map the sign-magnitude bit patterns onto a monotone integer line.
                fn key(x: $t) -> i128 {
                    let bits = x.to_bits() as $signed;
                    if bits < 0 {
                        (<$signed>::MIN as i128) - (bits as i128)
                    } else {
                        bits as i128
                    }
                }
                (key(a) - key(b)).unsigned_abs().min(u64::MAX as u128) as u64
            }
        }
    };
}

impl_real!(f32, "f32", Dtype::F32, u32, i32);
impl_real!(f64, "f64", Dtype::F64, u64, i64);

/// An error naming the first non-finite entry of `a` (`what[i, j]`), if it has one: inputs with
/// NaN or inf make every comparison and every product meaningless.
///
/// ```
/// use ndarray::array;
/// let a = array![[1.0, f64::NAN]];
/// let e = attnlab_core::numeric::require_finite("X", a.view()).unwrap_err();
/// assert_eq!(e.to_string(), "invalid X[0, 1]: NaN; expected finite entries (no NaN or inf)");
/// ```
///
/// # Errors
/// A NaN or infinite entry.
pub fn require_finite<T: Real>(what: &str, a: ndarray::ArrayView2<T>) -> crate::Result<()> {
    match a.indexed_iter().find(|(_, v)| !v.is_finite()) {
        Some(((i, j), v)) => Err(crate::Error::invalid(
            format!("{what}[{i}, {j}]"),
            crate::number::short(v.to_f64()),
            "finite entries (no NaN or inf)",
        )),
        None => Ok(()),
    }
}

/// A floating-point precision: the two a layer runs in, and the two half precisions that real
/// rotary caches are cast to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    /// IEEE binary64, 53-bit significand.
    F64,
    /// IEEE binary32, 24-bit significand.
    F32,
    /// bfloat16: binary32's exponent range with an 8-bit significand.
    Bf16,
    /// IEEE binary16, 11-bit significand, largest finite value 65504.
    F16,
}

impl Dtype {
    /// All four, widest first.
    pub const ALL: [Dtype; 4] = [Dtype::F64, Dtype::F32, Dtype::Bf16, Dtype::F16];

    /// The name as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F64 => "f64",
            Dtype::F32 => "f32",
            Dtype::Bf16 => "bf16",
            Dtype::F16 => "f16",
        }
    }

    /// The one refusal of a non-finite result in this precision, so that every command says the
    /// same thing about the same overflow: `{what} in {dtype} is not finite (inf or NaN); the
    /// inputs overflow {dtype}: …`.
    ///
    /// ```
    /// let e = attnlab_core::Dtype::F32.overflow("the layer's output");
    /// assert_eq!(e.kind(), attnlab_core::ErrorKind::NonFinite);
    /// assert!(e.to_string().contains("--dtype f64"));
    /// ```
    pub fn overflow(self, what: impl Display) -> crate::Error {
        let wider = if self == Dtype::F64 {
            ""
        } else {
            ", or use --dtype f64"
        };
        crate::Error::non_finite(
            format!("{what} in {self}"),
            format!(
                "the inputs overflow {self}: use a smaller --index-scale or smaller block values{wider}"
            ),
        )
    }

    /// Machine epsilon: the gap between 1 and the next representable value, `2^(1-p)` for a
    /// `p`-bit significand.
    pub fn eps(self) -> f64 {
        match self {
            Dtype::F64 => f64::EPSILON,
            Dtype::F32 => f32::EPSILON as f64,
            Dtype::Bf16 => 2f64.powi(-7),
            Dtype::F16 => 2f64.powi(-10),
        }
    }

    /// Rounds an `f64` to the nearest value of this precision (ties to even) and returns it as
    /// `f64`. Values beyond the largest finite number become `±inf` (f16 past 65519.99…).
    pub fn round(self, x: f64) -> f64 {
        match self {
            Dtype::F64 => x,
            Dtype::F32 => x as f32 as f64,
            Dtype::Bf16 => half::bf16::from_f64(x).to_f64(),
            Dtype::F16 => half::f16::from_f64(x).to_f64(),
        }
    }

    /// Rounds an `f32` to this precision (for pipelines whose intermediate values are `f32`).
    pub fn round_f32(self, x: f32) -> f64 {
        match self {
            Dtype::F64 | Dtype::F32 => x as f64,
            Dtype::Bf16 => half::bf16::from_f32(x).to_f64(),
            Dtype::F16 => half::f16::from_f32(x).to_f64(),
        }
    }

    /// Parses `f64`, `f32`, `bf16` or `f16` (or an alias: `float32`, `bfloat16`, `fp16`,
    /// `half`, …; case-insensitive).
    ///
    /// # Errors
    /// Anything else, with the accepted names.
    pub fn parse(s: &str) -> crate::Result<Dtype> {
        <Dtype as Choice>::parse(s)
    }

    /// The dtype a layer can run in: `f64` or `f32`.
    ///
    /// # Errors
    /// `bf16` and `f16` (only the rotary pipelines emulate those).
    pub fn require_layer(self) -> crate::Result<Dtype> {
        match self {
            Dtype::F64 | Dtype::F32 => Ok(self),
            _ => Err(crate::Error::invalid(
                "dtype",
                self,
                "f64 or f32 for a layer (bf16 and f16 are audited by the rope commands)",
            )),
        }
    }
}

impl Choice for Dtype {
    const WHAT: &'static str = "dtype";
    const ALL: &'static [Self] = &Dtype::ALL;

    fn name(self) -> &'static str {
        Dtype::name(self)
    }

    fn aliases(self) -> &'static [&'static str] {
        match self {
            Dtype::F64 => &["float64", "double", "fp64"],
            Dtype::F32 => &["float32", "float", "fp32"],
            Dtype::Bf16 => &["bfloat16"],
            Dtype::F16 => &["float16", "half", "fp16"],
        }
    }
}

impl<'de> serde::Deserialize<'de> for Dtype {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Dtype::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ulps_count_representable_steps() {
        assert_eq!(f32::ulps_between(1.0, 1.0 + f32::EPSILON), 1);
        assert_eq!(f64::ulps_between(1.0, 1.0 + 2.0 * f64::EPSILON), 2);
        assert_eq!(f64::ulps_between(0.0, -0.0), 0);
        // Across zero: the smallest subnormals on either side are two steps apart.
        let tiny = f32::from_bits(1);
        assert_eq!(f32::ulps_between(tiny, -tiny), 2);
    }

    #[test]
    fn half_precisions_round_integers_as_documented() {
        // bf16 has an 8-bit significand: every integer up to 256 is exact, 257 rounds to 256 (tie to even).
        assert_eq!(Dtype::Bf16.round(256.0), 256.0);
        assert_eq!(Dtype::Bf16.round(257.0), 256.0);
        // f16: exact to 2048, 2049 -> 2048; 65504 is the largest finite value, 65520 overflows.
        assert_eq!(Dtype::F16.round(2049.0), 2048.0);
        assert_eq!(Dtype::F16.round(65504.0), 65504.0);
        assert!(Dtype::F16.round(65520.0).is_infinite());
        assert_eq!(Dtype::Bf16.eps(), 0.0078125);
    }

    #[test]
    fn dtype_parse_rejects_unknown_names() {
        assert_eq!(Dtype::parse("BF16").unwrap(), Dtype::Bf16);
        let e = Dtype::parse("f8").unwrap_err().to_string();
        assert!(e.contains("f8") && e.contains("bf16"), "{e}");
    }
}
