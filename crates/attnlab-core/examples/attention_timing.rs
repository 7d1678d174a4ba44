//! Times `Attention::forward` for one shape and prints the median seconds per call as JSON.
//! Used by `bench/compare_attention.py`, which times the course's numpy code on the same
//! shapes in the same run and prints the ratio.
//!
//! Usage: `cargo run --release --example attention_timing -- N D f32|f64 REPS`

use std::time::Instant;

use attnlab_core::attention::{Attention, Mask};
use attnlab_core::rng::{Gaussian, StdGaussian};
use attnlab_core::Real;

fn time<T: Real>(n: usize, d: usize, reps: usize) -> f64 {
    let mut g = StdGaussian::new(0);
    let cast = |a: ndarray::Array2<f64>| a.mapv(T::from_f64);
    let layer = Attention::single(
        cast(g.randn(d, d)),
        cast(g.randn(d, d)),
        cast(g.randn(d, d)),
        Mask::None,
    )
    .expect("valid shapes");
    let x = cast(g.randn(n, d));
    let _warm = layer.forward(x.view()).expect("forward");
    let mut times: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(layer.forward(x.view()).expect("forward"));
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 4 {
        eprintln!("usage: attention_timing N D f32|f64 REPS");
        std::process::exit(2);
    }
    let parse = |s: &str| -> usize {
        s.parse().unwrap_or_else(|_| {
            eprintln!("error: {s:?} is not a positive integer");
            std::process::exit(2)
        })
    };
    let (n, d, reps) = (parse(&args[0]), parse(&args[1]), parse(&args[3]).max(1));
    let median = match args[2].as_str() {
        "f64" => time::<f64>(n, d, reps),
        "f32" => time::<f32>(n, d, reps),
        other => {
            eprintln!("error: dtype {other:?}; expected f32 or f64");
            std::process::exit(2)
        }
    };
    println!(
        "{{\"n\": {n}, \"d\": {d}, \"dtype\": \"{}\", \"median_s\": {median}}}",
        args[2]
    );
}
