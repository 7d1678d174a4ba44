//! The relative-position identity of rotary encodings and its translation invariance per dtype.
//!
//! For a frequency set ω_0..ω_{P−1}, a vector x of dimension 2P is rotated plane by plane
//! (Hugging Face's half-split pairing: plane p is `(x[p], x[p+P])`):
//! `R(mω)x = (x_p cos mω_p − x_{p+P} sin mω_p, x_{p+P} cos mω_p + x_p sin mω_p)`.
//! Since `R(a)ᵀR(b) = R(b − a)`, the score `(R(iω)q)ᵀ(R(jω)k)` equals `qᵀR((j−i)ω)k`, and
//! therefore does not change when both positions move by the same shift t.

use std::collections::BTreeMap;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use serde::Serialize;

use crate::numeric::Dtype;
use crate::phase::turns_nearest;
use crate::position::frequencies::{RotaryFrequencies, MAX_POSITION};
use crate::{Error, Result};

/// Rotates the plane `(a, b)` by the angle whose cosine and sine are `(c, s)`, in f64.
#[inline]
fn rot(a: f64, b: f64, c: f64, s: f64) -> (f64, f64) {
    (a * c - b * s, b * c + a * s)
}

/// `cos, sin` of the phase `m·ω` after an accurate reduction to (−π, π] (see [`turns_nearest`]).
#[inline]
fn cos_sin_exact(m: f64, w: f64) -> (f64, f64) {
    let a = std::f64::consts::TAU * turns_nearest(m, w);
    (a.cos(), a.sin())
}

/// `(R(iω)q)ᵀ(R(jω)k)` in f64, every phase reduced accurately. `q` and `k` have length 2·planes
/// (half-split layout).
pub fn score_absolute(omegas: &[f64], q: &[f64], k: &[f64], i: f64, j: f64) -> f64 {
    let p = omegas.len();
    let mut acc = 0.0;
    for (n, &w) in omegas.iter().enumerate() {
        let (ci, si) = cos_sin_exact(i, w);
        let (cj, sj) = cos_sin_exact(j, w);
        let (q1, q2) = rot(q[n], q[n + p], ci, si);
        let (k1, k2) = rot(k[n], k[n + p], cj, sj);
        acc += q1 * k1 + q2 * k2;
    }
    acc
}

/// `qᵀR(sω)k` in f64 with an accurate reduction of `s·ω` (s = j − i may be negative).
pub fn score_relative(omegas: &[f64], q: &[f64], k: &[f64], s: f64) -> f64 {
    let p = omegas.len();
    let mut acc = 0.0;
    for (n, &w) in omegas.iter().enumerate() {
        let (c, sn) = cos_sin_exact(s, w);
        let (k1, k2) = rot(k[n], k[n + p], c, sn);
        acc += q[n] * k1 + q[n + p] * k2;
    }
    acc
}

/// The score `(R(iω)q)ᵀ(R(jω)k)` as a real implementation computes it in `dtype`, following
/// Hugging Face's forward pass (rope-formulas.md §3):
///
/// * `f32`, `bf16`, `f16`: position `m` and `inv_freq_f32` in f32, angle = f32 product
///   `fl32(m)·inv_freq_f32`, `cos`/`sin` evaluated in f32 (here: the f64 cosine of the f32 angle,
///   rounded to f32), multiplied by the f32 attention factor, then cast to `dtype`
///   (`Dtype::round_f32`). q and k are cast to `dtype`; `q·cos + rotate_half(q)·sin` is
///   evaluated in `dtype` (each product and the sum rounded to `dtype`); the dot product of the
///   rotated q and k accumulates in f32 (as GPU matmul kernels do for bf16/f16 inputs: a product
///   of two bf16/f16 numbers is exact in f32) and is not rounded further.
/// * `f64`: the naive f64 pipeline — `m as f64 · inv_freq` (f64), f64 cos/sin, f64 arithmetic,
///   no special angle reduction.
pub fn pipeline_score(
    freqs: &RotaryFrequencies,
    q: &[f64],
    k: &[f64],
    i: u64,
    j: u64,
    dtype: Dtype,
) -> f64 {
    let p = freqs.inv_freq.len();
    let af = freqs.attention_factor;
    if dtype == Dtype::F64 {
        let mut acc = 0.0;
        for n in 0..p {
            let w = freqs.inv_freq[n];
            let (ai, aj) = (i as f64 * w, j as f64 * w);
            let (q1, q2) = rot(q[n], q[n + p], ai.cos() * af, ai.sin() * af);
            let (k1, k2) = rot(k[n], k[n + p], aj.cos() * af, aj.sin() * af);
            acc += q1 * k1 + q2 * k2;
        }
        return acc;
    }
    let af32 = af as f32;
    let cs = |m: u64, n: usize| -> (f64, f64) {
        let angle = (m as f32) * freqs.inv_freq_f32[n];
        let c = (angle as f64).cos() as f32 * af32;
        let s = (angle as f64).sin() as f32 * af32;
        (dtype.round_f32(c), dtype.round_f32(s))
    };
    rotated_dot(q, k, p, (i, j), cs, dtype)
}

