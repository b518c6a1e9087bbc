//! Incremental maintenance with delete-and-rederive (SPEC §5): over-delete, rederive,
//! insert. Demand relations of a magic program are ordinary derived relations here.

use crate::database::Database;
use crate::join::View;
use crate::limits::ResourceError;
use crate::relation::Rows;
use crate::seminaive::{propagate, Compiled, Run};
use crate::split::run_staged_split;
use crate::{Evaluation, Threads};
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

/// Calls `emit` with the head of every derivation that reads one fact of rows
/// `lo[p]..hi[p]` of `delta` at some body position and the whole of `db` at the others
/// (duplicates included). The indexes the joins probe must be synced
/// ([`sync_delta_indexes`]).
pub(crate) fn derive_from(
    c: &Compiled,
    db: &Database,
    delta: &[Rows],
    (lo, hi): (&[u32], &[u32]),
    run: &mut Run,
    emit: &mut impl FnMut(PredId, &[u32]),
) {
    for rule in &c.rules {
        for (i, variant) in rule.delta.iter().enumerate() {
            let p = rule.body_preds[i].index();
            if lo[p] >= hi[p] {
                continue;
            }
            if variant.steps.iter().any(|s| s.source != AtomSource::Body(i) && db.len(s.pred) == 0) {
                continue;
            }
            let views: Vec<View<'_>> = variant
                .steps
                .iter()
                .map(|s| match s.source {
                    AtomSource::Body(j) if j == i => View::new(&delta[p], lo[p], hi[p]),
                    _ => View::whole(db.rel(s.pred)).with_set(Some(&db.sets[s.pred.index()])),
                })
                .collect();
            variant.run(&views, &mut run.scratch, &mut run.stats, &mut |tuple| emit(rule.head, tuple));
        }
    }
}

/// Brings the indexes [`derive_from`] probes up to date with `db`.
pub(crate) fn sync_delta_indexes(c: &Compiled, db: &mut Database) {
    for variant in c.rules.iter().flat_map(|rule| &rule.delta) {
        variant.sync_indexes(&mut db.rows);
    }
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

/// How [`Maintained`] handles deletions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Maintenance {
    /// Delete-and-rederive exactly as SPEC §5 defines it: over-delete every fact with a
    /// derivation that used a deleted fact, then rederive and insert.
    #[default]
    Dred,
    /// DRed whose over-deletion is ranked: every fact keeps the rank of the evaluation step
    /// that first derived it, and a fact is over-deleted only when no derivation from
    /// lower-ranked facts survives. Over-deletion then stops at the first alternative
    /// derivation instead of spreading through everything downstream of the deleted fact.
    Ranked,
}

/// A program's plan with its database (input and derived facts) kept up to date.
pub struct Maintained {
    compiled: Compiled,
    db: Database,
    run: Run,
    initial_work: u64,
    maintenance: Maintenance,
    /// The error an update stopped with: the database is incomplete from then on, so
    /// every later update reports it again.
    failure: Option<ResourceError>,
    /// For a program with negated atoms, its plan and program: each update evaluates the
    /// new input from scratch and reports the difference (see [`Maintained::recompute`]).
    recompute: Option<Box<(ProgramPlan, Program)>>,
}

impl Maintained {
    /// Evaluates from scratch (semi-naive) and keeps the result for updates.
    pub fn new(plan: ProgramPlan, program: &Program, edb: Database) -> Self {
        Self::with_maintenance(plan, program, edb, Maintenance::Dred)
    }

    /// Evaluates from scratch and keeps the result for updates made with `maintenance`.
    ///
    /// # Panics
    /// When a relation outgrows its limit or the memory; [`Maintained::try_with_maintenance`]
    /// reports that.
    pub fn with_maintenance(plan: ProgramPlan, program: &Program, edb: Database, maintenance: Maintenance) -> Self {
        Self::try_with_maintenance(plan, program, edb, maintenance)
            .unwrap_or_else(|e| panic!("evaluation stopped: {e}"))
    }

