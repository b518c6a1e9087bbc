//! Tests of the Soufflé front end: what it reads, and what it reports as unsupported.

use super::*;
use ir::ValueType;

const FILE: FileId = FileId(0);

fn ok(src: &str) -> SouffleProgram {
    let (program, diagnostics) = parse_program(src, FILE, &mut NoIncludes);
    assert!(diagnostics.is_empty(), "unexpected diagnostics: {diagnostics:#?}");
    program.expect("no errors means a program")
}

/// The text of the first field of each fact in the program, in order.
fn first_fields(s: &SouffleProgram) -> Vec<String> {
    s.program.facts.iter().map(|f| s.program.value_text(s.program.value(f.pred, 0, f.values[0]))).collect()
}

fn rules(p: &Program) -> Vec<String> {
    p.rules.iter().map(|r| ir::DisplayRule(p, r).to_string()).collect()
}

/// (code, text of the primary span, message) of each diagnostic of a failing program.
fn errors(src: &str) -> Vec<(&'static str, String, String)> {
    let (program, diagnostics) = parse_program(src, FILE, &mut NoIncludes);
    assert!(program.is_none(), "expected errors in {src:?}");
    diagnostics
        .iter()
        .map(|d| (d.code.0, src[d.primary_span().expect("spanned").range()].to_string(), d.message.clone()))
        .collect()
}

#[test]
fn transitive_closure_with_io_directives() {
    let src = "// tc\n.decl edge(x:number, y:number)\n.input edge\n.decl path(x:number, y:number)\n.output path\n\
               path(x, y) :- edge(x, y).\npath(x, z) :- path(x, y), edge(y, z).\n";
    let s = ok(src);
    assert_eq!(rules(&s.program), ["path(x,y) <- edge(x,y)", "path(x,z) <- path(x,y), edge(y,z)"]);
    let name = |io: &Io| s.program.pred_name(io.pred);
    assert_eq!(s.inputs.iter().map(name).collect::<Vec<_>>(), ["edge"]);
    assert_eq!(s.outputs.iter().map(name).collect::<Vec<_>>(), ["path"]);
    assert_eq!((s.inputs[0].delimiter.as_str(), s.inputs[0].filename.as_deref()), ("\t", None));
}

