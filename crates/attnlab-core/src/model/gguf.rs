//! The GGUF file format (versions 2 and 3), read with every size checked before it is used.
//!
//! A GGUF file is, in little-endian order:
//!
//! ```text
//! magic "GGUF" · version u32 · tensor_count u64 · kv_count u64
//! kv_count × (key: string, type: u32, value)          the metadata
//! tensor_count × (name: string, n_dims: u32, dims: n_dims × u64, type: u32, offset: u64)
//! padding to `general.alignment` (default 32)
//! tensor data: each tensor at data_start + offset (offset a multiple of the alignment)
//! ```
//!
//! where a string is a u64 byte length and UTF-8 bytes, and a value is one of 13 types (the
//! integers u8…i64, f32, f64, bool, string, and arrays of any of these, arrays included).
//! The format's description is ggml's `docs/gguf.md`; the `gguf` Python package
//! (`gguf.GGUFReader`) is the oracle the tests compare with.
//!
//! **How it is read.** [`GgufFile::open`] opens the file through the input gate
//! ([`crate::files::open`]: regular files only, never blocking) and reads the header
//! (metadata and tensor table) with every count, string length and array length checked
//! against the bytes left in the file *and* against the memory budget before anything is
//! allocated; the header as a whole must fit in [`Limits::max_file_bytes`]. Tensor data is
//! **not** read at open: [`GgufFile::tensor_bytes`] / [`GgufFile::tensor_f32`] read one
//! tensor's extent with positioned reads (`pread`) when asked, after checking that the
//! dequantized tensor fits in [`Limits::max_memory`]. Nothing is memory-mapped, so a file
//! truncated or rewritten while it is open cannot crash the process (a truncated map would
//! raise SIGBUS on access): a read past the new end is an ordinary error naming the file, and
//! [`GgufFile::tensor_bytes`] re-checks the file's current size first.
//!
//! Every tensor's extent is checked at open: a known type, at most 4 dims, a row length that is
//! a whole number of blocks, an element count that does not overflow, an offset that is a
//! multiple of the alignment, data inside the file, and no two tensors overlapping.

use std::fs::File;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::limits::{u, Limits};
use crate::model::quant::{self, GgmlType};
use crate::{number, text};
use crate::{Error, Result};

/// The four bytes every GGUF file starts with.
pub const MAGIC: &[u8; 4] = b"GGUF";
/// The versions read (1 used 32-bit counts and is obsolete).
pub const VERSIONS: [u32; 2] = [2, 3];
/// The alignment of tensor data when `general.alignment` is absent.
pub const DEFAULT_ALIGNMENT: u64 = 32;
/// Most dims a ggml tensor has.
pub const MAX_DIMS: usize = 4;
/// Deepest nesting of arrays accepted (real files use 1).
pub const MAX_ARRAY_DEPTH: u32 = 8;

/// The type of a metadata value, as the file numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum ValueType {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    F32,
    Bool,
    String,
    Array,
    U64,
    I64,
    F64,
}

impl ValueType {
    fn from_code(code: u32) -> Option<ValueType> {
        use ValueType::*;
        Some(match code {
            0 => U8,
            1 => I8,
            2 => U16,
            3 => I16,
            4 => U32,
            5 => I32,
            6 => F32,
            7 => Bool,
            8 => String,
            9 => Array,
            10 => U64,
            11 => I64,
            12 => F64,
            _ => return None,
        })
    }

    /// The fewest bytes one value of this type takes in the file (a string or an array at
    /// least its length field; an array also its element type).
    fn min_file_bytes(self) -> u64 {
        use ValueType::*;
        match self {
            U8 | I8 | Bool => 1,
            U16 | I16 => 2,
            U32 | I32 | F32 => 4,
            U64 | I64 | F64 | String => 8,
            Array => 12,
        }
    }
}

/// One metadata value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[allow(missing_docs)]
pub enum Value {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    String(String),
    U64(u64),
    I64(i64),
    F64(f64),
    /// An array: its element type and its elements.
    Array(ValueType, Vec<Value>),
}

