//! Relational-algebra plans for IR rules: scans, selections, joins and projections, plus
//! the strata (SCCs of the predicate dependency graph) in the order they must be evaluated.
//!
//! A [`RulePlan`] is a left-deep pipeline: one [`Step`] per atom, each scanning a relation,
//! selecting on constants and repeated variables, and joining on the variables bound by
//! the steps before it; the [`Output`] list projects the bindings onto the head. The plan
//! of a rule reads its body left to right ([`plan_rule`]); evaluators that want another
//! join order (semi-naive deltas first, rederivation guarded by the head) ask for one with
//! [`plan_rule_delta_first`] and [`plan_rule_guarded`] (see [`greedy_order`]).
//!
//! Invariant: plans know nothing of magic sets; `@a:`/`@m:` predicates are plain relations.

mod display;
pub mod json;
mod strata;

pub use display::DisplayPlan;
pub use strata::Stratum;

use ir::{Atom, CmpOp, Program, RuleId, Symbol, TermKind, ValueType};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeSet;

/// Plans of every rule of a program and its strata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramPlan {
    /// One plan per rule, indexed by [`RuleId::index`], reading the body left to right.
    pub rules: Vec<RulePlan>,
    /// Strongly connected components of derived predicates, dependencies first.
    pub strata: Vec<Stratum>,
}

/// Which atom of a rule a step reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomSource {
    /// The body atom at this position.
    Body(usize),
    /// The head atom, read as a guard: rederivation checks one candidate fact at a time.
    Head,
}

/// One scan of a relation, with the selections and the join key applied to its rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub pred: ir::PredId,
    pub source: AtomSource,
    /// `select #col = value` for a constant argument.
    pub consts: Vec<(usize, u32)>,
    /// `select #first = #col` for a variable repeated inside this atom (`first < col`).
    pub repeats: Vec<(usize, usize)>,
    /// `(col, slot)`: the column must equal the variable in `slot`, bound by an earlier step.
    pub key: Vec<(usize, usize)>,
    /// `(col, slot)`: the first occurrence of a variable not bound before; the row binds it.
    pub binds: Vec<(usize, usize)>,
    /// The comparisons, assignments and negations whose variables this step binds the
    /// last of, applied to each row it yields, in order.
    pub filters: Vec<Filter>,
}

/// Where a filter takes a value from: a variable slot bound before it, or a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    Var(usize),
    Const(u32),
}

/// A value a filter computes: an arithmetic expression over operands (most often a lone
/// operand), evaluated in the filter's type.
pub type Computed = ir::Expr<Operand>;

/// A test or a computed column of a rule body, placed at the earliest step where the
/// variables it reads are bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Filter {
    /// Comparison `comparison` of the rule: `left op right`; it fails where an operand
    /// has no value (a division by zero).
    Compare { comparison: usize, op: CmpOp, domain: ir::ValueType, left: Computed, right: Computed },
    /// Comparison `comparison` of the rule as an assignment: binds `slot` to `value`, of
    /// type `domain`; it fails where the value is undefined.
    Assign { comparison: usize, slot: usize, domain: ir::ValueType, value: Computed },
    /// Negated atom `negated` of the rule: no fact of `pred` has these values in these
    /// columns (an anti-join probe on its bound columns; the others are wildcards).
    Absent { negated: usize, pred: ir::PredId, key: Vec<(usize, Operand)> },
    /// Generator `generator` of the rule: each row goes on once per value of
    /// `range(from, to[, step])` ([`ir::RangeValues`]) of type `domain`, with `slot` bound
    /// to it; none where a bound has no value.
    Generate {
        generator: usize,
        slot: usize,
        domain: ir::ValueType,
        from: Computed,
        to: Computed,
        step: Option<Computed>,
    },
    /// Generator `generator` of the rule whose variable is bound already (by the head a
    /// guarded plan reads first): the value in `slot` must be a value of the range
    /// ([`ir::in_range`]).
    InRange {
        generator: usize,
        slot: usize,
        domain: ir::ValueType,
        from: Computed,
        to: Computed,
        step: Option<Computed>,
    },
}

/// A head argument: a variable slot or a constant value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    Var(usize),
    Const(u32),
}

