//! Lowering Soufflé's syntax tree to the native AST, in two steps the checks run between.
//!
//! [`clauses`] expands each clause's body as written into disjunctive normal form: a
//! disjunction and a parenthesised group are their alternatives, a negated group is pushed
//! inward (De Morgan: an atom's negation, a comparison with the opposite operator), and a
//! conjunction is the product of its literals' alternatives. The checks of variables'
//! types, the inlining of `inline` relations and the typing of comparisons then work on
//! each conjunction, as Soufflé checks each rule a clause stands for.
//!
//! [`native`] then makes the native AST of what passed: one rule per head and conjunction
//! (a fact of a derived relation becomes a rule with an empty body), symbol `min`/`max`
//! rewritten ([`super::extrema`]), and a copy rule from a hidden relation for each input
//! relation that rules also derive. The native lowering makes the IR from it.
//!
//! The parser bounds each expansion as it reads the body (with the same functions, over
//! `()`), so the expansions here stay within [`MAX_EXPANSION`] rules.

use super::tree::{self, IoKind};
use super::{extrema, typing, RawIo, Relation, MAX_EXPANSION};
use crate::ast::{self, Statement, TermKind};
use diag::{Code, Diagnostic, FileId, Span};
use rustc_hash::{FxHashMap, FxHashSet};

/// A body in disjunctive normal form: each conjunction becomes one rule. Over `()` it is
/// the shape of an expansion, which the parser bounds without building the rules.
pub(super) type Dnf<L = ast::Literal> = Vec<Vec<L>>;

/// A clause with its body expanded: its heads, its conjunctions (none for facts), its span.
pub(super) struct Clause {
    pub heads: Vec<ast::Atom>,
    pub body: Option<Dnf>,
    pub span: Span,
    /// The `<=` of a subsumptive clause (see [`tree::Clause::subsumes`]).
    pub subsumes: Option<Span>,
}

/// Joins `more` to `dnf`: each conjunction of `dnf` with each alternative of `more`.
pub(super) fn and<L: Clone>(dnf: &mut Dnf<L>, more: Dnf<L>) {
    match <[Vec<L>; 1]>::try_from(more) {
        // One alternative, the literal of almost every body: appended in place. Copying
        // each conjunction for it made a body of n atoms cost n² (18 s for 10,000 atoms).
        Ok([only]) => {
            if let Some((last, rest)) = dnf.split_last_mut() {
                for conj in rest {
                    conj.extend(only.iter().cloned());
                }
                last.extend(only);
            }
        }
        Err(more) => {
            *dnf = dnf
                .iter()
                .flat_map(|conj| {
                    more.iter().map(move |alternative| {
                        let mut c = conj.clone();
                        c.extend(alternative.iter().cloned());
                        c
                    })
                })
                .collect();
        }
    }
}

/// The negation of `dnf` in disjunctive normal form: each conjunction becomes the
/// disjunction of its literals negated (by `not`, which is told whether the literal is
/// `dnf`'s only one), and the conjunctions' negations are multiplied out. `None` when the
/// result exceeds [`MAX_EXPANSION`] rules.
pub(super) fn negate<L: Clone>(dnf: Dnf<L>, not: impl Fn(L, bool) -> L) -> Option<Dnf<L>> {
    let lone = dnf.len() == 1 && dnf[0].len() == 1;
    let mut negated: Dnf<L> = vec![Vec::new()];
    for conjunction in dnf {
        let alternatives: Vec<L> = conjunction.into_iter().map(|literal| not(literal, lone)).collect();
        if negated.len() * alternatives.len() > MAX_EXPANSION {
            return None;
        }
        negated = negated
            .iter()
            .flat_map(|conj| {
                alternatives.iter().map(move |more| {
                    let mut c = conj.clone();
                    c.push(more.clone());
                    c
                })
            })
            .collect();
    }
    Some(negated)
}

