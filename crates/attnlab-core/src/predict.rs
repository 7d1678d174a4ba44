//! The complete two-token prediction (seed 002, "Use nn-llm-start-here for the complete two-token
//! prediction"): text → labels → embeddings → causal single-head attention → last-row readout →
//! unembedding → softmax over the vocabulary → the predicted next token.
//!
//! Every intermediate matrix is returned, so each step can be printed and checked by hand.
//!
//! # The computation
//!
//! For labels `ids` and an embedding table `E` (vocab × d):
//!
//! * `H = E[ids]` (n × d), the stacked rows ([`Embedding::lookup`]);
//! * `Q = H·Wq`, `K = H·Wk`, `V = H·Wv`;
//! * `scores = Q·Kᵀ/√d_k` with the causal mask (entries `j > i` are −∞, shown as `None`);
//! * `weights = softmax_row(scores)` and `output = weights·V` — computed by
//!   [`Attention::forward`] with [`Mask::Causal`], the library's one attention implementation;
//! * `readout = output[n−1]` (1 × d_v), the last position's row ([`row_readout`]);
//! * `logits = readout·U` (1 × vocab) and `probabilities = softmax(logits)`;
//! * `prediction` = the token with the largest probability; `tied` lists every token whose logit
//!   is within the round-off bound `tie_tolerance = 4·d_v·eps·maxᵢ Σₖ |readoutₖ·Uₖᵢ|` of the
//!   largest (a dot product of d_v terms is off by at most d_v·eps·Σ|terms| after rounding;
//!   the factor 4 covers the two logits compared and the readout's own rounding). More than one
//!   token in `tied` is a tie: the probabilities are equal up to round-off, and `prediction` is
//!   the first of them in vocabulary order only by convention.
//!
//! # Defaults (documented for the README)
//!
//! * `E`: the course table for the vocabulary `(A, B, .)`, `E = [[1, 0], [0, 1], [1/2, 1/2]]`
//!   ([`Embedding::example`]); a `--blocks` file may give its own `E` and `"vocab"`.
//! * `Wq = Wk = Wv = I_d` (identity projections), so that every number can be derived by hand:
//!   for `"A B"`, `H = I₂`, `scores = I₂/√2` (upper entry masked), the weights are
//!   `[[1, 0], [σ(−1/√2), σ(1/√2)]]` with `σ(x) = 1/(1 + e^(−x))`, and the readout is the second
//!   weight row.
//! * `U = Eᵀ` (tied embeddings: `logits = h_last · Eᵀ`, the dot product of the readout with each
//!   token's embedding); a block named `U` (d_v × vocab) replaces it.

use ndarray::{Array2, Axis};
use serde::Serialize;

use crate::attention::{row_readout, softmax_rows, Attention, Mask};
use crate::blocks::Blocks;
use crate::embedding::Embedding;
use crate::tokenizer::Vocabulary;
use crate::{Error, Result};

crate::choice! {
    /// Where a matrix of the prediction came from.
    pub enum BlockOrigin("block origin") {
        /// A block of the blocks file (or inline blocks).
        Blocks = "blocks file",
        /// The default embedding table: the course's table for (A, B, .).
        CourseTable = "default: the course table",
        /// The default projection: the identity.
        Identity = "default: identity",
        /// The default unembedding: Eᵀ (tied embeddings).
        TiedEmbeddings = "default: Eᵀ (tied embeddings)",
    }
}

impl BlockOrigin {
    /// Whether this is a default (no block of that name was given).
    pub fn is_default(self) -> bool {
        self != BlockOrigin::Blocks
    }
}