/// `(R_i q)ᵀ(R_j k)` over the p planes (n, n + p) of half-split q and k, with `cs(m, n)` the
/// (cos, sin) at position m of plane n: `q·cos + rotate_half(q)·sin` with
/// `rotate_half(q) = (−q2, q1)`, each product and sum rounded to `dtype`, the dot product
/// accumulated in f32.
fn rotated_dot(
    q: &[f64],
    k: &[f64],
    p: usize,
    (i, j): (u64, u64),
    cs: impl Fn(u64, usize) -> (f64, f64),
    dtype: Dtype,
) -> f64 {
    let r = |x: f64| dtype.round(x);
    let rotate = |a: f64, b: f64, c: f64, s: f64| -> (f64, f64) {
        let (a, b) = (r(a), r(b));
        (r(r(a * c) + r(-b * s)), r(r(b * c) + r(a * s)))
    };
    let mut acc = 0.0f32;
    for n in 0..p {
        let (ci, si) = cs(i, n);
        let (cj, sj) = cs(j, n);
        let (q1, q2) = rotate(q[n], q[n + p], ci, si);
        let (k1, k2) = rotate(k[n], k[n + p], cj, sj);
        acc += (q1 * k1) as f32;
        acc += (q2 * k2) as f32;
    }
    acc as f64
}

/// The score as one of the [`Pipeline::BUGGY`] pipelines computes it: the f32 pipeline of
/// [`pipeline_score`] with the angle formed as the bug forms it — `inv_freq` rounded to bf16
/// (`Bf16InvFreq`), position, inv_freq and product rounded to bf16 (`Bf16Angles`), or the
/// position cast to f16 (`F16Positions`; ∞ from 65520 on, which makes the score NaN, reported
/// as an infinite error). For the other pipelines it is [`pipeline_score`].
pub fn pipeline_score_as(
    freqs: &RotaryFrequencies,
    q: &[f64],
    k: &[f64],
    i: u64,
    j: u64,
    pipeline: Pipeline,
) -> f64 {
    let angle: fn(u64, f32) -> f32 = match pipeline {
        Pipeline::Bf16InvFreq => |m, w| (m as f32) * (Dtype::Bf16.round_f32(w) as f32),
        Pipeline::Bf16Angles => |m, w| {
            let b = |x: f32| Dtype::Bf16.round_f32(x) as f32;
            b(b(m as f32) * b(w))
        },
        Pipeline::F16Positions => |m, w| (Dtype::F16.round(m as f64) as f32) * w,
        Pipeline::F64Exact => {
            return score_absolute(&freqs.inv_freq, q, k, i as f64, j as f64);
        }
        Pipeline::F64 => return pipeline_score(freqs, q, k, i, j, Dtype::F64),
        Pipeline::F32 => return pipeline_score(freqs, q, k, i, j, Dtype::F32),
        Pipeline::Bf16 => return pipeline_score(freqs, q, k, i, j, Dtype::Bf16),
        Pipeline::F16 => return pipeline_score(freqs, q, k, i, j, Dtype::F16),
    };
    let p = freqs.inv_freq.len();
    let af32 = freqs.attention_factor as f32;
    let cs = |m: u64, n: usize| -> (f64, f64) {
        let a = angle(m, freqs.inv_freq_f32[n]) as f64;
        (
            (a.cos() as f32 * af32) as f64,
            (a.sin() as f32 * af32) as f64,
        )
    };
    rotated_dot(q, k, p, (i, j), cs, Dtype::F32)
}

