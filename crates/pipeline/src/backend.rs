//! The seam between the pipeline and the engines. An [`Engine`] evaluates a plan over a
//! database of input facts and keeps what it evaluated as a [`Backend`]: the one trait
//! the stages after evaluation go through to apply a batch (an [`Update`], made net by
//! [`crate::net_update`]), to read a relation's rows ([`SelectedRows`]) and to learn what the
//! batch changed ([`Change`], with what it was [`MaintainedBy`]). Its facts and batches
//! are `ir`'s, which belong to neither engine; the native engine (`exec`, DRed) and the
//! differential dataflow (`flow`) each translate their reports to a [`Change`].

use crate::select::SelectedRows;
use diag::{Code, Diagnostic};
use exec::{Database, EvalOptions, Evaluation, Maintained, Maintenance, ResourceError, Threads, UpdateReport};
use ir::{FactsByPred, PredId, Program, Query, Tally, Tuple, Update};
use plan::ProgramPlan;
use std::sync::{Arc, Mutex, PoisonError};

/// Why an evaluation or a batch stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// A relation outgrew its limit (the tuple limit, a demand cap), the memory budget or
    /// the memory.
    Resource(ResourceError),
    /// The cluster could not be used, or a peer process went away.
    Cluster(String),
    /// The dataflow refused the program or one of its workers stopped.
    Dataflow(String),
    /// The program evaluated for its answers has no query.
    NoQuery,
}

impl From<ResourceError> for Error {
    fn from(e: ResourceError) -> Self {
        Error::Resource(e)
    }
}

impl Error {
    /// The error as a diagnostic, with `program`'s names ([`crate::resource_diagnostic`]
    /// for a resource limit).
    pub fn to_diagnostic(&self, program: &Program) -> Diagnostic {
        match self {
            Error::Resource(e) => crate::resource_diagnostic(program, e),
            Error::Cluster(reason) => cluster_stopped(reason),
            Error::Dataflow(reason) => Diagnostic::error(
                Code::DIFFERENTIAL_UNSUPPORTED,
                format!("internal error: the differential dataflow stopped: {reason}"),
            ),
            Error::NoQuery => Diagnostic::error(Code::NO_QUERY, "the program has no query"),
        }
    }
}

/// The report of a cluster that stopped because a peer went away.
pub fn cluster_stopped(reason: &str) -> Diagnostic {
    Diagnostic::error(Code::CLUSTER, format!("the cluster stopped: {reason}"))
        .with_help("every process of the cluster ends with this error; the lost one's own output says why it went away")
}

/// This process's connection to a cluster of processes running one dataflow, opened by
/// the caller before anything is evaluated and taken by the one differential evaluation
/// a cluster makes.
#[derive(Clone, Debug, Default)]
pub struct ClusterLink(Arc<Mutex<Link>>);

/// What a [`ClusterLink`] holds.
#[derive(Debug, Default)]
struct Link {
    connection: Option<flow::Connection>,
    /// Whether each process keeps only its part of the result.
    partitioned: bool,
    /// With partitioned results: every relation's size over all processes, by
    /// relation index, as the latest epoch left it.
    sizes: Option<Vec<usize>>,
}

impl ClusterLink {
    /// A link holding an open connection, over which every process receives the whole
    /// result.
    pub fn new(connection: flow::Connection) -> Self {
        ClusterLink(Arc::new(Mutex::new(Link { connection: Some(connection), ..Link::default() })))
    }

    /// A link holding an open connection, over which each process keeps only the rows
    /// its workers hold ([`flow::Connection::partition_results`]): the stages after
    /// evaluation read this process's part of every relation, and the size of each
    /// relation over all processes from [`ClusterLink::sizes`].
    pub fn partitioned(connection: flow::Connection) -> Self {
        let link = Link { connection: Some(connection.partition_results()), partitioned: true, sizes: None };
        ClusterLink(Arc::new(Mutex::new(link)))
    }