/// [`negate`] of native literals: an atom's negation, a negated atom's atom, a comparison
/// with the opposite operator. `bang` is the `!` that a lone negated atom's span starts
/// from (none when the group was not written, as for an inlined relation's bodies: each
/// atom keeps its span).
pub(super) fn negate_literals(dnf: Dnf, bang: Option<Span>) -> Option<Dnf> {
    negate(dnf, |literal, lone| match literal {
        ast::Literal::Atom(atom) => {
            let span = bang.filter(|_| lone).map_or(atom.span, |bang| bang.to(atom.span));
            ast::Literal::Negated { atom, span }
        }
        ast::Literal::Negated { atom, .. } => ast::Literal::Atom(atom),
        ast::Literal::Compare(mut c) => {
            c.op = c.op.negated();
            ast::Literal::Compare(c)
        }
    })
}

/// The clauses of `program` with their bodies expanded.
pub(super) fn clauses(program: tree::Program) -> Vec<Clause> {
    program
        .items
        .into_iter()
        .filter_map(|item| match item {
            tree::Item::Clause(clause) => Some(Clause {
                heads: clause.heads,
                body: clause.body.map(disjunction),
                span: clause.span,
                subsumes: clause.subsumes,
            }),
            _ => None,
        })
        .collect()
}

/// A disjunction expanded: its alternatives' conjunctions, in order.
pub(super) fn disjunction(disjunction: tree::Disjunction) -> Dnf {
    disjunction.0.into_iter().flat_map(conjunction).collect()
}

/// A conjunction expanded: the product of its literals' alternatives.
fn conjunction(conjunction: tree::Conjunction) -> Dnf {
    let mut dnf: Dnf = vec![Vec::new()];
    for literal in conjunction.0 {
        and(&mut dnf, self::literal(literal));
    }
    dnf
}

/// A literal expanded (its nesting is bounded by the parser, so the recursion is too).
fn literal(literal: tree::Literal) -> Dnf {
    match literal {
        tree::Literal::Atom(atom) => vec![vec![ast::Literal::Atom(atom)]],
        tree::Literal::Compare(c) => vec![vec![ast::Literal::Compare(c)]],
        tree::Literal::Constant(true) => vec![Vec::new()],
        tree::Literal::Constant(false) => Vec::new(),
        tree::Literal::Group(group) => disjunction(group),
        tree::Literal::Not { bang, inner } => {
            negate_literals(self::literal(*inner), Some(bang)).expect("the parser bounds every negation's expansion")
        }
    }
}

