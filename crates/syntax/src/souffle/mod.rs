//! The Soufflé front end: reads the stratified fragment of Soufflé's language without
//! arithmetic (`.decl`, `.input`, `.output`, `.printsize`, rules with lower-case variables,
//! negated atoms and negated groups, comparisons, multiple heads, disjunction, `#include`,
//! `.include`, `.once` and `#define`) into
//! the native AST, which the native lowering then turns into an `ir::Program`. Everything
//! outside it (arithmetic, aggregates, functors, components, ...) is reported as E0018
//! at its span rather than read approximately.
//!
//! The grammar is small and has no nesting except parenthesised disjunctions, whose depth
//! is bounded ([`MAX_NESTING`]), so it is parsed by hand: statements are `.`-terminated
//! clauses or directives whose end their shape decides, and newlines carry no meaning.

mod extrema;
mod inline;
mod lexer;

use crate::ast::{self, Statement, TermKind};
use crate::lexer::unescape;
use diag::{Code, Diagnostic, FileId, Span};
use ir::{PredId, PredKind, PredName, Program, ValueType};
use lexer::{lex, Kind};
use std::collections::{HashMap, HashSet};

/// Soufflé's built-in functors of more than one letter, which dlc does not compute.
const SOUFFLE_FUNCTORS: &[&str] = &[
    "cat",
    "ord",
    "strlen",
    "substr",
    "to_number",
    "to_string",
    "to_unsigned",
    "to_float",
    "itou",
    "itof",
    "utoi",
    "utof",
    "ftoi",
    "ftou",
    "autoinc",
];

/// How deeply parenthesised disjunctions may nest in a rule body.
pub const MAX_NESTING: usize = 32;
/// How many rules one clause may expand to (heads × disjuncts).
pub const MAX_EXPANSION: usize = 1024;
/// How deeply `#include`s may nest (a file including itself hits this bound).
pub const MAX_INCLUDE_DEPTH: usize = 32;

/// Reads the files that `#include` names; the library does no IO itself.
pub trait Includes {
    /// The id and text of the file `path` as included from `from` (a relative path is
    /// relative to `from`'s directory), or why it cannot be read.
    fn include(&mut self, from: FileId, path: &str) -> Result<(FileId, String), String>;

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
    fn include(&mut self, _from: FileId, _path: &str) -> Result<(FileId, String), String> {
        Err("includes are not read here".to_string())
    }
}

/// How one `.input`, `.output` or `.printsize` relation is read or written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Io {
    pub pred: PredId,
    /// The `filename` parameter, if given; otherwise `<Rel>.facts` / `<Rel>.csv`.
    pub filename: Option<String>,
    /// The `delimiter` parameter (one character); by default a tab, or a comma with
    /// `rfc4180=true`, as in Soufflé.
    pub delimiter: char,
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
    pub names_delimiter: char,
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
}

/// Whether `src` is a Soufflé program: some line starts with `.decl`, or with
/// `#include` (the dlc dialect has no `#` lines; a program may keep every `.decl` in an
/// included file).
pub fn looks_like_souffle(src: &str) -> bool {
    src.lines()
        .map(str::trim_start)
        .any(|line| line.starts_with(".decl") || line.starts_with("#include") || line.starts_with(".include"))
}

/// Parses a Soufflé program into the native AST (rules expanded: one per head and
/// disjunct; facts of derived relations become empty-body rules).
pub fn parse(src: &str, file: FileId, includes: &mut dyn Includes) -> (ast::File, Vec<Diagnostic>) {
    let (front, mut diagnostics) = front(src, file, includes);
    diagnostics.sort_by_key(|d| d.primary_span().map(|s| (s.file, s.start)));
    (front.file, diagnostics)
}

/// Parses and lowers a Soufflé program. `None` when there is any error.
pub fn parse_program(
    src: &str,
    file: FileId,
    includes: &mut dyn Includes,
) -> (Option<SouffleProgram>, Vec<Diagnostic>) {
    parse_program_for_query(src, file, includes, None)
}

/// Parses and lowers a Soufflé program that a query on the relation `queried` will
/// select from. Such a relation is made a derived one even when only facts in the
/// program or an `.input` define it (its facts become rules with an empty body, its
/// input is read into `r_input`), since a query reads a derived relation; this is how
/// `--query` answers from a relation Soufflé holds facts in.
pub fn parse_program_for_query(
    src: &str,
    file: FileId,
    includes: &mut dyn Includes,
    queried: Option<&str>,
) -> (Option<SouffleProgram>, Vec<Diagnostic>) {
    let (front, mut diagnostics) = front_for_query(src, file, includes, queried);
    let failed = diag::has_errors(&diagnostics);
    let (program, lowering) = crate::lower(&front.file);
    diagnostics.extend(lowering);
    diagnostics.sort_by_key(|d| d.primary_span().map(|s| (s.file, s.start)));
    let Some(mut program) = program.filter(|_| !failed && !diag::has_errors(&diagnostics)) else {
        return (None, diagnostics);
    };
    // Declared relations that no clause mentions still exist: an `.output` of one is an
    // empty file, an `.input` of one is read (and unused).
    for decl in &front.decls {
        let name = PredName::Source(program.symbols.intern(&decl.name));
        let pred = program.declare_pred(name, decl.arity, PredKind::Edb, decl.span);
        program.pred_mut(pred).types = decl.types.iter().map(|t| column_kind(t, &front.types)).collect();
    }
    let resolve = |ios: &[RawIo], program: &Program| -> Vec<Io> {
        ios.iter()
            .map(|io| Io {
                pred: program.lookup_source(&io.name).expect("every directive names a declared relation"),
                filename: io.filename.clone(),
                delimiter: io.delimiter,
                stdout: io.stdout,
                span: io.span,
                format: io.format,
                compress: io.compress,
                attribute_names: io.attribute_names.clone(),
                names_delimiter: io.names_delimiter,
            })
            .collect()
    };
    let inputs = resolve(&front.inputs, &program);
    let outputs = resolve(&front.outputs, &program);
    let printsize = resolve(&front.printsize, &program);
    let attributes =
        front.decls.iter().filter_map(|d| Some((program.lookup_source(&d.name)?, d.attributes.clone()))).collect();
    (Some(SouffleProgram { program, inputs, outputs, printsize, attributes }), diagnostics)
}

/// Reads a `--query` in Soufflé syntax (`path(1, y)`: lower-case names are variables),
/// with or without `?-` and a final `.`, and makes it the program's query. Checked like
/// the native one: unknown predicate (E0007), input predicate (E0008), arity (E0004).
pub fn parse_query(src: &str, file: FileId, program: &mut Program) -> Vec<Diagnostic> {
    let texts = Texts { files: vec![(file, src.to_string())] };
    let tokens: Vec<Tok> =
        lex(src, 0).into_iter().map(|(kind, range)| Tok { kind, span: Span::new(file, range) }).collect();
    let mut parser = Parser::new(&tokens, &texts, Span::new(file, src.len()..src.len()));
    parser.eat(Kind::QueryOp);
    let atom = parser.atom();
    if atom.is_ok() {
        parser.eat(Kind::Dot);
        if let Some(extra) = parser.peek() {
            let found = parser.describe(Some(extra));
            parser.syntax(extra.span, format!("expected the end of the query, found {found}"));
        }
    }
    let mut diagnostics = parser.diagnostics;
    let Ok(atom) = atom else { return diagnostics };
    if !diagnostics.is_empty() {
        return diagnostics;
    }
    match crate::lower::lower_query(program, &atom) {
        Ok(query) => program.query = Some(query),
        Err(error) => diagnostics.push(error),
    }
    diagnostics
}

/// A token: its kind, and where it is (its text is the source under the span).
#[derive(Clone, Copy, Debug)]
struct Tok {
    kind: Kind,
    span: Span,
}

/// The texts of the files read, for the text of a token.
struct Texts {
    files: Vec<(FileId, String)>,
}

impl Texts {
    fn text(&self, span: Span) -> &str {
        self.files.iter().find(|(f, _)| *f == span.file).map_or("", |(_, t)| t.get(span.range()).unwrap_or(""))
    }

    fn file_text(&self, file: FileId) -> &str {
        self.files.iter().find(|(f, _)| *f == file).map_or("", |(_, t)| t)
    }
}

/// A `.decl`.
struct Decl {
    name: String,
    arity: usize,
    span: Span,
    /// The attributes' type names.
    types: Vec<String>,
    /// The attributes' names.
    attributes: Vec<String>,
    /// Declared `inline`: unfolded into the clauses that use it ([`inline`]).
    inline: bool,
}

/// An I/O directive before its relation is resolved.
struct RawIo {
    name: String,
    filename: Option<String>,
    delimiter: char,
    stdout: bool,
    span: Span,
    format: IoFormat,
    compress: bool,
    attribute_names: Option<String>,
    names_delimiter: char,
}

/// The IO parameters of Soufflé 2.5 that dlc knows: those it reads or writes by, and
/// `dbname`, which only `IO=sqlite` reads (itself refused). Any other parameter is
/// ignored with a warning naming the nearest of these, as Soufflé ignores it silently.
const IO_PARAMETERS: &[&str] =
    &["IO", "filename", "delimiter", "rfc4180", "headers", "compress", "attributeNames", "dbname", "columns"];

/// What the parser and the checks made of the files.
struct Front {
    file: ast::File,
    decls: Vec<Decl>,
    inputs: Vec<RawIo>,
    outputs: Vec<RawIo>,
    printsize: Vec<RawIo>,
    types: HashMap<String, Vec<String>>,
}

/// The kind of `ty`: a number type when it is `number`, `unsigned`, or defined from number
/// types only (unsigned if any of them is `unsigned`: Soufflé rejects a union of both),
/// otherwise a symbol type. Definitions are followed with a worklist and a visited set, so
/// a cycle ends.
fn column_kind(ty: &str, types: &HashMap<String, Vec<String>>) -> ValueType {
    let mut seen = HashSet::new();
    let mut worklist = vec![ty];
    let mut kind = ValueType::Number;
    while let Some(t) = worklist.pop() {
        match t {
            "number" => {}
            "unsigned" => kind = ValueType::Unsigned,
            _ => match types.get(t) {
                Some(from) if seen.insert(t) => worklist.extend(from.iter().map(String::as_str)),
                Some(_) => {}
                None => return ValueType::Symbol,
            },
        }
    }
    kind
}

