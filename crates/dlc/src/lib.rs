//! The dlc command line as a library: argument parsing, file IO and output formats over
//! the compiler crates. `main.rs` only hands it the process's streams, so the end-to-end
//! and snapshot tests run the very same code in-process.

pub mod cli;
mod cluster;
mod explain;
mod load;
mod outputs;
mod progress;
mod repl;
mod report;

use clap::Parser;
use cli::{Cli, ColorArg, Command, Emit, Format, MagicArg, RunArgs};
use diag::{Diagnostic, SourceMap};
use pipeline::{Error, Evaluator, Failed, MagicMode, Maintainer, Maintaining, Options, Prepared, Session, Wanted};
use serde_json::{json, Value};
use std::ffi::OsString;
use std::io::{BufRead, IsTerminal, Write};

/// Exit status of a run that found errors in the user's input.
pub const EXIT_INPUT_ERROR: i32 = 1;
/// Exit status of a usage error (bad flags).
pub const EXIT_USAGE: i32 = 2;
/// Exit status when `--check` finds the incremental state differs from recomputation.
pub const EXIT_CHECK_FAILED: i32 = 3;

/// Runs dlc with these arguments (the first is the program name) and streams; returns the
/// process exit status.
pub fn run(
    args: impl IntoIterator<Item = impl Into<OsString> + Clone>,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    run_with(args, input, out, err, Interactive::No)
}

/// Whether standard input and output are a terminal someone types at: `dlc repl` then
/// shows a prompt and edits lines (with history) instead of reading `input` line by line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interactive {
    Yes,
    No,
}

/// [`run`], on a terminal if `interactive` says so.
pub fn run_with(
    args: impl IntoIterator<Item = impl Into<OsString> + Clone>,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    err: &mut dyn Write,
    interactive: Interactive,
) -> i32 {
    let mut out = Output::new(out);
    let mut code = run_command(args, input, &mut out, err, interactive);
    // Output that did not reach its destination (a full disk, a closed pipe) is a failed
    // run, however well everything else went.
    let flushed = out.flush();
    if let Some(e) = out.error.take().or(flushed.err()) {
        let _ = writeln!(err, "dlc: cannot write the output: {e}");
        code = EXIT_INPUT_ERROR;
    }
    if err.flush().is_err() {
        code = EXIT_INPUT_ERROR;
    }
    code
}

/// Standard output, remembering the first write error: the writers all over dlc may then
/// ignore the result of each `write!`, and the run still fails when one did not get
/// through. After an error every write fails at once, so a long run stops producing
/// output it cannot deliver, and the repl sees [`Output::failed`] and stops.
pub(crate) struct Output<'a> {
    inner: &'a mut dyn Write,
    error: Option<std::io::Error>,
}

impl<'a> Output<'a> {
    fn new(inner: &'a mut dyn Write) -> Self {
        Output { inner, error: None }
    }

    /// Whether a write has failed.
    pub(crate) fn failed(&self) -> bool {
        self.error.is_some()
    }

    fn record<T>(&mut self, result: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &result {
            if self.error.is_none() {
                self.error = Some(std::io::Error::new(e.kind(), e.to_string()));
            }
        }
        result
    }
}

impl Write for Output<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.failed() {
            return Err(std::io::Error::other("an earlier write failed"));
        }
        let result = self.inner.write(buf);
        self.record(result)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.failed() {
            return Err(std::io::Error::other("an earlier write failed"));
        }
        let result = self.inner.flush();
        self.record(result)
    }
}

