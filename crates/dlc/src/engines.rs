//! The seam between the pipeline and the engines: the pipeline asks an [`Engine`] to
//! evaluate a plan over a database of input facts, and to keep what it evaluated for
//! update batches ([`maintain`], a [`Materialized`] state). Whatever the engine, what the
//! pipeline reads back is an `exec::Database` holding the input and every derived fact,
//! so the writers, reports and `--check` have one path; engine-specific knobs (threads of
//! the native joins, differential workers) live in the engine value.

use crate::cli::{Emit, EngineArg, RunArgs};
use diag::{Code, Diagnostic, SourceMap, Span};
use exec::{Database, EvalOptions, Evaluation, Maintained, Maintenance, ResourceError, Threads, Update, UpdateReport};
use ir::{PredId, Program};
use plan::ProgramPlan;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::os::fd::AsFd;
use std::sync::Mutex;
use std::time::Duration;

/// Which engine evaluates and maintains programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// dlc's own engines (`exec`): semi-naive or the reference engine, DRed updates.
    Native(exec::Engine),
    /// The program as one differential dataflow (`flow`) on this many worker threads,
    /// alone or (`cluster`) with the processes [`join_cluster`] connected.
    Differential { workers: usize, cluster: bool },
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
        let (workers, cluster) = match self {
            Engine::Native(engine) => {
                let options = EvalOptions { engine, record_rounds, progress, threads };
                return exec::try_evaluate(plan, program, edb, options).map(|eval| (eval, None));
            }
            Engine::Differential { workers, cluster } => (workers, cluster),
        };
        let connection = match cluster {
            true => CONNECTION.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take(),
            false => None,
        };
        if cluster && connection.is_none() {
            // The pipeline evaluates once in a cluster (`evaluate_chosen` sets no caps).
            stopped(flow::Error::Cluster("the run evaluated twice; a cluster connects once".into()));
        }
        // In a cluster each process gives the dataflow what it read (its share, or the
        // whole input with `--check`), and set semantics are kept at each row's owner.
        let options = flow::Options { workers, cluster: connection };
        let started = match cluster {
            true => flow::Flow::start_placed(plan, program, options),
            false => flow::Flow::start(plan, program, options),
        };
        let mut flow = match started {
            Ok(flow) => flow,
            // `unsupported` refused such programs before the pipeline evaluated anything.
            Err(e) => panic!("internal error: {}", e.message(program)),
        };
        let mut db = edb;
        let inputs = (0..db.relation_count() as u32).map(PredId);
        let rows = inputs.flat_map(|p| db.tuples(p).map(move |t| (p, t)));
        let applied = match cluster {
            true => flow.request([], rows, true),
            false => flow.apply([], rows),
        }
        .unwrap_or_else(stopped);
        for (pred, row) in &applied.derived_added {
            db.insert(*pred, row.values());
        }
        if let Some(e) = db.failure() {
            return Err(e);
        }
        let eval = Evaluation::computed_elsewhere(db, 1, 0, Threads::new(workers));
        Ok((eval, Some(Live(flow))))
    }

    /// Whether the run spans several processes: choices made from local data (the caps
    /// of `--magic auto`) must then be made from the program alone.
    pub fn is_cluster(self) -> bool {
        matches!(self, Engine::Differential { cluster: true, .. })
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
            flow::Error::TooWide { rule: Some(r), .. } => d.with_primary(program.rule(r).span, "in this rule"),
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
    cluster_usage_error(args)
}

/// What is wrong with the cluster flags of `args`, if anything.
fn cluster_usage_error(args: &RunArgs) -> Option<String> {
    let flags = &args.dataflow;
    let processes = flags.processes();
    if processes == 1 {
        return (flags.process.is_some_and(|i| i > 0) || flags.hosts.is_some())
            .then(|| "--process and --hosts place this process in a cluster: give --processes P too".into());
    }
    if args.engine != EngineArg::Differential {
        return Some("--processes runs --engine differential across processes; add --engine differential".into());
    }
    let (Some(process), Some(_)) = (flags.process, &flags.hosts) else {
        return Some(format!(
            "a cluster of {processes} processes needs --process I (0 to {}) and --hosts FILE",
            processes - 1
        ));
    };
    if process >= processes {
        return Some(format!("--process {process} is not a process of {processes}: give 0 to {}", processes - 1));
    }
    if args.compare {
        return Some("--compare evaluates twice; a cluster evaluates once: run it without --processes".into());
    }
    None
}

