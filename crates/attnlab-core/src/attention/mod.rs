//! Scaled dot-product self-attention, exactly as the course's numpy program computes it.
//!
//! For an input `H` (n tokens × d): `Q = H·Wq`, `K = H·Wk`, `V = H·Wv`,
//! `A = softmax_row(Q·Kᵀ / √d_k)` and output `A·V`, where the row softmax subtracts each row's
//! maximum before exponentiating (`e = exp(s − max s)`, `e / Σe`). With several heads the
//! columns of `Q`, `K`, `V` are split into `h` equal blocks, each head attends with its own
//! `d_k = cols/h`, and the concatenated head outputs are multiplied by `Wo`.
//!
//! For `f32` and `f64` the forward runs a fused, blocked kernel (`kernel.rs`): tiles of 48
//! queries against all keys, register-blocked AVX2 + FMA micro-kernels (portable fallback with the
//! same bits), the vectorised [`exp`], the online softmax when only the output is asked for
//! ([`Attention::forward_output_only`], which never forms an n × n matrix), and both cores through
//! rayon's global pool. Tiles are fixed by n alone and each is computed by one thread, so results
//! are bit-identical for any number of threads. [`self_attention_reference`] is the same
//! computation with plain loops, kept readable and tested against the fast paths;
//! [`Attention::forward_unfused_with`] is the earlier ndarray-GEMM path that materialises every
//! head's scores.
//!
//! Rounding differs from the reference (fused multiply-adds, `x·(1/√d_k)` for `x/√d_k`, the
//! normalisation after the product with `V` in the online path), so results agree to a few ulps
//! times the problem's condition, not bit for bit; the tests state the bounds.

use ndarray::{s, Array2, ArrayView2, Axis};

pub use crate::float::Workspace;
use crate::{Error, Real, Result};

pub mod exp;
pub(crate) mod kernel;

/// The per-head query/key map of [`Attention::forward_with`] (RoPE's rotation by position):
/// given one head's `n × d_k` queries or keys, the mapped `n × d_k` block.
pub type QkHook<'a, T> = &'a dyn Fn(ArrayView2<T>) -> Result<Array2<T>>;

crate::choice! {
    /// Which key positions each query may attend to.
    #[derive(Default)]
    pub enum Mask("mask") {
        #[default]
        /// Every query attends to every key (unmasked; permutation equivariant).
        None = "none",
        /// Query `i` attends to keys `j ≤ i` only (scores for `j > i` are −∞ before the softmax).
        /// Row `i` always keeps its diagonal, so no row can be fully masked.
        Causal = "causal",
    }
}

/// What a forward pass returns: the output and the attention weights of every head.
#[derive(Debug, Clone, PartialEq)]
pub struct AttentionOutput<T> {
    /// The layer output (n × d_out).
    pub output: Array2<T>,
    /// Per head, the row-stochastic weight matrix `A` (n × n).
    pub weights: Vec<Array2<T>>,
}

/// The intermediates of one forward pass (see [`Attention::forward_traced`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Trace<T> {
    /// `Q = H·Wq` (n × heads·d_k), before the per-head map (RoPE).
    pub q: Array2<T>,
    /// `K = H·Wk`.
    pub k: Array2<T>,
    /// `V = H·Wv` (n × heads·d_v).
    pub v: Array2<T>,
    /// Each head's queries after the per-head map, concatenated (equal to `q` without a map).
    pub q_mapped: Array2<T>,
    /// Each head's keys after the per-head map, concatenated.
    pub k_mapped: Array2<T>,
    /// Per head, the scaled scores `Q_h·K_hᵀ/√d_k` with masked entries −∞ (before softmax).
    pub scores: Vec<Array2<T>>,
}

/// Row softmax in place: each row `s` becomes `exp(s − max s) / Σ exp(s − max s)`.
/// Entries equal to −∞ (masked) become exactly 0.
pub fn softmax_rows<T: Real>(scores: &mut Array2<T>) {
    for mut row in scores.rows_mut() {
        let max =
            row.iter().copied().fold(
                T::from_f64(f64::NEG_INFINITY),
                |m, v| if v > m { v } else { m },
            );
        let mut sum = T::zero();
        for v in row.iter_mut() {
            *v = (*v - max).exp();
            sum = sum + *v;
        }
        for v in row.iter_mut() {
            *v = *v / sum;
        }
    }
}

/// A self-attention layer: projections, heads, an optional output projection and a mask.
#[derive(Debug, Clone)]
pub struct Attention<T> {
    wq: Array2<T>,
    wk: Array2<T>,
    wv: Array2<T>,
    wo: Option<Array2<T>>,
    heads: usize,
    mask: Mask,
    /// `[Wq | Wk | Wv]` in the kernel's column panels (one GEMM projects all three).
    wqkv: Vec<T>,
    /// `Wo` in the kernel's column panels (empty without `Wo`).
    wo_panels: Vec<T>,
}

impl<T: Real> Attention<T> {
    /// A single-head layer without output projection — the course's `self_attention`.
    ///
    /// # Errors
    /// Shapes that do not fit (see [`Attention::multi_head`]).
    pub fn single(wq: Array2<T>, wk: Array2<T>, wv: Array2<T>, mask: Mask) -> Result<Self> {
        Self::multi_head(wq, wk, wv, None, 1, mask)
    }

    /// A layer with `heads` heads. `Wq`, `Wk` are d × d_qk and `Wv` is d × d_v with both d_qk and
    /// d_v divisible by `heads`; `Wo` (d_v × d_out) is required when `heads > 1`.
    ///
    /// # Errors
    /// Mismatched rows, indivisible head counts, a missing `Wo`, or zero heads.
    pub fn multi_head(
        wq: Array2<T>,
        wk: Array2<T>,
        wv: Array2<T>,
        wo: Option<Array2<T>>,
        heads: usize,
        mask: Mask,
    ) -> Result<Self> {
        let shape = |a: &Array2<T>| format!("{}×{}", a.nrows(), a.ncols());
        if heads == 0 {
            return Err(Error::invalid("heads", 0, "at least 1"));
        }
        let d = wq.nrows();
        if d == 0 || wq.ncols() == 0 || wv.ncols() == 0 {
            return Err(Error::shape(
                "attention projections",
                "non-empty matrices",
                format!("Wq {}, Wv {}", shape(&wq), shape(&wv)),
            ));
        }
        if wk.dim() != wq.dim() {
            // Blame the odd one out: a Wq whose rows differ from Wk's and Wv's (which agree).
            if wq.nrows() != wk.nrows() && wk.nrows() == wv.nrows() {
                return Err(Error::shape(
                    "Wq",
                    format!(
                        "{} rows (like Wk and Wv) × {} columns",
                        wk.nrows(),
                        wk.ncols()
                    ),
                    shape(&wq),
                ));
            }
            return Err(Error::shape("Wk", shape(&wq), shape(&wk)));
        }
        if wv.nrows() != d {
            return Err(Error::shape(
                "Wv",
                format!("{d} rows (like Wq)"),
                shape(&wv),
            ));
        }
        if !wq.ncols().is_multiple_of(heads) || !wv.ncols().is_multiple_of(heads) {
            return Err(Error::invalid(
                "heads",
                heads,
                format!(
                    "a divisor of the projection widths ({} and {})",
                    wq.ncols(),
                    wv.ncols()
                ),
            ));
        }
        match &wo {
            Some(o) if o.nrows() != wv.ncols() => {
                return Err(Error::shape(
                    "Wo",
                    format!("{} rows (Wv's columns)", wv.ncols()),
                    shape(o),
                ))
            }
            None if heads > 1 => {
                return Err(Error::invalid(
                    "Wo",
                    "missing",
                    "an output projection when heads > 1",
                ))
            }
            _ => {}
        }
        let cat = ndarray::concatenate(Axis(1), &[wq.view(), wk.view(), wv.view()])
            .map_err(|e| Error::shape("attention projections", "Wq, Wk, Wv with d rows", e))?;
        let wqkv = kernel::pack_panels(cat.view());
        let wo_panels = wo
            .as_ref()
            .map_or_else(Vec::new, |o| kernel::pack_panels(o.view()));
        Ok(Attention {
            wq,
            wk,
            wv,
            wo,
            heads,
            mask,
            wqkv,
            wo_panels,
        })
    }

    /// Input width d.
    pub fn dim(&self) -> usize {
        self.wq.nrows()
    }

    /// The mask.
    pub fn mask(&self) -> Mask {
        self.mask
    }

    /// The number of heads.
    pub fn heads(&self) -> usize {
        self.heads
    }

