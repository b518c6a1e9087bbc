//! Incremental maintenance with delete-and-rederive (docs/semantics.md, Incremental
//! maintenance): over-delete, rederive, insert. Demand relations of a magic program are
//! ordinary derived relations here.

use crate::database::Database;
use crate::dred_strata::{NegationPlans, StrataBatch};
use crate::join::{PhysPlan, View};
use crate::limits::ResourceError;
use crate::relation::Rows;
use crate::seminaive::{propagate, propagate_with, Compiled, CompiledRule, Run};
use crate::split::run_staged_split;
use crate::{Evaluation, Threads};
use ir::{one_per_fact, FactsByPred, PredId, Program, Tally, Tuple, Tuples, Update};
use plan::{AtomSource, ProgramPlan};

/// What one [`Maintained::apply`] did. Fact lists are sorted by predicate id, then tuple.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UpdateReport {
    /// Wave 1 holds the derived facts with a derivation using a deleted input fact, wave
    /// `k + 1` those with a derivation using a fact of wave `k` (and not in earlier waves).
    pub overdeleted_waves: Vec<Vec<Tuple>>,
    /// All over-deleted derived facts, per predicate.
    pub overdeleted: Vec<(PredId, Vec<Vec<u32>>)>,
    /// Over-deleted facts that still had a one-step derivation and were put back.
    pub rederived: Vec<(PredId, Vec<Vec<u32>>)>,
    /// Derived facts added by the insertion phase.
    pub inserted: Vec<(PredId, Vec<Vec<u32>>)>,
    /// Input facts actually inserted / deleted.
    pub edb_inserted: Vec<Tuple>,
    pub edb_deleted: Vec<Tuple>,
    /// Requested changes that changed nothing: inserts of present facts and deletes of
    /// absent ones (including repeats within the batch, tuples of the wrong arity, and
    /// changes to derived predicates, which only follow from the input).
    pub noop_inserts: Vec<Tuple>,
    pub noop_deletes: Vec<Tuple>,
    /// Rule firings over all three phases, comparable to `Evaluation::work`.
    pub work: u64,
    /// The net change of the derived relations: the facts they held before the batch and
    /// not after it, and the reverse. Over-deleted facts that came back are in neither.
    pub removed: FactsByPred,
    pub added: FactsByPred,
    /// How the batch was maintained: the strategy asked for, or the one
    /// [`Maintenance::Auto`] chose, with the reason.
    pub strategy: MaintainedBy,
    pub reason: String,
    /// Per derived relation that any phase touched, the sizes of its lists: always set,
    /// also when the lists are not made ([`UpdateReport::listed`]).
    pub tallies: Vec<(PredId, Tally)>,
    /// Per reduction (an aggregate) whose rows the batch changed, its head and the number
    /// of its groups recomputed (a count's updated in place); the other groups are not
    /// read.
    pub groups: Vec<(PredId, usize)>,
    /// The number of over-deletion waves that removed a derived fact.
    pub waves: usize,
    /// Whether the fact lists (`overdeleted_waves`, `overdeleted`, `rederived`, `inserted`)
    /// were made: [`Maintained::try_apply_listing`] makes them only for a batch that
    /// touches few facts.
    pub listed: bool,
}

impl UpdateReport {
    /// The sizes of the net change of `pred` (facts removed, facts added), read off its
    /// tally ([`Tally::net`]). Also there when the report does not hold the facts of the
    /// net change ([`Maintained::try_apply_summarizing`]).
    pub fn net_count(&self, pred: PredId) -> (usize, usize) {
        Tally::net_of(&self.tallies, pred)
    }
}

/// What one batch's report holds beyond its counts.
#[derive(Clone, Copy, Debug)]
struct Detail {
    /// Whether to list the net change ([`UpdateReport::removed`], [`UpdateReport::added`]).
    net: bool,
    /// The fact lists are made when the batch touches at most this many facts.
    list_up_to: Option<usize>,
}

impl Detail {
    const ALL: Detail = Detail { net: true, list_up_to: Some(usize::MAX) };
    const COUNTS: Detail = Detail { net: false, list_up_to: None };

    fn lists(self, tallies: &[(PredId, Tally)]) -> bool {
        let touched: usize = tallies.iter().map(|(_, t)| t.overdeleted + t.rederived + t.reinserted + t.inserted).sum();
        self.list_up_to.is_some_and(|most| touched <= most)
    }
}

/// What maintained one batch: the strategy asked for ([`Maintenance`]), or the one
/// [`Maintenance::Auto`] chose for it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MaintainedBy {
    /// Delete-and-rederive (docs/semantics.md, Incremental maintenance: DRed).
    #[default]
    Dred,
    /// DRed with ranked over-deletion.
    Ranked,
    /// The derived relations evaluated again from the new input, and the difference
    /// reported (one wave of over-deletion, nothing rederived).
    Recompute,
}

/// Calls `emit` with the head of every derivation that reads one fact of rows
/// `lo[p]..hi[p]` of `delta` at some body position and the whole of `db` at the others
/// (duplicates included). The indexes the joins probe must be synced
/// ([`sync_delta_indexes`] of the same range).
pub(crate) fn derive_from(
    c: &Compiled,
    db: &Database,
    delta: &[Rows],
    range: (&[u32], &[u32]),
    run: &mut Run,
    emit: &mut impl FnMut(PredId, &[u32]),
) {
    derive_through(c, db, delta, range, run, &|r| &c.rules[r].delta, emit);
}

/// [`derive_from`] with the delta plans `plans` gives for each rule (its position in
/// [`Compiled::rules`]), which read body position `i` first as `plans(r)[i]`.
pub(crate) fn derive_through<'p>(
    c: &Compiled,
    db: &Database,
    delta: &[Rows],
    (lo, hi): (&[u32], &[u32]),
    run: &mut Run,
    plans: &dyn Fn(usize) -> &'p [PhysPlan],
    emit: &mut impl FnMut(PredId, &[u32]),
) {
    for (r, rule) in c.rules.iter().enumerate() {
        for (i, variant) in plans(r).iter().enumerate() {
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
                .chain(variant.negation_views(&db.rows))
                .collect();
            variant.run(&views, &mut run.scratch, &mut run.stats, &mut |tuple| emit(rule.head, tuple));
        }
    }
}

/// Brings the indexes [`derive_from`] probes for a delta of rows `lo[p]..hi[p]` up to
/// date with `db`: only those of the plans that read a non-empty delta, so that an index
/// only a change of another relation needs is not built (or extended) before one comes.
pub(crate) fn sync_delta_indexes(c: &Compiled, db: &mut Database, range: (&[u32], &[u32])) {
    sync_indexes_through(c, db, range, &|r| &c.rules[r].delta);
}

/// What [`sync_delta_indexes`] of the same range would cost, in rows added to the
/// indexes its plans probe ([`PhysPlan::sync_cost`]): a pass over each relation whose
/// index is built then, or the scans that stand in for one.
fn delta_index_rows(c: &Compiled, db: &Database, (lo, hi): (&[u32], &[u32])) -> u64 {
    let mut rows = 0;
    for rule in &c.rules {
        for (i, (variant, p)) in rule.delta.iter().zip(&rule.body_preds).enumerate() {
            if lo[p.index()] < hi[p.index()] {
                rows += variant.sync_cost(&db.rows, Some(delta_first_rows(variant, i, db, (lo, hi))));
            }
        }
    }
    rows
}