/// The share of the input this process reads, `(process, processes)`, when it is one of
/// several that join a cluster ([`join_cluster`]) and each reads only its share of every
/// facts file. With `--check` every process reads the whole input: the check recomputes
/// it natively.
pub fn cluster_split(args: &RunArgs) -> Option<(usize, usize)> {
    let flags = &args.dataflow;
    let joins = flags.hosts.is_some() && flags.processes() > 1 && matches!(args.emit, Emit::Answers | Emit::Trace);
    flags.process.filter(|_| joins && !args.check).map(|process| (process, flags.processes()))
}

/// The connection of this process to its cluster, opened by [`join_cluster`] before
/// anything is evaluated (so that a peer that is missing or runs something else is
/// reported as an error of the run) and taken by the differential evaluation.
static CONNECTION: Mutex<Option<flow::Connection>> = Mutex::new(None);

/// Joins the cluster `args` asks for, if any, for the program and input `prepared` read,
/// and returns one line saying what this process read. Every process must be started
/// with the same command line but `--process`, `-D` and `--connect-timeout`, the same
/// program and input files of the same lengths, and the same updates: the digest of
/// these is compared with every peer's. Then the texts this process read get the ids
/// their owners assign ([`flow::Connection::open_with_texts`]) and its facts and updates
/// are rewritten to them. Only runs that evaluate connect; the others have nothing to
/// share.
pub fn join_cluster(args: &RunArgs, prepared: &mut crate::session::Prepared) -> Result<Option<String>, Diagnostic> {
    let flags = &args.dataflow;
    let (Some(process), Some(path)) = (flags.process, &flags.hosts) else { return Ok(None) };
    if flags.processes() == 1 || !matches!(args.emit, Emit::Answers | Emit::Trace) {
        return Ok(None);
    }
    let hosts = read_hosts(path, flags.processes(), &mut prepared.sources)?;
    let mut hasher = DefaultHasher::new();
    // What may differ between processes: their index, where each writes its files, and
    // how long each waits for the others.
    let mut common = args.clone();
    common.dataflow.process = None;
    common.dataflow.connect_timeout = 0;
    common.output_dir = None;
    format!("{common:?}").hash(&mut hasher);
    prepared.sources.text(prepared.file).hash(&mut hasher);
    // The program's own values (its constants, in id order), each input file's path and
    // length (which fix the shares; no process reads another's share to compare), and
    // the updates, which every process reads whole.
    for id in 0..prepared.program_values {
        prepared.program.consts.text(ir::Const(id as u32)).hash(&mut hasher);
    }
    for (path, len, _) in &prepared.shares.read {
        (path, len).hash(&mut hasher);
    }
    for batch in &prepared.batches {
        batch.changes.hash(&mut hasher);
    }
    let cluster =
        flow::Cluster { process, hosts, timeout: Duration::from_secs(flags.connect_timeout), digest: hasher.finish() };
    let workers = flags.workers.unwrap_or(1);
    flow::on_lost_peer(|reason| lost_peer(reason));
    let program = &prepared.program;
    let read: Vec<String> = (prepared.program_values..program.consts.len())
        .map(|id| program.consts.text(ir::Const(id as u32)).into())
        .collect();
    let (connection, dictionary) =
        flow::Connection::open_with_texts(&cluster, workers, read).map_err(|e| cluster_diagnostic(&e))?;
    renumber(prepared, &dictionary);
    *CONNECTION.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(connection);
    Ok(Some(what_was_read(prepared, process, flags.processes())))
}

