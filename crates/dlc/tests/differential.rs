//! `--engine differential` end to end: the same answers, files and update results as the
//! native engine on every fixture, with one and two workers; the flags it refuses.

mod common;

use common::{comparable, dlc, fixture_args, root};

/// `dlc ARGS` with the native engine and with the differential one on 1 and 2 workers:
/// the exit status and output must be the same ([`comparable`]), unless the differential
/// engine refuses the program (E0026: rows too wide; E0040: a `.limitsize`, which the
/// native engine keeps); returns whether it ran.
fn same_as_native(args: &[&str]) -> bool {
    let native = dlc(args);
    for workers in ["1", "2"] {
        let mut with = args.to_vec();
        with.extend(["--engine", "differential", "--workers", workers]);
        let run = dlc(&with);
        if run.code == 1 && (run.stderr.contains("[E0026]") || run.stderr.contains("[E0040]")) {
            return false;
        }
        assert_eq!(run.code, native.code, "{with:?}: {}", run.stderr);
        assert_eq!(comparable(&run.stdout), comparable(&native.stdout), "{with:?}");
    }
    true
}

#[test]
fn every_fixture_query_has_the_native_answers() {
    let mut checked = 0;
    for entry in std::fs::read_dir(root().join("fixtures/ok")).unwrap() {
        let path = entry.unwrap().path();
        let source = std::fs::read_to_string(&path).unwrap();
        let relative = format!("fixtures/ok/{}", path.file_name().unwrap().to_str().unwrap());
        let mut args: Vec<String> = fixture_args(&source);
        args.extend(["--no-timing".into(), "--check".into(), relative]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        for magic in ["on", "off", "auto"] {
            let mut with = args.clone();
            with.extend(["--magic", magic]);
            checked += usize::from(same_as_native(&with));
        }
    }
    assert!(checked > 30, "{checked} runs compared");
}

#[test]
fn update_batches_agree_with_dred_and_pass_the_check() {
    assert!(same_as_native(&[
        "fixtures/ok/reach.dl",
        "--updates",
        "fixtures/data/reach.updates",
        "--check",
        "--no-timing"
    ]));
    let batch = ["fixtures/ok/reach.dl", "--delete", "E(a,b)", "--insert", "E(x,a)", "--insert", "E(a,b)"];
    assert!(same_as_native(&batch));
    let mut checked = batch.to_vec();
    checked.extend(["--check", "--engine", "differential", "--emit", "trace", "--format", "json"]);
    let run = dlc(&checked);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn souffle_outputs_are_the_native_files() {
    let mut ran = 0;
    for entry in std::fs::read_dir(root().join("fixtures/souffle")).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_str().unwrap().to_string();
        let program = format!("fixtures/souffle/{name}/prog.dl");
        let facts = format!("fixtures/souffle/{name}/in");
        ran += usize::from(same_as_native(&[&program, "-F", &facts, "-D", "-", "--no-timing"]));
    }
    // Every fixture runs on the dataflow, those with aggregates included.
    assert!(ran >= 20, "{ran} programs compared");
}

#[test]
fn flags_that_need_the_native_engine_are_usage_errors() {
    let explain = dlc(&["fixtures/ok/reach.dl", "--engine", "differential", "--explain", "R(a,d)"]);
    assert_eq!(explain.code, 2);
    assert!(explain.stderr.contains("--explain"), "{}", explain.stderr);
    let repl = dlc(&["repl", "fixtures/ok/reach.dl", "--engine", "differential"]);
    assert_eq!(repl.code, 2);
    let workers = dlc(&["fixtures/ok/reach.dl", "--workers", "2"]);
    assert_eq!(workers.code, 2);
    assert!(workers.stderr.contains("--threads"), "{}", workers.stderr);
}

#[test]
fn negation_comparisons_and_assignments_agree_through_update_batches() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("differential");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("negation.dl");
    // `Open` recurses through an anti-join of a lower stratum; deleting `Closed(c)` makes
    // paths appear, inserting `Closed(b)` makes them go.
    let program = "E(a,b).\nE(b,c).\nE(c,d).\nE(d,a).\nClosed(c).\nW(a,3).\nW(b,12).\n\
        Open(X,Y) <- E(X,Y), !Closed(Y).\nOpen(X,Z) <- Open(X,Y), E(Y,Z), !Closed(Z).\n\
        Heavy(X,M) <- W(X,N), N >= 10, M = N.\nLeaf(X) <- E(_,X), !E(X,_).\n?- Open(a,Y).\n";
    std::fs::write(&path, program).unwrap();
    let updates = dir.join("negation.updates");
    std::fs::write(&updates, "-Closed(c).\n;\n+Closed(b).\n-E(d,a).\n;\n+W(c,40).\n-W(b,12).\n").unwrap();
    let (path, updates) = (path.display().to_string(), updates.display().to_string());
    for magic in ["on", "off", "auto"] {
        assert!(same_as_native(&[&path, "--updates", &updates, "--check", "--no-timing", "--magic", magic]));
        assert!(same_as_native(&[&path, "--all", "-D", "-", "--no-timing", "--magic", magic]));
    }
}

