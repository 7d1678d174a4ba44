//! Presentation that every front end shares, with no terminal or file-format dependency: the prose
//! generated from reports ([`prose`]), the report boundary where typed results become sentences.
//! The one number formatter ([`number`]) and the helpers for echoing user text safely in
//! messages ([`text`]) import nothing of the crate and live at the bottom layer
//! ([`crate::number`], [`crate::text`]); they are re-exported here under their old paths.

pub use crate::{number, text};
pub mod prose;
