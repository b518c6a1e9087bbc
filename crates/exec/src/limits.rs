//! What an evaluation may spend: a limit on the tuples of each relation, and the error
//! that ends an evaluation when a relation outgrows it or its memory.
//!
//! Relations check at their growth points only (a tuple staged near the limit, a buffer
//! that must grow, a commit, an index sync), never per derivation beyond one comparison;
//! a relation that fails refuses every new tuple from then on, so memory stays bounded,
//! and the engines turn the failure into a [`ResourceError`] at their next commit.

use ir::{PredId, Program};
use std::fmt;

/// The default of [`crate::Database::set_tuple_limit`] in the command line: a hundred
/// million tuples is about a gigabyte of rows at arity two, a few with indexes, and
/// more than any of the benchmarks derive in one relation by two orders of magnitude.
pub const DEFAULT_MAX_TUPLES: u32 = 100_000_000;

/// Why a relation stopped growing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceKind {
    /// It would have held more than `limit` tuples.
    TupleLimit { limit: u32 },
    /// It would have held more than the `cap` set for it alone
    /// ([`crate::Database::set_relation_cap`]): the caller's signal, not an error of the input.
    Cap { cap: u32 },
    /// Its rows would have needed row ids past `u32` (tombstones count until compaction).
    RowIds,
    /// An index of it would have passed the `u32` offsets of its chains.
    IndexSize,
    /// Growing it by about `bytes` failed: the memory is not there.
    Allocation { bytes: usize },
}

/// An evaluation or update stopped because relation `pred` outgrew a limit or memory.
/// The database it worked on is incomplete and is not handed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceError {
    pub pred: PredId,
    pub kind: ResourceKind,
}

impl ResourceError {
    /// The one-line description, with the relation named as `program` names it.
    pub fn message(&self, program: &Program) -> String {
        let name = ir::DisplayPred(program, self.pred);
        match self.kind {
            ResourceKind::TupleLimit { limit } => format!("relation `{name}` grew past {limit} tuples"),
            ResourceKind::Cap { cap } => format!("relation `{name}` grew past its cap of {cap} tuples"),
            ResourceKind::RowIds => format!("relation `{name}` ran out of 32-bit row ids"),
            ResourceKind::IndexSize => format!("an index of relation `{name}` outgrew its 32-bit offsets"),
            ResourceKind::Allocation { bytes } => {
                format!("relation `{name}` could not grow: {bytes} bytes of memory were not available")
            }
        }
    }
}

impl fmt::Display for ResourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "relation #{} stopped growing: {:?}", self.pred.0, self.kind)
    }
}

