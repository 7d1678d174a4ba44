//! Rotary position embeddings (RoPE, Su et al. 2021): each token's query and key are rotated by
//! angles proportional to its position, so that the score `(R(iω)q)ᵀ(R(jω)k) = qᵀR((j−i)ω)k`
//! depends on the positions only through the separation `j − i`.
//!
//! A head of dimension `d` is split into planes (pairs of coordinates); plane `k` is rotated by
//! the angle `m·ω_k` at position `m`, with `ω_k = inv_freq[k]`. Which coordinates form a plane is
//! a *convention* ([`Layout`]); the two conventions in use are the same rotation up to a fixed
//! permutation of the coordinates ([`layout_permutation`]), but mixing them between queries and
//! keys (or between weights and runtime) silently changes every score.
//!
//! Only queries and keys are rotated, never values.

use ndarray::{Array2, ArrayView2};
use serde::Serialize;

use crate::phase::{exact_phase_distance, phase_distance, reduce_angle};
use crate::position::frequencies::{Omega, RotaryFrequencies};
use crate::{Error, Real, Result};

/// Which coordinates of a head are paired into one rotation plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// Adjacent pairs `(2k, 2k+1)`, k < r/2 (r = rotary dimension). Used by the RoFormer paper,
    /// Meta's Llama reference code (complex view of adjacent pairs), GPT-J (`rotate_every_two`),
    /// candle's `rope_i`, burn's `RotaryEncoding` and llama.cpp's `LLAMA_ROPE_TYPE_NORM`.
    Interleaved,
    /// Split halves `(k, k + r/2)`, k < r/2 (r = rotary dimension). Used by GPT-NeoX and
    /// Hugging Face Llama (`rotate_half`) and almost every Hugging Face decoder (Mistral, Qwen2,
    /// Gemma, Phi-3, gpt-oss), candle's `rope` and llama.cpp's `LLAMA_ROPE_TYPE_NEOX`.
    HalfSplit,
}

impl Layout {
    /// The planes as coordinate pairs `(a, b)`, plane `k` first; `rotary_dim` must be even.
    ///
    /// ```
    /// use attnlab_core::position::rotary::Layout;
    /// assert_eq!(Layout::Interleaved.pairs(4), vec![(0, 1), (2, 3)]);
    /// assert_eq!(Layout::HalfSplit.pairs(4), vec![(0, 2), (1, 3)]);
    /// ```
    pub fn pairs(self, rotary_dim: usize) -> Vec<(usize, usize)> {
        let h = rotary_dim / 2;
        (0..h)
            .map(|k| match self {
                Layout::Interleaved => (2 * k, 2 * k + 1),
                Layout::HalfSplit => (k, k + h),
            })
            .collect()
    }

    /// Parses `interleaved` (also `gptj`, `adjacent`) or `half-split` (also `half_split`,
    /// `neox`, `rotate-half`).
    ///
    /// # Errors
    /// Any other name.
    pub fn parse(text: &str) -> Result<Layout> {
        match text.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "interleaved" | "gptj" | "gpt-j" | "adjacent" => Ok(Layout::Interleaved),
            "half-split" | "halfsplit" | "neox" | "gpt-neox" | "rotate-half" => {
                Ok(Layout::HalfSplit)
            }
            _ => Err(Error::invalid(
                "rotary layout",
                text,
                "interleaved (GPT-J, Meta Llama) or half-split (GPT-NeoX, HF Llama)",
            )),
        }
    }

    /// The name as the CLI spells it (`interleaved`, `half-split`).
    pub fn name(self) -> &'static str {
        match self {
            Layout::Interleaved => "interleaved",
            Layout::HalfSplit => "half-split",
        }
    }
}

