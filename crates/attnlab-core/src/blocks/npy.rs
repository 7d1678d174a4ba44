//! numpy's `.npy` format, read with every declared size checked before anything is allocated.
//!
//! Layout (numpy's `format.py`): the magic `\x93NUMPY`, a major and a minor version byte, the
//! header length (2 bytes little-endian for version 1, 4 bytes for versions 2 and 3), the header
//! — a Python dict literal `{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }` padded
//! with spaces and a newline — and then the data. The header is parsed here (no Python literal
//! evaluator), its length is checked against the bytes present, and the data length the shape
//! and dtype declare must equal the bytes that follow it exactly.

use ndarray::{Array2, ShapeBuilder};

use crate::text::shorten;

/// The longest header accepted (numpy itself refuses headers over 10 000 bytes by default).
pub const MAX_HEADER: usize = 65_536;

/// An element type a block may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    /// `f4`.
    F32,
    /// `f8`.
    F64,
}

impl Elem {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Elem::F32 => 4,
            Elem::F64 => 8,
        }
    }

    /// numpy's name.
    pub fn name(self) -> &'static str {
        match self {
            Elem::F32 => "float32",
            Elem::F64 => "float64",
        }
    }
}

/// A parsed `.npy` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The element type.
    pub elem: Elem,
    /// Whether the data is big-endian.
    pub big_endian: bool,
    /// Column-major data.
    pub fortran_order: bool,
    /// The declared shape.
    pub shape: Vec<u64>,
    /// Where the data starts.
    pub data_offset: usize,
}

/// A shape as `3×4` (`scalar` for rank 0).
pub fn shape_text(shape: &[u64]) -> String {
    if shape.is_empty() {
        return "a scalar".into();
    }
    shape
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join("×")
}

/// Parses the header of `bytes` (a whole `.npy` file or its beginning).
///
/// # Errors
/// A reason, in words, why the bytes are not a `.npy` array of a block's kind.
pub fn parse_header(bytes: &[u8]) -> Result<Header, String> {
    const MAGIC: &[u8] = b"\x93NUMPY";
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err("not a .npy file (no \\x93NUMPY magic at the start)".into());
    }
    let major = bytes[6];
    let (len, start) = match major {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err("truncated .npy header".into());
            }
            let n = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
            (usize::try_from(n).unwrap_or(usize::MAX), 12)
        }
        v => return Err(format!(".npy format version {v} (expected 1, 2 or 3)")),
    };
    if len > MAX_HEADER {
        return Err(format!(
            "the .npy header declares {len} bytes, over the {MAX_HEADER} a header may have"
        ));
    }
    let available = bytes.len() - start;
    if len > available {
        return Err(format!(
            "truncated: the .npy header declares {len} bytes, the file has {available} after the prefix"
        ));
    }
    let text = std::str::from_utf8(&bytes[start..start + len])
        .map_err(|_| "the .npy header is not text".to_string())?;
    let mut p = Dict::new(text);
    let fields = p.dict()?;
    let mut descr = None;
    let mut fortran = None;
    let mut shape = None;
    for (key, value) in fields {
        match (key.as_str(), value) {
            ("descr", Value::Str(s)) => descr = Some(s),
            ("fortran_order", Value::Bool(b)) => fortran = Some(b),
            ("shape", Value::Tuple(t)) => shape = Some(t),
            ("descr" | "fortran_order" | "shape", _) => {
                return Err(format!("the .npy header's {key} has the wrong type"))
            }
            (other, _) => {
                return Err(format!(
                    "the .npy header has an unknown key {:?}",
                    shorten(other)
                ))
            }
        }
    }
    let (Some(descr), Some(fortran_order), Some(shape)) = (descr, fortran, shape) else {
        return Err("the .npy header lacks descr, fortran_order or shape".into());
    };
    let (big_endian, elem) = match descr.as_str() {
        "<f8" => (false, Elem::F64),
        "<f4" => (false, Elem::F32),
        ">f8" => (true, Elem::F64),
        ">f4" => (true, Elem::F32),
        "=f8" => (cfg!(target_endian = "big"), Elem::F64),
        "=f4" => (cfg!(target_endian = "big"), Elem::F32),
        other => {
            return Err(format!(
                "dtype {}; blocks must be float32 (<f4) or float64 (<f8)",
                shorten(other)
            ))
        }
    };
    Ok(Header {
        elem,
        big_endian,
        fortran_order,
        shape,
        data_offset: start + len,
    })
}

impl Header {
    /// The declared rows and columns of a 2-D array.
    ///
    /// # Errors
    /// Another rank.
    pub fn matrix_shape(&self) -> Result<(u64, u64), String> {
        match self.shape.as_slice() {
            &[r, c] => Ok((r, c)),
            s => Err(format!(
                "a {}-D array of shape {}; blocks must be 2-D",
                s.len(),
                shape_text(s)
            )),
        }
    }

