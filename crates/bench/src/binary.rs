//! Programs run end to end as users run them: the workload's input written as
//! tab-separated `<Rel>.facts` files and a Soufflé-dialect program (`.decl`, `.input`,
//! `.output`), then one child process that reads the files, evaluates and writes
//! `<Rel>.csv` — the `dlc` binary, or Soufflé's interpreter or a program Soufflé compiled.
//! Writing the inputs is outside the clock; the child's wall time and peak resident set
//! (its `VmHWM` in `/proc`) are the measurement, and the rows of the
//! output file are counted afterwards.

use crate::dlc::Change;
use crate::measure::System;
use crate::workload::{Edb, Query, Rules, Workload, ORDERED_LIST_DERIVED, ORDERED_LIST_RULES};
use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The relation a query's output file holds: the query predicate for the full relation,
/// `Q` for a selection (`Q(y) :- R(c, y).`).
pub fn output_relation(workload: &Workload, query: Query) -> &'static str {
    match query {
        Query::Full => workload.query_pred(),
        _ => "Q",
    }
}

/// The workload's rules as a Soufflé program over `number` columns, reading every input
/// relation from `<Rel>.facts` and writing the output relation of `query`: the whole
/// query predicate, or for a point query `Q(y) :- R(c, y).` (a single output relation
/// that selects a constant, which dlc computes through magic sets).
pub fn souffle_program(workload: &Workload, query: Query) -> Result<String, String> {
    let decl = |name: &str, arity: usize| {
        let columns: Vec<String> = ["x", "y", "z", "w"][..arity].iter().map(|c| format!("{c}:number")).collect();
        format!(".decl {name}({})\n", columns.join(", "))
    };
    let binary = |name: &str| decl(name, 2);
    let mut text = String::new();
    if let Workload::Program { .. } | Workload::Project { .. } = workload {
        return Err("generated programs have no facts files".into());
    }
    if matches!(workload, Workload::OrderedList { .. }) && query != Query::Full {
        return Err("the ordered list's relations have four columns: it runs the whole relation only".into());
    }
    for (name, arity) in workload.inputs() {
        text += &decl(name, arity);
        let _ = writeln!(text, ".input {name}");
    }
    match workload {
        Workload::Tc { rules, .. } => {
            text += &binary("R");
            text += "R(x, y) :- E(x, y).\n";
            text += match rules {
                Rules::Rlin => "R(x, z) :- E(x, y), R(y, z).\n",
                Rules::Llin => "R(x, z) :- R(x, y), E(y, z).\n",
                Rules::NonLinear => "R(x, z) :- R(x, y), R(y, z).\n",
            };
        }
        Workload::SameGen { .. } => {
            text += &binary("sg");
            text += "sg(x, y) :- par(x, p), par(y, p).\nsg(x, y) :- par(x, p), sg(p, q), par(y, q).\n";
        }
        Workload::PointsTo { fields: 0, .. } => {
            text += &binary("pt");
            text += &binary("hpt");
            text += concat!(
                "pt(v, o) :- alloc(v, o).\n",
                "pt(v, o) :- assign(v, w), pt(w, o).\n",
                "pt(v, o) :- load(v, p), pt(p, b), hpt(b, o).\n",
                "hpt(b, o) :- store(p, w), pt(p, b), pt(w, o).\n",
            );
        }
        Workload::Unreach { .. } => {
            text += &binary("R");
            text += ".decl N(x:number)\n";
            text += &binary("U");
            text += concat!(
                "R(x, y) :- E(x, y).\n",
                "R(x, z) :- R(x, y), E(y, z).\n",
                "N(x) :- E(x, _).\n",
                "N(y) :- E(_, y).\n",
                "U(x, y) :- N(x), N(y), !R(x, y).\n",
            );
        }
        Workload::Hops { hops, .. } => {
            text += ".decl H(x:number, y:number, n:number)\n";
            text += &binary("Hop");
            let _ = writeln!(text, "H(x, y, 1) :- E(x, y).\nH(x, z, n + 1) :- H(x, y, n), E(y, z), n < {hops}.");
            text += "Hop(x, y) :- H(x, y, _).\n";
        }
        Workload::Degree { .. } => {
            text += ".decl Node(x:number)\n";
            text += &binary("Deg");
            text += "Node(x) :- E(x, _).\nNode(y) :- E(_, y).\nDeg(x, d) :- Node(x), d = count : E(x, _).\n";
        }
        Workload::ShortestPath { subsumption, .. } => {
            text += &binary("Dist");
            text += "Dist(y, w) :- E(0, y, w).\n";
            text += match subsumption {
                false => "Dist(y, d) :- d = min d0 + w : { Dist(x, d0), E(x, y, w) }.\n",
                true => "Dist(y, d0 + w) :- Dist(x, d0), E(x, y, w).\nDist(y, d1) <= Dist(y, d2) :- d2 < d1.\n",
            };
        }
        Workload::MinHops { hops, .. } => {
            text += ".decl H(x:number, y:number, n:number)\n";
            text += &binary("Dist");
            let _ = writeln!(text, "H(x, y, 1) :- E(x, y).\nH(x, z, n + 1) :- H(x, y, n), E(y, z), n < {hops}.");
            text += "Dist(y, d) :- H(0, y, _), d = min n : H(0, y, n).\n";
        }
        Workload::PointsTo { .. } => {
            text += &binary("pt");
            text += &decl("hpt", 3);
            text += concat!(
                "pt(v, o) :- alloc(v, o).\n",
                "pt(v, o) :- assign(v, w), pt(w, o).\n",
                "pt(v, o) :- load(v, p, f), pt(p, b), hpt(b, f, o).\n",
                "hpt(b, f, o) :- store(p, f, w), pt(p, b), pt(w, o).\n",
            );
        }
        Workload::Strings { .. } => {
            text += ".decl Name(c:number, n:symbol)\n.decl Sig(m:number, s:symbol)\n.decl Prefix(c:number, p:symbol)\n";
            text += &binary("Hit");
            text += concat!(
                "Name(c, n) :- M(_, c), n = cat(\"org.pkg\", to_string(c / 100), \".Class\", to_string(c)).\n",
                "Sig(m, s) :- M(m, c), Name(c, n), s = cat(n, \".m\", to_string(m), \"(I)V\").\n",
                "Prefix(c, p) :- Name(c, n), p = substr(n, 0, strlen(n) - 6).\n",
                "Hit(m, c) :- M(m, c), Sig(m, s), contains(\"7(\", s), Prefix(c, p), strlen(p) > 10.\n",
            );
        }
        Workload::OrderedList { .. } => {
            for (name, arity) in ORDERED_LIST_DERIVED {
                text += &decl(name, arity);
            }
            text += ORDERED_LIST_RULES;
        }
        Workload::Program { .. } | Workload::Project { .. } => unreachable!("rejected above"),
    }
    let pred = workload.query_pred();
    match query {
        Query::Full => {}
        Query::Point(c) => {
            let _ = writeln!(text, ".decl Q(y:number)\nQ(y) :- {pred}({c}, y).");
        }
        other => return Err(format!("the binary table runs full and point queries, not {other}")),
    }
    let _ = writeln!(text, ".output {}", output_relation(workload, query));
    Ok(text)
}

