//! `attnlab attend`: one forward pass, printing the weights and the output.

use attnlab_core::experiment::FloatType;
use attnlab_core::layer::{Inputs, LayerKind, LayerSpec, Readout};
use attnlab_core::Real;

use super::common::{matrix_table, InputArgs, Rows};
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
        index_scale: a.index_scale(),
        ..LayerSpec::default()
    };
    let (output, weights) = match a.dtype {
        FloatType::F64 => forward::<f64>(&spec, &inputs)?,
        FloatType::F32 => forward::<f32>(&spec, &inputs)?,
    };
    let (n, d) = inputs.x.dim();
    if a.json {
        // A typed document streamed by serde (a json! value of a 4096×4096 weight matrix would
        // hold gigabytes of boxed numbers).
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            n: usize,
            dim: usize,
            heads: usize,
            seed: u64,
            rng: &'a str,
            mask: &'a str,
            pos: String,
            dtype: &'a str,
            tokens: &'a Option<Vec<String>>,
            #[serde(rename = "X")]
            x: Rows<'a>,
            #[serde(rename = "Wq")]
            wq: Rows<'a>,
            #[serde(rename = "Wk")]
            wk: Rows<'a>,
            #[serde(rename = "Wv")]
            wv: Rows<'a>,
            #[serde(rename = "Wo")]
            wo: Option<Rows<'a>>,
            weights: Rows<'a>,
            #[serde(skip_serializing_if = "Option::is_none")]
            weights_per_head: Option<Vec<Rows<'a>>>,
            output: Rows<'a>,
        }
        print_json(&Doc {
            n,
            dim: d,
            heads: inputs.heads,
            seed: a.seed,
            rng: a.rng.name(),
            mask: a.mask.name(),
            pos: spec_pos(&spec),
            dtype: a.dtype.name(),
            tokens: &inputs.tokens,
            x: Rows(&inputs.x),
            wq: Rows(&inputs.wq),
            wk: Rows(&inputs.wk),
            wv: Rows(&inputs.wv),
            wo: inputs.wo.as_ref().map(Rows),
            weights: Rows(&weights[0]),
            weights_per_head: (inputs.heads > 1).then(|| weights.iter().map(Rows).collect()),
            output: Rows(&output),
        })?;
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
