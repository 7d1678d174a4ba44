//! The smallest base that satisfies the decay criterion, found by a search that cannot step
//! over an island of passing bases.
//!
//! For a frequency family ω_k(b) (the default ω_k = b^(−2k/d), or a scaled type's effective
//! frequencies) the criterion of Men et al. 2024 asks `B_b(m) = Σ_k cos(m·ω_k(b)) ≥ 0` for every
//! m in 1..L. Write `F(b) = min_m B_b(m)`. The passing bases {F ≥ 0} are not an interval: for
//! d = 128 and L ≥ 2¹⁸ they include islands only a few 10⁻⁶ wide (relative) below the first
//! wide passing region, so any fixed grid of bases (the previous search used a 0.05% log grid)
//! can step over the answer.
//!
//! # Method: a certified sweep
//!
//! The sweep moves a base b upwards from 2 and keeps the invariant *every base in [2, b) fails*.
//! At b it needs a *witness* m with `B_b(m) < 0`; then a whole interval [b, b′] is proven to
//! fail at once with that single m:
//!
//! * every ω_k(b) is non-increasing in b (true for every rope type: a larger base slows every
//!   plane; the scaled types apply monotone maps to the default frequencies), so on [b, b′] the
//!   phase m·ω_k lies in `[m·ω_k(b′), m·ω_k(b)]`;
//! * the largest cosine over a phase interval is exact and cheap (1 if it contains a multiple of
//!   2π, else the larger end value), so `U = Σ_k max cos(phase interval of plane k)` bounds
//!   `B_{b″}(m)` for every b″ in [b, b′];
//! * `U < −ε` (ε = [`CERT_SLACK`], far above the ~10⁻¹³ error of the f64 evaluation) proves
//!   that every base of [b, b′] fails. b′ = b·e^h with h doubled after each success and halved
//!   after each failure.
//!
//! When the witness no longer proves a useful step (its own B rises towards 0), a new one is
//! looked for: first near where recent witnesses were (their separations, as they were and
//! scaled by b/b_then — the dips of B move roughly in proportion to b), then by a complete
//! ordered scan of 1..L (strided passes first, then every separation). If the complete scan
//! finds no negative B, b passes: since everything below was proven to fail, b is the smallest
//! passing base. A witness that is negative but too close to 0 to prove a step of relative width
//! [`H_MIN`] (10⁻¹⁰) lets the sweep advance by H_MIN unproven; those gaps are counted and their
//! total width reported (`unproven_width`), so the claim is exact: no island wider than H_MIN
//! (relative) lies below the answer unless it lies inside the reported unproven gaps.
//!
//! Then the island is measured: bases above the answer are tested at relative distances
//! 10⁻⁷·4^j until one fails, and the first failure is bisected to 20% of the width (each
//! passing test is a complete scan, the expensive part at large L).
//!
//! B is evaluated in f64 (directly with the accurate phase reduction for witnesses, by the
//! rotation recurrence of [`scan_b_step`] in the scans). Su's table was computed in float32;
//! the f32 verdict of the answer is reported too ([`F32Check`]).

use rayon::prelude::*;
use serde::Serialize;

use super::decay::scan_b_step;
use super::Watch;
use crate::phase::turns_nearest;
use crate::{Error, Result};

pub mod grid;
pub use grid::{min_base_for_context_on_grid, min_base_search, DEFAULT_GRID_RATIO, MIN_GRID_RATIO};

/// Smallest relative step the sweep proves (10⁻¹⁰ in ln b). Below it a step is taken unproven
/// and counted.
pub const H_MIN: f64 = 1e-10;

/// Margin by which the bound must be negative to prove a step: far above the f64 error of
/// B (≈ planes · 10⁻¹⁵) and of the phase intervals.
pub const CERT_SLACK: f64 = 1e-9;

/// Largest step tried (5% in b).
const H_MAX: f64 = 0.05;

/// Below this proven step a better witness is looked for near the recent ones.
const H_SWITCH: f64 = 1e-6;

