//! The worked examples of docs/semantics.md (Magic sets: examples 1 to 3; Incremental
//! maintenance: example 1 under a deletion), run end to end through the command line
//! with their exact numbers.

mod common;

use common::{dlc, dlc_with_input};
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let out = dlc(args);
    assert_eq!(out.code, 0, "dlc {args:?} failed:\n{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("bad JSON ({e}):\n{}", out.stdout))
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect::<Vec<_>>().join(","))
        .collect()
}

const REACH: &str = "fixtures/ok/reach.dl";

#[test]
fn example1_sizes_rounds_and_row_tests() {
    let trace = json(&["--emit", "trace", "--format", "json", "--compare", "--engine", "reference", REACH]);
    assert_eq!(trace["relations"]["@a:R^bf"], 11);
    assert_eq!(trace["relations"]["@m:R^bf"], 5);
    assert_eq!(trace["derived_facts"], 16);
    assert_eq!(trace["original"]["relations"]["R"], 20);
    assert_eq!(trace["original"]["derived_facts"], 20);
    assert_eq!(trace["row_tests"], 811);
    assert_eq!(trace["original"]["row_tests"], 852);
    assert_eq!(trace["agree"], true);
    assert_eq!(strings(&trace["answers"]), ["a,b", "a,c", "a,d", "a,e"]);

    let rounds = trace["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 8, "8 rounds including the last empty one");
    let round = |i: usize, rel: &str| -> Vec<String> { rounds[i]["new"].get(rel).map(strings).unwrap_or_default() };
    let (q, m) = ("@a:R^bf", "@m:R^bf");
    assert_eq!(round(0, m), ["a"]);
    assert_eq!(round(1, q), ["a,b", "a,e"]);
    assert_eq!(round(2, m), ["b", "e"]);
    assert_eq!(round(3, q), ["b,c", "e,d"]);
    assert_eq!(round(4, m), ["c", "d"]);
    assert_eq!(round(4, q), ["a,c", "a,d"]);
    assert_eq!(round(5, q), ["c,b", "c,d"]);
    assert_eq!(round(6, q), ["b,b", "b,d", "c,c"]);
    assert!(rounds[7]["new"].as_object().unwrap().is_empty());
    for (i, r) in rounds.iter().enumerate().take(7) {
        let news: usize = r["new"].as_object().unwrap().values().map(|v| v.as_array().unwrap().len()).sum();
        assert!(news > 0, "round {} adds facts", i + 1);
    }
}

#[test]
fn example1_seminaive_agrees_and_sizes_match() {
    let trace = json(&["--emit", "trace", "--format", "json", "--compare", REACH]);
    assert_eq!(trace["relations"]["@a:R^bf"], 11);
    assert_eq!(trace["relations"]["@m:R^bf"], 5);
    assert_eq!(trace["original"]["relations"]["R"], 20);
    assert_eq!(trace["agree"], true);
}

#[test]
fn example1_rules_exactly() {
    let out = dlc(&["--emit", "magic-ir", REACH]);
    assert_eq!(out.code, 0);
    let expected = "@m:R^bf(a) <-\n\
                    @a:R^bf(X,Y) <- @m:R^bf(X), E(X,Y)\n\
                    @m:R^bf(Y) <- @m:R^bf(X), @a:R^bf(X,Y)\n\
                    @a:R^bf(X,Z) <- @m:R^bf(X), @a:R^bf(X,Y), @a:R^bf(Y,Z)\n";
    assert!(out.stdout.starts_with(expected), "got:\n{}", out.stdout);
    let magic = json(&["--emit", "magic-ir", "--format", "json", REACH]);
    let dropped: Vec<&str> = magic["dropped"].as_array().unwrap().iter().map(|d| d.as_str().unwrap()).collect();
    assert_eq!(dropped, ["@m:R^bf(X) <- @m:R^bf(X)"]);
}

#[test]
fn example2_fb_call_and_answer() {
    let magic = json(&["--emit", "magic-ir", "--format", "json", "fixtures/ok/swap.dl"]);
    let texts: Vec<&str> = magic["rules"].as_array().unwrap().iter().map(|r| r["text"].as_str().unwrap()).collect();
    assert!(texts.contains(&"@m:Q^fb(Y) <- @m:P^bf(X), E(X,Y)"), "{texts:?}");
    assert!(texts.contains(&"@a:Q^fb(U,V) <- @m:Q^fb(V), F(U,V)"), "{texts:?}");
    let out = dlc(&["fixtures/ok/swap.dl"]);
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout, "P(a,c)\n");
}

