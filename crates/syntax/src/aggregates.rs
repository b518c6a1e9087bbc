//! The checks of aggregates (`n = count : { ... }`) both dialects share, made on the AST
//! before lowering: each aggregate's group keys (its body's variables bound outside it,
//! except those of its value, which are its own)
//! and locals, a witness (a local variable used outside) reported,
//! as is an aggregate whose body depends on its rule's head (E0033, naming the cycle, as
//! Soufflé's "cyclic aggregation"). `reductions.rs` then rewrites those that pass.

use crate::ast::{self, Literal, Statement, Term, TermKind};
use diag::{Code, Diagnostic};
use rustc_hash::FxHashMap;
use std::collections::{BTreeSet, VecDeque};

/// The reports of every aggregate of the file; none when it has no aggregate.
pub(crate) fn check(file: &ast::File) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let rules: Vec<&ast::Rule> = file
        .statements
        .iter()
        .filter_map(|s| match s {
            Statement::Rule(rule) => Some(rule),
            _ => None,
        })
        .collect();
    // Without an aggregate there is nothing to check, nor a cycle through one.
    if !rules.iter().any(|rule| crate::reductions::rule_has_aggregate(rule)) {
        return diagnostics;
    }
    for rule in &rules {
        check_rule(rule, &mut diagnostics);
    }
    diagnostics.extend(cycles(&rules));
    diagnostics
}

/// The atoms a rule reads, each with whether it is in an aggregate's body: the body's
/// atoms and those of every aggregate in the rule, nested ones too.
pub(crate) fn read_atoms(rule: &ast::Rule) -> Vec<(&ast::Atom, bool)> {
    let mut out: Vec<(&ast::Atom, bool)> =
        rule.body.iter().filter_map(Literal::atom).map(|atom| (atom, false)).collect();
    // Aggregates nest as deep as the source writes them: a stack, not recursion.
    let mut terms: Vec<&Term> = rule.terms().collect();
    while let Some(root) = terms.pop() {
        for term in root.subterms() {
            if let TermKind::Aggregate { value, body, .. } = &term.kind {
                out.extend(body.iter().filter_map(Literal::atom).map(|atom| (atom, true)));
                terms.extend(value.iter().map(|v| &**v));
                terms.extend(body.iter().flat_map(Literal::terms));
            }
        }
    }
    out
}

/// E0033 for each aggregate body atom whose predicate depends on the head of its rule:
/// the predicates are searched for strongly connected components once, and a path is
/// searched only for an atom found in its head's component, so a program without such a
/// cycle costs one pass over its rules.
fn cycles(rules: &[&ast::Rule]) -> Vec<Diagnostic> {
    let mut index: FxHashMap<&str, usize> = FxHashMap::default();
    // Edges from a read predicate to the rule heads that read it, with the rule.
    let mut readers: Vec<Vec<(usize, usize)>> = Vec::new();
    let mut reads: Vec<Vec<(&ast::Atom, bool)>> = Vec::new();
    for (r, rule) in rules.iter().enumerate() {
        let head = node(&rule.head.pred.text, &mut index);
        let atoms = read_atoms(rule);
        for (atom, _) in &atoms {
            let read = node(&atom.pred.text, &mut index);
            readers.resize(index.len(), Vec::new());
            readers[read].push((head, r));
        }
        readers.resize(index.len(), Vec::new());
        reads.push(atoms);
    }
    let successors: Vec<Vec<usize>> = readers.iter().map(|edges| edges.iter().map(|&(to, _)| to).collect()).collect();
    let mut component = vec![0; successors.len()];
    for (c, members) in ir::strongly_connected(&successors).into_iter().enumerate() {
        for m in members {
            component[m] = c;
        }
    }
    let mut diagnostics = Vec::new();
    for (r, rule) in rules.iter().enumerate() {
        let head = index[rule.head.pred.text.as_str()];
        for &(atom, in_aggregate) in &reads[r] {
            let read = index[atom.pred.text.as_str()];
            if in_aggregate && component[read] == component[head] {
                let path = path(&readers, head, read);
                diagnostics.push(cycle_report(rules, rule, atom, &path));
            }
        }
    }
    diagnostics
}