    /// [`Maintained::with_maintenance`], ending with the [`ResourceError`] of a relation
    /// that outgrows its limit ([`Database::set_tuple_limit`]) or the memory.
    pub fn try_with_maintenance(
        plan: ProgramPlan,
        program: &Program,
        edb: Database,
        maintenance: Maintenance,
    ) -> Result<Self, ResourceError> {
        Self::try_with_threads(plan, program, edb, maintenance, Threads::ONE)
    }

    /// [`Maintained::try_with_maintenance`] whose evaluation, and later updates, split
    /// their joins over `threads`.
    pub fn try_with_threads(
        plan: ProgramPlan,
        program: &Program,
        mut edb: Database,
        maintenance: Maintenance,
        threads: Threads,
    ) -> Result<Self, ResourceError> {
        let compiled = Compiled::new(&plan, program, &mut edb);
        let mut run = Run::new(false, None);
        run.threads = threads;
        let start = vec![0; edb.relation_count()];
        propagate(&compiled, &mut edb, &start, true, &mut run)?;
        let initial_work = run.stats.firings;
        let mut state = Self::keep(compiled, program, edb, run, initial_work, maintenance)?;
        state.recompute = program.negates().then(|| Box::new((plan, program.clone())));
        Ok(state)
    }

    /// Keeps the result of [`crate::evaluate`] of the same `plan` and `program` for updates,
    /// without evaluating again. The result of the reference engine is evaluated again from
    /// its input relations (its ranks are not the semi-naive ones the maintenance relies
    /// on, and the same evaluation then gives the same reports), and one that started from
    /// derived facts is evaluated again as it is.
    ///
    /// # Panics
    /// When a relation outgrows its limit or the memory; [`Maintained::try_from_evaluation`]
    /// reports that.
    pub fn from_evaluation(plan: ProgramPlan, program: &Program, eval: Evaluation, maintenance: Maintenance) -> Self {
        Self::try_from_evaluation(plan, program, eval, maintenance)
            .unwrap_or_else(|e| panic!("evaluation stopped: {e}"))
    }

    /// [`Maintained::from_evaluation`], ending with a [`ResourceError`] instead of a panic.
    pub fn try_from_evaluation(
        plan: ProgramPlan,
        program: &Program,
        eval: Evaluation,
        maintenance: Maintenance,
    ) -> Result<Self, ResourceError> {
        let mut db = eval.db;
        let threads = eval.threads;
        if !eval.from_inputs_only {
            return Self::try_with_threads(plan, program, db, maintenance, threads);
        }
        if !eval.seminaive {
            // A database as the input was given: maintain from the input facts alone.
            let derived: Vec<bool> =
                (0..db.relation_count()).map(|p| plan.rules.iter().any(|r| r.fires() && r.head.index() == p)).collect();
            let inputs = db.inputs_only(&derived);
            return Self::try_with_threads(plan, program, inputs, maintenance, threads);
        }
        if program.negates() {
            return Self::try_with_threads(plan, program, db, maintenance, threads);
        }
        let compiled = Compiled::for_fixpoint(&plan, program, &mut db);
        let mut run = Run::new(false, None);
        run.threads = threads;
        Self::keep(compiled, program, db, run, eval.work, maintenance)
    }

    /// Readies an evaluated database for updates.
    fn keep(
        mut compiled: Compiled,
        program: &Program,
        mut db: Database,
        run: Run,
        initial_work: u64,
        maintenance: Maintenance,
    ) -> Result<Self, ResourceError> {
        compiled.add_guards(program, &mut db, maintenance == Maintenance::Ranked);
        // DRed probes indexes the evaluation may never have read: the rederivation plans',
        // those of a join with a delta that existed in the first round only (in right-linear
        // closure, the closure keyed for the edge delta), and the one removal walks in an
        // input relation. Built lazily, each would cost the first update that needs it
        // O(|relation|) time and memory however small the change; built here, with the
        // materialisation, every later sync adds only the rows an update appended.
        for (p, rows) in db.rows.iter_mut().enumerate() {
            if !compiled.derived[p] {
                rows.ensure_removal_index();
            }
            rows.sync_all_indexes();
            rows.reserve_headroom();
            if maintenance == Maintenance::Ranked {
                rows.ensure_locator();
            }
        }
        db.check()?;
        Ok(Maintained { compiled, db, run, initial_work, maintenance, failure: None, recompute: None })
    }

