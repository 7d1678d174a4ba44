//! Matrix products of the real model's linear layers on a fast GEMM.
//!
//! `y = x·Wᵀ` for a batch of row vectors `x` (`m × k`) and a weight matrix stored as its rows
//! (`W`: `n × k`, the layout of GGUF and safetensors checkpoints), on the `gemm` crate: packed
//! panels sized to the caches, a micro-kernel chosen at run time for the CPU (AVX2 + FMA here,
//! AVX-512 where it exists), the work split over rayon's threads. Each entry is a sum of `k`
//! products in some blocked order, so it differs from the naive sum by at most
//! `k·ε·Σ|x_p·w_p|` (the standard dot-product bound), as any BLAS does.

use ndarray::{Array2, ArrayView2};

use crate::Real;

/// `x·Wᵀ`: row `i` of the result is `(⟨x_i, w_j⟩)_j`, one dot product per row `w_j` of `W`.
/// Strided views are read in place (no copy of `x` or `W`).
///
/// # Panics
/// If `x` and `W` have different numbers of columns (a caller's shape bug, checked at the
/// boundary that reads the checkpoint).
///
/// ```
/// use ndarray::array;
/// let x = array![[1.0f32, 2.0], [3.0, 4.0]];
/// let w = array![[1.0f32, 0.0], [0.0, 1.0], [1.0, 1.0]];
/// assert_eq!(attnlab_core::matmul::matmul_t(x.view(), w.view()), array![[1.0, 2.0, 3.0], [3.0, 4.0, 7.0]]);
/// ```
pub fn matmul_t<T: Real>(x: ArrayView2<T>, w: ArrayView2<T>) -> Array2<T> {
    let (m, k) = x.dim();
    let n = w.nrows();
    assert_eq!(
        w.ncols(),
        k,
        "matmul_t: x is m × {k}, W has {} columns",
        w.ncols()
    );
    let mut y = Array2::<T>::zeros((m, n));
    if m == 0 || n == 0 || k == 0 {
        return y;
    }
    let (xs, ws) = (x.strides(), w.strides());
    // SAFETY: `y` is an owned, contiguous m × n row-major buffer (column stride 1, row stride
    // n); `x` is a live m × k view whose element (i, p) is at row stride xs[0], column stride
    // xs[1]; the right operand is Wᵀ (k × n), element (p, j) = W[j, p], at row stride ws[1] and
    // column stride ws[0] of the live n × k view `w`. T is f32 or f64 (the only `Real`s), types
    // gemm implements; dst = 0·dst + 1·x·Wᵀ without reading dst.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            y.as_mut_ptr(),
            1,
            n as isize,
            false,
            x.as_ptr(),
            xs[1],
            xs[0],
            w.as_ptr(),
            ws[0],
            ws[1],
            T::zero(),
            T::one(),
            false,
            false,
            false,
            gemm::Parallelism::Rayon(0),
        );
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Gaussian, StdGaussian};

    /// The naive sum in f64 of the same f32 products: the reference, exact to f64 round-off.
    fn naive(x: ArrayView2<f32>, w: ArrayView2<f32>) -> Array2<f64> {
        Array2::from_shape_fn((x.nrows(), w.nrows()), |(i, j)| {
            x.row(i)
                .iter()
                .zip(w.row(j))
                .map(|(&a, &b)| a as f64 * b as f64)
                .sum()
        })
    }

    #[test]
    fn products_are_within_the_dot_product_bound_for_odd_shapes_and_strided_views() {
        let mut r = StdGaussian::new(11);
        for &(m, k, n) in &[(1, 1, 1), (7, 13, 5), (65, 576, 193), (300, 64, 17)] {
            let x = Array2::from_shape_fn((m, 2 * k), |_| r.standard_normal() as f32);
            let w = Array2::from_shape_fn((n, k), |_| r.standard_normal() as f32);
            // Every other column of x: a strided view, read in place.
            let xv = x.slice(ndarray::s![.., ..;2]);
            let got = matmul_t(xv, w.view());
            let want = naive(xv, w.view());
            let abs = naive(xv.mapv(f32::abs).view(), w.mapv(f32::abs).view());
            for ((g, e), a) in got.iter().zip(&want).zip(&abs) {
                // |fl(Σ) − Σ| ≤ k·ε32·Σ|x_p w_p| (blocked summation, FMA or not).
                assert!(
                    (*g as f64 - e).abs() <= k as f64 * f32::EPSILON as f64 * a,
                    "{m}×{k}×{n}: {g} vs {e}"
                );
            }
        }
    }

    #[test]
    fn f64_products_and_empty_shapes() {
        let x = Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f64);
        let w = Array2::from_shape_fn((2, 4), |(i, j)| if i == j { 1.0 } else { 0.5 });
        assert_eq!(matmul_t(x.view(), w.view()), x.dot(&w.t()));
        let e = Array2::<f64>::zeros((0, 4));
        assert_eq!(matmul_t(e.view(), w.view()).dim(), (0, 2));
        let k0 = Array2::<f64>::zeros((3, 0));
        assert_eq!(
            matmul_t(k0.view(), Array2::<f64>::zeros((2, 0)).view()),
            Array2::<f64>::zeros((3, 2))
        );
    }
}