/// The node of predicate `name`, added when new.
fn node<'a>(name: &'a str, index: &mut FxHashMap<&'a str, usize>) -> usize {
    let next = index.len();
    *index.entry(name).or_insert(next)
}

/// The rules through which `from` reaches `to` (breadth first, so the shortest path).
fn path(readers: &[Vec<(usize, usize)>], from: usize, to: usize) -> Vec<usize> {
    let mut via: FxHashMap<usize, (usize, usize)> = FxHashMap::default();
    let mut queue = VecDeque::from([from]);
    while let Some(at) = queue.pop_front() {
        if at == to {
            break;
        }
        for &(next, rule) in &readers[at] {
            if next != from && !via.contains_key(&next) {
                via.insert(next, (at, rule));
                queue.push_back(next);
            }
        }
    }
    let mut rules = Vec::new();
    let mut at = to;
    while at != from {
        let Some(&(before, rule)) = via.get(&at) else { break };
        rules.push(rule);
        at = before;
    }
    rules.reverse();
    rules
}

fn cycle_report(rules: &[&ast::Rule], rule: &ast::Rule, atom: &ast::Atom, path: &[usize]) -> Diagnostic {
    let head = &rule.head.pred.text;
    let mut d = Diagnostic::error(Code::AGGREGATE_CYCLE, format!("`{head}` aggregates over itself"))
        .with_primary(atom.span, format!("`{}` is aggregated here", atom.pred.text));
    for &r in path {
        let link = rules[r];
        if !std::ptr::eq(link, rule) {
            d = d.with_secondary(link.span, format!("`{}` is derived by this rule", link.head.pred.text));
        }
    }
    let names: Vec<String> = std::iter::once(head.as_str())
        .chain(path.iter().map(|&r| rules[r].head.pred.text.as_str()))
        .chain(std::iter::once(head.as_str()))
        .map(|name| format!("`{name}`"))
        .collect();
    d.with_note(format!(
        "the cycle, each predicate read by the next: {} (the last through the aggregate)",
        names.join(" -> ")
    ))
}

/// An aggregate of a rule and the variables it reads.
struct Aggregate<'a> {
    term: &'a Term,
    /// Variables of its value and body, in order of first occurrence.
    vars: Vec<&'a str>,
}

pub(crate) fn check_rule(rule: &ast::Rule, diagnostics: &mut Vec<Diagnostic>) {
    if !crate::reductions::rule_has_aggregate(rule) {
        return;
    }
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
        diagnostics.extend(fault(&term, &bound, &used_outside));
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

/// E0003 for a variable of the aggregated value that nothing binds: neither a positive
/// atom or an assignment of the body nor the rule outside (Soufflé's "ungrounded
/// variable"). Reported here, at the value, since the rows relation the rewrite makes
/// would report it as a head variable.
fn unbound_value<'a>(term: &'a Term, outside: &BTreeSet<&'a str>) -> Option<Diagnostic> {
    let TermKind::Aggregate { value: Some(value), body, .. } = &term.kind else { return None };
    let mut bound: BTreeSet<&'a str> = outside.clone();
    for literal in body {
        if let Literal::Atom(atom) = literal {
            bound.extend(atom.args.iter().flat_map(Term::subterms).filter_map(var));
        }
    }
    // Assignments bind in any order: until none binds more.
    loop {
        let before = bound.len();
        for literal in body {
            let Literal::Compare(c) = literal else { continue };
            if c.op != ir::CmpOp::Eq {
                continue;
            }
            for (lone, other) in [(&c.left, &c.right), (&c.right, &c.left)] {
                let other_bound = other.subterms().filter_map(var).all(|v| bound.contains(v));
                if let (Some(v), true) = (var(lone), other_bound) {
                    bound.insert(v);
                }
            }
        }
        if bound.len() == before {
            break;
        }
    }
    let name = value.subterms().filter_map(var).find(|v| !bound.contains(v))?;
    Some(
        Diagnostic::error(Code::UNSAFE_RULE, format!("variable `{name}` of the aggregated value is not bound"))
            .with_primary(value.span, format!("`{name}` has no value here"))
            .with_secondary(term.span, "in this aggregate")
            .with_help(format!("bind `{name}` in an atom of the aggregate's body: `sum {name} : p(_, {name})`")),
    )
}

