//! `dlc repl`: a live materialised query. Update lines are staged and applied as one
//! DRed batch at `;` or an empty line; `?- ...` lines show (or recompile for) a query.

use crate::cli::{Emit, Format, RunArgs};
use crate::report;
use crate::Output;
use diag::SourceMap;
use ir::{PredId, Program, Query, Tuple, Update};
use magic::MagicProgram;
use pipeline::{Evaluator, InputFacts, MagicMode, Maintainer, Maintaining, Options, Wanted};
use std::collections::BTreeSet;
use std::io::{BufRead, Write};

const HELP: &str = "\
  +E(a,b).      stage an insertion        -E(a,b).   stage a deletion
  ;  or empty   apply the staged changes as one batch (DRed) and show what changed
                (`+E(a,b);` stages and applies);
                a batch with a bad line is rejected whole
  ?- R(a,Y).    show the answers (a different query is recompiled)
  :why R(a,d)   a proof of a fact         :whynot R(a,u)  why a fact is not derived
  :facts        list the input facts      :stats     relation sizes
  :help         this text                 :quit      leave (also end of input)";

/// The longest input line the repl reads (as for facts files); a longer one ends the
/// session with an error, so a stream without newlines cannot make it grow without bound.
const MAX_LINE_BYTES: usize = syntax::MAX_LINE_BYTES;

/// The flags of `dlc` that make no sense for a session that prints as it goes; the repl
/// rejects them instead of ignoring them.
fn unsupported_flag(args: &RunArgs) -> Option<&'static str> {
    if args.emit != Emit::Answers {
        Some("--emit")
    } else if args.format != Format::Text {
        Some("--format")
    } else if args.compare {
        Some("--compare")
    } else if args.output_dir.is_some() {
        Some("--output-dir")
    } else {
        None
    }
}

struct Repl {
    /// The source program with the current query, and every predicate an update named.
    /// Its constants are not kept up to date: they live in the maintained program's
    /// interner, which parsing borrows (see [`Repl::stage`]).
    source: Program,
    /// The current query, of `source`.
    query: Query,
    maintainer: Maintainer,
    /// Whether `maintainer` keeps the magic rewrite (else the source program).
    magic: bool,
    /// How many predicates `source` had when the maintained program was compiled from it:
    /// those keep their ids in the maintained program, later ones are unknown to it.
    known_preds: usize,
    /// The input facts of predicates the maintained program does not know (first named by
    /// an update after it was compiled). No rule of it reads them, but a later query may:
    /// they go to the next recompilation.
    extra: BTreeSet<Tuple>,
    settings: Settings,
    /// The changes of the batch being typed, in order, and their texts.
    staged: Vec<(syntax::Sign, Tuple)>,
    staged_text: Vec<String>,
    /// Input lines of the staged batch that had errors: the batch is then rejected whole,
    /// as a bad line rejects an update file.
    bad_lines: Vec<usize>,
    sources: SourceMap,
    color: bool,
    batches: usize,
    /// Whether `--check` found a batch whose incremental state differs from recomputation.
    check_failed: bool,
    /// Set when an update or recompilation stopped at a resource limit: the state is
    /// incomplete, so the repl ends instead of answering from it.
    stopped: bool,
}

/// What the command line chose for every evaluation and batch of the session.
struct Settings {
    /// The engine, `--magic` and the limits of every evaluation and batch.
    options: Options,
    check: bool,
    timing: bool,
    /// `--full-report`: list every fact of a large batch's report.
    full_report: bool,
    /// The program is Soufflé's: `?-` queries are read in its syntax (lower-case variables).
    souffle: bool,
}