    /// With partitioned results, once evaluated: the size of every relation (by index)
    /// over all processes, after the latest batch.
    pub fn sizes(&self) -> Option<Vec<usize>> {
        self.lock().sizes.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Link> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn take(&self) -> Option<(flow::Connection, bool)> {
        let mut link = self.lock();
        let partitioned = link.partitioned;
        link.connection.take().map(|connection| (connection, partitioned))
    }

    /// Adds up this process's sizes of every relation of `rows` over the processes and
    /// keeps the totals for [`ClusterLink::sizes`]; `parts` come first in the same sum
    /// (other counts to add up) and are returned added up.
    fn sum_sizes(&self, flow: &mut flow::Flow, rows: &Database, mut parts: Vec<usize>) -> Result<Vec<usize>, Error> {
        let first = parts.len();
        parts.extend((0..rows.relation_count() as u32).map(|p| rows.len(PredId(p))));
        let mut sums = flow.sum_over_processes(&parts).map_err(|e| flow_error(e, None))?;
        self.lock().sizes = Some(sums.split_off(first));
        Ok(sums)
    }
}

/// Which engine evaluates and maintains programs.
#[derive(Clone, Debug)]
pub enum Engine {
    /// dlc's own engines (`exec`): semi-naive or the reference engine, DRed updates.
    Native(exec::NativeEngine),
    /// The program as one differential dataflow (`flow`) on this many worker threads,
    /// alone or with the processes of `cluster`.
    Differential {
        /// Worker threads in this process.
        workers: usize,
        /// The connection to the other processes, for a run that spans several.
        cluster: Option<ClusterLink>,
    },
}

impl Engine {
    /// The semi-naive engine, which checks recompute with.
    pub const SEMINAIVE: Engine = Engine::Native(exec::NativeEngine::Seminaive);

    /// Evaluates `plan` (of `program`) over the input facts in `edb`; the differential
    /// engine also hands back its running dataflow, which [`maintain`] goes on with.
    pub fn evaluate(
        &self,
        plan: &ProgramPlan,
        program: &Program,
        edb: Database,
        record_rounds: bool,
        progress: Option<Box<dyn FnMut(exec::Progress)>>,
        threads: Threads,
    ) -> Result<(Evaluation, Option<RunningDataflow>), Error> {
        let (workers, cluster) = match self {
            Engine::Native(engine) => {
                let options = EvalOptions { engine: *engine, record_rounds, progress, threads };
                return Ok((exec::try_evaluate(plan, program, edb, options)?, None));
            }
            Engine::Differential { workers, cluster } => (*workers, cluster.as_ref()),
        };
        let (connection, partitioned) = match cluster {
            Some(link) => {
                let taken = link.take();
                let (connection, partitioned) =
                    taken.ok_or_else(|| Error::Cluster("the run evaluated twice; a cluster connects once".into()))?;
                (Some(connection), partitioned)
            }
            None => (None, false),
        };
        let placed = connection.is_some();
        // In a cluster each process gives the dataflow what it read (its share, or the
        // whole input), and set semantics are kept at each row's owner.
        let options = flow::Options { workers, cluster: connection };
        let started = match placed {
            true => flow::Flow::start_placed(plan, program, options),
            false => flow::Flow::start(plan, program, options),
        };
        let mut flow = started.map_err(|e| flow_error(e, Some(program)))?;
        let mut db = edb;
        let inputs = (0..db.relation_count() as u32).map(PredId);
        let rows = inputs.flat_map(|p| db.tuples(p).map(move |t| (p, t)));
        let applied = match placed {
            true => flow.request([], rows, true),
            false => flow.apply([], rows),
        }
        .map_err(|e| flow_error(e, Some(program)))?;
        if partitioned {
            // The input rows this process keeps are those its workers own, as for the
            // derived ones: not the share it read.
            for p in (0..db.relation_count() as u32).map(PredId) {
                let read: Vec<Vec<u32>> = db.tuples(p).map(<[u32]>::to_vec).collect();
                for tuple in read {
                    db.remove(p, &tuple);
                }
            }
            for (pred, row) in &applied.inserted {
                db.insert(*pred, row.values());
            }
        }
        for (pred, tuples) in &applied.derived_added {
            for t in tuples.iter() {
                db.insert(*pred, t);
            }
        }
        // The dataflow's result is measured against the budget once it is whole.
        db.measure_memory();
        if let Some(e) = db.failure() {
            return Err(e.into());
        }
        let link = cluster.filter(|_| partitioned).cloned();
        if let Some(link) = &link {
            link.sum_sizes(&mut flow, &db, Vec::new())?;
        }
        let eval = Evaluation::computed_elsewhere(db, 1, 0, Threads::new(workers));
        Ok((eval, Some(RunningDataflow { flow, partitioned: link })))
    }