/// The files of one end-to-end run in a directory of their own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub dir: PathBuf,
}

impl Layout {
    pub fn program(&self) -> PathBuf {
        self.dir.join("prog.dl")
    }
    pub fn input(&self) -> PathBuf {
        self.dir.join("in")
    }
    pub fn output(&self) -> PathBuf {
        self.dir.join("out")
    }
    /// The `host:port` lines of a cluster run.
    pub fn hosts(&self) -> PathBuf {
        self.dir.join("hosts")
    }
    /// Where a Soufflé compilation puts its executable.
    pub fn executable(&self) -> PathBuf {
        self.dir.join("exe")
    }
}

/// Writes the program and every input relation as `<Rel>.facts`, one tab-separated line
/// per tuple, and creates the empty output directory.
pub fn write_inputs(layout: &Layout, program: &str, edb: &Edb) -> std::io::Result<()> {
    std::fs::create_dir_all(layout.input())?;
    std::fs::create_dir_all(layout.output())?;
    std::fs::write(layout.program(), program)?;
    for relation in &edb.relations {
        let file = std::fs::File::create(layout.input().join(format!("{}.facts", relation.name)))?;
        let mut out = std::io::BufWriter::new(file);
        for tuple in relation.tuples() {
            for (i, v) in tuple.iter().enumerate() {
                write!(out, "{}{v}", if i == 0 { "" } else { "\t" })?;
            }
            out.write_all(b"\n")?;
        }
        out.flush()?;
    }
    Ok(())
}

