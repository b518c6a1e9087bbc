//! `bench`: runs the benchmark suite and rewrites BENCHMARKS.md; `bench run-one ...` is
//! the child side of one measurement.

use bench::measure::{self, Job};
use std::process::ExitCode;

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
        _ => ExitCode::FAILURE,
    }
}