    /// In a cluster whose results are partitioned ([`ClusterLink::partitioned`]), once
    /// evaluated: the size of every relation (by index) over all processes.
    pub fn gathered_sizes(&self) -> Option<Vec<usize>> {
        match self {
            Engine::Differential { cluster: Some(link), .. } => link.sizes(),
            _ => None,
        }
    }

    /// Whether the run spans several processes: choices made from local data (the caps
    /// of `--magic auto`) must then be made from the program alone.
    pub fn is_cluster(&self) -> bool {
        matches!(self, Engine::Differential { cluster: Some(_), .. })
    }

    /// Why this engine cannot evaluate `program`, if it cannot: the pipeline reports it
    /// before evaluating anything.
    pub fn unsupported(&self, program: &Program) -> Option<Diagnostic> {
        if !matches!(self, Engine::Differential { .. }) {
            return None;
        }
        let makes_texts = |r: &&ir::Rule| r.comparisons.iter().any(|c| c.left.makes_texts() || c.right.makes_texts());
        if let Some(rule) = program.rules.iter().find(makes_texts).filter(|_| self.is_cluster()) {
            // Each process would number the texts it makes in its own order.
            return Some(
                Diagnostic::error(
                    Code::DIFFERENTIAL_UNSUPPORTED,
                    "a rule that makes texts (`cat`, `substr`, `to_string`, a declared functor of a `symbol` result) does not run in a cluster",
                )
                .with_primary(rule.span, "makes texts")
                .with_note("the processes of a cluster agree on the texts they read, not on texts made as rules run"),
            );
        }
        let error = flow::check(&plan::plan_program(program), program).err()?;
        let d = Diagnostic::error(Code::DIFFERENTIAL_UNSUPPORTED, error.message(program));
        Some(match error {
            flow::Error::TooWide { pred: Some(p), .. } => d.with_primary(program.pred(p).span, "first used here"),
            flow::Error::TooWide { rule: Some(r), .. } => d.with_primary(program.rule(r).span, "in this rule"),
            flow::Error::Choice { pred } => match &program.pred(pred).choice {
                Some(choice) => d.with_primary(choice.span, "chosen here").with_help(
                    "evaluate the program with the semi-naive or the reference engine (`--engine seminaive`)",
                ),
                None => d,
            },
            flow::Error::DominanceBody { span, .. } => d
                .with_primary(span, "reads relations in its body")
                .with_help("evaluate the program with the native engine (`--engine seminaive`), which runs it"),
            flow::Error::Subsumption { span, lattice, .. } => d
                .with_primary(span, if lattice { "a recursive aggregate" } else { "a subsumptive clause" })
                .with_help("evaluate the program with the native engine (`--engine seminaive`), which runs it"),
            _ => d,
        })
    }
}

/// The dataflow's error as the pipeline's, with `program`'s names where known.
fn flow_error(e: flow::Error, program: Option<&Program>) -> Error {
    match (e, program) {
        (flow::Error::Cluster(reason), _) => Error::Cluster(reason),
        // The native engines' E0047, from the dataflow's iterations.
        (flow::Error::ImprovingCycle { pred, rounds }, _) => {
            Error::Resource(ResourceError { pred, kind: exec::ResourceKind::ImprovingCycle { rounds } })
        }
        (other, Some(program)) => Error::Dataflow(other.message(program)),
        (other, None) => Error::Dataflow(format!("{other:?}")),
    }
}

/// The running dataflow of a differential evaluation.
pub struct RunningDataflow {
    flow: flow::Flow,
    /// With partitioned results, the link that keeps the sizes over all processes.
    partitioned: Option<ClusterLink>,
}

/// How a batch's report lists facts: each phase's facts when they are at most `up_to`
/// (always, with `None`), else counts; the net change's facts are left out when `net`
/// is false and a limit is given ([`Change::removed`] and [`Change::added`] are then
/// empty, and [`Change::net_count`] still counts them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Listing {
    /// The most facts a listed report holds; `None` lists every fact.
    pub up_to: Option<usize>,
    /// Whether the net change is listed too.
    pub net: bool,
}

