//! The sentence of an audit's multimodal sections on a scaled rope type (YaRN with
//! `mrope_section`), written from [`crate::spectrum::mrope_layout::MropeLayout`].

use crate::spectrum::mrope_layout::{MropeLayout, MropeStyle};

/// The layout in one sentence: which planes each axis takes and which regimes of the rope type
/// they are in.
pub fn sentence(l: &MropeLayout) -> String {
    let axes: Vec<String> = l
        .axes
        .iter()
        .map(|a| {
            let regimes: Vec<String> = a.regimes.iter().map(|(g, n)| format!("{n} {g}")).collect();
            format!(
                "{} {} plane{} ({})",
                a.axis,
                a.planes.len(),
                if a.planes.len() == 1 { "" } else { "s" },
                if regimes.is_empty() {
                    "none".to_string()
                } else {
                    regimes.join(", ")
                }
            )
        })
        .collect();
    format!(
        "mrope_section {:?} ({}, {}) splits the {} frequencies among the position axes after they are computed, as transformers 5.24's rotary class does: {}. Text gives the three axes the same index, so it rotates exactly as audited here; for images and video each axis advances on its own{}.",
        l.sections,
        if l.sections_in_config {
            "from the config"
        } else {
            "the class default: the config has none"
        },
        match l.style {
            MropeStyle::Interleaved => "interleaved plane by plane",
            MropeStyle::Chunked => "in contiguous chunks",
        },
        l.rope_type,
        axes.join("; "),
        match l.style {
            MropeStyle::Chunked => ", and the last chunk (W) holds the slowest planes",
            MropeStyle::Interleaved => ", each over the whole frequency range",
        }
    )
}
