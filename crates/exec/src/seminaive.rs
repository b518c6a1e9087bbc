//! Stratified semi-naive evaluation, written as propagation of deltas so that the same
//! code computes a fixpoint from scratch and propagates insertions during DRed.

use crate::choice::{ChoiceKeys, Chooser};
use crate::database::Database;
use crate::join::{JoinStats, Membership, PhysPlan, Scratch, View};
use crate::limits::ResourceError;
use crate::relation::{Index, Rows};
use crate::split::run_staged_split;
use crate::{JoinYield, Progress, Round, Threads};
use ir::{PredId, Program, RuleId};
use plan::{AtomSource, Output, ProgramPlan};
use rustc_hash::FxHashMap;
use std::cell::{OnceCell, RefCell};
use std::cmp::Ordering;

/// A well-formed rule compiled for semi-naive evaluation and DRed.
pub(crate) struct CompiledRule {
    pub(crate) rule: RuleId,
    pub(crate) head: PredId,
    pub(crate) body_preds: Vec<PredId>,
    /// For each body position, a plan that reads that atom first (as the delta): what
    /// DRed's over-deletion runs. Made at once for a short body, by
    /// [`Compiled::add_guards`] for a long one (only DRed reads them).
    pub(crate) delta: Vec<PhysPlan>,
    /// The same for the body without its implied guards (`implied.rs`), with the
    /// predicate of each delta position: what the fixpoint loop runs. Made at once for a
    /// short body; for a long one when the fixpoint first reads that delta, since a body
    /// of `n` atoms has `n` plans of `n` steps and most deltas stay empty.
    pub(crate) fixpoint: Vec<(PredId, OnceCell<PhysPlan>)>,
    pub(crate) head_arity: usize,
    /// The plan that reads candidate head facts first (DRed rederivation), once
    /// [`Compiled::add_guards`] made it.
    pub(crate) guarded: Option<PhysPlan>,
    /// The rows `guarded` visits per candidate, estimated ([`crate::order::probe_cost`]).
    pub(crate) guarded_cost: f64,
    /// When it differs, the rederivation plan that probes the indexes holding rows when
    /// [`Compiled::add_guards`] made it, with its cost per candidate: a batch of few
    /// candidates runs it rather than build an index of `guarded` ([`CompiledRule::rederivation`]).
    pub(crate) guarded_on_built: Option<(PhysPlan, f64)>,
    /// The same plan testing fully bound atoms by their rows, so that it can read the rows
    /// of lower rank only: ranked maintenance's support check, once
    /// [`Compiled::add_guards`] made it for a ranked state.
    pub(crate) rank_check: Option<PhysPlan>,
    /// The head tuple of an empty-body rule.
    pub(crate) fact: Option<Vec<u32>>,
    /// The plan of a rule without positive atoms but with comparisons or negations,
    /// which its tests decide once, when its stratum starts.
    pub(crate) fact_plan: Option<PhysPlan>,
    /// The rule as the fixpoint runs it (implied guards dropped), kept when its body is
    /// short enough to re-choose the join orders of `fixpoint` from the data, or so long
    /// that they are made when first needed.
    pub(crate) text: Option<ir::Rule>,
    /// The program's values, for comparisons that order them as integers.
    pub(crate) values: ir::ValueStore,
    /// The plan of a reduction (`reduce.rs`), which runs once when its stratum starts
    /// (and, in a recursive stratum, over each round's new rows), in place of joins: such
    /// a rule has no delta or fixpoint plans.
    pub(crate) reduction: Option<plan::RulePlan>,
}

impl CompiledRule {
    /// The fixpoint plan reading body position `i` first, made now if it was not.
    pub(crate) fn fixpoint_plan(&self, i: usize, db: &mut Database) -> &PhysPlan {
        self.fixpoint[i].1.get_or_init(|| {
            let text = self.text.as_ref().expect("a rule without its plans keeps its text");
            let plan = plan::plan_rule_text_delta_first(text, self.rule, &|p| db.arity(p), i);
            PhysPlan::indexed(&plan, self.head_arity, db, Membership::HeadBusy, &self.values)
        })
    }
}

/// The longest body whose plans are all made when the rule is compiled.
const EAGER_MAX_BODY: usize = 64;

