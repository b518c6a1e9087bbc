//! `--emit` forms of programs far larger than the fixtures, run in-process on a small
//! stack: a printer or serialiser that recursed once per body atom would overflow it, and
//! output that grew faster than the program (an indentation per join level) is caught by
//! comparing the output of a body twice as long.

mod common;

/// A rule whose body is a path of `n` atoms `e(X_i,X_{i+1})`, with its facts and a query.
fn long_body(n: usize) -> String {
    let body: Vec<String> = (0..n).map(|i| format!("e(X{i},X{})", i + 1)).collect();
    format!("p(X0,X{n}) <- {}\ne(a,b). e(b,a).\n?- p(a,Y).\n", body.join(", "))
}

/// Runs `dlc --emit EMIT --format FORMAT` on `program` (written to a file named `name`)
/// on a thread with a 512 KiB stack; returns the standard output. A debug build needs
/// about 270 KiB of it whatever the program (the command line's parsing and dispatch); a
/// pass that recursed once per atom would need megabytes for 40,000 atoms.
fn emit_on_small_stack(name: &str, program: &str, emit: &str, format: &str) -> String {
    common::at_root();
    let dir = common::temp_dir();
    let path = dir.path().join(format!("{name}-{emit}-{format}.dl"));
    std::fs::write(&path, program).expect("can write the program");
    let args: Vec<String> =
        ["dlc", "--emit", emit, "--format", format, path.to_str().expect("a UTF-8 path")].map(String::from).to_vec();
    let output = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(move || {
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let code = dlc::run(args, &mut std::io::empty(), &mut out, &mut err);
            (code, String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
        })
        .expect("a thread starts")
        .join();
    let (code, stdout, stderr) = output.expect("no overflow");
    assert_eq!(code, 0, "{stderr}");
    stdout
}

/// `--emit plan` of a 40,000-atom body, as text and JSON: no deep stack, and the output of
/// twice the body is about twice as long (it was quadratic: 3 GB of indentation).
#[test]
fn the_plan_of_a_forty_thousand_atom_body_is_flat_and_linear() {
    for format in ["text", "json"] {
        let half = emit_on_small_stack("half", &long_body(20_000), "plan", format);
        let full = emit_on_small_stack("full", &long_body(40_000), "plan", format);
        if format == "text" {
            assert!(full.contains(". join on [X39999] with scan e(X39999,X40000)\n"));
        }
        assert!(full.len() < 2 * half.len() + half.len() / 5, "{format}: {} then {} bytes", half.len(), full.len());
        if format == "json" {
            let value: serde_json::Value = serde_json::from_str(&full).expect("valid JSON");
            let steps = value["rules"].as_array().unwrap().iter().map(|r| r["steps"].as_array().unwrap().len()).max();
            assert!(steps >= Some(40_000), "{steps:?}");
        }
    }
}
