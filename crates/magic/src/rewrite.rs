//! The magic-sets rewrite itself: the worklist over adorned predicates and the
//! generation of seed, demand and main rules with full left-prefix SIPS.

use crate::graph::{CallEdge, CallGraph};
use crate::names::{declare_answer, declare_demand};
use crate::subsume::Subsumption;
use crate::{AdornmentLimit, CallTrace, MagicProgram, RewriteOptions, RuleKind, RuleTrace};
use ir::{
    Adornment, Atom, Bf, CmpOp, Comparison, Generator, Origin, PredId, PredKind, Program, Query, Rule, RuleId, Span,
    Symbol, Term, TermKind,
};
use rustc_hash::FxHashSet;

/// Rewrites `program` for `query` (usually `program.query`; it should name an IDB
/// predicate, which [`ir::validate`] checks beforehand).
///
/// Rule order of the output, which is stable and what the printers show:
/// 1. the seed `@m:p^α(consts) <-` of the query;
/// 2. then, for each adorned predicate in discovery order (the query's first, then in the
///    order calls first reach them, each expanded once), for each source rule with that
///    head in program order: that rule's demand rules in body order, followed by its
///    main rule.
///
/// A demand rule that reads `m(x) <- m(x)` is not emitted but recorded in
/// [`MagicProgram::dropped`]. The source rules are not copied; the inline facts are.
/// A query on a predicate without rules yields just the seed, so its answers are empty.
///
/// There is no bound on the number of adorned predicates here: a predicate of arity `n`
/// can be called with up to `2^n` adornments. Input from users goes through
/// [`rewrite_limited`].
pub fn rewrite(program: &Program, query: &Query) -> MagicProgram {
    match rewrite_limited(program, query, usize::MAX) {
        Ok(magic) => magic,
        Err(_) => unreachable!("no program has more than usize::MAX adorned predicates"),
    }
}

/// [`rewrite`], stopping with an [`AdornmentLimit`] as soon as a call would create
/// adorned predicate number `max_adornments + 1` (counted over all predicates, the
/// query's included), before anything is declared or emitted for it.
///
/// The limit bounds the whole output: every adorned predicate `p^α` is expanded once,
/// into one main rule and at most one demand rule per IDB body atom for each source rule
/// of `p`, so the rewritten program has at most `1 + max_adornments * max_p R(p)` rules,
/// where `R(p)` counts the rules of `p` plus their IDB body atoms.
pub fn rewrite_limited(
    program: &Program,
    query: &Query,
    max_adornments: usize,
) -> Result<MagicProgram, AdornmentLimit> {
    rewrite_with(program, query, RewriteOptions { max_adornments, subsume: false })
}

/// The rewrite with [`RewriteOptions`]: [`rewrite_limited`] when `subsume` is off.
///
/// With `subsume`, the plain rewrite is made first (under the same limit), and then made
/// again with every call `p^β`, the query included, served by an adornment `p^γ` of the
/// plain rewrite: among those whose bound positions are all bound in `β`, the one with
/// the fewest bound positions (the first found on a tie; it then serves itself, so no
/// call is sent on to an adornment that is not expanded). The call's demand
/// rule projects its bound arguments onto the served adornment's bound positions, and
/// its answer atom is `@a:p^γ` over all its arguments, so its other bound arguments
/// select like any bound variable. The second pass starts from the query again, so an
/// adornment that only subsumed calls reached (`pt^bb` beside `pt^bf`) is not
/// generated. The rule order is the plain rewrite's over the adornments that remain.
pub fn rewrite_with(program: &Program, query: &Query, options: RewriteOptions) -> Result<MagicProgram, AdornmentLimit> {
    let serving = match options.subsume {
        false => None,
        true => Some(Subsumption::new(&rewrite_pass(program, query, options.max_adornments, None)?.adorned)),
    };
    let mut magic = rewrite_pass(program, query, options.max_adornments, serving.as_ref())?;
    magic.subsumed = options.subsume;
    Ok(magic)
}

/// One pass of the rewrite; with `serving`, calls are served by the adornments it picks.
fn rewrite_pass(
    program: &Program,
    query: &Query,
    max_adornments: usize,
    serving: Option<&Subsumption>,
) -> Result<MagicProgram, AdornmentLimit> {
    let mut out = program.empty_like();
    out.facts = program.facts.clone();

    let query_pred = query.atom.pred;
    let query_adornment = match serving {
        None => query.adornment(),
        Some(serving) => serving.serve(query_pred, &query.adornment()),
    };
    let answer_pred = declare_answer(&mut out, query_pred, &query_adornment, query.atom.span);
    let demand_pred = declare_demand(&mut out, query_pred, &query_adornment, query.atom.span);
    out.query = Some(Query {
        atom: Atom { pred: answer_pred, args: query.atom.args.clone(), span: query.atom.span },
        records: query.records.clone(),
    });

    let mut rewriter = Rewriter {
        source: program,
        out,
        graph: CallGraph::default(),
        adorned: Vec::new(),
        rules: Vec::new(),
        dropped: Vec::new(),
        max_adornments,
        query_span: query.atom.span,
        serving,
        whole: Vec::new(),
    };
    rewriter.schedule(query_pred, &query_adornment, query.atom.span)?;
    rewriter.graph.query = rewriter.graph.node(query_pred, &query_adornment);

    let seed = Rule::positive(
        Atom { pred: demand_pred, args: restrict(&query.atom.args, &query_adornment), span: query.atom.span },
        Vec::new(),
        query.atom.span,
        Origin::Seed,
    );
    rewriter.emit(seed, RuleTrace { kind: RuleKind::Seed, source_rule: None, calls: Vec::new() });

    // The worklist is `adorned` itself: entries are appended as calls discover them and
    // each is expanded exactly once, when `next` reaches it.
    let mut rules_of: Vec<Vec<RuleId>> = vec![Vec::new(); program.preds.len()];
    for id in program.rule_ids() {
        rules_of[program.rule(id).head.pred.index()].push(id);
    }
    let mut next = 0;
    while next < rewriter.adorned.len() {
        let (pred, adornment) = rewriter.adorned[next].clone();
        next += 1;
        for &rule_id in &rules_of[pred.index()] {
            rewriter.expand(&adornment, rule_id, program.rule(rule_id))?;
        }
    }
    rewriter.copy_negated(&rules_of);

    let Rewriter { out, graph, adorned, rules, dropped, .. } = rewriter;
    Ok(MagicProgram {
        program: out,
        answer_pred,
        demand_pred,
        query_pred,
        query_adornment,
        adorned,
        rules,
        dropped,
        graph,
        subsumed: false,
    })
}

