//! The claims ledger: every claim of the two course documents, checked now by computation.
//!
//! Seed 002's "Key claims and status" table has seven rows; seed 000's reference table has three
//! (each comparing bare attention with an RNN). [`ledger`] evaluates all ten and returns, for
//! each, the status the seed gives, the status measured, the evidence (errors, tolerances,
//! margins; for the conditional claim the frequency sets and context lengths it was checked
//! for) and the command that reproduces it.
//!
//! [`Fault`] swaps in a deliberately wrong implementation of one ingredient, so tests (and
//! `attnlab claims --inject-fault …`) can show that the ledger really fails when the
//! mathematics is broken — a ledger that always says "holds" would be worthless.

use ndarray::{Array2, ArrayView2};
use serde::Serialize;

use crate::attention::{mean_readout, softmax_rows};
use crate::embedding::{basis_change, BasisChangeCase, Embedding};
use crate::experiment;
use crate::layer::{InputSpec, Inputs, LayerKind, LayerSpec, PosKind, Readout};
use crate::numeric::Dtype;
use crate::position::frequencies::{Omega, RotaryFrequencies};
use crate::position::rotary::{Layout, Rotary};
use crate::rng::{Gaussian, StdGaussian};
use crate::symmetry::{compare, Permutation, Tolerance};
use crate::{spectrum, Result};

crate::choice! {
    /// A deliberately wrong implementation to swap in (for testing the ledger itself).
    #[derive(Default)]
    pub enum Fault("inject-fault") {
        #[default]
        /// Everything correct.
        None = "none",
        /// One-hot products pick the next row (an off-by-one lookup).
        OneHot = "one-hot",
        /// Attention that leaks position (adds the index signal inside the layer).
        Attention = "attention",
        /// A softmax that weights entries by their column index (order-sensitive).
        Softmax = "softmax",
        /// Keys rotated by the negative angle (breaks the relative-position identity).
        Rope = "rope",
        /// A basis change whose adjacent map uses Sᵀ instead of S⁻¹.
        Basis = "basis",
        /// A period off by one (q + 1 instead of q).
        Period = "period",
    }
}

crate::choice! {
    /// Which document and table a claim comes from.
    pub enum ClaimSource("claim source") {
        /// Seed 002's "Key claims and status" table.
        KeyClaims = "002 key claims",
        /// Seed 000's reference table (bare attention compared with an RNN).
        ReferenceTable = "000 reference table",
    }
}

crate::choice! {
    /// The claims of the ledger, one per row of the two seed tables.
    pub enum ClaimId("claim") {
        /// `one_hot(id) · E == E[id]`.
        OneHot = "one_hot_selects_row",
        /// `Attn(ΠH) = Π Attn(H)` without mask or positions.
        AttentionEquivariance = "attention_equivariance",
        /// `softmax_row(Π S Πᵀ) = Π softmax_row(S) Πᵀ`.
        SoftmaxRelabelling = "softmax_relabelling",
        /// `(R(iω)q)ᵀ(R(jω)k) = qᵀ R((j−i)ω) k`.
        RopeRelativePosition = "rope_relative_position",
        /// Separations 2π/ω apart score alike.
        SingleFrequencyPeriod = "single_frequency_period",
        /// Several frequencies resolve a context (conditional).
        SeveralFrequencies = "several_frequencies",
        /// A basis change is absorbed at a linear interface only.
        BasisChange = "basis_change",
        /// Seed 000: attention is permutation equivariant, an RNN is not.
        PermutationEquivariant = "permutation_equivariant",
        /// Seed 000: attention needs explicit positions, an RNN does not.
        NeedsPositions = "needs_positions",
        /// Seed 000: attention sees a set, an RNN a sequence.
        SetOrSequence = "set_or_sequence",
    }
}

/// One check's error, tolerance and margin.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CheckSummary {
    /// The largest error.
    pub max_abs_error: f64,
    /// The tolerance it is compared with.
    pub tolerance: f64,
    /// error / tolerance.
    pub margin: f64,
}

