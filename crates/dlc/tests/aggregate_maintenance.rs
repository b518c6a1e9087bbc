//! Incremental maintenance of aggregates: a batch recomputes only the groups whose rows
//! it changed, and a changed value reaches the strata above as the old fact deleted and
//! the new one inserted, under every strategy, through the binary and the library.

mod common;

use common::dlc;
use diag::FileId;
use exec::{Database, Maintained, MaintainedBy, Maintenance};
use ir::{PredId, Program, Update};
use plan::plan_program;

/// A degree count over five nodes: node 1 has three edges, 2 one, 3, 4 and 5 none.
const DEGREES: &str = "Deg(X, N) <- Node(X), N = count : Edge(X, _)\n\
                       Node(1). Node(2). Node(3). Node(4). Node(5).\n\
                       Edge(1, 2). Edge(1, 3). Edge(1, 4). Edge(2, 3).\n\
                       ?- Deg(X, N).\n";

/// `DEGREES` written to a scratch file, with the path to pass to `dlc`.
fn degrees_file(name: &str) -> String {
    common::write_file(&common::scratch_in("aggregate_maintenance", name).join("degrees.dl"), DEGREES)
}

#[test]
fn a_one_edge_delete_recomputes_one_group_under_every_strategy() {
    let path = degrees_file("delete");
    for maintenance in ["dred", "ranked", "auto"] {
        let out = dlc(&[&path, "--delete", "Edge(1,3)", "--maintenance", maintenance, "--emit", "trace", "--check"]);
        assert_eq!(out.code, 0, "{maintenance}: {}", out.stderr);
        assert!(out.stdout.contains("  aggregate groups recomputed: Deg_agg 1\n"), "{maintenance}: {}", out.stdout);
        assert!(out.stdout.contains("  answers removed: Deg(1,3)\n"), "{maintenance}: {}", out.stdout);
        assert!(out.stdout.contains("  answers added: Deg(1,2)\n"), "{maintenance}: {}", out.stdout);
        assert!(!out.stdout.contains("maintained by: recompute"), "{maintenance}: {}", out.stdout);
    }
}

