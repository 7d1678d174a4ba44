//! `attnlab model …`: a real trained model's file, tokenizer and numbers (issue 18).
//!
//! Every command names its model with `model` (`--model`): a path to a GGUF file, or a known
//! name (`smollm2-135m`) resolved in the model cache ([`crate::model::locate`]).

pub mod info;
pub mod tokenize;

use crate::api::Context;
use crate::model::gguf::GgufFile;
use crate::{Error, Result};

/// The default `--model`: the model `scripts/fetch-smollm2` fetches.
pub const DEFAULT_MODEL: &str = "smollm2-135m";

/// Opens the GGUF file `model` names, within `ctx`'s limits (refused when the front end does
/// not allow files).
///
/// # Errors
/// Files not allowed; an unknown name's file missing from the cache; everything
/// [`GgufFile::open`] refuses.
pub fn open(model: &str, ctx: &Context) -> Result<GgufFile> {
    if !ctx.allow_files {
        return Err(Error::invalid(
            "model",
            crate::present::text::shorten(model),
            "no model file here (this front end does not read files)",
        ));
    }
    let path = crate::model::locate::resolve(model)?;
    if crate::files::entry(&path)? == crate::files::Entry::Dir {
        return Err(Error::io(
            &path,
            "it is a directory; expected a GGUF model file (Hugging Face checkpoint directories \
             are read by the model commands that run the forward)",
        ));
    }
    GgufFile::open(&path, &ctx.limits)
}