/// The plan of one rule for one join order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RulePlan {
    pub rule: RuleId,
    pub head: ir::PredId,
    /// Variable slots in the order the steps bind them.
    pub vars: Vec<Symbol>,
    pub steps: Vec<Step>,
    /// Filters that read no variable bound by a step, applied once before the first.
    pub initial: Vec<Filter>,
    pub project: Vec<Output>,
    /// False when the rule fails the structural checks of `ir::validate` (an unbound head
    /// variable or an arity mismatch). Evaluators never fire such a rule; the pipeline
    /// reports the error before planning, so this only keeps evaluation panic-free.
    pub well_formed: bool,
    /// False when no relation the evaluation is for depends on the rule's head
    /// ([`ProgramPlan::restrict_to`]): evaluators do not fire it.
    pub needed: bool,
    /// Set for a reduction (`ir::Rule::aggregate`): the step scans its rows, and the head
    /// gets one fact per group of them instead of one per row.
    pub reduce: Option<Reduce>,
}

/// A grouped reduction: the rows of the one scanned relation are grouped by their first
/// `keys` columns, and each group gives the head its keys and `op` of the rows' last
/// column (`count`: of the rows), bound to slot `result`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reduce {
    pub op: ir::AggregateOp,
    pub keys: usize,
    /// The type of the aggregated column, which `min` and `max` order by.
    pub domain: ir::ValueType,
    pub result: usize,
}

impl RulePlan {
    /// Whether evaluators fire this rule: it is well formed and needed.
    pub fn fires(&self) -> bool {
        self.well_formed && self.needed
    }
}

/// Plans every rule left to right and computes the strata.
pub fn plan_program(program: &Program) -> ProgramPlan {
    let rules = program.rule_ids().map(|id| plan_rule(program, id)).collect();
    ProgramPlan { rules, strata: strata::strata(program) }
}

/// The plan reading the body strictly left to right (the `--emit plan` order and the
/// order of the reference engine).
pub fn plan_rule(program: &Program, rule: RuleId) -> RulePlan {
    let order: Vec<AtomSource> = (0..program.rule(rule).body.len()).map(AtomSource::Body).collect();
    build(program, rule, &order)
}

/// A plan that scans body atom `position` first (it will read a small delta) and then
/// the other atoms in the order of [`greedy_order`], without size information.
pub fn plan_rule_delta_first(program: &Program, rule: RuleId, position: usize) -> RulePlan {
    plan_rule_text_delta_first(program.rule(rule), rule, &|p| program.pred(p).arity, position)
}

/// [`plan_rule_delta_first`] for a rule kept apart from its program (see
/// [`plan_rule_text_in_order`]).
pub fn plan_rule_text_delta_first(
    rule: &ir::Rule,
    rule_id: RuleId,
    arity: &dyn Fn(ir::PredId) -> usize,
    position: usize,
) -> RulePlan {
    let body = &rule.body;
    let mut order = vec![AtomSource::Body(position)];
    let bound: Vec<Symbol> = body.get(position).map(Atom::vars).unwrap_or_default();
    let rest: Vec<usize> = (0..body.len()).filter(|&i| i != position).collect();
    order.extend(greedy_order(body, bound, rest, &|_| 0));
    plan_rule_text_in_order(rule, rule_id, arity, &order)
}

/// A plan that first reads the head atom as a guard relation (the candidate facts) and
/// then the body in the order of [`greedy_order`] with the given relation sizes; used to
/// ask which candidates still have a one-step derivation.
pub fn plan_rule_guarded(program: &Program, rule: RuleId, size: &dyn Fn(ir::PredId) -> usize) -> RulePlan {
    let r = program.rule(rule);
    let mut order = vec![AtomSource::Head];
    order.extend(greedy_order(&r.body, r.head.vars(), (0..r.body.len()).collect(), size));
    build(program, rule, &order)
}

/// The plan reading the atoms in exactly the given order, for evaluators that choose
/// the order themselves (with statistics this crate does not have).
pub fn plan_rule_in_order(program: &Program, rule: RuleId, order: &[AtomSource]) -> RulePlan {
    build(program, rule, order)
}

