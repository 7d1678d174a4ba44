//! The generic symmetry checker: equivariance `f(ΠH) = Π f(H)`, invariance `f(ΠH) = f(H)`, and
//! the weight form `A(ΠH) = Π A(H) Πᵀ`, for any layer given as a function of `H`.
//!
//! Every check returns a [`CheckReport`], never a bare boolean: the largest absolute, relative
//! and ULP differences, where they occurred, the tolerance and how it was derived, the margin
//! `error / tolerance` and the verdict. Differences are taken in `f64` even for `f32` layers, so
//! the test's own arithmetic adds nothing to what is measured.

use ndarray::{Array2, ArrayView2};
use serde::Serialize;

use super::Permutation;
use crate::{Error, Real, Result};

/// Which property is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Property {
    /// `f(ΠH) = Π f(H)`.
    Equivariance,
    /// `f(ΠH) = f(H)`.
    Invariance,
    /// `A(ΠH) = Π A(H) Πᵀ` for the attention weights.
    WeightEquivariance,
    /// Outputs at positions ≥ t are unchanged when the tokens before t are permuted (causal mask).
    PrefixInvariance,
    /// Outputs at positions < t are unchanged when the tokens at t or later change (causal mask).
    FutureIndependence,
}

impl Property {
    /// The equation checked, for reports.
    pub fn equation(self) -> &'static str {
        match self {
            Property::Equivariance => "f(ΠH) = Π f(H)",
            Property::Invariance => "f(ΠH) = f(H)",
            Property::WeightEquivariance => "A(ΠH) = Π A(H) Πᵀ",
            Property::PrefixInvariance => "f(Π_<t H)[t..] = f(H)[t..]",
            Property::FutureIndependence => {
                "f(H')[..t] = f(H)[..t] when H' differs from H only at rows ≥ t"
            }
        }
    }
}

crate::choice! {
    /// The verdict of a check.
    pub enum Verdict("verdict") {
        /// Every compared entry is within the tolerance.
        Holds = "holds",
        /// Some entry exceeds the tolerance.
        Breaks = "breaks",
        /// No verdict: the layer is nondeterministic (f(X) ≠ f(X)), so a difference under a
        /// permutation says nothing about symmetry.
        Undecided = "undecided",
    }
}

impl Verdict {
    /// `Holds` when `holds`.
    pub fn from_holds(holds: bool) -> Self {
        if holds {
            Verdict::Holds
        } else {
            Verdict::Breaks
        }
    }
}

/// The tolerance a check uses, with its derivation:
/// `value = k · eps(dtype) · (n + d) · scale`.
///
/// Why this form: the two sides of an equivariance check perform the same floating-point
/// operations on the same numbers except that reductions (the softmax denominator over n
/// entries, the weighted sum of n values, dot products of length d) may run in another order.
/// Reordering a sum of m terms changes it by at most about m·eps times the sum of magnitudes
/// (Higham, *Accuracy and Stability*, §4.2), so the error is bounded by a small multiple of
/// `eps · (n + d)` relative to the output scale `max |f(H)|`. `k = 8` leaves room for the few
/// roundings per term (product, addition, exp, division); anything structural exceeds it by
/// orders of magnitude (see the margins of the deliberately broken layers in the tests).
///
/// Typed data only: the sentence with the numbers (`derivation`, and the JSON field of that
/// name) is written at the report boundary, `present::prose`, which also serialises it.
#[derive(Debug, Clone, PartialEq)]
pub struct Tolerance {
    /// The absolute tolerance on any entry.
    pub value: f64,
    /// Safety factor k.
    pub k: f64,
    /// Machine epsilon of the layer's dtype.
    pub eps: f64,
    /// The growth term n + d.
    pub growth: f64,
    /// The output scale max |f(H)| (at least the smallest positive normal).
    pub scale: f64,
    /// Sequence length n.
    pub n: usize,
    /// Input width d.
    pub d: usize,
}

impl Tolerance {
    /// The default safety factor.
    pub const K: f64 = 8.0;

    /// `k · eps · (n + d) · scale` for a layer of dtype `T` on an n × d input.
    pub fn for_layer<T: Real>(n: usize, d: usize, scale: f64) -> Self {
        Self::for_eps(T::EPSILON.to_f64(), n, d, scale)
    }

