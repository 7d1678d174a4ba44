//! Experiment set-up: the inputs and weights of a run, and the layer under test assembled from
//! named parts (attention or RNN; positions; mask; heads; readout).
//!
//! Draw order (the course program's order, so `--rng numpy --seed 0 --n 4 --dim 4` reproduces
//! it exactly): `Wq`, `Wk`, `Wv` (each d × d), then `X` (n × d), then — only when needed — `Wo`
//! (d × d, for more than one head), then the RNN's `Wx`, `Wh` (d × d, scaled by 1/√d so the
//! tanh is not saturated; `b = 0`). Blocks loaded from a file replace the drawn matrices of the
//! same name; the draws still happen, so the stream position never depends on which blocks
//! were given.

use ndarray::{Array1, Array2, ArrayView2};
use serde::{Deserialize, Serialize};

use crate::attention::{mean_readout, row_readout, Attention, Mask};
use crate::blocks::Blocks;
use crate::embedding::Embedding;
use crate::position::additive::Additive;
use crate::position::frequencies::RotaryFrequencies;
use crate::position::rotary::{Layout, Rotary};
use crate::recurrent::Elman;
use crate::rng::RngKind;
use crate::tokenizer::Vocabulary;
use crate::{Error, Real, Result};

/// The one home of the input defaults: the CLI's help, the request types' serde defaults and
/// Python read these.
pub mod defaults {
    /// Sequence length n of a drawn input (the course program's).
    pub const N: usize = 4;
    /// Model width d of a drawn input (the course program's).
    pub const DIM: usize = 4;
    /// Scale of the index signal (`--pos index` adds p·scale to every component of row p).
    pub const INDEX_SCALE: f64 = 0.1;
    /// The generator: numpy's legacy `np.random.seed` + `randn`, so the defaults are the
    /// course program.
    pub const RNG: crate::rng::RngKind = crate::rng::RngKind::Numpy;
}

/// Largest model width accepted. (The sequence length has no cap of its own: the memory and
/// work budgets of each command bound it, from everything the request implies.)
pub const MAX_DIM: usize = 4_096;

/// How the inputs of a run are obtained.
#[derive(Debug, Clone)]
pub struct InputSpec {
    /// Sequence length when drawing `X` (default 4, the course program's).
    pub n: Option<usize>,
    /// Model width d when drawing (default 4; with `--text` it is the embedding's width).
    pub dim: Option<usize>,
    /// Text to tokenize and embed instead of drawing `X`.
    pub text: Option<String>,
    /// Number of heads (1 = the course's single head, no output projection).
    pub heads: usize,
    /// Seed of the generator.
    pub seed: u64,
    /// Which generator (default [`defaults::RNG`], the one the CLI, serde and Python default to).
    pub rng: RngKind,
    /// Fixed blocks that replace drawn ones.
    pub blocks: Option<Blocks>,
}

impl Default for InputSpec {
    fn default() -> Self {
        InputSpec {
            n: None,
            dim: None,
            text: None,
            heads: 1,
            seed: 0,
            rng: defaults::RNG,
            blocks: None,
        }
    }
}

/// The matrices of one run, in `f64` (cast to the layer's dtype when a layer is built).
#[derive(Debug, Clone, PartialEq)]
pub struct Inputs {
    /// The input rows (n × d).
    pub x: Array2<f64>,
    /// Query projection.
    pub wq: Array2<f64>,
    /// Key projection.
    pub wk: Array2<f64>,
    /// Value projection.
    pub wv: Array2<f64>,
    /// Output projection (only with several heads).
    pub wo: Option<Array2<f64>>,
    /// RNN input weights.
    pub wx: Array2<f64>,
    /// RNN recurrent weights.
    pub wh: Array2<f64>,
    /// The tokens, when the input came from text.
    pub tokens: Option<Vec<String>>,
    /// The embedding table used for text input.
    pub embedding: Option<Array2<f64>>,
    /// Number of attention heads.
    pub heads: usize,
}

/// What [`InputSpec::plan`] resolves before anything large is allocated.
struct Plan {
    n: usize,
    d: usize,
    /// With text: the labels, the vocabulary and the table they index.
    text: Option<(Vec<usize>, Vocabulary, Embedding)>,
}

