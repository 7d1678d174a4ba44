//! A vectorised `exp` for the softmax, with a portable definition it is bit-identical to.
//!
//! The max-subtracted softmax only ever exponentiates `x ≤ 0` (scores minus their row maximum,
//! and the online rescaling factor `exp(m_old − m_new)`), down to where `exp` underflows, plus
//! `−∞` for masked scores. [`exp_f32`] / [`exp_f64`] compute, for such `x`:
//!
//! 1. `n = round_ties_even(x·log₂e)` and the reduced argument `r = x − n·ln2` (Cody–Waite: `ln2`
//!    split as `hi + lo` with `hi` short enough that `n·hi` is exact, both steps fused
//!    multiply-adds), so `|r| ≤ ln2/2 (+ rounding)`;
//! 2. `p(r) = Σ_{k≤N} r^k/k!` (Taylor, Horner with fused multiply-adds; N = 7 for `f32`,
//!    N = 13 for `f64`, truncation error `|r|^(N+1)/(N+1)! < 2^−28` resp. `< 2^−57`);
//! 3. `exp(x) = p(r)·2^n`, applied as two exact power-of-two factors `2^⌊n/2⌋·2^(n−⌊n/2⌋)` so
//!    that results in the subnormal range are rounded once (gradual underflow like `f32::exp`).
//!
//! Arguments are clamped to `[−104, 89]` (`f32`) / `[−746, 710]` (`f64`) first, a clamp that
//! keeps NaN: below the lower end `exp` rounds to `+0`, above the upper end to `+∞`, so
//! `exp(−∞) = 0` exactly and `exp(0) = 1` exactly.
//!
//! **Error bound** (the tests in this file, against `f64::exp` rounded to `f32` over every 61st
//! `f32` in [−104, 0] — 18.4 M arguments — and against a double-double evaluation at 2.01 M
//! points of [−746, 0] for `f64`): measured at most **1 ulp** for both types for results in the
//! normal range (the tests assert ≤ 2), and at most one unit of the smallest subnormal below it
//! (measured 0.80 for `f32`, 1.0 for `f64`).
//! The AVX2/FMA versions execute the same operations in the same order on each lane, so they
//! return the same bits as the scalar definitions (tested).

/// `log₂ e`, `ln 2 = LN2_HI + LN2_LO` for `f32` (Cephes' split: `LN2_HI` has 9 significant bits).
const LOG2E_F32: f32 = std::f32::consts::LOG2_E;
const LN2_HI_F32: f32 = 0.693_359_4;
const LN2_LO_F32: f32 = -2.121_944_4e-4;
/// The fdlibm split of `ln 2` for `f64` (`LN2_HI` has 32 significant bits).
const LOG2E_F64: f64 = std::f64::consts::LOG2_E;
const LN2_HI_F64: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000); // 6.93147180369123816490e-01
const LN2_LO_F64: f64 = f64::from_bits(0x3dea_39ef_3579_3c76); // 1.90821492927058770002e-10

/// `1/k!` for k = 7 down to 2 (`f32` Horner order).
const P_F32: [f32; 6] = [
    1.0 / 5040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    0.5,
];
/// `1/k!` for k = 13 down to 2 (`f64` Horner order).
const P_F64: [f64; 12] = [
    1.0 / 6_227_020_800.0,
    1.0 / 479_001_600.0,
    1.0 / 39_916_800.0,
    1.0 / 3_628_800.0,
    1.0 / 362_880.0,
    1.0 / 40_320.0,
    1.0 / 5040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    0.5,
];

const LO_F32: f32 = -104.0;
const HI_F32: f32 = 89.0;
const LO_F64: f64 = -746.0;
const HI_F64: f64 = 710.0;

/// `e^x` for `f32` by the algorithm in the module docs (≤ 1 ulp measured; exact at 0 and −∞).
#[inline]
pub fn exp_f32(x: f32) -> f32 {
    let x = x.clamp(LO_F32, HI_F32); // NaN stays NaN
    let n = (x * LOG2E_F32).round_ties_even();
    let r = (-n).mul_add(LN2_HI_F32, x);
    let r = (-n).mul_add(LN2_LO_F32, r);
    let mut p = P_F32[0];
    for &c in &P_F32[1..] {
        p = p.mul_add(r, c);
    }
    let p = p.mul_add(r, 1.0);
    let p = p.mul_add(r, 1.0);
    let n1 = (n * 0.5).floor();
    let n2 = n - n1;
    p * pow2_f32(n1) * pow2_f32(n2)
}

