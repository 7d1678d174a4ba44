//! # attnlab-render — how attnlab's reports are shown
//!
//! The one presentation layer shared by every front end (the `attnlab` CLI, the web lab and the
//! Python package): SVG charts from the core's chart specifications, text renderings, whole
//! reports as self-contained HTML files ([`html`]) and HTML fragments for notebooks
//! ([`notebook`]).
//! Nothing here computes a number; it only lays out what a report holds.

pub mod html;
pub mod notebook;
pub mod svg;
pub mod text;
