//! Tests of explanations: the reachability example of docs/semantics.md, a long chain,
//! and random programs whose every proof is checked, independently of the search, to be
//! a derivation.

use super::*;
use crate::relation::Rank;
use crate::{evaluate, EvalOptions, Maintained, Maintenance};
use ir::{Symbol, Term, Update};
use plan::plan_program;
use plan::testing::program;
use proptest::prelude::*;
use std::collections::{BTreeSet, HashMap};

const EXAMPLE_1: &str = "R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), R(Y,Z)
E(a,b).\nE(b,c).\nE(c,b).\nE(c,d).\nE(a,e).\nE(e,d).\nE(u,v).\nE(v,w).\nE(w,u).";
/// Example 1's magic program, `M` for `@m:R^bf` and `Q` for `@a:R^bf`.
const MAGIC_1: &str = "M(a) <-
Q(X,Y) <- M(X), E(X,Y)
M(Y) <- M(X), Q(X,Y)
Q(X,Z) <- M(X), Q(X,Y), Q(Y,Z)
E(a,b).\nE(b,c).\nE(c,b).\nE(c,d).\nE(a,e).\nE(e,d).\nE(u,v).\nE(v,w).\nE(w,u).";

fn evaluated(p: &Program) -> Database {
    evaluate(&plan_program(p), p, Database::from_facts(p, &p.facts), EvalOptions::default()).db
}

fn fact(p: &mut Program, pred: &str, values: &[&str]) -> (PredId, Vec<u32>) {
    (p.lookup_source(pred).unwrap(), plan::testing::values(p, values))
}

/// A proof as lines `fact <- children` in node order, for comparisons.
fn shown(p: &Program, proof: &Proof) -> Vec<String> {
    let name = |n: &ProofNode| format!("{}{}", p.pred_name(n.pred), p.display_tuple(n.pred, &n.tuple));
    proof
        .nodes
        .iter()
        .map(|n| match &n.step {
            Step::Rule { body, .. } => {
                format!("{} <- {}", name(n), body.iter().map(|&c| name(&proof.nodes[c])).collect::<Vec<_>>().join(", "))
            }
            Step::Input => format!("{} input", name(n)),
            Step::Given => format!("{} given", name(n)),
            Step::Aggregate { rows, shown, .. } => {
                let children: Vec<String> = shown.iter().map(|&c| name(&proof.nodes[c])).collect();
                format!("{} aggregate of {rows} row(s) <- {}", name(n), children.join(", "))
            }
        })
        .collect()
}