/// The column permutation `P` linking the layouts for a fully rotated head of dimension `d`:
/// `P = [0, d/2, 1, d/2+1, …, d/2−1, d−1]`, i.e. `P[2k] = k`, `P[2k+1] = k + d/2`.
///
/// The identity it satisfies, with numpy gather semantics (`x[:, P]` is the matrix whose column
/// `i` is column `P[i]` of `x`):
///
/// ```text
/// interleaved(x[:, P]) == half_split(x)[:, P]        (bit for bit)
/// ```
///
/// because after the gather, adjacent columns `(2k, 2k+1)` hold the original columns
/// `(k, k+d/2)` — exactly the half-split plane `k` — and both sides apply the same 2×2 rotation
/// with the same rounded cos/sin to the same numbers. This is why Hugging Face's Llama
/// conversion permutes the rows of Meta's `wq`/`wk`: scores are unchanged when both q and k are
/// permuted, and only then.
///
/// ```
/// use attnlab_core::position::rotary::layout_permutation;
/// assert_eq!(layout_permutation(8).unwrap(), vec![0, 4, 1, 5, 2, 6, 3, 7]);
/// ```
///
/// # Errors
/// `d` odd or zero.
pub fn layout_permutation(d: usize) -> Result<Vec<usize>> {
    check_even("rotary dimension", d)?;
    let h = d / 2;
    Ok((0..d)
        .map(|i| if i % 2 == 0 { i / 2 } else { i / 2 + h })
        .collect())
}

fn check_even(what: &str, d: usize) -> Result<()> {
    if d == 0 || !d.is_multiple_of(2) {
        return Err(Error::invalid(
            what,
            d,
            "an even number ≥ 2 (each plane rotates a pair of coordinates)",
        ));
    }
    Ok(())
}

/// A rotary embedding: per-plane frequencies, a pairing convention, how many leading columns
/// rotate, and the factor multiplying cos and sin.
///
/// At position `m`, plane `k` = coordinates `(a, b)` (see [`Layout::pairs`]) becomes
///
/// ```text
/// y_a = f·(x_a·cos(m·ω_k) − x_b·sin(m·ω_k))
/// y_b = f·(x_a·sin(m·ω_k) + x_b·cos(m·ω_k))
/// ```
///
/// with `ω_k = inv_freq[k]` and `f = attention_factor` (YaRN / LongRoPE scale cos and sin, as
/// Hugging Face does). Columns `rotary_dim..` pass through unchanged (partial rotary:
/// GPT-NeoX, Phi, GPT-J).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rotary {
    /// Angle per position of each plane (radians); `rotary_dim / 2` entries.
    pub inv_freq: Vec<f64>,
    /// Which coordinates are paired.
    pub layout: Layout,
    /// Number of leading columns that rotate (even, `2 × inv_freq.len()`, ≤ the head dimension).
    pub rotary_dim: usize,
    /// Factor multiplying cos and sin (1 for plain RoPE).
    pub attention_factor: f64,
}

impl Rotary {
    /// Plain RoPE over `2 × inv_freq.len()` columns, attention factor 1.
    pub fn new(inv_freq: Vec<f64>, layout: Layout) -> Self {
        Rotary {
            rotary_dim: 2 * inv_freq.len(),
            inv_freq,
            layout,
            attention_factor: 1.0,
        }
    }

    /// The rotary embedding a frequency set describes (its f64 `inv_freq`, rotary dimension and
    /// attention factor) with the given pairing.
    ///
    /// ```
    /// use attnlab_core::position::frequencies::RotaryFrequencies;
    /// use attnlab_core::position::rotary::{Layout, Rotary};
    /// let r = Rotary::from_frequencies(&RotaryFrequencies::from_base(10000.0, 8).unwrap(), Layout::HalfSplit);
    /// assert_eq!((r.rotary_dim, r.inv_freq.len()), (8, 4));
    /// ```
    pub fn from_frequencies(freqs: &RotaryFrequencies, layout: Layout) -> Self {
        Rotary {
            inv_freq: freqs.inv_freq.clone(),
            layout,
            rotary_dim: freqs.rotary_dim,
            attention_factor: freqs.attention_factor,
        }
    }

