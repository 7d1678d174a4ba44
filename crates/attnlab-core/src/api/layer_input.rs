//! The options that set up a layer and its inputs, shared by `attend` and `equivariance`.

use serde::{Deserialize, Serialize};

use super::value::BlocksSource;
use super::Context;
use crate::attention::Mask;
use crate::layer::{InputSpec, Inputs, LayerKind, LayerSpec, PosKind, Readout};
use crate::limits::{self, Budget};
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
    /// Seed of the generator (a number, or a string of digits for seeds above 2⁵³).
    #[serde(with = "super::value::seed")]
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
            rng: crate::layer::defaults::RNG,
            blocks: None,
            mask: Mask::None,
            pos: PosKind::None,
            index_scale: None,
            dtype: Dtype::F64,
        }
    }
}

/// The default scale of the index signal ([`crate::layer::defaults::INDEX_SCALE`]).
pub const DEFAULT_INDEX_SCALE: f64 = crate::layer::defaults::INDEX_SCALE;

impl LayerInput {
    /// The index signal's scale (0.1 unless given).
    pub fn index_scale(&self) -> f64 {
        self.index_scale.unwrap_or(DEFAULT_INDEX_SCALE)
    }

    /// Validates the options and draws / loads the inputs (checked against the budget of one
    /// forward pass).
    ///
    /// # Errors
    /// A non-finite or ignored `index_scale`, a dtype other than f32/f64, unreadable blocks, and
    /// everything [`InputSpec::build`] refuses.
    pub fn inputs(&self, ctx: &Context) -> Result<Inputs> {
        let spec = self.prepare(ctx)?;
        let (n, d) = spec.shape()?;
        forward_budget(n, d, self.heads)
            .check(self.describe(n, d, "a forward pass"), &ctx.limits)?;
        spec.build()
    }

    /// The request's (n, d) as far as it can be known without reading a file: the text's
    /// token count and table width, inline blocks' shapes, the options, the defaults (a block
    /// file's shapes are checked again once its headers are read, see [`InputSpec::shape`]).
    pub fn declared_shape(&self) -> (usize, usize) {
        let inline = match &self.blocks {
            Some(BlocksSource::Inline(b)) => Some(b),
            _ => None,
        };
        let dims = |name: &str| {
            inline
                .and_then(|b| b.arrays.get(name))
                .map(|rows| (rows.len(), rows.first().map_or(0, Vec::len)))
        };
        if let Some(t) = &self.text {
            let width = dims("E").map_or(2, |(_, c)| c);
            return (t.split_whitespace().count(), self.dim.unwrap_or(width));
        }
        if let Some((r, c)) = dims("X") {
            return (r, c);
        }
        (
            self.n.unwrap_or(crate::layer::defaults::N),
            self.dim
                .or(dims("Wq").map(|(r, _)| r))
                .unwrap_or(crate::layer::defaults::DIM),
        )
    }

    /// `"{what} with n = …, d = …, k heads"`, for limit messages.
    pub fn describe(&self, n: usize, d: usize, what: &str) -> String {
        let heads = self.heads;
        format!(
            "{what} with n = {n}, d = {d}, {heads} head{}",
            if heads == 1 { "" } else { "s" }
        )
    }

    /// Validates the options and loads the blocks (through the input gate, within
    /// `ctx.limits`), giving the spec the inputs are built from.
    ///
    /// # Errors
    /// See [`LayerInput::inputs`].
    pub fn prepare(&self, ctx: &Context) -> Result<InputSpec> {
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
            Some(b) => Some(b.load_in(ctx)?),
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

/// Flops of the attention kernel per operation of the work limit: f64's four 256-bit FMA lanes,
/// two flops each (f32 has eight lanes and runs about twice as fast; the estimate keeps the
/// slower dtype's cost).
pub const KERNEL_LANE_FLOPS: u64 = 8;

/// The fixed cost of one forward call in operations (buffers, packing, thread dispatch: about
/// 24 µs measured at n = 8, d = 64, where the flops are negligible).
pub const FORWARD_CALL_OPS: u64 = 100_000;

/// The inputs of a run (X, the projections, the RNN's weights, in f64) and the layer's copies in
/// its dtype: `8·(2·n·d + 10·d²)` bytes.
pub fn inputs_bytes(n: usize, d: usize) -> u64 {
    let (n, d) = (limits::u(n), limits::u(d));
    limits::matrices(2, n, d).saturating_add(limits::matrices(10, d, d))
}

/// One forward pass of attention on an n × d input with `heads` heads, every head's weights
/// kept:
///
/// * memory: Q, K, V, the concatenated heads and the output (`5·n·d` values) and each head's
///   scores and weights (`2·heads·n²`), 8 bytes each;
/// * operations: the vectorised part — the projections and the output projection `2·n·d²·4`,
///   the scores and the weighted sums `2·n²·d` each, the softmax `heads·n²·(TRANSCENDENTAL + 3)`
///   — divided by [`KERNEL_LANE_FLOPS`] (the fused kernel does that many flops per operation
///   of the scalar code the limit was calibrated on), the rotary or additive positions
///   `n·d·(2·TRANSCENDENTAL + 6)` (scalar), and [`FORWARD_CALL_OPS`] per call.
///
/// Calibrated against the fused kernel (release, the 2-core reference machine; the default
/// limit of 2³⁵ is about 10 s): `equivariance --n 4096 --dim 128 --dtype f32` (6 forwards)
/// took 1.3 s and is estimated at 7.5·10⁹ (≈ 2 s); `--n 8 --dim 64 --exhaustive` (120 963
/// forwards, per-call overhead dominated) took 2.9 s and is estimated at 1.9·10¹⁰ (≈ 6 s); the
/// test `the_issues_acceptance_runs_fit_the_default_work_limit` computes both.
pub fn forward_budget(n: usize, d: usize, heads: usize) -> Budget {
    let (n, d, h) = (limits::u(n), limits::u(d), limits::u(heads));
    let bytes = limits::matrices(5, n, d).saturating_add(limits::matrices(2 * h, n, n));
    let vectorised = limits::product(&[8, n, d, d])
        .saturating_add(limits::product(&[4, n, n, d]))
        .saturating_add(limits::product(&[h, n, n, limits::TRANSCENDENTAL + 3]));
    let ops = (vectorised / KERNEL_LANE_FLOPS)
        .saturating_add(limits::product(&[n, d, 2 * limits::TRANSCENDENTAL + 6]))
        .saturating_add(FORWARD_CALL_OPS);
    Budget::new(bytes.saturating_add(limits::matrices(10, d, d)), ops)
}

/// [`forward_budget`] for the fused kernel's output-only pass (no n × n matrix): the same
/// operations; memory Q, K, V, their packed copies, the concatenated heads and the output
/// (`8·n·d` values), the projections (`10·d²`) and each thread's tiles (`O(d)`, counted in the
/// fixed part).
pub fn fused_forward_budget(n: usize, d: usize, heads: usize) -> Budget {
    let (nn, dd) = (limits::u(n), limits::u(d));
    let full = forward_budget(n, d, heads);
    let bytes = limits::matrices(8, nn, dd)
        .saturating_add(limits::matrices(10, dd, dd))
        .saturating_add(limits::matrices(4, 256, dd.max(256)));
    Budget::new(bytes, full.ops)
}
