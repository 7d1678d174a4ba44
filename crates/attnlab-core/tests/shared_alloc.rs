//! The shared symmetry pass allocates nothing per permutation: with a layer that writes its
//! result in place, checking 1000 permutations makes as many allocations as checking one, and
//! all 40 320 at most two more (the generator's buffers) — the pass's buffers are made once. A counting global allocator observes it; counts are per thread,
//! so the test harness's other threads do not disturb them.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use attnlab_core::symmetry::{shared_pass, Forward, Perms, Permutation, Property};
use ndarray::{Array2, ArrayView2, Zip};

struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations(perms: Perms<'_>, n: usize) -> usize {
    let h = Array2::from_shape_fn((n, 4), |(i, j)| ((i * 4 + j) as f64).sin());
    // f(H) = tanh(H), written into the buffer it is handed (allocated on first use only).
    let mut layer = |x: ArrayView2<f64>, out: &mut Forward<f64>| {
        if out.output.dim() != x.dim() {
            out.output = Array2::zeros(x.dim());
        }
        Zip::from(&mut out.output)
            .and(&x)
            .for_each(|o, &v| *o = v.tanh());
        Ok(())
    };
    let before = ALLOCS.with(Cell::get);
    let pass = shared_pass(
        &mut layer,
        h.view(),
        perms,
        false,
        Property::Equivariance,
        &mut |_| Ok(()),
    )
    .unwrap();
    let after = ALLOCS.with(Cell::get);
    assert!(pass.report.holds);
    assert_eq!(pass.report.permutations_checked, perms.len());
    after - before
}

#[test]
fn the_pass_allocates_nothing_per_permutation() {
    // Same n, same path: 10 and 1000 permutations make exactly as many allocations.
    let few = Permutation::random(8, 10, 1, true).unwrap();
    let many = Permutation::random(8, 1000, 1, true).unwrap();
    let one = Permutation::random(8, 1, 1, true).unwrap();
    let (few, many, one) = (
        allocations(Perms::List(&few), 8),
        allocations(Perms::List(&many), 8),
        allocations(Perms::List(&one), 8),
    );
    assert_eq!(few, many);
    assert_eq!(one, many);
    // All 40 320 permutations, generated in place: at most the generator's two buffers more.
    let all8 = allocations(Perms::All(8), 8);
    assert!(
        all8 <= one + 2,
        "40320 permutations: {all8} allocations; one permutation: {one}"
    );
}
