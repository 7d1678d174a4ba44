//! Phases and angle reduction: accurate `m·ω / 2π` for integer positions `m` and binary64
//! frequencies `ω`, shared by [`crate::position`] (rotations, exact cosines) and
//! [`crate::spectrum`] (periods, resolution, decay). A leaf module: it imports nothing of the
//! crate, so both may use it without depending on each other.
//!
//! Reducing modulo the binary64 number `TAU` = 6.283185307179586 would be wrong by 2.45e-16 per
//! turn (2.4e-7 rad at 10⁹ turns); periods and near-repeats need the phase error of `q·ω` against
//! the true 2π at q up to 10¹², so this module multiplies by 1/(2π) held as a double-double.

/// 1/(2π) = `INV_TAU_HI + INV_TAU_LO` to about 2⁻¹⁰⁷ relative.
const INV_TAU_HI: f64 = 0.159_154_943_091_895_35;
const INV_TAU_LO: f64 = -9.839_338_337_591_243e-18;

/// `m·ω/2π − n` with n the nearest integer, in [−½, ½] turns, for an integer-valued `m`.
///
/// The product `m·ω = p + e` is split exactly with a fused multiply-add, multiplied by the
/// double-double 1/(2π), and the integer part removed before the small terms are added. The
/// result is renormalised as r − round(r), so it is always in [−½, ½].
///
/// Accuracy: while |m·ω/2π| < 2⁵² the high part t_hi has ulp ≤ ½, so t_hi − round(t_hi) is
/// exact and the low terms (each |·| ≲ ulp(t_hi)) carry the rest; the absolute error is then
/// at most one ulp of the result plus the double-double's share, 2⁻⁵²·|result| +
/// |m·ω/2π|·2⁻¹⁰⁴ — verified against exact rational arithmetic for m ≤ 2⁴⁰, |ω| ≤ 10⁴
/// (`tests/angle_exact.rs`, figures in `docs/NUMERICS.md`). Beyond 2⁵²
/// turns the fractional part is no longer representable in the high part and the result, though
/// still in [−½, ½], is meaningless: callers bound the inputs (|ω| ≤
/// [`crate::position::frequencies::MAX_OMEGA`] = 10⁴ and positions ≤
/// [`crate::position::frequencies::MAX_POSITION`] = 2⁴⁰ give |m·ω/2π| < 1.75·10¹⁵ < 2⁵¹).
///
/// ```
/// use attnlab_core::phase::turns_nearest;
/// // 4 · (π/2) is exactly one turn up to the rounding of π/2 itself (~1e-17 turns).
/// assert!(turns_nearest(4.0, std::f64::consts::FRAC_PI_2).abs() < 1e-16);
/// assert!((turns_nearest(1.0, std::f64::consts::FRAC_PI_2) - 0.25).abs() < 1e-16);
/// ```
pub fn turns_nearest(m: f64, omega: f64) -> f64 {
    let p = m * omega;
    let e = m.mul_add(omega, -p); // exact: m·ω = p + e
    let t_hi = p * INV_TAU_HI;
    let t_err = p.mul_add(INV_TAU_HI, -t_hi); // exact remainder of p·INV_TAU_HI
    let t_lo = t_err + p * INV_TAU_LO + e * INV_TAU_HI;
    let n = t_hi.round();
    let head = t_hi - n; // exact (Sterbenz, or n = 0)
                         // The low terms can push the sum past ±½ (by up to ulp(t_hi), i.e. several turns once
                         // |t_hi| ≥ 2⁵²): reduce the sum itself. Both roundings below are exact (|r| < 2⁵²).
    let r = head + t_lo;
    r - r.round()
}

/// `m·ω/2π` modulo 1 as a 64-bit fixed-point fraction of a turn (2⁶⁴ = one turn; wrapping
/// addition is addition of phases). Accurate to about 2 units of 2⁻⁶⁴ turns: the double-double
/// parts of [`turns_nearest`] are scaled and rounded separately before they are added.
pub fn turns_fixed(m: f64, omega: f64) -> u64 {
    let p = m * omega;
    let e = m.mul_add(omega, -p);
    let t_hi = p * INV_TAU_HI;
    let t_err = p.mul_add(INV_TAU_HI, -t_hi);
    let t_lo = t_err + p * INV_TAU_LO + e * INV_TAU_HI;
    let head = t_hi - t_hi.round();
    // Whole turns in the low part vanish modulo one turn; drop them before scaling so the
    // product stays far inside i128 (same accuracy bound as `turns_nearest`).
    let t_lo = t_lo - t_lo.round();
    const TWO64: f64 = 18_446_744_073_709_551_616.0;
    let h = (head * TWO64).round() as i128;
    let l = (t_lo * TWO64).round() as i128;
    (h + l) as u64
}

/// The phase `m·ω` reduced to (−π, π] with [`turns_nearest`] (angle = 2π · turns).
pub fn phase(m: f64, omega: f64) -> f64 {
    std::f64::consts::TAU * turns_nearest(m, omega)
}

/// The distance of the phase `m·ω` from 0 mod 2π, in [0, π] radians.
pub fn phase_distance(m: f64, omega: f64) -> f64 {
    phase(m, omega).abs()
}

