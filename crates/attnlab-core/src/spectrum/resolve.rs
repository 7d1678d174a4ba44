//! Which separations a frequency set distinguishes from separation 0.
//!
//! A separation s is indistinguishable from 0 when every plane has turned by a whole number of
//! turns: s·ω_k ≡ 0 (mod 2π) for all k. The *margin* of s is the largest per-plane phase distance
//! from 0 mod 2π, `margin(s) = max_k |s·ω_k mod 2π|` (wrapped to [0, π]); s aliases 0 when the
//! margin is within a tolerance. Exact sets (every ω a rational multiple of π) repeat exactly at
//! the common period lcm(b_k) (ω_k = 2π·a_k/b_k).

use serde::Serialize;

use super::angle::{exact_phase_distance, phase_distance, turns_fixed};
use crate::position::frequencies::Omega;
use crate::{Error, Result};

/// Default alias tolerance (radians). The fast margin evaluation is accurate to ~1e-14 rad
/// (see [`resolve`]), so 1e-9 rad is far above numerical noise while any separation it flags
/// is, for every plane, within a billionth of a radian of a full turn — indistinguishable from
/// separation 0 by any real implementation (f32 angles alone are only accurate to ~1e-7·s·ω).
pub const DEFAULT_TOL: f64 = 1e-9;

/// The result of [`resolve`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resolution {
    /// L: separations 1..L−1 are examined.
    pub context: u64,
    /// The alias tolerance (radians).
    pub tol: f64,
    /// True when no separation in 1..L−1 aliases 0 (margin ≤ tol).
    pub resolves: bool,
    /// Whether every frequency is an exact rational multiple of π.
    pub exact: bool,
    /// lcm of the b_k for exact sets (null for float sets, or beyond 2⁶⁴).
    pub common_period: Option<u64>,
    /// The first separation whose margin is ≤ tol.
    pub first_alias: Option<u64>,
    /// min over s in 1..L−1 of margin(s), radians (null when L = 1).
    pub min_margin: Option<f64>,
    /// The (first) separation where the minimum margin occurs.
    pub margin_at: Option<u64>,
}

const TWO64: f64 = 18_446_744_073_709_551_616.0;
/// Steps between exact re-synchronisations of the incremental phases.
const RESYNC: u64 = 8192;

/// Calls `f(s, margin_fixed)` for s in start..end, where margin_fixed is the largest per-plane
/// distance from 0 in units of 2⁻⁶⁴ turns. Phases advance by wrapping 64-bit addition of
/// [`turns_fixed`]`(1, ω)` and are re-synchronised from [`turns_fixed`]`(s, ω)` every
/// [`RESYNC`] steps, so the error stays below ~RESYNC·2⁻⁶³ turns (≈ 6e-15 rad).
fn scan_fixed(ws: &[f64], start: u64, end: u64, mut f: impl FnMut(u64, u64)) {
    let step: Vec<u64> = ws.iter().map(|&w| turns_fixed(1.0, w)).collect();
    let mut u = vec![0u64; ws.len()];
    let mut s = start;
    while s < end {
        let block_end = (s + RESYNC).min(end);
        for (uk, &w) in u.iter_mut().zip(ws) {
            *uk = turns_fixed(s as f64, w).wrapping_sub(turns_fixed(1.0, w));
        }
        for t in s..block_end {
            let mut m = 0u64;
            for (uk, &dk) in u.iter_mut().zip(&step) {
                *uk = uk.wrapping_add(dk);
                m = m.max((*uk as i64).unsigned_abs());
            }
            f(t, m);
        }
        s = block_end;
    }
}

/// The margin of separation `s`, evaluated directly with the accurate reduction (the reference
/// the fast scan is tested against).
pub fn margin_direct(ws: &[f64], s: u64) -> f64 {
    ws.iter()
        .map(|&w| phase_distance(s as f64, w))
        .fold(0.0, f64::max)
}