impl CheckSummary {
    fn of(r: &crate::symmetry::CheckReport) -> Self {
        CheckSummary {
            max_abs_error: r.max_abs_error,
            tolerance: r.tolerance,
            margin: r.margin,
        }
    }
}

/// One frequency of the single-frequency claim: the exact period and what binary64 shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeriodCheck {
    /// The frequency as written.
    pub omega: String,
    /// The period q the spectrum module derives (ω = 2π·a/q in lowest terms).
    pub period: u64,
    /// 2π/|ω|.
    pub wavelength: f64,
    /// The first s ≥ 1 at which binary64 `cos(s·ω)` returns to 1 (within 1e-12), if any up to
    /// [`PERIOD_SEARCH`].
    pub float_first: Option<u64>,
}

/// How far the single-frequency claim searches for the first return of `cos(s·ω)` to 1.
pub const PERIOD_SEARCH: u64 = 1000;

/// Whether a frequency set resolves one context length.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ResolvesAt {
    /// The context length L (separations 1..L−1 are examined).
    pub context: u64,
    /// No separation 1..L−1 aliases 0.
    pub resolves: bool,
    /// The first separation that aliases 0, if any.
    pub first_alias: Option<u64>,
}

impl ResolvesAt {
    fn of(r: &spectrum::resolve::Resolution) -> Self {
        ResolvesAt {
            context: r.context,
            resolves: r.resolves,
            first_alias: r.first_alias,
        }
    }
}

/// What was measured for a claim, beyond its error and tolerance: the inputs and the numbers
/// the evidence sentence states.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Measured {
    /// Every label of a table: `one_hot(id)·E` against `E[id]`.
    OneHot {
        /// Labels compared (the table's rows).
        labels: usize,
        /// The table's width.
        dim: usize,
    },
    /// The equivariance check of a layer over every permutation.
    Equivariance {
        /// Permutations compared.
        permutations: usize,
        /// Sequence length.
        n: usize,
        /// Width.
        dim: usize,
        /// Largest distance in ulps.
        max_ulps: u64,
        /// The tolerance with its derivation.
        tolerance_detail: Tolerance,
    },
    /// A row-wise softmax of a random score matrix under every relabelling.
    Softmax {
        /// The matrix is n × n.
        n: usize,
        /// Standard deviation of its entries.
        entry_std: f64,
        /// Permutations compared.
        permutations: usize,
    },
    /// The relative-position identity on random vectors and positions.
    RopeIdentity {
        /// Random (q, k, i, j) draws.
        trials: usize,
        /// Rotary dimension (planes = dim / 2).
        dim: usize,
        /// Frequency base.
        base: f64,
        /// Positions are below this.
        positions_below: u64,
    },
    /// Exact periods against binary64 scores.
    Periods {
        /// One entry per frequency.
        omegas: Vec<PeriodCheck>,
    },
    /// One frequency set at two context lengths, and its first frequency alone.
    Resolution {
        /// The set's labels.
        set: Vec<String>,
        /// lcm of the periods (exact sets).
        common_period: Option<u64>,
        /// At the context where the claim is true.
        resolves: ResolvesAt,
        /// At the context where it is false.
        aliases: ResolvesAt,
        /// The first frequency's label.
        single: String,
        /// The first frequency alone, at the first context.
        single_result: ResolvesAt,
    },
    /// The basis-change experiment.
    BasisChange {
        /// Shape of H.
        h_shape: [usize; 2],
        /// Shape of W.
        w_shape: [usize; 2],
        /// Shape of S.
        s_shape: [usize; 2],
        /// Linear first, then ReLU, softmax, layer norm.
        cases: Vec<BasisChangeCase>,
    },
    /// Seed 000 row 1: both layers over every permutation.
    AttentionVsRnn {
        /// Permutations compared.
        permutations: usize,
        /// Sequence length.
        n: usize,
        /// Width.
        dim: usize,
        /// Bare attention.
        attention: CheckSummary,
        /// The RNN.
        rnn: CheckSummary,
    },
    /// Seed 000 row 2: how far the readouts of two orders of the same tokens differ.
    OrderReadout {
        /// The first order.
        text: String,
        /// The second order.
        reversed: String,
        /// Bare attention, mean readout.
        bare: f64,
        /// With the index signal, mean readout.
        index: f64,
        /// The RNN's last state.
        rnn: f64,
    },
    /// Seed 000 row 3: the largest change of the sorted output rows over every shuffle.
    SetVsSequence {
        /// Shuffles compared.
        permutations: usize,
        /// Bare attention.
        attention: f64,
        /// The RNN.
        rnn: f64,
    },
}

