//! A small GGUF writer: the synthetic files the reader's tests, the bad-input tests and the
//! fuzz targets start from (a valid file, then cut or corrupted), and the generated K-quant
//! blocks the `gguf` package dequantizes as an oracle.
//!
//! It writes exactly the layout [`super::gguf`] documents; it does not check what it is given
//! (tests write invalid files on purpose through [`GgufWriter::raw_tensor`]).

use super::gguf::{Value, ValueType};
use super::quant::GgmlType;

/// One tensor entry: name, dims, type code, offset (`None`: the next aligned one), data.
type RawTensor = (String, Vec<u64>, u32, Option<u64>, Vec<u8>);

/// A GGUF file being assembled in memory.
#[derive(Debug, Clone, Default)]
pub struct GgufWriter {
    /// Format version written (default 3).
    pub version: u32,
    /// Alignment of tensor data (default 32; also written as `general.alignment` when not 32).
    pub alignment: u64,
    metadata: Vec<(String, Value)>,
    tensors: Vec<RawTensor>,
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn type_code(t: ValueType) -> u32 {
    use ValueType::*;
    match t {
        U8 => 0,
        I8 => 1,
        U16 => 2,
        I16 => 3,
        U32 => 4,
        I32 => 5,
        F32 => 6,
        Bool => 7,
        String => 8,
        Array => 9,
        U64 => 10,
        I64 => 11,
        F64 => 12,
    }
}

fn put_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::U8(x) => out.push(*x),
        Value::I8(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::U16(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::I16(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::U32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::I32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::F32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::Bool(x) => out.push(u8::from(*x)),
        Value::String(s) => put_string(out, s),
        Value::U64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::I64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::F64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::Array(t, items) => {
            out.extend_from_slice(&type_code(*t).to_le_bytes());
            out.extend_from_slice(&(items.len() as u64).to_le_bytes());
            for i in items {
                put_value(out, i);
            }
        }
    }
}

impl GgufWriter {
    /// An empty version-3 file with alignment 32.
    pub fn new() -> Self {
        GgufWriter {
            version: 3,
            alignment: 32,
            ..Default::default()
        }
    }

    /// Adds a metadata entry.
    pub fn meta(&mut self, key: &str, value: Value) -> &mut Self {
        self.metadata.push((key.into(), value));
        self
    }

    /// Adds a tensor of `ggml_type` with `dims` (ggml order) and its raw bytes; its offset is
    /// the next aligned one.
    pub fn tensor(&mut self, name: &str, dims: &[u64], t: GgmlType, data: Vec<u8>) -> &mut Self {
        self.tensors
            .push((name.into(), dims.to_vec(), t.code(), None, data));
        self
    }

    /// Adds a tensor entry with any type code and, when `offset` is given, that offset (which
    /// may be invalid: for tests of the reader's refusals).
    pub fn raw_tensor(
        &mut self,
        name: &str,
        dims: &[u64],
        type_code: u32,
        offset: Option<u64>,
        data: Vec<u8>,
    ) -> &mut Self {
        self.tensors
            .push((name.into(), dims.to_vec(), type_code, offset, data));
        self
    }

    /// Adds a llama-style architecture: `general.architecture` and the dims a forward needs.
    pub fn llama_meta(&mut self, arch: &str, dims: [u64; 7]) -> &mut Self {
        let [layers, embd, ffn, heads, kv, ctx, vocab] = dims;
        let s = |x: &str| Value::String(x.into());
        self.meta("general.architecture", s(arch))
            .meta(&format!("{arch}.block_count"), Value::U32(layers as u32))
            .meta(&format!("{arch}.embedding_length"), Value::U32(embd as u32))
            .meta(
                &format!("{arch}.feed_forward_length"),
                Value::U32(ffn as u32),
            )
            .meta(
                &format!("{arch}.attention.head_count"),
                Value::U32(heads as u32),
            )
            .meta(
                &format!("{arch}.attention.head_count_kv"),
                Value::U32(kv as u32),
            )
            .meta(&format!("{arch}.context_length"), Value::U32(ctx as u32))
            .meta(&format!("{arch}.vocab_size"), Value::U32(vocab as u32))
            .meta(&format!("{arch}.rope.freq_base"), Value::F32(10000.0))
            .meta(
                &format!("{arch}.attention.layer_norm_rms_epsilon"),
                Value::F32(1e-5),
            )
    }

    /// A complete 1-layer llama in F32 (d = 32, 2 query heads of 16, 1 key/value head, FFN 64,
    /// context 128, a 4-piece byte-level BPE vocabulary `a b ab Ġ` with the merge `a b`), weights
    /// `0.01·(i mod 7)`: the smallest file every model command runs on. Add metadata (rope
    /// scaling, …) with [`GgufWriter::meta`].
    ///
    /// ```
    /// use attnlab_core::model::gguf_write::GgufWriter;
    /// let bytes = GgufWriter::tiny_llama().to_bytes();
    /// assert_eq!(&bytes[..4], b"GGUF");
    /// ```
    pub fn tiny_llama() -> Self {
        let mut g = GgufWriter::new();
        g.llama_meta("llama", [1, 32, 64, 2, 1, 128, 4])
            .tiny_vocab();
        for (name, dims) in [
            ("token_embd.weight", &[32, 4][..]),
            ("output_norm.weight", &[32]),
            ("blk.0.attn_norm.weight", &[32]),
            ("blk.0.attn_q.weight", &[32, 32]),
            ("blk.0.attn_k.weight", &[32, 16]),
            ("blk.0.attn_v.weight", &[32, 16]),
            ("blk.0.attn_output.weight", &[32, 32]),
            ("blk.0.ffn_norm.weight", &[32]),
            ("blk.0.ffn_gate.weight", &[32, 64]),
            ("blk.0.ffn_up.weight", &[32, 64]),
            ("blk.0.ffn_down.weight", &[64, 32]),
        ] {
            let n: u64 = dims.iter().product();
            let data = (0..n)
                .flat_map(|i| (0.01 * (i % 7) as f32).to_le_bytes())
                .collect();
            g.tensor(name, dims, GgmlType::F32, data);
        }
        g
    }

    /// Adds the tests' byte-level BPE tokenizer: the 4 pieces `a b ab Ġ` (`gpt2` model) and the
    /// one merge `a b`.
    pub fn tiny_vocab(&mut self) -> &mut Self {
        let s = |x: &str| Value::String(x.into());
        self.meta("tokenizer.ggml.model", s("gpt2"))
            .meta(
                "tokenizer.ggml.tokens",
                Value::Array(ValueType::String, vec![s("a"), s("b"), s("ab"), s("Ġ")]),
            )
            .meta(
                "tokenizer.ggml.merges",
                Value::Array(ValueType::String, vec![s("a b")]),
            )
    }

    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(b"GGUF");
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(&(self.tensors.len() as u64).to_le_bytes());
        let extra = u64::from(self.alignment != 32);
        out.extend_from_slice(&(self.metadata.len() as u64 + extra).to_le_bytes());
        if extra == 1 {
            put_string(&mut out, "general.alignment");
            out.extend_from_slice(&type_code(ValueType::U32).to_le_bytes());
            out.extend_from_slice(&(self.alignment as u32).to_le_bytes());
        }
        for (k, v) in &self.metadata {
            put_string(&mut out, k);
            out.extend_from_slice(&type_code(v.value_type()).to_le_bytes());
            put_value(&mut out, v);
        }
        let align = self.alignment.max(1);
        let mut next = 0u64;
        let mut offsets = Vec::new();
        for (name, dims, code, offset, data) in &self.tensors {
            put_string(&mut out, name);
            out.extend_from_slice(&(dims.len() as u32).to_le_bytes());
            for d in dims {
                out.extend_from_slice(&d.to_le_bytes());
            }
            out.extend_from_slice(&code.to_le_bytes());
            let at = offset.unwrap_or(next);
            out.extend_from_slice(&at.to_le_bytes());
            offsets.push(at);
            next = (at + data.len() as u64).div_ceil(align) * align;
        }
        let start = (out.len() as u64).div_ceil(align) * align;
        out.resize(start as usize, 0);
        for ((_, _, _, _, data), at) in self.tensors.iter().zip(offsets) {
            // An offset far past the end (a test of the reader's refusal) is written, its data not.
            let Some(begin) = start
                .checked_add(at)
                .filter(|&b| b <= out.len() as u64 + (1 << 20))
                .map(|b| b as usize)
            else {
                continue;
            };
            if out.len() < begin {
                out.resize(begin, 0);
            }
            let end = begin + data.len();
            if out.len() < end {
                out.resize(end, 0);
            }
            out[begin..end].copy_from_slice(data);
        }
        out
    }
}
