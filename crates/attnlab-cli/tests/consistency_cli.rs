//! One set of conventions across commands (issue 11, item 12): `--plot DIR` writes every chart
//! of a command (`lab --plots` and `score/identity --plot FILE.svg` keep working), counts such
//! as `--context` take `128k`, `1M`, `2^17`, `--dtype` takes every alias, `rope audit
//! --list-presets`, and every `--help` lists the accepted values of its choices.

mod common;

use std::path::Path;

fn svgs(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn plot_dir_writes_every_chart_of_each_command() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &[&str]); 4] = [
        (
            &["lab"],
            &[
                "attention_weights.svg",
                "permuted_difference.svg",
                "resolution_margin.svg",
                "scores_vs_separation.svg",
                "symmetry_breakers.svg",
            ],
        ),
        (&["rope", "score", "--omega", "pi/2,pi/3"], &["score.svg"]),
        (
            &["rope", "identity", "--trials", "5", "--max-shift", "100"],
            &["invariance.svg"],
        ),
        (
            &["rope", "audit", "--preset", "llama-2-7b", "--skip-min-base"],
            &["decay.svg", "precision.svg", "wavelengths.svg"],
        ),
    ];
    for (i, (args, want)) in cases.iter().enumerate() {
        let out = dir.path().join(i.to_string());
        let plot = out.to_str().unwrap();
        let text = common::run_ok(&[args, &["--plot", plot][..]].concat(), 0);
        assert_eq!(svgs(&out), *want, "{args:?}");
        for name in *want {
            assert!(
                text.contains(&format!("Plot written to {plot}/{name}")),
                "{text}"
            );
        }
    }
    // The old spellings keep working: lab --plots DIR; a FILE.svg for score, with a note.
    let old = dir.path().join("old");
    common::run_ok(&["lab", "--plots", old.to_str().unwrap()], 0);
    assert_eq!(svgs(&old).len(), 5);
    let file = dir.path().join("score-old.svg");
    let out = common::attnlab()
        .args(["rope", "score", "--omega", "pi/2", "--plot"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(file.is_file());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("note: --plot takes a directory now"),
        "{err}"
    );
}

#[test]
fn counts_take_every_spelling_and_dtypes_every_alias() {
    for (context, value) in [
        ("128k", 131072),
        ("2^17", 131072),
        ("131072", 131072),
        ("1.31072e5", 131072),
        ("1M", 1 << 20),
    ] {
        let v = common::json(
            &[
                "rope",
                "resolve",
                "--omega",
                "pi/2,pi/3",
                "--context",
                context,
                "--json",
            ],
            1,
        );
        assert_eq!(v["context"], value, "{context}");
    }
    let v = common::json(&["lab", "--context", "2^4", "--json"], 0);
    assert_eq!(v["d_resolution"]["result"]["context"], 16);
    for (alias, canonical) in [
        ("fp16", "f16"),
        ("float16", "f16"),
        ("half", "f16"),
        ("bfloat16", "bf16"),
        ("BF16", "bf16"),
        ("float32", "f32"),
    ] {
        let v = common::json(
            &[
                "rope",
                "audit",
                "--preset",
                "llama-2-7b",
                "--skip-min-base",
                "--context",
                "4k",
                "--dtype",
                alias,
                "--json",
            ],
            0,
        );
        assert_eq!(v["dtype"], canonical, "{alias}");
    }
    let v = common::json(&["attend", "--dtype", "fp32", "--json"], 0);
    assert_eq!(v["dtype"], "f32");
}

#[test]
fn rope_audit_lists_its_presets() {
    let text = common::run_ok(&["rope", "audit", "--list-presets"], 0);
    let v = common::json(&["rope", "audit", "--list-presets", "--json"], 0);
    let list = v.as_array().unwrap();
    assert!(list.len() >= 8);
    // The help of every source option names every preset (its list is typed in the doc
    // comment; this keeps it complete).
    let help = common::run_ok(&["rope", "audit", "--help"], 0).replace('\n', " ");
    for p in list {
        assert!(
            help.contains(p["name"].as_str().unwrap()),
            "{p} not in --help"
        );
    }
    for p in list {
        let name = p["name"].as_str().unwrap();
        assert!(text.contains(name), "{text}");
        // Every listed preset runs.
        common::run_ok(
            &[
                "rope",
                "audit",
                "--preset",
                name,
                "--skip-min-base",
                "--context",
                "1k",
            ],
            0,
        );
    }
}

