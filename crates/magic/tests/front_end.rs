//! The worked examples of docs/semantics.md read through the real front end (`syntax`)
//! and rewritten: checks that the rewrite agrees with the parser's IR, not only with
//! hand-built IR.

use ir::FileId;
use magic::{rewrite, MagicProgram};

fn magic(src: &str) -> MagicProgram {
    let (program, diagnostics) = syntax::parse_program(src, FileId(0));
    let program = program.unwrap_or_else(|| panic!("the example parses: {diagnostics:#?}"));
    let query = program.query.clone().expect("the example has a query");
    let magic = rewrite(&program, &query);
    assert!(ir::validate(&magic.program).is_empty(), "{}", magic.display_rules());
    magic
}

// Example 1's exact rules are asserted by the unit tests and, through the command line,
// by crates/dlc/tests/spec.rs.

#[test]
fn example_2() {
    let m = magic("P(X,Z) <- E(X,Y), Q(Z,Y)\nQ(U,V) <- F(U,V)\n?- P(a,Z).");
    let rules = m.display_rules();
    assert!(rules.contains("@m:Q^fb(Y) <- @m:P^bf(X), E(X,Y)\n"), "{rules}");
    assert!(rules.contains("@a:Q^fb(U,V) <- @m:Q^fb(V), F(U,V)\n"), "{rules}");
}

#[test]
fn example_3() {
    let m = magic("R(X,Y) <- E(X,Y)\n?- R(X,Y).");
    assert!(m.display_rules().starts_with("@m:R^ff() <-\n"));
    let m = magic("P(a) <-\n?- P(z).");
    assert_eq!(m.display_rules(), "@m:P^b(z) <-\n@a:P^b(a) <- @m:P^b(a)\n");
    let m = magic("P(X,X) <- E(X,Y)\n?- P(a,W).");
    assert_eq!(m.display_rules(), "@m:P^bf(a) <-\n@a:P^bf(X,X) <- @m:P^bf(X), E(X,Y)\n");
}

#[test]
fn anonymous_variables_never_bind_a_call() {
    let m = magic("P(X) <- E(X,_), Q(_)\nQ(Y) <- F(Y)\n?- P(a).");
    assert_eq!(m.adorned.len(), 2);
    assert_eq!(m.adorned[1].1.to_string(), "f");
}

#[test]
fn a_computed_value_never_binds_a_call() {
    // Passed down, `Z = X - 1` would demand P(2), P(1), P(0), P(-1), … without end, where
    // the program itself stops: it only tests `X - 1 = Z` against the facts it has.
    let m = magic("P(X,Y) <- B(X,Y)\nP(X,Y) <- P(Z,Y), E(X), X - 1 = Z\n?- P(3,Y).");
    let rules = m.display_rules();
    assert!(rules.contains("@a:P^ff(Z,Y), E(X), X - 1 = Z  // types: number"), "{rules}");
    assert!(!rules.contains("@m:P^bf(Z) <-"), "{rules}");
    // A copy or a constant adds no value, so it still binds.
    let m = magic("P(X,Y) <- B(X,Y)\nP(X,Y) <- P(Z,Y), E(X), Z = X\n?- P(3,Y).");
    assert!(m.display_rules().contains("@m:P^bf(Z) <- @m:P^bf(X), Z = X  // types: number\n"), "{}", m.display_rules());
}
