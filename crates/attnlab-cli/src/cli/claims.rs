//! `attnlab claims`: the claims ledger of both seeds, checked now.

use attnlab_core::claims::{self, Fault};

use super::output::{print_json, sci, table};
use super::Outcome;

/// Options of `attnlab claims`.
#[derive(Debug, clap::Args)]
pub struct ClaimsArgs {
    /// Print a JSON array of claims on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Swap in a deliberately wrong implementation (to see the ledger fail; for testing).
    #[arg(long, value_parser = super::common::choice::<Fault>(), default_value_t = Fault::None, hide = true)]
    pub inject_fault: Fault,
}

pub fn run(args: ClaimsArgs) -> anyhow::Result<Outcome> {
    let ledger = claims::ledger(args.inject_fault)?;
    let ok = claims::all_hold(&ledger);
    if args.json {
        let rows: Vec<serde_json::Value> = ledger
            .iter()
            .map(|c| {
                serde_json::json!({
                    "claim": c.claim, "plain": c.plain, "source": c.source,
                    "seed_status": c.seed_status, "measured_status": c.measured_status,
                    "holds": c.holds, "exact": c.exact, "evidence": c.evidence, "command": c.command,
                })
            })
            .collect();
        print_json(&rows)?;
        return Ok(Outcome::from_bool(ok));
    }
    let mut t = table(&[
        "#",
        "claim (source)",
        "seed says",
        "measured",
        "error",
        "tolerance",
    ]);
    for (i, c) in ledger.iter().enumerate() {
        t.add_row(vec![
            (i + 1).to_string(),
            format!("{} ({})", c.plain, c.source),
            c.seed_status.clone(),
            c.measured_status.clone(),
            sci(c.evidence.max_abs_error),
            sci(c.evidence.tolerance),
        ]);
    }
    println!("{t}");
    println!("evidence and how to reproduce:");
    for (i, c) in ledger.iter().enumerate() {
        println!(
            "  {}. {}
     $ {}",
            i + 1,
            c.evidence.details,
            c.command
        );
    }
    let failed = ledger.iter().filter(|c| !c.holds).count();
    println!(
        "{} claims checked: {} hold, {} fail.",
        ledger.len(),
        ledger.len() - failed,
        failed
    );
    Ok(Outcome::from_bool(ok))
}
