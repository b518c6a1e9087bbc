//! End-to-end behaviour of the command line: exit codes, usage errors, facts inputs.

mod common;

use common::{dlc, dlc_with_bytes, dlc_with_input};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// A fresh, empty directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    common::scratch_in("cli", name)
}

use common::write_file as write;

/// Reach (Example 1 of docs/semantics.md) without facts: they come from the test's files.
const REACH_RULES: &str = "R(X,Y) <- E(X,Y).\nR(X,Z) <- R(X,Y), R(Y,Z).\n?- R(a,Y).\n";

#[test]
fn help_lists_examples() {
    let out = dlc(&["--help"]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("--emit"));
    assert!(out.stdout.contains("Examples:"));
}

#[test]
fn missing_program_is_an_error_not_a_panic() {
    for args in [&[][..], &["repl"], &["--emit", "ir"]] {
        let out = dlc(args);
        assert_eq!(out.code, 2, "{args:?}");
        assert!(out.stderr.contains("no program file given"), "{}", out.stderr);
    }
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

/// A writer that accepts `room` bytes, then fails as a full disk or a closed pipe does.
struct Failing {
    room: usize,
    kind: std::io::ErrorKind,
}

impl Write for Failing {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.room == 0 {
            return Err(std::io::Error::from(self.kind));
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn run_failing(args: &[&str], input: &mut dyn BufRead, room: usize, kind: std::io::ErrorKind) -> (i32, String) {
    common::at_root();
    let mut argv = vec!["dlc"];
    argv.extend_from_slice(args);
    let mut out = Failing { room, kind };
    let mut err = Vec::new();
    let code = dlc::run(argv, input, &mut out, &mut err);
    (code, String::from_utf8(err).unwrap())
}

#[test]
fn a_write_error_fails_the_run() {
    let cases: [&[&str]; 4] = [
        &["fixtures/ok/reach.dl"],
        &["--help"],
        &["--emit", "trace", "--delete", "E(a,b)", "fixtures/ok/reach.dl"],
        &["--emit", "magic-ir", "fixtures/ok/reach.dl"],
    ];
    for args in cases {
        let (code, stderr) = run_failing(args, &mut &b""[..], 10, std::io::ErrorKind::StorageFull);
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert!(stderr.contains("dlc: cannot write the output"), "{args:?}: {stderr}");
    }
}

/// Standard input that repeats one line forever, as `yes` does.
struct Yes(&'static [u8]);

impl std::io::Read for Yes {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        Ok(n)
    }
}

impl BufRead for Yes {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        Ok(self.0)
    }
    fn consume(&mut self, _: usize) {}
}

#[test]
fn repl_stops_when_its_output_is_closed() {
    // `yes '?- R(a,Y).' | dlc repl reach.dl | head -2`: the pipe closes after a few lines.
    let mut input = Yes(b"?- R(a,Y).\n");
    let (code, stderr) =
        run_failing(&["repl", "fixtures/ok/reach.dl"], &mut input, 200, std::io::ErrorKind::BrokenPipe);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("cannot write the output"), "{stderr}");
}

#[test]
fn repl_stops_at_an_endless_line() {
    // `dlc repl reach.dl < /dev/zero`: no newline ever comes.
    common::at_root();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = dlc::run(["dlc", "repl", "fixtures/ok/reach.dl"], &mut Yes(b"\0\0\0\0"), &mut out, &mut err);
    let stderr = String::from_utf8(err).unwrap();
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("input line 1 is longer than 1048576 bytes"), "{stderr}");
}

#[test]
fn repl_keeps_updates_of_predicates_the_current_query_does_not_read() {
    let dir = scratch("repl_keeps");
    let program = write(&dir.join("two.dl"), "R(X) <- E(X). S(X) <- F(X). E(a). F(a). ?- R(X).\n");
    let input = "+F(b).\n-F(a).\n+G(c).\n;\n?- S(X).\n:facts\n";
    let out = dlc_with_input(&["repl", "--color", "never", &program], input);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let after: Vec<&str> = out.stdout.lines().skip_while(|l| !l.starts_with("recompiled")).skip(1).collect();
    assert_eq!(after, ["S(b)", "1 answer(s)", "E(a).", "F(b).", "G(c)."], "{}", out.stdout);
    // A fresh run over the same input facts agrees.
    let fresh = dlc(&["--query", "S(X)", "--insert", "F(b)", "--delete", "F(a)", &program]);
    assert!(fresh.stdout.ends_with("S(b)\n"), "{}", fresh.stdout);
}

#[test]
fn repl_rejects_a_batch_with_a_bad_line_whole() {
    let input = "-E(a,b).\n+E(a,b,c).\n+E(a,zz).\n;\n:facts\n-E(a,b).\n;\n";
    let out = dlc_with_input(&["repl", "--color", "never", "--no-timing", "fixtures/ok/reach.dl"], input);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("E0004"), "{}", out.stderr);
    assert!(out.stderr.contains("batch rejected: input line(s) 2 had errors"), "{}", out.stderr);
    let facts: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("E(")).collect();
    assert!(facts.contains(&"E(a,b).") && !facts.iter().any(|f| f.contains("zz")), "{}", out.stdout);
    // The next batch starts afresh and is applied.
    assert!(out.stdout.contains("batch 1: -E(a,b)\n"), "{}", out.stdout);
    // A line that is no command inside a batch (an update without its sign) rejects it too;
    // outside a batch it is only reported.
    let input = "nonsense\n-E(a,b).\nE(a,c).\n;\n:facts\n";
    let out = dlc_with_input(&["repl", "--color", "never", "fixtures/ok/reach.dl"], input);
    assert!(out.stderr.contains("not understood: `nonsense`"), "{}", out.stderr);
    assert!(out.stderr.contains("batch rejected: input line(s) 3 had errors"), "{}", out.stderr);
    assert!(out.stdout.contains("E(a,b).") && !out.stdout.contains("E(a,c)."), "{}", out.stdout);
}