/// The programs an end-to-end run calls: the `dlc` binary and, if given, Soufflé.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tools {
    pub dlc: PathBuf,
    pub souffle: Option<PathBuf>,
}

impl Tools {
    /// `$DLC`, or the `dlc` beside this executable (both are built into the same
    /// `target/release`); `$SOUFFLE` if set.
    pub fn from_env() -> Self {
        let beside = std::env::current_exe().ok().and_then(|exe| exe.parent().map(|d| d.join("dlc")));
        let dlc = std::env::var_os("DLC").map(PathBuf::from).or(beside).unwrap_or_else(|| PathBuf::from("dlc"));
        Tools { dlc, souffle: std::env::var_os("SOUFFLE").map(PathBuf::from) }
    }
}

/// The command lines of one system's run: a compilation outside the clock (Soufflé's
/// `-o`), then the measured run. Every system reads `in/`, writes `out/`, one thread.
pub fn commands(
    system: System,
    tools: &Tools,
    layout: &Layout,
) -> Result<(Option<Vec<OsString>>, Vec<OsString>), String> {
    let os = |p: PathBuf| p.into_os_string();
    let io = |args: &mut Vec<OsString>| {
        args.extend(["-F".into(), os(layout.input()), "-D".into(), os(layout.output())]);
    };
    let souffle = || tools.souffle.clone().ok_or_else(|| "SOUFFLE is not set: no Soufflé binary to run".to_string());
    match system {
        System::DlcBinary | System::DlcBinaryDred | System::DlcBinaryRanked | System::DlcBinaryRerun => {
            // One thread, like the in-process run beside it and Soufflé's `-j1`.
            let mut run = vec![os(tools.dlc.clone())];
            io(&mut run);
            run.extend(["--threads".into(), "1".into()]);
            match system {
                System::DlcBinaryDred => run.extend(["--maintenance".into(), "dred".into()]),
                System::DlcBinaryRanked => run.extend(["--maintenance".into(), "ranked".into()]),
                _ => {}
            }
            run.push(os(layout.program()));
            Ok((None, run))
        }
        System::SouffleInterpreted => {
            let mut run = vec![os(souffle()?)];
            io(&mut run);
            run.extend(["-j1".into(), os(layout.program())]);
            Ok((None, run))
        }
        System::SouffleCompiled => {
            let compile = vec![os(souffle()?), "-o".into(), os(layout.executable()), os(layout.program())];
            let mut run = vec![os(layout.executable())];
            io(&mut run);
            run.push("-j1".into());
            Ok((Some(compile), run))
        }
        System::DlcDifferential | System::DlcDifferential2 | System::DlcCluster2 => {
            let workers = if system == System::DlcDifferential2 { "2" } else { "1" };
            let mut run = vec![os(tools.dlc.clone())];
            io(&mut run);
            run.extend(["--engine".into(), "differential".into(), "--workers".into(), workers.into()]);
            if system == System::DlcCluster2 {
                // Each process writes its part of each file into `out/`
                // (`<Rel>.part-<I+1>-of-2.csv`).
                run.extend(["--processes".into(), "2".into(), "--hosts".into(), os(layout.hosts())]);
            }
            run.push(os(layout.program()));
            Ok((None, run))
        }
        other => Err(format!("{other} is not run through a binary")),
    }
}

/// The machine's cores: what `dlc` splits its joins over by default.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The measured run `run` of `system` (from [`commands`]) on every core, for the thread
/// table: `dlc` without its `--threads 1` (its default is every core), Soufflé's compiled
/// program with `-jN` for the machine's N cores. None for the other systems.
pub fn on_every_core(system: System, run: &[OsString]) -> Option<Vec<OsString>> {
    let one = match system {
        System::DlcBinary => ["--threads", "1"].as_slice(),
        System::SouffleCompiled => ["-j1"].as_slice(),
        _ => return None,
    };
    let at = run.windows(one.len()).position(|w| w.iter().zip(one).all(|(a, b)| a == b))?;
    let mut every = run.to_vec();
    let all: Vec<OsString> = match system {
        System::SouffleCompiled => vec![format!("-j{}", cores()).into()],
        _ => Vec::new(),
    };
    every.splice(at..at + one.len(), all);
    Some(every)
}

