//! `cargo xtask`: project automation in Rust (matklad's pattern), kept dependency-free so
//! it compiles in a second.
//!
//! - `cargo xtask regen`: rewrite every generated file — insta snapshots of all fixtures,
//!   docs/error-codes.md, docs/cli.md — and drop orphaned snapshots.
//! - `cargo xtask bench [ARGS]`: run the benchmark harness and rewrite BENCHMARKS.md.

use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("regen") => regen(),
        Some("bench") => bench(&args[1..]),
        _ => {
            eprintln!("usage: cargo xtask <regen | bench [--quick]>");
            eprintln!("  regen   rewrite snapshots and generated docs (then review with `git diff`)");
            eprintln!("  bench   run the benchmarks against the peers and rewrite BENCHMARKS.md");
            ExitCode::from(2)
        }
    }
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string()))
}

fn status(mut cmd: Command) -> ExitCode {
    match cmd.status() {
        Ok(s) if s.success() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("xtask: cannot run {cmd:?}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn regen() -> ExitCode {
    let mut cmd = cargo();
    cmd.args(["test", "-p", "dlc", "--test", "snapshots", "--test", "generated"])
        .env("INSTA_UPDATE", "always")
        .env("INSTA_FORCE_PASS", "1")
        .env("DLC_REGEN", "1");
    status(cmd)
}

fn bench(args: &[String]) -> ExitCode {
    // The binary table runs the release `dlc` beside the harness's own executable.
    let mut build = cargo();
    build.args(["build", "--release", "-p", "dlc", "--bin", "dlc"]);
    if status(build) != ExitCode::SUCCESS {
        return ExitCode::FAILURE;
    }
    let mut cmd = cargo();
    // The peers are a feature of the bench crate, so that the workspace's tests do not
    // compile them.
    cmd.args(["run", "--release", "-p", "bench", "--features", "peers", "--"]).args(args);
    status(cmd)
}
