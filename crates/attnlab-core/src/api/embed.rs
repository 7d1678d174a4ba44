//! `attnlab embed`: tokens → labels → one-hot vectors → rows of the embedding table E, and the
//! basis-change redundancy at a linear interface (seed 002 §1).

pub mod prose;

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::attend::rows;
use super::value::BlocksSource;
use super::{Context, Outcome};
use crate::chart::Chart;
use crate::embedding::{basis_change, one_hot, BasisChangeCase, Embedding, Interface};
use crate::limits::{self, Budget};
use crate::rng::{Gaussian, StdGaussian};
use crate::tokenizer::Vocabulary;
use crate::{Error, Result};

/// The request of `attnlab embed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EmbedRequest {
    /// Blocks with an embedding table `E` (and optionally a vocabulary); default: the course's
    /// 3×2 table for the vocabulary (A, B, .).
    pub blocks: Option<BlocksSource>,
    /// Text to tokenize and embed (whitespace-separated tokens of the vocabulary).
    pub text: String,
    /// Also show that H → H·S with the next linear map W → S⁻¹·W leaves the output unchanged,
    /// and that the same change pushed through ReLU, softmax or layer norm does not.
    pub basis_change: bool,
    /// Seed of the random S and W of the basis-change experiment (ChaCha8 normals).
    pub seed: u64,
}

impl Default for EmbedRequest {
    fn default() -> Self {
        EmbedRequest {
            blocks: None,
            text: "A B".into(),
            basis_change: false,
            seed: 0,
        }
    }
}

/// The basis-change experiment: random S and W, and each interface's error.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BasisChangeReport {
    /// The change of basis (d × d, standard normal entries).
    #[serde(rename = "S", serialize_with = "rows")]
    pub s: Array2<f64>,
    /// The next linear map (d × d, standard normal entries).
    #[serde(rename = "W", serialize_with = "rows")]
    pub w: Array2<f64>,
    /// The seed S and W were drawn with (S first, then W, from one stream).
    pub seed: u64,
    /// `g(H·S)·(S⁻¹W)` against `g(H)·W` for g = identity (linear), ReLU, softmax, layer norm.
    pub cases: Vec<BasisChangeCase>,
    /// The same experiment for each kind of S: the course's doubling, a positive diagonal and
    /// the random S above — a positive diagonal commutes with ReLU, a general S does not.
    pub by_kind: Vec<BasisChangeByKind>,
}

crate::choice! {
    /// The kinds of basis change S the embed command compares.
    pub enum BasisKind("basis change") {
        /// The course's example: double one coordinate (S = diag(2, 1, …)), halving the
        /// matching coefficient of the next linear map.
        Doubling = "doubling a coordinate",
        /// A random positive diagonal S (each coordinate rescaled by its own positive factor).
        PositiveDiagonal = "positive diagonal",
        /// A random invertible S (Gaussian entries): mixes coordinates.
        Random = "random invertible",
    }
}

/// One kind of basis change, at every interface.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BasisChangeByKind {
    /// Which kind of S.
    pub kind: BasisKind,
    /// The matrix S.
    #[serde(rename = "S", serialize_with = "rows")]
    pub s: Array2<f64>,
    /// The output before and after, per interface.
    pub cases: Vec<BasisChangeCase>,
}

/// "The integer is an address in a table, not a measured magnitude: token 20 is not twice
/// token 10" (seed 002), shown on the table: the row of label 2k against twice the row of k.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelsAreAddresses {
    /// The label k.
    pub label: usize,
    /// Its token.
    pub token: String,
    /// The label 2k.
    pub double_label: usize,
    /// Its token.
    pub double_token: String,
    /// E[k].
    pub row: Vec<f64>,
    /// 2·E[k].
    pub twice_row: Vec<f64>,
    /// E[2k].
    pub double_row: Vec<f64>,
    /// Whether E[2k] = 2·E[k] (false for the course table: labels are addresses).
    pub equal: bool,
}

