//! Long-distance decay: the criterion of Men et al. 2024 ("Base of RoPE Bounds Context Length").
//!
//! For q, k with i.i.d. components and a similar key k* = q + ε, the expected advantage of the
//! similar key at relative distance m is proportional to `B(m) = Σ_k cos(m·ω_k)` (sum over
//! planes). The paper asks for B(m) ≥ 0 for every m in 0..L−1; the smallest base b whose default
//! frequencies ω_k = b^(−2k/d) satisfy it is the lower bound of the base for context L.

use serde::Serialize;

use super::min_base::first_negative_in;
use super::Watch;
use crate::phase::phase;
use crate::{Error, Result};

/// Steps between exact re-synchronisations of the cos/sin recurrence. The rotation recurrence
/// (c, s) ← (c·cos ω − s·sin ω, s·cos ω + c·sin ω) gains ~2 eps64 of error per step, so after
/// 1024 steps each term is accurate to ~5e-13.
const RESYNC: u64 = 1024;
/// Largest half-width of the window tried around the most recent failing separation.
const WINDOW: u64 = 1024;
/// Half-width of the first, narrow look around a hint.
const NARROW: u64 = 32;

/// Calls `f(m, B(m))` for m in start..end in order; stops early when `f` returns `false`.
/// Returns the m where it stopped (or `end`).
pub fn scan_b(ws: &[f64], start: u64, end: u64, f: impl FnMut(u64, f64) -> bool) -> u64 {
    scan_b_step(ws, start, end, 1, f)
}

/// Advances the per-plane rotations `out.len()` times, writing B before each step into `out`.
/// Planes are padded to a multiple of 4 (padding has c = s = 0, so it adds nothing).
#[inline(always)]
fn advance_generic(c: &mut [f64], s: &mut [f64], cw: &[f64], sw: &[f64], out: &mut [f64]) {
    for o in out.iter_mut() {
        let mut acc = [0.0f64; 4];
        for (((c4, s4), cw4), sw4) in c
            .chunks_exact_mut(4)
            .zip(s.chunks_exact_mut(4))
            .zip(cw.chunks_exact(4))
            .zip(sw.chunks_exact(4))
        {
            for l in 0..4 {
                let (ck, sk) = (c4[l], s4[l]);
                acc[l] += ck;
                c4[l] = ck * cw4[l] - sk * sw4[l];
                s4[l] = sk * cw4[l] + ck * sw4[l];
            }
        }
        *o = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    }
}

/// [`advance_generic`] with explicit 256-bit vectors: the same operations in the same order
/// (two products and a difference or sum, each rounded; lane l accumulates planes l, l+4, …),
/// so both paths give bit-identical results.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn advance_avx2(c: &mut [f64], s: &mut [f64], cw: &[f64], sw: &[f64], out: &mut [f64]) {
    use std::arch::x86_64::*;
    let n = c.len();
    assert!(n.is_multiple_of(4) && s.len() == n && cw.len() == n && sw.len() == n);
    let (cp, sp) = (c.as_mut_ptr(), s.as_mut_ptr());
    let (cwp, swp) = (cw.as_ptr(), sw.as_ptr());
    for o in out.iter_mut() {
        let mut acc = _mm256_setzero_pd();
        let mut k = 0;
        while k < n {
            // SAFETY: k + 4 ≤ n for all four slices (checked above).
            unsafe {
                let cv = _mm256_loadu_pd(cp.add(k));
                let sv = _mm256_loadu_pd(sp.add(k));
                let cwv = _mm256_loadu_pd(cwp.add(k));
                let swv = _mm256_loadu_pd(swp.add(k));
                acc = _mm256_add_pd(acc, cv);
                let nc = _mm256_sub_pd(_mm256_mul_pd(cv, cwv), _mm256_mul_pd(sv, swv));
                let ns = _mm256_add_pd(_mm256_mul_pd(sv, cwv), _mm256_mul_pd(cv, swv));
                _mm256_storeu_pd(cp.add(k), nc);
                _mm256_storeu_pd(sp.add(k), ns);
            }
            k += 4;
        }
        let mut a = [0.0f64; 4];
        // SAFETY: `a` holds four f64.
        unsafe { _mm256_storeu_pd(a.as_mut_ptr(), acc) };
        *o = (a[0] + a[1]) + (a[2] + a[3]);
    }
}