/// The scale the invariance errors are relative to: the root mean square of the exact scores
/// `(R(iω)q)ᵀ(R(jω)k)` of the cases (≈ √(2·planes) for standard-normal q, k).
pub fn score_scale(freqs: &RotaryFrequencies, cases: &[(Vec<f64>, Vec<f64>, u64, u64)]) -> f64 {
    if cases.is_empty() {
        return 0.0;
    }
    let sum: f64 = cases
        .iter()
        .map(|(q, k, i, j)| score_absolute(&freqs.inv_freq, q, k, *i as f64, *j as f64).powi(2))
        .sum();
    (sum / cases.len() as f64).sqrt()
}

/// Draws a standard-normal vector of length `n` from a ChaCha8 stream.
fn normal_vec(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| rng.sample::<f64, _>(StandardNormal))
        .collect()
}

/// Tolerance factor of the f64 identity, in units of eps64 × Σ_p |q_p||k_p|.
///
/// Why 64: each of the three reduced phases (iω, jω, (j−i)ω) is accurate to ≲ 2 ulp of π
/// (4 eps); cos/sin add 1 ulp each; a plane term (R q)·(R k) is bounded by |q_p||k_p| and its
/// evaluation (two rotations, a 2-term dot product, the running sum) adds about 8 roundings of
/// that size. 3·4·2π ≈ 75 eps of angle error would be the very worst case; 64 eps is a few times
/// what we measure (typically < 10).
pub const IDENTITY_TOL_EPS: f64 = 64.0;

crate::choice! {
    /// A way of computing a rotary score, compared in the translation-invariance table.
    #[derive(PartialOrd, Ord)]
    pub enum Pipeline("pipeline") {
        /// f64 with the accurate phase reduction of [`crate::phase`] (the reference).
        F64Exact = "f64_exact",
        /// The naive f64 pipeline (`m as f64 · inv_freq`, f64 cos/sin).
        F64 = "f64",
        /// Hugging Face's float32 pipeline.
        F32 = "f32",
        /// Hugging Face's pipeline with cos/sin and the rotation in bfloat16.
        Bf16 = "bf16",
        /// Hugging Face's pipeline with cos/sin and the rotation in float16.
        F16 = "f16",
        /// A bug users hit: the f32 pipeline with `inv_freq` rounded to bfloat16 first
        /// (transformers #29496, sglang-jax #1472, candle #3520).
        Bf16InvFreq = "bf16_inv_freq",
        /// A bug users hit: the angles m·ω computed in bfloat16 (positions and inv_freq cast
        /// to bf16, the product rounded to bf16) under autocast (transformers PR #29285).
        Bf16Angles = "bf16_angles",
        /// A bug users hit: positions cast to float16 before the product (Megatron-LM #535:
        /// ids collide from 2049 on and overflow from 65520).
        F16Positions = "f16_positions",
    }
}

impl Pipeline {
    /// Every pipeline, in display order (the reference first).
    pub const ALL: [Pipeline; 5] = [
        Pipeline::F64Exact,
        Pipeline::F64,
        Pipeline::F32,
        Pipeline::Bf16,
        Pipeline::F16,
    ];

    /// The buggy pipelines users hit, modelled next to the correct ones (each is the f32
    /// pipeline with one cast in the wrong place).
    pub const BUGGY: [Pipeline; 3] = [
        Pipeline::Bf16InvFreq,
        Pipeline::Bf16Angles,
        Pipeline::F16Positions,
    ];

    /// The pipeline a dtype's model runs (f64: the naive one).
    pub fn of(dtype: Dtype) -> Pipeline {
        match dtype {
            Dtype::F64 => Pipeline::F64,
            Dtype::F32 => Pipeline::F32,
            Dtype::Bf16 => Pipeline::Bf16,
            Dtype::F16 => Pipeline::F16,
        }
    }
}

/// One row of the translation-invariance table: the largest |score(i+t, j+t) − score(i, j)| over
/// the trials, per pipeline.
#[derive(Debug, Clone, Serialize)]
pub struct ShiftRow {
    /// The common shift t added to both positions.
    pub shift: u64,
    /// Error per pipeline: `f64_exact` (accurate reduction) and `f64`, `f32`, `bf16`, `f16`
    /// (the pipelines of [`pipeline_score`]).
    pub errors: BTreeMap<Pipeline, f64>,
}

