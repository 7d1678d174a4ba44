//! Scaled dot-product self-attention, exactly as the course's numpy program computes it.
//!
//! For an input `H` (n tokens × d): `Q = H·Wq`, `K = H·Wk`, `V = H·Wv`,
//! `A = softmax_row(Q·Kᵀ / √d_k)` and output `A·V`, where the row softmax subtracts each row's
//! maximum before exponentiating (`e = exp(s − max s)`, `e / Σe`). With several heads the
//! columns of `Q`, `K`, `V` are split into `h` equal blocks, each head attends with its own
//! `d_k = cols/h`, and the concatenated head outputs are multiplied by `Wo`.
//!
//! Matrix products go through ndarray's `dot` (matrixmultiply's GEMM for `f32`/`f64`);
//! [`self_attention_reference`] is the same computation with plain loops, kept readable and
//! tested against the fast path.

use ndarray::{s, Array2, ArrayView2, Axis};

use crate::{Error, Real, Result};

crate::choice! {
    /// Which key positions each query may attend to.
    #[derive(Default)]
    pub enum Mask("mask") {
        #[default]
        /// Every query attends to every key (unmasked; permutation equivariant).
        None = "none",
        /// Query `i` attends to keys `j ≤ i` only (scores for `j > i` are −∞ before the softmax).
        /// Row `i` always keeps its diagonal, so no row can be fully masked.
        Causal = "causal",
    }
}

/// What a forward pass returns: the output and the attention weights of every head.
#[derive(Debug, Clone, PartialEq)]
pub struct AttentionOutput<T> {
    /// The layer output (n × d_out).
    pub output: Array2<T>,
    /// Per head, the row-stochastic weight matrix `A` (n × n).
    pub weights: Vec<Array2<T>>,
}

/// The intermediates of one forward pass (see [`Attention::forward_traced`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Trace<T> {
    /// `Q = H·Wq` (n × heads·d_k), before the per-head map (RoPE).
    pub q: Array2<T>,
    /// `K = H·Wk`.
    pub k: Array2<T>,
    /// `V = H·Wv` (n × heads·d_v).
    pub v: Array2<T>,
    /// Each head's queries after the per-head map, concatenated (equal to `q` without a map).
    pub q_mapped: Array2<T>,
    /// Each head's keys after the per-head map, concatenated.
    pub k_mapped: Array2<T>,
    /// Per head, the scaled scores `Q_h·K_hᵀ/√d_k` with masked entries −∞ (before softmax).
    pub scores: Vec<Array2<T>>,
}

/// Row softmax in place: each row `s` becomes `exp(s − max s) / Σ exp(s − max s)`.
/// Entries equal to −∞ (masked) become exactly 0.
pub fn softmax_rows<T: Real>(scores: &mut Array2<T>) {
    for mut row in scores.rows_mut() {
        let max =
            row.iter().copied().fold(
                T::from_f64(f64::NEG_INFINITY),
                |m, v| if v > m { v } else { m },
            );
        let mut sum = T::zero();
        for v in row.iter_mut() {
            *v = (*v - max).exp();
            sum = sum + *v;
        }
        for v in row.iter_mut() {
            *v = *v / sum;
        }
    }
}

/// A self-attention layer: projections, heads, an optional output projection and a mask.
#[derive(Debug, Clone)]
pub struct Attention<T> {
    wq: Array2<T>,
    wk: Array2<T>,
    wv: Array2<T>,
    wo: Option<Array2<T>>,
    heads: usize,
    mask: Mask,
}

impl<T: Real> Attention<T> {
    /// A single-head layer without output projection — the course's `self_attention`.
    ///
    /// # Errors
    /// Shapes that do not fit (see [`Attention::multi_head`]).
    pub fn single(wq: Array2<T>, wk: Array2<T>, wv: Array2<T>, mask: Mask) -> Result<Self> {
        Self::multi_head(wq, wk, wv, None, 1, mask)
    }

