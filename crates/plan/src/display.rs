//! The stable `--emit plan` text and JSON of a [`ProgramPlan`]: per rule its text and the
//! operator tree (project, join, select, scan), then the strata.

use crate::{AtomSource, Output, ProgramPlan, RulePlan, Step};
use ir::{Atom, Const, DisplayAtom, DisplayConst, DisplayPred, DisplayRule, Program};
use serde_json::{json, Value};
use std::fmt::{self, Write};

/// Prints a [`ProgramPlan`]; made by [`ProgramPlan::display`].
pub struct DisplayPlan<'a> {
    pub(crate) plan: &'a ProgramPlan,
    pub(crate) program: &'a Program,
}

impl fmt::Display for DisplayPlan<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.program;
        for plan in &self.plan.rules {
            writeln!(f, "r{}: {}", plan.rule.0, DisplayRule(p, p.rule(plan.rule)))?;
            write_tree(f, p, plan)?;
        }
        writeln!(f, "strata:")?;
        for (i, stratum) in self.plan.strata.iter().enumerate() {
            let kind = if stratum.recursive { "recursive" } else { "non-recursive" };
            let preds: Vec<String> = stratum.preds.iter().map(|&id| p.pred_name(id)).collect();
            let rules: Vec<String> = stratum.rules.iter().map(|id| format!("r{}", id.0)).collect();
            writeln!(f, "  {i} ({kind}): {}; rules {}", preds.join(", "), rules.join(", "))?;
        }
        Ok(())
    }
}

fn step_atom<'a>(program: &'a Program, plan: &RulePlan, step: &Step) -> &'a Atom {
    let rule = program.rule(plan.rule);
    match step.source {
        AtomSource::Body(i) => &rule.body[i],
        AtomSource::Head => &rule.head,
    }
}

fn var_names(program: &Program, plan: &RulePlan, slots: impl Iterator<Item = usize>) -> String {
    slots.map(|s| program.symbols.text(plan.vars[s])).collect::<Vec<_>>().join(",")
}

