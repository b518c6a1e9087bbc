//! A second evaluation backend: the plans dlc makes ([`plan::ProgramPlan`]) interpreted as
//! one differential dataflow (timely dataflow underneath), run by worker threads, and
//! kept up to date by feeding it epochs of input changes.
//!
//! No code is generated per program: [`Flow::start`] works out a blueprint of the dataflow
//! from the plan (which relation each join arranges on which key, which columns each
//! partial binding keeps), checks every width against [`MAX_WIDTH`], and starts the
//! workers, each building the same dataflow from it. [`Flow::apply`] then feeds one batch
//! of input changes as one epoch and returns what changed in the derived relations.
//!
//! Invariant: the inputs keep set semantics before they reach the dataflow. A second
//! insert of a present fact and a delete of an absent one change nothing (a `-1` on an
//! absent row would make a `distinct` inside an iteration oscillate forever), and so do
//! changes to derived relations, which only follow from the input.
//!
//! Invariant: `flow` knows nothing of magic sets, like `exec`: demand and answer
//! relations are ordinary relations, and a query's seed is an input fact.

mod blueprint;
mod cluster;
mod render;
mod row;

pub use cluster::{on_lost_peer, text_owner, Cluster, Connection, Dictionary};
pub use row::{Row, MAX_WIDTH};

use ir::{FactsByPred, PredId, Program, RuleId, Tuple, Tuples, ValueStore};
use plan::ProgramPlan;
use render::Epoch;
use rustc_hash::{FxHashSet, FxHasher};
use std::hash::{Hash, Hasher};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

/// How to run the dataflow.
#[derive(Debug)]
pub struct Options {
    /// Worker threads in this process (at least one; in a cluster, the number the
    /// connection was opened for).
    pub workers: usize,
    /// The other processes running the same dataflow, if any; `None` runs it in this
    /// process alone.
    pub cluster: Option<Connection>,
}

/// Why the backend refuses a program or stopped running it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// A relation, a join key or the live variables of a rule wider than [`MAX_WIDTH`]:
    /// refused before any worker starts.
    TooWide { pred: Option<PredId>, rule: Option<RuleId>, width: usize },
    /// A relation with a `choice-domain` ([`ir::Pred::choice`]): which tuple is chosen
    /// depends on the rounds of an evaluation, which a dataflow does not have; refused
    /// before any worker starts.
    Choice { pred: PredId },
    /// A subsumptive clause (an `ir::Dominance` of `pred`, at `span`) whose removals the
    /// dataflow would not make as the native engines do: a clause on a relation of a
    /// recursion, written as such (`lattice` false), or a recursive `min`'s or `max`'s
    /// (`ir::Dominance::lattice`) whose recursion holds `plain`, a relation without
    /// dominance. Natively a fact derived from a fact removed later stays; a dataflow
    /// retracts it. Which programs run is said at [`check`].
    Subsumption { span: ir::Span, lattice: bool, pred: PredId, plain: Option<PredId> },
    /// A subsumptive clause (at `span`) of `pred` whose body reads relations: the
    /// dataflow judges a group of facts by comparing them with each other, so it runs
    /// only clauses whose body compares the two facts; refused before any worker starts.
    DominanceBody { span: ir::Span, pred: PredId },
    /// A cycle of the recursion of lattice relation `pred` improved a value each time
    /// round: after `rounds` iterations the recursion still changed, more than it holds
    /// facts (plus a margin), which a recursion that ends never does (docs/semantics.md,
    /// Recursive `min` and `max`). The workers stop in the middle of the batch, and the
    /// dataflow runs no more.
    ImprovingCycle { pred: PredId, rounds: usize },
    /// A worker stopped before answering (it panicked, or timely could not start).
    Stopped(String),
    /// The processes of a cluster could not connect, disagreed on what they run, or one
    /// of them went away during the run.
    Cluster(String),
}

