use std::fmt::Write;

use attnlab_core::api::rope::identity::IdentityReport;
use attnlab_core::present::number::sci;
use attnlab_core::present::prose::rope as prose;
use attnlab_core::spectrum::identity::{Pipeline, IDENTITY_TOL_EPS};

use super::rope_common::{count, notes};
use super::table;

/// The column heading of a pipeline.
pub(crate) fn heading(p: Pipeline) -> &'static str {
    match p {
        Pipeline::F64Exact => "f64 exact",
        Pipeline::F64 => "f64 naive",
        Pipeline::F32 => "f32",
        Pipeline::Bf16 => "bf16",
        Pipeline::F16 => "f16",
        Pipeline::Bf16InvFreq => "f32, inv_freq in bf16 (bug)",
        Pipeline::Bf16Angles => "f32, angles in bf16 (bug)",
        Pipeline::F16Positions => "f32, positions in f16 (bug)",
    }
}

pub fn render(r: &IdentityReport) -> String {
    let c = &r.check;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Relative-position identity (R(iω)q)ᵀ(R(jω)k) = qᵀR((j−i)ω)k — {} ({})",
        r.source,
        count(r.planes, "plane", "planes")
    );
    let _ = writeln!(
        out,
        "seed {} (ChaCha8Rng + StandardNormal), {}, positions in 0..={}",
        c.seed,
        count(c.trials, "trial", "trials"),
        c.max_shift
    );
    let _ = writeln!(
        out,
        "{}",
        prose::identity_result(
            c.max_abs_error,
            c.max_error_ratio,
            c.tolerance,
            IDENTITY_TOL_EPS,
            c.worst_positions,
            c.holds
        )
    );
    let _ = writeln!(
        out,
        "\nTranslation invariance: max |S(i+t, j+t) − S(i, j)| over {}, i, j < {}",
        count(c.invariance_cases, "case", "cases"),
        c.base_position_range
    );
    let mut header = vec!["shift t"];
    header.extend(Pipeline::ALL.iter().map(|&p| heading(p)));
    let mut t = table(&header);
    for row in &c.invariance {
        let mut cells = vec![row.shift.to_string()];
        cells.extend(Pipeline::ALL.iter().map(|p| sci(row.errors[p])));
        t.add_row(cells);
    }
    let _ = writeln!(out, "{t}");
    let _ = writeln!(out, "f32/bf16/f16 follow Hugging Face: positions, inv_freq and angles in f32; cos/sin in f32 cast to the dtype.");
    notes(&mut out, &r.config_notes);
    out
}
