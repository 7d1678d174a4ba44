//! `attnlab predict`: the complete two-token prediction, every intermediate printed.

use attnlab_core::blocks::Blocks;
use attnlab_core::predict::predict;
use ndarray::Array2;

use super::output::{num, print_json, table};
use super::Outcome;
use attnlab_render::text::matrix_table;

/// Options of `attnlab predict`.
#[derive(Debug, clap::Args)]
pub struct PredictArgs {
    /// The context: whitespace-separated tokens of the vocabulary (A, B, . by default).
    #[arg(long, default_value = "A B")]
    pub text: String,
    /// Blocks file (E, Wq, Wk, Wv, U and optionally "vocab"); missing blocks keep their defaults:
    /// the course table E, identity Wq = Wk = Wv, and U = Eᵀ (tied embeddings).
    #[arg(long)]
    pub blocks: Option<std::path::PathBuf>,
    /// Print one JSON object on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: PredictArgs) -> anyhow::Result<Outcome> {
    let blocks = match &args.blocks {
        Some(p) => Some(Blocks::load(p)?),
        None => None,
    };
    let p = predict(&args.text, blocks.as_ref())?;
    if args.json {
        print_json(&p)?;
        return Ok(Outcome::Holds);
    }
    let toks = &p.tokens;
    println!(
        "context {:?} → tokens {:?} → labels {:?} (vocabulary {:?})",
        args.text, p.tokens, p.ids, p.vocab
    );
    let show = |title: &str, a: &Array2<f64>, labels: Option<&[String]>| {
        println!("\n{title}\n{}", matrix_table(a, labels));
    };
    show(
        &format!(
            "E, embedding table ({}×{}) [{}]",
            p.e.nrows(),
            p.e.ncols(),
            if blocks.as_ref().and_then(|b| b.get("E")).is_some() {
                "blocks file"
            } else {
                "default: the course table"
            }
        ),
        &p.e,
        Some(&p.vocab),
    );
    show("H = E[labels], the stacked embeddings", &p.h, Some(toks));
    for (name, m) in [("Wq", &p.wq), ("Wk", &p.wk), ("Wv", &p.wv)] {
        show(&format!("{name} [{}]", p.sources[name]), m, None);
    }
    show("Q = H·Wq", &p.q, Some(toks));
    show("K = H·Wk", &p.k, Some(toks));
    show("V = H·Wv", &p.v, Some(toks));
    let mut header = vec![String::new()];
    header.extend(toks.iter().enumerate().map(|(j, t)| format!("{j} {t}")));
    let refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut s = table(&refs);
    for (i, row) in p.scores.iter().enumerate() {
        let mut cells = vec![format!("{i} {}", toks[i])];
        cells.extend(
            row.iter()
                .map(|x| x.map_or("−∞ (masked)".to_string(), |v| format!("{v:.6}"))),
        );
        s.add_row(cells);
    }
    println!("\nscores = Q·Kᵀ/√d_k, causal mask (row = query, column = key)\n{s}");
    show("weights = softmax_row(scores)", &p.weights, Some(toks));
    show("output = weights·V", &p.output, Some(toks));
    let mut r = table(&["", "value"]);
    for (j, x) in p.readout.iter().enumerate() {
        r.add_row(vec![j.to_string(), format!("{x:.6}")]);
    }
    println!(
        "\nreadout = output row {} (the last position, {:?})\n{r}",
        p.tokens.len() - 1,
        p.tokens.last().expect("at least one token")
    );
    show(&format!("U, unembedding [{}]", p.sources["U"]), &p.u, None);
    let mut v = table(&["next token", "logit = readout·U", "probability = softmax"]);
    for (i, tok) in p.vocab.iter().enumerate() {
        let mark = if i == p.prediction_id { " ◀" } else { "" };
        v.add_row(vec![
            format!("{tok}{mark}"),
            format!("{:.6}", p.logits[i]),
            format!("{:.6}", p.probabilities[i]),
        ]);
    }
    println!("\n{v}");
    println!(
        "\nprediction: {:?} (probability {})",
        p.prediction,
        num(p.probabilities[p.prediction_id])
    );
    Ok(Outcome::Holds)
}
