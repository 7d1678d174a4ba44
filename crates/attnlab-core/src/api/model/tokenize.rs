//! `attnlab model tokenize`: text → the model's ids and pieces, and the row of the embedding
//! table each id selects (seed 002 §1 on a real table: a label is an address, the lookup
//! `onehot(id) · E` is row `id` of `E`).

use serde::{Deserialize, Serialize};

use crate::api::value::List;
use crate::api::{Context, Outcome};
use crate::chart::Chart;
use crate::limits::{u, Budget};
use crate::model::tokenizer::{ModelTokenizer, Token, TokenizerKind};
use crate::model::ModelInfo;
use crate::present::text;
use crate::{Error, Result};

/// The embedding table's name in a GGUF file.
pub const EMBEDDING_TENSOR: &str = "token_embd.weight";
/// Most values of each embedding row shown (`values`).
pub const MAX_VALUES: u64 = 64;

/// The request of `attnlab model tokenize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TokenizeRequest {
    /// A GGUF file, or a known model name (`smollm2-135m`).
    pub model: String,
    /// The text to tokenize.
    pub text: Option<String>,
    /// A UTF-8 file holding the text (instead of `text`).
    pub text_file: Option<std::path::PathBuf>,
    /// Ids to look up instead of a text (`1,2,3`).
    pub ids: Option<List>,
    /// Values shown of each id's embedding row (0 to 64).
    pub values: u64,
}

impl Default for TokenizeRequest {
    fn default() -> Self {
        TokenizeRequest {
            model: super::DEFAULT_MODEL.into(),
            text: None,
            text_file: None,
            ids: None,
            values: 4,
        }
    }
}

/// The row of the embedding table an id selects.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmbeddingRow {
    /// The id (= the row).
    pub id: u32,
    /// Its first `values` values (f32, dequantized exactly as the `gguf` package does).
    pub first: Vec<f32>,
    /// Its Euclidean norm (summed in f64).
    pub norm: f64,
}

/// The report of `attnlab model tokenize`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TokenizeReport {
    /// The model file.
    pub path: String,
    /// The tokenizer.
    pub tokenizer: TokenizerKind,
    /// Vocabulary size: ids are 0 to vocab − 1.
    pub vocab: u32,
    /// Bytes of text tokenized (0 for `ids`).
    pub text_bytes: u64,
    /// The tokens, in order.
    pub tokens: Vec<Token>,
    /// The embedding table read (`token_embd.weight`): its type, width and rows.
    pub embedding_tensor: String,
    /// Its type.
    pub embedding_type: &'static str,
    /// Values per row (the model's width).
    pub embedding_width: u64,
    /// The row of each distinct id, in order of first appearance.
    pub rows: Vec<EmbeddingRow>,
    /// The model's trained context, and whether the text is longer.
    pub context_length: u64,
    /// Whether the tokens exceed the trained context (a forward over them would run beyond
    /// what the model was trained on).
    pub beyond_context: bool,
}

impl TokenizeReport {
    /// Always holds (a description).
    pub fn outcome(&self) -> Outcome {
        Outcome::Holds
    }

    /// No charts.
    pub fn charts(&self) -> Vec<Chart> {
        Vec::new()
    }
}

/// The text's tokenization (from the text's length; a file's length is checked again once
/// read).
pub fn budget(req: &TokenizeRequest) -> Budget {
    ModelTokenizer::budget(req.text.as_ref().map_or(0, |t| u(t.len())))
}

