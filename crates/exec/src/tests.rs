//! Tests of the engines against the worked examples of docs/semantics.md and against each other.

use crate::relation::Rank;
use crate::{
    evaluate, Database, EvalOptions, Evaluation, Maintained, MaintainedBy, Maintenance, NativeEngine, Threads,
    UpdateReport,
};
use ir::{PredId, Program, Tally, Update};
use plan::plan_program;
use plan::testing::program;

const EXAMPLE_1_EDGES: &str = "E(a,b). E(b,c). E(c,b). E(c,d). E(a,e). E(e,d). E(u,v). E(v,w). E(w,u).";
const ORIGINAL: &str = "R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), R(Y,Z)";
/// The magic program of Example 1 with `M` for `@m:R^bf` and `Q` for `@a:R^bf`.
const MAGIC: &str = "M(a) <-
Q(X,Y) <- M(X), E(X,Y)
M(Y) <- M(X), Q(X,Y)
Q(X,Z) <- M(X), Q(X,Y), Q(Y,Z)";

fn with_facts(rules: &str, facts: &str) -> Program {
    program(&format!("{rules}\n{}", facts.replace(". ", ".\n")))
}

fn run(p: &Program, engine: NativeEngine) -> Evaluation {
    let plan = plan_program(p);
    let options = EvalOptions { engine, record_rounds: true, ..EvalOptions::default() };
    evaluate(&plan, p, Database::from_facts(p, &p.facts), options)
}

fn pred(p: &Program, name: &str) -> PredId {
    p.lookup_source(name).unwrap()
}

/// The tuples of a relation as text, e.g. `["(a,b)", "(a,c)"]`.
fn tuples(p: &Program, db: &Database, name: &str) -> Vec<String> {
    db.sorted_tuples(pred(p, name)).iter().map(|t| p.display_tuple(pred(p, name), t).to_string()).collect::<Vec<_>>()
}

fn sorted_text(p: &Program, db: &Database, name: &str) -> Vec<String> {
    let mut v = tuples(p, db, name);
    v.sort();
    v
}

/// A round as `M(a) Q(a,b)`, facts in name order.
fn round_text(p: &Program, new: &[(PredId, Vec<Vec<u32>>)]) -> String {
    let mut facts: Vec<String> = new
        .iter()
        .flat_map(|(pr, ts)| ts.iter().map(move |t| format!("{}{}", p.pred_name(*pr), p.display_tuple(*pr, t))))
        .collect();
    facts.sort();
    facts.join(" ")
}

#[test]
fn example_1_original_program_reference() {
    let p = with_facts(ORIGINAL, EXAMPLE_1_EDGES);
    let eval = run(&p, NativeEngine::Reference);
    assert_eq!(eval.db.len(pred(&p, "R")), 20);
    assert_eq!(eval.row_tests, Some(852));
    assert_eq!(eval.iterations, 4);
    assert_eq!(eval.rounds.len(), 4);
    assert!(eval.rounds[3].new.is_empty());
}

#[test]
fn example_1_magic_program_reference_rounds_and_row_tests() {
    let p = with_facts(MAGIC, EXAMPLE_1_EDGES);
    let eval = run(&p, NativeEngine::Reference);
    assert_eq!(eval.row_tests, Some(811));
    assert_eq!(eval.db.len(pred(&p, "Q")), 11);
    assert_eq!(eval.db.len(pred(&p, "M")), 5);
    let rounds: Vec<String> = eval.rounds.iter().map(|r| round_text(&p, &r.new)).collect();
    assert_eq!(
        rounds,
        vec![
            "M(a)",
            "Q(a,b) Q(a,e)",
            "M(b) M(e)",
            "Q(b,c) Q(e,d)",
            "M(c) M(d) Q(a,c) Q(a,d)",
            "Q(c,b) Q(c,d)",
            "Q(b,b) Q(b,d) Q(c,c)",
            "",
        ]
    );
    assert_eq!(eval.rounds.iter().map(|r| r.round).collect::<Vec<_>>(), (1..=8).collect::<Vec<_>>());
    let answers: Vec<String> = sorted_text(&p, &eval.db, "Q").into_iter().filter(|t| t.starts_with("(a,")).collect();
    assert_eq!(answers, vec!["(a,b)", "(a,c)", "(a,d)", "(a,e)"]);
}

#[test]
fn example_1_seminaive_agrees_with_reference() {
    for rules in [ORIGINAL, MAGIC] {
        let p = with_facts(rules, EXAMPLE_1_EDGES);
        let reference = run(&p, NativeEngine::Reference);
        let fast = run(&p, NativeEngine::Seminaive);
        assert!(fast.db.same_tuples(&reference.db));
        assert_eq!(fast.row_tests, None);
        assert!(fast.work > 0);
        let recorded: usize = fast.rounds.iter().flat_map(|r| &r.new).map(|(_, t)| t.len()).sum();
        assert_eq!(recorded, if rules == ORIGINAL { 20 } else { 16 });
    }
    let p = with_facts(ORIGINAL, EXAMPLE_1_EDGES);
    let r = tuples(&p, &run(&p, NativeEngine::Seminaive).db, "R");
    assert_eq!(r.iter().filter(|t| t.starts_with("(a,")).count(), 4);
    assert_eq!(r.iter().filter(|t| t.starts_with("(u,")).count(), 3);
}

#[test]
fn example_2_argument_swap() {
    let p = with_facts("P(X,Z) <- E(X,Y), Q(Z,Y)\nQ(U,V) <- F(U,V)", "E(a,b). F(c,b). F(d,z).");
    for engine in [NativeEngine::Reference, NativeEngine::Seminaive] {
        assert_eq!(tuples(&p, &run(&p, engine).db, "P"), vec!["(a,c)"]);
    }
}

/// Checks both engines on a program and returns the semi-naive result.
fn both(p: &Program) -> Database {
    let reference = run(p, NativeEngine::Reference);
    let fast = run(p, NativeEngine::Seminaive);
    assert!(fast.db.same_tuples(&reference.db), "engines disagree");
    fast.db
}

#[test]
fn zero_arity_predicates() {
    let p = with_facts("Go() <- E(X,X)\nP(X) <- Go(), F(X)\nNone() <- E(X,z)\nAlways() <-", "E(b,b). F(c). F(d).");
    let db = both(&p);
    assert_eq!(db.len(pred(&p, "Go")), 1);
    assert_eq!(tuples(&p, &db, "P"), vec!["(c)", "(d)"]);
    assert_eq!(db.len(pred(&p, "None")), 0);
    assert_eq!(db.len(pred(&p, "Always")), 1);
}

#[test]
fn constants_in_bodies_and_heads() {
    let p = with_facts("P(X,k) <- E(a,X)\nS(b) <- E(X,X)\nT(Y) <- P(Y,k), E(Y,c)", "E(a,b). E(a,c). E(c,c). E(b,a).");
    let db = both(&p);
    assert_eq!(sorted_text(&p, &db, "P"), vec!["(b,k)", "(c,k)"]);
    assert_eq!(tuples(&p, &db, "S"), vec!["(b)"]);
    assert_eq!(tuples(&p, &db, "T"), vec!["(c)"]);
}

#[test]
fn repeated_variables() {
    let p = with_facts("P(X,X) <- E(X,Y)\nL(X) <- E(X,X)\nD(X,Y) <- E(X,Y), E(Y,X)", "E(a,b). E(b,b). E(b,a). E(c,d).");
    let db = both(&p);
    assert_eq!(sorted_text(&p, &db, "P"), vec!["(a,a)", "(b,b)", "(c,c)"]);
    assert_eq!(tuples(&p, &db, "L"), vec!["(b)"]);
    assert_eq!(sorted_text(&p, &db, "D"), vec!["(a,b)", "(b,a)", "(b,b)"]);
}

#[test]
fn mutual_recursion() {
    let p = with_facts(
        "Even(X) <- Zero(X)\nEven(Y) <- Odd(X), S(X,Y)\nOdd(Y) <- Even(X), S(X,Y)",
        "Zero(n0). S(n0,n1). S(n1,n2). S(n2,n3). S(n3,n4).",
    );
    let db = both(&p);
    assert_eq!(sorted_text(&p, &db, "Even"), vec!["(n0)", "(n2)", "(n4)"]);
    assert_eq!(sorted_text(&p, &db, "Odd"), vec!["(n1)", "(n3)"]);
}

#[test]
fn non_linear_recursion_on_a_chain() {
    let edges: String = (0..30).map(|i| format!("E(n{i},n{}). ", i + 1)).collect();
    let p = with_facts(ORIGINAL, edges.trim_end());
    let db = both(&p);
    assert_eq!(db.len(pred(&p, "R")), 31 * 30 / 2);
}

#[test]
fn progress_is_reported_every_round() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let p = with_facts(ORIGINAL, EXAMPLE_1_EDGES);
    let seen = Rc::new(RefCell::new(Vec::new()));
    let sink = Rc::clone(&seen);
    let options = EvalOptions {
        engine: NativeEngine::Seminaive,
        record_rounds: false,
        progress: Some(Box::new(move |progress| sink.borrow_mut().push(progress.facts))),
        ..EvalOptions::default()
    };
    let plan = plan_program(&p);
    let eval = evaluate(&plan, &p, Database::from_facts(&p, &p.facts), options);
    assert!(eval.rounds.is_empty());
    let seen = seen.borrow();
    assert_eq!(seen.len(), eval.iterations);
    assert_eq!(seen.last(), Some(&29));
}

/// A xorshift generator from `seed`: each call, a number below its argument.
fn below(seed: u64) -> impl FnMut(usize) -> usize {
    let mut state = seed;
    move |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    }
}

fn fact(p: &mut Program, name: &str, values: &[&str]) -> (PredId, Vec<u32>) {
    let pred = p.lookup_source(name).unwrap();
    (pred, plan::testing::values(p, values))
}

#[test]
fn dred_example_1_delete_and_reinsert_an_edge() {
    let mut p = with_facts(MAGIC, EXAMPLE_1_EDGES);
    let plan = plan_program(&p);
    let mut maintained = Maintained::new(plan, &p, Database::from_facts(&p, &p.facts));
    assert_eq!(maintained.db().len(pred(&p, "Q")), 11);
    let ab = fact(&mut p, "E", &["a", "b"]);
    let report = maintained.apply(&Update { inserts: vec![], deletes: vec![ab.clone()] });
    let waves: Vec<String> = report
        .overdeleted_waves
        .iter()
        .map(|w| {
            let grouped: Vec<(PredId, Vec<Vec<u32>>)> = w.iter().map(|(pr, t)| (*pr, vec![t.clone()])).collect();
            round_text(&p, &grouped)
        })
        .collect();
    assert_eq!(waves, vec!["Q(a,b)", "M(b) Q(a,c) Q(a,d)", "M(c) M(d) Q(b,b) Q(b,c) Q(b,d)", "Q(c,b) Q(c,c) Q(c,d)"]);
    assert_eq!(report.overdeleted.iter().map(|(_, t)| t.len()).sum::<usize>(), 12);
    assert_eq!(round_text(&p, &report.rederived), "M(d) Q(a,d)");
    assert!(report.inserted.is_empty());
    assert_eq!(report.edb_deleted, vec![ab.clone()]);
    assert!(report.work > 0);
    assert_eq!(sorted_text(&p, maintained.db(), "M"), vec!["(a)", "(d)", "(e)"]);
    assert_eq!(sorted_text(&p, maintained.db(), "Q"), vec!["(a,d)", "(a,e)", "(e,d)"]);

    // The same state as evaluating the 8 remaining edges from scratch.
    let remaining = EXAMPLE_1_EDGES.replace("E(a,b). ", "");
    let scratch = with_facts(MAGIC, &remaining);
    assert_eq!(sorted_text(&scratch, &run(&scratch, NativeEngine::Seminaive).db, "Q"), vec!["(a,d)", "(a,e)", "(e,d)"]);
    let original = with_facts(ORIGINAL, &remaining);
    assert_eq!(run(&original, NativeEngine::Reference).db.len(pred(&original, "R")), 18);

    // Deleting again is a no-op; re-inserting restores 11 + 5.
    let again = maintained.apply(&Update { inserts: vec![], deletes: vec![ab.clone()] });
    assert_eq!(again.noop_deletes, vec![ab.clone()]);
    assert!(again.overdeleted.is_empty());
    let back = maintained.apply(&Update { inserts: vec![ab.clone()], deletes: vec![] });
    assert_eq!(back.edb_inserted, vec![ab]);
    assert_eq!(maintained.db().len(pred(&p, "Q")), 11);
    assert_eq!(maintained.db().len(pred(&p, "M")), 5);
    assert_eq!(back.inserted.iter().map(|(_, t)| t.len()).sum::<usize>(), 16 - 6);
}

