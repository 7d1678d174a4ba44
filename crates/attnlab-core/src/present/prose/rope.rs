//! Sentences of the rope commands (`rope identity|score|period|resolve|audit`), written from
//! their typed reports.

use crate::number::{sci, short, sig};
use crate::position::frequencies::RopeType;
use crate::spectrum::audit::{
    AuditFindings, DecayFinding, DriftFinding, FactorSet, InvarianceFinding, LongropeFinding,
    MinBaseFinding, PrecisionFinding, ResolutionFinding, TrainedFinding, TurnsFinding,
};
use crate::spectrum::period::PeriodReport;
use crate::spectrum::resolve::Resolution;

/// `n word` with the plural `words` unless n = 1.
fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `Separation 1 is` or `Every separation 1..n is` (n ≥ 1).
fn every_separation(n: u64) -> String {
    if n == 1 {
        "Separation 1 is".into()
    } else {
        format!("Every separation 1..{n} is")
    }
}

/// The separations 1..n in words: `separation 1` or `separations 1..n`.
fn separations(n: u64) -> String {
    if n == 1 {
        "separation 1".into()
    } else {
        format!("separations 1..{n}")
    }
}

/// One rope set of a model, for the model's verdict.
#[derive(Debug, Clone)]
pub struct SetSummary {
    /// Its layer type.
    pub layer_type: Option<String>,
    /// Layers using it.
    pub layers: Option<usize>,
    /// All layers.
    pub total: Option<usize>,
    /// Its base.
    pub base: Option<f64>,
    /// Its scaling type, when it has one.
    pub rope_type: Option<RopeType>,
    /// Whether the verdict's paragraph is about it.
    pub primary: bool,
    /// Its findings.
    pub findings: AuditFindings,
}

/// A model's verdict: the primary set's paragraph ([`audit_verdict`]), then one sentence per
/// other rope set (its layers, base, and what differs).
pub fn model_verdict(primary: &AuditFindings, sets: &[SetSummary]) -> String {
    let mut v = audit_verdict(primary);
    if sets.len() < 2 {
        return v;
    }
    let describe = |s: &SetSummary| {
        let layers = match (s.layers, s.total) {
            (Some(k), Some(t)) => format!(" ({k} of {t} layers)"),
            (Some(k), None) => format!(" ({})", count(k as u64, "layer", "layers")),
            (None, _) => String::new(),
        };
        let base = s
            .base
            .map(|b| format!(", base {}", short(b)))
            .unwrap_or_default();
        let ty = s
            .rope_type
            .map(|t| format!(", {t} rope"))
            .unwrap_or_default();
        format!(
            "{}{layers}{base}{ty}",
            s.layer_type.as_deref().unwrap_or("all layers")
        )
    };
    let list: Vec<String> = sets.iter().map(describe).collect();
    v += &format!(
        " This model rotates with {} rope sets, audited separately (rope_sets): {}.",
        sets.len(),
        list.join("; ")
    );
    for s in sets.iter().filter(|s| !s.primary) {
        v += &format!(
            " {}: {}",
            s.layer_type.as_deref().unwrap_or("other layers"),
            set_headline(&s.findings)
        );
    }
    v
}

/// The headline facts of a non-primary set: turns, decay, minimum base.
fn set_headline(f: &AuditFindings) -> String {
    let mut v = format!(
        "{} of {} planes complete a full turn within {} positions; ",
        f.turns.full_turn, f.turns.planes, f.context
    );
    v += match f.decay {
        DecayFinding::Holds { .. } => "the decay criterion holds",
        DecayFinding::Fails { .. } => "the decay criterion fails",
    };
    if let DecayFinding::Fails { first_negative } = f.decay {
        v += &format!(" (first at m = {first_negative})");
    }
    v + "."
}

