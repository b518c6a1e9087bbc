//! Running a Soufflé program without a query, as Soufflé does: compute every `.output`
//! and `.printsize` relation, write `<Rel>.csv` files (tab-separated) to the output
//! directory, and print sizes. Update batches maintain one evaluation of every wanted
//! relation, and the files hold the state after the last batch.
//!
//! One wanted relation whose rules call a derived relation with a constant (`q(y) :-
//! r(0, y).`) is computed through the magic rewrite of the all-free query on it, which
//! then demands only `r(0, _)` (`--magic` chooses between the rewrite and the original
//! program as it does for a query); otherwise (several wanted relations, or no such
//! selection) one evaluation of the whole program serves them all.

use crate::cli::{Emit, Format, RunArgs};
use ir::{Atom, PredId, PredKind, Program, Query, Term, TermKind, ValueType};
use pipeline::{
    Backend, Evaluator, InputFacts, LoadedProgram, MagicMode, Options, SelectedRows, SouffleIo, ValueOrder,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Why outputs mode cannot run with these flags, if it cannot.
pub fn unsupported_flags(args: &RunArgs) -> Option<String> {
    let needs_query =
        |what: &str| format!("{what} needs a query with a Soufflé program: pass one, e.g. `--query 'path(1, y)'`");
    if !matches!(args.emit, Emit::Answers | Emit::Ir | Emit::Plan | Emit::Ast) {
        return Some(needs_query(&format!("--emit {}", crate::value_name(args.emit))));
    }
    if args.emit == Emit::Answers && args.format != Format::Text {
        return Some(needs_query("--format json"));
    }
    if args.compare {
        return Some(needs_query("--compare"));
    }
    if args.all {
        return Some(needs_query("--all"));
    }
    None
}

/// The relations to compute: `.output` then `.printsize`, each once.
fn wanted(io: &SouffleIo) -> Vec<PredId> {
    let mut out = Vec::new();
    for d in io.outputs.iter().chain(&io.printsize) {
        if !out.contains(&d.pred) {
            out.push(d.pred);
        }
    }
    out
}

/// The all-free query `r(x0, ..., xn)` on `pred`.
pub(crate) fn all_free_query(program: &mut Program, pred: PredId) -> Query {
    let span = program.pred(pred).span;
    let args = (0..program.pred(pred).arity)
        .map(|i| Term { kind: TermKind::Var(program.symbols.intern(&format!("x{i}"))), span })
        .collect();
    Query::new(Atom { pred, args, span })
}

/// Whether the outputs are computed through the magic rewrite: one wanted relation, derived
/// by rules that select a constant in a call of a derived relation. Without such a
/// selection the rewrite narrows nothing and only adds work: on a non-linear closure its
/// all-free query makes the second call `path^bf`, which then holds the closure a second
/// time (twice the time of the plain evaluation).
fn uses_magic(options: &Options, program: &Program, wanted: &[PredId]) -> bool {
    options.magic != MagicMode::Off
        && wanted.len() == 1
        && program.pred(wanted[0]).kind == PredKind::Idb
        && selects_a_constant(program, wanted[0])
}

/// Whether a rule that `pred` depends on calls a derived relation with a constant argument.
fn selects_a_constant(program: &Program, pred: PredId) -> bool {
    let mut seen = vec![false; program.preds.len()];
    let mut worklist = vec![pred];
    seen[pred.index()] = true;
    while let Some(p) = worklist.pop() {
        for (_, rule) in program.rules_for(p) {
            for atom in rule.body.iter().filter(|a| program.pred(a.pred).kind == PredKind::Idb) {
                if atom.args.iter().any(|t| t.constant().is_some()) {
                    return true;
                }
                if !std::mem::replace(&mut seen[atom.pred.index()], true) {
                    worklist.push(atom.pred);
                }
            }
        }
    }
    false
}

/// `--emit ir` / `--emit plan` of the program outputs mode evaluates.
pub fn emit(
    args: &RunArgs,
    options: &Options,
    prepared: &LoadedProgram,
    io: &SouffleIo,
) -> Result<String, diag::Diagnostic> {
    let wanted = wanted(io);
    let mut program = prepared.program.clone();
    let program = if uses_magic(options, &program, &wanted) {
        let query = all_free_query(&mut program, wanted[0]);
        program.query = Some(query.clone());
        if args.emit == Emit::Ir {
            return Ok(program.to_string());
        }
        let mode = options.magic;
        let magic = pipeline::rewrite_for_mode(&program, &query, mode, options.max_adornments)
            .map_err(|e| e.to_diagnostic(&program))?;
        // What `--magic auto` starts from, as `--emit plan` of a query shows it: the
        // original program when the rewrite narrows nothing or is too large.
        match magic {
            Some(magic) if mode != MagicMode::Auto || pipeline::auto_choice(&program, &magic, None).magic => {
                magic.program
            }
            _ => program,
        }
    } else {
        program
    };
    let json = args.format == Format::Json;
    Ok(match args.emit {
        Emit::Ir if json => crate::to_json_text(&crate::report::program_json(&program)),
        Emit::Ir => program.to_string(),
        _ => {
            let plan = plan::plan_program(&program);
            if json {
                crate::to_json_text(&plan.to_json(&program))
            } else {
                plan.display(&program).to_string()
            }
        }
    })
}

/// Evaluates and writes every output; returns the exit status. `facts` are the input
/// facts taken out of `prepared`, freed as soon as the evaluation no longer needs them.
pub fn run(
    args: &RunArgs,
    options: &Options,
    prepared: &LoadedProgram,
    facts: InputFacts,
    io: &SouffleIo,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let start = Instant::now();
    let engine = &options.engine;
    let wanted = wanted(io);
    // Update batches maintain the original program's evaluation of every wanted relation.
    let maintaining = !prepared.batches.is_empty() || args.check;
    // The evaluated program and its relations; the wanted relations are read from them.
    let (name, evaluated, mut relations, magic) = if !maintaining && uses_magic(options, &prepared.program, &wanted) {
        let mut program = prepared.program.clone();
        let query = all_free_query(&mut program, wanted[0]);
        program.query = Some(query.clone());
        let mode = options.magic;
        // As for a query: `auto` evaluates the rewrite with subsumption, or the original
        // program when its demand passes the caps; `on` the exact rewrite.
        let rewritten = match pipeline::rewrite_for_mode(&program, &query, mode, options.max_adornments) {
            Ok(magic) => magic,
            Err(limit) => {
                let color = crate::use_color(args.color);
                crate::print_diagnostics(err, &[limit.to_diagnostic(&program)], &prepared.sources, color);
                return crate::EXIT_INPUT_ERROR;
            }
        };
        let widest = rewritten.as_ref().map_or(&program, |m| &m.program);
        if let Some(d) = engine.unsupported(widest) {
            crate::print_diagnostics(err, &[d], &prepared.sources, crate::use_color(args.color));
            return crate::EXIT_INPUT_ERROR;
        }
        let chosen =
            Evaluator::new(options).whole(false).evaluate_chosen(&program, rewritten.as_ref(), mode, &facts, &|| None);
        match chosen {
            Ok((run, choice)) if choice.magic => {
                (choice.text(), widest.clone(), Relations::Evaluated(run.eval.db), true)
            }
            Ok((run, choice)) => (choice.text(), prepared.program.clone(), Relations::Evaluated(run.eval.db), false),
            Err(e) => return crate::stopped(err, &prepared.sources, widest, &e, args.color),
        }
    } else {
        let program = &prepared.program;
        // Only what the outputs and `.printsize` read is computed, as Soufflé does.
        let mut plan = plan::plan_program(program);
        plan.restrict_to(program, &wanted);
        let mut edb = pipeline::edb_database(program, &facts, options.limits);
        drop(facts);
        if !maintaining {
            // Read through rows and indexes only, and written out at most.
            edb.release_unprobed_input_sets(&plan, program);
            edb.release_unprobed_sets_once_derived(&plan, program);
        }
        let (eval, live) = match engine.evaluate(&plan, program, edb, false, None, options.threads) {
            Ok(evaluated) => evaluated,
            Err(e) => return crate::stopped(err, &prepared.sources, program, &e, args.color),
        };
        let relations = if maintaining {
            match pipeline::maintain(plan.clone(), program, eval, live, options.maintenance) {
                Ok(kept) => Relations::Maintained(kept),
                Err(e) => return crate::stopped(err, &prepared.sources, program, &e, args.color),
            }
        } else {
            Relations::Evaluated(eval.db)
        };
        ("original program".to_string(), program.clone(), relations, false)
    };
    let elapsed = start.elapsed();
    let mut exit = 0;
    if let Relations::Maintained(state) = &mut relations {
        match maintain(args, options, prepared, &wanted, &mut **state, out, err) {
            Ok(status) => exit = status,
            Err(status) => return status,
        }
    }
    // The relations computed: those the outputs read (an empty one that no output
    // reads was not evaluated).
    let needed = plan::needed_preds(&evaluated, &wanted);
    // In a cluster whose results are partitioned, this process holds its part of each
    // relation; the sizes over all processes were added up as it was evaluated.
    let gathered = engine.gathered_sizes();
    let len = |p: PredId| match (&gathered, &relations) {
        (Some(sizes), _) => sizes.get(p.index()).copied().unwrap_or(0),
        (None, Relations::Evaluated(db)) => db.len(p),
        (None, Relations::Maintained(state)) => state.len(p),
    };
    let mut sizes = pipeline::relation_sizes(&evaluated, len);
    sizes.retain(|&(p, len)| len > 0 || needed.get(p.index()).copied().unwrap_or(false));
    let program = &prepared.program;
    // The rows of a wanted relation: the magic program's answers to the all-free query
    // on it, or the relation itself.
    let rows_of = |pred: PredId| -> SelectedRows<'_> {
        match (&relations, evaluated.query.as_ref().filter(|_| magic)) {
            (Relations::Maintained(state), _) => state.rows(pred),
            (Relations::Evaluated(db), Some(query)) => SelectedRows::of_query(db, query),
            (Relations::Evaluated(db), None) => SelectedRows::relation(db, pred),
        }
    };
    // The number of rows of a wanted relation: the magic program's all-free query on it
    // selects every row of the query's relation.
    let count_of = |pred: PredId| match evaluated.query.as_ref().filter(|_| magic) {
        Some(query) if gathered.is_some() => len(query.atom.pred),
        None if gathered.is_some() => len(pred),
        _ => rows_of(pred).count(),
    };
    let part = gathered.as_ref().map(|_| (args.dataflow.process.unwrap_or(0), args.dataflow.processes()));

    let dir = args.output_dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let to_stdout = dir == Path::new("-");
    let mut written = Vec::new();
    // By relation name, the order in which Soufflé writes them.
    let mut wanted: Vec<&syntax::souffle::Io> = io.outputs.iter().collect();
    wanted.sort_by_key(|output| program.pred_name(output.pred));
    for output in wanted {
        let rel = program.pred_name(output.pred);
        let rows = rows_of(output.pred);
        // `-D -` prints every output, a database's too, as Soufflé does.
        if output.sqlite && !to_stdout {
            // A URI or the in-memory database names no file to write a part to.
            let path = crate::sqlite::database_path(output, &dir, &rel);
            let path = match crate::sqlite::is_uri(&path) {
                true => path,
                false => part_path(path, part),
            };
            let names = pipeline::attributes_of(&io.attributes, output.pred);
            match crate::sqlite::write_relation(&path, &evaluated, output.pred, rows, names) {
                Ok(count) => written.push(format!("{} ({count} row(s))", path.display())),
                Err(why) => {
                    let report = crate::sqlite::unwritable(&path, &why, output.span);
                    crate::print_diagnostics(err, &[report], &prepared.sources, crate::use_color(args.color));
                    return crate::EXIT_INPUT_ERROR;
                }
            }
            continue;
        }
        let target = if to_stdout || output.stdout {
            Target::Stdout
        } else {
            // Soufflé names a compressed file `<Rel>.csv.gz`, unless `filename` names it.
            let default = match output.json {
                Some(_) => format!("{rel}.json"),
                None if output.compress => format!("{rel}.csv.gz"),
                None => format!("{rel}.csv"),
            };
            Target::File(part_path(dir.join(output.filename.clone().unwrap_or(default)), part))
        };
        // Soufflé prints the attribute names with `-D -` (not for `IO=stdout`; for
        // `IO=json`, which `-D -` prints as any other output, too), and writes them first
        // wherever `headers=true` asks.
        let plain_stdout = output.stdout && output.json.is_none();
        let header = (output.format.headers || (to_stdout && !plain_stdout)).then(|| header_line(io, output));
        let style = Style {
            quoting: Quoting::Souffle { rfc4180: output.format.rfc4180, delimiter: output.delimiter.clone() },
            header,
            compress: output.compress,
            // `-D -` prints a JSON output as any other, as Soufflé does.
            json: output.json.filter(|_| !to_stdout).map(|layout| (layout, output.attributes.clone())),
        };
        match write_relation(&target, &evaluated, output.pred, rows, &style, out) {
            Ok((Some(path), count)) => written.push(format!("{} ({count} row(s))", path.display())),
            Ok((None, _)) => {}
            Err(e) => {
                let report = unwritable(&target, &e, Some(output.span));
                crate::print_diagnostics(err, &[report], &prepared.sources, crate::use_color(args.color));
                return crate::EXIT_INPUT_ERROR;
            }
        }
    }
    for size in &io.printsize {
        let _ = writeln!(out, "{}\t{}", program.pred_name(size.pred), count_of(size.pred));
    }
    let mut summary = match written.len() {
        0 => "no output files".to_string(),
        _ => format!("wrote {}", written.join(", ")),
    };
    summary += &format!("; {name}: {}", crate::report::sizes_text(&evaluated, &sizes));
    if !args.no_timing {
        summary += &format!("; evaluated in {}", crate::report::duration_text(elapsed));
    }
    let _ = writeln!(err, "{summary}");
    exit
}