/// The rows the first step of `variant`, the delta plan of body atom `i`, reads for the
/// delta of rows `lo[p]..hi[p]` ([`first_step_rows`]).
fn delta_first_rows(variant: &PhysPlan, i: usize, db: &Database, (lo, hi): (&[u32], &[u32])) -> u32 {
    let delta = variant.steps.first().map_or(0, |s| hi[s.pred.index()].saturating_sub(lo[s.pred.index()]));
    first_step_rows(variant, db, AtomSource::Body(i), delta)
}

/// The rows the first step of `plan` reads: `rows` when it reads `source` (the delta, the
/// candidates), else its whole relation.
fn first_step_rows(plan: &PhysPlan, db: &Database, source: AtomSource, rows: u32) -> u32 {
    match plan.steps.first() {
        Some(step) if step.source == source => rows,
        Some(step) => db.rel(step.pred).end(),
        None => 0,
    }
}

/// [`sync_delta_indexes`] for the plans of [`derive_through`].
pub(crate) fn sync_indexes_through<'p>(
    c: &Compiled,
    db: &mut Database,
    (lo, hi): (&[u32], &[u32]),
    plans: &dyn Fn(usize) -> &'p [PhysPlan],
) {
    for (r, rule) in c.rules.iter().enumerate() {
        for (i, variant) in plans(r).iter().enumerate() {
            let p = rule.body_preds[i].index();
            if lo[p] < hi[p] {
                // A delta of a few rows probes the next step's relation a few times.
                let first_rows = delta_first_rows(variant, i, db, (lo, hi));
                variant.sync_indexes_deferring(&mut db.rows, first_rows);
            }
        }
    }
}

/// Readies an evaluated database for maintenance: the plans DRed runs (with the support
/// checks of ranked over-deletion unless only DRed runs), and their indexes.
fn prepare(
    compiled: &mut Compiled,
    program: &Program,
    db: &mut Database,
    maintenance: Maintenance,
) -> Result<(), ResourceError> {
    add_guards(compiled, program, db, maintenance);
    prepare_rows(compiled, db)
}

/// The plans [`Compiled::add_guards`] makes for a state maintained by `maintenance`.
fn add_guards(compiled: &mut Compiled, program: &Program, db: &mut Database, maintenance: Maintenance) {
    compiled.add_guards(program, db, maintenance != Maintenance::Dred);
}

/// The part of [`prepare`] that readies the rows.
fn prepare_rows(compiled: &Compiled, db: &mut Database) -> Result<(), ResourceError> {
    // DRed probes indexes the evaluation may never have read: the rederivation plans',
    // those of a join with a delta that existed in the first round only (in right-linear
    // closure, the closure keyed for the edge delta), and the one removal walks in an
    // input relation; ranked over-deletion locates rows. Each is built by the first batch
    // that reads it, only for the relations the batch reaches: building them all here
    // would cost more time and memory than the evaluation, even for batches that change
    // nothing or only another relation. Once built, a sync adds only appended rows.
    for (p, rows) in db.rows.iter_mut().enumerate() {
        if !compiled.derived[p] {
            rows.ensure_removal_index();
        }
        rows.reserve_headroom();
    }
    db.check()
}

/// Drops a database that a recomputed batch replaced, on a thread of its own when it is
/// large: handing millions of rows' pages back to the system takes about a millisecond
/// per 20 MB, longer than recomputing a small new state did, and nothing waits for it.
fn drop_aside(db: Database) {
    const LARGE_ROWS: usize = 1 << 16;
    let rows: usize = db.rows.iter().map(|rows| rows.end() as usize).sum();
    if rows >= LARGE_ROWS {
        // Without a thread the closure, and the database with it, is dropped here.
        let _ = std::thread::Builder::new().name("dlc-drop".into()).spawn(move || drop(db));
    }
}

/// Whether a program is maintained stratum by stratum (`dred_strata.rs`): it negates an
/// atom or has a reduction, and a stratum then needs the final state of those below it.
fn stratified(program: &Program) -> bool {
    program.negates() || program.rules.iter().any(|r| r.aggregate.is_some())
}

/// The number of facts of `db`'s derived relations, or of its input relations.
fn fact_count(compiled: &Compiled, db: &Database, derived: bool) -> usize {
    (0..db.relation_count()).filter(|&p| compiled.derived[p] == derived).map(|p| db.len(PredId(p as u32))).sum()
}

/// The derived facts of one depth of an evaluation ([`depth_profile`]).
#[derive(Clone, Copy, Debug, PartialEq)]
struct DepthLevel {
    /// How many input facts a derived fact of this depth rests on.
    support: f64,
    facts: f64,
}

/// The derived facts of an evaluated database (its `work` in rule firings, in `rounds`)
/// by the input facts each rests on, a level per round at most. A derived fact of depth
/// `k` (the round that derived it) with `m` derivations per fact (the evaluation's
/// firings per derived fact) rests on about `1 + m + … + m^(k-1)` input facts, `k` when
/// each fact has one derivation (a chain's closure). Taken once per evaluation: the rank
/// runs it reads grow with every batch, and reading them for each would make a long
/// session's batches slower and slower.
fn depth_profile(compiled: &Compiled, db: &Database, work: u64, rounds: u64) -> Vec<DepthLevel> {
    let inputs = fact_count(compiled, db, false).max(1) as f64;
    let per_fact = (work as f64 / fact_count(compiled, db, true).max(1) as f64).max(1.0);
    let rounds = rounds.max(1) as f64;
    let mut profile = Vec::new();
    for p in (0..db.relation_count()).filter(|&p| compiled.derived[p]) {
        let rel = db.rel(PredId(p as u32));
        // A relation with more rank runs than the evaluation had rounds gained facts
        // from several rules in a round: its runs' ordinals are scaled down to rounds.
        let scale = (rounds / rel.runs().max(1) as f64).min(1.0);
        // `support` is the input facts under a fact `levels` rounds deep.
        let (mut support, mut reach, mut levels, mut depth) = (0.0_f64, 1.0_f64, 0_u32, 0.0_f64);
        let mut level = DepthLevel { support: 0.0, facts: 0.0 };
        for len in rel.run_lens() {
            depth += scale;
            while f64::from(levels) < depth.ceil() {
                support = (support + reach).min(inputs);
                reach = (reach * per_fact).min(inputs);
                levels += 1;
            }
            if support != level.support && level.facts > 0.0 {
                profile.push(level);
                level.facts = 0.0;
            }
            level.support = support;
            level.facts += f64::from(len);
        }
        if level.facts > 0.0 {
            profile.push(level);
        }
    }
    profile
}

/// The number of facts of each relation of `db`.
fn relation_lens(db: &Database) -> Vec<usize> {
    (0..db.relation_count()).map(|p| db.len(PredId(p as u32))).collect()
}

