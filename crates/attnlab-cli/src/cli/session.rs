//! `attnlab session`: the prediction-first practical. Prompts (or reads an answers file), calls
//! `attnlab_core::session` for every computation, renders, and keeps progress in a state file.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use attnlab_core::session::{steps, AnswerKind, AnswerSheet, State, Step, StepRecord};
use comfy_table::ContentArrangement;
use serde_json::json;

use super::output::{print_json, table};
use super::Outcome;

/// Options of `attnlab session`.
#[derive(Debug, clap::Args)]
pub struct SessionArgs {
    /// Run non-interactively from a TOML or JSON file: step id → answer, or step id → a table
    /// with `answer` and overrides of the step's varied quantities.
    #[arg(long)]
    pub answers: Option<PathBuf>,
    /// Where progress is kept [default: $XDG_STATE_HOME/attnlab/session.json, else
    /// ~/.local/state/attnlab/session.json].
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// Forget the saved progress and start over.
    #[arg(long)]
    pub reset: bool,
    /// Print one JSON object (the report) on stdout; prompts and narration go to stderr.
    #[arg(long)]
    pub json: bool,
    /// List the steps (ids, answer forms, settings with their defaults) and exit — what an
    /// answers file needs.
    #[arg(long, conflicts_with_all = ["answers", "reset"])]
    pub list: bool,
}

/// The default state file: `$XDG_STATE_HOME/attnlab/session.json`, else
/// `$HOME/.local/state/attnlab/session.json`, else `.attnlab-session.json` here.
fn default_state_path() -> PathBuf {
    let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(x) = nonempty("XDG_STATE_HOME") {
        return PathBuf::from(x).join("attnlab").join("session.json");
    }
    if let Some(h) = nonempty("HOME") {
        return PathBuf::from(h)
            .join(".local")
            .join("state")
            .join("attnlab")
            .join("session.json");
    }
    PathBuf::from(".attnlab-session.json")
}

/// Where narration goes: stdout, or stderr when stdout carries the JSON report.
struct Narrator {
    json: bool,
}

impl Narrator {
    fn out(&self) -> Box<dyn Write> {
        if self.json {
            Box::new(std::io::stderr())
        } else {
            Box::new(std::io::stdout())
        }
    }
    fn say(&self, text: &str) -> anyhow::Result<()> {
        let mut o = self.out();
        writeln!(o, "{text}")?;
        Ok(())
    }
    fn prompt(&self, text: &str) -> anyhow::Result<()> {
        let mut o = self.out();
        write!(o, "{text}")?;
        o.flush()?;
        Ok(())
    }
}

/// A line from the terminal: `None` at end of input (Ctrl-D) or when the student types `quit`.
fn read_line(input: &mut dyn BufRead) -> anyhow::Result<Option<String>> {
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let t = line.trim().to_string();
    if t.eq_ignore_ascii_case("quit") || t.eq_ignore_ascii_case("q") {
        return Ok(None);
    }
    Ok(Some(t))
}

fn header(n: &Narrator, i: usize, total: usize, step: &Step) -> anyhow::Result<()> {
    n.say(&format!(
        "\n── Step {}/{total} · {} — {}",
        i + 1,
        step.id,
        step.title
    ))?;
    n.say(&format!("   varied: {}", step.varied))?;
    n.say(&format!("   held fixed: {}", step.fixed))
}

fn show_question(n: &Narrator, question: &str, kind: &AnswerKind) -> anyhow::Result<()> {
    n.say(&format!("   Q: {question}"))?;
    show_form(n, kind)
}

fn show_form(n: &Narrator, kind: &AnswerKind) -> anyhow::Result<()> {
    if let AnswerKind::Choice { options } = kind {
        for o in options {
            n.say(&format!("      {}) {}", o.key, o.text))?;
        }
    }
    n.say(&format!("   answer with {}", kind.form()))
}