/// The name of the file at `path` that process `part.0` of `part.1` writes when each
/// writes its part of a relation: `R.csv` becomes `R.part-1-of-2.csv` for process 0 of
/// 2 (the part before the extension, and before a `.gz` after it), and a name without
/// an extension `R.part-1-of-2`. Reading a directory back with `-F` reads the parts of
/// a relation together ([`crate::load::strip_part`]).
fn part_path(path: PathBuf, part: Option<(usize, usize)>) -> PathBuf {
    let Some((process, processes)) = part else { return path };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (stem, extension, gz) = crate::load::split_file_name(&name);
    path.with_file_name(format!("{stem}{}{extension}{gz}", crate::load::part_suffix(process, processes)))
}

/// Where the wanted relations are read: the evaluation, or the state the update batches
/// maintain.
enum Relations {
    Evaluated(exec::Database),
    Maintained(Box<dyn Backend>),
}

/// The header line of a Soufflé `.output`: its `attributeNames` parameter, or its
/// relation's declared attribute names joined as Soufflé joins them.
fn header_line(io: &SouffleIo, output: &syntax::souffle::Io) -> String {
    output.attribute_names.clone().unwrap_or_else(|| {
        let names = pipeline::attributes_of(&io.attributes, output.pred).unwrap_or_default();
        names.join(&output.names_delimiter)
    })
}