fn advance(c: &mut [f64], s: &mut [f64], cw: &[f64], sw: &[f64], out: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports the features the function is compiled for (checked above).
        unsafe { advance_avx2(c, s, cw, sw, out) };
        return;
    }
    advance_generic(c, s, cw, sw, out)
}

/// [`scan_b`] on every `step`-th separation start, start + step, … (< end).
///
/// The inner loop is the rotation recurrence on all planes at once (4 lanes; explicit AVX2
/// when the CPU has it, detected at run time, with results identical to the portable path), re-synchronised from accurate phases every
/// `RESYNC` (1024) evaluations.
pub fn scan_b_step(
    ws: &[f64],
    start: u64,
    end: u64,
    step: u64,
    mut f: impl FnMut(u64, f64) -> bool,
) -> u64 {
    let n = ws.len().div_ceil(4) * 4;
    let (mut c, mut s) = (vec![0.0; n], vec![0.0; n]);
    let (mut cw, mut sw) = (vec![1.0; n], vec![0.0; n]);
    for (k, &w) in ws.iter().enumerate() {
        let a = phase(step as f64, w);
        (cw[k], sw[k]) = (a.cos(), a.sin());
    }
    let mut out = vec![0.0; RESYNC as usize];
    let mut m = start;
    while m < end {
        for (k, &w) in ws.iter().enumerate() {
            let a = phase(m as f64, w);
            (c[k], s[k]) = (a.cos(), a.sin());
        }
        let count = ((end - m).div_ceil(step)).min(RESYNC) as usize;
        advance(&mut c, &mut s, &cw, &sw, &mut out[..count]);
        for &b in &out[..count] {
            if !f(m, b) {
                return m;
            }
            m += step;
        }
    }
    end
}

/// B(m) = Σ_k cos(m·ω_k) evaluated directly with accurate phase reduction (reference).
pub fn b_direct(ws: &[f64], m: u64) -> f64 {
    ws.iter().map(|&w| phase(m as f64, w).cos()).sum()
}

/// The first m in 1..L with B(m) < 0, if any.
///
/// ```
/// use attnlab_core::spectrum::decay::first_negative;
/// // One plane, ω = 1: cos(m) < 0 first at m = 2 (cos 2 = −0.416).
/// assert_eq!(first_negative(&[1.0], 100), Some(2));
/// ```
pub fn first_negative(ws: &[f64], context: u64) -> Option<u64> {
    let mut hit = None;
    scan_b(ws, 1, context, |m, b| {
        if b < 0.0 {
            hit = Some(m);
            false
        } else {
            true
        }
    });
    hit
}

/// Summary of B over 0..L−1.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decay {
    /// First m ≥ 1 with B(m) < 0 within the context (null: B ≥ 0 throughout).
    pub first_negative: Option<u64>,
    /// min over m in 0..L−1 of B(m)/planes (the mean of cos(m·ω_k) over planes).
    pub min_mean: f64,
    /// Where that minimum occurs.
    pub min_mean_at: u64,
    /// (m, B(m)/planes) on ~`samples` points (every m up to 256, then log-spaced).
    pub curve: Vec<(u64, f64)>,
    /// The minimum of B(m)/planes over each bin between consecutive sample points (every m is
    /// in one bin): what the decay chart plots, so a narrow dip between samples is not lost.
    pub bins: Vec<DecayBin>,
}

/// The smallest B(m)/planes over the separations `from..to` of one bin.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DecayBin {
    /// First separation of the bin.
    pub from: u64,
    /// One past the last separation of the bin.
    pub to: u64,
    /// min over the bin of B(m)/planes.
    pub min_mean: f64,
    /// Where.
    pub at: u64,
}

