//! Step 1, checkpoint 1 of seed 002: a label only selects a row of E, so the embedding
//! dimension is free.

use super::super::answer::Answer;
use super::super::engine::{Observation, Step};
use super::super::evidence::Evidence;
use super::yes_no;
use crate::embedding::Embedding;
use crate::tokenizer::Vocabulary;

/// Must the embedding dimension equal the vocabulary size? Computes e_t · E for every token t
/// and compares it with row t of E: the one-hot product selects the row whatever E's width.
pub(super) fn embedding_dim() -> Step {
    Step {
        id: "embedding_dim",
        hint: "Multiplying a one-hot row vector by E picks out one row of E. What does that ask of E's number of columns?",
        title: "Must the embedding dimension equal the vocabulary size? (checkpoint 1)",
        varied: "nothing — a reading of the course table",
        fixed: "the embedding table E for the vocabulary (A, B, .)",
        params: vec![],
        question: |_| {
            Ok("The table E has one row per token of the vocabulary (A, B, .). Must the embedding dimension (the number of components in a row) equal the vocabulary size?".into())
        },
        kind: yes_no,
        run: |_, _| {
            let e = Embedding::example();
            let vocab = Vocabulary::example();
            let mut selects = true;
            let mut evidence = vec![Evidence::TableShape {
                vocab: e.vocab(),
                dim: e.dim(),
            }];
            for (id, tok) in vocab.tokens().iter().enumerate() {
                let prod = e.one_hot_product(id)?;
                let equals_row = prod == e.table().row(id);
                selects &= equals_row;
                evidence.push(Evidence::OneHot {
                    token: tok.to_string(),
                    product: prod.to_vec(),
                    equals_row,
                });
            }
            let must = !(selects && e.dim() != e.vocab());
            Ok(Observation {
                result: Answer::YesNo(must),
                evidence,
                explanation: format!(
                    "A label only selects a row, so the table needs one row per token and any number of columns: this {}×{} table embeds {} tokens in {} dimensions.",
                    e.vocab(), e.dim(), e.vocab(), e.dim()
                ),
            })
        },
    }
}
