//! Soufflé's user-defined functors end to end: `fixtures/functors/functors.c` is built
//! into a shared library (with the machine's C compiler, `cc`), and the program beside it
//! is run with `-L DIR -l dlcfunctors` through every engine, maintenance and proofs. Its
//! expected files were computed once by Soufflé 2.5 with the same library and checked by
//! hand.

mod common;

use common::{dlc, files, root};
use std::path::Path;
use tempfile::TempDir;

/// Builds the C file `source` into the shared library `name` (`lib{name}.so` on Linux) in
/// `dir`, with the machine's C compiler.
fn build_library(dir: &Path, name: &str, source: &Path) {
    let library = dir.join(format!("{}{name}{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX));
    let built = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&library)
        .arg(source)
        .output()
        .expect("a C compiler `cc` builds the functors' library");
    assert!(built.status.success(), "cc failed:\n{}", String::from_utf8_lossy(&built.stderr));
}

/// A temp directory holding `libdlcfunctors.so`, built for each test that needs it: the
/// guard removes it when the test ends (one built per test binary would be held by a
/// static, which is never dropped).
fn library_dir() -> TempDir {
    let dir = common::temp_dir();
    build_library(dir.path(), "dlcfunctors", &root().join("fixtures/functors/functors.c"));
    dir
}

/// Runs the fixture with `flags`, its `-L` and `-l` among them.
fn fixture(flags: &[&str]) -> common::Output {
    dlc(&[&["fixtures/functors/prog.dl", "-F", "fixtures/functors/in"], flags].concat())
}

/// Runs the fixture with the library of `library_dir` and the flags `extra`.
fn run(library_dir: &Path, extra: &[&str]) -> common::Output {
    let dir = library_dir.to_str().unwrap();
    fixture(&[&["-L", dir, "-l", "dlcfunctors", "--no-timing"], extra].concat())
}

#[test]
fn every_engine_writes_souffles_outputs() {
    let expected = files(&root().join("fixtures/functors/expected"));
    assert_eq!(expected.len(), 9, "the expected files are missing");
    let modes: [(&str, &[&str]); 6] = [
        ("default", &[]),
        ("no_magic", &["--no-magic"]),
        ("reference", &["--engine", "reference"]),
        ("threads", &["--threads", "4"]),
        ("differential", &["--engine", "differential"]),
        ("differential_workers", &["--engine", "differential", "--workers", "2"]),
    ];
    let library = library_dir();
    for (mode, flags) in modes {
        let out = library.path().join(format!("out-{mode}"));
        let mut args = vec!["-D", out.to_str().unwrap()];
        args.extend_from_slice(flags);
        let result = run(library.path(), &args);
        assert_eq!(result.code, 0, "{mode} failed:\n{}", result.stderr);
        assert_eq!(files(&out), expected, "{mode} wrote other files");
        let _ = std::fs::remove_dir_all(&out);
    }
}

/// A query's bindings reach the functor's argument through the magic rewrite, and the
/// answers are those of the whole relation.
#[test]
fn a_query_passes_its_bindings_through_the_calls() {
    let library = library_dir();
    let magic = run(library.path(), &["--query", "seq(7, n)"]);
    assert_eq!(magic.code, 0, "{}", magic.stderr);
    assert!(magic.stderr.contains("17 answer(s); magic program"), "{}", magic.stderr);
    let expected: Vec<String> = std::fs::read_to_string(root().join("fixtures/functors/expected/seq.csv"))
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("7\t"))
        .map(|n| format!("seq(7,{n})"))
        .collect();
    let answers: Vec<&str> = magic.stdout.lines().filter(|l| l.starts_with("seq(")).collect();
    assert_eq!(answers, expected);
}

/// Inserted and deleted input facts are maintained through the calls, by DRed and by the
/// ranked maintenance; `--check` compares each batch with a recomputation.
#[test]
fn maintenance_follows_the_calls() {
    let library = library_dir();
    for maintenance in ["dred", "ranked"] {
        for query in ["tagged(w, t)", "long(t)", "seq(s, n)"] {
            let args = [
                "--query",
                query,
                "--insert",
                "word(\"zeta\")",
                "--insert",
                "start(9)",
                "--delete",
                "word(\"datalog\")",
                "--delete",
                "start(3)",
                "--check",
                "--maintenance",
                maintenance,
            ];
            let result = run(library.path(), &args);
            assert_eq!(result.code, 0, "{maintenance} {query}:\n{}{}", result.stdout, result.stderr);
        }
        let tagged = run(
            library.path(),
            &["--query", "tagged(w, t)", "--insert", "word(\"zeta\")", "--maintenance", maintenance],
        );
        assert!(tagged.stdout.contains("answers added: tagged(zeta,\"ZETA-2\")"), "{}", tagged.stdout);
    }
}

