//! The load stage: a program's text read in its dialect and lowered, its query, its
//! input facts and its update batches. Whatever lies in files comes in through
//! [`Inputs`], which the caller implements (the command line reads files; an embedding
//! program may give none).

use crate::input_facts::InputFacts;
use crate::options::{Dialect, Options};
use diag::{Code, Diagnostic, SourceMap};
use ir::{Fact, FileId, PredId, Program, Tuple, Update};
use std::collections::BTreeSet;
use syntax::souffle::Includes;
use syntax::{FactSink, Sign};

/// Where the load stage reads what is not the program's own text: the files a Soufflé
/// program includes, facts files, a Soufflé program's `.input` files, an update file.
pub trait Inputs {
    /// The reader of the files a Soufflé program `#include`s, adding them to `sources`.
    fn includes<'a>(&'a mut self, sources: &'a mut SourceMap) -> Box<dyn Includes + 'a>;
    /// Told before any facts are read which relations the output reads directly (a
    /// reader that splits files between processes reads these whole).
    fn read_whole(&mut self, _preds: &[PredId]) {}
    /// Loads every facts file given for a program of `dialect` into `sink`, reporting
    /// bad lines in `diagnostics`.
    fn load_facts(
        &mut self,
        dialect: Dialect,
        program: &mut Program,
        sources: &mut SourceMap,
        diagnostics: &mut Vec<Diagnostic>,
        sink: &mut dyn FactSink,
    );
    /// Loads the facts of one `.input` relation of a Soufflé program into `sink`.
    fn load_souffle_input(
        &mut self,
        input: &syntax::souffle::Io,
        program: &mut Program,
        sources: &mut SourceMap,
        diagnostics: &mut Vec<Diagnostic>,
        sink: &mut dyn FactSink,
    );
    /// The file of update batches, read into `sources`, if one was given.
    fn read_updates(&mut self, sources: &mut SourceMap) -> Option<Result<FileId, Diagnostic>>;
    /// Whether any facts file was given (facts not read cannot be known to be unused).
    fn gives_facts(&self) -> bool;
}

/// No files at all: an `#include` is reported as unreadable, and only the program's own
/// facts (and those added afterwards) are its input.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoInputs;

impl Inputs for NoInputs {
    fn includes<'a>(&'a mut self, _sources: &'a mut SourceMap) -> Box<dyn Includes + 'a> {
        Box::new(syntax::souffle::NoIncludes)
    }

    fn load_facts(
        &mut self,
        _dialect: Dialect,
        _program: &mut Program,
        _sources: &mut SourceMap,
        _diagnostics: &mut Vec<Diagnostic>,
        _sink: &mut dyn FactSink,
    ) {
    }

    fn load_souffle_input(
        &mut self,
        _input: &syntax::souffle::Io,
        _program: &mut Program,
        _sources: &mut SourceMap,
        _diagnostics: &mut Vec<Diagnostic>,
        _sink: &mut dyn FactSink,
    ) {
    }

    fn read_updates(&mut self, _sources: &mut SourceMap) -> Option<Result<FileId, Diagnostic>> {
        None
    }

    fn gives_facts(&self) -> bool {
        false
    }
}

/// One batch of input changes as written: the text of each change, and their net
/// [`Update`] (what the engines apply; the texts are for reports).
#[derive(Clone, Debug)]
pub struct Batch {
    /// `+E(a,b)` or `-E(a,b)` per change, in order.
    pub changes: Vec<String>,
    /// The net effect of the changes.
    pub update: Update,
}

/// The outcome of a failed stage: every diagnostic, errors and warnings.
#[derive(Debug)]
pub struct Failed {
    /// The texts the diagnostics point into.
    pub sources: SourceMap,
    /// The reports.
    pub diagnostics: Vec<Diagnostic>,
}

/// The I/O directives of a Soufflé program.
#[derive(Clone, Debug)]
pub struct SouffleIo {
    /// The `.input` relations.
    pub inputs: Vec<syntax::souffle::Io>,
    /// The `.output` relations.
    pub outputs: Vec<syntax::souffle::Io>,
    /// The `.printsize` relations.
    pub printsize: Vec<syntax::souffle::Io>,
    /// The attribute names of every declared relation.
    pub attributes: Vec<(PredId, Vec<String>)>,
}

