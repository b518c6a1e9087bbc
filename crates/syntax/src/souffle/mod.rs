//! The Soufflé front end: reads the stratified fragment of Soufflé's language (`.decl`,
//! `.type`, `.input`, `.output`, `.printsize`, rules with lower-case variables, negated
//! atoms and negated groups, comparisons, arithmetic, aggregates, multiple heads,
//! disjunction, `inline` relations, `eqrel` relations and `choice-domain`, components
//! (`.comp`, `.init`, qualified names `inst.r`), `#include`, `.include`, `.once` and
//! `#define`) into the native AST, which
//! the native lowering then turns into an `ir::Program`, with `.functor` declarations
//! whose calls (`@f(...)`) the caller binds to functions. Everything outside it (records,
//! stateful functors, ...) is reported as E0018 at its span rather than read approximately.
//!
//! The passes, in the order they run (each in its own module):
//!
//! 1. `preprocess`: each file lexed (`lexer`), includes spliced in, macros expanded,
//!    conditional sections read: one stream of tokens.
//! 2. `parser`: the tokens into Soufflé's own syntax tree (`tree`), with the syntax
//!    errors; each unsupported construct is a node of the tree.
//! 3. `components`: Soufflé's checks of components (E0037); each instance expanded into
//!    the declarations, types, directives and clauses it holds, named `inst.r`.
//! 4. `check::declarations`: each unsupported construct reported (E0018), `.type`
//!    definitions checked; relations, I/O directives and types gathered.
//! 5. `lower::clauses`: each clause's body expanded into disjunctive normal form; then
//!    `typing::casts`: the type each `as(x, T)` names resolved (E0038 when undefined).
//!    `check::functor_calls` resolves each `@f(...)` to its `.functor`.
//! 6. `check::subtype_mismatches`: the types of each rule's variables (only when nothing
//!    failed before).
//! 7. `inline`: `inline` relations unfolded into the clauses that use them.
//! 8. `check::uses`: relations declared twice, atoms of undeclared relations or of the
//!    wrong arity, I/O directives of undeclared relations.
//! 9. `typing`: ordering comparisons of symbols and of unsigned values marked.
//! 10. `lower::native`: the native AST, one rule per head and conjunction, with symbol
//!     `min`/`max` rewritten (`extrema`).
//!
//! The passes from 6 on see each clause as the rules it stands for (one per head and
//! disjunct), as Soufflé checks them: a variable's type, and so a comparison's, comes from
//! the atoms of its own disjunct, and an inlined atom is unfolded per disjunct. The
//! reports of all passes are then collapsed: one per distinct unsupported construct or
//! undeclared relation; a report inside an instance gets a note naming the instance
//! (`components::note_instances`).

mod check;
mod components;
mod extrema;
mod inline;
mod lexer;
mod lower;
mod parser;
mod preprocess;
mod record_inference;
pub(crate) mod records;
mod tree;
mod typing;

use crate::ast;
use diag::{Code, Diagnostic, FileId, Span};
use ir::{PredId, PredKind, PredName, Program};
use lexer::{lex, Kind};
use preprocess::{preprocess, Texts};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;
use tree::IoSettings;

/// How deeply parenthesised disjunctions may nest in a rule body.
pub const MAX_NESTING: usize = 32;
/// How many rules one clause may expand to (heads × disjuncts).
pub const MAX_EXPANSION: usize = 1024;
/// How deeply `#include`s may nest (a file including itself hits this bound).
pub const MAX_INCLUDE_DEPTH: usize = 32;

/// Reads the files that `#include` names; the library does no IO itself.
pub trait Includes {
    /// The id and text of the file `path` as included from `from`, or why it cannot be
    /// read. A relative path of `#include "path"` is looked for beside `from` first,
    /// then where one of `#include <path>` (`angled`) is looked for; the implementation
    /// says which directories those are, and names them when the file is in none.
    fn include(&mut self, from: FileId, path: &str, angled: bool) -> Result<(FileId, String), String>;

    /// What makes two reads of one file the same file, for `.once`: by default the id,
    /// which an implementation reading files gives each read anew, so it names the file
    /// as the file system knows it instead.
    fn identity(&self, file: FileId) -> String {
        file.0.to_string()
    }
}

/// No includes: every `#include` is reported as unreadable.
pub struct NoIncludes;