/// The native AST of the checked clauses and queries: one rule per head and conjunction,
/// symbol `min`/`max` rewritten, facts of derived relations made rules; `.input`s of
/// derived relations read into hidden relations. Returns the file, the relations it
/// declares (the hidden ones last) and the resolved I/O directives.
pub(super) fn native(
    clauses: Vec<Clause>,
    queries: Vec<ast::Query>,
    relations: Vec<Relation>,
    ios: Vec<(IoKind, RawIo)>,
    types: &FxHashMap<String, Vec<String>>,
    queried: Option<&str>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Lowered {
    let declared: FxHashMap<&str, &Relation> = relations.iter().map(|r| (r.name.as_str(), r)).collect();
    // A fact with an aggregate (`n(count : { e(_, _) }).`) or a declared functor's call
    // (`n(@f(1)).`) is computed, so its relation is derived as a rule's is.
    let mut derived: FxHashSet<String> = clauses
        .iter()
        .flat_map(|c| c.heads.iter().filter(move |h| c.body.is_some() || h.has_aggregate() || h.calls_user_functor()))
        .map(|h| h.pred.text.clone())
        .collect();
    // A query reads a derived relation: one it names (on the command line or in the
    // file) is made one even when only facts or an `.input` define it.
    derived.extend(
        queried
            .into_iter()
            .chain(queries.iter().map(|q| q.atom.pred.text.as_str()))
            .filter(|q| declared.contains_key(q))
            .map(str::to_string),
    );
    // An equivalence relation is derived: its closure rules add to its facts and input.
    derived.extend(equivalences(&relations).map(|r| r.name.clone()));
    // A relation with a `choice-domain` is derived: its facts are candidates as its rules'
    // heads are.
    derived.extend(relations.iter().filter(|r| r.choice.is_some()).map(|r| r.name.clone()));
    let (mut inputs, mut outputs, mut printsize) = (Vec::new(), Vec::new(), Vec::new());
    let (mut copies, mut hidden_relations) = (Vec::new(), Vec::new());
    for (kind, io) in ios {
        // The same directive twice (`.output r` and the qualifier `output` on its
        // `.decl`) writes one file, as in Soufflé.
        let same = |other: &RawIo| {
            other.name == io.name
                && other.settings.filename == io.settings.filename
                && other.settings.delimiter == io.settings.delimiter
                && other.settings.stdout == io.settings.stdout
                && other.settings.sqlite == io.settings.sqlite
                && other.settings.dbname == io.settings.dbname
                && other.settings.json == io.settings.json
        };
        match kind {
            IoKind::Input if inputs.iter().any(same) => continue,
            IoKind::Output if outputs.iter().any(same) => continue,
            _ => {}
        }
        match kind {
            IoKind::Input if declared.get(io.name.as_str()).is_some_and(|r| r.choice.is_some()) => {
                // Soufflé loads an input whole, past the keys its rules are held to; dlc
                // chooses among everything a relation gets, so it refuses rather than
                // answer otherwise.
                diagnostics.push(
                    Diagnostic::error(
                        Code::CHOICE_DOMAIN,
                        format!("`{}` has a `choice-domain` and cannot be read with `.input`", io.name),
                    )
                    .with_primary(io.span, "read here")
                    .with_help("read the facts into a relation of their own and derive the chosen ones from it"),
                );
            }
            IoKind::Input if derived.contains(io.name.as_str()) => {
                // dlc keeps input and derived relations apart: the facts go to a relation
                // of their own, `r_input` (or `r_input2`, ... when the program declares
                // that name), which one rule copies into `r`, as if the rules added to
                // the loaded input.
                let relation = declared[io.name.as_str()];
                let hidden = (1..)
                    .map(|k| if k == 1 { format!("{}_input", io.name) } else { format!("{}_input{k}", io.name) })
                    .find(|n| {
                        !declared.contains_key(n.as_str()) && !hidden_relations.iter().any(|r: &Relation| &r.name == n)
                    })
                    .expect("some name is free");
                let vars: Vec<ast::Term> = (0..relation.arity)
                    .map(|i| ast::Term { kind: TermKind::Var(format!("x{i}")), span: io.span })
                    .collect();
                let atom = |name: &str| ast::Atom {
                    pred: ast::Name { text: name.to_string(), span: io.span },
                    args: vars.clone(),
                    span: io.span,
                };
                copies.push(ast::Rule {
                    head: atom(&io.name),
                    body: vec![ast::Literal::Atom(atom(&hidden))],
                    span: io.span,
                });
                hidden_relations.push(Relation {
                    name: hidden.clone(),
                    arity: relation.arity,
                    span: io.span,
                    types: relation.types.clone(),
                    attributes: relation.attributes.clone(),
                    inline: false,
                    eqrel: false,
                    choice: None,
                });
                let mut settings = io.settings;
                settings.filename = Some(settings.filename.unwrap_or_else(|| format!("{}.facts", io.name)));
                inputs.push(RawIo { name: hidden, span: io.span, settings });
            }
            IoKind::Input => inputs.push(io),
            IoKind::Output => outputs.push(io),
            IoKind::Printsize => printsize.push(io),
        }
    }
    let mut statements = Vec::new();
    // The fresh variables of rewritten symbol `min`/`max` terms, numbered per program.
    let mut extrema_vars = 0;
    for clause in clauses {
        match clause.body {
            None => {
                for head in clause.heads {
                    // A fact's symbol `min`/`max` of constants is computed.
                    let is_derived = derived.contains(head.pred.text.as_str());
                    let rule = ast::Rule { head, body: Vec::new(), span: clause.span };
                    let rules = match extrema::expand(rule, &|_| None, &mut extrema_vars) {
                        Ok(rules) => rules,
                        Err(report) => {
                            diagnostics.push(report);
                            continue;
                        }
                    };
                    for rule in rules {
                        statements.push(if is_derived || !rule.body.is_empty() {
                            Statement::Rule(rule)
                        } else {
                            Statement::Fact(rule.head)
                        });
                    }
                }
            }
            Some(dnf) if clause.subsumes.is_some() => {
                for conj in dnf {
                    if let Some(rule) = dominance(&clause.heads[0], &conj, clause.span, diagnostics) {
                        statements.push(Statement::Dominance(rule));
                    }
                }
            }
            Some(dnf) => {
                // Each head with each conjunction, made one rule; the last head takes the
                // conjunctions and the last conjunction the head instead of copies.
                let mut heads = clause.heads;
                let Some(last_head) = heads.pop() else { continue };
                let mut rules: Vec<ast::Rule> = Vec::with_capacity((heads.len() + 1) * dnf.len());
                for head in &heads {
                    rules.extend(dnf.iter().map(|conj| ast::Rule {
                        head: head.clone(),
                        body: conj.clone(),
                        span: clause.span,
                    }));
                }
                let mut dnf = dnf;
                let last_conj = dnf.pop();
                rules.extend(dnf.into_iter().map(|body| ast::Rule {
                    head: last_head.clone(),
                    body,
                    span: clause.span,
                }));
                rules.extend(last_conj.map(|body| ast::Rule { head: last_head, body, span: clause.span }));
                for rule in rules {
                    // The variables' kinds, wanted only by a rule with a symbol `min`/`max`.
                    let typed = match extrema::has_extremum(&rule) {
                        true => typing::variable_kinds(&rule.body, &declared, types),
                        false => FxHashMap::default(),
                    };
                    match extrema::expand(rule, &|v| typed.get(v).copied(), &mut extrema_vars) {
                        Ok(rules) => statements.extend(rules.into_iter().map(Statement::Rule)),
                        Err(report) => diagnostics.push(report),
                    }
                }
            }
        }
    }
    statements.extend(equivalences(&relations).flat_map(closure_rules).map(Statement::Rule));
    statements.extend(queries.into_iter().map(Statement::Query));
    statements.extend(copies.into_iter().map(Statement::Rule));
    let mut relations = relations;
    relations.extend(hidden_relations);
    let declared = relations
        .iter()
        .map(|r| (r.name.clone(), r.types.iter().map(|t| typing::column_kind(t, types)).collect(), r.span))
        .collect();
    // The caller sets the span of the whole file.
    let file = ast::File { statements, span: Span::new(FileId(0), 0..0), declared, record_types: Vec::new() };
    Lowered { file, relations, inputs, outputs, printsize }
}

/// The equivalence relations among `relations` that stay relations (an `inline` one is
/// unfolded as its clauses are written, as Soufflé unfolds it).
fn equivalences(relations: &[Relation]) -> impl Iterator<Item = &Relation> {
    relations.iter().filter(|r| r.eqrel && !r.inline)
}

/// The rules that make the binary relation `r` an equivalence relation, with Soufflé's
/// semantics: the reflexive, symmetric and transitive closure of what its other rules,
/// facts and input give it, reflexive over the values that appear in it. Each rule has
/// the span of the relation's name in its `.decl`.
fn closure_rules(r: &Relation) -> [ast::Rule; 3] {
    let span = r.span;
    let atom = |x: &str, y: &str| ast::Atom {
        pred: ast::Name { text: r.name.clone(), span },
        args: [x, y].map(|v| ast::Term { kind: TermKind::Var(v.to_string()), span }).into(),
        span,
    };
    let rule = |head: ast::Atom, body: Vec<ast::Atom>| ast::Rule {
        head,
        body: body.into_iter().map(ast::Literal::Atom).collect(),
        span,
    };
    [
        rule(atom("x", "x"), vec![atom("x", "y")]),
        rule(atom("x", "y"), vec![atom("y", "x")]),
        rule(atom("x", "z"), vec![atom("x", "y"), atom("y", "z")]),
    ]
}

/// The dominance rule of one conjunction of a subsumptive clause whose dominated atom is
/// `head` (see [`tree::Clause::subsumes`]): its first two atoms are the facts compared,
/// and the rest is the body. Or the reports of what makes it none: atoms of two
/// relations, or a constraint's variable that no atom or assignment binds (E0039).
fn dominance(
    head: &ast::Atom,
    conj: &[ast::Literal],
    span: Span,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<ast::Rule> {
    let mut atoms = conj.iter().filter_map(|l| match l {
        ast::Literal::Atom(atom) => Some(atom),
        _ => None,
    });
    let (Some(dominated), Some(dominating)) = (atoms.next(), atoms.next()) else {
        // The parser puts the two atoms first, and no pass removes them.
        diagnostics.push(super::unsupported(span, "a subsumptive clause whose compared facts are not two atoms"));
        return None;
    };
    if dominating.pred.text != dominated.pred.text {
        diagnostics.push(
            Diagnostic::error(
                diag::Code::INVALID_SUBSUMPTION,
                format!(
                    "a subsumptive clause compares facts of `{}` with facts of `{}`",
                    dominated.pred.text, dominating.pred.text
                ),
            )
            .with_primary(dominating.pred.span, format!("`{}` here", dominating.pred.text))
            .with_secondary(dominated.pred.span, "is not this relation"),
        );
        return None;
    }
    // The variables the positive atoms bind and those an equality can assign.
    let mut vars: FxHashSet<&str> = FxHashSet::default();
    for literal in conj {
        let terms: Vec<&ast::Term> = match literal {
            ast::Literal::Atom(atom) => atom.args.iter().flat_map(ast::Term::subterms).collect(),
            ast::Literal::Compare(c) if c.op == ir::CmpOp::Eq => [&c.left, &c.right].into(),
            _ => Vec::new(),
        };
        vars.extend(terms.into_iter().filter_map(|t| match &t.kind {
            TermKind::Var(v) => Some(v.as_str()),
            _ => None,
        }));
    }
    let mut ok = true;
    for literal in conj {
        let ast::Literal::Compare(c) = literal else { continue };
        for term in [&c.left, &c.right].into_iter().flat_map(ast::Term::subterms) {
            let (message, label) = match &term.kind {
                TermKind::Var(v) if !vars.contains(v.as_str()) => {
                    (format!("`{v}` is bound by no atom of the subsumptive clause"), "bound by no atom")
                }
                TermKind::Aggregate { .. } => ("an aggregate in a subsumptive clause".to_string(), "an aggregate"),
                TermKind::Range { .. } => ("a `range` in a subsumptive clause".to_string(), "a generator"),
                _ => continue,
            };
            diagnostics.push(
                Diagnostic::error(diag::Code::INVALID_SUBSUMPTION, message)
                    .with_primary(term.span, label)
                    .with_secondary(dominating.span, "the dominating fact"),
            );
            ok = false;
        }
    }
    // The dominated fact is the body's first atom, where `_` is a wildcard as in any
    // body (`E(_, x1) <= E(_, x2) :- x1 <= x2.`). The head, which is not read, is that
    // atom with a fresh variable for each `_` (a head has none), taken from the body
    // rather than the clause's head, whose records are made rather than matched.
    let mut body = conj.to_vec();
    let used: FxHashSet<String> = body
        .iter()
        .flat_map(ast::Literal::terms)
        .flat_map(ast::Term::subterms)
        .filter_map(|t| match &t.kind {
            TermKind::Var(v) => Some(v.clone()),
            _ => None,
        })
        .collect();
    let mut fresh = (0..).map(|n| format!("_{n}")).filter(|name| !used.contains(name));
    let mut head = head.clone();
    if let Some(ast::Literal::Atom(dominated)) = body.iter_mut().find(|l| matches!(l, ast::Literal::Atom(_))) {
        for (term, name) in dominated.args.iter_mut().filter(|t| t.kind == TermKind::Anon).zip(&mut fresh) {
            term.kind = TermKind::Var(name);
        }
        head = ast::Atom { span: head.span, ..dominated.clone() };
    }
    ok.then(|| ast::Rule { head, body, span })
}

/// What [`native`] makes.
pub(super) struct Lowered {
    pub file: ast::File,
    pub relations: Vec<Relation>,
    pub inputs: Vec<RawIo>,
    pub outputs: Vec<RawIo>,
    pub printsize: Vec<RawIo>,
}