/// `e^x` for `f64` by the algorithm in the module docs (≤ 1 ulp measured; exact at 0 and −∞).
#[inline]
pub fn exp_f64(x: f64) -> f64 {
    let x = x.clamp(LO_F64, HI_F64); // NaN stays NaN
    let n = (x * LOG2E_F64).round_ties_even();
    let r = (-n).mul_add(LN2_HI_F64, x);
    let r = (-n).mul_add(LN2_LO_F64, r);
    let mut p = P_F64[0];
    for &c in &P_F64[1..] {
        p = p.mul_add(r, c);
    }
    let p = p.mul_add(r, 1.0);
    let p = p.mul_add(r, 1.0);
    let n1 = (n * 0.5).floor();
    let n2 = n - n1;
    p * pow2_f64(n1) * pow2_f64(n2)
}

/// `2^k` for an integer-valued `k` in [−126, 127] (NaN gives a finite garbage power, which the
/// NaN polynomial value absorbs).
#[inline]
fn pow2_f32(k: f32) -> f32 {
    f32::from_bits(((k as i32 + 127) as u32) << 23)
}

/// `2^k` for an integer-valued `k` in [−1022, 1023].
#[inline]
fn pow2_f64(k: f64) -> f64 {
    f64::from_bits(((k as i64 + 1023) as u64) << 52)
}

/// AVX2 + FMA lanes of [`exp_f32`] / [`exp_f64`], same operations in the same order.
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    use super::*;
    use std::arch::x86_64::*;

    /// Eight lanes of [`exp_f32`].
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn exp_ps(x: __m256) -> __m256 {
        // max(lo, x) returns x when x is NaN (the second operand wins), min likewise.
        let x = _mm256_max_ps(_mm256_set1_ps(LO_F32), x);
        let x = _mm256_min_ps(_mm256_set1_ps(HI_F32), x);
        let n = _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
            _mm256_mul_ps(x, _mm256_set1_ps(LOG2E_F32)),
        );
        let nn = _mm256_sub_ps(_mm256_setzero_ps(), n);
        let r = _mm256_fmadd_ps(nn, _mm256_set1_ps(LN2_HI_F32), x);
        let r = _mm256_fmadd_ps(nn, _mm256_set1_ps(LN2_LO_F32), r);
        let mut p = _mm256_set1_ps(P_F32[0]);
        for &c in &P_F32[1..] {
            p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c));
        }
        let one = _mm256_set1_ps(1.0);
        let p = _mm256_fmadd_ps(p, r, one);
        let p = _mm256_fmadd_ps(p, r, one);
        let n1 = _mm256_floor_ps(_mm256_mul_ps(n, _mm256_set1_ps(0.5)));
        let n2 = _mm256_sub_ps(n, n1);
        let pow2 = |k: __m256| {
            let i = _mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127));
            _mm256_castsi256_ps(_mm256_slli_epi32::<23>(i))
        };
        _mm256_mul_ps(_mm256_mul_ps(p, pow2(n1)), pow2(n2))
    }

    /// Four lanes of [`exp_f64`].
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn exp_pd(x: __m256d) -> __m256d {
        let x = _mm256_max_pd(_mm256_set1_pd(LO_F64), x);
        let x = _mm256_min_pd(_mm256_set1_pd(HI_F64), x);
        let n = _mm256_round_pd::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
            _mm256_mul_pd(x, _mm256_set1_pd(LOG2E_F64)),
        );
        let nn = _mm256_sub_pd(_mm256_setzero_pd(), n);
        let r = _mm256_fmadd_pd(nn, _mm256_set1_pd(LN2_HI_F64), x);
        let r = _mm256_fmadd_pd(nn, _mm256_set1_pd(LN2_LO_F64), r);
        let mut p = _mm256_set1_pd(P_F64[0]);
        for &c in &P_F64[1..] {
            p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(c));
        }
        let one = _mm256_set1_pd(1.0);
        let p = _mm256_fmadd_pd(p, r, one);
        let p = _mm256_fmadd_pd(p, r, one);
        let n1 = _mm256_floor_pd(_mm256_mul_pd(n, _mm256_set1_pd(0.5)));
        let n2 = _mm256_sub_pd(n, n1);
        // 2^k for integer-valued k without a double → int64 conversion (AVX-512DQ only): adding
        // 1.5·2^52 puts k in the low bits of the significand; add the bias, shift into the
        // exponent field (the magic number's own bits shift out).
        let pow2 = |k: __m256d| {
            let magic = _mm256_add_pd(k, _mm256_set1_pd(6_755_399_441_055_744.0));
            let i = _mm256_add_epi64(_mm256_castpd_si256(magic), _mm256_set1_epi64x(1023));
            _mm256_castsi256_pd(_mm256_slli_epi64::<52>(i))
        };
        _mm256_mul_pd(_mm256_mul_pd(p, pow2(n1)), pow2(n2))
    }
}

