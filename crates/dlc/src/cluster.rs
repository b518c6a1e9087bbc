//! Running as one process of a cluster: the flags that place it, the hosts file, and
//! joining the others before anything is evaluated. The connection goes to the
//! pipeline's differential engine in its options ([`pipeline::ClusterLink`]).

use crate::cli::{Emit, EngineArg, RunArgs};
use diag::{Code, Diagnostic, SourceMap, Span};
use ir::PredId;
use pipeline::LoadedProgram;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Duration;

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

/// Joins the cluster `args` asks for, if any, for the program and input `prepared` read
/// (`shares` of the facts files), and returns the connection for the pipeline's engine
/// and one line saying what this process read. Every process must be started
/// with the same command line but `--process`, `-D` and `--connect-timeout`, the same
/// program and input files of the same lengths, and the same updates: the digest of
/// these is compared with every peer's. Then the texts this process read get the ids
/// their owners assign ([`flow::Connection::open_with_texts`]) and its facts and updates
/// are rewritten to them. Only runs that evaluate connect; the others have nothing to
/// share.
pub fn join_cluster(
    args: &RunArgs,
    prepared: &mut LoadedProgram,
    shares: &crate::load::Shares,
) -> Result<Option<(pipeline::ClusterLink, String)>, Diagnostic> {
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
    for (path, len, _) in &shares.read {
        (path, len).hash(&mut hasher);
    }
    for batch in &prepared.batches {
        batch.changes.hash(&mut hasher);
    }
    let cluster =
        flow::Cluster { process, hosts, timeout: Duration::from_secs(flags.connect_timeout), digest: hasher.finish() };
    let workers = flags.workers.unwrap_or(1);
    let program = &prepared.program;
    let read: Vec<String> = (prepared.program_values..program.consts.len())
        .map(|id| program.consts.text(ir::Const(id as u32)).to_string())
        .collect();
    let (connection, dictionary) =
        flow::Connection::open_with_texts(&cluster, workers, read).map_err(|e| cluster_diagnostic(&e))?;
    renumber(prepared, &dictionary);
    // A Soufflé program's outputs are written by each process in parts, so that none
    // holds the whole result; a query's answers and a check (which recomputes the whole
    // input here) need every row in every process.
    let link = match partitions_results(args, prepared) {
        true => pipeline::ClusterLink::partitioned(connection),
        false => pipeline::ClusterLink::new(connection),
    };
    Ok(Some((link, what_was_read(prepared, shares, process, flags.processes()))))
}

/// Whether each process of the cluster keeps and writes only its part of the result:
/// when it computes a Soufflé program's outputs (no query) without `--check`.
fn partitions_results(args: &RunArgs, prepared: &LoadedProgram) -> bool {
    prepared.souffle.is_some() && prepared.program.query.is_none() && args.emit == Emit::Answers && !args.check
}

/// Gives the values `prepared` read from its input the ids of the cluster's
/// `dictionary`: the program's own values keep theirs, the dictionary's texts follow in
/// its order, and every symbol column of the facts and updates is rewritten. Numbers
/// keep their own encoding.
fn renumber(prepared: &mut LoadedProgram, dictionary: &flow::Dictionary) {
    let program = &mut prepared.program;
    let local = program.consts.clone();
    let local = local.texts();
    let shared = ir::ValueStore::default();
    for id in 0..prepared.program_values {
        shared.intern(local.text(ir::Const(id as u32)));
    }
    for text in dictionary.parts.iter().flatten() {
        shared.intern(text);
    }
    let first = prepared.program_values as u32;
    let ids: Vec<u32> = (first..program.consts.len() as u32)
        .map(|id| shared.get(local.text(ir::Const(id))).map_or(id, |c| c.0))
        .collect();
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
fn what_was_read(prepared: &LoadedProgram, shares: &crate::load::Shares, process: usize, processes: usize) -> String {
    let read = &shares.read;
    let bytes: u64 = read.iter().map(|(_, _, bytes)| bytes).sum();
    let total: u64 = read.iter().map(|(_, len, _)| len).sum();
    let facts: usize = prepared.facts.preds().map(|p| prepared.facts.of(p).0).sum();
    let how = match shares.split {
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
