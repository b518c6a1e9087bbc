//! Incremental maintenance with delete-and-rederive (SPEC §5): over-delete, rederive,
//! insert. Demand relations of a magic program are ordinary derived relations here.

use crate::database::Database;
use crate::join::{run_staged, View};
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

/// How many facts one [`Maintained::apply_counting`] touched: the sizes of the lists of
/// [`UpdateReport`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UpdateCounts {
    /// Over-deletion waves that removed a derived fact.
    pub waves: usize,
    pub overdeleted: usize,
    pub rederived: usize,
    pub inserted: usize,
    pub edb_inserted: usize,
    pub edb_deleted: usize,
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
        let mut compiled = Compiled::new(&plan, program, &mut edb);
        let mut run = Run::new(false, None);
        let start = vec![0; edb.relation_count()];
        propagate(&compiled, &mut edb, &start, true, &mut run);
        compiled.add_guards(program, &mut edb);
        // DRed probes indexes the evaluation may never have read: the rederivation plans',
        // those of a join with a delta that existed in the first round only (in right-linear
        // closure, the closure keyed for the edge delta), and the one removal walks in an
        // input relation. Built lazily, each would cost the first update that needs it
        // O(|relation|) time and memory however small the change; built here, with the
        // materialisation, every later sync adds only the rows an update appended.
        for (p, rows) in edb.rows.iter_mut().enumerate() {
            if !compiled.derived[p] {
                rows.ensure_removal_index();
            }
            rows.sync_all_indexes();
        }
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

    /// Applies one batch with DRed and reports every phase.
    pub fn apply(&mut self, update: &Update) -> UpdateReport {
        self.run_update(update, true).0
    }

    /// Applies one batch like [`Maintained::apply`] but reports only how many facts each
    /// phase touched. An edge on most derivations over-deletes and puts back millions of
    /// facts, and the lists of [`UpdateReport`] then cost more time and memory (one
    /// allocation per fact and list) than the maintenance itself.
    pub fn apply_counting(&mut self, update: &Update) -> UpdateCounts {
        self.run_update(update, false).1
    }

    /// DRed itself; the fact lists of the report are made only with `detail`.
    fn run_update(&mut self, update: &Update, detail: bool) -> (UpdateReport, UpdateCounts) {
        let mut report = UpdateReport::default();
        let mut counts = UpdateCounts::default();
        let work_before = self.run.stats.firings;

        // Everything deleted, input facts and over-deleted derived facts alike, in wave
        // order: rows are appended, so each wave is a row range of these relations.
        let mut gone = self.db.empty_like();
        for (pred, tuple) in &update.deletes {
            if self.is_input(*pred, tuple) && self.db.contains(*pred, tuple) && gone.insert(*pred, tuple) {
                report.edb_deleted.push((*pred, tuple.clone()));
            } else {
                report.noop_deletes.push((*pred, tuple.clone()));
            }
        }

        // Phase 1: over-delete. The delta atom reads the previous wave, every other atom
        // the whole pre-update database. Since that database is a fixpoint, whatever the
        // rules derive from it is in it, so staging into `gone` is the only probe needed.
        let mut lo = vec![0; self.db.relation_count()];
        loop {
            let hi = gone.ends();
            if lo == hi {
                break;
            }
            for rule in &self.compiled.rules {
                for (i, variant) in rule.delta.iter().enumerate() {
                    let p = rule.body_preds[i].index();
                    if lo[p] >= hi[p] {
                        continue;
                    }
                    if variant.steps.iter().any(|s| s.source != AtomSource::Body(i) && self.db.len(s.pred) == 0) {
                        continue;
                    }
                    variant.sync_indexes(&mut self.db.rows);
                    let Database { rows: gone_rows, sets: gone_sets } = &mut gone;
                    let views: Vec<View<'_>> = variant
                        .steps
                        .iter()
                        .map(|s| match s.source {
                            AtomSource::Body(j) if j == i => View::new(&gone_rows[p], lo[p], hi[p]),
                            _ => View::whole(self.db.rel(s.pred)).with_set(Some(&self.db.sets[s.pred.index()])),
                        })
                        .collect();
                    let h = rule.head.index();
                    run_staged(
                        variant,
                        &views,
                        &gone_rows[h],
                        &mut gone_sets[h],
                        &mut self.run.scratch,
                        &mut self.run.stats,
                    );
                    gone.commit(rule.head);
                }
            }
            let grew = (0..hi.len()).any(|p| self.compiled.derived[p] && gone.rel(PredId(p as u32)).end() > hi[p]);
            counts.waves += usize::from(grew);
            if detail && grew {
                let wave = self.derived_rows(&gone, &hi);
                report
                    .overdeleted_waves
                    .push(wave.into_iter().flat_map(|(p, ts)| ts.into_iter().map(move |t| (p, t))).collect());
            }
            lo = hi;
        }
        for (p, rows) in gone.rows.iter().enumerate() {
            if rows.len() > 0 {
                self.db.remove_all(PredId(p as u32), rows.live_rows());
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
        let mut rederived = self.db.empty_like();
        for rule in &self.compiled.rules {
            let (Some(guarded), candidates) = (&rule.guarded, gone.rel(rule.head)) else { continue };
            if candidates.len() == 0
                || guarded.steps.iter().any(|s| s.source != AtomSource::Head && self.db.len(s.pred) == 0)
            {
                continue;
            }
            guarded.sync_indexes(&mut self.db.rows);
            let views: Vec<View<'_>> = guarded
                .steps
                .iter()
                .map(|s| match s.source {
                    AtomSource::Head => View::whole(candidates),
                    AtomSource::Body(_) => {
                        View::whole(self.db.rel(s.pred)).with_set(Some(&self.db.sets[s.pred.index()]))
                    }
                })
                .collect();
            let Database { rows, sets } = &mut rederived;
            let h = rule.head.index();
            run_staged(guarded, &views, &rows[h], &mut sets[h], &mut self.run.scratch, &mut self.run.stats);
            rederived.commit(rule.head);
        }
        for (p, rows) in rederived.rows.iter().enumerate() {
            for tuple in rows.live_rows() {
                self.db.insert(PredId(p as u32), tuple);
            }
        }

        // Phase 3: propagate the rederived and inserted facts to a fixpoint.
        let before_insert = self.db.ends();
        propagate(&self.compiled, &mut self.db, &start, false, &mut self.run);
        let zero = vec![0; self.db.relation_count()];
        counts.inserted = self.derived_count(&self.db, &before_insert);
        counts.overdeleted = self.derived_count(&gone, &zero);
        counts.rederived = self.derived_count(&rederived, &zero);
        if detail {
            report.inserted = self.derived_rows(&self.db, &before_insert);
            report.overdeleted = self.derived_rows(&gone, &zero);
            report.rederived = self.derived_rows(&rederived, &zero);
        }
        self.db.compact();

        for list in
            [&mut report.edb_inserted, &mut report.edb_deleted, &mut report.noop_inserts, &mut report.noop_deletes]
        {
            list.sort();
        }
        report.work = self.run.stats.firings - work_before;
        counts.edb_inserted = report.edb_inserted.len();
        counts.edb_deleted = report.edb_deleted.len();
        counts.work = report.work;
        (report, counts)
    }

    /// The number of tuples of derived predicates in rows `from[p]..` of `db`.
    fn derived_count(&self, db: &Database, from: &[u32]) -> usize {
        (0..db.relation_count())
            .filter(|&p| self.compiled.derived[p])
            .map(|p| {
                let rel = db.rel(PredId(p as u32));
                (from[p]..rel.end()).filter(|&r| rel.is_alive(r)).count()
            })
            .sum()
    }

    /// The tuples of derived predicates in rows `from[p]..` of `db`, sorted per predicate;
    /// only predicates with such tuples.
    fn derived_rows(&self, db: &Database, from: &[u32]) -> Vec<(PredId, Vec<Vec<u32>>)> {
        (0..db.relation_count())
            .filter(|&p| self.compiled.derived[p])
            .map(|p| (PredId(p as u32), db.sorted_rows_since(PredId(p as u32), from[p])))
            .filter(|(_, tuples)| !tuples.is_empty())
            .collect()
    }
}
