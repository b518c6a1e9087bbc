//! Property tests over the whole pipeline: for random safe programs, random EDBs and
//! random queries, the magic program's answers equal the original program's (both
//! engines), and DRed over the magic program equals recomputation after every batch.

mod generate;

use exec::{Database, EvalOptions, Maintained, Maintenance, NativeEngine};
use generate::Arg;
use ir::{FileId, PredId, Program, Update};
use proptest::prelude::*;

/// Predicates of the random programs: (name, arity). `e*` are EDB, `p*` IDB.
const EDB: &[(&str, usize)] = &[("e0", 2), ("e1", 1), ("e2", 3)];
const IDB: &[(&str, usize)] = &[("p0", 2), ("p1", 1), ("p2", 0), ("p3", 3)];
const VARS: &[&str] = &["X", "Y", "Z", "W"];
const CONSTS: &[&str] = &["a", "b", "c"];

fn arg() -> impl Strategy<Value = Arg> {
    generate::arg(VARS.len(), CONSTS.len())
}

fn atom_text(name: &str, args: &[Arg]) -> String {
    generate::atom_text(name, args, VARS, CONSTS)
}

/// A random safe rule for IDB predicate `head`: body atoms first, then head arguments
/// drawn from the body's variables (or constants), so every rule is safe.
fn rule(head: usize) -> impl Strategy<Value = String> {
    let preds: Vec<(&'static str, usize)> = EDB.iter().chain(IDB).copied().collect();
    let body_atom = (0..preds.len()).prop_flat_map(move |i| {
        let (name, arity) = preds[i];
        proptest::collection::vec(arg(), arity).prop_map(move |args| (name, args))
    });
    let (head_name, head_arity) = IDB[head];
    (proptest::collection::vec(body_atom, 1..4), proptest::collection::vec(any::<prop::sample::Index>(), head_arity))
        .prop_map(move |(body, picks)| {
            let mut vars: Vec<usize> = Vec::new();
            for (_, args) in &body {
                for a in args {
                    if let Arg::Var(v) = a {
                        if !vars.contains(v) {
                            vars.push(*v);
                        }
                    }
                }
            }
            let head_args: Vec<Arg> = picks
                .iter()
                .map(|ix| {
                    if vars.is_empty() {
                        Arg::Const(ix.index(CONSTS.len()))
                    } else {
                        Arg::Var(vars[ix.index(vars.len())])
                    }
                })
                .collect();
            let body: Vec<String> = body.iter().map(|(n, a)| atom_text(n, a)).collect();
            format!("{} <- {}.", atom_text(head_name, &head_args), body.join(", "))
        })
}

fn facts() -> impl Strategy<Value = Vec<String>> {
    let fact = (0..EDB.len()).prop_flat_map(|i| {
        let (name, arity) = EDB[i];
        proptest::collection::vec(0..CONSTS.len(), arity).prop_map(move |vals| {
            let args: Vec<Arg> = vals.into_iter().map(Arg::Const).collect();
            atom_text(name, &args)
        })
    });
    proptest::collection::vec(fact, 0..14)
}

fn query() -> impl Strategy<Value = String> {
    (0..IDB.len()).prop_flat_map(|i| {
        let (name, arity) = IDB[i];
        proptest::collection::vec(arg(), arity).prop_map(move |args| atom_text(name, &args))
    })
}

/// A whole program: every IDB predicate gets at least one rule, so every query is valid.
fn program() -> impl Strategy<Value = (String, Vec<String>)> {
    let rules = (0..IDB.len()).map(|h| proptest::collection::vec(rule(h), 1..3)).collect::<Vec<_>>();
    (rules, query(), facts()).prop_map(|(rules, query, facts)| {
        let mut text: String = rules.into_iter().flatten().map(|r| r + "\n").collect();
        text += &format!("?- {query}.\n");
        (text, facts)
    })
}

fn compile(text: &str, facts: &[String]) -> (Program, Vec<(PredId, Vec<u32>)>) {
    let (program, diagnostics) = syntax::parse_program(text, FileId(0));
    let mut program = program.unwrap_or_else(|| panic!("generated program must compile: {diagnostics:?}\n{text}"));
    let (facts, diagnostics) =
        syntax::parse_fact_atoms(&facts.iter().map(|f| format!("{f}.\n")).collect::<String>(), FileId(1), &mut program);
    assert!(!diag::has_errors(&diagnostics), "{diagnostics:?}");
    let tuples = facts.iter().map(|f| (f.pred, f.values.clone())).collect();
    (program, tuples)
}

fn database(program: &Program, facts: &[(PredId, Vec<u32>)]) -> Database {
    let mut db = Database::new(program);
    for (p, t) in facts {
        db.insert(*p, t);
    }
    db
}

fn answers(program: &Program, facts: &[(PredId, Vec<u32>)], engine: NativeEngine) -> Vec<Vec<u32>> {
    let plan = plan::plan_program(program);
    let eval =
        exec::evaluate(&plan, program, database(program, facts), EvalOptions { engine, ..EvalOptions::default() });
    let q = program.query.as_ref().unwrap();
    eval.db.sorted_tuples(q.atom.pred).into_iter().filter(|t| q.matches(t)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn magic_answers_equal_original_answers((text, facts) in program()) {
        let (program, tuples) = compile(&text, &facts);
        let magic = magic::rewrite(&program, program.query.as_ref().unwrap());
        let expected = answers(&program, &tuples, NativeEngine::Reference);
        prop_assert_eq!(&answers(&program, &tuples, NativeEngine::Seminaive), &expected, "original, seminaive\n{}", text);
        prop_assert_eq!(&answers(&magic.program, &tuples, NativeEngine::Seminaive), &expected, "magic, seminaive\n{}", text);
        prop_assert_eq!(&answers(&magic.program, &tuples, NativeEngine::Reference), &expected, "magic, reference\n{}", text);
    }

    #[test]
    fn dred_on_the_magic_program_equals_recomputation(
        (text, facts) in program(),
        batches in proptest::collection::vec(proptest::collection::vec((any::<bool>(), any::<prop::sample::Index>(), proptest::collection::vec(0..CONSTS.len(), 3)), 1..5), 1..4),
        ranked in any::<bool>(),
    ) {
        let (program, tuples) = compile(&text, &facts);
        let magic = magic::rewrite(&program, program.query.as_ref().unwrap()).program;
        let mut current: std::collections::BTreeSet<(PredId, Vec<u32>)> = tuples.iter().cloned().collect();
        let maintenance = if ranked { Maintenance::Ranked } else { Maintenance::Dred };
        let mut state = Maintained::with_maintenance(plan::plan_program(&magic), &magic, database(&magic, &tuples), maintenance);
        let consts: Vec<u32> = CONSTS.iter().map(|c| magic.consts.get(c).map_or(u32::MAX, |k| k.0)).collect();
        for batch in batches {
            let mut update = Update { inserts: Vec::new(), deletes: Vec::new() };
            let mut seen = std::collections::BTreeSet::new();
            for (insert, which, values) in batch {
                let (name, arity) = EDB[which.index(EDB.len())];
                let Some(pred) = magic.lookup_source(name) else { continue };
                // Values the program never mentioned are skipped: they are not interned.
                if values[..arity].iter().any(|&v| consts[v] == u32::MAX) { continue; }
                let tuple: Vec<u32> = values[..arity].iter().map(|&v| consts[v]).collect();
                // One change per fact and batch, so the expected state is unambiguous.
                if !seen.insert((pred, tuple.clone())) { continue; }
                if insert {
                    current.insert((pred, tuple.clone()));
                    update.inserts.push((pred, tuple));
                } else {
                    current.remove(&(pred, tuple.clone()));
                    update.deletes.push((pred, tuple));
                }
            }
            state.apply(&update);
            let now: Vec<(PredId, Vec<u32>)> = current.iter().cloned().collect();
            let fresh = exec::evaluate(&plan::plan_program(&magic), &magic, database(&magic, &now), EvalOptions::default());
            for p in magic.pred_ids() {
                prop_assert_eq!(state.db().sorted_tuples(p), fresh.db.sorted_tuples(p), "relation {} after {:?}\n{}", magic.pred_name(p), update, text);
            }
        }
    }
}
