//! `attnlab rope usage`: the conclusion, the planes with their wavelengths and energy shares,
//! and the heads that lean most on the never-turning planes.

use std::fmt::Write;

use attnlab_core::api::rope::usage::UsageReport;
use attnlab_core::present::number::sig;

use super::table;

fn pct(x: f64) -> String {
    format!("{}%", sig(100.0 * x, 3))
}

pub fn render(r: &UsageReport) -> String {
    let u = &r.usage;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}): {} layers, {} query heads, {} key/value heads, {} rotated dims, θ ≈ {}, trained context {}{}",
        r.model,
        r.architecture,
        r.model_layers,
        r.heads,
        r.kv_heads,
        r.rotary_dim,
        sig(r.base, 6),
        u.context,
        match &r.ids {
            Some(ids) => format!("; text of {} tokens", ids.len()),
            None => String::new(),
        }
    );
    let _ = writeln!(out, "{}\n", r.conclusion);
    let mut header = vec![
        "plane",
        "ω",
        "wavelength",
        "turns in context",
        "energy (weights)",
    ];
    if u.plane_share_text.is_some() {
        header.push("energy (text)");
    }
    let mut t = table(&header);
    for p in &u.planes {
        let mut row = vec![
            p.plane.to_string(),
            sig(p.inv_freq, 4),
            sig(p.wavelength, 4),
            if p.turns_within_context { "yes" } else { "no" }.to_string(),
            pct(u.plane_share_weights[p.plane]),
        ];
        if let Some(s) = &u.plane_share_text {
            row.push(pct(s[p.plane]));
        }
        t.add_row(row);
    }
    let _ = writeln!(out, "{t}");
    let _ = writeln!(
        out,
        "Share of score energy in the never-turning planes: {} from the weights{}.",
        pct(u.slow_share_weights),
        u.slow_share_text
            .map_or(String::new(), |s| format!(", {} on the text", pct(s)))
    );
    // The heads leaning most and least on the never-turning planes.
    let mut heads: Vec<_> = u.heads.iter().collect();
    let key = |h: &&attnlab_core::model::usage::HeadUsage| {
        h.slow_share_text.unwrap_or(h.slow_share_weights)
    };
    heads.sort_by(|a, b| key(b).total_cmp(&key(a)));
    let mut t = table(&[
        "layer",
        "head",
        "kv head",
        "never-turning share (weights)",
        "(text)",
    ]);
    let n = heads.len();
    let shown: Vec<_> = if n <= 10 {
        heads.clone()
    } else {
        heads[..5].iter().chain(&heads[n - 5..]).copied().collect()
    };
    for h in shown {
        t.add_row(vec![
            h.layer.to_string(),
            h.head.to_string(),
            h.kv_head.to_string(),
            pct(h.slow_share_weights),
            h.slow_share_text.map_or("-".into(), pct),
        ]);
    }
    let _ = writeln!(
        out,
        "Heads leaning most and least on them ({} of {n}; every head is in the JSON):\n{t}",
        n.min(10)
    );
    out
}