/// Scans B(m) over the whole context (one pass, O(L·planes)).
pub fn decay(ws: &[f64], context: u64, samples: usize) -> Result<Decay> {
    if context == 0 {
        return Err(Error::invalid(
            "context",
            0,
            "a positive number of positions",
        ));
    }
    let n = ws.len() as f64;
    let mut marks: Vec<u64> = (0..context.min(257)).collect();
    if context > 257 {
        let k = samples.max(2);
        let (lo, hi) = (256f64.ln(), ((context - 1) as f64).ln());
        for i in 0..=k {
            let m = (lo + (hi - lo) * i as f64 / k as f64).exp().round() as u64;
            // Cannot fail: marks holds 0..257 here (context > 257).
            if *marks.last().unwrap() < m && m < context {
                marks.push(m);
            }
        }
    }
    let (mut first, mut min, mut at) = (None, f64::INFINITY, 0);
    let mut curve = Vec::with_capacity(marks.len());
    let mut bins: Vec<DecayBin> = Vec::with_capacity(marks.len());
    let mut next = 0;
    scan_b(ws, 0, context, |m, b| {
        if m >= 1 && b < 0.0 && first.is_none() {
            first = Some(m);
        }
        if b < min {
            (min, at) = (b, m);
        }
        if next < marks.len() && marks[next] == m {
            curve.push((m, b / n));
            let to = marks.get(next + 1).copied().unwrap_or(context);
            bins.push(DecayBin {
                from: m,
                to,
                min_mean: b / n,
                at: m,
            });
            next += 1;
        } else if let Some(bin) = bins.last_mut() {
            if b / n < bin.min_mean {
                (bin.min_mean, bin.at) = (b / n, m);
            }
        }
        true
    });
    Ok(Decay {
        first_negative: first,
        min_mean: min / n,
        min_mean_at: at,
        curve,
        bins,
    })
}

/// Default-type frequencies b^(−2k/d), k = 0..d/2, in f64.
pub fn default_freqs(base: f64, dim: usize) -> Vec<f64> {
    (0..dim / 2)
        .map(|k| base.powf(-(2.0 * k as f64) / dim as f64))
        .collect()
}

crate::choice! {
    /// How the smallest passing base was searched.
    pub enum MinBaseMethod("minimum-base method") {
        /// The certified sweep of [`super::min_base`]: every base below the answer is proven to
        /// fail, so no island of passing bases is stepped over.
        CertifiedSweep = "certified_sweep",
        /// The earlier log-grid scan (coarse grid, fine grid, bisection): can step over islands
        /// narrower than its grid; kept for comparison (`min_base_grid`).
        Grid = "grid",
    }
}

/// The result of a minimum-base search ([`min_base_for_context`], [`min_base_search`],
/// [`min_base_certified`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MinBase {
    /// The smallest base found with B_b(m) ≥ 0 for all m in 0..L−1 (null if none ≤ 1e15).
    pub base: Option<f64>,
    /// The largest base below it known to fail (the bracket's lower end).
    pub failing_below: Option<f64>,
    /// How it was searched.
    pub method: MinBaseMethod,
    /// Which frequencies the base generates: `default` (b^(−2k/d)) or the configuration's rope
    /// type with its parameters (the effective frequencies of a scaled type).
    pub family: String,
    /// Ratio of consecutive points of the coarse log grid (grid method; null for the sweep).
    pub coarse_ratio: Option<f64>,
    /// Ratio of the fine grid scanned inside the first coarse bracket (grid method).
    pub fine_ratio: Option<f64>,
    /// Relative width of the final bracket (grid: bisection to 1e-5; sweep: its smallest
    /// proven step, 1e-10).
    pub rel_precision: f64,
    /// Number of bases the search evaluates (grid: grid points, fine grid and bisection;
    /// sweep: proven intervals plus complete scans) — the same for any number of threads.
    pub evaluations: usize,
    /// The island of passing bases the answer begins (sweep only).
    pub island: Option<super::min_base::Island>,
    /// Complete scans of 1..L the sweep needed (sweep only).
    pub full_scans: Option<usize>,
    /// Steps of relative width 1e-10 the sweep took without proof, and their total width in
    /// ln b (sweep only; an island inside them could be missed).
    pub unproven_steps: Option<usize>,
    /// Total width (in ln b) of the unproven steps.
    pub unproven_width: Option<f64>,
    /// The float32 verdict of the answer (sweep only): Su's table was computed in float32.
    pub f32_check: Option<super::min_base::F32Check>,
}

