//! `attnlab session`: the prediction-first practical. Scripted runs (`--answers FILE`) and
//! `--list` are core requests (`api::session`); the interactive mode prompts on the terminal and
//! runs each step through the same engine (`attnlab_core::session::Session`). This file reads
//! and writes the state file, prompts, and prints what `attnlab_render::text::session` renders.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use attnlab_core::api::session::{Pause, RunReport, SessionReport, SessionRequest};
use attnlab_core::api::value::BlocksSource;
use attnlab_core::api::{Report, Request};
use attnlab_core::present::text::shorten;
use attnlab_core::session::{AnswerSheet, Session, State, StepRecord};
use attnlab_render::text::session as render;

use super::exec::{emit, for_terminal, run_with_progress, stdout_error, Show, Stream};
use super::Outcome;

/// The prediction-first practical: predict each result, then see it computed (progress is kept).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Grade a TOML or JSON file non-interactively: step id → answer, or step id → a table with
    /// `answer` and overrides of the step's varied quantities. Every answer in it is graded; the
    /// steps it does not answer are named (exit 1 when any is missing, 0 when every step is
    /// graded, right or wrong). The file is graded on its own unless it says `resume = true`
    /// and --state names the progress to continue from.
    #[arg(long)]
    pub answers: Option<PathBuf>,
    /// Where progress is kept. Interactive runs: [default: $XDG_STATE_HOME/attnlab/session.json,
    /// else ~/.local/state/attnlab/session.json]. With --answers only this file is used (read
    /// when the answers say `resume = true`, written with this run's records); without it a
    /// scripted run reads and writes no progress.
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// Forget the saved progress and start over.
    #[arg(long)]
    pub reset: bool,
    /// Print one JSON object (the report) on stdout; prompts and narration go to stderr.
    #[arg(long)]
    pub json: bool,
    /// The provided blocks, held fixed by every step that runs a layer: E (3 × d, the table of
    /// A, B, .) and the d × d projections Wq, Wk, Wv, from a .json, .npy, .npz or .safetensors
    /// file (or a directory of .npy files) [default: the course program's draws and table].
    #[arg(long, value_name = "FILE")]
    pub blocks: Option<PathBuf>,
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

/// Where narration goes: stdout, or stderr when stdout carries the JSON report; wrapped at
/// word boundaries when that is a terminal.
struct Narrator {
    json: bool,
}

impl Narrator {
    fn print(&self, text: &str) -> anyhow::Result<()> {
        if self.json {
            let mut e = std::io::stderr().lock();
            let fail = |err| attnlab_core::Error::write_source("standard error", err);
            e.write_all(for_terminal(text, Stream::Stderr).as_bytes())
                .map_err(fail)?;
            e.flush().map_err(fail)?;
        } else {
            let mut o = std::io::stdout().lock();
            o.write_all(for_terminal(text, Stream::Stdout).as_bytes())
                .map_err(stdout_error)?;
            o.flush().map_err(stdout_error)?;
        }
        Ok(())
    }
    fn say(&self, line: &str) -> anyhow::Result<()> {
        self.print(&format!("{line}\n"))
    }
}

/// The longest line a prompt reads (an answer, a setting, a reason).
pub const MAX_LINE: usize = 4096;

/// A line from the terminal: `None` at end of input (Ctrl-D) or when the student types `quit`.
/// Lines are read at most [`MAX_LINE`] bytes at a time: a longer line is an error, never a
/// growing buffer.
fn read_line(input: &mut dyn BufRead) -> anyhow::Result<Option<String>> {
    let mut raw = Vec::new();
    let limit = u64::try_from(MAX_LINE + 1).unwrap_or(u64::MAX);
    let n = std::io::Read::take(&mut *input, limit)
        .read_until(b'\n', &mut raw)
        .map_err(|e| attnlab_core::Error::io_source("standard input", e))?;
    if n == 0 {
        return Ok(None);
    }
    if raw.len() > MAX_LINE && !raw.ends_with(b"\n") {
        return Err(attnlab_core::Error::invalid(
            "input line",
            format!("a line of more than {MAX_LINE} bytes"),
            format!("at most {MAX_LINE} bytes per answer (progress so far is saved)"),
        )
        .into());
    }
    let line = String::from_utf8(raw).map_err(|_| {
        attnlab_core::Error::invalid("input line", "bytes that are not UTF-8", "UTF-8 text")
    })?;
    let t = line.trim().to_string();
    if t.eq_ignore_ascii_case("quit") || t.eq_ignore_ascii_case("q") {
        return Ok(None);
    }
    Ok(Some(t))
}