/// The evidence behind one measured status.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// The largest error of the check (0 when exact).
    pub max_abs_error: f64,
    /// The tolerance the error is compared with (0 for exact comparisons).
    pub tolerance: f64,
    /// error / tolerance (0 when both are 0).
    pub margin: f64,
    /// What was computed, in words, with its numbers: written from [`Evidence::measured`] at
    /// the report boundary ([`crate::api::claims::worded`]); empty in the rows [`ledger`] returns.
    pub details: String,
    /// What was computed, as data.
    pub measured: Measured,
}

/// One row of the ledger.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Claim {
    /// Which claim.
    pub id: ClaimId,
    /// Which document and table the claim comes from.
    pub source: ClaimSource,
    /// The claim, verbatim from the seed (LaTeX kept).
    pub claim: String,
    /// The claim in plain words.
    pub plain: String,
    /// The status the seed gives.
    pub seed_status: String,
    /// Whether the seed marks it exact (its failure fails the ledger).
    pub exact: bool,
    /// The status attnlab measured, in words (`FAILS` when it does not hold): written at the
    /// report boundary ([`crate::api::claims::worded`]); empty in the rows [`ledger`] returns.
    pub measured_status: String,
    /// Whether the measurement agrees with the seed's claim.
    pub holds: bool,
    /// The numbers.
    pub evidence: Evidence,
    /// A command that reproduces the measurement.
    pub command: String,
}

/// The course's text of a claim: where it comes from, its words, the seed's status, and the
/// command that reproduces it.
struct CourseText {
    source: ClaimSource,
    claim: &'static str,
    plain: &'static str,
    seed_status: &'static str,
    exact: bool,
    command: &'static str,
}