/// The audit's verdict: one paragraph stating every finding, every number taken from
/// `findings`. Beyond the trained context it leads with that fact, and the resolution is stated
/// as a property of the frequencies rather than a reassurance.
pub fn audit_verdict(f: &AuditFindings) -> String {
    let beyond = f.trained.is_some_and(|t| t.beyond);
    let mut v = String::new();
    if let Some(t) = f.trained.filter(|t| t.beyond) {
        v += &trained(&t, f.context);
    }
    v += &turns(&f.turns, f.context);
    if let Some(a) = f.attention_factor {
        v += &format!(
            "cos and sin are scaled by an attention factor of {}. ",
            sig(a, 4)
        );
    }
    if let Some(s) = f.softmax_scale_factor {
        v += &format!(
            "The softmax scale 1/√d is multiplied by {} (mscale² with mscale_all_dim), on top of the cos/sin factor: a runtime that omits it matches the model only at the first position. ",
            sig(s, 4)
        );
    }
    if let Some(l) = &f.longrope {
        v += &longrope(l, f.context);
    }
    if let Some(d) = &f.scaled_vs_unscaled {
        v += &drift(d, f.context);
    }
    if beyond {
        v += &resolution_beyond(&f.resolution, f.context);
    } else {
        v += &resolution_finding(&f.resolution, f.context);
    }
    if let Some(s) = &f.signed {
        v += &bidirectional(s, f.context);
    }
    v += &decay(&f.decay, f.context);
    if let Some(m) = &f.min_base {
        v += &min_base(m);
    }
    if let Some(m) = &f.min_base_effective {
        v += &min_base(m);
    }
    v += &precision(&f.precision, f.context);
    if let Some(i) = &f.invariance {
        v += &invariance(i);
    }
    if let Some(t) = f.trained.filter(|t| !t.beyond) {
        v += &format!(
            " The audited length {} is within the context the configuration states ({}).",
            f.context, t.limit
        );
    }
    v
}

fn trained(t: &TrainedFinding, l: u64) -> String {
    let c = &t.trained;
    let mut what = Vec::new();
    if let Some(m) = c.max_position_embeddings {
        what.push(format!("max_position_embeddings {m}"));
    }
    if let Some(o) = c.original {
        what.push(format!("pre-training context {o}"));
    }
    if let Some(i) = c.intended {
        what.push(format!("intended length factor × original = {i}"));
    }
    format!(
        "The audited length {l} is beyond the context this configuration was trained for ({}; limit {}): positions past it were never seen in training, so what follows describes the frequencies there, not how well the model uses them. ",
        what.join(", "),
        t.limit
    )
}

fn longrope(l: &LongropeFinding, ctx: u64) -> String {
    let now = match l.set {
        FactorSet::Short => format!(
            "LongRoPE uses short_factor at this length and switches to long_factor at sequence length {} (original + 1)",
            l.switch_at
        ),
        FactorSet::Long => format!(
            "LongRoPE uses long_factor at this length: it switched from short_factor at sequence length {} (original + 1){}",
            l.switch_at,
            if l.switch_at <= ctx {
                ", inside the audited length"
            } else {
                ""
            }
        ),
    };
    format!(
        "{now}; a KV cache written before the switch is inconsistent after it (its keys were rotated with the other factors). "
    )
}

fn drift(d: &DriftFinding, l: u64) -> String {
    let first = match d.first_below_0_9 {
        Some(m) => format!("falls below 0.9 first at position {m}"),
        None => format!("stays ≥ 0.9 up to position {}", d.searched_to - 1),
    };
    format!(
        "A runtime that drops the scaling (the most common failure) rotates differently: the cosine similarity of the scaled and unscaled rotations of a query {first}, and is {} at the last position {}. ",
        sig(d.at_last_position, 3),
        l - 1
    )
}

fn resolution_beyond(r: &ResolutionFinding, l: u64) -> String {
    match *r {
        ResolutionFinding::Resolves { .. } => format!(
            "The frequencies still tell every separation 1..{} from 0, which says nothing about whether the model learned to use separations it never saw. ",
            l - 1
        ),
        ResolutionFinding::Aliases { .. } | ResolutionFinding::NoSeparation => {
            resolution_finding(r, l)
        }
    }
}