fn run_command(
    args: impl IntoIterator<Item = impl Into<OsString> + Clone>,
    input: &mut dyn BufRead,
    out: &mut Output<'_>,
    err: &mut dyn Write,
    interactive: Interactive,
) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let text = e.render().to_string();
            return if e.use_stderr() {
                let _ = write!(err, "{text}");
                EXIT_USAGE
            } else {
                let _ = write!(out, "{text}");
                0
            };
        }
    };
    let args = match &cli.command {
        Some(Command::Repl(args)) => args,
        None => &cli.run,
    };
    if args.program.is_none() {
        return usage_error(err, "no program file given: pass it as the last argument, e.g. `dlc prog.dl`");
    }
    if let Some(message) = cluster::usage_error(args, cli.command.is_some()) {
        return usage_error(err, &message);
    }
    let reads_stdin = args.program.as_deref() == Some(std::path::Path::new("-"));
    match &cli.command {
        Some(Command::Repl(_)) if reads_stdin => {
            usage_error(err, "the repl reads its commands from standard input: give it the program as a file")
        }
        Some(Command::Repl(args)) => repl::run(args, input, out, err, interactive),
        None if reads_stdin => {
            let mut sources = SourceMap::new();
            match load::read_stdin(input, &mut sources) {
                Ok(file) => {
                    let args = RunArgs { program_text: Some(sources.text(file).to_string()), ..cli.run.clone() };
                    run_batch(&args, out, err)
                }
                Err(d) => fail(err, Failed { sources, diagnostics: vec![d] }, use_color(cli.run.color)),
            }
        }
        None => run_batch(&cli.run, out, err),
    }
}

fn use_color(arg: ColorArg) -> bool {
    match arg {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    }
}

/// Prints diagnostics to `err`.
fn print_diagnostics(err: &mut dyn Write, diagnostics: &[Diagnostic], sources: &SourceMap, color: bool) {
    if !diagnostics.is_empty() {
        let _ = write!(err, "{}", diag::render(diagnostics, sources, color));
    }
}

fn usage_error(err: &mut dyn Write, message: &str) -> i32 {
    let _ = writeln!(err, "error: {message}\n\nFor more information, try '--help'.");
    EXIT_USAGE
}

fn fail(err: &mut dyn Write, failed: Failed, color: bool) -> i32 {
    print_diagnostics(err, &failed.diagnostics, &failed.sources, color);
    let errors = failed.diagnostics.iter().filter(|d| d.is_error()).count();
    let _ = writeln!(err, "dlc: {errors} error(s); nothing was evaluated");
    EXIT_INPUT_ERROR
}

