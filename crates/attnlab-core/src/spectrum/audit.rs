//! The audit of one rotary configuration: wavelengths, resolution, decay, precision, verdict.

use std::collections::BTreeMap;

use serde::Serialize;

use super::decay::{decay, min_base_for_context_on_grid, MinBase};
use super::identity::{invariance_rows, random_cases, shift_grid, ShiftRow};
use super::precision::{precision_all, DtypePrecision};
use super::resolve::{resolve, Resolution};
use crate::numeric::Dtype;
use crate::position::frequencies::{Omega, RotaryFrequencies};
use crate::{Error, Result};

/// One plane of the audit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlaneAudit {
    /// Plane index k (dimensions k and k + d/2 in the half-split layout).
    pub index: usize,
    /// ω_k (f64 evaluation of the configuration's formula), radians per position.
    pub inv_freq: f64,
    /// ω_k as the reference implementation computes it in f32.
    pub inv_freq_f32: f32,
    /// 2π/ω_k: positions per full turn.
    pub wavelength: f64,
    /// (L−1)·ω_k/2π: turns over the largest separation in the context.
    pub turns_in_context: f64,
    /// Whether the largest separation L−1 turns the plane at least once ((L−1)·ω_k ≥ 2π).
    pub full_turn_in_context: bool,
}

/// Largest context [`audit`] accepts: 2²⁴ = 16 777 216 positions. The precision part hashes
/// one cos/sin cache row per position and dtype and the resolution scans every separation, so
/// memory and time grow linearly in L (2²⁷ took 12.6 GB and > 100 s). Measured at the cap
/// (release, 2 cores, d = 128): 6 s and 1.05 GB, 18 s with the minimum-base search.
pub const MAX_AUDIT_CONTEXT: u64 = 1 << 24;

/// Largest positions × planes [`audit`] accepts: 2³¹ (d = 128 at the full 2²⁴ context, d = 256
/// too; d = 1024 up to 2²²). Every part of the audit (resolution, decay, minimum-base search)
/// costs O(L·planes): measured in release on 2 cores, 2³⁰ (d = 8192, L = 2¹⁸) takes 20 s and 2³¹
/// (d = 256, L = 2²⁴) 22 s with the minimum-base search; d = 1024 at 2²⁴ (2³³) took 50 s.
pub const MAX_AUDIT_WORK: u64 = 1 << 31;

/// Options of [`audit`].
#[derive(Debug, Clone)]
pub struct AuditOptions {
    /// L, the context length.
    pub context: u64,
    /// The dtype the verdict speaks about.
    pub dtype: Dtype,
    /// Alias tolerance of the resolution (radians).
    pub tol: f64,
    /// Whether to search the minimum base (the most expensive part).
    pub min_base: bool,
    /// Coarse grid ratio of the minimum-base search (see
    /// [`super::decay::min_base_for_context_on_grid`]; default 1.0005).
    pub min_base_grid: f64,
}

