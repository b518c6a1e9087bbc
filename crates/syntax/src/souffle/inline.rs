//! `inline` relations, unfolded into the clauses that use them as Soufflé 2.5 does, so
//! that such a relation is never computed: a positive atom `a(t)` becomes, per clause
//! `a(h) :- body` of `a`, that body with the clause's variables renamed apart and `h`
//! matched against `t`; a negated atom `!a(t)` becomes the conjunction over `a`'s clauses
//! of each body negated, which is the disjunction of its negated literals (sound because
//! an inlined relation that is negated may have no variable outside its head).
//!
//! Soufflé's restrictions are errors here too (E0036): an inlined relation may not be
//! read or written (`.input`, `.output`, `.printsize`), depend on itself through inlined
//! relations, appear in an aggregate, or appear negated when one of its clauses has a
//! variable outside its head or the negated atom has a `_`.

use super::lower::{negate_literals, Clause, Dnf};
use super::MAX_EXPANSION;
use crate::ast::{Atom, Comparison, Literal, Term, TermKind};
use diag::{Code, Diagnostic, Span};
use rustc_hash::{FxHashMap, FxHashSet};

/// An inlined relation: its name, arity and where its `.decl` names it.
pub(super) struct Inlined {
    pub name: String,
    pub arity: usize,
    pub span: Span,
}

