//! Strata: the strongly connected components of the dependency graph of derived
//! predicates, in an order where every component comes after those it reads.

use ir::{PredId, Program, RuleId};
use petgraph::graph::{DiGraph, NodeIndex};

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
    let mut graph: DiGraph<PredId, ()> = DiGraph::new();
    let mut node_of: Vec<Option<NodeIndex>> = vec![None; program.preds.len()];
    for rule in &program.rules {
        let head = rule.head.pred.index();
        if node_of[head].is_none() {
            node_of[head] = Some(graph.add_node(rule.head.pred));
        }
    }
    for rule in &program.rules {
        let Some(head) = node_of[rule.head.pred.index()] else { continue };
        for atom in &rule.body {
            if let Some(body) = node_of[atom.pred.index()] {
                graph.update_edge(body, head, ());
            }
        }
    }
    // Kosaraju yields components in reverse topological order of the edges body -> head,
    // that is dependents first; reversing gives dependencies first. Unlike petgraph's
    // Tarjan, which recurses once per node on a path and overflowed the stack on the
    // tens of thousands of adorned predicates of a large magic program, it keeps its
    // depth-first search on an explicit stack.
    let mut components = petgraph::algo::kosaraju_scc(&graph);
    components.reverse();
    components
        .into_iter()
        .map(|nodes| {
            let mut preds: Vec<PredId> = nodes.iter().map(|&n| graph[n]).collect();
            preds.sort();
            let rules: Vec<RuleId> =
                program.rule_ids().filter(|&id| preds.contains(&program.rule(id).head.pred)).collect();
            let recursive = rules.iter().any(|&id| program.rule(id).body.iter().any(|a| preds.contains(&a.pred)));
            Stratum { preds, rules, recursive }
        })
        .collect()
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
}
