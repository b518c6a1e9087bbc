//! The JSON forms of a rewrite (`--emit magic-ir --format json`, `--emit adorned
//! --format json`): serialisable views whose fields are the schema, built from a
//! [`MagicProgram`]; the binary serialises them.

use crate::{CallTrace, MagicProgram, RuleTrace};
use ir::{Origin, Program, Rule};
use petgraph::visit::EdgeRef;
use serde::Serialize;

/// The whole rewrite: the query, the answer and demand predicates, the adornments in
/// discovery order, every rule with its calls, and the dropped rules.
#[derive(Debug, Serialize)]
pub struct RewriteJson {
    pub query: QueryJson,
    pub answer_predicate: String,
    pub demand_predicate: String,
    pub adornments: Vec<String>,
    pub rules: Vec<RuleJson>,
    pub dropped: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct QueryJson {
    pub predicate: String,
    pub adornment: String,
    pub constants: Vec<String>,
    pub atom: Option<String>,
}

/// A generated rule: its kind, text, the source rule it came from, for a demand rule the
/// body position it serves, and the calls of its body.
#[derive(Debug, Serialize)]
pub struct RuleJson {
    pub kind: &'static str,
    pub text: String,
    pub source_rule: Option<u32>,
    pub position: Option<usize>,
    pub calls: Vec<CallJson>,
}

/// One call of a main rule: its adornment, the variables bound before it, and the prefix
/// its demand rule reads.
#[derive(Debug, Serialize)]
pub struct CallJson {
    pub position: usize,
    pub atom: String,
    pub adornment: String,
    pub bound_before: Vec<String>,
    pub prefix: Vec<String>,
    pub demand_rule: Option<u32>,
}

/// The adorned call graph, node ids as in its text form's order.
#[derive(Debug, Serialize)]
pub struct GraphJson {
    pub nodes: Vec<NodeJson>,
    pub edges: Vec<EdgeJson>,
}

#[derive(Debug, Serialize)]
pub struct NodeJson {
    pub id: usize,
    pub predicate: String,
    pub adornment: String,
    pub label: String,
    pub query: bool,
}

/// One call: from the caller's node to the callee's, at `position` of `source_rule`.
#[derive(Debug, Serialize)]
pub struct EdgeJson {
    pub from: usize,
    pub to: usize,
    pub source_rule: u32,
    pub position: usize,
}

impl MagicProgram {
    /// The call graph's JSON view.
    pub fn graph_json(&self) -> GraphJson {
        let (graph, program) = (&self.graph, &self.program);
        let nodes = graph
            .graph
            .node_indices()
            .map(|node| {
                let (pred, adornment) = &graph.graph[node];
                NodeJson {
                    id: node.index(),
                    predicate: program.pred_name(*pred),
                    adornment: adornment.to_string(),
                    label: graph.label(program, node),
                    query: Some(node) == graph.query,
                }
            })
            .collect();
        let edges = graph
            .graph
            .edge_references()
            .map(|edge| EdgeJson {
                from: edge.source().index(),
                to: edge.target().index(),
                source_rule: edge.weight().source_rule.0,
                position: edge.weight().position,
            })
            .collect();
        GraphJson { nodes, edges }
    }

    /// The whole rewrite's JSON view.
    pub fn to_json(&self) -> RewriteJson {
        let p = &self.program;
        let constants =
            p.query.as_ref().map(|q| q.constants().into_iter().map(|c| p.value_text(c)).collect()).unwrap_or_default();
        RewriteJson {
            query: QueryJson {
                predicate: p.pred_name(self.query_pred),
                adornment: self.query_adornment.to_string(),
                constants,
                atom: p.query.as_ref().map(|q| p.display_atom(&q.atom).to_string()),
            },
            answer_predicate: p.pred_name(self.answer_pred),
            demand_predicate: p.pred_name(self.demand_pred),
            adornments: self
                .adorned
                .iter()
                .map(|(pred, adornment)| crate::names::adorned_label(p, *pred, adornment))
                .collect(),
            rules: p.rules.iter().zip(&self.rules).map(|(rule, trace)| rule_json(p, rule, trace)).collect(),
            dropped: self.dropped.iter().map(|r| p.display_typed_rule(r).to_string()).collect(),
        }
    }
}

fn rule_json(p: &Program, rule: &Rule, trace: &RuleTrace) -> RuleJson {
    let position = match rule.origin {
        Origin::Demand { position, .. } => Some(position),
        _ => None,
    };
    RuleJson {
        kind: trace.kind.as_str(),
        text: p.display_typed_rule(rule).to_string(),
        source_rule: trace.source_rule.map(|r| r.0),
        position,
        calls: trace.calls.iter().map(|call| call_json(p, call)).collect(),
    }
}

fn call_json(p: &Program, call: &CallTrace) -> CallJson {
    CallJson {
        position: call.position,
        atom: p.display_atom(&call.atom).to_string(),
        adornment: call.adornment.to_string(),
        bound_before: call.bound_before.iter().map(|v| p.symbols.text(*v).to_string()).collect(),
        prefix: call.prefix.iter().map(|a| p.display_atom(a).to_string()).collect(),
        demand_rule: call.demand_rule.map(|r| r.0),
    }
}