impl Includes for NoIncludes {
    fn include(&mut self, _from: FileId, _path: &str, _angled: bool) -> Result<(FileId, String), String> {
        Err("includes are not read here".to_string())
    }
}

/// How one `.input`, `.output` or `.printsize` relation is read or written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Io {
    pub pred: PredId,
    /// The `filename` parameter, if given; otherwise `<Rel>.facts` / `<Rel>.csv`.
    pub filename: Option<String>,
    /// The `delimiter` parameter (any text, as in Soufflé); by default a tab, or a comma
    /// with `rfc4180=true`, as in Soufflé.
    pub delimiter: String,
    /// `IO=stdout`: written to standard output instead of a file.
    pub stdout: bool,
    /// The relation's name in the directive.
    pub span: Span,
    /// How fields are written and read, by the `rfc4180` and `headers` parameters.
    pub format: IoFormat,
    /// A `compress` parameter of an `.output`, whatever its value (Soufflé's test is
    /// whether the parameter is there): the file is written gzip-compressed, named
    /// `<Rel>.csv.gz` unless `filename` names it. An `.input` file is read compressed or
    /// not, whatever its parameters say, as Soufflé reads it.
    pub compress: bool,
    /// The `attributeNames` parameter: the header line written with `headers=true` (or
    /// `-D -`) instead of the declared attribute names.
    pub attribute_names: Option<String>,
    /// What joins the declared attribute names in a header line: the `delimiter`
    /// parameter when given, otherwise a tab (also under `rfc4180=true`), as Soufflé
    /// joins them.
    pub names_delimiter: String,
    /// `IO=sqlite`: the relation is read from, or written to, an SQLite database in
    /// Soufflé's layout, instead of a delimited file.
    pub sqlite: bool,
    /// The `dbname` parameter: the database file of `IO=sqlite` when `filename` does not
    /// name it (otherwise `<Rel>.sqlite`).
    pub dbname: Option<String>,
    /// `IO=jsonfile` (`<Rel>.json` unless `filename` names it) or `IO=json` (standard
    /// output, with `stdout`): the relation as JSON, laid out so.
    pub json: Option<JsonLayout>,
    /// The relation's declared attribute names: the keys of `format=object` JSON.
    pub attributes: Vec<String>,
}

/// How `IO=json` and `IO=jsonfile` lay out a relation: a JSON array of its tuples, each
/// an array of its fields (records as arrays, `nil` as `null`), or under `format=object`
/// an object keyed by the attributes' names (records as objects keyed by their fields'
/// names), as Soufflé 2.5 writes them. A reader takes either, by the first tuple.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonLayout {
    List,
    Object,
}

/// How the fields of an `.input` file are read and those of an `.output` file written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoFormat {
    /// `rfc4180=true`: a field in double quotes is the text between them (`""` inside
    /// being one quote), and an output writes every symbol in quotes. Otherwise every
    /// field is its text, quotes included, read and written verbatim.
    pub rfc4180: bool,
    /// `headers=true`: the file's first line holds the attribute names, skipped when
    /// read and written first.
    pub headers: bool,
}

/// A Soufflé program lowered to IR, with its I/O directives.
#[derive(Clone, Debug)]
pub struct SouffleProgram {
    pub program: Program,
    pub inputs: Vec<Io>,
    pub outputs: Vec<Io>,
    pub printsize: Vec<Io>,
    /// The attribute names of every declared relation, in `.decl` order: Soufflé prints
    /// them above a relation it writes to standard output with `-D -`.
    pub attributes: Vec<(PredId, Vec<String>)>,
    /// The declared functors the rules call, in the order of their first calls: each
    /// needs a function bound ([`ir::UserFunctor::bind`]) before evaluation.
    pub functors: Vec<CalledFunctor>,
}

/// A functor a `.functor` declares and the program calls (`@f(...)`).
#[derive(Clone, Debug)]
pub struct CalledFunctor {
    /// The declaration, which every call in the program shares.
    pub functor: Arc<ir::UserFunctor>,
    /// The functor's name in its `.functor`.
    pub declared: Span,
    /// Its first call's `@f`.
    pub called: Span,
}

