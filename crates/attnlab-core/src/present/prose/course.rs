//! Sentences of the course commands (`lab`, `claims`, `embed`, `predict`): the claims ledger's
//! statuses and evidence, the lab's statements and facts, and the labels its tables and charts
//! use — each written from typed report data, numbers through [`crate::number`].

use crate::claims::{Claim, ClaimId, Measured, ResolvesAt};
use crate::embedding::Interface;
use crate::lab::{ExerciseId, FactMeasured, ScoresBySeparation};
use crate::number::{format, sci, short, sig, Style};
use crate::spectrum::period::PeriodReport;
use crate::spectrum::resolve::Resolution;
use crate::text::count;

/// `s` in double quotes, control characters escaped (`"A B ."`).
///
/// ```
/// use attnlab_core::present::prose::course::quoted;
/// assert_eq!(quoted("A B ."), "\"A B .\"");
/// assert_eq!(quoted("a\tb"), "\"a\\tb\"");
/// ```
pub fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.push('"');
    out
}

/// Which matrices a run held fixed: `Blocks: Wq, Wk, Wv from the provided file; X drawn
/// (np.random.seed).` or `Blocks: none provided — Wq, Wk, Wv and X are the course program's
/// draws.`
pub fn blocks_used(provided: &[String]) -> String {
    let all = crate::lab::LAB_BLOCKS;
    let given: Vec<&str> = provided.iter().map(String::as_str).collect();
    if given.is_empty() {
        return format!(
            "Blocks: none provided — {} are the course program's draws.",
            and_list(&all)
        );
    }
    let drawn: Vec<&str> = all.iter().copied().filter(|b| !given.contains(b)).collect();
    if drawn.is_empty() {
        format!("Blocks: {} from the provided file.", and_list(&given))
    } else {
        format!(
            "Blocks: {} from the provided file; {} drawn (np.random.seed).",
            and_list(&given),
            and_list(&drawn)
        )
    }
}

/// The last line of `attnlab predict`: the predicted token and its probability, or, when
/// several tokens tie, that it is a tie and which tokens tie.
///
/// ```
/// use attnlab_core::predict::predict;
/// use attnlab_core::present::prose::course::prediction_line;
/// let tie = prediction_line(&predict("B A .", None).unwrap());
/// assert!(tie.starts_with("prediction: a tie — \"A\", \"B\" and \".\" are equally probable"), "{tie}");
/// assert!(prediction_line(&predict("A B", None).unwrap()).starts_with("prediction: \"B\" (probability 0."));
/// ```
pub fn prediction_line(p: &crate::predict::Prediction) -> String {
    let prob = sig(p.probabilities[p.prediction_id], 6);
    if !p.is_tie() {
        return format!("prediction: {} (probability {prob})", quoted(&p.prediction));
    }
    let names: Vec<String> = p.tied.iter().map(|t| quoted(t)).collect();
    let (init, last) = names.split_at(names.len() - 1);
    format!(
        "prediction: a tie — {} and {} are equally probable (probability {prob} each; their logits agree to the round-off bound {}); no single next token is predicted ({} is only the first in vocabulary order)",
        init.join(", "),
        last[0],
        sci(p.tie_tolerance),
        quoted(&p.prediction)
    )
}

/// Tokens as a bracketed list of quoted strings: `["A", "B", "."]`.
pub fn quoted_list(items: &[String]) -> String {
    let inner: Vec<String> = items.iter().map(|s| quoted(s)).collect();
    format!("[{}]", inner.join(", "))
}

/// Numbers as a bracketed list, each in its shortest round-trip form: `[1, 0, 0.5]`.
pub fn number_list(values: &[f64]) -> String {
    let inner: Vec<String> = values.iter().map(|&v| short(v)).collect();
    format!("[{}]", inner.join(", "))
}

