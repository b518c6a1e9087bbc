//! The maintain stage: one program's evaluation kept up to date over a sequence of
//! batches through its [`Backend`], with what each batch changed and, when asked, a
//! check against an evaluation from scratch ([`recompute`]).

use crate::backend::{maintain, Backend, Change, Error, Listing};
use crate::evaluate::{edb_database, evaluation_plan, relation_sizes, Evaluated};
use crate::input_facts::InputFacts;
use crate::Engine;
use exec::{Maintenance, Threads};
use ir::{PredId, Program, Query, Tuple, Tuples, Update};
use plan::ProgramPlan;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// A batch report lists its facts one by one up to this many (over-deleted, rederived,
/// inserted facts and answers added or removed together); a larger one gives counts per
/// relation instead, unless the full lists are asked for. Deleting one edge of a large
/// graph can otherwise print hundreds of megabytes.
pub const FULL_REPORT_MAX_FACTS: usize = 1000;

/// The answer of one update batch, with the before/after difference of the query's answers.
#[derive(Debug)]
pub struct BatchOutcome {
    /// What the batch changed, and how it was maintained.
    pub change: Change,
    /// The strategy asked for.
    pub maintenance: Maintenance,
    /// Tuples the batch added, sorted.
    pub answers_added: Tuples,
    /// Tuples the batch removed, sorted.
    pub answers_removed: Tuples,
    /// How long the batch took.
    pub elapsed: Duration,
    /// The work a from-scratch evaluation of the new input does (when it was measured).
    pub recompute_work: Option<u64>,
    /// Relations whose incremental state differs from recomputation (when checked).
    pub mismatches: Vec<PredId>,
    /// Sizes of the derived relations after the batch.
    pub sizes: Vec<(PredId, usize)>,
}

/// What a recomputation from scratch found.
#[derive(Debug)]
pub struct Recomputed {
    /// The work of the evaluation.
    pub work: u64,
    /// The compared relations whose rows differ from the maintained state's.
    pub differing: Vec<PredId>,
}

/// Evaluates `plan` of `program` from scratch over `facts` with the semi-naive engine
/// on `threads`, and (with `compared`) lists the relations it admits whose rows differ
/// from `state`'s: the one check of a maintained state.
pub fn recompute(
    program: &Program,
    plan: &ProgramPlan,
    facts: &InputFacts,
    state: &dyn Backend,
    limits: exec::Limits,
    compared: Option<&dyn Fn(PredId) -> bool>,
) -> Result<Recomputed, Error> {
    let edb = edb_database(program, facts, limits);
    let (fresh, _) = Engine::SEMINAIVE.evaluate(plan, program, edb, false, None, state.threads())?;
    let differing = match compared {
        Some(compared) => program
            .pred_ids()
            .filter(|&p| compared(p))
            .filter(|&p| crate::SelectedRows::relation(&fresh.db, p).collect() != state.rows(p).collect())
            .collect(),
        None => Vec::new(),
    };
    Ok(Recomputed { work: fresh.work, differing })
}

/// The facts of `changed` (a net change per relation) that are answers of `query`, in
/// order: a batch's change of the answers, found without a copy of the answers before
/// and after it.
fn selected_answers(query: &Query, changed: &[(PredId, Tuples)]) -> Tuples {
    let arity = query.atom.args.len();
    let (mut values, mut len) = (Vec::new(), 0);
    for (_, tuples) in changed.iter().filter(|(p, _)| *p == query.atom.pred) {
        for t in tuples.iter().filter(|t| t.len() == arity && query.matches(t)) {
            values.extend_from_slice(t);
            len += 1;
        }
    }
    // A subset of one relation's sorted change.
    Tuples::from_sorted(arity, len, values)
}

/// The input relations of `program` in `state`, as facts: the input as the batches so
/// far left it.
pub fn maintained_inputs(program: &Program, state: &dyn Backend) -> InputFacts {
    let mut facts = InputFacts::default();
    for pred in program.pred_ids().filter(|&p| program.pred(p).kind == ir::PredKind::Edb) {
        let _ = state.rows(pred).for_each(|tuple| {
            facts.push(pred, tuple.iter().copied());
            Ok::<(), std::convert::Infallible>(())
        });
    }
    facts
}