    /// Forward pass on `H` (n × d), returning the output and every head's weights `A`.
    ///
    /// Per head `h`: `A_h = softmax_row(Q_h·K_hᵀ/√d_k)` (with −∞ above the diagonal under the causal
    /// mask) and `O_h = A_h·V_h`; the output is `[O_1 … O_h]·Wo` (or `O_1` without `Wo`). Forms the
    /// n × n matrices because it returns them; use [`Attention::forward_output_only`] when only the
    /// output is needed.
    ///
    /// ```
    /// use attnlab_core::attention::{Attention, Mask};
    /// use ndarray::{array, Array2};
    /// let eye = Array2::<f64>::eye(2);
    /// let layer = Attention::single(eye.clone(), eye.clone(), eye.clone(), Mask::None).unwrap();
    /// let out = layer.forward(eye.view()).unwrap();
    /// // Scores are I/√2; each weight row is a softmax of (1/√2, 0).
    /// let w = 1.0 / (1.0 + (-1.0f64 / 2f64.sqrt()).exp());
    /// assert!((out.weights[0][[0, 0]] - w).abs() < 1e-15);
    /// ```
    ///
    /// # Errors
    /// `H` has the wrong width or no rows.
    pub fn forward(&self, h: ArrayView2<T>) -> Result<AttentionOutput<T>> {
        self.run(h, None, true)
    }

    /// Forward pass where each head's queries and keys (n × d_k) are first mapped by `qk` —
    /// the hook rotary position embeddings use. Values are never passed to `qk`. Returns the
    /// output and the weights, as [`Attention::forward`].
    ///
    /// # Errors
    /// `H` has the wrong width or no rows, or `qk` fails or returns the wrong shape.
    pub fn forward_with(
        &self,
        h: ArrayView2<T>,
        qk: &dyn Fn(ArrayView2<T>) -> Result<Array2<T>>,
    ) -> Result<AttentionOutput<T>> {
        self.run(h, Some(qk), true)
    }

    /// The output of [`Attention::forward`] without the weights: the fused online-softmax kernel,
    /// which keeps per tile only a 48 × 256 block of scores and never forms an n × n matrix.
    ///
    /// Per query row `i` and key blocks `b` of 256 keys in order: `m ← max(m, max_{j∈b} s_ij)`,
    /// `l ← e^{(m_old−m)}·l + Σ_{j∈b} e^{(s_ij−m)}`, `o ← e^{(m_old−m)}·o + Σ_{j∈b} e^{(s_ij−m)}·v_j`
    /// (scores `s_ij = q_i·k_j/√d_k`), then `o/l` — the same softmax average as `A·V`, rounded
    /// differently (within a few ulps times the condition; see the tests).
    ///
    /// ```
    /// use attnlab_core::attention::{Attention, Mask};
    /// use ndarray::Array2;
    /// let eye = Array2::<f64>::eye(2);
    /// let layer = Attention::single(eye.clone(), eye.clone(), eye.clone(), Mask::Causal).unwrap();
    /// let out = layer.forward_output_only(eye.view()).unwrap();
    /// assert_eq!(out.row(0).to_vec(), vec![1.0, 0.0]); // the first query sees only itself
    /// ```
    ///
    /// # Errors
    /// `H` has the wrong width or no rows.
    pub fn forward_output_only(&self, h: ArrayView2<T>) -> Result<Array2<T>> {
        Ok(self.run(h, None, false)?.output)
    }

    /// [`Attention::forward_output_only`] with the query/key hook of [`Attention::forward_with`].
    ///
    /// # Errors
    /// `H` has the wrong width or no rows, or `qk` fails or returns the wrong shape.
    pub fn forward_output_only_with(
        &self,
        h: ArrayView2<T>,
        qk: &dyn Fn(ArrayView2<T>) -> Result<Array2<T>>,
    ) -> Result<Array2<T>> {
        Ok(self.run(h, Some(qk), false)?.output)
    }

    /// Rows `rows` of [`Attention::forward_output_only_with`]'s output (`rows.len() × d_out`, in
    /// the order given; `qk = None` for no hook): the keys and values of all n positions, the
    /// queries of those rows only, so the attention costs `rows.len()/n` of the whole pass.
    /// A row's result does not depend on which rows are computed with it (every operation on a
    /// query is its own lane's), so each is bit-identical to that row of the whole output;
    /// under the causal mask the whole output is computed and the rows taken from it.
    ///
    /// ```
    /// use attnlab_core::attention::{Attention, Mask};
    /// use ndarray::Array2;
    /// let h = Array2::from_shape_fn((5, 2), |(i, j)| (i * 2 + j) as f64 / 7.0);
    /// let eye = Array2::<f64>::eye(2);
    /// let layer = Attention::single(eye.clone(), eye.clone(), eye, Mask::None).unwrap();
    /// let all = layer.forward_output_only(h.view()).unwrap();
    /// let some = layer.forward_rows(h.view(), &[4, 1], None).unwrap();
    /// assert_eq!(some.row(0), all.row(4));
    /// assert_eq!(some.row(1), all.row(1));
    /// ```
    ///
    /// # Errors
    /// As [`Attention::forward_output_only_with`]; a row ≥ n.
    pub fn forward_rows(
        &self,
        h: ArrayView2<T>,
        rows: &[usize],
        qk: Option<QkHook<'_, T>>,
    ) -> Result<Array2<T>> {
        self.check_input(h)?;
        let n = h.nrows();
        if let Some(&r) = rows.iter().find(|&&r| r >= n) {
            return Err(Error::invalid(
                "output row",
                r,
                format!("0..{n} (the sequence length)"),
            ));
        }
        with_cached_workspace(|ws| {
            if self.mask == Mask::Causal {
                let (_, dout) = fused_forward(self, h, qk, None, None, ws)?;
                let all =
                    ArrayView2::from_shape((n, dout), ws.result(n * dout)).expect("n × d_out");
                return Ok(all.select(ndarray::Axis(0), rows));
            }
            let shape = fused_forward(self, h, qk, None, Some(rows), ws)?;
            let len = shape.0 * shape.1;
            Ok(Array2::from_shape_vec(shape, ws.result(len).to_vec()).expect("rows × d_out"))
        })
    }

    /// The earlier implementation: ndarray's GEMM (matrixmultiply) for every product, each head's
    /// n × n scores materialised and softmaxed with `Real::exp`. Kept as an independent second
    /// implementation for tests and as the benchmark baseline.
    ///
    /// # Errors
    /// `H` has the wrong width or no rows, or `qk` fails.
    pub fn forward_unfused_with(
        &self,
        h: ArrayView2<T>,
        qk: &dyn Fn(ArrayView2<T>) -> Result<Array2<T>>,
    ) -> Result<AttentionOutput<T>> {
        self.unfused(h, qk)
    }

    /// The kernel's forward pass with weights ([`Attention::forward_with`]) and every
    /// intermediate: Q, K, V before and after the per-head map, and each head's scaled masked
    /// scores — the matrices a student computes by hand. The intermediates are evaluated with
    /// the operations of the unfused pass ([`Attention::forward_unfused_with`]: ndarray's
    /// products, `x/√d_k`), so they agree with the kernel's own to rounding (a few ulps; the
    /// order of the sums differs); the output and weights are the kernel's.
    ///
    /// # Errors
    /// As [`Attention::forward_unfused_with`].
    pub fn forward_traced(
        &self,
        h: ArrayView2<T>,
        qk: &dyn Fn(ArrayView2<T>) -> Result<Array2<T>>,
    ) -> Result<(AttentionOutput<T>, Trace<T>)> {
        let out = self.forward_with(h, qk)?;
        Ok((out, self.trace(h, qk, true)?))
    }

    /// The fused output ([`Attention::forward_output_only_with`]) and the intermediates of
    /// [`Attention::forward_traced`] without the n × n scores (`scores` is empty): what is
    /// shown when n is too large for a person to read the weights.
    ///
    /// # Errors
    /// As [`Attention::forward_unfused_with`].
    pub fn forward_projected(
        &self,
        h: ArrayView2<T>,
        qk: &dyn Fn(ArrayView2<T>) -> Result<Array2<T>>,
    ) -> Result<(Array2<T>, Trace<T>)> {
        let out = self.forward_output_only_with(h, qk)?;
        Ok((out, self.trace(h, qk, false)?))
    }

