//! Stratified semi-naive evaluation, written as propagation of deltas so that the same
//! code computes a fixpoint from scratch and propagates insertions during DRed.

use crate::database::Database;
use crate::join::{run_staged, JoinStats, PhysPlan, Scratch, View};
use crate::{Progress, Round};
use ir::{PredId, Program, RuleId};
use plan::{AtomSource, Output, ProgramPlan};
use std::cmp::Ordering;

/// A well-formed rule compiled for semi-naive evaluation and DRed.
pub(crate) struct CompiledRule {
    pub(crate) rule: RuleId,
    pub(crate) head: PredId,
    pub(crate) body_preds: Vec<PredId>,
    /// For each body position, a plan that reads that atom first (as the delta).
    pub(crate) delta: Vec<PhysPlan>,
    /// The plan that reads candidate head facts first (DRed rederivation), once
    /// [`Compiled::add_guards`] made it.
    pub(crate) guarded: Option<PhysPlan>,
    /// The head tuple of an empty-body rule.
    pub(crate) fact: Option<Vec<u32>>,
}

pub(crate) struct CompiledStratum {
    /// Indexes into [`Compiled::rules`].
    pub(crate) rules: Vec<usize>,
    pub(crate) recursive: bool,
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
        let mut rules = Vec::new();
        let mut position_of = vec![None; plan.rules.len()];
        let mut derived = vec![false; db.relation_count()];
        for rule_plan in plan.rules.iter().filter(|r| r.well_formed) {
            let id = rule_plan.rule;
            let head = rule_plan.head;
            let head_arity = db.arity(head);
            derived[head.index()] = true;
            let body = &program.rule(id).body;
            let delta = (0..body.len())
                .map(|i| PhysPlan::indexed(&plan::plan_rule_delta_first(program, id, i), head_arity, db, true))
                .collect();
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
                guarded: None,
                fact,
            });
        }
        let strata = plan
            .strata
            .iter()
            .map(|s| CompiledStratum {
                rules: s.rules.iter().filter_map(|id| position_of.get(id.index()).copied().flatten()).collect(),
                recursive: s.recursive,
            })
            .collect();
        Compiled { rules, strata, derived }
    }

    /// Makes the rederivation plans of DRed. Their join order depends on relation sizes
    /// (a candidate fact binds the head variables, and which body atom to probe first
    /// matters a lot), so they are made once the database has been evaluated.
    pub(crate) fn add_guards(&mut self, program: &Program, db: &mut Database) {
        for rule in &mut self.rules {
            let sizes = |pred: PredId| db.len(pred);
            let plan = plan::plan_rule_guarded(program, rule.rule, &sizes);
            // Rederivation stages into a database of its own, so every set can be read.
            rule.guarded = Some(PhysPlan::indexed(&plan, db.arity(rule.head), db, false));
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
        }
    }

    /// Ends a round that began at the row counts `begin`: records its new facts if asked,
    /// reports progress, and tells whether anything was added.
    pub(crate) fn finish_round(&mut self, db: &Database, begin: &[u32]) -> bool {
        self.iterations += 1;
        let ends = db.ends();
        let grew = ends.iter().zip(begin).any(|(end, start)| end > start);
        if self.record_rounds {
            let new = (0..ends.len())
                .filter(|&p| ends[p] > begin[p])
                .map(|p| (PredId(p as u32), db.sorted_rows_since(PredId(p as u32), begin[p])))
                .filter(|(_, tuples)| !tuples.is_empty())
                .collect();
            self.rounds.push(Round { round: self.iterations, new });
        }
        if let Some(progress) = self.progress.as_mut() {
            progress(Progress { iteration: self.iterations, facts: db.total_len() });
        }
        grew
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
    for stratum in &c.strata {
        let mut round_begin = db.ends();
        if fire_facts {
            for rule in stratum.rules.iter().map(|&r| &c.rules[r]) {
                if let Some(fact) = &rule.fact {
                    run.stats.firings += 1;
                    db.insert(rule.head, fact);
                }
            }
        }
        let mut lo = start.to_vec();
        let mut ranges = Vec::new();
        loop {
            let hi = db.ends();
            for rule in stratum.rules.iter().map(|&r| &c.rules[r]) {
                for (i, variant) in rule.delta.iter().enumerate() {
                    let delta_pred = rule.body_preds[i].index();
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
                    let h = rule.head.index();
                    let Database { rows, sets } = &mut *db;
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
                        .map(|(s, &(from, to))| {
                            let q = s.pred.index();
                            View::new(&rows[q], from, to).with_set(set_of(q))
                        })
                        .collect();
                    run_staged(variant, &views, &rows[h], head_set, &mut run.scratch, &mut run.stats);
                    db.commit(rule.head);
                }
            }
            lo = hi;
            let grew = run.finish_round(db, &round_begin);
            round_begin = db.ends();
            if !grew || !stratum.recursive {
                break;
            }
        }
    }
}
