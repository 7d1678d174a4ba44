//! The Llama-family decoder (llama, mistral, qwen2, qwen3): what a real trained model computes
//! from token ids to next-token logits.
//!
//! For ids `t_0 … t_{n−1}`: `H⁰ = E[t]` (the embedding rows the labels address), then per layer
//! `ℓ`
//!
//! ```text
//! A  = Attn_ℓ(RMSNorm(Hℓ; g_attn))            H' = Hℓ + A
//! Hℓ⁺¹ = H' + W_down·(silu(W_gate·x) ⊙ W_up·x),  x = RMSNorm(H'; g_ffn)
//! ```
//!
//! with `RMSNorm(x; g) = g ⊙ x / √(mean(x²) + ε)` per row and `silu(z) = z/(1 + e^{−z})`; the
//! logits are `RMSNorm(H^L; g_final)·Wᵀ` with `W` the output matrix or, when tied, `E` itself.
//! `Attn_ℓ` is grouped-query attention: `Q = xW_qᵀ (+b_q)`, `K = xW_kᵀ (+b_k)`, `V = xW_vᵀ (+b_v)`
//! split into `heads` query heads and `kv_heads` key/value heads (query head `h` uses K/V head
//! `h / (heads/kv_heads)`), qwen3 RMS-normalises each query and key head (`q_norm`, `k_norm`),
//! every head's q and k rows are rotated by RoPE at their positions, scores `q·k/√d_head` under
//! the causal mask, and the heads' outputs concatenated times `W_oᵀ`.
//!
//! Weights are stored as the checkpoints store them: a linear map's matrix is `out × in` and
//! `y = x·Wᵀ`. Every product runs in `T` (f32 like the checkpoints' reference runs, or f64 for the
//! round-off-or-structure diagnosis); projections use the `gemm` crate ([`crate::matmul`], threaded),
//! attention the fused kernel ([`crate::attention::grouped_attention`]).

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis, Zip};
use serde::Serialize;

use crate::attention::{grouped_attention_rows, Mask};
use crate::limits::{self, Budget};
use crate::phase::reduce_angle;
use crate::position::rotary::Layout;
use crate::{Error, Real, Result};

/// The model families this forward runs (their tensors have the same shapes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Arch {
    /// Llama (1–3), SmolLM, TinyLlama, …
    Llama,
    /// Mistral (the sliding window is honoured by refusing longer texts).
    Mistral,
    /// Qwen2 / Qwen2.5: biases on the q, k, v projections.
    Qwen2,
    /// Qwen3: RMSNorm on every query and key head (`q_norm`, `k_norm`).
    Qwen3,
}

/// The architectures accepted, as checkpoints name them.
pub const SUPPORTED: &str = "llama, mistral, qwen2, qwen3";

impl Arch {
    /// Parses an architecture name: GGUF's `general.architecture`, Hugging Face's `model_type`,
    /// or an `architectures` class name (`LlamaForCausalLM`, …).
    ///
    /// # Errors
    /// Any other family, named, with the supported list.
    pub fn parse(name: &str) -> Result<Arch> {
        let lower = name.trim().to_ascii_lowercase();
        let base = lower.strip_suffix("forcausallm").unwrap_or(&lower);
        match base {
            "llama" => Ok(Arch::Llama),
            "mistral" => Ok(Arch::Mistral),
            "qwen2" => Ok(Arch::Qwen2),
            "qwen3" => Ok(Arch::Qwen3),
            _ => Err(Error::invalid(
                "model architecture",
                crate::text::shorten(name),
                format!("one of {SUPPORTED}"),
            )),
        }
    }

    /// The name as GGUF and Hugging Face's `model_type` spell it.
    pub fn name(self) -> &'static str {
        match self {
            Arch::Llama => "llama",
            Arch::Mistral => "mistral",
            Arch::Qwen2 => "qwen2",
            Arch::Qwen3 => "qwen3",
        }
    }
}

/// The hyper-parameters of a checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LlamaConfig {
    /// Model family.
    pub arch: Arch,
    /// Decoder layers.
    pub layers: usize,
    /// Embedding (residual stream) width.
    pub dim: usize,
    /// Query heads.
    pub heads: usize,
    /// Key/value heads (grouped-query attention when fewer than `heads`).
    pub kv_heads: usize,
    /// Width of one head.
    pub head_dim: usize,
    /// Hidden width of the SwiGLU MLP.
    pub ffn_dim: usize,
    /// Vocabulary size (rows of the embedding).
    pub vocab: usize,
    /// RMSNorm ε.
    pub rms_eps: f64,
    /// RoPE angle per position of each plane (`head_dim / 2` entries when fully rotated).
    pub inv_freq: Vec<f64>,
    /// Factor on cos and sin (1 for plain RoPE).
    pub rope_attention_factor: f64,
    /// Which coordinates of a head form a rotation plane for the stored q/k rows.
    pub rope_layout: Layout,
    /// The trained context (tokens), if the checkpoint states it.
    pub context_length: Option<usize>,
    /// Mistral's sliding window, if any.
    pub sliding_window: Option<usize>,
    /// Whether the output projection is the embedding matrix.
    pub tied: bool,
}

impl LlamaConfig {
    /// Parameter count (embedding, layers, norms, untied output).
    pub fn parameters(&self) -> u64 {
        let (d, q, kv, f) = (
            limits::u(self.dim),
            limits::u(self.heads * self.head_dim),
            limits::u(self.kv_heads * self.head_dim),
            limits::u(self.ffn_dim),
        );
        let per_layer = d * q * 2 + d * kv * 2 + 3 * d * f + 2 * d + q + 2 * kv;
        let emb = limits::u(self.vocab) * d;
        emb * if self.tied { 1 } else { 2 } + limits::u(self.layers) * per_layer + d
    }

    /// Whether the weights in f32 (4 bytes a parameter) fit the memory budget: the one check
    /// before weights are allocated or handed out from the loaded-model cache.
    ///
    /// # Errors
    /// The weights' bytes over `limits`' memory budget.
    pub fn check_weight_memory(&self, limits: &limits::Limits) -> Result<()> {
        limits.check_memory(
            format!(
                "the model's weights in f32 ({} parameters)",
                self.parameters()
            ),
            self.parameters().saturating_mul(4),
        )
    }

