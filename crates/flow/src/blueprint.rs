//! The dataflow a program becomes, worked out once on the calling thread from its
//! [`ProgramPlan`]: per rule, which relation each step arranges on which key, which
//! columns each partial binding keeps, and how the head is projected. Every worker builds
//! its dataflow from the same blueprint, and every width is checked here, before any
//! thread starts.

use crate::row::MAX_WIDTH;
use crate::Error;
use ir::{PredId, Program, RuleId};
use plan::{Output, ProgramPlan, RulePlan};

/// The whole program.
#[derive(Debug)]
pub(crate) struct Blueprint {
    /// The arity of every predicate, by index.
    pub arity: Vec<usize>,
    /// Whether each predicate heads a rule (its relation is derived, never given).
    pub derived: Vec<bool>,
    /// Strata in evaluation order.
    pub strata: Vec<StratumRecipe>,
}

#[derive(Debug)]
pub(crate) struct StratumRecipe {
    /// Predicate indexes of the stratum.
    pub preds: Vec<usize>,
    pub rules: Vec<RuleRecipe>,
    pub recursive: bool,
}

/// One rule as a scan followed by joins against arrangements.
#[derive(Debug)]
pub(crate) struct RuleRecipe {
    pub head: usize,
    /// The first body atom; `None` for a rule without body atoms, which fires once.
    pub scan: Option<Scan>,
    pub joins: Vec<Join>,
    /// The head's arguments: positions in the final binding, or constants.
    pub project: Vec<Part>,
}

/// A value of a built row: a position in a binding, or a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    Pos(usize),
    Const(u32),
}

/// The first step: the rows of `pred` that pass the selections, cut down to `keep`.
#[derive(Debug)]
pub(crate) struct Scan {
    pub pred: usize,
    pub consts: Vec<(usize, u32)>,
    pub repeats: Vec<(usize, usize)>,
    /// Columns of the row that later steps or the head read, in binding order.
    pub keep: Vec<usize>,
}

/// A later step: the binding so far, keyed by `left_key`, joined with `pred` arranged
/// on `key_cols` (the columns that must equal a bound variable or a constant, in column
/// order, so that steps keying one relation on the same columns share one arrangement).
#[derive(Debug)]
pub(crate) struct Join {
    pub pred: usize,
    pub key_cols: Vec<usize>,
    pub left_key: Vec<Part>,
    /// `select #a = #b` on the joined row for a variable repeated in this atom.
    pub repeats: Vec<(usize, usize)>,
    /// Positions of the binding that stay live, then columns of the joined row that bind
    /// a variable still needed: together the next binding.
    pub keep_left: Vec<usize>,
    pub keep_right: Vec<usize>,
}

/// Works out the dataflow of `plan`, or says why this backend cannot run it.
pub(crate) fn blueprint(plan: &ProgramPlan, program: &Program) -> Result<Blueprint, Error> {
    let arity: Vec<usize> = program.pred_ids().map(|p| program.pred(p).arity).collect();
    if let Some(p) = program.pred_ids().find(|&p| arity[p.index()] > MAX_WIDTH) {
        return Err(Error::TooWide { pred: Some(p), rule: None, width: arity[p.index()] });
    }
    let mut derived = vec![false; arity.len()];
    for rule in &program.rules {
        derived[rule.head.pred.index()] = true;
    }
    let mut strata = Vec::with_capacity(plan.strata.len());
    for stratum in &plan.strata {
        let mut rules = Vec::with_capacity(stratum.rules.len());
        for &rule in &stratum.rules {
            let rule_plan = &plan.rules[rule.index()];
            // A rule failing validation, or one nothing the run wants reads, is never
            // fired, as in the native engines.
            if rule_plan.fires() {
                rules.push(recipe(rule_plan)?);
            }
        }
        strata.push(StratumRecipe {
            preds: stratum.preds.iter().map(|p| p.index()).collect(),
            rules,
            recursive: stratum.recursive,
        });
    }
    Ok(Blueprint { arity, derived, strata })
}

