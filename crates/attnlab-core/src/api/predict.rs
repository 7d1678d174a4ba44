//! `attnlab predict`: the complete two-token prediction — tokens → embeddings → causal
//! attention → last-row readout → unembedding → softmax — every intermediate returned.

use serde::{Deserialize, Serialize};

use super::value::BlocksSource;
use super::{Context, Outcome};
use crate::chart::Chart;
use crate::limits::{self, Budget};
use crate::Result;

pub use crate::predict::Prediction as PredictReport;

/// The request of `attnlab predict`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PredictRequest {
    /// The context: whitespace-separated tokens of the vocabulary (A, B, . by default).
    pub text: String,
    /// Blocks (E, Wq, Wk, Wv, U and optionally a vocabulary); missing blocks keep their
    /// defaults: the course table E, identity Wq = Wk = Wv, and U = Eᵀ (tied embeddings).
    pub blocks: Option<BlocksSource>,
}

impl Default for PredictRequest {
    fn default() -> Self {
        PredictRequest {
            text: "A B".into(),
            blocks: None,
        }
    }
}

impl PredictReport {
    /// Always holds (a prediction is not a check).
    pub fn outcome(&self) -> Outcome {
        Outcome::Holds
    }

    /// No charts: every intermediate is a small table.
    pub fn charts(&self) -> Vec<Chart> {
        Vec::new()
    }
}

/// The shapes a prediction runs with: t tokens, a vocabulary of V, width d, query/key width
/// d_k, value width d_v.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Tokens of the text.
    pub tokens: usize,
    /// Rows of E.
    pub vocab: usize,
    /// Columns of E.
    pub dim: usize,
    /// Columns of Wq and Wk.
    pub dk: usize,
    /// Columns of Wv.
    pub dv: usize,
}

impl Shape {
    fn of(text: &str, dims: impl Fn(&str) -> Option<(usize, usize)>) -> Shape {
        let (vocab, dim) = dims("E").unwrap_or((3, 2));
        Shape {
            tokens: text.split_whitespace().count(),
            vocab,
            dim,
            dk: dims("Wq").map_or(dim, |(_, c)| c),
            dv: dims("Wv").map_or(dim, |(_, c)| c),
        }
    }
}

/// What a prediction of this shape needs: the blocks and every intermediate (H, Q, K, V, the
/// t × t scores — stored as optional values, 16 bytes each — and weights, the output, the
/// logits), their text rendering (16 bytes per number), and the operations of the products
/// `2·t·d·(2·d_k + d_v)`, `2·t²·(d_k + d_v)`, `2·d_v·V` and the softmaxes.
pub fn budget_for(s: Shape) -> Budget {
    let (t, v, d, dk, dv) = (
        limits::u(s.tokens),
        limits::u(s.vocab),
        limits::u(s.dim),
        limits::u(s.dk),
        limits::u(s.dv),
    );
    let values = limits::product(&[v, d])
        .saturating_add(limits::product(&[d, 2 * dk + dv]))
        .saturating_add(limits::product(&[dv, v]))
        .saturating_add(limits::product(&[t, d + 2 * dk + 2 * dv]))
        .saturating_add(limits::product(&[4, t, t]))
        .saturating_add(4 * v);
    let ops = limits::product(&[2, t, d, 2 * dk + dv])
        .saturating_add(limits::product(&[2, t, t, dk + dv]))
        .saturating_add(limits::product(&[t, t, limits::TRANSCENDENTAL]))
        .saturating_add(limits::product(&[2, dv, v]))
        .saturating_add(limits::product(&[v, limits::TRANSCENDENTAL]));
    Budget::new(values.saturating_mul(8 + 16), ops)
}

/// The budget of a request, from what it declares (inline blocks' shapes, else the defaults).
pub fn budget(req: &PredictRequest) -> Budget {
    budget_for(Shape::of(&req.text, |name| {
        inline_dims(req.blocks.as_ref(), name)
    }))
}

/// The shape of an inline block.
pub(crate) fn inline_dims(b: Option<&BlocksSource>, name: &str) -> Option<(usize, usize)> {
    match b {
        Some(BlocksSource::Inline(b)) => b
            .arrays
            .get(name)
            .map(|rows| (rows.len(), rows.first().map_or(0, Vec::len))),
        _ => None,
    }
}

/// `predict with t tokens, E of V×d`, for limit messages.
fn describe(s: Shape) -> String {
    format!(
        "predict with {} token{}, E of {}×{}",
        s.tokens,
        if s.tokens == 1 { "" } else { "s" },
        s.vocab,
        s.dim
    )
}

/// Runs the prediction (see [`crate::predict`] for the math and the defaults).
///
/// # Errors
/// Unknown tokens, empty text, unreadable blocks or blocks whose shapes do not fit, requests
/// over `ctx.limits` (which bound the t × t scores), a result that overflows.
pub fn run(req: &PredictRequest, ctx: &Context) -> Result<PredictReport> {
    budget(req).check(
        describe(Shape::of(&req.text, |n| {
            inline_dims(req.blocks.as_ref(), n)
        })),
        &ctx.limits,
    )?;
    let blocks = match &req.blocks {
        Some(b) => Some(b.load_in(ctx)?),
        None => None,
    };
    let shape = Shape::of(&req.text, |name| {
        blocks.as_ref().and_then(|b| b.get(name)).map(|a| a.dim())
    });
    budget_for(shape).check(describe(shape), &ctx.limits)?;
    crate::predict::predict(&req.text, blocks.as_ref())
}

#[cfg(test)]
mod tests {
    use crate::api::{self, Request};
    use crate::predict::BlockOrigin;

    #[test]
    fn inline_blocks_from_json_replace_the_defaults() {
        // U = all ones: every logit equals the readout's sum, so the probabilities are uniform
        // and the first token wins the tie.
        let req = Request::from_json(
            "predict",
            serde_json::json!({"text": "A B", "blocks": {"U": [[1, 1, 1], [1, 1, 1]]}}),
        )
        .unwrap();
        let api::Report::Predict(p) = api::run(&req).unwrap() else {
            panic!("not a prediction")
        };
        assert_eq!(p.sources["U"], BlockOrigin::Blocks);
        assert_eq!(p.sources["E"], BlockOrigin::CourseTable);
        assert_eq!(p.prediction, "A");
        assert_eq!(p.text, "A B");
        let v = serde_json::to_value(&*p).unwrap();
        assert_eq!(v["sources"]["Wq"], "default: identity");
    }
}
