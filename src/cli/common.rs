//! Options shared by `attend` and `equivariance`, and their conversion to library types.

use std::path::PathBuf;

use attnlab::attention::Mask;
use attnlab::blocks::Blocks;
use attnlab::experiment::FloatType;
use attnlab::layer::{InputSpec, PosKind};
use attnlab::rng::RngKind;
use ndarray::Array2;

/// How the inputs and the layer are set up.
#[derive(Debug, Clone, clap::Args)]
pub struct InputArgs {
    /// Text to tokenize (whitespace-separated tokens of the vocabulary A, B, ".") and embed with
    /// the course's table E; replaces the drawn X.
    #[arg(long, conflicts_with = "n")]
    pub text: Option<String>,
    /// Sequence length n of the drawn input X [default: 4, the course program's].
    #[arg(long)]
    pub n: Option<usize>,
    /// Model width d [default: 4; with --text, the embedding's width].
    #[arg(long)]
    pub dim: Option<usize>,
    /// Number of attention heads (more than 1 adds an output projection Wo).
    #[arg(long, default_value_t = 1)]
    pub heads: usize,
    /// Seed of the generator.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Generator: numpy reproduces np.random.seed(S) + randn bit for bit; std is ChaCha8.
    #[arg(long, value_enum, default_value_t = RngKind::Std)]
    pub rng: RngKind,
    /// Fixed blocks (E, Wq, Wk, Wv, Wo, X) from a .json, .npy, .npz or .safetensors file, or a
    /// directory of .npy files; they replace the drawn matrices of the same name.
    #[arg(long)]
    pub blocks: Option<PathBuf>,
    /// Attention mask.
    #[arg(long, value_enum, default_value_t = Mask::None)]
    pub mask: Mask,
    /// Positional information: none, index (p·scale added), sinusoidal, learned (a fixed random
    /// table), rope (rotary on queries and keys).
    #[arg(long, value_enum, default_value_t = PosKind::None)]
    pub pos: PosKind,
    /// Scale of the index signal (--pos index adds p·scale to every component of row p).
    #[arg(long, default_value_t = 0.1)]
    pub index_scale: f64,
    /// Floating-point type the layer runs in.
    #[arg(long, value_enum, default_value_t = FloatType::F64)]
    pub dtype: FloatType,
    /// Print one JSON object on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
}

impl InputArgs {
    /// The library's input specification (loads --blocks).
    pub fn input_spec(&self) -> anyhow::Result<InputSpec> {
        if !self.index_scale.is_finite() {
            anyhow::bail!(
                "invalid --index-scale: {}; expected a finite number (e.g. 0.1)",
                self.index_scale
            );
        }
        let blocks = match &self.blocks {
            Some(p) => Some(Blocks::load(p)?),
            None => None,
        };
        Ok(InputSpec {
            n: self.n,
            dim: self.dim,
            text: self.text.clone(),
            heads: self.heads,
            seed: self.seed,
            rng: self.rng,
            blocks,
        })
    }
}

/// Row-major nested rows of a matrix, for JSON.
pub fn nested(a: &Array2<f64>) -> Vec<Vec<f64>> {
    a.rows().into_iter().map(|r| r.to_vec()).collect()
}

/// A matrix as a terminal table with row labels.
pub fn matrix_table(a: &Array2<f64>, row_labels: Option<&[String]>) -> comfy_table::Table {
    let mut header = vec![String::new()];
    header.extend((0..a.ncols()).map(|j| j.to_string()));
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = super::output::table(&header_refs);
    for (i, row) in a.rows().into_iter().enumerate() {
        let label = row_labels
            .and_then(|l| l.get(i))
            .map_or(i.to_string(), |l| format!("{i} {l}"));
        let mut cells = vec![label];
        cells.extend(row.iter().map(|&v| format!("{v:.6}")));
        t.add_row(cells);
    }
    t
}
