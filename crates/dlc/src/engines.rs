//! The seam between the pipeline and the engines: the pipeline asks an [`Engine`] to
//! evaluate a plan over a database of input facts, and to keep what it evaluated for
//! update batches ([`maintain`], a [`Materialized`] state). Whatever the engine, what the
//! pipeline reads back is an `exec::Database` holding the input and every derived fact,
//! so the writers, reports and `--check` have one path; engine-specific knobs (threads of
//! the native joins, differential workers) live in the engine value.

use crate::cli::{EngineArg, RunArgs};
use diag::{Code, Diagnostic};
use exec::{Database, EvalOptions, Evaluation, Maintained, Maintenance, ResourceError, Threads, Update, UpdateReport};
use ir::{PredId, Program};
use plan::ProgramPlan;

/// Which engine evaluates and maintains programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// dlc's own engines (`exec`): semi-naive or the reference engine, DRed updates.
    Native(exec::Engine),
    /// The program as one differential dataflow (`flow`) on this many worker threads.
    Differential { workers: usize },
}

impl Engine {
    /// The semi-naive engine, which `--check` recomputes with.
    pub const SEMINAIVE: Engine = Engine::Native(exec::Engine::Seminaive);

    /// Evaluates `plan` (of `program`) over the input facts in `edb`; the differential
    /// engine also hands back its running dataflow, which [`maintain`] goes on with.
    pub fn evaluate(
        self,
        plan: &ProgramPlan,
        program: &Program,
        edb: Database,
        record_rounds: bool,
        progress: Option<Box<dyn FnMut(exec::Progress)>>,
        threads: Threads,
    ) -> Result<(Evaluation, Option<Live>), ResourceError> {
        let workers = match self {
            Engine::Native(engine) => {
                let options = EvalOptions { engine, record_rounds, progress, threads };
                return exec::try_evaluate(plan, program, edb, options).map(|eval| (eval, None));
            }
            Engine::Differential { workers } => workers,
        };
        let mut flow = match flow::Flow::start(plan, program, flow::Options { workers, cluster: None }) {
            Ok(flow) => flow,
            // `unsupported` refused such programs before the pipeline evaluated anything.
            Err(e) => panic!("internal error: {}", e.message(program)),
        };
        let mut db = edb;
        let inputs = (0..db.relation_count() as u32).map(PredId);
        let applied = flow.apply([], inputs.flat_map(|p| db.tuples(p).map(move |t| (p, t)))).unwrap_or_else(stopped);
        for (pred, row) in &applied.derived_added {
            db.insert(*pred, row.values());
        }
        if let Some(e) = db.failure() {
            return Err(e);
        }
        let eval = Evaluation::computed_elsewhere(db, 1, 0, Threads::new(workers));
        Ok((eval, Some(Live(flow))))
    }

    /// Why this engine cannot evaluate `program`, if it cannot: the pipeline reports it
    /// before evaluating anything.
    pub fn unsupported(self, program: &Program) -> Option<Diagnostic> {
        if !matches!(self, Engine::Differential { .. }) {
            return None;
        }
        let error = flow::check(&plan::plan_program(program), program).err()?;
        let d = Diagnostic::error(Code::DIFFERENTIAL_UNSUPPORTED, error.message(program));
        Some(match error {
            flow::Error::TooWide { pred: Some(p), .. } => d.with_primary(program.pred(p).span, "first used here"),
            flow::Error::TooWide { rule: Some(r), .. } | flow::Error::Unsupported { rule: r, .. } => {
                d.with_primary(program.rule(r).span, "in this rule")
            }
            _ => d,
        })
    }
}

/// Flags that do not go with the engine `args` choose (in `dlc repl` when `repl`), as a
/// usage error's message. Proofs read the ranks the native engines give rows, which a
/// dataflow's relations do not have.
pub fn usage_error(args: &RunArgs, repl: bool) -> Option<String> {
    let differential = args.engine == EngineArg::Differential;
    if differential && repl {
        return Some(
            "`dlc repl` explains facts through the native engine; it does not combine with --engine differential"
                .into(),
        );
    }
    if differential && (args.explain.is_some() || args.explain_missing.is_some()) {
        return Some(
            "--explain reads the native engine's derivation order; it does not combine with --engine differential"
                .into(),
        );
    }
    if !differential && args.dataflow.workers.is_some() {
        return Some("--workers sets the threads of --engine differential; the native engine's are --threads".into());
    }
    None
}