#[test]
fn multiple_heads_disjunction_facts_and_constants() {
    let src = r#".decl a(x:symbol) .decl b(x:symbol) .decl c(x:symbol, y:number) .decl d(x:symbol)
        c("k", 01). c("m", -2). d("z").
        a(x), b(x) :- c(x, _) ; (d(x), c(x, 0x10)).
        d(x) :- a(x).
    "#;
    let s = ok(src);
    assert_eq!(
        rules(&s.program),
        [
            "d(z) <-",
            "a(x) <- c(x,_0)",
            "a(x) <- d(x), c(x,16)",
            "b(x) <- c(x,_0)",
            "b(x) <- d(x), c(x,16)",
            "d(x) <- a(x)"
        ]
    );
    // `c` has no rules: its facts are input facts; numbers are read as numbers (`01` is 1).
    let facts: Vec<String> = s
        .program
        .facts
        .iter()
        .map(|f| {
            (0..f.values.len())
                .map(|i| s.program.value_text(s.program.value(f.pred, i, f.values[i])))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    assert_eq!(facts, ["k,1", "m,-2"]);
}

/// `IO=sqlite` keeps its `dbname` and `filename`; `.output r` beside `.output
/// r(IO=sqlite)` is a second output, not the same one written twice.
#[test]
fn sqlite_directives_keep_their_database() {
    let s = ok(".decl e(x:number)\n.input e(IO=sqlite, dbname=\"in.db\")\n.decl r(x:number)\n\
                .output r\n.output r(IO=sqlite, filename=\"out.db\")\nr(x) :- e(x).\n");
    assert!(s.inputs[0].sqlite);
    assert_eq!((s.inputs[0].dbname.as_deref(), s.inputs[0].filename.as_deref()), (Some("in.db"), None));
    assert_eq!(s.outputs.len(), 2);
    assert_eq!((s.outputs[0].sqlite, s.outputs[1].sqlite), (false, true));
    assert_eq!(s.outputs[1].filename.as_deref(), Some("out.db"));
    // Soufflé 2.5 prints a `.printsize`'s count to standard output whatever its `IO`
    // says: `IO=sqlite` writes no database.
    let s = ok(".decl r(x:number)\nr(1).\n.printsize r(IO=sqlite, dbname=\"r.db\")\n");
    assert_eq!((s.printsize[0].sqlite, s.printsize[0].stdout), (false, true));
}

#[test]
fn io_parameters_types_qualifiers_and_true() {
    let src = r#".type Node <: symbol
        .type Id = number
        .type Either = Node | symbol
        .decl e(x:Node, y:Node) brie
        .input e(IO=file, filename="edges.csv", delimiter=",")
        .decl r(x:Node) magic
        .output r(IO=stdout)
        .printsize r
        r(x) :- e(x, _), true.
        r(x) :- e(_, x), false.
    "#;
    let s = ok(src);
    assert_eq!(rules(&s.program), ["r(x) <- e(x,_0)"]);
    assert_eq!((s.inputs[0].filename.as_deref(), s.inputs[0].delimiter.as_str()), (Some("edges.csv"), ","));
    assert!(s.outputs[0].stdout);
    assert_eq!(s.printsize.len(), 1);
    let types = |s: &SouffleProgram, io: &Io| s.program.pred(io.pred).types.clone();
    assert_eq!(types(&s, &s.inputs[0]), [ValueType::Symbol, ValueType::Symbol]);
    let s = ok(".type A <: number\n.type U <: unsigned\n.type B = U | unsigned\n.type S <: symbol\n.type C = S | symbol\n.number_type D\n\
                .decl r(a:A, b:B, c:C, d:D, e:number, f:symbol, g:Unknown)\n.output r\n");
    use ValueType::{Number, Symbol, Unsigned};
    assert_eq!(types(&s, &s.outputs[0]), [Number, Unsigned, Symbol, Number, Number, Symbol, Symbol]);
}

#[test]
fn declared_but_unused_relations_exist() {
    let s = ok(".decl e(x:number)\n.decl r(x:number, y:symbol)\n.output r\n");
    let r = s.program.lookup_source("r").unwrap();
    assert_eq!(s.program.pred(r).arity, 2);
}

#[test]
fn unsupported_constructs_are_named_at_their_span() {
    let decls = ".decl e(x:number, y:number)\n.decl r(x:number)\n";
    let cases: &[(&str, &str, &str)] = &[
        (
            "r(c) :- c = sum (count : e(_, _)) : e(_, _).",
            "count : e(_, _)",
            "an aggregate as the value of an aggregate is not supported",
        ),
        (
            "r(c) :- c = count : { e(_, _) ; e(_, _) }.",
            "{ e(_, _) ; e(_, _) }",
            "a disjunction inside an aggregate is not supported",
        ),
        ("r(x) :- e(x, itof(1)).", "itof", "the functor `itof(...)` is not supported"),
        (
            ".functor f(x: number): number stateful",
            ".functor f(x: number): number stateful",
            "a stateful functor (`stateful`) is not supported",
        ),
        ("r(x) :- e(x, $).", "$", "`$` (the counter) is not supported"),
        (".lattice L<number> { }", ".lattice", "the directive `.lattice` is not supported"),
        (
            "#include_next \"a.dl\"",
            "#include_next \"a.dl\"",
            "the preprocessor directive `#include_next` is not supported",
        ),
        (".input e(IO=json)", "IO=json", "`IO=json` is not supported"),
    ];
    for (text, offending, message) in cases {
        let src = format!("{decls}{text}\n");
        let found = errors(&src);
        assert_eq!(found.len(), 1, "{text}: {found:?}");
        assert_eq!(found[0], ("E0018", offending.to_string(), message.to_string()), "{text}");
    }
}

#[test]
fn an_equivalence_relation_is_binary_over_one_type() {
    let cases = [
        (".decl q(x:number) eqrel\n", "eqrel", "the equivalence relation `q` has 1 columns, not two"),
        (
            ".decl q(x:number, y:symbol) eqrel\n",
            "symbol",
            "the columns of the equivalence relation `q` have different types",
        ),
        (
            ".type A <: number\n.type B <: number\n.decl p, q(x:A, y:B) eqrel\n",
            "B",
            "the columns of the equivalence relation `p`, `q` have different types",
        ),
    ];
    for (src, offending, message) in cases {
        let found = errors(src);
        assert_eq!(found, [("E0034", offending.to_string(), message.to_string())], "{src}");
    }
}

#[test]
fn an_equivalence_relation_is_derived_with_the_rules_of_its_closure() {
    let s = ok(".decl e(x:number, y:number)\n.input e\n.decl q(x:number, y:number) eqrel\n.input q\n.output q\nq(1, 2).\nq(x, y) :- e(x, y).\n");
    let q = s.program.lookup_source("q").expect("q is declared");
    assert_eq!(s.program.pred(q).kind, ir::PredKind::Idb);
    // The fact, the rule of `e`, three closure rules and the copy of the input.
    let expected = [
        "q(1,2) <-",
        "q(x,y) <- e(x,y)",
        "q(x,x) <- q(x,y)",
        "q(x,y) <- q(y,x)",
        "q(x,z) <- q(x,y), q(y,z)",
        "q(x0,x1) <- q_input(x0,x1)",
    ];
    assert_eq!(rules(&s.program), expected);
}

#[test]
fn a_choice_domain_names_its_keys_by_attribute() {
    let s = ok(".decl e(x:number, y:number, z:number)\n.input e\n\
                .decl r(x:number, y:number, z:number) choice-domain z, (y, x) btree\nr(1, 2, 3).\nr(x, y, z) :- e(x, y, z).\n");
    let r = s.program.lookup_source("r").expect("r is declared");
    let choice = s.program.pred(r).choice.as_ref().expect("r has a choice domain");
    assert_eq!(choice.keys, [vec![2], vec![0, 1]]);
    // Its fact is a candidate as a rule's head is: a rule with an empty body.
    assert_eq!(s.program.pred(r).kind, ir::PredKind::Idb);
    assert!(s.program.facts.is_empty());
    let e = s.program.lookup_source("e").expect("e is declared");
    assert_eq!(s.program.pred(e).choice, None);
    let cases = [
        (".decl r(x:number) choice-domain y\n", "y", "E0034", "the relation has no attribute `y`"),
        (
            ".decl r(x:number) choice-domain\n",
            "",
            "E0001",
            "expected an attribute of the relation, or `(` and several, found end of input",
        ),
    ];
    for (src, offending, code, message) in cases {
        let found = errors(src);
        assert_eq!(found.first(), Some(&(code, offending.to_string(), message.to_string())), "{src}: {found:?}");
    }
}

#[test]
fn symbols_are_ordered_by_text_and_a_symbol_is_not_compared_with_a_number() {
    let src = ".decl s(x:symbol)\n.decl n(x:number)\n.decl r(x:symbol)\nr(x) :- s(x), s(y), x < y, x >= \"b\".\n";
    let s = ok(src);
    let domains: Vec<ir::ValueType> = s.program.rules[0].comparisons.iter().map(|c| c.domain).collect();
    assert_eq!(domains, [ir::ValueType::Symbol, ir::ValueType::Symbol]);
    let numbers = ok(".decl n(x:number)\n.decl r(x:number)\nr(x) :- n(x), n(y), x < y.\n");
    assert_eq!(numbers.program.rules[0].comparisons[0].domain, ir::ValueType::Number);
    let found = errors(".decl s(x:symbol)\n.decl n(x:number)\n.decl r(x:symbol)\nr(x) :- s(x), n(y), x < y.\n");
    assert_eq!(found[0].0, "E0018");
    assert_eq!(found[0].2, "an ordering comparison (`<`) of a symbol with a number is not supported");
}

#[test]
fn declaration_lists_pragmas_and_derived_inputs() {
    let src = ".decl a, b(x:number)\n.pragma \"magic-transform\" \"*\"\n.input a\n.input b\n\
               b(x) :- a(x), x > 0.\n";
    let s = ok(src);
    // `b` is read into `b_input` and copied into `b` by a rule of its own.
    assert_eq!(rules(&s.program), ["b(x) <- a(x), x > 0", "b(x0) <- b_input(x0)"]);
    let name = |io: &Io| s.program.pred_name(io.pred);
    assert_eq!(s.inputs.iter().map(name).collect::<Vec<_>>(), ["a", "b_input"]);
    assert_eq!(s.inputs[1].filename.as_deref(), Some("b.facts"));
    assert_eq!(s.program.pred(s.inputs[1].pred).types, [ValueType::Number]);
    // A pragma that names a directory is ignored with a warning.
    let (program, diagnostics) =
        parse_program(".pragma \"fact-dir\" \"x\"\n.decl a(x:number)\n", FILE, &mut NoIncludes);
    assert!(program.is_some());
    assert_eq!(diagnostics.iter().map(|d| d.code.0).collect::<Vec<_>>(), ["W0004"]);
    assert!(looks_like_souffle("#include \"decls.dl\"\nr(x) :- e(x).\n"));
}

#[test]
fn negations_and_comparisons_are_read() {
    let src = ".decl e(x:number, y:number)\n.decl r(x:number)\n\
               r(x) :- e(x, _), !e(_, x).\nr(x) :- e(x, y), x < y, y != 3.\nr(x) :- e(x, y), z = y, !r(z).\n";
    let (program, diagnostics) = parse_program(src, FILE, &mut NoIncludes);
    // The last rule reads `r` negatively inside `r`'s own stratum.
    assert_eq!(diagnostics.iter().map(|d| d.code.0).collect::<Vec<_>>(), ["E0022"]);
    assert!(program.is_none());
    let s = ok(&src.replace(", !r(z)", ", !e(z, z)"));
    assert_eq!(
        rules(&s.program),
        ["r(x) <- e(x,_0), !e(_1,x)", "r(x) <- e(x,y), x < y, y != 3", "r(x) <- e(x,y), !e(z,z), z = y"]
    );
}

#[test]
fn declarations_are_checked() {
    let src =
        ".decl e(x:number)\n.decl e(y:number)\n.decl r(x:number)\nr(x) :- e(x), f(x).\nr(x, y) :- e(x).\n.output g\n";
    let found: Vec<(&str, String)> = errors(src).into_iter().map(|(c, t, _)| (c, t)).collect();
    assert_eq!(
        found,
        [("E0020", "e".into()), ("E0019", "f".into()), ("E0004", "r(x, y)".into()), ("E0019", "g".into())]
    );
}

#[test]
fn syntax_errors_recover_at_the_next_clause() {
    let src = ".decl r(x:number)\n.decl e(x:number)\nr(x) :- e(x)\nr(x) :- e(x).\nr(x :- e(x).\n";
    let found = errors(src);
    assert_eq!(found.iter().map(|(c, _, _)| *c).collect::<Vec<_>>(), ["E0001", "E0001"]);
    assert_eq!(found[0].2, "expected `,`, `;` or `.`, found `r`");
}

#[test]
fn defines_and_includes() {
    struct Files;
    impl Includes for Files {
        fn include(&mut self, _from: FileId, path: &str, _angled: bool) -> Result<(FileId, String), String> {
            match path {
                "decls.dl" => Ok((FileId(1), ".decl e(x:number, y:number)\n.input e\n".to_string())),
                "bad.dl" => Ok((FileId(2), "q(1).\n".to_string())),
                _ => Err("no such file".to_string()),
            }
        }
    }
    let src = "#include \"decls.dl\" // the declarations\n#define START 7\n#define FROM START\n.decl r(y:number)\n.output r\nr(y) :- e(FROM, y).\n";
    let (program, diagnostics) = parse_program(src, FILE, &mut Files);
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
    let s = program.unwrap();
    assert_eq!(rules(&s.program), ["r(y) <- e(7,y)"]);
    // A report about an included file points into it.
    let (_, diagnostics) = parse_program("#include \"bad.dl\"\n.decl r(x:number)\n", FILE, &mut Files);
    assert_eq!(diagnostics[0].code, Code::UNDECLARED_RELATION);
    assert_eq!(diagnostics[0].primary_span().unwrap(), Span::new(FileId(2), 0..1));
    let (_, diagnostics) = parse_program("#include \"nope.dl\"\n.decl r(x:number)\n", FILE, &mut Files);
    assert_eq!(diagnostics[0].code, Code::UNREADABLE_FILE);
    assert_eq!(diagnostics[0].message, "cannot include `nope.dl`: no such file");
}

#[test]
fn a_self_include_stops_at_the_depth_bound() {
    struct Again;
    impl Includes for Again {
        fn include(&mut self, _from: FileId, _path: &str, _angled: bool) -> Result<(FileId, String), String> {
            Ok((FileId(1), "#include \"me.dl\"\n".to_string()))
        }
    }
    let (_, diagnostics) = parse_program("#include \"me.dl\"\n.decl r(x:number)\n", FILE, &mut Again);
    assert_eq!(diagnostics.len(), 1);
    assert!(diagnostics[0].message.contains("nested more than"));
}

#[test]
fn deep_parentheses_are_bounded_not_recursed_without_limit() {
    let body = format!("{}e(x){}", "(".repeat(100), ")".repeat(100));
    let src = format!(".decl e(x:number)\n.decl r(x:number)\nr(x) :- {body}.\n");
    let found = errors(&src);
    assert_eq!(found[0].0, "E0018");
}

#[test]
fn queries_in_souffle_syntax() {
    let mut p = ok(".decl e(x:number, y:number)\n.decl r(x:number, y:number)\nr(x, y) :- e(x, y).\n").program;
    assert!(parse_query("r(1, y)", FileId(1), &mut p).is_empty());
    assert_eq!(ir::DisplayAtom(&p, &p.query.as_ref().unwrap().atom).to_string(), "r(1,y)");
    assert!(parse_query("?- r(2, _).", FileId(1), &mut p).is_empty());
    assert_eq!(
        parse_query("r(\"a\", _)", FileId(1), &mut p)[0].code,
        Code::TYPE_MISMATCH,
        "a symbol in a number column"
    );
    assert_eq!(parse_query("r(2147483648, _)", FileId(1), &mut p)[0].code, Code::NUMBER_OUT_OF_RANGE);
    let d = parse_query("r(1, y) x", FileId(1), &mut p);
    assert_eq!(d[0].code, Code::PARSE);
    assert_eq!(parse_query("e(1, y)", FileId(1), &mut p)[0].code, Code::QUERY_EDB);
}

#[test]
fn dialect_detection() {
    assert!(looks_like_souffle("// x\n  .decl e(x:number)\n"));
    assert!(!looks_like_souffle("R(X) <- E(X). % .decl\n"));
    assert!(looks_like_souffle("// only types\n.type Name <: symbol\n"));
    assert!(looks_like_souffle("// an empty program\n\n/* nothing\n * else\n */\n"));
    assert!(!looks_like_souffle("% facts, no query\nE(1, 2)\n"));
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    fn soup() -> impl Strategy<Value = String> {
        let token = prop::sample::select(vec![
            ".decl",
            ".input",
            ".output",
            ".type",
            ".comp",
            ".init",
            ".override",
            "C",
            "g.e",
            ">",
            "e",
            "x",
            "_",
            "7",
            "-",
            "\"s\"",
            "\"",
            "(",
            ")",
            ",",
            ".",
            ":-",
            ":",
            ";",
            "!",
            "=",
            "<",
            "{",
            "}",
            "#include \"a\"\n",
            "#define A e\n",
            "#if\n",
            "/*",
            "*/",
            "//",
            "\n",
            " ",
            "number",
            "symbol",
            "count",
            "@",
            "$",
            "[",
            "0x",
            "1.5",
            "é",
            "+",
            "*",
            "/",
            "%",
            "^",
            "band",
            "bshru",
            "lxor",
            "bnot",
            "lnot",
            "min(",
            "max",
            "((",
            "))",
        ]);
        prop::collection::vec(token, 0..40).prop_map(|tokens| tokens.join(" "))
    }

    /// Programs of up to five components that derive from, instantiate and nest each
    /// other at random (cycles, self-instances, unknown names and wrong argument counts
    /// included), with instances of them at the top level.
    fn components() -> impl Strategy<Value = String> {
        let component = (0usize..7, 0usize..7, 0usize..7, any::<bool>(), any::<bool>(), any::<bool>());
        (prop::collection::vec(component, 1..6), prop::collection::vec(0usize..7, 0..3)).prop_map(|(components, inits)| {
            let name = |i: usize| if i < 6 { format!("C{i}") } else { "Nope".to_string() };
            let mut src = String::new();
            for (i, (base, nested, inner, generic, overridable, overrides)) in components.iter().enumerate() {
                let parameters = if *generic { "<T>" } else { "" };
                let bases = if *base < 6 { format!(" : {}", name(*base)) } else { String::new() };
                let qualifier = if *overridable { " overridable" } else { "" };
                let override_r = if *overrides { ".override r" } else { "" };
                src += &format!(
                    ".comp C{i}{parameters}{bases} {{\n .decl r(x: number){qualifier}\n {override_r}\n r(1).\n                      s(x) :- r(x), i.r(x).\n .init i = {}\n .comp In : {} {{ .init j = {} }}\n .init k = In\n}}\n",
                    name(*nested),
                    name(*inner),
                    name(*base),
                );
            }
            for (n, init) in inits.iter().enumerate() {
                src += &format!(".init top{n} = {}<number>\n.init bare{n} = {}\n.output top{n}.r\n", name(*init), name(*init));
            }
            src += ".decl s(x: number)\n.output s\n";
            src
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Deep expressions are a syntax error past the nesting limit, never a deep
        /// recursion: chains, parentheses and prefix operators alike.
        #[test]
        fn deep_expressions_never_overflow(depth in 0usize..3000, kind in 0usize..4) {
            let expression = match kind {
                0 => format!("{}x{}", "(".repeat(depth), ")".repeat(depth)),
                1 => vec!["x"; depth + 1].join(" ^ "),
                2 => vec!["x"; depth + 1].join(" + "),
                _ => format!("{}x", "- bnot ".repeat(depth)),
            };
            let src = format!(".decl e(x:number)\n.decl r(x:number)\nr(y) :- e(x), y = {expression}.\n");
            // Levels of nesting: each prefix operator, parenthesis and operator of a chain.
            let levels = if kind == 3 { 2 * depth } else { depth };
            let fits = |ok: bool| if levels < crate::expr::MAX_DEPTH { ok } else { levels <= crate::expr::MAX_DEPTH + 1 || !ok };
            let (program, diagnostics) = parse_program(&src, FILE, &mut NoIncludes);
            prop_assert_eq!(program.is_some(), diagnostics.is_empty());
            prop_assert!(fits(program.is_some()), "{} {}", kind, depth);
            // The dlc dialect reads them with the same grammar.
            let dlc = format!("R(Y) <- E(X), Y = {}\n?- R(Y).\n", expression.replace('x', "X"));
            let (program, diagnostics) = crate::parse_program(&dlc, FILE);
            prop_assert_eq!(program.is_some(), diagnostics.is_empty());
            prop_assert!(fits(program.is_some()), "{} {}", kind, depth);
        }

        #[test]
        fn token_soups_never_panic(src in soup()) {
            let (_, diagnostics) = parse_program(&src, FILE, &mut NoIncludes);
            for d in &diagnostics {
                for label in &d.labels {
                    prop_assert!(label.span.end as usize <= src.len() && label.span.start <= label.span.end);
                }
            }
            let mut p = Program::new();
            let _ = parse_query(&src, FILE, &mut p);
        }

        #[test]
        fn random_components_never_panic(src in components()) {
            let (program, diagnostics) = parse_program(&src, FILE, &mut NoIncludes);
            prop_assert_eq!(program.is_some(), !diag::has_errors(&diagnostics), "{}", src);
            for d in &diagnostics {
                for label in &d.labels {
                    prop_assert!(label.span.end as usize <= src.len() && label.span.start <= label.span.end);
                }
            }
        }

        #[test]
        fn arbitrary_strings_never_panic(src in any::<String>()) {
            let _ = parse_program(&src, FILE, &mut NoIncludes);
        }
    }
}

#[test]
fn unsigned_values_are_ordered_as_unsigned_and_not_compared_with_numbers() {
    let src = ".type U <: unsigned\n.decl u(x:U)\n.decl r(x:unsigned)\nr(x) :- u(x), u(y), x < y, 5 <= x.\n";
    let domains: Vec<ir::ValueType> = ok(src).program.rules[0].comparisons.iter().map(|c| c.domain).collect();
    assert_eq!(domains, [ir::ValueType::Unsigned, ir::ValueType::Unsigned]);
    let found = errors(".decl u(x:unsigned)\n.decl n(x:number)\n.decl r(x:number)\nr(x) :- n(x), u(y), x < y.\n");
    assert_eq!(found[0].0, "E0018");
    assert_eq!(found[0].2, "an ordering comparison (`<`) of a `number` with an `unsigned` is not supported");
    let found = errors(".decl u(x:unsigned)\n.decl r(x:unsigned)\nr(x) :- u(x), x > -1.\n");
    assert_eq!(found[0].0, "E0024");
}

/// Arithmetic reads with Soufflé's precedence, in heads, atoms and comparisons; an
/// expression argument becomes a fresh variable and an assignment.
#[test]
fn arithmetic_reads_with_souffles_precedence() {
    let src = ".decl e(x:number, y:number)\n.decl r(x:number, y:number)\n\
               r(x + 1, -2 ^ 2) :- e(x, y), !e(y band 3, _), (x + 1) * 2 < y, z = x % 3 bshl 1 + 1, e(z, max(1, y, 2)).\n";
    let s = ok(src);
    assert_eq!(
        rules(&s.program),
        ["r(_0,-4) <- e(x,y), e(z,_3), !e(_1,_2), (x + 1) * 2 < y, z = x mod 3 bshl 1 + 1, _0 = x + 1, _1 = y band 3, \
          _3 = max(max(1, y), 2)"]
    );
    // A prefix word before `(` starts an expression, not an atom.
    ok(".decl e(x:number)\n.decl r(x:number)\nr(x) :- e(x), bnot (x) > lnot (x).\n");
    // `(` starts a disjunction as before.
    let s = ok(".decl e(x:number)\n.decl r(x:number)\nr(x) :- e(x), ((x + 1) > 2 ; e(x + 1)).\n");
    assert_eq!(s.program.rules.len(), 2);
    for (text, offending, message) in [
        ("r(x, x) :- e(x, y), x = -y.", "-", "`-` negates a value of an `unsigned` column or expression"),
        ("r(x, 1 / 0) :- e(x, _).", "1 / 0", "this expression has no value: it divides by zero"),
    ] {
        let decls = ".decl e(x:unsigned, y:unsigned)\n.decl r(x:unsigned, y:unsigned)\n";
        let found = errors(&format!("{decls}{text}\n"));
        assert_eq!(found.len(), 1, "{text}: {found:?}");
        assert_eq!((found[0].1.as_str(), found[0].2.as_str()), (offending, message), "{text}");
    }
    let found = errors(".decl s(x:symbol)\n.decl r(x:number)\nr(x + 1) :- s(x).\n");
    assert_eq!(found[0].0, "E0030", "{found:?}");
    assert_eq!(found[0].1, "+");
}

/// Every form of aggregate is read, in the shared expression grammar, into the AST;
/// one the engines cannot evaluate yet is reported with its group keys.
#[test]
fn aggregates_are_read_in_every_form() {
    let decls = ".decl e(x:number, y:number)\n.decl r(x:number, n:number)\n";
    let body = "r(x, n) :- e(x, _), n = 1 + min y : { e(x, y), y > 0 }, 0 < count : e(_, x), n != sum y * 2 : e(y, x).";
    let (file, diagnostics) = parse(&format!("{decls}{body}\n"), FILE, &mut NoIncludes);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let ast = file.to_string();
    for expected in ["Aggregate min", "Aggregate count", "Aggregate sum", "value Binary * "] {
        assert!(ast.contains(expected), "{expected} in {ast}");
    }
    // Each becomes a reduction; the rule reads their values.
    let lowered = rules(&ok(&format!("{decls}{body}\n")).program);
    let reductions: Vec<&String> = lowered.iter().filter(|r| r.contains(" : ")).collect();
    assert_eq!(
        reductions,
        [
            "r_agg(x,N) <- N = min V : r_agg_rows(x,_0,V)",
            "r_agg_2(x,N) <- N = count : r_agg_2_rows(x,_0)",
            "r_agg_3(x,N) <- N = sum V : r_agg_3_rows(x,_0,V)"
        ]
    );
    assert_eq!(
        lowered.last().unwrap(),
        "r(x,n) <- e(x,_0), r_agg(x,Agg), r_agg_2_all(x,Agg1), r_agg_3_all(x,Agg2), n = 1 + Agg, 0 < Agg1, n != Agg2"
    );
    // `min(a, b)` is still the function, and `count` a variable where no `:` follows.
    ok(".decl e(x:number, y:number)\n.decl r(x:number)\nr(m) :- e(count, y), m = min(count, y).\n");
}

#[test]
fn an_aggregate_over_its_own_head_names_the_cycle() {
    let src = ".decl p(x:number)\n.decl q(x:number)\np(1).\nq(x) :- p(x).\np(n) :- n = count : { q(_) }.\n";
    let found = errors(src);
    assert_eq!(found, [("E0033", "q(_)".to_string(), "`p` aggregates over itself".to_string())]);
}

#[test]
fn an_inlined_clause_may_leave_variables_to_its_use_and_no_inline_wins() {
    // As in Soufflé, an inlined clause is checked where it is unfolded: `abs(x, y)`
    // binds `x` at its use, so `abs(X, X) :- X >= 0.` is safe there.
    let src = ".decl a(x:number)\na(1).\n.decl abs(i:number, o:number) inline\nabs(x, x) :- x >= 0.\n\
               abs(x, y) :- x < 0, y = 0 - x.\n.decl c(x:number, y:number)\nc(x, y) :- a(x), abs(x - 3, y).\n.output c\n";
    assert_eq!(rules(&ok(src).program).len(), 2);
    // `no_inline`, given with `inline` or by `.pragma "inline-exclude"`, keeps the
    // relation: its clause is then unsafe on its own.
    for excluded in
        [src.replace("inline\n", "inline no_inline\n"), format!(".pragma \"inline-exclude\" \"abs\"\n{src}")]
    {
        let codes: Vec<&str> = errors(&excluded).iter().map(|(code, _, _)| *code).collect();
        assert!(codes.contains(&"E0003"), "{codes:?}");
    }
}

#[test]
fn io_qualifiers_of_a_decl_act_as_the_directives() {
    let src = ".decl e(x:number) input\n.decl r(x:number) output\n.output r\n.decl s(x:number) printsize\n\
               r(x) :- e(x).\ns(x) :- e(x).\n";
    let (program, diagnostics) = parse_program(src, FILE, &mut NoIncludes);
    let s = program.expect("warnings only");
    let warned: Vec<&str> = diagnostics.iter().map(|d| &src[d.primary_span().unwrap().range()]).collect();
    assert_eq!(warned, ["input", "output", "printsize"]);
    assert!(diagnostics.iter().all(|d| d.code == Code::DEPRECATED_SOUFFLE));
    let names = |ios: &[Io]| ios.iter().map(|io| s.program.pred_name(io.pred)).collect::<Vec<_>>();
    // The qualifier and `.output r` write `r` once.
    assert_eq!(
        (names(&s.inputs), names(&s.outputs), names(&s.printsize)),
        (vec!["e".to_string()], vec!["r".to_string()], vec!["s".to_string()])
    );
    assert!(s.printsize[0].stdout);
    let errors = errors(".decl r(x:number) output brie output\n.decl s(x:number) printsize\n.printsize s\n");
    let codes: Vec<(&str, &str)> = errors.iter().filter(|e| e.0 != "W0006").map(|(c, t, _)| (*c, t.as_str())).collect();
    assert_eq!(codes, [("E0034", "output"), ("E0034", "s")]);
}

#[test]
fn negations_of_groups_are_pushed_inward() {
    let decls = ".decl a(x:number)\n.decl b(x:number)\n.decl c(x:number)\n.decl r(x:number)\n";
    let read = |body: &str| rules(&ok(&format!("{decls}r(x) :- {body}.\n")).program);
    assert_eq!(read("a(x), !(b(x) ; c(x))"), ["r(x) <- a(x), !b(x), !c(x)"]);
    assert_eq!(read("a(x), !(b(x), c(x))"), ["r(x) <- a(x), !b(x)", "r(x) <- a(x), !c(x)"]);
    assert_eq!(read("a(x), !!!(b(x), !c(x))"), ["r(x) <- a(x), !b(x)", "r(x) <- a(x), c(x)"]);
    assert_eq!(read("a(x), !!b(x)"), ["r(x) <- a(x), b(x)"]);
    assert_eq!(read("a(x), !x > 2, !(x = 1 ; true)"), Vec::<String>::new());
    assert_eq!(read("a(x), !x > 2"), ["r(x) <- a(x), x <= 2"]);
    // Ten negated conjunctions of two literals multiply out to 2^10 rules: over the bound.
    let wide = ["!(b(x), c(x))"; 11].join(", ");
    let errors = errors(&format!("{decls}r(x) :- a(x), {wide}.\n"));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].2.contains("expanding to more than"), "{errors:?}");
}

#[test]
fn dot_include_once_and_a_bare_type() {
    struct Files;
    impl Includes for Files {
        fn include(&mut self, _from: FileId, path: &str, _angled: bool) -> Result<(FileId, String), String> {
            match path {
                "once.dl" => Ok((FileId(1), "e(\"a\").\n.once\n.decl e(x:T)\n".to_string())),
                _ => Err("no such file".to_string()),
            }
        }
    }
    let src = ".type T\n.include \"once.dl\"\n.include \"once.dl\"\n.output e\n";
    let (program, diagnostics) = parse_program(src, FILE, &mut Files);
    let codes: Vec<Code> = diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::DEPRECATED_SOUFFLE]);
    let s = program.expect("the second include stops at `.once`: `e` is declared once");
    assert_eq!(s.program.pred(s.outputs[0].pred).types, [ValueType::Symbol]);
    // A failed include ends the reading, as in cpp.
    let (_, diagnostics) = parse_program(".include \"nope.dl\"\n.include nope\n", FILE, &mut Files);
    let codes: Vec<Code> = diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::UNREADABLE_FILE]);
    let (_, diagnostics) = parse_program(".include nope\n", FILE, &mut Files);
    let codes: Vec<Code> = diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::PARSE]);
}

