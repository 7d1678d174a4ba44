//! The one number formatter. Every number a front end shows goes through [`format()`]:
//! plain decimal notation for magnitudes in [10⁻⁴, 10⁹), scientific notation outside, never a
//! trailing `.0`, never `-0`, and `inf`/`NaN` spelled out.

/// How many digits to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// The shortest decimal that reads back as the same binary64 value (for values that are the
    /// product: frequencies, bases, exact scores).
    Shortest,
    /// Rounded to this many significant digits, trailing zeros dropped (tables of measurements).
    Significant(u8),
    /// A fixed number of decimals, not trimmed, so a column of matrix entries lines up
    /// (`-0.059404`); scientific outside [10⁻⁴, 10⁹) like the other styles, and `0` for zero.
    Fixed(u8),
    /// Always scientific with this many significant digits (errors, tolerances, margins), so a
    /// column of errors lines up: `4.441e-16`.
    Scientific(u8),
    /// Rounded to this many decimal places, trailing zeros dropped (`1.570796`, `0.5`, `-1`):
    /// values read against an absolute tolerance, such as a prediction graded to ±0.01, where
    /// anything below half a unit in the last place shows as `0`. Scientific from 10⁹ up, like
    /// the other styles.
    Decimals(u8),
}

/// Formats `x` in `style`.
///
/// ```
/// use attnlab_core::present::number::{format, Style};
/// assert_eq!(format(0.1 + 0.2, Style::Shortest), "0.30000000000000004");
/// assert_eq!(format(9.999999999999999e-5, Style::Significant(4)), "0.0001");
/// assert_eq!(format(1e-16 * 4.440892098500626, Style::Scientific(4)), "4.441e-16");
/// assert_eq!(format(2.0, Style::Scientific(4)), "2e0");
/// assert_eq!(format(-0.0, Style::Shortest), "0");
/// assert_eq!(format(12345678.0, Style::Significant(3)), "12300000");
/// assert_eq!(format(1.5e9, Style::Shortest), "1.5e9");
/// assert_eq!(format(f64::INFINITY, Style::Shortest), "inf");
/// assert_eq!(format(-0.0594039, Style::Fixed(6)), "-0.059404");
/// assert_eq!(format(0.5, Style::Fixed(6)), "0.500000");
/// assert_eq!(format(std::f64::consts::FRAC_PI_2, Style::Decimals(6)), "1.570796");
/// assert_eq!(format(6.123233995736766e-17, Style::Decimals(6)), "0");
/// assert_eq!(format(-1e-9, Style::Decimals(6)), "0");
/// ```
pub fn format(x: f64, style: Style) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    if x == 0.0 {
        return "0".into();
    }
    match style {
        Style::Shortest => {
            if (1e-4..1e9).contains(&x.abs()) {
                format!("{x}")
            } else {
                format!("{x:e}")
            }
        }
        Style::Significant(d) => {
            let (mantissa, exp) = rounded(x, d);
            if (-4..9).contains(&exp) {
                let decimals = (i32::from(d.max(1)) - 1 - exp).max(0) as usize;
                trim(format!("{:.*}", decimals, mantissa * 10f64.powi(exp)))
            } else {
                format!(
                    "{}e{exp}",
                    trim(format!("{mantissa:.*}", usize::from(d.max(1)) - 1))
                )
            }
        }
        Style::Fixed(d) => {
            if (1e-4..1e9).contains(&x.abs()) {
                let s = format!("{:.*}", usize::from(d), x);
                if s.trim_start_matches('-')
                    .chars()
                    .all(|c| c == '0' || c == '.')
                {
                    "0".into()
                } else {
                    s
                }
            } else {
                format(x, Style::Scientific(d.max(1)))
            }
        }
        Style::Scientific(d) => {
            let (mantissa, exp) = rounded(x, d);
            format!(
                "{}e{exp}",
                trim(format!("{mantissa:.*}", usize::from(d.max(1)) - 1))
            )
        }
        Style::Decimals(d) => {
            if x.abs() >= 1e9 {
                return format(x, Style::Shortest);
            }
            let s = trim(format!("{:.*}", usize::from(d), x));
            if s == "-0" {
                "0".into()
            } else {
                s
            }
        }
    }
}

