//! Programs far larger than the examples, through the real parser, magic rewrite,
//! planner and semi-naive engine: long predicate chains, long bodies and the right-linear
//! closure from a bound second column. They check answers; passes that recursed once per
//! predicate are run on a small stack, so a recursion on program size fails them.

use exec::{evaluate, Database, EvalOptions};
use ir::{FileId, Program};

fn parse(src: &str) -> Program {
    let (program, diagnostics) = syntax::parse_program(src, FileId(0));
    assert!(!diag::has_errors(&diagnostics), "{diagnostics:?}");
    program.expect("the program parses")
}

/// The answers of the program's query through the magic rewrite, sorted as text.
fn magic_answers(src: &str) -> Vec<String> {
    let source = parse(src);
    let query = source.query.clone().expect("the program has a query");
    let magic = magic::rewrite(&source, &query);
    let p = magic.program;
    let plan = plan::plan_program(&p);
    let db = Database::from_facts(&p, &p.facts);
    let eval = evaluate(&plan, &p, db, EvalOptions::default());
    let q = p.query.clone().expect("the rewrite keeps the query");
    let mut answers: Vec<String> = eval
        .db
        .tuples(magic.answer_pred)
        .filter(|t| q.matches(t))
        .map(|t| p.display_tuple(magic.answer_pred, t).to_string())
        .collect();
    answers.sort();
    answers
}

/// Runs `f` on a thread with a stack far too small for one frame per predicate.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(256 * 1024).spawn(f).expect("a thread starts").join().expect("no overflow")
}

#[test]
fn a_chain_of_twenty_thousand_unary_predicates_is_planned_and_evaluated() {
    let n = 20_000;
    let mut src = String::new();
    for i in 0..n {
        src.push_str(&format!("p{i}(X) <- p{}(X)\n", i + 1));
    }
    src.push_str(&format!("p{n}(X) <- e(X)\ne(a). e(b).\n?- p0(X).\n"));
    assert_eq!(on_small_stack(move || magic_answers(&src)), ["(a)", "(b)"]);
}

#[test]
fn a_chain_of_twenty_thousand_binary_predicates_is_planned_and_evaluated() {
    // p_i(X,Y) <- p_{i-1}(X,Z), e(Z,Y) on a cycle of three: p_i(a,Y) is the i+1-th successor.
    let n = 20_000;
    let mut src = String::from("p0(X,Y) <- e(X,Y)\n");
    for i in 1..n {
        src.push_str(&format!("p{i}(X,Y) <- p{}(X,Z), e(Z,Y)\n", i - 1));
    }
    src.push_str(&format!("e(a,b). e(b,c). e(c,a).\n?- p{}(a,Y).\n", n - 1));
    let expected = ["(a,b)", "(a,c)", "(a,a)"][(n - 1) % 3];
    assert_eq!(on_small_stack(move || magic_answers(&src)), [expected]);
}

#[test]
fn a_body_of_five_thousand_atoms_is_planned_and_joined_on_a_small_stack() {
    let n = 5_000;
    let body: Vec<String> = (0..n).map(|i| format!("e(X{i},X{})", i + 1)).collect();
    // On a cycle of five, X0 = a reaches the (n mod 5)-th node after n steps.
    let src = format!("p(X0,X{n}) <- {}\ne(a,b). e(b,c). e(c,d). e(d,f). e(f,a).\n?- p(a,Y).\n", body.join(", "));
    let expected = ["(a,a)", "(a,b)", "(a,c)", "(a,d)", "(a,f)"][n % 5];
    assert_eq!(on_small_stack(move || magic_answers(&src)), [expected]);
}

#[test]
fn right_linear_closure_from_a_bound_second_column_answers_every_source() {
    // R(X,n_N) on a chain of N edges: every n_i with i < N reaches n_N.
    let n = 3_000;
    let mut src = String::from("R(X,Y) <- E(X,Y)\nR(X,Z) <- E(X,Y), R(Y,Z)\n");
    for i in 0..n {
        src.push_str(&format!("E(n{i},n{}).\n", i + 1));
    }
    src.push_str(&format!("?- R(X,n{n}).\n"));
    let mut expected: Vec<String> = (0..n).map(|i| format!("(n{i},n{n})")).collect();
    expected.sort();
    assert_eq!(magic_answers(&src), expected);
}