    /// Bytes of data the header declares (saturating).
    pub fn data_bytes(&self) -> u64 {
        crate::limits::product(&self.shape).saturating_mul(self.elem.size() as u64)
    }
}

/// Decodes the data of a 2-D array whose header was checked, from the whole file's bytes.
///
/// # Errors
/// Another rank, or data whose length differs from what the header declares.
pub fn decode(bytes: &[u8], h: &Header) -> Result<Array2<f64>, String> {
    let (r, c) = h.matrix_shape()?;
    let declared = h.data_bytes();
    let present = crate::limits::u(bytes.len() - h.data_offset);
    if declared != present {
        let what = if present < declared {
            "truncated"
        } else {
            "trailing bytes"
        };
        return Err(format!(
            "{what}: the header declares {} {} ({} of data), the file has {} after its header",
            shape_text(&h.shape),
            h.elem.name(),
            crate::number::bytes(declared),
            crate::number::bytes(present)
        ));
    }
    // Both fit in usize: their product is the length of a slice we hold.
    let (r, c) = (r as usize, c as usize);
    let data = &bytes[h.data_offset..];
    let values: Vec<f64> = match (h.elem, h.big_endian) {
        (Elem::F64, false) => data
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(eight(b)))
            .collect(),
        (Elem::F64, true) => data
            .chunks_exact(8)
            .map(|b| f64::from_be_bytes(eight(b)))
            .collect(),
        (Elem::F32, false) => data
            .chunks_exact(4)
            .map(|b| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
            .collect(),
        (Elem::F32, true) => data
            .chunks_exact(4)
            .map(|b| f64::from(f32::from_be_bytes([b[0], b[1], b[2], b[3]])))
            .collect(),
    };
    let shape = if h.fortran_order {
        (r, c).f()
    } else {
        (r, c).into_shape_with_order()
    };
    Array2::from_shape_vec(shape, values).map_err(|e| format!("shape {r}×{c}: {e}"))
}

/// Eight bytes of a `chunks_exact(8)` chunk.
fn eight(b: &[u8]) -> [u8; 8] {
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    a
}

/// A value of the header dict.
#[derive(Debug, PartialEq)]
enum Value {
    Str(String),
    Bool(bool),
    Tuple(Vec<u64>),
}

/// A parser of the Python dict literal numpy writes.
struct Dict<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Dict<'a> {
    fn new(text: &'a str) -> Self {
        Dict {
            s: text.as_bytes(),
            i: 0,
        }
    }

    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!(
                "the .npy header is not a dict literal (expected '{}' at byte {})",
                c as char, self.i
            ))
        }
    }

    fn string(&mut self) -> Result<String, String> {
        let q = match self.peek() {
            Some(q @ (b'\'' | b'"')) => q,
            _ => {
                return Err(format!(
                    "the .npy header: expected a string at byte {}",
                    self.i
                ))
            }
        };
        self.i += 1;
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i] != q {
            self.i += 1;
        }
        if self.i >= self.s.len() {
            return Err("the .npy header has an unterminated string".into());
        }
        let out = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        self.i += 1;
        Ok(out)
    }

    fn word(&mut self) -> &'a [u8] {
        self.skip_ws();
        let start = self.i;
        while self.i < self.s.len() && (self.s[self.i].is_ascii_alphanumeric()) {
            self.i += 1;
        }
        &self.s[start..self.i]
    }

    fn value(&mut self) -> Result<Value, String> {
        match self.peek() {
            Some(b'\'' | b'"') => Ok(Value::Str(self.string()?)),
            Some(b'(') => {
                self.i += 1;
                let mut dims = Vec::new();
                loop {
                    if self.peek() == Some(b')') {
                        self.i += 1;
                        return Ok(Value::Tuple(dims));
                    }
                    let w = self.word();
                    let digits = w.strip_suffix(b"L").unwrap_or(w);
                    let text = std::str::from_utf8(digits).unwrap_or("");
                    let n: u64 = text.parse().map_err(|_| {
                        format!(
                            "the .npy header's shape has a dimension {:?} that is not a whole number below 2^64",
                            shorten(&String::from_utf8_lossy(w))
                        )
                    })?;
                    dims.push(n);
                    if dims.len() > 32 {
                        return Err("the .npy header's shape has more than 32 dimensions".into());
                    }
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b')') => {}
                        _ => return Err("the .npy header's shape is not a tuple".into()),
                    }
                }
            }
            _ => match self.word() {
                b"True" => Ok(Value::Bool(true)),
                b"False" => Ok(Value::Bool(false)),
                _ => Err(format!(
                    "the .npy header has a value numpy does not write at byte {}",
                    self.i
                )),
            },
        }
    }

    fn dict(&mut self) -> Result<Vec<(String, Value)>, String> {
        self.expect(b'{')?;
        let mut out = Vec::new();
        loop {
            if self.peek() == Some(b'}') {
                self.i += 1;
                break;
            }
            let key = self.string()?;
            self.expect(b':')?;
            let value = self.value()?;
            if out.iter().any(|(k, _)| *k == key) {
                return Err(format!(
                    "the .npy header repeats the key {:?}",
                    shorten(&key)
                ));
            }
            out.push((key, value));
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {}
                _ => return Err("the .npy header is not a dict literal".into()),
            }
            if out.len() > 8 {
                return Err("the .npy header has too many keys".into());
            }
        }
        if self.s[self.i..].iter().any(|b| !b.is_ascii_whitespace()) {
            return Err("the .npy header has text after its dict".into());
        }
        Ok(out)
    }
}

