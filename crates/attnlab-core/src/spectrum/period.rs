//! Periods and near-repeats of a single rotary frequency.
//!
//! ω = 2π·a/b in lowest terms returns to phase 0 first at separation b. Any other ω (in
//! particular every binary64 number, because 2π is irrational) never repeats exactly; its
//! best near-repeats are the denominators q of the continued-fraction convergents of ω/2π, with
//! phase errors q·ω − 2π·p that shrink roughly like 2π/q_next.

use serde::Serialize;

use crate::phase::turns_nearest;
use crate::position::frequencies::{Omega, MAX_POSITION};
use crate::{Error, Result};

/// Largest convergent denominator listed for float frequencies. Up to here the double-double
/// reduction of [`turns_nearest`] is accurate to ~10⁻¹⁹ turns, far below the phase errors
/// (~1/q_next turns).
pub const NEAR_REPEAT_LIMIT: u64 = 1_000_000_000_000;

/// A near-repeat: a separation whose phase is close to a whole number of turns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NearRepeat {
    /// The separation q (a convergent denominator of ω/2π).
    pub separation: u64,
    /// q·ω − 2πp for the nearest integer p, wrapped to (−π, π] (radians).
    pub phase_error: f64,
}

/// The frequency, as written and as a number.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OmegaLabel {
    /// Display form (`pi/2`, `0.3`).
    pub label: String,
    /// Radians per position.
    pub value: f64,
}

/// The result of [`period`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeriodReport {
    /// The frequency.
    pub omega: OmegaLabel,
    /// Whether ω is an exact rational multiple of π.
    pub exact: bool,
    /// The first separation s ≥ 1 with s·ω ≡ 0 (mod 2π): b for ω = 2π·a/b, `None` otherwise.
    pub first_repeat: Option<u64>,
    /// 2π/|ω|: the separation of one full turn (not an integer in general).
    pub wavelength: f64,
    /// Convergent denominators of ω/2π with their phase errors (exact sets end at b with 0).
    pub near_repeats: Vec<NearRepeat>,
    /// The tolerance (radians) of `first_within_tol`.
    pub tol: f64,
    /// The search bound of `first_within_tol`.
    pub max_sep: u64,
    /// The first separation s in 1..=max_sep with |s·ω mod 2π| ≤ tol (wrapped), if any. It need
    /// not be a convergent: it is a convergent or an intermediate fraction q_{n−1} + j·q_n.
    pub first_within_tol: Option<u64>,
}

/// Signed exact phase error of s·2π·a/b in (−π, π].
fn exact_signed(s: u64, a: i64, b: i64) -> f64 {
    let b = b as i128;
    let mut r = (s as i128 * a as i128).rem_euclid(b);
    if 2 * r > b {
        r -= b;
    }
    std::f64::consts::TAU * (r as f64 / b as f64)
}

/// Continued-fraction convergent denominators of r/b (0 ≤ r < b), exact integers.
fn exact_convergents(r: i64, b: i64) -> Vec<u64> {
    let (mut x, mut y) = (r as i128, b as i128); // r/b = [0; a1, a2, …]
    let (mut q_prev, mut q) = (0i128, 1i128);
    let mut out = vec![1u64];
    while x != 0 {
        let a = y / x;
        (x, y) = (y % x, x);
        (q_prev, q) = (q, a * q + q_prev);
        if out.last() != Some(&(q as u64)) {
            out.push(q as u64);
        }
    }
    out
}

