//! Criterion benchmark of the attention forward pass (f32/f64, n up to 4096, d up to 128).
//! The side-by-side ratio against the course's numpy code is `bench/compare_attention.py`.

use attnlab_core::attention::{Attention, Mask};
use attnlab_core::rng::{Gaussian, StdGaussian};
use attnlab_core::Real;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn bench_dtype<T: Real>(c: &mut Criterion) {
    let mut group = c.benchmark_group(format!("attention_forward_{}", T::NAME));
    group.sample_size(10);
    for &(n, d) in &[(64usize, 64usize), (256, 64), (1024, 128), (4096, 128)] {
        let mut g = StdGaussian::new(0);
        let cast = |a: ndarray::Array2<f64>| a.mapv(T::from_f64);
        let layer = Attention::single(
            cast(g.randn(d, d)),
            cast(g.randn(d, d)),
            cast(g.randn(d, d)),
            Mask::None,
        )
        .unwrap();
        let x = cast(g.randn(n, d));
        // Work: 3 projections (2·n·d² flops each) + scores and weights·V (2·n²·d each).
        group.throughput(Throughput::Elements((6 * n * d * d + 4 * n * n * d) as u64));
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("n{n}_d{d}")),
            &x,
            |b, x| b.iter(|| layer.forward(x.view()).unwrap()),
        );
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    bench_dtype::<f64>(c);
    bench_dtype::<f32>(c);
}

criterion_group!(attention, benches);
criterion_main!(attention);
