//! The typing of comparisons, on the expanded clauses after the declaration checks: each
//! ordering comparison (`<`, `<=`, `>`, `>=`) of symbols is marked as one, since Soufflé
//! orders symbols by their text, and each of `unsigned` values as one, since Soufflé
//! orders those as unsigned integers, and each of floats as one. An operand is a symbol
//! when it is a string or a variable in a column declared with a symbol type, a number, an
//! unsigned or a float when it is a variable of such a column or (a float) a float
//! literal (a number literal takes the other operand's kind). A
//! comparison of a symbol with a number, or of a `number` with an `unsigned`, which
//! Soufflé rejects as type errors, is E0018.

use super::lower::Clause;
use super::{unsupported, Relation};
use crate::ast::{self, TermKind};
use diag::Diagnostic;
use ir::ValueType;
use std::collections::{HashMap, HashSet};

/// The clauses whose comparisons type, with their comparisons' domains set; reports the
/// others'.
pub(super) fn comparisons(
    clauses: Vec<Clause>,
    relations: &[Relation],
    types: &HashMap<String, Vec<String>>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Clause> {
    let declared: HashMap<&str, &Relation> = relations.iter().map(|r| (r.name.as_str(), r)).collect();
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

/// The kind of `ty`: a number type when it is `number`, `unsigned`, `float`, or defined
/// from number types only (unsigned or float if any of them is: Soufflé rejects a union
/// of two), otherwise a symbol type. Definitions are followed with a worklist and a visited set, so
/// a cycle ends.
pub(super) fn column_kind(ty: &str, types: &HashMap<String, Vec<String>>) -> ValueType {
    let mut seen = HashSet::new();
    let mut worklist = vec![ty];
    let mut kind = ValueType::Number;
    while let Some(t) = worklist.pop() {
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

/// Per variable of a conjunction, the kind of the first column it appears in.
pub(super) fn variable_kinds(
    conjunction: &[ast::Literal],
    declared: &HashMap<&str, &Relation>,
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

/// Sets the domain of each ordering comparison of `conjunction` by its operands' kinds;
/// whether none compares a symbol with a number or a `number` with an `unsigned`.
fn order_symbols(
    conjunction: &mut [ast::Literal],
    declared: &HashMap<&str, &Relation>,
    types: &HashMap<String, Vec<String>>,
    diagnostics: &mut Vec<Diagnostic>,
) -> bool {
    let typed = variable_kinds(conjunction, declared, types);
    // A number literal takes the kind of the other operand, as in Soufflé.
    let kind = |term: &ast::Term| match &term.kind {
        TermKind::Str(_) => Some(ValueType::Symbol),
        TermKind::Float(_) => Some(ValueType::Float),
        TermKind::Var(name) => typed.get(name).copied(),
        TermKind::Call { functor, .. } => Some(functor.result()).filter(|_| functor.is_typed()),
        _ => None,
    };
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
