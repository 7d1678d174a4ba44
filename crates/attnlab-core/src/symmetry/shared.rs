//! One pass over the permutations that shares its work: `f(H)` is computed once, each `f(ΠH)`
//! once, and every comparison made from them — the output form `f(ΠH) = Π f(H)` (or
//! `f(ΠH) = f(H)`) and, when the layer returns its weights, the weight form
//! `A(ΠH) = Π A(H) Πᵀ` of every head — by indexing `f(H)` through the permutation instead of
//! building `Π f(H)` or `Π A Πᵀ`.
//!
//! Per permutation the pass permutes `H` into one buffer it reuses and compares without
//! allocating (see [`super::compare_by`]); a layer that writes its result into the
//! [`Forward`] it is handed in place makes the whole loop free of allocation (tested with a
//! counting allocator in `tests/shared_alloc.rs`). The numbers are those of
//! [`super::check_equivariance`], [`super::check_invariance`] and
//! [`super::check_weight_equivariance_heads`] on the same layer: the same differences in the
//! same order (tested).

use std::time::Instant;

use ndarray::{Array2, ArrayView2};

use super::check::{ensure_finite, max_abs, max_abs_view, same_shape, DiffAcc, DiffStats, Tracker};
use super::{compare_by, CheckReport, Permutation, Property, Tolerance};
use crate::{Error, Real, Result};

/// The permutations a pass runs over.
#[derive(Debug, Clone, Copy)]
pub enum Perms<'a> {
    /// A list (given, or random draws).
    List(&'a [Permutation]),
    /// All n! permutations of `0..n` (n ≤ 8), in the order of [`Permutation::all`], generated
    /// in place rather than listed.
    All(usize),
}

impl Perms<'_> {
    /// How many permutations there are (n! for [`Perms::All`]).
    pub fn len(&self) -> usize {
        match self {
            Perms::List(l) => l.len(),
            Perms::All(n) => (1..=*n).product(),
        }
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether every permutation is the identity (n = 1, or a list of identities).
    pub fn all_identity(&self) -> bool {
        match self {
            Perms::List(l) => l.iter().all(Permutation::is_identity),
            Perms::All(n) => *n <= 1,
        }
    }

    /// How many are not the identity.
    pub fn non_identity_count(&self) -> usize {
        match self {
            Perms::List(l) => l.iter().filter(|p| !p.is_identity()).count(),
            Perms::All(n) => self.len() - usize::from(*n >= 1),
        }
    }

    /// Visits each permutation's list in order (skipping identities with `skip_identity`).
    ///
    /// # Errors
    /// Whatever `visit` returns; [`Perms::All`] with n = 0 or n > 8.
    pub fn for_each(
        &self,
        skip_identity: bool,
        mut visit: impl FnMut(&[usize]) -> Result<()>,
    ) -> Result<()> {
        let is_id = |p: &[usize]| p.iter().enumerate().all(|(i, &v)| i == v);
        match self {
            Perms::List(l) => l
                .iter()
                .filter(|p| !(skip_identity && p.is_identity()))
                .try_for_each(|p| visit(p.as_slice())),
            Perms::All(n) => Permutation::for_each_all(*n, |p| {
                if skip_identity && is_id(p) {
                    Ok(())
                } else {
                    visit(p)
                }
            }),
        }
    }
}

/// A layer's result on one input: its output and, for the weight form, every head's n × n
/// weights (empty when the weights are not checked).
#[derive(Debug, Clone, PartialEq)]
pub struct Forward<T> {
    /// The layer's output (after its readout).
    pub output: Array2<T>,
    /// Every head's attention weights `A` (n × n), or none.
    pub weights: Vec<Array2<T>>,
}

impl<T: Real> Forward<T> {
    /// An empty result for a layer to write into.
    pub fn empty() -> Self {
        Forward {
            output: Array2::zeros((0, 0)),
            weights: Vec::new(),
        }
    }
}

/// A layer that writes `f(H)` into the [`Forward`] it is handed.
pub type LayerInto<'a, T> = dyn FnMut(ArrayView2<T>, &mut Forward<T>) -> Result<()> + 'a;