/// AVX-512F lanes of [`exp_f32`] / [`exp_f64`] (16 / 8 per register), the same operations in
/// the same order as [`avx2`] (and so the same bits as the scalar definitions; tested).
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512 {
    use super::*;
    use std::arch::x86_64::*;

    /// Sixteen lanes of [`exp_f32`].
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub unsafe fn exp_ps(x: __m512) -> __m512 {
        // As vmaxps/vminps on 256 bits: the second operand wins when one is NaN.
        let x = _mm512_max_ps(_mm512_set1_ps(LO_F32), x);
        let x = _mm512_min_ps(_mm512_set1_ps(HI_F32), x);
        let n = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
            _mm512_mul_ps(x, _mm512_set1_ps(LOG2E_F32)),
        );
        let nn = _mm512_sub_ps(_mm512_setzero_ps(), n);
        let r = _mm512_fmadd_ps(nn, _mm512_set1_ps(LN2_HI_F32), x);
        let r = _mm512_fmadd_ps(nn, _mm512_set1_ps(LN2_LO_F32), r);
        let mut p = _mm512_set1_ps(P_F32[0]);
        for &c in &P_F32[1..] {
            p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c));
        }
        let one = _mm512_set1_ps(1.0);
        let p = _mm512_fmadd_ps(p, r, one);
        let p = _mm512_fmadd_ps(p, r, one);
        let n1 = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(
            _mm512_mul_ps(n, _mm512_set1_ps(0.5)),
        );
        let n2 = _mm512_sub_ps(n, n1);
        let pow2 = |k: __m512| {
            let i = _mm512_add_epi32(_mm512_cvtps_epi32(k), _mm512_set1_epi32(127));
            _mm512_castsi512_ps(_mm512_slli_epi32::<23>(i))
        };
        _mm512_mul_ps(_mm512_mul_ps(p, pow2(n1)), pow2(n2))
    }

    /// Eight lanes of [`exp_f64`].
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub unsafe fn exp_pd(x: __m512d) -> __m512d {
        let x = _mm512_max_pd(_mm512_set1_pd(LO_F64), x);
        let x = _mm512_min_pd(_mm512_set1_pd(HI_F64), x);
        let n = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
            _mm512_mul_pd(x, _mm512_set1_pd(LOG2E_F64)),
        );
        let nn = _mm512_sub_pd(_mm512_setzero_pd(), n);
        let r = _mm512_fmadd_pd(nn, _mm512_set1_pd(LN2_HI_F64), x);
        let r = _mm512_fmadd_pd(nn, _mm512_set1_pd(LN2_LO_F64), r);
        let mut p = _mm512_set1_pd(P_F64[0]);
        for &c in &P_F64[1..] {
            p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(c));
        }
        let one = _mm512_set1_pd(1.0);
        let p = _mm512_fmadd_pd(p, r, one);
        let p = _mm512_fmadd_pd(p, r, one);
        let n1 = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(
            _mm512_mul_pd(n, _mm512_set1_pd(0.5)),
        );
        let n2 = _mm512_sub_pd(n, n1);
        // 2^k through the 1.5·2^52 magic number, as the AVX2 version.
        let pow2 = |k: __m512d| {
            let magic = _mm512_add_pd(k, _mm512_set1_pd(6_755_399_441_055_744.0));
            let i = _mm512_add_epi64(_mm512_castpd_si512(magic), _mm512_set1_epi64(1023));
            _mm512_castsi512_pd(_mm512_slli_epi64::<52>(i))
        };
        _mm512_mul_pd(_mm512_mul_pd(p, pow2(n1)), pow2(n2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Real;

    /// `exp(x)` to ~2⁻¹⁰⁰ relative for `x ≤ 0`, as a double-double `hi + lo`: `exp(x) = 2^k·e^t`
    /// with `t = x − k·ln2` computed in double-double and `e^t` summed as a Taylor series in
    /// double-double arithmetic. Used only as the `f64` reference.
    fn exp_dd(x: f64) -> (f64, f64) {
        // ln 2 as a double-double.
        const LN2: (f64, f64) = (std::f64::consts::LN_2, 2.319_046_813_846_299_6e-17);
        let two_sum = |a: f64, b: f64| {
            let s = a + b;
            let bb = s - a;
            (s, (a - (s - bb)) + (b - bb))
        };
        let dd_add = |a: (f64, f64), b: (f64, f64)| {
            let (s, e) = two_sum(a.0, b.0);
            let e = e + a.1 + b.1;
            two_sum(s, e)
        };
        let dd_mul = |a: (f64, f64), b: (f64, f64)| {
            let p = a.0 * b.0;
            let e = a.0.mul_add(b.0, -p) + a.0 * b.1 + a.1 * b.0;
            two_sum(p, e)
        };
        // A double-double divided by a small integer: quotient, exact remainder, correction.
        let dd_div = |a: (f64, f64), d: f64| {
            let q1 = a.0 / d;
            let r = (-q1).mul_add(d, a.0);
            two_sum(q1, (r + a.1) / d)
        };
        let k = (x / LN2.0).round();
        let t = dd_add((x, 0.0), dd_mul((-k, 0.0), LN2));
        let (mut sum, mut term) = ((1.0, 0.0), (1.0, 0.0));
        for i in 1..40 {
            term = dd_div(dd_mul(term, t), i as f64);
            sum = dd_add(sum, term);
        }
        let s = 2f64.powi(k as i32 / 2) * 2f64.powi(k as i32 - k as i32 / 2);
        (sum.0 * s, sum.1 * s)
    }

    /// ulps of `got` from the real number `hi + lo` at `got`'s magnitude (for normal results).
    fn ulps_f64(got: f64, (hi, lo): (f64, f64)) -> f64 {
        let ulp = f64::from_bits(got.abs().to_bits() + 1) - got.abs();
        ((got - hi) - lo).abs() / ulp
    }

    #[test]
    fn exp_f32_is_within_two_ulps_over_the_softmax_range() {
        // Every 61st f32 bit pattern in [-104, 0] (about 18 M values; -0.0 and -104 included) and
        // the special values, against f64::exp rounded to f32 (correctly rounded except in
        // astronomically rare double-rounding cases, which would show as 1 ulp).
        let mut worst = 0u64;
        let mut worst_sub = 0.0f64;
        let lo_bits = (-104.0f32).to_bits();
        let mut b = (-0.0f32).to_bits();
        let mut count = 0;
        while b <= lo_bits {
            let x = f32::from_bits(b);
            let got = exp_f32(x);
            let want = (x as f64).exp();
            if want >= f32::MIN_POSITIVE as f64 {
                worst = worst.max(f32::ulps_between(got, want as f32));
            } else {
                // Subnormal or zero results: absolute error in units of the smallest subnormal.
                let unit = f32::from_bits(1) as f64;
                worst_sub = worst_sub.max((got as f64 - want).abs() / unit);
            }
            count += 1;
            b += 61;
        }
        assert!(count > 10_000_000);
        eprintln!("f32 exp over {count} values: {worst} ulps, subnormal {worst_sub} units");
        assert!(worst <= 2, "f32 exp: {worst} ulps");
        assert!(worst_sub <= 1.0, "f32 exp subnormal: {worst_sub} units");
        assert_eq!(exp_f32(f32::NEG_INFINITY).to_bits(), 0.0f32.to_bits());
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(-0.0), 1.0);
        assert_eq!(exp_f32(-104.0), 0.0);
        assert!(exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
    }

    #[test]
    fn exp_f64_is_within_two_ulps_over_the_softmax_range() {
        // 2 M points spread over [-746, 0] (log-spaced near 0 so tiny |x| are covered, uniform
        // over the rest), against a double-double reference.
        let mut worst = 0.0f64;
        let mut worst_sub = 0.0f64;
        let mut rng = crate::rng::StdGaussian::new(5);
        let mut xs: Vec<f64> = Vec::new();
        for i in 0..1_000_000 {
            xs.push(-746.0 * (i as f64 + 0.5) / 1e6);
            xs.push(-(10f64).powf(-20.0 + 23.0 * (i as f64) / 1e6));
        }
        for _ in 0..10_000 {
            use crate::rng::Gaussian;
            xs.push(-rng.standard_normal().abs());
        }
        for &x in &xs {
            let got = exp_f64(x);
            let want = exp_dd(x);
            if want.0 >= f64::MIN_POSITIVE {
                worst = worst.max(ulps_f64(got, want));
            } else {
                let unit = f64::from_bits(1);
                worst_sub = worst_sub.max(((got - want.0) - want.1).abs() / unit);
            }
        }
        eprintln!(
            "f64 exp over {} values: {worst:.3} ulps, subnormal {worst_sub:.3} units",
            xs.len()
        );
        assert!(worst <= 2.0, "f64 exp: {worst} ulps");
        assert!(worst_sub <= 1.0, "f64 exp subnormal: {worst_sub} units");
        assert_eq!(exp_f64(f64::NEG_INFINITY).to_bits(), 0.0f64.to_bits());
        assert_eq!(exp_f64(0.0), 1.0);
        assert_eq!(exp_f64(-746.0), 0.0);
        assert!(exp_f64(f64::NAN).is_nan());
        assert_eq!(exp_f64(f64::INFINITY), f64::INFINITY);
    }

    /// Checks a vector exponential's lanes against the scalar one, bit for bit (NaN for NaN):
    /// `lanes` maps `W` arguments (f64, and the same rounded to f32) to both types' results.
    /// The arguments sweep [−750, 0] in 200 000 steps (every range: normal, subnormal, zero
    /// results) and add the special values and the overflow edge.
    #[cfg(target_arch = "x86_64")]
    fn assert_lanes_match_scalar<const W: usize>(
        lanes: impl Fn(&[f32; W], &[f64; W]) -> ([f32; W], [f64; W]),
    ) {
        let mut xs: Vec<f64> = (0..200_000)
            .map(|i| -750.0 * i as f64 / 200_000.0)
            .collect();
        xs.extend([
            f64::NEG_INFINITY,
            f64::NAN,
            0.0,
            -0.0,
            -87.33,
            -103.9,
            -708.4,
            -745.1,
            1.0,
            88.5,
            100.0,
            709.0,
            1000.0,
            f64::INFINITY,
        ]);
        while !xs.len().is_multiple_of(W) {
            xs.push(-1.0);
        }
        for c in xs.chunks_exact(W) {
            let x64: [f64; W] = c.try_into().expect("W arguments");
            let x32: [f32; W] = std::array::from_fn(|i| x64[i] as f32);
            let (o32, o64) = lanes(&x32, &x64);
            for i in 0..W {
                let (s32, s64) = (exp_f32(x32[i]), exp_f64(x64[i]));
                assert!(
                    o32[i].to_bits() == s32.to_bits() || (o32[i].is_nan() && s32.is_nan()),
                    "f32 x={}: {} vs {s32}",
                    x32[i],
                    o32[i]
                );
                assert!(
                    o64[i].to_bits() == s64.to_bits() || (o64[i].is_nan() && s64.is_nan()),
                    "f64 x={}: {} vs {s64}",
                    x64[i],
                    o64[i]
                );
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx512_lanes_return_the_scalar_bits() {
        if !is_x86_feature_detected!("avx512f") {
            eprintln!("skipped: no AVX-512F on this CPU");
            return;
        }
        use std::arch::x86_64::*;
        assert_lanes_match_scalar::<16>(|x32, x64| {
            let (mut o32, mut o64) = ([0f32; 16], [0f64; 16]);
            // SAFETY: AVX-512F was detected above; loads/stores are unaligned and in bounds.
            unsafe {
                _mm512_storeu_ps(
                    o32.as_mut_ptr(),
                    avx512::exp_ps(_mm512_loadu_ps(x32.as_ptr())),
                );
                for h in [0, 8] {
                    let v = avx512::exp_pd(_mm512_loadu_pd(x64.as_ptr().add(h)));
                    _mm512_storeu_pd(o64.as_mut_ptr().add(h), v);
                }
            }
            (o32, o64)
        });
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_lanes_return_the_scalar_bits() {
        if !(is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")) {
            eprintln!("skipped: no AVX2/FMA on this CPU");
            return;
        }
        use std::arch::x86_64::*;
        assert_lanes_match_scalar::<8>(|x32, x64| {
            let (mut o32, mut o64) = ([0f32; 8], [0f64; 8]);
            // SAFETY: AVX2 and FMA were detected above; loads/stores are unaligned and in bounds.
            unsafe {
                _mm256_storeu_ps(
                    o32.as_mut_ptr(),
                    avx2::exp_ps(_mm256_loadu_ps(x32.as_ptr())),
                );
                for h in [0, 4] {
                    let v = avx2::exp_pd(_mm256_loadu_pd(x64.as_ptr().add(h)));
                    _mm256_storeu_pd(o64.as_mut_ptr().add(h), v);
                }
            }
            (o32, o64)
        });
    }
}