fn run_batch(args: &RunArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    // The magic rewrite derives the query's answers only; `--all` writes every relation.
    let all_args;
    let args = if args.all {
        all_args = RunArgs { no_magic: true, ..args.clone() };
        &all_args
    } else {
        args
    };
    let color = use_color(args.color);
    if args.compare && args.magic_mode() == MagicArg::Off {
        return usage_error(
            err,
            "--compare evaluates the magic and the original program; it does not combine with --magic off",
        );
    }
    if args.explain.is_some() || args.explain_missing.is_some() {
        return explain::run(args, out, err, color);
    }
    let allowed: &[Format] = match args.emit {
        Emit::Ast => &[Format::Text],
        Emit::Adorned => &[Format::Text, Format::Json, Format::Dot],
        _ => &[Format::Text, Format::Json],
    };
    if !allowed.contains(&args.format) {
        return usage_error(
            err,
            &format!("--emit {} does not support --format {}", value_name(args.emit), value_name(args.format)),
        );
    }
    if args.emit == Emit::Ast {
        return emit_ast(args, out, err, color);
    }
    let mut options = args.options();
    let (mut prepared, shares) = match prepare(args, &options, Wanted { outputs: true, every_input: false }) {
        Ok(p) => p,
        Err(failed) => return fail(err, failed, color),
    };
    match cluster::join_cluster(args, &mut prepared, &shares) {
        Ok(Some((link, read))) => {
            if let pipeline::Engine::Differential { cluster, .. } = &mut options.engine {
                *cluster = Some(link);
            }
            let _ = writeln!(err, "{read}");
        }
        Ok(None) => {}
        Err(diagnostic) => {
            print_diagnostics(err, &[diagnostic], &prepared.sources, color);
            let _ = writeln!(err, "dlc: the cluster did not start; nothing was evaluated");
            return EXIT_INPUT_ERROR;
        }
    }
    let outputs = prepared.program.query.is_none().then(|| prepared.souffle.take()).flatten();
    if let Some(io) = outputs {
        // A Soufflé program without a query computes its `.output` relations.
        if let Some(message) = outputs::unsupported_flags(args) {
            return usage_error(err, &message);
        }
        print_diagnostics(err, &prepared.warnings, &prepared.sources, color);
        if args.emit != Emit::Answers {
            return match outputs::emit(args, &options, &prepared, &io) {
                Ok(text) => {
                    let _ = write!(out, "{text}");
                    0
                }
                Err(limit) => {
                    print_diagnostics(err, &[limit], &prepared.sources, color);
                    EXIT_INPUT_ERROR
                }
            };
        }
        // The input facts go to the evaluation, which frees them once they are in its
        // database: `prepared` would hold them until the end of the run.
        let facts = std::mem::take(&mut prepared.facts);
        return outputs::run(args, &options, &prepared, facts, &io, out, err);
    }
    if args.output_dir.is_some() && (args.emit != Emit::Answers || args.format == Format::Json) {
        return usage_error(
            err,
            "-D/--output-dir writes the query's answers as text files: it goes with the default `--emit answers` and `--format text` only",
        );
    }
    let session = match pipeline::compile(prepared, &options) {
        Ok(s) => s,
        Err(failed) => return fail(err, failed, color),
    };
    print_diagnostics(err, &session.warnings, &session.sources, color);
    let json = args.format == Format::Json;
    let text = match args.emit {
        Emit::Ast | Emit::Trace | Emit::Answers => return evaluate_and_report(args, &options, &session, out, err),
        Emit::Ir => {
            if json {
                to_json_text(&report::program_json(&session.program))
            } else {
                session.program.to_string()
            }
        }
        Emit::Adorned | Emit::MagicIr => {
            // The compile stage makes the rewrite whenever the output shows it.
            let Some(magic) = session.magic.as_ref() else { return EXIT_INPUT_ERROR };
            match (args.emit, args.format) {
                (Emit::Adorned, Format::Json) => to_json_text(&magic.graph_json()),
                (Emit::Adorned, Format::Dot) => magic.display_dot(),
                (Emit::Adorned, _) => magic.display_graph(),
                _ if json => to_json_text(&magic.to_json()),
                // The program alone first (easy to copy), then the numbered trace it refers to.
                _ => format!("{}\n{}", magic.display_rules(), magic.display_trace()),
            }
        }
        Emit::Plan => {
            // The program evaluation starts with: `auto` evaluates the original program
            // when the rewrite narrows nothing (and may switch to it while evaluating).
            let magic = match options.magic {
                MagicMode::Off => None,
                MagicMode::On => session.magic.as_ref(),
                MagicMode::Auto => {
                    session.magic.as_ref().filter(|m| pipeline::auto_choice(&session.program, m, None).magic)
                }
            };
            let program = magic.map_or(&session.program, |m| &m.program);
            let plan = plan::plan_program(program);
            if json {
                to_json_text(&plan.to_json(program))
            } else {
                plan.display(program).to_string()
            }
        }
    };
    let _ = write!(out, "{text}");
    if !text.ends_with('\n') {
        let _ = writeln!(out);
    }
    0
}

/// The load stage over the files `args` name: the program, its facts and updates (in a
/// cluster, this process's share of each facts file), and what was read of each file.
fn prepare(args: &RunArgs, options: &Options, wanted: Wanted) -> Result<(Prepared, load::Shares), Failed> {
    let text = load::read_program(args)?;
    let mut files = load::Files::new(args, cluster::cluster_split(args));
    let prepared = pipeline::prepare(text, options, &mut files, wanted)?;
    Ok((prepared, files.shares))
}

/// The load and compile stages over the files `args` name, reading every input.
fn compile(args: &RunArgs, options: &Options) -> Result<Session, Failed> {
    let (prepared, _) = prepare(args, options, Wanted { outputs: false, every_input: true })?;
    pipeline::compile(prepared, options)
}

/// The name a user types for a value of a `--flag` (`magic-ir`, `dot`).
pub(crate) fn value_name(value: impl clap::ValueEnum) -> String {
    value.to_possible_value().map_or_else(String::new, |v| v.get_name().to_string())
}

pub(crate) fn to_json_text(value: &Value) -> String {
    serde_json::to_string_pretty(value).expect("JSON values always serialise") + "\n"
}