/// Orders the atoms `rest` of `body` given the variables `bound` so far: next comes an
/// atom sharing a variable with what is bound or with every variable bound (so no cross
/// product is formed when a join is possible), preferring one whose arguments are then
/// all bound (a pure filter), then the smallest relation by `size`, then the leftmost.
///
/// The candidates wait in one ordered set keyed by that rank; binding a variable re-ranks
/// only the atoms holding it, so a body of `n` atoms costs `O(n log n)`, not a scan of
/// every remaining atom per position.
pub fn greedy_order(
    body: &[Atom],
    bound: Vec<Symbol>,
    rest: Vec<usize>,
    size: &dyn Fn(ir::PredId) -> usize,
) -> Vec<AtomSource> {
    let mut is_bound: FxHashSet<Symbol> = bound.into_iter().collect();
    // Per candidate (by its place `k` in `rest`): its distinct unbound variables, whether
    // it has a bound one, and its relation size.
    let mut unbound = vec![0usize; rest.len()];
    let mut touched = vec![false; rest.len()];
    let sizes: Vec<usize> = rest.iter().map(|&i| size(body[i].pred)).collect();
    let mut holding: FxHashMap<Symbol, Vec<usize>> = FxHashMap::default();
    for (k, &i) in rest.iter().enumerate() {
        for v in body[i].vars() {
            if is_bound.contains(&v) {
                touched[k] = true;
            } else {
                unbound[k] += 1;
                holding.entry(v).or_default().push(k);
            }
        }
    }
    // A fully bound atom (a zero-arity one included) is a filter, never a cross product,
    // so it counts as connected and runs as early as it can.
    let rank = |k: usize, unbound: &[usize], touched: &[bool]| {
        let class = if unbound[k] == 0 {
            0u8
        } else if touched[k] {
            1
        } else {
            2
        };
        (class, sizes[k], k)
    };
    let mut waiting: BTreeSet<(u8, usize, usize)> = (0..rest.len()).map(|k| rank(k, &unbound, &touched)).collect();
    let mut order = Vec::with_capacity(rest.len());
    while let Some((_, _, k)) = waiting.pop_first() {
        let i = rest[k];
        order.push(AtomSource::Body(i));
        for v in body[i].vars() {
            if !is_bound.insert(v) {
                continue;
            }
            for &j in holding.get(&v).map_or(&[][..], Vec::as_slice) {
                if j == k || !waiting.remove(&rank(j, &unbound, &touched)) {
                    continue;
                }
                unbound[j] -= 1;
                touched[j] = true;
                waiting.insert(rank(j, &unbound, &touched));
            }
        }
    }
    order
}

fn build(program: &Program, rule_id: RuleId, order: &[AtomSource]) -> RulePlan {
    plan_rule_text_in_order(program.rule(rule_id), rule_id, &|p| program.pred(p).arity, order)
}

/// [`plan_rule_in_order`] for a rule kept apart from its program (with the arity of
/// each predicate), for evaluators that keep rewritten rule bodies of their own.
pub fn plan_rule_text_in_order(
    rule: &ir::Rule,
    rule_id: RuleId,
    arity: &dyn Fn(ir::PredId) -> usize,
    order: &[AtomSource],
) -> RulePlan {
    let mut vars: Vec<Symbol> = Vec::new();
    // The slot of each variable in `vars`, so that a body of many variables is planned
    // in time linear in its size.
    let mut slot_of: FxHashMap<Symbol, usize> = FxHashMap::default();
    let mut well_formed = true;
    let mut steps: Vec<Step> = Vec::with_capacity(order.len());
    let mut pending = Pending::new(rule);
    let initial = pending.place(&mut vars, &mut slot_of);
    for &source in order {
        let atom = match source {
            AtomSource::Body(i) => &rule.body[i],
            AtomSource::Head => &rule.head,
        };
        well_formed &= atom.args.len() == arity(atom.pred);
        let mut step = Step {
            pred: atom.pred,
            source,
            consts: Vec::new(),
            repeats: Vec::new(),
            key: Vec::new(),
            binds: Vec::new(),
            filters: Vec::new(),
        };
        let bound_before = vars.len();
        for (col, term) in atom.args.iter().enumerate() {
            match term.kind {
                TermKind::Const(c) => step.consts.push((col, c.raw())),
                TermKind::Var(v) => match slot_of.get(&v).copied() {
                    Some(slot) if slot < bound_before => step.key.push((col, slot)),
                    Some(slot) => {
                        let first = step.binds.iter().find(|&&(_, s)| s == slot).map(|&(c, _)| c);
                        // The slot was bound by this very atom, so `first` is always found.
                        step.repeats.push((first.unwrap_or(col), col));
                    }
                    None => {
                        step.binds.push((col, vars.len()));
                        slot_of.insert(v, vars.len());
                        vars.push(v);
                    }
                },
            }
        }
        step.filters = pending.place(&mut vars, &mut slot_of);
        steps.push(step);
    }
    well_formed &= pending.is_empty();
    // A reduction binds its head's last variable to each group's aggregate.
    let reduce = rule.aggregate.map(|aggregation| {
        well_formed &= rule.body.len() == 1 && aggregation.keys + 1 == rule.head.args.len();
        let result = vars.len();
        slot_of.insert(aggregation.result, result);
        vars.push(aggregation.result);
        Reduce { op: aggregation.op, keys: aggregation.keys, domain: aggregation.domain, result }
    });
    let project = rule
        .head
        .args
        .iter()
        .map(|t| match t.kind {
            TermKind::Const(c) => Output::Const(c.raw()),
            TermKind::Var(v) => match slot_of.get(&v).copied() {
                Some(slot) => Output::Var(slot),
                None => {
                    well_formed = false;
                    Output::Const(0)
                }
            },
        })
        .collect();
    well_formed &= rule.head.args.len() == arity(rule.head.pred);
    RulePlan { rule: rule_id, head: rule.head.pred, vars, steps, initial, project, well_formed, needed: true, reduce }
}

