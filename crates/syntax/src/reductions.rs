//! Aggregates rewritten into ordinary rules around one *reduction* each, before typing
//! and lowering, so that every later pass (magic sets, plans, engines, maintenance)
//! sees stratified negation and a reduction, nothing else. For the `i`-th aggregate of
//! a rule with head `h`, grouped by the keys `K` (its variables used outside it, except
//! those of the aggregated value, which are its own as in Soufflé 2.5) with locals `L`
//! (its other variables):
//!
//! - `h_aggi_rows(K, L, v) :- body.` — one row per distinct binding of the body's
//!   variables (set semantics, as Soufflé sums once per distinct body row), with the
//!   aggregated value `v` last (none for `count`);
//! - `h_aggi(K, N) :- N = op v : h_aggi_rows(K, _, v).` — the reduction, one fact per
//!   group that has rows; lowering makes it an IR rule with [`ir::Aggregation`];
//! - for `count` and `sum`, whose value over no rows is 0: `h_aggi_keys(K)` holds the
//!   groups the rule's other literals can reach, and `h_aggi_all(K, 0) :-
//!   h_aggi_keys(K), !h_aggi(K, _).`, `h_aggi_all(K, N) :- h_aggi(K, N).` give every
//!   such group its value; `min` and `max` over no rows have none, so the rule reads
//!   `h_aggi` itself and does not fire;
//! - the rule reads `h_aggi_all(K, V)` (or `h_aggi(K, V)`) and has the fresh variable
//!   `V` where the aggregate was.
//!
//! A correlated aggregate (one whose body reads a key that its atoms do not bind, as in
//! `T(m) :- T(x), m = min a : { V(a), a < x }`) has its rows rule read the keys:
//! `h_aggi_rows(K, L, v) :- h_aggi_keys(K), body.` When the rule is recursive through its
//! other literals, the keys, rows and reduction then lie in the head's recursive stratum
//! (the body itself cannot: that is E0033), where the engines reduce each group once,
//! complete, in the round its rows appear. A negation there would be a cycle through
//! negation, so `count` and `sum` give an empty group its 0 by a *sentinel* row instead:
//! the rows are `h_aggi_rows(K, 1, L, x)` with `x` the value (1 for `count`), each key
//! gets `h_aggi_rows(K, 0, Z, 0)` (`Z` a fixed value of each local's type, added by
//! lowering once the types are known, see [`Sentinel`]), the flag column keeping it apart
//! from every real row, and both reduce by `sum`.
//!
//! A generated name that the program already uses gets a further number, as a Soufflé
//! input relation's copy `r_input` does.

use crate::ast::{self, AggregateOp, Atom, Comparison, Literal, Name, Statement, Term, TermKind};
use diag::{Code, Diagnostic, Span};
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;
use std::collections::BTreeSet;

/// The file with each fact that holds an aggregate (`n(count : e(_, _)).`, which Soufflé
/// accepts) made a rule with an empty body, as it is computed: its predicate is derived
/// and its aggregates are checked and rewritten as any rule's. Borrowed when there is none.
pub(crate) fn computed_facts_as_rules(file: &ast::File) -> Cow<'_, ast::File> {
    let computed = |s: &Statement| matches!(s, Statement::Fact(atom) if atom.has_aggregate());
    if !file.statements.iter().any(computed) {
        return Cow::Borrowed(file);
    }
    let mut file = file.clone();
    for statement in &mut file.statements {
        if let Statement::Fact(atom) = statement {
            if atom.has_aggregate() {
                let head = atom.clone();
                let span = head.span;
                *statement = Statement::Rule(ast::Rule { head, body: Vec::new(), span });
            }
        }
    }
    Cow::Owned(file)
}

/// The sentinel row of a correlated `count` or `sum` in a recursive rule (see the module
/// doc): `rows(K, 0, Z, 0) :- keys(K).`, whose `locals` columns `Z` lowering fills with a
/// fixed value of each column's type once the types are inferred.
pub(crate) struct Sentinel {
    pub(crate) rows: String,
    pub(crate) keys: String,
    pub(crate) key_vars: Vec<String>,
    pub(crate) locals: usize,
    pub(crate) span: Span,
}