/// Gives the values `prepared` read from its input the ids of the cluster's
/// `dictionary`: the program's own values keep theirs, the dictionary's texts follow in
/// its order, and every symbol column of the facts and updates is rewritten. Numbers
/// keep their own encoding.
fn renumber(prepared: &mut crate::session::Prepared, dictionary: &flow::Dictionary) {
    let program = &mut prepared.program;
    let local = program.consts.clone();
    let mut shared = ir::Interner::<ir::Const>::default();
    for id in 0..prepared.program_values {
        shared.intern(local.text(ir::Const(id as u32)));
    }
    for text in dictionary.parts.iter().flatten() {
        shared.intern(text);
    }
    let first = prepared.program_values as u32;
    let ids: Vec<u32> =
        (first..local.len() as u32).map(|id| shared.get(local.text(ir::Const(id))).map_or(id, |c| c.0)).collect();
    let types: Vec<Vec<ir::ValueType>> = program.preds.iter().map(|p| p.types.clone()).collect();
    let new_id = |pred: PredId, col: usize, value: u32| {
        let symbol = types.get(pred.index()).and_then(|t| t.get(col)) == Some(&ir::ValueType::Symbol);
        match value.checked_sub(first) {
            Some(at) if symbol => ids[at as usize],
            _ => value,
        }
    };
    prepared.facts.map_values(new_id);
    for batch in &mut prepared.batches {
        for (pred, tuple) in batch.update.deletes.iter_mut().chain(&mut batch.update.inserts) {
            for (col, value) in tuple.iter_mut().enumerate() {
                *value = new_id(*pred, col, *value);
            }
        }
    }
    program.consts = shared;
}

/// One line saying what this process of a cluster read.
fn what_was_read(prepared: &crate::session::Prepared, process: usize, processes: usize) -> String {
    let read = &prepared.shares.read;
    let bytes: u64 = read.iter().map(|(_, _, bytes)| bytes).sum();
    let total: u64 = read.iter().map(|(_, len, _)| len).sum();
    let facts: usize = prepared.facts.preds().map(|p| prepared.facts.of(p).0).sum();
    let how = match prepared.shares.split {
        Some(_) => "its share of each facts file",
        None => "every facts file whole (--check recomputes the whole input natively)",
    };
    format!(
        "dlc: process {process} of {processes} read {how}: {bytes} of {total} bytes in {} file(s), {facts} facts; the dictionary holds {} texts beyond the program's",
        read.len(),
        prepared.program.consts.len() - prepared.program_values
    )
}

/// The `host:port` lines of the hosts file at `path`, which must name `processes` of
/// them; blank lines and `#` comments are skipped.
fn read_hosts(path: &std::path::Path, processes: usize, sources: &mut SourceMap) -> Result<Vec<String>, Diagnostic> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        Diagnostic::error(Code::CLUSTER, format!("cannot read the hosts file {shown}: {e}"))
            .with_help("--hosts names a file of `host:port` lines, one per process")
    })?;
    let file = sources.add(shown.clone(), text.clone());
    let mut hosts = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let host = line.split('#').next().unwrap_or("").trim();
        let start = offset + line.find(host).unwrap_or(0);
        offset += line.len();
        if host.is_empty() {
            continue;
        }
        let span = Span::new(file, start..start + host.len());
        let port = host.rsplit_once(':').map(|(_, port)| port.parse::<u16>());
        if !matches!(port, Some(Ok(_))) || host.contains(char::is_whitespace) {
            return Err(Diagnostic::error(Code::CLUSTER, format!("`{host}` is not a `host:port` address"))
                .with_primary(span, "expected `host:port`, e.g. `10.0.0.2:4100`"));
        }
        hosts.push(host.to_string());
    }
    if hosts.len() != processes {
        let d = Diagnostic::error(
            Code::CLUSTER,
            format!("the hosts file lists {} address(es) for --processes {processes}", hosts.len()),
        );
        let end = text.trim_end().len();
        return Err(d.with_primary(Span::new(file, end..end), "the addresses end here"));
    }
    Ok(hosts)
}

/// A cluster that could not start or stopped, as the error the run ends with.
fn cluster_diagnostic(error: &flow::Error) -> Diagnostic {
    let reason = match error {
        flow::Error::Cluster(reason) | flow::Error::Stopped(reason) => reason.as_str(),
        _ => "the dataflow refused the program",
    };
    let d = Diagnostic::error(Code::CLUSTER, format!("cannot join the cluster: {reason}"));
    match reason.contains("runs a different program") {
        true => d.with_help(
            "the processes compare the command line (but --process, -D and --connect-timeout), the program, \
             the path and length of every facts file and the updates: give every process the same",
        ),
        false => d,
    }
}