/// The state of one rewrite: the output under construction and its trace.
struct Rewriter<'a> {
    source: &'a Program,
    out: Program,
    graph: CallGraph,
    adorned: Vec<(PredId, Adornment)>,
    rules: Vec<RuleTrace>,
    dropped: Vec<Rule>,
    /// At most this many entries in `adorned`.
    max_adornments: usize,
    query_span: Span,
    /// Which adornment serves each call, when subsuming.
    serving: Option<&'a Subsumption>,
    /// The heads of reductions some call reached: computed whole, as negated relations.
    whole: Vec<PredId>,
}

impl Rewriter<'_> {
    /// Adds `(pred, adornment)`, called at `span`, to the worklist and the call graph
    /// unless it is there; fails when that would take `adorned` past the limit.
    fn schedule(&mut self, pred: PredId, adornment: &Adornment, span: Span) -> Result<(), AdornmentLimit> {
        if self.graph.node(pred, adornment).is_some() {
            return Ok(());
        }
        if self.adorned.len() >= self.max_adornments {
            // Counted only now, on the way out: the limit is usually thousands.
            let pred_adornments = 1 + self.adorned.iter().filter(|(p, _)| *p == pred).count();
            return Err(AdornmentLimit {
                limit: self.max_adornments,
                pred,
                adornment: adornment.clone(),
                pred_adornments,
                span,
                query_span: self.query_span,
            });
        }
        self.graph.add_node(pred, adornment.clone());
        self.adorned.push((pred, adornment.clone()));
        Ok(())
    }

    /// Copies, unchanged, the source rules of every derived predicate a negated atom of
    /// the output reads, and of every predicate those depend on (by their rules, or by
    /// the bodies of their dominance rules). A negated atom stays on
    /// its source relation: demand would make that relation hold only the facts some
    /// call asked for, and the absence of an unasked fact would then be read as true.
    /// Evaluated whole, the relation is complete before any rule tests it (it lies in a
    /// lower stratum, as it did in the source program, which validation has stratified).
    fn copy_negated(&mut self, rules_of: &[Vec<RuleId>]) {
        let mut wanted: Vec<PredId> = self.whole.clone();
        let mut seen: FxHashSet<PredId> = wanted.iter().copied().collect();
        for rule in &self.out.rules {
            for atom in &rule.negated {
                if self.is_idb(atom.pred) && seen.insert(atom.pred) {
                    wanted.push(atom.pred);
                }
            }
        }
        let mut next = 0;
        while next < wanted.len() {
            let pred = wanted[next];
            next += 1;
            // A dominance rule's body is read as its rules are, whole.
            let dominance_reads: Vec<PredId> = self.source.dominances_of(pred).flat_map(|d| d.reads()).collect();
            for read in dominance_reads {
                if self.is_idb(read) && seen.insert(read) {
                    wanted.push(read);
                }
            }
            for &rule_id in &rules_of[pred.index()] {
                let rule = self.source.rule(rule_id);
                for atom in rule.body.iter().chain(&rule.negated) {
                    if self.is_idb(atom.pred) && seen.insert(atom.pred) {
                        wanted.push(atom.pred);
                    }
                }
                let trace = RuleTrace { kind: RuleKind::Unrewritten, source_rule: Some(rule_id), calls: Vec::new() };
                self.emit(rule.clone(), trace);
            }
        }
    }

    fn emit(&mut self, rule: Rule, trace: RuleTrace) -> RuleId {
        self.rules.push(trace);
        self.out.add_rule(rule)
    }

    fn is_idb(&self, pred: PredId) -> bool {
        self.source.pred(pred).kind == PredKind::Idb
    }

    /// Emits the demand rules and the main rule of source rule `rule` (whose head
    /// predicate is called with `adornment`).
    fn expand(&mut self, adornment: &Adornment, rule_id: RuleId, rule: &Rule) -> Result<(), AdornmentLimit> {
        let head_pred = rule.head.pred;
        // A relation with a `choice-domain` is also computed whole: which tuple it keeps
        // for a key depends on every candidate, not only on those some call asks for. So
        // is a relation with dominance rules: a fact outside the demand may dominate one
        // inside it, which a relation holding the demanded facts only would keep.
        let chosen = self.source.pred(head_pred).choice.is_some();
        let dominated = self.source.dominances_of(head_pred).next().is_some();
        let read_whole = chosen || dominated;
        if read_whole && self.source.rules.iter().position(|r| r.head.pred == head_pred) != Some(rule_id.index()) {
            // Its first rule reads it whole; the others add nothing to that.
            return Ok(());
        }
        let caller = self.graph.node(head_pred, adornment).expect("the expanded predicate was scheduled");
        let answer = declare_answer(&mut self.out, head_pred, adornment, rule.head.span);
        let demand = declare_demand(&mut self.out, head_pred, adornment, rule.head.span);
        // A relation read whole is read through one rule for all its rules, so with a
        // variable per column rather than its first rule's head (which may repeat a
        // variable or hold a constant).
        let head_args: Vec<Term> = match read_whole {
            true => (0..rule.head.args.len())
                .map(|i| Term { kind: TermKind::Var(self.out.symbols.intern(&format!("x{i}"))), span: rule.head.span })
                .collect(),
            false => rule.head.args.clone(),
        };
        let guard_args = restrict(&head_args, adornment);
        let mut bound = Bound::default();
        bound.add(&guard_args);
        let guard = Atom { pred: demand, args: guard_args, span: rule.head.span };
        if rule.aggregate.is_some() || read_whole {
            // A reduction needs every row of its groups: like a negated relation, it is
            // computed whole, unrewritten (`copy_negated`), and the call reads it
            // through its demand.
            if !self.whole.contains(&head_pred) {
                self.whole.push(head_pred);
            }
            let whole = Atom { pred: head_pred, args: head_args.clone(), span: rule.head.span };
            let main = Rule::positive(
                Atom { pred: answer, args: head_args, span: rule.head.span },
                vec![guard, whole],
                rule.span,
                Origin::Main { rule: rule_id },
            );
            self.emit(main, RuleTrace { kind: RuleKind::Main, source_rule: Some(rule_id), calls: Vec::new() });
            return Ok(());
        }
        // The comparisons whose variables the prefix binds, and the assignments whose
        // inputs it binds (which bind their variable for later calls): each demand rule
        // applies those of its prefix.
        let mut waiting: Vec<&Comparison> = rule.comparisons.iter().collect();
        let mut generating: Vec<&Generator> = rule.generators.iter().collect();
        let mut applied: Vec<Applied> = Vec::new();
        bound.settle(&mut waiting, &mut generating, &mut applied);

        // `body` is always the guard followed by the adorned atoms seen so far, so at an
        // IDB call it is exactly the prefix of that call's demand rule.
        let mut body = vec![guard];
        let mut calls = Vec::new();
        for (position, atom) in rule.body.iter().enumerate() {
            if self.is_idb(atom.pred) {
                let call_adornment = match self.serving {
                    None => adorn(&atom.args, &bound.set),
                    Some(serving) => serving.serve(atom.pred, &adorn(&atom.args, &bound.set)),
                };
                self.schedule(atom.pred, &call_adornment, atom.span)?;
                let callee = self.graph.node(atom.pred, &call_adornment).expect("the call was just scheduled");
                self.graph.graph.add_edge(caller, callee, CallEdge { source_rule: rule_id, position });

                let call_answer = declare_answer(&mut self.out, atom.pred, &call_adornment, atom.span);
                let call_demand = declare_demand(&mut self.out, atom.pred, &call_adornment, atom.span);
                let call_atom = Atom { pred: call_answer, args: atom.args.clone(), span: atom.span };
                // The demand rule reads the positive prefix and the comparisons it binds,
                // not the negations: leaving those out can only ask for more, never less.
                let demand_args = restrict(&atom.args, &call_adornment);
                let (comparisons, generators) = needed(&applied, &demand_args);
                let demand_rule = Rule {
                    comparisons,
                    generators,
                    head: Atom { pred: call_demand, args: demand_args, span: atom.span },
                    body: body.clone(),
                    negated: Vec::new(),
                    span: rule.span,
                    origin: Origin::Demand { rule: rule_id, position },
                    aggregate: None,
                };
                let mut call = CallTrace {
                    position,
                    atom: call_atom.clone(),
                    adornment: call_adornment,
                    bound_before: bound.order.clone(),
                    prefix: body.clone(),
                    demand_rule: None,
                };
                // Subsumption makes demand rules whose head is their guard (a call served
                // by its caller's own adornment): such a rule derives nothing new either.
                // The plain rewrite (what `--emit magic-ir` shows) keeps them.
                if is_self_copy(&demand_rule)
                    || (self.serving.is_some()
                        && demand_rule.body.first().is_some_and(|guard| same_atom(guard, &demand_rule.head)))
                {
                    self.dropped.push(demand_rule);
                } else {
                    call.demand_rule = Some(RuleId(self.out.rules.len() as u32));
                    let trace =
                        RuleTrace { kind: RuleKind::Demand, source_rule: Some(rule_id), calls: vec![call.clone()] };
                    self.emit(demand_rule, trace);
                }
                calls.push(call);
                body.push(call_atom);
            } else {
                body.push(atom.clone());
            }
            // Full left-prefix SIPS: after any atom, EDB or IDB, all its variables are
            // bound, and so are those of the assignments they feed.
            bound.add(&atom.args);
            bound.settle(&mut waiting, &mut generating, &mut applied);
        }

        // Negated atoms keep reading their source relations (see `copy_negated`);
        // comparisons filter the guarded copy as they filter the source rule.
        let main = Rule {
            head: Atom { pred: answer, args: rule.head.args.clone(), span: rule.head.span },
            body,
            negated: rule.negated.clone(),
            comparisons: rule.comparisons.clone(),
            generators: rule.generators.clone(),
            span: rule.span,
            origin: Origin::Main { rule: rule_id },
            aggregate: None,
        };
        self.emit(main, RuleTrace { kind: RuleKind::Main, source_rule: Some(rule_id), calls });
        Ok(())
    }
}

