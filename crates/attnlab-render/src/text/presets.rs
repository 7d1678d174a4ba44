//! `attnlab rope audit --list-presets`: the built-in presets, one row each.

use attnlab_core::config::PresetInfo;
use attnlab_core::present::number::short;

use super::table;

/// The presets as a table: name (what `--preset` takes), rope type, rotary dimension, base,
/// declared context and where the values were typed from.
pub fn render(presets: &[PresetInfo]) -> String {
    let mut t = table(&[
        "--preset",
        "rope type",
        "rotary dim",
        "base θ",
        "context",
        "typed from",
    ]);
    for p in presets {
        t.add_row(vec![
            p.name.to_string(),
            p.rope_type.clone(),
            p.rotary_dim.to_string(),
            p.base.map_or("—".into(), short),
            p.context.map_or("—".into(), |c| c.to_string()),
            p.source.to_string(),
        ]);
    }
    format!("{t}\n")
}