fn course_text(id: ClaimId) -> CourseText {
    use ClaimSource::{KeyClaims, ReferenceTable};
    let (source, claim, plain, seed_status, exact, command) = match id {
        ClaimId::OneHot => (
            KeyClaims,
            "Multiplying a one-hot vector by the embedding table selects a row",
            "one_hot(id) · E == E[id]",
            "[Exact.]",
            true,
            "attnlab embed --text \"A B .\"",
        ),
        ClaimId::AttentionEquivariance => (
            KeyClaims,
            "$\\mathrm{Attn}(\\Pi H)=\\Pi \\mathrm{Attn}(H)$ for an unmasked layer without positions",
            "Attn(ΠH) = Π Attn(H) for an unmasked layer without positions",
            "[Exact.]",
            true,
            "attnlab equivariance --n 5 --exhaustive",
        ),
        ClaimId::SoftmaxRelabelling => (
            KeyClaims,
            "A row-wise softmax commutes with the relabelling induced by $\\Pi$",
            "softmax_row(Π S Πᵀ) = Π softmax_row(S) Πᵀ",
            "[Exact.]",
            true,
            "attnlab claims --json (this row); the same property inside a layer: attnlab equivariance --n 6 --exhaustive (row A(ΠH) = Π A(H) Πᵀ)",
        ),
        ClaimId::RopeRelativePosition => (
            KeyClaims,
            "$({\\mathbf{q}}_i^{\\prime }{)}^{\\mathsf{T}}{\\mathbf{k}}_j^{\\prime }={\\mathbf{q}}_i^{\\mathsf{T}}R((j-i)\\omega ){\\mathbf{k}}_j$",
            "(R(iω)q)ᵀ(R(jω)k) = qᵀ R((j−i)ω) k",
            "[Exact.]",
            true,
            "attnlab claims --json (this row); the same identity on other random draws: attnlab rope identity --base 10000 --dim 8",
        ),
        ClaimId::SingleFrequencyPeriod => (
            KeyClaims,
            "A single frequency identifies separations differing by $2\\pi /\\omega$",
            "cos(sω) = cos((s + 2π/ω)ω): separations 2π/ω apart give equal scores",
            "[Exact.]",
            true,
            "attnlab rope period --omega pi/2; attnlab rope score --omega pi/2 --max-sep 12",
        ),
        ClaimId::SeveralFrequencies => (
            KeyClaims,
            "Several frequencies distinguish every separation in a context",
            "several frequencies distinguish every separation in a context (depends on the set and the length)",
            "Conditional; depends on the frequency set and the length, and must be checked",
            false,
            "attnlab rope resolve --omega pi/2,pi/3 --context 13",
        ),
        ClaimId::BasisChange => (
            KeyClaims,
            "An invertible change of basis is absorbed at a linear interface",
            "h → S h with W → W S⁻¹ leaves a linear interface unchanged; not through nonlinearities",
            "[Exact] at that interface; does not extend through nonlinearities in general",
            true,
            "attnlab embed --basis-change",
        ),
        ClaimId::PermutationEquivariant => (
            ReferenceTable,
            "Permutation equivariant: attention YES — verified: shuffling input permutes output identically; RNN NO — order is baked into the recurrence",
            "bare attention is permutation equivariant; an RNN is not",
            "attention YES, RNN NO",
            true,
            "attnlab equivariance --n 5 --exhaustive; attnlab equivariance --layer rnn",
        ),
        ClaimId::NeedsPositions => (
            ReferenceTable,
            "Needs explicit positional encoding: attention YES (module 09-11); RNN NO (built in)",
            "without positions bare attention cannot tell AB from BA; with positions it can; an RNN can without",
            "attention YES, RNN NO",
            true,
            "attnlab claims --json (this row); related: attnlab equivariance --text \"A B .\" --readout mean",
        ),
        ClaimId::SetOrSequence => (
            ReferenceTable,
            "Operates on input as: attention a set (order-agnostic) until position is added; RNN an ordered sequence",
            "attention's outputs, as a set, do not depend on the order of its inputs; an RNN's do",
            "attention: set; RNN: sequence",
            true,
            "attnlab claims --json (this row); related: attnlab equivariance --n 5 --exhaustive --readout mean",
        ),
    };
    CourseText {
        source,
        claim,
        plain,
        seed_status,
        exact,
        command,
    }
}

/// A ledger row: the course's text of `id` and the measurement (its status and evidence
/// sentences are written at the report boundary, [`crate::api::claims::worded`]).
fn claim(id: ClaimId, holds: bool, err: f64, tol: f64, measured: Measured) -> Claim {
    let text = course_text(id);
    Claim {
        id,
        source: text.source,
        claim: text.claim.into(),
        plain: text.plain.into(),
        seed_status: text.seed_status.into(),
        exact: text.exact,
        measured_status: String::new(),
        holds,
        evidence: Evidence {
            max_abs_error: err,
            tolerance: tol,
            margin: if err == 0.0 { 0.0 } else { err / tol },
            details: String::new(),
            measured,
        },
        command: text.command.into(),
    }
}

fn inputs(text: Option<&str>, n: usize, d: usize, seed: u64) -> Result<Inputs> {
    InputSpec {
        n: text.map_or(Some(n), |_| None),
        dim: text.map_or(Some(d), |_| None),
        text: text.map(str::to_string),
        seed,
        // The ledger's drawn inputs use the crate's own generator (its recorded values).
        rng: crate::rng::RngKind::Std,
        ..InputSpec::default()
    }
    .build()
}