/// Applies the update batches to `state`, the evaluation of every wanted relation, and
/// reports each on `out`: how it was maintained, what each phase touched, and the net
/// change of each `.output` relation. With `--check`, every computed relation is compared
/// after each batch with an evaluation from scratch. Returns the exit status, or the one
/// to stop with.
fn maintain(
    args: &RunArgs,
    options: &Options,
    prepared: &LoadedProgram,
    wanted: &[PredId],
    state: &mut dyn Backend,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, i32> {
    let program = &prepared.program;
    let mut plan = plan::plan_program(program);
    plan.restrict_to(program, wanted);
    let needed = plan::needed_preds(program, wanted);
    let mut exit = 0;
    for (i, batch) in prepared.batches.iter().enumerate() {
        let start = Instant::now();
        // The outputs' report prints counts alone: no fact is listed, and the net change
        // is its size (a recomputed batch then need not keep the old state beside the new).
        let change = match state.apply(&batch.update, pipeline::Listing { up_to: Some(0), net: false }) {
            Ok(change) => change,
            Err(e) => return Err(crate::stopped(err, &prepared.sources, program, &e, args.color)),
        };
        let elapsed = start.elapsed();
        let _ = write!(out, "{}", crate::report::outputs_batch_text(program, i, batch, &change, wanted));
        if !args.no_timing {
            let _ = writeln!(out, "  time: {}", crate::report::duration_text(elapsed));
        }
        if args.check {
            let facts = pipeline::maintained_inputs(program, state);
            let compared = |p: PredId| needed.get(p.index()).copied().unwrap_or(false);
            let fresh = match pipeline::recompute(program, &plan, &facts, state, options.limits, Some(&compared)) {
                Ok(fresh) => fresh,
                Err(e) => return Err(crate::stopped(err, &prepared.sources, program, &e, args.color)),
            };
            if !fresh.differing.is_empty() {
                let differ: Vec<String> = fresh.differing.iter().map(|&p| program.pred_name(p)).collect();
                crate::report::check_failed(err, i + 1, &differ);
                exit = crate::EXIT_CHECK_FAILED;
            }
        }
    }
    Ok(exit)
}

/// Where [`write_relation`] writes one relation.
pub enum Target {
    /// Standard output, framed by the relation's name as Soufflé prints it.
    Stdout,
    File(PathBuf),
}

impl Target {
    pub fn describe(&self) -> String {
        match self {
            Target::Stdout => "-".to_string(),
            Target::File(path) => path.display().to_string(),
        }
    }
}

/// The report of an output file that cannot be written: `-D` naming something that is
/// not a directory, a file name the file system refuses (too long), or a file or
/// directory dlc may not write; `directive` is the Soufflé `.output` asking for it.
pub fn unwritable(target: &Target, error: &std::io::Error, directive: Option<diag::Span>) -> diag::Diagnostic {
    let path = target.describe();
    let not_a_directory = match target {
        Target::File(file) => file.ancestors().skip(1).find(|a| a.exists()).filter(|a| !a.is_dir()),
        Target::Stdout => None,
    };
    let (message, help) = match not_a_directory {
        Some(file) => (
            format!("cannot write `{path}`: `{}` is not a directory", file.display()),
            "-D names the directory the `.csv` files go to (created if missing); `-D -` prints them instead"
                .to_string(),
        ),
        None if error.kind() == std::io::ErrorKind::InvalidFilename => (
            format!("cannot write `{path}`: the file name is longer than the file system allows"),
            match directive {
                Some(_) => "give the relation a shorter file name with `.output rel(filename=\"...\")`".to_string(),
                None => "the file is named after the relation: rename it, or print it with `-D -`".to_string(),
            },
        ),
        None => (
            format!("cannot write `{path}`: {error}"),
            match directive {
                Some(_) => "check the `filename` path, its directory and their permissions".to_string(),
                None => diag::Code::UNWRITABLE_OUTPUT.help().to_string(),
            },
        ),
    };
    let d = diag::Diagnostic::error(diag::Code::UNWRITABLE_OUTPUT, message).with_help(help);
    match directive {
        Some(span) => d.with_secondary(span, "this `.output` writes it"),
        None => d,
    }
}

/// How [`write_relation`] writes a relation.
#[derive(Clone, Debug)]
pub struct Style {
    /// What separates the fields of a line, and how symbols are written.
    pub quoting: Quoting,
    /// A line written before the rows (the attribute names): in a file after
    /// `headers=true`, on standard output inside the frame, as Soufflé prints it.
    pub header: Option<String>,
    /// A file is written gzip-compressed (a Soufflé `.output` with `compress`).
    pub compress: bool,
    /// `IO=json` or `IO=jsonfile` of a Soufflé `.output`: the rows are written as JSON
    /// laid out so, keyed by these attribute names (see [`crate::json`]), without a
    /// header or, on standard output, the frame.
    pub json: Option<(syntax::souffle::JsonLayout, Vec<String>)>,
}

impl Style {
    /// dlc's own `-D` files: tab-separated, quoted where a value would not read back.
    pub fn dlc(header: Option<String>) -> Self {
        Style { quoting: Quoting::Dlc, header, compress: false, json: None }
    }
}

/// How [`write_csv`] separates fields and writes symbols.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Quoting {
    /// dlc's own files: tab-separated, a symbol in double quotes where it would not read
    /// back as itself through dlc's delimited reader (see [`syntax::quote_field`]).
    Dlc,
    /// As Soufflé 2.5 writes them: fields separated by `delimiter` (any text), symbols
    /// as they are, or all in quotes under `rfc4180=true` (see [`syntax::souffle_field`]).
    Souffle { rfc4180: bool, delimiter: String },
}