    /// Memory and operations of one forward over `n` tokens in `T` with logits for `k`
    /// positions (the weights are counted by the loader).
    pub fn forward_budget(&self, n: usize, k: usize, bytes_per: u64) -> Budget {
        let (n64, d, q, kv, f) = (
            limits::u(n),
            limits::u(self.dim),
            limits::u(self.heads * self.head_dim),
            limits::u(self.kv_heads * self.head_dim),
            limits::u(self.ffn_dim),
        );
        let hd = limits::u(self.head_dim);
        let act = n64 * (4 * d + 2 * q + 2 * kv + 3 * f) + limits::u(k) * limits::u(self.vocab);
        let proj = 2 * n64 * (2 * d * q + 2 * d * kv + 3 * d * f);
        let attn = 4 * n64 * n64 * hd * limits::u(self.heads)
            + n64 * n64 * limits::u(self.heads) * limits::TRANSCENDENTAL;
        let ops =
            limits::u(self.layers) * (proj + attn) + 2 * limits::u(k) * d * limits::u(self.vocab);
        Budget::new(act * bytes_per * 2, ops)
    }

    /// Checks the head arithmetic and the rotary frequencies.
    ///
    /// # Errors
    /// Zero sizes, query heads not a multiple of key/value heads, more rotary planes than a head
    /// has, non-finite frequencies.
    pub fn validate(&self) -> Result<()> {
        let sizes = [
            ("layers", self.layers),
            ("embedding width", self.dim),
            ("attention heads", self.heads),
            ("key/value heads", self.kv_heads),
            ("head dimension", self.head_dim),
            ("MLP width", self.ffn_dim),
            ("vocabulary size", self.vocab),
        ];
        for (what, v) in sizes {
            if v == 0 {
                return Err(Error::invalid(what, 0, "at least 1"));
            }
        }
        if !self.heads.is_multiple_of(self.kv_heads) {
            return Err(Error::invalid(
                "key/value heads",
                self.kv_heads,
                format!("a divisor of the {} query heads", self.heads),
            ));
        }
        if 2 * self.inv_freq.len() > self.head_dim || !self.head_dim.is_multiple_of(2) {
            return Err(Error::invalid(
                "rotary dimension",
                2 * self.inv_freq.len(),
                format!("even and at most the head dimension {}", self.head_dim),
            ));
        }
        if self.inv_freq.iter().any(|w| !w.is_finite()) || !self.rms_eps.is_finite() {
            return Err(Error::invalid(
                "rotary frequencies / RMSNorm ε",
                "a non-finite value",
                "finite numbers",
            ));
        }
        Ok(())
    }
}

/// One decoder layer's weights (`out × in` matrices).
#[derive(Debug, Clone)]
pub struct LayerWeights<T> {
    /// RMSNorm gain before attention (`dim`).
    pub attn_norm: Array1<T>,
    /// Query projection (`heads·head_dim × dim`).
    pub wq: Array2<T>,
    /// Key projection (`kv_heads·head_dim × dim`).
    pub wk: Array2<T>,
    /// Value projection (`kv_heads·head_dim × dim`).
    pub wv: Array2<T>,
    /// Output projection (`dim × heads·head_dim`).
    pub wo: Array2<T>,
    /// Query bias (qwen2).
    pub bq: Option<Array1<T>>,
    /// Key bias (qwen2).
    pub bk: Option<Array1<T>>,
    /// Value bias (qwen2).
    pub bv: Option<Array1<T>>,
    /// Output bias (llama with `attention_bias`).
    pub bo: Option<Array1<T>>,
    /// Per-head query RMSNorm gain (qwen3, `head_dim`).
    pub q_norm: Option<Array1<T>>,
    /// Per-head key RMSNorm gain (qwen3, `head_dim`).
    pub k_norm: Option<Array1<T>>,
    /// RMSNorm gain before the MLP (`dim`).
    pub ffn_norm: Array1<T>,
    /// SwiGLU gate (`ffn_dim × dim`).
    pub w_gate: Array2<T>,
    /// SwiGLU up projection (`ffn_dim × dim`).
    pub w_up: Array2<T>,
    /// SwiGLU down projection (`dim × ffn_dim`).
    pub w_down: Array2<T>,
}

impl<T: Real> LayerWeights<T> {
    /// The same layer in another precision (each entry rounded once), with its MLP when `mlp`;
    /// without it, the MLP is left empty (an attention sublayer never reads it).
    pub(crate) fn cast<U: Real>(&self, mlp: bool) -> LayerWeights<U> {
        let m = |a: &Array2<T>| a.mapv(|x| U::from_f64(x.to_f64()));
        let v = |a: &Array1<T>| a.mapv(|x| U::from_f64(x.to_f64()));
        let mlp_m = |a: &Array2<T>| if mlp { m(a) } else { Array2::zeros((0, 0)) };
        LayerWeights {
            attn_norm: v(&self.attn_norm),
            wq: m(&self.wq),
            wk: m(&self.wk),
            wv: m(&self.wv),
            wo: m(&self.wo),
            bq: self.bq.as_ref().map(v),
            bk: self.bk.as_ref().map(v),
            bv: self.bv.as_ref().map(v),
            bo: self.bo.as_ref().map(v),
            q_norm: self.q_norm.as_ref().map(v),
            k_norm: self.k_norm.as_ref().map(v),
            ffn_norm: if mlp {
                v(&self.ffn_norm)
            } else {
                Array1::zeros(0)
            },
            w_gate: mlp_m(&self.w_gate),
            w_up: mlp_m(&self.w_up),
            w_down: mlp_m(&self.w_down),
        }
    }
}

/// A whole checkpoint's weights, filled by a loader (GGUF or a Hugging Face directory).
#[derive(Debug, Clone)]
pub struct LlamaWeights<T> {
    /// Hyper-parameters.
    pub config: LlamaConfig,
    /// Token embedding (`vocab × dim`): row `t` is token `t`'s vector.
    pub embed: Array2<T>,
    /// The decoder layers.
    pub layers: Vec<LayerWeights<T>>,
    /// Final RMSNorm gain (`dim`).
    pub final_norm: Array1<T>,
    /// Output matrix (`vocab × dim`); `None` when tied to `embed`.
    pub output: Option<Array2<T>>,
}