/// Convergent denominators q_n ≤ `limit` of ω/2π and their signed errors θ_n = q_n·ω/2π − p_n
/// (turns), computed by Euclid's algorithm on the errors themselves: a_{n+1} = ⌊|θ_{n−1}|/|θ_n|⌋,
/// q_{n+1} = q_{n−1} + a_{n+1}q_n, with every θ re-evaluated by `theta` (signed turns in
/// [−½, ½]) rather than propagated, so errors do not accumulate. Starts from (q, θ) = (0, −1),
/// (1, frac(ω/2π)).
fn convergents(theta: impl Fn(u64) -> f64, limit: u64) -> Vec<(u64, f64)> {
    let f0 = {
        let t = theta(1);
        if t < 0.0 {
            t + 1.0
        } else {
            t
        }
    };
    let mut out = vec![(1u64, f0)];
    let (mut qm, mut tm) = (0u64, -1.0f64);
    let (mut qn, mut tn) = (1u64, f0);
    for _ in 0..200 {
        if tn == 0.0 {
            break;
        }
        let a = (tm.abs() / tn.abs()).floor().max(1.0);
        let next = qm as f64 + a * qn as f64;
        if next > limit as f64 {
            break;
        }
        let q_next = qm + a as u64 * qn;
        let mut t = theta(q_next);
        if t != 0.0 && t.signum() == tn.signum() {
            t -= tn.signum();
        }
        (qm, tm, qn, tn) = (qn, tn, q_next, t);
        // frac(ω/2π) > ½ gives a first partial quotient 1: q = 1 again, now with the error to
        // the nearer integer. List each separation once, with that (smaller) error.
        if out.last().map(|&(q, _)| q) == Some(qn) {
            out.pop();
        }
        out.push((qn, tn));
    }
    out
}

fn float_convergents(w: f64, limit: u64) -> Vec<(u64, f64)> {
    convergents(|q| turns_nearest(q as f64, w), limit)
}

/// Signed phase of s·2π·a/b in turns, (−½, ½], from exact integers.
fn exact_turns(s: u64, a: i64, b: i64) -> f64 {
    let b = b as i128;
    let mut r = (s as i128 * a as i128).rem_euclid(b);
    if 2 * r > b {
        r -= b;
    }
    r as f64 / b as f64
}

/// The first s in 1..=max_sep whose phase distance |s·ω mod 2π| ≤ tol, for a float ω.
///
/// The first such s beats every smaller separation, so it is a best approximation of the first
/// kind of ω/2π: a convergent q_n or an intermediate fraction q_{n−1} + j·q_n (1 ≤ j ≤ a_{n+1}),
/// whose errors |θ_{n−1}| − j|θ_n| decrease linearly in j. Each level is solved for j and the
/// candidates are verified by direct evaluation, so the cost is O(number of levels), not
/// O(max_sep).
pub fn first_within_tol_float(w: f64, tol: f64, max_sep: u64) -> Option<u64> {
    first_within_tol_by(|q| turns_nearest(q as f64, w), tol, max_sep)
}

/// [`first_within_tol_float`] for ω = 2π·a/b (exact integers), so that huge b (`pi/1e18`)
/// costs O(levels) rather than a scan of b separations.
pub fn first_within_tol_exact(a: i64, b: i64, tol: f64, max_sep: u64) -> Option<u64> {
    first_within_tol_by(|q| exact_turns(q, a, b), tol, max_sep)
}

fn first_within_tol_by(theta: impl Fn(u64) -> f64, tol: f64, max_sep: u64) -> Option<u64> {
    let d = tol / std::f64::consts::TAU;
    let dist = |s: u64| theta(s).abs();
    if max_sep == 0 {
        return None;
    }
    if dist(1) <= d {
        return Some(1);
    }
    let conv = convergents(&theta, u64::MAX / 4);
    let mut prev = (0u64, -1.0f64);
    for &(qn, tn) in &conv {
        let (qm, tm) = prev;
        prev = (qn, tn);
        if tn == 0.0 {
            return None;
        }
        let a = (tm.abs() / tn.abs()).floor().max(1.0) as u64;
        let j0 = ((tm.abs() - d) / tn.abs()).ceil().max(1.0) as u64;
        let lo = j0.saturating_sub(1).max(1);
        for j in lo..=(j0 + 1).min(a) {
            let s = qm + j * qn;
            if s > max_sep {
                return None;
            }
            if dist(s) <= d {
                return Some(s);
            }
        }
        let q_next = qm + a * qn;
        if q_next > max_sep {
            return None;
        }
    }
    None
}

