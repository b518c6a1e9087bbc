//! The dlc command line as a library: argument parsing, file IO and output formats over
//! the compiler crates. `main.rs` only hands it the process's streams, so the end-to-end
//! and snapshot tests run the very same code in-process.

mod answers;
pub mod cli;
mod cluster;
mod explain;
mod functors;
mod json;
mod load;
pub mod memory;
mod outputs;
mod progress;
mod repl;
mod report;
mod sqlite;

use clap::Parser;
use cli::{Cli, ColorArg, Command, Emit, Format, MagicArg, RunArgs};
use diag::{Diagnostic, SourceMap};
use pipeline::{Error, Failed, LoadedProgram, MagicMode, Options, Session, Wanted};
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
    let mut cli = match Cli::try_parse_from(args) {
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
    // Soufflé's `--show` names what dlc prints with `--emit`.
    let repl = cli.command.as_mut().map(|Command::Repl(args)| args);
    for args in std::iter::once(&mut cli.run).chain(repl) {
        if let Some(show) = args.show {
            args.emit = show;
        }
    }
    let args = match &cli.command {
        Some(Command::Repl(args)) => args,
        None => &cli.run,
    };
    if let Some(refusal) = args.souffle_only.refusal() {
        let _ = writeln!(err, "dlc: {refusal}");
        return EXIT_USAGE;
    }
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
        Emit::Ast | Emit::Trace | Emit::Answers => return answers::run(args, &options, &session, out, err),
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
fn prepare(args: &RunArgs, options: &Options, wanted: Wanted) -> Result<(LoadedProgram, load::Shares), Failed> {
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

pub(crate) fn to_json_text(value: &impl serde::Serialize) -> String {
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
            let macros = syntax::souffle::command_line_macros(&args.macros);
            let prelude = macros.map(|text| (sources.add(pipeline::COMMAND_LINE, text.as_str()), text));
            let prelude = prelude.as_ref().map(|(id, text)| (*id, text.as_str()));
            syntax::souffle::parse_with(
                &text,
                file,
                &mut load::IncludeFiles::new(&mut sources, &args.include_dir),
                prelude,
            )
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

/// Reports an evaluation or update that stopped: a relation of `program` outgrew
/// `--max-tuples`, the memory budget or the memory, or a cluster lost a peer. Nothing of it is printed,
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