/// Checks, without the search's code, that `proof` proves `(pred, tuple)` in `db`: every
/// node a fact of `db`, every rule node an instance of its rule with its children as the
/// body, leaves input facts, no cycle, heights consistent. Returns the problem found.
fn invalid(p: &Program, db: &Database, pred: PredId, tuple: &[u32], proof: &Proof) -> Option<String> {
    let root = &proof.nodes[0];
    if root.pred != pred || root.tuple != tuple {
        return Some("the root is not the fact".into());
    }
    let derived: BTreeSet<PredId> = p.rules.iter().map(|r| r.head.pred).collect();
    for (i, node) in proof.nodes.iter().enumerate() {
        if !db.contains(node.pred, &node.tuple) {
            return Some(format!("node {i} is not a fact of the database"));
        }
        match &node.step {
            Step::Input if derived.contains(&node.pred) => return Some(format!("node {i} is derived, not input")),
            Step::Input => {
                if node.height != 0 {
                    return Some(format!("input node {i} has height {}", node.height));
                }
            }
            Step::Given => return Some(format!("node {i} has no derivation")),
            Step::Aggregate { rule, rows, shown } => {
                let rule = p.rule(*rule);
                let (Some(aggregation), [atom]) = (&rule.aggregate, rule.body.as_slice()) else {
                    return Some(format!("node {i} is not a fact of a reduction"));
                };
                if rule.head.pred != node.pred {
                    return Some(format!("node {i} is not a fact of its reduction"));
                }
                let key = &node.tuple[..aggregation.keys];
                let group = db.tuples(atom.pred).filter(|row| &row[..aggregation.keys] == key).count();
                if group != *rows || shown.len() > crate::explain::AGGREGATE_ROWS_SHOWN.min(group) {
                    return Some(format!("node {i} counts {rows} row(s) and shows {}, of {group}", shown.len()));
                }
                for &c in shown {
                    let row = &proof.nodes[c];
                    if row.pred != atom.pred || &row.tuple[..aggregation.keys] != key {
                        return Some(format!("node {i} shows node {c}, no row of its group"));
                    }
                }
                let height = 1 + shown.iter().map(|&c| proof.nodes[c].height).max().unwrap_or(0);
                if node.height != height {
                    return Some(format!("aggregate node {i} has height {}, not {height}", node.height));
                }
            }
            Step::Rule { rule, body, .. } => {
                let rule = p.rule(*rule);
                if rule.head.pred != node.pred || rule.body.len() != body.len() {
                    return Some(format!("node {i} is not headed by its rule"));
                }
                let mut env: HashMap<Symbol, u32> = HashMap::new();
                let mut fits = |args: &[Term], values: &[u32]| {
                    args.len() == values.len()
                        && args.iter().zip(values).all(|(t, &v)| match t.kind {
                            ir::TermKind::Const(c) => c.raw() == v,
                            ir::TermKind::Var(x) => *env.entry(x).or_insert(v) == v,
                        })
                };
                if !fits(&rule.head.args, &node.tuple) {
                    return Some(format!("node {i} does not fit its rule's head"));
                }
                for (atom, &c) in rule.body.iter().zip(body) {
                    let child = &proof.nodes[c];
                    if child.pred != atom.pred || !fits(&atom.args, &child.tuple) {
                        return Some(format!("child {c} of node {i} does not fit its body atom"));
                    }
                    if child.height >= node.height {
                        return Some(format!("child {c} of node {i} is not lower (a cycle?)"));
                    }
                }
                if node.height != 1 + body.iter().map(|&c| proof.nodes[c].height).max().unwrap_or(0) {
                    return Some(format!("node {i} has the wrong height"));
                }
            }
        }
    }
    None
}

#[test]
fn example_1_proof_of_r_a_d_is_the_shallow_one_through_e() {
    let mut p = program(EXAMPLE_1);
    let db = evaluated(&p);
    let (r, ad) = fact(&mut p, "R", &["a", "d"]);
    let mut ex = Explainer::new(&p, &db);
    let proof = ex.prove(r, &ad).expect("R(a,d) holds");
    assert_eq!(invalid(&p, &db, r, &ad, &proof), None);
    assert_eq!(proof.height(), 2);
    assert_eq!(
        shown(&p, &proof),
        ["R(a,d) <- R(a,e), R(e,d)", "R(a,e) <- E(a,e)", "R(e,d) <- E(e,d)", "E(a,e) input", "E(e,d) input"]
    );
    let (e, ab) = fact(&mut p, "E", &["a", "b"]);
    assert_eq!(shown(&p, &ex.prove(e, &ab).unwrap()), ["E(a,b) input"]);
    let (_, au) = fact(&mut p, "R", &["a", "u"]);
    assert_eq!(ex.prove(r, &au), None, "R(a,u) does not hold");
}

#[test]
fn example_1_magic_proof_shows_the_demands_that_enabled_each_step() {
    let mut p = program(MAGIC_1);
    let db = evaluated(&p);
    let (q, ad) = fact(&mut p, "Q", &["a", "d"]);
    let proof = Explainer::new(&p, &db).prove(q, &ad).expect("Q(a,d) holds");
    assert_eq!(invalid(&p, &db, q, &ad, &proof), None);
    let lines = shown(&p, &proof);
    assert_eq!(lines[0], "Q(a,d) <- M(a), Q(a,e), Q(e,d)");
    assert!(lines.contains(&"M(e) <- M(a), Q(a,e)".to_string()), "{lines:#?}");
    assert!(lines.contains(&"M(a) <- ".to_string()), "the seed: {lines:#?}");
}

