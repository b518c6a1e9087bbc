//! The checks of declarations and types, over the syntax tree and the expanded clauses:
//!
//! 1. [`declarations`] (on the tree): reports each unsupported construct (E0018), the
//!    pragmas dlc ignores (W0004), cycles of `.type` definitions (E0025), types defined
//!    twice or as unions of more than one primitive type (E0034); gathers the relations,
//!    the I/O directives and the types.
//! 2. [`subtype_mismatches`] (on the expanded clauses, when nothing failed before): the
//!    variables whose columns' types share no value or are written to a column of an
//!    unrelated type (E0035).
//!    Each `.functor` is checked (E0043; a `stateful` one is E0018) and gathered.
//! 3. [`functor_calls`] (on the expanded clauses): each `@f(...)` resolved to its
//!    declaration, or reported (E0043) when there is none or the arity differs.
//! 4. [`uses`] (on the expanded clauses, after inlining): relations declared twice
//!    (E0020), atoms of undeclared relations (E0019) or with the wrong number of
//!    arguments (E0004), and I/O directives of undeclared relations or a `.printsize`
//!    given twice.

use super::lower::Clause;
use super::tree::{self, IoKind, Item, TypeDefinition};
use super::typing::{self, column_kind};
use super::{unsupported, RawIo, Relation};
use crate::ast::{self, TermKind};
use diag::{Code, Diagnostic, Span};
use ir::ValueType;
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// What a program declares, as [`declarations`] gathers it.
pub(super) struct Declarations {
    /// Every relation a `.decl` declares, in order (one declared twice is here twice).
    pub relations: Vec<Relation>,
    /// The I/O directives, and the I/O qualifiers of `.decl`s, one per relation, in order.
    pub ios: Vec<(IoKind, RawIo)>,
    /// Each `.type` name with the types it is defined from.
    pub types: FxHashMap<String, Vec<String>>,
    /// The types defined with `=`: unions of their members, or (of one) another name of it.
    pub unions: FxHashSet<String>,
    /// The queries in the file.
    pub queries: Vec<ast::Query>,
    pub records: Records,
    /// The `.limitsize` of each relation given one, in order (a second one of a relation
    /// is reported and dropped).
    pub limits: Vec<RawLimit>,
    /// Each `.functor` by name (the first of one declared twice).
    pub functors: FxHashMap<String, DeclaredFunctor>,
}

/// A `.limitsize` of one relation, before the relation is resolved.
#[derive(Clone, Debug)]
pub(super) struct RawLimit {
    pub name: String,
    /// The relation's name in the directive.
    pub span: Span,
    pub tuples: u64,
}

/// A `.functor` as [`declarations`] gathers it.
pub(super) struct DeclaredFunctor {
    /// The declaration with its primitive types; none for a `stateful` one, or one with
    /// a type that is none of them, which are reported already.
    pub functor: Option<Arc<ir::UserFunctor>>,
    /// The functor's name in the `.functor`.
    pub span: Span,
    /// How many parameters it declares.
    pub arity: usize,
}