/// The right-linear closure of `edges`, maintained by DRed and by ranked DRed, after
/// each deleted the edge `E(b,d)`: the program, the ranked state, and both reports (the two
/// states are checked equal).
fn delete_b_d_both_ways(edges: &str) -> (Program, Maintained, UpdateReport, UpdateReport) {
    let rules = "R(X,Y) <- E(X,Y)\nR(X,Z) <- E(X,Y), R(Y,Z)";
    let mut p = with_facts(rules, edges);
    let bd = fact(&mut p, "E", &["b", "d"]);
    let delete = Update { inserts: vec![], deletes: vec![bd] };
    let new = |m| Maintained::with_maintenance(plan_program(&p), &p, Database::from_facts(&p, &p.facts), m);
    let (mut dred, mut ranked) = (new(Maintenance::Dred), new(Maintenance::Ranked));
    let (by_dred, by_rank) = (dred.apply(&delete), ranked.apply(&delete));
    assert!(dred.db().same_tuples(ranked.db()));
    (p, ranked, by_dred, by_rank)
}

#[test]
fn ranked_overdeletion_stops_at_an_alternative_derivation() {
    let (p, ranked, by_dred, by_rank) = delete_b_d_both_ways("E(a,b). E(a,c). E(b,d). E(c,d). E(d,e).");
    assert_eq!(sorted_text(&p, ranked.db(), "R"), ["(a,b)", "(a,c)", "(a,d)", "(a,e)", "(c,d)", "(c,e)", "(d,e)"]);
    // DRed over-deletes everything derived through E(b,d) and puts `a`'s back.
    assert_eq!(round_text(&p, &by_dred.overdeleted), "R(a,d) R(a,e) R(b,d) R(b,e)");
    assert_eq!(round_text(&p, &by_dred.rederived), "R(a,d) R(a,e)");
    // R(a,d) was first derived through c as well, from lower-ranked facts: it stays, and
    // R(a,e) is never visited.
    assert_eq!(round_text(&p, &by_rank.overdeleted), "R(b,d) R(b,e)");
    assert!(by_rank.rederived.is_empty() && by_rank.inserted.is_empty());
    assert_eq!(by_rank.overdeleted_waves.len(), 2);
}

/// Beside 3,000 unrelated edges, R(a,d) loses one derivation and keeps the one from the
/// edge E(a,d): ranked maintenance's support checks test a few edges with every column
/// bound, and scan the edges for them rather than build a row locator of all of them,
/// finding the same support.
#[test]
fn ranked_support_checks_scan_a_large_input_instead_of_locating_it() {
    let mut edges: Vec<String> = (0..3_000).map(|i| format!("E(u{i},v{i}).")).collect();
    edges.extend(["E(a,b).", "E(b,d).", "E(a,d).", "E(d,e)."].map(String::from));
    let (p, ranked, by_dred, by_rank) = delete_b_d_both_ways(&edges.join(" "));
    assert_eq!(round_text(&p, &by_dred.overdeleted), "R(a,d) R(a,e) R(b,d) R(b,e)");
    assert_eq!(round_text(&p, &by_rank.overdeleted), "R(b,d) R(b,e)");
    assert!(by_rank.rederived.is_empty());
    let e = &ranked.db().rows[pred(&p, "E").index()];
    assert_eq!(e.unlocated(), e.end(), "the edges were located");
}

#[test]
fn ranked_maintenance_removes_facts_that_only_support_each_other() {
    // After E(c,a) goes, R(c,a) and R(c,b) each still have a derivation through the
    // other side of the cycle a <-> b, but none from the remaining input.
    let rules = "R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), R(Y,Z)";
    let mut p = with_facts(rules, "E(a,b). E(b,a). E(c,a).");
    let ca = fact(&mut p, "E", &["c", "a"]);
    let mut ranked =
        Maintained::with_maintenance(plan_program(&p), &p, Database::from_facts(&p, &p.facts), Maintenance::Ranked);
    assert_eq!(ranked.db().len(pred(&p, "R")), 6);
    let report = ranked.apply(&Update { inserts: vec![], deletes: vec![ca.clone()] });
    assert_eq!(sorted_text(&p, ranked.db(), "R"), ["(a,a)", "(a,b)", "(b,a)", "(b,b)"]);
    assert_eq!(round_text(&p, &report.overdeleted), "R(c,a) R(c,b)");
    let back = ranked.apply(&Update { inserts: vec![ca], deletes: vec![] });
    assert_eq!(round_text(&p, &back.inserted), "R(c,a) R(c,b)");
    assert_eq!(ranked.db().len(pred(&p, "R")), 6);
}

#[test]
fn ranked_example_1_reaches_the_same_state_as_dred() {
    let mut p = with_facts(MAGIC, EXAMPLE_1_EDGES);
    let ab = fact(&mut p, "E", &["a", "b"]);
    let mut ranked =
        Maintained::with_maintenance(plan_program(&p), &p, Database::from_facts(&p, &p.facts), Maintenance::Ranked);
    let report = ranked.apply(&Update { inserts: vec![], deletes: vec![ab.clone()] });
    assert_eq!(sorted_text(&p, ranked.db(), "M"), vec!["(a)", "(d)", "(e)"]);
    assert_eq!(sorted_text(&p, ranked.db(), "Q"), vec!["(a,d)", "(a,e)", "(e,d)"]);
    // Exactly the facts that are gone: Q(a,d) and M(d), which DRed over-deletes
    // and rederives, keep their support through `a -> e -> d`.
    assert_eq!(
        round_text(&p, &report.overdeleted),
        "M(b) M(c) Q(a,b) Q(a,c) Q(b,b) Q(b,c) Q(b,d) Q(c,b) Q(c,c) Q(c,d)"
    );
    assert!(report.rederived.is_empty());
    let back = ranked.apply(&Update { inserts: vec![ab], deletes: vec![] });
    assert!(back.overdeleted.is_empty());
    assert_eq!((ranked.db().len(pred(&p, "Q")), ranked.db().len(pred(&p, "M"))), (11, 5));
}

/// `Maintenance::Auto` propagates insertions alone, recomputes a batch deleting much of
/// the input, keeps DRed's over-deletion when it stays small, turns to ranked
/// over-deletion when it does not, and recomputes once that passes its budget: each
/// reaching the state and the net change DRed reaches, and saying which it chose.
#[test]
fn auto_maintenance_chooses_by_the_batch_and_its_cost() {
    // `a` reaches `c` through five middle nodes, then a chain of 100 nodes; `d1` has a leaf;
    // 200 sources lead into `a`; 1,000 edges stand apart, so that an average edge, which
    // is what auto's estimate of DRed's over-deletion knows, reaches little.
    let mut edges: Vec<String> = (1..=5).flat_map(|i| [format!("E(a,b{i})."), format!("E(b{i},c).")]).collect();
    edges.extend((1..=200).map(|i| format!("E(x{i},a).")));
    edges.push("E(c,d1).".into());
    edges.extend((1..100).map(|j| format!("E(d{j},d{}).", j + 1)));
    edges.push("E(d1,leaf).".into());
    edges.extend((0..1_000).map(|i| format!("E(u{i},v{i}).")));
    let mut p = with_facts("R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), E(Y,Z)", &edges.join(" "));
    let new = |p: &Program, m| Maintained::with_maintenance(plan_program(p), p, Database::from_facts(p, &p.facts), m);
    let leaf = fact(&mut p, "E", &["d1", "leaf"]);
    let fan = fact(&mut p, "E", &["a", "b1"]);
    let into_chain = fact(&mut p, "E", &["c", "d1"]);
    let many: Vec<_> = (0..70).map(|i| fact(&mut p, "E", &[&format!("u{i}"), &format!("v{i}")])).collect();
    let (mut auto, mut dred) = (new(&p, Maintenance::Auto), new(&p, Maintenance::Dred));
    // Budgets as on a large state, where the evaluation does more work per fact than this
    // one: enough for ranked over-deletion's row locators, not for DRed's over-deletion of
    // everything `a` reaches.
    auto.set_auto_min_budget(200_000);
    let mut apply = |auto: &mut Maintained, update: Update, method: MaintainedBy, why: &str| {
        let (by_auto, by_dred) = (auto.apply(&update), dred.apply(&update));
        assert_eq!(by_auto.strategy, method, "{}", by_auto.reason);
        assert!(by_auto.reason.contains(why), "{}", by_auto.reason);
        assert_eq!((&by_auto.removed, &by_auto.added), (&by_dred.removed, &by_dred.added));
        assert!(auto.db().same_tuples(dred.db()));
    };
    // A leaf: DRed's over-deletion removes the 28 facts reaching it and stops.
    apply(
        &mut auto,
        Update { inserts: vec![], deletes: vec![leaf.clone()] },
        MaintainedBy::Dred,
        "stayed within its budget",
    );
    apply(&mut auto, Update { inserts: vec![leaf], deletes: vec![] }, MaintainedBy::Dred, "no deletions");
    // One of five ways from `a` to `c`: DRed's over-deletion would take all of `a`'s
    // closure; ranked over-deletion keeps R(a,c), first derived through the others too.
    apply(
        &mut auto,
        Update { inserts: vec![], deletes: vec![fan.clone()] },
        MaintainedBy::Ranked,
        "DRed's over-deletion passed",
    );
    apply(&mut auto, Update { inserts: vec![fan], deletes: vec![] }, MaintainedBy::Dred, "no deletions");
    // 70 of 1,311 edges: at least a twentieth of the input, recomputed outright once the
    // evaluation is not below the least budget.
    auto.set_auto_min_budget(0);
    apply(&mut auto, Update { inserts: vec![], deletes: many.clone() }, MaintainedBy::Recompute, "at least 1/20");
    auto.set_auto_min_budget(200_000);
    apply(&mut auto, Update { inserts: many, deletes: vec![] }, MaintainedBy::Dred, "no deletions");
    // A smaller budget, as on a state whose evaluation did less work per fact.
    auto.set_auto_min_budget(16_000);
    // The way into the chain: everything `a`, the `b`s and `c` reach through it goes.
    apply(
        &mut auto,
        Update { inserts: vec![], deletes: vec![into_chain.clone()] },
        MaintainedBy::Recompute,
        "passed its budget",
    );
    apply(&mut auto, Update { inserts: vec![into_chain], deletes: vec![] }, MaintainedBy::Dred, "no deletions");
    // After a recomputation, changes are maintained incrementally again.
    auto.set_auto_min_budget(200_000);
    let leaf = fact(&mut p, "E", &["d1", "leaf"]);
    apply(&mut auto, Update { inserts: vec![], deletes: vec![leaf] }, MaintainedBy::Dred, "stayed within its budget");
}

/// Auto's estimate of DRed's over-deletion reads the depths of the derived facts once
/// per evaluation: the rank runs it reads them from grow with every batch, and reading
/// them for each batch made a long session's batches slower and slower.
#[test]
fn auto_reads_the_depths_of_the_derived_facts_once_per_evaluation() {
    let edges: Vec<String> = (0..30).map(|i| format!("E(n{i},n{}).", i + 1)).collect();
    let mut p = with_facts("R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), E(Y,Z)", &edges.join(" "));
    let last = fact(&mut p, "E", &["n29", "n30"]);
    let r = p.lookup_source("R").unwrap();
    let mut state =
        Maintained::with_maintenance(plan_program(&p), &p, Database::from_facts(&p, &p.facts), Maintenance::Auto);
    let (levels, runs) = (state.depth_levels(), state.db().rel(r).runs());
    assert!((1..=30).contains(&levels), "{levels} levels for 30 rounds");
    for _ in 0..20 {
        let report = state.apply(&Update { inserts: vec![], deletes: vec![last.clone()] });
        assert_eq!(report.strategy, MaintainedBy::Dred, "{}", report.reason);
        state.apply(&Update { inserts: vec![last.clone()], deletes: vec![] });
    }
    assert!(state.db().rel(r).runs() > runs + 5, "the batches added rank runs: {runs} -> {}", state.db().rel(r).runs());
    assert_eq!(state.depth_levels(), levels);
}

