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
    cluster_under(&[], args, hosts, per_process)
}

/// [`cluster`], each process started through the command `wrapper` (its program and
/// arguments, before dlc's path) when it is not empty.
fn cluster_under(wrapper: &[&str], args: &[&str], hosts: &str, per_process: &[&[&str]]) -> Vec<Ran> {
    let processes = per_process.len().to_string();
    let children: Vec<Child> = per_process
        .iter()
        .enumerate()
        .map(|(i, extra)| {
            let index = i.to_string();
            let mut command = match wrapper.split_first() {
                Some((program, wrapper_args)) => {
                    let mut command = Command::new(program);
                    command.args(wrapper_args).arg(env!("CARGO_BIN_EXE_dlc"));
                    command
                }
                None => Command::new(env!("CARGO_BIN_EXE_dlc")),
            };
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

/// Recursive `min` on two processes: shortest distances and least labels as natively,
/// before and after a batch whose deletion brings a worse distance back, and the files
/// of the Soufflé fixture; a cycle that improves a value stops both processes with E0047.
#[test]
fn recursive_min_has_the_native_answers_and_stops_an_improving_cycle() {
    same_as_native("lattices", &["fixtures/ok/recursive_min.dl", "--no-timing"]);
    let batch = ["--delete", "Edge(3,2,1)", "--insert", "Edge(4,5,1)", "--check"];
    same_as_native("lattice-batch", &[&["fixtures/ok/recursive_min.dl", "--no-timing"][..], &batch].concat());
    fixture_on_cluster("recursive_min", 2);
    let dir = scratch_in("cluster", "improving");
    let program = dir.join("negative.dl");
    std::fs::write(&program, "Start(1).\nDist(S, 0) <- Start(S)\nDist(Y, D) <- D = min D0 + W : { Dist(X, D0), Edge(X, Y, W) }\nEdge(1, 2, 1). Edge(2, 3, -2). Edge(3, 2, 1).\n?- Dist(X, D).\n").unwrap();
    let args = [program.to_str().unwrap(), "--color", "never"];
    for (i, run) in cluster(&args, &hosts("improving-hosts", 2), &[&[], &[]]).iter().enumerate() {
        assert_ne!(run.code, 0, "process {i}: {}", run.stdout);
        assert!(run.stderr.contains("[E0047] Error: relation `Dist` still improved a value"), "{}", run.stderr);
    }
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
    for run in &runs {
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    assert!(parts_are_the_files_of(&native_dir, &outs) > 0);
}

/// The name of process `process`'s part of the file `name` of `processes`.
fn part_name(name: &str, process: usize, processes: usize) -> String {
    let (stem, extension) = name.rsplit_once('.').unwrap();
    format!("{stem}.part-{}-of-{processes}.{extension}", process + 1)
}

/// Checks that the processes' directories `outs` (process order) hold, for every file of
/// `expected_dir`, one part each, and nothing else; that every part is in the file's
/// order, that no row is in two parts, and that together they hold the file's rows (so
/// merging the parts gives the file; a header line starts every part). Returns the
/// number of files.
fn parts_are_the_files_of(expected_dir: &std::path::Path, outs: &[String]) -> usize {
    let mut files = 0;
    for entry in std::fs::read_dir(expected_dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let expected = std::fs::read_to_string(expected_dir.join(&name)).unwrap();
        let parts: Vec<String> = (0..outs.len())
            .map(|i| {
                let path = std::path::Path::new(&outs[i]).join(part_name(&name, i, outs.len()));
                std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            })
            .collect();
        assert_parts_merge_to(&expected, &parts, &name);
        files += 1;
    }
    for out in outs {
        assert_eq!(std::fs::read_dir(out).unwrap().count(), files, "no other file in {out}");
    }
    files
}

/// Checks that `parts` merge to `expected`: each part's lines are in `expected`'s order,
/// and together they are its lines, each once (a header line that starts `expected` and
/// every part counts once).
fn assert_parts_merge_to(expected: &str, parts: &[String], what: &str) {
    let lines: Vec<&str> = expected.lines().collect();
    let first = lines.first().copied();
    let header = first.is_some() && parts.iter().all(|p| p.lines().next() == first);
    for (i, part) in parts.iter().enumerate() {
        let mut at = lines.iter();
        for line in part.lines() {
            assert!(at.any(|l| *l == line), "{what}, part {i}: `{line}` is not in the file's order");
        }
    }
    let mut together: Vec<&str> = parts.iter().flat_map(|p| p.lines().skip(usize::from(header))).collect();
    let mut rows: Vec<&str> = lines.iter().copied().skip(usize::from(header)).collect();
    together.sort_unstable();
    rows.sort_unstable();
    assert_eq!(together, rows, "{what}: the parts together are the file");
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
    for (i, run) in runs.iter().enumerate() {
        assert_eq!(run.code, 0, "process {i}: {}", run.stderr);
        assert!(run.stderr.contains(&format!("process {i} of {processes} read its share")), "{}", run.stderr);
    }
    parts_are_the_files_of(&expected_dir, &outs);
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
    // An output of an input relation: its file is read whole, and each process prints
    // the part its workers own.
    let souffle = dir.join("in");
    std::fs::create_dir_all(&souffle).unwrap();
    std::fs::copy(&facts, souffle.join("e.facts")).unwrap();
    let text = ".decl e(x:symbol, y:symbol)\n.input e\n.output e\n.decl t(x:symbol, y:symbol)\n.output t\n\
                t(x, y) :- e(x, y).\nt(x, z) :- t(x, y), e(y, z).\n";
    let program = dir.join("souffle.dl");
    std::fs::write(&program, text).unwrap();
    let (program, souffle) = (program.display().to_string(), souffle.display().to_string());
    // Each process prints its part of every relation, framed as the native engine frames
    // the whole; the parts merge to the native engine's rows.
    let args = [program.as_str(), "-F", &souffle, "-D", "-", "--no-timing"];
    let native = dlc(&args);
    assert_eq!(native.code, 0, "{}", native.stderr);
    let runs = cluster(&args, &hosts("shared-edb-hosts", 2), &[&[], &[]]);
    let printed: Vec<Vec<(String, String)>> = runs.iter().map(|run| sections(&run.stdout)).collect();
    for (name, rows) in sections(&native.stdout) {
        let parts: Vec<String> = printed
            .iter()
            .map(|sections| sections.iter().find(|(n, _)| *n == name).map(|(_, rows)| rows.clone()).unwrap())
            .collect();
        assert!(parts.iter().all(|part| part.len() < rows.len()), "{name}: every process printed a part");
        assert_parts_merge_to(&rows, &parts, &name);
    }
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

/// The relations `-D -` printed: each one's name and the lines between its frame's `=`
/// lines (its header, then its rows).
fn sections(text: &str) -> Vec<(String, String)> {
    let mut sections = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line != "---------------" {
            continue;
        }
        let name = lines.next().unwrap().to_string();
        let mut rows = String::new();
        for line in lines.by_ref().skip_while(|l| *l != "===============").skip(1) {
            if line == "===============" {
                break;
            }
            rows += &format!("{line}\n");
        }
        sections.push((name, rows));
    }
    sections
}

/// A Soufflé closure over `e` in `dir` (its program, input directory and an update file
/// of `e`'s changes): `t` is written and its size printed.
fn souffle_closure(dir: &std::path::Path, nodes: u64, edges: u64) -> (String, String, String) {
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    // A fixed pseudo-random graph, the same on every run.
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % nodes
    };
    let text: String = (0..edges).map(|_| format!("{}\t{}\n", next(), next())).collect();
    std::fs::write(input.join("e.facts"), text).unwrap();
    let program = ".decl e(x:number, y:number)\n.input e\n.decl t(x:number, y:number)\n.output t\n.printsize t\n\
                   t(x, y) :- e(x, y).\nt(x, z) :- t(x, y), e(y, z).\n";
    std::fs::write(dir.join("tc.dl"), program).unwrap();
    let updates = format!("-e({}, {}).\n+e(0, 1).\n+e(1, 0).\n\n-e(0, 1).\n+e({}, 0).\n", next(), next(), nodes + 1);
    std::fs::write(dir.join("updates"), updates).unwrap();
    let path = |name: &str| dir.join(name).display().to_string();
    (path("tc.dl"), path("in"), path("updates"))
}

/// A Soufflé program's outputs on a cluster: each process writes its part of each
/// relation, the batch reports and `.printsize` give the counts over every process (the
/// one-process run's, but the no-op lines no process can tell), and the directory of
/// the parts reads back with `-F` as the whole relation.
#[test]
fn each_process_writes_its_part_and_the_counts_are_of_the_whole() {
    let dir = scratch_in("cluster", "parts");
    let (program, input, updates) = souffle_closure(&dir, 60, 150);
    let whole = dir.join("whole").display().to_string();
    let args = [program.as_str(), "-F", &input, "--updates", &updates, "--no-timing", "--engine", "differential"];
    let one = dlc(&[&args[..], &["-D", &whole]].concat());
    assert_eq!(one.code, 0, "{}", one.stderr);
    let outs: Vec<String> = (0..2).map(|i| dir.join(format!("process{i}")).display().to_string()).collect();
    let runs = cluster(&args[..6], &hosts("parts-hosts", 2), &[&["-D", &outs[0]], &["-D", &outs[1]]]);
    let without_noops = |text: &str| -> String {
        text.lines().filter(|l| !l.starts_with("  no-op")).map(|l| format!("{l}\n")).collect()
    };
    for (i, run) in runs.iter().enumerate() {
        assert_eq!(run.code, 0, "process {i}: {}", run.stderr);
        assert_eq!(without_noops(&run.stdout), without_noops(&one.stdout), "process {i}");
        assert!(run.stderr.contains(&format!("t.part-{}-of-2.csv", i + 1)), "{}", run.stderr);
    }
    assert!(one.stdout.contains("t\t"), "{}", one.stdout);
    assert_eq!(parts_are_the_files_of(std::path::Path::new(&whole), &outs), 1);
    // The parts in one directory read back as the relation: its size is the whole's.
    let back = dir.join("back");
    std::fs::create_dir_all(&back).unwrap();
    for (i, out) in outs.iter().enumerate() {
        let name = part_name("t.csv", i, 2);
        std::fs::copy(std::path::Path::new(out).join(&name), back.join(&name)).unwrap();
    }
    let reader = dir.join("read.dl");
    std::fs::write(&reader, ".decl t(x:number, y:number)\n.input t(filename=\"t.csv\")\n.printsize t\n").unwrap();
    let read = dlc(&[reader.to_str().unwrap(), "-F", back.to_str().unwrap()]);
    assert_eq!(read.code, 0, "{}", read.stderr);
    let size = one.stdout.lines().rfind(|l| l.starts_with("t\t")).unwrap();
    assert_eq!(read.stdout.trim_end(), size, "{}", read.stderr);
}

/// Batches of one derived row each: the row is one process's, so in every batch one
/// process has no part of the count and reports the other's, and a process that lost
/// or misplaced the other's part (one that arrived while it was still finishing the
/// epoch before) reports 0 instead of 1. Many batches, for many chances of that.
#[test]
fn a_batch_whose_rows_another_process_holds_counts_them() {
    let dir = scratch_in("cluster", "others-rows");
    let (program, input, _) = souffle_closure(&dir, 60, 150);
    // Fresh nodes: each edge adds one row of `t`, and taking it away removes that row.
    let inserts = (0..12).map(|i| format!("+e({}, {}).\n", 1000 + i, 2000 + i));
    let deletes = (0..4).map(|i| format!("-e({}, {}).\n", 1000 + i, 2000 + i));
    let updates = dir.join("one-row-batches");
    std::fs::write(&updates, inserts.chain(deletes).collect::<Vec<_>>().join("\n")).unwrap();
    let updates = updates.display().to_string();
    let args = [program.as_str(), "-F", &input, "--updates", &updates, "--no-timing"];
    let whole = dir.join("whole").display().to_string();
    let one = dlc(&[&args[..], &["--engine", "differential", "-D", &whole]].concat());
    assert_eq!(one.code, 0, "{}", one.stderr);
    assert_eq!(one.stdout.matches("t: 0 removed, 1 added").count(), 12, "{}", one.stdout);
    assert_eq!(one.stdout.matches("t: 1 removed, 0 added").count(), 4, "{}", one.stdout);
    let counts = |text: &str| -> String {
        text.lines().filter(|l| l.starts_with("  t: ") || l.starts_with("t\t")).map(|l| format!("{l}\n")).collect()
    };
    let outs: Vec<String> = (0..2).map(|i| dir.join(format!("process{i}")).display().to_string()).collect();
    let runs = cluster(&args, &hosts("others-rows-hosts", 2), &[&["-D", &outs[0]], &["-D", &outs[1]]]);
    for (i, run) in runs.iter().enumerate() {
        assert_eq!(run.code, 0, "process {i}: {}", run.stderr);
        assert_eq!(counts(&run.stdout), counts(&one.stdout), "process {i}");
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

/// The most writable memory (`RLIMIT_DATA`, which counts the heap and every thread's
/// stack) each process of [`a_result_no_one_process_could_hold_is_computed_by_two`] may
/// map: a one-process run of its closure needs about 265 MiB of it in a debug build,
/// each of two processes about 175 MiB.
const DATA_LIMIT: u64 = 216 << 20;

/// A closure whose dataflow and result outgrow the memory limit of one process runs on
/// two processes under that limit each: each holds and writes only its part, and the
/// parts merge to the native engine's file.
#[test]
fn a_result_no_one_process_could_hold_is_computed_by_two() {
    if Command::new("prlimit").arg("--version").output().is_err() {
        eprintln!("skipped: `prlimit` (util-linux) is absent, so no memory limit can be set per process");
        return;
    }
    let dir = scratch_in("cluster", "memory-limit");
    // 1,000 nodes and 5,000 edges: a closure of about 980,000 rows.
    let (program, input, _) = souffle_closure(&dir, 1_000, 5_000);
    let native_dir = dir.join("native");
    let native = dlc(&[&program, "-F", &input, "-D", native_dir.to_str().unwrap(), "--no-timing"]);
    assert_eq!(native.code, 0, "{}", native.stderr);
    let limit = format!("--data={DATA_LIMIT}");
    let wrapper = ["prlimit", limit.as_str(), "--"];
    let one = Command::new(wrapper[0])
        .args(&wrapper[1..])
        .arg(env!("CARGO_BIN_EXE_dlc"))
        .args([&program, "-F", &input, "-D", dir.join("one").to_str().unwrap(), "--engine", "differential"])
        .output()
        .unwrap();
    assert!(!one.status.success(), "one process ran within the limit: the test proves nothing");
    let outs: Vec<String> = (0..2).map(|i| dir.join(format!("process{i}")).display().to_string()).collect();
    let hosts = hosts("memory-limit-hosts", 2);
    let runs = cluster_under(&wrapper, &[&program, "-F", &input], &hosts, &[&["-D", &outs[0]], &["-D", &outs[1]]]);
    for (i, run) in runs.iter().enumerate() {
        assert_eq!(run.code, 0, "process {i} under the limit: {}", run.stderr);
    }
    assert_eq!(parts_are_the_files_of(&native_dir, &outs), 1);
}