/// A frequency set as `{pi/2, pi/3}`.
pub fn frequency_set(labels: &[String]) -> String {
    format!("{{{}}}", labels.join(", "))
}

/// `n` in superscript digits (`8` → `⁸`).
pub fn superscript(n: u64) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    n.to_string()
        .bytes()
        .map(|b| DIGITS[usize::from(b - b'0')])
        .collect()
}

/// A power of ten as `10⁴`; any other number in its plain form.
fn power_of_ten(v: u64) -> String {
    let mut e = 0;
    let mut x = v;
    while x >= 10 && x.is_multiple_of(10) {
        x /= 10;
        e += 1;
    }
    if x == 1 && e > 1 {
        format!("10{}", superscript(e))
    } else {
        v.to_string()
    }
}

/// `count` ulps, or "opposite signs" when the worst pair differs in sign.
fn ulp_count(n: u64) -> String {
    if n == crate::symmetry::OPPOSITE_SIGNS {
        "opposite signs".into()
    } else {
        count(n, "ulp")
    }
}

fn separations(list: &[u64]) -> String {
    list.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn shape([r, c]: [usize; 2]) -> String {
    format!("{r}×{c}")
}

/// Two significant digits in scientific form, for margins quoted inside sentences (`9.8e13`).
fn margin2(x: f64) -> String {
    format(x, Style::Scientific(2))
}

// ---------------------------------------------------------------------------------------------
// The claims ledger
// ---------------------------------------------------------------------------------------------

/// The measured status of a ledger row: `FAILS` when it does not hold, otherwise what was
/// found, in the words of the seed's status.
pub fn claim_status(c: &Claim) -> String {
    if !c.holds {
        return "FAILS".into();
    }
    match (&c.id, &c.evidence.measured) {
        (ClaimId::SeveralFrequencies, _) => {
            "conditional, as stated: true for one (set, length), false for another".into()
        }
        (ClaimId::BasisChange, Measured::BasisChange { cases, .. }) => {
            let broken: Vec<&str> = cases
                .iter()
                .filter(|k| k.interface != Interface::Linear && !k.unchanged)
                .map(|k| interface_label(k.interface))
                .collect();
            format!(
                "exact at the linear interface; breaks through {}, as stated",
                and_list(&broken)
            )
        }
        (ClaimId::PermutationEquivariant, Measured::AttentionVsRnn { attention, rnn, .. }) => {
            format!(
                "attention YES (margin {}), RNN NO (margin {})",
                margin2(attention.margin),
                margin2(rnn.margin)
            )
        }
        (ClaimId::NeedsPositions, _) => {
            "attention YES (AB and BA identical without positions), RNN NO (its last state differs)"
                .into()
        }
        (ClaimId::SetOrSequence, _) => {
            "attention: set (sorted output rows identical under all shuffles); RNN: sequence".into()
        }
        _ if c.exact => "exact: holds (error within round-off)".into(),
        _ => "holds as stated".into(),
    }
}

pub(crate) fn interface_label(i: Interface) -> &'static str {
    match i {
        Interface::Linear => "the linear interface",
        Interface::Relu => "ReLU",
        Interface::Softmax => "softmax",
        Interface::LayerNorm => "layer norm",
    }
}