impl Quoting {
    /// What separates the fields of a line.
    pub fn delimiter(&self) -> &str {
        match self {
            Quoting::Dlc => "\t",
            Quoting::Souffle { delimiter, .. } => delimiter,
        }
    }
}

/// Writes the rows of `pred` to `target` as delimited lines (see
/// [`write_csv`]), streamed through a buffer, after `style.header` if any; returns the
/// file written, if any, and the number of rows. On standard output the rows are framed
/// by the relation's name, as Soufflé prints them with `-D -`.
pub fn write_relation(
    target: &Target,
    program: &Program,
    pred: PredId,
    rows: SelectedRows<'_>,
    style: &Style,
    out: &mut dyn Write,
) -> std::io::Result<(Option<PathBuf>, usize)> {
    match target {
        Target::Stdout if style.json.is_some() => Ok((None, write_file_rows(out, program, rows, style)?)),
        Target::Stdout => {
            let rel = program.pred_name(pred);
            let mut buffered = std::io::BufWriter::with_capacity(1 << 16, out);
            write!(buffered, "---------------\n{rel}\n")?;
            if let Some(header) = &style.header {
                writeln!(buffered, "{header}")?;
            }
            writeln!(buffered, "===============")?;
            let count = write_csv(&mut buffered, program, rows, &style.quoting)?;
            writeln!(buffered, "===============")?;
            buffered.flush()?;
            Ok((None, count))
        }
        Target::File(path) => {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            // Written under a temporary name and renamed when complete, so that a run
            // that stops (an error, a lost cluster peer, a kill) leaves no half-written
            // file under the relation's name, and a reader never sees one.
            let partial = partial_name(path);
            let written = (|| -> std::io::Result<usize> {
                let file = std::fs::File::create(&partial)?;
                let count = if style.compress {
                    let mut gzip = flate2::write::GzEncoder::new(file, flate2::Compression::default());
                    let count = write_file_rows(&mut gzip, program, rows, style)?;
                    gzip.finish()?;
                    count
                } else {
                    write_file_rows(file, program, rows, style)?
                };
                std::fs::rename(&partial, path)?;
                Ok(count)
            })();
            if written.is_err() {
                let _ = std::fs::remove_file(&partial);
            }
            Ok((Some(path.clone()), written?))
        }
    }
}

