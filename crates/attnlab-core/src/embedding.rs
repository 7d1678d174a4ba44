//! Tokens become vectors (seed 002 §1): one-hot vectors, the embedding table, lookup, and the
//! basis-change redundancy at a linear interface.

use ndarray::{array, Array1, Array2, ArrayView2, Axis};

use crate::{Error, Result};

/// The one-hot row vector of label `id` in a vocabulary of `vocab` labels: `e_id`.
///
/// # Errors
/// `id ≥ vocab`.
pub fn one_hot(id: usize, vocab: usize) -> Result<Array1<f64>> {
    if id >= vocab {
        return Err(Error::invalid(
            "token id",
            id,
            format!("0..{vocab} (the vocabulary size)"),
        ));
    }
    let mut e = Array1::zeros(vocab);
    e[id] = 1.0;
    Ok(e)
}

/// An embedding table `E` (vocab × dim): row `i` is the vector of label `i`. The representation
/// dimension `dim` is a design choice independent of the vocabulary size.
#[derive(Debug, Clone, PartialEq)]
pub struct Embedding {
    table: Array2<f64>,
}

impl Embedding {
    /// The course's teaching table for vocabulary `(A, B, .)`:
    /// `E = [[1, 0], [0, 1], [1/2, 1/2]]` (3 × 2).
    pub fn example() -> Self {
        Embedding {
            table: array![[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]],
        }
    }

    /// Wraps a table, checking that it is non-empty and finite.
    ///
    /// # Errors
    /// An empty table or a non-finite entry.
    pub fn new(table: Array2<f64>) -> Result<Self> {
        if table.is_empty() {
            return Err(Error::shape(
                "embedding table",
                "at least 1×1",
                format!("{}×{}", table.nrows(), table.ncols()),
            ));
        }
        if let Some(((r, c), v)) = table.indexed_iter().find(|(_, v)| !v.is_finite()) {
            return Err(Error::invalid(
                "embedding table entry",
                format!("E[{r},{c}] = {v}"),
                "finite numbers",
            ));
        }
        Ok(Embedding { table })
    }

    /// The table.
    pub fn table(&self) -> ArrayView2<'_, f64> {
        self.table.view()
    }

    /// Vocabulary size (rows).
    pub fn vocab(&self) -> usize {
        self.table.nrows()
    }

    /// Representation dimension (columns).
    pub fn dim(&self) -> usize {
        self.table.ncols()
    }

    /// Lookup: stacks the rows `E[id]` for the given labels into `H` (len × dim).
    ///
    /// ```
    /// use attnlab_core::embedding::Embedding;
    /// // The context "A B" gives H = I₂ (seed 002 §1).
    /// let h = Embedding::example().lookup(&[0, 1]).unwrap();
    /// assert_eq!(h, ndarray::Array2::<f64>::eye(2));
    /// ```
    ///
    /// # Errors
    /// A label outside the table.
    pub fn lookup(&self, ids: &[usize]) -> Result<Array2<f64>> {
        if let Some(&bad) = ids.iter().find(|&&i| i >= self.vocab()) {
            return Err(Error::invalid(
                "token id",
                bad,
                format!("0..{} (rows of the embedding table)", self.vocab()),
            ));
        }
        Ok(self.table.select(Axis(0), ids))
    }

    /// The matrix product `one_hot(id) · E` — a row vector times the table — computed as a real
    /// product (not a lookup), so it can be compared with [`Embedding::lookup`].
    pub fn one_hot_product(&self, id: usize) -> Result<Array1<f64>> {
        Ok(one_hot(id, self.vocab())?.dot(&self.table))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_hot_product_selects_the_row_exactly() {
        // Exact: each output entry is a sum of products with exactly one non-zero term (1·E[id,j])
        // plus zeros, so no rounding can occur.
        let e = Embedding::example();
        for id in 0..3 {
            assert_eq!(e.one_hot_product(id).unwrap(), e.table().row(id));
        }
        assert_eq!(e.one_hot_product(1).unwrap(), ndarray::array![0.0, 1.0]);
    }

    #[test]
    fn dimension_is_independent_of_vocabulary() {
        let e = Embedding::example();
        assert_eq!((e.vocab(), e.dim()), (3, 2));
    }

    #[test]
    fn bad_labels_and_tables_are_errors() {
        assert!(one_hot(3, 3).is_err());
        assert!(Embedding::example().lookup(&[0, 5]).is_err());
        assert!(Embedding::new(ndarray::array![[1.0, f64::NAN]]).is_err());
    }
}

