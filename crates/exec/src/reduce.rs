//! Grouped reductions (`plan::Reduce`): the one thing aggregates add to evaluation.
//! Lowering turns each aggregate into ordinary rules and one reduction. Usually its rows
//! lie in a strictly lower stratum, so the reduction runs once, when its stratum starts,
//! over a complete relation, and its head gets one fact per group. An aggregate that
//! reads a variable of a recursive rule (a correlated one) has its rows, and so its
//! reduction, in that rule's recursive stratum; its rows read the groups' keys and
//! relations of lower strata only, so each group gets all its rows in the one round after
//! its key first appears, and the engines reduce, round by round, the rows that round
//! added ([`evaluate_rows`]): each group is reduced once, complete.

use crate::database::Database;
use crate::join::JoinStats;
use crate::limits::ResourceError;
use ir::PredId;
use plan::RulePlan;
use std::collections::BTreeMap;

/// Whether the rule's plan is a reduction.
pub(crate) fn is_reduction(plan: &RulePlan) -> bool {
    plan.reduce.is_some()
}

/// The groups of a reduction's rows and each one's aggregate, in key order: what its
/// head holds once its stratum ran. Counts one row test per row read.
pub(crate) fn groups(plan: &RulePlan, db: &Database, stats: &mut JoinStats) -> BTreeMap<Vec<u32>, u32> {
    let Some(step) = plan.steps.first() else { return BTreeMap::new() };
    group_rows(plan, db.tuples(step.pred), stats)
}

/// The groups of `rows` (rows of the reduction's rows relation) and each one's aggregate.
fn group_rows<'a>(
    plan: &RulePlan,
    rows: impl Iterator<Item = &'a [u32]>,
    stats: &mut JoinStats,
) -> BTreeMap<Vec<u32>, u32> {
    let mut groups: BTreeMap<Vec<u32>, u32> = BTreeMap::new();
    let Some(reduce) = &plan.reduce else { return groups };
    for row in rows {
        stats.row_tests += 1;
        let value = row.last().copied().unwrap_or(0);
        let key = &row[..reduce.keys.min(row.len())];
        match groups.get_mut(key) {
            Some(acc) => *acc = reduce.op.step(Some(*acc), value, reduce.domain),
            None => {
                groups.insert(key.to_vec(), reduce.op.step(None, value, reduce.domain));
            }
        }
    }
    groups.retain(|_, acc| reduce.op.yields(*acc, reduce.domain));
    groups
}

/// Evaluates a reduction into its head relation: one fact per group, firing once each.
pub(crate) fn evaluate(plan: &RulePlan, db: &mut Database, stats: &mut JoinStats) -> Result<(), ResourceError> {
    for (mut fact, value) in groups(plan, db, stats) {
        fact.push(value);
        stats.firings += 1;
        db.insert(plan.head, &fact);
    }
    db.check_pred(plan.head)
}

/// The rows relation of a reduction and the end of its rows now: where the next
/// [`evaluate_rows`] of a correlated reduction starts.
pub(crate) fn rows_end(plan: &RulePlan, db: &Database) -> u32 {
    plan.steps.first().map_or(0, |step| db.rel(step.pred).end())
}

/// Evaluates a correlated reduction over the rows its relation gained from row `from`
/// on: the groups a round completed (see the module doc), one fact each. Returns where
/// the rows end now.
pub(crate) fn evaluate_rows(
    plan: &RulePlan,
    db: &mut Database,
    from: u32,
    stats: &mut JoinStats,
) -> Result<u32, ResourceError> {
    let Some(step) = plan.steps.first() else { return Ok(0) };
    let rows = db.rel(step.pred);
    let end = rows.end();
    let fresh = (from..end).filter(|&r| rows.is_alive(r)).map(|r| rows.row(r));
    for (mut fact, value) in group_rows(plan, fresh, stats) {
        fact.push(value);
        stats.firings += 1;
        db.insert(plan.head, &fact);
    }
    db.check_pred(plan.head)?;
    Ok(end)
}