fn attention_spec(fault: Fault) -> LayerSpec {
    if fault == Fault::Attention {
        LayerSpec {
            pos: PosKind::Index,
            index_scale: 0.5,
            ..LayerSpec::default()
        }
    } else {
        LayerSpec::default()
    }
}

fn claim_one_hot(fault: Fault) -> Result<Claim> {
    let e = Embedding::example();
    let mut err = 0.0f64;
    for id in 0..e.vocab() {
        let row = if fault == Fault::OneHot {
            (id + 1) % e.vocab()
        } else {
            id
        };
        let prod = e.one_hot_product(row)?;
        err = err.max(
            (&prod - &e.table().row(id))
                .iter()
                .fold(0.0, |m, v: &f64| m.max(v.abs())),
        );
    }
    Ok(claim(
        ClaimId::OneHot,
        err == 0.0,
        err,
        0.0,
        Measured::OneHot {
            labels: e.vocab(),
            dim: e.dim(),
        },
    ))
}

fn claim_attention(fault: Fault) -> Result<Claim> {
    let (n, d) = (5, 4);
    let inp = inputs(None, n, d, 0)?;
    let perms = Permutation::all(n)?;
    let r = experiment::check(&attention_spec(fault), &inp, &perms, Dtype::F64)?;
    Ok(claim(
        ClaimId::AttentionEquivariance,
        r.holds,
        r.max_abs_error,
        r.tolerance,
        Measured::Equivariance {
            permutations: r.permutations_checked,
            n,
            dim: d,
            max_ulps: r.max_ulps,
            tolerance_detail: r.tolerance_detail,
        },
    ))
}

fn softmax_with(fault: Fault, s: &mut Array2<f64>) {
    softmax_rows(s);
    if fault == Fault::Softmax {
        for mut row in s.rows_mut() {
            for (j, v) in row.iter_mut().enumerate() {
                *v *= 1.0 + 0.1 * j as f64;
            }
            let sum = row.sum();
            row.mapv_inplace(|v| v / sum);
        }
    }
}

fn claim_softmax(fault: Fault) -> Result<Claim> {
    let (n, std) = (6, 3.0);
    let s = StdGaussian::new(5).randn(n, n).mapv(|v| std * v);
    let mut base = s.clone();
    softmax_with(fault, &mut base);
    let mut err = 0.0f64;
    let mut count = 0;
    for p in Permutation::all(n)? {
        let mut lhs = p.conjugate(s.view())?;
        softmax_with(fault, &mut lhs);
        let rhs = p.conjugate(base.view())?;
        err = err.max(compare(lhs.view(), rhs.view())?.max_abs);
        count += 1;
    }
    // Only the order of each row's sum changes: 8·eps·n relative to max|softmax| ≤ 1.
    let tol = Tolerance::for_layer::<f64>(n, 0, 1.0);
    Ok(claim(
        ClaimId::SoftmaxRelabelling,
        err <= tol.value,
        err,
        tol.value,
        Measured::Softmax {
            n,
            entry_std: std,
            permutations: count,
        },
    ))
}

