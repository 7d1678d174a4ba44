//! Rotary position embeddings (being written). Interface used by the core:
//! `Rotary { inv_freq, layout, attention_factor }::apply(x, positions)`.