#[test]
fn repl_reports_a_line_that_is_not_utf8_and_goes_on() {
    let input = b"+E(a,\xff).\n+E(a,x).\n;\n?- R(a,Y).\n";
    let out = dlc_with_bytes(&["repl", "--color", "never", "--no-timing", "fixtures/ok/reach.dl"], input);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("input line 1 is not UTF-8 text"), "{}", out.stderr);
    assert!(out.stderr.contains("batch rejected: input line(s) 1 had errors"), "{}", out.stderr);
    // The session goes on: the query after the rejected batch is answered, without `x`.
    assert!(out.stdout.ends_with("R(a,e)\n4 answer(s)\n"), "{}", out.stdout);
}

/// `dlc repl --help` lists only the flags the repl accepts, and `--help` says which
/// `--format` each output takes, as the code decides.
#[test]
fn help_lists_what_each_command_accepts() {
    let repl = dlc(&["repl", "--help"]);
    assert_eq!(repl.code, 0);
    // The flags of the options' lines (`-F, --fact-dir <DIR>`), not of the prose.
    let listed: Vec<&str> = repl
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with('-'))
        .flat_map(|l| l.split([' ', ',']).filter(|w| w.starts_with("--")))
        .collect();
    for flag in ["--emit", "--format", "--compare", "--output-dir", "--all", "--explain", "--explain-missing"] {
        assert!(!listed.contains(&flag), "{flag} listed:\n{}", repl.stdout);
        let value: &[&str] = match flag {
            "--emit" => &["ir"],
            "--format" => &["json"],
            "--output-dir" => &["-"],
            "--explain" | "--explain-missing" => &["R(a,d)"],
            "--all" => &["-D", "-"],
            _ => &[],
        };
        let out = dlc(&[&["repl", "fixtures/ok/reach.dl", flag][..], value].concat());
        assert_eq!(out.code, 2, "{flag}: {}", out.stderr);
    }
    for accepted in ["--query", "--facts", "--magic", "--maintenance", "--engine", "--check", "--threads", "--updates"]
    {
        assert!(listed.contains(&accepted), "{accepted} not listed:\n{}", repl.stdout);
    }
    let help = dlc(&["--help"]).stdout;
    assert!(help.contains("`dot` for `--emit adorned` and --explain"), "{help}");
    for (args, code) in [
        (&["--emit", "ast", "--format", "json"][..], 2),
        (&["--explain", "R(a,d)", "--format", "dot"], 0),
        (&["--explain-missing", "R(a,u)", "--format", "json"], 0),
        (&["--emit", "plan", "--format", "dot"], 2),
    ] {
        let out = dlc(&[args, &["fixtures/ok/reach.dl"]].concat());
        assert_eq!(out.code, code, "{args:?}: {}", out.stderr);
    }
}

#[test]
fn repl_rejects_the_flags_it_cannot_honour_and_honours_the_rest() {
    for (flags, named) in
        [(&["--format", "json"][..], "--format"), (&["--emit", "trace"], "--emit"), (&["--compare"], "--compare")]
    {
        let mut args = vec!["repl"];
        args.extend_from_slice(flags);
        args.push("fixtures/ok/reach.dl");
        let out = dlc_with_input(&args, ":quit\n");
        assert_eq!(out.code, 2, "{flags:?}");
        assert!(out.stderr.contains(&format!("does not support {named}")), "{}", out.stderr);
    }
    let input = "-E(a,b).\n+E(d,a).\n;\n?- R(a,Y).\n";
    for flags in [&["--check"][..], &["--engine", "reference"], &["--maintenance", "ranked", "--check"]] {
        let mut args = vec!["repl", "--no-timing"];
        args.extend_from_slice(flags);
        args.push("fixtures/ok/reach.dl");
        let out = dlc_with_input(&args, input);
        assert_eq!(out.code, 0, "{flags:?}: {}", out.stderr);
        assert!(out.stdout.contains("answers removed: R(a,b) R(a,c)"), "{flags:?}: {}", out.stdout);
        // --check (and only --check) recomputes: the report shows that work beside its own.
        assert_eq!(out.stdout.contains("recomputation"), flags.contains(&"--check"), "{flags:?}: {}", out.stdout);
    }
}

#[test]
fn facts_directory_reports_every_entry_it_does_not_read() {
    let dir = scratch("facts_dir");
    let facts = dir.join("facts");
    std::fs::create_dir(&facts).unwrap();
    write(&facts.join("E.facts"), "a\tb\n");
    write(&facts.join("README"), "not facts\n");
    std::fs::create_dir(facts.join("Sub.facts")).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("nowhere", facts.join("Broken.facts")).unwrap();
        std::os::unix::fs::symlink("Loop.facts", facts.join("Loop.facts")).unwrap();
        std::os::unix::fs::symlink("E.facts", facts.join("Link.facts")).unwrap();
    }
    let fifo = std::process::Command::new("mkfifo").arg(facts.join("Fifo.csv")).status().is_ok_and(|s| s.success());
    let program = write(&dir.join("reach.dl"), REACH_RULES);
    let out = dlc(&["--color", "never", "--facts", facts.to_str().unwrap(), &program]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let sub = format!("`{}` is a directory", facts.join("Sub.facts").display());
    assert!(out.stderr.contains(&sub), "{}", out.stderr);
    assert!(
        out.stderr.contains("1 entry is not read, not being named .facts, .tsv or .csv: `README`"),
        "{}",
        out.stderr
    );
    if cfg!(unix) {
        for name in ["Broken.facts", "Loop.facts"] {
            let shown = format!("cannot read `{}`", facts.join(name).display());
            assert!(out.stderr.contains(&shown), "{name}: {}", out.stderr);
        }
        assert!(!out.stderr.contains("Link.facts"), "a link to a file is read: {}", out.stderr);
    }
    if fifo {
        let shown = format!("`{}` is not a regular file", facts.join("Fifo.csv").display());
        assert!(out.stderr.contains(&shown), "{}", out.stderr);
    }
}

