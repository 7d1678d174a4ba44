//! Times the certified minimum-base sweep against the earlier grid search on Su's lengths
//! (d = 128): `cargo run --release -p attnlab-core --example min_base_timing [L ...]`.
use attnlab_core::spectrum::min_base::{min_base_for_context, min_base_for_context_on_grid};
use std::time::Instant;

fn main() {
    let lens: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a context length"))
        .collect();
    let lens = if lens.is_empty() {
        (10..=20).map(|e| 1u64 << e).collect()
    } else {
        lens
    };
    println!("L\tsweep base\tsweep s\tisland rel width\tf32 passes\tgrid base\tgrid s\tratio");
    for l in lens {
        let t = Instant::now();
        let s = min_base_for_context(128, l, |_| {}).expect("a search");
        let t_new = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let old = min_base_for_context_on_grid(128, l, 1.0005, |_| {}).expect("a search");
        let t_old = t.elapsed().as_secs_f64();
        println!(
            "{l}\t{:.8e}\t{t_new:.3}\t{:.2e}\t{}\t{:.8e}\t{t_old:.3}\t{:.2}",
            s.base().unwrap_or(f64::NAN),
            s.island().map_or(f64::NAN, |i| i.rel_width),
            s.f32_check().is_some_and(|c| c.passes),
            old.base().unwrap_or(f64::NAN),
            t_new / t_old
        );
    }
}
