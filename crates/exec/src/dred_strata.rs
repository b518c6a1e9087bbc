//! Stratified maintenance of a program with negated atoms: the strata are brought up to
//! date in dependency order, each from the changes of the strata below it.
//!
//! A positive atom behaves as in DRed: a fact it loses over-deletes what was derived
//! through it, a fact it gains is propagated. A negated atom `!N(x)` swaps the roles.
//! A fact `N` *gains* over-deletes the facts that held because `N(x)` was absent, and a
//! fact `N` *loses* acts as an insertion: rules reading `!N(x)` may newly fire. Both run
//! the rule with the negated atom copied as a positive atom that reads the change of `N`
//! (its `_` renamed to fresh variables, so that the negated atom itself still means "any
//! value" there).
//!
//! Why the result is the new fixpoint. Before the strata run, DRed's (or ranked)
//! over-deletion has removed everything with a derivation in the old state through a
//! deleted input fact; negated atoms were read in that old state. When stratum `S`
//! starts, the strata below it are final. Its step 1 over-deletes every fact of `S` and
//! above with a derivation through a gain of a relation `S` negates, and then, wave by
//! wave, what was derived through those: with every negated atom left out (so the
//! derivations found are a superset of the old ones, whatever state the negated
//! relations are in now), keeping only facts the database holds, and removing them
//! only once the waves end (so a derivation through two of them is found by the
//! first). A fact of `S` left after that has no old derivation through a removed fact
//! or a gained negated fact, so the old derivation it has still holds. Step 2 rederives
//! the over-deleted facts of `S` with a one-step derivation from what is left, negated
//! atoms read in the final lower strata. Step 3 inserts what rules derive through a
//! lost fact of a negated relation (re-checking that it is absent now), and the
//! stratum's fixpoint propagates all of it with the gains of the strata below. A fact
//! of the new fixpoint missing after that would need a derivation from kept facts alone
//! and negated facts absent before too: it would have been in the old state, so it was
//! kept or over-deleted and rederived.
//!
//! With ranked over-deletion the check of a fact reads its negated relations part-way
//! through their removals, so a fact may be kept on a derivation whose negated fact comes
//! back later (rederived). Every fact the batch appends to a negated relation therefore
//! counts as a gain, not only the new ones.

use crate::database::Database;
use crate::dred::{derive_through, rederive, sync_indexes_through};
use crate::join::{Membership, PhysPlan, View};
use crate::limits::ResourceError;
use crate::reduce::Reduction;
use crate::seminaive::{Compiled, CompiledStratum, Run};
use ir::{AggregateOp, PredId, Program, Symbol, TermKind};
use std::collections::BTreeMap;

/// The extra plans stratified maintenance runs, per compiled rule (the positions of
/// [`Compiled::rules`]).
pub(crate) struct NegationPlans {
    rules: Vec<RuleNegation>,
}

/// The plans of one rule with negated atoms (none for a rule without).
#[derive(Default)]
struct RuleNegation {
    /// The rule's delta plans with its negated atoms left out: the over-deletion waves
    /// after a gain.
    loose: Option<Vec<PhysPlan>>,
    /// Per negated atom, its relation and the rule with a positive copy of it read first
    /// and every negated atom left out: what a gain of the relation over-deletes.
    gained: Vec<(PredId, PhysPlan)>,
    /// The same keeping the negated atoms: what a loss of the relation inserts.
    lost: Vec<(PredId, PhysPlan)>,
}

