//! A report as one self-contained HTML file: the text rendering, every chart as inline SVG, and
//! the report's data as HTML tables. Inline CSS, no script, no external request (no fonts,
//! images or style sheets fetched), so the file can be handed in, mailed or opened offline.
//!
//! ```
//! use attnlab_core::api::{self, Request, equivariance::EquivarianceRequest};
//! let report = api::run(&Request::Equivariance(EquivarianceRequest::default())).unwrap();
//! let page = attnlab_render::html::render("attnlab equivariance", &report).unwrap();
//! assert!(page.starts_with("<!doctype html>") && page.contains("max_abs_error"));
//! // The only URI is the inline charts' SVG namespace, a name rather than a request.
//! let uris = page.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
//! assert!(!uris.contains("<script") && !uris.contains("http://") && !uris.contains("https://"));
//! ```

use std::fmt::Write;
use std::path::Path;

use attnlab_core::api::Report;
use attnlab_core::present::number::{format, Style};
use attnlab_core::{Error, Result};

/// A JSON value that keeps the order of an object's fields as the report declares them
/// (`serde_json::Value` sorts them unless a workspace-wide feature is turned on).
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Null,
    Bool(bool),
    Number(Num),
    String(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Num {
    Int(i128),
    Float(f64),
}

/// A small JSON reader for the report's own serialisation: numbers are read with the standard
/// library's exact parser (serde_json's default reader may be off in the last bit), object
/// fields keep their order.
struct Reader<'a> {
    s: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn parse(text: &str) -> Option<Value> {
        let mut r = Reader {
            s: text.as_bytes(),
            i: 0,
        };
        let v = r.value()?;
        r.ws();
        (r.i == r.s.len()).then_some(v)
    }

    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn eat(&mut self, lit: &str) -> bool {
        let ok = self.s[self.i..].starts_with(lit.as_bytes());
        if ok {
            self.i += lit.len();
        }
        ok
    }

    fn value(&mut self) -> Option<Value> {
        self.ws();
        match *self.s.get(self.i)? {
            b'n' => self.eat("null").then_some(Value::Null),
            b't' => self.eat("true").then_some(Value::Bool(true)),
            b'f' => self.eat("false").then_some(Value::Bool(false)),
            b'"' => self.string().map(Value::String),
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.eat("]") {
                    return Some(Value::Array(items));
                }
                loop {
                    items.push(self.value()?);
                    self.ws();
                    if self.eat("]") {
                        return Some(Value::Array(items));
                    }
                    if !self.eat(",") {
                        return None;
                    }
                }
            }
            b'{' => {
                self.i += 1;
                let mut fields = Vec::new();
                self.ws();
                if self.eat("}") {
                    return Some(Value::Object(fields));
                }
                loop {
                    self.ws();
                    let k = self.string()?;
                    self.ws();
                    if !self.eat(":") {
                        return None;
                    }
                    fields.push((k, self.value()?));
                    self.ws();
                    if self.eat("}") {
                        return Some(Value::Object(fields));
                    }
                    if !self.eat(",") {
                        return None;
                    }
                }
            }
            _ => {
                let start = self.i;
                while self.i < self.s.len()
                    && matches!(
                        self.s[self.i],
                        b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
                    )
                {
                    self.i += 1;
                }
                let t = std::str::from_utf8(&self.s[start..self.i]).ok()?;
                if let Ok(i) = t.parse::<i128>() {
                    return Some(Value::Number(Num::Int(i)));
                }
                t.parse::<f64>().ok().map(|x| Value::Number(Num::Float(x)))
            }
        }
    }

    fn string(&mut self) -> Option<String> {
        // Find the closing quote (skipping escapes) and let serde_json decode the escapes.
        let start = self.i;
        self.i += 1;
        while *self.s.get(self.i)? != b'"' {
            self.i += if self.s[self.i] == b'\\' { 2 } else { 1 };
        }
        self.i += 1;
        serde_json::from_slice(&self.s[start..self.i]).ok()
    }
}