/// Every option whose value is a choice lists the accepted values (and a default where it has
/// one) in `--help`.
#[test]
fn every_help_lists_the_accepted_values_and_defaults() {
    let cases: [(&[&str], &[&str]); 4] = [
        (&["attend"], &["--rng", "--mask", "--pos", "--dtype"]),
        (&["equivariance"], &["--layer", "--rng", "--dtype"]),
        (&["rope", "audit"], &["--dtype"]),
        (&["lab"], &[]),
    ];
    for (cmd, choices) in cases {
        let help = common::run_ok(&[cmd, &["--help"][..]].concat(), 0);
        for opt in choices {
            let at = help
                .find(&format!("      {opt} <"))
                .unwrap_or_else(|| panic!("{cmd:?}: no {opt} in\n{help}"));
            let next = help[at + 8..]
                .find("\n      -")
                .map_or(help.len(), |i| at + 8 + i);
            let block = &help[at..next];
            assert!(
                block.contains("ossible values"),
                "{cmd:?} {opt}: no accepted values listed:\n{block}"
            );
        }
        common::assert_no_internals(&format!("{cmd:?} --help"), &help);
    }
    let help = common::run_ok(&["attend", "--help"], 0);
    assert!(help.contains("also float16, half, fp16"), "{help}");
    assert!(help.contains("[default: numpy]") && help.contains("[default: f64]"));
}

/// The README's images are the lab's charts as the current code draws them (regenerate with
/// `scripts/regen-readme-images.sh`), and every image the README shows exists.
#[test]
fn readme_images_are_what_the_code_draws() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let dir = tempfile::tempdir().unwrap();
    common::run_ok(&["lab", "--plot", dir.path().to_str().unwrap()], 0);
    for name in svgs(dir.path()) {
        let fresh = std::fs::read_to_string(dir.path().join(&name)).unwrap();
        let committed =
            std::fs::read_to_string(format!("{root}/docs/img/{name}")).unwrap_or_else(|e| {
                panic!("docs/img/{name}: {e} (run scripts/regen-readme-images.sh)")
            });
        assert!(
            fresh == committed,
            "docs/img/{name} is not what the code draws: run scripts/regen-readme-images.sh"
        );
    }
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    for part in readme.split("](docs/img/").skip(1) {
        let file = part.split(')').next().unwrap();
        assert!(
            Path::new(&format!("{root}/docs/img/{file}")).is_file(),
            "README shows docs/img/{file}, which does not exist"
        );
    }
}

/// Every field the audit's worked examples show is what the command prints now: each
/// `$ attnlab rope audit …` block of "Worked examples, one per model family" in
/// `docs/AUDIT.md` (moved there from the README, issue 23) is run with `--json`, and every key
/// of the JSON block after it (selected fields; in `rope_sets` selected keys of each set) must
/// equal the output's value exactly — the numbers are the shortest round-trip of the f64 the
/// audit computes, so equality is the right test.
#[test]
fn the_audit_doc_examples_are_what_the_audit_prints() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let doc = std::fs::read_to_string(format!("{root}/docs/AUDIT.md")).unwrap();
    let section = doc
        .split_once("\n## Worked examples, one per model family\n")
        .expect("docs/AUDIT.md's worked examples section")
        .1;
    let section = section.split("\n## ").next().unwrap();
    let mut examples = Vec::new();
    let mut rest = section;
    while let Some(i) = rest.find("$ attnlab ") {
        let line = rest[i + 2..].lines().next().unwrap().to_string();
        let after = &rest[i..];
        let j = after
            .find("```json\n")
            .expect("a JSON block after the command")
            + 8;
        let k = after[j..].find("```").unwrap() + j;
        let shown: serde_json::Value = serde_json::from_str(&after[j..k])
            .unwrap_or_else(|e| panic!("docs/AUDIT.md JSON after `{line}` does not parse: {e}"));
        examples.push((line, shown));
        rest = &after[k..];
    }
    assert!(examples.len() >= 10, "found {} examples", examples.len());
    // The examples are independent: run them side by side (the min-base searches dominate).
    std::thread::scope(|s| {
        let runs: Vec<_> = examples
            .iter()
            .map(|(line, shown)| {
                s.spawn(move || {
                    let args: Vec<&str> = line.split_whitespace().skip(1).collect();
                    let out = common::attnlab()
                        .current_dir(root)
                        .args(&args)
                        .arg("--json")
                        .output()
                        .unwrap();
                    assert_eq!(out.status.code(), Some(0), "`{line}` failed");
                    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                    contains(&got, shown, line, "");
                })
            })
            .collect();
        for r in runs {
            r.join().unwrap();
        }
    });
}

/// `shown` (objects: a subset of the keys; arrays: the same length) equals `got`.
fn contains(got: &serde_json::Value, shown: &serde_json::Value, line: &str, path: &str) {
    use serde_json::Value;
    match (got, shown) {
        (Value::Object(g), Value::Object(s)) => {
            for (key, want) in s {
                let have = g.get(key).unwrap_or_else(|| {
                    panic!(
                        "`{line}`: docs/AUDIT.md shows {path}.{key}, the audit has no such field"
                    )
                });
                contains(have, want, line, &format!("{path}.{key}"));
            }
        }
        (Value::Array(g), Value::Array(s)) => {
            assert_eq!(
                g.len(),
                s.len(),
                "`{line}`: {path} has {} entries, docs/AUDIT.md shows {}",
                g.len(),
                s.len()
            );
            for (n, (h, w)) in g.iter().zip(s).enumerate() {
                contains(h, w, line, &format!("{path}[{n}]"));
            }
        }
        _ => assert_eq!(
            got, shown,
            "`{line}`: {path} is {got}, docs/AUDIT.md shows {shown}"
        ),
    }
}

