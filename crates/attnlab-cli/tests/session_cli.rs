//! `attnlab session` through the binary: scripted runs (all right → full marks; wrong → every
//! miss explained), resuming from the state file, --reset, bad answers files (exit 2), and an
//! interactive run driven through a pseudo-terminal.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

mod common;

/// The answers the seeds give, one per step, at every step's default settings (see the file).
const RIGHT: &str = include_str!("data/session_right.toml");

const STEPS: usize = 15;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn session(args: &[&str]) -> (i32, String, String) {
    common::run_text(&[&["session"], args].concat())
}

/// The right answers without the given steps, as a TOML document (with `resume = true` when
/// `resume`).
fn right_without(skip: &[&str], resume: bool) -> String {
    let mut t: toml::Table = toml::from_str(RIGHT).unwrap();
    for k in skip {
        t.remove(*k);
    }
    if resume {
        t.insert("resume".into(), toml::Value::Boolean(true));
    }
    toml::to_string(&t).unwrap()
}

fn json(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not one JSON object ({e}): {stdout}"))
}

#[test]
fn all_right_answers_score_full_marks() {
    let dir = tempfile::tempdir().unwrap();
    let answers = write(dir.path(), "right.toml", RIGHT);
    let state = dir.path().join("state.json");
    let (code, out, err) = session(&[
        "--answers",
        answers.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    assert_eq!(v["complete"], true);
    assert_eq!(v["full_marks"], true);
    assert_eq!(v["score"]["correct"], STEPS);
    assert_eq!(v["score"]["total"], STEPS);
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), STEPS);
    for s in steps {
        assert_eq!(s["correct"], true, "{s}");
        for key in ["question", "explanation", "grading"] {
            assert!(!s[key].as_str().unwrap().is_empty(), "{key} in {s}");
        }
        assert!(!s["evidence"].as_array().unwrap().is_empty());
    }
    // The rotary scores are computed: cos(π/2) in f64 is 6.1e-17, not a typed-in 0.
    let scores = &steps.iter().find(|s| s["id"] == "rope_scores").unwrap()["result"];
    assert_eq!(scores["kind"], "numbers");
    let vals: Vec<f64> = scores["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert!(vals[1] != 0.0 && vals[1].abs() < 1e-15, "{vals:?}");
    // Narration went to stderr, so stdout held only the JSON.
    assert!(err.contains("Step 15/15"));

    // The text report: the same run again from a fresh state.
    let (code, out, _) = session(&[
        "--answers",
        answers.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
        "--reset",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains(&format!(
            "Score: {STEPS}/{STEPS} predictions right — full marks."
        )),
        "{out}"
    );
    assert_eq!(out.matches("── Step").count(), STEPS);
}

#[test]
fn wrong_answers_are_each_explained() {
    let dir = tempfile::tempdir().unwrap();
    // Three wrong predictions (the common intuitions), the rest right; JSON this time.
    let mut text: serde_json::Map<String, Value> = serde_json::Map::new();
    let right: toml::Table = toml::from_str(RIGHT).unwrap();
    for (k, v) in right {
        text.insert(k, serde_json::to_value(v).unwrap());
    }
    text.insert("swap_two_tokens".into(), "a".into()); // "rows stay fixed"
    text.insert("rope_repeat_chosen".into(), json!(3)); // 2π/ω = 8/3 rounded
    text.insert("values_rotated".into(), json!(true));
    let answers = write(dir.path(), "wrong.json", &Value::Object(text).to_string());
    let state = dir.path().join("s.json");
    let args = [
        "--answers",
        answers.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ];
    let (code, out, err) = session(&args);
    assert_eq!(code, 0, "a session is a report, not a check: {err}");
    assert!(
        out.contains(&format!("Score: {}/{STEPS} predictions right.", STEPS - 3)),
        "{out}"
    );
    assert_eq!(out.matches("missed: you predicted").count(), 3, "{out}");
    assert!(out.contains("missed: you predicted a, the computation gives b"));
    assert!(out.contains("missed: you predicted 3, the computation gives 8"));
    assert!(out.contains("missed: you predicted yes, the computation gives no"));
    // In JSON, each miss carries its explanation.
    let (_, out, _) = session(&[&args[..], &["--reset", "--json"]].concat());
    let v = json(&out);
    let missed: Vec<&Value> = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["correct"] == false)
        .collect();
    let ids: Vec<&str> = missed.iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        ["swap_two_tokens", "rope_repeat_chosen", "values_rotated"]
    );
    assert!(missed[1]["explanation"]
        .as_str()
        .unwrap()
        .contains("3/8 of a turn"));
    assert_eq!(v["full_marks"], false);
}

