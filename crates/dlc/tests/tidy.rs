//! Repository hygiene: the crate graph points one way, and every source file says what it
//! is for.

mod common;

use common::root;
use serde_json::Value;
use std::path::Path;

/// The workspace crates each crate may depend on (normal dependencies; dev-dependencies
/// are free). `exec` knows nothing of adornments or the front end; nothing after
/// lowering depends on `syntax`.
const ALLOWED: &[(&str, &[&str])] = &[
    ("diag", &[]),
    ("ir", &["diag"]),
    ("syntax", &["diag", "ir"]),
    ("magic", &["diag", "ir"]),
    ("plan", &["diag", "ir"]),
    ("exec", &["ir", "plan"]),
    ("flow", &["ir", "plan"]),
    ("pipeline", &["diag", "ir", "syntax", "magic", "plan", "exec", "flow"]),
    ("dlc", &["diag", "ir", "syntax", "magic", "plan", "exec", "flow", "pipeline"]),
    ("bench", &["diag", "ir", "syntax", "magic", "plan", "exec"]),
    ("xtask", &[]),
];

#[test]
fn crate_graph_points_one_way() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let members: Vec<&str> = meta["packages"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    for package in meta["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap();
        let allowed = ALLOWED
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("crate {name} is not in the allow-list"))
            .1;
        for dep in package["dependencies"].as_array().unwrap() {
            let dep_name = dep["name"].as_str().unwrap();
            if dep["kind"].is_null() && members.contains(&dep_name) {
                assert!(allowed.contains(&dep_name), "{name} must not depend on {dep_name}");
            }
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_source_file_starts_with_a_doc_line() {
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    rust_files(&root().join("xtask"), &mut files);
    let missing: Vec<String> = files
        .iter()
        .filter(|f| !std::fs::read_to_string(f).unwrap().starts_with("//!"))
        .map(|f| f.strip_prefix(root()).unwrap().display().to_string())
        .collect();
    assert!(missing.is_empty(), "files without a leading `//!` line: {missing:?}");
}

/// `unsafe` is denied in every crate; the two exceptions are the binary's setting of the
/// allocator (`keep_large_blocks_mapped` in `crates/dlc/src/main.rs`), one FFI call, and
/// the calls of user-defined functors' C functions (`crates/dlc/src/functors.rs`).
#[test]
fn unsafe_code_is_only_the_allocator_setting_and_the_functor_calls() {
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    rust_files(&root().join("xtask"), &mut files);
    let mut allowed = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let name = file.strip_prefix(root()).unwrap().display().to_string();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_start();
            if line.starts_with("#[allow(unsafe_code)]") || line.starts_with("#![allow(unsafe_code)]") {
                allowed.push(format!("{name}:{}", n + 1));
            }
        }
    }
    allowed.sort();
    assert_eq!(allowed.len(), 2, "unsafe code allowed at: {allowed:?}");
    assert!(allowed[0].starts_with("crates/dlc/src/functors.rs:"), "unsafe code allowed at: {allowed:?}");
    assert!(allowed[1].starts_with("crates/dlc/src/main.rs:"), "unsafe code allowed at: {allowed:?}");
}