/// (min margin, where, first alias) in fixed point over start..end.
fn scan_range(ws: &[f64], start: u64, end: u64, tol_fixed: u64) -> (u64, u64, Option<u64>) {
    let (mut best, mut at, mut alias) = (u64::MAX, start, None);
    scan_fixed(ws, start, end, |s, m| {
        if m < best {
            (best, at) = (m, s);
        }
        if alias.is_none() && m <= tol_fixed {
            alias = Some(s);
        }
    });
    (best, at, alias)
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Largest context [`resolve`] accepts (2³⁰ ≈ 1.07·10⁹ positions).
pub const MAX_CONTEXT: u64 = 1 << 30;

/// Largest scan work (separations scanned × planes) [`resolve`] accepts: 2³⁴ ≈ 1.7·10¹⁰
/// phase updates, about 8 s on two cores in a release build (measured: 64 planes × 10⁸
/// separations in 3.0 s). Exact sets scan only up to their common period, but one thread of
/// exact integer residues costs ~3.3 ns per update (2 planes × 10⁸ in 0.67 s), so their cap is
/// [`MAX_EXACT_WORK`].
pub const MAX_WORK: u64 = 1 << 34;

/// [`MAX_WORK`] for exact sets: 2³¹ ≈ 2.1·10⁹ updates, about 7 s.
pub const MAX_EXACT_WORK: u64 = 1 << 31;

fn check_work(context: u64, end: u64, planes: usize, cap: u64) -> Result<()> {
    let work = (end as u128).saturating_mul(planes as u128);
    if work > cap as u128 {
        let max_l = cap / planes.max(1) as u64;
        return Err(Error::invalid(
            "context",
            context,
            format!(
                "at most {max_l} positions for {planes} planes (the scan costs separations × planes and is capped at about 8 s)"
            ),
        ));
    }
    Ok(())
}

/// Resolution of a frequency set within a context of `context` positions.
///
/// * Exact sets: phases are integers s·a_k mod b_k (exact, incremental); `common_period` =
///   lcm(b_k); with the default tolerance the first alias is the common period when it is < L.
/// * Float (or mixed) sets: phases in 64-bit fixed point (see `scan_fixed`), two threads
///   splitting 1..L−1 when L·planes > 10⁶. Cost O(L·planes): L = 2²⁰ with 64 planes is ~6.7·10⁷
///   wrapping additions.
///
/// ```
/// use attnlab_core::position::frequencies::parse_omega_list;
/// use attnlab_core::spectrum::resolve::resolve;
/// let r = resolve(&parse_omega_list("pi/2,pi/3").unwrap(), 13, 1e-9).unwrap();
/// assert_eq!((r.common_period, r.first_alias, r.resolves), (Some(12), Some(12), false));
/// assert!(resolve(&parse_omega_list("pi/2,pi/3").unwrap(), 12, 1e-9).unwrap().resolves);
/// ```
///
/// # Errors
/// `context` not in 1..=[`MAX_CONTEXT`] or a scan longer than [`MAX_WORK`] plane-steps; `tol`
/// not in (0, π]; an empty set.
pub fn resolve(omegas: &[Omega], context: u64, tol: f64) -> Result<Resolution> {
    if context == 0 || context > MAX_CONTEXT {
        return Err(Error::invalid(
            "context",
            context,
            "a number of positions in 1..=2^30 (separations 1..L-1 are examined)",
        ));
    }
    if !(tol > 0.0 && tol <= std::f64::consts::PI) {
        return Err(Error::invalid(
            "tol",
            tol,
            "a phase tolerance in (0, π] radians, e.g. 1e-9",
        ));
    }
    if omegas.is_empty() {
        return Err(Error::invalid(
            "frequency set",
            "(empty)",
            "at least one frequency",
        ));
    }
    let fracs: Option<Vec<(i64, i64)>> = omegas.iter().map(|o| o.turns_fraction()).collect();
    let (mut min_margin, mut margin_at, mut first_alias) = (None, None, None);
    let mut common_period = None;
    let exact = fracs.is_some();
    if let Some(fr) = fracs {
        let mut l: Option<u128> = Some(1);
        for &(_, b) in &fr {
            l = l.and_then(|l| (l / gcd(l, b as u128)).checked_mul(b as u128));
        }
        common_period = l.and_then(|l| u64::try_from(l).ok());
        // Residues r_k = s·a_k mod b_k, advanced by a_k mod b_k with one conditional subtraction
        // (exact integers; no division in the loop).
        // u64: r_k + a_k < 2·b_k < 2⁶⁴ cannot overflow.
        let steps: Vec<(u64, u64)> = fr
            .iter()
            .map(|&(a, b)| (a.rem_euclid(b) as u64, b as u64))
            .collect();
        let mut r: Vec<u64> = vec![0; fr.len()];
        let mut best = (f64::INFINITY, 0u64);
        // Margins repeat with the common period P and vanish at s = P, so 1..=P covers every
        // value (and the first alias) when P < L.
        let end = common_period.map_or(context, |p| context.min(p.saturating_add(1)));
        check_work(context, end, fr.len(), MAX_EXACT_WORK)?;
        for s in 1..end {
            let mut m = 0.0f64;
            for (rk, &(a, b)) in r.iter_mut().zip(&steps) {
                *rk += a;
                if *rk >= b {
                    *rk -= b;
                }
                let d = (*rk).min(b - *rk) as f64 / b as f64;
                m = m.max(d);
            }
            let m = std::f64::consts::TAU * m;
            if m < best.0 {
                best = (m, s);
            }
            if first_alias.is_none() && m <= tol {
                first_alias = Some(s);
            }
        }
        if context > 1 {
            (min_margin, margin_at) = (Some(best.0), Some(best.1));
        }
        debug_assert!(fr
            .iter()
            .all(|&(a, b)| exact_phase_distance(b as u64, a, b) == 0.0));
    } else if context > 1 {
        let ws: Vec<f64> = omegas.iter().map(|o| o.value()).collect();
        check_work(context, context, ws.len(), MAX_WORK)?;
        let tol_fixed = (tol / std::f64::consts::TAU * TWO64) as u64;
        let work = context as f64 * ws.len() as f64;
        let (best, at, alias) = if work > 1e6 {
            let mid = context / 2;
            let (a, b) = std::thread::scope(|sc| {
                let h = sc.spawn(|| scan_range(&ws, mid, context, tol_fixed));
                let a = scan_range(&ws, 1, mid, tol_fixed);
                (a, h.join().expect("resolution thread panicked"))
            });
            let best = if b.0 < a.0 { (b.0, b.1) } else { (a.0, a.1) };
            (best.0, best.1, a.2.or(b.2))
        } else {
            scan_range(&ws, 1, context, tol_fixed)
        };
        min_margin = Some(best as f64 / TWO64 * std::f64::consts::TAU);
        margin_at = Some(at);
        first_alias = alias;
    }
    Ok(Resolution {
        context,
        tol,
        resolves: first_alias.is_none(),
        exact,
        common_period,
        first_alias,
        min_margin,
        margin_at,
    })
}

/// The stronger property an unmasked layer needs: every pair of separations in
/// −(L−1)..(L−1) is told apart (an unmasked layer compares each query with keys on both sides).
///
/// R(s₁ω) = R(s₂ω) in every plane exactly when s₁ − s₂ aliases 0, and the differences of two
/// separations in −(L−1)..(L−1) are 1..2(L−1) in magnitude, so the property is
/// [`resolve`] over a context of 2L − 1. When difference d aliases 0 the pair ⌈d/2⌉ and −⌊d/2⌋
/// coincide (for {π/2, π/3} at L = 12: d = 12, so +6 and −6).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairwiseDistinct {
    /// No difference 1..2(L−1) aliases 0.
    pub holds: bool,
    /// The largest difference examined, 2(L−1).
    pub max_difference: u64,
    /// The first difference that aliases 0.
    pub first_alias: Option<u64>,
    /// Two separations in −(L−1)..(L−1) that coincide: ⌈d/2⌉ and −⌊d/2⌋ for the first alias d.
    pub coinciding: Option<(i64, i64)>,
}