/// The smallest base of a frequency family by the certified sweep ([`super::min_base`]),
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
    let fam = super::min_base::Family { at, exponents };
    let s = super::min_base::certified_min_base(&fam, context, watch)?;
    Ok(MinBase {
        base: s.base,
        failing_below: s.failing_below,
        method: MinBaseMethod::CertifiedSweep,
        family: family.to_string(),
        coarse_ratio: None,
        fine_ratio: None,
        rel_precision: super::min_base::H_MIN,
        evaluations: s.proven_steps + s.full_scans,
        island: s.island,
        full_scans: Some(s.full_scans),
        unproven_steps: Some(s.unproven_steps),
        unproven_width: Some(s.unproven_width),
        f32_check: s.f32_check,
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
    let (at, exps) = super::min_base::default_family(dim);
    min_base_certified(&at, Some(exps), "default", context, watch)
}

/// Grid point `i` of the coarse scan: 2·ratioⁱ.
fn grid_base(ratio: f64, i: usize) -> f64 {
    2.0 * ratio.powi(i as i32)
}

/// The last grid index searched (bases up to 10¹⁵).
fn last_grid_index(ratio: f64) -> usize {
    ((1e15f64 / 2.0).ln() / ratio.ln()).floor() as usize
}

/// The coarse scan: the smallest grid index whose base passes, or `None` up to 10¹⁵.
///
/// W = rayon's thread count streams take the grid points k, k + W, k + 2W, … (k < W) in
/// increasing order, each keeping its own hints (which stay local because its points are
/// close), and stop once they pass the best passing index found so far. A stream only stops
/// at an index ≥ the answer, so every index below the answer is evaluated and fails, and the
/// answer itself is evaluated by its stream: the result is the sequential scan's for any W.
/// Each stream reports progress (the largest failed index over the last one) and stops when
/// `watch` says so.
fn coarse_scan(dim: usize, context: u64, ratio: f64, watch: &Watch) -> Result<Option<usize>> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let last = last_grid_index(ratio);
    let best = AtomicUsize::new(usize::MAX);
    let done = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let streams = rayon::current_num_threads().max(1);
    rayon::scope(|scope| {
        for k in 0..streams {
            let (best, done, stop) = (&best, &done, &stop);
            scope.spawn(move |_| {
                let mut hints = Vec::new();
                let mut i = k;
                while i <= last && i < best.load(Ordering::Relaxed) {
                    if stop.load(Ordering::Relaxed) || (watch.cancelled)() {
                        stop.store(true, Ordering::Relaxed);
                        return;
                    }
                    if !fails(grid_base(ratio, i), dim, context, &mut hints) {
                        best.fetch_min(i, Ordering::Relaxed);
                        return;
                    }
                    let d = done.fetch_max(i, Ordering::Relaxed).max(i);
                    (watch.progress)(d as f64 / last as f64);
                    i += streams;
                }
            });
        }
    });
    if stop.load(Ordering::Relaxed) {
        return Err(Error::cancelled("the minimum-base search"));
    }
    let b = best.load(Ordering::Relaxed);
    Ok((b != usize::MAX).then_some(b))
}