    /// `k · eps · (n + d) · scale` for a layer whose arithmetic has machine epsilon `eps`
    /// (a lower internal precision than its input's: [`crate::experiment::Conclusion::LowerPrecision`]).
    pub fn for_eps(eps: f64, n: usize, d: usize, scale: f64) -> Self {
        let scale = scale.max(f64::MIN_POSITIVE);
        let growth = (n + d) as f64;
        let value = Self::K * eps * growth * scale;
        Tolerance {
            value,
            k: Self::K,
            eps,
            growth,
            scale,
            n,
            d,
        }
    }
}

/// Where the largest difference occurred.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Worst {
    /// The permutation (or transformation's permutation) that produced it.
    pub perm: Vec<usize>,
    /// Row of the compared arrays.
    pub row: usize,
    /// Column of the compared arrays.
    pub col: usize,
    /// The left-hand side's value there.
    pub lhs: f64,
    /// The right-hand side's value there.
    pub rhs: f64,
}

/// The outcome of one check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckReport {
    /// The property.
    pub property: Property,
    /// The equation, in words.
    pub equation: String,
    /// Whether every compared entry is within the tolerance.
    pub holds: bool,
    /// Holds or breaks (the same as `holds`, as a word for reports).
    pub verdict: Verdict,
    /// max |lhs − rhs| over all entries and transformations (in f64).
    pub max_abs_error: f64,
    /// max |lhs − rhs| / max |rhs| (normwise relative error of the worst transformation).
    pub max_rel_error: f64,
    /// Largest distance in units in the last place of the layer's dtype ([`OPPOSITE_SIGNS`]
    /// when the worst pair differs in sign).
    pub max_ulps: u64,
    /// The absolute tolerance used.
    pub tolerance: f64,
    /// The tolerance with its derivation.
    pub tolerance_detail: Tolerance,
    /// `max_abs_error / tolerance`: < 1 holds; ≫ 1 means broken by design, not by round-off.
    pub margin: f64,
    /// How many transformations were compared.
    pub permutations_checked: usize,
    /// Where the largest difference occurred.
    pub worst: Worst,
    /// The layer's dtype.
    pub dtype: crate::Dtype,
}

/// The `max_ulps` of a comparison whose worst pair of values differs in sign (`u64::MAX`): no
/// distance in ulps means anything there; reports say "opposite signs".
pub const OPPOSITE_SIGNS: u64 = u64::MAX;

/// Entry-by-entry comparison of two arrays of the same shape, in `f64`.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// max |a − b|.
    pub max_abs: f64,
    /// Position of the max.
    pub at: (usize, usize),
    /// max |a − b| / max |b| (0 when both are zero).
    pub rel: f64,
    /// Largest ULP distance in the arrays' own type.
    pub max_ulps: u64,
    /// a − b, entry by entry.
    pub difference: Array2<f64>,
}

/// The summary of an entry-by-entry comparison, without the array of differences: what a
/// check keeps of each permutation (see [`compare_by`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiffStats {
    /// max |a − b| (∞ for a NaN difference).
    pub max_abs: f64,
    /// Position of the first max in row-major order.
    pub at: (usize, usize),
    /// max |a − b| / max |b| (0 when both are zero).
    pub rel: f64,
    /// Largest ULP distance in the arrays' own type.
    pub max_ulps: u64,
}

/// Compares `a(i, j)` with `b(i, j)` over a `rows × cols` grid in row-major order, in `f64`,
/// without allocating: the same numbers as [`compare`] on the two arrays those functions
/// index. A check compares `f(ΠH)` with `Π f(H)` by indexing `f(H)` through the permutation
/// instead of building `Π f(H)` (or `Π A Πᵀ`).
pub fn compare_by<T: Real>(
    (rows, cols): (usize, usize),
    a: impl Fn(usize, usize) -> T,
    b: impl Fn(usize, usize) -> T,
) -> DiffStats {
    let mut acc = DiffAcc::new();
    for i in 0..rows {
        for j in 0..cols {
            acc.push(i, j, a(i, j), b(i, j));
        }
    }
    acc.finish()
}

