//! Which rotation planes a trained model's attention uses (`rope usage`).
//!
//! A head's score is a sum over its rotation planes, `s = Σ_k q_kᵀ R(mω_k) k_k` with `q_k`, `k_k`
//! the two coordinates of plane k (transformers' half split: coordinates k and k + r/2 of the
//! rotated r), so plane k can add at most `|q_k|·|k_k|` to it whatever the positions. Two
//! measures of that bound:
//!
//! * **from the weights alone**: `‖W_q,k‖_F · ‖W_k,k‖_F`, the Frobenius norms of the two rows of
//!   the query (key) projection that produce plane k of the head, with the layer's attention
//!   RMSNorm gain folded in (`W·diag(g)`, what multiplies the normalised residual); the key
//!   head is the query head's group (`h / (heads / kv_heads)`). Biases and qwen3's per-head
//!   q/k norms are not part of it (they act after the projection);
//! * **on a text**: the mean over its tokens t of `|q_t,k|·|k_t,k|`, from the layer's actual
//!   queries and keys (before the rotation, which keeps every plane's norm).
//!
//! A plane's **score energy** is the square of its bound; the share of a set of planes is its
//! energy over the head's (or the model's) total. Planes whose wavelength 2π/ω_k exceeds the
//! trained context never complete a full turn within it: their rotation is a bounded phase,
//! the channels Barbero et al. 2024 ("Round and Round We Go!", arXiv 2410.06205) find used for
//! position-insensitive (semantic) content in Gemma, while the fastest planes carry the
//! positional heads.

use ndarray::{Array2, ArrayView2};
use serde::Serialize;

use crate::model::llama::LlamaWeights;
use crate::{Real, Result};

/// One rotation plane of the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlaneInfo {
    /// k.
    pub plane: usize,
    /// ω_k (radians per position).
    pub inv_freq: f64,
    /// 2π/ω_k (positions per full turn).
    pub wavelength: f64,
    /// Whether the plane completes a full turn within the trained context.
    pub turns_within_context: bool,
}

/// One head of one layer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeadUsage {
    /// The layer.
    pub layer: usize,
    /// The query head.
    pub head: usize,
    /// The key/value head it reads.
    pub kv_head: usize,
    /// `‖W_q,k‖_F·‖W_k,k‖_F` per plane.
    pub weight_norm_product: Vec<f64>,
    /// Mean over the text's tokens of `|q_k|·|k_k|` per plane (with a text).
    pub text_norm_product: Option<Vec<f64>>,
    /// Share of the head's weight score energy in the planes that never complete a turn.
    pub slow_share_weights: f64,
    /// The same share on the text.
    pub slow_share_text: Option<f64>,
}

/// What the weights (and a text) say about plane use.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Usage {
    /// The trained context the turn criterion uses.
    pub context: u64,
    /// Every plane.
    pub planes: Vec<PlaneInfo>,
    /// The planes that never complete a full turn within the context.
    pub slow_planes: Vec<usize>,
    /// The layers measured.
    pub layers: Vec<usize>,
    /// Per layer and head.
    pub heads: Vec<HeadUsage>,
    /// Per measured layer: each plane's share of the layer's weight score energy (rows sum to 1).
    pub layer_plane_share_weights: Vec<Vec<f64>>,
    /// The same on the text.
    pub layer_plane_share_text: Option<Vec<Vec<f64>>>,
    /// Each plane's share of the weight score energy over every measured head.
    pub plane_share_weights: Vec<f64>,
    /// The same on the text.
    pub plane_share_text: Option<Vec<f64>>,
    /// Share of all measured heads' weight score energy in the slow planes.
    pub slow_share_weights: f64,
    /// The same on the text.
    pub slow_share_text: Option<f64>,
}

/// Plane k's two row indices within a head (half split of the rotated `r` dims).
fn plane_rows(k: usize, half: usize) -> [usize; 2] {
    [k, k + half]
}