pub(crate) fn run(
    args: &RunArgs,
    input: &mut dyn BufRead,
    out: &mut Output<'_>,
    err: &mut dyn Write,
    interactive: crate::Interactive,
) -> i32 {
    if let Some(flag) = unsupported_flag(args) {
        return crate::usage_error(
            err,
            &format!("`dlc repl` does not support {flag}; it prints answers and batch reports as text"),
        );
    }
    let color = crate::use_color(args.color);
    if args.explain.is_some() || args.explain_missing.is_some() {
        return crate::usage_error(err, "the repl explains facts with `:why R(a,d)` and `:whynot R(a,u)`, not flags");
    }
    // A Soufflé program without a query starts with the all-free query of its first
    // `.output` relation (by name, the order its files are written in); the repl keeps
    // every relation up to date, so `?- ...` on another one reads it at once.
    let options = args.options();
    let mut prepared = match crate::prepare(args, &options, Wanted { outputs: true, every_input: true }) {
        Ok((prepared, _)) => prepared,
        Err(failed) => return crate::fail(err, failed, color),
    };
    // The repl maintains every relation through the facts it is given.
    if let Some(refused) = pipeline::size_limit_refused(&prepared.program, "the repl's updates") {
        let failed = pipeline::Failed { sources: prepared.sources, diagnostics: vec![refused] };
        return crate::fail(err, failed, color);
    }
    if prepared.program.query.is_none() {
        let first = prepared
            .souffle
            .as_ref()
            .and_then(|io| io.outputs.iter().map(|o| o.pred).min_by_key(|&p| prepared.program.pred_name(p)));
        if let Some(pred) = first {
            prepared.program.query = Some(crate::outputs::all_free_query(&mut prepared.program, pred));
        }
    }
    let session = match pipeline::compile(prepared, &options) {
        Ok(s) => s,
        Err(failed) => return crate::fail(err, failed, color),
    };
    crate::print_diagnostics(err, &session.warnings, &session.sources, color);
    let settings = Settings {
        options,
        check: args.check,
        timing: !args.no_timing,
        full_report: args.full_report,
        souffle: session.souffle,
    };
    let (maintainer, magic) = match settings.maintainer(&session.program, session.magic.as_ref(), &session.facts) {
        Ok(chosen) => chosen,
        Err(e) => return crate::stopped(err, &session.sources, session.widest(), &e, args.color),
    };
    let mut repl = Repl {
        maintainer,
        magic,
        query: session.query,
        known_preds: session.program.preds.len(),
        source: session.program,
        extra: BTreeSet::new(),
        settings,
        staged: Vec::new(),
        staged_text: Vec::new(),
        bad_lines: Vec::new(),
        sources: session.sources,
        color,
        batches: 0,
        check_failed: false,
        stopped: false,
    };
    let _ = writeln!(
        out,
        "dlc repl: {} answer(s) to ?- {}. — `:help` lists the commands",
        repl.maintainer.answers().len(),
        ir::DisplayQuery(&repl.source, &repl.query)
    );
    for batch in session.batches {
        repl.apply_batch(batch.update, batch.changes, out, err);
    }
    let mut lines = match interactive {
        // A terminal the editor cannot drive (an unsupported one) is read line by line.
        crate::Interactive::Yes => rustyline::DefaultEditor::new().map_or(Lines::Piped(input), Lines::Terminal),
        crate::Interactive::No => Lines::Piped(input),
    };
    let mut line = Vec::new();
    let mut line_number = 0;
    while !out.failed() {
        line_number += 1;
        let _ = out.flush();
        let text = match lines.read(&mut line) {
            Ok(Line::End) => break,
            Ok(Line::Text) => match std::str::from_utf8(&line) {
                Ok(text) => text.trim(),
                Err(e) => {
                    repl.reject_line(line_number, &format!("is not UTF-8 text ({e})"), err);
                    continue;
                }
            },
            Ok(Line::TooLong) => {
                // Not a line anyone types; skipping to its end might never finish (`< /dev/zero`).
                let _ = writeln!(
                    err,
                    "dlc repl: input line {line_number} is longer than {MAX_LINE_BYTES} bytes; stopped, staged changes \
                     are not applied"
                );
                return crate::EXIT_INPUT_ERROR;
            }
            Err(e) => {
                // The staged batch may be cut short: it is not applied.
                let _ = writeln!(err, "dlc repl: cannot read standard input: {e}; staged changes are not applied");
                return crate::EXIT_INPUT_ERROR;
            }
        };
        match text {
            "" | ";" => repl.apply(out, err),
            ":quit" | ":q" => break,
            ":help" => {
                let _ = writeln!(out, "{HELP}");
            }
            ":stats" => {
                let program = &repl.maintainer.program;
                let state = &repl.maintainer.state;
                let sizes = pipeline::relation_sizes(program, |p| state.len(p));
                let _ = writeln!(out, "{}", report::sizes_text(program, &sizes));
            }
            ":facts" => repl.list_facts(out),
            _ if text.starts_with("?-") => {
                repl.apply(out, err);
                repl.query(text, out, err);
            }
            _ if text.starts_with(":why") => {
                repl.apply(out, err);
                // The repl runs on the native engine, whose database proofs read.
                if let Some(db) = repl.maintainer.state.proofs() {
                    let state = crate::explain::ReplState {
                        source: &repl.source,
                        program: &repl.maintainer.program,
                        db,
                        magic: repl.magic,
                        limits: repl.settings.options.limits,
                    };
                    crate::explain::repl_command(text, &state, &mut repl.sources, repl.color, out, err);
                } else {
                    let _ = writeln!(err, "this engine keeps no derivation order to explain facts with");
                }
            }
            // `+E(a,b);` stages the update and ends the batch, as the two lines would.
            _ if text.starts_with('+') || text.starts_with('-') => match text.strip_suffix(';') {
                Some(update) => {
                    repl.stage(line_number, update.trim_end(), err);
                    repl.apply(out, err);
                }
                None => repl.stage(line_number, text, err),
            },
            _ => {
                let _ = writeln!(err, "not understood: `{text}` (`:help` lists the commands)");
                // Within a batch it may be an update with a typo (`E(a,b).` without a sign).
                if !repl.staged_text.is_empty() || !repl.bad_lines.is_empty() {
                    repl.bad_lines.push(line_number);
                }
            }
        }
        let _ = out.flush();
        if repl.stopped {
            return crate::EXIT_INPUT_ERROR;
        }
    }
    repl.apply(out, err);
    if repl.stopped {
        crate::EXIT_INPUT_ERROR
    } else if repl.check_failed {
        crate::EXIT_CHECK_FAILED
    } else {
        0
    }
}

