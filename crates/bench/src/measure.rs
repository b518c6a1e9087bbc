//! One measurement = one fresh child process. The harness re-executes its own binary as
//! `bench run-one WORKLOAD QUERY SYSTEM [CHANGE]`; the child generates the workload (not
//! timed), runs the system once, and prints a `RESULT` line with the wall time of the
//! measured region and its peak RSS (`VmHWM`). A fresh process per run keeps one
//! system's heap and page cache state from leaking into the next one's peak memory.

use crate::binary;
use crate::dlc::{self, Change, Mode};
use crate::oracle;
use crate::peers::{self, Peer};
use crate::workload::{Query, Workload};
use exec::{Maintenance, NativeEngine, Threads};
use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What is run on a workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum System {
    /// dlc with the magic-sets rewrite, semi-naive.
    Dlc,
    /// dlc evaluating the source program and filtering by the query (`--no-magic`).
    DlcNoMagic,
    /// `DlcNoMagic` with its joins split over two threads (`--threads 2`).
    DlcNoMagic2,
    /// dlc's reference naive engine on the source program.
    DlcReference,
    /// dlc's default, `--magic auto`: the rewrite with subsumption, or the source
    /// program where the rewrite cannot narrow the demand.
    DlcAuto,
    Datafrog,
    Ascent,
    Crepe,
    /// DRed (`Maintenance::Dred`; docs/semantics.md, Incremental maintenance: DRed):
    /// `Maintained::apply_counting` of one change to the materialised magic program.
    Dred,
    /// DRed with ranked over-deletion (`Maintenance::Ranked`), measured like `Dred`.
    DredRanked,
    /// `Maintenance::Auto`, dlc's default, measured like `Dred`.
    DredAuto,
    /// Planning, `exec::index_inputs` and `exec::evaluate` of the magic program on the
    /// changed EDB.
    Recompute,
    /// The whole pipeline on a generated program's text, whose size is the point: parse,
    /// lower, validate, magic rewrite, plan, and evaluate on its few inline facts.
    DlcCompile,
    /// dlc with magic sets, then `exec::Explainer` proofs of `R(0,y)` for nodes `y` at
    /// distance 1, 2 and 3 from node 0, each with a fresh explainer.
    Explain,
    /// The same on the `--no-magic` evaluation (the whole closure).
    ExplainNoMagic,
    /// The `dlc` binary end to end on facts files (`crate::binary`); with a change, its
    /// update batch kept by the default `--maintenance auto`.
    DlcBinary,
    /// The `dlc` binary applying its update batch with `--maintenance dred`.
    DlcBinaryDred,
    /// The `dlc` binary applying its update batch with `--maintenance ranked`.
    DlcBinaryRanked,
    /// The `dlc` binary evaluating the input with its change already applied, no batch:
    /// what rerunning on the changed input costs.
    DlcBinaryRerun,
    /// Soufflé's interpreter on the same files, one thread.
    SouffleInterpreted,
    /// The program Soufflé compiles (`souffle -o`, outside the clock) on the same files.
    SouffleCompiled,
    /// The `dlc` binary with `--engine differential` on one worker thread.
    DlcDifferential,
    /// The same on two worker threads of one process.
    DlcDifferential2,
    /// The same as a cluster of two processes of one worker each, on 127.0.0.1; memory
    /// is the larger of the two processes' peaks.
    DlcCluster2,
    /// The `dlc` binary reading a generated Soufflé project ([`Workload::Project`]) to
    /// `--emit ir`: compile time and memory, nothing evaluated.
    DlcBinaryIr,
}

impl System {
    const ALL: [System; 25] = [
        System::Dlc,
        System::DlcNoMagic,
        System::DlcNoMagic2,
        System::DlcReference,
        System::DlcAuto,
        System::Datafrog,
        System::Ascent,
        System::Crepe,
        System::Dred,
        System::DredRanked,
        System::DredAuto,
        System::Recompute,
        System::DlcCompile,
        System::Explain,
        System::ExplainNoMagic,
        System::DlcBinary,
        System::DlcBinaryDred,
        System::DlcBinaryRanked,
        System::DlcBinaryRerun,
        System::SouffleInterpreted,
        System::SouffleCompiled,
        System::DlcDifferential,
        System::DlcDifferential2,
        System::DlcCluster2,
        System::DlcBinaryIr,
    ];