/// The variables of an aggregate's value (`y` and `z` of `sum y * z : ...`): local to it.
pub(crate) fn target_vars(term: &Term) -> BTreeSet<&str> {
    let TermKind::Aggregate { value, .. } = &term.kind else { unreachable!("an aggregate term") };
    value.iter().flat_map(|v| v.subterms()).filter_map(var).collect()
}

/// The name of a variable term.
fn var(term: &Term) -> Option<&str> {
    match &term.kind {
        TermKind::Var(v) => Some(v.as_str()),
        _ => None,
    }
}

/// The top-level terms of an aggregate: its value, then its body literals' arguments
/// and operands.
fn inner_terms(term: &Term) -> Vec<&Term> {
    let TermKind::Aggregate { value, body, .. } = &term.kind else { unreachable!("an aggregate term") };
    let mut inner: Vec<&Term> = value.iter().map(|v| &**v).collect();
    for literal in body {
        match literal {
            Literal::Atom(atom) | Literal::Negated { atom, .. } => inner.extend(&atom.args),
            Literal::Compare(c) => inner.extend([&c.left, &c.right]),
        }
    }
    inner
}

/// The aggregate and the variables of its value and body.
fn describe(term: &Term) -> Aggregate<'_> {
    let mut vars: Vec<&str> = Vec::new();
    for t in inner_terms(term).into_iter().flat_map(Term::subterms) {
        if let TermKind::Var(v) = &t.kind {
            if !vars.contains(&v.as_str()) {
                vars.push(v);
            }
        }
    }
    Aggregate { term, vars }
}

/// The report of an aggregate whose value is another aggregate or that has a witness.
/// An aggregate in the body is checked where the rewrite makes that body a rule
/// (`reductions.rs`).
fn fault(aggregate: &Aggregate<'_>, bound: &BTreeSet<&str>, used_outside: &BTreeSet<&str>) -> Option<Diagnostic> {
    let span = aggregate.term.span;
    let TermKind::Aggregate { value, .. } = &aggregate.term.kind else { unreachable!("an aggregate term") };
    let in_value = value.iter().flat_map(|v| v.subterms()).find(|t| matches!(t.kind, TermKind::Aggregate { .. }));
    if let Some(inner) = in_value {
        return Some(
            Diagnostic::error(Code::UNSUPPORTED_SOUFFLE, "an aggregate as the value of an aggregate is not supported")
                .with_primary(inner.span, "an aggregate inside the aggregated value here")
                .with_help("assign it to a variable in the aggregate's body and aggregate the variable"),
        );
    }
    // The variables of the aggregated value are the aggregate's own, as in Soufflé 2.5:
    // `m = min y : { e(x, y) }` is the least `y` of `x`'s edges even where the rule binds
    // another `y` outside, so such a `y` neither binds the value nor is a witness.
    let targets = target_vars(aggregate.term);
    let outside: BTreeSet<&str> = bound.iter().copied().filter(|v| !targets.contains(v)).collect();
    if let Some(report) = unbound_value(aggregate.term, &outside) {
        return Some(report);
    }
    let witness =
        aggregate.vars.iter().find(|v| used_outside.contains(**v) && !bound.contains(**v) && !targets.contains(*v))?;
    Some(
        Diagnostic::error(
            Code::UNSUPPORTED_SOUFFLE,
            format!("`{witness}` is bound only inside the aggregate and used outside it (a witness)"),
        )
        .with_primary(span, format!("`{witness}` is local to this aggregate"))
        .with_help(format!("bind `{witness}` in an atom outside the aggregate, or use it only inside")),
    )
}
