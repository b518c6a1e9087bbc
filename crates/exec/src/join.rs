//! The one join loop every engine shares: a left-deep pipeline of steps, each reading a
//! row range of a relation either by scanning it or by probing a hash index, checking
//! selections, binding variables and finally projecting the head tuple into a buffer.

use crate::database::Database;
use crate::relation::{hash_values, RowSet, Rows, NIL};
use ir::PredId;
use plan::{AtomSource, Output, RulePlan};

/// Where a probe takes the value of one index column from.
#[derive(Clone, Copy, Debug)]
enum KeySource {
    Var(usize),
    Const(u32),
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

/// One physical step: what to read and how.
#[derive(Clone, Debug)]
pub(crate) struct PhysStep {
    pub(crate) pred: PredId,
    pub(crate) source: AtomSource,
    /// `Some((index id, key))` probes that index of the relation; `None` scans the range.
    lookup: Option<(usize, Vec<KeySource>)>,
    checks: Vec<Check>,
    binds: Vec<(usize, usize)>,
}

/// A compiled rule plan ready to run.
#[derive(Clone, Debug)]
pub(crate) struct PhysPlan {
    pub(crate) head: PredId,
    pub(crate) head_arity: usize,
    var_count: usize,
    pub(crate) steps: Vec<PhysStep>,
    project: Vec<Output>,
}

/// The rows `lo..hi` of a relation that one step reads.
#[derive(Clone, Copy)]
pub(crate) struct View<'a> {
    pub(crate) rel: &'a Rows,
    pub(crate) lo: u32,
    pub(crate) hi: u32,
}

impl<'a> View<'a> {
    pub(crate) fn new(rel: &'a Rows, lo: u32, hi: u32) -> Self {
        View { rel, lo, hi }
    }

