//! # attnlab-render — how attnlab's reports are shown
//!
//! The one presentation layer shared by every front end (the `attnlab` CLI, the web lab and the
//! Python package): SVG charts from the core's chart specifications, text renderings, and whole reports as
//! self-contained HTML files.
//! Nothing here computes a number; it only lays out what a report holds.

pub mod html;
pub mod svg;
pub mod text;