/// Evaluations of B per parallel block of the complete scan.
const BLOCK: u64 = 1 << 16;

/// Half-width of the windows searched around hints.
const NARROW: u64 = 32;

/// Largest base searched.
pub const MAX_BASE: f64 = 1e15;

/// How the answer fares in float32 (positions, ω and the products m·ω in f32, cos in f32, the
/// sum in f32 — the way Su's JAX search evaluated B).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct F32Check {
    /// Whether B(m) ≥ 0 for every m < L in float32 at the answer.
    pub passes: bool,
    /// The first m with a negative float32 B, when it fails.
    pub first_negative: Option<u64>,
}

/// The passing island the answer begins.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Island {
    /// The answer (the island's lower edge, to [`H_MIN`]).
    pub start: f64,
    /// The largest base above the answer found to pass (every tested base in between passed).
    pub passes_up_to: f64,
    /// The first base above it found to fail.
    pub fails_at: f64,
    /// `passes_up_to − start`: the island's width as measured (to 20%; at least 10⁻⁷
    /// relative when the first test above already fails).
    pub width: f64,
    /// `width / start`.
    pub rel_width: f64,
}

/// The result of [`certified_min_base`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    /// The smallest passing base (null when none up to [`MAX_BASE`]).
    pub base: Option<f64>,
    /// The end of the last proven-failing interval below it.
    pub failing_below: Option<f64>,
    /// The island of passing bases that starts at `base`.
    pub island: Option<Island>,
    /// Intervals of bases proven to fail, each by one witness.
    pub proven_steps: usize,
    /// Complete scans of 1..L (the expensive evaluations).
    pub full_scans: usize,
    /// Steps of relative width [`H_MIN`] taken without proof.
    pub unproven_steps: usize,
    /// Their total width in ln b (an island lying entirely inside them could be missed).
    pub unproven_width: f64,
    /// The float32 verdict of `base`.
    pub f32_check: Option<F32Check>,
}

crate::choice! {
    /// How the smallest passing base was searched.
    pub enum MinBaseMethod("minimum-base method") {
        /// The certified sweep of this module: every base below the answer is proven to fail,
        /// so no island of passing bases is stepped over.
        CertifiedSweep = "certified_sweep",
        /// The earlier log-grid scan (coarse grid, fine grid, bisection; [`grid`]): can step
        /// over islands narrower than its grid; kept for comparison.
        Grid = "grid",
    }
}

/// The result of a minimum-base search, one variant per method ([`min_base_certified`],
/// [`min_base_search`]). It serialises flat with every method's fields, null where the method
/// has none: `base`, `failing_below`, `method`, `family`, `coarse_ratio`, `fine_ratio`,
/// `rel_precision` (the final bracket's relative width: grid 1e-5, sweep [`H_MIN`]),
/// `evaluations` (grid: grid points, fine grid and bisection; sweep: proven intervals plus
/// complete scans), `island`, `full_scans`, `unproven_steps`, `unproven_width`, `f32_check`.
#[derive(Debug, Clone, PartialEq)]
pub enum MinBase {
    /// The certified sweep of the frequency family named `family`: `default` (b^(−2k/d)) or
    /// the configuration's rope type with its parameters (a scaled type's effective
    /// frequencies).
    CertifiedSweep {
        /// The family's name.
        family: String,
        /// What the sweep found.
        sweep: Sweep,
    },
    /// The grid search of the default frequencies.
    Grid(Grid),
}

/// What the grid search found ([`min_base_search`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grid {
    /// The smallest passing base found (null if none ≤ 1e15).
    pub base: Option<f64>,
    /// The largest base below it known to fail (the bracket's lower end).
    pub failing_below: Option<f64>,
    /// Ratio of consecutive points of the coarse log grid.
    pub coarse_ratio: f64,
    /// Ratio of the fine grid scanned inside the first coarse bracket.
    pub fine_ratio: f64,
    /// Bases evaluated (the same for any number of threads).
    pub evaluations: usize,
}