pub(crate) struct CompiledStratum {
    /// Indexes into [`Compiled::rules`].
    pub(crate) rules: Vec<usize>,
    pub(crate) recursive: bool,
    /// The size limits of its heads ([`ir::Pred::size_limit`]), when it is recursive: a
    /// non-recursive stratum is never limited, as in Soufflé.
    pub(crate) limits: Vec<(PredId, u64)>,
    /// The predicates its rules derive, sorted: the only relations it changes.
    pub(crate) heads: Vec<PredId>,
    /// Every predicate its rules read or derive, sorted: the relations whose row ranges
    /// its joins look at. A stratum costs time in these, never in the whole database.
    pub(crate) reads: Vec<PredId>,
}

/// Everything the semi-naive engine and DRed need, with the indexes it probes already
/// created in the database.
pub(crate) struct Compiled {
    pub(crate) rules: Vec<CompiledRule>,
    pub(crate) strata: Vec<CompiledStratum>,
    /// Whether each predicate heads a rule.
    pub(crate) derived: Vec<bool>,
    /// The fixpoint joins whose order [`propagate_with`] chose again from the data, kept
    /// from one call to the next: a maintained state propagates every batch, and choosing
    /// afresh each time sampled the closure's fan-outs again (most of a one-edge insert's
    /// time on a forest's closure). Index ids in the plans are those of the database the
    /// rules were compiled against, as in every other plan here.
    replanned: RefCell<FxHashMap<(usize, usize), Replanned>>,
    /// The keys of the relations with a `choice-domain` (`choice.rs`).
    pub(crate) choices: ChoiceKeys,
    /// The program's dominance rules, applied after every round of a stratum.
    pub(crate) dominances: crate::dominance::Dominances,
}

impl Compiled {
    pub(crate) fn new(plan: &ProgramPlan, program: &Program, db: &mut Database) -> Self {
        Self::compile(plan, program, db, false)
    }

    /// [`Compiled::new`] for a database that already holds the fixpoint of `plan` evaluated
    /// from no derived facts, whose derived facts therefore satisfy what the rules imply.
    pub(crate) fn for_fixpoint(plan: &ProgramPlan, program: &Program, db: &mut Database) -> Self {
        Self::compile(plan, program, db, true)
    }

    fn compile(plan: &ProgramPlan, program: &Program, db: &mut Database, rule_derived: bool) -> Self {
        let mut rules = Vec::new();
        let mut position_of = vec![None; plan.rules.len()];
        let mut derived = vec![false; db.relation_count()];
        let fires: Vec<bool> = plan.rules.iter().map(plan::RulePlan::fires).collect();
        let reduced = crate::implied::reduce(program, &fires, db, rule_derived);
        for rule_plan in plan.rules.iter().filter(|r| r.fires()) {
            let id = rule_plan.rule;
            let head = rule_plan.head;
            let head_arity = db.arity(head);
            derived[head.index()] = true;
            let body = &program.rule(id).body;
            if crate::reduce::is_reduction(rule_plan) {
                position_of[id.index()] = Some(rules.len());
                rules.push(CompiledRule {
                    rule: id,
                    head,
                    body_preds: body.iter().map(|a| a.pred).collect(),
                    delta: Vec::new(),
                    fixpoint: Vec::new(),
                    guarded: None,
                    guarded_cost: 0.0,
                    guarded_on_built: None,
                    rank_check: None,
                    fact: None,
                    fact_plan: None,
                    text: None,
                    head_arity,
                    values: program.consts.clone(),
                    reduction: Some(rule_plan.clone()),
                });
                continue;
            }
            let eager = body.len() <= EAGER_MAX_BODY;
            let delta: Vec<PhysPlan> = if eager { delta_plans(program, id, head_arity, db) } else { Vec::new() };
            let fixpoint_rule = match &reduced {
                Some(reduced) => reduced.rule(id),
                None => program.rule(id),
            };
            let fixpoint = match &reduced {
                Some(reduced) if eager && reduced.rule(id).body.len() < body.len() => {
                    let reduced_body = &reduced.rule(id).body;
                    (0..reduced_body.len())
                        .map(|i| {
                            let plan = plan::plan_rule_delta_first(reduced, id, i);
                            let phys = PhysPlan::indexed(&plan, head_arity, db, Membership::HeadBusy, &program.consts);
                            (reduced_body[i].pred, OnceCell::from(phys))
                        })
                        .collect()
                }
                _ if eager => body.iter().map(|a| a.pred).zip(delta.iter().cloned().map(OnceCell::from)).collect(),
                _ => fixpoint_rule.body.iter().map(|a| (a.pred, OnceCell::new())).collect(),
            };
            let tested = body.is_empty() && !program.rule(id).is_positive();
            let fact_plan =
                tested.then(|| PhysPlan::indexed(rule_plan, head_arity, db, Membership::HeadBusy, &program.consts));
            let fact = (body.is_empty() && !tested).then(|| {
                rule_plan
                    .project
                    .iter()
                    .map(|o| match *o {
                        Output::Const(c) => c,
                        // An empty body binds no variable; such a rule is not well formed.
                        Output::Var(_) => 0,
                    })
                    .collect()
            });
            let keep_text = (2..=REPLAN_MAX_BODY).contains(&fixpoint_rule.body.len()) || !eager;
            let text = keep_text.then(|| fixpoint_rule.clone());
            position_of[id.index()] = Some(rules.len());
            rules.push(CompiledRule {
                rule: id,
                head,
                body_preds: body.iter().map(|a| a.pred).collect(),
                delta,
                fixpoint,
                guarded: None,
                guarded_cost: 0.0,
                guarded_on_built: None,
                rank_check: None,
                fact,
                fact_plan,
                text,
                head_arity,
                values: program.consts.clone(),
                reduction: None,
            });
        }
        let strata = plan
            .strata
            .iter()
            .map(|s| {
                let members: Vec<usize> =
                    s.rules.iter().filter_map(|id| position_of.get(id.index()).copied().flatten()).collect();
                let mut heads: Vec<PredId> = members.iter().map(|&r| rules[r].head).collect();
                heads.sort_unstable();
                heads.dedup();
                let mut reads = heads.clone();
                reads.extend(members.iter().flat_map(|&r| rules[r].body_preds.iter().copied()));
                reads.sort_unstable();
                reads.dedup();
                let limits = match s.recursive {
                    true => heads.iter().filter_map(|&h| Some((h, program.pred(h).size_limit?.tuples))).collect(),
                    false => Vec::new(),
                };
                CompiledStratum { rules: members, recursive: s.recursive, limits, heads, reads }
            })
            .collect();
        let dominances = crate::dominance::Dominances::new(program);
        Compiled {
            rules,
            strata,
            derived,
            replanned: RefCell::default(),
            choices: ChoiceKeys::new(program),
            dominances,
        }
    }

