//! `attnlab.model`: a real trained checkpoint held in memory — its tokenizer, its forward, and one
//! layer's attention sublayer as a function the checker accepts. The Python API and its
//! docstrings are `python/attnlab/model.py`; this module holds the loaded weights and calls the
//! core (`attnlab_core::api::model`, `attnlab_core::model`) without the GIL.

use std::sync::Arc;

use attnlab_core::api::model::{self as core_model, Loaded, PosChoice};
use attnlab_core::api::{Context, Report};
use attnlab_core::attention::Mask;
use attnlab_core::choice::Choice;
use attnlab_core::limits::Limits;
use attnlab_core::model::llama::ForwardOptions;
use attnlab_core::model::sublayer::AttentionSublayer;
use attnlab_core::{Error, Result};
use ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;

use crate::{core_error, matrix, py_error, Matrix};

/// A checkpoint loaded once: weights in f32 and its tokenizer.
#[pyclass(name = "Model", module = "attnlab._attnlab", frozen)]
pub struct PyModel {
    loaded: Arc<Loaded>,
    /// The budgets of every request on it (`attnlab.model.load(max_memory=…, max_work=…)`).
    limits: Limits,
}

/// A core error of a model request, its budget hint in Python's words (the options of
/// `attnlab.model.load`, not the CLI's flags).
fn model_error(e: &Error) -> PyErr {
    let msg = e
        .message()
        .replace(
            "(raise it with --max-memory)",
            "(raise it with attnlab.model.load(…, max_memory=…))",
        )
        .replace(
            "(raise it with --max-work)",
            "(raise it with attnlab.model.load(…, max_work=…))",
        );
    py_error(e.kind(), msg)
}

fn pos(p: &str) -> PyResult<PosChoice> {
    PosChoice::parse(p).map_err(|e| model_error(&e))
}

impl PyModel {
    /// The ids of `text` (a string) or `ids` (given), checked against the vocabulary and the
    /// trained context.
    fn token_ids(&self, text: Option<String>, ids: Option<Vec<u32>>) -> Result<Vec<u32>> {
        let ctx = Context {
            limits: self.limits,
            ..Context::default()
        };
        let v = match (text, ids) {
            (Some(t), None) => self.loaded.ids(&Some(t), &None, &ctx)?,
            (None, Some(v)) => v,
            _ => {
                return Err(Error::invalid(
                    "input",
                    "both a text and ids, or neither",
                    "a text (str) or a sequence of token ids",
                ))
            }
        };
        if v.is_empty() {
            return Err(Error::invalid("token ids", "none", "at least one token"));
        }
        let c = &self.loaded.weights.config;
        if let Some(&bad) = v.iter().find(|&&t| t as usize >= c.vocab) {
            return Err(Error::invalid(
                "token id",
                bad,
                format!("an id below the vocabulary size {}", c.vocab),
            ));
        }
        core_model::check_length(c, v.len())?;
        Ok(v)
    }

    /// The forward over `ids` with logits at the last position.
    fn last_logits(&self, ids: &[u32], pos: PosChoice) -> Result<Array2<f32>> {
        let w = &self.loaded.weights;
        w.config
            .forward_budget(ids.len(), 1, 4)
            .check("the forward pass", &self.limits)?;
        let out = w.forward(
            ids,
            &ForwardOptions {
                positions: pos.positions(),
                logits_at: vec![ids.len() - 1],
                last_row_only: true,
                ..ForwardOptions::default()
            },
        )?;
        Ok(out.logits)
    }
}

