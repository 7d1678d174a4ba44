//! Long-distance decay: the criterion of Men et al. 2024 ("Base of RoPE Bounds Context Length").
//!
//! For q, k with i.i.d. components and a similar key k* = q + ε, the expected advantage of the
//! similar key at relative distance m is proportional to `B(m) = Σ_k cos(m·ω_k)` (sum over
//! planes). The paper asks for B(m) ≥ 0 for every m in 0..L−1; the smallest base b whose default
//! frequencies ω_k = b^(−2k/d) satisfy it is the lower bound of the base for context L.

use serde::Serialize;

use super::angle::phase;
use crate::{Error, Result};

/// Steps between exact re-synchronisations of the cos/sin recurrence. The rotation recurrence
/// (c, s) ← (c·cos ω − s·sin ω, s·cos ω + c·sin ω) gains ~2 eps64 of error per step, so after
/// 1024 steps each term is accurate to ~5e-13.
const RESYNC: u64 = 1024;

/// Calls `f(m, B(m))` for m in start..end in order; stops early when `f` returns `false`.
/// Returns the m where it stopped (or `end`).
pub fn scan_b(ws: &[f64], start: u64, end: u64, f: impl FnMut(u64, f64) -> bool) -> u64 {
    scan_b_step(ws, start, end, 1, f)
}

/// [`scan_b`] on every `step`-th separation start, start + step, … (< end).
pub fn scan_b_step(
    ws: &[f64],
    start: u64,
    end: u64,
    step: u64,
    mut f: impl FnMut(u64, f64) -> bool,
) -> u64 {
    let n = ws.len();
    let (mut c, mut s) = (vec![0.0; n], vec![0.0; n]);
    let cw: Vec<f64> = ws.iter().map(|&w| phase(step as f64, w).cos()).collect();
    let sw: Vec<f64> = ws.iter().map(|&w| phase(step as f64, w).sin()).collect();
    let mut m = start;
    while m < end {
        for k in 0..n {
            let a = phase(m as f64, ws[k]);
            (c[k], s[k]) = (a.cos(), a.sin());
        }
        let block_end = (m + RESYNC * step).min(end);
        while m < block_end {
            // Four partial sums so the loop vectorises without reassociating a single sum.
            let mut acc = [0.0f64; 4];
            let mut k = 0;
            while k + 4 <= n {
                for l in 0..4 {
                    let (ck, sk) = (c[k + l], s[k + l]);
                    acc[l] += ck;
                    c[k + l] = ck * cw[k + l] - sk * sw[k + l];
                    s[k + l] = sk * cw[k + l] + ck * sw[k + l];
                }
                k += 4;
            }
            while k < n {
                let (ck, sk) = (c[k], s[k]);
                acc[0] += ck;
                c[k] = ck * cw[k] - sk * sw[k];
                s[k] = sk * cw[k] + ck * sw[k];
                k += 1;
            }
            let b = (acc[0] + acc[1]) + (acc[2] + acc[3]);
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
/// use attnlab::spectrum::decay::first_negative;
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
    /// (m, B(m)/planes) on ~`samples` points (every m up to 256, then log-spaced), for plots.
    pub curve: Vec<(u64, f64)>,
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
            if *marks.last().unwrap() < m && m < context {
                marks.push(m);
            }
        }
    }
    let (mut first, mut min, mut at) = (None, f64::INFINITY, 0);
    let mut curve = Vec::with_capacity(marks.len());
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
            next += 1;
        }
        true
    });
    Ok(Decay {
        first_negative: first,
        min_mean: min / n,
        min_mean_at: at,
        curve,
    })
}

/// Default-type frequencies b^(−2k/d), k = 0..d/2, in f64.
pub fn default_freqs(base: f64, dim: usize) -> Vec<f64> {
    (0..dim / 2)
        .map(|k| base.powf(-(2.0 * k as f64) / dim as f64))
        .collect()
}

/// The result of [`min_base_for_context`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MinBase {
    /// The smallest base found with B_b(m) ≥ 0 for all m in 0..L−1 (null if none ≤ 1e15).
    pub base: Option<f64>,
    /// The largest base below it known to fail (the bracket's lower end).
    pub failing_below: Option<f64>,
    /// Ratio of consecutive points of the coarse log grid.
    pub coarse_ratio: f64,
    /// Ratio of the fine grid scanned inside the first coarse bracket.
    pub fine_ratio: f64,
    /// Relative width of the final bisection bracket.
    pub rel_precision: f64,
    /// Number of bases evaluated.
    pub evaluations: usize,
}