    /// Makes the rederivation plans of DRed. Their join order depends on the data (a
    /// candidate fact binds the head variables, and which body atom to probe first
    /// matters a lot), so they are made once the database has been evaluated. With
    /// `ranked`, also the support checks of ranked maintenance, in the same order.
    pub(crate) fn add_guards(&mut self, program: &Program, db: &mut Database, ranked: bool) {
        // A reduction is maintained group by group (`dred_strata.rs`), never rederived.
        for rule in self.rules.iter_mut().filter(|r| r.reduction.is_none()) {
            if rule.delta.len() < rule.body_preds.len() {
                rule.delta = delta_plans(program, rule.rule, rule.head_arity, db);
            }
            let order = crate::order::guarded_order(program, rule.rule, db);
            let on_built = crate::order::guarded_order_on_built(program, rule.rule, db);
            rule.guarded_cost = crate::order::probe_cost(program, rule.rule, &order, db);
            let cost_on_built = crate::order::probe_cost(program, rule.rule, &on_built, db);
            let plan = plan::plan_rule_in_order(program, rule.rule, &order);
            let arity = db.arity(rule.head);
            // Rederivation stages into a database of its own, so every set can be read.
            rule.guarded = Some(PhysPlan::indexed(&plan, arity, db, Membership::Sets, &program.consts));
            rule.guarded_on_built = (on_built != order).then(|| {
                let plan = plan::plan_rule_in_order(program, rule.rule, &on_built);
                (PhysPlan::indexed(&plan, arity, db, Membership::Sets, &program.consts), cost_on_built)
            });
            if ranked {
                rule.rank_check = Some(PhysPlan::indexed(&plan, arity, db, Membership::Located, &program.consts));
            }
        }
    }
}

impl CompiledRule {
    /// The rederivation plan for `candidates` candidate facts: the selective one
    /// (`guarded`), unless the plan along the indexes that exist visits fewer rows than it
    /// does with the rows of the indexes it would build first.
    pub(crate) fn rederivation(&self, candidates: usize, rows: &[Rows]) -> Option<&PhysPlan> {
        let guarded = self.guarded.as_ref()?;
        let Some((on_built, cost_on_built)) = &self.guarded_on_built else { return Some(guarded) };
        let n = candidates as f64;
        let first_rows = Some(u32::try_from(candidates).unwrap_or(u32::MAX));
        let selective = n * self.guarded_cost + guarded.sync_cost(rows, first_rows) as f64;
        let along_built = n * cost_on_built + on_built.sync_cost(rows, first_rows) as f64;
        Some(if along_built < selective { on_built } else { guarded })
    }
}

