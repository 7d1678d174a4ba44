//! Fixed blocks — `E`, `Wq`, `Wk`, `Wv`, `Wo`, `X` (and an optional vocabulary) — loaded from
//! files, so a session can hold the course's provided matrices fixed.
//!
//! Accepted: `.json` (an object whose keys are block names and values are nested row-major
//! arrays; an optional `"vocab": ["A", "B", "."]`), `.npz` (arrays named `E`, `Wq`, … — numpy's
//! `np.savez(f, Wq=..., ...)`), `.safetensors` (tensors with those names; F64, F32, BF16 and F16
//! are converted to f64), `.npy` (one array, named by the file's stem: `Wq.npy` holds `Wq`), or a
//! directory of such `.npy` files. Every block must be 2-D and finite.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use ndarray::Array2;

use crate::files::{self, Entry};
use crate::limits::{self, Limits};
use crate::text::shorten;
use crate::{Error, Result};

mod json;
pub mod npy;

/// The names a block may have (`U`, d_v × vocab, is the unembedding used by `attnlab predict`).
pub const BLOCK_NAMES: [&str; 7] = ["E", "Wq", "Wk", "Wv", "Wo", "X", "U"];

/// A set of named matrices (all `f64`), plus an optional vocabulary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Blocks {
    /// The matrices by name.
    pub arrays: BTreeMap<String, Array2<f64>>,
    /// Vocabulary tokens, if the file gave them.
    pub vocab: Option<Vec<String>>,
}

/// The file formats blocks are read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// An object of nested row-major arrays (and `"vocab"`).
    Json,
    /// One numpy array, named by the file's stem.
    Npy,
    /// numpy's `np.savez` archive of `.npy` members.
    Npz,
    /// Hugging Face safetensors.
    Safetensors,
}

impl Format {
    /// The format a file's extension names (case-insensitive).
    pub fn of(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "json" => Some(Format::Json),
            "npy" => Some(Format::Npy),
            "npz" => Some(Format::Npz),
            "safetensors" => Some(Format::Safetensors),
            _ => None,
        }
    }

    /// The format bytes read from a pipe or standard input are in, by their first bytes: a
    /// zip archive (`.npz`), numpy's magic (`.npy`), a JSON object, or safetensors' 8-byte
    /// header length followed by `{`.
    pub fn sniff(bytes: &[u8]) -> Option<Format> {
        if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
            return Some(Format::Npz);
        }
        if bytes.starts_with(b"\x93NUMPY") {
            return Some(Format::Npy);
        }
        match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{') => return Some(Format::Json),
            None => return Some(Format::Json),
            _ => {}
        }
        (bytes.len() > 8 && bytes[8] == b'{').then_some(Format::Safetensors)
    }
}

/// Loads blocks while counting their memory against the limit.
struct Loader<'a> {
    path: &'a Path,
    limits: &'a Limits,
    used: u64,
    blocks: Blocks,
}

impl<'a> Loader<'a> {
    fn new(path: &'a Path, limits: &'a Limits) -> Self {
        Loader {
            path,
            limits,
            used: 0,
            blocks: Blocks::default(),
        }
    }

    /// An error about block `name` of this file.
    fn bad(&self, name: &str, reason: impl std::fmt::Display) -> Error {
        Error::io(self.path, format!("block {}: {reason}", shorten(name)))
    }

    /// Counts an `rows × cols` f64 block against the memory limit before it is allocated.
    fn admit(&mut self, name: &str, rows: u64, cols: u64) -> Result<()> {
        let bytes = limits::matrices(1, rows, cols);
        let total = self.used.saturating_add(bytes);
        self.limits.check_memory(
            format_args!(
                "block {} of {} ({rows}×{cols}, as float64)",
                shorten(name),
                crate::text::shorten_path(self.path)
            ),
            total,
        )?;
        self.used = total;
        Ok(())
    }

    fn npy(&mut self, name: &str, bytes: &[u8]) -> Result<()> {
        let h = npy::parse_header(bytes).map_err(|e| self.bad(name, e))?;
        let (r, c) = h.matrix_shape().map_err(|e| self.bad(name, e))?;
        let present = limits::u(bytes.len() - h.data_offset);
        if h.data_bytes() <= present {
            self.admit(name, r, c)?;
        }
        let a = npy::decode(bytes, &h).map_err(|e| self.bad(name, e))?;
        self.insert(name, a)
    }

