//! End-to-end behaviour of the command line: exit codes, usage errors, facts inputs.

mod common;

use common::dlc;

#[test]
fn help_lists_examples() {
    let out = dlc(&["--help"]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("--emit"));
    assert!(out.stdout.contains("Examples:"));
}

#[test]
fn missing_program_is_an_error_not_a_panic() {
    let out = dlc(&[]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("E0012"), "{}", out.stderr);
    let out = dlc(&["--color", "never", "no/such/file.dl"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("E0012"), "{}", out.stderr);
}

#[test]
fn bad_flag_combination_is_a_usage_error() {
    let out = dlc(&["--emit", "ast", "--format", "json", "fixtures/ok/reach.dl"]);
    assert_eq!(out.code, 2);
    let out = dlc(&["--emit", "nonsense", "fixtures/ok/reach.dl"]);
    assert_eq!(out.code, 2);
}

#[test]
fn facts_directory_gives_the_same_answers_as_inline_facts() {
    let inline = dlc(&["fixtures/ok/reach.dl"]);
    let dir = dlc(&["--facts", "fixtures/data/reach_csv", "fixtures/ok/reach_dir.dl"]);
    assert_eq!(dir.code, 0, "{}", dir.stderr);
    assert_eq!(inline.stdout, dir.stdout);
}

#[test]
fn query_flag_replaces_the_program_query() {
    let out = dlc(&["--query", "R(u,Y)", "fixtures/ok/reach.dl"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "R(u,u)\nR(u,v)\nR(u,w)\n");
}

#[test]
fn no_magic_and_magic_agree_on_every_ok_fixture() {
    for entry in std::fs::read_dir(common::root().join("fixtures/ok")).unwrap() {
        let path = entry.unwrap().path();
        let source = std::fs::read_to_string(&path).unwrap();
        let mut args = common::fixture_args(&source);
        args.push(path.display().to_string());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let magic = dlc(&args);
        let mut no_magic_args = vec!["--no-magic"];
        no_magic_args.extend(&args);
        let original = dlc(&no_magic_args);
        assert_eq!(magic.code, 0, "{}: {}", path.display(), magic.stderr);
        // Update reports name different relations; the answers printed after them must agree.
        let answers = |text: &str| {
            text.lines()
                .filter(|l| !l.starts_with("batch ") && !l.starts_with(' '))
                .map(String::from)
                .collect::<Vec<_>>()
        };
        assert_eq!(answers(&magic.stdout), answers(&original.stdout), "{}", path.display());
    }
}

#[test]
fn check_flag_passes_on_the_spec_update() {
    let out = dlc(&["--check", "--delete", "E(a,b)", "--insert", "E(d,a)", "fixtures/ok/reach.dl"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("batch 1: -E(a,b) +E(d,a)"), "{}", out.stdout);
}

#[test]
fn noop_updates_are_reported() {
    let out = dlc(&["--delete", "E(x,y)", "--insert", "E(a,b)", "fixtures/ok/reach.dl"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("no-op: -E(x,y) is not present"), "{}", out.stdout);
    assert!(out.stdout.contains("no-op: +E(a,b) is already present"), "{}", out.stdout);
}

#[test]
fn repl_lists_the_current_input_facts() {
    let input = "-E(a,b).\n+E(z,a).\n;\n:facts\n:quit\n";
    let out = common::dlc_with_input(&["repl", "--color", "never", "fixtures/ok/reach.dl"], input);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let listed: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("E(")).collect();
    assert_eq!(
        listed,
        ["E(a,e).", "E(b,c).", "E(c,b).", "E(c,d).", "E(e,d).", "E(u,v).", "E(v,w).", "E(w,u).", "E(z,a)."],
        "{}",
        out.stdout
    );
}

#[test]
fn adornment_limit_stops_the_rewrite_but_not_no_magic() {
    let fixture = "fixtures/err/E0016_adornment_limit.dl";
    let out = dlc(&["--color", "never", "--max-adornments", "3", fixture]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("[E0016]") && out.stderr.contains("more than 3 adorned"), "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    // The original program needs no adornments at all.
    let out = dlc(&["--max-adornments", "3", "--no-magic", fixture]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The limit counts all six, so six pass.
    let out = dlc(&["--max-adornments", "6", fixture]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(dlc(&["--max-adornments", "0", fixture]).code, 2);
}

#[test]
fn tuple_limit_ends_evaluation_updates_and_the_repl_with_an_error() {
    let fixture = "fixtures/err/E0017_tuple_limit.dl";
    let out = dlc(&["--color", "never", "--max-tuples", "20", fixture]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("[E0017]") && out.stderr.contains("grew past 20 tuples"), "{}", out.stderr);
    assert!(out.stdout.is_empty(), "no partial answers: {}", out.stdout);
    // The same for the original program and with the reference engine.
    for extra in ["--no-magic", "--compare"] {
        let out = dlc(&["--color", "never", "--max-tuples", "20", "--engine", "reference", extra, fixture]);
        assert_eq!(out.code, 1, "{extra}: {}", out.stderr);
        assert!(out.stderr.contains("[E0017]"), "{extra}: {}", out.stderr);
    }
    assert_eq!(dlc(&["--max-tuples", "30", fixture]).code, 0);
    // An update that grows a relation past the limit.
    let out = dlc(&["--color", "never", "--max-tuples", "30", "--insert", "A(a4)", fixture]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("grew past 30 tuples"), "{}", out.stderr);
    let out = common::dlc_with_input(
        &["repl", "--color", "never", "--max-tuples", "30", fixture],
        "+A(a4).\n;\n?- P(X,Y).\n",
    );
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("grew past 30 tuples"), "{}", out.stdout);
    assert!(!out.stdout.contains("answer(s)\n"), "no answers from the incomplete state: {}", out.stdout);
    assert_eq!(dlc(&["--max-tuples", "0", fixture]).code, 2);
}
