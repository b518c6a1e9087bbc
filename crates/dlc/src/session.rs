//! The compilation pipeline as the command line drives it: parse, load facts and
//! updates, rewrite with magic sets, plan, evaluate, maintain.

use crate::cli::{DialectArg, Emit, EngineArg, MagicArg, MaintenanceArg, RunArgs};
use crate::facts::InputFacts;
use crate::load;
use diag::{Code, Diagnostic, SourceMap};
use exec::{Database, Engine, EvalOptions, Evaluation, Maintained, Maintenance, ResourceError, Update};
use ir::{Fact, PredId, Program};
use magic::MagicProgram;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

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
    (fact.pred, fact.values.iter().map(|c| c.0).collect())
}

/// Reads the program given on the command line into a fresh source map.
pub fn read_program(args: &RunArgs) -> Result<(SourceMap, ir::FileId), Failed> {
    let mut sources = SourceMap::new();
    let Some(path) = &args.program else {
        let d = Diagnostic::error(Code::UNREADABLE_FILE, "no program file given")
            .with_help("pass the program as the last argument: `dlc prog.dl`; see `dlc --help`");
        return Err(Failed { sources, diagnostics: vec![d] });
    };
    match load::read_source(path, &mut sources) {
        Ok(file) => Ok((sources, file)),
        Err(d) => Err(Failed { sources, diagnostics: vec![d] }),
    }
}

/// Runs the front end, loads facts and updates, and rewrites the program.
pub fn compile(args: &RunArgs) -> Result<Session, Failed> {
    finish(prepare(args, false)?, args)
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
}

