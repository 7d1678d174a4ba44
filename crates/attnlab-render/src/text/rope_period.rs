use std::fmt::Write;

use attnlab_core::api::rope::period::PeriodReport;
use attnlab_core::present::number::{sci, short, sig};
use attnlab_core::present::prose::rope as prose;

use super::table;

pub fn render(r: &PeriodReport) -> String {
    let p = &r.period;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "ω = {} = {} rad/position; wavelength 2π/|ω| = {}",
        p.omega.label,
        short(p.omega.value),
        sig(p.wavelength, 7)
    );
    let _ = writeln!(
        out,
        "{}",
        prose::period_repeat(p, r.turns_fraction.map(|f| (f.a, f.b)))
    );
    let mut t = table(&["separation", "phase error (rad)"]);
    for n in &p.near_repeats {
        t.add_row(vec![n.separation.to_string(), sci(n.phase_error)]);
    }
    let _ = writeln!(out, "{t}");
    let _ = writeln!(out, "{}", prose::period_within_tol(p));
    out
}
