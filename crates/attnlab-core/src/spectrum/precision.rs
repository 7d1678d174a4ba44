//! What finite precision does to rotary position ids and cos/sin caches.
//!
//! * Position ids: a dtype with a p-bit significand represents every integer up to 2^p exactly
//!   (bf16 256, f16 2048, f32 16 777 216); beyond, ids are rounded to multiples of 2, 4, …, and
//!   f16 overflows to infinity from 65520 on (65504 is its largest finite value).
//! * cos/sin cache rows built as Hugging Face builds them (rope-formulas.md §3): positions and
//!   inv_freq in f32, angle = f32 product, cos/sin in f32 times the attention factor (f32), cast
//!   to the dtype. Two positions with identical rows are indistinguishable to the layer.

use rayon::prelude::*;
use serde::Serialize;

use crate::numeric::Dtype;
use crate::position::frequencies::RotaryFrequencies;

/// Significand bits (including the implicit bit) of a dtype.
fn significand_bits(d: Dtype) -> u32 {
    match d {
        Dtype::F64 => 53,
        Dtype::F32 => 24,
        Dtype::Bf16 => 8,
        Dtype::F16 => 11,
    }
}

/// Number of integers n in 0..=x (x an integer) with a representable value ≤ x that some
/// integer rounds to: every integer up to 2^p, then every representable value (all integers,
/// spaced 2^(e−p+1) in the binade [2^e, 2^(e+1))).
fn representable_integers_up_to(p: u32, x: u64) -> u64 {
    if p >= 64 || x <= 1u64 << p {
        return x.saturating_add(1);
    }
    let mut count = (1u64 << p) + 1;
    let mut e = p;
    while e < 64 && (1u64 << e) < x {
        let lo = 1u64 << e;
        let hi = if e + 1 < 64 {
            (1u64 << (e + 1)).min(x)
        } else {
            x
        };
        count += (hi - lo) >> (e - p + 1);
        e += 1;
    }
    count
}

/// Precision facts for one dtype over positions 0..L−1.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DtypePrecision {
    /// How many distinct finite values the position ids 0..L−1 take once cast to the dtype.
    pub distinct_positions: u64,
    /// The first position id that the dtype cannot represent exactly (2^p + 1), if < L.
    pub first_inexact_position: Option<u64>,
    /// The first position id that overflows to infinity, if < L (f16: 65520).
    pub first_overflow_position: Option<u64>,
    /// Number of distinct cos/sin cache rows over positions 0..L−1 (HF pipeline, see module docs).
    pub distinct_rows: u64,
    /// The first position whose row equals an earlier position's row.
    pub first_duplicate_row: Option<u64>,
    /// The earlier position it duplicates.
    pub first_duplicate_of: Option<u64>,
}