/// What a DRed-style maintenance did, phase by phase. Fact lists are sorted by
/// predicate, then tuple, and made only when [`Change::listed`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Phases {
    /// Over-deleted facts by wave: wave 1 those with a derivation through a deleted
    /// input fact, wave `k + 1` those with one through a fact of wave `k`.
    pub overdeleted_waves: Vec<Vec<Tuple>>,
    /// Every over-deleted fact, per predicate.
    pub overdeleted: Vec<(PredId, Vec<Vec<u32>>)>,
    /// Over-deleted facts that still had a derivation and were put back.
    pub rederived: Vec<(PredId, Vec<Vec<u32>>)>,
    /// Facts of the insertion phase.
    pub inserted: Vec<(PredId, Vec<Vec<u32>>)>,
    /// Per relation any phase touched, the sizes of its lists (always set).
    pub tallies: Vec<(PredId, Tally)>,
    /// Per aggregate whose rows changed, the number of its groups recomputed.
    pub groups: Vec<(PredId, usize)>,
    /// The number of over-deletion waves that removed a fact.
    pub waves: usize,
    /// Why the maintenance chose this strategy (what `Maintenance::Auto` saw).
    pub reason: String,
}

/// What maintained one batch, as any backend reports it: the native engine's
/// [`exec::MaintainedBy`] with the phases it went through, or the dataflow, which
/// knows only the net change. (The strategy a user asks for is [`exec::Maintenance`].)
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MaintainedBy {
    /// Delete and rederive.
    Dred(Phases),
    /// DRed over-deleting only facts whose every derivation from earlier facts went.
    Ranked(Phases),
    /// Evaluated from scratch over the new input (the phases are its difference).
    Recomputed(Phases),
    /// The dataflow applied the batch as one epoch of changes: only the net change is
    /// known.
    Dataflow,
}

impl MaintainedBy {
    /// The strategy's name, as reports give it.
    pub fn name(&self) -> &'static str {
        match self {
            MaintainedBy::Dred(_) => "dred",
            MaintainedBy::Ranked(_) => "ranked",
            MaintainedBy::Recomputed(_) => "recompute",
            MaintainedBy::Dataflow => "differential",
        }
    }

    /// The phases of a DRed-style maintenance; none for the dataflow.
    pub fn phases(&self) -> Option<&Phases> {
        match self {
            MaintainedBy::Dred(p) | MaintainedBy::Ranked(p) | MaintainedBy::Recomputed(p) => Some(p),
            MaintainedBy::Dataflow => None,
        }
    }
}

/// What one batch changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// How the batch was maintained.
    pub how: MaintainedBy,
    /// The net change of the derived relations: facts they held before and not after.
    pub removed: FactsByPred,
    /// Facts the derived relations hold after and not before.
    pub added: FactsByPred,
    /// Input facts the batch inserted and deleted.
    pub inputs_inserted: Vec<Tuple>,
    /// Input facts the batch deleted.
    pub inputs_deleted: Vec<Tuple>,
    /// Requested changes that changed nothing: inserts of present facts, deletes of
    /// absent ones, changes of derived relations.
    pub noop_inserts: Vec<Tuple>,
    /// Requested deletes that changed nothing.
    pub noop_deletes: Vec<Tuple>,
    /// Whether the fact lists were made (see [`Listing`]).
    pub listed: bool,
    /// In a cluster whose results are partitioned, the sizes of the net change of every
    /// relation the batch changed, added up over the processes (removed facts as
    /// over-deleted, added ones as inserted): the fact lists are then this process's
    /// part of the change.
    pub gathered: Option<Vec<(PredId, Tally)>>,
    /// Rule firings, comparable to an evaluation's work (0 for the dataflow).
    pub work: u64,
}

impl Change {
    /// The sizes of the net change of `pred`: (facts removed, facts added).
    pub fn net_count(&self, pred: PredId) -> (usize, usize) {
        if let Some(tallies) = self.how.phases().map(|p| &p.tallies).or(self.gathered.as_ref()) {
            return Tally::net_of(tallies, pred);
        }
        let len = |facts: &FactsByPred| facts.iter().filter(|(p, _)| *p == pred).map(|(_, ts)| ts.len()).sum();
        (len(&self.removed), len(&self.added))
    }

    /// The native engine's report as the pipeline's.
    fn of_report(report: UpdateReport) -> Change {
        let phases = Phases {
            overdeleted_waves: report.overdeleted_waves,
            overdeleted: report.overdeleted,
            rederived: report.rederived,
            inserted: report.inserted,
            tallies: report.tallies,
            groups: report.groups,
            waves: report.waves,
            reason: report.reason,
        };
        Change {
            how: match report.strategy {
                exec::MaintainedBy::Dred => MaintainedBy::Dred(phases),
                exec::MaintainedBy::Ranked => MaintainedBy::Ranked(phases),
                exec::MaintainedBy::Recompute => MaintainedBy::Recomputed(phases),
            },
            removed: report.removed,
            added: report.added,
            inputs_inserted: report.edb_inserted,
            inputs_deleted: report.edb_deleted,
            noop_inserts: report.noop_inserts,
            noop_deletes: report.noop_deletes,
            listed: report.listed,
            gathered: None,
            work: report.work,
        }
    }
}

