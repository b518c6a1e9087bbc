//! The reference engine: a naive synchronous fixpoint with nested-loop matching, kept
//! deliberately simple because its rounds and `row_tests` are the counts
//! docs/semantics.md (Evaluation: the reference engine) defines and its examples quote.

use crate::choice::{ChoiceKeys, Chooser};
use crate::database::Database;
use crate::dominance::Dominances;
use crate::join::{run_staged, PhysPlan, View};
use crate::limits::ResourceError;
use crate::reduce::is_reduction;
use crate::seminaive::Run;
use ir::{PredId, ValueStore};
use plan::ProgramPlan;

/// Runs rounds until one adds nothing. Every rule reads the database as it was at the
/// start of the round: the views end at the round's starting row counts, so tuples added
/// during the round stay invisible until the next one. Stops when a relation stops
/// growing (see [`crate::seminaive::propagate`]).
///
/// A positive program runs all its rules together in each round (docs/semantics.md,
/// Evaluation: the reference engine). A program with negated atoms runs one such
/// fixpoint per stratum, in order: a negation may only be tested once its relation is
/// complete. So does a program with dominance rules, whose dominated facts go after
/// every round of their relation's stratum (`dominance.rs`).
pub(crate) fn evaluate(
    plan: &ProgramPlan,
    values: &ValueStore,
    dominances: &Dominances,
    limits: &[Option<u64>],
    choices: &ChoiceKeys,
    db: &mut Database,
    run: &mut Run,
) -> Result<(), ResourceError> {
    let chooser = &mut Chooser::new(choices);
    let joins = || plan.rules.iter().filter(|r| r.fires() && !is_reduction(r));
    let plans: Vec<PhysPlan> = joins().map(|r| PhysPlan::scanning(r, db.arity(r.head), values)).collect();
    db.measure_memory();
    db.check()?;
    run.count_facts(db);
    let reductions = plan.rules.iter().any(|r| r.fires() && is_reduction(r));
    // A size limit ends its stratum's fixpoint, so a limited program runs stratum by
    // stratum too.
    let limited =
        |s: &plan::Stratum| s.recursive && s.preds.iter().any(|&p| limits.get(p.index()).copied().flatten().is_some());
    let any_limited = run.limit_sizes && plan.strata.iter().any(limited);
    // A choice keeps what the first round deriving a key derives (`choice.rs`), so a
    // program with one runs stratum by stratum too, as the semi-naive engine does: the
    // candidates of each round are then the same in both.
    if !reductions
        && !any_limited
        && choices.is_empty()
        && dominances.is_empty()
        && plans.iter().all(|p| p.negations.is_empty())
    {
        return fixpoint(&plans, db, run, chooser);
    }
    let mut position_of = vec![None; plan.rules.len()];
    for (k, r) in joins().enumerate() {
        position_of[r.rule.index()] = Some(k);
    }
    for stratum in &plan.strata {
        // A reduction's head is alone in its stratum, and its rows are complete: one
        // pass over them is its fixpoint (and one round).
        let reduced: Vec<&plan::RulePlan> =
            stratum.rules.iter().map(|id| &plan.rules[id.index()]).filter(|r| r.fires() && is_reduction(r)).collect();
        let members: Vec<PhysPlan> =
            stratum.rules.iter().filter_map(|id| position_of[id.index()]).map(|k| plans[k].clone()).collect();
        if stratum.recursive && !reduced.is_empty() {
            // Correlated reductions (`reduce.rs`): their rows are in this stratum, and a
            // group's rows all come in one round, so reducing every round over all rows
            // gives each group its one value.
            fixpoint_reducing(&members, &reduced, (dominances, &stratum.preds), db, run, chooser)?;
            continue;
        }
        if !reduced.is_empty() {
            let snapshot = db.ends();
            for r in reduced {
                crate::reduce::evaluate(r, db, &mut run.stats)?;
            }
            run.finish_round(db, snapshot.iter().enumerate().map(|(p, &end)| (PredId(p as u32), end)));
        }
        if !members.is_empty() && run.limit_sizes && limited(stratum) {
            let stratum_limits: Vec<(PredId, u64)> =
                stratum.preds.iter().filter_map(|&p| Some((p, limits.get(p.index()).copied().flatten()?))).collect();
            fixpoint_limited(&members, (dominances, &stratum.preds), &stratum_limits, db, run, chooser)?;
        } else if !members.is_empty() {
            fixpoint_reducing(&members, &[], (dominances, &stratum.preds), db, run, chooser)?;
        }
    }
    Ok(())
}

/// The naive fixpoint of `plans`.
fn fixpoint(plans: &[PhysPlan], db: &mut Database, run: &mut Run, chooser: &mut Chooser) -> Result<(), ResourceError> {
    fixpoint_reducing(plans, &[], (&Dominances::default(), &[]), db, run, chooser)
}