/// The running state of [`compare_by`], for comparisons that walk the entries themselves (in
/// row-major order) to use slices instead of indexing.
pub(crate) struct DiffAcc {
    max_abs: f64,
    at: (usize, usize),
    max_ulps: u64,
    b_max: f64,
}

impl DiffAcc {
    pub(crate) fn new() -> Self {
        DiffAcc {
            max_abs: 0.0,
            at: (0, 0),
            max_ulps: 0,
            b_max: 0.0,
        }
    }

    /// Adds entry (i, j): `x` from the left-hand side, `y` from the right.
    #[inline]
    pub(crate) fn push<T: Real>(&mut self, i: usize, j: usize, x: T, y: T) {
        // Equal entries (most of a check's) change only the scale: their difference is 0 and so
        // is their distance in ulps (+0 and −0 included).
        self.b_max = self.b_max.max(y.to_f64().abs());
        if x != y {
            self.push_differing(i, j, x, y);
        }
    }

    /// [`DiffAcc::push`] without the scale, for an entry with `x != y` (NaN included); a
    /// comparison that walks the entries itself and knows the scale sets it with
    /// [`DiffAcc::set_scale`].
    #[inline]
    pub(crate) fn push_differing<T: Real>(&mut self, i: usize, j: usize, x: T, y: T) {
        let e = (x.to_f64() - y.to_f64()).abs();
        // NaN compares false: treat it as infinitely wrong.
        if e > self.max_abs || (e.is_nan() && !self.max_abs.is_nan()) {
            self.max_abs = if e.is_nan() { f64::INFINITY } else { e };
            self.at = (i, j);
        }
        // Values of opposite signs have no meaningful distance in ulps (counting through zero
        // gives ~2⁶³ for numbers near 1): recorded as [`OPPOSITE_SIGNS`].
        let (xf, yf) = (x.to_f64(), y.to_f64());
        let ulps = if xf != 0.0 && yf != 0.0 && (xf < 0.0) != (yf < 0.0) {
            OPPOSITE_SIGNS
        } else {
            T::ulps_between(x, y)
        };
        self.max_ulps = self.max_ulps.max(ulps);
    }

    /// Sets the scale (max |y| over the compared entries) of entries pushed with
    /// [`DiffAcc::push_differing`].
    pub(crate) fn set_scale(&mut self, b_max: f64) {
        self.b_max = b_max;
    }

    /// Adds the entries of `later`, which all come after this accumulator's in row-major order
    /// (finite differences: its max replaces ours only when strictly larger, so the first max
    /// is kept).
    pub(crate) fn merge(&mut self, later: DiffAcc) {
        if later.max_abs > self.max_abs {
            self.max_abs = later.max_abs;
            self.at = later.at;
        }
        self.max_ulps = self.max_ulps.max(later.max_ulps);
        self.b_max = self.b_max.max(later.b_max);
    }

    pub(crate) fn finish(self) -> DiffStats {
        let rel = if self.max_abs == 0.0 {
            0.0
        } else {
            self.max_abs / self.b_max.max(f64::MIN_POSITIVE)
        };
        DiffStats {
            max_abs: self.max_abs,
            at: self.at,
            rel,
            max_ulps: self.max_ulps,
        }
    }
}

/// The one refusal of a comparison between arrays of different shapes (`b`'s named against
/// `a`'s).
pub(crate) fn same_shape(a: (usize, usize), b: (usize, usize)) -> Result<()> {
    if a == b {
        return Ok(());
    }
    Err(Error::shape(
        "comparison",
        format!("{b:?}"),
        format!("{a:?}"),
    ))
}

/// Compares `a` and `b` entry by entry (differences taken in `f64`): [`compare_by`] on the two
/// arrays, plus the array of differences `a − b`.
///
/// # Errors
/// Different shapes.
pub fn compare<T: Real>(a: ArrayView2<T>, b: ArrayView2<T>) -> Result<Diff> {
    same_shape(a.dim(), b.dim())?;
    let s = compare_by(a.dim(), |i, j| a[[i, j]], |i, j| b[[i, j]]);
    Ok(Diff {
        max_abs: s.max_abs,
        at: s.at,
        rel: s.rel,
        max_ulps: s.max_ulps,
        difference: Array2::from_shape_fn(a.dim(), |ix| a[ix].to_f64() - b[ix].to_f64()),
    })
}

