//! The import rule of docs/ARCHITECTURE.md ("Layers"): sentences are written at the report
//! boundary (`api`, `present`), so no other module of the core names `present::prose`, and no
//! module below `api` names `api`. Files that still break the rule are listed here as known
//! debt (issue 17): a file may leave a list (the test then asks for it to be removed from the
//! list), never join one.

use std::path::{Path, PathBuf};

/// Modules outside the boundary that still call `present::prose` while they compute.
/// (none left: every sentence is written at the report boundary).
const PROSE_DEBT: &[&str] = &[];

/// Modules below `api` that still read `api` types (none left).
const API_DEBT: &[&str] = &[];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the core's src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The files (relative to src/, `/`-separated) outside `exempt` whose code (not comments)
/// contains one of `needles`.
fn naming(needles: &[&str], exempt: &[&str]) -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut hits: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let rel = f
                .strip_prefix(&src)
                .expect("under src/")
                .to_string_lossy()
                .replace('\\', "/");
            if exempt.iter().any(|e| rel.starts_with(e)) {
                return None;
            }
            let text = std::fs::read_to_string(f).expect("a readable source file");
            let code = text.lines().any(|line| {
                let line = line.trim_start();
                !line.starts_with("//") && needles.iter().any(|n| line.contains(n))
            });
            code.then_some(rel)
        })
        .collect();
    hits.sort();
    hits
}

fn compare(found: &[String], debt: &[&str], rule: &str) {
    let new: Vec<&String> = found
        .iter()
        .filter(|f| !debt.contains(&f.as_str()))
        .collect();
    assert!(
        new.is_empty(),
        "{rule}: {new:?} break it (write the sentence at the report boundary from typed data)"
    );
    let fixed: Vec<&&str> = debt
        .iter()
        .filter(|d| !found.iter().any(|f| f == *d))
        .collect();
    assert!(
        fixed.is_empty(),
        "{rule}: {fixed:?} no longer break it; remove them from the debt list"
    );
}

#[test]
fn only_the_report_boundary_writes_sentences() {
    let found = naming(&["present::prose", "prose::"], &["api/", "present/"]);
    compare(
        &found,
        PROSE_DEBT,
        "only api and present name present::prose",
    );
}

#[test]
fn nothing_below_api_reads_api() {
    let found = naming(&["crate::api", "super::api"], &["api/"]);
    compare(&found, API_DEBT, "no module below api names api");
}