#[test]
fn an_aggregate_fact_shows_its_reduction_and_the_rows_of_its_group() {
    let src = "E(1, 2). E(1, 3). N(1). N(2).\nC(X, K) <- N(X), K = count : E(X, _)\n?- C(X, K).\n";
    let (p, diagnostics) = syntax::parse_program(src, ir::FileId(0));
    let p = p.unwrap_or_else(|| panic!("{diagnostics:#?}"));
    let db = evaluated(&p);
    let c = p.lookup_source("C").unwrap();
    let mut ex = Explainer::new(&p, &db);
    let expected = [
        ([1, 2], "C_agg(1,2) aggregate of 2 row(s) <- C_agg_rows(1,2), C_agg_rows(1,3)"),
        ([2, 0], "C_agg_keys(2) <- N(2)"),
    ];
    for (tuple, expected) in expected {
        let proof = ex.prove(c, &tuple).expect("C holds");
        assert_eq!(invalid(&p, &db, c, &tuple, &proof), None);
        let lines = shown(&p, &proof);
        assert!(lines.iter().any(|l| l == expected), "{lines:#?}");
    }
}

#[test]
fn an_aggregate_fact_shows_at_most_eight_rows_and_counts_them_all() {
    let edges: String = (0..12).map(|y| format!("E(1, {y}). ")).collect();
    let src = format!("{edges}N(1).\nC(X, K) <- N(X), K = count : E(X, _)\n?- C(X, K).\n");
    let (p, diagnostics) = syntax::parse_program(&src, ir::FileId(0));
    let p = p.unwrap_or_else(|| panic!("{diagnostics:#?}"));
    let db = evaluated(&p);
    let c = p.lookup_source("C").unwrap();
    let proof = Explainer::new(&p, &db).prove(c, &[1, 12]).expect("C(1,12) holds");
    assert_eq!(invalid(&p, &db, c, &[1, 12], &proof), None);
    let aggregate = proof.nodes.iter().find_map(|n| match &n.step {
        Step::Aggregate { rows, shown, .. } => Some((*rows, shown.len())),
        _ => None,
    });
    assert_eq!(aggregate, Some((12, crate::explain::AGGREGATE_ROWS_SHOWN)));
}

#[test]
fn why_not_names_an_aggregate_group_without_rows_or_with_another_value() {
    let src = "E(1, 2). E(1, 3). N(1). N(2).\nC(X, K) <- N(X), K = count : E(X, _)\n\
               M(X, K) <- N(X), K = min Y : E(X, Y)\n?- C(X, K).\n";
    let (p, diagnostics) = syntax::parse_program(src, ir::FileId(0));
    let p = p.unwrap_or_else(|| panic!("{diagnostics:#?}"));
    let db = evaluated(&p);
    let (c, m) = (p.lookup_source("C").unwrap(), p.lookup_source("M").unwrap());
    let mut ex = Explainer::new(&p, &db);
    let outcome =
        |ex: &mut Explainer<'_>, pred: PredId, tuple: &[u32]| ex.why_not(pred, tuple).rules[0].outcome.clone();
    // Node 2 has no edges: its count is 0 (no rows), so C(2,5) is rejected by `K = 0`.
    let Attempt::Aggregate { group, rows: 0, value: None, excluded: Some(_), .. } = outcome(&mut ex, c, &[2, 5]) else {
        panic!("{:?}", outcome(&mut ex, c, &[2, 5]))
    };
    assert_eq!(group, [2]);
    // Node 1 has two: its count is 2, not 7.
    let Attempt::Aggregate { group, rows: 2, value: Some(2), .. } = outcome(&mut ex, c, &[1, 7]) else {
        panic!("{:?}", outcome(&mut ex, c, &[1, 7]))
    };
    assert_eq!(group, [1]);
    // A min over no rows has no value: the atom reading it finds nothing.
    let Attempt::Aggregate { group, rows: 0, value: None, .. } = outcome(&mut ex, m, &[2, 1]) else {
        panic!("{:?}", outcome(&mut ex, m, &[2, 1]))
    };
    assert_eq!(group, [2]);
}

