//! Reading a `config.json` in named stages (the module doc of [`super`] has the rules):
//! 1. [`json_object`]: the JSON document;
//! 2. [`text_config`], [`rope_parameters`], [`layer_types`], [`set_entries`]: keys and nesting
//!    standardised (a wrapper's `text_config`, `rope_scaling` or `rope_parameters`, one
//!    parameter map per layer type);
//! 3. [`Class`]: the config class's defaults ([`super::defaults`]);
//! 4. the model family's quirks ([`super::family`], a table beside the class defaults);
//! 5. [`rope_set`]: each set's type, base, head and rotary dimension and parameters, then the
//!    model-wide facts (pairing, sliding windows, DeepSeek's softmax factor).

use serde_json::{Map, Value};

use super::family::{self, Family, LayerPattern};
use super::{defaults, Pairing, RopeConfig, RopeSet};
use crate::position::frequencies::scaling::params::{bad, boolean, num, text, uint, ConfigView};
use crate::position::frequencies::{yarn_get_mscale, RopeScaling, RopeType};
use crate::{Error, Result};

/// Rope types seen in configs that attnlab does not read, with the models that use them: the
/// refusal names both.
const UNSUPPORTED_TYPES: &[(&str, &str)] = &[(
    "axial",
    "vision encoders (Qwen2-VL's and Gemma-4's vision towers: 2-D patch positions, not a text rope)",
)];

/// Layer types a nested `rope_parameters` may be keyed by.
const KNOWN_LAYER_TYPES: &[&str] = &[
    "full_attention",
    "sliding_attention",
    "chunked_attention",
    "linear_attention",
    "local_attention",
    "global_attention",
];

type Object = Map<String, Value>;

fn short_num(x: f64) -> String {
    crate::number::short(x)
}

