//! The embedding API end to end: load, add facts, evaluate, update, explain, with the
//! exact answers and changes.

use pipeline::{Datalog, MaintainedBy, Options, Row, Value};

const PROGRAM: &str = "\
Reach(X) <- Edge(a,X)
Reach(Y) <- Reach(X), Edge(X,Y)
Unreached(X) <- Node(X), X != a, not Reach(X)
?- Unreached(X).
";

fn row(values: &[&str]) -> Row {
    values.iter().map(|&v| Value::from(v)).collect()
}

fn loaded() -> Datalog {
    let mut datalog = Datalog::new(PROGRAM).unwrap();
    for node in ["a", "b", "c", "d", "e"] {
        datalog.add_fact("Node", &[node.into()]).unwrap();
    }
    for (from, to) in [("a", "b"), ("b", "c"), ("d", "e")] {
        datalog.add_fact("Edge", &[from.into(), to.into()]).unwrap();
    }
    datalog
}

#[test]
fn answers_changes_and_a_proof() {
    let mut datalog = loaded();
    assert_eq!(datalog.evaluate().unwrap(), [row(&["d"]), row(&["e"])]);

    let updated = datalog.update(&[("Edge", row(&["a", "d"]))], &[("Edge", row(&["b", "c"]))]).unwrap();
    assert_eq!(updated.added, [row(&["c"])]);
    assert_eq!(updated.removed, [row(&["d"]), row(&["e"])]);
    // A negation: the native engine recomputes the batch.
    assert!(
        matches!(updated.how, MaintainedBy::Recomputed(_) | MaintainedBy::Dred(_) | MaintainedBy::Ranked(_)),
        "{:?}",
        updated.how
    );
    assert_eq!(datalog.answers().unwrap(), [row(&["c"])]);

    let proof = datalog.explain("Unreached", &["c".into()]).unwrap().expect("Unreached(c) holds");
    let lines: Vec<&str> = proof.lines().collect();
    assert_eq!(
        lines,
        [
            "Unreached(c)  by Unreached(X) <- Node(X), !Reach(X), X != a",
            "  c != a  holds",
            "  !Reach(c)  no such fact",
            "  Node(c)  input fact",
        ],
        "{proof}"
    );
    assert_eq!(datalog.explain("Unreached", &["d".into()]).unwrap(), None);
    assert_eq!(datalog.explain("Unreached", &["nowhere".into()]).unwrap(), None);
}

#[test]
fn a_recursive_answer_is_proved_through_the_magic_rewrite() {
    let program = "Path(X,Y) <- E(X,Y)\nPath(X,Z) <- Path(X,Y), E(Y,Z)\n?- Path(a,Y).\n";
    let mut datalog = Datalog::new(program).unwrap();
    for (from, to) in [("a", "b"), ("b", "c"), ("x", "y")] {
        datalog.add_fact("E", &[from.into(), to.into()]).unwrap();
    }
    assert_eq!(datalog.evaluate().unwrap(), [row(&["a", "b"]), row(&["a", "c"])]);
    let proof = datalog.explain("Path", &["a".into(), "c".into()]).unwrap().expect("Path(a,c) holds");
    let facts: Vec<&str> = proof.lines().map(|l| l.trim_start().split("  ").next().unwrap()).collect();
    assert_eq!(facts, ["Path(a,c)", "Path(a,b)", "E(a,b)", "E(b,c)"], "{proof}");
}

#[test]
fn typed_columns_read_back_as_their_values() {
    let program = ".decl e(x: number, y: unsigned, s: symbol)\n.input e\n.decl r(x: number, y: unsigned, s: symbol)\nr(x, y, s) :- e(x, y, s), x < 0.\n";
    let options = Options { query: Some("r(x, y, s)".into()), ..Options::default() };
    let mut datalog = Datalog::with_options(program, options).unwrap();
    datalog.add_fact("e", &[Value::from(-3), Value::from(7u32), "seven".into()]).unwrap();
    datalog.add_fact("e", &[Value::from(4), Value::from(1u32), "one".into()]).unwrap();
    let answers = datalog.evaluate().unwrap();
    assert_eq!(answers, [vec![Value::Number(-3), Value::Unsigned(7), Value::Symbol("seven".into())]]);
}

#[test]
fn mistakes_are_errors() {
    assert!(Datalog::new("R(X) <- E(X)\n").unwrap_err().message().contains("no query"));
    let mut datalog = loaded();
    assert!(datalog.add_fact("Nope", &["a".into()]).is_err());
    assert!(datalog.add_fact("Edge", &["a".into()]).is_err());
    assert!(datalog.add_fact("Reach", &["a".into()]).is_err());
    assert!(datalog.answers().is_err());
    assert!(datalog.update(&[], &[]).is_err());
    datalog.evaluate().unwrap();
    assert!(datalog.add_fact("Node", &["f".into()]).is_err());
    assert!(datalog.explain("Nope", &["a".into()]).is_err());
}

