//! Stratified semi-naive evaluation, written as propagation of deltas so that the same
//! code computes a fixpoint from scratch and propagates insertions during DRed.

use crate::database::Database;
use crate::join::{run_staged, JoinStats, Membership, PhysPlan, Scratch, View};
use crate::relation::Index;
use crate::{Progress, Round};
use ir::{PredId, Program, RuleId};
use plan::{AtomSource, Output, ProgramPlan};
use rustc_hash::FxHashMap;
use std::cmp::Ordering;

/// A well-formed rule compiled for semi-naive evaluation and DRed.
pub(crate) struct CompiledRule {
    pub(crate) rule: RuleId,
    pub(crate) head: PredId,
    pub(crate) body_preds: Vec<PredId>,
    /// For each body position, a plan that reads that atom first (as the delta): what
    /// DRed's over-deletion runs.
    pub(crate) delta: Vec<PhysPlan>,
    /// The same for the body without its implied guards (`implied.rs`), with the
    /// predicate of each delta position: what the fixpoint loop runs.
    pub(crate) fixpoint: Vec<(PredId, PhysPlan)>,
    /// The plan that reads candidate head facts first (DRed rederivation), once
    /// [`Compiled::add_guards`] made it.
    pub(crate) guarded: Option<PhysPlan>,
    /// The same plan testing fully bound atoms by their rows, so that it can read the rows
    /// of lower rank only: ranked maintenance's support check, once
    /// [`Compiled::add_guards`] made it for a ranked state.
    pub(crate) rank_check: Option<PhysPlan>,
    /// The head tuple of an empty-body rule.
    pub(crate) fact: Option<Vec<u32>>,
}