fn bidirectional(r: &ResolutionFinding, l: u64) -> String {
    match *r {
        ResolutionFinding::Resolves { .. } => format!(
            "For unmasked (bidirectional) layers, whose offsets run from −{0} to {0}, every pair of offsets is distinguished too (separations up to {1}). ",
            l.saturating_sub(1),
            2 * l.saturating_sub(1)
        ),
        ResolutionFinding::Aliases { separation, .. } => format!(
            "For unmasked (bidirectional) layers, offsets that differ by {separation} (≤ {}) are indistinguishable: the pairwise criterion fails. ",
            2 * l.saturating_sub(1)
        ),
        ResolutionFinding::NoSeparation => String::new(),
    }
}

fn turns(t: &TurnsFinding, l: u64) -> String {
    let context = format!("the context of {}", count(l, "position", "positions"));
    let wl = if t.planes == 1 || t.wavelength_min == t.wavelength_max {
        format!("wavelength {} positions", sig(t.wavelength_min, 4))
    } else {
        format!(
            "wavelengths {} to {} positions",
            sig(t.wavelength_min, 4),
            sig(t.wavelength_max, 4)
        )
    };
    let rest = t.planes - t.full_turn;
    if t.full_turn == t.planes {
        if t.planes == 1 {
            format!("The plane completes at least one full turn within {context} ({wl}). ")
        } else if t.planes == 2 {
            format!("Both planes complete at least one full turn within {context} ({wl}). ")
        } else {
            format!(
                "All {} planes complete at least one full turn within {context} ({wl}). ",
                t.planes
            )
        }
    } else if t.planes == 1 {
        format!("The plane turns by less than one full turn within {context} ({wl}), so there it acts as a slow, nearly monotone position signal. ")
    } else if rest == 1 {
        format!(
            "{} of {} planes complete a full turn within {context} ({wl}); the other one turns by less than one full turn over the whole context, so there it acts as a slow, nearly monotone position signal. ",
            t.full_turn, t.planes
        )
    } else {
        format!(
            "{} of {} planes complete a full turn within {context} ({wl}); the other {rest} turn by less than one full turn over the whole context, so there they act as slow, nearly monotone position signals. ",
            t.full_turn, t.planes
        )
    }
}

fn resolution_finding(r: &ResolutionFinding, l: u64) -> String {
    match *r {
        ResolutionFinding::Resolves {
            closest_separation,
            margin,
        } if l == 2 => format!(
            "Separation {closest_separation} is distinguishable from 0 with a margin of {} rad. ",
            sig(margin, 4)
        ),
        ResolutionFinding::Resolves {
            closest_separation,
            margin,
        } => format!(
            "{} distinguishable from 0: the closest call is separation {closest_separation} with a margin of {} rad. ",
            every_separation(l - 1),
            sig(margin, 4)
        ),
        ResolutionFinding::Aliases { separation, tol } => format!(
            "Separation {separation} is indistinguishable from 0 (every plane within {} rad of a full turn): the set aliases within the context. ",
            sci(tol)
        ),
        ResolutionFinding::NoSeparation => {
            "A context of 1 position has no separation to distinguish. ".into()
        }
    }
}

fn decay(d: &DecayFinding, l: u64) -> String {
    match *d {
        DecayFinding::Holds { min_mean, at } => format!(
            "The long-distance decay criterion of Men et al. 2024 holds: B(m) = Σcos(mω) stays ≥ 0 for all m < {l} (minimum mean {} at m = {at}). ",
            sig(min_mean, 4)
        ),
        DecayFinding::Fails { first_negative } => format!(
            "The decay criterion of Men et al. 2024 fails: B(m) = Σcos(mω) first turns negative at m = {first_negative} < {l}. "
        ),
    }
}

