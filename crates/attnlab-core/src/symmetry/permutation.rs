//! Permutations of sequence positions, acting on rows exactly like numpy's `X[perm]`.

use ndarray::{Array2, ArrayView2, Axis};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::{Error, Result};

/// A permutation of `0..n`, stored as the list `perm` with `(Π X)[i] = X[perm[i]]`: row `i` of
/// the result is row `perm[i]` of the input, as numpy's `X[perm]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Permutation(Vec<usize>);

impl Permutation {
    /// Validates that `map` contains each of `0..map.len()` exactly once.
    ///
    /// # Errors
    /// An empty list, an out-of-range entry or a repeated entry.
    pub fn new(map: Vec<usize>) -> Result<Self> {
        let n = map.len();
        if n == 0 {
            return Err(Error::invalid(
                "permutation",
                "[]",
                "a non-empty list containing each of 0..n exactly once",
            ));
        }
        let mut seen = vec![false; n];
        for &i in &map {
            if i >= n || seen[i] {
                let shown: Vec<String> = map.iter().take(16).map(usize::to_string).collect();
                return Err(Error::invalid(
                    "permutation",
                    format!("[{}{}]", shown.join(", "), if n > 16 { ", …" } else { "" }),
                    format!("each of 0..{} exactly once", n - 1),
                ));
            }
            seen[i] = true;
        }
        Ok(Permutation(map))
    }

    /// Parses `2,0,3,1` (spaces allowed) and checks that its length is `n`.
    ///
    /// ```
    /// use attnlab_core::symmetry::Permutation;
    /// let p = Permutation::parse("2,0,3,1", 4).unwrap();
    /// assert_eq!(p.as_slice(), &[2, 0, 3, 1]);
    /// assert!(Permutation::parse("0,0,1", 3).is_err());
    /// assert!(Permutation::parse("1,0", 3).is_err());
    /// ```
    ///
    /// # Errors
    /// Unparsable entries, not a permutation, or the wrong length.
    pub fn parse(text: &str, n: usize) -> Result<Self> {
        let map: Vec<usize> = text
            .split(',')
            .map(|s| {
                s.trim().parse::<usize>().map_err(|_| {
                    Error::invalid(
                        "--perm",
                        format!("\"{}\"", crate::text::shorten(text)),
                        format!(
                            "a permutation as comma-separated indices 0..{} like 2,0,3,1",
                            n.saturating_sub(1)
                        ),
                    )
                })
            })
            .collect::<Result<_>>()?;
        if map.len() != n {
            return Err(Error::invalid(
                "--perm",
                format!("\"{}\" (length {})", crate::text::shorten(text), map.len()),
                format!(
                    "a permutation of 0..{} (length {n}, the sequence length)",
                    n.saturating_sub(1)
                ),
            ));
        }
        Permutation::new(map)
    }

    /// The identity on `0..n`.
    pub fn identity(n: usize) -> Self {
        Permutation((0..n).collect())
    }

    /// `n`.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Never true for a validated permutation.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The list form.
    pub fn as_slice(&self) -> &[usize] {
        &self.0
    }

    /// Whether this is the identity.
    pub fn is_identity(&self) -> bool {
        self.0.iter().enumerate().all(|(i, &p)| i == p)
    }

    /// `Π X`: row `i` is row `perm[i]` of `x` (numpy's `X[perm]`).
    ///
    /// # Errors
    /// `x` does not have `n` rows.
    pub fn apply_rows<T: Clone>(&self, x: ArrayView2<T>) -> Result<Array2<T>> {
        if x.nrows() != self.len() {
            return Err(Error::shape(
                "permutation of rows",
                format!("{} rows", self.len()),
                format!("{} rows", x.nrows()),
            ));
        }
        Ok(x.select(Axis(0), &self.0))
    }