/// Accumulates the worst case over several transformations.
pub(crate) struct Tracker {
    max_abs: f64,
    max_rel: f64,
    max_ulps: u64,
    worst: Worst,
    count: usize,
}

impl Tracker {
    /// An empty tracker for permutations of `n` positions (its worst permutation's list has
    /// room for n entries, so recording a new worst does not allocate).
    pub(crate) fn new(n: usize) -> Self {
        Tracker {
            max_abs: -1.0,
            max_rel: 0.0,
            max_ulps: 0,
            worst: Worst {
                perm: (0..n).collect(),
                row: 0,
                col: 0,
                lhs: 0.0,
                rhs: 0.0,
            },
            count: 0,
        }
    }

    fn add<T: Real>(
        &mut self,
        perm: &Permutation,
        lhs: ArrayView2<T>,
        rhs: ArrayView2<T>,
        row_offset: usize,
    ) -> Result<()> {
        same_shape(lhs.dim(), rhs.dim())?;
        let d = compare_by(lhs.dim(), |i, j| lhs[[i, j]], |i, j| rhs[[i, j]]);
        let (l, r) = (lhs[d.at].to_f64(), rhs[d.at].to_f64());
        self.add_stats(perm.as_slice(), &d, (l, r), row_offset);
        Ok(())
    }

    /// Records one transformation's comparison `d` (`values` = lhs and rhs at `d.at`).
    pub(crate) fn add_stats(
        &mut self,
        perm: &[usize],
        d: &DiffStats,
        (lhs, rhs): (f64, f64),
        row_offset: usize,
    ) {
        self.count += 1;
        self.max_rel = self.max_rel.max(d.rel);
        self.max_ulps = self.max_ulps.max(d.max_ulps);
        if d.max_abs > self.max_abs {
            self.max_abs = d.max_abs;
            self.worst.perm.clear();
            self.worst.perm.extend_from_slice(perm);
            self.worst.row = d.at.0 + row_offset;
            self.worst.col = d.at.1;
            self.worst.lhs = lhs;
            self.worst.rhs = rhs;
        }
    }

    pub(crate) fn finish<T: Real>(self, property: Property, tol: Tolerance) -> CheckReport {
        let max_abs = self.max_abs.max(0.0);
        let holds = max_abs <= tol.value;
        CheckReport {
            property,
            equation: property.equation().to_string(),
            holds,
            verdict: Verdict::from_holds(holds),
            max_abs_error: max_abs,
            max_rel_error: self.max_rel,
            max_ulps: self.max_ulps,
            tolerance: tol.value,
            margin: max_abs / tol.value,
            tolerance_detail: tol,
            permutations_checked: self.count,
            worst: self.worst,
            dtype: T::DTYPE,
        }
    }
}

pub(crate) fn max_abs<T: Real>(a: &Array2<T>) -> f64 {
    max_abs_view(a.view())
}

/// [`max_abs`] of a view.
pub(crate) fn max_abs_view<T: Real>(a: ArrayView2<T>) -> f64 {
    match a.to_slice_memory_order() {
        Some(s) => over_chunks(s, abs_max_run, f64::max, 0.0),
        None => a.iter().fold(0.0f64, |m, v| m.max(v.to_f64().abs())),
    }
}

/// Values per task when a scan of a large array is split over the pool.
const SCAN_CHUNK: usize = 1 << 18;

/// `f` over `s` in chunks of [`SCAN_CHUNK`] (in parallel past one chunk), the results combined
/// with `join` — an exact, order-free combination (max, and), so the result is the serial one.
fn over_chunks<T: Real, R: Send + Sync + Copy>(
    s: &[T],
    f: fn(&[T]) -> R,
    join: fn(R, R) -> R,
    empty: R,
) -> R {
    use rayon::prelude::*;
    if s.len() <= SCAN_CHUNK {
        return join(empty, f(s));
    }
    s.par_chunks(SCAN_CHUNK).map(f).reduce(|| empty, join)
}