pub(crate) fn and_list(items: &[&str]) -> String {
    match items {
        [] => "nothing".into(),
        [one] => (*one).into(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

fn resolves_at(r: &ResolvesAt) -> String {
    match (r.resolves, r.first_alias) {
        (true, _) => format!("resolves every separation at L = {}", r.context),
        (false, Some(s)) => format!("does not resolve L = {} (first alias {s})", r.context),
        (false, None) => format!("does not resolve L = {}", r.context),
    }
}

/// The evidence sentence of a ledger row: what was computed, with its numbers.
pub fn claim_details(c: &Claim) -> String {
    let e = &c.evidence;
    match &e.measured {
        Measured::OneHot { labels, dim } => format!(
            "all {labels} labels of the course table E ({labels}×{dim}): max |e·E − E[id]| = {}; {}",
            sci(e.max_abs_error),
            if e.max_abs_error == 0.0 {
                "bit-exact because each entry is one product 1·E[id,j] plus exact zeros"
            } else {
                "but each entry is one product 1·E[id,j] plus exact zeros, so it must be exactly 0"
            }
        ),
        Measured::Equivariance {
            permutations,
            n,
            dim,
            max_ulps,
            tolerance_detail,
        } => format!(
            "all {permutations} permutations of n = {n} tokens, d = {dim}, f64: max error {}, {}; tolerance {}",
            sci(e.max_abs_error),
            ulp_count(*max_ulps),
            tolerance_detail.derivation()
        ),
        Measured::Softmax {
            n,
            entry_std,
            permutations,
        } => format!(
            "a random {n}×{n} score matrix (N(0,{}) entries), all {permutations} permutations: max error {} (only the order of the row sum changes); tolerance 8·eps·n·max|softmax| = {}",
            short(entry_std * entry_std),
            sci(e.max_abs_error),
            sci(e.tolerance)
        ),
        Measured::RopeIdentity {
            trials,
            dim,
            base,
            positions_below,
        } => format!(
            "{trials} random q, k ∈ R{} ({}, base {}) and positions i, j < {}, f64 with exact angle reduction: max error {}, tolerance 8·eps·d·max Σ|q||k| = {}",
            superscript(*dim as u64),
            count((*dim / 2) as u64, "plane"),
            short(*base),
            power_of_ten(*positions_below),
            sci(e.max_abs_error),
            sci(e.tolerance)
        ),
        Measured::Periods { omegas } => {
            let each: Vec<String> = omegas
                .iter()
                .map(|p| {
                    format!(
                        "{}: period {} (2π/ω = {}; {})",
                        p.omega,
                        p.period,
                        sig(p.wavelength, 7),
                        match p.float_first {
                            Some(s) => format!("floats first return to 1 at {s}"),
                            None => format!(
                                "floats do not return to 1 up to {}",
                                crate::claims::PERIOD_SEARCH
                            ),
                        }
                    )
                })
                .collect();
            format!(
                "{}; binary64 scores at s and s + period agree within one rounding of the phase for s < 3·period: max difference {}",
                each.join("; "),
                sci(e.max_abs_error)
            )
        }
        Measured::Resolution {
            set,
            common_period,
            resolves,
            aliases,
            single,
            single_result,
        } => format!(
            "{}: {} → {}; {}; {single} alone: {}",
            frequency_set(set),
            common_period.map_or("no common period".into(), |p| format!("common period {p}")),
            resolves_at(resolves),
            resolves_at(aliases),
            resolves_at(single_result)
        ),
        Measured::BasisChange {
            h_shape,
            w_shape,
            s_shape,
            cases,
        } => {
            let others: Vec<String> = cases
                .iter()
                .filter(|k| k.interface != Interface::Linear)
                .map(|k| format!("{} margin {}", k.interface.name(), margin2(k.margin)))
                .collect();
            format!(
                "random H ({}), W ({}), S ({}): linear error {} {} {}; {}",
                shape(*h_shape),
                shape(*w_shape),
                shape(*s_shape),
                sci(e.max_abs_error),
                if e.max_abs_error <= e.tolerance {
                    "≤"
                } else {
                    ">"
                },
                sci(e.tolerance),
                others.join(", ")
            )
        }
        Measured::AttentionVsRnn {
            permutations,
            n,
            dim,
            attention,
            rnn,
        } => format!(
            "all {permutations} permutations, n = {n}, d = {dim}: attention max error {} (tolerance {}); RNN max error {}",
            sci(attention.max_abs_error),
            sci(attention.tolerance),
            sci(rnn.max_abs_error)
        ),
        Measured::OrderReadout {
            text,
            reversed,
            bare,
            index,
            rnn,
        } => format!(
            "mean readout of {} vs {}: bare attention differs by {}, with the index signal by {}; the RNN's last state differs by {}",
            quoted(text),
            quoted(reversed),
            sci(*bare),
            sci(*index),
            sci(*rnn)
        ),
        Measured::SetVsSequence {
            permutations,
            attention,
            rnn,
        } => format!(
            "max change of the sorted output rows over all {permutations} shuffles: attention {}, RNN {}",
            sci(*attention),
            sci(*rnn)
        ),
    }
}

/// The ledger's closing line: `10 claims checked: 10 hold, 0 fail.`
pub fn ledger_summary(claims: &[Claim]) -> String {
    let failed = claims.iter().filter(|c| !c.holds).count();
    format!(
        "{} checked: {} hold, {} fail.",
        count(claims.len() as u64, "claim"),
        claims.len() - failed,
        failed
    )
}

// ---------------------------------------------------------------------------------------------
// The lab
// ---------------------------------------------------------------------------------------------

/// The verdict line of product (a): `HOLDS: max |difference| = … (1 ulp) ≤ tolerance … — equal
/// to numerical precision; <diagnosis>`.
pub fn permutation_verdict(
    holds: bool,
    max_abs_error: f64,
    max_ulps: u64,
    tolerance: f64,
    diagnosis: &str,
) -> String {
    if holds {
        format!(
            "HOLDS: max |difference| = {} ({}) ≤ tolerance {} — equal to numerical precision; {diagnosis}",
            sci(max_abs_error),
            count(max_ulps, "ulp"),
            sci(tolerance)
        )
    } else {
        format!(
            "BREAKS: max |difference| = {} ({}) > tolerance {} — not equal to numerical precision; {diagnosis}",
            sci(max_abs_error),
            count(max_ulps, "ulp"),
            sci(tolerance)
        )
    }
}

/// Product (b)'s conclusion: where the single frequency and the set score like separation 0
/// again (every plane's phase within `tol` of a full turn).
pub fn like_zero(b: &ScoresBySeparation) -> String {
    let at = |list: &[u64]| {
        if list.is_empty() {
            format!("at no separation up to {}", b.max_sep)
        } else {
            format!("at s = {}", separations(list))
        }
    };
    format!(
        "ω = {} scores like s = 0 again {}; the set {} {} (every phase within {} rad of a full turn).",
        b.omega,
        at(&b.single_equal_to_zero),
        frequency_set(&b.omegas),
        at(&b.set_equal_to_zero),
        sci(b.tol)
    )
}

/// Product (c): the first exact repeat of ω, or its near-repeats when it has none.
pub fn first_repeat(omega: &str, c: &PeriodReport) -> String {
    match c.first_repeat {
        Some(q) => format!(
            "ω = {omega} first repeats at separation {q} (ω = 2π·a/{q} in lowest terms; wavelength 2π/ω = {}).",
            sig(c.wavelength, 7)
        ),
        None => {
            let near: Vec<String> = c
                .near_repeats
                .iter()
                .take(6)
                .map(|n| {
                    format!(
                        "s = {} (phase error {})",
                        n.separation,
                        sci(n.phase_error)
                    )
                })
                .collect();
            let near = if near.is_empty() {
                String::new()
            } else {
                format!("; near-repeats: {}", near.join(", "))
            };
            format!(
                "ω = {omega} never repeats exactly (wavelength {}){near}.",
                sig(c.wavelength, 7)
            )
        }
    }
}

/// Product (d): what the set resolves within the context, as the session asks for it.
pub fn resolution_statement(labels: &[String], r: &Resolution) -> String {
    let set = frequency_set(labels);
    let l = r.context;
    if r.resolves {
        let period = r.common_period.map_or(String::new(), |p| {
            format!("; the set repeats only at its common period {p}")
        });
        match (r.min_margin, r.margin_at) {
            (Some(m), Some(at)) => {
                let which = if l == 2 {
                    "separation 1".to_string()
                } else {
                    format!("every separation 1..{}", l - 1)
                };
                let smallest = if l == 2 {
                    "the margin"
                } else {
                    "the smallest margin"
                };
                format!(
                    "{set} distinguishes {which} from 0 within a context of {l}: {smallest} is {} rad at separation {at}{period}.",
                    sig(m, 5)
                )
            }
            _ => format!(
                "{set}: a context of {l} has no separation other than 0, so there is nothing to distinguish."
            ),
        }
    } else {
        match r.first_alias {
            Some(s) if r.exact => format!(
                "{set} does not resolve a context of {l}: separation {s} is a full turn of every plane, so it scores exactly like separation 0."
            ),
            Some(s) => format!(
                "{set} does not resolve a context of {l}: separation {s} is within {} rad of a full turn in every plane, so it scores like separation 0.",
                sci(r.tol)
            ),
            None => format!("{set} does not resolve a context of {l}."),
        }
    }
}

/// The contrast line of product (d): the same set one separation past its common period.
pub fn resolution_contrast(r: &Resolution) -> String {
    format!(
        "with a context of {}, {}.",
        r.context,
        r.first_alias
            .map_or("it still resolves".into(), |s| format!(
                "separation {s} aliases separation 0"
            ))
    )
}

/// The name of one of seed 000's exercises, as its table row reads.
pub fn exercise_name(id: ExerciseId) -> String {
    match id {
        ExerciseId::EquivarianceF64 => {
            "1: permutation equivariance (every permutation, f64)".into()
        }
        ExerciseId::EquivarianceF32 => {
            "1: permutation equivariance (every permutation, f32)".into()
        }
        ExerciseId::Rnn => "2: the RNN contrast".into(),
        ExerciseId::Index => format!(
            "3: index signal p·{} added",
            short(crate::layer::LayerSpec::default().index_scale)
        ),
        ExerciseId::Sinusoidal => "3: sinusoidal positions added".into(),
        ExerciseId::Rope => "3 (rotary): RoPE on queries and keys".into(),
        ExerciseId::Causal => "causal mask, no positions".into(),
    }
}

/// A short label of an exercise's variant, for chart categories.
pub fn exercise_label(id: ExerciseId) -> &'static str {
    match id {
        ExerciseId::EquivarianceF64 => "f64 bare",
        ExerciseId::EquivarianceF32 => "f32 bare",
        ExerciseId::Rnn => "RNN",
        ExerciseId::Index => "index",
        ExerciseId::Sinusoidal => "sinusoidal",
        ExerciseId::Rope => "RoPE",
        ExerciseId::Causal => "causal",
    }
}

/// A fact's statement (what it claims), from what was measured.
pub fn fact_statement(m: &FactMeasured) -> String {
    match m {
        FactMeasured::CausalPrefix { position, .. } => format!(
            "With a causal mask and no positions, outputs at positions ≥ {position} do not change when the {position} tokens before them are shuffled: the mask gives access to a prefix, not the order within it."
        ),
        FactMeasured::CausalFuture { position, .. } => format!(
            "With a causal mask, outputs before position {position} do not change when the tokens at {position} and later change."
        ),
        FactMeasured::RotaryLayouts { permutation, .. } => format!(
            "The interleaved (GPT-J) and half-split (GPT-NeoX / HF Llama) rotary layouts are one rotation up to the fixed permutation {} of coordinates; mixing them silently changes scores.",
            super::index_list(permutation)
        ),
        FactMeasured::RotaryContent { .. } => "A rotary score depends on the content vectors, not only on the separation: the same q and k at the same separation score the same wherever they sit, another q at that separation scores differently; and the rotation preserves every norm.".into(),
        FactMeasured::RotaryInsideAttention { .. } => "Seed 000's answer 4 says order is added to each token's input before attention. That is the additive route; a rotary encoding takes the other route of seed 002 §2: it adds nothing to the input and leaves the values alone, rotating queries and keys inside attention — and it breaks the same symmetry.".into(),
    }
}

/// A fact's evidence: the numbers measured.
pub fn fact_evidence(m: &FactMeasured) -> String {
    match m {
        FactMeasured::CausalPrefix {
            permutations,
            max_abs_error,
            tolerance,
            ..
        } => format!(
            "all {permutations} shuffles of the prefix: max change {} (tolerance {})",
            sci(*max_abs_error),
            sci(*tolerance)
        ),
        FactMeasured::CausalFuture { max_abs_error, .. } => format!(
            "max change {} ({}: masked weights are exactly 0)",
            sci(*max_abs_error),
            if *max_abs_error == 0.0 {
                "exactly 0"
            } else {
                "it must be exactly 0"
            }
        ),
        FactMeasured::RotaryLayouts {
            max_abs_difference,
            score_matching,
            score_mixed,
            ..
        } => format!(
            "interleaved(x[:, P]) vs half_split(x)[:, P]: max difference {}; a score with matching layouts {} vs mixed {}",
            sci(*max_abs_difference),
            format(*score_matching, Style::Fixed(6)),
            format(*score_mixed, Style::Fixed(6))
        ),
        FactMeasured::RotaryContent {
            separation,
            pairs,
            scores_same_content,
            score_other_content,
            max_norm_change,
        } => format!(
            "one plane, ω = 1 rad/position, separation {separation}: q = (1, 0), k = (0.6, 0.8) score {} at (i, j) = ({}, {}) and {} at ({}, {}); q′ = (0, 1) scores {} at ({}, {}); | |R(pω)x| − |x| | ≤ {} over 8 vectors and 5 positions up to 123456",
            format(scores_same_content[0], Style::Fixed(6)),
            pairs[0].0,
            pairs[0].1,
            format(scores_same_content[1], Style::Fixed(6)),
            pairs[1].0,
            pairs[1].1,
            format(*score_other_content, Style::Fixed(6)),
            pairs[0].0,
            pairs[0].1,
            sci(*max_norm_change)
        ),
        FactMeasured::RotaryInsideAttention {
            input_change,
            value_change,
            query_change,
            margin,
        } => format!(
            "course input: max |H − X| = {} (nothing added), max |V_rope − V| = {} (values unrotated), max |Q_rope − Q| = {} (queries rotated); exercise 3 (rotary) breaks with margin {}",
            sci(*input_change),
            sci(*value_change),
            sci(*query_change),
            sci(*margin)
        ),
    }
}

/// The colour-scale note of the difference heat map of a check: full colour at ± the tolerance
/// when the check holds (so round-off shows pale and anything structural would saturate), else
/// at ± the largest difference.
pub fn difference_scale_note(holds: bool, max_abs: f64, tolerance: f64) -> String {
    if holds {
        format!("colour: ± tolerance {}", sci(tolerance))
    } else {
        format!(
            "colour: ± max |entry| {} (tolerance {})",
            sci(max_abs),
            sci(tolerance)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_helpers() {
        assert_eq!(superscript(8), "⁸");
        assert_eq!(superscript(10), "¹⁰");
        assert_eq!(power_of_ten(10_000), "10⁴");
        assert_eq!(power_of_ten(12), "12");
        assert_eq!(count(1, "ulp"), "1 ulp");
        assert_eq!(count(9, "ulp"), "9 ulps");
        assert_eq!(and_list(&["a", "b", "c"]), "a, b and c");
        assert_eq!(number_list(&[1.0, 0.0, 0.5]), "[1, 0, 0.5]");
        assert_eq!(
            quoted_list(&["A".to_string(), ".".to_string()]),
            "[\"A\", \".\"]"
        );
    }
}
