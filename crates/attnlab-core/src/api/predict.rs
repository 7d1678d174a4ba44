//! `attnlab predict`: the complete two-token prediction — tokens → embeddings → causal
//! attention → last-row readout → unembedding → softmax — every intermediate returned.

use serde::{Deserialize, Serialize};

use super::value::BlocksSource;
use super::{Context, Outcome};
use crate::chart::Chart;
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

/// Runs the prediction (see [`crate::predict`] for the math and the defaults).
///
/// # Errors
/// Unknown tokens, empty text, unreadable blocks or blocks whose shapes do not fit.
pub fn run(req: &PredictRequest, ctx: &Context) -> Result<PredictReport> {
    let blocks = match &req.blocks {
        Some(b) => Some(b.load(ctx.allow_files)?),
        None => None,
    };
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