/// File name -> contents of every file in `dir`.
fn files(dir: &std::path::Path) -> std::collections::BTreeMap<String, String> {
    let entries = std::fs::read_dir(dir).unwrap();
    let name = |e: &std::fs::DirEntry| e.file_name().to_string_lossy().into_owned();
    entries.map(|e| e.unwrap()).map(|e| (name(&e), std::fs::read_to_string(e.path()).unwrap())).collect()
}

#[test]
fn aggregate_programs_write_their_expected_files_on_two_workers() {
    for name in ["degree_count", "shortest_path"] {
        let out = common::scratch_in("differential", name);
        let (prog, input) = (format!("fixtures/souffle/{name}/prog.dl"), format!("fixtures/souffle/{name}/in"));
        let args = [&prog, "-F", &input, "-D", out.to_str().unwrap(), "--no-timing"];
        let run = dlc(&[&args[..], &["--engine", "differential", "--workers", "2"]].concat());
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        assert_eq!(files(&out), files(&root().join(format!("fixtures/souffle/{name}/expected"))), "{name}");
    }
}

#[test]
fn aggregates_agree_through_update_batches() {
    let dir = common::scratch_in("differential", "aggregates");
    // Node 3 gains its first edges and loses them again (its count and sum return to 0,
    // its `Short` fact goes); node 1 loses its loop, so `Degree` and `Short` change.
    let updates = common::write_file(
        &dir.join("aggregates.updates"),
        "+Edge(3, 1).\n+Edge(3, 3).\n;\n-Edge(1, 1).\n+Edge(1, 3).\n;\n-Edge(3, 1).\n-Edge(3, 3).\n",
    );
    for magic in ["on", "off", "auto"] {
        let args = ["fixtures/ok/aggregates.dl", "--updates", &updates, "--check", "--no-timing", "--magic", magic];
        assert!(same_as_native(&args));
        assert!(same_as_native(&["fixtures/ok/aggregates.dl", "--all", "-D", "-", "--no-timing", "--magic", magic]));
    }
}

#[test]
fn correlated_aggregates_of_recursive_rules_agree_through_update_batches() {
    let dir = common::scratch_in("differential", "correlated");
    // Each step counts, sums or takes the least of the `V` within its own bound.
    let program = common::write_file(
        &dir.join("correlated.dl"),
        "V(1). V(3). V(6).\nT(5) <-\nT(M) <- T(X), M = min A : { V(A), A < X }\n\
         C(0, 0) <-\nC(R + 1, Z) <- C(R, _), R < 8, Z = count : { V(A), A <= R }\n\
         S(0, 0) <-\nS(R + 1, Z) <- S(R, _), R < 8, Z = sum A : { V(A), A < R }\n?- C(R, N).\n",
    );
    let updates = common::write_file(&dir.join("correlated.updates"), "-V(3).\n;\n+V(2).\n+V(0).\n;\n-V(1).\n");
    for magic in ["on", "off", "auto"] {
        for query in ["C(R, N)", "T(X)", "S(R, Z)"] {
            let args = [&program, "--updates", &updates, "--check", "--no-timing", "--magic", magic, "--query", query];
            assert!(same_as_native(&args));
        }
        assert!(same_as_native(&[&program, "--all", "-D", "-", "--no-timing", "--magic", magic]));
    }
}