/// E0025 for each cycle of `.type` definitions (`.type A = B`, `.type B = A`), once per
/// cycle, at its first definition: such a type never reaches `symbol` or `number`.
fn type_cycles(types: &HashMap<String, Vec<String>>, spans: &[(String, Span)]) -> Vec<Diagnostic> {
    // The types reachable through the definitions of `ty`.
    let reached = |ty: &str| -> HashSet<String> {
        let mut seen: HashSet<String> = HashSet::new();
        let mut worklist: Vec<&str> = types.get(ty).map_or(Vec::new(), |f| f.iter().map(String::as_str).collect());
        while let Some(t) = worklist.pop() {
            if seen.insert(t.to_string()) {
                worklist.extend(types.get(t).into_iter().flatten().map(String::as_str));
            }
        }
        seen
    };
    let mut reported: HashSet<&str> = HashSet::new();
    let mut diagnostics = Vec::new();
    for (name, span) in spans {
        if reported.contains(name.as_str()) {
            continue;
        }
        let from_name = reached(name);
        if !from_name.contains(name) {
            continue;
        }
        let members: Vec<&(String, Span)> =
            spans.iter().filter(|(m, _)| from_name.contains(m) && reached(m).contains(name)).collect();
        let names: Vec<String> = members.iter().map(|(m, _)| format!("`{m}`")).collect();
        let message = match names.as_slice() {
            [one] => format!("the type {one} is defined from itself, never from `symbol` or `number`"),
            _ => format!("the types {} are defined from each other, never from `symbol` or `number`", names.join(", ")),
        };
        let mut d =
            Diagnostic::error(Code::TYPE_CYCLE, message).with_primary(*span, format!("`{name}` is defined here"));
        for (member, at) in members.iter().filter(|(m, _)| m != name) {
            d = d.with_secondary(*at, format!("`{member}` here"));
        }
        reported.extend(members.iter().map(|(m, _)| m.as_str()));
        diagnostics.push(d);
    }
    diagnostics
}

/// The relation a query's text names (`path` of `?- path(1, y).`), if it starts with one.
pub fn query_relation(src: &str) -> Option<&str> {
    let mut tokens = lex(src, 0).into_iter().filter(|(kind, _)| *kind != Kind::QueryOp);
    match tokens.next() {
        Some((Kind::Ident, range)) => src.get(range),
        _ => None,
    }
}

/// The order of Soufflé's types: `.type A <: B` makes `A` a subtype of `B`, `.type U = A
/// | B` makes `A` and `B` subtypes of `U`, and `.type N = M` makes `N` another name of `M`.
struct Subtypes<'t> {
    /// Each known type (defined or primitive) with the types it is a subtype of, itself
    /// included.
    ancestors: HashMap<&'t str, HashSet<&'t str>>,
    /// The kind of each known type, so that a mix of kinds is left to E0028.
    kinds: HashMap<&'t str, ValueType>,
}

impl<'t> Subtypes<'t> {
    fn new(types: &'t HashMap<String, Vec<String>>, unions: &HashSet<String>) -> Self {
        let mut up: HashMap<&str, Vec<&str>> = HashMap::new();
        for (name, members) in types {
            for member in members {
                if unions.contains(name) {
                    up.entry(member).or_default().push(name);
                }
                if !unions.contains(name) || members.len() == 1 {
                    up.entry(name).or_default().push(member);
                }
            }
        }
        let known = types.keys().map(String::as_str).chain(["symbol", "number", "unsigned", "float"]);
        let mut ancestors = HashMap::new();
        let mut kinds = HashMap::new();
        for ty in known {
            let mut seen: HashSet<&str> = HashSet::new();
            let mut worklist = vec![ty];
            while let Some(t) = worklist.pop() {
                if seen.insert(t) {
                    worklist.extend(up.get(t).into_iter().flatten().copied());
                }
            }
            ancestors.insert(ty, seen);
            kinds.insert(ty, column_kind(ty, types));
        }
        Subtypes { ancestors, kinds }
    }

    /// Whether `a` is a subtype of `b` (or `b` itself).
    fn within(&self, a: &str, b: &str) -> bool {
        self.ancestors.get(a).is_some_and(|up| up.contains(b))
    }
}

/// E0035 where a variable's types contradict each other, as Soufflé 2.5 checks them: the
/// columns of the positive body atoms a variable appears in must have a common subtype
/// (`a(x), b(x)` with `a`'s column of type `A <: symbol` and `b`'s of `B <: symbol` has
/// none: "Unable to deduce type"), and every such common subtype must be one of a head
/// column it is written to ("not a subtype of its declared type"). Variables in columns of
/// unknown types, or of types of more than one kind (E0028), are left out.
fn subtype_mismatches(clauses: &[Clause], decls: &[Decl], subtypes: &Subtypes) -> Vec<Diagnostic> {
    let declared: HashMap<&str, &Decl> = decls.iter().map(|d| (d.name.as_str(), d)).collect();
    let columns = |atom: &'_ ast::Atom| -> Vec<(String, String, Span)> {
        let Some(decl) = declared.get(atom.pred.text.as_str()).filter(|d| d.arity == atom.args.len()) else {
            return Vec::new();
        };
        atom.args
            .iter()
            .zip(&decl.types)
            .filter_map(|(term, ty)| match &term.kind {
                TermKind::Var(v) if subtypes.kinds.contains_key(ty.as_str()) => {
                    Some((v.clone(), ty.clone(), term.span))
                }
                _ => None,
            })
            .collect()
    };
    let mut diagnostics = Vec::new();
    for clause in clauses {
        for conjunction in clause.body.iter().flatten() {
            let mut bound: HashMap<String, Vec<(String, Span)>> = HashMap::new();
            for atom in conjunction.iter().filter_map(|l| match l {
                ast::Literal::Atom(a) => Some(a),
                _ => None,
            }) {
                for (var, ty, span) in columns(atom) {
                    bound.entry(var).or_default().push((ty, span));
                }
            }
            // The common subtypes of each variable's columns.
            let mut common: HashMap<&str, Vec<&str>> = HashMap::new();
            for (var, uses) in &bound {
                let kind = subtypes.kinds[uses[0].0.as_str()];
                if uses.iter().any(|(ty, _)| subtypes.kinds[ty.as_str()] != kind) {
                    continue;
                }
                let below: Vec<&str> = subtypes
                    .ancestors
                    .keys()
                    .copied()
                    .filter(|s| uses.iter().all(|(ty, _)| subtypes.within(s, ty)))
                    .collect();
                if below.is_empty() {
                    let (first, second) = (&uses[0], uses.iter().find(|(t, _)| !subtypes.within(&uses[0].0, t)));
                    let (other, at) = second.map_or((first.0.as_str(), first.1), |(t, s)| (t.as_str(), *s));
                    diagnostics.push(
                        Diagnostic::error(
                            Code::SUBTYPE_MISMATCH,
                            format!("`{var}` would be of type `{}` and of type `{other}`, which share no value", first.0),
                        )
                        .with_primary(at, format!("`{var}` of type `{other}` here"))
                        .with_secondary(first.1, format!("of type `{}` here", first.0))
                        .with_help("bind the variable in columns of one type, or of types one of which is a subtype of the other"),
                    );
                    continue;
                }
                common.insert(var, below);
            }
            for head in &clause.heads {
                for (var, ty, span) in columns(head) {
                    let Some(below) = common.get(var.as_str()) else { continue };
                    if subtypes.kinds[ty.as_str()] != subtypes.kinds[below[0]] {
                        continue;
                    }
                    if let Some(outside) = below.iter().find(|s| !subtypes.within(s, &ty)) {
                        let from = &bound[&var][0];
                        diagnostics.push(
                            Diagnostic::error(
                                Code::SUBTYPE_MISMATCH,
                                format!("`{var}` of type `{}` is written to a column of type `{ty}`", from.0),
                            )
                            .with_primary(span, format!("a column of type `{ty}`, of which `{outside}` is no subtype"))
                            .with_secondary(from.1, format!("`{var}` is a `{}` here", from.0))
                            .with_help(format!(
                                "declare the column with a type `{}` is a subtype of, or bind `{var}` in a column of type `{ty}`",
                                from.0
                            )),
                        );
                    }
                }
            }
        }
    }
    diagnostics
}

/// E0034 for a type defined twice (at the second definition) and for a union of types of
/// more than one primitive type (`.type U = number | symbol`; Soufflé: "multiple primitive
/// types in union"), once per union, at its definition.
fn type_definitions(types: &HashMap<String, Vec<String>>, spans: &[(String, Span)]) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let mut first: HashMap<&str, Span> = HashMap::new();
    for (name, span) in spans {
        if let Some(&at) = first.get(name.as_str()) {
            diagnostics.push(
                Diagnostic::error(Code::INVALID_DECLARATION, format!("the type `{name}` is defined twice"))
                    .with_primary(*span, "defined again here")
                    .with_secondary(at, "first defined here")
                    .with_help("define each type once"),
            );
            continue;
        }
        first.insert(name, *span);
        let Some(members) = types.get(name).filter(|m| m.len() > 1) else { continue };
        // The primitive types each member reaches through the definitions, followed with
        // a worklist and a visited set so that a cycle (reported apart) ends.
        let mut primitives: Vec<&str> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        let mut worklist: Vec<&str> = members.iter().map(String::as_str).collect();
        while let Some(t) = worklist.pop() {
            match t {
                "number" | "unsigned" | "symbol" | "float" if !primitives.contains(&t) => primitives.push(t),
                "number" | "unsigned" | "symbol" | "float" => {}
                _ if seen.insert(t) => worklist.extend(types.get(t).into_iter().flatten().map(String::as_str)),
                _ => {}
            }
        }
        if primitives.len() > 1 {
            primitives.sort_unstable();
            let list = primitives.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ");
            diagnostics.push(
                Diagnostic::error(
                    Code::INVALID_DECLARATION,
                    format!("the union type `{name}` mixes the primitive types {list}"),
                )
                .with_primary(*span, "defined here")
                .with_help("a union joins types of one primitive type: all symbols, all numbers or all unsigneds"),
            );
        }
    }
    diagnostics
}

/// Preprocesses, parses and checks declarations; builds the native AST.
fn front(src: &str, file: FileId, includes: &mut dyn Includes) -> (Front, Vec<Diagnostic>) {
    front_for_query(src, file, includes, None)
}