/// The dataflow stopped. In a cluster a peer went away (it stopped, ran out of memory or
/// lost the network): every process ends, each with this message and a non-zero
/// status; the seam's error type is the native engine's resource error, which has no
/// room for it, and no output has been written yet. In one process a worker stopped:
/// a bug (its panic message is already on stderr).
fn stopped(e: flow::Error) -> flow::Applied {
    match e {
        flow::Error::Cluster(reason) => lost_peer(&reason),
        _ => panic!("internal error: the differential dataflow stopped: {e:?}"),
    }
}

/// Ends this process of a cluster that lost a peer, with the error and a non-zero
/// status (see [`stopped`]). Called on whichever thread noticed, so it writes to a
/// handle of its own on standard error: the pipeline's thread holds the usual one.
fn lost_peer(reason: &str) -> ! {
    let diagnostic = Diagnostic::error(Code::CLUSTER, format!("the cluster stopped: {reason}")).with_help(
        "every process of the cluster ends with this error; the lost one's own output says why it went away",
    );
    let mut sources = SourceMap::new();
    sources.add("", "");
    let text =
        format!("{}dlc: the cluster stopped; no answers were printed\n", diag::render(&[diagnostic], &sources, false));
    if let Ok(fd) = std::io::stderr().as_fd().try_clone_to_owned() {
        let _ = std::fs::File::from(fd).write_all(text.as_bytes());
    }
    std::process::exit(crate::EXIT_INPUT_ERROR);
}

/// The running dataflow of a differential evaluation.
pub struct Live(flow::Flow);

/// A program's evaluated relations, kept up to date batch by batch.
pub trait Materialized {
    /// The input and derived relations as the batches so far left them.
    fn db(&self) -> &Database;
    /// Applies one batch of input changes; its report lists the facts of each phase when
    /// they are at most `list_up_to` (always, without a limit), else it counts them. The
    /// facts of the net change (`removed`, `added`) are left out when `net` is false and
    /// the limit given; [`UpdateReport::net_count`] always has their numbers.
    fn try_apply(
        &mut self,
        update: &Update,
        list_up_to: Option<usize>,
        net: bool,
    ) -> Result<UpdateReport, ResourceError>;
    /// The threads a recomputation for `--check` may use.
    fn threads(&self) -> Threads;
    /// Gives later batches the current texts of values (a batch may bring new ones, and
    /// ordering comparisons of symbols read them).
    fn set_values(&mut self, values: &ir::Interner<ir::Const>);
    /// The name of the strategy that maintained the batch of `report`, as reports give it.
    fn strategy_name(&self, report: &UpdateReport) -> &'static str {
        match report.strategy {
            exec::Method::Dred => "dred",
            exec::Method::Ranked => "ranked",
            exec::Method::Recompute => "recompute",
        }
    }
}

impl Materialized for Maintained {
    fn db(&self) -> &Database {
        Maintained::db(self)
    }

    fn try_apply(
        &mut self,
        update: &Update,
        list_up_to: Option<usize>,
        net: bool,
    ) -> Result<UpdateReport, ResourceError> {
        match (list_up_to, net) {
            (Some(most), true) => Maintained::try_apply_listing(self, update, most),
            (Some(most), false) => Maintained::try_apply_summarizing(self, update, most),
            (None, _) => Maintained::try_apply(self, update),
        }
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

    fn try_apply(
        &mut self,
        update: &Update,
        list_up_to: Option<usize>,
        _net: bool,
    ) -> Result<UpdateReport, ResourceError> {
        let deletes = update.deletes.iter().map(|(p, t)| (*p, t.as_slice()));
        let inserts = update.inserts.iter().map(|(p, t)| (*p, t.as_slice()));
        if !self.flow.placed() {
            let applied = self.flow.apply(deletes, inserts).unwrap_or_else(stopped);
            for (pred, row) in applied.deleted.iter().chain(&applied.derived_removed) {
                self.db.remove(*pred, row.values());
            }
            for (pred, row) in applied.inserted.iter().chain(&applied.derived_added) {
                self.db.insert(*pred, row.values());
            }
            return self.report(applied, list_up_to);
        }
        // In a cluster every process reads the whole batch and injects the requests it
        // owns; the owners report the input changes they made. This process's input
        // relations (its share, or whole) take the batch as it is, deletes first.
        let applied = self.flow.request(deletes, inserts, false).unwrap_or_else(stopped);
        // Changes the dataflow refused (of derived relations, of another arity) are not
        // input changes here either.
        let refused = |noops: &[(PredId, Vec<u32>)], pred: PredId, tuple: &[u32]| {
            noops.iter().any(|(p, t)| *p == pred && t.as_slice() == tuple)
        };
        for (pred, tuple) in &update.deletes {
            if !refused(&applied.noop_deletes, *pred, tuple) {
                self.db.remove(*pred, tuple);
            }
        }
        for (pred, tuple) in &update.inserts {
            if !refused(&applied.noop_inserts, *pred, tuple) {
                self.db.insert(*pred, tuple);
            }
        }
        for (pred, row) in &applied.derived_removed {
            self.db.remove(*pred, row.values());
        }
        for (pred, row) in &applied.derived_added {
            self.db.insert(*pred, row.values());
        }
        self.report(applied, list_up_to)
    }

    fn threads(&self) -> Threads {
        self.threads
    }

    fn set_values(&mut self, values: &ir::Interner<ir::Const>) {
        self.flow.set_values(values);
    }

    fn strategy_name(&self, _report: &UpdateReport) -> &'static str {
        "differential"
    }
}