impl MinBase {
    /// The smallest base found with B_b(m) ≥ 0 for all m in 0..L−1 (`None` if none ≤ 1e15).
    pub fn base(&self) -> Option<f64> {
        self.sweep()
            .map_or_else(|| self.grid().and_then(|g| g.base), |s| s.base)
    }

    /// The largest base below it known to fail (the bracket's lower end).
    pub fn failing_below(&self) -> Option<f64> {
        self.sweep().map_or_else(
            || self.grid().and_then(|g| g.failing_below),
            |s| s.failing_below,
        )
    }

    /// How it was searched.
    pub fn method(&self) -> MinBaseMethod {
        match self {
            MinBase::CertifiedSweep { .. } => MinBaseMethod::CertifiedSweep,
            MinBase::Grid(_) => MinBaseMethod::Grid,
        }
    }

    /// Which frequencies the base generates (the grid searches the default ones).
    pub fn family(&self) -> &str {
        match self {
            MinBase::CertifiedSweep { family, .. } => family,
            MinBase::Grid(_) => "default",
        }
    }

    /// The sweep's findings (the certified method only).
    pub fn sweep(&self) -> Option<&Sweep> {
        match self {
            MinBase::CertifiedSweep { sweep, .. } => Some(sweep),
            MinBase::Grid(_) => None,
        }
    }

    /// The grid's findings (the grid method only).
    pub fn grid(&self) -> Option<&Grid> {
        match self {
            MinBase::Grid(g) => Some(g),
            MinBase::CertifiedSweep { .. } => None,
        }
    }

    /// The island of passing bases the answer begins (the certified method only).
    pub fn island(&self) -> Option<Island> {
        self.sweep().and_then(|s| s.island)
    }

    /// The float32 verdict of the answer (the certified method only).
    pub fn f32_check(&self) -> Option<F32Check> {
        self.sweep().and_then(|s| s.f32_check)
    }
}

impl Serialize for MinBase {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Flat<'a> {
            base: Option<f64>,
            failing_below: Option<f64>,
            method: MinBaseMethod,
            family: &'a str,
            coarse_ratio: Option<f64>,
            fine_ratio: Option<f64>,
            rel_precision: f64,
            evaluations: usize,
            island: Option<Island>,
            full_scans: Option<usize>,
            unproven_steps: Option<usize>,
            unproven_width: Option<f64>,
            f32_check: Option<F32Check>,
        }
        let (grid, sweep) = (self.grid(), self.sweep());
        Flat {
            base: self.base(),
            failing_below: self.failing_below(),
            method: self.method(),
            family: self.family(),
            coarse_ratio: grid.map(|g| g.coarse_ratio),
            fine_ratio: grid.map(|g| g.fine_ratio),
            rel_precision: grid.map_or(H_MIN, |_| grid::PRECISION),
            evaluations: sweep.map_or_else(
                || grid.map_or(0, |g| g.evaluations),
                |s| s.proven_steps + s.full_scans,
            ),
            island: self.island(),
            full_scans: sweep.map(|s| s.full_scans),
            unproven_steps: sweep.map(|s| s.unproven_steps),
            unproven_width: sweep.map(|s| s.unproven_width),
            f32_check: self.f32_check(),
        }
        .serialize(s)
    }
}

/// The smallest base of a frequency family by the certified sweep ([`certified_min_base`]),
/// named `family`. With `exponents` (power-law families ω_k = c_k·b^(−e_k)) every step is
/// proven by a second-order bound; otherwise by interval bounds (slower).
///
/// # Errors
/// `context == 0`; [`crate::ErrorKind::Cancelled`] once `watch` says so.
pub fn min_base_certified(
    at: &(dyn Fn(f64) -> Vec<f64> + Sync),
    exponents: Option<Vec<f64>>,
    family: &str,
    context: u64,
    watch: &Watch,
) -> Result<MinBase> {
    Ok(MinBase::CertifiedSweep {
        family: family.to_string(),
        sweep: certified_min_base(&Family { at, exponents }, context, watch)?,
    })
}