    pub fn name(self) -> &'static str {
        match self {
            System::Dlc => "dlc",
            System::DlcNoMagic => "dlc-nomagic",
            System::DlcNoMagic2 => "dlc-nomagic-2t",
            System::DlcReference => "dlc-reference",
            System::DlcAuto => "dlc-auto",
            System::Datafrog => "datafrog",
            System::Ascent => "ascent",
            System::Crepe => "crepe",
            System::Dred => "dred",
            System::DredRanked => "dred-ranked",
            System::DredAuto => "dred-auto",
            System::Recompute => "recompute",
            System::DlcCompile => "dlc-compile",
            System::Explain => "dlc-explain",
            System::ExplainNoMagic => "dlc-explain-nomagic",
            System::DlcBinary => "dlc-binary",
            System::DlcBinaryDred => "dlc-binary-dred",
            System::DlcBinaryRanked => "dlc-binary-ranked",
            System::DlcBinaryRerun => "dlc-binary-rerun",
            System::SouffleInterpreted => "souffle",
            System::SouffleCompiled => "souffle-compiled",
            System::DlcDifferential => "dlc-differential",
            System::DlcDifferential2 => "dlc-differential-2w",
            System::DlcCluster2 => "dlc-cluster-2p",
            System::DlcBinaryIr => "dlc-binary-ir",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        System::ALL.into_iter().find(|s| s.name() == text)
    }

    pub fn peer(self) -> Option<Peer> {
        match self {
            System::Datafrog => Some(Peer::Datafrog),
            System::Ascent => Some(Peer::Ascent),
            System::Crepe => Some(Peer::Crepe),
            _ => None,
        }
    }

    pub fn is_peer(self) -> bool {
        self.peer().is_some()
    }

    /// Whether the system runs as a program of its own on facts files (`crate::binary`).
    pub fn is_binary(self) -> bool {
        matches!(
            self,
            System::DlcBinary
                | System::DlcBinaryDred
                | System::DlcBinaryRanked
                | System::DlcBinaryRerun
                | System::SouffleInterpreted
                | System::SouffleCompiled
                | System::DlcDifferential
                | System::DlcDifferential2
                | System::DlcCluster2
                | System::DlcBinaryIr
        )
    }
}

impl fmt::Display for System {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One measurement to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Job {
    pub workload: Workload,
    pub query: Query,
    pub system: System,
    pub change: Option<Change>,
}

impl Job {
    pub fn new(workload: Workload, query: Query, system: System) -> Self {
        Job { workload, query, system, change: None }
    }

    pub fn with_change(mut self, change: Change) -> Self {
        self.change = Some(change);
        self
    }

    /// The arguments of `bench run-one` for this job.
    pub fn args(&self) -> Vec<String> {
        let mut args =
            vec!["run-one".to_string(), self.workload.to_string(), self.query.to_string(), self.system.to_string()];
        args.extend(self.change.map(|c| c.to_string()));
        args
    }

    /// A stable key: the arguments joined.
    pub fn key(&self) -> String {
        self.args()[1..].join(" ")
    }

    /// Reads the arguments after `run-one`.
    pub fn parse(args: &[String]) -> Result<Self, String> {
        let usage = || "usage: bench run-one WORKLOAD QUERY SYSTEM [CHANGE]".to_string();
        let [workload, query, system, rest @ ..] = args else { return Err(usage()) };
        let system = System::parse(system).ok_or_else(|| format!("unknown system `{system}`"))?;
        let mut job = Job::new(Workload::parse(workload)?, Query::parse(query)?, system);
        match rest {
            [] => {}
            [change] => job.change = Some(Change::parse(change)?),
            _ => return Err(usage()),
        }
        Ok(job)
    }
}

/// What one run reported.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Wall seconds of the measured region.
    pub secs: f64,
    /// Peak resident set of the child, MiB.
    pub rss_mib: f64,
    /// The number of answers of the query.
    pub answers: u64,
    /// Further figures (`relation`, `load`, `index`, `eval`, `iterations`, `overdeleted`, ...).
    pub extra: BTreeMap<String, f64>,
}