/// Reads the program in its dialect and its query (none needed for a Soufflé program
/// when `outputs_mode`: its `.output` relations are computed instead), and loads facts
/// and updates.
pub fn prepare(args: &RunArgs, outputs_mode: bool) -> Result<Prepared, Failed> {
    let (mut sources, file) = read_program(args)?;
    let text = sources.text(file).to_string();
    let dialect = dialect(args, &text);
    let (program, mut diagnostics, souffle) = match dialect {
        Dialect::Dlc => {
            let (program, diagnostics) = syntax::parse_program(&text, file);
            (program, diagnostics, None)
        }
        Dialect::Souffle => {
            let mut includes = load::IncludeFiles { sources: &mut sources };
            let (parsed, diagnostics) = syntax::souffle::parse_program(&text, file, &mut includes);
            match parsed {
                Some(s) => {
                    let io = SouffleIo { inputs: s.inputs, outputs: s.outputs, printsize: s.printsize };
                    (Some(s.program), diagnostics, Some(io))
                }
                None => (None, diagnostics, None),
            }
        }
    };
    let Some(mut program) = program.filter(|_| !diag::has_errors(&diagnostics)) else {
        return Err(Failed { sources, diagnostics });
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
    let mut facts = InputFacts::default();
    for fact in &program.facts {
        facts.push(fact.pred, fact.values.iter().map(|c| c.0));
    }
    if let Some(io) = &souffle {
        let fact_dir = args.fact_dir.clone().unwrap_or_else(|| PathBuf::from("."));
        for input in &io.inputs {
            load::load_souffle_input(input, &fact_dir, &mut program, &mut sources, &mut diagnostics, &mut facts);
        }
    } else if let Some(dir) = &args.fact_dir {
        load::load_facts(dir, &mut program, &mut sources, &mut diagnostics, &mut facts);
    }
    for path in &args.facts {
        load::load_facts(path, &mut program, &mut sources, &mut diagnostics, &mut facts);
    }

    let batches = read_updates(args, &mut program, &mut sources, &mut diagnostics);

    let mut given: Vec<PredId> = facts.preds().collect();
    // An `.input` relation is given by its file, even an empty one.
    given.extend(souffle.iter().flat_map(|io| io.inputs.iter().map(|i| i.pred)));
    // Only warn about empty predicates when the inputs were all read: after an error the
    // warning would mostly repeat it.
    if !diag::has_errors(&diagnostics) {
        diagnostics.extend(unused_input_warnings(&program, mentioned));
        diagnostics.extend(syntax::undefined_predicate_warnings(&program, &given));
    }

    if diag::has_errors(&diagnostics) {
        return Err(Failed { sources, diagnostics });
    }
    Ok(Prepared { sources, file, program, facts, batches, warnings: diagnostics, souffle })
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
    let Prepared { sources, file, program, facts, batches, warnings: diagnostics, souffle } = prepared;
    let Some(query) = program.query.clone() else {
        let dialect = if souffle.is_some() { Dialect::Souffle } else { Dialect::Dlc };
        let diagnostics = vec![no_query(&sources, file, dialect)];
        return Err(Failed { sources, diagnostics });
    };
    // `--magic off` evaluates the original program: a rewrite too large to make must not
    // stop it, so it is made only when the output shows it.
    let shows_magic = matches!(args.emit, Emit::Adorned | Emit::MagicIr);
    let souffle = souffle.is_some();
    if args.magic_mode() == MagicArg::Off && !shows_magic {
        return Ok(Session { sources, program, magic: None, facts, batches, warnings: diagnostics, souffle });
    }
    // What is shown is SPEC's exact rewrite; what `auto` evaluates serves calls by
    // subsuming adornments.
    let subsume = args.magic_mode() == MagicArg::Auto && !shows_magic;
    let options = magic::RewriteOptions { max_adornments: args.max_adornments, subsume };
    let magic = match magic::rewrite_with(&program, &query, options) {
        Ok(magic) => magic,
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
    Ok(Session { sources, program, magic: Some(magic), facts, batches, warnings: diagnostics, souffle })
}

/// A warning for every predicate from `first_unmentioned` on: the program never
/// mentions them, so their facts or updates (which declared them) cannot change any
/// answer. Usually a facts file named after something else than its predicate.
fn unused_input_warnings(program: &Program, first_unmentioned: usize) -> Vec<Diagnostic> {
    let read: BTreeSet<PredId> = program.rules.iter().flat_map(|r| r.body.iter().map(|a| a.pred)).collect();
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
    // All --insert/--delete flags form one batch, deletions listed first as the user reads them.
    let mut flags = Batch { changes: Vec::new(), update: Update { inserts: Vec::new(), deletes: Vec::new() } };
    for (sign, atoms) in [('-', &args.delete), ('+', &args.insert)] {
        for atom in atoms {
            let file = sources.add(if sign == '+' { "--insert" } else { "--delete" }, atom.clone());
            let (fact, diags) = syntax::parse_update_atom(atom, file, program);
            diagnostics.extend(diags);
            if let Some(fact) = fact {
                flags.changes.push(format!("{sign}{}", fact_text(program, &fact)));
                let list = if sign == '+' { &mut flags.update.inserts } else { &mut flags.update.deletes };
                list.push(tuple_of(&fact));
            }
        }
    }
    if !flags.changes.is_empty() {
        batches.push(flags);
    }
    if let Some(path) = &args.updates {
        match load::read_source(path, sources) {
            Ok(file) => {
                let text = sources.text(file).to_string();
                let (parsed, diags) = syntax::parse_updates(&text, file, program);
                diagnostics.extend(diags);
                for b in parsed {
                    let mut changes: Vec<String> =
                        b.deletes.iter().map(|f| format!("-{}", fact_text(program, f))).collect();
                    changes.extend(b.inserts.iter().map(|f| format!("+{}", fact_text(program, f))));
                    batches.push(Batch {
                        changes,
                        update: Update {
                            inserts: b.inserts.iter().map(tuple_of).collect(),
                            deletes: b.deletes.iter().map(tuple_of).collect(),
                        },
                    });
                }
            }
            Err(d) => diagnostics.push(d),
        }
    }
    batches
}

/// `E(a,b)` for a fact (the printer itself is `report::fact_text`).
pub fn fact_text(program: &Program, fact: &Fact) -> String {
    let (pred, tuple) = tuple_of(fact);
    crate::report::fact_text(program, pred, &tuple)
}

pub fn engine(arg: EngineArg) -> Engine {
    match arg {
        EngineArg::Seminaive => Engine::Seminaive,
        EngineArg::Reference => Engine::Reference,
    }
}

pub fn maintenance(arg: MaintenanceArg) -> Maintenance {
    match arg {
        MaintenanceArg::Dred => Maintenance::Dred,
        MaintenanceArg::Ranked => Maintenance::Ranked,
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
    d.with_note("nothing was printed: the relations are incomplete")
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
    pub answers: Answers,
    pub elapsed: Duration,
}

/// Tuples of one arity in lexicographic order, stored flat: `arity` values per row in
/// one vector, so that millions of answers cost one allocation, not one per answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answers {
    arity: usize,
    /// Kept apart from `values` since nullary rows take no values.
    len: usize,
    values: Vec<u32>,
}

impl Answers {
    /// The rows of `arity` values each in `values`, in any order and without duplicates,
    /// sorted in place.
    pub fn sorted(arity: usize, len: usize, mut values: Vec<u32>) -> Self {
        debug_assert_eq!(values.len(), arity * len);
        match arity {
            0 | 1 => values.sort_unstable(),
            2 => {
                // Packed keys sort as the pairs do and move 8 bytes per swap.
                let mut keys: Vec<u64> =
                    values.chunks_exact(2).map(|t| u64::from(t[0]) << 32 | u64::from(t[1])).collect();
                keys.sort_unstable();
                for (t, k) in values.chunks_exact_mut(2).zip(keys) {
                    t[0] = (k >> 32) as u32;
                    t[1] = k as u32;
                }
            }
            _ => {
                let row = |i: u32| &values[i as usize * arity..(i as usize + 1) * arity];
                let mut ids: Vec<u32> = (0..len as u32).collect();
                ids.sort_unstable_by(|&a, &b| row(a).cmp(row(b)));
                let mut sorted = Vec::with_capacity(values.len());
                for id in ids {
                    sorted.extend_from_slice(row(id));
                }
                values = sorted;
            }
        }
        Answers { arity, len, values }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The rows in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u32]> + '_ {
        let arity = self.arity;
        (0..self.len).map(move |i| &self.values[i * arity..(i + 1) * arity])
    }

    /// Whether `tuple` is one of the rows (binary search).
    pub fn contains(&self, tuple: &[u32]) -> bool {
        if tuple.len() != self.arity {
            return false;
        }
        if self.arity == 0 {
            return self.len > 0;
        }
        let rows = &self.values;
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match rows[mid * self.arity..(mid + 1) * self.arity].cmp(tuple) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return true,
            }
        }
        false
    }

    /// The rows of `self` that `other` lacks, in order.
    pub fn minus(&self, other: &Answers) -> Answers {
        let mut values = Vec::new();
        let mut len = 0;
        for t in self.iter().filter(|t| !other.contains(t)) {
            values.extend_from_slice(t);
            len += 1;
        }
        Answers { arity: self.arity, len, values }
    }
}