impl InputSpec {
    /// The sequence length n and width d these options give (from the text and its table, the
    /// block X, the options, or the defaults), checked against the caps, without drawing or
    /// copying anything: what a request's work budget is computed from.
    ///
    /// # Errors
    /// See [`InputSpec::build`].
    pub fn shape(&self) -> Result<(usize, usize)> {
        self.plan().map(|p| (p.n, p.d))
    }

    fn plan(&self) -> Result<Plan> {
        let blocks = self.blocks.as_ref();
        let block = |name: &str| blocks.and_then(|b| b.get(name));
        let mut text = None;
        // The input's shape, if it is fixed: (rows, cols, where the rows and columns come from).
        let fixed: Option<(usize, usize, &str, &str)> = if let Some(t) = &self.text {
            let table = match block("E") {
                Some(e) => Embedding::new(e.clone())?,
                None => Embedding::example(),
            };
            let vocab =
                Vocabulary::for_table(blocks.and_then(|b| b.vocab.as_deref()), table.vocab())?;
            let ids = vocab.encode(t)?;
            let shape = (
                ids.len(),
                table.dim(),
                "the number of tokens in --text",
                if block("E").is_some() {
                    "the width of block E"
                } else {
                    "the width of the course's table E"
                },
            );
            text = Some((ids, vocab, table));
            Some(shape)
        } else {
            block("X").map(|x| {
                (
                    x.nrows(),
                    x.ncols(),
                    "the rows of block X",
                    "the width of block X",
                )
            })
        };
        let d = match (fixed, self.dim) {
            (Some((_, c, _, src)), Some(d)) if c != d => {
                return Err(Error::shape("--dim", format!("{c} ({src})"), d.to_string()));
            }
            (Some((_, c, _, _)), _) => c,
            (None, Some(d)) => d,
            (None, None) => block("Wq").map_or(defaults::DIM, |w| w.nrows()),
        };
        if d == 0 {
            return Err(Error::invalid("--dim", 0, "at least 1"));
        }
        let n = match (fixed, self.n) {
            (Some((r, _, src, _)), Some(n)) if r != n => {
                return Err(Error::shape("--n", format!("{r} ({src})"), n.to_string()));
            }
            (Some((r, _, _, _)), _) => r,
            (None, Some(n)) => n,
            (None, None) => defaults::N,
        };
        if n == 0 {
            return Err(Error::invalid("--n", 0, "at least 1 token"));
        }
        if d > MAX_DIM {
            let what = match fixed {
                Some((_, _, _, src)) => src,
                None => "--dim",
            };
            return Err(Error::invalid(
                what,
                d,
                format!("a width of at most {MAX_DIM}"),
            ));
        }
        if self.heads == 0 || d % self.heads != 0 {
            return Err(Error::invalid(
                "--heads",
                self.heads,
                format!("a divisor of the width d = {d}"),
            ));
        }
        Ok(Plan { n, d, text })
    }

