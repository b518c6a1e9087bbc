//! Renders BENCHMARKS.md from one run's medians: method, tables, the targets each table
//! is held to with met/missed, and the published Soufflé figures for reference.

use crate::dlc::Change;
use crate::measure::{Job, System};
use crate::suite::{self, BatchRow, ClosureRow, QueryRow, Results, Suite, Summary, UpdateRow, RANDOM, RANDOM500};
use crate::workload::{self, Graph, Query, Rules, Workload};

/// Facts about the machine the run happened on, read before and after the run.
#[derive(Clone, Debug, Default)]
pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    pub memory_gib: f64,
    pub load_before: String,
    pub load_after: String,
}

impl Machine {
    pub fn probe() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, v)| v.trim()))
            .unwrap_or("unknown CPU")
            .to_string();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let memory_kib = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .unwrap_or(0.0);
        Machine {
            cpu,
            cores: crate::binary::cores(),
            memory_gib: memory_kib / 1024.0 / 1024.0,
            load_before: load_average(),
            load_after: String::new(),
        }
    }
}

/// The 1/5/15-minute load averages: how busy the machine was with other work.
pub fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// The published Soufflé columns (2-core machine, `-j1`, medians of 3): interpreted full,
/// compiled full (seconds / MiB), interpreted + magic query, compiled + magic query.
const SOUFFLE: [(&str, &str, &str, &str, &str); 6] = [
    ("random, rlin", "3.48 / 89", "2.22 / 83", "3.39", "2.24"),
    ("random, llin", "5.86 / 92", "4.51 / 86", "0.02", "0.01"),
    ("chain2000, rlin", "1.53 / 32", "1.25 / 25", "1.98", "1.50"),
    ("chain2000, llin", "1.38 / 32", "1.18 / 25", "0.01", "0.00"),
    ("random500, non-linear", "18.92 / 17", "9.68 / 11", "14.61", "6.25"),
    ("chain500, non-linear", "3.11 / 13", "1.58 / 7", "3.95", "2.12"),
];

/// The published closure sizes of the random graphs, for comparison with the graphs
/// generated here.
const PEERS_SIZES: [(Graph, u64, u64); 2] = [(RANDOM, 3_954_133, 1_989), (RANDOM500, 246_512, 0)];

fn secs(s: f64) -> String {
    if s >= 0.1 {
        format!("{s:.2} s")
    } else if s >= 0.001 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{:.2} ms", s * 1e3)
    }
}

/// A peak memory figure, `12 MiB`, or `– MiB` when it could not be read.
pub(crate) fn mib(m: f64) -> String {
    if m.is_nan() {
        // A child too short-lived for its memory to be read (`binary::run_measured`).
        "– MiB".to_string()
    } else if m >= 10.0 {
        format!("{m:.0} MiB")
    } else {
        format!("{m:.1} MiB")
    }
}

fn ratio(r: f64) -> String {
    if !r.is_finite() {
        "–".to_string()
    } else if r >= 100.0 {
        format!("{r:.0}×")
    } else if r >= 10.0 {
        format!("{r:.1}×")
    } else {
        format!("{r:.2}×")
    }
}

fn count(n: f64) -> String {
    let digits = (n.round() as u64).to_string();
    let mut groups: Vec<&str> =
        digits.as_bytes().rchunks(3).map(|g| std::str::from_utf8(g).expect("ASCII digits")).collect();
    groups.reverse();
    groups.join(",")
}

fn status(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "**met**",
        Some(false) => "**missed**",
        None => "not measured",
    }
}

/// `median 0.68× over 5 deleted edges (range 0.56× – 0.74×)`, or the one ratio.
fn ratio_summary(ratios: &[f64], what: &str) -> String {
    let med = crate::measure::median(ratios);
    if ratios.len() == 1 {
        return format!("{} (one {what})", ratio(med));
    }
    let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ratios.iter().copied().fold(0.0, f64::max);
    format!("median {} over {} {what}s (range {} – {})", ratio(med), ratios.len(), ratio(lo), ratio(hi))
}

/// The slope of time against size on a log-log scale between two measurements.
fn growth_exponent(size: u64, secs: f64, next_size: u64, next_secs: f64) -> f64 {
    (next_secs / secs).ln() / (next_size as f64 / size as f64).ln()
}

/// The two maintenance strategies the DRed section compares, with the names its tables use.
const STRATEGIES: [(System, &str); 2] = [(System::Dred, "DRed"), (System::DredRanked, "ranked")];

/// `2.17 s, 171 MiB` or the failure.
/// What `auto` chose for a batch (the `strategy` its run recorded), for its cell.
fn chosen(summary: &Summary) -> &'static str {
    match summary.get("strategy").map(|s| s.round() as u32) {
        Some(0) => "DRed",
        Some(1) => "ranked",
        Some(2) => "recomputed",
        _ => "?",
    }
}

/// How much slower than one thread a run on every core may measure and still count as
/// noise: runs of a few milliseconds vary by about ten per cent from run to run.
const THREAD_NOISE: f64 = 1.1;

/// The time and peak memory of a binary job's run on every core (`binary::on_every_core`),
/// when it made one.
fn every_core(s: &Summary) -> Option<(f64, f64)> {
    Some((s.get("cores_secs")?, s.get("cores_rss_mib")?))
}

/// A binary row's output: the whole relation, or the point query's `Q`.
fn output_label(row: &suite::BinaryRow) -> String {
    let pred = row.workload.query_pred();
    match row.query {
        Query::Full => format!("`{pred}` (whole)"),
        query => format!("`Q(y) :- {}.`", query.label(pred).replace('Y', "y")),
    }
}

fn cell(summary: &Result<Summary, String>) -> String {
    match summary {
        Ok(s) => format!("{}, {}", secs(s.secs), mib(s.rss_mib)),
        Err(e) => format!("failed: {e}"),
    }
}

/// `+E(1,2)`, `−E(1,2)`, `−100 edges`, `+100 edges`.
fn change_text(change: Change) -> String {
    match change {
        Change::Insert(u, v) => format!("+E({u},{v})"),
        Change::Delete(u, v) => format!("−E({u},{v})"),
        Change::Deletes(n) => format!("−{} edges", count(f64::from(n))),
        Change::Inserts(n) => format!("+{} edges", count(f64::from(n))),
    }
}

/// `leaf delete` for the targets table, from the note the suite gave the change.
fn short_change(row: &UpdateRow) -> String {
    match row.note.as_str() {
        suite::LEAF_DELETE => "leaf delete".into(),
        suite::OUTSIDE_DELETE => "delete outside".into(),
        suite::OUTSIDE_INSERT => "insert outside".into(),
        suite::JOIN_INSERT => "insert, new answers".into(),
        other => other.into(),
    }
}

struct Report<'a> {
    suite: &'a Suite,
    results: &'a Results,
    out: String,
}

