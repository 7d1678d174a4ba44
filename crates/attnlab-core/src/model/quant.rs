//! ggml's tensor types and their dequantization to f32.
//!
//! A quantized tensor is a sequence of blocks; each block stores `block_elements` values as
//! small integers `q` and one or two f16 (or f32) factors, and value `i` of the block is
//!
//! * `Q8_0`, `Q4_0`, `Q5_0`:  `x = d · q`            (q signed: int8, nibble − 8, 5 bits − 16)
//! * `Q4_1`, `Q5_1`:          `x = d · q + m`        (q unsigned: nibble, 5 bits)
//! * `Q4_K`, `Q5_K`:          `x = (d · scᵢ) · q − (dmin · mᵢ)` over 8 sub-blocks of 32, with
//!   6-bit scales `scᵢ` and mins `mᵢ` packed in 12 bytes
//! * `Q6_K`:                  `x = (d · scᵢ) · (q − 32)` over 16 sub-blocks of 16, int8 `scᵢ`
//! * `Q8_K`:                  `x = d · q` (d an f32)
//!
//! Each product and sum is one f32 operation rounded to nearest, in the order written (no
//! fused multiply–add), which is how the `gguf` Python package's `gguf.quants.dequantize`
//! computes them with numpy; the tests require equality bit for bit. F16 and BF16 widen exactly.

use serde::Serialize;

use crate::{Error, Result};

/// The tensor types attnlab reads, with ggml's type codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[allow(missing_docs, non_camel_case_types)]
pub enum GgmlType {
    F32,
    F16,
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
    Q4_K,
    Q5_K,
    Q6_K,
    Q8_K,
    BF16,
}

/// Every type read, in code order.
pub const TYPES: [GgmlType; 12] = [
    GgmlType::F32,
    GgmlType::F16,
    GgmlType::Q4_0,
    GgmlType::Q4_1,
    GgmlType::Q5_0,
    GgmlType::Q5_1,
    GgmlType::Q8_0,
    GgmlType::Q4_K,
    GgmlType::Q5_K,
    GgmlType::Q6_K,
    GgmlType::Q8_K,
    GgmlType::BF16,
];

/// Values per K-quant super-block.
pub const QK_K: usize = 256;

impl GgmlType {
    /// The type with ggml's code `code` (`ggml_type`), if attnlab reads it.
    pub fn from_code(code: u32) -> Option<GgmlType> {
        use GgmlType::*;
        Some(match code {
            0 => F32,
            1 => F16,
            2 => Q4_0,
            3 => Q4_1,
            6 => Q5_0,
            7 => Q5_1,
            8 => Q8_0,
            12 => Q4_K,
            13 => Q5_K,
            14 => Q6_K,
            15 => Q8_K,
            30 => BF16,
            _ => return None,
        })
    }

    /// ggml's code for the type.
    pub fn code(self) -> u32 {
        use GgmlType::*;
        match self {
            F32 => 0,
            F16 => 1,
            Q4_0 => 2,
            Q4_1 => 3,
            Q5_0 => 6,
            Q5_1 => 7,
            Q8_0 => 8,
            Q4_K => 12,
            Q5_K => 13,
            Q6_K => 14,
            Q8_K => 15,
            BF16 => 30,
        }
    }