#[test]
fn why_not_names_the_first_atom_without_a_match() {
    let mut p = program(EXAMPLE_1);
    let db = evaluated(&p);
    let (r, au) = fact(&mut p, "R", &["a", "u"]);
    let why = Explainer::new(&p, &db).why_not(r, &au);
    assert!(!why.present);
    assert_eq!(why.rules.len(), 2);
    assert!(matches!(&why.rules[0].outcome, Attempt::Failed { atom: 0, partial: 1, .. }), "{why:?}");
    let Attempt::Failed { atom: 1, examples, partial: 4 } = &why.rules[1].outcome else { panic!("{why:?}") };
    // X = a, Y one of b, c, d, e: R(Y,u) holds for none.
    let y = p.symbols.get("Y").unwrap();
    assert!(examples.iter().all(|e| e.iter().any(|&(v, _)| v == y)));

    let mut m = program(MAGIC_1);
    let db = evaluated(&m);
    let (q, ua) = fact(&mut m, "Q", &["u", "v"]);
    let why = Explainer::new(&m, &db).why_not(q, &ua);
    // No demand M(u) was ever raised: both rules stop at their guard.
    assert!(why.rules.iter().all(|a| matches!(a.outcome, Attempt::Failed { atom: 0, .. })), "{why:?}");
    let (mp, ab) = fact(&mut m, "M", &["b"]);
    let why = Explainer::new(&m, &db).why_not(mp, &ab);
    assert!(why.present);
    assert!(why.rules.iter().any(|a| a.outcome == Attempt::Matched));
    assert!(why.rules.iter().any(|a| a.outcome == Attempt::HeadMismatch), "M(a) <- does not fit M(b)");
}

/// `source` evaluated over the chain `E = n0 -> n1 -> ... -> n{n}`, with the ids of the
/// nodes in order.
fn evaluated_on_a_chain(source: &str, n: usize) -> (ir::Program, Vec<u32>, Database) {
    let mut p = program(source);
    let e = p.lookup_source("E").unwrap();
    let names: Vec<String> = (0..=n).map(|i| format!("n{i}")).collect();
    let ids = plan::testing::values(&mut p, &names.iter().map(String::as_str).collect::<Vec<_>>());
    let mut db = Database::new(&p);
    db.insert_all(e, &ids.windows(2).flatten().copied().collect::<Vec<u32>>());
    let db = evaluate(&plan_program(&p), &p, db, EvalOptions::default()).db;
    (p, ids, db)
}

#[test]
fn a_proof_along_a_magic_chain_reads_each_fact_a_few_times() {
    // Every answer shares its first column: an index on it would hand out the whole
    // relation for every step, N² rows for a proof of N steps.
    const N: usize = 5_000;
    let (p, ids, db) = evaluated_on_a_chain("M(n0) <-\nQ(X,Y) <- M(X), E(X,Y)\nQ(X,Z) <- M(X), Q(X,Y), E(Y,Z)", N);
    let q = p.lookup_source("Q").unwrap();
    let mut ex = Explainer::new(&p, &db);
    let proof = ex.prove(q, &[ids[0], ids[N]]).expect("the end of the chain is an answer");
    assert_eq!(proof.height(), N + 1);
    assert!(ex.rows_tried() < 100 * N as u64, "{} rows tried for {N} steps", ex.rows_tried());
}

