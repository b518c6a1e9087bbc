//! Recursive `min` and `max`: a rule whose `min` (`max`) aggregate reads a relation of
//! its head's own recursive component, as `dist(y, d) :- d = min d0 + w : { dist(x, d0),
//! e(x, y, w) }.`, makes its head a *lattice relation* (docs/semantics.md, Recursive `min`
//! and `max`). Such a relation keeps, per value of its other columns (the group), only the
//! least (greatest) value of the aggregate's column: the rewrite here gives it the
//! dominance `dist(k, d1) <= dist(k, d2) :- d2 < d1.` (`>` for `max`) and turns the
//! aggregate rule into the plain rule deriving each candidate, `dist(y, d) :- dist(x, d0),
//! e(x, y, w), d = d0 + w.`, so that every later pass sees subsumption and nothing new.
//! The evaluation is then the least fixpoint over the lattice: a candidate enters the
//! delta only when it improves its group.
//!
//! That fixpoint is the aggregate's value only when the candidates are monotone in the
//! recursion's values, so the rewrite accepts a component only when (E0046 otherwise):
//!
//! - every relation of the component is a lattice relation (a plain one could keep rows
//!   derived from a value that is later improved), all of its recursive aggregates `min`,
//!   or all `max`, on one head column that holds the aggregate's result and nothing else;
//! - each value a rule reads from the component's lattice columns is used once, in the
//!   aggregated expression (or, in a rule without the aggregate, in the head's lattice
//!   column), never in a join, a comparison, a negation or another head column;
//! - that expression is monotone in those values: built from them, constants, values
//!   the recursion does not give, `+`, `-` of an operand that holds no such value, and the
//!   `min`/`max` functors.
//!
//! `count`, `sum` and `mean` inside recursion stay E0033.

use crate::ast::{self, AggregateOp, Atom, Comparison, Literal, Statement, Term, TermKind};
use crate::reductions::{atom, fresh_var, term_vars, var};
use diag::{Code, Diagnostic, Span};
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;
use std::collections::BTreeSet;

/// A lattice relation: the column its recursive aggregates fill and which end it keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Lattice {
    column: usize,
    op: AggregateOp,
    span: Span,
}

