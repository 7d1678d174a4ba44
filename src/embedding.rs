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
        return Err(Error::invalid("token id", id, format!("0..{vocab} (the vocabulary size)")));
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
        Embedding { table: array![[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]] }
    }

    /// Wraps a table, checking that it is non-empty and finite.
    ///
    /// # Errors
    /// An empty table or a non-finite entry.
    pub fn new(table: Array2<f64>) -> Result<Self> {
        if table.is_empty() {
            return Err(Error::shape("embedding table", "at least 1×1", format!("{}×{}", table.nrows(), table.ncols())));
        }
        if let Some(((r, c), v)) = table.indexed_iter().find(|(_, v)| !v.is_finite()) {
            return Err(Error::invalid("embedding table entry", format!("E[{r},{c}] = {v}"), "finite numbers"));
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
    /// use attnlab::embedding::Embedding;
    /// // The context "A B" gives H = I₂ (seed 002 §1).
    /// let h = Embedding::example().lookup(&[0, 1]).unwrap();
    /// assert_eq!(h, ndarray::Array2::<f64>::eye(2));
    /// ```
    ///
    /// # Errors
    /// A label outside the table.
    pub fn lookup(&self, ids: &[usize]) -> Result<Array2<f64>> {
        if let Some(&bad) = ids.iter().find(|&&i| i >= self.vocab()) {
            return Err(Error::invalid("token id", bad, format!("0..{} (rows of the embedding table)", self.vocab())));
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
