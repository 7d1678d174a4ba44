//! Hostile GGUF files: every one is refused with one line naming what is wrong, never a panic,
//! and never an allocation the file's size or the memory budget does not allow (a test runs
//! with a 64 MiB budget, so an allocation trusting a bomb's count would fail it).

use std::path::{Path, PathBuf};

use attnlab_core::limits::Limits;
use attnlab_core::model::gguf::{GgufFile, Value, ValueType};
use attnlab_core::model::gguf_write::GgufWriter;
use attnlab_core::model::quant::GgmlType;
use attnlab_core::model::tokenizer::ModelTokenizer;
use attnlab_core::model::ModelInfo;
use rand::{RngExt, SeedableRng};

fn limits() -> Limits {
    Limits {
        max_memory: 64 << 20,
        ..Limits::default()
    }
}

/// A small valid llama file: metadata of several types, a tokenizer, two tensors.
fn small() -> GgufWriter {
    let mut w = GgufWriter::new();
    w.llama_meta("llama", [1, 32, 64, 2, 1, 128, 4])
        .tiny_vocab()
        .meta("general.flag", Value::Bool(true));
    let mut q = vec![0u8; 34 * 4];
    q[0] = 0x00;
    q[1] = 0x3C;
    w.tensor("token_embd.weight", &[32, 4], GgmlType::Q8_0, q);
    w.tensor("output_norm.weight", &[32], GgmlType::F32, vec![0u8; 128]);
    w
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn refused(p: &Path, needles: &[&str]) -> String {
    let e = GgufFile::open(p, &limits())
        .expect_err("refused")
        .to_string();
    assert!(!e.contains('\n'), "one line: {e}");
    for n in needles {
        assert!(e.contains(n), "{e} should say {n}");
    }
    e
}

#[test]
fn the_small_file_reads_and_every_cut_of_it_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = small().to_bytes();
    let p = write(dir.path(), "ok.gguf", &bytes);
    let f = GgufFile::open(&p, &limits()).unwrap();
    let info = ModelInfo::from_gguf(&f).unwrap();
    assert_eq!(
        (info.layers, info.heads, info.kv_heads, info.head_dim),
        (1, 2, 1, 16)
    );
    assert_eq!(f.tensor_f32("token_embd.weight").unwrap()[0], 0.0);
    let tok = ModelTokenizer::from_gguf(&f).unwrap();
    let ids: Vec<u32> = tok
        .encode("ab a", &limits())
        .unwrap()
        .iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(ids, [2, 3, 0]);
    assert!(tok.piece(4).unwrap_err().to_string().contains("0 to 3"));
    // Cut anywhere: the header is refused at open, or a cut in the last tensor's data is.
    for cut in 0..bytes.len() {
        let p = write(dir.path(), "cut.gguf", &bytes[..cut]);
        let e = GgufFile::open(&p, &limits())
            .expect_err("a cut file")
            .to_string();
        assert!(
            !e.contains('\n') && e.contains("cut.gguf"),
            "cut {cut}: {e}"
        );
        let expected = if cut == 0 {
            "empty"
        } else if cut < 8 {
            "truncated"
        } else {
            ""
        };
        assert!(e.contains(expected), "cut {cut}: {e}");
    }
}

