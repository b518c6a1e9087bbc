//! Evaluation of relational-algebra plans: a reference naive engine whose rounds and
//! `row_tests` are the counts docs/semantics.md quotes, a fast semi-naive engine, and DRed
//! incremental maintenance ([`Maintained`]).
//!
//! Invariant: `exec` knows nothing of adornments or magic sets; demand and answer
//! predicates are ordinary relations here. Values are the `u32` of `ir::Const`.
//!
//! All engines run the same join loop (`join.rs`) and differ only in which row ranges of
//! which relations each step reads: relations are append-only between compactions, so a
//! row-range prefix is an older version and a suffix is a delta.

mod choice;
mod database;
mod dominance;
mod dred;
mod dred_strata;
mod explain;
mod implied;
mod join;
mod limits;
mod order;
mod ranked;
mod reduce;
mod reference;
mod relation;
mod seminaive;
mod split;

pub use database::Database;
pub use dred::{Maintained, MaintainedBy, Maintenance, UpdateCounts, UpdateReport, AUTO_MIN_BUDGET};
pub use explain::{
    Attempt, Blocked, Explainer, Leaf, Proof, ProofNode, RuleAttempt, Step, WhyNot, AGGREGATE_ROWS_SHOWN,
};
pub use limits::{format_bytes, Limits, ResourceError, ResourceKind};
pub use relation::{Groups, RelationBytes};

use ir::{PredId, Program};
use plan::ProgramPlan;

/// Which of dlc's own evaluation algorithms runs (the pipeline's `Engine` also offers the
/// differential dataflow).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NativeEngine {
    /// Naive synchronous fixpoint with nested-loop matching; counts `row_tests`
    /// (docs/semantics.md, Evaluation: the reference engine).
    Reference,
    /// Stratified semi-naive evaluation with hash indexes.
    #[default]
    Seminaive,
}

/// How to evaluate.
#[derive(Default)]
pub struct EvalOptions {
    pub engine: NativeEngine,
    /// Keep the new facts of every round in [`Evaluation::rounds`].
    pub record_rounds: bool,
    /// Called once per round (iteration) with the round number and the total fact count.
    pub progress: Option<Box<dyn FnMut(Progress)>>,
    /// The threads the semi-naive engine's joins may use (one by default). The reference
    /// engine always runs on one.
    pub threads: Threads,
}

/// How many threads the semi-naive engine splits a join over, and from what size on.
/// Results do not depend on it: relations, their row order, ranks, rounds and work are
/// those of one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Threads {
    count: usize,
    min_split_rows: u32,
    min_split_firings: u64,
}

impl Threads {
    /// Joins run on the calling thread.
    pub const ONE: Threads =
        Threads { count: 1, min_split_rows: DEFAULT_MIN_SPLIT_ROWS, min_split_firings: DEFAULT_MIN_SPLIT_FIRINGS };

    /// `count` threads (at least one), splitting a join from [`DEFAULT_MIN_SPLIT_ROWS`]
    /// rows of delta and [`DEFAULT_MIN_SPLIT_FIRINGS`] expected firings on.
    pub fn new(count: usize) -> Self {
        Threads { count: count.max(1), ..Threads::ONE }
    }

    /// As many threads as the machine runs at once ([`std::thread::available_parallelism`]).
    pub fn available() -> Self {
        Threads::new(std::thread::available_parallelism().map_or(1, usize::from))
    }

    /// Splits every join from `rows` rows of delta on (at least two), whatever it is
    /// expected to derive: tests split the joins of small inputs with it.
    pub fn splitting_from(self, rows: u32) -> Self {
        Threads { min_split_rows: rows.max(2), min_split_firings: 0, ..self }
    }

    /// The number of threads.
    pub fn count(self) -> usize {
        self.count
    }

    /// The fewest delta rows a join is split for.
    pub fn min_split_rows(self) -> u32 {
        self.min_split_rows
    }