#[test]
fn declarations_soufflé_rejects_are_errors() {
    let e = errors(".decl r(x:number, y:symbol, x:symbol)\n");
    assert_eq!(e, [("E0034", "x".to_string(), "the attribute name `x` is given twice".to_string())]);
    let e = errors(".type T <: symbol\n.type T = number\n.decl r(x:T)\n");
    assert_eq!(e, [("E0034", "T".to_string(), "the type `T` is defined twice".to_string())]);
    let e = errors(".type N <: number\n.type S <: symbol\n.type U = N | S\n.type V = U | number\n.decl r(x:number)\n");
    let spans: Vec<&str> = e.iter().map(|(_, s, _)| s.as_str()).collect();
    assert_eq!(spans, ["U", "V"]);
    assert_eq!(e[0].2, "the union type `U` mixes the primitive types `number`, `symbol`");
    ok(".type N <: number\n.type M = N | number\n.type S <: symbol\n.type T = S | symbol\n.decl r(x:M, y:T)\n");
    // A subset type of a record type (not of its subset types: one report), and a
    // relation named as a type, as Soufflé 2.5 rejects them; an alias of a record type is fine.
    let e = errors(".type L = [h: number, t: L]\n.type S <: L\n.type S2 <: S\n.decl r(x:S2)\n");
    assert_eq!(
        e,
        [("E0034", "S".to_string(), "the subset type `S` cannot be derived from the record type `L`".to_string())]
    );
    let e = errors(".type t <: symbol\n.decl t(x:number)\n");
    assert_eq!(e, [("E0034", "t".to_string(), "the relation `t` has the name of a type".to_string())]);
    ok(".type L = [h: number, t: L]\n.type A = L\n.decl r(x:A)\n");
}

