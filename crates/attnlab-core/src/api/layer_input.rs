//! The options that set up a layer and its inputs, shared by `attend` and `equivariance`.

use serde::{Deserialize, Serialize};

use super::value::BlocksSource;
use super::Context;
use crate::attention::Mask;
use crate::layer::{InputSpec, Inputs, LayerKind, LayerSpec, PosKind, Readout};
use crate::rng::RngKind;
use crate::{Dtype, Error, Result};

/// How the inputs and the layer are set up (the CLI's `attend` options).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LayerInput {
    /// Text to tokenize (whitespace-separated tokens of the vocabulary A, B, ".") and embed with
    /// the course's table E; replaces the drawn X.
    pub text: Option<String>,
    /// Sequence length n of the drawn input X (default 4, the course program's).
    pub n: Option<usize>,
    /// Model width d (default 4; with `text`, the embedding's width).
    pub dim: Option<usize>,
    /// Number of attention heads (more than 1 adds an output projection Wo).
    pub heads: usize,
    /// Seed of the generator.
    pub seed: u64,
    /// Generator: numpy (the default) reproduces `np.random.seed(S)` + `randn` bit for bit, so
    /// the defaults (seed 0, n = d = 4) are the course program; std is ChaCha8 (any 64-bit seed).
    pub rng: RngKind,
    /// Fixed blocks (E, Wq, Wk, Wv, Wo, X) that replace the drawn matrices of the same name.
    pub blocks: Option<BlocksSource>,
    /// Attention mask.
    pub mask: Mask,
    /// Positional information.
    pub pos: PosKind,
    /// Scale of the index signal (`pos = index` adds p·scale to every component of row p);
    /// default 0.1.
    pub index_scale: Option<f64>,
    /// Floating-point type the layer runs in (f64 or f32).
    pub dtype: Dtype,
}

impl Default for LayerInput {
    fn default() -> Self {
        LayerInput {
            text: None,
            n: None,
            dim: None,
            heads: 1,
            seed: 0,
            rng: RngKind::Numpy,
            blocks: None,
            mask: Mask::None,
            pos: PosKind::None,
            index_scale: None,
            dtype: Dtype::F64,
        }
    }
}

/// The default scale of the index signal.
pub const DEFAULT_INDEX_SCALE: f64 = 0.1;

impl LayerInput {
    /// The index signal's scale (0.1 unless given).
    pub fn index_scale(&self) -> f64 {
        self.index_scale.unwrap_or(DEFAULT_INDEX_SCALE)
    }

    /// Validates the options and draws / loads the inputs.
    ///
    /// # Errors
    /// A non-finite or ignored `index_scale`, a dtype other than f32/f64, unreadable blocks, and
    /// everything [`InputSpec::build`] refuses.
    pub fn inputs(&self, ctx: &Context) -> Result<Inputs> {
        self.dtype.require_layer()?;
        if let Some(scale) = self.index_scale {
            if !scale.is_finite() {
                return Err(Error::invalid(
                    "--index-scale",
                    scale,
                    "a finite number (e.g. 0.1)",
                ));
            }
            if self.pos != PosKind::Index {
                return Err(Error::invalid(
                    "--index-scale",
                    scale,
                    "no --index-scale without --pos index (it would have no effect); add --pos index or drop it",
                ));
            }
        }
        let blocks = match &self.blocks {
            Some(b) => Some(b.load(ctx.allow_files)?),
            None => None,
        };
        InputSpec {
            n: self.n,
            dim: self.dim,
            text: self.text.clone(),
            heads: self.heads,
            seed: self.seed,
            rng: self.rng,
            blocks,
        }
        .build()
    }

    /// The layer under test: `kind` with these positions and mask, read out by `readout`.
    pub fn spec(&self, kind: LayerKind, readout: Readout) -> LayerSpec {
        LayerSpec {
            kind,
            pos: self.pos,
            mask: self.mask,
            readout,
            index_scale: self.index_scale(),
            ..LayerSpec::default()
        }
    }
}