impl Value {
    /// The value's type.
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::U8(_) => ValueType::U8,
            Value::I8(_) => ValueType::I8,
            Value::U16(_) => ValueType::U16,
            Value::I16(_) => ValueType::I16,
            Value::U32(_) => ValueType::U32,
            Value::I32(_) => ValueType::I32,
            Value::F32(_) => ValueType::F32,
            Value::Bool(_) => ValueType::Bool,
            Value::String(_) => ValueType::String,
            Value::U64(_) => ValueType::U64,
            Value::I64(_) => ValueType::I64,
            Value::F64(_) => ValueType::F64,
            Value::Array(..) => ValueType::Array,
        }
    }

    /// An integer value (any integer type) as u64, when it is one and is not negative.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::U8(x) => Some(u64::from(x)),
            Value::U16(x) => Some(u64::from(x)),
            Value::U32(x) => Some(u64::from(x)),
            Value::U64(x) => Some(x),
            Value::I8(x) => u64::try_from(x).ok(),
            Value::I16(x) => u64::try_from(x).ok(),
            Value::I32(x) => u64::try_from(x).ok(),
            Value::I64(x) => u64::try_from(x).ok(),
            _ => None,
        }
    }

    /// A float or integer value as f64 (f32 widened exactly).
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::F32(x) => Some(f64::from(x)),
            Value::F64(x) => Some(x),
            _ => self.as_u64().map(|x| x as f64),
        }
    }

    /// A string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// An array's elements.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(_, v) => Some(v),
            _ => None,
        }
    }

    /// The value in a few words for a report: scalars as they are, strings shortened, arrays
    /// as their element type and length.
    pub fn summary(&self) -> String {
        match self {
            Value::String(s) => format!("\"{}\"", text::shorten(s)),
            Value::Array(t, v) => format!(
                "[{} × {}]",
                v.len(),
                serde_json::to_value(t)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            ),
            Value::F32(x) => number::short(f64::from(*x)),
            Value::F64(x) => number::short(*x),
            Value::Bool(b) => b.to_string(),
            other => other.as_u64().map_or_else(
                || match other {
                    Value::I8(x) => x.to_string(),
                    Value::I16(x) => x.to_string(),
                    Value::I32(x) => x.to_string(),
                    Value::I64(x) => x.to_string(),
                    _ => String::new(),
                },
                |x| x.to_string(),
            ),
        }
    }
}

/// One tensor of the file's table, with its extent checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TensorInfo {
    /// The tensor's name (`blk.0.attn_q.weight`).
    pub name: String,
    /// Its dims in ggml's order: `dims[0]` is the row length (the fastest-varying index), so a
    /// `dims = [576, 49152]` table has 49152 rows of 576 values.
    pub dims: Vec<u64>,
    /// The element type.
    pub ggml_type: GgmlType,
    /// Offset of its data from the start of the data section.
    pub offset: u64,
    /// The number of elements (the product of `dims`).
    pub elements: u64,
    /// The bytes its data takes in the file.
    pub bytes: u64,
}

/// An opened GGUF file: its header in memory, its tensor data read on request.
#[derive(Debug)]
pub struct GgufFile {
    path: PathBuf,
    file: File,
    size: u64,
    version: u32,
    alignment: u64,
    data_start: u64,
    metadata: Vec<(String, Value)>,
    tensors: Vec<TensorInfo>,
    limits: Limits,
}

/// The header reader: a buffered sequential reader that knows how many bytes are left and
/// how much memory the parsed header may still take.
struct Header<'a> {
    path: &'a Path,
    reader: std::io::BufReader<&'a File>,
    pos: u64,
    size: u64,
    /// Bytes of memory the parsed header may still allocate.
    memory_left: u64,
    limits: &'a Limits,
}

