//! The front end of dlc: a logos lexer, a chumsky parser producing a spanned AST, and
//! lowering of that AST into `ir::Program` with diagnostics. Facts files, update batches
//! and command-line queries are read here too, with the same atom grammar.
//!
//! Nothing here panics on user input: every function returns what it could read plus
//! the diagnostics for the rest.
//!
//! Statements of a program are rules `Head <- A, B` (`:-` is a synonym; the body may be
//! empty), bare ground atoms `E(a,b)` (inline input facts) and queries `?- R(a, Y)`. A
//! statement ends at `.` or at the end of its line; it continues on the next line after
//! `(` or `,`, before `)`, `,`, `.` or `<-`, and after `<-` when the next line is indented
//! deeper than the arrow's line (see `lexer::layout`).

mod aggregates;
pub mod ast;
pub mod expr;
mod facts;
mod generators;
mod lattice;
mod lexer;
mod lower;
mod parser;
mod reductions;
pub mod souffle;
mod souffle_facts;
mod types;

pub use facts::{
    csv_separator, line_too_long, parse_delimited_facts, parse_fact_atoms, parse_ground_atom, parse_update_atom,
    parse_updates, quote_field, read_delimited_facts, read_fact_atoms, FactSink, UpdateBatch, MAX_LINE_BYTES,
};
pub use lower::{lower, undefined_predicate_warnings};
pub use parser::Sign;
pub use souffle_facts::{read_souffle_facts, souffle_field, souffle_record_field};

use diag::{Code, Diagnostic, FileId};
use lexer::{layout, lex, Token};

/// The length of a UTF-8 byte-order mark at the start of `src` (3 bytes), or 0. Editors on
/// some systems write one; it is not part of the text, and every reader skips it.
pub(crate) fn bom_len(src: &str) -> usize {
    if src.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    }
}

/// Parses a program into its AST, recovering after each bad statement so that every
/// syntax error (E0001) in the file is reported. A byte-order mark at the start is
/// skipped; spans still index `src`.
pub fn parse(src: &str, file: FileId) -> (ast::File, Vec<Diagnostic>) {
    let bom = bom_len(src);
    let text = &src[bom..];
    let mut tokens = layout(text, lex(text));
    if bom > 0 {
        for (_, span) in &mut tokens {
            *span = (span.start + bom..span.end + bom).into();
        }
    }
    let (output, diagnostics) = parser::run(parser::program(file, src.len()), &tokens, src.len(), file, Code::PARSE);
    let empty = || ast::File {
        statements: Vec::new(),
        span: diag::Span::new(file, 0..src.len()),
        declared: Vec::new(),
        record_types: Vec::new(),
    };
    (output.unwrap_or_else(empty), diagnostics)
}

/// Parses and lowers a program. `None` when there is any error.
pub fn parse_program(src: &str, file: FileId) -> (Option<ir::Program>, Vec<Diagnostic>) {
    let (ast, mut diagnostics) = parse(src, file);
    let (program, lowering_diagnostics) = lower(&ast);
    // A statement that failed to parse is missing from the AST, so a query naming the
    // predicate it defined would be reported as unknown: noise after the real error.
    let parse_failed = diag::has_errors(&diagnostics);
    diagnostics.extend(lowering_diagnostics.into_iter().filter(|d| !(parse_failed && d.code == Code::QUERY_UNKNOWN)));
    diagnostics.sort_by_key(|d| d.primary_span().map(|s| (s.file, s.start)));
    let program = program.filter(|_| !diag::has_errors(&diagnostics));
    (program, diagnostics)
}

