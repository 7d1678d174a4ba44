//! Options shared by `attend` and `equivariance`, and their conversion to library types.

use std::path::PathBuf;

use attnlab_core::attention::Mask;
use attnlab_core::blocks::Blocks;
use attnlab_core::choice::Choice;
use attnlab_core::experiment::FloatType;
use attnlab_core::layer::{InputSpec, PosKind};
use attnlab_core::rng::RngKind;
use ndarray::Array2;

/// How the inputs and the layer are set up.
#[derive(Debug, Clone, clap::Args)]
pub struct InputArgs {
    /// Text to tokenize (whitespace-separated tokens of the vocabulary A, B, ".") and embed with
    /// the course's table E; replaces the drawn X.
    #[arg(long, conflicts_with = "n")]
    pub text: Option<String>,
    /// Sequence length n of the drawn input X [default: 4, the course program's].
    #[arg(long, allow_negative_numbers = true)]
    pub n: Option<usize>,
    /// Model width d [default: 4; with --text, the embedding's width].
    #[arg(long, allow_negative_numbers = true)]
    pub dim: Option<usize>,
    /// Number of attention heads (more than 1 adds an output projection Wo).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    pub heads: usize,
    /// Seed of the generator.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub seed: u64,
    /// Generator: numpy reproduces np.random.seed(S) + randn bit for bit; std is ChaCha8.
    #[arg(long, value_parser = super::common::choice::<RngKind>(), default_value_t = RngKind::Std)]
    pub rng: RngKind,
    /// Fixed blocks (E, Wq, Wk, Wv, Wo, X) from a .json, .npy, .npz or .safetensors file, or a
    /// directory of .npy files; they replace the drawn matrices of the same name.
    #[arg(long)]
    pub blocks: Option<PathBuf>,
    /// Attention mask.
    #[arg(long, value_parser = super::common::choice::<Mask>(), default_value_t = Mask::None)]
    pub mask: Mask,
    /// Positional information: none, index (p·scale added), sinusoidal, learned (a fixed random
    /// table), rope (rotary on queries and keys).
    #[arg(long, value_parser = super::common::choice::<PosKind>(), default_value_t = PosKind::None)]
    pub pos: PosKind,
    /// Scale of the index signal (--pos index adds p·scale to every component of row p)
    /// [default: 0.1].
    #[arg(long, allow_negative_numbers = true)]
    pub index_scale: Option<f64>,
    /// Floating-point type the layer runs in.
    #[arg(long, value_parser = super::common::choice::<FloatType>(), default_value_t = FloatType::F64)]
    pub dtype: FloatType,
    /// Print one JSON object on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
}

impl InputArgs {
    /// The index signal's scale (0.1 unless given).
    pub fn index_scale(&self) -> f64 {
        self.index_scale.unwrap_or(0.1)
    }

    /// The library's input specification (loads --blocks).
    pub fn input_spec(&self) -> anyhow::Result<InputSpec> {
        if let Some(scale) = self.index_scale {
            if !scale.is_finite() {
                anyhow::bail!(
                    "invalid --index-scale: {scale}; expected a finite number (e.g. 0.1)"
                );
            }
            if self.pos != PosKind::Index {
                anyhow::bail!("--index-scale {scale} has no effect without --pos index; add --pos index or drop it");
            }
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

/// A matrix serialized as row-major nested arrays without copying it.
pub struct Rows<'a>(pub &'a Array2<f64>);

impl serde::Serialize for Rows<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(self.0.nrows()))?;
        for row in self.0.rows() {
            seq.serialize_element(&row.as_slice().map_or_else(|| row.to_vec(), <[f64]>::to_vec))?;
        }
        seq.end()
    }
}

/// Row-major nested rows of a matrix, for JSON.
pub fn nested(a: &Array2<f64>) -> Vec<Vec<f64>> {
    a.rows().into_iter().map(|r| r.to_vec()).collect()
}

/// The most rows a terminal table shows; larger matrices are elided (use --json).
pub const MAX_ROWS_SHOWN: usize = 12;
/// The most columns a terminal table shows (eight fit a 120-column terminal).
pub const MAX_COLS_SHOWN: usize = 8;

/// A matrix as a terminal table with row labels. Matrices larger than [`MAX_ROWS_SHOWN`] rows or
/// [`MAX_COLS_SHOWN`] columns show their first rows and columns and say how many were left out.
pub fn matrix_table(a: &Array2<f64>, row_labels: Option<&[String]>) -> comfy_table::Table {
    let (rows, cols) = (a.nrows().min(MAX_ROWS_SHOWN), a.ncols().min(MAX_COLS_SHOWN));
    let mut header = vec![String::new()];
    header.extend((0..cols).map(|j| j.to_string()));
    if cols < a.ncols() {
        header.push(format!("… {} more", a.ncols() - cols));
    }
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = super::output::table(&header_refs);
    for (i, row) in a.rows().into_iter().take(rows).enumerate() {
        let label = row_labels
            .and_then(|l| l.get(i))
            .map_or(i.to_string(), |l| format!("{i} {l}"));
        let mut cells = vec![label];
        cells.extend(row.iter().take(cols).map(|&v| format!("{v:.6}")));
        if cols < a.ncols() {
            cells.push("…".into());
        }
        t.add_row(cells);
    }
    if rows < a.nrows() {
        t.add_row(vec![format!(
            "… {} more rows (--json prints everything)",
            a.nrows() - rows
        )]);
    }
    t
}

/// A whole number written as `4096`, `1e6` or `2^20`; `None` for anything else.
pub fn whole_number(s: &str) -> Option<u64> {
    let t = s.trim();
    if let Ok(v) = t.parse::<u64>() {
        return Some(v);
    }
    if let Some((b, e)) = t.split_once('^') {
        return b.parse::<u64>().ok()?.checked_pow(e.parse::<u32>().ok()?);
    }
    let v: f64 = t.parse().ok()?;
    (v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < 1.8e19).then_some(v as u64)
}

/// Parses a count such as `4096`, `1e6` or `2^20` (for clap's `value_parser`).
pub fn parse_count(s: &str) -> Result<u64, String> {
    whole_number(s)
        .ok_or_else(|| format!("{s:?} is not a whole number; write e.g. 4096, 1e6 or 2^20"))
}

/// A clap value parser for a core [`Choice`] enum: lists the canonical names in `--help` and
/// in errors, accepts the enum's aliases too.
pub fn choice<T: Choice + Send + Sync + Clone>() -> impl clap::builder::TypedValueParser<Value = T>
{
    use clap::builder::{PossibleValue, TypedValueParser};
    let values: Vec<PossibleValue> = T::ALL
        .iter()
        .map(|c| PossibleValue::new(c.name()).aliases(c.aliases().iter().copied()))
        .collect();
    clap::builder::PossibleValuesParser::new(values)
        // Cannot fail: clap passes only the names and aliases listed above, which parse.
        .try_map(|s| T::parse(&s).map_err(|e| e.to_string()))
}
