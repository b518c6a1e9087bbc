//! The compilation pipeline as the command line drives it: parse, load facts and
//! updates, rewrite with magic sets, plan, evaluate, maintain.

use crate::cli::{DialectArg, Emit, EngineArg, MagicArg, MaintenanceArg, RunArgs};
use crate::engines::{Engine, Live, Materialized};
use crate::facts::InputFacts;
use crate::load;
use diag::{Code, Diagnostic, SourceMap};
use exec::{Database, Evaluation, Maintenance, ResourceError, Threads, Update};
use ir::{Fact, PredId, Program};
use magic::MagicProgram;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use syntax::Sign;

/// An input tuple of one predicate, as exec stores it.
pub type Tuple = (PredId, Vec<u32>);

/// One batch of EDB changes, with the text the user wrote for each change.
pub struct Batch {
    pub changes: Vec<String>,
    pub update: Update,
}

/// Everything compiled from the command line's inputs.
pub struct Session {
    pub sources: SourceMap,
    /// The source program (with its query, and every EDB predicate any input mentions).
    pub program: Program,
    /// The magic-sets rewrite of `program` for its query: SPEC's exact rewrite for
    /// `--magic on` and where the output shows the rewrite (`--emit magic-ir`,
    /// `--emit adorned`), the rewrite with adornment subsumption for `--magic auto`; not
    /// made for `--magic off` unless the output shows it (see [`Session::magic`]).
    pub magic: Option<MagicProgram>,
    /// All input facts: inline in the program and from `--facts`.
    pub facts: InputFacts,
    pub batches: Vec<Batch>,
    /// Warnings to show even when compilation succeeds.
    pub warnings: Vec<Diagnostic>,
    /// Whether the program is a Soufflé program (queries are read in its syntax).
    pub souffle: bool,
    /// A Soufflé program's attribute names of every declared relation (`-D -` prints them).
    pub attributes: Vec<(PredId, Vec<String>)>,
}

impl Session {
    /// The magic rewrite, which [`compile`] makes unless `--magic off` asks for the
    /// original program only and the output does not show the rewrite.
    pub fn magic(&self) -> &MagicProgram {
        self.magic.as_ref().expect("compile rewrites the program whenever the output needs it")
    }
}

/// The outcome of a failed compilation: every diagnostic, errors and warnings.
pub struct Failed {
    pub sources: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
}

/// A fact as exec stores it.
pub fn tuple_of(fact: &Fact) -> Tuple {
    (fact.pred, fact.values.clone())
}

/// Reads the program given on the command line into a fresh source map.
pub fn read_program(args: &RunArgs) -> Result<(SourceMap, ir::FileId), Failed> {
    let mut sources = SourceMap::new();
    let Some(path) = &args.program else {
        let d = Diagnostic::error(Code::UNREADABLE_FILE, "no program file given")
            .with_help("pass the program as the last argument: `dlc prog.dl`; see `dlc --help`");
        return Err(Failed { sources, diagnostics: vec![d] });
    };
    if let Some(text) = &args.program_text {
        let file = sources.add(load::STDIN_NAME, text.as_str());
        return Ok((sources, file));
    }
    match load::read_source(path, &mut sources) {
        Ok(file) => Ok((sources, file)),
        Err(d) => Err(Failed { sources, diagnostics: vec![d] }),
    }
}

/// Runs the front end, loads facts and updates, and rewrites the program.
pub fn compile(args: &RunArgs) -> Result<Session, Failed> {
    finish(prepare(args, false, true)?, args)
}

/// Which language a program is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Dlc,
    Souffle,
}

/// The dialect `--dialect` names, or (`auto`) the one the text looks like.
pub fn dialect(args: &RunArgs, text: &str) -> Dialect {
    match args.dialect {
        DialectArg::Dlc => Dialect::Dlc,
        DialectArg::Souffle => Dialect::Souffle,
        DialectArg::Auto if syntax::souffle::looks_like_souffle(text) => Dialect::Souffle,
        DialectArg::Auto => Dialect::Dlc,
    }
}

/// The I/O directives of a Soufflé program.
pub struct SouffleIo {
    pub inputs: Vec<syntax::souffle::Io>,
    pub outputs: Vec<syntax::souffle::Io>,
    pub printsize: Vec<syntax::souffle::Io>,
    /// The attribute names of every declared relation.
    pub attributes: Vec<(PredId, Vec<String>)>,
}

/// The attribute names of `pred` in a Soufflé program's `attributes`.
pub fn attributes_of(attributes: &[(PredId, Vec<String>)], pred: PredId) -> Option<&[String]> {
    attributes.iter().find(|(p, _)| *p == pred).map(|(_, names)| names.as_slice())
}

/// A program read and lowered, with its inputs loaded, before any rewrite.
pub struct Prepared {
    pub sources: SourceMap,
    /// The program file.
    pub file: ir::FileId,
    pub program: Program,
    pub facts: InputFacts,
    pub batches: Vec<Batch>,
    pub warnings: Vec<Diagnostic>,
    /// For a Soufflé program, its `.input`/`.output`/`.printsize` directives.
    pub souffle: Option<SouffleIo>,
    /// What this process read of each facts file (in a cluster, its shares).
    pub shares: load::Shares,
    /// How many values the program itself interned: those after them came from the
    /// input (facts files and updates).
    pub program_values: usize,
}