    /// The fewest firings a join must be expected to make (from its firings per delta
    /// row the last time it ran) to be split.
    pub fn min_split_firings(self) -> u64 {
        self.min_split_firings
    }

    /// The threads to split a join over, from what it did the last time it ran (`None`
    /// the first time) and its `delta` rows now. A join is split when it is expected to
    /// make at least [`Threads::min_split_firings`] firings, and made at least
    /// [`MIN_SPLIT_FIRINGS_PER_NEW`] firings per new tuple: the merge stages every new
    /// tuple again on the calling thread, so a join whose firings are mostly new tuples
    /// (a forest's closure: one firing per new tuple; a random graph's right-linear
    /// closure: five) is slower split, one whose firings are mostly known tuples (a
    /// non-linear closure: hundreds per new tuple) is faster. A join's first run, with
    /// nothing to go by, stays on the calling thread, unless every join is to be split
    /// ([`Threads::splitting_from`]).
    pub(crate) fn for_join(self, last: Option<JoinYield>, delta: u32) -> Threads {
        if self.min_split_firings == 0 {
            return self;
        }
        match last {
            Some(y)
                if y.firings_per_row * f64::from(delta) >= self.min_split_firings as f64
                    && y.firings_per_new >= MIN_SPLIT_FIRINGS_PER_NEW =>
            {
                self
            }
            _ => Threads::ONE,
        }
    }
}

/// What a join did the last time it ran, per delta row and per new tuple: what decides
/// whether splitting it over threads pays ([`Threads::for_join`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct JoinYield {
    pub firings_per_row: f64,
    pub firings_per_new: f64,
}

impl JoinYield {
    pub(crate) fn new(firings: u64, delta: u32, new: u32) -> Self {
        JoinYield {
            firings_per_row: firings as f64 / f64::from(delta.max(1)),
            firings_per_new: firings as f64 / f64::from(new.max(1)),
        }
    }
}

impl Default for Threads {
    fn default() -> Self {
        Threads::ONE
    }
}

/// The fewest rows of delta for which a join is split across threads: below it, starting
/// the threads costs more than they save (a 2,000-node chain's closure runs 2,000 joins
/// of up to 2,000 rows and one firing each).
pub const DEFAULT_MIN_SPLIT_ROWS: u32 = 4096;

/// The fewest firings a join must be expected to make to be split: a worker tests each
/// derived tuple against the head relation, stages the new ones in a set of its own, and
/// the merge stages them again, so a join that derives mostly new tuples with little
/// search per tuple (a grid's closure: two firings per delta row, half of them new) is
/// slower split; the split pays where firings are many per new tuple.
pub const DEFAULT_MIN_SPLIT_FIRINGS: u64 = 1 << 17;

/// The fewest firings per new tuple for which a join is split (`Threads::for_join`).
/// Measured through the binary on two cores: the joins that ran slower split made 1 to 5
/// firings per new tuple (a forest's, a random graph's and a bounded-hop closure, the
/// complement under a negation), those that ran faster 200 to 570 (non-linear closures).
pub const MIN_SPLIT_FIRINGS_PER_NEW: f64 = 16.0;

/// What the progress callback is told after each round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub iteration: usize,
    pub facts: usize,
}

/// The new facts of one round: for the reference engine a synchronous round, for the
/// semi-naive engine one iteration of one stratum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Round {
    /// Numbered from 1.
    pub round: usize,
    /// Sorted by predicate id, tuples sorted; only predicates that gained facts.
    pub new: Vec<(PredId, Vec<Vec<u32>>)>,
}

/// The result of [`evaluate`].
pub struct Evaluation {
    /// The input facts and every derived fact.
    pub db: Database,
    /// The rounds, when [`EvalOptions::record_rounds`] was set; otherwise empty.
    pub rounds: Vec<Round>,
    /// Rows tried while matching (reference engine only; docs/semantics.md, Evaluation:
    /// the reference engine).
    pub row_tests: Option<u64>,
    /// Rounds run, the final one that derives nothing included.
    pub iterations: usize,
    /// Rule firings: complete body matches, duplicates included. DRed reports the same
    /// measure, so an update's work can be compared with a from-scratch evaluation.
    pub work: u64,
    /// Whether the evaluation started from no derived facts, and whether it was
    /// semi-naive: what [`Maintained::from_evaluation`] needs to know to keep `db`.
    pub(crate) from_inputs_only: bool,
    pub(crate) seminaive: bool,
    /// The threads it ran with, which a [`Maintained`] keeping it goes on using.
    pub(crate) threads: Threads,
}

