//! Where an axis gets its ticks and what they say.
//!
//! Linear axes step by 1, 2 or 5 × 10ᵉ; log axes mark decades (and 2 and 5 within them when the
//! axis spans less than three decades). Tick values are computed as the double nearest to the
//! decimal `k × 10ᵉ` (parsing `"{k}e{e}"`), never by accumulating steps or `powi`, so a tick is
//! `1e-4` and not `9.999999999999999e-5`; labels go through the core's number formatter with
//! just enough significant digits, in one style per axis.

use attnlab_core::present::number::{format, Style};

/// One tick of an axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    /// Where it is, in data units.
    pub value: f64,
    /// What it says; `None` for an unlabelled (minor) tick.
    pub label: Option<String>,
}

/// The double nearest to the decimal `m × 10ᵉ`.
///
/// ```text
/// decimal(3, -1) == 0.3, decimal(1, -4) == 1e-4 (while 10f64.powf(-4.0) may be off by an ulp)
/// ```
pub fn decimal(m: i64, e: i32) -> f64 {
    format!("{m}e{e}").parse().unwrap_or(f64::NAN)
}

/// The smallest step `m × 10ᵉ ≥ raw` with m ∈ {1, 2, 5}, as (m, e); `raw` must be positive.
pub fn nice_step(raw: f64) -> (i64, i32) {
    let mut e = raw.log10().floor() as i32;
    // log10 can land one off near exact powers of ten; settle it on the decimal itself.
    if decimal(1, e) > raw {
        e -= 1;
    }
    if decimal(1, e + 1) <= raw {
        e += 1;
    }
    for m in [1, 2, 5] {
        if decimal(m, e) >= raw * (1.0 - 1e-12) {
            return (m, e);
        }
    }
    (1, e + 1)
}

/// The number of decimal digits of `k` (1 for 0).
fn digits(k: i64) -> u8 {
    let mut n = 1;
    let mut k = k.unsigned_abs() / 10;
    while k > 0 {
        n += 1;
        k /= 10;
    }
    n
}

/// The labelling style of an axis whose largest tick magnitude is `max_abs`: scientific below
/// 10⁻³ or from 10⁶ up (so one axis never mixes `0.0001` and `5e-5`), plain decimals otherwise.
pub fn axis_style(max_abs: f64, digits: u8) -> Style {
    if max_abs != 0.0 && !(1e-3..1e6).contains(&max_abs) {
        Style::Scientific(digits)
    } else {
        Style::Significant(digits)
    }
}

/// Ticks at the multiples of the 1-2-5 step that gives at most `max_count` intervals over
/// [`lo`, `hi`], each labelled with the digits the step needs.
pub fn linear(lo: f64, hi: f64, max_count: usize) -> Vec<Tick> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return Vec::new();
    }
    let (m, e) = nice_step((hi - lo) / max_count.max(1) as f64);
    let step = decimal(m, e);
    let slack = 1e-9;
    let first = (lo / step - slack).ceil() as i64;
    let last = (hi / step + slack).floor() as i64;
    if last < first || last - first > 1000 {
        return Vec::new();
    }
    let ks: Vec<i64> = (first..=last).map(|i| i * m).collect();
    let d = ks.iter().map(|&k| digits(k)).max().unwrap_or(1);
    let values: Vec<f64> = ks.iter().map(|&k| decimal(k, e)).collect();
    let style = axis_style(values.iter().fold(0.0, |a, v| a.max(v.abs())), d);
    values
        .into_iter()
        .map(|value| Tick {
            value,
            label: Some(format(value, style)),
        })
        .collect()
}