/// Period analysis of one frequency (see the module docs).
///
/// ```
/// use attnlab_core::position::frequencies::Omega;
/// use attnlab_core::spectrum::period::period;
/// let r = period(Omega::parse("pi/2").unwrap(), 1e-3, 1000).unwrap();
/// assert_eq!(r.first_repeat, Some(4));
/// let r = period(Omega::parse("1").unwrap(), 1e-3, 10_000_000).unwrap();
/// assert_eq!(r.first_repeat, None);
/// assert_eq!(r.near_repeats[4].separation, 44); // 1/2π = [0; 6, 3, 1, 1, 7, …]: 1, 6, 19, 25, 44
/// ```
///
/// # Errors
/// `tol` not in (0, π]; `max_sep` not in 1..=2⁴⁰ ([`MAX_POSITION`]).
pub fn period(omega: Omega, tol: f64, max_sep: u64) -> Result<PeriodReport> {
    if !(tol > 0.0 && tol <= std::f64::consts::PI) {
        return Err(Error::invalid(
            "tol",
            tol,
            "a phase tolerance in (0, π] radians, e.g. 1e-3",
        ));
    }
    if max_sep == 0 || max_sep > MAX_POSITION {
        return Err(Error::invalid(
            "max-sep",
            max_sep,
            "a separation bound in 1..=2^40 (phases s·ω stay accurate below it)",
        ));
    }
    let w = omega.value();
    let label = OmegaLabel {
        label: omega.label(),
        value: w,
    };
    let wavelength = std::f64::consts::TAU / w.abs();
    match omega.turns_fraction() {
        Some((a, b)) => {
            let r = a.rem_euclid(b);
            let near_repeats = exact_convergents(r, b)
                .into_iter()
                .map(|q| NearRepeat {
                    separation: q,
                    phase_error: exact_signed(q, a, b),
                })
                .collect();
            // The exact repeat b is within any tolerance; before it, the best approximations.
            let first_within_tol = first_within_tol_exact(a, b, tol, max_sep)
                .or((b as u64 <= max_sep).then_some(b as u64));
            Ok(PeriodReport {
                omega: label,
                exact: true,
                first_repeat: Some(b as u64),
                wavelength,
                near_repeats,
                tol,
                max_sep,
                first_within_tol,
            })
        }
        None => {
            let near_repeats = float_convergents(w, NEAR_REPEAT_LIMIT)
                .into_iter()
                .map(|(q, _)| NearRepeat {
                    separation: q,
                    phase_error: std::f64::consts::TAU * turns_nearest(q as f64, w),
                })
                .collect();
            Ok(PeriodReport {
                omega: label,
                exact: false,
                first_repeat: None,
                wavelength,
                near_repeats,
                tol,
                max_sep,
                first_within_tol: first_within_tol_float(w, tol, max_sep),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phase::exact_phase_distance;
    use rand::{RngExt, SeedableRng};

    #[test]
    fn exact_periods() {
        let r = period(Omega::parse("pi/2").unwrap(), 1e-9, 100).unwrap();
        assert_eq!(r.first_repeat, Some(4));
        assert_eq!(r.first_within_tol, Some(4));
        assert_eq!(
            r.near_repeats.last().unwrap(),
            &NearRepeat {
                separation: 4,
                phase_error: 0.0
            }
        );
        let r = period(Omega::parse("2*pi*3/7").unwrap(), 1e-9, 100).unwrap();
        assert_eq!(r.first_repeat, Some(7));
        // 3/7 = [0; 2, 3] → denominators 1, 2, 7; 2·(6π/7) = 12π/7 ≡ −2π/7.
        let seps: Vec<u64> = r.near_repeats.iter().map(|n| n.separation).collect();
        assert_eq!(seps, vec![1, 2, 7]);
        assert!((r.near_repeats[1].phase_error + std::f64::consts::TAU / 7.0).abs() < 1e-15);
    }

    #[test]
    fn convergents_of_one_radian() {
        // 1/(2π) = 0.15915494309189535 = [0; 6, 3, 1, 1, 7, 2, 146, 3, 6, …] (computed by hand from
        // its decimal expansion): denominators 6, 19, 25, 44, 333, 710, 103993, 312689, ...
        let r = period(Omega::float(1.0).unwrap(), 1e-3, 10_000_000).unwrap();
        let seps: Vec<u64> = r
            .near_repeats
            .iter()
            .map(|n| n.separation)
            .take(9)
            .collect();
        assert_eq!(seps, vec![1, 6, 19, 25, 44, 333, 710, 103993, 312689]);
        // 710 rad = 113 turns + 6.0288e-5 rad (710 − 226π, with 226π = 709.99993971…).
        assert!(
            (r.near_repeats[6].phase_error - (710.0 - 226.0 * std::f64::consts::PI)).abs() < 1e-12
        );
        // Phase errors shrink along the convergents.
        for w in r.near_repeats.windows(2).skip(1) {
            assert!(w[1].phase_error.abs() < w[0].phase_error.abs());
        }
    }

    #[test]
    fn first_within_tol_matches_a_brute_force_scan() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for _ in 0..60 {
            let w: f64 = rng.random_range(1e-3..7.0);
            let tol: f64 = 10f64.powf(rng.random_range(-5.0..-1.0));
            let max_sep = 200_000u64;
            let brute = (1..=max_sep)
                .find(|&s| turns_nearest(s as f64, w).abs() * std::f64::consts::TAU <= tol);
            assert_eq!(
                first_within_tol_float(w, tol, max_sep),
                brute,
                "w={w} tol={tol}"
            );
        }
    }

    #[test]
    fn exact_first_within_tol_matches_a_scan_and_handles_huge_periods() {
        // Against a brute-force scan of the exact phase distance for small b.
        for (a, b) in [(1i64, 7i64), (3, 7), (5, 97), (-2, 9), (13, 1000), (1, 4)] {
            for tol in [1e-9, 1e-3, 0.1, 0.7] {
                let brute = (1..=2000u64).find(|&s| exact_phase_distance(s, a, b) <= tol);
                let got = first_within_tol_exact(a, b, tol, 2000)
                    .or((b as u64 <= 2000).then_some(b as u64));
                assert_eq!(got, brute, "a={a} b={b} tol={tol}");
            }
        }
        // A period of ~10¹⁵ (a scan would take days): the convergent search must agree with the
        // float search on the rounded ω. They differ by s·|ω_f64 − ω| ≤ 1e6·4e-16 rad at the
        // answer, far inside the 1e-6 rad tolerance unless a candidate sits on its edge.
        let (a, b) = (123_456_789i64, 1_000_000_000_000_037i64);
        let w = std::f64::consts::TAU * a as f64 / b as f64;
        let got = first_within_tol_exact(a, b, 1e-6, MAX_POSITION);
        assert!(got.is_some());
        assert_eq!(got, first_within_tol_float(w, 1e-6, MAX_POSITION));
        let r = period(Omega::parse("pi/1e18").unwrap(), 1e-12, MAX_POSITION).unwrap();
        assert_eq!(
            (r.first_repeat, r.first_within_tol),
            (Some(2_000_000_000_000_000_000), Some(1))
        );
        assert!(period(Omega::float(1.0).unwrap(), 1e-3, MAX_POSITION + 1).is_err());
    }

    #[test]
    fn near_repeats_list_each_separation_once() {
        // ω = 4 and 1e4 have frac(ω/2π) > ½ (0.637, 0.549): separation 1 used to appear twice.
        for w in [4.0, 1e4, 3.5, 0.3] {
            let r = period(Omega::float(w).unwrap(), 1e-3, 1000).unwrap();
            let seps: Vec<u64> = r.near_repeats.iter().map(|n| n.separation).collect();
            assert!(seps.windows(2).all(|p| p[0] < p[1]), "w={w}: {seps:?}");
            assert_eq!(seps[0], 1);
            // Errors of later convergents shrink (best approximations).
            for p in r.near_repeats.windows(2).skip(1) {
                assert!(p[1].phase_error.abs() < p[0].phase_error.abs(), "w={w}");
            }
        }
    }

    #[test]
    fn rejects_bad_tolerances() {
        assert!(period(Omega::float(1.0).unwrap(), 0.0, 10).is_err());
        assert!(period(Omega::float(1.0).unwrap(), f64::NAN, 10).is_err());
        assert!(period(Omega::float(1.0).unwrap(), 1e-3, 0).is_err());
    }
}