#[test]
fn overrides_of_the_varied_quantities_change_the_question_and_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let answers = write(
        dir.path(),
        "o.toml",
        r#"
[rope_repeat_chosen]
answer = 6
reason = "a sixth of a turn"
omega = "pi/3"
[rope_resolve]
answer = "none"
context = 12
[rope_scores]
answer = "1, 0.5, -0.5"
omega = "pi/3"
separations = [0, 1, 2]
[index_signal]
answer = "yes"
scale = 0
"#,
    );
    let state = dir.path().join("s.json");
    let (code, out, err) = session(&[
        "--answers",
        answers.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(
        code, 1,
        "an incomplete answers file is not a graded session: {err}"
    );
    let v = json(&out);
    // Not every step had an answer: the four given are graded, the eleven others named.
    assert_eq!(v["complete"], false);
    assert_eq!(v["paused"], Value::Null);
    assert_eq!(v["score"]["answered"], 4);
    assert_eq!(v["missing"].as_array().unwrap().len(), STEPS - 4);
    assert_eq!(v["missing"][0], "embedding_dim");
    assert_eq!(err.matches("── Step").count(), 4, "{err}");
    // Supplying the rest (from a fresh state) runs everything; the overridden steps were graded
    // at their settings.
    let mut all: toml::Table = toml::from_str(RIGHT).unwrap();
    let extra: toml::Table = toml::from_str(&std::fs::read_to_string(&answers).unwrap()).unwrap();
    all.extend(extra);
    let full = write(dir.path(), "full.toml", &toml::to_string(&all).unwrap());
    let (code, out, err) = session(&[
        "--answers",
        full.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
        "--reset",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    assert_eq!(v["full_marks"], true, "{v}");
    let step = |id: &str| {
        v["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(step("rope_repeat_chosen")["settings"]["omega"], "pi/3");
    assert!(step("rope_repeat_chosen")["question"]
        .as_str()
        .unwrap()
        .contains("pi/3"));
    assert_eq!(step("rope_repeat_chosen")["reason"], "a sixth of a turn");
    assert_eq!(step("rope_resolve")["result"]["kind"], "nothing");
    assert_eq!(step("index_signal")["result"]["value"], true);
}

#[test]
fn progress_resumes_from_the_state_file() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("nested/dir/state.json");
    // First sitting: the first three steps only. They are graded, the other twelve named, and
    // the run is incomplete (exit 1).
    let first = write(
        dir.path(),
        "first.toml",
        "embedding_dim = \"no\"\nshuffle_attention = \"yes\"\nswap_two_tokens = \"c\"\n",
    );
    let (code, out, _) = session(&[
        "--answers",
        first.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(
        out.contains("Graded 3 of 15 steps: 2 predictions right."),
        "{out}"
    );
    assert!(
        out.contains("Not graded — no answer for readouts, "),
        "{out}"
    );
    assert!(out.contains("(12 of 15 steps)"), "{out}");
    assert!(out.contains(&format!("--state {}", state.display())));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(saved["version"], 1);
    assert_eq!(saved["records"].as_array().unwrap().len(), 3);
    // Second sitting: the twelve others, with resume = true; the three are carried over (and
    // the text says so), the earlier miss stays.
    let rest = write(
        dir.path(),
        "rest.toml",
        &right_without(
            &["embedding_dim", "shuffle_attention", "swap_two_tokens"],
            true,
        ),
    );
    let (code, out, _) = session(&[
        "--answers",
        rest.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("Resuming: 3 of 15 steps done"), "{out}");
    assert_eq!(out.matches("── Step").count(), 12);
    assert!(!out.contains("Step 3/15"));
    assert!(out.contains("Score: 14/15 predictions right."), "{out}");
    assert!(
        out.contains("Carried over from the saved progress (graded in an earlier sitting, not by this run): embedding_dim, shuffle_attention and swap_two_tokens."),
        "{out}"
    );
    assert!(out.contains("earlier (saved)"), "{out}");
    // A third run has nothing left to do and reports the same score.
    let (_, out, _) = session(&["--state", state.to_str().unwrap()]);
    assert_eq!(out.matches("── Step").count(), 0);
    assert!(out.contains("Score: 14/15"));
    // Resuming with a file that answers a finished step grades that answer now: the saved
    // record never stands in for an answer the file gives.
    let all = write(dir.path(), "all.toml", &right_without(&[], true));
    let (code, out, _) = session(&[
        "--answers",
        all.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert_eq!(out.matches("── Step").count(), 15);
    assert!(out.contains("Score: 15/15"));
    assert!(!out.contains("Carried over"), "{out}");
    // --reset starts over.
    let right = write(dir.path(), "right.toml", RIGHT);
    let (_, out, _) = session(&[
        "--answers",
        right.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
        "--reset",
    ]);
    assert!(out.contains("Score: 15/15"));
}

/// Issue 11, defect 1: after a complete run with the right answers, a run with wrong answers
/// reports the wrong answers (the earlier 15/15 never stands in for them).
#[test]
fn regression_wrong_answers_after_a_complete_run_are_graded_on_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let right = write(dir.path(), "right.toml", RIGHT);
    let wrong = write(
        dir.path(),
        "wrong.json",
        include_str!("data/session_wrong.json"),
    );
    let run = |answers: &Path, extra: &[&str]| {
        let out = common::attnlab()
            .args(["session", "--answers", answers.to_str().unwrap()])
            .args(extra)
            .env("XDG_STATE_HOME", dir.path())
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, out, _) = run(&right, &[]);
    assert_eq!(code, 0);
    assert!(out.contains("Score: 15/15"), "{out}");
    // The default state file is the interactive mode's: a scripted run neither reads nor
    // writes it.
    assert!(!dir.path().join("attnlab/session.json").exists());
    let (code, out, _) = run(&wrong, &["--json"]);
    assert_eq!(code, 0, "complete (every step graded), even though wrong");
    let v = json(&out);
    assert_eq!(v["full_marks"], false);
    assert!(v["score"]["correct"].as_u64().unwrap() < STEPS as u64);
    assert_eq!(v["graded_now"].as_array().unwrap().len(), STEPS);
    assert_eq!(v["carried_over"], json!([]));
    // With an explicit state file holding the right run, the wrong file is still graded on its
    // own (resume is not asked for): its report is the wrong answers', and the file keeps the
    // newest record of each step.
    let state = dir.path().join("s.json");
    let (code, _, _) = run(&right, &["--state", state.to_str().unwrap()]);
    assert_eq!(code, 0);
    let (code, out, _) = run(&wrong, &["--state", state.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(!out.contains("Score: 15/15"), "{out}");
    assert!(!out.contains("Carried over"), "{out}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    let swap = saved["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "swap_two_tokens")
        .unwrap();
    assert_eq!(
        swap["correct"], false,
        "the newest record of the step is the wrong answer's"
    );
    // resume = true needs an explicit --state.
    let resume = write(dir.path(), "resume.toml", &right_without(&[], true));
    common::bad(
        &["session", "--answers", resume.to_str().unwrap()],
        &["resume = true", "--state FILE"],
    );
}

/// Issue 11, defect 1: an answers file with a gap grades the rest, names the missing step and
/// exits 1 (it used to stop at the gap with exit 0).
#[test]
fn regression_a_missing_step_is_named_and_the_rest_graded() {
    let dir = tempfile::tempdir().unwrap();
    let gap = write(dir.path(), "gap.toml", &right_without(&["readouts"], false));
    let (code, out, _) = session(&["--answers", gap.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(out.matches("── Step").count(), STEPS - 1);
    assert!(
        out.contains("Graded 14 of 15 steps: 14 predictions right."),
        "{out}"
    );
    assert!(
        out.contains("Not graded — no answer for readouts (1 of 15 steps); add it to the answers to grade it."),
        "{out}"
    );
    let (code, v, _) = common::run_json(&["session", "--answers", gap.to_str().unwrap(), "--json"]);
    assert_eq!(code, 1);
    assert_eq!(v["missing"], json!(["readouts"]));
    assert_eq!(v["complete"], false);
}

#[test]
fn the_default_state_file_lives_under_xdg_state_home() {
    // The interactive mode keeps its progress there (piped input answers the first step).
    let dir = tempfile::tempdir().unwrap();
    let out = common::attnlab()
        .args(["session"])
        .write_stdin("no\n\n")
        .env("XDG_STATE_HOME", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(dir.path().join("attnlab/session.json").is_file());
}

#[test]
fn bad_answers_files_exit_2_naming_the_step_and_the_form() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s.json");
    let cases = [
        (
            "a.toml",
            "embedding_dim = \"maybe\"\n",
            vec!["answer to step embedding_dim", "yes or no"],
        ),
        (
            "b.toml",
            "rope_scores = [1, 0, -1]\n",
            vec!["answer to step rope_scores", "5 numbers"],
        ),
        (
            "c.toml",
            "challenge = \"e\"\n",
            vec!["answer to step challenge", "one letter: a, b, c, d"],
        ),
        (
            "d.json",
            r#"{"no_such_step": "yes"}"#,
            vec!["no_such_step", "embedding_dim"],
        ),
        (
            "e.toml",
            "[rope_repeat_chosen]\nanswer = 6\nomega = \"0.5\"\n",
            vec![
                "setting omega of step rope_repeat_chosen",
                "rational multiple of pi",
            ],
        ),
        (
            "f.toml",
            "[shuffle_attention]\nanswer = \"yes\"\nomega = \"pi\"\n",
            vec!["setting for step shuffle_attention", "one of perm"],
        ),
        ("g.toml", "embedding_dim = ", vec!["invalid TOML"]),
        ("h.json", "{", vec!["invalid JSON"]),
    ];
    for (name, text, needles) in cases {
        let p = write(dir.path(), name, text);
        common::bad(
            &[
                "session",
                "--answers",
                p.to_str().unwrap(),
                "--state",
                state.to_str().unwrap(),
            ],
            &needles,
        );
        assert!(!state.exists(), "{name}: nothing ran, no progress written");
    }
    // With --reset too, a bad answers file leaves the saved progress alone.
    let kept = write(
        dir.path(),
        "kept.json",
        include_str!("data/session_state_v1_partial.json"),
    );
    let bad_file = write(dir.path(), "bad.toml", "embedding_dim = \"maybe\"\n");
    let (code, _, _) = session(&[
        "--answers",
        bad_file.to_str().unwrap(),
        "--state",
        kept.to_str().unwrap(),
        "--reset",
    ]);
    assert_eq!(code, 2);
    assert_eq!(
        std::fs::read_to_string(&kept).unwrap(),
        include_str!("data/session_state_v1_partial.json")
    );
    let (code, _, err) = session(&[
        "--answers",
        dir.path().join("missing.toml").to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("missing.toml"));
    // A corrupt state file is a clear error, pointing at --reset.
    std::fs::write(&state, "not json").unwrap();
    let (code, _, err) = session(&["--state", state.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("--reset"), "{err}");
}

/// Drives the binary through a pseudo-terminal with python3's `pty` module: answers a prompt
/// wrongly formed ("maybe" → re-asked with the accepted form), asks for the hint, answers two
/// steps, sets a permutation at a settings prompt, gives one reason and skips another, then sends
/// Ctrl-D (EOF) at the next prompt (a settings prompt).
const PTY_DRIVER: &str = r#"
import os, pty, select, subprocess, sys, time
binary, state = sys.argv[1], sys.argv[2]
master, slave = pty.openpty()
# A fresh pty reports no size; without COLUMNS the prose is not wrapped (the needles below
# are unbroken lines).
env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
p = subprocess.Popen([binary, "session", "--state", state], stdin=slave, stdout=slave,
                     stderr=slave, close_fds=True, env=env)
os.close(slave)
seen = b""
def expect(needle, timeout=60):
    global seen
    end = time.time() + timeout
    while needle.encode() not in seen:
        r, _, _ = select.select([master], [], [], max(0.0, end - time.time()))
        chunk = b""
        if r:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                pass
        if not chunk:
            sys.stdout.write(seen.decode(errors="replace"))
            sys.exit("did not see %r" % needle)
        seen += chunk
    i = seen.index(needle.encode()) + len(needle)
    sys.stdout.write(seen[:i].decode(errors="replace"))
    seen = seen[i:]
expect("your prediction (? for a hint): ")
os.write(master, b"maybe\n")
expect("accepted: yes or no")
expect("your prediction (? for a hint): ")
os.write(master, b"?\n")
expect("hint: ")
expect("your prediction (? for a hint): ")
os.write(master, b"no\n")
expect("(optional, Enter skips): ")
os.write(master, b"a label selects a row\n")
expect("(Enter keeps it): ")
os.write(master, b"2,1,0,3\n")
expect("Q (your settings): ")
expect("your prediction (? for a hint): ")
os.write(master, b"yes\n")
expect("(optional, Enter skips): ")
os.write(master, b"\n")
expect("(Enter keeps it): ")
os.write(master, b"\x04")
expect("Resume with:")
rest = b""
while True:
    r, _, _ = select.select([master], [], [], 5)
    if not r:
        break
    try:
        c = os.read(master, 4096)
    except OSError:
        break
    if not c:
        break
    rest += c
sys.stdout.write((seen + rest).decode(errors="replace"))
print("\nEXIT %d" % p.wait(timeout=60))
"#;

#[test]
fn interactive_session_through_a_pty_exits_cleanly_on_eof_keeping_progress() {
    if !common::oracle("pty, select") {
        return;
    }
    let python = common::python();
    let dir = tempfile::tempdir().unwrap();
    let driver = write(dir.path(), "drive.py", PTY_DRIVER);
    let state = dir.path().join("state.json");
    let bin = env!("CARGO_BIN_EXE_attnlab");
    let out = Command::new(&python)
        .arg(&driver)
        .arg(bin)
        .arg(&state)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "driver failed: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("EXIT 0"), "{text}");
    assert!(text.contains("not understood: \"maybe\""), "{text}");
    assert!(
        text.contains("after 2 of 15 steps; score so far 2/2"),
        "{text}"
    );
    assert!(
        text.contains("Resume with: attnlab session --state"),
        "{text}"
    );
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    let ids: Vec<&str> = saved["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["embedding_dim", "shuffle_attention"]);
    // The setting typed at the prompt was used and recorded, and so were the reason (the skipped
    // one not) and the hint.
    assert_eq!(saved["records"][1]["settings"]["perm"], "2,1,0,3");
    assert!(saved["records"][1]["question"]
        .as_str()
        .unwrap()
        .contains("P = [2,1,0,3]"));
    assert_eq!(saved["records"][0]["reason"], "a label selects a row");
    assert!(saved["records"][1].get("reason").is_none());
    assert_eq!(saved["records"][0]["hint_used"], true);
    assert!(saved["records"][1].get("hint_used").is_none());
    assert!(
        text.contains("hint: Multiplying a one-hot row vector"),
        "{text}"
    );
    // Resuming (scripted, resume = true) picks up at step 3.
    let answers = write(
        dir.path(),
        "right.toml",
        &right_without(&["embedding_dim", "shuffle_attention"], true),
    );
    let (code, out, _) = session(&[
        "--answers",
        answers.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert_eq!(out.matches("── Step").count(), 13);
    assert!(out.contains("Score: 15/15"));
}

#[test]
fn list_shows_every_step_with_its_form_and_settings() {
    let (code, out, _) = session(&["--list", "--json"]);
    assert_eq!(code, 0);
    let v = json(&out);
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), STEPS);
    // The ids are the keys of the right-answers sheet, in session order.
    let right: toml::Table = toml::from_str(RIGHT).unwrap();
    for s in steps {
        assert!(right.contains_key(s["id"].as_str().unwrap()), "{s}");
    }
    let scores = steps.iter().find(|s| s["id"] == "rope_scores").unwrap();
    assert_eq!(scores["settings"][0]["name"], "omega");
    assert_eq!(scores["settings"][0]["default"], "pi/2");
    assert_eq!(scores["answer_kind"]["count"], 5);
    let (code, out, _) = session(&["--list"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("rope_resolve") && out.contains("omegas (pi/2,pi/3)"),
        "{out}"
    );
}

#[test]
fn piped_input_with_json_keeps_stdout_for_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s.json");
    let out = common::attnlab()
        .args(["session", "--json", "--state", state.to_str().unwrap()])
        .write_stdin("no\n\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v = json(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(v["complete"], false);
    assert_eq!(v["paused"], json!({"reason": "input_ended"}));
    assert_eq!(v["score"]["answered"], 1);
    assert_eq!(v["graded_now"], json!(["embedding_dim"]));
    // How to resume is narration (the command line is the CLI's), on stderr with the prompts.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("your prediction"), "{err}");
    assert!(
        err.contains(&format!(
            "Resume with: attnlab session --state {}",
            state.display()
        )),
        "{err}"
    );
}

/// A state file written by the version before the evidence was typed (its evidence is text):
/// it resumes, keeps its records as they were, and the run adds typed records beside them.
#[test]
fn state_files_of_the_previous_version_keep_working() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let old = include_str!("data/session_state_v1_partial.json");
    std::fs::write(&state, old).unwrap();
    let answers = write(
        dir.path(),
        "right.toml",
        &right_without(
            &["embedding_dim", "shuffle_attention", "swap_two_tokens"],
            true,
        ),
    );
    let (code, out, err) = session(&[
        "--answers",
        answers.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    assert!(err.contains("Resuming: 3 of 15 steps done."), "{err}");
    assert_eq!(v["graded_now"].as_array().unwrap().len(), STEPS - 3);
    assert_eq!(v["score"]["correct"], STEPS - 1);
    // The old records are reported as they were saved: evidence as label/value text.
    let old: Value = serde_json::from_str(old).unwrap();
    for (i, r) in old["records"].as_array().unwrap().iter().enumerate() {
        assert_eq!(&v["steps"][i], r);
    }
    assert!(v["steps"][0]["evidence"][0]["value"].is_string());
    // The new ones are typed.
    let scores = &v["steps"][9]["evidence"][1];
    assert_eq!(scores["kind"], "angle");
    assert!(scores["score"].as_f64().unwrap().abs() < 1e-15);
    // The saved file loads again and keeps both kinds of record.
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(saved["version"], 1);
    assert_eq!(saved["records"][0], old["records"][0]);
    let (code, out, _) = session(&["--state", state.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("Score: 14/15"), "{out}");
    assert!(out.contains("swap_two_tokens     ┆ c"), "{out}");
    // A complete old session shows its summary.
    std::fs::write(&state, include_str!("data/session_state_v1_complete.json")).unwrap();
    let (code, out, _) = session(&["--state", state.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("Score: 4/15 predictions right."), "{out}");
}

/// Issue 11, item 6: `session --blocks FILE` holds the provided blocks fixed in the steps that
/// run a layer, and the output says which blocks were used.
#[test]
fn the_session_holds_the_provided_blocks_fixed_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let blocks = write(
        dir.path(),
        "blocks.json",
        r#"{"Wq": [[1, 0], [0, 1]], "Wv": [[2, 0], [0, 1]]}"#,
    );
    let answers = write(dir.path(), "right.toml", RIGHT);
    let args = [
        "--answers",
        answers.to_str().unwrap(),
        "--blocks",
        blocks.to_str().unwrap(),
    ];
    let (code, out, err) = session(&args);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Held fixed: the provided blocks Wq and Wv (in every step that runs a layer"),
        "{out}"
    );
    assert!(out.contains("· held fixed: the provided Wq, Wv"), "{out}");
    let (code, v, _) = common::run_json(&[&["session"][..], &args[..], &["--json"][..]].concat());
    assert_eq!(code, 0);
    assert_eq!(v["blocks"], json!(["Wq", "Wv"]));
    let rec = |id: &str| {
        v["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(rec("swap_two_tokens")["blocks"], json!(["Wq", "Wv"]));
    assert!(rec("rope_repeat_half_pi").get("blocks").is_none());
    // The drawn input takes the projections' width (2 here, like the course table). A 3 × 3 Wq
    // without an E of width 3 does not fit the steps that embed text: refused before anything
    // runs.
    let bad = write(
        dir.path(),
        "bad.json",
        r#"{"Wq": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}"#,
    );
    common::bad(
        &[
            "session",
            "--answers",
            answers.to_str().unwrap(),
            "--blocks",
            bad.to_str().unwrap(),
        ],
        &["every step of the session"],
    );
}

/// Issue 13: concurrent scripted runs on one state file all succeed (each saves through its
/// own temporary file under the writer lock) and the file ends whole, with every record.
#[test]
fn concurrent_runs_on_one_state_file_all_succeed_and_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let answers = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/session_right.toml");
    let children: Vec<_> = (0..6)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_attnlab"))
                .args(["session", "--json", "--answers", answers, "--state"])
                .arg(&state)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(saved["records"].as_array().unwrap().len(), 15);
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

/// Issue 13: a state file reached through a symbolic link is updated in place of its target;
/// the link stays a link and the target's records are kept.
#[cfg(unix)]
#[test]
fn a_symlinked_state_file_keeps_its_link_and_its_records() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/session_state_v1_partial.json"
        ),
        &real,
    )
    .unwrap();
    let before: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let answers = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/session_right.toml");
    let (code, _, err) = session(&["--answers", answers, "--state", link.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    let ids = |v: &Value| -> Vec<String> {
        v["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect()
    };
    for id in ids(&before) {
        assert!(ids(&after).contains(&id), "record {id} lost");
    }
    assert_eq!(ids(&after).len(), 15);
}

/// Issue 13: an interactive answer line has a length limit: a line without end is one error
/// line (exit 2), and the progress file is not touched.
#[test]
fn an_endless_input_line_is_refused() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_attnlab"))
        .args(["session", "--state"])
        .arg(&state)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(&vec![b'y'; 200_000]);
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("4096 bytes"), "{err}");
    assert!(!state.exists());
}

/// Runs `attnlab ARGS…` on a pseudo-terminal (python3's `pty`) of `COLS` columns (0: a pty
/// that reports no size, with `COLUMNS` from the environment) and prints what it wrote.
const PTY_WIDTH_DRIVER: &str = r#"
import fcntl, os, pty, struct, subprocess, sys, termios
cols, args = int(sys.argv[1]), sys.argv[2:]
master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50 if cols else 0, cols, 0, 0))
p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE,
                     close_fds=True)
os.close(slave)
out = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
code = p.wait(timeout=60)
sys.stdout.write(out.decode().replace("\r\n", "\n"))
sys.stderr.write(p.stderr.read().decode())
sys.exit(code)
"#;

/// Issue 23: in a terminal the session's prose wraps at word boundaries to the terminal's width
/// (at 140 columns "dimensions" was cut into "dime" / "nsions" by the terminal), and it is not
/// wrapped at all when stdout is a pipe. Wrapping changes only whitespace: the words of the
/// terminal's text, in order, are the piped text's, and every prose line fits the width.
#[test]
fn session_prose_wraps_at_word_boundaries_to_the_terminal_width() {
    if !common::oracle("pty, fcntl, termios") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let driver = write(dir.path(), "width.py", PTY_WIDTH_DRIVER);
    let answers = write(dir.path(), "right.toml", RIGHT);
    let bin = env!("CARGO_BIN_EXE_attnlab");
    let args = ["session", "--answers", answers.to_str().unwrap()];
    let (code, piped, _) = session(&args[1..]);
    assert_eq!(code, 0);
    let longest = piped.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(
        longest > 140 && piped.contains(" dimensions"),
        "the piped text has no line to wrap (longest {longest})"
    );
    let on_pty = |cols: usize, columns_env: Option<&str>| {
        let mut c = Command::new(common::python());
        c.arg(&driver).arg(cols.to_string()).arg(bin).args(args);
        c.env_remove("COLUMNS");
        if let Some(v) = columns_env {
            c.env("COLUMNS", v);
        }
        let out = c.output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            out.status.success(),
            "{}\n{text}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    let is_table = |l: &str| {
        l.trim_start()
            .starts_with(['┌', '│', '╞', '├', '└', '┆', '═', '─'])
    };
    // The terminal's own width, and COLUMNS for a terminal that reports none.
    for (cols, env, width) in [(140, None, 140), (64, None, 64), (0, Some("100"), 100)] {
        let shown = on_pty(cols, env);
        assert_eq!(
            words(&shown),
            words(&piped),
            "{width} columns: wrapping changed or split a word"
        );
        for l in shown.lines().filter(|l| !is_table(l)) {
            assert!(
                l.chars().count() <= width,
                "{width} columns: a prose line of {} columns:\n{l}",
                l.chars().count()
            );
        }
        assert!(
            shown.lines().count() > piped.lines().count(),
            "{width} columns: nothing was wrapped"
        );
    }
    // A terminal that reports no size and no COLUMNS: left as it is.
    assert_eq!(on_pty(0, None), piped);
}
