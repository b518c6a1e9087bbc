//! Grouped reductions (`plan::Reduce`): the one thing aggregates add to evaluation.
//! Lowering turns each aggregate into ordinary rules and one reduction whose rows lie in
//! a strictly lower stratum, so a reduction runs once, when its stratum starts, over a
//! complete relation, and its head (alone in its stratum) gets one fact per group.

use crate::database::Database;
use crate::join::JoinStats;
use crate::limits::ResourceError;
use plan::RulePlan;
use std::collections::BTreeMap;

/// Whether the rule's plan is a reduction.
pub(crate) fn is_reduction(plan: &RulePlan) -> bool {
    plan.reduce.is_some()
}

/// The groups of a reduction's rows and each one's aggregate, in key order: what its
/// head holds once its stratum ran. Counts one row test per row read.
pub(crate) fn groups(plan: &RulePlan, db: &Database, stats: &mut JoinStats) -> BTreeMap<Vec<u32>, u32> {
    let mut groups: BTreeMap<Vec<u32>, u32> = BTreeMap::new();
    let (Some(reduce), Some(step)) = (&plan.reduce, plan.steps.first()) else { return groups };
    for row in db.tuples(step.pred) {
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

#[cfg(test)]
mod tests {
    use crate::{Database, Engine, EvalOptions};

    /// The sorted tuples of `pred` after evaluating `src` with `engine`.
    fn evaluated(src: &str, pred: &str, engine: Engine) -> Vec<Vec<u32>> {
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
        for engine in [Engine::Reference, Engine::Seminaive] {
            assert_eq!(evaluated(src, "C", engine), [[1, 2], [2, 1], [3, 0]], "count over none is 0");
            assert_eq!(evaluated(src, "S", engine), [[1, 5], [2, 5], [3, 0]]);
            assert_eq!(evaluated(src, "M", engine), [[1, 2], [2, 5]], "min over none does not fire");
        }
    }
}
