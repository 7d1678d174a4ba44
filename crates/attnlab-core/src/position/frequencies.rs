//! Rotary frequency sets: explicit expressions, `base`/`dim`, and (see [`crate::config`]) the
//! Hugging Face `rope_scaling` types.
//!
//! A frequency ω is an angle per position step (radians). Frequencies that are rational
//! multiples of π — `pi/2`, `2*pi/7`, `pi*3/8` — are kept exact as [`Omega::PiRational`], so a
//! period can be stated exactly (ω = 2π·a/b in lowest terms repeats first at separation b).

use serde::Serialize;

use crate::{Error, Result};

pub mod scaling;
pub use crate::phase::reduce_angle;
pub use scaling::{
    attention_factor, yarn_correction_range, yarn_get_mscale, Dynamic, Linear, Llama3, Longrope,
    Mrope, Proportional, Regime, Regimes, RopeScaling, RopeType, Unscaled, Yarn,
};

/// One rotation frequency (radians per position).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Omega {
    /// ω = π · num / den exactly (den > 0, lowest terms, num ≠ 0).
    PiRational {
        /// Numerator of the multiple of π.
        num: i64,
        /// Denominator of the multiple of π.
        den: i64,
    },
    /// Any other finite, non-zero frequency.
    Float {
        /// The frequency in radians per position.
        value: f64,
    },
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a as i64
}

fn gcd128(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1) as i128
}