/// The naive fixpoint of `plans`, the rules of a recursive stratum deriving `preds`, as
/// far as the size `limits` of its relations let it go: Soufflé's iterations, which the
/// limit makes observable (docs/semantics.md, Soufflé programs: `.limitsize`). A first
/// round fires the rules that read none of `preds`; no round starts once a limited
/// relation holds its limit. Each round ends with the removal of the dominated facts
/// of `preds`, as in [`fixpoint_reducing`].
fn fixpoint_limited(
    plans: &[PhysPlan],
    (dominances, preds): (&Dominances, &[PredId]),
    limits: &[(PredId, u64)],
    db: &mut Database,
    run: &mut Run,
    chooser: &mut Chooser,
) -> Result<(), ResourceError> {
    let (recursive, first): (Vec<PhysPlan>, Vec<PhysPlan>) =
        plans.iter().cloned().partition(|p| p.steps.iter().any(|s| preds.contains(&s.pred)));
    let snapshot = db.ends();
    run_round(&first, &snapshot, db, run, chooser)?;
    dominate(dominances, preds, &snapshot, db);
    run.finish_round(db, snapshot.iter().enumerate().map(|(p, &end)| (PredId(p as u32), end)));
    let all: Vec<PhysPlan> = first.into_iter().chain(recursive).collect();
    for rounds in 2.. {
        if limits.iter().any(|&(p, n)| db.len(p) as u64 >= n) {
            return Ok(());
        }
        let snapshot = db.ends();
        run_round(&all, &snapshot, db, run, chooser)?;
        dominate(dominances, preds, &snapshot, db);
        let grew = run.finish_round(db, snapshot.iter().enumerate().map(|(p, &end)| (PredId(p as u32), end)));
        if !grew || !kept_any(&snapshot, db) {
            return Ok(());
        }
        dominances.check_improving(preds, rounds, db)?;
    }
    unreachable!("the rounds end by returning")
}

/// Removes the dominated facts of `preds` after a round that started at `snapshot`.
fn dominate(dominances: &Dominances, preds: &[PredId], snapshot: &[u32], db: &mut Database) {
    let from: Vec<u32> = preds.iter().map(|p| snapshot[p.index()]).collect();
    dominances.reduce(preds, &from, db);
}

/// Whether a relation holds a fact the round that started at `snapshot` added (one that
/// dominance did not remove again).
fn kept_any(snapshot: &[u32], db: &Database) -> bool {
    (0..snapshot.len()).any(|p| {
        let rel = db.rel(PredId(p as u32));
        (snapshot[p]..rel.end()).any(|r| rel.is_alive(r))
    })
}

/// One synchronous round of `plans`, each reading the rows up to `snapshot`.
/// The candidates of relations with a choice domain go to `chooser`, which admits them
/// as the round ends.
fn run_round(
    plans: &[PhysPlan],
    snapshot: &[u32],
    db: &mut Database,
    run: &mut Run,
    chooser: &mut Chooser,
) -> Result<(), ResourceError> {
    for phys in plans {
        // The head's room to stage, against what the other relations hold now.
        db.measure(phys.head);
        let Database { rows, sets, .. } = &mut *db;
        let steps = phys.steps.iter().map(|s| s.pred);
        let views: Vec<View<'_>> = steps
            .chain(phys.negations.iter().copied())
            .map(|p| View::new(&rows[p.index()], 0, snapshot[p.index()]))
            .collect();
        let h = phys.head.index();
        let target = chooser.candidates(phys.head, rows[h].arity).unwrap_or(&mut sets[h]);
        run_staged(phys, &views, &rows[h], target, &mut run.scratch, &mut run.stats);
        db.commit(phys.head);
        db.check_pred(phys.head)?;
    }
    chooser.choose(db)
}

/// The naive fixpoint of `plans`, each round starting with the `reductions` over the
/// rows the rounds before derived (facts they already have are not added again) and
/// ending with the removal of the dominated facts of the relations `preds` of
/// `dominated` (a round derives a dominated fact again, and removes it again: the
/// fixpoint is reached when no fact is left of what a round added).
fn fixpoint_reducing(
    plans: &[PhysPlan],
    reductions: &[&plan::RulePlan],
    (dominances, preds): (&Dominances, &[PredId]),
    db: &mut Database,
    run: &mut Run,
    chooser: &mut Chooser,
) -> Result<(), ResourceError> {
    for rounds in 1.. {
        let snapshot = db.ends();
        for r in reductions {
            crate::reduce::evaluate(r, db, &mut run.stats)?;
        }
        run_round(plans, &snapshot, db, run, chooser)?;
        dominate(dominances, preds, &snapshot, db);
        let grew = run.finish_round(db, snapshot.iter().enumerate().map(|(p, &end)| (PredId(p as u32), end)));
        if !grew || !kept_any(&snapshot, db) {
            return Ok(());
        }
        dominances.check_improving(preds, rounds, db)?;
    }
    unreachable!("the rounds end by returning")
}