/// On the first batch of a state, `Maintenance::Auto` pays for the index DRed's
/// over-deletion probes first only when the deletion is expected to stay local: a cut in
/// the middle of a chain (half the closure goes, and the index of the whole closure would
/// cost more than recomputing) is recomputed, and so is its last edge, which the estimate
/// cannot tell from the middle one; the leaf of a shallow tree is maintained. Each
/// reaches DRed's state.
#[test]
fn auto_pays_for_an_index_only_when_the_deletion_is_expected_local() {
    let chain: Vec<String> = (0..300).map(|i| format!("E(n{i},n{}).", i + 1)).collect();
    // Ten stars of ten leaves each.
    let stars: Vec<String> = (0..10).flat_map(|s| (0..10).map(move |l| format!("E(s{s},l{s}x{l})."))).collect();
    let rules = "R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), E(Y,Z)";
    let new = |p: &Program, m| {
        let mut state = Maintained::with_maintenance(plan_program(p), p, Database::from_facts(p, &p.facts), m);
        state.set_auto_min_budget(0);
        state
    };
    let check = |p: &Program, deleted: (PredId, Vec<u32>), method: MaintainedBy, why: &str| {
        let (mut auto, mut dred) = (new(p, Maintenance::Auto), new(p, Maintenance::Dred));
        let update = Update { inserts: vec![], deletes: vec![deleted] };
        let (by_auto, by_dred) = (auto.apply(&update), dred.apply(&update));
        assert_eq!(by_auto.strategy, method, "{}", by_auto.reason);
        assert!(by_auto.reason.contains(why), "{}", by_auto.reason);
        assert_eq!((&by_auto.removed, &by_auto.added), (&by_dred.removed, &by_dred.added));
        assert!(auto.db().same_tuples(dred.db()));
    };
    let mut p = with_facts(rules, &chain.join(" "));
    let middle = fact(&mut p, "E", &["n150", "n151"]);
    let last = fact(&mut p, "E", &["n299", "n300"]);
    check(&p, middle, MaintainedBy::Recompute, "expected to pass its budget");
    // The chain's last edge on a fresh state: as wide as the middle for all the estimate
    // knows, so the index is not built for it.
    check(&p, last, MaintainedBy::Recompute, "expected to pass its budget");
    let mut p = with_facts(rules, &stars.join(" "));
    let leaf = fact(&mut p, "E", &["s3", "l3x7"]);
    check(&p, leaf, MaintainedBy::Dred, "stayed within its budget");
}

/// A deletion that over-deletes one fact rederives it along the indexes the evaluation
/// built: the selective plan would probe the edges by their target, an index of every
/// edge that nothing read before, which on a large input costs more than recomputing.
#[test]
fn a_local_deletion_indexes_no_input_column_it_did_not_read() {
    let mut edges: Vec<String> = (1..=5).map(|i| format!("E(a,l{i}).")).collect();
    edges.extend((0..6_000).map(|i| format!("E(u{i},v{i}).")));
    let mut p = with_facts("M(a) <-\nR(X,Y) <- M(X), E(X,Y)\nR(X,Z) <- M(X), R(X,Y), E(Y,Z)", &edges.join(" "));
    let leaf = fact(&mut p, "E", &["a", "l1"]);
    let e = pred(&p, "E");
    for maintenance in [Maintenance::Dred, Maintenance::Auto] {
        let mut state =
            Maintained::with_maintenance(plan_program(&p), &p, Database::from_facts(&p, &p.facts), maintenance);
        let report = state.apply(&Update { inserts: vec![], deletes: vec![leaf.clone()] });
        assert_eq!(round_text(&p, &report.overdeleted), "R(a,l1)");
        assert_eq!(sorted_text(&p, state.db(), "R").len(), 4);
        assert_eq!(rows_by_target(&state, e), 0, "{maintenance:?} indexed the edges by their target");
    }
}

/// A batch that probes a large relation a few times scans it instead of indexing it, and
/// an index that batch after batch would have read is built once their scans have cost
/// about what building it does (ski rental); what the scans find is what the index would.
#[test]
fn a_few_probes_scan_a_relation_until_indexing_it_pays() {
    // 60 disjoint paths of 25 nodes. Deleting or inserting a path's last edge reaches the
    // paths' closure by its second column, which the evaluation never read.
    let (paths, nodes) = (60, 25);
    let edges: Vec<String> =
        (0..paths).flat_map(|t| (1..nodes).map(move |i| format!("E(t{t}n{},t{t}n{i}).", i - 1))).collect();
    let mut p = with_facts("R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), E(Y,Z)", &edges.join(" "));
    let r = pred(&p, "R");
    let closure = paths * nodes * (nodes - 1) / 2;
    let mut state =
        Maintained::with_maintenance(plan_program(&p), &p, Database::from_facts(&p, &p.facts), Maintenance::Dred);
    assert_eq!((state.db().len(r), rows_by_target(&state, r)), (closure, 0));
    let mut scanned_batches = 0;
    for t in 0..16 {
        let (from, to) = (format!("t{t}n{}", nodes - 2), format!("t{t}n{}", nodes - 1));
        let last = fact(&mut p, "E", &[&from, &to]);
        let deleted = state.apply(&Update { inserts: vec![], deletes: vec![last.clone()] });
        // Every path to the last node goes.
        let gone: Vec<String> = (0..nodes - 1).map(|i| format!("R(t{t}n{i},{to})")).collect();
        let mut gone_sorted = gone.clone();
        gone_sorted.sort();
        assert_eq!(round_text(&p, &ir::one_per_fact(&deleted.removed)), gone_sorted.join(" "));
        assert_eq!(state.db().len(r), closure - (nodes - 1));
        scanned_batches += usize::from(rows_by_target(&state, r) == 0);
        let inserted = state.apply(&Update { inserts: vec![last], deletes: vec![] });
        assert_eq!(round_text(&p, &ir::one_per_fact(&inserted.added)), gone_sorted.join(" "));
        assert_eq!(state.db().len(r), closure);
        scanned_batches += usize::from(rows_by_target(&state, r) == 0);
    }
    // The first batches scan; the index is built once the scans add up to its cost.
    assert!((4..32).contains(&scanned_batches), "the index was built after {scanned_batches} batches");
    assert!(rows_by_target(&state, r) > 0, "never indexed");
}

/// The left-linear closure of a chain of `nodes` nodes `n0 -> n1 -> …`, maintained by
/// DRed.
fn dred_chain(nodes: usize) -> (Program, Maintained) {
    let edges: Vec<String> = (1..nodes).map(|i| format!("E(n{},n{i}).", i - 1)).collect();
    let p = with_facts("R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), E(Y,Z)", &edges.join(" "));
    let state =
        Maintained::with_maintenance(plan_program(&p), &p, Database::from_facts(&p, &p.facts), Maintenance::Dred);
    (p, state)
}

/// How many rows of `pred` its index by the second column holds.
fn rows_by_target(state: &Maintained, pred: PredId) -> u32 {
    let rows = &state.db().rows[pred.index()];
    rows.end() - rows.unindexed_by(&[1])
}

/// DRed's over-deletion gives back an index only the deleted edges' plans probe (the
/// closure by its second column) once it has over-deleted a quarter as many facts as
/// the index holds, and keeps it for a deletion that stays local.
#[test]
fn a_wide_over_deletion_gives_back_the_index_only_its_first_wave_reads() {
    let nodes = 200;
    let (mut p, mut state) = dred_chain(nodes);
    let edge = |p: &mut Program, i: usize| fact(p, "E", &[&format!("n{}", i - 1), &format!("n{i}")]);
    // The last 50 edges: their first wave takes every path into their targets, about
    // 8,700 of the closure's 19,900 facts, through the index its 50 probes build.
    let last: Vec<_> = (nodes - 50..nodes).map(|i| edge(&mut p, i)).collect();
    let report = state.apply(&Update { inserts: vec![], deletes: last.clone() });
    assert_eq!(report.strategy, MaintainedBy::Dred);
    let mut edb = Database::from_facts(&p, &p.facts);
    for (pred, tuple) in &last {
        edb.remove(*pred, tuple);
    }
    let expected = Maintained::with_maintenance(plan_program(&p), &p, edb, Maintenance::Dred);
    assert!(state.db().same_tuples(expected.db()));
    assert_eq!(rows_by_target(&state, pred(&p, "R")), 0, "the index was kept");
    // Put back, then a local deletion: the last edge, 199 facts.
    state.apply(&Update { inserts: last, deletes: vec![] });
    assert!(rows_by_target(&state, pred(&p, "R")) > 0, "the insertion probes the index, and builds it");
    let report = state.apply(&Update { inserts: vec![], deletes: vec![edge(&mut p, nodes - 1)] });
    assert_eq!(report.removed.iter().map(|(_, ts)| ts.len()).sum::<usize>(), nodes - 1);
    assert!(rows_by_target(&state, pred(&p, "R")) > 0, "a local deletion gave the index back");
}

/// A cut in the middle of a chain over-deletes a few facts a wave, over many waves, and
/// half the closure in all: the index only the first wave read goes once a quarter of
/// its entries' worth of facts went, not at the end of the batch.
#[test]
fn a_cut_chain_gives_back_the_index_only_its_first_wave_reads() {
    let (mut p, mut state) = dred_chain(200);
    // Edges into new nodes off the chain's first half probe the index, and build it.
    let twigs: Vec<_> = (0..100).map(|i| fact(&mut p, "E", &[&format!("n{i}"), &format!("t{i}")])).collect();
    state.apply(&Update { inserts: twigs.clone(), deletes: vec![] });
    state.apply(&Update { inserts: vec![], deletes: twigs });
    assert!(rows_by_target(&state, pred(&p, "R")) > 0, "the twigs built the index");
    let middle = fact(&mut p, "E", &["n99", "n100"]);
    let report = state.apply(&Update { inserts: vec![], deletes: vec![middle.clone()] });
    // Wave 1 takes the 100 paths into n100, each later wave those one node further.
    assert_eq!(report.overdeleted_waves[0].len(), 100);
    assert_eq!(report.waves, 100);
    assert_eq!(rows_by_target(&state, pred(&p, "R")), 0, "the index was kept");
    let mut edb = Database::from_facts(&p, &p.facts);
    edb.remove(middle.0, &middle.1);
    let expected = Maintained::with_maintenance(plan_program(&p), &p, edb, Maintenance::Dred);
    assert!(state.db().same_tuples(expected.db()));
}

/// A report listing at most a few facts counts a larger batch per relation instead, and
/// otherwise equals the full report.
#[test]
fn a_listing_report_counts_a_large_batch() {
    let mut p = with_facts(MAGIC, EXAMPLE_1_EDGES);
    let ab = fact(&mut p, "E", &["a", "b"]);
    let new = || Maintained::new(plan_program(&p), &p, Database::from_facts(&p, &p.facts));
    let (mut full, mut few, mut enough) = (new(), new(), new());
    let delete = Update { inserts: vec![], deletes: vec![ab] };
    let by_full = full.apply(&delete);
    let by_few = few.try_apply_listing(&delete, 13).unwrap();
    assert!(!by_few.listed && by_few.overdeleted.is_empty() && by_few.overdeleted_waves.is_empty());
    let (q, m) = (pred(&p, "Q"), pred(&p, "M"));
    let tally = |overdeleted, rederived| Tally { overdeleted, rederived, ..Tally::default() };
    // DRed's 12 over-deleted in 4 waves and 2 rederived, as counts: 14 facts touched.
    let mut want = vec![(m, tally(3, 1)), (q, tally(9, 1))];
    want.sort_by_key(|(p, _)| *p);
    assert_eq!(by_few.tallies, want);
    assert_eq!(by_few.waves, 4);
    assert_eq!((&by_few.removed, &by_few.added), (&by_full.removed, &by_full.added));
    assert_eq!(enough.try_apply_listing(&delete, 14).unwrap(), by_full);
    assert!(few.db().same_tuples(full.db()));
}

#[test]
fn counting_updates_match_the_full_reports() {
    let mut p = with_facts(MAGIC, EXAMPLE_1_EDGES);
    let new = || Maintained::new(plan_program(&p), &p, Database::from_facts(&p, &p.facts));
    let (mut listed, mut counted) = (new(), new());
    let ab = fact(&mut p, "E", &["a", "b"]);
    let ce = fact(&mut p, "E", &["c", "e"]);
    for update in [
        Update { inserts: vec![], deletes: vec![ab.clone()] },
        Update { inserts: vec![ab, ce.clone()], deletes: vec![ce] },
    ] {
        let report = listed.apply(&update);
        let counts = counted.apply_counting(&update);
        let total = |lists: &[(PredId, Vec<Vec<u32>>)]| lists.iter().map(|(_, t)| t.len()).sum::<usize>();
        assert_eq!(counts.waves, report.overdeleted_waves.len());
        assert_eq!(counts.overdeleted, total(&report.overdeleted));
        assert_eq!(counts.rederived, total(&report.rederived));
        assert_eq!(counts.inserted, total(&report.inserted));
        assert_eq!((counts.edb_inserted, counts.edb_deleted), (report.edb_inserted.len(), report.edb_deleted.len()));
        assert_eq!(counts.work, report.work);
        assert!(counted.db().same_tuples(listed.db()));
    }
}

