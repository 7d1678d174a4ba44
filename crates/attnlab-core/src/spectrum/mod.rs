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
pub mod identity;
pub mod period;
pub mod precision;
pub mod resolve;

#[cfg(test)]
mod tests {
    use crate::position::frequencies::Omega;
    use crate::position::rotary::separations_like_zero;

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