/// Whether `src` is a Soufflé program: some line starts with a directive (`.decl`,
/// `.type`, `.comp`, `.init`, `.output`, ...: a `.` and a letter) or with `#include` (the
/// dlc dialect has no `.` or `#` lines; a program may keep every `.decl` in an included
/// file, or in components), or nothing but comments is written (Soufflé runs an empty
/// program, where the dlc dialect asks for a query).
pub fn looks_like_souffle(src: &str) -> bool {
    let mut empty = true;
    for line in src.lines().map(str::trim_start) {
        let directive = line.strip_prefix('.').is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_alphabetic()));
        if directive || line.starts_with("#include") {
            return true;
        }
        let comment = ["//", "%", "/*", "*"].iter().any(|start| line.starts_with(start));
        empty &= line.is_empty() || comment;
    }
    empty
}

/// Parses a Soufflé program into the native AST (rules expanded: one per head and
/// disjunct; facts of derived relations become empty-body rules).
pub fn parse(src: &str, file: FileId, includes: &mut dyn Includes) -> (ast::File, Vec<Diagnostic>) {
    parse_with(src, file, includes, None)
}

/// [`parse`], after the macros of `prelude` ([`parse_program_for_query`]).
pub fn parse_with(
    src: &str,
    file: FileId,
    includes: &mut dyn Includes,
    prelude: Option<(FileId, &str)>,
) -> (ast::File, Vec<Diagnostic>) {
    let (front, mut diagnostics) = front_for_query(src, file, includes, None, prelude);
    diagnostics.sort_by_key(|d| d.primary_span().map(|s| (s.file, s.start)));
    (front.file, diagnostics)
}

/// Parses and lowers a Soufflé program. `None` when there is any error.
pub fn parse_program(
    src: &str,
    file: FileId,
    includes: &mut dyn Includes,
) -> (Option<SouffleProgram>, Vec<Diagnostic>) {
    parse_program_for_query(src, file, includes, None, None)
}

/// Parses and lowers a Soufflé program that a query on the relation `queried` will
/// select from. Such a relation is made a derived one even when only facts in the
/// program or an `.input` define it (its facts become rules with an empty body, its
/// input is read into `r_input`), since a query reads a derived relation; this is how
/// `--query` answers from a relation Soufflé holds facts in. `prelude` is the text of
/// the macros defined before the program is read ([`command_line_macros`]), and its id.
pub fn parse_program_for_query(
    src: &str,
    file: FileId,
    includes: &mut dyn Includes,
    queried: Option<&str>,
    prelude: Option<(FileId, &str)>,
) -> (Option<SouffleProgram>, Vec<Diagnostic>) {
    let (front, mut diagnostics) = front_for_query(src, file, includes, queried, prelude);
    let failed = diag::has_errors(&diagnostics);
    let (program, lowering) = crate::lower(&front.file);
    diagnostics.extend(components::note_instances(lowering, &front.origins));
    diagnostics.sort_by_key(|d| d.primary_span().map(|s| (s.file, s.start)));
    let Some(mut program) = program.filter(|_| !failed && !diag::has_errors(&diagnostics)) else {
        return (None, diagnostics);
    };
    // Declared relations that no clause mentions still exist: an `.output` of one is an
    // empty file, an `.input` of one is read (and unused).
    for relation in &front.relations {
        let name = PredName::Source(program.symbols.intern(&relation.name));
        let pred = program.declare_pred(name, relation.arity, PredKind::Edb, relation.span);
        program.pred_mut(pred).types = relation.types.iter().map(|t| typing::column_kind(t, &front.types)).collect();
    }
    let resolve = |ios: &[RawIo], program: &Program| -> Vec<Io> {
        ios.iter()
            .map(|io| Io {
                pred: program.lookup_source(&io.name).expect("every directive names a declared relation"),
                filename: io.settings.filename.clone(),
                delimiter: io.settings.delimiter.clone(),
                stdout: io.settings.stdout,
                span: io.span,
                format: io.settings.format,
                compress: io.settings.compress,
                attribute_names: io.settings.attribute_names.clone(),
                names_delimiter: io.settings.names_delimiter.clone(),
                sqlite: io.settings.sqlite,
                dbname: io.settings.dbname.clone(),
                json: io.settings.json,
                attributes: front
                    .relations
                    .iter()
                    .find(|r| r.name == io.name)
                    .map(|r| r.attributes.clone())
                    .unwrap_or_default(),
            })
            .collect()
    };
    let inputs = resolve(&front.inputs, &program);
    let outputs = resolve(&front.outputs, &program);
    let printsize = resolve(&front.printsize, &program);
    // Soufflé's JSON reader and writer know no algebraic data type: they stop at one.
    let json_adts: Vec<Diagnostic> = inputs
        .iter()
        .chain(&outputs)
        .filter(|io| io.json.is_some() && program.pred(io.pred).types.iter().any(|&t| holds_adt(&program, t)))
        .map(|io| unsupported(io.span, "`IO=json` of a relation holding an algebraic data type"))
        .collect();
    if !json_adts.is_empty() {
        diagnostics.extend(json_adts);
        return (None, diagnostics);
    }
    for limit in &front.limits {
        let pred = program.lookup_source(&limit.name).expect("every `.limitsize` names a declared relation");
        program.pred_mut(pred).size_limit = Some(ir::SizeLimit { tuples: limit.tuples, span: limit.span });
    }
    for relation in &front.relations {
        if let (Some(choice), Some(pred)) = (&relation.choice, program.lookup_source(&relation.name)) {
            program.pred_mut(pred).choice = Some(choice.clone());
        }
    }
    let attributes =
        front.relations.iter().filter_map(|r| Some((program.lookup_source(&r.name)?, r.attributes.clone()))).collect();
    let functors = front.functors;
    (Some(SouffleProgram { program, inputs, outputs, printsize, attributes, functors }), diagnostics)
}