impl Header<'_> {
    fn err(&self, what: impl std::fmt::Display) -> Error {
        Error::io(self.path, format!("not a valid GGUF file: {what}"))
    }

    fn truncated(&self, need: u64, what: &str) -> Error {
        self.err(format!(
            "{what} at byte {} needs {} but the file ends at byte {} (truncated?)",
            self.pos,
            number::bytes(need),
            self.size
        ))
    }

    /// Checks that `n` more bytes are in the file and in the header cap.
    fn need(&self, n: u64, what: &str) -> Result<()> {
        let end = self.pos.checked_add(n);
        match end {
            Some(end) if end <= self.size => {}
            _ => return Err(self.truncated(n, what)),
        }
        if end.unwrap_or(u64::MAX) > self.limits.max_file_bytes {
            return Err(Error::io(
                self.path,
                format!(
                    "its header (metadata and tensor table) is over the limit of {} read at once \
                     (raise it with --max-file-size)",
                    number::bytes(self.limits.max_file_bytes)
                ),
            ));
        }
        Ok(())
    }

    /// Charges `bytes` of memory to the header's budget.
    fn charge(&mut self, bytes: u64, what: &str) -> Result<()> {
        if bytes > self.memory_left {
            return Err(Error::limit(
                format!("reading {} ({what})", text::shorten_path(self.path)),
                format!(
                    "more than {} of memory",
                    number::bytes(self.limits.max_memory)
                ),
                format!(
                    "{} (raise it with --max-memory)",
                    number::bytes(self.limits.max_memory)
                ),
            ));
        }
        self.memory_left -= bytes;
        Ok(())
    }

    fn bytes<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        use std::io::Read;
        self.need(N as u64, what)?;
        let mut b = [0u8; N];
        self.reader.read_exact(&mut b).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => self.truncated(N as u64, what),
            _ => Error::io_source(self.path, e),
        })?;
        self.pos += N as u64;
        Ok(b)
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.bytes(what)?))
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.bytes(what)?))
    }

    fn string(&mut self, what: &str) -> Result<String> {
        use std::io::Read;
        let len = self.u64(what)?;
        self.need(len, what)?;
        self.charge(len.saturating_add(24), what)?;
        let mut buf = vec![0u8; usize::try_from(len).map_err(|_| self.truncated(len, what))?];
        self.reader
            .read_exact(&mut buf)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::UnexpectedEof => self.truncated(len, what),
                _ => Error::io_source(self.path, e),
            })?;
        let start = self.pos;
        self.pos += len;
        String::from_utf8(buf).map_err(|e| {
            self.err(format!(
                "{what} at byte {start} is not UTF-8 (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ))
        })
    }

    fn value_type(&mut self, what: &str) -> Result<ValueType> {
        let at = self.pos;
        let code = self.u32(what)?;
        ValueType::from_code(code).ok_or_else(|| {
            self.err(format!(
                "{what} at byte {at} has value type {code}; expected 0 to 12 (u8, i8, u16, i16, \
                 u32, i32, f32, bool, string, array, u64, i64, f64)"
            ))
        })
    }

    fn value(&mut self, t: ValueType, what: &str, depth: u32) -> Result<Value> {
        Ok(match t {
            ValueType::U8 => Value::U8(self.bytes::<1>(what)?[0]),
            ValueType::I8 => Value::I8(i8::from_le_bytes(self.bytes(what)?)),
            ValueType::U16 => Value::U16(u16::from_le_bytes(self.bytes(what)?)),
            ValueType::I16 => Value::I16(i16::from_le_bytes(self.bytes(what)?)),
            ValueType::U32 => Value::U32(self.u32(what)?),
            ValueType::I32 => Value::I32(i32::from_le_bytes(self.bytes(what)?)),
            ValueType::F32 => Value::F32(f32::from_le_bytes(self.bytes(what)?)),
            ValueType::U64 => Value::U64(self.u64(what)?),
            ValueType::I64 => Value::I64(i64::from_le_bytes(self.bytes(what)?)),
            ValueType::F64 => Value::F64(f64::from_le_bytes(self.bytes(what)?)),
            ValueType::Bool => {
                let at = self.pos;
                match self.bytes::<1>(what)?[0] {
                    0 => Value::Bool(false),
                    1 => Value::Bool(true),
                    b => {
                        return Err(self.err(format!(
                            "{what} at byte {at} is a bool of value {b}; expected 0 or 1"
                        )))
                    }
                }
            }
            ValueType::String => Value::String(self.string(what)?),
            ValueType::Array => {
                if depth >= MAX_ARRAY_DEPTH {
                    return Err(self.err(format!(
                        "{what} nests arrays more than {MAX_ARRAY_DEPTH} deep"
                    )));
                }
                let et = self.value_type(what)?;
                let at = self.pos;
                let count = self.u64(what)?;
                // Every element takes at least `min_file_bytes` of the file: an array longer
                // than the rest of the file allows is refused before anything is allocated.
                let min = count.saturating_mul(et.min_file_bytes());
                if min > self.size - self.pos {
                    return Err(self.err(format!(
                        "{what} at byte {at} declares {count} elements, which need at least {} \
                         but only {} are left in the file",
                        number::bytes(min),
                        number::bytes(self.size - self.pos)
                    )));
                }
                let elem = u(std::mem::size_of::<Value>());
                self.charge(count.saturating_mul(elem), what)?;
                let mut v = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
                for _ in 0..count {
                    v.push(self.value(et, what, depth + 1)?);
                }
                Value::Array(et, v)
            }
        })
    }
}