impl Error {
    /// One line saying what went wrong, with the program's names.
    pub fn message(&self, program: &Program) -> String {
        match self {
            Error::TooWide { pred, rule, width } => format!(
                "the differential engine holds at most {MAX_WIDTH} values per row; {} needs {width}",
                blueprint::describe(program, *pred, *rule)
            ),
            Error::Choice { pred } => format!(
                "the differential engine cannot keep the `choice-domain` of `{}`: which tuple is chosen depends on the rounds of the native engines",
                program.pred_name(*pred)
            ),
            Error::Subsumption { pred, plain: None, .. } => format!(
                "the differential engine runs a subsumptive clause (`<=`) on a recursive relation only as a recursive `min` or `max`; `{}` is recursive, and the native engines keep the facts derived from a fact removed later, which a dataflow retracts",
                program.pred_name(*pred)
            ),
            Error::Subsumption { pred, plain: Some(plain), .. } => format!(
                "the differential engine runs a recursive `min` or `max` only in a recursion of such relations alone; `{}` is in the recursion of `{}` and keeps the facts derived from a value improved later, which a dataflow retracts",
                program.pred_name(*plain),
                program.pred_name(*pred)
            ),
            Error::DominanceBody { pred, .. } => format!(
                "the differential engine runs subsumptive clauses (`<=`) whose body compares the two facts only; a clause of `{}` reads relations in its body",
                program.pred_name(*pred)
            ),
            Error::ImprovingCycle { pred, rounds } => format!(
                "relation `{}` still improved a value after {rounds} iterations, more than its recursion holds facts: a cycle improves it each time round",
                program.pred_name(*pred)
            ),
            Error::Stopped(reason) => format!("the differential dataflow stopped: {reason}"),
            Error::Cluster(reason) => format!("the cluster stopped: {reason}"),
        }
    }
}

/// What one batch changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// Input facts that changed the input, in the order given.
    pub inserted: Vec<(PredId, Row)>,
    pub deleted: Vec<(PredId, Row)>,
    /// Requested changes that changed nothing: inserts of present facts, deletes of
    /// absent ones, repeats within the batch, wrong arities, changes to derived relations.
    pub noop_inserts: Vec<Tuple>,
    pub noop_deletes: Vec<Tuple>,
    /// Derived facts that appeared and disappeared, by relation in id order, sorted.
    pub derived_added: FactsByPred,
    pub derived_removed: FactsByPred,
}

/// Whether this backend can run `plan` (of `program`): [`Flow::start`] refuses exactly
/// the programs this refuses, without starting a thread.
///
/// A relation with dominance rules (a subsumptive clause, or a recursive `min` or `max`)
/// runs where the dataflow's result is provably the native engines': the relation is in
/// a stratum of `plan` that is not recursive, or every relation of its recursive stratum
/// is a lattice relation (each of its dominance rules made by a recursive `min` or
/// `max`). The rest is [`Error::Subsumption`].
pub fn check(plan: &ProgramPlan, program: &Program) -> Result<(), Error> {
    blueprint::blueprint(plan, program).map(|_| ())
}

/// One worker's share of a batch of input changes: relation, row and diff.
type WorkerShare = Vec<(usize, Row, isize)>;

/// What a worker is sent per epoch: its share of the batch.
struct Command {
    changes: WorkerShare,
    /// With placement at the owner: requests for input rows (relation, row, insert?).
    requests: Vec<(usize, Row, bool)>,
    /// This process's parts of counts to add up over the processes (slot, part).
    tallies: Vec<(u32, isize)>,
}

impl Command {
    fn changes(changes: WorkerShare) -> Command {
        Command { changes, requests: Vec::new(), tallies: Vec::new() }
    }
}

/// What a worker reports per epoch: the changes it saw, flat ([`render::SeenChanges`]),
/// the parts of counts it received ([`render::SeenTallies`]), and, when it stopped in
/// a cycle improving a value, the relation and the iteration ([`render::Watch`]).
type Report = (Vec<u32>, Vec<(u32, isize)>, Option<(usize, usize)>);

/// A running dataflow: the workers, and the input as the batches left it.
pub struct Flow {
    commands: Vec<Sender<Command>>,
    /// Each worker's report of an epoch.
    reports: Receiver<Report>,
    guards: Option<timely::communication::WorkerGuards<()>>,
    /// This process's index and the number of processes: a row of input is given to the
    /// dataflow by the process its hash picks ([`owner`]).
    process: usize,
    processes: usize,
    arity: Vec<usize>,
    derived: Vec<bool>,
    /// The input facts now in the dataflow.
    present: FxHashSet<(usize, Row)>,
    /// Whether input rows are placed at their owner ([`Flow::start_placed`]).
    placed: bool,
}

impl std::fmt::Debug for Flow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flow").field("workers", &self.commands.len()).field("inputs", &self.present.len()).finish()
    }
}

