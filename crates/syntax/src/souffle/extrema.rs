//! `min` and `max` of symbols (`max("b", "a")`, `min(x, y)` over symbol columns), which
//! Soufflé orders by text. Values in dlc's expressions are integers, so each such term is
//! rewritten before lowering into comparisons of symbols, which every engine orders by
//! text already: `max(a, b)` becomes a fresh variable `v` and two alternatives,
//! `a >= b, v = a` and `a < b, v = b` (one rule each); nested ones multiply out. A term
//! of constants alone is computed here.

use super::MAX_EXPANSION;
use crate::ast::{self, Comparison, Literal, Term, TermKind};
use diag::{Code, Diagnostic};
use ir::{BinOp, CmpOp, ValueType};

/// The rules `rule` stands for once its symbol `min`/`max` terms are rewritten (itself
/// when it has none); `kind` gives the kind of a variable's column. An error when the
/// alternatives would pass [`MAX_EXPANSION`] rules.
pub(super) fn expand(
    rule: ast::Rule,
    kind: &dyn Fn(&str) -> Option<ValueType>,
    fresh: &mut usize,
) -> Result<Vec<ast::Rule>, Diagnostic> {
    let mut rule = rule;
    // Each rewritten term: the variable that replaces it and its alternatives.
    let mut replaced: Vec<(String, Vec<Alternative>)> = Vec::new();
    for root in rule.terms_mut() {
        root.rewrite_outermost(
            |term| is_symbol_extremum(term, kind),
            |term| {
                let alternatives = alternatives(term);
                if let Some(value) = constant(&alternatives) {
                    term.kind = TermKind::Str(value);
                    return;
                }
                *fresh += 1;
                let name = format!("extremum#{fresh}");
                *term = Term { kind: TermKind::Var(name.clone()), span: term.span };
                replaced.push((name, alternatives));
            },
        );
    }
    if replaced.is_empty() {
        return Ok(vec![rule]);
    }
    let count = replaced.iter().try_fold(1usize, |n, (_, alternatives)| n.checked_mul(alternatives.len()));
    if count.is_none_or(|n| n > MAX_EXPANSION) {
        return Err(Diagnostic::error(
            Code::UNSUPPORTED_SOUFFLE,
            format!("the `min` and `max` of symbols in this rule make more than {MAX_EXPANSION} rules"),
        )
        .with_primary(rule.span, "this rule")
        .with_help("compute part of the `min` or `max` in a rule of its own"));
    }
    let mut rules = vec![rule];
    for (name, alternatives) in replaced {
        let mut next = Vec::with_capacity(rules.len() * alternatives.len());
        for rule in &rules {
            for (conditions, value) in &alternatives {
                let mut body = rule.body.clone();
                body.extend(conditions.iter().cloned());
                let var = Term { kind: TermKind::Var(name.clone()), span: value.span };
                body.push(Literal::Compare(symbol_comparison(var, CmpOp::Eq, value.clone())));
                next.push(ast::Rule { body, ..rule.clone() });
            }
        }
        rules = next;
    }
    Ok(rules)
}

/// One way a `min`/`max` term takes its value: the comparisons under which it is `value`.
type Alternative = (Vec<Literal>, Term);

/// Whether `term` is a `min` or `max` with an operand of a symbol kind.
/// Whether the rule has a `min` or `max` of two operands where [`expand`] looks for one:
/// without, no variable's kind is asked for.
pub(super) fn has_extremum(rule: &ast::Rule) -> bool {
    rule.terms()
        .flat_map(Term::subterms)
        .any(|t| matches!(t.kind, TermKind::Binary { op: BinOp::Min | BinOp::Max, .. }))
}

fn is_symbol_extremum(term: &Term, kind: &dyn Fn(&str) -> Option<ValueType>) -> bool {
    matches!(&term.kind, TermKind::Binary { op: BinOp::Min | BinOp::Max, left, right, .. }
        if is_symbol(left, kind) || is_symbol(right, kind))
}

/// Whether `term` is a string, a variable of a symbol column or a symbol `min`/`max`
/// (terms are at most [`crate::expr::MAX_DEPTH`] deep, so the recursion is bounded).
fn is_symbol(term: &Term, kind: &dyn Fn(&str) -> Option<ValueType>) -> bool {
    match &term.kind {
        TermKind::Str(_) => true,
        TermKind::Var(v) => kind(v) == Some(ValueType::Symbol),
        TermKind::Binary { op: BinOp::Min | BinOp::Max, .. } => is_symbol_extremum(term, kind),
        _ => false,
    }
}

/// The alternatives of a symbol term: a leaf is itself; `max(a, b)` is `a` where `a >= b`
/// and `b` where `a < b` (`min` with `<=` and `>`), for each alternative of `a` and `b`.
fn alternatives(term: &Term) -> Vec<Alternative> {
    let TermKind::Binary { op, left, right, .. } = &term.kind else { return vec![(Vec::new(), term.clone())] };
    let (keep_left, keep_right) = match op {
        BinOp::Max => (CmpOp::Ge, CmpOp::Lt),
        _ => (CmpOp::Le, CmpOp::Gt),
    };
    let mut out = Vec::new();
    for (left_conditions, a) in alternatives(left) {
        for (right_conditions, b) in alternatives(right) {
            for (op, value) in [(keep_left, &a), (keep_right, &b)] {
                let mut conditions = left_conditions.clone();
                conditions.extend(right_conditions.iter().cloned());
                conditions.push(Literal::Compare(symbol_comparison(a.clone(), op, b.clone())));
                out.push((conditions, value.clone()));
            }
        }
    }
    out
}

/// The value of a term whose leaves are all strings: the alternative whose comparisons
/// hold, compared by text as Soufflé compares symbols.
fn constant(alternatives: &[Alternative]) -> Option<String> {
    let text = |t: &Term| match &t.kind {
        TermKind::Str(s) => Some(s.clone()),
        _ => None,
    };
    alternatives.iter().find_map(|(conditions, value)| {
        let holds = conditions.iter().map(|c| {
            let Literal::Compare(c) = c else { return None };
            let (a, b) = (text(&c.left)?, text(&c.right)?);
            Some(match c.op {
                CmpOp::Ge => a >= b,
                CmpOp::Lt => a < b,
                CmpOp::Le => a <= b,
                _ => a > b,
            })
        });
        let all = holds.collect::<Option<Vec<bool>>>()?;
        all.into_iter().all(|h| h).then(|| text(value)).flatten()
    })
}

fn symbol_comparison(left: Term, op: CmpOp, right: Term) -> Comparison {
    Comparison { domain: ValueType::Symbol, ..Comparison::new(left, op, right) }
}