impl Value {
    fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Compact JSON text, for values nested too deep to tabulate.
    fn compact(&self) -> String {
        match self {
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => number(n),
            Value::String(s) => serde_json::Value::String(s.clone()).to_string(),
            Value::Array(items) => format!(
                "[{}]",
                items
                    .iter()
                    .map(Value::compact)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Value::Object(fields) => format!(
                "{{{}}}",
                fields
                    .iter()
                    .map(|(k, v)| format!(
                        "{}: {}",
                        serde_json::Value::String(k.clone()),
                        v.compact()
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// The most items of a list, and rows / columns of a matrix, a data table shows; the JSON has
/// them all.
pub const MAX_ITEMS: usize = 24;

/// A column of lists of at most this many scalars is spread into one column per entry.
const MAX_SPREAD: usize = 16;

/// Nesting deeper than this is shown as compact JSON.
const MAX_DEPTH: usize = 6;

const STYLE: &str = r#"
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1a1a1a;
       background: #fff; margin: 0 auto; padding: 1.5rem; max-width: 72rem; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
h2 { font-size: 1.15rem; margin: 1.75rem 0 .5rem; border-bottom: 1px solid #ccc; }
.meta { color: #444; margin: 0 0 1rem; }
.outcome { display: inline-block; padding: .1rem .55rem; border-radius: .25rem; font-weight: 600; }
.holds { background: #d9f2dd; color: #0b4d17; }
.fails { background: #fbdcdc; color: #7a0f0f; }
pre { background: #f6f6f6; border: 1px solid #ddd; padding: .75rem; overflow-x: auto; white-space: pre;
      max-width: 100%; font: 13px/1.35 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
figure { margin: 1rem 0; overflow-x: auto; }
figure svg { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #333; font-size: .9rem; }
.scroll { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; margin: .25rem 0; font-size: .88rem; }
th, td { border: 1px solid #d0d0d0; padding: .15rem .45rem; vertical-align: top; text-align: left; }
td { overflow-wrap: anywhere; min-width: 3rem; }
td:not(.num) { max-width: 40rem; }
th { background: #f0f0f0; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.more { color: #555; font-style: italic; }
@media print { pre, figure { break-inside: avoid; } }
"#;

/// The report as a complete HTML document titled `title` (e.g. `attnlab lab`).
///
/// # Errors
/// A chart cannot be drawn, or the report cannot be serialised.
pub fn render(title: &str, report: &Report) -> Result<String> {
    let mut out = String::new();
    let outcome = if report.outcome().holds() {
        "holds"
    } else {
        "fails"
    };
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"attnlab {version}\">\n\
         <title>{t}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n\
         <h1>{t}</h1>\n<p class=\"meta\">Outcome: <span class=\"outcome {outcome}\">{outcome}</span> (exit code {code}) \
         · made by attnlab {version}; every number below was computed by attnlab, not typed.</p>\n",
        t = escape(title),
        version = env!("CARGO_PKG_VERSION"),
        code = report.outcome().exit_code(),
    );
    out.push_str("<h2 id=\"report\">Report</h2>\n<pre>");
    out.push_str(&escape(&crate::text::render(report)));
    out.push_str("</pre>\n");
    let charts = report.charts();
    if !charts.is_empty() {
        out.push_str("<h2 id=\"charts\">Charts</h2>\n");
        for chart in &charts {
            let svg = crate::svg::render(chart)?;
            let _ = write!(
                out,
                "<figure id=\"chart-{}\" role=\"group\" aria-label=\"{}\">\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
                escape(&chart.name),
                escape(&chart.title),
                strip_xml_prolog(&svg),
                escape(&chart.title)
            );
        }
    }
    // Serialised to text and read back exactly, so f32 values keep their short f32 spelling (a
    // direct `serde_json::to_value` would widen them to f64 digits) and fields keep their order.
    let text = serde_json::to_string(report).map_err(|e| Error::write("the report", e))?;
    let data = Reader::parse(&text)
        .ok_or_else(|| Error::write("the report", "its JSON could not be read back"))?;
    out.push_str(
        "<h2 id=\"data\">Data</h2>\n<p class=\"meta\">The report's fields as <code>--json</code> names them \
         (long lists and matrices are cut to their first entries).</p>\n",
    );
    out.push_str("<div class=\"scroll\">");
    value(&mut out, &data, 0);
    out.push_str("</div>\n</main>\n</body>\n</html>\n");
    Ok(out)
}

/// Writes [`render`]'s document to `path` (parent folders are created).
///
/// # Errors
/// Rendering fails or the file cannot be written.
pub fn write_file(path: &Path, title: &str, report: &Report) -> Result<()> {
    let page = render(title, report)?;
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir).map_err(|e| Error::write_source(dir, e))?;
        }
    }
    std::fs::write(path, page).map_err(|e| Error::write_source(path, e))
}

/// `s` with the five HTML-special characters escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn strip_xml_prolog(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

fn number(v: &Num) -> String {
    match *v {
        Num::Int(i) => i.to_string(),
        Num::Float(x) => format(x, Style::Shortest),
    }
}

fn scalar(v: &Value) -> Option<String> {
    Some(match v {
        Value::Null => "—".into(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        Value::Number(n) => number(n),
        Value::String(s) => escape(s),
        _ => return None,
    })
}

fn cell(out: &mut String, v: &Value, depth: usize) {
    match v {
        Value::Number(_) => {
            let _ = write!(
                out,
                "<td class=\"num\">{}</td>",
                scalar(v).unwrap_or_default()
            );
        }
        _ => {
            out.push_str("<td>");
            value(out, v, depth + 1);
            out.push_str("</td>");
        }
    }
}

fn more(out: &mut String, shown: usize, total: usize, what: &str) {
    if total > shown {
        let _ = write!(
            out,
            "<p class=\"more\">first {shown} of {total} {what} shown</p>"
        );
    }
}

fn value(out: &mut String, v: &Value, depth: usize) {
    if let Some(s) = scalar(v) {
        out.push_str(&s);
        return;
    }
    if depth > MAX_DEPTH {
        let _ = write!(
            out,
            "<code>{}</code>",
            escape(&attnlab_core::present::text::shorten(&v.compact()))
        );
        return;
    }
    match v {
        Value::Array(items) => array(out, items, depth),
        Value::Object(map) => {
            if map.is_empty() {
                out.push('—');
                return;
            }
            out.push_str("<table>");
            for (k, item) in map {
                let _ = write!(out, "<tr><th scope=\"row\">{}</th>", escape(k));
                cell(out, item, depth);
                out.push_str("</tr>");
            }
            out.push_str("</table>");
        }
        _ => {}
    }
}

fn array(out: &mut String, items: &[Value], depth: usize) {
    if items.is_empty() {
        out.push_str("(none)");
        return;
    }
    let shown = &items[..items.len().min(MAX_ITEMS)];
    // A list of scalars: one row.
    if items.iter().all(|i| scalar(i).is_some()) {
        out.push_str("<table><tr>");
        for i in shown {
            cell(out, i, depth);
        }
        out.push_str("</tr></table>");
        more(out, shown.len(), items.len(), "values");
        return;
    }
    // A matrix (rows of scalars): a grid with 0-based indices.
    let rows: Option<Vec<&Vec<Value>>> = items
        .iter()
        .map(|i| match i {
            Value::Array(r) if r.iter().all(|x| scalar(x).is_some()) => Some(r),
            _ => None,
        })
        .collect();
    if let Some(rows) = rows {
        let cols = rows.iter().map(|r| r.len()).max().unwrap_or(0);
        let shown_cols = cols.min(MAX_ITEMS);
        out.push_str("<table><tr><th></th>");
        for c in 0..shown_cols {
            let _ = write!(out, "<th scope=\"col\">{c}</th>");
        }
        out.push_str("</tr>");
        for (r, row) in rows.iter().take(MAX_ITEMS).enumerate() {
            let _ = write!(out, "<tr><th scope=\"row\">{r}</th>");
            for x in row.iter().take(shown_cols) {
                cell(out, x, depth);
            }
            out.push_str("</tr>");
        }
        out.push_str("</table>");
        more(out, rows.len().min(MAX_ITEMS), rows.len(), "rows");
        more(out, shown_cols, cols, "columns");
        return;
    }
    // Records with shared keys: one column per key.
    let keys: Option<Vec<&String>> = match &items[0] {
        Value::Object(first) => {
            let keys: Vec<&String> = first.iter().map(|(k, _)| k).collect();
            items
                .iter()
                .all(|i| match i {
                    Value::Object(o) => {
                        o.len() == keys.len() && keys.iter().all(|k| i.get(k).is_some())
                    }
                    _ => false,
                })
                .then_some(keys)
        }
        _ => None,
    };
    if let Some(keys) = keys {
        // A column whose every entry is a short list of scalars of one length (the lab's
        // scores per frequency) becomes one column per entry, so a cell holds one value.
        let spread: Vec<Option<usize>> = keys
            .iter()
            .map(|k| {
                let lens: Option<Vec<usize>> = shown
                    .iter()
                    .map(|i| match i.get(k) {
                        Some(Value::Array(a)) if a.iter().all(|x| scalar(x).is_some()) => {
                            Some(a.len())
                        }
                        _ => None,
                    })
                    .collect();
                lens.and_then(|l| {
                    let first = *l.first()?;
                    (first > 0 && first <= MAX_SPREAD && l.iter().all(|&x| x == first))
                        .then_some(first)
                })
            })
            .collect();
        out.push_str("<table><tr>");
        for (k, wide) in keys.iter().zip(&spread) {
            match wide {
                Some(w) => {
                    for j in 0..*w {
                        let _ = write!(out, "<th scope=\"col\">{}[{j}]</th>", escape(k));
                    }
                }
                None => {
                    let _ = write!(out, "<th scope=\"col\">{}</th>", escape(k));
                }
            }
        }
        out.push_str("</tr>");
        for i in shown {
            out.push_str("<tr>");
            for (k, wide) in keys.iter().zip(&spread) {
                match (wide, i.get(k)) {
                    (Some(_), Some(Value::Array(a))) => {
                        for x in a {
                            cell(out, x, depth);
                        }
                    }
                    _ => cell(out, i.get(k).unwrap_or(&Value::Null), depth),
                }
            }
            out.push_str("</tr>");
        }
        out.push_str("</table>");
        more(out, shown.len(), items.len(), "entries");
        return;
    }
    // Anything else: a numbered list of values.
    out.push_str("<table>");
    for (n, i) in shown.iter().enumerate() {
        let _ = write!(out, "<tr><th scope=\"row\">{n}</th>");
        cell(out, i, depth);
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    more(out, shown.len(), items.len(), "entries");
}

#[cfg(test)]
mod tests {
    use super::*;
    use attnlab_core::api::{self, attend::AttendRequest, Request};

    #[test]
    fn attend_report_has_matrices_as_tables_and_no_external_reference() {
        let report = api::run(&Request::Attend(AttendRequest::default())).unwrap();
        let page = render("attnlab attend", &report).unwrap();
        assert!(page.contains("<th scope=\"row\">weights</th>"));
        assert!(page.contains("<td class=\"num\">"));
        // The inline charts' SVG namespace is a name and `url(#…)` a reference inside the page,
        // not requests.
        let requests = page
            .replace("xmlns=\"http://www.w3.org/2000/svg\"", "")
            .replace("url(#", "");
        assert!(page.contains("<svg"), "attend's weights chart is inline");
        for banned in ["<script", "http://", "https://", "<link", "@import", "url("] {
            assert!(!requests.contains(banned), "{banned} in the page");
        }
        // Every weight of the report appears, formatted by the one formatter.
        let api::Report::Attend(r) = &report else {
            unreachable!()
        };
        for w in r.weights.iter() {
            let s = format!(">{}<", format(*w, Style::Shortest));
            assert!(page.contains(&s), "{s} missing");
        }
    }

    #[test]
    fn the_reader_keeps_order_and_exact_numbers() {
        let text = r#"{"b": [1, -2.5e-3, 0.24843044047129859], "a": {"s": "x\"y\\n", "n": null, "t": true}}"#;
        let v = Reader::parse(text).unwrap();
        let Value::Object(fields) = &v else { panic!() };
        assert_eq!(fields[0].0, "b");
        assert_eq!(fields[1].0, "a");
        let Some(Value::Array(b)) = v.get("b") else {
            panic!()
        };
        assert_eq!(b[2], Value::Number(Num::Float(0.24843044047129859)));
        assert_eq!(b[0], Value::Number(Num::Int(1)));
        let Some(a) = v.get("a") else { panic!() };
        assert_eq!(a.get("s"), Some(&Value::String("x\"y\\n".into())));
        assert!(Reader::parse("{\"a\": 1,}").is_none());
        assert!(Reader::parse("[1] 2").is_none());
    }

    #[test]
    fn escapes_and_cuts() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        let mut out = String::new();
        let long: Vec<Value> = (0..100).map(|i| Value::Number(Num::Int(i))).collect();
        value(&mut out, &Value::Array(long), 0);
        assert!(out.contains("first 24 of 100 values shown"));
        assert_eq!(out.matches("<td").count(), MAX_ITEMS);
    }
}