/// Everything the audit computes. Field names are the JSON contract.
#[derive(Debug, Clone, Serialize)]
pub struct AuditReport {
    /// Plain-language summary; every number in it is taken from the fields below.
    pub verdict: String,
    /// Where the frequencies came from.
    pub source: String,
    /// The base (θ), when the set has one, as configured.
    pub base: Option<f64>,
    /// The base the frequencies are evaluated with at this context (differs from `base` for
    /// dynamic NTK scaling beyond the original context).
    pub effective_base: Option<f64>,
    /// Rotated dimensions (2 × planes).
    pub rotary_dim: usize,
    /// Head dimension.
    pub head_dim: usize,
    /// L.
    pub context: u64,
    /// The dtype of the verdict.
    pub dtype: Dtype,
    /// Per-plane details.
    pub planes: Vec<PlaneAudit>,
    /// Factor multiplying cos and sin.
    pub attention_factor: f64,
    /// Number of planes with a full turn within the context (cf. Liu et al. 2023's critical
    /// dimension = 2 × this count).
    pub planes_full_turn: usize,
    /// 2 × `planes_full_turn`.
    pub dims_full_turn: usize,
    /// Whether every separation 1..L−1 is distinguished from 0 (see [`resolve`]).
    pub resolves: bool,
    /// Smallest margin over separations 1..L−1 (radians).
    pub min_margin: Option<f64>,
    /// Where it occurs.
    pub margin_at: Option<u64>,
    /// The full resolution result.
    pub resolution: Resolution,
    /// First m ≥ 1 with B(m) = Σ_k cos(m·ω_k) < 0 within the context; null when B(m) ≥ 0 for
    /// every m < L (the search stops at L, so null says nothing about m ≥ L).
    pub decay_first_negative: Option<u64>,
    /// Whether B(m) turns negative for some m < L (`decay_first_negative` is then set).
    pub decay_first_negative_within_context: bool,
    /// Whether B(m) ≥ 0 for all m < L (Men et al. 2024's criterion).
    pub decay_ok: bool,
    /// min over m < L of B(m)/planes and where.
    pub decay_min_mean: f64,
    /// Where `decay_min_mean` occurs.
    pub decay_min_mean_at: u64,
    /// Sampled (m, B(m)/planes) for the decay plot.
    pub decay_curve: Vec<(u64, f64)>,
    /// Smallest base with B ≥ 0 on 0..L−1 for this rotary dimension (default-type frequencies).
    pub min_base_for_context: Option<f64>,
    /// Details of that search (null when skipped).
    pub min_base_search: Option<MinBase>,
    /// Per dtype: position ids and cos/sin cache rows.
    pub precision: BTreeMap<String, DtypePrecision>,
    /// Translation-invariance error |S(i+t, j+t) − S(i, j)| vs t up to the context, per pipeline.
    pub invariance: Vec<ShiftRow>,
}