/// Reads the program in its dialect and its query (none needed for a Soufflé program
/// when `outputs_mode`: its `.output` relations are computed instead), and loads facts
/// and updates. Facts are read only when the run evaluates (`--emit answers` or
/// `trace`): the other `--emit` forms show the program, which no facts file changes.
/// Of a Soufflé program's `.input` relations, only those the computed relations depend
/// on are read (as Soufflé reads them), unless `every_input` asks for all (the repl and
/// explanations, which may ask about any relation).
pub fn prepare(args: &RunArgs, outputs_mode: bool, every_input: bool) -> Result<Prepared, Failed> {
    let (mut sources, file) = read_program(args)?;
    let text = sources.text(file).to_string();
    let dialect = dialect(args, &text);
    let (program, mut diagnostics, souffle) = match dialect {
        Dialect::Dlc => {
            let (program, diagnostics) = syntax::parse_program(&text, file);
            (program, diagnostics, None)
        }
        Dialect::Souffle => {
            let mut includes = load::IncludeFiles::new(&mut sources);
            let queried = args.query.as_deref().and_then(syntax::souffle::query_relation);
            let (parsed, diagnostics) = syntax::souffle::parse_program_for_query(&text, file, &mut includes, queried);
            match parsed {
                Some(s) => {
                    let io = SouffleIo {
                        inputs: s.inputs,
                        outputs: s.outputs,
                        printsize: s.printsize,
                        attributes: s.attributes,
                    };
                    (Some(s.program), diagnostics, Some(io))
                }
                None => (None, diagnostics, None),
            }
        }
    };
    let Some(mut program) = program.filter(|_| !diag::has_errors(&diagnostics)) else {
        return Err(Failed { sources, diagnostics: in_dialect(diagnostics, dialect) });
    };

    if let Some(query) = &args.query {
        let qfile = sources.add("--query", query.clone());
        diagnostics.extend(match dialect {
            Dialect::Dlc => syntax::parse_query(query, qfile, &mut program),
            Dialect::Souffle => syntax::souffle::parse_query(query, qfile, &mut program),
        });
    }
    if program.query.is_none() && !diag::has_errors(&diagnostics) && !(outputs_mode && souffle.is_some()) {
        diagnostics.push(no_query(&sources, file, dialect));
    }

    // Predicates declared from here on are named by facts files and updates only.
    let mentioned = program.preds.len();
    let program_values = program.consts.len();
    let mut shares = load::Shares { split: crate::engines::cluster_split(args), ..load::Shares::default() };
    // A relation the output reads directly is read whole: every process prints it.
    let edb = |p: &PredId| program.pred(*p).kind == ir::PredKind::Edb;
    shares.whole.extend(program.query.as_ref().map(|q| q.atom.pred).filter(edb));
    if let Some(io) = &souffle {
        shares.whole.extend(io.outputs.iter().chain(&io.printsize).map(|o| o.pred).filter(edb));
    }
    let mut facts = InputFacts::default();
    for fact in &program.facts {
        facts.push(fact.pred, fact.values.iter().copied());
    }
    let evaluates = matches!(args.emit, Emit::Answers | Emit::Trace);
    if let Some(io) = souffle.as_ref().filter(|_| evaluates) {
        let fact_dir = args.fact_dir.clone().unwrap_or_else(|| PathBuf::from("."));
        let needed = (!every_input).then(|| needed_inputs(args, &program, io)).flatten();
        for input in &io.inputs {
            if needed.as_ref().is_some_and(|needed| !needed[input.pred.index()]) {
                continue;
            }
            let (sink, read) = (&mut facts, &mut shares);
            load::load_souffle_input(input, &fact_dir, &mut program, &mut sources, &mut diagnostics, sink, read);
        }
    } else if let Some(dir) = args.fact_dir.as_ref().filter(|_| evaluates && souffle.is_none()) {
        load::load_facts(dir, &mut program, &mut sources, &mut diagnostics, &mut facts, &mut shares);
    }
    for path in args.facts.iter().filter(|_| evaluates) {
        load::load_facts(path, &mut program, &mut sources, &mut diagnostics, &mut facts, &mut shares);
    }

    let batches = read_updates(args, &mut program, &mut sources, &mut diagnostics);

    let mut given: Vec<PredId> = facts.preds().collect();
    // An `.input` relation is given by its file, even an empty one.
    given.extend(souffle.iter().flat_map(|io| io.inputs.iter().map(|i| i.pred)));
    // Only warn about empty predicates when the inputs were all read: after an error the
    // warning would mostly repeat it, and without reading the files it cannot be known.
    let unread = !evaluates && (!args.facts.is_empty() || args.fact_dir.is_some());
    if !diag::has_errors(&diagnostics) && !unread {
        diagnostics.extend(unused_input_warnings(&program, mentioned));
        diagnostics.extend(syntax::undefined_predicate_warnings(&program, &given));
    }

    diagnostics.extend(engine(args).unsupported(&program));
    let diagnostics = in_dialect(diagnostics, dialect);
    if diag::has_errors(&diagnostics) {
        return Err(Failed { sources, diagnostics });
    }
    Ok(Prepared { sources, file, program, facts, batches, warnings: diagnostics, souffle, shares, program_values })
}

/// Which relations the run computes from a Soufflé program's inputs, by relation id:
/// those the query reads, or without one those the `.output` and `.printsize` relations
/// read (`None`: every relation, for `--all`). Soufflé reads only these inputs, and
/// a file of another one may be missing.
fn needed_inputs(args: &RunArgs, program: &Program, io: &SouffleIo) -> Option<Vec<bool>> {
    let wanted: Vec<PredId> = match &program.query {
        _ if args.all => return None,
        Some(query) => vec![query.atom.pred],
        None => io.outputs.iter().chain(&io.printsize).map(|d| d.pred).collect(),
    };
    Some(plan::needed_preds(program, &wanted))
}

/// `diagnostics` with help lines in the program's dialect: a Soufflé program's reports
/// do not suggest dlc's syntax ([`Code::souffle_help`]). Only a code's default help is
/// replaced; a help line written for the case stays.
fn in_dialect(mut diagnostics: Vec<Diagnostic>, dialect: Dialect) -> Vec<Diagnostic> {
    if dialect == Dialect::Souffle {
        for d in &mut diagnostics {
            match d.code.souffle_help() {
                Some(help) if d.help.as_deref() == Some(d.code.help()) => d.help = Some(help.to_string()),
                _ => {}
            }
        }
    }
    diagnostics
}

/// E0010 at the end of the program.
fn no_query(sources: &SourceMap, file: ir::FileId, dialect: Dialect) -> Diagnostic {
    let end = sources.text(file).len();
    let d = Diagnostic::error(Code::NO_QUERY, "the program has no query")
        .with_primary(diag::Span::new(file, end..end), "no `?-` line up to the end of the program");
    match dialect {
        Dialect::Dlc => d,
        Dialect::Souffle => d.with_help("pass a query in Soufflé syntax, e.g. `--query 'path(1, y)'`"),
    }
}

/// Rewrites a prepared program for its query.
pub fn finish(prepared: Prepared, args: &RunArgs) -> Result<Session, Failed> {
    let Prepared { sources, file, program, facts, batches, warnings: diagnostics, souffle, .. } = prepared;
    let Some(query) = program.query.clone() else {
        let dialect = if souffle.is_some() { Dialect::Souffle } else { Dialect::Dlc };
        let diagnostics = vec![no_query(&sources, file, dialect)];
        return Err(Failed { sources, diagnostics });
    };
    // `--magic off` evaluates the original program: a rewrite too large to make must not
    // stop it, so it is made only when the output shows it.
    let shows_magic = matches!(args.emit, Emit::Adorned | Emit::MagicIr);
    let attributes = souffle.as_ref().map(|io| io.attributes.clone()).unwrap_or_default();
    let souffle = souffle.is_some();
    if args.magic_mode() == MagicArg::Off && !shows_magic {
        let warnings = diagnostics;
        return Ok(Session { sources, program, magic: None, facts, batches, warnings, souffle, attributes });
    }
    // What is shown is SPEC's exact rewrite; what `auto` evaluates serves calls by
    // subsuming adornments.
    let evaluated = if shows_magic { MagicArg::On } else { args.magic_mode() };
    let magic = match magic::rewrite_with(&program, &query, rewrite_options(evaluated, args.max_adornments)) {
        Ok(magic) => magic,
        // Past the limit `auto` evaluates the original program, but `--compare` shows
        // the rewrite beside it, so it needs the rewrite.
        Err(_) if evaluated == MagicArg::Auto && !args.compare => {
            let warnings = diagnostics;
            return Ok(Session { sources, program, magic: None, facts, batches, warnings, souffle, attributes });
        }
        Err(limit) => {
            let mut diagnostics = diagnostics;
            diagnostics.push(limit.to_diagnostic(&program));
            return Err(Failed { sources, diagnostics });
        }
    };
    // The rewrite must produce a program that passes the source checks; if it does not,
    // that is a bug in dlc, reported as such instead of evaluating a broken program.
    let broken: Vec<Diagnostic> = ir::validate(&magic.program)
        .iter()
        .map(|e| {
            e.to_diagnostic(&magic.program)
                .with_note("internal error: the magic rewrite produced this rule; please report it")
        })
        .collect();
    if !broken.is_empty() {
        return Err(Failed { sources, diagnostics: broken });
    }
    if let Some(d) = engine(args).unsupported(&magic.program) {
        return Err(Failed { sources, diagnostics: vec![d] });
    }
    Ok(Session { sources, program, magic: Some(magic), facts, batches, warnings: diagnostics, souffle, attributes })
}

