//! Criterion benchmarks of the `equivariance` command's core (`api::equivariance::run`): the
//! whole check with its evidence — the check and its weight form from shared forwards, the
//! controls, the f64 diagnosis — at one permutation (n = 1024 and the acceptance shape
//! n = 4096, d = 128, f32), and the exhaustive run over all 40 320 permutations at n = 8,
//! d = 64. The side-by-side ratio against numpy's two-forward job is `bench/compare`.

use std::time::Duration;

use attnlab_core::api::equivariance::{run, EquivarianceRequest};
use attnlab_core::api::layer_input::LayerInput;
use attnlab_core::api::Context;
use attnlab_core::limits::Limits;
use attnlab_core::Dtype;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

fn request(n: usize, dim: usize, samples: Option<usize>, exhaustive: bool) -> EquivarianceRequest {
    EquivarianceRequest {
        input: LayerInput {
            n: Some(n),
            dim: Some(dim),
            dtype: Dtype::F32,
            ..LayerInput::default()
        },
        samples,
        exhaustive,
        ..EquivarianceRequest::default()
    }
}

fn benches(c: &mut Criterion) {
    // These runs exceed the default work estimate; the benchmark lifts it.
    let ctx = Context {
        limits: Limits {
            max_work: u64::MAX,
            ..Limits::default()
        },
        ..Context::default()
    };
    let mut g = c.benchmark_group("equivariance");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    for (n, d) in [(1024usize, 128usize), (4096, 128)] {
        let req = request(n, d, Some(1), false);
        g.bench_with_input(
            BenchmarkId::new("one_permutation_f32", format!("n{n}_d{d}")),
            &req,
            |b, req| b.iter(|| run(req, &ctx).unwrap()),
        );
    }
    let req = request(8, 64, None, true);
    g.bench_with_input(
        BenchmarkId::new("exhaustive_f32", "n8_d64"),
        &req,
        |b, req| b.iter(|| run(req, &ctx).unwrap()),
    );
    g.finish();
}

criterion_group!(equivariance, benches);
criterion_main!(equivariance);