#[test]
fn dred_original_program_delete_leaves_18() {
    let mut p = with_facts(ORIGINAL, EXAMPLE_1_EDGES);
    let plan = plan_program(&p);
    let mut maintained = Maintained::new(plan, &p, Database::from_facts(&p, &p.facts));
    let ab = fact(&mut p, "E", &["a", "b"]);
    let derived_update = fact(&mut p, "R", &["a", "b"]);
    let report = maintained.apply(&Update { inserts: vec![derived_update.clone()], deletes: vec![ab] });
    assert_eq!(report.noop_inserts, vec![derived_update]);
    assert_eq!(maintained.db().len(pred(&p, "R")), 18);
}

/// Magic programs on random graphs, where the fixpoint loop leaves out the demand guards
/// that answer atoms imply and reads edges through guard-filtered indexes: semi-naive
/// must still agree with the reference engine, and DRed with recomputation.
#[test]
fn magic_programs_on_random_graphs_agree_with_reference_and_recomputation() {
    let rules = [
        MAGIC,
        "M(a) <-\nQ(X,Y) <- M(X), E(X,Y)\nM(Y) <- M(X), E(X,Y)\nQ(X,Z) <- M(X), E(X,Y), Q(Y,Z)",
        "M(a) <-\nQ(X,Y) <- M(X), E(X,Y)\nQ(X,Z) <- M(X), Q(X,Y), E(Y,Z)",
    ];
    let names = ["a", "b", "c", "d", "e", "f"];
    let mut next = below(99);
    for round in 0..120 {
        let edges: Vec<(usize, usize)> = (0..4 + next(10)).map(|_| (next(6), next(6))).collect();
        let text: String = edges.iter().map(|&(x, y)| format!("E({},{}). ", names[x], names[y])).collect();
        let mut p = with_facts(rules[round % rules.len()], text.trim_end());
        let db = both(&p);
        let maintenance = if round % 2 == 0 { Maintenance::Dred } else { Maintenance::Ranked };
        let edb = Database::from_facts(&p, &p.facts);
        let mut maintained = Maintained::with_maintenance(plan_program(&p), &p, edb, maintenance);
        assert!(maintained.db().same_tuples(&db));
        let mut current = edges.clone();
        for _ in 0..3 {
            let (x, y) = (next(6), next(6));
            let change = fact(&mut p, "E", &[names[x], names[y]]);
            let update = if current.contains(&(x, y)) {
                current.retain(|&e| e != (x, y));
                Update { inserts: vec![], deletes: vec![change] }
            } else {
                current.push((x, y));
                Update { inserts: vec![change], deletes: vec![] }
            };
            maintained.apply(&update);
            let text: String = current.iter().map(|&(x, y)| format!("E({},{}). ", names[x], names[y])).collect();
            let scratch = with_facts(rules[round % rules.len()], text.trim_end());
            let expected = run(&scratch, NativeEngine::Reference).db;
            for name in ["M", "Q"] {
                let got = sorted_text(&p, maintained.db(), name);
                assert_eq!(got, sorted_text(&scratch, &expected, name), "{round} {maintenance:?}");
            }
        }
    }
}

/// Andersen points-to on random small programs, where the join of a new `hpt(B,O)` with
/// `pt(P,B)` and `load(V,P)` reads `pt` through an index filtered by a semi-join with
/// `load`, built while `pt` grows and brought up to date with it every round: semi-naive
/// must agree with the reference engine, and maintenance with recomputation.
#[test]
fn points_to_through_semijoin_filtered_indexes_agrees_with_reference_and_recomputation() {
    const RULES: &str = "PT(V,O) <- Alloc(V,O)
PT(V,O) <- Assign(V,W), PT(W,O)
PT(V,O) <- Load(V,P), PT(P,B), HPT(B,O)
HPT(B,O) <- Store(P,W), PT(P,B), PT(W,O)";
    let mut next = below(7);
    let built_before = crate::seminaive::SEMIJOIN_INDEXES.with(|n| n.get());
    for round in 0..40 {
        let var = |i: usize| format!("v{i}");
        let mut facts = Vec::new();
        for o in 0..3 {
            facts.push(format!("Alloc({},o{o})", var(next(12))));
        }
        for _ in 0..10 + next(10) {
            facts.push(format!("Assign({},{})", var(next(12)), var(next(12))));
        }
        for (name, count) in [("Load", 3), ("Store", 3)] {
            for _ in 0..count {
                facts.push(format!("{name}({},{})", var(next(12)), var(next(12))));
            }
        }
        facts.sort();
        facts.dedup();
        let text = |facts: &[String]| facts.iter().map(|f| format!("{f}. ")).collect::<String>();
        let mut p = with_facts(RULES, text(&facts).trim_end());
        let db = both(&p);
        let maintenance = if round % 2 == 0 { Maintenance::Dred } else { Maintenance::Ranked };
        let mut maintained =
            Maintained::with_maintenance(plan_program(&p), &p, Database::from_facts(&p, &p.facts), maintenance);
        assert!(maintained.db().same_tuples(&db));
        for _ in 0..3 {
            // Delete one fact and add a load: the filter's relation changes between batches.
            let gone = facts.swap_remove(next(facts.len()));
            let added = format!("Load({},{})", var(next(12)), var(next(12)));
            let atom = |p: &mut Program, f: &str| {
                let (name, args) = f.trim_end_matches(')').split_once('(').unwrap();
                let args: Vec<&str> = args.split(',').collect();
                fact(p, name, &args)
            };
            let update = Update { deletes: vec![atom(&mut p, &gone)], inserts: vec![atom(&mut p, &added)] };
            if !facts.contains(&added) {
                facts.push(added);
            }
            maintained.apply(&update);
            let scratch = with_facts(RULES, text(&facts).trim_end());
            let expected = run(&scratch, NativeEngine::Reference).db;
            for name in ["PT", "HPT"] {
                assert_eq!(sorted_text(&p, maintained.db(), name), sorted_text(&scratch, &expected, name), "{round}");
            }
        }
    }
    let built = crate::seminaive::SEMIJOIN_INDEXES.with(|n| n.get()) - built_before;
    assert!(built > 0, "no join read a semi-join filtered index");
}

/// Random small programs: every engine and every update path must agree with the
/// reference engine evaluated from scratch.
mod random {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    const NAMES: [&str; 7] = ["A", "B", "C", "P", "Q", "S", "Z"];
    const ARITIES: [usize; 7] = [2, 1, 0, 2, 1, 3, 0];
    const INPUTS: usize = 3;
    const VARS: [&str; 4] = ["X", "Y", "Z", "W"];
    const DOMAIN: [&str; 4] = ["c0", "c1", "c2", "c3"];
    /// Recursive cores that random rules rarely produce on their own; a random subset of
    /// them joins each program.
    const TEMPLATES: [&str; 5] = [
        "P(X,Y) <- A(X,Y)",
        "P(X,Z) <- P(X,Y), P(Y,Z)",
        "P(X,Z) <- A(X,Y), P(Y,Z)",
        "Q(Y) <- Q(X), P(X,Y)\nQ(X) <- B(X), Z()",
        "S(X,Y,Y) <- P(X,Y), Q(Y)\nZ() <- S(X,Y,X)\nZ() <- C()",
    ];