impl Report<'_> {
    fn get(&self, job: &Job) -> Result<Summary, String> {
        self.results.summary(job)
    }

    fn line(&mut self, text: &str) {
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn fastest_peer(&self, row: &ClosureRow) -> Option<(f64, f64)> {
        let peers: Vec<Summary> = [System::Datafrog, System::Ascent, System::Crepe]
            .iter()
            .filter_map(|&s| self.get(&row.peer(s)).ok())
            .collect();
        let fastest = peers.iter().map(|s| s.secs).min_by(f64::total_cmp)?;
        let smallest = peers.iter().map(|s| s.rss_mib).min_by(f64::total_cmp)?;
        Some((fastest, smallest))
    }

    fn closure_table(&mut self) {
        self.line("| graph, rules | closure | dlc `--no-magic` | dlc `--no-magic`, 2 threads | dlc magic, `R(X,Y)` | datafrog | ascent | crepe | dlc ÷ smallest peer, memory |");
        self.line("|---|---:|---|---|---|---|---|---|---:|");
        for row in &self.suite.closure {
            let best = self.fastest_peer(row);
            let closure = self.get(&row.no_magic()).ok().and_then(|s| s.get("relation"));
            let mut cells = vec![row.workload.label(), closure.map_or("–".into(), count)];
            let mut jobs = vec![row.no_magic(), row.magic_full()];
            jobs.extend([System::Datafrog, System::Ascent, System::Crepe].map(|s| row.peer(s)));
            for job in &jobs {
                let s = self.get(job);
                let r = match (&s, best) {
                    (Ok(s), Some((fastest, _))) => format!(", {}", ratio(s.secs / fastest)),
                    _ => String::new(),
                };
                cells.push(format!("{}{r}", cell(&s)));
                if job == &row.no_magic() {
                    cells.push(self.threads_cell(row));
                }
            }
            let memory = match (self.get(&row.no_magic()), best) {
                (Ok(s), Some((_, smallest))) => ratio(s.rss_mib / smallest),
                _ => "–".into(),
            };
            cells.push(memory);
            self.line(&format!("| {} |", cells.join(" | ")));
        }
    }

    /// The differential table: the `dlc` binary natively and with `--engine differential`
    /// on one and two workers and as two processes, with the differential engine's targets.
    fn differential_table(&mut self) {
        self.line("| workload | output | rows | native | 1 worker | 2 workers | 2 processes × 1 | 1 worker ÷ native | 1 → 2 workers | 2 processes ÷ 2 workers | peak memory per process (native, 1w, 2w, 2p) |");
        self.line("|---|---|---:|---|---|---|---|---:|---:|---:|---|");
        for row in &self.suite.differential {
            let pred = row.workload.query_pred();
            let output = match row.query {
                Query::Full => format!("`{pred}` (whole)"),
                query => format!("`Q(y) :- {}.`", query.label(pred).replace('Y', "y")),
            };
            let runs = suite::DIFFERENTIAL_SYSTEMS.map(|system| self.get(&row.job(system)));
            let rows = runs[0].as_ref().map_or("–".into(), |s| count(s.answers as f64));
            let output = match row.change {
                Some(change) => format!("{output}, then {change} as a batch"),
                None => output,
            };
            let mut cells = vec![row.workload.label(), output, rows];
            // With a batch, its own time follows the run's.
            cells.extend(runs.iter().map(|run| match run.as_ref().ok().and_then(|s| s.get("batch")) {
                Some(batch) => format!("{} (batch {})", cell(run), secs(batch)),
                None => cell(run),
            }));
            let time = |i: usize| runs[i].as_ref().ok().map(|s| s.secs);
            let quotient = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) => ratio(a / b),
                _ => "–".into(),
            };
            cells.push(quotient(time(1), time(0)));
            cells.push(quotient(time(1), time(2)));
            cells.push(quotient(time(3), time(2)));
            let memory: Vec<String> = runs.iter().map(|r| r.as_ref().map_or("–".into(), |s| mib(s.rss_mib))).collect();
            cells.push(memory.join(", "));
            self.line(&format!("| {} |", cells.join(" | ")));
        }
        self.line("");
        self.line(
            "Targets for the differential engine: one worker within 5× the native time on the closure, two workers at least 1.7×",
        );
        self.line("faster than one, two processes no slower than two workers, a batch no slower than the native");
        self.line("engine's maintenance of it (DRed, in the same binary run). This machine has two cores shared with");
        self.line("other work, so two workers or two processes cannot show more than a two-fold speed-up here, and");
        self.line("two processes on one machine show the cost of the exchange over TCP, not the gain of a second");
        self.line("machine's memory. Each process reads its share of the input and holds and writes its part of");
        self.line("the result (see README, \"Running on several machines\"): memory per process falls as processes");
        self.line("are added.");
    }

    /// The binary table: the `dlc` binary end to end against the in-process evaluation
    /// (and Soufflé when measured), with the binary's targets per row.
    fn binary_table(&mut self) {
        let souffle = self.suite.souffle;
        let mut head =
            "| workload | output | rows | dlc binary | in-process | read input | time ratio | memory ratio |"
                .to_string();
        let mut rule = "|---|---|---:|---|---|---:|---:|---:|".to_string();
        if souffle {
            head += " Soufflé interpreted | Soufflé compiled (compile) | dlc ÷ Soufflé compiled |";
            rule += "---|---|---:|";
        }
        self.line(&head);
        self.line(&rule);
        let (mut worst_time, mut worst_memory) = (0.0f64, 0.0f64);
        let mut measured = 0;
        for row in &self.suite.binary {
            let output = output_label(row);
            let binary = self.get(&row.job(System::DlcBinary));
            let in_process = self.get(&row.in_process());
            let rows = row.expected_rows(self.results).map_or("–".into(), |n| count(n as f64));
            let mut cells = vec![row.workload.label(), output, rows, cell(&binary), cell(&in_process)];
            match (&binary, &in_process) {
                (Ok(b), Ok(i)) => {
                    let read = b.get("read").unwrap_or(0.0);
                    let (time, memory) = (b.secs / (i.secs + read), b.rss_mib / i.rss_mib);
                    worst_time = worst_time.max(time);
                    worst_memory = worst_memory.max(memory);
                    measured += 1;
                    cells.extend([secs(read), ratio(time), ratio(memory)]);
                }
                _ => cells.extend(["–".to_string(), "–".to_string(), "–".to_string()]),
            }
            if souffle && !row.workload.souffle_runs() {
                // Soufflé refuses the program ("unable to stratify"): its subsumption form
                // is the next row.
                cells.extend(["refused".to_string(), "refused".to_string(), "–".to_string()]);
            } else if souffle {
                let interpreted = self.get(&row.job(System::SouffleInterpreted));
                let compiled = self.get(&row.job(System::SouffleCompiled));
                cells.push(cell(&interpreted));
                cells.push(match &compiled {
                    Ok(c) => format!("{} ({})", cell(&compiled), secs(c.get("compile").unwrap_or(f64::NAN))),
                    Err(_) => cell(&compiled),
                });
                cells.push(match (&binary, &compiled) {
                    (Ok(b), Ok(c)) => ratio(b.secs / c.secs),
                    _ => "–".into(),
                });
            }
            self.line(&format!("| {} |", cells.join(" | ")));
        }
        self.line("");
        if measured > 0 {
            let met = |worst: f64, target: f64| status(Some(worst <= target));
            self.line(&format!(
                "Targets for the binary (within 1.15× the time of the in-process evaluation plus a plain read \
                 of the input, and within 1.3× its peak memory): time {} (worst row {}), memory {} (worst row {}).",
                met(worst_time, 1.15),
                ratio(worst_time),
                met(worst_memory, 1.3),
                ratio(worst_memory)
            ));
        }
        self.line("");
        self.line(
            "Where the time ratio is high, the binary does work the in-process run does not: a whole-relation row",
        );
        self.line("writes every row as text (2 million lines of `R.csv` for chain2000, about 15 ns a row, where the");
        self.line("in-process run only counts them; the forest adds parsing 500,000 lines of facts and interning");
        self.line(
            "their values as text); a point row's program has one rule more, `Q(y) :- R(c, y).`, which scans the",
        );
        self.line("whole `R` when `--magic auto` falls back to the original program (chain2000); and a run of a few");
        self.line("milliseconds (random, llin, point) is mostly process start-up and reading the 10,000-line input.");
        if souffle {
            self.line("Soufflé ran on the same files in the same run: `souffle -F in -D out -j1 prog.dl`, and `souffle -o exe");
            self.line(
                "prog.dl` (its compile time in parentheses, outside the clock) then `exe -F in -D out -j1`; its output",
            );
            self.line(
                "row counts are checked equal to dlc's. Soufflé refuses the recursive `min` of the shortest paths",
            );
            self.line("(\"unable to stratify\"): it runs their subsumption form, the row after, which dlc runs too.");
        } else {
            self.line(
                "**Soufflé was not measured in this run**: no Soufflé binary was given (`SOUFFLE=/path/to/souffle`),",
            );
            self.line("and Soufflé 2.5 is in none of the package registries reachable where this file was generated.");
            self.line(
                "Its columns appear when `SOUFFLE` names a binary; the published figures are at the end of this file.",
            );
        }
    }

    /// The large-relation table: each row through the `dlc` binary and Soufflé's compiled
    /// program, with the largest relation's bytes per tuple at each one's peak, and the
    /// targets (peak memory at most Soufflé compiled's, time at most half of it).
    fn large_table(&mut self) {
        self.line("| workload | `skipBlank` tuples | output rows | dlc binary | bytes per tuple | Soufflé compiled (compile) | bytes per tuple | time ÷ Soufflé | memory ÷ Soufflé |");
        self.line("|---|---:|---:|---|---:|---|---:|---:|---:|");
        let mut verdicts = Vec::new();
        for row in &self.suite.large {
            let tuples = workload::ordered_list_sizes(&row.workload).map_or(0, |s| s.skip_blank);
            let binary = self.get(&row.job(System::DlcBinary));
            let compiled = self.get(&row.job(System::SouffleCompiled));
            let per_tuple = |s: &Result<Summary, String>| match s {
                Ok(s) if tuples > 0 => format!("{:.1}", s.rss_mib * 1024.0 * 1024.0 / tuples as f64),
                _ => "–".into(),
            };
            let rows = binary.as_ref().map_or("–".into(), |b| count(b.answers as f64));
            let compiled_cell = match &compiled {
                Ok(c) => format!("{} ({})", cell(&compiled), secs(c.get("compile").unwrap_or(f64::NAN))),
                Err(_) if !self.suite.souffle => "not run".into(),
                Err(_) => cell(&compiled),
            };
            let (time, memory) = match (&binary, &compiled) {
                (Ok(b), Ok(c)) => (b.secs / c.secs, b.rss_mib / c.rss_mib),
                _ => (f64::NAN, f64::NAN),
            };
            self.line(&format!(
                "| {} | {} | {rows} | {} | {} | {compiled_cell} | {} | {} | {} |",
                row.workload.label(),
                count(tuples as f64),
                cell(&binary),
                per_tuple(&binary),
                per_tuple(&compiled),
                ratio(time),
                ratio(memory),
            ));
            if time.is_finite() {
                verdicts.push((row.workload.label(), time, memory));
            }
        }
        self.line("");
        for (label, time, memory) in verdicts {
            self.line(&format!(
                "Targets on {label}: peak memory at most Soufflé compiled's: {} ({}); time at most 0.5× Soufflé \
                 compiled's: {} ({}).",
                status(Some(memory <= 1.0)),
                ratio(memory),
                status(Some(time <= 0.5)),
                ratio(time),
            ));
            self.line("");
        }
    }

    /// The thread table: each binary row on one thread and on every core, dlc's and
    /// Soufflé's compiled program's, and the target "threads that never cost" read off it.
    fn threads_table(&mut self) {
        let souffle = self.suite.souffle;
        let cores = crate::binary::cores();
        let mut head = "| workload | output | dlc `--threads 1` | dlc, default (every core) | speed-up |".to_string();
        let mut rule = "|---|---|---|---|---:|".to_string();
        if souffle {
            head += &format!(
                " Soufflé compiled `-j1` | Soufflé compiled `-j{cores}` | speed-up | dlc ÷ Soufflé, every core |"
            );
            rule += "---|---|---:|---:|";
        }
        self.line(&head);
        self.line(&rule);
        for row in &self.suite.binary {
            let dlc = self.get(&row.job(System::DlcBinary));
            let mut cells = vec![row.workload.label(), output_label(row), cell(&dlc)];
            let dlc_every = dlc.as_ref().ok().and_then(every_core);
            match (&dlc, dlc_every) {
                (Ok(d), Some((t, m))) => cells.extend([format!("{}, {}", secs(t), mib(m)), ratio(d.secs / t)]),
                _ => cells.extend(["–".to_string(), "–".to_string()]),
            }
            if souffle {
                let compiled = self.get(&row.job(System::SouffleCompiled));
                cells.push(cell(&compiled));
                match (&compiled, compiled.as_ref().ok().and_then(every_core), &dlc) {
                    (Ok(c), Some((t, m)), Ok(_)) => cells.extend([
                        format!("{}, {}", secs(t), mib(m)),
                        ratio(c.secs / t),
                        ratio(dlc_every.map_or(f64::NAN, |(dlc_t, _)| dlc_t) / t),
                    ]),
                    _ => cells.extend(["–".to_string(), "–".to_string(), "–".to_string()]),
                }
            }
            self.line(&format!("| {} |", cells.join(" | ")));
        }
        self.line("");
    }

    /// The targets against Soufflé's compiled program, read off the binary, closure and
    /// thread tables: each with what was measured, met or missed, and by how much.
    fn souffle_targets(&mut self) {
        if !self.suite.souffle {
            self.line(
                "Not measured in this run: the targets compare dlc with Soufflé's compiled program (`SOUFFLE=...`).",
            );
            self.line("");
            return;
        }
        let mut over_memory = Vec::new();
        let mut over_time = Vec::new();
        let mut points_to = Vec::new();
        let mut slower_on_cores = Vec::new();
        let mut nonlinear_speedups = Vec::new();
        let (mut rows, mut pt_met) = (0, true);
        for row in &self.suite.binary {
            let (Ok(d), Ok(c)) = (self.get(&row.job(System::DlcBinary)), self.get(&row.job(System::SouffleCompiled)))
            else {
                continue;
            };
            rows += 1;
            let what = format!("{}, {}", row.workload.label(), output_label(row));
            if d.rss_mib > c.rss_mib {
                over_memory.push(format!(
                    "{what} ({} vs {}, {})",
                    mib(d.rss_mib),
                    mib(c.rss_mib),
                    ratio(d.rss_mib / c.rss_mib)
                ));
            }
            let time = d.secs / c.secs;
            if time > 0.5 {
                over_time.push(format!("{what} ({})", ratio(time)));
            }
            if matches!(row.workload, Workload::PointsTo { .. }) {
                pt_met &= time <= 0.5;
                points_to.push(format!("{what}: {}", ratio(time)));
            }
            if let Some((every, _)) = every_core(&d) {
                let speedup = d.secs / every;
                if speedup < 1.0 / THREAD_NOISE {
                    slower_on_cores.push(format!("{what} ({})", ratio(speedup)));
                }
                if matches!(row.workload, Workload::Tc { rules: Rules::NonLinear, .. }) {
                    nonlinear_speedups.push(format!("{}: {}", row.workload.label(), ratio(speedup)));
                }
            }
        }
        let mut nonlinear = Vec::new();
        let mut nonlinear_met = true;
        for row in
            self.suite.closure.iter().filter(|r| matches!(r.workload, Workload::Tc { rules: Rules::NonLinear, .. }))
        {
            if let (Ok(d), Ok(a)) = (self.get(&row.no_magic()), self.get(&row.peer(System::Ascent))) {
                nonlinear_met &= d.secs <= a.secs;
                nonlinear.push(format!(
                    "{}: {} vs {} ({})",
                    row.workload.label(),
                    secs(d.secs),
                    secs(a.secs),
                    ratio(d.secs / a.secs)
                ));
            }
        }
        let list = |items: &[String]| if items.is_empty() { "none".to_string() } else { items.join("; ") };
        self.line("| target | measured | status |");
        self.line("|---|---|---|");
        self.line(&format!(
            "| 1. Memory: peak at most Soufflé compiled's on every row of the binary table | over it on {} of {rows} rows: {} | {} |",
            over_memory.len(),
            list(&over_memory),
            status(Some(over_memory.is_empty()))
        ));
        self.line(&format!(
            "| 2. Points-to at most 0.5× Soufflé compiled's time | {} | {} |",
            list(&points_to),
            status((!points_to.is_empty()).then_some(pt_met))
        ));
        self.line(&format!(
            "| 3. Non-linear closures at least as fast as ascent, one thread (closure table) | {} | {} |",
            list(&nonlinear),
            status((!nonlinear.is_empty()).then_some(nonlinear_met))
        ));
        self.line(&format!(
            "| 4. Default `--threads` never slower than `--threads 1` beyond noise (over {}×) | slower: {}; non-linear closures' speed-up: {} | {} |",
            THREAD_NOISE,
            list(&slower_on_cores),
            list(&nonlinear_speedups),
            status(Some(slower_on_cores.is_empty()))
        ));
        self.line(&format!(
            "| 5. No row of the binary table above 0.5× Soufflé compiled's time | over it on {} of {rows} rows: {} | {} |",
            over_time.len(),
            list(&over_time),
            status(Some(over_time.is_empty()))
        ));
        self.line("");
    }

    /// The two-thread run of a closure row, with its speed-up over one thread.
    fn threads_cell(&self, row: &ClosureRow) -> String {
        let two = self.get(&row.no_magic_threads());
        match (&two, self.get(&row.no_magic())) {
            (Ok(t), Ok(one)) => format!("{}, speed-up {}", cell(&two), ratio(one.secs / t.secs)),
            _ => cell(&two),
        }
    }

    fn query_table(&mut self) {
        self.line("| workload | query | answers | dlc magic | dlc `--no-magic` | speed-up | speed-up, query only | facts derived, magic / `--no-magic` |");
        self.line("|---|---|---:|---|---|---:|---:|---:|");
        for row in &self.suite.queries {
            let (m, n) = (self.get(&row.magic()), self.get(&row.no_magic()));
            let (answers, speedup, eval_speedup, derived) = match (&m, &n) {
                (Ok(m), Ok(n)) => (
                    count(m.answers as f64),
                    ratio(n.secs / m.secs),
                    ratio(n.get("eval").unwrap_or(f64::NAN) / m.get("eval").unwrap_or(f64::NAN)),
                    format!("{} / {}", count(m.get("derived").unwrap_or(0.0)), count(n.get("derived").unwrap_or(0.0))),
                ),
                _ => ("–".into(), "–".into(), "–".into(), "–".into()),
            };
            let query = format!("`{}`", row.query.label(row.workload.query_pred()));
            self.line(&format!(
                "| {} | {query} | {answers} | {} | {} | {speedup} | {eval_speedup} | {derived} |",
                row.workload.label(),
                cell(&m),
                cell(&n)
            ));
        }
    }

    /// The target for `--magic auto`: on every full-closure and selection row,
    /// its time within 1.05× of the better of magic and `--no-magic`.
    fn auto_table(&mut self) {
        self.line("| workload | query | dlc magic | dlc `--no-magic` | dlc `--magic auto` | auto evaluated | auto ÷ better of the two | target ≤ 1.05× |");
        self.line("|---|---|---|---|---|---|---:|---|");
        let closure =
            self.suite.closure.iter().map(|r| (r.workload, Query::Full, r.magic_full(), r.no_magic(), r.auto_full()));
        let queries = self.suite.queries.iter().map(|r| (r.workload, r.query, r.magic(), r.no_magic(), r.auto()));
        let rows: Vec<_> = closure.chain(queries).collect();
        let (mut met, mut measured) = (0, 0);
        for (workload, query, magic, no_magic, auto) in rows {
            let (m, n, a) = (self.get(&magic), self.get(&no_magic), self.get(&auto));
            let (chosen, quotient, target) = match (&m, &n, &a) {
                (Ok(m), Ok(n), Ok(a)) => {
                    let q = a.secs / m.secs.min(n.secs);
                    measured += 1;
                    met += usize::from(q <= 1.05);
                    let chosen = match a.get("auto_magic") {
                        Some(k) if k > 0.5 => "magic",
                        Some(_) => "original",
                        None => "–",
                    };
                    (chosen, ratio(q), status(Some(q <= 1.05)))
                }
                _ => ("–", "–".into(), status(None)),
            };
            let query = format!("`{}`", query.label(workload.query_pred()));
            self.line(&format!(
                "| {} | {query} | {} | {} | {} | {chosen} | {quotient} | {target} |",
                workload.label(),
                cell(&m),
                cell(&n),
                cell(&a)
            ));
        }
        self.line("");
        self.line(&format!(
            "Met on {met} of {measured} measured rows. Where auto keeps the rewrite it evaluates the same program as"
        ));
        self.line(
            "magic unless subsumption changed it, so on rows of a millisecond or less the ratio mostly measures noise",
        );
        self.line("(about ±10% between runs here).");
    }

    fn reference_table(&mut self) {
        self.line(
            "| graph, rules | closure | semi-naive | reference | reference ÷ semi-naive | reference `row_tests` |",
        );
        self.line("|---|---:|---|---|---:|---:|");
        for row in &self.suite.reference {
            let (s, r) = (self.get(&row.seminaive()), self.get(&row.reference()));
            let (closure, ratio_text, row_tests) = match (&s, &r) {
                (Ok(s), Ok(r)) => {
                    (count(s.answers as f64), ratio(r.secs / s.secs), r.get("row_tests").map_or("–".into(), count))
                }
                _ => ("–".into(), "–".into(), "–".into()),
            };
            self.line(&format!(
                "| {} | {closure} | {} | {} | {ratio_text} | {row_tests} |",
                row.workload.label(),
                cell(&s),
                cell(&r)
            ));
        }
    }

    /// One line per size of every growing program or query, with the exponent of the
    /// time's growth from the size before: `log(t / t₀) / log(n / n₀)`, 1 for linear.
    fn scaling_table(&mut self) {
        self.line("| what grows | size | time | memory | growth exponent |");
        self.line("|---|---:|---:|---:|---:|");
        let mut previous: Option<(&str, u64, f64)> = None;
        for row in &self.suite.scaling {
            let summary = self.get(&row.job);
            let exponent = match (&summary, previous) {
                (Ok(s), Some((family, size, secs))) if family == row.family && secs > 0.0 => {
                    format!("{:.2}", growth_exponent(size, secs, row.size, s.secs))
                }
                _ => "–".into(),
            };
            let (time, memory) = match &summary {
                Ok(s) => (secs(s.secs), mib(s.rss_mib)),
                Err(e) => (format!("failed: {e}"), "–".into()),
            };
            self.line(&format!("| {} | {} | {time} | {memory} | {exponent} |", row.family, count(row.size as f64)));
            previous = summary.ok().map(|s| (row.family.as_str(), row.size, s.secs));
        }
    }

    /// The batches of random changes: per batch, each strategy's time and peak memory and how many
    /// times cheaper than recomputation it was.
    fn batch_table(&mut self) {
        let mut header = "| workload | batch |".to_string();
        let mut rule = "|---|---|".to_string();
        for (_, name) in BatchRow::STRATEGIES {
            header += &format!(" {name} | recompute ÷ {name} |");
            rule += "---|---:|";
        }
        self.line(&format!("{header} recompute | closure after |"));
        self.line(&format!("{rule}---|---:|"));
        for row in &self.suite.batches {
            let r = self.get(&row.recompute());
            let mut line = format!("| {} | {} |", row.workload.label(), change_text(row.change));
            let mut answers = r.as_ref().ok().map(|s| s.answers);
            for (system, _) in BatchRow::STRATEGIES {
                let m = self.get(&row.maintenance(system));
                let speedup = match (&m, &r) {
                    (Ok(m), Ok(r)) => ratio(r.secs / m.secs),
                    _ => "–".into(),
                };
                answers = answers.or(m.as_ref().ok().map(|s| s.answers));
                let text = match (&m, system) {
                    (Ok(s), System::DredAuto) => format!("{} ({})", cell(&m), chosen(s)),
                    _ => cell(&m),
                };
                line += &format!(" {text} | {speedup} |");
            }
            let answers = answers.map_or("–".into(), |n| count(n as f64));
            self.line(&format!("{line} {} | {answers} |", cell(&r)));
        }
    }

    /// The batches of random changes through the `dlc` binary: the run that evaluates and
    /// writes the closure, and per strategy the run that evaluates, applies the batch and
    /// writes the closure after it (its batch's own time in parentheses).
    fn binary_batch_table(&mut self) {
        let mut header = "| workload | batch | evaluation only | rerun on the changed input |".to_string();
        let mut rule = "|---|---|---|---|".to_string();
        for (_, name) in BatchRow::BINARIES {
            header += &format!(" {name} | batch ÷ rerun |");
            rule += "---|---:|";
        }
        self.line(&header);
        self.line(&rule);
        for row in &self.suite.batches {
            let evaluation = self.get(&row.binary_evaluation());
            let rerun = self.get(&row.binary_rerun());
            let mut line = format!(
                "| {} | {} | {} | {} |",
                row.workload.label(),
                change_text(row.change),
                cell(&evaluation),
                cell(&rerun)
            );
            for (system, _) in BatchRow::BINARIES {
                let run = self.get(&row.binary(system));
                let batch = run.as_ref().ok().and_then(|s| s.get("batch"));
                let text = match batch {
                    Some(b) => format!("{} (batch {})", cell(&run), secs(b)),
                    None => cell(&run),
                };
                let share = match (batch, &rerun) {
                    (Some(b), Ok(e)) => ratio(b / e.secs),
                    _ => "–".into(),
                };
                line += &format!(" {text} | {share} |");
            }
            self.line(&line);
        }
    }

    /// The targets of batch maintenance read off the batch tables: `auto` within 1.1× a
    /// recomputation (in-process, and through the binary against a new run's evaluation), a
    /// one-edge batch at least 20× cheaper, the maintained state's set-up within 0.2× the
    /// evaluation's time and 1.5× its memory, and no batch's peak above 2× the state's.
    fn batch_targets(&mut self) {
        let mut over = Vec::new();
        let mut not_local = Vec::new();
        let mut binary_over = Vec::new();
        let (mut setup_worst, mut memory_worst, mut peak_worst) =
            (None::<(f64, String)>, None::<(f64, String)>, None::<(f64, String)>);
        let worst = |slot: &mut Option<(f64, String)>, value: f64, what: String| {
            if value.is_finite() && slot.as_ref().is_none_or(|(v, _)| value > *v) {
                *slot = Some((value, what));
            }
        };
        for row in &self.suite.batches {
            let what = format!("{} {}", row.workload.label(), change_text(row.change));
            if let (Ok(a), Ok(r)) = (self.get(&row.maintenance(System::DredAuto)), self.get(&row.recompute())) {
                let cost = a.secs / r.secs;
                if cost > 1.1 {
                    over.push(format!("{what} ({}, {})", ratio(cost), chosen(&a)));
                }
                let local = matches!(row.workload, Workload::Tc { graph: Graph::Forest { .. }, .. });
                if local && matches!(row.change, Change::Deletes(1) | Change::Inserts(1)) && r.secs / a.secs < 20.0 {
                    not_local.push(format!("{what} ({} cheaper)", ratio(r.secs / a.secs)));
                }
            }
            let Ok(evaluation) = self.get(&row.binary_evaluation()) else { continue };
            let rerun = self.get(&row.binary_rerun());
            let rerun_secs = rerun.as_ref().map_or(f64::NAN, |r| r.secs);
            // What a rerun pays beside evaluating: start-up, reading the changed input and
            // writing its closure, which a maintaining run pays too (it writes the same).
            let rerun_rest = rerun.as_ref().ok().and_then(|r| Some(r.secs - r.get("eval")?)).unwrap_or(f64::NAN);
            // The state a run must hold: the larger of the closures before and after.
            let state_mib = rerun.as_ref().map_or(evaluation.rss_mib, |r| r.rss_mib.max(evaluation.rss_mib));
            let evaluating = evaluation.get("eval").unwrap_or(f64::NAN);
            for (system, name) in BatchRow::BINARIES {
                let Ok(run) = self.get(&row.binary(system)) else { continue };
                let batch = run.get("batch").unwrap_or(f64::NAN);
                if system == System::DlcBinary && batch / rerun_secs > 1.1 {
                    binary_over.push(format!("{what} ({})", ratio(batch / rerun_secs)));
                }
                // What the run costs beyond evaluating the input, the batch, and what a
                // rerun pays beside evaluating: the state's set-up.
                let setup = (run.secs - batch - evaluating - rerun_rest).max(0.0) / evaluation.secs;
                worst(&mut setup_worst, setup, format!("{what}, {name}"));
                worst(&mut memory_worst, run.rss_mib / state_mib, format!("{what}, {name}"));
                if matches!(row.change, Change::Deletes(_)) {
                    worst(&mut peak_worst, run.rss_mib / state_mib, format!("{what}, {name}"));
                }
            }
        }
        let list = |items: &[String]| if items.is_empty() { "none".to_string() } else { items.join("; ") };
        let worst_text = |slot: &Option<(f64, String)>| match slot {
            Some((v, what)) => format!("worst {} ({what})", ratio(*v)),
            None => "not measured".into(),
        };
        self.line(&format!(
            "Targets for batch maintenance, from the tables above. A batch under `auto` within 1.1× a recomputation \
             (in-process): {} — over it: {}. Through the binary, `auto`'s batch within 1.1× a rerun on the changed \
             input: {} — over it: {}. A one-edge batch on the forest (a change local to one tree) at least \
             20× cheaper than recomputing (in-process, `auto`): {} — short of it: {}. The maintained state's set-up (a run's time beyond evaluating \
             the input, its batch, and what the rerun pays beside evaluating: start-up, reading, writing the \
             closure; against the evaluation's run) within 0.2×: {}; a maintaining run's peak memory within 1.5× \
             the state's (the larger peak of the evaluation and the rerun, which hold the closures before and after \
             the batch): {}; a deletion's peak within 2× the state's: {}.",
            status(Some(over.is_empty())),
            list(&over),
            status(Some(binary_over.is_empty())),
            list(&binary_over),
            status(Some(not_local.is_empty())),
            list(&not_local),
            worst_text(&setup_worst),
            worst_text(&memory_worst),
            worst_text(&peak_worst),
        ));
    }

    fn update_table(&mut self) {
        self.line("| workload, query | change | why | DRed apply | ranked apply | recompute | recompute ÷ DRed | recompute ÷ ranked | over-deleted, DRed / ranked | rederived, DRed / ranked | inserted, DRed / ranked | answers after |");
        self.line("|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|");
        for row in &self.suite.updates {
            let (d, k, r) = (self.get(&row.dred()), self.get(&row.ranked()), self.get(&row.recompute()));
            let speedup = |m: &Result<Summary, String>| match (m, &r) {
                (Ok(m), Ok(r)) => ratio(r.secs / m.secs),
                _ => "–".into(),
            };
            // `1,983 / 12`: the same count of both strategies side by side, a missing run as –.
            let pair = |key: &str| {
                let one =
                    |m: &Result<Summary, String>| m.as_ref().map_or("–".into(), |m| count(m.get(key).unwrap_or(0.0)));
                format!("{} / {}", one(&d), one(&k))
            };
            let answers = d.as_ref().or(k.as_ref()).or(r.as_ref()).map_or("–".into(), |s| count(s.answers as f64));
            let change = change_text(row.change);
            self.line(&format!(
                "| {}, `{}` | {change} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {answers} |",
                row.workload.label(),
                row.query.label(row.workload.query_pred()),
                row.note,
                cell(&d),
                cell(&k),
                cell(&r),
                speedup(&d),
                speedup(&k),
                pair("overdeleted"),
                pair("rederived"),
                pair("inserted"),
            ));
        }
    }

    /// Deletions that change a handful of facts yet cost about as much as recomputing: the
    /// cost is then not the over-deletion but some O(|EDB|) step of applying it.
    fn slow_small_updates(&mut self) {
        let mut slow = Vec::new();
        for row in &self.suite.updates {
            for (system, name) in STRATEGIES {
                let (Ok(d), Some(r)) = (self.get(&row.maintenance(system)), self.update_ratio(row, system)) else {
                    continue;
                };
                let touched: f64 =
                    ["overdeleted", "rederived", "inserted"].iter().map(|k| d.get(k).unwrap_or(0.0)).sum();
                // Inserts are left out: their DRed cost is tiny already, the ratio is bounded
                // by how cheap the recomputation of a narrow magic program is.
                if matches!(row.change, Change::Delete(..)) && touched <= 10.0 && r < 10.0 {
                    slow.push(format!(
                        "{} {}, {name} ({}, derived facts touched: {})",
                        row.workload.label(),
                        short_change(row),
                        ratio(r),
                        count(touched)
                    ));
                }
            }
        }
        if slow.is_empty() {
            return;
        }
        self.line(&format!(
            "Deletions that touch at most 10 derived facts yet are not 10× cheaper than recomputing: {}. What they cost",
            slow.join("; ")
        ));
        self.line("is not the facts they touch but what the first batch of a state reads or builds: ranked");
        self.line("over-deletion keeps a row locator of each derived relation the batch reaches, and its support");
        self.line("checks scan a relation they test with every column bound (the edges, for a leaf) until such");
        self.line("scans have read what a locator of it costs, then build one; either is not small next to");
        self.line("recomputing a magic program that narrow (see the recompute column).");
    }

    fn explain_table(&mut self) {
        self.line("| graph, rules | program | evaluation | proof of `R(0,y)`, y at distance 1 / 2 / 3 | ÷ evaluation, distance 3 | proof height / facts, distance 3 |");
        self.line("|---|---|---:|---|---:|---:|");
        for row in &self.suite.explain {
            for (system, program) in [(System::Explain, "magic"), (System::ExplainNoMagic, "`--no-magic`")] {
                let Ok(s) = self.get(&row.job(system)) else {
                    self.line(&format!("| {} | {program} | – | – | – | – |", row.workload.label()));
                    continue;
                };
                let g = |k: &str| s.get(k).unwrap_or(f64::NAN);
                let times: Vec<String> = (1..=3).map(|d| secs(g(&format!("explain_{d}")))).collect();
                self.line(&format!(
                    "| {} | {program} | {} | {} | {} | {} / {} |",
                    row.workload.label(),
                    secs(g("eval")),
                    times.join(" / "),
                    ratio(g("explain_3") / g("eval")),
                    count(g("height_3")),
                    count(g("nodes_3"))
                ));
            }
        }
    }

    fn phase_table(&mut self) {
        self.line("| run | load | compile | index | eval | iterations | rule firings | facts derived |");
        self.line("|---|---:|---:|---:|---:|---:|---:|---:|");
        let mut jobs: Vec<(String, Job)> = Vec::new();
        for row in &self.suite.closure {
            jobs.push((format!("{} full, `--no-magic`", row.workload.label()), row.no_magic()));
            jobs.push((format!("{} `R(X,Y)`, magic", row.workload.label()), row.magic_full()));
        }
        for row in &self.suite.queries {
            let label = format!("{} `{}`, magic", row.workload.label(), row.query.label(row.workload.query_pred()));
            jobs.push((label, row.magic()));
        }
        let mut seen = std::collections::HashSet::new();
        for (label, job) in jobs {
            if !seen.insert(job.key()) {
                continue;
            }
            let Ok(s) = self.get(&job) else { continue };
            let g = |k: &str| s.get(k).unwrap_or(f64::NAN);
            self.line(&format!(
                "| {label} | {} | {} | {} | {} | {} | {} | {} |",
                secs(g("load")),
                secs(g("compile")),
                secs(g("index")),
                secs(g("eval")),
                count(g("iterations")),
                count(g("work")),
                count(g("derived"))
            ));
        }
    }

    /// Median recompute ÷ maintenance time of one update row, for `system` (`Dred` or
    /// `DredRanked`).
    fn update_ratio(&self, row: &UpdateRow, system: System) -> Option<f64> {
        match (self.get(&row.maintenance(system)), self.get(&row.recompute())) {
            (Ok(d), Ok(c)) => Some(c.secs / d.secs),
            _ => None,
        }
    }

    /// recompute ÷ `system` of every deletion row of `workload`.
    fn deletion_ratios(&self, workload: Workload, system: System) -> Vec<f64> {
        self.suite
            .updates
            .iter()
            .filter(|r| r.workload == workload && matches!(r.change, Change::Delete(..)))
            .filter_map(|r| self.update_ratio(r, system))
            .collect()
    }

    /// The median of `key` of `system` over the deletion rows of `workload`.
    fn deletion_median(&self, workload: Workload, system: System, key: &str) -> Option<f64> {
        let values: Vec<f64> = self
            .suite
            .updates
            .iter()
            .filter(|r| r.workload == workload && matches!(r.change, Change::Delete(..)))
            .filter_map(|r| self.get(&r.maintenance(system)).ok()?.get(key))
            .collect();
        (!values.is_empty()).then(|| crate::measure::median(&values))
    }

    /// Why the random-graph rows of the DRed target are the worst case for DRed and
    /// what ranked over-deletion changes there, with this run's counts.
    fn random_dred_note(&mut self) {
        let random_graph = match self.suite.closure.first().map(|r| r.workload) {
            Some(Workload::Tc { graph, .. }) => graph,
            _ => RANDOM,
        };
        let mut counts = Vec::new();
        let mut ranked_ok = Some(true);
        for rules in [Rules::Llin, Rules::Rlin] {
            let workload = Workload::Tc { rules, graph: random_graph };
            let spec = self.deletion_median(workload, System::Dred, "overdeleted");
            let ranked = self.deletion_median(workload, System::DredRanked, "overdeleted");
            let (Some(spec), Some(ranked)) = (spec, ranked) else { continue };
            // The size of the materialised magic program: what "all of it" means.
            let point = QueryRow { workload, query: Query::Point(0) };
            let held = self.get(&point.magic()).ok().and_then(|s| s.get("derived"));
            let of = held.map_or(String::new(), |h| format!(" of the {} derived facts", count(h)));
            counts.push(format!(
                "{}: DRed over-deletes {}{of}, ranked {}",
                workload.label(),
                count(spec),
                count(ranked)
            ));
            let med = crate::measure::median(&self.deletion_ratios(workload, System::DredRanked));
            ranked_ok = ranked_ok.map(|ok| ok && med >= 10.0);
        }
        if counts.is_empty() {
            return;
        }
        self.line("The random-graph DRed rows are the worst case for DRed: it over-deletes every fact with a");
        self.line("derivation through the deleted edge, and on the random graph's giant component that is all of it,");
        self.line("which it then rederives or re-inserts — more work than a recomputation (medians over the deleted");
        self.line(&format!("edges: {}).", counts.join("; ")));
        match ranked_ok {
            Some(true) => {
                self.line(
                    "Ranked over-deletion (`Maintenance::Ranked`, `dlc --maintenance ranked`) is the strategy that",
                );
                self.line("meets the target: a fact is over-deleted only when no derivation from lower-ranked facts survives,");
                self.line(
                    "so over-deletion stops at the first alternative derivation instead of spreading through the",
                );
                self.line("component.");
            }
            _ => {
                self.line("Ranked over-deletion (`Maintenance::Ranked`, `dlc --maintenance ranked`), which over-deletes a fact");
                self.line("only when no derivation from lower-ranked facts survives, is the strategy meant to meet the target;");
                self.line("in this run it does not (see its ratios in the table).");
            }
        }
        self.line("The forest and paths rows show when either pays off: the change is local to one small component");
        self.line("(see the DRed section for the changes).");
    }

    /// The DRed target on local changes: one row per workload, listing each change with
    /// the ratios of both strategies, so the table says which kinds of change meet ≥ 10×.
    fn local_dred_targets(&self, rows: &mut Vec<(String, String, String)>) {
        let mut workloads: Vec<Workload> = Vec::new();
        for row in &self.suite.updates {
            let local = matches!(row.workload, Workload::Tc { graph: Graph::Forest { .. } | Graph::Paths { .. }, .. });
            if local && !workloads.contains(&row.workload) {
                workloads.push(row.workload);
            }
        }
        for workload in workloads {
            let mut measured = Vec::new();
            let mut verdicts = Vec::new();
            let updates: Vec<&UpdateRow> = self.suite.updates.iter().filter(|r| r.workload == workload).collect();
            for row in &updates {
                let ratios = STRATEGIES.map(|(s, _)| self.update_ratio(row, s));
                if ratios.iter().all(Option::is_none) {
                    continue;
                }
                let pair: Vec<String> = ratios.iter().map(|r| r.map_or("–".into(), ratio)).collect();
                measured.push(format!("{}: {}", short_change(row), pair.join(" / ")));
            }
            for (system, name) in STRATEGIES {
                let (mut met, mut total) = (0, 0);
                let mut unmet = Vec::new();
                for row in &updates {
                    let Some(r) = self.update_ratio(row, system) else { continue };
                    total += 1;
                    if r >= 10.0 {
                        met += 1;
                    } else {
                        unmet.push(short_change(row));
                    }
                }
                let verdict = if total == 0 {
                    status(None).to_string()
                } else if met == total {
                    format!("**met** ({met} of {total})")
                } else if met == 0 {
                    format!("**missed** (0 of {total})")
                } else {
                    format!("**met on {met} of {total}**; missed: {}", unmet.join(", "))
                };
                verdicts.push(format!("{name}: {verdict}"));
            }
            rows.push((
                format!(
                    "DRed one-edge change, {} `R(0,Y)`, local change: ≥ 10× cheaper than recomputation (DRed / ranked)",
                    workload.label()
                ),
                measured.join("; "),
                verdicts.join("; "),
            ));
        }
    }

    /// The forest rows of the query table: the workloads of the magic target.
    fn forest_rows(&self) -> Vec<QueryRow> {
        self.suite
            .queries
            .iter()
            .filter(|r| {
                matches!(r.workload, Workload::Tc { graph: Graph::Forest { .. }, .. }) && r.query != Query::Full
            })
            .cloned()
            .collect()
    }

    /// Where the magic run's time goes on the forests: why the query-time ratio of the
    /// forest target is large while the whole-pipeline ratio stays small.
    fn forest_note(&mut self) {
        let g = |s: &Summary, k: &str| s.get(k).unwrap_or(f64::NAN);
        let mut lines = Vec::new();
        let mut pipeline = Vec::new();
        let mut shares = Vec::new();
        for row in self.forest_rows() {
            let (Ok(m), Ok(n)) = (self.get(&row.magic()), self.get(&row.no_magic())) else { continue };
            // Loading and indexing: the O(|E|) part both modes pay.
            // Medians of the phases need not add up to the median of the whole, so the share
            // of two of them can come out a little above 100 %.
            let share = (100.0 * (g(&m, "load") + g(&m, "index")) / m.secs).min(100.0);
            lines.push(format!(
                "- {}: magic {} = load {} + compile {} + index {} + query {} ({} facts derived); `--no-magic` {} = load {} + index {} + query {} ({} facts). Query {} faster, whole pipeline {}; load and index are {share:.0} % of the magic run.",
                row.workload.label(),
                secs(m.secs),
                secs(g(&m, "load")),
                secs(g(&m, "compile")),
                secs(g(&m, "index")),
                secs(g(&m, "eval")),
                count(g(&m, "derived")),
                secs(n.secs),
                secs(g(&n, "load")),
                secs(g(&n, "index")),
                secs(g(&n, "eval")),
                count(g(&n, "derived")),
                ratio(g(&n, "eval") / g(&m, "eval")),
                ratio(n.secs / m.secs),
            ));
            pipeline.push(n.secs / m.secs);
            shares.push(share);
        }
        if lines.is_empty() {
            return;
        }
        self.line("What dominates the magic run on the forest (medians; query = `exec::evaluate`):");
        self.line("");
        for l in lines {
            self.line(&l);
        }
        self.line("");
        let range = |v: &[f64], f: &dyn Fn(f64) -> String| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if f(lo) == f(hi) {
                f(lo)
            } else {
                format!("{} – {}", f(lo), f(hi))
            }
        };
        let pipeline = range(&pipeline, &ratio);
        let shares = range(&shares, &|p| format!("{p:.0} %"));
        self.line("Loading (interning every value of the forest into the program's constants and inserting every `E`");
        self.line(
            "fact into the database) and indexing the input relations (`exec::index_inputs`) are O(|E|) whatever",
        );
        self.line("the query, and both modes pay them alike: a database loads and indexes its input once, and queries");
        self.line(
            "then run against it. The query is what the magic rewrite changes, so the target is judged on it: on",
        );
        self.line("the loaded, indexed database the magic program derives and reads only the queried tree (the facts");
        self.line(
            "derived above), while `--no-magic` derives the closure of the whole forest. The whole-pipeline ratio",
        );
        self.line(&format!(
            "stays at {pipeline} because loading dominates it — load and index are {shares} of the magic run: however"
        ));
        self.line("fast the query, that ratio stays below (load + index + `--no-magic`'s query) ÷ (load + index).");
    }

    fn targets(&mut self) {
        let mut rows: Vec<(String, String, String)> = Vec::new();
        // The linear rows on the suite's main random graph (the first closure row's graph).
        let random_graph = match self.suite.closure.first().map(|r| r.workload) {
            Some(Workload::Tc { graph, .. }) => graph,
            _ => RANDOM,
        };
        let random_rows: Vec<ClosureRow> = self
            .suite
            .closure
            .iter()
            .filter(|r| matches!(r.workload, Workload::Tc { graph, rules } if graph == random_graph && rules != Rules::NonLinear))
            .cloned()
            .collect();

        // 1. Within 2x of datafrog, 2. not slower than ascent or crepe (full TC, random).
        let mut vs_frog = Vec::new();
        let mut vs_macro = Vec::new();
        let (mut frog_ok, mut macro_ok) = (Some(true), Some(true));
        for row in &random_rows {
            let dlc = self.get(&row.no_magic());
            let frog = self.get(&row.peer(System::Datafrog));
            let asc = self.get(&row.peer(System::Ascent));
            let crp = self.get(&row.peer(System::Crepe));
            match (&dlc, &frog) {
                (Ok(d), Ok(f)) => {
                    let r = d.secs / f.secs;
                    vs_frog.push(format!("{}: {}", row.workload.label(), ratio(r)));
                    frog_ok = frog_ok.map(|ok| ok && r <= 2.0);
                }
                _ => frog_ok = None,
            }
            match (&dlc, &asc, &crp) {
                (Ok(d), Ok(a), Ok(c)) => {
                    vs_macro.push(format!(
                        "{}: {} of ascent, {} of crepe",
                        row.workload.label(),
                        ratio(d.secs / a.secs),
                        ratio(d.secs / c.secs)
                    ));
                    macro_ok = macro_ok.map(|ok| ok && d.secs <= a.secs && d.secs <= c.secs);
                }
                _ => macro_ok = None,
            }
        }
        rows.push((
            "Full TC on the random graph: dlc within 2× of datafrog".into(),
            vs_frog.join("; "),
            status(frog_ok).into(),
        ));
        rows.push((
            "Full TC on the random graph: dlc not slower than ascent and crepe".into(),
            vs_macro.join("; "),
            status(macro_ok).into(),
        ));

        // 3. Magic on the forest at least 50x faster than --no-magic, judged on the query on
        // a loaded, indexed database: loading and indexing are O(|E|) and shared by both
        // modes, so they say nothing about whether magic's work follows the component.
        let mut forest = Vec::new();
        let mut forest_ok = Some(true);
        for row in self.forest_rows() {
            match (self.get(&row.magic()), self.get(&row.no_magic())) {
                (Ok(m), Ok(n)) => {
                    let per = |k: &str| n.get(k).unwrap_or(f64::NAN) / m.get(k).unwrap_or(f64::NAN);
                    let query = per("eval");
                    forest.push(format!(
                        "{}: query {} (whole pipeline {}, rule firings {})",
                        row.workload.label(),
                        ratio(query),
                        ratio(n.secs / m.secs),
                        ratio(per("work"))
                    ));
                    forest_ok = forest_ok.map(|ok| ok && query >= 50.0);
                }
                _ => forest_ok = None,
            }
        }
        rows.push((
            "Point query `R(0,Y)` with magic on the forest ≥ 50× faster than `--no-magic`, i.e. work proportional to the query's component, not the graph: query time on a loaded, indexed database".into(),
            forest.join("; "),
            status(forest_ok).into(),
        ));

        // 4. DRed one-edge delete on the random graph at least 10x cheaper than recomputation:
        // the worst case for DRed, since the deleted edge lies on derivations of
        // the whole giant component and DRed over-deletes all of it before rederiving; the
        // ranked over-deletion is the strategy meant to meet it.
        for rules in [Rules::Llin, Rules::Rlin] {
            let workload = Workload::Tc { rules, graph: random_graph };
            let mut texts = Vec::new();
            let mut medians = Vec::new();
            for (system, name) in STRATEGIES {
                let ratios = self.deletion_ratios(workload, system);
                if ratios.is_empty() {
                    medians.push(None);
                    continue;
                }
                texts.push(format!("{name}: {}", ratio_summary(&ratios, "deleted edge")));
                medians.push(Some(crate::measure::median(&ratios)));
            }
            if texts.is_empty() {
                continue;
            }
            let verdict = match (medians[0], medians[1]) {
                (_, None) => status(None).to_string(),
                (Some(spec), Some(ranked)) if ranked >= 10.0 && spec < 10.0 => "**met** by ranked".to_string(),
                (_, Some(ranked)) => status(Some(ranked >= 10.0)).to_string(),
            };
            rows.push((
                format!(
                    "DRed one-edge delete, {} `R(0,Y)` (worst case for DRed: it over-deletes the giant component): ≥ 10× cheaper than recomputation",
                    workload.label()
                ),
                texts.join("; "),
                verdict,
            ));
        }
        self.local_dred_targets(&mut rows);

        // 5. Peak memory within 2x of the smallest peer on full TC.
        let mut memory = Vec::new();
        let mut memory_ok = Some(true);
        let closure_rows: Vec<ClosureRow> = self.suite.closure.clone();
        for row in &closure_rows {
            match (self.get(&row.no_magic()), self.fastest_peer(row)) {
                (Ok(d), Some((_, smallest))) => {
                    let r = d.rss_mib / smallest;
                    memory.push(format!("{}: {}", row.workload.label(), ratio(r)));
                    memory_ok = memory_ok.map(|ok| ok && r <= 2.0);
                }
                _ => memory_ok = None,
            }
        }
        rows.push((
            "Peak memory on full TC within 2× of the smallest peer (every row)".into(),
            memory.join("; "),
            status(memory_ok).into(),
        ));

        self.line("| target | measured | status |");
        self.line("|---|---|---|");
        for (target, measured, verdict) in rows {
            self.line(&format!("| {target} | {measured} | {verdict} |"));
        }
    }
}