impl Flow {
    /// Builds the dataflow of `plan` (made from `program`) on `options.workers` threads,
    /// with empty inputs.
    pub fn start(plan: &ProgramPlan, program: &Program, options: Options) -> Result<Flow, Error> {
        Flow::launch(plan, program, options, false)
    }

    /// [`Flow::start`] with set semantics kept in the dataflow, at the worker each input
    /// row's hash picks, instead of in every process: a process then gives the dataflow
    /// requests ([`Flow::request`]) and needs to hold no input it did not read itself.
    pub fn start_placed(plan: &ProgramPlan, program: &Program, options: Options) -> Result<Flow, Error> {
        Flow::launch(plan, program, options, true)
    }

    fn launch(plan: &ProgramPlan, program: &Program, options: Options, placed: bool) -> Result<Flow, Error> {
        let blueprint = Arc::new(blueprint::blueprint(plan, program)?);
        let workers = options.workers.max(1);
        let (process, processes) = options.cluster.as_ref().map_or((0, 1), |c| (c.process, c.processes));
        let partitioned = options.cluster.as_ref().is_some_and(|c| c.partitioned);
        let (allocators, network) = match options.cluster {
            None => timely::CommunicationConfig::Process(workers).try_build().map_err(Error::Stopped)?,
            Some(connection) => (connection.allocators, connection.network),
        };
        let (commands, receivers): (Vec<Sender<Command>>, Vec<Receiver<Command>>) =
            (0..workers).map(|_| channel()).unzip();
        let receivers = Arc::new(Mutex::new(receivers.into_iter().map(Some).collect::<Vec<_>>()));
        let (report, reports) = channel();
        let shared = Arc::clone(&blueprint);
        let values = program.consts.clone();
        let config = timely::WorkerConfig::default();
        let started = timely::execute::execute_from(allocators, network, config, move |worker| {
            let commands = receivers.lock().ok().and_then(|mut r| r[worker.index() % workers].take());
            let Some(commands) = commands else { return };
            let gather = render::Gather { processes, workers, partitioned, placed };
            // Rows are as wide as the program needs: chosen once, for the whole dataflow.
            match shared.width() {
                0..=2 => serve::<2>(worker, &shared, &commands, &report, gather, &values),
                3..=4 => serve::<4>(worker, &shared, &commands, &report, gather, &values),
                _ => serve::<MAX_WIDTH>(worker, &shared, &commands, &report, gather, &values),
            }
        });
        let guards = match started {
            Ok(guards) => guards,
            Err(e) => return Err(Error::Stopped(e)),
        };
        Ok(Flow {
            commands,
            reports,
            guards: Some(guards),
            process,
            processes,
            arity: blueprint.arity.clone(),
            derived: blueprint.derived.clone(),
            present: FxHashSet::default(),
            placed,
        })
    }

    /// Whether input rows are placed at their owner ([`Flow::start_placed`]): batches
    /// then go through [`Flow::request`].
    pub fn placed(&self) -> bool {
        self.placed
    }

    /// The number of worker threads.
    pub fn workers(&self) -> usize {
        self.commands.len()
    }