    /// A term code: below 4 a variable, otherwise a constant of the domain.
    fn term_text(code: u8) -> &'static str {
        match code {
            0..4 => VARS[code as usize],
            _ => DOMAIN[(code as usize - 4) % DOMAIN.len()],
        }
    }

    type AtomCodes = (usize, Vec<u8>);
    type RuleCodes = (usize, Vec<u8>, Vec<AtomCodes>);

    fn atom_text(pred: usize, codes: &[u8]) -> (String, Vec<&'static str>) {
        let args: Vec<&str> = codes[..ARITIES[pred]].iter().map(|&c| term_text(c)).collect();
        (format!("{}({})", NAMES[pred], args.join(",")), args)
    }

    /// The rule text. A head variable the body does not bind is replaced by a body
    /// variable (or, for an empty body, a constant), so that every rule is safe.
    fn rule_text((head, head_codes, body): &RuleCodes) -> String {
        let body: Vec<(String, Vec<&str>)> = body.iter().map(|(p, codes)| atom_text(*p, codes)).collect();
        let bound: Vec<&str> = body
            .iter()
            .flat_map(|(_, args)| args.iter().copied())
            .filter(|t| t.starts_with(char::is_uppercase))
            .collect();
        let head_pred = INPUTS + head;
        let head_args: Vec<&str> = head_codes[..ARITIES[head_pred]]
            .iter()
            .map(|&c| match term_text(c) {
                t if !t.starts_with(char::is_uppercase) || bound.contains(&t) => t,
                _ if bound.is_empty() => DOMAIN[0],
                _ => bound[c as usize % bound.len()],
            })
            .collect();
        let body: Vec<String> = body.into_iter().map(|(text, _)| text).collect();
        format!("{}({}) <- {}", NAMES[head_pred], head_args.join(","), body.join(", "))
    }

    type ProgramCodes = (Vec<bool>, Vec<RuleCodes>);

    fn rules() -> impl Strategy<Value = ProgramCodes> {
        // Terms are variables two times in three, and binary predicates are picked more
        // often, so that joins and recursion happen; empty bodies are rare.
        let pred = prop::sample::select(vec![0usize, 0, 1, 2, 3, 3, 4, 5, 6]);
        let atom = (pred, vec(0u8..6, 3));
        let body = prop_oneof![1 => vec(atom.clone(), 0..=0), 6 => vec(atom, 1..=3)];
        let random = vec((0usize..NAMES.len() - INPUTS, vec(0u8..5, 3), body), 0..6);
        (vec(any::<bool>(), TEMPLATES.len()), random)
    }

    /// An input fact as (predicate index, domain indices).
    fn input_fact() -> impl Strategy<Value = (usize, Vec<usize>)> {
        (0usize..INPUTS, vec(0usize..DOMAIN.len(), 2)).prop_map(|(p, v)| (p, v[..ARITIES[p]].to_vec()))
    }

    fn build((templates, rules): &ProgramCodes) -> Program {
        let mut text: Vec<String> = rules.iter().map(rule_text).collect();
        text.extend(TEMPLATES.iter().zip(templates).filter(|(_, &on)| on).map(|(t, _)| t.to_string()));
        // Mention every predicate once so that all of them exist with their arities.
        let mentions: Vec<String> =
            (0..NAMES.len()).map(|p| format!("{}({})", NAMES[p], vec!["X"; ARITIES[p]].join(","))).collect();
        let mut p = program(&format!("Unused() <- {}\n{}", mentions.join(", "), text.join("\n")));
        plan::testing::values(&mut p, &DOMAIN);
        p
    }

    fn tuple_of(p: &Program, (pred, values): &(usize, Vec<usize>)) -> (PredId, Vec<u32>) {
        let id = p.lookup_source(NAMES[*pred]).unwrap();
        (id, values.iter().map(|&v| p.consts.get(DOMAIN[v]).unwrap().0).collect())
    }

    fn database(p: &Program, facts: &BTreeSet<(PredId, Vec<u32>)>) -> Database {
        let mut db = Database::new(p);
        for (pred, tuple) in facts {
            db.insert(*pred, tuple);
        }
        db
    }

    /// The update of one generated batch.
    fn update_of(p: &Program, inserts: &[(usize, Vec<usize>)], deletes: &[(usize, Vec<usize>)]) -> Update {
        Update {
            inserts: inserts.iter().map(|f| tuple_of(p, f)).collect(),
            deletes: deletes.iter().map(|f| tuple_of(p, f)).collect(),
        }
    }

    fn scratch(p: &Program, facts: &BTreeSet<(PredId, Vec<u32>)>, engine: NativeEngine) -> Evaluation {
        let options = EvalOptions { engine, ..EvalOptions::default() };
        evaluate(&plan_program(p), p, database(p, facts), options)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn seminaive_matches_reference(rules in rules(), facts in vec(input_fact(), 0..24)) {
            let p = build(&rules);
            let facts: BTreeSet<_> = facts.iter().map(|f| tuple_of(&p, f)).collect();
            let reference = scratch(&p, &facts, NativeEngine::Reference);
            let fast = scratch(&p, &facts, NativeEngine::Seminaive);
            for id in p.pred_ids() {
                prop_assert_eq!(fast.db.sorted_tuples(id), reference.db.sorted_tuples(id), "{}", p.pred_name(id));
            }
        }

        /// Keeping an evaluation's result (`from_evaluation`) maintains exactly like
        /// evaluating again for the maintained state: same reports, same states (the
        /// reference engine's result is evaluated again from its input relations).
        #[test]
        fn a_kept_evaluation_maintains_like_a_fresh_state(
            rules in rules(),
            facts in vec(input_fact(), 0..24),
            batches in vec((vec(input_fact(), 0..4), vec(input_fact(), 0..4)), 1..4),
            ranked in any::<bool>(),
            reference in any::<bool>(),
        ) {
            let p = build(&rules);
            let current: BTreeSet<_> = facts.iter().map(|f| tuple_of(&p, f)).collect();
            let m = if ranked { Maintenance::Ranked } else { Maintenance::Dred };
            let mut fresh = Maintained::with_maintenance(plan_program(&p), &p, database(&p, &current), m);
            let engine = if reference { NativeEngine::Reference } else { NativeEngine::Seminaive };
            let mut kept = Maintained::from_evaluation(plan_program(&p), &p, scratch(&p, &current, engine), m);
            prop_assert!(kept.db().same_tuples(fresh.db()));
            for (inserts, deletes) in &batches {
                let update = update_of(&p, inserts, deletes);
                let (by_fresh, by_kept) = (fresh.apply(&update), kept.apply(&update));
                prop_assert_eq!(&by_kept, &by_fresh);
                prop_assert!(kept.db().same_tuples(fresh.db()));
            }
        }

        /// Every strategy, `Auto` included (whose batches here delete up to a third of a
        /// small input, so that it switches among all its methods), reaches the recomputed
        /// state; each report's tallies count its lists, and its net change is the
        /// difference of the states before and after.
        #[test]
        fn every_strategy_matches_recomputation(
            rules in rules(),
            facts in vec(input_fact(), 0..24),
            batches in vec((vec(input_fact(), 0..4), vec(input_fact(), 0..8)), 1..5),
        ) {
            let p = build(&rules);
            let mut current: BTreeSet<_> = facts.iter().map(|f| tuple_of(&p, f)).collect();
            let new = |m| Maintained::with_maintenance(plan_program(&p), &p, database(&p, &current), m);
            let (mut dred, mut ranked) = (new(Maintenance::Dred), new(Maintenance::Ranked));
            let (mut auto, mut auto_as_if_large) = (new(Maintenance::Auto), new(Maintenance::Auto));
            auto_as_if_large.set_auto_min_budget(0);
            for (inserts, deletes) in &batches {
                let update = update_of(&p, inserts, deletes);
                let before = scratch(&p, &current, NativeEngine::Reference);
                for d in &update.deletes {
                    current.remove(d);
                }
                current.extend(update.inserts.iter().cloned());
                let expected = scratch(&p, &current, NativeEngine::Reference);
                let (by_dred, by_rank) = (dred.apply(&update), ranked.apply(&update));
                let (by_auto, by_auto_as_if_large) = (auto.apply(&update), auto_as_if_large.apply(&update));
                let checked =
                    [(&dred, &by_dred), (&ranked, &by_rank), (&auto, &by_auto), (&auto_as_if_large, &by_auto_as_if_large)];
                for (state, report) in checked {
                    for id in p.pred_ids() {
                        prop_assert_eq!(
                            state.db().sorted_tuples(id), expected.db.sorted_tuples(id), "{}", p.pred_name(id)
                        );
                    }
                    // Rederived facts are over-deleted facts, and waves partition the over-deleted.
                    let waves: usize = report.overdeleted_waves.iter().map(Vec::len).sum();
                    let overdeleted: usize = report.overdeleted.iter().map(|(_, t)| t.len()).sum();
                    prop_assert_eq!(waves, overdeleted);
                    for (pred, tuples) in &report.rederived {
                        prop_assert!(tuples.iter().all(|t| listed(&report.overdeleted, *pred, t)));
                    }
                    // The tallies count the lists.
                    prop_assert!(report.listed);
                    let tallied = |phase: fn(&Tally) -> usize| report.tallies.iter().map(|(_, t)| phase(t)).sum::<usize>();
                    let count = |lists: &[(PredId, Vec<Vec<u32>>)]| lists.iter().map(|(_, ts)| ts.len()).sum::<usize>();
                    prop_assert_eq!(tallied(|t| t.overdeleted), overdeleted);
                    prop_assert_eq!(tallied(|t| t.rederived), count(&report.rederived));
                    prop_assert_eq!(tallied(|t| t.reinserted + t.inserted), count(&report.inserted));
                    prop_assert_eq!(report.waves, report.overdeleted_waves.len());
                    for id in p.pred_ids().filter(|&id| p.rules.iter().any(|r| r.head.pred == id)) {
                        let (old, new) = (before.db.sorted_tuples(id), expected.db.sorted_tuples(id));
                        let gone: Vec<Vec<u32>> = old.iter().filter(|t| !new.contains(t)).cloned().collect();
                        let came: Vec<Vec<u32>> = new.iter().filter(|t| !old.contains(t)).cloned().collect();
                        let net = |lists: &[(PredId, ir::Tuples)]| {
                            lists.iter().find(|(q, _)| *q == id).map(|(_, ts)| ts.to_vecs()).unwrap_or_default()
                        };
                        prop_assert_eq!(net(&report.removed), gone, "{} removed", p.pred_name(id));
                        prop_assert_eq!(net(&report.added), came, "{} added", p.pred_name(id));
                    }
                }
                // Ranked over-deletion lies between what is really gone and DRed's.
                for (pred, tuples) in &by_rank.overdeleted {
                    prop_assert!(tuples.iter().all(|t| listed(&by_dred.overdeleted, *pred, t)));
                }
                for id in p.pred_ids().filter(|&id| p.rules.iter().any(|r| r.head.pred == id)) {
                    for t in before.db.sorted_tuples(id) {
                        if !expected.db.contains(id, &t) {
                            prop_assert!(listed(&by_rank.overdeleted, id, &t), "{} lost", p.pred_name(id));
                        }
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(120))]

        /// Long sequences of small batches on random programs: ranked maintenance agrees
        /// with recomputation after every batch and keeps its invariant, every fact left
        /// having a derivation from facts of lower rank.
        #[test]
        fn ranked_keeps_its_invariant_over_long_sequences(
            rules in rules(),
            facts in vec(input_fact(), 0..24),
            batches in vec((vec(input_fact(), 0..5), vec(input_fact(), 0..5)), 10..20),
        ) {
            let p = build(&rules);
            let mut current: BTreeSet<_> = facts.iter().map(|f| tuple_of(&p, f)).collect();
            let mut ranked =
                Maintained::with_maintenance(plan_program(&p), &p, database(&p, &current), Maintenance::Ranked);
            prop_assert_eq!(unsupported_facts(&p, ranked.db()), Vec::<String>::new());
            let mut gone: Vec<(PredId, Vec<u32>)> = Vec::new();
            for (k, (inserts, deletes)) in batches.iter().enumerate() {
                let mut update = update_of(&p, inserts, deletes);
                // Deletes of present facts mostly, and now and then everything deleted so
                // far comes back.
                let present: Vec<_> = current.iter().skip(k % 4).step_by(3).take(3).cloned().collect();
                update.deletes.extend(present);
                if k % 5 == 4 {
                    update.inserts.append(&mut gone);
                }
                for d in &update.deletes {
                    if current.remove(d) {
                        gone.push(d.clone());
                    }
                }
                current.extend(update.inserts.iter().cloned());
                ranked.apply(&update);
                let expected = scratch(&p, &current, NativeEngine::Reference);
                for id in p.pred_ids() {
                    prop_assert_eq!(
                        ranked.db().sorted_tuples(id), expected.db.sorted_tuples(id), "{} after {}", p.pred_name(id), k
                    );
                }
                prop_assert_eq!(unsupported_facts(&p, ranked.db()), Vec::<String>::new(), "after {}", k);
            }
        }
    }

    /// Threads that split every join of two rows of delta or more, so that the small
    /// inputs of these tests run the split path.
    fn split(count: usize) -> Threads {
        Threads::new(count).splitting_from(2)
    }

    fn with_threads(p: &Program, facts: &BTreeSet<(PredId, Vec<u32>)>, threads: Threads) -> Evaluation {
        let options = EvalOptions { record_rounds: true, threads, ..EvalOptions::default() };
        evaluate(&plan_program(p), p, database(p, facts), options)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(150))]

        /// Two and four threads build the database one thread builds: the same rows in
        /// the same order with the same ranks, the same rounds and the same work.
        #[test]
        fn threads_build_the_same_database(rules in rules(), facts in vec(input_fact(), 0..32)) {
            let p = build(&rules);
            let facts: BTreeSet<_> = facts.iter().map(|f| tuple_of(&p, f)).collect();
            let one = with_threads(&p, &facts, Threads::ONE);
            for count in [2, 4] {
                let many = with_threads(&p, &facts, split(count));
                prop_assert_eq!(layout(&many.db), layout(&one.db), "{} threads", count);
                prop_assert_eq!(&many.rounds, &one.rounds);
                prop_assert_eq!((many.iterations, many.work), (one.iterations, one.work));
            }
        }

        /// Maintenance (DRed and ranked) of an evaluation made with threads, which its
        /// updates go on using: the reports and databases of one thread, and the facts of
        /// a recomputation.
        #[test]
        fn threads_maintain_like_one_thread(
            rules in rules(),
            facts in vec(input_fact(), 0..32),
            batches in vec((vec(input_fact(), 0..5), vec(input_fact(), 0..5)), 1..4),
            ranked in any::<bool>(),
        ) {
            let p = build(&rules);
            let mut current: BTreeSet<_> = facts.iter().map(|f| tuple_of(&p, f)).collect();
            let m = if ranked { Maintenance::Ranked } else { Maintenance::Dred };
            let keep = |threads| Maintained::from_evaluation(plan_program(&p), &p, with_threads(&p, &current, threads), m);
            let (mut one, mut two, mut four) = (keep(Threads::ONE), keep(split(2)), keep(split(4)));
            for (inserts, deletes) in &batches {
                let update = update_of(&p, inserts, deletes);
                for d in &update.deletes {
                    current.remove(d);
                }
                current.extend(update.inserts.iter().cloned());
                let by_one = one.apply(&update);
                for many in [&mut two, &mut four] {
                    prop_assert_eq!(&many.apply(&update), &by_one);
                    prop_assert_eq!(layout(many.db()), layout(one.db()));
                }
                let expected = scratch(&p, &current, NativeEngine::Reference);
                prop_assert!(one.db().same_tuples(&expected.db));
            }
        }
    }

    fn listed(lists: &[(PredId, Vec<Vec<u32>>)], pred: PredId, tuple: &[u32]) -> bool {
        lists.iter().any(|(q, ts)| *q == pred && ts.iter().any(|t| t == tuple))
    }
}

/// Every relation's rows in row order, each with its rank and whether it is alive: what
/// must not depend on the number of threads.
fn layout(db: &Database) -> Vec<Vec<(Vec<u32>, Rank, bool)>> {
    db.rows
        .iter()
        .map(|rows| (0..rows.end()).map(|r| (rows.row(r).to_vec(), rows.rank_of(r), rows.is_alive(r))).collect())
        .collect()
}

