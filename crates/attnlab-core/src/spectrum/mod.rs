//! Periods, resolution, decay and precision of rotary frequency sets, and the audit that puts
//! them together.
//!
//! * [`angle`] — the phase functions of [`crate::phase`] under their older path.
//! * [`identity`] — the relative-position identity and translation invariance per dtype.
//! * [`period`] — exact periods and continued-fraction near-repeats of one frequency.
//! * [`resolve`] — which separations a set distinguishes from 0 within a context.
//! * [`decay`] — the long-distance decay criterion B(m) = Σ cos(mω_k) and the minimum base.
//! * [`precision`] — what f32 / bf16 / f16 do to position ids and cos/sin caches.
//! * [`audit`] — all of the above for one configuration, with a plain-language verdict.

pub mod angle;
pub mod audit;
pub mod decay;
pub mod extrapolation;
pub mod identity;
pub mod min_base;
pub mod mrope_layout;
pub mod period;
pub mod precision;
pub mod resolve;

use crate::{Error, Result};

/// How a long computation reports progress and learns that it should stop (a front end's
/// progress bar and Ctrl-C, via `api::Context`). Both callbacks may be called from several
/// threads at once.
pub struct Watch<'a> {
    /// Called with the fraction done, in [0, 1].
    pub progress: &'a (dyn Fn(f64) + Sync),
    /// Returns `true` once the computation should stop.
    pub cancelled: &'a (dyn Fn() -> bool + Sync),
}

impl Default for Watch<'_> {
    /// No progress shown, never cancelled.
    fn default() -> Self {
        Watch {
            progress: &|_| {},
            cancelled: &|| false,
        }
    }
}

impl Watch<'_> {
    /// An error once the computation should stop.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Cancelled`] naming `what`.
    pub fn check(&self, what: &str) -> Result<()> {
        if (self.cancelled)() {
            Err(Error::cancelled(what))
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::Dtype;
    use crate::position::frequencies::{Omega, RotaryFrequencies};
    use crate::position::rotary::separations_like_zero;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool")
    }

    #[test]
    fn results_do_not_depend_on_the_thread_count() {
        // The parallel parts — the minimum-base search (coarse streams, blocked scans), the
        // cache-row keys and counts, and the whole audit built on them — run in pools of 1, 2
        // and 3 threads and must give identical results (the JSON compares every field,
        // including the number of bases evaluated).
        let slow = [Omega::float(1e-3).unwrap(), Omega::float(1e-4).unwrap()];
        let coarse = RotaryFrequencies::from_omegas(&slow);
        let f = RotaryFrequencies::from_base(10000.0, 16).unwrap();
        let opts = audit::AuditOptions {
            context: 3000,
            dtype: Dtype::Bf16,
            tol: resolve::DEFAULT_TOL,
            min_base: true,
            min_base_grid: min_base::DEFAULT_GRID_RATIO,
            ..Default::default()
        };
        let run = || {
            let min_base = min_base::min_base_for_context_on_grid(16, 512, 1.0005, |_| {}).unwrap();
            // 40 000 positions: three blocks of row keys; bf16 rows of this slow set repeat.
            let rows = precision::cache_rows(&coarse, 40_000, &Dtype::ALL);
            let report = audit::audit(&f, None, &opts, &Watch::default()).unwrap();
            (min_base, rows, serde_json::to_string(&report).unwrap())
        };
        let one = pool(1).install(run);
        assert!(
            one.0.base().is_some() && one.1[2].1.is_some(),
            "{:?}",
            one.1
        );
        assert_eq!(one, pool(2).install(run));
        assert_eq!(one, pool(3).install(run));
    }

    #[test]
    fn the_minimum_base_search_stops_when_cancelled() {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let cancelled = || calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 5;
        let watch = Watch {
            progress: &|_| {},
            cancelled: &cancelled,
        };
        let e = min_base::min_base_search(128, 4096, 1.0005, &watch).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Cancelled);
        assert!(e.to_string().contains("minimum-base search"), "{e}");
    }

    #[test]
    fn score_and_resolve_agree_on_separations_like_zero() {
        // ω = 1e-7: s·ω ≤ 5e-7 rad for s ≤ 5, within the old score tolerance (|cos − 1| ≤ 1e-12
        // admits 1.4e-6 rad) but far outside 1e-9 rad: resolve distinguishes them, so must score.
        let w = [Omega::float(1e-7).unwrap()];
        assert_eq!(
            separations_like_zero(&w, 5, 1e-9).unwrap(),
            Vec::<u64>::new()
        );
        let r = super::resolve::resolve(&w, 6, 1e-9).unwrap();
        assert!(r.resolves);
        // And where resolve finds an alias, the score criterion lists exactly that separation.
        let set = [Omega::parse("pi/2").unwrap(), Omega::parse("pi/3").unwrap()];
        let r = super::resolve::resolve(&set, 13, 1e-9).unwrap();
        assert_eq!(
            separations_like_zero(&set, 12, 1e-9).unwrap(),
            vec![r.first_alias.unwrap()]
        );
        assert!(separations_like_zero(&set, 12, 0.0).is_err());
    }
}