/// `max |v|` over `s` as f64 (NaN ignored, as `f64::max` does): 16 running maxima, so the
/// compares vectorise instead of waiting on one chain; the max of exact values is exact, so the
/// result is the one-by-one fold's.
fn abs_max_run<T: Real>(s: &[T]) -> f64 {
    let mut m = [T::zero(); 16];
    let mut chunks = s.chunks_exact(16);
    for c in &mut chunks {
        for (mk, &v) in m.iter_mut().zip(c) {
            let a = v.abs();
            if a > *mk {
                *mk = a;
            }
        }
    }
    m.iter()
        .chain(chunks.remainder())
        .fold(0.0f64, |acc, v| acc.max(v.to_f64().abs()))
}

/// Whether every value of `s` is finite (16 lanes, no early exit: vectorised).
fn all_finite_run<T: Real>(s: &[T]) -> bool {
    let mut ok = [true; 16];
    let mut chunks = s.chunks_exact(16);
    for c in &mut chunks {
        for (k, &v) in ok.iter_mut().zip(c) {
            *k &= v.is_finite();
        }
    }
    ok.iter().all(|&k| k) && chunks.remainder().iter().all(|v| v.is_finite())
}

/// Rejects non-finite layer outputs: an overflowed layer says nothing about its symmetry, and
/// inf − inf would make every comparison meaningless.
pub(crate) fn ensure_finite<T: Real>(a: &Array2<T>) -> Result<()> {
    match a.as_slice_memory_order() {
        Some(s) if !over_chunks(s, all_finite_run, |x, y| x && y, true) => {
            Err(T::DTYPE.overflow(LAYER_OUTPUT))
        }
        Some(_) => Ok(()),
        None => ensure_finite_values(a.iter().copied()),
    }
}

/// What a non-finite layer result is called in the one overflow message ([`crate::Dtype::overflow`]).
pub const LAYER_OUTPUT: &str = "the layer's output";

/// Refuses non-finite values of a layer's result with the message every command shares.
///
/// # Errors
/// [`crate::ErrorKind::NonFinite`] when any value is inf or NaN.
pub fn ensure_finite_values<T: Real>(mut values: impl Iterator<Item = T>) -> Result<()> {
    if values.any(|v| !v.is_finite()) {
        return Err(T::DTYPE.overflow(LAYER_OUTPUT));
    }
    Ok(())
}

pub(crate) fn need_perms(perms: &[Permutation], n: usize) -> Result<()> {
    if perms.is_empty() {
        return Err(Error::invalid(
            "permutations",
            "none",
            "at least one permutation to check",
        ));
    }
    if let Some(p) = perms.iter().find(|p| p.len() != n) {
        return Err(Error::invalid(
            "permutation",
            p,
            format!("a permutation of the {n} positions"),
        ));
    }
    Ok(())
}

/// Checks `f(ΠH) = Π f(H)` for every permutation in `perms`.
///
/// ```
/// use attnlab_core::symmetry::{check_equivariance, Permutation};
/// use ndarray::{array, Array2, ArrayView2};
/// // Row-wise maps are equivariant: f(H) = 2H.
/// let h = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
/// let perms = Permutation::all(3).unwrap();
/// let r = check_equivariance(|x: ArrayView2<f64>| Ok(x.mapv(|v| 2.0 * v)), h.view(), &perms).unwrap();
/// assert!(r.holds && r.max_abs_error == 0.0 && r.permutations_checked == 6);
/// ```
///
/// # Errors
/// `f` fails, or a permutation does not fit `H`.
pub fn check_equivariance<T: Real, F>(
    f: F,
    h: ArrayView2<T>,
    perms: &[Permutation],
) -> Result<CheckReport>
where
    F: Fn(ArrayView2<T>) -> Result<Array2<T>>,
{
    permutation_check(f, h, perms, Property::Equivariance, |p, base| {
        p.apply_rows(base.view())
    })
}

/// Shared body of the permutation checks: compares `f(ΠH)` with `expected(Π, f(H))` for every
/// permutation and sizes the tolerance on `f(H)`.
fn permutation_check<T: Real, F, E>(
    f: F,
    h: ArrayView2<T>,
    perms: &[Permutation],
    property: Property,
    expected: E,
) -> Result<CheckReport>
where
    F: Fn(ArrayView2<T>) -> Result<Array2<T>>,
    E: Fn(&Permutation, &Array2<T>) -> Result<Array2<T>>,
{
    need_perms(perms, h.nrows())?;
    let base = f(h)?;
    ensure_finite(&base)?;
    let mut t = Tracker::new(h.nrows());
    for p in perms {
        let lhs = f(p.apply_rows(h)?.view())?;
        ensure_finite(&lhs)?;
        let rhs = expected(p, &base)?;
        t.add(p, lhs.view(), rhs.view(), 0)?;
    }
    let tol = Tolerance::for_layer::<T>(h.nrows(), h.ncols(), max_abs(&base));
    Ok(t.finish::<T>(property, tol))
}