    /// Draws and loads the inputs.
    ///
    /// # Errors
    /// n or d of 0, a text/blocks/--dim/--n conflict, unknown tokens, a heads count that does not
    /// divide d, or a block of the wrong shape.
    pub fn build(&self) -> Result<Inputs> {
        let empty = Blocks::default();
        let blocks = self.blocks.as_ref().unwrap_or(&empty);
        let Plan { n, d, text } = self.plan()?;
        let mut tokens = None;
        let mut embedding = None;
        let fixed_x = match text {
            Some((ids, vocab, table)) => {
                tokens = Some(ids.iter().map(|&i| vocab.tokens()[i].clone()).collect());
                let x = table.lookup(&ids)?;
                embedding = Some(table.table().to_owned());
                Some(x)
            }
            None => blocks.get("X").cloned(),
        };
        // Where the expected shape of a projection comes from, for its error message.
        let width_src = if self.text.is_some() {
            "d, the width of the embedding table"
        } else if blocks.get("X").is_some() {
            "d, the width of block X"
        } else if self.dim.is_some() {
            "d = --dim"
        } else if blocks.get("Wq").is_some() {
            "d, the rows of block Wq"
        } else {
            "d, the default width"
        };
        let mut g = self.rng.generator(self.seed)?;
        let take =
            |name: &str, rows: usize, cols: usize, drawn: Array2<f64>| -> Result<Array2<f64>> {
                match blocks.get(name) {
                    Some(b) if b.dim() != (rows, cols) => Err(Error::shape(
                        format!("block {name}"),
                        format!("{rows}×{cols} ({width_src})"),
                        format!("{}×{}", b.nrows(), b.ncols()),
                    )),
                    Some(b) => Ok(b.clone()),
                    None => Ok(drawn),
                }
            };
        let wq = g.randn(d, d);
        let wk = g.randn(d, d);
        let wv = g.randn(d, d);
        let (wq, wk, wv) = (
            take("Wq", d, d, wq)?,
            take("Wk", d, d, wk)?,
            take("Wv", d, d, wv)?,
        );
        let x = match fixed_x {
            Some(x) => x,
            None => g.randn(n, d),
        };
        let wo = if self.heads > 1 || blocks.get("Wo").is_some() {
            let drawn = g.randn(d, d);
            Some(take("Wo", d, d, drawn)?)
        } else {
            None
        };
        let s = 1.0 / (d as f64).sqrt();
        let wx = g.randn(d, d).mapv(|v| v * s);
        let wh = g.randn(d, d).mapv(|v| v * s);
        Ok(Inputs {
            x,
            wq,
            wk,
            wv,
            wo,
            wx,
            wh,
            tokens,
            embedding,
            heads: self.heads,
        })
    }
}

crate::choice! {
    /// Which layer is under test.
    pub enum LayerKind("layer") {
        /// Scaled dot-product self-attention.
        Attention = "attention",
        /// An Elman RNN (the contrast).
        Rnn = "rnn",
    }
}

crate::choice! {
    /// Which positional information is added.
    pub enum PosKind("pos") {
        /// None: the bare layer.
        None = "none",
        /// The seed's crude signal: `p · scale` added to every component of row p.
        Index = "index",
        /// Sinusoidal encodings (Vaswani et al. 2017), base 10000.
        Sinusoidal = "sinusoidal",
        /// A fixed random table standing in for learned position embeddings.
        Learned = "learned",
        /// Rotary position embeddings on queries and keys (half-split layout, base 10000).
        Rope = "rope",
    }
}

/// How the layer's output is read out. Serialised as its CLI spelling: `none`, `mean`,
/// `row:I`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Readout {
    /// The whole n × d output.
    #[default]
    None,
    /// The mean over positions (order-blind).
    Mean,
    /// Row i (selects a position).
    Row(usize),
}

impl Readout {
    /// Parses `none`, `mean` or `row:I`.
    ///
    /// # Errors
    /// Anything else.
    pub fn parse(s: &str) -> Result<Readout> {
        match s.trim() {
            "none" => Ok(Readout::None),
            "mean" => Ok(Readout::Mean),
            other => other
                .strip_prefix("row:")
                .and_then(|i| i.parse().ok())
                .map(Readout::Row)
                .ok_or_else(|| {
                    Error::invalid(
                        "readout",
                        format!("\"{}\"", crate::text::shorten(s)),
                        "none, mean or row:I (e.g. row:0)",
                    )
                }),
        }
    }

    /// Applies the readout to a layer output `out` (n × d′): itself, its mean over positions
    /// (1 × d′) or its row i (1 × d′).
    ///
    /// # Errors
    /// A row outside the output.
    pub fn apply<T: Real>(self, out: Array2<T>) -> Result<Array2<T>> {
        match self {
            Readout::None => Ok(out),
            Readout::Mean => Ok(mean_readout(out.view())),
            Readout::Row(i) => row_readout(out.view(), i),
        }
    }

    /// The name as the CLI spells it.
    pub fn name(self) -> String {
        match self {
            Readout::None => "none".into(),
            Readout::Mean => "mean".into(),
            Readout::Row(i) => format!("row:{i}"),
        }
    }
}