impl Evaluation {
    /// An evaluation another engine made: `db` holds the input facts and every derived
    /// fact. It records no rounds or row tests; a [`Maintained`] keeping it starts again
    /// from its input relations, since its rows carry no ranks of this crate's engines.
    pub fn computed_elsewhere(db: Database, iterations: usize, work: u64, threads: Threads) -> Evaluation {
        Evaluation {
            db,
            rounds: Vec::new(),
            row_tests: None,
            iterations,
            work,
            from_inputs_only: true,
            seminaive: false,
            threads,
        }
    }
}

/// Builds, over the facts now in `db`, every index on an input relation that the
/// semi-naive evaluation of `plan` will probe. [`evaluate`] builds what is missing itself;
/// calling this first, when the input facts are loaded, moves that O(|input|) work out of
/// the query: a magic point query then derives and reads only its own part of the data,
/// however large the rest. Indexes of later rows are extended when a join first needs them.
pub fn index_inputs(plan: &ProgramPlan, program: &Program, db: &mut Database) {
    let compiled = seminaive::Compiled::new(plan, program, db);
    for (p, rows) in db.rows.iter_mut().enumerate() {
        if !compiled.derived[p] {
            rows.sync_all_indexes();
        }
    }
}

/// Evaluates `plan` (made from `program`) to a fixpoint over the facts in `edb`.
/// Rules that fail `ir::validate` are never fired.
///
/// # Panics
/// When a relation outgrows its limit or the memory; [`try_evaluate`] reports that.
pub fn evaluate(plan: &ProgramPlan, program: &Program, edb: Database, options: EvalOptions) -> Evaluation {
    try_evaluate(plan, program, edb, options).unwrap_or_else(|e| panic!("evaluation stopped: {e}"))
}

/// [`evaluate`], ending with a [`ResourceError`] when a relation would grow past its
/// limit ([`Database::set_tuple_limit`]), the relations reach the memory budget
/// ([`Database::set_memory_budget`]), or the memory for a relation cannot be allocated.
pub fn try_evaluate(
    plan: &ProgramPlan,
    program: &Program,
    mut edb: Database,
    options: EvalOptions,
) -> Result<Evaluation, ResourceError> {
    let mut run = seminaive::Run::new(options.record_rounds, options.progress);
    run.threads = options.threads;
    run.limit_sizes = true;
    let from_inputs_only = plan.rules.iter().all(|r| !r.fires() || edb.len(r.head) == 0);
    let row_tests = match options.engine {
        NativeEngine::Reference => {
            let limits: Vec<Option<u64>> = program.preds.iter().map(|p| p.size_limit.map(|l| l.tuples)).collect();
            let choices = choice::ChoiceKeys::new(program);
            let dominances = dominance::Dominances::new(program);
            reference::evaluate(plan, &program.consts, &dominances, &limits, &choices, &mut edb, &mut run)?;
            Some(run.stats.row_tests)
        }
        NativeEngine::Seminaive => {
            let compiled = seminaive::Compiled::new(plan, program, &mut edb);
            let start = vec![0; edb.relation_count()];
            seminaive::propagate(&compiled, &mut edb, &start, true, &mut run)?;
            None
        }
    };
    Ok(Evaluation {
        rounds: run.rounds,
        row_tests,
        iterations: run.iterations,
        work: run.stats.firings,
        db: edb,
        from_inputs_only,
        seminaive: options.engine == NativeEngine::Seminaive,
        threads: options.threads,
    })
}

#[cfg(test)]
mod tests;