/// The file with every recursive `min`/`max` rewritten into plain rules and one dominance
/// per lattice relation, the names of those relations, and the reports of the recursive
/// `min`s and `max`s it refuses.
pub(crate) fn rewrite(file: &ast::File) -> (Cow<'_, ast::File>, FxHashSet<String>, Vec<Diagnostic>) {
    let none = || FxHashSet::default();
    let rules: Vec<(usize, &ast::Rule)> = file
        .statements
        .iter()
        .enumerate()
        .filter_map(|(k, s)| match s {
            Statement::Rule(rule) => Some((k, rule)),
            _ => None,
        })
        .collect();
    if !rules.iter().any(|(_, rule)| crate::reductions::rule_has_aggregate(rule)) {
        return (Cow::Borrowed(file), none(), Vec::new());
    }
    let component = components(&rules);
    let same = |a: &str, b: &str| component.contains_key(a) && component.get(a) == component.get(b);
    // The recursive `min`s and `max`s: aggregates whose body reads the head's component.
    let mut recursive: Vec<(usize, &ast::Rule, &Term)> = Vec::new();
    for &(k, rule) in &rules {
        for term in rule.terms().flat_map(Term::subterms) {
            let TermKind::Aggregate { op, body, .. } = &term.kind else { continue };
            let reads_own = body.iter().filter_map(Literal::atom).any(|a| same(&a.pred.text, &rule.head.pred.text));
            if reads_own && matches!(op, AggregateOp::Min | AggregateOp::Max) {
                recursive.push((k, rule, term));
            }
        }
    }
    if recursive.is_empty() {
        return (Cow::Borrowed(file), none(), Vec::new());
    }
    let mut diagnostics = Vec::new();
    let mut lattices: FxHashMap<String, Lattice> = FxHashMap::default();
    let mut rewritten: FxHashMap<usize, ast::Rule> = FxHashMap::default();
    for &(k, rule, term) in &recursive {
        let TermKind::Aggregate { op, op_span, .. } = &term.kind else { continue };
        let several = rule.terms().flat_map(Term::subterms).filter(|t| matches!(t.kind, TermKind::Aggregate { .. }));
        if several.count() > 1 {
            diagnostics.push(refusal(
                term.span,
                "a recursive `min` or `max` in a rule with another aggregate",
                "this aggregate reads the rule's own recursion",
                "compute the other aggregate in a rule of its own",
            ));
            continue;
        }
        let Some(column) = result_column(rule, term) else {
            diagnostics.push(refusal(
                term.span,
                format!("the result of a recursive `{}` is not a head column of its own", op.text()),
                "its value must be one column of the head and used nowhere else",
                format!(
                    "write `{}(..., d) :- d = {} ... : {{ ... }}.`, `d` in no other literal",
                    rule.head.pred.text,
                    op.text()
                ),
            ));
            continue;
        };
        let lattice = Lattice { column, op: *op, span: *op_span };
        match lattices.get(&rule.head.pred.text) {
            Some(known) if known.op != lattice.op || known.column != lattice.column => {
                diagnostics.push(
                    refusal(
                        *op_span,
                        format!("`{}` is computed by a recursive `{}` and a recursive `{}`", rule.head.pred.text, known.op.text(), op.text()),
                        format!("a `{}` into column {}", op.text(), column + 1),
                        "a lattice relation keeps either the least or the greatest value of one column: use one of them",
                    )
                    .with_secondary(known.span, format!("a `{}` into column {}", known.op.text(), known.column + 1)),
                );
                continue;
            }
            Some(_) => {}
            None => {
                lattices.insert(rule.head.pred.text.clone(), lattice);
            }
        }
        rewritten.insert(k, plain_rule(rule, term, column));
    }
    if !diagnostics.is_empty() {
        return (Cow::Borrowed(file), none(), diagnostics);
    }
    // Every relation of a lattice relation's component must be one too.
    for &(_, rule) in &rules {
        let head = &rule.head.pred.text;
        if lattices.contains_key(head) {
            continue;
        }
        if let Some(lattice_pred) = lattices.keys().find(|l| same(l, head)) {
            diagnostics.push(refusal(
                rule.head.span,
                format!("`{head}` is recursive with the lattice relation `{lattice_pred}` but keeps every row"),
                format!("`{head}` is derived here"),
                format!("a plain relation could keep rows derived from a value `{lattice_pred}` later improves: make `{head}` a recursive `min`/`max` too, or compute it outside the recursion"),
            ));
        }
    }
    // The values each rule of the component reads from lattice columns, used monotonely.
    for &(k, rule) in &rules {
        let Some(lattice) = lattices.get(&rule.head.pred.text) else { continue };
        let source = rewritten.get(&k).unwrap_or(rule);
        diagnostics.extend(monotone_use(source, lattice, &lattices, &same));
    }
    if !diagnostics.is_empty() {
        return (Cow::Borrowed(file), none(), diagnostics);
    }
    let mut out = file.empty_like();
    for (k, statement) in file.statements.iter().enumerate() {
        match rewritten.remove(&k) {
            Some(rule) => out.statements.push(Statement::Rule(rule)),
            None => out.statements.push(statement.clone()),
        }
    }
    let arities: FxHashMap<&str, usize> =
        rules.iter().map(|(_, rule)| (rule.head.pred.text.as_str(), rule.head.args.len())).collect();
    let mut names: Vec<&String> = lattices.keys().collect();
    names.sort();
    for name in names {
        let lattice = lattices[name];
        // A Soufflé program declares the column's type, which its comparison needs: a
        // symbol compares by its text.
        let declared =
            file.declared.iter().find(|(n, _, _)| n == name).and_then(|(_, types, _)| types.get(lattice.column));
        let mut rule = dominance(name, arities[name.as_str()], lattice);
        if let (Some(&ty), Some(Literal::Compare(c))) = (declared, rule.body.last_mut()) {
            c.domain = ty;
        }
        out.statements.push(Statement::Dominance(rule));
    }
    let names = lattices.into_keys().collect();
    (Cow::Owned(out), names, Vec::new())
}