pub(crate) struct CompiledStratum {
    /// Indexes into [`Compiled::rules`].
    pub(crate) rules: Vec<usize>,
    pub(crate) recursive: bool,
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
        let well_formed: Vec<bool> = plan.rules.iter().map(|r| r.well_formed).collect();
        let reduced = crate::implied::reduce(program, &well_formed, db, rule_derived);
        for rule_plan in plan.rules.iter().filter(|r| r.well_formed) {
            let id = rule_plan.rule;
            let head = rule_plan.head;
            let head_arity = db.arity(head);
            derived[head.index()] = true;
            let body = &program.rule(id).body;
            let delta: Vec<PhysPlan> = (0..body.len())
                .map(|i| {
                    PhysPlan::indexed(
                        &plan::plan_rule_delta_first(program, id, i),
                        head_arity,
                        db,
                        Membership::HeadBusy,
                    )
                })
                .collect();
            let fixpoint = match &reduced {
                Some(reduced) if reduced.rule(id).body.len() < body.len() => {
                    let reduced_body = &reduced.rule(id).body;
                    (0..reduced_body.len())
                        .map(|i| {
                            let plan = plan::plan_rule_delta_first(reduced, id, i);
                            (reduced_body[i].pred, PhysPlan::indexed(&plan, head_arity, db, Membership::HeadBusy))
                        })
                        .collect()
                }
                _ => body.iter().map(|a| a.pred).zip(delta.iter().cloned()).collect(),
            };
            let fact = body.is_empty().then(|| {
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
            position_of[id.index()] = Some(rules.len());
            rules.push(CompiledRule {
                rule: id,
                head,
                body_preds: body.iter().map(|a| a.pred).collect(),
                delta,
                fixpoint,
                guarded: None,
                rank_check: None,
                fact,
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
                CompiledStratum { rules: members, recursive: s.recursive, heads, reads }
            })
            .collect();
        Compiled { rules, strata, derived }
    }

    /// Makes the rederivation plans of DRed. Their join order depends on the data (a
    /// candidate fact binds the head variables, and which body atom to probe first
    /// matters a lot), so they are made once the database has been evaluated. With
    /// `ranked`, also the support checks of ranked maintenance, in the same order.
    pub(crate) fn add_guards(&mut self, program: &Program, db: &mut Database, ranked: bool) {
        for rule in &mut self.rules {
            let order = crate::order::guarded_order(program, rule.rule, db);
            let plan = plan::plan_rule_in_order(program, rule.rule, &order);
            let arity = db.arity(rule.head);
            // Rederivation stages into a database of its own, so every set can be read.
            rule.guarded = Some(PhysPlan::indexed(&plan, arity, db, Membership::Sets));
            if ranked {
                rule.rank_check = Some(PhysPlan::indexed(&plan, arity, db, Membership::Located));
            }
        }
    }
}

/// The state of one evaluation: counters, recorded rounds and reused buffers.
pub(crate) struct Run {
    record_rounds: bool,
    progress: Option<Box<dyn FnMut(Progress)>>,
    pub(crate) rounds: Vec<Round>,
    pub(crate) iterations: usize,
    pub(crate) stats: JoinStats,
    pub(crate) scratch: Scratch,
    /// The facts in the database, kept up to date for progress reports.
    facts: usize,
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
            facts: 0,
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
pub(crate) fn propagate(c: &Compiled, db: &mut Database, start: &[u32], fire_facts: bool, run: &mut Run) {
    run.count_facts(db);
    // Row ranges per relation, kept up to date only for the relations the current stratum
    // reads, so that a program of many small strata is not a pass over every relation each.
    let mut lo = start.to_vec();
    let mut hi = db.ends();
    let mut ranges = Vec::new();
    for stratum in &c.strata {
        for &q in &stratum.reads {
            lo[q.index()] = start[q.index()];
        }
        let mut round_begin: Vec<u32> = stratum.heads.iter().map(|&h| db.rel(h).end()).collect();
        if fire_facts {
            for rule in stratum.rules.iter().map(|&r| &c.rules[r]) {
                if let Some(fact) = &rule.fact {
                    run.stats.firings += 1;
                    db.insert(rule.head, fact);
                }
            }
        }
        let mut guards = StaticGuards::new(stratum);
        loop {
            for &q in &stratum.reads {
                hi[q.index()] = db.rel(q).end();
            }
            for &r in &stratum.rules {
                let rule = &c.rules[r];
                for (i, (delta_pred, variant)) in rule.fixpoint.iter().enumerate() {
                    let delta_pred = delta_pred.index();
                    if lo[delta_pred] >= hi[delta_pred] {
                        continue;
                    }
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
                    // Only now, with a join certain to run, are its indexes brought up to date.
                    variant.sync_indexes(&mut db.rows);
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
                        .collect();
                    run_staged(variant, &views, &rows[h], head_set, &mut run.scratch, &mut run.stats);
                    db.commit(rule.head);
                }
            }
            for &q in &stratum.reads {
                lo[q.index()] = hi[q.index()];
            }
            let grew = run.finish_round(db, stratum.heads.iter().copied().zip(round_begin.iter().copied()));
            for (begin, &h) in round_begin.iter_mut().zip(&stratum.heads) {
                *begin = db.rel(h).end();
            }
            if !grew || !stratum.recursive {
                break;
            }
        }
    }
}

/// Filtered indexes ([`PhysPlan::filtered_index`]) for the joins of one stratum's
/// fixpoint. A guard can be applied once per row instead of once per probe when the
/// relations of the index step and of its guards are all outside the stratum, so that
/// nothing changes them while the stratum runs: the demand guard `@m:R^bf(X)` of
/// right-linear closure, say, filters the edges `E(X,Y)` read by `Y`.
///
/// Building one reads the whole relation, so it is built only once the deltas that the
/// join has read add up to a fair share of that relation; a small update in DRed keeps
/// testing the guards per probe.
struct StaticGuards {
    /// The predicates the stratum derives, sorted.
    inside: Vec<PredId>,
    /// Per join (rule, delta position).
    joins: FxHashMap<(usize, usize), GuardedJoin>,
}

/// What [`StaticGuards`] knows of one join.
struct GuardedJoin {
    /// Delta rows the join has read so far.
    read: u64,
    /// Per step, its filtered index once built.
    built: Vec<Option<Index>>,
}

impl StaticGuards {
    fn new(stratum: &CompiledStratum) -> Self {
        StaticGuards { inside: stratum.heads.clone(), joins: FxHashMap::default() }
    }

    /// Counts `delta` more rows read by `join` and builds the filtered indexes of its
    /// static guarded steps once they pay off.
    fn prepare(&mut self, variant: &PhysPlan, join: (usize, usize), delta: u32, db: &Database) {
        let inside = &self.inside;
        let mut steps = variant
            .guarded_steps()
            .filter(|(_, run)| run.iter().all(|s| inside.binary_search(&s.pred).is_err()))
            .peekable();
        if steps.peek().is_none() {
            return;
        }
        let state =
            self.joins.entry(join).or_insert_with(|| GuardedJoin { read: 0, built: vec![None; variant.steps.len()] });
        state.read += u64::from(delta);
        for (k, run) in steps {
            if state.built[k].is_none() && state.read * 8 >= db.len(run[0].pred) as u64 {
                state.built[k] = Some(variant.filtered_index(k, db));
            }
        }
    }

    fn get(&self, join: (usize, usize), step: usize) -> Option<&Index> {
        self.joins.get(&join).and_then(|state| state.built[step].as_ref())
    }
}
