//! Stage 3 of reading a config: the rope-relevant defaults of transformers' config classes,
//! generated from transformers itself (`scripts/gen_hf_rope_vectors.py --defaults`) into
//! `data/hf_config_defaults.json`.

use std::sync::OnceLock;

use serde_json::{Map, Value};

const TABLE: &str = include_str!("../../data/hf_config_defaults.json");

fn table() -> &'static Map<String, Value> {
    static T: OnceLock<Map<String, Value>> = OnceLock::new();
    T.get_or_init(|| {
        let v: Value = serde_json::from_str(TABLE).expect("the generated table is JSON");
        match v.get("classes") {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        }
    })
}

/// The defaults of a model type's config class.
pub(super) fn class(model_type: &str) -> Option<&'static Map<String, Value>> {
    match table().get(model_type) {
        Some(Value::Object(m)) => Some(m),
        _ => None,
    }
}

/// The config class whose defaults apply: the text config's for a flat config of a
/// [`super::family::Family::flat_wrapper`] (`Qwen2VLTextConfig.default_theta = 1e6`, not the
/// wrapper's 10000).
pub(super) fn applying(mt: &str, flat: bool) -> Option<&'static Map<String, Value>> {
    let c = class(mt)?;
    match c.get("text_config").and_then(Value::as_str) {
        Some(t) if flat && super::family::of(mt).flat_wrapper => class(t).or(Some(c)),
        Some(_) | None => Some(c),
    }
}

/// The transformers version the table was generated with.
pub(super) fn version() -> &'static str {
    static V: OnceLock<String> = OnceLock::new();
    V.get_or_init(|| {
        let v: Value = serde_json::from_str(TABLE).expect("the generated table is JSON");
        v["versions"]["transformers"]
            .as_str()
            .unwrap_or("?")
            .to_string()
    })
}
