//! Fixture-driven snapshots: every fixture under `fixtures/ok` through every `--emit`
//! form, every Soufflé program under `fixtures/souffle` through the forms a program
//! without a query has, and every fixture under `fixtures/err` through its diagnostics. A snapshot holds
//! the source and the output together. Review changes with `cargo insta review`;
//! `cargo xtask regen` rewrites them all.

mod common;

use common::{dlc, fixture_args, root};
use std::path::Path;

/// Every `--emit` form with the extra flags it is snapshotted with, by snapshot name.
pub const EMITS: &[(&str, &[&str])] = &[
    ("ast", &["--emit", "ast"]),
    ("ir", &["--emit", "ir"]),
    ("ir_json", &["--emit", "ir", "--format", "json"]),
    ("adorned", &["--emit", "adorned"]),
    ("adorned_dot", &["--emit", "adorned", "--format", "dot"]),
    ("adorned_json", &["--emit", "adorned", "--format", "json"]),
    ("magic_ir", &["--emit", "magic-ir"]),
    ("magic_ir_json", &["--emit", "magic-ir", "--format", "json"]),
    ("plan", &["--emit", "plan"]),
    ("plan_json", &["--emit", "plan", "--format", "json"]),
    ("trace", &["--emit", "trace", "--compare", "--engine", "reference"]),
    ("trace_json", &["--emit", "trace", "--format", "json", "--compare", "--engine", "reference"]),
    ("answers", &["--compare"]),
];

/// The `--emit` forms of a Soufflé program run for its `.output` relations (the others
/// need a query), by snapshot name; their answers are checked against Soufflé's files by
/// the `souffle` tests.
pub const SOUFFLE_EMITS: &[(&str, &[&str])] =
    &[("souffle_ast", &["--emit", "ast"]), ("souffle_ir", &["--emit", "ir"]), ("souffle_plan", &["--emit", "plan"])];

fn run_fixture(path: &Path, extra: &[&str]) -> (String, common::Output) {
    let source = std::fs::read_to_string(path).unwrap();
    let relative = path.strip_prefix(root()).unwrap().to_str().unwrap().to_string();
    let mut args: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    args.extend(["--color", "never", "--no-timing"].map(String::from));
    args.extend(fixture_args(&source));
    // A Soufflé fixture's flags are in the `args` file beside it, one a line.
    let beside = std::fs::read_to_string(path.with_file_name("args")).unwrap_or_default();
    args.extend(beside.lines().filter(|l| !l.is_empty()).map(String::from));
    args.push(relative);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    (source, dlc(&args))
}

fn section(title: &str, text: &str) -> String {
    format!("----- {title}\n{}{}", text, if text.is_empty() || text.ends_with('\n') { "" } else { "\n" })
}

/// Snapshots the fixture at `path` through each of `emits`: its source, then what the form
/// printed, then any diagnostics.
fn snapshot_emits(path: &Path, emits: &[(&str, &[&str])]) {
    for (name, flags) in emits {
        let (source, output) = run_fixture(path, flags);
        assert_eq!(output.code, 0, "{name} of {} failed:\n{}", path.display(), output.stderr);
        let mut text = section("SOURCE", &source);
        text += &section(&name.to_uppercase(), &output.stdout);
        if !output.stderr.is_empty() {
            text += &section("DIAGNOSTICS", &output.stderr);
        }
        insta::assert_snapshot!(*name, text);
    }
}

#[test]
fn ok_fixtures() {
    insta::with_settings!({ snapshot_path => "../../../snapshots", prepend_module_to_snapshot => false, omit_expression => true }, {
        insta::glob!("../../../fixtures", "ok/*.dl", |path| snapshot_emits(path, EMITS));
    });
}

#[test]
fn souffle_fixtures() {
    insta::with_settings!({ snapshot_path => "../../../snapshots", prepend_module_to_snapshot => false, omit_expression => true }, {
        insta::glob!("../../../fixtures", "souffle/*/prog.dl", |path| snapshot_emits(path, SOUFFLE_EMITS));
    });
}

