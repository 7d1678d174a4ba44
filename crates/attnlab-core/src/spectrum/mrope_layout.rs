//! Multimodal RoPE's sections on top of any rope type (YaRN with `mrope_section`, Qwen3.5): which
//! plane rotates with which position axis (T, H, W), and which of the scaling type's regimes
//! each axis gets — as transformers 5.24's rotary classes assign them.
//!
//! transformers computes the frequencies with the rope type's function (`ROPE_INIT_FUNCTIONS`,
//! e.g. YaRN's blend and its cos/sin factor) and only afterwards splits the planes among the
//! three position ids (`Qwen3_5TextRotaryEmbedding`, `Qwen3VLTextRotaryEmbedding`,
//! `Qwen2VLRotaryEmbedding`):
//!
//! * **interleaved** (Qwen3-VL, Qwen3.5: `recomposition_frequencies` / `apply_interleaved_mrope`):
//!   plane j is H when `j mod 3 = 1` and `j < 3·s_H`, W when `j mod 3 = 2` and `j < 3·s_W`, else T;
//! * **chunked** (Qwen2-VL, Qwen2.5-VL: `freq.split(mrope_section)`): T takes the first s_T
//!   planes, H the next s_H, W the last s_W.
//!
//! The class chooses the layout (not the config's `mrope_interleaved`), and `mrope_section`
//! defaults to the class's value when the config has none: [11, 11, 10] (Qwen3.5), [24, 20, 20]
//! (Qwen3-VL), [16, 24, 24] (Qwen2-VL, Qwen2.5-VL). For text the three ids are the token index,
//! so the rotation is the rope type's alone; for images and video the axes advance separately,
//! and with a chunked layout the slow (interpolated) planes belong to W alone.

use serde::Serialize;

use crate::position::frequencies::Regime;

/// How the planes are split among the axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MropeStyle {
    /// Axes take turns plane by plane (Qwen3-VL, Qwen3.5).
    Interleaved,
    /// Contiguous runs of planes (Qwen2-VL, Qwen2.5-VL).
    Chunked,
}

/// One position axis and its planes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AxisPlanes {
    /// `T`, `H` or `W`.
    pub axis: char,
    /// Its planes.
    pub planes: Vec<usize>,
    /// How many of them are in each regime of the rope type (`(regime, count)`, non-zero only).
    pub regimes: Vec<(Regime, usize)>,
}

/// The sections of a config with `mrope_section` (or a class default), on top of its rope type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MropeLayout {
    /// The sections [s_T, s_H, s_W].
    pub sections: Vec<u64>,
    /// Whether they come from the config (else the class default).
    pub sections_in_config: bool,
    /// The layout the model's rotary class uses.
    pub style: MropeStyle,
    /// The rope type whose frequencies the sections split.
    pub rope_type: String,
    /// Per axis.
    pub axes: Vec<AxisPlanes>,
}

/// The class default of `mrope_section` and the layout, for the model types whose rotary class
/// splits planes among axes (`None`: no class default).
pub fn class_layout(model_type: &str) -> Option<(Vec<u64>, MropeStyle)> {
    match model_type.trim_end_matches("_text") {
        "qwen3_5" | "qwen3_5_moe" => Some((vec![11, 11, 10], MropeStyle::Interleaved)),
        "qwen3_vl" | "qwen3_vl_moe" => Some((vec![24, 20, 20], MropeStyle::Interleaved)),
        "qwen2_vl" | "qwen2_5_vl" => Some((vec![16, 24, 24], MropeStyle::Chunked)),
        _ => None,
    }
}

/// The axis of every plane.
pub fn axes_of(sections: &[u64], style: MropeStyle, planes: usize) -> Vec<char> {
    let s = |i: usize| sections.get(i).copied().unwrap_or(0) as usize;
    (0..planes)
        .map(|j| match style {
            MropeStyle::Interleaved => {
                if j % 3 == 1 && j < 3 * s(1) {
                    'H'
                } else if j % 3 == 2 && j < 3 * s(2) {
                    'W'
                } else {
                    'T'
                }
            }
            MropeStyle::Chunked => {
                if j < s(0) {
                    'T'
                } else if j < s(0) + s(1) {
                    'H'
                } else {
                    'W'
                }
            }
        })
        .collect()
}

/// The layout for a config of `model_type` whose rope parameters carry `sections` (or not),
/// with `regimes` the rope type's regime of each plane.
pub fn layout(
    model_type: Option<&str>,
    sections: Option<Vec<u64>>,
    rope_type: &str,
    regimes: &[Regime],
) -> Option<MropeLayout> {
    let class = model_type.and_then(class_layout);
    let (sections, in_config, style) = match (sections, class) {
        (Some(s), Some((_, style))) => (s, true, style),
        (Some(s), None) => (s, true, MropeStyle::Interleaved),
        (None, Some((s, style))) => (s, false, style),
        (None, None) => return None,
    };
    let axis = axes_of(&sections, style, regimes.len());
    let axes = ['T', 'H', 'W']
        .iter()
        .map(|&a| {
            let planes: Vec<usize> = (0..regimes.len()).filter(|&j| axis[j] == a).collect();
            let mut counts: Vec<(Regime, usize)> = Vec::new();
            for &j in &planes {
                match counts.iter_mut().find(|(g, _)| *g == regimes[j]) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((regimes[j], 1)),
                }
            }
            AxisPlanes {
                axis: a,
                planes,
                regimes: counts,
            }
        })
        .collect();
    Some(MropeLayout {
        sections,
        sections_in_config: in_config,
        style,
        rope_type: rope_type.into(),
        axes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaved_and_chunked_axes_follow_transformers_slices() {
        // Qwen3.5: [11, 11, 10] over 32 planes; H = 1::3 up to 33 (11 planes), W = 2::3 up to 30.
        let a = axes_of(&[11, 11, 10], MropeStyle::Interleaved, 32);
        let count = |c: char| a.iter().filter(|&&x| x == c).count();
        assert_eq!((count('T'), count('H'), count('W')), (11, 11, 10));
        assert_eq!(&a[..6], &['T', 'H', 'W', 'T', 'H', 'W']);
        assert_eq!(a[31], 'H'); // 31 mod 3 = 1 and 31 < 33
        assert_eq!(a[30], 'T'); // 30 mod 3 = 0
                                // Qwen2-VL: contiguous.
        let c = axes_of(&[16, 24, 24], MropeStyle::Chunked, 64);
        assert_eq!(
            (c[15], c[16], c[39], c[40], c[63]),
            ('T', 'H', 'H', 'W', 'W')
        );
    }
}