/// A warning for every predicate from `first_unmentioned` on: the program never
/// mentions them, so their facts or updates (which declared them) cannot change any
/// answer. Usually a facts file named after something else than its predicate.
pub(crate) fn unused_input_warnings(program: &Program, first_unmentioned: usize) -> Vec<Diagnostic> {
    let read: BTreeSet<PredId> =
        program.rules.iter().flat_map(|r| r.body.iter().chain(&r.negated).map(|a| a.pred)).collect();
    let inputs: Vec<String> = read
        .iter()
        .filter(|&&p| program.pred(p).kind == ir::PredKind::Edb)
        .map(|&p| format!("`{}`/{}", program.pred_name(p), program.pred(p).arity))
        .collect();
    let help = match inputs.len() {
        0 => "the program reads no input predicates".to_string(),
        _ => {
            format!("the program reads {}; a facts file `E.facts` or `E.csv` holds the facts of `E`", inputs.join(", "))
        }
    };
    program
        .pred_ids()
        .skip(first_unmentioned)
        .map(|p| {
            let pred = program.pred(p);
            Diagnostic::warning(
                Code::UNUSED_INPUT,
                format!("`{}` is not a predicate of the program; its input is not used", program.pred_name(p)),
            )
            .with_primary(pred.span, format!("`{}`/{} first given here", program.pred_name(p), pred.arity))
            .with_help(help.clone())
        })
        .collect()
}

fn read_updates(
    args: &RunArgs,
    program: &mut Program,
    sources: &mut SourceMap,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Batch> {
    let mut batches = Vec::new();
    // All --insert/--delete flags form one batch, deletions first as the user reads them:
    // a fact given to both flags is deleted, then inserted.
    let mut flags = Vec::new();
    for (sign, atoms) in [(Sign::Delete, &args.delete), (Sign::Insert, &args.insert)] {
        for atom in atoms {
            let file = sources.add(if sign == Sign::Insert { "--insert" } else { "--delete" }, atom.clone());
            let (fact, diags) = syntax::parse_update_atom(atom, file, program);
            diagnostics.extend(diags);
            flags.extend(fact.map(|fact| (sign, fact)));
        }
    }
    if !flags.is_empty() {
        batches.push(batch_of(program, &flags));
    }
    if let Some(path) = &args.updates {
        match load::read_source(path, sources) {
            Ok(file) => {
                let text = sources.text(file).to_string();
                let (parsed, diags) = syntax::parse_updates(&text, file, program);
                diagnostics.extend(diags);
                batches.extend(parsed.iter().map(|b| batch_of(program, &b.changes)));
            }
            Err(d) => diagnostics.push(d),
        }
    }
    batches
}

/// `+E(a,b)` or `-E(a,b)`, a change as the reports list it.
pub fn change_text(program: &Program, sign: Sign, fact: &Fact) -> String {
    let sign = if sign == Sign::Insert { '+' } else { '-' };
    format!("{sign}{}", fact_text(program, fact))
}

/// A batch of these changes, in order: each text as written, and the net update.
fn batch_of(program: &Program, changes: &[(Sign, Fact)]) -> Batch {
    Batch {
        changes: changes.iter().map(|(sign, fact)| change_text(program, *sign, fact)).collect(),
        update: net_update(changes.iter().map(|(sign, fact)| (*sign, tuple_of(fact)))),
    }
}

/// The update that has the effect of applying `changes` one at a time, in order: the
/// last change of each fact wins (`+E(z,z)` then `-E(z,z)` deletes it), and each fact is
/// then inserted or deleted once. exec applies an update's deletions before its
/// insertions, so a fact in both lists would otherwise always end up present.
pub fn net_update(changes: impl IntoIterator<Item = (Sign, Tuple)>) -> Update {
    let changes: Vec<(Sign, Tuple)> = changes.into_iter().collect();
    let mut seen: std::collections::HashSet<&Tuple> = std::collections::HashSet::new();
    // Walking backwards, the first sighting of a fact is its last change.
    let mut last: Vec<bool> = changes.iter().rev().map(|(_, tuple)| seen.insert(tuple)).collect();
    last.reverse();
    drop(seen);
    let mut update = Update { inserts: Vec::new(), deletes: Vec::new() };
    for ((sign, tuple), last) in changes.into_iter().zip(last) {
        if last {
            let list = if sign == Sign::Insert { &mut update.inserts } else { &mut update.deletes };
            list.push(tuple);
        }
    }
    update
}

/// `E(a,b)` for a fact (the printer itself is `report::fact_text`).
pub fn fact_text(program: &Program, fact: &Fact) -> String {
    let (pred, tuple) = tuple_of(fact);
    crate::report::fact_text(program, pred, &tuple)
}

pub fn engine(args: &RunArgs) -> Engine {
    match args.engine {
        EngineArg::Seminaive => Engine::Native(exec::Engine::Seminaive),
        EngineArg::Reference => Engine::Native(exec::Engine::Reference),
        EngineArg::Differential => {
            Engine::Differential { workers: args.dataflow.workers.unwrap_or(1), cluster: args.dataflow.processes() > 1 }
        }
    }
}

/// `--threads`: the number given, or every core the machine runs at once.
pub fn threads(arg: Option<usize>) -> Threads {
    arg.map_or_else(Threads::available, Threads::new)
}

/// The rewrite `mode` evaluates, for `query`: none for `auto` when it would pass the
/// `--max-adornments` limit (a rewrite that large is no narrowing worth its size; the
/// original program is evaluated instead), the limit's error for `on` and `off` (whose
/// rewrite is made only to be shown).
pub fn rewrite_for_mode(
    program: &Program,
    query: &ir::Query,
    mode: MagicArg,
    max_adornments: usize,
) -> Result<Option<MagicProgram>, magic::AdornmentLimit> {
    match magic::rewrite_with(program, query, rewrite_options(mode, max_adornments)) {
        Ok(magic) => Ok(Some(magic)),
        Err(_) if mode == MagicArg::Auto => Ok(None),
        Err(limit) => Err(limit),
    }
}

/// The rewrite `mode` evaluates: with adornment subsumption for `auto`, SPEC's exact
/// rewrite (what `--emit magic-ir` shows) otherwise.
pub fn rewrite_options(mode: MagicArg, max_adornments: usize) -> magic::RewriteOptions {
    magic::RewriteOptions { max_adornments, subsume: mode == MagicArg::Auto }
}

pub fn maintenance(arg: MaintenanceArg) -> Maintenance {
    match arg {
        MaintenanceArg::Dred => Maintenance::Dred,
        MaintenanceArg::Ranked => Maintenance::Ranked,
        MaintenanceArg::Auto => Maintenance::Auto,
    }
}

/// The report of an evaluation or update that stopped because a relation of `program`
/// outgrew `--max-tuples` or the memory.
pub fn resource_diagnostic(program: &Program, error: &ResourceError) -> Diagnostic {
    let d = Diagnostic::error(Code::RESOURCE_LIMIT, error.message(program));
    let d = match error.kind {
        exec::ResourceKind::TupleLimit { .. } | exec::ResourceKind::Cap { .. } => d,
        _ => d.with_help("free memory or lower what the program derives; `--max-tuples N` stops it earlier"),
    };
    let pred = program.pred(error.pred);
    let what = match pred.name {
        ir::PredName::Source(_) => "first used here",
        _ => "generated for this atom",
    };
    let d = if pred.span == diag::Span::default() { d } else { d.with_primary(pred.span, what) };
    let d = match error.kind {
        exec::ResourceKind::TupleLimit { .. } => blame_rule(program, error.pred, d),
        _ => d,
    };
    d.with_note("nothing was printed: the relations are incomplete")
}

/// Points at the rule that grew `pred` past the limit: one whose body atoms fall apart
/// into groups sharing no variable (it derives the product of their sizes), else a rule
/// reading `pred` itself (a closure that is simply that large), else the first deriving it.
fn blame_rule(program: &Program, pred: PredId, d: Diagnostic) -> Diagnostic {
    let rules: Vec<&ir::Rule> = program.rules.iter().filter(|r| r.head.pred == pred).collect();
    let name = program.pred_name(pred);
    if let Some(rule) = rules.iter().find(|r| is_product(r)) {
        return d.with_secondary(rule.span, "the groups of body atoms of this rule share no variable").with_help(
            format!("this rule derives the product of its groups' sizes; join them on a shared variable, or raise the limit with `--max-tuples N` if `{name}` is meant to be that large"),
        );
    }
    // A relation that outgrows the limit without a product usually grows by recursion.
    let recursive = rules.iter().find(|r| r.body.iter().any(|a| a.pred == pred));
    let label = match recursive {
        Some(_) => format!("this rule grows `{name}` from itself"),
        None => format!("a rule deriving `{name}`"),
    };
    match recursive.or(rules.first()) {
        Some(rule) => d.with_secondary(rule.span, label).with_help(format!(
            "`{name}` is simply this large ({} rule(s) derive it); raise the limit with `--max-tuples N` if the machine has the memory, or ask a narrower query",
            rules.len()
        )),
        None => d,
    }
}

/// Whether the body atoms of `rule` that have variables form more than one group of
/// atoms linked by shared variables: the rule then joins groups with no condition.
fn is_product(rule: &ir::Rule) -> bool {
    let atoms: Vec<Vec<ir::Symbol>> = rule.body.iter().map(ir::Atom::vars).filter(|v| !v.is_empty()).collect();
    let Some(first) = atoms.first() else { return false };
    // Grow the group of the first atom until no atom outside it shares a variable.
    let mut reached: BTreeSet<ir::Symbol> = first.iter().copied().collect();
    let mut joined = vec![false; atoms.len()];
    joined[0] = true;
    let mut grew = true;
    while grew {
        grew = false;
        for (i, vars) in atoms.iter().enumerate() {
            if !joined[i] && vars.iter().any(|v| reached.contains(v)) {
                joined[i] = true;
                reached.extend(vars.iter().copied());
                grew = true;
            }
        }
    }
    joined.contains(&false)
}

/// A database holding exactly these input tuples, whose relations may hold at most
/// `max_tuples` tuples each.
pub fn edb_database(program: &Program, facts: &InputFacts, max_tuples: u32) -> Database {
    let mut db = Database::new(program);
    db.set_tuple_limit(max_tuples);
    for pred in facts.preds() {
        match facts.of(pred) {
            // A nullary predicate's tuples are all the one empty tuple.
            (_, []) => {
                db.insert(pred, &[]);
            }
            (_, values) => {
                db.insert_all(pred, values);
            }
        }
    }
    db
}

/// One evaluated program: the original or the magic rewrite.
pub struct Evaluated {
    pub eval: Evaluation,
    /// The evaluated program's query, which names the relation holding the answers.
    query: ir::Query,
    /// The answers copied out of the relation, when first asked for: printing them
    /// reads the relation itself ([`Evaluated::selected`]).
    answers: std::cell::OnceCell<Answers>,
    pub elapsed: Duration,
    /// The running dataflow, when the differential engine evaluated it.
    live: Option<Live>,
}

impl Evaluated {
    /// The query's answers, sorted (copied out of the relation on first use).
    pub fn answers(&self) -> &Answers {
        self.answers.get_or_init(|| self.selected().collect())
    }

    /// The query's answers as they lie in the relation.
    pub fn selected(&self) -> Selected<'_> {
        Selected { db: &self.eval.db, pred: self.query.atom.pred, query: Some(&self.query) }
    }
}

