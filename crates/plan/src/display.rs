//! The stable `--emit plan` text and JSON of a [`ProgramPlan`]: per rule its text and its
//! left-deep pipeline as a flat list of steps (scan, select, join, project), then the strata
//! and the dominance rules.

use crate::{AtomSource, Filter, Operand, Output, ProgramPlan, RulePlan, Step};
use ir::{Atom, DisplayAtom, DisplayDominance, DisplayPred, DisplayRule, DisplayValue, Program, ValueType};
use std::fmt::{self, Write};

/// Prints a [`ProgramPlan`]; made by [`ProgramPlan::display`].
pub struct DisplayPlan<'a> {
    pub(crate) plan: &'a ProgramPlan,
    pub(crate) program: &'a Program,
}

/// How a rule is named: `r1` for rule 1 of a source program (as `--emit ir` lists it), the
/// bare position `3` for a rule of the magic rewrite (as `--emit magic-ir` lists it), whose
/// origin names the source rule (`main r1`): `r1` always means a source rule.
pub(crate) fn rule_name(program: &Program, id: ir::RuleId) -> String {
    match program.rule(id).origin {
        ir::Origin::Source => format!("r{}", id.0),
        _ => id.0.to_string(),
    }
}

/// `r1`, or for a rewritten rule `3 (main r1)`.
pub(crate) fn rule_title(program: &Program, id: ir::RuleId) -> String {
    match program.rule(id).origin {
        ir::Origin::Source => format!("r{}", id.0),
        ir::Origin::Seed => format!("{} (seed)", id.0),
        ir::Origin::Main { rule } => format!("{} (main r{})", id.0, rule.0),
        ir::Origin::Demand { rule, position } => format!("{} (demand r{} #{position})", id.0, rule.0),
    }
}

impl fmt::Display for DisplayPlan<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.program;
        for plan in &self.plan.rules {
            writeln!(f, "{}: {}", rule_title(p, plan.rule), DisplayRule(p, p.rule(plan.rule)))?;
            write_steps(f, p, plan)?;
        }
        writeln!(f, "strata:")?;
        for (i, stratum) in self.plan.strata.iter().enumerate() {
            let kind = if stratum.recursive { "recursive" } else { "non-recursive" };
            let preds: Vec<String> = stratum.preds.iter().map(|&id| p.pred_name(id)).collect();
            let rules: Vec<String> = stratum.rules.iter().map(|&id| rule_name(p, id)).collect();
            writeln!(f, "  {i} ({kind}): {}; rules {}", preds.join(", "), rules.join(", "))?;
        }
        let mut dominances = planned_dominances(self.plan, p).peekable();
        if dominances.peek().is_some() {
            writeln!(f, "dominance (after every round of its relation's stratum):")?;
            for dominance in dominances {
                writeln!(f, "  {}", DisplayDominance(p, dominance, true))?;
            }
        }
        Ok(())
    }
}

/// The dominance rules of the relations the plan computes (a subsumptive clause, a
/// recursive `min`/`max`), which the engines apply after each round of their stratum.
pub(crate) fn planned_dominances<'a>(
    plan: &'a ProgramPlan,
    program: &'a Program,
) -> impl Iterator<Item = &'a ir::Dominance> + 'a {
    program.dominances.iter().filter(|d| plan.strata.iter().any(|s| s.preds.contains(&d.pred())))
}

pub(crate) fn step_atom<'a>(program: &'a Program, plan: &RulePlan, step: &Step) -> &'a Atom {
    let rule = program.rule(plan.rule);
    match step.source {
        AtomSource::Body(i) => &rule.body[i],
        AtomSource::Head => &rule.head,
    }
}

/// An operand; a constant one is a value of type `ty`.
fn operand_text(program: &Program, plan: &RulePlan, operand: Operand, ty: ValueType) -> String {
    match operand {
        Operand::Var(s) => program.symbols.text(plan.vars[s]).to_string(),
        Operand::Const(c) => DisplayValue(program, ir::Value::from_raw(ty, c)).to_string(),
    }
}