impl Sample {
    pub fn get(&self, key: &str) -> Option<f64> {
        self.extra.get(key).copied()
    }

    /// The `RESULT` line a child prints.
    pub fn to_line(&self) -> String {
        let mut line = format!("RESULT secs={:.6} rss_mib={:.2} answers={}", self.secs, self.rss_mib, self.answers);
        for (k, v) in &self.extra {
            line.push_str(&format!(" {k}={v}"));
        }
        line
    }

    pub fn from_line(line: &str) -> Option<Self> {
        let mut fields: BTreeMap<String, f64> = BTreeMap::new();
        for field in line.strip_prefix("RESULT ")?.split_whitespace() {
            let (k, v) = field.split_once('=')?;
            fields.insert(k.to_string(), v.parse().ok()?);
        }
        let secs = fields.remove("secs")?;
        let rss_mib = fields.remove("rss_mib")?;
        let answers = fields.remove("answers")? as u64;
        Some(Sample { secs, rss_mib, answers, extra: fields })
    }
}

/// The peak resident set size of this process so far, in MiB (`VmHWM`).
pub fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// How long a binary run (or Soufflé's compilation) may take inside a `run-one` child,
/// which the harness kills after its own timeout anyway.
const BINARY_TIMEOUT: Duration = Duration::from_secs(600);

