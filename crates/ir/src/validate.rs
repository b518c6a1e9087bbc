//! Structural checks every program must pass, source or generated: safety, arities,
//! EDB/IDB separation and a well-formed query. The magic pass runs its output through
//! the same checks.

use crate::{DisplayPred, PredId, PredKind, Program, RuleId, Span, Symbol, TermKind};
use diag::{Code, Diagnostic};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IrError {
    /// A head variable that no body atom binds.
    UnsafeRule { rule: RuleId, var: Symbol, span: Span },
    /// An atom, fact or query whose argument count differs from the predicate's arity.
    ArityMismatch { pred: PredId, found: usize, span: Span },
    /// A predicate with input facts that also heads a rule.
    EdbHeadsRule { pred: PredId, fact: Span, head: Span },
    /// The query names a predicate that no rule defines.
    QueryOnEdb { pred: PredId, span: Span },
    /// A variable of a comparison, an assignment or a computed argument (a head
    /// expression included) that no positive atom or assignment binds.
    UnboundInComparison { rule: RuleId, var: Symbol, span: Span },
    /// Rule `rule` reads `negated` negatively, and `negated` depends on the rule's head:
    /// `cycle` holds, from the negated predicate on, each rule through which one
    /// predicate of the cycle reads the next, ending at a rule of `negated`.
    NegationCycle { rule: RuleId, negated: Span, cycle: Vec<RuleId> },
    /// The `dominance`-th dominance rule negates, at `negated`, a relation that depends
    /// on the relation the rule removes facts of (or is that relation).
    DominanceNegationCycle { dominance: usize, negated: Span },
}

impl IrError {
    pub fn to_diagnostic(&self, program: &Program) -> Diagnostic {
        match *self {
            IrError::UnsafeRule { rule, var, span } => {
                let name = program.symbols.text(var);
                Diagnostic::error(Code::UNSAFE_RULE, format!("variable `{name}` in the head is not bound by the body"))
                    .with_primary(span, format!("`{name}` occurs only in the head"))
                    .with_secondary(program.rule(rule).span, "in this rule")
            }
            IrError::ArityMismatch { pred, found, span } => {
                let p = program.pred(pred);
                Diagnostic::error(
                    Code::ARITY_MISMATCH,
                    format!(
                        "`{}` is used with {found} argument(s) but has arity {}",
                        DisplayPred(program, pred),
                        p.arity
                    ),
                )
                .with_primary(span, format!("{found} argument(s) here"))
                .with_secondary(p.span, format!("first used with {} argument(s) here", p.arity))
            }
            IrError::EdbHeadsRule { pred, fact, head } => {
                let name = DisplayPred(program, pred);
                let d =
                    Diagnostic::error(Code::EDB_HEADS_RULE, format!("`{name}` has input facts and also heads a rule"))
                        .with_primary(fact, "input fact here")
                        .with_secondary(head, "rule head here");
                // An inline fact of a derived predicate is usually meant as an empty-body rule.
                match program.facts.iter().find(|f| f.span == fact) {
                    Some(f) => {
                        let rule = format!("{name}{} <-", program.display_tuple(f.pred, &f.values));
                        d.with_help(format!(
                            "a derived predicate's fact is a rule with an empty body: write `{rule}`; if they are \
                             different relations, rename one"
                        ))
                    }
                    None => d,
                }
            }
            IrError::UnboundInComparison { rule, var, span } => {
                let name = program.symbols.text(var);
                Diagnostic::error(Code::UNBOUND_IN_CONSTRAINT, format!("variable `{name}` is not bound by the body"))
                    .with_primary(span, format!("`{name}` is bound by no positive atom or assignment"))
                    .with_secondary(program.rule(rule).span, "in this rule")
            }
            IrError::NegationCycle { rule, negated, ref cycle } => {
                let head = program.rule(rule).head.pred;
                let mut d = Diagnostic::error(
                    Code::NEGATION_CYCLE,
                    format!("`{}` depends negatively on itself", DisplayPred(program, head)),
                )
                .with_primary(negated, "negated here");
                for &link in cycle {
                    let r = program.rule(link);
                    d = d.with_secondary(
                        r.span,
                        format!("`{}` is derived by this rule", DisplayPred(program, r.head.pred)),
                    );
                }
                let path: Vec<String> = std::iter::once(head)
                    .chain(cycle.iter().map(|&r| program.rule(r).head.pred))
                    .chain(std::iter::once(head))
                    .map(|p| format!("`{}`", DisplayPred(program, p)))
                    .collect();
                d.with_note(format!(
                    "the cycle, each predicate reading the next: {} (the first through the negation)",
                    path.join(" <- ")
                ))
            }
            IrError::DominanceNegationCycle { dominance, negated } => {
                let dominance = &program.dominances[dominance];
                let name = DisplayPred(program, dominance.pred());
                Diagnostic::error(
                    Code::NEGATION_CYCLE,
                    format!("a subsumptive clause of `{name}` negates a relation that depends on `{name}`"),
                )
                .with_primary(negated, "negated here")
                .with_secondary(dominance.span, format!("removes facts of `{name}`"))
                .with_note(format!(
                    "the negated relation must be complete before the facts of `{name}` are compared, so it lies in a \
                     stratum below `{name}`"
                ))
            }
            IrError::QueryOnEdb { pred, span } => {
                let name = DisplayPred(program, pred);
                Diagnostic::error(Code::QUERY_EDB, format!("the query names `{name}`, which no rule defines"))
                    .with_primary(span, "input predicate queried here")
            }
        }
    }
}