/// A worker of the dataflow stopped: a bug (its panic message is already on stderr).
fn stopped(e: flow::Error) -> flow::Applied {
    panic!("internal error: the differential dataflow stopped: {e:?}")
}

/// The running dataflow of a differential evaluation.
pub struct Live(flow::Flow);

/// A program's evaluated relations, kept up to date batch by batch.
pub trait Materialized {
    /// The input and derived relations as the batches so far left them.
    fn db(&self) -> &Database;
    /// Applies one batch of input changes.
    fn try_apply(&mut self, update: &Update) -> Result<UpdateReport, ResourceError>;
    /// The threads a recomputation for `--check` may use.
    fn threads(&self) -> Threads;
    /// Gives later batches the current texts of values (a batch may bring new ones, and
    /// comparisons read them). The dataflow compares no values, so it needs none.
    fn set_values(&mut self, _values: &ir::Interner<ir::Const>) {}
}

impl Materialized for Maintained {
    fn db(&self) -> &Database {
        Maintained::db(self)
    }

    fn try_apply(&mut self, update: &Update) -> Result<UpdateReport, ResourceError> {
        Maintained::try_apply(self, update)
    }

    fn threads(&self) -> Threads {
        Maintained::threads(self)
    }

    fn set_values(&mut self, values: &ir::Interner<ir::Const>) {
        Maintained::set_values(self, values);
    }
}

/// Keeps an evaluation for updates: the differential dataflow that made it, or DRed
/// (`maintenance`) over the native engine's database.
pub fn maintain(
    plan: ProgramPlan,
    program: &Program,
    eval: Evaluation,
    live: Option<Live>,
    maintenance: Maintenance,
) -> Result<Box<dyn Materialized>, ResourceError> {
    Ok(match live {
        Some(Live(flow)) => Box::new(Differential { threads: Threads::new(flow.workers()), flow, db: eval.db }),
        None => Box::new(Maintained::try_from_evaluation(plan, program, eval, maintenance)?),
    })
}

/// The differential engine's state: the dataflow, and its relations mirrored in a
/// database for the pipeline to read.
struct Differential {
    flow: flow::Flow,
    db: Database,
    threads: Threads,
}

impl Materialized for Differential {
    fn db(&self) -> &Database {
        &self.db
    }

    fn try_apply(&mut self, update: &Update) -> Result<UpdateReport, ResourceError> {
        let deletes = update.deletes.iter().map(|(p, t)| (*p, t.as_slice()));
        let inserts = update.inserts.iter().map(|(p, t)| (*p, t.as_slice()));
        let applied = self.flow.apply(deletes, inserts).unwrap_or_else(stopped);
        for (pred, row) in applied.deleted.iter().chain(&applied.derived_removed) {
            self.db.remove(*pred, row.values());
        }
        for (pred, row) in applied.inserted.iter().chain(&applied.derived_added) {
            self.db.insert(*pred, row.values());
        }
        if let Some(e) = self.db.failure() {
            return Err(e);
        }
        let listed = |rows: &[(PredId, flow::Row)]| rows.iter().map(|(p, r)| (*p, r.values().to_vec())).collect();
        // The dataflow reports net changes: what disappeared is listed as over-deleted
        // and nothing as rederived, so the report's difference is the true one.
        Ok(UpdateReport {
            overdeleted_waves: Vec::new(),
            overdeleted: grouped(&applied.derived_removed),
            rederived: Vec::new(),
            inserted: grouped(&applied.derived_added),
            edb_inserted: listed(&applied.inserted),
            edb_deleted: listed(&applied.deleted),
            noop_inserts: applied.noop_inserts,
            noop_deletes: applied.noop_deletes,
            work: 0,
        })
    }

    fn threads(&self) -> Threads {
        self.threads
    }
}

/// Sorted rows grouped by predicate, as `UpdateReport` lists derived facts.
fn grouped(rows: &[(PredId, flow::Row)]) -> Vec<(PredId, Vec<Vec<u32>>)> {
    let mut groups: Vec<(PredId, Vec<Vec<u32>>)> = Vec::new();
    for (pred, row) in rows {
        match groups.last_mut() {
            Some((p, list)) if p == pred => list.push(row.values().to_vec()),
            _ => groups.push((*pred, vec![row.values().to_vec()])),
        }
    }
    groups
}