impl Sentinel {
    /// The sentinel's rule, each local column holding `zero(column)` (counting from 0
    /// over the rows relation's columns).
    pub(crate) fn rule(&self, zero: impl Fn(usize) -> TermKind) -> ast::Rule {
        let span = self.span;
        let keys: Vec<Term> = self.key_vars.iter().map(|k| var(k, span)).collect();
        let mut args = keys.clone();
        args.push(Term { kind: TermKind::Int("0".into()), span });
        let first_local = args.len();
        args.extend((0..self.locals).map(|i| Term { kind: zero(first_local + i), span }));
        args.push(Term { kind: TermKind::Int("0".into()), span });
        ast::Rule { head: atom(&self.rows, args, span), body: vec![Literal::Atom(atom(&self.keys, keys, span))], span }
    }
}

/// The rules whose head is in a recursive component with one of their atoms outside
/// aggregates, by their position among the file's statements: one strongly connected
/// components search over the predicates.
fn recursive_rules(file: &ast::File) -> FxHashSet<usize> {
    let mut ids: FxHashMap<String, usize> = FxHashMap::default();
    let mut successors: Vec<Vec<usize>> = Vec::new();
    let mut id = |name: &str, successors: &mut Vec<Vec<usize>>| {
        let next = ids.len();
        let n = *ids.entry(name.to_string()).or_insert(next);
        if successors.len() <= n {
            successors.resize(n + 1, Vec::new());
        }
        n
    };
    let mut outer: Vec<(usize, usize, Vec<usize>)> = Vec::new();
    for (k, statement) in file.statements.iter().enumerate() {
        let Statement::Rule(rule) = statement else { continue };
        let head = id(&rule.head.pred.text, &mut successors);
        let mut reads = Vec::new();
        for (read, in_aggregate) in crate::aggregates::read_atoms(rule) {
            let r = id(&read.pred.text, &mut successors);
            successors[r].push(head);
            if !in_aggregate {
                reads.push(r);
            }
        }
        outer.push((k, head, reads));
    }
    let mut component = vec![0; successors.len()];
    for (c, members) in ir::strongly_connected(&successors).into_iter().enumerate() {
        for m in members {
            component[m] = c;
        }
    }
    outer
        .into_iter()
        .filter(|(_, head, reads)| reads.iter().any(|&r| component[r] == component[*head]))
        .map(|(k, _, _)| k)
        .collect()
}

/// The file with every aggregate rewritten and the sentinel rows lowering adds; the
/// reports of aggregates it cannot rewrite (group keys bound only by aggregates that wait
/// for each other).
pub(crate) fn desugar(file: &ast::File) -> (Cow<'_, ast::File>, Vec<Sentinel>, Vec<Diagnostic>) {
    let has_aggregate = |s: &Statement| matches!(s, Statement::Rule(rule) if rule_has_aggregate(rule));
    if !file.statements.iter().any(has_aggregate) {
        return (Cow::Borrowed(file), Vec::new(), Vec::new());
    }
    let mut names = predicate_names(file);
    let mut out = file.empty_like();
    let mut diagnostics = Vec::new();
    let mut sentinels = Vec::new();
    let recursive = recursive_rules(file);
    for (k, statement) in file.statements.iter().enumerate() {
        match statement {
            Statement::Rule(rule) if rule_has_aggregate(rule) => {
                let mut nested = Vec::new();
                let mut rewrite = Rewrite {
                    names: &mut names,
                    out: &mut out.statements,
                    sentinels: &mut sentinels,
                    diagnostics: &mut diagnostics,
                    nested: &mut nested,
                };
                rewrite_rule(rule, recursive.contains(&k), &mut rewrite);
                // A nested aggregate's rows rule is checked and rewritten as a rule of
                // the program, in the stratum of the rule it came from.
                while let Some(rows) = rewrite.nested.pop() {
                    let before = rewrite.diagnostics.len();
                    crate::aggregates::check_rule(&rows, rewrite.diagnostics);
                    if rewrite.diagnostics.len() == before {
                        rewrite_rule(&rows, recursive.contains(&k), &mut rewrite);
                    }
                }
            }
            other => out.statements.push(other.clone()),
        }
    }
    (Cow::Owned(out), sentinels, diagnostics)
}

/// Whether an aggregate is among the rule's terms, at any depth of an expression.
pub(crate) fn rule_has_aggregate(rule: &ast::Rule) -> bool {
    rule.terms().flat_map(Term::subterms).any(is_aggregate)
}

