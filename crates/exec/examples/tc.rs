//! Transitive-closure timing harness for the engines on the graphs of PEERS.md, with
//! datafrog run in the same process as the baseline, since absolute times drift with the
//! machine's load:
//!
//! `cargo run --release -p exec --example tc -- GRAPH RULE [MODE]` where GRAPH is
//! `random|chain2000|random500|chain500`, RULE is `rlin|llin|nonlinear` and MODE is
//! - nothing: one dlc evaluation of the full closure, with the peak RSS;
//! - `frog`: one datafrog evaluation, with the peak RSS;
//! - `compare`: dlc and datafrog alternately, three times each, medians and ratio;
//! - `magic`: the point query `R(0,Y)` through `magic::rewrite` against the full closure
//!   filtered afterwards, alternately, medians;
//! - `dred`: deleting and re-inserting edges of the magic program with DRed, against
//!   evaluating the magic program from scratch.

use exec::{evaluate, Database, EvalOptions, Maintained, Update};
use ir::Program;
use std::time::{Duration, Instant};

/// SplitMix64, the generator PEERS.md's graphs were drawn with.
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: u32) -> u32 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ((z >> 32) * u64::from(bound) >> 32) as u32
    }
}

fn edges(graph: &str) -> Vec<(u32, u32)> {
    let random = |nodes: u32, count: usize| {
        let mut rng = Rng(42);
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        while out.len() < count {
            let (a, b) = (rng.below(nodes), rng.below(nodes));
            if a != b && seen.insert((a, b)) {
                out.push((a, b));
            }
        }
        out
    };
    match graph {
        "random" => random(2000, 10_000),
        "random500" => random(500, 2_500),
        "chain500" => (1..500).map(|i| (i - 1, i)).collect(),
        _ => (1..2000).map(|i| (i - 1, i)).collect(),
    }
}

fn recursive_rule(rule: &str) -> &'static str {
    match rule {
        "llin" => "R(X,Z) <- R(X,Y), E(Y,Z).",
        "nonlinear" => "R(X,Z) <- R(X,Y), R(Y,Z).",
        _ => "R(X,Z) <- E(X,Y), R(Y,Z).",
    }
}

/// The source program with its query, and the constant id of every node `0..nodes`.
fn source(rule: &str, nodes: u32) -> (Program, Vec<u32>) {
    let text = format!("R(X,Y) <- E(X,Y).\n{}\n?- R(0,Y).\n", recursive_rule(rule));
    let (program, diagnostics) = syntax::parse_program(&text, ir::FileId(0));
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let mut program = program.expect("the program parses");
    let values = (0..nodes).map(|n| program.consts.intern(&n.to_string()).0).collect();
    (program, values)
}

fn database(program: &Program, values: &[u32], edges: &[(u32, u32)]) -> Database {
    let e = program.lookup_source("E").expect("E is declared");
    let mut db = Database::new(program);
    for &(a, b) in edges {
        db.insert(e, &[values[a as usize], values[b as usize]]);
    }
    db
}

/// The full closure from the edge list: loading the facts is part of the time, as it is
/// for datafrog. Returns the closure size.
fn dlc(rule: &str, edges: &[(u32, u32)], nodes: u32) -> (usize, Duration) {
    let (program, values) = source(rule, nodes);
    let started = Instant::now();
    let db = database(&program, &values, edges);
    let plan = plan::plan_program(&program);
    let eval = evaluate(&plan, &program, db, EvalOptions::default());
    let elapsed = started.elapsed();
    (eval.db.len(program.lookup_source("R").expect("R is declared")), elapsed)
}

/// The standard datafrog closure, as the bench crate runs it.
fn frog(rule: &str, edges: &[(u32, u32)]) -> (usize, Duration) {
    use datafrog::{Iteration, Relation};
    let started = Instant::now();
    let mut iteration = Iteration::new();
    let result = match rule {
        "llin" => {
            let edges: Relation<(u32, u32)> = edges.iter().copied().collect();
            let tc_rev = iteration.variable::<(u32, u32)>("tc_rev");
            tc_rev.extend(edges.iter().map(|&(x, y)| (y, x)));
            while iteration.changed() {
                tc_rev.from_join(&tc_rev, &edges, |_y, &x, &z| (z, x));
            }
            tc_rev.complete()
        }
        "nonlinear" => {
            let tc = iteration.variable::<(u32, u32)>("tc");
            let tc_rev = iteration.variable::<(u32, u32)>("tc_rev");
            tc.extend(edges.iter().copied());
            tc_rev.extend(edges.iter().map(|&(x, y)| (y, x)));
            while iteration.changed() {
                tc.from_join(&tc_rev, &tc, |_y, &x, &z| (x, z));
                tc_rev.from_join(&tc_rev, &tc, |_y, &x, &z| (z, x));
            }
            drop(tc_rev.complete());
            tc.complete()
        }
        _ => {
            let edges_by_dst: Relation<(u32, u32)> = edges.iter().map(|&(x, y)| (y, x)).collect();
            let tc = iteration.variable::<(u32, u32)>("tc");
            tc.extend(edges.iter().copied());
            while iteration.changed() {
                tc.from_join(&tc, &edges_by_dst, |_y, &z, &x| (x, z));
            }
            tc.complete()
        }
    };
    (result.len(), started.elapsed())
}

