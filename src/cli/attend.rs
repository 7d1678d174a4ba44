//! `attnlab attend`: one forward pass, printing the weights and the output.

use attnlab::experiment::FloatType;
use attnlab::layer::{Inputs, LayerKind, LayerSpec, Readout};
use attnlab::Real;
use serde_json::json;

use super::common::{matrix_table, nested, InputArgs};
use super::output::print_json;
use super::Outcome;

/// Options of `attnlab attend`.
#[derive(Debug, clap::Args)]
pub struct AttendArgs {
    #[command(flatten)]
    pub input: InputArgs,
}

fn forward<T: Real>(
    spec: &LayerSpec,
    inputs: &Inputs,
) -> anyhow::Result<(ndarray::Array2<f64>, Vec<ndarray::Array2<f64>>)> {
    let f = spec.build::<T>(inputs)?;
    let h = inputs.x.mapv(T::from_f64);
    let out = f(h.view())?.mapv(|v| v.to_f64());
    let weights = (0..inputs.heads)
        .map(|head| -> anyhow::Result<_> {
            Ok(spec.weights_fn::<T>(inputs, head)?(h.view())?.mapv(|v| v.to_f64()))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok((out, weights))
}

pub fn run(args: AttendArgs) -> anyhow::Result<Outcome> {
    let a = &args.input;
    let inputs = a.input_spec()?.build()?;
    let spec = LayerSpec {
        kind: LayerKind::Attention,
        pos: a.pos,
        mask: a.mask,
        readout: Readout::None,
        index_scale: a.index_scale,
        ..LayerSpec::default()
    };
    let (output, weights) = match a.dtype {
        FloatType::F64 => forward::<f64>(&spec, &inputs)?,
        FloatType::F32 => forward::<f32>(&spec, &inputs)?,
    };
    let (n, d) = inputs.x.dim();
    if a.json {
        let mut v = json!({
            "n": n, "dim": d, "heads": inputs.heads, "seed": a.seed, "rng": a.rng.name(),
            "mask": a.mask.name(), "pos": spec_pos(&spec), "dtype": a.dtype.name(),
            "tokens": inputs.tokens,
            "X": nested(&inputs.x), "Wq": nested(&inputs.wq), "Wk": nested(&inputs.wk), "Wv": nested(&inputs.wv),
            "Wo": inputs.wo.as_ref().map(nested),
            "weights": nested(&weights[0]),
            "output": nested(&output),
        });
        if inputs.heads > 1 {
            v["weights_per_head"] = json!(weights.iter().map(nested).collect::<Vec<_>>());
        }
        print_json(&v)?;
        return Ok(Outcome::Holds);
    }
    let labels = inputs.tokens.clone();
    println!(
        "self-attention: n = {n} tokens, d = {d}, {} head(s), mask {}, positions {}, {} (seed {}, rng {})",
        inputs.heads,
        a.mask.name(),
        spec_pos(&spec),
        a.dtype.name(),
        a.seed,
        a.rng.name()
    );
    println!(
        "\nX (input rows)\n{}",
        matrix_table(&inputs.x, labels.as_deref())
    );
    for (h, w) in weights.iter().enumerate() {
        let title = if inputs.heads > 1 {
            format!("weights of head {h}")
        } else {
            "weights A = softmax(Q·Kᵀ/√d_k) (row = query, column = key)".into()
        };
        println!("\n{title}\n{}", matrix_table(w, labels.as_deref()));
    }
    println!(
        "\noutput (A·V{})\n{}",
        if inputs.heads > 1 {
            " per head, concatenated, ·Wo"
        } else {
            ""
        },
        matrix_table(&output, labels.as_deref())
    );
    Ok(Outcome::Holds)
}

/// The positional option's name.
pub fn spec_pos(spec: &LayerSpec) -> String {
    serde_json::to_value(spec.pos)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
