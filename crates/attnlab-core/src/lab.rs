//! The practical session's products, computed with defaults that need no input (`attnlab lab`).
//!
//! Seed 002's practical session asks for: (a) the permuted output equal to the permuted original
//! to numerical precision, entry by entry; (b) the positional contribution to a score as a
//! function of separation, at one frequency and at several; (c) the separation at which a single
//! frequency first repeats; (d) a statement of what a chosen multi-frequency set resolves within
//! a given context length. Seed 000 adds three exercises and a reference table. [`run`] computes
//! all of them, plus the facts the course leaves implicit (the causal mask orders access, not
//! distance; the two rotary layouts are one rotation up to a fixed permutation).

use ndarray::Array2;
use serde::Serialize;

use crate::attention::Mask;
use crate::claims::{self, Claim, Fault};
use crate::experiment::{self, SymmetryResult};
use crate::layer::{InputSpec, Inputs, LayerKind, LayerSpec, PosKind};
use crate::numeric::Dtype;
use crate::position::frequencies::{parse_omega_list, Omega, RotaryFrequencies};
use crate::position::rotary::{self, Layout, Rotary};
use crate::rng::{Gaussian, RngKind, StdGaussian};
use crate::symmetry::{self, compare, Permutation};
use crate::{spectrum, Result};

/// What the lab is run with. [`LabConfig::default`] is the course's setting.
#[derive(Debug, Clone)]
pub struct LabConfig {
    /// Seed of numpy's legacy generator (the course program uses 0).
    pub seed: u32,
    /// Sequence length and width of the drawn input (4 and 4 in the course program).
    pub n: usize,
    /// Width.
    pub dim: usize,
    /// The permutation of product (a) (the course program's `[2, 0, 3, 1]`).
    pub perm: Vec<usize>,
    /// The single frequency of products (b) and (c).
    pub omega: String,
    /// The multi-frequency set of products (b) and (d).
    pub omegas: String,
    /// The context length of product (d).
    pub context: u64,
    /// Largest separation shown in product (b).
    pub max_sep: u64,
}

impl Default for LabConfig {
    fn default() -> Self {
        LabConfig {
            seed: 0,
            n: 4,
            dim: 4,
            perm: vec![2, 0, 3, 1],
            omega: "pi/2".into(),
            omegas: "pi/2,pi/3".into(),
            context: 12,
            max_sep: 12,
        }
    }
}

/// Product (a): both arrays and their difference, entry by entry.
#[derive(Debug, Clone, Serialize)]
pub struct PermutedOutput {
    /// The permutation (numpy's `X[perm]`).
    pub perm: Vec<usize>,
    /// Attn(ΠH).
    pub out_perm: Vec<Vec<f64>>,
    /// Π Attn(H), i.e. `out[perm]`.
    pub permuted_out: Vec<Vec<f64>>,
    /// Their difference.
    pub difference: Vec<Vec<f64>>,
    /// The check with its evidence, controls and diagnosis.
    pub check: SymmetryResult,
}

/// Product (b): cos(sω) per separation for one frequency and the mean over a set.
#[derive(Debug, Clone, Serialize)]
pub struct ScoresBySeparation {
    /// The single frequency.
    pub omega: String,
    /// The set.
    pub omegas: Vec<String>,
    /// Per separation: s, cos(sω) for the single frequency, per-plane cosines of the set, their mean.
    pub rows: Vec<ScoreRow>,
    /// Separations (≥ 1) where the single frequency's score equals the score at 0.
    pub single_equal_to_zero: Vec<u64>,
    /// Separations (≥ 1) where the set's mean score equals the score at 0.
    pub set_equal_to_zero: Vec<u64>,
}

/// One separation of product (b).
#[derive(Debug, Clone, Serialize)]
pub struct ScoreRow {
    /// s = j − i.
    pub separation: u64,
    /// cos(sω).
    pub single: f64,
    /// cos(sω_k) for each frequency of the set.
    pub set: Vec<f64>,
    /// Their mean.
    pub set_mean: f64,
}

/// Seed 000's exercises as measured.
#[derive(Debug, Clone, Serialize)]
pub struct Exercise {
    /// Which exercise.
    pub name: String,
    /// What the exercise expects.
    pub expected: String,
    /// Whether the measurement shows it.
    pub confirmed: bool,
    /// The check (verdict, error, tolerance, margin).
    pub verdict: crate::symmetry::Verdict,
    /// Max abs error.
    pub max_abs_error: f64,
    /// Margin (error / tolerance).
    pub margin: f64,
    /// Permutations compared.
    pub permutations_checked: usize,
}