/// "After a layer has mixed information across positions the vector at a position depends on
/// more than the identity of its own token" (seed 002): one token in two contexts, its row
/// before (the same) and after one attention layer (different).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contextual {
    /// The token followed (the first of the text).
    pub token: String,
    /// The two contexts it appears in (at position 0).
    pub contexts: [String; 2],
    /// Its embedding row, the same in both.
    pub embedding_row: Vec<f64>,
    /// Its output row after unmasked attention with identity projections, in each context.
    pub output_rows: [Vec<f64>; 2],
    /// max |difference| of the two output rows (0 would mean not contextual).
    pub max_abs_difference: f64,
}

/// The report of `attnlab embed`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmbedReport {
    /// The text embedded.
    pub text: String,
    /// The vocabulary, in label order.
    pub vocab: Vec<String>,
    /// The embedding table (vocab × dim).
    #[serde(rename = "E", serialize_with = "rows")]
    pub e: Array2<f64>,
    /// Rows of E.
    pub vocab_size: usize,
    /// The representation dimension (columns of E), a design choice independent of the
    /// vocabulary size.
    pub dim: usize,
    /// The tokens of the text.
    pub tokens: Vec<String>,
    /// Their labels.
    pub ids: Vec<usize>,
    /// The one-hot vector e_id of each token (vocab_size entries each).
    pub one_hot: Vec<Vec<f64>>,
    /// The matrix product e_id · E of each token (computed as a product, not a lookup).
    pub one_hot_products: Vec<Vec<f64>>,
    /// Whether each product equals its row `E[id]` exactly.
    pub one_hot_rows_equal: Vec<bool>,
    /// Whether every product equals its row exactly.
    #[serde(rename = "one_hot_times_E_equals_row")]
    pub one_hot_times_e_equals_row: bool,
    /// The stacked rows `E[ids]` (tokens × dim).
    #[serde(rename = "H", serialize_with = "rows")]
    pub h: Array2<f64>,
    /// Whether H is the identity matrix (e.g. "A B" with the course table).
    pub h_is_identity: bool,
    /// Labels are addresses: E[2k] against 2·E[k] (null for a vocabulary of fewer than 3).
    pub labels_are_addresses: Option<LabelsAreAddresses>,
    /// A contextual representation: the first token's row in two contexts, before and after
    /// attention (null for a vocabulary of one token).
    pub contextual: Option<Contextual>,
    /// The basis-change experiment, when asked for.
    pub basis_change: Option<BasisChangeReport>,
}

impl EmbedReport {
    /// Holds when every one-hot product selects its row exactly and (with the basis change) the
    /// linear interface absorbs the change.
    pub fn outcome(&self) -> Outcome {
        let linear_ok = self.basis_change.as_ref().is_none_or(|b| {
            b.cases
                .iter()
                .filter(|c| c.interface == Interface::Linear)
                .all(|c| c.unchanged)
        });
        Outcome::from_bool(self.one_hot_times_e_equals_row && linear_ok)
    }

    /// No charts: the tables say it all.
    pub fn charts(&self) -> Vec<Chart> {
        Vec::new()
    }
}

/// What `attnlab embed` needs for t tokens and a V × d table: the one-hot vectors (t·V), their
/// products (`2·t·V·d` operations) and rows (2·t·d), with their rendering (16 bytes per
/// number); with the basis change, S, W, S⁻¹ and the four interfaces' products (`2·d³` for the
/// inverse, `4·(4·t·d² + 2·d³)` for the cases) and their matrices; and the contextual
/// example's two forward passes with d × d identity projections
/// ([`super::layer_input::forward_budget`]).
pub fn budget_for(tokens: usize, vocab: usize, dim: usize, basis_change: bool) -> Budget {
    let (t, v, d) = (limits::u(tokens), limits::u(vocab), limits::u(dim));
    let values = limits::product(&[t, v])
        .saturating_add(limits::product(&[3, t, d]))
        .saturating_add(limits::product(&[v, d]));
    // The contextual example: two unmasked forwards of max(t, 2) tokens with d × d identity
    // projections (three of them, plus the layer's own copies).
    let contextual = super::layer_input::forward_budget(tokens.max(2), dim, 1).repeated(2);
    let mut b = Budget::new(
        values.saturating_mul(8 + 16),
        limits::product(&[2, t, v, d]),
    )
    .plus(contextual);
    if basis_change {
        let values = limits::product(&[8, d, d]).saturating_add(limits::product(&[8, t, d]));
        let ops = limits::product(&[2, d, d, d])
            .saturating_add(limits::product(&[4, 4, t, d, d]))
            .saturating_add(limits::product(&[4, 2, d, d, d]));
        b = b.plus(Budget::new(values.saturating_mul(8 + 16), ops));
    }
    b
}