/// The header and rows of a file (or the JSON of its relation), through a buffer flushed
/// at the end.
fn write_file_rows(
    file: impl Write,
    program: &Program,
    rows: SelectedRows<'_>,
    style: &Style,
) -> std::io::Result<usize> {
    if let Some((layout, attributes)) = &style.json {
        let mut file = file;
        return crate::json::write_relation(&mut file, program, rows, *layout, attributes);
    }
    let mut buffered = std::io::BufWriter::with_capacity(1 << 16, file);
    if let Some(header) = &style.header {
        writeln!(buffered, "{header}")?;
    }
    let count = write_csv(&mut buffered, program, rows, &style.quoting)?;
    buffered.flush()?;
    Ok(count)
}

/// Where the file `path` is written before it is complete: a hidden name beside it
/// (the same directory, so that the rename is atomic), unique to this process.
fn partial_name(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.partial", std::process::id()))
}

/// The order of answers, in `-D` files and on standard output alike: field by field,
/// a number column's values numerically, a symbol column's numbers numerically (as
/// Soufflé orders a number column) before other values by their text; and the symbols it
/// ranks, ascending by id.
pub fn value_order(program: &Program, rows: SelectedRows<'_>) -> (Vec<ValueOrder>, Vec<u32>) {
    let arity = rows.arity();
    let types: Vec<ValueType> = (0..arity).map(|i| program.column_type(rows.pred(), i)).collect();
    let symbol_columns: Vec<usize> = (0..arity).filter(|&i| types[i] == ValueType::Symbol).collect();
    let texts = program.consts.texts();
    let text = |v: u32| texts.text(ir::Const(v));
    // The symbols to rank: every constant of the program when there are no more of them
    // than tuples in the relation and they are all numbers or all not (the order is then
    // total, so ranking more values orders the rows' values the same); otherwise the
    // distinct symbols of the rows, found in a pass over them with a bit per constant.
    let all = program.consts.len();
    let mut values: Vec<u32> = Vec::new();
    let mut numbers: Vec<Option<i64>> = Vec::new();
    if !symbol_columns.is_empty() && all <= rows.relation_len() {
        values = (0..all as u32).collect();
        numbers = values.iter().map(|&v| text(v).parse().ok()).collect();
        let numeric = numbers.iter().filter(|n| n.is_some()).count();
        if numeric != 0 && numeric != all {
            values.clear();
            numbers.clear();
        }
    }
    if values.is_empty() && !symbol_columns.is_empty() {
        let mut seen = vec![0u64; all.div_ceil(64)];
        let _ = rows.for_each(|t| {
            for &i in &symbol_columns {
                let v = t[i];
                let (word, bit) = (v as usize / 64, v % 64);
                if word >= seen.len() {
                    seen.resize(word + 1, 0);
                }
                seen[word] |= 1 << bit;
            }
            Ok::<(), std::convert::Infallible>(())
        });
        values = (0..seen.len() as u32 * 64).filter(|&v| seen[v as usize / 64] & (1 << (v % 64)) != 0).collect();
        numbers = values.iter().map(|&v| text(v).parse().ok()).collect();
    }
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&i, &j| {
        let by_number = match (numbers[i], numbers[j]) {
            (Some(m), Some(n)) => m.cmp(&n),
            _ => std::cmp::Ordering::Equal,
        };
        by_number.then_with(|| text(values[i]).cmp(text(values[j])))
    });
    let ranked: Vec<u32> = order.into_iter().map(|i| values[i]).collect();
    let mut orders: Vec<ValueOrder> = types
        .iter()
        .enumerate()
        .map(|(i, &t)| match t {
            ValueType::Symbol => ValueOrder::ranked(ranked.clone()),
            ValueType::Number => ValueOrder::Signed,
            ValueType::Unsigned => ValueOrder::Ids,
            ValueType::Float => ValueOrder::Float,
            ValueType::Record(_) => ValueOrder::ranked(record_order(program, rows, i, t)),
        })
        .collect();
    if orders.is_empty() {
        // A nullary relation has no column to order.
        orders.push(ValueOrder::Ids);
    }
    (orders, values)
}

