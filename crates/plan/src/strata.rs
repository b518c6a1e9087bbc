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
    // Each rule is placed by its head's component in one pass: a magic program can have
    // tens of thousands of components, and a scan of all rules per component is quadratic.
    let mut component_of = vec![usize::MAX; program.preds.len()];
    for (c, nodes) in components.iter().enumerate() {
        for &n in nodes {
            component_of[graph[n].index()] = c;
        }
    }
    let mut rules_of: Vec<Vec<RuleId>> = vec![Vec::new(); components.len()];
    for id in program.rule_ids() {
        rules_of[component_of[program.rule(id).head.pred.index()]].push(id);
    }
    components
        .into_iter()
        .zip(rules_of)
        .enumerate()
        .map(|(c, (nodes, rules))| {
            let mut preds: Vec<PredId> = nodes.iter().map(|&n| graph[n]).collect();
            preds.sort();
            let recursive =
                rules.iter().any(|&id| program.rule(id).body.iter().any(|a| component_of[a.pred.index()] == c));
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
