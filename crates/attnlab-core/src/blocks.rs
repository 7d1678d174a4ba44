//! Fixed blocks — `E`, `Wq`, `Wk`, `Wv`, `Wo`, `X` (and an optional vocabulary) — loaded from
//! files, so a session can hold the course's provided matrices fixed.
//!
//! Accepted: `.json` (an object whose keys are block names and values are nested row-major
//! arrays; an optional `"vocab": ["A", "B", "."]`), `.npz` (arrays named `E`, `Wq`, … — numpy's
//! `np.savez(f, Wq=..., ...)`), `.safetensors` (tensors with those names; F64, F32, BF16 and F16
//! are converted to f64), `.npy` (one array, named by the file's stem: `Wq.npy` holds `Wq`), or a
//! directory of such `.npy` files. Every block must be 2-D and finite.

use std::collections::BTreeMap;
use std::path::Path;

use ndarray::Array2;

use crate::{Error, Result};

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

impl Blocks {
    /// A block by name.
    pub fn get(&self, name: &str) -> Option<&Array2<f64>> {
        self.arrays.get(name)
    }

    /// Loads blocks from a file or a directory of `.npy` files (see the module docs).
    ///
    /// # Errors
    /// Unreadable files, unknown formats or block names, non-2-D arrays, non-finite values.
    pub fn load(path: &Path) -> Result<Blocks> {
        let mut blocks = Blocks::default();
        if path.is_dir() {
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
                blocks.load_npy(&p)?;
            }
        } else {
            let ext = path
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or("")
                .to_ascii_lowercase();
            match ext.as_str() {
                "json" => blocks.load_json(path)?,
                "npy" => blocks.load_npy(path)?,
                "npz" => blocks.load_npz(path)?,
                "safetensors" => blocks.load_safetensors(path)?,
                _ => {
                    return Err(Error::invalid(
                        "blocks file",
                        path.display(),
                        "a .json, .npy, .npz or .safetensors file, or a directory of .npy files",
                    ))
                }
            }
        }
        if blocks.arrays.is_empty() {
            return Err(Error::io(
                path,
                format!(
                    "no blocks found; expected arrays named {}",
                    BLOCK_NAMES.join(", ")
                ),
            ));
        }
        Ok(blocks)
    }

    pub(crate) fn insert(&mut self, path: &Path, name: &str, a: Array2<f64>) -> Result<()> {
        if !BLOCK_NAMES.contains(&name) {
            return Err(Error::io(
                path,
                format!(
                    "unknown block {name:?}; expected one of {}",
                    BLOCK_NAMES.join(", ")
                ),
            ));
        }
        if a.is_empty() {
            return Err(Error::io(
                path,
                format!("block {name} is empty ({}×{})", a.nrows(), a.ncols()),
            ));
        }
        if let Some(((r, c), v)) = a.indexed_iter().find(|(_, v)| !v.is_finite()) {
            return Err(Error::io(
                path,
                format!(
                    "block {name} has a non-finite value {v} at [{r},{c}]; blocks must be finite"
                ),
            ));
        }
        self.arrays.insert(name.to_string(), a);
        Ok(())
    }

    fn load_json(&mut self, path: &Path) -> Result<()> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io_source(path, e))?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| Error::io(path, format!("invalid JSON: {e}")))?;
        let obj = value.as_object().ok_or_else(|| {
            Error::io(
                path,
                "expected a JSON object mapping block names to nested arrays",
            )
        })?;
        for (name, v) in obj {
            if name == "vocab" {
                let tokens: Vec<String> = serde_json::from_value(v.clone())
                    .map_err(|_| Error::io(path, "\"vocab\" must be an array of strings"))?;
                self.vocab = Some(tokens);
                continue;
            }
            let rows: Vec<Vec<serde_json::Value>> =
                serde_json::from_value(v.clone()).map_err(|_| {
                    Error::io(
                        path,
                        format!("block {name} must be a 2-D array (a list of rows)"),
                    )
                })?;
            let ncols = rows.first().map_or(0, Vec::len);
            if rows.iter().any(|r| r.len() != ncols) {
                return Err(Error::io(
                    path,
                    format!("block {name} has rows of different lengths"),
                ));
            }
            let mut flat = Vec::with_capacity(rows.len() * ncols);
            for (r, row) in rows.iter().enumerate() {
                for (c, x) in row.iter().enumerate() {
                    // JSON has no NaN/Inf literals; accept the strings numpy users write.
                    let val = match x {
                        serde_json::Value::Number(n) => n.as_f64(),
                        serde_json::Value::String(s) => s.parse::<f64>().ok(),
                        _ => None,
                    }
                    .ok_or_else(|| {
                        Error::io(path, format!("block {name}[{r},{c}] = {x} is not a number"))
                    })?;
                    flat.push(val);
                }
            }
            let a = Array2::from_shape_vec((rows.len(), ncols), flat)
                .map_err(|e| Error::io_source(path, e))?;
            self.insert(path, name, a)?;
        }
        Ok(())
    }

    fn load_npy(&mut self, path: &Path) -> Result<()> {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("")
            .to_string();
        let a = read_npy_any(path)?;
        self.insert(path, &name, a)
    }

    fn load_npz(&mut self, path: &Path) -> Result<()> {
        let file = std::fs::File::open(path).map_err(|e| Error::io_source(path, e))?;
        let mut npz = ndarray_npy::NpzReader::new(file).map_err(|e| Error::io_source(path, e))?;
        let names = npz.names().map_err(|e| Error::io_source(path, e))?;
        for raw in names {
            let name = raw.trim_end_matches(".npy").to_string();
            let a: Array2<f64> = match npz.by_name::<ndarray::OwnedRepr<f64>, ndarray::Ix2>(&raw) {
                Ok(a) => a,
                Err(_) => {
                    let a32: Array2<f32> = npz.by_name(&raw).map_err(|e| {
                        Error::io(
                            path,
                            format!("array {name}: {e} (blocks must be 2-D float32 or float64)"),
                        )
                    })?;
                    a32.mapv(f64::from)
                }
            };
            self.insert(path, &name, a)?;
        }
        Ok(())
    }

    fn load_safetensors(&mut self, path: &Path) -> Result<()> {
        use safetensors::Dtype as St;
        let bytes = std::fs::read(path).map_err(|e| Error::io_source(path, e))?;
        let st = safetensors::SafeTensors::deserialize(&bytes)
            .map_err(|e| Error::io(path, format!("invalid safetensors file: {e}")))?;
        for (name, view) in st.tensors() {
            let shape = view.shape();
            if shape.len() != 2 {
                return Err(Error::io(
                    path,
                    format!("tensor {name} has shape {shape:?}; blocks must be 2-D"),
                ));
            }
            let data = view.data();
            let values: Vec<f64> = match view.dtype() {
                St::F64 => data
                    .chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().expect("chunk of 8")))
                    .collect(),
                St::F32 => data
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes(c.try_into().expect("chunk of 4")) as f64)
                    .collect(),
                St::BF16 => data
                    .chunks_exact(2)
                    .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f64())
                    .collect(),
                St::F16 => data
                    .chunks_exact(2)
                    .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f64())
                    .collect(),
                other => {
                    return Err(Error::io(
                        path,
                        format!(
                            "tensor {name} has dtype {other:?}; expected F64, F32, BF16 or F16"
                        ),
                    ))
                }
            };
            let a = Array2::from_shape_vec((shape[0], shape[1]), values)
                .map_err(|e| Error::io_source(path, e))?;
            self.insert(path, &name, a)?;
        }
        Ok(())
    }
}

fn read_npy_any(path: &Path) -> Result<Array2<f64>> {
    use ndarray_npy::ReadNpyExt;
    let open = || std::fs::File::open(path).map_err(|e| Error::io_source(path, e));
    if let Ok(a) = Array2::<f64>::read_npy(open()?) {
        return Ok(a);
    }
    Array2::<f32>::read_npy(open()?)
        .map(|a| a.mapv(f64::from))
        .map_err(|e| {
            Error::io(
                path,
                format!("{e} (blocks must be 2-D float32 or float64 .npy arrays)"),
            )
        })
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