fn output_names(program: &Program, plan: &RulePlan) -> String {
    plan.project
        .iter()
        .map(|o| match *o {
            Output::Var(s) => program.symbols.text(plan.vars[s]).to_string(),
            Output::Const(c) => DisplayConst(program, Const(c)).to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Writes the indented operator tree of one rule: a left-deep chain of joins under the
/// projection, each atom wrapped in its selections.
fn write_tree(f: &mut impl Write, program: &Program, plan: &RulePlan) -> fmt::Result {
    writeln!(f, "  project [{}] -> {}", output_names(program, plan), DisplayPred(program, plan.head))?;
    if plan.steps.is_empty() {
        return writeln!(f, "    unit");
    }
    write_join(f, program, plan, plan.steps.len(), 2)
}

/// Writes the join of the first `count` steps at indentation `depth`: the join operators
/// from the last step's down (each one deeper), the first step's scan, then every other
/// step's scan under its operator. Written with loops, not one call per step, so that a
/// body of thousands of atoms does not exhaust the stack.
fn write_join(f: &mut impl Write, program: &Program, plan: &RulePlan, count: usize, depth: usize) -> fmt::Result {
    for k in (1..count).rev() {
        let step = &plan.steps[k];
        let pad = "  ".repeat(depth + (count - 1 - k));
        if step.key.is_empty() {
            writeln!(f, "{pad}product")?;
        } else {
            writeln!(f, "{pad}join on [{}]", var_names(program, plan, step.key.iter().map(|&(_, s)| s)))?;
        }
    }
    write_scan(f, program, plan, &plan.steps[0], depth + count - 1)?;
    for k in 1..count {
        write_scan(f, program, plan, &plan.steps[k], depth + (count - 1 - k) + 1)?;
    }
    Ok(())
}

fn write_scan(f: &mut impl Write, program: &Program, plan: &RulePlan, step: &Step, mut depth: usize) -> fmt::Result {
    for &(col, value) in &step.consts {
        writeln!(f, "{}select #{col} = {}", "  ".repeat(depth), DisplayConst(program, Const(value)))?;
        depth += 1;
    }
    for &(first, col) in &step.repeats {
        writeln!(f, "{}select #{first} = #{col}", "  ".repeat(depth))?;
        depth += 1;
    }
    let guard = if step.source == AtomSource::Head { "guard " } else { "" };
    writeln!(f, "{}scan {guard}{}", "  ".repeat(depth), DisplayAtom(program, step_atom(program, plan, step)))
}

pub(crate) fn to_json(plan: &ProgramPlan, program: &Program) -> Value {
    let rules: Vec<Value> = plan
        .rules
        .iter()
        .map(|rp| {
            let tree = if rp.steps.is_empty() { json!({"op": "unit"}) } else { join_json(program, rp, rp.steps.len()) };
            json!({
                "id": format!("r{}", rp.rule.0),
                "rule": DisplayRule(program, program.rule(rp.rule)).to_string(),
                "plan": {
                    "op": "project",
                    "columns": rp.project.iter().map(|o| match *o {
                        Output::Var(s) => json!({"var": program.symbols.text(rp.vars[s])}),
                        Output::Const(c) => json!({"const": program.const_text(Const(c))}),
                    }).collect::<Vec<_>>(),
                    "head": program.pred_name(rp.head),
                    "input": tree,
                },
            })
        })
        .collect();
    let strata: Vec<Value> = plan
        .strata
        .iter()
        .map(|s| {
            json!({
                "preds": s.preds.iter().map(|&id| program.pred_name(id)).collect::<Vec<_>>(),
                "recursive": s.recursive,
                "rules": s.rules.iter().map(|id| format!("r{}", id.0)).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "rules": rules, "strata": strata })
}

fn join_json(program: &Program, plan: &RulePlan, count: usize) -> Value {
    let step = &plan.steps[count - 1];
    let scan = scan_json(program, plan, step);
    if count == 1 {
        return scan;
    }
    let on: Vec<&str> = step.key.iter().map(|&(_, s)| program.symbols.text(plan.vars[s])).collect();
    json!({ "op": "join", "on": on, "left": join_json(program, plan, count - 1), "right": scan })
}

fn scan_json(program: &Program, plan: &RulePlan, step: &Step) -> Value {
    let atom = step_atom(program, plan, step);
    let mut node = json!({
        "op": "scan",
        "pred": program.pred_name(step.pred),
        "atom": DisplayAtom(program, atom).to_string(),
    });
    for &(first, col) in step.repeats.iter().rev() {
        node = json!({ "op": "select", "column": first, "equals_column": col, "input": node });
    }
    for &(col, value) in step.consts.iter().rev() {
        node = json!({ "op": "select", "column": col, "equals": program.const_text(Const(value)), "input": node });
    }
    node
}

#[cfg(test)]
mod tests {
    use crate::plan_program;
    use crate::testing::program;

    #[test]
    fn plan_text_of_the_magic_program_of_example_1() {
        let p = program(
            "M(a) <-
             Q(X,Y) <- M(X), E(X,Y)
             M(Y) <- M(X), Q(X,Y)
             Q(X,Z) <- M(X), Q(X,Y), Q(Y,Z)",
        );
        let text = plan_program(&p).display(&p).to_string();
        let expected = "\
r0: M(a) <-
  project [a] -> M
    unit
r1: Q(X,Y) <- M(X), E(X,Y)
  project [X,Y] -> Q
    join on [X]
      scan M(X)
      scan E(X,Y)
r2: M(Y) <- M(X), Q(X,Y)
  project [Y] -> M
    join on [X]
      scan M(X)
      scan Q(X,Y)
r3: Q(X,Z) <- M(X), Q(X,Y), Q(Y,Z)
  project [X,Z] -> Q
    join on [Y]
      join on [X]
        scan M(X)
        scan Q(X,Y)
      scan Q(Y,Z)
strata:
  0 (recursive): M, Q; rules r0, r1, r2, r3
";
        assert_eq!(text, expected);
    }

    #[test]
    fn selections_and_products_are_printed() {
        let p = program("P(X,b) <- E(a,X,X), F(Y)");
        let text = plan_program(&p).display(&p).to_string();
        let expected = "\
r0: P(X,b) <- E(a,X,X), F(Y)
  project [X,b] -> P
    product
      select #0 = a
        select #1 = #2
          scan E(a,X,X)
      scan F(Y)
strata:
  0 (non-recursive): P; rules r0
";
        assert_eq!(text, expected);
        let json = plan_program(&p).to_json(&p);
        assert_eq!(json["rules"][0]["plan"]["input"]["left"]["op"], "select");
        assert_eq!(json["rules"][0]["plan"]["input"]["left"]["equals"], "a");
        assert_eq!(json["strata"][0]["recursive"], false);
    }
}