/// The plans of `rule` reading each body position first.
fn delta_plans(program: &Program, rule: RuleId, head_arity: usize, db: &mut Database) -> Vec<PhysPlan> {
    (0..program.rule(rule).body.len())
        .map(|i| {
            let plan = plan::plan_rule_delta_first(program, rule, i);
            PhysPlan::indexed(&plan, head_arity, db, Membership::HeadBusy, &program.consts)
        })
        .collect()
}

/// The state of one evaluation: counters, recorded rounds and reused buffers.
pub(crate) struct Run {
    record_rounds: bool,
    progress: Option<Box<dyn FnMut(Progress)>>,
    pub(crate) rounds: Vec<Round>,
    pub(crate) iterations: usize,
    pub(crate) stats: JoinStats,
    pub(crate) scratch: Scratch,
    /// The threads a join may be split over ([`run_staged_split`]).
    pub(crate) threads: Threads,
    /// The facts in the database, kept up to date for progress reports.
    facts: usize,
    /// Whether the size limits of relations ([`ir::Pred::size_limit`]) end fixpoints: in
    /// an evaluation from the input facts only, never in maintenance.
    pub(crate) limit_sizes: bool,
}

impl Run {
    pub(crate) fn new(record_rounds: bool, progress: Option<Box<dyn FnMut(Progress)>>) -> Self {
        Run {
            record_rounds,
            progress,
            rounds: Vec::new(),
            iterations: 0,
            stats: JoinStats::default(),
            scratch: Scratch::default(),
            threads: Threads::ONE,
            facts: 0,
            limit_sizes: false,
        }
    }

    /// Starts counting the facts of `db` for progress reports: once per evaluation, so
    /// that a round costs time in the relations it changed only.
    pub(crate) fn count_facts(&mut self, db: &Database) {
        if self.progress.is_some() {
            self.facts = db.total_len();
        }
    }

    /// Ends a round in which only the relations of `begin` can have grown, each from the
    /// row count given: records their new facts if asked (`begin` sorted by predicate),
    /// reports progress, and tells whether anything was added. Rows are only appended
    /// during a round, so the growth in rows is the growth in facts.
    pub(crate) fn finish_round(&mut self, db: &Database, begin: impl Iterator<Item = (PredId, u32)> + Clone) -> bool {
        self.iterations += 1;
        let grown: usize = begin.clone().map(|(p, start)| (db.rel(p).end() - start) as usize).sum();
        if self.record_rounds {
            let new = begin
                .filter(|&(p, start)| db.rel(p).end() > start)
                .map(|(p, start)| (p, db.sorted_rows_since(p, start)))
                .filter(|(_, tuples)| !tuples.is_empty())
                .collect();
            self.rounds.push(Round { round: self.iterations, new });
        }
        self.facts += grown;
        if let Some(progress) = self.progress.as_mut() {
            progress(Progress { iteration: self.iterations, facts: self.facts });
        }
        grown > 0
    }
}

/// Propagates to a fixpoint, stratum by stratum. On entry the rows of each relation `p`
/// below `start[p]` must be closed under the rules (every one-step consequence is present)
/// and the rows from `start[p]` on are the delta still to propagate. From scratch that is
/// `start = 0` everywhere with `fire_facts` set, so that empty-body rules add their heads.
///
/// Within a stratum each iteration evaluates, for every rule and every body position whose
/// relation has a delta, the rule with that atom reading the delta, atoms to its left the
/// old rows and atoms to its right the full rows as of the start of the iteration.
///
/// Stops with the [`ResourceError`] of the first relation that stops growing (checked
/// after each join), leaving `db` incomplete.
pub(crate) fn propagate(
    c: &Compiled,
    db: &mut Database,
    start: &[u32],
    fire_facts: bool,
    run: &mut Run,
) -> Result<(), ResourceError> {
    propagate_with(c, db, start, fire_facts, run, &mut |_, _, _| Ok(()))
}

/// Called by [`propagate_with`] as each stratum starts, before its fixpoint: it may
/// append rows to the stratum's own relations, which the fixpoint then reads as delta.
pub(crate) type StratumStart<'h> =
    dyn FnMut(&CompiledStratum, &mut Database, &mut Run) -> Result<(), ResourceError> + 'h;

