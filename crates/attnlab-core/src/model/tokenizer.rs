//! A real model's tokenizer: text → integer labels by the model's own rule (seed 002: a
//! tokenizer assigns labels that are addresses in a table — here, rows of `token_embd`).
//!
//! The rule is byte-level BPE (GPT-2's): the text is split into words by a regular expression
//! (the pre-tokenizer), each word's UTF-8 bytes are spelled in a 256-character alphabet, and
//! the file's merges join adjacent symbols, best-ranked first, until none applies; each final
//! symbol is a vocabulary entry, its index the id. Tokens the file marks as control (type 3,
//! like `<|im_start|>`) and user-defined (type 4) are matched whole before splitting.
//!
//! It is built the way transformers builds it from a GGUF (`GPT2Tokenizer` with the file's
//! vocabulary and merges; `ByteLevel(add_prefix_space=False)`, or for the pre-tokenizers
//! transformers knows by name — `llama3`/`llama-bpe`, `qwen2`, … — their split expression), on
//! Hugging Face's own `tokenizers` crate, the library transformers runs; the tests compare the
//! ids with transformers' `AutoTokenizer.from_pretrained(dir, gguf_file=…)`. A Hugging Face
//! checkpoint's `tokenizer.json` is loaded by the same crate ([`ModelTokenizer::from_json`]).

use std::path::Path;

use serde::Serialize;
use tokenizers::models::bpe::BPE;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::{AddedToken, SplitDelimiterBehavior, Tokenizer};

use super::gguf::{GgufFile, Value};
use crate::limits::{u, Budget, Limits};
use crate::text;
use crate::{Error, Result};

/// One token of a text: its id (the row of the embedding table it selects), its vocabulary
/// entry (`Ġcat`: the byte alphabet's spelling) and the text it stands for (` cat`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Token {
    /// The id.
    pub id: u32,
    /// The vocabulary entry.
    pub piece: String,
    /// The text it decodes to alone (bytes that are not whole UTF-8 characters shown as U+FFFD).
    pub text: String,
}

/// Where a tokenizer came from and what rule it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TokenizerKind {
    /// `gguf` or `tokenizer.json`.
    pub source: &'static str,
    /// The model (`bpe`, the GGUF's `gpt2`, …).
    pub model: String,
    /// The pre-tokenizer (`tokenizer.ggml.pre`, or `tokenizer.json`'s type).
    pub pre: Option<String>,
}

/// A model's tokenizer.
pub struct ModelTokenizer {
    inner: Tokenizer,
    kind: TokenizerKind,
    vocab: u32,
    bos: Option<u32>,
    eos: Option<u32>,
}

impl std::fmt::Debug for ModelTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelTokenizer")
            .field("kind", &self.kind)
            .field("vocab", &self.vocab)
            .finish()
    }
}

/// transformers' split expressions for the GGUF pre-tokenizers it knows by name
/// (`integrations/gguf/gguf_tokenizer_mapping.py`); any other name (`smollm`, `gpt2`, …) gets
/// GPT-2's byte-level expression, as transformers does.
const LLAMA3_SPLIT: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const QWEN2_SPLIT: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

fn split_for(pre: &str) -> Option<&'static str> {
    match pre {
        "llama3" | "llama-v3" | "llama-bpe" | "falcon3" | "falcon-h1" | "pixtral" | "midm-2.0"
        | "lfm2" | "jina-v5-nano" | "dbrx" | "smaug-bpe" => Some(LLAMA3_SPLIT),
        "qwen2" | "deepseek-r1-qwen" | "kormo" | "f2llmv2" | "megrez" => Some(QWEN2_SPLIT),
        _ => None,
    }
}

/// GPT-2's byte alphabet: byte b ↦ a printable character (printable Latin-1 bytes are
/// themselves; the rest are shifted to U+0100 + k).
fn byte_alphabet() -> [char; 256] {
    let mut out = ['\0'; 256];
    let mut n = 0u32;
    for b in 0..256u32 {
        let printable = (0x21..=0x7E).contains(&b) || (0xA1..=0xAC).contains(&b) || b >= 0xAE;
        out[b as usize] = if printable {
            char::from_u32(b).unwrap_or('\0')
        } else {
            n += 1;
            char::from_u32(255 + n).unwrap_or('\0')
        };
    }
    out
}

fn strings<'a>(f: &'a GgufFile, key: &str) -> Result<Option<Vec<&'a str>>> {
    let Some(v) = f.get(key) else { return Ok(None) };
    let bad = || {
        Error::io(
            f.path(),
            format!(
                "metadata {key} is {}; expected an array of strings",
                v.summary()
            ),
        )
    };
    let items = v.as_array().ok_or_else(bad)?;
    items
        .iter()
        .map(|x| x.as_str().ok_or_else(bad))
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