#[test]
fn example3_boundaries() {
    let magic = json(&["--emit", "magic-ir", "--format", "json", "fixtures/ok/all_free.dl"]);
    assert_eq!(magic["rules"][0]["text"], "@m:R^ff() <-");
    let out = dlc(&["fixtures/ok/all_free.dl"]);
    assert_eq!(out.stdout, "R(a,b)\nR(a,c)\nR(b,c)\n");

    let out = dlc(&["fixtures/ok/const_fact.dl"]);
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout, "", "P(z) has no answer");
    let magic = json(&["--emit", "magic-ir", "--format", "json", "fixtures/ok/const_fact.dl"]);
    let texts: Vec<&str> = magic["rules"].as_array().unwrap().iter().map(|r| r["text"].as_str().unwrap()).collect();
    assert!(texts.contains(&"@a:P^b(a) <- @m:P^b(a)"), "{texts:?}");

    // P(X,X) <- E(X,Y) with E = {a→b, b→b, c→a}: only P(a,a) for the query P(a,Y).
    let out = dlc(&["fixtures/ok/repeated_var.dl"]);
    assert_eq!(out.stdout, "P(a,a)\n");
}

#[test]
fn dred_delete_of_e_a_b() {
    let dred = ["--maintenance", "dred"];
    let trace =
        json(&["--emit", "trace", "--format", "json", "--delete", "E(a,b)", "--check", dred[0], dred[1], REACH]);
    let update = &trace["updates"][0];
    let waves: Vec<Vec<String>> = update["overdeleted_waves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            let mut facts: Vec<String> = w
                .as_object()
                .unwrap()
                .iter()
                .flat_map(|(rel, ts)| strings(ts).into_iter().map(move |t| format!("{}({t})", &rel[1..2])))
                .collect();
            facts.sort();
            facts
        })
        .collect();
    assert_eq!(
        waves,
        vec![
            vec!["a(a,b)"],
            vec!["a(a,c)", "a(a,d)", "m(b)"],
            vec!["a(b,b)", "a(b,c)", "a(b,d)", "m(c)", "m(d)"],
            vec!["a(c,b)", "a(c,c)", "a(c,d)"],
        ]
    );
    assert_eq!(strings(&update["rederived"]["@a:R^bf"]), ["a,d"]);
    assert_eq!(strings(&update["rederived"]["@m:R^bf"]), ["d"]);
    assert_eq!(update["relations"]["@m:R^bf"], 3);
    assert_eq!(update["relations"]["@a:R^bf"], 3);
    assert_eq!(strings(&update["answers_removed"]), ["a,b", "a,c"]);
    assert_eq!(strings(&trace["answers"]), ["a,d", "a,e"]);

    // The original program on the 8 remaining edges has 18 R tuples.
    let original = json(&["--emit", "trace", "--format", "json", "--no-magic", "--delete", "E(a,b)", "--check", REACH]);
    assert_eq!(original["updates"][0]["relations"]["R"], 18);
}