/// Reports the unsupported constructs, ignored pragmas and bad type definitions of
/// `program`, and gathers its declarations.
pub(super) fn declarations(program: &tree::Program, diagnostics: &mut Vec<Diagnostic>) -> Declarations {
    let mut relations = Vec::new();
    let mut ios = Vec::new();
    let mut types: FxHashMap<String, Vec<String>> = FxHashMap::default();
    // Each `.type` name where it is defined, in the order of the program.
    let mut type_spans: Vec<(String, Span)> = Vec::new();
    let mut unions = FxHashSet::default();
    let mut queries = Vec::new();
    // Each record type and algebraic data type: its name, whether it is the latter, its
    // branches (one, unnamed, for a record type).
    let mut record_shapes: Vec<(String, bool, Vec<tree::RecordShape>)> = Vec::new();
    let mut limits: Vec<RawLimit> = Vec::new();
    // The relations `.pragma "inline-exclude"` names: not inlined, whatever their `.decl`
    // says.
    let mut inline_excluded: Vec<String> = Vec::new();
    let names = |names: &[ast::Name]| names.iter().map(|n| n.text.clone()).collect::<Vec<_>>();
    let mut functor_decls = Vec::new();
    // Each subset type `.type S <: T`: its name, where, and what it derives from.
    let mut subtypes: Vec<(String, Span, Vec<String>)> = Vec::new();
    for item in &program.items {
        match item {
            Item::Functor(decl) => functor_decls.push(decl),
            Item::Unsupported(u) => {
                let d = unsupported(u.span, &u.construct.describe());
                diagnostics.push(d);
            }
            Item::Pragma(pragma) => {
                // The pragmas that name directories or switch semantics get a warning.
                if let Some(key) = pragma.key.as_deref().filter(|k| matches!(*k, "fact-dir" | "output-dir" | "legacy"))
                {
                    diagnostics.push(
                        Diagnostic::warning(Code::PRAGMA_IGNORED, format!("`.pragma \"{key}\"` is ignored"))
                            .with_primary(pragma.span, "ignored here")
                            .with_note("in Soufflé this pragma changes where facts are read or written, or how the program is read"),
                    );
                }
                // `inline-exclude` names relations whose `inline` qualifier is dropped.
                if let (Some("inline-exclude"), Some(value)) = (pragma.key.as_deref(), &pragma.value) {
                    inline_excluded.extend(value.split(',').map(|n| n.trim().to_string()));
                }
            }
            Item::Decl(decl) => {
                let types: Vec<String> = decl.attributes.iter().map(|a| a.ty.text.clone()).collect();
                let attributes: Vec<String> = decl.attributes.iter().map(|a| a.name.text.clone()).collect();
                let eqrel = decl.eqrel.is_some_and(|at| equivalence_columns(decl, at, diagnostics));
                let choice = decl.choice.as_ref().and_then(|keys| choice_domain(decl, keys, diagnostics));
                for name in &decl.names {
                    for (kind, _) in &decl.io {
                        let settings = tree::IoSettings::default_for(*kind);
                        ios.push((*kind, RawIo { name: name.text.clone(), span: name.span, settings }));
                    }
                    relations.push(Relation {
                        name: name.text.clone(),
                        arity: types.len(),
                        span: name.span,
                        types: types.clone(),
                        attributes: attributes.clone(),
                        inline: decl.inline && !decl.no_inline,
                        eqrel,
                        choice: choice.clone(),
                    });
                }
            }
            Item::Type(def) => {
                let name = def.name.text.clone();
                type_spans.push((name.clone(), def.name.span));
                match &def.definition {
                    TypeDefinition::Subtype(from) => {
                        subtypes.push((name.clone(), def.name.span, names(from)));
                        types.insert(name, names(from));
                    }
                    TypeDefinition::Equal(from) => {
                        unions.insert(name.clone());
                        types.insert(name, names(from));
                    }
                    TypeDefinition::Primitive(base) => {
                        types.insert(name, vec![base.to_string()]);
                    }
                    TypeDefinition::Bare => {
                        types.insert(name, vec!["symbol".to_string()]);
                    }
                    TypeDefinition::Record(shape) => {
                        types.insert(name.clone(), vec![typing::record_member(record_shapes.len())]);
                        record_shapes.push((name, false, vec![shape.clone()]));
                    }
                    TypeDefinition::Adt(branches) => {
                        types.insert(name.clone(), vec![typing::record_member(record_shapes.len())]);
                        record_shapes.push((name, true, branches.clone()));
                    }
                    TypeDefinition::Unreadable => {}
                }
            }
            Item::Io(io) => {
                let settings = io.settings();
                for name in &io.relations {
                    let raw = RawIo { name: name.text.clone(), span: name.span, settings: settings.clone() };
                    ios.push((io.kind, raw));
                }
            }
            Item::Query(query) => queries.push(query.clone()),
            Item::LimitSize(limit) => {
                for name in &limit.relations {
                    // A second `.limitsize` of a relation is an error in Soufflé.
                    if let Some(first) = limits.iter().find(|l| l.name == name.text) {
                        diagnostics.push(size_directive_twice(
                            ".limitsize",
                            "limited",
                            &name.text,
                            name.span,
                            first.span,
                        ));
                        continue;
                    }
                    limits.push(RawLimit { name: name.text.clone(), span: name.span, tuples: limit.tuples });
                }
            }
            // Components are expanded before this pass (`components`).
            Item::Clause(_) | Item::Plan(_) | Item::Component(_) | Item::Init(_) => {}
        }
    }
    diagnostics.extend(plans(program));
    for relation in relations.iter_mut().filter(|r| inline_excluded.contains(&r.name)) {
        relation.inline = false;
    }
    diagnostics.extend(type_cycles(&types, &type_spans));
    diagnostics.extend(type_definitions(&types, &type_spans));
    diagnostics.extend(record_subtypes(&subtypes, &record_shapes));
    diagnostics.extend(name_clashes(&relations, &types));
    let records = record_types(record_shapes, &types, diagnostics);
    let functors = functor_declarations(&functor_decls, &types, diagnostics);
    Declarations { relations, ios, types, unions, queries, records, limits, functors }
}