/// The flags of a `dlc` run that applies `change` as one update batch after evaluating,
/// its batch file written: the program's output relation is maintained and written after
/// the batch, as a user of the Soufflé program runs it.
fn update_args(system: System, workload: &Workload, change: Change, layout: &Layout) -> Result<Vec<OsString>, String> {
    if matches!(system, System::SouffleInterpreted | System::SouffleCompiled) {
        return Err(format!("{system} applies no update batches"));
    }
    let (Workload::Tc { .. } | Workload::Unreach { .. }) = workload else {
        return Err("update batches change the edges of a graph".into());
    };
    let (deleted, inserted) = change.edges_of(&workload.generate());
    let deletes = deleted.iter().map(|(u, v)| format!("-E({u},{v}).\n"));
    let line: String = deletes.chain(inserted.iter().map(|(u, v)| format!("+E({u},{v}).\n"))).collect();
    let batch = layout.dir.join("batch.updates");
    std::fs::write(&batch, line).map_err(|e| format!("cannot write the batch: {e}"))?;
    Ok(vec!["--updates".into(), batch.into_os_string()])
}

/// The processes of a cluster of `processes` (each `run` with `--process I` added), on
/// free ports of 127.0.0.1 written to the layout's hosts file, measured together: the
/// time until the last one exits, and the largest peak memory of any of them.
fn run_cluster_measured(
    run: &[OsString],
    processes: usize,
    layout: &Layout,
    timeout: Duration,
) -> Result<ChildCost, String> {
    let ports: Vec<std::net::TcpListener> = (0..processes)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("no free port: {e}"))?;
    let hosts: String = ports.iter().filter_map(|l| l.local_addr().ok()).map(|a| format!("{a}\n")).collect();
    drop(ports);
    std::fs::write(layout.hosts(), hosts).map_err(|e| format!("cannot write the hosts file: {e}"))?;
    let runs: Vec<_> = (0..processes)
        .map(|i| {
            let mut argv = run.to_vec();
            argv.extend(["--process".into(), i.to_string().into()]);
            std::thread::spawn(move || run_measured(&argv, timeout))
        })
        .collect();
    let mut cost = ChildCost { secs: 0.0, rss_mib: 0.0, batch_secs: None, eval_secs: None, stdout_lines: 0 };
    let longer = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    for run in runs {
        let one = run.join().map_err(|_| "a measuring thread panicked".to_string())??;
        cost = ChildCost {
            secs: cost.secs.max(one.secs),
            rss_mib: cost.rss_mib.max(one.rss_mib),
            batch_secs: longer(cost.batch_secs, one.batch_secs),
            eval_secs: longer(cost.eval_secs, one.eval_secs),
            stdout_lines: cost.stdout_lines.max(one.stdout_lines),
        };
    }
    Ok(cost)
}

/// Wall time and peak resident set (MiB; NaN when the child ended too soon to be read)
/// of one child process.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChildCost {
    pub secs: f64,
    pub rss_mib: f64,
    /// The time of the update batch, when the child (`dlc --updates`) reported one.
    pub batch_secs: Option<f64>,
    /// The time of the evaluation, when the child reported one (`evaluated in …`).
    pub eval_secs: Option<f64>,
    /// The lines the child wrote to standard output.
    pub stdout_lines: u64,
}

