//! `--explain`, `--explain-missing` and the repl's `:why`/`:whynot` end to end: every
//! printed proof of random programs is checked to be a derivation, by this test's own
//! reading of the rules; bad fact text is a diagnostic; `:why` after a deletion uses
//! only facts still present.

mod common;

use common::{dlc, dlc_with_input};
use ir::{FileId, PredId, Program, TermKind};
use proptest::prelude::*;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

const REACH: &str = "fixtures/ok/reach.dl";

#[test]
fn explain_shows_the_shallow_proof_of_spec_example_1() {
    let out = dlc(&["--no-magic", "--explain", "R(a,d)", REACH]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], "R(a,d): a proof of height 2 (original program)");
    assert!(lines[1].starts_with("R(a,d)  by rule r1 at fixtures/ok/reach.dl:3:1  R(X,Z) <- R(X,Y), R(Y,Z)"));
    assert!(out.stdout.contains("    E(a,e)  input fact") && out.stdout.contains("    E(e,d)  input fact"));
    assert!(!out.stdout.contains("E(a,b)"), "the deeper proof through b and c is not the one shown");

    let out = dlc(&["--explain", "R(a,d)", REACH]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("demand @m:R^bf(a)  by the query at fixtures/ok/reach.dl:8:4  ?- R(a,Y)."));
}

/// A range is a leaf of its rule's instance, as a comparison is: the value it gave and
/// its bounds; a value it never gives is what excludes a match.
#[test]
fn explain_shows_a_range_as_a_leaf_with_its_value() {
    let program = "E(2,9) <-\nR(X,Y) <- E(X,Z), Y = range(X, Z, 3)\n?- R(X,Y).\n";
    let out = dlc_with_input(&["--explain", "R(2,5)", "-"], program);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("  5 = range(2, 9, 3)  holds"), "{}", out.stdout);
    let out = dlc_with_input(&["--explain-missing", "R(2,4)", "--no-magic", "-"], program);
    assert!(out.stdout.contains("4 is no value of range(2, 9, 3)"), "{}", out.stdout);
}

#[test]
fn explain_of_a_fact_that_does_not_hold_says_so() {
    let out = dlc(&["--explain", "R(a,u)", REACH]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.starts_with("R(a,u) is not derived (magic program)"), "{}", out.stdout);
    let out = dlc(&["--explain", "E(a,d)", REACH]);
    assert_eq!((out.code, out.stdout.trim()), (1, "E(a,d) is not an input fact"));
    let out = dlc(&["--explain", "R(a,u)", "--format", "json", REACH]);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["holds"], false);

    let out = dlc(&["--explain-missing", "R(u,v)", REACH]);
    assert_eq!(out.code, 0);
    // The query R(a,Y) never demands R(u,v): it is explained through its own demand.
    assert!(out.stdout.contains("R(u,v) is derived (magic program of its own demand)"), "{}", out.stdout);
    let out = dlc(&["--explain-missing", "R(u,v)", "--no-magic", REACH]);
    assert!(out.stdout.contains("R(u,v) is derived (original program)"), "{}", out.stdout);
}

#[test]
fn bad_fact_text_is_a_diagnostic_and_bad_combinations_a_usage_error() {
    for (text, code) in
        [("R(a,Y)", "E0011"), ("Nope(a)", "E0007"), ("R(a)", "E0004"), ("R(a,", "E0001"), ("@a:R(a,b)", "E0002")]
    {
        let out = dlc(&["--explain", text, "--color", "never", REACH]);
        assert_eq!(out.code, 1, "{text}");
        assert!(out.stderr.contains(&format!("[{code}]")), "{text}: {}", out.stderr);
        assert!(out.stdout.is_empty());
    }
    assert_eq!(dlc(&["--explain-missing", "R(a,u)", "--format", "dot", REACH]).code, 2);
    assert_eq!(dlc(&["--explain", "R(a,d)", "--emit", "plan", REACH]).code, 2);
    assert_eq!(dlc(&["--explain", "R(a,d)", "--compare", REACH]).code, 2);
    assert_eq!(dlc(&["--explain", "R(a,d)", "--explain-missing", "R(a,u)", REACH]).code, 2);
}

