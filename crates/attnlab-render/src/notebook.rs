//! HTML fragments for notebooks (Jupyter's `_repr_html_`): the text rendering's tables as
//! HTML tables and the report's charts as inline SVG. Every number comes from the same cells
//! as the text rendering, so both show the same digits.

use std::fmt::Write;

use attnlab_core::api::check::LayerCheckReport;
use attnlab_core::present::number::sci;

use crate::html::escape;
use crate::text::check as text;

/// A table with a header row.
pub fn table<S: AsRef<str>>(header: &[S], rows: &[Vec<String>]) -> String {
    let mut out = String::from("<table>\n<thead><tr>");
    for h in header {
        let _ = write!(out, "<th>{}</th>", escape(h.as_ref()));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", escape(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    out
}

/// A layer check: the headline, the check's table, the controls, the diagnosis, the notes and
/// the heat map of the worst permutation's difference (inline SVG).
///
/// # Errors
/// The heat map cannot be drawn.
pub fn layer_check(r: &LayerCheckReport) -> attnlab_core::Result<String> {
    let mut out = String::from("<div class=\"attnlab-report\">\n");
    let colour = if r.holds { "#1a7f37" } else { "#cf222e" };
    let _ = writeln!(
        out,
        "<p><strong style=\"color: {colour}\">{}</strong></p>",
        escape(&text::headline(r))
    );
    out.push_str(&table(&text::HEADER, &[text::cells(r)]));
    let _ = writeln!(out, "<p>{}</p>", escape(&text::permutations_line(r)));
    let controls: Vec<Vec<String>> = r
        .controls
        .iter()
        .map(|c| {
            vec![
                c.name.clone(),
                c.expectation.clone(),
                sci(c.max_abs_error),
                sci(c.margin),
                if c.ok { "yes" } else { "NO" }.to_string(),
            ]
        })
        .collect();
    out.push_str(&table(
        &["control", "must show", "max abs error", "margin", "ok"],
        &controls,
    ));
    if let Some(line) = text::diagnosis_line(r) {
        let _ = writeln!(out, "<p>{}</p>", escape(&line));
    }
    if let Some(note) = &r.note {
        let _ = writeln!(out, "<p><em>note: {}</em></p>", escape(note));
    }
    for chart in r.charts() {
        let svg = crate::svg::render(&chart)?;
        let _ = writeln!(
            out,
            "<figure style=\"max-width: 640px\">{}</figure>",
            svg.trim_start_matches(|c| c != '<')
        );
    }
    out.push_str("</div>\n");
    Ok(out)
}