/// Checks `f(ΠH) = f(H)` (readouts such as the mean over positions).
///
/// # Errors
/// `f` fails, or a permutation does not fit `H`.
pub fn check_invariance<T: Real, F>(
    f: F,
    h: ArrayView2<T>,
    perms: &[Permutation],
) -> Result<CheckReport>
where
    F: Fn(ArrayView2<T>) -> Result<Array2<T>>,
{
    permutation_check(
        f,
        h,
        perms,
        Property::Invariance,
        |_, base| Ok(base.clone()),
    )
}

/// Checks the weight form `A(ΠH) = Π A(H) Πᵀ`, where `weights(H)` returns the n × n matrix.
///
/// # Errors
/// `weights` fails or does not return an n × n matrix.
pub fn check_weight_equivariance<T: Real, F>(
    weights: F,
    h: ArrayView2<T>,
    perms: &[Permutation],
) -> Result<CheckReport>
where
    F: Fn(ArrayView2<T>) -> Result<Array2<T>>,
{
    permutation_check(
        weights,
        h,
        perms,
        Property::WeightEquivariance,
        |p, base| p.conjugate(base.view()),
    )
}

/// Checks the weight form `A_k(ΠH) = Π A_k(H) Πᵀ` of every head k at once: `weights(H)`
/// returns all heads' n × n matrices from one forward pass, so a check of k heads over P
/// permutations runs P + 1 forward passes, not k·(P + 1). One report per head, each as
/// [`check_weight_equivariance`] would give it.
///
/// # Errors
/// `weights` fails, returns no matrix, or a different number of heads for a permuted input.
pub fn check_weight_equivariance_heads<T: Real, F>(
    weights: F,
    h: ArrayView2<T>,
    perms: &[Permutation],
) -> Result<Vec<CheckReport>>
where
    F: Fn(ArrayView2<T>) -> Result<Vec<Array2<T>>>,
{
    let n = h.nrows();
    need_perms(perms, n)?;
    let base = weights(h)?;
    if base.is_empty() {
        return Err(Error::invalid("heads", 0, "at least one head's weights"));
    }
    for b in &base {
        ensure_finite(b)?;
    }
    let mut trackers: Vec<Tracker> = base.iter().map(|_| Tracker::new(n)).collect();
    for p in perms {
        let lhs = weights(p.apply_rows(h)?.view())?;
        if lhs.len() != base.len() {
            return Err(Error::shape(
                "weights per head",
                base.len().to_string(),
                lhs.len().to_string(),
            ));
        }
        for ((t, l), b) in trackers.iter_mut().zip(&lhs).zip(&base) {
            ensure_finite(l)?;
            let rhs = p.conjugate(b.view())?;
            t.add(p, l.view(), rhs.view(), 0)?;
        }
    }
    Ok(trackers
        .into_iter()
        .zip(&base)
        .map(|(t, b)| {
            let tol = Tolerance::for_layer::<T>(n, h.ncols(), max_abs(b));
            t.finish::<T>(Property::WeightEquivariance, tol)
        })
        .collect())
}

