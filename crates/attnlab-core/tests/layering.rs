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

/// docs/ARCHITECTURE.md's layer diagram, bottom to top: a module imports only modules of its
/// own layer or below.
const LAYERS: &[&[&str]] = &[
    &["number", "text", "report", "float"],
    &[
        "numeric", "error", "choice", "limits", "files", "phase", "rng", "chart",
    ],
    &[
        "attention",
        "blocks",
        "recurrent",
        "tokenizer",
        "position",
        "embedding",
        "matmul",
    ],
    &["layer", "symmetry", "spectrum", "config"],
    &["experiment", "engines", "model"],
    &["claims", "lab", "predict", "session"],
    &["present"],
    &["api"],
];

/// The crate's root re-exports, by the module that defines them.
const ROOT_ITEMS: &[(&str, &str)] = &[
    ("Real", "numeric"),
    ("Dtype", "numeric"),
    ("Error", "error"),
    ("ErrorKind", "error"),
    ("Result", "error"),
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The top-level modules a file's code (comments and its `mod tests` left out) names through
/// `crate::…` paths, `use crate::{a, b::c}` groups included.
fn imports(code: &str) -> std::collections::BTreeSet<String> {
    let code = code.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
    let mut out = std::collections::BTreeSet::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                group[..end].split(',').collect()
            } else {
                vec![rest]
            };
            for n in names {
                let n = n.trim();
                let end = n
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(n.len());
                let name = &n[..end];
                let module = ROOT_ITEMS
                    .iter()
                    .find(|(item, _)| *item == name)
                    .map_or(name, |(_, m)| m);
                if !module.is_empty() {
                    out.insert(module.to_string());
                }
            }
        }
    }
    out
}

/// The import graph between the core's top-level modules (a module's own submodules merged
/// into it).
fn module_graph() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut graph = std::collections::BTreeMap::<String, std::collections::BTreeSet<String>>::new();
    for f in files {
        let rel = f.strip_prefix(&src).expect("under src/").to_path_buf();
        let top = rel
            .components()
            .next()
            .expect("a path")
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if top == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("a readable source file");
        let deps = graph.entry(top.clone()).or_default();
        deps.extend(imports(&text).into_iter().filter(|m| *m != top));
    }
    graph
}

#[test]
fn every_module_is_in_the_diagram_and_imports_only_its_layer_or_below() {
    let graph = module_graph();
    let mut upward = Vec::new();
    for (module, deps) in &graph {
        let own = layer_of(module)
            .unwrap_or_else(|| panic!("module `{module}` is not in ARCHITECTURE.md's layers"));
        for d in deps {
            match layer_of(d) {
                Some(l) if l > own => upward.push(format!("{module} → {d}")),
                Some(_) => {}
                None => panic!("`{module}` names crate::{d}, which is not a module in the layers"),
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports running up the layers: {upward:?}"
    );
}

#[test]
fn no_import_circle_between_modules() {
    let graph = module_graph();
    // Depth-first search for a path from a module back to itself.
    fn reaches(
        graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        from: &str,
        target: &str,
        seen: &mut std::collections::BTreeSet<String>,
    ) -> bool {
        graph.get(from).is_some_and(|deps| {
            deps.iter()
                .any(|d| d == target || (seen.insert(d.clone()) && reaches(graph, d, target, seen)))
        })
    }
    let circles: Vec<&String> = graph
        .keys()
        .filter(|m| reaches(&graph, m, m, &mut Default::default()))
        .collect();
    assert!(
        circles.is_empty(),
        "modules on an import circle: {circles:?}"
    );
}

#[test]
fn the_import_scanner_reads_paths_and_groups() {
    let code = "use crate::{number, text::shorten};\nlet e = crate::Error::x();\n// crate::api\n#[cfg(test)]\nmod tests { use crate::api; }";
    let got: Vec<String> = imports(code).into_iter().collect();
    assert_eq!(got, ["error", "number", "text"]);
}