/// Indexed by predicate: whether evaluating the relations `wanted` needs it, that is,
/// whether one of them depends on it through the rules or the bodies of dominance rules
/// (they themselves included).
pub fn needed_preds(program: &Program, wanted: &[ir::PredId]) -> Vec<bool> {
    let mut rules_of: Vec<Vec<RuleId>> = vec![Vec::new(); program.preds.len()];
    for id in program.rule_ids() {
        rules_of[program.rule(id).head.pred.index()].push(id);
    }
    let mut needed = vec![false; program.preds.len()];
    let mut stack: Vec<ir::PredId> = wanted.to_vec();
    while let Some(pred) = stack.pop() {
        if std::mem::replace(&mut needed[pred.index()], true) {
            continue;
        }
        for &id in &rules_of[pred.index()] {
            let rule = program.rule(id);
            // A negated atom's relation is read too: it must be complete first.
            let read = rule.body.iter().chain(&rule.negated).map(|a| a.pred);
            stack.extend(read.filter(|p| !needed[p.index()]));
        }
        // So is the body of a dominance rule, which decides which facts it keeps.
        for dominance in program.dominances_of(pred) {
            stack.extend(dominance.reads().filter(|p| !needed[p.index()]));
        }
    }
    needed
}

/// The comparisons, negated atoms and generators of a rule not placed yet.
struct Pending<'r> {
    rule: &'r ir::Rule,
    comparisons: Vec<usize>,
    negated: Vec<usize>,
    generators: Vec<usize>,
    /// The variables the body can bind; the others of a negated atom are wildcards.
    bindable: FxHashSet<Symbol>,
}

impl<'r> Pending<'r> {
    fn new(rule: &'r ir::Rule) -> Self {
        let bindable =
            if rule.negated.is_empty() { FxHashSet::default() } else { rule.bound_vars().into_iter().collect() };
        Pending {
            rule,
            comparisons: (0..rule.comparisons.len()).collect(),
            negated: (0..rule.negated.len()).collect(),
            generators: (0..rule.generators.len()).collect(),
            bindable,
        }
    }

    fn is_empty(&self) -> bool {
        self.comparisons.is_empty() && self.negated.is_empty() && self.generators.is_empty()
    }

