//! Criterion benchmarks of the attention forward: the fused kernel
//! (`Attention::forward_output_only`), the weights path (`Attention::forward`), the earlier
//! unfused ndarray path (`forward_unfused_with`) and, at the smallest shape, the loop reference
//! (`self_attention_reference`); f32 and f64, unmasked and causal. The side-by-side ratios
//! against numpy and torch are `bench/compare`.

use attnlab_core::attention::{self_attention_reference, Attention, Mask};
use attnlab_core::rng::{Gaussian, StdGaussian};
use attnlab_core::Real;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ndarray::{Array2, ArrayView2};

fn bench_dtype<T: Real>(c: &mut Criterion) {
    let mut group = c.benchmark_group(format!("attention_forward_{}", T::NAME));
    group.sample_size(10);
    for &(n, d) in &[(256usize, 64usize), (1024, 128), (4096, 128)] {
        let mut g = StdGaussian::new(0);
        let s = 1.0 / (d as f64).sqrt();
        let cast = |a: Array2<f64>| a.mapv(T::from_f64);
        let (wq, wk, wv) = (
            cast(g.randn(d, d) * s),
            cast(g.randn(d, d) * s),
            cast(g.randn(d, d) * s),
        );
        let x = cast(g.randn(n, d));
        for mask in [Mask::None, Mask::Causal] {
            let layer = Attention::single(wq.clone(), wk.clone(), wv.clone(), mask).unwrap();
            let m = if mask == Mask::Causal {
                "causal"
            } else {
                "none"
            };
            // Work: 3 projections (2·n·d² flops each) + scores and weights·V (2·n²·d each).
            group.throughput(Throughput::Elements((6 * n * d * d + 4 * n * n * d) as u64));
            let id = format!("n{n}_d{d}_{m}");
            group.bench_with_input(BenchmarkId::new("fused", &id), &x, |b, x| {
                b.iter(|| layer.forward_output_only(x.view()).unwrap())
            });
            group.bench_with_input(BenchmarkId::new("weights", &id), &x, |b, x| {
                b.iter(|| layer.forward(x.view()).unwrap())
            });
            let ident = |a: ArrayView2<T>| Ok(a.to_owned());
            group.bench_with_input(BenchmarkId::new("unfused", &id), &x, |b, x| {
                b.iter(|| layer.forward_unfused_with(x.view(), &ident).unwrap())
            });
            if n <= 256 {
                group.bench_with_input(BenchmarkId::new("reference", &id), &x, |b, x| {
                    b.iter(|| {
                        self_attention_reference(x.view(), wq.view(), wk.view(), wv.view(), mask)
                            .unwrap()
                    })
                });
            }
        }
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    bench_dtype::<f32>(c);
    bench_dtype::<f64>(c);
}

criterion_group!(attention, benches);
criterion_main!(attention);