/// [`propagate`] calling `before` as each stratum starts: stratified maintenance brings
/// a stratum's own relations up to date with the strata below it there (`dred_strata.rs`).
pub(crate) fn propagate_with(
    c: &Compiled,
    db: &mut Database,
    start: &[u32],
    fire_facts: bool,
    run: &mut Run,
    before: &mut StratumStart<'_>,
) -> Result<(), ResourceError> {
    // Input relations loaded past their limit or the memory budget.
    db.measure_memory();
    db.check()?;
    run.count_facts(db);
    // Taken for the call and given back at its end (an error loses it: it is a cache).
    let mut replanned = c.replanned.take();
    // Row ranges per relation, kept up to date only for the relations the current stratum
    // reads, so that a program of many small strata is not a pass over every relation each.
    let mut lo = start.to_vec();
    let mut hi = db.ends();
    let mut ranges = Vec::new();
    let mut chooser = Chooser::new(&c.choices);
    for stratum in &c.strata {
        for &q in &stratum.reads {
            lo[q.index()] = start[q.index()];
        }
        before(stratum, db, run)?;
        let mut round_begin: Vec<u32> = stratum.heads.iter().map(|&h| db.rel(h).end()).collect();
        // In a stratum with a choice, facts are the first round's, as its joins are
        // (`choice.rs`): they are staged and become rows as that round ends.
        let chooses = stratum.heads.iter().any(|&h| c.choices.chooses(h));
        if fire_facts {
            for rule in stratum.rules.iter().map(|&r| &c.rules[r]) {
                if let Some(reduction) = &rule.reduction {
                    crate::reduce::evaluate(reduction, db, &mut run.stats)?;
                }
                if let Some(fact) = &rule.fact {
                    run.stats.firings += 1;
                    match chooser.candidates(rule.head, fact.len()) {
                        Some(candidates) => _ = candidates.stage(&db.rows[rule.head.index()], fact),
                        None if chooses => _ = db.stage(rule.head, fact),
                        None => _ = db.insert(rule.head, fact),
                    }
                    db.check_pred(rule.head)?;
                }
                if let Some(plan) = &rule.fact_plan {
                    plan.sync_indexes(&mut db.rows);
                    // Staged as they come, so that a generator of many values is held to
                    // the head's limits as it runs (a relation that stops growing stops
                    // the run), not gathered first.
                    let head = rule.head.index();
                    let views: Vec<View<'_>> = plan.negation_views(&db.rows).collect();
                    let stop = std::cell::Cell::new(false);
                    let (rows, set) = (&db.rows[head], &mut db.sets[head]);
                    match chooser.candidates(rule.head, rule.head_arity) {
                        Some(candidates) => {
                            plan.run(&views, &mut run.scratch, &mut run.stats, &mut |tuple| {
                                _ = candidates.stage(rows, tuple);
                            });
                        }
                        None => {
                            plan.run_until(&views, &mut run.scratch, &mut run.stats, &stop, &mut |tuple| {
                                _ = set.stage(rows, tuple);
                                stop.set(set.failure.is_some());
                            });
                            drop(views);
                            if !chooses {
                                db.commit(rule.head);
                            }
                        }
                    }
                    db.check_pred(rule.head)?;
                }
            }
        }
        // A recursive stratum's reductions are correlated ones (`reduce.rs`): each round
        // first reduces the groups the round before completed, which this round's joins
        // then read as delta. Each holds where its rows were reduced up to.
        let mut reduced: Vec<(&plan::RulePlan, u32)> = match stratum.recursive {
            true => stratum
                .rules
                .iter()
                .filter_map(|&r| c.rules[r].reduction.as_ref())
                .map(|plan| {
                    // Rows before `start` were reduced by the evaluation that made them.
                    let from = match (fire_facts, plan.steps.first()) {
                        (false, Some(step)) => start[step.pred.index()],
                        _ => crate::reduce::rows_end(plan, db),
                    };
                    (plan, from)
                })
                .collect(),
            false => Vec::new(),
        };
        let mut guards = StratumIndexes::new(stratum);
        // Per join, what it did the last time it ran: what decides whether splitting it
        // over threads pays.
        let mut yields: FxHashMap<(usize, usize), JoinYield> = FxHashMap::default();
        // A stratum with a size limit iterates as Soufflé's does, which the limit makes
        // observable (docs/semantics.md, Soufflé programs: `.limitsize`): a first round of
        // the rules that read no relation of the stratum, then rounds in which every row
        // so far is delta, and no round starts once a limited relation holds its limit.
        let limited = run.limit_sizes && !stratum.limits.is_empty();
        let mut first_round = limited;
        let mut rounds = 0;
        loop {
            rounds += 1;
            if limited && !first_round && stratum.limits.iter().any(|&(p, n)| db.len(p) as u64 >= n) {
                break;
            }
            for (plan, from) in &mut reduced {
                *from = crate::reduce::evaluate_rows(plan, db, *from, &mut run.stats)?;
            }
            for &q in &stratum.reads {
                hi[q.index()] = db.rel(q).end();
            }
            for &r in &stratum.rules {
                let rule = &c.rules[r];
                // Atom `i` reads the delta, those before it the old rows and those after
                // it all rows: no join runs while a relation is empty, and none past the
                // first atom without old rows, so a long body is not a plan per atom.
                if rule.fixpoint.iter().any(|&(q, _)| hi[q.index()] == 0) {
                    continue;
                }
                if first_round && rule.fixpoint.iter().any(|&(q, _)| stratum.heads.binary_search(&q).is_ok()) {
                    continue;
                }
                for (i, &(delta_pred, _)) in rule.fixpoint.iter().enumerate() {
                    if i > 0 && lo[rule.fixpoint[i - 1].0.index()] == 0 {
                        break;
                    }
                    let delta_pred = delta_pred.index();
                    if lo[delta_pred] >= hi[delta_pred] {
                        continue;
                    }
                    let planned = rule.fixpoint_plan(i, db);
                    if let Some(text) = rule.text.as_ref().filter(|t| t.body.len() <= REPLAN_MAX_BODY) {
                        if replan((r, i), rule.rule, planned, text, &mut replanned, &stratum.heads, db) {
                            guards.forget((r, i));
                        }
                    }
                    let variant = replanned.get(&(r, i)).map_or(planned, |x| &x.plan);
                    ranges.clear();
                    ranges.extend(variant.steps.iter().map(|s| {
                        let q = s.pred.index();
                        let position = match s.source {
                            AtomSource::Body(j) => j,
                            AtomSource::Head => i,
                        };
                        match position.cmp(&i) {
                            Ordering::Less => (0, lo[q]),
                            Ordering::Equal => (lo[q], hi[q]),
                            Ordering::Greater => (0, hi[q]),
                        }
                    }));
                    if ranges.iter().any(|&(from, to)| from >= to) {
                        continue;
                    }
                    // Only now, with a join certain to run, are its indexes brought up to date
                    // (one probed only a few times perhaps not: it scans instead).
                    variant.sync_indexes_deferring(&mut db.rows, ranges[0].1 - ranges[0].0);
                    // A set given back when its stratum ended is built again for a join that
                    // tests whole tuples of it (`Database::release_unprobed_sets_once_derived`).
                    for q in variant.tested_preds() {
                        db.rebuild_released_set(q);
                    }
                    // The indexes may have grown, and the head's room to stage is measured
                    // against what the others hold now.
                    for step in &variant.steps {
                        db.measure(step.pred);
                        db.check_pred(step.pred)?;
                    }
                    db.measure(rule.head);
                    db.check_pred(rule.head)?;
                    if stratum.recursive {
                        guards.prepare(variant, (r, i), hi[delta_pred] - lo[delta_pred], db);
                    }
                    let h = rule.head.index();
                    let Database { rows, sets, .. } = &mut *db;
                    let (before, rest) = sets.split_at_mut(h);
                    let (head_set, after) = rest.split_first_mut().expect("the head has a set");
                    let set_of = |q: usize| match q.cmp(&h) {
                        Ordering::Less => Some(&before[q]),
                        Ordering::Equal => None,
                        Ordering::Greater => Some(&after[q - h - 1]),
                    };
                    let views: Vec<View<'_>> = variant
                        .steps
                        .iter()
                        .zip(&ranges)
                        .enumerate()
                        .map(|(k, (s, &(from, to)))| {
                            let q = s.pred.index();
                            View::new(&rows[q], from, to).with_set(set_of(q)).with_filtered(guards.get((r, i), k))
                        })
                        .chain(variant.negation_views(rows))
                        .collect();
                    let delta = hi[delta_pred] - lo[delta_pred];
                    let threads = run.threads.for_join(yields.get(&(r, i)).copied(), delta);
                    // A relation with a choice domain gets the round's candidates at its end.
                    let target = chooser.candidates(rule.head, rule.head_arity).unwrap_or(head_set);
                    let (firings, staged) = (run.stats.firings, target.staged_len());
                    run_staged_split(variant, &views, &rows[h], target, threads, &mut run.scratch, &mut run.stats);
                    let new = target.staged_len() - staged;
                    yields.insert((r, i), JoinYield::new(run.stats.firings - firings, delta, new));
                    db.commit(rule.head);
                    db.check_pred(rule.head)?;
                }
            }
            c.dominances.reduce(&stratum.heads, &round_begin, db);
            for &q in &stratum.reads {
                // After a limited stratum's first round its own relations are delta whole.
                if !(first_round && stratum.heads.binary_search(&q).is_ok()) {
                    lo[q.index()] = hi[q.index()];
                }
            }
            if chooses {
                for &h in &stratum.heads {
                    db.commit(h);
                    db.check_pred(h)?;
                }
                chooser.choose(db)?;
            }
            let grew = run.finish_round(db, stratum.heads.iter().copied().zip(round_begin.iter().copied()));
            for (begin, &h) in round_begin.iter_mut().zip(&stratum.heads) {
                *begin = db.rel(h).end();
            }
            if !std::mem::take(&mut first_round) && (!grew || !stratum.recursive) {
                break;
            }
            c.dominances.check_improving(&stratum.heads, rounds, db)?;
        }
        db.finish_stratum(&stratum.heads);
    }
    c.replanned.replace(replanned);
    Ok(())
}

