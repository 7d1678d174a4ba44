//! Which separations a frequency set distinguishes from separation 0.
//!
//! A separation s is indistinguishable from 0 when every plane has turned by a whole number of
//! turns: s·ω_k ≡ 0 (mod 2π) for all k. The *margin* of s is the largest per-plane phase distance
//! from 0 mod 2π, `margin(s) = max_k |s·ω_k mod 2π|` (wrapped to [0, π]); s aliases 0 when the
//! margin is within a tolerance. Exact sets (every ω a rational multiple of π) repeat exactly at
//! the common period lcm(b_k) (ω_k = 2π·a_k/b_k).

use serde::Serialize;

use super::angle::{exact_phase_distance, phase_distance, turns_fixed, turns_nearest};
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

/// The margin of `s` in fixed point (units of 2⁻⁶⁴ turns), each plane's phase evaluated directly
/// with [`turns_fixed`] (accurate to ~2 units): `max_k |turns_fixed(s, ω_k)|` as a signed
/// fraction of a turn. The value the pruned search reports, and its reference in tests.
fn margin_fixed_direct(ws: &[f64], s: u64) -> u64 {
    ws.iter()
        .map(|&w| (turns_fixed(s as f64, w) as i64).unsigned_abs())
        .max()
        .unwrap_or(0)
}

/// Separations per leaf of the pruned search (evaluated one by one).
const LEAF: u64 = 16;
/// Slack (turns) subtracted from interval lower bounds before pruning: far above their
/// floating-point error (~10⁻¹⁶ turns: [`turns_nearest`] is accurate to ~10⁻¹⁶, and the arc
/// length only matters while it is below one turn).
const BOUND_SLACK: f64 = 1e-12;

