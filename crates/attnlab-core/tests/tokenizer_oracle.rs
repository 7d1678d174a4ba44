//! The GGUF tokenizer against transformers' (`AutoTokenizer.from_pretrained(dir, gguf_file=…)`,
//! transformers 5.24 with the `gguf` package), on a corpus attnlab's authors did not write for
//! the purpose: lines and multi-line windows of the course's spec files (Unicode prose, maths,
//! code, emoji) and of this repository's Python and Rust sources (indentation runs, newlines,
//! identifiers, digits), each as it is in the file.
//!
//! Oracle rule: without transformers + gguf (`ATTNLAB_PYTHON`, else `python3`) or without the
//! model file (`scripts/fetch-smollm2`) the test prints `SKIPPED (no oracle)` locally and fails
//! under CI.

use std::process::{Command, Stdio};

use attnlab_core::limits::Limits;
use attnlab_core::model::gguf::GgufFile;
use attnlab_core::model::tokenizer::ModelTokenizer;

mod common;
use common::{python, python_with, root, smollm2};

/// Every 7th line, and every 23rd window of 4 lines, of each file (as written, tabs, runs of
/// spaces and newlines kept).
fn corpus() -> Vec<String> {
    let files = [
        "spec/000_b47e332b38634fe6.txt",
        "spec/002_8e0e3e3e16397ab2.txt",
        "scripts/gen_hf_rope_vectors.py",
        "crates/attnlab-py/python/attnlab/__init__.py",
        "crates/attnlab-core/src/phase.rs",
        "crates/attnlab-core/src/position/mod.rs",
    ];
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(root().join(f)).unwrap();
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        out.extend(lines.iter().step_by(7).map(|l| (*l).to_string()));
        out.extend(lines.windows(4).step_by(23).map(|w| w.concat()));
    }
    out.retain(|s| !s.is_empty());
    out
}

#[test]
fn gguf_tokenizer_gives_transformers_ids_on_text_we_did_not_write() {
    let Some(path) = smollm2() else { return };
    if python_with("transformers + gguf", "import transformers, gguf").is_none() {
        return;
    }
    let texts = corpus();
    let mut child = Command::new(python())
        .arg(root().join("scripts/gguf_oracle.py"))
        .arg("tokenize")
        .arg(path.parent().unwrap())
        .arg(path.file_name().unwrap())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    serde_json::to_writer(child.stdin.take().unwrap(), &texts).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the oracle failed");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let theirs = j["ids"].as_array().unwrap();
    let f = GgufFile::open(&path, &Limits::default()).unwrap();
    let tok = ModelTokenizer::from_gguf(&f).unwrap();
    let mut tokens = 0;
    for (t, ids) in texts.iter().zip(theirs) {
        let ours: Vec<u64> = tok
            .encode(t, &Limits::default())
            .unwrap()
            .iter()
            .map(|x| u64::from(x.id))
            .collect();
        let ids: Vec<u64> = ids
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        assert_eq!(ours, ids, "text {t:?}");
        tokens += ids.len();
        // Decoding the ids gives the text back (byte-level BPE is lossless).
        let back = tok
            .decode(&ours.iter().map(|&x| x as u32).collect::<Vec<_>>())
            .unwrap();
        assert_eq!(&back, t);
    }
    // Transformers adds no BOS for this file either (no tokenizer.ggml.add_bos_token).
    let first: Vec<u64> = j["with_special"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    let plain: Vec<u64> = theirs[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(first, plain);
    assert!(
        texts.len() > 100 && tokens > 2000,
        "{} texts, {tokens} tokens",
        texts.len()
    );
    eprintln!("{} texts, {tokens} tokens: every id equal", texts.len());
}