/// Position-id facts: (distinct, first inexact, first overflow) for ids 0..L−1 cast to `d`.
///
/// ```
/// use attnlab_core::numeric::Dtype;
/// use attnlab_core::spectrum::precision::position_ids;
/// assert_eq!(position_ids(Dtype::Bf16, 1000).1, Some(257));
/// assert_eq!(position_ids(Dtype::F16, 70_000).2, Some(65520));
/// ```
pub fn position_ids(d: Dtype, context: u64) -> (u64, Option<u64>, Option<u64>) {
    if context == 0 {
        return (0, None, None);
    }
    let p = significand_bits(d);
    let last = context - 1;
    let first_inexact = if p < 64 && (1u64 << p) < last {
        Some((1u64 << p) + 1)
    } else {
        None
    };
    let rounded = d.round(last as f64);
    let (top, overflow) = if rounded.is_finite() {
        (rounded as u64, None)
    } else {
        // Smallest integer that rounds to infinity (bisection; rounding is monotone).
        let (mut lo, mut hi) = (0u64, last);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if d.round(mid as f64).is_finite() {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (d.round(lo as f64) as u64, Some(hi))
    };
    (
        representable_integers_up_to(p, top),
        first_inexact,
        overflow,
    )
}

/// Number of leading planes hashed as a row key; equal keys are verified on the full row.
const KEY_PLANES: usize = 4;

/// One cache entry (cos or sin of plane k at position m) in dtype `d`, as f64 bits.
fn entry(freqs: &RotaryFrequencies, d: Dtype, m: u64, k: usize) -> (u64, u64) {
    if d == Dtype::F64 {
        let a = m as f64 * freqs.inv_freq[k];
        let af = freqs.attention_factor;
        return ((a.cos() * af).to_bits(), (a.sin() * af).to_bits());
    }
    let af = freqs.attention_factor as f32;
    let angle = (m as f32) * freqs.inv_freq_f32[k];
    let (s, c) = (angle as f64).sin_cos();
    (
        (d.round_f32(c as f32 * af)).to_bits(),
        (d.round_f32(s as f32 * af)).to_bits(),
    )
}

fn full_row(freqs: &RotaryFrequencies, d: Dtype, m: u64) -> Vec<(u64, u64)> {
    (0..freqs.inv_freq.len())
        .map(|k| entry(freqs, d, m, k))
        .collect()
}

#[inline]
fn mix(h: u64, v: u64) -> u64 {
    let h = (h ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^ (h >> 29)
}

/// Row keys (hash of the first [`KEY_PLANES`] planes) of positions `lo..lo + out[i].len()`, one
/// output slice per dtype of `dtypes`. The f32 angle and its cos/sin are computed once and cast
/// to each of f32/bf16/f16.
fn row_keys(freqs: &RotaryFrequencies, dtypes: &[Dtype], lo: u64, out: &mut [&mut [u64]]) {
    let kp = KEY_PLANES.min(freqs.inv_freq.len());
    let af = freqs.attention_factor as f32;
    let n = out.first().map_or(0, |o| o.len());
    let need64 = dtypes.contains(&Dtype::F64);
    let mut h = vec![0u64; dtypes.len()];
    for (r, m) in (lo..lo + n as u64).enumerate() {
        h.iter_mut().for_each(|x| *x = 0xcbf2_9ce4_8422_2325);
        for k in 0..kp {
            let angle = (m as f32) * freqs.inv_freq_f32[k];
            let (s, c) = (angle as f64).sin_cos();
            let (c32, s32) = (c as f32 * af, s as f32 * af);
            let e64 = if need64 {
                Some(entry(freqs, Dtype::F64, m, k))
            } else {
                None
            };
            for (i, &d) in dtypes.iter().enumerate() {
                let (ec, es) = match d {
                    // Cannot fail: need64 is true whenever dtypes contains F64.
                    Dtype::F64 => e64.expect("computed when f64 is requested"),
                    Dtype::F32 | Dtype::Bf16 | Dtype::F16 => {
                        (d.round_f32(c32).to_bits(), d.round_f32(s32).to_bits())
                    }
                };
                h[i] = mix(mix(h[i], ec), es);
            }
        }
        for (o, &v) in out.iter_mut().zip(&h) {
            o[r] = v;
        }
    }
}

/// Positions per parallel block of row keys.
const ROW_BLOCK: usize = 1 << 14;

/// Distinct cos/sin rows over positions 0..L−1 for each dtype of `dtypes`: returns
/// (distinct rows, first duplicate position, the earlier position it repeats) per dtype.
///
/// Rows are keyed by a hash of their first `KEY_PLANES` (4) planes (the highest frequencies;
/// blocks of positions on rayon's threads, written in place); the keys are sorted to find those
/// shared by several positions, and only those positions are compared on the full row, so the
/// count is exact — and the same for any number of threads.
pub fn cache_rows(
    freqs: &RotaryFrequencies,
    context: u64,
    dtypes: &[Dtype],
) -> Vec<(u64, Option<u64>, Option<u64>)> {
    let len = usize::try_from(context).expect("the audit caps the context far below usize::MAX");
    let mut keys: Vec<Vec<u64>> = dtypes.iter().map(|_| vec![0u64; len]).collect();
    let mut blocks: Vec<Vec<&mut [u64]>> =
        (0..len.div_ceil(ROW_BLOCK)).map(|_| Vec::new()).collect();
    for per_dtype in keys.iter_mut() {
        for (b, chunk) in per_dtype.chunks_mut(ROW_BLOCK).enumerate() {
            blocks[b].push(chunk);
        }
    }
    blocks.into_par_iter().enumerate().for_each(|(b, mut out)| {
        row_keys(freqs, dtypes, (b * ROW_BLOCK) as u64, &mut out);
    });
    let keys = &keys;
    let count = |i: usize, d: Dtype| {
        // Sort the keys alone (8 bytes each) to find the keys shared by several positions; in
        // the common case there are none and no position list is built at all.
        let mut sorted: Vec<u64> = keys[i].clone();
        sorted.sort_unstable();
        let mut shared: Vec<u64> = sorted
            .windows(2)
            .filter(|w| w[0] == w[1])
            .map(|w| w[0])
            .collect();
        shared.dedup();
        drop(sorted);
        // Positions of each shared key, in increasing position order.
        let mut groups: std::collections::BTreeMap<u64, Vec<u64>> = Default::default();
        if !shared.is_empty() {
            for (m, key) in keys[i].iter().enumerate() {
                if shared.binary_search(key).is_ok() {
                    groups.entry(*key).or_default().push(m as u64);
                }
            }
        }
        let (mut dups, mut first): (u64, Option<(u64, u64)>) = (0, None);
        for members in groups.values() {
            let rows: Vec<(u64, Vec<(u64, u64)>)> = members
                .iter()
                .map(|&m| (m, full_row(freqs, d, m)))
                .collect();
            for j in 1..rows.len() {
                if let Some(p) = rows[..j].iter().find(|r| r.1 == rows[j].1) {
                    dups += 1;
                    if first.is_none_or(|(f, _)| rows[j].0 < f) {
                        first = Some((rows[j].0, p.0));
                    }
                }
            }
        }
        (context - dups, first.map(|f| f.0), first.map(|f| f.1))
    };
    // One task per dtype for the sort and the verification.
    dtypes
        .par_iter()
        .enumerate()
        .map(|(i, &d)| count(i, d))
        .collect()
}

/// All precision facts for the four dtypes (f64, f32, bf16, f16).
pub fn precision_all(freqs: &RotaryFrequencies, context: u64) -> Vec<(Dtype, DtypePrecision)> {
    let rows = cache_rows(freqs, context, &Dtype::ALL);
    Dtype::ALL
        .iter()
        .zip(rows)
        .map(
            |(&d, (distinct_rows, first_duplicate_row, first_duplicate_of))| {
                let (distinct_positions, first_inexact_position, first_overflow_position) =
                    position_ids(d, context);
                (
                    d,
                    DtypePrecision {
                        distinct_positions,
                        first_inexact_position,
                        first_overflow_position,
                        distinct_rows,
                        first_duplicate_row,
                        first_duplicate_of,
                    },
                )
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::frequencies::Omega;
    use std::collections::HashSet;

    #[test]
    fn position_counts_match_brute_force() {
        for d in Dtype::ALL {
            for l in [1u64, 100, 257, 258, 1024, 3000, 65_600, 200_000] {
                let set: HashSet<u64> = (0..l)
                    .map(|p| d.round(p as f64))
                    .filter(|v| v.is_finite())
                    .map(|v| v.to_bits())
                    .collect();
                assert_eq!(position_ids(d, l).0, set.len() as u64, "{d} L={l}");
            }
        }
        assert_eq!(position_ids(Dtype::Bf16, 300).1, Some(257));
        assert_eq!(position_ids(Dtype::F16, 3000).1, Some(2049));
        assert_eq!(position_ids(Dtype::F16, 70_000).2, Some(65520));
        assert_eq!(position_ids(Dtype::F16, 65_520).2, None);
        assert_eq!(position_ids(Dtype::F32, 1 << 20), (1 << 20, None, None));
    }

    #[test]
    fn cache_rows_match_a_full_row_set() {
        // Brute force: the set of complete rows. A coarse set (few slow planes, bf16) makes
        // duplicates appear; the hashed count must agree exactly.
        let slow = [Omega::float(1e-3).unwrap(), Omega::float(1e-4).unwrap()];
        let f = RotaryFrequencies::from_omegas(&slow);
        for d in [Dtype::Bf16, Dtype::F16, Dtype::F32] {
            let l = 20_000u64;
            let mut set = HashSet::new();
            let mut first = None;
            for m in 0..l {
                if !set.insert(full_row(&f, d, m)) && first.is_none() {
                    first = Some(m);
                }
            }
            let got = cache_rows(&f, l, &[d])[0];
            assert_eq!((got.0, got.1), (set.len() as u64, first), "{d}");
            if d == Dtype::Bf16 {
                // bf16 keeps 8 bits of each of 4 values: the slow angles (≤ 20 and 2 rad) pass
                // through far fewer than 20 000 bf16 cells, so duplicates must appear (the comparison is not vacuous).
                assert!(got.1.is_some(), "{got:?}");
            }
        }
    }

    #[test]
    fn cache_rows_verify_key_collisions_on_the_full_row() {
        // Four slow key planes (many equal keys in bf16) followed by two fast planes that
        // separate most of those positions: the count and the first duplicate pair must match a
        // brute-force set of full rows, so key collisions are resolved on the whole row.
        let ws = [1e-3, 1e-4, 1.1e-3, 1.1e-4, 1.0, 0.7];
        let omegas: Vec<Omega> = ws.iter().map(|&w| Omega::float(w).unwrap()).collect();
        let f = RotaryFrequencies::from_omegas(&omegas);
        for d in [Dtype::Bf16, Dtype::F16] {
            let l = 30_000u64;
            let mut seen = std::collections::HashMap::new();
            let mut first = None;
            for m in 0..l {
                if let Some(&p) = seen.get(&full_row(&f, d, m)) {
                    first = first.or(Some((m, p)));
                } else {
                    seen.insert(full_row(&f, d, m), m);
                }
            }
            let got = cache_rows(&f, l, &[d])[0];
            assert_eq!((got.0, got.1.zip(got.2)), (seen.len() as u64, first), "{d}");
            if d != Dtype::Bf16 {
                continue;
            }
            // Non-vacuous (bf16): the key planes alone collide more often than full rows do.
            let keys: HashSet<Vec<(u64, u64)>> = (0..l)
                .map(|m| full_row(&f, d, m)[..KEY_PLANES].to_vec())
                .collect();
            assert!((keys.len() as u64) < got.0, "{d}: {} keys", keys.len());
        }
    }

    #[test]
    fn f32_positions_collapse_beyond_2_pow_24() {
        // Positions 2^24 and 2^24 + 1 are the same f32 number, so their rows are equal.
        let f = RotaryFrequencies::from_base(10000.0, 8).unwrap();
        let a = full_row(&f, Dtype::F32, 1 << 24);
        assert_eq!(a, full_row(&f, Dtype::F32, (1 << 24) + 1));
        assert_ne!(a, full_row(&f, Dtype::F32, (1 << 24) + 2));
    }
}
