//! The dataflow a program becomes, worked out once on the calling thread from its
//! [`ProgramPlan`]: per rule, which relation each step arranges on which key, which
//! columns each partial binding keeps and computes, which comparisons and negated atoms
//! check it, and how the head is projected. Every worker builds
//! its dataflow from the same blueprint, and every width is checked here, before any
//! thread starts.

use crate::row::{Row, MAX_WIDTH};
use crate::Error;
use ir::{CmpOp, PredId, Program, RuleId, ValueStore, ValueType};
use plan::{Computed, Filter, Operand, Output, ProgramPlan, RulePlan};

/// The whole program.
#[derive(Debug)]
pub(crate) struct Blueprint {
    /// The arity of every predicate, by index.
    pub arity: Vec<usize>,
    /// Whether each predicate heads a rule (its relation is derived, never given).
    pub derived: Vec<bool>,
    /// Strata in evaluation order.
    pub strata: Vec<StratumDataflow>,
    /// Per predicate, by index: its dominance rules, applied to the relation its stratum
    /// computes (docs/semantics.md, Subsumption).
    pub dominances: Vec<Vec<Undominated>>,
}

/// One dominance rule of a relation, as the dataflow applies it: the relation's rows
/// grouped by `group`, the columns that every fact and a fact dominating it share (the
/// same variable, or the same constant, in both atoms), so that a fact meets only the
/// facts of its own group; within a group each row another row dominates is removed.
#[derive(Clone, Debug)]
pub(crate) struct Undominated {
    pub rule: ir::Dominance,
    pub group: Vec<usize>,
}

impl Undominated {
    fn new(rule: &ir::Dominance) -> Self {
        let pairs = rule.dominated.args.iter().zip(&rule.dominating.args);
        let group = pairs.enumerate().filter(|(_, (a, b))| a.kind == b.kind).map(|(column, _)| column).collect();
        Undominated { rule: rule.clone(), group }
    }
}

impl Blueprint {
    /// The most values a row of the dataflow holds: a relation's, a join key's, a
    /// binding's (with its computed columns), a blocked key's. At most [`MAX_WIDTH`],
    /// which [`blueprint`] checked.
    pub fn width(&self) -> usize {
        let computed = |checks: &Checks| {
            checks.row.iter().filter(|c| matches!(c, RowCheck::Compute { .. } | RowCheck::Generate { .. })).count()
        };
        let keys = |checks: &Checks| checks.absent.iter().map(|a| a.key.len().max(a.cols.len())).max().unwrap_or(0);
        let mut width = self.arity.iter().copied().max().unwrap_or(0);
        for rule in self.strata.iter().flat_map(|s| &s.rules) {
            let scanned = rule.scan.as_ref().map_or(0, |s| s.keep.len());
            width = width.max(scanned + computed(&rule.checks)).max(keys(&rule.checks)).max(rule.project.len());
            for join in &rule.joins {
                let live = join.keep_left.len() + join.keep_right.len() + computed(&join.checks);
                width = width.max(live).max(join.left_key.len()).max(join.key_cols.len()).max(keys(&join.checks));
            }
        }
        width
    }
}

#[derive(Debug)]
pub(crate) struct StratumDataflow {
    /// Predicate indexes of the stratum.
    pub preds: Vec<usize>,
    pub rules: Vec<RuleDataflow>,
    pub recursive: bool,
    /// Whether the stratum is the recursion of lattice relations (recursive `min` and
    /// `max`), which a cycle improving a value keeps iterating: the dataflow watches its
    /// iterations for one ([`crate::Error::ImprovingCycle`]).
    pub lattice: bool,
}

/// One rule as a scan followed by joins against arrangements, with the rule's
/// comparisons and negated atoms checked on the binding of the step that binds the last
/// variable they read.
#[derive(Debug)]
pub(crate) struct RuleDataflow {
    pub head: usize,
    /// The first body atom; `None` for a rule without body atoms, which starts from the
    /// one empty binding (it fires once, if its checks pass).
    pub scan: Option<Scan>,
    /// Checks of the first binding: the scan's kept row, or the empty binding.
    pub checks: Checks,
    pub joins: Vec<Join>,
    /// The head's arguments: positions in the final binding, or constants.
    pub project: Vec<ValueSource>,
    /// Set for a reduction, which reads its rows relation whole and derives one head row
    /// per group instead (`scan`, `checks`, `joins` and `project` are then empty).
    pub reduce: Option<Reduction>,
}

