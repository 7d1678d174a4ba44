//! Runs a core request and renders its report: JSON (exactly the report's serialisation), the
//! text rendering, and the report's charts as SVG files. A progress bar appears on stderr for
//! runs longer than a second (never on a non-terminal).

use std::borrow::Cow;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use attnlab_core::api::{self, Context, Outcome, Report, Request};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How a report is shown.
#[derive(Debug, Clone, Default)]
pub struct Show<'a> {
    /// Print the report's JSON instead of text.
    pub json: bool,
    /// Write every chart of the report into this directory as `<name>.svg`.
    pub plot_dir: Option<&'a Path>,
}

/// Runs `request` and shows its report.
pub fn execute(request: &Request, show: &Show) -> anyhow::Result<Outcome> {
    execute_html(request, show, None)
}

/// Runs `request`, writes its report as a self-contained HTML file to `html` (when given, the
/// `--html FILE` option), and shows it.
pub fn execute_html(
    request: &Request,
    show: &Show,
    html: Option<&Path>,
) -> anyhow::Result<Outcome> {
    let report = run_with_progress(request)?;
    if let Some(path) = html {
        write_html(path, request.command(), &report)?;
    }
    emit(&report, show)?;
    if let (Some(path), false) = (html, show.json) {
        let mut out = std::io::stdout().lock();
        writeln!(out, "HTML report written to {}", path.display()).map_err(stdout_error)?;
    }
    Ok(report.outcome())
}

/// Writes `report` as one self-contained HTML file (inline SVG and CSS, no script, no external
/// request) titled `attnlab <command>`.
pub fn write_html(path: &Path, command: &str, report: &Report) -> anyhow::Result<()> {
    attnlab_render::html::write_file(path, &format!("attnlab {command}"), report)?;
    Ok(())
}

/// Runs `request` with a progress bar that shows itself after one second.
pub fn run_with_progress(request: &Request) -> anyhow::Result<Report> {
    let bar = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let start = Instant::now();
    let shown = std::sync::atomic::AtomicBool::new(false);
    let progress = |stage: &str, fraction: f64| {
        if !shown.load(std::sync::atomic::Ordering::Relaxed)
            && start.elapsed() > Duration::from_secs(1)
        {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            shown.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        bar.set_message(stage.to_string());
        bar.set_position((fraction.clamp(0.0, 1.0) * 1000.0) as u64);
    };
    let ctx = Context {
        progress: &progress,
        cancel: Some(super::interrupted()),
        allow_files: true,
        limits: super::limits(),
    };
    let report = api::run_with(request, &ctx);
    bar.finish_and_clear();
    Ok(report?)
}

/// Shows a report: JSON or text on stdout, charts into the plot directory.
pub fn emit(report: &Report, show: &Show) -> anyhow::Result<()> {
    let text = (!show.json).then(|| attnlab_render::text::render(report));
    emit_with_text(report, text.as_deref(), show)
}

/// [`emit`] with the text rendering given (a command that renders a chosen part of its
/// report): the charts go into the plot directory, then the JSON (when `show.json`) or `text`
/// is printed, followed by where each chart was written.
pub fn emit_with_text(report: &Report, text: Option<&str>, show: &Show) -> anyhow::Result<()> {
    if let Some(dir) = show.plot_dir {
        write_charts(dir, report)?;
    }
    let mut out = std::io::stdout().lock();
    if show.json {
        serde_json::to_writer_pretty(&mut out, report).map_err(stdout_error)?;
        writeln!(out).map_err(stdout_error)?;
    } else {
        out.write_all(for_terminal(text.unwrap_or_default(), Stream::Stdout).as_bytes())
            .map_err(stdout_error)?;
        if let Some(dir) = show.plot_dir {
            for chart in report.charts() {
                writeln!(
                    out,
                    "Plot written to {}",
                    dir.join(format!("{}.svg", chart.name)).display()
                )
                .map_err(stdout_error)?;
            }
        }
    }
    out.flush().map_err(stdout_error)?;
    Ok(())
}

/// Writes each chart of `report` to `dir/<name>.svg` (creating `dir`).
pub fn write_charts(dir: &Path, report: &Report) -> anyhow::Result<()> {
    let charts = report.charts();
    if charts.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| attnlab_core::Error::write_source(dir, e))?;
    for chart in &charts {
        let path = dir.join(format!("{}.svg", chart.name));
        attnlab_render::svg::write_file(&path, chart)?;
    }
    Ok(())
}

/// A failed write to stdout, as an error (a closed pipe is handled by the caller).
pub fn stdout_error(e: impl Into<std::io::Error>) -> anyhow::Error {
    let e: std::io::Error = e.into();
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return anyhow::Error::new(e);
    }
    anyhow::Error::new(attnlab_core::Error::write_source("standard output", e))
}

/// Where text is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// The columns prose written to `stream` wraps at: the width of the terminal `stream` is
/// (`COLUMNS` when that terminal reports no size, as a fresh pseudo-terminal may), `None` (no
/// wrapping) when `stream` is a file or a pipe.
pub fn terminal_width(stream: Stream) -> Option<usize> {
    let term = match stream {
        Stream::Stdout => console::Term::stdout(),
        Stream::Stderr => console::Term::stderr(),
    };
    if !term.is_term() {
        return None;
    }
    term.size_checked()
        .map(|(_rows, cols)| usize::from(cols))
        .or_else(|| {
            std::env::var("COLUMNS")
                .ok()?
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|&w| w > 0)
        })
}

/// `text` wrapped at word boundaries to the terminal's width when `stream` is a terminal
/// (`attnlab_render::text::wrap`), unchanged otherwise.
pub fn for_terminal(text: &str, stream: Stream) -> Cow<'_, str> {
    match terminal_width(stream) {
        Some(w) => Cow::Owned(attnlab_render::text::wrap::wrap(text, w)),
        None => Cow::Borrowed(text),
    }
}