impl Serialize for Readout {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for Readout {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Readout::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// The layer under test, assembled from parts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerSpec {
    /// Attention or RNN.
    pub kind: LayerKind,
    /// Positional information.
    pub pos: PosKind,
    /// Mask (attention only).
    pub mask: Mask,
    /// Readout applied to the output.
    pub readout: Readout,
    /// Scale of the index signal (`p · scale`).
    pub index_scale: f64,
    /// Base of sinusoidal and rotary encodings.
    pub base: f64,
    /// Rotary positions move with the tokens: the layer called on row i holding token `perm[i]`
    /// rotates it at position `perm[i]` (`equivariance --move-positions`); otherwise row i is
    /// at position i.
    pub move_positions: bool,
}

impl Default for LayerSpec {
    fn default() -> Self {
        LayerSpec {
            kind: LayerKind::Attention,
            pos: PosKind::None,
            mask: Mask::None,
            readout: Readout::None,
            index_scale: defaults::INDEX_SCALE,
            base: 10000.0,
            move_positions: false,
        }
    }
}

/// A layer as a function of its input.
pub type LayerFn<'a, T> = Box<dyn Fn(ArrayView2<T>) -> Result<Array2<T>> + 'a>;

/// A layer as a function of its input and the original positions its rows hold (row i holds
/// token `at[i]`; see [`LayerSpec::move_positions`]).
pub type LayerAtFn<'a, T> = Box<dyn Fn(ArrayView2<T>, &[usize]) -> Result<Array2<T>> + 'a>;

/// A layer computing only the output rows it is asked for: `(H, at, rows) ↦ f(H)[rows]`.
pub type LayerRowsFn<'a, T> =
    Box<dyn Fn(ArrayView2<T>, &[usize], &[usize]) -> Result<Array2<T>> + 'a>;

/// The rotary positions of rows that hold the tokens `at`: `at` itself when positions move with
/// the tokens, else 0..n.
fn rotary_positions(move_positions: bool, at: &[usize], n: usize) -> Vec<i64> {
    if move_positions && at.len() == n {
        at.iter().map(|&p| p as i64).collect()
    } else {
        (0..n as i64).collect()
    }
}

fn cast<T: Real>(a: &Array2<f64>) -> Array2<T> {
    a.mapv(T::from_f64)
}

impl LayerSpec {
    /// The positional matrix added to the input, if any (n × d).
    fn additive(&self, n: usize, d: usize) -> Result<Option<Array2<f64>>> {
        let add = match self.pos {
            PosKind::Index => Additive::Index {
                scale: self.index_scale,
            },
            PosKind::Sinusoidal => Additive::Sinusoidal { base: self.base },
            PosKind::Learned => Additive::Learned {
                seed: 0x5EED,
                sigma: 1.0,
            },
            PosKind::None | PosKind::Rope => return Ok(None),
        };
        add.matrix(n, d).map(Some)
    }

    /// The attention layer (in dtype `T`) this spec describes.
    ///
    /// # Errors
    /// Shapes that do not fit.
    pub fn attention<T: Real>(&self, inputs: &Inputs) -> Result<Attention<T>> {
        Attention::multi_head(
            cast(&inputs.wq),
            cast(&inputs.wk),
            cast(&inputs.wv),
            inputs.wo.as_ref().map(cast),
            inputs.heads,
            self.mask,
        )
    }

    fn head_dim(&self, inputs: &Inputs) -> usize {
        inputs.wq.ncols() / inputs.heads
    }

    /// The rotary map applied to each head's queries and keys (positions 0..n): half-split
    /// layout (Hugging Face Llama's `rotate_half`), ω_k = base^(−2k/d_head).
    fn rope(&self, head_dim: usize) -> Result<Rotary> {
        let freqs = RotaryFrequencies::from_base(self.base, head_dim).map_err(|_| {
            Error::invalid(
                "--pos rope head dimension",
                head_dim,
                "an even number ≥ 2 (each rotary plane rotates a pair of coordinates)",
            )
        })?;
        Ok(Rotary::from_frequencies(&freqs, Layout::HalfSplit))
    }