/// How the rotation is applied in a forward.
#[derive(Debug, Clone, PartialEq)]
pub enum Positions {
    /// RoPE at positions `0 … n−1` (the model as trained).
    Rope,
    /// RoPE at the given positions (one per token).
    At(Vec<i64>),
    /// No rotation at all (cos = 1, sin = 0 in every layer).
    None,
}

/// What a forward pass computes.
#[derive(Debug, Clone)]
pub struct ForwardOptions {
    /// The rotation.
    pub positions: Positions,
    /// The attention mask (causal as trained; `None` for experiments).
    pub mask: Mask,
    /// Run only the first `layers` layers (all when `None`); no logits unless all run.
    pub layers: Option<usize>,
    /// Keep the hidden states after every layer.
    pub keep_hidden: bool,
    /// Positions whose logits are computed (after the final norm).
    pub logits_at: Vec<usize>,
    /// Run the last layer for the last positions only: its keys and values for every position,
    /// its queries, attention, output projection and MLP for the last two positions (one when
    /// n = 1) — what a next-token prediction needs; the other positions' share of that layer is
    /// not computed. Two rows, not one: a one-row product takes the GEMM's matrix–vector path,
    /// which orders its sums differently, while the rows of a product of two or more rows equal
    /// the full run's bit for bit (tested). Requires every layer to run and
    /// `logits_at == [n − 1]`; `last` then holds those last rows.
    pub last_row_only: bool,
}

impl Default for ForwardOptions {
    fn default() -> Self {
        ForwardOptions {
            positions: Positions::Rope,
            mask: Mask::Causal,
            layers: None,
            keep_hidden: false,
            logits_at: Vec::new(),
            last_row_only: false,
        }
    }
}

/// What a forward pass returns.
#[derive(Debug, Clone)]
pub struct ForwardOutput<T> {
    /// Hidden states after layer `ℓ` (`n × dim`) for every layer run, when kept.
    pub hidden: Vec<Array2<T>>,
    /// The residual stream after the last layer run (before the final norm).
    pub last: Array2<T>,
    /// Logits (`logits_at.len() × vocab`), empty unless every layer ran.
    pub logits: Array2<T>,
}

/// cos and sin of every (position, plane), rounded to `T` from f64 angles reduced mod 2π.
#[derive(Debug, Clone)]
pub struct RopeTable<T> {
    cos: Array2<T>,
    sin: Array2<T>,
    layout: Layout,
}

impl<T: Real> RopeTable<T> {
    /// The table for the given positions: `cos[r, k] = f·cos(p_r·ω_k)`, `sin[r, k] = f·sin(p_r·ω_k)`.
    pub fn new(inv_freq: &[f64], factor: f64, positions: &[i64], layout: Layout) -> Self {
        let half = inv_freq.len();
        let mut cos = Array2::zeros((positions.len(), half));
        let mut sin = Array2::zeros((positions.len(), half));
        for (r, &m) in positions.iter().enumerate() {
            for (k, &w) in inv_freq.iter().enumerate() {
                let th = reduce_angle(m as f64, w);
                cos[[r, k]] = T::from_f64(factor * th.cos());
                sin[[r, k]] = T::from_f64(factor * th.sin());
            }
        }
        RopeTable { cos, sin, layout }
    }

    /// Rotates every head (`head_dim` consecutive columns) of `x` (`n × heads·head_dim`) in
    /// place: plane `k` = columns `(2k, 2k+1)` (interleaved) or `(k, k + r/2)` (half-split) of
    /// the head, `y_a = x_a·c − x_b·s`, `y_b = x_a·s + x_b·c`.
    pub fn rotate(&self, x: &mut Array2<T>, head_dim: usize) {
        self.rotate_from(x, head_dim, 0);
    }

    /// [`RopeTable::rotate`] for rows that hold positions `first …` of the table.
    fn rotate_from(&self, x: &mut Array2<T>, head_dim: usize, first: usize) {
        let half = self.cos.ncols();
        let rows = first..first + x.nrows();
        let (stride, off) = match self.layout {
            Layout::Interleaved => (2, 1),
            Layout::HalfSplit => (1, half),
        };
        Zip::from(x.rows_mut())
            .and(self.cos.slice(ndarray::s![rows.clone(), ..]).rows())
            .and(self.sin.slice(ndarray::s![rows, ..]).rows())
            .for_each(|mut row, c, sn| {
                let heads = row.len() / head_dim;
                for h in 0..heads {
                    let base = h * head_dim;
                    for k in 0..half {
                        let a = base + stride * k;
                        let b = a + off;
                        let (xa, xb) = (row[a], row[b]);
                        row[a] = xa * c[k] - xb * sn[k];
                        row[b] = xa * sn[k] + xb * c[k];
                    }
                }
            });
    }
}

/// `y = x·Wᵀ (+ b)` on the fast GEMM ([`crate::matmul`]).
fn linear<T: Real>(x: ArrayView2<T>, w: &Array2<T>, b: Option<&Array1<T>>) -> Array2<T> {
    let mut y = crate::matmul::matmul_t(x, w.view());
    if let Some(b) = b {
        for mut row in y.rows_mut() {
            row.zip_mut_with(b, |a, &bi| *a = *a + bi);
        }
    }
    y
}

/// RMSNorm of each row (`g ⊙ x / √(mean(x²) + ε)`), or of each `width`-column group of a row.
fn rms_norm<T: Real>(x: ArrayView2<T>, g: ArrayView1<T>, eps: f64, width: usize) -> Array2<T> {
    let mut y = x.as_standard_layout().into_owned();
    let eps = T::from_f64(eps);
    let w = T::from_f64(width as f64);
    let norm = |_: usize, row: &mut [T]| {
        for grp in row.chunks_exact_mut(width) {
            let ss = grp.iter().fold(T::zero(), |a, &v| a + v * v);
            let inv = T::one() / (ss / w + eps).sqrt();
            for (v, &gi) in grp.iter_mut().zip(g) {
                *v = gi * (*v * inv);
            }
        }
    };
    elementwise(y.as_slice_mut().expect("standard layout"), x.ncols(), norm);
    y
}