    /// Checks the fields against a head of `head_dim` columns.
    ///
    /// # Errors
    /// Odd or zero `rotary_dim`, `rotary_dim ≠ 2·inv_freq.len()`, `rotary_dim > head_dim`, a
    /// non-finite frequency or attention factor.
    pub fn validate(&self, head_dim: usize) -> Result<()> {
        check_even("rotary dimension", self.rotary_dim)?;
        if self.rotary_dim != 2 * self.inv_freq.len() {
            return Err(Error::invalid(
                "rotary dimension",
                self.rotary_dim,
                format!(
                    "twice the number of frequencies ({} frequencies → {})",
                    self.inv_freq.len(),
                    2 * self.inv_freq.len()
                ),
            ));
        }
        if self.rotary_dim > head_dim {
            return Err(Error::invalid(
                "rotary dimension",
                self.rotary_dim,
                format!("at most the head dimension {head_dim}"),
            ));
        }
        if let Some(w) = self.inv_freq.iter().find(|w| !w.is_finite()) {
            return Err(Error::invalid(
                "rotary frequency",
                w,
                "a finite angle per position",
            ));
        }
        if !self.attention_factor.is_finite() {
            return Err(Error::invalid(
                "attention factor",
                self.attention_factor,
                "a finite number",
            ));
        }
        Ok(())
    }

    fn check_input<T: Real>(&self, x: &ArrayView2<T>, positions: &[i64]) -> Result<()> {
        if x.nrows() != positions.len() {
            return Err(Error::shape(
                "rotary apply",
                format!("one position per row ({} rows)", x.nrows()),
                format!("{} positions", positions.len()),
            ));
        }
        self.validate(x.ncols())
    }

    /// cos and sin of plane `k` at position `m`, times the attention factor, rounded to `T`. The
    /// angle `m·ω_k` is reduced mod 2π in f64 with [`reduce_angle`] (accurate for huge `m`), cos and
    /// sin are evaluated in f64, and only the results are rounded to `T`.
    fn cos_sin<T: Real>(&self, m: i64, k: usize) -> (T, T) {
        let theta = reduce_angle(m as f64, self.inv_freq[k]);
        let f = self.attention_factor;
        (T::from_f64(f * theta.cos()), T::from_f64(f * theta.sin()))
    }

    /// Rotates each row of `x` (row `r` = the token at `positions[r]`): plane `k` by the angle
    /// `positions[r]·inv_freq[k]`, see [`Rotary`]. Arithmetic on `x` is in `T`: one product per
    /// term and one sum, with cos/sin computed in f64 and rounded to `T` once.
    ///
    /// ```
    /// use attnlab_core::position::rotary::{Layout, Rotary};
    /// use ndarray::array;
    /// let r = Rotary::new(vec![std::f64::consts::FRAC_PI_2], Layout::Interleaved);
    /// let y = r.apply(array![[1.0f64, 0.0]].view(), &[1]).unwrap();
    /// assert!(y[[0, 0]].abs() < 1e-16 && (y[[0, 1]] - 1.0).abs() < 1e-16); // (1,0) turned by 90°
    /// ```
    ///
    /// # Errors
    /// `positions.len() ≠ rows`, or an invalid configuration (see [`Rotary::validate`]).
    pub fn apply<T: Real>(&self, x: ArrayView2<T>, positions: &[i64]) -> Result<Array2<T>> {
        self.check_input(&x, positions)?;
        let mut y = x.to_owned();
        let half = self.rotary_dim / 2;
        let (stride_a, off_b) = match self.layout {
            Layout::Interleaved => (2, 1),
            Layout::HalfSplit => (1, half),
        };
        for (mut row, &m) in y.rows_mut().into_iter().zip(positions) {
            for k in 0..half {
                let (c, s) = self.cos_sin::<T>(m, k);
                let a = stride_a * k;
                let b = a + off_b;
                let (xa, xb) = (row[a], row[b]);
                row[a] = xa * c - xb * s;
                row[b] = xa * s + xb * c;
            }
        }
        Ok(y)
    }