/// The result of [`identity_check`].
#[derive(Debug, Clone, Serialize)]
pub struct IdentityReport {
    /// The frequencies used (radians per position).
    pub inv_freq: Vec<f64>,
    /// Seed of the ChaCha8 generator.
    pub seed: u64,
    /// Number of random (q, k, i, j) trials.
    pub trials: usize,
    /// Largest |(R(iω)q)ᵀ(R(jω)k) − qᵀR((j−i)ω)k| over the trials.
    pub max_abs_error: f64,
    /// Largest error / tolerance ratio (≤ 1 means every trial passed).
    pub max_error_ratio: f64,
    /// The tolerance of the worst trial: `IDENTITY_TOL_EPS · eps64 · Σ_p |q_p||k_p|`.
    pub tolerance: f64,
    /// Positions (i, j) of the worst trial.
    pub worst_positions: (u64, u64),
    /// Whether every trial stayed within its tolerance.
    pub holds: bool,
    /// The translation-invariance errors on a log grid of shifts.
    pub invariance: Vec<ShiftRow>,
    /// Base positions for the invariance test are drawn from 0..this.
    pub base_position_range: u64,
    /// Positions of the identity trials are drawn from 0..=this.
    pub max_shift: u64,
    /// Number of random cases of the invariance table (at most 20).
    pub invariance_cases: usize,
}

/// Shifts 1, 2, 3, 6, 10, 18, 32, 56, 100, … (4 per decade, rounded, deduplicated) up to and
/// including `max_shift`.
pub fn shift_grid(max_shift: u64) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    let mut e = 0;
    loop {
        let t = 10f64.powf(e as f64 / 4.0).round() as u64;
        if t > max_shift {
            break;
        }
        if out.last() != Some(&t) {
            out.push(t);
        }
        e += 1;
    }
    if out.last() != Some(&max_shift) && max_shift > 0 {
        out.push(max_shift);
    }
    out
}

/// Translation-invariance errors: for each shift t of `shifts` and each pipeline of
/// [`Pipeline::ALL`], the largest |S(i+t, j+t) − S(i, j)| over `qk` (pairs of vectors with base
/// positions).
pub fn invariance_rows(
    freqs: &RotaryFrequencies,
    cases: &[(Vec<f64>, Vec<f64>, u64, u64)],
    shifts: &[u64],
) -> Vec<ShiftRow> {
    invariance_rows_for(freqs, cases, shifts, &Pipeline::ALL)
}

/// [`invariance_rows`] for a chosen list of pipelines (the audit adds [`Pipeline::BUGGY`]). A
/// NaN score (f16 positions overflowing) is an infinite error.
pub fn invariance_rows_for(
    freqs: &RotaryFrequencies,
    cases: &[(Vec<f64>, Vec<f64>, u64, u64)],
    shifts: &[u64],
    pipelines: &[Pipeline],
) -> Vec<ShiftRow> {
    let omegas = &freqs.inv_freq;
    shifts
        .iter()
        .map(|&t| {
            let mut errors = BTreeMap::new();
            for &pipeline in pipelines {
                let mut worst = 0.0f64;
                for (q, k, i, j) in cases {
                    let e = match pipeline {
                        Pipeline::F64Exact => {
                            let a = score_absolute(omegas, q, k, (i + t) as f64, (j + t) as f64);
                            let b = score_absolute(omegas, q, k, *i as f64, *j as f64);
                            (a - b).abs()
                        }
                        Pipeline::F64 | Pipeline::F32 | Pipeline::Bf16 | Pipeline::F16 => {
                            let d = match pipeline {
                                Pipeline::F32 => Dtype::F32,
                                Pipeline::Bf16 => Dtype::Bf16,
                                Pipeline::F16 => Dtype::F16,
                                Pipeline::F64
                                | Pipeline::F64Exact
                                | Pipeline::Bf16InvFreq
                                | Pipeline::Bf16Angles
                                | Pipeline::F16Positions => Dtype::F64,
                            };
                            let a = pipeline_score(freqs, q, k, i + t, j + t, d);
                            let b = pipeline_score(freqs, q, k, *i, *j, d);
                            (a - b).abs()
                        }
                        Pipeline::Bf16InvFreq | Pipeline::Bf16Angles | Pipeline::F16Positions => {
                            let a = pipeline_score_as(freqs, q, k, i + t, j + t, pipeline);
                            let b = pipeline_score_as(freqs, q, k, *i, *j, pipeline);
                            (a - b).abs()
                        }
                    };
                    let e = if e.is_nan() { f64::INFINITY } else { e };
                    worst = worst.max(e);
                }
                errors.insert(pipeline, worst);
            }
            ShiftRow { shift: t, errors }
        })
        .collect()
}