impl NegationPlans {
    pub(crate) fn new(c: &Compiled, program: &Program, db: &mut Database) -> Self {
        let mut symbols = program.symbols.clone();
        let mut fresh = 0usize;
        let arity = |p: PredId| program.pred(p).arity;
        let rules = c
            .rules
            .iter()
            .map(|compiled| {
                let rule = program.rule(compiled.rule);
                if rule.negated.is_empty() {
                    return RuleNegation::default();
                }
                let plan = |text: &ir::Rule, i: usize, db: &mut Database| {
                    let planned = plan::plan_rule_text_delta_first(text, compiled.rule, &arity, i);
                    PhysPlan::indexed(&planned, compiled.head_arity, db, Membership::HeadBusy, &program.consts)
                };
                let mut positive = rule.clone();
                positive.negated.clear();
                let loose = (0..positive.body.len()).map(|i| plan(&positive, i, db)).collect();
                let bound = rule.bound_vars();
                let (mut gained, mut lost) = (Vec::new(), Vec::new());
                for atom in &rule.negated {
                    // The copy binds the negated atom's wildcards to fresh variables (no
                    // source name starts with `@`), so the negated atom still reads them
                    // as "any value".
                    let mut copy = atom.clone();
                    for term in &mut copy.args {
                        if let TermKind::Var(v) = term.kind {
                            if !bound.contains(&v) {
                                term.kind = TermKind::Var(fresh_var(&mut symbols, &mut fresh));
                            }
                        }
                    }
                    let mut through = rule.clone();
                    through.body.insert(0, copy);
                    lost.push((atom.pred, plan(&through, 0, db)));
                    through.negated.clear();
                    gained.push((atom.pred, plan(&through, 0, db)));
                }
                RuleNegation { loose: Some(loose), gained, lost }
            })
            .collect();
        NegationPlans { rules }
    }

    /// The delta plans over-deletion waves after a gain run for compiled rule `r`.
    pub(crate) fn loose<'a>(&'a self, c: &'a Compiled, r: usize) -> &'a [PhysPlan] {
        self.rules[r].loose.as_deref().unwrap_or(&c.rules[r].delta)
    }
}

/// A variable no rule has.
fn fresh_var(symbols: &mut ir::Interner<Symbol>, count: &mut usize) -> Symbol {
    *count += 1;
    symbols.intern(&format!("@any{count}"))
}

/// One batch's stratified phases, run as each stratum starts
/// ([`crate::seminaive::propagate_with`]).
pub(crate) struct StrataBatch<'a> {
    pub(crate) compiled: &'a Compiled,
    pub(crate) plans: &'a NegationPlans,
    /// Every fact removed in the batch, in wave order.
    pub(crate) gone: &'a mut Database,
    /// Where each over-deletion wave begins in `gone`; the gains' waves are appended.
    pub(crate) waves: &'a mut Vec<Vec<u32>>,
    /// The facts put back by rederivation.
    pub(crate) rederived: &'a mut Database,
    /// Per relation, its first row the batch appended: rows from there on are changes.
    pub(crate) start: &'a [u32],
    /// Per relation, its first row the insertion phase appended (set as its stratum
    /// starts).
    pub(crate) inserted_from: &'a mut [u32],
    /// Per reduction whose rows changed, its head and the number of groups looked at.
    pub(crate) groups: &'a mut Vec<(PredId, usize)>,
}