/// The point query `R(0,Y)` answered with or without the magic rewrite; returns the
/// answer count. Rewriting and planning are part of the time.
fn query(rule: &str, edges: &[(u32, u32)], nodes: u32, magic: bool) -> (usize, Duration) {
    let (source, values) = source(rule, nodes);
    let started = Instant::now();
    let program = if magic {
        let query = source.query.clone().expect("the source has a query");
        magic::rewrite(&source, &query).program
    } else {
        source.clone()
    };
    let db = database(&program, &values, edges);
    let plan = plan::plan_program(&program);
    let eval = evaluate(&plan, &program, db, EvalOptions::default());
    // The answers are `(0, y)` for node values `y`: probing them costs nothing next to
    // listing a relation of millions of tuples.
    let answer = program.query.as_ref().expect("the program keeps its query").atom.pred;
    let answers = values.iter().filter(|&&y| eval.db.contains(answer, &[values[0], y])).count();
    (answers, started.elapsed())
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64()
}

/// Runs `a` and `b` alternately `n` times; returns their median times.
fn alternate(n: usize, mut a: impl FnMut() -> Duration, mut b: impl FnMut() -> Duration) -> (f64, f64) {
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..n {
        ta.push(a());
        tb.push(b());
    }
    (median(ta), median(tb))
}

fn dred(rule: &str, edges: &[(u32, u32)], nodes: u32) {
    let (source, values) = source(rule, nodes);
    let query = source.query.clone().expect("the source has a query");
    let program = magic::rewrite(&source, &query).program;
    let e = program.lookup_source("E").expect("E is declared");
    let started = Instant::now();
    let mut maintained = Maintained::new(plan::plan_program(&program), &program, database(&program, &values, edges));
    println!("  initial evaluation {:.4}s, work {}", started.elapsed().as_secs_f64(), maintained.initial_work());
    let mut rng = Rng(7);
    let (mut apply_times, mut scratch_times) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let (a, b) = edges[rng.below(edges.len() as u32) as usize];
        let edge = vec![(e, vec![values[a as usize], values[b as usize]])];
        for (name, update) in [
            ("delete", Update { inserts: vec![], deletes: edge.clone() }),
            ("insert", Update { inserts: edge, deletes: vec![] }),
        ] {
            let started = Instant::now();
            let report = maintained.apply(&update);
            let applied = started.elapsed();
            let over: usize = report.overdeleted.iter().map(|(_, t)| t.len()).sum();
            let back: usize = report.rederived.iter().chain(&report.inserted).map(|(_, t)| t.len()).sum();
            // The same database evaluated from scratch, to compare against.
            let mut remaining: Vec<(u32, u32)> = edges.to_vec();
            if name == "delete" {
                remaining.retain(|&edge| edge != (a, b));
            }
            if std::env::var("NOSCRATCH").is_ok() { continue; }
            let started = Instant::now();
            let db = database(&program, &values, &remaining);
            let fresh = evaluate(&plan::plan_program(&program), &program, db, EvalOptions::default());
            let scratch = started.elapsed();
            assert!(fresh.db.same_tuples(maintained.db()), "DRed disagrees with recomputation");
            println!(
                "  {name} E({a},{b}): {over} over-deleted, {back} rederived or inserted, work {} (scratch {}), \
                 apply {:.4}s, scratch {:.4}s",
                report.work,
                fresh.work,
                applied.as_secs_f64(),
                scratch.as_secs_f64()
            );
            if name == "delete" {
                apply_times.push(applied);
                scratch_times.push(scratch);
            }
        }
    }
    let (apply, scratch) = (median(apply_times), median(scratch_times));
    println!("  delete median: apply {apply:.4}s, scratch {scratch:.4}s, {:.1}x cheaper", scratch / apply);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let graph = args.get(1).map_or("random", String::as_str);
    let rule = args.get(2).map_or("rlin", String::as_str);
    let mode = args.get(3).map_or("", String::as_str);
    let edges = edges(graph);
    let nodes = edges.iter().map(|&(a, b)| a.max(b) + 1).max().unwrap_or(0);
    match mode {
        "frog" => {
            let (len, time) = frog(rule, &edges);
            println!("{graph} {rule} datafrog: {len} tuples, {:.3}s, peak {:.1} MiB", time.as_secs_f64(), peak_rss_mib());
        }
        "compare" => {
            let n = args.get(4).and_then(|n| n.parse().ok()).unwrap_or(3);
            let (d, f) = alternate(n, || dlc(rule, &edges, nodes).1, || frog(rule, &edges).1);
            println!("{graph} {rule}: dlc {d:.3}s, datafrog {f:.3}s, dlc/datafrog {:.2}", d / f);
        }
        "magic" => {
            let (with, without) = (query(rule, &edges, nodes, true), query(rule, &edges, nodes, false));
            assert_eq!(with.0, without.0, "magic and full evaluation disagree");
            let (m, full) = alternate(3, || query(rule, &edges, nodes, true).1, || query(rule, &edges, nodes, false).1);
            println!("{graph} {rule} R(0,Y): {} answers, magic {m:.4}s, no magic {full:.4}s, ratio {:.3}", with.0, m / full);
        }
        "dred" => dred(rule, &edges, nodes),
        _ => {
            let (len, time) = dlc(rule, &edges, nodes);
            println!("{graph} {rule} dlc: {len} tuples, {:.3}s, peak {:.1} MiB", time.as_secs_f64(), peak_rss_mib());
        }
    }
}
