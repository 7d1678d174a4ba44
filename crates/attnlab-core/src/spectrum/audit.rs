//! The audit of one rotary configuration: wavelengths, resolution, decay, precision, verdict.

use std::collections::BTreeMap;

use serde::Serialize;

use super::decay::{decay, default_freqs, scan_b_step, Decay, DecayBin};
use super::identity::{
    invariance_rows_for, random_cases, score_scale, shift_grid, Pipeline, ShiftRow,
};
use super::min_base::{
    min_base_certified, min_base_default, min_base_search, MinBase, MinBaseMethod,
};
use super::precision::{precision_all, DtypePrecision};
use super::resolve::{resolve, Resolution};
use super::Watch;
use crate::numeric::Dtype;
use crate::phase::turns_nearest;
use crate::position::frequencies::{
    Omega, Regime, RopeScaling, RopeType, RotaryFrequencies, TrainedContext,
};
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
    /// What the rope type does to this plane (`unscaled` without a scaling type).
    pub regime: Regime,
    /// The default formula's wavelength 2π·base^(2k/d) for this plane (what a runtime that drops
    /// the scaling uses), when the set has a base.
    pub unscaled_wavelength: Option<f64>,
    /// How many times slower than the default the plane turns (default ω / ω: 1 kept, the
    /// factor when divided, LongRoPE's per-plane factor); null for planes that do not rotate.
    pub division: Option<f64>,
}

/// Which LongRoPE factor list applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FactorSet {
    /// `short_factor`: sequence lengths up to the original context.
    Short,
    /// `long_factor`: beyond it.
    Long,
}

/// YaRN's ramp in plane-index units.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ramp {
    /// Planes with index ≤ this keep their frequency.
    pub start: f64,
    /// Planes with index ≥ this are divided by the factor.
    pub end: f64,
}

/// What a scaling type does, plane by plane, summarised.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalingBands {
    /// The rope type.
    pub rope_type: RopeType,
    /// Planes kept at their default frequency.
    pub kept: usize,
    /// Planes between kept and divided.
    pub blended: usize,
    /// Planes divided by the full factor.
    pub divided: usize,
    /// Planes divided by a per-plane factor (LongRoPE).
    pub rescaled: usize,
    /// Planes that do not rotate.
    pub not_rotated: usize,
    /// YaRN's ramp.
    pub ramp: Option<Ramp>,
}

/// The scaled rotation against the unscaled one (a runtime that drops `rope_scaling`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScaledVsUnscaled {
    /// (position m, cosine similarity of R_scaled(m)·q and R_unscaled(m)·q) for a q with equal
    /// norm in every plane: `mean_k cos(m·(ω_k − ω⁰_k))` (the expectation over isotropic q).
    pub cosine: Vec<(u64, f64)>,
    /// The first position where the similarity falls below 0.9 (searched up to
    /// `searched_to`).
    pub first_below_0_9: Option<u64>,
    /// Positions 0..this were searched for it.
    pub searched_to: u64,
}

/// The first separation where the planes left after removing the fastest k all sit within
/// the tolerance of a full turn.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SlowPlaneAlias {
    /// How many of the fastest planes are left out.
    pub fastest_excluded: usize,
    /// The first such separation within the context (null: none).
    pub first_separation: Option<u64>,
    /// The smallest margin of the remaining planes over separations 1..L−1 (radians).
    pub min_margin: Option<f64>,
}

/// Facts of the configuration the audit needs beyond the frequencies (absent for explicit
/// frequencies and base/dim sources).
#[derive(Debug, Clone)]
pub struct ConfigFacts {
    /// The rope type and its parameters.
    pub scaling: RopeScaling,
    /// The contexts the configuration states.
    pub trained: TrainedContext,
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
    /// [`super::min_base::min_base_for_context_on_grid`]; default 1.0005), used only with
    /// `min_base_method` = grid.
    pub min_base_grid: f64,
    /// How the minimum base is searched (default: the certified sweep).
    pub min_base_method: MinBaseMethod,
    /// Facts of the configuration, when the set came from one.
    pub config: Option<ConfigFacts>,
    /// A default-frequency minimum base already found for this rotary dimension and context
    /// (another rope set of the same model): reused instead of searched again.
    pub min_base_known: Option<MinBase>,
}

