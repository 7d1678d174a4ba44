//! `attnlab equivariance`: check f(ΠH) = Π f(H) (or invariance for a readout) with evidence.

use attnlab_core::experiment::{self, PermChoice};
use attnlab_core::layer::{LayerKind, LayerSpec, Readout};
use attnlab_core::symmetry::Permutation;
use serde_json::json;

use super::attend::spec_pos;
use super::common::InputArgs;
use super::output::{print_json, sci, table};
use super::Outcome;

/// Options of `attnlab equivariance`.
#[derive(Debug, clap::Args)]
pub struct EquivarianceArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The layer under test.
    #[arg(long, value_parser = super::common::choice::<LayerKind>(), default_value_t = LayerKind::Attention)]
    pub layer: LayerKind,
    /// Readout after the layer: none (check equivariance), mean or row:I (check invariance).
    #[arg(long, default_value = "none")]
    pub readout: String,
    /// One permutation, as numpy's X[perm] list, e.g. 2,0,3,1.
    #[arg(long, conflicts_with_all = ["exhaustive", "samples"])]
    pub perm: Option<String>,
    /// Every permutation of the n positions (n ≤ 8).
    #[arg(long, conflicts_with = "samples")]
    pub exhaustive: bool,
    /// K random non-identity permutations [default: exhaustive for n ≤ 6, else 100 samples].
    #[arg(long, allow_negative_numbers = true)]
    pub samples: Option<usize>,
    /// Seed of the random permutations [default: --seed].
    #[arg(long, allow_negative_numbers = true)]
    pub perm_seed: Option<u64>,
}

pub fn run(args: EquivarianceArgs) -> anyhow::Result<Outcome> {
    let a = &args.input;
    let inputs = a.input_spec()?.build()?;
    let n = inputs.x.nrows();
    let readout = Readout::parse(&args.readout)?;
    let spec = LayerSpec {
        kind: args.layer,
        pos: a.pos,
        mask: a.mask,
        readout,
        index_scale: a.index_scale(),
        ..LayerSpec::default()
    };
    let perm_seed = args.perm_seed.unwrap_or(a.seed);
    let choice = match (&args.perm, args.exhaustive, args.samples) {
        (Some(p), _, _) => PermChoice::Given(Permutation::parse(p, n)?),
        (None, true, _) => PermChoice::Exhaustive,
        (None, false, Some(k)) => PermChoice::Samples { k, seed: perm_seed },
        (None, false, None) => PermChoice::default_for(n, perm_seed),
    };
    let perms = choice.permutations(n)?;
    let result = experiment::symmetry(&spec, &inputs, &perms, a.dtype)?;
    let note = perms.iter().all(|p| p.is_identity()).then(|| {
        format!("only the identity permutation exists for n = {n}, so this check cannot show anything about equivariance; use n ≥ 2")
    });
    let r = &result.report;
    let layer_name = match args.layer {
        LayerKind::Attention => "attention",
        LayerKind::Rnn => "rnn",
    };
    let perm_mode = match &choice {
        PermChoice::Given(_) => "given".to_string(),
        PermChoice::Exhaustive => "exhaustive".to_string(),
        PermChoice::Samples { k, seed } => format!("{k} random (seed {seed})"),
    };
    if a.json {
        print_json(&json!({
            "holds": r.holds,
            "verdict": r.verdict,
            "property": r.property,
            "equation": r.equation,
            "max_abs_error": r.max_abs_error,
            "max_rel_error": r.max_rel_error,
            "max_ulps": r.max_ulps,
            "tolerance": r.tolerance,
            "tolerance_derivation": r.tolerance_detail.derivation,
            "margin": r.margin,
            "permutations_checked": r.permutations_checked,
            "permutations": perm_mode,
            "worst": { "perm": r.worst.perm, "row": r.worst.row, "col": r.worst.col, "lhs": r.worst.lhs, "rhs": r.worst.rhs },
            "layer": layer_name,
            "pos": spec_pos(&spec),
            "mask": a.mask.name(),
            "readout": readout.name(),
            "dtype": a.dtype.name(),
            "seed": a.seed,
            "rng": a.rng.name(),
            "n": n,
            "dim": inputs.x.ncols(),
            "heads": inputs.heads,
            "weight_form": result.weight_form,
            "controls": result.controls,
            "diagnosis": result.diagnosis,
            "note": note,
        }))?;
        return Ok(Outcome::from_bool(r.holds));
    }
    println!(
        "{}: {} — layer {layer_name}, positions {}, mask {}, readout {}, {} (n = {n}, d = {}, seed {}, rng {})",
        r.equation,
        r.verdict.to_uppercase(),
        spec_pos(&spec),
        a.mask.name(),
        readout.name(),
        a.dtype.name(),
        inputs.x.ncols(),
        a.seed,
        a.rng.name()
    );
    let mut t = table(&[
        "check",
        "verdict",
        "max abs error",
        "max rel error",
        "max ulps",
        "tolerance",
        "margin",
        "perms",
        "worst (perm, row, col)",
    ]);
    let mut add = |name: &str, r: &attnlab_core::symmetry::CheckReport| {
        t.add_row(vec![
            name.to_string(),
            r.verdict.clone(),
            sci(r.max_abs_error),
            sci(r.max_rel_error),
            r.max_ulps.to_string(),
            sci(r.tolerance),
            sci(r.margin),
            r.permutations_checked.to_string(),
            format!("{:?}, {}, {}", r.worst.perm, r.worst.row, r.worst.col),
        ]);
    };
    add(&r.equation, r);
    if let Some(w) = &result.weight_form {
        add(&w.equation, w);
    }
    println!("{t}");
    println!(
        "permutations: {perm_mode}; tolerance: {}",
        r.tolerance_detail.derivation
    );
    let mut c = table(&["control", "must show", "max abs error", "margin", "ok"]);
    for ctl in &result.controls {
        c.add_row(vec![
            ctl.name.clone(),
            ctl.expectation.clone(),
            sci(ctl.max_abs_error),
            sci(ctl.margin),
            if ctl.ok { "yes".into() } else { "NO".into() },
        ]);
    }
    println!("{c}");
    let dg = &result.diagnosis;
    println!(
        "round-off or structure? {} — f32 error {}, f64 error {}: {}",
        dg.conclusion,
        sci(dg.f32_error),
        sci(dg.f64_error),
        dg.explanation
    );
    if let Some(note) = &note {
        println!("note: {note}");
    }
    Ok(Outcome::from_bool(r.holds))
}