/// The distinct records of column `column` (of record type `ty`) of `rows`, in the
/// order of their texts' structure ([`ir::ValueStore::compare_records`]).
fn record_order(program: &Program, rows: SelectedRows<'_>, column: usize, ty: ValueType) -> Vec<u32> {
    let mut records: Vec<u32> = Vec::new();
    let _ = rows.for_each(|t| {
        records.push(t[column]);
        Ok::<(), std::convert::Infallible>(())
    });
    records.sort_unstable();
    records.dedup();
    program.consts.sort_records(ty, &mut records);
    records
}

/// Appends the text of value `v` of a column of type `ty` to `out`: a symbol's from
/// `symbols` (made once per symbol), a number's written as it comes, a record's as
/// Soufflé writes it (`[1, [2, nil]]`; quoted under `rfc4180`, see
/// [`syntax::souffle_record_field`]).
pub fn push_field(
    out: &mut Vec<u8>,
    ty: ValueType,
    v: u32,
    symbols: &[std::borrow::Cow<'_, str>],
    store: &ir::ValueStore,
    rfc4180: bool,
) {
    use std::io::Write as _;
    let _ = match ty {
        ValueType::Symbol => out.write_all(symbols[v as usize].as_bytes()),
        ValueType::Number => write!(out, "{}", v as i32),
        ValueType::Unsigned => write!(out, "{v}"),
        ValueType::Float => out.write_all(ir::float_text(f32::from_bits(v)).as_bytes()),
        ValueType::Record(_) => out.write_all(syntax::souffle_record_field(store, ty, v, rfc4180).as_bytes()),
    };
}

/// The rows as lines of fields separated by `quoting`'s delimiter, sorted field by field (numbers
/// numerically, as Soufflé orders a number column), a nullary tuple as `()`, symbols
/// written as `quoting` says; returns the
/// number of rows. The rows are read in that order straight from the relation: the
/// values are ranked once, and each group of the relation is sorted by rank as it is
/// written.
pub fn write_csv(
    out: &mut dyn Write,
    program: &Program,
    rows: SelectedRows<'_>,
    quoting: &Quoting,
) -> std::io::Result<usize> {
    let texts = program.consts.texts();
    let text = |v: u32| texts.text(ir::Const(v));
    let (order, values) = value_order(program, rows);
    // The fields of the symbols by id, made once each: quoted as `quoting` says. Numbers
    // are written as they come.
    let arity = rows.arity();
    let types: Vec<ValueType> = (0..arity).map(|i| program.column_type(rows.pred(), i)).collect();
    let only_field = arity == 1;
    let mut texts: Vec<std::borrow::Cow<'_, str>> = vec!["".into(); values.last().map_or(0, |&v| v as usize + 1)];
    for &v in &values {
        texts[v as usize] = match quoting {
            Quoting::Dlc => syntax::quote_field(text(v), '\t', only_field),
            Quoting::Souffle { rfc4180, .. } => syntax::souffle_field(text(v), *rfc4180),
        };
    }
    let rfc4180 = matches!(quoting, Quoting::Souffle { rfc4180: true, .. });
    let mut last_field = Vec::new();
    let separator = quoting.delimiter();
    let mut lines = crate::report::Chunked::new(out);
    let mut count = 0;
    // The rows of a group share their prefix, whose text is made once per group. The
    // prefixes are compared value by value: the slices' `!=` is a call to `memcmp` per
    // row, which costs as much as writing the row.
    let (mut prefix, mut prefix_text) = (None::<Vec<u32>>, Vec::new());
    let same = |a: &[u32], b: &[u32]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y);
    rows.for_each_sorted(&order, |row| {
        count += 1;
        let Some((&last, row_prefix)) = row.split_last() else { return lines.push(b"()\n") };
        if !prefix.as_deref().is_some_and(|p| same(p, row_prefix)) {
            prefix_text.clear();
            for (i, &v) in row_prefix.iter().enumerate() {
                push_field(&mut prefix_text, types[i], v, &texts, &program.consts, rfc4180);
                prefix_text.extend_from_slice(separator.as_bytes());
            }
            let prefix = prefix.get_or_insert_with(Vec::new);
            prefix.clear();
            prefix.extend_from_slice(row_prefix);
        }
        last_field.clear();
        push_field(&mut last_field, types[arity - 1], last, &texts, &program.consts, rfc4180);
        lines.push_line(&prefix_text, &last_field)
    })?;
    lines.flush()?;
    Ok(count)
}