/// A fact beyond the seeds' tables, measured.
#[derive(Debug, Clone, Serialize)]
pub struct Fact {
    /// The statement.
    pub statement: String,
    /// Whether it was confirmed.
    pub confirmed: bool,
    /// The evidence.
    pub evidence: String,
}

/// Everything `attnlab lab` computes.
#[derive(Debug, Clone, Serialize)]
pub struct LabReport {
    /// The inputs of product (a) and the exercises.
    pub setup: serde_json::Value,
    /// (a) the permuted output equals the permuted original, entry by entry.
    pub a_permutation: PermutedOutput,
    /// (b) the positional contribution vs separation.
    pub b_scores: ScoresBySeparation,
    /// (c) the first repeat of the single frequency.
    pub c_first_repeat: spectrum::period::PeriodReport,
    /// (d) what the multi-frequency set resolves within the context.
    pub d_resolution: Resolution,
    /// Seed 000's exercises 1–3.
    pub exercises: Vec<Exercise>,
    /// Seed 000's reference table, filled in by measurement.
    pub reference_table: Vec<Claim>,
    /// Facts beyond the tables.
    pub facts: Vec<Fact>,
    /// The attention weights of the course program (for the heat map).
    #[serde(skip)]
    pub weights: Array2<f64>,
}

/// Product (d) with its plain statement.
#[derive(Debug, Clone, Serialize)]
pub struct Resolution {
    /// The statement the session asks for.
    pub statement: String,
    /// The computation.
    pub result: spectrum::resolve::Resolution,
    /// The same set one separation past its common period, for contrast.
    pub contrast: Option<spectrum::resolve::Resolution>,
    /// Margin per separation 1..=min(2·context, 4096) (for the plot).
    pub margins: Vec<(u64, f64)>,
}

fn nested(a: &Array2<f64>) -> Vec<Vec<f64>> {
    a.rows().into_iter().map(|r| r.to_vec()).collect()
}

fn exercise(name: &str, expected: &str, expect_hold: bool, r: &symmetry::CheckReport) -> Exercise {
    Exercise {
        name: name.into(),
        expected: expected.into(),
        confirmed: r.holds == expect_hold,
        verdict: r.verdict,
        max_abs_error: r.max_abs_error,
        margin: r.margin,
        permutations_checked: r.permutations_checked,
    }
}

fn course_inputs(cfg: &LabConfig) -> Result<Inputs> {
    InputSpec {
        n: Some(cfg.n),
        dim: Some(cfg.dim),
        seed: cfg.seed as u64,
        rng: RngKind::Numpy,
        ..InputSpec::default()
    }
    .build()
}