    /// A layer with `heads` heads. `Wq`, `Wk` are d × d_qk and `Wv` is d × d_v with both d_qk and
    /// d_v divisible by `heads`; `Wo` (d_v × d_out) is required when `heads > 1`.
    ///
    /// # Errors
    /// Mismatched rows, indivisible head counts, a missing `Wo`, or zero heads.
    pub fn multi_head(
        wq: Array2<T>,
        wk: Array2<T>,
        wv: Array2<T>,
        wo: Option<Array2<T>>,
        heads: usize,
        mask: Mask,
    ) -> Result<Self> {
        let shape = |a: &Array2<T>| format!("{}×{}", a.nrows(), a.ncols());
        if heads == 0 {
            return Err(Error::invalid("heads", 0, "at least 1"));
        }
        let d = wq.nrows();
        if d == 0 || wq.ncols() == 0 || wv.ncols() == 0 {
            return Err(Error::shape(
                "attention projections",
                "non-empty matrices",
                format!("Wq {}, Wv {}", shape(&wq), shape(&wv)),
            ));
        }
        if wk.dim() != wq.dim() {
            return Err(Error::shape("Wk", shape(&wq), shape(&wk)));
        }
        if wv.nrows() != d {
            return Err(Error::shape(
                "Wv",
                format!("{d} rows (like Wq)"),
                shape(&wv),
            ));
        }
        if !wq.ncols().is_multiple_of(heads) || !wv.ncols().is_multiple_of(heads) {
            return Err(Error::invalid(
                "heads",
                heads,
                format!(
                    "a divisor of the projection widths ({} and {})",
                    wq.ncols(),
                    wv.ncols()
                ),
            ));
        }
        match &wo {
            Some(o) if o.nrows() != wv.ncols() => {
                return Err(Error::shape(
                    "Wo",
                    format!("{} rows (Wv's columns)", wv.ncols()),
                    shape(o),
                ))
            }
            None if heads > 1 => {
                return Err(Error::invalid(
                    "Wo",
                    "missing",
                    "an output projection when heads > 1",
                ))
            }
            _ => {}
        }
        Ok(Attention {
            wq,
            wk,
            wv,
            wo,
            heads,
            mask,
        })
    }

    /// Input width d.
    pub fn dim(&self) -> usize {
        self.wq.nrows()
    }

    /// The mask.
    pub fn mask(&self) -> Mask {
        self.mask
    }

    /// The number of heads.
    pub fn heads(&self) -> usize {
        self.heads
    }

    /// Forward pass on `H` (n × d).
    ///
    /// ```
    /// use attnlab_core::attention::{Attention, Mask};
    /// use ndarray::{array, Array2};
    /// let eye = Array2::<f64>::eye(2);
    /// let layer = Attention::single(eye.clone(), eye.clone(), eye.clone(), Mask::None).unwrap();
    /// let out = layer.forward(eye.view()).unwrap();
    /// // Scores are I/√2; each weight row is a softmax of (1/√2, 0).
    /// let w = 1.0 / (1.0 + (-1.0f64 / 2f64.sqrt()).exp());
    /// assert!((out.weights[0][[0, 0]] - w).abs() < 1e-15);
    /// ```
    ///
    /// # Errors
    /// `H` has the wrong width or no rows.
    pub fn forward(&self, h: ArrayView2<T>) -> Result<AttentionOutput<T>> {
        self.forward_with(h, &|x: ArrayView2<T>| Ok(x.to_owned()))
    }

    /// Forward pass where each head's queries and keys (n × d_k) are first mapped by `qk` —
    /// the hook rotary position embeddings use. Values are never passed to `qk`.
    ///
    /// # Errors
    /// `H` has the wrong width or no rows, or `qk` fails.
    pub fn forward_with(
        &self,
        h: ArrayView2<T>,
        qk: &dyn Fn(ArrayView2<T>) -> Result<Array2<T>>,
    ) -> Result<AttentionOutput<T>> {
        self.forward_inner(h, qk, None)
    }

    /// [`Attention::forward_with`], also returning every intermediate (Q, K, V before and after
    /// the per-head map, the scaled masked scores of each head) — the same operations in the
    /// same order, so the output is identical to `forward_with`'s.
    ///
    /// # Errors
    /// As [`Attention::forward_with`].
    pub fn forward_traced(
        &self,
        h: ArrayView2<T>,
        qk: &dyn Fn(ArrayView2<T>) -> Result<Array2<T>>,
    ) -> Result<(AttentionOutput<T>, Trace<T>)> {
        let mut trace = None;
        let out = self.forward_inner(h, qk, Some(&mut trace))?;
        let trace = trace.ok_or_else(|| Error::invalid("trace", "missing", "a traced pass"))?;
        Ok((out, trace))
    }