/// [`front`], with the relation a query will select from made a derived one.
fn front_for_query(
    src: &str,
    file: FileId,
    includes: &mut dyn Includes,
    queried: Option<&str>,
) -> (Front, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let mut texts = Texts { files: vec![(file, src.to_string())] };
    // The names of the function-like macros reported: their uses read as atoms of
    // undeclared relations, which are not reported again.
    let mut skipped_macros = HashSet::new();
    let tokens = preprocess(file, &mut texts, includes, &mut diagnostics, &mut skipped_macros);
    let eof = Span::new(file, src.len()..src.len());
    let mut parser = Parser::new(&tokens, &texts, eof);
    parser.program();
    diagnostics.append(&mut parser.diagnostics);
    let Parser { clauses, queries, mut decls, ios, types, type_spans, union_types, inline_excluded, .. } = parser;
    for decl in decls.iter_mut().filter(|d| inline_excluded.contains(&d.name)) {
        decl.inline = false;
    }
    diagnostics.extend(type_cycles(&types, &type_spans));
    diagnostics.extend(type_definitions(&types, &type_spans));
    if !diag::has_errors(&diagnostics) {
        diagnostics.extend(subtype_mismatches(&clauses, &decls, &Subtypes::new(&types, &union_types)));
    }
    let inlined: Vec<inline::Inlined> = decls
        .iter()
        .filter(|d| d.inline)
        .map(|d| inline::Inlined { name: d.name.clone(), arity: d.arity, span: d.span })
        .collect();
    let io_names: Vec<(&str, Span)> = ios.iter().map(|(_, io)| (io.name.as_str(), io.span)).collect();
    let clauses = inline::unfold(clauses, &inlined, &io_names, &mut diagnostics);
    // An inlined relation is gone once unfolded; a use left behind by an error is
    // reported against its declaration, which stays.
    if !diag::has_errors(&diagnostics) {
        decls.retain(|d| !d.inline);
    }
    let parsed = Parsed { clauses, queries, decls, ios };
    let mut front = check(parsed, &types, &skipped_macros, queried, &mut diagnostics);
    front.file.span = Span::new(file, 0..src.len());
    front.types = types;
    (front, collapse_unsupported(diagnostics))
}

/// One report per distinct unsupported construct and undeclared relation: the reports of
/// E0018 or E0019 with one message become the first of them, its message counting the
/// uses and two more as secondary labels, so that a construct a large program uses
/// everywhere is one report.
fn collapse_unsupported(diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let key = |d: &Diagnostic| {
        matches!(d.code, Code::UNSUPPORTED_SOUFFLE | Code::UNDECLARED_RELATION).then(|| d.message.clone())
    };
    let mut uses: HashMap<String, Vec<Span>> = HashMap::new();
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

/// E0018: a construct outside the supported fragment.
fn unsupported(span: Span, construct: &str) -> Diagnostic {
    Diagnostic::error(Code::UNSUPPORTED_SOUFFLE, format!("{construct} is not supported"))
        .with_primary(span, format!("{construct} here"))
}

/// E0012: includes nested deeper than [`MAX_INCLUDE_DEPTH`].
fn too_deep(span: Span) -> Diagnostic {
    Diagnostic::error(Code::UNREADABLE_FILE, format!("includes nested more than {MAX_INCLUDE_DEPTH} deep"))
        .with_primary(span, "this include")
        .with_help("does a file include itself?")
}

/// E0012: the file `path` cannot be included.
fn cannot_include(path: &str, error: &str, span: Span) -> Diagnostic {
    Diagnostic::error(Code::UNREADABLE_FILE, format!("cannot include `{path}`: {error}"))
        .with_primary(span, "included here")
        .with_help("a relative path is relative to the including file's directory")
}

/// Runs the preprocessor: `#include "file"` splices the tokens of that file in (their
/// spans point into it), `#define NAME tokens` replaces later uses of the name; any other
/// `#` line is E0018. Included files are processed with an explicit stack.
fn preprocess(
    file: FileId,
    texts: &mut Texts,
    includes: &mut dyn Includes,
    diagnostics: &mut Vec<Diagnostic>,
    skipped_macros: &mut HashSet<String>,
) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut defines: HashMap<String, Vec<Tok>> = HashMap::new();
    let lexed = |file: FileId, texts: &Texts| -> Vec<Tok> {
        lex(texts.file_text(file), 0)
            .into_iter()
            .map(|(kind, range)| Tok { kind, span: Span::new(file, range) })
            .collect()
    };
    // Each entry: a file's tokens, reversed so that `pop` yields them in order.
    let mut stack: Vec<Vec<Tok>> = vec![lexed(file, texts).into_iter().rev().collect()];
    // The files that have passed a `.once`.
    let mut once: HashSet<String> = HashSet::new();
    // The open conditional sections, innermost last.
    let mut conditions: Vec<Condition> = Vec::new();
    while let Some(top) = stack.last_mut() {
        let Some(tok) = top.pop() else {
            stack.pop();
            continue;
        };
        // Conditional sections, as the C preprocessor Soufflé runs reads them: the tokens
        // of a section whose condition fails are dropped.
        if tok.kind == Kind::Hash {
            let (word, rest) = hash_word(texts.text(tok.span));
            if matches!(word, "ifdef" | "ifndef" | "if" | "elif" | "else" | "endif") {
                let is_defined = |name: &str| defines.contains_key(name) || skipped_macros.contains(name);
                let enclosing = |conditions: &[Condition]| conditions.iter().all(|c| c.active);
                let mut test = |word: &str| match condition(word, rest, &is_defined, &defines, texts) {
                    Some(value) => value,
                    None => {
                        diagnostics.push(unsupported(tok.span, &format!("the condition of `#{word} {}`", rest.trim())));
                        false
                    }
                };
                match word {
                    "ifdef" | "ifndef" | "if" => {
                        let active = enclosing(&conditions) && test(word);
                        conditions.push(Condition { active, taken: active, span: tok.span });
                    }
                    _ if conditions.is_empty() => diagnostics.push(
                        Diagnostic::error(Code::PARSE, format!("`#{word}` without an `#if`"))
                            .with_primary(tok.span, "here")
                            .with_help("open the section with `#ifdef NAME`, `#ifndef NAME` or `#if`"),
                    ),
                    _ => {
                        let outer = enclosing(&conditions[..conditions.len() - 1]);
                        let last = conditions.len() - 1;
                        match word {
                            "elif" => {
                                let active = outer && !conditions[last].taken && test("if");
                                conditions[last].active = active;
                                conditions[last].taken |= active;
                            }
                            "else" => {
                                conditions[last].active = outer && !conditions[last].taken;
                                conditions[last].taken = true;
                            }
                            _ => {
                                conditions.pop();
                            }
                        }
                    }
                }
                continue;
            }
        }
        if !conditions.iter().all(|c| c.active) {
            continue;
        }
        match tok.kind {
            // As in Soufflé 2.5: `.once` marks its file; reached again, in a file included
            // again, it skips the rest of that file (what precedes it is read each time).
            Kind::Directive if texts.text(tok.span) == ".once" => {
                if !once.insert(includes.identity(tok.span.file)) {
                    stack.pop();
                }
            }
            Kind::Directive if texts.text(tok.span) == ".include" => {
                // What stands where the file name should be is dropped with the report (a
                // directive is kept), so that the parser does not report it again.
                let next = top.last().copied();
                if next.is_some_and(|t| t.kind != Kind::Directive) {
                    top.pop();
                }
                let Some(name) = next.filter(|t| t.kind == Kind::Str) else {
                    diagnostics.push(
                        Diagnostic::error(Code::PARSE, "expected a quoted file name after `.include`")
                            .with_primary(tok.span, "here")
                            .with_help("write `.include \"other.dl\"`"),
                    );
                    continue;
                };
                let path = unescape(texts.text(name.span));
                let span = tok.span.to(name.span);
                if stack.len() > MAX_INCLUDE_DEPTH {
                    diagnostics.push(too_deep(span));
                    continue;
                }
                match includes.include(tok.span.file, &path) {
                    Ok((id, text)) => {
                        texts.files.push((id, text));
                        let tokens = lexed(id, texts);
                        stack.push(tokens.into_iter().rev().collect());
                    }
                    Err(e) => diagnostics.push(cannot_include(&path, &e, span)),
                }
            }
            Kind::Hash => {
                let line = texts.text(tok.span).to_string();
                let body = line[1..].trim_start();
                let word_len = body.find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(body.len());
                let (word, rest) = body.split_at(word_len);
                // Where `rest` starts in the file.
                let rest_start = tok.span.start as usize + line.len() - rest.len();
                match word {
                    "include" => {
                        // The name in quotes, then nothing but a comment.
                        let quoted = rest.trim().strip_prefix('"').and_then(|p| p.split_once('"'));
                        let path = quoted.and_then(|(path, after)| {
                            let after = after.trim_start();
                            (after.is_empty() || after.starts_with("//") || after.starts_with("/*")).then_some(path)
                        });
                        let Some(path) = path else {
                            diagnostics.push(
                                Diagnostic::error(Code::PARSE, "expected a quoted file name after `#include`")
                                    .with_primary(tok.span, "here")
                                    .with_help("write `#include \"other.dl\"`"),
                            );
                            continue;
                        };
                        if stack.len() > MAX_INCLUDE_DEPTH {
                            diagnostics.push(too_deep(tok.span));
                            continue;
                        }
                        match includes.include(tok.span.file, path) {
                            Ok((id, text)) => {
                                texts.files.push((id, text));
                                let tokens = lexed(id, texts);
                                stack.push(tokens.into_iter().rev().collect());
                            }
                            Err(e) => diagnostics.push(cannot_include(path, &e, tok.span)),
                        }
                    }
                    "define" => {
                        let rest_trimmed = rest.trim_start();
                        let name_start = rest_start + rest.len() - rest_trimmed.len();
                        let name_len = rest_trimmed
                            .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                            .unwrap_or(rest_trimmed.len());
                        let name = &rest_trimmed[..name_len];
                        if name.is_empty() {
                            diagnostics.push(
                                Diagnostic::error(Code::PARSE, "expected a name after `#define`")
                                    .with_primary(tok.span, "here")
                                    .with_help("write `#define NAME value`"),
                            );
                            continue;
                        }
                        if rest_trimmed[name_len..].starts_with('(') {
                            diagnostics.push(unsupported(tok.span, "a function-like macro (`#define NAME(...)`)"));
                            skipped_macros.insert(name.to_string());
                            continue;
                        }
                        let value_start = name_start + name_len;
                        let value = &texts.file_text(tok.span.file)[value_start..tok.span.end as usize];
                        // A value naming an earlier macro is expanded now, so that later
                        // uses need one lookup and a macro can never expand itself.
                        let mut tokens = Vec::new();
                        for (kind, range) in lex(value, value_start) {
                            let t = Tok { kind, span: Span::new(tok.span.file, range) };
                            match defines.get(texts.text(t.span)).filter(|_| t.kind == Kind::Ident) {
                                Some(expansion) => tokens.extend(expansion.iter().copied()),
                                None => tokens.push(t),
                            }
                        }
                        defines.insert(name.to_string(), tokens);
                    }
                    "error" => diagnostics.push(
                        Diagnostic::error(Code::PARSE, format!("`#error{}`", rest.trim_end()))
                            .with_primary(tok.span, "the program stops here")
                            .with_help("a `#error` in a section that is read ends the program; define the macros its conditions test"),
                    ),
                    "undef" => {
                        defines.remove(rest.trim());
                    }
                    _ => {
                        let directive = if word.is_empty() { "#".to_string() } else { format!("#{word}") };
                        diagnostics.push(
                            unsupported(tok.span, &format!("the preprocessor directive `{directive}`"))
                                .with_help("dlc's preprocessor reads `#include \"file\"` and `#define NAME value`"),
                        );
                    }
                }
            }
            Kind::Ident if !defines.is_empty() => match defines.get(texts.text(tok.span)) {
                Some(expansion) => out.extend(expansion.iter().copied()),
                None => out.push(tok),
            },
            _ => out.push(tok),
        }
    }
    for open in conditions {
        diagnostics.push(
            Diagnostic::error(Code::PARSE, "this conditional section has no `#endif`")
                .with_primary(open.span, "opened here")
                .with_help("close it with `#endif`"),
        );
    }
    out
}

