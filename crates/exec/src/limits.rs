//! What an evaluation may spend: a memory budget for the relations of a database, an
//! optional limit on the tuples of each relation, and the error that ends an evaluation
//! when a relation outgrows them or the memory.
//!
//! Relations check at their growth points only (a tuple staged near the limit, a buffer
//! that must grow, a commit, an index sync), never per derivation beyond one comparison;
//! a relation that fails refuses every new tuple from then on, so memory stays bounded,
//! and the engines turn the failure into a [`ResourceError`] at their next commit.
//!
//! The memory budget is checked against the heap bytes the relations hold (what
//! `--emit trace` reports per relation: rows, tuple set, staging buffer, indexes,
//! locator), measured at these points: every commit of staged tuples
//! into a relation (that relation), the start of an evaluation or update (every
//! relation), and, in the semi-naive engine, each join once the indexes it reads are up
//! to date (the relations it reads and its head). A measurement leaves the relation a
//! room of tuples to stage until the next one, each counted at a fixed number of bytes
//! per column; staging past that room fails like staging past the tuple limit. All of
//! these points lie on the thread that owns the database, and what they measure depends
//! only on the tuples committed and staged in order, which a join split over threads
//! keeps (`split.rs`): the same budget stops the same evaluation at the same relation
//! with the same numbers, on any number of threads.

use ir::{PredId, Program};
use std::fmt;

/// What an evaluation may spend ([`crate::Database::set_limits`]). The default limits
/// nothing: the command line derives its memory budget from the machine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// The most tuples any one relation may hold; `None`: as many as `u32` row ids allow.
    pub max_tuples: Option<u32>,
    /// The most heap bytes the relations of a database may hold together; `None`: no
    /// budget (allocation failures still end an evaluation cleanly).
    pub max_memory: Option<usize>,
}