/// Runs `model tokenize`.
///
/// # Errors
/// See [`super::open`]; none or several of text, text file and ids; a text file that is not
/// UTF-8; an id out of range; `values` over 64; over the limits.
pub fn run(req: &TokenizeRequest, ctx: &Context) -> Result<TokenizeReport> {
    if req.values > MAX_VALUES {
        return Err(Error::invalid(
            "values",
            req.values,
            format!("0 to {MAX_VALUES} values of each embedding row"),
        ));
    }
    let given = req.text.is_some() as u8 + req.text_file.is_some() as u8 + req.ids.is_some() as u8;
    if given != 1 {
        return Err(Error::invalid(
            "input",
            if given == 0 {
                "none given"
            } else {
                "several given"
            },
            "exactly one of --text T, --text-file FILE, --ids LIST",
        ));
    }
    let ids_in: Option<Vec<u64>> = match &req.ids {
        None => None,
        Some(list) => Some(
            list.0
                .iter()
                .map(|s| {
                    s.parse::<u64>().map_err(|_| {
                        Error::invalid(
                            "token id",
                            format!("\"{}\"", text::shorten(s)),
                            "a non-negative integer",
                        )
                    })
                })
                .collect::<Result<_>>()?,
        ),
    };
    let text_owned;
    let text_in: Option<&str> = match (&req.text, &req.text_file) {
        (Some(t), _) => Some(t),
        (None, Some(p)) => {
            if !ctx.allow_files {
                return Err(Error::invalid(
                    "text_file",
                    text::shorten_path(p),
                    "text (this front end does not read files)",
                ));
            }
            text_owned = crate::files::read_input_text(p, &ctx.limits)?;
            Some(&text_owned)
        }
        _ => None,
    };
    if let Some(t) = text_in {
        ModelTokenizer::budget(u(t.len()))
            .check(format!("tokenizing {} bytes of text", t.len()), &ctx.limits)?;
    }
    let f = super::open(&req.model, ctx)?;
    let info = ModelInfo::from_gguf(&f)?;
    let tok = ModelTokenizer::from_gguf(&f)?;
    let tokens = match (text_in, ids_in) {
        (Some(t), _) => tok.encode(t, &ctx.limits)?,
        (None, Some(ids)) => ids
            .iter()
            .map(|&id| {
                let id32 = u32::try_from(id)
                    .ok()
                    .filter(|&i| i < tok.vocab_size())
                    .ok_or_else(|| {
                        Error::invalid(
                            "token id",
                            id,
                            format!(
                                "0 to {} (the vocabulary)",
                                tok.vocab_size().saturating_sub(1)
                            ),
                        )
                    })?;
                Ok(Token {
                    id: id32,
                    piece: tok.piece(id32)?,
                    text: tok.decode(&[id32])?,
                })
            })
            .collect::<Result<Vec<_>>>()?,
        (None, None) => Vec::new(),
    };
    let embd = f.tensor(EMBEDDING_TENSOR).ok_or_else(|| {
        Error::io(
            f.path(),
            format!("the model file has no {EMBEDDING_TENSOR} (the embedding table)"),
        )
    })?;
    let (etype, width) = (embd.ggml_type.name(), embd.dims[0]);
    let mut distinct: Vec<u32> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for t in &tokens {
        if seen.insert(t.id) {
            distinct.push(t.id);
        }
    }
    let mut rows = Vec::with_capacity(distinct.len());
    for (i, chunk) in distinct.chunks(256).enumerate() {
        ctx.check_cancelled("model tokenize")?;
        (ctx.progress)(
            "embedding rows",
            (i * 256) as f64 / distinct.len().max(1) as f64,
        );
        let ids: Vec<u64> = chunk.iter().map(|&x| u64::from(x)).collect();
        for (id, row) in chunk.iter().zip(f.tensor_rows_f32(EMBEDDING_TENSOR, &ids)?) {
            let norm = row
                .iter()
                .map(|&x| f64::from(x) * f64::from(x))
                .sum::<f64>()
                .sqrt();
            rows.push(EmbeddingRow {
                id: *id,
                first: row.iter().take(req.values as usize).copied().collect(),
                norm,
            });
        }
    }
    Ok(TokenizeReport {
        path: text::shorten_path(f.path()),
        tokenizer: tok.kind().clone(),
        vocab: tok.vocab_size(),
        text_bytes: text_in.map_or(0, |t| u(t.len())),
        beyond_context: info.context_length > 0 && u(tokens.len()) > info.context_length,
        context_length: info.context_length,
        tokens,
        embedding_tensor: EMBEDDING_TENSOR.into(),
        embedding_type: etype,
        embedding_width: width,
        rows,
    })
}