impl Default for AuditOptions {
    /// L = 4096, bf16, tolerance 1e-9, the certified minimum-base sweep, no config facts.
    fn default() -> Self {
        AuditOptions {
            context: 4096,
            dtype: Dtype::Bf16,
            tol: super::resolve::DEFAULT_TOL,
            min_base: true,
            min_base_grid: super::min_base::DEFAULT_GRID_RATIO,
            min_base_method: MinBaseMethod::CertifiedSweep,
            config: None,
            min_base_known: None,
        }
    }
}

/// How many seeded random (q, k, i, j) draws the audit's translation-invariance table takes
/// the worst error over (positions i, j uniform in 0..1024).
pub const INVARIANCE_DRAWS: usize = 8;

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
    /// Translation-invariance error |S(i+t, j+t) − S(i, j)| vs t up to the context, per pipeline
    /// (the correct ones and [`Pipeline::BUGGY`], the casts users got wrong).
    pub invariance: Vec<ShiftRow>,
    /// The scale the invariance errors are relative to: the RMS of the exact scores q·k of the
    /// random draws (≈ √(rotary dim) for standard-normal q, k).
    pub invariance_score_scale: f64,
    /// The factor multiplying the softmax scale 1/√d in attention (DeepSeek-V2/V3's mscale²
    /// with `mscale_all_dim`), on top of the cos/sin attention factor; 1 when none.
    pub softmax_scale_factor: f64,
    /// LongRoPE: the factor list in use at the audited length.
    pub longrope_factor_set: Option<FactorSet>,
    /// LongRoPE: the sequence length from which the long factors apply (original + 1).
    pub longrope_switch_at: Option<u64>,
    /// The contexts the configuration states (null for sets not read from a config).
    pub trained_context: Option<TrainedContext>,
    /// Whether the audited length exceeds the trained context's limit (null when unknown).
    pub beyond_trained_context: Option<bool>,
    /// What the scaling type does to the planes (null without one).
    pub scaling_bands: Option<ScalingBands>,
    /// The scaled rotation against the unscaled one (null without an active scaling type).
    pub scaled_vs_unscaled: Option<ScaledVsUnscaled>,
    /// Planes that do not complete a full turn within the context (planes − `planes_full_turn`).
    pub planes_without_full_turn: usize,
    /// What the slow planes resolve without the fastest k (k = 1, 2, 4).
    pub slow_plane_aliases: Vec<SlowPlaneAlias>,
    /// The signed (pairwise) criterion for unmasked layers: query/key offsets range over
    /// −(L−1)..L−1, so two pairs are confused when their offsets differ by a separation in
    /// 1..2L−2 that aliases 0 (null when beyond the resolution's limits).
    pub signed_resolution: Option<Resolution>,
    /// The minimum of B(m)/planes over each bin of separations (what the decay chart plots).
    pub decay_bins: Vec<DecayBin>,
    /// The smallest base whose *effective* frequencies (this rope type with these parameters
    /// at this length) satisfy the criterion, when a scaling type is active.
    pub min_base_for_context_effective: Option<f64>,
    /// Details of that search.
    pub min_base_effective_search: Option<MinBase>,
}

/// The findings of an audit: the facts its verdict states, each a number or an enum.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditFindings {
    /// L.
    pub context: u64,
    /// The audited length against the trained context (absent for sets without a config).
    pub trained: Option<TrainedFinding>,
    /// The softmax-scale factor when it is not 1.
    pub softmax_scale_factor: Option<f64>,
    /// LongRoPE's factor switch.
    pub longrope: Option<LongropeFinding>,
    /// The scaled rotation against the unscaled one.
    pub scaled_vs_unscaled: Option<DriftFinding>,
    /// The pairwise criterion for unmasked layers.
    pub signed: Option<ResolutionFinding>,
    /// The smallest base for the effective frequencies of the scaling type.
    pub min_base_effective: Option<MinBaseFinding>,
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