    /// The intermediates of the unfused pass (same operations, so the same bits), with each
    /// head's scores when `scores`.
    fn trace(
        &self,
        h: ArrayView2<T>,
        qk: &dyn Fn(ArrayView2<T>) -> Result<Array2<T>>,
        scores: bool,
    ) -> Result<Trace<T>> {
        self.check_input(h)?;
        // The three products side by side on the pool (each the same operations as alone).
        let (q, (k, v)) = rayon::join(
            || h.dot(&self.wq),
            || rayon::join(|| h.dot(&self.wk), || h.dot(&self.wv)),
        );
        let dk = q.ncols() / self.heads;
        let scale = T::from_f64(dk as f64).sqrt();
        let mut t = Trace {
            q_mapped: Array2::zeros(q.dim()),
            k_mapped: Array2::zeros(k.dim()),
            q: Array2::zeros((0, 0)),
            k: Array2::zeros((0, 0)),
            v,
            scores: Vec::new(),
        };
        for head in 0..self.heads {
            let cols = s![.., head * dk..(head + 1) * dk];
            let qh = qk(q.slice(cols))?;
            let kh = qk(k.slice(cols))?;
            if qh.dim() != (h.nrows(), dk) || kh.dim() != (h.nrows(), dk) {
                return Err(Error::shape(
                    "query/key hook output",
                    format!("{}×{dk} (its input's shape)", h.nrows()),
                    format!("{}×{}", qh.nrows(), qh.ncols()),
                ));
            }
            if scores {
                let mut sc = qh.dot(&kh.t());
                sc.mapv_inplace(|x| x / scale);
                if self.mask == Mask::Causal {
                    for ((i, j), x) in sc.indexed_iter_mut() {
                        if j > i {
                            *x = T::from_f64(f64::NEG_INFINITY);
                        }
                    }
                }
                t.scores.push(sc);
            }
            t.q_mapped.slice_mut(cols).assign(&qh);
            t.k_mapped.slice_mut(cols).assign(&kh);
        }
        t.q = q;
        t.k = k;
        Ok(t)
    }

    fn unfused(
        &self,
        h: ArrayView2<T>,
        qk: &dyn Fn(ArrayView2<T>) -> Result<Array2<T>>,
    ) -> Result<AttentionOutput<T>> {
        self.check_input(h)?;
        let n = h.nrows();
        let q = h.dot(&self.wq);
        let k = h.dot(&self.wk);
        let v = h.dot(&self.wv);
        let dk = q.ncols() / self.heads;
        let dv = v.ncols() / self.heads;
        let scale = T::from_f64(dk as f64).sqrt();
        let mut weights = Vec::with_capacity(self.heads);
        let mut concat = Array2::<T>::zeros((n, v.ncols()));
        for head in 0..self.heads {
            let qh = qk(q.slice(s![.., head * dk..(head + 1) * dk]))?;
            let kh = qk(k.slice(s![.., head * dk..(head + 1) * dk]))?;
            let mut scores = qh.dot(&kh.t());
            scores.mapv_inplace(|x| x / scale);
            if self.mask == Mask::Causal {
                for ((i, j), x) in scores.indexed_iter_mut() {
                    if j > i {
                        *x = T::from_f64(f64::NEG_INFINITY);
                    }
                }
            }
            softmax_rows(&mut scores);
            let out = scores.dot(&v.slice(s![.., head * dv..(head + 1) * dv]));
            concat
                .slice_mut(s![.., head * dv..(head + 1) * dv])
                .assign(&out);
            weights.push(scores);
        }
        let output = match &self.wo {
            Some(wo) => concat.dot(wo),
            None => concat,
        };
        Ok(AttentionOutput { output, weights })
    }

    fn check_input(&self, h: ArrayView2<T>) -> Result<()> {
        let (n, d) = h.dim();
        if n == 0 {
            return Err(Error::invalid("sequence length", 0, "at least 1 token"));
        }
        if d != self.dim() {
            return Err(Error::shape(
                "attention input H",
                format!("n×{} (the projections' rows)", self.dim()),
                format!("{n}×{d}"),
            ));
        }
        Ok(())
    }

    /// The fused kernel (every [`Real`] has one).
    fn run(
        &self,
        h: ArrayView2<T>,
        qk: Option<QkHook<'_, T>>,
        weights: bool,
    ) -> Result<AttentionOutput<T>> {
        self.check_input(h)?;
        let mut list = Vec::new();
        let output = with_cached_workspace(|ws| {
            let shape = fused_forward(self, h, qk, weights.then_some(&mut list), None, ws)?;
            let len = shape.0 * shape.1;
            Ok(Array2::from_shape_vec(shape, ws.result(len).to_vec()).expect("n × d_out"))
        })?;
        Ok(AttentionOutput {
            output,
            weights: list,
        })
    }

    /// The output of [`Attention::forward_output_only_with`] (or without a hook, `qk = None`)
    /// into the reusable `ws`, returned as a view of it: repeated calls allocate nothing once
    /// `ws` has grown to the largest input (without a hook). The same bits as
    /// [`Attention::forward_output_only`].
    ///
    /// ```
    /// use attnlab_core::attention::{Attention, Mask, Workspace};
    /// use ndarray::Array2;
    /// let eye = Array2::<f32>::eye(4);
    /// let layer = Attention::single(eye.clone(), eye.clone(), eye.clone(), Mask::None).unwrap();
    /// let mut ws = Workspace::new();
    /// let first = layer.forward_output_into(eye.view(), None, &mut ws).unwrap().to_owned();
    /// assert_eq!(first, layer.forward_output_only(eye.view()).unwrap());
    /// ```
    ///
    /// # Errors
    /// `H` has the wrong width or no rows, or `qk` fails or returns the wrong shape.
    pub fn forward_output_into<'w>(
        &self,
        h: ArrayView2<T>,
        qk: Option<QkHook<'_, T>>,
        ws: &'w mut Workspace<T>,
    ) -> Result<ArrayView2<'w, T>> {
        self.check_input(h)?;
        let shape = fused_forward(self, h, qk, None, None, ws)?;
        Ok(ArrayView2::from_shape(shape, ws.result(shape.0 * shape.1)).expect("n × d_out"))
    }
}

/// Largest workspace (bytes of all its buffers) a thread keeps between calls: forwards up to
/// (8192, 128) f64 in one head (58 MB) reuse it. Allocating and first-touching the buffers
/// cost a fifth of a (256, 64) call, and on this VM a sixth of a (4096, 128) f64 one (page
/// faults: 105 against 125 ms on two threads, min of 5 alternating runs); a longer sequence's
/// buffers are freed with its call, so no memory outlives a request by more than this.
const CACHED_WORKSPACE_BYTES: usize = 64 << 20;

/// Runs `f` with this thread's cached [`Workspace`] for `T` (`Float::with_workspace`), or a
/// fresh one when it is in use (a query/key hook, or a rayon task stolen inside a forward,
/// calling a forward again). The buffers are kept afterwards unless they exceed
/// [`CACHED_WORKSPACE_BYTES`]. The bits do not depend on which workspace ran: every buffer is
/// overwritten before it is read.
fn with_cached_workspace<T: Real, R>(f: impl FnOnce(&mut Workspace<T>) -> R) -> R {
    T::with_workspace(|cell| {
        let Ok(mut ws) = cell.try_borrow_mut() else {
            return f(&mut Workspace::new());
        };
        let r = f(&mut ws);
        if ws.bytes() > CACHED_WORKSPACE_BYTES {
            *ws = Workspace::new();
        }
        r
    })
}

/// `v` resized to exactly `len` elements (capacity kept: no allocation once large enough).
fn buffer<F: Real>(v: &mut Vec<F>, len: usize) -> &mut [F] {
    if v.len() != len {
        v.resize(len, F::zero());
    }
    &mut v[..]
}

/// Work (multiply-adds) below which a forward runs on the calling thread alone: handing tiles
/// to the other threads costs more than it saves (about 40 µs of one core).
const SMALL_WORK: usize = 1 << 21;