/// For a causal layer: permuting the tokens at positions `0..t` (the prefix) leaves every output
/// at positions `≥ t` unchanged, since each of those queries takes a softmax over a set that
/// contains the whole prefix. `perms` are permutations of `0..t`.
///
/// # Errors
/// `t` is 0 or ≥ n, a permutation does not have length t, or `f` fails.
pub fn check_prefix_invariance<T: Real, F>(
    f: F,
    h: ArrayView2<T>,
    t: usize,
    perms: &[Permutation],
) -> Result<CheckReport>
where
    F: Fn(ArrayView2<T>) -> Result<Array2<T>>,
{
    let n = h.nrows();
    if t < 2 || t >= n {
        return Err(Error::invalid(
            "prefix length t",
            t,
            format!(
                "2..{n} (at least two tokens to permute, and at least one position after them)"
            ),
        ));
    }
    need_perms(perms, t)?;
    let base = f(h)?;
    ensure_finite(&base)?;
    let mut tr = Tracker::new(n);
    for p in perms {
        let full = Permutation::new(p.as_slice().iter().copied().chain(t..n).collect())?;
        let out = f(full.apply_rows(h)?.view())?;
        ensure_finite(&out)?;
        tr.add(
            &full,
            out.slice(ndarray::s![t.., ..]),
            base.slice(ndarray::s![t.., ..]),
            t,
        )?;
    }
    let tol = Tolerance::for_layer::<T>(n, h.ncols(), max_abs(&base));
    Ok(tr.finish::<T>(Property::PrefixInvariance, tol))
}

/// For a causal layer: replacing the tokens at positions `≥ t` by `replacement` rows leaves
/// every output at positions `< t` unchanged.
///
/// # Errors
/// `t` is 0 or ≥ n, `replacement` does not have n − t rows of H's width, or `f` fails.
pub fn check_future_independence<T: Real, F>(
    f: F,
    h: ArrayView2<T>,
    t: usize,
    replacement: ArrayView2<T>,
) -> Result<CheckReport>
where
    F: Fn(ArrayView2<T>) -> Result<Array2<T>>,
{
    let n = h.nrows();
    if t == 0 || t >= n {
        return Err(Error::invalid(
            "cut position t",
            t,
            format!("1..{n} (positions before t are compared, positions from t on are changed)"),
        ));
    }
    if replacement.dim() != (n - t, h.ncols()) {
        return Err(Error::shape(
            "replacement rows",
            format!("{}×{}", n - t, h.ncols()),
            format!("{}×{}", replacement.nrows(), replacement.ncols()),
        ));
    }
    let base = f(h)?;
    ensure_finite(&base)?;
    let mut changed = h.to_owned();
    changed.slice_mut(ndarray::s![t.., ..]).assign(&replacement);
    let out = f(changed.view())?;
    ensure_finite(&out)?;
    let mut tr = Tracker::new(n);
    tr.add(
        &Permutation::identity(n),
        out.slice(ndarray::s![..t, ..]),
        base.slice(ndarray::s![..t, ..]),
        0,
    )?;
    let tol = Tolerance::for_layer::<T>(n, h.ncols(), max_abs(&base));
    Ok(tr.finish::<T>(Property::FutureIndependence, tol))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectorised_scans_return_the_one_by_one_results() {
        // Lengths around the 16 lanes and across parallel chunks; signs, ±0, a subnormal.
        for len in [0, 1, 15, 16, 17, 1000, SCAN_CHUNK + 7, 2 * SCAN_CHUNK + 33] {
            let a = Array2::from_shape_fn((1, len), |(_, j)| {
                let v = ((j * 7919) % 1009) as f32 / 37.0 - 13.0;
                if j % 97 == 3 {
                    -v * 1e3
                } else if j % 89 == 5 {
                    1e-42
                } else {
                    v
                }
            });
            let serial = a.iter().fold(0.0f64, |m, v| m.max(f64::from(*v).abs()));
            assert_eq!(max_abs(&a), serial, "len {len}");
            assert!(ensure_finite(&a).is_ok(), "len {len}");
            // The transposed view (not contiguous in row order) takes the same value.
            assert_eq!(max_abs_view(a.t()), serial);
            for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                if len == 0 {
                    continue;
                }
                let mut b = a.clone();
                b[[0, len - 1]] = bad;
                assert!(ensure_finite(&b).is_err(), "len {len}: {bad} at the end");
                b[[0, len - 1]] = a[[0, len - 1]];
                b[[0, len / 2]] = bad;
                assert!(ensure_finite(&b).is_err(), "len {len}: {bad} in the middle");
                // NaN is ignored by the max, as f64::max ignores it; inf is the max.
                let serial = b.iter().fold(0.0f64, |m, v| m.max(f64::from(*v).abs()));
                assert_eq!(max_abs(&b), serial, "len {len}: {bad}");
            }
        }
    }
}
