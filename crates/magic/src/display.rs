//! Stable text and JSON forms of a [`MagicProgram`]: the rule listing, the per-call
//! trace table, the call graph, and the JSON the binary emits.

use crate::MagicProgram;
use ir::{Atom, Origin, Program, Rule, Symbol};
use std::fmt::Write;

impl MagicProgram {
    /// The generated rules, one per line, in output order (see [`crate::rewrite()`]).
    pub fn display_rules(&self) -> String {
        let mut out = String::new();
        for rule in &self.program.rules {
            let _ = writeln!(out, "{}", self.program.display_typed_rule(rule));
        }
        let p = &self.program;
        for dominance in p.dominances.iter().filter(|d| p.rules_for(d.pred()).next().is_some()) {
            let kind = if dominance.lattice { "the lattice of a recursive `min`/`max`" } else { "subsumption" };
            let _ = writeln!(
                out,
                "{}  // {kind}: `{}` is computed whole, without demand",
                ir::DisplayDominance(p, dominance, false),
                p.display_pred(dominance.pred())
            );
        }
        out
    }

    /// The rules with their kind and source rule, then one row per call of every main
    /// rule (adornment, variables bound before it, the prefix of its demand rule and
    /// which rule that is), then the dropped demand rules.
    pub fn display_trace(&self) -> String {
        let p = &self.program;
        let mut out = String::from("rules:\n");
        for (index, rule) in p.rules.iter().enumerate() {
            let _ = writeln!(out, "  {index:>3}  {:<14}  {}", origin_text(rule), p.display_typed_rule(rule));
        }
        out.push_str("calls:\n");
        for (index, trace) in self.rules.iter().enumerate().filter(|(_, t)| t.kind == crate::RuleKind::Main) {
            for call in &trace.calls {
                let demand = match call.demand_rule {
                    Some(rule) => format!("rule {}", rule.0),
                    None => "dropped".to_string(),
                };
                let source = trace.source_rule.map_or(String::new(), |r| format!("r{}", r.0));
                let _ = writeln!(
                    out,
                    "  rule {index} ({source} #{}): {}  adornment {}  bound before {}  prefix {}  demand {demand}",
                    call.position,
                    p.display_atom(&call.atom),
                    call.adornment,
                    vars_text(p, &call.bound_before),
                    atoms_text(p, &call.prefix),
                );
            }
        }
        out.push_str(if self.dropped.is_empty() { "dropped: (none)\n" } else { "dropped:\n" });
        for rule in &self.dropped {
            let _ = writeln!(out, "  {:<14}  {}", origin_text(rule), p.display_typed_rule(rule));
        }
        out
    }

    /// The call graph as text: a `nodes:` and an `edges:` section.
    pub fn display_graph(&self) -> String {
        self.graph.display(&self.program)
    }

    /// The call graph in Graphviz DOT.
    pub fn display_dot(&self) -> String {
        self.graph.to_dot(&self.program)
    }
}

impl std::fmt::Display for MagicProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display_rules())
    }
}

/// `seed`, `main r1` or `demand r1 #0`.
fn origin_text(rule: &Rule) -> String {
    match rule.origin {
        Origin::Source => "source".to_string(),
        Origin::Seed => "seed".to_string(),
        Origin::Main { rule } => format!("main r{}", rule.0),
        Origin::Demand { rule, position } => format!("demand r{} #{position}", rule.0),
    }
}

/// `{X, Y}`.
fn vars_text(p: &Program, vars: &[Symbol]) -> String {
    let names: Vec<&str> = vars.iter().map(|v| p.symbols.text(*v)).collect();
    format!("{{{}}}", names.join(", "))
}

