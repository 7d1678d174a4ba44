//! Property tests: seed 000's exercise 1 for any seed, length ≤ 12, width ≤ 16 and permutation.

use attnlab_core::experiment;
use attnlab_core::layer::{InputSpec, LayerSpec};
use attnlab_core::rng::RngKind;
use attnlab_core::symmetry::Permutation;
use attnlab_core::Dtype;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn bare_attention_is_equivariant(seed in 0u64..1000, n in 1usize..=12, d in 1usize..=16, shuffle_seed in 0u64..1000) {
        let inputs = InputSpec { n: Some(n), dim: Some(d), seed, rng: RngKind::Std, ..InputSpec::default() }.build().unwrap();
        let perms = if n == 1 { vec![Permutation::identity(1)] } else { Permutation::random(n, 3, shuffle_seed, true).unwrap() };
        for dtype in [Dtype::F64, Dtype::F32] {
            let r = experiment::check(&LayerSpec::default(), &inputs, &perms, dtype).unwrap();
            prop_assert!(r.holds, "{dtype:?}: error {:e} > tolerance {:e}", r.max_abs_error, r.tolerance);
        }
    }

    #[test]
    fn rnn_is_not_equivariant(seed in 0u64..1000, n in 2usize..=8, d in 2usize..=8, shuffle_seed in 0u64..1000) {
        let inputs = InputSpec { n: Some(n), dim: Some(d), seed, ..InputSpec::default() }.build().unwrap();
        let perms = Permutation::random(n, 1, shuffle_seed, true).unwrap();
        let spec = LayerSpec { kind: attnlab_core::layer::LayerKind::Rnn, ..LayerSpec::default() };
        let r = experiment::check(&spec, &inputs, &perms, Dtype::F64).unwrap();
        prop_assert!(!r.holds);
    }

    #[test]
    fn permutation_compose_inverse(v in Just((0..9usize).collect::<Vec<_>>()).prop_shuffle()) {
        let p = Permutation::new(v).unwrap();
        prop_assert!(p.compose(&p.inverse()).unwrap().is_identity());
        prop_assert_eq!(p.matrix().t().dot(&p.matrix()), ndarray::Array2::<f64>::eye(9));
    }
}