    /// The attention layer with its positions, assembled once: every attention path below
    /// (output only, output and weights, every intermediate) runs on it.
    ///
    /// # Errors
    /// Not an attention layer, or shapes that do not fit.
    pub fn attention_layer<T: Real>(&self, inputs: &Inputs) -> Result<AttentionLayer<T>> {
        if self.kind != LayerKind::Attention {
            return Err(Error::invalid(
                "layer",
                "rnn",
                "an attention layer (only attention has a weight matrix)",
            ));
        }
        let (n, d) = inputs.x.dim();
        Ok(AttentionLayer {
            layer: self.attention::<T>(inputs)?,
            pos: self.additive(n, d)?.map(|p| cast::<T>(&p)),
            rope: if self.pos == PosKind::Rope {
                Some(self.rope(self.head_dim(inputs))?)
            } else {
                None
            },
            moving: self.move_positions,
        })
    }

    /// The attention weights of head `head` as a function of `H` (positions and mask applied).
    ///
    /// # Errors
    /// Not an attention layer, or shapes that do not fit.
    pub fn weights_fn<'a, T: Real>(
        &'a self,
        inputs: &'a Inputs,
        head: usize,
    ) -> Result<LayerFn<'a, T>> {
        if head >= inputs.heads {
            return Err(Error::invalid(
                "head",
                head,
                format!("0..{} (the number of heads)", inputs.heads),
            ));
        }
        let layer = self.attention_layer::<T>(inputs)?;
        Ok(Box::new(move |h: ArrayView2<T>| {
            let mut out = layer.forward(h)?;
            Ok(out.weights.swap_remove(head))
        }))
    }

    /// The attention layer with its positions as a function of `H`, returning the output and
    /// every head's weights from one forward pass ([`AttentionLayer::forward`]).
    ///
    /// # Errors
    /// Not an attention layer, or shapes that do not fit.
    #[allow(clippy::type_complexity)]
    pub fn attention_fn<'a, T: Real>(
        &'a self,
        inputs: &'a Inputs,
    ) -> Result<Box<dyn Fn(ArrayView2<T>) -> Result<crate::attention::AttentionOutput<T>> + 'a>>
    {
        let f = self.attention_fn_at::<T>(inputs)?;
        Ok(Box::new(move |h: ArrayView2<T>| f(h, &[])))
    }

    /// [`LayerSpec::attention_fn`] told the original positions its rows hold (see
    /// [`LayerSpec::move_positions`]).
    ///
    /// # Errors
    /// As [`LayerSpec::attention_fn`].
    #[allow(clippy::type_complexity)]
    pub fn attention_fn_at<'a, T: Real>(
        &'a self,
        inputs: &'a Inputs,
    ) -> Result<
        Box<dyn Fn(ArrayView2<T>, &[usize]) -> Result<crate::attention::AttentionOutput<T>> + 'a>,
    > {
        let layer = self.attention_layer::<T>(inputs)?;
        Ok(Box::new(move |h: ArrayView2<T>, at: &[usize]| {
            layer.forward_at(h, at)
        }))
    }

    /// The positional table this spec adds to the input (n × d): the index signal, the
    /// sinusoidal or the learned table; `None` for no positions and for RoPE (which rotates
    /// queries and keys inside attention instead).
    ///
    /// # Errors
    /// Sizes the table cannot be built for.
    pub fn positional_table(&self, n: usize, d: usize) -> Result<Option<Array2<f64>>> {
        self.additive(n, d)
    }

    /// One forward pass of the attention layer on `inputs.x` in dtype `T` with every
    /// intermediate ([`AttentionLayer::traced`]).
    ///
    /// # Errors
    /// As [`LayerSpec::attention_fn`].
    #[allow(clippy::type_complexity)]
    pub fn attention_traced<T: Real>(
        &self,
        inputs: &Inputs,
    ) -> Result<(
        Array2<T>,
        crate::attention::AttentionOutput<T>,
        crate::attention::Trace<T>,
    )> {
        self.attention_layer::<T>(inputs)?
            .traced(cast::<T>(&inputs.x).view())
    }

    /// The full layer (positions, layer, readout) in dtype `T` as a function of `H`. Attention
    /// runs [`Attention::forward`]: its output is `A·V` with the very `A` that
    /// [`LayerSpec::attention_fn`] returns (bit for bit).
    ///
    /// # Errors
    /// Shapes that do not fit, or a readout row outside the sequence.
    pub fn build<'a, T: Real>(&'a self, inputs: &'a Inputs) -> Result<LayerFn<'a, T>> {
        let f = self.build_path(inputs, true)?;
        Ok(Box::new(move |h: ArrayView2<T>| f(h, &[])))
    }

    /// [`LayerSpec::build`] told the original positions its rows hold (see
    /// [`LayerSpec::move_positions`]).
    ///
    /// # Errors
    /// As [`LayerSpec::build`].
    pub fn build_at<'a, T: Real>(&'a self, inputs: &'a Inputs) -> Result<LayerAtFn<'a, T>> {
        self.build_path(inputs, true)
    }

    /// [`LayerSpec::build`] on the fast path: attention runs the fused online-softmax kernel
    /// ([`Attention::forward_output_only`]), which never forms an n × n matrix. The same
    /// mathematics; the output differs from [`LayerSpec::build`]'s by round-off (the softmax
    /// is normalised per key block instead of once), within the bounds the attention tests
    /// assert.
    ///
    /// # Errors
    /// As [`LayerSpec::build`].
    pub fn build_fused<'a, T: Real>(&'a self, inputs: &'a Inputs) -> Result<LayerFn<'a, T>> {
        let f = self.build_path(inputs, false)?;
        Ok(Box::new(move |h: ArrayView2<T>| f(h, &[])))
    }

    /// [`LayerSpec::build_fused`] told the original positions its rows hold.
    ///
    /// # Errors
    /// As [`LayerSpec::build`].
    pub fn build_fused_at<'a, T: Real>(&'a self, inputs: &'a Inputs) -> Result<LayerAtFn<'a, T>> {
        self.build_path(inputs, false)
    }

    /// Attention without a readout as a function computing only some rows of its output:
    /// `(H, at, rows) ↦ f(H)[rows]`, the same bits as those rows of
    /// [`LayerSpec::build_fused_at`]'s result ([`AttentionLayer::output_rows_at`]); `None` for
    /// an RNN or a readout, whose rows are not separable so.
    ///
    /// # Errors
    /// As [`LayerSpec::build`].
    pub fn build_rows_at<'a, T: Real>(
        &'a self,
        inputs: &'a Inputs,
    ) -> Result<Option<LayerRowsFn<'a, T>>> {
        if self.kind != LayerKind::Attention || self.readout != Readout::None {
            return Ok(None);
        }
        let layer = self.attention_layer::<T>(inputs)?;
        Ok(Some(Box::new(
            move |h: ArrayView2<T>, at: &[usize], rows: &[usize]| layer.output_rows_at(h, at, rows),
        )))
    }

    fn build_path<'a, T: Real>(
        &'a self,
        inputs: &'a Inputs,
        with_weights: bool,
    ) -> Result<LayerAtFn<'a, T>> {
        let (n, d) = inputs.x.dim();
        if let Readout::Row(i) = self.readout {
            if i >= n {
                return Err(Error::invalid(
                    "readout row",
                    i,
                    format!("0..{n} (the sequence length)"),
                ));
            }
        }
        let readout = self.readout;
        let core: LayerAtFn<'a, T> = match self.kind {
            LayerKind::Attention => {
                let layer = self.attention_layer::<T>(inputs)?;
                Box::new(move |h: ArrayView2<T>, at: &[usize]| {
                    if with_weights {
                        Ok(layer.forward_at(h, at)?.output)
                    } else {
                        layer.output_at(h, at)
                    }
                })
            }
            LayerKind::Rnn => {
                if self.pos == PosKind::Rope {
                    return Err(Error::invalid("--pos", "rope", "none, index, sinusoidal or learned for an RNN (rotary encodings act on attention's queries and keys)"));
                }
                if self.mask != Mask::None {
                    return Err(Error::invalid(
                        "--mask",
                        self.mask.name(),
                        "none for an RNN (masks act on attention scores)",
                    ));
                }
                if inputs.heads != 1 {
                    return Err(Error::invalid(
                        "--heads",
                        inputs.heads,
                        "1 for an RNN (heads belong to attention)",
                    ));
                }
                let rnn = Elman::new(cast(&inputs.wx), cast(&inputs.wh), Array1::zeros(d))?;
                let pos = self.additive(n, d)?.map(|p| cast::<T>(&p));
                Box::new(move |h: ArrayView2<T>, _: &[usize]| {
                    rnn.forward(with_positions(h, pos.as_ref())?.view())
                })
            }
        };
        Ok(Box::new(move |h: ArrayView2<T>, at: &[usize]| {
            readout.apply(core(h, at)?)
        }))
    }
}

