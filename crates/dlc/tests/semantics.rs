//! End-to-end behaviour where a result could be wrong or misleading: the order of an
//! update batch's lines, explanations of facts the query did not demand, which relations
//! are evaluated, what update reports say, and what `--magic auto` falls back to.

mod common;

use common::{dlc, dlc_with_input};
use std::path::{Path, PathBuf};

/// A fresh, empty directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("semantics").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(path: &Path, contents: impl AsRef<[u8]>) -> String {
    std::fs::write(path, contents).unwrap();
    path.display().to_string()
}

const COPY: &str = "R(X,Y) <- E(X,Y).\nE(a,b).\n?- R(X,Y).\n";

/// A batch's lines apply in order: the last change of a fact wins, in update files and
/// in the repl alike.
#[test]
fn the_last_change_of_a_fact_in_a_batch_wins() {
    let dir = scratch("batch_order");
    let program = write(&dir.join("p.dl"), COPY);
    let updates = write(
        &dir.join("u.txt"),
        "+E(z,z).\n-E(z,z).\n;\n-E(a,b).\n+E(a,b).\n;\n+E(c,c).\n-E(a,b).\n+E(c,d).\n-E(c,c).\n",
    );
    let out = dlc(&[&program, "--updates", &updates]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.ends_with("\nR(c,d)\n"), "{}", out.stdout);
    assert!(out.stdout.contains("no-op: -E(z,z) is not present"), "{}", out.stdout);
    let out =
        dlc_with_input(&["repl", &program], "+E(z,z).\n-E(z,z).\n;\n?- R(X,Y).\n-E(a,b).\n+E(a,b).\n\n?- R(X,Y).\n");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let answers: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("R(")).collect();
    assert_eq!(answers, ["R(a,b)", "R(a,b)"], "{}", out.stdout);
    // The flags form one batch whose deletions come first: a fact given to both is present.
    let out = dlc(&[&program, "--insert", "E(a,b)", "--delete", "E(a,b)"]);
    assert!(out.stdout.ends_with("\nR(a,b)\n"), "{}", out.stdout);
}