/// A program's evaluated relations, kept up to date batch by batch: the seam every
/// stage after evaluation goes through.
pub trait Backend {
    /// Applies one batch of input changes and says what it changed.
    fn apply(&mut self, batch: &Update, listing: Listing) -> Result<Change, Error>;
    /// Every row of relation `pred`, as the batches so far left it.
    fn rows(&self, pred: PredId) -> SelectedRows<'_>;
    /// The rows of `query`'s relation that are its answers.
    fn answers<'a>(&'a self, query: &'a Query) -> SelectedRows<'a>;
    /// The number of rows of `pred`.
    fn len(&self, pred: PredId) -> usize;
    /// Whether relation `pred` has no rows.
    fn is_empty(&self, pred: PredId) -> bool {
        self.len(pred) == 0
    }
    /// The threads a recomputation (a check) may use.
    fn threads(&self) -> Threads;
    /// The native engine's database, which proofs read (the order in which facts were
    /// derived); `None` for an engine that keeps no such order.
    fn proofs(&self) -> Option<&Database>;
}

impl Backend for Maintained {
    fn apply(&mut self, batch: &Update, listing: Listing) -> Result<Change, Error> {
        let report = match (listing.up_to, listing.net) {
            (Some(most), true) => self.try_apply_listing(batch, most),
            (Some(most), false) => self.try_apply_summarizing(batch, most),
            (None, _) => self.try_apply(batch),
        }?;
        Ok(Change::of_report(report))
    }

    fn rows(&self, pred: PredId) -> SelectedRows<'_> {
        SelectedRows::relation(self.db(), pred)
    }

    fn answers<'a>(&'a self, query: &'a Query) -> SelectedRows<'a> {
        SelectedRows::of_query(self.db(), query)
    }

    fn len(&self, pred: PredId) -> usize {
        self.db().len(pred)
    }

    fn threads(&self) -> Threads {
        Maintained::threads(self)
    }

    fn proofs(&self) -> Option<&Database> {
        Some(self.db())
    }
}

/// Keeps an evaluation for updates: the differential dataflow that made it, or DRed
/// (`maintenance`) over the native engine's database.
pub fn maintain(
    plan: ProgramPlan,
    program: &Program,
    eval: Evaluation,
    live: Option<RunningDataflow>,
    maintenance: Maintenance,
) -> Result<Box<dyn Backend>, Error> {
    Ok(match live {
        Some(RunningDataflow { flow, partitioned }) => {
            Box::new(Differential { threads: Threads::new(flow.workers()), flow, rows: eval.db, partitioned })
        }
        None => Box::new(Maintained::try_from_evaluation(plan, program, eval, maintenance)?),
    })
}

/// The differential engine's state: the dataflow, and the rows it reported, kept in a
/// database for the stages to read (the dataflow's own arrangements are not readable
/// from outside its workers).
struct Differential {
    flow: flow::Flow,
    rows: Database,
    threads: Threads,
    /// With partitioned results, the link that keeps the sizes over all processes:
    /// `rows` then holds this process's part of every relation.
    partitioned: Option<ClusterLink>,
}

impl Backend for Differential {
    fn apply(&mut self, batch: &Update, listing: Listing) -> Result<Change, Error> {
        let deletes = batch.deletes.iter().map(|(p, t)| (*p, t.as_slice()));
        let inserts = batch.inserts.iter().map(|(p, t)| (*p, t.as_slice()));
        let stopped = |e: flow::Error| flow_error(e, None);
        if !self.flow.placed() {
            let applied = self.flow.apply(deletes, inserts).map_err(stopped)?;
            mirror(&mut self.rows, &applied);
            return self.change(applied, listing);
        }
        // In a cluster every process reads the whole batch and injects the requests it
        // owns; the owners report the input changes they made. This process's input
        // relations (its share, or whole) take the batch as it is, deletes first.
        let applied = self.flow.request(deletes, inserts, false).map_err(stopped)?;
        if self.partitioned.is_some() {
            return self.apply_partitioned(applied, listing);
        }
        // Changes the dataflow refused (of derived relations, of another arity) are not
        // input changes here either.
        let refused = |noops: &[Tuple], pred: PredId, tuple: &[u32]| {
            noops.iter().any(|(p, t)| *p == pred && t.as_slice() == tuple)
        };
        for (pred, tuple) in &batch.deletes {
            if !refused(&applied.noop_deletes, *pred, tuple) {
                self.rows.remove(*pred, tuple);
            }
        }
        for (pred, tuple) in &batch.inserts {
            if !refused(&applied.noop_inserts, *pred, tuple) {
                self.rows.insert(*pred, tuple);
            }
        }
        for (pred, tuples) in &applied.derived_removed {
            for t in tuples.iter() {
                self.rows.remove(*pred, t);
            }
        }
        for (pred, tuples) in &applied.derived_added {
            for t in tuples.iter() {
                self.rows.insert(*pred, t);
            }
        }
        self.change(applied, listing)
    }