/// `H + P` for an additive positional table `P` (a copy of `H` without one).
fn with_positions<T: Real>(h: ArrayView2<T>, pos: Option<&Array2<T>>) -> Result<Array2<T>> {
    match pos {
        Some(p) if h.dim() != p.dim() => Err(Error::shape(
            "positional matrix",
            format!("{:?}", p.dim()),
            format!("{:?}", h.dim()),
        )),
        Some(p) => Ok(&h + p),
        None => Ok(h.to_owned()),
    }
}

/// An attention layer of a [`LayerSpec`] with its positions, assembled once
/// ([`LayerSpec::attention_layer`]): the additive table added to `H`, then the layer, whose
/// per-head query/key map is the rotary rotation by position under `--pos rope`.
#[derive(Debug, Clone)]
pub struct AttentionLayer<T> {
    layer: Attention<T>,
    pos: Option<Array2<T>>,
    rope: Option<Rotary>,
    /// Rotate each row by the original position it holds ([`LayerSpec::move_positions`]).
    moving: bool,
}

impl<T: Real> AttentionLayer<T> {
    /// The layer itself (projections, heads, mask).
    pub fn attention(&self) -> &Attention<T> {
        &self.layer
    }

    /// `H` after the additive positions (a copy of `H` without them).
    ///
    /// # Errors
    /// `H` does not have the table's shape.
    pub fn input(&self, h: ArrayView2<T>) -> Result<Array2<T>> {
        with_positions(h, self.pos.as_ref())
    }