/// `(a, b)`-exact version: the distance of `s·(2π·a/b)` from 0 mod 2π, with integer arithmetic
/// before the single final rounding.
pub fn exact_phase_distance(s: u64, a: i64, b: i64) -> f64 {
    let b = b as i128;
    let r = (s as i128 * a as i128).rem_euclid(b);
    let r = r.min(b - r);
    std::f64::consts::TAU * (r as f64 / b as f64)
}

/// `m·ω mod 2π` in [0, 2π) for a (possibly huge) integer position `m` (|m| < 2⁵³).
///
/// Reduces against the true 2π, not the binary64 number `TAU` (which is 2.45e-16 short, an
/// error that would grow by that much per turn — 2.4e-7 rad after 10⁹ turns): the exact product
/// `m·ω` is multiplied by 1/(2π) held as a double-double ([`turns_nearest`]), so the phase is
/// accurate to about 2⁻⁵³ relative plus 10⁻¹⁹ turns at 10¹² turns. This is what lets
/// translation-invariance tests at t = 10⁹ measure the layer's arithmetic, not the test's.
///
/// ```
/// use attnlab_core::phase::reduce_angle;
/// assert!((reduce_angle(5.0, 0.3) - 1.5).abs() < 1e-15);
/// assert!((0.0..std::f64::consts::TAU).contains(&reduce_angle(-3.0, 1.0)));
/// ```
pub fn reduce_angle(m: f64, omega: f64) -> f64 {
    let t = turns_nearest(m, omega);
    let t = if t < 0.0 { t + 1.0 } else { t };
    // t + 1 can round to exactly 1 for t ≈ −2⁻⁵⁴; keep the result inside [0, 2π).
    if t >= 1.0 {
        0.0
    } else {
        std::f64::consts::TAU * t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::{PI, TAU};

    #[test]
    fn turns_nearest_stays_in_half_turn_range_beyond_2_pow_52_turns() {
        // ω = 1e20 at m = 1..10: m·ω/2π ≥ 1.6e19 turns, far beyond 2⁵² — the result is not
        // accurate there (inputs are bounded upstream) but must still be a reduced phase.
        for m in 1..=10 {
            let t = turns_nearest(m as f64, 1e20);
            assert!((-0.5..=0.5).contains(&t), "m={m}: {t}");
        }
        // At the documented bound (ω = 1e4, m = 2⁴⁰) the reduction still matches an
        // independent evaluation: m·ω/2π with ω = 1e4 = 2⁴·625 exact, m = 2⁴⁰, so
        // m·ω = 2⁴⁴·625 exactly and t = 2⁴⁴·625·(1/2π); the 2⁻¹⁰⁴-relative double-double gives
        // ~1e-16 turns, so 1e-12 turns is a loose, failing-if-wrong bound against the
        // integer-part-free product computed from the two halves of 1/2π separately.
        let m = (1u64 << 40) as f64;
        let t = turns_nearest(m, 1e4);
        let big = m * 1e4; // exact
        let hi = big * INV_TAU_HI;
        let r = (hi - hi.round()) + big.mul_add(INV_TAU_HI, -hi) + big * INV_TAU_LO;
        let want = r - r.round();
        assert!((t - want).abs() < 1e-12, "{t} vs {want}");
    }

    #[test]
    fn turns_fixed_agrees_with_turns_nearest_at_the_bound() {
        for &(m, w) in &[((1u64 << 40) as f64, 1e4), (1e12, 0.9), (3.0, -2.0)] {
            let f = turns_fixed(m, w) as i64 as f64 / 18_446_744_073_709_551_616.0;
            let n = turns_nearest(m, w);
            let d = (f - n) - (f - n).round();
            assert!(d.abs() < 1e-15, "m={m} w={w}: {f} vs {n}");
        }
    }

    #[test]
    fn agrees_with_reduce_angle_for_few_turns() {
        // With fewer than ~100 turns the TAU-vs-2π offset is < 100·2.45e-16; both reductions
        // are then accurate to a few ulp of 2π (≈ 4e-15).
        for &(m, w) in &[(5.0, 0.3), (17.0, 1.0), (3.0, 2.5), (100.0, 0.01)] {
            let a = phase(m, w).rem_euclid(TAU);
            let b = reduce_angle(m, w);
            let d = (a - b).abs().min(TAU - (a - b).abs());
            assert!(d < 3e-14, "m={m} w={w}: {a} vs {b}");
        }
    }

    #[test]
    fn exact_multiples_of_pi_are_accurate_at_huge_m() {
        // ω = fl(π/2) = π/2 + δ with |δ| ≤ ulp(π/2)/2 ≈ 1.1e-16; at m = 4·10¹¹ the true phase
        // error is m·δ (m·δ/2π turns). We compare against that value computed from δ, which
        // the double-double π gives: δ = fl(π/2) − π/2.
        let w = PI / 2.0;
        let delta = -(2.449_293_598_294_706_4e-16 / 4.0); // fl(π/2) − π/2 = −(2π−TAU_f64)/4
        for &m in &[4.0, 4.0e6, 4.0e11] {
            let expect = m * delta / TAU;
            let got = turns_nearest(m, w);
            assert!(
                (got - expect).abs() < 1e-21 + expect.abs() * 1e-9,
                "m={m}: {got} vs {expect}"
            );
        }
    }
}