/// A computed value in the dlc dialect's infix form (`N + 1`, `X mod 3`).
fn computed_text(program: &Program, plan: &RulePlan, value: &crate::Computed, ty: ValueType) -> String {
    let mut text = String::new();
    let leaf = |o: &Operand, ty| operand_text(program, plan, *o, ty);
    // An expression the planner built from the IR always prints.
    let _ = value.write_infix(&mut text, ty, &leaf, &ir::BinOp::text, &program.consts.record_types());
    text
}

/// `filter X < 3 [number]`, `let Y = X + 1 [number]`, `anti-join !q(X,_) on [#0 = X]`:
/// a comparison and an assignment with the type they compute and compare in.
pub(crate) fn filter_text(program: &Program, plan: &RulePlan, filter: &Filter) -> String {
    let rule = program.rule(plan.rule);
    match filter {
        Filter::Compare { op, domain, left, right, .. } => {
            let (left, right) =
                (computed_text(program, plan, left, *domain), computed_text(program, plan, right, *domain));
            format!("filter {} [{}]", op.write(&left, &right), domain.name())
        }
        Filter::Assign { slot, domain, value, .. } => {
            format!(
                "let {} = {} [{}]",
                program.symbols.text(plan.vars[*slot]),
                computed_text(program, plan, value, *domain),
                domain.name()
            )
        }
        Filter::Generate { slot, domain, from, to, step, .. }
        | Filter::InRange { slot, domain, from, to, step, .. } => {
            // A generator gives the values; one whose variable is bound tests it.
            let keyword = if matches!(filter, Filter::Generate { .. }) { "for" } else { "filter" };
            let bounds: Vec<String> =
                [from, to].into_iter().chain(step).map(|e| computed_text(program, plan, e, *domain)).collect();
            format!(
                "{keyword} {} in range({}) [{}]",
                program.symbols.text(plan.vars[*slot]),
                bounds.join(", "),
                domain.name()
            )
        }
        Filter::Absent { negated, pred, key } => {
            let types = &program.pred(*pred).types;
            let on: Vec<String> = key
                .iter()
                .map(|&(col, o)| format!("#{col} = {}", operand_text(program, plan, o, types[col])))
                .collect();
            format!("anti-join !{} on [{}]", DisplayAtom(program, &rule.negated[*negated]), on.join(", "))
        }
    }
}

fn write_filters(f: &mut impl Write, program: &Program, plan: &RulePlan, filters: &[Filter]) -> fmt::Result {
    for filter in filters {
        write!(f, ", {}", filter_text(program, plan, filter))?;
    }
    Ok(())
}

fn var_names(program: &Program, plan: &RulePlan, slots: impl Iterator<Item = usize>) -> String {
    slots.map(|s| program.symbols.text(plan.vars[s])).collect::<Vec<_>>().join(",")
}