fn show_record(n: &Narrator, r: &StepRecord) -> anyhow::Result<()> {
    let mut t = table(&["your prediction", "computed result", "right?"]);
    // Short cells: never squeeze them to a terminal width (a pty may report 0 columns).
    t.set_content_arrangement(ContentArrangement::Disabled);
    t.add_row(vec![
        r.prediction.to_string(),
        r.result.to_string(),
        if r.correct { "yes".into() } else { "NO".into() },
    ]);
    n.say(&t.to_string())?;
    n.say(&format!("   ({})", r.grading))?;
    for e in &r.evidence {
        n.say(&format!("   · {}: {}", e.label, e.value))?;
    }
    if r.hint_used {
        n.say("   (you used the hint)")?;
    }
    if let Some(reason) = &r.reason {
        n.say(&format!("   your reason: {reason}"))?;
    }
    if r.correct {
        n.say(&format!("   why: {}", r.explanation))
    } else {
        n.say(&format!(
            "   missed: you predicted {}, the computation gives {}. Why: {}",
            r.prediction, r.result, r.explanation
        ))
    }
}

/// Runs one step at the terminal; `None` when input ended (progress so far is kept).
fn interactive_step(
    n: &Narrator,
    input: &mut dyn BufRead,
    step: &Step,
) -> anyhow::Result<Option<StepRecord>> {
    // The question first (with the defaults), so the student knows what a setting is for.
    let defaults = step.settings(&BTreeMap::new())?;
    n.say(&format!("   Q: {}", step.question(&defaults)?))?;
    let mut overrides = BTreeMap::new();
    for p in &step.params {
        loop {
            n.prompt(&format!(
                "   set {} — {} [{}] (Enter keeps it): ",
                p.name, p.what, p.default
            ))?;
            let Some(line) = read_line(input)? else {
                return Ok(None);
            };
            if line.is_empty() {
                break;
            }
            match p.validate(&line) {
                Ok(v) => {
                    overrides.insert(p.name.to_string(), v);
                    break;
                }
                Err(e) => n.say(&format!("   not understood ({e}); accepted: {}", p.form()))?,
            }
        }
    }
    let settings = step.settings(&overrides)?;
    let kind = step.answer_kind(&settings)?;
    if settings != defaults {
        n.say(&format!(
            "   Q (your settings): {}",
            step.question(&settings)?
        ))?;
    }
    show_form(n, &kind)?;
    let mut hint_used = false;
    let prediction = loop {
        n.prompt("   your prediction (? for a hint): ")?;
        let Some(line) = read_line(input)? else {
            return Ok(None);
        };
        if line == "?" || line.eq_ignore_ascii_case("hint") {
            hint_used = true;
            n.say(&format!("   hint: {}", step.hint))?;
            continue;
        }
        match kind.parse(&line) {
            Ok(a) => break a,
            Err(_) => n.say(&format!(
                "   not understood: {line:?}; accepted: {}",
                kind.form()
            ))?,
        }
    };
    n.prompt("   your reason, in a few words (optional, Enter skips): ")?;
    let Some(reason) = read_line(input)? else {
        return Ok(None);
    };
    let mut record = step.evaluate(&settings, &prediction)?;
    record.reason = Some(reason).filter(|r| !r.is_empty());
    record.hint_used = hint_used;
    Ok(Some(record))
}

fn resume_command(path: &Path, answers: Option<&Path>) -> String {
    let mut c = format!("attnlab session --state {}", path.display());
    if let Some(a) = answers {
        c.push_str(&format!(" --answers {}", a.display()));
    }
    c
}

/// `--list`: every step with its question (at the defaults), answer form and settings.
fn list(all: &[Step], as_json: bool) -> anyhow::Result<Outcome> {
    let mut rows = Vec::new();
    for s in all {
        let defaults = s.settings(&BTreeMap::new())?;
        let kind = s.answer_kind(&defaults)?;
        rows.push(json!({
            "id": s.id,
            "title": s.title,
            "varied": s.varied,
            "fixed": s.fixed,
            "question": s.question(&defaults)?,
            "answer_form": kind.form(),
            "answer_kind": kind,
            "settings": s.params.iter().map(|p| json!({
                "name": p.name, "what": p.what, "default": p.default, "form": p.form(),
            })).collect::<Vec<_>>(),
        }));
    }
    if as_json {
        print_json(&json!({ "steps": rows }))?;
        return Ok(Outcome::Holds);
    }
    let mut t = table(&["step id", "answer with", "settings (default)"]);
    for s in all {
        let defaults = s.settings(&BTreeMap::new())?;
        let settings: Vec<String> = s
            .params
            .iter()
            .map(|p| format!("{} ({})", p.name, p.default))
            .collect();
        t.add_row(vec![
            s.id.to_string(),
            s.answer_kind(&defaults)?.form(),
            if settings.is_empty() {
                "—".into()
            } else {
                settings.join(", ")
            },
        ]);
    }
    println!("{t}");
    Ok(Outcome::Holds)
}