fn claim_rope(fault: Fault) -> Result<Claim> {
    let d = 8;
    let base = 10000.0;
    let freqs = RotaryFrequencies::from_base(base, d)?;
    let rot = Rotary::from_frequencies(&freqs, Layout::Interleaved);
    let mut g = StdGaussian::new(17);
    let mut err = 0.0f64;
    let mut scale = 0.0f64;
    let mut pos = crate::rng::NumpyLegacy::new(17);
    let (trials, positions_below) = (200, 10_000u64);
    for _ in 0..trials {
        let q = g.randn(1, d);
        let k = g.randn(1, d);
        let i = (pos.uniform() * positions_below as f64) as i64;
        let j = (pos.uniform() * positions_below as f64) as i64;
        let qi = rot.apply(q.view(), &[i])?;
        let kj = rot.apply(k.view(), &[if fault == Fault::Rope { -j } else { j }])?;
        let lhs = qi.row(0).dot(&kj.row(0));
        let krel = rot.apply(k.view(), &[j - i])?;
        let rhs = q.row(0).dot(&krel.row(0));
        err = err.max((lhs - rhs).abs());
        scale = scale.max(
            q.iter()
                .zip(k.iter())
                .map(|(a, b)| (a * b).abs())
                .sum::<f64>(),
        );
    }
    // Each side: cos/sin of exactly reduced angles (≤ 1 ulp each), rotations (2 roundings per
    // coordinate) and a d-term dot product: 8·eps·d·max Σ|q_m k_m| bounds their difference.
    let tol = 8.0 * f64::EPSILON * d as f64 * scale;
    Ok(claim(
        ClaimId::RopeRelativePosition,
        err <= tol,
        err,
        tol,
        Measured::RopeIdentity {
            trials,
            dim: d,
            base,
            positions_below,
        },
    ))
}

fn claim_single_frequency(fault: Fault) -> Result<Claim> {
    // For ω = 2π/q: the period the spectrum module derives exactly must be what plain binary64
    // arithmetic shows — the first s ≥ 1 whose score cos(s·ω) returns to 1, and equal scores at s
    // and s + q for every s — with the tolerance of one rounding of the phase s·ω (|Δcos| ≤
    // |Δphase| ≤ 2·eps·s·|ω|) plus the cosines' own rounding.
    let mut err = 0.0f64;
    let mut tol_max = 0.0f64;
    let mut ok = true;
    let mut omegas = Vec::new();
    for text in ["pi/2", "pi/3", "2*pi/7", "pi*3/8"] {
        let w = Omega::parse(text)?;
        let rep = spectrum::period::period(w, spectrum::resolve::DEFAULT_TOL, PERIOD_SEARCH)?;
        let exact_q = rep.first_repeat.unwrap_or(0);
        let q = if fault == Fault::Period {
            exact_q + 1
        } else {
            exact_q
        };
        let wf = w.value();
        let float_first = (1..=PERIOD_SEARCH).find(|&s| (s as f64 * wf).cos() >= 1.0 - 1e-12);
        ok &= q > 0 && float_first == Some(q);
        for s in 0..3 * q {
            let (a, b) = ((s as f64 * wf).cos(), ((s + q) as f64 * wf).cos());
            let tol = 2.0 * f64::EPSILON * ((s + q) as f64 * wf.abs()) + 4.0 * f64::EPSILON;
            err = err.max((a - b).abs());
            tol_max = tol_max.max(tol);
            ok &= (a - b).abs() <= tol;
        }
        omegas.push(PeriodCheck {
            omega: text.into(),
            period: q,
            wavelength: rep.wavelength,
            float_first,
        });
    }
    Ok(claim(
        ClaimId::SingleFrequencyPeriod,
        ok,
        err,
        tol_max,
        Measured::Periods { omegas },
    ))
}

fn claim_several_frequencies() -> Result<Claim> {
    let set = crate::position::frequencies::parse_omega_list("pi/2,pi/3")?;
    let tol = spectrum::resolve::DEFAULT_TOL;
    let yes = spectrum::resolve::resolve(&set, 12, tol)?;
    let no = spectrum::resolve::resolve(&set, 13, tol)?;
    let single = spectrum::resolve::resolve(&set[..1], 12, tol)?;
    let holds = yes.resolves && !no.resolves && no.first_alias == Some(12) && !single.resolves;
    Ok(claim(
        ClaimId::SeveralFrequencies,
        holds,
        0.0,
        tol,
        Measured::Resolution {
            set: set.iter().map(|o| o.label()).collect(),
            common_period: yes.common_period,
            resolves: ResolvesAt::of(&yes),
            aliases: ResolvesAt::of(&no),
            single: set[0].label(),
            single_result: ResolvesAt::of(&single),
        },
    ))
}