/// An open `#if` section.
struct Condition {
    /// Whether its tokens are read now.
    active: bool,
    /// Whether one of its branches has been read (so `#elif` and `#else` are not).
    taken: bool,
    span: Span,
}

/// The directive word of a `#` line and the text after it, without a `//` comment.
fn hash_word(line: &str) -> (&str, &str) {
    let body = line[1..].trim_start();
    let word_len = body.find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(body.len());
    let (word, rest) = body.split_at(word_len);
    (word, rest.split("//").next().unwrap_or(""))
}

/// The value of the condition of `#ifdef NAME`, `#ifndef NAME` or `#if` (`#elif`): for
/// `#if`, terms `defined(NAME)`, `defined NAME`, a number or a macro of a number, each
/// possibly negated with `!`, joined by `&&` and `||` (`&&` first); none for anything else.
fn condition(
    word: &str,
    rest: &str,
    is_defined: &dyn Fn(&str) -> bool,
    defines: &HashMap<String, Vec<Tok>>,
    texts: &Texts,
) -> Option<bool> {
    fn name(text: &str) -> Option<&str> {
        let text = text.trim();
        (!text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then_some(text)
    }
    match word {
        "ifdef" => return Some(is_defined(name(rest)?)),
        "ifndef" => return Some(!is_defined(name(rest)?)),
        _ => {}
    }
    let term = |text: &str| -> Option<bool> {
        let mut text = text.trim();
        let mut negated = false;
        while let Some(after) = text.strip_prefix('!') {
            negated = !negated;
            text = after.trim_start();
        }
        let value = if let Some(after) = text.strip_prefix("defined") {
            let after = after.trim();
            let inner = after.strip_prefix('(').and_then(|a| a.strip_suffix(')')).unwrap_or(after);
            is_defined(name(inner)?)
        } else if let Ok(n) = text.parse::<i64>() {
            n != 0
        } else {
            // A macro of one number is that number; any other name is 0, as in C.
            match defines.get(name(text)?).map(Vec::as_slice) {
                Some([one]) => texts.text(one.span).parse::<i64>().ok()? != 0,
                Some(_) => return None,
                None => false,
            }
        };
        Some(value != negated)
    };
    let mut any = false;
    for disjunct in rest.split("||") {
        let mut all = true;
        for conjunct in disjunct.split("&&") {
            all &= term(conjunct)?;
        }
        any |= all;
    }
    Some(any)
}

/// A rule body in disjunctive normal form: each conjunction becomes one rule.
type Dnf = Vec<Vec<ast::Literal>>;

/// The negation of `dnf` in disjunctive normal form: each conjunction becomes the
/// disjunction of its literals negated (an atom's negation, a comparison with the opposite
/// operator), and the conjunctions' negations are multiplied out. `bang` is the `!` that
/// a lone negated atom's span starts from (none when the group was not written, as for an
/// inlined relation's bodies: each atom keeps its span). `None` when the result exceeds
/// [`MAX_EXPANSION`] rules.
fn negate(dnf: Dnf, bang: Option<Span>) -> Option<Dnf> {
    let lone = dnf.len() == 1 && dnf[0].len() == 1;
    let mut negated: Dnf = vec![Vec::new()];
    for conjunction in dnf {
        let alternatives: Vec<ast::Literal> = conjunction
            .into_iter()
            .map(|literal| match literal {
                ast::Literal::Atom(atom) => {
                    let span = bang.filter(|_| lone).map_or(atom.span, |bang| bang.to(atom.span));
                    ast::Literal::Negated { atom, span }
                }
                ast::Literal::Negated { atom, .. } => ast::Literal::Atom(atom),
                ast::Literal::Compare(mut c) => {
                    c.op = c.op.negated();
                    ast::Literal::Compare(c)
                }
            })
            .collect();
        if negated.len() * alternatives.len() > MAX_EXPANSION {
            return None;
        }
        negated = negated
            .iter()
            .flat_map(|conj| {
                alternatives.iter().map(move |more| {
                    let mut c = conj.clone();
                    c.push(more.clone());
                    c
                })
            })
            .collect();
    }
    Some(negated)
}

/// A clause as written: its heads, its body (none for facts), its span.
struct Clause {
    heads: Vec<ast::Atom>,
    body: Option<Dnf>,
    span: Span,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum IoKind {
    Input,
    Output,
    Printsize,
}

/// The statements the parser read, before their relations are checked.
struct Parsed {
    clauses: Vec<Clause>,
    queries: Vec<ast::Query>,
    decls: Vec<Decl>,
    ios: Vec<(IoKind, RawIo)>,
}

/// A reported error; the parser then skips to the end of the statement.
struct Reported;

struct Parser<'a> {
    tokens: &'a [Tok],
    pos: usize,
    texts: &'a Texts,
    eof: Span,
    diagnostics: Vec<Diagnostic>,
    clauses: Vec<Clause>,
    queries: Vec<ast::Query>,
    decls: Vec<Decl>,
    ios: Vec<(IoKind, RawIo)>,
    /// Each `.type` name with the types it is defined from.
    types: HashMap<String, Vec<String>>,
    /// Each `.type` name where it is defined, in the order of the program.
    type_spans: Vec<(String, Span)>,
    /// The types defined with `=`: unions of their members, or (of one) another name of it.
    union_types: HashSet<String>,
    /// The relations `.pragma "inline-exclude"` names: not inlined, whatever their
    /// `.decl` says.
    inline_excluded: Vec<String>,
    /// Whether an aggregate's body is being read (an aggregate inside one is E0018, so
    /// bodies never nest and no pass recurses on their depth).
    in_aggregate: bool,
}

impl<'a> Parser<'a> {
    fn new(tokens: &'a [Tok], texts: &'a Texts, eof: Span) -> Self {
        Parser {
            tokens,
            pos: 0,
            texts,
            eof,
            diagnostics: Vec::new(),
            clauses: Vec::new(),
            queries: Vec::new(),
            decls: Vec::new(),
            ios: Vec::new(),
            types: HashMap::new(),
            type_spans: Vec::new(),
            union_types: HashSet::new(),
            in_aggregate: false,
            inline_excluded: Vec::new(),
        }
    }

    fn peek(&self) -> Option<Tok> {
        self.tokens.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<Tok> {
        self.tokens.get(self.pos + ahead).copied()
    }

    /// Whether the current token starts a call of `min(a, b)` or `max(a, b)`, not an
    /// aggregate of a parenthesized value (`min (x + 1) : e(x)`, which has no `,` inside
    /// its parenthesis and a `:` after it).
    fn function_call(&self) -> bool {
        self.peek().is_some_and(|t| t.kind == Kind::Ident && ir::BinOp::function(self.text(t)).is_some())
            && self.peek_at(1).is_some_and(|t| t.kind == Kind::LParen)
            && (crate::expr::comma_in_parens(self.shapes()) || !self.colon_ahead())
    }

    /// Whether a `:` follows the current token before the expression it starts can end:
    /// the word is an aggregate, its value up to the `:` ([`crate::expr::colon_ahead`]).
    fn colon_ahead(&self) -> bool {
        crate::expr::colon_ahead(self.shapes())
    }

    /// The tokens after the current one, as the aggregates' lookahead sees them.
    fn shapes(&self) -> impl Iterator<Item = crate::expr::Shape> + '_ {
        use crate::expr::Shape;
        self.tokens.iter().skip(self.pos + 1).map(|t| match t.kind {
            Kind::LParen | Kind::LBrace => Shape::Open,
            Kind::RParen | Kind::RBrace => Shape::Close,
            Kind::Comma => Shape::Comma,
            Kind::Colon => Shape::Colon,
            Kind::Semicolon | Kind::ColonDash => Shape::Separator,
            Kind::Dot => Shape::Stop,
            _ => Shape::Other,
        })
    }

    fn at(&self, kind: Kind) -> bool {
        self.peek().is_some_and(|t| t.kind == kind)
    }

    fn bump(&mut self) -> Option<Tok> {
        let t = self.peek();
        self.pos += usize::from(t.is_some());
        t
    }

    fn eat(&mut self, kind: Kind) -> Option<Tok> {
        if self.at(kind) {
            self.bump()
        } else {
            None
        }
    }

    fn text(&self, tok: Tok) -> &'a str {
        self.texts.text(tok.span)
    }

    fn here(&self) -> Span {
        self.peek().map_or(self.eof, |t| t.span)
    }

    /// How a token reads in an error message.
    fn describe(&self, tok: Option<Tok>) -> String {
        match tok {
            None => "end of input".to_string(),
            Some(t) if t.kind == Kind::Error => format!("unexpected character(s) `{}`", self.text(t)),
            Some(t) if t.kind == Kind::OpenComment => "`/*` without a closing `*/`".to_string(),
            Some(t) => format!("`{}`", self.text(t)),
        }
    }

    fn syntax(&mut self, span: Span, message: String) -> Reported {
        self.diagnostics.push(Diagnostic::error(Code::PARSE, message).with_primary(span, "here").with_help(
            "a Soufflé rule is `head(x, y) :- body(x, z), other(z, y).`; relations are declared with \
                 `.decl r(x:symbol, y:number)`",
        ));
        Reported
    }

    fn expected(&mut self, what: &str) -> Reported {
        let found = self.describe(self.peek());
        self.syntax(self.here(), format!("expected {what}, found {found}"))
    }

    fn expect(&mut self, kind: Kind, what: &str) -> Result<Tok, Reported> {
        self.eat(kind).ok_or_else(|| self.expected(what))
    }

    fn unsupported(&mut self, span: Span, construct: &str) -> Reported {
        self.diagnostics.push(unsupported(span, construct));
        Reported
    }

    /// Skips to the end of a clause after an error: past the next `.`, or up to the next
    /// directive.
    fn recover(&mut self) {
        while let Some(t) = self.peek() {
            match t.kind {
                // The `.` of `arch.jump` ends no clause.
                Kind::Dot if self.qualified_at(self.pos) => {
                    self.bump();
                }
                Kind::Dot => {
                    self.bump();
                    return;
                }
                Kind::Directive => return,
                _ => {
                    self.bump();
                }
            }
        }
    }

    /// Whether the token at `at` is the `.` of a qualified name, `arch.jump`: a name
    /// touching it on both sides.
    fn qualified_at(&self, at: usize) -> bool {
        let (Some(before), Some(dot), Some(after)) =
            (at.checked_sub(1).and_then(|b| self.tokens.get(b)), self.tokens.get(at), self.tokens.get(at + 1))
        else {
            return false;
        };
        dot.kind == Kind::Dot
            && before.kind == Kind::Ident
            && after.kind == Kind::Ident
            && before.span.file == dot.span.file
            && before.span.end == dot.span.start
            && dot.span.end == after.span.start
    }

    /// Skips the rest of the line of `start` (the arguments of a directive dlc does not
    /// support).
    fn skip_line(&mut self, start: Span) {
        while let Some(t) = self.peek() {
            let text = self.texts.file_text(t.span.file);
            let same_line = t.span.file == start.file
                && text.get(start.start as usize..t.span.start as usize).is_some_and(|s| !s.contains('\n'));
            if !same_line {
                return;
            }
            self.bump();
        }
    }

    fn program(&mut self) {
        while let Some(tok) = self.peek() {
            let result = match tok.kind {
                Kind::Directive => self.directive(),
                Kind::Ident => self.clause(),
                Kind::QueryOp => self.query(),
                Kind::OpenComment => {
                    self.bump();
                    Err(self.syntax(tok.span, "this comment has no closing `*/`".to_string()))
                }
                _ => {
                    let r = self.expected("a directive such as `.decl`, a rule or a fact");
                    self.bump();
                    Err(r)
                }
            };
            if result.is_err() {
                self.recover();
            }
        }
    }

    fn directive(&mut self) -> Result<(), Reported> {
        let tok = self.bump().expect("at a directive");
        match self.text(tok) {
            ".decl" => self.decl(),
            ".type" => self.type_decl(None),
            ".number_type" => self.type_decl(Some("number")),
            ".symbol_type" => self.type_decl(Some("symbol")),
            ".input" => self.io(IoKind::Input, tok),
            ".output" => self.io(IoKind::Output, tok),
            ".printsize" => self.io(IoKind::Printsize, tok),
            ".pragma" => {
                // Options of Soufflé's own run (jobs, magic-transform, ...); the ones
                // that name directories or switch semantics get a warning.
                let key = self.peek().filter(|t| t.kind == Kind::Str).map(|t| unescape(self.text(t)));
                if let Some(key) = key.as_deref().filter(|k| matches!(*k, "fact-dir" | "output-dir" | "legacy")) {
                    self.diagnostics.push(
                        Diagnostic::warning(Code::PRAGMA_IGNORED, format!("`.pragma \"{key}\"` is ignored"))
                            .with_primary(tok.span, "ignored here")
                            .with_note("in Soufflé this pragma changes where facts are read or written, or how the program is read"),
                    );
                }
                // `inline-exclude` names relations whose `inline` qualifier is dropped.
                if key.as_deref() == Some("inline-exclude") {
                    if let Some(value) = self.peek_at(1).filter(|t| t.kind == Kind::Str) {
                        let names = unescape(self.text(value));
                        self.inline_excluded.extend(names.split(',').map(|n| n.trim().to_string()));
                    }
                }
                self.skip_line(tok.span);
                Ok(())
            }
            ".comp" | ".init" => {
                self.unsupported(tok.span, "a component (`.comp`, `.init`)");
                // Skip the component's body, braces balanced.
                let mut depth = 0usize;
                while let Some(t) = self.bump() {
                    match t.kind {
                        Kind::LBrace => depth += 1,
                        Kind::RBrace if depth <= 1 => break,
                        Kind::RBrace => depth -= 1,
                        _ if depth == 0 && self.text(tok) == ".init" => {
                            self.skip_line(tok.span);
                            break;
                        }
                        _ => {}
                    }
                }
                Ok(())
            }
            other => {
                let construct = match other {
                    ".plan" => "a query plan (`.plan`)".to_string(),
                    ".functor" => "a user-defined functor (`.functor`)".to_string(),
                    other => format!("the directive `{other}`"),
                };
                self.unsupported(tok.span, &construct);
                self.skip_line(tok.span);
                Ok(())
            }
        }
    }

    /// `.decl name(attr: type, ...) qualifiers`, or `.decl a, b, c(...)`: several
    /// relations with the same attributes.
    fn decl(&mut self) -> Result<(), Reported> {
        let mut names = Vec::new();
        let name = loop {
            let name = self.expect(Kind::Ident, "a relation name")?;
            if self.at(Kind::Dot) && self.peek_at(1).is_some_and(|t| t.kind == Kind::Ident) {
                return Err(self.unsupported(name.span, "a qualified relation name (components)"));
            }
            if self.eat(Kind::Comma).is_none() {
                break name;
            }
            names.push(name);
        };
        names.push(name);
        self.expect(Kind::LParen, "`(`")?;
        let (mut types, mut attributes) = (Vec::new(), Vec::new());
        let mut attribute_spans: Vec<Tok> = Vec::new();
        if self.eat(Kind::RParen).is_none() {
            loop {
                let attribute = self.expect(Kind::Ident, "an attribute name")?;
                let attribute_name = self.text(attribute);
                if let Some(&first) = attribute_spans.iter().find(|t: &&Tok| self.text(**t) == attribute_name) {
                    self.diagnostics.push(
                        Diagnostic::error(
                            Code::INVALID_DECLARATION,
                            format!("the attribute name `{attribute_name}` is given twice"),
                        )
                        .with_primary(attribute.span, "named again here")
                        .with_secondary(first.span, "first named here")
                        .with_help("give each attribute of a relation its own name"),
                    );
                }
                attribute_spans.push(attribute);
                attributes.push(attribute_name.to_string());
                self.expect(Kind::Colon, "`:` and the attribute's type")?;
                let ty = self.expect(Kind::Ident, "a type")?;
                if self.text(ty) == "float" {
                    // Reported, but the relation is still declared: its uses are not
                    // undeclared too.
                    self.unsupported(ty.span, "the type `float`");
                }
                types.push(self.text(ty).to_string());
                if self.eat(Kind::Comma).is_none() {
                    self.expect(Kind::RParen, "`,` or `)`")?;
                    break;
                }
            }
        }
        // Qualifiers that choose a data structure or an optimisation change no answer;
        // `input`, `output` and `printsize`, Soufflé's older form of the directives, act
        // as `.input r` and so on would; `no_inline` wins over `inline`, as in Soufflé.
        let mut io_qualifiers: Vec<(IoKind, Tok)> = Vec::new();
        let (mut inline, mut no_inline) = (false, false);
        while let Some(t) = self.peek().filter(|t| t.kind == Kind::Ident) {
            if self.peek_at(1).is_some_and(|n| n.kind == Kind::LParen) {
                break;
            }
            match self.text(t) {
                "inline" => {
                    inline = true;
                    self.bump();
                }
                "no_inline" => {
                    no_inline = true;
                    self.bump();
                }
                "brie" | "btree" | "btree_delete" | "magic" | "no_magic" | "overridable" | "override" => {
                    self.bump();
                }
                qualifier @ ("input" | "output" | "printsize") => {
                    self.bump();
                    let kind = match qualifier {
                        "input" => IoKind::Input,
                        "output" => IoKind::Output,
                        _ => IoKind::Printsize,
                    };
                    if let Some((_, first)) = io_qualifiers.iter().find(|(k, _)| *k == kind) {
                        self.diagnostics.push(
                            Diagnostic::error(
                                Code::INVALID_DECLARATION,
                                format!("the qualifier `{qualifier}` is given twice"),
                            )
                            .with_primary(t.span, "given again here")
                            .with_secondary(first.span, "first given here")
                            .with_help(format!("remove one `{qualifier}`")),
                        );
                        continue;
                    }
                    self.diagnostics.push(
                        Diagnostic::warning(
                            Code::DEPRECATED_SOUFFLE,
                            format!("the qualifier `{qualifier}` is Soufflé's older form of `.{qualifier}`"),
                        )
                        .with_primary(t.span, format!("read as `.{qualifier}` of the relation"))
                        .with_help(format!("write `.{qualifier} <relation>` on a line of its own")),
                    );
                    io_qualifiers.push((kind, t));
                }
                "eqrel" => return Err(self.unsupported(t.span, "an equivalence relation (`eqrel`)")),
                "choice" => {
                    let end = self.peek_at(2).map_or(t.span, |d| d.span);
                    self.unsupported(t.span.to(end), "`choice-domain`");
                    self.bump();
                    // Skip `-domain x, (y, z)`.
                    while let Some(n) = self.peek() {
                        match n.kind {
                            Kind::Operator | Kind::Ident | Kind::Comma | Kind::LParen | Kind::RParen => {
                                if n.kind == Kind::Ident
                                    && self.peek_at(1).is_some_and(|m| m.kind == Kind::LParen)
                                    && self.text(n) != "domain"
                                {
                                    break;
                                }
                                self.bump();
                            }
                            _ => break,
                        }
                    }
                    return Ok(());
                }
                _ => break,
            }
        }
        for name in names {
            for (kind, _) in &io_qualifiers {
                let stdout = *kind == IoKind::Printsize;
                let io = RawIo {
                    name: self.text(name).to_string(),
                    filename: None,
                    delimiter: '\t',
                    stdout,
                    span: name.span,
                    format: IoFormat::default(),
                    compress: false,
                    attribute_names: None,
                    names_delimiter: '\t',
                };
                self.ios.push((*kind, io));
            }
            self.decls.push(Decl {
                name: self.text(name).to_string(),
                arity: types.len(),
                span: name.span,
                types: types.clone(),
                attributes: attributes.clone(),
                inline: inline && !no_inline,
            });
        }
        Ok(())
    }

    /// `.type T <: symbol`, `.type T = number`, `.type T = A | B`: plain names to dlc.
    /// `base` is the type of the old `.number_type T` / `.symbol_type T` forms.
    fn type_decl(&mut self, base: Option<&str>) -> Result<(), Reported> {
        let name_tok = self.expect(Kind::Ident, "a type name")?;
        let name = self.text(name_tok).to_string();
        self.type_spans.push((name.clone(), name_tok.span));
        if let Some(base) = base {
            self.types.insert(name, vec![base.to_string()]);
            return Ok(());
        }
        let subtype = self.eat(Kind::Subtype).is_some();
        if !subtype && self.eat(Kind::Eq).is_none() {
            // Soufflé reads a bare `.type T` as `.type T <: symbol` and warns.
            self.diagnostics.push(
                Diagnostic::warning(Code::DEPRECATED_SOUFFLE, format!("`.type {name}` without a definition"))
                    .with_primary(name_tok.span, format!("read as `.type {name} <: symbol`"))
                    .with_help(format!("write `.type {name} <: symbol`")),
            );
            self.types.insert(name, vec!["symbol".to_string()]);
            return Ok(());
        }
        if let Some(open) = self.eat(Kind::LBracket) {
            return Err(self.unsupported(open.span, "a record type (`[...]`)"));
        }
        let mut from = Vec::new();
        loop {
            let ty = self.expect(Kind::Ident, "a type")?;
            from.push(self.text(ty).to_string());
            if let Some(open) = self.eat(Kind::LBrace) {
                return Err(self.unsupported(open.span, "an algebraic data type (`Branch {...}`)"));
            }
            if self.eat(Kind::Bar).is_none() {
                if !subtype {
                    self.union_types.insert(name.clone());
                }
                self.types.insert(name, from);
                return Ok(());
            }
        }
    }

    /// `.input r1, r2(IO=file, filename="r.tsv", delimiter=",")`
    fn io(&mut self, kind: IoKind, directive: Tok) -> Result<(), Reported> {
        let mut names = vec![self.expect(Kind::Ident, "a relation name")?];
        while self.eat(Kind::Comma).is_some() {
            names.push(self.expect(Kind::Ident, "a relation name")?);
        }
        let (mut filename, mut delimiter, mut stdout) = (None, None, kind == IoKind::Printsize);
        let (mut format, mut compress, mut attribute_names) = (IoFormat::default(), false, None);
        if self.eat(Kind::LParen).is_some() && self.eat(Kind::RParen).is_none() {
            loop {
                let key = self.expect(Kind::Ident, "a parameter name")?;
                self.expect(Kind::Eq, "`=`")?;
                let value_tok = self.bump().ok_or_else(|| self.expected("a parameter value"))?;
                if !matches!(value_tok.kind, Kind::Str | Kind::Ident | Kind::Number) {
                    return Err(self.syntax(value_tok.span, "expected a parameter value".to_string()));
                }
                let raw = self.text(value_tok);
                let value = if value_tok.kind == Kind::Str { unescape(raw) } else { raw.to_string() };
                let param = key.span.to(value_tok.span);
                match self.text(key) {
                    "IO" | "io" => match value.as_str() {
                        "file" => {}
                        "stdout" if kind != IoKind::Input => stdout = true,
                        other => return Err(self.unsupported(param, &format!("`IO={other}`"))),
                    },
                    "filename" => filename = Some(value),
                    "delimiter" => {
                        let mut chars = value.chars();
                        match (chars.next(), chars.next()) {
                            (Some(c), None) => delimiter = Some(c),
                            _ => return Err(self.unsupported(param, "a delimiter other than one character")),
                        }
                    }
                    // Soufflé's readers and writers test for the text `true`; any other
                    // value is `false`.
                    "rfc4180" => format.rfc4180 = value == "true",
                    "headers" => format.headers = value == "true",
                    "compress" => compress = kind == IoKind::Output,
                    "attributeNames" => attribute_names = Some(value),
                    // Read by `IO=sqlite` alone, which is refused above.
                    "dbname" => {}
                    // It picks and orders the columns of an input file; writers ignore it.
                    "columns" if kind == IoKind::Input => {
                        return Err(self.unsupported(param, "the `.input` parameter `columns`"))
                    }
                    "columns" => {}
                    other => self.diagnostics.push(unknown_io_parameter(other, key.span, self.text(directive))),
                }
                if self.eat(Kind::Comma).is_none() {
                    self.expect(Kind::RParen, "`,` or `)`")?;
                    break;
                }
            }
        }
        // Soufflé stops at such a directive: a quote cannot both delimit and quote fields.
        if format.rfc4180 && delimiter == Some('"') {
            return Err(self.unsupported(directive.span, "a `\"` delimiter with `rfc4180=true`"));
        }
        let names_delimiter = delimiter.unwrap_or('\t');
        let delimiter = delimiter.unwrap_or(if format.rfc4180 { ',' } else { '\t' });
        for name in names {
            let io = RawIo {
                name: self.text(name).to_string(),
                filename: filename.clone(),
                delimiter,
                stdout,
                span: name.span,
                format,
                compress,
                attribute_names: attribute_names.clone(),
                names_delimiter,
            };
            self.ios.push((kind, io));
        }
        Ok(())
    }

    /// `?- r(1, y).`: a query in the file.
    fn query(&mut self) -> Result<(), Reported> {
        let start = self.bump().expect("at `?-`").span;
        let atom = self.atom()?;
        let end = self.expect(Kind::Dot, "`.`")?;
        self.queries.push(ast::Query { atom, span: start.to(end.span) });
        Ok(())
    }

    /// `h1(..), h2(..) :- body.` or the facts `f(..).`
    fn clause(&mut self) -> Result<(), Reported> {
        let start = self.here();
        let mut heads = vec![self.atom()?];
        while self.eat(Kind::Comma).is_some() {
            heads.push(self.atom()?);
        }
        if let Some(t) = self.peek().filter(|t| t.kind == Kind::Compare && self.text(*t) == "<=") {
            return Err(self.unsupported(t.span, "a subsumptive clause (`<=`)"));
        }
        let body = if self.eat(Kind::ColonDash).is_some() {
            let body = self.disjunction(0)?;
            if heads.len() * body.len() > MAX_EXPANSION {
                return Err(self.unsupported(
                    start.to(self.here()),
                    &format!("a clause expanding to more than {MAX_EXPANSION} rules"),
                ));
            }
            Some(body)
        } else {
            None
        };
        let end = match self.eat(Kind::Dot) {
            Some(dot) => dot,
            None if body.is_some() => return Err(self.expected("`,`, `;` or `.`")),
            None => return Err(self.expected("`,`, `.` or `:-`")),
        };
        self.clauses.push(Clause { heads, body, span: start.to(end.span) });
        Ok(())
    }

    /// `conj ; conj ; ...`
    fn disjunction(&mut self, depth: usize) -> Result<Dnf, Reported> {
        let mut dnf = self.conjunction(depth)?;
        while self.eat(Kind::Semicolon).is_some() {
            dnf.extend(self.conjunction(depth)?);
        }
        Ok(dnf)
    }

    /// `lit, lit, ...`: the product of the literals' disjunctions.
    fn conjunction(&mut self, depth: usize) -> Result<Dnf, Reported> {
        let start = self.here();
        let mut dnf: Dnf = vec![Vec::new()];
        loop {
            let literal = self.literal(depth)?;
            if dnf.len() * literal.len() > MAX_EXPANSION {
                return Err(self.unsupported(
                    start.to(self.here()),
                    &format!("a body expanding to more than {MAX_EXPANSION} rules"),
                ));
            }
            match <[Vec<ast::Literal>; 1]>::try_from(literal) {
                // One alternative, the literal of almost every body: appended in place.
                // Copying each conjunction for it made a body of n atoms cost n² (18 s
                // for 10,000 atoms).
                Ok([only]) => {
                    for conj in &mut dnf {
                        conj.extend(only.iter().cloned());
                    }
                }
                Err(literal) => {
                    dnf = dnf
                        .iter()
                        .flat_map(|conj| {
                            literal.iter().map(move |more| {
                                let mut c = conj.clone();
                                c.extend(more.iter().cloned());
                                c
                            })
                        })
                        .collect();
                }
            }
            if self.eat(Kind::Comma).is_none() {
                return Ok(dnf);
            }
        }
    }

    fn literal(&mut self, depth: usize) -> Result<Dnf, Reported> {
        let Some(tok) = self.peek() else { return Err(self.expected("a body literal")) };
        match tok.kind {
            Kind::Bang => {
                // `!!a(x)` is `a(x)`; `!(b(x) ; c(x))`, `!(b(x), c(x))` and `!x > y` negate
                // what follows, pushed inward as Soufflé does (De Morgan): no helper relation.
                let mut negations = 0usize;
                while self.eat(Kind::Bang).is_some() {
                    negations += 1;
                }
                let start = self.here();
                let inner = self.literal(depth)?;
                if negations.is_multiple_of(2) {
                    return Ok(inner);
                }
                match negate(inner, Some(tok.span)) {
                    Some(dnf) => Ok(dnf),
                    None => Err(self.unsupported(
                        tok.span.to(start),
                        &format!("a negation expanding to more than {MAX_EXPANSION} rules"),
                    )),
                }
            }
            Kind::LParen => {
                // `(x + 1) < y` is a comparison, `(a(x) ; b(x))` a disjunction: the
                // comparison is tried first, and its reports dropped if it is none.
                let (pos, reported) = (self.pos, self.diagnostics.len());
                if let Ok(Some(comparison)) = self.comparison() {
                    return Ok(vec![vec![comparison]]);
                }
                self.pos = pos;
                self.diagnostics.truncate(reported);
                if depth >= MAX_NESTING {
                    return Err(self.unsupported(tok.span, &format!("nesting deeper than {MAX_NESTING} parentheses")));
                }
                self.bump();
                let dnf = self.disjunction(depth + 1)?;
                self.expect(Kind::RParen, "`,`, `;` or `)`")?;
                Ok(dnf)
            }
            // `arch.jump(x)`: a relation of a component instance.
            Kind::Ident if self.qualified_at(self.pos + 1) => {
                let end = self.peek_at(2).map_or(tok.span, |t| t.span);
                Err(self.unsupported(tok.span.to(end), "a qualified relation name (components)"))
            }
            // `sum (z + 1) : { e(z, _) } > 0` starts with an aggregate, not an atom `sum(...)`.
            Kind::Ident
                if self.peek_at(1).is_some_and(|t| t.kind == Kind::LParen)
                    && ir::BinOp::function(self.text(tok)).is_none()
                    && ir::UnOp::from_text(self.text(tok)).is_none()
                    && !(ast::AggregateOp::from_text(self.text(tok)).is_some() && self.colon_ahead()) =>
            {
                let name = self.text(tok);
                if matches!(name, "match" | "contains") {
                    return Err(self.unsupported(tok.span, &format!("the constraint `{name}(...)`")));
                }
                // `strlen(s) > 2`: Soufflé's functors start a comparison, not an atom.
                if SOUFFLE_FUNCTORS.contains(&name) {
                    return Err(self.unsupported(tok.span, &format!("the functor `{name}(...)`")));
                }
                let atom = self.atom()?;
                if self.peek().is_some_and(|t| matches!(t.kind, Kind::Eq | Kind::Compare | Kind::Operator)) {
                    return Err(self.unsupported(tok.span, &format!("the functor `{name}(...)`")));
                }
                Ok(vec![vec![ast::Literal::Atom(atom)]])
            }
            Kind::Ident if matches!(self.text(tok), "true" | "false") => {
                self.bump();
                Ok(if self.text(tok) == "true" { vec![Vec::new()] } else { Vec::new() })
            }
            _ => match self.comparison()? {
                Some(comparison) => Ok(vec![vec![comparison]]),
                None => Err(self.expected("`(` after a relation name, or a comparison")),
            },
        }
    }

    /// A constraint `x < y`, `x = y + 1`; none when the expression is not followed by a
    /// comparison operator. `z = count : {...}` stops at the aggregate, which `term`
    /// reports as what it is.
    fn comparison(&mut self) -> Result<Option<ast::Literal>, Reported> {
        let left = self.expression()?;
        let Some(op) = self.peek().filter(|t| matches!(t.kind, Kind::Eq | Kind::Compare)) else { return Ok(None) };
        self.bump();
        let right = self.expression()?;
        match ir::CmpOp::from_text(self.text(op)) {
            Some(cmp) => Ok(Some(ast::Literal::Compare(ast::Comparison::new(left, cmp, right)))),
            None => Err(self.unsupported(op.span, &format!("the comparison `{}`", self.text(op)))),
        }
    }

    /// A term or an arithmetic expression, read by the grammar both dialects share.
    fn expression(&mut self) -> Result<ast::Term, Reported> {
        crate::expr::expression(self)
    }

    /// `name(t, ...)`
    fn atom(&mut self) -> Result<ast::Atom, Reported> {
        let name = self.expect(Kind::Ident, "a relation name")?;
        if let (Some(dot), Some(next)) = (self.peek(), self.peek_at(1)) {
            if dot.kind == Kind::Dot && next.kind == Kind::Ident && dot.span.start == name.span.end {
                return Err(self.unsupported(name.span.to(next.span), "a qualified relation name (components)"));
            }
        }
        self.expect(Kind::LParen, "`(`")?;
        let mut args = Vec::new();
        let close = match self.eat(Kind::RParen) {
            Some(close) => close,
            None => loop {
                args.push(self.expression()?);
                if self.eat(Kind::Comma).is_none() {
                    break self.expect(Kind::RParen, "`,` or `)`")?;
                }
            },
        };
        let pred = ast::Name { text: self.text(name).to_string(), span: name.span };
        Ok(ast::Atom { pred, args, span: name.span.to(close.span) })
    }

    /// A variable, `_`, a number or a string; anything else is unsupported.
    fn term(&mut self) -> Result<ast::Term, Reported> {
        let Some(tok) = self.peek() else { return Err(self.expected("a variable, a number or a string")) };
        let text = self.text(tok);
        let next = self.peek_at(1);
        let kind = match tok.kind {
            Kind::Ident if next.is_some_and(|n| n.kind == Kind::LParen) => {
                let construct = if text == "as" {
                    "a type cast (`as(...)`)".to_string()
                } else {
                    format!("the functor `{text}(...)`")
                };
                return Err(self.unsupported(tok.span, &construct));
            }
            Kind::Ident if text == "range" && next.is_some_and(|n| !matches!(n.kind, Kind::Comma | Kind::RParen)) => {
                return Err(self.unsupported(tok.span, "the aggregate `range`"));
            }
            Kind::Ident if text == "nil" => return Err(self.unsupported(tok.span, "a record (`nil`)")),
            Kind::Ident => TermKind::Var(text.to_string()),
            Kind::Underscore => TermKind::Anon,
            // As Soufflé reads it: `007` is 7.
            // As Soufflé reads it: `007` is 7, `0x10` 16, `5u` 5.
            Kind::Number | Kind::RadixNumber => match ast::integer_literal(text) {
                Some(n) => TermKind::Int(n.to_string()),
                None => return Err(self.unsupported(tok.span, "a number this large")),
            },
            Kind::Float => return Err(self.unsupported(tok.span, "a float constant")),
            // `1.2.3.4` is, to Soufflé, the number of those four bytes (as a `number`, so
            // `255.255.255.255` is -1).
            Kind::Ipv4 => match ipv4(text) {
                Some(n) => TermKind::Int(n.to_string()),
                None => return Err(self.unsupported(tok.span, "an IPv4 constant with a part above 255")),
            },
            Kind::Str => TermKind::Str(unescape(text)),
            Kind::Dollar => return Err(self.unsupported(tok.span, "`$` (a counter or an ADT branch)")),
            Kind::At => return Err(self.unsupported(tok.span, "a user-defined functor (`@f(...)`)")),
            Kind::LBracket => return Err(self.unsupported(tok.span, "a record (`[...]`)")),
            _ => return Err(self.expected("a variable, a number or a string")),
        };
        self.bump();
        Ok(ast::Term { kind, span: tok.span })
    }
}

