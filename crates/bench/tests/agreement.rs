//! Tiny workloads through dlc (with and without magic, and both DRed strategies) and
//! through every peer (with the `peers` feature): all must agree with a breadth-first-search oracle. Small enough for
//! debug builds in CI.

use bench::dlc::{self, Change, Mode};
use bench::measure::{Job, Sample, System};
use bench::peers::{self, Peer};
use bench::workload::{Edb, Graph, Query, Rules, Workload};
use exec::{Maintenance, NativeEngine};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

/// Nodes reachable from each node by one or more edges.
fn reach(nodes: u32, edges: &[(u32, u32)]) -> Vec<BTreeSet<u32>> {
    let mut succ = vec![Vec::new(); nodes as usize];
    for &(u, v) in edges {
        succ[u as usize].push(v);
    }
    (0..nodes)
        .map(|s| {
            let mut seen = BTreeSet::new();
            let mut stack: Vec<u32> = succ[s as usize].clone();
            while let Some(x) = stack.pop() {
                if seen.insert(x) {
                    stack.extend(&succ[x as usize]);
                }
            }
            seen
        })
        .collect()
}

fn graphs() -> Vec<Graph> {
    vec![
        Graph::Random { nodes: 50, edges: 150, seed: 42 },
        Graph::Random { nodes: 50, edges: 60, seed: 3 },
        Graph::Chain { nodes: 50 },
        Graph::Grid { width: 7, height: 7 },
        Graph::Forest { trees: 5, size: 10, seed: 1 },
        Graph::Paths { count: 5, len: 10 },
    ]
}

fn dlc_answers(workload: &Workload, query: Query, edb: &Edb, mode: Mode) -> (usize, usize) {
    let run = dlc::run(workload, query, edb, mode, NativeEngine::Seminaive).expect("the benchmark program compiles");
    (dlc::count_answers(&run.program, &run.eval.db), dlc::relation_len(&run.program, workload, &run.eval.db))
}

#[test]
fn dlc_and_every_peer_compute_the_same_closure() {
    for graph in graphs() {
        let edges = graph.edges();
        let oracle = reach(graph.nodes(), &edges);
        let closure: usize = oracle.iter().map(BTreeSet::len).sum();
        for rules in Rules::ALL {
            let workload = Workload::Tc { rules, graph };
            let edb = workload.generate();
            let what = workload.label();
            // The peers only with the `peers` feature (`cargo test -p bench --features peers`).
            for peer in Peer::ALL.into_iter().filter(|_| peers::COMPILED) {
                let computed = peers::closure(peer, rules, &edges).expect("the peers are compiled in");
                assert_eq!(computed.len, closure, "{peer} on {what}");
            }
            let (answers, relation) = dlc_answers(&workload, Query::Full, &edb, Mode::NoMagic);
            assert_eq!((answers, relation), (closure, closure), "dlc --no-magic on {what}");
            assert_eq!(dlc_answers(&workload, Query::Full, &edb, Mode::Magic).0, closure, "dlc magic on {what}");
            let point = oracle[0].len();
            assert_eq!(dlc_answers(&workload, Query::Point(0), &edb, Mode::Magic).0, point, "magic R(0,Y) on {what}");
            assert_eq!(dlc_answers(&workload, Query::Point(0), &edb, Mode::NoMagic).0, point, "R(0,Y) on {what}");
            let last = graph.nodes() - 1;
            let pair = usize::from(oracle[0].contains(&last));
            assert_eq!(dlc_answers(&workload, Query::Pair(0, last), &edb, Mode::Magic).0, pair, "bb on {what}");
        }
    }
}