/// The query's answers in a database of `program` (whose query names the relation to
/// read): only the matching tuples are copied out of the relation, then sorted.
pub fn answers(program: &Program, db: &Database) -> Answers {
    let query = program.query.as_ref().expect("evaluated programs carry their query");
    let arity = query.atom.args.len();
    let (mut values, mut len) = (Vec::new(), 0);
    for t in db.tuples(query.atom.pred).filter(|t| query.matches(t)) {
        values.extend_from_slice(t);
        len += 1;
    }
    Answers::sorted(arity, len, values)
}

/// Every tuple of `pred` in `db`, sorted.
pub fn relation_rows(db: &Database, pred: PredId) -> Answers {
    let (mut values, mut len) = (Vec::new(), 0);
    for t in db.tuples(pred) {
        values.extend_from_slice(t);
        len += 1;
    }
    Answers::sorted(db.arity(pred), len, values)
}

/// Plans and evaluates `program` from scratch over `facts`, with at most `max_tuples`
/// tuples per relation.
pub fn evaluate(
    program: &Program,
    facts: &InputFacts,
    engine: Engine,
    record_rounds: bool,
    progress: Option<Box<dyn FnMut(exec::Progress)>>,
    max_tuples: u32,
) -> Result<Evaluated, ResourceError> {
    evaluate_capped(program, facts, engine, record_rounds, progress, max_tuples, &[])
}