impl GgufFile {
    /// Opens `path` and reads its header (see the module docs for every check).
    ///
    /// # Errors
    /// A file the input gate refuses, a header that is not GGUF 2 or 3 or does not fit the
    /// file, a tensor whose extent is invalid, a header over the limits.
    pub fn open(path: &Path, limits: &Limits) -> Result<GgufFile> {
        let (file, size) = crate::files::open(path)?;
        let (version, metadata, infos, header_end) = {
            let mut h = Header {
                path,
                reader: std::io::BufReader::with_capacity(1 << 16, &file),
                pos: 0,
                size,
                memory_left: limits.max_memory,
                limits,
            };
            if size == 0 {
                return Err(h.err("the file is empty (0 bytes); expected a GGUF model file"));
            }
            let magic: [u8; 4] = h.bytes("the magic")?;
            if &magic != MAGIC {
                return Err(h.err(format!(
                    "it starts with {} instead of the magic \"GGUF\" (a GGUF model file)",
                    hex(&magic)
                )));
            }
            let version = h.u32("the version")?;
            if !VERSIONS.contains(&version) {
                let hint = if version.swap_bytes() == 2 || version.swap_bytes() == 3 {
                    " (a big-endian file, which attnlab does not read)"
                } else {
                    ""
                };
                return Err(h.err(format!("version {version}{hint}; expected version 2 or 3")));
            }
            let tensor_count = h.u64("the tensor count")?;
            let kv_count = h.u64("the metadata count")?;
            // A key-value pair takes at least 12 bytes (an empty key and a type), a tensor
            // info at least 24: counts the file cannot hold are refused before allocating.
            let left = size - h.pos;
            if kv_count.saturating_mul(12) > left {
                return Err(h.err(format!(
                    "it declares {kv_count} metadata entries, more than its {} of header can hold",
                    number::bytes(left)
                )));
            }
            if tensor_count.saturating_mul(24) > left {
                return Err(h.err(format!(
                    "it declares {tensor_count} tensors, more than its {} of header can hold",
                    number::bytes(left)
                )));
            }
            h.charge(
                kv_count.saturating_mul(u(std::mem::size_of::<(String, Value)>())),
                "its metadata",
            )?;
            let mut metadata: Vec<(String, Value)> =
                Vec::with_capacity(usize::try_from(kv_count).unwrap_or(0));
            for i in 0..kv_count {
                let key = h.string(&format!("metadata key {i}"))?;
                let what = format!("metadata value {}", text::shorten(&key));
                let t = h.value_type(&what)?;
                let v = h.value(t, &what, 0)?;
                if metadata.iter().any(|(k, _)| *k == key) {
                    return Err(h.err(format!(
                        "metadata key \"{}\" appears twice",
                        text::shorten(&key)
                    )));
                }
                metadata.push((key, v));
            }
            h.charge(
                tensor_count.saturating_mul(u(std::mem::size_of::<TensorInfo>() + 32)),
                "its tensor table",
            )?;
            let mut infos = Vec::with_capacity(usize::try_from(tensor_count).unwrap_or(0));
            for i in 0..tensor_count {
                let name = h.string(&format!("tensor {i}'s name"))?;
                let what = format!("tensor {}", text::shorten(&name));
                let at = h.pos;
                let n_dims = h.u32(&format!("{what}'s dim count"))?;
                if n_dims == 0 || n_dims as usize > MAX_DIMS {
                    return Err(h.err(format!(
                        "{what} at byte {at} has {n_dims} dims; expected 1 to {MAX_DIMS}"
                    )));
                }
                let mut dims = Vec::with_capacity(n_dims as usize);
                for _ in 0..n_dims {
                    dims.push(h.u64(&format!("{what}'s dims"))?);
                }
                let at = h.pos;
                let code = h.u32(&format!("{what}'s type"))?;
                let ggml_type = GgmlType::from_code(code).ok_or_else(|| {
                    h.err(format!(
                        "{what} at byte {at} has type {code}, which attnlab does not read; \
                         expected one of {}",
                        GgmlType::list()
                    ))
                })?;
                let offset = h.u64(&format!("{what}'s offset"))?;
                infos.push((name, dims, ggml_type, offset));
            }
            (version, metadata, infos, h.pos)
        };
        let alignment = match metadata.iter().find(|(k, _)| k == "general.alignment") {
            None => DEFAULT_ALIGNMENT,
            Some((_, v)) => match v.as_u64() {
                Some(a) if a.is_power_of_two() && a <= 1 << 20 => a,
                _ => {
                    return Err(Error::io(
                        path,
                        format!(
                            "not a valid GGUF file: general.alignment is {}; expected a power \
                             of two up to 2^20",
                            v.summary()
                        ),
                    ))
                }
            },
        };
        let data_start = header_end.div_ceil(alignment) * alignment;
        let bad = |m: String| Error::io(path, format!("not a valid GGUF file: {m}"));
        let data_len = size.saturating_sub(data_start);
        let mut tensors = Vec::with_capacity(infos.len());
        for (name, dims, ggml_type, offset) in infos {
            let what = format!("tensor {}", text::shorten(&name));
            let elements = dims
                .iter()
                .try_fold(1u64, |p, &d| p.checked_mul(d))
                .ok_or_else(|| {
                    bad(format!(
                        "{what} has dims {dims:?}, whose product overflows 64 bits"
                    ))
                })?;
            let block = ggml_type.block_elements();
            if !dims[0].is_multiple_of(block) {
                return Err(bad(format!(
                    "{what} has rows of {} values, not a multiple of {}'s block of {block}",
                    dims[0],
                    ggml_type.name()
                )));
            }
            let bytes = (elements / block)
                .checked_mul(ggml_type.block_bytes())
                .ok_or_else(|| bad(format!("{what}'s byte size overflows 64 bits")))?;
            if !offset.is_multiple_of(alignment) {
                return Err(bad(format!(
                    "{what}'s data offset {offset} is not a multiple of the alignment {alignment}"
                )));
            }
            if offset.checked_add(bytes).is_none_or(|end| end > data_len) {
                return Err(bad(format!(
                    "{what}'s data (bytes {offset} to {} of the data section) lies outside the \
                     file, whose data section holds {data_len} bytes (truncated?)",
                    offset.saturating_add(bytes)
                )));
            }
            if tensors.iter().any(|t: &TensorInfo| t.name == name) {
                return Err(bad(format!("{what} appears twice in the tensor table")));
            }
            tensors.push(TensorInfo {
                name,
                dims,
                ggml_type,
                offset,
                elements,
                bytes,
            });
        }
        let mut order: Vec<&TensorInfo> = tensors.iter().filter(|t| t.bytes > 0).collect();
        order.sort_by_key(|t| t.offset);
        for w in order.windows(2) {
            if w[0].offset + w[0].bytes > w[1].offset {
                return Err(bad(format!(
                    "tensors {} and {} overlap (bytes {} to {} and {} to {} of the data section)",
                    text::shorten(&w[0].name),
                    text::shorten(&w[1].name),
                    w[0].offset,
                    w[0].offset + w[0].bytes,
                    w[1].offset,
                    w[1].offset + w[1].bytes
                )));
            }
        }
        Ok(GgufFile {
            path: path.to_path_buf(),
            file,
            size,
            version,
            alignment,
            data_start,
            metadata,
            tensors,
            limits: *limits,
        })
    }

