//! Text renderings of reports: the tables and sentences `attnlab <command>` prints, Python's
//! `repr(report)` and the web lab's plain-text view. One function per report; numbers go through
//! the core's one formatter ([`attnlab_core::present::number`]).

pub mod check;
mod model;
pub mod presets;
mod rope_common;
mod table;
pub mod wrap;

pub use equivariance::timings as equivariance_timings;
pub use table::{matrix_table, matrix_table_with, table, MAX_COLS_SHOWN, MAX_ROWS_SHOWN};

use attnlab_core::api::Report;

/// The text dispatch, generated from the core's command table: each command's rendering is
/// `text/<file>.rs`'s `render` (a command without its file is a compile error).
macro_rules! renderings {
    ($(
        $(#[$meta:meta])*
        $variant:ident / $file:ident = $name:literal => $($module:ident)::+ :: { $req:ident, $rep:ident }
    ),+ $(,)?) => {
        $( pub mod $file; )+

        /// The text rendering of any report (ends with a newline).
        pub fn render(report: &Report) -> String {
            match report {
                $( Report::$variant(r) => $file::render(r), )+
            }
        }
    };
}

attnlab_core::for_each_command!(renderings);