    /// `Π A Πᵀ`: entry `(i, j)` is `A[perm[i], perm[j]]` (relabels rows and the entries within
    /// each row, as the permuted score matrix does).
    ///
    /// # Errors
    /// `a` is not `n × n`.
    pub fn conjugate<T: Clone>(&self, a: ArrayView2<T>) -> Result<Array2<T>> {
        if a.dim() != (self.len(), self.len()) {
            return Err(Error::shape(
                "Π A Πᵀ",
                format!("{0}×{0}", self.len()),
                format!("{}×{}", a.nrows(), a.ncols()),
            ));
        }
        Ok(a.select(Axis(0), &self.0).select(Axis(1), &self.0))
    }

    /// `self ∘ inner`: the permutation that applies `inner` first, then `self`, so that
    /// `compose(p, q).apply_rows(x) == p.apply_rows(q.apply_rows(x))`; its list is
    /// `c[i] = inner[self[i]]`.
    ///
    /// # Errors
    /// Different lengths.
    pub fn compose(&self, inner: &Permutation) -> Result<Permutation> {
        if self.len() != inner.len() {
            return Err(Error::shape(
                "permutation composition",
                format!("length {}", self.len()),
                format!("length {}", inner.len()),
            ));
        }
        Ok(Permutation(self.0.iter().map(|&i| inner.0[i]).collect()))
    }

    /// The inverse: `inv[perm[i]] = i`, so `inv ∘ self = id`.
    pub fn inverse(&self) -> Permutation {
        let mut inv = vec![0; self.len()];
        for (i, &p) in self.0.iter().enumerate() {
            inv[p] = i;
        }
        Permutation(inv)
    }

    /// The matrix `P` with `P[i, perm[i]] = 1`, so that `P · X == X[perm]`.
    pub fn matrix(&self) -> Array2<f64> {
        let mut m = Array2::zeros((self.len(), self.len()));
        for (i, &p) in self.0.iter().enumerate() {
            m[[i, p]] = 1.0;
        }
        m
    }

    /// All `n!` permutations of `0..n`, in the order of Heap's algorithm (identity first).
    ///
    /// # Errors
    /// `n = 0` or `n > 8` (8! = 40 320 is the most an exhaustive check enumerates).
    pub fn all(n: usize) -> Result<Vec<Permutation>> {
        let mut out = Vec::new();
        Self::for_each_all(n, |p| {
            out.push(Permutation(p.to_vec()));
            Ok(())
        })?;
        Ok(out)
    }

    /// Accepts the lengths an exhaustive check covers: 1..=8 (8! = 40 320 permutations).
    ///
    /// # Errors
    /// n = 0 or n > 8, with the message suggesting random samples.
    pub fn exhaustive_length(n: usize) -> Result<()> {
        if n == 0 || n > 8 {
            return Err(Error::invalid(
                "exhaustive check length",
                n,
                "1..=8 (n! permutations; use --samples K for longer sequences)",
            ));
        }
        Ok(())
    }

    /// Calls `visit` with every permutation of `0..n` (n ≤ 8) as a list, in the order of
    /// [`Permutation::all`] (Heap's algorithm, starting with the identity), from one buffer
    /// rewritten in place: visiting n! permutations allocates nothing per permutation. Stops at
    /// the first error `visit` returns.
    ///
    /// ```
    /// use attnlab_core::symmetry::Permutation;
    /// let mut seen = Vec::new();
    /// Permutation::for_each_all(3, |p| { seen.push(p.to_vec()); Ok(()) }).unwrap();
    /// let all: Vec<Vec<usize>> = Permutation::all(3).unwrap().iter().map(|p| p.as_slice().to_vec()).collect();
    /// assert_eq!(seen, all);
    /// ```
    ///
    /// # Errors
    /// n = 0 or n > 8; whatever `visit` returns.
    pub fn for_each_all(n: usize, mut visit: impl FnMut(&[usize]) -> Result<()>) -> Result<()> {
        Self::exhaustive_length(n)?;
        let mut a: Vec<usize> = (0..n).collect();
        visit(&a)?;
        let mut c = vec![0usize; n];
        let mut i = 1;
        while i < n {
            if c[i] < i {
                if i % 2 == 0 {
                    a.swap(0, i);
                } else {
                    a.swap(c[i], i);
                }
                visit(&a)?;
                c[i] += 1;
                i = 1;
            } else {
                c[i] = 0;
                i += 1;
            }
        }
        Ok(())
    }