/// See [`RopeConfig::from_json`].
pub(super) fn from_json(raw: Value, name: &str) -> Result<RopeConfig> {
    let outer = json_object(&raw, name)?;
    let mut notes = Vec::new();
    let (top, model_type) = text_config(outer, &mut notes)?;
    let mt = model_type.as_deref().unwrap_or("");
    let family = family::of(mt);
    if let Some(scheme) = &family.no_rope {
        return Err(Error::invalid(
            "config",
            format!("model type {mt}"),
            format!("a model with rotary position embeddings ({mt} uses {scheme}, not RoPE: there is nothing to audit)"),
        ));
    }
    let class = Class {
        map: defaults::applying(mt, std::ptr::eq(top, outer)),
        model_type: mt,
    };
    let params = rope_parameters(top, &class, &mut notes)?;
    let num_layers = uint(top, "num_hidden_layers")?.map(|n| n as usize);
    let layer_list = layer_types(top, family, num_layers)?;
    let entries = set_entries(params, top, layer_list.as_deref(), &class, &mut notes)?;
    let max_pos = max_positions(top, &class, &mut notes)?;

    let count = |lt: &str| {
        layer_list
            .as_ref()
            .map(|l| l.iter().filter(|t| *t == lt).count())
    };
    // Llama-4: the rope layers are the chunked-attention ones (the others are NoPE).
    let rope_layers =
        (family.layer_pattern == Some(LayerPattern::Llama4)).then_some("chunked_attention");
    let mut sets = Vec::new();
    let mut first_params = &entries[0].1;
    for (i, (lt, p)) in entries.iter().enumerate() {
        let lt = lt.as_deref();
        if i == 0 || lt == Some("full_attention") {
            first_params = p;
        }
        let set = rope_set(
            &SetInput {
                params: p,
                top,
                layer_type: lt,
                class: &class,
                family,
                max_pos,
            },
            &mut notes,
        )?;
        let layers = match (lt, rope_layers) {
            (Some(l), _) => count(l),
            (None, Some(r)) => count(r),
            (None, None) => layer_list.as_ref().map(Vec::len),
        };
        let layer_type = match (lt, rope_layers) {
            (Some(l), _) => Some(l.to_string()),
            (None, Some(r)) if layers.is_some() => Some(r.into()),
            (None, _) => None,
        };
        sets.push(RopeSet {
            layer_type,
            layers,
            ..set
        });
    }
    let primary = sets
        .iter()
        .position(|s| s.layer_type.as_deref() == Some("full_attention"))
        .unwrap_or(0);
    if rope_layers.is_some() {
        if let (Some(r), Some(n)) = (sets[primary].layers, layer_list.as_ref().map(Vec::len)) {
            notes.push(format!(
                "llama4: rope on the {r} chunked-attention layers (attention_chunk_size); the other {} layers use no position encoding (NoPE)",
                n - r
            ));
        }
    }

    let pairing = if family.interleaved {
        notes.push(format!(
            "{mt}: rotary pairs are interleaved (x[2k], x[2k+1]), not half-split (x[k], x[k+d/2]); same frequencies, but the checkpoint's q/k weights differ from a NeoX-style model's by a fixed permutation, so weights and runtime must use the same convention"
        ));
        Pairing::Interleaved
    } else {
        Pairing::HalfSplit
    };

    let sliding_window = uint(top, "sliding_window")?;
    let sliding_layer_types: Vec<String> = match (&sliding_window, &layer_list) {
        (Some(_), Some(l)) => {
            let mut t: Vec<String> = l
                .iter()
                .filter(|x| x.contains("sliding") || x.contains("local"))
                .cloned()
                .collect();
            t.sort();
            t.dedup();
            t
        }
        _ => Vec::new(),
    };

    // DeepSeek-V2/V3 multiply the softmax scale by mscale² (yarn_apply_mscale).
    // Only when the config scales the rope (transformers: `rope_scaling is not None`; the
    // default type means none) and gives a non-zero mscale_all_dim.
    let softmax_scale_multiplier = if family.softmax_mscale {
        let msd = num(first_params, "mscale_all_dim")?.unwrap_or(0.0);
        let scaled = sets[primary].scaling.rope_type() != RopeType::Default;
        Some(match num(first_params, "factor")? {
            Some(f) if scaled && msd != 0.0 => {
                let m = yarn_get_mscale(f, msd);
                m * m
            }
            Some(_) | None => 1.0,
        })
    } else {
        None
    };

    let p = &sets[primary];
    let cfg = RopeConfig {
        raw: raw.clone(),
        name: name.to_string(),
        base: p.base,
        head_dim: p.head_dim,
        rotary_dim: p.rotary_dim,
        scaling: p.scaling.clone(),
        model_type,
        max_position_embeddings: max_pos,
        softmax_scale_multiplier,
        notes,
        primary,
        num_layers: num_layers.or(layer_list.as_ref().map(Vec::len)),
        sliding_window,
        sliding_layer_types,
        pairing,
        sets,
    };
    // Validate once now, so a bad config fails when loaded rather than when used.
    for i in 0..cfg.sets.len() {
        cfg.set_frequencies(i, None)?;
    }
    Ok(cfg)
}

/// Stage 1: the document must be a JSON object.
fn json_object<'a>(raw: &'a Value, name: &str) -> Result<&'a Object> {
    raw.as_object().ok_or_else(|| {
        Error::invalid(
            "config",
            format!("{name}: not a JSON object"),
            "a config.json object",
        )
    })
}