/// Element-wise passes over at least this many values run on rayon's threads.
const PARALLEL_ELEMENTS: usize = 1 << 15;

/// Applies `f(offset, row)` to each `row_len`-long row of `data` (`offset` its first index in
/// `data`), on rayon's threads when `data` is large; each row's values are those of a serial
/// pass.
fn elementwise<T: Real>(data: &mut [T], row_len: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    use rayon::prelude::*;
    let row_len = row_len.max(1);
    if data.len() >= PARALLEL_ELEMENTS && rayon::current_num_threads() > 1 {
        let span = (PARALLEL_ELEMENTS / 4 / row_len).max(1) * row_len;
        data.par_chunks_mut(span)
            .enumerate()
            .for_each(|(b, piece)| {
                for (r, row) in piece.chunks_mut(row_len).enumerate() {
                    f(b * span + r * row_len, row);
                }
            });
    } else {
        for (r, row) in data.chunks_mut(row_len).enumerate() {
            f(r * row_len, row);
        }
    }
}

fn silu<T: Real>(z: T) -> T {
    z / (T::one() + (-z).exp())
}

impl<T: Real> LlamaWeights<T> {
    /// Checks every tensor's shape against the configuration.
    ///
    /// # Errors
    /// The first tensor whose shape differs, named with both shapes.
    pub fn validate(&self) -> Result<()> {
        let c = &self.config;
        c.validate()?;
        let (d, q, kv, f, hd) = (
            c.dim,
            c.heads * c.head_dim,
            c.kv_heads * c.head_dim,
            c.ffn_dim,
            c.head_dim,
        );
        let m = |name: String, a: &Array2<T>, r: usize, co: usize| -> Result<()> {
            if a.dim() != (r, co) {
                return Err(Error::shape(
                    name,
                    format!("{r}×{co}"),
                    format!("{}×{}", a.nrows(), a.ncols()),
                ));
            }
            Ok(())
        };
        let v = |name: String, a: Option<&Array1<T>>, len: usize| -> Result<()> {
            match a {
                Some(a) if a.len() != len => Err(Error::shape(
                    name,
                    format!("{len} entries"),
                    format!("{}", a.len()),
                )),
                _ => Ok(()),
            }
        };
        m("token embedding".into(), &self.embed, c.vocab, d)?;
        if let Some(o) = &self.output {
            m("output matrix".into(), o, c.vocab, d)?;
        }
        v("final norm".into(), Some(&self.final_norm), d)?;
        if self.layers.len() != c.layers {
            return Err(Error::shape(
                "decoder layers",
                format!("{} layers", c.layers),
                format!("{}", self.layers.len()),
            ));
        }
        for (i, l) in self.layers.iter().enumerate() {
            let n = |t: &str| format!("layer {i} {t}");
            m(n("q projection"), &l.wq, q, d)?;
            m(n("k projection"), &l.wk, kv, d)?;
            m(n("v projection"), &l.wv, kv, d)?;
            m(n("o projection"), &l.wo, d, q)?;
            m(n("gate projection"), &l.w_gate, f, d)?;
            m(n("up projection"), &l.w_up, f, d)?;
            m(n("down projection"), &l.w_down, d, f)?;
            v(n("attention norm"), Some(&l.attn_norm), d)?;
            v(n("MLP norm"), Some(&l.ffn_norm), d)?;
            v(n("q bias"), l.bq.as_ref(), q)?;
            v(n("k bias"), l.bk.as_ref(), kv)?;
            v(n("v bias"), l.bv.as_ref(), kv)?;
            v(n("o bias"), l.bo.as_ref(), d)?;
            v(n("q norm"), l.q_norm.as_ref(), hd)?;
            v(n("k norm"), l.k_norm.as_ref(), hd)?;
            if c.arch == Arch::Qwen3 && (l.q_norm.is_none() || l.k_norm.is_none()) {
                return Err(Error::invalid(
                    format!("layer {i}"),
                    "no q_norm/k_norm",
                    "qwen3 layers with per-head query and key norms",
                ));
            }
        }
        Ok(())
    }

    /// The same weights in another precision (each entry rounded once).
    pub fn cast<U: Real>(&self) -> LlamaWeights<U> {
        let m = |a: &Array2<T>| a.mapv(|x| U::from_f64(x.to_f64()));
        let v = |a: &Array1<T>| a.mapv(|x| U::from_f64(x.to_f64()));
        LlamaWeights {
            config: self.config.clone(),
            embed: m(&self.embed),
            layers: self.layers.iter().map(|l| l.cast(true)).collect(),
            final_norm: v(&self.final_norm),
            output: self.output.as_ref().map(m),
        }
    }

    /// The embedding rows the ids address (`n × dim`).
    ///
    /// # Errors
    /// No ids, or an id outside the vocabulary.
    pub fn embed(&self, ids: &[u32]) -> Result<Array2<T>> {
        if ids.is_empty() {
            return Err(Error::invalid("token ids", "none", "at least one token"));
        }
        if let Some(&bad) = ids.iter().find(|&&t| t as usize >= self.config.vocab) {
            return Err(Error::invalid(
                "token id",
                bad,
                format!("an id below the vocabulary size {}", self.config.vocab),
            ));
        }
        let mut h = Array2::zeros((ids.len(), self.config.dim));
        for (mut row, &t) in h.rows_mut().into_iter().zip(ids) {
            row.assign(&self.embed.row(t as usize));
        }
        Ok(h)
    }

    /// The rotation table for `n` tokens, or `None` without rotation.
    ///
    /// # Errors
    /// Explicit positions whose count is not `n`.
    pub fn rope_table(&self, n: usize, positions: &Positions) -> Result<Option<RopeTable<T>>> {
        let c = &self.config;
        let pos: Vec<i64> = match positions {
            Positions::None => return Ok(None),
            Positions::Rope => (0..n as i64).collect(),
            Positions::At(p) if p.len() == n => p.clone(),
            Positions::At(p) => {
                return Err(Error::shape(
                    "rotary positions",
                    format!("one per token ({n})"),
                    p.len(),
                ))
            }
        };
        Ok(Some(RopeTable::new(
            &c.inv_freq,
            c.rope_attention_factor,
            &pos,
            c.rope_layout,
        )))
    }