    /// Takes every filter whose variables are bound now, in rule order, repeating while
    /// an assignment or a generator binds a variable another one waits for.
    fn place(&mut self, vars: &mut Vec<Symbol>, slot_of: &mut FxHashMap<Symbol, usize>) -> Vec<Filter> {
        let mut placed = Vec::new();
        if self.is_empty() {
            return placed;
        }
        loop {
            let before = placed.len();
            let operand = |t: &ir::Term, slot_of: &FxHashMap<Symbol, usize>| match t.kind {
                TermKind::Const(c) => Some(Operand::Const(c.raw())),
                TermKind::Var(v) => slot_of.get(&v).map(|&s| Operand::Var(s)),
            };
            let computed = |e: &ir::Expr, slot_of: &FxHashMap<Symbol, usize>| e.map(|t| operand(t, slot_of));
            self.comparisons.retain(|&i| {
                let c = &self.rule.comparisons[i];
                let filter = match (computed(&c.left, slot_of), computed(&c.right, slot_of)) {
                    (Some(left), Some(right)) => {
                        Filter::Compare { comparison: i, op: c.op, domain: c.domain, left, right }
                    }
                    // An operand is `None` while one of its variables is not bound; an
                    // assignment binds a lone one.
                    (None, Some(value)) | (Some(value), None) if c.op == CmpOp::Eq => {
                        let target = if computed(&c.left, slot_of).is_none() { &c.left } else { &c.right };
                        let Some(v) = target.var() else { return true };
                        // Floats equal as floats (`-0.0 = 0.0`), not as the bits an atom
                        // matches: a float an atom binds is compared once bound.
                        if c.domain == ValueType::Float && self.rule.body.iter().any(|a| a.vars().contains(&v)) {
                            return true;
                        }
                        let slot = vars.len();
                        slot_of.insert(v, slot);
                        vars.push(v);
                        Filter::Assign { comparison: i, slot, domain: c.domain, value }
                    }
                    _ => return true,
                };
                placed.push(filter);
                false
            });
            self.negated.retain(|&i| {
                let atom = &self.rule.negated[i];
                let mut key = Vec::new();
                for (col, t) in atom.args.iter().enumerate() {
                    match (operand(t, slot_of), t.var()) {
                        (Some(o), _) => key.push((col, o)),
                        (None, Some(v)) if self.bindable.contains(&v) => return true,
                        (None, _) => {}
                    }
                }
                placed.push(Filter::Absent { negated: i, pred: atom.pred, key });
                false
            });
            // A generator goes after the tests its bounds allow, so that rows they fail
            // are not multiplied first.
            self.generators.retain(|&i| {
                let g = &self.rule.generators[i];
                let (Some(from), Some(to)) = (computed(&g.from, slot_of), computed(&g.to, slot_of)) else {
                    return true;
                };
                let step = match &g.step {
                    Some(step) => match computed(step, slot_of) {
                        Some(step) => Some(step),
                        None => return true,
                    },
                    None => None,
                };
                if let Some(&slot) = slot_of.get(&g.var) {
                    placed.push(Filter::InRange { generator: i, slot, domain: g.domain, from, to, step });
                    return false;
                }
                let slot = vars.len();
                slot_of.insert(g.var, slot);
                vars.push(g.var);
                placed.push(Filter::Generate { generator: i, slot, domain: g.domain, from, to, step });
                false
            });
            if placed.len() == before {
                return placed;
            }
        }
    }
}

impl ProgramPlan {
    /// Keeps what evaluating the relations `wanted` needs: the strata of the predicates
    /// they depend on (themselves included), with their rules; every other rule is marked
    /// as not needed and its stratum dropped, so a relation no output reads is never
    /// computed. Rule ids stay those of `program`.
    pub fn restrict_to(&mut self, program: &Program, wanted: &[ir::PredId]) {
        let needed = needed_preds(program, wanted);
        for rule in &mut self.rules {
            rule.needed = needed[rule.head.index()];
        }
        self.strata.retain(|s| s.preds.iter().any(|p| needed[p.index()]));
    }

    /// The `--emit plan` text; the program supplies the names.
    pub fn display<'a>(&'a self, program: &'a Program) -> DisplayPlan<'a> {
        DisplayPlan { plan: self, program }
    }

    /// The plan's JSON view (`--emit plan --format json`).
    pub fn to_json(&self, program: &Program) -> json::PlanJson {
        json::to_json(self, program)
    }
}