fn tk_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::invalid(
        what,
        text::shorten(&e.to_string()),
        "a byte-level BPE tokenizer",
    )
}

impl ModelTokenizer {
    /// The tokenizer a GGUF file describes (`tokenizer.ggml.*`).
    ///
    /// # Errors
    /// No vocabulary, a tokenizer model other than `gpt2` (byte-level BPE), merges that are
    /// not pairs, a special token id out of range.
    pub fn from_gguf(f: &GgufFile) -> Result<ModelTokenizer> {
        let model = f
            .get("tokenizer.ggml.model")
            .and_then(Value::as_str)
            .unwrap_or("");
        if model != "gpt2" {
            return Err(Error::invalid(
                format!("tokenizer of {}", text::shorten_path(f.path())),
                format!("tokenizer.ggml.model = \"{}\"", text::shorten(model)),
                "\"gpt2\" (byte-level BPE; SentencePiece models are not read yet)",
            ));
        }
        let tokens = strings(f, "tokenizer.ggml.tokens")?
            .ok_or_else(|| Error::io(f.path(), "the model file has no tokenizer.ggml.tokens"))?;
        let merges = strings(f, "tokenizer.ggml.merges")?.unwrap_or_default();
        let n = u32::try_from(tokens.len())
            .map_err(|_| Error::io(f.path(), "tokenizer.ggml.tokens has more than 2^32 entries"))?;
        let alphabet = byte_alphabet();
        let spelled: std::collections::HashSet<char> = alphabet.iter().copied().collect();
        // As transformers: a token written outside the byte alphabet is respelled in it.
        let mut vocab = tokenizers::models::bpe::Vocab::default();
        vocab.reserve(tokens.len());
        for (i, t) in tokens.iter().enumerate() {
            let key = if t.chars().all(|c| spelled.contains(&c)) {
                (*t).to_string()
            } else {
                t.bytes().map(|b| alphabet[b as usize]).collect()
            };
            vocab.insert(key, i as u32);
        }
        let mut pairs = Vec::with_capacity(merges.len());
        for (i, m) in merges.iter().enumerate() {
            let (a, b) = m.split_once(' ').ok_or_else(|| {
                Error::io(
                    f.path(),
                    format!(
                        "tokenizer.ggml.merges entry {i} is \"{}\"; expected two symbols separated by a space",
                        text::shorten(m)
                    ),
                )
            })?;
            pairs.push((a.to_string(), b.to_string()));
        }
        let bpe = BPE::builder()
            .vocab_and_merges(vocab, pairs)
            .continuing_subword_prefix(String::new())
            .end_of_word_suffix(String::new())
            .fuse_unk(false)
            .build()
            .map_err(|e| tk_err("tokenizer", e))?;
        let mut inner = Tokenizer::new(bpe);
        let pre = f
            .get("tokenizer.ggml.pre")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let pre_tok: PreTokenizerWrapper = match pre.as_deref().and_then(split_for) {
            Some(re) => {
                let split = Split::new(
                    SplitPattern::Regex(re.to_string()),
                    SplitDelimiterBehavior::Isolated,
                    false,
                )
                .map_err(|e| tk_err("pre-tokenizer", e))?;
                Sequence::new(vec![
                    split.into(),
                    ByteLevel::new(false, true, false).into(),
                ])
                .into()
            }
            None => ByteLevel::new(false, true, true).into(),
        };
        inner.with_pre_tokenizer(Some(pre_tok));
        inner.with_decoder(Some(ByteLevel::default()));
        // Control (3) tokens spelled in the byte alphabet become special tokens, user-defined
        // (4) ones plain added tokens, both matched whole (transformers' add_gguf_special_tokens).
        if let Some(Value::Array(_, types)) = f.get("tokenizer.ggml.token_type") {
            let kind = |i: usize| types.get(i).and_then(|v| v.as_f64()).unwrap_or(1.0);
            let control: Vec<AddedToken> = tokens
                .iter()
                .enumerate()
                .filter(|&(i, t)| kind(i) == 3.0 && t.chars().all(|c| spelled.contains(&c)))
                .map(|(_, t)| AddedToken::from((*t).to_string(), true).normalized(false))
                .collect();
            inner.add_special_tokens(&control);
            let user: Vec<AddedToken> = tokens
                .iter()
                .enumerate()
                .filter(|&(i, _)| kind(i) == 4.0)
                .map(|(_, t)| AddedToken::from((*t).to_string(), false).normalized(false))
                .collect();
            inner.add_tokens(&user);
        }
        let id = |key: &str| -> Result<Option<u32>> {
            match f.get(key).map(|v| v.as_u64()) {
                None => Ok(None),
                Some(Some(x)) if x < u64::from(n) => Ok(Some(x as u32)),
                Some(_) => Err(Error::io(
                    f.path(),
                    format!("metadata {key} is not a token id below the vocabulary's {n}"),
                )),
            }
        };
        Ok(ModelTokenizer {
            kind: TokenizerKind {
                source: "gguf",
                model: model.into(),
                pre,
            },
            vocab: n,
            bos: id("tokenizer.ggml.bos_token_id")?,
            eos: id("tokenizer.ggml.eos_token_id")?,
            inner,
        })
    }