#[test]
fn a_one_edge_insert_recomputes_one_group_and_a_lost_last_row_gives_zero() {
    let path = degrees_file("insert");
    let out = dlc(&[&path, "--insert", "Edge(4,1)", "--emit", "trace", "--check"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("  aggregate groups recomputed: Deg_agg 1\n"), "{}", out.stdout);
    assert!(out.stdout.contains("  answers removed: Deg(4,0)\n"), "{}", out.stdout);
    assert!(out.stdout.contains("  answers added: Deg(4,1)\n"), "{}", out.stdout);
    // Node 2's only edge: its count goes back to the 0 of a group without rows.
    let out = dlc(&[&path, "--delete", "Edge(2,3)", "--emit", "trace", "--check", "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let batch = &json["updates"][0];
    assert_eq!(batch["groups_recomputed"], serde_json::json!({ "Deg_agg": 1 }), "{}", out.stdout);
    assert_eq!(batch["answers_removed"], serde_json::json!([["2", "1"]]), "{}", out.stdout);
    assert_eq!(batch["answers_added"], serde_json::json!([["2", "0"]]), "{}", out.stdout);
}

fn compiled(text: &str) -> Program {
    let (program, diagnostics) = syntax::parse_program(text, FileId(0));
    program.unwrap_or_else(|| panic!("{diagnostics:?}"))
}

fn fact(p: &Program, name: &str, values: &[u32]) -> (PredId, Vec<u32>) {
    (p.lookup_source(name).unwrap(), values.to_vec())
}

/// A min-distance program: `Dist(Y, D)` is the fewest hops from node 0, the least of the
/// hop counts (up to 6) of a node's walks.
const HOPS: &str = "Hops(0, 0) <-\n\
                    Hops(Y, D + 1) <- Hops(X, D), Edge(X, Y), D < 6\n\
                    Dist(Y, D) <- Node(Y), D = min H : Hops(Y, H)\n\
                    Node(0). Node(1). Node(2). Node(3). Node(4). Node(5). Node(6).\n\
                    Edge(0, 1). Edge(1, 2). Edge(2, 3). Edge(3, 4). Edge(0, 4). Edge(4, 5).\n\
                    ?- Dist(Y, D).\n";

#[test]
fn a_min_distance_follows_one_edge_through_every_strategy() {
    let p = compiled(HOPS);
    let dist = p.lookup_source("Dist").unwrap();
    // Removing the shortcut 0 -> 4 moves 4 and 5 two hops further; putting it back
    // restores them; an edge to the unreached 6 reaches it.
    let updates = [
        Update { deletes: vec![fact(&p, "Edge", &[0, 4])], ..Update::default() },
        Update { inserts: vec![fact(&p, "Edge", &[0, 4])], ..Update::default() },
        Update { inserts: vec![fact(&p, "Edge", &[5, 6])], ..Update::default() },
    ];
    for maintenance in [Maintenance::Dred, Maintenance::Ranked, Maintenance::Auto] {
        let mut state =
            Maintained::with_maintenance(plan_program(&p), &p, Database::from_facts(&p, &p.facts), maintenance);
        let mut input = Database::from_facts(&p, &p.facts);
        for (k, update) in updates.iter().enumerate() {
            let report = state.apply(update);
            assert_ne!(report.strategy, MaintainedBy::Recompute, "{maintenance:?}, batch {k}: {}", report.reason);
            for (pred, tuple) in &update.deletes {
                input.remove(*pred, tuple);
            }
            for (pred, tuple) in &update.inserts {
                input.insert(*pred, tuple);
            }
            let fresh = exec::evaluate(&plan_program(&p), &p, input.clone(), exec::EvalOptions::default());
            for pred in p.pred_ids() {
                assert_eq!(state.db().sorted_tuples(pred), fresh.db.sorted_tuples(pred), "{maintenance:?}, batch {k}");
            }
            let mut distances: Vec<String> =
                state.db().sorted_tuples(dist).iter().map(|t| format!("{}:{}", t[0], t[1])).collect();
            distances.sort();
            let want = ["0:0 1:1 2:2 3:3 4:4 5:5", "0:0 1:1 2:2 3:3 4:1 5:2", "0:0 1:1 2:2 3:3 4:1 5:2 6:3"][k];
            assert_eq!(distances.join(" "), want, "{maintenance:?}, batch {k}");
            // Only the groups whose hop counts changed are read again, never all seven.
            let groups: usize = report.groups.iter().map(|(_, n)| n).sum();
            assert!((1..7).contains(&groups), "{maintenance:?}, batch {k}: {:?}", report.groups);
            // A changed distance is its old fact removed and its new one added.
            let removed = report.removed.iter().any(|(q, _)| *q == dist);
            assert_eq!(removed, k < 2, "{maintenance:?}, batch {k}: {:?}", report.removed);
        }
    }
}

#[test]
fn an_aggregate_proof_lists_its_group_rows_after_a_batch() {
    let path = degrees_file("explain");
    let out = dlc(&[&path, "--delete", "Edge(1,3)", "--explain", "Deg(1,2)"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = out.stdout;
    assert!(text.contains("Deg_agg(1,2)  aggregate of 2 row(s) by rule r2"), "{text}");
    for row in ["Deg_agg_rows(1,2)", "Deg_agg_rows(1,4)"] {
        assert!(text.contains(&format!("{row}  by rule r1")), "{text}");
    }
    assert!(!text.contains("Deg_agg_rows(1,3)"), "{text}");
    let out = dlc(&[&path, "--explain", "Deg(1,3)", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let nodes = json["nodes"].as_array().unwrap();
    let aggregate = nodes.iter().find(|n| n["kind"] == "aggregate").expect("an aggregate node");
    assert_eq!(aggregate["rows"], 3);
    assert_eq!(aggregate["more_rows"], 0);
    assert_eq!(aggregate["children"].as_array().unwrap().len(), 3);
}

#[test]
fn explain_missing_names_the_group_of_an_aggregate() {
    let path = degrees_file("missing");
    let out = dlc(&[&path, "--explain-missing", "Deg(3,1)"]);
    let line = "atom Deg_agg_all(X,Agg) reads the count of group (3), which had no rows: its count is 0; \
                then the comparison 1 = 0 does not hold";
    assert!(out.stdout.contains(line), "{}", out.stdout);
    // After the batch node 1 has two edges, not three.
    let out = dlc(&[&path, "--delete", "Edge(1,3)", "--explain-missing", "Deg(1,3)"]);
    let line = "atom Deg_agg_all(X,Agg) reads the count of group (1): its 2 row(s) give 2; \
                then the comparison 3 = 2 does not hold";
    assert!(out.stdout.contains(line), "{}", out.stdout);
}

/// Aggregates whose bodies read a variable of their recursive rule only in a comparison
/// (`T` steps down to the least `V` below it; `C` and `S` count and sum the `V` within
/// each step's bound, 0 when none is): a value per binding of that variable.
const CORRELATED: &str = "V(1). V(3). V(6).\n\
                          T(5) <-\n\
                          T(M) <- T(X), M = min A : { V(A), A < X }\n\
                          C(0, 0) <-\n\
                          C(R + 1, Z) <- C(R, _), R < 8, Z = count : { V(A), A <= R }\n\
                          S(0, 0) <-\n\
                          S(R + 1, Z) <- S(R, _), R < 8, Z = sum A : { V(A), A < R }\n\
                          ?- C(R, N).\n";

#[test]
fn correlated_aggregates_of_recursive_rules_agree_with_recomputation_after_every_batch() {
    let dir = common::scratch_in("aggregate_maintenance", "correlated");
    let path = common::write_file(&dir.join("correlated.dl"), CORRELATED);
    let updates = common::write_file(&dir.join("correlated.updates"), "-V(3).\n;\n+V(2).\n+V(0).\n;\n-V(1).\n");
    for maintenance in ["dred", "ranked", "auto"] {
        for magic in ["on", "off", "auto"] {
            let flags = ["--maintenance", maintenance, "--magic", magic, "--no-timing"];
            let args = [&path, "--updates", &updates, "--check", "--emit", "trace"];
            let out = dlc(&[&args[..], &flags[..]].concat());
            let at = format!("{maintenance}, magic {magic}");
            assert_eq!(out.code, 0, "{at}: {}", out.stderr);
            let answers = "answers (9): (0,0) (1,0) (2,1) (3,1) (4,2) (5,2) (6,2) (7,3) (8,3)\n";
            assert!(out.stdout.contains(answers), "{at}: {}", out.stdout);
            // Such a reduction lies in a recursive stratum, which every strategy
            // recomputes, saying why.
            let why = "maintained by: recompute (a recursive stratum holds a reduction";
            assert_eq!(out.stdout.matches(why).count(), 3, "{at}: {}", out.stdout);
            // Without V(3) the counts from 4 on drop by one; with V(0) and V(2) the count
            // up to 0 is 1 (no longer 0); without V(1) the count up to 1 is 1 again.
            for line in [
                "  answers removed: C(4,2) C(5,2) C(6,2) C(7,3) C(8,3)\n  answers added: C(4,1) C(5,1) C(6,1) C(7,2) C(8,2)\n",
                "  answers added: C(1,1) C(2,2) C(3,3) C(4,3) C(5,3) C(6,3) C(7,4) C(8,4)\n",
                "  answers removed: C(2,2) C(3,3) C(4,3) C(5,3) C(6,3) C(7,4) C(8,4)\n",
            ] {
                assert!(out.stdout.contains(line), "{at}: {}", out.stdout);
            }
        }
    }
    // `T` and `S` after the batches (V is 0, 2 and 6): 5 steps down to 0; without V(1)
    // each sum below a bound past 1 drops by one.
    let out = dlc(&[&path, "--updates", &updates, "--check", "--no-timing", "--query", "T(X)"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.ends_with("T(0)\nT(5)\n"), "{}", out.stdout);
    let out = dlc(&[&path, "--updates", &updates, "--check", "--no-timing", "--query", "S(R, Z)", "--emit", "trace"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let last = out.stdout.rsplit("batch 3").next().unwrap();
    assert!(last.contains("answers removed: S(3,1) S(4,3) S(5,3) S(6,3) S(7,3) S(8,9)\n"), "{last}");
    assert!(last.contains("answers added: S(3,0) S(4,2) S(5,2) S(6,2) S(7,2) S(8,8)\n"), "{last}");
}

/// Shortest distances from node 0 and the least label of each node's (undirected)
/// connected component, both a recursive `min` (docs/semantics.md, Recursive `min` and
/// `max`); `Node` and the `Edge`s come from the test.
const LATTICES: &str = "Dist(S, 0) <- Start(S)\n\
                        Dist(Y, D) <- D = min D0 + W : { Dist(X, D0), Edge(X, Y, W) }\n\
                        Comp(X, X) <- Node(X)\n\
                        Comp(Y, L) <- L = min L0 : { Comp(X, L0), Edge(X, Y, _) }\n\
                        Comp(X, L) <- L = min L0 : { Comp(Y, L0), Edge(X, Y, _) }\n\
                        Start(0).\n";

/// Dijkstra's shortest distances from node 0 over `edges` (`(from, to, weight)`), the
/// reference the lattice's answers are checked against.
fn dijkstra(nodes: u32, edges: &[(u32, u32, u32)]) -> Vec<(u32, u32)> {
    let mut dist: Vec<Option<u32>> = vec![None; nodes as usize];
    let mut queue = std::collections::BinaryHeap::new();
    queue.push(std::cmp::Reverse((0u32, 0u32)));
    while let Some(std::cmp::Reverse((d, x))) = queue.pop() {
        if dist[x as usize].is_some() {
            continue;
        }
        dist[x as usize] = Some(d);
        for &(_, y, w) in edges.iter().filter(|e| e.0 == x) {
            if dist[y as usize].is_none() {
                queue.push(std::cmp::Reverse((d + w, y)));
            }
        }
    }
    dist.iter().enumerate().filter_map(|(x, d)| Some((x as u32, (*d)?))).collect()
}

/// The least node of each node's connected component, by union-find over `edges`
/// read in both directions.
fn least_labels(nodes: u32, edges: &[(u32, u32, u32)]) -> Vec<(u32, u32)> {
    fn find(parent: &mut [u32], x: u32) -> u32 {
        let mut root = x;
        while parent[root as usize] != root {
            root = parent[root as usize];
        }
        parent[x as usize] = root;
        root
    }
    let mut parent: Vec<u32> = (0..nodes).collect();
    for &(x, y, _) in edges {
        let (a, b) = (find(&mut parent, x), find(&mut parent, y));
        // The smaller root wins, so every root is its component's least node.
        parent[a.max(b) as usize] = a.min(b);
    }
    (0..nodes).map(|x| (x, find(&mut parent, x))).collect()
}

/// The answers `dlc` printed last for relation `name`, as pairs.
fn pairs(stdout: &str, name: &str) -> Vec<(u32, u32)> {
    let mut found: Vec<(u32, u32)> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix(name)?.strip_prefix('(')?.strip_suffix(')'))
        .map(|l| {
            let (a, b) = l.split_once(',').unwrap();
            (a.parse().unwrap(), b.parse().unwrap())
        })
        .collect();
    found.sort_unstable();
    found
}

#[test]
fn recursive_min_matches_dijkstra_and_union_find_before_and_after_every_batch() {
    let dir = common::scratch_in("aggregate_maintenance", "lattices");
    let nodes = 12;
    let mut state = 0x2545_f491u32;
    let mut next = move |n: u32| {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state % n
    };
    for graph in 0..6 {
        let mut edges: Vec<(u32, u32, u32)> = Vec::new();
        for _ in 0..14 {
            let edge = (next(nodes), next(nodes), 1 + next(9));
            if !edges.iter().any(|e| (e.0, e.1) == (edge.0, edge.1)) {
                edges.push(edge);
            }
        }
        let mut program = String::from(LATTICES);
        program.extend((0..nodes).map(|x| format!("Node({x}).\n")));
        program.extend(edges.iter().map(|(x, y, w)| format!("Edge({x}, {y}, {w}).\n")));
        let path = common::write_file(&dir.join(format!("graph{graph}.dl")), &program);
        // Batches that delete edges (a shortcut gone brings a worse distance back, a
        // bridge gone splits a component) and insert others.
        let mut batches: Vec<String> = Vec::new();
        let mut states = vec![edges.clone()];
        for _ in 0..4 {
            let mut batch = String::new();
            for _ in 0..2 {
                if !edges.is_empty() && next(2) == 0 {
                    let (x, y, w) = edges.remove(next(edges.len() as u32) as usize);
                    batch += &format!("-Edge({x},{y},{w}).\n");
                }
                let edge = (next(nodes), next(nodes), 1 + next(9));
                if !edges.iter().any(|e| (e.0, e.1) == (edge.0, edge.1)) {
                    edges.push(edge);
                    batch += &format!("+Edge({},{},{}).\n", edge.0, edge.1, edge.2);
                }
            }
            batches.push(batch);
            states.push(edges.clone());
        }
        for (applied, edges) in states.iter().enumerate() {
            let updates =
                common::write_file(&dir.join(format!("graph{graph}-{applied}.txt")), batches[..applied].join(";\n"));
            for (query, name, expected) in
                [("Dist(Y, D)", "Dist", dijkstra(nodes, edges)), ("Comp(X, L)", "Comp", least_labels(nodes, edges))]
            {
                let engines: [&[&str]; 5] = [
                    &["--engine", "seminaive"],
                    &["--engine", "reference"],
                    &["-j", "2"],
                    &["--engine", "differential"],
                    &["--engine", "differential", "--workers", "2"],
                ];
                for engine in engines {
                    let mut args = vec![path.as_str(), "--query", query, "--no-timing", "--check"];
                    if applied > 0 {
                        args.extend(["--updates", updates.as_str()]);
                    }
                    args.extend(engine);
                    let out = dlc(&args);
                    let at = format!("graph {graph}, {applied} batch(es), {query}, {engine:?}");
                    assert_eq!(out.code, 0, "{at}: {}", out.stderr);
                    assert_eq!(pairs(&out.stdout, name), expected, "{at}:\n{program}\n{}", batches.join(";\n"));
                }
            }
        }
    }
}

#[test]
fn a_cycle_that_improves_for_ever_stops_with_e0047_on_every_engine() {
    let dir = common::scratch_in("aggregate_maintenance", "improving");
    let program = format!("{LATTICES}Node(0). Node(1). Node(2).\nEdge(0, 1, 1). Edge(1, 2, 1). Edge(2, 1, 1).\n");
    let path = common::write_file(&dir.join("cycle.dl"), program);
    // The cycle 1 -> 2 -> 1 improves nothing until the batch makes it negative.
    let updates = common::write_file(&dir.join("negative.txt"), "-Edge(2,1,1).\n+Edge(2,1,-3).\n");
    let engines: [&[&str]; 6] = [
        &["--engine", "seminaive"],
        &["--engine", "reference"],
        &["-j", "2"],
        &["--no-magic"],
        &["--engine", "differential"],
        &["--engine", "differential", "--workers", "2"],
    ];
    for flags in engines {
        let mut args = vec![path.as_str(), "--query", "Dist(Y, D)", "--color", "never"];
        args.extend(flags);
        let out = dlc(&args);
        assert_eq!(out.code, 0, "{flags:?}: {}", out.stderr);
        assert_eq!(pairs(&out.stdout, "Dist"), [(0, 0), (1, 1), (2, 2)], "{flags:?}");
        args.extend(["--updates", updates.as_str()]);
        let out = dlc(&args);
        assert_ne!(out.code, 0, "{flags:?}: {}", out.stdout);
        assert!(
            out.stderr.contains("[E0047] Error: relation `Dist` still improved a value"),
            "{flags:?}: {}",
            out.stderr
        );
    }
}

#[test]
fn a_recursive_min_over_symbols_keeps_the_least_text_of_each_component() {
    let dir = common::scratch_in("aggregate_maintenance", "symbols");
    let program = ".decl edge(x:symbol, y:symbol)\n.decl cc(x:symbol, l:symbol)\n.output cc\n\
                   edge(\"b\", \"a\"). edge(\"c\", \"b\"). edge(\"zed\", \"c\"). edge(\"q\", \"r\").\n\
                   cc(x, x) :- edge(x, _).\ncc(x, x) :- edge(_, x).\n\
                   cc(y, l) :- l = min l0 : { cc(x, l0), edge(x, y) }.\n\
                   cc(x, l) :- l = min l0 : { cc(y, l0), edge(x, y) }.\n";
    let path = common::write_file(&dir.join("labels.dl"), program);
    for engine in ["seminaive", "reference", "differential"] {
        let out = dlc(&[&path, "-D", "-", "--no-timing", "--engine", engine]);
        assert_eq!(out.code, 0, "{engine}: {}", out.stderr);
        let rows = "a\ta\nb\ta\nc\ta\nq\tq\nr\tq\nzed\ta\n";
        assert!(out.stdout.contains(rows), "{engine}: {}", out.stdout);
    }
}

/// The reports about a lattice relation name the recursive aggregate the program wrote,
/// not the dominance it is lowered to: why a batch is recomputed, and which fact keeps a
/// worse one out.
#[test]
fn reports_about_a_recursive_min_name_the_aggregate() {
    let batch = dlc(&["fixtures/ok/recursive_min.dl", "--check", "--insert", "Edge(1,4,1)", "--no-timing"]);
    assert_eq!(batch.code, 0, "{}", batch.stderr);
    let why = "maintained by: recompute (the program has a recursive `min` or `max`: a change can bring back a \
               worse value";
    assert!(batch.stdout.contains(why), "{}", batch.stdout);
    assert!(!batch.stdout.contains("subsumptive"), "{}", batch.stdout);
    let missing = dlc(&["fixtures/ok/recursive_min.dl", "--magic", "off", "--explain-missing", "Dist(4, 5)"]);
    assert_eq!(missing.code, 0, "{}", missing.stderr);
    let named = "Dist(4,4) dominates it: its recursive `min`/`max` keeps the better value, whatever its rules derive";
    assert!(missing.stdout.contains(named), "{}", missing.stdout);
}
