//! Soufflé programs end to end: every program under `fixtures/souffle/<name>/` is run
//! with `-F <name>/in -D <tmp>` by the default path, `--no-magic` and the reference
//! engine, and each must write exactly the files of `<name>/expected/` (computed once by
//! the reference engine without magic and checked by hand; they are never regenerated,
//! so a change of answers fails here).

mod common;

use common::{dlc, files, root};
use std::path::{Path, PathBuf};

fn fixtures() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir(root().join("fixtures/souffle")).unwrap().map(|e| e.unwrap().path()).collect();
    dirs.sort();
    dirs
}

#[test]
fn every_fixture_writes_its_expected_files_in_every_mode() {
    let fixtures = fixtures();
    assert!(fixtures.len() >= 7, "the Soufflé fixtures are missing");
    let tmp = common::temp_dir();
    for dir in fixtures {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let expected = files(&dir.join("expected"));
        assert!(!expected.is_empty(), "{name} has no expected files");
        let relative = |p: &str| format!("fixtures/souffle/{name}/{p}");
        // The flags of Soufflé's command line the fixture is run with, one a line
        // (paths relative to the repository's root), in its `args` file if it has one.
        let fixture_flags = std::fs::read_to_string(dir.join("args")).unwrap_or_default();
        let fixture_flags: Vec<&str> = fixture_flags.lines().filter(|l| !l.is_empty()).collect();
        for (mode, flags) in
            [("default", &[][..]), ("no_magic", &["--no-magic"]), ("reference", &["--engine", "reference"])]
        {
            let out = tmp.path().join(format!("{name}-{mode}"));
            let (prog, input) = (relative("prog.dl"), relative("in"));
            let mut args = vec![prog.as_str(), "-F", input.as_str(), "-D", out.to_str().unwrap(), "--no-timing"];
            args.extend_from_slice(&fixture_flags);
            args.extend_from_slice(flags);
            let run = dlc(&args);
            assert_eq!(run.code, 0, "{name} {mode} failed:\n{}", run.stderr);
            assert_eq!(files(&out), expected, "{name} {mode} wrote other files");
            let _ = std::fs::remove_dir_all(&out);
        }
    }
}

#[test]
fn a_selection_in_the_program_goes_through_magic_and_agrees_with_plain_evaluation() {
    let args = ["fixtures/souffle/magic_select/prog.dl", "-F", "fixtures/souffle/magic_select/in", "-D", "-"];
    let default = dlc(&[&args[..], &["--no-timing"]].concat());
    let plain = dlc(&[&args[..], &["--no-timing", "--no-magic"]].concat());
    assert_eq!(default.code, 0, "{}", default.stderr);
    assert_eq!(default.stdout, plain.stdout);
    assert_eq!(default.stdout, "---------------\nq\ny\n===============\n0\n1\n2\n6\n===============\n");
    // The default path demanded only node 0's paths; the plain one computed them all.
    assert!(default.stderr.contains("magic program") && default.stderr.contains("@m:path^bf 4"), "{}", default.stderr);
    assert!(plain.stderr.contains("original program: path 19, q 4"), "{}", plain.stderr);
    // Without a selection the rewrite would narrow nothing: the whole program is evaluated.
    let tc = dlc(&["fixtures/souffle/tc/prog.dl", "-F", "fixtures/souffle/tc/in", "-D", "-", "--no-timing"]);
    assert!(tc.stderr.contains("original program: path 13"), "{}", tc.stderr);
}

/// Outputs mode decides as a query does: on a right-linear chain of 300 edges the demand
/// of `path(0, y)` reaches every node, passes its cap, and `--magic auto` evaluates the
/// original program instead; `--magic on` keeps the rewrite; the rows are the same.
#[test]
fn outputs_mode_falls_back_to_the_original_program_when_demand_passes_its_cap() {
    let tmp = common::temp_dir();
    let dir = tmp.path();
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let edges: String = (0..300).map(|i| format!("{i}\t{}\n", i + 1)).collect();
    std::fs::write(input.join("edge.facts"), edges).unwrap();
    let prog = dir.join("prog.dl");
    std::fs::write(
        &prog,
        ".decl edge(x: number, y: number)\n.input edge\n.decl path(x: number, y: number)\n\
         path(x, y) :- edge(x, y).\npath(x, z) :- edge(x, y), path(y, z).\n\
         .decl q(y: number)\n.output q\nq(y) :- path(0, y).\n",
    )
    .unwrap();
    let run = |mode: &str| {
        let args = [prog.to_str().unwrap(), "-F", input.to_str().unwrap(), "-D", "-", "--no-timing", "--magic", mode];
        let out = dlc(&args);
        assert_eq!(out.code, 0, "{mode}: {}", out.stderr);
        out
    };
    let (auto, on, off) = (run("auto"), run("on"), run("off"));
    assert_eq!(auto.stdout, off.stdout);
    assert_eq!(on.stdout, off.stdout);
    assert_eq!(auto.stdout.lines().filter(|l| l.parse::<u32>().is_ok()).count(), 300);
    assert!(
        auto.stderr.contains("original program (--magic auto: demand `@m:path^bf` passed its cap"),
        "{}",
        auto.stderr
    );
    assert!(on.stderr.contains("magic program (--magic on)"), "{}", on.stderr);
}

#[test]
fn a_query_in_souffle_syntax_runs_the_magic_rewrite_for_it() {
    let base = ["fixtures/souffle/tc/prog.dl", "-F", "fixtures/souffle/tc/in", "--no-timing"];
    let run = dlc(&[&base[..], &["--query", "path(2, y)", "--compare"]].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("answers agree           yes"), "{}", run.stdout);
    let answers = dlc(&[&base[..], &["--query", "path(2, y)"]].concat());
    assert_eq!(answers.stdout, "path(2,2)\npath(2,3)\npath(2,4)\n");
    let magic_ir = dlc(&[&base[..], &["--query", "path(2, y)", "--emit", "magic-ir"]].concat());
    assert!(magic_ir.stdout.starts_with("@m:path^bf(2) <-\n"), "{}", magic_ir.stdout);
}