/// What [`read_line`] read.
enum Line {
    /// A line (its bytes, without the newline, are in the buffer).
    Text,
    /// A line longer than [`MAX_LINE_BYTES`]; reading stopped inside it.
    TooLong,
    /// The end of the input.
    End,
}

/// Where the repl's lines come from: standard input as it is, or a terminal, through a
/// line editor with a prompt and the session's history.
enum Lines<'a> {
    Piped(&'a mut dyn BufRead),
    Terminal(rustyline::DefaultEditor),
}

/// The prompt on a terminal.
const PROMPT: &str = "dlc> ";

impl Lines<'_> {
    /// Reads the next line into `buf`, as [`read_line`] does.
    fn read(&mut self, buf: &mut Vec<u8>) -> std::io::Result<Line> {
        let editor = match self {
            Lines::Piped(input) => return read_line(*input, buf),
            Lines::Terminal(editor) => editor,
        };
        buf.clear();
        match editor.readline(PROMPT) {
            Ok(text) if text.len() > MAX_LINE_BYTES => Ok(Line::TooLong),
            Ok(text) => {
                if !text.trim().is_empty() {
                    let _ = editor.add_history_entry(text.as_str());
                }
                buf.extend_from_slice(text.as_bytes());
                Ok(Line::Text)
            }
            // Ctrl-D, and Ctrl-C as in a shell that is asked to leave: the end of the input.
            Err(rustyline::error::ReadlineError::Eof | rustyline::error::ReadlineError::Interrupted) => Ok(Line::End),
            Err(rustyline::error::ReadlineError::Io(e)) => Err(e),
            Err(e) => Err(std::io::Error::other(e)),
        }
    }
}

/// Reads one line into `buf`, holding at most [`MAX_LINE_BYTES`] of it.
fn read_line(input: &mut dyn BufRead, buf: &mut Vec<u8>) -> std::io::Result<Line> {
    buf.clear();
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(if buf.is_empty() { Line::End } else { Line::Text });
        }
        let (chunk, ends_line) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], true),
            None => (available, false),
        };
        if buf.len() + chunk.len() > MAX_LINE_BYTES {
            return Ok(Line::TooLong);
        }
        buf.extend_from_slice(chunk);
        let used = chunk.len() + usize::from(ends_line);
        input.consume(used);
        if ends_line {
            return Ok(Line::Text);
        }
    }
}