/// Stage 2: the language model's fields (a multimodal wrapper keeps them in `text_config`) and
/// its model type (the wrapper's class names its text config's class when the text config
/// does not say).
fn text_config<'a>(
    outer: &'a Object,
    notes: &mut Vec<String>,
) -> Result<(&'a Object, Option<String>)> {
    let wrapper_type = text(outer, "model_type")?.map(str::to_string);
    let top = match outer.get("text_config") {
        Some(Value::Object(t))
            if !outer.contains_key("hidden_size") && !outer.contains_key("head_dim") =>
        {
            let others: Vec<&str> = outer
                .iter()
                .filter(|(k, v)| k.ends_with("_config") && *k != "text_config" && v.is_object())
                .map(|(k, _)| k.as_str())
                .collect();
            let mut n = format!(
                "multimodal config{}: read its text_config",
                wrapper_type
                    .as_deref()
                    .map(|w| format!(" ({w})"))
                    .unwrap_or_default()
            );
            if !others.is_empty() {
                n += &format!(" ({} not audited)", others.join(", "));
            }
            notes.push(n);
            t
        }
        _ => outer,
    };
    let model_type = match (text(top, "model_type")?, wrapper_type) {
        (Some(t), _) => Some(t.to_string()),
        (None, Some(w)) if !std::ptr::eq(top, outer) => Some(
            defaults::class(&w)
                .and_then(|c| c.get("text_config"))
                .and_then(Value::as_str)
                .unwrap_or(&w)
                .to_string(),
        ),
        (None, w) => w,
    };
    Ok((top, model_type))
}

/// Stage 3: the config class whose defaults fill what the config leaves out.
struct Class<'a> {
    map: Option<&'static Object>,
    model_type: &'a str,
}

impl Class<'_> {
    fn get(&self, key: &str) -> Option<&'static Value> {
        self.map.and_then(|c| c.get(key))
    }

    fn num(&self, key: &str) -> Option<f64> {
        self.get(key).and_then(Value::as_f64)
    }

    /// How the notes name it: `model type llama (transformers 5.24.0)`.
    fn name(&self) -> String {
        format!(
            "model type {} (transformers {})",
            self.model_type,
            defaults::version()
        )
    }

    /// The class's default θ for a layer type (Gemma-3's classes have a global and a local one).
    fn theta(&self, layer_type: Option<&str>) -> Option<f64> {
        match (self.get("default_theta"), layer_type) {
            (Some(Value::Object(t)), Some(l)) if l.contains("sliding") || l.contains("local") => {
                t.get("local").and_then(Value::as_f64)
            }
            (Some(Value::Object(t)), _) => t.get("global").and_then(Value::as_f64),
            (Some(v), _) => v.as_f64(),
            (None, _) => None,
        }
    }
}

/// Stage 2: the rope parameters. `rope_scaling` wins over `rope_parameters` (5.x `rope_scaling
/// or rope_parameters`); neither: the class default when it is not the plain default type.
fn rope_parameters<'a>(
    top: &'a Object,
    class: &Class,
    notes: &mut Vec<String>,
) -> Result<&'a Object> {
    static EMPTY: std::sync::OnceLock<Object> = std::sync::OnceLock::new();
    let class_params = class.get("rope_parameters").and_then(Value::as_object);
    Ok(match top.get("rope_scaling") {
        Some(Value::Object(m)) if !m.is_empty() => m,
        None | Some(Value::Null) | Some(Value::Object(_)) => match top.get("rope_parameters") {
            Some(Value::Object(m)) => m,
            None | Some(Value::Null) => match class_params {
                Some(cp)
                    if cp.values().any(Value::is_object)
                        || cp
                            .get("rope_type")
                            .and_then(Value::as_str)
                            .is_some_and(|t| t != "default") =>
                {
                    notes.push(format!(
                        "no rope parameters: the class default of {}",
                        class.name()
                    ));
                    cp
                }
                _ => EMPTY.get_or_init(Map::new),
            },
            Some(v) => return Err(bad("rope_parameters", v, "an object or null")),
        },
        Some(v) => return Err(bad("rope_scaling", v, "an object or null")),
    })
}

/// Stage 2: the layer types, from the config's list, else from the family's pattern.
fn layer_types(
    top: &Object,
    family: &Family,
    num_layers: Option<usize>,
) -> Result<Option<Vec<String>>> {
    match top.get("layer_types") {
        Some(Value::Array(a)) => Ok(Some(
            a.iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| bad("layer_types", v, "a list of layer type names"))
                })
                .collect::<Result<_>>()?,
        )),
        None | Some(Value::Null) => match (family.layer_pattern, num_layers) {
            (Some(p), Some(n)) => layer_pattern(top, p, n).map(Some),
            _ => Ok(None),
        },
        Some(v) => Err(bad("layer_types", v, "a list of layer type names")),
    }
}