/// Runs the whole lab.
///
/// # Errors
/// Invalid configuration values (a bad permutation, frequency or context).
pub fn run(cfg: &LabConfig) -> Result<LabReport> {
    // (a) The course program: numpy seed, n = 4, d = 4, perm [2, 0, 3, 1].
    let inputs = course_inputs(cfg)?;
    let perm = Permutation::new(cfg.perm.clone())?;
    let bare = LayerSpec::default();
    let f = bare.build::<f64>(&inputs)?;
    let out = f(inputs.x.view())?;
    let out_perm = f(perm.apply_rows(inputs.x.view())?.view())?;
    let permuted_out = perm.apply_rows(out.view())?;
    let diff = compare(out_perm.view(), permuted_out.view())?;
    let check = experiment::symmetry(&bare, &inputs, std::slice::from_ref(&perm), Dtype::F64)?;
    let weights = bare.weights_fn::<f64>(&inputs, 0)?(inputs.x.view())?;
    let a = PermutedOutput {
        perm: cfg.perm.clone(),
        out_perm: nested(&out_perm),
        permuted_out: nested(&permuted_out),
        difference: nested(&diff.difference),
        check,
    };

    // (b) cos(sω) vs separation.
    let single = Omega::parse(&cfg.omega)?;
    let set = parse_omega_list(&cfg.omegas)?;
    let single_rows = rotary::aligned_scores(&[single], cfg.max_sep)?;
    let set_rows = rotary::aligned_scores(&set, cfg.max_sep)?;
    let rows: Vec<ScoreRow> = single_rows
        .iter()
        .zip(&set_rows)
        .map(|(a, b)| ScoreRow {
            separation: a.separation,
            single: a.mean,
            set: b.scores.clone(),
            set_mean: b.mean,
        })
        .collect();
    // "Scores like s = 0" is the alias criterion of `rope resolve` and `rope score`: every
    // plane's phase within DEFAULT_TOL radians of a full turn.
    let tol = spectrum::resolve::DEFAULT_TOL;
    let b = ScoresBySeparation {
        omega: single.label(),
        omegas: set.iter().map(|o| o.label()).collect(),
        single_equal_to_zero: rotary::separations_like_zero(&[single], cfg.max_sep, tol)?,
        set_equal_to_zero: rotary::separations_like_zero(&set, cfg.max_sep, tol)?,
        rows,
    };

    // (c) the first repeat.
    let c = spectrum::period::period(single, spectrum::resolve::DEFAULT_TOL, 1_000_000)?;

    // (d) what the set resolves within the context.
    let res = spectrum::resolve::resolve(&set, cfg.context, spectrum::resolve::DEFAULT_TOL)?;
    let contrast = match res.common_period {
        Some(p) if p + 1 != cfg.context => Some(spectrum::resolve::resolve(
            &set,
            p + 1,
            spectrum::resolve::DEFAULT_TOL,
        )?),
        _ => None,
    };
    let ws: Vec<f64> = set.iter().map(|o| o.value()).collect();
    let margins = (1..=cfg.context.saturating_mul(2).min(4096))
        .map(|s| (s, spectrum::resolve::margin_direct(&ws, s)))
        .collect();
    let labels: Vec<String> = set.iter().map(|o| o.label()).collect();
    let statement = match (res.resolves, res.first_alias) {
        (true, _) => format!(
            "{{{}}} distinguishes every separation 1..{} from 0 within a context of {}: the smallest margin is {:.4} rad at separation {}{}.",
            labels.join(", "),
            cfg.context - 1,
            cfg.context,
            res.min_margin.unwrap_or(0.0),
            res.margin_at.unwrap_or(0),
            res.common_period.map_or(String::new(), |p| format!("; the set repeats only at its common period {p}"))
        ),
        (false, Some(s)) => format!("{{{}}} does not resolve a context of {}: separation {s} is a full turn of every plane, so it scores exactly like separation 0.", labels.join(", "), cfg.context),
        (false, None) => format!("{{{}}} does not resolve a context of {}.", labels.join(", "), cfg.context),
    };
    let d = Resolution {
        statement,
        result: res,
        contrast,
        margins,
    };

    // Seed 000's exercises.
    let all = Permutation::all(cfg.n.min(8))?;
    let ex_inputs = course_inputs(cfg)?;
    let ex1 = experiment::check(&bare, &ex_inputs, &all, Dtype::F64)?;
    let ex1_f32 = experiment::check(&bare, &ex_inputs, &all, Dtype::F32)?;
    let rnn = experiment::check(
        &LayerSpec {
            kind: LayerKind::Rnn,
            ..bare
        },
        &ex_inputs,
        &all,
        Dtype::F64,
    )?;
    let index = experiment::check(
        &LayerSpec {
            pos: PosKind::Index,
            ..bare
        },
        &ex_inputs,
        &all,
        Dtype::F64,
    )?;
    let sinus = experiment::check(
        &LayerSpec {
            pos: PosKind::Sinusoidal,
            ..bare
        },
        &ex_inputs,
        &all,
        Dtype::F64,
    )?;
    let rope = experiment::check(
        &LayerSpec {
            pos: PosKind::Rope,
            ..bare
        },
        &ex_inputs,
        &all,
        Dtype::F64,
    )?;
    let causal = experiment::check(
        &LayerSpec {
            mask: Mask::Causal,
            ..bare
        },
        &ex_inputs,
        &all,
        Dtype::F64,
    )?;
    let exercises = vec![
        exercise(
            "1: permutation equivariance (every permutation, f64)",
            "holds",
            true,
            &ex1,
        ),
        exercise(
            "1: permutation equivariance (every permutation, f32)",
            "holds",
            true,
            &ex1_f32,
        ),
        exercise("2: the RNN contrast", "breaks", false, &rnn),
        exercise("3: index signal p·0.1 added", "breaks", false, &index),
        exercise("3: sinusoidal positions added", "breaks", false, &sinus),
        exercise(
            "3 (rotary): RoPE on queries and keys",
            "breaks",
            false,
            &rope,
        ),
        exercise("causal mask, no positions", "breaks", false, &causal),
    ];

    let reference_table: Vec<Claim> = claims::ledger(Fault::None)?
        .into_iter()
        .filter(|c| c.source.starts_with("000"))
        .collect();
    let facts = facts(cfg)?;
    let setup = serde_json::json!({
        "rng": "numpy", "seed": cfg.seed, "n": cfg.n, "dim": cfg.dim, "perm": cfg.perm,
        "omega": single.label(), "omegas": b.omegas, "context": cfg.context,
        "X": nested(&inputs.x), "Wq": nested(&inputs.wq), "Wk": nested(&inputs.wk), "Wv": nested(&inputs.wv),
    });
    Ok(LabReport {
        setup,
        a_permutation: a,
        b_scores: b,
        c_first_repeat: c,
        d_resolution: d,
        exercises,
        reference_table,
        facts,
        weights,
    })
}