/// The inverse of a square matrix by Gauss–Jordan elimination with partial pivoting.
///
/// # Errors
/// Not square, or singular to working precision (a pivot below `n·eps·max|S|`).
pub fn inverse(s: ArrayView2<f64>) -> Result<Array2<f64>> {
    let n = s.nrows();
    if n == 0 || s.ncols() != n {
        return Err(Error::shape(
            "matrix inverse",
            "a non-empty square matrix",
            format!("{}×{}", s.nrows(), s.ncols()),
        ));
    }
    let scale = s.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let mut a = s.to_owned();
    let mut inv = Array2::<f64>::eye(n);
    for col in 0..n {
        let p = (col..n)
            .max_by(|&i, &j| a[[i, col]].abs().total_cmp(&a[[j, col]].abs()))
            .expect("non-empty range");
        if a[[p, col]].abs() <= n as f64 * f64::EPSILON * scale {
            return Err(Error::invalid(
                "basis change S",
                "a singular matrix",
                "an invertible matrix",
            ));
        }
        for k in 0..n {
            a.swap([col, k], [p, k]);
            inv.swap([col, k], [p, k]);
        }
        let piv = a[[col, col]];
        a.row_mut(col).mapv_inplace(|v| v / piv);
        inv.row_mut(col).mapv_inplace(|v| v / piv);
        for r in 0..n {
            if r != col {
                let f = a[[r, col]];
                if f != 0.0 {
                    let (arow, irow) = (a.row(col).to_owned(), inv.row(col).to_owned());
                    a.row_mut(r).scaled_add(-f, &arow);
                    inv.row_mut(r).scaled_add(-f, &irow);
                }
            }
        }
    }
    Ok(inv)
}

/// A nonlinearity through which a basis change can be pushed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Interface {
    /// `H·W` directly: the change is absorbed exactly (up to round-off).
    Linear,
    /// `relu(H)·W`.
    Relu,
    /// `softmax_row(H)·W`.
    Softmax,
    /// `layernorm(H)·W` (per row: subtract the mean, divide by the standard deviation).
    LayerNorm,
}

impl Interface {
    /// All four, linear first.
    pub const ALL: [Interface; 4] = [
        Interface::Linear,
        Interface::Relu,
        Interface::Softmax,
        Interface::LayerNorm,
    ];

    fn apply(self, h: &Array2<f64>) -> Array2<f64> {
        match self {
            Interface::Linear => h.clone(),
            Interface::Relu => h.mapv(|v| v.max(0.0)),
            Interface::Softmax => {
                let mut s = h.clone();
                crate::attention::softmax_rows(&mut s);
                s
            }
            Interface::LayerNorm => {
                let mut out = h.clone();
                for mut row in out.rows_mut() {
                    let m = row.mean().unwrap_or(0.0);
                    let var = row.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / row.len() as f64;
                    let sd = (var + 1e-5).sqrt();
                    row.mapv_inplace(|v| (v - m) / sd);
                }
                out
            }
        }
    }

    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            Interface::Linear => "linear",
            Interface::Relu => "relu",
            Interface::Softmax => "softmax",
            Interface::LayerNorm => "layer norm",
        }
    }
}

/// One case of the basis-change experiment.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BasisChangeCase {
    /// What sits between the representation and the next linear map.
    pub interface: Interface,
    /// max |g(H·S)·(S⁻¹W) − g(H)·W|.
    pub max_abs_error: f64,
    /// The tolerance: `8 · eps · d · κ∞(S) · max|g(H)·W|` — a product of length d evaluated with
    /// an inverse whose relative error is about κ(S)·eps.
    pub tolerance: f64,
    /// error / tolerance.
    pub margin: f64,
    /// Whether the output is unchanged to round-off.
    pub unchanged: bool,
}

