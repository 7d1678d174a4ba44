//! `attnlab embed`: tokens → labels → one-hot → embedding rows, and basis changes.

use attnlab_core::blocks::Blocks;
use attnlab_core::embedding::{basis_change, Embedding};
use attnlab_core::rng::{Gaussian, StdGaussian};
use attnlab_core::tokenizer::Vocabulary;
use ndarray::Array2;
use serde_json::json;

use super::output::{print_json, sci, table};
use super::Outcome;
use attnlab_render::text::matrix_table;

/// Options of `attnlab embed`.
#[derive(Debug, clap::Args)]
pub struct EmbedArgs {
    /// Blocks file with an embedding table E (and optionally "vocab"); default: the course's
    /// 3×2 table for the vocabulary (A, B, .).
    #[arg(long)]
    pub blocks: Option<std::path::PathBuf>,
    /// Text to tokenize and embed.
    #[arg(long, default_value = "A B")]
    pub text: String,
    /// Also show that h → S h with the next linear map W → W S⁻¹ (in rows: H → H·S, W → S⁻¹·W)
    /// leaves the output unchanged,
    /// and that the same change pushed through ReLU, softmax or layer norm does not.
    #[arg(long)]
    pub basis_change: bool,
    /// Seed of the random S and W of the basis-change experiment.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub seed: u64,
    /// Print one JSON object on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: EmbedArgs) -> anyhow::Result<Outcome> {
    let blocks = match &args.blocks {
        Some(p) => Some(Blocks::load(p)?),
        None => None,
    };
    let table_e = match blocks.as_ref().and_then(|b| b.get("E")) {
        Some(e) => Embedding::new(e.clone())?,
        None if blocks.is_some() => anyhow::bail!(
            "the blocks file has no embedding table E; add an array named E (vocab × dim)"
        ),
        None => Embedding::example(),
    };
    let vocab = Vocabulary::for_table(
        blocks.as_ref().and_then(|b| b.vocab.as_deref()),
        table_e.vocab(),
    )?;
    let ids = vocab.encode(&args.text)?;
    let h = table_e.lookup(&ids)?;
    let mut one_hot_rows = Vec::new();
    let mut exact = true;
    for &id in &ids {
        let prod = table_e.one_hot_product(id)?;
        exact &= prod == table_e.table().row(id);
        one_hot_rows.push(attnlab_core::embedding::one_hot(id, vocab.len())?.to_vec());
    }
    let basis = if args.basis_change {
        let d = table_e.dim();
        let mut g = StdGaussian::new(args.seed);
        let s = g.randn(d, d);
        let w = g.randn(d, d);
        Some((
            s.clone(),
            w.clone(),
            basis_change(h.view(), w.view(), s.view())?,
        ))
    } else {
        None
    };
    let tokens: Vec<String> = ids.iter().map(|&i| vocab.tokens()[i].clone()).collect();
    let linear_ok = basis.as_ref().is_none_or(|(_, _, c)| c[0].unchanged);
    if args.json {
        print_json(&json!({
            "vocab": vocab.tokens(),
            "E": nested(&table_e.table().to_owned()),
            "vocab_size": vocab.len(),
            "dim": table_e.dim(),
            "tokens": tokens,
            "ids": ids,
            "one_hot": one_hot_rows,
            "one_hot_times_E_equals_row": exact,
            "H": nested(&h),
            "basis_change": basis.as_ref().map(|(s, w, c)| json!({"S": nested(s), "W": nested(w), "cases": c})),
        }))?;
        return Ok(Outcome::from_bool(exact && linear_ok));
    }
    println!("vocabulary {:?} (size {}), representation dimension {} — independent of the vocabulary size", vocab.tokens(), vocab.len(), table_e.dim());
    println!(
        "\nembedding table E ({}×{})\n{}",
        table_e.vocab(),
        table_e.dim(),
        matrix_table(&table_e.table().to_owned(), Some(vocab.tokens()))
    );
    let mut t = table(&["token", "label", "one-hot e", "e·E", "E[label]", "equal"]);
    for (&id, tok) in ids.iter().zip(&tokens) {
        let prod = table_e.one_hot_product(id)?;
        let row = table_e.table().row(id).to_owned();
        t.add_row(vec![
            tok.clone(),
            id.to_string(),
            format!(
                "{:?}",
                attnlab_core::embedding::one_hot(id, vocab.len())?.to_vec()
            ),
            format!("{:?}", prod.to_vec()),
            format!("{:?}", row.to_vec()),
            if prod == row {
                "exactly".into()
            } else {
                "NO".into()
            },
        ]);
    }
    println!("\n{t}");
    let is_identity = h.nrows() == h.ncols() && h == Array2::<f64>::eye(h.nrows());
    println!(
        "\nH = stacked rows for {:?}{}\n{}",
        args.text,
        if is_identity {
            " (the identity matrix)"
        } else {
            ""
        },
        matrix_table(&h, Some(&tokens))
    );
    if let Some((s, _, cases)) = &basis {
        println!("\nbasis change: H → H·S, next linear map W → S⁻¹·W (S random, seed {}; κ∞(S) enters the tolerance)", args.seed);
        println!("S =\n{}", matrix_table(s, None));
        let mut b = table(&[
            "interface",
            "max |changed − original|",
            "tolerance",
            "margin",
            "output unchanged?",
        ]);
        for c in cases {
            b.add_row(vec![
                c.interface.name().to_string(),
                sci(c.max_abs_error),
                sci(c.tolerance),
                sci(c.margin),
                if c.unchanged {
                    "yes (absorbed)".into()
                } else {
                    "no (not a symmetry)".into()
                },
            ]);
        }
        println!("{b}");
    }
    Ok(Outcome::from_bool(exact && linear_ok))
}

/// TRANSITIONAL: row-major nested rows of a matrix, until embed has its report type.
fn nested(a: &ndarray::Array2<f64>) -> Vec<Vec<f64>> {
    a.rows().into_iter().map(|r| r.to_vec()).collect()
}