/// The budget of a request, from what it declares (an inline E's shape, else the course's
/// 3 × 2 table).
pub fn budget(req: &EmbedRequest) -> Budget {
    let (v, d) = super::predict::inline_dims(req.blocks.as_ref(), "E").unwrap_or((3, 2));
    budget_for(req.text.split_whitespace().count(), v, d, req.basis_change)
}

fn describe(tokens: usize, vocab: usize, dim: usize, basis_change: bool) -> String {
    format!(
        "embed{} with {tokens} token{}, E of {vocab}×{dim}",
        if basis_change { " --basis-change" } else { "" },
        if tokens == 1 { "" } else { "s" }
    )
}

/// Tokenizes, looks up and (optionally) runs the basis-change experiment.
///
/// `H = E[ids]`; each `one_hot(id)·E` is a real vector–matrix product whose entries are one
/// product `1·E[id, j]` plus exact zeros, so it must equal `E[id]` bit for bit. The basis change
/// replaces H by H·S and W by S⁻¹·W (see [`basis_change`]).
///
/// # Errors
/// Blocks without `E`, unknown tokens, empty text, unreadable blocks.
pub fn run(req: &EmbedRequest, ctx: &Context) -> Result<EmbedReport> {
    let t = req.text.split_whitespace().count();
    let (v, d) = super::predict::inline_dims(req.blocks.as_ref(), "E").unwrap_or((3, 2));
    budget(req).check(describe(t, v, d, req.basis_change), &ctx.limits)?;
    let blocks = match &req.blocks {
        Some(b) => Some(b.load_in(ctx)?),
        None => None,
    };
    if let Some(e) = blocks.as_ref().and_then(|b| b.get("E")) {
        let (v, d) = e.dim();
        budget_for(t, v, d, req.basis_change)
            .check(describe(t, v, d, req.basis_change), &ctx.limits)?;
    }
    let table = match blocks.as_ref().and_then(|b| b.get("E")) {
        Some(e) => Embedding::new(e.clone())?,
        None if blocks.is_some() => {
            return Err(Error::invalid(
                "blocks",
                "no embedding table E",
                "an array named E (vocab × dim)",
            ))
        }
        None => Embedding::example(),
    };
    let vocab = Vocabulary::for_table(
        blocks.as_ref().and_then(|b| b.vocab.as_deref()),
        table.vocab(),
    )?;
    let ids = vocab.encode(&req.text)?;
    let h = table.lookup(&ids)?;
    let mut one_hot_rows = Vec::with_capacity(ids.len());
    let mut products = Vec::with_capacity(ids.len());
    let mut equal = Vec::with_capacity(ids.len());
    for &id in &ids {
        let prod = table.one_hot_product(id)?;
        equal.push(prod == table.table().row(id));
        products.push(prod.to_vec());
        one_hot_rows.push(one_hot(id, vocab.len())?.to_vec());
    }
    let basis = if req.basis_change {
        let d = table.dim();
        let mut g = StdGaussian::new(req.seed);
        let s = g.randn(d, d);
        let w = g.randn(d, d);
        let cases = basis_change(h.view(), w.view(), s.view())?;
        crate::symmetry::ensure_finite_values(cases.iter().map(|c| c.max_abs_error))?;
        let mut doubling = Array2::<f64>::eye(d);
        doubling[[0, 0]] = 2.0;
        let positive = Array2::from_diag(&g.randn(1, d).row(0).mapv(f64::exp));
        let mut by_kind = Vec::new();
        for (kind, m) in [
            (BasisKind::Doubling, doubling),
            (BasisKind::PositiveDiagonal, positive),
            (BasisKind::Random, s.clone()),
        ] {
            by_kind.push(BasisChangeByKind {
                kind,
                cases: basis_change(h.view(), w.view(), m.view())?,
                s: m,
            });
        }
        Some(BasisChangeReport {
            s,
            w,
            seed: req.seed,
            cases,
            by_kind,
        })
    } else {
        None
    };
    let tokens: Vec<String> = ids.iter().map(|&i| vocab.tokens()[i].clone()).collect();
    let labels_are_addresses = (vocab.len() >= 3).then(|| {
        let row = table.table().row(1).to_vec();
        let twice_row: Vec<f64> = row.iter().map(|v| 2.0 * v).collect();
        let double_row = table.table().row(2).to_vec();
        LabelsAreAddresses {
            label: 1,
            token: vocab.tokens()[1].clone(),
            double_label: 2,
            double_token: vocab.tokens()[2].clone(),
            equal: double_row == twice_row,
            row,
            twice_row,
            double_row,
        }
    });
    let contextual = contextual(&table, &vocab, &ids)?;
    let h_is_identity = h.nrows() == h.ncols() && h == Array2::<f64>::eye(h.nrows());
    Ok(EmbedReport {
        text: req.text.clone(),
        vocab: vocab.tokens().to_vec(),
        e: table.table().to_owned(),
        vocab_size: vocab.len(),
        dim: table.dim(),
        tokens,
        ids,
        one_hot: one_hot_rows,
        one_hot_products: products,
        one_hot_times_e_equals_row: equal.iter().all(|&b| b),
        one_hot_rows_equal: equal,
        h,
        h_is_identity,
        labels_are_addresses,
        contextual,
        basis_change: basis,
    })
}

