//! Quantities of extrapolation the audit reports beside its own: Liu et al. 2023's critical
//! dimension, and the position-dependent query scalings some models apply on top of RoPE.

use serde::Serialize;

/// Liu et al. 2023 ("Scaling Laws of RoPE-based Extrapolation", arXiv 2310.05209): the
/// critical dimension `d_extra = 2·⌈(d/2)·log_base(T_train/2π)⌉`, the number of leading
/// dimensions whose planes complete a full turn (wavelength 2π·base^(2k/d) ≤ T_train) within the
/// training context; the planes beyond never saw a full period, so their angles past T_train are
/// out of distribution. Llama-2 (d = 128, base 10⁴, T_train = 4096): 92 of 128.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriticalDimension {
    /// d_extra (clamped to [0, d]).
    pub d_extra: usize,
    /// The rotary dimension d.
    pub rotary_dim: usize,
    /// T_train, the context the frequencies were trained at (the original context of a scaled
    /// type, else max_position_embeddings).
    pub trained_context: u64,
    /// Planes that complete a full turn within T_train (d_extra / 2).
    pub periodic_planes: usize,
    /// Liu et al.'s extrapolation bound 2π·base^(d_extra/d): the period of the critical
    /// dimension, beyond which its angles were never seen.
    pub extrapolation_bound: f64,
}

/// The critical dimension of default frequencies `base^(−2k/d)` trained at `t_train` positions.
///
/// ```
/// let c = attnlab_core::spectrum::extrapolation::critical_dimension(10000.0, 128, 4096);
/// assert_eq!((c.d_extra, c.periodic_planes), (92, 46));
/// ```
pub fn critical_dimension(base: f64, dim: usize, t_train: u64) -> CriticalDimension {
    let x = (dim as f64 / 2.0) * ((t_train as f64) / (2.0 * std::f64::consts::PI)).ln() / base.ln();
    let half = if x.is_finite() {
        x.ceil().clamp(0.0, (dim / 2) as f64)
    } else {
        0.0
    } as usize;
    let d_extra = 2 * half;
    CriticalDimension {
        d_extra,
        rotary_dim: dim,
        trained_context: t_train,
        periodic_planes: half,
        extrapolation_bound: 2.0 * std::f64::consts::PI * base.powf(d_extra as f64 / dim as f64),
    }
}

crate::choice! {
    /// A position-dependent scaling of the queries on top of the rotation.
    pub enum QueryScalingKind("query scaling") {
        /// Ministral-3 / Mistral-4: `q ·= 1 + β·ln(1 + ⌊p/original⌋)` (`llama_4_scaling_beta`).
        Llama4ScalingBeta = "llama_4_scaling_beta",
        /// Llama-4's NoPE layers: `q ·= 1 + attn_scale·ln(1 + ⌊(p + 1)/floor_scale⌋)`
        /// (`attn_temperature_tuning`).
        Llama4AttnTemperature = "llama4_attn_temperature",
    }
}

/// The query factor at one position.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PositionFactor {
    /// The position p.
    pub position: u64,
    /// The factor multiplying q there.
    pub factor: f64,
}

/// A query scaling against position.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryScaling {
    /// Which one.
    pub kind: QueryScalingKind,
    /// β (`llama_4_scaling_beta`) or `attn_scale`.
    pub scale: f64,
    /// The step length (`original_max_position_embeddings` or `floor_scale`).
    pub step: u64,
    /// The factor at the first position of each step 1, 2, 4, … up to the audited length,
    /// and at its last position.
    pub factors: Vec<PositionFactor>,
}

/// The factor of `kind` at position `p`.
pub fn query_factor(kind: QueryScalingKind, scale: f64, step: u64, p: u64) -> f64 {
    let n = match kind {
        QueryScalingKind::Llama4ScalingBeta => p / step,
        QueryScalingKind::Llama4AttnTemperature => (p + 1) / step,
    };
    1.0 + scale * (n as f64).ln_1p()
}

/// The scaling over positions 0..l: the factor where each step 1, 2, 4, … begins, and at l − 1.
pub fn query_scaling(kind: QueryScalingKind, scale: f64, step: u64, l: u64) -> QueryScaling {
    let step = step.max(1);
    let first = |n: u64| match kind {
        QueryScalingKind::Llama4ScalingBeta => n * step,
        QueryScalingKind::Llama4AttnTemperature => (n * step).saturating_sub(1),
    };
    let mut positions = vec![0];
    let mut n = 1u64;
    while first(n) < l {
        positions.push(first(n));
        n = n.saturating_mul(2);
    }
    positions.push(l.saturating_sub(1));
    positions.dedup();
    QueryScaling {
        kind,
        scale,
        step,
        factors: positions
            .into_iter()
            .map(|p| PositionFactor {
                position: p,
                factor: query_factor(kind, scale, step, p),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn critical_dimensions_of_the_reference_notes() {
        // Liu et al.'s Llama-2 figure and the reference notes' computed values.
        for (base, d, t, want) in [
            (10000.0, 128, 4096, 92),
            (500000.0, 128, 8192, 70),
            (1e6, 128, 32768, 80),
            (10000.0, 96, 4096, 68),
            (150000.0, 64, 4096, 36),
        ] {
            assert_eq!(
                critical_dimension(base, d, t).d_extra,
                want,
                "{base} {d} {t}"
            );
        }
    }

    #[test]
    fn query_factors_of_the_reference_notes() {
        // Ministral-3 β = 0.1, original 16384: 1 + 0.1·ln 2 = 1.0693 at 16384, 1 + 0.1·ln 9 at 131072.
        let b = QueryScalingKind::Llama4ScalingBeta;
        assert_eq!(query_factor(b, 0.1, 16384, 16383), 1.0);
        assert!((query_factor(b, 0.1, 16384, 16384) - 1.0693147180559945).abs() < 1e-15);
        assert!((query_factor(b, 0.1, 16384, 131072) - 1.2197224577336219).abs() < 1e-15);
        // Llama-4 NoPE temperature at 131072 (floor_scale 8192): 1 + 0.1·ln(1 + 16) = 1.2833.
        let t = QueryScalingKind::Llama4AttnTemperature;
        assert!((query_factor(t, 0.1, 8192, 131071) - (1.0 + 0.1 * 17f64.ln())).abs() < 1e-15);
        let s = query_scaling(b, 0.1, 16384, 65536);
        let pos: Vec<u64> = s.factors.iter().map(|f| f.position).collect();
        assert_eq!(pos, [0, 16384, 32768, 65535]);
    }
}