/// Seconds spent in the parts of a pass.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PassTimes {
    /// The forward passes: `f(H)` once and `f(ΠH)` per permutation.
    pub forwards: f64,
    /// Comparing the outputs.
    pub outputs: f64,
    /// Comparing the weights (zero without weights).
    pub weights: f64,
}

/// What a pass found.
#[derive(Debug, Clone)]
pub struct Pass<T> {
    /// The output form: `f(ΠH) = Π f(H)` or `f(ΠH) = f(H)`.
    pub report: CheckReport,
    /// The weight form of every head (empty when the layer returned no weights).
    pub weight_heads: Vec<CheckReport>,
    /// `f(H)`, computed once, for controls that reuse it.
    pub base: Forward<T>,
    /// Where the time went.
    pub times: PassTimes,
}

/// Runs `forward` on `H` once and on `ΠH` for every permutation of `perms` (identities skipped
/// with `skip_identity`), comparing as described in the module docs; `property` is
/// [`Property::Equivariance`] (`f(ΠH) = Π f(H)`) or [`Property::Invariance`]
/// (`f(ΠH) = f(H)`). `tick(k)` runs before each forward pass (k = permutations done so far):
/// cancellation and progress. Tolerances are those of [`Tolerance::for_layer`] on `f(H)` (each
/// head's `A(H)` for the weight form).
///
/// # Errors
/// Whatever `forward` or `tick` return, a non-finite result, no permutation to check, a
/// permutation of the wrong length, or a result whose shape differs from `f(H)`'s.
pub fn shared_pass<T: Real>(
    forward: &mut LayerInto<'_, T>,
    h: ArrayView2<T>,
    perms: Perms<'_>,
    skip_identity: bool,
    property: Property,
    tick: &mut dyn FnMut(usize) -> Result<()>,
) -> Result<Pass<T>> {
    let mut at = |x: ArrayView2<T>, _: &[usize], out: &mut Forward<T>| forward(x, out);
    shared_pass_at(&mut at, h, perms, skip_identity, property, 0, tick)
}

/// A layer that also receives the original positions its rows hold: row i of `ΠH` is token
/// `perm[i]` (the identity for `H`), so a layer given positions can move them with the tokens.
pub type LayerAt<'a, T> = dyn FnMut(ArrayView2<T>, &[usize], &mut Forward<T>) -> Result<()> + 'a;

