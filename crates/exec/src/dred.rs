//! Incremental maintenance with delete-and-rederive (SPEC §5): over-delete, rederive,
//! insert. Demand relations of a magic program are ordinary derived relations here.

use crate::database::Database;
use crate::join::{any_empty, View};
use crate::relation::Relation;
use crate::seminaive::{propagate, Compiled, Run};
use ir::{PredId, Program};
use plan::{AtomSource, ProgramPlan};

/// One batch of input changes. Deletions are applied before insertions, so a tuple that
/// is both deleted and inserted ends up present.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Update {
    pub inserts: Vec<(PredId, Vec<u32>)>,
    pub deletes: Vec<(PredId, Vec<u32>)>,
}

/// What one [`Maintained::apply`] did. Fact lists are sorted by predicate id, then tuple.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UpdateReport {
    /// Wave 1 holds the derived facts with a derivation using a deleted input fact, wave
    /// `k + 1` those with a derivation using a fact of wave `k` (and not in earlier waves).
    pub overdeleted_waves: Vec<Vec<(PredId, Vec<u32>)>>,
    /// All over-deleted derived facts, per predicate.
    pub overdeleted: Vec<(PredId, Vec<Vec<u32>>)>,
    /// Over-deleted facts that still had a one-step derivation and were put back.
    pub rederived: Vec<(PredId, Vec<Vec<u32>>)>,
    /// Derived facts added by the insertion phase.
    pub inserted: Vec<(PredId, Vec<Vec<u32>>)>,
    /// Input facts actually inserted / deleted.
    pub edb_inserted: Vec<(PredId, Vec<u32>)>,
    pub edb_deleted: Vec<(PredId, Vec<u32>)>,
    /// Requested changes that changed nothing: inserts of present facts and deletes of
    /// absent ones (including repeats within the batch, tuples of the wrong arity, and
    /// changes to derived predicates, which only follow from the input).
    pub noop_inserts: Vec<(PredId, Vec<u32>)>,
    pub noop_deletes: Vec<(PredId, Vec<u32>)>,
    /// Rule firings over all three phases, comparable to `Evaluation::work`.
    pub work: u64,
}

/// A program's plan with its database (input and derived facts) kept up to date.
pub struct Maintained {
    compiled: Compiled,
    db: Database,
    run: Run,
    initial_work: u64,
}

impl Maintained {
    /// Evaluates from scratch (semi-naive) and keeps the result for updates.
    pub fn new(plan: ProgramPlan, program: &Program, mut edb: Database) -> Self {
        let compiled = Compiled::new(&plan, program, &mut edb, true);
        let mut run = Run::new(false, None);
        let start = vec![0; edb.relation_count()];
        propagate(&compiled, &mut edb, &start, true, &mut run);
        let initial_work = run.stats.firings;
        Maintained { compiled, db: edb, run, initial_work }
    }

    /// The current input and derived facts.
    pub fn db(&self) -> &Database {
        &self.db
    }

    /// The work of the initial evaluation, in the unit of [`UpdateReport::work`].
    pub fn initial_work(&self) -> u64 {
        self.initial_work
    }

    fn is_input(&self, pred: PredId, tuple: &[u32]) -> bool {
        pred.index() < self.db.relation_count()
            && !self.compiled.derived[pred.index()]
            && self.db.arity(pred) == tuple.len()
    }

    fn empty_relations(&self) -> Vec<Relation> {
        (0..self.db.relation_count()).map(|p| Relation::new(self.db.arity(PredId(p as u32)))).collect()
    }