#[test]
fn a_derived_fact_given_with_the_input_is_shown_as_given() {
    let mut p = program("R(X,Y) <- E(X,Y)\nE(a,b).");
    let (r, ab) = fact(&mut p, "R", &["a", "b"]);
    let (_, cd) = fact(&mut p, "R", &["c", "d"]);
    let mut db = Database::from_facts(&p, &p.facts);
    db.insert(r, &cd);
    let db = evaluate(&plan_program(&p), &p, db, EvalOptions::default()).db;
    let mut ex = Explainer::new(&p, &db);
    assert_eq!(shown(&p, &ex.prove(r, &cd).unwrap()), ["R(c,d) given"]);
    assert_eq!(shown(&p, &ex.prove(r, &ab).unwrap()), ["R(a,b) <- E(a,b)", "E(a,b) input"]);
}

#[test]
fn a_proof_as_deep_as_a_long_chain_needs_no_deep_call_stack() {
    const N: usize = 100_000;
    let (p, ids, db) = evaluated_on_a_chain("P(n0) <-\nP(Y) <- P(X), E(X,Y)", N);
    let pp = p.lookup_source("P").unwrap();
    let proof = Explainer::new(&p, &db).prove(pp, &[ids[N]]).expect("the end of the chain is reached");
    assert_eq!(proof.height(), N + 1);
    assert_eq!(proof.nodes.len(), 2 * N + 1);
    assert_eq!(invalid(&p, &db, pp, &[ids[N]], &proof), None);
}

/// Random programs over a few predicates (as in the engine tests, smaller).
mod random {
    use super::*;
    use proptest::collection::vec;

    const NAMES: [&str; 6] = ["A", "B", "P", "Q", "S", "Z"];
    const ARITIES: [usize; 6] = [2, 1, 2, 1, 2, 0];
    const INPUTS: usize = 2;
    const VARS: [&str; 3] = ["X", "Y", "W"];
    const DOMAIN: [&str; 4] = ["c0", "c1", "c2", "c3"];
    const CORES: [&str; 4] = [
        "P(X,Y) <- A(X,Y)",
        "P(X,Z) <- P(X,Y), P(Y,Z)",
        "Q(Y) <- Q(X), A(X,Y)\nQ(X) <- B(X)",
        "S(X,Y) <- P(X,Y), Q(Y)\nZ() <- S(X,X)",
    ];

