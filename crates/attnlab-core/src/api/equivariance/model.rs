//! `attnlab equivariance --model PATH --layer L`: the checker on a real trained layer — the
//! layer's own attention sublayer (its RMSNorm, the q/k/v projections, grouped-query attention
//! over every head, `W_o`; [`LlamaWeights::attention`]) on the real hidden states entering
//! layer L (the embedded tokens for L = 0, else the model's first L layers run causally with
//! RoPE, as trained). Without rotation and mask it is equivariant to round-off; with RoPE it
//! breaks; with RoPE and the positions moved along with the tokens it holds again, because
//! rotary scores depend only on the (token, position) pairs.

use ndarray::{Array2, ArrayView2};
use serde::Serialize;

use super::{budget_for, EquivarianceReport, EquivarianceRequest, EquivarianceTimings};
use crate::api::Context;
use crate::attention::Mask;
use crate::experiment::{self, Arithmetic, Broken, PermChoice, Subject, Target, Watch};
use crate::layer::{LayerKind, PosKind, Readout};
use crate::model::llama::{ForwardOptions, LlamaWeights, Positions, RopeTable};
use crate::position::additive::index_signal;
use crate::symmetry::{Forward, Perms, Permutation};
use crate::{Dtype, Error, Real, Result};

/// Which real layer was checked, on which tokens.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelLayer {
    /// The checkpoint as given (`smollm2-135m`, a path).
    pub model: String,
    /// The decoder layer (0-based) whose attention was checked.
    pub layer: usize,
    /// The model's layer count.
    pub layers: usize,
    /// Query heads.
    pub heads: usize,
    /// Key/value heads (grouped-query attention).
    pub kv_heads: usize,
    /// Dimension per head.
    pub head_dim: usize,
    /// The token ids whose hidden states entered the layer.
    pub ids: Vec<u32>,
    /// Whether the ids came from `text` (else drawn uniformly from the vocabulary with `seed`).
    pub from_text: bool,
}

/// The layer's attention as the runner's forward, in `T`: rotary positions 0..n, or the
/// positions the rows' tokens came from when they move (`move_positions`), on `H + add`.
fn forward<'a, T: Real>(
    w: &'a LlamaWeights<T>,
    pos: PosKind,
    mask: Mask,
    moving: bool,
    add: Option<Array2<T>>,
) -> experiment::ForwardAt<'a, T> {
    Box::new(
        move |h: ArrayView2<T>, at: &[usize], out: &mut Forward<T>| {
            let n = h.nrows();
            let rope = (pos == PosKind::Rope).then(|| {
                let p: Vec<i64> = if moving && at.len() == n {
                    at.iter().map(|&i| i as i64).collect()
                } else {
                    (0..n as i64).collect()
                };
                let c = &w.config;
                RopeTable::new(&c.inv_freq, c.rope_attention_factor, &p, c.rope_layout)
            });
            let shifted;
            let h = match &add {
                Some(p) => {
                    shifted = &h + p;
                    shifted.view()
                }
                None => h,
            };
            out.output = w.attention(0, h, rope.as_ref(), mask)?;
            Ok(())
        },
    )
}

fn check_in<T: Real, U: Real>(
    one: &LlamaWeights<f32>,
    h: &Array2<f32>,
    req: &EquivarianceRequest,
    perms: Perms<'_>,
    watch: &Watch<'_>,
) -> Result<experiment::Checked> {
    let a = &req.input;
    let wt = one.cast::<T>();
    let wu = one.cast::<U>();
    let (n, d) = h.dim();
    let subject = Subject {
        check: forward(&wt, a.pos, a.mask, req.move_positions, None),
        broken: (n >= 2).then(|| Broken {
            name: "broken layer (the layer on H + index signal p·1.0)".into(),
            stage: "the negative control".into(),
            forward: forward(
                &wt,
                a.pos,
                a.mask,
                req.move_positions,
                Some(index_signal(n, d, 1.0).mapv(T::from_f64)),
            ),
            rows: None,
        }),
        other_rows: None,
        other: forward(&wu, a.pos, a.mask, req.move_positions, None),
        arithmetic: Arithmetic::Own,
    };
    let ht = h.mapv(|v| T::from_f64(f64::from(v)));
    let hu = h.mapv(|v| U::from_f64(f64::from(v)));
    experiment::run_check(
        subject,
        ht.view(),
        hu.view(),
        perms,
        Target::Equivariance,
        watch,
    )
}

/// Refuses the `equivariance` options a real layer has no use for.
fn refuse_unused(req: &EquivarianceRequest) -> Result<()> {
    let a = &req.input;
    let unused = [
        (a.blocks.is_some(), "--blocks"),
        (a.heads != 1, "--heads"),
        (a.dim.is_some(), "--dim"),
        (a.index_scale.is_some(), "--index-scale"),
        (req.readout != Readout::None, "--readout"),
        (req.product, "--product"),
        (req.layer != LayerKind::Attention, "--layer rnn"),
    ];
    if let Some((_, name)) = unused.iter().find(|(set, _)| *set) {
        return Err(Error::invalid(
            *name,
            "with --model",
            "--model's own layer: its width, heads and projections are the checkpoint's (--layer L picks the layer)",
        ));
    }
    if !matches!(a.pos, PosKind::None | PosKind::Rope) {
        return Err(Error::invalid(
            "--pos",
            a.pos.name(),
            "none or rope with --model (the model rotates queries and keys, or not)",
        ));
    }
    Ok(())
}

