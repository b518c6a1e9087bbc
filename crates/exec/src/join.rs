//! The one join loop every engine shares: a left-deep pipeline of steps, each reading a
//! row range of a relation either by scanning it or by probing a hash index, checking
//! selections, binding variables and finally projecting the head tuple into a buffer.

use crate::database::Database;
use crate::relation::{Chain, Index, RowFilter, RowSet, Rows, ValueSet};
use ir::{CmpOp, PredId, RangeValues, ValueStore, ValueType};
use plan::{AtomSource, Computed, Filter, Operand, Output, RulePlan};
use std::cell::Cell;
use std::ops::ControlFlow;

/// Where a probe takes the value of one index column from.
#[derive(Clone, Copy, Debug)]
enum KeySource {
    Var(usize),
    Const(u32),
}

impl KeySource {
    /// The value it gives once the slots `vals` are bound.
    #[inline]
    fn value(self, vals: &[u32]) -> u32 {
        match self {
            KeySource::Var(slot) => vals[slot],
            KeySource::Const(c) => c,
        }
    }
}

/// A condition on a candidate row.
#[derive(Clone, Copy, Debug)]
enum Check {
    /// `row[col] == value`.
    Const(usize, u32),
    /// `row[col] == vals[slot]` for a variable bound by an earlier step.
    Var(usize, usize),
    /// `row[a] == row[b]` for a variable repeated in the atom.
    Cols(usize, usize),
}

/// How a step finds its rows.
#[derive(Clone, Debug)]
enum Lookup {
    /// Every row of the view's range is tried.
    Scan,
    /// The chain of the key in this index of the relation.
    Index(usize, Vec<KeySource>),
    /// Every column is bound (one source per column): a membership test in the
    /// relation's own tuple set, which needs no index at all. The set holds the whole
    /// relation, not just the view's range; that only matters to semi-naive evaluation,
    /// where reading more than the old or full version of a non-delta atom derives facts
    /// no later than they would be and nothing that is not a consequence.
    Member(Vec<KeySource>),
    /// Every column is bound, in a plan that reads row ranges of a relation that are not
    /// the whole of it ([`Membership::Located`]), or of the relation the join derives
    /// ([`Membership::HeadBusy`]): the row holding the tuple, found through the
    /// relation's locator, must lie in the view's range.
    Locate(Vec<KeySource>),
}

/// How the steps of a plan whose columns are all bound test a tuple.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Membership {
    /// In the relation's tuple set, which every view then supplies.
    Sets,
    /// In the tuple set, except for the head relation, whose set the join stages into
    /// (and which holds the tuples this join staged, of no rank yet): there the row the
    /// relation's locator finds must lie in the view's range, as an index step would
    /// require, for a few bytes per row where an index on every column would copy them.
    HeadBusy,
    /// By the row the relation's locator finds, which must lie in the view's range: for
    /// the rank checks of ranked maintenance, which read only rows of lower rank.
    Located,
}

/// A filter of a step ([`plan::Filter`]) ready to run.
#[derive(Clone, Debug)]
enum PhysFilter {
    Compare {
        op: CmpOp,
        domain: ValueType,
        left: Operand,
        right: Operand,
    },
    Assign {
        slot: usize,
        value: Operand,
    },
    /// A comparison of arithmetic expressions; false where one has no value.
    CompareComputed {
        op: CmpOp,
        domain: ValueType,
        left: Computed,
        right: Computed,
    },
    /// An assignment of an arithmetic expression; false where it has no value.
    AssignComputed {
        slot: usize,
        value: Computed,
    },
    /// No live row of view `view` (one of the views after the steps') has these values
    /// in these columns.
    Absent {
        view: usize,
        key: Vec<(usize, Operand)>,
        probe: Probe,
    },
    /// Binds `slot` to each value of a range in turn, the filters after it applied to
    /// each ([`PhysPlan::pass`]); no value where a bound has none.
    Generate {
        slot: usize,
        domain: ValueType,
        from: Computed,
        to: Computed,
        step: Option<Computed>,
    },
    InRange(Box<InRange>),
}

/// A filter testing that `slot` holds a value of a range ([`ir::in_range`]); false
/// where a bound has no value.
#[derive(Clone, Debug)]
struct InRange {
    slot: usize,
    domain: ValueType,
    from: Computed,
    to: Computed,
    step: Option<Computed>,
}

/// The generators of a list of filters that are giving values: each one's position in
/// the list and its values still to come, the innermost last.
type Active = Vec<(usize, RangeValues)>;

/// How an anti-join finds the rows that would block it.
#[derive(Clone, Copy, Debug)]
enum Probe {
    /// Every row of the view is tried, and counted as a row test (the reference engine).
    Scan,
    /// The chain of the key in this index of the relation.
    Index(usize),
}

/// One physical step: what to read and how.
#[derive(Clone, Debug)]
pub(crate) struct PhysStep {
    pub(crate) pred: PredId,
    pub(crate) source: AtomSource,
    lookup: Lookup,
    checks: Vec<Check>,
    binds: Vec<(usize, usize)>,
    /// For an index step, how many membership steps right after it test only values this
    /// step binds (and constants): guards that a filtered index can apply once per row of
    /// the relation instead of once per probe ([`PhysPlan::filtered_index`]).
    guards: usize,
    /// Applied to every row the step yields, after its binds.
    filters: Vec<PhysFilter>,
    /// For an index step, its checks and binds on whole rows (the index's entries hold
    /// only the columns outside the key): how it reads its range when the index is
    /// behind the relation ([`crate::relation::Rows::sync_index_or_defer`]).
    scan_checks: Vec<Check>,
    scan_binds: Vec<(usize, usize)>,
    /// Nothing after this step reads a value it binds, so every match of it leads to the
    /// same head tuples: the step stops at its first match that completes (an atom such
    /// as `c(_, _, _)` is a test that `c` has a row, not a loop over its rows).
    existential: bool,
}