/// Reads a `--query 'R(a,Y)'` text (with or without `?-` and a final `.`) and makes it the
/// program's query, replacing an in-file one. It is checked like a `?-` line: unknown
/// predicate (E0007), input predicate (E0008), arity (E0004).
pub fn parse_query(src: &str, file: FileId, program: &mut ir::Program) -> Vec<Diagnostic> {
    let tokens: Vec<_> = lex(src).into_iter().filter(|(t, _)| *t != Token::Newline).collect();
    let (atom, mut diagnostics) = parser::run(parser::query_line(file), &tokens, src.len(), file, Code::PARSE);
    let Some(atom) = atom else { return diagnostics };
    let reserved = lower::reserved_names(&atom);
    if !reserved.is_empty() {
        diagnostics.extend(reserved);
        return diagnostics;
    }
    match lower::lower_query(program, &atom) {
        Ok(query) => program.query = Some(query),
        Err(error) => diagnostics.push(error),
    }
    diagnostics
}

#[cfg(test)]
mod tests {
    use super::*;
    use diag::Span;
    use ir::{PredKind, Program};
    use proptest::prelude::*;

    const FILE: FileId = FileId(0);

    /// Parses a program that must be free of errors.
    fn ok(src: &str) -> Program {
        let (program, diagnostics) = parse_program(src, FILE);
        assert!(diagnostics.is_empty(), "unexpected diagnostics: {diagnostics:#?}");
        program.expect("no errors means a program")
    }

    fn rules(program: &Program) -> Vec<String> {
        program.rules.iter().map(|r| ir::DisplayRule(program, r).to_string()).collect()
    }

    /// Parses a program that must fail; returns its diagnostics.
    fn errors(src: &str) -> Vec<Diagnostic> {
        let (program, diagnostics) = parse_program(src, FILE);
        assert!(program.is_none(), "expected errors in {src:?}");
        assert!(diag::has_errors(&diagnostics));
        diagnostics
    }

    fn text(src: &str, span: Span) -> &str {
        &src[span.range()]
    }