    /// The path it was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's size in bytes at open.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The format version (2 or 3).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The alignment of tensor data.
    pub fn alignment(&self) -> u64 {
        self.alignment
    }

    /// The byte at which tensor data starts.
    pub fn data_start(&self) -> u64 {
        self.data_start
    }

    /// The metadata in file order.
    pub fn metadata(&self) -> &[(String, Value)] {
        &self.metadata
    }

    /// One metadata value by key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// A numeric metadata value by key (`None` when absent).
    ///
    /// # Errors
    /// A value that is not a number.
    pub fn number(&self, key: &str) -> Result<Option<f64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.as_f64().map(Some).ok_or_else(|| {
                Error::io(
                    self.path(),
                    format!("metadata {key} is {}; expected a number", v.summary()),
                )
            }),
        }
    }

    /// The tensor table in file order.
    pub fn tensors(&self) -> &[TensorInfo] {
        &self.tensors
    }

    /// One tensor's info by name.
    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.iter().find(|t| t.name == name)
    }

    fn find(&self, name: &str) -> Result<&TensorInfo> {
        self.tensor(name).ok_or_else(|| {
            Error::invalid(
                format!("tensor of {}", text::shorten_path(&self.path)),
                format!("\"{}\" (not in the file)", text::shorten(name)),
                format!("one of its {} tensors", self.tensors.len()),
            )
        })
    }

    /// Reads the raw bytes of tensor `name` (its extent was checked at open; the file's size
    /// is checked again, so a file truncated since is an error, not a crash).
    ///
    /// # Errors
    /// An unknown name, a tensor over the memory limit, a read error or a truncated file.
    pub fn tensor_bytes(&self, name: &str) -> Result<Vec<u8>> {
        let t = self.find(name)?;
        self.limits
            .check_memory(format!("reading tensor {}", text::shorten(name)), t.bytes)?;
        self.read_at(self.data_start + t.offset, t.bytes)
    }

    fn read_at(&self, start: u64, len: u64) -> Result<Vec<u8>> {
        let now = self
            .file
            .metadata()
            .map_err(|e| Error::io_source(&self.path, e))?
            .len();
        if start.saturating_add(len) > now {
            return Err(Error::io(
                &self.path,
                format!(
                    "the file is now {now} bytes, shorter than when it was opened ({} bytes): \
                     it changed while being read",
                    self.size
                ),
            ));
        }
        let mut buf = vec![0u8; usize::try_from(len).unwrap_or(usize::MAX)];
        read_exact_at(&self.file, &mut buf, start).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => Error::io(
                &self.path,
                "the file ended early: it changed while being read",
            ),
            _ => Error::io_source(&self.path, e),
        })?;
        Ok(buf)
    }

    /// Tensor `name` dequantized to f32, `elements` values in ggml order (row after row of
    /// `dims[0]` values). The f32 result is checked against the memory limit before reading.
    ///
    /// # Errors
    /// See [`GgufFile::tensor_bytes`].
    pub fn tensor_f32(&self, name: &str) -> Result<Vec<f32>> {
        let t = self.find(name)?;
        self.limits.check_memory(
            format!("dequantizing tensor {} to f32", text::shorten(name)),
            t.bytes.saturating_add(t.elements.saturating_mul(4)),
        )?;
        let raw = self.read_at(self.data_start + t.offset, t.bytes)?;
        quant::dequantize(t.ggml_type, &raw, t.elements)
    }

    /// Rows `rows` (each `dims[0]` values) of a 2-D tensor dequantized to f32, read without
    /// reading the rest of the tensor (an embedding lookup).
    ///
    /// # Errors
    /// An unknown name, a tensor that is not 2-D, a row out of range, a read error.
    pub fn tensor_rows_f32(&self, name: &str, rows: &[u64]) -> Result<Vec<Vec<f32>>> {
        let t = self.find(name)?;
        if t.dims.len() != 2 {
            return Err(Error::shape(
                format!("reading rows of tensor {}", text::shorten(name)),
                "a 2-D tensor",
                format!("dims {:?}", t.dims),
            ));
        }
        let (width, height) = (t.dims[0], t.dims[1]);
        let row_bytes = width / t.ggml_type.block_elements() * t.ggml_type.block_bytes();
        self.limits.check_memory(
            format!(
                "reading {} rows of tensor {}",
                rows.len(),
                text::shorten(name)
            ),
            crate::limits::product(&[u(rows.len()), width, 4]).saturating_add(row_bytes),
        )?;
        rows.iter()
            .map(|&r| {
                if r >= height {
                    return Err(Error::invalid(
                        format!("row of tensor {}", text::shorten(name)),
                        r,
                        format!("0 to {}", height.saturating_sub(1)),
                    ));
                }
                let raw = self.read_at(self.data_start + t.offset + r * row_bytes, row_bytes)?;
                quant::dequantize(t.ggml_type, &raw, width)
            })
            .collect()
    }
}

fn hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(not(unix))]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = file.try_clone()?;
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}