/// Stages into `rederived` the facts of `gone` that one of `rules` derives in one step
/// from `db` (DRed's rederivation), each rule's relation committed once.
pub(crate) fn rederive<'r>(
    rules: impl Iterator<Item = &'r CompiledRule>,
    db: &mut Database,
    gone: &Database,
    rederived: &mut Database,
    run: &mut Run,
) -> Result<(), ResourceError> {
    for rule in rules {
        let candidates = gone.rel(rule.head);
        let Some(guarded) = rule.rederivation(candidates.len(), &db.rows) else { continue };
        if candidates.len() == 0 || guarded.steps.iter().any(|s| s.source != AtomSource::Head && db.len(s.pred) == 0) {
            continue;
        }
        // A handful of candidates probes the next step's relation a handful of times.
        let first_rows = first_step_rows(guarded, db, AtomSource::Head, candidates.end());
        guarded.sync_indexes_deferring(&mut db.rows, first_rows);
        let views: Vec<View<'_>> = guarded
            .steps
            .iter()
            .map(|s| match s.source {
                AtomSource::Head => View::whole(candidates),
                AtomSource::Body(_) => View::whole(db.rel(s.pred)).with_set(Some(&db.sets[s.pred.index()])),
            })
            .chain(guarded.negation_views(&db.rows))
            .collect();
        let Database { rows, sets, .. } = &mut *rederived;
        let h = rule.head.index();
        run_staged_split(guarded, &views, &rows[h], &mut sets[h], run.threads, &mut run.scratch, &mut run.stats);
        rederived.commit(rule.head);
        rederived.check_pred(rule.head)?;
    }
    Ok(())
}

/// Whether [`UpdateReport::net_count`] gives the sizes of the net change the report lists,
/// for every relation either names.
fn report_counts_agree(report: &UpdateReport) -> bool {
    let size = |lists: &FactsByPred, p: PredId| lists.iter().find(|(q, _)| *q == p).map_or(0, |(_, ts)| ts.len());
    let preds =
        report.tallies.iter().map(|(p, _)| *p).chain(report.removed.iter().chain(&report.added).map(|(p, _)| *p));
    preds.into_iter().all(|p| report.net_count(p) == (size(&report.removed, p), size(&report.added, p)))
}

/// Reads the facts of one version of a database, for [`Maintained::net_change`].
trait FactView {
    fn contains(&self, pred: PredId, tuple: &[u32]) -> bool;
    fn for_each(&self, pred: PredId, f: &mut dyn FnMut(&[u32]));
}

/// Every fact of a database.
struct Whole<'a>(&'a Database);

impl FactView for Whole<'_> {
    fn contains(&self, pred: PredId, tuple: &[u32]) -> bool {
        self.0.contains(pred, tuple)
    }
    fn for_each(&self, pred: PredId, f: &mut dyn FnMut(&[u32])) {
        self.0.tuples(pred).for_each(f);
    }
}

/// The state before a batch that is recomputed: the database with the facts removed from
/// it so far (`gone`, which the database no longer holds).
struct Older<'a> {
    db: &'a Database,
    gone: &'a Database,
}

impl FactView for Older<'_> {
    fn contains(&self, pred: PredId, tuple: &[u32]) -> bool {
        self.db.contains(pred, tuple) || self.gone.contains(pred, tuple)
    }
    fn for_each(&self, pred: PredId, f: &mut dyn FnMut(&[u32])) {
        self.db.tuples(pred).chain(self.gone.tuples(pred)).for_each(f);
    }
}

/// The facts a batch appended to the database, rows `from[p]..`: those it derived or put
/// back after the over-deletion. The over-deleted facts it did not put back are not in
/// the database at all, so a fact removed in the batch is in the database only if it is
/// one of these.
struct Appended<'a> {
    db: &'a Database,
    from: &'a [u32],
}

impl FactView for Appended<'_> {
    fn contains(&self, pred: PredId, tuple: &[u32]) -> bool {
        self.db.contains(pred, tuple)
    }
    fn for_each(&self, pred: PredId, f: &mut dyn FnMut(&[u32])) {
        let rows = self.db.rel(pred);
        (self.from[pred.index()]..rows.end()).filter(|&r| rows.is_alive(r)).for_each(|r| f(rows.row(r)));
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
    /// How the batch was maintained ([`UpdateReport::strategy`]).
    pub strategy: MaintainedBy,
}

/// How [`Maintained`] handles deletions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Maintenance {
    /// Delete-and-rederive (docs/semantics.md, Incremental maintenance: DRed): over-delete
    /// every fact with a derivation that used a deleted fact, then rederive and insert.
    #[default]
    Dred,
    /// DRed whose over-deletion is ranked: every fact keeps the rank of the evaluation step
    /// that first derived it, and a fact is over-deleted only when no derivation from
    /// lower-ranked facts survives. Over-deletion then stops at the first alternative
    /// derivation instead of spreading through everything downstream of the deleted fact.
    Ranked,
    /// Decided per batch ([`MaintainedBy`]): a batch without deletions only propagates its
    /// insertions (DRed's third phase, the same for every strategy); one that deletes much
    /// of the input is recomputed; otherwise DRed's over-deletion runs within a work
    /// budget (a share of the last evaluation's work), past it ranked over-deletion within
    /// a larger one, and past that the batch is recomputed instead.
    Auto,
}

/// A program's plan with its database (input and derived facts) kept up to date.
pub struct Maintained {
    compiled: Compiled,
    db: Database,
    run: Run,
    initial_work: u64,
    /// The work of the evaluation the state last came from (the first, or a batch
    /// recomputed since): [`Maintenance::Auto`]'s budget is a share of it.
    evaluation_work: u64,
    /// The derived facts of that evaluation by their depth, for
    /// [`Maintained::dred_estimate`] ([`depth_profile`]).
    depth_profile: Vec<DepthLevel>,
    maintenance: Maintenance,
    /// The error an update stopped with: the database is incomplete from then on, so
    /// every later update reports it again.
    failure: Option<ResourceError>,
    /// The plan and program, for the batches that are recomputed (see
    /// [`Maintained::recompute`]).
    source: Box<(ProgramPlan, Program)>,
    /// For a program with negated atoms or reductions, the plans of its stratified
    /// maintenance (`dred_strata.rs`).
    negation: Option<NegationPlans>,
    /// [`AUTO_MIN_BUDGET`] unless set otherwise ([`Maintained::set_auto_min_budget`]).
    auto_min_budget: u64,
    /// Whether the state came from a recomputed batch whose maintenance plans
    /// ([`Compiled::add_guards`], which samples the data to order their joins) are made
    /// by the next batch: a batch that recomputes a small state would otherwise spend
    /// more on them than on the recomputation, for a next batch that may never come.
    guards_pending: bool,
}

/// The share of a recomputation's estimated work that [`Maintenance::Auto`] lets
/// over-deletion spend (DRed's and ranked together) before it recomputes the batch
/// instead: a batch it gives up on then costs at most a tenth more than recomputing.
const AUTO_BUDGET_SHARE: u64 = 10;

/// A row added to a row locator costs about this many rule firings of an evaluation in
/// [`Maintenance::Auto`]'s budget (a hash and an insertion into a table of millions,
/// against a probe and a staging that mostly hit the cache; measured on the random graph's
/// closure).
const LOCATE_WORK: u64 = 2;

/// A row added to an index costs about this share of a rule firing in
/// [`Maintenance::Auto`]'s budget (a counting sort streams the rows): on the benchmarks'
/// closures 14 to 16 ns a row, against 30 to 50 ns for a firing and its share of the
/// stored facts.
const INDEX_SHARE: u64 = 3;