#[test]
fn a_deep_proof_prints_its_top_levels_and_a_note() {
    let dir = common::temp_dir();
    let path = dir.path().join("chain.dl");
    let mut text = String::from("P(X,Y) <- E(X,Y).\nP(X,Z) <- P(X,Y), E(Y,Z).\n?- P(n0,Y).\n");
    for i in 0..300 {
        text += &format!("E(n{i},n{}).\n", i + 1);
    }
    std::fs::write(&path, text).unwrap();
    let out = dlc(&["--no-magic", "--explain", "P(n0,n300)", path.to_str().unwrap()]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.starts_with("P(n0,n300): a proof of height 300 (original program)"));
    assert!(out.stdout.contains("more level(s) below; --format json lists the whole proof"), "{}", out.stdout);
    assert!(out.stdout.lines().count() < 250);
    let out = dlc(&["--no-magic", "--explain", "P(n0,n300)", "--format", "json", path.to_str().unwrap()]);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["nodes"].as_array().unwrap().len(), 600);
}

#[test]
fn why_in_the_repl_after_a_deletion_uses_only_facts_still_present() {
    for maintenance in ["dred", "ranked"] {
        let input = ":why R(a,d)\n-E(a,e).\n;\n:why R(a,d)\n:whynot R(a,e)\n:why R(a,e)\n:why\n";
        let out = dlc_with_input(&["repl", "--maintenance", maintenance, REACH], input);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let (before, after) = out.stdout.split_once("batch 1: -E(a,e)").expect("the batch is reported");
        assert!(before.contains("E(a,e)  input fact"), "{before}");
        assert!(!after.contains("E(a,e)  input fact"), "{maintenance}: a deleted fact in a proof:\n{after}");
        assert!(after.contains("R(a,d): a proof of height 7 (magic program)"), "{after}");
        assert!(after.contains("E(c,d)  input fact"));
        assert!(after.contains("R(a,e) is not derived (magic program)\n"), "{after}");
        assert!(after.contains("finds no fact under 1 match(es) of the atoms before it: E(a,e)"), "{after}");
        assert!(out.stderr.contains("usage: :why R(a,b)"));
    }
    assert_eq!(dlc(&["repl", "--explain", "R(a,d)", REACH]).code, 2, "the repl has :why instead");
}

const EDB: &[(&str, usize)] = &[("e0", 2), ("e1", 1)];
const IDB: &[(&str, usize)] = &[("p0", 2), ("p1", 1), ("p2", 0)];
const VARS: &[&str] = &["X", "Y", "Z"];
const CONSTS: &[&str] = &["a", "b", "c"];

/// A term: a variable (index below `VARS.len()`) or a constant.
fn term(code: usize) -> &'static str {
    if code < VARS.len() {
        VARS[code]
    } else {
        CONSTS[(code - VARS.len()) % CONSTS.len()]
    }
}

fn atom(name: &str, codes: &[usize]) -> String {
    format!("{name}({})", codes.iter().map(|&c| term(c)).collect::<Vec<_>>().join(","))
}