    fn run<R>(
        &self,
        h: ArrayView2<T>,
        f: impl FnOnce(
            &Attention<T>,
            ArrayView2<T>,
            &dyn Fn(ArrayView2<T>) -> Result<Array2<T>>,
        ) -> Result<R>,
    ) -> Result<(Array2<T>, R)> {
        let h = self.input(h)?;
        let r = match &self.rope {
            Some(r) => {
                let positions: Vec<i64> = (0..h.nrows() as i64).collect();
                f(&self.layer, h.view(), &|x: ArrayView2<T>| {
                    r.apply(x, &positions)
                })?
            }
            None => f(&self.layer, h.view(), &|x: ArrayView2<T>| Ok(x.to_owned()))?,
        };
        Ok((h, r))
    }

    /// The output only, from the fused online-softmax kernel
    /// ([`Attention::forward_output_only`]: no n × n matrix is formed).
    ///
    /// # Errors
    /// Shapes that do not fit.
    pub fn output(&self, h: ArrayView2<T>) -> Result<Array2<T>> {
        self.output_at(h, &[])
    }

    /// [`AttentionLayer::output`] told the original positions its rows hold (`at[i]` for row
    /// `i`; used when the layer moves positions with the tokens, else rows are at 0 … n−1).
    ///
    /// # Errors
    /// Shapes that do not fit.
    pub fn output_at(&self, h: ArrayView2<T>, at: &[usize]) -> Result<Array2<T>> {
        let h = self.input(h)?;
        match &self.rope {
            Some(r) => {
                let positions = rotary_positions(self.moving, at, h.nrows());
                self.layer
                    .forward_output_only_with(h.view(), &|x: ArrayView2<T>| r.apply(x, &positions))
            }
            None => self.layer.forward_output_only(h.view()),
        }
    }

    /// Rows `rows` of [`AttentionLayer::output_at`] (`rows.len() × d_out`), bit for bit, at a
    /// `rows.len()/n` share of the attention's work ([`Attention::forward_rows`]).
    ///
    /// # Errors
    /// Shapes that do not fit; a row ≥ n.
    pub fn output_rows_at(
        &self,
        h: ArrayView2<T>,
        at: &[usize],
        rows: &[usize],
    ) -> Result<Array2<T>> {
        let h = self.input(h)?;
        match &self.rope {
            Some(r) => {
                let positions = rotary_positions(self.moving, at, h.nrows());
                let hook = |x: ArrayView2<T>| r.apply(x, &positions);
                self.layer.forward_rows(h.view(), rows, Some(&hook))
            }
            None => self.layer.forward_rows(h.view(), rows, None),
        }
    }

