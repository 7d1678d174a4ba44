//! Long-distance decay: the criterion of Men et al. 2024 ("Base of RoPE Bounds Context Length").
//!
//! For q, k with i.i.d. components and a similar key k* = q + ε, the expected advantage of the
//! similar key at relative distance m is proportional to `B(m) = Σ_k cos(m·ω_k)` (sum over
//! planes). The paper asks for B(m) ≥ 0 for every m in 0..L−1; the smallest base b whose default
//! frequencies ω_k = b^(−2k/d) satisfy it is the lower bound of the base for context L.

use serde::Serialize;

use super::min_base::first_negative_in;
use crate::phase::phase;
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

/// The first m in 1..L with B(m) < 0, if any (scanned in parallel blocks; the same answer
/// for any number of threads).
///
/// ```
/// use attnlab_core::spectrum::decay::first_negative;
/// // One plane, ω = 1: cos(m) < 0 first at m = 2 (cos 2 = −0.416).
/// assert_eq!(first_negative(&[1.0], 100), Some(2));
/// ```
pub fn first_negative(ws: &[f64], context: u64) -> Option<u64> {
    first_negative_in(ws, 1, context, 1)
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
            let mut want = false;
            scan_b(&ws, 1, 300_000, |_, b| {
                want |= b < 0.0;
                !want
            });
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
}