/// A Soufflé program's declared functors computed by Rust closures given by name, through
/// evaluation and an update; a call with no function given is refused before evaluating.
#[test]
fn functors_given_as_rust_closures() {
    use pipeline::FunctorValue;
    use std::borrow::Cow;
    let program = "\
.functor greet(s: symbol, n: number): symbol
.functor half(x: float): float
.decl name(s: symbol)
.decl greeting(g: symbol, h: float)
greeting(@greet(s, 2), @half(3.0)) :- name(s).
?- greeting(g, h).
";
    let functions = pipeline::Functions::new()
        .with("greet", |args: &[FunctorValue<'_>]| match args {
            [FunctorValue::Symbol(s), FunctorValue::Number(n)] => {
                Some(FunctorValue::Symbol(Cow::Owned(format!("hello {s}").repeat(*n as usize))))
            }
            _ => None,
        })
        .with("half", |args: &[FunctorValue<'_>]| match args {
            [FunctorValue::Float(x)] => Some(FunctorValue::Float(x / 2.0)),
            _ => None,
        });
    let options = Options { functors: Some(std::sync::Arc::new(functions)), ..Options::default() };
    let mut datalog = Datalog::with_options(program, options).unwrap();
    datalog.add_fact("name", &["ann".into()]).unwrap();
    let half = Value::float(1.5);
    assert_eq!(datalog.evaluate().unwrap(), [vec![Value::from("hello annhello ann"), half.clone()]]);
    let updated = datalog.update(&[("name", row(&["bo"]))], &[("name", row(&["ann"]))]).unwrap();
    assert_eq!(updated.added, [vec![Value::from("hello bohello bo"), half]]);

    let error = Datalog::new(program).unwrap_err();
    assert!(error.message().contains("no function computes the functor `greet`"), "{}", error.message());
}

/// A Soufflé program with a `choice-domain` and an `eqrel` through the embedding API: the
/// chosen tuples, a batch deleting a chosen tuple's edge (recomputed, so another candidate
/// takes its key), and the classes of an equivalence relation.
#[test]
fn a_choice_domain_and_an_equivalence_relation() {
    let program = "\
.decl edge(x: number, y: number)
.input edge
.decl root(x: number)
.input root
.decl tree(parent: number, child: number) choice-domain child
tree(r, r) :- root(r).
tree(x, y) :- tree(_, x), edge(x, y).
.decl same(x: number, y: number) eqrel
same(x, y) :- edge(x, y).
";
    let numbers = |values: &[i32]| values.iter().map(|&v| Value::from(v)).collect::<Row>();
    let loaded = |query: &str| {
        let options = Options { query: Some(query.into()), ..Options::default() };
        let mut datalog = Datalog::with_options(program, options).unwrap();
        datalog.add_fact("root", &[Value::from(1)]).unwrap();
        for (from, to) in [(1, 2), (1, 3), (2, 4), (3, 4), (5, 6)] {
            datalog.add_fact("edge", &[Value::from(from), Value::from(to)]).unwrap();
        }
        datalog
    };
    let mut tree = loaded("tree(x, y)");
    let chosen = [numbers(&[1, 1]), numbers(&[1, 2]), numbers(&[1, 3]), numbers(&[2, 4])];
    assert_eq!(tree.evaluate().unwrap(), chosen);
    let updated = tree.update(&[], &[("edge", numbers(&[2, 4]))]).unwrap();
    assert_eq!(updated.removed, [numbers(&[2, 4])]);
    assert_eq!(updated.added, [numbers(&[3, 4])]);
    assert!(matches!(updated.how, MaintainedBy::Recomputed(_)), "{:?}", updated.how);
    let proof = tree.explain("tree", &[Value::from(3), Value::from(4)]).unwrap().expect("tree(3,4) holds");
    assert!(proof.starts_with("tree(3,4)  by "), "{proof}");

    let mut same = loaded("same(1, y)");
    let class = [numbers(&[1, 1]), numbers(&[1, 2]), numbers(&[1, 3]), numbers(&[1, 4])];
    assert_eq!(same.evaluate().unwrap(), class);
    // Deleting two edges splits the class of 1: 4 is no longer connected to it.
    let updated = same.update(&[], &[("edge", numbers(&[2, 4])), ("edge", numbers(&[3, 4]))]).unwrap();
    assert_eq!(updated.removed, [numbers(&[1, 4])]);
    assert_eq!(same.answers().unwrap(), class[..3]);
}

/// Subsumption through the embedding API: a dominated distance comes back when the edge of
/// the shorter way is deleted, and goes again when a shorter edge is inserted.
#[test]
fn a_dominated_fact_comes_back_when_what_dominated_it_goes() {
    let program = ".decl e(x: number, y: number, w: number)\n.input e\n.decl d(x: number, y: number)\n\
        d(1, 0).\nd(y, a + w) :- d(x, a), e(x, y, w).\nd(x, a) <= d(x, b) :- b < a.\n";
    let options = Options { query: Some("d(x, y)".into()), ..Options::default() };
    let mut datalog = Datalog::with_options(program, options).unwrap();
    for (from, to, weight) in [(1, 2, 5), (1, 3, 1), (3, 2, 1)] {
        datalog.add_fact("e", &[Value::from(from), Value::from(to), Value::from(weight)]).unwrap();
    }
    let numbers = |values: &[i32]| -> Row { values.iter().map(|&v| Value::from(v)).collect() };
    let distances = [numbers(&[1, 0]), numbers(&[2, 2]), numbers(&[3, 1])];
    assert_eq!(datalog.evaluate().unwrap(), distances);

    // Without the short way round, the direct edge's distance is no longer dominated.
    let updated = datalog.update(&[], &[("e", numbers(&[3, 2, 1]))]).unwrap();
    assert_eq!(updated.removed, [numbers(&[2, 2])]);
    assert_eq!(updated.added, [numbers(&[2, 5])]);
    assert!(matches!(updated.how, MaintainedBy::Recomputed(_)), "{:?}", updated.how);
    // A shorter edge dominates it again.
    let updated = datalog.update(&[("e", numbers(&[1, 2, 0]))], &[]).unwrap();
    assert_eq!((updated.removed, updated.added), (vec![numbers(&[2, 5])], vec![numbers(&[2, 0])]));
    assert_eq!(datalog.answers().unwrap(), [numbers(&[1, 0]), numbers(&[2, 0]), numbers(&[3, 1])]);
}