/// Runs `argv` to completion, its output discarded, killing it after `timeout`; its
/// wall time from spawn to exit and its peak resident set, the last `VmHWM` read from
/// `/proc/<pid>/status` before it exited (read continually for its first 20 ms, then
/// every 200 µs: a high-water mark only grows, so at most the growth of its last
/// moments is missed).
pub fn run_measured(argv: &[OsString], timeout: Duration) -> Result<ChildCost, String> {
    let (program, args) = argv.split_first().ok_or("an empty command line")?;
    // Files without a name (removed by the system when closed, whatever fails here): the
    // child writes through a second handle, read back from the start once it exited.
    let (mut err_file, err) = unnamed_file().map_err(|e| format!("cannot create a file for standard error: {e}"))?;
    let (mut out_file, out) = unnamed_file().map_err(|e| format!("cannot create a file for standard output: {e}"))?;
    let start = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", Path::new(program).display()))?;
    let status_path = PathBuf::from(format!("/proc/{}/status", child.id()));
    let (mut peak_kib, mut readings) = (0.0f64, 0);
    let mut read_peak = || {
        if let Some(kib) = std::fs::read_to_string(&status_path).ok().as_deref().and_then(high_water_kib) {
            peak_kib = peak_kib.max(kib);
            readings += 1;
        }
    };
    read_peak();
    let status = crate::measure::wait_or_kill(&mut child, start, timeout, |elapsed| {
        read_peak();
        // Short runs are polled without sleeping, so that even a run of a millisecond
        // is read a few times; longer ones every 200 µs.
        if elapsed < Duration::from_millis(20) {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(200));
        }
    })?;
    let secs = start.elapsed().as_secs_f64();
    let message = read_from_start(&mut err_file);
    let stdout = read_from_start(&mut out_file);
    let (batch_secs, eval_secs) = (batch_time(&stdout), eval_time(&message));
    let stdout_lines = stdout.lines().count() as u64;
    if !status.success() {
        let mut message: String =
            message.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
        message.truncate(300);
        return Err(format!("{} failed ({status}): {message}", Path::new(program).display()));
    }
    // A child that ends within a millisecond or two may have been read only while it
    // exited, when its mappings are being torn down: no figure then.
    let rss_mib = if readings >= MIN_READINGS { peak_kib / 1024.0 } else { f64::NAN };
    Ok(ChildCost { secs, rss_mib, batch_secs, eval_secs, stdout_lines })
}

/// The time in seconds of the first update batch in a report of `dlc --updates`: its
/// `  time: 12.34 ms` (or `1.234 s`) line.
fn batch_time(stdout: &str) -> Option<f64> {
    stdout.lines().find_map(|l| duration(l.strip_prefix("  time: ")?))
}

/// The time in seconds of the evaluation in what `dlc -D` writes to standard error: its
/// summary line's `evaluated in 12.34 ms` (or `1.234 s`) at its end.
fn eval_time(stderr: &str) -> Option<f64> {
    stderr.lines().find_map(|l| duration(&l[l.find("evaluated in ")? + "evaluated in ".len()..]))
}

/// `12.34 ms` or `1.234 s`, in seconds.
fn duration(text: &str) -> Option<f64> {
    match text.strip_suffix(" ms") {
        Some(ms) => ms.parse::<f64>().ok().map(|ms| ms / 1e3),
        None => text.strip_suffix(" s")?.parse().ok(),
    }
}

/// The readings of `/proc/<pid>/status` it takes to report a child's peak memory.
const MIN_READINGS: u32 = 20;

/// The `VmHWM` of a `/proc/<pid>/status` text, in KiB.
fn high_water_kib(status: &str) -> Option<f64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// A file of the temp directory that has no name, and a second handle to it for a child
/// to write to.
fn unnamed_file() -> std::io::Result<(std::fs::File, std::fs::File)> {
    let file = tempfile::tempfile()?;
    let other = file.try_clone()?;
    Ok((file, other))
}

/// The text of `file` from its start (empty if it cannot be read).
fn read_from_start(file: &mut std::fs::File) -> String {
    use std::io::{Read, Seek};
    let mut text = String::new();
    if file.rewind().is_ok() {
        let _ = file.read_to_string(&mut text);
    }
    text
}

/// A fresh directory in the temp directory, removed with everything in it when the
/// guard is dropped.
fn temp_dir(what: &str) -> Result<tempfile::TempDir, String> {
    tempfile::Builder::new()
        .prefix(&format!("dlc-bench-{what}-"))
        .tempdir()
        .map_err(|e| format!("cannot create a temp directory: {e}"))
}

