//! Criterion benches of the rotary audit at L = 2²⁰, d = 128 (base 10000): the resolution scan,
//! the decay scan, the minimum-base search and the whole audit. Compare with
//! `bench/audit_numpy.py` via `bench/compare`.

use std::time::Duration;

use attnlab_core::numeric::Dtype;
use attnlab_core::position::frequencies::{Omega, RotaryFrequencies};
use attnlab_core::spectrum::audit::{audit, AuditOptions};
use attnlab_core::spectrum::decay::decay;
use attnlab_core::spectrum::min_base::min_base_for_context;
use attnlab_core::spectrum::resolve::resolve;
use attnlab_core::spectrum::Watch;
use criterion::{criterion_group, criterion_main, Criterion};

const L: u64 = 1 << 20;

fn benches(c: &mut Criterion) {
    let f = RotaryFrequencies::from_base(10000.0, 128).expect("valid base and dim");
    let set: Vec<Omega> = f
        .inv_freq
        .iter()
        .map(|&w| Omega::float(w).expect("finite"))
        .collect();
    let mut g = c.benchmark_group("audit_2pow20_d128");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    g.bench_function("resolve", |b| {
        b.iter(|| resolve(&set, L, 1e-9).expect("resolves"))
    });
    g.bench_function("decay", |b| {
        b.iter(|| decay(&f.inv_freq, L, 400).expect("decay"))
    });
    g.bench_function("audit_without_min_base", |b| {
        let o = AuditOptions {
            context: L,
            dtype: Dtype::Bf16,
            tol: 1e-9,
            min_base: false,
            min_base_grid: 1.0005,
            ..Default::default()
        };
        b.iter(|| audit(&f, None, &o, &Watch::default()).expect("audit"))
    });
    g.sample_size(10).measurement_time(Duration::from_secs(30));
    g.bench_function("min_base_for_context", |b| {
        b.iter(|| min_base_for_context(128, L, |_| {}).expect("search"))
    });
    g.finish();
}

criterion_group!(audit_benches, benches);
criterion_main!(audit_benches);