/// [`shared_pass`] on a layer that receives each input's permutation ([`LayerAt`]), comparing
/// only the output rows from `rows_from` on (the causal prefix check: [`Property::PrefixInvariance`]
/// compares `f(Π_<t H)[t..]` with `f(H)[t..]`, permutations of all n positions that fix rows
/// ≥ t; the tolerance is sized on the whole `f(H)`, as [`super::check_prefix_invariance`]).
///
/// # Errors
/// As [`shared_pass`]; `rows_from` ≥ the output's rows.
pub fn shared_pass_at<T: Real>(
    forward: &mut LayerAt<'_, T>,
    h: ArrayView2<T>,
    perms: Perms<'_>,
    skip_identity: bool,
    property: Property,
    rows_from: usize,
    tick: &mut dyn FnMut(usize) -> Result<()>,
) -> Result<Pass<T>> {
    let (n, d) = h.dim();
    let identity: Vec<usize> = (0..n).collect();
    if let Perms::List(l) = perms {
        super::check::need_perms(l, n)?;
    } else if perms.is_empty() {
        return Err(Error::invalid(
            "permutations",
            "none",
            "at least one permutation to check",
        ));
    }
    if let Perms::All(m) = perms {
        if m != n {
            return Err(Error::invalid(
                "permutation",
                format!("all of 0..{m}"),
                format!("a permutation of the {n} positions"),
            ));
        }
    }
    let mut times = PassTimes::default();
    let t = Instant::now();
    tick(0)?;
    let mut base = Forward::empty();
    forward(h, &identity, &mut base)?;
    ensure_finite(&base.output)?;
    for b in &base.weights {
        ensure_finite(b)?;
    }
    times.forwards += t.elapsed().as_secs_f64();
    let mut main = Tracker::new(n);
    let mut heads: Vec<Tracker> = base.weights.iter().map(|_| Tracker::new(n)).collect();
    let mut px = h.to_owned();
    let mut out = Forward::empty();
    let mut done = 0usize;
    perms.for_each(skip_identity, |p| {
        tick(done)?;
        let t = Instant::now();
        for (i, &pi) in p.iter().enumerate() {
            px.row_mut(i).assign(&h.row(pi));
        }
        forward(px.view(), p, &mut out)?;
        ensure_finite(&out.output)?;
        times.forwards += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let (lo, bo) = (&out.output, &base.output);
        same_shape(lo.dim(), bo.dim())?;
        let equi = property == Property::Equivariance;
        let row = |i: usize| if equi { p[i] } else { i + rows_from };
        if rows_from >= lo.nrows() && rows_from > 0 {
            return Err(Error::invalid(
                "compared rows",
                format!("from {rows_from}"),
                format!("fewer than the output's {} rows", lo.nrows()),
            ));
        }
        let rows = (lo.nrows() - rows_from, lo.ncols());
        let s = compare_by(rows, |i, j| lo[[i + rows_from, j]], |i, j| bo[[row(i), j]]);
        let at = (s.at.0 + rows_from, s.at.1);
        main.add_stats(
            p,
            &s,
            (lo[at].to_f64(), bo[[row(s.at.0), s.at.1]].to_f64()),
            rows_from,
        );
        times.outputs += t.elapsed().as_secs_f64();
        let t = Instant::now();
        if out.weights.len() != base.weights.len() {
            return Err(Error::shape(
                "weights per head",
                base.weights.len().to_string(),
                out.weights.len().to_string(),
            ));
        }
        for ((tr, l), b) in heads.iter_mut().zip(&out.weights).zip(&base.weights) {
            ensure_finite(l)?;
            if l.dim() != (n, n) || b.dim() != (n, n) {
                return Err(Error::shape(
                    "Π A Πᵀ",
                    format!("{n}×{n}"),
                    format!("{}×{}", l.nrows(), l.ncols()),
                ));
            }
            let s = conjugate_stats(l.view(), b.view(), p);
            record(tr, p, &s, l[s.at], b[[p[s.at.0], p[s.at.1]]]);
        }
        times.weights += t.elapsed().as_secs_f64();
        done += 1;
        Ok(())
    })?;
    let tol = Tolerance::for_layer::<T>(n, d, max_abs(&base.output));
    let report = main.finish::<T>(property, tol);
    let weight_heads = heads
        .into_iter()
        .zip(&base.weights)
        .map(|(tr, b)| {
            let tol = Tolerance::for_layer::<T>(n, d, max_abs(b));
            tr.finish::<T>(Property::WeightEquivariance, tol)
        })
        .collect();
    Ok(Pass {
        report,
        weight_heads,
        base,
        times,
    })
}

/// A layer computing only some rows of its output: `(H, at, rows) ↦ f(H)[rows]`, told the
/// positions `H`'s rows hold (as [`LayerAt`]).
pub type LayerRowsAt<'a, T> =
    dyn FnMut(ArrayView2<T>, &[usize], &[usize]) -> Result<Array2<T>> + 'a;