fn min_base(m: &MinBaseFinding) -> String {
    let which = match m.effective_type {
        Some(t) => format!(" with this configuration's {t} scaling (its effective frequencies)"),
        None => String::new(),
    };
    let island = m
        .island_rel_width
        .map(|w| format!(", the start of a passing island {} wide (relative)", sci(w)))
        .unwrap_or_default();
    let head = format!(
        "The smallest base satisfying it for rotary dimension {}{which} is {}{island}",
        m.rotary_dim,
        sig(m.base, 8)
    );
    let f32 = match (m.f32_passes, m.f32_first_negative) {
        (Some(false), Some(at)) => format!(
            " In float32 (as Su's table was computed) that base fails at m = {at}: f32 and f64 disagree at the island's edge."
        ),
        (Some(false), None) => " In float32 that base fails.".into(),
        (Some(true) | None, _) => String::new(),
    };
    let body = match (&m.configured, &m.effective) {
        (Some(c), Some(e)) => format!(
            "{head} (configured: {}, ratio {}; effective at this context: {}, ratio {}).",
            short(c.base),
            sig(c.ratio, 4),
            sig(e.base, 4),
            sig(e.ratio, 4)
        ),
        (Some(c), None) => format!(
            "{head} (configured: {}, ratio {}).",
            short(c.base),
            sig(c.ratio, 4)
        ),
        (None, Some(_) | None) => format!("{head}."),
    };
    format!("{body}{f32} ")
}

fn precision(p: &PrecisionFinding, l: u64) -> String {
    let mut v = format!(
        "Position ids cast to {} would keep {} of {l} distinct values",
        p.dtype, p.distinct_positions
    );
    if let Some(o) = p.overflow_from {
        v += &format!(", ids from {o} overflow");
    }
    let exact = p
        .exact_up_to
        .map(|x| format!("exact only up to {x}; "))
        .unwrap_or_default();
    v += &format!(
        " ({exact}Hugging Face keeps positions in f32: {} distinct); its cos/sin cache cast to {} has {} of {l}",
        p.f32_distinct_positions,
        p.dtype,
        count(p.distinct_rows, "distinct row", "distinct rows")
    );
    if let Some(d) = &p.first_duplicate {
        v += &format!(" (position {} repeats position {})", d.position, d.repeats);
    }
    v + "."
}

fn invariance(i: &InvarianceFinding) -> String {
    let scale = format!(
        " (scores |q·k| of the random draws are about {} in RMS)",
        sig(i.score_scale, 3)
    );
    let mut v = if i.max_shift == i.first_shift {
        format!(
            " Translation invariance in {}: shifting both positions by {} changes a score by up to {}{scale}; exact f64 reduction: {}.",
            i.pipeline,
            i.first_shift,
            sig(i.first_error, 4),
            sig(i.exact_error, 4)
        )
    } else {
        format!(
            " Translation invariance in {}: shifting both positions by {} changes a score by up to {}{scale}; the largest change over shifts up to {} is {} (at shift {}; exact f64 reduction: {}).",
            i.pipeline,
            i.first_shift,
            sig(i.first_error, 4),
            i.max_shift,
            sig(i.worst_error, 4),
            i.worst_shift,
            sig(i.exact_error, 4)
        )
    };
    if !i.buggy.is_empty() {
        let list: Vec<String> = i
            .buggy
            .iter()
            .map(|(p, e)| {
                let what = match p.to_string().as_str() {
                    "bf16_inv_freq" => "inv_freq in bf16",
                    "bf16_angles" => "angles in bf16",
                    "f16_positions" => "positions cast to f16",
                    other => other,
                }
                .to_string();
                if e.is_finite() {
                    format!("{what} {}", sig(*e, 3))
                } else {
                    format!("{what} overflow (∞)")
                }
            })
            .collect();
        v += &format!(
            " Pipelines users got wrong change it by up to: {}.",
            list.join(", ")
        );
    }
    v
}