    /// Applies one batch as one epoch: `deletes`, then `inserts`, each kept to what
    /// changes the input (see the crate's set-semantics invariant), and returns what
    /// changed. The initial input is the first batch.
    pub fn apply<'a>(
        &mut self,
        deletes: impl IntoIterator<Item = (PredId, &'a [u32])>,
        inserts: impl IntoIterator<Item = (PredId, &'a [u32])>,
    ) -> Result<Applied, Error> {
        let workers = self.commands.len();
        if workers == 0 {
            return Err(Error::Stopped("the workers stopped at an earlier batch".into()));
        }
        let mut shares: Vec<WorkerShare> = vec![Vec::new(); workers];
        let mut applied = Applied::default();
        let mut next = 0;
        for (sign, changes) in [(-1isize, deletes.into_iter().collect::<Vec<_>>()), (1, inserts.into_iter().collect())]
        {
            for (pred, values) in changes {
                let p = pred.index();
                let input = p < self.arity.len() && !self.derived[p] && values.len() == self.arity[p];
                let row = Row::try_new(values).filter(|_| input);
                let changed = row.is_some_and(|row| match sign {
                    1 => self.present.insert((p, row)),
                    _ => self.present.remove(&(p, row)),
                });
                match (row, changed, sign) {
                    (Some(row), true, 1) => applied.inserted.push((pred, row)),
                    (Some(row), true, _) => applied.deleted.push((pred, row)),
                    (_, _, 1) => applied.noop_inserts.push((pred, values.to_vec())),
                    _ => applied.noop_deletes.push((pred, values.to_vec())),
                }
                // Every process reads the whole batch and keeps the same `present`; each
                // gives the dataflow only the rows it owns.
                if let (Some(row), true) = (row, changed) {
                    if owner(p, &row, self.processes) == self.process {
                        shares[next].push((p, row, sign));
                        next = (next + 1) % workers;
                    }
                }
            }
        }
        let sent =
            self.commands.iter().zip(shares).all(|(command, changes)| command.send(Command::changes(changes)).is_ok());
        if !sent {
            return Err(self.failure());
        }
        self.collect(applied)
    }

    /// With placement at the owner ([`Flow::start_placed`]): one epoch of requests,
    /// `deletes` then `inserts`, which this process injects whole when `mine` (the rows
    /// it read: its share of the input) and otherwise only the rows this process owns
    /// (a batch every process reads). The owner keeps set semantics, so requests that
    /// change nothing are no-ops there, and a row deleted and inserted again in one
    /// epoch is no change. The report lists the net input changes and derived
    /// changes of the rows this process's workers own, and as no-ops the requests of
    /// wrong arity or to derived relations; in a cluster, the processes' reports
    /// together are the batch's.
    pub fn request<'a>(
        &mut self,
        deletes: impl IntoIterator<Item = (PredId, &'a [u32])>,
        inserts: impl IntoIterator<Item = (PredId, &'a [u32])>,
        mine: bool,
    ) -> Result<Applied, Error> {
        assert!(self.placed, "requests need a flow started with placement at the owner");
        let workers = self.commands.len();
        if workers == 0 {
            return Err(Error::Stopped("the workers stopped at an earlier batch".into()));
        }
        let mut shares: Vec<Vec<(usize, Row, bool)>> = vec![Vec::new(); workers];
        let mut applied = Applied::default();
        let mut next = 0;
        for (insert, changes) in
            [(false, deletes.into_iter().collect::<Vec<_>>()), (true, inserts.into_iter().collect())]
        {
            for (pred, values) in changes {
                let p = pred.index();
                let input = p < self.arity.len() && !self.derived[p] && values.len() == self.arity[p];
                match Row::try_new(values).filter(|_| input) {
                    Some(row) if mine || owner(p, &row, self.processes) == self.process => {
                        shares[next].push((p, row, insert));
                        next = (next + 1) % workers;
                    }
                    Some(_) => {}
                    None if insert => applied.noop_inserts.push((pred, values.to_vec())),
                    None => applied.noop_deletes.push((pred, values.to_vec())),
                }
            }
        }
        let sent = self
            .commands
            .iter()
            .zip(shares)
            .all(|(command, requests)| command.send(Command { requests, ..Command::changes(Vec::new()) }).is_ok());
        if !sent {
            return Err(self.failure());
        }
        self.collect(applied)
    }

    /// Adds up `parts` (this process's part of each count) over the processes of the
    /// cluster, in one epoch that changes no relation: every process must call it at the
    /// same point with as many parts. In one process it returns `parts`. This is how a
    /// cluster whose results are partitioned ([`Connection::partition_results`]) learns
    /// the sizes of relations no process holds whole.
    pub fn sum_over_processes(&mut self, parts: &[usize]) -> Result<Vec<usize>, Error> {
        let tallies: Vec<(u32, isize)> = parts
            .iter()
            .enumerate()
            .filter(|&(_, &part)| part > 0)
            .map(|(slot, &part)| (slot as u32, isize::try_from(part).unwrap_or(isize::MAX)))
            .collect();
        let mut tallies = Some(tallies);
        let sent = self.commands.iter().all(|command| {
            let tallies = tallies.take().unwrap_or_default();
            command.send(Command { tallies, ..Command::changes(Vec::new()) }).is_ok()
        });
        if !sent {
            return Err(self.failure());
        }
        let mut sums = vec![0isize; parts.len()];
        for _ in 0..self.commands.len() {
            let (_, received, _) = self.reports.recv().map_err(|_| self.failure())?;
            for (slot, part) in received {
                if let Some(sum) = sums.get_mut(slot as usize) {
                    *sum += part;
                }
            }
        }
        Ok(sums.into_iter().map(|sum| usize::try_from(sum).unwrap_or(0)).collect())
    }

    /// Waits for every worker's report of the epoch just sent and nets its changes into
    /// `applied`: of derived rows, and (with placement at the owner) of input rows.
    fn collect(&mut self, mut applied: Applied) -> Result<Applied, Error> {
        let workers = self.commands.len();
        let mut seen: Vec<u32> = Vec::new();
        let mut improving = None;
        for _ in 0..workers {
            let (report, _, stopped) = self.reports.recv().map_err(|_| self.failure())?;
            improving = improving.or(stopped);
            match seen.is_empty() {
                true => seen = report,
                false => seen.extend_from_slice(&report),
            }
        }
        if let Some((pred, rounds)) = improving {
            // The epoch was left unfinished: the dataflow cannot go on.
            self.commands.clear();
            if let Some(guards) = self.guards.take() {
                drop(guards.join());
            }
            return Err(Error::ImprovingCycle { pred: PredId(pred as u32), rounds });
        }
        // Where each change starts in the flat buffer, sorted by relation and row: 4
        // bytes per change (8 past 2^32 values), where a decoded change would take 56.
        match u32::try_from(seen.len()) {
            Ok(_) => net::<u32>(&seen, &self.arity, &self.derived, &mut applied),
            Err(_) => net::<usize>(&seen, &self.arity, &self.derived, &mut applied),
        }
        Ok(applied)
    }

    /// Stops the workers and says why one of them ended early: in a cluster, most
    /// often because the network lost a peer.
    fn failure(&mut self) -> Error {
        self.commands.clear();
        let reason = match self.guards.take().map(timely::communication::WorkerGuards::join) {
            Some(results) => results.into_iter().find_map(Result::err).unwrap_or_else(|| "a worker ended".into()),
            None => "the workers have stopped".into(),
        };
        match self.processes {
            1 => Error::Stopped(reason),
            _ => Error::Cluster(cluster::take_network_failure().unwrap_or(reason)),
        }
    }
}

/// One worker's life: builds the dataflow of `blueprint` with rows of `N` values, then
/// runs each command's epoch and reports the changes it saw, until the commands end.
fn serve<const N: usize>(
    worker: &mut timely::worker::Worker,
    blueprint: &blueprint::Blueprint,
    commands: &Receiver<Command>,
    report: &Sender<Report>,
    gather: render::Gather,
    values: &ValueStore,
) {
    let (changes, tallies) = (render::SeenChanges::default(), render::SeenTallies::default());
    let seen = (changes.clone(), tallies.clone());
    let mut handles = render::build_dataflow::<N>(worker, blueprint, seen, gather, values);
    if worker.index() == 0 {
        handles.unit.insert(Row::EMPTY);
    }
    let mut epoch: Epoch = 0;
    // Each batch is one epoch: apply this worker's share of the changes, close the
    // epoch on every input, and run until the outputs have caught up with it.
    while let Ok(Command { changes: batch, requests, tallies: parts }) = commands.recv() {
        for (slot, part) in parts {
            handles.tallies.update(Row::new(&[slot]), part);
        }
        for (pred, row, diff) in batch {
            handles.inputs[pred].update(Row::new(row.values()), diff);
        }
        for (pred, row, insert) in requests {
            if let Some(input) = handles.requests[pred].as_mut() {
                input.update((Row::new(row.values()), (epoch, insert)), 1);
            }
        }
        epoch += 1;
        for input in handles.inputs.iter_mut().chain([&mut handles.unit, &mut handles.tallies]) {
            input.advance_to(epoch);
            input.flush();
        }
        for input in handles.requests.iter_mut().flatten() {
            input.advance_to(epoch);
            input.flush();
        }
        let probe = handles.probe.clone();
        // Park rather than spin while waiting for peers: workers share the
        // machine's cores with each other and with the calling thread. A recursion
        // iterating past what one that ends reaches stops every worker at one point.
        let improving = || handles.watches.iter().find_map(|w| w.improving(epoch - 1).map(|i| (w.pred, i)));
        worker.step_or_park_while(None, || probe.less_than(&epoch) && improving().is_none());
        if let Some(stopped) = improving() {
            // The epoch is left unfinished, and the dataflow with it: dropped, or timely
            // would run it to its end (which it has not) when this worker returns.
            drop(handles);
            for dataflow in worker.installed_dataflows() {
                worker.drop_dataflow(dataflow);
            }
            _ = report.send((Vec::new(), Vec::new(), Some(stopped)));
            return;
        }
        // Only what belongs to the epochs the probe has passed: a peer process may
        // already be in the next epoch and have sent this worker some of it.
        let seen = changes.borrow_mut().take_before(epoch);
        let received = tallies.borrow_mut().take_before(epoch);
        if report.send((seen, received, None)).is_err() {
            return;
        }
    }
}

/// An offset into a flat buffer of changes: a `u32` where the buffer is small enough.
trait Offset: Copy {
    fn new(at: usize) -> Self;
    fn get(self) -> usize;
}

impl Offset for u32 {
    fn new(at: usize) -> u32 {
        at as u32
    }
    fn get(self) -> usize {
        self as usize
    }
}

impl Offset for usize {
    fn new(at: usize) -> usize {
        at
    }
    fn get(self) -> usize {
        self
    }
}

/// Nets the flat changes `seen` ([`render::SeenChanges`]) into `applied`: the changes are
/// sorted by relation and row through their offsets `O` (every offset fits an `O`), and
/// a row whose diffs add up to zero did not change.
fn net<O: Offset>(seen: &[u32], arity: &[usize], derived: &[bool], applied: &mut Applied) {
    let mut starts: Vec<O> = Vec::new();
    let mut at = 0;
    while at < seen.len() {
        starts.push(O::new(at));
        at += 2 + arity[seen[at] as usize];
    }
    let change = |start: O| {
        let (start, pred) = (start.get(), seen[start.get()] as usize);
        (pred, &seen[start + 2..start + 2 + arity[pred]])
    };
    starts.sort_unstable_by(|&a, &b| change(a).cmp(&change(b)));
    // The derived changes, in order: per relation its arity, row count and values, flat.
    type Flat = (PredId, usize, usize, Vec<u32>);
    let (mut added, mut removed): (Vec<Flat>, Vec<Flat>) = (Vec::new(), Vec::new());
    let push = |groups: &mut Vec<Flat>, id: PredId, values: &[u32]| {
        if groups.last().is_none_or(|(p, ..)| *p != id) {
            groups.push((id, values.len(), 0, Vec::new()));
        }
        let (_, _, len, flat) = groups.last_mut().expect("a group was just pushed");
        flat.extend_from_slice(values);
        *len += 1;
    };
    let mut i = 0;
    while i < starts.len() {
        let (pred, values) = change(starts[i]);
        let mut diff: isize = 0;
        while i < starts.len() && change(starts[i]) == (pred, values) {
            diff += seen[starts[i].get() + 1] as i32 as isize;
            i += 1;
        }
        let id = PredId(pred as u32);
        match diff {
            0 => {}
            d if d > 0 && derived[pred] => push(&mut added, id, values),
            d if d > 0 => applied.inserted.push((id, Row::new(values))),
            _ if derived[pred] => push(&mut removed, id, values),
            _ => applied.deleted.push((id, Row::new(values))),
        }
    }
    let tuples = |groups: Vec<Flat>| {
        groups.into_iter().map(|(p, arity, len, values)| (p, Tuples::from_sorted(arity, len, values))).collect()
    };
    applied.derived_added = tuples(added);
    applied.derived_removed = tuples(removed);
}

/// The process that gives `row` of relation `pred` to the dataflow.
fn owner(pred: usize, row: &Row, processes: usize) -> usize {
    if processes == 1 {
        return 0;
    }
    let mut hasher = FxHasher::default();
    (pred, row).hash(&mut hasher);
    (hasher.finish() % processes as u64) as usize
}

/// What timely's panic on a lost connection means for a user.
pub(crate) fn lost_peer(network: &str) -> String {
    let detail = network.strip_prefix("timely communication error: ").unwrap_or(network);
    format!("a peer process went away (it stopped, ran out of memory or lost the network): {detail}")
}

impl Drop for Flow {
    fn drop(&mut self) {
        // Closing the command channels ends every worker's loop.
        self.commands.clear();
        if let Some(guards) = self.guards.take() {
            drop(guards.join());
        }
    }
}

#[cfg(test)]
mod tests;