fn facts(cfg: &LabConfig) -> Result<Vec<Fact>> {
    let mut out = Vec::new();
    // The causal mask orders access, not distance.
    let n = 6;
    let inputs = InputSpec {
        n: Some(n),
        dim: Some(cfg.dim),
        seed: 1,
        ..InputSpec::default()
    }
    .build()?;
    let causal = LayerSpec {
        mask: Mask::Causal,
        ..LayerSpec::default()
    };
    let f = causal.build::<f64>(&inputs)?;
    let t = 4;
    let prefix =
        symmetry::check_prefix_invariance(|x| f(x), inputs.x.view(), t, &Permutation::all(t)?)?;
    let future = StdGaussian::new(2).randn(n - t, cfg.dim);
    let fut = symmetry::check_future_independence(|x| f(x), inputs.x.view(), t, future.view())?;
    out.push(Fact {
        statement: format!("With a causal mask and no positions, outputs at positions ≥ {t} do not change when the {t} tokens before them are shuffled: the mask gives access to a prefix, not the order within it."),
        confirmed: prefix.holds,
        evidence: format!("all {} shuffles of the prefix: max change {:.3e} (tolerance {:.3e})", prefix.permutations_checked, prefix.max_abs_error, prefix.tolerance),
    });
    out.push(Fact {
        statement: format!("With a causal mask, outputs before position {t} do not change when the tokens at {t} and later change."),
        confirmed: fut.holds && fut.max_abs_error == 0.0,
        evidence: format!("max change {:.3e} (exactly 0: masked weights are exactly 0)", fut.max_abs_error),
    });
    // The two rotary layouts are one rotation up to a fixed permutation of coordinates.
    let d = 8;
    let p = rotary::layout_permutation(d)?;
    let freqs = RotaryFrequencies::from_base(10000.0, d)?;
    let (inter, half) = (
        Rotary::from_frequencies(&freqs, Layout::Interleaved),
        Rotary::from_frequencies(&freqs, Layout::HalfSplit),
    );
    let x = StdGaussian::new(3).randn(5, d);
    let positions: Vec<i64> = (0..5).map(|i| 1000 * i + 7).collect();
    let xp = x.select(ndarray::Axis(1), &p);
    let lhs = inter.apply(xp.view(), &positions)?;
    let rhs = half
        .apply(x.view(), &positions)?
        .select(ndarray::Axis(1), &p);
    let layout_err = compare(lhs.view(), rhs.view())?.max_abs;
    // Mixing them (q interleaved, k half-split) changes the scores.
    let q = StdGaussian::new(4).randn(1, d);
    let k = StdGaussian::new(5).randn(1, d);
    let same = inter
        .apply(q.view(), &[3])?
        .row(0)
        .dot(&inter.apply(k.view(), &[10])?.row(0));
    let mixed = inter
        .apply(q.view(), &[3])?
        .row(0)
        .dot(&half.apply(k.view(), &[10])?.row(0));
    out.push(Fact {
        statement: format!("The interleaved (GPT-J) and half-split (GPT-NeoX / HF Llama) rotary layouts are one rotation up to the fixed permutation {p:?} of coordinates; mixing them silently changes scores."),
        confirmed: layout_err == 0.0 && (same - mixed).abs() > 1e-6,
        evidence: format!("interleaved(x[:, P]) vs half_split(x)[:, P]: max difference {layout_err:e}; a score with matching layouts {same:.6} vs mixed {mixed:.6}"),
    });
    Ok(out)
}