    /// Applies one batch with DRed and reports every phase.
    pub fn apply(&mut self, update: &Update) -> UpdateReport {
        let mut report = UpdateReport::default();
        let work_before = self.run.stats.firings;

        // The deleted input facts are the first wave.
        let mut wave = self.empty_relations();
        for (pred, tuple) in &update.deletes {
            if self.is_input(*pred, tuple) && self.db.contains(*pred, tuple) && wave[pred.index()].insert(tuple) {
                report.edb_deleted.push((*pred, tuple.clone()));
            } else {
                report.noop_deletes.push((*pred, tuple.clone()));
            }
        }
        let deleted_inputs = wave.clone();

        // Phase 1: over-delete, reading the pre-update database everywhere but the delta.
        let mut overdeleted = self.empty_relations();
        while wave.iter().any(|r| r.len() > 0) {
            let mut next = self.empty_relations();
            for rule in &self.compiled.rules {
                for (i, variant) in rule.delta.iter().enumerate() {
                    let delta = &wave[rule.body_preds[i].index()];
                    if delta.len() == 0 {
                        continue;
                    }
                    let views: Vec<View<'_>> = variant
                        .steps
                        .iter()
                        .map(|s| match s.source {
                            AtomSource::Body(j) if j == i => View::whole(delta),
                            _ => View::whole(self.db.rel(s.pred)),
                        })
                        .collect();
                    if any_empty(&views) {
                        continue;
                    }
                    let (head, db) = (rule.head.index(), &self.db);
                    variant.run(&views, &mut self.run.scratch, &mut self.run.stats, &mut |tuple| {
                        if db.contains(rule.head, tuple) && overdeleted[head].insert(tuple) {
                            next[head].insert(tuple);
                        }
                    });
                }
            }
            let listed = list_flat(&next);
            if !listed.is_empty() {
                report.overdeleted_waves.push(listed);
            }
            wave = next;
        }
        for (p, rel) in overdeleted.iter().enumerate().chain(deleted_inputs.iter().enumerate()) {
            for tuple in rel.live_rows() {
                self.db.remove(PredId(p as u32), tuple);
            }
        }

        // What remains is closed under the rules except for what phases 2 and 3 add, so
        // everything from here on is a delta for the final propagation.
        let start = self.db.ends();
        for (pred, tuple) in &update.inserts {
            if self.is_input(*pred, tuple) && self.db.insert(*pred, tuple) {
                report.edb_inserted.push((*pred, tuple.clone()));
            } else {
                report.noop_inserts.push((*pred, tuple.clone()));
            }
        }

        // Phase 2: rederive the over-deleted facts with a one-step derivation from what
        // remains (with the new input facts).
        let mut rederived = self.empty_relations();
        for rule in &self.compiled.rules {
            let (Some(guarded), candidates) = (&rule.guarded, &overdeleted[rule.head.index()]) else { continue };
            if candidates.len() == 0 {
                continue;
            }
            let views: Vec<View<'_>> = guarded
                .steps
                .iter()
                .map(|s| match s.source {
                    AtomSource::Head => View::whole(candidates),
                    AtomSource::Body(_) => View::whole(self.db.rel(s.pred)),
                })
                .collect();
            if any_empty(&views) {
                continue;
            }
            let found = &mut rederived[rule.head.index()];
            guarded.run(&views, &mut self.run.scratch, &mut self.run.stats, &mut |tuple| {
                found.insert(tuple);
            });
        }
        for (p, rel) in rederived.iter().enumerate() {
            for tuple in rel.live_rows() {
                self.db.insert(PredId(p as u32), tuple);
            }
        }

        // Phase 3: propagate the rederived and inserted facts to a fixpoint.
        let before_insert = self.db.ends();
        propagate(&self.compiled, &mut self.db, &start, false, &mut self.run);
        for (p, &from) in before_insert.iter().enumerate() {
            let pred = PredId(p as u32);
            if self.compiled.derived[p] {
                let new = self.db.sorted_rows_since(pred, from);
                if !new.is_empty() {
                    report.inserted.push((pred, new));
                }
            }
        }
        for rel in &mut self.db.relations {
            rel.compact_if_sparse();
        }

        report.overdeleted = list_grouped(&overdeleted);
        report.rederived = list_grouped(&rederived);
        for list in
            [&mut report.edb_inserted, &mut report.edb_deleted, &mut report.noop_inserts, &mut report.noop_deletes]
        {
            list.sort();
        }
        report.work = self.run.stats.firings - work_before;
        report
    }
}

fn list_grouped(rels: &[Relation]) -> Vec<(PredId, Vec<Vec<u32>>)> {
    rels.iter()
        .enumerate()
        .filter(|(_, r)| r.len() > 0)
        .map(|(p, r)| {
            let mut tuples: Vec<Vec<u32>> = r.live_rows().map(<[u32]>::to_vec).collect();
            tuples.sort_unstable();
            (PredId(p as u32), tuples)
        })
        .collect()
}

fn list_flat(rels: &[Relation]) -> Vec<(PredId, Vec<u32>)> {
    list_grouped(rels).into_iter().flat_map(|(p, tuples)| tuples.into_iter().map(move |t| (p, t))).collect()
}