/// Whether some m in 1..L has B_b(m) < 0 for default frequencies of base b. Separations where
/// earlier bases failed are tried first — both as they were and scaled by b/b_earlier (the slow
/// planes make the dips of B move proportionally to b) — which is sound (a hint only ever rejects
/// with a real negative value); otherwise a full ordered scan decides. The answer does not
/// depend on the hints (they only make it faster).
fn fails(base: f64, dim: usize, context: u64, hints: &mut Vec<(f64, u64)>) -> bool {
    let ws = default_freqs(base, dim);
    // The first negative B in a range (the grid search only needs whether one exists, and a
    // separation as a hint; the first is the same for any number of threads).
    let negative_in = |lo: u64, hi: u64, step: u64| first_negative_in(&ws, lo, hi, step);
    let span = |c: u64, w: u64| negative_in(c.saturating_sub(w).max(1), (c + w).min(context), 1);
    // Look right next to the hint first: the negative stretch of a neighbouring base is usually
    // within a few dozen separations of the scaled hint, so the wide scan is rarely needed.
    let window = |c: u64, w: u64| {
        span(c, w.min(NARROW)).or_else(|| if w > NARROW { span(c, w) } else { None })
    };
    for i in (0..hints.len()).rev() {
        let (hb, hm) = hints[i];
        let scaled = (hm as f64 * base / hb).round() as u64;
        // The most recent failure gets a wide window, older ones a narrow one.
        let wide = WINDOW.min(context / 256).max(24);
        let w = if i + 1 == hints.len() {
            wide
        } else {
            (wide / 16).max(24)
        };
        if let Some(m) =
            window(scaled, w).or_else(|| if scaled != hm { window(hm, w) } else { None })
        {
            hints.remove(i);
            hints.push((base, m));
            return true;
        }
    }
    // Coarse-to-fine: most failing bases have wide negative stretches that a strided pass finds.
    for step in [64, 16, 4, 1] {
        if let Some(m) = negative_in(1, context, step) {
            hints.push((base, m));
            if hints.len() > 24 {
                hints.remove(0);
            }
            return true;
        }
    }
    false
}

/// The smallest base b (for rotary dimension `dim`, frequencies b^(−2k/d)) with
/// `B_b(m) = Σ_k cos(m·b^(−2k/d)) ≥ 0` for every m in 0..L−1, by the certified sweep of
/// [`super::min_base`] (which cannot step over an island of passing bases).
///
/// The earlier grid search ([`min_base_for_context_on_grid`], [`min_base_search`]) is kept for
/// comparison; its description follows. The criterion is not monotone in b: the passing bases form narrow islands (for d = 128,
/// L = 1024: [4294.6, 4332.6), then [5603.5, 5645.4), …; at L = 4096 one island is only 0.07%
/// wide), so bisection over a wide range is wrong. Search:
/// 1. a coarse log grid b = 2·r^i, r = `coarse_ratio` (default 1.0005, i.e. 0.05%), in increasing order,
///    up to the first base that passes. Each failing base is rejected as cheaply as possible:
///    first windows around where recent bases failed (±min(1024, L/256) separations for the
///    latest, 1/16 of that for older ones, at least ±24; as they were and scaled by b/b_then, since the dips of B move roughly in
///    proportion to b), then strided passes over
///    the context (every 64th, 16th, 4th separation) and finally the full ordered scan — all
///    sound, as a base is only ever rejected on a real negative B(m);
/// 2. a fine log grid (ratio 1 + (r − 1)/4) between that base and the failing grid point below it —
///    the first fine point that passes, with its failing predecessor, is the bracket;
/// 3. bisection of that bracket to a relative width of 1e-5 (inside the narrow bracket the
///    first sign change is assumed to be the only one).
///
/// Islands of passing bases narrower than the coarse ratio (0.05%) below the answer can be
/// missed (with a 0.2% grid this happens at L = 4096 and 2²⁰, see `tests/rope_min_base.rs`; at
/// 0.05% our values still differ from Su's at 256k and 512k); the published table has two
/// significant digits. B is evaluated in f64 by the rotation recurrence of [`scan_b_step`].
///
/// # Errors
/// `dim` odd or zero; `context == 0`.
pub fn min_base_for_context(
    dim: usize,
    context: u64,
    progress: impl FnMut(f64) + Send,
) -> Result<MinBase> {
    let progress = std::sync::Mutex::new(progress);
    let report = |f: f64| {
        if let Ok(mut p) = progress.try_lock() {
            (*p)(f);
        }
    };
    min_base_default(
        dim,
        context,
        &Watch {
            progress: &report,
            cancelled: &|| false,
        },
    )
}