/// Every intermediate of one prediction (all `f64`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    /// The context, as given.
    pub text: String,
    /// The vocabulary, in label order.
    pub vocab: Vec<String>,
    /// The tokens of the text.
    pub tokens: Vec<String>,
    /// Their labels.
    pub ids: Vec<usize>,
    /// The embedding table used (vocab × d).
    #[serde(rename = "E", serialize_with = "ser_matrix")]
    pub e: Array2<f64>,
    /// The stacked embeddings (n × d).
    #[serde(rename = "H", serialize_with = "ser_matrix")]
    pub h: Array2<f64>,
    /// Query projection (d × d_k).
    #[serde(rename = "Wq", serialize_with = "ser_matrix")]
    pub wq: Array2<f64>,
    /// Key projection (d × d_k).
    #[serde(rename = "Wk", serialize_with = "ser_matrix")]
    pub wk: Array2<f64>,
    /// Value projection (d × d_v).
    #[serde(rename = "Wv", serialize_with = "ser_matrix")]
    pub wv: Array2<f64>,
    /// Unembedding (d_v × vocab).
    #[serde(rename = "U", serialize_with = "ser_matrix")]
    pub u: Array2<f64>,
    /// Where E, each projection and the unembedding came from (`"default: identity"`,
    /// `"blocks file"`, …).
    pub sources: std::collections::BTreeMap<String, BlockOrigin>,
    /// `Q = H·Wq`.
    #[serde(rename = "Q", serialize_with = "ser_matrix")]
    pub q: Array2<f64>,
    /// `K = H·Wk`.
    #[serde(rename = "K", serialize_with = "ser_matrix")]
    pub k: Array2<f64>,
    /// `V = H·Wv`.
    #[serde(rename = "V", serialize_with = "ser_matrix")]
    pub v: Array2<f64>,
    /// `Q·Kᵀ/√d_k` with the causal mask: `None` (−∞) above the diagonal.
    pub scores: Vec<Vec<Option<f64>>>,
    /// The causal attention weights (n × n, row-stochastic, zero above the diagonal).
    #[serde(serialize_with = "ser_matrix")]
    pub weights: Array2<f64>,
    /// `weights·V` (n × d_v).
    #[serde(serialize_with = "ser_matrix")]
    pub output: Array2<f64>,
    /// The last row of the output (d_v values).
    pub readout: Vec<f64>,
    /// `readout·U` (vocab values).
    pub logits: Vec<f64>,
    /// `softmax(logits)` (vocab values, summing to 1).
    pub probabilities: Vec<f64>,
    /// The most probable next token (on a tie, the first of `tied` in vocabulary order).
    pub prediction: String,
    /// Its label.
    pub prediction_id: usize,
    /// Every token tied for the largest probability (logits within `tie_tolerance` of the
    /// largest), in vocabulary order; one token when there is no tie.
    pub tied: Vec<String>,
    /// The round-off bound two logits are compared with (see the module docs).
    pub tie_tolerance: f64,
}

impl Prediction {
    /// Whether several tokens tie for the largest probability.
    pub fn is_tie(&self) -> bool {
        self.tied.len() > 1
    }
}

fn ser_matrix<S: serde::Serializer>(a: &Array2<f64>, s: S) -> std::result::Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(a.nrows()))?;
    for row in a.rows() {
        seq.serialize_element(&row.to_vec())?;
    }
    seq.end()
}

/// The vocabulary a table is read with (see [`Vocabulary::for_table`]).
fn vocabulary(blocks: Option<&Blocks>, table: &Embedding) -> Result<Vocabulary> {
    Vocabulary::for_table(blocks.and_then(|b| b.vocab.as_deref()), table.vocab())
}