#[cfg(any(test, feature = "testing"))]
pub mod testing;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::program;

    #[test]
    fn left_to_right_plan_records_keys_selections_and_bindings() {
        let p = program("P(X,Z) <- E(X,Y), F(Y,a,Z,Z)");
        let plan = plan_rule(&p, RuleId(0));
        assert_eq!(plan.vars.len(), 3);
        assert_eq!(plan.steps[0].binds, vec![(0, 0), (1, 1)]);
        assert_eq!(plan.steps[1].key, vec![(0, 1)]);
        assert_eq!(plan.steps[1].consts, vec![(1, p.consts.get("a").unwrap().0)]);
        assert_eq!(plan.steps[1].binds, vec![(2, 2)]);
        assert_eq!(plan.steps[1].repeats, vec![(2, 3)]);
        assert_eq!(plan.project, vec![Output::Var(0), Output::Var(2)]);
        assert!(plan.well_formed);
    }

    #[test]
    fn delta_first_plan_avoids_cross_products() {
        let p = program("P(X,W) <- A(X), B(W), C(X,Y), D(Y,W)");
        let plan = plan_rule_delta_first(&p, RuleId(0), 3);
        let order: Vec<AtomSource> = plan.steps.iter().map(|s| s.source).collect();
        let expected = [3, 1, 2, 0].map(AtomSource::Body);
        assert_eq!(order, expected);
    }

    #[test]
    fn guarded_plan_reads_the_head_first() {
        let p = program("P(X,X,a) <- E(X,Y)");
        let plan = plan_rule_guarded(&p, RuleId(0), &|_| 0);
        assert_eq!(plan.steps[0].source, AtomSource::Head);
        assert_eq!(plan.steps[0].repeats, vec![(0, 1)]);
        assert_eq!(plan.steps[0].consts.len(), 1);
        assert_eq!(plan.steps[1].key, vec![(0, 0)]);
    }

    #[test]
    fn guarded_plan_prefers_filters_then_small_relations() {
        let p = program("R(X,Z) <- R(X,Y), E(Y,Z)\nQ(X,Z) <- M(X), Q(X,Y), Q(Y,Z)");
        let e = p.lookup_source("E").unwrap();
        let sizes = |pred| if pred == e { 10 } else { 1000 };
        let order =
            |rule| plan_rule_guarded(&p, RuleId(rule), &sizes).steps.iter().map(|s| s.source).collect::<Vec<_>>();
        assert_eq!(order(0), [AtomSource::Head, AtomSource::Body(1), AtomSource::Body(0)]);
        assert_eq!(order(1), [AtomSource::Head, AtomSource::Body(0), AtomSource::Body(1), AtomSource::Body(2)]);
    }

    #[test]
    fn filters_sit_at_the_first_step_that_binds_their_variables() {
        let mut p = program("P(X,W) <- E(X,Y), F(Y,Z)\nN(X) <- E(X,X)");
        let var = |p: &Program, name: &str| ir::Term {
            kind: TermKind::Var(p.symbols.get(name).unwrap_or_else(|| panic!("{name}"))),
            span: ir::Span::default(),
        };
        let comparison = |op, left, right| ir::Comparison {
            op,
            left: ir::Expr::leaf(left),
            right: ir::Expr::leaf(right),
            domain: Default::default(),
            span: ir::Span::default(),
        };
        let (x, y, z, w) = (var(&p, "X"), var(&p, "Y"), var(&p, "Z"), var(&p, "W"));
        let n = p.lookup_source("N").unwrap();
        let rule = &mut p.rules[0];
        rule.comparisons = vec![comparison(CmpOp::Ne, x, z), comparison(CmpOp::Eq, w, y)];
        rule.negated = vec![Atom { pred: n, args: vec![z], span: ir::Span::default() }];
        let plan = plan_rule(&p, RuleId(0));
        assert!(plan.well_formed);
        assert!(plan.initial.is_empty());
        // E(X,Y) binds slots 0 and 1; the assignment gives W slot 2 right there.
        assert_eq!(
            plan.steps[0].filters,
            vec![Filter::Assign {
                comparison: 1,
                slot: 2,
                domain: ir::ValueType::Symbol,
                value: ir::Expr::leaf(Operand::Var(1))
            }]
        );
        // F(Y,Z) binds Z (slot 3): the comparison and the anti-join on Z follow it.
        assert_eq!(
            plan.steps[1].filters,
            vec![
                Filter::Compare {
                    comparison: 0,
                    op: CmpOp::Ne,
                    domain: ir::ValueType::Symbol,
                    left: ir::Expr::leaf(Operand::Var(0)),
                    right: ir::Expr::leaf(Operand::Var(3))
                },
                Filter::Absent { negated: 0, pred: n, key: vec![(0, Operand::Var(3))] },
            ]
        );
        assert_eq!(plan.project, vec![Output::Var(0), Output::Var(2)]);
        // A comparison that nothing binds leaves the rule not well formed.
        let v = ir::Term { kind: TermKind::Var(p.symbols.intern("V")), span: ir::Span::default() };
        p.rules[0].comparisons.push(comparison(CmpOp::Lt, x, v));
        assert!(!plan_rule(&p, RuleId(0)).well_formed);
    }

    #[test]
    fn unsafe_rule_is_marked_not_well_formed() {
        let p = program("P(X,Y) <- E(X)");
        assert!(!plan_rule(&p, RuleId(0)).well_formed);
    }

    /// Restricted to `R`, the plan keeps the strata `R` reads through its rules (`S` and
    /// `T` via `S`) and no others; the rules of `U` and `V` do not fire, and rule ids stay.
    #[test]
    fn restriction_keeps_what_the_wanted_relations_read() {
        let p = program("T(X) <- E(X)\nS(X) <- T(X)\nR(X) <- S(X), E(X)\nU(X) <- R(X)\nV(X) <- E(X)");
        let mut plan = plan_program(&p);
        let pred = |name: &str| p.lookup_source(name).unwrap();
        plan.restrict_to(&p, &[pred("R")]);
        let fires: Vec<bool> = plan.rules.iter().map(RulePlan::fires).collect();
        assert_eq!(fires, [true, true, true, false, false]);
        let kept: Vec<Vec<ir::PredId>> = plan.strata.iter().map(|s| s.preds.clone()).collect();
        assert_eq!(kept, [vec![pred("T")], vec![pred("S")], vec![pred("R")]]);
        assert_eq!(plan.rules.iter().map(|r| r.rule.0).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    }

    /// The definition of [`greedy_order`], one scan of the remaining atoms per position.
    fn greedy_order_by_scans(
        body: &[Atom],
        mut bound: Vec<Symbol>,
        mut rest: Vec<usize>,
        size: &dyn Fn(ir::PredId) -> usize,
    ) -> Vec<AtomSource> {
        let mut order = Vec::new();
        while !rest.is_empty() {
            let rank = |&(k, &i): &(usize, &usize)| {
                let vars = body[i].args.iter().filter_map(|t| t.var());
                let all_bound = vars.clone().all(|v| bound.contains(&v));
                let connected = all_bound || vars.clone().any(|v| bound.contains(&v));
                (!connected, !all_bound, size(body[i].pred), k)
            };
            let pick = rest.iter().enumerate().min_by_key(rank).map_or(0, |(k, _)| k);
            let i = rest.remove(pick);
            for v in body[i].vars() {
                if !bound.contains(&v) {
                    bound.push(v);
                }
            }
            order.push(AtomSource::Body(i));
        }
        order
    }

    #[test]
    fn greedy_order_agrees_with_its_definition_on_many_bodies() {
        // A small deterministic generator: bodies of up to 12 atoms over 6 variables,
        // with constants, repeated variables and zero-arity atoms.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..2000 {
            let atoms = 1 + next(12);
            let mut lines = Vec::new();
            for a in 0..atoms {
                let arity = next(4);
                let args: Vec<String> =
                    (0..arity).map(|_| if next(6) == 0 { "c".to_string() } else { format!("V{}", next(6)) }).collect();
                lines.push(format!("A{}{a}({})", next(3), args.join(",")));
            }
            let p = program(&format!("H() <- {}", lines.join(", ")));
            let body = &p.rule(RuleId(0)).body;
            let size = |pred: ir::PredId| (pred.index() * 7919) % 5;
            let first = next(atoms) as usize;
            let bound = body[first].vars();
            let rest: Vec<usize> = (0..body.len()).filter(|&i| i != first).collect();
            assert_eq!(
                greedy_order(body, bound.clone(), rest.clone(), &size),
                greedy_order_by_scans(body, bound, rest, &size),
                "{}",
                p.display_rule(p.rule(RuleId(0)))
            );
        }
    }
}