/// The output form `f(ΠH) = Π f(H)` compared on the output rows `rows` only: per permutation
/// (identities skipped with `skip_identity`), `f(ΠH)[rows]` against `f(H)[Π rows]` (row i of
/// `Π f(H)` is row `perm[i]` of `f(H)`), two forwards that attend only those rows. For a layer
/// whose rows are bit-identical to the whole output's ([`crate::attention::Attention::forward_rows`])
/// the differences are exactly those [`shared_pass_at`] finds on these rows, so the error is a
/// lower bound of the whole check's (equal when `rows` holds the worst row). The tolerance is
/// [`Tolerance::for_layer`] on `scale` when given (the whole `f(H)`'s max, known from another
/// pass), else on the largest `|f(H)|` of the compared rows. `tick` as in [`shared_pass`].
///
/// # Errors
/// Whatever `forward` or `tick` return, a non-finite result, no permutation, a permutation of
/// the wrong length, no row, or a result whose shape is not `rows.len()` rows.
#[allow(clippy::too_many_arguments)]
pub fn sampled_pass_at<T: Real>(
    forward: &mut LayerRowsAt<'_, T>,
    h: ArrayView2<T>,
    perms: Perms<'_>,
    skip_identity: bool,
    rows: &[usize],
    scale: Option<f64>,
    tick: &mut dyn FnMut(usize) -> Result<()>,
) -> Result<CheckReport> {
    let (n, d) = h.dim();
    if let Perms::List(l) = perms {
        super::check::need_perms(l, n)?;
    }
    if rows.is_empty() {
        return Err(Error::invalid("compared rows", "none", "at least one row"));
    }
    let mut main = Tracker::new(n);
    let mut px = h.to_owned();
    let mut base_rows = vec![0; rows.len()];
    let mut seen_scale = 0.0f64;
    let identity: Vec<usize> = (0..n).collect();
    let mut done = 0usize;
    perms.for_each(skip_identity, |p| {
        tick(done)?;
        for (b, &i) in base_rows.iter_mut().zip(rows) {
            *b = p[i];
        }
        let base = forward(h, &identity, &base_rows)?;
        for (i, &pi) in p.iter().enumerate() {
            px.row_mut(i).assign(&h.row(pi));
        }
        let out = forward(px.view(), p, rows)?;
        ensure_finite(&base)?;
        ensure_finite(&out)?;
        if out.dim() != base.dim() || out.nrows() != rows.len() {
            return Err(Error::shape(
                "comparison",
                format!("{} rows × {}", rows.len(), base.ncols()),
                format!("{:?}", out.dim()),
            ));
        }
        seen_scale = seen_scale.max(max_abs(&base));
        let s = compare_by(out.dim(), |i, j| out[[i, j]], |i, j| base[[i, j]]);
        let (li, j) = s.at;
        let global = DiffStats {
            at: (rows[li], j),
            ..s
        };
        main.add_stats(
            p,
            &global,
            (out[[li, j]].to_f64(), base[[li, j]].to_f64()),
            0,
        );
        done += 1;
        Ok(())
    })?;
    let tol = Tolerance::for_layer::<T>(n, d, scale.unwrap_or(seen_scale));
    Ok(main.finish::<T>(Property::Equivariance, tol))
}

/// [`compare_by`] of `l` with `Π b Πᵀ` (entry (i, j) is `b[p[i], p[j]]`), row by row over
/// slices, blocks of rows on rayon's pool: the n × n weight form is the largest comparison of a
/// check. Both arrays are finite (the pass checks them first), so every difference is finite
/// and merging the blocks in row order — a later block's max replaces the running one only
/// when strictly larger — gives the first max in row-major order, as the sequential walk.
fn conjugate_stats<T: Real>(l: ArrayView2<T>, b: ArrayView2<T>, p: &[usize]) -> DiffStats {
    use rayon::prelude::*;
    let n = l.nrows();
    let rows_per_block = 64;
    let row = |acc: &mut DiffAcc, i: usize| {
        let (lrow, brow) = (l.row(i), b.row(p[i]));
        match (lrow.as_slice(), brow.as_slice()) {
            (Some(ls), Some(bs)) => {
                for (j, (&x, &pj)) in ls.iter().zip(p).enumerate() {
                    let y = bs[pj];
                    if x != y {
                        acc.push_differing(i, j, x, y);
                    }
                }
            }
            _ => {
                for (j, (&x, &pj)) in lrow.iter().zip(p).enumerate() {
                    let y = brow[pj];
                    if x != y {
                        acc.push_differing(i, j, x, y);
                    }
                }
            }
        }
    };
    let blocks: Vec<DiffAcc> = (0..n.div_ceil(rows_per_block))
        .into_par_iter()
        .map(|k| {
            let mut acc = DiffAcc::new();
            for i in k * rows_per_block..((k + 1) * rows_per_block).min(n) {
                row(&mut acc, i);
            }
            acc
        })
        .collect();
    let mut total = DiffAcc::new();
    for blk in blocks {
        total.merge(blk);
    }
    // Every entry of `b` is compared once (rows and columns both permuted), so the scale is
    // max |b|, found by the vectorised scan instead of entry by entry.
    total.set_scale(max_abs_view(b));
    total.finish()
}

fn record<T: Real>(tr: &mut Tracker, p: &[usize], s: &DiffStats, lhs: T, rhs: T) {
    tr.add_stats(p, s, (lhs.to_f64(), rhs.to_f64()), 0);
}