/// Checks the whole program and returns every problem found (not only the first).
pub fn validate(program: &Program) -> Vec<IrError> {
    let mut errors = Vec::new();
    let check_arity = |pred: PredId, found: usize, span: Span, errors: &mut Vec<IrError>| {
        if program.pred(pred).arity != found {
            errors.push(IrError::ArityMismatch { pred, found, span });
        }
    };
    for id in program.rule_ids() {
        let rule = program.rule(id);
        check_arity(rule.head.pred, rule.head.args.len(), rule.head.span, &mut errors);
        for atom in rule.body.iter().chain(&rule.negated) {
            check_arity(atom.pred, atom.args.len(), atom.span, &mut errors);
        }
        let bound: rustc_hash::FxHashSet<Symbol> = rule.bound_vars().into_iter().collect();
        let mut reported = Vec::new();
        // A head variable that an assignment with an unbound operand would bind (the
        // flattened `p(N + 1)`) is reported at that operand, not again in the head.
        let mut hidden: Vec<Symbol> = Vec::new();
        for c in &rule.comparisons {
            // The lone variable an assignment from an expression with an unbound variable
            // would bind is not reported: the expression's variable is.
            let mut target = None;
            if c.op == crate::CmpOp::Eq {
                for (lone, other) in [(&c.left, &c.right), (&c.right, &c.left)] {
                    if other.is_arithmetic() && other.vars().any(|v| !bound.contains(&v)) {
                        target = target.or(lone.var());
                    }
                }
            }
            hidden.extend(target);
            let leaves = c.left.leaves().chain(c.right.leaves());
            for term in leaves.filter(|t| t.var().is_none_or(|v| Some(v) != target)) {
                if let TermKind::Var(v) = term.kind {
                    if !bound.contains(&v) && !reported.contains(&v) {
                        reported.push(v);
                        errors.push(IrError::UnboundInComparison { rule: id, var: v, span: term.span });
                    }
                }
            }
        }
        for term in rule.generators.iter().flat_map(crate::Generator::leaves) {
            if let TermKind::Var(v) = term.kind {
                if !bound.contains(&v) && !reported.contains(&v) {
                    reported.push(v);
                    errors.push(IrError::UnboundInComparison { rule: id, var: v, span: term.span });
                }
            }
        }
        let mut reported = Vec::new();
        for term in &rule.head.args {
            if let TermKind::Var(v) = term.kind {
                if !bound.contains(&v) && !reported.contains(&v) && !hidden.contains(&v) {
                    reported.push(v);
                    errors.push(IrError::UnsafeRule { rule: id, var: v, span: term.span });
                }
            }
        }
    }
    for dominance in &program.dominances {
        let atoms = [&dominance.dominated, &dominance.dominating].into_iter().chain(&dominance.body);
        for atom in atoms.chain(&dominance.negated) {
            check_arity(atom.pred, atom.args.len(), atom.span, &mut errors);
        }
    }
    for fact in &program.facts {
        check_arity(fact.pred, fact.values.len(), fact.span, &mut errors);
        if program.pred(fact.pred).kind == PredKind::Idb {
            if let Some((_, rule)) = program.rules_for(fact.pred).next() {
                if !errors.iter().any(|e| matches!(e, IrError::EdbHeadsRule { pred, .. } if *pred == fact.pred)) {
                    errors.push(IrError::EdbHeadsRule { pred: fact.pred, fact: fact.span, head: rule.head.span });
                }
            }
        }
    }
    errors.extend(negation_cycles(program));
    errors.extend(dominance_negation_cycles(program));
    if let Some(q) = &program.query {
        check_arity(q.atom.pred, q.atom.args.len(), q.atom.span, &mut errors);
        if program.pred(q.atom.pred).kind == PredKind::Edb {
            errors.push(IrError::QueryOnEdb { pred: q.atom.pred, span: q.atom.span });
        }
    }
    errors
}