#[test]
fn functors_start_comparisons_and_the_unsupported_ones_are_named_there() {
    let decls = ".decl a(x:symbol, y:symbol)\n.decl n(x:symbol)\n";
    for body in ["strlen(x) > 2", "!contains(y, x)", "cat(x, y) = y", "match(\"a.*\", x)", "!strlen(x) < 3"] {
        ok(&format!("{decls}n(x) :- a(x, y), {body}.\n"));
    }
    let e = errors(&format!("{decls}n(x) :- a(x, y), itof(x) > 2.\n"));
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!((e[0].1.as_str(), e[0].2.as_str()), ("itof", "the functor `itof(...)` is not supported"));
    let s = ok(".decl r(x:number)\nr(1.2.3.4).\nr(255.255.255.255).\n.output r\n");
    let facts = first_fields(&s);
    assert_eq!(facts, ["16909060", "-1"]);
}

#[test]
fn an_unsupported_construct_is_reported_once_with_its_uses() {
    let src = ".decl a(x:symbol)\n.decl r(x:symbol)\n\
               r(x) :- a(x), itof(x) > 1.\nr(x) :- a(x), itof(x) < 9.\nr(x) :- a(x), itof(x) = 3.\n\
               r(x) :- a(x), arch.jump(x), a(x).\n\
               r(x) :- (a(x) ; a(x)), nope(x).\nr(x) :- nope(x).\n";
    let e = errors(src);
    let messages: Vec<&str> = e.iter().map(|(_, _, m)| m.as_str()).collect();
    assert_eq!(
        messages,
        [
            "the functor `itof(...)` is not supported (used 3 times)",
            "relation `arch.jump` is not declared",
            "relation `nope` is not declared (used 2 times)",
        ]
    );
    let (_, diagnostics) = parse_program(src, FILE, &mut NoIncludes);
    let strlen = &diagnostics[0];
    assert_eq!(strlen.labels.len(), 3, "the first use and two more: {strlen:?}");
}

#[test]
fn subtypes_are_checked_as_soufflé_checks_them() {
    let types = ".type A <: symbol\n.type B <: symbol\n.type C <: A\n.type U = A | B\n.type N = number\n";
    let check = |rules: &str| {
        let src = format!(
            "{types}.decl a(x:A)\n.decl b(x:B)\n.decl c(x:C)\n.decl u(x:U)\n.decl s(x:symbol)\n\
             .decl n(x:N)\n.decl m(x:number)\n{rules}"
        );
        let (_, diagnostics) = parse_program(&src, FILE, &mut NoIncludes);
        diagnostics.iter().filter(|d| d.code == Code::SUBTYPE_MISMATCH).count()
    };
    // Accepted by Soufflé 2.5.
    for rules in [
        "a(x) :- c(x).",
        "s(x) :- a(x).",
        "c(x) :- a(x), c(x).",
        "a(x) :- a(x), !b(x).",
        "m(x) :- n(x).",
        "n(x) :- m(x).",
        "u(x) :- b(x).",
    ] {
        assert_eq!(check(rules), 0, "{rules}");
    }
    // Rejected by it.
    for rules in ["a(x) :- b(x).", "c(x) :- a(x).", "a(x) :- s(x).", "a(x) :- u(x).", "s(x) :- a(x), b(x)."] {
        assert_eq!(check(rules), 1, "{rules}");
    }
}

#[test]
fn conditional_sections_are_read_as_the_c_preprocessor_reads_them() {
    let s = ok("#define A 1\n.decl r(x:number)\n.output r\n#ifdef A\nr(1).\n#if defined(B) || !A\nr(2).\n#elif A && !defined B\nr(3).\n#else\nr(4).\n#endif\n#endif\n");
    let facts = first_fields(&s);
    assert_eq!(facts, ["1", "3"]);
    let first = |src: &str| -> (usize, &'static str, String) {
        let e = errors(src);
        (e.len(), e[0].0, e[0].2.clone())
    };
    assert_eq!(
        first(".decl r(x:number)\n#ifdef A\nr(1).\n"),
        (1, "E0001", "this conditional section has no `#endif`".to_string())
    );
    assert_eq!(first(".decl r(x:number)\n#endif\n"), (1, "E0001", "`#endif` without an `#if`".to_string()));
    assert_eq!(
        first(".decl r(x:number)\n#if A >\nr(1).\n#endif\n"),
        (1, "E0001", "the condition of `#if` ends where a value should be".to_string())
    );
    assert_eq!(
        first("#ifndef A\n#error \"no A\"\n#endif\n.decl r(x:number)\n"),
        (1, "E0001", "`#error \"no A\"`".to_string())
    );
}

#[test]
fn plans_are_read_and_ignored_with_one_warning() {
    let src = ".decl e(x:number, y:number)\n.input e\n.decl p(x:number, y:number)\n.output p\n\
               p(x, y) :- e(x, y).\np(x, z) :- p(x, y), e(y, z), !e(z, x).\n.plan 0:(2,1)\n\
               p(x, z) :- p(x, y), p(y, z).\n.plan 0:(1,2), 1:(2,1)\n";
    let (program, diagnostics) = parse_program(src, FILE, &mut NoIncludes);
    assert!(program.is_some());
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!((diagnostics[0].code, diagnostics[0].severity), (Code::PRAGMA_IGNORED, diag::Severity::Warning));
    // What Soufflé 2.5 rejects is a warning: dlc ignores plans, so the program runs.
    let plan = |clause: &str, plan: &str| {
        let src = format!(".decl e(x:number, y:number)\n.decl p(x:number, y:number)\n{clause}\n.plan {plan}\n");
        let (program, diagnostics) = parse_program(&src, FILE, &mut NoIncludes);
        assert!(program.is_some(), "{diagnostics:#?}");
        let invalid = diagnostics.iter().filter(|d| d.code == Code::INVALID_PLAN);
        invalid.map(|d| src[d.primary_span().expect("spanned").range()].to_string()).collect::<Vec<_>>()
    };
    assert_eq!(plan("p(x, y) :- e(x, y).", "0:(1)"), ["0"]);
    assert_eq!(plan("p(x, z) :- p(x, y), e(y, z).", "0:(1,2), 1:(2,1)"), ["1"]);
    assert_eq!(plan("p(x, z) :- p(x, y), e(y, z).", "0:(1,2,3)"), ["(1,2,3)"]);
    // A subsumptive clause's atoms are its two facts and its body's (Soufflé 2.5 takes
    // `0:(1,3,2)` here).
    assert!(plan("p(x, y1) <= p(x, y2) :- e(y1, y2).", "0:(1,3,2)").is_empty());
    assert_eq!(plan("p(x, y1) <= p(x, y2) :- e(y1, y2).", "0:(1,2)"), ["(1,2)"]);
    assert_eq!(errors(".decl p(x:number)\np(1).\n.plan 0:(1\n")[0].0, "E0001");
}

#[test]
fn plans_in_components_are_read_and_checked_like_the_programs() {
    // One W0004 for the program, whether its plans are in instances or not; a plan
    // follows its clause out of the component.
    let src = ".comp G {\n.decl e(x:number, y:number)\n.decl p(x:number, y:number)\ne(1, 2).\n\
               p(x, y) :- e(x, y).\np(x, z) :- p(x, y), e(y, z).\n.plan 0:(2,1)\n\
               p(x, y) :- e(y, x), x > 5.\n.plan 0:(1,2)\n}\n.init g = G\n.init h = G\n\
               .decl q(x:number)\nq(1).\n.plan 0:(1)\n.output g.p\n";
    let (program, diagnostics) = parse_program(src, FILE, &mut NoIncludes);
    assert!(program.is_some(), "{diagnostics:#?}");
    let ignored = diagnostics.iter().filter(|d| d.code == Code::PRAGMA_IGNORED).count();
    assert_eq!(ignored, 1, "{diagnostics:#?}");
    // The second plan is of a clause that is not recursive, in both instances (reported
    // once); the top-level one too.
    let invalid: Vec<&str> = diagnostics
        .iter()
        .filter(|d| d.code == Code::INVALID_PLAN)
        .map(|d| &src[d.primary_span().expect("spanned").range()])
        .collect();
    assert_eq!(invalid, ["0", "0"], "{diagnostics:#?}");
}

#[test]
fn a_plan_is_not_called_invalid_through_a_clause_that_was_dropped() {
    // `b` reads `a` in a clause dropped for its unsupported functor: the plan's clause is recursive
    // through it, which the clauses left cannot show.
    let src = ".decl e(x:number, y:number)\ne(1, 2).\n.decl a(x:number, y:number)\n\
               .decl b(x:number, y:number)\n.output a\na(x, y) :- e(x, y).\n\
               a(x, z) :- b(x, y), e(y, z).\n.plan 0:(2,1)\nb(x, y) :- a(x, y), x != itof(y).\n";
    let (_, diagnostics) = parse_program(src, FILE, &mut NoIncludes);
    let codes: Vec<Code> = diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::PRAGMA_IGNORED, Code::UNSUPPORTED_SOUFFLE], "{diagnostics:#?}");
    // An order of the wrong length is still one.
    let (_, diagnostics) = parse_program(&src.replace("0:(2,1)", "0:(2,1,3)"), FILE, &mut NoIncludes);
    assert!(diagnostics.iter().any(|d| d.code == Code::INVALID_PLAN), "{diagnostics:#?}");
    // Soufflé checks a plan once `inline` relations are unfolded: a clause reading one
    // is left alone.
    let src = ".decl e(x:number, y:number)\ne(1, 2).\n.decl i(x:number) inline\ni(x) :- e(x, _).\n\
               .decl p(x:number, y:number)\n.output p\np(x, y) :- e(x, y).\n\
               p(x, z) :- p(x, y), i(y), e(y, z).\n.plan 0:(3,1)\n";
    let (program, diagnostics) = parse_program(src, FILE, &mut NoIncludes);
    assert!(program.is_some(), "{diagnostics:#?}");
    assert!(!diagnostics.iter().any(|d| d.code == Code::INVALID_PLAN), "{diagnostics:#?}");
}

