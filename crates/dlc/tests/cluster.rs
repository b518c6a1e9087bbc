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