/// A safe rule: head arguments are body variables, or constants when there are none.
fn rule(head: usize) -> impl Strategy<Value = String> {
    let preds: Vec<(&'static str, usize)> = EDB.iter().chain(IDB).copied().collect();
    let body_atom = (0..preds.len(), proptest::collection::vec(0..VARS.len() + 2, 2))
        .prop_map(move |(i, codes)| (preds[i].0, codes[..preds[i].1].to_vec()));
    let (name, arity) = IDB[head];
    (proptest::collection::vec(body_atom, 1..4), proptest::collection::vec(0..VARS.len(), arity)).prop_map(
        move |(body, picks)| {
            let vars: Vec<usize> =
                body.iter().flat_map(|(_, c)| c.iter().copied()).filter(|&c| c < VARS.len()).collect();
            let head: Vec<usize> =
                picks.iter().map(|&k| if vars.is_empty() { VARS.len() } else { vars[k % vars.len()] }).collect();
            let body: Vec<String> = body.iter().map(|(n, c)| atom(n, c)).collect();
            format!("{} <- {}.", atom(name, &head), body.join(", "))
        },
    )
}

/// Rules (every IDB predicate has one), inline facts and a query.
fn program() -> impl Strategy<Value = String> {
    let rules: Vec<_> = (0..IDB.len()).map(|h| proptest::collection::vec(rule(h), 1..3)).collect();
    let fact = (0..EDB.len(), proptest::collection::vec(0..CONSTS.len(), 2))
        .prop_map(|(i, v)| atom(EDB[i].0, &v[..EDB[i].1].iter().map(|c| c + VARS.len()).collect::<Vec<_>>()));
    let query = (0..IDB.len(), proptest::collection::vec(0..VARS.len() + 1, 2))
        .prop_map(|(i, codes)| atom(IDB[i].0, &codes[..IDB[i].1]));
    (rules, proptest::collection::vec(fact, 2..14), query).prop_map(|(rules, facts, query)| {
        let mut text: String = rules.into_iter().flatten().map(|r| r + "\n").collect();
        text += &facts.iter().map(|f| format!("{f}.\n")).collect::<String>();
        text + &format!("?- {query}.\n")
    })
}

/// Checks a printed JSON proof of `asked` against `program`'s rules (the evaluated
/// program: the magic rewrite or the source) and `inputs`: each derived node an instance
/// of its rule with its children as the body, each leaf an input fact, every edge going
/// down in height (so no cycle).
fn check_proof(program: &Program, inputs: &BTreeSet<(PredId, Vec<u32>)>, doc: &Value) -> Result<(), String> {
    let nodes = doc["nodes"].as_array().ok_or("no nodes")?;
    let fact_of = |node: &Value| -> Result<(PredId, Vec<u32>), String> {
        let name = node["relation"].as_str().ok_or("no relation")?;
        let pred = program.pred_ids().find(|&p| program.pred_name(p) == name).ok_or("unknown relation")?;
        let tuple = node["tuple"]
            .as_array()
            .ok_or("no tuple")?
            .iter()
            .map(|v| program.consts.get(v.as_str().unwrap()).map(|c| c.0).ok_or("unknown constant"))
            .collect::<Result<Vec<u32>, _>>()?;
        Ok((pred, tuple))
    };
    let derived: BTreeSet<PredId> = program.rules.iter().map(|r| r.head.pred).collect();
    for (i, node) in nodes.iter().enumerate() {
        let (pred, tuple) = fact_of(node)?;
        let height = node["height"].as_u64().ok_or("no height")?;
        match node["kind"].as_str() {
            Some("input") => {
                if derived.contains(&pred) || !inputs.contains(&(pred, tuple)) || height != 0 {
                    return Err(format!("node {i} is no input fact"));
                }
            }
            Some("derived") => {
                // The evaluated program's rule: its position in a rewrite, else the source rule `rN`.
                let number = match node["rule"]["rewritten"].as_u64() {
                    Some(position) => position as usize,
                    None => node["rule"]["source"]
                        .as_str()
                        .and_then(|r| r.strip_prefix('r')?.parse().ok())
                        .ok_or("no rule")?,
                };
                let rule = program.rules.get(number).ok_or("no such rule")?;
                let children = node["children"].as_array().ok_or("no children")?;
                if rule.head.pred != pred || rule.body.len() != children.len() {
                    return Err(format!("node {i} does not fit rule {number}"));
                }
                let mut env = HashMap::new();
                let mut fits = |args: &[ir::Term], values: &[u32]| {
                    args.len() == values.len()
                        && args.iter().zip(values).all(|(t, &v)| match t.kind {
                            TermKind::Const(c) => c.raw() == v,
                            TermKind::Var(x) => *env.entry(x).or_insert(v) == v,
                        })
                };
                if !fits(&rule.head.args, &tuple) {
                    return Err(format!("node {i} does not fit the head of rule {number}"));
                }
                for (atom, child) in rule.body.iter().zip(children) {
                    let child = &nodes[child.as_u64().ok_or("bad child")? as usize];
                    let (child_pred, child_tuple) = fact_of(child)?;
                    if child_pred != atom.pred || !fits(&atom.args, &child_tuple) {
                        return Err(format!("a child of node {i} does not fit its atom of rule {number}"));
                    }
                    if child["height"].as_u64() >= Some(height) {
                        return Err(format!("a child of node {i} is not lower"));
                    }
                }
            }
            _ => return Err(format!("node {i} is neither input nor derived")),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Every answer of random programs, explained through the magic and the original
    /// program, and every fact the original program derives print a proof that checks;
    /// a fact that is not an answer is reported.
    #[test]
    fn every_printed_proof_is_a_derivation(text in program()) {
        let (source, diagnostics) = syntax::parse_program(&text, FileId(0));
        let source = source.unwrap_or_else(|| panic!("{diagnostics:?}\n{text}"));
        let query = source.query.clone().unwrap();
        let magic = magic::rewrite(&source, &query).program;
        let options = magic::RewriteOptions { subsume: true, ..magic::RewriteOptions::default() };
        let subsumed = magic::rewrite_with(&source, &query, options).unwrap().program;
        let inputs: BTreeSet<(PredId, Vec<u32>)> =
            source.facts.iter().map(|f| (f.pred, f.values.clone())).collect();
        let dir = common::temp_dir();
        let path = dir.path().join("random.dl");
        std::fs::write(&path, &text).unwrap();
        let path = path.to_str().unwrap();
        let out = dlc(&["--format", "json", path]);
        prop_assert_eq!(out.code, 0, "{}", out.stderr);
        let answers: Value = serde_json::from_str(&out.stdout).unwrap();
        let name = source.pred_name(query.atom.pred);
        for answer in answers["answers"].as_array().unwrap() {
            let values: Vec<&str> = answer.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
            let fact = format!("{name}({})", values.join(","));
            // `--magic auto` (no flag) explains in the program it chose: the subsumed
            // rewrite or the source.
            for (program, flags) in [(&magic, &["--magic", "on"][..]), (&source, &["--no-magic"][..]), (&subsumed, &[][..])] {
                let mut args = vec!["--explain", &fact, "--format", "json", path];
                args.extend_from_slice(flags);
                let out = dlc(&args);
                prop_assert_eq!(out.code, 0, "{} {:?}: {}", fact, flags, out.stdout);
                let doc: Value = serde_json::from_str(&out.stdout).unwrap();
                let program = if doc["program"] == "original" { &source } else { program };
                prop_assert_eq!(check_proof(program, &inputs, &doc), Ok(()), "{} {:?}\n{}\n{}", fact, flags, text, out.stdout);
            }
        }
        // Every fact the original program derives, explained in it.
        let mut db = exec::Database::new(&source);
        for (pred, tuple) in &inputs {
            db.insert(*pred, tuple);
        }
        let eval = exec::evaluate(&plan::plan_program(&source), &source, db, exec::EvalOptions::default());
        for pred in source.pred_ids().filter(|&p| source.pred(p).kind == ir::PredKind::Idb) {
            for tuple in eval.db.sorted_tuples(pred) {
                let fact = format!("{}{}", source.pred_name(pred), source.display_tuple(pred, &tuple));
                let out = dlc(&["--explain", &fact, "--format", "json", "--no-magic", path]);
                prop_assert_eq!(out.code, 0, "{}: {}", fact, out.stdout);
                let doc: Value = serde_json::from_str(&out.stdout).unwrap();
                prop_assert_eq!(check_proof(&source, &inputs, &doc), Ok(()), "{}\n{}\n{}", fact, text, out.stdout);
            }
        }
        // Constants of no fact: never derived, and reported as such.
        let arity = source.pred(query.atom.pred).arity;
        if arity > 0 {
            let fact = format!("{name}({})", vec!["zz"; arity].join(","));
            let out = dlc(&["--explain", &fact, path]);
            prop_assert_eq!(out.code, 1);
            prop_assert!(out.stdout.contains("is not derived"), "{}", out.stdout);
            let out = dlc(&["--explain-missing", &fact, "--no-magic", path]);
            prop_assert_eq!(out.code, 0);
            prop_assert!(out.stdout.contains("is not derived"), "{}", out.stdout);
        }
    }
}