/// A grouped reduction (`plan::Reduce`): the rows of `pred` grouped by their first
/// `keys` columns, each group giving the head its keys and `op` over the rows' last
/// column, exactly as the native engine's `reduce.rs` computes it (each distinct row
/// once, wrapping sums, no head row for a group without rows).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reduction {
    pub pred: usize,
    pub keys: usize,
    pub op: ir::AggregateOp,
    pub domain: ValueType,
}

impl RuleDataflow {
    /// The relations the rule reads positively (its negated atoms aside).
    pub fn reads(&self) -> impl Iterator<Item = usize> + '_ {
        let scanned = self.scan.iter().map(|s| s.pred).chain(self.reduce.iter().map(|r| r.pred));
        scanned.chain(self.joins.iter().map(|j| j.pred))
    }
}

/// A value of a built row: a position in a binding, or a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ValueSource {
    Pos(usize),
    Const(u32),
}

/// The first step: the rows of `pred` that pass the selections, cut down to `keep`.
#[derive(Debug)]
pub(crate) struct Scan {
    pub pred: usize,
    pub consts: Vec<(usize, u32)>,
    pub repeats: Vec<(usize, usize)>,
    /// Columns of the row that later steps, checks or the head read, in binding order.
    pub keep: Vec<usize>,
}

/// A later step: the binding so far, keyed by `left_key`, joined with `pred` arranged
/// on `key_cols` (the columns that must equal a bound variable or a constant, in column
/// order, so that steps keying one relation on the same columns share one arrangement).
#[derive(Debug)]
pub(crate) struct Join {
    pub pred: usize,
    pub key_cols: Vec<usize>,
    pub left_key: Vec<ValueSource>,
    /// `select #a = #b` on the joined row for a variable repeated in this atom.
    pub repeats: Vec<(usize, usize)>,
    /// Positions of the binding that stay live, then columns of the joined row that bind
    /// a variable still needed: together the next binding.
    pub keep_left: Vec<usize>,
    pub keep_right: Vec<usize>,
    /// Checks of the next binding.
    pub checks: Checks,
}

/// The comparisons, computed columns and negated atoms placed at one step, over the
/// binding it yields.
#[derive(Debug, Default)]
pub(crate) struct Checks {
    /// Comparisons and computed columns in the plan's order (a comparison may read a
    /// column computed before it), applied to each binding as it is made.
    pub row: Vec<RowCheck>,
    /// Negated atoms, applied after `row` (they may read a computed column).
    pub absent: Vec<Absent>,
}

/// A value a check reads: a binding position or a constant, or an arithmetic
/// expression over them, evaluated with `ir`'s evaluation, as the native engine does.
pub(crate) type Value = ir::Expr<ValueSource>;

/// One test or computed column of a binding.
#[derive(Clone, Debug)]
pub(crate) enum RowCheck {
    /// `left op right`, computed and ordered as values of `domain` (symbols by their
    /// text); it fails where an operand has no value (a division by zero).
    Compare { op: CmpOp, domain: ValueType, left: Value, right: Value },
    /// Appends `value`, computed in `domain`, to the binding: an assignment `X = e`
    /// whose value no column or constant holds already. A binding where it has no
    /// value (a division by zero, `MIN / -1`) is dropped: that rule instance derives
    /// nothing.
    Compute { value: Value },
    /// Appends each value of `range(from, to[, step])` over `domain` in turn: a flat_map
    /// of the binding, one binding per value (none where a bound has no value).
    Generate { domain: ValueType, from: Value, to: Value, step: Option<Value> },
    /// `value` is a value of `range(from, to[, step])` over `domain` ([`ir::in_range`]).
    InRange { domain: ValueType, value: Value, from: Value, to: Value, step: Option<Value> },
}

/// A negated atom: no row of `pred` has the values `key` in the columns `cols` (its
/// other columns are `_` or variables bound nowhere else, so any value matches them).
#[derive(Clone, Debug)]
pub(crate) struct Absent {
    pub pred: usize,
    pub cols: Vec<usize>,
    pub key: Vec<ValueSource>,
    /// Whether `cols` are all of the relation's columns: then the relation itself is the
    /// set of blocked keys, with no projection to make distinct.
    pub whole: bool,
}

