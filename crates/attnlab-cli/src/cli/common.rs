//! Options shared by `attend` and `equivariance`, and their conversion to library types.

use std::path::PathBuf;

use attnlab_core::api::layer_input::LayerInput;
use attnlab_core::api::value::BlocksSource;
use attnlab_core::attention::Mask;
use attnlab_core::choice::Choice;
use attnlab_core::layer::{defaults, PosKind};
use attnlab_core::numeric::Dtype;
use attnlab_core::rng::RngKind;

/// How the inputs and the layer are set up.
#[derive(Debug, Clone, clap::Args)]
pub struct InputArgs {
    /// Text to tokenize (whitespace-separated tokens of the vocabulary A, B, ".") and embed with
    /// the course's table E; replaces the drawn X.
    #[arg(long, conflicts_with = "n")]
    pub text: Option<String>,
    #[arg(long, allow_negative_numbers = true, help = format!("Sequence length n of the drawn input X [default: {}, the course program's]", defaults::N))]
    pub n: Option<usize>,
    #[arg(long, allow_negative_numbers = true, help = format!("Model width d [default: {}; with --text, the embedding's width]", defaults::DIM))]
    pub dim: Option<usize>,
    /// Number of attention heads (more than 1 adds an output projection Wo).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    pub heads: usize,
    /// Seed of the generator (numpy: 0 to 2^32 − 1; std: any 64-bit seed).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub seed: u64,
    /// Generator: numpy reproduces np.random.seed(S) + randn bit for bit, so the defaults
    /// (seed 0, n = d = 4) are the course program; std is ChaCha8.
    #[arg(long, value_parser = super::common::choice::<RngKind>(), default_value_t = defaults::RNG)]
    pub rng: RngKind,
    /// Fixed blocks (E, Wq, Wk, Wv, Wo, X) from a .json, .npy, .npz or .safetensors file, or a
    /// directory of .npy files (a pipe or - for standard input: JSON, .npz or .safetensors);
    /// they replace the drawn matrices of the same name.
    #[arg(long)]
    pub blocks: Option<PathBuf>,
    /// Attention mask.
    #[arg(long, value_parser = super::common::choice::<Mask>(), default_value_t = Mask::None)]
    pub mask: Mask,
    /// Positional information: none, index (p·scale added), sinusoidal, learned (a fixed random
    /// table), rope (rotary on queries and keys).
    #[arg(long, value_parser = super::common::choice::<PosKind>(), default_value_t = PosKind::None)]
    pub pos: PosKind,
    #[arg(long, allow_negative_numbers = true, help = format!("Scale of the index signal (--pos index adds p·scale to every component of row p) [default: {}]", defaults::INDEX_SCALE))]
    pub index_scale: Option<f64>,
    /// Floating-point type the layer runs in: f64 or f32 (bf16 and f16 are emulated by the
    /// rope commands, not by a layer).
    #[arg(long, value_parser = super::common::choice::<Dtype>(), default_value_t = Dtype::F64)]
    pub dtype: Dtype,
    /// Print one JSON object on stdout instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Write every chart of the command (SVG) into DIR: attend the weights heat map of each
    /// head, equivariance the margin of each check.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
}

impl InputArgs {
    /// The core's request fields.
    pub fn layer_input(&self) -> LayerInput {
        LayerInput {
            text: self.text.clone(),
            n: self.n,
            dim: self.dim,
            heads: self.heads,
            seed: self.seed,
            rng: self.rng,
            blocks: self.blocks.clone().map(BlocksSource::Path),
            mask: self.mask,
            pos: self.pos,
            index_scale: self.index_scale,
            dtype: self.dtype,
        }
    }
}

/// A clap value parser for a core [`Choice`] enum: lists the canonical names (and each one's
/// aliases) in `--help` and in errors, and accepts what the core accepts — every name and alias,
/// in any ASCII case (`BF16`, `Half`).
pub fn choice<T: Choice + Send + Sync + Clone + 'static>() -> ChoiceParser<T> {
    ChoiceParser(std::marker::PhantomData)
}

/// See [`choice`].
#[derive(Clone)]
pub struct ChoiceParser<T>(std::marker::PhantomData<T>);

impl<T: Choice + Send + Sync + Clone + 'static> clap::builder::TypedValueParser
    for ChoiceParser<T>
{
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        use clap::error::{ContextKind, ContextValue, ErrorKind};
        let text = value.to_string_lossy();
        T::parse(&text).map_err(|_| {
            let mut err = clap::Error::new(ErrorKind::InvalidValue).with_cmd(cmd);
            if let Some(a) = arg {
                err.insert(ContextKind::InvalidArg, ContextValue::String(a.to_string()));
            }
            err.insert(
                ContextKind::InvalidValue,
                ContextValue::String(text.to_string()),
            );
            err.insert(
                ContextKind::ValidValue,
                ContextValue::Strings(T::ALL.iter().map(|c| c.name().to_string()).collect()),
            );
            err
        })
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        use clap::builder::PossibleValue;
        // The aliases are listed by `--help` (clap hides aliases otherwise).
        Some(Box::new(T::ALL.iter().map(|c| {
            let v = PossibleValue::new(c.name()).aliases(c.aliases().iter().copied());
            if c.aliases().is_empty() {
                v
            } else {
                v.help(format!("also {}", c.aliases().join(", ")))
            }
        })))
    }
}