/// A negated atom of a dominance rule whose relation depends on the relation the rule
/// removes facts of, through rules or the bodies of dominance rules: what it reads
/// changes as the facts it judges do.
fn dominance_negation_cycles(program: &Program) -> Vec<IrError> {
    if program.dominances.iter().all(|d| d.negated.is_empty()) {
        return Vec::new();
    }
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); program.preds.len()];
    for rule in &program.rules {
        for atom in rule.body.iter().chain(&rule.negated) {
            successors[atom.pred.index()].push(rule.head.pred.index());
        }
    }
    for dominance in &program.dominances {
        for pred in dominance.reads() {
            successors[pred.index()].push(dominance.pred().index());
        }
    }
    let mut component = vec![0; program.preds.len()];
    for (c, nodes) in crate::strongly_connected(&successors).into_iter().enumerate() {
        for v in nodes {
            component[v] = c;
        }
    }
    let mut errors = Vec::new();
    for (index, dominance) in program.dominances.iter().enumerate() {
        for atom in &dominance.negated {
            if component[atom.pred.index()] == component[dominance.pred().index()] {
                errors.push(IrError::DominanceNegationCycle { dominance: index, negated: atom.span });
            }
        }
    }
    errors
}

/// One error per strongly connected component of the predicate graph that a negated
/// atom reads from inside: its first such atom, with the rules leading from the negated
/// predicate back to the rule's head.
fn negation_cycles(program: &Program) -> Vec<IrError> {
    if !program.negates() {
        return Vec::new();
    }
    let n = program.preds.len();
    // Edges body -> head, each with the first rule that makes it.
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut via: rustc_hash::FxHashMap<(usize, usize), RuleId> = rustc_hash::FxHashMap::default();
    for id in program.rule_ids() {
        let rule = program.rule(id);
        let head = rule.head.pred.index();
        for atom in rule.body.iter().chain(&rule.negated) {
            let from = atom.pred.index();
            if let std::collections::hash_map::Entry::Vacant(e) = via.entry((from, head)) {
                e.insert(id);
                successors[from].push(head);
            }
        }
    }
    let mut component = vec![0; n];
    for (c, nodes) in crate::strongly_connected(&successors).into_iter().enumerate() {
        for v in nodes {
            component[v] = c;
        }
    }
    let mut errors = Vec::new();
    let mut reported = rustc_hash::FxHashSet::default();
    for id in program.rule_ids() {
        let rule = program.rule(id);
        let head = rule.head.pred.index();
        for atom in &rule.negated {
            let from = atom.pred.index();
            if component[from] != component[head] || !reported.insert(component[head]) {
                continue;
            }
            // The negated predicate depends on the head: a shortest path from the head
            // to it inside the component, by a breadth-first search over edges body ->
            // head. Its rules, from the one deriving the negated predicate back to the
            // one reading the head, are the links of the cycle.
            let mut parent: rustc_hash::FxHashMap<usize, usize> = rustc_hash::FxHashMap::default();
            let mut queue = std::collections::VecDeque::from([head]);
            parent.insert(head, head);
            while let Some(v) = queue.pop_front() {
                if v == from {
                    break;
                }
                for &w in &successors[v] {
                    if component[w] == component[head] && !parent.contains_key(&w) {
                        parent.insert(w, v);
                        queue.push_back(w);
                    }
                }
            }
            let mut cycle = Vec::new();
            let mut at = from;
            while at != head {
                let before = parent[&at];
                cycle.push(via[&(before, at)]);
                at = before;
            }
            errors.push(IrError::NegationCycle { rule: id, negated: atom.span, cycle });
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Atom, Origin, PredName, Rule, Term};

    fn span(start: u32, end: u32) -> Span {
        Span { file: Default::default(), start, end }
    }

    #[test]
    fn unsafe_head_variable_is_reported_once() {
        let mut p = Program::new();
        let (x, y) = (p.symbols.intern("X"), p.symbols.intern("Y"));
        let (e_name, r_name) = (p.symbols.intern("E"), p.symbols.intern("R"));
        let e = p.declare_pred(PredName::Source(e_name), 1, PredKind::Edb, span(0, 1));
        let r = p.declare_pred(PredName::Source(r_name), 2, PredKind::Idb, span(0, 1));
        let var = |v, s| Term { kind: TermKind::Var(v), span: s };
        p.add_rule(Rule::positive(
            Atom { pred: r, args: vec![var(x, span(2, 3)), var(y, span(4, 5))], span: span(0, 6) },
            vec![Atom { pred: e, args: vec![var(x, span(10, 11))], span: span(8, 12) }],
            span(0, 12),
            Origin::Source,
        ));
        let errors = validate(&p);
        assert_eq!(errors, vec![IrError::UnsafeRule { rule: RuleId(0), var: y, span: span(4, 5) }]);
        assert_eq!(errors[0].to_diagnostic(&p).code, Code::UNSAFE_RULE);
    }
}
