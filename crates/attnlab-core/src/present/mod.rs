//! Presentation that every front end shares, with no terminal or file-format dependency: the one
//! number formatter ([`number`]), the prose generated from reports ([`prose`]) and helpers for
//! echoing user text safely in messages ([`text`]).

pub mod number;
pub mod prose;
pub mod text;
