//! `attnlab._attnlab`: the Rust half of the Python package `attnlab`.
//!
//! The public API, its docstrings and signatures live in `python/attnlab/` (so they read like
//! Python); this module converts numpy arrays to and from `ndarray`, calls the core and maps
//! its errors to Python exceptions:
//!
//! | core [`ErrorKind`] | Python |
//! |---|---|
//! | `NotFound` | `FileNotFoundError` |
//! | `Read`, `Write` | `OSError` |
//! | `Cancelled` | `KeyboardInterrupt` |
//! | `Layer` | what the caller's function did: `LayerError` chained (`raise … from`) to the exception it raised, `TypeError` for a wrong dtype, `ValueError` for a wrong shape or non-finite values |
//! | everything else | `ValueError` |
//!
//! The caller's layer runs with the GIL held (it is Python code); pure-Rust work (attention,
//! commands) releases the GIL and checks for Ctrl-C through the core's progress callback.

mod model;

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use attnlab_core::api::check::{self, Input, LayerCheckOptions, PositionedLayer, UserLayer};
use attnlab_core::api::rope::FrequencySource;
use attnlab_core::api::value::Count;
use attnlab_core::api::{self, Context};
use attnlab_core::attention::{Attention, Mask};
use attnlab_core::choice::Choice;
use attnlab_core::layer::Readout;
use attnlab_core::{Error, ErrorKind, Real};
use ndarray::{Array2, Array3, ArrayView2, Axis};
use numpy::{
    Element, IntoPyArray, PyArray1, PyArray2, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{
    PyException, PyFileNotFoundError, PyKeyboardInterrupt, PyMemoryError, PyOSError,
    PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

pyo3::create_exception!(
    attnlab,
    LayerError,
    PyRuntimeError,
    "The layer under test raised an exception; the original is chained as `__cause__`."
);

/// The Python exception for a core error that did not come from the caller's function.
fn core_error(e: &Error) -> PyErr {
    py_error(e.kind(), e.message().to_string())
}

/// The Python exception of an error kind, with its message.
fn py_error(kind: ErrorKind, msg: String) -> PyErr {
    match kind {
        ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
        ErrorKind::Read | ErrorKind::Write => PyOSError::new_err(msg),
        ErrorKind::Cancelled => PyKeyboardInterrupt::new_err(msg),
        ErrorKind::Layer => LayerError::new_err(msg),
        _ => PyValueError::new_err(msg),
    }
}

/// numpy's shape notation: `(4,)`, `(4, 4)`.
fn py_shape(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `obj` as a numpy array (`numpy.asarray` for anything else: lists, tensors on the CPU).
fn as_ndarray<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyUntypedArray>> {
    if let Ok(a) = obj.cast::<PyUntypedArray>() {
        return Ok(a.clone());
    }
    let np = py.import("numpy")?;
    let a = np.call_method1("asarray", (obj,))?;
    Ok(a.cast_into::<PyUntypedArray>()?)
}

/// The dtype's numpy name (`float32`).
fn dtype_name(a: &Bound<'_, PyUntypedArray>) -> String {
    a.dtype()
        .str()
        .map(|s| s.to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// The numpy name of a layer dtype.
fn real_name<T: Real>() -> &'static str {
    match T::DTYPE {
        attnlab_core::Dtype::F32 => "float32",
        _ => "float64",
    }
}

/// A 2-D float32 or float64 matrix from Python.
enum Matrix {
    F32(Array2<f32>),
    F64(Array2<f64>),
}

impl Matrix {
    fn dtype(&self) -> &'static str {
        match self {
            Matrix::F32(_) => "float32",
            Matrix::F64(_) => "float64",
        }
    }
}

/// Reads the argument `name` as a 2-D float32/float64 array (a copy).
fn matrix(py: Python<'_>, name: &str, obj: &Bound<'_, PyAny>) -> PyResult<Matrix> {
    let a = as_ndarray(py, obj).map_err(|e| {
        let err = PyTypeError::new_err(format!(
            "{name} must be a 2-D numpy array of float32 or float64; got a {} that numpy.asarray cannot convert",
            type_name(obj)
        ));
        err.set_cause(py, Some(e));
        err
    })?;
    if a.ndim() != 2 {
        return Err(PyValueError::new_err(format!(
            "{name} must be a 2-D array (rows × columns); got shape {}",
            py_shape(a.shape())
        )));
    }
    fn read<T: Element + Clone>(a: &Bound<'_, PyUntypedArray>) -> PyResult<Array2<T>> {
        let typed = a.cast::<PyArray2<T>>()?;
        let ro = typed
            .try_readonly()
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(ro.as_array().to_owned())
    }
    let dt = a.dtype();
    if dt.is_equiv_to(&numpy::dtype::<f64>(py)) {
        Ok(Matrix::F64(read(&a)?))
    } else if dt.is_equiv_to(&numpy::dtype::<f32>(py)) {
        Ok(Matrix::F32(read(&a)?))
    } else {
        Err(PyTypeError::new_err(format!(
            "{name} has dtype {}; expected float32 or float64 (convert with {name}.astype(np.float64))",
            dtype_name(&a)
        )))
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .qualname()
        .map(|s| s.to_string())
        .unwrap_or_else(|_| "object".into())
}

/// What went wrong in the caller's function, beyond the core error's message.
enum Failure {
    /// It raised an `Exception`: chained as the cause of a `LayerError`.
    Raised(PyErr),
    /// It returned the wrong type or dtype.
    Type,
    /// It returned the wrong shape or non-finite values.
    Value,
}

/// The caller's function, called with the GIL held, as the core's layer in both precisions.
struct PyLayer<'py> {
    py: Python<'py>,
    f: Bound<'py, PyAny>,
    /// The failure of the most recent call (cleared at the start of each call).
    failure: RefCell<Option<Failure>>,
    /// A `KeyboardInterrupt`/`SystemExit` the function raised: re-raised as it is.
    interrupt: RefCell<Option<PyErr>>,
}

impl<'py> PyLayer<'py> {
    fn fail(&self, failure: Failure, message: String) -> Error {
        *self.failure.borrow_mut() = Some(failure);
        Error::layer(message)
    }

    fn call<T: Real + Element>(
        &self,
        x: ArrayView2<T>,
        positions: Option<&[i64]>,
    ) -> attnlab_core::Result<Array2<T>> {
        let py = self.py;
        *self.failure.borrow_mut() = None;
        let (n, d) = x.dim();
        let input = format!("{n}×{d} {} input", real_name::<T>());
        // A fresh array per call: the function may keep or modify it without touching ours.
        let arg = PyArray2::from_array(py, &x);
        let called = match positions {
            Some(p) => self.f.call1((arg, numpy::PyArray1::from_slice(py, p))),
            None => self.f.call1((arg,)),
        };
        let out = match called {
            Ok(out) => out,
            Err(e) if !e.is_instance_of::<PyException>(py) => {
                *self.interrupt.borrow_mut() = Some(e);
                return Err(Error::cancelled("the layer check"));
            }
            Err(e) => {
                let what = e
                    .get_type(py)
                    .qualname()
                    .map(|s| s.to_string())
                    .unwrap_or_else(|_| "an exception".into());
                let text = e.value(py).to_string();
                let message = if text.is_empty() {
                    format!("f raised {what} (on a {input})")
                } else {
                    format!("f raised {what}: {text} (on a {input})")
                };
                return Err(self.fail(Failure::Raised(e), message));
            }
        };
        if out.is_none() {
            return Err(self.fail(
                Failure::Type,
                format!("f returned None for a {input} (does it return its result?)"),
            ));
        }
        let arr = match as_ndarray(py, &out) {
            Ok(a) => a,
            Err(e) => {
                let hint = if type_name(&out) == "Tensor" {
                    " (return out.detach().numpy() for a torch tensor)"
                } else {
                    ""
                };
                return Err(self.fail(
                    Failure::Type,
                    format!(
                        "f returned a {} for a {input}, which numpy.asarray cannot convert ({e}){hint}",
                        type_name(&out)
                    ),
                ));
            }
        };
        if arr.ndim() != 2 || arr.shape()[0] != n {
            return Err(self.fail(
                Failure::Value,
                format!(
                    "f returned an array of shape {} for a {input}; expected ({n}, d′): one output row per input row",
                    py_shape(arr.shape())
                ),
            ));
        }
        if !arr.dtype().is_equiv_to(&numpy::dtype::<T>(py)) {
            return Err(self.fail(
                Failure::Type,
                format!(
                    "f returned {} for a {input}; the output must have the input's dtype (return out.astype(X.dtype), or pass X as {})",
                    dtype_name(&arr),
                    dtype_name(&arr)
                ),
            ));
        }
        let owned: Array2<T> = match arr.cast::<PyArray2<T>>() {
            Ok(a) => match a.try_readonly() {
                Ok(ro) => ro.as_array().to_owned(),
                Err(e) => {
                    return Err(self.fail(Failure::Value, format!("f's output cannot be read: {e}")))
                }
            },
            Err(e) => {
                return Err(self.fail(Failure::Type, format!("f's output cannot be read: {e}")))
            }
        };
        if let Some(((i, j), v)) = owned.indexed_iter().find(|(_, v)| !v.is_finite()) {
            return Err(self.fail(
                Failure::Value,
                format!(
                    "f returned non-finite values ({} at [{i}, {j}]) for a {input}",
                    attnlab_core::present::number::short(v.to_f64())
                ),
            ));
        }
        Ok(owned)
    }

    /// The Python exception for a failed check.
    fn error(&self, e: &Error) -> PyErr {
        if let Some(interrupt) = self.interrupt.borrow_mut().take() {
            return interrupt;
        }
        if e.kind() != ErrorKind::Layer {
            return core_error(e);
        }
        match self.failure.borrow_mut().take() {
            Some(Failure::Raised(cause)) => {
                let err = LayerError::new_err(e.message().to_string());
                err.set_cause(self.py, Some(cause));
                err
            }
            Some(Failure::Type) => PyTypeError::new_err(e.message().to_string()),
            Some(Failure::Value) | None => PyValueError::new_err(e.message().to_string()),
        }
    }
}

/// Parses a closed option (`mask`, `readout`, …) given as `None` or a string.
fn choice<T: Choice + Default>(value: Option<&str>) -> PyResult<T> {
    match value {
        None => Ok(T::default()),
        Some(s) => T::parse(s).map_err(|e| core_error(&e)),
    }
}

/// `(json, text, html)` of a check of the caller's layer `f` on `x`.
#[pyfunction]
#[pyo3(signature = (f, x, perms, samples, exhaustive, seed, readout, mask, prefix, positions = None))]
#[allow(clippy::too_many_arguments)]
fn check_layer(
    py: Python<'_>,
    f: Bound<'_, PyAny>,
    x: Bound<'_, PyAny>,
    perms: Option<Vec<Vec<usize>>>,
    samples: Option<usize>,
    exhaustive: bool,
    seed: u64,
    readout: Option<&str>,
    mask: Option<&str>,
    prefix: Option<usize>,
    positions: Option<Vec<i64>>,
) -> PyResult<(String, String, String)> {
    if !f.is_callable() {
        return Err(PyTypeError::new_err(format!(
            "f must be a callable mapping an (n, d) array to an (n, d′) array; got a {}",
            type_name(&f)
        )));
    }
    let x = matrix(py, "X", &x)?;
    let readout = match readout {
        None => Readout::None,
        Some(r) => Readout::parse(r).map_err(|e| core_error(&e))?,
    };
    let opts = LayerCheckOptions {
        perms,
        samples,
        exhaustive,
        seed,
        readout,
        mask: choice::<Mask>(mask)?,
        prefix,
    };
    let layer = PyLayer {
        py,
        f,
        failure: RefCell::new(None),
        interrupt: RefCell::new(None),
    };
    let input = match &x {
        Matrix::F32(a) => Input::F32(a.view()),
        Matrix::F64(a) => Input::F64(a.view()),
    };
    let report = match &positions {
        None => {
            let f32_layer = |h: ArrayView2<f32>| layer.call(h, None);
            let f64_layer = |h: ArrayView2<f64>| layer.call(h, None);
            let user = UserLayer {
                f32: &f32_layer,
                f64: &f64_layer,
            };
            check::run(&user, input, &opts, &Context::default())
        }
        Some(pos) => {
            let f32_layer = |h: ArrayView2<f32>, p: &[i64]| layer.call(h, Some(p));
            let f64_layer = |h: ArrayView2<f64>, p: &[i64]| layer.call(h, Some(p));
            let user = PositionedLayer {
                f32: &f32_layer,
                f64: &f64_layer,
                positions: pos,
            };
            check::run_positioned(&user, input, &opts, &Context::default())
        }
    }
    .map_err(|e| layer.error(&e))?;
    let json = serde_json::to_string(&report).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let text = attnlab_render::text::check::render(&report);
    let html = attnlab_render::notebook::layer_check(&report).map_err(|e| core_error(&e))?;
    Ok((json, text, html))
}

/// Ctrl-C while Rust works without the GIL: the core's progress callback re-attaches briefly
/// to let Python run its signal handlers, and sets the core's cancellation flag when one
/// raised.
struct Interruptible {
    cancel: AtomicBool,
    raised: Mutex<Option<PyErr>>,
}

impl Interruptible {
    fn new() -> Self {
        Interruptible {
            cancel: AtomicBool::new(false),
            raised: Mutex::new(None),
        }
    }

    fn poll(&self) {
        if self.cancel.load(Ordering::Relaxed) {
            return;
        }
        if let Err(e) = Python::attach(|py| py.check_signals()) {
            if let Ok(mut slot) = self.raised.lock() {
                *slot = Some(e);
            }
            self.cancel.store(true, Ordering::Relaxed);
        }
    }

    fn error(&self, e: &Error) -> PyErr {
        if e.kind() == ErrorKind::Cancelled {
            if let Some(raised) = self.raised.lock().ok().and_then(|mut s| s.take()) {
                return raised;
            }
        }
        core_error(e)
    }
}

/// `(json, text)` of any core command: `command` as the CLI spells it, `options` a JSON object
/// of its long options in snake_case.
#[pyfunction]
fn run_command(py: Python<'_>, command: &str, options: &str) -> PyResult<(String, String)> {
    let body: serde_json::Value = serde_json::from_str(options)
        .map_err(|e| PyValueError::new_err(format!("options are not JSON: {e}")))?;
    let request = api::Request::from_json(command, body).map_err(|e| core_error(&e))?;
    let watch = Interruptible::new();
    let result = py.detach(|| {
        let progress = |_: &str, _: f64| watch.poll();
        let ctx = Context {
            progress: &progress,
            cancel: Some(&watch.cancel),
            allow_files: true,
            limits: attnlab_core::limits::Limits::default(),
        };
        api::run_with(&request, &ctx).map(|report| {
            let json = serde_json::to_string(&report);
            let text = attnlab_render::text::render(&report);
            (json, text)
        })
    });
    let (json, text) = result.map_err(|e| watch.error(&e))?;
    let json = json.map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((json, text))
}

/// What `attention` needs in memory: the copies of X and the projections, the fused kernel's
/// buffers (Q, K, V, their packed copies, the heads and the output: `8·n·d_max` values) and,
/// with the weights, each head's n × n matrix twice (the kernel's and the stacked array
/// returned). Refused before anything is allocated, as a `MemoryError` naming the estimate.
fn attention_budget(
    n: usize,
    d: usize,
    width: usize,
    heads: usize,
    weights: bool,
    size: u64,
) -> u64 {
    use attnlab_core::limits::{product, u};
    let (n, d, w, h) = (u(n), u(d), u(width.max(d)), u(heads));
    let square = if weights { product(&[2, h, n, n]) } else { 0 };
    product(&[n, d])
        .saturating_add(product(&[4, d, w]))
        .saturating_add(product(&[8, n, w]))
        .saturating_add(square)
        .saturating_mul(size)
}

fn forward<T: Real + Element>(
    x: Array2<T>,
    [wq, wk, wv]: [Array2<T>; 3],
    wo: Option<Array2<T>>,
    heads: usize,
    mask: Mask,
    want_weights: bool,
) -> attnlab_core::Result<(Array2<T>, Option<Array3<T>>)> {
    let names = ["X", "Wq", "Wk", "Wv"];
    for (name, a) in names.iter().zip([&x, &wq, &wk, &wv]) {
        attnlab_core::numeric::require_finite(name, a.view())?;
    }
    if let Some(o) = &wo {
        attnlab_core::numeric::require_finite("Wo", o.view())?;
    }
    let layer = Attention::multi_head(wq, wk, wv, wo, heads, mask)?;
    let (output, weights) = if want_weights {
        let out = layer.forward(x.view())?;
        let views: Vec<_> = out.weights.iter().map(|w| w.view()).collect();
        let weights = ndarray::stack(Axis(0), &views)
            .map_err(|e| Error::shape("attention weights", "equal shapes", e))?;
        (out.output, Some(weights))
    } else {
        (layer.forward_output_only(x.view())?, None)
    };
    if output
        .iter()
        .chain(weights.iter().flatten())
        .any(|v| !v.is_finite())
    {
        return Err(Error::non_finite(
            format!("the attention output in {}", real_name::<T>()),
            "the inputs overflow the dtype (scale them down, or use float64)",
        ));
    }
    Ok((output, weights))
}

/// `(output, weights)` of scaled dot-product self-attention; weights are (heads, n, n), or
/// `None` without `weights` (the fused kernel, which never forms them).
#[pyfunction]
#[pyo3(signature = (x, wq, wk, wv, heads, wo, mask, weights=true, max_memory=None))]
#[allow(clippy::too_many_arguments)]
fn attention<'py>(
    py: Python<'py>,
    x: Bound<'py, PyAny>,
    wq: Bound<'py, PyAny>,
    wk: Bound<'py, PyAny>,
    wv: Bound<'py, PyAny>,
    heads: usize,
    wo: Option<Bound<'py, PyAny>>,
    mask: Option<&str>,
    weights: bool,
    max_memory: Option<u64>,
) -> PyResult<Bound<'py, PyTuple>> {
    let mask = choice::<Mask>(mask)?;
    // The budget first, from the shapes alone (before any copy): an n of 60 000 with weights
    // is a MemoryError here, not an allocation failure that aborts the interpreter.
    // (Inputs that are not 2-D arrays count as empty here; `matrix` names them below.)
    let shape = |obj: &Bound<'py, PyAny>| match as_ndarray(py, obj) {
        Ok(a) if a.ndim() == 2 => (a.shape()[0], a.shape()[1], a.dtype().itemsize() as u64),
        _ => (0, 0, 8),
    };
    let (n, d, size) = shape(&x);
    let width = [&wq, &wk, &wv]
        .iter()
        .map(|w| shape(w).1)
        .max()
        .unwrap_or(0);
    let limit = max_memory.unwrap_or(attnlab_core::limits::DEFAULT_MAX_MEMORY);
    let need = attention_budget(n, d, width, heads.max(1), weights, size.max(4));
    if need > limit {
        let fused = attention_budget(n, d, width, heads.max(1), false, size.max(4));
        let hint = if weights && fused <= limit {
            format!(
                "; weights=False needs about {} (the fused kernel never forms the {n}×{n} weights)",
                attnlab_core::number::bytes(fused)
            )
        } else {
            String::new()
        };
        return Err(PyMemoryError::new_err(format!(
            "attention with n = {n}, d = {d}, {heads} head{}{} would need about {} of memory, over the limit of {} (raise it with max_memory=…){hint}",
            if heads == 1 { "" } else { "s" },
            if weights { ", weights=True" } else { "" },
            attnlab_core::number::bytes(need),
            attnlab_core::number::bytes(limit)
        )));
    }
    let x = matrix(py, "X", &x)?;
    let mut ws = Vec::new();
    for (name, w) in [("Wq", &wq), ("Wk", &wk), ("Wv", &wv)] {
        ws.push((name, matrix(py, name, w)?));
    }
    let wo = match &wo {
        Some(w) => Some(("Wo", matrix(py, "Wo", w)?)),
        None => None,
    };
    let dtype = x.dtype();
    if let Some((name, m)) = ws.iter().chain(wo.iter()).find(|(_, m)| m.dtype() != dtype) {
        return Err(PyTypeError::new_err(format!(
            "{name} has dtype {} but X has {dtype}; give every matrix the same dtype (e.g. {name}.astype(X.dtype))",
            m.dtype()
        )));
    }
    macro_rules! run_typed {
        ($variant:ident, $x:expr) => {{
            let take = |m: Matrix| match m {
                Matrix::$variant(a) => a,
                _ => unreachable!("dtypes were checked above"),
            };
            let mut it = ws.into_iter().map(|(_, m)| take(m));
            let w = [
                it.next().expect("Wq"),
                it.next().expect("Wk"),
                it.next().expect("Wv"),
            ];
            let wo = wo.map(|(_, m)| take(m));
            let (out, weights) = py
                .detach(|| forward($x, w, wo, heads, mask, weights))
                .map_err(|e| core_error(&e))?;
            (
                out.into_pyarray(py).into_any(),
                match weights {
                    Some(w) => w.into_pyarray(py).into_any(),
                    None => py.None().into_bound(py),
                },
            )
        }};
    }
    let (out, weights) = match x {
        Matrix::F32(x) => run_typed!(F32, x),
        Matrix::F64(x) => run_typed!(F64, x),
    };
    PyTuple::new(py, [out, weights])
}