/// Seeded random cases for the invariance test: `n` pairs of standard-normal q, k of dimension
/// 2·planes and base positions i, j uniform in `0..range`.
pub fn random_cases(
    planes: usize,
    n: usize,
    seed: u64,
    range: u64,
) -> Vec<(Vec<f64>, Vec<f64>, u64, u64)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let q = normal_vec(&mut rng, 2 * planes);
            let k = normal_vec(&mut rng, 2 * planes);
            (q, k, rng.random_range(0..range), rng.random_range(0..range))
        })
        .collect()
}

/// Largest number of random trials of [`identity_check`] (10⁶: ~1 s per 64 planes in release).
pub const MAX_TRIALS: usize = 1_000_000;

/// Checks the relative-position identity on `trials` seeded random cases and measures
/// translation invariance on the shift grid up to `max_shift`.
///
/// Random data: `ChaCha8Rng::seed_from_u64(seed)`; q, k ~ N(0, 1) per coordinate
/// (`rand_distr::StandardNormal`), positions i, j uniform in 0..=max_shift for the identity and
/// in 0..1024 for the invariance test (20 cases at most, drawn from seed + 1).
///
/// ```
/// use attnlab_core::position::frequencies::RotaryFrequencies;
/// use attnlab_core::spectrum::identity::identity_check;
/// let f = RotaryFrequencies::from_base(10000.0, 16).unwrap();
/// let r = identity_check(&f, 7, 50, 1_000_000_000).unwrap();
/// assert!(r.holds && r.max_abs_error < 1e-12);
/// ```
///
/// # Errors
/// `trials` not in 1..=[`MAX_TRIALS`]; `max_shift` not in 1..=2⁴⁰
/// ([`crate::position::frequencies::MAX_POSITION`]: with |ω| ≤ 10⁴ the reference phases
/// |m·ω/2π| then stay below 2⁵¹, where the double-double reduction is accurate).
pub fn identity_check(
    freqs: &RotaryFrequencies,
    seed: u64,
    trials: usize,
    max_shift: u64,
) -> Result<IdentityReport> {
    check_options(trials, max_shift)?;
    let omegas = &freqs.inv_freq;
    let p = omegas.len();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut max_err, mut max_ratio, mut tol_worst, mut worst) = (0.0f64, 0.0f64, 0.0f64, (0, 0));
    for _ in 0..trials {
        let q = normal_vec(&mut rng, 2 * p);
        let k = normal_vec(&mut rng, 2 * p);
        let i = rng.random_range(0..=max_shift);
        let j = rng.random_range(0..=max_shift);
        let a = score_absolute(omegas, &q, &k, i as f64, j as f64);
        let b = score_relative(omegas, &q, &k, j as f64 - i as f64);
        let scale: f64 = (0..p)
            .map(|n| q[n].hypot(q[n + p]) * k[n].hypot(k[n + p]))
            .sum();
        let tol = IDENTITY_TOL_EPS * f64::EPSILON * scale;
        let err = (a - b).abs();
        let ratio = err / tol;
        if ratio >= max_ratio {
            (max_ratio, tol_worst, worst) = (ratio, tol, (i, j));
        }
        max_err = max_err.max(err);
    }
    let range = 1024;
    let n_cases = trials.min(20);
    let cases = random_cases(p, n_cases, seed.wrapping_add(1), range);
    let invariance = invariance_rows(freqs, &cases, &shift_grid(max_shift));
    Ok(IdentityReport {
        inv_freq: omegas.clone(),
        seed,
        trials,
        max_abs_error: max_err,
        max_error_ratio: max_ratio,
        tolerance: tol_worst,
        worst_positions: worst,
        holds: max_ratio <= 1.0,
        invariance,
        base_position_range: range,
        max_shift,
        invariance_cases: n_cases,
    })
}