/// The arguments at the `b` positions of `adornment`, in their original order. Positions
/// beyond the adornment (an arity mismatch that validation reports) count as free.
fn restrict(args: &[Term], adornment: &Adornment) -> Vec<Term> {
    args.iter().enumerate().filter(|(i, _)| adornment.0.get(*i) == Some(&Bf::Bound)).map(|(_, t)| *t).collect()
}

/// The adornment of a call: `b` for a constant or a variable in `bound`, else `f`.
fn adorn(args: &[Term], bound: &FxHashSet<Symbol>) -> Adornment {
    Adornment(
        args.iter()
            .map(|t| match t.var() {
                Some(v) if !bound.contains(&v) => Bf::Free,
                _ => Bf::Bound,
            })
            .collect(),
    )
}

/// A comparison or a generator a prefix binds the inputs of, and the variable it binds
/// when it is an assignment or a generator.
struct Applied {
    literal: AppliedLiteral,
    binds: Option<Symbol>,
}

enum AppliedLiteral {
    Comparison(Comparison),
    Generator(Generator),
}

/// The applied comparisons and generators a demand rule with head arguments `head`
/// needs: every filter, and the assignments and generators whose variable the head or a
/// needed literal reads (found from the last backwards, since one only feeds later ones).
fn needed(applied: &[Applied], head: &[Term]) -> (Vec<Comparison>, Vec<Generator>) {
    let mut wanted: FxHashSet<Symbol> = head.iter().filter_map(Term::var).collect();
    let mut comparisons: Vec<Comparison> = Vec::new();
    let mut generators: Vec<Generator> = Vec::new();
    for a in applied.iter().rev() {
        if a.binds.is_some_and(|v| !wanted.contains(&v)) {
            continue;
        }
        match &a.literal {
            AppliedLiteral::Comparison(c) => {
                wanted.extend(c.vars());
                comparisons.push(c.clone());
            }
            AppliedLiteral::Generator(g) => {
                wanted.extend(g.reads());
                generators.push(g.clone());
            }
        }
    }
    comparisons.reverse();
    generators.reverse();
    (comparisons, generators)
}

/// The variables bound so far in a rule body, in the order they became bound, and as a
/// set (a long body is not a scan of them per argument).
#[derive(Default)]
struct Bound {
    order: Vec<Symbol>,
    set: FxHashSet<Symbol>,
}