fn claim_basis(fault: Fault) -> Result<Claim> {
    let mut g = StdGaussian::new(21);
    let h = g.randn(5, 4);
    let w = g.randn(4, 3);
    let s = g.randn(4, 4);
    let cases = if fault == Fault::Basis {
        // Wrong: use Sᵀ where S⁻¹ belongs (only right for orthogonal S).
        let st = s.t().to_owned();
        let wrong = h.dot(&s).dot(&st.dot(&w));
        let reference = h.dot(&w);
        let err = (&wrong - &reference)
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        let mut c = basis_change(h.view(), w.view(), s.view())?;
        c[0].max_abs_error = err;
        c[0].margin = err / c[0].tolerance;
        c[0].unchanged = err <= c[0].tolerance;
        c
    } else {
        basis_change(h.view(), w.view(), s.view())?
    };
    let linear = &cases[0];
    let nonlinear_break = cases[1..].iter().all(|c| !c.unchanged);
    let holds = linear.unchanged && nonlinear_break;
    let shape = |a: &Array2<f64>| [a.nrows(), a.ncols()];
    Ok(claim(
        ClaimId::BasisChange,
        holds,
        linear.max_abs_error,
        linear.tolerance,
        Measured::BasisChange {
            h_shape: shape(&h),
            w_shape: shape(&w),
            s_shape: shape(&s),
            cases,
        },
    ))
}

fn readout_gap(spec: &LayerSpec, ab: &Inputs, ba: &Inputs, last: bool) -> Result<f64> {
    let f_ab = spec.build::<f64>(ab)?;
    let f_ba = spec.build::<f64>(ba)?;
    let (a, b) = (f_ab(ab.x.view())?, f_ba(ba.x.view())?);
    let pick = |m: Array2<f64>| {
        if last {
            m.slice(ndarray::s![m.nrows() - 1.., ..]).to_owned()
        } else {
            mean_readout(m.view())
        }
    };
    Ok((&pick(a) - &pick(b))
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs())))
}

/// Seed 000's reference table (its three rows), measured with `fault` swapped in.
///
/// # Errors
/// Only on internal shape errors (never for the built-in inputs).
pub fn reference_table(fault: Fault) -> Result<Vec<Claim>> {
    let (n, d) = (5, 4);
    let inp = inputs(None, n, d, 0)?;
    let perms = Permutation::all(n)?;
    let attn = experiment::check(&attention_spec(fault), &inp, &perms, Dtype::F64)?;
    let rnn_spec = LayerSpec {
        kind: LayerKind::Rnn,
        ..LayerSpec::default()
    };
    let rnn = experiment::check(&rnn_spec, &inp, &perms, Dtype::F64)?;
    let row1 = attn.holds && !rnn.holds;

    // Row 2: does the model need explicit positions to tell AB from BA? Compare readouts of the
    // layer's output for "A B ." and "B A ." (same seed, same weights).
    let (text, reversed) = ("A B .", "B A .");
    let ab = inputs(Some(text), 0, 0, 0)?;
    let ba = inputs(Some(reversed), 0, 0, 0)?;
    let mean_spec = LayerSpec {
        readout: Readout::None,
        ..attention_spec(fault)
    };
    let bare_gap = readout_gap(&mean_spec, &ab, &ba, false)?;
    let pos_gap = readout_gap(
        &LayerSpec {
            pos: PosKind::Index,
            index_scale: 0.5,
            ..LayerSpec::default()
        },
        &ab,
        &ba,
        false,
    )?;
    let rnn_gap = readout_gap(&rnn_spec, &ab, &ba, true)?;
    let tol = Tolerance::for_layer::<f64>(3, 2, 1.0).value;
    let row2 = bare_gap <= tol && pos_gap > tol && rnn_gap > tol;

    // Row 3: set vs sequence — the multiset of attention's output rows is unchanged by any
    // shuffle (equivariance), while the RNN's outputs change as a set.
    let multiset_err = |spec: &LayerSpec| -> Result<f64> {
        let f = spec.build::<f64>(&inp)?;
        let base = sorted_rows(f(inp.x.view())?.view());
        let mut e = 0.0f64;
        for p in &perms {
            let out = sorted_rows(f(p.apply_rows(inp.x.view())?.view())?.view());
            e = e.max((&out - &base).iter().fold(0.0, |m, v: &f64| m.max(v.abs())));
        }
        Ok(e)
    };
    let set_attn = multiset_err(&attention_spec(fault))?;
    let set_rnn = multiset_err(&rnn_spec)?;
    let row3 = set_attn <= attn.tolerance && set_rnn > attn.tolerance;
    Ok(vec![
        claim(
            ClaimId::PermutationEquivariant,
            row1,
            attn.max_abs_error,
            attn.tolerance,
            Measured::AttentionVsRnn {
                permutations: perms.len(),
                n,
                dim: d,
                attention: CheckSummary::of(&attn),
                rnn: CheckSummary::of(&rnn),
            },
        ),
        claim(
            ClaimId::NeedsPositions,
            row2,
            bare_gap,
            tol,
            Measured::OrderReadout {
                text: text.into(),
                reversed: reversed.into(),
                bare: bare_gap,
                index: pos_gap,
                rnn: rnn_gap,
            },
        ),
        claim(
            ClaimId::SetOrSequence,
            row3,
            set_attn,
            attn.tolerance,
            Measured::SetVsSequence {
                permutations: perms.len(),
                attention: set_attn,
                rnn: set_rnn,
            },
        ),
    ])
}

