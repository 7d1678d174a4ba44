//! The audit of one rotary configuration: wavelengths, resolution, decay, precision, verdict.

use std::collections::BTreeMap;

use serde::Serialize;

use super::decay::{decay, min_base_search, Decay, MinBase};
use super::identity::{invariance_rows, random_cases, shift_grid, Pipeline, ShiftRow};
use super::precision::{precision_all, DtypePrecision};
use super::resolve::{resolve, Resolution};
use super::Watch;
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
    /// What the audit found, as typed facts (the verdict sentence is written from these by
    /// [`crate::present::prose::rope::audit_verdict`]).
    pub findings: AuditFindings,
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
    pub precision: BTreeMap<Dtype, DtypePrecision>,
    /// Translation-invariance error |S(i+t, j+t) − S(i, j)| vs t up to the context, per pipeline.
    pub invariance: Vec<ShiftRow>,
}

/// The findings of an audit: the facts its verdict states, each a number or an enum.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditFindings {
    /// L.
    pub context: u64,
    /// How many planes turn fully within the context.
    pub turns: TurnsFinding,
    /// The cos/sin attention factor when it is not 1.
    pub attention_factor: Option<f64>,
    /// Whether every separation is distinguished from 0.
    pub resolution: ResolutionFinding,
    /// Men et al. 2024's decay criterion.
    pub decay: DecayFinding,
    /// The smallest base satisfying the criterion, when it was searched and found.
    pub min_base: Option<MinBaseFinding>,
    /// Position ids and cos/sin rows in the verdict's dtype.
    pub precision: PrecisionFinding,
    /// Translation invariance in the verdict's dtype (absent without shifts).
    pub invariance: Option<InvarianceFinding>,
}

/// Planes that complete a full turn within the context.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TurnsFinding {
    /// Number of planes.
    pub planes: usize,
    /// Planes with (L−1)·ω ≥ 2π.
    pub full_turn: usize,
    /// Shortest wavelength 2π/ω (positions).
    pub wavelength_min: f64,
    /// Longest wavelength.
    pub wavelength_max: f64,
}

/// The resolution, as the verdict states it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ResolutionFinding {
    /// Every separation 1..L−1 is distinguished from 0.
    Resolves {
        /// The separation with the smallest margin.
        closest_separation: u64,
        /// That margin (radians).
        margin: f64,
    },
    /// A separation is within `tol` of a full turn in every plane.
    Aliases {
        /// The first such separation.
        separation: u64,
        /// The alias tolerance (radians).
        tol: f64,
    },
    /// L = 1: there is no separation to distinguish.
    NoSeparation,
}

/// Men et al. 2024's criterion B(m) = Σ_k cos(m·ω_k) ≥ 0 for m < L.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DecayFinding {
    /// B(m) ≥ 0 for every m < L.
    Holds {
        /// min over m < L of B(m)/planes.
        min_mean: f64,
        /// Where.
        at: u64,
    },
    /// B(m) < 0 first at `first_negative` < L.
    Fails {
        /// The first m with B(m) < 0.
        first_negative: u64,
    },
}

/// The smallest base whose default frequencies satisfy the decay criterion at this context.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MinBaseFinding {
    /// The base found.
    pub base: f64,
    /// The rotary dimension it is for.
    pub rotary_dim: usize,
    /// The configured base and its ratio to `base`, when the set has a base.
    pub configured: Option<BaseRatio>,
    /// The effective base at this context and its ratio, when it differs from the configured one.
    pub effective: Option<BaseRatio>,
}

/// A base and its ratio to the smallest passing base.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BaseRatio {
    /// The base.
    pub base: f64,
    /// base / the smallest passing base.
    pub ratio: f64,
}

/// What the verdict's dtype does to positions 0..L−1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PrecisionFinding {
    /// The dtype.
    pub dtype: Dtype,
    /// Distinct position ids once cast to the dtype.
    pub distinct_positions: u64,
    /// Ids are exact up to this one (when some id in the context is not).
    pub exact_up_to: Option<u64>,
    /// The first id that overflows, if any.
    pub overflow_from: Option<u64>,
    /// Distinct ids in f32 (where Hugging Face keeps positions).
    pub f32_distinct_positions: u64,
    /// Distinct cos/sin cache rows in the dtype.
    pub distinct_rows: u64,
    /// The first position whose row repeats an earlier one.
    pub first_duplicate: Option<DuplicateRow>,
}

