//! The reference engine: a naive synchronous fixpoint with nested-loop matching, kept
//! deliberately simple because its rounds and `row_tests` are the SPEC's exact figures.

use crate::database::Database;
use crate::join::{flush, run_into_pending, PhysPlan, View};
use crate::seminaive::Run;
use plan::ProgramPlan;

/// Runs rounds until one adds nothing. Every rule reads the database as it was at the
/// start of the round: the views end at the round's starting row counts, so tuples added
/// during the round stay invisible until the next one.
pub(crate) fn evaluate(plan: &ProgramPlan, db: &mut Database, run: &mut Run) {
    let plans: Vec<PhysPlan> =
        plan.rules.iter().filter(|r| r.well_formed).map(|r| PhysPlan::scanning(r, db.arity(r.head))).collect();
    loop {
        let snapshot = db.ends();
        for phys in &plans {
            let views: Vec<View<'_>> =
                phys.steps.iter().map(|s| View::new(db.rel(s.pred), 0, snapshot[s.pred.index()])).collect();
            run.pending_for(db, phys.head);
            let pending = &mut run.pending[phys.head.index()];
            run_into_pending(phys, &views, db.rel(phys.head), pending, &mut run.scratch, &mut run.stats);
            flush(pending, db.rel_mut(phys.head));
        }
        let grew = run.finish_round(db, &snapshot);
        if !grew {
            break;
        }
    }
}