/// [`min_base_certified`] for the default frequencies b^(−2k/d).
///
/// # Errors
/// `dim` odd or zero; as [`min_base_certified`].
pub fn min_base_default(dim: usize, context: u64, watch: &Watch) -> Result<MinBase> {
    if dim == 0 || !dim.is_multiple_of(2) {
        return Err(Error::invalid(
            "rotary dimension",
            dim,
            "an even number ≥ 2",
        ));
    }
    let (at, exps) = default_family(dim);
    min_base_certified(&at, Some(exps), "default", context, watch)
}

/// The smallest base b (for rotary dimension `dim`, frequencies b^(−2k/d)) with
/// `B_b(m) = Σ_k cos(m·b^(−2k/d)) ≥ 0` for every m in 0..L−1, by the certified sweep (which
/// cannot step over an island of passing bases), reporting the fraction done to `progress`.
/// The earlier grid search ([`grid`]) is kept for comparison.
///
/// # Errors
/// `dim` odd or zero; `context == 0`.
pub fn min_base_for_context(
    dim: usize,
    context: u64,
    progress: impl FnMut(f64) + Send,
) -> Result<MinBase> {
    with_progress(progress, |watch| min_base_default(dim, context, watch))
}

/// Runs `f` with a [`Watch`] that never cancels and reports to `progress` (called from several
/// threads: one that finds the lock taken skips its update).
fn with_progress<R>(progress: impl FnMut(f64) + Send, f: impl FnOnce(&Watch) -> R) -> R {
    let progress = std::sync::Mutex::new(progress);
    let report = |x: f64| {
        if let Ok(mut p) = progress.try_lock() {
            (*p)(x);
        }
    };
    f(&Watch {
        progress: &report,
        cancelled: &|| false,
    })
}

/// Largest cos over the phases m·ω for ω in [w_lo, w_hi] (0 ≤ w_lo ≤ w_hi).
fn cos_upper(m: f64, w_lo: f64, w_hi: f64) -> f64 {
    // Width of the phase interval in turns, widened a little against rounding.
    let width = m * (w_hi - w_lo) / std::f64::consts::TAU + 1e-12;
    if width >= 1.0 {
        return 1.0;
    }
    let f = turns_nearest(m, w_lo) - 1e-12; // in [−½, ½]
    let g = f + width;
    if (f <= 0.0 && g >= 0.0) || g >= 1.0 {
        return 1.0;
    }
    let tau = std::f64::consts::TAU;
    (tau * f).cos().max((tau * g).cos())
}

/// `Σ_k max cos` over `[m·lo_k, m·hi_k]`: an upper bound of B(m) for every frequency set
/// between `lo` and `hi` plane by plane. Planes where `lo > hi` (a family that is not monotone)
/// count 1.
fn upper_bound(m: u64, lo: &[f64], hi: &[f64]) -> f64 {
    let m = m as f64;
    lo.iter()
        .zip(hi)
        .map(|(&a, &b)| if a <= b { cos_upper(m, a, b) } else { 1.0 })
        .sum()
}