    /// `k` uniformly random permutations of `0..n` (Fisher–Yates on a ChaCha8 stream seeded
    /// with `seed`); with `skip_identity`, identity draws are rejected and redrawn (requires
    /// n ≥ 2).
    ///
    /// # Errors
    /// `n = 0`, or `skip_identity` with `n = 1`.
    pub fn random(n: usize, k: usize, seed: u64, skip_identity: bool) -> Result<Vec<Permutation>> {
        if n == 0 || (skip_identity && n < 2) {
            return Err(Error::invalid(
                "sequence length for random permutations",
                n,
                "at least 2 (only the identity permutes one token)",
            ));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut out = Vec::with_capacity(k);
        while out.len() < k {
            let mut a: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                let j = rng.random_range(0..=i);
                a.swap(i, j);
            }
            let p = Permutation(a);
            if !(skip_identity && p.is_identity()) {
                out.push(p);
            }
        }
        Ok(out)
    }
}

impl std::fmt::Display for Permutation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s: Vec<String> = self.0.iter().map(|i| i.to_string()).collect();
        write!(f, "[{}]", s.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;
    use std::collections::HashSet;

    #[test]
    fn acts_like_numpy_fancy_indexing() {
        let x = array![[0.0], [10.0], [20.0], [30.0]];
        let p = Permutation::parse("2,0,3,1", 4).unwrap();
        assert_eq!(
            p.apply_rows(x.view()).unwrap(),
            array![[20.0], [0.0], [30.0], [10.0]]
        );
        assert_eq!(p.matrix().dot(&x), p.apply_rows(x.view()).unwrap());
    }

    #[test]
    fn compose_and_inverse_agree_with_application() {
        let x = array![[0.0], [1.0], [2.0], [3.0]];
        let p = Permutation::new(vec![2, 0, 3, 1]).unwrap();
        let q = Permutation::new(vec![1, 3, 0, 2]).unwrap();
        let pq = p.compose(&q).unwrap();
        assert_eq!(
            pq.apply_rows(x.view()).unwrap(),
            p.apply_rows(q.apply_rows(x.view()).unwrap().view())
                .unwrap()
        );
        assert!(p.inverse().compose(&p).unwrap().is_identity());
        assert!(p.compose(&p.inverse()).unwrap().is_identity());
    }

    #[test]
    fn heap_enumerates_every_permutation_once() {
        for n in 1..=6 {
            let all = Permutation::all(n).unwrap();
            let expected: usize = (1..=n).product();
            assert_eq!(all.len(), expected);
            assert_eq!(all.iter().collect::<HashSet<_>>().len(), expected);
            assert!(all[0].is_identity());
        }
        assert!(Permutation::all(9).is_err());
    }

    #[test]
    fn random_permutations_skip_identity_and_are_roughly_uniform() {
        let ps = Permutation::random(3, 6000, 1, false).unwrap();
        let mut counts = std::collections::HashMap::new();
        for p in &ps {
            *counts.entry(p.clone()).or_insert(0usize) += 1;
        }
        assert_eq!(counts.len(), 6);
        // Each of the 6 has expectation 1000 and sd ≈ 29; 5 sd either side cannot fail by chance
        // in practice (p ≈ 6e-7 per permutation) and catches a biased shuffle.
        for c in counts.values() {
            assert!((855..=1145).contains(c), "{counts:?}");
        }
        assert!(Permutation::random(2, 50, 3, true)
            .unwrap()
            .iter()
            .all(|p| !p.is_identity()));
        assert!(Permutation::random(1, 1, 3, true).is_err());
    }

    #[test]
    fn invalid_permutations_are_rejected() {
        for bad in ["", "0,1,1", "0,1,3", "a,b,c", "0,1"] {
            assert!(Permutation::parse(bad, 3).is_err(), "{bad:?}");
        }
    }
}
