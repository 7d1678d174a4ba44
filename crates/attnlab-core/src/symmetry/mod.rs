//! Symmetry: permutations of positions and the checker for equivariance and invariance.
//!
//! Seed 000's central fact is `Attn(ΠH) = Π Attn(H)` for an unmasked layer without positions;
//! seed 002 adds the weight form `A(ΠH) = Π A(H) Πᵀ`. [`check_equivariance`] and friends test
//! such statements for any layer given as a function of `H`, and report the evidence.

mod check;
mod permutation;
mod shared;

pub use check::{
    check_equivariance, check_future_independence, check_invariance, check_prefix_invariance,
    check_weight_equivariance, check_weight_equivariance_heads, compare, compare_by,
    ensure_finite_values, CheckReport, Diff, DiffStats, Property, Tolerance, Verdict, Worst,
    LAYER_OUTPUT, OPPOSITE_SIGNS,
};
pub use permutation::Permutation;
pub use shared::{
    error_matrix, future_pass, identity_check, identity_recomputed, sampled_pass_at, shared_pass,
    shared_pass_at, Forward, LayerAt, LayerInto, LayerRowsAt, Pass, PassTimes, Perms,
};
