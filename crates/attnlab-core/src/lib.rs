//! # attnlab — what attention layers and positional encodings actually compute
//!
//! A map from the course's concepts to this crate's modules:
//!
//! | concept (course notes) | module |
//! |---|---|
//! | seeded inputs that match numpy's `np.random.seed` + `randn` | [`rng`] |
//! | text → integer labels (a specified splitting rule) | [`tokenizer`] |
//! | one-hot vectors, the embedding table, lookup, basis changes | [`embedding`] |
//! | scaled dot-product attention, masks, heads | [`attention`] |
//! | the RNN contrast | [`recurrent`] |
//! | breaking the symmetry: additive and rotary positions, frequency sets | [`position`] |
//! | permutations and the equivariance / invariance checker | [`symmetry`] |
//! | periods, resolution, decay and precision of rotary frequency sets | [`spectrum`] |
//! | Hugging Face `config.json` → rotary configuration | [`config`] |
//! | the layer under test, assembled from parts; experiments with controls | [`layer`], [`experiment`] |
//! | the claims ledger of both course documents | [`claims`] |
//! | the practical session's products | [`lab`] |
//! | the prediction-first practical | [`session`] |
//! | the complete two-token prediction | [`predict`] |
//! | fixed blocks (`E`, `Wq`, `Wk`, `Wv`, `Wo`, `X`) from files | [`blocks`] |
//! | a real trained model: GGUF files, dequantization, its tokenizer, its numbers | [`model`] |
//! | floating-point types and emulated precisions | [`numeric`] |
//! | `x·Wᵀ` of the real model's linear layers on a fast GEMM | [`matmul`] |
//! | a real trained model: the Llama-family forward and its checkpoint readers | [`model`] |
//! | phases m·ω reduced against the true 2π (shared by positions and spectra) | [`phase`] |
//!
//! | the request → report contract every front end shares (`run(&Request) -> Report`) | [`api`] |
//! | the one number formatter, prose from reports, chart specifications | [`present`], [`chart`] |
//!
//! The library knows nothing about terminals: front ends (the `attnlab` CLI, the web lab, the
//! Python package) parse their input into an [`api::Request`], call [`api::run`] and render the
//! typed [`api::Report`] (text and SVG through `attnlab-render`, JSON through serde).

#![warn(missing_docs)]

pub mod api;
pub mod attention;
pub mod blocks;
pub mod chart;
pub mod choice;
pub mod claims;
pub mod config;
pub mod embedding;
pub mod engines;
pub mod error;
pub mod experiment;
pub mod files;
mod float;
pub mod lab;
pub mod layer;
pub mod limits;
pub mod matmul;
pub mod model;
pub mod number;
pub mod numeric;
pub mod phase;
pub mod position;
pub mod predict;
pub mod present;
pub mod recurrent;
pub mod report;
pub mod rng;
pub mod session;
pub mod spectrum;
pub mod symmetry;
pub mod text;
pub mod tokenizer;

pub use error::{Error, ErrorKind, Result};
pub use numeric::{Dtype, Real};