impl Bound {
    /// Moves from `waiting` to `applied` every comparison whose variables are bound, and
    /// every assignment `X = t` whose `t` is, binding `X`, and from `generating` every
    /// generator whose bounds are, binding its variable; repeats while one binds.
    fn settle(&mut self, waiting: &mut Vec<&Comparison>, generating: &mut Vec<&Generator>, applied: &mut Vec<Applied>) {
        loop {
            let before = waiting.len() + generating.len();
            waiting.retain(|c| {
                let is_bound = |e: &ir::Expr| e.vars().all(|v| self.set.contains(&v));
                let (target, value) = match (is_bound(&c.left), is_bound(&c.right)) {
                    (true, true) => {
                        applied.push(Applied { literal: AppliedLiteral::Comparison((*c).clone()), binds: None });
                        return false;
                    }
                    // Only a lone variable is bound by an assignment.
                    (false, true) if c.op == CmpOp::Eq && c.left.var().is_some() => (c.left.var(), &c.right),
                    (true, false) if c.op == CmpOp::Eq && c.right.var().is_some() => (c.right.var(), &c.left),
                    _ => return true,
                };
                // A value computed by arithmetic never binds a call's argument: passed down
                // as demand, `Z = X - 1` in a recursive rule would ask for X - 1, X - 2, …
                // without end where the original program stops (it only tests `Z` against
                // facts). Copies and constants add no value the program does not hold.
                if value.is_arithmetic() {
                    return true;
                }
                if let Some(v) = target {
                    self.add(&[Term { kind: ir::TermKind::Var(v), span: c.span }]);
                }
                applied.push(Applied { literal: AppliedLiteral::Comparison((*c).clone()), binds: target });
                false
            });
            // A generator binds its variable as an assignment does, and for the same
            // reason not from arithmetic: its values then lie between values the program holds.
            generating.retain(|g| {
                if g.operands().any(ir::Expr::is_arithmetic) || !g.reads().all(|v| self.set.contains(&v)) {
                    return true;
                }
                self.add(&[Term { kind: ir::TermKind::Var(g.var), span: g.span }]);
                applied.push(Applied { literal: AppliedLiteral::Generator((*g).clone()), binds: Some(g.var) });
                false
            });
            if waiting.len() + generating.len() == before {
                return;
            }
        }
    }

    /// Adds the variables of `args` not bound yet, in order.
    fn add(&mut self, args: &[Term]) {
        for v in args.iter().filter_map(Term::var) {
            if self.set.insert(v) {
                self.order.push(v);
            }
        }
    }
}

/// True for `m(x) <- m(x)`: one body atom identical to the head (spans aside). Such a
/// rule can never derive anything new.
fn is_self_copy(rule: &Rule) -> bool {
    match rule.body.as_slice() {
        [only] => same_atom(only, &rule.head),
        _ => false,
    }
}

