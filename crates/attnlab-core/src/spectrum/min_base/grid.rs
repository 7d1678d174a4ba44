//! The earlier minimum-base search on a log grid of bases, kept for comparison with the
//! certified sweep of [`super`] (`rope audit --min-base-grid`).
//!
//! The criterion is not monotone in b: the passing bases form narrow islands (for d = 128,
//! L = 1024: [4294.6, 4332.6), then [5603.5, 5645.4), …; at L = 4096 one island is only 0.07%
//! wide), so bisection over a wide range is wrong. Search:
//! 1. a coarse log grid b = 2·r^i, r = `coarse_ratio` (default 1.0005, i.e. 0.05%), in
//!    increasing order, up to the first base that passes. Each failing base is rejected as
//!    cheaply as possible, by the sweep's witness search: first ±32 separations around where
//!    recent bases failed (as they were and scaled by b/b_then, since the dips of B move
//!    roughly in proportion to b), then strided passes over the context (every 64th, 16th, 4th
//!    separation) and finally the full ordered scan — all sound, as a base is only ever
//!    rejected on a real negative B(m);
//! 2. a fine log grid (ratio 1 + (r − 1)/4) between that base and the failing grid point below
//!    it — the first fine point that passes, with its failing predecessor, is the bracket;
//! 3. bisection of that bracket to a relative width of 1e-5 (inside the narrow bracket the
//!    first sign change is assumed to be the only one).
//!
//! Islands of passing bases narrower than the coarse ratio (0.05%) below the answer can be
//! missed (with a 0.2% grid this happens at L = 4096 and 2²⁰, see `tests/rope_min_base.rs`; at
//! 0.05% our values still differ from Su's at 256k and 512k); the published table has two
//! significant digits. B is evaluated in f64 by the rotation recurrence of
//! [`super::super::decay::scan_b_step`].

use super::{find_witness, push_hint, with_progress, Grid, MinBase};
use crate::spectrum::decay::default_freqs;
use crate::spectrum::Watch;
use crate::{Error, Result};

/// Relative width the bisection narrows the final bracket to.
pub(super) const PRECISION: f64 = 1e-5;

/// Grid point `i` of the coarse scan: 2·ratioⁱ.
fn grid_base(ratio: f64, i: usize) -> f64 {
    2.0 * ratio.powi(i as i32)
}

/// The last grid index searched (bases up to 10¹⁵).
fn last_grid_index(ratio: f64) -> usize {
    ((1e15f64 / 2.0).ln() / ratio.ln()).floor() as usize
}

/// The coarse scan: the smallest grid index whose base passes, or `None` up to 10¹⁵.
///
/// W = rayon's thread count streams take the grid points k, k + W, k + 2W, … (k < W) in
/// increasing order, each keeping its own hints (which stay local because its points are
/// close), and stop once they pass the best passing index found so far. A stream only stops
/// at an index ≥ the answer, so every index below the answer is evaluated and fails, and the
/// answer itself is evaluated by its stream: the result is the sequential scan's for any W.
/// Each stream reports progress (the largest failed index over the last one) and stops when
/// `watch` says so.
fn coarse_scan(dim: usize, context: u64, ratio: f64, watch: &Watch) -> Result<Option<usize>> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let last = last_grid_index(ratio);
    let best = AtomicUsize::new(usize::MAX);
    let done = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let streams = rayon::current_num_threads().max(1);
    rayon::scope(|scope| {
        for k in 0..streams {
            let (best, done, stop) = (&best, &done, &stop);
            scope.spawn(move |_| {
                let mut hints = Vec::new();
                let mut i = k;
                while i <= last && i < best.load(Ordering::Relaxed) {
                    if stop.load(Ordering::Relaxed) || (watch.cancelled)() {
                        stop.store(true, Ordering::Relaxed);
                        return;
                    }
                    if !fails(grid_base(ratio, i), dim, context, &mut hints) {
                        best.fetch_min(i, Ordering::Relaxed);
                        return;
                    }
                    let d = done.fetch_max(i, Ordering::Relaxed).max(i);
                    (watch.progress)(d as f64 / last as f64);
                    i += streams;
                }
            });
        }
    });
    if stop.load(Ordering::Relaxed) {
        return Err(Error::cancelled("the minimum-base search"));
    }
    let b = best.load(Ordering::Relaxed);
    Ok((b != usize::MAX).then_some(b))
}

/// Whether some m in 1..L has B_b(m) < 0 for default frequencies of base b: the sweep's
/// witness search ([`super::find_witness`]: near where earlier bases failed — as they were and
/// scaled by b/b_earlier, since the dips of B move proportionally to b — then a complete ordered
/// scan), which is sound (a hint only ever rejects on a clearly negative value), so the answer
/// does not depend on the hints (they only make it faster).
fn fails(base: f64, dim: usize, context: u64, hints: &mut Vec<(f64, u64)>) -> bool {
    let ws = default_freqs(base, dim);
    let witness = find_witness(&ws, base, context, hints, &mut 0, false);
    witness.inspect(|&m| push_hint(hints, (base, m))).is_some()
}