/// A query's answers: tuples of its arity, sorted, stored flat.
pub type Answers = exec::Tuples;

/// How writers order the values of a column: by the `u32`s tuples hold (an `unsigned`
/// column's order; any fixed order for internal use), as signed numbers (a `number`
/// column's), or by a rank of their own (symbols: Soufflé's numeric order of the `-D`
/// files, numbers first, then text).
pub enum ValueOrder {
    Ids,
    Signed,
    Ranks {
        /// The rank of each value (indexed by id; values never ranked have none).
        rank: Vec<u32>,
        /// The value of each rank, `0..`: the inverse of `rank`.
        value_of_rank: Vec<u32>,
    },
}

/// The rank of a value a [`ValueOrder::Ranks`] does not rank.
const UNRANKED: u32 = u32::MAX;

impl ValueOrder {
    /// The values in `in_order`, ranked in that order.
    pub fn ranked(in_order: Vec<u32>) -> Self {
        let mut rank = vec![UNRANKED; in_order.iter().max().map_or(0, |&v| v as usize + 1)];
        for (r, &v) in in_order.iter().enumerate() {
            rank[v as usize] = r as u32;
        }
        ValueOrder::Ranks { rank, value_of_rank: in_order }
    }

    #[inline]
    fn key(&self, v: u32) -> u32 {
        match self {
            ValueOrder::Ids => v,
            // Flipping the sign bit maps `i32::MIN..=i32::MAX` onto `0..=u32::MAX` in order.
            ValueOrder::Signed => v ^ (1 << 31),
            ValueOrder::Ranks { rank, .. } => {
                let r = rank[v as usize];
                debug_assert_ne!(r, UNRANKED, "value {v} is sorted but was not ranked");
                r
            }
        }
    }