/// How `rope identity` draws its random cases (the report's `generator`).
pub fn identity_generator() -> &'static str {
    "rand_chacha::ChaCha8Rng::seed_from_u64(seed), rand_distr::StandardNormal"
}

/// The identity's tolerance rule with its factor `k` (the report's `tolerance_rule`).
pub fn identity_tolerance_rule(k: f64) -> String {
    format!("{} * eps64 * sum_p |q_p||k_p|", short(k))
}

/// What each pipeline of the invariance table computes (the report's `pipelines`).
pub fn identity_pipelines() -> &'static str {
    "f64_exact: accurate phase reduction; f64: naive f64 product; f32/bf16/f16: HF pipeline (f32 positions, inv_freq and angles, cos/sin in f32 cast to the dtype, rotation in the dtype, dot accumulated in f32)"
}

/// The identity check's result line: the worst error, its tolerance and the verdict.
pub fn identity_result(
    max_abs_error: f64,
    ratio: f64,
    tolerance: f64,
    k: f64,
    (i, j): (u64, u64),
    holds: bool,
) -> String {
    format!(
        "max |error| = {} ; worst error/tolerance = {} (tolerance {} = {}·eps64·Σ|q_p||k_p|) at (i, j) = ({i}, {j}) → {}",
        sci(max_abs_error),
        sig(ratio, 6),
        sci(tolerance),
        short(k),
        if holds { "holds" } else { "FAILS" }
    )
}

/// The criterion of "scores like separation 0" (the score report's `criterion`).
pub fn score_criterion() -> &'static str {
    "every plane's phase s*omega within tolerance (radians) of 0 mod 2*pi, as in rope resolve; exact integer arithmetic for exact frequencies"
}

/// Which separations of 1..=`max_sep` score like s = 0 within `tol` radians.
pub fn score_like_zero(equal: &[u64], max_sep: u64, tol: f64) -> String {
    if equal.is_empty() {
        if max_sep == 1 {
            format!(
                "Separation 1 does not score like s = 0 (its phase is not within {} rad of a full turn in every plane).",
                sci(tol)
            )
        } else {
            format!(
                "No separation in 1..={max_sep} scores like s = 0 (no separation has every phase within {} rad of a full turn).",
                sci(tol)
            )
        }
    } else {
        let list: Vec<String> = equal.iter().map(u64::to_string).collect();
        format!(
            "Separations scoring like s = 0 (every phase within {} rad of a full turn): {}.",
            sci(tol),
            list.join(", ")
        )
    }
}

/// The period analysis in words: the exact repeat (or why there is none) — the line above
/// the table of near-repeats.
pub fn period_repeat(r: &PeriodReport, turns: Option<(i64, i64)>) -> String {
    match (r.first_repeat, turns) {
        (Some(b), Some((a, _))) => format!(
            "exact: ω = 2π·{a}/{b} in lowest terms, first exact repeat at separation {b}"
        ),
        (Some(b), None) => format!("exact: first exact repeat at separation {b}"),
        (None, _) => "no exact repeat: a binary64 ω is a rational number of radians, so ω/2π is irrational (π is); near-repeats are continued-fraction convergents of ω/2π:".into(),
    }
}

/// The first separation within the tolerance, or that there is none up to the bound.
pub fn period_within_tol(r: &PeriodReport) -> String {
    match r.first_within_tol {
        Some(s) => format!(
            "first separation within {} rad of a full turn: {s}",
            sci(r.tol)
        ),
        None => format!(
            "no separation ≤ {} within {} rad of a full turn",
            r.max_sep,
            sci(r.tol)
        ),
    }
}

/// The criterion `rope resolve` and the lab's product (d) decide by, in the seed's words.
pub fn resolution_criterion() -> String {
    "criterion (seed 002): no separation 1..L−1 is a common period of the set, i.e. every separation is distinguished from 0".into()
}