/// `x` rounded to `digits` significant digits, as (mantissa in [1, 10), decimal exponent).
fn rounded(x: f64, digits: u8) -> (f64, i32) {
    let s = format!("{:.*e}", usize::from(digits.max(1)) - 1, x);
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    (m.parse().unwrap_or(x), e.parse().unwrap_or(0))
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Shorthand for [`Style::Shortest`].
pub fn short(x: f64) -> String {
    format(x, Style::Shortest)
}

/// Shorthand for [`Style::Significant`].
pub fn sig(x: f64, digits: u8) -> String {
    format(x, Style::Significant(digits))
}

/// Shorthand for [`Style::Decimals`].
pub fn decimals(x: f64, places: u8) -> String {
    format(x, Style::Decimals(places))
}

/// Shorthand for [`Style::Scientific`] with 4 significant digits (errors and tolerances).
pub fn sci(x: f64) -> String {
    format(x, Style::Scientific(4))
}

/// A size in bytes with a binary unit, to 3 significant digits: `512 bytes`, `1.5 KiB`,
/// `1 GiB`, `74 PiB` (limits and estimates in messages).
///
/// ```
/// use attnlab_core::present::number::bytes;
/// assert_eq!(bytes(512), "512 bytes");
/// assert_eq!(bytes(1536), "1.5 KiB");
/// assert_eq!(bytes(1 << 30), "1 GiB");
/// assert_eq!(bytes(u64::MAX), "16 EiB");
/// ```
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} byte{}", if n == 1 { "" } else { "s" });
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{} {}", sig(v, 3), UNITS[unit])
}

/// A count of operations (work estimates in messages): plain below 10⁶, else to 2
/// significant digits in scientific notation (`3.4e10`).
///
/// ```
/// use attnlab_core::present::number::ops;
/// assert_eq!(ops(4096), "4096");
/// assert_eq!(ops(34_359_738_368), "3.4e10");
/// ```
pub fn ops(n: u64) -> String {
    if n < 1_000_000 {
        n.to_string()
    } else {
        format(n as f64, Style::Scientific(2))
    }
}

/// An f32 value shortest-round-trip in f32 (so `0.1f32` shows `0.1`, not `0.10000000149011612`).
pub fn short_f32(x: f32) -> String {
    if !x.is_finite() || x == 0.0 {
        format(f64::from(x), Style::Shortest)
    } else if (1e-4..1e9).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_rounding_carries_into_the_exponent() {
        assert_eq!(sig(9.9996, 4), "10");
        assert_eq!(sci(9.99996e-16), "1e-15");
        assert_eq!(sig(0.000123456, 3), "0.000123");
        assert_eq!(sig(0.0000123456, 3), "1.23e-5");
        assert_eq!(sig(0.00123456, 3), "0.00123");
        assert_eq!(sig(-1.0e-16 + 0.0, 3), "-1e-16");
        assert_eq!(sig(123.456, 6), "123.456");
        assert_eq!(sig(1e9, 3), "1e9");
        assert_eq!(sci(5.440e-14), "5.44e-14");
        assert_eq!(decimals(-0.5794, 2), "-0.58");
        assert_eq!(decimals(2.0 / 3.0, 6), "0.666667");
        assert_eq!(decimals(12.0, 6), "12");
        assert_eq!(decimals(-0.0000004, 6), "0");
        assert_eq!(decimals(2.5e12, 6), "2.5e12");
    }

    #[test]
    fn shortest_round_trips() {
        for x in [
            0.1,
            1.0 / 3.0,
            2.0f64.sqrt(),
            6.02e23,
            1e-300,
            123456789.0,
            0.00042,
        ] {
            assert_eq!(short(x).parse::<f64>().unwrap(), x);
            assert!(!short(x).ends_with(".0"));
        }
        assert_eq!(short_f32(0.1), "0.1");
        assert_eq!(short_f32(1e-10), "1e-10");
        assert_eq!(short_f32(0.0), "0");
    }
}