/// Layer types from a family's pattern: Gemma-3/4 (`sliding_window_pattern`, default 6: every
/// 6th layer global), Llama-4 (`no_rope_layers` or every `no_rope_layer_interval`-th layer
/// NoPE: the rope layers are chunked-attention ones).
fn layer_pattern(top: &Object, pattern: LayerPattern, n: usize) -> Result<Vec<String>> {
    let name = |full: bool| {
        if full {
            "full_attention".to_string()
        } else {
            "sliding_attention".to_string()
        }
    };
    Ok(match pattern {
        LayerPattern::Gemma3 | LayerPattern::Gemma4 => {
            let p = uint(top, "sliding_window_pattern")?.unwrap_or(6).max(1) as usize;
            let mut v: Vec<String> = (0..n).map(|i| name((i + 1) % p == 0)).collect();
            if pattern == LayerPattern::Gemma4 {
                if let Some(last) = v.last_mut() {
                    *last = name(true);
                }
            }
            v
        }
        LayerPattern::Llama4 => {
            let flags: Vec<bool> = match top.get("no_rope_layers") {
                Some(Value::Array(a)) if !a.is_empty() => {
                    a.iter().map(|v| v.as_f64().unwrap_or(1.0) != 0.0).collect()
                }
                _ => {
                    let k = uint(top, "no_rope_layer_interval")?.unwrap_or(4).max(1) as usize;
                    (0..n).map(|i| (i + 1) % k != 0).collect()
                }
            };
            let chunked = !matches!(top.get("attention_chunk_size"), Some(Value::Null));
            flags
                .iter()
                .map(|&rope| {
                    if rope && chunked {
                        "chunked_attention".into()
                    } else {
                        name(true)
                    }
                })
                .collect()
        }
    })
}

/// Stage 2: one parameter map per rope set — nested per layer type (v5), Gemma-3's /
/// ModernBERT's v4 pair of bases, or one map for every layer (`None`).
fn set_entries(
    params: &Object,
    top: &Object,
    layer_list: Option<&[String]>,
    class: &Class,
    notes: &mut Vec<String>,
) -> Result<Vec<(Option<String>, Object)>> {
    let declared: Vec<&str> = layer_list
        .into_iter()
        .flatten()
        .map(String::as_str)
        .chain(KNOWN_LAYER_TYPES.iter().copied())
        .collect();
    let nested: Vec<(Option<String>, Object)> = params
        .iter()
        .filter(|(k, _)| declared.contains(&k.as_str()))
        .filter_map(|(k, v)| v.as_object().map(|m| (Some(k.clone()), m.clone())))
        .collect();
    if !nested.is_empty() {
        let others: Vec<&str> = params
            .iter()
            .filter(|(k, v)| !v.is_object() && !declared.contains(&k.as_str()))
            .map(|(k, _)| k.as_str())
            .collect();
        let names: Vec<&str> = nested.iter().filter_map(|(k, _)| k.as_deref()).collect();
        let mut n = format!(
            "rope parameters nested per layer type: {} audited as separate sets",
            names.join(", ")
        );
        if !others.is_empty() {
            n += &format!(" (other entries ignored: {})", others.join(", "));
        }
        notes.push(n);
        return Ok(nested);
    }
    let pair = match class.get("default_theta") {
        Some(Value::Object(t)) if t.contains_key("global") && t.contains_key("local") => {
            (t["global"].as_f64(), t["local"].as_f64())
        }
        _ => return Ok(vec![(None, params.clone())]),
    };
    // v4 keys: Gemma-3 `rope_theta` + `rope_local_base_freq` (rope_scaling on the global
    // layers only); ModernBERT `global_rope_theta` + `local_rope_theta`.
    let (global, local) = pair;
    let g = num(params, "rope_theta")?
        .or(num(top, "rope_theta")?)
        .or(num(top, "global_rope_theta")?);
    let l = num(top, "rope_local_base_freq")?.or(num(top, "local_rope_theta")?);
    let mut full = params.clone();
    full.remove("rope_theta");
    full.insert(
        "rope_theta".into(),
        Value::from(g.or(global).unwrap_or(10000.0)),
    );
    if g.is_none() {
        notes.push(format!(
            "full_attention layers: no rope_theta: class default {} of {}",
            short_num(global.unwrap_or(10000.0)),
            class.name()
        ));
    }
    let mut sliding = Map::new();
    sliding.insert("rope_type".into(), Value::from("default"));
    sliding.insert(
        "rope_theta".into(),
        Value::from(l.or(local).unwrap_or(10000.0)),
    );
    if l.is_none() {
        notes.push(format!(
            "sliding_attention layers: no local base (rope_local_base_freq): class default {} of {}",
            short_num(local.unwrap_or(10000.0)),
            class.name()
        ));
    }
    Ok(vec![
        (Some("full_attention".into()), full),
        (Some("sliding_attention".into()), sliding),
    ])
}