/// E0046 at `span`.
fn refusal(span: Span, message: impl Into<String>, label: impl Into<String>, help: impl Into<String>) -> Diagnostic {
    Diagnostic::error(Code::RECURSIVE_EXTREMUM, message).with_primary(span, label).with_help(help)
}

/// The strongly connected component of each predicate the rules head or read
/// (aggregates' bodies included).
fn components(rules: &[(usize, &ast::Rule)]) -> FxHashMap<String, usize> {
    let mut index: FxHashMap<String, usize> = FxHashMap::default();
    let mut successors: Vec<Vec<usize>> = Vec::new();
    let mut node = |name: &str, successors: &mut Vec<Vec<usize>>| {
        let next = index.len();
        let n = *index.entry(name.to_string()).or_insert(next);
        if successors.len() <= n {
            successors.resize(n + 1, Vec::new());
        }
        n
    };
    for (_, rule) in rules {
        let head = node(&rule.head.pred.text, &mut successors);
        for (read, _) in crate::aggregates::read_atoms(rule) {
            let r = node(&read.pred.text, &mut successors);
            successors[r].push(head);
        }
    }
    let mut component = vec![0; successors.len()];
    for (c, members) in ir::strongly_connected(&successors).into_iter().enumerate() {
        for m in members {
            component[m] = c;
        }
    }
    index.into_iter().map(|(name, n)| (name, component[n])).collect()
}

/// The head column the aggregate's result fills alone: the aggregate itself as a head
/// argument, or a variable the body assigns it to (`d = min ...`) that is one head
/// argument and in no other literal.
fn result_column(rule: &ast::Rule, term: &Term) -> Option<usize> {
    if let Some(column) = rule.head.args.iter().position(|a| a.span == term.span && a == term) {
        return Some(column);
    }
    let (index, result) = assignment(rule, term)?;
    let is_result = |t: &Term| matches!(&t.kind, TermKind::Var(v) if v == result);
    let columns: Vec<usize> = (0..rule.head.args.len()).filter(|&c| is_result(&rule.head.args[c])).collect();
    let [column] = columns.as_slice() else { return None };
    let elsewhere = rule.head.args.iter().flat_map(Term::subterms).filter(|t| is_result(t)).count() > 1
        || rule
            .body
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != index)
            .any(|(_, l)| l.terms().flat_map(Term::subterms).any(is_result));
    (!elsewhere).then_some(*column)
}

/// The body literal `v = aggregate` (either way round) assigning `term`, and `v`.
fn assignment<'r>(rule: &'r ast::Rule, term: &Term) -> Option<(usize, &'r str)> {
    rule.body.iter().enumerate().find_map(|(i, literal)| {
        let Literal::Compare(c) = literal else { return None };
        if c.op != ir::CmpOp::Eq {
            return None;
        }
        match (&c.left.kind, &c.right.kind) {
            (TermKind::Var(v), TermKind::Aggregate { .. }) if c.right.span == term.span => Some((i, v.as_str())),
            (TermKind::Aggregate { .. }, TermKind::Var(v)) if c.left.span == term.span => Some((i, v.as_str())),
            _ => None,
        }
    })
}

