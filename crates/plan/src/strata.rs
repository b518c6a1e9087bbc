//! Strata: the strongly connected components of the dependency graph of derived
//! predicates, in an order where every component comes after those it reads.

use ir::{PredId, Program, RuleId};
use rustc_hash::FxHashSet;

/// One strongly connected component of derived predicates and the rules defining them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stratum {
    /// The predicates of the component, by id.
    pub preds: Vec<PredId>,
    /// The rules whose head is in the component, in program order.
    pub rules: Vec<RuleId>,
    /// Whether some rule of the component reads a predicate of the component, so that
    /// evaluation must iterate to a fixpoint.
    pub recursive: bool,
}

/// Computes the strata, dependencies first. Predicates that head no rule (EDB) are inputs
/// and belong to no stratum.
pub fn strata(program: &Program) -> Vec<Stratum> {
    // Nodes are the derived predicates in order of their first rule; the edges body ->
    // head are kept once each, in order of first occurrence.
    let mut node_of: Vec<Option<usize>> = vec![None; program.preds.len()];
    let mut preds: Vec<PredId> = Vec::new();
    for rule in &program.rules {
        let head = rule.head.pred.index();
        if node_of[head].is_none() {
            node_of[head] = Some(preds.len());
            preds.push(rule.head.pred);
        }
    }
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); preds.len()];
    let mut seen: FxHashSet<(usize, usize)> = FxHashSet::default();
    for rule in &program.rules {
        let Some(head) = node_of[rule.head.pred.index()] else { continue };
        // A negated atom is a dependency too: its relation must be complete before
        // the rule reads it, so it lies in a stratum strictly below (validation
        // rejects a cycle through negation).
        for atom in rule.body.iter().chain(&rule.negated) {
            if let Some(body) = node_of[atom.pred.index()] {
                if seen.insert((body, head)) {
                    successors[body].push(head);
                }
            }
        }
    }
    // A dominance rule's body is read when the rule is applied, after each round of
    // the stratum of the relation it removes facts of: a dependency of that relation.
    for dominance in &program.dominances {
        let Some(head) = node_of[dominance.pred().index()] else { continue };
        for pred in dominance.reads() {
            if let Some(body) = node_of[pred.index()] {
                if seen.insert((body, head)) {
                    successors[body].push(head);
                }
            }
        }
    }
    // Tarjan yields components in reverse topological order of the edges body -> head,
    // that is dependents first; reversing gives dependencies first.
    let mut components = ir::strongly_connected(&successors);
    components.reverse();
    let components: Vec<Vec<PredId>> =
        components.into_iter().map(|nodes| nodes.into_iter().map(|n| preds[n]).collect()).collect();
    let mut component_of: Vec<Option<usize>> = vec![None; program.preds.len()];
    for (c, nodes) in components.iter().enumerate() {
        for &p in nodes {
            component_of[p.index()] = Some(c);
        }
    }
    let mut strata: Vec<Stratum> = components
        .into_iter()
        .map(|mut preds| {
            preds.sort();
            Stratum { preds, rules: Vec::new(), recursive: false }
        })
        .collect();
    for id in program.rule_ids() {
        let rule = program.rule(id);
        let Some(c) = component_of[rule.head.pred.index()] else { continue };
        strata[c].rules.push(id);
        strata[c].recursive |= rule.body.iter().any(|a| component_of[a.pred.index()] == Some(c));
    }
    strata
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::program;

    #[test]
    fn strata_come_after_their_dependencies() {
        let p = program(
            "Top(X) <- A(X), B(X)
             A(X) <- B(X)
             A(X) <- A(X), E(X)
             B(X) <- C(X)
             C(X) <- B(X)
             C(X) <- E(X)",
        );
        let s = strata(&p);
        let names: Vec<Vec<String>> = s.iter().map(|st| st.preds.iter().map(|&id| p.pred_name(id)).collect()).collect();
        assert_eq!(names, vec![vec!["B", "C"], vec!["A"], vec!["Top"]]);
        assert_eq!(s.iter().map(|st| st.recursive).collect::<Vec<_>>(), vec![true, true, false]);
        assert_eq!(s[0].rules, vec![RuleId(3), RuleId(4), RuleId(5)]);
    }

    /// A chain of predicates as long as a large magic program has adorned ones: a
    /// recursive strongly-connected-components search would overflow the stack.
    #[test]
    fn a_long_chain_of_predicates_needs_no_deep_stack() {
        let n = 10_000;
        let mut src = String::from("P0(X) <- E(X)\n");
        for i in 1..n {
            src += &format!("P{i}(X) <- P{}(X)\n", i - 1);
        }
        let p = program(&src);
        let s = strata(&p);
        assert_eq!(s.len(), n);
        assert_eq!(p.pred_name(s[0].preds[0]), "P0");
        assert_eq!(p.pred_name(s[n - 1].preds[0]), format!("P{}", n - 1));
    }
}