/// `(inv_freq_f32, inv_freq, attention_factor)` of a frequency source given as the JSON of the
/// rope commands' source fields (`{"config": …}` or `{"preset": …}`), at sequence length
/// `context` when given (dynamic NTK and LongRoPE depend on it), else as a model builds them at
/// initialisation; for a model with several rope sets, the set of `layer_type` (`None`: the
/// primary, full-attention one).
#[pyfunction]
#[pyo3(signature = (source, context, layer_type=None))]
#[allow(clippy::type_complexity)]
fn rope_frequencies<'py>(
    py: Python<'py>,
    source: &str,
    context: Option<u64>,
    layer_type: Option<String>,
) -> PyResult<(Bound<'py, PyArray1<f32>>, Bound<'py, PyArray1<f64>>, f64)> {
    let src: FrequencySource = serde_json::from_str(source)
        .map_err(|e| PyValueError::new_err(format!("frequency source: {e}")))?;
    let freqs = py
        .detach(|| {
            let mut f = src.load(&Context::default(), None)?;
            if let Some(l) = context {
                f.at_context(Some(Count(l)), u64::MAX)?;
            }
            match (&layer_type, &f.config) {
                (Some(lt), Some(cfg)) => cfg.layer_frequencies(Some(lt), context),
                (Some(lt), None) => Err(Error::invalid(
                    "layer_type",
                    lt,
                    "a layer type of a config with several rope sets (not of a preset-free source)",
                )),
                (None, _) => Ok(f.freqs),
            }
        })
        .map_err(|e| core_error(&e))?;
    Ok((
        PyArray1::from_vec(py, freqs.inv_freq_f32),
        PyArray1::from_vec(py, freqs.inv_freq),
        freqs.attention_factor,
    ))
}

/// The names of the built-in model presets.
#[pyfunction]
fn rope_presets() -> Vec<&'static str> {
    attnlab_core::config::preset_names()
}

/// The extension module.
#[pymodule]
fn _attnlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("LayerError", m.py().get_type::<LayerError>())?;
    m.add_function(wrap_pyfunction!(check_layer, m)?)?;
    m.add_function(wrap_pyfunction!(run_command, m)?)?;
    m.add_function(wrap_pyfunction!(attention, m)?)?;
    m.add_function(wrap_pyfunction!(rope_frequencies, m)?)?;
    m.add_function(wrap_pyfunction!(rope_presets, m)?)?;
    m.add_function(wrap_pyfunction!(model::load_model, m)?)?;
    m.add_class::<model::PyModel>()?;
    m.add_class::<model::PyLayerFn>()?;
    Ok(())
}