    /// Layer `l`'s attention sublayer on the residual stream `h` (`n × dim`): RMSNorm, the q/k/v
    /// projections (biases, qwen3's per-head norms), the rotation, grouped-query attention on the
    /// fused kernel and `W_o` — the block's contribution before it is added to `h`.
    ///
    /// # Errors
    /// `l` out of range or `h` of the wrong width.
    pub fn attention(
        &self,
        l: usize,
        h: ArrayView2<T>,
        rope: Option<&RopeTable<T>>,
        mask: Mask,
    ) -> Result<Array2<T>> {
        self.attention_from(l, h, rope, mask, 0)
    }

    /// [`LlamaWeights::attention`]'s rows for positions `q0 …` only (keys and values from every
    /// position of `h`).
    fn attention_from(
        &self,
        l: usize,
        h: ArrayView2<T>,
        rope: Option<&RopeTable<T>>,
        mask: Mask,
        q0: usize,
    ) -> Result<Array2<T>> {
        let c = &self.config;
        let (q, k, v) = self.projections_from(l, h, rope, q0)?;
        let o =
            grouped_attention_rows(q.view(), k.view(), v.view(), c.heads, c.kv_heads, mask, q0)?;
        let lw = self.layer(l)?;
        Ok(linear(o.view(), &lw.wo, lw.bo.as_ref()))
    }

    /// The attention weights of query head `head` in layer `l` on `h` (`n × dim`):
    /// `softmax(q_h·k_gᵀ/√d + M)` with `g = head / (heads / kv_heads)` the key/value head it
    /// shares (grouped-query attention) and `M` the mask (−∞ above the diagonal when causal).
    /// Row `i` is how query `i` splits its attention over the keys; each row sums to 1.
    ///
    /// # Errors
    /// As [`LlamaWeights::projections`], or `head` out of range.
    pub fn attention_weights(
        &self,
        l: usize,
        h: ArrayView2<T>,
        rope: Option<&RopeTable<T>>,
        head: usize,
        mask: Mask,
    ) -> Result<Array2<T>> {
        let c = &self.config;
        if head >= c.heads {
            return Err(Error::invalid(
                "head",
                head,
                format!(
                    "0 … {} (the model has {} query heads)",
                    c.heads - 1,
                    c.heads
                ),
            ));
        }
        let (q, k, _) = self.projections(l, h, rope)?;
        let d = c.head_dim;
        let g = head / (c.heads / c.kv_heads);
        let qh = q.slice(ndarray::s![.., head * d..(head + 1) * d]);
        let kg = k.slice(ndarray::s![.., g * d..(g + 1) * d]);
        let scale = T::from_f64(1.0 / (d as f64).sqrt());
        let mut s = qh.dot(&kg.t()).mapv(|x| x * scale);
        if mask == Mask::Causal {
            for ((i, j), x) in s.indexed_iter_mut() {
                if j > i {
                    *x = T::from_f64(f64::NEG_INFINITY);
                }
            }
        }
        crate::attention::softmax_rows(&mut s);
        Ok(s)
    }

    /// Layer `l`'s queries, keys and values on `h` (`n × dim`), as its attention uses them: after
    /// the RMSNorm, the projections (biases, qwen3's per-head norms) and the rotation. Queries are
    /// `n × heads·head_dim`, keys and values `n × kv_heads·head_dim`, head-major columns.
    ///
    /// # Errors
    /// `l` out of range, `h` of the wrong width, or a rotary table of another length.
    pub fn projections(
        &self,
        l: usize,
        h: ArrayView2<T>,
        rope: Option<&RopeTable<T>>,
    ) -> Result<(Array2<T>, Array2<T>, Array2<T>)> {
        self.projections_from(l, h, rope, 0)
    }

    /// [`LlamaWeights::projections`] with the queries of positions `q0 …` only (`q` is
    /// `(n − q0) × heads·head_dim`; keys and values for every position).
    fn projections_from(
        &self,
        l: usize,
        h: ArrayView2<T>,
        rope: Option<&RopeTable<T>>,
        q0: usize,
    ) -> Result<(Array2<T>, Array2<T>, Array2<T>)> {
        let (x, mut q, mut k) = self.unrotated(l, h, q0)?;
        let lw = self.layer(l)?;
        let v = linear(x.view(), &lw.wv, lw.bv.as_ref());
        if let Some(r) = rope {
            if r.cos.nrows() != h.nrows() {
                return Err(Error::shape(
                    "rotary table",
                    format!("{} positions", h.nrows()),
                    r.cos.nrows(),
                ));
            }
            r.rotate_from(&mut q, self.config.head_dim, q0);
            r.rotate(&mut k, self.config.head_dim);
        }
        Ok((q, k, v))
    }

    /// Layer `l`'s normalised input `x = RMSNorm(h)` and, before the rotation, its queries for
    /// positions `q0 …` and keys for every position (projections with their biases, qwen3's
    /// per-head norms).
    fn unrotated(
        &self,
        l: usize,
        h: ArrayView2<T>,
        q0: usize,
    ) -> Result<(Array2<T>, Array2<T>, Array2<T>)> {
        let c = &self.config;
        let lw = self.layer(l)?;
        if h.ncols() != c.dim || h.nrows() == 0 {
            return Err(Error::shape(
                format!("layer {l} input"),
                format!("n×{} with n ≥ 1", c.dim),
                format!("{}×{}", h.nrows(), h.ncols()),
            ));
        }
        let x = rms_norm(h, lw.attn_norm.view(), c.rms_eps, c.dim);
        let mut q = linear(x.slice(ndarray::s![q0.., ..]), &lw.wq, lw.bq.as_ref());
        let mut k = linear(x.view(), &lw.wk, lw.bk.as_ref());
        if let (Some(qn), Some(kn)) = (&lw.q_norm, &lw.k_norm) {
            q = rms_norm(q.view(), qn.view(), c.rms_eps, c.head_dim);
            k = rms_norm(k.view(), kn.view(), c.rms_eps, c.head_dim);
        }
        Ok((x, q, k))
    }