impl PhysStep {
    /// Calls `f` with every slot the step reads: its key, its checks and its filters.
    fn for_each_read(&self, mut f: impl FnMut(usize)) {
        let keys = match &self.lookup {
            Lookup::Index(_, key) | Lookup::Member(key) | Lookup::Locate(key) => key.as_slice(),
            Lookup::Scan => &[],
        };
        for key in keys {
            if let KeySource::Var(slot) = *key {
                f(slot);
            }
        }
        for check in self.checks.iter().chain(&self.scan_checks) {
            if let Check::Var(_, slot) = *check {
                f(slot);
            }
        }
        let mut operand = |o: &Operand| {
            if let Operand::Var(slot) = *o {
                f(slot);
            }
        };
        for filter in &self.filters {
            match filter {
                PhysFilter::Compare { left, right, .. } => {
                    operand(left);
                    operand(right);
                }
                PhysFilter::Assign { value, .. } => operand(value),
                PhysFilter::CompareComputed { left, right, .. } => {
                    left.leaves().chain(right.leaves()).for_each(&mut operand)
                }
                PhysFilter::AssignComputed { value, .. } => value.leaves().for_each(&mut operand),
                PhysFilter::Absent { key, .. } => key.iter().for_each(|(_, o)| operand(o)),
                PhysFilter::Generate { from, to, step, .. } => {
                    from.leaves().chain(to.leaves()).chain(step.iter().flat_map(|s| s.leaves())).for_each(&mut operand)
                }
                PhysFilter::InRange(test) => {
                    operand(&Operand::Var(test.slot));
                    let InRange { from, to, step, .. } = &**test;
                    from.leaves().chain(to.leaves()).chain(step.iter().flat_map(|s| s.leaves())).for_each(&mut operand)
                }
            }
        }
    }

    /// Whether a filter of the step is a generator: a row of it may go on many times.
    fn generates(&self) -> bool {
        self.filters.iter().any(|f| matches!(f, PhysFilter::Generate { .. }))
    }

    /// An index probe whose rows need no test but their range: no checks, no filters,
    /// no guards applied by a filtered index.
    fn is_plain_probe(&self) -> bool {
        matches!(self.lookup, Lookup::Index(..))
            && self.checks.is_empty()
            && self.filters.is_empty()
            && self.guards == 0
    }
}

/// A compiled rule plan ready to run.
#[derive(Clone, Debug)]
pub(crate) struct PhysPlan {
    pub(crate) head: PredId,
    pub(crate) head_arity: usize,
    var_count: usize,
    pub(crate) steps: Vec<PhysStep>,
    project: Vec<Output>,
    /// Applied once before the first step.
    initial: Vec<PhysFilter>,
    /// The relation each negated atom reads: the views after the steps' views, in order.
    pub(crate) negations: Vec<PredId>,
    /// The texts of symbols, which comparisons that order them and functors read, and
    /// functors add to.
    pub(crate) values: ValueStore,
    /// Whether a filter makes texts (`cat`, ...), which the value store numbers in the
    /// order they are made: such a join runs on one thread, so that the numbering, and
    /// with it every row, is the same with any number of threads.
    pub(crate) makes_texts: bool,
    /// The first step from which on no step binds a value the head reads: once the steps
    /// from here on have matched once, every other match of theirs gives the same head
    /// tuple, so the search goes back to the step before (the number of steps when the
    /// last step binds such a value, or in the reference engine, which tries every row).
    existential_from: usize,
}

