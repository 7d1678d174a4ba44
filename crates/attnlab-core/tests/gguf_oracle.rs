//! The GGUF reader and dequantization against the `gguf` Python package (llama.cpp's own
//! reader, which attnlab did not write): `gguf.GGUFReader`'s metadata and tensor table, and
//! `gguf.quants.dequantize`'s f32 values, bit for bit — on the real SmolLM2 file and on a
//! synthetic file holding generated blocks of every type attnlab reads.
//!
//! Oracle rule: without the `gguf` package (`ATTNLAB_PYTHON`, else `python3`) or without the
//! model file (`scripts/fetch-smollm2`; `ATTNLAB_MODEL_DIR` names another cache) each test prints
//! a visible `SKIPPED (no oracle)` line locally and fails under CI (`CI` set).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use attnlab_core::limits::Limits;
use attnlab_core::model::gguf::{GgufFile, Value, ValueType};
use attnlab_core::model::gguf_write::GgufWriter;
use attnlab_core::model::quant::{GgmlType, TYPES};
use rand::{RngExt, SeedableRng};

mod common;
use common::{python, python_with, smollm2};

fn have_gguf() -> bool {
    python_with("the gguf package", "import gguf, numpy").is_some()
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/gguf_oracle.py")
}

/// Streams the oracle's dequantized tensors and compares each with ours, bit for bit.
/// Returns (tensors compared, values compared, names the oracle could not dequantize).
fn compare_tensors(path: &Path) -> (usize, u64, Vec<String>) {
    let f = GgufFile::open(path, &Limits::default()).unwrap();
    let mut child = Command::new(python())
        .arg(script())
        .arg("tensors")
        .arg(path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::with_capacity(1 << 20, child.stdout.take().unwrap());
    let (mut tensors, mut values, mut skipped) = (0, 0u64, Vec::new());
    loop {
        let mut len = [0u8; 4];
        if out.read_exact(&mut len).is_err() {
            break;
        }
        let mut name = vec![0u8; u32::from_le_bytes(len) as usize];
        out.read_exact(&mut name).unwrap();
        let name = String::from_utf8(name).unwrap();
        let mut head = [0u8; 12];
        out.read_exact(&mut head).unwrap();
        let code = u32::from_le_bytes(head[..4].try_into().unwrap());
        let n = u64::from_le_bytes(head[4..].try_into().unwrap());
        let info = f
            .tensor(&name)
            .expect("the oracle's tensor is in our table");
        if code == u32::MAX {
            skipped.push(name);
            continue;
        }
        assert_eq!(code, info.ggml_type.code(), "{name}: type");
        assert_eq!(n, info.elements, "{name}: element count");
        let mut raw = vec![0u8; n as usize * 4];
        out.read_exact(&mut raw).unwrap();
        let ours = f.tensor_f32(&name).unwrap();
        for (i, (a, b)) in ours.iter().zip(raw.chunks_exact(4)).enumerate() {
            let b = f32::from_le_bytes(b.try_into().unwrap());
            assert_eq!(
                a.to_bits(),
                b.to_bits(),
                "{name} ({}) value {i}: attnlab {a:e}, gguf {b:e}",
                info.ggml_type.name()
            );
        }
        tensors += 1;
        values += n;
    }
    assert!(child.wait().unwrap().success(), "the oracle failed");
    (tensors, values, skipped)
}

/// `value` equal to the oracle's JSON reading of it (f32 compared exactly: Python's float of
/// an np.float32 is the same number widened).
fn same(ours: &Value, theirs: &serde_json::Value) -> bool {
    use serde_json::Value as J;
    match (ours, theirs) {
        (Value::String(a), J::String(b)) => a == b,
        (Value::Bool(a), J::Bool(b)) => a == b,
        (Value::F32(a), J::Number(b)) => b.as_f64() == Some(f64::from(*a)),
        (Value::F64(a), J::Number(b)) => b.as_f64() == Some(*a),
        (Value::I64(a), J::Number(b)) => b.as_i64() == Some(*a),
        (Value::I32(a), J::Number(b)) => b.as_i64() == Some(i64::from(*a)),
        (Value::I16(a), J::Number(b)) => b.as_i64() == Some(i64::from(*a)),
        (Value::I8(a), J::Number(b)) => b.as_i64() == Some(i64::from(*a)),
        (Value::Array(_, a), J::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (v, J::Number(b)) => v.as_u64().is_some() && v.as_u64() == b.as_u64(),
        _ => false,
    }
}

/// The `gguf` package's name of a value type (`GGUFValueType`).
fn type_name(t: ValueType) -> &'static str {
    use ValueType::*;
    match t {
        U8 => "UINT8",
        I8 => "INT8",
        U16 => "UINT16",
        I16 => "INT16",
        U32 => "UINT32",
        I32 => "INT32",
        F32 => "FLOAT32",
        Bool => "BOOL",
        String => "STRING",
        Array => "ARRAY",
        U64 => "UINT64",
        I64 => "INT64",
        F64 => "FLOAT64",
    }
}

fn compare_meta(path: &Path) -> usize {
    let f = GgufFile::open(path, &Limits::default()).unwrap();
    let out = Command::new(python())
        .arg(script())
        .arg("meta")
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let fields = j["fields"].as_object().unwrap();
    assert_eq!(fields.len(), f.metadata().len(), "metadata count");
    for (k, v) in f.metadata() {
        let theirs = &fields[k];
        let mut types = vec![type_name(v.value_type())];
        // GGUFReader records an array's element type only when it has elements.
        if let Value::Array(t, items) = v {
            if !items.is_empty() {
                types.push(type_name(*t));
            }
        }
        assert_eq!(theirs["types"], serde_json::json!(types), "{k}: types");
        assert!(
            same(v, &theirs["value"]),
            "{k}: {} vs {}",
            v.summary(),
            theirs["value"]
        );
    }
    let tensors = j["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), f.tensors().len());
    for (t, o) in f.tensors().iter().zip(tensors) {
        assert_eq!(o["name"], t.name.as_str());
        assert_eq!(o["dims"], serde_json::json!(t.dims), "{}", t.name);
        assert_eq!(o["type"], t.ggml_type.code(), "{}", t.name);
        assert_eq!(o["elements"], t.elements, "{}", t.name);
        assert_eq!(o["bytes"], t.bytes, "{}", t.name);
        assert_eq!(o["data_offset"], f.data_start() + t.offset, "{}", t.name);
    }
    f.metadata().len()
}

#[test]
fn smollm2_metadata_and_every_tensor_equal_the_gguf_package() {
    let Some(path) = smollm2() else { return };
    if !have_gguf() {
        return;
    }
    assert_eq!(compare_meta(&path), 33);
    let (tensors, values, skipped) = compare_tensors(&path);
    assert!(skipped.is_empty(), "{skipped:?}");
    // The whole file: 272 tensors (Q4_1, Q8_0, F32), every value bit for bit.
    assert_eq!(tensors, 272);
    let f = GgufFile::open(&path, &Limits::default()).unwrap();
    assert_eq!(values, f.tensors().iter().map(|t| t.elements).sum::<u64>());
}

/// A finite f16's bits, uniformly drawn among the finite ones (exponent field not 31).
fn finite_f16(rng: &mut impl RngExt) -> [u8; 2] {
    loop {
        let b: u16 = rng.random();
        if (b >> 10) & 0x1F != 0x1F {
            return b.to_le_bytes();
        }
    }
}

/// `blocks` blocks of type `t`: random bytes, with every scale a random finite float.
fn random_blocks(t: GgmlType, blocks: usize, rng: &mut impl RngExt) -> Vec<u8> {
    let bb = t.block_bytes() as usize;
    let mut out = vec![0u8; bb * blocks];
    rng.fill_bytes(&mut out);
    for b in out.chunks_exact_mut(bb) {
        let f16_at: &[usize] = match t {
            GgmlType::F16 | GgmlType::Q4_0 | GgmlType::Q5_0 | GgmlType::Q8_0 => &[0],
            GgmlType::Q4_1 | GgmlType::Q5_1 | GgmlType::Q4_K | GgmlType::Q5_K => &[0, 2],
            GgmlType::Q6_K => &[208],
            _ => &[],
        };
        for &at in f16_at {
            b[at..at + 2].copy_from_slice(&finite_f16(rng));
        }
        match t {
            GgmlType::F32 | GgmlType::Q8_K => {
                let x: f32 = rng.random_range(-4.0..4.0);
                b[..4].copy_from_slice(&x.to_le_bytes());
            }
            // A BF16 whose exponent is all ones (inf or NaN) is made finite.
            GgmlType::BF16 if (u16::from_le_bytes([b[0], b[1]]) >> 7) & 0xFF == 0xFF => {
                b[1] &= 0xBF;
            }
            _ => {}
        }
    }
    out
}

/// A file with one tensor of each type read (3 rows of 2 blocks) and one metadata entry of
/// every value type.
fn every_type_file(dir: &Path) -> PathBuf {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(18);
    let mut w = GgufWriter::new();
    w.meta("t.u8", Value::U8(200))
        .meta("t.i8", Value::I8(-100))
        .meta("t.u16", Value::U16(60000))
        .meta("t.i16", Value::I16(-30000))
        .meta("t.u32", Value::U32(4_000_000_000))
        .meta("t.i32", Value::I32(-2_000_000_000))
        .meta("t.f32", Value::F32(0.1))
        .meta("t.bool", Value::Bool(true))
        .meta("t.string", Value::String("naïve 🦀 text".into()))
        .meta("t.u64", Value::U64(u64::MAX - 1))
        .meta("t.i64", Value::I64(i64::MIN + 1))
        .meta("t.f64", Value::F64(-1e-300))
        .meta(
            "t.strings",
            Value::Array(
                ValueType::String,
                vec![Value::String("a".into()), Value::String(String::new())],
            ),
        )
        .meta(
            "t.floats",
            Value::Array(ValueType::F32, vec![Value::F32(1.5), Value::F32(-0.0)]),
        )
        .meta("t.empty", Value::Array(ValueType::I32, vec![]));
    for t in TYPES {
        let be = t.block_elements();
        let data = random_blocks(t, 6, &mut rng);
        w.tensor(&format!("x.{}", t.name()), &[2 * be, 3], t, data);
    }
    let p = dir.join("every_type.gguf");
    std::fs::write(&p, w.to_bytes()).unwrap();
    p
}

#[test]
fn generated_blocks_of_every_type_equal_the_gguf_package() {
    if !have_gguf() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = every_type_file(dir.path());
    assert_eq!(compare_meta(&p), 15);
    let (tensors, _, skipped) = compare_tensors(&p);
    // The gguf package 0.19 has no dequantization for Q8_K (ggml uses Q8_K only for
    // activations, never for stored weights); it is checked against ggml's definition below.
    assert_eq!(skipped, ["x.Q8_K"]);
    assert_eq!(tensors, TYPES.len() - 1);
    let f = GgufFile::open(&p, &Limits::default()).unwrap();
    let raw = f.tensor_bytes("x.Q8_K").unwrap();
    let ours = f.tensor_f32("x.Q8_K").unwrap();
    for (b, y) in raw.chunks_exact(292).zip(ours.chunks_exact(256)) {
        let d = f32::from_le_bytes(b[..4].try_into().unwrap());
        for i in 0..256 {
            assert_eq!(y[i].to_bits(), (d * f32::from(b[4 + i] as i8)).to_bits());
        }
    }
}