    /// A Hugging Face `tokenizer.json` (read through the input gate).
    ///
    /// # Errors
    /// A file the gate refuses, or JSON that is not a tokenizer.
    pub fn from_json(path: &Path, limits: &Limits) -> Result<ModelTokenizer> {
        let bytes = crate::files::read(path, limits)?;
        // The parsed tokenizer takes a few times the JSON's size (vocabulary and merge maps).
        limits.check_memory(
            format!("loading {}", text::shorten_path(path)),
            u(bytes.len()).saturating_mul(8),
        )?;
        let inner = Tokenizer::from_bytes(&bytes).map_err(|e| {
            Error::io(
                path,
                format!("not a tokenizer.json: {}", text::shorten(&e.to_string())),
            )
        })?;
        let vocab = u32::try_from(inner.get_vocab_size(true)).unwrap_or(u32::MAX);
        let model = serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .and_then(|v| v["model"]["type"].as_str().map(str::to_lowercase))
            .unwrap_or_else(|| "unknown".into());
        Ok(ModelTokenizer {
            kind: TokenizerKind {
                source: "tokenizer.json",
                model,
                pre: None,
            },
            vocab,
            bos: None,
            eos: None,
            inner,
        })
    }

    /// What it is.
    pub fn kind(&self) -> &TokenizerKind {
        &self.kind
    }

    /// Vocabulary size (ids are below it).
    pub fn vocab_size(&self) -> u32 {
        self.vocab
    }

    /// The beginning- and end-of-sequence ids, when the file names them.
    pub fn bos_eos(&self) -> (Option<u32>, Option<u32>) {
        (self.bos, self.eos)
    }

    /// The memory and work tokenizing `bytes` bytes of text takes (an upper estimate: the
    /// `tokenizers` crate keeps a few words per byte of text while it merges).
    pub fn budget(bytes: u64) -> Budget {
        Budget::new(bytes.saturating_mul(160), bytes.saturating_mul(400))
    }

    /// The tokens of `text` (no beginning-of-sequence token added: the ids transformers gives
    /// with `add_special_tokens=False`), checked against the limits first.
    ///
    /// # Errors
    /// A text over the limits, or a failure of the tokenizer.
    pub fn encode(&self, text_in: &str, limits: &Limits) -> Result<Vec<Token>> {
        Self::budget(u(text_in.len())).check(
            format!("tokenizing {} bytes of text", text_in.len()),
            limits,
        )?;
        let enc = self
            .inner
            .encode(text_in, false)
            .map_err(|e| tk_err("text to tokenize", e))?;
        Ok(enc
            .get_ids()
            .iter()
            .zip(enc.get_tokens())
            .map(|(&id, piece)| Token {
                id,
                piece: piece.clone(),
                text: self.inner.decode(&[id], false).unwrap_or_default(),
            })
            .collect())
    }

    /// The vocabulary entry of `id`, or an error naming the range.
    ///
    /// # Errors
    /// An id at or above the vocabulary size.
    pub fn piece(&self, id: u32) -> Result<String> {
        self.inner.id_to_token(id).ok_or_else(|| {
            Error::invalid(
                "token id",
                id,
                format!("0 to {}", self.vocab.saturating_sub(1)),
            )
        })
    }

    /// The text of `ids`.
    ///
    /// # Errors
    /// An id out of range.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        for &id in ids {
            self.piece(id)?;
        }
        self.inner
            .decode(ids, false)
            .map_err(|e| tk_err("ids to decode", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_alphabet_is_gpt2s() {
        let a = byte_alphabet();
        // GPT-2's bytes_to_unicode: ' ' (0x20) is 'Ġ' (U+0120), '\n' is 'Ċ' (U+010A), 'a' is 'a'.
        assert_eq!((a[0x20], a[0x0A], a[b'a' as usize]), ('Ġ', 'Ċ', 'a'));
        let distinct: std::collections::HashSet<char> = a.iter().copied().collect();
        assert_eq!(distinct.len(), 256);
    }
}