#[test]
fn limitsize_is_read_onto_its_relations() {
    let s = ok(".decl e(x:number)\n.decl r(x:number)\n.decl t(x:number)\n.output r\n\
                r(1).\nr(x + 1) :- r(x), x < 9.\n.limitsize r, t(n=4)\n");
    let limit = |name: &str| s.program.pred(s.program.lookup_source(name).unwrap()).size_limit.map(|l| l.tuples);
    assert_eq!((limit("r"), limit("t"), limit("e")), (Some(4), Some(4), None));
    // In a component, of the instance's relation.
    let s = ok(".comp C {\n.decl r(x:number)\nr(1).\n.limitsize r(n=\"2\")\n}\n.init c = C\n.output c.r\n");
    assert_eq!(s.program.pred(s.program.lookup_source("c.r").unwrap()).size_limit.map(|l| l.tuples), Some(2));
    let codes = |src: &str| errors(src).into_iter().map(|(code, _, _)| code).collect::<Vec<_>>();
    assert_eq!(codes(".decl r(x:number)\n.limitsize r(m=3)\n"), ["E0001"]);
    assert_eq!(codes(".decl r(x:number)\n.limitsize r(n=x)\n"), ["E0001"]);
    assert_eq!(codes(".decl r(x:number)\n.limitsize r(n=3)\n.limitsize r(n=4)\n"), ["E0034"]);
    assert_eq!(codes(".decl r(x:number)\n.limitsize s(n=3)\n"), ["E0019"]);
}

#[test]
fn min_and_max_of_symbols_compare_by_text() {
    let s = ok(".decl k(x:symbol)\nk(max(\"b\", \"a\")).\nk(min(\"b\", \"a\", \"c\")).\n.output k\n");
    assert_eq!(first_fields(&s), ["b", "a"]);
    // A rule's term becomes one rule per alternative, each comparing symbols by text.
    let s = ok(".decl s(x:symbol, y:symbol)\n.input s\n.decl m(x:symbol)\nm(max(x, y)) :- s(x, y).\n.output m\n");
    let rules = rules(&s.program);
    assert_eq!(rules.len(), 2, "{rules:?}");
    let ordered: Vec<ValueType> =
        s.program.rules.iter().flat_map(|r| &r.comparisons).filter(|c| c.op.is_ordering()).map(|c| c.domain).collect();
    assert_eq!(ordered, [ValueType::Symbol, ValueType::Symbol]);
    // Numbers keep their arithmetic `max`.
    assert_eq!(rules_of(".decl n(x:number)\n.input n\n.decl m(x:number)\nm(max(x, 3)) :- n(x).\n.output m\n"), 1);
}

fn rules_of(src: &str) -> usize {
    ok(src).program.rules.len()
}

/// The syntax tree of `src`, with the preprocessor's and the parser's reports.
fn tree_of(src: &str) -> (tree::Program, Vec<Diagnostic>) {
    let mut texts = Texts::new(vec![(FILE, src.to_string())]);
    let mut diagnostics = Vec::new();
    let tokens = preprocess(FILE, None, &mut texts, &mut NoIncludes, &mut diagnostics).tokens;
    let (program, syntax) = parser::program(&tokens, &texts, Span::new(FILE, src.len()..src.len()));
    diagnostics.extend(syntax);
    (program, diagnostics)
}