fn output_names(program: &Program, plan: &RulePlan) -> String {
    plan.project
        .iter()
        .enumerate()
        .map(|(col, o)| match *o {
            Output::Var(s) => program.symbols.text(plan.vars[s]).to_string(),
            Output::Const(c) => DisplayValue(program, program.value(plan.head, col, c)).to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Writes the plan of one rule as a numbered pipeline, one line per step at constant
/// indentation: the first atom's scan, then each later atom's scan joined on the variables
/// bound before it (a product when none is), each with its selections, then the projection.
/// A left-deep join is a list, so the text is linear in the body, however long.
fn write_steps(f: &mut impl Write, program: &Program, plan: &RulePlan) -> fmt::Result {
    if plan.steps.is_empty() {
        write!(f, "  1. unit")?;
        write_filters(f, program, plan, &plan.initial)?;
        writeln!(f)?;
    } else if !plan.initial.is_empty() {
        write!(f, "  0. check")?;
        write_filters(f, program, plan, &plan.initial)?;
        writeln!(f)?;
    }
    for (k, step) in plan.steps.iter().enumerate() {
        write!(f, "  {}. ", k + 1)?;
        if k > 0 {
            if step.key.is_empty() {
                write!(f, "product with ")?;
            } else {
                write!(f, "join on [{}] with ", var_names(program, plan, step.key.iter().map(|&(_, s)| s)))?;
            }
        }
        let guard = if step.source == AtomSource::Head { "guard " } else { "" };
        write!(f, "scan {guard}{}", DisplayAtom(program, step_atom(program, plan, step)))?;
        let pred = step_atom(program, plan, step).pred;
        for &(col, value) in &step.consts {
            write!(f, ", select #{col} = {}", DisplayValue(program, program.value(pred, col, value)))?;
        }
        for &(first, col) in &step.repeats {
            write!(f, ", select #{first} = #{col}")?;
        }
        write_filters(f, program, plan, &step.filters)?;
        writeln!(f)?;
    }
    let mut n = plan.steps.len().max(1) + 1;
    if let Some(reduce) = &plan.reduce {
        writeln!(f, "  {n}. {}", reduce_text(program, plan, reduce))?;
        n += 1;
    }
    writeln!(f, "  {n}. project [{}] -> {}", output_names(program, plan), DisplayPred(program, plan.head))
}

/// `reduce sum #2 group by [#0] -> N [number]`: a reduction over the rows its step
/// scanned, with the type it reduces in (a `count` reads no value, so has none).
pub(crate) fn reduce_text(program: &Program, plan: &RulePlan, reduce: &crate::Reduce) -> String {
    let (value, domain) = match reduce.op {
        ir::AggregateOp::Count => (String::new(), String::new()),
        _ => (
            format!(" #{}", plan.steps.first().map_or(0, |s| program.pred(s.pred).arity.saturating_sub(1))),
            format!(" [{}]", reduce.domain.name()),
        ),
    };
    let keys: Vec<String> = (0..reduce.keys).map(|k| format!("#{k}")).collect();
    let result = program.symbols.text(plan.vars[reduce.result]);
    format!("reduce {}{value} group by [{}] -> {result}{domain}", reduce.op.text(), keys.join(", "))
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
  1. unit
  2. project [a] -> M
r1: Q(X,Y) <- M(X), E(X,Y)
  1. scan M(X)
  2. join on [X] with scan E(X,Y)
  3. project [X,Y] -> Q
r2: M(Y) <- M(X), Q(X,Y)
  1. scan M(X)
  2. join on [X] with scan Q(X,Y)
  3. project [Y] -> M
r3: Q(X,Z) <- M(X), Q(X,Y), Q(Y,Z)
  1. scan M(X)
  2. join on [X] with scan Q(X,Y)
  3. join on [Y] with scan Q(Y,Z)
  4. project [X,Z] -> Q
strata:
  0 (recursive): M, Q; rules r0, r1, r2, r3
";
        assert_eq!(text, expected);
    }

    #[test]
    fn selections_and_products_are_printed() {
        let p = program("P(X,b) <- F(Y), E(a,X,X)");
        let text = plan_program(&p).display(&p).to_string();
        let expected = "\
r0: P(X,b) <- F(Y), E(a,X,X)
  1. scan F(Y)
  2. product with scan E(a,X,X), select #0 = a, select #1 = #2
  3. project [X,b] -> P
strata:
  0 (non-recursive): P; rules r0
";
        assert_eq!(text, expected);
        let json = serde_json::to_value(plan_program(&p).to_json(&p)).unwrap();
        let steps = &json["rules"][0]["steps"];
        assert_eq!(steps[0]["op"], "scan");
        assert_eq!(steps[1]["op"], "join");
        assert_eq!(steps[1]["on"], serde_json::json!([]));
        assert_eq!(steps[1]["select"][0]["equals"], "a");
        assert_eq!(steps[1]["select"][1]["equals_column"], 2);
        assert_eq!(json["rules"][0]["project"]["head"], "P");
        assert_eq!(json["strata"][0]["recursive"], false);
    }
}