#[cfg(unix)]
#[test]
fn facts_directory_without_permissions_is_an_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("facts_dir_perms");
    let facts = dir.join("facts");
    std::fs::create_dir(&facts).unwrap();
    write(&facts.join("E.facts"), "a\tb\n");
    let program = write(&dir.join("reach.dl"), REACH_RULES);
    // Without search permission the entries can be listed but not opened; without read
    // permission not even listed.
    for mode in [0o600, 0o300] {
        std::fs::set_permissions(&facts, std::fs::Permissions::from_mode(mode)).unwrap();
        let enforced = std::fs::File::open(facts.join("E.facts")).is_err() || std::fs::read_dir(&facts).is_err();
        let out = dlc(&["--color", "never", "--facts", facts.to_str().unwrap(), &program]);
        std::fs::set_permissions(&facts, std::fs::Permissions::from_mode(0o755)).unwrap();
        if !enforced {
            eprintln!("skipped mode {mode:o}: permissions are not enforced for this user (root)");
            continue;
        }
        assert_eq!(out.code, 1, "{mode:o}: {}", out.stderr);
        assert!(out.stderr.contains("E0012") && out.stderr.contains("Permission denied"), "{mode:o}: {}", out.stderr);
        assert!(!out.stderr.contains("holds no .facts"), "{}", out.stderr);
    }
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_text() {
    let dir = scratch("bom");
    let program = write(&dir.join("reach.dl"), format!("\u{feff}{REACH_RULES}"));
    let csv = write(&dir.join("E.csv"), "\u{feff}a,b\nb,c\n");
    let tsv = write(&dir.join("E.tsv"), "\u{feff}a\tb\nb\tc\n");
    for facts in [&csv, &tsv] {
        let out = dlc(&["--color", "never", "--facts", facts, &program]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(out.stdout, "R(a,b)\nR(a,c)\n");
    }
    // Reports on the first line point at the right column.
    let broken = write(&dir.join("broken.dl"), "\u{feff}R(X) <- E(X) #\n?- R(a).\n");
    let out = dlc(&["--color", "never", &broken]);
    assert!(out.stderr.contains("broken.dl:1:14"), "{}", out.stderr);
}

#[test]
fn facts_of_a_predicate_the_program_never_mentions_are_reported() {
    let dir = scratch("unused_facts");
    let program = write(&dir.join("reach.dl"), REACH_RULES);
    let edges = write(&dir.join("edges.facts"), "E(a,b).\nE(b,c).\n");
    let out = dlc(&["--color", "never", "--facts", &edges, &program]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("[W0003]"), "{}", out.stderr);
    assert!(out.stderr.contains("the file is read as tab-separated fields of `edges`"), "{}", out.stderr);
    assert!(out.stderr.contains("[W0002]") && out.stderr.contains("the program reads `E`/2"), "{}", out.stderr);
    assert!(out.stderr.contains("edges.facts:1:1"), "{}", out.stderr);
    // The same atoms in a file of another extension are read as atoms.
    let atoms = write(&dir.join("edges.dl"), "E(a,b).\nE(b,c).\n");
    let out = dlc(&["--color", "never", "--facts", &atoms, &program]);
    assert_eq!((out.code, &out.stdout[..]), (0, "R(a,b)\nR(a,c)\n"), "{}", out.stderr);
    assert!(!out.stderr.contains("Warning"), "{}", out.stderr);
}

#[test]
fn file_names_that_are_no_predicate_names_are_rejected() {
    let dir = scratch("odd_names");
    let program = write(&dir.join("reach.dl"), REACH_RULES);
    for name in ["E.x.facts", "my pred.csv", ".csv", "1E.tsv"] {
        let facts = write(&dir.join(name), "a,b\n");
        let out = dlc(&["--color", "never", "--facts", &facts, &program]);
        assert_eq!(out.code, 1, "{name}: {}", out.stderr);
        assert!(out.stderr.contains("[E0013]") && out.stderr.contains("the file name gives"), "{name}: {}", out.stderr);
    }
}

#[test]
fn an_endless_facts_line_is_an_error_not_a_crash() {
    if !Path::new("/dev/zero").exists() {
        eprintln!("skipped: no /dev/zero");
        return;
    }
    let out = dlc(&["--color", "never", "--facts", "/dev/zero", "fixtures/ok/reach_dir.dl"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("line 1 of `/dev/zero` is longer than 1048576 bytes"), "{}", out.stderr);
    // The same bound for a file with a long line after short ones, on the right line.
    let dir = scratch("long_line");
    let long = write(&dir.join("E.facts"), format!("a\tb\n{}\n", "x".repeat(syntax::MAX_LINE_BYTES + 1)));
    let out = dlc(&["--color", "never", "--facts", &long, "fixtures/ok/reach_dir.dl"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("line 2 of"), "{}", out.stderr);
}

/// An endless stream of random bytes stops at its first bytes that are not UTF-8 (it
/// used to be read whole, never ending, as its newlines keep every line short).
#[test]
fn an_endless_stream_that_is_not_utf8_is_an_error_not_a_hang() {
    if !Path::new("/dev/urandom").exists() {
        eprintln!("skipped: no /dev/urandom");
        return;
    }
    let out = dlc(&["--color", "never", "--facts", "/dev/urandom", "fixtures/ok/reach_dir.dl"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("cannot read `/dev/urandom`: line") && out.stderr.contains("is not UTF-8"),
        "{}",
        out.stderr
    );
}

#[test]
fn adornment_limit_stops_the_rewrite_but_not_no_magic() {
    let fixture = "fixtures/err/E0016_adornment_limit.dl";
    let out = dlc(&["--color", "never", "--max-adornments", "3", "--magic", "on", fixture]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("[E0016]") && out.stderr.contains("more than 3 adorned"), "{}", out.stderr);
    assert!(out.stderr.contains("the rewrite has made 3 so far, and `P` (arity 4, at most 2^4) would have 4"));
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    // The original program needs no adornments at all.
    let out = dlc(&["--max-adornments", "3", "--no-magic", fixture]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The default `--magic auto` evaluates the original program instead.
    let out = dlc(&["--max-adornments", "3", "--emit", "trace", "--no-timing", fixture]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("evaluated: original program (--magic auto: the rewrite needs more"), "{}", out.stdout);
    // The limit counts all six, so six pass.
    let out = dlc(&["--max-adornments", "6", "--magic", "on", fixture]);
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
    assert!(out.stderr.contains("grew past 30 tuples"), "{}", out.stderr);
    assert!(!out.stdout.contains("answer(s)\n"), "no answers from the incomplete state: {}", out.stdout);
    assert_eq!(dlc(&["--max-tuples", "0", fixture]).code, 2);
}

#[test]
fn memory_budget_ends_evaluation_with_an_error_alike_on_every_engine_and_thread_count() {
    let fixture = "fixtures/err/E0017_memory_budget.dl";
    let run = |extra: &[&str]| dlc(&[&["--color", "never", "--max-memory", "1M", fixture], extra].concat());
    let out = run(&["--threads", "1"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("[E0017]") && out.stderr.contains("memory budget of 1.0 MiB"), "{}", out.stderr);
    assert!(out.stderr.contains("raise the budget with `--max-memory SIZE`"), "{}", out.stderr);
    assert!(out.stdout.is_empty(), "no partial answers: {}", out.stdout);
    for threads in ["2", "4"] {
        assert_eq!(run(&["--threads", threads]).stderr, out.stderr, "{threads} threads");
    }
    // The differential engine's result is measured once it is whole.
    for engine in ["reference", "differential"] {
        let out = run(&["--engine", engine]);
        assert_eq!(out.code, 1, "{engine}: {}", out.stderr);
        assert!(out.stderr.contains("[E0017]") && out.stderr.contains("memory budget"), "{engine}: {}", out.stderr);
    }
    // A budget the relations fit in, or none.
    let small = "fixtures/err/E0017_tuple_limit.dl";
    assert_eq!(dlc(&["--max-memory", "1M", small]).code, 0);
    assert_eq!(dlc(&["--max-memory", "none", small]).code, 0);
    let out = dlc(&["--color", "never", "--max-memory", "1K", small]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("memory budget of 1.0 KiB"), "{}", out.stderr);
    for bad in ["0", "lots", "-1G"] {
        assert_eq!(dlc(&["--max-memory", bad, small]).code, 2, "{bad}");
    }
}

/// A generator gives its values within one round: a rule of two huge ranges stops at the
/// memory budget as it runs, not after gathering what it derives.
#[test]
fn a_runaway_range_stops_at_the_memory_budget() {
    let tmp = common::temp_dir();
    let program = common::write_file(
        &tmp.path().join("ranges.dl"),
        "P(X,Y) <- X = range(0, 2000000000), Y = range(0, 2000000000)\n?- P(X,Y).\n",
    );
    for extra in [&["--threads", "1"][..], &["--threads", "2"], &["--engine", "reference"]] {
        let out = dlc(&[&["--color", "never", "--max-memory", "16M", &program][..], extra].concat());
        assert_eq!(out.code, 1, "{extra:?}: {}", out.stderr);
        assert!(out.stderr.contains("[E0017]") && out.stderr.contains("memory budget of 16.0 MiB"), "{}", out.stderr);
        assert!(out.stdout.is_empty(), "no partial answers: {}", out.stdout);
    }
}

#[test]
fn output_dir_writes_the_query_answers_as_a_sorted_tab_separated_file() {
    let dir = scratch("output-dir-native");
    let out = dir.join("out");
    let facts = write(&dir.join("E.facts"), "3\t1\n10\t3\n1\t2\n2\t10\n");
    let rules = write(&dir.join("tc.dl"), "R(X,Y) <- E(X,Y).\nR(X,Z) <- E(X,Y), R(Y,Z).\n");
    let base = [rules.as_str(), "--facts", facts.as_str(), "--no-timing", "--query", "R(3,Y)"];
    // Numbers sort numerically, as in Soufflé's outputs.
    let expected = "3\t1\n3\t2\n3\t3\n3\t10\n";
    for magic in [&[][..], &["--no-magic"]] {
        let run = dlc(&[&base[..], magic, &["-D", out.to_str().unwrap()]].concat());
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
        assert!(run.stderr.contains("R.csv (4 answer(s))"), "{}", run.stderr);
        assert_eq!(std::fs::read_to_string(out.join("R.csv")).unwrap(), expected);
        let names: Vec<_> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec!["R.csv"]);
        std::fs::remove_dir_all(&out).unwrap();
    }
    let stdout = dlc(&[&base[..], &["-D", "-"]].concat());
    assert_eq!(stdout.code, 0, "{}", stdout.stderr);
    assert_eq!(stdout.stdout, format!("---------------\nR\n===============\n{expected}===============\n"));
    // Without -D the same answers print as atoms, in the same order.
    let plain = dlc(&base);
    assert_eq!(plain.stdout, "R(3,1)\nR(3,2)\nR(3,3)\nR(3,10)\n");
}

#[test]
fn output_dir_with_all_writes_every_derived_source_relation_of_the_original_program() {
    let dir = scratch("output-dir-all");
    let out = dir.join("out");
    let facts = write(&dir.join("E.facts"), "1\t2\n2\t3\n");
    let rules =
        write(&dir.join("tc.dl"), "R(X,Y) <- E(X,Y).\nR(X,Z) <- E(X,Y), R(Y,Z).\nS(X) <- R(X,Y).\n?- R(1,Y).\n");
    let base = [rules.as_str(), "--facts", facts.as_str(), "--no-timing", "--all"];
    let run = dlc(&[&base[..], &["-D", out.to_str().unwrap()]].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The original program is evaluated: no `@a:`/`@m:` relation, every tuple of R.
    assert!(run.stderr.contains("original program"), "{}", run.stderr);
    let mut names: Vec<_> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, vec!["R.csv", "S.csv"]);
    assert_eq!(std::fs::read_to_string(out.join("R.csv")).unwrap(), "1\t2\n1\t3\n2\t3\n");
    assert_eq!(std::fs::read_to_string(out.join("S.csv")).unwrap(), "1\n2\n");
    // Updates are applied before the relations are written.
    let updated = dlc(&[&base[..], &["-D", "-", "--delete", "E(2,3)"]].concat());
    assert_eq!(updated.code, 0, "{}", updated.stderr);
    assert!(
        updated.stdout.ends_with(
            "R\n===============\n1\t2\n===============\n---------------\nS\n===============\n1\n===============\n"
        ),
        "{}",
        updated.stdout
    );
    // --all needs -D.
    assert_eq!(dlc(&base).code, 2);
}

#[test]
fn threads_must_be_a_positive_number() {
    for bad in ["0", "two", "-1", "257", "100000"] {
        let out = dlc(&["--threads", bad, "fixtures/ok/reach.dl"]);
        assert_eq!(out.code, 2, "--threads {bad}: {}", out.stderr);
    }
    let out = dlc(&["--threads", "100000", "fixtures/ok/reach.dl"]);
    assert!(out.stderr.contains("1..=256"), "the usage error says the range: {}", out.stderr);
    for good in ["3", "256"] {
        let out = dlc(&["--threads", good, "fixtures/ok/reach.dl"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(out.stdout, dlc(&["fixtures/ok/reach.dl"]).stdout);
    }
}

/// A closure large enough that the default thresholds split its joins: the trace (rounds,
/// sizes, the update's counts) and the answers are those of one thread.
#[test]
fn threads_print_what_one_thread_prints() {
    let dir = scratch("threads");
    let mut state = 11u64;
    let mut next = |bound: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % bound
    };
    let edges: String = (0..1500).map(|_| format!("{}\t{}\n", next(300), next(300))).collect();
    let first: Vec<&str> = edges.lines().next().unwrap().split('\t').collect();
    let cut = format!("E({},{})", first[0], first[1]);
    let facts = write(&dir.join("E.facts"), &edges);
    let program = write(&dir.join("tc.dl"), "R(X,Y) <- E(X,Y).\nR(X,Z) <- E(X,Y), R(Y,Z).\n?- R(0,Y).\n");
    let run = |threads: &str, magic: &str| {
        let args = [
            "--emit",
            "trace",
            "--no-timing",
            "--facts",
            &facts,
            "--insert",
            "E(0,299)",
            "--delete",
            &cut,
            "--threads",
            threads,
            magic,
        ];
        let args: Vec<&str> = args.into_iter().filter(|a| !a.is_empty()).chain([program.as_str()]).collect();
        let out = dlc(&args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        out.stdout
    };
    for magic in ["", "--no-magic"] {
        let one = run("1", magic);
        assert!(one.contains("answers (") && one.contains("over-deleted"), "{one}");
        assert_eq!(run("2", magic), one, "{magic}");
    }
}

/// A right-linear closure over a chain of `n` edges queried from its start: the demand
/// `@m:R^bf` reaches every node, so `--magic auto` abandons the rewrite once `n` passes
/// the cap, and evaluates the original program.
fn chain_program(dir: &Path, n: usize) -> String {
    let mut text = String::from("R(X,Y) <- E(X,Y)\nR(X,Z) <- E(X,Y), R(Y,Z)\n?- R(n0,Y).\n");
    for i in 0..n {
        text += &format!("E(n{i},n{}).\n", i + 1);
    }
    write(&dir.join("chain.dl"), text)
}

#[test]
fn magic_modes_agree_and_no_magic_is_magic_off() {
    let dir = scratch("magic_modes");
    let chain = chain_program(&dir, 300);
    for program in ["fixtures/ok/reach.dl", "fixtures/ok/points_to.dl", "fixtures/ok/all_free.dl", chain.as_str()] {
        let answers: Vec<String> =
            [&["--magic", "on"][..], &["--magic", "off"], &["--magic", "auto"], &[], &["--no-magic"]]
                .iter()
                .map(|flags| {
                    let out = dlc(&[flags, &["--no-timing", program][..]].concat());
                    assert_eq!(out.code, 0, "{program} {flags:?}: {}", out.stderr);
                    out.stdout
                })
                .collect();
        assert!(answers.windows(2).all(|w| w[0] == w[1]), "{program}: {answers:?}");
    }
    let off = dlc(&["--no-timing", "--magic", "off", "fixtures/ok/reach.dl"]);
    assert!(off.stderr.contains("original program (--magic off)"), "{}", off.stderr);
    let alias = dlc(&["--no-timing", "--no-magic", "fixtures/ok/reach.dl"]);
    assert_eq!(alias.stderr, off.stderr);
}

#[test]
fn conflicting_magic_flags_are_usage_errors() {
    for args in [
        &["--magic", "on", "--no-magic", "fixtures/ok/reach.dl"][..],
        &["--magic", "off", "--compare", "fixtures/ok/reach.dl"],
        &["--no-magic", "--compare", "fixtures/ok/reach.dl"],
        &["--magic", "sometimes", "fixtures/ok/reach.dl"],
    ] {
        let out = dlc(args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
    }
}

#[test]
fn the_trace_and_compare_show_what_magic_auto_chose() {
    let trace = |args: &[&str]| {
        let out = dlc(&[&["--emit", "trace", "--no-timing"][..], args].concat());
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        out.stdout.lines().next().unwrap_or_default().to_string()
    };
    assert_eq!(
        trace(&["fixtures/ok/reach.dl"]),
        "== evaluated: magic program (--magic auto: the demand stayed within its caps)"
    );
    assert_eq!(
        trace(&["fixtures/ok/all_free.dl"]),
        "== evaluated: original program (--magic auto: the rewrite narrows no demand)"
    );
    assert_eq!(trace(&["--magic", "on", "fixtures/ok/all_free.dl"]), "== evaluated: magic program (--magic on)");
    let dir = scratch("auto_trace");
    let chain = chain_program(&dir, 300);
    // 301 constants: the cap of the one-column demand is 301 / 16, at least 64.
    assert_eq!(
        trace(&[&chain]),
        "== evaluated: original program (--magic auto: demand `@m:R^bf` passed its cap of 64 tuples)"
    );
    let out = dlc(&["--compare", "--no-timing", &chain]);
    assert!(
        out.stdout
            .contains("--magic chooses: original program (--magic auto: demand `@m:R^bf` passed its cap of 64 tuples)"),
        "{}",
        out.stdout
    );
    let json = dlc(&["--emit", "trace", "--format", "json", &chain]);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["choice"]["program"], "original");
    assert_eq!(doc["program"], "original");
}

#[test]
fn updates_maintain_the_program_magic_auto_chose() {
    let dir = scratch("auto_updates");
    let chain = chain_program(&dir, 300);
    for strategy in ["dred", "ranked"] {
        for mode in ["auto", "on", "off"] {
            let args =
                ["--magic", mode, "--maintenance", strategy, "--delete", "E(n150,n151)", "--insert", "E(n5,n299)"];
            let out = dlc(&[&args[..], &["--check", "--no-timing", &chain]].concat());
            assert_eq!(out.code, 0, "{mode} {strategy}: {}", out.stderr);
            // n1..n5, then n299 and n300 by the new edge; n151 and on are cut off except those.
            // The batch report comes first; its lines start with `batch` or spaces.
            let answers: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("R(")).collect();
            assert_eq!(answers.len(), 152, "{mode} {strategy}");
            assert!(answers.contains(&"R(n0,n300)") && !answers.contains(&"R(n0,n200)"), "{mode} {strategy}");
        }
    }
    let out = dlc(&["--delete", "E(n0,n1)", "--emit", "trace", "--format", "json", "--check", &chain]);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["choice"]["program"], "original");
    assert!(doc["updates"][0]["relations"].to_string().contains("\"R\""), "{}", doc["updates"][0]);
}

#[test]
fn the_repl_honours_magic_modes() {
    let input = "?- R(a,Y).\n:stats\n";
    let on = dlc_with_input(&["repl", "--magic", "on", "fixtures/ok/reach.dl"], input);
    assert!(on.stdout.contains("@m:R^bf"), "{}", on.stdout);
    let off = dlc_with_input(&["repl", "--magic", "off", "fixtures/ok/reach.dl"], input);
    assert!(!off.stdout.contains("@m:") && off.stdout.contains("R 20"), "{}", off.stdout);
    // An all-free query is evaluated in the original program.
    let auto = dlc_with_input(&["repl", "fixtures/ok/reach.dl"], "?- R(X,Y).\n:stats\n");
    assert!(!auto.stdout.contains("@m:") && auto.stdout.contains("R 20"), "{}", auto.stdout);
}

/// Under a negation a deletion makes facts appear and an insertion makes them go: both
/// maintenance strategies follow, and `--check` compares every relation with a fresh
/// evaluation (it fails the run otherwise).
#[test]
fn updates_under_negation_add_and_remove_what_the_negation_reads() {
    for maintenance in ["dred", "ranked"] {
        let base = ["--check", "--maintenance", maintenance, "--no-timing", "--query", "Unreached(X)"];
        let deleted = dlc(&[&base[..], &["--delete", "Edge(a,b)", "fixtures/ok/negation.dl"]].concat());
        assert_eq!(deleted.code, 0, "{}", deleted.stderr);
        assert!(deleted.stdout.contains("answers added: Unreached(b) Unreached(c)"), "{}", deleted.stdout);
        let inserted = dlc(&[&base[..], &["--insert", "Edge(c,d)", "fixtures/ok/negation.dl"]].concat());
        assert_eq!(inserted.code, 0, "{}", inserted.stderr);
        assert!(inserted.stdout.contains("answers removed: Unreached(d) Unreached(e)"), "{}", inserted.stdout);
    }
    // The repl maintains the same way; a batch brings a value the program lacked, which
    // the comparison `W >= 7` must read as the number 99.
    let input = "+Weight(b,99).\n;\n?- Heavy(X,W).\n-Edge(a,b).\n;\n";
    let out = dlc_with_input(&["repl", "--color", "never", "--no-timing", "fixtures/ok/negation.dl"], input);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let heavy: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("Heavy(")).collect();
    assert_eq!(heavy, ["Heavy(b,10)", "Heavy(b,99)", "Heavy(c,7)"], "{}", out.stdout);
    assert!(out.stdout.contains("answers removed: Heavy(b,10) Heavy(b,99) Heavy(c,7)"), "{}", out.stdout);
}

/// A proof shows a negated atom as a leaf that no fact matches and a comparison with its
/// values; `--explain-missing` names what excluded the matches of a rule's atoms.
#[test]
fn explanations_show_negations_and_comparisons() {
    let out = dlc(&["--explain", "Heavy(b,10)", "--no-magic", "fixtures/ok/negation.dl"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("\n  10 >= 7  holds\n  !Unreached(b)  no such fact\n"), "{}", out.stdout);
    let out = dlc(&["--explain-missing", "Heavy(e,12)", "--no-magic", "fixtures/ok/negation.dl"]);
    assert!(out.stdout.contains("excludes each: first a negated atom finds the fact Unreached(e)"), "{}", out.stdout);
    let out = dlc(&["--explain-missing", "Heavy(d,1)", "--no-magic", "fixtures/ok/negation.dl"]);
    assert!(out.stdout.contains("first the comparison 1 >= 7 does not hold"), "{}", out.stdout);
    // Through the magic program and in the repl, the same leaves.
    let out = dlc(&["--explain", "Pair(c,b)", "fixtures/ok/negation.dl"]);
    assert!(out.stdout.contains("    !Unreached(c)  no such fact\n"), "{}", out.stdout);
    let out = dlc_with_input(&["repl", "--color", "never", "fixtures/ok/negation.dl"], ":why Heavy(c,7)\n");
    assert!(out.stdout.contains("7 >= 7  holds"), "{}", out.stdout);
}

/// Writing answers with `-D` when the query's constant occurs nowhere in the data used to
/// panic in the writer's value order: it ranked the selected tuples' values only, but
/// sorted every group whose prefix the query bound.
#[test]
fn output_dir_with_a_query_constant_absent_from_the_data() {
    let dir = scratch("absent-constant");
    let native = write(
        &dir.join("p.dl"),
        "R(X,Y) <- F(X,Y).\nR(X,Y) <- E(X,A), R(B,A), D(B,Y).\nE(a,f). E(i,o). F(m,o). D(m,f).\n?- R(i,k).\n",
    );
    let souffle = write(
        &dir.join("s.dl"),
        ".decl r(x:symbol, y:symbol)\n.decl f(x:symbol, y:symbol)\n.decl e(x:symbol, y:symbol)\n\
         .decl d(x:symbol, y:symbol)\nr(x,y) :- f(x,y).\nr(x,y) :- e(x,a), r(b,a), d(b,y).\n\
         e(\"a\",\"f\"). e(\"i\",\"o\"). f(\"m\",\"o\"). d(\"m\",\"f\").\n.output r\n",
    );
    // Groups `(a,1)` and `(c,1)` match the bound prefix but hold no tuple `m(Z,"1",Z)`.
    let three = write(
        &dir.join("m.dl"),
        ".decl a(x:symbol, y:symbol, z:symbol)\n.decl m(x:symbol, y:symbol, z:symbol)\n\
         m(x,y,z) :- a(x,y,z).\na(\"a\",\"1\",\"b\"). a(\"c\",\"1\",\"d\"). a(\"e\",\"1\",\"e\").\n",
    );
    for (args, rows) in [
        (vec![native.as_str()], ""),
        (vec![souffle.as_str(), "--query", "r(\"i\",\"k\")"], ""),
        (vec![three.as_str(), "--query", "m(Z,\"1\",Z)"], "e\t1\te\n"),
    ] {
        for magic in ["auto", "off", "on"] {
            let out = dlc(&[&args[..], &["-D", "-", "--magic", magic]].concat());
            assert_eq!(out.code, 0, "{args:?} --magic {magic}: {}", out.stderr);
            assert!(out.stdout.ends_with(&format!("===============\n{rows}===============\n")), "{}", out.stdout);
        }
    }
}

/// A file `-D` writes reads back with `--facts` as the same tuples: `.csv` files are
/// tab-separated when their first line holds a tab (or their predicate has one column),
/// and a value holding the delimiter (or starting with a quote) is written quoted.
#[test]
fn output_files_read_back_as_facts() {
    let dir = scratch("round-trip");
    let values = [r#""has,comma""#, r#""has\ttab""#, r#""\"quoted\"""#, r#""in\"side""#, "plain", r#""7""#, r#""()""#];
    let mut facts = String::new();
    for (i, v) in values.iter().enumerate() {
        facts += &format!("E({v},{}).\nF({v}).\n", values[(i + 1) % values.len()]);
    }
    let first = write(&dir.join("first.dl"), format!("{facts}R(X,Y) <- E(X,Y).\nS(X) <- F(X).\n?- R(X,Y).\n"));
    let second = write(&dir.join("second.dl"), "R2(X,Y) <- R(X,Y).\nS2(X) <- S(X).\n?- R2(X,Y).\n");
    let (out, again) = (dir.join("out"), dir.join("again"));
    let run = dlc(&[&first, "--all", "-D", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let written = std::fs::read_to_string(out.join("R.csv")).unwrap();
    assert!(written.contains("\"has\ttab\"\t") && written.contains("has,comma\t"), "{written}");
    let run = dlc(&[&second, "--facts", out.to_str().unwrap(), "--all", "-D", again.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(again.join("R2.csv")).unwrap(), written);
    assert_eq!(
        std::fs::read_to_string(again.join("S2.csv")).unwrap(),
        std::fs::read_to_string(out.join("S.csv")).unwrap()
    );
    // A comma-separated .csv file still reads as before, quoted fields included.
    let csv = write(&dir.join("R.csv"), "a,\"b,c\"\nd,e\n");
    let run = dlc(&[&second, "--facts", &csv]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "R2(a,\"b,c\")\nR2(d,e)\n");
}

/// `-D -` prints a Soufflé program's relations as Soufflé 2.5 does: by name, each with a
/// line of its attribute names (joined by its delimiter; empty for a nullary relation),
/// which `IO=stdout` leaves out. The expected text is Soufflé's own output.
#[test]
fn souffle_outputs_on_standard_output_carry_their_attribute_names() {
    let dir = scratch("souffle-stdout");
    let program = write(
        &dir.join("h.dl"),
        ".decl r(xa:symbol, yb:number)\n.decl z()\n.decl one(v:symbol)\n.decl e(x:symbol, y:number)\n\
         e(\"a\", 1).\nr(x, y) :- e(x, y).\nz().\n\
         .output r(delimiter=\",\")\n.output z\n.output one\n",
    );
    let out = dlc(&[&program, "-D", "-"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "---------------\none\nv\n===============\n===============\n\
         ---------------\nr\nxa,yb\n===============\na,1\n===============\n\
         ---------------\nz\n\n===============\n()\n===============\n"
    );
    // With a query, the queried relation is framed the same way.
    let out = dlc(&[&program, "-D", "-", "--query", "r(x, 1)"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "---------------\nr\nxa\tyb\n===============\na\t1\n===============\n");
    // `IO=stdout` prints no attribute line, as in Soufflé.
    let program = write(&dir.join("s.dl"), ".decl r(xa:symbol, yb:number)\nr(\"a\", 1).\n.output r(IO=stdout)\n");
    let out = dlc(&[&program, "-D", "out-unused"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "---------------\nr\n===============\na\t1\n===============\n");
}

/// An output file that cannot be written is an E0021 report saying why: `-D` naming a
/// regular file, a relation name too long for a file name, an unwritable `filename=`.
#[test]
fn unwritable_outputs_are_reported_with_their_cause() {
    let dir = scratch("unwritable");
    let afile = write(&dir.join("afile"), "");
    let out = dlc(&["--color", "never", "fixtures/ok/reach.dl", "-D", &afile]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("[E0021]") && out.stderr.contains("afile` is not a directory"), "{}", out.stderr);
    let long = "r".repeat(300);
    let program = write(&dir.join("long.dl"), format!(".decl {long}(x:symbol)\n{long}(\"a\").\n.output {long}\n"));
    let out = dlc(&["--color", "never", &program, "-D", dir.join("out").to_str().unwrap()]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("[E0021]") && out.stderr.contains("longer than the file system allows"),
        "{}",
        out.stderr
    );
    // A `filename` under a regular file can be written by nobody, root included.
    let program =
        write(&dir.join("unw.dl"), format!(".decl r(x:symbol)\nr(\"a\").\n.output r(filename=\"{afile}/r.csv\")\n"));
    let out = dlc(&["--color", "never", &program, "-D", dir.join("out").to_str().unwrap()]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("[E0021]") && out.stderr.contains("this `.output` writes it"), "{}", out.stderr);
}

#[test]
fn explain_with_output_dir_is_a_usage_error() {
    for flag in ["--explain", "--explain-missing"] {
        let out = dlc(&["fixtures/ok/reach.dl", flag, "R(a,d)", "-D", "-"]);
        assert_eq!(out.code, 2, "{flag}: {}", out.stderr);
    }
}

/// `dlc -` reads the program from standard input, for generated programs piped in.
#[test]
fn a_program_on_standard_input() {
    let reach = std::fs::read_to_string(common::root().join("fixtures/ok/reach.dl")).unwrap();
    let piped = dlc_with_input(&["-"], &reach);
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    assert_eq!(piped.stdout, dlc(&["fixtures/ok/reach.dl"]).stdout);
    let ast = dlc_with_input(&["-", "--emit", "ast"], &reach);
    assert_eq!(ast.stdout, dlc(&["fixtures/ok/reach.dl", "--emit", "ast"]).stdout);
    // Reports name it `<stdin>`; bytes that are not UTF-8 are reported as for a file.
    let bad = dlc_with_input(&["-", "--color", "never"], "R(X) <- E(X\n");
    assert_eq!(bad.code, 1);
    assert!(bad.stderr.contains("<stdin>:1:"), "{}", bad.stderr);
    let bytes = dlc_with_bytes(&["-", "--color", "never"], b"R(X) <- E(X).\n\xff\n");
    assert_eq!(bytes.code, 1);
    assert!(bytes.stderr.contains("cannot read `<stdin>`: line 2 is not UTF-8"), "{}", bytes.stderr);
    // The repl reads its commands there.
    assert_eq!(dlc_with_input(&["repl", "-"], "").code, 2);
}

/// The repl warns about an update of a predicate the program does not have, as
/// `--insert` does (once per predicate), and `+E(a,b);` stages and applies in one line.
/// Piped input gets no prompt.
#[test]
fn repl_warns_about_unknown_predicates_and_applies_at_a_semicolon() {
    let script = "+e(a,z).\n+E(a,z);\n+e(b,z).\n;\n";
    let out = dlc_with_input(&["repl", "fixtures/ok/reach.dl", "--color", "never", "--no-timing"], script);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stderr.matches("[W0002]").count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("`e` is not a predicate of the program"), "{}", out.stderr);
    assert!(out.stdout.contains("batch 1: +e(a,z) +E(a,z)\n"), "{}", out.stdout);
    assert!(out.stdout.contains("answers added: R(a,z)\n"), "{}", out.stdout);
    assert!(out.stdout.contains("batch 2: +e(b,z)\n"), "{}", out.stdout);
    assert!(!out.stdout.contains("dlc> "), "{}", out.stdout);
    let flag = dlc(&["fixtures/ok/reach.dl", "--color", "never", "--insert", "e(a,z)"]);
    assert!(flag.stderr.contains("[W0002]"), "{}", flag.stderr);
}

/// A relation's file is written under a temporary name and renamed when complete: a
/// write that fails leaves neither a half-written file nor the temporary one.
#[test]
fn output_files_appear_only_when_complete() {
    let dir = scratch("output-dir-rename");
    let out = dir.join("out");
    let rules = write(&dir.join("tc.dl"), "R(X,Y) <- E(X,Y).\nE(1,2).\n?- R(1,Y).\n");
    // A directory in the way of R.csv makes the rename fail after the rows are written.
    std::fs::create_dir_all(out.join("R.csv")).unwrap();
    let run = dlc(&[rules.as_str(), "--no-timing", "-D", out.to_str().unwrap()]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    let names: Vec<_> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, vec!["R.csv"], "{}", run.stderr);
    assert!(out.join("R.csv").is_dir());
    std::fs::remove_dir_all(&out).unwrap();
    let run = dlc(&[rules.as_str(), "--no-timing", "-D", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let names: Vec<_> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, vec!["R.csv"]);
    assert_eq!(std::fs::read_to_string(out.join("R.csv")).unwrap(), "1\t2\n");
}

/// The trace's memory lines add up: every relation's parts sum to its total, and the
/// indexes a semi-naive join declared are listed by their key columns, in text and JSON
/// (with 0 bytes while unbuilt: joins this small scan instead).
#[test]
fn the_trace_reports_memory_per_relation() {
    let args = ["--emit", "trace", "--engine", "seminaive", "--magic", "off", "--no-timing", "fixtures/ok/reach.dl"];
    let text = dlc(&args);
    assert_eq!(text.code, 0, "{}", text.stderr);
    let line = text.stdout.lines().find(|l| l.starts_with("memory: R ")).expect("a memory line of R");
    assert!(line.contains("rows ") && line.contains(", index(") && line.contains(", total "), "{line}");
    let json = dlc(&[&args[..], &["--format", "json"]].concat());
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let memory = doc["memory"].as_object().expect("a memory object");
    let r = &memory["R"];
    let indexes = r["indexes"].as_array().expect("R's indexes");
    assert!(!indexes.is_empty() && indexes.iter().all(|ix| ix["bytes"].as_u64().is_some()), "{r}");
    for (name, parts) in memory {
        let sum = ["rows", "set", "staged", "locator"].iter().map(|p| parts[p].as_u64().unwrap()).sum::<u64>()
            + parts["indexes"].as_array().unwrap().iter().map(|ix| ix["bytes"].as_u64().unwrap()).sum::<u64>();
        assert_eq!(parts["total"].as_u64(), Some(sum), "{name}");
    }
    assert!(line.ends_with(&format!("total {} B", r["total"])), "{line}");
}