/// `‖W_rows·diag(g)‖_F` per head and plane: `[head][plane]`.
fn weight_norms<T: Real>(
    w: &Array2<T>,
    g: ndarray::ArrayView1<T>,
    heads: usize,
    head_dim: usize,
    half: usize,
) -> Vec<Vec<f64>> {
    (0..heads)
        .map(|h| {
            (0..half)
                .map(|k| {
                    plane_rows(k, half)
                        .iter()
                        .map(|&r| {
                            w.row(h * head_dim + r)
                                .iter()
                                .zip(g.iter())
                                .map(|(&a, &b)| {
                                    let x = a.to_f64() * b.to_f64();
                                    x * x
                                })
                                .sum::<f64>()
                        })
                        .sum::<f64>()
                        .sqrt()
                })
                .collect()
        })
        .collect()
}

/// Mean over rows of `|x_k|` per head and plane, as `[head][row][plane]` norms.
fn plane_norms<T: Real>(
    x: ArrayView2<T>,
    heads: usize,
    head_dim: usize,
    half: usize,
) -> Vec<Vec<Vec<f64>>> {
    (0..heads)
        .map(|h| {
            x.rows()
                .into_iter()
                .map(|row| {
                    (0..half)
                        .map(|k| {
                            plane_rows(k, half)
                                .iter()
                                .map(|&r| {
                                    let v = row[h * head_dim + r].to_f64();
                                    v * v
                                })
                                .sum::<f64>()
                                .sqrt()
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

fn share(v: &[f64], slow: &[bool]) -> f64 {
    let total: f64 = v.iter().map(|x| x * x).sum();
    if total == 0.0 {
        return 0.0;
    }
    v.iter()
        .zip(slow)
        .filter(|(_, &s)| s)
        .map(|(x, _)| x * x)
        .sum::<f64>()
        / total
}

/// Each plane's share of the summed energy of `rows` (each a per-plane bound).
fn plane_shares<'a>(rows: impl Iterator<Item = &'a Vec<f64>>, planes: usize) -> Vec<f64> {
    let mut e = vec![0.0; planes];
    for r in rows {
        for (a, x) in e.iter_mut().zip(r) {
            *a += x * x;
        }
    }
    let total: f64 = e.iter().sum();
    if total > 0.0 {
        for a in &mut e {
            *a /= total;
        }
    }
    e
}

/// Measures plane use in `layers` of `w`, with the turn criterion at `context`; with
/// `hidden_in` (the residual stream entering each measured layer for a text, in the order of
/// `layers`) also on the text. `cancelled` is polled per layer.
///
/// # Errors
/// A layer out of range; cancellation (as `cancelled` reports it).
pub fn measure<T: Real>(
    w: &LlamaWeights<T>,
    layers: &[usize],
    context: u64,
    hidden_in: Option<&[Array2<T>]>,
    cancelled: &dyn Fn() -> Result<()>,
) -> Result<Usage> {
    let c = &w.config;
    let half = c.inv_freq.len();
    let planes: Vec<PlaneInfo> = c
        .inv_freq
        .iter()
        .enumerate()
        .map(|(k, &om)| {
            let wavelength = if om > 0.0 {
                2.0 * std::f64::consts::PI / om
            } else {
                f64::INFINITY
            };
            PlaneInfo {
                plane: k,
                inv_freq: om,
                wavelength,
                turns_within_context: wavelength <= context as f64,
            }
        })
        .collect();
    let slow: Vec<bool> = planes.iter().map(|p| !p.turns_within_context).collect();
    let group = c.heads / c.kv_heads.max(1);
    let mut heads = Vec::new();
    let mut layer_w = Vec::new();
    let mut layer_t = Vec::new();
    for (i, &l) in layers.iter().enumerate() {
        cancelled()?;
        let lw = w.layers.get(l).ok_or_else(|| {
            crate::Error::invalid(
                "layer",
                l,
                format!("0 … {} (the model has {} layers)", c.layers - 1, c.layers),
            )
        })?;
        let qn = weight_norms(&lw.wq, lw.attn_norm.view(), c.heads, c.head_dim, half);
        let kn = weight_norms(&lw.wk, lw.attn_norm.view(), c.kv_heads, c.head_dim, half);
        let text = match hidden_in {
            Some(hs) => {
                let (q, k) = w.qk(l, hs[i].view())?;
                let n = q.nrows() as f64;
                let qp = plane_norms(q.view(), c.heads, c.head_dim, half);
                let kp = plane_norms(k.view(), c.kv_heads, c.head_dim, half);
                Some(
                    (0..c.heads)
                        .map(|h| {
                            (0..half)
                                .map(|kk| {
                                    qp[h]
                                        .iter()
                                        .zip(&kp[h / group])
                                        .map(|(a, b)| a[kk] * b[kk])
                                        .sum::<f64>()
                                        / n
                                })
                                .collect::<Vec<f64>>()
                        })
                        .collect::<Vec<_>>(),
                )
            }
            None => None,
        };
        let first = heads.len();
        for h in 0..c.heads {
            let prod: Vec<f64> = qn[h]
                .iter()
                .zip(&kn[h / group])
                .map(|(a, b)| a * b)
                .collect();
            let tp = text.as_ref().map(|t| t[h].clone());
            heads.push(HeadUsage {
                layer: l,
                head: h,
                kv_head: h / group,
                slow_share_weights: share(&prod, &slow),
                slow_share_text: tp.as_ref().map(|t| share(t, &slow)),
                weight_norm_product: prod,
                text_norm_product: tp,
            });
        }
        let these = &heads[first..];
        layer_w.push(plane_shares(
            these.iter().map(|h| &h.weight_norm_product),
            half,
        ));
        if text.is_some() {
            layer_t.push(plane_shares(
                these.iter().filter_map(|h| h.text_norm_product.as_ref()),
                half,
            ));
        }
    }
    let plane_share_weights = plane_shares(heads.iter().map(|h| &h.weight_norm_product), half);
    let plane_share_text = hidden_in.map(|_| {
        plane_shares(
            heads.iter().filter_map(|h| h.text_norm_product.as_ref()),
            half,
        )
    });
    let slow_sum = |v: &[f64]| {
        v.iter()
            .zip(&slow)
            .filter(|(_, &s)| s)
            .map(|(x, _)| x)
            .sum()
    };
    Ok(Usage {
        context,
        slow_planes: planes
            .iter()
            .filter(|p| !p.turns_within_context)
            .map(|p| p.plane)
            .collect(),
        planes,
        layers: layers.to_vec(),
        slow_share_weights: slow_sum(&plane_share_weights),
        slow_share_text: plane_share_text.as_deref().map(slow_sum),
        plane_share_weights,
        plane_share_text,
        layer_plane_share_weights: layer_w,
        layer_plane_share_text: hidden_in.map(|_| layer_t),
        heads,
    })
}

/// What changing the base by `ratio` does to the turn criterion: the planes that cross it
/// (now slow and turning after, or the reverse) and their share of the energy `shares`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BaseChange {
    /// The new base over the old.
    pub ratio: f64,
    /// Planes that never turned and would turn within the context.
    pub start_turning: Vec<usize>,
    /// Their share of the weight score energy.
    pub start_turning_share: f64,
    /// Planes that turned and would no longer complete a turn.
    pub stop_turning: Vec<usize>,
    /// Their share.
    pub stop_turning_share: f64,
}

/// The planes whose turn criterion flips when the base θ becomes `ratio·θ` (ω_k scales by
/// `ratio^(−2k/r)`), with their share of `shares`.
pub fn base_change(u: &Usage, rotary_dim: usize, ratio: f64, shares: &[f64]) -> BaseChange {
    let mut out = BaseChange {
        ratio,
        start_turning: Vec::new(),
        start_turning_share: 0.0,
        stop_turning: Vec::new(),
        stop_turning_share: 0.0,
    };
    for p in &u.planes {
        let w = p.wavelength * ratio.powf(2.0 * p.plane as f64 / rotary_dim as f64);
        let now = w <= u.context as f64;
        match (p.turns_within_context, now) {
            (false, true) => {
                out.start_turning.push(p.plane);
                out.start_turning_share += shares[p.plane];
            }
            (true, false) => {
                out.stop_turning.push(p.plane);
                out.stop_turning_share += shares[p.plane];
            }
            _ => {}
        }
    }
    out
}