/// The positive control of a pass: `f(ΠH)` for Π = identity is `f(H)` — the same input
/// through the same arithmetic, so it is the pass's own `f(H)`, not a second forward — compared
/// with `Π f(H) = f(H)` through the comparison every permutation goes through; it must give
/// exactly 0. (That the forward itself is deterministic — the same bits for the same input, in
/// any thread count — is pinned by the attention tests.)
pub fn identity_check<T: Real>(pass: &Pass<T>, n: usize) -> CheckReport {
    let b = &pass.base.output;
    let s = compare_by(b.dim(), |i, j| b[[i, j]], |i, j| b[[i, j]]);
    let mut tr = Tracker::new(n);
    let id: Vec<usize> = (0..n).collect();
    record(&mut tr, &id, &s, b[s.at], b[s.at]);
    tr.finish::<T>(pass.report.property, pass.report.tolerance_detail.clone())
}

/// The positive control recomputed: `f(H)` once more, compared with the pass's own `f(H)` (rows
/// from `rows_from` on). A caller's layer may not be deterministic (dropout in training mode,
/// unseeded noise): then the same input gives another output and this control fails.
///
/// # Errors
/// Whatever `forward` returns, a non-finite result, or a result of another shape.
pub fn identity_recomputed<T: Real>(
    forward: &mut LayerAt<'_, T>,
    h: ArrayView2<T>,
    pass: &Pass<T>,
    rows_from: usize,
) -> Result<CheckReport> {
    let n = h.nrows();
    let id: Vec<usize> = (0..n).collect();
    let mut again = Forward::empty();
    forward(h, &id, &mut again)?;
    ensure_finite(&again.output)?;
    let (a, b) = (&again.output, &pass.base.output);
    if a.dim() != b.dim() || rows_from > a.nrows() {
        return Err(Error::shape(
            "f(H) computed twice",
            format!("{:?}", b.dim()),
            format!("{:?}", a.dim()),
        ));
    }
    let s = compare_by(
        (a.nrows() - rows_from, a.ncols()),
        |i, j| a[[i + rows_from, j]],
        |i, j| b[[i + rows_from, j]],
    );
    let mut tr = Tracker::new(n);
    let at = (s.at.0 + rows_from, s.at.1);
    tr.add_stats(&id, &s, (a[at].to_f64(), b[at].to_f64()), rows_from);
    Ok(tr.finish::<T>(pass.report.property, pass.report.tolerance_detail.clone()))
}

/// The error of one permutation entry by entry, in f64: `f(ΠH) − Π f(H)` (equivariance) or
/// `f(ΠH) − f(H)` (invariance, the prefix check), over the output rows from `rows_from` on, with
/// `base` the pass's own `f(H)`. One forward. The diagnosis compares two of these — the same
/// permutation in the two precisions — to tell a reproducible (structural) error from round-off.
///
/// # Errors
/// Whatever `forward` returns, a non-finite result, or a result of another shape.
pub fn error_matrix<T: Real>(
    forward: &mut LayerAt<'_, T>,
    h: ArrayView2<T>,
    base: &Forward<T>,
    perm: &[usize],
    property: Property,
    rows_from: usize,
) -> Result<Array2<f64>> {
    let mut px = h.to_owned();
    for (i, &pi) in perm.iter().enumerate() {
        px.row_mut(i).assign(&h.row(pi));
    }
    let mut out = Forward::empty();
    forward(px.view(), perm, &mut out)?;
    ensure_finite(&out.output)?;
    let (lo, bo) = (&out.output, &base.output);
    if lo.dim() != bo.dim() || rows_from > lo.nrows() {
        return Err(Error::shape(
            "comparison",
            format!("{:?}", bo.dim()),
            format!("{:?}", lo.dim()),
        ));
    }
    let equi = property == Property::Equivariance;
    Ok(Array2::from_shape_fn(
        (lo.nrows() - rows_from, lo.ncols()),
        |(i, j)| {
            let r = if equi { perm[i] } else { i + rows_from };
            lo[[i + rows_from, j]].to_f64() - bo[[r, j]].to_f64()
        },
    ))
}