/// `@m:R^bf(X), @a:R^bf(X,Y)`.
fn atoms_text(p: &Program, atoms: &[Atom]) -> String {
    atoms.iter().map(|a| p.display_atom(a).to_string()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use crate::rewrite;
    use crate::testing::parse;
    use serde_json::{json, Value};

    fn example_1() -> crate::MagicProgram {
        let program = parse("R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), R(Y,Z)\n?- R(a,Y).");
        rewrite(&program, program.query.as_ref().unwrap())
    }

    #[test]
    fn trace_lists_rules_calls_and_dropped_rules() {
        assert_eq!(
            example_1().display_trace(),
            "rules:\n\
             \x20   0  seed            @m:R^bf(a) <-\n\
             \x20   1  main r0         @a:R^bf(X,Y) <- @m:R^bf(X), E(X,Y)\n\
             \x20   2  demand r1 #1    @m:R^bf(Y) <- @m:R^bf(X), @a:R^bf(X,Y)\n\
             \x20   3  main r1         @a:R^bf(X,Z) <- @m:R^bf(X), @a:R^bf(X,Y), @a:R^bf(Y,Z)\n\
             calls:\n\
             \x20 rule 3 (r1 #0): @a:R^bf(X,Y)  adornment bf  bound before {X}  prefix @m:R^bf(X)  demand dropped\n\
             \x20 rule 3 (r1 #1): @a:R^bf(Y,Z)  adornment bf  bound before {X, Y}  \
             prefix @m:R^bf(X), @a:R^bf(X,Y)  demand rule 2\n\
             dropped:\n\
             \x20 demand r1 #0    @m:R^bf(X) <- @m:R^bf(X)\n"
        );
    }

    #[test]
    fn graph_prints_as_text_and_dot() {
        let m = example_1();
        assert_eq!(
            m.display_graph(),
            "nodes:\n  R^bf  (query)\nedges:\n  R^bf -> R^bf  [r1 #0]\n  R^bf -> R^bf  [r1 #1]\n"
        );
        assert_eq!(
            m.display_dot(),
            "digraph adorned {\n\
             \x20 n0 [label=\"R^bf\", shape=doublecircle];\n\
             \x20 n0 -> n0 [label=\"r1 #0\"];\n\
             \x20 n0 -> n0 [label=\"r1 #1\"];\n\
             }\n"
        );
        assert_eq!(
            serde_json::to_value(m.graph_json()).unwrap(),
            json!({
                "nodes": [{"id": 0, "predicate": "R", "adornment": "bf", "label": "R^bf", "query": true}],
                "edges": [
                    {"from": 0, "to": 0, "source_rule": 1, "position": 0},
                    {"from": 0, "to": 0, "source_rule": 1, "position": 1},
                ],
            })
        );
    }

    #[test]
    fn json_carries_query_rules_calls_and_dropped_rules() {
        let json = serde_json::to_value(example_1().to_json()).unwrap();
        assert_eq!(
            json["query"],
            json!({"predicate": "R", "adornment": "bf", "constants": ["a"], "atom": "@a:R^bf(a,Y)"})
        );
        assert_eq!(json["answer_predicate"], "@a:R^bf");
        assert_eq!(json["demand_predicate"], "@m:R^bf");
        assert_eq!(json["adornments"], json!(["R^bf"]));
        assert_eq!(json["dropped"], json!(["@m:R^bf(X) <- @m:R^bf(X)"]));
        let kinds: Vec<&str> = json["rules"].as_array().unwrap().iter().map(|r| r["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["seed", "main", "demand", "main"]);
        assert_eq!(
            json["rules"][2],
            json!({
                "kind": "demand",
                "text": "@m:R^bf(Y) <- @m:R^bf(X), @a:R^bf(X,Y)",
                "source_rule": 1,
                "position": 1,
                "calls": [{
                    "position": 1,
                    "atom": "@a:R^bf(Y,Z)",
                    "adornment": "bf",
                    "bound_before": ["X", "Y"],
                    "prefix": ["@m:R^bf(X)", "@a:R^bf(X,Y)"],
                    "demand_rule": 2,
                }],
            })
        );
        assert_eq!(json["rules"][0]["source_rule"], Value::Null);
        assert_eq!(json["rules"][3]["calls"][0]["demand_rule"], Value::Null);
        assert_eq!(json["rules"][3]["calls"][0]["bound_before"], json!(["X"]));
    }

    #[test]
    fn display_is_the_rule_listing() {
        let m = example_1();
        assert_eq!(m.to_string(), m.display_rules());
        assert_eq!(m.display_rules().lines().count(), m.program.rules.len());
    }
}