/// The attribute names of `pred` in a Soufflé program's `attributes`.
pub fn attributes_of(attributes: &[(PredId, Vec<String>)], pred: PredId) -> Option<&[String]> {
    attributes.iter().find(|(p, _)| *p == pred).map(|(_, names)| names.as_slice())
}

/// A program's text: the source map holding it, and its file.
#[derive(Debug)]
pub struct ProgramText {
    /// The source map holding the text.
    pub sources: SourceMap,
    /// The program's file in it.
    pub file: FileId,
}

impl ProgramText {
    /// A program given as text, named `name` in reports.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        let mut sources = SourceMap::new();
        let file = sources.add(name.into(), text.into());
        ProgramText { sources, file }
    }
}

/// What the load stage reads beyond the program: a Soufflé program without a query
/// computes its `.output` relations when `outputs` (no query is then needed); with
/// `every_input` every `.input` relation is read, not only those the computed relations
/// depend on (the repl and explanations may ask about any relation).
#[derive(Clone, Copy, Debug, Default)]
pub struct Wanted {
    /// A Soufflé program's `.output` relations, without a query.
    pub outputs: bool,
    /// Every `.input` relation of a Soufflé program.
    pub every_input: bool,
}

/// A program read and lowered, with its inputs loaded, before any rewrite.
#[derive(Debug)]
pub struct LoadedProgram {
    /// The program's text and every other text read, for reports.
    pub sources: SourceMap,
    /// The program file.
    pub file: FileId,
    /// The lowered program, with every predicate the input named.
    pub program: Program,
    /// The input facts: the program's own and those loaded.
    pub facts: InputFacts,
    /// The update batches, in order.
    pub batches: Vec<Batch>,
    /// Warnings to show even when the later stages succeed.
    pub warnings: Vec<Diagnostic>,
    /// For a Soufflé program, its `.input`/`.output`/`.printsize` directives.
    pub souffle: Option<SouffleIo>,
    /// How many values the program itself interned: those after them came from the
    /// input (facts files and updates).
    pub program_values: usize,
}