/// The longest body whose fixpoint join orders are re-chosen from the data; longer ones
/// keep the order [`plan::plan_rule_delta_first`] gave them.
const REPLAN_MAX_BODY: usize = 12;

/// A relation must have grown past this many rows, and to twice its size when the plan
/// was chosen, for a join order to be chosen again.
const REPLAN_MIN_ROWS: usize = 64;

/// A fixpoint join whose order was chosen from the data, and the sizes of the relations
/// of its steps then.
struct Replanned {
    plan: PhysPlan,
    sizes: Vec<usize>,
}

/// Chooses the order of join `join` again from the data ([`crate::order::delta_order`])
/// when one of the stratum's own relations (`inside`, sorted) among its steps has
/// doubled since the order was chosen (or has grown from empty, when the order was
/// chosen without data): which atom to probe after the delta depends on how many rows a
/// probe returns, and derived relations are empty when evaluation starts. Relations of
/// earlier strata and inputs do not change while the stratum runs, so their size alone
/// never asks for a new order: a point query over a large input whose derived
/// relations stay small keeps its planned order and never pays for sampling the input
/// or indexing it by another column. The right-linear closure `@a:R^bb(X,Z) <- @m:R^bb(X,Z),
/// E(X,Y), @a:R^bb(Y,Z)` from a delta of `@a:R^bb(Y,Z)` must probe `E` by `Y` (one row),
/// not the demands by `Z` (all of them, as they share the queried `Z`). Tells whether
/// the plan changed.
fn replan(
    join: (usize, usize),
    id: RuleId,
    planned: &PhysPlan,
    rule: &ir::Rule,
    replanned: &mut FxHashMap<(usize, usize), Replanned>,
    inside: &[PredId],
    db: &mut Database,
) -> bool {
    let current = replanned.get(&join);
    let steps = &current.map_or(planned, |x| &x.plan).steps;
    let grown = steps.iter().enumerate().any(|(k, s)| {
        if inside.binary_search(&s.pred).is_err() {
            return false;
        }
        let now = db.len(s.pred);
        let then = current.map_or(0, |x| x.sizes[k]);
        now >= REPLAN_MIN_ROWS && now > 2 * then
    });
    if !grown {
        return false;
    }
    let order = crate::order::delta_order(rule, join.1, db);
    let text = plan::plan_rule_text_in_order(rule, id, &|p| db.arity(p), &order);
    let values = planned.values.clone();
    let plan = PhysPlan::indexed(&text, planned.head_arity, db, Membership::HeadBusy, &values);
    let sizes = plan.steps.iter().map(|s| db.len(s.pred)).collect();
    replanned.insert(join, Replanned { plan, sizes });
    true
}