    fn json(&mut self, bytes: &[u8]) -> Result<()> {
        let room = self.limits.max_memory.saturating_sub(self.used) / 8;
        let parsed = json::parse(bytes, room, &BLOCK_NAMES).map_err(|r| match r {
            json::Refusal::Block(m) => Error::io(self.path, m),
            json::Refusal::Syntax(m) => Error::io(
                self.path,
                format!("invalid JSON: {}", crate::text::clip(&m)),
            ),
            json::Refusal::TooMany { values } => Error::limit(
                format_args!(
                    "the blocks of {} (over {values} numbers, as float64)",
                    crate::text::shorten_path(self.path)
                ),
                format!(
                    "more than {} of memory",
                    crate::number::bytes(values.saturating_mul(8))
                ),
                format!(
                    "{} (raise it with --max-memory)",
                    crate::number::bytes(self.limits.max_memory)
                ),
            ),
        })?;
        if let Some(v) = parsed.vocab {
            self.blocks.vocab = Some(v);
        }
        for (name, a) in parsed.arrays {
            self.used = self.used.saturating_add(limits::matrices(
                1,
                limits::u(a.nrows()),
                limits::u(a.ncols()),
            ));
            self.insert(&name, a)?;
        }
        Ok(())
    }

    fn npz<R: Read + std::io::Seek>(&mut self, reader: R) -> Result<()> {
        let mut zip = zip::ZipArchive::new(reader).map_err(|e| {
            Error::io(
                self.path,
                format!(
                    "not a .npz (zip) archive: {}",
                    crate::text::clip(&e.to_string())
                ),
            )
        })?;
        for i in 0..zip.len() {
            let member = zip.by_index(i).map_err(|e| {
                Error::io(
                    self.path,
                    format!("member {i}: {}", crate::text::clip(&e.to_string())),
                )
            })?;
            let raw = member.name().to_string();
            let Some(name) = raw.strip_suffix(".npy") else {
                return Err(Error::io(
                    self.path,
                    format!(
                        "member \"{}\" is not a .npy array (np.savez writes NAME.npy)",
                        shorten(&raw)
                    ),
                ));
            };
            let name = name.to_string();
            if !BLOCK_NAMES.contains(&name.as_str()) {
                return Err(self.unknown(&name));
            }
            let cap = self.limits.max_file_bytes;
            if member.size() > cap {
                return Err(self.bad(
                    &name,
                    format!(
                        "inflates to {}, over the limit of {} for an input file (raise it with --max-file-size)",
                        crate::number::bytes(member.size()),
                        crate::number::bytes(cap)
                    ),
                ));
            }
            let mut bytes = Vec::with_capacity(usize::try_from(member.size()).unwrap_or(0));
            member
                .take(cap.saturating_add(1))
                .read_to_end(&mut bytes)
                .map_err(|e| self.bad(&name, crate::text::clip(&e.to_string())))?;
            if limits::u(bytes.len()) > cap {
                return Err(self.bad(
                    &name,
                    "inflates past the limit for an input file (raise it with --max-file-size)",
                ));
            }
            self.npy(&name, &bytes)?;
        }
        Ok(())
    }