    /// Gives updates the current texts of values: a batch may bring values the program
    /// had not interned when this state was made, and comparisons that order values as
    /// integers read their texts.
    pub fn set_values(&mut self, values: &ir::Interner<ir::Const>) {
        self.compiled.set_values(values);
        if let Some(source) = &mut self.recompute {
            source.1.consts = values.clone();
        }
    }

    /// Splits the joins of later updates over `threads` (those of a kept evaluation by
    /// default): the propagation of insertions and the rederivation. Over-deletion, and
    /// ranked maintenance's support checks, run on one thread.
    pub fn set_threads(&mut self, threads: Threads) {
        self.run.threads = threads;
    }

    /// The threads updates split their joins over.
    pub fn threads(&self) -> Threads {
        self.run.threads
    }

    /// The current input and derived facts.
    pub fn db(&self) -> &Database {
        &self.db
    }

    /// The work of the initial evaluation, in the unit of [`UpdateReport::work`].
    pub fn initial_work(&self) -> u64 {
        self.initial_work
    }

    /// Inserts the batch's input facts, recording which changed the input and which not.
    fn insert_inputs(&mut self, update: &Update, report: &mut UpdateReport) {
        for (pred, tuple) in &update.inserts {
            if self.is_input(*pred, tuple) && self.db.insert(*pred, tuple) {
                report.edb_inserted.push((*pred, tuple.clone()));
            } else {
                report.noop_inserts.push((*pred, tuple.clone()));
            }
        }
    }

    fn is_input(&self, pred: PredId, tuple: &[u32]) -> bool {
        pred.index() < self.db.relation_count()
            && !self.compiled.derived[pred.index()]
            && self.db.arity(pred) == tuple.len()
    }

    /// Applies one batch with DRed and reports every phase.
    ///
    /// # Panics
    /// When a relation outgrows its limit or the memory; [`Maintained::try_apply`]
    /// reports that.
    pub fn apply(&mut self, update: &Update) -> UpdateReport {
        self.try_apply(update).unwrap_or_else(|e| panic!("update stopped: {e}"))
    }

    /// [`Maintained::apply`], ending with the [`ResourceError`] of a relation that
    /// outgrows its limit or the memory. The state is then incomplete, and every later
    /// update fails with the same error.
    pub fn try_apply(&mut self, update: &Update) -> Result<UpdateReport, ResourceError> {
        self.guarded_update(update, true).map(|(report, _)| report)
    }

    /// Applies one batch like [`Maintained::apply`] but reports only how many facts each
    /// phase touched. An edge on most derivations over-deletes and puts back millions of
    /// facts, and the lists of [`UpdateReport`] then cost more time and memory (one
    /// allocation per fact and list) than the maintenance itself.
    ///
    /// # Panics
    /// When a relation outgrows its limit or the memory.
    pub fn apply_counting(&mut self, update: &Update) -> UpdateCounts {
        self.guarded_update(update, false).unwrap_or_else(|e| panic!("update stopped: {e}")).1
    }

    /// [`Maintained::run_update`] unless an earlier update failed, keeping its failure.
    fn guarded_update(&mut self, update: &Update, detail: bool) -> Result<(UpdateReport, UpdateCounts), ResourceError> {
        if let Some(failure) = self.failure {
            return Err(failure);
        }
        let outcome = self.run_update(update, detail);
        if let Err(failure) = outcome {
            self.failure = Some(failure);
        }
        outcome
    }