/// Writes the project of `parts` parts into `layout`'s directory and runs the `dlc`
/// binary on it to `--emit ir`. Its rows are the lines of the IR it printed.
fn run_project(tools: &Tools, parts: u32, layout: &Layout, timeout: Duration) -> Result<Measured, String> {
    std::fs::create_dir_all(&layout.dir).map_err(|e| format!("cannot create {}: {e}", layout.dir.display()))?;
    for (name, text) in crate::project::files(parts) {
        let path = layout.dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let argv: Vec<OsString> = vec![
        tools.dlc.clone().into_os_string(),
        layout.dir.join("main.dl").into_os_string(),
        "--emit".into(),
        "ir".into(),
    ];
    let run = run_measured(&argv, timeout)?;
    Ok(Measured { run, read_secs: 0.0, compile_secs: None, rows: run.stdout_lines, every_core: None })
}

/// The lines of a file: the rows of an output relation.
pub fn count_rows(path: &Path) -> Result<u64, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read the output {}: {e}", path.display()))?;
    Ok(bytes.iter().filter(|&&b| b == b'\n').count() as u64)
}

/// What one end-to-end run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub run: ChildCost,
    /// Reading every input file into memory once (`std::fs::read`, the files just
    /// written and so in the page cache): the least any reader of the input pays.
    pub read_secs: f64,
    /// The compilation before the run (Soufflé's `-o`), if any.
    pub compile_secs: Option<f64>,
    /// The rows of the output relation's file.
    pub rows: u64,
    /// The same run on every core ([`on_every_core`]), when it has such a form and no
    /// update batch; its output is checked to have the same rows.
    pub every_core: Option<ChildCost>,
}