/// Closures of random graphs of a few hundred nodes (right-, left- and non-linear, and
/// the magic program of a point query), whose deltas run to thousands of rows, evaluated
/// and maintained with threads: the databases of one thread, row for row.
#[test]
fn threads_on_random_graphs_build_and_maintain_the_same_database() {
    let rules =
        ["R(X,Y) <- E(X,Y)\nR(X,Z) <- E(X,Y), R(Y,Z)", "R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), E(Y,Z)", ORIGINAL, MAGIC];
    let mut next = below(7);
    for (round, rules) in rules.iter().enumerate() {
        let nodes = 150;
        // A path from the queried `n0`, so that it reaches much of the graph.
        let path = (0..20).map(|i| format!("E(n{i},n{}).\n", i + 1));
        let text: String =
            path.chain((0..2 * nodes).map(|_| format!("E(n{},n{}).\n", next(nodes), next(nodes)))).collect();
        let mut p = program(&format!("{}\n{text}", rules.replace("M(a)", "M(n0)")));
        let maintenance = if round % 2 == 0 { Maintenance::Dred } else { Maintenance::Ranked };
        let keep = |p: &Program, threads: Threads| {
            let split_before = crate::split::SPLIT_JOINS.get();
            let options = EvalOptions { threads, ..EvalOptions::default() };
            let eval = evaluate(&plan_program(p), p, Database::from_facts(p, &p.facts), options);
            let split = crate::split::SPLIT_JOINS.get() - split_before;
            (Maintained::from_evaluation(plan_program(p), p, eval, maintenance), split)
        };
        let (mut one, unsplit) = keep(&p, Threads::ONE);
        let (mut two, split) = keep(&p, Threads::new(2).splitting_from(4));
        assert_eq!(unsplit, 0);
        assert!(split > 0, "{rules}: no join was split");
        assert_eq!(layout(two.db()), layout(one.db()), "{rules}");
        for _ in 0..4 {
            let (x, y) = (format!("n{}", next(nodes)), format!("n{}", next(nodes)));
            let edge = fact(&mut p, "E", &[&x, &y]);
            let update = if one.db().contains(edge.0, &edge.1) {
                Update { inserts: vec![], deletes: vec![edge] }
            } else {
                Update { inserts: vec![edge], deletes: vec![] }
            };
            assert_eq!(two.apply(&update), one.apply(&update), "{rules}");
            assert_eq!(layout(two.db()), layout(one.db()), "{rules}");
        }
    }
}

/// A split join stops at a relation's tuple limit as one thread does: exactly full is no
/// error, one tuple less is the limit's error on the same relation.
#[test]
fn split_joins_stop_at_the_tuple_limit() {
    let edges: String = (0..40).map(|i| format!("E(n{i},n{}).\n", i + 1)).collect();
    let p = program(&format!("R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), R(Y,Z)\n{edges}"));
    let r = pred(&p, "R");
    for count in [1, 2, 4] {
        let evaluate_within = |limit: u32| {
            let mut db = Database::new(&p);
            db.set_tuple_limit(limit);
            for fact in &p.facts {
                db.insert(fact.pred, &fact.values);
            }
            let options = EvalOptions { threads: Threads::new(count).splitting_from(2), ..EvalOptions::default() };
            crate::try_evaluate(&plan_program(&p), &p, db, options).map(|eval| eval.db.len(r))
        };
        assert_eq!(evaluate_within(820), Ok(820), "{count} threads");
        let err = evaluate_within(819).unwrap_err();
        assert_eq!((err.pred, err.kind), (r, crate::ResourceKind::TupleLimit { limit: 819 }), "{count} threads");
    }
}

// ---------------------------------------------------------------------------------------
// Adversarial tests of ranked maintenance: long update sequences on random graphs and on
// programs with several recursive strata, compared with recomputation from scratch, with
// the ranked invariant itself checked after every update.

/// The facts of `db` that break the invariant of ranked maintenance: a fact of a derived
/// predicate none of whose rules derives it from live facts of strictly lower rank. Rules
/// are matched naively, as written (implied guards included), one body atom after the
/// other; a fully bound atom is looked up, any other is scanned.
fn unsupported_facts(p: &Program, db: &Database) -> Vec<String> {
    use ir::{Symbol, TermKind};
    use std::collections::HashMap;
    let facts: Vec<HashMap<Vec<u32>, Rank>> = p
        .pred_ids()
        .map(|pred| {
            let rows = db.rel(pred);
            let mut last = 0;
            for r in 0..rows.end() {
                assert!(rows.rank_of(r) >= last, "ranks grow with the rows of {}", p.pred_name(pred));
                last = rows.rank_of(r);
            }
            (0..rows.end()).filter(|&r| rows.is_alive(r)).map(|r| (rows.row(r).to_vec(), rows.rank_of(r))).collect()
        })
        .collect();
    fn matches(args: &[ir::Term], tuple: &[u32], env: &mut Vec<(Symbol, u32)>) -> bool {
        let mark = env.len();
        for (t, &v) in args.iter().zip(tuple) {
            let ok = match t.kind {
                TermKind::Const(c) => c.raw() == v,
                TermKind::Var(x) => match env.iter().find(|(y, _)| *y == x) {
                    Some(&(_, w)) => w == v,
                    None => {
                        env.push((x, v));
                        true
                    }
                },
            };
            if !ok {
                env.truncate(mark);
                return false;
            }
        }
        true
    }
    fn derive(body: &[ir::Atom], below: Rank, facts: &[HashMap<Vec<u32>, Rank>], env: &mut Vec<(Symbol, u32)>) -> bool {
        let Some((atom, rest)) = body.split_first() else { return true };
        let rel = &facts[atom.pred.index()];
        let bound: Option<Vec<u32>> = atom
            .args
            .iter()
            .map(|t| match t.kind {
                TermKind::Const(c) => Some(c.raw()),
                TermKind::Var(x) => env.iter().find(|(y, _)| *y == x).map(|&(_, v)| v),
            })
            .collect();
        if let Some(tuple) = bound {
            return rel.get(&tuple).is_some_and(|&rank| rank < below) && derive(rest, below, facts, env);
        }
        for (tuple, &rank) in rel {
            if rank >= below {
                continue;
            }
            let mark = env.len();
            if matches(&atom.args, tuple, env) {
                if derive(rest, below, facts, env) {
                    return true;
                }
                env.truncate(mark);
            }
        }
        false
    }
    let mut bad = Vec::new();
    for pred in p.pred_ids() {
        let rules: Vec<&ir::Rule> = p.rules.iter().filter(|r| r.head.pred == pred).collect();
        if rules.is_empty() {
            continue;
        }
        for (tuple, &rank) in &facts[pred.index()] {
            let supported = rules.iter().any(|rule| {
                let mut env = Vec::new();
                matches(&rule.head.args, tuple, &mut env) && derive(&rule.body, rank, &facts, &mut env)
            });
            if !supported {
                bad.push(format!("{}{} (rank {rank})", p.pred_name(pred), p.display_tuple(pred, tuple)));
            }
        }
    }
    bad.sort();
    bad
}

/// A tiny deterministic generator (xorshift), as in the tests above.
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % bound as u64) as usize
    }
}

/// Input facts as `(predicate, tuple)`.
type Facts = std::collections::BTreeSet<(PredId, Vec<u32>)>;

fn database_of(p: &Program, facts: &Facts) -> Database {
    let mut db = Database::new(p);
    for (pred, tuple) in facts {
        db.insert(*pred, tuple);
    }
    db
}

/// Runs `updates` through DRed and ranked maintenance of `rules` (all input predicates
/// mentioned in the rules, node constants `n0`, `n1`, …) started on `initial`, and after
/// each one compares both with a from-scratch evaluation (the reference engine when
/// `reference`), checks the ranked invariant, and checks that ranked over-deletion lies
/// between what is really gone and what DRed over-deletes. Returns how many
/// times a relation of the ranked state was compacted.
fn ranked_session(p: &Program, initial: &Facts, updates: &[Update], reference: bool, label: &str) -> usize {
    let engine = if reference { NativeEngine::Reference } else { NativeEngine::Seminaive };
    let scratch = |facts: &Facts| {
        let options = EvalOptions { engine, ..EvalOptions::default() };
        evaluate(&plan_program(p), p, database_of(p, facts), options).db
    };
    let new = |m| Maintained::with_maintenance(plan_program(p), p, database_of(p, initial), m);
    let (mut dred, mut ranked) = (new(Maintenance::Dred), new(Maintenance::Ranked));
    assert_eq!(unsupported_facts(p, ranked.db()), Vec::<String>::new(), "{label}: initial evaluation");
    let derived: Vec<PredId> = p.pred_ids().filter(|&id| p.rules.iter().any(|r| r.head.pred == id)).collect();
    let mut current = initial.clone();
    let mut before = scratch(&current);
    let mut compactions = 0;
    for (k, update) in updates.iter().enumerate() {
        for d in &update.deletes {
            current.remove(d);
        }
        for (pred, tuple) in &update.inserts {
            if !derived.contains(pred) && p.pred(*pred).arity == tuple.len() {
                current.insert((*pred, tuple.clone()));
            }
        }
        let expected = scratch(&current);
        let ends: Vec<u32> = ranked.db().ends();
        let (by_dred, by_rank) = (dred.apply(update), ranked.apply(update));
        compactions += ranked.db().ends().iter().zip(&ends).filter(|(now, was)| now < was).count();
        for id in p.pred_ids() {
            let want = expected.sorted_tuples(id);
            assert_eq!(dred.db().sorted_tuples(id), want, "{label}: DRed, update {k}, {}", p.pred_name(id));
            assert_eq!(ranked.db().sorted_tuples(id), want, "{label}: ranked, update {k}, {}", p.pred_name(id));
        }
        assert_eq!(unsupported_facts(p, ranked.db()), Vec::<String>::new(), "{label}: update {k}");
        let listed = |lists: &[(PredId, Vec<Vec<u32>>)], pred: PredId, t: &[u32]| {
            lists.iter().any(|(q, ts)| *q == pred && ts.iter().any(|u| u == t))
        };
        for (pred, tuples) in &by_rank.overdeleted {
            for t in tuples {
                assert!(
                    listed(&by_dred.overdeleted, *pred, t),
                    "{label}: update {k}: ranked over-deleted {}{} which DRed did not",
                    p.pred_name(*pred),
                    p.display_tuple(*pred, t)
                );
            }
        }
        for &id in &derived {
            for t in before.sorted_tuples(id) {
                if !expected.contains(id, &t) {
                    assert!(listed(&by_rank.overdeleted, id, &t), "{label}: update {k}: lost fact not over-deleted");
                }
            }
        }
        before = expected;
    }
    compactions
}

/// `count` random facts of the input predicates `inputs` (name, arity) over `nodes` nodes.
fn random_facts(
    p: &Program,
    inputs: &[(&str, usize)],
    nodes: usize,
    count: usize,
    rng: &mut Rng,
) -> Vec<(PredId, Vec<u32>)> {
    (0..count)
        .map(|_| {
            // Edges (the first input) most of the time.
            let (name, arity) = if inputs.len() == 1 || rng.below(4) != 0 {
                inputs[0]
            } else {
                inputs[1 + rng.below(inputs.len() - 1)]
            };
            let tuple = (0..arity).map(|_| p.consts.get(&format!("n{}", rng.below(nodes))).unwrap().0).collect();
            (pred(p, name), tuple)
        })
        .collect()
}

/// The program of `rules` with the node constants `n0 … n{nodes - 1}` interned.
fn with_nodes(rules: &str, nodes: usize) -> Program {
    let mut p = program(rules);
    let names: Vec<String> = (0..nodes).map(|i| format!("n{i}")).collect();
    plan::testing::values(&mut p, &names.iter().map(String::as_str).collect::<Vec<_>>());
    p
}

/// A random session: `edges` initial facts, then `batches` updates that delete some
/// present facts (a few absent ones too), insert new ones, and now and then delete and
/// insert the same fact in one batch.
fn random_session(
    rules: &str,
    inputs: &[(&str, usize)],
    nodes: usize,
    edges: usize,
    batches: usize,
    seed: u64,
    reference: bool,
) -> usize {
    let p = with_nodes(rules, nodes);
    let mut rng = Rng(seed);
    let initial: Facts = random_facts(&p, inputs, nodes, edges, &mut rng).into_iter().collect();
    let mut current = initial.clone();
    let mut updates = Vec::new();
    let mut removed: Vec<(PredId, Vec<u32>)> = Vec::new();
    for b in 0..batches {
        let present: Vec<_> = current.iter().cloned().collect();
        let mut deletes = Vec::new();
        // Every fourth batch deletes a third of the input and the next puts most of it
        // back: compaction follows, and ranks of re-inserted facts keep growing.
        let share = if b % 4 == 3 { 3 } else { 10 };
        for f in &present {
            if rng.below(share) == 0 {
                deletes.push(f.clone());
            }
        }
        // Absent facts, and facts of a derived predicate, change nothing.
        deletes.extend(random_facts(&p, inputs, nodes, 2, &mut rng));
        let fresh = if b % 4 == 3 { 1 } else { deletes.len().max(2) };
        let mut inserts = random_facts(&p, inputs, nodes, fresh, &mut rng);
        if b % 4 == 0 {
            inserts.extend(removed.drain(..).filter(|_| rng.below(4) != 0));
        }
        // Deleted and inserted in one batch: present afterwards.
        if let Some(f) = deletes.first().cloned() {
            if rng.below(2) == 0 {
                inserts.push(f);
            }
        }
        for d in &deletes {
            if current.remove(d) {
                removed.push(d.clone());
            }
        }
        current.extend(inserts.iter().cloned());
        updates.push(Update { inserts, deletes });
    }
    ranked_session(&p, &initial, &updates, reference, &format!("{rules} / seed {seed}"))
}