/// The first m in lo, lo+step, … < hi with B(m) < 0 (by the recurrence), scanned in parallel
/// blocks; the same answer for any number of threads.
pub(crate) fn first_negative_in(ws: &[f64], lo: u64, hi: u64, step: u64) -> Option<u64> {
    use std::sync::atomic::{AtomicU64, Ordering};
    if lo >= hi {
        return None;
    }
    let run = |a: u64, b: u64, stop: &dyn Fn() -> bool| {
        let (mut hit, mut count) = (None, 0u32);
        scan_b_step(ws, a, b, step, |m, v| {
            if v < 0.0 {
                hit = Some(m);
            }
            count = count.wrapping_add(1);
            hit.is_none() && (count % 1024 != 0 || !stop())
        });
        hit
    };
    let evaluations = (hi - lo).div_ceil(step);
    if evaluations <= BLOCK {
        return run(lo, hi, &|| false);
    }
    let best = AtomicU64::new(u64::MAX);
    (0..evaluations.div_ceil(BLOCK))
        .into_par_iter()
        .filter_map(|bi| {
            if bi > best.load(Ordering::Relaxed) {
                return None;
            }
            let a = lo + bi * BLOCK * step;
            let hit = run(a, a.saturating_add(BLOCK * step).min(hi), &|| {
                best.load(Ordering::Relaxed) < bi
            });
            if hit.is_some() {
                best.fetch_min(bi, Ordering::Relaxed);
            }
            hit.map(|m| (bi, m))
        })
        .min_by_key(|&(bi, _)| bi)
        .map(|(_, m)| m)
}

/// The separation with the smallest B in `[c − w, c + w] ∩ [1, L)` (direct evaluation).
fn deepest_near(ws: &[f64], c: u64, w: u64, context: u64) -> Option<(u64, f64)> {
    let lo = c.saturating_sub(w).max(1);
    let hi = c.saturating_add(w + 1).min(context);
    let mut best: Option<(u64, f64)> = None;
    let mut m = lo;
    scan_b_step(ws, lo, hi, 1, |_, v| {
        if best.is_none_or(|(_, b)| v < b) {
            best = Some((m, v));
        }
        m += 1;
        true
    });
    best
}

/// A frequency family: ω_k(b) for a base b, each plane non-increasing in b.
pub struct Family<'a> {
    /// ω_k(b).
    pub at: &'a (dyn Fn(f64) -> Vec<f64> + Sync + 'a),
    /// For power-law families ω_k(b) = c_k·b^(−e_k) (default, linear, longrope, dynamic NTK,
    /// proportional): the exponents e_k, which allow the second-order bound of [`prove`].
    pub exponents: Option<Vec<f64>>,
}

impl Family<'_> {
    /// ω_k(b).
    fn at(&self, b: f64) -> Vec<f64> {
        (self.at)(b)
    }
}

/// The default family b^(−2k/d) of rotary dimension `dim`.
pub fn default_family(dim: usize) -> (impl Fn(f64) -> Vec<f64> + Sync, Vec<f64>) {
    let exps = (0..dim / 2).map(|k| 2.0 * k as f64 / dim as f64).collect();
    (move |b| super::decay::default_freqs(b, dim), exps)
}

/// For a power-law family at t = ln b: with φ_k = m·ω_k, B(t + h) ≤ B + B′·h + ½·M₂·h² for all
/// h ≥ 0, where B′ = Σ e_k·φ_k·sin φ_k and M₂ = Σ e_k²·φ_k·(1 + φ_k) bounds |B″| on [t, ∞)
/// (φ_k only decreases). Returns the largest h for which the right side stays < −ε.
fn taylor_step(m: u64, ws: &[f64], exps: &[f64]) -> Option<f64> {
    let mf = m as f64;
    let (mut b, mut b1, mut m2) = (0.0, 0.0, 0.0);
    for (&w, &e) in ws.iter().zip(exps) {
        let phi = mf * w;
        let (s, c) = (std::f64::consts::TAU * turns_nearest(mf, w)).sin_cos();
        b += c;
        b1 += e * phi * s;
        m2 += e * e * phi * (1.0 + phi);
    }
    let c = b + CERT_SLACK;
    if c >= 0.0 {
        return None;
    }
    let a = 0.5 * m2;
    if a <= 0.0 {
        return (b1 <= 0.0).then_some(H_MAX).or(Some(-c / b1));
    }
    // Root of a·h² + b1·h + c = 0 with c < 0: h = (−b1 + √(b1² − 4ac)) / 2a, computed stably.
    let disc = (b1 * b1 - 4.0 * a * c).sqrt();
    let h = if b1 >= 0.0 {
        -2.0 * c / (b1 + disc)
    } else {
        (disc - b1) / (2.0 * a)
    };
    // A hair less than the root, against rounding.
    Some(h * (1.0 - 1e-9))
}

