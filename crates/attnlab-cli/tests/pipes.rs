//! Inputs from pipes (issue 22, item 2): `--config <(cat config.json)` (bash's process
//! substitution, a `/dev/fd/N` pipe), `--config -` and `--blocks -` (standard input) are read
//! like the file itself, up to the byte cap; a FIFO nobody writes to is refused within a second,
//! a writer that goes silent after [`attnlab_core::files::PIPE_IDLE_TIMEOUT`], each with one
//! `error:` line and exit 2.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use attnlab_core::files::{PIPE_IDLE_TIMEOUT, PIPE_WRITER_WAIT};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_attnlab"))
}

/// Runs `script` under bash with `$0` the binary and `$1`… `args`, `stdin` on standard input.
fn bash(script: &str, args: &[&str], stdin: &[u8]) -> (Output, Duration) {
    let t = Instant::now();
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(script)
        .arg(binary())
        .args(args)
        .env(
            "XDG_STATE_HOME",
            std::env::temp_dir().join("attnlab-pipes-state"),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash");
    {
        let mut w = child.stdin.take().unwrap();
        let _ = w.write_all(stdin);
    }
    let out = child.wait_with_output().unwrap();
    (out, t.elapsed())
}

fn ok(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    comparable(&String::from_utf8_lossy(&out.stdout))
}

/// The report without its `timings` (the seconds differ from run to run) and its `source`
/// (which names the path the input came from: the file, `/dev/fd/63` or standard input).
fn comparable(json: &str) -> String {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.remove("timings");
                m.remove("source");
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v: serde_json::Value = serde_json::from_str(json).expect("JSON on stdout");
    strip(&mut v);
    v.to_string()
}

/// The one error line of a refused run (exit 2).
fn refused(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(out.stdout.is_empty());
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].starts_with("error: ") && !lines[0].contains("panicked"));
    lines[0].to_string()
}

const LLAMA2: &str = r#"{
  "architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 32,
  "max_position_embeddings": 4096, "rope_theta": 10000.0, "rope_scaling": null,
  "torch_dtype": "float16", "vocab_size": 32000, "num_hidden_layers": 32
}"#;

fn fixture(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn blocks_json() -> String {
    let eye: Vec<Vec<f64>> = (0..4)
        .map(|i| (0..4).map(|j| f64::from(u8::from(i == j))).collect())
        .collect();
    serde_json::json!({"Wq": eye, "Wk": eye}).to_string()
}

#[test]
fn a_config_from_process_substitution_or_stdin_reads_like_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), "config.json", LLAMA2);
    let audit = r#""$0" rope audit --json --skip-min-base --context 4096"#;
    let (file, _) = bash(&format!(r#"exec {audit} --config "$1""#), &[&cfg], b"");
    let want = ok(&file);
    let (sub, _) = bash(
        &format!(r#"exec {audit} --config <(cat "$1")"#),
        &[&cfg],
        b"",
    );
    assert!(ok(&sub) == want, "--config <(cat config.json) differs");
    let (stdin, _) = bash(&format!("exec {audit} --config -"), &[], LLAMA2.as_bytes());
    assert!(
        ok(&stdin) == want,
        "--config - (stdin written by the test) differs"
    );
    // A writer that takes its time before the first byte is waited for.
    let (slow, _) = bash(
        &format!(r#"exec {audit} --config <(sleep 1; cat "$1")"#),
        &[&cfg],
        b"",
    );
    assert!(
        ok(&slow) == want,
        "--config <(sleep 1; cat config.json) differs"
    );
    // Standard input redirected from the file itself.
    let (redirect, _) = bash(&format!(r#"exec {audit} --config - < "$1""#), &[&cfg], b"");
    assert!(ok(&redirect) == want, "--config - < config.json differs");
}

#[test]
fn blocks_from_stdin_or_a_pipe_read_like_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let blocks = fixture(dir.path(), "blocks.json", &blocks_json());
    let lab = r#""$0" lab --json"#;
    let (file, _) = bash(&format!(r#"exec {lab} --blocks "$1""#), &[&blocks], b"");
    let want = ok(&file);
    assert!(want.contains(r#""blocks":["Wq","Wk"]"#), "{want}");
    let (stdin, _) = bash(
        &format!("exec {lab} --blocks -"),
        &[],
        blocks_json().as_bytes(),
    );
    assert!(ok(&stdin) == want, "--blocks - differs");
    let (sub, _) = bash(
        &format!(r#"exec {lab} --blocks <(cat "$1")"#),
        &[&blocks],
        b"",
    );
    assert!(ok(&sub) == want, "--blocks <(cat blocks.json) differs");
    // Bytes that are no blocks format are named as such.
    let (bad, _) = bash(&format!("exec {lab} --blocks -"), &[], b"hello");
    let e = refused(&bad);
    assert!(
        e.contains("standard input") && e.contains("JSON, .npz or .safetensors"),
        "{e}"
    );
}

#[test]
fn a_fifo_with_no_writer_is_refused_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("config.json");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let f = fifo.to_str().unwrap();
    for script in [
        r#"exec "$0" rope audit --skip-min-base --config "$1""#,
        r#"exec "$0" lab --blocks "$1""#,
    ] {
        let (out, took) = bash(script, &[f], b"");
        let e = refused(&out);
        assert!(
            e.contains("config.json") && e.contains("FIFO") && e.contains("no program is writing"),
            "{e}"
        );
        // The wait for a writer plus the start of a debug binary on a loaded machine.
        assert!(
            took < PIPE_WRITER_WAIT + Duration::from_millis(1500),
            "{took:?}"
        );
    }
    // Standard input with nothing written to it (its writer closed at once).
    let (out, took) = bash(
        r#"exec "$0" rope audit --skip-min-base --config -"#,
        &[],
        b"",
    );
    let e = refused(&out);
    assert!(
        e.contains("standard input") && e.contains("nothing was written"),
        "{e}"
    );
    assert!(
        took < PIPE_WRITER_WAIT + Duration::from_millis(1500),
        "{took:?}"
    );
}

#[test]
fn a_pipe_over_the_byte_cap_or_a_silent_writer_is_refused() {
    let audit = r#""$0" --max-file-size 1k rope audit --skip-min-base"#;
    let (out, _) = bash(
        &format!("exec {audit} --config <(head -c 5000 /dev/zero)"),
        &[],
        b"",
    );
    let e = refused(&out);
    assert!(
        e.contains("/dev/fd/")
            && e.contains("over the limit of 1 KiB")
            && e.contains("--max-file-size"),
        "{e}"
    );
    let (out, _) = bash(&format!("exec {audit} --config -"), &[], &[b' '; 5000]);
    let e = refused(&out);
    assert!(
        e.contains("standard input") && e.contains("over the limit of 1 KiB"),
        "{e}"
    );
    // A writer that holds the pipe open and sends nothing (its stderr closed, so the test does
    // not wait for it to end).
    let t = Instant::now();
    let (out, _) = bash(
        &format!(
            "exec {audit} --config <(exec sleep {} 2>/dev/null)",
            PIPE_IDLE_TIMEOUT.as_secs() + 5
        ),
        &[],
        b"",
    );
    let took = t.elapsed();
    let e = refused(&out);
    assert!(e.contains("sent nothing for 10 s"), "{e}");
    assert!(
        took >= PIPE_IDLE_TIMEOUT && took < PIPE_IDLE_TIMEOUT + Duration::from_secs(3),
        "{took:?}"
    );
}