impl Settings {
    /// Evaluates the program `--magic` chooses (`source` or its rewrite `magic`) over
    /// `facts` with the chosen engine and keeps it for updates; true when that is the
    /// rewrite.
    fn maintainer(
        &self,
        source: &Program,
        magic: Option<&MagicProgram>,
        facts: &InputFacts,
    ) -> Result<(Maintainer, bool), pipeline::Error> {
        let options = &self.options;
        // Every relation: `:why` and `:stats` may ask about any of them.
        let evaluator = Evaluator::new(options).whole(true);
        let (run, choice) = evaluator.evaluate_chosen(source, magic, options.magic, facts, &|| None)?;
        let program = match magic {
            Some(magic) if choice.magic => magic.program.clone(),
            _ => source.clone(),
        };
        let how = Maintaining {
            whole: true,
            maintenance: options.maintenance,
            keep_record: self.check,
            limits: options.limits,
        };
        let mut maintainer = Maintainer::from_evaluation(program, run, facts, how)?;
        if self.full_report {
            maintainer.list_up_to = None;
        }
        Ok((maintainer, choice.magic))
    }
}

impl Repl {
    /// Reports an input line that is not UTF-8 text; it may have been an update of the
    /// staged batch, so that batch is rejected.
    fn reject_line(&mut self, line: usize, problem: &str, err: &mut dyn Write) {
        let _ =
            writeln!(err, "error: input line {line} {problem}; the line is ignored and the batch it is in rejected");
        self.bad_lines.push(line);
    }

    fn stage(&mut self, line: usize, text: &str, err: &mut dyn Write) {
        let file = self.sources.add(format!("<stdin:{line}>"), text.to_string());
        // Updates are read against the source program, which declares every predicate an
        // update names (whatever the current query reads), with the live constants.
        std::mem::swap(&mut self.source.consts, &mut self.maintainer.program.consts);
        let known = self.source.preds.len();
        let (batches, mut diags) = syntax::parse_updates(text, file, &mut self.source);
        // A predicate first named here is none of the program's (a typo, usually): its
        // updates change no answer, which `--insert` warns about too.
        diags.extend(pipeline::unused_input_warnings(&self.source, known));
        let mut changes = Vec::new();
        for batch in &batches {
            for (sign, fact) in &batch.changes {
                changes.push((*sign, fact.tuple(), pipeline::change_text(&self.source, *sign, fact)));
            }
        }
        std::mem::swap(&mut self.source.consts, &mut self.maintainer.program.consts);
        crate::print_diagnostics(err, &diags, &self.sources, self.color);
        if diag::has_errors(&diags) {
            self.bad_lines.push(line);
            return;
        }
        for (sign, tuple, shown) in changes {
            self.staged.push((sign, tuple));
            self.staged_text.push(shown);
        }
    }

    /// Applies the staged changes, if any, and prints the batch report; rejects them all
    /// when a line of the batch had errors.
    fn apply(&mut self, out: &mut dyn Write, err: &mut dyn Write) {
        // The staged lines apply in order: the last change of a fact wins.
        let update = pipeline::net_update(std::mem::take(&mut self.staged));
        let changes = std::mem::take(&mut self.staged_text);
        let bad_lines = std::mem::take(&mut self.bad_lines);
        if !bad_lines.is_empty() {
            let lines: Vec<String> = bad_lines.iter().map(usize::to_string).collect();
            let _ = writeln!(
                err,
                "batch rejected: input line(s) {} had errors, so none of its {} change(s) was applied; type the batch again",
                lines.join(", "),
                changes.len()
            );
            return;
        }
        self.apply_batch(update, changes, out, err);
    }

    /// Applies one net update (`changes` are its lines as written) and prints its report.
    fn apply_batch(&mut self, update: Update, changes: Vec<String>, out: &mut dyn Write, err: &mut dyn Write) {
        if changes.is_empty() {
            return;
        }
        // Changes of predicates the maintained program does not know cannot change its
        // state; they are kept for a later query.
        let known = |(pred, _): &Tuple| pred.index() < self.known_preds;
        let (inserts, extra_inserts): (Vec<Tuple>, Vec<Tuple>) = update.inserts.into_iter().partition(known);
        let (deletes, extra_deletes): (Vec<Tuple>, Vec<Tuple>) = update.deletes.into_iter().partition(known);
        for tuple in &extra_deletes {
            self.extra.remove(tuple);
        }
        self.extra.extend(extra_inserts);
        let batch = pipeline::Batch { changes, update: Update { inserts, deletes } };
        let check = self.settings.check;
        let outcome = match self.maintainer.apply(&batch.update, check, check) {
            Ok(outcome) => outcome,
            Err(e) => {
                let diagnostic = e.to_diagnostic(&self.maintainer.program);
                return self.stop(diagnostic, err);
            }
        };
        let mut text = String::new();
        let queried = self.queried();
        let (timing, full) = (self.settings.timing, self.settings.full_report);
        report::batch_text(&mut text, &self.maintainer.program, queried, self.batches, &batch, &outcome, timing, full);
        self.batches += 1;
        let _ = write!(out, "{text}");
        if !outcome.mismatches.is_empty() {
            let program = &self.maintainer.program;
            let names: Vec<String> = outcome.mismatches.iter().map(|p| program.pred_name(*p)).collect();
            report::check_failed(err, self.batches, &names);
            self.check_failed = true;
        }
    }