impl RowCheck {
    /// `binding` after `checks`: extended by the computed columns, or `None` when a
    /// comparison fails or a value is undefined. Symbols are ordered by their texts in
    /// `values`. The checks hold no generator ([`RowCheck::apply_all`]).
    pub fn apply<const N: usize>(checks: &[RowCheck], mut binding: Row<N>, values: &ValueStore) -> Option<Row<N>> {
        for check in checks {
            binding = check.apply_one(binding, values)?;
        }
        Some(binding)
    }

    /// [`RowCheck::apply`] of one check that is no generator.
    fn apply_one<const N: usize>(&self, mut binding: Row<N>, values: &ValueStore) -> Option<Row<N>> {
        match self {
            RowCheck::Compare { op, domain, left, right } => {
                let (a, b) = (evaluate(left, &binding, values)?, evaluate(right, &binding, values)?);
                op.holds_for(a, b, *domain, Some(values)).then_some(binding)
            }
            RowCheck::Compute { value, .. } => {
                binding.push(evaluate(value, &binding, values)?);
                Some(binding)
            }
            RowCheck::InRange { domain, value, from, to, step } => {
                let step = match step {
                    Some(step) => Some(evaluate(step, &binding, values)?),
                    None => None,
                };
                let (from, to) = (evaluate(from, &binding, values)?, evaluate(to, &binding, values)?);
                ir::in_range(*domain, from, to, step, evaluate(value, &binding, values)?).then_some(binding)
            }
            RowCheck::Generate { .. } => unreachable!("generators are applied by `apply_all`"),
        }
    }

    /// The bindings `binding` gives after `checks`, which may hold generators: each
    /// binding a generator reaches goes on once per value of its range.
    pub fn apply_all<const N: usize>(checks: &[RowCheck], binding: Row<N>, values: &ValueStore) -> Vec<Row<N>> {
        let mut bindings = vec![binding];
        for check in checks {
            bindings = match check {
                RowCheck::Generate { domain, from, to, step } => bindings
                    .into_iter()
                    .flat_map(|b| {
                        let step = match step {
                            Some(step) => evaluate(step, &b, values).map(Some),
                            None => Some(None),
                        };
                        let bounds = (evaluate(from, &b, values), evaluate(to, &b, values), step);
                        let range = match bounds {
                            (Some(from), Some(to), Some(step)) => Some(ir::RangeValues::new(*domain, from, to, step)),
                            _ => None,
                        };
                        range.into_iter().flatten().map(move |value| {
                            let mut next = b;
                            next.push(value);
                            next
                        })
                    })
                    .collect(),
                _ => bindings.into_iter().filter_map(|b| check.apply_one(b, values)).collect(),
            };
        }
        bindings
    }

    /// Whether a check of `checks` is a generator.
    pub fn generates(checks: &[RowCheck]) -> bool {
        checks.iter().any(|c| matches!(c, RowCheck::Generate { .. }))
    }
}

/// The value of `value` over `binding`; a lone operand (most comparisons) is read
/// without evaluating an expression.
fn evaluate<const N: usize>(value: &Value, binding: &Row<N>, values: &ValueStore) -> Option<u32> {
    let read = |part: &ValueSource| match *part {
        ValueSource::Pos(p) => binding.values()[p],
        ValueSource::Const(c) => c,
    };
    match value.as_leaf() {
        Some(part) => Some(read(part)),
        None => value.eval(values, read),
    }
}

/// Where a variable's value is: its own slot, bound by a body atom, or a constant. An
/// assignment `X = t` binds no new column: `X` is wherever `t` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Slot(usize),
    Const(u32),
}