/// Keeps one program's materialisation up to date over a sequence of batches.
pub struct Maintainer {
    /// The maintained program; it owns its interners so that updates can mention new constants.
    pub program: Program,
    /// The maintained program's query.
    pub query: Query,
    /// The relations, through the engine's seam.
    pub state: Box<dyn Backend>,
    maintenance: Maintenance,
    /// The input as the batches left it, kept apart from the maintained state: an
    /// independent record for checks and for the recomputation a trace reports. Only
    /// kept when asked for, since it costs an allocation per fact; otherwise the input
    /// relations of the maintained state are the input.
    record: Option<BTreeSet<Tuple>>,
    /// The limits of the recomputations [`Maintainer::apply`] makes.
    limits: exec::Limits,
    /// Whether every relation is maintained, not only those the query depends on
    /// ([`evaluation_plan`]).
    whole: bool,
    /// A batch's report lists its facts when it touches at most this many
    /// ([`FULL_REPORT_MAX_FACTS`] unless set to `None`: always).
    pub list_up_to: Option<usize>,
}

impl std::fmt::Debug for Maintainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Maintainer").field("query", &self.query).field("maintenance", &self.maintenance).finish()
    }
}

/// How a [`Maintainer`] keeps its program up to date.
#[derive(Clone, Copy, Debug)]
pub struct Maintaining {
    /// Every relation ([`evaluation_plan`]), not only those the query reads.
    pub whole: bool,
    /// How the native engine maintains batches.
    pub maintenance: Maintenance,
    /// Whether the input is also recorded apart ([`Maintainer::apply`] can then
    /// recompute from it).
    pub keep_record: bool,
    /// The memory budget of the relations and the most tuples one may hold.
    pub limits: exec::Limits,
}

impl Maintainer {
    /// Keeps `run`, an evaluation of `program` over `facts`, for updates.
    pub fn from_evaluation(
        program: Program,
        run: Evaluated,
        facts: &InputFacts,
        how: Maintaining,
    ) -> Result<Self, Error> {
        let plan = evaluation_plan(&program, how.whole);
        let query = run.query().clone();
        let state = maintain(plan, &program, run.eval, run.live, how.maintenance)?;
        let record = how.keep_record.then(|| facts.iter().map(|(pred, tuple)| (pred, tuple.to_vec())).collect());
        Ok(Maintainer {
            program,
            query,
            state,
            maintenance: how.maintenance,
            record,
            limits: how.limits,
            whole: how.whole,
            list_up_to: Some(FULL_REPORT_MAX_FACTS),
        })
    }

    /// The current input facts: the record if kept, else the maintained input relations.
    pub fn input_facts(&self) -> InputFacts {
        match &self.record {
            Some(record) => record.iter().collect(),
            None => maintained_inputs(&self.program, &*self.state),
        }
    }

    /// The threads the maintained state's recomputations use.
    pub fn threads(&self) -> Threads {
        self.state.threads()
    }

    /// Applies one batch; with `recompute`, also evaluates the new input from scratch to
    /// measure its work and (with `check`) to compare every relation. Both need the record
    /// (`keep_record`); without it they are skipped.
    pub fn apply(&mut self, update: &Update, recompute: bool, check: bool) -> Result<BatchOutcome, Error> {
        let start = Instant::now();
        let change = self.state.apply(update, Listing { up_to: self.list_up_to, net: true })?;
        let elapsed = start.elapsed();
        if let Some(record) = &mut self.record {
            for t in &update.deletes {
                record.remove(t);
            }
            for t in &update.inserts {
                record.insert(t.clone());
            }
        }
        let (mut recompute_work, mut mismatches) = (None, Vec::new());
        if (recompute || check) && self.record.is_some() {
            let facts = self.input_facts();
            let plan = evaluation_plan(&self.program, self.whole);
            let every = |_: PredId| true;
            let compared: Option<&dyn Fn(PredId) -> bool> = if check { Some(&every) } else { None };
            let fresh = crate::maintain::recompute(&self.program, &plan, &facts, &*self.state, self.limits, compared)?;
            recompute_work = Some(fresh.work);
            mismatches = fresh.differing;
        }
        let state = &*self.state;
        Ok(BatchOutcome {
            answers_added: selected_answers(&self.query, &change.added),
            answers_removed: selected_answers(&self.query, &change.removed),
            change,
            maintenance: self.maintenance,
            elapsed,
            recompute_work,
            mismatches,
            sizes: relation_sizes(&self.program, |p| state.len(p)),
        })
    }

    /// The current answers of the maintained query, sorted.
    pub fn answers(&self) -> Tuples {
        self.state.answers(&self.query).collect()
    }
}
