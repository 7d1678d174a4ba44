//! Criterion benchmarks of `resolve` for float sets: the pruned search on the rotary set of
//! base 10000, d = 128 at L = 2²⁰ and 2²⁴, and a three-plane set at L = 2²⁰ that the pruning
//! cannot cut short, so it falls back to the full fixed-point scan. The side-by-side ratio
//! against the vectorised numpy scan is `bench/compare`.

use std::time::Duration;

use attnlab_core::position::frequencies::{Omega, RotaryFrequencies};
use attnlab_core::spectrum::resolve::resolve;
use criterion::{criterion_group, criterion_main, Criterion};

fn benches(c: &mut Criterion) {
    let f = RotaryFrequencies::from_base(10000.0, 128).expect("valid base and dim");
    let rotary: Vec<Omega> = f
        .inv_freq
        .iter()
        .map(|&w| Omega::float(w).expect("finite"))
        .collect();
    let three: Vec<Omega> = [1.0, 0.3, 0.05]
        .iter()
        .map(|&w| Omega::float(w).expect("finite"))
        .collect();
    let mut g = c.benchmark_group("resolve");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    for (name, set, l) in [
        ("rotary_base1e4_d128_2pow20", &rotary, 1u64 << 20),
        ("rotary_base1e4_d128_2pow24", &rotary, 1 << 24),
        ("three_planes_2pow20_fallback_scan", &three, 1 << 20),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| resolve(set, l, 1e-9).expect("resolves"))
        });
    }
    g.finish();
}

criterion_group!(resolve_benches, benches);
criterion_main!(resolve_benches);