/// The value Soufflé gives the IPv4 constant `text`: its four bytes, high first, as a
/// 32-bit signed number; none when a part is above 255.
fn ipv4(text: &str) -> Option<i32> {
    let mut value: u32 = 0;
    for part in text.split('.') {
        value = (value << 8) | u32::from(part.parse::<u8>().ok()?);
    }
    Some(value as i32)
}

/// Soufflé's tokens as the shared expression grammar reads them.
impl crate::expr::ExprSource for Parser<'_> {
    type Error = Reported;

    fn infix(&mut self) -> Option<(ir::BinOp, Span)> {
        let tok = self.peek()?;
        let op = match tok.kind {
            Kind::Operator => ir::BinOp::symbol(self.text(tok), true)?,
            Kind::Ident => ir::BinOp::word(self.text(tok), true)?,
            _ => return None,
        };
        Some((op, tok.span))
    }

    fn prefix(&mut self) -> Option<(crate::expr::Prefix, Span)> {
        use crate::expr::Prefix;
        let tok = self.peek()?;
        let text = self.text(tok);
        let next = self.peek_at(1).map(|t| t.kind);
        let prefix = match tok.kind {
            Kind::Operator if text == "-" => Prefix::Unary(ir::UnOp::Neg),
            Kind::LParen => Prefix::Open,
            Kind::Ident if self.function_call() => Prefix::Function(ir::BinOp::function(text)?),
            Kind::Ident if matches!(text, "bnot" | "lnot") => Prefix::Unary(ir::UnOp::from_text(text)?),
            // `count :`; `sum e :` (`min(a, b)` is the function, `f(min, x)` a variable).
            Kind::Ident => {
                let op = ast::AggregateOp::from_text(text)?;
                // A value may also start with `(` or `-` (`sum (y * 2) - y :`, `sum -1 :`); then
                // the `:` ahead tells an aggregate from a variable named `sum`.
                let value_follows =
                    matches!(next, Some(Kind::Ident | Kind::Underscore | Kind::Number | Kind::RadixNumber | Kind::Str))
                        || (matches!(next, Some(Kind::LParen | Kind::Operator)) && self.colon_ahead());
                match op.takes_value() {
                    true if value_follows => Prefix::Aggregate(op),
                    false if next == Some(Kind::Colon) => Prefix::Aggregate(op),
                    _ => return None,
                }
            }
            _ => return None,
        };
        Some((prefix, tok.span))
    }

    fn bump(&mut self, prefix: bool) {
        let function = prefix && self.function_call();
        Parser::bump(self);
        if function {
            Parser::bump(self);
        }
    }

    fn punct(&mut self, comma: bool) -> Result<(crate::expr::Punct, Span), Reported> {
        if let Some(close) = self.eat(Kind::RParen) {
            return Ok((crate::expr::Punct::Close, close.span));
        }
        match self.eat(Kind::Comma) {
            Some(c) if comma => Ok((crate::expr::Punct::Comma, c.span)),
            _ => Err(self.expected(if comma { "`,` or `)`" } else { "`)`" })),
        }
    }

    fn leaf(&mut self) -> Result<ast::Term, Reported> {
        self.term()
    }

    fn aggregate_body(&mut self) -> Result<(Vec<ast::Literal>, Span), Reported> {
        let colon = self.expect(Kind::Colon, "`:` before the aggregate's body")?;
        if self.in_aggregate {
            return Err(self.unsupported(colon.span, "an aggregate inside an aggregate"));
        }
        let Some(open) = self.eat(Kind::LBrace) else {
            self.in_aggregate = true;
            let atom = self.atom();
            self.in_aggregate = false;
            let atom = atom?;
            let end = atom.span;
            return Ok((vec![ast::Literal::Atom(atom)], end));
        };
        self.in_aggregate = true;
        let dnf = self.disjunction(0);
        self.in_aggregate = false;
        let mut dnf = dnf?;
        let close = self.expect(Kind::RBrace, "`,` or `}`")?;
        if dnf.len() != 1 {
            return Err(self.unsupported(open.span.to(close.span), "a disjunction inside an aggregate"));
        }
        Ok((dnf.pop().unwrap_or_default(), close.span))
    }

    fn error(&mut self, span: Span, message: String) -> Reported {
        self.syntax(span, message)
    }
}

