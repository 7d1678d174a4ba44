//! One decoder layer's attention sublayer of a real checkpoint as a map on hidden states, in
//! f32 or f64 — the function the equivariance checker is handed (Python's
//! `attnlab.model.load(…).layer(L)`).
//!
//! For the residual stream `H` entering layer `ℓ` (`n × dim`, one row per token):
//!
//! ```text
//! f(H) = Attn_ℓ(RMSNorm(H; g_attn))        (all heads, grouped K/V, W_o; no residual, no MLP)
//! ```
//!
//! with the rotation at positions `0 … n−1` (`rope = true`) or none (cos = 1, sin = 0), and the
//! mask given. RMSNorm acts on each row alone, so without rotation and mask `f(ΠH) = Π f(H)`
//! for every permutation `Π` of the rows (the course's equivariance, on trained weights); with
//! the rotation, row `i` is rotated by angle `i·ω` whichever token sits there, and the identity
//! breaks.
//!
//! The layer's weights are copied out of the checkpoint once (in f32 as loaded, and rounded to
//! f64 for the checker's round-off-or-structure diagnosis), so calls never touch the rest of
//! the model.

use ndarray::{Array1, Array2, ArrayView2};

use super::llama::{LlamaWeights, Positions};
use crate::attention::Mask;
use crate::{Error, Real, Result};

/// The attention sublayer of one layer, as a function of the hidden states.
#[derive(Debug, Clone)]
pub struct AttentionSublayer<T> {
    /// The layer's index in the checkpoint.
    pub layer: usize,
    /// Whether queries and keys are rotated at positions `0 … n−1`.
    pub rope: bool,
    /// The attention mask.
    pub mask: Mask,
    /// A one-layer model holding only this layer's weights.
    model: LlamaWeights<T>,
}

impl<T: Real> AttentionSublayer<T> {
    /// Layer `l` of `w`, its weights rounded to `T`.
    ///
    /// # Errors
    /// `l` outside the model's layers (named with the range).
    pub fn new<S: Real>(w: &LlamaWeights<S>, l: usize, rope: bool, mask: Mask) -> Result<Self> {
        let lw = w.layer(l)?;
        let mut config = w.config.clone();
        config.layers = 1;
        let model = LlamaWeights {
            embed: Array2::zeros((0, config.dim)),
            final_norm: Array1::zeros(0),
            output: None,
            // The MLP is not part of the sublayer: empty, never read.
            layers: vec![lw.cast(false)],
            config,
        };
        Ok(AttentionSublayer {
            layer: l,
            rope,
            mask,
            model,
        })
    }

    /// The width of the hidden states it takes and returns.
    pub fn dim(&self) -> usize {
        self.model.config.dim
    }

    /// `f(H)`: the sublayer on `h` (`n × dim`).
    ///
    /// # Errors
    /// `h` with no rows, the wrong width, or non-finite entries.
    pub fn apply(&self, h: ArrayView2<T>) -> Result<Array2<T>> {
        if h.nrows() == 0 || h.ncols() != self.dim() {
            return Err(Error::shape(
                format!("layer {} input", self.layer),
                format!("(n, {}) with n ≥ 1", self.dim()),
                format!("({}, {})", h.nrows(), h.ncols()),
            ));
        }
        crate::numeric::require_finite("the hidden states", h)?;
        let pos = if self.rope {
            Positions::Rope
        } else {
            Positions::None
        };
        let table = self.model.rope_table(h.nrows(), &pos)?;
        self.model.attention(0, h, table.as_ref(), self.mask)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::llama::{random_weights, test_config, LlamaConfig};

    fn tiny() -> LlamaWeights<f64> {
        let c = LlamaConfig {
            dim: 8,
            heads: 2,
            kv_heads: 1,
            head_dim: 4,
            ffn_dim: 6,
            vocab: 5,
            inv_freq: vec![1.0, 0.1],
            ..test_config()
        };
        random_weights(c, 7)
    }

    /// The sublayer is exactly the model's own attention of that layer (the same operations on
    /// the same values), with and without the rotation.
    #[test]
    fn the_sublayer_is_the_models_attention() {
        let w = tiny();
        let h = w.embed(&[0, 3, 1, 4]).unwrap();
        for rope in [false, true] {
            let s = AttentionSublayer::<f64>::new(&w, 1, rope, Mask::Causal).unwrap();
            let pos = if rope {
                Positions::Rope
            } else {
                Positions::None
            };
            let t = w.rope_table(4, &pos).unwrap();
            let want = w.attention(1, h.view(), t.as_ref(), Mask::Causal).unwrap();
            assert_eq!(s.apply(h.view()).unwrap(), want);
        }
    }

    #[test]
    fn bad_layers_and_widths_are_named() {
        let w = tiny();
        let e = AttentionSublayer::<f32>::new(&w, 2, false, Mask::None).unwrap_err();
        assert!(e.to_string().contains("0 … 1"), "{e}");
        let s = AttentionSublayer::<f32>::new(&w, 0, false, Mask::None).unwrap();
        let e = s.apply(Array2::zeros((3, 5)).view()).unwrap_err();
        assert!(e.to_string().contains("(3, 5)"), "{e}");
    }
}
