//! The adorned call graph: which adorned predicate calls which, from which source rule
//! and body position, with text, Graphviz DOT and JSON printers.

use crate::names::adorned_label;
use ir::{Adornment, PredId, Program, RuleId};
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use std::collections::HashMap;
use std::fmt::Write;

/// One call: the body atom at `position` of source rule `source_rule`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CallEdge {
    pub source_rule: RuleId,
    pub position: usize,
}

/// Nodes are the adorned IDB predicates reachable from the query, in discovery order
/// (node index `i` is `MagicProgram::adorned[i]`); there is one edge per call, so a rule
/// calling the same adorned predicate twice gives two parallel edges.
#[derive(Clone, Debug, Default)]
pub struct CallGraph {
    pub graph: DiGraph<(PredId, Adornment), CallEdge>,
    /// The node of the query's adorned predicate.
    pub query: Option<NodeIndex>,
    index: HashMap<(PredId, Adornment), NodeIndex>,
}

impl CallGraph {
    /// The node of `pred` called with `adornment`, if it is reachable.
    pub fn node(&self, pred: PredId, adornment: &Adornment) -> Option<NodeIndex> {
        self.index.get(&(pred, adornment.clone())).copied()
    }

    pub(crate) fn add_node(&mut self, pred: PredId, adornment: Adornment) -> NodeIndex {
        let node = self.graph.add_node((pred, adornment.clone()));
        self.index.insert((pred, adornment), node);
        node
    }

    pub(crate) fn label(&self, program: &Program, node: NodeIndex) -> String {
        let (pred, adornment) = &self.graph[node];
        adorned_label(program, *pred, adornment)
    }

    /// The stable text form:
    /// ```text
    /// nodes:
    ///   R^bf  (query)
    /// edges:
    ///   R^bf -> R^bf  [r1 #0]
    /// ```
    /// Edges are listed in the order the rewrite found the calls.
    pub fn display(&self, program: &Program) -> String {
        let mut out = String::from("nodes:\n");
        for node in self.graph.node_indices() {
            let marker = if Some(node) == self.query { "  (query)" } else { "" };
            let _ = writeln!(out, "  {}{marker}", self.label(program, node));
        }
        out.push_str("edges:\n");
        for edge in self.graph.edge_references() {
            let call = edge.weight();
            let _ = writeln!(
                out,
                "  {} -> {}  [r{} #{}]",
                self.label(program, edge.source()),
                self.label(program, edge.target()),
                call.source_rule.0,
                call.position
            );
        }
        out
    }

    /// Graphviz DOT: `digraph adorned { ... }`, the query node drawn doubled.
    pub fn to_dot(&self, program: &Program) -> String {
        let mut out = String::from("digraph adorned {\n");
        for node in self.graph.node_indices() {
            let shape = if Some(node) == self.query { "doublecircle" } else { "ellipse" };
            let _ = writeln!(
                out,
                "  n{} [label=\"{}\", shape={shape}];",
                node.index(),
                dot_escape(&self.label(program, node))
            );
        }
        for edge in self.graph.edge_references() {
            let call = edge.weight();
            let _ = writeln!(
                out,
                "  n{} -> n{} [label=\"r{} #{}\"];",
                edge.source().index(),
                edge.target().index(),
                call.source_rule.0,
                call.position
            );
        }
        out.push_str("}\n");
        out
    }
}

/// Escapes a label for a double-quoted DOT string.
fn dot_escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_labels_are_escaped() {
        assert_eq!(dot_escape(r#"a"b\c"#), r#"a\"b\\c"#);
    }
}