/// Marks each ordering comparison (`<`, `<=`, `>`, `>=`) of symbols as one, since
/// Soufflé orders symbols by their text, and each of `unsigned` values as one, since
/// Soufflé orders those as unsigned integers: an operand is a symbol when it is a string
/// or a variable in a column declared with a symbol type, a number or an unsigned when it
/// is a variable of such a column (a number literal takes the other operand's kind). A
/// comparison of a symbol with a number, or of a `number` with an `unsigned`, which
/// Soufflé rejects as type errors, is E0018.
/// Per variable of a conjunction, the kind of the first column it appears in.
fn variable_kinds(
    conjunction: &[ast::Literal],
    declared: &HashMap<&str, &Decl>,
    types: &HashMap<String, Vec<String>>,
) -> HashMap<String, ValueType> {
    let mut typed: HashMap<String, ValueType> = HashMap::new();
    for atom in conjunction.iter().filter_map(ast::Literal::atom) {
        let Some(decl) = declared.get(atom.pred.text.as_str()) else { continue };
        for (term, ty) in atom.args.iter().zip(&decl.types) {
            if let TermKind::Var(name) = &term.kind {
                typed.entry(name.clone()).or_insert_with(|| column_kind(ty, types));
            }
        }
    }
    typed
}

fn order_symbols(
    conjunction: &mut [ast::Literal],
    declared: &HashMap<&str, &Decl>,
    types: &HashMap<String, Vec<String>>,
    diagnostics: &mut Vec<Diagnostic>,
) -> bool {
    let typed = variable_kinds(conjunction, declared, types);
    // A number literal takes the kind of the other operand, as in Soufflé.
    let kind = |term: &ast::Term| match &term.kind {
        TermKind::Str(_) => Some(ValueType::Symbol),
        TermKind::Var(name) => typed.get(name).copied(),
        _ => None,
    };
    let mut ok = true;
    for literal in conjunction.iter_mut() {
        let ast::Literal::Compare(c) = literal else { continue };
        if !c.op.is_ordering() {
            continue;
        }
        let (left, right) = (kind(&c.left), kind(&c.right));
        let number_literal = |term: &ast::Term| matches!(term.kind, TermKind::Int(_));
        let symbol_with_number = |a: Option<ValueType>, b: Option<ValueType>, other: &ast::Term| {
            a == Some(ValueType::Symbol)
                && (matches!(b, Some(ValueType::Number | ValueType::Unsigned)) || number_literal(other))
        };
        let mismatch = if symbol_with_number(left, right, &c.right) || symbol_with_number(right, left, &c.left) {
            Some("a symbol with a number")
        } else if matches!(
            (left, right),
            (Some(ValueType::Number), Some(ValueType::Unsigned)) | (Some(ValueType::Unsigned), Some(ValueType::Number))
        ) {
            Some("a `number` with an `unsigned`")
        } else {
            None
        };
        if let Some(what) = mismatch {
            diagnostics.push(unsupported(c.span, &format!("an ordering comparison (`{}`) of {what}", c.op.text())));
            ok = false;
            continue;
        }
        if left == Some(ValueType::Symbol) || right == Some(ValueType::Symbol) {
            c.domain = ValueType::Symbol;
        } else if left == Some(ValueType::Unsigned) || right == Some(ValueType::Unsigned) {
            c.domain = ValueType::Unsigned;
        }
    }
    ok
}

