//! Breaking the permutation symmetry: positional information.
//!
//! * [`additive`] — vectors added to the input before attention (the seed's crude index signal,
//!   sinusoidal encodings of Vaswani et al. 2017, a learned table).
//! * [`rotary`] — rotating queries and keys by position-proportional angles (RoPE).
//! * [`frequencies`] — the rotary frequency sets: explicit, `base`/`dim`, and Hugging Face scaling.

pub mod additive;
pub mod frequencies;
pub mod rotary;