/// The fused forward for a kernel type (see [`Attention::forward`] for the mathematics): one
/// GEMM for `H·[Wq | Wk | Wv]` whose row blocks pack every head's keys and values as they are
/// computed, then heads × tiles tasks in parallel (or on the calling thread for small
/// problems), each writing its own block; the output projection last. With `weights`, each
/// head's `A` is formed and returned (and `A·V` is computed from it); without, the online
/// softmax never forms it.
/// With `rows` (unmasked, no weights), only those query rows are attended and projected out:
/// the result is `rows.len() × d_out`.
fn fused_forward<F: Real>(
    layer: &Attention<F>,
    h: ArrayView2<F>,
    qk: Option<QkHook<'_, F>>,
    weights: Option<&mut Vec<Array2<F>>>,
    rows: Option<&[usize]>,
    ws: &mut Workspace<F>,
) -> Result<(usize, usize)> {
    use rayon::prelude::*;
    debug_assert!(rows.is_none() || (weights.is_none() && layer.mask == Mask::None));
    let n = h.nrows();
    // The query rows attended: all n, or the given ones gathered (`nq` of them).
    let nq = rows.map_or(n, <[usize]>::len);
    let heads = layer.heads;
    let (dq, dvt) = (layer.wq.ncols(), layer.wv.ncols());
    let (dk, dv) = (dq / heads, dvt / heads);
    let width = 2 * dq + dvt;
    let work = nq * n * (dk + dv) * heads + n * layer.dim() * width;
    let parallel = work >= SMALL_WORK && rayon::current_num_threads() > 1;
    let Workspace {
        qkv,
        kp,
        vtp,
        hooked,
        gathered,
        tiles,
        concat,
        out,
        in_tiles,
    } = ws;
    let qkv = buffer(qkv, n * width);
    let (klen, vlen) = (kernel::packed_len(n, dk), kernel::packed_len(dv, n));
    let kp = buffer(kp, heads * klen);
    let vtp = buffer(vtp, heads * vlen);
    let has_hook = qk.is_some();
    // Each block of projected rows packs its keys (unless the hook will replace them) and its
    // values into every head's K and Vᵀ packings as soon as it is computed: no separate
    // packing phase, and the rows are read while in cache.
    let (kptr, vptr) = (
        kernel::Shared(kp.as_mut_ptr()),
        kernel::Shared(vtp.as_mut_ptr()),
    );
    let pack_block = |r0: usize, block: &[F]| {
        let b = ArrayView2::from_shape((block.len() / width, width), block).expect("rows × width");
        for hd in 0..heads {
            let (k0, v0) = (dq + hd * dk, 2 * dq + hd * dv);
            // SAFETY: blocks start at multiples of BQ (so of MR) and cover disjoint rows, so each
            // writes only its own keys' ranges of head hd's packings, which outlive the product.
            unsafe {
                if !has_hook {
                    let out = kptr.offset(hd * klen);
                    kernel::pack_rows_at(b.slice(s![.., k0..k0 + dk]), r0, out);
                }
                let out = vptr.offset(hd * vlen);
                kernel::pack_vt_rows_at(b.slice(s![.., v0..v0 + dv]), r0, n, out);
            }
        }
    };
    kernel::matmul_then(h, &layer.wqkv, width, qkv, parallel, &pack_block);
    let all = ArrayView2::from_shape((n, width), &*qkv).expect("n × width");
    let (qv, kv) = (
        all.slice_move(s![.., ..dq]),
        all.slice_move(s![.., dq..2 * dq]),
    );
    // The hook runs here, sequentially (it need not be thread-safe); its queries go to
    // `hooked`, its keys straight into the packed buffer.
    let hooked = buffer(hooked, if qk.is_some() { heads * n * dk } else { 0 });
    if let Some(f) = qk {
        for hd in 0..heads {
            let cols = s![.., hd * dk..(hd + 1) * dk];
            let qh = hooked_view(f, qv.slice(cols), n, dk)?;
            hooked[hd * n * dk..(hd + 1) * n * dk]
                .iter_mut()
                .zip(qh.iter())
                .for_each(|(d, &v)| *d = v);
            let kh = hooked_view(f, kv.slice(cols), n, dk)?;
            kernel::pack_a_into(kh.view(), &mut kp[hd * klen..(hd + 1) * klen]);
        }
    }
    let inv_scale = F::one() / F::from_f64(dk as f64).sqrt();
    let (kp, vtp, hooked) = (&*kp, &*vtp, &*hooked);
    let query = |hd: usize| {
        if has_hook {
            ArrayView2::from_shape((n, dk), &hooked[hd * n * dk..(hd + 1) * n * dk])
                .expect("n × dk")
        } else {
            qv.slice(s![.., hd * dk..(hd + 1) * dk])
        }
    };
    // The chosen rows' queries, head by head (nq × dk each).
    let gathered = buffer(gathered, if rows.is_some() { heads * nq * dk } else { 0 });
    if let Some(rows) = rows {
        for (hd, g) in gathered.chunks_mut(nq * dk.max(1)).enumerate().take(heads) {
            let q = query(hd);
            for (dst, &r) in g.chunks_mut(dk.max(1)).zip(rows) {
                dst.iter_mut().zip(q.row(r)).for_each(|(d, &v)| *d = v);
            }
        }
    }
    let gathered = &*gathered;
    let head_op = |hd: usize| kernel::Head {
        q: if rows.is_some() {
            ArrayView2::from_shape((nq, dk), &gathered[hd * nq * dk..(hd + 1) * nq * dk])
                .expect("nq × dk")
        } else {
            query(hd)
        },
        q0: 0,
        kp: &kp[hd * klen..(hd + 1) * klen],
        vtp: &vtp[hd * vlen..(hd + 1) * vlen],
        n,
        dk,
        dv,
        causal: layer.mask == Mask::Causal,
        inv_scale,
    };
    // Queries per tile: BQ, or for one head fewer where that balances the threads (the same
    // bits).
    let tw = kernel::tile_width(nq, heads, parallel);
    // Without weights, a task is a pass of `per` tiles (several where one head's keys and
    // values exceed 8 MiB: each key block then serves them all).
    let per = if weights.is_some() {
        1
    } else {
        kernel::tiles_per_pass::<F>(n, dk, dv)
    };
    let ntiles = nq.div_ceil(tw * per);
    // Task (head, pass) writes its rows × dv block at (head·ntiles + pass)·per·tw·dv of
    // `tiles` (each head's part padded to whole passes, so the chunks of per·tw·dv are the
    // tasks).
    let span = ntiles * tw * per;
    let tiles = buffer(tiles, heads * span * dv);
    match weights {
        Some(list) => {
            let mut mats: Vec<Vec<F>> = (0..heads).map(|_| vec![F::zero(); n * n]).collect();
            let tasks: Vec<(usize, usize, &mut [F], &mut [F])> = mats
                .iter_mut()
                .zip(tiles.chunks_mut(span * dv))
                .enumerate()
                .flat_map(|(hd, (a, o))| {
                    a.chunks_mut(tw * n)
                        .zip(o.chunks_mut(tw * dv))
                        .enumerate()
                        .map(move |(t, (ab, ob))| (hd, t, ab, ob))
                })
                .collect();
            let run = |(hd, t, ab, ob): (usize, usize, &mut [F], &mut [F])| {
                let i0 = t * tw;
                kernel::weights_tile(&head_op(hd), i0, i0 + ab.len() / n, ab, ob);
            };
            if parallel {
                tasks.into_par_iter().for_each(run);
            } else {
                tasks.into_iter().for_each(run);
            }
            list.extend(
                mats.into_iter()
                    .map(|a| Array2::from_shape_vec((n, n), a).expect("n × n")),
            );
        }
        None => {
            let run = |(task, ob): (usize, &mut [F])| {
                let (hd, t) = (task / ntiles, task % ntiles);
                let i0 = t * tw * per;
                kernel::forward_tile(&head_op(hd), i0, (i0 + tw * per).min(nq), tw, ob);
            };
            if parallel {
                tiles
                    .par_chunks_mut(tw * per * dv)
                    .enumerate()
                    .for_each(run);
            } else {
                tiles.chunks_mut(tw * per * dv).enumerate().for_each(run);
            }
        }
    }
    // Gather the heads side by side: concat[i, hd·dv + c] = tiles[(hd·span + i)·dv + c].
    let direct = heads == 1 && layer.wo.is_none();
    *in_tiles = direct;
    let concat = buffer(concat, if heads == 1 { 0 } else { nq * dvt });
    let src: &[F] = if heads == 1 {
        &tiles[..nq * dv] // one head's tiles are its rows in order
    } else {
        for (i, row) in concat.chunks_mut(dvt).enumerate() {
            for hd in 0..heads {
                row[hd * dv..(hd + 1) * dv]
                    .copy_from_slice(&tiles[(hd * span + i) * dv..(hd * span + i + 1) * dv]);
            }
        }
        concat
    };
    match &layer.wo {
        Some(wo) => {
            let dout = wo.ncols();
            let o = buffer(out, nq * dout);
            let cv = ArrayView2::from_shape((nq, dvt), src).expect("nq × dv");
            kernel::matmul_into(cv, &layer.wo_panels, dout, o, parallel);
            Ok((nq, dout))
        }
        None => {
            // One head (several need Wo): the result stays in `tiles` (`in_tiles`).
            debug_assert!(direct);
            Ok((nq, dvt))
        }
    }
}

/// Grouped-query attention on given projections, on the fused kernel: `q` is n × (heads·dk),
/// `k` is n × (kv_heads·dk), `v` is n × (kv_heads·dv); query head `h` attends with key/value head
/// `h / (heads / kv_heads)` (each K/V head shared by a group of consecutive query heads, as
/// Llama-family models do). Returns the heads' outputs concatenated, n × (heads·dv), without an
/// output projection. Scores are `q·k/√dk`; with [`Mask::Causal`] query `i` sees keys `j ≤ i`.
///
/// ```
/// use attnlab_core::attention::{grouped_attention, Mask};
/// use ndarray::array;
/// let q = array![[1.0f64, 0.0], [0.0, 1.0]];
/// let out = grouped_attention(q.view(), q.view(), q.view(), 1, 1, Mask::Causal).unwrap();
/// assert_eq!(out.row(0).to_vec(), vec![1.0, 0.0]); // the first query sees only itself
/// ```
///
/// # Errors
/// Zero heads, `heads` not a multiple of `kv_heads`, widths not divisible by the head counts, or
/// row counts that differ.
pub fn grouped_attention<T: Real>(
    q: ArrayView2<T>,
    k: ArrayView2<T>,
    v: ArrayView2<T>,
    heads: usize,
    kv_heads: usize,
    mask: Mask,
) -> Result<Array2<T>> {
    // Every query with every key: the rest (V's rows, the widths) is checked by the rows form.
    if q.nrows() != k.nrows() {
        return Err(Error::shape(
            "grouped attention",
            "Q, K, V with the same number (≥ 1) of rows",
            format!("{}, {}, {} rows", q.nrows(), k.nrows(), v.nrows()),
        ));
    }
    grouped_attention_rows(q, k, v, heads, kv_heads, mask, 0)
}