    fn forward_inner(
        &self,
        h: ArrayView2<T>,
        qk: &dyn Fn(ArrayView2<T>) -> Result<Array2<T>>,
        trace: Option<&mut Option<Trace<T>>>,
    ) -> Result<AttentionOutput<T>> {
        let (n, d) = h.dim();
        if n == 0 {
            return Err(Error::invalid("sequence length", 0, "at least 1 token"));
        }
        if d != self.dim() {
            return Err(Error::shape(
                "attention input H",
                format!("n×{} (the projections' rows)", self.dim()),
                format!("{n}×{d}"),
            ));
        }
        let q = h.dot(&self.wq);
        let k = h.dot(&self.wk);
        let v = h.dot(&self.wv);
        let dk = q.ncols() / self.heads;
        let dv = v.ncols() / self.heads;
        let scale = T::from_f64(dk as f64).sqrt();
        let mut weights = Vec::with_capacity(self.heads);
        let mut concat = Array2::<T>::zeros((n, v.ncols()));
        let tracing = trace.is_some();
        let mut t = Trace {
            q_mapped: Array2::zeros(if tracing { q.dim() } else { (0, 0) }),
            k_mapped: Array2::zeros(if tracing { k.dim() } else { (0, 0) }),
            q: Array2::zeros((0, 0)),
            k: Array2::zeros((0, 0)),
            v: Array2::zeros((0, 0)),
            scores: Vec::new(),
        };
        for head in 0..self.heads {
            let qh = qk(q.slice(s![.., head * dk..(head + 1) * dk]))?;
            let kh = qk(k.slice(s![.., head * dk..(head + 1) * dk]))?;
            let mut scores = qh.dot(&kh.t());
            scores.mapv_inplace(|x| x / scale);
            if self.mask == Mask::Causal {
                for ((i, j), x) in scores.indexed_iter_mut() {
                    if j > i {
                        *x = T::from_f64(f64::NEG_INFINITY);
                    }
                }
            }
            if tracing {
                t.q_mapped
                    .slice_mut(s![.., head * dk..(head + 1) * dk])
                    .assign(&qh);
                t.k_mapped
                    .slice_mut(s![.., head * dk..(head + 1) * dk])
                    .assign(&kh);
                t.scores.push(scores.clone());
            }
            softmax_rows(&mut scores);
            let out = scores.dot(&v.slice(s![.., head * dv..(head + 1) * dv]));
            concat
                .slice_mut(s![.., head * dv..(head + 1) * dv])
                .assign(&out);
            weights.push(scores);
        }
        let output = match &self.wo {
            Some(wo) => concat.dot(wo),
            None => concat,
        };
        if let Some(slot) = trace {
            t.q = q;
            t.k = k;
            t.v = v;
            *slot = Some(t);
        }
        Ok(AttentionOutput { output, weights })
    }
}

/// The course's `self_attention(X, Wq, Wk, Wv)` (one head, no mask) written with plain loops:
/// the readable definition the GEMM path is tested against.
///
/// # Errors
/// Shapes that do not fit.
pub fn self_attention_reference<T: Real>(
    x: ArrayView2<T>,
    wq: ArrayView2<T>,
    wk: ArrayView2<T>,
    wv: ArrayView2<T>,
    mask: Mask,
) -> Result<AttentionOutput<T>> {
    let (n, d) = x.dim();
    if n == 0 || d != wq.nrows() || wk.dim() != wq.dim() || wv.nrows() != d {
        return Err(Error::shape(
            "self_attention_reference",
            "X n×d, Wq/Wk d×dk, Wv d×dv",
            format!(
                "X {:?}, Wq {:?}, Wk {:?}, Wv {:?}",
                x.dim(),
                wq.dim(),
                wk.dim(),
                wv.dim()
            ),
        ));
    }
    let matmul = |a: ArrayView2<T>, b: ArrayView2<T>| {
        let mut c = Array2::<T>::zeros((a.nrows(), b.ncols()));
        for i in 0..a.nrows() {
            for j in 0..b.ncols() {
                let mut acc = T::zero();
                for t in 0..a.ncols() {
                    acc = acc + a[[i, t]] * b[[t, j]];
                }
                c[[i, j]] = acc;
            }
        }
        c
    };
    let q = matmul(x, wq);
    let k = matmul(x, wk);
    let v = matmul(x, wv);
    let scale = T::from_f64(q.ncols() as f64).sqrt();
    let mut scores = matmul(q.view(), k.t());
    for ((i, j), s) in scores.indexed_iter_mut() {
        *s = if mask == Mask::Causal && j > i {
            T::from_f64(f64::NEG_INFINITY)
        } else {
            *s / scale
        };
    }
    softmax_rows(&mut scores);
    let output = matmul(scores.view(), v.view());
    Ok(AttentionOutput {
        output,
        weights: vec![scores],
    })
}

/// Mean over positions: the order-blind readout (n × d → 1 × d).
pub fn mean_readout<T: Real>(h: ArrayView2<T>) -> Array2<T> {
    let n = T::from_f64(h.nrows() as f64);
    h.sum_axis(Axis(0)).mapv(|x| x / n).insert_axis(Axis(0))
}