/// Filtered indexes for the joins of one stratum's fixpoint, of two kinds:
///
/// - *Guards* ([`PhysPlan::filtered_index`]): a guard can be applied once per row instead
///   of once per probe when the relations of the index step and of its guards are all
///   outside the stratum, so that nothing changes them while the stratum runs: the demand
///   guard `@m:R^bf(X)` of right-linear closure, say, filters the edges `E(X,Y)` read by `Y`.
/// - *Semi-joins* ([`PhysPlan::semijoin_filter`]): an index step whose next step reads a
///   relation outside the stratum by values it binds reads only the rows that can have a
///   next row. Its relation may be one the stratum derives: the index is brought up to
///   date with it before every join, row by row. In points-to, a new `hpt(b, o)` then
///   walks the pointers of `b` that some `load` reads, not all of them.
///
/// Building one reads the whole relation, so it is built only once the deltas that the
/// join has read add up to a fair share of that relation; a small update in DRed keeps
/// testing the guards per probe. A semi-join filter that keeps more than half of the rows
/// is dropped: it would cost more than it saves. Everything here lives for one run of the
/// stratum, while the relations outside it stay as they are.
struct StratumIndexes {
    /// The predicates the stratum derives, sorted.
    inside: Vec<PredId>,
    /// Per join (rule, delta position).
    joins: FxHashMap<(usize, usize), FilteredJoin>,
}

