//! Soufflé's generator `range(a, b)` / `range(a, b, step)` rewritten, after the
//! aggregates (`reductions.rs`) and before typing, into a recursive relation, so that every
//! later pass (magic sets, plans, every engine, maintenance, explanations) sees ordinary
//! rules: a generator binds its variable as an atom does. For the `i`-th range of a rule
//! with head `h`:
//!
//! - `h_range_keys(a, b, s) :- outer.` — the bounds (and step) the rule's other literals
//!   reach (`outer`: those that use variables they bind, as an aggregate's keys);
//! - `h_range(A, B, S, X)` — each value of each such range: its first value, then each next
//!   one while it lies before `B`, as Soufflé 2.5 steps (`x = from; x < to; x += step` for a
//!   positive step, `to < x` for a negative one; a step of 0, or "not a number", gives
//!   `from` once unless it is `to`). Without a step, a range counts up by 1 when `a < b` and
//!   down by 1 when `b < a` (so an `unsigned` range counts down too, and an empty one gives
//!   nothing). A next value must also pass the last (`X < Y` up, `Y < X` down), so a step
//!   that wraps a 32-bit integer around, or is too small to change a float, ends the range
//!   where Soufflé would run on;
//! - the rule reads `h_range(a, b, s, R)` with the fresh variable `R` where the range was.
//!
//! A range whose bounds read a variable that only another range binds is rewritten after
//! that one, whose atom its keys rule then reads.

use crate::ast::{self, Atom, Comparison, Literal, Statement, Term, TermKind};
use crate::reductions::{atom, fresh_name, fresh_var, new_rule, outer_bound, term_vars, var};
use diag::{Code, Diagnostic, Span};
use ir::{BinOp, CmpOp};
use rustc_hash::FxHashSet;
use std::borrow::Cow;
use std::collections::{BTreeSet, VecDeque};

