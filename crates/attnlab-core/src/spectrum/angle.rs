//! The phase functions under their older path: they live in [`crate::phase`], a leaf module
//! shared with [`crate::position`] (which must not depend on `spectrum`).

pub use crate::phase::{
    exact_phase_distance, phase, phase_distance, reduce_angle, turns_fixed, turns_nearest,
};
