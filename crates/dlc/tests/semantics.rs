//! End-to-end behaviour where a result could be wrong or misleading: the order of an
//! update batch's lines, explanations of facts the query did not demand, which relations
//! are evaluated, what update reports say, and what `--magic auto` falls back to.

mod common;

use common::{dlc, dlc_with_input, write_file as write};
use std::path::PathBuf;

/// A fresh, empty directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    common::scratch_in("semantics", name)
}

const COPY: &str = "R(X,Y) <- E(X,Y).\nE(a,b).\n?- R(X,Y).\n";

/// A batch's lines apply in order: the last change of a fact wins, in update files and
/// in the repl alike.
#[test]
fn the_last_change_of_a_fact_in_a_batch_wins() {
    let dir = scratch("batch_order");
    let program = write(&dir.join("p.dl"), COPY);
    let updates = write(
        &dir.join("u.txt"),
        "+E(z,z).\n-E(z,z).\n;\n-E(a,b).\n+E(a,b).\n;\n+E(c,c).\n-E(a,b).\n+E(c,d).\n-E(c,c).\n",
    );
    let out = dlc(&[&program, "--updates", &updates]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.ends_with("\nR(c,d)\n"), "{}", out.stdout);
    assert!(out.stdout.contains("no-op: -E(z,z) is not present"), "{}", out.stdout);
    let out =
        dlc_with_input(&["repl", &program], "+E(z,z).\n-E(z,z).\n;\n?- R(X,Y).\n-E(a,b).\n+E(a,b).\n\n?- R(X,Y).\n");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let answers: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("R(")).collect();
    assert_eq!(answers, ["R(a,b)", "R(a,b)"], "{}", out.stdout);
    // The flags form one batch whose deletions come first: a fact given to both is present.
    let out = dlc(&[&program, "--insert", "E(a,b)", "--delete", "E(a,b)"]);
    assert!(out.stdout.ends_with("\nR(a,b)\n"), "{}", out.stdout);
}