impl std::error::Error for ResourceError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{try_evaluate, Database, EvalOptions, Maintained, Maintenance, NativeEngine};
    use ir::Update;
    use plan::plan_program;
    use plan::testing::program;

    /// A chain `n0 -> n1 -> ... -> n{len}` and its transitive closure: `len * (len + 1) / 2`
    /// tuples of `R`, most derived several times.
    fn chain(len: usize) -> ir::Program {
        let mut src = String::from("R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), R(Y,Z)\n");
        for i in 0..len {
            src += &format!("E(n{i},n{}).\n", i + 1);
        }
        program(&src)
    }

    fn evaluate_with(p: &ir::Program, engine: NativeEngine, limit: u32) -> Result<usize, ResourceError> {
        let mut db = Database::new(p);
        db.set_tuple_limit(limit);
        for fact in &p.facts {
            db.insert(fact.pred, &fact.values);
        }
        let options = EvalOptions { engine, ..EvalOptions::default() };
        let eval = try_evaluate(&plan_program(p), p, db, options)?;
        Ok(eval.db.len(p.lookup_source("R").unwrap()))
    }

    #[test]
    fn a_relation_stops_at_its_limit_and_a_full_one_is_no_error() {
        let p = chain(20);
        let r = p.lookup_source("R").unwrap();
        for engine in [NativeEngine::Seminaive, NativeEngine::Reference] {
            assert_eq!(evaluate_with(&p, engine, NIL_LIMIT), Ok(210));
            // Exactly full: every later derivation is a duplicate, which is no growth.
            assert_eq!(evaluate_with(&p, engine, 210), Ok(210));
            let err = evaluate_with(&p, engine, 209).unwrap_err();
            assert_eq!(err, ResourceError { pred: r, kind: ResourceKind::TupleLimit { limit: 209 } });
            assert_eq!(err.message(&p), "relation `R` grew past 209 tuples");
            // Input past the limit stops the evaluation before it starts.
            let err = evaluate_with(&p, engine, 10).unwrap_err();
            assert_eq!(err.pred, p.lookup_source("E").unwrap());
        }
    }

    const NIL_LIMIT: u32 = u32::MAX;

    #[test]
    fn a_relation_cap_stops_with_its_own_kind_and_the_tuple_limit_lifts_it() {
        let p = chain(20);
        let r = p.lookup_source("R").unwrap();
        for engine in [NativeEngine::Seminaive, NativeEngine::Reference] {
            let run = |cap: u32, limit: Option<u32>| {
                let mut db = Database::from_facts(&p, &p.facts);
                db.set_tuple_limit(1000);
                db.set_relation_cap(r, cap);
                if let Some(limit) = limit {
                    db.set_tuple_limit(limit);
                }
                let options = EvalOptions { engine, ..EvalOptions::default() };
                try_evaluate(&plan_program(&p), &p, db, options).map(|eval| eval.db.len(r))
            };
            let err = run(100, None).unwrap_err();
            assert_eq!(err, ResourceError { pred: r, kind: ResourceKind::Cap { cap: 100 } });
            assert_eq!(err.message(&p), "relation `R` grew past its cap of 100 tuples");
            assert_eq!(run(210, None), Ok(210));
            // A cap above the limit changes nothing; setting the limit drops the cap.
            let err = run(5000, Some(150)).unwrap_err();
            assert_eq!(err.kind, ResourceKind::TupleLimit { limit: 150 });
            assert_eq!(run(100, Some(1000)), Ok(210));
            let err = run(2000, None).map_err(|e| e.kind);
            assert_eq!(err, Ok(210));
        }
    }

    #[test]
    fn a_cross_product_stops_with_bounded_memory() {
        let mut src = String::from("P(X,Y) <- A(X), B(Y)\n");
        for i in 0..300 {
            src += &format!("A(a{i}).\nB(b{i}).\n");
        }
        let p = program(&src);
        let mut db = Database::from_facts(&p, &p.facts);
        db.set_tuple_limit(1000);
        let err = try_evaluate(&plan_program(&p), &p, db, EvalOptions::default()).err();
        assert_eq!(err.map(|e| e.pred), p.lookup_source("P"));
    }

    #[test]
    fn an_update_past_the_limit_fails_and_keeps_failing_while_deletions_make_room() {
        let p = chain(20);
        let e = p.lookup_source("E").unwrap();
        // A value no fact has: to exec, constants are only numbers.
        let (n20, n21) = (p.consts.get("n20").unwrap().0, 999);
        for maintenance in [Maintenance::Dred, Maintenance::Ranked] {
            let mut db = Database::from_facts(&p, &p.facts);
            db.set_tuple_limit(220);
            let mut state = Maintained::try_with_maintenance(plan_program(&p), &p, db, maintenance).unwrap();
            // Cutting the chain in the middle removes 110 tuples; putting it back adds them
            // again, within the limit (the room counts live tuples, not tombstones).
            let cut = vec![(e, state.db().sorted_tuples(e)[10].clone())];
            let report = state.try_apply(&Update { inserts: Vec::new(), deletes: cut.clone() }).unwrap();
            assert_eq!(report.edb_deleted.len(), 1);
            state.try_apply(&Update { inserts: cut, deletes: Vec::new() }).unwrap();
            assert_eq!(state.db().len(p.lookup_source("R").unwrap()), 210);
            // One more edge at the end adds 21 tuples: past 220.
            let grow = Update { inserts: vec![(e, vec![n20, n21])], deletes: Vec::new() };
            let err = state.try_apply(&grow).unwrap_err();
            assert_eq!(err.kind, ResourceKind::TupleLimit { limit: 220 });
            let nothing = Update::default();
            assert_eq!(state.try_apply(&nothing), Err(err), "the incomplete state is not used again");
        }
    }
}