/// A proof shows the call as the program writes it, and the value it computed.
#[test]
fn explanations_show_the_calls() {
    let library = library_dir();
    let proof = run(library.path(), &["--query", "long(t)", "--explain", "long(\"DATALOG-3\")", "--color", "never"]);
    assert_eq!(proof.code, 0, "{}", proof.stderr);
    assert!(
        proof.stdout.contains("\"DATALOG-3\" = \"DATALOG-3\"  holds  (_0 = @tag(@upper(w), @vowels(w)))"),
        "{}",
        proof.stdout
    );
}

/// A library no `-L` directory holds, and a function no library defines, are reported at
/// the call.
#[test]
fn a_missing_library_or_function_is_reported_at_the_call() {
    let missing = fixture(&["-L", "fixtures/functors", "-l", "nosuchlibrary", "-D", "-", "--color", "never"]);
    assert_eq!(missing.code, 1, "{}", missing.stderr);
    assert!(missing.stderr.contains("[E0044] Error: no function computes the functor `answer`: the library `libnosuchlibrary.so` (`-l nosuchlibrary`) is in none of `fixtures/functors`"), "{}", missing.stderr);
    let library = library_dir();
    let dir = library.path().join("other");
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("other.c");
    std::fs::write(&source, "int answer(void) { return 7; }\n").unwrap();
    build_library(&dir, "other", &source);
    let dir = dir.to_str().unwrap();
    let partial = fixture(&["-L", dir, "-l", "other", "-D", "-", "--color", "never"]);
    assert_eq!(partial.code, 1, "{}", partial.stderr);
    assert!(partial.stderr.contains("defines no C function `add3`"), "{}", partial.stderr);
    assert!(!partial.stderr.contains("`answer`"), "{}", partial.stderr);
    // The first library that defines a function gives it: here `answer` returns 7.
    let lib = library.path().to_str().unwrap();
    let first = fixture(&["-L", dir, "-L", lib, "-l", "other", "-l", "dlcfunctors", "--query", "constant(n, t)"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(first.stdout.contains("constant(7,answer)"), "{}", first.stdout);
}

/// Showing the program needs no library.
#[test]
fn emitting_the_program_loads_no_library() {
    let ir = dlc(&["fixtures/functors/prog.dl", "--emit", "ir"]);
    assert_eq!(ir.code, 0, "{}", ir.stderr);
    assert!(ir.stdout.contains("@tag(@upper(w), @vowels(w))"), "{}", ir.stdout);
}

/// A call in a record's field or a range's bound is bound to its function as any other:
/// computed with the library, reported without it (it used to be left unbound, so the
/// rule derived nothing and the run succeeded).
#[test]
fn calls_in_records_and_range_bounds_are_computed() {
    let library = library_dir();
    let program = library.path().join("nested.dl");
    let text = ".functor answer(): number\n.functor add3(a: number, b: number, c: number): number\n\
                .type P = [a: number, b: number]\n.decl r(p: P)\nr([@add3(1, 2, 3), 0]).\n\
                .decl s(x: number)\ns(x) :- x = range(40, @answer()).\n.output r, s\n";
    std::fs::write(&program, text).unwrap();
    let (program, lib) = (program.to_str().unwrap(), library.path().to_str().unwrap());
    let run = dlc(&[program, "-L", lib, "-l", "dlcfunctors", "-D", "-", "--no-timing"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let expected = "---------------\nr\np\n===============\n[6, 0]\n===============\n\
                    ---------------\ns\nx\n===============\n40\n41\n===============\n";
    assert_eq!(run.stdout, expected);
    let unbound = dlc(&[program, "-D", "-", "--color", "never"]);
    assert_eq!(unbound.code, 1, "{}", unbound.stderr);
    assert!(unbound.stderr.contains("[E0044] Error: no function computes the functor `add3`"), "{}", unbound.stderr);
    assert!(unbound.stdout.is_empty(), "{}", unbound.stdout);
}
