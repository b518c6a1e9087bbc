//! Soufflé's generator `range(a, b)` / `range(a, b, step)` taken out of the terms it is
//! written in, after the aggregates (`reductions.rs`) and before typing: each range
//! becomes a fresh variable `R` where it was and a literal `R = range(a, b[, step])` of
//! its rule, which lowering makes an `ir::Generator` (docs/semantics.md, "Ranges"). A fact
//! with a range (`r(range(1, 4)).`) becomes a rule with no body but its generators. A
//! range nested in another's bounds is a generator of its own, which the outer one reads.
//!
//! Its bounds (and step) must be bound by the rule's other literals, ranges included
//! (E0003 otherwise); a range in a query is refused.

use crate::ast::{self, Comparison, Literal, Statement, Term, TermKind};
use crate::reductions::{fresh_var, outer_bound, term_vars, var};
use diag::{Code, Diagnostic};
use ir::CmpOp;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// The file with every range a generator literal; the reports of ranges it cannot take
/// (a bound no literal of the rule binds, a range in a query).
pub(crate) fn desugar(file: &ast::File) -> (Cow<'_, ast::File>, Vec<Diagnostic>) {
    let ranged = |s: &Statement| match s {
        Statement::Rule(rule) => has_range(rule.terms()),
        Statement::Fact(atom) => has_range(&atom.args),
        Statement::Query(query) => has_range(&query.atom.args),
        // A subsumptive clause with a range is refused before lowering (E0039).
        Statement::Dominance(_) | Statement::Error(_) => false,
    };
    if !file.statements.iter().any(ranged) {
        return (Cow::Borrowed(file), Vec::new());
    }
    let mut out = file.empty_like();
    let mut diagnostics = Vec::new();
    for statement in file.statements.iter().cloned() {
        let rule = match statement {
            Statement::Rule(rule) if has_range(rule.terms()) => rule,
            // A fact with a range (`r(range(1, 4)).`) is computed: a rule with no body.
            Statement::Fact(head) if has_range(&head.args) => {
                let span = head.span;
                ast::Rule { head, body: Vec::new(), span }
            }
            Statement::Query(query) if has_range(&query.atom.args) => {
                let range = query.atom.args.iter().flat_map(Term::subterms).find(|t| is_range(t));
                let span = range.map_or(query.atom.span, |t| t.span);
                diagnostics.push(
                    Diagnostic::error(Code::UNSUPPORTED_SOUFFLE, "`range(...)` in a query is not supported")
                        .with_primary(span, "a range here")
                        .with_help("generate the values in a rule, and query its relation"),
                );
                continue;
            }
            other => {
                out.statements.push(other);
                continue;
            }
        };
        match take_ranges(rule) {
            Ok(rule) => out.statements.push(Statement::Rule(rule)),
            Err(report) => diagnostics.push(report),
        }
    }
    (Cow::Owned(out), diagnostics)
}

fn is_range(term: &Term) -> bool {
    matches!(term.kind, TermKind::Range { .. })
}

fn has_range<'a>(terms: impl IntoIterator<Item = &'a Term>) -> bool {
    terms.into_iter().flat_map(Term::subterms).any(is_range)
}

/// `rule` with each range replaced by a fresh variable `R` and followed by the literals
/// `R = range(..)`, outermost ranges first; an error at the first range whose bounds no
/// other literal of the rule binds.
fn take_ranges(mut rule: ast::Rule) -> Result<ast::Rule, Diagnostic> {
    let mut used = BTreeSet::new();
    let mut vars = Vec::new();
    term_vars(rule.terms(), &mut vars);
    used.extend(vars);
    let mut ranges: Vec<(String, Term)> = Vec::new();
    let mut take = |root: &mut Term, ranges: &mut Vec<(String, Term)>| {
        root.rewrite_outermost(is_range, |term| {
            let name = fresh_var("Range", &mut used);
            let span = term.span;
            ranges.push((name.clone(), std::mem::replace(term, var(&name, span))));
        });
    };
    for root in rule.terms_mut() {
        take(root, &mut ranges);
    }
    // A range in another's bounds: a generator of its own, which the outer one reads.
    let mut k = 0;
    while k < ranges.len() {
        let mut inner = Vec::new();
        if let TermKind::Range { args, .. } = &mut ranges[k].1.kind {
            for arg in args {
                take(arg, &mut inner);
            }
        }
        ranges.extend(inner);
        k += 1;
    }
    rule.body.extend(ranges.into_iter().map(|(name, range)| {
        let span = range.span;
        Literal::Compare(Comparison::new(var(&name, span), CmpOp::Eq, range))
    }));
    let (bound, _) = outer_bound(&rule);
    let unbound = rule.body.iter().find_map(|literal| {
        let Literal::Compare(c) = literal else { return None };
        if !is_range(&c.right) {
            return None;
        }
        let mut vars = Vec::new();
        term_vars([&c.right], &mut vars);
        vars.into_iter().find(|v| !bound.contains(v)).map(|v| (v, c.right.span))
    });
    if let Some((unbound, span)) = unbound {
        return Err(Diagnostic::error(
            Code::UNSAFE_RULE,
            format!("the variable `{unbound}` of this `range(...)` is not bound by the rule's other literals"),
        )
        .with_primary(span, format!("`{unbound}` has no value here"))
        .with_help("bind the bounds and the step of a range with an atom of the rule or an assignment"));
    }
    Ok(rule)
}