    /// Sorts distinct values. By id, in place; by rank, through the ranks, which are dense:
    /// a group with many values is sorted by setting their ranks' bits in `bits` and
    /// reading them back in order (linear in the group and the ranks), a small one by
    /// sorting its ranks.
    fn sort(&self, values: &mut [u32], bits: &mut Vec<u64>) {
        match self {
            ValueOrder::Ids => values.sort_unstable(),
            ValueOrder::Signed => values.sort_unstable_by_key(|&v| self.key(v)),
            ValueOrder::Ranks { rank, value_of_rank } => {
                let words = value_of_rank.len().div_ceil(64);
                if words <= 4 * values.len() {
                    bits.resize(words, 0);
                    for &v in values.iter() {
                        let r = rank[v as usize];
                        bits[r as usize / 64] |= 1 << (r % 64);
                    }
                    let mut at = 0;
                    for (w, word) in bits.iter_mut().enumerate() {
                        let mut b = std::mem::take(word);
                        while b != 0 {
                            values[at] = value_of_rank[w * 64 + b.trailing_zeros() as usize];
                            at += 1;
                            b &= b - 1;
                        }
                    }
                    debug_assert_eq!(at, values.len(), "the values of a group are distinct");
                } else {
                    for v in values.iter_mut() {
                        *v = rank[*v as usize];
                    }
                    values.sort_unstable();
                    for v in values.iter_mut() {
                        *v = value_of_rank[*v as usize];
                    }
                }
            }
        }
    }
}

/// The order of column `i` among `orders`: its own, or the last one for a column past
/// their end.
fn column(orders: &[ValueOrder], i: usize) -> &ValueOrder {
    &orders[i.min(orders.len() - 1)]
}

/// Some tuples of one relation of a database: those a query admits, or all of them.
/// Writers read them in order straight from the relation ([`Selected::for_each_sorted`]),
/// so printing a whole relation copies none of it.
#[derive(Clone, Copy)]
pub struct Selected<'a> {
    pub db: &'a Database,
    pub pred: PredId,
    /// The query whose answers these are; `None` for the whole relation.
    pub query: Option<&'a ir::Query>,
}

impl<'a> Selected<'a> {
    /// The answers of `program`'s query (which names the relation to read) in `db`.
    pub fn answers(program: &'a Program, db: &'a Database) -> Self {
        let query = program.query.as_ref().expect("evaluated programs carry their query");
        Selected { db, pred: query.atom.pred, query: Some(query) }
    }

    /// Every tuple of `pred`.
    pub fn relation(db: &'a Database, pred: PredId) -> Self {
        Selected { db, pred, query: None }
    }

    /// Calls `f` with every selected tuple, in lexicographic order of the values as
    /// `order` orders each column (its last order orders the columns past its end: one
    /// order orders them all); stops at the first error. A ranked order needs to rank
    /// only the values of its columns of the selected tuples: no other value is sorted.
    ///
    /// The tuples are read through the relation's tuple set, which groups them by their
    /// prefix (every column but the last): a query that binds the whole prefix reads one
    /// group, found by one probe; a bound last value is one lookup per group; other
    /// bound columns skip the groups whose prefix differs. The groups are sorted by
    /// their prefix, then each group's last values, so the only memory taken is a group
    /// id per group and the values of one group.
    pub fn for_each_sorted<E>(&self, order: &[ValueOrder], f: impl FnMut(&[u32]) -> Result<(), E>) -> Result<(), E> {
        self.walk(Some(order), f)
    }

    /// Calls `f` with every selected tuple, in no particular order.
    pub fn for_each<E>(&self, f: impl FnMut(&[u32]) -> Result<(), E>) -> Result<(), E> {
        self.walk(None, f)
    }

    /// Visits the selected tuples group by group, sorted by `order` if given.
    fn walk<E>(&self, orders: Option<&[ValueOrder]>, mut f: impl FnMut(&[u32]) -> Result<(), E>) -> Result<(), E> {
        let Some(groups) = self.db.groups(self.pred) else { return Ok(()) };
        let arity = groups.arity();
        let bound: Vec<Option<u32>> = match self.query {
            Some(q) if q.atom.args.len() == arity => {
                q.atom.args.iter().map(|t| t.constant().map(|c| c.raw())).collect()
            }
            Some(_) => return Ok(()),
            None => vec![None; arity],
        };
        // Bound columns are selected below; only a repeated variable (`R(X,X)`) needs
        // each tuple checked against the query.
        let repeated = self.query.is_some_and(|q| {
            let vars: Vec<_> = q.atom.args.iter().filter_map(|t| t.var()).collect();
            vars.iter().enumerate().any(|(i, v)| vars[..i].contains(v))
        });
        let accept = |t: &[u32]| !repeated || self.query.is_none_or(|q| q.matches(t));
        if arity == 0 {
            return match groups.has_empty_tuple() && accept(&[]) {
                true => f(&[]),
                false => Ok(()),
            };
        }
        let (prefix_bound, last_bound) = bound.split_at(arity - 1);
        let mut ids: Vec<u32> = match prefix_bound.iter().copied().collect::<Option<Vec<u32>>>() {
            Some(prefix) => groups.find(&prefix).map(|g| g as u32).into_iter().collect(),
            None => (0..groups.len() as u32)
                .filter(|&g| groups.prefix(g as usize).iter().zip(prefix_bound).all(|(v, b)| b.is_none_or(|b| b == *v)))
                .collect(),
        };
        let mut row = vec![0u32; arity];
        let mut values = Vec::new();
        if let Some(orders) = orders {
            // An order may know only the values of the selected tuples (the `-D` writer
            // ranks just those), so only groups that hold a selected tuple are sorted,
            // and below, only a group's selected values.
            ids.retain(|&g| {
                let g = g as usize;
                row[..arity - 1].copy_from_slice(groups.prefix(g));
                match last_bound[0] {
                    Some(last) => {
                        row[arity - 1] = last;
                        groups.contains(g, last) && accept(&row)
                    }
                    None if !repeated => groups.group_len(g) > 0,
                    None => {
                        values.clear();
                        groups.values(g, &mut values);
                        values.iter().any(|&v| {
                            row[arity - 1] = v;
                            accept(&row)
                        })
                    }
                }
            });
            let prefix_key =
                |g: u32| groups.prefix(g as usize).iter().enumerate().map(|(i, &v)| column(orders, i).key(v));
            let order = column(orders, 0);
            match arity {
                1 => {}
                2 => match order {
                    // The groups' one-value prefixes are distinct, and so are their dense
                    // ranks: when there are not many more ranks than groups, each group
                    // goes straight to its rank's slot (linear, no comparisons).
                    ValueOrder::Ranks { value_of_rank, .. } if value_of_rank.len() <= 4 * ids.len() => {
                        let mut by_rank = vec![u32::MAX; value_of_rank.len()];
                        for &g in &ids {
                            by_rank[order.key(groups.prefix(g as usize)[0]) as usize] = g;
                        }
                        ids.clear();
                        ids.extend(by_rank.into_iter().filter(|&g| g != u32::MAX));
                    }
                    _ => ids.sort_unstable_by_key(|&g| order.key(groups.prefix(g as usize)[0])),
                },
                _ => ids.sort_unstable_by(|&a, &b| prefix_key(a).cmp(prefix_key(b))),
            }
        }
        let mut scratch = Vec::new();
        for g in ids {
            let g = g as usize;
            row[..arity - 1].copy_from_slice(groups.prefix(g));
            if let Some(last) = last_bound[0] {
                if groups.contains(g, last) {
                    row[arity - 1] = last;
                    if accept(&row) {
                        f(&row)?;
                    }
                }
                continue;
            }
            values.clear();
            groups.values(g, &mut values);
            if let Some(orders) = orders {
                if repeated {
                    values.retain(|&v| {
                        row[arity - 1] = v;
                        accept(&row)
                    });
                }
                column(orders, arity - 1).sort(&mut values, &mut scratch);
            }
            for &v in &values {
                row[arity - 1] = v;
                if accept(&row) {
                    f(&row)?;
                }
            }
        }
        Ok(())
    }

