//! Incremental maintenance across negation, batch by batch: every strategy reaches a
//! fresh evaluation of the new input without recomputing, and the report's net change
//! is what the negations make of the batch.

use diag::FileId;
use exec::{evaluate, Database, EvalOptions, Maintained, MaintainedBy, Maintenance, UpdateReport};
use ir::{PredId, Program, Update};
use plan::plan_program;

fn with_facts(rules: &str, facts: &str) -> Program {
    let text = format!("{rules}\n{facts}");
    let (program, diagnostics) = syntax::parse_program(&text, FileId(0));
    let program = program.unwrap_or_else(|| panic!("{diagnostics:?}"));
    assert!(ir::validate(&program).is_empty());
    program
}

fn pred(p: &Program, name: &str) -> PredId {
    p.lookup_source(name).unwrap()
}

fn fact(p: &mut Program, name: &str, values: &[&str]) -> (PredId, Vec<u32>) {
    (pred(p, name), values.iter().map(|t| p.consts.intern(t).0).collect())
}

/// Facts as `A(a) B(b)`, sorted.
fn round_text(p: &Program, facts: &[(PredId, Vec<Vec<u32>>)]) -> String {
    let mut texts: Vec<String> = facts
        .iter()
        .flat_map(|(pr, ts)| ts.iter().map(move |t| format!("{}{}", p.pred_name(*pr), p.display_tuple(*pr, t))))
        .collect();
    texts.sort();
    texts.join(" ")
}

/// Maintains `p` through `updates` with every strategy (`Auto` deciding as on a large
/// state too) and checks, after each batch, that the state is a fresh evaluation of the
/// new input and that no strategy but `Auto` recomputed; returns `Auto`'s reports (as
/// on a large state).
fn maintain_under_negation(p: &Program, updates: &[Update]) -> Vec<UpdateReport> {
    maintain_with_budget(p, updates, 0)
}

/// [`maintain_under_negation`] whose `Auto` on a large state has the least budget
/// `min_budget` (see `Maintained::set_auto_min_budget`).
fn maintain_with_budget(p: &Program, updates: &[Update], min_budget: u64) -> Vec<UpdateReport> {
    let mut reports = Vec::new();
    for (maintenance, min_budget) in [
        (Maintenance::Dred, None),
        (Maintenance::Ranked, None),
        (Maintenance::Auto, None),
        (Maintenance::Auto, Some(min_budget)),
    ] {
        let mut state =
            Maintained::with_maintenance(plan_program(p), p, Database::from_facts(p, &p.facts), maintenance);
        if let Some(firings) = min_budget {
            state.set_auto_min_budget(firings);
        }
        let mut input = Database::from_facts(p, &p.facts);
        for update in updates {
            let report = state.apply(update);
            if maintenance != Maintenance::Auto {
                assert_ne!(report.strategy, MaintainedBy::Recompute, "{maintenance:?}");
            }
            if min_budget.is_some() {
                reports.push(report);
            }
            for (pred, tuple) in &update.deletes {
                input.remove(*pred, tuple);
            }
            for (pred, tuple) in &update.inserts {
                input.insert(*pred, tuple);
            }
            let fresh = evaluate(&plan_program(p), p, input.clone(), EvalOptions::default());
            assert!(state.db().same_tuples(&fresh.db), "{maintenance:?} after {update:?}");
        }
    }
    reports
}

/// Under a negation a deleted fact makes facts appear and an inserted one makes facts
/// go; through two negations the roles swap twice.
#[test]
fn negation_deletions_add_and_insertions_remove_through_a_chain_of_two() {
    // `A(x)` holds where `B(x)` does not, `B(x)` where `C(x)` does not.
    let mut p = with_facts("B(X) <- N(X), !C(X)\nA(X) <- N(X), !B(X)", "N(a). N(b). N(c). C(a).");
    let (ca, cb) = (fact(&mut p, "C", &["a"]), fact(&mut p, "C", &["b"]));
    let reports = maintain_under_negation(
        &p,
        &[
            Update { inserts: vec![], deletes: vec![ca.clone()] },
            Update { inserts: vec![cb.clone()], deletes: vec![] },
            Update { inserts: vec![ca], deletes: vec![cb] },
        ],
    );
    let text = |list: &[(PredId, ir::Tuples)]| round_text(&p, &ir::one_per_fact(list));
    // Deleting C(a) makes B(a) appear, which takes A(a) away.
    assert_eq!((text(&reports[0].removed), text(&reports[0].added)), ("A(a)".into(), "B(a)".into()));
    // Inserting C(b) takes B(b) away, which makes A(b) appear.
    assert_eq!((text(&reports[1].removed), text(&reports[1].added)), ("B(b)".into(), "A(b)".into()));
    assert_eq!((text(&reports[2].removed), text(&reports[2].added)), ("A(b) B(a)".into(), "A(a) B(b)".into()));
}