/// The rule deriving each candidate of a recursive aggregate: the aggregate's body joined
/// into the rule's, its value where the aggregate was. The value's variables are the
/// aggregate's own (as in Soufflé 2.5), so those the rule also uses outside are renamed.
fn plain_rule(rule: &ast::Rule, term: &Term, column: usize) -> ast::Rule {
    let TermKind::Aggregate { value, body, .. } = &term.kind else { unreachable!("an aggregate term") };
    // `term_vars` does not enter aggregates: these are the variables used outside.
    let mut outside = Vec::new();
    term_vars(rule.terms(), &mut outside);
    let mut inner = Vec::new();
    term_vars(value.iter().map(|v| &**v).chain(body.iter().flat_map(Literal::terms)), &mut inner);
    let mut used: BTreeSet<String> = outside.iter().chain(&inner).cloned().collect();
    let own: BTreeSet<&str> = crate::aggregates::target_vars(term);
    let renames: FxHashMap<String, String> = inner
        .iter()
        .filter(|v| own.contains(v.as_str()) && outside.contains(v))
        .map(|v| (v.clone(), fresh_var(v, &mut used)))
        .collect();
    let is_var = |t: &Term| matches!(t.kind, TermKind::Var(_));
    let rename = |t: &mut Term| {
        if let TermKind::Var(v) = &t.kind {
            if let Some(new) = renames.get(v) {
                t.kind = TermKind::Var(new.clone());
            }
        }
    };
    let mut value = value.as_deref().cloned().expect("`min` and `max` aggregate a value");
    value.rewrite_outermost(is_var, rename);
    let mut body = body.clone();
    for literal in &mut body {
        for t in literal_terms_mut(literal) {
            t.rewrite_outermost(is_var, rename);
        }
    }
    let mut plain = rule.clone();
    if plain.head.args[column].span == term.span && &plain.head.args[column] == term {
        plain.head.args[column] = value;
    } else if let Some((index, _)) = assignment(rule, term) {
        let Literal::Compare(c) = &mut plain.body[index] else { unreachable!("an assignment") };
        if c.left.span == term.span {
            c.left = value;
        } else {
            c.right = value;
        }
    }
    // The aggregate's body first: the assignment reads what it binds.
    let rest = std::mem::take(&mut plain.body);
    plain.body = body.into_iter().chain(rest).collect();
    plain
}

/// The top-level terms of a literal, mutably.
fn literal_terms_mut(literal: &mut Literal) -> Vec<&mut Term> {
    match literal {
        Literal::Atom(atom) | Literal::Negated { atom, .. } => atom.args.iter_mut().collect(),
        Literal::Compare(c) => vec![&mut c.left, &mut c.right],
    }
}

/// The refusals of a (rewritten) rule of a lattice relation: each variable it reads from
/// a lattice column of its component must be used once, in the value its head's lattice
/// column gets, and that value must be monotone in them.
fn monotone_use(
    rule: &ast::Rule,
    lattice: &Lattice,
    lattices: &FxHashMap<String, Lattice>,
    same: &dyn Fn(&str, &str) -> bool,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let head = &rule.head.pred.text;
    // The variables of the component's lattice columns the body reads.
    let mut read: Vec<(&str, Span)> = Vec::new();
    for literal in &rule.body {
        let Some(atom) = literal.atom() else { continue };
        let Some(other) = lattices.get(&atom.pred.text).filter(|_| same(&atom.pred.text, head)) else { continue };
        if let Literal::Negated { span, .. } = literal {
            out.push(refusal(
                *span,
                format!("`{}` is negated inside the recursion of its lattice", atom.pred.text),
                "a negation of the recursion",
                "a value that improves later could make this negation false: negate a relation outside the recursion",
            ));
            continue;
        }
        match atom.args.get(other.column).map(|t| &t.kind) {
            Some(TermKind::Var(v)) => read.push((v.as_str(), atom.args[other.column].span)),
            Some(TermKind::Anon) | None => {}
            Some(_) => out.push(refusal(
                atom.args[other.column].span,
                format!("a lattice column of `{}` is matched against a value", atom.pred.text),
                "only a variable can read a value that keeps improving",
                "read the column into a variable and use it only in the computed value",
            )),
        }
    }
    if read.is_empty() {
        return out;
    }
    // The value of the head's lattice column: the term itself, or what one assignment
    // gives the variable there.
    let head_term = &rule.head.args[lattice.column];
    let feed = match &head_term.kind {
        TermKind::Var(v) => rule.body.iter().position(|l| {
            matches!(l, Literal::Compare(c) if c.op == ir::CmpOp::Eq
                && (matches!(&c.left.kind, TermKind::Var(x) if x == v) || matches!(&c.right.kind, TermKind::Var(x) if x == v)))
        }),
        _ => None,
    };
    let value: &Term = match feed.map(|i| &rule.body[i]) {
        Some(Literal::Compare(c)) if matches!(&c.left.kind, TermKind::Var(x) if Some(x) == head_term_var(head_term)) => {
            &c.right
        }
        Some(Literal::Compare(c)) => &c.left,
        _ => head_term,
    };
    let names: FxHashSet<&str> = read.iter().map(|(v, _)| *v).collect();
    for &(v, span) in &read {
        let is_v = |t: &&Term| matches!(&t.kind, TermKind::Var(x) if x == v);
        let mut uses = 0;
        for (i, literal) in rule.body.iter().enumerate() {
            if Some(i) == feed {
                continue;
            }
            uses += literal.terms().flat_map(Term::subterms).filter(is_v).count();
        }
        let in_head = if std::ptr::eq(value, head_term) {
            0
        } else {
            rule.head.args.iter().flat_map(Term::subterms).filter(is_v).count()
        };
        let other_head = rule
            .head
            .args
            .iter()
            .enumerate()
            .filter(|&(c, _)| c != lattice.column)
            .flat_map(|(_, t)| t.subterms())
            .filter(is_v)
            .count();
        if uses > 1 || in_head > 0 || other_head > 0 {
            out.push(refusal(
                span,
                format!("`{v}`, a value of the recursion of `{head}`, is used outside the value it computes"),
                format!(
                    "`{v}` keeps improving; it may appear only in the value of `{head}`'s column {}",
                    lattice.column + 1
                ),
                format!("use `{v}` once, in the computed value, not in a join, a comparison or another column"),
            ));
        }
    }
    if let Some(bad) = non_monotone(value, &names) {
        out.push(refusal(
            bad.span,
            format!("the value of `{head}`'s lattice column is not monotone in the recursion's values"),
            "a better value read here could give a worse value",
            "compute it from the read values with `+`, `-` of a value the recursion does not give, `min` and `max` only",
        ));
    }
    out
}