#[test]
fn both_dred_strategies_agree_with_recomputation_on_small_graphs() {
    for graph in [Graph::Random { nodes: 40, edges: 100, seed: 5 }, Graph::Chain { nodes: 30 }] {
        let edges = graph.edges();
        for rules in Rules::ALL {
            let workload = Workload::Tc { rules, graph };
            let edb = workload.generate();
            let absent = (0..graph.nodes()).flat_map(|u| (0..graph.nodes()).map(move |v| (u, v)));
            let absent = absent.filter(|&(u, v)| u != v && !edges.contains(&(u, v))).nth(7).expect("room for an edge");
            let changes = [
                Change::Delete(edges[0].0, edges[0].1),
                Change::Insert(absent.0, absent.1),
                Change::Deletes(5),
                Change::Inserts(5),
            ];
            for change in changes {
                let (fresh, _) = dlc::recompute(&workload, Query::Point(0), &edb, change).expect("compiles");
                let recomputed = dlc::count_answers(&fresh.program, &fresh.eval.db);
                let oracle = reach(graph.nodes(), &change.apply_to(&edb).edges())[0].len();
                assert_eq!(recomputed, oracle, "recomputation after {change} on {}", workload.label());
                for maintenance in [Maintenance::Dred, Maintenance::Ranked, Maintenance::Auto] {
                    let mut inc = dlc::maintained(&workload, Query::Point(0), &edb, maintenance).expect("compiles");
                    inc.apply(change, &edb);
                    let maintained = dlc::count_answers(&inc.program, inc.state.db());
                    assert_eq!(maintained, oracle, "{maintenance:?} after {change} on {}", workload.label());
                    // Counts alone could agree by accident: the whole maintained relation must
                    // be the recomputed one.
                    let pred = inc.program.query.as_ref().expect("magic programs keep the query").atom.pred;
                    assert_eq!(
                        inc.state.db().sorted_tuples(pred),
                        fresh.eval.db.sorted_tuples(pred),
                        "{maintenance:?} after {change} on {}",
                        workload.label()
                    );
                }
            }
        }
    }
}

#[test]
fn same_generation_and_points_to_agree_with_and_without_magic() {
    let sg = Workload::SameGen { fanout: 2, depth: 4 };
    let pt = Workload::PointsTo { vars: 60, allocs: 12, fields: 0, assigns: 70, loads: 12, stores: 12, seed: 7 };
    let fields = Workload::PointsTo { vars: 60, allocs: 12, fields: 4, assigns: 70, loads: 12, stores: 12, seed: 7 };
    for workload in [sg, pt, fields] {
        let edb = workload.generate();
        let query = Query::Point(workload.point_node());
        let magic = dlc_answers(&workload, query, &edb, Mode::Magic).0;
        assert_eq!(magic, dlc_answers(&workload, query, &edb, Mode::NoMagic).0, "{}", workload.label());
        assert!(magic > 0, "the query of {} has answers", workload.label());
    }
    // The last leaf of a complete binary tree of depth 4 has the 16 leaves as its generation.
    assert_eq!(dlc_answers(&sg, Query::Point(sg.point_node()), &sg.generate(), Mode::Magic).0, 16);
}

#[test]
fn a_child_process_reports_a_result_line() {
    let exe = Path::new(env!("CARGO_BIN_EXE_bench"));
    let workload = Workload::Tc { rules: Rules::Llin, graph: Graph::Chain { nodes: 20 } };
    let peer = Job::new(workload, Query::Full, System::Datafrog);
    if !peers::COMPILED {
        let why = bench::measure::run_child(exe, &peer, Duration::from_secs(60)).expect_err("no peers compiled in");
        assert!(why.contains("--features peers"), "{why}");
    }
    for system in std::iter::once(System::DlcNoMagic).chain(peers::COMPILED.then_some(System::Datafrog)) {
        let job = Job::new(workload, Query::Full, system);
        let sample: Sample = bench::measure::run_child(exe, &job, Duration::from_secs(60)).expect("the child runs");
        assert_eq!(sample.answers, 190, "{system}");
        assert!(sample.rss_mib > 0.0 && sample.secs >= 0.0);
    }
    // The maintenance systems run in a child like the rest: 0→…→19 without 9→10 leaves 9
    // nodes reachable from node 0.
    for system in [System::Dred, System::DredRanked, System::Recompute] {
        let job = Job::new(workload, Query::Point(0), system).with_change(Change::Delete(9, 10));
        let sample = bench::measure::run_child(exe, &job, Duration::from_secs(60)).expect("the child runs");
        assert_eq!(sample.answers, 9, "{system}");
    }
    let bad = Job::new(workload, Query::Point(0), System::Crepe);
    assert!(bench::measure::run_child(exe, &bad, Duration::from_secs(60)).is_err(), "peers only run full closures");
}