/// `bytes` for a person: `512 B`, `1.5 KiB`, `64.0 MiB`, `3.2 GiB` (powers of 1024).
pub fn format_bytes(bytes: usize) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    // 1023.96 KiB reads as 1.0 MiB, not 1024.0 KiB.
    while value >= 1023.95 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    match unit {
        0 => format!("{bytes} B"),
        _ => format!("{value:.1} {}", UNITS[unit]),
    }
}

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
    /// The relations of its database reached the memory `budget` as it grew to `tuples`
    /// tuples (staged ones included) taking `bytes`, the relations together `total`.
    MemoryBudget { budget: usize, tuples: usize, bytes: usize, total: usize },
    /// Its lattice (a recursive `min` or `max`) still improved a value after `rounds`
    /// rounds, more than its stratum holds facts: a cycle improves it for ever
    /// (`dominance.rs`).
    ImprovingCycle { rounds: usize },
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
            ResourceKind::MemoryBudget { budget, tuples, bytes, .. } => format!(
                "relation `{name}` grew to {tuples} tuples taking {}, and the relations reached the memory budget of {}",
                format_bytes(bytes),
                format_bytes(budget),
            ),
            ResourceKind::ImprovingCycle { rounds } => format!(
                "relation `{name}` still improved a value after {rounds} rounds, more than its recursion holds facts: a cycle improves it each time round"
            ),
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

    /// `P(X,Y) <- A(X), B(Y)` over `n` values each: `n * n` tuples of `P` in one join.
    fn cross_product(n: usize) -> ir::Program {
        let mut src = String::from("P(X,Y) <- A(X), B(Y)\n");
        for i in 0..n {
            src += &format!("A(a{i}).\nB(b{i}).\n");
        }
        program(&src)
    }

    fn evaluate_within_memory(
        p: &ir::Program,
        engine: NativeEngine,
        threads: usize,
        budget: usize,
    ) -> Result<Database, ResourceError> {
        let mut db = Database::from_facts(p, &p.facts);
        db.set_limits(Limits { max_tuples: None, max_memory: Some(budget) });
        let threads = crate::Threads::new(threads).splitting_from(2);
        let options = EvalOptions { engine, threads, ..EvalOptions::default() };
        try_evaluate(&plan_program(p), p, db, options).map(|eval| eval.db)
    }

    #[test]
    fn a_cross_product_stops_at_the_memory_budget_alike_on_any_number_of_threads() {
        let p = cross_product(300);
        let pp = p.lookup_source("P").unwrap();
        let budget = 256 * 1024;
        for engine in [NativeEngine::Seminaive, NativeEngine::Reference] {
            let errors: Vec<ResourceError> =
                [1, 2, 4].map(|threads| evaluate_within_memory(&p, engine, threads, budget).unwrap_err()).into();
            let ResourceKind::MemoryBudget { budget: b, tuples, bytes, total } = errors[0].kind else {
                panic!("{engine:?}: {:?}", errors[0]);
            };
            assert_eq!((errors[0].pred, b), (pp, budget), "{engine:?}");
            // Stopped near the budget, long before the 90,000 tuples.
            assert!(total >= budget - crate::relation::staged_tuple_bytes(2) && total < 2 * budget, "{total}");
            assert!(tuples < 90_000 && bytes <= total, "{tuples} {bytes}");
            assert!(errors.iter().all(|e| *e == errors[0]), "{engine:?}: {errors:?}");
            let message = errors[0].message(&p);
            assert!(
                message.starts_with("relation `P` grew to ") && message.contains("memory budget of 256.0 KiB"),
                "{message}"
            );
        }
        // With room enough, the product is whole, and the budget holds its bytes.
        let db = evaluate_within_memory(&p, NativeEngine::Seminaive, 1, 64 << 20).unwrap();
        assert_eq!(db.len(pp), 90_000);
    }

    #[test]
    fn input_past_the_memory_budget_fails_the_largest_relation_before_evaluation() {
        let mut src = String::from("P(X) <- A(X,Y), B(Y)\nB(a1).\n");
        for i in 0..2000 {
            src += &format!("A(a{i},a{}).\n", i + 1);
        }
        let p = program(&src);
        let a = p.lookup_source("A").unwrap();
        let held = Database::from_facts(&p, &p.facts).relation_bytes(a).total();
        let within = |budget: usize| {
            let mut db = Database::from_facts(&p, &p.facts);
            db.set_memory_budget(Some(budget));
            let failed = db.failure().map(|e| e.pred);
            let evaluated = try_evaluate(&plan_program(&p), &p, db, EvalOptions::default());
            (failed, evaluated.map(|eval| eval.db.len(p.lookup_source("P").unwrap())).map_err(|e| e.pred))
        };
        assert_eq!(within(held / 2), (Some(a), Err(a)));
        assert_eq!(within(held * 4), (None, Ok(1)));
    }

    #[test]
    fn an_update_past_the_memory_budget_fails() {
        let p = chain(20);
        let (e, r) = (p.lookup_source("E").unwrap(), p.lookup_source("R").unwrap());
        let n20 = p.consts.get("n20").unwrap().0;
        for maintenance in [Maintenance::Dred, Maintenance::Ranked] {
            let mut db = Database::from_facts(&p, &p.facts);
            db.set_memory_budget(Some(256 * 1024));
            let mut state = Maintained::try_with_maintenance(plan_program(&p), &p, db, maintenance).unwrap();
            assert_eq!(state.db().len(r), 210);
            // Two hundred more nodes at the end of the chain: a closure of 24,531 tuples.
            let ends = [n20].into_iter().chain(1000..1200);
            let edges: Vec<u32> = ends.collect();
            let inserts = edges.windows(2).map(|w| (e, w.to_vec())).collect();
            let err = state.try_apply(&Update { inserts, deletes: Vec::new() }).unwrap_err();
            assert_eq!(err.pred, r, "{maintenance:?}");
            assert!(matches!(err.kind, ResourceKind::MemoryBudget { budget: 262_144, .. }), "{maintenance:?}: {err:?}");
        }
    }

    #[test]
    fn bytes_read_in_powers_of_1024() {
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(1023), "1023 B");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        assert_eq!(format_bytes((1 << 20) - 20), "1.0 MiB");
        assert_eq!(format_bytes(64 << 20), "64.0 MiB");
        assert_eq!(format_bytes(3 << 30), "3.0 GiB");
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