/// Proves the interval [b, b·e^h] failing with witness m, trying h from `h0` down to
/// [`H_MIN`]; returns the largest h proven and the frequencies at its end.
fn prove(family: &Family, m: u64, ws0: &[f64], b: f64, h0: f64) -> Option<(f64, Vec<f64>)> {
    if let Some(exps) = &family.exponents {
        let h = taylor_step(m, ws0, exps)?.min(H_MAX);
        return (h >= H_MIN).then(|| (h, family.at(b * h.exp())));
    }
    let mut h = h0.clamp(H_MIN, H_MAX);
    loop {
        let ws1 = family.at(b * h.exp());
        if upper_bound(m, &ws1, ws0) < -CERT_SLACK {
            return Some((h, ws1));
        }
        if h <= H_MIN {
            return None;
        }
        h = (h / 4.0).max(H_MIN);
    }
}

/// Whether some m in 1..L has B < 0 at `ws`, looked for near the hints first, then by a
/// complete scan. Returns the deepest negative found near the first hit (and counts scans).
fn find_witness(
    ws: &[f64],
    b: f64,
    context: u64,
    hints: &[(f64, u64)],
    full_scans: &mut usize,
    hints_only: bool,
) -> Option<u64> {
    for &(hb, hm) in hints.iter().rev() {
        let scaled = (hm as f64 * b / hb).round() as u64;
        for c in [scaled, hm] {
            if let Some((m, v)) = deepest_near(ws, c, NARROW, context) {
                if v < -CERT_SLACK {
                    return Some(m);
                }
            }
        }
    }
    if hints_only {
        return None;
    }
    *full_scans += 1;
    for step in [64, 16, 4, 1] {
        if let Some(m) = first_negative_in(ws, 1, context, step) {
            return deepest_near(ws, m, NARROW, context)
                .map(|(d, _)| d)
                .or(Some(m));
        }
    }
    None
}

/// Keeps the 16 most recent witnesses.
fn push_hint(hints: &mut Vec<(f64, u64)>, h: (f64, u64)) {
    hints.push(h);
    if hints.len() > 16 {
        hints.remove(0);
    }
}

/// Whether `ws` passes (no negative B(m) for m in 1..L, complete scan).
fn passes(ws: &[f64], context: u64) -> bool {
    first_negative_in(ws, 1, context, 1).is_none()
}

/// B(m) in float32 as Su's search computed it: f32 ω and positions, f32 products, f32 cosines
/// (here the correctly rounded cosine of the f32 angle), summed in f32 in plane order.
fn b_f32(ws32: &[f32], m: u64) -> f32 {
    let mf = m as f32;
    ws32.iter().map(|&w| ((mf * w) as f64).cos() as f32).sum()
}

/// The float32 verdict of a frequency set: only separations whose f64 B is within the float32
/// error bound of 0 can change sign, so only those are evaluated in f32.
fn f32_check(ws: &[f64], context: u64) -> F32Check {
    let ws32: Vec<f32> = ws.iter().map(|&w| w as f32).collect();
    // |B32(m) − B64(m)| ≤ Σ_k (|m·(w32 − w)| + |m·w32|·2⁻²⁴ + 2⁻²⁴) + planes·2⁻²⁴·planes
    // (angle product, cos rounding, f32 summation); a loose bound is enough.
    let per_m: f64 = ws
        .iter()
        .zip(&ws32)
        .map(|(&w, &w32)| (w32 as f64 - w).abs() + (w32 as f64).abs() * 2f64.powi(-24))
        .sum();
    let n = ws.len() as f64;
    let constant = n * 2f64.powi(-24) * (1.0 + n);
    let mut first = None;
    scan_b_step(ws, 1, context, 1, |m, v| {
        let bound = m as f64 * per_m * 1.01 + constant + 1e-9;
        if v < bound && b_f32(&ws32, m) < 0.0 {
            first = Some(m);
            return false;
        }
        true
    });
    F32Check {
        passes: first.is_none(),
        first_negative: first,
    }
}

