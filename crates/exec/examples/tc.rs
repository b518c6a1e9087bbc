//! Transitive-closure timing harness for the semi-naive engine on the graphs of the peer
//! table: `cargo run --release -p exec --example tc -- random|chain2000|random500|chain500 rlin|llin|nonlinear [dred]`;
//! with `dred` it also times deleting and re-inserting one edge with DRed.

use exec::{evaluate, Database, Engine, EvalOptions, Maintained, Update};
use ir::PredId;
use plan::testing::program;
use std::time::Instant;

/// A small deterministic generator (xorshift64*), so that no dependency is needed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) % n
    }
}

fn edges(graph: &str) -> Vec<(u32, u32)> {
    let random = |nodes: u64, count: usize| {
        let mut rng = Rng(42);
        let mut seen = std::collections::HashSet::new();
        while seen.len() < count {
            let (a, b) = (rng.below(nodes) as u32, rng.below(nodes) as u32);
            if a != b {
                seen.insert((a, b));
            }
        }
        let mut v: Vec<(u32, u32)> = seen.into_iter().collect();
        v.sort_unstable();
        v
    };
    match graph {
        "random" => random(2000, 10_000),
        "random500" => random(500, 2_500),
        "chain500" => (0..499).map(|i| (i, i + 1)).collect(),
        _ => (0..1999).map(|i| (i, i + 1)).collect(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let graph = args.get(1).map_or("random", String::as_str);
    let rule = args.get(2).map_or("rlin", String::as_str);
    let recursive = match rule {
        "llin" => "R(X,Z) <- R(X,Y), E(Y,Z)",
        "nonlinear" => "R(X,Z) <- R(X,Y), R(Y,Z)",
        _ => "R(X,Z) <- E(X,Y), R(Y,Z)",
    };
    let p = program(&format!("R(X,Y) <- E(X,Y)\n{recursive}"));
    let e = p.lookup_source("E").unwrap_or(PredId(0));
    let r = p.lookup_source("R").unwrap_or(PredId(0));
    let started = Instant::now();
    let mut db = Database::new(&p);
    let edges = edges(graph);
    for &(a, b) in &edges {
        db.insert(e, &[a, b]);
    }
    let plan = plan::plan_program(&p);
    let eval = evaluate(&plan, &p, db.clone(), EvalOptions { engine: Engine::Seminaive, ..EvalOptions::default() });
    println!(
        "{graph} {rule}: {} tuples, {} iterations, {} firings, {:.3}s",
        eval.db.len(r),
        eval.iterations,
        eval.work,
        started.elapsed().as_secs_f64()
    );
    if args.get(3).is_some_and(|a| a == "dred") {
        let mut maintained = Maintained::new(plan, &p, db);
        let (a, b) = edges[edges.len() / 2];
        let edge = vec![(e, vec![a, b])];
        for (name, update) in [
            ("delete", Update { inserts: vec![], deletes: edge.clone() }),
            ("insert", Update { inserts: edge, deletes: vec![] }),
        ] {
            let started = Instant::now();
            let report = maintained.apply(&update);
            let over: usize = report.overdeleted.iter().map(|(_, t)| t.len()).sum();
            let back: usize = report.rederived.iter().chain(&report.inserted).map(|(_, t)| t.len()).sum();
            println!(
                "  {name} E({a},{b}): {over} over-deleted, {back} rederived or inserted, work {} (from scratch {}), {:.3}s",
                report.work,
                maintained.initial_work(),
                started.elapsed().as_secs_f64()
            );
        }
        assert_eq!(maintained.db().len(r), eval.db.len(r));
    }
}