/// The stronger property an unmasked layer needs, and whether it holds: `separations
/// −11..11 pairwise distinct: no — +6 and −6 coincide (their difference 12 is a full turn of
/// every plane)`.
pub fn pairwise(p: &crate::spectrum::resolve::PairwiseDistinct, context: u64) -> String {
    let n = context.saturating_sub(1);
    let what = "stronger, what an unmasked layer needs (it looks both ways)";
    if n == 0 {
        return format!(
            "{what}: separations pairwise distinct — nothing to check with one position"
        );
    }
    let head = format!("{what}: separations −{n}..{n} pairwise distinct");
    match (p.holds, p.coinciding, p.first_alias) {
        (true, _, _) => format!(
            "{head}: yes (no difference 1..{} is a full turn of every plane)",
            p.max_difference
        ),
        (false, Some((a, b)), Some(d)) => format!(
            "{head}: no — {} and {} coincide (their difference {d} is a full turn of every plane)",
            signed(a),
            signed(b)
        ),
        (false, _, _) => format!("{head}: no"),
    }
}

/// `+6`, `−6` (a true minus sign), `0`.
fn signed(x: i64) -> String {
    match x.signum() {
        1 => format!("+{x}"),
        -1 => format!("−{}", x.unsigned_abs()),
        _ => "0".into(),
    }
}

/// The resolution's verdict line (and the smallest margin before it, when there is one).
pub fn resolution(r: &Resolution) -> Vec<String> {
    let mut lines = Vec::new();
    let n = r.context.saturating_sub(1);
    if let Some(p) = r.common_period {
        lines.push(format!(
            "exact set: common period lcm = {p} ({} L)",
            if p >= r.context { "≥" } else { "<" }
        ));
    }
    if let (Some(m), Some(at)) = (r.min_margin, r.margin_at) {
        lines.push(format!(
            "smallest margin over {}: {} rad at separation {at}",
            separations(n),
            sig(m, 4)
        ));
    }
    lines.push(match r.first_alias {
        None if n == 0 => {
            "resolves: a context of 1 position has no separation to confuse with 0".into()
        }
        None => format!(
            "resolves: {} distinguished from 0 (tol {} rad)",
            every_separation(n).to_lowercase(),
            sci(r.tol)
        ),
        Some(s) => format!(
            "does not resolve: separation {s} is within {} rad of a full turn in every plane",
            sci(r.tol)
        ),
    });
    lines
}

/// Liu et al. 2023's critical dimension in one sentence, with what it implies.
pub fn critical_dimension(c: &crate::spectrum::extrapolation::CriticalDimension) -> String {
    format!(
        "Critical dimension (Liu et al. 2023): d_extra = {} of {} rotary dims — {} planes complete a full turn within the trained {} positions; the other {} never saw a full period, so beyond about {} positions (2π·base^(d_extra/d)) their angles are out of distribution: extrapolating past it needs a larger base or scaling of those planes.",
        c.d_extra,
        c.rotary_dim,
        c.periodic_planes,
        c.trained_context,
        c.rotary_dim / 2 - c.periodic_planes,
        sig(c.extrapolation_bound, 4)
    )
}

/// A query scaling against position in one sentence.
pub fn query_scaling(q: &crate::spectrum::extrapolation::QueryScaling) -> String {
    use crate::spectrum::extrapolation::QueryScalingKind;
    let what = match q.kind {
        QueryScalingKind::Llama4ScalingBeta => format!(
            "llama_4_scaling_beta {}: q ·= 1 + β·ln(1 + ⌊p/{}⌋)",
            short(q.scale),
            q.step
        ),
        QueryScalingKind::Llama4AttnTemperature => format!(
            "Llama-4 NoPE-layer temperature (attn_scale {}): q ·= 1 + {}·ln(1 + ⌊(p + 1)/{}⌋)",
            short(q.scale),
            short(q.scale),
            q.step
        ),
    };
    let at: Vec<String> = q
        .factors
        .iter()
        .map(|f| format!("{} at {}", sig(f.factor, 5), f.position))
        .collect();
    format!("Query scaling, {what}: {}.", at.join(", "))
}