/// The file with every range rewritten; the reports of ranges it cannot rewrite (a bound
/// no literal of the rule binds, a range in a query).
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
    let mut names = crate::reductions::predicate_names(file);
    let mut out = file.empty_like();
    let mut diagnostics = Vec::new();
    let mut pending: VecDeque<Statement> = file.statements.iter().cloned().collect();
    while let Some(statement) = pending.pop_front() {
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
        match rewrite_one(rule, &mut names) {
            // The rule without its first range, and the keys rule, which may hold others.
            Ok(Rewritten { rule, keys, generator }) => {
                out.statements.extend(generator);
                pending.push_front(keys);
                pending.push_front(Statement::Rule(rule));
            }
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

/// One range taken out of a rule.
struct Rewritten {
    rule: ast::Rule,
    keys: Statement,
    generator: Vec<Statement>,
}

/// Takes the first range of `rule` whose bounds the rule's other literals bind out of it.
fn rewrite_one(mut rule: ast::Rule, names: &mut FxHashSet<String>) -> Result<Rewritten, Diagnostic> {
    let mut used = BTreeSet::new();
    let mut vars = Vec::new();
    term_vars(rule.terms(), &mut vars);
    used.extend(vars);
    // Each range, outermost first, replaced by a fresh variable (put back below but for
    // the one chosen).
    let mut ranges: Vec<(Term, String)> = Vec::new();
    for root in rule.terms_mut() {
        root.rewrite_outermost(is_range, |term| {
            let name = fresh_var("Range", &mut used);
            let span = term.span;
            ranges.push((std::mem::replace(term, var(&name, span)), name));
        });
    }
    let (bound, outer) = outer_bound(&rule);
    let chosen = ranges.iter().position(|(term, _)| {
        let mut vars = Vec::new();
        term_vars([term], &mut vars);
        vars.iter().all(|v| bound.contains(v))
    });
    let Some(chosen) = chosen else {
        let (term, _) = &ranges[0];
        let mut vars = Vec::new();
        term_vars([term], &mut vars);
        let unbound = vars.into_iter().find(|v| !bound.contains(v)).unwrap_or_default();
        return Err(Diagnostic::error(
            Code::UNSAFE_RULE,
            format!("the variable `{unbound}` of this `range(...)` is not bound by the rule's other literals"),
        )
        .with_primary(term.span, format!("`{unbound}` has no value here"))
        .with_help("bind the bounds and the step of a range with an atom of the rule or an assignment"));
    };
    let (range, result) = ranges.remove(chosen);
    // The others go back where they were.
    for root in rule.terms_mut() {
        root.rewrite_outermost(
            |t| matches!(&t.kind, TermKind::Var(v) if ranges.iter().any(|(_, name)| name == v)),
            |t| {
                let TermKind::Var(v) = &t.kind else { unreachable!("picked a variable") };
                let k = ranges.iter().position(|(_, name)| name == v).expect("picked a replaced range");
                *t = ranges[k].0.clone();
            },
        );
    }
    let TermKind::Range { args, .. } = range.kind else { unreachable!("a range term") };
    let span = range.span;
    let head = rule.head.pred.text.clone();
    let generated = fresh_name(&format!("{head}_range"), names);
    let keys_name = fresh_name(&format!("{generated}_keys"), names);
    let keys = new_rule(atom(&keys_name, args.clone(), span), outer, span);
    let stepped = args.len() == 3;
    let mut read = args;
    read.push(var(&result, span));
    rule.body.push(Literal::Atom(atom(&generated, read, span)));
    let generator = generator_rules(&generated, &keys_name, stepped, span);
    Ok(Rewritten { rule, keys, generator })
}

/// The rules of the generated relation `name` (`name(A, B, S, X)`, or `name(A, B, X)`
/// without a step) over the keys relation `keys` (see the module doc).
fn generator_rules(name: &str, keys: &str, stepped: bool, span: Span) -> Vec<Statement> {
    let v = |n: &str| var(n, span);
    let int = |text: &str| Term { kind: TermKind::Int(text.into()), span };
    let cmp = |left: Term, op: CmpOp, right: Term| Literal::Compare(Comparison::new(left, op, right));
    let plus = |left: Term, op: BinOp, right: Term| Term {
        kind: TermKind::Binary { op, op_span: span, left: Box::new(left), right: Box::new(right) },
        span,
    };
    let columns = |value: &str| -> Vec<Term> {
        let mut args = vec![v("A"), v("B")];
        if stepped {
            args.push(v("S"));
        }
        args.push(v(value));
        args
    };
    let keys_atom = || -> Atom {
        let mut args = vec![v("A"), v("B")];
        if stepped {
            args.push(v("S"));
        }
        atom(keys, args, span)
    };
    let first = |conditions: Vec<Literal>| {
        let mut body = vec![Literal::Atom(keys_atom())];
        body.extend(conditions);
        new_rule(atom(name, columns("A"), span), body, span)
    };
    // `Y` the value after `X`, if it lies before the end and past `X`.
    let next = |condition: Literal, op: BinOp, step: Term, up: bool| {
        let mut body = vec![Literal::Atom(atom(name, columns("X"), span)), condition];
        body.push(cmp(v("Y"), CmpOp::Eq, plus(v("X"), op, step)));
        if up {
            body.extend([cmp(v("Y"), CmpOp::Lt, v("B")), cmp(v("X"), CmpOp::Lt, v("Y"))]);
        } else {
            body.extend([cmp(v("B"), CmpOp::Lt, v("Y")), cmp(v("Y"), CmpOp::Lt, v("X"))]);
        }
        new_rule(atom(name, columns("Y"), span), body, span)
    };
    if stepped {
        vec![
            first(vec![cmp(v("S"), CmpOp::Gt, int("0")), cmp(v("A"), CmpOp::Lt, v("B"))]),
            first(vec![cmp(v("S"), CmpOp::Lt, int("0")), cmp(v("B"), CmpOp::Lt, v("A"))]),
            // A step of 0, or "not a number" (which is no other step): `from` once.
            first(vec![cmp(v("S"), CmpOp::Eq, int("0")), cmp(v("A"), CmpOp::Ne, v("B"))]),
            first(vec![cmp(v("S"), CmpOp::Ne, v("S")), cmp(v("A"), CmpOp::Ne, v("B"))]),
            next(cmp(v("S"), CmpOp::Gt, int("0")), BinOp::Add, v("S"), true),
            next(cmp(v("S"), CmpOp::Lt, int("0")), BinOp::Add, v("S"), false),
        ]
    } else {
        vec![
            first(vec![cmp(v("A"), CmpOp::Lt, v("B"))]),
            first(vec![cmp(v("B"), CmpOp::Lt, v("A"))]),
            next(cmp(v("A"), CmpOp::Lt, v("B")), BinOp::Add, int("1"), true),
            next(cmp(v("B"), CmpOp::Lt, v("A")), BinOp::Sub, int("1"), false),
        ]
    }
}