/// A unit of ranked over-deletion's work (a firing that then locates its head, or a
/// quarter of a support check) costs about this many firings of an evaluation: each
/// touches a row locator or an index at random, where the evaluation's joins stream.
const RANKED_WORK: u64 = 8;

/// The least budget [`Maintenance::Auto`] gives ranked over-deletion, in rule firings, and
/// the evaluation work below which it never recomputes a batch outright: a state this
/// small is maintained in no measurable time either way, and its reports are clearer.
pub const AUTO_MIN_BUDGET: u64 = 10_000;

/// [`Maintenance::Auto`] gives DRed's over-deletion, which it tries first, at least this
/// share of its budget (more when it is expected to remove more, see
/// [`AUTO_ESTIMATE_SHARE`]); ranked over-deletion, if it comes to it, the rest.
const AUTO_DRED_SHARE: u64 = 16;

/// [`Maintenance::Auto`] does not try DRed's over-deletion when it is expected to remove
/// more facts than this share of the budget, and lets it spend at most this share.
const AUTO_ESTIMATE_SHARE: u64 = 4;

/// [`Maintenance::Auto`] builds the indexes over-deletion probes first (once per state)
/// when they cost at most this share of a recomputation, and recomputes the batch
/// otherwise.
const AUTO_SETUP_SHARE: u64 = 4;

/// Over-deletion within a budget reads a wave this many rows of each relation at a time,
/// and stops after the slice that passes the budget.
const WAVE_SLICE: u32 = 512;

/// Over-deletion without a budget (DRed) reads a wave this many rows at a time:
/// few enough that what one slice derives is a small staging buffer, many enough that
/// the joins' set-up is paid rarely.
const UNBUDGETED_WAVE_SLICE: u32 = 1 << 16;