    /// The output and every head's weights from one pass of the kernel's weights path
    /// ([`Attention::forward`]; the output is `A·V` with the returned `A`).
    ///
    /// # Errors
    /// Shapes that do not fit.
    pub fn forward(&self, h: ArrayView2<T>) -> Result<crate::attention::AttentionOutput<T>> {
        self.forward_at(h, &[])
    }

    /// [`AttentionLayer::forward`] told the original positions its rows hold (see
    /// [`AttentionLayer::output_at`]).
    ///
    /// # Errors
    /// Shapes that do not fit.
    pub fn forward_at(
        &self,
        h: ArrayView2<T>,
        at: &[usize],
    ) -> Result<crate::attention::AttentionOutput<T>> {
        let h = self.input(h)?;
        match &self.rope {
            Some(r) => {
                let positions = rotary_positions(self.moving, at, h.nrows());
                self.layer
                    .forward_with(h.view(), &|x: ArrayView2<T>| r.apply(x, &positions))
            }
            None => self.layer.forward(h.view()),
        }
    }

    /// The input after the positions, the output and weights ([`AttentionLayer::forward`]) and
    /// every intermediate ([`Attention::forward_traced`]: Q, K, V, the rotated queries and keys
    /// under RoPE, the scaled masked scores).
    ///
    /// # Errors
    /// Shapes that do not fit.
    #[allow(clippy::type_complexity)]
    pub fn traced(
        &self,
        h: ArrayView2<T>,
    ) -> Result<(
        Array2<T>,
        crate::attention::AttentionOutput<T>,
        crate::attention::Trace<T>,
    )> {
        let (h, (out, trace)) = self.run(h, |l, h, qk| l.forward_traced(h, qk))?;
        Ok((h, out, trace))
    }

    /// The output from the fused kernel and the intermediates without the n × n scores
    /// ([`Attention::forward_projected`]): what a front end shows when n is too large for a
    /// person to read the weights.
    ///
    /// # Errors
    /// Shapes that do not fit.
    pub fn projected(
        &self,
        h: ArrayView2<T>,
    ) -> Result<(Array2<T>, Array2<T>, crate::attention::Trace<T>)> {
        let (h, (out, trace)) = self.run(h, |l, h, qk| l.forward_projected(h, qk))?;
        Ok((h, out, trace))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rope_rotates_queries_and_keys_but_never_values() {
        let inputs = InputSpec {
            n: Some(5),
            dim: Some(4),
            seed: 3,
            ..InputSpec::default()
        }
        .build()
        .unwrap();
        let spec = LayerSpec {
            pos: PosKind::Rope,
            ..LayerSpec::default()
        };
        let out = spec.build::<f64>(&inputs).unwrap()(inputs.x.view()).unwrap();
        let weights = spec.weights_fn::<f64>(&inputs, 0).unwrap()(inputs.x.view()).unwrap();
        // The output is the RoPE weights times the *unrotated* values V = X·Wv: same GEMM on
        // the same operands, so bit-identical.
        let v = inputs.x.dot(&inputs.wv);
        assert_eq!(out, weights.dot(&v));
        // And the weights did change: rotation is not a no-op on the scores.
        let bare =
            LayerSpec::default().weights_fn::<f64>(&inputs, 0).unwrap()(inputs.x.view()).unwrap();
        let diff = (&weights - &bare)
            .iter()
            .fold(0.0f64, |m, x| m.max(x.abs()));
        assert!(diff > 1e-3, "{diff}");
    }

    #[test]
    fn numpy_draw_order_is_wq_wk_wv_then_x() {
        use crate::rng::{Gaussian, NumpyLegacy};
        let inputs = InputSpec {
            rng: RngKind::Numpy,
            seed: 0,
            ..InputSpec::default()
        }
        .build()
        .unwrap();
        let mut g = NumpyLegacy::new(0);
        assert_eq!(inputs.wq, g.randn(4, 4));
        assert_eq!(inputs.wk, g.randn(4, 4));
        assert_eq!(inputs.wv, g.randn(4, 4));
        assert_eq!(inputs.x, g.randn(4, 4));
    }
}