/// A finite decimal literal (`12`, `0.25`, `2.5e-3`, `1e9`, `-3`) as an exact fraction p/q
/// (q > 0) of i128s; `None` on overflow or anything else.
fn decimal_rational(text: &str) -> Option<(i128, i128)> {
    let (sign, text) = match text.strip_prefix('-') {
        Some(t) => (-1, t),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    let (mant, exp) = match text.find('e') {
        Some(i) => (&text[..i], text[i + 1..].parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut p: i128 = 0;
    for c in int.chars().chain(frac.chars()) {
        p = p.checked_mul(10)?.checked_add((c as u8 - b'0') as i128)?;
    }
    let e = exp.checked_sub(i32::try_from(frac.len()).ok()?)?;
    let ten = 10i128.checked_pow(e.unsigned_abs())?;
    let (p, q) = if e >= 0 {
        (p.checked_mul(ten)?, 1)
    } else {
        (p, ten)
    };
    let g = gcd128(p, q);
    Some((sign * (p / g), q / g))
}

/// Largest accepted |ω| (radians per position).
///
/// For integer positions a frequency only matters modulo 2π (ω and ω − 2πk rotate every
/// position identically), so larger frequencies alias to ω mod 2π and add nothing. The bound also
/// keeps the phase arithmetic accurate: with positions |m| ≤ [`MAX_POSITION`] = 2⁴⁰,
/// |m·ω/2π| ≤ 2⁴⁰·10⁴/2π ≈ 1.75·10¹⁵ < 2⁵¹, where [`crate::phase::turns_nearest`]
/// is accurate to ~10⁻¹⁶ turns.
pub const MAX_OMEGA: f64 = 1e4;

/// Smallest accepted non-zero |ω|: below it the wavelength 2π/ω would not be a finite binary64
/// number (2π/ω overflows for ω < 3.5·10⁻³⁰⁸); 10⁻³⁰⁰ is a round bound with room to spare.
pub const MIN_OMEGA: f64 = 1e-300;

/// Largest position (or separation) at which phases m·ω are evaluated: 2⁴⁰ ≈ 1.1·10¹². With
/// |ω| ≤ [`MAX_OMEGA`] this keeps |m·ω/2π| below 2⁵¹ (see there).
pub const MAX_POSITION: u64 = 1 << 40;

/// Largest rotary dimension accepted anywhere (16384 planes). Real models rotate at most a few
/// hundred dimensions per head; the cap keeps every per-plane table (frequencies, caches, score
/// rows) bounded, so a typo such as `--dim 1e8` is an error, not gigabytes of memory.
pub const MAX_ROTARY_DIM: usize = 32_768;

/// Checks a rotary dimension: even, ≥ 2, ≤ [`MAX_ROTARY_DIM`].
pub(crate) fn check_rotary_dim(dim: usize) -> Result<()> {
    if dim < 2 || !dim.is_multiple_of(2) || dim > MAX_ROTARY_DIM {
        return Err(Error::invalid(
            "rotary dimension",
            dim,
            format!(
                "an even number in 2..={MAX_ROTARY_DIM} (each plane rotates a pair of coordinates)"
            ),
        ));
    }
    Ok(())
}

/// Checks a head dimension: 1..=[`MAX_ROTARY_DIM`].
pub(crate) fn check_head_dim(dim: usize) -> Result<()> {
    if dim == 0 || dim > MAX_ROTARY_DIM {
        return Err(Error::invalid(
            "head dimension",
            dim,
            format!("a number of columns in 1..={MAX_ROTARY_DIM}"),
        ));
    }
    Ok(())
}

/// A bound in one-digit scientific notation (`1e4`).
fn sci1(x: f64) -> String {
    crate::number::format(x, crate::number::Style::Scientific(1))
}

fn check_range(value: f64, label: &str) -> Result<()> {
    let a = value.abs();
    if a > MAX_OMEGA {
        return Err(Error::invalid(
            "frequency",
            label,
            format!("|ω| ≤ {} rad/position: for integer positions a larger ω acts exactly like ω mod 2π, so give the reduced frequency instead", sci1(MAX_OMEGA)),
        ));
    }
    if a < MIN_OMEGA {
        return Err(Error::invalid(
            "frequency",
            label,
            format!(
                "|ω| ≥ {} rad/position (the wavelength 2π/ω must be finite)",
                sci1(MIN_OMEGA)
            ),
        ));
    }
    Ok(())
}

impl Omega {
    /// ω = π·num/den, reduced to lowest terms.
    ///
    /// # Errors
    /// `num == 0` or `den == 0` (ω must be non-zero and finite), or |ω| outside
    /// [[`MIN_OMEGA`], [`MAX_OMEGA`]].
    pub fn pi_rational(num: i64, den: i64) -> Result<Omega> {
        if num == 0 || den == 0 {
            return Err(Error::invalid(
                "frequency",
                format!("pi*{num}/{den}"),
                "a non-zero, finite angle per position",
            ));
        }
        let g = gcd(num, den);
        let s = if den < 0 { -1 } else { 1 };
        let w = Omega::PiRational {
            num: s * (num / g),
            den: s * (den / g),
        };
        check_range(w.value(), &w.label())?;
        Ok(w)
    }

    /// A float frequency, rejected when zero, non-finite, or |ω| outside
    /// [[`MIN_OMEGA`], [`MAX_OMEGA`]] (see there for why).
    pub fn float(value: f64) -> Result<Omega> {
        if value == 0.0 || !value.is_finite() {
            return Err(Error::invalid(
                "frequency",
                value,
                "a non-zero, finite angle per position",
            ));
        }
        check_range(value, &crate::number::short(value))?;
        Ok(Omega::Float { value })
    }

    /// The frequency in radians per position (rounded to `f64` for exact ones).
    pub fn value(self) -> f64 {
        match self {
            Omega::PiRational { num, den } => std::f64::consts::PI * num as f64 / den as f64,
            Omega::Float { value } => value,
        }
    }

    /// For ω = 2π·a/b in lowest terms (b > 0), returns `(a, b)`; `None` for float frequencies.
    /// The first separation s > 0 with s·ω ≡ 0 (mod 2π) is exactly `b`.
    pub fn turns_fraction(self) -> Option<(i64, i64)> {
        match self {
            Omega::PiRational { num, den } => {
                // π·num/den = 2π · num/(2·den)
                let (n, d) = (num, 2 * den);
                let g = gcd(n, d);
                Some((n / g, d / g))
            }
            Omega::Float { .. } => None,
        }
    }

    /// The phase s·ω reduced to [0, 2π), exact for [`Omega::PiRational`] (integer arithmetic
    /// before the single final rounding) and computed with an accurate reduction otherwise.
    pub fn phase(self, s: i64) -> f64 {
        match self.turns_fraction() {
            Some((a, b)) => {
                let r = ((s as i128 * a as i128).rem_euclid(b as i128)) as f64;
                std::f64::consts::TAU * r / b as f64
            }
            None => reduce_angle(s as f64, self.value()),
        }
    }

    /// cos(s·ω). For [`Omega::PiRational`] the phase is reduced exactly to `r/b` of a turn
    /// (integers), folded by exact symmetries to an angle φ ∈ [0, π/4] and evaluated as
    /// ±cos φ or ±sin φ — so the quarter-turn values 1, 0, −1 come out exact (cos(π/2) is 0, not
    /// 6.1e-17: the zero comes from sin 0, not from snapping). Other angles carry the usual
    /// f64 round-off (a few ulps). Float frequencies use [`reduce_angle`] and `f64::cos`.
    ///
    /// ```
    /// use attnlab_core::position::frequencies::Omega;
    /// let w = Omega::parse("pi/2").unwrap();
    /// let c: Vec<f64> = (0..5).map(|s| w.cos_at(s)).collect();
    /// assert_eq!(c, vec![1.0, 0.0, -1.0, 0.0, 1.0]);
    /// ```
    pub fn cos_at(self, s: i64) -> f64 {
        match self.turns_fraction() {
            Some((a, b)) => {
                let (a, b) = (a as i128, b as i128);
                let r = (s as i128 * a).rem_euclid(b); // phase = 2π·r/b, r ∈ [0, b)
                                                       // Quadrant q and position t within it: 2π·r/b = q·π/2 + (π/2)·t/b, t ∈ [0, b).
                let q = (4 * r) / b;
                let t = 4 * r - q * b;
                // φ = (π/2)·t/b; fold φ > π/4 to π/2 − φ' (cos ↔ sin) with exact integers.
                let (cos_phi, sin_phi) = if 2 * t > b {
                    let p = std::f64::consts::FRAC_PI_2 * (b - t) as f64 / b as f64;
                    (p.sin(), p.cos())
                } else {
                    let p = std::f64::consts::FRAC_PI_2 * t as f64 / b as f64;
                    (p.cos(), p.sin())
                };
                let v = match q {
                    0 => cos_phi,
                    1 => -sin_phi,
                    2 => -cos_phi,
                    _ => sin_phi,
                };
                v + 0.0 // −0 → +0
            }
            None => reduce_angle(s as f64, self.value()).cos(),
        }
    }

    /// Parses an expression: an optional sign, then a product/quotient of numbers and `pi` (also
    /// `π`), e.g. `pi/2`, `-pi/2`, `2*pi/7`, `0.25`, `pi*3/8`, `3pi/4`, `pi*0.5`, `pi/1e9`.
    /// Finite decimal literals (`0.25`, `1e9`, `2.5e-3`) are exact rationals, so a product with
    /// exactly one `pi` in the numerator gives an exact [`Omega::PiRational`] when numerator and
    /// denominator fit in i64 after reduction; anything else (`pi*pi`, `1/pi`, overflowing
    /// literals) is a float. A negative frequency rotates the other way.
    ///
    /// ```
    /// use attnlab_core::position::frequencies::Omega;
    /// assert_eq!(Omega::parse("pi/2").unwrap(), Omega::PiRational { num: 1, den: 2 });
    /// assert_eq!(Omega::parse("pi*0.5").unwrap(), Omega::PiRational { num: 1, den: 2 });
    /// assert_eq!(Omega::parse("-pi/2").unwrap(), Omega::PiRational { num: -1, den: 2 });
    /// assert_eq!(Omega::parse("2*pi/7").unwrap().turns_fraction(), Some((1, 7)));
    /// assert!(Omega::parse("0").is_err());
    /// ```
    ///
    /// # Errors
    /// Not such an expression (the message says why); a zero, non-finite or out-of-range value
    /// ([`MIN_OMEGA`] ≤ |ω| ≤ [`MAX_OMEGA`]).
    pub fn parse(text: &str) -> Result<Omega> {
        let bad = |why: &str| {
            Error::invalid(
                "frequency",
                format!("\"{}\" ({why})", crate::text::shorten(text)),
                "an expression like pi/2, 2*pi/7, 0.25 or pi*3/8",
            )
        };
        let s: String = text
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase()
            .replace('π', "pi");
        let (negative, s) = match s.strip_prefix('-') {
            Some(rest) => (true, rest.to_string()),
            None => (false, s.strip_prefix('+').unwrap_or(&s).to_string()),
        };
        if s.is_empty() {
            return Err(bad("empty expression"));
        }
        // Split into factors with their operator.
        let mut factors: Vec<(bool, String)> = Vec::new(); // (divide?, text)
        let mut cur = String::new();
        let mut divide = false;
        for c in s.chars() {
            if c == '*' || c == '/' {
                if cur.is_empty() {
                    return Err(bad(&format!("missing factor before {c:?}")));
                }
                factors.push((divide, std::mem::take(&mut cur)));
                divide = c == '/';
            } else {
                cur.push(c);
            }
        }
        if cur.is_empty() {
            return Err(bad("missing factor at the end"));
        }
        factors.push((divide, cur));
        let mut pi_power = 0i32;
        // Exact rational num/den while every literal is one and nothing overflows.
        let mut exact: Option<(i128, i128)> = Some((1, 1));
        let mut value = 1f64;
        for (div, f) in factors {
            // A factor is `pi`, a number, or a number glued to `pi` (3pi).
            let (coef, has_pi) = match f.strip_suffix("pi") {
                Some(c) => (c.to_string(), true),
                None => (f.clone(), false),
            };
            if has_pi {
                pi_power += if div { -1 } else { 1 };
                value = if div {
                    value / std::f64::consts::PI
                } else {
                    value * std::f64::consts::PI
                };
            }
            if coef.is_empty() {
                continue;
            }
            if !coef
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-'))
            {
                return Err(bad(&format!(
                    "{} is not a number or pi; only *, / and a leading sign are allowed",
                    factor_text(&coef)
                )));
            }
            let x: f64 = coef
                .parse()
                .map_err(|_| bad(&format!("{} is not a number", factor_text(&coef))))?;
            if !x.is_finite() {
                return Err(bad(&format!("{} is too large", factor_text(&coef))));
            }
            if x == 0.0 {
                return Err(bad(&format!(
                    "{} is zero; a frequency must be non-zero",
                    factor_text(&coef)
                )));
            }
            value = if div { value / x } else { value * x };
            exact = match (exact, decimal_rational(&coef)) {
                (Some((n, d)), Some((p, q))) => {
                    let (p, q) = if div { (q, p) } else { (p, q) };
                    n.checked_mul(p).zip(d.checked_mul(q)).map(|(n, d)| {
                        let g = gcd128(n, d);
                        (n / g, d / g)
                    })
                }
                _ => None,
            };
        }
        if negative {
            value = -value;
        }
        if value == 0.0 || !value.is_finite() {
            return Err(bad("the value is zero or not finite in binary64"));
        }
        if pi_power == 1 {
            if let Some((n, d)) = exact {
                let n = if negative { -n } else { n };
                if let (Ok(n), Ok(d)) = (i64::try_from(n), i64::try_from(d)) {
                    return Omega::pi_rational(n, d);
                }
            }
        }
        Omega::float(value)
    }

    /// A display form: `pi*3/8`, `pi/2`, or the float.
    pub fn label(self) -> String {
        match self {
            Omega::PiRational { num: 1, den: 1 } => "pi".into(),
            Omega::PiRational { num: -1, den: 1 } => "-pi".into(),
            Omega::PiRational { num: -1, den } => format!("-pi/{den}"),
            Omega::PiRational { num, den: 1 } => format!("{num}*pi"),
            Omega::PiRational { num: 1, den } => format!("pi/{den}"),
            Omega::PiRational { num, den } => format!("{num}*pi/{den}"),
            Omega::Float { value } => crate::number::short(value),
        }
    }
}

/// A factor of an expression for its error message: quoted when short; a long one is already
/// shown (shortened) as the expression.
fn factor_text(coef: &str) -> String {
    if coef.chars().count() <= 24 {
        format!("the factor \"{}\"", crate::text::shorten(coef))
    } else {
        "a factor".into()
    }
}

/// Parses a comma-separated list of frequency expressions (`pi/2,pi/3`).
///
/// # Errors
/// An empty list or an empty element (`pi/2,` or `pi/2,,pi/3`), or any element
/// [`Omega::parse`] rejects.
pub fn parse_omega_list(text: &str) -> Result<Vec<Omega>> {
    if text.trim().is_empty() {
        return Err(Error::invalid(
            "frequency list",
            format!("\"{}\"", crate::text::shorten(text)),
            "one or more expressions separated by commas, e.g. pi/2,pi/3",
        ));
    }
    let n = text.split(',').count();
    if n > MAX_ROTARY_DIM / 2 {
        return Err(Error::invalid(
            "frequency list",
            format!("{n} frequencies"),
            format!(
                "at most {} (one per plane, rotary dimension ≤ {MAX_ROTARY_DIM})",
                MAX_ROTARY_DIM / 2
            ),
        ));
    }
    text.split(',')
        .enumerate()
        .map(|(i, s)| {
            if s.trim().is_empty() {
                Err(Error::invalid(
                    "frequency list",
                    format!(
                        "\"{}\" (element {} is empty)",
                        crate::text::shorten(text),
                        i + 1
                    ),
                    "expressions separated by single commas, without a trailing comma, e.g. pi/2,pi/3",
                ))
            } else {
                Omega::parse(s)
            }
        })
        .collect()
}

/// The contexts a configuration states: what it was trained for and what its scaling is meant
/// to reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TrainedContext {
    /// `max_position_embeddings`.
    pub max_position_embeddings: Option<u64>,
    /// The pre-training context of a scaled type (`original_max_position_embeddings`).
    pub original: Option<u64>,
    /// factor × original for the scaled types that state both.
    pub intended: Option<u64>,
    /// The length the configuration is meant for: the larger of `max_position_embeddings` and
    /// `intended`.
    pub limit: Option<u64>,
}

/// The frequencies of a rotary configuration, as a model implementation would build them.
///
/// `inv_freq[k]` is the angle per position of plane `k` (k = 0..rotary_dim/2), evaluated in `f64`
/// from the formula; `inv_freq_f32` is what Hugging Face transformers computes in `float32`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RotaryFrequencies {
    /// Per-plane frequency, f64 evaluation of the formula.
    pub inv_freq: Vec<f64>,
    /// Per-plane frequency as the reference implementation computes it in f32.
    pub inv_freq_f32: Vec<f32>,
    /// Factor multiplying cos and sin (YaRN / LongRoPE temperature); 1 for most types.
    pub attention_factor: f64,
    /// The number of rotated dimensions (2 × number of planes).
    pub rotary_dim: usize,
    /// The head dimension (≥ rotary_dim; the rest is not rotated).
    pub head_dim: usize,
    /// The base (θ) when the set came from one (as configured).
    pub base: Option<f64>,
    /// The base the default formula is actually evaluated with: differs from `base` for dynamic
    /// NTK scaling beyond the original context (`base' = base·(f·s/L − (f−1))^(d/(d−2))`).
    pub effective_base: Option<f64>,
    /// The context length the configuration declares (max_position_embeddings), if any.
    pub context: Option<u64>,
    /// Human-readable description of where the set came from.
    pub source: String,
    /// The Hugging Face rope type the set was computed for (`default`, `linear`, `dynamic`,
    /// `yarn`, `longrope`, `llama3`), or `explicit` / `base` for sets not read from a config.
    pub rope_type: String,
    /// A multiplier of the softmax scale 1/√d that the model applies *in attention* (not to
    /// cos/sin): DeepSeek-V2/V3 with YaRN use mscale² with mscale = 0.1·mscale_all_dim·ln(factor)+1.
    /// `None` for families that apply no such multiplier.
    pub softmax_scale_multiplier: Option<f64>,
}

impl RotaryFrequencies {
    /// ω_k = base^(−2k/dim), k = 0..dim/2 (the RoFormer / Llama default), with the f32 values
    /// computed as `1 / base^(float32(2k)/dim)` in float32.
    ///
    /// # Errors
    /// base ≤ 1 or not finite; dim odd or zero.
    pub fn from_base(base: f64, dim: usize) -> Result<Self> {
        if !(base.is_finite() && base > 1.0) {
            return Err(Error::invalid(
                "base",
                base,
                "a finite number > 1 (e.g. 10000)",
            ));
        }
        check_rotary_dim(dim)?;
        let inv_freq = (0..dim / 2)
            .map(|k| base.powf(-(2.0 * k as f64) / dim as f64))
            .collect();
        let b32 = base as f32;
        let inv_freq_f32 = (0..dim / 2)
            .map(|k| 1.0f32 / b32.powf((2 * k) as f32 / dim as f32))
            .collect();
        Ok(RotaryFrequencies {
            inv_freq,
            inv_freq_f32,
            attention_factor: 1.0,
            rotary_dim: dim,
            head_dim: dim,
            base: Some(base),
            effective_base: Some(base),
            context: None,
            source: format!("base {}, dim {dim}", crate::number::short(base)),
            rope_type: "base".into(),
            softmax_scale_multiplier: None,
        })
    }

    /// An explicit list of frequencies, one per plane.
    pub fn from_omegas(omegas: &[Omega]) -> Self {
        let inv_freq: Vec<f64> = omegas.iter().map(|o| o.value()).collect();
        RotaryFrequencies {
            inv_freq_f32: inv_freq.iter().map(|&w| w as f32).collect(),
            rotary_dim: 2 * inv_freq.len(),
            head_dim: 2 * inv_freq.len(),
            inv_freq,
            attention_factor: 1.0,
            base: None,
            effective_base: None,
            context: None,
            source: omegas
                .iter()
                .map(|o| o.label())
                .collect::<Vec<_>>()
                .join(","),
            rope_type: "explicit".into(),
            softmax_scale_multiplier: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    #[test]
    fn parses_the_contract_examples() {
        assert_eq!(
            Omega::parse("pi/2").unwrap(),
            Omega::PiRational { num: 1, den: 2 }
        );
        assert_eq!(
            Omega::parse("2*pi/7").unwrap(),
            Omega::PiRational { num: 2, den: 7 }
        );
        assert_eq!(
            Omega::parse("pi*3/8").unwrap(),
            Omega::PiRational { num: 3, den: 8 }
        );
        assert_eq!(
            Omega::parse("3pi/4").unwrap(),
            Omega::PiRational { num: 3, den: 4 }
        );
        assert_eq!(
            Omega::parse("4*pi/8").unwrap(),
            Omega::PiRational { num: 1, den: 2 }
        );
        assert_eq!(Omega::parse("0.25").unwrap(), Omega::Float { value: 0.25 });
        assert_eq!(
            Omega::parse("pi*pi").unwrap(),
            Omega::Float { value: PI * PI }
        );
        for bad in ["", "0", "pi*0", "pi/0", "x", "pi/", "inf", "nan", "1/0"] {
            assert!(Omega::parse(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn decimal_multiples_of_pi_are_exact_rationals() {
        let exact = |t: &str| Omega::parse(t).unwrap();
        assert_eq!(exact("pi*0.5"), Omega::PiRational { num: 1, den: 2 });
        assert_eq!(exact("0.25*pi"), Omega::PiRational { num: 1, den: 4 });
        assert_eq!(
            exact("pi/1e9"),
            Omega::PiRational {
                num: 1,
                den: 1_000_000_000
            }
        );
        assert_eq!(exact("2.5e-1*pi/5"), Omega::PiRational { num: 1, den: 20 });
        assert_eq!(exact("pi*1.5e0/3"), Omega::PiRational { num: 1, den: 2 });
        assert_eq!(exact("pi*-1"), Omega::PiRational { num: -1, den: 1 });
        assert_eq!(exact("pi/-4"), Omega::PiRational { num: -1, den: 4 });
        assert_eq!(exact("-pi/-4"), Omega::PiRational { num: 1, den: 4 });
        // Literals too large for an exact i64 fraction stay floats (no overflow, no panic).
        assert!(matches!(exact("pi/1e30"), Omega::Float { .. }));
        assert!(matches!(
            exact("pi/123456789012345678901234567890123456789012"),
            Omega::Float { .. }
        ));
    }

    #[test]
    fn negative_frequencies_parse_and_keep_their_period() {
        let w = Omega::parse("-pi/2").unwrap();
        assert_eq!(w, Omega::PiRational { num: -1, den: 2 });
        assert_eq!(w.label(), "-pi/2");
        assert_eq!(w.turns_fraction(), Some((-1, 4)));
        assert_eq!(
            Omega::parse("-0.25").unwrap(),
            Omega::Float { value: -0.25 }
        );
        assert_eq!(w.cos_at(1), 0.0);
        assert_eq!(w.cos_at(2), -1.0);
    }

    #[test]
    fn parse_errors_say_what_is_wrong() {
        let msg = |t: &str| Omega::parse(t).unwrap_err().to_string();
        let m = msg("sqrt(2)");
        assert!(m.starts_with("invalid frequency: \"sqrt(2)\" ("), "{m}");
        assert!(
            m.ends_with("expected an expression like pi/2, 2*pi/7, 0.25 or pi*3/8"),
            "{m}"
        );
        assert!(
            msg("nan").contains("\"nan\" is not a number"),
            "{}",
            msg("nan")
        );
        assert!(msg("pi/").contains("missing factor"));
    }

    #[test]
    fn out_of_range_frequencies_are_rejected_with_the_bound() {
        let m = Omega::parse("1e20").unwrap_err().to_string();
        assert!(m.contains("≤ 1e4") && m.contains("mod 2π"), "{m}");
        let m = Omega::parse("5e-324").unwrap_err().to_string();
        assert!(m.contains("≥ 1e-300") && m.contains("wavelength"), "{m}");
        assert!(Omega::float(1e5).is_err() && Omega::float(-1e5).is_err());
        assert!(Omega::float(MAX_OMEGA).is_ok() && Omega::float(MIN_OMEGA).is_ok());
        assert!(Omega::pi_rational(100_000, 1).is_err());
    }

    #[test]
    fn list_rejects_empty_elements() {
        for t in ["pi/2,", ",pi/2", "pi/2,,pi/3", "", " "] {
            assert!(parse_omega_list(t).is_err(), "{t:?}");
        }
        assert_eq!(parse_omega_list("pi/2, pi/3").unwrap().len(), 2);
    }

    #[test]
    fn cos_at_is_exact_on_quarter_turns_and_accurate_elsewhere() {
        let w = Omega::parse("pi/2").unwrap();
        assert_eq!(
            (0..9).map(|s| w.cos_at(s)).collect::<Vec<_>>(),
            vec![1.0, 0.0, -1.0, 0.0, 1.0, 0.0, -1.0, 0.0, 1.0]
        );
        assert_eq!(w.cos_at(-1), 0.0);
        assert_eq!(w.cos_at(4_000_000_002), -1.0);
        // Other exact frequencies agree with the naive f64 cosine cos(s·ω): the naive argument
        // s·ω carries up to |s·ω|·2⁻⁵³ ≈ 7e-15 of error for |s| < 20 (ω ≤ π), ours ~1e-16.
        for text in ["pi/3", "2*pi/7", "3*pi/8", "pi/12"] {
            let w = Omega::parse(text).unwrap();
            for s in -20..20 {
                let want = (s as f64 * w.value()).cos();
                assert!((w.cos_at(s) - want).abs() < 1e-14, "{text} s={s}");
            }
        }
        // Float frequencies: the plain cosine of the reduced angle.
        assert_eq!(Omega::float(0.3).unwrap().cos_at(5), 1.5f64.cos());
    }

    #[test]
    fn turns_fraction_gives_exact_periods() {
        assert_eq!(Omega::parse("pi/2").unwrap().turns_fraction(), Some((1, 4)));
        assert_eq!(Omega::parse("pi/3").unwrap().turns_fraction(), Some((1, 6)));
        assert_eq!(Omega::parse("pi").unwrap().turns_fraction(), Some((1, 2)));
        assert_eq!(Omega::parse("2*pi").unwrap().turns_fraction(), Some((1, 1)));
    }

    #[test]
    fn reduce_angle_is_accurate_at_huge_positions() {
        // Exact rational check: ω = 2π/7 at m = 7e9 + 3 must give 3·2π/7 (the exact phase path
        // agrees with the float reduction to ~1e-6 absolute, the size of ω's own rounding × m).
        let w = Omega::parse("2*pi/7").unwrap();
        let m = 7_000_000_003i64;
        let exact = w.phase(m);
        assert!((exact - 3.0 * std::f64::consts::TAU / 7.0).abs() < 1e-15);
        // reduce_angle is exact arithmetic on the *rounded* ω; the difference from the exact
        // phase is m·(ω_f64 − ω) ≤ m·ulp(ω)/2 ≈ 7e9 · 5.5e-17 ≈ 4e-7.
        let r = reduce_angle(m as f64, w.value());
        assert!((r - exact).abs() < 5e-7, "{r} vs {exact}");
        // Small positions: identical to the naive product reduced.
        assert!((reduce_angle(5.0, 0.3) - 1.5).abs() < 1e-15);
    }

    #[test]
    fn base_dim_matches_formula() {
        let f = RotaryFrequencies::from_base(10000.0, 8).unwrap();
        assert_eq!(f.inv_freq.len(), 4);
        assert!((f.inv_freq[1] - 0.1).abs() < 1e-15);
        assert!(RotaryFrequencies::from_base(1.0, 8).is_err());
        assert!(RotaryFrequencies::from_base(10000.0, 7).is_err());
    }
}