/// Through magic sets, a fact the query never demanded is proved through its own demand,
/// never called "not derived" while it holds; one that does not hold is still denied.
#[test]
fn explain_proves_facts_the_query_did_not_demand() {
    let out = dlc(&["fixtures/ok/reach.dl", "--explain", "R(u,v)"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.starts_with("R(u,v) is not an answer of ?- R(a,Y)."), "{}", out.stdout);
    assert!(out.stdout.contains("R(u,v): a proof of height 2 (magic program of its own demand)"), "{}", out.stdout);
    assert!(out.stdout.contains("E(u,v)  input fact"), "{}", out.stdout);
    let out = dlc(&["fixtures/ok/reach.dl", "--explain", "R(u,a)"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stdout.contains("R(u,a) is not derived (magic program of its own demand)"), "{}", out.stdout);
    let out = dlc(&["fixtures/ok/reach.dl", "--explain-missing", "R(u,v)", "--format", "json"]);
    assert!(
        out.stdout.contains("\"holds\": true") && out.stdout.contains("\"program\": \"own-demand\""),
        "{}",
        out.stdout
    );
    // The access-control case: bob's permissions are outside alice's query.
    let out = dlc(&["fixtures/ok/access_control.dl", "--explain", "May(bob,read,wiki)"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(out.stdout.contains("Assigned(bob,intern)  input fact"), "{}", out.stdout);
    // The repl explains in its maintained state: after the deletion, R(u,v) is gone.
    let out = dlc_with_input(
        &["repl", "fixtures/ok/reach.dl"],
        "+X(a).\n;\n:why R(u,v)\n-E(u,v).\n;\n:why R(u,v)\n:why R(w,u)\n",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let verdicts: Vec<&str> =
        out.stdout.lines().filter(|l| l.contains(": a proof of") || l.contains("is not derived")).collect();
    assert_eq!(
        verdicts,
        [
            "R(u,v): a proof of height 2 (magic program of its own demand)",
            "R(u,v) is not derived (magic program of its own demand); --explain-missing (:whynot in the repl) says why",
            "R(w,u): a proof of height 2 (magic program of its own demand)",
        ],
        "{}",
        out.stdout
    );
}

/// A chain of 5,000 predicates needs 5,000 adorned predicates, past the default limit of
/// 4,096: `--magic auto` evaluates the original program, and only `--magic on` stops with
/// E0016, whose note counts all the adorned predicates.
#[test]
fn magic_auto_evaluates_the_original_program_past_the_adornment_limit() {
    let dir = scratch("long_chain");
    let mut text = String::from("P0(X,Y) <- E(X,Y).\n");
    for i in 1..5000 {
        text += &format!("P{i}(X,Y) <- P{}(X,Y).\n", i - 1);
    }
    text += "E(a,b). E(c,d).\n?- P4999(a,Y).\n";
    let program = write(&dir.join("chain.dl"), text);
    let out = dlc(&[&program, "--emit", "trace", "--no-timing"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("== evaluated: original program (--magic auto: the rewrite needs more"));
    assert!(out.stdout.ends_with("answers (1): (a,b)\n"), "{}", &out.stdout[out.stdout.len().saturating_sub(300)..]);
    let out = dlc(&[&program, "--magic", "on", "--color", "never"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("[E0016]"), "{}", out.stderr);
    assert!(
        out.stderr.contains("the rewrite has made 4096 so far, and this would be the first of `P"),
        "{}",
        out.stderr
    );
}

/// Only the relations the query or the outputs depend on are evaluated: a huge relation
/// nothing reads no longer passes `--max-tuples` (E0017). `--all` still computes it.
#[test]
fn relations_nothing_reads_are_not_evaluated() {
    let dir = scratch("unused");
    let mut edges = String::new();
    for i in 0..40 {
        edges += &format!("E(n{i},n{}).\n", i + 1);
    }
    // `Big` would hold 40^4 = 2,560,000 tuples, past the limit of 1,000.
    let rules =
        "Small(X,Y) <- E(X,Y).\nBig(A,B,C,D) <- E(A,B), E(C,D), E(B,A2), E(D,C2).\nBig(A,B,C,D) <- E(A,B), E(C,D).\n";
    let program = write(&dir.join("p.dl"), format!("{rules}{edges}?- Small(X,Y).\n"));
    for mode in ["auto", "on", "off"] {
        let out = dlc(&[&program, "--max-tuples", "1000", "--magic", mode, "--emit", "trace", "--no-timing"]);
        assert_eq!(out.code, 0, "--magic {mode}: {}", out.stderr);
        assert!(out.stdout.contains("answers (40)"), "--magic {mode}: {}", out.stdout);
        assert!(!out.stdout.contains("Big"), "--magic {mode}: {}", out.stdout);
    }
    let out = dlc(&[&program, "--max-tuples", "1000", "--all", "-D", dir.to_str().unwrap(), "--color", "never"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("[E0017]") && out.stderr.contains("Big"), "{}", out.stderr);

    // A Soufflé program: only the `.output` and `.printsize` relations and what they read.
    let souffle = write(
        &dir.join("s.dl"),
        ".decl e(x:number, y:number)\n.decl small(x:number, y:number)\n.decl big(a:number, b:number, c:number, d:number)\n\
         .decl f(x:number)\n.output small\n.printsize f\n\
         small(x, y) :- e(x, y).\nbig(a, b, c, d) :- e(a, b), e(c, d).\nf(x) :- e(x, _).\n\
         e(1, 2). e(2, 3). e(3, 4).\n",
    );
    let out = dlc(&[&souffle, "--max-tuples", "5", "-D", "-"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("f\t3"), "{}", out.stdout);
    assert!(!out.stderr.contains("big"), "{}", out.stderr);
}

/// An update report says what changed: a delete-only batch inserts nothing (facts the
/// insertion phase puts back are "re-inserted"), the summary line tells whether the demand
/// is past its caps after the batches, and a large batch is summarised unless
/// `--full-report` asks for every fact.
#[test]
fn update_reports_say_what_changed() {
    let dir = scratch("reports");
    let program = write(
        &dir.join("p.dl"),
        "R(X,Y) <- E(X,Y).\nR(X,Z) <- R(X,Y), E(Y,Z).\nE(a,b). E(b,c). E(a,c). E(c,d). E(d,e).\n?- R(X,Y).\n",
    );
    // DRed over-deletes and puts back; ranked over-deletion (what the default
    // chooses here) would keep these facts.
    let out = dlc(&[&program, "--delete", "E(a,b)", "--no-timing", "--maintenance", "dred"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("  rederived 1: R(a,c)\n  re-inserted 2: R(a,d) R(a,e)\n  inserted 0\n"),
        "{}",
        out.stdout
    );
    let out = dlc(&[&program, "--delete", "E(a,b)", "--format", "json", "--no-timing", "--maintenance", "dred"]);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["updates"][0]["inserted"], serde_json::json!({}));
    assert_eq!(doc["updates"][0]["reinserted"]["R"].as_array().map(Vec::len), Some(2));

    // Right-linear: every node reached is demanded, so 300 inserted edges take the demand
    // past its cap of 64 tuples, which the summary says after the batch.
    let program = write(&dir.join("right.dl"), "R(X,Y) <- E(X,Y).\nR(X,Z) <- E(X,Y), R(Y,Z).\nE(a,b).\n?- R(a,Y).\n");
    let mut lines: Vec<String> = (0..300).map(|i| format!("+E(n{i},n{}).", i + 1)).collect();
    lines.push("+E(b,n0).".into());
    let updates = write(&dir.join("u.txt"), lines.join("\n"));
    let out = dlc(&[&program, "--updates", &updates, "--no-timing"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("after the updates demand `@m:R^bf` passed its cap of 64 tuples, and the magic program is kept"),
        "{}",
        out.stderr
    );
    // That batch changes 45,753 answers and more facts: a summary, unless asked for.
    assert!(out.stdout.contains("+E(b,n0)\n  (a summary: more than 1000 facts changed; --full-report lists them)\n"));
    assert!(out.stdout.contains("  inserted 46053: @a:R^bf 45752, @m:R^bf 301\n"), "{}", &out.stdout[..600]);
    assert!(out.stdout.contains("  answers added: 301\n"), "{}", &out.stdout[..600]);
    assert!(out.stdout.len() < 10_000, "{}", out.stdout.len());
    let full = dlc(&[&program, "--updates", &updates, "--no-timing", "--full-report"]);
    assert!(full.stdout.contains("answers added: R(a,n0) R(a,n1)"), "{}", &full.stdout[..300]);
    assert!(full.stdout.len() > 100 * out.stdout.len());
}

/// Explanations number rules and atoms as the listings do: `r1` is `--emit ir`'s r1, and
/// `--explain-missing` counts a rule's atoms from #0 in its text and its JSON alike.
#[test]
fn explanations_number_rules_and_atoms_as_the_listings_do() {
    let out = dlc(&["fixtures/ok/reach.dl", "--explain-missing", "R(a,u)"]);
    assert!(
        out.stdout.contains("    rule r1 at fixtures/ok/reach.dl:3:1  R(X,Z) <- R(X,Y), R(Y,Z)\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("atom R(Y,Z) (body atom #1 of 2)"), "{}", out.stdout);
    let out = dlc(&["fixtures/ok/reach.dl", "--explain-missing", "R(a,u)", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let rules = doc["relations"][0]["rules"].as_array().unwrap();
    assert_eq!((rules[1]["by"].as_str(), rules[1]["atom"].as_u64()), (Some("rule r1"), Some(1)));
    let ir = dlc(&["fixtures/ok/reach.dl", "--emit", "ir"]);
    assert!(ir.stdout.contains("r1: R(X,Z) <- R(X,Y), R(Y,Z)"), "{}", ir.stdout);
    for magic in ["--magic=on", "--magic=off"] {
        let out = dlc(&["fixtures/ok/reach.dl", magic, "--explain", "R(a,d)", "--format", "json"]);
        let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(doc["nodes"][0]["rule"]["source"], "r1", "{magic}");
    }
    let plan = dlc(&["fixtures/ok/reach.dl", "--magic", "on", "--emit", "plan"]);
    assert!(plan.stdout.contains("3 (main r1): @a:R^bf(X,Z) <-"), "{}", plan.stdout);
}

/// Messages in the dialect of the program, with help that fits the case.
#[test]
fn messages_fit_the_dialect_and_the_case() {
    let dir = scratch("messages");
    // E0005 for an inline fact of a derived predicate suggests the empty-body rule.
    let program = write(&dir.join("e5.dl"), "R(X,Y) <- E(X,Y).\nR(z,z).\nE(a,b).\n?- R(a,Y).\n");
    let out = dlc(&[&program, "--color", "never"]);
    assert!(out.stderr.contains("[E0005]") && out.stderr.contains("write `R(z,z) <-`"), "{}", out.stderr);
    // A Soufflé program's help shows Soufflé's syntax.
    let souffle = write(&dir.join("s.dl"), ".decl e(x:symbol)\n.decl q(x:symbol)\nq(x) :- e(x).\ne(x).\n?- q(x).\n");
    let out = dlc(&[&souffle, "--color", "never"]);
    assert!(out.stderr.contains("[E0011]") && out.stderr.contains("strings in double quotes"), "{}", out.stderr);
    assert!(!out.stderr.contains("<-"), "{}", out.stderr);
    // A report without a location has the same header as the others.
    let out = dlc(&["fixtures/ok/reach.dl", "--facts", "no/such.facts", "--color", "never"]);
    assert!(out.stderr.starts_with("[E0012] Error: cannot read"), "{}", out.stderr);
    // E0017 names the rule that grew the relation: here a closure, not a product.
    let mut text = String::from("R(X,Y) <- E(X,Y).\nR(X,Z) <- R(X,Y), E(Y,Z).\n?- R(X,Y).\n");
    for i in 0..30 {
        text += &format!("E(n{i},n{}).\n", i + 1);
    }
    let closure = write(&dir.join("closure.dl"), text);
    let out = dlc(&[&closure, "--max-tuples", "100", "--color", "never"]);
    assert!(out.stderr.contains("this rule grows `R` from itself"), "{}", out.stderr);
    assert!(!out.stderr.contains("share no variable"), "{}", out.stderr);
}

/// One error where there is one problem: a float in the dlc dialect, two uses of an
/// unsupported functor, a cycle of types, a file that includes itself through another.
#[test]
fn one_problem_is_one_error() {
    let dir = scratch("one_error");
    let errors = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["--color", "never"];
        all.extend_from_slice(args);
        let out = dlc(&all);
        assert_eq!(out.code, 1, "{}", out.stderr);
        out.stderr.lines().filter(|l| l.starts_with('[')).map(str::to_string).collect()
    };
    let float = write(&dir.join("float.dl"), "R(X) <- E(X, 1.5).\n?- R(X).\n");
    assert_eq!(
        errors(&[&float]),
        ["[E0001] Error: expected a term, found `1.5`, a number that is not an integer (syntax error)"]
    );
    let twice =
        ".decl e(x:number)\n.decl p(x:number)\n.output p\np(x) :- e(x), itof(x) > 1.\np(x) :- e(x), itof(x) < 9.\n";
    let twice = write(&dir.join("twice.dl"), twice);
    // Two uses of one unsupported construct are one report that counts them.
    assert_eq!(
        errors(&[&twice]),
        ["[E0018] Error: the functor `itof(...)` is not supported (used 2 times) (unsupported construct)"]
    );
    for (types, message) in [
        (".type A = B\n.type B = A\n.type C = A\n", "the types `A`, `B` are defined from each other"),
        (".type A = A\n", "the type `A` is defined from itself"),
    ] {
        let program =
            write(&dir.join("types.dl"), format!("{types}.decl e(x:A)\n.decl p(x:A)\n.output p\np(x) :- e(x).\n"));
        let found = errors(&[&program]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains(message), "{found:?}");
    }
    write(&dir.join("a.dl"), "#include \"b.dl\"\n.decl e(x:number)\n.decl p(x:number)\n.output p\np(x) :- e(x).\n");
    write(&dir.join("b.dl"), "#include \"a.dl\"\n");
    let found = errors(&[dir.join("a.dl").to_str().unwrap()]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("it would include itself: "), "{found:?}");
    // A file that passes `.once` before including itself is read once, as in Soufflé;
    // one that includes itself before its `.once` is nested until the depth limit.
    let once = write(&dir.join("once.dl"), ".once\n.include \"once.dl\"\n.decl ok()\n.output ok\nok().\n");
    let run = dlc(&[once.as_str(), "-D", "-", "--no-timing"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "---------------\nok\n\n===============\n()\n===============\n");
    let late = write(&dir.join("late.dl"), ".include \"late.dl\"\n.once\n.decl ok()\n.output ok\nok().\n");
    let found = errors(&[&late]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("includes nested more than 32 deep"), "{found:?}");
}

/// Integers are numbers held as themselves: `007` and `7` are one value, a number column
/// is ordered numerically (negatives first) on standard output and in `-D` files, and a
/// facts file's field of a number column must be an integer, reported at the field.
#[test]
fn numbers_are_values_ordered_as_numbers() {
    let dir = scratch("numbers");
    let program =
        write(&dir.join("p.dl"), "R(N,C) <- T(C,N), N < 8\nT(lima,007). T(rome,7). T(oslo,-12).\n?- R(N,C).\n");
    let out = dlc(&[&program]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.ends_with("R(-12,oslo)\nR(7,lima)\nR(7,rome)\n"), "{}", out.stdout);
    let out = dlc(&[&program, "-D", "-", "--query", "R(7,C)"]);
    assert!(out.stdout.contains("===============\n7\tlima\n7\trome\n==============="), "{}", out.stdout);
    let facts = write(&dir.join("T.facts"), "nuuk\t-30\nbad\tseven\n");
    let out = dlc(&[&program, "--facts", &facts]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stderr.contains("E0013") && out.stderr.contains("`seven` is not an integer"), "{}", out.stderr);
    // -1 is held as u32::MAX, which the proof search once took for "unbound": a proof of
    // a fact with -1 in it must still read the rule as written.
    let chain = "R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), E(Y,Z)\nE(1,2). E(2,3). E(3,-1).\n?- R(1,Y).\n";
    let program = write(&dir.join("chain.dl"), chain);
    for magic in ["on", "off"] {
        let out = dlc(&[&program, "--explain", "R(1,-1)", "--magic", magic]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(
            out.stdout.contains("R(1,-1)  by rule r1") && out.stdout.contains("E(3,-1)  input fact"),
            "{}",
            out.stdout
        );
    }
}

/// Arithmetic end to end: every engine and magic mode gives the counter's answers, an
/// update that moves a start is maintained and checked against a recomputation (by the
/// differential engine too), and a division by zero derives nothing (where Soufflé
/// stops).
#[test]
fn arithmetic_runs_through_every_engine_and_maintenance() {
    let dir = scratch("arithmetic");
    let program = write(
        &dir.join("p.dl"),
        "Start(0).\nCount(N) <- Start(N)\nCount(N + 2) <- Count(N), N < 6\n\
         Ratio(N, 12 / N) <- Count(N)\n?- Ratio(N, R).\n",
    );
    let expected = "Ratio(2,6)\nRatio(4,3)\nRatio(6,2)\n";
    let differential = ["--engine", "differential", "--workers", "2"];
    for flags in
        [&["--magic", "on"][..], &["--magic", "off"], &["--engine", "reference"], &["--threads", "2"], &differential]
    {
        let mut args = vec![program.as_str(), "--no-timing"];
        args.extend_from_slice(flags);
        let out = dlc(&args);
        assert_eq!(out.code, 0, "{flags:?}: {}", out.stderr);
        assert_eq!(out.stdout, expected, "{flags:?}: 12 / 0 has no value, so Count(0) gives no ratio");
    }
    let out = dlc(&[&program, "--compare"]);
    assert!(out.stdout.lines().any(|l| l.starts_with("answers agree") && l.contains("yes")), "{}", out.stdout);
    for maintenance in ["dred", "ranked", "auto"] {
        let out =
            dlc(&[&program, "--delete", "Start(0)", "--insert", "Start(3)", "--maintenance", maintenance, "--check"]);
        assert_eq!(out.code, 0, "{maintenance}: {}{}", out.stdout, out.stderr);
        assert!(out.stdout.ends_with("Ratio(3,4)\nRatio(5,2)\nRatio(7,1)\n"), "{maintenance}: {}", out.stdout);
    }
    for workers in ["1", "2"] {
        let out = dlc(&[
            &program,
            "--engine",
            "differential",
            "--workers",
            workers,
            "--delete",
            "Start(0)",
            "--insert",
            "Start(3)",
            "--check",
        ]);
        assert_eq!(out.code, 0, "{workers} workers: {}{}", out.stdout, out.stderr);
        assert!(out.stdout.ends_with("Ratio(3,4)\nRatio(5,2)\nRatio(7,1)\n"), "{workers} workers: {}", out.stdout);
    }
}