    fn term(code: u8) -> &'static str {
        match code {
            0..3 => VARS[code as usize],
            _ => DOMAIN[(code as usize - 3) % DOMAIN.len()],
        }
    }

    type Atom = (usize, Vec<u8>);

    /// A safe rule: head variables the body does not bind become constants.
    fn rule_text(head: usize, head_codes: &[u8], body: &[Atom]) -> String {
        let atom = |p: usize, codes: &[u8]| {
            let args: Vec<&str> = codes[..ARITIES[p]].iter().map(|&c| term(c)).collect();
            (format!("{}({})", NAMES[p], args.join(",")), args)
        };
        let body: Vec<(String, Vec<&str>)> = body.iter().map(|(p, c)| atom(*p, c)).collect();
        let bound: Vec<&str> = body.iter().flat_map(|(_, a)| a.iter().copied()).collect();
        let head_pred = INPUTS + head;
        let args: Vec<&str> = head_codes[..ARITIES[head_pred]]
            .iter()
            .map(|&c| match term(c) {
                t if !t.starts_with(char::is_uppercase) || bound.contains(&t) => t,
                _ => DOMAIN[0],
            })
            .collect();
        let body: Vec<String> = body.into_iter().map(|(t, _)| t).collect();
        format!("{}({}) <- {}", NAMES[head_pred], args.join(","), body.join(", "))
    }

    type Rules = (Vec<bool>, Vec<(usize, Vec<u8>, Vec<Atom>)>);

    fn rules() -> impl Strategy<Value = Rules> {
        let atom = (0usize..NAMES.len(), vec(0u8..6, 2));
        let body = prop_oneof![1 => vec(atom.clone(), 0..=0), 6 => vec(atom, 1..=3)];
        (vec(any::<bool>(), CORES.len()), vec((0usize..NAMES.len() - INPUTS, vec(0u8..6, 2), body), 0..5))
    }

    fn build((cores, rules): &Rules) -> Program {
        let mut text: Vec<String> = rules.iter().map(|(h, c, b)| rule_text(*h, c, b)).collect();
        text.extend(CORES.iter().zip(cores).filter(|(_, &on)| on).map(|(t, _)| t.to_string()));
        let mentions: Vec<String> =
            (0..NAMES.len()).map(|p| format!("{}({})", NAMES[p], vec!["X"; ARITIES[p]].join(","))).collect();
        let mut p = program(&format!("Unused() <- {}\n{}", mentions.join(", "), text.join("\n")));
        plan::testing::values(&mut p, &DOMAIN);
        p
    }

    fn input() -> impl Strategy<Value = (usize, Vec<usize>)> {
        (0usize..INPUTS, vec(0usize..DOMAIN.len(), 2)).prop_map(|(p, v)| (p, v[..ARITIES[p]].to_vec()))
    }

    fn tuple_of(p: &Program, (pred, values): &(usize, Vec<usize>)) -> (PredId, Vec<u32>) {
        (p.lookup_source(NAMES[*pred]).unwrap(), values.iter().map(|&v| p.consts.get(DOMAIN[v]).unwrap().0).collect())
    }

    /// Proves every fact of `db` and checks each proof; explains a few absent ones.
    fn check_all(p: &Program, db: &Database, label: &str) -> Result<(), TestCaseError> {
        let mut ex = Explainer::new(p, db);
        for pred in p.pred_ids() {
            for tuple in db.sorted_tuples(pred) {
                let proof = ex.prove(pred, &tuple);
                prop_assert!(proof.is_some(), "{label}: no proof of a fact");
                let proof = proof.unwrap();
                prop_assert_eq!(invalid(p, db, pred, &tuple, &proof), None, "{}: {:?}", label, shown(p, &proof));
            }
            // Absent facts: no proof, and no rule matches them all the way.
            let arity = db.arity(pred);
            let c = |i: usize| p.consts.get(DOMAIN[i]).unwrap().0;
            for combo in 0..DOMAIN.len().pow(arity as u32) {
                let tuple: Vec<u32> =
                    (0..arity).map(|k| c(combo / DOMAIN.len().pow(k as u32) % DOMAIN.len())).collect();
                if db.contains(pred, &tuple) {
                    continue;
                }
                prop_assert_eq!(ex.prove(pred, &tuple), None);
                let why = ex.why_not(pred, &tuple);
                prop_assert!(!why.present);
                prop_assert!(why.rules.iter().all(|a| a.outcome != Attempt::Matched), "{label}: {why:?}");
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Every fact of an evaluation, and of the states both maintenance strategies
        /// leave after each batch of updates, has a proof that checks; absent facts
        /// have none.
        #[test]
        fn every_fact_has_a_valid_proof_before_and_after_updates(
            rules in rules(),
            facts in vec(input(), 0..16),
            batches in vec((vec(input(), 0..4), vec(input(), 0..4)), 1..5),
        ) {
            let p = build(&rules);
            let mut db = Database::new(&p);
            let current: BTreeSet<_> = facts.iter().map(|f| tuple_of(&p, f)).collect();
            for (pred, tuple) in &current {
                db.insert(*pred, tuple);
            }
            let eval = evaluate(&plan_program(&p), &p, db.clone(), EvalOptions::default());
            check_all(&p, &eval.db, "evaluation")?;
            // The reference engine gives a fact the rank of the round that first derives
            // it, so the proof of smallest height descends in rank: its height is exactly
            // that round, the fact's height over all proofs.
            let options = EvalOptions { engine: crate::NativeEngine::Reference, record_rounds: true, ..EvalOptions::default() };
            let reference = evaluate(&plan_program(&p), &p, db.clone(), options);
            let mut ex = Explainer::new(&p, &reference.db);
            for round in &reference.rounds {
                for (pred, tuples) in &round.new {
                    for tuple in tuples {
                        let proof = ex.prove(*pred, tuple).expect("a derived fact has a proof");
                        prop_assert_eq!(proof.height(), round.round, "{}", shown(&p, &proof).join("; "));
                    }
                }
            }
            for maintenance in [Maintenance::Dred, Maintenance::Ranked] {
                let mut state = Maintained::with_maintenance(plan_program(&p), &p, db.clone(), maintenance);
                let mut present: Vec<_> = current.iter().cloned().collect();
                for (k, (inserts, deletes)) in batches.iter().enumerate() {
                    let mut update = Update {
                        inserts: inserts.iter().map(|f| tuple_of(&p, f)).collect(),
                        deletes: deletes.iter().map(|f| tuple_of(&p, f)).collect(),
                    };
                    // Mostly deletions of present facts.
                    update.deletes.extend(present.iter().skip(k).step_by(2).take(3).cloned());
                    state.apply(&update);
                    present = p.pred_ids().take(INPUTS + 1).flat_map(|id| {
                        state.db().sorted_tuples(id).into_iter().map(move |t| (id, t))
                    }).collect();
                    check_all(&p, state.db(), &format!("{maintenance:?} after batch {k}"))?;
                }
            }
        }
    }
}

/// The smallest height of a proof of each fact of `db` whose every step reads facts of
/// lower rank, by brute force: facts in increasing rank, each rule instance found by
/// trying every fact for every body atom.
fn smallest_heights(p: &Program, db: &Database) -> HashMap<(PredId, Vec<u32>), usize> {
    let mut facts: Vec<(Rank, PredId, Vec<u32>)> = Vec::new();
    for pred in p.pred_ids() {
        let rows = db.rel(pred);
        for r in (0..rows.end()).filter(|&r| rows.is_alive(r)) {
            facts.push((rows.rank_of(r), pred, rows.row(r).to_vec()));
        }
    }
    facts.sort();
    let derived: BTreeSet<PredId> = p.rules.iter().map(|r| r.head.pred).collect();
    let mut height: HashMap<(PredId, Vec<u32>), usize> = HashMap::new();
    // Whether `args` match `tuple` under `env`, extending `env` with the variables they bind.
    fn matches(args: &[ir::Term], tuple: &[u32], env: &mut Vec<(Symbol, u32)>) -> bool {
        args.iter().zip(tuple).all(|(t, &v)| match t.kind {
            ir::TermKind::Const(c) => c.raw() == v,
            ir::TermKind::Var(x) => match env.iter().find(|(y, _)| *y == x) {
                Some(&(_, w)) => w == v,
                None => {
                    env.push((x, v));
                    true
                }
            },
        })
    }
    // Every substitution of `body` over facts ranked below `rank`: the tallest body fact.
    fn best(
        body: &[ir::Atom],
        env: &mut Vec<(Symbol, u32)>,
        below: &[(Rank, PredId, Vec<u32>)],
        height: &HashMap<(PredId, Vec<u32>), usize>,
        tallest: usize,
        out: &mut Option<usize>,
    ) {
        let Some((atom, rest)) = body.split_first() else {
            *out = Some(out.map_or(tallest, |h| h.min(tallest)));
            return;
        };
        for (_, pred, tuple) in below.iter().filter(|(_, q, _)| *q == atom.pred) {
            let mark = env.len();
            let fits = matches(&atom.args, tuple, env);
            if fits {
                let h = height[&(*pred, tuple.clone())];
                best(rest, env, below, height, tallest.max(h), out);
            }
            env.truncate(mark);
        }
    }
    for i in 0..facts.len() {
        let (rank, pred, tuple) = facts[i].clone();
        if !derived.contains(&pred) {
            height.insert((pred, tuple), 0);
            continue;
        }
        let below = &facts[..facts.partition_point(|f| f.0 < rank)];
        let mut found: Option<usize> = None;
        for rule in p.rules.iter().filter(|r| r.head.pred == pred) {
            let mut env: Vec<(Symbol, u32)> = Vec::new();
            let head_fits = matches(&rule.head.args, &tuple, &mut env);
            if head_fits {
                let mut out = None;
                best(&rule.body, &mut env, below, &height, 0, &mut out);
                found = match (found, out) {
                    (Some(a), Some(b)) => Some(a.min(b + 1)),
                    (a, b) => a.or(b.map(|b| b + 1)),
                };
            }
        }
        height.insert((pred, tuple), found.expect("every derived fact has a derivation from lower ranks"));
    }
    height
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// On random graphs, where proofs are tall and facts have many derivations, the proof
    /// found has the smallest height among those descending in rank (found by brute
    /// force); with the reference engine, whose ranks follow its rounds, that is the
    /// round that first derives the fact, the smallest height of any proof.
    #[test]
    fn proofs_have_the_smallest_height_on_random_graphs(
        rules in 0usize..3,
        edges in proptest::collection::vec((0u32..16, 0u32..16), 1..32),
        changes in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let recursive = ["R(X,Z) <- R(X,Y), E(Y,Z)", "R(X,Z) <- E(X,Y), R(Y,Z)", "R(X,Z) <- R(X,Y), R(Y,Z)"][rules];
        // S, a later stratum, has derivations through R facts of every height: which one
        // the search picks matters.
        let mut p = program(&format!("R(X,Y) <- E(X,Y)\n{recursive}\nS(X,Z) <- R(X,Y), R(Y,Z)"));
        let names: Vec<String> = (0..16).map(|i| format!("n{i}")).collect();
        let ids = plan::testing::values(&mut p, &names.iter().map(String::as_str).collect::<Vec<_>>());
        let e = p.lookup_source("E").unwrap();
        let mut db = Database::new(&p);
        for &(a, b) in &edges {
            db.insert(e, &[ids[a as usize], ids[b as usize]]);
        }
        // Present edges, deleted two at a time and put back in the next batch.
        let deletes: Vec<(u32, u32)> = changes.iter().map(|i| edges[i.index(edges.len())]).collect();
        let eval = evaluate(&plan_program(&p), &p, db.clone(), EvalOptions::default());
        let mut states = vec![eval.db];
        // After deletions and insertions, ranks no longer follow heights at all.
        for maintenance in [Maintenance::Dred, Maintenance::Ranked] {
            let mut state = Maintained::with_maintenance(plan_program(&p), &p, db.clone(), maintenance);
            for (k, batch) in deletes.chunks(2).flat_map(|b| [b, b]).enumerate() {
                let edge = |&(a, b): &(u32, u32)| (e, vec![ids[a as usize], ids[b as usize]]);
                let update = if k % 2 == 0 {
                    Update { deletes: batch.iter().map(edge).collect(), inserts: Vec::new() }
                } else {
                    Update { inserts: batch.iter().map(edge).collect(), deletes: Vec::new() }
                };
                state.apply(&update);
            }
            states.push(state.db().clone());
        }
        for state in &states {
            let heights = smallest_heights(&p, state);
            let mut ex = Explainer::new(&p, state);
            for ((pred, tuple), &height) in &heights {
                let proof = ex.prove(*pred, tuple).expect("a fact has a proof");
                prop_assert_eq!(invalid(&p, state, *pred, tuple, &proof), None);
                prop_assert_eq!(proof.height(), height, "{}", shown(&p, &proof).join("; "));
            }
        }

        let options = EvalOptions { engine: crate::NativeEngine::Reference, record_rounds: true, ..EvalOptions::default() };
        let eval = evaluate(&plan_program(&p), &p, db, options);
        let mut ex = Explainer::new(&p, &eval.db);
        for round in &eval.rounds {
            for (pred, tuples) in &round.new {
                for tuple in tuples {
                    let proof = ex.prove(*pred, tuple).expect("a derived fact has a proof");
                    prop_assert_eq!(proof.height(), round.round, "{}", shown(&p, &proof).join("; "));
                }
            }
        }
    }
}
