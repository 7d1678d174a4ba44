//! The contrast: an Elman RNN, whose computation depends on order (seed 000, exercise 2).
//!
//! `h_t = tanh(x_t·Wx + h_{t−1}·Wh + b)` with `h_{−1} = 0`, written for row vectors (the
//! column form `tanh(Wxᵀ x_t + Whᵀ h_{t−1} + b)` is the same map). The output stacks
//! `h_0 … h_{n−1}`: each state is built from the tokens before it, so shuffling the input
//! changes what every later state was built from — not just the labels of the outputs.

use ndarray::{Array1, Array2, ArrayView2};

use crate::{Error, Real, Result};

/// An Elman recurrent cell.
#[derive(Debug, Clone)]
pub struct Elman<T> {
    wx: Array2<T>,
    wh: Array2<T>,
    b: Array1<T>,
}

impl<T: Real> Elman<T> {
    /// `Wx` (d_in × d_h), `Wh` (d_h × d_h), `b` (d_h).
    ///
    /// # Errors
    /// Shapes that do not fit.
    pub fn new(wx: Array2<T>, wh: Array2<T>, b: Array1<T>) -> Result<Self> {
        let dh = wx.ncols();
        if dh == 0 || wh.dim() != (dh, dh) || b.len() != dh {
            return Err(Error::shape(
                "Elman RNN",
                format!("Wx d×h, Wh h×h, b h with h = {dh}"),
                format!("Wh {:?}, b {}", wh.dim(), b.len()),
            ));
        }
        Ok(Elman { wx, wh, b })
    }

    /// Runs the recurrence over the rows of `x` (n × d_in) and returns all hidden states (n × d_h).
    ///
    /// # Errors
    /// `x` has the wrong width or no rows.
    pub fn forward(&self, x: ArrayView2<T>) -> Result<Array2<T>> {
        if x.nrows() == 0 {
            return Err(Error::invalid("sequence length", 0, "at least 1 token"));
        }
        if x.ncols() != self.wx.nrows() {
            return Err(Error::shape(
                "RNN input",
                format!("n×{}", self.wx.nrows()),
                format!("{:?}", x.dim()),
            ));
        }
        let inputs = x.dot(&self.wx);
        let mut h = Array1::<T>::zeros(self.wx.ncols());
        let mut out = Array2::<T>::zeros((x.nrows(), self.wx.ncols()));
        for (t, xin) in inputs.rows().into_iter().enumerate() {
            let pre = &xin + &h.dot(&self.wh) + &self.b;
            h = pre.mapv(T::tanh);
            out.row_mut(t).assign(&h);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_state_depends_only_on_first_token_and_later_ones_on_history() {
        let rnn = Elman::new(Array2::<f64>::eye(2), Array2::eye(2), Array1::zeros(2)).unwrap();
        let x = ndarray::array![[0.5, 0.0], [0.0, 0.5]];
        let h = rnn.forward(x.view()).unwrap();
        assert_eq!(h[[0, 0]], 0.5f64.tanh());
        assert_eq!(h[[1, 0]], (0.5f64.tanh()).tanh());
        assert_eq!(h[[1, 1]], 0.5f64.tanh());
        assert!(Elman::new(Array2::<f64>::eye(2), Array2::eye(3), Array1::zeros(2)).is_err());
    }
}
