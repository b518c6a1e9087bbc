//! Datalog embedded in a Rust program: the nodes a graph's node `a` does not reach, kept
//! up to date as edges come and go, with a proof of one answer.
//!
//! Run it from the repository root with `cargo run --release --example embed`.

use pipeline::{Datalog, DatalogError, Row, Value};

/// Reachability from `a`, and its complement through negation.
const PROGRAM: &str = "\
Reach(X) <- Edge(a,X)
Reach(Y) <- Reach(X), Edge(X,Y)
Unreached(X) <- Node(X), X != a, not Reach(X)
?- Unreached(X).
";

fn main() -> Result<(), DatalogError> {
    let mut datalog = Datalog::new(PROGRAM)?;
    for node in ["a", "b", "c", "d", "e"] {
        datalog.add_fact("Node", &[node.into()])?;
    }
    for (from, to) in [("a", "b"), ("b", "c"), ("d", "e")] {
        datalog.add_fact("Edge", &[from.into(), to.into()])?;
    }
    let answers = datalog.evaluate()?;
    println!("unreached from a: {}", rows(&answers));

    // One batch: the edge b→c goes, an edge a→d comes.
    let edge = |from: &str, to: &str| -> Row { vec![Value::from(from), Value::from(to)] };
    let updated = datalog.update(&[("Edge", edge("a", "d"))], &[("Edge", edge("b", "c"))])?;
    println!("after -Edge(b,c) +Edge(a,d), maintained by {}:", updated.how.name());
    println!("  added: {}", rows(&updated.added));
    println!("  removed: {}", rows(&updated.removed));
    println!("unreached from a: {}", rows(&datalog.answers()?));

    match datalog.explain("Unreached", &["c".into()])? {
        Some(proof) => print!("why Unreached(c):\n{proof}"),
        None => println!("Unreached(c) does not hold"),
    }
    Ok(())
}

/// Rows as `(d) (e)`, or `none`.
fn rows(rows: &[Row]) -> String {
    if rows.is_empty() {
        return "none".into();
    }
    let shown: Vec<String> = rows
        .iter()
        .map(|row| format!("({})", row.iter().map(Value::to_string).collect::<Vec<_>>().join(",")))
        .collect();
    shown.join(" ")
}