/// Runs the job in this process: the child side of `run-one`.
pub fn run_here(job: &Job) -> Result<Sample, String> {
    let edb = job.workload.generate();
    let mut extra = BTreeMap::new();
    let (secs, rss_mib, answers) = match job.system {
        System::Dlc | System::DlcNoMagic | System::DlcNoMagic2 | System::DlcReference | System::DlcAuto => {
            let (mode, engine) = match job.system {
                System::Dlc => (Mode::Magic, NativeEngine::Seminaive),
                System::DlcNoMagic | System::DlcNoMagic2 => (Mode::NoMagic, NativeEngine::Seminaive),
                System::DlcAuto => (Mode::Auto, NativeEngine::Seminaive),
                _ => (Mode::NoMagic, NativeEngine::Reference),
            };
            let threads = Threads::new(if job.system == System::DlcNoMagic2 { 2 } else { 1 });
            let run = match mode {
                Mode::Auto => {
                    let (run, kept) = dlc::run_auto(&job.workload, job.query, &edb, engine)?;
                    extra.insert("auto_magic".into(), f64::from(u8::from(kept)));
                    run
                }
                _ => dlc::run_with_threads(&job.workload, job.query, &edb, mode, engine, threads)?,
            };
            let rss = peak_rss_mib();
            extra.insert("load".into(), run.phases.load.as_secs_f64());
            extra.insert("compile".into(), run.phases.compile.as_secs_f64());
            extra.insert("index".into(), run.phases.index.as_secs_f64());
            extra.insert("eval".into(), run.phases.eval.as_secs_f64());
            extra.insert("iterations".into(), run.eval.iterations as f64);
            extra.insert("work".into(), run.eval.work as f64);
            if let Some(row_tests) = run.eval.row_tests {
                extra.insert("row_tests".into(), row_tests as f64);
            }
            extra.insert("relation".into(), dlc::relation_len(&run.program, &job.workload, &run.eval.db) as f64);
            extra.insert("derived".into(), (run.eval.db.total_len() - edb.fact_count()) as f64);
            (run.phases.total().as_secs_f64(), rss, dlc::count_answers(&run.program, &run.eval.db))
        }
        System::Explain | System::ExplainNoMagic => {
            let Workload::Tc { graph, .. } = job.workload else {
                return Err(format!("{} runs closure workloads only", job.system));
            };
            let mode = if job.system == System::Explain { Mode::Magic } else { Mode::NoMagic };
            let run = dlc::run(&job.workload, job.query, &edb, mode, NativeEngine::Seminaive)?;
            extra.insert("eval".into(), run.phases.eval.as_secs_f64());
            let edges = graph.edges();
            for distance in 1..=3 {
                let Some(target) = oracle::node_at_distance(graph.nodes(), &edges, 0, distance) else { continue };
                let (secs, height, nodes) = dlc::explain_pair(&run, 0, target)?;
                extra.insert(format!("explain_{distance}"), secs);
                extra.insert(format!("height_{distance}"), height as f64);
                extra.insert(format!("nodes_{distance}"), nodes as f64);
            }
            let rss = peak_rss_mib();
            (run.phases.total().as_secs_f64(), rss, dlc::count_answers(&run.program, &run.eval.db))
        }
        System::Datafrog | System::Ascent | System::Crepe => {
            let Workload::Tc { rules, .. } = job.workload else {
                return Err(format!("{} runs closure workloads only", job.system));
            };
            if job.query != Query::Full {
                return Err(format!("{} computes the full closure only", job.system));
            }
            let peer = job.system.peer().expect("matched a peer");
            let edges = edb.edges();
            let start = Instant::now();
            let Some(closure) = peers::closure(peer, rules, &edges) else {
                return Err(format!("{} is not compiled in: build the bench with `--features peers`", job.system));
            };
            let secs = start.elapsed().as_secs_f64();
            let rss = peak_rss_mib();
            extra.insert("relation".into(), closure.len as f64);
            drop(closure.keep);
            (secs, rss, closure.len)
        }
        System::Dred | System::DredRanked | System::DredAuto => {
            let change = job.change.ok_or_else(|| format!("{} needs a change", job.system))?;
            let maintenance = match job.system {
                System::Dred => Maintenance::Dred,
                System::DredRanked => Maintenance::Ranked,
                _ => Maintenance::Auto,
            };
            let mut inc = dlc::maintained(&job.workload, job.query, &edb, maintenance)?;
            extra.insert("initial_work".into(), inc.state.initial_work() as f64);
            let (counts, elapsed) = inc.apply(change, &edb);
            let rss = peak_rss_mib();
            extra.insert("overdeleted".into(), counts.overdeleted as f64);
            extra.insert("rederived".into(), counts.rederived as f64);
            extra.insert("inserted".into(), counts.inserted as f64);
            extra.insert("waves".into(), counts.waves as f64);
            // 0 DRed, 1 ranked, 2 recomputed: what `auto` chose, for the report.
            let strategy = match counts.strategy {
                exec::MaintainedBy::Dred => 0.0,
                exec::MaintainedBy::Ranked => 1.0,
                exec::MaintainedBy::Recompute => 2.0,
            };
            extra.insert("strategy".into(), strategy);
            extra.insert("work".into(), counts.work as f64);
            (elapsed.as_secs_f64(), rss, dlc::count_answers(&inc.program, inc.state.db()))
        }
        System::DlcCompile => {
            let run = dlc::compile_program(&job.workload.rules_text())?;
            let rss = peak_rss_mib();
            extra.insert("compile".into(), run.phases.compile.as_secs_f64());
            extra.insert("eval".into(), run.phases.eval.as_secs_f64());
            (run.phases.total().as_secs_f64(), rss, dlc::count_answers(&run.program, &run.eval.db))
        }
        System::DlcBinary
        | System::DlcBinaryDred
        | System::DlcBinaryRanked
        | System::DlcBinaryRerun
        | System::SouffleInterpreted
        | System::SouffleCompiled
        | System::DlcDifferential
        | System::DlcDifferential2
        | System::DlcCluster2
        | System::DlcBinaryIr => {
            let tools = binary::Tools::from_env();
            let m = binary::run(job.system, &tools, &job.workload, job.query, job.change, &edb, BINARY_TIMEOUT)?;
            if let Some(batch) = m.run.batch_secs {
                extra.insert("batch".into(), batch);
            }
            if let Some(eval) = m.run.eval_secs {
                extra.insert("eval".into(), eval);
            }
            extra.insert("read".into(), m.read_secs);
            if let Some(compile) = m.compile_secs {
                extra.insert("compile".into(), compile);
            }
            if let Some(every) = m.every_core {
                extra.insert("cores_secs".into(), every.secs);
                extra.insert("cores_rss_mib".into(), every.rss_mib);
            }
            (m.run.secs, m.run.rss_mib, m.rows as usize)
        }
        System::Recompute => {
            let change = job.change.ok_or("recompute needs a change")?;
            let (run, elapsed) = dlc::recompute(&job.workload, job.query, &edb, change)?;
            let rss = peak_rss_mib();
            extra.insert("work".into(), run.eval.work as f64);
            (elapsed.as_secs_f64(), rss, dlc::count_answers(&run.program, &run.eval.db))
        }
    };
    Ok(Sample { secs, rss_mib, answers: answers as u64, extra })
}