/// Writes the inputs of `workload` and `query` to a fresh directory, runs `system` on
/// them and counts the rows it wrote; the directory is removed afterwards, also when the
/// run fails.
pub fn run(
    system: System,
    tools: &Tools,
    workload: &Workload,
    query: Query,
    change: Option<Change>,
    edb: &Edb,
    timeout: Duration,
) -> Result<Measured, String> {
    let dir = temp_dir("run")?;
    let layout = &Layout { dir: dir.path().to_path_buf() };
    if let (System::DlcBinaryIr, Workload::Project { parts }) = (system, workload) {
        return run_project(tools, *parts, layout, timeout);
    }
    let program = souffle_program(workload, query)?;
    let (compile, mut run) = commands(system, tools, layout)?;
    // A rerun reads the input with the change made; any other run applies it as a batch.
    let changed;
    let (edb, batch) = match (system, change) {
        (System::DlcBinaryRerun, Some(change)) => {
            changed = change.apply_to(edb);
            (&changed, None)
        }
        (System::DlcBinaryRerun, None) => return Err("a rerun needs a change".into()),
        (_, change) => (edb, change),
    };
    write_inputs(layout, &program, edb).map_err(|e| format!("cannot write the inputs: {e}"))?;
    if let Some(change) = batch {
        run.extend(update_args(system, workload, change, layout)?);
    }
    let compile_secs = match compile {
        Some(argv) => Some(run_measured(&argv, timeout)?.secs),
        None => None,
    };
    let read = Instant::now();
    let mut bytes = 0;
    for relation in &edb.relations {
        let path = layout.input().join(format!("{}.facts", relation.name));
        bytes += std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?.len();
    }
    let read_secs = read.elapsed().as_secs_f64();
    std::hint::black_box(bytes);
    let cost = match system {
        System::DlcCluster2 => run_cluster_measured(&run, 2, layout, timeout)?,
        _ => run_measured(&run, timeout)?,
    };
    let name = output_relation(workload, query);
    let output = layout.output().join(format!("{name}.csv"));
    let rows = match system {
        // Each process of the cluster writes its part of the relation.
        System::DlcCluster2 => (1..=2)
            .map(|i| count_rows(&layout.output().join(format!("{name}.part-{i}-of-2.csv"))))
            .sum::<Result<_, _>>()?,
        _ => count_rows(&output)?,
    };
    // The large relations' runs take minutes each: they run on one thread only.
    let large = matches!(workload, Workload::OrderedList { .. });
    let every_core = match on_every_core(system, &run).filter(|_| batch.is_none() && !large) {
        Some(argv) => {
            std::fs::remove_file(&output).map_err(|e| format!("cannot remove {}: {e}", output.display()))?;
            let cost = run_measured(&argv, timeout)?;
            let again = count_rows(&output)?;
            if again != rows {
                return Err(format!("{again} rows on every core, {rows} on one"));
            }
            Some(cost)
        }
        None => None,
    };
    Ok(Measured { run: cost, read_secs, compile_secs, rows, every_core })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Graph;

    #[test]
    fn programs_are_souffle_programs_dlc_reads() {
        let chain = Workload::Tc { rules: Rules::Llin, graph: Graph::Chain { nodes: 5 } };
        let points_to = Workload::PointsTo { vars: 10, allocs: 3, fields: 0, assigns: 5, loads: 2, stores: 2, seed: 1 };
        let fields = Workload::PointsTo { vars: 10, allocs: 3, fields: 3, assigns: 5, loads: 2, stores: 2, seed: 1 };
        for (workload, query) in
            [(chain, Query::Full), (chain, Query::Point(0)), (points_to, Query::Point(4)), (fields, Query::Full)]
        {
            let text = souffle_program(&workload, query).unwrap();
            assert!(syntax::souffle::looks_like_souffle(&text), "{text}");
            let mut includes = syntax::souffle::NoIncludes;
            let (parsed, diagnostics) = syntax::souffle::parse_program(&text, ir::FileId(0), &mut includes);
            assert!(!diag::has_errors(&diagnostics), "{text}\n{diagnostics:?}");
            let parsed = parsed.expect("a program");
            assert_eq!(parsed.outputs.len(), 1);
            assert_eq!(parsed.program.pred_name(parsed.outputs[0].pred), output_relation(&workload, query));
        }
        assert!(souffle_program(&chain, Query::Target(3)).is_err());
    }

    #[test]
    fn command_lines_read_in_write_out_and_use_one_thread() {
        let layout = Layout { dir: PathBuf::from("/tmp/x") };
        let tools = Tools { dlc: "dlc".into(), souffle: Some("souffle".into()) };
        let text =
            |argv: &[OsString]| argv.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ");
        let (none, dlc) = commands(System::DlcBinary, &tools, &layout).unwrap();
        assert!(none.is_none());
        assert_eq!(text(&dlc), "dlc -F /tmp/x/in -D /tmp/x/out --threads 1 /tmp/x/prog.dl");
        let (_, interp) = commands(System::SouffleInterpreted, &tools, &layout).unwrap();
        assert_eq!(text(&interp), "souffle -F /tmp/x/in -D /tmp/x/out -j1 /tmp/x/prog.dl");
        let (compile, exe) = commands(System::SouffleCompiled, &tools, &layout).unwrap();
        assert_eq!(text(&compile.unwrap()), "souffle -o /tmp/x/exe /tmp/x/prog.dl");
        assert_eq!(text(&exe), "/tmp/x/exe -F /tmp/x/in -D /tmp/x/out -j1");
        assert_eq!(
            text(&on_every_core(System::DlcBinary, &dlc).unwrap()),
            "dlc -F /tmp/x/in -D /tmp/x/out /tmp/x/prog.dl"
        );
        let every = format!("/tmp/x/exe -F /tmp/x/in -D /tmp/x/out -j{}", cores());
        assert_eq!(text(&on_every_core(System::SouffleCompiled, &exe).unwrap()), every);
        assert!(on_every_core(System::SouffleInterpreted, &interp).is_none());
        let without = Tools { souffle: None, ..tools };
        assert!(commands(System::SouffleCompiled, &without, &layout).unwrap_err().contains("SOUFFLE"));
    }

    /// A stand-in for Soufflé: a shell script that writes the closure of a 5-node chain
    /// (10 rows) as `-D DIR/R.csv`, or with `-o EXE` writes an executable doing the same.
    fn fake_souffle(dir: &Path) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let rows = "0\t1\n0\t2\n0\t3\n0\t4\n1\t2\n1\t3\n1\t4\n2\t3\n2\t4\n3\t4\n";
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("rows"), rows).unwrap();
        let script = format!(
            r#"#!/bin/sh
out=""; exe=""
while [ $# -gt 0 ]; do
  case "$1" in
    -D) out="$2"; shift ;;
    -o) exe="$2"; shift ;;
  esac
  shift