    /// DRed itself; the fact lists of the report are made only with `detail`.
    fn run_update(&mut self, update: &Update, detail: bool) -> Result<(UpdateReport, UpdateCounts), ResourceError> {
        if self.recompute.is_some() {
            return self.recompute(update, detail);
        }
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

        // Phase 1: over-delete. `gone` ends up holding every removed fact, input and
        // derived, in wave order (rows are appended, so each wave is a row range), and
        // the database without them.
        let waves = match self.maintenance {
            Maintenance::Dred => self.overdelete(&mut gone)?,
            Maintenance::Ranked => crate::ranked::overdelete(&self.compiled, &mut self.db, &mut gone, &mut self.run),
        };
        gone.check()?;
        for (k, from) in waves.iter().enumerate() {
            let to = waves.get(k + 1).cloned().unwrap_or_else(|| gone.ends());
            if self.derived_count_between(&gone, from, &to) == 0 {
                continue;
            }
            counts.waves += 1;
            if detail {
                let wave = self.derived_rows_between(&gone, from, &to);
                report
                    .overdeleted_waves
                    .push(wave.into_iter().flat_map(|(p, ts)| ts.into_iter().map(move |t| (p, t))).collect());
            }
        }
        self.db.next_rank();

        // What remains is closed under the rules except for what phases 2 and 3 add, so
        // everything from here on is a delta for the final propagation.
        let start = self.db.ends();
        self.insert_inputs(update, &mut report);
        self.db.check()?;

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
            let Database { rows, sets, .. } = &mut rederived;
            let h = rule.head.index();
            let (scratch, stats) = (&mut self.run.scratch, &mut self.run.stats);
            run_staged_split(guarded, &views, &rows[h], &mut sets[h], self.run.threads, scratch, stats);
            rederived.commit(rule.head);
            rederived.check_pred(rule.head)?;
        }
        self.db.next_rank();
        for (p, rows) in rederived.rows.iter().enumerate() {
            for tuple in rows.live_rows() {
                self.db.insert(PredId(p as u32), tuple);
            }
        }
        self.db.check()?;