    /// The same rotation written as textbook linear algebra: for every row and plane, build the
    /// 2×2 matrix `f·[[cos θ, −sin θ], [sin θ, cos θ]]` and multiply it with the pair vector
    /// `(x_a, x_b)` taken from [`Layout::pairs`]. Slow and plain; [`Rotary::apply`] is tested
    /// against it.
    ///
    /// # Errors
    /// As [`Rotary::apply`].
    pub fn apply_reference<T: Real>(
        &self,
        x: ArrayView2<T>,
        positions: &[i64],
    ) -> Result<Array2<T>> {
        self.check_input(&x, positions)?;
        let mut y = x.to_owned();
        for (r, &m) in positions.iter().enumerate() {
            for (k, (a, b)) in self.layout.pairs(self.rotary_dim).into_iter().enumerate() {
                let (c, s) = self.cos_sin::<T>(m, k);
                let rot = [[c, -s], [s, c]];
                let v = [x[[r, a]], x[[r, b]]];
                let out: Vec<T> = rot
                    .iter()
                    .map(|row| row[0] * v[0] + row[1] * v[1])
                    .collect();
                y[[r, a]] = out[0];
                y[[r, b]] = out[1];
            }
        }
        Ok(y)
    }
}

/// The positional part of a rotary score at one separation (see [`aligned_scores`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeparationScore {
    /// s = j − i.
    pub separation: u64,
    /// cos(s·ω_k) for each frequency, in the order given.
    pub scores: Vec<f64>,
    /// The mean of `scores`.
    pub mean: f64,
}

/// Largest `max_sep` [`aligned_scores`] accepts (the result has one row per separation).
pub const MAX_SEPARATIONS: u64 = 1_000_000;

/// Largest table [`aligned_scores`] builds: (max_sep + 1) × frequencies ≤ 2²⁴ scores (128 MB).
pub const MAX_SCORE_CELLS: u64 = 1 << 24;

/// The positional contribution to a rotary score for aligned unit vectors, per separation
/// `s = 0..=max_sep`.
///
/// With q = k = u a unit vector lying in plane k, `(R(iω)u)ᵀ(R(jω)u) = uᵀR((j−i)ω)u = cos(s·ω_k)`.
/// With u spread evenly over P planes (weight 1/√P in the first coordinate of each), the score is
/// the mean of the cosines, `(1/P)·Σ_k cos(s·ω_k)`. Cosines come from [`Omega::cos_at`]: exact
/// phase reduction for rational multiples of π (so ω = π/2 gives exactly 1, 0, −1, 0, 1).
///
/// ```
/// use attnlab_core::position::{frequencies::Omega, rotary::aligned_scores};
/// let rows = aligned_scores(&[Omega::parse("pi/2").unwrap()], 4).unwrap();
/// let means: Vec<f64> = rows.iter().map(|r| r.mean).collect();
/// assert_eq!(means, vec![1.0, 0.0, -1.0, 0.0, 1.0]);
/// ```
///
/// # Errors
/// No frequencies; `max_sep` of 0 (nothing beyond the trivial s = 0) or above [`MAX_SEPARATIONS`];
/// more than [`MAX_SCORE_CELLS`] scores.
pub fn aligned_scores(omegas: &[Omega], max_sep: u64) -> Result<Vec<SeparationScore>> {
    check_separation_args(omegas, max_sep)?;
    let cells = (max_sep + 1).saturating_mul(omegas.len() as u64);
    if cells > MAX_SCORE_CELLS {
        return Err(Error::invalid(
            "max separation",
            max_sep,
            format!(
                "at most {} for {} frequencies (rows × frequencies ≤ 2^24 scores)",
                MAX_SCORE_CELLS / omegas.len() as u64 - 1,
                omegas.len()
            ),
        ));
    }
    Ok((0..=max_sep)
        .map(|s| {
            let scores: Vec<f64> = omegas.iter().map(|w| w.cos_at(s as i64)).collect();
            let mean = scores.iter().sum::<f64>() / scores.len() as f64;
            SeparationScore {
                separation: s,
                scores,
                mean,
            }
        })
        .collect())
}

/// The arguments [`aligned_scores`] and [`separations_like_zero`] share: at least one frequency
/// and `max_sep` in 1..=[`MAX_SEPARATIONS`].
fn check_separation_args(omegas: &[Omega], max_sep: u64) -> Result<()> {
    if omegas.is_empty() {
        return Err(Error::invalid(
            "frequency list",
            "(empty)",
            "one or more frequencies",
        ));
    }
    if max_sep == 0 || max_sep > MAX_SEPARATIONS {
        return Err(Error::invalid(
            "max separation",
            max_sep,
            format!("an integer in 1..={MAX_SEPARATIONS}"),
        ));
    }
    Ok(())
}