    /// The selected tuples copied out, sorted.
    pub fn collect(&self) -> Answers {
        let arity = self.db.arity(self.pred);
        let (mut values, mut len) = (Vec::new(), 0);
        let _ = self.for_each_sorted(&[ValueOrder::Ids], |t| {
            values.extend_from_slice(t);
            len += 1;
            Ok::<(), std::convert::Infallible>(())
        });
        Answers::from_sorted(arity, len, values)
    }

    /// The number of selected tuples.
    pub fn count(&self) -> usize {
        match self.query {
            None => self.db.len(self.pred),
            Some(_) => {
                let mut n = 0;
                let _ = self.for_each(|_| {
                    n += 1;
                    Ok::<(), std::convert::Infallible>(())
                });
                n
            }
        }
    }
}

/// The query's answers in a database of `program` (whose query names the relation to
/// read), selected through the relation's groups and copied out in order.
pub fn answers(program: &Program, db: &Database) -> Answers {
    Selected::answers(program, db).collect()
}

/// The plan an evaluation of `program` runs: with `whole` (`--all`) every rule, else only
/// the rules of the relations the query depends on, so a relation nothing asked for is
/// not computed (a program without a query evaluates every rule).
pub fn evaluation_plan(program: &Program, whole: bool) -> plan::ProgramPlan {
    let mut plan = plan::plan_program(program);
    if let Some(query) = program.query.as_ref().filter(|_| !whole) {
        plan.restrict_to(program, &[query.atom.pred]);
    }
    plan
}

/// Plans and evaluates `program` from scratch over `facts`, with at most `max_tuples`
/// tuples per relation; `whole` as for [`evaluation_plan`].
#[allow(clippy::too_many_arguments)]
pub fn evaluate(
    program: &Program,
    whole: bool,
    facts: &InputFacts,
    engine: Engine,
    threads: Threads,
    record_rounds: bool,
    progress: Option<Box<dyn FnMut(exec::Progress)>>,
    max_tuples: u32,
) -> Result<Evaluated, ResourceError> {
    evaluate_capped(program, whole, facts, engine, threads, record_rounds, progress, max_tuples, &[])
}

/// [`evaluate`], with relation `pred` of each `(pred, cap)` of `caps` capped at `cap`
/// tuples (an evaluation that passes one ends with [`exec::ResourceKind::Cap`]).
#[allow(clippy::too_many_arguments)]
fn evaluate_capped(
    program: &Program,
    whole: bool,
    facts: &InputFacts,
    engine: Engine,
    threads: Threads,
    record_rounds: bool,
    progress: Option<Box<dyn FnMut(exec::Progress)>>,
    max_tuples: u32,
    caps: &[(PredId, u32)],
) -> Result<Evaluated, ResourceError> {
    let start = Instant::now();
    let plan = evaluation_plan(program, whole);
    let mut edb = edb_database(program, facts, max_tuples);
    for &(pred, cap) in caps {
        edb.set_relation_cap(pred, cap);
    }
    let (eval, live) = engine.evaluate(&plan, program, edb, record_rounds, progress, threads)?;
    let query = program.query.clone().expect("evaluated programs carry their query");
    Ok(Evaluated { eval, query, answers: std::cell::OnceCell::new(), elapsed: start.elapsed(), live })
}

/// Which program an evaluation used, and why: what `--magic` chose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The magic rewrite (else the original program).
    pub magic: bool,
    /// Why, in a phrase: the flag, or what `--magic auto` saw.
    pub reason: String,
}

impl Choice {
    /// `magic` or `original`, as the outputs name the programs.
    pub fn name(&self) -> &'static str {
        if self.magic {
            "magic"
        } else {
            "original"
        }
    }

    /// `magic program (--magic auto: ...)`, the line the trace and `--compare` show.
    pub fn text(&self) -> String {
        format!("{} program ({})", self.name(), self.reason)
    }
}

/// The caps of `--magic auto` on the demand relations of `magic`
/// ([`MagicProgram::demand_caps`]), with `|adom|` the distinct constants of the program
/// and its input: what the interner holds.
pub fn demand_caps(source: &Program, magic: &MagicProgram) -> Vec<(PredId, u32)> {
    magic.demand_caps(source.consts.len().max(magic.program.consts.len()))
}

/// What `--magic auto` chooses for `magic`, the rewrite with subsumption, given the sizes
/// a full evaluation of it reached (`db`) or before any (`None`): the original program
/// when every adornment is all-free, or when a demand relation is past its cap.
pub fn auto_choice(source: &Program, magic: &MagicProgram, db: Option<&Database>) -> Choice {
    if magic.narrows_nothing() {
        return Choice { magic: false, reason: "--magic auto: the rewrite narrows no demand".into() };
    }
    let caps = demand_caps(source, magic);
    if let Some(db) = db {
        if let Some(&(pred, cap)) = caps.iter().find(|(pred, cap)| db.len(*pred) > *cap as usize) {
            return over_cap(&magic.program, pred, cap);
        }
    }
    Choice { magic: true, reason: "--magic auto: the demand stayed within its caps".into() }
}

fn over_cap(program: &Program, pred: PredId, cap: u32) -> Choice {
    let name = program.pred_name(pred);
    Choice { magic: false, reason: format!("--magic auto: demand `{name}` passed its cap of {cap} tuples") }
}

/// Evaluates the program `mode` chooses: the original `source`, or `magic` (the
/// session's rewrite, made for every mode but `off`). For `auto`, the rewrite is
/// evaluated with a cap on each demand relation ([`demand_caps`]); when one passes it,
/// that evaluation is abandoned and the original program evaluated instead, and the time
/// of both is reported. `progress` makes the progress reporter of each evaluation.
#[allow(clippy::too_many_arguments)]
pub fn evaluate_chosen(
    source: &Program,
    magic: Option<&MagicProgram>,
    mode: MagicArg,
    whole: bool,
    facts: &InputFacts,
    engine: Engine,
    threads: Threads,
    record_rounds: bool,
    progress: &dyn Fn() -> Option<Box<dyn FnMut(exec::Progress)>>,
    max_tuples: u32,
) -> Result<(Evaluated, Choice), ResourceError> {
    let magic = match (mode, magic) {
        (MagicArg::Off, _) | (_, None) => {
            // `auto` has no rewrite when it would pass the adornment limit.
            let reason = match mode {
                MagicArg::Auto => "--magic auto: the rewrite needs more adorned predicates than --max-adornments",
                _ => "--magic off",
            };
            let choice = Choice { magic: false, reason: reason.into() };
            return Ok((
                evaluate(source, whole, facts, engine, threads, record_rounds, progress(), max_tuples)?,
                choice,
            ));
        }
        (MagicArg::On, Some(magic)) => {
            let choice = Choice { magic: true, reason: "--magic on".into() };
            return Ok((
                evaluate(&magic.program, whole, facts, engine, threads, record_rounds, progress(), max_tuples)?,
                choice,
            ));
        }
        (MagicArg::Auto, Some(magic)) => magic,
    };
    let mut choice = auto_choice(source, magic, None);
    if choice.magic && engine.is_cluster() {
        choice.reason = "--magic auto: the rewrite narrows the demand (a cluster sets no caps)".into();
    }
    if !choice.magic {
        return Ok((evaluate(source, whole, facts, engine, threads, record_rounds, progress(), max_tuples)?, choice));
    }
    // A cluster evaluates once, and its processes must choose alike: no caps there.
    let caps = if engine.is_cluster() { Vec::new() } else { demand_caps(source, magic) };
    let start = Instant::now();
    match evaluate_capped(&magic.program, whole, facts, engine, threads, record_rounds, progress(), max_tuples, &caps) {
        Ok(mut run) => {
            // Maintenance must not stop at a cap: from here on, only the user's limit holds.
            run.eval.db.set_tuple_limit(max_tuples);
            Ok((run, choice))
        }
        Err(ResourceError { pred, kind: exec::ResourceKind::Cap { cap } }) => {
            let abandoned = start.elapsed();
            let mut run = evaluate(source, whole, facts, engine, threads, record_rounds, progress(), max_tuples)?;
            run.elapsed += abandoned;
            Ok((run, over_cap(&magic.program, pred, cap)))
        }
        Err(e) => Err(e),
    }
}