#[test]
fn bad_headers_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let good = small().to_bytes();
    let mut b = good.clone();
    b[..4].copy_from_slice(b"GGML");
    refused(&write(dir.path(), "m.gguf", &b), &["magic", "47 47 4d 4c"]);
    let mut b = good.clone();
    b[4..8].copy_from_slice(&1u32.to_le_bytes());
    refused(
        &write(dir.path(), "v.gguf", &b),
        &["version 1", "expected version 2 or 3"],
    );
    let mut b = good.clone();
    b[4..8].copy_from_slice(&3u32.to_be_bytes());
    refused(&write(dir.path(), "be.gguf", &b), &["big-endian"]);
    // Counts beyond the file: tensors, metadata.
    let mut b = good.clone();
    b[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    refused(&write(dir.path(), "tc.gguf", &b), &["tensors"]);
    let mut b = good.clone();
    b[16..24].copy_from_slice(&(1u64 << 40).to_le_bytes());
    refused(&write(dir.path(), "kc.gguf", &b), &["metadata entries"]);
    // The first key's string length beyond the file.
    let mut b = good.clone();
    b[24..32].copy_from_slice(&(1u64 << 50).to_le_bytes());
    refused(&write(dir.path(), "sl.gguf", &b), &["truncated"]);
    refused(&write(dir.path(), "empty.gguf", &[]), &["empty"]);
    let e = GgufFile::open(dir.path(), &limits())
        .unwrap_err()
        .to_string();
    assert!(e.contains("directory"), "{e}");
    let e = GgufFile::open(Path::new("/dev/zero"), &limits())
        .unwrap_err()
        .to_string();
    assert!(e.contains("character device"), "{e}");
}

#[test]
fn array_bombs_and_deep_nesting_are_refused_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    // An array of 2^40 u64s declared in a file of a few hundred bytes.
    let mut w = GgufWriter::new();
    w.meta("a", Value::Array(ValueType::U64, vec![Value::U64(1)]));
    let mut b = w.to_bytes();
    // magic, version, 2 counts (24 bytes), the key "a" (9), its type and the element type (8).
    let at = 24 + 9 + 8;
    b[at..at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    refused(
        &write(dir.path(), "bomb.gguf", &b),
        &["declares 1099511627776 elements"],
    );
    // Within the file but over the memory budget: 1 MiB of u8 elements is 32 MiB of values.
    let mut w = GgufWriter::new();
    w.meta(
        "a",
        Value::Array(ValueType::U8, vec![Value::U8(0); 4 << 20]),
    );
    let p = write(dir.path(), "big.gguf", &w.to_bytes());
    let e = GgufFile::open(&p, &limits()).unwrap_err();
    assert_eq!(e.kind(), attnlab_core::ErrorKind::Limit, "{e}");
    assert!(GgufFile::open(&p, &Limits::default()).is_ok());
    // Arrays nested 9 deep.
    let mut v = Value::U8(0);
    for _ in 0..9 {
        let t = v.value_type();
        v = Value::Array(t, vec![v]);
    }
    let mut w = GgufWriter::new();
    w.meta("deep", v);
    refused(
        &write(dir.path(), "deep.gguf", &w.to_bytes()),
        &["nests arrays"],
    );
    // A bool that is neither 0 nor 1, a value type 13.
    let mut w = GgufWriter::new();
    w.meta("b", Value::Bool(true));
    let mut b = w.to_bytes();
    // The key "b" (9 bytes from 24), its value type (4), the bool.
    b[37] = 7;
    refused(&write(dir.path(), "bool.gguf", &b), &["bool of value 7"]);
    b[33..37].copy_from_slice(&13u32.to_le_bytes());
    refused(&write(dir.path(), "vt.gguf", &b), &["value type 13"]);
}