/// The first token of `ids` in its context and in one whose other tokens are replaced by
/// another token of the vocabulary (or, alone, followed by one): its output row after unmasked
/// attention with identity projections (the `predict` defaults, derivable by hand).
fn contextual(table: &Embedding, vocab: &Vocabulary, ids: &[usize]) -> Result<Option<Contextual>> {
    let (Some(&first), true) = (ids.first(), vocab.len() >= 2) else {
        return Ok(None);
    };
    let other = |id: usize| {
        (0..vocab.len())
            .find(|&j| j != id && j != first)
            .unwrap_or((first + 1) % vocab.len())
    };
    let first_ctx: Vec<usize> = if ids.len() >= 2 {
        ids.to_vec()
    } else {
        vec![first, other(first)]
    };
    let second: Vec<usize> = std::iter::once(first)
        .chain(first_ctx[1..].iter().map(|&id| other(id)))
        .collect();
    let d = table.dim();
    let layer = crate::attention::Attention::single(
        Array2::eye(d),
        Array2::eye(d),
        Array2::eye(d),
        crate::attention::Mask::None,
    )?;
    let row0 = |ctx: &[usize]| -> Result<Vec<f64>> {
        let h = table.lookup(ctx)?;
        Ok(layer.forward(h.view())?.output.row(0).to_vec())
    };
    let (a, b) = (row0(&first_ctx)?, row0(&second)?);
    let text = |ctx: &[usize]| {
        ctx.iter()
            .map(|&i| vocab.tokens()[i].clone())
            .collect::<Vec<_>>()
            .join(" ")
    };
    Ok(Some(Contextual {
        token: vocab.tokens()[first].clone(),
        contexts: [text(&first_ctx), text(&second)],
        embedding_row: table.table().row(first).to_vec(),
        max_abs_difference: a
            .iter()
            .zip(&b)
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs())),
        output_rows: [a, b],
    }))
}