/// One reduction's rows, relation and keys, as maintenance reads them.
pub(crate) struct Reduction<'a> {
    pub(crate) head: PredId,
    pub(crate) rows: PredId,
    pub(crate) reduce: &'a plan::Reduce,
}

impl<'a> Reduction<'a> {
    /// The reduction of a rule's plan, if it is one.
    pub(crate) fn of(plan: &'a RulePlan) -> Option<Self> {
        let (Some(reduce), Some(step)) = (&plan.reduce, plan.steps.first()) else { return None };
        Some(Reduction { head: plan.head, rows: step.pred, reduce })
    }

    /// The value the head holds for group `key` now, if it holds one.
    pub(crate) fn current(&self, db: &Database, key: &[u32]) -> Option<u32> {
        if key.is_empty() {
            return db.tuples(self.head).next().and_then(|t| t.first().copied());
        }
        let groups = db.groups(self.head)?;
        let g = groups.find(key)?;
        let mut values = Vec::new();
        groups.values(g, &mut values);
        values.first().copied()
    }

    /// The aggregate of group `key` over the rows it has in `db` now (`None` when it has
    /// none, or an aggregate that gives no fact, [`ir::AggregateOp::yields`]), read through an index of the rows on their key columns: a pass over the
    /// group, not over the relation. Counts one row test per row read.
    pub(crate) fn regroup(&self, db: &mut Database, key: &[u32], stats: &mut JoinStats) -> Option<u32> {
        let (op, domain) = (self.reduce.op, self.reduce.domain);
        let rows = &mut db.rows[self.rows.index()];
        let mut acc = None;
        if key.is_empty() {
            for row in rows.live_rows() {
                stats.row_tests += 1;
                acc = Some(op.step(acc, row.last().copied().unwrap_or(0), domain));
            }
            return acc.filter(|&acc| op.yields(acc, domain));
        }
        let cols: Vec<usize> = (0..key.len()).collect();
        let id = rows.ensure_index(&cols);
        rows.sync_index(id);
        let rows = &*rows;
        for (r, covered) in rows.indexes[id].chain(|i| key[i]) {
            stats.row_tests += 1;
            if rows.is_alive(r) {
                acc = Some(op.step(acc, covered.last().copied().unwrap_or(0), domain));
            }
        }
        acc.filter(|&acc| op.yields(acc, domain))
    }
}

#[cfg(test)]
mod tests {
    use crate::{Database, EvalOptions, NativeEngine};

    /// The sorted tuples of `pred` after evaluating `src` with `engine`.
    fn evaluated(src: &str, pred: &str, engine: NativeEngine) -> Vec<Vec<u32>> {
        let (program, diagnostics) = syntax::parse_program(src, ir::FileId(0));
        let program = program.unwrap_or_else(|| panic!("{diagnostics:#?}"));
        let plan = plan::plan_program(&program);
        let edb = Database::from_facts(&program, &program.facts);
        let evaluation = crate::evaluate(&plan, &program, edb, EvalOptions { engine, ..EvalOptions::default() });
        evaluation.db.sorted_tuples(program.lookup_source(pred).unwrap())
    }

    #[test]
    fn count_sum_min_and_max_group_by_their_keys() {
        let src = "E(1, 2). E(1, 3). E(2, 5). N(1). N(2). N(3).\n\
                   C(X, K) <- N(X), K = count : E(X, _)\n\
                   S(X, K) <- N(X), K = sum Y : E(X, Y)\n\
                   M(X, K) <- N(X), K = min Y : E(X, Y)\n\
                   ?- C(X, K).\n";
        for engine in [NativeEngine::Reference, NativeEngine::Seminaive] {
            assert_eq!(evaluated(src, "C", engine), [[1, 2], [2, 1], [3, 0]], "count over none is 0");
            assert_eq!(evaluated(src, "S", engine), [[1, 5], [2, 5], [3, 0]]);
            assert_eq!(evaluated(src, "M", engine), [[1, 2], [2, 5]], "min over none does not fire");
        }
    }
}