/// Runs the complete prediction for `text` (see the module docs for the math and the defaults).
///
/// ```
/// use attnlab_core::predict::predict;
/// let p = predict("A B", None).unwrap();
/// // H = I₂ and identity projections: the last weight row is (σ(−1/√2), σ(1/√2)).
/// let s = 1.0 / (1.0 + (-1.0f64 / 2f64.sqrt()).exp());
/// assert!((p.weights[[1, 1]] - s).abs() < 1e-15);
/// assert_eq!(p.prediction, "B");
/// ```
///
/// # Errors
/// Unknown tokens, empty text, or blocks whose shapes do not fit (`Wq`, `Wk`: d × d_k; `Wv`:
/// d × d_v; `U`: d_v × vocab; without `U`, d_v must equal d so that `Eᵀ` fits).
pub fn predict(text: &str, blocks: Option<&Blocks>) -> Result<Prediction> {
    let table = match blocks.and_then(|b| b.get("E")) {
        Some(e) => Embedding::new(e.clone())?,
        None => Embedding::example(),
    };
    let vocab = vocabulary(blocks, &table)?;
    let ids = vocab.encode(text)?;
    let tokens: Vec<String> = ids.iter().map(|&i| vocab.tokens()[i].clone()).collect();
    let h = table.lookup(&ids)?;
    let d = table.dim();
    let mut sources = std::collections::BTreeMap::new();
    let e_origin = if blocks.and_then(|b| b.get("E")).is_some() {
        BlockOrigin::Blocks
    } else {
        BlockOrigin::CourseTable
    };
    sources.insert("E".to_string(), e_origin);
    let mut block = |name: &str, default: Array2<f64>, origin: BlockOrigin| -> Array2<f64> {
        match blocks.and_then(|b| b.get(name)) {
            Some(b) => {
                sources.insert(name.to_string(), BlockOrigin::Blocks);
                b.clone()
            }
            None => {
                sources.insert(name.to_string(), origin);
                default
            }
        }
    };
    let wq = block("Wq", Array2::eye(d), BlockOrigin::Identity);
    let wk = block("Wk", Array2::eye(d), BlockOrigin::Identity);
    let wv = block("Wv", Array2::eye(d), BlockOrigin::Identity);
    let u = block(
        "U",
        table.table().t().to_owned(),
        BlockOrigin::TiedEmbeddings,
    );
    let (dk, dv) = (wq.ncols(), wv.ncols());
    for (name, w) in [("Wq", &wq), ("Wk", &wk), ("Wv", &wv)] {
        if w.nrows() != d {
            return Err(Error::shape(
                format!("block {name}"),
                format!("{d} rows (d, the width of the embedding table E)"),
                format!("{}×{}", w.nrows(), w.ncols()),
            ));
        }
    }
    if wk.ncols() != dk {
        return Err(Error::shape(
            "block Wk",
            format!("{d}×{dk} (the shape of Wq: queries and keys have one width)"),
            format!("{}×{}", wk.nrows(), wk.ncols()),
        ));
    }
    if u.dim() != (dv, vocab.len()) {
        // Blame the block the user gave: without a U block the default Eᵀ (d × vocab) only
        // fits a d × d value projection.
        return Err(if sources["U"].is_default() {
            Error::shape(
                "block Wv",
                format!(
                    "{d}×{d} (without a U block the unembedding is Eᵀ, {d}×{}, which needs Wv's columns = d; or give U of {dv}×{})",
                    vocab.len(),
                    vocab.len()
                ),
                format!("{}×{}", wv.nrows(), wv.ncols()),
            )
        } else {
            Error::shape(
                "block U",
                format!("{dv}×{} (Wv's columns × vocabulary size)", vocab.len()),
                format!("{}×{}", u.nrows(), u.ncols()),
            )
        });
    }
    let layer = Attention::single(wq.clone(), wk.clone(), wv.clone(), Mask::Causal)?;
    // One pass: the output and weights from the kernel, Q, K, V and the scaled masked scores
    // from the same call (the unfused operations, `Q·Kᵀ/√d_k`).
    let (mut out, trace) = layer.forward_traced(h.view(), &|x| Ok(x.to_owned()))?;
    let weights = out.weights.swap_remove(0);
    let crate::attention::Trace {
        q, k, v, scores, ..
    } = trace;
    let scores = scores
        .first()
        .map(|raw| {
            raw.rows()
                .into_iter()
                .enumerate()
                .map(|(i, row)| {
                    row.iter()
                        .enumerate()
                        .map(|(j, &x)| (j <= i).then_some(x))
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default();
    let n = h.nrows();
    let readout = row_readout(out.output.view(), n - 1)?;
    let logits = readout.dot(&u);
    let mut probs = logits.clone();
    softmax_rows(&mut probs);
    let probabilities = probs.index_axis(Axis(0), 0).to_vec();
    crate::symmetry::ensure_finite_values(
        out.output
            .iter()
            .chain(logits.iter())
            .chain(&probabilities)
            .copied(),
    )?;
    let prediction_id =
        probabilities.iter().enumerate().fold(
            0,
            |best, (i, &p)| if p > probabilities[best] { i } else { best },
        );
    let logit_row = logits.index_axis(Axis(0), 0);
    let magnitude = (0..vocab.len())
        .map(|i| {
            readout
                .row(0)
                .iter()
                .zip(u.column(i))
                .map(|(r, w)| (r * w).abs())
                .sum::<f64>()
        })
        .fold(0.0f64, f64::max);
    let tie_tolerance = 4.0 * dv as f64 * f64::EPSILON * magnitude;
    let best = logit_row[prediction_id];
    let tied: Vec<String> = (0..vocab.len())
        .filter(|&i| best - logit_row[i] <= tie_tolerance)
        .map(|i| vocab.tokens()[i].clone())
        .collect();
    let prediction_id = vocab
        .tokens()
        .iter()
        .position(|t| Some(t) == tied.first())
        .unwrap_or(prediction_id);
    Ok(Prediction {
        text: text.to_string(),
        vocab: vocab.tokens().to_vec(),
        tokens,
        ids,
        e: table.table().to_owned(),
        h,
        wq,
        wk,
        wv,
        u,
        sources,
        q,
        k,
        v,
        scores,
        weights,
        output: out.output,
        readout: readout.index_axis(Axis(0), 0).to_vec(),
        logits: logits.index_axis(Axis(0), 0).to_vec(),
        probabilities,
        prediction: vocab.tokens()[prediction_id].clone(),
        prediction_id,
        tied,
        tie_tolerance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sigmoid(x: f64) -> f64 {
        1.0 / (1.0 + (-x).exp())
    }

    #[test]
    fn a_b_with_identity_projections_is_hand_derivable() {
        let p = predict("A B", None).unwrap();
        assert_eq!(p.ids, vec![0, 1]);
        assert_eq!(p.h, Array2::<f64>::eye(2));
        // Q = K = V = H = I₂ exactly (products with one non-zero term each).
        assert_eq!(p.q, Array2::<f64>::eye(2));
        let r = 1.0 / 2f64.sqrt();
        // scores = I/√2: the same single division the layer performs, so exact equality.
        assert_eq!(
            p.scores,
            vec![vec![Some(r), None], vec![Some(0.0), Some(r)]]
        );
        // Row 0 sees only itself: weight exactly 1. Row 1 is softmax(0, 1/√2) =
        // (σ(−1/√2), σ(1/√2)); the library evaluates exp(s − max)/Σ, a different but equivalent
        // formula: a few roundings, so 4 ulp of 1 (≈ 9e-16).
        assert_eq!(p.weights[[0, 0]], 1.0);
        assert_eq!(p.weights[[0, 1]], 0.0);
        assert!((p.weights[[1, 0]] - sigmoid(-r)).abs() < 4.0 * f64::EPSILON);
        assert!((p.weights[[1, 1]] - sigmoid(r)).abs() < 4.0 * f64::EPSILON);
        // V = I, so the output is the weight matrix and the readout its last row.
        assert_eq!(p.output, p.weights);
        assert_eq!(p.readout, p.weights.row(1).to_vec());
        // logits = readout·Eᵀ = (w10, w11, (w10 + w11)/2); the third is 1/2 to round-off since
        // the weights sum to 1 (2 ulp).
        assert_eq!(p.logits[0], p.readout[0]);
        assert_eq!(p.logits[1], p.readout[1]);
        assert!((p.logits[2] - 0.5).abs() < 2.0 * f64::EPSILON);
        // B has the largest logit (σ(1/√2) ≈ 0.67 > 1/2 > σ(−1/√2) ≈ 0.33).
        assert_eq!(p.prediction, "B");
        let z: f64 = p.logits.iter().map(|l| l.exp()).sum();
        for (pr, l) in p.probabilities.iter().zip(&p.logits) {
            // Softmax of three O(1) numbers: a few ulp.
            assert!((pr - l.exp() / z).abs() < 8.0 * f64::EPSILON);
        }
    }

    #[test]
    fn b_a_reverses_the_readout_and_predicts_a() {
        // H = [[0,1],[1,0]]: the last query is A, so the readout is (σ(1/√2), σ(−1/√2)).
        let p = predict("B A", None).unwrap();
        let r = 1.0 / 2f64.sqrt();
        assert!((p.readout[0] - sigmoid(r)).abs() < 4.0 * f64::EPSILON);
        assert_eq!(p.prediction, "A");
    }

    #[test]
    fn scores_agree_with_the_layers_weights() {
        let p = predict("A . B", None).unwrap();
        let mut s =
            Array2::from_shape_fn((3, 3), |(i, j)| p.scores[i][j].unwrap_or(f64::NEG_INFINITY));
        softmax_rows(&mut s);
        // The same operations in the same order as Attention::forward: identical.
        assert_eq!(s, p.weights);
    }

    /// Issue 11, defect 4: "B A ." gives the readout (½, ½), whose logits against the course
    /// table are all ½: the probabilities tie (⅓ each), and the report says so.
    #[test]
    fn regression_a_tie_is_reported_with_every_tied_token() {
        let p = predict("B A .", None).unwrap();
        assert!(p.is_tie());
        assert_eq!(p.tied, ["A", "B", "."]);
        let third = 1.0 / 3.0;
        for pr in &p.probabilities {
            assert!((pr - third).abs() <= 4.0 * f64::EPSILON, "{pr}");
        }
        // "A B" has a clear winner: no tie.
        let q = predict("A B", None).unwrap();
        assert_eq!(q.tied, ["B"]);
        assert!(!q.is_tie() && q.tie_tolerance > 0.0 && q.tie_tolerance < 1e-14);
    }

    #[test]
    fn blocks_replace_defaults_and_bad_shapes_are_errors() {
        let mut b = Blocks::default();
        b.arrays.insert("U".into(), Array2::from_elem((2, 3), 1.0));
        let p = predict("A B", Some(&b)).unwrap();
        // Equal logits: uniform probabilities, a three-way tie (the first token is named).
        assert_eq!(p.prediction, "A");
        assert!(p.is_tie());
        assert_eq!(p.tied, ["A", "B", "."]);
        assert_eq!(p.sources["U"], BlockOrigin::Blocks);
        b.arrays.insert("U".into(), Array2::from_elem((3, 3), 1.0));
        assert!(predict("A B", Some(&b)).is_err());
        assert!(predict("A C", None).is_err());
        assert!(predict("", None).is_err());
    }
}