const RLIN: &str = "R(X,Y) <- E(X,Y)\nR(X,Z) <- E(X,Y), R(Y,Z)";
const LLIN: &str = "R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), E(Y,Z)";
const NONLIN: &str = "R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), R(Y,Z)";
/// Magic-style programs whose demand comes from an input relation as well as a fact.
const MAGIC_RLIN: &str =
    "M(n0) <-\nM(X) <- Start(X)\nQ(X,Y) <- M(X), E(X,Y)\nM(Y) <- M(X), E(X,Y)\nQ(X,Z) <- M(X), E(X,Y), Q(Y,Z)";
const MAGIC_LLIN: &str = "M(n0) <-\nM(X) <- Start(X)\nQ(X,Y) <- M(X), E(X,Y)\nQ(X,Z) <- M(X), Q(X,Y), E(Y,Z)";
const MAGIC_NONLIN: &str =
    "M(n0) <-\nM(X) <- Start(X)\nQ(X,Y) <- M(X), E(X,Y)\nM(Y) <- M(X), Q(X,Y)\nQ(X,Z) <- M(X), Q(X,Y), Q(Y,Z)";
/// Several recursive strata over a closure, with zero-arity predicates, constants in
/// heads and bodies, repeated variables and mutual recursion.
const STRATA: &str = "R(X,Y) <- E(X,Y)
R(X,Z) <- R(X,Y), R(Y,Z)
Cyc(X) <- R(X,X)
Loop() <- E(X,X)
Any() <- Cyc(X)
C(X,Y) <- Cyc(X), R(X,Y), Cyc(Y)
D(X,Z) <- C(X,Y), D(Y,Z)
D(X,Y) <- C(X,Y), Any()
Even(X) <- Start(X)
Even(Y) <- Odd(X), E(X,Y)
Odd(Y) <- Even(X), E(X,Y)
Both(X) <- Even(X), Odd(X)
K(X,k) <- R(n0,X), Both(X)
K(k,X) <- Loop(), Start(X)
Sym(X,Y) <- R(X,Y), R(Y,X)
Tri(X) <- E(X,Y), E(Y,Z), E(Z,X)";
/// Guards on an input relation that answer atoms imply (left out of the fixpoint's joins),
/// constants and repeated variables in heads and in recursive bodies, and a rule that
/// reads its head predicate twice with a constant.
const GUARDS: &str = "Q(X,Y) <- G(X), E(X,Y)
Q(X,Z) <- G(X), Q(X,Y), Q(Y,Z)
S(X,Z) <- G(X), Q(X,Y), E(Y,Z)
H(Y) <- G(X), Q(X,Y)
H(Y) <- H(X), S(X,Y), G(Y)
T(X,n0) <- Q(X,n0)
T(X,Y) <- T(X,n0), Q(n0,Y), G(Y)
P(X,X) <- H(X), T(X,Y)
P(Y,X) <- P(X,X), Q(X,Y), Q(Y,X)";

/// Rules that read their own head (alone, or with itself twice), constant-only heads,
/// zero-arity inputs and derived predicates in recursion, repeated head variables.
const ODD: &str = "R(X,Y) <- E(X,Y)
R(X,Y) <- R(X,Y), E(X,Y)
R(X,Z) <- R(X,Y), R(Y,Z), On()
R(X,Z) <- E(X,Y), R(Y,Z)
P(X) <- P(X)
P(X) <- R(X,X)
Flag(k) <- E(X,Y), P(Y)
Z() <- Z(), On()
Z() <- P(X), V(X)
W(X,X) <- Z(), V(X)
W(Y,X) <- W(X,Y), R(X,Y), W(Y,Y)
U(X) <- U(X), W(X,X)
U(X) <- V(X), Flag(k)
W(X,Y) <- U(X), E(X,Y), U(Y)";

/// The programs of the random sessions, with their input predicates (edges first).
const SESSION_PROGRAMS: [(&str, &[(&str, usize)]); 9] = [
    (RLIN, &[("E", 2)]),
    (LLIN, &[("E", 2)]),
    (NONLIN, &[("E", 2)]),
    (MAGIC_RLIN, &[("E", 2), ("Start", 1)]),
    (MAGIC_LLIN, &[("E", 2), ("Start", 1)]),
    (MAGIC_NONLIN, &[("E", 2), ("Start", 1)]),
    (STRATA, &[("E", 2), ("Start", 1)]),
    (GUARDS, &[("E", 2), ("G", 1)]),
    (ODD, &[("E", 2), ("On", 0), ("V", 1)]),
];

#[test]
fn ranked_long_sessions_on_small_graphs_agree_with_the_reference() {
    for (rules, inputs) in SESSION_PROGRAMS {
        for seed in 1..6u64 {
            random_session(rules, inputs, 6, 9, 14, seed * 7919, true);
        }
    }
}

#[test]
fn ranked_long_sessions_on_larger_random_graphs_agree_with_recomputation() {
    let mut compactions = 0;
    for (rules, inputs) in SESSION_PROGRAMS {
        compactions += random_session(rules, inputs, 30, 80, 12, 4242, false);
    }
    assert!(compactions > 0, "the sessions compact some relation");
}

/// A longer search than the tests above, for `cargo test --release -p exec ranked_soak --
/// --ignored` with `SOAK=<seeds>` (20 by default): small sessions against the reference
/// engine and middle-sized ones against semi-naive recomputation, every program.
#[test]
#[ignore]
fn ranked_soak() {
    let n: u64 = std::env::var("SOAK").map(|s| s.parse().unwrap()).unwrap_or(20);
    for (rules, inputs) in SESSION_PROGRAMS {
        for seed in 1..n {
            random_session(
                rules,
                inputs,
                5 + (seed as usize % 6),
                4 + (seed as usize % 13),
                16,
                seed * 104729 + 1,
                true,
            );
            random_session(
                rules,
                inputs,
                12 + (seed as usize % 20),
                20 + (seed as usize % 60),
                12,
                seed * 15485863 + 3,
                false,
            );
        }
    }
}

/// Compaction renumbers rows but keeps every surviving row's rank, keeps the rows of
/// lower rank a prefix, and rebuilds the locator over the new row numbers (stale entries
/// of killed rows and of tuples re-added later included).
#[test]
fn compaction_keeps_ranks_and_the_locator() {
    let p = program("R(X,Y) <- E(X,Y)\nZ() <- E(X,X)");
    let (e, z) = (pred(&p, "E"), pred(&p, "Z"));
    let mut db = Database::new(&p);
    for rel in &mut db.rows {
        rel.ensure_locator();
    }
    let mut expected: std::collections::BTreeMap<(PredId, Vec<u32>), Rank> = Default::default();
    let mut rank = 0;
    let mut compacted = [0; 2];
    for round in 0..40u32 {
        db.next_rank();
        rank += 1;
        for v in 0..5 {
            let t = vec![round % 7, v + round % 3];
            if db.insert(e, &t) {
                expected.insert((e, t), rank);
            }
        }
        if db.insert(z, &[]) {
            expected.insert((z, vec![]), rank);
        }
        // Kill most rows, the zero-arity one included, some of them re-added next round.
        for rel in &mut db.rows {
            rel.sync_locator();
        }
        let victims: Vec<(PredId, Vec<u32>)> =
            expected.keys().filter(|(_, t)| t.iter().sum::<u32>() % 3 != round % 2).cloned().collect();
        for (pred, t) in victims {
            let r = db.rel(pred).locate(|i| t[i]).expect("a live tuple is located");
            db.remove_rows(pred, &[r]);
            expected.remove(&(pred, t));
        }
        let ends = [db.rel(e).end(), db.rel(z).end()];
        db.compact();
        for (count, (pred, end)) in compacted.iter_mut().zip([e, z].into_iter().zip(ends)) {
            *count += usize::from(db.rel(pred).end() < end);
        }
        for rel in &mut db.rows {
            rel.sync_locator();
        }
        for ((pred, t), &want) in &expected {
            let r = db.rel(*pred).locate(|i| t[i]).expect("a surviving tuple is located");
            assert_eq!(db.rel(*pred).row(r), &t[..]);
            assert_eq!(db.rel(*pred).rank_of(r), want, "round {round}: rank of {t:?}");
        }
        for pred in [e, z] {
            let rel = db.rel(pred);
            assert_eq!(rel.len(), expected.keys().filter(|(q, _)| *q == pred).count());
            for k in 0..=rank + 1 {
                let end = rel.rank_end(k);
                assert!((0..rel.end()).all(|r| (r < end) == (rel.rank_of(r) < k)), "round {round}: rank_end({k})");
            }
        }
    }
    assert!(compacted.iter().all(|&c| c > 5), "both relations were compacted often: {compacted:?}");
}

/// The invariant checker of the ranked tests is not vacuous: a fact whose only derivation
/// reads a fact of the same rank, or one with no derivation, is reported.
#[test]
fn unsupported_facts_reports_facts_without_lower_ranked_support() {
    let mut p = program("R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), R(Y,Z)\nF(k) <-");
    let (ab, bc) = (fact(&mut p, "E", &["a", "b"]), fact(&mut p, "E", &["b", "c"]));
    let r = |t: &(PredId, Vec<u32>)| (pred(&p, "R"), t.1.clone());
    let mut db = Database::new(&p);
    db.insert(ab.0, &ab.1);
    db.insert(bc.0, &bc.1);
    db.insert(pred(&p, "F"), &plan::testing::values(&mut p.clone(), &["k"]));
    db.next_rank();
    db.insert(r(&ab).0, &r(&ab).1);
    let ac = vec![ab.1[0], bc.1[1]];
    // R(a,c) has the rank of R(a,b), and R(b,c) is missing: unsupported.
    db.insert(r(&ab).0, &ac);
    assert_eq!(unsupported_facts(&p, &db), ["R(a,c) (rank 1)"]);
    db.next_rank();
    db.insert(r(&bc).0, &r(&bc).1);
    assert_eq!(unsupported_facts(&p, &db), ["R(a,c) (rank 1)"], "R(b,c) comes later");
    let mut later = Database::new(&p);
    for (pred, t) in [ab.clone(), bc.clone(), r(&ab), r(&bc)] {
        later.insert(pred, &t);
        later.next_rank();
    }
    later.insert(r(&ab).0, &ac);
    assert!(unsupported_facts(&p, &later).is_empty());
}

/// A recomputed batch reads the old state's facts only for a report that holds them: one
/// that lists nothing and leaves out the net change (as `dlc`'s outputs mode asks) or
/// holds counts alone gives the tallies, net change sizes and new state of a report that
/// lists everything, with the rules monotone (the old derived relations are dropped before
/// the new ones are evaluated) or not (negation: what the states share is probed).
#[test]
fn recomputed_batches_count_as_they_list() {
    let edges: Vec<String> = (0..60).map(|i| format!("E(n{},n{}).", i % 23, (i * 7 + 3) % 23)).collect();
    let rules = [
        "R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), E(Y,Z)",
        "R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), E(Y,Z)\nSink(X) <- E(_,X), !E(X,_)\nEnds(X,Y) <- R(X,Y), Sink(Y)",
    ];
    for rules in rules {
        let mut p = with_facts(rules, &edges.join(" "));
        let new = |p: &Program| {
            let mut state =
                Maintained::with_maintenance(plan_program(p), p, Database::from_facts(p, &p.facts), Maintenance::Auto);
            state.set_auto_min_budget(0);
            state
        };
        let (mut listing, mut summarizing, mut counting) = (new(&p), new(&p), new(&p));
        let cut: Vec<_> =
            (0..12).map(|i| fact(&mut p, "E", &[&format!("n{}", i % 23), &format!("n{}", (i * 7 + 3) % 23)])).collect();
        let back = vec![fact(&mut p, "E", &["n3", "n9"]), fact(&mut p, "E", &["n22", "n0"])];
        let batches = [
            Update { inserts: vec![], deletes: cut.clone() },
            Update { inserts: cut.clone(), deletes: vec![] },
            Update { inserts: back, deletes: cut[6..].to_vec() },
        ];
        for (k, update) in batches.iter().enumerate() {
            let full = listing.apply(update);
            let summary = summarizing.try_apply_summarizing(update, 0).unwrap();
            let counts = counting.apply_counting(update);
            let what = format!("{rules:?}, batch {k}");
            if k != 1 {
                assert_eq!(full.strategy, MaintainedBy::Recompute, "{what}: {}", full.reason);
            }
            assert_eq!(summary.tallies, full.tallies, "{what}");
            assert!(summary.removed.is_empty() && summary.added.is_empty(), "{what}");
            for pred in p.pred_ids() {
                let size =
                    |lists: &ir::FactsByPred| lists.iter().find(|(q, _)| *q == pred).map_or(0, |(_, ts)| ts.len());
                assert_eq!(summary.net_count(pred), (size(&full.removed), size(&full.added)), "{what}");
            }
            let total = |phase: fn(&Tally) -> usize| full.tallies.iter().map(|(_, t)| phase(t)).sum::<usize>();
            assert_eq!(
                (counts.overdeleted, counts.inserted),
                (total(|t| t.overdeleted), total(|t| t.inserted)),
                "{what}"
            );
            assert!(summarizing.db().same_tuples(listing.db()) && counting.db().same_tuples(listing.db()), "{what}");
        }
        // What the batches leave, evaluated from scratch: the edges but those cut and
        // not put back, and the two more.
        let mut last: Vec<ir::Fact> =
            p.facts.iter().filter(|f| !cut[6..].contains(&(f.pred, f.values.clone()))).cloned().collect();
        last.extend(batches[2].inserts.iter().map(|(pred, values)| ir::Fact {
            pred: *pred,
            values: values.clone(),
            span: Default::default(),
        }));
        let options = EvalOptions::default();
        let fresh = evaluate(&plan_program(&p), &p, Database::from_facts(&p, &last), options);
        for pred in p.pred_ids() {
            assert_eq!(listing.db().sorted_tuples(pred), fresh.db.sorted_tuples(pred), "{rules:?}");
        }
    }
}