/// Waits for `child` to exit, killing it once `timeout` has passed since `start`;
/// `between` runs (and sleeps as it likes) after every poll that finds it still running,
/// given the time since `start`.
pub fn wait_or_kill(
    child: &mut Child,
    start: Instant,
    timeout: Duration,
    mut between: impl FnMut(Duration),
) -> Result<ExitStatus, String> {
    loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) => return Ok(status),
            None if start.elapsed() > timeout => {
                // Only this child, by its own handle: nothing else is touched.
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("timed out after {} s", timeout.as_secs()));
            }
            None => between(start.elapsed()),
        }
    }
}

/// Runs the job in a fresh child process of the bench binary `exe` (normally this very
/// executable), killing it after `timeout`.
pub fn run_child(exe: &Path, job: &Job, timeout: Duration) -> Result<Sample, String> {
    let mut child = Command::new(exe)
        .args(job.args())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start a child: {e}"))?;
    let status = wait_or_kill(&mut child, Instant::now(), timeout, |_| std::thread::sleep(Duration::from_millis(5)))?;
    let (mut out, mut err) = (String::new(), String::new());
    if let Some(mut s) = child.stdout.take() {
        let _ = s.read_to_string(&mut out);
    }
    if let Some(mut s) = child.stderr.take() {
        let _ = s.read_to_string(&mut err);
    }
    if !status.success() {
        // A panic message spans lines; the backtrace hint does not help in a table.
        let message: Vec<&str> =
            err.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("note: run with")).collect();
        let mut message = message.join(" ");
        message.truncate(300);
        return Err(format!("child failed ({status}): {message}"));
    }
    out.lines().find_map(Sample::from_line).ok_or_else(|| format!("child printed no RESULT line: {out}{err}"))
}

/// The median of the values (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines_round_trip() {
        let mut extra = BTreeMap::new();
        extra.insert("relation".to_string(), 45.0);
        let s = Sample { secs: 0.25, rss_mib: 3.5, answers: 9, extra };
        assert_eq!(Sample::from_line(&s.to_line()), Some(s));
        assert_eq!(Sample::from_line("noise"), None);
    }

    #[test]
    fn job_arguments_round_trip() {
        let w = Workload::parse("tc-llin:chain:20").unwrap();
        for system in [System::Dred, System::DredRanked, System::Recompute] {
            let job = Job::new(w, Query::Point(0), system).with_change(Change::Delete(0, 1));
            assert_eq!(Job::parse(&job.args()[1..]).unwrap(), job);
        }
        assert!(Job::parse(&["x".to_string()]).is_err());
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0]), 2.5);
        assert!(peak_rss_mib() > 0.0);
    }
}