fn emit_ast(args: &RunArgs, out: &mut dyn Write, err: &mut dyn Write, color: bool) -> i32 {
    let pipeline::ProgramText { mut sources, file } = match load::read_program(args) {
        Ok(x) => x,
        Err(failed) => return fail(err, failed, color),
    };
    let text = sources.text(file).to_string();
    let (ast, diagnostics) = match args.options().dialect_of(&text) {
        pipeline::Dialect::Dlc => syntax::parse(&text, file),
        pipeline::Dialect::Souffle => {
            // The tree after expansion: one rule per head and disjunct.
            syntax::souffle::parse(&text, file, &mut load::IncludeFiles::new(&mut sources))
        }
    };
    let _ = write!(out, "{ast}");
    print_diagnostics(err, &diagnostics, &sources, color);
    if diag::has_errors(&diagnostics) {
        EXIT_INPUT_ERROR
    } else {
        0
    }
}

/// `--emit answers` and `--emit trace`: evaluate (magic, original or both), then apply
/// the update batches incrementally.
fn evaluate_and_report(
    args: &RunArgs,
    options: &Options,
    session: &Session,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let timing = !args.no_timing;
    let trace = args.emit == Emit::Trace;
    let json = args.format == Format::Json;
    let source = &session.program;
    // Rewritten unless `--magic off`, which `--compare` conflicts with.
    let magic_program = session.magic.as_ref().map_or(source, |m| &m.program);
    let queried = session.query.atom.pred;
    let mode = options.magic;
    let progress = || progress::reporter(err_is_terminal());
    let evaluator = Evaluator { record_rounds: trace, ..Evaluator::new(options) };

    // `--compare` evaluates the rewrite (and the original below) and maintains the
    // rewrite; `--magic auto` chooses the program to evaluate and maintain.
    let evaluated = if args.compare {
        evaluator.evaluate(magic_program, &session.facts, progress()).map(|run| {
            let choice = match session.magic.as_ref().filter(|_| mode == MagicMode::Auto) {
                Some(magic) => pipeline::auto_choice(source, magic, Some(&|p| run.eval.db.len(p))),
                None => pipeline::Choice { magic: true, reason: "--magic on".into() },
            };
            (run, choice)
        })
    } else {
        evaluator.evaluate_chosen(source, session.magic.as_ref(), mode, &session.facts, &progress)
    };
    // The magic program's predicate table extends the source's: it names either's relations.
    let (main_run, choice) = match evaluated {
        Ok(evaluated) => evaluated,
        Err(e) => {
            // The original program's rules derive a source relation; the rewrite's the others.
            let derived_by_source = match &e {
                Error::Resource(e) => source.rules.iter().any(|r| r.head.pred == e.pred),
                _ => true,
            };
            let program = if derived_by_source { source } else { magic_program };
            return stopped(err, &session.sources, program, &e, args.color);
        }
    };
    // The program whose answers are reported (and maintained under updates).
    let (primary_name, primary) =
        if args.compare || choice.magic { ("magic", magic_program) } else { ("original", source) };
    let original_run = match args.compare.then(|| evaluator.evaluate(source, &session.facts, None)) {
        None => None,
        Some(Ok(run)) => Some(run),
        Some(Err(e)) => return stopped(err, &session.sources, source, &e, args.color),
    };

    let mut text = String::new();
    let mut doc = json!({});
    if trace {
        if json {
            doc = report::evaluation_json(primary, &main_run, timing);
            doc["program"] = json!(primary_name);
            doc["choice"] = choice_json(&choice);
            doc["engine"] = json!(format!("{:?}", args.engine).to_lowercase());
            if let Some(orig) = &original_run {
                doc["original"] = report::evaluation_json(source, orig, timing);
                doc["agree"] = json!(orig.answers() == main_run.answers());
            }
        } else {
            use std::fmt::Write as _;
            let _ = writeln!(text, "== {}", choice_line(&choice, args.compare));
            report::evaluation_text(&mut text, &format!("{primary_name} program"), primary, &main_run, timing);
            if let Some(orig) = &original_run {
                report::evaluation_text(&mut text, "original program", source, orig, timing);
                let agree = if orig.answers() == main_run.answers() { "yes" } else { "NO" };
                let _ = writeln!(text, "== answers agree: {agree}");
            }
        }
    } else if let Some(orig) = &original_run {
        if json {
            doc["magic"] = report::evaluation_json(magic_program, &main_run, timing);
            doc["original"] = report::evaluation_json(source, orig, timing);
            doc["agree"] = json!(orig.answers() == main_run.answers());
            doc["choice"] = choice_json(&choice);
        } else {
            report::compare_text(&mut text, magic_program, &main_run, source, orig, timing);
            use std::fmt::Write as _;
            let _ = writeln!(text, "{}", choice_line(&choice, true));
        }
    }

    // Incremental maintenance of the primary program over the batches.
    let mut exit = 0;
    let elapsed = main_run.elapsed;
    let last = if session.batches.is_empty() {
        Final::Evaluated(main_run)
    } else {
        // The evaluation just made is the maintained state's starting point.
        let how = Maintaining {
            whole: args.all,
            maintenance: options.maintenance,
            keep_record: trace || args.check,
            max_tuples: options.max_tuples,
        };
        let mut maintainer = match Maintainer::from_evaluation(primary.clone(), main_run, &session.facts, how) {
            Ok(maintainer) => maintainer,
            Err(e) => return stopped(err, &session.sources, primary, &e, args.color),
        };
        if args.full_report {
            maintainer.list_up_to = None;
        }
        let mut updates = Vec::new();
        for (i, batch) in session.batches.iter().enumerate() {
            let outcome = match maintainer.apply(&batch.update, trace || args.check, args.check) {
                Ok(outcome) => outcome,
                Err(e) => return stopped(err, &session.sources, primary, &e, args.color),
            };
            if json {
                updates.push(report::batch_json(primary, &session.query, i, batch, &outcome, timing, args.full_report));
            } else {
                report::batch_text(&mut text, primary, queried, i, batch, &outcome, timing, args.full_report);
            }
            if !outcome.mismatches.is_empty() {
                let names: Vec<String> = outcome.mismatches.iter().map(|p| primary.pred_name(*p)).collect();
                report::check_failed(err, i + 1, &names);
                exit = EXIT_CHECK_FAILED;
            }
        }
        if json {
            doc["updates"] = Value::Array(updates);
        }
        Final::Maintained(maintainer)
    };
    // Its answers are read straight from the relation by the writers below.
    let final_program = match &last {
        Final::Evaluated(_) => primary,
        Final::Maintained(m) => &m.program,
    };
    let final_answers = last.answers();
    // The caps as they are after the batches: an insertion can push a demand relation past
    // its cap, and the program chosen before is kept (maintained), which the summary says.
    let choice = match (&last, session.magic.as_ref()) {
        (Final::Maintained(m), Some(magic)) if choice.magic && mode == MagicMode::Auto && !args.compare => {
            let now = pipeline::auto_choice(source, magic, Some(&|p| m.state.len(p)));
            if now.magic {
                choice
            } else {
                let reason = now.reason.replace("--magic auto: ", "");
                pipeline::Choice {
                    magic: true,
                    reason: format!("{}; after the updates {reason}, and the magic program is kept", choice.reason),
                }
            }
        }
        _ => choice,
    };

    if json {
        if !trace && original_run.is_none() {
            doc["program"] = json!(primary_name);
            doc["choice"] = choice_json(&choice);
        }
        doc["answers"] = report::tuples_json(final_program, final_answers.pred(), final_answers.collect().iter());
        let _ = write!(out, "{}", to_json_text(&doc));
    } else {
        let _ = write!(out, "{text}");
        if !trace {
            let mut summary = match &args.output_dir {
                // As in Soufflé's outputs: `<Pred>.csv`, tab-separated, `-` for standard output.
                Some(dir) => {
                    let relations = match args.all {
                        true => derived_source_preds(final_program)
                            .into_iter()
                            .map(|p| (p, last.rows(p), "row(s)"))
                            .collect(),
                        false => vec![(queried, final_answers, "answer(s)")],
                    };
                    let mut written = Vec::new();
                    for (pred, rows, unit) in relations {
                        let target = if dir.as_path() == std::path::Path::new("-") {
                            outputs::Target::Stdout
                        } else {
                            outputs::Target::File(dir.join(format!("{}.csv", source.pred_name(pred))))
                        };
                        let header = pipeline::attributes_of(&session.attributes, pred)
                            .filter(|_| matches!(target, outputs::Target::Stdout))
                            .map(|names| names.join("\t"));
                        let style = outputs::Style::dlc(header);
                        match outputs::write_relation(&target, final_program, pred, rows, &style, out) {
                            Ok((_, count)) => written.push(format!("{} ({count} {unit})", target.describe())),
                            Err(e) => {
                                let report = outputs::unwritable(&target, &e, None);
                                print_diagnostics(err, &[report], &session.sources, use_color(args.color));
                                return EXIT_INPUT_ERROR;
                            }
                        }
                    }
                    format!("wrote {}", written.join(", "))
                }
                None => {
                    // One buffered writer for millions of lines: standard output flushes every line.
                    let mut buffered = std::io::BufWriter::with_capacity(1 << 16, &mut *out);
                    let count = report::write_answers(&mut buffered, final_program, queried, final_answers);
                    let _ = buffered.flush();
                    // A failed write is reported by `Output` when the run ends.
                    format!("{} answer(s)", count.unwrap_or_else(|_| final_answers.count()))
                }
            };
            let sizes = pipeline::relation_sizes(final_program, |p| last.len(p));
            let program = if args.compare { "magic program".to_string() } else { choice.text() };
            summary += &format!("; {program}: {}", report::sizes_text(primary, &sizes));
            if timing {
                summary += &format!("; evaluated in {}", report::duration_text(elapsed));
            }
            let _ = writeln!(err, "{summary}");
        }
    }
    exit
}