    /// Layer `l`'s queries and keys before the rotation (`n × heads·head_dim`,
    /// `n × kv_heads·head_dim`): RMSNorm, the projections with their biases, qwen3's per-head
    /// norms — what [`LlamaWeights::attention`] rotates. A rotation keeps each plane's norm, so
    /// `|q_plane|` and `|k_plane|` are the same before and after it (`rope usage`).
    ///
    /// # Errors
    /// `l` out of range, `h` of the wrong width or without rows.
    pub fn qk(&self, l: usize, h: ArrayView2<T>) -> Result<(Array2<T>, Array2<T>)> {
        let (_, q, k) = self.unrotated(l, h, 0)?;
        Ok((q, k))
    }

    /// Layer `l`'s SwiGLU block on `h` (its contribution before the residual addition).
    fn mlp(&self, l: usize, h: ArrayView2<T>) -> Result<Array2<T>> {
        let lw = self.layer(l)?;
        let x = rms_norm(h, lw.ffn_norm.view(), self.config.rms_eps, self.config.dim);
        let mut g = linear(x.view(), &lw.w_gate, None);
        let u = linear(x.view(), &lw.w_up, None);
        // SwiGLU: g ← silu(g) ⊙ u, pairing the two row-major products by flat index.
        let (gs, us) = (
            g.as_slice_mut().expect("standard layout"),
            u.as_slice().expect("standard layout"),
        );
        elementwise(gs, lw.w_up.nrows(), |off, row| {
            let len = row.len();
            for (a, &b) in row.iter_mut().zip(&us[off..off + len]) {
                *a = silu(*a) * b;
            }
        });
        Ok(linear(g.view(), &lw.w_down, None))
    }

    /// Layer `l`'s weights.
    ///
    /// # Errors
    /// `l` outside the model's layers (named with the range).
    pub(crate) fn layer(&self, l: usize) -> Result<&LayerWeights<T>> {
        self.layers.get(l).ok_or_else(|| {
            Error::invalid(
                "layer",
                l,
                format!(
                    "0 … {} (the model has {} layers)",
                    self.layers.len().saturating_sub(1),
                    self.layers.len()
                ),
            )
        })
    }

    /// One decoder layer, `h + Attn(h)` then `+ MLP`, for the rows of positions `q0 …` (all
    /// of them when `q0 = 0`; keys and values always from every position of `h`).
    ///
    /// # Errors
    /// As [`LlamaWeights::attention`].
    pub fn block(
        &self,
        l: usize,
        h: ArrayView2<T>,
        rope: Option<&RopeTable<T>>,
        mask: Mask,
        q0: usize,
    ) -> Result<Array2<T>> {
        let mut h1 = self.attention_from(l, h, rope, mask, q0)?;
        h1.zip_mut_with(&h.slice(ndarray::s![q0.., ..]), |a, &b| *a = *a + b);
        let m = self.mlp(l, h1.view())?;
        h1.zip_mut_with(&m, |a, &b| *a = *a + b);
        Ok(h1)
    }

    /// Logits of the given rows of the residual stream (final norm, then the output matrix).
    ///
    /// # Errors
    /// A row index out of range.
    pub fn logits(&self, h: ArrayView2<T>, rows: &[usize]) -> Result<Array2<T>> {
        if let Some(&bad) = rows.iter().find(|&&r| r >= h.nrows()) {
            return Err(Error::invalid(
                "logit position",
                bad,
                format!("a position below the {} tokens", h.nrows()),
            ));
        }
        let picked = h.select(Axis(0), rows);
        let x = rms_norm(
            picked.view(),
            self.final_norm.view(),
            self.config.rms_eps,
            self.config.dim,
        );
        let w = self.output.as_ref().unwrap_or(&self.embed);
        // One matrix–vector product per row asked for (`W·x`, the vocabulary's rows each dotted
        // with x): a GEMM call would first pack the whole vocab × dim matrix (113 MB for
        // SmolLM2) to compute a single row.
        let mut out = Array2::zeros((x.nrows(), w.nrows()));
        for (mut o, xr) in out.rows_mut().into_iter().zip(x.rows()) {
            o.assign(&w.dot(&xr));
        }
        Ok(out)
    }

    /// The forward pass over token ids.
    ///
    /// # Errors
    /// Bad ids, positions or layer count.
    pub fn forward(&self, ids: &[u32], opts: &ForwardOptions) -> Result<ForwardOutput<T>> {
        let h = self.embed(ids)?;
        self.forward_hidden(h, opts)
    }

    /// The forward pass from given input vectors (`n × dim`, e.g. permuted embeddings).
    ///
    /// # Errors
    /// As [`LlamaWeights::forward`].
    pub fn forward_hidden(
        &self,
        mut h: Array2<T>,
        opts: &ForwardOptions,
    ) -> Result<ForwardOutput<T>> {
        let c = &self.config;
        let run = opts.layers.unwrap_or(c.layers);
        if run > c.layers {
            return Err(Error::invalid(
                "layers to run",
                run,
                format!("at most the model's {}", c.layers),
            ));
        }
        let n = h.nrows();
        if opts.last_row_only && (run != c.layers || opts.logits_at != [n.saturating_sub(1)]) {
            return Err(Error::invalid(
                "last-row-only forward",
                format!("{run} layers, logits at {:?}", opts.logits_at),
                format!(
                    "every layer ({}) and the logits of the last position only",
                    c.layers
                ),
            ));
        }
        let rope = self.rope_table(n, &opts.positions)?;
        let mut hidden = Vec::new();
        for l in 0..run {
            let q0 = if opts.last_row_only && l + 1 == run {
                n.saturating_sub(2)
            } else {
                0
            };
            h = self.block(l, h.view(), rope.as_ref(), opts.mask, q0)?;
            if opts.keep_hidden {
                hidden.push(h.clone());
            }
        }
        let logits = if opts.last_row_only {
            self.logits(h.view(), &[h.nrows() - 1])?
        } else if run == c.layers && !opts.logits_at.is_empty() {
            self.logits(h.view(), &opts.logits_at)?
        } else {
            Array2::zeros((0, c.vocab))
        };
        Ok(ForwardOutput {
            hidden,
            last: h,
            logits,
        })
    }
}

