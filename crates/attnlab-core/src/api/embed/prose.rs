//! The sentences of `attnlab embed`, from its report: labels are addresses, representations
//! are contextual, and which interfaces absorb which kind of basis change.

use super::{BasisChangeByKind, Contextual, LabelsAreAddresses};
use crate::embedding::Interface;
use crate::number::{format, sig, Style};
use crate::present::prose::course::{and_list, interface_label, number_list, quoted};

/// "Token 20 is not twice token 10", on the table at hand.
pub fn labels_are_addresses(l: &LabelsAreAddresses) -> String {
    format!(
        "labels are addresses, not magnitudes: label {} ({}) is twice label {} ({}), but E[{}] = {} {} 2·E[{}] = {}{}",
        l.double_label,
        quoted(&l.double_token),
        l.label,
        quoted(&l.token),
        l.double_label,
        number_list(&l.double_row),
        if l.equal { "=" } else { "≠" },
        l.label,
        number_list(&l.twice_row),
        if l.equal {
            " (this table happens to agree; the label still only selects a row)"
        } else {
            " — the label only selects a row"
        }
    )
}

/// A contextual representation: the same token's row before and after attention in two
/// contexts.
pub fn contextual(c: &Contextual) -> String {
    format!(
        "contextual representation: {} has the embedding row {} in {} and in {}; after one attention layer (identity projections) its rows are {} and {} (they differ by up to {}): the vector at a position now depends on its context",
        quoted(&c.token),
        number_list(&c.embedding_row),
        quoted(&c.contexts[0]),
        quoted(&c.contexts[1]),
        decimals_list(&c.output_rows[0]),
        decimals_list(&c.output_rows[1]),
        sig(c.max_abs_difference, 4)
    )
}

fn decimals_list(v: &[f64]) -> String {
    let inner: Vec<String> = v.iter().map(|&x| format(x, Style::Decimals(6))).collect();
    format!("[{}]", inner.join(", "))
}

/// One line per nonlinear interface naming which kinds of S it absorbs: `ReLU: absorbs doubling
/// a coordinate and positive diagonal (ReLU(h·s) = ReLU(h)·s for s > 0); not random invertible
/// — so "not a symmetry" depends on the kind of S.`
pub fn basis_change_verdicts(by_kind: &[BasisChangeByKind]) -> Vec<String> {
    let Some(first) = by_kind.first() else {
        return Vec::new();
    };
    first
        .cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (yes, no): (Vec<_>, Vec<_>) = by_kind.iter().partition(|k| k.cases[i].unchanged);
            let names = |v: &[&BasisChangeByKind]| {
                and_list(&v.iter().map(|k| k.kind.name()).collect::<Vec<_>>())
            };
            let why = match c.interface {
                Interface::Linear => " (S⁻¹ undoes S before anything else acts)",
                Interface::Relu if !yes.is_empty() => " (ReLU(h·s) = ReLU(h)·s for a positive diagonal s)",
                _ => "",
            };
            match (yes.is_empty(), no.is_empty()) {
                (false, true) => format!("{}: absorbs every kind of S tried{why}", interface_label(c.interface)),
                (true, false) => format!("{}: absorbs none of them — not a symmetry for any kind of S tried", interface_label(c.interface)),
                _ => format!(
                    "{}: absorbs {}{why}; not {} — whether a basis change is a symmetry depends on the kind of S",
                    interface_label(c.interface),
                    names(&yes),
                    names(&no)
                ),
            }
        })
        .collect()
}