#[test]
fn bad_tensor_tables_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let case = |name: &str, f: &dyn Fn(&mut GgufWriter), needles: &[&str]| {
        let mut w = GgufWriter::new();
        f(&mut w);
        refused(&write(dir.path(), name, &w.to_bytes()), needles);
    };
    case(
        "type.gguf",
        &|w| {
            w.raw_tensor("t", &[32], 16, None, vec![0; 64]);
        },
        &["type 16", "Q4_K (12)"],
    );
    case(
        "overflow.gguf",
        &|w| {
            w.raw_tensor("t", &[1 << 32, 1 << 32, 2], 0, None, vec![]);
        },
        &["overflows 64 bits"],
    );
    case(
        "outside.gguf",
        &|w| {
            w.raw_tensor("t", &[1024], 0, None, vec![0; 64]);
        },
        &["outside the file"],
    );
    case(
        "offset.gguf",
        &|w| {
            w.raw_tensor("t", &[8], 0, Some(1 << 60), vec![]);
        },
        &["outside the file"],
    );
    case(
        "misaligned.gguf",
        &|w| {
            w.raw_tensor("t", &[8], 0, Some(4), vec![0; 64]);
        },
        &["not a multiple of the alignment 32"],
    );
    case(
        "overlap.gguf",
        &|w| {
            w.raw_tensor("a", &[16], 0, Some(0), vec![0; 64]);
            w.raw_tensor("b", &[16], 0, Some(32), vec![0; 64]);
        },
        &["overlap"],
    );
    case(
        "block.gguf",
        &|w| {
            w.raw_tensor("t", &[33], 8, None, vec![0; 68]);
        },
        &["not a multiple of Q8_0's block of 32"],
    );
    case(
        "dims.gguf",
        &|w| {
            w.raw_tensor("t", &[1, 1, 1, 1, 1], 0, None, vec![0; 4]);
        },
        &["5 dims"],
    );
    case(
        "dup.gguf",
        &|w| {
            w.raw_tensor("t", &[8], 0, None, vec![0; 32]);
            w.raw_tensor("t", &[8], 0, None, vec![0; 32]);
        },
        &["appears twice"],
    );
    case(
        "align.gguf",
        &|w| {
            w.meta("general.alignment", Value::U32(3));
        },
        &["general.alignment is 3"],
    );
}

#[test]
fn a_file_truncated_after_open_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = small().to_bytes();
    let p = write(dir.path(), "shrinks.gguf", &bytes);
    let f = GgufFile::open(&p, &limits()).unwrap();
    std::fs::write(&p, &bytes[..bytes.len() - 100]).unwrap();
    let e = f.tensor_f32("output_norm.weight").unwrap_err().to_string();
    assert!(e.contains("changed while being read"), "{e}");
    assert!(f
        .tensor_f32("nope")
        .unwrap_err()
        .to_string()
        .contains("not in the file"));
}

#[test]
fn unsupported_architectures_are_read_but_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = GgufWriter::new();
    w.llama_meta("gpt2", [1, 32, 64, 2, 2, 128, 4]);
    let f = GgufFile::open(&write(dir.path(), "g.gguf", &w.to_bytes()), &limits()).unwrap();
    let info = ModelInfo::from_gguf(&f).unwrap();
    assert!(!info.supported);
    let e = info.require_supported().unwrap_err().to_string();
    assert!(
        e.contains("\"gpt2\"") && e.contains("llama, mistral, qwen2, qwen3"),
        "{e}"
    );
    let e = ModelTokenizer::from_gguf(&f).unwrap_err().to_string();
    assert!(e.contains("tokenizer.ggml.model"), "{e}");
}

/// A few hundred mutations of the small file (bytes overwritten with random or extreme values,
/// cuts, duplications): each opens or is refused in one line; what opens reads its tensors or
/// refuses them, within the budget.
#[test]
fn mutated_files_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let good = small().to_bytes();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(22);
    let (mut opened, mut refused_n) = (0, 0);
    for i in 0..400 {
        let mut b = good.clone();
        for _ in 0..rng.random_range(1..4usize) {
            let at = rng.random_range(0..b.len());
            match rng.random_range(0..4u8) {
                0 => b[at] = rng.random(),
                1 => {
                    let v = [0u64, u64::MAX, 1 << 40, 0x8000_0000][rng.random_range(0..4usize)];
                    let end = (at + 8).min(b.len());
                    b[at..end].copy_from_slice(&v.to_le_bytes()[..end - at]);
                }
                2 => b.truncate(at),
                _ => {
                    let tail = b[at..].to_vec();
                    b.extend_from_slice(&tail);
                }
            }
            if b.is_empty() {
                break;
            }
        }
        let p = write(dir.path(), &format!("m{}.gguf", i % 8), &b);
        match GgufFile::open(&p, &limits()) {
            Ok(f) => {
                opened += 1;
                for t in f.tensors().to_vec() {
                    let _ = f.tensor_f32(&t.name);
                }
                let _ = ModelInfo::from_gguf(&f);
                if let Ok(tok) = ModelTokenizer::from_gguf(&f) {
                    let _ = tok.encode("ab ba", &limits());
                }
            }
            Err(e) => {
                refused_n += 1;
                assert!(!e.to_string().contains('\n'), "{e}");
            }
        }
    }
    assert!(
        opened > 0 && refused_n > 100,
        "{opened} opened, {refused_n} refused"
    );
}