/// The subcommand names listed under `Commands:` in `help` (without clap's `help`).
fn subcommands(help: &str) -> Vec<String> {
    let Some((_, rest)) = help.split_once("\nCommands:\n") else {
        return Vec::new();
    };
    rest.lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// Every command reachable from `attnlab --help` (leaves of the command tree, as argument lists).
fn every_command() -> Vec<Vec<String>> {
    let mut leaves = Vec::new();
    let mut todo: Vec<Vec<String>> = subcommands(&common::run_ok(&["--help"], 0))
        .into_iter()
        .map(|c| vec![c])
        .collect();
    while let Some(cmd) = todo.pop() {
        let args: Vec<&str> = cmd.iter().map(String::as_str).chain(["--help"]).collect();
        let subs = subcommands(&common::run_ok(&args, 0));
        if subs.is_empty() {
            leaves.push(cmd);
        } else {
            todo.extend(subs.into_iter().map(|s| [cmd.clone(), vec![s]].concat()));
        }
    }
    leaves
}

/// The global options (threads and the limits) are listed under their own heading, after the
/// command's own options, in every command's `--help` (issue 23: they were interleaved with the
/// command's options).
#[test]
fn every_help_lists_the_global_limits_under_their_own_heading_last() {
    const HEADING: &str = "\nLimits and threads (global: every command takes them):\n";
    const GLOBAL: [&str; 4] = ["--threads", "--max-memory", "--max-work", "--max-file-size"];
    let commands = every_command();
    assert!(
        commands.len() >= 13,
        "found only {commands:?} under attnlab --help"
    );
    for cmd in commands {
        for flag in ["--help", "-h"] {
            let args: Vec<&str> = cmd.iter().map(String::as_str).chain([flag]).collect();
            let help = common::run_ok(&args, 0);
            let (own, limits) = help
                .split_once(HEADING)
                .unwrap_or_else(|| panic!("{args:?}: no limits heading in\n{help}"));
            assert!(own.contains("\nOptions:\n"), "{args:?}:\n{help}");
            for g in GLOBAL {
                assert!(
                    !own.contains(&format!(" {g} ")),
                    "{args:?}: {g} listed among the command's own options:\n{help}"
                );
                assert!(
                    limits.contains(&format!(" {g} <")),
                    "{args:?}: {g} not under the limits heading:\n{help}"
                );
            }
            // The heading is the last section: nothing but the global options follows it.
            let listed = limits
                .lines()
                .filter(|l| l.trim_start().starts_with("--"))
                .count();
            assert_eq!(listed, GLOBAL.len(), "{args:?}:\n{limits}");
        }
    }
}

/// The two help screens issue 23 quoted, as snapshots: the command's options first, then the
/// limits under their heading.
#[test]
fn equivariance_and_rope_audit_help_snapshots() {
    insta::assert_snapshot!(
        "equivariance_help",
        common::run_ok(&["equivariance", "--help"], 0)
    );
    insta::assert_snapshot!(
        "rope_audit_help",
        common::run_ok(&["rope", "audit", "--help"], 0)
    );
}

/// Issue 23: the README is read in two minutes. Under 200 lines; its first 60 say what attnlab
/// is and hold the two set-up commands (the test command exactly as `.ci/run` runs it), the
/// install-to-PATH line and the four doors, each with an example.
#[test]
fn the_readme_first_screen_holds_the_commands_and_the_doors() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let lines: Vec<&str> = readme.lines().collect();
    assert!(lines.len() < 200, "README has {} lines", lines.len());
    let first = lines[..60.min(lines.len())].join("\n");
    let ci = std::fs::read_to_string(format!("{root}/.ci/run")).unwrap();
    let test_command = ci
        .lines()
        .find(|l| l.starts_with("cargo test"))
        .expect(".ci/run's test command");
    for needle in [
        "cargo run --release -- lab",
        test_command,
        "cargo install --path crates/attnlab-cli",
        "~/.cargo/bin",
        "**The command line.**",
        "$ attnlab equivariance",
        "**The web lab.**",
        "attnlab serve --open",
        "**Python.**",
        "```python",
        "**A real model.**",
        "$ attnlab rope audit --config",
        "docs/AUDIT.md",
    ] {
        assert!(
            first.contains(needle),
            "the README's first 60 lines lack {needle:?}"
        );
    }
}