/// A negated atom without variables is a switch: a fact gained turns its rule off, a
/// fact lost turns it back on.
#[test]
fn negation_of_an_atom_without_variables() {
    let mut p = with_facts("Off() <- Switch(off)\nLit(X) <- Lamp(X), !Off()\nDark() <- !Lit(a)", "Lamp(a). Lamp(b).");
    let off = fact(&mut p, "Switch", &["off"]);
    let reports = maintain_under_negation(
        &p,
        &[Update { inserts: vec![off.clone()], deletes: vec![] }, Update { inserts: vec![], deletes: vec![off] }],
    );
    let text = |list: &[(PredId, ir::Tuples)]| round_text(&p, &ir::one_per_fact(list));
    assert_eq!((text(&reports[0].removed), text(&reports[0].added)), ("Lit(a) Lit(b)".into(), "Dark() Off()".into()));
    assert_eq!((text(&reports[1].removed), text(&reports[1].added)), ("Dark() Off()".into(), "Lit(a) Lit(b)".into()));
}

/// `Maintenance::Auto` under a negation: DRed's over-deletion while it stays within its
/// budget, ranked over-deletion past it, and the negation above follows either way.
#[test]
fn auto_maintenance_under_negation_turns_to_ranked_past_its_budget() {
    // `a` reaches `c` five ways, then a chain of 100 nodes; 200 sources lead into `a`;
    // 1,000 edges stand apart (an average edge reaches little); `Far(x)` holds for the
    // nodes `a` does not reach.
    let mut edges: Vec<String> = (1..=5).flat_map(|i| [format!("E(a,b{i})."), format!("E(b{i},c).")]).collect();
    edges.extend((1..=200).map(|i| format!("E(x{i},a).")));
    edges.push("E(c,d1).".into());
    edges.extend((1..100).map(|j| format!("E(d{j},d{}).", j + 1)));
    edges.extend((0..1_000).map(|i| format!("E(u{i},v{i}).")));
    edges.extend(["E(d1,leaf).".to_string(), "Node(leaf).".into(), "Node(c).".into(), "Node(z).".into()]);
    let rules = "R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), E(Y,Z)\nFar(X) <- Node(X), !R(a,X)";
    let mut p = with_facts(rules, &edges.join(" "));
    let leaf = fact(&mut p, "E", &["d1", "leaf"]);
    let fan = fact(&mut p, "E", &["a", "b1"]);
    // Budgets as on a large state, where the evaluation does more work per fact than this
    // one: enough for ranked over-deletion's row locators, not for DRed's over-deletion of
    // everything the sources reach through `a`.
    let reports = maintain_with_budget(
        &p,
        &[
            Update { inserts: vec![], deletes: vec![leaf.clone()] },
            Update { inserts: vec![], deletes: vec![fan] },
            Update { inserts: vec![leaf], deletes: vec![] },
        ],
        200_000,
    );
    let far = |r: &UpdateReport, list: &[(PredId, ir::Tuples)]| {
        (r.strategy, list.iter().filter(|(q, _)| *q == pred(&p, "Far")).map(|(_, ts)| ts.len()).sum::<usize>())
    };
    assert_eq!(far(&reports[0], &reports[0].added), (MaintainedBy::Dred, 1), "{}", reports[0].reason);
    // DRed's over-deletion would take all of `a`'s closure; ranked keeps it.
    assert_eq!(far(&reports[1], &reports[1].added), (MaintainedBy::Ranked, 0), "{}", reports[1].reason);
    assert!(reports[1].reason.contains("DRed's over-deletion passed"), "{}", reports[1].reason);
    assert_eq!(far(&reports[2], &reports[2].removed), (MaintainedBy::Dred, 1), "{}", reports[2].reason);
}