/// Undoes llama.cpp's q/k row permutation: GGUF rows of each head are ordered for the
/// adjacent-pair rotation, `gguf[h, 2j + i] = hf[h, i·(d/2) + j]` (`i ∈ {0, 1}`, `j < d/2`), i.e.
/// rows reshaped to `(heads, d/2, 2, …)` with the two middle axes swapped relative to Hugging
/// Face's `(heads, 2, d/2, …)`. Returns the rows in Hugging Face's order (half-split rotation);
/// the same as transformers' `_reverse_permute_weights`. Works on matrices (`rows × in`) and, with
/// one column, on bias vectors.
///
/// # Errors
/// Rows not `heads × head_dim` with an even head dimension.
pub fn unpermute_rows<T: Clone + Default>(w: ArrayView2<T>, heads: usize) -> Result<Array2<T>> {
    let rows = w.nrows();
    if heads == 0 || !rows.is_multiple_of(heads) || !(rows / heads).is_multiple_of(2) {
        return Err(Error::shape(
            "q/k row permutation",
            format!("rows = {heads} heads × an even head dimension"),
            rows,
        ));
    }
    let hd = rows / heads;
    let half = hd / 2;
    let mut out = Array2::from_elem(w.dim(), T::default());
    for h in 0..heads {
        for i in 0..2 {
            for j in 0..half {
                out.row_mut(h * hd + i * half + j)
                    .assign(&w.row(h * hd + 2 * j + i));
            }
        }
    }
    Ok(out)
}

/// The next-token distribution of one row of logits: softmax probabilities (computed in f64).
pub fn softmax_f64<T: Real>(logits: ArrayView1<T>) -> Vec<f64> {
    let max = logits
        .iter()
        .map(|x| x.to_f64())
        .fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = logits.iter().map(|x| (x.to_f64() - max).exp()).collect();
    let sum: f64 = e.iter().sum();
    e.into_iter().map(|x| x / sum).collect()
}

/// The `k` largest entries of a row, as `(index, value)`, largest first (ties: lower id first).
pub fn top_k<T: Real>(row: ArrayView1<T>, k: usize) -> Vec<(usize, f64)> {
    let mut idx: Vec<(usize, f64)> = row.iter().map(|x| x.to_f64()).enumerate().collect();
    idx.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    idx.truncate(k);
    idx
}

/// SmolLM2-135M's widths (576 wide, 9 query and 3 key/value heads of 64, SwiGLU 1536, rope base
/// 10⁵ half-split) with 2 layers and a 300-token vocabulary: the tests' synthetic config.
#[cfg(test)]
pub(crate) fn test_config() -> LlamaConfig {
    LlamaConfig {
        arch: Arch::Llama,
        layers: 2,
        dim: 576,
        heads: 9,
        kv_heads: 3,
        head_dim: 64,
        ffn_dim: 1536,
        vocab: 300,
        rms_eps: 1e-5,
        inv_freq: (0..32).map(|k| 1e5f64.powf(-(k as f64) / 32.0)).collect(),
        rope_attention_factor: 1.0,
        rope_layout: Layout::HalfSplit,
        context_length: None,
        sliding_window: None,
        tied: true,
    }
}

