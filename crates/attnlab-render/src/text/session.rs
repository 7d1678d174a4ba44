//! `attnlab session`: the step list, each graded step (header, question, answer form, the
//! prediction beside the result, the evidence, why) and the summary. The pieces are public so a
//! front end that prompts (the CLI's interactive mode) shows steps exactly as a scripted run
//! does.

use std::fmt::Write;

use attnlab_core::api::session::{RunReport, SessionReport, StepList};
use attnlab_core::present::prose::session as prose;
use attnlab_core::session::{AnswerKind, Session, StepInfo, StepRecord};
use comfy_table::ContentArrangement;

use super::table;

/// The text of a session report: the step list, or a run (what it graded, then the summary).
pub fn render(r: &SessionReport) -> String {
    match r {
        SessionReport::List(l) => list(l),
        SessionReport::Run(r) => format!("{}{}", narration(r), summary(r)),
    }
}

/// `--list`: one row per step with its answer form and settings (defaults).
pub fn list(l: &StepList) -> String {
    let mut t = table(&["step id", "answer with", "settings (default)"]);
    for s in &l.steps {
        let settings: Vec<String> = s
            .settings
            .iter()
            .map(|p| format!("{} ({})", p.name, p.default))
            .collect();
        t.add_row(vec![
            s.id.clone(),
            s.answer_form.clone(),
            if settings.is_empty() {
                "—".into()
            } else {
                settings.join(", ")
            },
        ]);
    }
    format!("{t}\n")
}

/// The run as it went: the intro, then each step this run graded (its header, settings,
/// question and answer form, then the graded record).
pub fn narration(r: &RunReport) -> String {
    let mut out = String::new();
    if let Some(line) = prose::intro(r.done_before(), r.score.total) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(line) = prose::blocks_line(&r.blocks) {
        let _ = writeln!(out, "{line}");
    }
    let course = Session::course();
    for rec in r.graded() {
        let described = course
            .position(&rec.id)
            .and_then(|i| Ok((i, course.describe(i, &rec.settings.0)?)));
        match described {
            Ok((i, info)) => {
                out.push_str(&step_header(i, r.score.total, &info));
                if !rec.settings.0.is_empty() {
                    out.push_str(&settings_line(rec));
                }
                out.push_str(&question(&rec.question));
                out.push_str(&answer_form(&info.answer_kind));
            }
            // A step this build does not know (cannot happen for records it graded).
            Err(_) => {
                let _ = writeln!(out, "\n── {} — {}", rec.id, rec.title);
                out.push_str(&question(&rec.question));
            }
        }
        out.push_str(&record(rec));
    }
    out
}

/// `── Step 3/15 · id — title`, what is varied and what is held fixed.
pub fn step_header(i: usize, total: usize, info: &StepInfo) -> String {
    format!(
        "\n── Step {}/{total} · {} — {}\n   varied: {}\n   held fixed: {}\n",
        i + 1,
        info.id,
        info.title,
        info.varied,
        info.fixed
    )
}

/// `settings: omega = pi/3, separations = 0,1,2`.
pub fn settings_line(r: &StepRecord) -> String {
    let s: Vec<String> = r
        .settings
        .0
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    format!("   settings: {}\n", s.join(", "))
}

/// `Q: …`.
pub fn question(q: &str) -> String {
    format!("   Q: {q}\n")
}

/// The options of a choice, then `answer with …`.
pub fn answer_form(kind: &AnswerKind) -> String {
    let mut out = String::new();
    if let AnswerKind::Choice { options } = kind {
        for o in options {
            let _ = writeln!(out, "      {}) {}", o.key, o.text);
        }
    }
    let _ = writeln!(out, "   answer with {}", kind.form());
    out
}

/// A graded step: prediction, result and right?, how they were compared, the evidence, the
/// hint and reason, and the explanation (with what was missed).
pub fn record(r: &StepRecord) -> String {
    let mut out = String::new();
    let mut t = table(&["your prediction", "computed result", "right?"]);
    // Short cells: never squeeze them to a terminal width (a pty may report 0 columns).
    t.set_content_arrangement(ContentArrangement::Disabled);
    t.add_row(vec![
        r.prediction.to_string(),
        r.result.to_string(),
        right(r.correct),
    ]);
    let _ = writeln!(out, "{t}");
    let _ = writeln!(out, "   ({})", r.grading);
    for e in &r.evidence {
        for (label, value) in prose::evidence_lines(e) {
            let _ = writeln!(out, "   · {label}: {value}");
        }
    }
    if !r.blocks.is_empty() {
        let _ = writeln!(out, "   · held fixed: the provided {}", r.blocks.join(", "));
    }
    if r.hint_used {
        let _ = writeln!(out, "   (you used the hint)");
    }
    if let Some(reason) = &r.reason {
        let _ = writeln!(out, "   your reason: {reason}");
    }
    if r.correct {
        let _ = writeln!(out, "   why: {}", r.explanation);
    } else {
        let _ = writeln!(
            out,
            "   missed: you predicted {}, the computation gives {}. Why: {}",
            r.prediction, r.result, r.explanation
        );
    }
    out
}

fn right(correct: bool) -> String {
    if correct { "yes" } else { "NO" }.into()
}

/// The end of a run: every graded step's prediction and result (with where each record comes
/// from when the run resumed a saved progress) and the score; for an incomplete run, which
/// steps were not graded, or where an interactive run paused.
pub fn summary(r: &RunReport) -> String {
    let mut out = String::new();
    let margins = r.steps.iter().any(|rec| {
        r.graded_now.contains(&rec.id)
            && rec
                .evidence
                .iter()
                .any(|e| matches!(e, attnlab_core::session::Evidence::Check { .. }))
    });
    if margins {
        let _ = writeln!(
            out,
            "\n{}",
            attnlab_core::present::prose::margin_explained()
        );
    }
    let earlier = !r.carried_over.is_empty();
    if !r.steps.is_empty() && (r.complete || r.paused.is_none()) {
        let mut header = vec!["step", "your prediction", "computed result", "right?"];
        if earlier {
            header.push("graded");
        }
        let mut t = table(&header);
        t.set_content_arrangement(ContentArrangement::Disabled);
        for rec in &r.steps {
            let mut row = vec![
                rec.id.clone(),
                rec.prediction.to_string(),
                rec.result.to_string(),
                right(rec.correct),
            ];
            if earlier {
                row.push(if r.carried_over.contains(&rec.id) {
                    "earlier (saved)".into()
                } else {
                    "now".into()
                });
            }
            t.add_row(row);
        }
        let _ = writeln!(out, "\n{t}");
    }
    if let Some(line) = prose::carried_over(&r.carried_over) {
        let _ = writeln!(out, "{line}");
    }
    if r.complete {
        let _ = writeln!(out, "{}", prose::score(&r.score));
    } else if r.paused.is_some() {
        let _ = writeln!(out, "\n{}", prose::paused(r.paused.as_ref(), &r.score));
    } else {
        let _ = writeln!(out, "{}", prose::partial_score(&r.score));
        if let Some(line) = prose::missing(&r.missing, r.score.total) {
            let _ = writeln!(out, "{line}");
        }
    }
    out
}