    /// ggml's name (`Q4_K`).
    pub fn name(self) -> &'static str {
        use GgmlType::*;
        match self {
            F32 => "F32",
            F16 => "F16",
            Q4_0 => "Q4_0",
            Q4_1 => "Q4_1",
            Q5_0 => "Q5_0",
            Q5_1 => "Q5_1",
            Q8_0 => "Q8_0",
            Q4_K => "Q4_K",
            Q5_K => "Q5_K",
            Q6_K => "Q6_K",
            Q8_K => "Q8_K",
            BF16 => "BF16",
        }
    }

    /// The accepted types with their codes, for messages.
    pub fn list() -> String {
        TYPES
            .iter()
            .map(|t| format!("{} ({})", t.name(), t.code()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Values per block.
    pub fn block_elements(self) -> u64 {
        use GgmlType::*;
        match self {
            F32 | F16 | BF16 => 1,
            Q4_0 | Q4_1 | Q5_0 | Q5_1 | Q8_0 => 32,
            Q4_K | Q5_K | Q6_K | Q8_K => QK_K as u64,
        }
    }

    /// Bytes per block (the `gguf` package's `GGML_QUANT_SIZES`).
    pub fn block_bytes(self) -> u64 {
        use GgmlType::*;
        match self {
            F32 => 4,
            F16 | BF16 => 2,
            Q4_0 => 18,
            Q4_1 => 20,
            Q5_0 => 22,
            Q5_1 => 24,
            Q8_0 => 34,
            Q4_K => 144,
            Q5_K => 176,
            Q6_K => 210,
            Q8_K => 292,
        }
    }
}

fn f16(b: &[u8], at: usize) -> f32 {
    half::f16::from_le_bytes([b[at], b[at + 1]]).to_f32()
}

/// `elements` values of type `t` from `raw` (exactly the bytes of whole blocks they need).
///
/// # Errors
/// `elements` not a whole number of blocks, or `raw` not exactly their size.
pub fn dequantize(t: GgmlType, raw: &[u8], elements: u64) -> Result<Vec<f32>> {
    let be = t.block_elements();
    let need = (elements / be).checked_mul(t.block_bytes());
    if elements % be != 0 || need != Some(raw.len() as u64) {
        return Err(Error::shape(
            format!("dequantizing {}", t.name()),
            format!(
                "whole blocks of {be} values, {} bytes each",
                t.block_bytes()
            ),
            format!("{elements} values in {} bytes", raw.len()),
        ));
    }
    let n = usize::try_from(elements)
        .map_err(|_| Error::invalid("tensor size", elements, "a size this machine can address"))?;
    let mut out = vec![0f32; n];
    let bb = t.block_bytes() as usize;
    let be = be as usize;
    for (y, b) in out.chunks_exact_mut(be).zip(raw.chunks_exact(bb)) {
        block(t, b, y);
    }
    Ok(out)
}

/// Dequantizes one block `b` into `y`.
fn block(t: GgmlType, b: &[u8], y: &mut [f32]) {
    use GgmlType::*;
    match t {
        F32 => y[0] = f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        F16 => y[0] = f16(b, 0),
        BF16 => y[0] = f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16),
        Q8_0 => {
            let d = f16(b, 0);
            for (i, v) in y.iter_mut().enumerate() {
                *v = d * f32::from(b[2 + i] as i8);
            }
        }
        Q4_0 => {
            let d = f16(b, 0);
            let qs = &b[2..18];
            for j in 0..16 {
                y[j] = d * f32::from((qs[j] & 0x0F) as i8 - 8);
                y[j + 16] = d * f32::from((qs[j] >> 4) as i8 - 8);
            }
        }
        Q4_1 => {
            let (d, m) = (f16(b, 0), f16(b, 2));
            let qs = &b[4..20];
            for j in 0..16 {
                y[j] = d * f32::from(qs[j] & 0x0F) + m;
                y[j + 16] = d * f32::from(qs[j] >> 4) + m;
            }
        }
        Q5_0 => {
            let d = f16(b, 0);
            let qh = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
            let qs = &b[6..22];
            for j in 0..16 {
                let lo = (qs[j] & 0x0F) | ((((qh >> j) & 1) as u8) << 4);
                let hi = (qs[j] >> 4) | ((((qh >> (j + 16)) & 1) as u8) << 4);
                y[j] = d * f32::from(lo as i8 - 16);
                y[j + 16] = d * f32::from(hi as i8 - 16);
            }
        }
        Q5_1 => {
            let (d, m) = (f16(b, 0), f16(b, 2));
            let qh = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
            let qs = &b[8..24];
            for j in 0..16 {
                let lo = (qs[j] & 0x0F) | ((((qh >> j) & 1) as u8) << 4);
                let hi = (qs[j] >> 4) | ((((qh >> (j + 16)) & 1) as u8) << 4);
                y[j] = d * f32::from(lo) + m;
                y[j + 16] = d * f32::from(hi) + m;
            }
        }
        Q4_K | Q5_K => {
            let (d, dmin) = (f16(b, 0), f16(b, 2));
            let (sc, mn) = scale_min_k4(&b[4..16]);
            let (qh, qs) = if t == Q5_K {
                (Some(&b[16..48]), &b[48..176])
            } else {
                (None, &b[16..144])
            };
            for j in 0..8 {
                let dj = d * f32::from(sc[j]);
                let mj = dmin * f32::from(mn[j]);
                let chunk = &qs[32 * (j / 2)..32 * (j / 2) + 32];
                let shift = 4 * (j % 2);
                for l in 0..32 {
                    let mut q = (chunk[l] >> shift) & 0x0F;
                    if let Some(qh) = qh {
                        q |= ((qh[l] >> j) & 1) << 4;
                    }
                    y[32 * j + l] = dj * f32::from(q) - mj;
                }
            }
        }
        Q6_K => {
            let ql = &b[0..128];
            let qh = &b[128..192];
            let scales = &b[192..208];
            let d = f16(b, 208);
            for (i, v) in y.iter_mut().enumerate() {
                let h = i / 128;
                let lo = (ql[h * 64 + i % 64] >> (4 * ((i % 128) / 64))) & 0x0F;
                let hi = (qh[h * 32 + i % 32] >> (2 * ((i % 128) / 32))) & 0x03;
                let q = (lo | (hi << 4)) as i8 - 32;
                let s = d * f32::from(scales[i / 16] as i8);
                *v = s * f32::from(q);
            }
        }
        Q8_K => {
            let d = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            for (i, v) in y.iter_mut().enumerate() {
                *v = d * f32::from(b[4 + i] as i8);
            }
        }
    }
}

/// The 8 six-bit scales and 8 six-bit mins of a Q4_K / Q5_K block (ggml's
/// `get_scale_min_k4`): bytes 0–3 hold scales 0–3 in their low 6 bits, bytes 4–7 mins 0–3,
/// and scales/mins 4–7 are the nibbles of bytes 8–11 with their top 2 bits taken from the
/// high bits of bytes 0–3 / 4–7.
fn scale_min_k4(s: &[u8]) -> ([u8; 8], [u8; 8]) {
    let mut sc = [0u8; 8];
    let mut mn = [0u8; 8];
    for i in 0..4 {
        sc[i] = s[i] & 0x3F;
        mn[i] = s[4 + i] & 0x3F;
        sc[4 + i] = (s[8 + i] & 0x0F) | ((s[i] >> 2) & 0x30);
        mn[4 + i] = (s[8 + i] >> 4) | ((s[4 + i] >> 2) & 0x30);
    }
    (sc, mn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_blocks() {
        // Q8_0 with d = 0.5 (f16 0x3800): q = -4 → -2, q = 3 → 1.5.
        let mut b = vec![0x00, 0x38];
        b.extend((0..32).map(|i| if i == 0 { (-4i8) as u8 } else { 3 }));
        let y = dequantize(GgmlType::Q8_0, &b, 32).unwrap();
        assert_eq!((y[0], y[1]), (-2.0, 1.5));
        // Q4_1: d = 1, m = -8 (f16 0xC800); qs[0] = 0x3A → y[0] = 10 - 8, y[16] = 3 - 8.
        let mut b = vec![0x00, 0x3C, 0x00, 0xC8];
        b.extend([0x3A; 16]);
        let y = dequantize(GgmlType::Q4_1, &b, 32).unwrap();
        assert_eq!((y[0], y[16]), (2.0, -5.0));
        assert!(dequantize(GgmlType::Q4_1, &b, 64).is_err());
        assert!(dequantize(GgmlType::Q4_1, &b[..19], 32).is_err());
        // BF16 1.0 is 0x3F80.
        assert_eq!(dequantize(GgmlType::BF16, &[0x80, 0x3F], 1).unwrap(), [1.0]);
        for t in TYPES {
            assert_eq!(GgmlType::from_code(t.code()), Some(t));
        }
    }
}