/// `max_position_embeddings`, GPT-J's `n_positions`, else the class default.
fn max_positions(top: &Object, class: &Class, notes: &mut Vec<String>) -> Result<Option<u64>> {
    if let Some(m) = uint(top, "max_position_embeddings")? {
        return Ok(Some(m));
    }
    if let Some(m) = uint(top, "n_positions")? {
        return Ok(Some(m));
    }
    Ok(class.num("max_position_embeddings").map(|m| {
        notes.push(format!(
            "no max_position_embeddings: class default {} of {}",
            short_num(m),
            class.name()
        ));
        m as u64
    }))
}

/// What [`rope_set`] reads one rope set from.
struct SetInput<'a> {
    params: &'a Object,
    top: &'a Object,
    layer_type: Option<&'a str>,
    class: &'a Class<'a>,
    family: &'a Family,
    max_pos: Option<u64>,
}

/// Stage 5: one rope set — type, base, head and rotary dimension, parameters.
fn rope_set(inp: &SetInput, notes: &mut Vec<String>) -> Result<RopeSet> {
    let rope_type = rope_type(inp, notes)?;
    let base = base(inp, notes)?;
    let head_dim = head_dim(inp, notes)?;
    crate::position::frequencies::check_head_dim(head_dim)?;
    let rotary_dim = rotary_dim(inp, rope_type, head_dim, notes)?;
    // Read before the type's own parameters, for every type (a malformed factor is an error
    // even where the type ignores it).
    num(inp.params, "factor")?;
    let scaling = RopeScaling::from_config(
        rope_type,
        &mut ConfigView {
            params: inp.params,
            top: inp.top,
            model_type: inp.class.model_type,
            max_position_embeddings: inp.max_pos,
            notes,
        },
    )?;
    Ok(RopeSet {
        layer_type: inp.layer_type.map(str::to_string),
        layers: None,
        base,
        head_dim,
        rotary_dim,
        scaling,
    })
}

/// `rope_type`, else the legacy `type`, else `default`.
fn rope_type(inp: &SetInput, notes: &mut Vec<String>) -> Result<RopeType> {
    let type_name = match text(inp.params, "rope_type")? {
        Some(t) => t,
        None => text(inp.params, "type")?.unwrap_or("default"),
    };
    if let Some((_, users)) = UNSUPPORTED_TYPES.iter().find(|(t, _)| *t == type_name) {
        return Err(Error::invalid(
            "rope type",
            format!("{type_name:?} (used by {users})"),
            "a text rope type attnlab reads: default, linear, dynamic, yarn, longrope (or su), llama3, mrope, proportional",
        ));
    }
    let rope_type = RopeType::from_config_name(type_name, notes)?;
    match &inp.family.fixed_base {
        Some(fixed) if rope_type != RopeType::Default => Err(Error::invalid(
            "rope type",
            format!("{:?} for {}", rope_type.name(), inp.class.model_type),
            format!("default ({})", fixed.unscaled),
        )),
        _ => Ok(rope_type),
    }
}