/// Where a run's relations ended: its evaluation, or where the update batches left it.
enum Final {
    Evaluated(pipeline::Evaluated),
    Maintained(Maintainer),
}

impl Final {
    /// The query's answers.
    fn answers(&self) -> pipeline::Selected<'_> {
        match self {
            Final::Evaluated(run) => run.selected(),
            Final::Maintained(m) => m.state.answers(&m.query),
        }
    }

    /// Every row of `pred`.
    fn rows(&self, pred: ir::PredId) -> pipeline::Selected<'_> {
        match self {
            Final::Evaluated(run) => pipeline::Selected::relation(&run.eval.db, pred),
            Final::Maintained(m) => m.state.rows(pred),
        }
    }

    /// The number of rows of `pred`.
    fn len(&self, pred: ir::PredId) -> usize {
        match self {
            Final::Evaluated(run) => run.eval.db.len(pred),
            Final::Maintained(m) => m.state.len(pred),
        }
    }
}

/// The line naming the program `--magic` chose, and why; with `--compare` (which
/// evaluates both), the one `--magic auto` would evaluate.
fn choice_line(choice: &pipeline::Choice, compare: bool) -> String {
    match compare {
        true => format!("--magic chooses: {}", choice.text()),
        false => format!("evaluated: {}", choice.text()),
    }
}