    pub(crate) fn whole(rel: &'a Rows) -> Self {
        View { rel, lo: 0, hi: rel.end() }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.lo >= self.hi
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
    pub(crate) fn scanning(plan: &RulePlan, head_arity: usize) -> Self {
        let steps = plan
            .steps
            .iter()
            .map(|s| {
                let mut checks: Vec<Check> = s.consts.iter().map(|&(c, v)| Check::Const(c, v)).collect();
                checks.extend(s.key.iter().map(|&(c, slot)| Check::Var(c, slot)));
                checks.extend(s.repeats.iter().map(|&(a, b)| Check::Cols(a, b)));
                PhysStep { pred: s.pred, source: s.source, lookup: None, checks, binds: s.binds.clone() }
            })
            .collect();
        Self::with_steps(plan, head_arity, steps)
    }

    /// The first step scans (it reads a delta or a guard set); every later step with a
    /// join key or constants probes a hash index of `db` on those columns, created here if
    /// missing and maintained by the relation from then on.
    pub(crate) fn indexed(plan: &RulePlan, head_arity: usize, db: &mut Database) -> Self {
        let mut phys = Self::scanning(plan, head_arity);
        for (step, s) in phys.steps.iter_mut().zip(&plan.steps).skip(1) {
            if s.key.is_empty() && s.consts.is_empty() {
                continue;
            }
            let mut cols: Vec<usize> = s.key.iter().map(|&(c, _)| c).collect();
            let mut key: Vec<KeySource> = s.key.iter().map(|&(_, slot)| KeySource::Var(slot)).collect();
            cols.extend(s.consts.iter().map(|&(c, _)| c));
            key.extend(s.consts.iter().map(|&(_, v)| KeySource::Const(v)));
            let index = db.rel_mut(s.pred).ensure_index(&cols);
            step.lookup = Some((index, key));
            step.checks = s.repeats.iter().map(|&(a, b)| Check::Cols(a, b)).collect();
        }
        phys
    }

    fn with_steps(plan: &RulePlan, head_arity: usize, steps: Vec<PhysStep>) -> Self {
        PhysPlan { head: plan.head, head_arity, var_count: plan.vars.len(), steps, project: plan.project.clone() }
    }

    /// Runs the pipeline with `views[i]` feeding step `i`, calling `emit` with each head
    /// tuple (duplicates included). Every row of every view is tried, even when a later
    /// view is empty, so that `row_tests` counts what nested loops would; callers that want
    /// to skip hopeless joins check [`any_empty`]. `scratch` is reused between calls.
    pub(crate) fn run<F: FnMut(&[u32])>(
        &self,
        views: &[View<'_>],
        scratch: &mut Scratch,
        stats: &mut JoinStats,
        emit: &mut F,
    ) {
        debug_assert_eq!(views.len(), self.steps.len());
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
        self.step(0, views, vals, head, stats, &mut leaf);
    }

    fn step<L: FnMut(&[u32], &mut [u32])>(
        &self,
        depth: usize,
        views: &[View<'_>],
        vals: &mut [u32],
        head: &mut [u32],
        stats: &mut JoinStats,
        leaf: &mut L,
    ) {
        let Some(step) = self.steps.get(depth) else {
            stats.firings += 1;
            leaf(vals, head);
            return;
        };
        let view = views[depth];
        let rel = view.rel;
        match &step.lookup {
            Some((index_id, key)) => {
                let index = &rel.indexes[*index_id];
                let first = {
                    let key_value = |i: usize| match key[i] {
                        KeySource::Var(slot) => vals[slot],
                        KeySource::Const(c) => c,
                    };
                    let hash = hash_values((0..key.len()).map(key_value));
                    index.first(&rel.data, rel.arity, hash, key_value)
                };
                // Chains run from the newest row down, so rows at or past `hi` come first
                // and the first row below `lo` ends the range.
                let mut r = first;
                while r != NIL {
                    if r < view.hi {
                        if r < view.lo {
                            break;
                        }
                        if rel.is_alive(r) && passes(step, rel.row(r), vals) {
                            bind(step, rel.row(r), vals);
                            self.step(depth + 1, views, vals, head, stats, leaf);
                        }
                    }
                    r = index.next[r as usize];
                }
            }
            None => {
                for r in view.lo..view.hi {
                    if rel.is_alive(r) {
                        stats.row_tests += 1;
                        if passes(step, rel.row(r), vals) {
                            bind(step, rel.row(r), vals);
                            self.step(depth + 1, views, vals, head, stats, leaf);
                        }
                    }
                }
            }
        }
    }
}

/// Buffers a join reuses between runs: variable bindings and the head tuple.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    vals: Vec<u32>,
    head: Vec<u32>,
    batch: Vec<u32>,
}

#[inline]
fn passes(step: &PhysStep, row: &[u32], vals: &[u32]) -> bool {
    step.checks.iter().all(|check| match *check {
        Check::Const(col, value) => row[col] == value,
        Check::Var(col, slot) => row[col] == vals[slot],
        Check::Cols(a, b) => row[a] == row[b],
    })
}

#[inline]
fn bind(step: &PhysStep, row: &[u32], vals: &mut [u32]) {
    for &(col, slot) in &step.binds {
        vals[slot] = row[col];
    }
}

/// Whether some view is empty, so that the join can produce nothing.
pub(crate) fn any_empty(views: &[View<'_>]) -> bool {
    views.iter().any(View::is_empty)
}

/// Head tuples buffered before staging: enough that the probes of one batch overlap in
/// the memory system, few enough that the buffer stays in cache.
const STAGE_BATCH: usize = 256;

/// Runs `plan` and stages its head tuples into `set` (the set of the head relation whose
/// rows are `rows`): each derivation costs one probe, and duplicates never pile up. The
/// probes run in small batches, away from the join's own memory accesses, because
/// independent probes in a tight loop overlap their cache misses.
pub(crate) fn run_staged(
    plan: &PhysPlan,
    views: &[View<'_>],
    rows: &Rows,
    set: &mut RowSet,
    scratch: &mut Scratch,
    stats: &mut JoinStats,
) {
    let arity = rows.arity;
    let mut batch = std::mem::take(&mut scratch.batch);
    batch.clear();
    if arity == 0 {
        plan.run(views, scratch, stats, &mut |tuple| {
            set.stage(rows, tuple);
        });
    } else {
        plan.run(views, scratch, stats, &mut |tuple| {
            batch.extend_from_slice(tuple);
            if batch.len() >= STAGE_BATCH * arity {
                for t in batch.chunks_exact(arity) {
                    set.stage(rows, t);
                }
                batch.clear();
            }
        });
        for t in batch.chunks_exact(arity) {
            set.stage(rows, t);
        }
    }
    scratch.batch = batch;
}
