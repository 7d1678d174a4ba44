use std::fmt::Write;

use attnlab_core::api::rope::engines::prose;
use attnlab_core::api::rope::engines::EnginesReport;
use attnlab_core::present::number::{sci, short, sig};

use super::rope_common::notes;
use super::table::table;

pub fn render(r: &EnginesReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} rope, base {}, rotary dim {}, served context {}; compared at sequence lengths {} (bf16 resolution {})",
        r.source,
        r.rope_type,
        short(r.base),
        r.rotary_dim,
        r.served_context,
        r.sequence_lengths
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        sci(r.bf16_resolution)
    );
    for e in &r.engines {
        let _ = writeln!(out, "\n{} ({})", e.engine, e.version);
        if let Some(rope) = &e.rope {
            let _ = writeln!(
                out,
                "  cos/sin factor {}, softmax scale × {}; {}",
                sig(rope.cos_sin_factor, 7),
                sig(rope.softmax_scale_multiplier, 7),
                prose::switching(&e.switching)
            );
            let mut t = table(&["plane", "inv_freq", "rel. diff from transformers"]);
            let n = rope.inv_freq.len();
            let rel = e.rel_diff.as_deref().unwrap_or(&[]);
            for k in 0..n {
                // The first and last four planes, and every plane that differs.
                let differs = rel.get(k).is_some_and(|d| *d > 0.0);
                if k < 4 || k + 4 >= n || differs {
                    t.add_row(vec![
                        k.to_string(),
                        sig(rope.inv_freq[k], 7),
                        rel.get(k).map_or("-".into(), |d| sci(*d)),
                    ]);
                }
            }
            let _ = writeln!(out, "{t}");
            for c in &e.comparisons {
                let _ = writeln!(
                    out,
                    "  S = {}: max rel. diff {}, cos/sin {} vs {}, {}",
                    c.sequence_length,
                    sci(c.max_rel_diff),
                    sig(c.cos_sin_factor, 7),
                    sig(c.reference_cos_sin_factor, 7),
                    match c.first_difference {
                        Some(d) => format!("first differs at position {}", d.position),
                        None => "no position differs beyond bf16".into(),
                    }
                );
            }
        }
        let _ = writeln!(out, "  verdict: {}", prose::verdict(e));
        let _ = writeln!(out, "  follows: {}", e.follows.join("; "));
    }
    notes(&mut out, &r.config_notes);
    out
}
