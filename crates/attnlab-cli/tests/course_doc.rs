//! `docs/COURSE.md` is the map of the course onto commands (issue 11): every exercise,
//! checkpoint, practical-session step, claims-table row and reference-table row of both course
//! documents has a row, and every row's command runs with the stated exit code and prints the
//! stated phrase.

mod common;

use std::collections::{BTreeMap, BTreeSet};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{ROOT}/{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// One row of the table: id, command, exit code, phrase.
struct Row {
    id: String,
    command: String,
    exit: i32,
    phrase: String,
}

/// The text between the first pair of backticks of a cell.
fn code(cell: &str) -> Option<String> {
    let a = cell.find('`')?;
    let b = cell[a + 1..].find('`')?;
    Some(cell[a + 1..a + 1 + b].to_string())
}

fn rows() -> Vec<Row> {
    read("docs/COURSE.md")
        .lines()
        .filter(|l| l.starts_with("| `0"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").collect();
            assert!(cells.len() >= 6, "a row has 6 cells: {l}");
            Row {
                id: code(cells[0]).expect("id"),
                command: code(cells[2]).expect("command"),
                exit: cells[3].trim().parse().expect("exit code"),
                phrase: code(cells[4]).expect("phrase"),
            }
        })
        .collect()
}

/// Splits a command line on spaces, keeping double-quoted words together.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The ids the two course texts call for, counted from the texts.
fn expected_ids() -> BTreeSet<String> {
    let s000 = read("spec/000_b47e332b38634fe6.txt");
    let s002 = read("spec/002_8e0e3e3e16397ab2.txt");
    let mut ids = BTreeSet::new();
    // Seed 000: "### Exercise N", the independent challenge, the reference table's rows (a
    // capitalised property name after the rule), the numbered answers.
    let exercises = s000
        .lines()
        .filter(|l| l.starts_with("### Exercise "))
        .count();
    assert_eq!(exercises, 3);
    ids.extend((1..=exercises).map(|i| format!("000-exercise-{i}")));
    assert!(s000.contains("## Independent challenge"));
    ids.insert("000-challenge".into());
    let reference = s000
        .lines()
        .skip_while(|l| !l.starts_with("Property "))
        .skip(2)
        .take_while(|l| !l.starts_with("```"))
        .filter(|l| l.chars().next().is_some_and(char::is_uppercase))
        .count();
    assert_eq!(reference, 3);
    ids.extend((1..=reference).map(|i| format!("000-reference-{i}")));
    let answers = s000
        .lines()
        .skip_while(|l| *l != "Answers")
        .filter(|l| {
            l.split_once(". ")
                .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
        })
        .count();
    assert_eq!(answers, 5);
    ids.extend((1..=answers).map(|i| format!("000-answer-{i}")));
    // Seed 002: the checkpoints, the key-claims table, the practical session's lists.
    let checkpoints = s002
        .lines()
        .skip_while(|l| *l != "Checkpoints with answers")
        .take_while(|l| *l != "---")
        .filter(|l| {
            l.split_once(". ")
                .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
        })
        .count();
    assert_eq!(checkpoints, 3);
    ids.extend((1..=checkpoints).map(|i| format!("002-checkpoint-{i}")));
    let claims = s002
        .lines()
        .skip_while(|l| !l.starts_with("Claim\tStatus"))
        .skip(1)
        .take_while(|l| l.contains('\t'))
        .count();
    assert_eq!(claims, 7);
    ids.extend((1..=claims).map(|i| format!("002-claim-{i}")));
    let practical: String = s002
        .lines()
        .skip_while(|l| *l != "The practical session")
        .skip(1)
        .take_while(|l| *l != "---")
        .collect::<Vec<_>>()
        .join(" ");
    let list = |label: &str, next: &str, sep: char| -> usize {
        let a = practical.find(label).unwrap_or_else(|| panic!("{label}")) + label.len();
        let b = practical[a..].find(next).map_or(practical.len(), |i| a + i);
        practical[a..b]
            .split('—')
            .next()
            .unwrap()
            .split(sep)
            .filter(|s| !s.trim().trim_start_matches("and ").trim().is_empty())
            .count()
    };
    for (label, next, sep, key) in [
        ("Varied:", "Held fixed:", ';', "varied"),
        ("Held fixed:", "Measured:", ',', "fixed"),
        ("Measured:", "Product:", ';', "measured"),
        ("Product:", "Predict each", ';', "product"),
    ] {
        let n = list(label, next, sep);
        assert!(n >= 2, "{label} lists {n} items");
        ids.extend((1..=n).map(|i| format!("002-practical-{key}-{i}")));
    }
    assert!(practical.contains("Predict each result before running the block"));
    ids.insert("002-practical-predict-first".into());
    ids
}

#[test]
fn every_course_item_has_a_row() {
    let listed: BTreeSet<String> = rows().into_iter().map(|r| r.id).collect();
    let expected = expected_ids();
    let missing: Vec<&String> = expected.difference(&listed).collect();
    assert!(
        missing.is_empty(),
        "docs/COURSE.md lacks rows for {missing:?}"
    );
    // 3 + 1 + 3 + 5 items of seed 000; 3 + 7 + (3 + 3 + 2 + 3) + 1 of seed 002.
    assert_eq!(expected.len(), 34, "{expected:?}");
}

#[test]
fn every_listed_command_shows_what_its_row_says() {
    let mut cache: BTreeMap<String, (i32, String)> = BTreeMap::new();
    let rows = rows();
    assert!(rows.len() >= 34);
    for r in &rows {
        let argv = words(&r.command);
        assert_eq!(argv[0], "attnlab", "{}: {}", r.id, r.command);
        // Rows on the real model need it in the cache (scripts/fetch-smollm2): a visible skip
        // without it, a failure under CI.
        if argv.iter().any(|a| a == "smollm2-135m") {
            if let Err(e) = attnlab_core::model::locate::resolve("smollm2-135m") {
                assert!(std::env::var_os("CI").is_none(), "{}: {e}", r.id);
                eprintln!("SKIPPED (no model): {}: {e}", r.id);
                continue;
            }
        }
        let (code, out) = cache
            .entry(r.command.clone())
            .or_insert_with(|| {
                let out = common::attnlab()
                    .current_dir(ROOT)
                    .args(&argv[1..])
                    .output()
                    .unwrap();
                (
                    out.status.code().unwrap_or(-1),
                    String::from_utf8_lossy(&out.stdout).to_string(),
                )
            })
            .clone();
        assert_eq!(code, r.exit, "{}: `{}` exited {code}", r.id, r.command);
        assert!(
            out.contains(&r.phrase),
            "{}: `{}` does not print {:?}:\n{out}",
            r.id,
            r.command,
            r.phrase
        );
    }
}