#[test]
fn a_clause_with_two_heads_and_a_disjunction_is_one_tree_node() {
    use tree::{Conjunction, Disjunction, Item, Literal};
    let src = ".decl a(x:number)\n.decl b(x:number)\n.decl c(x:number)\n.decl d(x:number)\n\
               a(x), b(x) :- c(x) ; !(d(x), x < 3).\n";
    let (program, diagnostics) = tree_of(src);
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
    let clauses: Vec<&tree::Clause> = program
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Clause(c) => Some(c),
            _ => None,
        })
        .collect();
    let [clause] = clauses.as_slice() else { panic!("one clause, found {clauses:#?}") };
    let text = |span: Span| &src[span.range()];
    assert_eq!(clause.heads.iter().map(|h| h.pred.text.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(text(clause.span), "a(x), b(x) :- c(x) ; !(d(x), x < 3).");
    let Some(Disjunction(alternatives)) = &clause.body else { panic!("a body") };
    let [Conjunction(first), Conjunction(second)] = alternatives.as_slice() else { panic!("two alternatives") };
    assert!(matches!(first.as_slice(), [Literal::Atom(c)] if c.pred.text == "c"));
    let [Literal::Not { bang, inner }] = second.as_slice() else { panic!("a negated group: {second:#?}") };
    assert_eq!(text(*bang), "!");
    let Literal::Group(Disjunction(group)) = inner.as_ref() else { panic!("a group: {inner:#?}") };
    let [Conjunction(grouped)] = group.as_slice() else { panic!("one conjunction in the group") };
    assert!(matches!(grouped.as_slice(), [Literal::Atom(d), Literal::Compare(_)] if d.pred.text == "d"));
    // Expanded, the negated group is two alternatives: three conjunctions for each head.
    let expanded = lower::clauses(program.clone());
    let body = expanded[0].body.as_ref().expect("a body");
    let shown: Vec<String> = body
        .iter()
        .map(|conj| {
            conj.iter()
                .map(|l| match l {
                    ast::Literal::Atom(a) => a.pred.text.clone(),
                    ast::Literal::Negated { atom, .. } => format!("!{}", atom.pred.text),
                    ast::Literal::Compare(c) => c.op.text().to_string(),
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    assert_eq!(shown, ["c", "!d", ">="]);
}

#[test]
fn an_unsupported_construct_is_one_node_with_its_span() {
    use tree::{Construct, Item, TypeDefinition};
    let src = ".lattice L<number> { }\n.decl e(x:float)\n\
               .type R = [a: number]\n.decl s(x:symbol)\ns(y) :- e(x), y = itof(x).\n";
    let (program, diagnostics) = tree_of(src);
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
    let text = |span: Span| &src[span.range()];
    let unsupported: Vec<(Construct, &str)> = program
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Unsupported(u) => Some((u.construct.clone(), text(u.span))),
            _ => None,
        })
        .collect();
    assert_eq!(
        unsupported,
        [
            (Construct::Directive(".lattice".to_string()), ".lattice"),
            (Construct::Other("the functor `itof(...)`".to_string()), "itof"),
        ]
    );
    // The directive's line is skipped; the relations are declared; the clause
    // with the functor is dropped.
    let decls: Vec<&str> = program
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Decl(d) => Some(d.names[0].text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(decls, ["e", "s"]);
    assert!(!program.items.iter().any(|item| matches!(item, Item::Clause(_))));
    // A record type is the type's definition, its fields with their types.
    let record = program.items.iter().find_map(|item| match item {
        Item::Type(t) => Some(t),
        _ => None,
    });
    let record = record.expect("the type is defined");
    assert_eq!(record.name.text, "R");
    let TypeDefinition::Record(shape) = &record.definition else { panic!("a record type") };
    let fields: Vec<(&str, &str)> = shape.fields.iter().map(|(n, t)| (n.text.as_str(), t.text.as_str())).collect();
    assert_eq!((text(shape.span), fields), ("[", vec![("a", "number")]));
    // Each is reported once, by the checks.
    let (_, diagnostics) = parse_program(src, FILE, &mut NoIncludes);
    let unsupported: Vec<&str> = diagnostics
        .iter()
        .filter(|d| d.code == Code::UNSUPPORTED_SOUFFLE)
        .map(|d| text(d.primary_span().expect("spanned")))
        .collect();
    assert_eq!(unsupported, [".lattice", "itof"]);
}

#[test]
fn declarations_and_io_directives_keep_what_is_written() {
    use tree::{IoKind, Item, TypeDefinition};
    let src = ".type T <: symbol\n.type U = T | symbol\n.decl a, b(x:T, y:number) btree inline output\n\
               .input a(IO=file, filename=\"a.csv\", delimiter=\",\")\n.pragma \"inline-exclude\" \"b\"\n";
    let (program, diagnostics) = tree_of(src);
    let text = |span: Span| &src[span.range()];
    // Only the warning about the `output` qualifier.
    assert_eq!(diagnostics.iter().map(|d| d.code).collect::<Vec<_>>(), [Code::DEPRECATED_SOUFFLE]);
    let [Item::Type(t), Item::Type(u), Item::Decl(decl), Item::Io(io), Item::Pragma(pragma)] = program.items.as_slice()
    else {
        panic!("five items: {:#?}", program.items)
    };
    assert!(matches!(&t.definition, TypeDefinition::Subtype(from) if from[0].text == "symbol"));
    let TypeDefinition::Equal(members) = &u.definition else { panic!("a union") };
    assert_eq!(members.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(), ["T", "symbol"]);
    assert_eq!(decl.names.iter().map(|n| n.text.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    let attributes: Vec<(&str, &str)> =
        decl.attributes.iter().map(|a| (a.name.text.as_str(), a.ty.text.as_str())).collect();
    assert_eq!(attributes, [("x", "T"), ("y", "number")]);
    assert!(decl.inline && !decl.no_inline);
    assert_eq!(decl.io.iter().map(|(k, at)| (*k, text(*at))).collect::<Vec<_>>(), [(IoKind::Output, "output")]);
    assert_eq!(io.kind, IoKind::Input);
    let parameters: Vec<(&str, &str, &str)> =
        io.parameters.iter().map(|p| (p.key.text.as_str(), p.value.as_str(), text(p.span))).collect();
    assert_eq!(
        parameters,
        [("IO", "file", "IO=file"), ("filename", "a.csv", "filename=\"a.csv\""), ("delimiter", ",", "delimiter=\",\"")]
    );
    let settings = io.settings();
    assert_eq!(
        (settings.filename.as_deref(), settings.delimiter.as_str(), settings.names_delimiter.as_str()),
        (Some("a.csv"), ",", ",")
    );
    assert_eq!((pragma.key.as_deref(), pragma.value.as_deref()), (Some("inline-exclude"), Some("b")));
}

#[test]
fn the_parser_bounds_each_expansion_that_the_lowering_then_makes() {
    let decls = ".decl e(x:number)\n.decl f(x:number)\n.decl r(x:number)\n.decl s(x:number)\n";
    let expanded = |src: &str| {
        let (program, diagnostics) = tree_of(src);
        let found: Vec<(String, &str)> =
            diagnostics.iter().map(|d| (d.message.clone(), &src[d.primary_span().expect("spanned").range()])).collect();
        let unsupported: Vec<(String, String)> = program
            .items
            .iter()
            .filter_map(|item| match item {
                tree::Item::Unsupported(u) => Some((u.construct.describe(), src[u.span.range()].to_string())),
                _ => None,
            })
            .collect();
        assert!(found.is_empty(), "{found:?}");
        let sizes: Vec<usize> = lower::clauses(program.clone())
            .iter()
            .map(|c| c.heads.len() * c.body.as_ref().map_or(1, Vec::len))
            .collect();
        (sizes, unsupported)
    };
    // Ten groups of two alternatives are 2^10 = 1,024 rules; a second head doubles them.
    let groups = ["(e(x) ; f(x))"; 10].join(", ");
    assert_eq!(expanded(&format!("{decls}r(x) :- {groups}.\n")), (vec![1024], vec![]));
    let (sizes, unsupported) = expanded(&format!("{decls}r(x), s(x) :- {groups}.\n"));
    assert!(sizes.is_empty());
    assert_eq!(unsupported.len(), 1);
    assert_eq!(unsupported[0].0, "a clause expanding to more than 1024 rules");
    // Five negated conjunctions of four literals are 4^5 = 1,024 rules; a sixth is too many,
    // reported from the `!` to what it negates.
    let conjunction = "(e(x), f(x), e(x), f(x))";
    let negated = |n: usize| format!("{decls}r(x) :- e(x), !({}).\n", vec![conjunction; n].join(" ; "));
    assert_eq!(expanded(&negated(5)), (vec![1024], vec![]));
    let (sizes, unsupported) = expanded(&negated(6));
    assert!(sizes.is_empty());
    assert_eq!(unsupported, [("a negation expanding to more than 1024 rules".to_string(), "!(".to_string())]);
}

/// The name of each relation an I/O directive of `s` names, by kind.
fn io_names(s: &SouffleProgram) -> [Vec<String>; 2] {
    let names = |ios: &[Io]| ios.iter().map(|io| s.program.pred_name(io.pred).to_string()).collect();
    [names(&s.inputs), names(&s.outputs)]
}

#[test]
fn a_component_is_one_tree_node_with_its_body() {
    use tree::{Item, TypeDefinition};
    let src = ".comp Graph<N, W> : Base<N>, Other {\n .decl edge(x: N, y: N) overridable\n .override reach\n\
               edge(1, 2).\n .comp Inner { .decl q(x: number) }\n .init in = Inner\n}\n\
               .init g = Graph<number, symbol>\n.type T <: g.in.Id\n.output g.edge, g . in . q(delimiter=\",\")\n\
               .decl r(x: g.N)\nr(x) :- g.edge(x, _), !g.in.q(x).\n";
    let (program, diagnostics) = tree_of(src);
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
    let text = |span: Span| &src[span.range()];
    let [Item::Component(graph), Item::Init(init), Item::Type(t), Item::Io(io), Item::Decl(r), Item::Clause(clause)] =
        program.items.as_slice()
    else {
        panic!("six items: {:#?}", program.items)
    };
    assert_eq!(graph.name.text, "Graph");
    assert_eq!(graph.parameters.iter().map(|p| p.text.as_str()).collect::<Vec<_>>(), ["N", "W"]);
    let bases: Vec<(&str, usize, &str)> =
        graph.bases.iter().map(|b| (b.name.text.as_str(), b.arguments.len(), text(b.span))).collect();
    assert_eq!(bases, [("Base", 1, "Base<N>"), ("Other", 0, "Other")]);
    assert_eq!(graph.overrides.iter().map(|o| o.text.as_str()).collect::<Vec<_>>(), ["reach"]);
    assert!(text(graph.span).starts_with(".comp Graph") && text(graph.span).ends_with('}'));
    let [Item::Decl(edge), Item::Clause(_), Item::Component(inner), Item::Init(nested)] = graph.items.as_slice() else {
        panic!("the body's four items: {:#?}", graph.items)
    };
    assert!(edge.overridable && edge.names[0].text == "edge");
    assert_eq!((inner.name.text.as_str(), nested.instance.text.as_str()), ("Inner", "in"));
    assert_eq!((init.instance.text.as_str(), text(init.component.span)), ("g", "Graph<number, symbol>"));
    assert_eq!(text(init.span), ".init g = Graph<number, symbol>");
    // Qualified names are one name, spanning their parts (Soufflé reads `g . in . q` too).
    assert!(matches!(&t.definition, TypeDefinition::Subtype(from) if from[0].text == "g.in.Id"));
    let relations: Vec<(&str, &str)> = io.relations.iter().map(|n| (n.text.as_str(), text(n.span))).collect();
    assert_eq!(relations, [("g.edge", "g.edge"), ("g.in.q", "g . in . q")]);
    assert_eq!(r.attributes[0].ty.text, "g.N");
    let atoms = clause.body.iter().flat_map(|d| &d.0).flat_map(|c| &c.0).map(|l| match l {
        tree::Literal::Atom(a) => a.pred.text.as_str(),
        tree::Literal::Not { inner, .. } => match inner.as_ref() {
            tree::Literal::Atom(a) => a.pred.text.as_str(),
            _ => "?",
        },
        _ => "?",
    });
    assert_eq!(atoms.collect::<Vec<_>>(), ["g.edge", "g.in.q"]);
    assert_eq!(query_relation("?- g.in.q(1)."), Some("g.in.q"));
    assert_eq!(query_relation("g.(1)"), None);
}

#[test]
fn instances_are_expanded_into_qualified_relations_and_types() {
    let src = ".comp Pair<K> {\n .type Key <: K\n .decl item(k: Key, n: number)\n .input item\n .decl first(k: Key)\n\
               .output first\n first(k) :- item(k, n), n = min m : { item(_, m) }.\n}\n\
               .init words = Pair<symbol>\n.init ids = Pair<unsigned>\n\
               .decl both(k: ids.Key)\nboth(k) :- ids.first(k), ids.item(k, 1).\n.output both\n";
    let s = ok(src);
    let [inputs, outputs] = io_names(&s);
    assert_eq!(inputs, ["words.item", "ids.item"]);
    assert_eq!(outputs, ["words.first", "ids.first", "both"]);
    // Each instance's columns have the type its argument gives, through its own `Key`.
    let types = |name: &str| s.program.pred(s.program.lookup_source(name).expect(name)).types.clone();
    assert_eq!(types("words.item"), [ValueType::Symbol, ValueType::Number]);
    assert_eq!(types("ids.item"), [ValueType::Unsigned, ValueType::Number]);
    assert_eq!(types("both"), [ValueType::Unsigned]);
    let rules = rules(&s.program);
    assert!(rules.contains(&"both(k) <- ids.first(k), ids.item(k,1)".to_string()), "{rules:#?}");
    assert!(rules.iter().any(|r| r.starts_with("words.first(k) <- words.item(k,n)")), "{rules:#?}");
}

#[test]
fn an_override_replaces_the_clauses_of_the_bases() {
    let src = ".comp Base {\n .decl r(x: number) overridable\n .decl s(x: number)\n r(1). s(1).\n}\n\
               .comp Mid : Base {\n .override r\n r(2). s(2).\n}\n.comp Top : Mid {\n .override r\n r(3).\n}\n\
               .init m = Mid\n.init t = Top\n.output m.r, m.s, t.r, t.s\n";
    let s = ok(src);
    let mut facts: Vec<String> = s
        .program
        .facts
        .iter()
        .map(|f| {
            format!(
                "{}({})",
                s.program.pred_name(f.pred),
                s.program.value_text(s.program.value(f.pred, 0, f.values[0]))
            )
        })
        .collect();
    facts.sort();
    // `s` keeps the clauses of every level; `r` those of the last to override it.
    assert_eq!(facts, ["m.r(2)", "m.s(1)", "m.s(2)", "t.r(3)", "t.s(1)", "t.s(2)"]);
}

#[test]
fn instances_nest_and_orphans_go_where_their_head_is() {
    // `s(x) :- r(x).` in `A` has no head in `A`: it goes to the next instance that holds
    // `s` (its sibling `b`), as in Soufflé, and becomes `o.b.s(x) :- o.a.r(x)`.
    let src = ".comp A { .decl r(x: number) r(1). s(x) :- r(x). }\n\
               .comp B { .decl s(x: number) .decl t(x: number) t(x) :- s(x). .output t }\n\
               .comp O { .init a = A .init b = B .comp In { .decl q(x: number) q(x) :- b.t(x). } .init i = In }\n\
               .init o = O\n.decl s(x: number)\n.output s, o.i.q\n";
    let (program, diagnostics) = parse_program(src, FILE, &mut NoIncludes);
    // The program's `s` has no rules: only the warning about it.
    assert!(!diag::has_errors(&diagnostics), "{diagnostics:#?}");
    let s = program.expect("a program");
    let rules = rules(&s.program);
    assert!(rules.contains(&"o.b.s(x) <- o.a.r(x)".to_string()), "{rules:#?}");
    // Inside `In`, `b.t` is the enclosing instance's `b.t`.
    assert!(rules.contains(&"o.i.q(x) <- o.b.t(x)".to_string()), "{rules:#?}");
    assert_eq!(io_names(&s)[1], ["o.b.t", "s", "o.i.q"]);
}

#[test]
fn component_errors_are_soufflés_each_once() {
    let found = errors(
        ".comp A<T> { .decl r(x: T) .decl s(x: T) overridable }\n\
         .comp B : A<number> { .override r .override s .decl t(x: number) .override t }\n\
         .comp L : R { }\n.comp R : L { }\n.comp S : S { }\n\
         .init a = A\n.init n = Nope<number>\n.decl a(x: number)\n\
         .decl q(x: number)\nq(x) :- n.r(x), a.r(x).\n.output n.r\n",
    );
    let found: Vec<(&str, &str, &str)> = found.iter().map(|(c, t, m)| (*c, t.as_str(), m.as_str())).collect();
    assert_eq!(
        found,
        [
            ("E0037", "r", "the component `B` overrides `r` of `A`, which is not `overridable`"),
            ("E0037", "t", "the component `B` overrides `t`, which it declares itself"),
            ("E0037", "L", "the components `L`, `R` inherit from each other"),
            ("E0037", "S", "the component `S` inherits from itself"),
            ("E0037", "a", "the name `a` is taken twice: by a relation and by an instance"),
            ("E0037", "A", "the component `A` takes 1 type argument(s) but is given 0"),
            ("E0037", "Nope", "the component `Nope` is not defined"),
        ]
    );
}

#[test]
fn a_report_inside_an_instance_names_it_and_instances_do_not_repeat_it() {
    let src = ".comp G<T> {\n .decl e(x: T, y: T)\n .decl p(x: T, y: T)\n p(x, y) :- e(x, y), missing(x).\n\
               p(x, y) :- e(x, z), e(z, y, y).\n p(x, y) :- e(x, _).\n}\n.init g = G<number>\n.init h = G<symbol>\n";
    let (_, diagnostics) = parse_program(src, FILE, &mut NoIncludes);
    let found: Vec<(&str, &str, Vec<String>)> = diagnostics
        .iter()
        .map(|d| (d.code.0, &src[d.primary_span().expect("spanned").range()], d.notes.clone()))
        .collect();
    let note = |n: &str| vec![n.to_string()];
    assert_eq!(
        found,
        [
            ("E0019", "missing", note("in instances `g`, `h`")),
            ("E0004", "e(z, y, y)", note("in instance `g`")),
            ("E0004", "e(z, y, y)", note("in instance `h`")),
            ("E0003", "y", note("in instances `g`, `h`")),
        ]
    );
    // Nested instances are named by their path.
    let src = ".comp I { .decl r(x: number) r(x) :- x > 1. }\n.comp O { .init i = I }\n.init o = O\n";
    let (_, diagnostics) = parse_program(src, FILE, &mut NoIncludes);
    let found: Vec<(&str, Vec<String>)> = diagnostics.iter().map(|d| (d.code.0, d.notes.clone())).collect();
    assert_eq!(found, [("E0003", note("in instance `o.i`")), ("E0023", note("in instance `o.i`"))]);
}

#[test]
fn components_are_read_past_their_errors() {
    // A syntax error inside a body ends at its `.` (or at the `}`), and the component goes
    // on; `.override` outside a component, `.pragma` and a query inside one are errors of
    // Soufflé's grammar.
    let src = ".comp A {\n .decl r(x: number)\n r(x :- r(x).\n r(1).\n .pragma \"a\" \"b\"\n ?- r(1).\n\
               .decl s(x: number)\n s(x) :- r(x), x = count : { r(_), ( }.\n}\n\
               .override r\n.init a = A\n.output a.r, a.s\n";
    let found = errors(src);
    let found: Vec<(&str, &str)> = found.iter().map(|(c, t, _)| (*c, t.as_str())).collect();
    assert_eq!(found, [("E0001", ":-"), ("E0001", ".pragma"), ("E0001", "?-"), ("E0001", "}"), ("E0001", ".override")]);
    let found = errors(".comp A {\n .decl r(x: number)\n r(1).\n");
    assert_eq!(found, [("E0001", "{".to_string(), "the component `A` has no closing `}`".to_string())]);
    // Without them the instance is expanded.
    let s = ok(".comp A {\n .decl r(x: number)\n r(1).\n}\n.init a = A\n.output a.r\n");
    assert_eq!(io_names(&s)[1], ["a.r"]);
}

#[test]
fn instances_that_never_end_stop_at_soufflés_limit() {
    let found = errors(".comp A { .decl r(x: number) .init a = A }\n.init top = A\n.output top.r\n");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].2, "components are instantiated more than 100 levels deep");
    // dlc counts bases too, so that expanding a long chain of them never overflows the
    // stack (Soufflé counts only instances).
    let deep = (0..200).map(|i| format!(".comp C{i} : C{} {{ }}\n", i + 1)).collect::<String>();
    let found = errors(&format!("{deep}.comp C200 {{ .decl r(x: number) }}\n.init c = C0\n"));
    assert_eq!(
        found.iter().map(|(_, _, m)| m.as_str()).collect::<Vec<_>>(),
        ["components are instantiated more than 100 levels deep"]
    );
}

#[test]
fn unsupported_constructs_of_a_component_are_reported_once_if_it_is_instantiated() {
    let component = ".comp A { .decl r(x: number) .decl s(x: number) r(1). s(x) :- r(x), x = itof(1). }\n";
    let found = errors(&format!("{component}.init a = A\n.init b = A\n"));
    assert_eq!(found.iter().map(|(c, t, _)| (*c, t.as_str())).collect::<Vec<_>>(), [("E0018", "itof")]);
    // Soufflé checks nothing inside a component no instance makes.
    let (program, diagnostics) = parse_program(component, FILE, &mut NoIncludes);
    assert!(program.is_some() && diagnostics.is_empty(), "{diagnostics:#?}");
}

#[test]
fn an_io_qualifier_in_a_component_names_the_programs_relation_as_in_soufflé() {
    // Soufflé 2.5 makes `.decl r(...) output` in a component an `.output r` of the
    // program: of the program's own `r`, which this one has.
    let src = ".comp A { .decl r(x: number) output r(1). }\n.init a = A\n.decl r(x: number)\nr(7).\n";
    let (program, diagnostics) = parse_program(src, FILE, &mut NoIncludes);
    assert_eq!(diagnostics.iter().map(|d| d.code).collect::<Vec<_>>(), [Code::DEPRECATED_SOUFFLE]);
    assert_eq!(io_names(&program.expect("a program"))[1], ["r"]);
    let found = errors(&src.replace(".decl r(x: number)\nr(7).\n", ""));
    let undeclared = ("E0019", "output".to_string(), "relation `r` is not declared".to_string());
    assert_eq!(found.iter().filter(|d| d.0.starts_with('E')).collect::<Vec<_>>(), [&undeclared]);
}

#[test]
fn a_type_parameter_naming_no_component_is_reported_in_its_instance() {
    // Soufflé's checks cannot know what `T` stands for; expanding `o` finds out.
    let src =
        ".comp Outer<T> { .init i = T }\n.comp R { .decl r(x: number) }\n.init p = Outer<R>\n.init o = Outer<Nope>\n";
    let (_, diagnostics) = parse_program(src, FILE, &mut NoIncludes);
    let found: Vec<(&str, &str, Vec<String>)> = diagnostics
        .iter()
        .map(|d| (d.message.as_str(), &src[d.primary_span().expect("spanned").range()], d.notes.clone()))
        .collect();
    let notes = vec!["`T` is a type parameter, given `Nope` here".to_string(), "in instance `o`".to_string()];
    assert_eq!(found, [("the component `Nope` is not defined", "T", notes)]);
}

#[test]
fn an_input_or_printsize_given_twice_in_one_instance_is_soufflés_error() {
    let src = ".comp A { .decl r(x: number) r(1). .printsize r .output r .output r .printsize r }\n.init a = A\n.init b = A\n";
    let (_, diagnostics) = parse_program(src, FILE, &mut NoIncludes);
    let found: Vec<(&str, &str, &str, Vec<String>)> = diagnostics
        .iter()
        .map(|d| (d.code.0, &src[d.primary_span().expect("spanned").range()], d.message.as_str(), d.notes.clone()))
        .collect();
    let twice = "`.printsize` of `r` is given twice in one instance";
    assert_eq!(
        found,
        [
            ("E0034", "r", twice, vec!["in instance `a`".to_string()]),
            ("E0034", "r", twice, vec!["in instance `b`".to_string()]),
        ]
    );
    // At the second `.printsize`, the outputs given twice being one file.
    assert_eq!(diagnostics[0].primary_span().expect("spanned").start as usize, src.rfind(".printsize r").unwrap() + 11);
}

#[test]
fn floats_type_their_columns_and_refuse_integers_and_integer_operators() {
    use ir::ValueType::{Float, Number};
    let s = ok(".type T <: float\n.decl f(x:float, y:T, n:number)\n.decl r(x:float)\n\
                f(1.5, -0.25, 2).\nr(x * 2 + 1.0) :- f(x, _, _), x < 4.0.\nr(to_float(n)) :- f(_, _, n).\n.output r\n");
    let f = s.program.lookup_source("f").unwrap();
    assert_eq!(s.program.pred(f).types, [Float, Float, Number]);
    let decls = ".decl f(x:float)\n.decl n(x:number)\n.decl r(x:float)\n";
    for (body, at) in [
        ("r(x) :- f(x), n(y), x = y.", "x = y"),
        ("r(x + y) :- f(x), n(y).", "+"),
        ("r(x % 2.0) :- f(x).", "%"),
        ("r(x band 1) :- f(x).", "band"),
        ("r(lnot x) :- f(x).", "lnot"),
        ("r(y) :- n(y).", "y"),
        ("r(1) :- n(1.5).", "1.5"),
    ] {
        let e = errors(&format!("{decls}{body}\n"));
        assert!(e.iter().any(|(code, text, _)| *code == "E0028" && text == at), "{body}: {e:?}");
    }
}

#[test]
fn a_cast_takes_its_value_as_its_types_and_names_a_type_the_program_has() {
    use ir::Functor::Cast;
    use ir::ValueType::{Float, Number, Symbol, Unsigned};
    let s = ok(".type T <: number\n.type U <: T\n.decl n(x:number)\n.decl r(x:float, u:unsigned, t:U, s:symbol)\n\
                n(1).\nr(as(x, float), as(x, unsigned), as(x, U), as(as(x, float), symbol)) :- n(x).\n.output r\n");
    let r = s.program.lookup_source("r").unwrap();
    assert_eq!(s.program.pred(r).types, [Float, Unsigned, Number, Symbol]);
    let casts: Vec<ir::Functor> = s.program.rules[0]
        .comparisons
        .iter()
        .flat_map(|c| c.right.nodes.iter().chain(&c.left.nodes))
        .filter_map(|n| match n {
            ir::ExprNode::Call(f) => Some(f.clone()),
            _ => None,
        })
        .collect();
    let expected =
        [Cast(Number, Float), Cast(Number, Unsigned), Cast(Number, Number), Cast(Number, Float), Cast(Float, Symbol)];
    assert!(expected.iter().all(|c| casts.contains(c)), "{casts:?}");
    // A type of a component's own, renamed with its instance.
    ok(".comp C { .type T <: float\n.decl r(x:T)\n.decl n(x:number)\nn(1).\nr(as(x, T)) :- n(x). }\n.init c = C\n");
    let decls = ".decl n(x:number)\n.decl r(x:float)\n";
    let found = errors(&format!("{decls}r(as(x, flaot)) :- n(x).\n"));
    assert_eq!(found.iter().map(|(c, t, _)| (*c, t.as_str())).collect::<Vec<_>>(), [("E0038", "flaot")]);
    for wrong in ["r(as(x)) :- n(x).", "r(as(x, float, 1)) :- n(x).", "r(as(x, 1)) :- n(x)."] {
        let found = errors(&format!("{decls}{wrong}\n"));
        assert_eq!(found[0].0, "E0001", "{wrong}: {found:?}");
        assert_eq!(found[0].2, "`as(...)` takes a value and a type: `as(x, float)`", "{wrong}");
    }
    // A cast's value is no float until it is cast.
    let found = errors(&format!("{decls}r(as(x, number)) :- n(x).\n"));
    assert_eq!(found[0].0, "E0028", "{found:?}");
}

#[test]
fn mean_is_a_float_over_floats_computed_as_a_sum_over_a_count() {
    let s = ok(".decl f(g:symbol, x:float)\n.decl m(g:symbol, x:float)\nf(\"a\", 1.5).\n\
                m(g, x) :- f(g, _), x = mean y : { f(g, y) }.\n.output m\n");
    let rules = rules(&s.program);
    assert!(rules.iter().any(|r| r.starts_with("m_agg(g,N) <- N = sum")), "{rules:#?}");
    assert!(rules.iter().any(|r| r.starts_with("m_agg_count(g,N) <- N = count")), "{rules:#?}");
    assert!(
        rules.iter().any(|r| r.contains("m_agg(g,Sum), m_agg_count(g,Count)") && r.contains("Sum / to_float(Count)")),
        "{rules:#?}"
    );
    // Soufflé 2.5 types `mean`'s value as its result, a float.
    let found = errors(".decl n(x:number)\n.decl m(x:float)\nm(x) :- x = mean y : { n(y) }.\n");
    assert_eq!(found.iter().map(|(c, _, _)| *c).collect::<Vec<_>>(), ["E0028"]);
}

#[test]
fn a_range_is_a_generator_of_its_rule_and_is_misused_with_a_report() {
    let s = ok(".decl e(a:number, b:number)\n.decl r(x:number)\ne(1, 5).\nr(x) :- e(a, b), x = range(a, b + 1, 2).\n.output r\n");
    assert_eq!(rules(&s.program), ["r(x) <- e(a,b), x = Range, Range = range(a, b + 1, 2)"]);
    let [generator] = s.program.rules[0].generators.as_slice() else { panic!("one generator") };
    assert_eq!(generator.domain, ir::ValueType::Number);
    // A range in a fact makes it a rule with no atom; one in another's bounds is a
    // generator of its own.
    let s = ok(".decl r(x:number)\nr(range(0, range(2, 4))).\n.output r\n");
    assert_eq!(rules(&s.program), ["r(Range) <- Range = range(0, Range1), Range1 = range(2, 4)"]);
    let decls = ".decl n(x:number)\n.decl r(x:number)\n";
    for (body, code, at) in [
        ("r(x) :- x = range(1).", "E0001", "range(1)"),
        ("r(x) :- x = range(1, 2, 3, 4).", "E0001", "range(1, 2, 3, 4)"),
        ("r(x) :- x = range(1, y).", "E0003", "range(1, y)"),
        ("r(x) :- x = range(1, y), y = range(1, x).", "E0003", "range(1, y)"),
        ("r(x) :- n(x), range(1, 2) = \"a\".", "E0030", "range(1, 2)"),
    ] {
        let found = errors(&format!("{decls}{body}\n"));
        assert_eq!(found.iter().map(|(c, t, _)| (*c, t.as_str())).collect::<Vec<_>>(), [(code, at)], "{body}");
    }
}

#[test]
fn a_declared_functor_types_its_calls_which_share_its_declaration() {
    use ir::ValueType::{Number, Symbol};
    let src = ".type Id <: number\n.functor f(Id, s: symbol): symbol\n.decl e(x:number, y:symbol)\n.decl r(x:symbol)\n\
               r(@f(x, y)) :- e(x, y).\nr(@f(1, @f(2, \"a\"))).\n";
    let s = ok(src);
    let [called] = s.functors.as_slice() else { panic!("{:?}", s.functors) };
    let f = &called.functor;
    assert_eq!((f.name(), f.params(), f.result()), ("f", &[Number, Symbol][..], Symbol));
    // The fact with a call is a rule: the call is computed when the program runs.
    assert!(s.program.facts.is_empty());
    assert_eq!(s.program.rules.len(), 2);
    let calls: Vec<&ir::Functor> = s
        .program
        .rules
        .iter()
        .flat_map(|r| &r.comparisons)
        .flat_map(|c| &c.right.nodes)
        .filter_map(|n| match n {
            ir::ExprNode::Call(functor) => Some(functor),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 3);
    assert!(calls.iter().all(|c| matches!(c, ir::Functor::User(u) if std::sync::Arc::ptr_eq(u, f))));
}

/// A record written outside the program (an update line, an update flag, a fact to
/// explain, a query) is read against its column's type, nested records, `nil` and
/// branches with and without fields alike, and is the record the program makes.
#[test]
fn records_outside_the_program_are_read_against_their_column() {
    let src = ".type Pair = [a: number, b: symbol]\n.type List = [head: number, tail: List]\n\
               .type Point = [x: float, y: unsigned]\n\
               .type Shape = Circle {r: number} | Rect {w: number, h: number} | Empty {}\n\
               .decl r(p: Pair, l: List, s: Shape)\n.input r\n.decl pt(p: Point)\n.input pt\n\
               .decl q(p: Pair, s: Shape)\nq(p, s) :- r(p, _, s).\nq([1, \"x\"], $Rect(2, 3)).\n";
    let mut p = ok(src).program;
    let show = |p: &Program, f: &ir::Fact| format!("{}{}", p.pred_name(f.pred), p.display_tuple(f.pred, &f.values));
    let updates = "+r([1, \"a b\"], [1, [2, nil]], $Circle(-3)).\n-r(nil, nil, $Empty).\n+r([2, c], nil, $Empty())\n\
                   +r([3, \"d\"], nil, $Rect(1, 2)).\n+pt([1.5, 2]).\n+pt([-0.25, 0])\n";
    let (batches, diagnostics) = crate::parse_updates(updates, FILE, &mut p);
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
    let read: Vec<String> = batches[0].changes.iter().map(|(_, f)| show(&p, f)).collect();
    assert_eq!(
        read,
        [
            "r([1, a b],[1, [2, nil]],$Circle(-3))",
            "r(nil,nil,$Empty)",
            "r([2, c],nil,$Empty)",
            "r([3, d],nil,$Rect(1, 2))",
            "pt([1.5, 2])",
            "pt([-0.25, 0])",
        ]
    );
    // The record a line writes is the one a facts file's text of it is.
    let (fact, diagnostics) = crate::parse_ground_atom("q([1, x], $Rect(2, 3))", FILE, &mut p);
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
    let q = p.lookup_source("q").unwrap();
    let types = p.pred(q).types.clone();
    let texts = [p.encode(types[0], "[1, x]").unwrap(), p.encode(types[1], "$Rect(2, 3)").unwrap()];
    assert_eq!(fact.unwrap().values, texts);
    let (fact, diagnostics) = crate::parse_update_atom("r([4, e], [5, nil], $Empty)", FILE, &mut p);
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
    assert_eq!(show(&p, &fact.unwrap()), "r([4, e],[5, nil],$Empty)");
    // A query selects the one record it writes.
    assert!(parse_query("q([1, \"x\"], s)", FileId(1), &mut p).is_empty());
    assert_eq!(ir::DisplayAtom(&p, &p.query.as_ref().unwrap().atom).to_string(), "q([1, x],s)");
    assert!(parse_query("q(p, $Circle(-3))", FileId(1), &mut p).is_empty());
    assert_eq!(ir::DisplayAtom(&p, &p.query.as_ref().unwrap().atom).to_string(), "q(p,$Circle(-3))");
    // A record with variables is a pattern: the atom leaves its column free.
    assert!(parse_query("q([1, y], $Rect(w, _))", FileId(1), &mut p).is_empty());
    let query = p.query.as_ref().unwrap();
    assert_eq!(ir::DisplayQuery(&p, query).to_string(), "q([1, y],$Rect(w, _))");
    assert_eq!(query.adornment().to_string(), "ff");
    assert_eq!(query.records.as_ref().map(|r| r.args.len()), Some(2));
    let d = parse_query("q([1], s)", FileId(1), &mut p);
    assert_eq!(d[0].code, Code::INVALID_RECORD);

    // Each wrong shape is E0045 at the record or field it is about; a variable is E0011,
    // a field of the wrong type E0028, a malformed record E0014.
    let cases = [
        ("+r([1], nil, $Empty).", vec![("E0045", "[1]")]),
        ("+r([1, a, b], nil, $Empty).", vec![("E0045", "[1, a, b]")]),
        ("+r(nil, nil, $Square(1)).", vec![("E0045", "$Square(1)")]),
        ("+r(nil, nil, $Circle).", vec![("E0045", "$Circle")]),
        ("+r(nil, nil, $Rect(1)).", vec![("E0045", "$Rect(1)")]),
        ("+r(nil, nil, nil).", vec![("E0045", "nil")]),
        ("+r(nil, nil, [1]).", vec![("E0045", "[1]")]),
        ("+r($Empty, nil, $Empty).", vec![("E0045", "$Empty")]),
        ("+r(5, nil, $Empty).", vec![("E0045", "5")]),
        ("+r(nil, [1, 2], $Empty).", vec![("E0045", "2")]),
        ("+r(nil, [1, [2]], $Empty).", vec![("E0045", "[2]")]),
        ("+r([a, b], nil, $Circle([1])).", vec![("E0028", "a"), ("E0045", "[1]")]),
        ("+r([X, b], nil, $Circle(_)).", vec![("E0011", "X"), ("E0011", "_")]),
        ("+pt([1, 2.5]).", vec![("E0028", "2.5")]),
        ("+r([1 b], nil, $Empty).", vec![("E0014", "b")]),
        ("+r([1, b, nil, $Empty).", vec![("E0014", ")")]),
        ("+r(nil, nil, $ 5).", vec![("E0014", "5")]),
    ];
    for (line, expected) in cases {
        let (batches, diagnostics) = crate::parse_updates(line, FILE, &mut p);
        assert!(batches.iter().all(|b| b.changes.is_empty()), "{line}");
        let found: Vec<(&str, &str)> =
            diagnostics.iter().map(|d| (d.code.0, &line[d.primary_span().expect("spanned").range()])).collect();
        assert_eq!(found, expected, "{line}");
    }
    // Records nest a bounded depth, reported, not recursed on without limit.
    let deep = format!("+r(nil, {}1, nil{}, $Empty).", "[1, ".repeat(100), "]".repeat(99));
    let (_, diagnostics) = crate::parse_updates(&deep, FILE, &mut p);
    assert_eq!(diagnostics.len(), 1);
    assert!(diagnostics[0].message.contains("records nest deeper than"), "{:?}", diagnostics[0].message);
}

/// `_` inside a record of a negated atom leaves the record without a value to look for:
/// as Soufflé reports an ungrounded record, dlc reports E0045 at the outermost record,
/// and `_` as a whole argument of a negated atom stays "any value".
#[test]
fn a_record_with_an_anonymous_field_in_a_negated_atom_is_not_grounded() {
    let decls = ".type Pair = [a: number, b: symbol]\n.type Shape = Circle {r: number} | Rect {w: number, h: number}\n\
                 .decl r(p: Pair)\n.decl s(x: Shape, n: number)\n.decl n(x: number)\n.decl out(x: number)\n";
    let found = errors(&format!("{decls}out(x) :- n(x), !r([x, _]).\n"));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].0, found[0].1.as_str()), ("E0045", "[x, _]"));
    assert!(found[0].2.contains("not grounded"), "{found:?}");
    let found = errors(&format!("{decls}out(x) :- n(x), !s($Rect(x, _), x), !r([_, \"a\"]).\n"));
    let places: Vec<&str> = found.iter().map(|(_, place, _)| place.as_str()).collect();
    assert_eq!(places, ["$Rect(x, _)", "[_, \"a\"]"]);
    ok(&format!("{decls}out(x) :- n(x), !s(_, x), !r([x, \"a\"]).\n"));
}

/// A record made for a variable that only a head holds takes the head column's type, as
/// Soufflé types it (`h(r) :- e(x, y), r = [x, y].`); with no column to give it one, the
/// record's type is unknown (E0045).
#[test]
fn a_record_takes_the_type_of_the_head_column_its_variable_fills() {
    let decls = ".type P = [a: number, b: number]\n.decl e(x: number, y: number)\n.decl h(p: P)\n";
    let s = ok(&format!("{decls}h(r) :- e(x, y), r = [x, y].\n"));
    let made = s.program.rules[0].comparisons.iter().flat_map(|c| c.right.nodes.iter());
    assert!(made.into_iter().any(|n| matches!(n, ir::ExprNode::Call(ir::Functor::Record { .. }))));
    // With no column to give it a type, the record has its fields' own (Soufflé's too).
    ok(&format!("{decls}.decl g(x: number)\ng(x) :- e(x, y), r = [x, y].\n"));
    let found = errors(&format!("{decls}.decl g(x: number)\ng(x) :- e(x, y), r = nil.\n"));
    assert_eq!((found[0].0, found[0].1.as_str()), ("E0045", "nil"));
}

#[test]
fn records_no_declaration_types_compare_by_their_fields() {
    let s = ok(".decl g(x: number)\ng(1) :- [1, \"a\"] = [1, \"a\"].\ng(2) :- [a, b] = [5, 6], [b] = [6], a < b.\n");
    let structural: Vec<String> = s.program.consts.record_types().iter().map(|t| t.name.clone()).collect();
    assert_eq!(structural, ["[number, symbol]", "[number, number]", "[number]"]);
    // A record compared with no variable is made once and read once.
    let made = s.program.rules[0].comparisons.iter().flat_map(|c| c.left.nodes.iter().chain(&c.right.nodes));
    let records = made.filter(|n| matches!(n, ir::ExprNode::Call(ir::Functor::Record { .. }))).count();
    assert_eq!(records, 1);
}

#[test]
fn aggregates_nest_up_to_a_limit() {
    let decls = ".decl e(x: number, y: number)\n.decl r(x: number)\n";
    let nested = |depth: usize| {
        let mut body = "e(_, _)".to_string();
        for level in (0..depth).rev() {
            body = format!("{{ e(x{level}, _), x{level} = count : {body} }}");
        }
        format!("{decls}r(c) :- c = count : {body}.\n")
    };
    ok(&nested(7));
    let found = errors(&nested(8));
    assert_eq!((found[0].0, found[0].1.as_str()), ("E0018", ":"));
}

#[test]
fn annotations_are_read_and_mean_nothing() {
    let s = ok("@[doc = \"pairs\"]\n.type P = [\n  @[min] a: number,\n  @[form = [=] {=}] b: number\n]\n\
                .decl r(p: P)\n@![inner] @[rule(1)]\nr([1, 2]).\n");
    assert_eq!(s.program.rules.len() + s.program.facts.len(), 1);
    // An annotation left open is the parser's to report.
    assert_eq!(errors(".decl r(x: number)\n@[open\nr(1).\n")[0].0, "E0001");
}