impl Differential {
    /// The report of a batch the dataflow applied.
    fn report(&self, applied: flow::Applied, list_up_to: Option<usize>) -> Result<UpdateReport, ResourceError> {
        if let Some(e) = self.db.failure() {
            return Err(e);
        }
        let input_rows = |rows: &[(PredId, flow::Row)]| rows.iter().map(|(p, r)| (*p, r.values().to_vec())).collect();
        // The dataflow reports net changes: what disappeared is listed as over-deleted
        // and nothing as rederived, so the report's difference is the true one.
        let (removed, added) = (grouped(&applied.derived_removed), grouped(&applied.derived_added));
        let mut tallies: Vec<(PredId, exec::Tally)> = Vec::new();
        for (p, overdeleted, inserted) in
            removed.iter().map(|(p, ts)| (*p, ts.len(), 0)).chain(added.iter().map(|(p, ts)| (*p, 0, ts.len())))
        {
            match tallies.iter_mut().find(|(q, _)| *q == p) {
                Some((_, tally)) => tally.inserted += inserted,
                None => tallies.push((p, exec::Tally { overdeleted, inserted, ..exec::Tally::default() })),
            }
        }
        tallies.sort_by_key(|(p, _)| *p);
        let touched: usize = tallies.iter().map(|(_, t)| t.overdeleted + t.inserted).sum();
        let listed = list_up_to.is_none_or(|most| touched <= most);
        Ok(UpdateReport {
            waves: usize::from(!removed.is_empty()),
            groups: Vec::new(),
            tallies,
            listed,
            overdeleted_waves: Vec::new(),
            overdeleted: if listed { exec::one_per_fact(&removed) } else { Vec::new() },
            rederived: Vec::new(),
            inserted: if listed { exec::one_per_fact(&added) } else { Vec::new() },
            removed,
            added,
            strategy: exec::Method::default(),
            reason: "the dataflow applies the batch as one epoch of changes".into(),
            edb_inserted: input_rows(&applied.inserted),
            edb_deleted: input_rows(&applied.deleted),
            noop_inserts: applied.noop_inserts,
            noop_deletes: applied.noop_deletes,
            work: 0,
        })
    }
}

/// Sorted rows grouped by predicate, as `UpdateReport` lists derived facts.
fn grouped(rows: &[(PredId, flow::Row)]) -> exec::FactsByPred {
    // Per relation: its arity, row count and values, flat.
    let mut groups: Vec<(PredId, usize, usize, Vec<u32>)> = Vec::new();
    for (pred, row) in rows {
        let at = match groups.iter().rposition(|(p, ..)| p == pred) {
            Some(at) => at,
            None => {
                groups.push((*pred, row.values().len(), 0, Vec::new()));
                groups.len() - 1
            }
        };
        let (_, _, len, values) = &mut groups[at];
        values.extend_from_slice(row.values());
        *len += 1;
    }
    groups.sort_by_key(|(p, ..)| *p);
    groups.into_iter().map(|(p, arity, len, values)| (p, exec::Tuples::sorted(arity, len, values))).collect()
}