/// The rows `lo..hi` of a relation that one step reads, and the relation's tuple set
/// for a step that tests membership.
#[derive(Clone, Copy)]
pub(crate) struct View<'a> {
    pub(crate) rel: &'a Rows,
    pub(crate) set: Option<&'a RowSet>,
    /// Replaces the step's index by one already filtered, and the number of steps after
    /// it that the filter has applied (its guards; none for a semi-join filter).
    filtered: Option<(&'a Index, usize)>,
    /// The set as a bitmap ([`RowSet::as_bitmap`]), when it is one.
    bits: Option<(u32, &'a [u64])>,
    pub(crate) lo: u32,
    pub(crate) hi: u32,
}

impl<'a> View<'a> {
    pub(crate) fn new(rel: &'a Rows, lo: u32, hi: u32) -> Self {
        View { rel, set: None, bits: None, filtered: None, lo, hi }
    }

    pub(crate) fn whole(rel: &'a Rows) -> Self {
        View { rel, set: None, bits: None, filtered: None, lo: 0, hi: rel.end() }
    }

    pub(crate) fn with_set(self, set: Option<&'a RowSet>) -> Self {
        View { set, bits: set.and_then(RowSet::as_bitmap), ..self }
    }

    pub(crate) fn with_filtered(self, filtered: Option<(&'a Index, usize)>) -> Self {
        View { filtered, ..self }
    }
}

/// Counters of one or more joins.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct JoinStats {
    /// Rows tried by scanning steps (the reference engine's `row_tests`).
    pub(crate) row_tests: u64,
    /// Complete body matches, each producing one (possibly duplicate) head tuple.
    pub(crate) firings: u64,
}

impl PhysPlan {
    /// Every step scans its whole range: the nested-loop matching of the reference engine.
    /// Anti-joins scan the negated relation too, counting each row as a row test.
    pub(crate) fn scanning(plan: &RulePlan, head_arity: usize, values: &ValueStore) -> Self {
        let mut negations = Vec::new();
        let mut compile = |filters: &[Filter]| -> Vec<PhysFilter> {
            filters
                .iter()
                .map(|f| compile_filter(f, plan.steps.len(), &mut negations, &mut |_, _| Probe::Scan))
                .collect()
        };
        let initial = compile(&plan.initial);
        let filters: Vec<Vec<PhysFilter>> = plan.steps.iter().map(|s| compile(&s.filters)).collect();
        let steps = plan
            .steps
            .iter()
            .map(|s| {
                let mut checks: Vec<Check> = s.consts.iter().map(|&(c, v)| Check::Const(c, v)).collect();
                checks.extend(s.key.iter().map(|&(c, slot)| Check::Var(c, slot)));
                checks.extend(s.repeats.iter().map(|&(a, b)| Check::Cols(a, b)));
                PhysStep {
                    pred: s.pred,
                    source: s.source,
                    lookup: Lookup::Scan,
                    checks,
                    binds: s.binds.clone(),
                    guards: 0,
                    filters: Vec::new(),
                    scan_checks: Vec::new(),
                    scan_binds: Vec::new(),
                    existential: false,
                }
            })
            .collect();
        let mut phys = Self::with_steps(plan, head_arity, steps, values);
        for (step, filters) in phys.steps.iter_mut().zip(filters) {
            step.filters = filters;
        }
        phys.initial = initial;
        phys.negations = negations;
        phys
    }

    /// The first step scans (it reads a delta or a guard set); every later step with a
    /// join key or constants probes a hash index of `db` on those columns, declared here if
    /// missing, or, when every column is bound, tests the tuple as `membership` says. With
    /// [`Membership::Sets`] and [`Membership::HeadBusy`] the caller gives every step that
    /// tests membership a view with the set ([`View::with_set`]).
    pub(crate) fn indexed(
        plan: &RulePlan,
        head_arity: usize,
        db: &mut Database,
        membership: Membership,
        values: &ValueStore,
    ) -> Self {
        let mut phys = Self::scanning(plan, head_arity, values);
        // Anti-joins probe an index of the negated relation on the bound columns.
        let mut negations = Vec::new();
        let steps = plan.steps.len();
        let mut probe = |pred: PredId, cols: &[usize]| {
            if cols.is_empty() {
                Probe::Scan
            } else {
                Probe::Index(db.rel_mut(pred).ensure_index(cols))
            }
        };
        phys.initial = plan.initial.iter().map(|f| compile_filter(f, steps, &mut negations, &mut probe)).collect();
        for (step, s) in phys.steps.iter_mut().zip(&plan.steps) {
            step.filters = s.filters.iter().map(|f| compile_filter(f, steps, &mut negations, &mut probe)).collect();
        }
        // The same filters in the same order: the negated relations' views stay as they were.
        debug_assert_eq!(negations, phys.negations);
        for (step, s) in phys.steps.iter_mut().zip(&plan.steps).skip(1) {
            let arity = db.arity(s.pred);
            // Zero-arity atoms (the demand of an all-free query) are tests too.
            let all_bound = s.binds.is_empty() && s.key.len() + s.consts.len() == arity;
            if all_bound {
                let mut by_col = vec![KeySource::Const(0); arity];
                for &(c, slot) in &s.key {
                    by_col[c] = KeySource::Var(slot);
                }
                for &(c, v) in &s.consts {
                    by_col[c] = KeySource::Const(v);
                }
                let located = match membership {
                    Membership::Located => true,
                    Membership::HeadBusy => s.pred == plan.head,
                    Membership::Sets => false,
                };
                step.lookup = if located { Lookup::Locate(by_col) } else { Lookup::Member(by_col) };
                step.checks.clear();
                continue;
            }
            if s.key.is_empty() && s.consts.is_empty() {
                continue;
            }
            let mut cols: Vec<usize> = s.key.iter().map(|&(c, _)| c).collect();
            let mut key: Vec<KeySource> = s.key.iter().map(|&(_, slot)| KeySource::Var(slot)).collect();
            cols.extend(s.consts.iter().map(|&(c, _)| c));
            key.extend(s.consts.iter().map(|&(_, v)| KeySource::Const(v)));
            let rel = db.rel_mut(s.pred);
            let index = rel.ensure_index(&cols);
            // The step reads index entries, which hold the columns outside the key; binds
            // and repeats only ever name such columns (key columns are bound already).
            let covered = &rel.indexes[index].covered;
            let at = |col: usize| covered.iter().position(|&c| c == col).expect("a bound column is not in the key");
            step.lookup = Lookup::Index(index, key);
            step.scan_checks = std::mem::replace(
                &mut step.checks,
                s.repeats.iter().map(|&(a, b)| Check::Cols(at(a), at(b))).collect(),
            );
            step.scan_binds =
                std::mem::replace(&mut step.binds, s.binds.iter().map(|&(c, slot)| (at(c), slot)).collect());
        }
        phys.count_guards();
        // The reference engine enumerates every match, so that its row tests are the
        // nested loops'; a reduction reads every row of its groups.
        if plan.reduce.is_none() {
            phys.mark_existential_steps();
        }
        phys
    }

    /// Marks each step none of whose bound values a later step, filter or the head reads,
    /// and finds where the steps binding only values the head does not read begin.
    fn mark_existential_steps(&mut self) {
        let mut read = vec![false; self.var_count];
        for output in &self.project {
            if let Output::Var(slot) = *output {
                read[slot] = true;
            }
        }
        let by_head = read.clone();
        self.existential_from = 0;
        for (k, step) in self.steps.iter_mut().enumerate().rev() {
            let mut bound: Vec<usize> = step.binds.iter().chain(&step.scan_binds).map(|&(_, slot)| slot).collect();
            bound.extend(step.filters.iter().filter_map(|f| match f {
                PhysFilter::Assign { slot, .. }
                | PhysFilter::AssignComputed { slot, .. }
                | PhysFilter::Generate { slot, .. } => Some(*slot),
                _ => None,
            }));
            step.existential = bound.iter().all(|&slot| !read[slot]);
            if self.existential_from == 0 && bound.iter().any(|&slot| by_head[slot]) {
                self.existential_from = k + 1;
            }
            step.for_each_read(|slot| read[slot] = true);
        }
    }

    fn count_guards(&mut self) {
        for k in 0..self.steps.len() {
            if !matches!(self.steps[k].lookup, Lookup::Index(..)) {
                continue;
            }
            let bound: Vec<usize> = self.steps[k].binds.iter().map(|&(_, slot)| slot).collect();
            let local = |source: &KeySource| match *source {
                KeySource::Var(slot) => bound.contains(&slot),
                KeySource::Const(_) => true,
            };
            self.steps[k].guards = self.steps[k + 1..]
                .iter()
                .take_while(|s| {
                    s.filters.is_empty() && matches!(&s.lookup, Lookup::Member(key) if key.iter().all(local))
                })
                .count();
        }
    }

    /// The index steps with guards that [`PhysPlan::filtered_index`] can apply, with the
    /// predicates that must not change while such an index is used (the step's own and
    /// its guards').
    pub(crate) fn guarded_steps(&self) -> impl Iterator<Item = (usize, &[PhysStep])> + '_ {
        (0..self.steps.len())
            .filter(|&k| self.steps[k].guards > 0)
            .map(|k| (k, &self.steps[k..=k + self.steps[k].guards]))
    }

    /// The index of step `k` restricted to the rows of its relation in `db` that pass the
    /// membership steps after it: while those relations do not change, a join reading it
    /// skips the guards ([`View::with_filtered`]). Entries keep their row ids, so views of
    /// row ranges work as with the full index.
    pub(crate) fn filtered_index(&self, k: usize, db: &Database) -> Index {
        let step = &self.steps[k];
        let Lookup::Index(id, _) = step.lookup else { unreachable!("guards follow index steps only") };
        let rel = db.rel(step.pred);
        let full = &rel.indexes[id];
        let mut index = Index::new(&full.cols, rel.arity);
        let mut vals = vec![0; self.var_count];
        let mut entry = Vec::with_capacity(full.covered.len());
        for r in (0..rel.end()).filter(|&r| rel.is_alive(r)) {
            let row = rel.row(r);
            entry.clear();
            entry.extend(full.covered.iter().map(|&c| row[c]));
            if !passes(step, &entry, &vals) {
                continue;
            }
            bind(step, &entry, &mut vals);
            let guards = &self.steps[k + 1..=k + step.guards];
            let kept = guards.iter().all(|g| {
                let Lookup::Member(key) = &g.lookup else { return false };
                let value = |c: usize| key[c].value(&vals);
                db.sets[g.pred.index()].contains_by(&db.rows[g.pred.index()], key.len(), value)
            });
            if kept {
                index.add(row, r);
            }
        }
        index
    }

    /// For an index step `k` followed by an index step on a relation that the join's
    /// stratum does not change, keyed (in some columns) by values that step `k` binds:
    /// a filter of the rows of step `k`'s relation, those whose values in such columns
    /// occur in the matching columns of the next step's relation. A row that fails it
    /// can never be followed by a row of the next step, so an index of the rows that
    /// pass ([`crate::relation::Index::filtered`]) serves step `k` with the same results:
    /// in Andersen's points-to, the pointers `pt(p, b)` of an object `b` that some
    /// `load(v, p)` reads. `static_pred` tells the relations that do not change.
    pub(crate) fn semijoin_filter(
        &self,
        k: usize,
        db: &Database,
        static_pred: impl Fn(PredId) -> bool,
    ) -> Option<RowFilter> {
        let id = self.semijoin_candidate(k)?;
        let (step, next) = (&self.steps[k], &self.steps[k + 1]);
        let Lookup::Index(next_id, next_key) = &next.lookup else { return None };
        if !static_pred(next.pred) {
            return None;
        }
        let covered = &db.rel(step.pred).indexes[id].covered;
        let next_rel = db.rel(next.pred);
        let next_cols = &next_rel.indexes[*next_id].cols;
        let tests: Vec<(usize, ValueSet)> = next_key
            .iter()
            .zip(next_cols)
            .filter_map(|(source, &next_col)| {
                let KeySource::Var(slot) = *source else { return None };
                let &(at, _) = step.binds.iter().find(|&&(_, bound)| bound == slot)?;
                Some((covered[at], ValueSet::of_column(next_rel, next_col)))
            })
            .collect();
        (!tests.is_empty()).then_some(RowFilter { tests })
    }

    /// The index step `k` probes, when a semi-join filter might serve it
    /// ([`PhysPlan::semijoin_filter`]): it has no guards, and the next step probes an
    /// index too.
    pub(crate) fn semijoin_candidate(&self, k: usize) -> Option<usize> {
        match (&self.steps[k], self.steps.get(k + 1).map(|s| &s.lookup)) {
            (PhysStep { lookup: Lookup::Index(id, _), guards: 0, .. }, Some(Lookup::Index(..))) => Some(*id),
            _ => None,
        }
    }

    /// Whether every index step reads an index that holds its view's range (or one
    /// filtered for it): none scans instead ([`Cursor::Unindexed`]).
    fn indexes_cover(&self, views: &[View<'_>]) -> bool {
        self.steps.iter().zip(views).all(|(step, view)| match step.lookup {
            Lookup::Index(id, _) => view.filtered.is_some() || view.rel.indexes[id].covers(view.hi),
            Lookup::Scan | Lookup::Member(_) | Lookup::Locate(_) => true,
        })
    }

    /// Whether the first step scans its view's row range: a join [`crate::split`] can cut
    /// into consecutive pieces of that range, since the first step is the outermost loop.
    pub(crate) fn scans_first(&self) -> bool {
        self.steps.first().is_some_and(|s| matches!(s.lookup, Lookup::Scan))
    }

    /// Brings every index the steps probe up to date with its relation in `rows`; joins
    /// call this before they read.
    pub(crate) fn sync_indexes(&self, rows: &mut [Rows]) {
        self.sync_indexes_with(rows, None);
    }

    /// [`PhysPlan::sync_indexes`] for a join whose first step reads `first_rows` rows:
    /// the index of the first index step after it with only membership tests between,
    /// probed at most once per such row, may be left behind its relation and the
    /// relation scanned instead, where that is cheaper ([`Rows::sync_index_or_defer`]).
    /// A step further in is probed an unknown number of times, and its index is always
    /// brought up to date.
    pub(crate) fn sync_indexes_deferring(&self, rows: &mut [Rows], first_rows: u32) {
        self.sync_indexes_with(rows, Some(u64::from(first_rows)));
    }

    /// The relation and index id of each step that probes an index.
    pub(crate) fn index_steps(&self) -> impl Iterator<Item = (PredId, usize)> + '_ {
        self.steps.iter().filter_map(|step| match step.lookup {
            Lookup::Index(id, _) => Some((step.pred, id)),
            _ => None,
        })
    }

    fn sync_indexes_with(&self, rows: &mut [Rows], first_rows: Option<u64>) {
        for (step, probes) in self.probe_bounds(first_rows) {
            let rel = &mut rows[step.pred.index()];
            match (&step.lookup, probes) {
                (&Lookup::Index(id, _), Some(probes)) => rel.sync_index_or_defer(id, probes),
                (&Lookup::Index(id, _), None) => rel.sync_index(id),
                (Lookup::Locate(_), Some(probes)) => rel.ensure_locator_or_defer(probes),
                (Lookup::Locate(_), None) => rel.ensure_locator(),
                (Lookup::Scan | Lookup::Member(_), _) => {}
            }
        }
        let filters = self.initial.iter().chain(self.steps.iter().flat_map(|s| &s.filters));
        for filter in filters {
            if let PhysFilter::Absent { view, probe: Probe::Index(id), .. } = *filter {
                rows[self.negations[view - self.steps.len()].index()].sync_index(id);
            }
        }
    }

    /// Per step after the first, how often it is probed at most, while that is known:
    /// once per row of the first step (`first_rows`), through membership tests, which
    /// pass a row or drop it; unknown from the first step on that may yield many rows.
    fn probe_bounds(&self, first_rows: Option<u64>) -> impl Iterator<Item = (&PhysStep, Option<u64>)> + '_ {
        let mut probes = first_rows;
        self.steps.iter().enumerate().map(move |(k, step)| {
            let bound = probes.filter(|_| k > 0);
            if k > 0 && !matches!(step.lookup, Lookup::Member(_) | Lookup::Locate(_)) {
                probes = None;
            }
            (step, bound)
        })
    }

    /// What [`PhysPlan::sync_indexes_deferring`] with `first_rows` would cost before the
    /// join, in rows added to an index: those its syncs add, and for an index it leaves
    /// behind, the rows the join then scans instead (at their lower cost a row,
    /// [`Rows::sync_cost`]). With `None`, what [`PhysPlan::sync_indexes`] adds.
    pub(crate) fn sync_cost(&self, rows: &[Rows], first_rows: Option<u32>) -> u64 {
        let steps = self.probe_bounds(first_rows.map(u64::from)).map(|(step, probes)| match step.lookup {
            Lookup::Index(id, _) => rows[step.pred.index()].sync_cost(id, probes),
            Lookup::Scan | Lookup::Member(_) | Lookup::Locate(_) => 0,
        });
        steps.sum()
    }

    /// The relations whose tuple sets its membership steps test whole tuples of.
    pub(crate) fn tested_preds(&self) -> impl Iterator<Item = PredId> + '_ {
        self.steps.iter().filter(|s| matches!(s.lookup, Lookup::Member(_))).map(|s| s.pred)
    }

    /// The views of the negated relations, which follow the steps' views: each whole,
    /// since a negated relation lies in a lower stratum and is complete.
    pub(crate) fn negation_views<'a>(&'a self, rows: &'a [Rows]) -> impl Iterator<Item = View<'a>> + 'a {
        self.negations.iter().map(move |p| View::whole(&rows[p.index()]))
    }

    fn with_steps(plan: &RulePlan, head_arity: usize, steps: Vec<PhysStep>, values: &ValueStore) -> Self {
        let steps_len = steps.len();
        PhysPlan {
            head: plan.head,
            head_arity,
            var_count: plan.vars.len(),
            steps,
            project: plan.project.clone(),
            initial: Vec::new(),
            negations: Vec::new(),
            values: values.clone(),
            makes_texts: plan.initial.iter().chain(plan.steps.iter().flat_map(|s| &s.filters)).any(makes_texts),
            existential_from: steps_len,
        }
    }

    /// Applies `filters` to the values bound so far: whether they all hold (assignments
    /// bind their slots on the way).
    #[inline]
    fn holds(&self, filters: &[PhysFilter], views: &[View<'_>], vals: &mut [u32], stats: &mut JoinStats) -> bool {
        filters.iter().all(|filter| self.holds_one(filter, views, vals, stats))
    }

    /// Applies one filter that is no generator: whether it holds (an assignment binds
    /// its slot on the way).
    #[inline]
    fn holds_one(&self, filter: &PhysFilter, views: &[View<'_>], vals: &mut [u32], stats: &mut JoinStats) -> bool {
        match filter {
            PhysFilter::Compare { op, domain, left, right } => {
                op.holds_for(operand(*left, vals), operand(*right, vals), *domain, Some(&self.values))
            }
            PhysFilter::Assign { slot, value } => {
                vals[*slot] = operand(*value, vals);
                true
            }
            PhysFilter::CompareComputed { op, domain, left, right } => {
                let value = |e: &Computed| e.eval(&self.values, |&o| operand(o, vals));
                match (value(left), value(right)) {
                    (Some(a), Some(b)) => op.holds_for(a, b, *domain, Some(&self.values)),
                    _ => false,
                }
            }
            PhysFilter::AssignComputed { slot, value, .. } => match value.eval(&self.values, |&o| operand(o, vals)) {
                Some(v) => {
                    vals[*slot] = v;
                    true
                }
                None => false,
            },
            PhysFilter::Absent { view, key, probe } => {
                let view = &views[*view];
                let rel = view.rel;
                let matches = |row: &[u32]| key.iter().all(|&(col, o)| row[col] == operand(o, vals));
                let blocked = match *probe {
                    Probe::Scan => (view.lo..view.hi).filter(|&r| rel.is_alive(r)).any(|r| {
                        stats.row_tests += 1;
                        matches(rel.row(r))
                    }),
                    Probe::Index(id) => rel.indexes[id]
                        .chain(|i| operand(key[i].1, vals))
                        .any(|(r, _)| view.lo <= r && r < view.hi && rel.is_alive(r)),
                };
                !blocked
            }
            PhysFilter::Generate { .. } => unreachable!("a generator is run by `pass`"),
            PhysFilter::InRange(test) => {
                let value = |e: &Computed| e.eval(&self.values, |&o| operand(o, vals));
                let step = match &test.step {
                    Some(step) => value(step).map(Some),
                    None => Some(None),
                };
                match (value(&test.from), value(&test.to), step) {
                    (Some(from), Some(to), Some(step)) => ir::in_range(test.domain, from, to, step, vals[test.slot]),
                    _ => false,
                }
            }
        }
    }

    /// Goes through `filters` from position `start`, or, with `start` none, from the next
    /// value of the innermost generator in `active`: whether the values bound then pass
    /// every filter. A generator met on the way joins `active` with its values; calling
    /// again with `start` none gives the next binding that passes, until there is none.
    fn pass(
        &self,
        filters: &[PhysFilter],
        mut start: Option<usize>,
        active: &mut Active,
        views: &[View<'_>],
        vals: &mut [u32],
        stats: &mut JoinStats,
    ) -> bool {
        loop {
            let mut k = match start.take() {
                Some(k) => k,
                None => {
                    let Some((at, values)) = active.last_mut() else { return false };
                    let Some(value) = values.next() else {
                        active.pop();
                        continue;
                    };
                    let PhysFilter::Generate { slot, .. } = filters[*at] else { unreachable!("a generator is active") };
                    vals[slot] = value;
                    *at + 1
                }
            };
            let passed = loop {
                let Some(filter) = filters.get(k) else { break true };
                if let PhysFilter::Generate { domain, from, to, step, .. } = filter {
                    let value = |e: &Computed| e.eval(&self.values, |&o| operand(o, vals));
                    let step = match step {
                        Some(step) => value(step).map(Some),
                        None => Some(None),
                    };
                    if let (Some(from), Some(to), Some(step)) = (value(from), value(to), step) {
                        active.push((k, RangeValues::new(*domain, from, to, step)));
                    }
                    // Its first value, if any, comes as every next one does.
                    break false;
                }
                if !self.holds_one(filter, views, vals, stats) {
                    break false;
                }
                k += 1;
            };
            if passed {
                return true;
            }
        }
    }

    /// After step `depth` bound a row (`fresh`), or from the next value of its active
    /// generators: the depth of the step to run next (past the membership steps it
    /// passes), or `None` when the row gives nothing more.
    fn go_on(
        &self,
        depth: usize,
        fresh: bool,
        active: &mut Active,
        views: &[View<'_>],
        vals: &mut [u32],
        stats: &mut JoinStats,
    ) -> Option<usize> {
        let step = &self.steps[depth];
        if !step.generates() {
            return (fresh && self.holds(&step.filters, views, vals, stats))
                .then(|| self.filters(depth + 1, views, vals, stats))
                .flatten();
        }
        let mut start = fresh.then_some(0);
        loop {
            if !self.pass(&step.filters, start.take(), active, views, vals, stats) {
                return None;
            }
            if let Some(next) = self.filters(depth + 1, views, vals, stats) {
                return Some(next);
            }
        }
    }

    /// Runs the pipeline with `views[i]` feeding step `i`, calling `emit` with each head
    /// tuple (duplicates included). Every row of every view is tried, even when a later
    /// view is empty, so that `row_tests` counts what nested loops would; callers that want
    /// to skip hopeless joins check the ranges first. `scratch` is reused between calls.
    pub(crate) fn run<F: FnMut(&[u32])>(
        &self,
        views: &[View<'_>],
        scratch: &mut Scratch,
        stats: &mut JoinStats,
        emit: &mut F,
    ) {
        self.run_until(views, scratch, stats, &Cell::new(false), emit);
    }

    /// [`PhysPlan::run`] that ends early once `emit` sets `stop`: it is looked at once
    /// per row of every step but the last, so a join whose head relation stopped growing
    /// does not go on enumerating (a cross product of two large relations would take
    /// minutes to), while the derivations themselves cost nothing more.
    pub(crate) fn run_until<F: FnMut(&[u32])>(
        &self,
        views: &[View<'_>],
        scratch: &mut Scratch,
        stats: &mut JoinStats,
        stop: &Cell<bool>,
        emit: &mut F,
    ) {
        debug_assert_eq!(views.len(), self.steps.len() + self.negations.len());
        scratch.vals.clear();
        scratch.vals.resize(self.var_count, 0);
        scratch.head.clear();
        scratch.head.resize(self.head_arity, 0);
        let mut leaf = |vals: &[u32], head: &mut [u32]| {
            for (value, output) in head.iter_mut().zip(&self.project) {
                *value = match *output {
                    Output::Var(slot) => vals[slot],
                    Output::Const(c) => c,
                };
            }
            emit(head);
        };
        let Scratch { vals, head, .. } = scratch;
        // The steps run once per binding of the initial filters: once, or once per
        // value of their generators.
        let mut active = Active::new();
        let mut start = Some(0);
        while self.pass(&self.initial, start.take(), &mut active, views, vals, stats) {
            self.run_steps(views, vals, head, stats, stop, &mut leaf);
            if stop.get() {
                return;
            }
        }
    }

    /// The steps of [`PhysPlan::run_until`] once the initial filters have bound their
    /// values, `leaf` called with each complete match.
    fn run_steps(
        &self,
        views: &[View<'_>],
        vals: &mut [u32],
        head: &mut [u32],
        stats: &mut JoinStats,
        stop: &Cell<bool>,
        leaf: &mut impl FnMut(&[u32], &mut [u32]),
    ) {
        if self.steps.is_empty() {
            stats.firings += 1;
            leaf(vals, head);
            return;
        }
        // The innermost step's loop of its own reads the index (the common case).
        let covered = self.indexes_cover(views);
        // The depth-first search over the steps keeps its own stack of cursors, one per
        // step being read, so a body of any length is no deeper a recursion than one atom.
        let mut stack: Vec<(usize, Cursor<'_>, Active)> = vec![(0, self.open(0, views, vals), Active::new())];
        while let Some((depth, cursor, active)) = stack.last_mut() {
            if stop.get() {
                return;
            }
            let found = self.advance(*depth, cursor, active, views, vals, stats);
            if found.is_some() && self.steps[*depth].existential {
                *cursor = Cursor::Done;
                active.clear();
            }
            match found {
                Some(next) if next == self.steps.len() => {
                    stats.firings += 1;
                    leaf(vals, head);
                    self.unwind_existential(&mut stack);
                }
                // The innermost step, where most rows are read, runs in a loop of its own
                // instead of through the stack.
                Some(next)
                    if next + 1 == self.steps.len()
                        && covered
                        && self.steps[next].is_plain_probe()
                        && !self.steps[next].existential =>
                {
                    let step = &self.steps[next];
                    let Lookup::Index(id, key) = &step.lookup else { unreachable!("a plain probe") };
                    let View { rel, lo, hi, filtered, .. } = views[next];
                    // The last step has no steps after it to filter by.
                    debug_assert!(filtered.is_none());
                    let chain = rel.indexes[*id].chain(|i| key[i].value(vals));
                    let has_dead = rel.has_dead();
                    // As `advance` does it, without its per-row dispatch: this is where
                    // most joins spend their time.
                    chain.for_each_until(|r, entry| {
                        if r >= hi || (has_dead && !rel.is_alive(r)) {
                            return ControlFlow::Continue(());
                        }
                        if r < lo {
                            return ControlFlow::Break(());
                        }
                        bind(step, entry, vals);
                        stats.firings += 1;
                        leaf(vals, head);
                        ControlFlow::Continue(())
                    });
                }
                // A last step that stops at its first match: one leaf, then back to the
                // step before the existential ones.
                Some(next) if next + 1 == self.steps.len() && self.steps[next].existential => {
                    let mut last = self.open(next, views, vals);
                    if self.advance(next, &mut last, &mut Active::new(), views, vals, stats).is_some() {
                        stats.firings += 1;
                        leaf(vals, head);
                        self.unwind_existential(&mut stack);
                    }
                }
                Some(next) if next + 1 == self.steps.len() => {
                    let mut last = self.open(next, views, vals);
                    let mut active = Active::new();
                    while self.advance(next, &mut last, &mut active, views, vals, stats).is_some() {
                        stats.firings += 1;
                        leaf(vals, head);
                    }
                }
                Some(next) => {
                    let cursor = self.open(next, views, vals);
                    stack.push((next, cursor, Active::new()));
                }
                None => {
                    stack.pop();
                }
            }
        }
    }

    /// Whether the first step stops at its first match (it binds nothing the rest reads,
    /// or nothing the head reads is bound at all): split over threads, each chunk would
    /// find a first match of its own.
    pub(crate) fn first_step_existential(&self) -> bool {
        self.existential_from == 0 || self.steps.first().is_some_and(|s| s.existential)
    }

    /// After a complete match: the steps from [`PhysPlan::existential_from`] on matched
    /// once, which is all the head needs of them, so their cursors are dropped and the
    /// search resumes at the step before.
    #[inline]
    fn unwind_existential(&self, stack: &mut Vec<(usize, Cursor<'_>, Active)>) {
        if self.existential_from < self.steps.len() {
            while stack.last().is_some_and(|(depth, ..)| *depth >= self.existential_from) {
                stack.pop();
            }
        }
    }

    /// Runs the membership and locating steps from `depth` on as filters, without a level of recursion
    /// each: the depth of the next other step (or the end), or `None` when one fails.
    #[inline(always)]
    fn filters(&self, mut depth: usize, views: &[View<'_>], vals: &mut [u32], stats: &mut JoinStats) -> Option<usize> {
        while let Some(step @ PhysStep { lookup: Lookup::Member(key) | Lookup::Locate(key), filters, .. }) =
            self.steps.get(depth)
        {
            // A test whose row goes on once per value of a generator is a step of its own.
            if step.generates() {
                return Some(depth);
            }
            let view = &views[depth];
            let value = |c: usize| key[c].value(vals);
            let found = match (&self.steps[depth].lookup, view.bits) {
                (Lookup::Locate(_), _) => view.rel.holds_in(value, view.lo, view.hi),
                (_, Some((base, words))) => {
                    let v = value(0);
                    words.get((v >> 6).wrapping_sub(base) as usize).is_some_and(|w| w & (1 << (v & 63)) != 0)
                }
                (_, None) => {
                    let set = view.set.expect("the caller supplies the set of a membership step");
                    set.contains_by(view.rel, key.len(), value)
                }
            };
            if !found || (!filters.is_empty() && !self.holds(filters, views, vals, stats)) {
                return None;
            }
            depth += 1;
        }
        Some(depth)
    }

    /// The cursor of step `depth` over its view, given the values bound before it.
    fn open<'a>(&self, depth: usize, views: &[View<'a>], vals: &[u32]) -> Cursor<'a> {
        let view = views[depth];
        match &self.steps[depth].lookup {
            Lookup::Member(_) | Lookup::Locate(_) => Cursor::Test,
            Lookup::Index(index_id, key) => {
                let key_value = |i: usize| key[i].value(vals);
                // A filtered index has applied the guards after this step already.
                match view.filtered {
                    Some((index, skip)) => Cursor::Chain(index.chain(key_value), skip),
                    None if view.rel.indexes[*index_id].covers(view.hi) => {
                        Cursor::Chain(view.rel.indexes[*index_id].chain(key_value), 0)
                    }
                    None => Cursor::Unindexed(view.lo),
                }
            }
            Lookup::Scan => Cursor::Rows(view.lo),
        }
    }

    /// Moves the cursor of step `depth` to its next matching row and binds that row's
    /// values: the depth of the step to run next (past the membership steps it passes;
    /// the number of steps for a complete match), or `None` when the step is exhausted.
    fn advance(
        &self,
        depth: usize,
        cursor: &mut Cursor<'_>,
        active: &mut Active,
        views: &[View<'_>],
        vals: &mut [u32],
        stats: &mut JoinStats,
    ) -> Option<usize> {
        let step = &self.steps[depth];
        let view = views[depth];
        let rel = view.rel;
        // The row bound last goes on with the next value of its generators first.
        if !active.is_empty() {
            if let Some(next) = self.go_on(depth, false, active, views, vals, stats) {
                return Some(next);
            }
        }
        match cursor {
            Cursor::Done => None,
            Cursor::Test => {
                *cursor = Cursor::Done;
                let found = match &step.lookup {
                    Lookup::Member(key) => {
                        let set = view.set.expect("the caller supplies the set of a membership step");
                        set.contains_by(view.rel, key.len(), |c: usize| key[c].value(vals))
                    }
                    Lookup::Locate(key) => rel.holds_in(|c: usize| key[c].value(vals), view.lo, view.hi),
                    Lookup::Index(..) | Lookup::Scan => unreachable!("only tests have a test cursor"),
                };
                if step.generates() {
                    return found.then(|| self.go_on(depth, true, active, views, vals, stats)).flatten();
                }
                (found && self.holds(&step.filters, views, vals, stats)).then_some(depth + 1)
            }
            Cursor::Chain(chain, skip) => {
                // Chains run from the newest row down, so rows at or past `hi` come first
                // and the first row below `lo` ends the range.
                for (r, entry) in chain.by_ref() {
                    if r >= view.hi {
                        continue;
                    }
                    if r < view.lo {
                        break;
                    }
                    if rel.is_alive(r) && passes(step, entry, vals) {
                        bind(step, entry, vals);
                        if step.generates() {
                            // A filtered index applies no guards to a generating step.
                            if let Some(next) = self.go_on(depth, true, active, views, vals, stats) {
                                return Some(next);
                            }
                            continue;
                        }
                        if !self.holds(&step.filters, views, vals, stats) {
                            continue;
                        }
                        if let Some(next) = self.filters(depth + 1 + *skip, views, vals, stats) {
                            return Some(next);
                        }
                    }
                }
                *cursor = Cursor::Done;
                None
            }
            Cursor::Unindexed(next) => {
                // An index step whose index a sync left behind: the same rows as a probe,
                // found by their whole-row checks, the first of which tests a key column.
                let key = match step.scan_checks.first() {
                    Some(&Check::Const(col, value)) => Some((col, value)),
                    Some(&Check::Var(col, slot)) => Some((col, vals[slot])),
                    Some(Check::Cols(..)) | None => None,
                };
                while *next < view.hi {
                    let r = key.map_or(*next, |(col, value)| rel.next_with(*next, view.hi, col, value));
                    if r >= view.hi {
                        break;
                    }
                    *next = r + 1;
                    let row = rel.row(r);
                    if rel.is_alive(r) && checks_pass(&step.scan_checks, row, vals) {
                        bind_from(&step.scan_binds, row, vals);
                        if let Some(next) = self.go_on(depth, true, active, views, vals, stats) {
                            return Some(next);
                        }
                    }
                }
                None
            }
            Cursor::Rows(next) => {
                while *next < view.hi {
                    let r = *next;
                    *next += 1;
                    if rel.is_alive(r) {
                        stats.row_tests += 1;
                        if passes(step, rel.row(r), vals) {
                            bind(step, rel.row(r), vals);
                            if let Some(next) = self.go_on(depth, true, active, views, vals, stats) {
                                return Some(next);
                            }
                        }
                    }
                }
                None
            }
        }
    }
}

/// The value of an operand given the bound slots.
#[inline]
fn operand(o: Operand, vals: &[u32]) -> u32 {
    match o {
        Operand::Var(slot) => vals[slot],
        Operand::Const(c) => c,
    }
}

/// Whether evaluating `filter` may make a text.
fn makes_texts(filter: &Filter) -> bool {
    match filter {
        Filter::Compare { left, right, .. } => left.makes_texts() || right.makes_texts(),
        Filter::Assign { value, .. } => value.makes_texts(),
        Filter::Absent { .. } => false,
        Filter::Generate { from, to, step, .. } | Filter::InRange { from, to, step, .. } => {
            from.makes_texts() || to.makes_texts() || step.as_ref().is_some_and(|s| s.makes_texts())
        }
    }
}

/// Compiles one filter of a plan of `steps` steps; an anti-join gets the next view
/// after the steps' (its relation is pushed onto `negations`) and the probe `probe`
/// chooses for its relation and bound columns.
fn compile_filter(
    filter: &Filter,
    steps: usize,
    negations: &mut Vec<PredId>,
    probe: &mut dyn FnMut(PredId, &[usize]) -> Probe,
) -> PhysFilter {
    match filter {
        Filter::Compare { op, domain, left, right, .. } => match (left.as_leaf(), right.as_leaf()) {
            (Some(&left), Some(&right)) => PhysFilter::Compare { op: *op, domain: *domain, left, right },
            _ => PhysFilter::CompareComputed { op: *op, domain: *domain, left: left.clone(), right: right.clone() },
        },
        Filter::Assign { slot, value, .. } => match value.as_leaf() {
            Some(&value) => PhysFilter::Assign { slot: *slot, value },
            None => PhysFilter::AssignComputed { slot: *slot, value: value.clone() },
        },
        Filter::Generate { slot, domain, from, to, step, .. } => PhysFilter::Generate {
            slot: *slot,
            domain: *domain,
            from: from.clone(),
            to: to.clone(),
            step: step.clone(),
        },
        Filter::InRange { slot, domain, from, to, step, .. } => PhysFilter::InRange(Box::new(InRange {
            slot: *slot,
            domain: *domain,
            from: from.clone(),
            to: to.clone(),
            step: step.clone(),
        })),
        Filter::Absent { pred, key, .. } => {
            let cols: Vec<usize> = key.iter().map(|&(c, _)| c).collect();
            let probe = probe(*pred, &cols);
            negations.push(*pred);
            PhysFilter::Absent { view: steps + negations.len() - 1, key: key.clone(), probe }
        }
    }
}

/// Where the search stands in one step: the rows of a scan from a row on (of an index
/// step whose index is behind, [`Cursor::Unindexed`]), the rest of an
/// index chain (and how many guard steps its index has applied), a membership test still
/// to make, or nothing left.
enum Cursor<'a> {
    Rows(u32),
    Unindexed(u32),
    Chain(Chain<'a>, usize),
    Test,
    Done,
}

/// Buffers a join reuses between runs: variable bindings and the head tuple.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    vals: Vec<u32>,
    head: Vec<u32>,
}

#[inline]
fn passes(step: &PhysStep, row: &[u32], vals: &[u32]) -> bool {
    checks_pass(&step.checks, row, vals)
}

#[inline]
fn checks_pass(checks: &[Check], row: &[u32], vals: &[u32]) -> bool {
    checks.iter().all(|check| match *check {
        Check::Const(col, value) => row[col] == value,
        Check::Var(col, slot) => row[col] == vals[slot],
        Check::Cols(a, b) => row[a] == row[b],
    })
}

#[inline]
fn bind(step: &PhysStep, row: &[u32], vals: &mut [u32]) {
    bind_from(&step.binds, row, vals);
}

#[inline]
fn bind_from(binds: &[(usize, usize)], row: &[u32], vals: &mut [u32]) {
    for &(col, slot) in binds {
        vals[slot] = row[col];
    }
}

/// Runs `plan` and stages its head tuples into `set` (the set of the head relation whose
/// rows are `rows`): each derivation costs one probe, and duplicates never pile up. The
/// join ends early when the set stops growing ([`RowSet::failure`]).
pub(crate) fn run_staged(
    plan: &PhysPlan,
    views: &[View<'_>],
    rows: &Rows,
    set: &mut RowSet,
    scratch: &mut Scratch,
    stats: &mut JoinStats,
) {
    let stop = Cell::new(false);
    plan.run_until(views, scratch, stats, &stop, &mut |tuple| {
        if !set.stage(rows, tuple) && set.failure.is_some() {
            stop.set(true);
        }
    });
}