/// Removes the clauses that define inlined relations and unfolds every use of them in
/// the others; reports each restriction broken and drops the clauses it concerns.
/// `io` holds the relations an I/O directive names, with the directive's span.
pub(super) fn unfold(
    clauses: Vec<Clause>,
    inlined: &[Inlined],
    io: &[(&str, Span)],
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Clause> {
    if inlined.is_empty() {
        return clauses;
    }
    let by_name: FxHashMap<&str, &Inlined> = inlined.iter().map(|i| (i.name.as_str(), i)).collect();
    for (name, at) in io {
        if let Some(relation) = by_name.get(name) {
            diagnostics.push(
                restriction(
                    *at,
                    format!("the input or output relation `{name}` cannot be inlined"),
                    "read or written here",
                )
                .with_secondary(relation.span, "declared `inline` here")
                .with_help("drop `inline` from its `.decl`, or drop the I/O directive"),
            );
        }
    }
    // Each inlined relation's definitions: one (head, conjunction) per head and disjunct.
    let mut definitions: FxHashMap<&str, Vec<(Atom, Vec<Literal>)>> = FxHashMap::default();
    let mut rest = Vec::new();
    for clause in clauses {
        if clause.subsumes.is_some() && clause.heads.iter().any(|h| by_name.contains_key(h.pred.text.as_str())) {
            diagnostics.push(super::unsupported(clause.span, "a subsumptive clause of an `inline` relation"));
            continue;
        }
        let (inline_heads, heads): (Vec<Atom>, Vec<Atom>) =
            clause.heads.into_iter().partition(|h| by_name.contains_key(h.pred.text.as_str()));
        for head in inline_heads {
            let name = by_name[head.pred.text.as_str()].name.as_str();
            let conjunctions = clause.body.clone().unwrap_or_else(|| vec![Vec::new()]);
            definitions.entry(name).or_default().extend(conjunctions.into_iter().map(|c| (head.clone(), c)));
        }
        if !heads.is_empty() {
            rest.push(Clause { heads, body: clause.body, span: clause.span, subsumes: clause.subsumes });
        }
    }
    let mut ok = check_cycles(inlined, &by_name, &definitions, diagnostics);
    // Relations whose clauses have a variable outside their head cannot be negated.
    let negatable: FxHashSet<&str> = inlined
        .iter()
        .map(|i| i.name.as_str())
        .filter(|name| {
            definitions.get(name).into_iter().flatten().all(|(head, body)| {
                let head_vars = vars_of(head.args.iter());
                body.iter().flat_map(Literal::terms).flat_map(Term::subterms).all(|t| match &t.kind {
                    TermKind::Var(v) => head_vars.contains(v.as_str()),
                    _ => true,
                })
            })
        })
        .collect();
    let all_bodies = rest
        .iter()
        .flat_map(|c| c.body.iter().flatten().flatten())
        .chain(definitions.values().flatten().flat_map(|(_, body)| body));
    for literal in all_bodies {
        ok &= check_literal(literal, &by_name, &negatable, diagnostics);
    }
    if !ok {
        // The uses are reported; what is left is checked as if nothing were inlined.
        return rest;
    }
    let mut fresh = 0usize;
    let mut out = Vec::with_capacity(rest.len());
    for clause in rest {
        let Some(body) = clause.body else {
            out.push(clause);
            continue;
        };
        let mut done: Dnf = Vec::new();
        // Conjunctions still holding an inlined atom; each step unfolds the first one,
        // and the inlined relations are acyclic, so this ends.
        let mut pending: Vec<Vec<Literal>> = body;
        let mut too_large = false;
        while let Some(conjunction) = pending.pop() {
            let Some(at) =
                conjunction.iter().position(|l| l.atom().is_some_and(|a| by_name.contains_key(a.pred.text.as_str())))
            else {
                done.push(conjunction);
                continue;
            };
            let unfolded = unfold_literal(&conjunction, at, &definitions, &mut fresh)
                .filter(|u| (done.len() + pending.len() + u.len()) * clause.heads.len() <= MAX_EXPANSION);
            let Some(unfolded) = unfolded else {
                too_large = true;
                break;
            };
            pending.extend(unfolded);
        }
        if too_large {
            diagnostics.push(
                Diagnostic::error(
                    Code::UNSUPPORTED_SOUFFLE,
                    format!("inlining makes this clause more than {MAX_EXPANSION} rules"),
                )
                .with_primary(clause.span, "this clause")
                .with_help("drop `inline` from a relation this clause reads"),
            );
            continue;
        }
        done.reverse();
        out.push(Clause { heads: clause.heads, body: Some(done), span: clause.span, subsumes: clause.subsumes });
    }
    out
}

fn restriction(span: Span, message: String, label: &str) -> Diagnostic {
    Diagnostic::error(Code::INLINE_RESTRICTION, message).with_primary(span, label)
}

/// E0036 for each cycle of inlined relations (one per strongly connected set of them);
/// whether there was none.
fn check_cycles(
    inlined: &[Inlined],
    by_name: &FxHashMap<&str, &Inlined>,
    definitions: &FxHashMap<&str, Vec<(Atom, Vec<Literal>)>>,
    diagnostics: &mut Vec<Diagnostic>,
) -> bool {
    // The inlined relations each one reads, directly.
    let reads = |name: &str| -> Vec<&str> {
        let mut out: Vec<&str> = definitions
            .get(name)
            .into_iter()
            .flatten()
            .flat_map(|(_, body)| body.iter().flat_map(atoms_of))
            .filter_map(|a| by_name.get(a.pred.text.as_str()).map(|i| i.name.as_str()))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    };
    // Which inlined relations each reaches, with a worklist (their number is small, and
    // each search is linear in the inlined definitions).
    let reached = |from: &str| -> FxHashSet<&str> {
        let mut seen = FxHashSet::default();
        let mut worklist = reads(from);
        while let Some(next) = worklist.pop() {
            if seen.insert(next) {
                worklist.extend(reads(next));
            }
        }
        seen
    };
    let mut reported: FxHashSet<&str> = FxHashSet::default();
    let mut ok = true;
    for relation in inlined {
        let name = relation.name.as_str();
        if reported.contains(name) || !reached(name).contains(name) {
            continue;
        }
        let members: Vec<&Inlined> = inlined
            .iter()
            .filter(|m| reached(name).contains(m.name.as_str()) && reached(&m.name).contains(name))
            .collect();
        let names: Vec<String> = members.iter().map(|m| format!("`{}`", m.name)).collect();
        let mut d = restriction(
            relation.span,
            format!("the inlined relations {} depend on themselves", names.join(", ")),
            "declared `inline` here",
        )
        .with_help(
            "an inlined relation is unfolded into its uses, so it cannot be recursive: drop `inline` from one of them",
        );
        for member in members.iter().filter(|m| m.name != name) {
            d = d.with_secondary(member.span, format!("`{}` is inlined too", member.name));
        }
        reported.extend(members.iter().map(|m| m.name.as_str()));
        diagnostics.push(d);
        ok = false;
    }
    ok
}

/// Reports the uses of inlined relations that cannot be unfolded in one literal: in an
/// aggregate, or negated when the relation has variables outside its heads or the atom
/// has a `_`. Whether there was none.
fn check_literal(
    literal: &Literal,
    by_name: &FxHashMap<&str, &Inlined>,
    negatable: &FxHashSet<&str>,
    diagnostics: &mut Vec<Diagnostic>,
) -> bool {
    let mut ok = true;
    for term in literal.terms().flat_map(Term::subterms) {
        let TermKind::Aggregate { body, .. } = &term.kind else { continue };
        for atom in body.iter().flat_map(atoms_of).filter(|a| by_name.contains_key(a.pred.text.as_str())) {
            diagnostics.push(
                restriction(
                    atom.span,
                    format!("the inlined relation `{}` is read by an aggregate", atom.pred.text),
                    "in an aggregate here",
                )
                .with_help("an aggregate reads a whole relation: drop `inline` from its `.decl`"),
            );
            ok = false;
        }
    }
    let Literal::Negated { atom, span } = literal else { return ok };
    let Some(relation) = by_name.get(atom.pred.text.as_str()) else { return ok };
    if atom.args.len() != relation.arity {
        // An arity mismatch is reported where the uses are checked.
        return ok;
    }
    if !negatable.contains(relation.name.as_str()) {
        diagnostics.push(
            restriction(
                *span,
                format!(
                    "the inlined relation `{}` is negated, but one of its clauses has a variable outside its head",
                    relation.name
                ),
                "negated here",
            )
            .with_secondary(relation.span, "declared `inline` here")
            .with_help(
                "its negation would have to say \"for no value of that variable\": drop `inline` from its `.decl`",
            ),
        );
        return false;
    }
    if let Some(anon) = atom.args.iter().flat_map(Term::subterms).find(|t| t.kind == TermKind::Anon) {
        diagnostics.push(
            restriction(
                anon.span,
                format!("the negated atom of the inlined relation `{}` has a `_`", relation.name),
                "`_` here",
            )
            .with_help("name the variable and bind it in the body, or drop `inline` from the relation's `.decl`"),
        );
        return false;
    }
    ok
}

/// The conjunctions that replace `conjunction` with its literal `at` (an atom of an
/// inlined relation, positive or negated) unfolded one level; `None` when a negated one
/// would pass [`MAX_EXPANSION`] rules.
fn unfold_literal(
    conjunction: &[Literal],
    at: usize,
    definitions: &FxHashMap<&str, Vec<(Atom, Vec<Literal>)>>,
    fresh: &mut usize,
) -> Option<Vec<Vec<Literal>>> {
    let (before, after) = (&conjunction[..at], &conjunction[at + 1..]);
    let (atom, negated) = match &conjunction[at] {
        Literal::Atom(atom) => (atom, false),
        Literal::Negated { atom, .. } => (atom, true),
        Literal::Compare(_) => unreachable!("an atom's position"),
    };
    let clauses = definitions.get(atom.pred.text.as_str()).map_or(&[][..], Vec::as_slice);
    let bodies: Vec<Vec<Literal>> = clauses.iter().map(|(head, body)| matched(atom, head, body, fresh)).collect();
    let with = |middle: Vec<Literal>| -> Vec<Literal> {
        let mut c = before.to_vec();
        c.extend(middle);
        c.extend_from_slice(after);
        c
    };
    if !negated {
        // One conjunction per clause of the relation; none when it has no clauses.
        return Some(bodies.into_iter().map(with).collect());
    }
    // `!(b1 ; b2 ; ...)`: the negation of the clauses' bodies as one disjunction, as a
    // negated group in a body is read. An empty body (a fact) negated is false, so that
    // relation's negation never holds.
    Some(negate_literals(bodies, None)?.into_iter().map(with).collect())
}

/// The body of an inlined clause `head :- body` as the literals that replace `atom`:
/// every variable of the clause renamed apart, a head variable's first position taken
/// from the atom's argument there when that is a variable or a constant, and an equality
/// for every other position.
fn matched(atom: &Atom, head: &Atom, body: &[Literal], fresh: &mut usize) -> Vec<Literal> {
    *fresh += 1;
    let suffix = format!("#{fresh}");
    let mut names: FxHashMap<String, Term> = FxHashMap::default();
    let mut equalities = Vec::new();
    let mut anonymous = 0usize;
    for (arg, h) in atom.args.iter().zip(&head.args) {
        let arg = match arg.kind {
            // Each `_` of the atom is a variable of its own.
            TermKind::Anon => {
                anonymous += 1;
                Term { kind: TermKind::Var(format!("_{anonymous}{suffix}")), span: arg.span }
            }
            _ => arg.clone(),
        };
        let simple = matches!(
            arg.kind,
            TermKind::Var(_) | TermKind::Ident(_) | TermKind::Int(_) | TermKind::Float(_) | TermKind::Str(_)
        );
        match &h.kind {
            TermKind::Var(v) if simple && !names.contains_key(v) => {
                names.insert(v.clone(), arg);
            }
            _ => equalities.push((arg, h.clone())),
        }
    }
    let mut rename = |term: &Term| -> Term { renamed(term, &mut names, &suffix) };
    let mut out: Vec<Literal> = Vec::with_capacity(equalities.len() + body.len());
    for (arg, h) in &equalities {
        out.push(Literal::Compare(Comparison::new(arg.clone(), ir::CmpOp::Eq, rename(h))));
    }
    for literal in body {
        out.push(match literal {
            Literal::Atom(a) => Literal::Atom(renamed_atom(a, &mut rename)),
            Literal::Negated { atom, span } => Literal::Negated { atom: renamed_atom(atom, &mut rename), span: *span },
            Literal::Compare(c) => {
                Literal::Compare(Comparison { left: rename(&c.left), right: rename(&c.right), ..c.clone() })
            }
        });
    }
    out
}

fn renamed_atom(atom: &Atom, rename: &mut dyn FnMut(&Term) -> Term) -> Atom {
    Atom { args: atom.args.iter().map(rename).collect(), ..atom.clone() }
}

/// `term` with each variable replaced by what `names` maps it to, or by itself with
/// `suffix` appended (a name no source variable has), which is then recorded. Terms are
/// at most [`crate::expr::MAX_DEPTH`] deep and aggregates do not nest, so recursion is
/// bounded.
fn renamed(term: &Term, names: &mut FxHashMap<String, Term>, suffix: &str) -> Term {
    let kind = match &term.kind {
        TermKind::Var(v) => {
            let span = term.span;
            return names
                .entry(v.clone())
                .or_insert_with(|| Term { kind: TermKind::Var(format!("{v}{suffix}")), span })
                .clone();
        }
        TermKind::Unary { op, op_span, operand } => {
            TermKind::Unary { op: *op, op_span: *op_span, operand: Box::new(renamed(operand, names, suffix)) }
        }
        TermKind::Binary { op, op_span, left, right } => TermKind::Binary {
            op: *op,
            op_span: *op_span,
            left: Box::new(renamed(left, names, suffix)),
            right: Box::new(renamed(right, names, suffix)),
        },
        TermKind::Call { functor, name_span, args } => TermKind::Call {
            functor: functor.clone(),
            name_span: *name_span,
            args: args.iter().map(|a| renamed(a, names, suffix)).collect(),
        },
        TermKind::Range { name_span, args } => {
            TermKind::Range { name_span: *name_span, args: args.iter().map(|a| renamed(a, names, suffix)).collect() }
        }
        TermKind::Record { branch, args } => {
            TermKind::Record { branch: branch.clone(), args: args.iter().map(|a| renamed(a, names, suffix)).collect() }
        }
        TermKind::Aggregate { op, op_span, value, body } => TermKind::Aggregate {
            op: *op,
            op_span: *op_span,
            value: value.as_ref().map(|v| Box::new(renamed(v, names, suffix))),
            body: body
                .iter()
                .map(|l| match l {
                    Literal::Atom(a) => Literal::Atom(renamed_atom(a, &mut |t| renamed(t, names, suffix))),
                    Literal::Negated { atom, span } => {
                        Literal::Negated { atom: renamed_atom(atom, &mut |t| renamed(t, names, suffix)), span: *span }
                    }
                    Literal::Compare(c) => Literal::Compare(Comparison {
                        left: renamed(&c.left, names, suffix),
                        right: renamed(&c.right, names, suffix),
                        ..c.clone()
                    }),
                })
                .collect(),
        },
        other => other.clone(),
    };
    Term { kind, span: term.span }
}

/// The atoms a literal reads: its own, and those of the aggregates in its terms.
fn atoms_of(literal: &Literal) -> Vec<&Atom> {
    let mut out: Vec<&Atom> = literal.atom().into_iter().collect();
    for term in literal.terms().flat_map(Term::subterms) {
        if let TermKind::Aggregate { body, .. } = &term.kind {
            out.extend(body.iter().filter_map(Literal::atom));
        }
    }
    out
}

fn vars_of<'a>(terms: impl Iterator<Item = &'a Term>) -> FxHashSet<&'a str> {
    terms
        .flat_map(Term::subterms)
        .filter_map(|t| match &t.kind {
            TermKind::Var(v) => Some(v.as_str()),
            _ => None,
        })
        .collect()
}
