//! The reference engine: a naive synchronous fixpoint with nested-loop matching, kept
//! deliberately simple because its rounds and `row_tests` are the SPEC's exact figures.

use crate::database::Database;
use crate::join::{run_staged, PhysPlan, View};
use crate::limits::ResourceError;
use crate::seminaive::Run;
use ir::PredId;
use plan::ProgramPlan;

/// Runs rounds until one adds nothing. Every rule reads the database as it was at the
/// start of the round: the views end at the round's starting row counts, so tuples added
/// during the round stay invisible until the next one. Stops when a relation stops
/// growing (see [`crate::seminaive::propagate`]).
pub(crate) fn evaluate(plan: &ProgramPlan, db: &mut Database, run: &mut Run) -> Result<(), ResourceError> {
    let plans: Vec<PhysPlan> =
        plan.rules.iter().filter(|r| r.fires()).map(|r| PhysPlan::scanning(r, db.arity(r.head))).collect();
    db.check()?;
    run.count_facts(db);
    loop {
        let snapshot = db.ends();
        for phys in &plans {
            let Database { rows, sets, .. } = &mut *db;
            let views: Vec<View<'_>> =
                phys.steps.iter().map(|s| View::new(&rows[s.pred.index()], 0, snapshot[s.pred.index()])).collect();
            let h = phys.head.index();
            run_staged(phys, &views, &rows[h], &mut sets[h], &mut run.scratch, &mut run.stats);
            db.commit(phys.head);
            db.check_pred(phys.head)?;
        }
        let grew = run.finish_round(db, snapshot.iter().enumerate().map(|(p, &end)| (PredId(p as u32), end)));
        if !grew {
            return Ok(());
        }
    }
}