/// [`grouped_attention`] for the queries of positions `q0 … q0 + q.nrows() − 1` only, against
/// all `n` keys and values (`q0 + q.nrows() ≤ n`): the rows of the full result for those
/// positions, bit for bit (each query row's online softmax runs over the same key blocks in
/// the same order whichever other rows are computed). A causal model's last position needs
/// only its own query: `q0 = n − 1`.
///
/// ```
/// use attnlab_core::attention::{grouped_attention, grouped_attention_rows, Mask};
/// use ndarray::{array, s};
/// let x = array![[1.0f64, 0.0], [0.0, 1.0], [1.0, 1.0]];
/// let all = grouped_attention(x.view(), x.view(), x.view(), 1, 1, Mask::Causal).unwrap();
/// let last = grouped_attention_rows(x.slice(s![2.., ..]), x.view(), x.view(), 1, 1, Mask::Causal, 2).unwrap();
/// assert_eq!(last.row(0), all.row(2));
/// ```
///
/// # Errors
/// As [`grouped_attention`], or query rows past the keys.
pub fn grouped_attention_rows<T: Real>(
    q: ArrayView2<T>,
    k: ArrayView2<T>,
    v: ArrayView2<T>,
    heads: usize,
    kv_heads: usize,
    mask: Mask,
    q0: usize,
) -> Result<Array2<T>> {
    let n = k.nrows();
    if heads == 0 || kv_heads == 0 || !heads.is_multiple_of(kv_heads) {
        return Err(Error::invalid(
            "head counts",
            format!("{heads} query heads, {kv_heads} key/value heads"),
            "at least 1 of each, query heads a multiple of key/value heads",
        ));
    }
    if n == 0 || v.nrows() != n || q.nrows() == 0 || q0 + q.nrows() > n {
        return Err(Error::shape(
            "grouped attention",
            "K and V with the same number n ≥ 1 of rows, Q with 1 … n − q0",
            format!("Q {} from {q0}, K {}, V {} rows", q.nrows(), n, v.nrows()),
        ));
    }
    if !q.ncols().is_multiple_of(heads)
        || !k.ncols().is_multiple_of(kv_heads)
        || !v.ncols().is_multiple_of(kv_heads)
        || q.ncols() / heads != k.ncols() / kv_heads
    {
        return Err(Error::shape(
            "grouped attention",
            format!("Q n×({heads}·dk), K n×({kv_heads}·dk), V n×({kv_heads}·dv)"),
            format!("Q n×{}, K n×{}, V n×{}", q.ncols(), k.ncols(), v.ncols()),
        ));
    }
    // `Real` requires the kernel's `Float`, so the fused kernel runs in `T` itself.
    Ok(grouped_fused::<T>(q, k, v, heads, kv_heads, mask, q0))
}

fn grouped_fused<F: Real>(
    q: ArrayView2<F>,
    k: ArrayView2<F>,
    v: ArrayView2<F>,
    heads: usize,
    kv_heads: usize,
    mask: Mask,
    q0: usize,
) -> Array2<F> {
    use rayon::prelude::*;
    let n = k.nrows();
    let nq = q.nrows();
    let dk = q.ncols() / heads;
    let dv = v.ncols() / kv_heads;
    let group = heads / kv_heads;
    let (klen, vlen) = (kernel::packed_len(n, dk), kernel::packed_len(dv, n));
    let mut kp = vec![F::zero(); kv_heads * klen];
    let mut vtp = vec![F::zero(); kv_heads * vlen];
    kp.par_chunks_mut(klen)
        .zip(vtp.par_chunks_mut(vlen))
        .enumerate()
        .for_each(|(g, (kb, vb))| {
            kernel::pack_a_into(k.slice(s![.., g * dk..(g + 1) * dk]), kb);
            kernel::pack_a_into(v.slice(s![.., g * dv..(g + 1) * dv]).t(), vb);
        });
    let inv_scale = F::one() / F::from_f64(dk as f64).sqrt();
    let (kp, vtp) = (&kp[..], &vtp[..]);
    let head_op = |hd: usize| {
        let g = hd / group;
        kernel::Head {
            q: q.slice(s![.., hd * dk..(hd + 1) * dk]),
            q0,
            kp: &kp[g * klen..(g + 1) * klen],
            vtp: &vtp[g * vlen..(g + 1) * vlen],
            n,
            dk,
            dv,
            causal: mask == Mask::Causal,
            inv_scale,
        }
    };
    let work = nq * n * (dk + dv) * heads;
    let parallel = work >= SMALL_WORK;
    let tw = kernel::tile_width(nq, heads, parallel);
    let ntiles = nq.div_ceil(tw);
    let mut tiles = vec![F::zero(); heads * nq * dv];
    let run = |(task, ob): (usize, &mut [F])| {
        let (hd, t) = (task / ntiles, task % ntiles);
        let i0 = q0 + t * tw;
        kernel::forward_tile(&head_op(hd), i0, (i0 + tw).min(q0 + nq), tw, ob);
    };
    let chunks = tiles
        .chunks_mut(nq * dv)
        .flat_map(|o| o.chunks_mut(tw * dv));
    if parallel {
        chunks
            .enumerate()
            .collect::<Vec<_>>()
            .into_par_iter()
            .for_each(run);
    } else {
        chunks.enumerate().for_each(run);
    }
    let mut concat = Array2::<F>::zeros((nq, heads * dv));
    for (i, mut row) in concat.rows_mut().into_iter().enumerate() {
        for hd in 0..heads {
            row.slice_mut(s![hd * dv..(hd + 1) * dv])
                .iter_mut()
                .zip(&tiles[(hd * nq + i) * dv..(hd * nq + i + 1) * dv])
                .for_each(|(d, &x)| *d = x);
        }
    }
    concat
}

/// Applies the query/key hook to one head's `n × dk` block and checks the shape it returns.
fn hooked_view<F: Real>(
    f: &dyn Fn(ArrayView2<F>) -> Result<Array2<F>>,
    x: ArrayView2<F>,
    n: usize,
    dk: usize,
) -> Result<Array2<F>> {
    let y = f(x)?;
    if y.dim() != (n, dk) {
        return Err(Error::shape(
            "query/key hook output",
            format!("{n}×{dk} (its input's shape)"),
            format!("{}×{}", y.nrows(), y.ncols()),
        ));
    }
    Ok(y)
}

/// The course's `self_attention(X, Wq, Wk, Wv)` (one head, no mask) written with plain loops:
/// the readable definition the GEMM path is tested against.
///
/// # Errors
/// Shapes that do not fit.
pub fn self_attention_reference<T: Real>(
    x: ArrayView2<T>,
    wq: ArrayView2<T>,
    wk: ArrayView2<T>,
    wv: ArrayView2<T>,
    mask: Mask,
) -> Result<AttentionOutput<T>> {
    let (n, d) = x.dim();
    if n == 0 || d != wq.nrows() || wk.dim() != wq.dim() || wv.nrows() != d {
        return Err(Error::shape(
            "self_attention_reference",
            "X n×d, Wq/Wk d×dk, Wv d×dv",
            format!(
                "X {:?}, Wq {:?}, Wk {:?}, Wv {:?}",
                x.dim(),
                wq.dim(),
                wk.dim(),
                wv.dim()
            ),
        ));
    }
    let matmul = |a: ArrayView2<T>, b: ArrayView2<T>| {
        let mut c = Array2::<T>::zeros((a.nrows(), b.ncols()));
        for i in 0..a.nrows() {
            for j in 0..b.ncols() {
                let mut acc = T::zero();
                for t in 0..a.ncols() {
                    acc = acc + a[[i, t]] * b[[t, j]];
                }
                c[[i, j]] = acc;
            }
        }
        c
    };
    let q = matmul(x, wq);
    let k = matmul(x, wk);
    let v = matmul(x, wv);
    let scale = T::from_f64(q.ncols() as f64).sqrt();
    let mut scores = matmul(q.view(), k.t());
    for ((i, j), s) in scores.indexed_iter_mut() {
        *s = if mask == Mask::Causal && j > i {
            T::from_f64(f64::NEG_INFINITY)
        } else {
            *s / scale
        };
    }
    softmax_rows(&mut scores);
    let output = matmul(scores.view(), v.view());
    Ok(AttentionOutput {
        output,
        weights: vec![scores],
    })
}