    /// Reports a resource error and ends the repl (see [`Repl::stopped`]).
    fn stop(&mut self, diagnostic: diag::Diagnostic, err: &mut dyn Write) {
        crate::print_diagnostics(err, &[diagnostic], &self.sources, self.color);
        self.stopped = true;
    }

    /// Every input fact, whatever the current query reads.
    fn input_facts(&self) -> InputFacts {
        let mut facts = self.maintainer.input_facts();
        for (pred, tuple) in &self.extra {
            facts.push(*pred, tuple.iter().copied());
        }
        facts
    }

    fn list_facts(&self, out: &mut dyn Write) {
        let facts = self.input_facts();
        let mut listed: Vec<(PredId, &[u32])> = facts.iter().collect();
        listed.sort_unstable();
        // Names from the source program (which knows every input predicate), values from
        // the live constants.
        let values = &self.maintainer.program;
        for (pred, tuple) in listed {
            let _ = writeln!(out, "{}{}.", self.source.display_pred(pred), values.display_tuple(pred, tuple));
        }
    }

    fn queried(&self) -> PredId {
        self.query.atom.pred
    }

    /// Shows the answers of `?- ...`, recompiling when it is not the current query.
    fn query(&mut self, text: &str, out: &mut dyn Write, err: &mut dyn Write) {
        let file = self.sources.add("<query>", text.to_string());
        let mut candidate = self.source.clone();
        // Constants typed in earlier updates live in the maintained program's interner.
        candidate.consts = self.maintainer.program.consts.clone();
        let parse = if self.settings.souffle { syntax::souffle::parse_query } else { syntax::parse_query };
        let diags = parse(text, file, &mut candidate);
        crate::print_diagnostics(err, &diags, &self.sources, self.color);
        if diag::has_errors(&diags) {
            return;
        }
        let Some(query) = candidate.query.clone() else { return };
        let current = &self.query;
        let same = query.atom.pred == current.atom.pred
            && query.atom.args.iter().map(|t| t.kind).eq(current.atom.args.iter().map(|t| t.kind));
        if !same {
            // A new query means new demand: recompile and evaluate every input fact from scratch.
            let facts = self.input_facts();
            let rewritten = if self.settings.options.magic == MagicMode::Off {
                None
            } else {
                let (mode, limit) = (self.settings.options.magic, self.settings.options.max_adornments);
                match pipeline::rewrite_for_mode(&candidate, &query, mode, limit) {
                    Ok(magic) => magic,
                    Err(limit) => {
                        crate::print_diagnostics(err, &[limit.to_diagnostic(&candidate)], &self.sources, self.color);
                        return;
                    }
                }
            };
            match self.settings.maintainer(&candidate, rewritten.as_ref(), &facts) {
                Ok((maintainer, magic)) => (self.maintainer, self.magic) = (maintainer, magic),
                Err(e) => {
                    let widest = rewritten.as_ref().map_or(&candidate, |m| &m.program);
                    return self.stop(e.to_diagnostic(widest), err);
                }
            }
            self.known_preds = candidate.preds.len();
            self.extra.clear();
            let _ = writeln!(out, "recompiled for ?- {}.", ir::DisplayQuery(&candidate, &query));
            self.source = candidate;
            self.query = query;
        }
        let queried = self.queried();
        let answers = self.maintainer.answers();
        for t in answers.iter() {
            let _ = writeln!(out, "{}", report::answer_text(&self.maintainer.program, queried, t));
        }
        let _ = writeln!(out, "{} answer(s)", answers.len());
    }
}