/// Finest coarse grid ratio accepted (0.01%): five times the default's cost; a ratio closer to 1
/// only multiplies the run time (1.0000001 would take hours) for islands narrower than any
/// base a configuration would state.
pub const MIN_GRID_RATIO: f64 = 1.0001;

/// Default coarse grid ratio of the minimum-base search (0.05%).
pub const DEFAULT_GRID_RATIO: f64 = 1.0005;

/// [`super::min_base_for_context`] with a chosen coarse grid ratio `grid` (> 1; the fine grid inside
/// the bracket is `1 + (grid − 1)/4`). A finer grid finds narrower islands of passing bases at a
/// cost: 1.0005 (the default) finds the 0.07%-wide islands at L = 4096 (26 953) and L = 2²⁰
/// (6.54e7) that 1.002 steps over.
///
/// # Errors
/// As [`super::min_base_for_context`]; `grid` not in [[`MIN_GRID_RATIO`], 2].
pub fn min_base_for_context_on_grid(
    dim: usize,
    context: u64,
    grid: f64,
    progress: impl FnMut(f64) + Send,
) -> Result<MinBase> {
    with_progress(progress, |watch| min_base_search(dim, context, grid, watch))
}

/// [`min_base_for_context_on_grid`] observed by `watch`: progress (fractions in [0, 1], from
/// several threads) and cancellation, checked before every base evaluated. The result does not
/// depend on the number of rayon threads (see `coarse_scan`).
///
/// # Errors
/// As [`min_base_for_context_on_grid`]; [`crate::ErrorKind::Cancelled`] once `watch` says so.
pub fn min_base_search(dim: usize, context: u64, grid: f64, watch: &Watch) -> Result<MinBase> {
    if !(MIN_GRID_RATIO..=2.0).contains(&grid) {
        return Err(Error::invalid(
            "min-base grid ratio",
            grid,
            "a ratio in [1.0001, 2], e.g. 1.0005 (the default); the cost grows like 1/(ratio − 1)",
        ));
    }
    if dim == 0 || !dim.is_multiple_of(2) {
        return Err(Error::invalid(
            "rotary dimension",
            dim,
            "an even number ≥ 2",
        ));
    }
    if context == 0 {
        return Err(Error::invalid(
            "context",
            0,
            "a positive number of positions",
        ));
    }
    let (coarse, fine) = (grid, 1.0 + (grid - 1.0) / 4.0);
    let mut hints = Vec::new();
    let found = coarse_scan(dim, context, coarse, watch)?;
    // Bases the sequential search evaluates: every grid point up to the answer (or all).
    let mut evals = found.map_or(last_grid_index(coarse), |i| i) + 1;
    let prev = match found {
        Some(0) => None,
        Some(i) => Some(grid_base(coarse, i - 1)),
        None => Some(grid_base(coarse, last_grid_index(coarse))),
    };
    let found = found.map(|i| grid_base(coarse, i));
    let grid = |base: Option<f64>, failing_below: Option<f64>, evaluations: usize| {
        MinBase::Grid(Grid {
            base,
            failing_below,
            coarse_ratio: coarse,
            fine_ratio: fine,
            evaluations,
        })
    };
    let Some(mut good) = found else {
        return Ok(grid(None, prev, evals));
    };
    let mut bad = match prev {
        Some(p) => p,
        None => return Ok(grid(Some(good), None, evals)),
    };
    // Fine grid inside (bad, good].
    let mut x = bad * fine;
    while x < good {
        watch.check("the minimum-base search")?;
        evals += 1;
        if !fails(x, dim, context, &mut hints) {
            good = x;
            break;
        }
        bad = x;
        x *= fine;
    }
    while good / bad - 1.0 > PRECISION {
        let mid = (bad * good).sqrt();
        watch.check("the minimum-base search")?;
        evals += 1;
        if fails(mid, dim, context, &mut hints) {
            bad = mid;
        } else {
            good = mid;
        }
    }
    (watch.progress)(1.0);
    Ok(grid(Some(good), Some(bad), evals))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spectrum::decay::first_negative;

    #[test]
    fn the_grid_answer_is_a_sign_boundary() {
        // The answer passes, the bracket's lower end fails, and they are within 1e-5 relative.
        let r = min_base_for_context_on_grid(16, 512, DEFAULT_GRID_RATIO, |_| {}).unwrap();
        let (good, bad) = (r.base().unwrap(), r.failing_below().unwrap());
        assert!(first_negative(&default_freqs(good, 16), 512).is_none());
        assert!(first_negative(&default_freqs(bad, 16), 512).is_some());
        assert!(good / bad - 1.0 <= 1e-5 * 1.0001);
    }
}
