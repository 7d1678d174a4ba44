//! Periods, resolution, decay and precision of rotary frequency sets, and the audit that puts
//! them together.
//!
//! * [`angle`] — accurate phases m·ω/2π for huge m (double-double 1/2π).
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