    fn rows(&self, pred: PredId) -> SelectedRows<'_> {
        SelectedRows::relation(&self.rows, pred)
    }

    fn answers<'a>(&'a self, query: &'a Query) -> SelectedRows<'a> {
        SelectedRows::of_query(&self.rows, query)
    }

    fn len(&self, pred: PredId) -> usize {
        self.rows.len(pred)
    }

    fn threads(&self) -> Threads {
        self.threads
    }

    fn proofs(&self) -> Option<&Database> {
        None
    }
}

impl Differential {
    /// A batch applied with partitioned results: this process's rows take the changes
    /// of the rows its workers own, input and derived alike, and the sizes of the net
    /// change and of every relation are added up over the processes.
    fn apply_partitioned(&mut self, applied: flow::Applied, listing: Listing) -> Result<Change, Error> {
        mirror(&mut self.rows, &applied);
        let relations = self.rows.relation_count();
        let mut parts = vec![0; 2 * relations];
        for (pred, tuples) in &applied.derived_removed {
            parts[2 * pred.index()] += tuples.len();
        }
        for (pred, tuples) in &applied.derived_added {
            parts[2 * pred.index() + 1] += tuples.len();
        }
        let link = self.partitioned.clone().ok_or(Error::Dataflow("the results are not partitioned".into()))?;
        let sums = link.sum_sizes(&mut self.flow, &self.rows, parts)?;
        let gathered = (0..relations)
            .filter(|&p| sums[2 * p] + sums[2 * p + 1] > 0)
            .map(|p| {
                let tally = Tally { overdeleted: sums[2 * p], inserted: sums[2 * p + 1], ..Tally::default() };
                (PredId(p as u32), tally)
            })
            .collect();
        let mut change = self.change(applied, listing)?;
        change.gathered = Some(gathered);
        Ok(change)
    }

    /// What a batch the dataflow applied changed: its net change, listed when it holds
    /// at most `listing.up_to` facts.
    fn change(&self, applied: flow::Applied, listing: Listing) -> Result<Change, Error> {
        if let Some(e) = self.rows.failure() {
            return Err(e.into());
        }
        let input_rows = |rows: &[(PredId, flow::Row)]| rows.iter().map(|(p, r)| (*p, r.values().to_vec())).collect();
        let count = |facts: &FactsByPred| facts.iter().map(|(_, t)| t.len()).sum::<usize>();
        let touched = count(&applied.derived_removed) + count(&applied.derived_added);
        Ok(Change {
            how: MaintainedBy::Dataflow,
            removed: applied.derived_removed,
            added: applied.derived_added,
            inputs_inserted: input_rows(&applied.inserted),
            inputs_deleted: input_rows(&applied.deleted),
            noop_inserts: applied.noop_inserts,
            noop_deletes: applied.noop_deletes,
            listed: listing.up_to.is_none_or(|most| touched <= most),
            gathered: None,
            work: 0,
        })
    }
}

/// Makes `rows` take what the dataflow `applied`: input deletions and the derived rows it
/// removed, then input insertions and the derived rows it added.
fn mirror(rows: &mut Database, applied: &flow::Applied) {
    for (pred, row) in &applied.deleted {
        rows.remove(*pred, row.values());
    }
    for (pred, tuples) in &applied.derived_removed {
        for t in tuples.iter() {
            rows.remove(*pred, t);
        }
    }
    for (pred, row) in &applied.inserted {
        rows.insert(*pred, row.values());
    }
    for (pred, tuples) in &applied.derived_added {
        for t in tuples.iter() {
            rows.insert(*pred, t);
        }
    }
}