/// Every predicate name the file uses or declares (aggregates' bodies included): what a
/// generated name must differ from.
pub(crate) fn predicate_names(file: &ast::File) -> FxHashSet<String> {
    let mut names: FxHashSet<String> = FxHashSet::default();
    for statement in &file.statements {
        let atoms: Vec<&Atom> = match statement {
            Statement::Rule(rule) => {
                let mut atoms = vec![&rule.head];
                atoms.extend(aggregate_atoms(rule.terms()));
                atoms.extend(rule.body.iter().filter_map(Literal::atom));
                atoms
            }
            Statement::Fact(atom) => {
                let mut atoms = vec![atom];
                atoms.extend(aggregate_atoms(&atom.args));
                atoms
            }
            Statement::Dominance(rule) => {
                std::iter::once(&rule.head).chain(rule.body.iter().filter_map(Literal::atom)).collect()
            }
            Statement::Query(query) => vec![&query.atom],
            Statement::Error(_) => Vec::new(),
        };
        names.extend(atoms.into_iter().map(|a| a.pred.text.clone()));
    }
    names.extend(file.declared.iter().map(|(name, _, _)| name.clone()));
    names
}

/// What [`rewrite_rule`] adds to.
struct Rewrite<'a> {
    names: &'a mut FxHashSet<String>,
    out: &'a mut Vec<Statement>,
    sentinels: &'a mut Vec<Sentinel>,
    diagnostics: &'a mut Vec<Diagnostic>,
    /// The rows rules whose bodies hold aggregates, still to rewrite.
    nested: &'a mut Vec<ast::Rule>,
}

/// The atoms of the aggregates' bodies in `terms`, at any depth.
fn aggregate_atoms<'a>(terms: impl IntoIterator<Item = &'a Term>) -> Vec<&'a Atom> {
    let mut atoms = Vec::new();
    for term in terms.into_iter().flat_map(Term::subterms) {
        if let TermKind::Aggregate { body, .. } = &term.kind {
            atoms.extend(body.iter().filter_map(Literal::atom));
        }
    }
    atoms
}

fn is_aggregate(term: &Term) -> bool {
    matches!(term.kind, TermKind::Aggregate { .. })
}

/// The variables of terms, in order of first occurrence, aggregates not entered.
pub(crate) fn term_vars<'a>(terms: impl IntoIterator<Item = &'a Term>, out: &mut Vec<String>) {
    for term in terms.into_iter().flat_map(Term::subterms) {
        if let TermKind::Var(v) = &term.kind {
            if !out.contains(v) {
                out.push(v.clone());
            }
        }
    }
}

/// The variables of the aggregates nested in the body of `aggregate`, at any depth, but
/// for those of their aggregated values (each aggregate's own): the variables a nested
/// aggregate shares with the rule make group keys of the aggregate around it too.
fn nested_vars(aggregate: &Term, out: &mut Vec<String>) {
    let TermKind::Aggregate { body, .. } = &aggregate.kind else { unreachable!("an aggregate term") };
    let mut pending: Vec<&Term> =
        body.iter().flat_map(Literal::terms).filter(|t| t.subterms().any(is_aggregate)).collect();
    while let Some(root) = pending.pop() {
        for term in root.subterms() {
            if let TermKind::Aggregate { body, .. } = &term.kind {
                let own: BTreeSet<&str> = crate::aggregates::target_vars(term);
                let mut vars = Vec::new();
                term_vars(body.iter().flat_map(Literal::terms), &mut vars);
                for v in vars {
                    if !own.contains(v.as_str()) && !out.contains(&v) {
                        out.push(v);
                    }
                }
                pending.extend(body.iter().flat_map(Literal::terms));
            }
        }
    }
}

/// A name of the form `base` (or `base2`, `base3`, ...) that no predicate has yet; it is
/// then taken.
pub(crate) fn fresh_name(base: &str, names: &mut FxHashSet<String>) -> String {
    let name = (1..)
        .map(|k| if k == 1 { base.to_string() } else { format!("{base}_{k}") })
        .find(|n| !names.contains(n))
        .expect("some name is free");
    names.insert(name.clone());
    name
}

