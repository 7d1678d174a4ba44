//! Two rotations compared: the relative difference of each plane's frequency, and the first
//! position at which the rotations differ by more than bf16 resolution.
//!
//! Plane k of a rotation with cos/sin factor a and frequency ω maps a unit pair at position m to
//! a·e^{imω}. Two rotations (a_e, ω_e) and (a_r, ω_r) differ at m by
//!
//! `|a_e·e^{imω_e} − a_r·e^{imω_r}|² = (a_e − a_r)² + 4·a_e·a_r·sin²(m·Δω/2)`, Δω = ω_e − ω_r,
//!
//! which grows with m until m·|Δω|/2 = π/2. The rotations are *the same within bf16* at m while
//! this stays ≤ t = [`BF16_RESOLUTION`]·a_r: a cos/sin value of size a_r stored in bf16 (8
//! significant bits) is only known to about 2⁻⁸ of its size, so a smaller difference can vanish
//! in the rounding every engine applies when it serves bf16. The first differing position is the
//! least integer m with sin²(m·|Δω|/2) > s² = (t² − (a_e − a_r)²)/(4·a_e·a_r), i.e.
//! `m = ⌊2·asin(s)/|Δω|⌋ + 1` (0 when the factors alone differ by more than t; never when
//! s ≥ 1 or Δω = 0). A softmax-scale multiplier that differs by more than 2⁻⁸ relative changes
//! every score, so it differs from position 0.

use serde::Serialize;

use super::EngineRope;

/// bf16 resolution relative to a value's size: 2⁻⁸, the spacing of bf16 numbers in [0.5, 1)
/// (half bf16's machine epsilon 2⁻⁷).
pub const BF16_RESOLUTION: f64 = 1.0 / 256.0;

/// Where two rotations first differ beyond bf16 resolution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Difference {
    /// The first position m (0-based) at which they differ.
    pub position: u64,
    /// The plane that differs first (`None`: every plane at once, through the cos/sin factor or
    /// the softmax scale).
    pub plane: Option<usize>,
}

/// `|ω_e − ω_r| / ω_r` per plane (0 where both are 0; ∞ where only the reference is 0).
pub fn rel_diff(engine: &[f64], reference: &[f64]) -> Vec<f64> {
    engine
        .iter()
        .zip(reference)
        .map(|(&e, &r)| {
            if e == r {
                0.0
            } else if r == 0.0 {
                f64::INFINITY
            } else {
                ((e - r) / r).abs()
            }
        })
        .collect()
}

/// The first position in `0..seq_len` at which plane k of the two rotations differs by more
/// than bf16 resolution (see the module doc), if any.
pub fn plane_first_difference(a_e: f64, w_e: f64, a_r: f64, w_r: f64, seq_len: u64) -> Option<u64> {
    let t = BF16_RESOLUTION * a_r.abs();
    let da = a_e - a_r;
    if da * da > t * t {
        return (seq_len > 0).then_some(0);
    }
    let dw = (w_e - w_r).abs();
    if dw == 0.0 || a_e * a_r <= 0.0 {
        return None;
    }
    let s2 = (t * t - da * da) / (4.0 * a_e * a_r);
    if s2 >= 1.0 {
        return None;
    }
    let x = 2.0 * s2.sqrt().asin() / dw;
    if x.is_nan() || x >= seq_len as f64 {
        return None;
    }
    let m = x.floor() as u64 + 1;
    (m < seq_len).then_some(m)
}

/// The first position at which `engine` and `reference` differ beyond bf16 resolution in a
/// sequence of `seq_len` tokens, with the plane that differs first.
pub fn first_difference(
    engine: &EngineRope,
    reference: &EngineRope,
    seq_len: u64,
) -> Option<Difference> {
    let sm = (engine.softmax_scale_multiplier - reference.softmax_scale_multiplier).abs();
    if sm > BF16_RESOLUTION * reference.softmax_scale_multiplier.abs() && seq_len > 0 {
        return Some(Difference {
            position: 0,
            plane: None,
        });
    }
    let da = (engine.cos_sin_factor - reference.cos_sin_factor).abs();
    if da > BF16_RESOLUTION * reference.cos_sin_factor.abs() && seq_len > 0 {
        return Some(Difference {
            position: 0,
            plane: None,
        });
    }
    engine
        .inv_freq
        .iter()
        .zip(&reference.inv_freq)
        .enumerate()
        .filter_map(|(k, (&we, &wr))| {
            plane_first_difference(
                engine.cos_sin_factor,
                we,
                reference.cos_sin_factor,
                wr,
                seq_len,
            )
            .map(|m| (m, k))
        })
        .min()
        .map(|(m, k)| Difference {
            position: m,
            plane: Some(k),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_difference_is_where_the_phase_gap_reaches_bf16_resolution() {
        // Equal factors 1: the gap is 2|sin(mΔω/2)| > 2⁻⁸ first at m > 2·asin(2⁻⁹)/Δω.
        let dw = 1e-6;
        let x = 2.0 * (BF16_RESOLUTION / 2.0).asin() / dw; // ≈ 3906.25
        let m = plane_first_difference(1.0, 0.5 + dw, 1.0, 0.5, 1 << 20).unwrap();
        assert_eq!(m, x.floor() as u64 + 1);
        // The gap at m exceeds the resolution and at m − 1 does not (checked directly).
        let gap = |m: f64| (2.0 * (m * dw / 2.0).sin()).abs();
        assert!(gap(m as f64) > BF16_RESOLUTION && gap(m as f64 - 1.0) <= BF16_RESOLUTION);
        // Not within a shorter sequence.
        assert_eq!(plane_first_difference(1.0, 0.5 + dw, 1.0, 0.5, m), None);
        // Factors 1.1 vs 1.0 differ by more than 2⁻⁸ at once; equal frequencies never differ.
        assert_eq!(plane_first_difference(1.1, 0.5, 1.0, 0.5, 10), Some(0));
        assert_eq!(plane_first_difference(1.0, 0.5, 1.0, 0.5, 10), None);
    }
}
