//! Stage 4 of reading a config: the model family's quirks, from the table
//! `data/hf_config_families.json` beside the class defaults (what a family's modeling code does
//! that neither its `config.json` nor its config class's defaults state).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

/// One family's quirks (every field absent: none).
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct Family {
    /// No rotary embeddings: the position scheme it uses instead (the config is refused).
    pub no_rope: Option<String>,
    /// A multimodal wrapper whose config class builds its text config from top-level fields (a
    /// flat `config.json`, as Qwen2-VL's is): the text config class's defaults apply.
    pub flat_wrapper: bool,
    /// Rotary pairs are `(x[2k], x[2k+1])` (GPT-J's `rotate_every_two`, Llama-4's complex
    /// view, Cohere's `repeat_interleave`, GLM's `rotate_half` on `x[0::2], x[1::2]`).
    pub interleaved: bool,
    /// The base is hard-coded by the modeling code (GPT-J), which has no scaling either.
    pub fixed_base: Option<FixedBase>,
    /// A family key read as the base after `rope_theta` (GPT-NeoX's `rotary_emb_base`).
    pub base_key: Option<String>,
    /// The base when neither the config nor the class-defaults table gives one.
    pub base_default: Option<f64>,
    /// A family key read as the partial rotary factor (GPT-NeoX's `rotary_pct`) ...
    pub partial_key: Option<String>,
    /// ... and its default.
    pub partial_default: Option<f64>,
    /// A key giving the rotary dimension itself (GPT-J's `rotary_dim`; default the head).
    pub rotary_dim_key: Option<String>,
    /// Only part of each q/k head rotates, from its own key (DeepSeek-V2/V3's
    /// `qk_rope_head_dim`, which their config class stores as `head_dim`).
    pub rope_head_dim: Option<RopeHeadDim>,
    /// The softmax scale is multiplied by yarn's mscale² (DeepSeek-V2/V3, `yarn_apply_mscale`).
    pub softmax_mscale: bool,
    /// The config class has a constant `head_dim` default, used even when `hidden_size /
    /// num_attention_heads` is known (`Gemma3TextConfig.head_dim = 256`, `GlmConfig.head_dim = 128`).
    pub fixed_head_dim: bool,
    /// The default rope type honours `partial_rotary_factor` (for model types the class-defaults
    /// table does not know; it has `default_honours_partial` from each model's
    /// `compute_default_rope_parameters`).
    pub default_honours_partial: bool,
    /// How the layer types follow when the config has no `layer_types` list.
    pub layer_pattern: Option<LayerPattern>,
}

/// A base the modeling code hard-codes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FixedBase {
    /// θ.
    pub value: f64,
    /// The function that hard-codes it.
    pub by: String,
    /// Why no rope type other than `default` is accepted.
    pub unscaled: String,
}

/// The key and default of a rotated part of the head.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RopeHeadDim {
    /// The config key.
    pub key: String,
    /// Its class default.
    pub default: u64,
}

/// A family's layer-type pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum LayerPattern {
    /// Every `sliding_window_pattern`-th layer (default 6) is full attention, the rest slide.
    Gemma3,
    /// As Gemma-3, and the last layer is always full attention.
    Gemma4,
    /// Every `no_rope_layer_interval`-th layer (default 4; or the `no_rope_layers` flags) uses no
    /// position encoding; the rope layers are the chunked-attention ones.
    Llama4,
}

#[derive(Deserialize)]
struct Table {
    families: BTreeMap<String, Family>,
}

/// The quirks of a model type (none for a type the table does not list).
pub(super) fn of(model_type: &str) -> &'static Family {
    static TABLE: OnceLock<Table> = OnceLock::new();
    static NONE: OnceLock<Family> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        serde_json::from_str(include_str!("../../data/hf_config_families.json"))
            .expect("the family table is valid (tested)")
    });
    table
        .families
        .get(model_type)
        .unwrap_or_else(|| NONE.get_or_init(Family::default))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_table_reads_and_names_the_families_it_changes() {
        assert!(super::of("gptj").interleaved && super::of("gptj").fixed_base.is_some());
        assert_eq!(super::of("gpt_neox").partial_default, Some(0.25));
        assert!(super::of("llama").no_rope.is_none() && !super::of("llama").interleaved);
    }
}
