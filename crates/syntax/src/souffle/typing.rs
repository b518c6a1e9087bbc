//! The typing of comparisons, on the expanded clauses after the declaration checks: each
//! ordering comparison (`<`, `<=`, `>`, `>=`) of symbols is marked as one, since Soufflé
//! orders symbols by their text, and each of `unsigned` values as one, since Soufflé
//! orders those as unsigned integers, and each of floats as one. An operand is a symbol
//! when it is a string or a variable in a column declared with a symbol type, a number, an
//! unsigned or a float when it is a variable of such a column, a float literal or an
//! unsigned one (`1u`), or an expression computing with such operands (a number literal
//! without a suffix takes the other operand's kind). A
//! comparison of a symbol with a number, or of a `number` with an `unsigned`, which
//! Soufflé rejects as type errors, is E0018.

use super::lower::Clause;
use super::{unsupported, Relation};
use crate::ast::{self, TermKind};
use diag::Diagnostic;
use ir::ValueType;
use rustc_hash::{FxHashMap, FxHashSet};

/// The clauses whose comparisons type, with their comparisons' domains set; reports the
/// others'.
pub(super) fn comparisons(
    clauses: Vec<Clause>,
    relations: &[Relation],
    types: &FxHashMap<String, Vec<String>>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Clause> {
    let declared: FxHashMap<&str, &Relation> = relations.iter().map(|r| (r.name.as_str(), r)).collect();
    let mut kept = Vec::with_capacity(clauses.len());
    for mut clause in clauses {
        let mut ok = true;
        for conjunction in clause.body.iter_mut().flatten() {
            ok &= order_symbols(conjunction, &declared, types, diagnostics);
        }
        if ok {
            kept.push(clause);
        }
    }
    kept
}

/// The clauses with each cast `as(x, T)` whose `T` the parser left as a name resolved to
/// the kind of `T` (a base type, a subtype or a union: the cast takes the value as one of
/// the type's kind, its bits unchanged); E0038 for each cast to a type the program does
/// not define, whose clause is dropped.
pub(super) fn casts(
    clauses: Vec<Clause>,
    types: &FxHashMap<String, Vec<String>>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Clause> {
    let mut kept = Vec::with_capacity(clauses.len());
    for mut clause in clauses {
        let mut ok = true;
        let mut roots: Vec<&mut ast::Term> = clause.heads.iter_mut().flat_map(|h| h.args.iter_mut()).collect();
        for literal in clause.body.iter_mut().flatten().flatten() {
            roots.extend(literal_terms(literal));
        }
        // Every term, aggregates' values and bodies included, with an explicit stack.
        while let Some(term) = roots.pop() {
            if let TermKind::Call { functor, args, .. } = &mut term.kind {
                if let (ir::Functor::Cast(..), [_, target]) = (&*functor, args.as_slice()) {
                    let TermKind::Ident(name) = &target.kind else { unreachable!("the parser makes the type a name") };
                    if !types.contains_key(name) {
                        ok = false;
                        diagnostics.push(unknown_cast_type(name, target.span, types));
                    }
                    *functor = functor.with_target(column_kind(name, types));
                    args.pop();
                }
            }
            roots.extend(operands_mut(term));
        }
        if ok {
            kept.push(clause);
        }
    }
    kept
}

/// The terms `term` computes from: a functor's or range's arguments, an operator's
/// operands, an aggregate's value and its body's terms.
fn operands_mut(term: &mut ast::Term) -> Vec<&mut ast::Term> {
    match &mut term.kind {
        TermKind::Call { args, .. } | TermKind::Range { args, .. } => args.iter_mut().collect(),
        TermKind::Unary { operand, .. } => vec![&mut **operand],
        TermKind::Binary { left, right, .. } => vec![&mut **left, &mut **right],
        TermKind::Aggregate { value, body, .. } => {
            let mut terms: Vec<&mut ast::Term> = value.iter_mut().map(|v| &mut **v).collect();
            terms.extend(body.iter_mut().flat_map(literal_terms));
            terms
        }
        _ => Vec::new(),
    }
}

/// A literal's top-level terms, mutably.
fn literal_terms(literal: &mut ast::Literal) -> Vec<&mut ast::Term> {
    match literal {
        ast::Literal::Atom(atom) | ast::Literal::Negated { atom, .. } => atom.args.iter_mut().collect(),
        ast::Literal::Compare(c) => vec![&mut c.left, &mut c.right],
    }
}

/// E0038 for a cast to `name`, which no `.type` defines, with the nearest defined name.
fn unknown_cast_type(name: &str, span: diag::Span, types: &FxHashMap<String, Vec<String>>) -> Diagnostic {
    let known = ["number", "unsigned", "float", "symbol"].into_iter().chain(types.keys().map(String::as_str));
    let nearest = known.min_by_key(|k| (strsim::damerau_levenshtein(name, k), *k)).unwrap_or("number");
    Diagnostic::error(
        diag::Code::UNKNOWN_CAST_TYPE,
        format!("`as(...)` casts to the type `{name}`, which is not defined"),
    )
    .with_primary(span, "no `.type` defines this name")
    .with_help(format!("did you mean `{nearest}`? Define the type with `.type`, or cast to a base type"))
}

/// The kind of `ty`: a number type when it is `number`, `unsigned`, `float`, or defined
/// from number types only (unsigned or float if any of them is: Soufflé rejects a union
/// of two), otherwise a symbol type. Definitions are followed with a worklist and a visited set, so
/// a cycle ends.
pub(super) fn column_kind(ty: &str, types: &FxHashMap<String, Vec<String>>) -> ValueType {
    // The primitive types, the columns of most programs, without the walk's allocations.
    match ty {
        "number" => return ValueType::Number,
        "unsigned" => return ValueType::Unsigned,
        "float" => return ValueType::Float,
        _ => {}
    }
    let mut seen = FxHashSet::default();
    let mut worklist = vec![ty];
    let mut kind = ValueType::Number;
    while let Some(t) = worklist.pop() {
        if let Some(id) = t.strip_prefix(RECORD_MEMBER).and_then(|id| id.parse().ok()) {
            return ValueType::Record(ir::RecordTypeId(id));
        }
        match t {
            "number" => {}
            "unsigned" => kind = ValueType::Unsigned,
            "float" => kind = ValueType::Float,
            _ => match types.get(t) {
                Some(from) if seen.insert(t) => worklist.extend(from.iter().map(String::as_str)),
                Some(_) => {}
                None => return ValueType::Symbol,
            },
        }
    }
    kind
}

/// What a record type or algebraic data type is defined from in the table of types: a
/// name no source can write, which [`column_kind`] reads as the record type with that
/// index, so that another name of a record type (`.type L = List`) is one too.
const RECORD_MEMBER: &str = "[record] ";

pub(super) fn record_member(index: usize) -> String {
    format!("{RECORD_MEMBER}{index}")
}

/// Per variable of a conjunction, the kind of the first column it appears in.
pub(super) fn variable_kinds(
    conjunction: &[ast::Literal],
    declared: &FxHashMap<&str, &Relation>,
    types: &FxHashMap<String, Vec<String>>,
) -> FxHashMap<String, ValueType> {
    let mut typed: FxHashMap<String, ValueType> = FxHashMap::default();
    for atom in conjunction.iter().filter_map(ast::Literal::atom) {
        let Some(decl) = declared.get(atom.pred.text.as_str()) else { continue };
        for (term, ty) in atom.args.iter().zip(&decl.types) {
            if let TermKind::Var(name) = &term.kind {
                typed.entry(name.clone()).or_insert_with(|| column_kind(ty, types));
            }
        }
    }
    // A variable a record's field is read into (`x = field(r)`) has the field's type.
    for literal in conjunction {
        let ast::Literal::Compare(c) = literal else { continue };
        if let (TermKind::Var(name), TermKind::Call { functor: functor @ ir::Functor::Field { .. }, .. }) =
            (&c.left.kind, &c.right.kind)
        {
            typed.entry(name.clone()).or_insert(functor.result());
        }
    }
    typed
}

/// Sets the domain of each ordering comparison of `conjunction` by its operands' kinds;
/// whether none compares a symbol with a number or a `number` with an `unsigned`.
fn order_symbols(
    conjunction: &mut [ast::Literal],
    declared: &FxHashMap<&str, &Relation>,
    types: &FxHashMap<String, Vec<String>>,
    diagnostics: &mut Vec<Diagnostic>,
) -> bool {
    let typed = variable_kinds(conjunction, declared, types);
    let kind = |term: &ast::Term| term_kind(term, &typed);
    let mut ok = true;
    for literal in conjunction.iter_mut() {
        let ast::Literal::Compare(c) = literal else { continue };
        if !c.op.is_ordering() {
            continue;
        }
        let (left, right) = (kind(&c.left), kind(&c.right));
        let number_literal = |term: &ast::Term| matches!(term.kind, TermKind::Int(_) | TermKind::Float(_));
        let symbol_with_number = |a: Option<ValueType>, b: Option<ValueType>, other: &ast::Term| {
            a == Some(ValueType::Symbol)
                && (matches!(b, Some(ValueType::Number | ValueType::Unsigned | ValueType::Float))
                    || number_literal(other))
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
        } else if left == Some(ValueType::Float) || right == Some(ValueType::Float) {
            // A float with an integer type is type inference's contradiction (E0028).
            c.domain = ValueType::Float;
        }
    }
    ok
}

/// The kind of `term`'s value, `typed` giving its variables'. A number literal without a
/// suffix takes the kind of the other operand, as in Soufflé; an operator computes in its
/// operands' kind (`0u - 1u`, `x + 1`), so the first operand with a kind gives the
/// expression's (a contradiction among them is type inference's, E0028). Expressions are
/// walked with an explicit stack.
fn term_kind(term: &ast::Term, typed: &FxHashMap<String, ValueType>) -> Option<ValueType> {
    let mut pending = vec![term];
    while let Some(term) = pending.pop() {
        let found = match &term.kind {
            TermKind::Str(_) => Some(ValueType::Symbol),
            TermKind::Float(_) => Some(ValueType::Float),
            TermKind::Int(text) if text.ends_with(['u', 'U']) => Some(ValueType::Unsigned),
            TermKind::Var(name) => typed.get(name).copied(),
            TermKind::Call { functor, .. } if functor.is_typed() => Some(functor.result()),
            TermKind::Call { args, .. } => {
                pending.extend(args.iter().rev());
                None
            }
            TermKind::Unary { operand, .. } => {
                pending.push(operand);
                None
            }
            TermKind::Binary { left, right, .. } => {
                pending.push(right);
                pending.push(left);
                None
            }
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The clauses with each `a + b` of symbols made `cat(a, b)`, as Soufflé 2.5 reads `+`
/// on two symbols (`"pre-" + s`, `s1 + s2 + s3`): an operand is a symbol when it is a string,
/// a variable of a symbol column of the conjunction's atoms, or a functor of a symbol
/// result. Heads, body terms and aggregates' values and bodies are rewritten; terms are
/// walked with an explicit stack.
pub(super) fn symbol_concatenations(
    mut clauses: Vec<Clause>,
    relations: &[Relation],
    types: &FxHashMap<String, Vec<String>>,
) -> Vec<Clause> {
    let declared: FxHashMap<&str, &Relation> = relations.iter().map(|r| (r.name.as_str(), r)).collect();
    for clause in &mut clauses {
        if !clause_adds(clause) {
            continue;
        }
        // The heads are shared by the conjunctions; a variable's kind is the first
        // conjunction's that types it.
        let mut typed: FxHashMap<String, ValueType> = FxHashMap::default();
        for conjunction in clause.body.iter().flatten() {
            for (v, ty) in variable_kinds(conjunction, &declared, types) {
                typed.entry(v).or_insert(ty);
            }
        }
        let mut roots: Vec<&mut ast::Term> = clause.heads.iter_mut().flat_map(|h| h.args.iter_mut()).collect();
        for literal in clause.body.iter_mut().flatten().flatten() {
            roots.extend(literal_terms(literal));
        }
        while let Some(term) = roots.pop() {
            if let TermKind::Binary { op: ir::BinOp::Add, left, right, .. } = &term.kind {
                // Soufflé's `+` of symbols takes two: `x + 1` stays arithmetic (E0030).
                let kind = |t: &ast::Term| match t.kind {
                    TermKind::Int(_) | TermKind::Float(_) => Some(ValueType::Number),
                    _ => term_kind(t, &typed),
                };
                let (l, r) = (kind(left), kind(right));
                let symbol = |k: Option<ValueType>| k == Some(ValueType::Symbol);
                if (symbol(l) || symbol(r))
                    && l.is_none_or(|k| k == ValueType::Symbol)
                    && r.is_none_or(|k| k == ValueType::Symbol)
                {
                    let TermKind::Binary { op_span, left, right, .. } =
                        std::mem::replace(&mut term.kind, TermKind::Anon)
                    else {
                        unreachable!("a binary term")
                    };
                    term.kind =
                        TermKind::Call { functor: ir::Functor::Cat(2), name_span: op_span, args: vec![*left, *right] };
                }
            }
            roots.extend(operands_mut(term));
        }
    }
    clauses
}

/// Whether a term of `clause` (aggregates' values and bodies included) adds.
fn clause_adds(clause: &Clause) -> bool {
    let mut roots: Vec<&ast::Term> = clause.heads.iter().flat_map(|h| &h.args).collect();
    roots.extend(clause.body.iter().flatten().flatten().flat_map(ast::Literal::terms));
    while let Some(root) = roots.pop() {
        for term in root.subterms() {
            match &term.kind {
                TermKind::Binary { op: ir::BinOp::Add, .. } => return true,
                TermKind::Aggregate { value, body, .. } => {
                    roots.extend(value.iter().map(|v| &**v));
                    roots.extend(body.iter().flat_map(ast::Literal::terms));
                }
                _ => {}
            }
        }
    }
    false
}