    /// (code, source text of the primary span) of each diagnostic.
    fn codes_and_texts<'a>(src: &'a str, diagnostics: &[Diagnostic]) -> Vec<(&'static str, &'a str)> {
        diagnostics.iter().map(|d| (d.code.0, text(src, d.primary_span().expect("every report has a span")))).collect()
    }

    /// The dlc dialect reads aggregates with the grammar Soufflé's uses, across lines inside
    /// braces; a word `count` without `:` after it is still a constant.
    #[test]
    fn aggregates_are_read_in_the_dlc_dialect() {
        let src = "D(X, N) <- V(X), N = count : {\n  E(X, Y),\n  Y > 1\n}, 0 < max Y : E(Y, X)\nV(1)\nE(1, 2)\n";
        let (file, diagnostics) = parse(src, FILE);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let ast = file.to_string();
        assert!(ast.contains("Aggregate count") && ast.contains("Aggregate max"), "{ast}");
        // Each aggregate becomes its rows, its reduction and (for `count`) the groups that
        // get 0; the rule reads the result where the aggregate was.
        assert_eq!(
            rules(&ok(src)),
            [
                "D_agg_keys(X) <- V(X)",
                "D_agg_rows(X,Y) <- E(X,Y), Y > 1",
                "D_agg(X,N) <- N = count : D_agg_rows(X,_0)",
                "D_agg_all(X,0) <- D_agg_keys(X), !D_agg(X,_0)",
                "D_agg_all(X,N) <- D_agg(X,N)",
                "D_agg_2_rows(X,Y,Y) <- E(Y,X)",
                "D_agg_2(X,N) <- N = max V : D_agg_2_rows(X,_0,V)",
                "D(X,N) <- V(X), D_agg_all(X,Agg), D_agg_2(X,Agg1), N = Agg, 0 < Agg1",
            ]
        );
        ok("R(count) <- E(count, _)\nE(count, min)\n");
    }

    /// An aggregate inside an aggregate's body is rewritten in the rows rule of the outer
    /// one, grouped by the variables it shares with it; one deeper is a syntax error, as
    /// the grammar reads one level of nesting only. An aggregate as the aggregated value
    /// is E0018.
    #[test]
    fn a_nested_aggregate_is_rewritten_in_its_outer_rows_rule() {
        let p = ok("E(1, 2)\nR(N) <- N = count : { E(X, Y), Y = sum Z : E(Z, _) }\n");
        let rows = rules(&p).into_iter().find(|r| r.starts_with("R_agg_rows(")).unwrap();
        assert_eq!(rows, "R_agg_rows(X,Y) <- E(X,Y), R_agg_rows_agg_all(Agg), Y = Agg");
        let src = "R(N) <- N = count : { E(X, Y), Y = sum Z : { E(Z, W), W = min V : E(V, _) } }\n";
        assert_eq!(errors(src)[0].code.0, "E0001");
        let src = "E(1, 2)\nR(N) <- N = sum (count : E(_, _)) : E(_, _)\n";
        assert_eq!(errors(src)[0].code.0, "E0018");
    }

    /// A fact with an aggregate (Soufflé accepts `n(count : e(_, _)).`) is computed: it is
    /// a rule with an empty body, so its predicate is derived; it used to reach lowering
    /// as a ground fact and panic there.
    #[test]
    fn a_fact_with_an_aggregate_is_a_rule() {
        let p = ok("E(1, 2)\nN(count : E(_, _))\n");
        assert_eq!(
            rules(&p),
            [
                "N_agg_keys() <-",
                "N_agg_rows(Any,Any1) <- E(Any,Any1)",
                "N_agg(N) <- N = count : N_agg_rows(_0,_1)",
                "N_agg_all(0) <- N_agg_keys(), !N_agg(_0)",
                "N_agg_all(N) <- N_agg(N)",
                "N(Agg) <- N_agg_all(Agg)",
            ]
        );
        assert_eq!(p.pred(p.lookup_source("N").unwrap()).kind, PredKind::Idb);
    }

    #[test]
    fn spec_example_1_lowers_to_its_rules_and_query() {
        let p = ok("R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), R(Y,Z)\n?- R(a,Y).\n");
        assert_eq!(rules(&p), ["R(X,Y) <- E(X,Y)", "R(X,Z) <- R(X,Y), R(Y,Z)"]);
        let r = p.lookup_source("R").unwrap();
        let e = p.lookup_source("E").unwrap();
        assert_eq!((p.pred(r).kind, p.pred(r).arity), (PredKind::Idb, 2));
        assert_eq!((p.pred(e).kind, p.pred(e).arity), (PredKind::Edb, 2));
        let query = p.query.as_ref().unwrap();
        assert_eq!(ir::DisplayAtom(&p, &query.atom).to_string(), "R(a,Y)");
        assert_eq!(query.adornment().to_string(), "bf");
        assert!(p.rules.iter().all(|r| r.origin == ir::Origin::Source));
    }

    #[test]
    fn spec_example_2_lowers() {
        let p = ok("P(X,Z) <- E(X,Y), Q(Z,Y)\nQ(U,V) <- F(U,V)\n?- P(a,Z)");
        assert_eq!(rules(&p), ["P(X,Z) <- E(X,Y), Q(Z,Y)", "Q(U,V) <- F(U,V)"]);
    }

    #[test]
    fn spec_example_3_boundaries() {
        let p = ok("P(a) <-\n?- P(z).");
        assert_eq!(rules(&p), ["P(a) <-"]);
        assert_eq!(p.pred(p.lookup_source("P").unwrap()).kind, PredKind::Idb);
        let p = ok("P(X,X) <- E(X,Y)\n?- P(A,B)");
        assert_eq!(rules(&p), ["P(X,X) <- E(X,Y)"]);
        assert_eq!(p.query.as_ref().unwrap().adornment().to_string(), "ff");
    }

    #[test]
    fn rule_separators_and_synonyms() {
        let expected = ["R(X) <- E(X)", "S(X) <- E(X), F(X)"];
        assert_eq!(rules(&ok("R(X) <- E(X). S(X) :- E(X), F(X).")), expected);
        assert_eq!(rules(&ok("R(X) <- E(X)\nS(X) <- E(X),\n    F(X)\n")), expected);
        assert_eq!(rules(&ok("R(X) <- E(X)\n\n% comment\nS(X) <-\n  E(X), // why\n  F(X).")), expected);
        assert_eq!(rules(&ok("R(X) :-\n\tE(X)\nS(\n  X\n) <- E(X)\n  , F(X)")), expected);
    }

    #[test]
    fn zero_arity_atoms_and_empty_bodies() {
        let p = ok("Go() <-\nDone <- Go, E(x)\nStart <-\n?- Done()");
        assert_eq!(rules(&p), ["Go() <-", "Done() <- Go(), E(x)", "Start() <-"]);
        assert_eq!(p.pred(p.lookup_source("Done").unwrap()).arity, 0);
        assert_eq!(p.query.as_ref().unwrap().atom.args.len(), 0);
    }

    #[test]
    fn lower_case_predicates_constants_and_strings() {
        let p = ok("path(X, \"b c\") <- edge(X, -7), edge(X, 007), label(_x, \"q\\\"\")\n");
        assert_eq!(rules(&p), [r#"path(X,"b c") <- edge(X,-7), edge(X,7), label(_x,"q\"")"#], "numbers are themselves");
        assert_eq!(p.pred(p.lookup_source("edge").unwrap()).kind, PredKind::Edb);
    }

    #[test]
    fn symbols_are_identified_by_their_text_and_numbers_are_themselves() {
        let p = ok("R(a, 7) <-\nS(\"a\", \"7\") <-\n");
        let head_consts: Vec<Vec<ir::Value>> =
            p.rules.iter().map(|r| r.head.args.iter().filter_map(|t| t.constant()).collect()).collect();
        assert_eq!(head_consts[0][0], head_consts[1][0]);
        assert_eq!(head_consts[0][1], ir::Value::Number(7));
        assert_eq!(head_consts[1][1], ir::Value::Symbol(p.consts.get("7").unwrap()));
    }

    #[test]
    fn anonymous_variables_get_fresh_names_avoiding_used_ones() {
        let p = ok("R(X) <- E(X, _, _), F(_0, _)\n?- R(_)");
        assert_eq!(rules(&p), ["R(X) <- E(X,_1,_2), F(_0,_3)"]);
        assert_eq!(ir::DisplayAtom(&p, &p.query.as_ref().unwrap().atom).to_string(), "R(_0)");
    }

    #[test]
    fn predicate_kinds_are_decided_by_heads_anywhere_in_the_file() {
        let p = ok("T(X) <- S(X)\nS(X) <- E(X)\nE2(a).\n");
        let kind = |name| p.pred(p.lookup_source(name).unwrap()).kind;
        assert_eq!(
            (kind("T"), kind("S"), kind("E"), kind("E2")),
            (PredKind::Idb, PredKind::Idb, PredKind::Edb, PredKind::Edb)
        );
        // Predicates are declared in order of first occurrence, with that occurrence's span.
        let names: Vec<String> = p.pred_ids().map(|id| p.pred_name(id)).collect();
        assert_eq!(names, ["T", "S", "E", "E2"]);
        assert_eq!(p.pred(p.lookup_source("S").unwrap()).span, Span::new(FILE, 8..12));
    }

    #[test]
    fn inline_facts_go_to_program_facts() {
        let p = ok("E(a,b).\nE(b,\"c\")\nflag\nR(X) <- E(X,Y), flag\n");
        let facts: Vec<String> = p
            .facts
            .iter()
            .map(|f| format!("{}{}", p.pred_name(f.pred), ir::DisplayTuple(&p, f.pred, &f.values)))
            .collect();
        assert_eq!(facts, ["E(a,b)", "E(b,c)", "flag()"]);
    }

    #[test]
    fn every_node_has_its_source_span() {
        let src = "R(X,Y) <- E(X,Y)\n";
        let p = ok(src);
        let rule = &p.rules[0];
        assert_eq!(text(src, rule.span), "R(X,Y) <- E(X,Y)");
        assert_eq!(text(src, rule.head.span), "R(X,Y)");
        assert_eq!(text(src, rule.body[0].span), "E(X,Y)");
        assert_eq!(rule.body[0].args[1].span, Span::new(FILE, 14..15));
    }

    #[test]
    fn ast_display_is_an_indented_tree() {
        let (file, diagnostics) = parse("R(X, a) <- E(X, _)\n?- R(\"s\", -1)\nF.\n)\n", FILE);
        assert_eq!(diagnostics.len(), 1);
        assert_eq!(
            file.to_string(),
            "File 0..38\n  Rule 0..18\n    head Atom R 0..7\n      Var X 2..3\n      Const a 5..6\n    body Atom E 11..18\n      Var X 13..14\n      Anon _ 16..17\n  Query 19..32\n    Atom R 22..32\n      Str \"s\" 24..27\n      Int -1 29..31\n  Fact Atom F 33..34\n  Error 36..37\n"
        );
    }

    #[test]
    fn integer_literals_in_every_base() {
        assert_eq!(ast::integer_literal("0x1F"), Some(31));
        assert_eq!(ast::integer_literal("-0b101u"), Some(-5));
        assert_eq!(ast::integer_literal("5u"), Some(5));
        assert_eq!(ast::integer_literal("0x"), None);
        assert_eq!(ast::integer_literal("99999999999999999999"), None);
        // Decimal literals keep their text (values are identified by it); others become
        // their decimal value.
        assert_eq!(ast::integer_text("007"), "007");
        assert_eq!(ast::integer_text("0x10"), "16");
        assert_eq!(ast::integer_text("7u"), "7");
        let (program, diagnostics) = parse_program("E(0x10). E(0b11). E(7u). R(X) <- E(X), X > 3\n", FILE);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let program = program.unwrap();
        let values: Vec<u32> = program.facts.iter().map(|f| f.values[0]).collect();
        assert_eq!(values, [16, 3, 7], "numbers, held as themselves");
    }

    #[test]
    fn parse_errors_say_what_was_found_and_expected() {
        let src = "R(X) <- E(X))\n";
        let d = errors(src);
        assert_eq!(codes_and_texts(src, &d), [("E0001", ")")]);
        assert_eq!(d[0].message, "expected `,`, `.` or end of line, found `)`");
        let src = "E(a,b)) <- F\n";
        assert_eq!(errors(src)[0].message, "expected `<-`, `.` or end of line, found `)`");
        let src = "R(X <- E(X)";
        let d = errors(src);
        assert_eq!(d[0].message, "expected `,` or `)`, found `<-`");
        assert_eq!(codes_and_texts(src, &d), [("E0001", "<-")]);
        let src = "R(X) <- E(X),";
        let d = errors(src);
        assert_eq!(d[0].message, "expected a body literal, found end of input");
        let src = "R(X) <- E(X) # F";
        assert_eq!(codes_and_texts(src, &errors(src)), [("E0001", "#")]);
    }

    #[test]
    fn several_errors_in_one_file_are_all_reported() {
        let src = "R(X <- E(X)\nS(X) <- E(X) F(X)\nT(X) <- E(X)\nU(@y) <- E(y)\nV(_) <- E(a)\nW(X) <- E(X, Y)\n";
        let d = errors(src);
        assert_eq!(
            codes_and_texts(src, &d),
            [("E0001", "<-"), ("E0001", "F"), ("E0002", "@y"), ("E0006", "_"), ("E0004", "E(X, Y)")]
        );
    }

    #[test]
    fn reserved_names_are_rejected() {
        let src = "@a:R^bf(X) <- E(X)\nS(X) <- E(X), F(@c)\n";
        assert_eq!(codes_and_texts(src, &errors(src)), [("E0002", "@a:R^bf"), ("E0002", "@c")]);
        let src = "R(X) <- E(X)\n?- @m:R^b(a)\n";
        assert_eq!(codes_and_texts(src, &errors(src)), [("E0002", "@m:R^b")]);
    }

    #[test]
    fn unsafe_rules_are_reported_at_the_variable() {
        let src = "R(X, Y) <- E(X)\nP(Z) <-\n";
        assert_eq!(codes_and_texts(src, &errors(src)), [("E0003", "Y"), ("E0003", "Z")]);
    }

    #[test]
    fn arity_mismatch_labels_both_uses() {
        let src = "R(X) <- E(X)\nS(X) <- R(X, X)\n";
        let d = errors(src);
        assert_eq!(codes_and_texts(src, &d), [("E0004", "R(X, X)")]);
        let secondary: Vec<&str> = d[0].labels.iter().filter(|l| !l.primary).map(|l| text(src, l.span)).collect();
        assert_eq!(secondary, ["R(X)"]);
    }

    #[test]
    fn inline_fact_for_a_rule_head_is_reported() {
        let src = "E(a).\nE(X) <- F(X)\n";
        let d = errors(src);
        assert_eq!(codes_and_texts(src, &d), [("E0005", "E(a)")]);
    }

    #[test]
    fn anonymous_variable_in_head_is_reported_once() {
        let src = "R(X, _) <- E(X)\n";
        assert_eq!(codes_and_texts(src, &errors(src)), [("E0006", "_")]);
    }

    #[test]
    fn query_errors() {
        let src = "R(X) <- E(X)\n?- Nope(a)\n";
        assert_eq!(codes_and_texts(src, &errors(src)), [("E0007", "Nope")]);
        let src = "R(X) <- E(X)\n?- E(a)\n";
        assert_eq!(codes_and_texts(src, &errors(src)), [("E0008", "E(a)")]);
        let src = "R(X) <- E(X)\n?- R(a, b)\n";
        assert_eq!(codes_and_texts(src, &errors(src)), [("E0004", "R(a, b)")]);
        let src = "R(X) <- E(X)\n?- R(a)\n?- R(b).\n?- R(c)";
        assert_eq!(codes_and_texts(src, &errors(src)), [("E0009", "?- R(b)"), ("E0009", "?- R(c)")]);
    }

    #[test]
    fn typed_rules_of_the_ir_listing_read_back_as_the_same_rules() {
        // The listing follows each rule with its comparisons' types as a `//` comment, so
        // a rule copied from `--emit ir` still parses to the rule it shows.
        let src = "P(X,Z) <- E(X,Y), X < Y, Z = X * 2\nQ(S) <- F(S), S != \"a\"\n";
        let program = ok(src);
        let typed: Vec<String> = program.rules.iter().map(|r| program.display_typed_rule(r).to_string()).collect();
        assert_eq!(typed[0], "P(X,Z) <- E(X,Y), X < Y, Z = X * 2  // types: number, number");
        assert_eq!(typed[1], "Q(S) <- F(S), S != a  // types: symbol");
        let again = ok(&typed.join("\n"));
        let plain = |p: &Program| -> Vec<String> { p.rules.iter().map(|r| p.display_rule(r).to_string()).collect() };
        assert_eq!(plain(&again), plain(&program));
    }

    #[test]
    fn non_ground_inline_fact_is_reported() {
        let src = "E(a, X).\nF(_)\n";
        assert_eq!(codes_and_texts(src, &errors(src)), [("E0011", "X"), ("E0011", "_")]);
    }

    #[test]
    fn command_line_query_replaces_the_file_query() {
        let mut p = ok("R(X,Y) <- E(X,Y)\n?- R(a,Y).");
        for text in ["R(b, Y)", "?- R(b,Y).", "R(b,Y)."] {
            assert!(parse_query(text, FileId(1), &mut p).is_empty());
            assert_eq!(ir::DisplayAtom(&p, &p.query.as_ref().unwrap().atom).to_string(), "R(b,Y)");
        }
        let checks = [
            ("Q(a)", "E0007", "Q"),
            ("E(a,b)", "E0008", "E(a,b)"),
            ("R(a)", "E0004", "R(a)"),
            ("R(a,", "E0001", ""),
            ("@q(a)", "E0002", "@q"),
        ];
        for (src, code, offending) in checks {
            let d = parse_query(src, FileId(1), &mut p);
            assert_eq!(codes_and_texts(src, &d), [(code, offending)], "for {src}");
            assert_eq!(d[0].primary_span().unwrap().file, FileId(1));
        }
    }

    #[test]
    fn undefined_predicates_warn_unless_facts_are_given() {
        let p = ok("R(X) <- E(X), F(X), G(X), E(X)\nG(a).\n");
        let f = p.lookup_source("F").unwrap();
        let warnings = undefined_predicate_warnings(&p, &[]);
        let texts: Vec<&str> = warnings.iter().map(|w| &w.message[..]).collect();
        assert_eq!(texts, ["`E` has no rules and no facts", "`F` has no rules and no facts"]);
        assert!(warnings.iter().all(|w| w.code == Code::UNDEFINED_PREDICATE && !w.is_error()));
        assert_eq!(undefined_predicate_warnings(&p, &[f]).len(), 1);
        // A negated atom of such a predicate always holds.
        let p = ok("R(X) <- G(X), !H(X)\nG(a).\n");
        let warnings = undefined_predicate_warnings(&p, &[]);
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].labels[0].message, "this negation always holds");
    }

    #[test]
    fn a_byte_order_mark_is_skipped_and_spans_index_the_source() {
        let src = "\u{feff}R(X) <- E(X)\n?- R(a).\n";
        let p = ok(src);
        assert_eq!(text(src, p.rules[0].head.span), "R(X)");
        let src = "\u{feff}R(X) <- E(X) #\n";
        assert_eq!(codes_and_texts(src, &errors(src)), [("E0001", "#")]);
    }

    #[test]
    fn empty_and_comment_only_programs_are_empty() {
        for src in ["", "\n\n", "% nothing\n// at all"] {
            let p = ok(src);
            assert!(p.rules.is_empty() && p.facts.is_empty() && p.query.is_none());
        }
    }

    /// Token soups made of the language's own tokens, so the parser sees near-misses.
    fn token_soup() -> impl Strategy<Value = String> {
        let token = prop::sample::select(vec![
            "R", "e", "X", "_", "_y", "7", "-3", "\"s\"", "\"", "@m", "(", ")", ",", ".", "<-", ":-", "?-", "+", "-",
            ";", "\n", "\n\n", " ", "  ", "%c\n", "//", "#", "é", "!", "not ", "=", "!=", "<", "<=", ">", ">=", "0x1F",
            "0b2", "5u", "-0x", "*", "/", "^", "mod", "band", "bnot", "lnot", "min(", "max", "((", "))",
        ]);
        prop::collection::vec(token, 0..40).prop_map(|tokens| tokens.concat())
    }

    fn run_everything(src: &str) {
        let _ = parse_program(src, FILE);
        let mut p = parse_program("R(X,Y) <- E(X,Y)\n", FILE).0.unwrap();
        let _ = parse_fact_atoms(src, FILE, &mut p);
        let _ = parse_updates(src, FILE, &mut p);
        let _ = parse_update_atom(src, FILE, &mut p);
        let _ = parse_query(src, FILE, &mut p);
        let _ = parse_delimited_facts(src, FILE, "E", ',', &mut p);
        let _ = parse_delimited_facts(src, FILE, "New", '\t', &mut p);
    }

    /// Programs near the language's edge, with aggregates (and arithmetic) wherever a
    /// term may go: in heads, facts, atoms' arguments, negations and comparisons, nested,
    /// with keys, locals, witnesses and unbound values. Lowering them must report or
    /// succeed, never panic.
    fn aggregate_program() -> impl Strategy<Value = String> {
        // Mostly terms that can pass the checks, so that lowering sees many programs.
        let term = prop_oneof![
            6 => prop::sample::select(vec!["X", "X", "1", "X + 1", "_"]),
            6 => prop::sample::select(vec![
                "count : E(X, _)",
                "sum Y : { E(Y, X) }",
                "min Z : E(_, Z)",
                "max Y : { E(X, Y), !F(Y) }",
                "X + count : F(_)",
                "min Y + 1 : { F(Y), Y > X }",
            ]),
            1 => prop::sample::select(vec![
                "Y",
                "Z",
                "count : { E(X, Y), Y = sum Z : E(Z, _) }",
                "sum W : F(X)",
                "mean Y : F(Y)",
            ]),
        ];
        // Each predicate has one arity: E and R two, F and S one. Rules derive R and S;
        // aggregates read E and F, so they are stratified.
        let atom = |preds: Vec<&'static str>| {
            (prop::sample::select(preds), term.clone(), term.clone()).prop_map(|(p, a, b)| match p {
                "E" | "R" => format!("{p}({a}, {b})"),
                _ => format!("{p}({a})"),
            })
        };
        let literal = prop_oneof![
            3 => atom(vec!["E", "F", "R", "S"]),
            1 => atom(vec!["E", "F"]).prop_map(|a| format!("!{a}")),
            2 => (term.clone(), prop::sample::select(vec!["=", "<", "!="]), term.clone())
                .prop_map(|(l, op, r)| format!("{l} {op} {r}")),
        ];
        let fact = prop_oneof![
            2 => prop::sample::select(vec!["E(1, 2)", "E(2, 2)", "F(1)", "F(3)"]).prop_map(String::from),
            1 => atom(vec!["R", "S"]),
        ];
        let statement = prop_oneof![
            1 => fact,
            3 => (atom(vec!["R", "S"]), prop::collection::vec(literal, 0..4))
                .prop_map(|(h, b)| format!("{h} <- {}", b.join(", "))),
        ];
        prop::collection::vec(statement, 1..5).prop_map(|statements| statements.join("\n") + "\n")
    }

    /// [`aggregate_program`]'s text as a Soufflé program: lower-case names, declarations,
    /// `:-` and a `.` after each clause.
    fn souffle_text(src: &str) -> String {
        let mut out = String::from(".decl e(x:number, y:number)\n.decl f(x:number)\n.decl r(x:number, y:number)\n");
        out += ".decl s(x:number)\n.output r\n";
        for line in src.lines() {
            let line = line.to_lowercase().replace("<-", ":-");
            out += &format!("{}.\n", line.trim_end_matches(" :- "));
        }
        out
    }

    proptest! {
        #[test]
        fn arbitrary_strings_never_panic(src in any::<String>()) {
            run_everything(&src);
        }

        #[test]
        fn aggregates_anywhere_never_panic(src in aggregate_program()) {
            let (program, diagnostics) = parse_program(&src, FILE);
            prop_assert_eq!(program.is_some(), !diag::has_errors(&diagnostics), "{}", src);
            let souffle = souffle_text(&src);
            let (program, diagnostics) = crate::souffle::parse_program(&souffle, FILE, &mut crate::souffle::NoIncludes);
            prop_assert_eq!(program.is_some(), !diag::has_errors(&diagnostics), "{}", souffle);
        }

        #[test]
        fn token_soups_never_panic(src in token_soup()) {
            run_everything(&src);
            // Every report points inside the source.
            let (_, diagnostics) = parse_program(&src, FILE);
            for d in &diagnostics {
                for label in &d.labels {
                    prop_assert!(label.span.end as usize <= src.len() && label.span.start <= label.span.end);
                }
            }
        }
    }
}