/// A variable name of the form `base`, `base1`, ... not in `used`; it is then used.
pub(crate) fn fresh_var(base: &str, used: &mut BTreeSet<String>) -> String {
    let name = (0..)
        .map(|k| if k == 0 { base.to_string() } else { format!("{base}{k}") })
        .find(|n| !used.contains(n))
        .expect("some name is free");
    used.insert(name.clone());
    name
}

pub(crate) fn var(name: &str, span: Span) -> Term {
    Term { kind: TermKind::Var(name.to_string()), span }
}

pub(crate) fn atom(pred: &str, args: Vec<Term>, span: Span) -> Atom {
    Atom { pred: Name { text: pred.to_string(), span }, args, span }
}

pub(crate) fn new_rule(head: Atom, body: Vec<Literal>, span: Span) -> Statement {
    Statement::Rule(ast::Rule { head, body, span })
}

/// The aggregate terms of a rule, each replaced by a fresh variable in `rule`, in the
/// order head, then body literals; subterms of arithmetic are searched with a stack.
fn take_aggregates(rule: &mut ast::Rule, used: &mut BTreeSet<String>) -> Vec<(Term, String)> {
    let mut found = Vec::new();
    for root in rule.terms_mut() {
        root.rewrite_outermost(is_aggregate, |term| {
            let name = fresh_var("Agg", used);
            let span = term.span;
            found.push((std::mem::replace(term, var(&name, span)), name));
        });
    }
    found
}

/// The variables the rule's literals bind outside its aggregates: those of positive
/// atoms, then those of `X = e` assignments whose `e` is bound, until none is added;
/// with the literals (without aggregates) that use bound variables only, which
/// restrict the groups of a `count` or `sum` to those the rule can reach.
pub(crate) fn outer_bound(rule: &ast::Rule) -> (BTreeSet<String>, Vec<Literal>) {
    let mut bound = BTreeSet::new();
    let plain = |literal: &&Literal| !literal.terms().flat_map(Term::subterms).any(is_aggregate);
    for literal in rule.body.iter().filter(plain) {
        if let Literal::Atom(atom) = literal {
            for arg in &atom.args {
                if let TermKind::Var(v) = &arg.kind {
                    bound.insert(v.clone());
                }
            }
        }
    }
    // An atom with an aggregate among its arguments (`e(x, sum y : ...)`) reads the
    // aggregate's value, so it is no outer literal of it.
    let mut used: Vec<bool> = rule.body.iter().map(|l| matches!(l, Literal::Atom(_)) && plain(&l)).collect();
    loop {
        let mut changed = false;
        for (k, literal) in rule.body.iter().enumerate() {
            if used[k] || !plain(&literal) {
                continue;
            }
            let mut vars = Vec::new();
            term_vars(literal.terms(), &mut vars);
            let unbound: Vec<&String> = vars.iter().filter(|v| !bound.contains(*v)).collect();
            let assigned = match (literal, unbound.as_slice()) {
                (_, []) => None,
                // `X = e` binds `X` when `e` is bound: `X` alone on one side and nowhere on
                // the other (`c * 1 = c` binds nothing, `c + 1 = 2` neither).
                (Literal::Compare(c), [one]) if c.op == ir::CmpOp::Eq => {
                    let lone = |t: &Term| matches!(&t.kind, TermKind::Var(v) if v == *one);
                    let mut left = Vec::new();
                    let mut right = Vec::new();
                    term_vars([&c.left], &mut left);
                    term_vars([&c.right], &mut right);
                    let binds = (lone(&c.left) && !right.contains(*one)) || (lone(&c.right) && !left.contains(*one));
                    if !binds {
                        continue;
                    }
                    Some((*one).clone())
                }
                _ => continue,
            };
            used[k] = true;
            changed = true;
            bound.extend(assigned);
        }
        if !changed {
            break;
        }
    }
    let literals = rule.body.iter().zip(&used).filter(|(_, &u)| u).map(|(l, _)| l.clone()).collect();
    (bound, literals)
}