/// [`Maintenance::Auto`] recomputes a batch outright when it deletes at least this share
/// of the input facts: such a batch over-deletes most of what the input derives.
const AUTO_RECOMPUTE_SHARE: usize = 20;

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
        let rounds = run.iterations as u64;
        Self::keep(compiled, plan, program, edb, run, (initial_work, rounds), maintenance)
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
        let compiled = Compiled::for_fixpoint(&plan, program, &mut db);
        let mut run = Run::new(false, None);
        run.threads = threads;
        Self::keep(compiled, plan, program, db, run, (eval.work, eval.iterations as u64), maintenance)
    }

    /// Readies an evaluated database for updates.
    fn keep(
        mut compiled: Compiled,
        plan: ProgramPlan,
        program: &Program,
        mut db: Database,
        run: Run,
        (initial_work, rounds): (u64, u64),
        maintenance: Maintenance,
    ) -> Result<Self, ResourceError> {
        prepare(&mut compiled, program, &mut db, maintenance)?;
        let negation = stratified(program).then(|| NegationPlans::new(&compiled, program, &mut db));
        let depth_profile = depth_profile(&compiled, &db, initial_work, rounds);
        Ok(Maintained {
            compiled,
            db,
            run,
            initial_work,
            evaluation_work: initial_work,
            depth_profile,
            maintenance,
            failure: None,
            source: Box::new((plan, program.clone())),
            negation,
            auto_min_budget: AUTO_MIN_BUDGET,
            guards_pending: false,
        })
    }

    /// Splits the joins of later updates over `threads` (those of a kept evaluation by
    /// default): the propagation of insertions and the rederivation. Over-deletion, and
    /// ranked maintenance's support checks, run on one thread.
    pub fn set_threads(&mut self, threads: Threads) {
        self.run.threads = threads;
    }

    /// Sets the least budget of [`Maintenance::Auto`] (see [`AUTO_MIN_BUDGET`]); with 0,
    /// it decides on a small state as it would on a large one, which tests of small
    /// programs use to see it switch.
    pub fn set_auto_min_budget(&mut self, firings: u64) {
        self.auto_min_budget = firings;
    }

    /// The budget [`Maintenance::Auto`] gives over-deletion in a batch that deletes
    /// `deleted` input facts, in rule firings: a share of what recomputing would cost
    /// ([`Maintained::recompute_estimate`]).
    fn auto_budget(&self, deleted: usize) -> u64 {
        (self.recompute_estimate(deleted) / AUTO_BUDGET_SHARE).max(self.auto_min_budget)
    }

    /// What recomputing after a batch that deletes `deleted` input facts is expected to
    /// cost, in rule firings: the last evaluation's firings, and a firing for each derived
    /// fact it stored (a fact costs at least that much more: staged, committed, indexed),
    /// scaled by the input left after the batch (a batch that deletes most of the input
    /// leaves little to recompute).
    fn recompute_estimate(&self, deleted: usize) -> u64 {
        let inputs = self.input_count().max(1) as u128;
        let left = inputs.saturating_sub(deleted as u128);
        let cost = u128::from(self.evaluation_work) + self.derived_total() as u128;
        (cost * left / inputs) as u64
    }

    /// The number of derived facts.
    fn derived_total(&self) -> usize {
        fact_count(&self.compiled, &self.db, true)
    }

    /// The rule firings [`Maintenance::Auto`] lets DRed's over-deletion of `deleted` input
    /// facts spend: two firings for each fact it is expected to remove
    /// ([`Maintained::dred_estimate`], which counts only the facts of an average batch),
    /// within 1/[`AUTO_DRED_SHARE`] to 1/[`AUTO_ESTIMATE_SHARE`] of the budget.
    fn dred_probe(&self, deleted: usize) -> u64 {
        let budget = self.auto_budget(deleted);
        self.dred_estimate(deleted).saturating_mul(2).clamp(budget / AUTO_DRED_SHARE, budget / AUTO_ESTIMATE_SHARE)
    }

    /// How many facts DRed's over-deletion of `deleted` input facts is expected to remove:
    /// a derived fact resting on `support` input facts ([`depth_profile`]) goes when any
    /// of them is deleted, so with a chance of `deleted` times that, out of all the input
    /// facts. On a chain cut in its middle that is about half the closure, on a tree's
    /// leaf a few facts, and on a random graph, whose facts have several derivations
    /// each, most of the closure.
    fn dred_estimate(&self, deleted: usize) -> u64 {
        let inputs = self.input_count().max(1) as f64;
        let expected: f64 = self
            .depth_profile
            .iter()
            .map(|level| level.facts * (deleted as f64 * level.support / inputs).min(1.0))
            .sum();
        expected as u64
    }

    /// The levels of [`Maintained::depth_profile`].
    #[cfg(test)]
    pub(crate) fn depth_levels(&self) -> usize {
        self.depth_profile.len()
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
        self.guarded_update(update, Detail::ALL).map(|(report, _)| report)
    }

    /// [`Maintained::try_apply`] whose report lists the facts of each phase only when the
    /// batch over-deletes, rederives and inserts at most `most` facts together
    /// ([`UpdateReport::listed`]); otherwise it holds their counts per relation
    /// ([`UpdateReport::tallies`]) and the net change. A deletion that over-deletes a
    /// closure of millions of facts would otherwise hold several lists of them, an
    /// allocation per fact, many times the memory of the state.
    pub fn try_apply_listing(&mut self, update: &Update, most: usize) -> Result<UpdateReport, ResourceError> {
        self.guarded_update(update, Detail { net: true, list_up_to: Some(most) }).map(|(report, _)| report)
    }

    /// [`Maintained::try_apply_listing`] whose report leaves out the facts of the net
    /// change (`removed` and `added` stay empty; [`UpdateReport::net_count`] gives their
    /// numbers): a recomputed batch that deletes most of a closure then counts what went
    /// from the new state alone, without reading or sorting the millions of facts that did.
    pub fn try_apply_summarizing(&mut self, update: &Update, most: usize) -> Result<UpdateReport, ResourceError> {
        self.guarded_update(update, Detail { net: false, list_up_to: Some(most) }).map(|(report, _)| report)
    }

    /// Applies one batch like [`Maintained::apply`] but reports only how many facts each
    /// phase touched. An edge on most derivations over-deletes and puts back millions of
    /// facts, and the lists of [`UpdateReport`] then cost more time and memory (one
    /// allocation per fact and list) than the maintenance itself.
    ///
    /// # Panics
    /// When a relation outgrows its limit or the memory.
    pub fn apply_counting(&mut self, update: &Update) -> UpdateCounts {
        self.guarded_update(update, Detail::COUNTS).unwrap_or_else(|e| panic!("update stopped: {e}")).1
    }

    /// [`Maintained::run_update`] unless an earlier update failed, keeping its failure.
    fn guarded_update(
        &mut self,
        update: &Update,
        detail: Detail,
    ) -> Result<(UpdateReport, UpdateCounts), ResourceError> {
        if let Some(failure) = self.failure {
            return Err(failure);
        }
        let outcome = self.run_update(update, detail);
        if let (true, Ok((report, _))) = (detail.net, &outcome) {
            debug_assert!(report_counts_agree(report), "the tallies disagree with the net change: {report:?}");
        }
        if let Err(failure) = outcome {
            self.failure = Some(failure);
        }
        outcome
    }

    /// DRed itself; the lists of the report are made as `detail` says.
    fn run_update(&mut self, update: &Update, detail: Detail) -> Result<(UpdateReport, UpdateCounts), ResourceError> {
        let mut report = UpdateReport::default();
        let work_before = self.run.stats.firings;
        if std::mem::take(&mut self.guards_pending) {
            add_guards(&mut self.compiled, &self.source.1, &mut self.db, self.maintenance);
        }

        // Everything deleted, input facts and over-deleted derived facts alike, in wave
        // order: rows are appended, so each wave is a row range of these relations.
        let mut gone = self.db.empty_like();
        for (pred, tuple) in &update.deletes {
            if self.is_input(*pred, tuple) && self.db.contains(*pred, tuple) && gone.stage(*pred, tuple) {
                report.edb_deleted.push((*pred, tuple.clone()));
            } else {
                report.noop_deletes.push((*pred, tuple.clone()));
            }
        }
        gone.commit_all();
        gone.check()?;

        let (strategy, reason) = self.choose(report.edb_deleted.len());
        report.strategy = strategy;
        report.reason = reason;
        if strategy == MaintainedBy::Recompute {
            return self.recompute(update, gone, report, work_before, detail);
        }

        // Phase 1: over-delete. `gone` ends up holding every removed fact, input and
        // derived, in wave order (rows are appended, so each wave is a row range), and
        // the database without them.
        let auto = self.maintenance == Maintenance::Auto;
        let inputs = self.input_count();
        let deleted = report.edb_deleted.len();
        let budget = self.auto_budget(deleted);
        let mut waves = None;
        // The first wave of over-deletion (the same delta plans for both strategies) may
        // probe an index nothing built yet, such as the closure by its second column for a
        // deleted edge: a pass over a relation, which auto counts before it starts.
        let setup = match auto && strategy == MaintainedBy::Dred {
            true => {
                let zero = vec![0; gone.relation_count()];
                delta_index_rows(&self.compiled, &self.db, (&zero, &gone.ends())) / INDEX_SHARE
            }
            false => 0,
        };
        // What DRed's over-deletion is expected to remove, from the depth of the derived
        // facts: a chain cut in its middle takes half its closure, a leaf of a tree a few.
        let expected = match auto && strategy == MaintainedBy::Dred {
            true => self.dred_estimate(deleted),
            false => 0,
        };
        // DRed's over-deletion whose indexes are built is tried within its budget, which
        // tells a local change from a wide one better than any estimate; one that needs an
        // index first is tried only when it is expected to stay within a quarter of the
        // budget, since the index is paid before the over-deletion shows how far it goes.
        let try_dred = setup == 0 || expected <= budget / AUTO_ESTIMATE_SHARE;
        // The indexes are built once per state, and pay for every later batch too: auto
        // builds them for a batch DRed's over-deletion is expected to keep local as long as
        // they cost at most a quarter of a recomputation.
        if try_dred && setup > budget * AUTO_BUDGET_SHARE / AUTO_SETUP_SHARE {
            report.strategy = MaintainedBy::Recompute;
            report.reason = format!(
                "deletes {deleted} of {inputs} input facts, and the indexes over-deletion would build first are \
                 worth {setup} rule firings, past 1/{AUTO_SETUP_SHARE} of a recomputation's {} (the evaluation's {} \
                 firings and {} facts, scaled by the input left)",
                self.recompute_estimate(deleted),
                self.evaluation_work,
                self.derived_total()
            );
            return self.recompute(update, gone, report, work_before, detail);
        }
        if strategy == MaintainedBy::Dred {
            // Auto tries DRed's over-deletion first, within a share of its budget: a local
            // change over-deletes little and needs no row locators.
            let probe = self.dred_probe(deleted);
            waves = match (auto, try_dred) {
                (false, _) => self.overdelete(&mut gone, u64::MAX)?,
                (true, true) => self.overdelete(&mut gone, work_before.saturating_add(probe))?,
                (true, false) => None,
            };
            if waves.is_none() {
                gone = self.db.empty_like();
                for (pred, tuple) in &report.edb_deleted {
                    gone.insert(*pred, tuple);
                }
                gone.check()?;
                report.strategy = MaintainedBy::Ranked;
                report.reason = match try_dred {
                    true => format!(
                        "deletes {deleted} of {inputs} input facts, and DRed's over-deletion passed its budget of \
                         {probe} rule firings: ranked, within {budget}"
                    ),
                    false => format!(
                        "deletes {deleted} of {inputs} input facts, and DRed's over-deletion, which would first build \
                         indexes worth {setup} rule firings, is expected to remove {expected} facts (by the depth of \
                         the derived facts), past 1/{AUTO_ESTIMATE_SHARE} of the budget of {budget} rule firings: \
                         ranked, within it"
                    ),
                };
            }
        }
        let mut waves = match waves {
            Some(waves) => waves,
            None => {
                let limit = if auto { work_before.saturating_add(budget) } else { u64::MAX };
                // Ranked over-deletion first locates the facts of the derived relations the
                // batch reaches (once per state): that work, a firing's worth per row, comes
                // out of its budget, and a batch whose budget it would pass is recomputed
                // before any of it is done.
                let locate =
                    if auto { crate::ranked::locator_rows(&self.compiled, &self.db, &gone) * LOCATE_WORK } else { 0 };
                let spent = self.run.stats.firings.saturating_add(locate + setup);
                if spent > limit {
                    report.strategy = MaintainedBy::Recompute;
                    report.reason = format!(
                        "deletes {deleted} of {inputs} input facts, DRed's over-deletion {}, and ranked \
                         over-deletion would first locate facts worth {locate} firings, past the budget of {budget} \
                         rule firings (1/{AUTO_BUDGET_SHARE} of a recomputation's {})",
                        match try_dred {
                            true => "passed its budget",
                            false => "is expected to pass its budget",
                        },
                        self.recompute_estimate(deleted)
                    );
                    return self.recompute(update, gone, report, work_before, detail);
                }
                // Its work is weighed against the budget at `RANKED_WORK` firings a unit.
                let ranked_budget = match auto {
                    true => self.run.stats.firings + (limit - spent) / RANKED_WORK,
                    false => u64::MAX,
                };
                let ranked =
                    crate::ranked::overdelete(&self.compiled, &mut self.db, &mut gone, &mut self.run, ranked_budget);
                gone.check()?;
                match ranked {
                    Some(waves) => waves,
                    None => {
                        report.strategy = MaintainedBy::Recompute;
                        report.reason = format!(
                            "deletes {deleted} of {inputs} input facts, and over-deletion passed its budget of \
                             {budget} rule firings (1/{AUTO_BUDGET_SHARE} of a recomputation's {})",
                            self.recompute_estimate(deleted)
                        );
                        return self.recompute(update, gone, report, work_before, detail);
                    }
                }
            }
        };
        gone.check()?;
        let mut counts = UpdateCounts::default();
        self.db.next_rank();
        // An over-deletion that took most of a relation leaves it mostly tombstones, and
        // the facts put back are appended: compacted now (no reader holds a row range of
        // the database yet), the relation does not hold both copies.
        self.db.compact();

        // What remains is closed under the rules except for what phases 2 and 3 add, so
        // everything from here on is a delta for the final propagation.
        let start = self.db.ends();
        self.insert_inputs(update, &mut report);
        self.db.check()?;

        let mut rederived = self.db.empty_like();
        let zero = vec![0; self.db.relation_count()];
        let (before_insert, rederived_lens, rederived) = match &self.negation {
            // A program with negated atoms or reductions: phases 2 and 3 run stratum by
            // stratum, and a stratum first takes in the changes of the negated relations
            // and the reductions' rows below it.
            Some(plans) => {
                let mut inserted_from = start.clone();
                let Maintained { compiled, db, run, .. } = self;
                let mut batch = StrataBatch {
                    compiled,
                    plans,
                    gone: &mut gone,
                    waves: &mut waves,
                    rederived: &mut rederived,
                    start: &start,
                    inserted_from: &mut inserted_from,
                    groups: &mut report.groups,
                };
                propagate_with(compiled, db, &start, false, run, &mut |stratum, db, run| {
                    batch.start_stratum(stratum, db, run)
                })?;
                let lens = relation_lens(&rederived);
                (inserted_from, lens, rederived)
            }
            None => {
                // Phase 2: rederive the over-deleted facts with a one-step derivation from
                // what remains (with the new input facts).
                rederive(self.compiled.rules.iter(), &mut self.db, &gone, &mut rederived, &mut self.run)?;
                self.db.next_rank();
                for (p, rows) in rederived.rows.iter().enumerate() {
                    for tuple in rows.live_rows() {
                        self.db.insert(PredId(p as u32), tuple);
                    }
                }
                self.db.check()?;
                let lens = relation_lens(&rederived);
                // The rederived facts are in the database now: their copy is kept only for
                // a report that may list them, so that it does not take its room during
                // the insertion phase.
                if detail.list_up_to.is_none_or(|most| self.derived_count(&rederived, &zero) > most) {
                    rederived = self.db.empty_like();
                }
                // Phase 3: propagate the rederived and inserted facts to a fixpoint.
                let before_insert = self.db.ends();
                propagate(&self.compiled, &mut self.db, &start, false, &mut self.run)?;
                (before_insert, lens, rederived)
            }
        };
        // The row ranges of the waves that removed a derived fact.
        let mut wave_ranges = Vec::new();
        for (k, from) in waves.iter().enumerate() {
            let to = waves.get(k + 1).cloned().unwrap_or_else(|| gone.ends());
            if self.derived_count_between(&gone, from, &to) > 0 {
                wave_ranges.push((from.clone(), to));
            }
        }
        counts.waves = wave_ranges.len();
        counts.rederived =
            (0..rederived_lens.len()).filter(|&p| self.compiled.derived[p]).map(|p| rederived_lens[p]).sum();
        let rederived = (detail.list_up_to.is_some_and(|most| counts.rederived <= most)).then_some(rederived);
        counts.inserted = self.derived_count(&self.db, &before_insert);
        counts.overdeleted = self.derived_count(&gone, &zero);
        report.waves = counts.waves;
        report.tallies = self.tallies(&gone, &rederived_lens, &before_insert);
        report.listed = detail.lists(&report.tallies);
        if let (true, Some(rederived)) = (report.listed, &rederived) {
            for (from, to) in &wave_ranges {
                let wave = self.derived_rows_between(&gone, from, to);
                report
                    .overdeleted_waves
                    .push(wave.into_iter().flat_map(|(p, ts)| ts.into_iter().map(move |t| (p, t))).collect());
            }
            report.inserted = self.derived_rows(&self.db, &before_insert);
            report.overdeleted = self.derived_rows(&gone, &zero);
            report.rederived = self.derived_rows(rederived, &zero);
        }
        if detail.net {
            // What went is what was over-deleted and not put back; what came is what the
            // batch appended and was not there before (not over-deleted).
            let appended = Appended { db: &self.db, from: &start };
            (report.removed, report.added) = self.net_change(&Whole(&gone), &appended);
        }
        // Compaction copies the relations it compacts: the removed facts go first.
        drop(gone);
        self.db.compact();
        report.work = self.run.stats.firings - work_before;
        Ok(self.sort_and_count_inputs(report, counts))
    }

    /// Whether some recursive stratum holds a reduction (a correlated aggregate of a
    /// recursive rule, `reduce.rs`). Its groups are computed once, complete, in the round
    /// their key appears; a batch could change a group's rows or remove its key while the
    /// stratum's other facts are over-deleted and rederived through the old value, so
    /// such a program is recomputed rather than maintained wrongly.
    fn correlated_recursion(&self) -> bool {
        let c = &self.compiled;
        c.strata.iter().any(|s| s.recursive && s.rules.iter().any(|&r| c.rules[r].reduction.is_some()))
    }

    /// How to maintain a batch that deletes `deleted` input facts, and why.
    fn choose(&self, deleted: usize) -> (MaintainedBy, String) {
        if !self.compiled.choices.is_empty() {
            // Which candidate a choice keeps depends on the round it came in and on the
            // others of that round; neither over-deletion nor the propagation of
            // insertions knows them, so the batch is evaluated again from its input.
            let why = "a relation has a `choice-domain`, whose chosen tuples depend on the rounds of a whole \
                       evaluation: the batch is recomputed";
            return (MaintainedBy::Recompute, why.into());
        }
        if self.correlated_recursion() {
            let why = "a recursive stratum holds a reduction (an aggregate reading a variable of its recursive \
                       rule), whose groups over-deletion and rederivation do not maintain: the batch is recomputed";
            return (MaintainedBy::Recompute, why.into());
        }
        if let Some(lattice) = self.compiled.dominances.lattice() {
            // Named as the user wrote them: a recursive `min`/`max` is lowered to one.
            let what = match lattice {
                true => {
                    "a recursive `min` or `max`: a change can bring back a worse value, or improve one that \
                         derived others"
                }
                false => {
                    "subsumptive clauses: a change can bring back a fact that was dominated, or dominate one \
                          that derived others"
                }
            };
            let why = format!(
                "the program has {what}, which over-deletion and rederivation do not follow: the batch is recomputed"
            );
            return (MaintainedBy::Recompute, why);
        }
        match self.maintenance {
            Maintenance::Dred => (MaintainedBy::Dred, "asked for".into()),
            Maintenance::Ranked => (MaintainedBy::Ranked, "asked for".into()),
            Maintenance::Auto if deleted == 0 => {
                (MaintainedBy::Dred, "no deletions: the insertions are propagated, nothing is over-deleted".into())
            }
            Maintenance::Auto => {
                let inputs = self.input_count();
                if deleted * AUTO_RECOMPUTE_SHARE >= inputs && self.evaluation_work > self.auto_min_budget {
                    let why = format!(
                        "deletes {deleted} of {inputs} input facts (at least 1/{AUTO_RECOMPUTE_SHARE}): most of \
                         what they derive would be over-deleted"
                    );
                    (MaintainedBy::Recompute, why)
                } else {
                    let why = format!(
                        "deletes {deleted} of {inputs} input facts: DRed's over-deletion stayed within its budget \
                         of {} rule firings",
                        self.dred_probe(deleted)
                    );
                    (MaintainedBy::Dred, why)
                }
            }
        }
    }

    /// Per derived relation, the facts over-deleted (`gone`), rederived (`rederived[p]` of
    /// them), and derived by the insertion phase (rows `inserted_from[p]..` of the
    /// database), those split by whether they were over-deleted; only relations with any.
    fn tallies(&self, gone: &Database, rederived: &[usize], inserted_from: &[u32]) -> Vec<(PredId, Tally)> {
        let mut tallies = Vec::new();
        for p in (0..self.db.relation_count()).filter(|&p| self.compiled.derived[p]).map(|p| PredId(p as u32)) {
            let mut tally = Tally { overdeleted: gone.len(p), rederived: rederived[p.index()], ..Tally::default() };
            let rows = self.db.rel(p);
            for r in (inserted_from[p.index()]..rows.end()).filter(|&r| rows.is_alive(r)) {
                match gone.contains(p, rows.row(r)) {
                    true => tally.reinserted += 1,
                    false => tally.inserted += 1,
                }
            }
            if tally != Tally::default() {
                tallies.push((p, tally));
            }
        }
        tallies
    }

    /// The number of input facts.
    fn input_count(&self) -> usize {
        fact_count(&self.compiled, &self.db, false)
    }

    /// Sorts the report's lists of input facts and counts them.
    fn sort_and_count_inputs(
        &self,
        mut report: UpdateReport,
        mut counts: UpdateCounts,
    ) -> (UpdateReport, UpdateCounts) {
        for list in
            [&mut report.edb_inserted, &mut report.edb_deleted, &mut report.noop_inserts, &mut report.noop_deletes]
        {
            list.sort();
        }
        counts.edb_inserted = report.edb_inserted.len();
        counts.edb_deleted = report.edb_deleted.len();
        counts.work = report.work;
        counts.strategy = report.strategy;
        (report, counts)
    }

    /// The net change of the derived relations between the state `old` and `new`, each a
    /// view of some rows: what `old` holds and `new` lacks, and the reverse, sorted. Flat
    /// (one vector per relation): a batch that deletes most of a closure changes millions
    /// of facts, and a vector per fact cost more time and memory than the batch itself.
    fn net_change(&self, old: &dyn FactView, new: &dyn FactView) -> (FactsByPred, FactsByPred) {
        let (mut removed, mut added) = (Vec::new(), Vec::new());
        for p in (0..self.db.relation_count()).filter(|&p| self.compiled.derived[p]).map(|p| PredId(p as u32)) {
            for (list, from, to) in [(&mut removed, old, new), (&mut added, new, old)] {
                let (mut values, mut len) = (Vec::new(), 0);
                from.for_each(p, &mut |t| {
                    if !to.contains(p, t) {
                        values.extend_from_slice(t);
                        len += 1;
                    }
                });
                if len > 0 {
                    list.push((p, Tuples::sorted(self.db.arity(p), len, values)));
                }
            }
        }
        (removed, added)
    }

    /// Recomputes a batch: the input changes are applied, everything is evaluated again
    /// from the input, and the report lists the derived facts that went (as one wave of
    /// over-deletion, none rederived) and those that came (as inserted). `gone` holds the
    /// input facts the batch deletes, and the facts an over-deletion given up on removed
    /// from the database so far: the state before the batch is the database with them.
    fn recompute(
        &mut self,
        update: &Update,
        gone: Database,
        mut report: UpdateReport,
        work_before: u64,
        detail: Detail,
    ) -> Result<(UpdateReport, UpdateCounts), ResourceError> {
        for (p, rows) in gone.rows.iter().enumerate().filter(|&(p, _)| !self.compiled.derived[p]) {
            self.db.remove_all(PredId(p as u32), rows.live_rows());
        }
        self.insert_inputs(update, &mut report);
        self.db.check()?;
        let (plan, program) = &*self.source;
        let mut fresh = self.db.inputs_only(&self.compiled.derived);
        let derived: Vec<PredId> =
            (0..self.db.relation_count()).filter(|&p| self.compiled.derived[p]).map(|p| PredId(p as u32)).collect();
        let old_lens: Vec<usize> = derived.iter().map(|&p| self.db.len(p) + gone.len(p)).collect();
        // Without negation, reductions or dominance the rules are monotone, and a batch that only
        // deletes leaves a new state within the old one: its change is counted from the
        // sizes. When the report then holds no facts either, the old derived relations
        // are not read again, and go before the new ones grow: the batch never holds
        // both states.
        // (A choice is not monotone: a deleted candidate may let another one in; and a
        // dominated fact comes back when what dominated it goes.)
        let monotone = report.edb_inserted.is_empty()
            && !stratified(program)
            && program.chooses().is_none()
            && program.dominances.is_empty();
        let old_read = detail.net || detail.list_up_to.is_some_and(|most| most > 0) || !monotone;
        if !old_read {
            // The new rows go into the old rows' buffers: their pages are in place, where
            // handing them back to the system (which competes with the new evaluation's
            // page faults, on a thread or not) and faulting new ones in would cost more
            // than recomputing a small state. The state then keeps the old rows' room, as
            // a vector keeps its capacity; the batch's peak is the same.
            let mut old = self.db.take(&self.compiled.derived);
            for &p in &derived {
                fresh.rel_mut(p).adopt_buffer(old.rel_mut(p).take_buffer());
            }
            drop_aside(old);
        }
        let mut compiled = Compiled::new(plan, program, &mut fresh);
        let (evaluation_before, rounds_before) = (self.run.stats.firings, self.run.iterations);
        let start = vec![0; fresh.relation_count()];
        propagate(&compiled, &mut fresh, &start, true, &mut self.run)?;
        let evaluation_work = self.run.stats.firings - evaluation_before;
        let rounds = (self.run.iterations - rounds_before) as u64;
        let old = Older { db: &self.db, gone: &gone };
        let mut counts = UpdateCounts::default();
        let mut tallies: Vec<(PredId, Tally)> = Vec::new();
        // Counted first, from the new state alone, which a batch that deletes much of the
        // input leaves far smaller than the old one: what the two share is found by
        // probing the old state (all of the new one, when monotone), and the rest of each
        // side is the change.
        for (&p, &old_len) in derived.iter().zip(&old_lens) {
            let kept = if monotone {
                fresh.len(p)
            } else {
                let mut kept = 0;
                fresh.tuples(p).for_each(|t| kept += usize::from(old.contains(p, t)));
                kept
            };
            let tally = Tally { overdeleted: old_len - kept, inserted: fresh.len(p) - kept, ..Tally::default() };
            if tally != Tally::default() {
                tallies.push((p, tally));
            }
        }
        counts.overdeleted = tallies.iter().map(|(_, t)| t.overdeleted).sum();
        counts.inserted = tallies.iter().map(|(_, t)| t.inserted).sum();
        report.listed = detail.lists(&tallies);
        // The facts themselves are read only for a report that holds them (without the
        // old ones, a report listing nothing: nothing changed).
        if old_read && (detail.net || report.listed) {
            let (removed, added) = self.net_change(&old, &Whole(&fresh));
            if report.listed {
                report.overdeleted = one_per_fact(&removed);
                report.inserted = one_per_fact(&added);
                if counts.overdeleted > 0 {
                    report.overdeleted_waves.push(
                        report.overdeleted.iter().flat_map(|(p, ts)| ts.iter().map(|t| (*p, t.clone()))).collect(),
                    );
                }
            }
            if detail.net {
                (report.removed, report.added) = (removed, added);
            }
        }
        report.tallies = tallies;
        counts.waves = usize::from(counts.overdeleted > 0);
        report.waves = counts.waves;
        // Stratified maintenance reads the plans as it sets up; otherwise they wait for
        // the next batch.
        self.guards_pending = !stratified(program);
        if !self.guards_pending {
            add_guards(&mut compiled, program, &mut fresh, self.maintenance);
        }
        prepare_rows(&compiled, &mut fresh)?;
        self.negation = stratified(program).then(|| NegationPlans::new(&compiled, program, &mut fresh));
        self.depth_profile = depth_profile(&compiled, &fresh, evaluation_work, rounds);
        self.compiled = compiled;
        drop_aside(std::mem::replace(&mut self.db, fresh));
        self.evaluation_work = evaluation_work;
        report.work = self.run.stats.firings - work_before;
        Ok(self.sort_and_count_inputs(report, counts))
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

    /// The indexes that only the plans of an input relation's delta probe, such as the
    /// closure by its second column for a deleted edge: DRed's over-deletion reads them in
    /// its first wave only, since no later wave has an input delta.
    fn input_delta_indexes(&self) -> Vec<(PredId, usize)> {
        let c = &self.compiled;
        let (mut derived_reads, mut input_reads) = (Vec::new(), Vec::new());
        for rule in &c.rules {
            for (variant, p) in rule.delta.iter().zip(&rule.body_preds) {
                let reads = if c.derived[p.index()] { &mut derived_reads } else { &mut input_reads };
                reads.extend(variant.index_steps());
            }
        }
        input_reads.retain(|read| !derived_reads.contains(read));
        input_reads.sort_unstable();
        input_reads.dedup();
        input_reads
    }

    /// Gives back those of `indexes` ([`Maintained::input_delta_indexes`]) that hold at
    /// most four times as many entries as the derived facts over-deleted so far (`gone`),
    /// and keeps the others in the list. A wide over-deletion holds the facts it removes
    /// until it is done, which with such an index beside them came to three times the
    /// state, though nothing reads the index after the first wave; the share is checked
    /// after every slice from the first wave's end on, as a cut in a chain removes a few
    /// facts a wave over many waves, and a wave of a random graph may hold most of it.
    /// A batch that needs the index again builds it again; a local deletion, which removes
    /// a few facts, keeps it for the next.
    fn release_input_delta_indexes(&mut self, gone: &Database, indexes: &mut Vec<(PredId, usize)>) {
        let removed = fact_count(&self.compiled, gone, true) as u64;
        indexes.retain(|&(pred, id)| {
            let rows = &mut self.db.rows[pred.index()];
            let entries = rows.indexes[id].entries() as u64;
            let release = entries > 0 && removed * 4 >= entries;
            if release {
                rows.release_index(id);
            }
            !release
        });
    }

    /// DRed's over-deletion: wave `k + 1` holds the derived facts with a derivation
    /// using a fact of wave `k`, the deleted input facts being wave 0. The delta atom
    /// reads the previous wave, every other atom the whole pre-update database: since that
    /// database is a fixpoint, whatever the rules derive from it is in it, so staging into
    /// `gone` is the only probe needed. Returns where each wave begins in `gone`, or `None`
    /// when the rule firings counted pass `budget`: the database is then as it was, and
    /// `gone` holds what was over-deleted so far (partly staged only).
    fn overdelete(&mut self, gone: &mut Database, budget: u64) -> Result<Option<Vec<Vec<u32>>>, ResourceError> {
        let mut waves = Vec::new();
        let mut lo = vec![0; self.db.relation_count()];
        let mut held = self.input_delta_indexes();
        loop {
            let hi = gone.ends();
            if lo == hi {
                break;
            }
            waves.push(hi.clone());
            sync_delta_indexes(&self.compiled, &mut self.db, (&lo, &hi));
            // A wave is read a slice of rows at a time, so that over-deletion given a
            // budget stops soon after passing it rather than at the end of a wave that
            // may hold most of the state, and what a slice derives is committed before
            // the next: the staging buffer holds one slice's facts, not a wave's, which
            // may be half a closure. Committed facts go after `hi`, into the next wave.
            let slice = if budget == u64::MAX { UNBUDGETED_WAVE_SLICE } else { WAVE_SLICE };
            let mut from = lo.clone();
            while from != hi {
                let to: Vec<u32> = from.iter().zip(&hi).map(|(&f, &h)| f.saturating_add(slice).min(h)).collect();
                let Database { rows: gone_rows, sets: gone_sets, .. } = &mut *gone;
                derive_from(&self.compiled, &self.db, gone_rows, (&from, &to), &mut self.run, &mut |head, tuple| {
                    gone_sets[head.index()].stage(&gone_rows[head.index()], tuple);
                });
                if self.run.stats.firings > budget {
                    return Ok(None);
                }
                gone.commit_all();
                gone.check()?;
                // Only the first wave reads the indexes `held` lists: from its end on they
                // may go, even within a wave, which may hold most of the closure.
                if !held.is_empty() && (to == hi || lo.iter().any(|&l| l > 0)) {
                    self.release_input_delta_indexes(gone, &mut held);
                }
                from = to;
            }
            lo = hi;
        }
        // The last entry marks the end of the last wave, which began no wave.
        waves.pop();
        for (p, rows) in gone.rows.iter().enumerate() {
            if rows.len() > 0 {
                self.db.remove_all(PredId(p as u32), rows.live_rows());
            }
        }
        Ok(Some(waves))
    }
}