/// θ: the parameters' `rope_theta`, the top level's, the family's key, else the class default.
fn base(inp: &SetInput, notes: &mut Vec<String>) -> Result<f64> {
    let mt = inp.class.model_type;
    if let Some(fixed) = &inp.family.fixed_base {
        notes.push(format!(
            "{mt}: base hard-coded to {} by {}",
            short_num(fixed.value),
            fixed.by
        ));
        return Ok(fixed.value);
    }
    let family_key = match &inp.family.base_key {
        Some(k) => num(inp.top, k)?,
        None => None,
    };
    if let Some(b) = num(inp.params, "rope_theta")?
        .or(num(inp.top, "rope_theta")?)
        .or(family_key)
    {
        return Ok(b);
    }
    let theta = inp
        .class
        .theta(inp.layer_type)
        .or(inp.family.base_default)
        .unwrap_or(10000.0);
    let which = inp
        .layer_type
        .map(|l| format!("{l} layers: "))
        .unwrap_or_default();
    notes.push(if mt.is_empty() {
        format!("{which}no rope_theta: class default {}", short_num(theta))
    } else {
        format!(
            "{which}no rope_theta: class default {} of {}",
            short_num(theta),
            inp.class.name()
        )
    });
    Ok(theta)
}

/// The head dimension: the family's rotated part (DeepSeek), Gemma-4's global head of the
/// full-attention layers, `head_dim`, the class's fixed head, else `hidden / heads`.
fn head_dim(inp: &SetInput, notes: &mut Vec<String>) -> Result<usize> {
    let (top, class, mt) = (inp.top, inp.class, inp.class.model_type);
    if let Some(part) = &inp.family.rope_head_dim {
        let d = uint(top, &part.key)?.unwrap_or(part.default) as usize;
        notes.push(format!(
            "{mt}: only {} = {d} dimensions of each q/k head rotate",
            part.key
        ));
        if boolean(top, "rope_interleave")?.unwrap_or(true) {
            notes.push(format!("{mt}: rope_interleave (default true): checkpoint rope dims are stored interleaved; transformers de-interleaves them and rotates half-split"));
        }
        return Ok(d);
    }
    let full_head = inp.layer_type == Some("full_attention")
        && class.map.is_some_and(|c| {
            c.contains_key("full_attention_head_dim") && !c.contains_key("head_dim")
        });
    if full_head {
        // Gemma-4: full-attention layers have their own (global) head dimension.
        return Ok(match uint(top, "global_head_dim")? {
            Some(d) => d as usize,
            None => {
                let d = class.num("full_attention_head_dim").unwrap_or(0.0) as usize;
                notes.push(format!(
                    "full_attention layers: no global_head_dim: class default {d} of {}",
                    class.name()
                ));
                d
            }
        });
    }
    if let Some(d) = uint(top, "head_dim")? {
        return Ok(d as usize);
    }
    let knows_hidden = top.contains_key("hidden_size") || top.contains_key("n_embd");
    if let Some(d) = class
        .num("head_dim")
        .filter(|_| !knows_hidden || inp.family.fixed_head_dim)
    {
        notes.push(format!(
            "no head_dim, hidden_size: class default head_dim {} of {}",
            short_num(d),
            class.name()
        ));
        return Ok(d as usize);
    }
    let mut key_or_class = |key: &str, alt: &str| -> Result<Option<f64>> {
        if let Some(v) = num(top, key)? {
            return Ok(Some(v));
        }
        if let Some(v) = num(top, alt)? {
            return Ok(Some(v));
        }
        Ok(class.num(key).inspect(|v| {
            notes.push(format!(
                "no {key}: class default {} of {}",
                short_num(*v),
                class.name()
            ))
        }))
    };
    let hidden = key_or_class("hidden_size", "n_embd")?;
    let heads = key_or_class("num_attention_heads", "n_head")?;
    head_from_hidden(hidden, heads)
}