fn sorted_rows(a: ArrayView2<f64>) -> Array2<f64> {
    let mut rows: Vec<Vec<f64>> = a.rows().into_iter().map(|r| r.to_vec()).collect();
    rows.sort_by(|x, y| {
        x.iter()
            .zip(y)
            .map(|(a, b)| a.total_cmp(b))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    // Cannot fail: the rows are a permutation of a's rows, so they fill a.dim() exactly.
    Array2::from_shape_vec(a.dim(), rows.concat()).expect("same shape")
}

/// Evaluates every claim of both seeds, with `fault` swapped in (use [`Fault::None`]).
///
/// # Errors
/// Only on internal shape errors (never for the built-in inputs).
pub fn ledger(fault: Fault) -> Result<Vec<Claim>> {
    let mut out = vec![
        claim_one_hot(fault)?,
        claim_attention(fault)?,
        claim_softmax(fault)?,
        claim_rope(fault)?,
        claim_single_frequency(fault)?,
        claim_several_frequencies()?,
        claim_basis(fault)?,
    ];
    out.extend(reference_table(fault)?);
    Ok(out)
}

/// Whether the ledger passes: every claim the seeds mark exact holds (and the conditional one
/// behaves as stated).
pub fn all_hold(claims: &[Claim]) -> bool {
    claims.iter().all(|c| c.holds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_claim_holds_with_correct_implementations() {
        let claims = ledger(Fault::None).unwrap();
        for c in &claims {
            assert!(c.holds, "{}: {:?}", c.plain, c.evidence.measured);
        }
        assert_eq!(claims.len(), 10);
    }

    #[test]
    fn each_fault_breaks_its_claim() {
        for (fault, needle) in [
            (Fault::OneHot, "one_hot"),
            (Fault::Attention, "Attn(ΠH)"),
            (Fault::Softmax, "softmax_row"),
            (Fault::Rope, "R((j−i)ω)"),
            (Fault::Basis, "W S⁻¹"),
        ] {
            let claims = ledger(fault).unwrap();
            let broken: Vec<&Claim> = claims.iter().filter(|c| !c.holds).collect();
            assert!(
                broken.iter().any(|c| c.plain.contains(needle)),
                "{fault:?} should break the claim mentioning {needle}"
            );
            assert!(!all_hold(&claims));
        }
    }
}