done
if [ -n "$exe" ]; then
  printf '#!/bin/sh\nexec "%s" "$@"\n' "$0" > "$exe"; chmod +x "$exe"; exit 0
fi
cp "{rows}" "$out/R.csv"
"#,
            rows = dir.join("rows").display()
        );
        let path = dir.join("souffle");
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn souffle_runs_measure_the_child_and_count_its_rows() {
        let dir = temp_dir("fake").unwrap();
        let tools = Tools { dlc: "dlc".into(), souffle: Some(fake_souffle(dir.path())) };
        let workload = Workload::Tc { rules: Rules::Rlin, graph: Graph::Chain { nodes: 5 } };
        let edb = workload.generate();
        for system in [System::SouffleInterpreted, System::SouffleCompiled] {
            let m = run(system, &tools, &workload, Query::Full, None, &edb, Duration::from_secs(20)).unwrap();
            assert_eq!(m.rows, 10, "{system}");
            assert!(m.run.secs > 0.0 && (m.run.rss_mib.is_nan() || m.run.rss_mib > 0.0), "{m:?}");
            assert_eq!(m.compile_secs.is_some(), system == System::SouffleCompiled);
            // The compiled program runs again on every core, with the same rows.
            assert_eq!(m.every_core.is_some(), system == System::SouffleCompiled);
        }
        let failing = Tools { souffle: Some(dir.path().join("missing")), ..tools };
        assert!(run(System::SouffleInterpreted, &failing, &workload, Query::Full, None, &edb, Duration::from_secs(5))
            .is_err());
    }

    #[test]
    fn differential_runs_name_their_engine_and_a_batch_its_file() {
        let dir = temp_dir("differential").unwrap();
        let layout = Layout { dir: dir.path().to_path_buf() };
        let tools = Tools { dlc: "dlc".into(), souffle: None };
        let text =
            |argv: &[OsString]| argv.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ");
        let (_, two) = commands(System::DlcDifferential2, &tools, &layout).unwrap();
        assert!(text(&two).contains("--engine differential --workers 2"), "{}", text(&two));
        let (_, cluster) = commands(System::DlcCluster2, &tools, &layout).unwrap();
        assert!(text(&cluster).contains("--processes 2 --hosts"), "{}", text(&cluster));
        let workload = Workload::Tc { rules: Rules::Llin, graph: Graph::Chain { nodes: 4 } };
        let args = update_args(System::DlcBinary, &workload, Change::Delete(1, 2), &layout).unwrap();
        assert!(text(&args).starts_with("--updates") && !text(&args).contains("--query"), "{}", text(&args));
        assert_eq!(std::fs::read_to_string(layout.dir.join("batch.updates")).unwrap(), "-E(1,2).\n");
        assert!(update_args(System::SouffleCompiled, &workload, Change::Insert(0, 3), &layout).is_err());
        assert_eq!(batch_time("batch 1: +1 -0\n  time: 1.250 s\n"), Some(1.25));
        assert_eq!(batch_time("batch 1: +1 -0\n  time: 250.00 ms\n"), Some(0.25));
        assert_eq!(batch_time("4 answer(s)\n"), None);
        let written = "wrote out/R.csv (3 row(s)); original program: R 3 (3 derived); evaluated in 250.00 ms\n";
        assert_eq!(eval_time(written), Some(0.25));
        assert_eq!(eval_time("evaluated in 1.5 s\n"), Some(1.5));
        assert_eq!(eval_time("4 answer(s)\n"), None);
    }

    #[test]
    fn inputs_are_tab_separated_facts_files() {
        let dir = temp_dir("inputs").unwrap();
        let layout = Layout { dir: dir.path().to_path_buf() };
        let workload = Workload::Tc { rules: Rules::Rlin, graph: Graph::Chain { nodes: 4 } };
        write_inputs(&layout, "prog", &workload.generate()).unwrap();
        assert_eq!(std::fs::read_to_string(layout.input().join("E.facts")).unwrap(), "0\t1\n1\t2\n2\t3\n");
        assert_eq!(count_rows(&layout.input().join("E.facts")).unwrap(), 3);
    }
}
