//! The JSON form of a plan (`--emit plan --format json`): serialisable views whose
//! fields are the schema, built from a plan and its program; the binary serialises them.

use crate::display::{filter_text, planned_dominances, reduce_text, rule_name, rule_title, step_atom};
use crate::{AtomSource, Filter, Output, ProgramPlan, RulePlan, Step};
use ir::{DisplayAtom, DisplayRule, Program};
use serde::Serialize;

/// The JSON form of a plan (`--emit plan --format json`): its fields are the schema.
#[derive(Debug, Serialize)]
pub struct PlanJson {
    pub rules: Vec<RuleJson>,
    pub strata: Vec<StratumJson>,
    /// The dominance rules of the relations computed, as Soufflé writes them; absent when
    /// there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dominance: Vec<String>,
}

/// One rule's plan: its steps as a flat list (never nested join nodes, so serialising
/// and dropping it never recurses once per body atom), then its reduction and projection.
#[derive(Debug, Serialize)]
pub struct RuleJson {
    pub id: String,
    pub title: String,
    pub rule: String,
    pub steps: Vec<StepJson>,
    pub project: ProjectJson,
    /// The filters that hold before any atom is read (comparisons of constants).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub initial: Vec<FilterJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reduce: Option<ReduceJson>,
}

/// `scan` for the first atom, `join` (with `on`, empty for a product) for each later one.
#[derive(Debug, Serialize)]
pub struct StepJson {
    pub op: &'static str,
    pub pred: String,
    pub atom: String,
    pub select: Vec<SelectJson>,
    /// Set on the step that reads the rule's demand guard.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub guard: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<FilterJson>,
    /// The variables a join matches on; absent on the first step, which joins nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on: Option<Vec<String>>,
}

/// A selection of the scanned atom: a column equal to a constant, or to an earlier column.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum SelectJson {
    Constant { column: usize, equals: String },
    Column { column: usize, equals_column: usize },
}

/// A filter of a step (`filter`, `let` or `anti-join`) and its text.
#[derive(Debug, Serialize)]
pub struct FilterJson {
    pub op: &'static str,
    pub text: String,
}

#[derive(Debug, Serialize)]
pub struct ReduceJson {
    pub op: &'static str,
    pub keys: usize,
    pub result: String,
    pub text: String,
}

#[derive(Debug, Serialize)]
pub struct ProjectJson {
    pub columns: Vec<OutputJson>,
    pub head: String,
}

/// A head column: a variable's value or a constant.
#[derive(Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputJson {
    Var(String),
    Const(String),
}

#[derive(Debug, Serialize)]
pub struct StratumJson {
    pub preds: Vec<String>,
    pub recursive: bool,
    pub rules: Vec<String>,
}

pub(crate) fn to_json(plan: &ProgramPlan, program: &Program) -> PlanJson {
    let rules = plan
        .rules
        .iter()
        .map(|rp| RuleJson {
            id: rule_name(program, rp.rule),
            title: rule_title(program, rp.rule),
            rule: DisplayRule(program, program.rule(rp.rule)).to_string(),
            steps: rp.steps.iter().enumerate().map(|(k, step)| step_json(program, rp, k, step)).collect(),
            project: ProjectJson {
                columns: rp
                    .project
                    .iter()
                    .enumerate()
                    .map(|(col, o)| match *o {
                        Output::Var(s) => OutputJson::Var(program.symbols.text(rp.vars[s]).to_string()),
                        Output::Const(c) => OutputJson::Const(program.const_text(program.value(rp.head, col, c))),
                    })
                    .collect(),
                head: program.pred_name(rp.head),
            },
            initial: filters_json(program, rp, &rp.initial),
            reduce: rp.reduce.as_ref().map(|reduce| ReduceJson {
                op: reduce.op.text(),
                keys: reduce.keys,
                result: program.symbols.text(rp.vars[reduce.result]).to_string(),
                text: reduce_text(program, rp, reduce),
            }),
        })
        .collect();
    let strata = plan
        .strata
        .iter()
        .map(|s| StratumJson {
            preds: s.preds.iter().map(|&id| program.pred_name(id)).collect(),
            recursive: s.recursive,
            rules: s.rules.iter().map(|&id| rule_name(program, id)).collect(),
        })
        .collect();
    let dominance =
        planned_dominances(plan, program).map(|d| ir::DisplayDominance(program, d, false).to_string()).collect();
    PlanJson { rules, strata, dominance }
}

fn step_json(program: &Program, plan: &RulePlan, k: usize, step: &Step) -> StepJson {
    let atom = step_atom(program, plan, step);
    let mut select = Vec::with_capacity(step.consts.len() + step.repeats.len());
    for &(column, value) in &step.consts {
        let equals = program.const_text(program.value(atom.pred, column, value));
        select.push(SelectJson::Constant { column, equals });
    }
    for &(column, equals_column) in &step.repeats {
        select.push(SelectJson::Column { column, equals_column });
    }
    StepJson {
        op: if k == 0 { "scan" } else { "join" },
        pred: program.pred_name(step.pred),
        atom: DisplayAtom(program, atom).to_string(),
        select,
        guard: step.source == AtomSource::Head,
        filters: filters_json(program, plan, &step.filters),
        on: (k > 0).then(|| step.key.iter().map(|&(_, s)| program.symbols.text(plan.vars[s]).to_string()).collect()),
    }
}

fn filters_json(program: &Program, plan: &RulePlan, filters: &[Filter]) -> Vec<FilterJson> {
    filters
        .iter()
        .map(|filter| {
            let op = match filter {
                Filter::Compare { .. } | Filter::InRange { .. } => "filter",
                Filter::Assign { .. } => "let",
                Filter::Absent { .. } => "anti-join",
                Filter::Generate { .. } => "range",
            };
            FilterJson { op, text: filter_text(program, plan, filter) }
        })
        .collect()
}