/// The audited length against the contexts the configuration states.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TrainedFinding {
    /// The contexts.
    pub trained: TrainedContext,
    /// The limit (the larger of max_position_embeddings and the intended length).
    pub limit: u64,
    /// Whether L exceeds it.
    pub beyond: bool,
}

/// LongRoPE's switch between factor lists.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LongropeFinding {
    /// The list in use at L.
    pub set: FactorSet,
    /// The sequence length from which the long list applies.
    pub switch_at: u64,
}

/// How far the scaled rotation drifts from the unscaled one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DriftFinding {
    /// The first position with similarity < 0.9.
    pub first_below_0_9: Option<u64>,
    /// Up to where it was searched.
    pub searched_to: u64,
    /// The similarity at the last audited position L−1.
    pub at_last_position: f64,
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
    /// Which frequencies: `default`, or the scaling type's effective ones.
    pub effective_type: Option<RopeType>,
    /// The relative width of the passing island that starts at `base` (certified sweep).
    pub island_rel_width: Option<f64>,
    /// Whether `base` also passes in float32 (Su's table was computed in float32).
    pub f32_passes: Option<bool>,
    /// The first failing separation in float32, when it fails there.
    pub f32_first_negative: Option<u64>,
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// The RMS of the exact scores the errors are relative to.
    pub score_scale: f64,
    /// The largest error of each buggy pipeline over all shifts (∞: positions overflowed).
    pub buggy: Vec<(Pipeline, f64)>,
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
/// let o = AuditOptions { context: 4096, dtype: Dtype::Bf16, tol: 1e-9, min_base: false, min_base_grid: 1.0005, ..Default::default() };
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
    let scaling = opts.config.as_ref().map(|c| &c.scaling);
    let regimes =
        scaling.map(|sc| sc.regimes(freqs.base.unwrap_or(10000.0), freqs.rotary_dim, Some(l)));
    // The default formula at the configured base: what a runtime that drops the scaling uses.
    let unscaled: Option<Vec<f64>> = match (freqs.base, scaling) {
        (Some(b), Some(_)) => Some(default_freqs(b, freqs.rotary_dim)),
        (Some(b), None) if freqs.rope_type == "base" => Some(default_freqs(b, freqs.rotary_dim)),
        _ => None,
    };
    let planes: Vec<PlaneAudit> = freqs
        .inv_freq
        .iter()
        .zip(&freqs.inv_freq_f32)
        .enumerate()
        .map(|(index, (&w, &w32))| {
            let turns = (l - 1) as f64 * w.abs() / tau;
            let u = unscaled.as_ref().and_then(|u| u.get(index).copied());
            PlaneAudit {
                index,
                inv_freq: w,
                inv_freq_f32: w32,
                wavelength: tau / w.abs(),
                turns_in_context: turns,
                full_turn_in_context: turns >= 1.0,
                regime: regimes
                    .as_ref()
                    .and_then(|r| r.planes.get(index).copied())
                    .unwrap_or(if w == 0.0 {
                        Regime::NotRotated
                    } else {
                        Regime::Unscaled
                    }),
                unscaled_wavelength: u.map(|u| tau / u),
                division: match u {
                    Some(u) if w != 0.0 => Some(u / w),
                    Some(_) | None => None,
                },
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
    // What the slow planes resolve without the fastest k, and the signed criterion.
    let mut by_speed: Vec<Omega> = set.clone();
    by_speed.sort_by(|a, b| b.value().abs().total_cmp(&a.value().abs()));
    let slow_plane_aliases: Vec<SlowPlaneAlias> = [1usize, 2, 4]
        .iter()
        .filter(|&&k| k < by_speed.len())
        .map(|&k| {
            let r = resolve(&by_speed[k..], l, opts.tol)?;
            Ok(SlowPlaneAlias {
                fastest_excluded: k,
                first_separation: r.first_alias,
                min_margin: r.min_margin,
            })
        })
        .collect::<Result<_>>()?;
    watch.check("the audit")?;
    let signed_resolution = resolve(&set, 2 * l - 1, opts.tol).ok();
    watch.check("the audit")?;
    let dec = decay(&freqs.inv_freq, l, 400)?;
    // The minimum base is defined for an even rotary dimension (default frequencies b^(−2k/d)).
    let even = freqs.rotary_dim.is_multiple_of(2) && freqs.rotary_dim > 0;
    let min_base_search = if let (true, Some(known)) = (opts.min_base, &opts.min_base_known) {
        Some(known.clone())
    } else if opts.min_base && even {
        Some(match opts.min_base_method {
            MinBaseMethod::CertifiedSweep => min_base_default(freqs.rotary_dim, l, watch)?,
            MinBaseMethod::Grid => min_base_search(freqs.rotary_dim, l, opts.min_base_grid, watch)?,
        })
    } else {
        None
    };
    let min_base_for_context = min_base_search.as_ref().and_then(|m| m.base());
    // The effective frequencies of an active scaling type, searched over the base.
    let active =
        scaling.filter(|sc| sc.rope_type().scales() && unscaled.as_ref() != Some(&freqs.inv_freq));
    let min_base_effective_search = match active {
        Some(sc) if opts.min_base && even => {
            let dim = freqs.rotary_dim;
            let at = move |b: f64| sc.inv_freq_f64(b, dim, Some(l));
            let exps = sc
                .power_law()
                .then(|| (0..dim / 2).map(|k| 2.0 * k as f64 / dim as f64).collect());
            Some(min_base_certified(&at, exps, sc.name(), l, watch)?)
        }
        Some(_) | None => None,
    };
    let min_base_for_context_effective = min_base_effective_search.as_ref().and_then(|m| m.base());
    watch.check("the audit")?;
    // The scaled rotation against the unscaled one.
    let scaled_vs_unscaled = match (active, &unscaled) {
        (Some(_), Some(u)) => Some(drift(&freqs.inv_freq, u, l)),
        _ => None,
    };
    let precision: BTreeMap<Dtype, DtypePrecision> = precision_all(freqs, l).into_iter().collect();
    let cases = random_cases(freqs.inv_freq.len(), INVARIANCE_DRAWS, 0, 1024);
    let pipelines: Vec<Pipeline> = Pipeline::ALL.into_iter().chain(Pipeline::BUGGY).collect();
    let invariance = invariance_rows_for(freqs, &cases, &shift_grid(l.max(2) - 1), &pipelines);
    let invariance_score_scale = score_scale(freqs, &cases);
    let trained_context = opts.config.as_ref().map(|c| c.trained);
    let beyond_trained_context = trained_context.and_then(|t| t.limit).map(|lim| l > lim);
    let (longrope_factor_set, longrope_switch_at) = match scaling {
        Some(sc) if sc.rope_type() == RopeType::Longrope => {
            let at = sc.switch_at();
            (
                at.map(|a| {
                    if l >= a {
                        FactorSet::Long
                    } else {
                        FactorSet::Short
                    }
                }),
                at,
            )
        }
        Some(_) | None => (None, None),
    };
    let scaling_bands = match (scaling, &regimes) {
        (Some(sc), Some(r)) if sc.rope_type().scales() => {
            let n = |g: Regime| r.planes.iter().filter(|&&x| x == g).count();
            Some(ScalingBands {
                rope_type: sc.rope_type(),
                kept: n(Regime::Kept),
                blended: n(Regime::Blended),
                divided: n(Regime::Divided),
                rescaled: n(Regime::Rescaled),
                not_rotated: n(Regime::NotRotated),
                ramp: r.ramp.map(|(start, end)| Ramp { start, end }),
            })
        }
        _ => None,
    };
    let softmax_scale_factor = freqs.softmax_scale_multiplier.unwrap_or(1.0);
    let parts = Parts {
        planes: &planes,
        planes_full_turn,
        resolution: &resolution,
        signed: signed_resolution.as_ref(),
        dec: &dec,
        min_base: min_base_search.as_ref(),
        min_base_effective: min_base_effective_search.as_ref(),
        effective_type: active.map(RopeScaling::rope_type),
        precision: &precision,
        invariance: &invariance,
        trained: trained_context,
        softmax_scale_factor,
        longrope: longrope_factor_set.zip(longrope_switch_at),
        drift: scaled_vs_unscaled.as_ref(),
        score_scale: invariance_score_scale,
    };
    let findings = findings(freqs, opts, &parts);
    Ok(AuditReport {
        findings,
        source: freqs.source.clone(),
        base: freqs.base,
        effective_base: freqs.effective_base,
        rotary_dim: freqs.rotary_dim,
        head_dim: freqs.head_dim,
        context: l,
        dtype: opts.dtype,
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
        decay_bins: dec.bins,
        min_base_for_context,
        min_base_search,
        precision,
        invariance,
        invariance_score_scale,
        softmax_scale_factor,
        longrope_factor_set,
        longrope_switch_at,
        trained_context,
        beyond_trained_context,
        scaling_bands,
        scaled_vs_unscaled,
        planes_without_full_turn: planes.len() - planes_full_turn,
        planes,
        slow_plane_aliases,
        signed_resolution,
        min_base_for_context_effective,
        min_base_effective_search,
    })
}

/// Positions where the scaled and unscaled rotations are compared.
pub const DRIFT_POSITIONS: [u64; 5] = [0, 1000, 8192, 20000, 60000];

/// The cosine similarity of the scaled and unscaled rotations of a q with equal norm in every
/// plane, `mean_k cos(m·(ω_k − ω⁰_k))`, at [`DRIFT_POSITIONS`] and L − 1, and the first
/// position below 0.9 (searched up to max(L, 2²⁰) by the recurrence of [`scan_b_step`] on the
/// frequency differences).
fn drift(scaled: &[f64], unscaled: &[f64], l: u64) -> ScaledVsUnscaled {
    let n = scaled.len().max(1) as f64;
    let at = |m: u64| -> f64 {
        let mf = m as f64;
        scaled
            .iter()
            .zip(unscaled)
            .map(|(&w, &u)| {
                let d = turns_nearest(mf, w) - turns_nearest(mf, u);
                (std::f64::consts::TAU * d).cos()
            })
            .sum::<f64>()
            / n
    };
    let mut cosine: Vec<(u64, f64)> = DRIFT_POSITIONS.iter().map(|&m| (m, at(m))).collect();
    if !DRIFT_POSITIONS.contains(&(l - 1)) {
        cosine.push((l - 1, at(l - 1)));
        cosine.sort_by_key(|&(m, _)| m);
    }
    let diff: Vec<f64> = scaled.iter().zip(unscaled).map(|(w, u)| w - u).collect();
    let searched_to = l.max(1 << 20);
    let mut first = None;
    scan_b_step(&diff, 0, searched_to, 1, |m, b| {
        if b / n < 0.9 {
            first = Some(m);
            false
        } else {
            true
        }
    });
    ScaledVsUnscaled {
        cosine,
        first_below_0_9: first,
        searched_to,
    }
}

/// The computed parts the findings are taken from.
struct Parts<'a> {
    planes: &'a [PlaneAudit],
    planes_full_turn: usize,
    resolution: &'a Resolution,
    signed: Option<&'a Resolution>,
    dec: &'a Decay,
    min_base: Option<&'a MinBase>,
    min_base_effective: Option<&'a MinBase>,
    effective_type: Option<RopeType>,
    precision: &'a BTreeMap<Dtype, DtypePrecision>,
    invariance: &'a [ShiftRow],
    trained: Option<TrainedContext>,
    softmax_scale_factor: f64,
    longrope: Option<(FactorSet, u64)>,
    drift: Option<&'a ScaledVsUnscaled>,
    score_scale: f64,
}

fn resolution_finding(r: &Resolution, tol: f64) -> ResolutionFinding {
    match (r.first_alias, r.min_margin, r.margin_at) {
        (Some(separation), _, _) => ResolutionFinding::Aliases { separation, tol },
        (None, Some(margin), Some(closest_separation)) => ResolutionFinding::Resolves {
            closest_separation,
            margin,
        },
        (None, None, _) | (None, Some(_), None) => ResolutionFinding::NoSeparation,
    }
}

/// The verdict's facts, taken from the computed parts (every number is one of theirs or a
/// ratio of two of them).
fn findings(freqs: &RotaryFrequencies, opts: &AuditOptions, p: &Parts) -> AuditFindings {
    let planes = p.planes;
    let turns = TurnsFinding {
        planes: planes.len(),
        full_turn: p.planes_full_turn,
        wavelength_min: planes
            .iter()
            .map(|p| p.wavelength)
            .fold(f64::INFINITY, f64::min),
        wavelength_max: planes
            .iter()
            .map(|p| p.wavelength)
            .filter(|w| w.is_finite())
            .fold(0.0, f64::max),
    };
    let resolution = resolution_finding(p.resolution, opts.tol);
    let decay = match p.dec.first_negative {
        Some(first_negative) => DecayFinding::Fails { first_negative },
        None => DecayFinding::Holds {
            min_mean: p.dec.min_mean,
            at: p.dec.min_mean_at,
        },
    };
    let ratio = |base: f64, b: f64| BaseRatio {
        base,
        ratio: base / b,
    };
    let finding = |m: &MinBase, effective_type: Option<RopeType>| {
        m.base().map(|b| MinBaseFinding {
            base: b,
            effective_type,
            island_rel_width: m.island().map(|i| i.rel_width),
            f32_passes: m.f32_check().map(|c| c.passes),
            f32_first_negative: m.f32_check().and_then(|c| c.first_negative),
            rotary_dim: freqs.rotary_dim,
            configured: freqs.base.map(|cb| ratio(cb, b)),
            effective: match (freqs.base, freqs.effective_base) {
                (Some(cb), Some(eb)) if eb != cb => Some(ratio(eb, b)),
                (Some(_) | None, Some(_) | None) => None,
            },
        })
    };
    let min_base = p.min_base.and_then(|m| finding(m, None));
    let min_base_effective = p
        .min_base_effective
        .and_then(|m| finding(m, p.effective_type));
    let pr = &p.precision[&opts.dtype];
    let precision = PrecisionFinding {
        dtype: opts.dtype,
        distinct_positions: pr.distinct_positions,
        exact_up_to: pr.first_inexact_position.map(|x| x - 1),
        overflow_from: pr.first_overflow_position,
        f32_distinct_positions: p.precision[&Dtype::F32].distinct_positions,
        distinct_rows: pr.distinct_rows,
        first_duplicate: pr.first_duplicate_row.map(|position| DuplicateRow {
            position,
            repeats: pr.first_duplicate_of.unwrap_or(0),
        }),
    };
    let pipeline = Pipeline::of(opts.dtype);
    let invariance = p.invariance;
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
            score_scale: p.score_scale,
            buggy: Pipeline::BUGGY
                .iter()
                .filter_map(|b| {
                    invariance
                        .iter()
                        .filter_map(|r| r.errors.get(b))
                        .copied()
                        .reduce(f64::max)
                        .map(|e| (*b, e))
                })
                .collect(),
        }),
        _ => None,
    };
    let trained = p.trained.and_then(|t| {
        t.limit.map(|limit| TrainedFinding {
            trained: t,
            limit,
            beyond: opts.context > limit,
        })
    });
    AuditFindings {
        context: opts.context,
        trained,
        softmax_scale_factor: (p.softmax_scale_factor != 1.0).then_some(p.softmax_scale_factor),
        longrope: p
            .longrope
            .map(|(set, switch_at)| LongropeFinding { set, switch_at }),
        scaled_vs_unscaled: p.drift.map(|d| DriftFinding {
            first_below_0_9: d.first_below_0_9,
            searched_to: d.searched_to,
            at_last_position: d
                .cosine
                .iter()
                .find(|&&(m, _)| m == opts.context - 1)
                .map_or(1.0, |&(_, c)| c),
        }),
        signed: p.signed.map(|r| resolution_finding(r, opts.tol)),
        min_base_effective,
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
            ..Default::default()
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
            ..Default::default()
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
