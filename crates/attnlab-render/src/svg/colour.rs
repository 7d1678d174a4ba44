//! Colours: a colour-blind-safe palette for series and ColorBrewer ramps for heat maps.

use std::fmt;

/// Series colours: the Okabe–Ito palette (distinguishable with the common colour-vision
/// deficiencies), in an order that keeps the low-contrast yellow last.
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
];

/// The colour of series (or bar group) `i`.
pub fn series(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// An sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl fmt::Display for Rgb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

/// ColorBrewer RdBu (11 classes) from −1 (dark blue) through near-white to +1 (dark red).
const DIVERGING: [Rgb; 11] = [
    Rgb(5, 48, 97),
    Rgb(33, 102, 172),
    Rgb(67, 147, 195),
    Rgb(146, 197, 222),
    Rgb(209, 229, 240),
    Rgb(247, 247, 247),
    Rgb(253, 219, 199),
    Rgb(244, 165, 130),
    Rgb(214, 96, 77),
    Rgb(178, 24, 43),
    Rgb(103, 0, 31),
];

/// ColorBrewer Blues (9 classes) from 0 (near-white) to 1 (dark blue).
const SEQUENTIAL: [Rgb; 9] = [
    Rgb(247, 251, 255),
    Rgb(222, 235, 247),
    Rgb(198, 219, 239),
    Rgb(158, 202, 225),
    Rgb(107, 174, 214),
    Rgb(66, 146, 198),
    Rgb(33, 113, 181),
    Rgb(8, 81, 156),
    Rgb(8, 48, 107),
];

/// Piecewise-linear interpolation between equally spaced `stops` at `t` ∈ [0, 1] (clamped) —
/// the same interpolation an SVG gradient with these stops draws.
fn ramp(stops: &[Rgb], t: f64) -> Rgb {
    let t = if t.is_nan() { 0.5 } else { t.clamp(0.0, 1.0) };
    let pos = t * (stops.len() - 1) as f64;
    let i = (pos.floor() as usize).min(stops.len() - 2);
    let f = pos - i as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + f * (f64::from(b) - f64::from(a))).round() as u8;
    let (a, b) = (stops[i], stops[i + 1]);
    Rgb(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// The diverging colour of `v` on a scale saturating at ±`max`.
pub fn diverging(v: f64, max: f64) -> Rgb {
    ramp(&DIVERGING, 0.5 + 0.5 * v / max)
}

/// The sequential colour of `v` on [`min`, `max`].
pub fn sequential(v: f64, min: f64, max: f64) -> Rgb {
    ramp(&SEQUENTIAL, (v - min) / (max - min))
}

/// Gradient stops (offset from the low end, colour) of the diverging ramp.
pub fn diverging_stops() -> Vec<(f64, String)> {
    stops(&DIVERGING)
}

/// Gradient stops of the sequential ramp.
pub fn sequential_stops() -> Vec<(f64, String)> {
    stops(&SEQUENTIAL)
}

fn stops(ramp: &[Rgb]) -> Vec<(f64, String)> {
    ramp.iter()
        .enumerate()
        .map(|(i, c)| (i as f64 / (ramp.len() - 1) as f64, c.to_string()))
        .collect()
}

/// WCAG relative luminance of an sRGB colour.
fn luminance(c: Rgb) -> f64 {
    let lin = |u: u8| {
        let s = f64::from(u) / 255.0;
        if s <= 0.04045 {
            s / 12.92
        } else {
            ((s + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(c.0) + 0.7152 * lin(c.1) + 0.0722 * lin(c.2)
}

/// Black or white, whichever has the higher WCAG contrast ratio on `bg`.
pub fn text_on(bg: Rgb) -> &'static str {
    let l = luminance(bg);
    if (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) {
        "#000"
    } else {
        "#fff"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diverging_is_symmetric_and_saturates() {
        assert_eq!(diverging(0.0, 2.0), Rgb(247, 247, 247));
        assert_eq!(diverging(2.0, 2.0), Rgb(103, 0, 31));
        assert_eq!(diverging(-2.0, 2.0), Rgb(5, 48, 97));
        assert_eq!(diverging(50.0, 2.0), diverging(2.0, 2.0));
        // A round-off difference far below the saturation point stays near-white.
        let c = diverging(1e-16, 5.4e-14);
        assert!(c.0 >= 246 && c.1 >= 245 && c.2 >= 245, "{c}");
        assert!(diverging(1.0, 2.0).0 > diverging(1.0, 2.0).2);
        assert!(diverging(-1.0, 2.0).2 > diverging(-1.0, 2.0).0);
    }

    #[test]
    fn sequential_runs_light_to_dark() {
        assert_eq!(sequential(0.0, 0.0, 1.0), SEQUENTIAL[0]);
        assert_eq!(sequential(1.0, 0.0, 1.0), SEQUENTIAL[8]);
        assert!(luminance(sequential(0.3, 0.0, 1.0)) > luminance(sequential(0.7, 0.0, 1.0)));
    }

    #[test]
    fn text_contrasts_with_its_cell() {
        assert_eq!(text_on(Rgb(255, 255, 255)), "#000");
        assert_eq!(text_on(DIVERGING[0]), "#fff");
        assert_eq!(text_on(DIVERGING[10]), "#fff");
        assert_eq!(text_on(SEQUENTIAL[2]), "#000");
        assert_eq!(Rgb(8, 48, 107).to_string(), "#08306b");
    }
}