#[test]
fn err_fixtures() {
    insta::with_settings!({ snapshot_path => "../../../snapshots", prepend_module_to_snapshot => false, omit_expression => true }, {
        insta::glob!("../../../fixtures", "err/*.dl", |path| {
            let (source, output) = run_fixture(path, &[]);
            assert_ne!(output.code, 0, "{} must fail", path.display());
            assert!(output.stderr.contains("Error"), "{} printed no error:\n{}", path.display(), output.stderr);
            let code = path.file_name().unwrap().to_str().unwrap().split('_').next().unwrap();
            assert!(output.stderr.contains(&format!("[{code}]")), "{} does not report {code}:\n{}", path.display(), output.stderr);
            let mut text = section("SOURCE", &source);
            text += &section("DIAGNOSTICS", &output.stderr);
            if !output.stdout.is_empty() {
                text += &section("STDOUT", &output.stdout);
            }
            insta::assert_snapshot!("diagnostics", text);
        });
    });
}

/// Every fixture under `fixtures/explain` (its `% args:` ask for `--explain` or
/// `--explain-missing`) in every format, through the magic and the original program; one
/// snapshot per fixture.
#[test]
fn explain_fixtures() {
    insta::with_settings!({ snapshot_path => "../../../snapshots", prepend_module_to_snapshot => false, omit_expression => true }, {
        insta::glob!("../../../fixtures", "explain/*.dl", |path| {
            let source = std::fs::read_to_string(path).unwrap();
            let missing = fixture_args(&source).iter().any(|a| a == "--explain-missing");
            let mut text = section("SOURCE", &source);
            let mut forms: Vec<(&str, &[&str])> = vec![("TEXT", &[]), ("JSON", &["--format", "json"])];
            if !missing {
                forms.push(("DOT", &["--format", "dot"]));
            }
            forms.push(("TEXT --no-magic", &["--no-magic"]));
            for (title, flags) in forms {
                let (_, output) = run_fixture(path, flags);
                text += &section(&format!("{title} (exit {})", output.code), &output.stdout);
                if !output.stderr.is_empty() {
                    text += &section("DIAGNOSTICS", &output.stderr);
                }
            }
            insta::assert_snapshot!("explain", text);
        });
    });
}

/// Snapshot files that no fixture produces any more fail the suite (or are removed by
/// `cargo xtask regen`), so `snapshots/` never holds orphans.
#[test]
fn no_orphaned_snapshots() {
    let root = root();
    let names = |dir: &str| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(root.join("fixtures").join(dir))
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".dl"))
            .collect();
        v.sort();
        v
    };
    let mut expected: Vec<String> = Vec::new();
    for f in names("ok") {
        expected.extend(EMITS.iter().map(|(e, _)| format!("{e}@{f}.snap")));
    }
    let mut souffle: Vec<String> = std::fs::read_dir(root.join("fixtures/souffle"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("prog.dl").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    souffle.sort();
    for f in souffle {
        expected.extend(SOUFFLE_EMITS.iter().map(|(e, _)| format!("{e}@{f}__prog.dl.snap")));
    }
    expected.extend(names("err").into_iter().map(|f| format!("diagnostics@{f}.snap")));
    expected.extend(names("explain").into_iter().map(|f| format!("explain@{f}.snap")));
    let mut orphans = Vec::new();
    for entry in std::fs::read_dir(root.join("snapshots")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".snap") && !expected.contains(&name) {
            orphans.push(name);
        }
    }
    if !orphans.is_empty() && std::env::var_os("DLC_REGEN").is_some() {
        for name in &orphans {
            std::fs::remove_file(root.join("snapshots").join(name)).unwrap();
        }
        return;
    }
    assert!(orphans.is_empty(), "orphaned snapshots (run `cargo xtask regen`): {orphans:?}");
}

/// Every error code of the table has an `fixtures/err/<CODE>_*.dl` that triggers it
/// (warnings: a fixture under `fixtures/ok` whose run shows it).
#[test]
fn every_code_has_a_fixture() {
    let root = root();
    let listing = |dir: &str| -> Vec<String> {
        std::fs::read_dir(root.join("fixtures").join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    let err = listing("err");
    for (code, title, _) in diag::CODES {
        if code.0.starts_with('E') {
            assert!(err.iter().any(|f| f.starts_with(&format!("{}_", code.0))), "no fixture for {code} ({title})");
        } else {
            let warned = listing("ok").iter().filter(|f| f.ends_with(".dl")).any(|f| {
                let path = root.join("fixtures/ok").join(f);
                run_fixture(&path, &[]).1.stderr.contains(&format!("[{}]", code.0))
            });
            assert!(warned, "no snapshot shows warning {code} ({title})");
        }
    }
}
