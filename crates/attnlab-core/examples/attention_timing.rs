//! Times one attention forward on inputs read from `.npy` files and prints the median seconds per
//! call as JSON; optionally writes the output for an agreement check. Used by `bench/compare`,
//! which writes the inputs, times numpy (and torch) on the same arrays in the same run and prints
//! the ratios.
//!
//! Usage:
//! `cargo run --release --example attention_timing -- DIR f32|f64 none|causal fused|weights|unfused REPS [OUT.npy]`
//! where `DIR` holds `x.npy`, `wq.npy`, `wk.npy`, `wv.npy` of that dtype (one head, no `Wo`).
//! Modes: `fused` = [`Attention::forward_output_only`] (online softmax, no n × n matrix),
//! `weights` = [`Attention::forward`] (also returns `A`), `unfused` =
//! [`Attention::forward_unfused_with`] (the earlier ndarray-GEMM path).

use std::path::Path;
use std::time::Instant;

use attnlab_core::attention::{Attention, Mask};
use attnlab_core::Real;
use ndarray::Array2;
use ndarray_npy::{ReadableElement, WritableElement};

/// Untimed calls before the timed ones: at least `WARM_CALLS`, and at least `WARM_S` seconds
/// of them. bench/compare times numpy and torch inside one long-lived process, warmed with
/// three calls at each shape and once more before every timed call; this process is new (its
/// thread pool just spawned, its buffers and the allocator's heap not yet touched, the other
/// core possibly idle), and at (256, 64) its first few hundred calls run up to 2× slower than
/// the steady state the Python process is measured in. Three calls and a tenth of a second
/// put it in that steady state too.
const WARM_CALLS: usize = 3;
const WARM_S: f64 = 0.1;

fn load<T: ReadableElement>(dir: &Path, name: &str) -> Array2<T> {
    ndarray_npy::read_npy(dir.join(name)).unwrap_or_else(|e| {
        eprintln!("error: reading {}: {e}", dir.join(name).display());
        std::process::exit(2)
    })
}

fn run<T: Real + ReadableElement + WritableElement>(
    dir: &Path,
    mask: Mask,
    mode: &str,
    reps: usize,
    out: Option<&str>,
) -> Vec<f64> {
    let x: Array2<T> = load(dir, "x.npy");
    let layer = Attention::single(
        load(dir, "wq.npy"),
        load(dir, "wk.npy"),
        load(dir, "wv.npy"),
        mask,
    )
    .expect("valid shapes");
    let id = |a: ndarray::ArrayView2<T>| Ok(a.to_owned());
    let call = || -> Array2<T> {
        match mode {
            "fused" => layer.forward_output_only(x.view()).expect("forward"),
            "weights" => layer.forward(x.view()).expect("forward").output,
            "unfused" => {
                layer
                    .forward_unfused_with(x.view(), &id)
                    .expect("forward")
                    .output
            }
            other => {
                eprintln!("error: mode {other:?}; expected fused, weights or unfused");
                std::process::exit(2)
            }
        }
    };
    let warm = Instant::now();
    let first = call();
    if let Some(path) = out {
        ndarray_npy::write_npy(path, &first).expect("write output");
    }
    // Warm-up calls (see `WARM_S`); the first call above counts.
    let mut calls = 1;
    while calls < WARM_CALLS || warm.elapsed().as_secs_f64() < WARM_S {
        std::hint::black_box(call());
        calls += 1;
    }
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(call());
            t.elapsed().as_secs_f64()
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 5 {
        eprintln!(
            "usage: attention_timing DIR f32|f64 none|causal fused|weights|unfused REPS [OUT.npy]"
        );
        std::process::exit(2);
    }
    let dir = Path::new(&args[0]);
    let mask = match args[2].as_str() {
        "none" => Mask::None,
        "causal" => Mask::Causal,
        other => {
            eprintln!("error: mask {other:?}; expected none or causal");
            std::process::exit(2)
        }
    };
    let reps: usize = args[4].parse().unwrap_or(5).max(1);
    let out = args.get(5).map(String::as_str);
    let mut times = match args[1].as_str() {
        "f64" => run::<f64>(dir, mask, &args[3], reps, out),
        "f32" => run::<f32>(dir, mask, &args[3], reps, out),
        other => {
            eprintln!("error: dtype {other:?}; expected f32 or f64");
            std::process::exit(2)
        }
    };
    if std::env::var_os("ATTNLAB_TIMES").is_some() {
        eprintln!("{times:?}");
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "{{\"dtype\": \"{}\", \"mask\": \"{}\", \"mode\": \"{}\", \"reps\": {reps}, \"median_s\": {median}, \"threads\": {}}}",
        args[1],
        args[2],
        args[3],
        rayon::current_num_threads()
    );
}