/// How many leading dimensions rotate: the family's key (GPT-J), the whole head for the
/// proportional type, else `head_dim · partial_rotary_factor` where the type honours it.
fn rotary_dim(
    inp: &SetInput,
    rope_type: RopeType,
    head_dim: usize,
    notes: &mut Vec<String>,
) -> Result<usize> {
    let (params, top, class, mt) = (inp.params, inp.top, inp.class, inp.class.model_type);
    let class_partial = class
        .get("rope_parameters")
        .and_then(|p| match inp.layer_type {
            Some(l) if p.get(l).is_some() => p.get(l),
            _ => Some(p),
        })
        .and_then(|p| p.get("partial_rotary_factor"))
        .and_then(Value::as_f64);
    let partial = match (
        num(params, "partial_rotary_factor")?,
        num(top, "partial_rotary_factor")?,
        &inp.family.partial_key,
    ) {
        (Some(f), _, _) | (None, Some(f), _) => Some(f),
        (None, None, Some(k)) => {
            Some(num(top, k)?.unwrap_or(inp.family.partial_default.unwrap_or(1.0)))
        }
        (None, None, None) => match class_partial {
            Some(f) if f != 1.0 => {
                let which = inp
                    .layer_type
                    .map(|l| format!("{l} layers: "))
                    .unwrap_or_default();
                notes.push(format!(
                    "{which}no partial_rotary_factor: class default {} of {}",
                    short_num(f),
                    class.name()
                ));
                Some(f)
            }
            _ => None,
        },
    };
    if let Some(f) = partial {
        if !(f > 0.0 && f <= 1.0) {
            return Err(Error::invalid(
                "config key partial_rotary_factor",
                f,
                "a fraction in (0, 1]",
            ));
        }
    }
    if let Some(k) = &inp.family.rotary_dim_key {
        return Ok(uint(top, k)?.map_or(head_dim, |r| r as usize));
    }
    if rope_type == RopeType::Proportional {
        // The whole head: the fraction decides how many planes rotate (the rest are NoPE).
        return Ok(head_dim);
    }
    let honours = class
        .get("default_honours_partial")
        .and_then(Value::as_bool)
        .unwrap_or(inp.family.default_honours_partial);
    Ok(match partial {
        Some(f) if !rope_type.scales() && !honours => {
            if f < 1.0 {
                notes.push(format!(
                    "partial_rotary_factor {f} ignored: transformers 5.x default rope of model type {mt:?} rotates the whole head"
                ));
            }
            head_dim
        }
        Some(f) => (head_dim as f64 * f) as usize,
        None => head_dim,
    })
}

/// `hidden_size / num_attention_heads` (floor), both required positive integers.
fn head_from_hidden(hidden: Option<f64>, heads: Option<f64>) -> Result<usize> {
    let missing = |what: &str| {
        Error::invalid(
            "config",
            format!("missing {what}"),
            "hidden_size and num_attention_heads (or head_dim)",
        )
    };
    let h = hidden.ok_or_else(|| missing("hidden_size"))?;
    let n = heads.ok_or_else(|| missing("num_attention_heads"))?;
    for (key, v) in [("hidden_size", h), ("num_attention_heads", n)] {
        if !(v >= 1.0 && v.fract() == 0.0) {
            return Err(Error::invalid(
                format!("config key {key}"),
                v,
                "a positive integer",
            ));
        }
    }
    let d = h as u64 / n as u64;
    let max = crate::position::frequencies::MAX_ROTARY_DIM;
    if d > max as u64 {
        return Err(Error::invalid(
            "head dimension",
            format!("{d} (hidden_size {h} / num_attention_heads {n})"),
            format!("at most {max} columns per head"),
        ));
    }
    Ok(d as usize)
}
