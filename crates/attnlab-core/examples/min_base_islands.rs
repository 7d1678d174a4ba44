//! Exploration behind the minimum-base search's grid choice: the bases near Su's 6.5e7 ("1M",
//! L = 2^20 and 10^6, d = 128) that satisfy the decay criterion, on a 1e-4 log grid. Measured:
//! 4 passing points in [6.543e7, 6.548e7] for both lengths — an island about 0.07% wide that a
//! 0.2% grid steps over (it reports 3.67e8 at L = 2^20); the default 0.05% grid finds 6.54e7.
//!
//! Run: `cargo run --release --example min_base_islands`

use attnlab_core::spectrum::decay::{default_freqs, first_negative};

fn main() {
    for l in [1u64 << 20, 1_000_000] {
        let mut b = 5.5e7f64;
        let mut found = Vec::new();
        while b < 8.0e7 {
            if first_negative(&default_freqs(b, 128), l).is_none() {
                found.push(b);
            }
            b *= 1.0001;
        }
        println!(
            "L = {l}: {} passing grid points, first {:?}, last {:?}",
            found.len(),
            found.first(),
            found.last()
        );
    }
}
