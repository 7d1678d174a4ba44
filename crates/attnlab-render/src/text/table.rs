//! Terminal tables in the house style.

use attnlab_core::present::number::{format, Style};
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};
use ndarray::Array2;

/// A table with the house style and the given header. Wraps at the terminal's width, or at 120
/// columns when the output is not a terminal.
pub fn table<S: AsRef<str>>(header: &[S]) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(
            header
                .iter()
                .map(|h| h.as_ref().to_string())
                .collect::<Vec<_>>(),
        );
    if t.width().is_none() {
        t.set_width(120);
    }
    t
}

/// The most rows a terminal table shows; larger matrices are elided (use --json).
pub const MAX_ROWS_SHOWN: usize = 12;
/// The most columns a terminal table shows (eight fit a 120-column terminal).
pub const MAX_COLS_SHOWN: usize = 8;

/// A matrix as a table with row labels, entries to 6 decimals. Matrices larger than
/// [`MAX_ROWS_SHOWN`] × [`MAX_COLS_SHOWN`] show their first rows and columns and say, below the
/// table, how many were left out.
pub fn matrix_table(a: &Array2<f64>, row_labels: Option<&[String]>) -> String {
    matrix_table_with(a, row_labels, |v| format(v, Style::Fixed(6)))
}

/// [`matrix_table`] with a chosen entry format.
pub fn matrix_table_with(
    a: &Array2<f64>,
    row_labels: Option<&[String]>,
    fmt: impl Fn(f64) -> String,
) -> String {
    let (rows, cols) = (a.nrows().min(MAX_ROWS_SHOWN), a.ncols().min(MAX_COLS_SHOWN));
    let mut header = vec![String::new()];
    header.extend((0..cols).map(|j| j.to_string()));
    if cols < a.ncols() {
        header.push(format!("… {} more", a.ncols() - cols));
    }
    let mut t = table(&header);
    for (i, row) in a.rows().into_iter().take(rows).enumerate() {
        let label = row_labels
            .and_then(|l| l.get(i))
            .map_or(i.to_string(), |l| format!("{i} {l}"));
        let mut cells = vec![label];
        cells.extend(row.iter().take(cols).map(|&v| fmt(v)));
        if cols < a.ncols() {
            cells.push("…".into());
        }
        t.add_row(cells);
    }
    let mut out = t.to_string();
    if rows < a.nrows() {
        out.push_str(&format!(
            "\n… {} more rows (--json prints everything)",
            a.nrows() - rows
        ));
    }
    out
}
