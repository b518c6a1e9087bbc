//! The checks of aggregates (`n = count : { ... }`) both dialects share, made on the AST
//! before lowering: each aggregate's group keys (its body's variables bound outside it)
//! and locals, a witness (a local variable used outside) and `mean` (a float) reported.
//! Aggregates are read but not evaluated yet, so a program with one is reported too.

use crate::ast::{self, AggregateOp, Literal, Statement, Term, TermKind};
use diag::{Code, Diagnostic};
use std::collections::BTreeSet;

/// The reports of every aggregate of the file; none when it has no aggregate.
pub(crate) fn check(file: &ast::File) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for statement in &file.statements {
        if let Statement::Rule(rule) = statement {
            check_rule(rule, &mut diagnostics);
        }
    }
    diagnostics
}

/// An aggregate of a rule and the variables it reads.
struct Aggregate<'a> {
    term: &'a Term,
    op: AggregateOp,
    /// Variables of its value and body, in order of first occurrence.
    vars: Vec<&'a str>,
}

fn check_rule(rule: &ast::Rule, diagnostics: &mut Vec<Diagnostic>) {
    // The variables a positive atom or an assignment `X = ...` outside every aggregate
    // binds, and every variable used outside the aggregates.
    let mut bound: BTreeSet<&str> = BTreeSet::new();
    let mut used_outside: BTreeSet<&str> = BTreeSet::new();
    let mut aggregates = Vec::new();
    let head: Vec<&Term> = rule.head.args.iter().collect();
    aggregates.extend(visit(head, false, &mut bound, &mut used_outside));
    for literal in &rule.body {
        let found = match literal {
            Literal::Atom(atom) => visit(atom.args.iter().collect(), true, &mut bound, &mut used_outside),
            Literal::Negated { atom, .. } => visit(atom.args.iter().collect(), false, &mut bound, &mut used_outside),
            Literal::Compare(c) => {
                let assigns = c.op == ir::CmpOp::Eq;
                let mut found = Vec::new();
                for side in [&c.left, &c.right] {
                    // `N = count : {...}` binds `N`: an assignment's lone variable.
                    let binds = assigns && matches!(side.kind, TermKind::Var(_));
                    found.extend(visit(vec![side], binds, &mut bound, &mut used_outside));
                }
                found
            }
        };
        aggregates.extend(found);
    }
    for term in aggregates.into_iter().map(describe) {
        diagnostics.push(report(&term, &bound, &used_outside));
    }
}

/// Notes the variables of `terms` (outside every aggregate) as used, and as bound when
/// `binds`; returns the aggregates among them.
fn visit<'a>(
    terms: Vec<&'a Term>,
    binds: bool,
    bound: &mut BTreeSet<&'a str>,
    used: &mut BTreeSet<&'a str>,
) -> Vec<&'a Term> {
    let mut found = Vec::new();
    for term in terms.into_iter().flat_map(Term::subterms) {
        match &term.kind {
            TermKind::Var(v) => {
                used.insert(v.as_str());
                if binds {
                    bound.insert(v.as_str());
                }
            }
            TermKind::Aggregate { .. } => found.push(term),
            _ => {}
        }
    }
    found
}

/// The aggregate's operator and the variables of its value and body.
fn describe(term: &Term) -> Aggregate<'_> {
    let TermKind::Aggregate { op, value, body, .. } = &term.kind else { unreachable!("an aggregate term") };
    let mut vars: Vec<&str> = Vec::new();
    let mut inner: Vec<&Term> = value.iter().map(|v| &**v).collect();
    for literal in body {
        match literal {
            Literal::Atom(atom) | Literal::Negated { atom, .. } => inner.extend(&atom.args),
            Literal::Compare(c) => inner.extend([&c.left, &c.right]),
        }
    }
    for t in inner.into_iter().flat_map(Term::subterms) {
        if let TermKind::Var(v) = &t.kind {
            if !vars.contains(&v.as_str()) {
                vars.push(v);
            }
        }
    }
    Aggregate { term, op: *op, vars }
}

/// The report of one aggregate: `mean`, a witness, or that it is not evaluated yet.
fn report(aggregate: &Aggregate<'_>, bound: &BTreeSet<&str>, used_outside: &BTreeSet<&str>) -> Diagnostic {
    let TermKind::Aggregate { op_span, .. } = &aggregate.term.kind else { unreachable!("an aggregate term") };
    let span = aggregate.term.span;
    if aggregate.op == AggregateOp::Mean {
        return Diagnostic::error(
            Code::UNSUPPORTED_SOUFFLE,
            "the aggregate `mean` is not supported: it yields a float",
        )
        .with_primary(*op_span, "`mean` is a float, and values here are integers and symbols")
        .with_help("compute `sum` and `count` and divide them: `s / n` is their integer quotient");
    }
    let witness = aggregate.vars.iter().find(|v| used_outside.contains(**v) && !bound.contains(**v));
    if let Some(witness) = witness {
        return Diagnostic::error(
            Code::UNSUPPORTED_SOUFFLE,
            format!("`{witness}` is bound only inside the aggregate and used outside it (a witness)"),
        )
        .with_primary(span, format!("`{witness}` is local to this aggregate"))
        .with_help(format!("bind `{witness}` in an atom outside the aggregate, or use it only inside"));
    }
    let keys: Vec<&str> = aggregate.vars.iter().copied().filter(|v| bound.contains(v)).collect();
    let grouped = match keys.as_slice() {
        [] => "over all its rows".to_string(),
        keys => format!("grouped by {}", keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")),
    };
    Diagnostic::error(
        Code::UNSUPPORTED_SOUFFLE,
        format!("the aggregate `{}` is not evaluated yet", aggregate.op.text()),
    )
    .with_primary(span, format!("a `{}` {grouped}", aggregate.op.text()))
    .with_help("aggregates are read and checked, but no engine evaluates them yet")
}