#[cfg(test)]
mod tests {
    /// Issue 11, item 8: labels are addresses, the representation is contextual, and a
    /// positive diagonal S commutes with ReLU while a general S does not.
    #[test]
    fn labels_are_addresses_representations_are_contextual_and_the_kind_of_s_matters() {
        let r = super::run(
            &super::EmbedRequest {
                basis_change: true,
                ..Default::default()
            },
            &super::Context::default(),
        )
        .unwrap();
        let l = r.labels_are_addresses.as_ref().unwrap();
        assert!(!l.equal && l.double_row != l.twice_row);
        let c = r.contextual.as_ref().unwrap();
        assert_eq!(c.contexts[0], "A B");
        assert_ne!(c.contexts[0], c.contexts[1]);
        assert!(c.max_abs_difference > 0.1, "{}", c.max_abs_difference);
        let b = r.basis_change.as_ref().unwrap();
        let unchanged = |k: super::BasisKind, i: super::Interface| {
            b.by_kind
                .iter()
                .find(|x| x.kind == k)
                .unwrap()
                .cases
                .iter()
                .find(|c| c.interface == i)
                .unwrap()
                .unchanged
        };
        use super::{BasisKind as K, Interface as I};
        for k in [K::Doubling, K::PositiveDiagonal, K::Random] {
            assert!(unchanged(k, I::Linear), "{k}");
            assert!(!unchanged(k, I::LayerNorm), "{k}");
        }
        assert!(unchanged(K::Doubling, I::Relu) && unchanged(K::PositiveDiagonal, I::Relu));
        assert!(!unchanged(K::Random, I::Relu));
        assert_eq!(
            b.by_kind[2].cases, b.cases,
            "the random kind is the S above"
        );
    }
    use super::*;
    use crate::api::value::InlineBlocks;

    fn inline(vocab: &[&str], e: Vec<Vec<f64>>) -> BlocksSource {
        BlocksSource::Inline(InlineBlocks {
            vocab: Some(vocab.iter().map(|s| s.to_string()).collect()),
            arrays: [("E".to_string(), e)].into_iter().collect(),
        })
    }

    #[test]
    fn the_course_table_gives_the_identity_for_a_b() {
        let r = run(&EmbedRequest::default(), &Context::default()).unwrap();
        assert_eq!(r.ids, vec![0, 1]);
        assert!(r.h_is_identity && r.one_hot_times_e_equals_row);
        assert_eq!(r.one_hot_products, vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
        assert!(r.basis_change.is_none() && r.outcome().holds());
    }

    #[test]
    fn inline_blocks_replace_the_table_and_paths_can_be_refused() {
        let req = EmbedRequest {
            blocks: Some(inline(&["x", "y"], vec![vec![2.0, 3.0], vec![5.0, 7.0]])),
            text: "y x".into(),
            basis_change: true,
            seed: 1,
        };
        let r = run(&req, &Context::default()).unwrap();
        // One-hot products of 0/1 vectors select rows exactly, so H is E with its rows swapped.
        assert_eq!(r.h, ndarray::array![[5.0, 7.0], [2.0, 3.0]]);
        assert!(!r.h_is_identity && r.one_hot_rows_equal.iter().all(|&b| b));
        let b = r.basis_change.as_ref().unwrap();
        assert_eq!((b.seed, b.cases[0].interface), (1, Interface::Linear));
        let no_files = Context {
            allow_files: false,
            ..Context::default()
        };
        let path = EmbedRequest {
            blocks: Some(BlocksSource::Path("b.json".into())),
            ..EmbedRequest::default()
        };
        assert!(run(&path, &no_files).is_err());
        let no_e = EmbedRequest {
            blocks: Some(BlocksSource::Inline(InlineBlocks {
                vocab: None,
                arrays: [("Wq".to_string(), vec![vec![1.0]])].into_iter().collect(),
            })),
            ..EmbedRequest::default()
        };
        let e = run(&no_e, &Context::default()).unwrap_err();
        assert!(e.to_string().contains("E"), "{e}");
    }
}