/// The whole of BENCHMARKS.md.
pub fn render(suite: &Suite, results: &Results, machine: &Machine) -> String {
    let mut r = Report { suite, results, out: String::new() };
    let runs = suite.runs;
    r.line("# Benchmarks");
    r.line("");
    r.line("<!-- Generated by `cargo xtask bench` from crates/bench; edit the harness, not this file. -->");
    r.line("");
    if suite.quick {
        r.line(
            "**This is a `--quick` smoke-test run on small workloads, one run each: not the figures of a full run.**",
        );
        r.line("");
    }
    r.line("dlc measured in-process through its library crates against the Rust peers of the published comparison —");
    r.line("datafrog 2.0.1 (hand-written joins), ascent 0.8.1 and crepe 0.2.0 (macro-compiled Datalog) — in");
    r.line("the same run, on the same generated inputs.");
    r.line("");
    r.line("## How to rerun");
    r.line("");
    r.line("```sh");
    r.line("cargo xtask bench                  # the suite below; rewrites BENCHMARKS.md");
    r.line("cargo xtask bench --quick          # small workloads, one run each (< 1 min); prints, writes nothing");
    r.line("cargo xtask bench --filter random  # only the jobs whose key contains the text; prints");
    r.line("cargo run --release -p bench --features peers -- run-one tc-rlin:random:2000:10000:42 full datafrog");
    r.line("cargo xtask bench --filter dlc-binary     # the binary table alone (with its in-process runs)");
    r.line("SOUFFLE=/path/to/souffle cargo xtask bench # the binary table with Soufflé 2.5's interpreter and compiler");
    r.line("```");
    r.line("");
    r.line("Other options: `--runs N`, `--timeout SECONDS` (per child), `--out FILE`.");
    r.line("");
    r.line("## Machine and method");
    r.line("");
    r.line(&format!(
        "- {} cores ({}), {:.0} GiB. Load average (1/5/15 min) {} before the run and {} after: other",
        machine.cores, machine.cpu, machine.memory_gib, machine.load_before, machine.load_after
    ));
    r.line("  engineers compile on this machine at the same time, so absolute times are noisy; compare the");
    r.line("  ratios, which come from runs interleaved round-robin in the same session.");
    r.line(&format!(
        "- Every figure is the median of {runs} run{}; each run is a fresh child process (`bench run-one ...`).",
        if runs == 1 { "" } else { "s" }
    ));
    if runs > 1 {
        r.line(&format!(
            "  A job whose median is under {} ms runs {} more times (median of {}): runs that short vary by",
            crate::suite::SHORT_JOB_SECS * 1000.0,
            crate::suite::SHORT_JOB_EXTRA_RUNS,
            runs + crate::suite::SHORT_JOB_EXTRA_RUNS
        ));
        r.line("  about ten per cent from run to run, as much as the differences some tables judge.");
    }
    r.line(&format!("  The whole suite took {:.0} s of wall time.", results.wall.as_secs_f64()));
    r.line("- Time is wall time of the measured region. For dlc that is the pipeline after generation: parse");
    r.line("  the rules (a few lines of text) and intern the generated values into the program's constants,");
    r.line("  `magic::rewrite` (magic runs only), `plan::plan_program`, fill the EDB `Database`, build the input");
    r.line("  relations' indexes (`exec::index_inputs`), `exec::evaluate`; the phase table at the end splits it.");
    r.line("  No EDB text is parsed: the facts go from the generator's `u32` rows straight into the database.");
    r.line("  For a peer it is building its input relation from the edge list and running to the fixpoint.");
    r.line("  Generating the workload, counting the answers and freeing memory are outside the clock.");
    r.line("- Memory is the child's peak resident set (`VmHWM` of `/proc/self/status`), read when the clock");
    r.line("  stops; it includes the generated input and a process baseline of about 2–3 MiB.");
    r.line("- Ratios to peers are `time ÷ fastest peer's time` in the same row (1.00× = as fast as the best).");
    r.line("- Answers are checked before this file is written: all runs of a job, dlc with and without magic,");
    r.line("  every peer, both DRed strategies and recomputation must report the same counts (and agree with a");
    r.line("  breadth-first search where the query is a reachability one), and chain closures must be");
    r.line("  n(n−1)/2; any mismatch fails the run and leaves this file untouched.");
    r.line("");
    r.line("## Workloads");
    r.line("");
    r.line("- **random**: 2,000 nodes, 10,000 distinct directed edges, no self-loops, drawn with SplitMix64");
    r.line("  seed 42 (endpoints uniform, duplicates and self-loops redrawn); **random500**: 500 nodes / 2,500 edges,");
    r.line(
        "  same method. The comparison's graph generator is not public, so these are graphs of the same shape, not the",
    );
    r.line("  same graphs:");
    for (graph, peers_closure, peers_reach) in PEERS_SIZES {
        let row = r.suite.closure.iter().find(|c| matches!(c.workload, Workload::Tc { graph: g, .. } if g == graph));
        let Some(row) = row else { continue };
        let ours = r.get(&row.no_magic());
        if let Ok(s) = ours {
            let reach = if peers_reach > 0 {
                format!(
                    "; {} reachable from node 0 (published: {})",
                    count(s.answers as f64),
                    count(peers_reach as f64)
                )
            } else {
                String::new()
            };
            r.line(&format!(
                "  {}: closure {} (published: {}){reach}.",
                graph.label(),
                count(s.get("relation").unwrap_or(0.0)),
                count(peers_closure as f64)
            ));
        }
    }
    r.line("- **chainN**: 0→1→…→N−1. **gridWxH**: edges right and down, node `r·W+c`; `R(0,Y)` starts at a corner.");
    r.line("- **forestTxS**: T disjoint random recursive trees of S nodes (each node's parent drawn uniformly among");
    r.line("  the earlier nodes of its tree, edges parent→child); **pathsTxS**: T disjoint chains of S nodes. Node 0");
    r.line("  is a root, so `R(0,Y)` touches one component.");
    r.line("- **same-generation**: `sg(X,Y) <- par(X,P), par(Y,P)` and `sg(X,Y) <- par(X,P), sg(P,Q), par(Y,Q)` on a");
    r.line("  complete tree (fan-out^depth), queried from the last leaf.");
    r.line("- **points-to**: field-insensitive Andersen (`alloc`, `assign`, `load`, `store`; `pt` and `hpt`) on a");
    r.line("  random program, queried for the variable of the first allocation site.");
    r.line("- Rules: rlin `R(X,Z) <- E(X,Y), R(Y,Z)`, llin `R(X,Z) <- R(X,Y), E(Y,Z)`, nonlin");
    r.line("  `R(X,Z) <- R(X,Y), R(Y,Z)`, each with `R(X,Y) <- E(X,Y)`.");
    r.line("- The larger random graph (10⁴ nodes / 5·10⁴ edges) is not in the suite: its closure has on the order");
    r.line("  of 10⁸ tuples, minutes per system and several GiB, which does not fit the 10-minute budget.");
    r.line("");
    r.line("## Targets: evaluation, magic sets and DRed");
    r.line("");
    r.targets();
    r.line("");
    r.random_dred_note();
    r.line("");
    r.forest_note();
    r.line("");
    r.line("## Targets for `--magic auto`");
    r.line("");
    r.line("`dlc`'s default, `--magic auto`, evaluates the magic rewrite with adornment subsumption (a call `p^β`");
    r.line("is answered from an adornment `p^γ` with fewer bound positions where the rewrite has one), unless");
    r.line("every adornment is all-free (then the original program) or a demand relation passes its cap, 1/16");
    r.line("of the `|adom|^k` tuples its `k` columns can take: then that evaluation is abandoned and the original");
    r.line("program evaluated, and the auto time includes both. Magic is the plain rewrite (`--magic on`);");
    r.line("the full-closure rows query `R(X,Y)` (their `--no-magic` runs are the closure table's).");
    r.line("");
    r.auto_table();
    r.line("");
    r.line("## Full closure: dlc against the peers");
    r.line("");
    r.line("Each cell: time, peak memory, time ÷ fastest peer in the row. dlc `--no-magic` evaluates the source");
    r.line("program (these runs are also the `--no-magic` column of the query table); \"dlc magic, `R(X,Y)`\" is the");
    r.line("magic program of the all-free query, i.e. what the rewrite costs where it cannot narrow anything.");
    r.line("");
    r.closure_table();
    r.line("");
    r.line("## Selection queries: magic against `--no-magic`");
    r.line("");
    r.line("Speed-up is `--no-magic` time ÷ magic time for the whole measured pipeline; \"query only\" compares just");
    r.line("`exec::evaluate` on the loaded, indexed database, leaving out loading the EDB, compiling and indexing.");
    r.line("");
    r.query_table();
    r.line("");
    r.line("## The `dlc` binary end to end");
    r.line("");
    r.line("What a user runs: the workload's input written as tab-separated `<Rel>.facts` files and the rules as a");
    r.line("Soufflé program (`.decl`, `.input`, `.output`; `bench write-inputs WORKLOAD QUERY DIR` writes them), then");
    r.line("the release binary `dlc -F in -D out --threads 1 prog.dl` (one thread, like the in-process runs), which");
    r.line("reads the facts, evaluates and writes `<Rel>.csv`. The output is the whole relation, or for a point query");
    r.line("the relation `Q(y) :- R(c, y).`, which dlc's default `--magic auto` computes through the magic rewrite");
    r.line("(one output relation selecting a constant) or, when its demand passes the caps, the original program.");
    r.line("Writing the files is");
    r.line("outside the clock; time is the child's wall time from spawn to exit, memory its peak resident set");
    r.line("(`VmHWM` of `/proc/<pid>/status`, read continually while it runs). \"In-process\" is the");
    r.line("same evaluation from the same run: the `--no-magic` job of the tables above for the whole relation,");
    r.line("the `--magic auto` job of the point query for `Q`; it starts from generated `u32` rows, so \"read input\" adds");
    r.line("what reading the input files into memory costs (`std::fs::read`, page cache warm). Time ratio =");
    r.line("binary ÷ (in-process + read input); memory ratio = binary ÷ in-process. The rows of every output file");
    r.line("are counted and checked equal to the in-process answers before this file is written.");
    r.line("");
    r.binary_table();
    r.line("");
    r.line("### One thread and every core");
    r.line("");
    r.line("The binary table's runs again with each program's default number of threads: `dlc` without");
    r.line("`--threads` (it splits large joins over every core) and Soufflé's compiled program with `-jN` for the");
    r.line("machine's N cores, in the same child job right after the one-thread run, on the same files; the");
    r.line("rows of the second output are checked equal to the first's. Speed-up = one thread ÷ every core.");
    r.line("");
    r.threads_table();
    r.line("### A relation of many tuples");
    r.line("");
    r.line("An ordered-list CRDT (a replicated growable array; `bench write-inputs` writes its program and facts):");
    r.line("elements typed one after another, one in fifty after a random earlier one, runs of consecutive");
    r.line("elements removed, and `skipBlank`, a recursive relation of four columns from each element to every");
    r.line("element up to the next one still there, which holds nearly all the tuples. Its output, `nextVisible`,");
    r.line("is one row per visible element; the table checks it, and `skipBlank`'s size comes from the generated");
    r.line("list. Through the binary (`dlc -F in -D out --threads 1`) and Soufflé's compiled program (`-j1`), one");
    r.line("run each; bytes per tuple = peak resident set ÷ `skipBlank`'s tuples, everything else included.");
    r.line("");
    r.large_table();
    r.line("## Targets: ahead of Soufflé compiled");
    r.line("");
    r.souffle_targets();
    r.line("Why the misses, where they are:");
    r.line("");
    r.line("- Memory. A run's peak includes the pages of its own code and libraries, and dlc's floor is above");
    r.line("  Soufflé's: the one-edge chain row (chain2) is start-up alone. Of dlc's floor about 5 MiB are");
    r.line("  file-backed pages (read with `/proc/PID/status` while an empty program waited for its input):");
    r.line("  about 3 MiB of dlc's own code — the kernel maps 64 KiB around each page that start-up touches");
    r.line("  (the command line, the Soufflé front end, planning, the engine, spread over 11.7 MB of text) —");
    r.line("  and 1.2 MiB of libc; the heap is under 0.5 MiB. On rows of 6–20 MiB that floor is part of the");
    r.line("  gap. Above it, dlc stores a binary relation as rows plus a set plus each index (row ids and");
    r.line("  the other column per tuple), where Soufflé's B-trees hold each tuple once per index.");
    r.line("- Points-to time. `perf` on the 1,500-variable run: about a third of the time is");
    r.line("  `RowSet::stage`, the membership test of each candidate the joins derive — 7.74 million for");
    r.line("  181,715 facts, exactly semi-naive evaluation's count (checked with an independent simulator) —");
    r.line("  dependent loads each (group map, skipped when the prefix repeats, as for 60–80% of them;");
    r.line("  group record; bitmap word); the join loops are the rest.");
    r.line("  The work is already minimal for tuple-at-a-time evaluation, so 0.5× needs fewer candidates, not");
    r.line("  cheaper ones: `hpt(b, o) :- store(p, w), pt(p, b), pt(w, o)` derives the whole of `pt(w, _)`");
    r.line("  for each new `pt(p, b)`, which a word-wise union of `w`'s bitmap into `b`'s would do 64 at a");
    r.line("  time. That is not built.");
    r.line("- Time on the other rows over 0.5×: the negation and bounded-hop programs spend it the same way");
    r.line("  (one membership test per candidate); a run of a few milliseconds is start-up and reading.");
    r.line("- Non-linear closures against ascent: the same cost, one membership test per candidate");
    r.line("  (`RowSet::stage` is about half of the chain's time); dlc's candidates are already semi-naive");
    r.line("  evaluation's minimum (earlier atoms read the old rows, the delta atom the new ones).");
    r.line("- Threads. A fixpoint join is split only where its last run made at least 16 firings per");
    r.line("  new tuple (`exec::MIN_SPLIT_FIRINGS_PER_NEW`): the workers test candidates in parallel, but");
    r.line("  the merge stages every new tuple again on one thread, so the joins of 1–5 firings per new");
    r.line("  tuple (the linear, bounded-hop and forest closures, the complement under negation) ran");
    r.line("  0.7–0.9× split and now run on one thread in both columns: their difference there is noise");
    r.line("  (a row just past the 1.1× band, like the forest's, does the same work in both). The");
    r.line("  non-linear closures (200–570 firings per new tuple) split, 1.3–1.6× on two cores, short");
    r.line("  of 1.6–1.8×: that one-thread merge.");
    r.line("");
    r.line("## The differential backend: workers and processes");
    r.line("");
    r.line("The same end-to-end runs as the binary table (`-F in -D out`, release binary), natively and with");
    r.line("`--engine differential --workers 1`, `--workers 2`, and as a cluster of two processes of one worker on");
    r.line("127.0.0.1 (`--processes 2 --process I --hosts FILE`; time until the last process exits, memory the");
    r.line("larger process's peak). The rows of every output file are checked equal to the native binary's.");
    r.line("");
    r.differential_table();
    r.line("");
    r.line("## Semi-naive against the reference engine");
    r.line("");
    r.line("The reference engine is the naive nested-loop evaluator that defines the rounds and");
    r.line("`row_tests`; small sizes only. Both evaluate the source program (no magic), full closure.");
    r.line("");
    r.reference_table();
    r.line("");
    r.line("## Incremental maintenance (DRed)");
    r.line("");
    r.line("The magic program of `R(0,Y)` is materialised first (not timed); then one edge is deleted or inserted.");
    r.line("\"DRed apply\" times `Maintained::apply_counting` (the same work as `apply`, returning counts instead of");
    r.line("the per-fact lists, which on huge deletions cost much memory) of a state kept with `Maintenance::Dred`,");
    r.line("plain delete-and-rederive: it over-deletes every fact with a derivation that used a deleted fact.");
    r.line(
        "\"ranked apply\" is the same call on a state kept with `Maintenance::Ranked`: every fact keeps the rank of",
    );
    r.line("the evaluation step that first derived it, and a fact is over-deleted only when no derivation from");
    r.line("lower-ranked facts survives, so over-deletion stops at the first alternative derivation. \"recompute\"");
    r.line("times `plan::plan_program` + `exec::index_inputs` + `exec::evaluate` of the same magic program on the");
    r.line("changed EDB, whose database is filled before the clock starts; the input indexes are inside the clock,");
    r.line("because a recomputation from the input relations has to index them before it can join them. Memory is");
    r.line("the peak of the whole child, so for both DRed strategies it includes the initial materialisation.");
    r.line("After every update the answers of both maintained states are checked against the recomputation and");
    r.line("against a breadth-first search of the changed graph. Count cells read `DRed / ranked`.");
    r.line("");
    r.line("On forest and paths graphs node 0 lies in the first component (nodes `0..S`). The local changes are:");
    r.line("delete the edge into node S−1 (a leaf of the queried tree, the end of the queried path); delete the");
    r.line("graph's last edge (in the last component, outside the demand of `R(0,Y)`); insert an edge between the");
    r.line("last two components; insert the edge from node S−1 to node S, the root of the next component, which");
    r.line("adds its nodes to the answers. Recomputing costs at least O(|E|) however small the change.");
    r.line("");
    r.update_table();
    r.line("");
    r.line("### Batches of random deletions and insertions");
    r.line("");
    r.line("The whole left-linear closure `R(X,Y)` is materialised first (not timed); then one batch of 1 to 1,000");
    r.line("random edges is deleted or inserted, timed as above, by `--maintenance auto` (dlc's default: DRed's");
    r.line("over-deletion within a budget of a tenth of the recomputation estimated from the input left, then ranked");
    r.line("with the rest, its row locators paid first, else recomputation), DRed and");
    r.line("ranked DRed, against a recomputation. The first batch of a state builds the indexes and row locators");
    r.line("maintenance reads, so these times include them; an index a batch would probe only a few times is not");
    r.line("built for it (the join scans the relation instead, until such scans have read what building the index");
    r.line("costs). Every result is checked against breadth-first searches of the changed graph.");
    r.line("");
    r.batch_table();
    r.line("");
    r.line("The same batches through the release binary as a user applies them: `dlc -F in -D out --threads 1");
    r.line("--updates batch prog.dl` with `--maintenance auto` (the default), `dred` or `ranked`; wall time and");
    r.line("peak memory of the whole run (evaluate, keep the state, apply the batch, write the closure after");
    r.line("it), with the batch's own time from the report in parentheses, against the same binary evaluating");
    r.line("and writing the closure of the input before the batch (what the maintaining runs pay first) and of");
    r.line("the input with the batch's change made (a rerun, what the batch must beat). The rows of every");
    r.line("written closure are checked against breadth-first searches of the changed graph.");
    r.line("");
    r.binary_batch_table();
    r.line("");
    r.batch_targets();
    r.line("");
    r.line("Why the misses. `auto` recomputes every batch that deletes at least a twentieth of the input");
    r.line("(the cell says what it chose). Such a batch pays, beyond the recomputation of the recompute column,");
    r.line("about 0.35 ms measured on the chain's 1,000 deletions: reading the deleted facts against an input");
    r.line("that the two-million-fact state has pushed out of the caches, listing and staging them (0.18 ms);");
    r.line("removing them and copying the input into a new state (0.09 ms); handing the old closure's row");
    r.line("buffer to the new one and its other parts to a thread that drops them (0.1 ms). That is more than");
    r.line("recomputing what the chain's 1,000 deletions leave (0.3 ms, from an input built and cached before");
    r.line("the clock starts), and a tenth of the forest's recomputation. Through the binary, where the rerun loads its input");
    r.line("too, every such batch stays within 1.1× of the rerun. On the forest a twentieth of the edges is no");
    r.line("wide change (an edge of a tree carries its subtree only), and DRed is cheaper than");
    r.line("recomputing there: auto's rule of a twentieth is too coarse for it. A state's first batch reads what");
    r.line("the evaluation did not: a deleted or inserted edge looks for the paths that end at its source, by");
    r.line("the closure's second column, which no join of the evaluation indexed. A batch of a few edges scans");
    r.line("the closure for them (under a nanosecond a row) rather than index it (about 15 ns a row), and the");
    r.line("index is built once such scans have read sixteen times the closure's rows (ski rental: the batches");
    r.line("together pay at most twice the cheaper of the two); a larger batch builds it. A maintaining run");
    r.line("holds, beside what an evaluation holds, the indexes and row locators maintenance probes. A deletion");
    r.line("holds the facts it removes until it is done; DRed's over-deletion gives back the index only its");
    r.line("first wave reads (the closure by its second column) once it has over-deleted a quarter as many");
    r.line("facts as the index holds, checked after every slice of a wave from the first wave's end on, so at");
    r.line("most the index and the first wave's facts are held beside the state: on the chain, whose first");
    r.line("wave holds half the closure, that is the worst peak of DRed. Ranked over-deletion keeps a");
    r.line("row locator of the closure besides, and holds more.");
    r.line("");
    r.slow_small_updates();
    r.line("");
    r.line("## Compile time and growth");
    r.line("");
    r.line("The `compile` group: generated programs of growing size through the whole pipeline from text —");
    r.line("parse, lower, validate, magic rewrite, plan, and semi-naive evaluation on the program's few inline");
    r.line("facts (`dlc-compile` jobs, `--filter compile`) — and the right-linear closure queried with its second");
    r.line("column bound, `R(X,c)` (magic adornment `fb`), on chains of growing length, measured like the other");
    r.line("queries (`--filter fb:`). The growth exponent is the slope of time against size between a row and");
    r.line("the one before it on a log-log scale: 1 is linear, 2 quadratic; at the small sizes, process start-up");
    r.line("and fixed costs keep it below 1. Each program is measured in one run (the query rows in as many as");
    r.line("the rest of the suite).");
    r.line("");
    r.scaling_table();
    r.line("");
    r.line("## Explaining answers");
    r.line("");
    r.line("`dlc --explain 'R(0,y)'` on the evaluated database: after the evaluation (magic program of `R(0,Y)`, or");
    r.line("the `--no-magic` closure), a proof of `R(0,y)` is found by `exec::Explainer` for the smallest node `y` at");
    r.line("breadth-first distance 1, 2 and 3 from node 0, each with a fresh explainer, so every time includes the");
    r.line("indexes it builds on the relations it reads. The search reads facts of lower rank only and stops at the");
    r.line("smallest height; \"evaluation\" is `exec::evaluate` alone, as in the phase table. Through magic the proof");
    r.line("also holds the demand facts that enabled each step, hence its greater height.");
    r.line("");
    r.explain_table();
    r.line("");
    r.line("## Where dlc's time goes");
    r.line("");
    r.line("Medians per phase: load = parse rules, intern values, fill the EDB database; compile = magic rewrite and");
    r.line("planning; index = `exec::index_inputs`, the indexes on input relations that evaluation probes; eval =");
    r.line("`exec::evaluate` on the loaded, indexed database (the query). Rule firings are complete body matches,");
    r.line("duplicates included.");
    r.line("");
    r.phase_table();
    r.line("");
    r.line("## Soufflé, as published");
    r.line("");
    r.line("Soufflé 2.5 is not in the package registries reachable here (see the binary table for measuring it");
    r.line("with `SOUFFLE=...`). These are the published figures from a");
    r.line("2-core machine of the same kind (`-j1`, seconds / MiB) on the comparison's own graphs; they are not from");
    r.line("this run, so compare them with dlc only through the peers measured in both places.");
    r.line("");
    r.line("| graph, rule | interpreted full | compiled full | interpreted + magic query | compiled + magic query |");
    r.line("|---|---|---|---|---|");
    for (row, a, b, c, d) in SOUFFLE {
        r.line(&format!("| {row} | {a} | {b} | {c} | {d} |"));
    }
    r.line("");
    for line in HAND_MEASUREMENTS.lines() {
        r.line(line);
    }
    r.out
}

/// The last section of BENCHMARKS.md: figures measured by hand when a feature was built,
/// which no job of the suite reruns, copied into every report as they are.
const HAND_MEASUREMENTS: &str = include_str!("hand_measurements.md");

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(super::count(3_930_308.0), "3,930,308");
        assert_eq!(super::count(999.0), "999");
        assert_eq!(super::count(1000.0), "1,000");
        assert_eq!(super::ratio(1455.2), "1455×");
    }

    #[test]
    fn growth_exponents_are_log_log_slopes() {
        assert!((super::growth_exponent(10, 1.0, 100, 10.0) - 1.0).abs() < 1e-9);
        assert!((super::growth_exponent(10, 1.0, 100, 100.0) - 2.0).abs() < 1e-9);
    }
}