#[pymethods]
impl PyModel {
    /// The forward's configuration as JSON (`LlamaConfig`).
    fn config_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.loaded.weights.config)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
    }

    /// `[(id, piece, text)]` of a text (no BOS added).
    fn tokenize(&self, py: Python<'_>, text: String) -> PyResult<Vec<(u32, String, String)>> {
        let tok = self.loaded.tokenizer.as_ref().ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err(
                "this checkpoint has no tokenizer (tokenizer.json); give token ids instead",
            )
        })?;
        let toks = py
            .detach(|| tok.encode(&text, &self.limits))
            .map_err(|e| model_error(&e))?;
        Ok(toks.into_iter().map(|t| (t.id, t.piece, t.text)).collect())
    }

    /// The vocabulary entry of an id.
    fn piece(&self, id: u32) -> PyResult<String> {
        match &self.loaded.tokenizer {
            Some(t) => t.piece(id).map_err(|e| model_error(&e)),
            None => Err(pyo3::exceptions::PyValueError::new_err(
                "this checkpoint has no tokenizer",
            )),
        }
    }

    /// `(json, text)` of the prediction at the last position: the `model predict` report.
    #[pyo3(signature = (text, ids, top, pos, model))]
    fn predict(
        &self,
        py: Python<'_>,
        text: Option<String>,
        ids: Option<Vec<u32>>,
        top: usize,
        pos: &str,
        model: String,
    ) -> PyResult<(String, String)> {
        let pos = self::pos(pos)?;
        let vocab = self.loaded.weights.config.vocab;
        if top == 0 || top > vocab {
            return Err(core_error(&Error::invalid(
                "top",
                top,
                format!("1 … the vocabulary size {vocab}"),
            )));
        }
        let report = py
            .detach(|| -> Result<_> {
                let ids = self.token_ids(text, ids)?;
                let logits = self.last_logits(&ids, pos)?;
                let m = &self.loaded;
                Ok(core_model::predict::ModelPredictReport {
                    model,
                    architecture: m.weights.config.arch.name().into(),
                    top: m.top(logits.row(0), top),
                    pieces: m.tokenizer.as_ref().map(|_| {
                        ids.iter()
                            .map(|&i| m.piece(i).unwrap_or_default())
                            .collect()
                    }),
                    ids,
                    pos,
                })
            })
            .map_err(|e| model_error(&e))?;
        let json = serde_json::to_string(&report)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        let text = attnlab_render::text::render(&Report::ModelPredict(Box::new(report)));
        Ok((json, text))
    }

    /// The logits at the last position (vocabulary entries, float32).
    #[pyo3(signature = (text, ids, pos))]
    fn logits<'py>(
        &self,
        py: Python<'py>,
        text: Option<String>,
        ids: Option<Vec<u32>>,
        pos: &str,
    ) -> PyResult<Bound<'py, PyArray1<f32>>> {
        let pos = self::pos(pos)?;
        let row = py
            .detach(|| -> Result<Vec<f32>> {
                let ids = self.token_ids(text, ids)?;
                Ok(self.last_logits(&ids, pos)?.row(0).to_vec())
            })
            .map_err(|e| model_error(&e))?;
        Ok(PyArray1::from_vec(py, row))
    }

    /// The residual stream entering layer `layer` (`layer` = the model's layer count: after the
    /// last layer, before the final norm), `n × dim` float32.
    #[pyo3(signature = (text, ids, layer, pos))]
    fn hidden<'py>(
        &self,
        py: Python<'py>,
        text: Option<String>,
        ids: Option<Vec<u32>>,
        layer: usize,
        pos: &str,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let pos = self::pos(pos)?;
        let layers = self.loaded.weights.config.layers;
        if layer > layers {
            return Err(core_error(&Error::invalid(
                "layer",
                layer,
                format!("0 … {layers} (the input of layer L; {layers} is the last layer's output)"),
            )));
        }
        let h = py
            .detach(|| -> Result<Array2<f32>> {
                let ids = self.token_ids(text, ids)?;
                let w = &self.loaded.weights;
                w.config
                    .forward_budget(ids.len(), 1, 4)
                    .check("the forward pass", &self.limits)?;
                Ok(w.forward(
                    &ids,
                    &ForwardOptions {
                        positions: pos.positions(),
                        layers: Some(layer),
                        ..ForwardOptions::default()
                    },
                )?
                .last)
            })
            .map_err(|e| model_error(&e))?;
        Ok(h.into_pyarray(py))
    }

    /// Layer `layer`'s attention sublayer as a callable on hidden states.
    #[pyo3(signature = (layer, pos, mask))]
    fn layer(&self, py: Python<'_>, layer: usize, pos: &str, mask: &str) -> PyResult<PyLayerFn> {
        let rope = self::pos(pos)? == PosChoice::Rope;
        let mask = Mask::parse(mask).map_err(|e| model_error(&e))?;
        let w = &self.loaded.weights;
        py.detach(|| -> Result<PyLayerFn> {
            Ok(PyLayerFn {
                f32: AttentionSublayer::new(w, layer, rope, mask)?,
                f64: AttentionSublayer::new(w, layer, rope, mask)?,
            })
        })
        .map_err(|e| model_error(&e))
    }
}

/// One layer's attention sublayer (`RMSNorm`, q/k/v, the rotation when asked, grouped-query
/// attention, `W_o`) in float32 and float64.
#[pyclass(name = "LayerFunction", module = "attnlab._attnlab", frozen)]
pub struct PyLayerFn {
    f32: AttentionSublayer<f32>,
    f64: AttentionSublayer<f64>,
}

#[pymethods]
impl PyLayerFn {
    /// `f(H)`: `H` is `(n, dim)` float32 or float64; the result has H's dtype and shape.
    fn __call__<'py>(&self, py: Python<'py>, h: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        match matrix(py, "H", &h)? {
            Matrix::F32(a) => {
                let out = py
                    .detach(|| self.f32.apply(a.view()))
                    .map_err(|e| model_error(&e))?;
                Ok(out.into_pyarray(py).into_any())
            }
            Matrix::F64(a) => {
                let out = py
                    .detach(|| self.f64.apply(a.view()))
                    .map_err(|e| model_error(&e))?;
                Ok(out.into_pyarray(py).into_any())
            }
        }
    }

    /// `(layer, rope, mask, dim)`.
    fn describe(&self) -> (usize, bool, String, usize) {
        (
            self.f32.layer,
            self.f32.rope,
            self.f32.mask.name().to_string(),
            self.f32.dim(),
        )
    }
}

/// Loads a checkpoint: a GGUF file, a known name (`smollm2-135m`) or a Hugging Face directory,
/// with the budgets of every request on it (the CLI's defaults when `None`).
#[pyfunction]
#[pyo3(signature = (model, max_memory=None, max_work=None))]
pub fn load_model(
    py: Python<'_>,
    model: String,
    max_memory: Option<u64>,
    max_work: Option<u64>,
) -> PyResult<PyModel> {
    let mut limits = Limits::default();
    if let Some(m) = max_memory {
        limits.max_memory = m;
    }
    if let Some(w) = max_work {
        limits.max_work = w;
    }
    let ctx = Context {
        limits,
        ..Context::default()
    };
    let loaded = py
        .detach(|| core_model::load(&model, &ctx))
        .map_err(|e| model_error(&e))?;
    Ok(PyModel { loaded, limits })
}
