//! `bench`: runs the benchmark suite and rewrites BENCHMARKS.md (`cargo xtask bench`);
//! `bench run-one ...` is the child side of one measurement.

use bench::measure::{self, Job};
use bench::report::{self, Machine};
use bench::suite::{self, Suite};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

const USAGE: &str = "\
usage: bench [--quick] [--runs N] [--timeout SECONDS] [--filter TEXT] [--out FILE]
       bench run-one WORKLOAD QUERY SYSTEM [CHANGE]
       bench describe WORKLOAD...
       bench write-inputs WORKLOAD QUERY DIR

Without --quick or --filter the report replaces BENCHMARKS.md at the workspace root;
otherwise it is printed (or written to --out). `write-inputs` writes the files a
binary run reads: DIR/prog.dl (Soufflé dialect), DIR/in/<Rel>.facts, and DIR/out.";

struct Options {
    quick: bool,
    runs: Option<usize>,
    timeout: Duration,
    filter: Option<String>,
    out: Option<PathBuf>,
}

fn parse_options(args: &[String]) -> Result<Options, String> {
    let mut o = Options { quick: false, runs: None, timeout: Duration::from_secs(300), filter: None, out: None };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = || it.next().cloned().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--quick" => o.quick = true,
            "--runs" => o.runs = Some(value()?.parse().map_err(|_| "--runs takes a number")?),
            "--timeout" => o.timeout = Duration::from_secs(value()?.parse().map_err(|_| "--timeout takes seconds")?),
            "--filter" => o.filter = Some(value()?),
            "--out" => o.out = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(o)
}

/// BENCHMARKS.md beside the workspace's Cargo.toml (this crate lives in crates/bench).
fn default_report_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../BENCHMARKS.md")
}

fn run_suite(options: Options) -> ExitCode {
    let mut suite = Suite::new(options.quick);
    suite.souffle = std::env::var_os("SOUFFLE").is_some();
    if let Some(runs) = options.runs {
        suite.runs = runs.max(1);
    }
    let mut machine = Machine::probe();
    eprintln!("bench: {} jobs x {} runs, {} cores", suite.jobs().len(), suite.runs, machine.cores);
    let results = suite::run(&suite, options.timeout, options.filter.as_deref());
    machine.load_after = report::load_average();
    let problems = suite::check(&suite, &results);
    if !problems.is_empty() {
        eprintln!("bench: ANSWERS DISAGREE — not writing a report:");
        for p in &problems {
            eprintln!("  {p}");
        }
        return ExitCode::FAILURE;
    }
    let text = report::render(&suite, &results, &machine);
    let path = match (&options.out, options.quick || options.filter.is_some()) {
        (Some(path), _) => Some(path.clone()),
        (None, false) => Some(default_report_path()),
        (None, true) => None,
    };
    match path {
        Some(path) => match std::fs::write(&path, &text) {
            Ok(()) => eprintln!("bench: wrote {} ({:.0} s)", path.display(), results.wall.as_secs_f64()),
            Err(e) => {
                eprintln!("bench: cannot write {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        },
        None => print!("{text}"),
    }
    ExitCode::SUCCESS
}

/// `bench write-inputs WORKLOAD QUERY DIR`: the files of one binary run, to run by hand.
fn write_inputs(args: &[String]) -> Result<(), String> {
    let [workload, query, dir] = args else { return Err("usage: bench write-inputs WORKLOAD QUERY DIR".into()) };
    let workload = bench::workload::Workload::parse(workload)?;
    let query = bench::workload::Query::parse(query)?;
    let program = bench::binary::souffle_program(&workload, query)?;
    let layout = bench::binary::Layout { dir: PathBuf::from(dir) };
    bench::binary::write_inputs(&layout, &program, &workload.generate()).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("run-one") => match Job::parse(&args[1..]).and_then(|job| measure::run_here(&job)) {
            Ok(sample) => {
                println!("{}", sample.to_line());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("bench run-one: {e}");
                ExitCode::FAILURE
            }
        },
        Some("describe") => {
            for spec in &args[1..] {
                match bench::workload::Workload::parse(spec) {
                    Ok(w) => println!("{spec}: {} facts, point node {}", w.generate().fact_count(), w.point_node()),
                    Err(e) => eprintln!("{e}"),
                }
            }
            ExitCode::SUCCESS
        }
        Some("write-inputs") => match write_inputs(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bench write-inputs: {e}");
                ExitCode::FAILURE
            }
        },
        Some("-h" | "--help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => match parse_options(&args) {
            Ok(options) => run_suite(options),
            Err(e) => {
                eprintln!("bench: {e}\n{USAGE}");
                ExitCode::from(2)
            }
        },
    }
}
