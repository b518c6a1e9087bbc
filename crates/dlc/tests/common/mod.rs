//! Shared helpers of the end-to-end tests: run the CLI in-process from the workspace root.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Once;

/// The workspace root (fixture paths and `% args:` lines are relative to it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root exists")
}

/// Makes the workspace root the working directory, once per test binary, so that
/// diagnostics print the same relative paths a user at the root would see.
pub fn at_root() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| std::env::set_current_dir(root()).expect("can enter the workspace root"));
}

/// What one run of the CLI printed.
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `dlc ARGS` in-process with the given standard input.
pub fn dlc_with_input(args: &[&str], input: &str) -> Output {
    dlc_with_bytes(args, input.as_bytes())
}

/// Runs `dlc ARGS` in-process with standard input of any bytes.
pub fn dlc_with_bytes(args: &[&str], mut input: &[u8]) -> Output {
    at_root();
    let mut argv = vec!["dlc"];
    argv.extend_from_slice(args);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = dlc::run(argv, &mut input, &mut out, &mut err);
    Output { code, stdout: String::from_utf8(out).unwrap(), stderr: String::from_utf8(err).unwrap() }
}

pub fn dlc(args: &[&str]) -> Output {
    dlc_with_input(args, "")
}

/// Extra arguments a fixture asks for in `% args: ...` header lines.
pub fn fixture_args(source: &str) -> Vec<String> {
    source
        .lines()
        .filter_map(|l| l.trim().strip_prefix("% args:"))
        .flat_map(|rest| rest.split_whitespace().map(str::to_string))
        .collect()
}

/// Writes `contents` to `path` when regenerating (`DLC_REGEN=1`, set by `cargo xtask
/// regen`), and otherwise fails if the checked-in file differs.
pub fn ensure_file_contents(path: &Path, contents: &str) {
    let current = std::fs::read_to_string(path).unwrap_or_default();
    if current == contents {
        return;
    }
    if std::env::var_os("DLC_REGEN").is_some() {
        std::fs::write(path, contents).expect("can write generated file");
        return;
    }
    let shown = path.strip_prefix(root()).unwrap_or(path).display().to_string();
    panic!("{shown} is stale: run `cargo xtask regen` and commit");
}

/// A fresh, empty directory `NAME` under the test binary's scratch folder `group`.
pub fn scratch_in(group: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(group).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A fresh, empty directory in the system temp directory, removed with everything in it
/// when the guard is dropped: at the end of the test, and also when it fails.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("dlc-test-").tempdir().expect("can create a temp directory")
}

/// Writes `contents` to `path` and returns the path as an argument.
pub fn write_file(path: &Path, contents: impl AsRef<[u8]>) -> String {
    std::fs::write(path, contents).unwrap();
    path.display().to_string()
}

/// Standard output without the lines of a batch report that describe how the engine
/// worked (DRed's waves, rederivations, re-insertions, groups recomputed and work; the dataflow reports
/// net changes): what remains, answers, their changes and relation sizes, must be the
/// same.
pub fn comparable(text: &str) -> String {
    let how = [
        "  maintained by",
        "  over-deleted",
        "    wave",
        "  rederived",
        "  re-inserted",
        "  inserted",
        "  work:",
        "  aggregate groups recomputed",
        "  time:",
    ];
    text.lines().filter(|l| !how.iter().any(|h| l.starts_with(h))).map(|l| format!("{l}\n")).collect()
}

/// File name -> contents of every file in `dir` (none when it does not exist).
pub fn files(dir: &Path) -> std::collections::BTreeMap<String, String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Default::default() };
    entries
        .map(|e| {
            let path = e.unwrap().path();
            (path.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&path).unwrap())
        })
        .collect()
}