/// `--maintenance auto`, the default, maintains Example 1's deletion with DRed (its
/// over-deletion stays far within its budget, and the state is far too small to be worth a
/// recomputation), reaches DRed's state, and says so.
#[test]
fn auto_maintenance_reports_its_choice() {
    let trace = json(&["--emit", "trace", "--format", "json", "--delete", "E(a,b)", "--check", REACH]);
    let update = &trace["updates"][0];
    assert_eq!(update["maintenance"], "dred");
    assert!(update["reason"].as_str().unwrap().starts_with("deletes 1 of 9 input facts: DRed's"), "{update}");
    assert_eq!(update["overdeleted_waves"].as_array().map(Vec::len), Some(4));
    assert_eq!(strings(&trace["answers"]), ["a,d", "a,e"]);
    let out = dlc(&["--insert", "E(d,a)", REACH]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = dlc(&["--emit", "trace", "--insert", "E(d,a)", REACH]).stdout;
    assert!(text.contains("maintained by: dred (no deletions"), "{text}");
}

/// `--maintenance ranked` reaches DRed's final state of Example 1, over-deleting only
/// the 10 facts that are really gone: Q(a,d) and M(d), which DRed over-deletes and
/// rederives, keep their first derivation through `a -> e -> d`.
#[test]
fn ranked_delete_of_e_a_b_reaches_the_same_state() {
    let args = ["--emit", "trace", "--format", "json", "--delete", "E(a,b)", "--check", "--maintenance", "ranked"];
    let trace = json(&[&args[..], &[REACH]].concat());
    let update = &trace["updates"][0];
    assert_eq!(update["maintenance"], "ranked");
    assert_eq!(strings(&update["overdeleted"]["@a:R^bf"]), ["a,b", "a,c", "b,b", "b,c", "b,d", "c,b", "c,c", "c,d"]);
    assert_eq!(strings(&update["overdeleted"]["@m:R^bf"]), ["b", "c"]);
    assert!(update["rederived"].as_object().unwrap().is_empty());
    assert_eq!(update["relations"]["@m:R^bf"], 3);
    assert_eq!(update["relations"]["@a:R^bf"], 3);
    assert_eq!(strings(&trace["answers"]), ["a,d", "a,e"]);
    let original = json(&[&args[..], &["--no-magic", REACH]].concat());
    assert_eq!(original["updates"][0]["relations"]["R"], 18);
}

#[test]
fn dred_reinsert_restores_the_original_state() {
    let trace =
        json(&["--emit", "trace", "--format", "json", "--check", "--updates", "fixtures/data/reach.updates", REACH]);
    let updates = trace["updates"].as_array().unwrap();
    assert_eq!(updates.len(), 2);
    assert_eq!(updates[1]["relations"]["@a:R^bf"], 11);
    assert_eq!(updates[1]["relations"]["@m:R^bf"], 5);
    assert_eq!(strings(&trace["answers"]), ["a,b", "a,c", "a,d", "a,e"]);
}

#[test]
fn repl_applies_batches_and_answers_queries() {
    let input = "-E(a,b).\n;\n?- R(a,Y).\n?- R(u,Y).\n:quit\n";
    let out = dlc_with_input(&["repl", "--color", "never", "--maintenance", "dred", REACH], input);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("over-deleted 12 in 4 wave(s)"), "{}", out.stdout);
    assert!(out.stdout.contains("rederived 2"), "{}", out.stdout);
    assert!(out.stdout.contains("R(a,d)\nR(a,e)\n2 answer(s)"), "{}", out.stdout);
    assert!(out.stdout.contains("recompiled for ?- R(u,Y)."), "{}", out.stdout);
    assert!(out.stdout.contains("R(u,u)\nR(u,v)\nR(u,w)\n3 answer(s)"), "{}", out.stdout);
}

#[test]
fn repl_keeps_ranked_maintenance_across_a_new_query() {
    let input = "-E(a,b).\n;\n?- R(b,Y).\n+E(a,b).\n-E(e,d).\n;\n:quit\n";
    let out = dlc_with_input(&["repl", "--color", "never", "--maintenance", "ranked", REACH], input);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("over-deleted 10 in 8 ranked wave(s)"), "{}", out.stdout);
    assert!(out.stdout.contains("recompiled for ?- R(b,Y)."), "{}", out.stdout);
    // The recompiled program is maintained the same way.
    let batch2 = out.stdout.split("batch 2:").nth(1).expect("a second batch");
    assert!(batch2.contains("ranked wave(s)"), "{}", out.stdout);
}