/// A model of config `c` with standard-normal weights scaled by `1/√fan-in` (unit norms, no
/// biases, tied output): the tests' synthetic checkpoint.
#[cfg(test)]
pub(crate) fn random_weights(c: LlamaConfig, seed: u64) -> LlamaWeights<f64> {
    use crate::rng::{Gaussian, StdGaussian};
    let mut g = StdGaussian::new(seed);
    let mut m = |r: usize, cols: usize| {
        Array2::from_shape_fn((r, cols), |_| g.standard_normal() / (cols as f64).sqrt())
    };
    let (d, hd, f) = (c.dim, c.head_dim, c.ffn_dim);
    let layers = (0..c.layers)
        .map(|_| LayerWeights {
            attn_norm: Array1::ones(d),
            wq: m(c.heads * hd, d),
            wk: m(c.kv_heads * hd, d),
            wv: m(c.kv_heads * hd, d),
            wo: m(d, c.heads * hd),
            bq: None,
            bk: None,
            bv: None,
            bo: None,
            q_norm: None,
            k_norm: None,
            ffn_norm: Array1::ones(d),
            w_gate: m(f, d),
            w_up: m(f, d),
            w_down: m(d, f),
        })
        .collect();
    LlamaWeights {
        embed: m(c.vocab, d),
        layers,
        final_norm: Array1::ones(d),
        output: None,
        config: c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::{grouped_attention, Attention};
    use crate::rng::{Gaussian, StdGaussian};

    /// Running the last layer for the last positions only gives the full run's logits bit for
    /// bit (the same products, summed in the same order, for the rows that are computed), with
    /// and without the rotation, for sequence lengths around the kernel's tiles.
    #[test]
    fn the_last_row_only_forward_equals_the_full_forward() {
        let w = random_weights(test_config(), 21).cast::<f32>();
        for n in [1usize, 2, 31, 64, 97] {
            let ids: Vec<u32> = (0..n as u32).map(|i| (i * 37 + 5) % 300).collect();
            for positions in [Positions::Rope, Positions::None] {
                let full = ForwardOptions {
                    positions: positions.clone(),
                    logits_at: vec![n - 1],
                    ..ForwardOptions::default()
                };
                let fast = ForwardOptions {
                    last_row_only: true,
                    ..full.clone()
                };
                let a = w.forward(&ids, &full).unwrap();
                let b = w.forward(&ids, &fast).unwrap();
                assert_eq!(b.last.dim(), (n.min(2), 576));
                assert_eq!(b.last.row(n.min(2) - 1), a.last.row(n - 1), "n = {n}");
                assert_eq!(b.logits, a.logits, "n = {n}");
            }
        }
        let bad = ForwardOptions {
            last_row_only: true,
            logits_at: vec![0],
            ..ForwardOptions::default()
        };
        let e = w.forward(&[1, 2, 3], &bad).unwrap_err().to_string();
        assert!(e.contains("logits at [0]"), "{e}");
    }

    fn gauss(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
        let mut g = StdGaussian::new(seed);
        Array2::from_shape_fn((rows, cols), |_| g.standard_normal())
    }

    #[test]
    fn unsupported_architectures_are_refused_by_name_with_the_list() {
        assert_eq!(Arch::parse("LlamaForCausalLM").unwrap(), Arch::Llama);
        assert_eq!(Arch::parse("qwen3").unwrap(), Arch::Qwen3);
        let e = Arch::parse("gemma3").unwrap_err().to_string();
        assert!(e.contains("gemma3") && e.contains(SUPPORTED), "{e}");
    }

    /// The permutation llama.cpp applies and [`unpermute_rows`] undoes is the layout permutation
    /// of `position::rotary` per head: rotating the GGUF rows' adjacent pairs gives the same
    /// scores as rotating the unpermuted rows' halves (one rotation up to a fixed permutation of
    /// coordinates). Exact: both sides compute the same products, only the dot products' terms
    /// are summed in a different order (bound 4·eps·Σ|terms| per score).
    #[test]
    fn adjacent_pairs_on_gguf_rows_equal_half_split_on_unpermuted_rows() {
        let (heads, hd, d, n) = (3, 8, 12, 5);
        let hf = gauss(heads * hd, d, 1); // Hugging Face order
                                          // llama.cpp's permute: reshape(heads, 2, hd/2, d).swapaxes(1, 2)
        let mut gguf = Array2::zeros(hf.dim());
        for h in 0..heads {
            for i in 0..2 {
                for j in 0..hd / 2 {
                    gguf.row_mut(h * hd + 2 * j + i)
                        .assign(&hf.row(h * hd + i * hd / 2 + j));
                }
            }
        }
        assert_eq!(unpermute_rows(gguf.view(), heads).unwrap(), hf);
        let x = gauss(n, d, 2);
        let inv: Vec<f64> = (0..hd / 2).map(|k| 0.7f64.powi(k as i32)).collect();
        let pos: Vec<i64> = (0..n as i64).collect();
        let mut q_half = x.dot(&hf.t());
        let mut q_adj = x.dot(&gguf.t());
        RopeTable::<f64>::new(&inv, 1.0, &pos, Layout::HalfSplit).rotate(&mut q_half, hd);
        RopeTable::<f64>::new(&inv, 1.0, &pos, Layout::Interleaved).rotate(&mut q_adj, hd);
        for h in 0..heads {
            let cols = ndarray::s![.., h * hd..(h + 1) * hd];
            let s1 = q_half.slice(cols).dot(&q_half.slice(cols).t());
            let s2 = q_adj.slice(cols).dot(&q_adj.slice(cols).t());
            let scale = s1.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let err = (&s1 - &s2).iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(
                err <= 4.0 * f64::EPSILON * hd as f64 * scale,
                "head {h}: {err:e}"
            );
        }
    }

    /// The queries of positions `q0 …` alone give the full result's rows bit for bit, across
    /// the kernel's tile boundaries, with and without the causal mask.
    #[test]
    fn attention_for_the_last_queries_equals_those_rows_of_the_full_result() {
        let (n, heads, kv, dk) = (70, 4, 2, 8);
        let q = gauss(n, heads * dk, 6);
        let k = gauss(n, kv * dk, 7);
        let v = gauss(n, kv * dk, 8);
        for mask in [Mask::Causal, Mask::None] {
            let full = grouped_attention(q.view(), k.view(), v.view(), heads, kv, mask).unwrap();
            for q0 in [0, 1, 30, 63, 64, 69] {
                let part = grouped_attention_rows(
                    q.slice(ndarray::s![q0.., ..]),
                    k.view(),
                    v.view(),
                    heads,
                    kv,
                    mask,
                    q0,
                )
                .unwrap();
                assert_eq!(
                    part,
                    full.slice(ndarray::s![q0.., ..]),
                    "{mask:?} from {q0}"
                );
            }
        }
        let e = grouped_attention_rows(q.view(), k.view(), v.view(), heads, kv, Mask::None, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("Q 70 from 1"), "{e}");
    }

    /// Grouped attention with one K/V head per query head is the existing multi-head layer;
    /// with groups, query head h uses K/V head h / group (checked by expanding K and V).
    #[test]
    fn grouped_attention_equals_multi_head_with_repeated_kv() {
        let (n, heads, kv, dk) = (7, 4, 2, 6);
        let q = gauss(n, heads * dk, 3);
        let k = gauss(n, kv * dk, 4);
        let v = gauss(n, kv * dk, 5);
        let got = grouped_attention(q.view(), k.view(), v.view(), heads, kv, Mask::Causal).unwrap();
        let rep = |a: &Array2<f64>| {
            let mut out = Array2::zeros((n, heads * dk));
            for h in 0..heads {
                let g = h / (heads / kv);
                out.slice_mut(ndarray::s![.., h * dk..(h + 1) * dk])
                    .assign(&a.slice(ndarray::s![.., g * dk..(g + 1) * dk]));
            }
            out
        };
        let (kr, vr) = (rep(&k), rep(&v));
        // Identity projections on the concatenation [Q | K | V] select each block.
        let x = ndarray::concatenate![Axis(1), q, kr, vr];
        let w = heads * dk;
        let sel = |b: usize| {
            let mut m = Array2::zeros((3 * w, w));
            for i in 0..w {
                m[[b * w + i, i]] = 1.0;
            }
            m
        };
        let layer = Attention::multi_head(
            sel(0),
            sel(1),
            sel(2),
            Some(Array2::eye(w)),
            heads,
            Mask::Causal,
        )
        .unwrap();
        let want = layer.forward_output_only(x.view()).unwrap();
        let err = (&got - &want).iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(err < 1e-13, "{err:e}");
    }
}