/// Works out the dataflow of `plan`, or says why this backend cannot run it.
pub(crate) fn blueprint(plan: &ProgramPlan, program: &Program) -> Result<Blueprint, Error> {
    let lattices = dominance_agrees(plan, program)?;
    let arity: Vec<usize> = program.pred_ids().map(|p| program.pred(p).arity).collect();
    if let Some(p) = program.pred_ids().find(|&p| arity[p.index()] > MAX_WIDTH) {
        return Err(Error::TooWide { pred: Some(p), rule: None, width: arity[p.index()] });
    }
    if let Some(pred) = program.chooses() {
        return Err(Error::Choice { pred });
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
                rules.extend(rule_dataflow(rule_plan, &arity, &program.consts)?);
            }
        }
        strata.push(StratumDataflow {
            preds: stratum.preds.iter().map(|p| p.index()).collect(),
            rules,
            recursive: stratum.recursive,
            lattice: lattices.contains(&stratum.preds),
        });
    }
    let mut dominances = vec![Vec::new(); arity.len()];
    for rule in &program.dominances {
        dominances[rule.pred().index()].push(Undominated::new(rule));
    }
    Ok(Blueprint { arity, derived, strata, dominances })
}

/// Whether the dataflow's result of `program`'s dominance rules is the native engines'
/// (docs/semantics.md, Subsumption), and the recursive strata of lattice relations.
///
/// The dataflow computes each stratum's relations as a fixpoint of its rules whose
/// dominated facts are removed: a fact derived from a fact that is dominated later is
/// retracted with it. The native engines remove dominated facts after each round and
/// keep what a removed fact derived. The two agree on a relation with dominance rules
///
/// - in a stratum that is not recursive: its one round derives every fact and then
///   removes the dominated ones, all at once, as the dataflow does; and
/// - in a recursive stratum of lattice relations alone (every relation there has
///   dominance rules, each a recursive `min`'s or `max`'s, whose acceptance, E0046,
///   makes every rule monotone in the lattice columns it reads): the native rounds and
///   the dataflow's fixpoint both end at the lattice's least fixpoint, each group's best
///   value, the least fixpoint being the same whichever order improves the values.
///
/// A rule whose body reads relations is refused ([`Error::DominanceBody`]). Every other
/// dominance rule is refused ([`Error::Subsumption`]): in a recursion with a
/// plain relation, or with a subsumptive clause written as such, a fact derived from a
/// dominated one may stay natively and not in a dataflow.
fn dominance_agrees(plan: &ProgramPlan, program: &Program) -> Result<Vec<Vec<PredId>>, Error> {
    if let Some(rule) = program.dominances.iter().find(|d| !d.body.is_empty() || !d.negated.is_empty()) {
        return Err(Error::DominanceBody { span: rule.span, pred: rule.pred() });
    }
    let mut lattices = Vec::new();
    for stratum in plan.strata.iter().filter(|s| s.recursive) {
        let rules: Vec<&ir::Dominance> =
            program.dominances.iter().filter(|d| stratum.preds.contains(&d.pred())).collect();
        let Some(first) = rules.first() else { continue };
        if let Some(rule) = rules.iter().find(|d| !d.lattice) {
            return Err(Error::Subsumption { span: rule.span, lattice: false, pred: rule.pred(), plain: None });
        }
        if let Some(&plain) = stratum.preds.iter().find(|&&p| program.dominances_of(p).next().is_none()) {
            return Err(Error::Subsumption { span: first.span, lattice: true, pred: first.pred(), plain: Some(plain) });
        }
        lattices.push(stratum.preds.clone());
    }
    Ok(lattices)
}

/// The slots a filter reads.
fn reads(filter: &Filter) -> Vec<usize> {
    let var = |o: &Operand| match *o {
        Operand::Var(slot) => Some(slot),
        Operand::Const(_) => None,
    };
    match filter {
        Filter::Compare { left, right, .. } => left.leaves().chain(right.leaves()).filter_map(var).collect(),
        Filter::Assign { value, .. } => value.leaves().filter_map(var).collect(),
        Filter::Absent { key, .. } => key.iter().filter_map(|(_, o)| var(o)).collect(),
        Filter::Generate { from, to, step, .. } => {
            from.leaves().chain(to.leaves()).chain(step.iter().flat_map(|s| s.leaves())).filter_map(var).collect()
        }
        Filter::InRange { slot, from, to, step, .. } => {
            let bounds = from.leaves().chain(to.leaves()).chain(step.iter().flat_map(|s| s.leaves()));
            bounds.filter_map(var).chain([*slot]).collect()
        }
    }
}