/// `{"program": "magic"|"original", "reason": "..."}`.
fn choice_json(choice: &pipeline::Choice) -> Value {
    json!({ "program": choice.name(), "reason": choice.reason })
}

/// Every derived relation of `program` named in the source (not `@a:`/`@m:` ones).
fn derived_source_preds(program: &ir::Program) -> Vec<ir::PredId> {
    pipeline::derived_preds(program)
        .into_iter()
        .filter(|&p| matches!(program.pred(p).name, ir::PredName::Source(_)))
        .collect()
}

/// Reports an evaluation or update that stopped: a relation of `program` outgrew
/// `--max-tuples` or the memory, or a cluster lost a peer. Nothing of it is printed,
/// since it is incomplete.
fn stopped(err: &mut dyn Write, sources: &SourceMap, program: &ir::Program, error: &Error, color: ColorArg) -> i32 {
    if let Error::Cluster(reason) = error {
        let _ = write!(err, "{}", cluster_stopped_text(reason));
        return EXIT_INPUT_ERROR;
    }
    print_diagnostics(err, &[error.to_diagnostic(program)], sources, use_color(color));
    let _ = writeln!(err, "dlc: evaluation stopped; no answers were printed");
    EXIT_INPUT_ERROR
}

/// What a process of a cluster that lost a peer prints before it ends.
pub fn cluster_stopped_text(reason: &str) -> String {
    let mut sources = SourceMap::new();
    sources.add("", "");
    let diagnostic = pipeline::cluster_stopped(reason);
    format!("{}dlc: the cluster stopped; no answers were printed\n", diag::render(&[diagnostic], &sources, false))
}

fn err_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}