/// The smallest base b ≥ 2 whose family `ω(b)` satisfies `B_b(m) ≥ 0` for all m in 1..L, by
/// the certified sweep of the module doc, with the island it begins and its float32 verdict.
/// `watch` gets the progress (the fraction of ln b covered up to a rough estimate of the
/// answer, capped below 1) and stops the search.
///
/// ```
/// use attnlab_core::spectrum::{min_base::certified_min_base, decay::{default_freqs, first_negative}, Watch};
/// use attnlab_core::spectrum::min_base::{default_family, Family};
/// let (at, exps) = default_family(128);
/// let family = Family { at: &at, exponents: Some(exps) };
/// let s = certified_min_base(&family, 1024, &Watch::default()).unwrap();
/// let b = s.base.unwrap();
/// assert!(first_negative(&default_freqs(b, 128), 1024).is_none());
/// assert!((4250.0..4350.0).contains(&b)); // Su's 4.3e3
/// ```
///
/// # Errors
/// `context == 0`; [`crate::ErrorKind::Cancelled`] once `watch` says so.
pub fn certified_min_base(family: &Family, context: u64, watch: &Watch) -> Result<Sweep> {
    if context == 0 {
        return Err(Error::invalid(
            "context",
            0,
            "a positive number of positions",
        ));
    }
    let mut sweep = Sweep {
        base: None,
        failing_below: None,
        island: None,
        proven_steps: 0,
        full_scans: 0,
        unproven_steps: 0,
        unproven_width: 0.0,
        f32_check: None,
    };
    // Progress: ln b over ln of a generous estimate (the paper's fit 0.0424·L^1.628, × 10).
    let estimate = (0.424 * (context as f64).powf(1.628)).clamp(100.0, MAX_BASE);
    let (ln0, ln_est) = (2f64.ln(), estimate.ln());
    let mut b = 2.0f64;
    let mut ws = family.at(b);
    let mut witness: Option<u64> = None;
    let mut hints: Vec<(f64, u64)> = Vec::new();
    let mut h = 1e-3;
    let mut last_report = 0.0;
    while b <= MAX_BASE {
        watch.check("the minimum-base search")?;
        let frac = ((b.ln() - ln0) / (ln_est - ln0)).clamp(0.0, 0.99);
        if frac - last_report >= 0.01 {
            (watch.progress)(frac);
            last_report = frac;
        }
        // 1. The current witness, if it still proves a step; a short one prompts a look for
        //    a better witness near the recent ones.
        if let Some(m) = witness {
            if let Some((mut hp, mut ws1)) = prove(family, m, &ws, b, 2.0 * h) {
                if hp < H_SWITCH {
                    let better = find_witness(&ws, b, context, &hints, &mut sweep.full_scans, true)
                        .filter(|&c| c != m)
                        .and_then(|c| prove(family, c, &ws, b, 2.0 * h).map(|p| (c, p)));
                    if let Some((c, (h2, w2))) = better {
                        if h2 > hp {
                            (hp, ws1) = (h2, w2);
                            witness = Some(c);
                            push_hint(&mut hints, (b, c));
                        }
                    }
                }
                (b, ws, h) = (b * hp.exp(), ws1, hp);
                sweep.proven_steps += 1;
                continue;
            }
        }
        // 2. A new witness: near the hints, else from a complete scan; none at all: b passes.
        let near = find_witness(&ws, b, context, &hints, &mut sweep.full_scans, true)
            .and_then(|m| prove(family, m, &ws, b, 1e-3).map(|p| (m, p)));
        let found = match near {
            Some(x) => Some(Some(x)),
            None => match find_witness(&ws, b, context, &[], &mut sweep.full_scans, false) {
                None => None,
                Some(m) => {
                    push_hint(&mut hints, (b, m));
                    Some(prove(family, m, &ws, b, 1e-3).map(|p| (m, p)))
                }
            },
        };
        match found {
            Some(Some((m, (hp, ws1)))) => {
                if witness != Some(m) {
                    push_hint(&mut hints, (b, m));
                }
                witness = Some(m);
                (b, ws, h) = (b * hp.exp(), ws1, hp);
                sweep.proven_steps += 1;
            }
            Some(None) => {
                // Negative, but too close to 0 to prove even H_MIN: step unproven.
                witness = None;
                sweep.unproven_steps += 1;
                sweep.unproven_width += H_MIN;
                b *= H_MIN.exp();
                ws = family.at(b);
                h = 1e-4;
            }
            None => {
                sweep.base = Some(b);
                break;
            }
        }
    }
    let Some(start) = sweep.base else {
        return Ok(sweep);
    };
    sweep.failing_below = Some(start * (-H_MIN).exp());
    // The island: test start·e^(1e-7·4^j) until one fails, then bisect to 20% of the width.
    // start·e^t passes: no witness near the hints, and none in a full scan.
    let passes_at = |t: f64, full_scans: &mut usize| {
        let w = family.at(start * t.exp());
        find_witness(&w, start * t.exp(), context, &hints, full_scans, true).is_none() && {
            *full_scans += 1;
            passes(&w, context)
        }
    };
    let (mut pass, mut fail) = (0.0f64, None);
    let mut t = 1e-7f64;
    while t < 1.0 {
        watch.check("the minimum-base search")?;
        if passes_at(t, &mut sweep.full_scans) {
            pass = t;
            t *= 4.0;
        } else {
            fail = Some(t);
            break;
        }
    }
    if let Some(mut bad) = fail {
        while bad - pass > 0.2 * pass.max(1e-7) {
            watch.check("the minimum-base search")?;
            let mid = 0.5 * (pass + bad);
            if passes_at(mid, &mut sweep.full_scans) {
                pass = mid;
            } else {
                bad = mid;
            }
        }
        let up = start * pass.exp();
        sweep.island = Some(Island {
            start,
            passes_up_to: up,
            fails_at: start * bad.exp(),
            width: up - start,
            rel_width: (up - start) / start,
        });
    }
    sweep.f32_check = Some(f32_check(&family.at(start), context));
    (watch.progress)(1.0);
    Ok(sweep)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spectrum::decay::{default_freqs, first_negative};

    #[test]
    fn cos_upper_is_an_upper_bound() {
        // Dense sampling of the interval never exceeds the bound, and the bound is attained at
        // an end or is 1.
        for &(m, lo, hi) in &[
            (1000.0, 0.001, 0.0012),
            (7.0, 0.3, 0.31),
            (123456.0, 1e-5, 1.00001e-5),
            (3.0, 2.0, 2.2),
        ] {
            let u = cos_upper(m, lo, hi);
            for i in 0..=1000 {
                let w = lo + (hi - lo) * i as f64 / 1000.0;
                assert!((m * w).cos() <= u + 1e-9, "{m} {w}");
            }
        }
        // An interval containing a full turn.
        assert_eq!(cos_upper(1.0, 6.0, 6.5), 1.0);
    }

    #[test]
    fn the_sweep_finds_a_sign_boundary_and_proves_below() {
        let (at, exps) = default_family(16);
        let fam = Family {
            at: &at,
            exponents: Some(exps),
        };
        let s = certified_min_base(&fam, 512, &Watch::default()).unwrap();
        let b = s.base.unwrap();
        assert!(first_negative(&default_freqs(b, 16), 512).is_none());
        assert!(first_negative(&default_freqs(s.failing_below.unwrap(), 16), 512).is_some());
        // At most the last step onto the island's edge (where the dying witness is within
        // 1e-10 of 0) goes unproven.
        assert!(s.unproven_steps <= 2, "{s:?}");
    }
}