/// Branch and bound over separations for min over s in 1..L−1 of `margin_fixed_direct(s)`.
///
/// For an interval of separations `[a, b]`, plane `k`'s phase sweeps the arc from
/// `φ_k(a) = a·ω_k/2π (mod 1)` over `(b − a)·|ω_k|/2π` turns. If the arc contains no whole turn,
/// every separation in the interval is at least `min(‖start‖, ‖end‖)` turns from 0 on that plane,
/// so `LB = max_k` of that bound is a lower bound on the margin of the whole interval; when
/// `LB − slack ≥` the best margin found so far, no separation in it can be strictly better (nor
/// an earlier alias, since the best so far is then above the tolerance or an alias is known).
/// Otherwise the interval is halved. Intervals are visited depth first, left half first, so
/// leaves — evaluated exactly, planes fastest first with an early exit once a plane reaches the
/// best margin — come in increasing `s`: the first separation attaining the minimum and the first
/// alias are found exactly as a full scan in order would find them.
///
/// Returns `None` when the work (plane evaluations) exceeds `budget`, so that sets which defeat
/// the pruning fall back to the full scan at little extra cost.
fn pruned_search(
    ws: &[f64],
    context: u64,
    tol_fixed: u64,
    budget: u64,
) -> Option<(u64, u64, Option<u64>)> {
    // Slowest planes first for interval bounds (short arcs prune), fastest first for leaves.
    let mut slow: Vec<usize> = (0..ws.len()).collect();
    slow.sort_by(|&i, &j| ws[i].abs().total_cmp(&ws[j].abs()).then(i.cmp(&j)));
    let fast: Vec<usize> = slow.iter().rev().copied().collect();
    let theta: Vec<f64> = ws.iter().map(|w| w.abs() / std::f64::consts::TAU).collect();
    let (mut best, mut at, mut alias) = (u64::MAX, 1u64, None);
    let mut evals = 0u64;
    let leaf = |s: u64, best: &mut u64, at: &mut u64, alias: &mut Option<u64>, evals: &mut u64| {
        let mut m = 0u64;
        for &k in &fast {
            *evals += 1;
            m = m.max((turns_fixed(s as f64, ws[k]) as i64).unsigned_abs());
            if m >= *best {
                break;
            }
        }
        if m < *best {
            (*best, *at) = (m, s);
        }
        if alias.is_none() && m <= tol_fixed {
            *alias = Some(s);
        }
    };
    let dist = |x: f64| (x - x.round()).abs();
    let mut stack = vec![(1u64, context - 1)];
    while let Some((a, b)) = stack.pop() {
        if evals > budget {
            return None;
        }
        if b - a < LEAF {
            for s in a..=b {
                leaf(s, &mut best, &mut at, &mut alias, &mut evals);
            }
            continue;
        }
        let best_turns = if best == u64::MAX {
            1.0
        } else {
            best as f64 / TWO64
        };
        let steps = (b - a) as f64;
        let mut pruned = false;
        for &k in &slow {
            let span = steps * theta[k];
            // A plane whose arc spans more than 1 − 2·best bounds by less than best, and so does
            // every faster plane.
            if (1.0 - span) / 2.0 < best_turns - BOUND_SLACK {
                break;
            }
            evals += 1;
            let phi = turns_nearest(a as f64, ws[k]);
            let (lo, hi) = if ws[k] > 0.0 {
                (phi, phi + span)
            } else {
                (phi - span, phi)
            };
            let covers_turn = (lo <= 0.0 && hi >= 0.0) || hi >= 1.0 || lo <= -1.0;
            if !covers_turn && dist(lo).min(dist(hi)) - BOUND_SLACK >= best_turns {
                pruned = true;
                break;
            }
        }
        if !pruned {
            let mid = a + (b - a) / 2;
            stack.push((mid + 1, b));
            stack.push((a, mid));
        }
    }
    Some((best, at, alias))
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
/// * Float (or mixed) sets: phases in 64-bit fixed point, margin(s) = max_k |s·ω_k/2π mod 1|.
///   A branch and bound over intervals of separations (`pruned_search`) skips every interval in
///   which some plane stays farther from a whole turn than the best margin found so far, and
///   evaluates the rest exactly; it finds the same first minimiser and first alias as a scan of
///   every s in order (tested against that scan on random sets). Rotary sets prune to a few
///   thousand evaluations even at L = 2²⁴. Sets that defeat the pruning (its work past
///   L·planes/64 plane evaluations) fall back to the full fixed-point scan (`scan_fixed`, two
///   threads when L·planes > 10⁶, O(L·planes)). The reported margin is the direct evaluation at
///   the minimiser either way.
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
        // The pruned search first (a few thousand plane evaluations for rotary sets at L = 2²⁴);
        // sets it cannot prune fall back to the full scan within 1/8 of the scan's work.
        let budget = ((context as u128 * ws.len() as u128) / 64).max(10_000) as u64;
        let (best, at, alias) = if let Some(found) = pruned_search(&ws, context, tol_fixed, budget)
        {
            found
        } else if work > 1e6 {
            let mid = context / 2;
            let (a, b) = std::thread::scope(|sc| {
                let h = sc.spawn(|| scan_range(&ws, mid, context, tol_fixed));
                let a = scan_range(&ws, 1, mid, tol_fixed);
                // Cannot fail: scan_range does arithmetic on checked inputs and never panics, so
                // the thread returns normally.
                (a, h.join().expect("resolution thread panicked"))
            });
            let best = if b.0 < a.0 { (b.0, b.1) } else { (a.0, a.1) };
            (best.0, best.1, a.2.or(b.2))
        } else {
            scan_range(&ws, 1, context, tol_fixed)
        };
        // Report the margin at the argmin by the direct evaluation (the scan's incremental value
        // is within ~6e-15 rad of it), so both routes give the same number for the same s.
        let best = if best == u64::MAX {
            best
        } else {
            margin_fixed_direct(&ws, at)
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

    /// The full scan the pruned search must reproduce: every s in 1..L−1 in order, the margin by
    /// `margin_fixed_direct`, the first minimiser and the first alias.
    fn full_direct_scan(ws: &[f64], context: u64, tol_fixed: u64) -> (u64, u64, Option<u64>) {
        let (mut best, mut at, mut alias) = (u64::MAX, 1, None);
        for s in 1..context {
            let m = margin_fixed_direct(ws, s);
            if m < best {
                (best, at) = (m, s);
            }
            if alias.is_none() && m <= tol_fixed {
                alias = Some(s);
            }
        }
        (best, at, alias)
    }

    #[test]
    fn pruned_search_gives_the_full_scans_answers_on_random_sets() {
        use crate::rng::{Gaussian, StdGaussian};
        let mut g = StdGaussian::new(12);
        let mut aliased = 0;
        for trial in 0..60 {
            let planes = 1 + trial % 7;
            // Log-uniform |ω| in [1e-4, 3], random signs; a few sets get a large tolerance so
            // that aliases (and the first-alias logic) are exercised.
            let ws: Vec<f64> = (0..planes)
                .map(|_| {
                    let w = 10f64.powf(-4.0 + 4.5 * g.standard_normal().abs().min(1.0));
                    if g.standard_normal() < 0.0 {
                        -w
                    } else {
                        w
                    }
                })
                .collect();
            let context = 2 + (g.standard_normal().abs() * 20_000.0) as u64;
            let tol = if trial % 3 == 0 { 0.05 } else { DEFAULT_TOL };
            let tol_fixed = (tol / std::f64::consts::TAU * TWO64) as u64;
            let want = full_direct_scan(&ws, context, tol_fixed);
            let got = pruned_search(&ws, context, tol_fixed, u64::MAX).expect("no budget");
            assert_eq!(
                got, want,
                "trial {trial}: ω = {ws:?}, L = {context}, tol = {tol}"
            );
            aliased += want.2.is_some() as usize;
            // The incremental scan agrees on the minimiser and to its error bound on the value.
            let (b, a, al) = scan_range(&ws, 1, context, tol_fixed);
            assert_eq!((a, al), (want.1, want.2), "trial {trial}: scan");
            assert!(
                b.abs_diff(want.0) < 1 << 16,
                "trial {trial}: {b} vs {}",
                want.0
            );
        }
        assert!(
            aliased >= 5,
            "the comparison must include aliasing sets ({aliased})"
        );
    }

    #[test]
    fn rotary_sets_prune_and_agree_with_the_full_scan() {
        // base 10000 and 500, d = 16 and 128, at a context the full direct scan can afford here.
        for (base, dim, context) in [
            (10000.0, 128, 50_000),
            (500.0, 16, 200_000),
            (10000.0, 16, 200_000),
        ] {
            let f = RotaryFrequencies::from_base(base, dim).unwrap();
            let tol_fixed = (DEFAULT_TOL / std::f64::consts::TAU * TWO64) as u64;
            let want = full_direct_scan(&f.inv_freq, context, tol_fixed);
            let budget = context * f.inv_freq.len() as u64 / 64;
            let got = pruned_search(&f.inv_freq, context, tol_fixed, budget)
                .expect("rotary sets prune within the budget");
            assert_eq!(got, want, "base {base} d {dim} L {context}");
            let r = resolve(&floats(&f), context, DEFAULT_TOL).unwrap();
            assert_eq!(r.margin_at, Some(want.1));
            assert_eq!(
                r.min_margin,
                Some(want.0 as f64 / TWO64 * std::f64::consts::TAU)
            );
        }
    }

    #[test]
    fn a_set_that_defeats_the_pruning_falls_back_to_the_scan() {
        // A zero budget forces the fallback inside `resolve`'s logic; the answer is the scan's.
        let ws = [0.7, 1.3, 2.9];
        let tol_fixed = (DEFAULT_TOL / std::f64::consts::TAU * TWO64) as u64;
        assert!(pruned_search(&ws, 100_000, tol_fixed, 0).is_none());
        let set: Vec<Omega> = ws.iter().map(|&w| Omega::float(w).unwrap()).collect();
        let r = resolve(&set, 100_000, DEFAULT_TOL).unwrap();
        let want = full_direct_scan(&ws, 100_000, tol_fixed);
        assert_eq!(r.margin_at, Some(want.1));
        // The three-plane set of the `resolve` bench does exhaust the real budget at L = 2^20.
        let three = [1.0, 0.3, 0.05];
        assert!(pruned_search(&three, 1 << 20, tol_fixed, (1u64 << 20) * 3 / 64).is_none());
    }
}
