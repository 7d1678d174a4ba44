//! Text → integer labels by a specified rule (seed 002, "From text to numbers").
//!
//! The rule here is the simplest one that is fully specified: split on Unicode whitespace, and
//! map each piece to its index in a fixed vocabulary. The integer is an address in a table, not
//! a magnitude: token 2 is not "twice" token 1.

use crate::{Error, Result};

/// An ordered vocabulary: label `i` is `tokens[i]`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Vocabulary {
    tokens: Vec<String>,
    /// token → label, so encoding t tokens costs O(t), not O(t·V).
    #[serde(skip)]
    index: std::collections::HashMap<String, usize>,
}

impl Vocabulary {
    /// The course's example vocabulary `(A, B, .)`.
    pub fn example() -> Self {
        Self::from_distinct(vec!["A".into(), "B".into(), ".".into()])
    }

    fn from_distinct(tokens: Vec<String>) -> Self {
        let index = tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i))
            .collect();
        Vocabulary { tokens, index }
    }

    /// A vocabulary from distinct, non-empty, whitespace-free tokens.
    ///
    /// # Errors
    /// An empty list, an empty or whitespace-containing token, or a duplicate.
    pub fn new<S: AsRef<str>>(tokens: &[S]) -> Result<Self> {
        if tokens.is_empty() {
            return Err(Error::invalid("vocabulary", "[]", "at least one token"));
        }
        let mut out: Vec<String> = Vec::with_capacity(tokens.len());
        let mut seen = std::collections::HashSet::with_capacity(tokens.len());
        for t in tokens {
            let t = t.as_ref();
            if t.is_empty() || t.chars().any(char::is_whitespace) {
                return Err(Error::invalid(
                    "vocabulary token",
                    format!("\"{}\"", crate::text::shorten(t)),
                    "a non-empty token without whitespace",
                ));
            }
            if !seen.insert(t) {
                return Err(Error::invalid(
                    "vocabulary token",
                    format!("\"{}\"", crate::text::shorten(t)),
                    "distinct tokens (this one appears twice)",
                ));
            }
            out.push(t.to_string());
        }
        Ok(Self::from_distinct(out))
    }

    /// The vocabulary an embedding table of `rows` rows is read with: the given tokens (e.g. a
    /// blocks file's `"vocab"`), else the course's `(A, B, .)` for a 3-row table, else the labels
    /// `0, 1, …` as tokens.
    ///
    /// # Errors
    /// Invalid tokens, or a token count that differs from the table's rows.
    pub fn for_table(tokens: Option<&[String]>, rows: usize) -> Result<Self> {
        let vocab = match tokens {
            Some(t) => Vocabulary::new(t)?,
            None if rows == 3 => Vocabulary::example(),
            None => Vocabulary::new(&(0..rows).map(|i| i.to_string()).collect::<Vec<_>>())?,
        };
        if vocab.len() != rows {
            return Err(Error::shape(
                "embedding table E",
                format!("{} rows (one per vocabulary token)", vocab.len()),
                format!("{rows} rows"),
            ));
        }
        Ok(vocab)
    }

    /// The tokens for a message: all of them for a small vocabulary, else the first few and
    /// the count.
    fn listing(&self) -> String {
        let shown: Vec<String> = self
            .tokens
            .iter()
            .take(12)
            .map(|t| format!("\"{}\"", crate::text::shorten(t)))
            .collect();
        if self.tokens.len() > 12 {
            format!("({}, … {} tokens)", shown.join(", "), self.tokens.len())
        } else {
            format!("[{}]", shown.join(", "))
        }
    }

    /// Number of labels.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether the vocabulary has no tokens (never true for a constructed one).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The tokens in label order.
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// The label of `token`, if it is in the vocabulary.
    pub fn id(&self, token: &str) -> Option<usize> {
        self.index.get(token).copied()
    }

    /// Splits `text` on whitespace and maps each piece to its label.
    ///
    /// ```
    /// use attnlab_core::tokenizer::Vocabulary;
    /// assert_eq!(Vocabulary::example().encode("A B .").unwrap(), vec![0, 1, 2]);
    /// assert!(Vocabulary::example().encode("A C").is_err());
    /// ```
    ///
    /// # Errors
    /// Empty text, or a piece not in the vocabulary (the message lists the vocabulary).
    pub fn encode(&self, text: &str) -> Result<Vec<usize>> {
        let ids: Vec<usize> = text
            .split_whitespace()
            .map(|piece| {
                self.id(piece).ok_or_else(|| {
                    Error::invalid(
                        "token",
                        format!("\"{}\"", crate::text::shorten(piece)),
                        format!(
                            "a token of the vocabulary {}, separated by spaces",
                            self.listing()
                        ),
                    )
                })
            })
            .collect::<Result<_>>()?;
        if ids.is_empty() {
            return Err(Error::invalid(
                "text",
                format!("\"{}\"", crate::text::shorten(text)),
                "at least one token, e.g. \"A B\"",
            ));
        }
        Ok(ids)
    }
}