    fn safetensors(&mut self, bytes: &[u8]) -> Result<()> {
        use safetensors::Dtype as St;
        let st = safetensors::SafeTensors::deserialize(bytes).map_err(|e| {
            Error::io(
                self.path,
                format!(
                    "invalid safetensors file: {}",
                    crate::text::clip(&e.to_string())
                ),
            )
        })?;
        let mut tensors = st.tensors();
        tensors.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, view) in tensors {
            if !BLOCK_NAMES.contains(&name.as_str()) {
                return Err(self.unknown(&name));
            }
            let shape = view.shape();
            let &[r, c] = shape else {
                return Err(self.bad(
                    &name,
                    format!(
                        "a {}-D tensor of shape {}; blocks must be 2-D",
                        shape.len(),
                        npy::shape_text(&shape.iter().map(|&x| limits::u(x)).collect::<Vec<_>>())
                    ),
                ));
            };
            self.admit(&name, limits::u(r), limits::u(c))?;
            let data = view.data();
            let values: Vec<f64> = match view.dtype() {
                St::F64 => data
                    .chunks_exact(8)
                    .map(|b| {
                        let mut a = [0u8; 8];
                        a.copy_from_slice(b);
                        f64::from_le_bytes(a)
                    })
                    .collect(),
                St::F32 => data
                    .chunks_exact(4)
                    .map(|b| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
                    .collect(),
                St::BF16 => data
                    .chunks_exact(2)
                    .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f64())
                    .collect(),
                St::F16 => data
                    .chunks_exact(2)
                    .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f64())
                    .collect(),
                other => {
                    return Err(self.bad(
                        &name,
                        format!("dtype {other}; expected F64, F32, BF16 or F16"),
                    ))
                }
            };
            let a = Array2::from_shape_vec((r, c), values).map_err(|e| self.bad(&name, e))?;
            self.insert(&name, a)?;
        }
        Ok(())
    }

    fn unknown(&self, name: &str) -> Error {
        Error::io(
            self.path,
            format!(
                "unknown block \"{}\"; expected one of {}",
                shorten(name),
                BLOCK_NAMES.join(", ")
            ),
        )
    }

    fn insert(&mut self, name: &str, a: Array2<f64>) -> Result<()> {
        if !BLOCK_NAMES.contains(&name) {
            return Err(self.unknown(name));
        }
        if a.is_empty() {
            return Err(self.bad(name, format!("empty ({}×{})", a.nrows(), a.ncols())));
        }
        if let Some(((r, c), v)) = a.indexed_iter().find(|(_, v)| !v.is_finite()) {
            return Err(self.bad(
                name,
                format!("non-finite value {v} at [{r},{c}]; blocks must be finite"),
            ));
        }
        if self.blocks.arrays.contains_key(name) {
            return Err(self.bad(name, "given twice"));
        }
        self.blocks.arrays.insert(name.to_string(), a);
        Ok(())
    }

    fn finish(self) -> Result<Blocks> {
        if self.blocks.arrays.is_empty() {
            return Err(Error::io(
                self.path,
                format!(
                    "no blocks found; expected arrays named {}",
                    BLOCK_NAMES.join(", ")
                ),
            ));
        }
        Ok(self.blocks)
    }
}

impl Blocks {
    /// A block by name.
    pub fn get(&self, name: &str) -> Option<&Array2<f64>> {
        self.arrays.get(name)
    }

    /// Loads blocks from a file or a directory of `.npy` files (see the module docs) with the
    /// default [`Limits`].
    ///
    /// # Errors
    /// See [`Blocks::load_with`].
    pub fn load(path: &Path) -> Result<Blocks> {
        Self::load_with(path, &Limits::default())
    }

    /// Loads blocks from a file or a directory of `.npy` files through the input gate
    /// ([`crate::files`]): only regular files, at most `limits.max_file_bytes` each, every
    /// declared shape checked against the bytes present and the memory limit before anything
    /// is allocated.
    ///
    /// # Errors
    /// Unreadable files, FIFOs and devices, unknown formats or block names, non-2-D arrays,
    /// non-finite values, truncated data, blocks over the limits.
    pub fn load_with(path: &Path, limits: &Limits) -> Result<Blocks> {
        if files::is_stream(path) {
            // A pipe or standard input: read once through the gate, the format from the name
            // when it has an extension (`/dev/fd/63` has none), else from the first bytes.
            let bytes = files::read_input(path, limits)?;
            let shown = files::shown(path);
            let format = Format::of(path)
                .or_else(|| Format::sniff(&bytes))
                .ok_or_else(|| {
                    Error::io(
                        shown,
                        "the bytes are none of the blocks formats; expected JSON, .npz or .safetensors",
                    )
                })?;
            if format == Format::Npy && Format::of(path).is_none() {
                return Err(Error::io(
                    shown,
                    "a .npy array from a pipe has no name to say which block it is; send a .npz or a JSON object of blocks",
                ));
            }
            return Self::from_bytes(&bytes, format, shown, limits);
        }
        let mut loader = Loader::new(path, limits);
        match files::entry(path)? {
            Entry::Dir => {
                let mut entries: Vec<_> = std::fs::read_dir(path)
                    .map_err(|e| Error::io_source(path, e))?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "npy"))
                    .collect();
                entries.sort();
                if entries.is_empty() {
                    return Err(Error::io(
                        path,
                        "the directory has no .npy files (expected E.npy, Wq.npy, …)",
                    ));
                }
                for p in entries {
                    let name = npy_name(&p);
                    if !BLOCK_NAMES.contains(&name.as_str()) {
                        return Err(Error::io(
                            &p,
                            format!(
                                "unknown block \"{}\"; expected one of {} (the file's name is the block's)",
                                shorten(&name),
                                BLOCK_NAMES.join(", ")
                            ),
                        ));
                    }
                    let bytes = files::read(&p, limits)?;
                    let mut one = Loader::new(&p, limits);
                    one.used = loader.used;
                    one.npy(&name, &bytes)?;
                    loader.used = one.used;
                    loader.blocks.arrays.append(&mut one.blocks.arrays);
                }
            }
            Entry::File(_) => {
                let format = Format::of(path).ok_or_else(|| {
                    Error::invalid(
                        "blocks file",
                        crate::text::shorten_path(path),
                        "a .json, .npy, .npz or .safetensors file, or a directory of .npy files",
                    )
                })?;
                if format == Format::Npz {
                    let (file, size) = files::open(path)?;
                    if size > limits.max_file_bytes {
                        return Err(files::too_large(path, Some(size), limits));
                    }
                    loader.npz(file)?;
                } else {
                    let bytes = files::read(path, limits)?;
                    return Self::from_bytes(&bytes, format, path, limits);
                }
            }
        }
        loader.finish()
    }

    /// Parses blocks from the bytes of a file of `format`; `source` names the file in errors
    /// (and, for `.npy`, gives the block's name by its stem). The same checks as
    /// [`Blocks::load_with`], without the file system (what the fuzz targets call).
    ///
    /// # Errors
    /// See [`Blocks::load_with`].
    pub fn from_bytes(
        bytes: &[u8],
        format: Format,
        source: &Path,
        limits: &Limits,
    ) -> Result<Blocks> {
        let mut loader = Loader::new(source, limits);
        match format {
            Format::Json => loader.json(bytes)?,
            Format::Npy => loader.npy(&npy_name(source), bytes)?,
            Format::Npz => loader.npz(std::io::Cursor::new(bytes))?,
            Format::Safetensors => loader.safetensors(bytes)?,
        }
        loader.finish()
    }

    /// Adds a block given inline (`name` must be one of [`BLOCK_NAMES`], non-empty, finite).
    pub(crate) fn insert(&mut self, path: &Path, name: &str, a: Array2<f64>) -> Result<()> {
        let limits = Limits::default();
        let mut l = Loader::new(path, &limits);
        l.blocks = std::mem::take(self);
        let r = l.insert(name, a);
        *self = l.blocks;
        r
    }
}