/// The separations s in 1..=`max_sep` that score like separation 0 in the phase sense of
/// `rope resolve`: every plane's phase s·ω_k is within `tol` radians of 0 mod 2π,
/// `max_k dist(s·ω_k, 2πℤ) ≤ tol`. Exact frequencies ([`Omega::PiRational`]) use integer
/// arithmetic (`s·a mod b`), float ones the double-double reduction of [`crate::phase`]. With
/// `tol` = 1e-9 (the default alias tolerance of `rope resolve`) this is exactly the alias
/// criterion `rope resolve` uses, so the two commands agree.
///
/// ```
/// use attnlab_core::position::frequencies::parse_omega_list;
/// use attnlab_core::position::rotary::separations_like_zero;
/// let set = parse_omega_list("pi/2,pi/3").unwrap();
/// assert_eq!(separations_like_zero(&set, 30, 1e-9).unwrap(), vec![12, 24]);
/// ```
///
/// # Errors
/// As [`aligned_scores`] (the same bounds on `max_sep`), and `tol` not in (0, π].
pub fn separations_like_zero(omegas: &[Omega], max_sep: u64, tol: f64) -> Result<Vec<u64>> {
    check_separation_args(omegas, max_sep)?;
    if !(tol > 0.0 && tol <= std::f64::consts::PI) {
        return Err(Error::invalid(
            "tol",
            tol,
            "a phase tolerance in (0, π] radians",
        ));
    }
    Ok((1..=max_sep)
        .filter(|&s| {
            omegas.iter().all(|o| {
                let d = match o.turns_fraction() {
                    Some((a, b)) => exact_phase_distance(s, a, b),
                    None => phase_distance(s as f64, o.value()),
                };
                d <= tol
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, Axis};
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        Array2::from_shape_fn((rows, cols), |_| rng.random_range(-1.0..1.0))
    }

    fn base_freqs(d: usize) -> Vec<f64> {
        RotaryFrequencies::from_base(10000.0, d).unwrap().inv_freq
    }

    const POSITIONS: [i64; 6] = [0, 1, 7, -3, 4096, 1_000_000_007];

    #[test]
    fn fast_matches_the_2x2_reference() {
        // The reference computes c·xa + (−s)·xb where the fast path computes c·xa − s·xb: the
        // same two roundings on the same rounded operands, so the results are bit-identical.
        let x = random(POSITIONS.len(), 10, 1);
        for layout in [Layout::Interleaved, Layout::HalfSplit] {
            let mut r = Rotary::new(base_freqs(8), layout);
            r.attention_factor = 1.25;
            assert_eq!(
                r.apply(x.view(), &POSITIONS).unwrap(),
                r.apply_reference(x.view(), &POSITIONS).unwrap()
            );
            let x32 = x.mapv(|v| v as f32);
            assert_eq!(
                r.apply(x32.view(), &POSITIONS).unwrap(),
                r.apply_reference(x32.view(), &POSITIONS).unwrap()
            );
        }
    }

    #[test]
    fn rotation_preserves_row_norms() {
        // |y|² = (c² + s²)|x|² with c, s the rounded cos/sin: c² + s² = 1 within ~2 eps, and each
        // output is two products and a sum (3 roundings). Tolerance: 8 eps relative on the norm.
        let x = random(POSITIONS.len(), 12, 2);
        for layout in [Layout::Interleaved, Layout::HalfSplit] {
            let r = Rotary::new(base_freqs(12), layout);
            let y = r.apply(x.view(), &POSITIONS).unwrap();
            for (a, b) in x.rows().into_iter().zip(y.rows()) {
                let (na, nb) = (a.dot(&a).sqrt(), b.dot(&b).sqrt());
                assert!((na - nb).abs() <= 8.0 * f64::EPSILON * na, "{na} vs {nb}");
            }
            let x32 = x.mapv(|v| v as f32);
            let y32 = r.apply(x32.view(), &POSITIONS).unwrap();
            for (a, b) in x32.rows().into_iter().zip(y32.rows()) {
                let (na, nb) = (a.dot(&a).sqrt(), b.dot(&b).sqrt());
                assert!((na - nb).abs() <= 8.0 * f32::EPSILON * na, "{na} vs {nb}");
            }
        }
    }

    #[test]
    fn position_zero_is_the_identity_exactly() {
        // cos 0 = 1 and sin 0 = 0 exactly, so x·1 − y·0 = x with no rounding at all.
        let x = random(3, 8, 3);
        for layout in [Layout::Interleaved, Layout::HalfSplit] {
            let r = Rotary::new(base_freqs(8), layout);
            assert_eq!(r.apply(x.view(), &[0, 0, 0]).unwrap(), x);
        }
    }

    #[test]
    fn composition_adds_angles() {
        // R(a)R(b)x vs R(a+b)x: each application costs ≤ ~3 eps per coordinate (|x| ≤ 1), and the
        // f64 angles are reduced accurately, so 1e-14 absolute covers the two-step path.
        let x = random(1, 8, 4);
        for layout in [Layout::Interleaved, Layout::HalfSplit] {
            let r = Rotary::new(base_freqs(8), layout);
            for (a, b) in [(3i64, 5i64), (-7, 100), (123_456, 789)] {
                let two = r
                    .apply(r.apply(x.view(), &[b]).unwrap().view(), &[a])
                    .unwrap();
                let one = r.apply(x.view(), &[a + b]).unwrap();
                let err = (&two - &one).mapv(f64::abs).fold(0.0f64, |m, &v| m.max(v));
                assert!(err < 1e-14, "{layout:?} {a}+{b}: {err}");
            }
        }
    }

    #[test]
    fn partial_rotary_leaves_the_tail_bit_identical() {
        let x = random(POSITIONS.len(), 16, 5);
        for layout in [Layout::Interleaved, Layout::HalfSplit] {
            let r = Rotary::new(base_freqs(4), layout); // rotates columns 0..4 of 16
            let y = r.apply(x.view(), &POSITIONS).unwrap();
            for (a, b) in x
                .slice(ndarray::s![.., 4..])
                .iter()
                .zip(y.slice(ndarray::s![.., 4..]))
            {
                assert_eq!(a.to_bits(), b.to_bits());
            }
            // ...and the head does move (a rotary that did nothing would pass the line above).
            assert_ne!(
                x.slice(ndarray::s![1.., ..4]),
                y.slice(ndarray::s![1.., ..4])
            );
        }
    }

    #[test]
    fn layouts_are_linked_by_the_permutation_exactly() {
        let d = 8;
        let p = layout_permutation(d).unwrap();
        assert_eq!(p, vec![0, 4, 1, 5, 2, 6, 3, 7]);
        let x = random(POSITIONS.len(), d, 6);
        let inter = Rotary::new(base_freqs(d), Layout::Interleaved);
        let half = Rotary::new(base_freqs(d), Layout::HalfSplit);
        // interleaved(x[:, P]) == half_split(x)[:, P], bit for bit.
        let lhs = inter
            .apply(x.select(Axis(1), &p).view(), &POSITIONS)
            .unwrap();
        let rhs = half
            .apply(x.view(), &POSITIONS)
            .unwrap()
            .select(Axis(1), &p);
        assert_eq!(lhs, rhs);
        // The other direction is not the identity (a check that cannot fail would be useless).
        let wrong = half
            .apply(x.select(Axis(1), &p).view(), &POSITIONS)
            .unwrap();
        assert_ne!(
            wrong,
            inter
                .apply(x.view(), &POSITIONS)
                .unwrap()
                .select(Axis(1), &p)
        );
        assert!(layout_permutation(7).is_err());
    }

    #[test]
    fn mixing_layouts_changes_scores() {
        // Same layout for q and k: scores depend only on j − i (relative identity). q rotated
        // interleaved and k half-split: they do not, and differ from the consistent ones.
        let d = 8;
        let q = random(1, d, 7);
        let k = random(1, d, 8);
        let inter = Rotary::new(base_freqs(d), Layout::Interleaved);
        let half = Rotary::new(base_freqs(d), Layout::HalfSplit);
        let score = |rq: &Rotary, rk: &Rotary, i: i64, j: i64| {
            let a = rq.apply(q.view(), &[i]).unwrap();
            let b = rk.apply(k.view(), &[j]).unwrap();
            a.row(0).dot(&b.row(0))
        };
        for r in [&inter, &half] {
            // Translation by 100: round-off only (a few eps of |q||k| ≤ 8).
            assert!((score(r, r, 3, 5) - score(r, r, 103, 105)).abs() < 1e-13);
        }
        let mixed = (score(&inter, &half, 3, 5), score(&inter, &half, 103, 105));
        assert!(
            (mixed.0 - mixed.1).abs() > 1e-3,
            "mixed layouts should not be translation invariant: {mixed:?}"
        );
        assert!((mixed.0 - score(&inter, &inter, 3, 5)).abs() > 1e-3);
    }

    #[test]
    fn aligned_scores_match_the_seed_and_the_rotation() {
        let w = Omega::parse("pi/2").unwrap();
        let rows = aligned_scores(&[w], 8).unwrap();
        assert_eq!(
            rows.iter().map(|r| r.mean).collect::<Vec<_>>(),
            vec![1.0, 0.0, -1.0, 0.0, 1.0, 0.0, -1.0, 0.0, 1.0]
        );
        assert_eq!(separations_like_zero(&[w], 8, 1e-9).unwrap(), vec![4, 8]);
        // Several frequencies: the mean; {π/2, π/3} first returns to 1 at lcm(4, 6) = 12.
        let two = [w, Omega::parse("pi/3").unwrap()];
        let rows = aligned_scores(&two, 12).unwrap();
        assert_eq!(separations_like_zero(&two, 12, 1e-9).unwrap(), vec![12]);
        assert!((rows[1].mean - 0.25).abs() < 1e-15, "(0 + 1/2)/2");
        // The same numbers from actually rotating aligned unit vectors (4 dims, both planes):
        // u = (1, 0, 1, 0)/√2 interleaved; score (R(iω)u)·(R(jω)u) with j − i = s.
        let r = Rotary::new(two.iter().map(|o| o.value()).collect(), Layout::Interleaved);
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let u = ndarray::array![[h, 0.0, h, 0.0]];
        for row in &rows {
            let a = r.apply(u.view(), &[3]).unwrap();
            let b = r.apply(u.view(), &[3 + row.separation as i64]).unwrap();
            let dot = a.row(0).dot(&b.row(0));
            assert!(
                (dot - row.mean).abs() < 1e-14,
                "s={}: {dot} vs {}",
                row.separation,
                row.mean
            );
        }
        assert!(aligned_scores(&[w], 0).is_err());
        assert!(aligned_scores(&[], 3).is_err());
    }

    #[test]
    fn layout_names_round_trip() {
        for l in [Layout::Interleaved, Layout::HalfSplit] {
            assert_eq!(Layout::parse(l.name()).unwrap(), l);
        }
        assert_eq!(Layout::parse("NeoX").unwrap(), Layout::HalfSplit);
        assert!(Layout::parse("diagonal")
            .unwrap_err()
            .to_string()
            .contains("diagonal"));
    }

    #[test]
    fn invalid_configurations_are_rejected() {
        let x = random(2, 6, 9);
        let mut r = Rotary::new(base_freqs(8), Layout::HalfSplit);
        assert!(r.apply(x.view(), &[0, 1]).is_err(), "rotary_dim 8 > head 6");
        r = Rotary::new(base_freqs(4), Layout::HalfSplit);
        assert!(
            r.apply(x.view(), &[0]).is_err(),
            "one position for two rows"
        );
        r.rotary_dim = 3;
        let e = r.apply(x.view(), &[0, 1]).unwrap_err().to_string();
        assert!(e.contains("rotary dimension") && e.contains('3'), "{e}");
        r.rotary_dim = 6;
        assert!(r.apply(x.view(), &[0, 1]).is_err(), "6 ≠ 2 × 2 frequencies");
    }
}