impl StrataBatch<'_> {
    /// Brings stratum `stratum` up to date with the final strata below it, but for the
    /// propagation its fixpoint then runs.
    pub(crate) fn start_stratum(
        &mut self,
        stratum: &CompiledStratum,
        db: &mut Database,
        run: &mut Run,
    ) -> Result<(), ResourceError> {
        self.overdelete_gains(stratum, db, run)?;
        let rules = stratum.rules.iter().map(|&r| &self.compiled.rules[r]);
        if stratum.heads.iter().any(|&h| self.gone.len(h) > 0) {
            rederive(rules, db, self.gone, self.rederived, run)?;
            db.next_rank();
            for &h in &stratum.heads {
                for tuple in self.rederived.rel(h).live_rows() {
                    db.insert(h, tuple);
                }
                db.check_pred(h)?;
            }
        }
        for &h in &stratum.heads {
            self.inserted_from[h.index()] = db.rel(h).end();
        }
        self.insert_losses(stratum, db, run)?;
        self.maintain_reductions(stratum, db, run)
    }

    /// Brings the stratum's reductions up to date with their rows, which the strata below
    /// made final: only the groups with a row removed or added in the batch are looked at.
    /// A count is updated in place (its rows' net change), any other aggregate read again
    /// from its group's rows. A group whose value changed loses its old fact, over-deleting
    /// what was derived through it in the strata above (which rederive it when they
    /// start), and gains its new one, which they then propagate; a group left without
    /// rows keeps no fact (the lowering gives `count` and `sum` their 0 through negation).
    fn maintain_reductions(
        &mut self,
        stratum: &CompiledStratum,
        db: &mut Database,
        run: &mut Run,
    ) -> Result<(), ResourceError> {
        let from = self.gone.ends();
        let mut new_facts: Vec<(PredId, Vec<u32>)> = Vec::new();
        for &r in &stratum.rules {
            let Some(reduction) = self.compiled.rules[r].reduction.as_ref().and_then(Reduction::of) else { continue };
            let keys = reduction.reduce.keys;
            // Per group touched, how many of its rows the batch removed and added (net:
            // a row over-deleted and put back is in neither).
            let mut touched: BTreeMap<Vec<u32>, (u32, u32)> = BTreeMap::new();
            for row in self.gone.rel(reduction.rows).live_rows() {
                let entry = touched.entry(row[..keys].to_vec()).or_default();
                entry.0 += u32::from(!db.contains(reduction.rows, row));
            }
            let rows = db.rel(reduction.rows);
            for r in (self.start[reduction.rows.index()]..rows.end()).filter(|&r| rows.is_alive(r)) {
                let row = rows.row(r);
                let entry = touched.entry(row[..keys].to_vec()).or_default();
                entry.1 += u32::from(!self.gone.contains(reduction.rows, row));
            }
            if touched.is_empty() {
                continue;
            }
            self.groups.push((reduction.head, touched.len()));
            for (mut key, (removed, added)) in touched {
                run.stats.firings += 1;
                let old = reduction.current(db, &key);
                let new = match reduction.reduce.op {
                    AggregateOp::Count => {
                        let count = old.unwrap_or(0).wrapping_sub(removed).wrapping_add(added);
                        (count > 0).then_some(count)
                    }
                    _ if removed == 0 && added == 0 => old,
                    _ => reduction.regroup(db, &key, &mut run.stats),
                };
                db.check_pred(reduction.rows)?;
                if old == new {
                    continue;
                }
                if let Some(old) = old {
                    key.push(old);
                    self.gone.insert(reduction.head, &key);
                    key.pop();
                }
                if let Some(new) = new {
                    key.push(new);
                    new_facts.push((reduction.head, key));
                }
            }
        }
        self.gone.check()?;
        if self.gone.ends() != from {
            self.overdelete_waves(from, db, run)?;
        }
        if !new_facts.is_empty() {
            db.next_rank();
            for (head, fact) in &new_facts {
                db.insert(*head, fact);
                db.check_pred(*head)?;
            }
        }
        Ok(())
    }

    /// Over-deletes what a gain of a relation the stratum negates took the support of,
    /// and then what was derived through those facts, wave by wave.
    fn overdelete_gains(
        &mut self,
        stratum: &CompiledStratum,
        db: &mut Database,
        run: &mut Run,
    ) -> Result<(), ResourceError> {
        let seeded = stratum
            .rules
            .iter()
            .any(|&r| self.plans.rules[r].gained.iter().any(|&(n, _)| self.start[n.index()] < db.rel(n).end()));
        if !seeded {
            return Ok(());
        }
        let from = self.gone.ends();
        for &r in &stratum.rules {
            let head = self.compiled.rules[r].head;
            for (n, plan) in &self.plans.rules[r].gained {
                let (lo, hi) = (self.start[n.index()], db.rel(*n).end());
                if lo >= hi {
                    continue;
                }
                plan.sync_indexes(&mut db.rows);
                let views = plan_views(plan, db, View::new(db.rel(*n), lo, hi));
                let Database { rows: gone_rows, sets: gone_sets, .. } = &mut *self.gone;
                plan.run(&views, &mut run.scratch, &mut run.stats, &mut |tuple| {
                    if db.contains(head, tuple) {
                        gone_sets[head.index()].stage(&gone_rows[head.index()], tuple);
                    }
                });
            }
        }
        self.gone.commit_all();
        self.gone.check()?;
        self.overdelete_waves(from, db, run)
    }

    /// Over-deletes, wave by wave, what was derived through the facts of `gone` from rows
    /// `from[p]` on, and then removes all of them from the database.
    fn overdelete_waves(&mut self, from: Vec<u32>, db: &mut Database, run: &mut Run) -> Result<(), ResourceError> {
        // The waves: every other atom reads the database as it is, which still holds the
        // facts over-deleted so far in this step.
        let (c, plans) = (self.compiled, self.plans);
        let loose = |r: usize| plans.loose(c, r);
        let mut lo = from.clone();
        loop {
            let hi = self.gone.ends();
            if lo == hi {
                break;
            }
            self.waves.push(lo.clone());
            sync_indexes_through(c, db, (&lo, &hi), &loose);
            let Database { rows: gone_rows, sets: gone_sets, .. } = &mut *self.gone;
            derive_through(c, db, gone_rows, (&lo, &hi), run, &loose, &mut |head, tuple| {
                if db.contains(head, tuple) {
                    gone_sets[head.index()].stage(&gone_rows[head.index()], tuple);
                }
            });
            self.gone.commit_all();
            self.gone.check()?;
            lo = hi;
        }
        for (p, rows) in self.gone.rows.iter().enumerate() {
            if from[p] < rows.end() {
                let removed = (from[p]..rows.end()).filter(|&r| rows.is_alive(r)).map(|r| rows.row(r));
                db.remove_all(PredId(p as u32), removed);
            }
        }
        Ok(())
    }

    /// Inserts what the stratum's rules derive through a fact a relation they negate
    /// lost: the negated atom, still in the plan, checks that the fact is absent now.
    fn insert_losses(
        &mut self,
        stratum: &CompiledStratum,
        db: &mut Database,
        run: &mut Run,
    ) -> Result<(), ResourceError> {
        let mut heads = Vec::new();
        for &r in &stratum.rules {
            let head = self.compiled.rules[r].head;
            for (n, plan) in &self.plans.rules[r].lost {
                if self.gone.len(*n) == 0 {
                    continue;
                }
                plan.sync_indexes(&mut db.rows);
                let views = plan_views(plan, db, View::whole(self.gone.rel(*n)));
                heads.clear();
                let mut found = false;
                plan.run(&views, &mut run.scratch, &mut run.stats, &mut |tuple| {
                    found = true;
                    heads.extend_from_slice(tuple);
                });
                if !found {
                    continue;
                }
                db.next_rank();
                let arity = db.arity(head);
                if arity == 0 {
                    db.insert(head, &[]);
                } else {
                    for tuple in heads.chunks_exact(arity) {
                        db.insert(head, tuple);
                    }
                }
                db.check_pred(head)?;
            }
        }
        Ok(())
    }
}

/// The views of a plan whose first step reads `first` and every other step, and every
/// negated atom, the whole database.
fn plan_views<'a>(plan: &'a PhysPlan, db: &'a Database, first: View<'a>) -> Vec<View<'a>> {
    plan.steps
        .iter()
        .enumerate()
        .map(|(k, s)| match k {
            0 => first,
            _ => View::whole(db.rel(s.pred)).with_set(Some(&db.sets[s.pred.index()])),
        })
        .chain(plan.negation_views(&db.rows))
        .collect()
}