/// Runs the check on the model's layer `req.model_layer` (default 0).
///
/// # Errors
/// Options a real layer cannot take, the loader's errors, a layer out of range, a text longer
/// than the trained context, requests over the budget.
pub fn run(model: &str, req: &EquivarianceRequest, ctx: &Context) -> Result<EquivarianceReport> {
    let start = std::time::Instant::now();
    refuse_unused(req)?;
    let a = &req.input;
    a.dtype.require_layer()?;
    PermChoice::at_most_one(
        req.perm.is_some(),
        req.exhaustive,
        req.samples.is_some(),
        "--perm, --exhaustive, --samples",
    )?;
    if req.move_positions && a.pos != PosKind::Rope {
        return Err(Error::invalid(
            "--move-positions",
            format!("with --pos {}", a.pos),
            "--pos rope (the rotary positions are what moves with the tokens)",
        ));
    }
    let loaded = crate::api::model::load(model, ctx)?;
    let w = &loaded.weights;
    let c = &w.config;
    let l = req.model_layer.unwrap_or(0);
    if l >= c.layers {
        return Err(Error::invalid(
            "--layer",
            l,
            format!("0 … {} (the model has {} layers)", c.layers - 1, c.layers),
        ));
    }
    let (ids, from_text) = match &a.text {
        Some(t) => (loaded.ids(&Some(t.clone()), &None, ctx)?, true),
        None => {
            let n = a.n.unwrap_or(crate::layer::defaults::N);
            if n == 0 {
                return Err(Error::invalid("--n", 0, "at least 1 token"));
            }
            crate::api::model::check_length(&w.config, n)?;
            use rand::{RngExt, SeedableRng};
            let mut g = rand_chacha::ChaCha8Rng::seed_from_u64(a.seed);
            let vocab = u32::try_from(c.vocab).unwrap_or(u32::MAX);
            ((0..n).map(|_| g.random_range(0..vocab)).collect(), false)
        }
    };
    let n = ids.len();
    crate::api::model::check_length(&w.config, n)?;
    if req.exhaustive {
        Permutation::exhaustive_length(n)?;
    }
    let count = super::permutation_count(req, n);
    budget_for(n, c.dim, c.heads, count).check(
        format!(
            "an equivariance check of layer {l} with n = {n} over {count} permutation{}",
            if count == 1 { "" } else { "s" }
        ),
        &ctx.limits,
    )?;
    // The hidden states entering layer l: the model as trained (causal, RoPE) for l > 0.
    let h = if l == 0 {
        w.embed(&ids)?
    } else {
        w.forward(
            &ids,
            &ForwardOptions {
                positions: Positions::Rope,
                mask: Mask::Causal,
                layers: Some(l),
                ..ForwardOptions::default()
            },
        )?
        .last
    };
    let one = LlamaWeights {
        config: c.clone(),
        embed: Array2::zeros((0, c.dim)),
        layers: vec![w.layers[l].clone()],
        final_norm: w.final_norm.clone(),
        output: None,
    };
    let perm_seed = req.perm_seed.unwrap_or(a.seed);
    let given = match &req.perm {
        Some(p) => Some(vec![Permutation::parse(&p.joined(), n)?]),
        None => None,
    };
    let choice = PermChoice::from_options(given, req.exhaustive, req.samples, perm_seed, n);
    let listed = match choice {
        PermChoice::Exhaustive => Vec::new(),
        _ => choice.permutations(n)?,
    };
    let perms = match choice {
        PermChoice::Exhaustive => Perms::All(n),
        _ => Perms::List(&listed),
    };
    let inputs_s = start.elapsed().as_secs_f64();
    let watch = Watch {
        cancel: &|| ctx.check_cancelled("equivariance check"),
        progress: &|stage, fraction| (ctx.progress)(stage, fraction),
    };
    let checked = match a.dtype {
        Dtype::F32 => check_in::<f32, f64>(&one, &h, req, perms, &watch)?,
        _ => check_in::<f64, f32>(&one, &h, req, perms, &watch)?,
    };
    let parts = checked.timings;
    let timings = EquivarianceTimings::new(
        inputs_s,
        &parts,
        checked.report.permutations_checked,
        start.elapsed().as_secs_f64(),
    );
    let note = perms
        .all_identity()
        .then(|| crate::present::prose::only_identity(n));
    Ok(EquivarianceReport {
        check: experiment::CheckSummary::new(checked.report, choice.set(perms.len())),
        layer: LayerKind::Attention,
        pos: a.pos,
        mask: a.mask,
        readout: Readout::None,
        dtype: a.dtype,
        seed: a.seed,
        rng: a.rng,
        n,
        dim: c.dim,
        heads: c.heads,
        weight_form: None,
        controls: checked.controls,
        diagnosis: checked.diagnosis?,
        note,
        move_positions: req.move_positions,
        product: None,
        timings,
        model: Some(ModelLayer {
            model: model.to_string(),
            layer: l,
            layers: c.layers,
            heads: c.heads,
            kv_heads: c.kv_heads,
            head_dim: c.head_dim,
            ids,
            from_text,
        }),
    })
}
