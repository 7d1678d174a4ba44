//! The minimum-base search against the d = 128 table of Men et al. 2024 as recomputed by Su
//! (rope-papers.md §a): b* = 4.3e3 (1k), 1.2e4 (2k), 2.7e4 (4k), 8.4e4 (8k), 2.3e5 (16k).

use attnlab::spectrum::decay::{
    default_freqs, first_negative, min_base_for_context, min_base_for_context_on_grid,
};

/// Rounds to two significant digits, as the table is printed.
fn two_digits(x: f64) -> f64 {
    let e = x.log10().floor() - 1.0;
    (x / 10f64.powf(e)).round() * 10f64.powf(e)
}

#[test]
fn matches_the_published_table_to_its_two_digits() {
    // Tolerance: the table's own precision. Our answer (found on a 0.05% log grid, then refined
    // to 1e-5) must round to the printed value; "1k" is read as L = 1024. Su searched in float32
    // on a grid the note does not give, so agreement to the printed digits is all we claim.
    for (l, table) in [
        (1024u64, 4.3e3),
        (2048, 1.2e4),
        (4096, 2.7e4),
        (8192, 8.4e4),
        (16384, 2.3e5),
    ] {
        let r = min_base_for_context(128, l, |_| {}).unwrap();
        let b = r.base.unwrap();
        assert!(
            (two_digits(b) - table).abs() < 1e-6 * table,
            "L = {l}: {b} does not round to {table}"
        );
        assert!(first_negative(&default_freqs(b, 128), l).is_none());
        assert!(first_negative(&default_freqs(r.failing_below.unwrap(), 128), l).is_some());
    }
}

#[test]
fn narrow_islands_need_the_fine_grid_at_4k() {
    // At L = 4096 the passing bases include a narrow island around 26 960 ([26953, 26973), 0.07%
    // wide, found by a dense numpy scan) — the 2.7e4 of the table. A 0.2% grid steps over it and
    // reports the next passing region near 2.86e4; the default 0.05% grid finds it.
    assert!(first_negative(&default_freqs(26_960.0, 128), 4096).is_none());
    let coarse = min_base_for_context_on_grid(128, 4096, 1.002, |_| {})
        .unwrap()
        .base
        .unwrap();
    assert!(coarse > 2.8e4 && coarse < 2.9e4, "{coarse}");
    let fine = min_base_for_context(128, 4096, |_| {})
        .unwrap()
        .base
        .unwrap();
    assert!(fine > 26_950.0 && fine < 26_975.0, "{fine}");
}

/// Exploration (run with `cargo test --release --test rope_min_base -- --ignored --nocapture`):
/// passing bases near Su's 6.5e7 for "1M" (L = 2^20 and 10^6), on a 1e-4 log grid. Measured:
/// 4 passing points in [6.543e7, 6.548e7] for both lengths — an island about 0.07% wide that
/// a 0.2% grid steps over (it reports 3.67e8 at L = 2^20); the default 0.05% grid finds 6.54e7.
#[test]
#[ignore]
fn explore_islands_near_su_1m() {
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