/// The range checks of [`identity_check`]'s options, without running it (so a request's work
/// budget is checked after them, and their messages name the option).
///
/// # Errors
/// `trials` not in 1..=[`MAX_TRIALS`]; `max_shift` not in 1..=2⁴⁰.
pub fn check_options(trials: usize, max_shift: u64) -> Result<()> {
    if trials == 0 {
        return Err(Error::invalid(
            "trials",
            0,
            "a positive number of random trials",
        ));
    }
    if trials > MAX_TRIALS {
        return Err(Error::invalid(
            "trials",
            trials,
            format!("at most {MAX_TRIALS} random trials (the worst case settles long before)"),
        ));
    }
    if max_shift == 0 || max_shift > MAX_POSITION {
        return Err(Error::invalid(
            "max shift",
            max_shift,
            "an integer in 1..=2^40 (|m·ω/2π| must stay far below 2^52 for an accurate reference phase)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn base_set() -> RotaryFrequencies {
        RotaryFrequencies::from_base(10000.0, 64).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// The identity at round-off: any ω in [1e-6, 10], any q, k in [-3, 3]^4, any i, j up to
        /// 2^40, within the documented 64·eps64·Σ|q_p||k_p|.
        #[test]
        fn identity_holds_at_round_off(
            w0 in 1e-6f64..10.0, w1 in 1e-6f64..10.0,
            v in proptest::collection::vec(-3.0f64..3.0, 8),
            i in 0u64..(1u64 << 40), j in 0u64..(1u64 << 40),
        ) {
            let om = [w0, w1];
            let (q, k) = (&v[..4], &v[4..]);
            let a = score_absolute(&om, q, k, i as f64, j as f64);
            let b = score_relative(&om, q, k, j as f64 - i as f64);
            let scale: f64 = (0..2).map(|n| q[n].hypot(q[n + 2]) * k[n].hypot(k[n + 2])).sum();
            prop_assert!((a - b).abs() <= IDENTITY_TOL_EPS * f64::EPSILON * scale.max(1e-300) + 1e-300,
                "{} vs {} (scale {})", a, b, scale);
        }
    }

    #[test]
    fn broken_identity_is_detected() {
        // Control: a relative score at the wrong separation must differ by far more than the tolerance.
        let f = base_set();
        let cases = random_cases(32, 1, 3, 1000);
        let (q, k, i, j) = &cases[0];
        let a = score_absolute(&f.inv_freq, q, k, *i as f64, *j as f64);
        let b = score_relative(&f.inv_freq, q, k, *j as f64 - *i as f64 + 1.0);
        assert!((a - b).abs() > 1e-3);
    }

    #[test]
    fn f64_exact_invariance_is_round_off_even_at_1e9() {
        let f = base_set();
        let cases = random_cases(32, 10, 11, 1024);
        let rows = invariance_rows(&f, &cases, &[1_000_000_000]);
        // Σ|q_p||k_p| ≈ 32·2 = 64 for standard normals; 64 eps per unit ⇒ ~1e-12.
        assert!(
            rows[0].errors[&Pipeline::F64Exact] < 1e-11,
            "{:?}",
            rows[0].errors
        );
    }

    #[test]
    fn low_precision_error_grows_with_the_shift() {
        // At t = 10 the f32 angle m·ω (m < 1100, ω ≤ 1) has an absolute error ≤ 1100·2^-24 ≈ 7e-5 rad;
        // at t = 10^6 it is ≤ 10^6·2^-24 ≈ 0.06 rad: ~1000× larger (we require ≥ 100×).
        // f16 keeps 11 bits of cos/sin (error ~5e-4 per term): the 0.06 rad angle error at 10^6
        // dominates it (we require ≥ 3×). bf16 keeps only 8 bits (error ~4e-3 per term, ~0.1 on
        // a 64-dim score at any shift), so its growth shows later: at t = 10^8 > 2^24 the f32
        // position itself is rounded to a multiple of 8 and phases are off by radians (≥ 10×).
        let f = base_set();
        let cases = random_cases(32, 20, 5, 1024);
        let rows = invariance_rows(&f, &cases, &[10, 1_000_000, 100_000_000]);
        let (small, mid, big) = (&rows[0].errors, &rows[1].errors, &rows[2].errors);
        assert!(
            mid[&Pipeline::F32] > 100.0 * small[&Pipeline::F32],
            "f32 {small:?} {mid:?}"
        );
        assert!(
            mid[&Pipeline::F16] > 3.0 * small[&Pipeline::F16],
            "f16 {small:?} {mid:?}"
        );
        assert!(
            big[&Pipeline::Bf16] > 10.0 * small[&Pipeline::Bf16],
            "bf16 {small:?} {big:?}"
        );
    }

    #[test]
    fn shift_grid_is_log_spaced_and_ends_at_max() {
        let g = shift_grid(1000);
        assert_eq!(&g[..6], &[1, 2, 3, 6, 10, 18]);
        assert_eq!(*g.last().unwrap(), 1000);
        assert_eq!(shift_grid(1_000_000_000).len(), 37);
    }
}