fn recipe(rule: &RulePlan) -> Result<RuleRecipe, Error> {
    // Negated atoms, comparisons and arithmetic arrive as filters; this engine has no anti-join or
    // map yet, and ignoring them would be a wrong answer.
    if !rule.initial.is_empty() || rule.steps.iter().any(|s| !s.filters.is_empty()) {
        return Err(Error::Unsupported { rule: rule.rule, what: "negation, comparisons and arithmetic" });
    }
    let too_wide = |width: usize| Error::TooWide { pred: None, rule: Some(rule.rule), width };
    // `needed[i]`: whether slot `s` is read after step `i` (by a later key or the head).
    let mut needed_after: Vec<Vec<bool>> = vec![vec![false; rule.vars.len()]; rule.steps.len()];
    let mut needed = vec![false; rule.vars.len()];
    for out in &rule.project {
        if let Output::Var(slot) = *out {
            needed[slot] = true;
        }
    }
    for (i, step) in rule.steps.iter().enumerate().rev() {
        needed_after[i] = needed.clone();
        for &(_, slot) in &step.key {
            needed[slot] = true;
        }
    }
    let Some((first, rest)) = rule.steps.split_first() else {
        let project = rule
            .project
            .iter()
            .map(|out| match *out {
                Output::Const(c) => Part::Const(c),
                // A well-formed rule without body atoms has a ground head.
                Output::Var(_) => Part::Const(0),
            })
            .collect();
        return Ok(RuleRecipe { head: rule.head.index(), scan: None, joins: Vec::new(), project });
    };
    // The slots the binding holds, in order.
    let mut live: Vec<usize> = Vec::new();
    let mut keep = Vec::new();
    for &(col, slot) in &first.binds {
        if needed_after[0][slot] {
            keep.push(col);
            live.push(slot);
        }
    }
    if live.len() > MAX_WIDTH {
        return Err(too_wide(live.len()));
    }
    let scan = Scan { pred: first.pred.index(), consts: first.consts.clone(), repeats: first.repeats.clone(), keep };
    let mut joins = Vec::with_capacity(rest.len());
    for (i, step) in rest.iter().enumerate() {
        let needed = &needed_after[i + 1];
        let position = |slot: usize| live.iter().position(|&s| s == slot);
        let mut keyed: Vec<(usize, Part)> = step
            .key
            .iter()
            .map(|&(col, slot)| (col, Part::Pos(position(slot).expect("a key slot is live before its step"))))
            .chain(step.consts.iter().map(|&(col, value)| (col, Part::Const(value))))
            .collect();
        keyed.sort_by_key(|&(col, _)| col);
        if keyed.len() > MAX_WIDTH {
            return Err(too_wide(keyed.len()));
        }
        let keep_left: Vec<usize> = (0..live.len()).filter(|&p| needed[live[p]]).collect();
        let mut next: Vec<usize> = keep_left.iter().map(|&p| live[p]).collect();
        let mut keep_right = Vec::new();
        for &(col, slot) in &step.binds {
            if needed[slot] {
                keep_right.push(col);
                next.push(slot);
            }
        }
        if next.len() > MAX_WIDTH {
            return Err(too_wide(next.len()));
        }
        joins.push(Join {
            pred: step.pred.index(),
            key_cols: keyed.iter().map(|&(col, _)| col).collect(),
            left_key: keyed.iter().map(|&(_, part)| part).collect(),
            repeats: step.repeats.clone(),
            keep_left,
            keep_right,
        });
        live = next;
    }
    let project = rule
        .project
        .iter()
        .map(|out| match *out {
            Output::Const(c) => Part::Const(c),
            Output::Var(slot) => Part::Pos(live.iter().position(|&s| s == slot).expect("head slots stay live")),
        })
        .collect();
    Ok(RuleRecipe { head: rule.head.index(), scan: Some(scan), joins, project })
}

/// For messages: a rule's or predicate's name.
pub(crate) fn describe(program: &Program, pred: Option<PredId>, rule: Option<RuleId>) -> String {
    match (pred, rule) {
        (Some(p), _) => format!("relation `{}`", program.pred_name(p)),
        (None, Some(r)) => format!("rule `{}`", program.display_rule(program.rule(r))),
        (None, None) => "the program".to_string(),
    }
}