/// Rewrites the aggregates of `source`, a rule recursive through its other literals when
/// `recursive` says so.
fn rewrite_rule(source: &ast::Rule, recursive: bool, rewrite: &mut Rewrite<'_>) {
    let Rewrite { names, out, sentinels, diagnostics, nested } = rewrite;
    let (bound_outside, outer_literals) = outer_bound(source);
    let mut rule = source.clone();
    // Variables used outside the aggregates: an aggregate's variable among them is a
    // group key (the checks have made sure that it is bound there).
    let mut outside = Vec::new();
    term_vars(source.terms(), &mut outside);
    let mut used: BTreeSet<String> = outside.iter().cloned().collect();
    for term in source.terms().flat_map(Term::subterms) {
        if let TermKind::Aggregate { value, body, .. } = &term.kind {
            let mut inner = Vec::new();
            term_vars(value.iter().map(|v| &**v), &mut inner);
            term_vars(body.iter().flat_map(Literal::terms), &mut inner);
            nested_vars(term, &mut inner);
            used.extend(inner);
        }
    }
    let head = source.head.pred.text.clone();
    // The group keys of an aggregate: its variables used outside the aggregates, but for
    // those of its value (Soufflé 2.5 scopes them to the aggregate, even where the rule
    // uses the same name outside) and for the variable its value is assigned to
    // (`e = max a : { r(a, e) }`) when nothing else binds it, which Soufflé 2.5 renames
    // apart inside the body as a variable of the aggregate's own.
    let is_key = |term: &Term, v: &String| {
        let own_result = assigned_by(source, term.span).filter(|v| !bound_outside.contains(*v));
        outside.contains(v)
            && !crate::aggregates::target_vars(term).contains(&v.as_str())
            && own_result != Some(v.as_str())
    };
    let group_keys = |term: &Term| -> Vec<String> {
        let TermKind::Aggregate { value, body, .. } = &term.kind else { unreachable!("an aggregate term") };
        let mut vars = Vec::new();
        term_vars(value.iter().map(|v| &**v), &mut vars);
        term_vars(body.iter().flat_map(Literal::terms), &mut vars);
        nested_vars(term, &mut vars);
        vars.into_iter().filter(|v| is_key(term, v)).collect()
    };
    let mut pending = take_aggregates(&mut rule, &mut used);
    while !pending.is_empty() {
        // The first aggregate whose keys the rule's literals outside the aggregates bind,
        // or failing that the values of the aggregates rewritten so far (a key `n` of
        // `n = count : {...}, s = sum b : { e(n, b) }`), whose reads the rule now holds.
        let rewritten = outer_bound(&rule);
        let chosen = pending.iter().enumerate().find_map(|(i, (term, _))| {
            let keys = group_keys(term);
            if keys.iter().all(|k| bound_outside.contains(k)) {
                Some((i, false))
            } else {
                keys.iter().all(|k| rewritten.0.contains(k)).then_some((i, true))
            }
        });
        let Some((i, chained)) = chosen else {
            let (term, _) = &pending[0];
            let key = group_keys(term).into_iter().find(|k| !rewritten.0.contains(k)).unwrap_or_default();
            let op = match &term.kind {
                TermKind::Aggregate { op, .. } => op.text(),
                _ => unreachable!("an aggregate term"),
            };
            diagnostics.push(
                Diagnostic::error(
                    Code::UNSUPPORTED_SOUFFLE,
                    format!("the group key `{key}` is bound only by aggregates that wait for this one"),
                )
                .with_primary(term.span, format!("a `{op}` grouped by `{key}`"))
                .with_help(format!(
                    "bind `{key}` by an atom of the rule outside the aggregates, so that one of them can be computed first"
                )),
            );
            return;
        };
        let (bound, outer) = if chained { rewritten } else { (bound_outside.clone(), outer_literals.clone()) };
        let (term, result) = pending.remove(i);
        let keys = group_keys(&term);
        let TermKind::Aggregate { op, value, mut body, .. } = term.kind else { unreachable!("an aggregate term") };
        let span = term.span;
        // A positive atom written twice is one conjunct (Soufflé 2.5 drops the copy, so
        // `count : { e(z, _), e(z, _) }` counts `e`'s tuples, as `count : e(z, _)` does).
        let mut seen: Vec<(String, Vec<TermKind>)> = Vec::new();
        body.retain(|literal| {
            let Literal::Atom(atom) = literal else { return true };
            let key = (atom.pred.text.clone(), atom.args.iter().map(|t| t.kind.clone()).collect::<Vec<_>>());
            if seen.contains(&key) {
                return false;
            }
            seen.push(key);
            true
        });
        // Soufflé 2.5's rows: over one positive atom, each tuple it matches (so its `_`s
        // are columns of the rows too); over several, each distinct binding of the
        // body's named variables.
        if body.iter().filter(|l| matches!(l, Literal::Atom(_))).count() == 1 {
            for literal in &mut body {
                if let Literal::Atom(atom) = literal {
                    for arg in atom.args.iter_mut().filter(|a| a.kind == TermKind::Anon) {
                        arg.kind = TermKind::Var(fresh_var("Any", &mut used));
                    }
                }
            }
        }
        let mut vars = Vec::new();
        term_vars(value.iter().map(|v| &**v), &mut vars);
        term_vars(body.iter().flat_map(Literal::terms), &mut vars);
        let locals: Vec<String> = vars.into_iter().filter(|v| !keys.contains(v)).collect();
        debug_assert!(keys.iter().all(|k| bound.contains(k)), "chosen with its keys bound");
        let key_terms = || keys.iter().map(|k| var(k, span)).collect::<Vec<Term>>();
        let base = fresh_name(&format!("{head}_agg"), names);
        let rows = fresh_name(&format!("{base}_rows"), names);
        // The groups the rule reaches: what `count` and `sum` give 0 when they have no
        // rows, and what binds a key the aggregate reads but its atoms do not bind.
        let unbound_key = keys.iter().any(|k| !body.iter().any(|l| matches!(l, Literal::Atom(a) if has_var(a, k))));
        let needs_keys = matches!(op, AggregateOp::Count | AggregateOp::Sum) || unbound_key;
        let keys_name = needs_keys.then(|| fresh_name(&format!("{base}_keys"), names));
        if let Some(keys_name) = &keys_name {
            out.push(new_rule(atom(keys_name, key_terms(), span), outer.clone(), span));
        }
        // A correlated `count` or `sum` of a recursive rule: flagged rows and a sentinel
        // per key, reduced by `sum` (see the module doc).
        let sentinel = unbound_key && recursive && matches!(op, AggregateOp::Count | AggregateOp::Sum);
        let int = |text: &str| Term { kind: TermKind::Int(text.into()), span };

        // The rows: keys, locals, and the value last.
        let mut row_args = key_terms();
        if sentinel {
            row_args.push(int("1"));
        }
        row_args.extend(locals.iter().map(|l| var(l, span)));
        match (sentinel, &value) {
            (true, None) => row_args.push(int("1")),
            _ => row_args.extend(value.as_deref().cloned()),
        }
        let mut row_body = body.clone();
        if let (true, Some(keys_name)) = (unbound_key, &keys_name) {
            row_body.insert(0, Literal::Atom(atom(keys_name, key_terms(), span)));
        }
        // An aggregate in the body makes the rows rule one with an aggregate of its own,
        // rewritten in turn.
        let has_nested = row_body.iter().flat_map(Literal::terms).flat_map(Term::subterms).any(is_aggregate);
        match has_nested {
            true => nested.push(ast::Rule { head: atom(&rows, row_args, span), body: row_body, span }),
            false => out.push(new_rule(atom(&rows, row_args, span), row_body, span)),
        }
        if let (true, Some(keys_name)) = (sentinel, &keys_name) {
            sentinels.push(Sentinel {
                rows: rows.clone(),
                keys: keys_name.clone(),
                key_vars: keys.clone(),
                locals: locals.len(),
                span,
            });
        }

        // The reduction over them.
        let mut reduction_vars: BTreeSet<String> = keys.iter().cloned().collect();
        let n = fresh_var("N", &mut reduction_vars);
        let mut read = key_terms();
        let anon = || Term { kind: TermKind::Anon, span };
        read.extend(sentinel.then(anon));
        read.extend(locals.iter().map(|_| anon()));
        let reduced_value = (value.is_some() || sentinel).then(|| fresh_var("V", &mut reduction_vars));
        read.extend(reduced_value.iter().map(|v| var(v, span)));
        let aggregate = Term {
            kind: TermKind::Aggregate {
                op: if sentinel { AggregateOp::Sum } else { op },
                op_span: span,
                value: reduced_value.as_ref().map(|v| Box::new(var(v, span))),
                body: vec![Literal::Atom(atom(&rows, read, span))],
            },
            span,
        };
        let mut head_args = key_terms();
        head_args.push(var(&n, span));
        let reduction = Literal::Compare(Comparison::new(var(&n, span), ir::CmpOp::Eq, aggregate));
        out.push(new_rule(atom(&base, head_args, span), vec![reduction], span));

        let mut read_args = key_terms();
        read_args.push(var(&result, span));
        let read_pred = match op {
            AggregateOp::Count | AggregateOp::Sum if !sentinel => {
                // The groups the rule reaches, each with 0 unless it has rows.
                let keys_name = keys_name.expect("made for count and sum");
                let all = fresh_name(&format!("{base}_all"), names);
                let mut zero = key_terms();
                zero.push(Term { kind: TermKind::Int("0".into()), span });
                let mut absent = key_terms();
                absent.push(Term { kind: TermKind::Anon, span });
                out.push(new_rule(
                    atom(&all, zero, span),
                    vec![
                        Literal::Atom(atom(&keys_name, key_terms(), span)),
                        Literal::Negated { atom: atom(&base, absent, span), span },
                    ],
                    span,
                ));
                let mut copied = key_terms();
                copied.push(var(&n, span));
                out.push(new_rule(
                    atom(&all, copied.clone(), span),
                    vec![Literal::Atom(atom(&base, copied, span))],
                    span,
                ));
                all
            }
            AggregateOp::Mean => {
                // The sum over the count, as Soufflé divides them (in floats): a second
                // reduction counts the same rows, and the rule divides.
                let counted = fresh_name(&format!("{base}_count"), names);
                let mut count_read = key_terms();
                count_read.extend(locals.iter().map(|_| anon()));
                count_read.push(anon());
                let count = Term {
                    kind: TermKind::Aggregate {
                        op: AggregateOp::Count,
                        op_span: span,
                        value: None,
                        body: vec![Literal::Atom(atom(&rows, count_read, span))],
                    },
                    span,
                };
                let mut count_head = key_terms();
                count_head.push(var(&n, span));
                let counting = Literal::Compare(Comparison::new(var(&n, span), ir::CmpOp::Eq, count));
                out.push(new_rule(atom(&counted, count_head, span), vec![counting], span));
                let (sum, rows_count) = (fresh_var("Sum", &mut used), fresh_var("Count", &mut used));
                let mut sum_args = key_terms();
                sum_args.push(var(&sum, span));
                let mut count_args = key_terms();
                count_args.push(var(&rows_count, span));
                rule.body.push(Literal::Atom(atom(&base, sum_args, span)));
                rule.body.push(Literal::Atom(atom(&counted, count_args, span)));
                let to_float = ir::Functor::ToFloat(ir::ValueType::Number);
                let divisor = Term {
                    kind: TermKind::Call { functor: to_float, name_span: span, args: vec![var(&rows_count, span)] },
                    span,
                };
                let mean = Term {
                    kind: TermKind::Binary {
                        op: ir::BinOp::Div,
                        op_span: span,
                        left: Box::new(var(&sum, span)),
                        right: Box::new(divisor),
                    },
                    span,
                };
                rule.body.push(Literal::Compare(Comparison::new(var(&result, span), ir::CmpOp::Eq, mean)));
                continue;
            }
            _ => base,
        };
        rule.body.push(Literal::Atom(atom(&read_pred, read_args, span)));
    }
    out.push(Statement::Rule(rule));
}

/// The variable a comparison `v = aggregate` (either way round) of `rule`'s body assigns
/// the aggregate at `span` to.
fn assigned_by(rule: &ast::Rule, span: Span) -> Option<&str> {
    rule.body.iter().find_map(|literal| {
        let Literal::Compare(c) = literal else { return None };
        if c.op != ir::CmpOp::Eq {
            return None;
        }
        match (&c.left.kind, &c.right.kind) {
            (TermKind::Var(v), TermKind::Aggregate { .. }) if c.right.span == span => Some(v.as_str()),
            (TermKind::Aggregate { .. }, TermKind::Var(v)) if c.left.span == span => Some(v.as_str()),
            _ => None,
        }
    })
}

/// Whether `v` is an argument of the atom.
fn has_var(atom: &Atom, v: &str) -> bool {
    atom.args.iter().any(|t| matches!(&t.kind, TermKind::Var(x) if x == v))
}