/// [`evaluate`], with relation `pred` of each `(pred, cap)` of `caps` capped at `cap`
/// tuples (an evaluation that passes one ends with [`exec::ResourceKind::Cap`]).
fn evaluate_capped(
    program: &Program,
    facts: &InputFacts,
    engine: Engine,
    record_rounds: bool,
    progress: Option<Box<dyn FnMut(exec::Progress)>>,
    max_tuples: u32,
    caps: &[(PredId, u32)],
) -> Result<Evaluated, ResourceError> {
    let start = Instant::now();
    let plan = plan::plan_program(program);
    let mut edb = edb_database(program, facts, max_tuples);
    for &(pred, cap) in caps {
        edb.set_relation_cap(pred, cap);
    }
    let eval = exec::try_evaluate(&plan, program, edb, EvalOptions { engine, record_rounds, progress })?;
    let answers = answers(program, &eval.db);
    Ok(Evaluated { eval, answers, elapsed: start.elapsed() })
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
    facts: &InputFacts,
    engine: Engine,
    record_rounds: bool,
    progress: &dyn Fn() -> Option<Box<dyn FnMut(exec::Progress)>>,
    max_tuples: u32,
) -> Result<(Evaluated, Choice), ResourceError> {
    let magic = match (mode, magic) {
        (MagicArg::Off, _) | (_, None) => {
            let choice = Choice { magic: false, reason: "--magic off".into() };
            return Ok((evaluate(source, facts, engine, record_rounds, progress(), max_tuples)?, choice));
        }
        (MagicArg::On, Some(magic)) => {
            let choice = Choice { magic: true, reason: "--magic on".into() };
            return Ok((evaluate(&magic.program, facts, engine, record_rounds, progress(), max_tuples)?, choice));
        }
        (MagicArg::Auto, Some(magic)) => magic,
    };
    let choice = auto_choice(source, magic, None);
    if !choice.magic {
        return Ok((evaluate(source, facts, engine, record_rounds, progress(), max_tuples)?, choice));
    }
    let caps = demand_caps(source, magic);
    let start = Instant::now();
    match evaluate_capped(&magic.program, facts, engine, record_rounds, progress(), max_tuples, &caps) {
        Ok(mut run) => {
            // Maintenance must not stop at a cap: from here on, only the user's limit holds.
            run.eval.db.set_tuple_limit(max_tuples);
            Ok((run, choice))
        }
        Err(ResourceError { pred, kind: exec::ResourceKind::Cap { cap } }) => {
            let abandoned = start.elapsed();
            let mut run = evaluate(source, facts, engine, record_rounds, progress(), max_tuples)?;
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
    derived_preds(program).into_iter().map(|p| (p, db.len(p))).collect()
}

/// The answer of one update batch, with the before/after difference of the query's answers.
pub struct BatchOutcome {
    pub report: exec::UpdateReport,
    /// The strategy that produced the report.
    pub maintenance: Maintenance,
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
    pub state: Maintained,
    maintenance: Maintenance,
    /// The input as the batches left it, kept apart from the maintained database: an
    /// independent record for `--check` and for the recomputation a trace reports. Only
    /// kept when asked for, since it costs an allocation per fact; otherwise the input
    /// relations of the maintained database are the input.
    record: Option<BTreeSet<Tuple>>,
    /// `--max-tuples`, for the recomputations [`Maintainer::apply`] makes.
    max_tuples: u32,
}

impl Maintainer {
    /// Keeps `eval`, an evaluation of `program` over `facts` (by [`evaluate`]), for
    /// updates. With `keep_record`, the input is also recorded apart ([`Maintainer::apply`]
    /// can then recompute from it).
    pub fn from_evaluation(
        program: Program,
        eval: Evaluation,
        facts: &InputFacts,
        maintenance: Maintenance,
        keep_record: bool,
        max_tuples: u32,
    ) -> Result<Self, ResourceError> {
        let plan = plan::plan_program(&program);
        let state = Maintained::try_from_evaluation(plan, &program, eval, maintenance)?;
        Ok(Self::keeping(program, state, facts, maintenance, keep_record, max_tuples))
    }

    fn keeping(
        program: Program,
        state: Maintained,
        facts: &InputFacts,
        maintenance: Maintenance,
        keep_record: bool,
        max_tuples: u32,
    ) -> Self {
        let record = keep_record.then(|| facts.iter().map(|(pred, tuple)| (pred, tuple.to_vec())).collect());
        Maintainer { program, state, maintenance, record, max_tuples }
    }

    /// The current input facts: the record if kept, else the maintained input relations.
    pub fn input_facts(&self) -> InputFacts {
        match &self.record {
            Some(record) => record.iter().collect(),
            None => {
                let mut facts = InputFacts::default();
                let db = self.state.db();
                for pred in self.program.pred_ids().filter(|&p| self.program.pred(p).kind == ir::PredKind::Edb) {
                    for tuple in db.tuples(pred) {
                        facts.push(pred, tuple.iter().copied());
                    }
                }
                facts
            }
        }
    }

    /// Applies one batch; with `recompute`, also evaluates the new input from scratch to
    /// measure its work and (with `check`) to compare every relation. Both need the record
    /// (`keep_record`); without it they are skipped.
    pub fn apply(&mut self, update: &Update, recompute: bool, check: bool) -> Result<BatchOutcome, ResourceError> {
        let before = answers(&self.program, self.state.db());
        let start = Instant::now();
        let report = self.state.try_apply(update)?;
        let elapsed = start.elapsed();
        if let Some(record) = &mut self.record {
            for t in &update.deletes {
                record.remove(t);
            }
            for t in &update.inserts {
                record.insert(t.clone());
            }
        }
        let after = answers(&self.program, self.state.db());
        let (mut recompute_work, mut mismatches) = (None, Vec::new());
        if (recompute || check) && self.record.is_some() {
            let facts = self.input_facts();
            let fresh = evaluate(&self.program, &facts, Engine::Seminaive, false, None, self.max_tuples)?;
            recompute_work = Some(fresh.eval.work);
            if check {
                mismatches = self
                    .program
                    .pred_ids()
                    .filter(|&p| fresh.eval.db.sorted_tuples(p) != self.state.db().sorted_tuples(p))
                    .collect();
            }
        }
        Ok(BatchOutcome {
            answers_added: after.minus(&before),
            answers_removed: before.minus(&after),
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
    use super::Answers;

    fn rows(a: &Answers) -> Vec<Vec<u32>> {
        a.iter().map(<[u32]>::to_vec).collect()
    }

    #[test]
    fn answers_sort_rows_lexicographically_at_every_arity() {
        let one = Answers::sorted(1, 3, vec![5, 1, 3]);
        assert_eq!(rows(&one), vec![vec![1], vec![3], vec![5]]);
        let two = Answers::sorted(2, 3, vec![2, 1, 1, 9, 2, 0]);
        assert_eq!(rows(&two), vec![vec![1, 9], vec![2, 0], vec![2, 1]]);
        let three = Answers::sorted(3, 3, vec![1, 2, 3, 0, 9, 9, 1, 2, 0]);
        assert_eq!(rows(&three), vec![vec![0, 9, 9], vec![1, 2, 0], vec![1, 2, 3]]);
        let nullary = Answers::sorted(0, 1, Vec::new());
        assert_eq!(rows(&nullary), vec![Vec::<u32>::new()]);
        assert!(nullary.contains(&[]));
        assert!(!Answers::sorted(0, 0, Vec::new()).contains(&[]));
    }

    #[test]
    fn answers_difference_keeps_order() {
        let before = Answers::sorted(3, 3, vec![1, 2, 3, 0, 9, 9, 4, 4, 4]);
        let after = Answers::sorted(3, 2, vec![4, 4, 4, 1, 1, 1]);
        assert!(before.contains(&[0, 9, 9]) && !before.contains(&[1, 1, 1]));
        assert_eq!(rows(&before.minus(&after)), vec![vec![0, 9, 9], vec![1, 2, 3]]);
        assert_eq!(rows(&after.minus(&before)), vec![vec![1, 1, 1]]);
    }
}