/// Reads a `--query` in Soufflé syntax (`path(1, y)`: lower-case names are variables),
/// with or without `?-` and a final `.`, and makes it the program's query. Checked like
/// the native one: unknown predicate (E0007), input predicate (E0008), arity (E0004).
pub fn parse_query(src: &str, file: FileId, program: &mut Program) -> Vec<Diagnostic> {
    let (atom, unsupported_constructs, syntax) = parser::query(src, file);
    let mut diagnostics: Vec<Diagnostic> =
        unsupported_constructs.iter().map(|u| unsupported(u.span, &u.construct.describe())).collect();
    diagnostics.extend(syntax);
    let Some(atom) = atom else { return diagnostics };
    if !diagnostics.is_empty() {
        return diagnostics;
    }
    match crate::lower::lower_query(program, &atom) {
        Ok(query) => program.query = Some(query),
        Err(error) => diagnostics.push(error),
    }
    diagnostics
}

/// A declared relation.
struct Relation {
    name: String,
    arity: usize,
    span: Span,
    /// The attributes' type names.
    types: Vec<String>,
    /// The attributes' names.
    attributes: Vec<String>,
    /// Declared `inline`: unfolded into the clauses that use it ([`inline`]).
    inline: bool,
    /// Declared `eqrel` (binary, both columns of one type): lowering adds the rules of
    /// its reflexive, symmetric and transitive closure ([`lower::native`]).
    eqrel: bool,
    /// Its `choice-domain`, resolved to columns: set on its predicate after lowering.
    choice: Option<ir::ChoiceDomain>,
}

/// An I/O directive of one relation, before the relation is resolved.
struct RawIo {
    name: String,
    /// The relation's name in the directive.
    span: Span,
    settings: IoSettings,
}

/// What the passes made of the files.
struct Front {
    file: ast::File,
    relations: Vec<Relation>,
    inputs: Vec<RawIo>,
    outputs: Vec<RawIo>,
    printsize: Vec<RawIo>,
    /// The `.limitsize` of each relation given one.
    limits: Vec<check::RawLimit>,
    types: FxHashMap<String, Vec<String>>,
    /// The source of each item of an instance, with the instance's name.
    origins: Vec<(Span, String)>,
    functors: Vec<CalledFunctor>,
}

/// The relation a query's text names (`path` of `?- path(1, y).`, `g.path` of
/// `g.path(1, y)`), if it starts with one.
pub fn query_relation(src: &str) -> Option<&str> {
    let mut tokens = lex(src, 0).into_iter().filter(|(kind, _)| *kind != Kind::QueryOp).peekable();
    let Some((Kind::Ident, first)) = tokens.next() else { return None };
    let mut end = first.end;
    while let Some((Kind::Dot, _)) = tokens.peek() {
        tokens.next();
        match tokens.next() {
            Some((Kind::Ident, part)) => end = part.end,
            _ => return None,
        }
    }
    // Soufflé reads `g . path` as `g.path`; the relation is named without the blanks.
    let text = src.get(first.start..end)?;
    Some(text).filter(|t| !t.contains(char::is_whitespace))
}