/// Reads the program in its dialect and its query, and loads facts and updates. Facts
/// are read only when `options.evaluates`: a run that shows the program reads no facts
/// file. Of a Soufflé program's `.input` relations, only those the computed relations
/// depend on are read (as Soufflé reads them), unless `wanted.every_input`.
pub fn prepare(
    text: ProgramText,
    options: &Options,
    inputs: &mut dyn Inputs,
    wanted: Wanted,
) -> Result<LoadedProgram, Failed> {
    let ProgramText { mut sources, file } = text;
    let text = sources.text(file).to_string();
    let dialect = options.dialect_of(&text);
    let (program, mut diagnostics, souffle) = match dialect {
        Dialect::Dlc => {
            let (program, diagnostics) = syntax::parse_program(&text, file);
            (program, diagnostics, None)
        }
        Dialect::Souffle => {
            let macros = syntax::souffle::command_line_macros(&options.macros);
            let prelude = macros.map(|text| (sources.add(COMMAND_LINE, text.as_str()), text));
            let mut includes = inputs.includes(&mut sources);
            let queried = options.query.as_deref().and_then(syntax::souffle::query_relation);
            let prelude = prelude.as_ref().map(|(id, text)| (*id, text.as_str()));
            let (parsed, mut diagnostics) =
                syntax::souffle::parse_program_for_query(&text, file, &mut *includes, queried, prelude);
            match parsed {
                Some(s) => {
                    let unbound = crate::functors::bind(&s.functors, options.functors.as_deref());
                    // A run that only shows the program calls no functor.
                    if options.evaluates {
                        diagnostics.extend(unbound);
                    }
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
        return Err(Failed { sources, diagnostics: shown(in_dialect(diagnostics, dialect), options) });
    };

    if let Some(query) = &options.query {
        let qfile = sources.add("--query", query.clone());
        diagnostics.extend(match dialect {
            Dialect::Dlc => syntax::parse_query(query, qfile, &mut program),
            Dialect::Souffle => syntax::souffle::parse_query(query, qfile, &mut program),
        });
    }
    if program.query.is_none() && !diag::has_errors(&diagnostics) && !(wanted.outputs && souffle.is_some()) {
        diagnostics.push(no_query(&sources, file, dialect));
    }

    // Predicates declared from here on are named by facts files and updates only.
    let mentioned = program.preds.len();
    let program_values = program.consts.len();
    // A relation the output reads directly is read whole: where every process of a
    // cluster prints the whole output (a query's), it prints the rows it read.
    let edb = |p: &PredId| program.pred(*p).kind == ir::PredKind::Edb;
    let mut whole: Vec<PredId> = program.query.as_ref().map(|q| q.atom.pred).filter(edb).into_iter().collect();
    if let Some(io) = &souffle {
        whole.extend(io.outputs.iter().chain(&io.printsize).map(|o| o.pred).filter(edb));
    }
    inputs.read_whole(&whole);
    let mut facts = InputFacts::default();
    for fact in &program.facts {
        facts.push(fact.pred, fact.values.iter().copied());
    }
    if let Some(io) = souffle.as_ref().filter(|_| options.evaluates) {
        let needed = (!wanted.every_input).then(|| needed_inputs(options, &program, io)).flatten();
        for input in &io.inputs {
            if needed.as_ref().is_some_and(|needed| !needed[input.pred.index()]) {
                continue;
            }
            inputs.load_souffle_input(input, &mut program, &mut sources, &mut diagnostics, &mut facts);
        }
    }
    if options.evaluates {
        inputs.load_facts(dialect, &mut program, &mut sources, &mut diagnostics, &mut facts);
    }

    let batches = read_updates(options, inputs, &mut program, &mut sources, &mut diagnostics);

    let mut given: Vec<PredId> = facts.preds().collect();
    // An `.input` relation is given by its file, even an empty one.
    given.extend(souffle.iter().flat_map(|io| io.inputs.iter().map(|i| i.pred)));
    // Only warn about empty predicates when the inputs were all read: after an error the
    // warning would mostly repeat it, and without reading the files it cannot be known.
    let unread = !options.evaluates && inputs.gives_facts();
    if !diag::has_errors(&diagnostics) && !unread {
        diagnostics.extend(unused_input_warnings(&program, mentioned));
        diagnostics.extend(syntax::undefined_predicate_warnings(&program, &given));
    }

    diagnostics.extend(options.engine.unsupported(&program));
    diagnostics.extend(size_limit_unsupported(&program, options, &batches));
    let diagnostics = shown(in_dialect(diagnostics, dialect), options);
    if diag::has_errors(&diagnostics) {
        return Err(Failed { sources, diagnostics });
    }
    Ok(LoadedProgram { sources, file, program, facts, batches, warnings: diagnostics, souffle, program_values })
}

/// Why the run cannot keep a `.limitsize` of `program`, if it cannot: the limit ends a
/// fixpoint at an iteration of Soufflé's evaluation of the whole program, which the
/// magic-sets rewrite a query makes, maintenance of updates, and the differential engine
/// do not have (docs/semantics.md, Soufflé programs: `.limitsize`).
fn size_limit_unsupported(program: &Program, options: &Options, batches: &[Batch]) -> Option<Diagnostic> {
    let reason = if matches!(options.engine, crate::Engine::Differential { .. }) {
        "the differential engine"
    } else if program.query.is_some() {
        "a query"
    } else if !batches.is_empty() {
        "updates"
    } else {
        return None;
    };
    size_limit_refused(program, reason)
}

/// E0040 at the first `.limitsize` of `program`, if it has one: it cannot be kept with
/// `reason` ("updates", ...).
pub fn size_limit_refused(program: &Program, reason: &str) -> Option<Diagnostic> {
    let pred = program.size_limited()?;
    let limit = program.pred(pred).size_limit?;
    Some(
        Diagnostic::error(
            Code::SIZE_LIMIT_UNSUPPORTED,
            format!("the `.limitsize` of `{}` cannot be kept with {reason}", program.pred_name(pred)),
        )
        .with_primary(limit.span, "limited here")
        .with_note(
            "a size limit ends the fixpoint of the relation's stratum at an iteration of the whole program's \
             evaluation from its input facts; the limited relation's contents depend on where it ends",
        ),
    )
}

/// Which relations the run computes from a Soufflé program's inputs, by relation id:
/// those the query reads, or without one those the `.output` and `.printsize` relations
/// read (`None`: every relation, with `options.all`). Soufflé reads only these inputs,
/// and a file of another one may be missing.
fn needed_inputs(options: &Options, program: &Program, io: &SouffleIo) -> Option<Vec<bool>> {
    let wanted: Vec<PredId> = match &program.query {
        _ if options.all => return None,
        Some(query) => vec![query.atom.pred],
        None => io.outputs.iter().chain(&io.printsize).map(|d| d.pred).collect(),
    };
    Some(plan::needed_preds(program, &wanted))
}

/// `diagnostics` with help lines in the program's dialect: a Soufflé program's reports
/// do not suggest dlc's syntax ([`Code::souffle_help`]). Only a code's default help is
/// replaced; a help line written for the case stays.
/// The name reports give the macros of the command line (Soufflé's `-M`), as the C
/// preprocessor names them.
pub const COMMAND_LINE: &str = "<command-line>";

/// The diagnostics a run reports: without warnings when they are turned off.
fn shown(mut diagnostics: Vec<Diagnostic>, options: &Options) -> Vec<Diagnostic> {
    if !options.warnings {
        diagnostics.retain(Diagnostic::is_error);
    }
    diagnostics
}

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
pub(crate) fn no_query(sources: &SourceMap, file: FileId, dialect: Dialect) -> Diagnostic {
    let end = sources.text(file).len();
    let d = Diagnostic::error(Code::NO_QUERY, "the program has no query")
        .with_primary(diag::Span::new(file, end..end), "no `?-` line up to the end of the program");
    match dialect {
        Dialect::Dlc => d,
        Dialect::Souffle => d.with_help("pass a query in Soufflé syntax, e.g. `--query 'path(1, y)'`"),
    }
}

/// A warning for every predicate from `first_unmentioned` on: the program never
/// mentions them, so their facts or updates (which declared them) cannot change any
/// answer. Usually a facts file named after something else than its predicate.
pub fn unused_input_warnings(program: &Program, first_unmentioned: usize) -> Vec<Diagnostic> {
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
    options: &Options,
    inputs: &mut dyn Inputs,
    program: &mut Program,
    sources: &mut SourceMap,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Batch> {
    let mut batches = Vec::new();
    // All --insert/--delete flags form one batch, deletions first as the user reads them:
    // a fact given to both flags is deleted, then inserted.
    let mut flags = Vec::new();
    for (sign, atoms) in [(Sign::Delete, &options.delete), (Sign::Insert, &options.insert)] {
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
    match inputs.read_updates(sources) {
        Some(Ok(file)) => {
            let text = sources.text(file).to_string();
            let (parsed, diags) = syntax::parse_updates(&text, file, program);
            diagnostics.extend(diags);
            batches.extend(parsed.iter().map(|b| batch_of(program, &b.changes)));
        }
        Some(Err(d)) => diagnostics.push(d),
        None => {}
    }
    batches
}

/// `+E(a,b)` or `-E(a,b)`, a change as the reports list it.
pub fn change_text(program: &Program, sign: Sign, fact: &Fact) -> String {
    let sign = if sign == Sign::Insert { '+' } else { '-' };
    format!("{sign}{}", fact_text(program, fact))
}

/// A batch of these changes, in order: each text as written, and the net update.
pub fn batch_of(program: &Program, changes: &[(Sign, Fact)]) -> Batch {
    Batch {
        changes: changes.iter().map(|(sign, fact)| change_text(program, *sign, fact)).collect(),
        update: net_update(changes.iter().map(|(sign, fact)| (*sign, fact.tuple()))),
    }
}

/// The update that has the effect of applying `changes` one at a time, in order: the
/// last change of each fact wins (`+E(z,z)` then `-E(z,z)` deletes it), and each fact is
/// then inserted or deleted once. Backends apply a batch's deletions before its
/// insertions, so a fact in both lists would otherwise always end up present.
pub fn net_update(changes: impl IntoIterator<Item = (Sign, Tuple)>) -> Update {
    let changes: Vec<(Sign, Tuple)> = changes.into_iter().collect();
    let mut seen: std::collections::HashSet<&Tuple> = std::collections::HashSet::new();
    // Walking backwards, the first sighting of a fact is its last change.
    let mut last: Vec<bool> = changes.iter().rev().map(|(_, tuple)| seen.insert(tuple)).collect();
    last.reverse();
    drop(seen);
    let mut update = Update::default();
    for ((sign, tuple), last) in changes.into_iter().zip(last) {
        if last {
            let list = if sign == Sign::Insert { &mut update.inserts } else { &mut update.deletes };
            list.push(tuple);
        }
    }
    update
}

/// `E(a,b)` for a fact.
pub fn fact_text(program: &Program, fact: &Fact) -> String {
    format!("{}{}", program.display_pred(fact.pred), program.display_tuple(fact.pred, &fact.values))
}

#[cfg(test)]
mod tests {
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