/// Finest coarse grid ratio accepted (0.01%): five times the default's cost; a ratio closer to 1
/// only multiplies the run time (1.0000001 would take hours) for islands narrower than any
/// base a configuration would state.
pub const MIN_GRID_RATIO: f64 = 1.0001;

/// Default coarse grid ratio of the minimum-base search (0.05%).
pub const DEFAULT_GRID_RATIO: f64 = 1.0005;

/// [`min_base_for_context`] with a chosen coarse grid ratio `grid` (> 1; the fine grid inside
/// the bracket is `1 + (grid − 1)/4`). A finer grid finds narrower islands of passing bases at a
/// cost: 1.0005 (the default) finds the 0.07%-wide islands at L = 4096 (26 953) and L = 2²⁰
/// (6.54e7) that 1.002 steps over.
///
/// # Errors
/// As [`min_base_for_context`]; `grid` not in [[`MIN_GRID_RATIO`], 2].
pub fn min_base_for_context_on_grid(
    dim: usize,
    context: u64,
    grid: f64,
    progress: impl FnMut(f64) + Send,
) -> Result<MinBase> {
    let progress = std::sync::Mutex::new(progress);
    let report = |f: f64| {
        // Several threads report; one that finds the lock taken skips its update.
        if let Ok(mut p) = progress.try_lock() {
            (*p)(f);
        }
    };
    min_base_search(
        dim,
        context,
        grid,
        &Watch {
            progress: &report,
            cancelled: &|| false,
        },
    )
}