/// Ticks of a log axis over [`lo`, `hi`] (both > 0), with at most `max_labels` labels.
///
/// Three decades or more: decades, every `⌈decades / max_labels⌉`-th labelled (the labelled ones
/// at multiples of that stride, so 10⁰ is labelled when shown), the rest and — up to eight
/// decades — 2…9 × 10ᵉ as unlabelled ticks. Fewer: 1, 2, 5 × 10ᵉ labelled, else 1…9 × 10ᵉ;
/// an axis too short for two such ticks gets linear ticks.
pub fn log(lo: f64, hi: f64, max_labels: usize) -> Vec<Tick> {
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return Vec::new();
    }
    let max_labels = max_labels.max(2);
    let inside = |v: f64| v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9);
    let e0 = (lo.log10() - 1e-9).ceil() as i32;
    let e1 = (hi.log10() + 1e-9).floor() as i32;
    let decades = (e1 - e0 + 1).max(0) as usize;
    let label_all = |values: &[(i64, i32)]| -> Vec<Tick> {
        let vals: Vec<f64> = values.iter().map(|&(m, e)| decimal(m, e)).collect();
        let plain = vals.iter().all(|v| (1e-3..=1e4).contains(v));
        let style = if plain {
            Style::Significant(1)
        } else {
            Style::Scientific(1)
        };
        vals.into_iter()
            .map(|value| Tick {
                value,
                label: Some(format(value, style)),
            })
            .collect()
    };
    if decades >= 3 {
        let stride = decades.div_ceil(max_labels) as i32;
        let labelled: Vec<(i64, i32)> = (e0..=e1)
            .filter(|e| e.rem_euclid(stride) == 0)
            .map(|e| (1, e))
            .collect();
        let mut ticks = label_all(&labelled);
        for e in (e0 - 1)..=e1 {
            if e >= e0 && e.rem_euclid(stride) != 0 {
                ticks.push(Tick {
                    value: decimal(1, e),
                    label: None,
                });
            }
            if decades <= 8 {
                for m in 2..=9 {
                    let v = decimal(m, e);
                    if inside(v) {
                        ticks.push(Tick {
                            value: v,
                            label: None,
                        });
                    }
                }
            }
        }
        ticks.sort_by(|a, b| a.value.total_cmp(&b.value));
        return ticks;
    }
    for mantissas in [&[1, 2, 5][..], &[1, 2, 3, 4, 5, 6, 7, 8, 9][..]] {
        let values: Vec<(i64, i32)> = (e0 - 1..=e1)
            .flat_map(|e| mantissas.iter().map(move |&m| (m, e)))
            .filter(|&(m, e)| inside(decimal(m, e)))
            .collect();
        if values.len() >= 2 && values.len() <= max_labels {
            return label_all(&values);
        }
        if values.len() > max_labels {
            break;
        }
    }
    linear(lo, hi, max_labels.saturating_sub(1).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(t: &[Tick]) -> Vec<&str> {
        t.iter().filter_map(|t| t.label.as_deref()).collect()
    }

    #[test]
    fn nice_steps_are_one_two_five() {
        assert_eq!(nice_step(0.13), (2, -1));
        assert_eq!(nice_step(0.2), (2, -1));
        assert_eq!(nice_step(0.21), (5, -1));
        assert_eq!(nice_step(7.0), (1, 1));
        assert_eq!(nice_step(1.0), (1, 0));
        assert_eq!(nice_step(1e-4), (1, -4));
        assert_eq!(nice_step(9.999999999999999e-5), (1, -4));
        assert_eq!(nice_step(3.3e12), (5, 12));
    }

    #[test]
    fn linear_ticks_are_exact_decimals() {
        let t = linear(-0.05, 1.05, 6);
        assert_eq!(labels(&t), ["0", "0.2", "0.4", "0.6", "0.8", "1"]);
        // 3 × 0.1 accumulates to 0.30000000000000004; the tick is the decimal itself.
        let t = linear(0.0, 1.0, 10);
        assert_eq!(t[3].value, 0.3);
        assert_eq!(t[3].label.as_deref(), Some("0.3"));
        let t = linear(-1.1, 1.1, 5);
        assert_eq!(labels(&t), ["-1", "-0.5", "0", "0.5", "1"]);
        assert!(t.iter().all(|t| t.value >= -1.1 && t.value <= 1.1));
    }

    #[test]
    fn tiny_and_huge_axes_label_in_one_scientific_style() {
        let t = linear(0.0, 1.3e-4, 7);
        assert_eq!(
            labels(&t),
            ["0", "2e-5", "4e-5", "6e-5", "8e-5", "1e-4", "1.2e-4"]
        );
        assert_eq!(t[5].value, 1e-4);
        let t = linear(-3e-16, 4.5e-16, 4);
        assert_eq!(labels(&t), ["-2e-16", "0", "2e-16", "4e-16"]);
        let t = linear(0.0, 2.5e12, 5);
        assert_eq!(
            labels(&t),
            ["0", "5e11", "1e12", "1.5e12", "2e12", "2.5e12"]
        );
        let t = linear(1000.0, 2000.0, 5);
        assert_eq!(labels(&t), ["1000", "1200", "1400", "1600", "1800", "2000"]);
    }

    #[test]
    fn close_ticks_far_from_zero_keep_their_digits() {
        let t = linear(1.0, 1.0 + 4e-6, 4);
        let l = labels(&t);
        assert_eq!(l.len(), 5);
        assert_eq!(l[0], "1");
        assert_eq!(l[1], "1.000001");
        let unique: std::collections::BTreeSet<_> = l.iter().collect();
        assert_eq!(unique.len(), l.len());
    }

    #[test]
    fn linear_tick_count_respects_the_budget() {
        for (lo, hi) in [(0.0, 1.0), (-7.3, 1234.5), (1e-9, 3e-9), (0.5, 0.51)] {
            for max in 2..12 {
                let t = linear(lo, hi, max);
                assert!(
                    t.len() >= 2 && t.len() <= max + 1,
                    "{lo}..{hi} max {max}: {t:?}"
                );
            }
        }
        assert!(linear(1.0, 1.0, 5).is_empty());
        assert!(linear(0.0, f64::INFINITY, 5).is_empty());
    }

    #[test]
    fn log_ticks_mark_decades() {
        let t = log(0.8, 1.2e6, 10);
        assert_eq!(
            labels(&t),
            ["1e0", "1e1", "1e2", "1e3", "1e4", "1e5", "1e6"]
        );
        assert!(t.iter().any(|t| t.label.is_none() && t.value == 2.0));
        let t = log(9e-17, 2e-1, 6);
        assert_eq!(labels(&t), ["1e-15", "1e-12", "1e-9", "1e-6", "1e-3"]);
        assert!(t.iter().any(|t| t.value == 1e-4 && t.label.is_none()));
        // Within [1e-3, 1e4] the labels are plain.
        let t = log(0.001, 10.0, 8);
        assert_eq!(labels(&t), ["0.001", "0.01", "0.1", "1", "10"]);
    }

    #[test]
    fn short_log_axes_use_two_and_five() {
        let t = log(0.9, 60.0, 10);
        assert_eq!(labels(&t), ["1", "2", "5", "10", "20", "50"]);
        let t = log(2.5, 9.5, 10);
        assert_eq!(labels(&t), ["3", "4", "5", "6", "7", "8", "9"]);
        // Too short for two of those: linear ticks.
        let t = log(1.01, 1.09, 5);
        assert!(labels(&t).len() >= 2);
        assert!(t.iter().all(|t| t.value >= 1.01 && t.value <= 1.09));
    }
}