fn head_term_var(term: &Term) -> Option<&String> {
    match &term.kind {
        TermKind::Var(v) => Some(v),
        _ => None,
    }
}

/// The first subterm of `term` that makes it not monotone (non-decreasing) in the
/// variables `names`: an operation other than `+`, `-` with such a variable on its right,
/// `min` and `max` over an operand that holds one.
fn non_monotone<'t>(term: &'t Term, names: &FxHashSet<&str>) -> Option<&'t Term> {
    let holds = |t: &Term| t.subterms().any(|s| matches!(&s.kind, TermKind::Var(v) if names.contains(v.as_str())));
    if !holds(term) {
        return None;
    }
    match &term.kind {
        TermKind::Var(_) => None,
        TermKind::Binary { op: ir::BinOp::Add | ir::BinOp::Min | ir::BinOp::Max, left, right, .. } => {
            non_monotone(left, names).or_else(|| non_monotone(right, names))
        }
        TermKind::Binary { op: ir::BinOp::Sub, left, right, .. } if !holds(right) => non_monotone(left, names),
        _ => Some(term),
    }
}

/// The dominance of a lattice relation: `r(k.., d1) <= r(k.., d2) :- d2 < d1.` for `min`,
/// with `>` for `max`.
fn dominance(name: &str, arity: usize, lattice: Lattice) -> ast::Rule {
    let span = lattice.span;
    let args = |d: &str| -> Vec<Term> {
        (0..arity).map(|c| if c == lattice.column { var(d, span) } else { var(&format!("K{c}"), span) }).collect()
    };
    let dominated: Atom = atom(name, args("D1"), span);
    let dominating: Atom = atom(name, args("D2"), span);
    let op = match lattice.op {
        AggregateOp::Max => ir::CmpOp::Gt,
        _ => ir::CmpOp::Lt,
    };
    let better = Comparison::new(var("D2", span), op, var("D1", span));
    ast::Rule {
        head: dominated.clone(),
        body: vec![Literal::Atom(dominated), Literal::Atom(dominating), Literal::Compare(better)],
        span,
    }
}