/// Whether some m in 1..L has B_b(m) < 0 for default frequencies of base b. Separations where
/// earlier bases failed are tried first — both as they were and scaled by b/b_earlier (the slow
/// planes make the dips of B move proportionally to b) — which is sound (a hint only ever rejects
/// with a real negative value); otherwise a full ordered scan decides.
fn fails(base: f64, dim: usize, context: u64, hints: &mut Vec<(f64, u64)>) -> bool {
    let ws = default_freqs(base, dim);
    let negative_in = |lo: u64, hi: u64, step: u64| -> Option<u64> {
        let mut hit = None;
        if lo < hi {
            scan_b_step(&ws, lo, hi, step, |m, b| {
                if b < 0.0 {
                    hit = Some(m);
                }
                hit.is_none()
            });
        }
        hit
    };
    let window = |c: u64| negative_in(c.saturating_sub(24).max(1), (c + 24).min(context), 1);
    for i in (0..hints.len()).rev() {
        let (hb, hm) = hints[i];
        let scaled = (hm as f64 * base / hb).round() as u64;
        if let Some(m) = window(scaled).or_else(|| if scaled != hm { window(hm) } else { None }) {
            hints.remove(i);
            hints.push((base, m));
            return true;
        }
    }
    // Coarse-to-fine: most failing bases have wide negative stretches that a strided pass finds.
    for step in [64, 8, 1] {
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
/// `B_b(m) = Σ_k cos(m·b^(−2k/d)) ≥ 0` for every m in 0..L−1.
///
/// The criterion is not monotone in b (a base can pass while a larger one fails), so bisection
/// over a wide range is wrong. Search:
/// 1. a coarse log grid b = 2·r^i, r = `coarse_ratio` (1.02), in increasing order, up to the
///    first base that passes (each failing base stops at its first negative B, and separations
///    where previous bases failed are tried first, so failures are cheap);
/// 2. a fine log grid (ratio 1.001) between that base and the failing grid point below it —
///    the first fine point that passes, with its failing predecessor, is the bracket;
/// 3. bisection of that bracket to a relative width of 1e-5 (inside the narrow bracket the
///    first sign change is assumed to be the only one).
///
/// Islands of passing bases narrower than the coarse ratio (2%) below the answer could be
/// missed; the published table has two significant digits.
///
/// # Errors
/// `dim` odd or zero; `context == 0`.
pub fn min_base_for_context(
    dim: usize,
    context: u64,
    mut progress: impl FnMut(f64),
) -> Result<MinBase> {
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
    let (coarse, fine, rel) = (1.002f64, 1.0002f64, 1e-6f64);
    let mut hints = Vec::new();
    let mut evals = 0usize;
    let mut prev = None;
    let mut b = 2.0f64;
    let found = loop {
        if b > 1e15 {
            break None;
        }
        evals += 1;
        progress(b.ln() / 1e15f64.ln());
        if !fails(b, dim, context, &mut hints) {
            break Some(b);
        }
        prev = Some(b);
        b *= coarse;
    };
    let Some(mut good) = found else {
        return Ok(MinBase {
            base: None,
            failing_below: prev,
            coarse_ratio: coarse,
            fine_ratio: fine,
            rel_precision: rel,
            evaluations: evals,
        });
    };
    let mut bad = match prev {
        Some(p) => p,
        None => {
            return Ok(MinBase {
                base: Some(good),
                failing_below: None,
                coarse_ratio: coarse,
                fine_ratio: fine,
                rel_precision: rel,
                evaluations: evals,
            });
        }
    };
    // Fine grid inside (bad, good].
    let mut x = bad * fine;
    while x < good {
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
        evals += 1;
        if fails(mid, dim, context, &mut hints) {
            bad = mid;
        } else {
            good = mid;
        }
    }
    progress(1.0);
    Ok(MinBase {
        base: Some(good),
        failing_below: Some(bad),
        coarse_ratio: coarse,
        fine_ratio: fine,
        rel_precision: rel,
        evaluations: evals,
    })
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
    fn first_negative_matches_direct_scan() {
        let ws = default_freqs(500.0, 16);
        let direct = (1..100_000u64).find(|&m| b_direct(&ws, m) < 0.0);
        assert_eq!(first_negative(&ws, 100_000), direct);
        assert!(direct.is_some());
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
