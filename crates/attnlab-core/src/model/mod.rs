//! Real trained checkpoints: the Llama-family decoder ([`llama`]) and the readers that fill its
//! weights (Hugging Face directories: [`hf`]).

pub mod hf;
pub mod llama;