/// The predicates that head a rule of `program`: the relations evaluation derives.
pub fn derived_preds(program: &Program) -> Vec<PredId> {
    let heads: BTreeSet<PredId> = program.rules.iter().map(|r| r.head.pred).collect();
    heads.into_iter().collect()
}

/// Sizes of the derived relations of `program` in `db`.
pub fn relation_sizes(program: &Program, db: &Database) -> Vec<(PredId, usize)> {
    // An empty relation the query does not depend on was usually not evaluated at all
    // ([`evaluation_plan`]): listing it as empty would suggest it was.
    let needed = match &program.query {
        Some(query) => plan::needed_preds(program, &[query.atom.pred]),
        None => vec![true; program.preds.len()],
    };
    derived_preds(program)
        .into_iter()
        .map(|p| (p, db.len(p)))
        .filter(|&(p, len)| len > 0 || needed[p.index()])
        .collect()
}

/// The facts of `changed` (a net change per relation, as [`exec::UpdateReport::added`]
/// lists it) that are answers of `query`, in order: a batch's change of the answers,
/// found without a copy of the answers before and after it.
fn selected_answers(query: &ir::Query, changed: &[(PredId, exec::Tuples)]) -> Answers {
    let arity = query.atom.args.len();
    let (mut values, mut len) = (Vec::new(), 0);
    for (_, tuples) in changed.iter().filter(|(p, _)| *p == query.atom.pred) {
        for t in tuples.iter().filter(|t| t.len() == arity && query.matches(t)) {
            values.extend_from_slice(t);
            len += 1;
        }
    }
    // A subset of one relation's sorted change.
    Answers::from_sorted(arity, len, values)
}

/// The input relations of `db`, a maintained database of `program`, as facts: the input
/// as the batches so far left it.
pub fn maintained_inputs(program: &Program, db: &Database) -> InputFacts {
    let mut facts = InputFacts::default();
    for pred in program.pred_ids().filter(|&p| program.pred(p).kind == ir::PredKind::Edb) {
        for tuple in db.tuples(pred) {
            facts.push(pred, tuple.iter().copied());
        }
    }
    facts
}

/// The answer of one update batch, with the before/after difference of the query's answers.
pub struct BatchOutcome {
    pub report: exec::UpdateReport,
    /// The strategy asked for.
    pub maintenance: Maintenance,
    /// The strategy that maintained this batch (the one `--maintenance auto` chose).
    pub strategy: &'static str,
    pub answers_added: Answers,
    pub answers_removed: Answers,
    pub elapsed: Duration,
    /// The work a from-scratch evaluation of the new input does (when it was measured).
    pub recompute_work: Option<u64>,
    /// Relations whose incremental state differs from recomputation (with `--check`).
    pub mismatches: Vec<PredId>,
    /// Sizes of the derived relations after the batch.
    pub sizes: Vec<(PredId, usize)>,
}

/// Keeps one program's materialisation up to date over a sequence of batches.
pub struct Maintainer {
    /// The maintained program; it owns its interners so that updates can mention new constants.
    pub program: Program,
    pub state: Box<dyn Materialized>,
    maintenance: Maintenance,
    /// The input as the batches left it, kept apart from the maintained database: an
    /// independent record for `--check` and for the recomputation a trace reports. Only
    /// kept when asked for, since it costs an allocation per fact; otherwise the input
    /// relations of the maintained database are the input.
    record: Option<BTreeSet<Tuple>>,
    /// `--max-tuples`, for the recomputations [`Maintainer::apply`] makes.
    max_tuples: u32,
    /// Whether every relation is maintained, not only those the query depends on
    /// ([`evaluation_plan`]).
    whole: bool,
    /// A batch's report lists its facts when it touches at most this many
    /// ([`crate::report::FULL_REPORT_MAX_FACTS`] unless `--full-report`, which sets `None`: always).
    pub list_up_to: Option<usize>,
}

impl Maintainer {
    /// Keeps `run`, an evaluation of `program` over `facts` (by [`evaluate`]), for
    /// updates. With `keep_record`, the input is also recorded apart ([`Maintainer::apply`]
    /// can then recompute from it).
    #[allow(clippy::too_many_arguments)]
    pub fn from_evaluation(
        program: Program,
        whole: bool,
        run: Evaluated,
        facts: &InputFacts,
        maintenance: Maintenance,
        keep_record: bool,
        max_tuples: u32,
    ) -> Result<Self, ResourceError> {
        let plan = evaluation_plan(&program, whole);
        let state = crate::engines::maintain(plan, &program, run.eval, run.live, maintenance)?;
        let record = keep_record.then(|| facts.iter().map(|(pred, tuple)| (pred, tuple.to_vec())).collect());
        let list_up_to = Some(crate::report::FULL_REPORT_MAX_FACTS);
        Ok(Maintainer { program, state, maintenance, record, max_tuples, whole, list_up_to })
    }

    /// The current input facts: the record if kept, else the maintained input relations.
    pub fn input_facts(&self) -> InputFacts {
        match &self.record {
            Some(record) => record.iter().collect(),
            None => maintained_inputs(&self.program, self.state.db()),
        }
    }

