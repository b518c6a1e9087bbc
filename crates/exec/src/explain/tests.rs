//! Tests of explanations: SPEC Example 1, a long chain, and random programs whose every
//! proof is checked, independently of the search, to be a derivation.

use super::*;
use crate::{evaluate, EvalOptions, Maintained, Maintenance, Update};
use ir::{Symbol, Term};
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
    let name = |n: &ProofNode| format!("{}{}", p.pred_name(n.pred), p.display_tuple(&n.tuple));
    proof
        .nodes
        .iter()
        .map(|n| match &n.step {
            Step::Rule { body, .. } => {
                format!("{} <- {}", name(n), body.iter().map(|&c| name(&proof.nodes[c])).collect::<Vec<_>>().join(", "))
            }
            Step::Input => format!("{} input", name(n)),
            Step::Given => format!("{} given", name(n)),
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
            Step::Rule { rule, body } => {
                let rule = p.rule(*rule);
                if rule.head.pred != node.pred || rule.body.len() != body.len() {
                    return Some(format!("node {i} is not headed by its rule"));
                }
                let mut env: HashMap<Symbol, u32> = HashMap::new();
                let mut fits = |args: &[Term], values: &[u32]| {
                    args.len() == values.len()
                        && args.iter().zip(values).all(|(t, &v)| match t.kind {
                            ir::TermKind::Const(c) => c.0 == v,
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

#[test]
fn a_proof_as_deep_as_a_long_chain_needs_no_deep_call_stack() {
    const N: usize = 100_000;
    let mut p = program("P(n0) <-\nP(Y) <- P(X), E(X,Y)");
    let e = p.lookup_source("E").unwrap();
    let names: Vec<String> = (0..=N).map(|i| format!("n{i}")).collect();
    let ids = plan::testing::values(&mut p, &names.iter().map(String::as_str).collect::<Vec<_>>());
    let mut db = Database::new(&p);
    let edges: Vec<u32> = ids.windows(2).flatten().copied().collect();
    db.insert_all(e, &edges);
    let db = evaluate(&plan_program(&p), &p, db, EvalOptions::default()).db;
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