/// Seed 002 §1: replace the representation `H` by `H·S` (row form of `h → S h`) and the
/// adjacent linear map `W` by `S⁻¹·W`. At a linear interface `(H·S)(S⁻¹W) = H·W` exactly in
/// exact arithmetic; pushed through ReLU, softmax or layer norm it is not.
///
/// ```
/// use attnlab_core::embedding::{basis_change, Interface};
/// use ndarray::array;
/// let h = array![[1.0, -2.0], [0.5, 3.0]];
/// let w = array![[1.0, 0.0], [2.0, 1.0]];
/// let s = array![[2.0, 0.0], [0.0, 1.0]]; // double a coordinate, halve its coefficient
/// let cases = basis_change(h.view(), w.view(), s.view()).unwrap();
/// assert!(cases[0].unchanged && cases[0].interface == Interface::Linear);
/// assert!(cases.iter().skip(1).any(|c| !c.unchanged));
/// ```
///
/// # Errors
/// Shapes that do not fit or a singular `S`.
pub fn basis_change(
    h: ArrayView2<f64>,
    w: ArrayView2<f64>,
    s: ArrayView2<f64>,
) -> Result<Vec<BasisChangeCase>> {
    let d = h.ncols();
    if w.nrows() != d || s.dim() != (d, d) {
        return Err(Error::shape(
            "basis change",
            format!("W with {d} rows and S {d}×{d}"),
            format!(
                "W {}×{}, S {}×{}",
                w.nrows(),
                w.ncols(),
                s.nrows(),
                s.ncols()
            ),
        ));
    }
    let s_inv = inverse(s)?;
    let norm_inf = |a: &ArrayView2<f64>| {
        a.rows()
            .into_iter()
            .map(|r| r.iter().map(|v| v.abs()).sum::<f64>())
            .fold(0.0, f64::max)
    };
    let kappa = norm_inf(&s) * norm_inf(&s_inv.view());
    let w_changed = s_inv.dot(&w);
    let h_changed = h.dot(&s);
    Ok(Interface::ALL
        .iter()
        .map(|&g| {
            let reference = g.apply(&h.to_owned()).dot(&w);
            let changed = g.apply(&h_changed).dot(&w_changed);
            let err = (&changed - &reference)
                .iter()
                .fold(0.0f64, |m, v| m.max(v.abs()));
            let scale = reference
                .iter()
                .fold(f64::MIN_POSITIVE, |m, v| m.max(v.abs()));
            let tolerance = 8.0 * f64::EPSILON * d as f64 * kappa * scale;
            BasisChangeCase {
                interface: g,
                max_abs_error: err,
                tolerance,
                margin: err / tolerance,
                unchanged: err <= tolerance,
            }
        })
        .collect())
}

#[cfg(test)]
mod basis_tests {
    use super::*;

    #[test]
    fn inverse_of_random_matrix() {
        let mut g = crate::rng::StdGaussian::new(4);
        let s = crate::rng::Gaussian::randn(&mut g, 5, 5);
        let inv = inverse(s.view()).unwrap();
        let err = (&s.dot(&inv) - &Array2::<f64>::eye(5))
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        // κ(S)·n·eps for a random 5×5 Gaussian matrix (κ ~ 10–100): 1e-12 is generous but tight
        // enough to catch a wrong pivot or a swapped row.
        assert!(err < 1e-12, "{err:e}");
        assert!(inverse(ndarray::array![[1.0, 2.0], [2.0, 4.0]].view()).is_err());
    }

    #[test]
    fn linear_interface_absorbs_random_basis_change_but_nonlinearities_do_not() {
        let mut g = crate::rng::StdGaussian::new(11);
        let h = crate::rng::Gaussian::randn(&mut g, 6, 4);
        let w = crate::rng::Gaussian::randn(&mut g, 4, 3);
        let s = crate::rng::Gaussian::randn(&mut g, 4, 4);
        let cases = basis_change(h.view(), w.view(), s.view()).unwrap();
        assert!(cases[0].unchanged, "{:?}", cases[0]);
        for c in &cases[1..] {
            assert!(
                c.margin > 1e6,
                "{:?} should break by far more than round-off",
                c
            );
        }
    }
}