/// The text of the `#define` lines that Soufflé's `-M "NAME=VALUE OTHER"` makes, one
/// definition a word: `NAME=VALUE` defines `NAME` as `VALUE`, `NAME` alone as `1`, as the
/// C preprocessor's `-D` does. `None` when there are none.
pub fn command_line_macros(definitions: &[String]) -> Option<String> {
    let lines: Vec<String> = definitions
        .iter()
        .flat_map(|d| d.split_whitespace())
        .map(|d| match d.split_once('=') {
            Some((name, value)) => format!("#define {name} {value}\n"),
            None => format!("#define {d} 1\n"),
        })
        .collect();
    (!lines.is_empty()).then(|| lines.concat())
}

/// Preprocesses, parses and checks; builds the native AST, with the relation a query
/// will select from made a derived one. When the preprocessor reports an error nothing
/// is parsed: Soufflé stops when its preprocessor fails, and what follows a bad
/// include or macro use would only be reported again.
fn front_for_query(
    src: &str,
    file: FileId,
    includes: &mut dyn Includes,
    queried: Option<&str>,
    prelude: Option<(FileId, &str)>,
) -> (Front, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let mut texts = Texts::new(vec![(file, src.to_string())]);
    if let Some((id, text)) = prelude {
        texts.add(id, text.to_string());
    }
    let preprocessed = preprocess(file, prelude.map(|(id, _)| id), &mut texts, includes, &mut diagnostics);
    let tokens = if diag::has_errors(&diagnostics) { Vec::new() } else { without_annotations(&preprocessed.tokens) };
    let eof = Span::new(file, src.len()..src.len());
    let (program, syntax) = parser::program(&tokens, &texts, eof);
    diagnostics.extend(syntax);
    let components::Expanded { program, origins, unexpanded } = components::expand(program, &mut diagnostics);
    let check::Declarations {
        mut relations,
        ios,
        types,
        unions,
        queries,
        mut records,
        limits,
        functors: declared_functors,
    } = check::declarations(&program, &mut diagnostics);
    let mut clauses = typing::casts(lower::clauses(program), &types, &mut diagnostics);
    let called = check::functor_calls(&mut clauses, &declared_functors, &mut diagnostics);
    let mut functors: Vec<CalledFunctor> = called
        .into_iter()
        .filter_map(|(name, call)| {
            let declared = &declared_functors[&name];
            Some(CalledFunctor { functor: declared.functor.clone()?, declared: declared.span, called: call })
        })
        .collect();
    functors.sort_by_key(|f| (f.called.file, f.called.start));
    if !diag::has_errors(&diagnostics) {
        let subtypes = check::Subtypes::new(&types, &unions);
        diagnostics.extend(check::subtype_mismatches(&clauses, &relations, &subtypes));
    }
    let inlined: Vec<inline::Inlined> = relations
        .iter()
        .filter(|r| r.inline)
        .map(|r| inline::Inlined { name: r.name.clone(), arity: r.arity, span: r.span })
        .collect();
    let io_names: Vec<(&str, Span)> = ios.iter().map(|(_, io)| (io.name.as_str(), io.span)).collect();
    let clauses = inline::unfold(clauses, &inlined, &io_names, &mut diagnostics);
    // An inlined relation is gone once unfolded; a use left behind by an error is
    // reported against its declaration, which stays.
    if !diag::has_errors(&diagnostics) {
        relations.retain(|r| !r.inline);
    }
    let clauses = records::resolve(clauses, &relations, &types, &mut records, &mut diagnostics);
    let checked = check::uses(clauses, queries, relations, ios, &unexpanded, &mut diagnostics);
    // An inlined relation is not recursive, and Soufflé limits the fixpoint of recursive
    // relations only: its `.limitsize` changes nothing.
    let limits: Vec<check::RawLimit> = limits
        .into_iter()
        .filter(|l| !inlined.iter().any(|i| i.name == l.name))
        .filter(|l| {
            let declared = checked.relations.iter().any(|r| r.name == l.name);
            let of_unexpanded = l.name.split_once('.').is_some_and(|(instance, _)| unexpanded.contains(instance));
            if !declared && !of_unexpanded {
                diagnostics.push(check::undeclared(&l.name, l.span, None));
            }
            declared
        })
        .collect();
    let clauses = typing::symbol_concatenations(checked.clauses, &checked.relations, &types);
    let clauses = typing::comparisons(clauses, &checked.relations, &types, &mut diagnostics);
    let lowered =
        lower::native(clauses, checked.queries, checked.relations, checked.ios, &types, queried, &mut diagnostics);
    let mut native = lowered.file;
    native.span = Span::new(file, 0..src.len());
    native.record_types = records.types;
    let front = Front {
        file: native,
        relations: lowered.relations,
        inputs: lowered.inputs,
        outputs: lowered.outputs,
        printsize: lowered.printsize,
        limits,
        types,
        origins,
        functors,
    };
    let mut diagnostics = collapse_unsupported(components::note_instances(diagnostics, &front.origins));
    preprocessed.mark_expansions(&mut diagnostics);
    (front, diagnostics)
}

