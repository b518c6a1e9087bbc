//! Renders diagnostics with ariadne: the only ariadne call site in the workspace.

use crate::{Diagnostic, FileId, Severity, SourceMap};
use ariadne::{Color, Config, IndexType, Label, Report, ReportKind};

/// Renders every diagnostic to one string. With `color` off the text is stable, which is
/// what snapshot tests record.
pub fn render(diagnostics: &[Diagnostic], sources: &SourceMap, color: bool) -> String {
    let mut out = Vec::new();
    for d in diagnostics {
        render_one(d, sources, color, &mut out);
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn render_one(d: &Diagnostic, sources: &SourceMap, color: bool, out: &mut Vec<u8>) {
    let kind = match d.severity {
        Severity::Error => ReportKind::Error,
        Severity::Warning => ReportKind::Warning,
    };
    let message = format!("{} ({})", d.message, d.code.title());
    let Some(anchor) = d.primary_span() else {
        // A diagnostic without a location (e.g. a missing file): plain text with ariadne's
        // header, `[E0012] Error: ...`, so that every report starts the same way.
        out.extend_from_slice(format!("[{}] {}: {}\n", d.code, severity_word(d.severity), message).as_bytes());
        for note in &d.notes {
            out.extend_from_slice(format!("  note: {note}\n").as_bytes());
        }
        if let Some(help) = &d.help {
            out.extend_from_slice(format!("  help: {help}\n").as_bytes());
        }
        return;
    };
    let name = |f: FileId| sources.name(f).to_string();
    let mut report = Report::build(kind, (name(anchor.file), anchor.range()))
        .with_config(Config::new().with_index_type(IndexType::Byte).with_color(color))
        .with_code(d.code)
        .with_message(message);
    // ariadne draws a same-file label that precedes an earlier-added one as a separate
    // snippet; adding labels in source order keeps one snippet per file.
    let mut labels: Vec<&crate::Label> = d.labels.iter().collect();
    labels.sort_by_key(|l| (l.span.file, l.span.start, l.span.end));
    for label in labels {
        let colour = if label.primary { Color::Red } else { Color::Blue };
        report = report.with_label(
            Label::new((name(label.span.file), label.span.range())).with_message(&label.message).with_color(colour),
        );
    }
    for note in &d.notes {
        report = report.with_note(note);
    }
    if let Some(help) = &d.help {
        report = report.with_help(help);
    }
    let files: Vec<(String, String)> = {
        let mut ids: Vec<FileId> = d.labels.iter().map(|l| l.span.file).collect();
        ids.sort();
        ids.dedup();
        ids.into_iter().map(|f| (name(f), sources.text(f).to_string())).collect()
    };
    // A report that fails to render (it cannot for in-memory sources) is still shown as text.
    if report.finish().write(ariadne::sources(files), &mut *out).is_err() {
        out.extend_from_slice(format!("[{}] {}: {}\n", d.code, severity_word(d.severity), d.message).as_bytes());
    }
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "Error",
        Severity::Warning => "Warning",
    }
}
