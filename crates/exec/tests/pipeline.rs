//! End-to-end checks of the worked examples of docs/semantics.md (Magic sets, Incremental
//! maintenance) through the real parser and magic rewrite: the plan text, the reference
//! engine's rounds and `row_tests`, and DRed on the generated names.

use exec::{evaluate, Database, EvalOptions, Maintained, NativeEngine};
use ir::{FileId, PredId, Program, Update};

const EXAMPLE_1: &str = "R(X,Y) <- E(X,Y)
R(X,Z) <- R(X,Y), R(Y,Z)
E(a,b). E(b,c). E(c,b). E(c,d). E(a,e). E(e,d). E(u,v). E(v,w). E(w,u).
?- R(a,Y).";

fn parse(src: &str) -> Program {
    let (program, diagnostics) = syntax::parse_program(src, FileId(0));
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    program.expect("the program parses")
}

fn magic_program(src: &str) -> Program {
    let source = parse(src);
    let query = source.query.clone().expect("the program has a query");
    magic::rewrite(&source, &query).program
}

fn facts_text(p: &Program, facts: &[(PredId, Vec<Vec<u32>>)]) -> String {
    let mut out: Vec<String> = facts
        .iter()
        .flat_map(|(pred, tuples)| {
            tuples.iter().map(move |t| format!("{}{}", p.pred_name(*pred), p.display_tuple(*pred, t)))
        })
        .collect();
    out.sort();
    out.join(" ")
}

#[test]
fn plan_text_shows_demand_rules_as_joins() {
    let p = magic_program(EXAMPLE_1);
    let text = plan::plan_program(&p).display(&p).to_string();
    let expected = "\
2 (demand r1 #1): @m:R^bf(Y) <- @m:R^bf(X), @a:R^bf(X,Y)
  1. scan @m:R^bf(X)
  2. join on [X] with scan @a:R^bf(X,Y)
  3. project [Y] -> @m:R^bf
";
    assert!(text.contains(expected), "{text}");
}

#[test]
fn example_1_magic_rounds_row_tests_and_sizes() {
    let p = magic_program(EXAMPLE_1);
    let plan = plan::plan_program(&p);
    let options = EvalOptions { engine: NativeEngine::Reference, record_rounds: true, ..EvalOptions::default() };
    let eval = evaluate(&plan, &p, Database::from_facts(&p, &p.facts), options);
    assert_eq!(eval.row_tests, Some(811));
    let rounds: Vec<String> = eval.rounds.iter().map(|r| facts_text(&p, &r.new)).collect();
    assert_eq!(
        rounds,
        [
            "@m:R^bf(a)",
            "@a:R^bf(a,b) @a:R^bf(a,e)",
            "@m:R^bf(b) @m:R^bf(e)",
            "@a:R^bf(b,c) @a:R^bf(e,d)",
            "@a:R^bf(a,c) @a:R^bf(a,d) @m:R^bf(c) @m:R^bf(d)",
            "@a:R^bf(c,b) @a:R^bf(c,d)",
            "@a:R^bf(b,b) @a:R^bf(b,d) @a:R^bf(c,c)",
            "",
        ]
    );
    let fast = evaluate(&plan, &p, Database::from_facts(&p, &p.facts), EvalOptions::default());
    assert!(fast.db.same_tuples(&eval.db));

    let source = parse(EXAMPLE_1);
    let plan = plan::plan_program(&source);
    let options = EvalOptions { engine: NativeEngine::Reference, ..EvalOptions::default() };
    let original = evaluate(&plan, &source, Database::from_facts(&source, &source.facts), options);
    assert_eq!(original.row_tests, Some(852));
    assert_eq!(original.db.len(source.lookup_source("R").unwrap()), 20);
}

#[test]
fn example_1_dred_delete_edge() {
    let p = magic_program(EXAMPLE_1);
    let mut maintained = Maintained::new(plan::plan_program(&p), &p, Database::from_facts(&p, &p.facts));
    let e = p.lookup_source("E").unwrap();
    let (a, b) = (p.consts.get("a").unwrap().0, p.consts.get("b").unwrap().0);
    let report = maintained.apply(&Update { inserts: vec![], deletes: vec![(e, vec![a, b])] });
    let waves: Vec<String> = report
        .overdeleted_waves
        .iter()
        .map(|w| facts_text(&p, &w.iter().map(|(pred, t)| (*pred, vec![t.clone()])).collect::<Vec<_>>()))
        .collect();
    assert_eq!(
        waves,
        [
            "@a:R^bf(a,b)",
            "@a:R^bf(a,c) @a:R^bf(a,d) @m:R^bf(b)",
            "@a:R^bf(b,b) @a:R^bf(b,c) @a:R^bf(b,d) @m:R^bf(c) @m:R^bf(d)",
            "@a:R^bf(c,b) @a:R^bf(c,c) @a:R^bf(c,d)",
        ]
    );
    assert_eq!(facts_text(&p, &report.rederived), "@a:R^bf(a,d) @m:R^bf(d)");
    let answer = p.query.as_ref().unwrap().atom.pred;
    let answers: Vec<String> =
        maintained.db().sorted_tuples(answer).iter().map(|t| p.display_tuple(answer, t).to_string()).collect();
    assert_eq!(answers, ["(a,d)", "(a,e)", "(e,d)"]);
}
