//! The minimum-base search against the d = 128 table of Men et al. 2024 as recomputed by Su
//! (rope-papers.md §a): b* = 4.3e3 (1k), 1.2e4 (2k), 2.7e4 (4k), 8.4e4 (8k), 2.3e5 (16k).

use attnlab_core::spectrum::decay::{
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