/// The bytes of a version-1 `.npy` file with this header dict and data (the header padded
/// as numpy pads it). Used by tests and fuzz targets to build well- and ill-formed files.
pub fn encode(dict: &str, data: &[u8]) -> Vec<u8> {
    let total = 10 + dict.len() + 1;
    let pad = (64 - total % 64) % 64;
    let header = format!("{dict}{}\n", " ".repeat(pad));
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(
        &u16::try_from(header.len())
            .unwrap_or(u16::MAX)
            .to_le_bytes(),
    );
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

/// What `np.save(f, a)` writes for a float64 matrix.
pub fn encode_f64(a: &Array2<f64>) -> Vec<u8> {
    let dict = format!(
        "{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}), }}",
        a.nrows(),
        a.ncols()
    );
    let data: Vec<u8> = a.iter().flat_map(|v| v.to_le_bytes()).collect();
    encode(&dict, &data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict(descr: &str, fortran: &str, shape: &str) -> String {
        format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}")
    }

    #[test]
    fn headers_declaring_more_than_is_present_are_refused_before_allocating() {
        let a = ndarray::array![[1.0, 2.0], [3.0, 4.5]];
        let bytes = encode_f64(&a);
        let data: Vec<u8> = a.iter().flat_map(|v| v.to_le_bytes()).collect();
        let h = parse_header(&bytes).unwrap();
        assert_eq!(decode(&bytes, &h).unwrap(), a);
        // Truncated data: the real cause, not a dtype complaint.
        let e = decode(&bytes[..bytes.len() - 8], &h).unwrap_err();
        assert!(
            e.starts_with("truncated") && e.contains("2×2 float64"),
            "{e}"
        );
        // A 100-byte file asking for 10^16 elements.
        let huge = encode(&dict("<f8", "False", "(100000000, 100000000)"), &[]);
        let h = parse_header(&huge).unwrap();
        assert_eq!(h.shape, vec![100_000_000, 100_000_000]);
        assert!(decode(&huge, &h).unwrap_err().starts_with("truncated"));
        let overflow = encode(&dict("<f8", "False", "(4294967296, 4294967296, 16)"), &[]);
        let h = parse_header(&overflow).unwrap();
        assert_eq!(h.data_bytes(), u64::MAX);
        // Rank and dtype are named.
        let rank3 = encode(&dict("<f8", "False", "(2, 2, 1)"), &data);
        let e = decode(&rank3, &parse_header(&rank3).unwrap()).unwrap_err();
        assert!(e.contains("3-D") && e.contains("2×2×1"), "{e}");
        let int = encode(&dict("<i8", "False", "(2, 2)"), &data);
        assert!(parse_header(&int).unwrap_err().contains("<i8"));
        // A version-2 header length is not trusted.
        let mut v2 = bytes.clone();
        v2[6] = 2;
        v2.splice(8..10, [0xff, 0xff, 0xff, 0x7f]);
        assert!(parse_header(&v2).unwrap_err().contains("over the"));
        let mut v2 = bytes.clone();
        v2[6] = 2;
        v2.splice(8..10, [0x00, 0x10, 0x00, 0x00]);
        assert!(parse_header(&v2).unwrap_err().starts_with("truncated"));
        // Fortran order is honoured; big-endian and float32 data are read.
        let f = encode(&dict("<f8", "True", "(2, 2)"), &data);
        assert_eq!(decode(&f, &parse_header(&f).unwrap()).unwrap(), a.t());
        let be: Vec<u8> = a.iter().flat_map(|v| (*v as f32).to_be_bytes()).collect();
        let b = encode(&dict(">f4", "False", "(2, 2)"), &be);
        assert_eq!(decode(&b, &parse_header(&b).unwrap()).unwrap(), a);
        for bad in ["{}", "{'descr': '<f8'}", "[1]", "{'descr': '<f8', 'x': 1}"] {
            assert!(parse_header(&encode(bad, &[])).is_err(), "{bad}");
        }
    }
}