/// A complete 1-layer llama in f32 (d = 32, 2 heads, 1 KV head, FFN 64, vocabulary 4).
fn full() -> GgufWriter {
    let mut w = small();
    let mut t = |name: &str, dims: &[u64]| {
        let n: u64 = dims.iter().product();
        let data: Vec<u8> = (0..n)
            .flat_map(|i| (0.01 * (i % 7) as f32).to_le_bytes())
            .collect();
        w.tensor(name, dims, GgmlType::F32, data);
    };
    t("blk.0.attn_norm.weight", &[32]);
    t("blk.0.attn_q.weight", &[32, 32]);
    t("blk.0.attn_k.weight", &[32, 16]);
    t("blk.0.attn_v.weight", &[32, 16]);
    t("blk.0.attn_output.weight", &[32, 32]);
    t("blk.0.ffn_norm.weight", &[32]);
    t("blk.0.ffn_gate.weight", &[32, 64]);
    t("blk.0.ffn_up.weight", &[32, 64]);
    t("blk.0.ffn_down.weight", &[64, 32]);
    w
}

/// Issue 22 item 5: the file is truncated after its header was read and before (and while)
/// its tensors are. The reader never maps the file (a truncated map would kill the process
/// with SIGBUS): every tensor is a positioned read after the file's current size is checked,
/// so loading the weights either succeeds or is one error naming the file.
#[test]
fn a_model_truncated_between_header_and_tensors_is_an_error_not_a_crash() {
    use attnlab_core::model::gguf_weights::{load, QkRows};
    let dir = tempfile::tempdir().unwrap();
    let bytes = full().to_bytes();
    let p = write(dir.path(), "shrinking.gguf", &bytes);
    // Once, deterministically: open, truncate into the tensor data, load.
    let f = GgufFile::open(&p, &limits()).unwrap();
    assert!(load(&f, QkRows::HalfSplit, &limits()).is_ok());
    let data_start = usize::try_from(f.data_start()).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len((data_start + 100) as u64)
        .unwrap();
    let Err(e) = load(&f, QkRows::HalfSplit, &limits()) else {
        panic!("a file truncated into its tensors loaded");
    };
    let e = e.to_string();
    assert!(
        e.contains("shrinking.gguf") && e.contains("changed while being read") && !e.contains('\n'),
        "{e}"
    );
    // Then racing: a thread truncates the file to random lengths and restores it while the
    // weights are loaded again and again from handles opened on the whole file.
    std::fs::write(&p, &bytes).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (mut loaded, mut refused_n) = (0, 0);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
            let file = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let cut = rng.random_range(data_start..bytes.len());
                file.set_len(cut as u64).unwrap();
                std::thread::sleep(std::time::Duration::from_micros(200));
                std::fs::write(&p, &bytes).unwrap();
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        });
        let f = loop {
            // The header must be whole when opened; retry until it is.
            if let Ok(f) = GgufFile::open(&p, &limits()) {
                if f.size() == bytes.len() as u64 {
                    break f;
                }
            }
        };
        for _ in 0..300 {
            match load(&f, QkRows::HalfSplit, &limits()) {
                Ok(_) => loaded += 1,
                Err(e) => {
                    refused_n += 1;
                    let m = e.to_string();
                    assert!(m.contains("shrinking.gguf") && !m.contains('\n'), "{m}");
                }
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    eprintln!("truncation race: {loaded} loads succeeded, {refused_n} refused in one line");
    assert_eq!(loaded + refused_n, 300);
}