/// What one rule becomes; `None` when it can derive nothing: an assignment whose
/// inputs are all constants has no value (`Z = 5, Y = Z / 0`; lowering reports only a
/// constant written out, E0031).
fn rule_dataflow(rule: &RulePlan, arity: &[usize], values: &ValueStore) -> Result<Option<RuleDataflow>, Error> {
    let too_wide = |width: usize| Error::TooWide { pred: None, rule: Some(rule.rule), width };
    // A reduction reads the one relation its step scans, whole, as the native engine
    // does: lowering gives that atom a distinct variable per column.
    if let Some(reduce) = &rule.reduce {
        let Some(step) = rule.steps.first() else { return Ok(None) };
        return Ok(Some(RuleDataflow {
            head: rule.head.index(),
            scan: None,
            checks: Checks::default(),
            joins: Vec::new(),
            project: Vec::new(),
            reduce: Some(Reduction {
                pred: step.pred.index(),
                keys: reduce.keys,
                op: reduce.op,
                domain: reduce.domain,
            }),
        }));
    }
    // Filters that read no variable a step binds (constants, assignments of constants)
    // are checked with the first step's: they hold or fail alike for every binding.
    let mut step_filters: Vec<Vec<&Filter>> = rule.steps.iter().map(|s| s.filters.iter().collect()).collect();
    let mut start_filters: Vec<&Filter> = rule.initial.iter().collect();
    if let Some(first) = step_filters.first_mut() {
        first.splice(0..0, start_filters.drain(..));
    }
    // Resolve assignments: `source[slot]` says where each variable's value is. An
    // assignment of a lone operand, or of an expression of constants, binds no column;
    // one that computes from bound variables is a computed column of its own slot.
    let mut source: Vec<Source> = (0..rule.vars.len()).map(Source::Slot).collect();
    for filter in start_filters.iter().chain(step_filters.iter().flatten()) {
        let Filter::Assign { slot, value, .. } = filter else { continue };
        let constant = |o: &Operand| match *o {
            Operand::Const(c) => Some(c),
            Operand::Var(from) => match source[from] {
                Source::Const(c) => Some(c),
                Source::Slot(_) => None,
            },
        };
        source[*slot] = match (value.as_leaf(), value.map(constant)) {
            (Some(&Operand::Var(from)), None) => source[from],
            (_, Some(constants)) => match constants.eval(values, |&c| c) {
                Some(c) => Source::Const(c),
                None => return Ok(None),
            },
            (_, None) => Source::Slot(*slot),
        };
    }
    let slot_of = |slot: usize| match source[slot] {
        Source::Slot(s) => Some(s),
        Source::Const(_) => None,
    };
    // `needed_after[i]`: the slots read after step `i`'s join (by its checks, a later
    // key, a later check or the head), which the binding it yields must hold.
    let mut needed_after: Vec<Vec<bool>> = vec![vec![false; rule.vars.len()]; rule.steps.len()];
    let mut needed = vec![false; rule.vars.len()];
    for out in &rule.project {
        if let Output::Var(slot) = *out {
            if let Some(s) = slot_of(slot) {
                needed[s] = true;
            }
        }
    }
    for (i, step) in rule.steps.iter().enumerate().rev() {
        for filter in &step_filters[i] {
            for s in reads(filter).into_iter().filter_map(slot_of) {
                needed[s] = true;
            }
        }
        needed_after[i] = needed.clone();
        for &(_, slot) in &step.key {
            if let Some(s) = slot_of(slot) {
                needed[s] = true;
            }
        }
    }
    // The slots the binding holds, in order, and the part a slot's value is read from.
    let mut live: Vec<usize> = Vec::new();
    let part = |live: &[usize], slot: usize| match source[slot] {
        Source::Const(c) => ValueSource::Const(c),
        Source::Slot(s) => ValueSource::Pos(live.iter().position(|&l| l == s).expect("a slot read is live")),
    };
    let operand = |live: &[usize], o: Operand| match o {
        Operand::Var(slot) => part(live, slot),
        Operand::Const(c) => ValueSource::Const(c),
    };
    let value = |live: &[usize], computed: &Computed| {
        computed.map(|&o| Some(operand(live, o))).expect("every operand has a part")
    };
    // The checks of `filters` over the binding `live` holds; each computed column
    // extends it.
    let checks = |live: &mut Vec<usize>, filters: &[&Filter]| -> Result<Checks, Error> {
        let mut checks = Checks::default();
        for filter in filters {
            match filter {
                Filter::Compare { op, domain, left, right, .. } => checks.row.push(RowCheck::Compare {
                    op: *op,
                    domain: *domain,
                    left: value(live, left),
                    right: value(live, right),
                }),
                Filter::Assign { slot, value: computed, .. } if source[*slot] == Source::Slot(*slot) => {
                    checks.row.push(RowCheck::Compute { value: value(live, computed) });
                    live.push(*slot);
                    if live.len() > MAX_WIDTH {
                        return Err(too_wide(live.len()));
                    }
                }
                // Resolved above: the assigned variable is read where its value is.
                Filter::Assign { .. } => {}
                Filter::InRange { slot, domain, from, to, step, .. } => checks.row.push(RowCheck::InRange {
                    domain: *domain,
                    value: ir::Expr::leaf(part(live, *slot)),
                    from: value(live, from),
                    to: value(live, to),
                    step: step.as_ref().map(|s| value(live, s)),
                }),
                Filter::Generate { slot, domain, from, to, step, .. } => {
                    checks.row.push(RowCheck::Generate {
                        domain: *domain,
                        from: value(live, from),
                        to: value(live, to),
                        step: step.as_ref().map(|s| value(live, s)),
                    });
                    live.push(*slot);
                    if live.len() > MAX_WIDTH {
                        return Err(too_wide(live.len()));
                    }
                }
                Filter::Absent { pred, key, .. } => checks.absent.push(Absent {
                    pred: pred.index(),
                    cols: key.iter().map(|&(col, _)| col).collect(),
                    whole: key.len() == arity[pred.index()],
                    key: key.iter().map(|&(_, o)| operand(live, o)).collect(),
                }),
            }
        }
        Ok(checks)
    };
    let project = |live: &[usize]| -> Vec<ValueSource> {
        rule.project
            .iter()
            .map(|out| match *out {
                Output::Const(c) => ValueSource::Const(c),
                Output::Var(slot) => part(live, slot),
            })
            .collect()
    };
    let Some((first, rest)) = rule.steps.split_first() else {
        let checks = checks(&mut live, &start_filters)?;
        let project = project(&live);
        return Ok(Some(RuleDataflow {
            head: rule.head.index(),
            scan: None,
            checks,
            joins: Vec::new(),
            project,
            reduce: None,
        }));
    };
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
    // Before the first step only assignments of constants bind variables, so a key of
    // the first atom is a selection on a constant.
    let mut consts = first.consts.clone();
    for &(col, slot) in &first.key {
        match source[slot] {
            Source::Const(c) => consts.push((col, c)),
            Source::Slot(_) => unreachable!("only constants are bound before the first step"),
        }
    }
    let scan = Scan { pred: first.pred.index(), consts, repeats: first.repeats.clone(), keep };
    let first_checks = checks(&mut live, &step_filters[0])?;
    let mut joins = Vec::with_capacity(rest.len());
    for (i, step) in rest.iter().enumerate() {
        let needed = &needed_after[i + 1];
        let mut keyed: Vec<(usize, ValueSource)> = step
            .key
            .iter()
            .map(|&(col, slot)| (col, part(&live, slot)))
            .chain(step.consts.iter().map(|&(col, value)| (col, ValueSource::Const(value))))
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
        let checks = checks(&mut next, &step_filters[i + 1])?;
        joins.push(Join {
            pred: step.pred.index(),
            key_cols: keyed.iter().map(|&(col, _)| col).collect(),
            left_key: keyed.iter().map(|&(_, part)| part).collect(),
            repeats: step.repeats.clone(),
            keep_left,
            keep_right,
            checks,
        });
        live = next;
    }
    let project = project(&live);
    Ok(Some(RuleDataflow {
        head: rule.head.index(),
        scan: Some(scan),
        checks: first_checks,
        joins,
        project,
        reduce: None,
    }))
}

/// For messages: a rule's or predicate's name.
pub(crate) fn describe(program: &Program, pred: Option<PredId>, rule: Option<RuleId>) -> String {
    match (pred, rule) {
        (Some(p), _) => format!("relation `{}`", program.pred_name(p)),
        (None, Some(r)) => format!("rule `{}`", program.display_rule(program.rule(r))),
        (None, None) => "the program".to_string(),
    }
}