/// Row `i` of `h`: a readout that selects a position (n × d → 1 × d).
///
/// # Errors
/// `i ≥ n`.
pub fn row_readout<T: Real>(h: ArrayView2<T>, i: usize) -> Result<Array2<T>> {
    if i >= h.nrows() {
        return Err(Error::invalid(
            "readout row",
            i,
            format!("0..{} (the sequence length)", h.nrows()),
        ));
    }
    Ok(h.slice(s![i..i + 1, ..]).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Gaussian, StdGaussian};

    fn random_layer(d: usize, seed: u64, mask: Mask) -> (Attention<f64>, Array2<f64>) {
        let mut g = StdGaussian::new(seed);
        let (wq, wk, wv) = (g.randn(d, d), g.randn(d, d), g.randn(d, d));
        let x = g.randn(7, d);
        (Attention::single(wq, wk, wv, mask).unwrap(), x)
    }

    #[test]
    fn gemm_path_matches_loop_reference() {
        for mask in [Mask::None, Mask::Causal] {
            let mut g = StdGaussian::new(3);
            let (wq, wk, wv, x) = (g.randn(5, 5), g.randn(5, 5), g.randn(5, 5), g.randn(9, 5));
            let fast = Attention::single(wq.clone(), wk.clone(), wv.clone(), mask)
                .unwrap()
                .forward(x.view())
                .unwrap();
            let slow =
                self_attention_reference(x.view(), wq.view(), wk.view(), wv.view(), mask).unwrap();
            // The GEMM kernel may sum the 5-term dot products in another order (and use FMA):
            // each projection/score entry differs by at most ~d·eps relative, and the softmax and
            // weighted sum add ~n·eps; 64·eps·max|out| bounds that with room for the exp's
            // condition (|scores| here are O(10)).
            let scale = slow.output.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            let err = (&fast.output - &slow.output)
                .iter()
                .fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(
                err <= 64.0 * f64::EPSILON * scale * 10.0,
                "mask {mask:?}: {err:e}"
            );
        }
    }

    #[test]
    fn weights_are_row_stochastic_and_causal_is_lower_triangular() {
        let (layer, x) = random_layer(4, 1, Mask::Causal);
        let out = layer.forward(x.view()).unwrap();
        let w = &out.weights[0];
        for (i, row) in w.rows().into_iter().enumerate() {
            // A sum of ≤ 7 numbers in [0, 1] rounded after division: within 8 eps of 1.
            assert!((row.sum() - 1.0).abs() < 8.0 * f64::EPSILON);
            for j in i + 1..w.ncols() {
                assert_eq!(row[j], 0.0);
            }
        }
        assert_eq!(w[[0, 0]], 1.0, "the first query sees only itself");
    }

    #[test]
    fn multi_head_with_identity_output_projection_concatenates_heads() {
        let mut g = StdGaussian::new(9);
        let (wq, wk, wv, x) = (g.randn(4, 4), g.randn(4, 4), g.randn(4, 4), g.randn(5, 4));
        let layer = Attention::multi_head(
            wq.clone(),
            wk.clone(),
            wv.clone(),
            Some(Array2::eye(4)),
            2,
            Mask::None,
        )
        .unwrap();
        let out = layer.forward(x.view()).unwrap();
        assert_eq!(out.weights.len(), 2);
        // Head 0 equals a single-head layer on the first two columns of each projection.
        let h0 = Attention::single(
            wq.slice(s![.., 0..2]).to_owned(),
            wk.slice(s![.., 0..2]).to_owned(),
            wv.slice(s![.., 0..2]).to_owned(),
            Mask::None,
        )
        .unwrap();
        let o0 = h0.forward(x.view()).unwrap();
        // Same operations in the same order on the same numbers, except that the full-width
        // GEMM may block differently: allow 4 ulps of the output scale.
        let err = (&out.output.slice(s![.., 0..2]) - &o0.output)
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(err < 4.0 * f64::EPSILON * 10.0, "{err:e}");
    }

    #[test]
    fn shape_errors_are_reported() {
        let e = Array2::<f64>::eye(4);
        assert!(Attention::single(e.clone(), Array2::eye(3), e.clone(), Mask::None).is_err());
        assert!(
            Attention::multi_head(e.clone(), e.clone(), e.clone(), None, 2, Mask::None).is_err()
        );
        assert!(Attention::multi_head(
            e.clone(),
            e.clone(),
            e.clone(),
            Some(e.clone()),
            3,
            Mask::None
        )
        .is_err());
        let layer = Attention::single(e.clone(), e.clone(), e.clone(), Mask::None).unwrap();
        assert!(layer.forward(Array2::<f64>::zeros((2, 3)).view()).is_err());
        assert!(layer.forward(Array2::<f64>::zeros((0, 4)).view()).is_err());
    }

    #[test]
    fn readouts() {
        let h = ndarray::array![[1.0, 2.0], [3.0, 6.0]];
        assert_eq!(mean_readout(h.view()), ndarray::array![[2.0, 4.0]]);
        assert_eq!(
            row_readout(h.view(), 1).unwrap(),
            ndarray::array![[3.0, 6.0]]
        );
        assert!(row_readout(h.view(), 2).is_err());
    }
}