/// Whether two atoms read the same predicate with the same terms (spans aside).
fn same_atom(a: &Atom, b: &Atom) -> bool {
    a.pred == b.pred && a.args.len() == b.args.len() && a.args.iter().zip(&b.args).all(|(x, y)| x.kind == y.kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{answers, evaluate, parse};
    use ir::PredName;
    use proptest::prelude::*;
    use std::collections::HashSet;

    /// Rewrites a program text for its own `?-` query.
    fn magic(src: &str) -> MagicProgram {
        let program = parse(src);
        assert!(ir::validate(&program).is_empty(), "test source must be valid");
        let query = program.query.clone().expect("the test program has a query");
        let magic = rewrite(&program, &query);
        let errors = ir::validate(&magic.program);
        assert!(errors.is_empty(), "output does not validate: {errors:?}\n{}", magic.display_rules());
        magic
    }

    fn dropped_text(m: &MagicProgram) -> Vec<String> {
        m.dropped.iter().map(|r| m.program.display_rule(r).to_string()).collect()
    }

    fn adornments(m: &MagicProgram) -> Vec<String> {
        m.adorned.iter().map(|(p, a)| crate::names::adorned_label(&m.program, *p, a)).collect()
    }

    const EXAMPLE_1: &str = "R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), R(Y,Z)\n?- R(a,Y).";

    #[test]
    fn example_1_nonlinear_reachability() {
        let m = magic(EXAMPLE_1);
        assert_eq!(
            m.display_rules(),
            "@m:R^bf(a) <-\n\
             @a:R^bf(X,Y) <- @m:R^bf(X), E(X,Y)\n\
             @m:R^bf(Y) <- @m:R^bf(X), @a:R^bf(X,Y)\n\
             @a:R^bf(X,Z) <- @m:R^bf(X), @a:R^bf(X,Y), @a:R^bf(Y,Z)\n"
        );
        assert_eq!(dropped_text(&m), ["@m:R^bf(X) <- @m:R^bf(X)"]);
        assert_eq!(m.dropped[0].origin, Origin::Demand { rule: RuleId(1), position: 0 });
        assert_eq!(adornments(&m), ["R^bf"]);
        assert_eq!(m.program.pred_name(m.answer_pred), "@a:R^bf");
        assert_eq!(m.program.pred_name(m.demand_pred), "@m:R^bf");
        assert_eq!(m.program.display_atom(&m.program.query.as_ref().unwrap().atom).to_string(), "@a:R^bf(a,Y)");
        let kinds: Vec<RuleKind> = m.rules.iter().map(|t| t.kind).collect();
        assert_eq!(kinds, [RuleKind::Seed, RuleKind::Main, RuleKind::Demand, RuleKind::Main]);
        let origins: Vec<Origin> = m.program.rules.iter().map(|r| r.origin).collect();
        assert_eq!(
            origins,
            [
                Origin::Seed,
                Origin::Main { rule: RuleId(0) },
                Origin::Demand { rule: RuleId(1), position: 1 },
                Origin::Main { rule: RuleId(1) }
            ]
        );
    }

    #[test]
    fn example_1_trace_keeps_bound_variables_and_prefixes() {
        let m = magic(EXAMPLE_1);
        let p = &m.program;
        let main = &m.rules[3];
        assert_eq!(main.source_rule, Some(RuleId(1)));
        assert_eq!(main.calls.len(), 2);
        let names = |vars: &[Symbol]| vars.iter().map(|v| p.symbols.text(*v).to_string()).collect::<Vec<_>>();
        let atoms = |atoms: &[Atom]| atoms.iter().map(|a| p.display_atom(a).to_string()).collect::<Vec<_>>();
        let (first, second) = (&main.calls[0], &main.calls[1]);
        assert_eq!((first.position, first.adornment.to_string()), (0, "bf".to_string()));
        assert_eq!(names(&first.bound_before), ["X"]);
        assert_eq!(atoms(&first.prefix), ["@m:R^bf(X)"]);
        assert_eq!(first.demand_rule, None);
        assert_eq!((second.position, second.adornment.to_string()), (1, "bf".to_string()));
        assert_eq!(names(&second.bound_before), ["X", "Y"]);
        assert_eq!(atoms(&second.prefix), ["@m:R^bf(X)", "@a:R^bf(X,Y)"]);
        assert_eq!(second.demand_rule, Some(RuleId(2)));
        // A demand rule's body is exactly the prefix of the call it serves.
        assert_eq!(m.rules[2].calls, vec![second.clone()]);
        assert_eq!(p.rules[2].body, second.prefix);
    }

    #[test]
    fn example_1_answers_agree_with_the_source_and_demand_stays_small() {
        let edges = "E(a,b).\nE(b,c).\nE(c,b).\nE(c,d).\nE(a,e).\nE(e,d).\nE(u,v).\nE(v,w).\nE(w,u).\n";
        let src = format!("{EXAMPLE_1}\n{edges}");
        let program = parse(&src);
        let m = magic(&src);
        assert_eq!(evaluate(&program)["R"].len(), 20);
        let db = evaluate(&m.program);
        assert_eq!(db["@m:R^bf"].len(), 5);
        assert_eq!(db["@a:R^bf"].len(), 11);
        assert_eq!(answers(&m.program), answers(&program));
        assert_eq!(answers(&m.program).len(), 4);
    }

    #[test]
    fn example_2_argument_swap_gives_fb() {
        let src = "P(X,Z) <- E(X,Y), Q(Z,Y)\nQ(U,V) <- F(U,V)\n?- P(a,Z).\nE(a,b).\nF(c,b).\nF(d,z).";
        let m = magic(src);
        assert_eq!(
            m.display_rules(),
            "@m:P^bf(a) <-\n\
             @m:Q^fb(Y) <- @m:P^bf(X), E(X,Y)\n\
             @a:P^bf(X,Z) <- @m:P^bf(X), E(X,Y), @a:Q^fb(Z,Y)\n\
             @a:Q^fb(U,V) <- @m:Q^fb(V), F(U,V)\n"
        );
        assert_eq!(adornments(&m), ["P^bf", "Q^fb"]);
        assert!(m.dropped.is_empty());
        let program = parse(src);
        let a = program.consts.get("a").unwrap().0;
        let c = program.consts.get("c").unwrap().0;
        assert_eq!(answers(&m.program), HashSet::from([vec![a, c]]));
        assert_eq!(answers(&m.program), answers(&program));
    }

    #[test]
    fn example_3_query_without_constants_seeds_zero_arity_demand() {
        let m = magic("R(X,Y) <- E(X,Y)\n?- R(X,Y).");
        assert_eq!(m.display_rules(), "@m:R^ff() <-\n@a:R^ff(X,Y) <- @m:R^ff(), E(X,Y)\n");
        assert_eq!(m.program.pred(m.demand_pred).arity, 0);
    }

    #[test]
    fn example_3_constant_fact_queried_with_another_constant_yields_nothing() {
        let src = "P(a) <-\n?- P(z).";
        let m = magic(src);
        assert_eq!(m.display_rules(), "@m:P^b(z) <-\n@a:P^b(a) <- @m:P^b(a)\n");
        assert!(answers(&m.program).is_empty());
        assert!(answers(&parse(src)).is_empty());
        // The same fact queried with its own constant is found.
        assert_eq!(answers(&magic("P(a) <-\n?- P(a).").program).len(), 1);
    }

    #[test]
    fn example_3_repeated_head_variable_keeps_the_equality() {
        let m = magic("P(X,X) <- E(X,Y)\n?- P(a,W).");
        assert_eq!(m.display_rules(), "@m:P^bf(a) <-\n@a:P^bf(X,X) <- @m:P^bf(X), E(X,Y)\n");
        let m = magic("P(X,X) <- E(X,Y)\n?- P(a,b).");
        assert_eq!(m.display_rules(), "@m:P^bb(a,b) <-\n@a:P^bb(X,X) <- @m:P^bb(X,X), E(X,Y)\n");
        let src = "P(X,X) <- E(X,Y)\n?- P(a,b).\nE(a,c).";
        assert!(answers(&magic(src).program).is_empty());
        assert_eq!(answers(&magic("P(X,X) <- E(X,Y)\n?- P(a,a).\nE(a,c).").program).len(), 1);
    }

    #[test]
    fn zero_arity_predicates_are_adorned_with_the_empty_string() {
        let m = magic("Ok() <- E(X), R(X)\nR(X) <- F(X)\n?- Ok().\nE(a).\nF(a).");
        assert_eq!(
            m.display_rules(),
            "@m:Ok^() <-\n\
             @m:R^b(X) <- @m:Ok^(), E(X)\n\
             @a:Ok^() <- @m:Ok^(), E(X), @a:R^b(X)\n\
             @a:R^b(X) <- @m:R^b(X), F(X)\n"
        );
        assert_eq!(answers(&m.program), HashSet::from([vec![]]));
    }

    #[test]
    fn predicate_called_with_two_adornments_gets_two_versions() {
        let src = "P(X,Y) <- E(X,Z), R(Z,Y), R(W,X), F(W)\nR(X,Y) <- G(X,Y)\n?- P(a,Y).\n\
                   E(a,b).\nG(b,c).\nG(d,a).\nF(d).";
        let m = magic(src);
        assert_eq!(adornments(&m), ["P^bf", "R^bf", "R^fb"]);
        assert_eq!(
            m.display_rules(),
            "@m:P^bf(a) <-\n\
             @m:R^bf(Z) <- @m:P^bf(X), E(X,Z)\n\
             @m:R^fb(X) <- @m:P^bf(X), E(X,Z), @a:R^bf(Z,Y)\n\
             @a:P^bf(X,Y) <- @m:P^bf(X), E(X,Z), @a:R^bf(Z,Y), @a:R^fb(W,X), F(W)\n\
             @a:R^bf(X,Y) <- @m:R^bf(X), G(X,Y)\n\
             @a:R^fb(X,Y) <- @m:R^fb(Y), G(X,Y)\n"
        );
        assert_eq!(m.graph.graph.node_count(), 3);
        assert_eq!(m.graph.graph.edge_count(), 2);
        assert_eq!(answers(&m.program), answers(&parse(src)));
        assert_eq!(answers(&m.program).len(), 1);
    }

    #[test]
    fn mutual_recursion_expands_each_adorned_predicate_once() {
        let src = "Even(X) <- Zero(X)\nEven(Y) <- Succ(X,Y), Odd(X)\nOdd(Y) <- Succ(X,Y), Even(X)\n?- Even(Y).\n\
                   Zero(n0).\nSucc(n0,n1).\nSucc(n1,n2).\nSucc(n2,n3).\nSucc(n3,n4).";
        let m = magic(src);
        assert_eq!(adornments(&m), ["Even^f", "Odd^b", "Even^b"]);
        assert_eq!(
            m.display_rules(),
            "@m:Even^f() <-\n\
             @a:Even^f(X) <- @m:Even^f(), Zero(X)\n\
             @m:Odd^b(X) <- @m:Even^f(), Succ(X,Y)\n\
             @a:Even^f(Y) <- @m:Even^f(), Succ(X,Y), @a:Odd^b(X)\n\
             @m:Even^b(X) <- @m:Odd^b(Y), Succ(X,Y)\n\
             @a:Odd^b(Y) <- @m:Odd^b(Y), Succ(X,Y), @a:Even^b(X)\n\
             @a:Even^b(X) <- @m:Even^b(X), Zero(X)\n\
             @m:Odd^b(X) <- @m:Even^b(Y), Succ(X,Y)\n\
             @a:Even^b(Y) <- @m:Even^b(Y), Succ(X,Y), @a:Odd^b(X)\n"
        );
        assert_eq!(answers(&m.program), answers(&parse(src)));
        assert_eq!(answers(&m.program).len(), 3);
    }

    #[test]
    fn constants_in_bodies_bind_their_positions() {
        let src = "P(X) <- R(X,c)\nR(X,Y) <- E(X,Y)\nR(X,Y) <- E(X,Z), R(Z,Y)\n?- P(X).\nE(a,b).\nE(b,c).\nE(d,e).";
        let m = magic(src);
        // In `R^fb`, `E(X,Z)` binds `Z` before the recursive call, which becomes `bb`.
        assert_eq!(adornments(&m), ["P^f", "R^fb", "R^bb"]);
        assert_eq!(
            m.display_rules(),
            "@m:P^f() <-\n\
             @m:R^fb(c) <- @m:P^f()\n\
             @a:P^f(X) <- @m:P^f(), @a:R^fb(X,c)\n\
             @a:R^fb(X,Y) <- @m:R^fb(Y), E(X,Y)\n\
             @m:R^bb(Z,Y) <- @m:R^fb(Y), E(X,Z)\n\
             @a:R^fb(X,Y) <- @m:R^fb(Y), E(X,Z), @a:R^bb(Z,Y)\n\
             @a:R^bb(X,Y) <- @m:R^bb(X,Y), E(X,Y)\n\
             @m:R^bb(Z,Y) <- @m:R^bb(X,Y), E(X,Z)\n\
             @a:R^bb(X,Y) <- @m:R^bb(X,Y), E(X,Z), @a:R^bb(Z,Y)\n"
        );
        assert_eq!(answers(&m.program), answers(&parse(src)));
        assert_eq!(answers(&m.program).len(), 2);
    }

    #[test]
    fn bb_query_asks_about_one_tuple() {
        let src = format!("{}\nE(a,b).\nE(b,c).", EXAMPLE_1.replace("R(a,Y)", "R(a,c)"));
        let m = magic(&src);
        assert_eq!(adornments(&m), ["R^bb", "R^bf"]);
        assert_eq!(
            m.display_rules(),
            "@m:R^bb(a,c) <-\n\
             @a:R^bb(X,Y) <- @m:R^bb(X,Y), E(X,Y)\n\
             @m:R^bf(X) <- @m:R^bb(X,Z)\n\
             @m:R^bb(Y,Z) <- @m:R^bb(X,Z), @a:R^bf(X,Y)\n\
             @a:R^bb(X,Z) <- @m:R^bb(X,Z), @a:R^bf(X,Y), @a:R^bb(Y,Z)\n\
             @a:R^bf(X,Y) <- @m:R^bf(X), E(X,Y)\n\
             @m:R^bf(Y) <- @m:R^bf(X), @a:R^bf(X,Y)\n\
             @a:R^bf(X,Z) <- @m:R^bf(X), @a:R^bf(X,Y), @a:R^bf(Y,Z)\n"
        );
        assert_eq!(dropped_text(&m), ["@m:R^bf(X) <- @m:R^bf(X)"]);
        assert_eq!(answers(&m.program).len(), 1);
    }

    #[test]
    fn spans_point_at_the_source() {
        let src = "R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), R(Y,Z)\n?- R(a,Y).";
        let program = parse(src);
        let m = magic(src);
        let text = |span: ir::Span| &src[span.range()];
        let seed = &m.program.rules[0];
        assert_eq!(text(seed.span), "R(a,Y)");
        let demand = &m.program.rules[2];
        assert_eq!(text(demand.span), text(program.rules[1].span));
        assert_eq!(text(demand.head.span), "R(Y,Z)");
        let main = &m.program.rules[3];
        assert_eq!(text(main.body[0].span), "R(X,Z)");
        assert_eq!(text(main.body[2].span), "R(Y,Z)");
    }

    #[test]
    fn source_predicate_ids_and_facts_are_kept() {
        let src = format!("{EXAMPLE_1}\nE(a,b).");
        let program = parse(&src);
        let m = magic(&src);
        for id in program.pred_ids() {
            assert_eq!(m.program.pred(id).name, program.pred(id).name);
        }
        assert_eq!(m.program.facts, program.facts);
        assert!(m.program.rules.iter().all(|r| r.origin != Origin::Source));
    }

    #[test]
    fn query_on_a_predicate_without_rules_gives_only_the_seed() {
        let program = parse("R(X) <- E(X)\n?- E(a).");
        let query = program.query.clone().unwrap();
        let m = rewrite(&program, &query);
        assert_eq!(m.display_rules(), "@m:E^b(a) <-\n");
        assert!(answers(&m.program).is_empty());
    }

    /// Swapping and rotating four arguments reaches every adornment with two bound
    /// positions: six adorned predicates.
    const PERMUTATIONS: &str =
        "P(A,B,C,D) <- E(A,B,C,D)\nP(A,B,C,D) <- P(B,A,C,D)\nP(A,B,C,D) <- P(B,C,D,A)\n?- P(a,b,Z,W).";

    #[test]
    fn the_adornment_limit_stops_the_rewrite_at_the_call_that_passes_it() {
        let program = parse(PERMUTATIONS);
        let query = program.query.clone().unwrap();
        let full = rewrite(&program, &query);
        assert_eq!(full.adorned.len(), 6);
        assert_eq!(rewrite_limited(&program, &query, 6).unwrap().display_rules(), full.display_rules());

        let limit = rewrite_limited(&program, &query, 3).unwrap_err();
        let p = program.lookup_source("P").unwrap();
        assert_eq!((limit.limit, limit.pred, limit.pred_adornments), (3, p, 4));
        // The fourth adornment in discovery order, found at the call that makes it.
        assert_eq!(limit.adornment, full.adorned[3].1);
        assert_eq!(&PERMUTATIONS[limit.span.range()], "P(B,C,D,A)");
        assert_eq!(&PERMUTATIONS[limit.query_span.range()], "P(a,b,Z,W)");

        let d = limit.to_diagnostic(&program);
        assert_eq!(d.code, diag::Code::ADORNMENT_LIMIT);
        assert!(d.message.contains("more than 3 adorned predicates"), "{}", d.message);
        assert!(d.labels[0].message.contains("P^ffbb"), "{:?}", d.labels);
        assert!(d.help.as_deref().unwrap().contains("--max-adornments"));

        // Even the query's own adornment counts.
        let limit = rewrite_limited(&program, &query, 0).unwrap_err();
        assert_eq!((limit.pred_adornments, limit.span), (1, limit.query_span));
    }

    fn subsumed(src: &str) -> MagicProgram {
        let program = parse(src);
        let query = program.query.clone().unwrap();
        let m = rewrite_with(&program, &query, RewriteOptions { max_adornments: usize::MAX, subsume: true }).unwrap();
        let errors = ir::validate(&m.program);
        assert!(errors.is_empty(), "output does not validate: {errors:?}\n{}", m.display_rules());
        assert!(m.subsumed);
        m
    }

    const POINTS_TO: &str = "P(V,O) <- A(V,O)\nP(V,O) <- S(V,W), P(W,O)\nP(V,O) <- L(V,W), P(W,X), P(X,O)\n\
                             P(X,O) <- T(V,W), P(V,X), P(W,O)\n?- P(p,O).\n\
                             A(p,a).\nA(q,b).\nA(r,c).\nA(s,p).\nS(t,p).\nS(p,q).\nT(s,r).\nL(u,s).";

    #[test]
    fn subsumption_serves_bb_calls_by_bf_and_drops_the_bb_copy() {
        assert_eq!(adornments(&magic(POINTS_TO)), ["P^bf", "P^bb"]);
        let m = subsumed(POINTS_TO);
        assert_eq!(adornments(&m), ["P^bf"]);
        // `P(V,X)` with both bound reads `@a:P^bf` and demands only its first column.
        assert_eq!(
            m.display_rules(),
            "@m:P^bf(p) <-\n\
             @a:P^bf(V,O) <- @m:P^bf(V), A(V,O)\n\
             @m:P^bf(W) <- @m:P^bf(V), S(V,W)\n\
             @a:P^bf(V,O) <- @m:P^bf(V), S(V,W), @a:P^bf(W,O)\n\
             @m:P^bf(W) <- @m:P^bf(V), L(V,W)\n\
             @m:P^bf(X) <- @m:P^bf(V), L(V,W), @a:P^bf(W,X)\n\
             @a:P^bf(V,O) <- @m:P^bf(V), L(V,W), @a:P^bf(W,X), @a:P^bf(X,O)\n\
             @m:P^bf(V) <- @m:P^bf(X), T(V,W)\n\
             @m:P^bf(W) <- @m:P^bf(X), T(V,W), @a:P^bf(V,X)\n\
             @a:P^bf(X,O) <- @m:P^bf(X), T(V,W), @a:P^bf(V,X), @a:P^bf(W,O)\n"
        );
        let call = &m.rules[9].calls[0];
        assert_eq!(call.adornment.to_string(), "bf");
        assert_eq!(m.graph.graph.node_count(), 1);
        assert_eq!(answers(&m.program), answers(&parse(POINTS_TO)));
    }

    #[test]
    fn subsumption_serves_every_call_of_an_all_free_predicate_by_its_ff_copy() {
        // The all-free query reaches `R^ff`; its recursive call `R(Y,Z)` is `R^bf`.
        let src = "R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), R(Y,Z)\n?- R(X,Y).\nE(a,b).\nE(b,c).\nE(c,a).\nE(d,e).";
        assert_eq!(adornments(&magic(src)), ["R^ff", "R^bf"]);
        let m = subsumed(src);
        assert_eq!(adornments(&m), ["R^ff"]);
        assert!(m.narrows_nothing() && !magic(src).narrows_nothing());
        assert_eq!(
            m.display_rules(),
            "@m:R^ff() <-\n\
             @a:R^ff(X,Y) <- @m:R^ff(), E(X,Y)\n\
             @a:R^ff(X,Z) <- @m:R^ff(), @a:R^ff(X,Y), @a:R^ff(Y,Z)\n"
        );
        // A demand rule whose head is its own guard adds nothing either, and is dropped.
        assert_eq!(dropped_text(&m), ["@m:R^ff() <- @m:R^ff()", "@m:R^ff() <- @m:R^ff(), @a:R^ff(X,Y)"]);
        assert_eq!(answers(&m.program), answers(&parse(src)));
    }

    #[test]
    fn subsumption_maps_the_query_and_keeps_incomparable_adornments() {
        // A bound query whose predicate is also called all-free is served by `R^ff`; the
        // answers are still only the query's, selected by its constant.
        let src = "R(X,Y) <- E(X,Y)\nR(X,Y) <- E(X,Z), C(Y)\nC(Y) <- R(W,Y)\n?- R(a,Y).\nE(a,b).\nE(b,c).\nE(c,d).";
        assert_eq!(adornments(&magic(src)), ["R^bf", "C^f", "R^ff"]);
        let m = subsumed(src);
        assert_eq!(adornments(&m), ["R^ff", "C^f"]);
        assert_eq!(m.program.pred_name(m.answer_pred), "@a:R^ff");
        assert_eq!(m.program.display_atom(&m.program.query.as_ref().unwrap().atom).to_string(), "@a:R^ff(a,Y)");
        assert_eq!(m.display_rules().lines().next(), Some("@m:R^ff() <-"));
        assert_eq!(answers(&m.program), answers(&parse(src)));
        assert_eq!(answers(&m.program).len(), 3);
        // Two adornments of which neither serves the other both stay.
        let m = subsumed(&parse_text_two_adornments());
        assert_eq!(adornments(&m), ["Both^bf", "Link^bf", "Link^fb"]);
        assert_eq!(m.display_rules(), magic(&parse_text_two_adornments()).display_rules());
    }

    fn parse_text_two_adornments() -> String {
        "Both(X,Y) <- Link(X,Y), Link(Z,Y), Mark(Z)\nLink(X,Y) <- E(X,Y)\nLink(X,Y) <- E(Y,X)\n?- Both(a,Y).\nE(a,b).\nE(c,b).\nMark(c).".to_string()
    }

    /// A random program over IDB predicates `P0..P2` and EDB predicates `E0, E1`, written
    /// as text: every rule is safe because head variables are drawn from its body.
    fn program_text() -> impl Strategy<Value = String> {
        let arities = prop::collection::vec(0usize..=3, 5);
        arities.prop_flat_map(|arities| {
            let names = ["P0", "P1", "P2", "E0", "E1"];
            let term = prop_oneof![3 => prop::sample::select(vec!["X", "Y", "Z", "W"]), 1 => prop::sample::select(vec!["a", "b"])];
            let atom = (0usize..5, prop::collection::vec(term.clone(), 3));
            let rule = (0usize..3, prop::collection::vec(atom, 0..=3), prop::collection::vec(0usize..8, 3));
            let rules = prop::collection::vec(rule, 1..=6);
            let facts = prop::collection::vec((3usize..5, prop::collection::vec(prop::sample::select(vec!["a", "b", "c"]), 3)), 0..=8);
            let query = (0usize..3, prop::collection::vec(prop::option::of(prop::sample::select(vec!["a", "b"])), 3));
            (Just(arities), rules, facts, query).prop_map(move |(arities, rules, facts, query)| {
                let atom_text = |pred: usize, args: &[&str]| format!("{}({})", names[pred], args[..arities[pred]].join(","));
                let mut out = String::new();
                for (head, body, picks) in rules {
                    let body: Vec<(usize, Vec<&str>)> = body.into_iter().map(|(p, a)| (p, a[..arities[p]].to_vec())).collect();
                    let mut vars: Vec<&str> = Vec::new();
                    for (_, args) in &body {
                        vars.extend(args.iter().filter(|t| t.starts_with(char::is_uppercase)));
                    }
                    let head_args: Vec<&str> = picks
                        .iter()
                        .map(|&k| if vars.is_empty() || k >= vars.len() * 2 { ["a", "b"][k % 2] } else { vars[k % vars.len()] })
                        .collect();
                    let body: Vec<String> = body.iter().map(|(p, a)| atom_text(*p, a)).collect();
                    out.push_str(&format!("{} <- {}\n", atom_text(head, &head_args), body.join(", ")));
                }
                for (pred, values) in facts {
                    out.push_str(&format!("{}.\n", atom_text(pred, &values)));
                }
                let (pred, binding) = query;
                let vars = ["X", "Y", "Z"];
                let args: Vec<&str> = binding.iter().zip(vars).map(|(c, v)| c.unwrap_or(v)).collect();
                out.push_str(&format!("?- {}.\n", atom_text(pred, &args)));
                out
            })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn rewrite_is_safe_bounded_and_answers_agree(src in program_text()) {
            let program = parse(&src);
            // Generated programs may query a predicate no rule defines, or use an EDB name
            // as a head; only valid ones are meaningful inputs.
            prop_assume!(ir::validate(&program).is_empty());
            let query = program.query.clone().unwrap();
            let m = rewrite(&program, &query);
            let errors = ir::validate(&m.program);
            prop_assert!(errors.is_empty(), "{errors:?}\n{src}\n{}", m.display_rules());
            prop_assert_eq!(m.rules.len(), m.program.rules.len());
            let distinct: HashSet<_> = m.adorned.iter().collect();
            prop_assert_eq!(distinct.len(), m.adorned.len(), "each adorned predicate is expanded once");
            prop_assert_eq!(m.graph.graph.node_count(), m.adorned.len());
            prop_assert_eq!(m.answer_preds()[0], m.answer_pred);
            prop_assert_eq!(m.demand_preds()[0], m.demand_pred);
            for (pred, _) in &m.adorned {
                let count = m.adorned.iter().filter(|(p, _)| p == pred).count();
                prop_assert!(count <= 1 << program.pred(*pred).arity);
            }
            // The bound `rewrite_limited` promises: the adorned predicates bound the rules.
            let expansion = |pred: PredId| -> usize {
                program.rules_for(pred).map(|(_, r)| 1 + r.body.iter().filter(|a| program.pred(a.pred).kind == PredKind::Idb).count()).sum()
            };
            let widest = program.pred_ids().map(expansion).max().unwrap_or(0);
            prop_assert!(m.program.rules.len() <= 1 + m.adorned.len() * widest);
            // A limit below the count stops the rewrite; one at the count does not.
            prop_assert!(rewrite_limited(&program, &query, m.adorned.len()).is_ok());
            prop_assert!(rewrite_limited(&program, &query, m.adorned.len() - 1).is_err());
            for (rule, trace) in m.program.rules.iter().zip(&m.rules) {
                let head_name = &m.program.pred(rule.head.pred).name;
                match trace.kind {
                    RuleKind::Seed => prop_assert!(rule.body.is_empty()),
                    RuleKind::Demand => {
                        prop_assert!(matches!(head_name, PredName::Demand(..)));
                        prop_assert_eq!(&rule.body, &trace.calls[0].prefix);
                    }
                    RuleKind::Main => {
                        prop_assert!(matches!(head_name, PredName::Answer(..)));
                        let answer_atoms: Vec<&Atom> = rule.body.iter()
                            .filter(|a| matches!(m.program.pred(a.pred).name, PredName::Answer(..)))
                            .collect();
                        let call_atoms: Vec<&Atom> = trace.calls.iter().map(|c| &c.atom).collect();
                        prop_assert_eq!(answer_atoms, call_atoms);
                        for call in &trace.calls {
                            match call.demand_rule {
                                Some(id) => prop_assert_eq!(&m.program.rule(id).body, &call.prefix),
                                None => prop_assert!(m.dropped.iter().any(|d| d.body == call.prefix)),
                            }
                        }
                    }
                    // These random programs are positive, so nothing is copied unrewritten.
                    RuleKind::Unrewritten => prop_assert!(false, "an unrewritten copy in a positive program"),
                }
                if trace.kind != RuleKind::Seed {
                    // Every non-seed rule starts with the guard of its head's demand.
                    prop_assert!(matches!(m.program.pred(rule.body[0].pred).name, PredName::Demand(..)));
                }
            }
            prop_assert_eq!(answers(&m.program), answers(&program), "{}\n{}", src, m.display_rules());

            // Subsumption: a valid program with the same answers, over a subset of the
            // plain rewrite's adornments of which none serves another.
            let options = RewriteOptions { max_adornments: m.adorned.len(), subsume: true };
            let s = rewrite_with(&program, &query, options).unwrap();
            let errors = ir::validate(&s.program);
            prop_assert!(errors.is_empty(), "{errors:?}\n{src}\n{}", s.display_rules());
            prop_assert!(s.adorned.len() <= m.adorned.len());
            for (pred, adornment) in &s.adorned {
                prop_assert!(m.adorned.contains(&(*pred, adornment.clone())));
                let table = crate::subsume::Subsumption::new(&m.adorned);
                prop_assert_eq!(&table.serve(*pred, adornment), adornment);
            }
            prop_assert_eq!(answers(&s.program), answers(&program), "{}\n{}", src, s.display_rules());
        }
    }
}