#[test]
fn printsize_prints_sizes_and_stdout_outputs_print() {
    let tmp = common::temp_dir();
    let out = tmp.path().join("printsize");
    let run = dlc(&[
        "fixtures/souffle/multi_output/prog.dl",
        "-F",
        "fixtures/souffle/multi_output/in",
        "-D",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "node\t4\nlinked\t5\n");
}

#[test]
fn flags_that_need_a_query_are_usage_errors_without_one() {
    let base = ["fixtures/souffle/tc/prog.dl", "-F", "fixtures/souffle/tc/in", "-D", "-"];
    for extra in [&["--emit", "magic-ir"][..], &["--compare"], &["--emit", "trace"]] {
        let run = dlc(&[&base[..], extra].concat());
        assert_eq!(run.code, 2, "{extra:?}: {}", run.stderr);
        assert!(run.stderr.contains("--query 'path(1, y)'"), "{}", run.stderr);
    }
    // With a query, -D writes its answers as text: traces and JSON are usage errors.
    for extra in [&["--emit", "trace"][..], &["--format", "json"]] {
        let run = dlc(&[&["fixtures/ok/reach.dl", "-D", "-"][..], extra].concat());
        assert_eq!(run.code, 2, "{extra:?}: {}", run.stderr);
    }
}

#[test]
fn a_missing_input_file_is_an_error_at_its_directive() {
    let run = dlc(&["fixtures/souffle/tc/prog.dl", "-F", "fixtures/souffle/tc", "-D", "-", "--color", "never"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("[E0012]") && run.stderr.contains("`.input edge` reads it"), "{}", run.stderr);
    assert!(run.stdout.is_empty());
}

#[test]
fn souffles_build_flags() {
    let project = "fixtures/souffle/multi_file_project";
    let prog = format!("{project}/prog.dl");
    let include = format!("{project}/include");
    let base = [prog.as_str(), "-F", "fixtures/souffle/multi_file_project/in", "-D", "-", "--color", "never"];
    // Without -I the included file is found nowhere: the report names where it looked.
    let run = dlc(&[&base[..], &["-M", "MAX_HOPS=3 WITH_TAGS"]].concat());
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("cannot include `macros.dl`: it is in none of `fixtures/souffle/multi_file_project/src`, `.`"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.matches("[E").count(), 1, "one report: {}", run.stderr);
    // The long forms, -M given twice, and -j.
    let flags = ["--include-dir", &include, "--macro=MAX_HOPS=2", "--macro", "WITH_TAGS", "-j", "auto"];
    let run = dlc(&[&base[..], &flags].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("near"), "MAX_HOPS=2 takes the `#elif`: {}", run.stdout);
    // A bad -M definition is reported where the command line is shown.
    let run = dlc(&[&base[..], &["-I", &include, "-M", "1X=2"]].concat());
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("<command-line>"), "{}", run.stderr);
    // -w drops the warnings, not the errors.
    let warned = dlc(&["fixtures/ok/souffle_preprocessor.dl", "--color", "never"]);
    assert!(warned.stderr.contains("[W0008]"), "{}", warned.stderr);
    let quiet = dlc(&["fixtures/ok/souffle_preprocessor.dl", "--color", "never", "-w"]);
    assert_eq!(quiet.code, 0);
    assert!(!quiet.stderr.contains("Warning"), "{}", quiet.stderr);
    // Soufflé's flags of compiled programs, profiles and provenance: one line, status 2.
    for flag in [
        &["-o", "prog"][..],
        &["-c"],
        &["--compile"],
        &["-p", "prof.log"],
        &["-t", "explain"],
        &["--provenance=explain"],
    ] {
        let run = dlc(&[&base[..], flag].concat());
        assert_eq!(run.code, 2, "{flag:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{flag:?}: {}", run.stderr);
        assert!(run.stderr.starts_with("dlc: -"), "{}", run.stderr);
    }
    // `--show` prints what the matching `--emit` prints; a form dlc has no listing for is
    // a usage error.
    let prog = "fixtures/souffle/records/prog.dl";
    for (show, emit) in [("initial-ast", "ast"), ("transformed-datalog", "ir"), ("scc-graph", "plan")] {
        let shown = dlc(&[prog, "--show", show]);
        assert_eq!(shown.code, 0, "{show}: {}", shown.stderr);
        assert_eq!(shown.stdout, dlc(&[prog, "--emit", emit]).stdout, "{show}");
    }
    let run = dlc(&[prog, "--show", "type-analysis"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("try `--emit ir`"), "{}", run.stderr);
    let version = dlc(&["--version"]);
    assert_eq!(version.code, 0);
    assert!(version.stdout.starts_with("dlc "), "{}", version.stdout);
}

#[test]
fn the_dialect_can_be_forced() {
    // Without `.decl` a file is read as dlc's language; `--dialect souffle` overrides.
    let run = dlc(&["fixtures/ok/reach.dl", "--dialect", "souffle", "--color", "never"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("[E0019]"), "{}", run.stderr);
    let run = dlc(&["fixtures/souffle/tc/prog.dl", "--dialect", "dlc", "--color", "never"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("[E0001]"), "{}", run.stderr);
}

#[test]
fn emit_ir_and_ast_work_without_a_query() {
    let base = ["fixtures/souffle/magic_select/prog.dl", "-F", "fixtures/souffle/magic_select/in"];
    let ir = dlc(&[&base[..], &["--emit", "ir"]].concat());
    assert_eq!(ir.code, 0, "{}", ir.stderr);
    assert!(ir.stdout.contains("q(y) <- path(0,y)"), "{}", ir.stdout);
    let ast = dlc(&[&base[..], &["--emit", "ast"]].concat());
    assert_eq!(ast.code, 0, "{}", ast.stderr);
    assert!(ast.stdout.contains("Atom path"), "{}", ast.stdout);
}

#[test]
fn the_repl_reads_queries_of_a_souffle_program_in_its_syntax() {
    let args = ["repl", "fixtures/souffle/tc/prog.dl", "-F", "fixtures/souffle/tc/in", "--query", "path(1, y)"];
    let run = common::dlc_with_input(&args, "?- path(10, y).\n");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("path(10,11)\n1 answer(s)"), "{}", run.stdout);
    let run = dlc(&["repl", "fixtures/souffle/tc/prog.dl", "-D", "out"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

/// Without a query, the repl starts with the all-free query of the first `.output`
/// relation by name, maintains every relation, and answers a query on any of them.
#[test]
fn the_repl_runs_a_souffle_program_without_a_query() {
    let args = ["repl", "fixtures/souffle/multi_output/prog.dl", "-F", "fixtures/souffle/multi_output/in", "--check"];
    let run = common::dlc_with_input(&args, "-edge(a,b).\n;\n?- node(x).\n");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("dlc repl: 2 answer(s) to ?- favourite(x0)."), "{}", run.stdout);
    assert!(run.stdout.contains("  answers removed: favourite(a)\n"), "{}", run.stdout);
    assert!(run.stdout.contains("node(b)\nnode(c)\nnode(d)\n3 answer(s)"), "{}", run.stdout);
}

mod magic_per_output {
    //! For random Soufflé programs with one `.output`, the default path (the magic
    //! rewrite when the rules select a constant) writes the same rows as `--no-magic`.

    use super::common;
    use proptest::prelude::*;

    const RELATIONS: &[(&str, usize)] = &[("e0", 2), ("e1", 1), ("p0", 2), ("p1", 1), ("p2", 0), ("p3", 3)];
    const IDB_FROM: usize = 2;
    const TERMS: &[&str] = &["x", "y", "z", "w", "x", "y", "\"a\"", "\"b\""];

    fn atom(rel: usize, args: &[usize]) -> String {
        let (name, arity) = RELATIONS[rel];
        let args: Vec<&str> = args.iter().take(arity).map(|&t| TERMS[t]).collect();
        format!("{name}({})", args.join(", "))
    }

    /// A safe rule: head variables are drawn from the body's.
    fn rule() -> impl Strategy<Value = String> {
        let body_atom = (0..RELATIONS.len(), prop::collection::vec(0..TERMS.len(), 3));
        (
            IDB_FROM..RELATIONS.len(),
            prop::collection::vec(body_atom, 1..4),
            prop::collection::vec(any::<prop::sample::Index>(), 3),
        )
            .prop_map(|(head, body, picks)| {
                let mut vars: Vec<usize> = Vec::new();
                for (rel, args) in &body {
                    for &t in args.iter().take(RELATIONS[*rel].1) {
                        if !TERMS[t].starts_with('"') && !vars.contains(&t) {
                            vars.push(t);
                        }
                    }
                }
                let head_args: Vec<usize> =
                    picks.iter().map(|ix| if vars.is_empty() { 6 } else { vars[ix.index(vars.len())] }).collect();
                let body: Vec<String> = body.iter().map(|(rel, args)| atom(*rel, args)).collect();
                format!("{} :- {}.", atom(head, &head_args), body.join(", "))
            })
    }

    fn program() -> impl Strategy<Value = String> {
        let fact =
            (0..IDB_FROM, prop::collection::vec(6..TERMS.len(), 3)).prop_map(|(rel, args)| atom(rel, &args) + ".");
        (prop::collection::vec(rule(), 1..6), prop::collection::vec(fact, 0..10), IDB_FROM..RELATIONS.len()).prop_map(
            |(rules, facts, output)| {
                let mut text = String::new();
                for (name, arity) in RELATIONS {
                    let attrs: Vec<String> = (0..*arity).map(|i| format!("a{i}:symbol")).collect();
                    text += &format!(".decl {name}({})\n", attrs.join(", "));
                }
                text += &format!(".output {}\n", RELATIONS[output].0);
                text + &facts.join("\n") + "\n" + &rules.join("\n") + "\n"
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn default_rows_equal_plain_rows(src in program()) {
            let tmp = common::temp_dir();
            let path = tmp.path().join("prog.dl");
            std::fs::write(&path, &src).unwrap();
            let path = path.to_str().unwrap();
            let default = common::dlc(&[path, "-D", "-", "--no-timing"]);
            let plain = common::dlc(&[path, "-D", "-", "--no-timing", "--no-magic"]);
            prop_assert_eq!(default.code, 0, "{}\n{}", src, default.stderr);
            prop_assert_eq!(&default.stdout, &plain.stdout, "{}", src);
        }
    }
}

#[test]
fn number_fields_are_read_as_numbers_and_symbol_fields_verbatim() {
    let tmp = common::temp_dir();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("in")).unwrap();
    let prog = ".type Id <: number\n.decl e(x:Id, s:symbol)\n.input e\n.decl r(x:number, s:symbol)\n.output r\n\
                r(x, s) :- e(x, s).\nr(8, \"08\") :- e(08, _).\n";
    std::fs::write(dir.join("prog.dl"), prog).unwrap();
    std::fs::write(dir.join("in/e.facts"), "007\t007\n8\t-0\n").unwrap();
    let run = dlc(&[dir.join("prog.dl").to_str().unwrap(), "-F", dir.join("in").to_str().unwrap(), "-D", "-"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "---------------\nr\nx\ts\n===============\n7\t007\n8\t-0\n8\t08\n===============\n");
}

#[test]
fn an_update_of_an_input_relation_that_rules_derive_names_its_loaded_facts() {
    let base = ["fixtures/souffle/derived_input/prog.dl", "-F", "fixtures/souffle/derived_input/in"];
    let mut args = base.to_vec();
    args.extend(["--query", "isolated(x)", "--color", "never", "--insert", "path(50, 51)"]);
    let refused = dlc(&args);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(refused.stderr.contains("E0015"), "{}", refused.stderr);
    assert!(refused.stderr.contains("update `path_input(...)`"), "{}", refused.stderr);
    let mut args = base.to_vec();
    args.extend(["--query", "isolated(x)", "--check", "--no-timing", "--insert", "path_input(50, 51)"]);
    let updated = dlc(&args);
    assert_eq!(updated.code, 0, "{}", updated.stderr);
    assert!(updated.stdout.contains("answers added: isolated(50)"), "{}", updated.stdout);
}

/// A relation of a component's instance is named by its qualified name on the command
/// line too: in a query, an update and a fact to explain.
#[test]
fn a_query_and_an_update_name_a_relation_of_an_instance() {
    let base =
        ["fixtures/souffle/component_nested/prog.dl", "-F", "fixtures/souffle/component_nested/in", "--no-timing"];
    let mut args = base.to_vec();
    args.extend(["--query", "net.far.dist(10, d)", "--check", "--insert", "net.link.pair(9, 10)"]);
    let run = dlc(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // 9 becomes a start of `far` too, one step from 10.
    let added = "answers added: net.far.dist(10,1) net.far.dist(10,2) net.far.dist(10,3)";
    assert!(run.stdout.contains(added), "{}", run.stdout);
    let mut args = base.to_vec();
    args.extend(["--query", "net.near.dist(x, d)", "--explain", "net.near.dist(5, 3)"]);
    let run = dlc(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("net.link.pair(3,5)"), "{}", run.stdout);
}

/// A relation both loaded and derived, read under a negation: deleting an edge makes a
/// node isolated, inserting one makes two nodes stop being isolated, and every strategy
/// maintains that without recomputing (`--check` compares each batch with a fresh run).
#[test]
fn updates_under_negation_of_an_input_relation_that_rules_derive() {
    let tmp = common::temp_dir();
    let updates = tmp.path().join("updates.txt");
    std::fs::write(&updates, "-edge(2,3).\n+path_input(2,9).\n;\n-edge(1,2).\n;\n+edge(9,2).\n").unwrap();
    for maintenance in ["auto", "dred", "ranked"] {
        let out = dlc(&[
            "fixtures/souffle/derived_input/prog.dl",
            "-F",
            "fixtures/souffle/derived_input/in",
            "--query",
            "isolated(x)",
            "--updates",
            updates.to_str().unwrap(),
            "--check",
            "--no-timing",
            "--maintenance",
            maintenance,
        ]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let batches: Vec<&str> = out.stdout.split("batch ").skip(1).collect();
        assert_eq!(batches.len(), 3, "{}", out.stdout);
        assert!(batches[0].contains("answers added: isolated(3)\n"), "{}", out.stdout);
        assert!(batches[1].contains("answers added: isolated(2)\n"), "{}", out.stdout);
        assert!(batches[2].contains("answers removed: isolated(2) isolated(9)\n"), "{}", out.stdout);
        assert!(!out.stdout.contains("recompute"), "{}", out.stdout);
    }
}

/// Updates of a Soufflé program without a query maintain every `.output` relation: after
/// the batches (checked against recomputation after each), `-D` writes exactly the files
/// a fresh run on the changed input writes, with every maintenance strategy.
#[test]
fn updates_maintain_every_output_relation() {
    let program = "fixtures/souffle/multi_output/prog.dl";
    let input = root().join("fixtures/souffle/multi_output/in");
    // The changed input, written out for the fresh run.
    let tmp = common::temp_dir();
    let changed = tmp.path().join("input");
    std::fs::create_dir_all(&changed).unwrap();
    std::fs::write(changed.join("colour.facts"), std::fs::read(input.join("colour.facts")).unwrap()).unwrap();
    let edges = std::fs::read_to_string(input.join("edges.csv")).unwrap().replace("a,b\n", "") + "x,a\n";
    std::fs::write(changed.join("edges.csv"), edges).unwrap();
    let fresh = tmp.path().join("fresh");
    let out = dlc(&[program, "-F", changed.to_str().unwrap(), "-D", fresh.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let updates = tmp.path().join("updates.txt");
    std::fs::write(&updates, "-edge(a,b).\n;\n+edge(x,a).\n").unwrap();
    for maintenance in ["auto", "dred", "ranked"] {
        let maintained = tmp.path().join(maintenance);
        let out = maintained_with_check(program, &input, &maintained, &updates, &[], maintenance);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(out.stdout.starts_with("batch 1: -edge(a,b)\n  maintained by: "), "{}", out.stdout);
        assert!(out.stdout.contains("  linked: 2 removed, 0 added\n"), "{}", out.stdout);
        assert!(out.stdout.contains("batch 2: +edge(x,a)\n"), "{}", out.stdout);
        assert!(out.stdout.contains("  node: 0 removed, 2 added\n"), "{}", out.stdout);
        assert_eq!(files(&maintained), files(&fresh), "{maintenance}");
    }
}

/// A query selects from a relation that only facts in the program define, or that only
/// an `.input` fills: Soufflé holds those facts in the relation, so they are its answers,
/// in every mode, on the command line and in the file.
#[test]
fn a_query_answers_from_facts_in_the_program_and_from_an_input() {
    let tmp = common::temp_dir();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("in")).unwrap();
    let program = dir.join("prog.dl");
    std::fs::write(
        &program,
        ".decl r(x: number, y: number)\nr(1, 2). r(1, 3). r(2, 4).\n\
         .decl e(x: number, y: number)\n.input e\n\
         .decl s(x: number)\ns(x) :- r(x, _), e(x, _).\n.output s\n",
    )
    .unwrap();
    std::fs::write(dir.join("in/e.facts"), "1\t5\n1\t6\n7\t8\n").unwrap();
    let (program, input) = (program.to_str().unwrap(), dir.join("in"));
    for mode in [&[][..], &["--no-magic"], &["--engine", "reference"], &["--magic", "on"]] {
        let run = |query: &str| {
            let mut args = vec![program, "-F", input.to_str().unwrap(), "--query", query, "--no-timing"];
            args.extend_from_slice(mode);
            dlc(&args)
        };
        let facts = run("r(1, y)");
        assert_eq!((facts.code, facts.stdout.as_str()), (0, "r(1,2)\nr(1,3)\n"), "{mode:?}: {}", facts.stderr);
        let read = run("e(1, y)");
        assert_eq!((read.code, read.stdout.as_str()), (0, "e(1,5)\ne(1,6)\n"), "{mode:?}: {}", read.stderr);
    }
    let in_file = dir.join("query.dl");
    std::fs::write(&in_file, ".decl r(x: symbol)\nr(\"a\"). r(\"b\").\n?- r(y).\n").unwrap();
    let out = dlc(&[in_file.to_str().unwrap(), "--no-timing"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "r(a)\nr(b)\n"), "{}", out.stderr);
}

/// A Soufflé program written to the empty directory `dir` with the given facts files:
/// the program's path and its `in/` directory.
fn program_with_facts(dir: &Path, program: &str, facts: &[(&str, &[u8])]) -> (PathBuf, PathBuf) {
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    for (file, bytes) in facts {
        std::fs::write(input.join(file), bytes).unwrap();
    }
    let prog = dir.join("prog.dl");
    std::fs::write(&prog, program).unwrap();
    (prog, input)
}

/// The text of a gzip-compressed file.
fn gunzip(path: &Path) -> String {
    let mut text = String::new();
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    std::io::Read::read_to_string(&mut flate2::read::MultiGzDecoder::new(file), &mut text).unwrap();
    text
}

/// An `.output` with `compress` is written gzip-compressed, as Soufflé 2.5 writes it:
/// `<Rel>.csv.gz` unless `filename` names it, and whatever the parameter's value (Soufflé
/// tests only that it is there); `-D -` prints it as text.
#[test]
fn compress_writes_gzip_files() {
    let tmp = common::temp_dir();
    let (prog, input) = program_with_facts(
        tmp.path(),
        ".decl e(x:symbol, y:number)\n.input e\n\
         .decl a(x:symbol, y:number)\n.output a(compress=true)\na(x, y) :- e(x, y).\n\
         .decl b(x:symbol)\n.output b(compress=false, filename=\"b.txt\")\nb(x) :- e(x, _).\n",
        &[("e.facts", b"p\t1\nq\t2\n")],
    );
    let out = prog.parent().unwrap().join("out");
    let run = dlc(&[prog.to_str().unwrap(), "-F", input.to_str().unwrap(), "-D", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut written: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    written.sort();
    assert_eq!(written, ["a.csv.gz", "b.txt"]);
    assert_eq!(gunzip(&out.join("a.csv.gz")), "p\t1\nq\t2\n");
    assert_eq!(gunzip(&out.join("b.txt")), "p\nq\n");
    let printed = dlc(&[prog.to_str().unwrap(), "-F", input.to_str().unwrap(), "-D", "-"]);
    assert!(printed.stdout.contains("===============\np\t1\nq\t2\n"), "{}", printed.stdout);
    // A facts file that starts as gzip but is not is E0012, saying so.
    std::fs::write(input.join("e.facts"), b"\x1f\x8bnot gzip at all").unwrap();
    let broken = dlc(&[prog.to_str().unwrap(), "-F", input.to_str().unwrap(), "-D", "-", "--color", "never"]);
    assert_eq!(broken.code, 1, "{}", broken.stderr);
    assert!(broken.stderr.contains("[E0012]") && broken.stderr.contains("gzip content cannot be decompressed"));
}

/// A parameter Soufflé 2.5 does not know (a misspelling) is ignored, as Soufflé ignores
/// it, with a warning at it that names the nearest known parameter.
#[test]
fn an_unknown_io_parameter_is_a_warning_naming_the_nearest_one() {
    let tmp = common::temp_dir();
    let (prog, input) = program_with_facts(
        tmp.path(),
        ".decl e(x:symbol, y:symbol)\n.input e(delimeter=\",\")\n.decl o(x:symbol)\n.output o(hedaers=true)\no(x) :- e(x, _).\n",
        &[("e.facts", b"a,b\tc\n")],
    );
    let run = dlc(&[prog.to_str().unwrap(), "-F", input.to_str().unwrap(), "-D", "-", "--color", "never"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The delimiter stays a tab.
    assert!(run.stdout.contains("===============\na,b\n"), "{}", run.stdout);
    assert_eq!(run.stderr.matches("[W0007]").count(), 2, "{}", run.stderr);
    for (name, nearest) in [("delimeter", "delimiter"), ("hedaers", "headers")] {
        assert!(run.stderr.contains(&format!("no parameter `{name}`")), "{}", run.stderr);
        assert!(run.stderr.contains(&format!("did you mean `{nearest}`?")), "{}", run.stderr);
    }
}

/// Lines that hold no tuple as Soufflé reads them are E0013 at the line: too few fields,
/// an empty line of a two-column relation, an unclosed quote under `rfc4180=true`.
#[test]
fn lines_without_a_tuple_are_reported() {
    let tmp = common::temp_dir();
    let (prog, input) = program_with_facts(
        tmp.path(),
        ".decl e(x:symbol, y:symbol)\n.input e\n.decl q(x:symbol, y:symbol)\n.input q(rfc4180=true)\n\
         .decl o(x:symbol)\n.output o\no(x) :- e(x, _).\no(x) :- q(x, _).\n",
        &[("e.facts", b"a\tb\nonly\n\n"), ("q.facts", b"\"open,x\n")],
    );
    let run = dlc(&[prog.to_str().unwrap(), "-F", input.to_str().unwrap(), "-D", "-", "--color", "never"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.stderr.matches("[E0013]").count(), 3, "{}", run.stderr);
    assert!(run.stderr.contains("this line has 1 field(s), but `e` has 2 column(s)"), "{}", run.stderr);
    assert!(run.stderr.contains("opens a double quote that it never closes"), "{}", run.stderr);
}

/// The `--emit` forms that show the program (`ir`, `plan`, `ast`) read no facts file: a
/// missing one does not stop them, while a run that evaluates reports it (E0012). An
/// input relation no output needs is not read even by a run.
#[test]
fn only_runs_that_evaluate_read_the_inputs_they_need() {
    let tmp = common::temp_dir();
    let (prog, input) = program_with_facts(
        tmp.path(),
        ".decl e(x:number)\n.input e\n.decl unused(x:number)\n.input unused\n\
         .decl o(x:number)\n.output o\no(x) :- e(x).\n",
        &[],
    );
    let base = [prog.to_str().unwrap(), "-F", input.to_str().unwrap(), "--color", "never"];
    for emit in ["ir", "plan", "ast"] {
        let run = dlc(&[&base[..], &["--emit", emit]].concat());
        assert_eq!(run.code, 0, "--emit {emit}: {}", run.stderr);
    }
    let run = dlc(&[&base[..], &["-D", "-"]].concat());
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.stderr.matches("[E0012]").count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("`.input e` reads it"), "{}", run.stderr);
    std::fs::write(input.join("e.facts"), "3\n").unwrap();
    let run = dlc(&[&base[..], &["-D", "-"]].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("===============\n3\n"), "{}", run.stdout);
    // A query reads what it depends on.
    let run = dlc(&[&base[..], &["--query", "o(x)"]].concat());
    assert_eq!((run.code, run.stdout.as_str()), (0, "o(3)\n"), "{}", run.stderr);
    // The dlc dialect's `--facts` likewise.
    let run = dlc(&["fixtures/ok/reach.dl", "--facts", "no/such/file.facts", "--emit", "ir"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = dlc(&["fixtures/ok/reach.dl", "--facts", "no/such/file.facts"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
}

/// Update lines, update flags, the repl and `--explain` write records as Soufflé does
/// (`[4, w]`, `[5, [6, nil]]`, `$Circle(5)`, `$Empty`): batches that insert and delete
/// records are maintained (checked against recomputation after each, with every
/// maintenance strategy), and `-D` then writes exactly what a fresh run on the changed
/// input writes.
#[test]
fn updates_insert_and_delete_records() {
    let program = "fixtures/souffle/records/prog.dl";
    let input = root().join("fixtures/souffle/records/in");
    let tmp = common::temp_dir();
    let changed = tmp.path().join("input");
    std::fs::create_dir_all(&changed).unwrap();
    let read = |name: &str| std::fs::read_to_string(input.join(name)).unwrap();
    std::fs::write(changed.join("pair.facts"), read("pair.facts").replace("[1, x]\n", "") + "[4, w]\n").unwrap();
    std::fs::write(changed.join("list.facts"), read("list.facts").replace("[7, nil]\n", "") + "[5, [6, nil]]\n")
        .unwrap();
    std::fs::write(changed.join("shape.facts"), read("shape.facts").replace("$Rect(4, 4)\n", "") + "$Circle(5)\n")
        .unwrap();
    std::fs::write(changed.join("point.facts"), read("point.facts") + "[2.5, 3]\n").unwrap();
    let fresh = tmp.path().join("fresh");
    let out = dlc(&[program, "-F", changed.to_str().unwrap(), "-D", fresh.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_ne!(files(&fresh), files(&root().join("fixtures/souffle/records/expected")), "the changes show");
    let updates = tmp.path().join("updates.txt");
    std::fs::write(
        &updates,
        "+pair([4, w]).\n-pair([1, \"x\"]).\n+list([5, [6, nil]]).\n-shape($Rect(4, 4)).\n;\n\
         +shape($Circle(5)).\n-list([7, nil]).\n-shape($Empty()).\n+shape($Empty)\n",
    )
    .unwrap();
    for maintenance in ["auto", "dred", "ranked"] {
        let maintained = tmp.path().join(maintenance);
        let out = maintained_with_check(
            program,
            &input,
            &maintained,
            &updates,
            &["--insert", "point([2.5, 3])"],
            maintenance,
        );
        assert_eq!(out.code, 0, "{maintenance}: {}", out.stderr);
        assert!(
            out.stdout.contains("batch 2: +pair([4, w]) -pair([1, x]) +list([5, [6, nil]]) -shape($Rect(4, 4))\n"),
            "{}",
            out.stdout
        );
        assert!(out.stdout.contains("  square: 1 removed, 0 added\n"), "{}", out.stdout);
        assert_eq!(files(&maintained), files(&fresh), "{maintenance}");
    }
    // A record of the wrong shape is reported at its place, and nothing is evaluated.
    let bad = tmp.path().join("bad-updates.txt");
    std::fs::write(&bad, "+pair([4]).\n+shape($Square(2)).\n").unwrap();
    let out = dlc(&[program, "-F", input.to_str().unwrap(), "--updates", bad.to_str().unwrap(), "--color", "never"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("[E0045] Error: a record of `Pair` has 2 field(s); 1 given"), "{}", out.stderr);
    assert!(out.stderr.contains(":1:7 ]"), "{}", out.stderr);
    assert!(out.stderr.contains("[E0045] Error: no type declares the branch `Square`"), "{}", out.stderr);

    // `--explain` names a fact by its records.
    let args = [program, "-F", input.to_str().unwrap(), "--query", "area(s, a)", "--no-timing"];
    let out = dlc(&[&args[..], &["--explain", "area($Rect(2, 3), 6)"]].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("  shape($Rect(2, 3))  input fact\n"), "{}", out.stdout);

    // The repl inserts, deletes, queries and explains records.
    let args = ["repl", program, "-F", input.to_str().unwrap(), "--query", "area(s, a)", "--check"];
    let lines = "+shape($Circle(5)).\n-shape($Empty).\n;\n?- area($Circle(5), a).\n:why area($Circle(5), 75)\n";
    let run = common::dlc_with_input(&args, lines);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("batch 1: +shape($Circle(5)) -shape($Empty)\n"), "{}", run.stdout);
    assert!(run.stdout.contains("  answers removed: area($Empty,0)\n"), "{}", run.stdout);
    assert!(run.stdout.contains("  answers added: area($Circle(5),75)\n"), "{}", run.stdout);
    assert!(run.stdout.contains("area($Circle(5),75)\n1 answer(s)"), "{}", run.stdout);
    assert!(run.stdout.contains("  shape($Circle(5))  input fact\n"), "{}", run.stdout);
}

/// A query's record argument is a pattern: its variables bind the record's fields (the
/// same name in two places asks for equal values), `_` matches anything, and a record
/// without variables is the one value it writes. Every engine gives the same answers,
/// and batches keep them (checked against recomputation).
#[test]
fn queries_select_records_by_pattern() {
    let program = "fixtures/souffle/records/prog.dl";
    let input = root().join("fixtures/souffle/records/in");
    let cases = [
        ("area($Rect(w, w), a)", "area($Rect(4, 4),16)\n"),
        ("area($Rect(w, h), a)", "area($Rect(2, 3),6)\narea($Rect(4, 4),16)\n"),
        ("suffix([h, [x, _]])", "suffix([1, [2, [3, nil]]])\nsuffix([2, [3, nil]])\n"),
        ("length([h, nil], n)", "length([3, nil],1)\nlength([7, nil],1)\n"),
        ("length([n, _], n)", "length([2, [3, nil]],2)\n"),
        ("length([h, _], 1)", "length([3, nil],1)\nlength([7, nil],1)\n"),
        ("length([3, nil], n)", "length([3, nil],1)\n"),
        ("fields(a, b)", "fields(1,x)\nfields(2,\"b, c\")\nfields(3,z)\n"),
    ];
    for engine in ["seminaive", "reference", "differential"] {
        for (query, answers) in cases {
            let args = [program, "-F", input.to_str().unwrap(), "--engine", engine, "--query", query, "--no-timing"];
            let out = dlc(&args);
            assert_eq!(out.code, 0, "{engine} {query}: {}", out.stderr);
            assert_eq!(out.stdout, answers, "{engine} {query}");
        }
    }
    // Batches change the answers a pattern selects, with every maintenance strategy.
    let tmp = common::temp_dir();
    let updates = common::write_file(&tmp.path().join("u.txt"), "+shape($Rect(5, 5)).\n-shape($Rect(4, 4)).\n");
    for maintenance in ["dred", "ranked"] {
        let args = [program, "-F", input.to_str().unwrap(), "--query", "area($Rect(w, w), a)", "--updates", &updates];
        let out = dlc(&[&args[..], &["--maintenance", maintenance, "--check", "--no-timing"]].concat());
        assert_eq!(out.code, 0, "{maintenance}: {}", out.stderr);
        assert!(out.stdout.contains("  answers removed: area($Rect(4, 4),16)\n"), "{}", out.stdout);
        assert!(out.stdout.contains("  answers added: area($Rect(5, 5),25)\n"), "{}", out.stdout);
    }
    // A pattern of the wrong shape is reported at its place.
    let out = dlc(&[program, "-F", input.to_str().unwrap(), "--query", "length([h], n)", "--color", "never"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("[E0045] Error: a record of `List` has 2 field(s); 1 given"), "{}", out.stderr);
}

/// An update line, an update flag and a fact to explain write a float as a program does
/// (`1.5`, `-0.25`, `1000.0`); a float in a column of another type is E0028 at the float.
#[test]
fn updates_write_floats() {
    let tmp = common::temp_dir();
    let program = common::write_file(
        &tmp.path().join("prog.dl"),
        ".decl m(x: float, n: number)\n.input m\n.decl big(x: float)\n.output big\nbig(x) :- m(x, _), x > 1.0.\n",
    );
    common::write_file(&tmp.path().join("m.facts"), "1.5\t1\n0.5\t2\n");
    let updates =
        common::write_file(&tmp.path().join("u.txt"), "+m(2.5, 3).\n-m(1.5, 1).\n+m(-0.25, 4)\n+m(1000.0, 5).\n");
    let facts = tmp.path().to_str().unwrap();
    let args = [&program[..], "-F", facts, "-D", "-", "--updates", &updates, "--check", "--no-timing"];
    let out = dlc(&[&args[..], &["--insert", "m(7.75, 6)"]].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("batch 2: +m(2.5,3) -m(1.5,1) +m(-0.25,4) +m(1000,5)\n"), "{}", out.stdout);
    assert!(out.stdout.contains("big\nx\n===============\n2.5\n7.75\n1000\n"), "{}", out.stdout);
    let out = dlc(&[&program[..], "-F", facts, "--query", "big(x)", "--explain", "big(1.5)", "--no-timing"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("  m(1.5,1)  input fact\n"), "{}", out.stdout);
    let bad = common::write_file(&tmp.path().join("bad.txt"), "+m(2, 2.5).\n");
    let out = dlc(&[&program[..], "-F", facts, "--updates", &bad, "--color", "never"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("[E0028] Error: `2.5` is a float, in a number column"), "{}", out.stderr);
    assert!(out.stderr.contains("bad.txt:1:7 ]"), "{}", out.stderr);
}

/// Comparisons without variables compute in their literals' type, as Soufflé 2.5 does:
/// `0u - 1u > 0u` compares unsigned values (so it holds), `4294967295u` is an unsigned
/// constant, and two branches of an algebraic data type compare as the values they make.
/// The expected rows are Soufflé 2.5's.
#[test]
fn constant_comparisons_compute_in_their_literals_type() {
    let tmp = common::temp_dir();
    let program = common::write_file(
        &tmp.path().join("prog.dl"),
        ".type A = C {x: number} | D {}\n.decl S(x: unsigned)\n\
         S(42u) :- 0u - 1u > 0u.\nS(7u) :- 0u < 2147483647u + 1u.\nS(1u) :- bnot(1u) > 0u.\n\
         S(2u) :- 4294967295u > 1u.\nS(3u) :- 2147483648u > 0u.\nS(4u) :- 1u > 2u.\n\
         .decl R(x: number)\nR(1) :- $D() = $D().\nR(2) :- $C(1) = $C(2).\nR(3) :- $C(1) = $C(1).\n\
         R(4) :- $C(1) != $C(2).\nR(5) :- $D() != $D().\n.output S, R\n",
    );
    let out = dlc(&[&program, "-D", "-"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let expected = "---------------\nR\nx\n===============\n1\n3\n4\n===============\n\
                    ---------------\nS\nx\n===============\n1\n2\n3\n7\n42\n===============\n";
    assert_eq!(out.stdout, expected);
}

/// Runs `program` on the input directory `input` with the batches of `updates` (and the
/// flags `extra`) maintained by `maintenance`, each batch checked against a fresh
/// evaluation (`--check`), writing the outputs into `out`.
fn maintained_with_check(
    program: &str,
    input: &Path,
    out: &Path,
    updates: &Path,
    extra: &[&str],
    maintenance: &str,
) -> common::Output {
    let (input, out, updates) = (input.to_str().unwrap(), out.to_str().unwrap(), updates.to_str().unwrap());
    let flags = ["-F", input, "-D", out, "--updates", updates, "--check", "--no-timing", "--maintenance", maintenance];
    dlc(&[&[program], extra, &flags[..]].concat())
}

/// JSON that does not parse is E0013 at the line and column where the parser stopped; a
/// tuple whose values are not of their columns' types is E0013 at the tuple; a relation
/// holding an algebraic data type is refused under `IO=json` (E0018), as Soufflé's JSON
/// reader and writer know none; `IO=json` reads standard input, which an `.input` is
/// refused.
#[test]
fn bad_json_is_reported_where_it_is() {
    let tmp = common::temp_dir();
    let source = ".type P = [x: number, s: symbol]\n.decl r(a: number, p: P)\n.input r(IO=jsonfile)\n.output r\n";
    let (prog, input) = program_with_facts(tmp.path(), source, &[("r.json", b"[[1, [2, \"a\"]],\n [2, [3 4]]]\n")]);
    let args = [prog.to_str().unwrap(), "-F", input.to_str().unwrap(), "-D", "-", "--color", "never"];
    let run = dlc(&args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("[E0013] Error: the JSON file of `r` cannot be read"), "{}", run.stderr);
    assert!(run.stderr.contains("r.json:2:9"), "{}", run.stderr);
    std::fs::write(input.join("r.json"), "[[1, [2, \"a\"]],\n [2, [3, 4]],\n [3],\n {\"a\": 1}]").unwrap();
    let run = dlc(&args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.stderr.matches("[E0013]").count(), 3, "{}", run.stderr);
    for (place, why) in [
        ("r.json:2:2", "`4` is no symbol"),
        ("r.json:3:2", "this tuple has 1 field(s), but `r` has 2 column(s)"),
        ("r.json:4:2", "the first tuple is an array: this one must be an array too"),
    ] {
        assert!(run.stderr.contains(place) && run.stderr.contains(why), "{why}: {}", run.stderr);
    }
    let refused = [
        (
            ".type A = B {} | C {x: number}\n.type R = [a: A]\n.decl q(a: R)\n.output q(IO=json)\n",
            "algebraic data type",
        ),
        (".decl i(x: number)\n.input i(IO=json)\n.decl o(x: number)\n.output o\no(x) :- i(x).\n", "`IO=json` is not"),
    ];
    for (source, why) in refused {
        let (prog, input) = program_with_facts(tmp.path(), source, &[]);
        let run = dlc(&[prog.to_str().unwrap(), "-F", input.to_str().unwrap(), "-D", "-", "--color", "never"]);
        assert_eq!(run.code, 1, "{}", run.stderr);
        assert!(run.stderr.contains("[E0018]") && run.stderr.contains(why), "{}", run.stderr);
    }
}

/// `IO=json` writes the relation's JSON to standard output; `-D -` prints it as any other
/// output, after its attribute names, as Soufflé does.
#[test]
fn io_json_prints_json_and_dash_d_prints_it_as_any_output() {
    let tmp = common::temp_dir();
    let source = ".type L = [h: number, t: L]\n.decl r(n: number, l: L)\nr(2, [1, nil]).\nr(1, nil).\n\
                  .output r(IO=json)\n.output r(IO=json, format=object)\n";
    let (prog, input) = program_with_facts(tmp.path(), source, &[]);
    let out = tmp.path().join("out");
    let run = dlc(&[prog.to_str().unwrap(), "-F", input.to_str().unwrap(), "-D", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "[[1, null],\n[2, [1, null]]]\n[{\"n\": 1, \"l\": null},\n{\"n\": 2, \"l\": {\"h\": 1, \"t\": null}}]\n"
    );
    let run = dlc(&[prog.to_str().unwrap(), "-F", input.to_str().unwrap(), "-D", "-"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let framed = "---------------\nr\nn\tl\n===============\n1\tnil\n2\t[1, nil]\n===============\n";
    assert_eq!(run.stdout, framed.repeat(2));
}

/// A subsumptive clause with atoms and a negation in its body (expected files computed
/// once with Soufflé 2.5): `--explain-missing` names the fact that dominates the asked one,
/// a batch that changes what the body reads is recomputed and agrees with a fresh run on
/// any number of threads, and the magic rewrite copies what the body reads.
#[test]
fn a_subsumptive_body_of_atoms_explains_updates_and_rewrites() {
    let base =
        ["fixtures/souffle/subsumption_body/prog.dl", "-F", "fixtures/souffle/subsumption_body/in", "--no-timing"];
    let missing =
        dlc(&[&base[..], &["--query", "idom(7, y)", "--magic", "off", "--explain-missing", "idom(7, 3)"]].concat());
    assert_eq!(missing.code, 0, "{}", missing.stderr);
    let named = "idom(7,4) dominates it: a subsumptive clause removes it, whatever its rules derive";
    assert!(missing.stdout.contains(named), "{}", missing.stdout);
    // `deal` becomes better than `acme`, which comes off hold: every supplier of nuts is
    // then dominated by another (each pair both ways round, through `prefer`'s cycle).
    for threads in ["1", "2"] {
        let changes = ["--delete", "on_hold(\"acme\")", "--insert", "prefer(\"deal\", \"acme\")"];
        let args = [&base[..], &["--query", "chosen(p, s)", "--check", "--threads", threads], &changes[..]].concat();
        let batch = dlc(&args);
        assert_eq!(batch.code, 0, "{}", batch.stderr);
        assert!(
            batch.stdout.contains("maintained by: recompute (the program has subsumptive clauses"),
            "{}",
            batch.stdout
        );
        assert!(batch.stdout.ends_with("answers added: (none)\n  relations: chosen 2 (2 derived)\n  work: 7 (recomputation from scratch: 7)\nchosen(bolt,acme)\nchosen(gear,best)\n"), "{}", batch.stdout);
    }
    let magic = dlc(&[&base[..], &["--query", "pair(1, y)", "--emit", "magic-ir"]].concat());
    assert_eq!(magic.code, 0, "{}", magic.stderr);
    assert!(magic.stdout.contains("same(x,y) <- linked(x,y)\n"), "{}", magic.stdout);
    let whole =
        "pair(a,b) <= pair(c,d) :- same(a,c), same(b,d), a <= c, b <= d  // subsumption: `pair` is computed whole";
    assert!(magic.stdout.contains(whole), "{}", magic.stdout);
    let answers = dlc(&[&base[..], &["--query", "pair(1, y)"]].concat());
    assert_eq!(answers.code, 0, "{}", answers.stderr);
    // `pair(1,2)` goes: 2 and 3 are the same, and `pair(1,3)` is greater in both columns.
    assert_eq!(answers.stdout, "pair(1,3)\n");
}

/// A subsumptive clause may not negate a relation that depends on the one it removes facts
/// of (E0022): what the negation reads would change as the facts it judges do.
#[test]
fn a_subsumptive_clause_negating_its_own_recursion_is_refused() {
    let tmp = common::temp_dir();
    let program = common::write_file(
        &tmp.path().join("prog.dl"),
        ".decl e(x:number, y:number)\n.decl r(x:number, y:number)\n.decl s(x:number)\n.output r\n\
         e(1, 2).\nr(x, y) :- e(x, y).\ns(y) :- r(_, y).\nr(x, y1) <= r(x, y2) :- !s(y2), y1 < y2.\n",
    );
    let out = dlc(&[&program[..], "--color", "never"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("[E0022] Error: a subsumptive clause of `r` negates a relation that depends on `r`"),
        "{}",
        out.stderr
    );
}

/// The differential engine refuses a subsumptive clause whose body reads relations,
/// naming the clause, before evaluating anything.
#[test]
fn the_differential_engine_refuses_a_subsumptive_clause_with_body_atoms() {
    let args = [
        "fixtures/souffle/subsumption_body/prog.dl",
        "-F",
        "fixtures/souffle/subsumption_body/in",
        "-D",
        "-",
        "--engine",
        "differential",
        "--color",
        "never",
    ];
    let run = dlc(&args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("[E0026] Error: the differential engine runs subsumptive clauses (`<=`) whose body compares the two facts only; a clause of `idom` reads relations in its body"), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}
