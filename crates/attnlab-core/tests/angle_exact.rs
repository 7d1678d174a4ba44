//! The angle reduction `phase::turns_nearest(m, ω) = m·ω/2π − round(m·ω/2π)` checked against
//! exact rational arithmetic for positions up to 2⁴⁰ (`MAX_POSITION`) and |ω| up to 10⁴
//! (`MAX_OMEGA`): the f64 ω is an exact dyadic rational M·2^E, the product m·ω is exact, and
//! π is taken to 100 decimal digits (relative error < 10⁻⁹⁹, far below anything measured), so
//! the reference fractional part is exact to ~2⁻³⁰⁰. `docs/NUMERICS.md` quotes what this test
//! prints (run with `--nocapture`).

use attnlab_core::phase::turns_nearest;
use num_bigint::{BigInt, Sign};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// π to 100 decimal digits, as an integer over 10¹⁰⁰.
const PI_DIGITS: &str = "31415926535897932384626433832795028841971693993751058209749445923078164062862089986280348253421170679";

/// (m·ω/2π − nearest integer) exactly, returned as f64 (rounded once).
fn exact_turns(m: u64, omega: f64) -> f64 {
    let bits = omega.to_bits();
    let sign = if bits >> 63 == 1 { -1 } else { 1 };
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (mant, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp - 1075)
    };
    // turns = m·mant·2^e / (2π) = m·mant·2^e·10^100 / (2·P)
    let p = BigInt::parse_bytes(PI_DIGITS.as_bytes(), 10).unwrap();
    let ten100 = BigInt::from(10u32).pow(100);
    let mut num = BigInt::from(m) * BigInt::from(mant) * ten100 * sign;
    let mut den = BigInt::from(2u32) * p;
    if e >= 0 {
        num <<= e as usize;
    } else {
        den <<= (-e) as usize;
    }
    // Nearest integer n = floor(num/den + 1/2); r = num/den − n in [−½, ½].
    let two_num_plus_den: BigInt = &num * 2 + &den;
    let n = floor_div(&two_num_plus_den, &(&den * 2));
    let rem = num - n * &den; // r·den
                              // r as f64: scale by 2^120, integer-divide, convert.
    let scaled: BigInt = (rem << 120usize) / &den;
    to_f64(&scaled) / 2f64.powi(120)
}

fn floor_div(a: &BigInt, b: &BigInt) -> BigInt {
    let q = a / b;
    if (a.sign() == Sign::Minus) != (b.sign() == Sign::Minus) && &q * b != *a {
        q - 1
    } else {
        q
    }
}

fn to_f64(x: &BigInt) -> f64 {
    x.to_string().parse().unwrap()
}

#[test]
fn angle_reduction_matches_exact_rational_arithmetic_up_to_2_pow_40() {
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let mut worst_abs = 0.0f64;
    let mut worst_bound_ratio = 0.0f64;
    let mut worst_case = (0u64, 0.0f64);
    let mut samples = 0;
    let mut omegas: Vec<f64> = (0..64)
        .map(|k| 10000f64.powf(-2.0 * k as f64 / 128.0))
        .collect();
    omegas.extend((0..400).map(|_| 10f64.powf(rng.random_range(-4.0..4.0))));
    omegas.extend([
        1e4,
        -1e4,
        std::f64::consts::FRAC_PI_2,
        std::f64::consts::PI,
        1.0,
    ]);
    for &w in &omegas {
        let mut ms: Vec<u64> = vec![1, 2, 3, (1 << 40) - 1, 1 << 40, 1 << 39];
        ms.extend((0..8).map(|_| rng.random_range(0..=(1u64 << 40))));
        ms.extend((1..=40).map(|k| (1u64 << k) - 1));
        for m in ms {
            let got = turns_nearest(m as f64, w);
            let want = exact_turns(m, w);
            let err = (got - want).abs();
            // The documented bound (`phase::turns_nearest`): one unit in the last place of the
            // result, 2⁻⁵²·|result| (this test found that half a unit, 2⁻⁵³, the bound first
            // documented, is exceeded: two roundings reach the result), plus
            // |m·ω/2π|·2⁻¹⁰⁴ from the double-double 1/2π, plus 2⁻⁶⁰ turns absolute for
            // results near 0.
            let t = (m as f64 * w / std::f64::consts::TAU).abs();
            let bound = 2f64.powi(-52) * want.abs() + t * 2f64.powi(-104) + 2f64.powi(-60);
            worst_bound_ratio = worst_bound_ratio.max(err / bound);
            if err > worst_abs {
                worst_abs = err;
                worst_case = (m, w);
            }
            samples += 1;
        }
    }
    eprintln!(
        "angle reduction: {samples} (m, ω) pairs, m ≤ 2^40, |ω| ≤ 1e4: max |error| = {worst_abs:e} turns ({:e} rad) at m = {}, ω = {:e}; max error / documented bound = {worst_bound_ratio:.3}",
        worst_abs * std::f64::consts::TAU,
        worst_case.0,
        worst_case.1
    );
    assert!(
        worst_bound_ratio <= 1.0,
        "error exceeds the documented bound"
    );
    assert!(worst_abs < 1e-15, "{worst_abs:e}");
}
