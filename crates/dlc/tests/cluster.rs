//! Two `dlc` processes on 127.0.0.1 running one differential dataflow: the native
//! engine's answers, files and update results, and a clear error, on both, when they
//! were started with different flags.

mod common;

use common::{comparable, dlc, root, scratch_in};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a run of the cluster may take before the test fails (it takes well under a
/// second; the bound keeps a wedged run from hanging CI).
const BOUND: Duration = Duration::from_secs(120);

/// A hosts file of `processes` free ports of 127.0.0.1, in a scratch directory `name`.
fn hosts(name: &str, processes: usize) -> String {
    let ports: Vec<std::net::TcpListener> =
        (0..processes).map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    let lines: Vec<String> = ports.iter().map(|l| format!("{}\n", l.local_addr().unwrap())).collect();
    let path = scratch_in("cluster", name).join("hosts");
    std::fs::write(&path, lines.concat()).unwrap();
    path.display().to_string()
}

struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Starts one process per element of `per_process` (its extra arguments after `args`),
/// as processes 0, 1, … of a cluster on `hosts`, and waits for all within [`BOUND`].
fn cluster(args: &[&str], hosts: &str, per_process: &[&[&str]]) -> Vec<Ran> {
    let processes = per_process.len().to_string();
    let children: Vec<Child> = per_process
        .iter()
        .enumerate()
        .map(|(i, extra)| {
            let index = i.to_string();
            let mut command = Command::new(env!("CARGO_BIN_EXE_dlc"));
            command.current_dir(root()).args(args).args(*extra);
            command.args(["--engine", "differential", "--processes", &processes, "--process", &index]);
            command.args(["--hosts", hosts, "--connect-timeout", "60"]);
            command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
        })
        .collect();
    let start = Instant::now();
    let mut children: Vec<Option<Child>> = children.into_iter().map(Some).collect();
    while children.iter_mut().flatten().any(|c| c.try_wait().unwrap().is_none()) {
        if start.elapsed() > BOUND {
            for child in children.iter_mut().flatten() {
                let _ = child.kill();
            }
            panic!("the cluster ran past {BOUND:?}: {args:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    children
        .iter_mut()
        .map(|child| {
            let output = child.take().unwrap().wait_with_output().unwrap();
            Ran {
                code: output.status.code().unwrap_or(-1),
                stdout: String::from_utf8(output.stdout).unwrap(),
                stderr: String::from_utf8(output.stderr).unwrap(),
            }
        })
        .collect()
}

/// Runs `args` natively and on a cluster of two processes; both processes must print
/// what the native engine prints ([`comparable`]) and exit as it does.
fn same_as_native(name: &str, args: &[&str]) {
    let native = dlc(args);
    assert_eq!(native.code, 0, "{}", native.stderr);
    let hosts = hosts(name, 2);
    for (i, run) in cluster(args, &hosts, &[&[], &[]]).iter().enumerate() {
        assert_eq!(run.code, native.code, "process {i} of {args:?}: {}", run.stderr);
        assert_eq!(comparable(&run.stdout), comparable(&native.stdout), "process {i} of {args:?}");
    }
}

#[test]
fn a_query_through_magic_sets_has_the_native_answers() {
    same_as_native("magic", &["fixtures/ok/reach.dl", "--magic", "on", "--no-timing"]);
    same_as_native("auto", &["fixtures/ok/reach.dl", "--no-timing"]);
}

#[test]
fn an_update_batch_agrees_with_dred_and_passes_the_check() {
    same_as_native(
        "updates",
        &["fixtures/ok/reach.dl", "--updates", "fixtures/data/reach.updates", "--check", "--no-timing"],
    );
}

#[test]
fn output_files_are_the_native_files() {
    let program = "fixtures/souffle/points_to/prog.dl";
    let facts = "fixtures/souffle/points_to/in";
    let dir = scratch_in("cluster", "files");
    let native_dir = dir.join("native");
    let native = dlc(&[program, "-F", facts, "-D", native_dir.to_str().unwrap(), "--no-timing"]);
    assert_eq!(native.code, 0, "{}", native.stderr);
    let outs: Vec<String> = (0..2).map(|i| dir.join(format!("process{i}")).display().to_string()).collect();
    let hosts = hosts("files-hosts", 2);
    let runs = cluster(&[program, "-F", facts, "--no-timing"], &hosts, &[&["-D", &outs[0]], &["-D", &outs[1]]]);
    for (run, out) in runs.iter().zip(&outs) {
        assert_eq!(run.code, 0, "{}", run.stderr);
        let mut files = 0;
        for entry in std::fs::read_dir(&native_dir).unwrap() {
            let name = entry.unwrap().file_name();
            let expected = std::fs::read_to_string(native_dir.join(&name)).unwrap();
            let written = std::fs::read_to_string(std::path::Path::new(out).join(&name)).unwrap();
            assert_eq!(written, expected, "{name:?} in {out}");
            files += 1;
        }
        assert!(files > 0);
        assert_eq!(std::fs::read_dir(out).unwrap().count(), files, "no other file in {out}");
    }
}

#[test]
fn processes_started_with_different_flags_refuse_each_other() {
    let hosts = hosts("mismatch", 2);
    let runs = cluster(&["fixtures/ok/reach.dl", "--no-timing"], &hosts, &[&["--magic", "on"], &["--magic", "off"]]);
    for run in runs {
        assert_eq!(run.code, 1, "{}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
        assert!(run.stderr.contains("[E0027]") && run.stderr.contains("runs a different program"), "{}", run.stderr);
    }
}

#[test]
fn a_peer_that_never_comes_is_an_error_after_the_timeout() {
    let hosts = hosts("absent", 2);
    let start = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_dlc"))
        .current_dir(root())
        .args(["fixtures/ok/reach.dl", "--engine", "differential", "--processes", "2", "--process", "1"])
        .args(["--hosts", &hosts, "--connect-timeout", "1"])
        .output()
        .unwrap();
    assert!(start.elapsed() < BOUND);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("[E0027]") && stderr.contains("cannot join the cluster: process 0 at 127.0.0.1:"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
}

/// Whether some TCP connection on 127.0.0.1 has local port `port` and is established
/// (Linux's `/proc/net/tcp`): process 0 has accepted its peer.
fn connected_on(port: u16) -> bool {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    table.lines().skip(1).any(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let local_port = fields.get(1).and_then(|a| a.rsplit(':').next()).and_then(|p| u16::from_str_radix(p, 16).ok());
        local_port == Some(port) && fields.get(3) == Some(&"01")
    })
}

#[test]
fn a_peer_killed_mid_run_ends_the_other_process_with_an_error() {
    if !std::path::Path::new("/proc/net/tcp").exists() {
        return;
    }
    let dir = scratch_in("cluster", "killed");
    // A closure that takes a debug build several seconds: the peer dies while it runs.
    let mut edges = String::new();
    let mut state = 7u64;
    for _ in 0..6000 {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        edges += &format!("n{}\tn{}\n", (state >> 33) % 1500, (state >> 13) % 1500);
    }
    std::fs::write(dir.join("E.facts"), edges).unwrap();
    let program = dir.join("tc.dl");
    std::fs::write(&program, "T(X,Y) <- E(X,Y).\nT(X,Z) <- T(X,Y), E(Y,Z).\n?- T(X,Y).\n").unwrap();
    let hosts = hosts("killed-hosts", 2);
    let port: u16 =
        std::fs::read_to_string(&hosts).unwrap().lines().next().unwrap().rsplit(':').next().unwrap().parse().unwrap();
    let start = |process: &str| {
        Command::new(env!("CARGO_BIN_EXE_dlc"))
            .args([program.to_str().unwrap(), "--facts", dir.join("E.facts").to_str().unwrap()])
            .args(["--engine", "differential", "--processes", "2", "--process", process, "--hosts", &hosts])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let survivor = start("0");
    let mut victim = start("1");
    let begun = Instant::now();
    while !connected_on(port) && begun.elapsed() < BOUND {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    victim.kill().unwrap();
    victim.wait().unwrap();
    let mut survivor = Some(survivor);
    while survivor.as_mut().unwrap().try_wait().unwrap().is_none() {
        if begun.elapsed() > BOUND {
            survivor.as_mut().unwrap().kill().unwrap();
            panic!("process 0 went on past {BOUND:?} without its peer");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = survivor.take().unwrap().wait_with_output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("[E0027]") && stderr.contains("a peer process went away"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(output.stdout.is_empty(), "no answers after a lost peer");
}

/// Runs the Soufflé fixture `name` on a cluster of `processes` processes, each reading
/// its share of every input file and writing its own `-D` directory, and checks every
/// directory against the fixture's expected files; returns the processes' runs.
fn fixture_on_cluster(name: &str, processes: usize) -> Vec<Ran> {
    let fixture = format!("fixtures/souffle/{name}");
    let (program, facts) = (format!("{fixture}/prog.dl"), format!("{fixture}/in"));
    let dir = scratch_in("cluster", &format!("{name}-{processes}"));
    let outs: Vec<String> = (0..processes).map(|i| dir.join(format!("process{i}")).display().to_string()).collect();
    let per_process: Vec<Vec<&str>> = outs.iter().map(|out| vec!["-D", out.as_str()]).collect();
    let per_process: Vec<&[&str]> = per_process.iter().map(Vec::as_slice).collect();
    let hosts = hosts(&format!("{name}-{processes}-hosts"), processes);
    let runs = cluster(&[&program, "-F", &facts, "--no-timing"], &hosts, &per_process);
    let expected_dir = root().join(&fixture).join("expected");
    for (i, (run, out)) in runs.iter().zip(&outs).enumerate() {
        assert_eq!(run.code, 0, "process {i}: {}", run.stderr);
        assert!(run.stderr.contains(&format!("process {i} of {processes} read its share")), "{}", run.stderr);
        let mut files = 0;
        for entry in std::fs::read_dir(&expected_dir).unwrap() {
            let name = entry.unwrap().file_name();
            let expected = std::fs::read_to_string(expected_dir.join(&name)).unwrap();
            let written = std::fs::read_to_string(std::path::Path::new(out).join(&name)).unwrap();
            assert_eq!(written, expected, "{name:?} in {out}");
            files += 1;
        }
        assert_eq!(std::fs::read_dir(out).unwrap().count(), files, "no other file in {out}");
    }
    runs
}

#[test]
fn symbols_read_in_shares_get_one_id_everywhere_and_decode_to_the_expected_files() {
    // Texts with spaces, a constant of the program among them, an aggregate over symbols.
    let runs = fixture_on_cluster("reach_symbols", 2);
    // Together the processes read each byte of the facts file once.
    let read: Vec<(u64, u64)> = runs
        .iter()
        .map(|run| {
            // "... read its share of each facts file: 51 of 79 bytes in 1 file(s), ..."
            let line = run.stderr.lines().find(|l| l.contains(" bytes in ")).unwrap();
            let counts = line.split("facts file: ").nth(1).unwrap().split(" bytes in ").next().unwrap();
            let (share, total) = counts.split_once(" of ").unwrap();
            (share.parse().unwrap(), total.parse().unwrap())
        })
        .collect();
    let total = read[0].1;
    assert!(read.iter().all(|&(share, _)| share < total), "no process read the whole file: {read:?}");
    assert_eq!(read.iter().map(|r| r.0).sum::<u64>(), total, "{read:?}");
    fixture_on_cluster("degree_count", 2);
    fixture_on_cluster("degree_count", 3);
}

/// Soufflé's ways of reading a facts file hold in a cluster too: a file with a header line
/// or gzip content is read whole by every process, a nullary relation's one line by the
/// process whose share holds it, and quoted fields as one process alone reads them.
#[test]
fn souffle_input_formats_read_in_shares_give_the_expected_files() {
    for (name, processes) in [("extra_columns", 2), ("gzip_input", 2), ("nullary_lines", 3), ("quoted_fields", 2)] {
        fixture_on_cluster(name, processes);
    }
}

/// Writes a closure program over `E.facts` (tab-separated symbols) and an update file
/// in `dir`; returns the program's, the facts file's and the updates' paths.
fn closure_with_updates(dir: &std::path::Path) -> (String, String, String) {
    let mut edges = String::new();
    for i in 0..40 {
        edges += &format!("n{}\tn{}\nn{}\tn{}\n", i, (i * 7 + 3) % 40, i, (i * 11 + 5) % 40);
    }
    std::fs::write(dir.join("E.facts"), edges).unwrap();
    std::fs::write(dir.join("tc.dl"), "T(X,Y) <- E(X,Y).\nT(X,Z) <- T(X,Y), E(Y,Z).\n?- T(n3,Y).\n").unwrap();
    // Deletes of present and absent edges, new texts, a delete and insert of one edge.
    let updates = "-E(n3,n24).\n-E(n0,n3).\n-E(zz,n1).\n+E(n3,fresh).\n\n\
                   +E(fresh,n3).\n-E(n3,fresh).\n+E(n3,fresh).\n\n-E(n1,n10).\n+E(\"new one\",n0).\n";
    std::fs::write(dir.join("updates"), updates).unwrap();
    let path = |name: &str| dir.join(name).display().to_string();
    (path("tc.dl"), path("E.facts"), path("updates"))
}

#[test]
fn update_batches_on_shares_agree_with_the_native_engine() {
    let dir = scratch_in("cluster", "shared-updates");
    let (program, facts, updates) = closure_with_updates(&dir);
    // The answers after every batch, with the shares of the input in two processes. No
    // process holds the whole input, so none can tell that a change was a no-op: the
    // reports leave those lines out and are otherwise the native engine's.
    let args = [program.as_str(), "--facts", &facts, "--updates", &updates, "--no-timing"];
    let native = dlc(&args);
    let without_noops = |text: &str| -> String {
        comparable(text).lines().filter(|l| !l.starts_with("  no-op")).map(|l| format!("{l}\n")).collect()
    };
    assert!(native.stdout.contains("  no-op: -E(zz,n1) is not present"), "{}", native.stdout);
    let updates_hosts = hosts("shared-updates-hosts", 2);
    for (i, run) in cluster(&args, &updates_hosts, &[&[], &[]]).iter().enumerate() {
        assert_eq!(run.code, 0, "process {i}: {}", run.stderr);
        assert_eq!(comparable(&run.stdout), without_noops(&native.stdout), "process {i}");
    }
    // An output of an input relation: its file is read whole, as every process prints it.
    let souffle = dir.join("in");
    std::fs::create_dir_all(&souffle).unwrap();
    std::fs::copy(&facts, souffle.join("e.facts")).unwrap();
    let text = ".decl e(x:symbol, y:symbol)\n.input e\n.output e\n.decl t(x:symbol, y:symbol)\n.output t\n\
                t(x, y) :- e(x, y).\nt(x, z) :- t(x, y), e(y, z).\n";
    let program = dir.join("souffle.dl");
    std::fs::write(&program, text).unwrap();
    let (program, souffle) = (program.display().to_string(), souffle.display().to_string());
    same_as_native("shared-edb-hosts", &[&program, "-F", &souffle, "-D", "-", "--no-timing"]);
    // `--check`: every process reads the whole input, and the check passes.
    let hosts = hosts("shared-check-hosts", 2);
    let program = dir.join("tc.dl").display().to_string();
    for (i, run) in cluster(&[&program, "--facts", &facts, "--updates", &updates, "--check"], &hosts, &[&[], &[]])
        .iter()
        .enumerate()
    {
        assert_eq!(run.code, 0, "process {i}: {}", run.stderr);
        assert!(run.stderr.contains("read every facts file whole"), "{}", run.stderr);
    }
}

#[test]
fn processes_reading_files_of_different_lengths_refuse_each_other() {
    // The same command line in two directories whose `E.facts` differ in length: the
    // digest covers each input file's path and length, so both stop with E0027.
    let dir = scratch_in("cluster", "different-inputs");
    let hosts = hosts("different-inputs-hosts", 2);
    let program = dir.join("tc.dl");
    std::fs::write(&program, "T(X,Y) <- E(X,Y).\nT(X,Z) <- T(X,Y), E(Y,Z).\n?- T(X,Y).\n").unwrap();
    let children: Vec<Child> = ["a\tb\n", "a\tb\nb\tc\n"]
        .iter()
        .enumerate()
        .map(|(i, facts)| {
            let here = dir.join(format!("process{i}"));
            std::fs::create_dir_all(&here).unwrap();
            std::fs::write(here.join("E.facts"), facts).unwrap();
            Command::new(env!("CARGO_BIN_EXE_dlc"))
                .current_dir(&here)
                .args([program.to_str().unwrap(), "--facts", "E.facts", "--engine", "differential"])
                .args(["--processes", "2", "--process", &i.to_string(), "--hosts", &hosts, "--connect-timeout", "60"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(output.stdout.is_empty());
        assert!(stderr.contains("[E0027]") && stderr.contains("runs a different program, input or flags"), "{stderr}");
        assert!(stderr.contains("the path and length of every facts file"), "{stderr}");
    }
}