/// Checks [`PairwiseDistinct`] for a context of `context` positions: [`resolve`] over 2L − 1.
///
/// ```
/// use attnlab_core::position::frequencies::parse_omega_list;
/// use attnlab_core::spectrum::resolve::{pairwise, resolve, DEFAULT_TOL};
/// let set = parse_omega_list("pi/2,pi/3").unwrap();
/// // Every separation 1..11 is distinguished from 0 …
/// assert!(resolve(&set, 12, DEFAULT_TOL).unwrap().resolves);
/// // … but +6 and −6 coincide: their difference 12 is the common period.
/// let p = pairwise(&set, 12, DEFAULT_TOL).unwrap();
/// assert!(!p.holds);
/// assert_eq!(p.coinciding, Some((6, -6)));
/// assert!(pairwise(&set, 6, DEFAULT_TOL).unwrap().holds); // differences up to 10 < 12
/// ```
///
/// # Errors
/// As [`resolve`], for the doubled context (2L − 1 ≤ [`MAX_CONTEXT`]).
pub fn pairwise(omegas: &[Omega], context: u64, tol: f64) -> Result<PairwiseDistinct> {
    let doubled = context
        .checked_mul(2)
        .map(|c| c - 1)
        .filter(|&c| c <= MAX_CONTEXT)
        .ok_or_else(|| {
            Error::invalid(
                "context",
                context,
                "at most 2^29 positions for the pairwise check (it examines differences up to 2(L−1))",
            )
        })?;
    let r = resolve(omegas, doubled, tol)?;
    Ok(PairwiseDistinct {
        holds: r.resolves,
        max_difference: doubled - 1,
        first_alias: r.first_alias,
        coinciding: r
            .first_alias
            .map(|d| (d.div_ceil(2) as i64, -((d / 2) as i64))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::frequencies::{parse_omega_list, RotaryFrequencies};

    fn floats(f: &RotaryFrequencies) -> Vec<Omega> {
        f.inv_freq
            .iter()
            .map(|&w| Omega::float(w).unwrap())
            .collect()
    }

    #[test]
    fn exact_common_period() {
        let set = parse_omega_list("pi/2,pi/3").unwrap();
        let r = resolve(&set, 100, DEFAULT_TOL).unwrap();
        assert_eq!(r.common_period, Some(12));
        assert_eq!(r.first_alias, Some(12));
        assert_eq!((r.min_margin, r.margin_at), (Some(0.0), Some(12)));
        // Below the period the smallest margin is π/2, first at s = 1 (π/2 and π/3: max is π/2;
        // s = 4 gives 0 and 4π/3 ≡ −2π/3, i.e. 2π/3 > π/2).
        let r = resolve(&set, 12, DEFAULT_TOL).unwrap();
        assert!(r.resolves);
        assert_eq!(r.margin_at, Some(1));
        assert!((r.min_margin.unwrap() - std::f64::consts::FRAC_PI_2).abs() < 1e-15);
    }

    #[test]
    fn fast_scan_matches_direct_evaluation() {
        // Every separation up to 2^14 and a sample up to 2^20 for base 10000, d = 128: the fixed-point
        // scan must agree with the accurate direct reduction to 1e-13 rad (its error bound is
        // RESYNC·2^-63 turns ≈ 6e-15 rad, the direct evaluation's ~1e-15).
        let f = RotaryFrequencies::from_base(10000.0, 128).unwrap();
        let ws = f.inv_freq.clone();
        let mut worst = 0.0f64;
        let mut check = |start: u64, end: u64| {
            scan_fixed(&ws, start, end, |s, m| {
                let fast = m as f64 / TWO64 * std::f64::consts::TAU;
                worst = worst.max((fast - margin_direct(&ws, s)).abs());
            })
        };
        check(1, 1 << 14);
        check((1 << 20) - 20_000, 1 << 20);
        assert!(worst < 1e-13, "worst {worst}");
    }

    #[test]
    fn float_min_margin_matches_a_direct_scan() {
        let f = RotaryFrequencies::from_base(500.0, 8).unwrap();
        let r = resolve(&floats(&f), 300_000, DEFAULT_TOL).unwrap();
        let (mut best, mut at) = (f64::INFINITY, 0);
        for s in 1..300_000u64 {
            let m = margin_direct(&f.inv_freq, s);
            if m < best {
                (best, at) = (m, s);
            }
        }
        assert_eq!(r.margin_at, Some(at));
        assert!((r.min_margin.unwrap() - best).abs() < 1e-13);
        assert!(r.resolves);
    }

    #[test]
    fn single_plane_alias_agrees_with_the_period_search() {
        // Two independent algorithms: the resolution scan over every s, and the continued-fraction
        // (semiconvergent) search of `period::first_within_tol_float`.
        let mut found = 0;
        for (w, tol) in [
            (1.0, 1e-4),
            (1.0, 2e-5),
            (0.37, 1e-3),
            (2.5, 3e-6),
            (0.01, 1e-4),
        ] {
            let one = [Omega::float(w).unwrap()];
            let got = resolve(&one, 400_000, tol).unwrap().first_alias;
            assert_eq!(
                got,
                super::super::period::first_within_tol_float(w, tol, 399_999),
                "w={w} tol={tol}"
            );
            found += got.is_some() as usize;
        }
        assert!(
            found >= 3,
            "the comparison must include real aliases ({found})"
        );
    }

    #[test]
    fn bad_inputs() {
        let set = parse_omega_list("pi/2").unwrap();
        assert!(resolve(&set, 0, 1e-9).is_err());
        assert!(resolve(&set, 10, 0.0).is_err());
        assert!(resolve(&set, 10, -1.0).is_err());
    }

    #[test]
    fn resolve_rejects_contexts_beyond_the_work_cap() {
        let set = parse_omega_list("pi/2,0.3").unwrap();
        assert!(resolve(&set, MAX_CONTEXT + 1, 1e-9).is_err());
        let many = RotaryFrequencies::from_base(10000.0, 128).unwrap();
        let e = resolve(&floats(&many), MAX_CONTEXT, 1e-9)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("at most 268435456 positions for 64 planes"),
            "{e}"
        );
        // An exact set with a small common period scans only that far: any context is cheap.
        assert_eq!(
            resolve(&parse_omega_list("pi/2").unwrap(), MAX_CONTEXT, 1e-9)
                .unwrap()
                .first_alias,
            Some(4)
        );
    }
}