/// Checks declarations (E0019 undeclared, E0020 declared twice, E0004 arity against the
/// declaration) and I/O directives, and builds the native AST from what passed.
fn check(
    parsed: Parsed,
    types: &HashMap<String, Vec<String>>,
    skipped_macros: &HashSet<String>,
    queried: Option<&str>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Front {
    let Parsed { clauses, queries, decls, ios } = parsed;
    let mut declared: HashMap<&str, &Decl> = HashMap::new();
    let mut unique = Vec::new();
    for (i, decl) in decls.iter().enumerate() {
        match declared.get(decl.name.as_str()) {
            Some(first) => diagnostics.push(
                Diagnostic::error(Code::DECLARED_TWICE, format!("relation `{}` is declared twice", decl.name))
                    .with_primary(decl.span, "declared again here")
                    .with_secondary(first.span, "first declared here"),
            ),
            None => {
                declared.insert(&decl.name, decl);
                unique.push(i);
            }
        }
    }
    let check_atom = |atom: &ast::Atom, diagnostics: &mut Vec<Diagnostic>| -> bool {
        match declared.get(atom.pred.text.as_str()) {
            None if skipped_macros.contains(&atom.pred.text) => false,
            None => {
                diagnostics.push(undeclared(&atom.pred.text, atom.pred.span, Some(atom.args.len())));
                false
            }
            Some(decl) if decl.arity != atom.args.len() => {
                diagnostics.push(
                    Diagnostic::error(
                        Code::ARITY_MISMATCH,
                        format!(
                            "`{}` is used with {} argument(s) but is declared with {}",
                            decl.name,
                            atom.args.len(),
                            decl.arity
                        ),
                    )
                    .with_primary(atom.span, format!("{} argument(s) here", atom.args.len()))
                    .with_secondary(decl.span, format!("declared with {} attribute(s) here", decl.arity)),
                );
                false
            }
            Some(_) => true,
        }
    };
    let mut kept = Vec::new();
    for mut clause in clauses {
        let mut ok = true;
        let body_atoms = clause.body.iter().flatten().flatten().filter_map(ast::Literal::atom);
        for atom in clause.heads.iter().chain(body_atoms) {
            ok &= check_atom(atom, diagnostics);
        }
        if ok {
            for conjunction in clause.body.iter_mut().flatten() {
                ok &= order_symbols(conjunction, &declared, types, diagnostics);
            }
        }
        if ok {
            kept.push(clause);
        }
    }
    // A fact with an aggregate (`n(count : { e(_, _) }).`) is computed, so its relation
    // is derived as a rule's is.
    let mut derived: HashSet<&str> = kept
        .iter()
        .flat_map(|c| c.heads.iter().filter(move |h| c.body.is_some() || h.has_aggregate()))
        .map(|h| h.pred.text.as_str())
        .collect();
    // A query reads a derived relation: one it names (on the command line or in the
    // file) is made one even when only facts or an `.input` define it.
    derived.extend(
        queried
            .into_iter()
            .chain(queries.iter().map(|q| q.atom.pred.text.as_str()))
            .filter(|q| declared.contains_key(q)),
    );
    let (mut inputs, mut outputs, mut printsize) = (Vec::new(), Vec::new(), Vec::new());
    let (mut copies, mut hidden_decls) = (Vec::new(), Vec::new());
    for (kind, io) in ios {
        if !declared.contains_key(io.name.as_str()) {
            diagnostics.push(undeclared(&io.name, io.span, None));
            continue;
        }
        // The same directive twice (`.output r` and the qualifier `output` on its
        // `.decl`) writes one file, as in Soufflé; a second `.printsize` is an error there.
        let same = |other: &RawIo| {
            other.name == io.name
                && other.filename == io.filename
                && other.delimiter == io.delimiter
                && other.stdout == io.stdout
        };
        match kind {
            IoKind::Input if inputs.iter().any(same) => continue,
            IoKind::Output if outputs.iter().any(same) => continue,
            IoKind::Printsize => {
                if let Some(first) = printsize.iter().find(|p: &&RawIo| p.name == io.name) {
                    diagnostics.push(
                        Diagnostic::error(
                            Code::INVALID_DECLARATION,
                            format!("the size of `{}` is printed twice (`.printsize` given twice)", io.name),
                        )
                        .with_primary(io.span, "given again here")
                        .with_secondary(first.span, "first given here")
                        .with_help("keep one `.printsize` of the relation"),
                    );
                    continue;
                }
            }
            _ => {}
        }
        match kind {
            IoKind::Input if derived.contains(io.name.as_str()) => {
                // dlc keeps input and derived relations apart: the facts go to a relation
                // of their own, `r_input` (or `r_input2`, ... when the program declares
                // that name), which one rule copies into `r`, as if the rules added to
                // the loaded input.
                let decl = declared[io.name.as_str()];
                let hidden = (1..)
                    .map(|k| if k == 1 { format!("{}_input", io.name) } else { format!("{}_input{k}", io.name) })
                    .find(|n| !declared.contains_key(n.as_str()) && !hidden_decls.iter().any(|d: &Decl| &d.name == n))
                    .expect("some name is free");
                let vars: Vec<ast::Term> = (0..decl.arity)
                    .map(|i| ast::Term { kind: TermKind::Var(format!("x{i}")), span: io.span })
                    .collect();
                let atom = |name: &str| ast::Atom {
                    pred: ast::Name { text: name.to_string(), span: io.span },
                    args: vars.clone(),
                    span: io.span,
                };
                copies.push(ast::Rule {
                    head: atom(&io.name),
                    body: vec![ast::Literal::Atom(atom(&hidden))],
                    span: io.span,
                });
                hidden_decls.push(Decl {
                    name: hidden.clone(),
                    arity: decl.arity,
                    span: io.span,
                    types: decl.types.clone(),
                    attributes: decl.attributes.clone(),
                    inline: false,
                });
                let filename = Some(io.filename.clone().unwrap_or_else(|| format!("{}.facts", io.name)));
                inputs.push(RawIo { name: hidden, filename, ..io });
            }
            IoKind::Input => inputs.push(io),
            IoKind::Output => outputs.push(io),
            IoKind::Printsize => printsize.push(io),
        }
    }
    let mut statements = Vec::new();
    // The fresh variables of rewritten symbol `min`/`max` terms, numbered per program.
    let mut extrema_vars = 0;
    for clause in &kept {
        match &clause.body {
            None => {
                for head in &clause.heads {
                    // A fact's symbol `min`/`max` of constants is computed.
                    let rule = ast::Rule { head: head.clone(), body: Vec::new(), span: clause.span };
                    let rules = match extrema::expand(rule, &|_| None, &mut extrema_vars) {
                        Ok(rules) => rules,
                        Err(report) => {
                            diagnostics.push(report);
                            continue;
                        }
                    };
                    for rule in rules {
                        statements.push(if derived.contains(head.pred.text.as_str()) || !rule.body.is_empty() {
                            Statement::Rule(rule)
                        } else {
                            Statement::Fact(rule.head)
                        });
                    }
                }
            }
            Some(dnf) => {
                for head in &clause.heads {
                    for conj in dnf {
                        let rule = ast::Rule { head: head.clone(), body: conj.clone(), span: clause.span };
                        let typed = variable_kinds(conj, &declared, types);
                        match extrema::expand(rule, &|v| typed.get(v).copied(), &mut extrema_vars) {
                            Ok(rules) => statements.extend(rules.into_iter().map(Statement::Rule)),
                            Err(report) => diagnostics.push(report),
                        }
                    }
                }
            }
        }
    }
    for query in queries {
        if check_atom(&query.atom, diagnostics) {
            statements.push(Statement::Query(query));
        }
    }
    statements.extend(copies.into_iter().map(Statement::Rule));
    let mut decls: Vec<Decl> =
        decls.into_iter().enumerate().filter(|(i, _)| unique.contains(i)).map(|(_, d)| d).collect();
    decls.extend(hidden_decls);
    let declared = decls
        .iter()
        .map(|d| (d.name.clone(), d.types.iter().map(|t| column_kind(t, types)).collect(), d.span))
        .collect();
    // The caller sets the span of the whole file.
    let file = ast::File { statements, span: Span::new(FileId(0), 0..0), declared };
    Front { file, decls, inputs, outputs, printsize, types: HashMap::new() }
}

/// W0007 for an IO parameter Soufflé 2.5 does not know (a misspelling such as
/// `delimeter`), which it ignores: the warning names the nearest known parameter.
fn unknown_io_parameter(name: &str, span: Span, directive: &str) -> Diagnostic {
    let nearest = IO_PARAMETERS
        .iter()
        .min_by_key(|known| strsim::damerau_levenshtein(&name.to_lowercase(), &known.to_lowercase()))
        .expect("the list is not empty");
    Diagnostic::warning(Code::UNKNOWN_IO_PARAMETER, format!("`{directive}` has no parameter `{name}`; it is ignored"))
        .with_primary(span, "ignored, as Soufflé ignores it")
        .with_help(format!(
            "did you mean `{nearest}`? The parameters are {}",
            IO_PARAMETERS.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
        ))
}

/// E0019; `arity` (when used in an atom) gives the declaration to suggest.
fn undeclared(name: &str, span: Span, arity: Option<usize>) -> Diagnostic {
    let attributes = match arity {
        Some(n) => (0..n).map(|i| format!("x{i}:symbol")).collect::<Vec<_>>().join(", "),
        None => "x:symbol, ...".to_string(),
    };
    Diagnostic::error(Code::UNDECLARED_RELATION, format!("relation `{name}` is not declared"))
        .with_primary(span, "used here")
        .with_help(format!("declare it, with a type for each attribute: `.decl {name}({attributes})`"))
}

#[cfg(test)]
mod tests;