/// What [`StratumIndexes`] knows of one join.
struct FilteredJoin {
    /// Delta rows the join has read so far.
    read: u64,
    /// Per step, its filtered index.
    steps: Vec<Filtered>,
}

/// The filtered index of one step of a join.
enum Filtered {
    /// None yet.
    Unbuilt,
    /// Applies the step's guards, which it lets the join skip.
    Guards(Index, usize),
    /// Holds the rows a semi-join with the next step keeps.
    Semijoin(Index),
    /// None will be: the filter would not pay.
    Declined,
}

#[cfg(test)]
thread_local! {
    /// Semi-join filtered indexes built on this thread: lets a test see that it ran them.
    pub(crate) static SEMIJOIN_INDEXES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl StratumIndexes {
    fn new(stratum: &CompiledStratum) -> Self {
        StratumIndexes { inside: stratum.heads.clone(), joins: FxHashMap::default() }
    }

    /// Counts `delta` more rows read by `join`, builds the filtered indexes of its steps
    /// once they pay off and brings the semi-join ones up to date with their relations.
    fn prepare(&mut self, variant: &PhysPlan, join: (usize, usize), delta: u32, db: &Database) {
        let inside = &self.inside;
        let outside = |p: PredId| inside.binary_search(&p).is_err();
        let steps = variant.steps.len();
        let state = self
            .joins
            .entry(join)
            .or_insert_with(|| FilteredJoin { read: 0, steps: (0..steps).map(|_| Filtered::Unbuilt).collect() });
        state.read += u64::from(delta);
        for (k, run) in variant.guarded_steps().filter(|(_, run)| run.iter().all(|s| outside(s.pred))) {
            if matches!(state.steps[k], Filtered::Unbuilt) && state.read * 8 >= db.len(run[0].pred) as u64 {
                state.steps[k] = Filtered::Guards(variant.filtered_index(k, db), run.len() - 1);
            }
        }
        for k in 0..steps.saturating_sub(1) {
            let Some(id) = variant.semijoin_candidate(k) else { continue };
            let rows = db.rel(variant.steps[k].pred);
            // Built once the rows this step has read (about) add up to the rows building
            // the filtered index reads: it costs at most as much again as the join has.
            let step_read = state.read as f64 * rows.indexes[id].mean_chain();
            if matches!(state.steps[k], Filtered::Unbuilt) && step_read >= rows.len() as f64 {
                state.steps[k] = match variant.semijoin_filter(k, db, outside) {
                    Some(keep) => {
                        #[cfg(test)]
                        SEMIJOIN_INDEXES.with(|n| n.set(n.get() + 1));
                        Filtered::Semijoin(Index::filtered(&rows.indexes[id].cols, rows.arity, keep))
                    }
                    None => Filtered::Declined,
                };
            }
            if let Filtered::Semijoin(index) = &mut state.steps[k] {
                let built = index.sync(&rows.data, rows.arity, rows.end()).is_ok();
                if !built || index.entries() * 2 > rows.len() {
                    state.steps[k] = Filtered::Declined;
                }
            }
        }
    }

    /// Drops what is known of `join`, whose steps have changed.
    fn forget(&mut self, join: (usize, usize)) {
        self.joins.remove(&join);
    }

    /// The filtered index of step `step` of `join`, and how many steps after it the
    /// index has applied.
    fn get(&self, join: (usize, usize), step: usize) -> Option<(&Index, usize)> {
        match self.joins.get(&join)?.steps.get(step)? {
            Filtered::Guards(index, skip) => Some((index, *skip)),
            Filtered::Semijoin(index) => Some((index, 0)),
            Filtered::Unbuilt | Filtered::Declined => None,
        }
    }
}