/// An input relation no rule tests a whole tuple of gives back its set before the
/// evaluation, which derives the same; the relation then answers a membership test from
/// its rows, and its first insertion or removal builds the set again.
#[test]
fn an_input_set_no_rule_probes_is_given_back_and_built_again() {
    let text = "R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), E(Y,Z)\nS(X) <- F(X), G(X)\nT(X) <- R(X,X)";
    let mut p = with_facts(text, "E(a,b). E(b,c). E(c,a). E(c,d). F(a). G(a). G(b).");
    let (e, f, g) = (pred(&p, "E"), pred(&p, "F"), pred(&p, "G"));
    let plan = plan_program(&p);
    let mut db = Database::from_facts(&p, &p.facts);
    db.release_unprobed_input_sets(&plan, &p);
    // `G(X)` is tested whole once `F(X)` binds `X`, and the other way round (the oracle's
    // cases cover negated atoms).
    let released: Vec<bool> = [e, f, g].iter().map(|p| db.sets[p.index()].is_released()).collect();
    assert_eq!(released, [true, false, false]);
    let eval = evaluate(&plan, &p, db, EvalOptions::default());
    assert!(eval.db.same_tuples(&run(&p, NativeEngine::Seminaive).db));
    assert_eq!(tuples(&p, &eval.db, "T"), ["(a)", "(b)", "(c)"]);
    let mut db = eval.db;
    assert!(db.sets[e.index()].is_released(), "the evaluation read the rows only");
    // Its view groups a copy of the rows: `a`, `b`, and `c` with two values.
    let groups = db.groups(e).unwrap();
    assert_eq!(groups.len(), 3);
    assert_eq!((0..3).map(|g| groups.group_len(g)).sum::<usize>(), 4);
    let (ab, ad) = (fact(&mut p, "E", &["a", "b"]).1, fact(&mut p, "E", &["a", "d"]).1);
    assert!(db.contains(e, &ab) && !db.contains(e, &ad));
    assert!(!db.insert(e, &ab), "a fact the rows hold is no new one");
    assert!(!db.sets[e.index()].is_released());
    assert!(db.insert(e, &ad) && db.len(e) == 5);
    db.release_unprobed_input_sets(&plan, &p);
    assert!(db.remove(e, &ab) && !db.contains(e, &ab) && db.len(e) == 4);
    assert!(!db.remove(e, &ab));
}

/// A derived relation no rule negates gives its set back once its stratum is evaluated,
/// and the evaluation derives the same; a later join that tests whole tuples of it builds
/// the set again first, and a membership test answers from the rows either way.
#[test]
fn a_derived_set_is_given_back_once_its_stratum_is_evaluated() {
    let text = "R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), E(Y,Z)\nN(X,Y) <- E(X,Y), !R(Y,X)\n\
                Q(X) <- R(X,Y)\nT(X) <- F(X), Q(X)\nL(X) <- F(X), R(X,X)";
    let mut p = with_facts(text, "E(a,b). E(b,c). E(c,a). E(c,d). F(a). F(d).");
    let (r, n, l) = (pred(&p, "R"), pred(&p, "N"), pred(&p, "L"));
    let plan = plan_program(&p);
    let mut db = Database::from_facts(&p, &p.facts);
    db.release_unprobed_sets_once_derived(&plan, &p);
    let eval = evaluate(&plan, &p, db, EvalOptions::default());
    assert!(eval.db.same_tuples(&run(&p, NativeEngine::Seminaive).db));
    assert_eq!(tuples(&p, &eval.db, "T"), ["(a)"]);
    assert_eq!(tuples(&p, &eval.db, "L"), ["(a)"]);
    let mut db = eval.db;
    assert!(!db.sets[r.index()].is_released(), "a negated relation keeps its set");
    assert!(db.sets[n.index()].is_released() && db.sets[l.index()].is_released());
    let (la, ld) = (fact(&mut p, "L", &["a"]).1, fact(&mut p, "L", &["d"]).1);
    assert!(db.contains(l, &la) && !db.contains(l, &ld));
    db.rebuild_released_set(l);
    assert!(!db.sets[l.index()].is_released());
    assert!(db.contains(l, &la) && !db.contains(l, &ld) && db.len(l) == 1);
}

/// A join is split only when the last time it ran it made many firings, and many per new
/// tuple: the merge stages every new tuple again on one thread. Its first run, with
/// nothing to go by, is not split, unless every join is to be ([`Threads::splitting_from`]).
#[test]
fn joins_split_only_where_firings_are_many_per_new_tuple() {
    let two = Threads::new(2);
    let many = crate::DEFAULT_MIN_SPLIT_FIRINGS;
    let delta = 10_000;
    let last = |firings: u64, new: u32| Some(crate::JoinYield::new(firings, delta, new));
    // A non-linear closure's join: hundreds of firings per new tuple.
    assert_eq!(two.for_join(last(100 * many, many as u32 / 50), delta).count(), 2);
    // Every firing a new tuple (a forest's closure), or five per new tuple (a random graph's
    // right-linear one): as many firings, but the merge would redo most of the work.
    assert_eq!(two.for_join(last(many, many as u32), delta).count(), 1);
    assert_eq!(two.for_join(last(5 * many, many as u32), delta).count(), 1);
    // Firings per new tuple at the bound split; too few firings expected do not.
    let at_bound = (crate::MIN_SPLIT_FIRINGS_PER_NEW as u64 * many, many as u32);
    assert_eq!(two.for_join(last(at_bound.0, at_bound.1), delta).count(), 2);
    assert_eq!(two.for_join(last(many, 0), delta / 2).count(), 1);
    // A join that found nothing new splits when it is expected to fire enough.
    assert_eq!(two.for_join(last(many, 0), delta).count(), 2);
    assert_eq!(two.for_join(None, delta).count(), 1);
    assert_eq!(two.splitting_from(4).for_join(None, delta).count(), 2);
    assert_eq!(Threads::ONE.for_join(last(100 * many, 1), delta).count(), 1);
}

/// An atom whose values nothing else reads (`B(_, _)`, or `B(X, _)` with `X` bound) is a
/// test that a row exists: the semi-naive engine stops at its first match, so a rule with
/// several such atoms costs one firing per binding of the others, not their cross
/// product; the reference engine still tries every row, as nested loops do.
#[test]
fn an_existential_atom_stops_at_its_first_match() {
    let rows: String = (0..200).map(|i| format!("B({i},{i}). C({i}). ")).collect();
    let p = with_facts("Q(X) <- A(X), B(_, _), C(Y), B(Y, _)", &format!("A(1). A(2). A(3). {rows}"));
    let fast = run(&p, NativeEngine::Seminaive);
    let slow = run(&p, NativeEngine::Reference);
    assert_eq!(tuples(&p, &fast.db, "Q"), tuples(&p, &slow.db, "Q"));
    assert_eq!(sorted_text(&p, &fast.db, "Q"), ["(1)", "(2)", "(3)"]);
    // One firing per `A` fact: `B(_, _)`, `C(Y)` and `B(Y, _)` each stop at a first match.
    assert_eq!(fast.work, 3);
    // The reference engine scans `C` and `B` once per match before them.
    assert!(slow.row_tests.unwrap() >= 3 * 200 * 200, "{:?}", slow.row_tests);
}

/// `name = range(from, to[, step])` over numbers, its operands variables or numbers.
fn generator(p: &mut Program, name: &str, operands: &[&str]) -> ir::Generator {
    let mut operand = |text: &str| {
        let kind = match text.parse::<i32>() {
            Ok(n) => ir::TermKind::Const(ir::Value::Number(n)),
            Err(_) => ir::TermKind::Var(p.symbols.intern(text)),
        };
        ir::Expr::leaf(ir::Term { kind, span: ir::Span::default() })
    };
    let (from, to) = (operand(operands[0]), operand(operands[1]));
    let step = operands.get(2).map(|s| operand(s));
    let var = p.symbols.intern(name);
    ir::Generator { var, from, to, step, domain: ir::ValueType::Number, span: ir::Span::default() }
}

/// Rules with generators: one whose bounds a relation gives (with and without a step),
/// two nested at one step, one at a membership test, one before every atom and one
/// with no atom at all; both engines, and the semi-naive one on four threads, agree.
#[test]
fn generators_bind_each_value_of_their_range_in_every_engine() {
    let rules = "G(X) <- B(A,Z)\nS(A,X) <- B(A,Z)\nN(X,Y) <- B(A,Z)\nM(X) <- B(A,Z), C(A)\nI(X,A) <- C(A)\nK(X) <-";
    let mut p = program(rules);
    for pred in &mut p.preds {
        pred.types = vec![ir::ValueType::Number; pred.arity];
    }
    let with = [
        (0, vec![generator(&mut p, "X", &["A", "Z"])]),
        (1, vec![generator(&mut p, "X", &["A", "Z", "2"])]),
        (2, vec![generator(&mut p, "X", &["A", "Z"]), generator(&mut p, "Y", &["0", "X"])]),
        (3, vec![generator(&mut p, "X", &["A", "0", "-3"])]),
        (4, vec![generator(&mut p, "X", &["0", "2"])]),
        (5, vec![generator(&mut p, "X", &["3", "0"])]),
    ];
    for (rule, generators) in with {
        p.rules[rule].generators = generators;
    }
    let number = |n: i32| n as u32;
    for (name, values) in [("B", [1, 4]), ("B", [10, 7])] {
        let pred = pred(&p, name);
        p.facts.push(ir::Fact { pred, values: values.map(number).to_vec(), span: ir::Span::default() });
    }
    p.facts.push(ir::Fact { pred: pred(&p, "C"), values: vec![10], span: ir::Span::default() });
    let db = both(&p);
    let text = |name: &str| {
        let mut rows: Vec<Vec<i32>> =
            db.sorted_tuples(pred(&p, name)).iter().map(|t| t.iter().map(|&v| v as i32).collect()).collect();
        rows.sort();
        rows
    };
    assert_eq!(text("G"), [[1], [2], [3], [8], [9], [10]]);
    // A positive step from 10 never reaches 7 upwards.
    assert_eq!(text("S"), [[1, 1], [1, 3]]);
    assert_eq!(text("N").len(), 1 + 2 + 3 + 8 + 9 + 10);
    assert_eq!(text("M"), [[1], [4], [7], [10]]);
    assert_eq!(text("I"), [[0, 10], [1, 10]]);
    assert_eq!(text("K"), [[1], [2], [3]]);
    let plan = plan_program(&p);
    let options = EvalOptions { threads: Threads::new(4), ..EvalOptions::default() };
    let threaded = evaluate(&plan, &p, Database::from_facts(&p, &p.facts), options);
    assert!(threaded.db.same_tuples(&db));
}
