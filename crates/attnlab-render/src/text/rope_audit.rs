use std::fmt::Write;

use attnlab_core::api::rope::audit::AuditReport;
use attnlab_core::position::frequencies::Regime;
use attnlab_core::present::number::{sci, short, sig};
use attnlab_core::spectrum::audit::{AuditReport as Audit, FactorSet};

use super::rope_common::notes;
use super::rope_identity::heading;
use super::table;

fn or_dash(x: Option<u64>) -> String {
    x.map_or("-".into(), |v| v.to_string())
}

/// Runs of consecutive planes in one regime: `0–29 kept, 30–35 blended, 36–63 divided`.
fn regime_runs(r: &Audit) -> String {
    let mut runs: Vec<(usize, usize, Regime)> = Vec::new();
    for p in &r.planes {
        match runs.last_mut() {
            Some((_, end, g)) if *g == p.regime && *end + 1 == p.index => *end = p.index,
            _ => runs.push((p.index, p.index, p.regime)),
        }
    }
    runs.iter()
        .map(|(a, b, g)| {
            let planes = if a == b {
                format!("plane {a}")
            } else {
                format!("planes {a}–{b}")
            };
            format!("{planes} {g}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn render(report: &AuditReport) -> String {
    let mut out = render_one(&report.audit, &report.verdict, &report.config_notes);
    if let Some(c) = &report.critical_dimension {
        let _ = writeln!(
            out,
            "\n{}",
            attnlab_core::present::prose::rope::critical_dimension(c)
        );
    }
    if let Some(q) = &report.query_scaling {
        let _ = writeln!(
            out,
            "{}",
            attnlab_core::present::prose::rope::query_scaling(q)
        );
    }
    for s in report.rope_sets.iter().filter(|s| !s.primary) {
        let layers = match (s.layers, s.share) {
            (Some(k), Some(f)) => format!(" — {k} layers ({}%)", sig(100.0 * f, 3)),
            (Some(k), None) => format!(" — {k} layers"),
            (None, _) => String::new(),
        };
        let _ = writeln!(
            out,
            "\n══ rope set {}{layers} ══",
            s.layer_type.as_deref().unwrap_or("(all layers)")
        );
        out += &render_one(&s.audit, &s.verdict, &[]);
    }
    if let Some(m) = &report.mrope {
        let _ = writeln!(
            out,
            "\n{}",
            attnlab_core::api::rope::audit::mrope::sentence(m)
        );
    }
    if let Some(g) = &report.gguf {
        out += &render_gguf(g);
    }
    out
}

/// The GGUF file against the config: the verdict, then the planes that differ (all planes when
/// none does, at most 64 rows).
fn render_gguf(g: &attnlab_core::api::rope::audit::gguf::GgufAudit) -> String {
    let c = &g.comparison;
    let mut out = format!(
        "\n══ {} against the config (llama.cpp's rotation vs transformers', {} positions) ══\n{}\n",
        g.model, c.sequence_length, g.verdict
    );
    let _ = writeln!(
        out,
        "file: {} (rope mode {}), θ {}, {} rotated dims, scaling {} (freq_scale {}, ext_factor {}, original context {}), cos/sin factor {}{}",
        c.gguf.architecture,
        c.gguf
            .mode
            .map_or("unknown".to_string(), |m| format!("{m:?}").to_lowercase()),
        sig(c.gguf.freq_base, 9),
        c.gguf.n_rot,
        c.gguf.scaling_type,
        sig(c.gguf.freq_scale, 7),
        short(c.gguf.ext_factor),
        c.gguf.n_ctx_orig,
        sig(c.gguf.rope.cos_sin_factor, 7),
        c.gguf
            .freq_factors
            .as_ref()
            .map_or(String::new(), |f| format!(", frequency factors from {}", f.tensor))
    );
    let rows: Vec<_> = if c.differing_planes.is_empty() {
        c.planes.iter().collect()
    } else {
        c.planes
            .iter()
            .filter(|p| p.first_difference.is_some())
            .collect()
    };
    let mut t = table(&[
        "plane",
        "ω GGUF",
        "ω transformers",
        "rel. diff",
        "factor ff",
        "differs from",
        "ω alone differs from",
    ]);
    for p in rows.iter().take(64) {
        t.add_row(vec![
            p.plane.to_string(),
            sig(p.gguf_inv_freq, 7),
            sig(p.transformers_inv_freq, 7),
            sci(p.rel_diff),
            p.gguf_freq_factor.map_or("-".into(), |f| sig(f, 7)),
            or_dash(p.first_difference),
            or_dash(p.first_frequency_difference),
        ]);
    }
    let _ = writeln!(out, "{t}");
    out
}

fn render_one(r: &Audit, verdict: &str, config_notes: &[String]) -> String {
    let mut out = String::new();
    // Config and base/dim sources already name their dimensions; explicit lists (no base) do not.
    let dims = if r.base.is_none() {
        format!(" (rotary dim {}, head dim {})", r.rotary_dim, r.head_dim)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "RoPE audit — {}{dims}, context {}",
        r.source, r.context
    );
    if let (Some(b), Some(e)) = (r.base, r.effective_base) {
        if b != e {
            let _ = writeln!(
                out,
                "base {} as configured; effective base {} at sequence length {} (dynamic scaling)",
                short(b),
                short(e),
                r.context
            );
        }
    }
    let _ = writeln!(out, "\n{verdict}");
    notes(&mut out, config_notes);
    if let Some(t) = &r.trained_context {
        let mut parts = Vec::new();
        if let Some(m) = t.max_position_embeddings {
            parts.push(format!("max_position_embeddings {m}"));
        }
        if let Some(o) = t.original {
            parts.push(format!("original {o}"));
        }
        if let Some(i) = t.intended {
            parts.push(format!("intended (factor × original) {i}"));
        }
        let state = match r.beyond_trained_context {
            Some(true) => "BEYOND it",
            Some(false) => "within it",
            None => "unknown",
        };
        let _ = writeln!(
            out,
            "\ntrained context: {}; audited length {}: {state}",
            parts.join(", "),
            r.context
        );
    }
    if let Some(b) = &r.scaling_bands {
        let _ = writeln!(out, "{} scaling: {}", b.rope_type, regime_runs(r));
        if let Some(ramp) = &b.ramp {
            let _ = writeln!(
                out,
                "yarn ramp: kept up to plane {}, divided from plane {}",
                short(ramp.start),
                short(ramp.end)
            );
        }
    }
    if let (Some(set), Some(at)) = (r.longrope_factor_set, r.longrope_switch_at) {
        let _ = writeln!(
            out,
            "longrope: {} factors at this length; long factors from sequence length {at} (a KV cache written before then is inconsistent after)",
            match set {
                FactorSet::Short => "short",
                FactorSet::Long => "long",
            }
        );
    }
    let scaled = r.scaling_bands.is_some();
    let mut head = vec![
        "plane",
        "inv_freq",
        "wavelength",
        "turns in context",
        "full turn",
    ];
    if scaled {
        head.extend(["regime", "× slower", "unscaled wavelength"]);
    }
    let mut t = table(&head);
    for p in &r.planes {
        let wl = if p.wavelength.is_finite() {
            sig(p.wavelength, 6)
        } else {
            "∞ (not rotated)".into()
        };
        let mut row = vec![
            p.index.to_string(),
            sci(p.inv_freq),
            wl,
            sig(p.turns_in_context, 6),
            if p.full_turn_in_context { "yes" } else { "no" }.into(),
        ];
        if scaled {
            row.push(p.regime.to_string());
            row.push(p.division.map_or("-".into(), |d| sig(d, 5)));
            row.push(p.unscaled_wavelength.map_or("-".into(), |w| sig(w, 6)));
        }
        t.add_row(row);
    }
    let _ = writeln!(out, "\n{t}");
    let _ = writeln!(
        out,
        "planes with a full turn: {} ({} dims), without: {}; attention factor {}; softmax scale factor {}",
        r.planes_full_turn,
        r.dims_full_turn,
        r.planes_without_full_turn,
        sig(r.attention_factor, 6),
        sig(r.softmax_scale_factor, 6)
    );
    let res = &r.resolution;
    let resolution = match (res.first_alias, res.min_margin, res.margin_at) {
        (Some(a), _, _) => format!("does not resolve, first alias at separation {a}"),
        (None, Some(m), Some(at)) => format!(
            "resolves, smallest margin {} rad at separation {at}",
            sig(m, 4)
        ),
        (None, None, _) | (None, Some(_), None) => {
            "no separation in a context of 1 position".into()
        }
    };
    let _ = writeln!(out, "resolution: {resolution}");
    for s in &r.slow_plane_aliases {
        let _ = writeln!(
            out,
            "  without the fastest {}: {}",
            s.fastest_excluded,
            match s.first_separation {
                Some(a) => format!("separation {a} within tol of a full turn in every other plane"),
                None => format!(
                    "no separation within tol of a full turn in every other plane (smallest margin {} rad)",
                    s.min_margin.map_or("-".into(), |m| sig(m, 4))
                ),
            }
        );
    }
    if let Some(sr) = &r.signed_resolution {
        let _ = writeln!(
            out,
            "  signed (unmasked layers, offset differences 1..{}): {}",
            sr.context.saturating_sub(1),
            match sr.first_alias {
                Some(a) => format!("offsets {a} apart are confused"),
                None => "every pair of offsets distinguished".into(),
            }
        );
    }
    let first = match r.decay_first_negative {
        Some(m) => format!("B(m) < 0 first at m = {m}"),
        None => format!("B(m) ≥ 0 for every m < {}", r.context),
    };
    let min_base = match (&r.min_base_search, r.min_base_for_context) {
        (None, _) => "not searched".to_string(),
        (Some(_), Some(b)) => sig(b, 8),
        (Some(_), None) => "none up to 1e15".to_string(),
    };
    let _ = writeln!(
        out,
        "decay: {first}, min mean {} at m = {}; smallest base for this context: {min_base}",
        sig(r.decay_min_mean, 6),
        r.decay_min_mean_at
    );
    for (label, m) in [
        ("default frequencies", &r.min_base_search),
        ("effective frequencies", &r.min_base_effective_search),
    ] {
        let Some(m) = m else { continue };
        let mut line = format!("  minimum base, {label} ({}, {}): ", m.family(), m.method());
        match m.base() {
            Some(b) => {
                line += &sig(b, 8);
                if let Some(i) = &m.island() {
                    line += &format!(
                        "; passing island up to {} (relative width {}), first failure above at {}",
                        sig(i.passes_up_to, 8),
                        sci(i.rel_width),
                        sig(i.fails_at, 8)
                    );
                }
                if let Some(c) = &m.f32_check() {
                    line += &match (c.passes, c.first_negative) {
                        (true, _) => "; passes in f32 too".to_string(),
                        (false, Some(at)) => format!("; fails in f32 at m = {at}"),
                        (false, None) => "; fails in f32".to_string(),
                    };
                }
            }
            None => line += "none up to 1e15",
        }
        let _ = writeln!(out, "{line}");
    }
    if let Some(d) = &r.scaled_vs_unscaled {
        let mut t = table(&["position", "cos(scaled, unscaled)"]);
        for (m, c) in &d.cosine {
            t.add_row(vec![m.to_string(), sig(*c, 4)]);
        }
        let _ = writeln!(
            out,
            "\nscaled vs unscaled rotation of a query (equal norm per plane); below 0.9 first at {}:\n{t}",
            d.first_below_0_9
                .map_or(format!("none up to {}", d.searched_to - 1), |m| m.to_string())
        );
    }
    let mut t = table(&[
        "dtype",
        "distinct positions",
        "first inexact",
        "overflow from",
        "distinct rows",
        "first duplicate row",
    ]);
    for (dtype, p) in &r.precision {
        let dup = match (p.first_duplicate_row, p.first_duplicate_of) {
            (Some(d), Some(of)) => format!("{d} (repeats {of})"),
            (Some(d), None) => d.to_string(),
            (None, _) => "-".into(),
        };
        t.add_row(vec![
            dtype.to_string(),
            p.distinct_positions.to_string(),
            or_dash(p.first_inexact_position),
            or_dash(p.first_overflow_position),
            p.distinct_rows.to_string(),
            dup,
        ]);
    }
    let _ = writeln!(out, "{t}");
    if let (Some(first), Some(last)) = (r.invariance.first(), r.invariance.last()) {
        // One shift only (a context of 2): one column; otherwise the first, the last and the
        // largest over all shifts.
        let single = r.invariance.len() == 1;
        let first_heading = format!("shift {}", first.shift);
        let last_heading = format!("shift {}", last.shift);
        let mut t = if single {
            table(&["pipeline", &first_heading])
        } else {
            table(&["pipeline", &first_heading, &last_heading, "largest"])
        };
        for (p, e) in &last.errors {
            let fmt = |x: f64| {
                if x.is_finite() {
                    sig(x, 3)
                } else {
                    "∞ (overflow)".into()
                }
            };
            let worst = r
                .invariance
                .iter()
                .filter_map(|row| row.errors.get(p))
                .copied()
                .fold(0.0f64, f64::max);
            let mut row = vec![heading(*p).to_string(), fmt(first.errors[p])];
            if !single {
                row.extend([fmt(*e), fmt(worst)]);
            }
            t.add_row(row);
        }
        let _ = writeln!(
            out,
            "translation invariance: max |S(i+t, j+t) − S(i, j)| over {} draws whose scores are about {} (RMS):\n{t}",
            attnlab_core::spectrum::audit::INVARIANCE_DRAWS,
            sig(r.invariance_score_scale, 3)
        );
    }
    out
}