/// Mean over positions: the order-blind readout (n × d → 1 × d).
pub fn mean_readout<T: Real>(h: ArrayView2<T>) -> Array2<T> {
    let n = T::from_f64(h.nrows() as f64);
    h.sum_axis(Axis(0)).mapv(|x| x / n).insert_axis(Axis(0))
}

/// Row `i` of `h`: a readout that selects a position (n × d → 1 × d).
///
/// # Errors
/// `i ≥ n`.
pub fn row_readout<T: Real>(h: ArrayView2<T>, i: usize) -> Result<Array2<T>> {
    if i >= h.nrows() {
        return Err(Error::invalid(
            "readout row",
            i,
            format!("0..{} (the sequence length)", h.nrows()),
        ));
    }
    Ok(h.slice(s![i..i + 1, ..]).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Gaussian, StdGaussian};

    fn random_layer(d: usize, seed: u64, mask: Mask) -> (Attention<f64>, Array2<f64>) {
        let mut g = StdGaussian::new(seed);
        let (wq, wk, wv) = (g.randn(d, d), g.randn(d, d), g.randn(d, d));
        let x = g.randn(7, d);
        (Attention::single(wq, wk, wv, mask).unwrap(), x)
    }

    #[test]
    fn gemm_path_matches_loop_reference() {
        for mask in [Mask::None, Mask::Causal] {
            let mut g = StdGaussian::new(3);
            let (wq, wk, wv, x) = (g.randn(5, 5), g.randn(5, 5), g.randn(5, 5), g.randn(9, 5));
            let fast = Attention::single(wq.clone(), wk.clone(), wv.clone(), mask)
                .unwrap()
                .forward(x.view())
                .unwrap();
            let slow =
                self_attention_reference(x.view(), wq.view(), wk.view(), wv.view(), mask).unwrap();
            // The GEMM kernel may sum the 5-term dot products in another order (and use FMA):
            // each projection/score entry differs by at most ~d·eps relative, and the softmax and
            // weighted sum add ~n·eps; 64·eps·max|out| bounds that with room for the exp's
            // condition (|scores| here are O(10)).
            let scale = slow.output.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            let err = (&fast.output - &slow.output)
                .iter()
                .fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(
                err <= 64.0 * f64::EPSILON * scale * 10.0,
                "mask {mask:?}: {err:e}"
            );
        }
    }

    #[test]
    fn weights_are_row_stochastic_and_causal_is_lower_triangular() {
        let (layer, x) = random_layer(4, 1, Mask::Causal);
        let out = layer.forward(x.view()).unwrap();
        let w = &out.weights[0];
        for (i, row) in w.rows().into_iter().enumerate() {
            // A sum of ≤ 7 numbers in [0, 1] rounded after division: within 8 eps of 1.
            assert!((row.sum() - 1.0).abs() < 8.0 * f64::EPSILON);
            for j in i + 1..w.ncols() {
                assert_eq!(row[j], 0.0);
            }
        }
        assert_eq!(w[[0, 0]], 1.0, "the first query sees only itself");
    }

    #[test]
    fn multi_head_with_identity_output_projection_concatenates_heads() {
        let mut g = StdGaussian::new(9);
        let (wq, wk, wv, x) = (g.randn(4, 4), g.randn(4, 4), g.randn(4, 4), g.randn(5, 4));
        let layer = Attention::multi_head(
            wq.clone(),
            wk.clone(),
            wv.clone(),
            Some(Array2::eye(4)),
            2,
            Mask::None,
        )
        .unwrap();
        let out = layer.forward(x.view()).unwrap();
        assert_eq!(out.weights.len(), 2);
        // Head 0 equals a single-head layer on the first two columns of each projection.
        let h0 = Attention::single(
            wq.slice(s![.., 0..2]).to_owned(),
            wk.slice(s![.., 0..2]).to_owned(),
            wv.slice(s![.., 0..2]).to_owned(),
            Mask::None,
        )
        .unwrap();
        let o0 = h0.forward(x.view()).unwrap();
        // Same operations in the same order on the same numbers, except that the full-width
        // GEMM may block differently: allow 4 ulps of the output scale.
        let err = (&out.output.slice(s![.., 0..2]) - &o0.output)
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(err < 4.0 * f64::EPSILON * 10.0, "{err:e}");
    }

    #[test]
    fn shape_errors_are_reported() {
        let e = Array2::<f64>::eye(4);
        assert!(Attention::single(e.clone(), Array2::eye(3), e.clone(), Mask::None).is_err());
        assert!(
            Attention::multi_head(e.clone(), e.clone(), e.clone(), None, 2, Mask::None).is_err()
        );
        assert!(Attention::multi_head(
            e.clone(),
            e.clone(),
            e.clone(),
            Some(e.clone()),
            3,
            Mask::None
        )
        .is_err());
        let layer = Attention::single(e.clone(), e.clone(), e.clone(), Mask::None).unwrap();
        assert!(layer.forward(Array2::<f64>::zeros((2, 3)).view()).is_err());
        assert!(layer.forward(Array2::<f64>::zeros((0, 4)).view()).is_err());
    }

    #[test]
    fn readouts() {
        let h = ndarray::array![[1.0, 2.0], [3.0, 6.0]];
        assert_eq!(mean_readout(h.view()), ndarray::array![[2.0, 4.0]]);
        assert_eq!(
            row_readout(h.view(), 1).unwrap(),
            ndarray::array![[3.0, 6.0]]
        );
        assert!(row_readout(h.view(), 2).is_err());
    }

    // ---- The fused kernel against the loop reference ------------------------------------------

    /// Elementwise bound on |fast − reference| for one head, derived from the inputs (in f64):
    ///
    /// * projections: both sides sum d products in different orders (fused or not), each within
    ///   γ_d ≈ d·eps of the exact value, so |δq_ip| ≤ 2d·eps·QA_ip with QA = |H|·|Wq| (same for K,
    ///   V);
    /// * scores s_ij = q_i·k_j/√d_k: the d_k-term dot products differ by ≤ 2d_k·eps·Σ_p|q_ip k_jp|,
    ///   plus the projection errors Σ_p (|δq_ip||k_jp| + |q_ip||δk_jp|), plus 4 eps·|s_ij| for the
    ///   scale (x/√d_k vs x·(1/√d_k), and the rounding of 1/√d_k);
    /// * the softmax argument s_ij − max_j s_ij then moves by Δ_i ≤ 2·max_j δs_ij, so every weight
    ///   moves by a relative 2Δ_i (numerator and sum), plus the exp error (2 ulps here, ½ in the
    ///   reference) and the n-term sum of the normaliser, (n + 8)·eps;
    /// * the output o_ic = Σ_j a_ij v_jc adds the n-term sums on both sides (2n·eps·max|v|) and
    ///   the values' own projection error.
    ///
    /// So tol_ic = (4Δ_i + (3n + 16)·eps)·max_j|v_jc| + 2d·eps·max_j VA_jc, doubled for the
    /// first-order approximations (γ_k ≈ k·eps) — an a-priori bound, not a fitted one.
    fn head_bound(
        x: &Array2<f64>,
        wq: &Array2<f64>,
        wk: &Array2<f64>,
        wv: &Array2<f64>,
        mask: Mask,
        eps: f64,
    ) -> (Array2<f64>, Vec<f64>) {
        let (n, d) = x.dim();
        let dk = wq.ncols();
        let (q, k, v) = (x.dot(wq), x.dot(wk), x.dot(wv));
        let xa = x.mapv(f64::abs);
        let (qa, ka, va) = (
            xa.dot(&wq.mapv(f64::abs)),
            xa.dot(&wk.mapv(f64::abs)),
            xa.dot(&wv.mapv(f64::abs)),
        );
        let sq = (dk as f64).sqrt();
        let mut delta = vec![0.0f64; n];
        for i in 0..n {
            let jmax = if mask == Mask::Causal { i + 1 } else { n };
            for j in 0..jmax {
                let mut prod = 0.0;
                let mut proj = 0.0;
                let mut s = 0.0;
                for p in 0..dk {
                    prod += (q[[i, p]] * k[[j, p]]).abs();
                    proj += qa[[i, p]] * k[[j, p]].abs() + q[[i, p]].abs() * ka[[j, p]];
                    s += q[[i, p]] * k[[j, p]];
                }
                let ds = eps * (2.0 * dk as f64 * prod + 2.0 * d as f64 * proj) / sq
                    + 4.0 * eps * (s / sq).abs();
                delta[i] = delta[i].max(2.0 * ds);
            }
        }
        let mut tol = Array2::<f64>::zeros((n, wv.ncols()));
        for i in 0..n {
            let jmax = if mask == Mask::Causal { i + 1 } else { n };
            for c in 0..wv.ncols() {
                let vmax = (0..jmax).map(|j| v[[j, c]].abs()).fold(0.0, f64::max);
                let vamax = (0..jmax).map(|j| va[[j, c]]).fold(0.0, f64::max);
                tol[[i, c]] = 2.0
                    * ((4.0 * delta[i] + (3.0 * n as f64 + 16.0) * eps) * vmax
                        + 2.0 * d as f64 * eps * vamax);
            }
        }
        (tol, delta)
    }

    fn cast<T: Real>(a: &Array2<f64>) -> Array2<T> {
        a.mapv(T::from_f64)
    }

    /// Fused output, weights path output and weights against the loop reference for one shape.
    fn check_against_reference<T: Real>(n: usize, d: usize, dv: usize, mask: Mask, seed: u64) {
        let mut g = StdGaussian::new(seed);
        let s = 1.0 / (d as f64).sqrt();
        let (wq, wk, wv) = (g.randn(d, d) * s, g.randn(d, d) * s, g.randn(d, dv) * s);
        let x = g.randn(n, d) * 2.0;
        // Round the inputs to T first so both sides see the same numbers.
        let (wq, wk, wv, x) = (
            cast::<T>(&wq).mapv(T::to_f64),
            cast::<T>(&wk).mapv(T::to_f64),
            cast::<T>(&wv).mapv(T::to_f64),
            cast::<T>(&x).mapv(T::to_f64),
        );
        let eps = T::EPSILON.to_f64();
        let (tol, delta) = head_bound(&x, &wq, &wk, &wv, mask, eps);
        let (xt, wqt, wkt, wvt) = (
            cast::<T>(&x),
            cast::<T>(&wq),
            cast::<T>(&wk),
            cast::<T>(&wv),
        );
        let reference =
            self_attention_reference(xt.view(), wqt.view(), wkt.view(), wvt.view(), mask).unwrap();
        let layer = Attention::single(wqt.clone(), wkt.clone(), wvt.clone(), mask).unwrap();
        let fused = layer.forward_output_only(xt.view()).unwrap();
        let full = layer.forward(xt.view()).unwrap();
        let what = format!("{} n={n} d={d} dv={dv} {mask:?}", T::NAME);
        for (name, got) in [("fused", &fused), ("weights path", &full.output)] {
            let mut worst = 0.0f64;
            for ((idx, &r), &gv) in reference.output.indexed_iter().zip(got.iter()) {
                let err = (gv.to_f64() - r.to_f64()).abs();
                assert!(
                    err <= tol[idx],
                    "{what} {name} at {idx:?}: {gv} vs {r} (err {err:e}, tol {:e})",
                    tol[idx]
                );
                worst = worst.max(err / tol[idx].max(f64::MIN_POSITIVE));
            }
            assert!(worst.is_finite());
        }
        // Weights: relative 2Δ_i + (n + 8) eps (doubled), plus the smallest normal for weights
        // that underflow on one side only.
        let (wr, wf) = (&reference.weights[0], &full.weights[0]);
        for ((i, j), &r) in wr.indexed_iter() {
            let gv = wf[[i, j]].to_f64();
            let tiny = if T::NAME == "f32" { 1.2e-38 } else { 2.3e-308 };
            let bound = 2.0 * (2.0 * delta[i] + (n as f64 + 8.0) * eps) * r.to_f64() + tiny;
            assert!(
                (gv - r.to_f64()).abs() <= bound,
                "{what} weight ({i},{j}): {gv} vs {r} (bound {bound:e})"
            );
            if mask == Mask::Causal && j > i {
                assert_eq!(gv, 0.0, "{what}: masked weight ({i},{j})");
            }
        }
    }

    #[test]
    fn fused_and_weights_paths_match_the_loop_reference_within_the_derived_bound() {
        // n = 1, n below/at/above the 48-query tile, one key block whole (256 ≤ 258), crossing
        // the 258-key block once (259) and twice (600); d not a
        // multiple of the 8/16-lane panels or of the 6-row micro-panel; dv ≠ d.
        let shapes = [
            (1, 4, 4),
            (2, 3, 5),
            (7, 5, 5),
            (47, 16, 16),
            (48, 17, 9),
            (49, 8, 13),
            (97, 33, 7),
            (256, 12, 20),
            (259, 10, 7),
            (600, 6, 6),
        ];
        for (k, &(n, d, dv)) in shapes.iter().enumerate() {
            for mask in [Mask::None, Mask::Causal] {
                check_against_reference::<f32>(n, d, dv, mask, 100 + k as u64);
                check_against_reference::<f64>(n, d, dv, mask, 200 + k as u64);
            }
        }
    }

    #[test]
    fn multi_head_with_output_projection_matches_the_composed_reference() {
        // Reference: each head by the loop reference on its column block, concatenated, then a
        // loop product with Wo. Bound: the per-head bound carried through Wo (Σ_c tol_ic·|wo_c·|)
        // plus the d_v-term product on both sides (2·d_v·eps·Σ_c |concat_ic||wo_c·|), doubled.
        for mask in [Mask::None, Mask::Causal] {
            let (n, d, heads, dout) = (61, 12, 3, 7);
            let mut g = StdGaussian::new(77);
            let s = 1.0 / (d as f64).sqrt();
            let (wq, wk, wv, wo) = (
                g.randn(d, d) * s,
                g.randn(d, d) * s,
                g.randn(d, d) * s,
                g.randn(d, dout) * s,
            );
            let x = g.randn(n, d);
            let layer = Attention::multi_head(
                wq.mapv(|v| v as f32),
                wk.mapv(|v| v as f32),
                wv.mapv(|v| v as f32),
                Some(wo.mapv(|v| v as f32)),
                heads,
                mask,
            )
            .unwrap();
            let r32 = |a: &Array2<f64>| a.mapv(|v| v as f32 as f64);
            let (wq, wk, wv, wo, x) = (r32(&wq), r32(&wk), r32(&wv), r32(&wo), r32(&x));
            let eps = f32::EPSILON as f64;
            let dh = d / heads;
            let mut concat = Array2::<f64>::zeros((n, d));
            let mut ctol = Array2::<f64>::zeros((n, d));
            for h in 0..heads {
                let c = s![.., h * dh..(h + 1) * dh];
                let (wqh, wkh, wvh) = (
                    wq.slice(c).to_owned(),
                    wk.slice(c).to_owned(),
                    wv.slice(c).to_owned(),
                );
                let r = self_attention_reference(
                    x.mapv(|v| v as f32).view(),
                    wqh.mapv(|v| v as f32).view(),
                    wkh.mapv(|v| v as f32).view(),
                    wvh.mapv(|v| v as f32).view(),
                    mask,
                )
                .unwrap();
                concat.slice_mut(c).assign(&r.output.mapv(|v| v as f64));
                ctol.slice_mut(c)
                    .assign(&head_bound(&x, &wqh, &wkh, &wvh, mask, eps).0);
            }
            let want = concat.mapv(|v| v as f32 as f64).dot(&wo);
            let tol = ctol.dot(&wo.mapv(f64::abs))
                + concat.mapv(f64::abs).dot(&wo.mapv(f64::abs)) * (4.0 * d as f64 * eps);
            let got = layer
                .forward_output_only(x.mapv(|v| v as f32).view())
                .unwrap();
            let got_w = layer.forward(x.mapv(|v| v as f32).view()).unwrap();
            assert_eq!(got_w.weights.len(), heads);
            for ((idx, &w), (&a, &b)) in
                want.indexed_iter().zip(got.iter().zip(got_w.output.iter()))
            {
                for (name, v) in [("fused", a), ("weights path", b)] {
                    let err = (v as f64 - w).abs();
                    assert!(
                        err <= 2.0 * tol[idx],
                        "{mask:?} {name} {idx:?}: {v} vs {w} (err {err:e}, tol {:e})",
                        2.0 * tol[idx]
                    );
                }
            }
        }
    }

    fn random_f32_layer(
        n: usize,
        d: usize,
        mask: Mask,
        seed: u64,
    ) -> (Attention<f32>, Array2<f32>) {
        let mut g = StdGaussian::new(seed);
        let s = 1.0 / (d as f64).sqrt();
        let layer = Attention::multi_head(
            (g.randn(d, d) * s).mapv(|v| v as f32),
            (g.randn(d, d) * s).mapv(|v| v as f32),
            (g.randn(d, d) * s).mapv(|v| v as f32),
            Some((g.randn(d, d) * s).mapv(|v| v as f32)),
            2,
            mask,
        )
        .unwrap();
        (layer, g.randn(n, d).mapv(|v| v as f32))
    }

    fn bits<T: Real>(a: &Array2<T>) -> Vec<u64> {
        a.iter().map(|v| v.to_f64().to_bits()).collect()
    }

    #[test]
    fn results_are_bit_identical_for_one_and_two_threads() {
        let run = |threads: usize, mask: Mask| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let (layer, x) = random_f32_layer(301, 20, mask, 5);
            pool.install(|| {
                let fused = layer.forward_output_only(x.view()).unwrap();
                let full = layer.forward(x.view()).unwrap();
                (
                    bits(&fused),
                    bits(&full.output),
                    full.weights.iter().map(bits).collect::<Vec<_>>(),
                )
            })
        };
        for mask in [Mask::None, Mask::Causal] {
            assert_eq!(run(1, mask), run(2, mask), "{mask:?}");
            assert_eq!(
                run(2, mask),
                run(2, mask),
                "{mask:?}: same input, same bits"
            );
        }
    }

    #[test]
    fn portable_kernels_return_the_simd_bits() {
        let (layer, x) = random_f32_layer(130, 18, Mask::Causal, 8);
        let mut g = StdGaussian::new(9);
        let l64 = Attention::single(g.randn(11, 11), g.randn(11, 11), g.randn(11, 5), Mask::None)
            .unwrap();
        let x64 = g.randn(250, 11);
        // Longer than one key block (n > 258): blocks of 132 (f32) and 66 (f64), the running
        // maximum rescaled, products whose B does not fit in L1 run panel by panel.
        let (long, xl) = random_f32_layer(700, 16, Mask::None, 10);
        let xl64 = g.randn(400, 11);
        let run = || {
            (
                bits(&layer.forward_output_only(x.view()).unwrap()),
                bits(&layer.forward(x.view()).unwrap().weights[1]),
                bits(&l64.forward_output_only(x64.view()).unwrap()),
                bits(&long.forward_output_only(xl.view()).unwrap()),
                bits(&l64.forward_output_only(xl64.view()).unwrap()),
            )
        };
        let simd = run();
        kernel::FORCE_PORTABLE.store(true, std::sync::atomic::Ordering::Relaxed);
        let portable = run();
        kernel::FORCE_PORTABLE.store(false, std::sync::atomic::Ordering::Relaxed);
        assert!(simd == portable, "portable and SIMD kernels disagree");
    }

    /// `forward_rows` gives each asked-for row bit for bit as the whole output holds it (rows
    /// in any order, repeated, across tiles), with several heads, `Wo` and a query/key hook;
    /// under the causal mask too (it takes them from the whole output); a row ≥ n is refused.
    #[test]
    fn chosen_rows_are_the_whole_outputs_rows_bit_for_bit() {
        fn run<T: Real>(mask: Mask) {
            let (n, d, heads) = (150, 12, 3);
            let mut g = StdGaussian::new(11);
            let s = 1.0 / (d as f64).sqrt();
            let mut draw = |r: usize, c: usize| (g.randn(r, c) * s).mapv(T::from_f64);
            let (wq, wk, wv, wo, h) = (draw(d, d), draw(d, d), draw(d, d), draw(d, d), draw(n, d));
            let layer = Attention::multi_head(wq, wk, wv, Some(wo), heads, mask).unwrap();
            let hook = |x: ArrayView2<T>| Ok(x.mapv(|v| v * T::from_f64(0.5) + T::one()));
            let whole = layer.forward_output_only_with(h.view(), &hook).unwrap();
            let rows = [149, 0, 47, 48, 96, 3, 3, 100];
            let some = layer.forward_rows(h.view(), &rows, Some(&hook)).unwrap();
            assert_eq!(some.dim(), (rows.len(), d));
            for (k, &r) in rows.iter().enumerate() {
                let row = |a: &Array2<T>, i: usize| bits(&a.slice(s![i..i + 1, ..]).to_owned());
                assert_eq!(row(&some, k), row(&whole, r), "row {r}");
            }
            let err = layer.forward_rows(h.view(), &[n], None).unwrap_err();
            assert!(err.to_string().contains("150"), "{err}");
        }
        for mask in [Mask::None, Mask::Causal] {
            run::<f32>(mask);
            run::<f64>(mask);
        }
    }

    #[test]
    fn a_forward_inside_a_hook_gets_its_own_workspace_and_the_same_bits() {
        // The hook runs a forward itself (the thread's cached workspace is then in use): both
        // the inner and the outer results must be those of the same calls made one by one.
        let mut g = StdGaussian::new(5);
        let (n, d) = (70, 12);
        let inner =
            Attention::single(g.randn(d, d), g.randn(d, d), g.randn(d, d), Mask::None).unwrap();
        let outer =
            Attention::single(g.randn(d, d), g.randn(d, d), g.randn(d, d), Mask::Causal).unwrap();
        let h = g.randn(n, d);
        let x = g.randn(n, d);
        let want_inner = inner.forward_output_only(x.view()).unwrap();
        let shift = want_inner.clone();
        let plain = |q: ArrayView2<f64>| Ok(&q + &shift.slice(s![.., ..q.ncols()]));
        let want = outer.forward_output_only_with(h.view(), &plain).unwrap();
        let nested = |q: ArrayView2<f64>| {
            let o = inner.forward_output_only(x.view())?;
            assert_eq!(bits(&o), bits(&want_inner), "the inner forward");
            Ok(&q + &o.slice(s![.., ..q.ncols()]))
        };
        let got = outer.forward_output_only_with(h.view(), &nested).unwrap();
        assert_eq!(bits(&got), bits(&want), "the outer forward");
        // And the cached workspace still serves later calls with the same bits.
        assert_eq!(
            bits(&outer.forward_output_only_with(h.view(), &plain).unwrap()),
            bits(&want)
        );
    }

    #[test]
    fn a_causal_row_does_not_depend_on_later_tokens_or_on_its_tile() {
        // Row i of a causal layer on H equals row i of the same layer on the first k tokens of H,
        // exactly: the per-row computation depends only on the row and the keys j ≤ i, in order,
        // whatever tile (or tile position) the row landed in. (Compared as values: a +0/−0
        // difference is allowed.)
        let (layer, x) = random_f32_layer(150, 10, Mask::Causal, 3);
        let full = layer.forward_output_only(x.view()).unwrap();
        let full_w = layer.forward(x.view()).unwrap();
        for k in [1, 5, 47, 48, 49, 100] {
            let part = layer.forward_output_only(x.slice(s![..k, ..])).unwrap();
            assert_eq!(part, full.slice(s![..k, ..]), "fused, k = {k}");
            let part_w = layer.forward(x.slice(s![..k, ..])).unwrap();
            assert_eq!(
                part_w.output,
                full_w.output.slice(s![..k, ..]),
                "weights, k = {k}"
            );
        }
    }

    #[test]
    fn permuting_tokens_permutes_the_output_up_to_round_off() {
        // Unmasked attention is permutation equivariant: f(ΠH) = Π f(H) up to the order of the
        // key sums (n-term sums: within (3n + 16)·eps·max|f| with the scores' own error, which
        // a reversed order changes by at most the same order: 8·n·eps·max|f| here).
        let (layer, x) = random_f32_layer(130, 16, Mask::None, 4);
        let n = x.nrows();
        let perm: Vec<usize> = (0..n).map(|i| (i * 37 + 11) % n).collect();
        let px = x.select(Axis(0), &perm);
        let f = layer.forward_output_only(x.view()).unwrap();
        let fp = layer.forward_output_only(px.view()).unwrap();
        let scale = f.iter().fold(0.0f32, |m, v| m.max(v.abs())) as f64;
        let err = (&fp - &f.select(Axis(0), &perm))
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs() as f64));
        assert!(
            err <= 8.0 * n as f64 * f32::EPSILON as f64 * scale,
            "{err:e}"
        );
        // The identity permutation is exact.
        assert_eq!(
            bits(&layer.forward_output_only(x.view()).unwrap()),
            bits(&f)
        );
    }

    #[test]
    fn the_query_key_hook_is_applied_per_head() {
        // Doubling queries and keys is exact (a power of two) and equals doubling Wq and Wk.
        let (layer, x) = random_f32_layer(60, 8, Mask::None, 6);
        let twice = |a: ArrayView2<f32>| Ok(a.mapv(|v| 2.0 * v));
        let hooked = layer.forward_output_only_with(x.view(), &twice).unwrap();
        let doubled = Attention::multi_head(
            layer.wq.mapv(|v| 2.0 * v),
            layer.wk.mapv(|v| 2.0 * v),
            layer.wv.clone(),
            layer.wo.clone(),
            2,
            Mask::None,
        )
        .unwrap();
        assert_eq!(
            bits(&hooked),
            bits(&doubled.forward_output_only(x.view()).unwrap())
        );
        let bad = |a: ArrayView2<f32>| Ok(a.slice(s![.., ..1]).to_owned());
        assert!(layer.forward_output_only_with(x.view(), &bad).is_err());
    }
}