pub fn run(args: SessionArgs) -> anyhow::Result<Outcome> {
    let all = steps();
    if args.list {
        return list(&all, args.json);
    }
    let state_path = args.state.clone().unwrap_or_else(default_state_path);
    // A bad answers file is reported before anything runs or any progress changes.
    let prepared = match &args.answers {
        Some(p) => Some(AnswerSheet::load(p)?.prepare(&all)?),
        None => None,
    };
    if args.reset {
        match std::fs::remove_file(&state_path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => anyhow::bail!("cannot reset {}: {e}", state_path.display()),
        }
    }
    let mut state = State::load(&state_path)?;
    let n = Narrator { json: args.json };
    let already = state.score(&all).answered;
    if already == 0 {
        n.say("Prediction first: for each step, say what you expect before it is computed.")?;
        if prepared.is_none() {
            n.say(
                "Press Enter to keep a default, ? for a hint; Ctrl-D (or quit) stops and keeps your progress.",
            )?;
        }
    } else if already < all.len() {
        n.say(&format!(
            "Resuming: {already} of {} steps done (progress in {}).",
            all.len(),
            state_path.display()
        ))?;
    }
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut paused: Option<String> = None;
    for (i, step) in all.iter().enumerate() {
        if state.done(step.id) {
            continue;
        }
        let record = match &prepared {
            Some(map) => {
                let Some(p) = map.get(step.id) else {
                    paused = Some(format!(
                        "the answers file has no answer for step {}",
                        step.id
                    ));
                    break;
                };
                header(&n, i, all.len(), step)?;
                let kind = step.answer_kind(&p.settings)?;
                if !p.settings.0.is_empty() {
                    let s: Vec<String> = p
                        .settings
                        .0
                        .iter()
                        .map(|(k, v)| format!("{k} = {v}"))
                        .collect();
                    n.say(&format!("   settings: {}", s.join(", ")))?;
                }
                show_question(&n, &step.question(&p.settings)?, &kind)?;
                let mut record = step.evaluate(&p.settings, &p.prediction)?;
                record.reason = p.reason.clone();
                record
            }
            None => {
                header(&n, i, all.len(), step)?;
                match interactive_step(&n, &mut input, step)? {
                    Some(r) => r,
                    None => {
                        paused = Some("input ended".into());
                        break;
                    }
                }
            }
        };
        show_record(&n, &record)?;
        state.record(record);
        state.save(&state_path)?;
    }
    let score = state.score(&all);
    let complete = score.answered == all.len();
    let resume = resume_command(&state_path, args.answers.as_deref());
    if args.json {
        let records: Vec<&StepRecord> = all
            .iter()
            .filter_map(|s| state.records.iter().find(|r| r.id == s.id))
            .collect();
        print_json(&json!({
            "complete": complete,
            "score": score,
            "full_marks": complete && score.correct == score.total,
            "paused": paused,
            "state_file": state_path.display().to_string(),
            "resume": if complete { None } else { Some(&resume) },
            "steps": records,
        }))?;
        return Ok(Outcome::Holds);
    }
    if complete {
        let mut t = table(&["step", "your prediction", "computed result", "right?"]);
        t.set_content_arrangement(ContentArrangement::Disabled);
        for s in &all {
            if let Some(r) = state.records.iter().find(|r| r.id == s.id) {
                t.add_row(vec![
                    r.id.clone(),
                    r.prediction.to_string(),
                    r.result.to_string(),
                    if r.correct { "yes".into() } else { "NO".into() },
                ]);
            }
        }
        println!("\n{t}");
        println!(
            "Score: {}/{} predictions right{}",
            score.correct,
            score.total,
            if score.correct == score.total {
                " — full marks."
            } else {
                "."
            }
        );
        println!(
            "Progress is in {}; run with --reset to start over.",
            state_path.display()
        );
    } else {
        println!(
            "\nSession paused ({}) after {} of {} steps; score so far {}/{}. Progress saved in {}.\nResume with: {resume}",
            paused.as_deref().unwrap_or("stopped"),
            score.answered,
            score.total,
            score.correct,
            score.answered,
            state_path.display()
        );
    }
    Ok(Outcome::Holds)
}