/// Future independence, the other half of what a causal layer promises: for every cut c of
/// `cuts`, the outputs at positions before c do not move when the tokens at c and after
/// change (each such row of `H` negated). Compares `f(H')[..c]` with the pass's own
/// `f(H)[..c]`; one forward per cut; the tolerance is sized on `f(H)` as every check's.
///
/// # Errors
/// Whatever `forward` returns, a non-finite result, a cut outside 1..n, or no cut.
pub fn future_pass<T: Real>(
    forward: &mut LayerAt<'_, T>,
    h: ArrayView2<T>,
    base: &Forward<T>,
    cuts: &[usize],
) -> Result<CheckReport> {
    let (n, d) = h.dim();
    if cuts.is_empty() || cuts.iter().any(|&c| c == 0 || c >= n) {
        return Err(Error::invalid(
            "cut position",
            format!("{cuts:?}"),
            format!("cuts in 1..{n} (positions before the cut are compared)"),
        ));
    }
    let id: Vec<usize> = (0..n).collect();
    let b = &base.output;
    let mut tr = Tracker::new(n);
    let mut out = Forward::empty();
    for &c in cuts {
        let mut changed = h.to_owned();
        changed.slice_mut(ndarray::s![c.., ..]).mapv_inplace(|v| -v);
        forward(changed.view(), &id, &mut out)?;
        ensure_finite(&out.output)?;
        let a = &out.output;
        same_shape(a.dim(), b.dim())?;
        let s = compare_by((c, a.ncols()), |i, j| a[[i, j]], |i, j| b[[i, j]]);
        tr.add_stats(&id, &s, (a[s.at].to_f64(), b[s.at].to_f64()), 0);
    }
    let tol = Tolerance::for_layer::<T>(n, d, max_abs(b));
    Ok(tr.finish::<T>(Property::FutureIndependence, tol))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::Mask;
    use crate::layer::{InputSpec, LayerSpec, PosKind, Readout};
    use crate::symmetry::{check_equivariance, check_invariance, check_weight_equivariance_heads};

    fn inputs(n: usize, d: usize, heads: usize) -> crate::layer::Inputs {
        InputSpec {
            n: Some(n),
            dim: Some(d),
            heads,
            seed: 7,
            ..InputSpec::default()
        }
        .build()
        .unwrap()
    }

    /// The shared pass gives exactly the reports of the independent checks (each recomputing
    /// its own forwards and building Π f(H), Π A Πᵀ): same errors, ulps, worst entry and
    /// tolerance, for heads, positions, masks and both float types.
    fn same_as_independent<T: Real>(spec: LayerSpec, n: usize, d: usize, heads: usize) {
        let inp = inputs(n, d, heads);
        let h = inp.x.mapv(T::from_f64);
        let mut perms = Permutation::random(n, 5, 3, true).unwrap();
        perms.push(Permutation::identity(n));
        let f = spec.build::<T>(&inp).unwrap();
        let full = spec.attention_fn::<T>(&inp).unwrap();
        let mut fwd = |x: ArrayView2<T>, out: &mut Forward<T>| {
            let r = full(x)?;
            out.output = r.output;
            out.weights = r.weights;
            Ok(())
        };
        let pass = shared_pass(
            &mut fwd,
            h.view(),
            Perms::List(&perms),
            false,
            Property::Equivariance,
            &mut |_| Ok(()),
        )
        .unwrap();
        let old = check_equivariance(&f, h.view(), &perms).unwrap();
        assert_eq!(pass.report, old);
        let old_w =
            check_weight_equivariance_heads(|x| Ok(full(x)?.weights), h.view(), &perms).unwrap();
        assert_eq!(pass.weight_heads, old_w);
        assert_eq!(pass.weight_heads.len(), heads);
        // The identity control from f(H) equals the old identity check (a second forward).
        let id = check_equivariance(&f, h.view(), &[Permutation::identity(n)]).unwrap();
        assert_eq!(identity_check(&pass, n), id);
        assert_eq!(id.max_abs_error, 0.0);
    }

    #[test]
    fn shared_pass_equals_independent_checks() {
        same_as_independent::<f32>(LayerSpec::default(), 9, 6, 1);
        // More rows than one block of the parallel weight comparison (64 rows).
        same_as_independent::<f32>(LayerSpec::default(), 150, 4, 1);
        same_as_independent::<f64>(LayerSpec::default(), 9, 6, 1);
        let rope_causal = LayerSpec {
            pos: PosKind::Rope,
            mask: Mask::Causal,
            ..LayerSpec::default()
        };
        same_as_independent::<f32>(rope_causal, 7, 8, 2);
        let index = LayerSpec {
            pos: PosKind::Index,
            ..LayerSpec::default()
        };
        same_as_independent::<f64>(index, 6, 4, 2);
    }

    #[test]
    fn shared_invariance_and_fused_path_equal_independent_checks() {
        let inp = inputs(6, 4, 1);
        let h = inp.x.mapv(|v| v as f32);
        let perms = Permutation::all(6).unwrap();
        for readout in [Readout::Mean, Readout::Row(2)] {
            let spec = LayerSpec {
                readout,
                ..LayerSpec::default()
            };
            let f = spec.build_fused::<f32>(&inp).unwrap();
            let mut fwd = |x: ArrayView2<f32>, out: &mut Forward<f32>| {
                out.output = f(x)?;
                Ok(())
            };
            let pass = shared_pass(
                &mut fwd,
                h.view(),
                Perms::All(6),
                false,
                Property::Invariance,
                &mut |_| Ok(()),
            )
            .unwrap();
            assert_eq!(pass.report, check_invariance(&f, h.view(), &perms).unwrap());
            assert!(pass.weight_heads.is_empty());
        }
    }

    #[test]
    fn exhaustive_at_eight_visits_all_40320_permutations_and_skips_the_identity_on_request() {
        let h = Array2::from_shape_fn((8, 3), |(i, j)| (i * 3 + j) as f64);
        let mut fwd = |x: ArrayView2<f64>, out: &mut Forward<f64>| {
            out.output = x.mapv(|v| 2.0 * v);
            Ok(())
        };
        let mut ticks = 0usize;
        let pass = shared_pass(
            &mut fwd,
            h.view(),
            Perms::All(8),
            false,
            Property::Equivariance,
            &mut |_| {
                ticks += 1;
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(Perms::All(8).len(), 40_320);
        assert_eq!(pass.report.permutations_checked, 40_320);
        assert_eq!(ticks, 40_321, "one tick per forward, f(H) included");
        assert_eq!(pass.report.max_abs_error, 0.0);
        let skip = shared_pass(
            &mut fwd,
            h.view(),
            Perms::All(8),
            true,
            Property::Equivariance,
            &mut |_| Ok(()),
        )
        .unwrap();
        assert_eq!(skip.report.permutations_checked, 40_319);
        assert_eq!(Perms::All(8).non_identity_count(), 40_319);
    }

    #[test]
    fn a_broken_layer_reports_the_worst_permutation_like_the_independent_check() {
        // f(H) adds the row index: not equivariant; worst entries must match the old checker.
        let h = Array2::from_shape_fn((5, 2), |(i, j)| (i as f64).sin() + j as f64);
        let f = |x: ArrayView2<f64>| -> Result<Array2<f64>> {
            Ok(Array2::from_shape_fn(x.dim(), |(i, j)| {
                x[[i, j]] + i as f64
            }))
        };
        let mut fwd = |x: ArrayView2<f64>, out: &mut Forward<f64>| {
            out.output = f(x)?;
            Ok(())
        };
        let perms = Permutation::all(5).unwrap();
        let pass = shared_pass(
            &mut fwd,
            h.view(),
            Perms::All(5),
            false,
            Property::Equivariance,
            &mut |_| Ok(()),
        )
        .unwrap();
        let old = check_equivariance(f, h.view(), &perms).unwrap();
        assert_eq!(pass.report, old);
        assert!(!old.holds);
    }

    #[test]
    fn a_cancelling_tick_stops_the_pass() {
        let h = Array2::<f64>::zeros((4, 2));
        let mut fwd = |x: ArrayView2<f64>, out: &mut Forward<f64>| {
            out.output = x.to_owned();
            Ok(())
        };
        let e = shared_pass(
            &mut fwd,
            h.view(),
            Perms::All(4),
            false,
            Property::Equivariance,
            &mut |k| {
                if k >= 3 {
                    Err(Error::cancelled("test"))
                } else {
                    Ok(())
                }
            },
        )
        .unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Cancelled);
    }
}