/// The block name of a `.npy` file: its stem.
fn npy_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_npy_npz_and_safetensors_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let wq = ndarray::array![[1.0, 2.0], [3.0, 4.5]];
        // JSON
        let j = dir.path().join("b.json");
        std::fs::write(&j, r#"{"Wq": [[1, 2], [3, 4.5]], "vocab": ["A", "B"]}"#).unwrap();
        let b = Blocks::load(&j).unwrap();
        assert_eq!(b.get("Wq"), Some(&wq));
        assert_eq!(
            b.vocab.as_deref(),
            Some(&["A".to_string(), "B".to_string()][..])
        );
        // npy (f32 is widened exactly)
        let npy = dir.path().join("Wq.npy");
        ndarray_npy::write_npy(&npy, &wq.mapv(|x| x as f32)).unwrap();
        assert_eq!(Blocks::load(&npy).unwrap().get("Wq"), Some(&wq));
        assert_eq!(Blocks::load(dir.path()).unwrap().get("Wq"), Some(&wq));
        // npz
        let npz = dir.path().join("b.npz");
        let mut w = ndarray_npy::NpzWriter::new(std::fs::File::create(&npz).unwrap());
        w.add_array("Wk", &wq).unwrap();
        w.finish().unwrap();
        assert_eq!(Blocks::load(&npz).unwrap().get("Wk"), Some(&wq));
        // safetensors
        let st = dir.path().join("b.safetensors");
        let bytes: Vec<u8> = wq.iter().flat_map(|x| x.to_le_bytes()).collect();
        let view =
            safetensors::tensor::TensorView::new(safetensors::Dtype::F64, vec![2, 2], &bytes)
                .unwrap();
        safetensors::serialize_to_file([("Wv", view)], None, &st).unwrap();
        assert_eq!(Blocks::load(&st).unwrap().get("Wv"), Some(&wq));
    }

    #[test]
    fn bad_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("nan.json", r#"{"Wq": [[1, "NaN"]]}"#, "non-finite"),
            (
                "ragged.json",
                r#"{"Wq": [[1, 2], [3]]}"#,
                "different lengths",
            ),
            ("name.json", r#"{"W": [[1]]}"#, "unknown block"),
            ("bad.json", "{", "invalid JSON"),
        ];
        for (file, text, needle) in cases {
            let p = dir.path().join(file);
            std::fs::write(&p, text).unwrap();
            let e = Blocks::load(&p).unwrap_err().to_string();
            assert!(e.contains(needle), "{file}: {e}");
        }
        assert!(Blocks::load(&dir.path().join("missing.json")).is_err());
        assert!(Blocks::load(&dir.path().join("x.txt")).is_err());
    }
}