/// Whether the relations of `decl`, qualified `eqrel` at `at`, can be equivalence
/// relations, as Soufflé requires: two columns of one declared type; E0034 otherwise.
fn equivalence_columns(decl: &tree::Decl, at: Span, diagnostics: &mut Vec<Diagnostic>) -> bool {
    let names = decl.names.iter().map(|n| format!("`{}`", n.text)).collect::<Vec<_>>().join(", ");
    let report = match decl.attributes.as_slice() {
        [x, y] if x.ty.text == y.ty.text => return true,
        [x, y] => Diagnostic::error(
            Code::INVALID_DECLARATION,
            format!("the columns of the equivalence relation {names} have different types"),
        )
        .with_primary(y.ty.span, format!("`{}` here", y.ty.text))
        .with_secondary(x.ty.span, format!("`{}` here", x.ty.text))
        .with_help("an equivalence relation relates values of one type: give both columns the same type"),
        attributes => Diagnostic::error(
            Code::INVALID_DECLARATION,
            format!("the equivalence relation {names} has {} columns, not two", attributes.len()),
        )
        .with_primary(at, "an `eqrel` is a binary relation")
        .with_help("declare it with two columns of one type, or drop `eqrel`"),
    };
    diagnostics.push(report);
    false
}

/// The columns of each key of the `choice-domain` of `decl`; E0034 for a name that is
/// no attribute of the relation, E0041 for a relation that is also an `eqrel`.
fn choice_domain(
    decl: &tree::Decl,
    choice: &tree::ChoiceKeys,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<ir::ChoiceDomain> {
    let mut keys = Vec::new();
    let mut resolved = true;
    for key in &choice.keys {
        let mut columns = Vec::new();
        for name in key {
            match decl.attributes.iter().position(|a| a.name.text == name.text) {
                Some(column) => columns.push(column),
                None => {
                    resolved = false;
                    diagnostics.push(
                        Diagnostic::error(
                            Code::INVALID_DECLARATION,
                            format!("the relation has no attribute `{}`", name.text),
                        )
                        .with_primary(name.span, "not an attribute of the `.decl`")
                        .with_help("a key of `choice-domain` names attributes of the relation it qualifies"),
                    );
                }
            }
        }
        columns.sort_unstable();
        columns.dedup();
        keys.push(columns);
    }
    if let Some(eqrel) = decl.eqrel {
        diagnostics.push(
            Diagnostic::error(Code::CHOICE_DOMAIN, "an equivalence relation cannot have a `choice-domain`")
                .with_primary(choice.span, "a choice domain here")
                .with_secondary(eqrel, "an `eqrel` holds every pair of a class")
                .with_help("drop `eqrel` or the `choice-domain`"),
        );
        resolved = false;
    }
    resolved.then_some(ir::ChoiceDomain { keys, span: choice.span })
}

/// The record types and algebraic data types of `shapes` with their fields' types
/// resolved; E0034 for a field of an unknown type and for a branch name two types
/// declare (a branch names its type where it is used).
fn record_types(
    shapes: Vec<(String, bool, Vec<tree::RecordShape>)>,
    types: &FxHashMap<String, Vec<String>>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Records {
    let mut records = Records::default();
    for (index, (name, adt, shapes)) in shapes.into_iter().enumerate() {
        let id = ir::RecordTypeId(index as u32);
        let mut branches = Vec::with_capacity(shapes.len());
        for (b, shape) in shapes.into_iter().enumerate() {
            let branch_name = shape.name.as_ref().map_or_else(|| name.clone(), |n| n.text.clone());
            if let Some(n) = &shape.name {
                if records.branches.insert(n.text.clone(), (id, b)).is_some() {
                    diagnostics.push(
                        Diagnostic::error(
                            Code::INVALID_DECLARATION,
                            format!("the branch `{}` is declared twice", n.text),
                        )
                        .with_primary(n.span, "declared again here"),
                    );
                }
            }
            let mut fields = Vec::with_capacity(shape.fields.len());
            for (field, ty) in shape.fields {
                if !is_defined_type(&ty.text, types) {
                    diagnostics.push(
                        Diagnostic::error(Code::INVALID_DECLARATION, format!("the type `{}` is not defined", ty.text))
                            .with_primary(ty.span, "no `.type` defines it")
                            .with_help(format!(
                                "define it (`.type {} <: symbol`) or use `symbol`, `number`, `unsigned` or `float`",
                                ty.text
                            )),
                    );
                }
                fields.push(ir::Field { name: field.text, ty: column_kind(&ty.text, types) });
            }
            branches.push(ir::Branch { name: branch_name, fields });
        }
        records.types.push(ir::RecordType { name, branches, adt });
    }
    records
}

/// E0034 for a second `directive` (`.limitsize`, `.printsize`) of `relation`, which
/// Soufflé rejects: the size is `done` (limited, printed) twice.
fn size_directive_twice(directive: &str, done: &str, relation: &str, at: Span, first: Span) -> Diagnostic {
    Diagnostic::error(
        Code::INVALID_DECLARATION,
        format!("the size of `{relation}` is {done} twice (`{directive}` given twice)"),
    )
    .with_primary(at, "given again here")
    .with_secondary(first, "first given here")
    .with_help(format!("keep one `{directive}` of the relation"))
}

/// Whether `name` is a primitive type or one the program defines with `.type`.
fn is_defined_type(name: &str, types: &FxHashMap<String, Vec<String>>) -> bool {
    ValueType::from_name(name).is_some() || types.contains_key(name)
}

/// A program's record types and algebraic data types, and the branch each name names.
#[derive(Clone, Debug, Default)]
pub(super) struct Records {
    pub types: Vec<ir::RecordType>,
    pub branches: FxHashMap<String, (ir::RecordTypeId, usize)>,
}

/// Checks each `.functor`: declared once (E0043), not `stateful` (E0018: its function
/// takes Soufflé's own tables, which dlc does not have), each type one of the primitive
/// types or defined from them (E0043).
fn functor_declarations(
    decls: &[&tree::FunctorDecl],
    types: &FxHashMap<String, Vec<String>>,
    diagnostics: &mut Vec<Diagnostic>,
) -> FxHashMap<String, DeclaredFunctor> {
    let mut functors: FxHashMap<String, DeclaredFunctor> = FxHashMap::default();
    for decl in decls {
        if let Some(first) = functors.get(&decl.name.text) {
            diagnostics.push(
                Diagnostic::error(Code::INVALID_FUNCTOR, format!("the functor `{}` is declared twice", decl.name.text))
                    .with_primary(decl.name.span, "declared again here")
                    .with_secondary(first.span, "first declared here"),
            );
            continue;
        }
        let mut typed = true;
        let mut kind = |name: &ast::Name| -> ValueType {
            // A record type is none of them: a C function takes no record.
            let known = is_defined_type(&name.text, types) && !column_kind(&name.text, types).is_record();
            if !known && decl.stateful.is_none() {
                typed = false;
                diagnostics.push(
                    Diagnostic::error(
                        Code::INVALID_FUNCTOR,
                        format!("the functor `{}` has the unknown type `{}`", decl.name.text, name.text),
                    )
                    .with_primary(name.span, "no such type")
                    .with_help("a functor's parameters and result are of the types `number`, `unsigned`, `float` and `symbol`, or of types defined from them"),
                );
            }
            column_kind(&name.text, types)
        };
        let params: Vec<ValueType> = decl.params.iter().map(&mut kind).collect();
        let result = kind(&decl.result);
        if decl.stateful.is_some() {
            diagnostics.push(unsupported(decl.span, &tree::Construct::StatefulFunctor.describe()).with_help(
                "a stateful functor's C++ function takes Soufflé's symbol and record tables, which dlc does not have; declare it without `stateful`, its symbols passed and returned as texts (`const char*`)",
            ));
        }
        let functor = (typed && decl.stateful.is_none())
            .then(|| Arc::new(ir::UserFunctor::new(decl.name.text.clone(), params, result)));
        let declared = DeclaredFunctor { functor, span: decl.name.span, arity: decl.params.len() };
        functors.insert(decl.name.text.clone(), declared);
    }
    functors
}

/// Resolves each `@f(...)` in `clauses` to its declaration; E0043 for a call of a functor
/// no `.functor` declares, or with another count of arguments. Returns the name span of
/// the first call of each functor called.
pub(super) fn functor_calls(
    clauses: &mut [Clause],
    functors: &FxHashMap<String, DeclaredFunctor>,
    diagnostics: &mut Vec<Diagnostic>,
) -> FxHashMap<String, Span> {
    let mut called: FxHashMap<String, Span> = FxHashMap::default();
    let mut resolve = |functor: &mut ir::Functor, span: Span, arity: usize| {
        let ir::Functor::User(call) = functor else { return };
        let name = call.name().to_string();
        let Some(declared) = functors.get(&name) else {
            diagnostics.push(
                Diagnostic::error(Code::INVALID_FUNCTOR, format!("the functor `{name}` is not declared"))
                    .with_primary(span, "called here")
                    .with_help(format!(
                        "declare it: `.functor {name}(x: number): number`, with its parameters' and result's types"
                    )),
            );
            return;
        };
        if declared.arity != arity {
            diagnostics.push(
                Diagnostic::error(
                    Code::INVALID_FUNCTOR,
                    format!("`@{name}` is called with {arity} arguments; its declaration has {}", declared.arity),
                )
                .with_primary(span, format!("{arity} arguments here"))
                .with_secondary(declared.span, "declared here"),
            );
            return;
        }
        if let Some(resolved) = &declared.functor {
            *functor = ir::Functor::User(resolved.clone());
            called.entry(name).or_insert(span);
        }
    };
    for clause in clauses {
        let heads = clause.heads.iter_mut().flat_map(|h| h.args.iter_mut());
        let body = clause.body.iter_mut().flatten().flatten().flat_map(|literal| match literal {
            ast::Literal::Atom(atom) | ast::Literal::Negated { atom, .. } => atom.args.iter_mut().collect::<Vec<_>>(),
            ast::Literal::Compare(c) => vec![&mut c.left, &mut c.right],
        });
        for term in heads.chain(body) {
            term.for_each_call_mut(&mut resolve);
        }
    }
    called
}

/// E0025 for each cycle of `.type` definitions (`.type A = B`, `.type B = A`), once per
/// cycle, at its first definition: such a type never reaches `symbol` or `number`.
fn type_cycles(types: &FxHashMap<String, Vec<String>>, spans: &[(String, Span)]) -> Vec<Diagnostic> {
    // The types reachable through the definitions of `ty`.
    let reached = |ty: &str| -> FxHashSet<String> {
        let mut seen: FxHashSet<String> = FxHashSet::default();
        let mut worklist: Vec<&str> = types.get(ty).map_or(Vec::new(), |f| f.iter().map(String::as_str).collect());
        while let Some(t) = worklist.pop() {
            if seen.insert(t.to_string()) {
                worklist.extend(types.get(t).into_iter().flatten().map(String::as_str));
            }
        }
        seen
    };
    let mut reported: FxHashSet<&str> = FxHashSet::default();
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

/// The order of Soufflé's types: `.type A <: B` makes `A` a subtype of `B`, `.type U = A
/// | B` makes `A` and `B` subtypes of `U`, and `.type N = M` makes `N` another name of `M`.
pub(super) struct Subtypes<'t> {
    /// Each known type (defined or primitive) with the types it is a subtype of, itself
    /// included.
    ancestors: FxHashMap<&'t str, FxHashSet<&'t str>>,
    /// The kind of each known type, so that a mix of kinds is left to E0028.
    kinds: FxHashMap<&'t str, ValueType>,
}

impl<'t> Subtypes<'t> {
    pub fn new(types: &'t FxHashMap<String, Vec<String>>, unions: &FxHashSet<String>) -> Self {
        let mut up: FxHashMap<&str, Vec<&str>> = FxHashMap::default();
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
        let mut ancestors = FxHashMap::default();
        let mut kinds = FxHashMap::default();
        for ty in known {
            let mut seen: FxHashSet<&str> = FxHashSet::default();
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
pub(super) fn subtype_mismatches(clauses: &[Clause], relations: &[Relation], subtypes: &Subtypes) -> Vec<Diagnostic> {
    let declared: FxHashMap<&str, &Relation> = relations.iter().map(|d| (d.name.as_str(), d)).collect();
    // Each variable argument of `atom` in a column of a known type, with the type.
    fn columns<'c>(
        atom: &'c ast::Atom,
        declared: &FxHashMap<&str, &'c Relation>,
        subtypes: &'c Subtypes,
    ) -> impl Iterator<Item = (&'c str, &'c str, Span)> + 'c {
        let decl = declared.get(atom.pred.text.as_str()).filter(|d| d.arity == atom.args.len());
        let types = decl.map_or(&[][..], |d| &d.types[..]);
        atom.args.iter().zip(types).filter_map(move |(term, ty)| match &term.kind {
            TermKind::Var(v) if subtypes.kinds.contains_key(ty.as_str()) => Some((v.as_str(), ty.as_str(), term.span)),
            _ => None,
        })
    }
    let mut diagnostics = Vec::new();
    for clause in clauses {
        for conjunction in clause.body.iter().flatten() {
            let mut bound: FxHashMap<&str, Vec<(&str, Span)>> = FxHashMap::default();
            for atom in conjunction.iter().filter_map(|l| match l {
                ast::Literal::Atom(a) => Some(a),
                _ => None,
            }) {
                for (var, ty, span) in columns(atom, &declared, subtypes) {
                    bound.entry(var).or_default().push((ty, span));
                }
            }
            // The common subtypes of each variable's columns.
            let mut common: FxHashMap<&str, Vec<&str>> = FxHashMap::default();
            for (var, uses) in &bound {
                let kind = subtypes.kinds[uses[0].0];
                if uses.iter().any(|(ty, _)| subtypes.kinds[ty] != kind) {
                    continue;
                }
                let below: Vec<&str> = subtypes
                    .ancestors
                    .keys()
                    .copied()
                    .filter(|s| uses.iter().all(|(ty, _)| subtypes.within(s, ty)))
                    .collect();
                if below.is_empty() {
                    let (first, second) = (&uses[0], uses.iter().find(|(t, _)| !subtypes.within(uses[0].0, t)));
                    let (other, at) = second.map_or((first.0, first.1), |(t, s)| (*t, *s));
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
                common.insert(*var, below);
            }
            for head in &clause.heads {
                for (var, ty, span) in columns(head, &declared, subtypes) {
                    let Some(below) = common.get(var) else { continue };
                    if subtypes.kinds[ty] != subtypes.kinds[below[0]] {
                        continue;
                    }
                    if let Some(outside) = below.iter().find(|s| !subtypes.within(s, ty)) {
                        let from = &bound[var][0];
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
fn type_definitions(types: &FxHashMap<String, Vec<String>>, spans: &[(String, Span)]) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let mut first: FxHashMap<&str, Span> = FxHashMap::default();
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
        let mut seen: FxHashSet<&str> = FxHashSet::default();
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

/// E0034 for a subset type of a record type or an algebraic data type (`.type S <: List`),
/// which Soufflé 2.5 rejects: a subset type derives from a primitive type.
fn record_subtypes(
    subtypes: &[(String, Span, Vec<String>)],
    record_shapes: &[(String, bool, Vec<tree::RecordShape>)],
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for (name, span, from) in subtypes {
        let Some((record, _, _)) = record_shapes.iter().find(|(r, _, _)| from.contains(r)) else { continue };
        diagnostics.push(
            Diagnostic::error(
                Code::INVALID_DECLARATION,
                format!("the subset type `{name}` cannot be derived from the record type `{record}`"),
            )
            .with_primary(*span, "a subset type of a record type")
            .with_help(format!(
                "derive a subset type from `number`, `unsigned`, `float` or `symbol`; for another name of `{record}`, write `.type {name} = {record}`"
            )),
        );
    }
    diagnostics
}

/// E0034 for a relation named as a type is, which Soufflé 2.5 rejects as a name clash.
fn name_clashes(relations: &[Relation], types: &FxHashMap<String, Vec<String>>) -> Vec<Diagnostic> {
    relations
        .iter()
        .filter(|r| types.contains_key(&r.name))
        .map(|r| {
            Diagnostic::error(Code::INVALID_DECLARATION, format!("the relation `{}` has the name of a type", r.name))
                .with_primary(r.span, "a type has this name")
                .with_help("give the relation and the type different names")
        })
        .collect()
}

/// What [`uses`] keeps.
pub(super) struct Checked {
    /// The clauses whose atoms name declared relations with their arities.
    pub clauses: Vec<Clause>,
    /// The queries whose atoms do.
    pub queries: Vec<ast::Query>,
    /// The relations, each declared once (a second declaration is reported and dropped).
    pub relations: Vec<Relation>,
    /// The I/O directives of declared relations, a second `.printsize` of one dropped.
    pub ios: Vec<(IoKind, RawIo)>,
}

/// The reports about `.plan` clauses: one warning that they are ignored (dlc orders each
/// join by the sizes of the relations it joins), and W0010 for each plan Soufflé
/// rejects: one of a clause that is not recursive, a version the clause does not have
/// (version n reads the delta of its n-th body atom recursive with its head), or an
/// order that does not list each body atom.
fn plans(program: &tree::Program) -> Vec<Diagnostic> {
    let plans: Vec<(usize, &tree::Plan)> = program
        .items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| match item {
            Item::Plan(plan) => Some((i, plan)),
            _ => None,
        })
        .collect();
    let Some((_, first)) = plans.first() else { return Vec::new() };
    let mut ignored = Diagnostic::warning(Code::PRAGMA_IGNORED, "`.plan` is read and ignored")
        .with_primary(first.span, "ignored here")
        .with_help("dlc chooses each rule's join order from the sizes of the relations it joins, as it evaluates");
    if plans.len() > 1 {
        ignored = ignored.with_note(format!("and {} more `.plan` clause(s), ignored too", plans.len() - 1));
    }
    let mut diagnostics = vec![ignored];
    // A clause with a construct dlc does not support is dropped as it is read, and what it
    // reads with it: whether a clause is recursive, and through how many atoms, is then
    // unknown.
    let dropped = program.items.iter().any(|item| matches!(item, Item::Unsupported(_)));
    // Soufflé checks a plan once `inline` relations are unfolded, which changes the
    // atoms of the clauses that read them.
    let inlined: FxHashSet<&str> = program
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Decl(decl) if decl.inline && !decl.no_inline => Some(decl.names.iter().map(|n| n.text.as_str())),
            _ => None,
        })
        .flatten()
        .collect();
    // Which relations each relation's clauses read.
    let mut reads: FxHashMap<&str, Vec<&str>> = FxHashMap::default();
    for item in &program.items {
        if let Item::Clause(clause) = item {
            let mut atoms = Vec::new();
            for conjunction in clause.body.iter().flat_map(|d| &d.0) {
                for literal in &conjunction.0 {
                    tree_atoms(literal, &mut atoms);
                }
            }
            for head in &clause.heads {
                reads.entry(head.pred.text.as_str()).or_default().extend(atoms.iter().map(|a| a.pred.text.as_str()));
            }
        }
    }
    let reaches = |from: &str, to: &str| {
        let mut seen = FxHashSet::from_iter([from]);
        let mut todo = vec![from];
        while let Some(r) = todo.pop() {
            if r == to {
                return true;
            }
            for &next in reads.get(r).into_iter().flatten() {
                if seen.insert(next) {
                    todo.push(next);
                }
            }
        }
        false
    };
    for (at, plan) in plans {
        // The clause a plan belongs to is the item before it; a plan of anything else
        // (or of a clause with several heads or alternatives) is left unchecked.
        let Some(Item::Clause(clause)) = at.checked_sub(1).and_then(|i| program.items.get(i)) else { continue };
        let ([head], Some(tree::Disjunction(alternatives))) = (clause.heads.as_slice(), &clause.body) else { continue };
        let [conjunction] = alternatives.as_slice() else { continue };
        // Soufflé's atoms of a plan are the positive ones, those of a subsumptive
        // clause's body (held as a group after its two atoms) included.
        let mut atoms: Vec<&ast::Atom> = Vec::new();
        let mut literals: Vec<&tree::Literal> = conjunction.0.iter().rev().collect();
        while let Some(literal) = literals.pop() {
            match literal {
                tree::Literal::Atom(atom) => atoms.push(atom),
                tree::Literal::Group(tree::Disjunction(group)) if clause.subsumes.is_some() => {
                    if let [tree::Conjunction(inner)] = group.as_slice() {
                        literals.extend(inner.iter().rev());
                    }
                }
                _ => {}
            }
        }
        let head = head.pred.text.as_str();
        if atoms.iter().any(|a| inlined.contains(a.pred.text.as_str())) {
            continue;
        }
        let recursive = atoms.iter().filter(|a| reaches(a.pred.text.as_str(), head)).count();
        for order in &plan.orders {
            let problem = if recursive == 0 && !dropped {
                Some((
                    order.version_span,
                    "the clause is not recursive: Soufflé plans recursive clauses only".to_string(),
                ))
            } else if order.version >= recursive as u64 && !dropped {
                let versions = format!("only versions 0..{} permitted", recursive - 1);
                Some((order.version_span, format!("the clause has no version {}: {versions}", order.version)))
            } else if order.atoms != atoms.len() {
                let message = format!("the order lists {} atom(s); the clause has {}", order.atoms, atoms.len());
                Some((order.order_span, message))
            } else {
                None
            };
            if let Some((span, message)) = problem {
                diagnostics.push(
                    Diagnostic::warning(Code::INVALID_PLAN, format!("invalid `.plan`: {message}"))
                        .with_primary(span, "here")
                        .with_secondary(clause.span, "of this clause"),
                );
            }
        }
    }
    diagnostics
}

/// The atoms a literal of the tree reads, negated or in an aggregate too.
fn tree_atoms<'a>(literal: &'a tree::Literal, out: &mut Vec<&'a ast::Atom>) {
    match literal {
        tree::Literal::Atom(atom) => out.push(atom),
        tree::Literal::Not { inner, .. } => tree_atoms(inner, out),
        tree::Literal::Group(disjunction) => {
            for literal in disjunction.0.iter().flat_map(|c| &c.0) {
                tree_atoms(literal, out);
            }
        }
        tree::Literal::Compare(comparison) => {
            for term in [&comparison.left, &comparison.right].into_iter().flat_map(ast::Term::subterms) {
                if let TermKind::Aggregate { body, .. } = &term.kind {
                    out.extend(body.iter().filter_map(ast::Literal::atom));
                }
            }
        }
        tree::Literal::Constant(_) => {}
    }
}

/// Checks declarations (E0019 undeclared, E0020 declared twice, E0004 arity against the
/// declaration) and I/O directives; keeps what passed. `unexpanded` are the instances an
/// error kept from being expanded, whose relations (`inst.r`) are not reported as
/// undeclared either.
pub(super) fn uses(
    clauses: Vec<Clause>,
    queries: Vec<ast::Query>,
    relations: Vec<Relation>,
    ios: Vec<(IoKind, RawIo)>,
    unexpanded: &FxHashSet<String>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Checked {
    let of_unexpanded = |name: &str| name.split_once('.').is_some_and(|(instance, _)| unexpanded.contains(instance));
    let mut declared: FxHashMap<&str, &Relation> = FxHashMap::default();
    let mut unique = Vec::new();
    for (i, relation) in relations.iter().enumerate() {
        match declared.get(relation.name.as_str()) {
            Some(first) => diagnostics.push(
                Diagnostic::error(Code::DECLARED_TWICE, format!("relation `{}` is declared twice", relation.name))
                    .with_primary(relation.span, "declared again here")
                    .with_secondary(first.span, "first declared here"),
            ),
            None => {
                declared.insert(&relation.name, relation);
                unique.push(i);
            }
        }
    }
    let check_atom = |atom: &ast::Atom, diagnostics: &mut Vec<Diagnostic>| -> bool {
        match declared.get(atom.pred.text.as_str()) {
            None if of_unexpanded(&atom.pred.text) => false,
            None => {
                diagnostics.push(undeclared(&atom.pred.text, atom.pred.span, Some(atom.args.len())));
                false
            }
            Some(relation) if relation.arity != atom.args.len() => {
                diagnostics.push(
                    Diagnostic::error(
                        Code::ARITY_MISMATCH,
                        format!(
                            "`{}` is used with {} argument(s) but is declared with {}",
                            relation.name,
                            atom.args.len(),
                            relation.arity
                        ),
                    )
                    .with_primary(atom.span, format!("{} argument(s) here", atom.args.len()))
                    .with_secondary(relation.span, format!("declared with {} attribute(s) here", relation.arity)),
                );
                false
            }
            Some(_) => true,
        }
    };
    let mut kept = Vec::new();
    for clause in clauses {
        let mut ok = true;
        let body_atoms = clause.body.iter().flatten().flatten().filter_map(ast::Literal::atom);
        for atom in clause.heads.iter().chain(body_atoms) {
            ok &= check_atom(atom, diagnostics);
        }
        if ok {
            kept.push(clause);
        }
    }
    let mut kept_ios: Vec<(IoKind, RawIo)> = Vec::new();
    for (kind, io) in ios {
        if !declared.contains_key(io.name.as_str()) {
            if !of_unexpanded(&io.name) {
                diagnostics.push(undeclared(&io.name, io.span, None));
            }
            continue;
        }
        // A second `.printsize` is an error in Soufflé.
        if kind == IoKind::Printsize {
            let first = kept_ios.iter().find(|(k, p)| *k == IoKind::Printsize && p.name == io.name);
            if let Some((_, first)) = first {
                diagnostics.push(size_directive_twice(".printsize", "printed", &io.name, io.span, first.span));
                continue;
            }
        }
        kept_ios.push((kind, io));
    }
    let queries = queries.into_iter().filter(|q| check_atom(&q.atom, diagnostics)).collect();
    let relations = relations.into_iter().enumerate().filter(|(i, _)| unique.contains(i)).map(|(_, r)| r).collect();
    Checked { clauses: kept, queries, relations, ios: kept_ios }
}

/// E0019; `arity` (when used in an atom) gives the declaration to suggest.
pub(super) fn undeclared(name: &str, span: Span, arity: Option<usize>) -> Diagnostic {
    let attributes = match arity {
        Some(n) => (0..n).map(|i| format!("x{i}:symbol")).collect::<Vec<_>>().join(", "),
        None => "x:symbol, ...".to_string(),
    };
    Diagnostic::error(Code::UNDECLARED_RELATION, format!("relation `{name}` is not declared"))
        .with_primary(span, "used here")
        .with_help(format!("declare it, with a type for each attribute: `.decl {name}({attributes})`"))
}