/// `tokens` without Soufflé's annotations, `@[...]` and `@![...]` with balanced brackets
/// inside (`@[form = [=]]`), which may stand before a declaration, a clause, a field or a
/// branch and mean nothing to an evaluation. `@[` starts nothing else (a functor call is `@f`);
/// an annotation left open is kept for the parser to report.
fn without_annotations(tokens: &[preprocess::Tok]) -> Vec<preprocess::Tok> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut k = 0;
    while k < tokens.len() {
        // `@![...]` is an inner annotation, of the item around it.
        let open = match tokens.get(k + 1).map(|t| t.kind) {
            Some(Kind::Bang) => k + 2,
            _ => k + 1,
        };
        if tokens[k].kind == Kind::At && tokens.get(open).is_some_and(|t| t.kind == Kind::LBracket) {
            let mut depth = 0usize;
            let close = tokens[open..].iter().position(|t| {
                match t.kind {
                    Kind::LBracket => depth += 1,
                    Kind::RBracket => depth -= 1,
                    _ => {}
                }
                depth == 0
            });
            if let Some(close) = close {
                k = open + close + 1;
                continue;
            }
        }
        out.push(tokens[k]);
        k += 1;
    }
    out
}

/// One report per distinct unsupported construct and undeclared relation: the reports of
/// E0018 or E0019 with one message become the first of them, its message counting the
/// uses and two more as secondary labels, so that a construct a large program uses
/// everywhere is one report.
fn collapse_unsupported(diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let key = |d: &Diagnostic| {
        matches!(d.code, Code::UNSUPPORTED_SOUFFLE | Code::UNDECLARED_RELATION).then(|| d.message.clone())
    };
    let mut uses: FxHashMap<String, Vec<Span>> = FxHashMap::default();
    for d in &diagnostics {
        if let (Some(k), Some(span)) = (key(d), d.primary_span()) {
            uses.entry(k).or_default().push(span);
        }
    }
    let mut kept = Vec::new();
    for mut d in diagnostics {
        let Some(spans) = key(&d).and_then(|k| uses.remove(&k)) else {
            if key(&d).is_none() {
                kept.push(d);
            }
            continue;
        };
        let mut spans = spans;
        spans.sort_by_key(|s| (s.file, s.start));
        // A literal of a disjunction is in every rule it expands to, once in the text.
        spans.dedup();
        if spans.len() > 1 {
            d.message = format!("{} (used {} times)", d.message, spans.len());
            d.labels.retain(|l| !l.primary);
            d = d.with_primary(spans[0], "first used here");
            for span in spans.iter().skip(1).take(2) {
                d = d.with_secondary(*span, "used here too");
            }
        }
        kept.push(d);
    }
    kept
}

/// Whether values of type `ty` hold a value of an algebraic data type, in a field of a
/// record or at the top.
fn holds_adt(program: &Program, ty: ir::ValueType) -> bool {
    let types = program.consts.record_types();
    let mut seen = FxHashSet::default();
    let mut todo = vec![ty];
    while let Some(ty) = todo.pop() {
        let ir::ValueType::Record(id) = ty else { continue };
        if !seen.insert(id) {
            continue;
        }
        let record = &types[id.0 as usize];
        if record.adt {
            return true;
        }
        todo.extend(record.branches.iter().flat_map(|b| b.fields.iter().map(|f| f.ty)));
    }
    false
}

/// E0018: a construct outside the supported fragment.
pub(crate) fn unsupported(span: Span, construct: &str) -> Diagnostic {
    Diagnostic::error(Code::UNSUPPORTED_SOUFFLE, format!("{construct} is not supported"))
        .with_primary(span, format!("{construct} here"))
}

#[cfg(test)]
mod tests;