fn fmt_g(x: f64) -> String {
    if x != 0.0 && (x.abs() >= 1e5 || x.abs() < 1e-3) {
        format!("{x:.3e}")
    } else {
        let s = format!("{x:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Audits a frequency set at context L. `omegas` (if given) keeps exact multiples of π exact
/// for the resolution; otherwise `freqs.inv_freq` is used. `progress` receives fractions in
/// [0, 1] during the minimum-base search.
///
/// ```
/// use attnlab_core::numeric::Dtype;
/// use attnlab_core::position::frequencies::RotaryFrequencies;
/// use attnlab_core::spectrum::audit::{audit, AuditOptions};
/// let f = RotaryFrequencies::from_base(10000.0, 128).unwrap();
/// let o = AuditOptions { context: 4096, dtype: Dtype::Bf16, tol: 1e-9, min_base: false, min_base_grid: 1.0005 };
/// let r = audit(&f, None, &o, |_| {}).unwrap();
/// assert_eq!(r.planes_full_turn, 46); // Liu et al. 2023: critical dimension 92 for Llama 2
/// ```
///
/// # Errors
/// `context` not in 1..=[`MAX_AUDIT_CONTEXT`] or context × planes above [`MAX_AUDIT_WORK`], bad
/// tolerance or grid ratio.
pub fn audit(
    freqs: &RotaryFrequencies,
    omegas: Option<&[Omega]>,
    opts: &AuditOptions,
    progress: impl FnMut(f64),
) -> Result<AuditReport> {
    let l = opts.context;
    if l == 0 || l > MAX_AUDIT_CONTEXT {
        return Err(Error::invalid(
            "context",
            l,
            "a number of positions in 1..=2^24 (16777216): the audit keeps the cos/sin cache rows of every position for four dtypes",
        ));
    }
    let n_planes = freqs.inv_freq.len().max(1) as u64;
    if l.saturating_mul(n_planes) > MAX_AUDIT_WORK {
        return Err(Error::invalid(
            "context",
            l,
            format!(
                "at most {} positions for {n_planes} planes (the audit's cost grows with positions × planes, capped at 2^31 ≈ 25 s)",
                MAX_AUDIT_WORK / n_planes
            ),
        ));
    }
    let tau = std::f64::consts::TAU;
    let planes: Vec<PlaneAudit> = freqs
        .inv_freq
        .iter()
        .zip(&freqs.inv_freq_f32)
        .enumerate()
        .map(|(index, (&w, &w32))| {
            let turns = (l - 1) as f64 * w.abs() / tau;
            PlaneAudit {
                index,
                inv_freq: w,
                inv_freq_f32: w32,
                wavelength: tau / w.abs(),
                turns_in_context: turns,
                full_turn_in_context: turns >= 1.0,
            }
        })
        .collect();
    let planes_full_turn = planes.iter().filter(|p| p.full_turn_in_context).count();
    let set: Vec<Omega> = match omegas {
        Some(o) => o.to_vec(),
        // Planes with ω = 0 (NoPE planes of some configs) never turn: they add nothing to any
        // margin, so the resolution is that of the rotating planes.
        None => freqs
            .inv_freq
            .iter()
            .filter(|&&w| w != 0.0)
            .map(|&w| Omega::float(w))
            .collect::<Result<_>>()?,
    };
    let resolution = resolve(&set, l, opts.tol)?;
    let dec = decay(&freqs.inv_freq, l, 400)?;
    // The minimum base is defined for an even rotary dimension (default frequencies b^(−2k/d)).
    let min_base_search =
        if opts.min_base && freqs.rotary_dim.is_multiple_of(2) && freqs.rotary_dim > 0 {
            Some(min_base_for_context_on_grid(
                freqs.rotary_dim,
                l,
                opts.min_base_grid,
                progress,
            )?)
        } else {
            None
        };
    let min_base_for_context = min_base_search.as_ref().and_then(|m| m.base);
    let precision: BTreeMap<String, DtypePrecision> = precision_all(freqs, l)
        .into_iter()
        .map(|(d, p)| (d.name().to_string(), p))
        .collect();
    let cases = random_cases(freqs.inv_freq.len(), 8, 0, 1024);
    let invariance = invariance_rows(freqs, &cases, &shift_grid(l.max(2) - 1));

    // Verdict: every number comes from the computed fields.
    let n = planes.len();
    let mut v = String::new();
    let wl_min = planes
        .iter()
        .map(|p| p.wavelength)
        .fold(f64::INFINITY, f64::min);
    let wl_max = planes.iter().map(|p| p.wavelength).fold(0.0, f64::max);
    if planes_full_turn == n {
        v += &format!(
            "All {} planes complete at least one full turn within the context of {} positions (wavelengths {} to {} positions). ",
            n,
            l,
            fmt_g(wl_min),
            fmt_g(wl_max)
        );
    } else {
        v += &format!(
            "{} of {} planes complete a full turn within the context of {} positions (wavelengths {} to {} positions); the other {} turn by less than one full turn over the whole context, so there they act as slow, nearly monotone position signals. ",
            planes_full_turn,
            n,
            l,
            fmt_g(wl_min),
            fmt_g(wl_max),
            n - planes_full_turn
        );
    }
    if freqs.attention_factor != 1.0 {
        v += &format!(
            "cos and sin are scaled by an attention factor of {}. ",
            fmt_g(freqs.attention_factor)
        );
    }
    match (resolution.resolves, resolution.first_alias, resolution.min_margin, resolution.margin_at) {
        (true, _, Some(m), Some(at)) => {
            v += &format!("Every separation 1..{} is distinguishable from 0: the closest call is separation {} with a margin of {} rad. ", l - 1, at, fmt_g(m))
        }
        (false, Some(a), _, _) => v += &format!("Separation {} is indistinguishable from 0 (every plane within {} rad of a full turn): the set aliases within the context. ", a, fmt_g(opts.tol)),
        _ => {}
    }
    match dec.first_negative {
        None => v += &format!("The long-distance decay criterion of Men et al. 2024 holds: B(m) = Σcos(mω) stays ≥ 0 for all m < {} (minimum mean {} at m = {}). ", l, fmt_g(dec.min_mean), dec.min_mean_at),
        Some(m) => v += &format!("The decay criterion of Men et al. 2024 fails: B(m) = Σcos(mω) first turns negative at m = {} < {}. ", m, l),
    }
    if let Some(b) = min_base_for_context {
        match freqs.base {
            Some(cb) => {
                v += &format!("The smallest base satisfying it for rotary dimension {} is about {} (configured: {}, ratio {}", freqs.rotary_dim, fmt_g(b), fmt_g(cb), fmt_g(cb / b));
                match freqs.effective_base {
                    Some(eb) if eb != cb => {
                        v += &format!(
                            "; effective at this context: {}, ratio {}). ",
                            fmt_g(eb),
                            fmt_g(eb / b)
                        )
                    }
                    _ => v += "). ",
                }
            }
            None => {
                v += &format!(
                    "The smallest base satisfying it for rotary dimension {} is about {}. ",
                    freqs.rotary_dim,
                    fmt_g(b)
                )
            }
        }
    }
    let p = &precision[opts.dtype.name()];
    v += &format!(
        "Position ids cast to {} would keep {} of {} distinct values",
        opts.dtype, p.distinct_positions, l
    );
    if let Some(x) = p.first_inexact_position {
        v += &format!(" (exact only up to {})", x - 1);
    }
    if let Some(o) = p.first_overflow_position {
        v += &format!(", ids from {o} overflow");
    }
    v += &format!(
        " (Hugging Face keeps positions in f32: {} distinct); its cos/sin cache cast to {} has {} distinct rows of {}",
        precision["f32"].distinct_positions, opts.dtype, p.distinct_rows, l
    );
    if let Some(d) = p.first_duplicate_row {
        v += &format!(
            " (position {} repeats position {})",
            d,
            p.first_duplicate_of.unwrap_or(0)
        );
    }
    v += ".";
    let key = opts.dtype.name();
    let worst = invariance
        .iter()
        .max_by(|x, y| x.errors[key].total_cmp(&y.errors[key]));
    if let (Some(first), Some(worst)) = (invariance.first(), worst) {
        let exact = invariance
            .iter()
            .map(|r| r.errors["f64_exact"])
            .fold(0.0, f64::max);
        v += &format!(
            " Translation invariance in {}: shifting both positions by {} changes a score by up to {}; the largest change over shifts up to {} is {} (at shift {}; exact f64 reduction: {}).",
            key,
            first.shift,
            fmt_g(first.errors[key]),
            l - 1,
            fmt_g(worst.errors[key]),
            worst.shift,
            fmt_g(exact)
        );
    }
    Ok(AuditReport {
        verdict: v,
        source: freqs.source.clone(),
        base: freqs.base,
        effective_base: freqs.effective_base,
        rotary_dim: freqs.rotary_dim,
        head_dim: freqs.head_dim,
        context: l,
        dtype: opts.dtype,
        planes,
        attention_factor: freqs.attention_factor,
        planes_full_turn,
        dims_full_turn: 2 * planes_full_turn,
        resolves: resolution.resolves,
        min_margin: resolution.min_margin,
        margin_at: resolution.margin_at,
        resolution,
        decay_first_negative: dec.first_negative,
        decay_first_negative_within_context: dec.first_negative.is_some(),
        decay_ok: dec.first_negative.is_none(),
        decay_min_mean: dec.min_mean,
        decay_min_mean_at: dec.min_mean_at,
        decay_curve: dec.curve,
        min_base_for_context,
        min_base_search,
        precision,
        invariance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audit_rejects_work_beyond_the_cap() {
        let o = |context| AuditOptions {
            context,
            dtype: Dtype::Bf16,
            tol: 1e-9,
            min_base: false,
            min_base_grid: 1.0005,
        };
        let f = RotaryFrequencies::from_base(10000.0, 1024).unwrap();
        let e = audit(&f, None, &o(1 << 24), |_| {})
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("at most 4194304 positions for 512 planes"),
            "{e}"
        );
        let f = RotaryFrequencies::from_base(10000.0, 8).unwrap();
        let e = audit(&f, None, &o((1 << 24) + 1), |_| {})
            .unwrap_err()
            .to_string();
        assert!(e.contains("16777217") && e.contains("1..=2^24"), "{e}");
    }

    #[test]
    fn liu_critical_dimension_oracle() {
        // Liu et al. 2023: d = 128, base 1e4, T = 4096 → 64·log_1e4(4096/2π) = 45.03 → 46 planes, 92 dims.
        let f = RotaryFrequencies::from_base(10000.0, 128).unwrap();
        let o = AuditOptions {
            context: 4096,
            dtype: Dtype::Bf16,
            tol: 1e-9,
            min_base: false,
            min_base_grid: 1.0005,
        };
        let r = audit(&f, None, &o, |_| {}).unwrap();
        assert_eq!((r.planes_full_turn, r.dims_full_turn), (46, 92));
        assert!(r.planes[45].full_turn_in_context && !r.planes[46].full_turn_in_context);
        assert!(r.verdict.contains("46 of 64 planes"));
        assert_eq!(r.precision["bf16"].first_inexact_position, Some(257));
    }
}