    /// Applies one batch; with `recompute`, also evaluates the new input from scratch to
    /// measure its work and (with `check`) to compare every relation. Both need the record
    /// (`keep_record`); without it they are skipped.
    pub fn apply(&mut self, update: &Update, recompute: bool, check: bool) -> Result<BatchOutcome, ResourceError> {
        let start = Instant::now();
        self.state.set_values(&self.program.consts);
        let report = self.state.try_apply(update, self.list_up_to, true)?;
        let elapsed = start.elapsed();
        if let Some(record) = &mut self.record {
            for t in &update.deletes {
                record.remove(t);
            }
            for t in &update.inserts {
                record.insert(t.clone());
            }
        }
        let (mut recompute_work, mut mismatches) = (None, Vec::new());
        if (recompute || check) && self.record.is_some() {
            let facts = self.input_facts();
            let fresh = evaluate(
                &self.program,
                self.whole,
                &facts,
                Engine::SEMINAIVE,
                self.state.threads(),
                false,
                None,
                self.max_tuples,
            )?;
            recompute_work = Some(fresh.eval.work);
            if check {
                mismatches = self
                    .program
                    .pred_ids()
                    .filter(|&p| fresh.eval.db.sorted_tuples(p) != self.state.db().sorted_tuples(p))
                    .collect();
            }
        }
        let query = self.program.query.as_ref().expect("maintained programs carry their query");
        Ok(BatchOutcome {
            answers_added: selected_answers(query, &report.added),
            answers_removed: selected_answers(query, &report.removed),
            strategy: self.state.strategy_name(&report),
            report,
            maintenance: self.maintenance,
            elapsed,
            recompute_work,
            mismatches,
            sizes: relation_sizes(&self.program, self.state.db()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Selected, ValueOrder};
    use exec::Database;

    /// A program with derived relations of arity 1, 2 and 3 (`P`, `Q`, `T`), the constants
    /// `0..3000` interned as ids `0..3000`, and random tuples in each: dense values (whose
    /// groups become bitmaps), sparse ones (inline and hashed groups), then removals.
    fn random_database() -> (ir::Program, Database) {
        let text = "P(X) <- A(X).\nQ(X,Y) <- B(X,Y).\nT(X,Y,Z) <- C(X,Y,Z).\n";
        let (program, diagnostics) = syntax::parse_program(text, ir::FileId(0));
        let mut program = program.unwrap_or_else(|| panic!("{diagnostics:?}"));
        for n in 0..3000 {
            assert_eq!(program.consts.intern(&n.to_string()).0, n);
        }
        let mut db = Database::new(&program);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |bound: u32| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % u64::from(bound)) as u32
        };
        for (name, arity) in [("P", 1), ("Q", 2), ("T", 3)] {
            let pred = program.lookup_source(name).unwrap();
            let mut inserted = Vec::new();
            for i in 0..4000 {
                let tuple: Vec<u32> = (0..arity).map(|_| if i % 3 == 0 { next(3000) } else { next(12) }).collect();
                db.insert(pred, &tuple);
                inserted.push(tuple);
            }
            for tuple in inserted.iter().step_by(7) {
                db.remove(pred, tuple);
            }
        }
        (program, db)
    }

    /// Answers read through the relation's groups equal a scan of every tuple filtered by
    /// the query, for queries binding every combination of columns, with repeated
    /// variables, on relations of arity 1 to 3.
    #[test]
    fn selection_through_groups_equals_a_scan() {
        let (base, db) = random_database();
        let mut checked = 0;
        for (name, arity) in [("P", 1u32), ("Q", 2), ("T", 3)] {
            // Each column: a fresh variable, a constant, or the first column's variable again.
            for pattern in 0..3u32.pow(arity) {
                let args: Vec<String> = (0..arity)
                    .map(|i| match pattern / 3u32.pow(i) % 3 {
                        0 => format!("X{i}"),
                        1 => ["3", "7", "11", "2999"][(i as usize + pattern as usize) % 4].to_string(),
                        _ => "X0".to_string(),
                    })
                    .collect();
                let mut program = base.clone();
                let query = format!("{name}({})", args.join(","));
                let diagnostics = syntax::parse_query(&query, ir::FileId(1), &mut program);
                assert!(diagnostics.is_empty(), "{query}: {diagnostics:?}");
                let q = program.query.as_ref().unwrap();
                let mut scanned: Vec<Vec<u32>> =
                    db.tuples(q.atom.pred).filter(|t| q.matches(t)).map(<[u32]>::to_vec).collect();
                scanned.sort();
                let selected = Selected::answers(&program, &db);
                assert_eq!(selected.collect().to_vecs(), scanned, "{query}");
                assert_eq!(selected.count(), scanned.len(), "{query}");
                // Ranking only the selected tuples' values (as the `-D` writer does) is
                // enough, even where a group matches the bound prefix but holds no
                // selected tuple (a bound last value it lacks, a repeated variable).
                let mut present: Vec<u32> = scanned.iter().flatten().copied().collect();
                present.sort_unstable_by(|a, b| b.cmp(a));
                present.dedup();
                let mut read = Vec::new();
                let _ = selected.for_each_sorted(&[ValueOrder::ranked(present)], |t| {
                    read.push(t.to_vec());
                    Ok::<(), ()>(())
                });
                let mut reversed = scanned.clone();
                reversed.sort_by(|a, b| b.cmp(a));
                assert_eq!(read, reversed, "{query} in reversed order");
                checked += scanned.len();
            }
            let pred = base.lookup_source(name).unwrap();
            let mut all = db.sorted_tuples(pred);
            assert_eq!(Selected::relation(&db, pred).collect().to_vecs(), all);
            // In another order of the values: reversed ids, ranking every id or only those
            // of the relation (few ranks per group, which places groups by rank directly).
            let mut present: Vec<u32> = all.iter().flatten().copied().collect();
            present.sort_unstable_by(|a, b| b.cmp(a));
            present.dedup();
            all.sort_by(|a, b| b.cmp(a));
            for reversed in [ValueOrder::ranked((0..3000).rev().collect()), ValueOrder::ranked(present)] {
                let mut read = Vec::new();
                let _ = Selected::relation(&db, pred).for_each_sorted(std::slice::from_ref(&reversed), |t| {
                    read.push(t.to_vec());
                    Ok::<(), ()>(())
                });
                assert_eq!(read, all);
            }
        }
        assert!(checked > 1000, "the queries select something");
    }

    #[test]
    fn ranked_sorts_agree_for_small_and_large_groups() {
        let order = ValueOrder::ranked(vec![9, 4, 0, 7, 1, 8, 2, 6, 3, 5]);
        let by_rank = |mut v: Vec<u32>| {
            let mut bits = Vec::new();
            order.sort(&mut v, &mut bits);
            assert!(bits.iter().all(|&w| w == 0), "the bitmap is left clear for the next group");
            v
        };
        assert_eq!(by_rank(vec![5, 9, 0]), vec![9, 0, 5]);
        assert_eq!(by_rank((0..10).collect()), vec![9, 4, 0, 7, 1, 8, 2, 6, 3, 5]);
        let large = ValueOrder::ranked((0..1000).rev().collect());
        let mut v = vec![3, 999, 500, 0];
        large.sort(&mut v, &mut Vec::new());
        assert_eq!(v, vec![999, 500, 3, 0]);
    }

    /// Netting a batch is applying its lines one by one: per fact, the last change wins.
    #[test]
    fn a_net_update_keeps_the_last_change_of_each_fact() {
        use super::{net_update, Sign};
        use ir::PredId;
        let (e, f) = (PredId(0), PredId(1));
        let changes = [
            (Sign::Insert, (e, vec![1, 1])),
            (Sign::Delete, (e, vec![2, 2])),
            (Sign::Delete, (e, vec![1, 1])),
            (Sign::Insert, (f, vec![1])),
            (Sign::Insert, (e, vec![2, 2])),
            (Sign::Insert, (f, vec![1])),
        ];
        let update = net_update(changes);
        assert_eq!(update.deletes, [(e, vec![1, 1])]);
        // In the order of their last changes.
        assert_eq!(update.inserts, [(e, vec![2, 2]), (f, vec![1])]);
    }
}