/// A cache row that repeats an earlier position's row.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DuplicateRow {
    /// The position.
    pub position: u64,
    /// The earlier position with the same row.
    pub repeats: u64,
}

/// Translation invariance |S(i+t, j+t) − S(i, j)| in the verdict's dtype.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct InvarianceFinding {
    /// The pipeline (the dtype's Hugging Face pipeline; f64 is the naive one).
    pub pipeline: Pipeline,
    /// The smallest shift.
    pub first_shift: u64,
    /// The error at it.
    pub first_error: f64,
    /// The largest shift examined.
    pub max_shift: u64,
    /// The shift with the largest error.
    pub worst_shift: u64,
    /// That error.
    pub worst_error: f64,
    /// The largest error of the accurately reduced f64 pipeline over all shifts.
    pub exact_error: f64,
}

/// Audits a frequency set at context L. `omegas` (if given) keeps exact multiples of π exact
/// for the resolution; otherwise `freqs.inv_freq` is used. `watch` receives the progress of the
/// minimum-base search (fractions in [0, 1]) and can stop it.
///
/// ```
/// use attnlab_core::numeric::Dtype;
/// use attnlab_core::position::frequencies::RotaryFrequencies;
/// use attnlab_core::spectrum::{audit::{audit, AuditOptions}, Watch};
/// let f = RotaryFrequencies::from_base(10000.0, 128).unwrap();
/// let o = AuditOptions { context: 4096, dtype: Dtype::Bf16, tol: 1e-9, min_base: false, min_base_grid: 1.0005 };
/// let r = audit(&f, None, &o, &Watch::default()).unwrap();
/// assert_eq!(r.planes_full_turn, 46); // Liu et al. 2023: critical dimension 92 for Llama 2
/// ```
///
/// # Errors
/// `context` not in 1..=[`MAX_AUDIT_CONTEXT`] or context × planes above [`MAX_AUDIT_WORK`], bad
/// tolerance or grid ratio; [`crate::ErrorKind::Cancelled`] when `watch` stops it.
pub fn audit(
    freqs: &RotaryFrequencies,
    omegas: Option<&[Omega]>,
    opts: &AuditOptions,
    watch: &Watch,
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
    watch.check("the audit")?;
    let resolution = resolve(&set, l, opts.tol)?;
    watch.check("the audit")?;
    let dec = decay(&freqs.inv_freq, l, 400)?;
    // The minimum base is defined for an even rotary dimension (default frequencies b^(−2k/d)).
    let min_base_search =
        if opts.min_base && freqs.rotary_dim.is_multiple_of(2) && freqs.rotary_dim > 0 {
            Some(min_base_search(
                freqs.rotary_dim,
                l,
                opts.min_base_grid,
                watch,
            )?)
        } else {
            None
        };
    let min_base_for_context = min_base_search.as_ref().and_then(|m| m.base);
    watch.check("the audit")?;
    let precision: BTreeMap<Dtype, DtypePrecision> = precision_all(freqs, l).into_iter().collect();
    let cases = random_cases(freqs.inv_freq.len(), 8, 0, 1024);
    let invariance = invariance_rows(freqs, &cases, &shift_grid(l.max(2) - 1));
    let findings = findings(
        freqs,
        opts,
        &planes,
        planes_full_turn,
        &resolution,
        &dec,
        min_base_for_context,
        &precision,
        &invariance,
    );
    Ok(AuditReport {
        findings,
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

/// The verdict's facts, taken from the computed parts (every number is one of theirs or a
/// ratio of two of them).
#[allow(clippy::too_many_arguments)]
fn findings(
    freqs: &RotaryFrequencies,
    opts: &AuditOptions,
    planes: &[PlaneAudit],
    planes_full_turn: usize,
    resolution: &Resolution,
    dec: &Decay,
    min_base: Option<f64>,
    precision: &BTreeMap<Dtype, DtypePrecision>,
    invariance: &[ShiftRow],
) -> AuditFindings {
    let turns = TurnsFinding {
        planes: planes.len(),
        full_turn: planes_full_turn,
        wavelength_min: planes
            .iter()
            .map(|p| p.wavelength)
            .fold(f64::INFINITY, f64::min),
        wavelength_max: planes.iter().map(|p| p.wavelength).fold(0.0, f64::max),
    };
    let resolution = match (
        resolution.first_alias,
        resolution.min_margin,
        resolution.margin_at,
    ) {
        (Some(separation), _, _) => ResolutionFinding::Aliases {
            separation,
            tol: opts.tol,
        },
        (None, Some(margin), Some(closest_separation)) => ResolutionFinding::Resolves {
            closest_separation,
            margin,
        },
        (None, None, _) | (None, Some(_), None) => ResolutionFinding::NoSeparation,
    };
    let decay = match dec.first_negative {
        Some(first_negative) => DecayFinding::Fails { first_negative },
        None => DecayFinding::Holds {
            min_mean: dec.min_mean,
            at: dec.min_mean_at,
        },
    };
    let ratio = |base: f64, b: f64| BaseRatio {
        base,
        ratio: base / b,
    };
    let min_base = min_base.map(|b| MinBaseFinding {
        base: b,
        rotary_dim: freqs.rotary_dim,
        configured: freqs.base.map(|cb| ratio(cb, b)),
        effective: match (freqs.base, freqs.effective_base) {
            (Some(cb), Some(eb)) if eb != cb => Some(ratio(eb, b)),
            (Some(_) | None, Some(_) | None) => None,
        },
    });
    let p = &precision[&opts.dtype];
    let precision = PrecisionFinding {
        dtype: opts.dtype,
        distinct_positions: p.distinct_positions,
        exact_up_to: p.first_inexact_position.map(|x| x - 1),
        overflow_from: p.first_overflow_position,
        f32_distinct_positions: precision[&Dtype::F32].distinct_positions,
        distinct_rows: p.distinct_rows,
        first_duplicate: p.first_duplicate_row.map(|position| DuplicateRow {
            position,
            repeats: p.first_duplicate_of.unwrap_or(0),
        }),
    };
    let pipeline = Pipeline::of(opts.dtype);
    let worst = invariance
        .iter()
        .max_by(|x, y| x.errors[&pipeline].total_cmp(&y.errors[&pipeline]));
    let invariance = match (invariance.first(), invariance.last(), worst) {
        (Some(first), Some(last), Some(worst)) => Some(InvarianceFinding {
            pipeline,
            first_shift: first.shift,
            first_error: first.errors[&pipeline],
            max_shift: last.shift,
            worst_shift: worst.shift,
            worst_error: worst.errors[&pipeline],
            exact_error: invariance
                .iter()
                .map(|r| r.errors[&Pipeline::F64Exact])
                .fold(0.0, f64::max),
        }),
        _ => None,
    };
    AuditFindings {
        context: opts.context,
        turns,
        attention_factor: (freqs.attention_factor != 1.0).then_some(freqs.attention_factor),
        resolution,
        decay,
        min_base,
        precision,
        invariance,
    }
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
        let e = audit(&f, None, &o(1 << 24), &Watch::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("at most 4194304 positions for 512 planes"),
            "{e}"
        );
        let f = RotaryFrequencies::from_base(10000.0, 8).unwrap();
        let e = audit(&f, None, &o((1 << 24) + 1), &Watch::default())
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
        let r = audit(&f, None, &o, &Watch::default()).unwrap();
        assert_eq!((r.planes_full_turn, r.dims_full_turn), (46, 92));
        assert!(r.planes[45].full_turn_in_context && !r.planes[46].full_turn_in_context);
        assert_eq!(
            r.findings.turns,
            TurnsFinding {
                planes: 64,
                full_turn: 46,
                wavelength_min: r.planes[0].wavelength,
                wavelength_max: r.planes[63].wavelength,
            }
        );
        assert_eq!(r.precision[&Dtype::Bf16].first_inexact_position, Some(257));
        assert_eq!(r.findings.precision.exact_up_to, Some(256));
    }
}