/// [`min_base_for_context_on_grid`] observed by `watch`: progress (fractions in [0, 1], from
/// several threads) and cancellation, checked before every base evaluated. The result does not
/// depend on the number of rayon threads (see `coarse_scan`).
///
/// # Errors
/// As [`min_base_for_context_on_grid`]; [`crate::ErrorKind::Cancelled`] once `watch` says so.
pub fn min_base_search(dim: usize, context: u64, grid: f64, watch: &Watch) -> Result<MinBase> {
    if !(MIN_GRID_RATIO..=2.0).contains(&grid) {
        return Err(Error::invalid(
            "min-base grid ratio",
            grid,
            "a ratio in [1.0001, 2], e.g. 1.0005 (the default); the cost grows like 1/(ratio − 1)",
        ));
    }
    if dim == 0 || !dim.is_multiple_of(2) {
        return Err(Error::invalid(
            "rotary dimension",
            dim,
            "an even number ≥ 2",
        ));
    }
    if context == 0 {
        return Err(Error::invalid(
            "context",
            0,
            "a positive number of positions",
        ));
    }
    let (coarse, fine, rel) = (grid, 1.0 + (grid - 1.0) / 4.0, 1e-5f64);
    let mut hints = Vec::new();
    let found = coarse_scan(dim, context, coarse, watch)?;
    // Bases the sequential search evaluates: every grid point up to the answer (or all).
    let mut evals = found.map_or(last_grid_index(coarse), |i| i) + 1;
    let prev = match found {
        Some(0) => None,
        Some(i) => Some(grid_base(coarse, i - 1)),
        None => Some(grid_base(coarse, last_grid_index(coarse))),
    };
    let found = found.map(|i| grid_base(coarse, i));
    let grid = |base: Option<f64>, failing_below: Option<f64>, evaluations: usize| MinBase {
        base,
        failing_below,
        method: MinBaseMethod::Grid,
        family: "default".into(),
        coarse_ratio: Some(coarse),
        fine_ratio: Some(fine),
        rel_precision: rel,
        evaluations,
        island: None,
        full_scans: None,
        unproven_steps: None,
        unproven_width: None,
        f32_check: None,
    };
    let Some(mut good) = found else {
        return Ok(grid(None, prev, evals));
    };
    let mut bad = match prev {
        Some(p) => p,
        None => return Ok(grid(Some(good), None, evals)),
    };
    // Fine grid inside (bad, good].
    let mut x = bad * fine;
    while x < good {
        watch.check("the minimum-base search")?;
        evals += 1;
        if !fails(x, dim, context, &mut hints) {
            good = x;
            break;
        }
        bad = x;
        x *= fine;
    }
    while good / bad - 1.0 > rel {
        let mid = (bad * good).sqrt();
        watch.check("the minimum-base search")?;
        evals += 1;
        if fails(mid, dim, context, &mut hints) {
            bad = mid;
        } else {
            good = mid;
        }
    }
    (watch.progress)(1.0);
    Ok(grid(Some(good), Some(bad), evals))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recurrence_matches_direct_evaluation() {
        // Across several resync blocks: recurrence error ≤ RESYNC · ~2 eps per plane, × 64 planes ≈ 2e-11.
        let ws = default_freqs(10000.0, 128);
        let mut worst = 0.0f64;
        scan_b(&ws, 1_000_000, 1_004_000, |m, b| {
            worst = worst.max((b - b_direct(&ws, m)).abs());
            true
        });
        assert!(worst < 2e-11, "{worst}");
    }

    #[test]
    fn vector_and_portable_paths_agree_bit_for_bit() {
        let ws = default_freqs(10000.0, 24); // 12 planes, padded to 12
        let n = 12;
        let mk = || -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
            let c: Vec<f64> = ws.iter().map(|&w| (3.0 * w).cos()).collect();
            let s: Vec<f64> = ws.iter().map(|&w| (3.0 * w).sin()).collect();
            (
                c,
                s,
                ws.iter().map(|w| w.cos()).collect(),
                ws.iter().map(|w| w.sin()).collect(),
            )
        };
        let (mut c1, mut s1, cw, sw) = mk();
        let (mut c2, mut s2, _, _) = mk();
        assert_eq!(c1.len(), n);
        let (mut o1, mut o2) = (vec![0.0; 500], vec![0.0; 500]);
        advance_generic(&mut c1, &mut s1, &cw, &sw, &mut o1);
        advance(&mut c2, &mut s2, &cw, &sw, &mut o2);
        assert_eq!(o1, o2);
        assert_eq!((c1, s1), (c2, s2));
    }

    #[test]
    fn first_negative_matches_direct_scan() {
        let ws = default_freqs(500.0, 16);
        let direct = (1..100_000u64).find(|&m| b_direct(&ws, m) < 0.0);
        assert_eq!(first_negative(&ws, 100_000), direct);
        assert!(direct.is_some());
    }

    #[test]
    fn blocked_negative_search_agrees_with_the_ordered_scan_for_any_thread_count() {
        // 300 000 separations: five blocks. Base 10000, d = 128 dips below 0 at m = 1707 (so
        // a negative exists), base 1e7 at d = 16 within 300 000 too or not — the ordered scan
        // decides, and the blocked search must agree in pools of 1 and 2 threads.
        for (base, dim) in [(10000.0, 128), (1e7, 16), (5e5, 8)] {
            let ws = default_freqs(base, dim);
            let want = first_negative(&ws, 300_000).is_some();
            for threads in [1, 2] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let got = pool.install(|| first_negative_in(&ws, 1, 300_000, 1));
                assert_eq!(
                    got.is_some(),
                    want,
                    "base {base}, d {dim}, {threads} threads"
                );
                if let Some(m) = got {
                    assert!(b_direct(&ws, m) < 0.0 || scan_value(&ws, m) < 0.0);
                }
            }
        }
    }

    /// B(m) as the scan computes it (recurrence), for checking a reported negative value.
    fn scan_value(ws: &[f64], m: u64) -> f64 {
        let mut v = f64::NAN;
        scan_b(ws, m, m + 1, |_, b| {
            v = b;
            true
        });
        v
    }

    #[test]
    fn min_base_is_a_sign_boundary() {
        // The answer passes, the bracket's lower end fails, and they are within 1e-5 relative.
        let r = min_base_for_context(16, 512, |_| {}).unwrap();
        let (good, bad) = (r.base.unwrap(), r.failing_below.unwrap());
        assert!(first_negative(&default_freqs(good, 16), 512).is_none());
        assert!(first_negative(&default_freqs(bad, 16), 512).is_some());
        assert!(good / bad - 1.0 <= 1e-5 * 1.0001);
    }
}
