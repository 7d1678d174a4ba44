//! The fused kernel's reusable workspace: repeated forwards through
//! `Attention::forward_output_into` allocate nothing once the workspace and the per-thread tile
//! buffers have grown. One test in its own binary, so the global count sees no other test.
//!
//! Small inputs run on the calling thread: exactly zero allocations per call. Large ones hand
//! tiles to rayon's pool, whose injector queue allocates one block per 63 jobs injected from
//! outside the pool (one job per parallel phase; at most three phases per call: the projections
//! with the packing of K and Vᵀ, the tiles, the output projection): at most ⌈3·calls/63⌉ + 1
//! over `calls` calls, never one per call. `Attention::forward_output_only`
//! reuses a per-thread workspace: one allocation per call, the returned array.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use attnlab_core::attention::{Attention, Mask, Workspace};
use ndarray::Array2;

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn layer(d: usize, heads: usize, mask: Mask) -> Attention<f32> {
    let w = |k: usize| {
        Array2::from_shape_fn((d, d), |(i, j)| ((i * d + j + k) as f32).sin() / d as f32)
    };
    let wo = (heads > 1).then(|| w(3));
    Attention::multi_head(w(0), w(1), w(2), wo, heads, mask).unwrap()
}

fn allocations_over(layer: &Attention<f32>, x: &Array2<f32>, calls: usize) -> usize {
    let mut ws = Workspace::new();
    // Warm-up: the workspace, this thread's and the pool's tile buffers, the pool itself.
    for _ in 0..3 {
        layer.forward_output_into(x.view(), None, &mut ws).unwrap();
    }
    // And a forward on every pool thread at once, so each grows its tile buffers now: on a busy
    // machine one worker can run all the warm-up tiles and the other meet its first tile (four
    // buffers) among the counted calls.
    rayon::broadcast(|_| {
        layer.forward_output_only(x.view()).unwrap();
    });
    let want = layer.forward_output_only(x.view()).unwrap();
    let before = ALLOCS.load(Ordering::SeqCst);
    for _ in 0..calls {
        let out = layer.forward_output_into(x.view(), None, &mut ws).unwrap();
        std::hint::black_box(out[[0, 0]]);
    }
    let made = ALLOCS.load(Ordering::SeqCst) - before;
    // The workspace path returns the bits of the allocating path.
    assert_eq!(
        layer.forward_output_into(x.view(), None, &mut ws).unwrap(),
        want
    );
    made
}

#[test]
fn repeated_forwards_allocate_nothing_per_call() {
    let x = |n: usize, d: usize| Array2::from_shape_fn((n, d), |(i, j)| ((i * 7 + j) as f32).cos());
    // One tile, one head and two heads: the calling thread alone.
    for (n, heads, mask) in [(8, 1, Mask::None), (40, 2, Mask::Causal)] {
        let l = layer(16, heads, mask);
        let made = allocations_over(&l, &x(n, 16), 100);
        // The counter is process-wide: the test harness's own threads allocate a few times
        // meanwhile; an allocation per call would count at least 100.
        assert!(
            made < 10,
            "n = {n}, {heads} heads: {made} allocations in 100 calls"
        );
    }
    // The allocating path keeps a workspace per thread too: one allocation per call, its result.
    let l = layer(16, 2, Mask::None);
    let xs = x(40, 16);
    let want = l.forward_output_only(xs.view()).unwrap();
    let before = ALLOCS.load(Ordering::SeqCst);
    for _ in 0..100 {
        std::hint::black_box(l.forward_output_only(xs.view()).unwrap()[[0, 0]]);
    }
    let made = ALLOCS.load(Ordering::SeqCst) - before;
    assert!(
        (100..110).contains(&made),
        "forward_output_only: {made} allocations in 100 calls (one each for the output)"
    );
    assert_eq!(l.forward_output_only(xs.view()).unwrap(), want);
    // Large enough for the pool: bounded by rayon's injector blocks, not by the calls.
    for (heads, mask) in [(1, Mask::None), (2, Mask::Causal)] {
        let l = layer(32, heads, mask);
        let calls = 100;
        let made = allocations_over(&l, &x(600, 32), calls);
        let bound = (3 * calls).div_ceil(63) + 1;
        assert!(
            made <= bound,
            "n = 600, {heads} heads: {made} allocations in {calls} calls (bound {bound})"
        );
    }
}