        // Phase 3: propagate the rederived and inserted facts to a fixpoint.
        let before_insert = self.db.ends();
        propagate(&self.compiled, &mut self.db, &start, false, &mut self.run)?;
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
        Ok((report, counts))
    }

    /// The update of a program with negated atoms. Over-deletion and insertion assume
    /// that more input only ever derives more, which a negation breaks: a deleted fact
    /// under a negation can make facts appear above it, an inserted one make facts
    /// disappear. So the input is changed, everything is evaluated again from it, and the
    /// report lists the derived facts that went (as one wave of over-deletion, none
    /// rederived) and those that came (as inserted).
    fn recompute(&mut self, update: &Update, detail: bool) -> Result<(UpdateReport, UpdateCounts), ResourceError> {
        let mut report = UpdateReport::default();
        let mut counts = UpdateCounts::default();
        for (pred, tuple) in &update.deletes {
            if self.is_input(*pred, tuple) && self.db.remove(*pred, tuple) {
                report.edb_deleted.push((*pred, tuple.clone()));
            } else {
                report.noop_deletes.push((*pred, tuple.clone()));
            }
        }
        self.insert_inputs(update, &mut report);
        self.db.check()?;
        let (plan, program) = &**self.recompute.as_ref().expect("called for a recomputed state");
        let mut fresh = self.db.inputs_only(&self.compiled.derived);
        let compiled = Compiled::new(plan, program, &mut fresh);
        let work_before = self.run.stats.firings;
        let start = vec![0; fresh.relation_count()];
        propagate(&compiled, &mut fresh, &start, true, &mut self.run)?;
        report.work = self.run.stats.firings - work_before;
        let (mut gone, mut came) = (Vec::new(), Vec::new());
        for p in (0..self.db.relation_count()).filter(|&p| self.compiled.derived[p]).map(|p| PredId(p as u32)) {
            let old: Vec<Vec<u32>> = self.db.sorted_tuples(p);
            let new: Vec<Vec<u32>> = fresh.sorted_tuples(p);
            let removed: Vec<Vec<u32>> = old.iter().filter(|t| !fresh.contains(p, t)).cloned().collect();
            let added: Vec<Vec<u32>> = new.iter().filter(|t| !self.db.contains(p, t)).cloned().collect();
            counts.overdeleted += removed.len();
            counts.inserted += added.len();
            if !removed.is_empty() {
                gone.push((p, removed));
            }
            if !added.is_empty() {
                came.push((p, added));
            }
        }
        if counts.overdeleted > 0 {
            counts.waves = 1;
            if detail {
                report
                    .overdeleted_waves
                    .push(gone.iter().flat_map(|(p, ts)| ts.iter().map(|t| (*p, t.clone()))).collect());
            }
        }
        if detail {
            report.overdeleted = gone;
            report.inserted = came;
        }
        self.compiled = compiled;
        self.db = fresh;
        for list in
            [&mut report.edb_inserted, &mut report.edb_deleted, &mut report.noop_inserts, &mut report.noop_deletes]
        {
            list.sort();
        }
        counts.edb_inserted = report.edb_inserted.len();
        counts.edb_deleted = report.edb_deleted.len();
        counts.work = report.work;
        Ok((report, counts))
    }

    /// The number of tuples of derived predicates in rows `from[p]..` of `db`.
    fn derived_count(&self, db: &Database, from: &[u32]) -> usize {
        self.derived_count_between(db, from, &db.ends())
    }

    /// The number of tuples of derived predicates in rows `from[p]..to[p]` of `db`.
    fn derived_count_between(&self, db: &Database, from: &[u32], to: &[u32]) -> usize {
        (0..db.relation_count())
            .filter(|&p| self.compiled.derived[p])
            .map(|p| {
                let rel = db.rel(PredId(p as u32));
                (from[p]..to[p]).filter(|&r| rel.is_alive(r)).count()
            })
            .sum()
    }

    /// The tuples of derived predicates in rows `from[p]..` of `db`, sorted per predicate;
    /// only predicates with such tuples.
    fn derived_rows(&self, db: &Database, from: &[u32]) -> Vec<(PredId, Vec<Vec<u32>>)> {
        self.derived_rows_between(db, from, &db.ends())
    }

    /// [`Maintained::derived_rows`] of rows `from[p]..to[p]`.
    fn derived_rows_between(&self, db: &Database, from: &[u32], to: &[u32]) -> Vec<(PredId, Vec<Vec<u32>>)> {
        (0..db.relation_count())
            .filter(|&p| self.compiled.derived[p])
            .map(|p| (PredId(p as u32), db.sorted_rows_between(PredId(p as u32), from[p], to[p])))
            .filter(|(_, tuples)| !tuples.is_empty())
            .collect()
    }

    /// SPEC §5's over-deletion: wave `k + 1` holds the derived facts with a derivation
    /// using a fact of wave `k`, the deleted input facts being wave 0. The delta atom
    /// reads the previous wave, every other atom the whole pre-update database: since that
    /// database is a fixpoint, whatever the rules derive from it is in it, so staging into
    /// `gone` is the only probe needed. Returns where each wave begins in `gone`.
    fn overdelete(&mut self, gone: &mut Database) -> Result<Vec<Vec<u32>>, ResourceError> {
        sync_delta_indexes(&self.compiled, &mut self.db);
        let mut waves = Vec::new();
        let mut lo = vec![0; self.db.relation_count()];
        loop {
            let hi = gone.ends();
            if lo == hi {
                break;
            }
            waves.push(hi.clone());
            let Database { rows: gone_rows, sets: gone_sets, .. } = &mut *gone;
            derive_from(&self.compiled, &self.db, gone_rows, (&lo, &hi), &mut self.run, &mut |head, tuple| {
                gone_sets[head.index()].stage(&gone_rows[head.index()], tuple);
            });
            gone.commit_all();
            gone.check()?;
            lo = hi;
        }
        // The last entry marks the end of the last wave, which began no wave.
        waves.pop();
        for (p, rows) in gone.rows.iter().enumerate() {
            if rows.len() > 0 {
                self.db.remove_all(PredId(p as u32), rows.live_rows());
            }
        }
        Ok(waves)
    }
}