/// Runs step `i` at the terminal; `None` when input ended (progress so far is kept).
fn interactive_step(
    n: &Narrator,
    input: &mut dyn BufRead,
    session: &Session,
    i: usize,
) -> anyhow::Result<Option<StepRecord>> {
    let step = session.step(i)?;
    // The question first (with the defaults), so the student knows what a setting is for.
    let defaults = session.describe(i, &BTreeMap::new())?;
    n.print(&render::question(&defaults.question))?;
    let mut overrides = BTreeMap::new();
    for p in &step.params {
        loop {
            n.print(&format!(
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
    let info = session.describe(i, &overrides)?;
    if step.settings(&overrides)? != step.settings(&BTreeMap::new())? {
        n.say(&format!("   Q (your settings): {}", info.question))?;
    }
    n.print(&render::answer_form(&info.answer_kind))?;
    let mut hint_used = false;
    let answer = loop {
        n.print("   your prediction (? for a hint): ")?;
        let Some(line) = read_line(input)? else {
            return Ok(None);
        };
        if line == "?" || line.eq_ignore_ascii_case("hint") {
            hint_used = true;
            n.say(&format!("   hint: {}", info.hint))?;
            continue;
        }
        match info.answer_kind.parse(&line) {
            Ok(_) => break line,
            Err(_) => n.say(&format!(
                "   not understood: \"{}\"; accepted: {}",
                shorten(&line),
                info.answer_form
            ))?,
        }
    };
    n.print("   your reason, in a few words (optional, Enter skips): ")?;
    let Some(reason) = read_line(input)? else {
        return Ok(None);
    };
    let entry = attnlab_core::session::ScriptedAnswer {
        answer,
        settings: overrides,
        reason: Some(reason).filter(|r| !r.is_empty()),
    };
    Ok(Some(session.grade(i, &entry, hint_used)?))
}

/// The command that continues this session.
fn resume_command(path: &Path, answers: Option<&Path>) -> String {
    let mut c = format!("attnlab session --state {}", path.display());
    if let Some(a) = answers {
        c.push_str(&format!(" --answers {}", a.display()));
    }
    c
}

/// Where the progress is, and how to continue or start over.
fn progress_note(r: &RunReport, path: &Path, answers: Option<&Path>) -> String {
    if r.complete {
        format!(
            "Progress is in {}; run with --reset to start over.\n",
            path.display()
        )
    } else {
        format!(
            "Progress saved in {}.\nResume with: {}\n",
            path.display(),
            resume_command(path, answers)
        )
    }
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let show = Show {
        json: args.json,
        plot_dir: None,
    };
    if args.list {
        let request = Request::Session(SessionRequest {
            list: true,
            ..Default::default()
        });
        emit(&run_with_progress(&request)?, &show)?;
        return Ok(Outcome::Holds);
    }
    let n = Narrator { json: args.json };
    match &args.answers {
        Some(path) => scripted(&args, path, &n, &show),
        None => {
            let state_path = args.state.clone().unwrap_or_else(default_state_path);
            interactive(&args, &state_path, &n, &show)
        }
    }
}

/// `--answers FILE`: one core request. The file is graded on its own; only with an explicit
/// `--state FILE` and `resume = true` in the answers does the saved progress supply the steps
/// the file does not answer. The records are written (to `--state FILE` only, replacing earlier
/// records of the same steps) when the run succeeds: a bad answers file changes nothing, even
/// with `--reset`.
fn scripted(
    args: &Args,
    answers: &Path,
    n: &Narrator,
    show: &Show,
) -> anyhow::Result<Outcome> {
    let limits = super::limits();
    let sheet = AnswerSheet::load_with(answers, &limits)?;
    let state_path = args.state.as_deref();
    if sheet.resume && state_path.is_none() {
        return Err(attnlab_core::Error::invalid(
            format!("resume = true in {}", shorten(&answers.display().to_string())),
            "no --state",
            "--state FILE naming the saved progress to continue from (a scripted run never reads the default state file)",
        )
        .into());
    }
    let saved = match state_path {
        Some(p) if !args.reset => State::load_with(p, &limits)?,
        _ => State::default(),
    };
    let resume = sheet.resume;
    let request = Request::Session(SessionRequest {
        answers: Some(sheet),
        list: false,
        state: resume.then(|| saved.clone()),
        blocks: args.blocks.clone().map(BlocksSource::Path),
        settings: None,
    });
    let report = run_with_progress(&request)?;
    let Report::Session(boxed) = &report else {
        anyhow::bail!("the session request returned another report");
    };
    let SessionReport::Run(r) = boxed.as_ref() else {
        anyhow::bail!("the session run returned the step list");
    };
    if let Some(p) = state_path {
        // This run's records replace earlier ones of the same steps; the file keeps the
        // others (a later run with resume = true carries them over).
        let mut state = if resume { saved } else { State::default() };
        r.update(&mut state);
        if args.reset {
            state.save_replacing(p)?;
        } else {
            state.save(p)?;
        }
    }
    if args.json {
        n.print(&render::narration(r))?;
        emit(&report, show)?;
    } else {
        emit(&report, show)?;
        n.print(&scripted_note(r, state_path, answers))?;
    }
    Ok(report.outcome())
}

/// After a scripted run: where its records were saved (or that they were not), and how to
/// continue an incomplete file.
fn scripted_note(r: &RunReport, state: Option<&Path>, answers: &Path) -> String {
    match state {
        None => "Graded on its own; no progress saved (add --state FILE to keep it).\n".into(),
        Some(p) if r.complete => format!(
            "Records saved in {} (the newest record of each step is kept).\n",
            p.display()
        ),
        Some(p) => format!(
            "Records saved in {}. To add the missing steps, answer them in a file with resume = true and run: {}\n",
            p.display(),
            resume_command(p, Some(answers))
        ),
    }
}

/// The prompts: each unfinished step in order, saving after each; Ctrl-D or `quit` stops.
fn interactive(
    args: &Args,
    state_path: &Path,
    n: &Narrator,
    show: &Show,
) -> anyhow::Result<Outcome> {
    if args.reset {
        State::remove(state_path)?;
    }
    let mut state = State::load_with(state_path, &super::limits())?;
    let session = match &args.blocks {
        Some(path) => Session::with_blocks(attnlab_core::blocks::Blocks::load_with(
            path,
            &super::limits(),
        )?)?,
        None => Session::course(),
    };
    if let Some(line) = attnlab_core::present::prose::session::blocks_line(&session.blocks()) {
        n.say(&line)?;
    }
    let done_before = session.score(&state).answered;
    if let Some(line) = attnlab_core::present::prose::session::intro(done_before, session.len()) {
        n.say(&line)?;
    }
    if done_before == 0 {
        n.say("Press Enter to keep a default, ? for a hint; Ctrl-D (or quit) stops and keeps your progress.")?;
    }
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    super::exit_on_interrupt().store(true, std::sync::atomic::Ordering::SeqCst);
    let mut graded_now = Vec::new();
    let mut paused = None;
    for i in 0..session.len() {
        let id = session.step(i)?.id;
        if state.done(id) {
            continue;
        }
        n.print(&render::step_header(
            i,
            session.len(),
            &session.describe(i, &BTreeMap::new())?,
        ))?;
        let Some(record) = interactive_step(n, &mut input, &session, i)? else {
            paused = Some(Pause::InputEnded);
            break;
        };
        n.print(&render::record(&record))?;
        state.record(record);
        state.save(state_path)?;
        graded_now.push(id.to_string());
    }
    let r = RunReport::new(&session, &state, graded_now, paused, done_before > 0);
    if args.json {
        if !r.complete {
            // After the prompt the input ended at.
            n.say(&format!(
                "\nResume with: {}",
                resume_command(state_path, None)
            ))?;
        }
        emit(&Report::Session(Box::new(SessionReport::Run(r))), show)?;
    } else {
        n.print(&render::summary(&r))?;
        n.print(&progress_note(&r, state_path, None))?;
    }
    Ok(Outcome::Holds)
}
