//! The dataflow derives what the native engine derives, from scratch and after batches,
//! with one and with several workers.

use super::*;
use exec::{Database, Maintained};
use ir::Update;
use plan::testing::program;
use std::collections::BTreeSet;

type Facts = BTreeSet<(PredId, Vec<u32>)>;

/// Atoms as a relation name and its values' texts.
type Atoms<'a> = Vec<(&'a str, Vec<&'a str>)>;

/// A batch: the atoms to delete, then those to insert.
type Batch<'a> = (Atoms<'a>, Atoms<'a>);

/// Every derived relation's rows as the dataflow holds them after the batches so far.
#[derive(Default)]
struct Mirror(BTreeSet<(PredId, Vec<u32>)>);

impl Mirror {
    fn absorb(&mut self, applied: &Applied) {
        for (pred, row) in applied.derived_removed.iter().flat_map(|(p, ts)| ts.iter().map(move |t| (p, t))) {
            assert!(self.0.remove(&(*pred, row.to_vec())), "removed a row it did not hold");
        }
        for (pred, row) in applied.derived_added.iter().flat_map(|(p, ts)| ts.iter().map(move |t| (p, t))) {
            assert!(self.0.insert((*pred, row.to_vec())), "added a row it held");
        }
    }
}

fn derived(program: &Program, db: &Database) -> BTreeSet<(PredId, Vec<u32>)> {
    let heads: BTreeSet<PredId> = program.rules.iter().map(|r| r.head.pred).collect();
    heads.into_iter().flat_map(|p| db.sorted_tuples(p).into_iter().map(move |t| (p, t))).collect()
}

fn as_slices(facts: &[(PredId, Vec<u32>)]) -> impl Iterator<Item = (PredId, &[u32])> {
    facts.iter().map(|(p, t)| (*p, t.as_slice()))
}

/// Runs `text` on the dataflow and on the native engine over its inline facts, then the
/// batches (`(deletes, inserts)` of `E`-atoms as value lists), comparing after each.
fn agree(text: &str, batches: &[Batch<'_>], workers: usize) {
    agree_as(text, batches, Options { workers, cluster: None });
}

/// The program of `text` in dlc's syntax (negation, comparisons and arithmetic
/// included), or in Soufflé's when it declares its relations (for `unsigned` columns).
fn parse(text: &str) -> Program {
    let (program, diagnostics) = match syntax::souffle::looks_like_souffle(text) {
        true => {
            let (program, diagnostics) =
                syntax::souffle::parse_program(text, ir::FileId(0), &mut syntax::souffle::NoIncludes);
            (program.map(|p| p.program), diagnostics)
        }
        false => syntax::parse_program(text, ir::FileId(0)),
    };
    let program = program.unwrap_or_else(|| panic!("{diagnostics:?}\n{text}"));
    assert!(ir::validate(&program).is_empty(), "{text}");
    program
}

/// [`agree`] for one process of a cluster (or a process alone).
fn agree_as(text: &str, batches: &[Batch<'_>], options: Options) {
    let mut p = parse(text);
    let plan = plan::plan_program(&p);
    let facts: Facts = p.facts.iter().map(|f| (f.pred, f.values.clone())).collect();
    let facts: Vec<(PredId, Vec<u32>)> = facts.into_iter().collect();
    let mut flow = Flow::start(&plan, &p, options).unwrap();
    let mut mirror = Mirror::default();
    mirror.absorb(&flow.apply([], as_slices(&facts)).unwrap());
    let mut native = Maintained::new(plan.clone(), &p, Database::from_facts(&p, &p.facts));
    assert_eq!(mirror.0, derived(&p, native.db()), "{text}");
    for (deletes, inserts) in batches {
        let mut read = |atoms: &Atoms<'_>| -> Vec<(PredId, Vec<u32>)> {
            let mut fact = |(name, args): &(&str, Vec<&str>)| {
                let pred = p.lookup_source(name).unwrap();
                let types = p.pred(pred).types.clone();
                (pred, args.iter().zip(types).map(|(arg, ty)| p.encode(ty, arg).unwrap()).collect())
            };
            atoms.iter().map(&mut fact).collect()
        };
        let update = Update { deletes: read(deletes), inserts: read(inserts) };
        let applied = flow.apply(as_slices(&update.deletes), as_slices(&update.inserts)).unwrap();
        mirror.absorb(&applied);
        let report = native.apply(&update);
        assert_eq!(mirror.0, derived(&p, native.db()), "{text} after {:?}", update);
        // The same input changes, in the order each lists them.
        let rows = |v: &[(PredId, Row)]| v.iter().map(|(p, r)| (*p, r.values().to_vec())).collect::<BTreeSet<_>>();
        let sorted = |v: &[(PredId, Vec<u32>)]| v.iter().cloned().collect::<BTreeSet<_>>();
        assert_eq!(rows(&applied.inserted), sorted(&report.edb_inserted));
        assert_eq!(rows(&applied.deleted), sorted(&report.edb_deleted));
    }
}

const CLOSURE: &str = "E(a,b).\nE(b,c).\nE(c,d).\nE(d,b).\nT(X,Y) <- E(X,Y)\nT(X,Z) <- T(X,Y), E(Y,Z)";

#[test]
fn closure_with_a_cycle_agrees_through_deletes_and_inserts() {
    let batches = vec![
        (vec![("E", vec!["d", "b"])], vec![]),
        (vec![], vec![("E", vec!["d", "a"]), ("E", vec!["d", "a"])]),
        (vec![("E", vec!["a", "b"]), ("E", vec!["x", "y"])], vec![("E", vec!["a", "c"])]),
    ];
    for workers in [1, 2, 3] {
        agree(CLOSURE, &batches, workers);
    }
}

/// `processes` cluster options on free ports of 127.0.0.1, differing in `salt` when
/// `salts` says so.
fn local_cluster(processes: usize, salts: &[u64]) -> Vec<Cluster> {
    let ports: Vec<std::net::TcpListener> =
        (0..processes).map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    let hosts: Vec<String> = ports.iter().map(|l| l.local_addr().unwrap().to_string()).collect();
    drop(ports);
    (0..processes)
        .map(|process| Cluster {
            process,
            hosts: hosts.clone(),
            timeout: std::time::Duration::from_secs(20),
            digest: salts[process % salts.len()],
        })
        .collect()
}

#[test]
fn two_processes_agree_through_deletes_and_inserts() {
    let batches = vec![
        (vec![("E", vec!["d", "b"])], vec![]),
        (vec![], vec![("E", vec!["d", "a"]), ("E", vec!["d", "a"])]),
        (vec![("E", vec!["a", "b"])], vec![("E", vec!["a", "c"]), ("E", vec!["x", "y"])]),
    ];
    let runs: Vec<_> = local_cluster(2, &[7])
        .into_iter()
        .map(|cluster| {
            let batches = batches.clone();
            std::thread::spawn(move || {
                let connection = Connection::open(&cluster, 2).unwrap();
                agree_as(CLOSURE, &batches, Options { workers: 2, cluster: Some(connection) })
            })
        })
        .collect();
    for run in runs {
        run.join().unwrap();
    }
}

/// With partitioned results each process reports the rows its workers hold: the parts
/// are disjoint and together the native result, and the sum over the processes of each
/// part's size is the whole's, on every process.
#[test]
fn partitioned_processes_hold_disjoint_parts_that_sum_to_the_whole() {
    let p = parse(CLOSURE);
    let native = Maintained::new(plan::plan_program(&p), &p, Database::from_facts(&p, &p.facts));
    let whole = derived(&p, native.db());
    let runs: Vec<_> = local_cluster(2, &[11])
        .into_iter()
        .map(|cluster| {
            std::thread::spawn(move || {
                let p = parse(CLOSURE);
                let facts: Vec<(PredId, Vec<u32>)> = p.facts.iter().map(|f| (f.pred, f.values.clone())).collect();
                let connection = Connection::open(&cluster, 2).unwrap().partition_results();
                let options = Options { workers: 2, cluster: Some(connection) };
                let mut flow = Flow::start(&plan::plan_program(&p), &p, options).unwrap();
                let mut part = Mirror::default();
                part.absorb(&flow.apply([], as_slices(&facts)).unwrap());
                let sums = flow.sum_over_processes(&[part.0.len(), 1]).unwrap();
                (part.0, sums)
            })
        })
        .collect();
    let parts: Vec<(Facts, Vec<usize>)> = runs.into_iter().map(|run| run.join().unwrap()).collect();
    assert!(parts.iter().all(|(part, _)| part.len() < whole.len()), "{parts:?}");
    assert!(parts[0].0.is_disjoint(&parts[1].0));
    assert_eq!(parts[0].0.union(&parts[1].0).cloned().collect::<Facts>(), whole);
    for (_, sums) in &parts {
        assert_eq!(sums, &[whole.len(), 2]);
    }
}

/// A count one process has no part of is the other's, in every epoch: a process that
/// finishes an epoch first goes on to the next and sends its parts while the other is
/// still catching up with the one before, and those parts count in the epoch they were
/// sent for, not in the one that was then ending (nor are they lost with a batch's
/// report).
#[test]
fn sums_over_processes_count_each_part_in_its_own_epoch() {
    const ROUNDS: usize = 60;
    let runs: Vec<_> = local_cluster(2, &[13])
        .into_iter()
        .map(|cluster| {
            std::thread::spawn(move || {
                let p = parse(CLOSURE);
                let facts: Vec<(PredId, Vec<u32>)> = p.facts.iter().map(|f| (f.pred, f.values.clone())).collect();
                let connection = Connection::open(&cluster, 1).unwrap().partition_results();
                let options = Options { workers: 1, cluster: Some(connection) };
                let mut flow = Flow::start(&plan::plan_program(&p), &p, options).unwrap();
                flow.apply([], as_slices(&facts)).unwrap();
                let mut sums = Vec::new();
                for round in 0..ROUNDS {
                    // Every other epoch changes the input, as a batch between two sums does:
                    // a fact deleted, then inserted again.
                    let batch = &facts[(round / 2) % facts.len()..][..1];
                    match round % 2 {
                        0 => flow.apply(as_slices(batch), []).unwrap(),
                        _ => flow.apply([], as_slices(batch)).unwrap(),
                    };
                    // Process 1 alone has a part of the first count, process 0 alone of the
                    // second; the third is the round, from both.
                    let parts = match cluster.process {
                        0 => [0, 1 + round, round],
                        _ => [2 + round, 0, round],
                    };
                    sums.push(flow.sum_over_processes(&parts).unwrap());
                }
                sums
            })
        })
        .collect();
    for (process, run) in runs.into_iter().enumerate() {
        let sums = run.join().unwrap();
        for (round, sum) in sums.iter().enumerate() {
            assert_eq!(sum, &[2 + round, 1 + round, 2 * round], "process {process}, round {round}");
        }
    }
}

#[test]
fn processes_that_disagree_refuse_each_other() {
    let runs: Vec<_> = local_cluster(2, &[1, 2])
        .into_iter()
        .map(|cluster| std::thread::spawn(move || Connection::open(&cluster, 1).err()))
        .collect();
    for run in runs {
        let error = run.join().unwrap().expect("a process refused");
        assert!(matches!(&error, Error::Cluster(m) if m.contains("runs a different program")), "{error:?}");
    }
}

#[test]
fn an_unreachable_peer_is_an_error_once_the_timeout_passes() {
    let mut cluster = local_cluster(2, &[0]).pop().unwrap();
    cluster.timeout = std::time::Duration::from_millis(200);
    let error = Connection::open(&cluster, 1).unwrap_err();
    assert!(matches!(&error, Error::Cluster(m) if m.starts_with("process 0 at 127.0.0.1:")), "{error:?}");
}

#[test]
fn constants_repeats_mutual_recursion_and_bodiless_rules_agree() {
    let text = "E(a,b).\nE(b,b).\nE(b,c).\nF(c).\n\
        P(X) <- E(X,X)\n\
        Q(X,c) <- E(X,Y), F(Y)\n\
        Even(a) <-\n\
        Odd(Y) <- Even(X), E(X,Y)\n\
        Even(Y) <- Odd(X), E(X,Y)\n\
        Both(X) <- Odd(X), Even(X), P(X)\n\
        Z() <- E(b,Y), F(Y)\n\
        Cross(X,Y) <- F(X), P(Y)";
    let batches = vec![
        (vec![("E", vec!["b", "b"])], vec![("E", vec!["c", "c"])]),
        (vec![("F", vec!["c"])], vec![("F", vec!["b"])]),
    ];
    for workers in [1, 2] {
        agree(text, &batches, workers);
    }
}

#[test]
fn set_semantics_hold_before_the_dataflow() {
    let p = program(CLOSURE);
    let plan = plan::plan_program(&p);
    let mut flow = Flow::start(&plan, &p, Options { workers: 2, cluster: None }).unwrap();
    let e = p.lookup_source("E").unwrap();
    let t = p.lookup_source("T").unwrap();
    let applied = flow.apply([(e, &[7u32, 8][..])], [(e, &[1u32, 2][..]), (e, &[1, 2]), (t, &[1, 1])]).unwrap();
    assert_eq!(applied.noop_deletes, vec![(e, vec![7, 8])]);
    assert_eq!(applied.noop_inserts, vec![(e, vec![1, 2]), (t, vec![1, 1])]);
    assert_eq!(applied.inserted, vec![(e, Row::new(&[1, 2]))]);
    assert_eq!(ir::one_per_fact(&applied.derived_added), vec![(t, vec![vec![1, 2]])]);
    let applied = flow.apply([(e, &[1u32, 2][..]), (e, &[1, 2])], []).unwrap();
    assert_eq!(applied.deleted.len(), 1);
    assert_eq!(applied.noop_deletes.len(), 1);
    assert_eq!(ir::one_per_fact(&applied.derived_removed), vec![(t, vec![vec![1, 2]])]);
}

#[test]
fn a_relation_wider_than_a_row_is_refused_before_starting() {
    let p = program("W(A,B,C,D,E,F,G,H,I) <- V(A,B,C,D,E,F,G,H,I)");
    let plan = plan::plan_program(&p);
    let error = Flow::start(&plan, &p, Options { workers: 1, cluster: None }).unwrap_err();
    assert_eq!(error.message(&p), "the differential engine holds at most 8 values per row; relation `W` needs 9");
    // Live variables are counted after each join: nine variables never live at once here.
    let p = program("N(A,I) <- V(A,B,C,D,E,F,G,H), U(H,I)");
    assert!(Flow::start(&plan::plan_program(&p), &p, Options { workers: 1, cluster: None }).is_ok());
    let p = program("N(A,B,C,D,E,F,G,I) <- V(A,B,C,D,E,F,G,H), U(H,I,J), X(J)");
    let error = Flow::start(&plan::plan_program(&p), &p, Options { workers: 1, cluster: None }).unwrap_err();
    assert!(matches!(error, Error::TooWide { rule: Some(_), width: 9, .. }), "{error:?}");
}

#[test]
fn an_anti_join_inside_a_recursive_stratum_agrees() {
    // `Blocked` comes from a lower stratum; `T` recurses through the anti-join. Deleting
    // a blocked fact makes paths appear, inserting one makes them go.
    let text = "E(a,b).\nE(b,c).\nE(c,d).\nE(d,a).\nB(c).\n\
        Blocked(X) <- B(X)\n\
        T(X,Y) <- E(X,Y), !Blocked(Y)\n\
        T(X,Z) <- T(X,Y), E(Y,Z), !Blocked(Z)";
    let batches = vec![
        (vec![("B", vec!["c"])], vec![]),
        (vec![], vec![("B", vec!["a"])]),
        (vec![("E", vec!["d", "a"])], vec![("B", vec!["c"]), ("E", vec!["b", "d"])]),
    ];
    for workers in [1, 2] {
        agree(text, &batches, workers);
    }
}

#[test]
fn a_negated_atom_with_wildcards_or_no_variables_agrees() {
    // `!E(Y,_)`: Y has no outgoing edge, whatever its target; several edges out of one
    // node block it once. `!Stop`, `!F(a)`: no variable at all.
    let text = "E(a,b).\nE(b,c).\nE(b,d).\nF(b).\n\
        Sink(Y) <- E(X,Y), !E(Y,_)\n\
        Go(X) <- E(X,Y), !Stop\n\
        NoA(X) <- F(X), !F(a)";
    let batches = vec![
        (vec![("E", vec!["b", "c"])], vec![("Stop", vec![])]),
        (vec![("E", vec!["b", "d"])], vec![("F", vec!["a"])]),
        (vec![("Stop", vec![]), ("F", vec!["a"])], vec![("E", vec!["d", "a"])]),
    ];
    for workers in [1, 2] {
        agree(text, &batches, workers);
    }
}

#[test]
fn comparisons_and_assignments_agree() {
    // Numbers ordered as signed integers (`-1 < 1`), `!=` and `=` by identity, an
    // assignment from a variable and one from a constant, in a recursive rule too.
    let text = "S(a,-1).\nS(b,1).\nS(c,7).\nS(d,7).\nL(1,2).\nL(2,3).\nL(3,4).\n\
        Big(X,M) <- S(X,N), N >= 1, N != 3, M = N\n\
        Tagged(X,T) <- S(X,_), T = 42\n\
        Same(X,Y) <- S(X,N), S(Y,M), N = M, X != Y\n\
        Below(X) <- S(X,N), N < 1\n\
        Up(X,Y) <- L(X,Y), X < 3\n\
        Up(X,Z) <- Up(X,Y), L(Y,Z), Y < Z, Z <= 3\n\
        Seven(N) <- N = 7\n\
        Never(N) <- N = 7, 1 > 2";
    let batches = vec![
        (vec![("S", vec!["c", "7"])], vec![("S", vec!["e", "3"]), ("L", vec!["0", "1"])]),
        (vec![("L", vec!["2", "3"])], vec![("S", vec!["f", "-5"])]),
    ];
    for workers in [1, 2] {
        agree(text, &batches, workers);
    }
}

/// The derived rows of `text`'s relation `name` after its inline facts, on `workers`.
fn rows_of(text: &str, name: &str, workers: usize) -> BTreeSet<Vec<i64>> {
    let p = parse(text);
    let facts: Vec<(PredId, Vec<u32>)> = p.facts.iter().map(|f| (f.pred, f.values.clone())).collect();
    let mut flow = Flow::start(&plan::plan_program(&p), &p, Options { workers, cluster: None }).unwrap();
    let applied = flow.apply([], as_slices(&facts)).unwrap();
    let pred = p.lookup_source(name).unwrap();
    let types = p.pred(pred).types.clone();
    let number = |(v, ty): (&u32, &ir::ValueType)| match ty {
        ir::ValueType::Number => i64::from(*v as i32),
        _ => i64::from(*v),
    };
    applied
        .derived_added
        .iter()
        .filter(|(q, _)| *q == pred)
        .flat_map(|(_, rows)| rows.iter())
        .map(|row| row.iter().zip(&types).map(number).collect())
        .collect()
}

#[test]
fn a_recursive_counter_bounded_by_a_comparison_agrees() {
    // `Count` computes its next value in a recursive stratum and stops where the
    // comparison fails; `Even` reads a computed column in a later comparison.
    let text = "Start(0).\nStep(3).\n\
        Count(N) <- Start(N)\n\
        Count(M) <- Count(N), Step(S), N < 10, M = N + S\n\
        Even(N, H) <- Count(N), H = N / 2, H * 2 = N\n\
        Next(N, N + 1) <- Count(N), !Count(N + 1)";
    for workers in [1, 2] {
        assert_eq!(rows_of(text, "Count", workers), [0, 3, 6, 9, 12].map(|n| vec![n]).into_iter().collect());
        assert_eq!(rows_of(text, "Even", workers), [[0, 0], [6, 3], [12, 6]].map(Vec::from).into_iter().collect());
    }
    let batches = vec![
        (vec![("Step", vec!["3"])], vec![("Step", vec!["4"])]),
        (vec![("Start", vec!["0"])], vec![("Start", vec!["-5"]), ("Step", vec!["5"])]),
        (vec![("Step", vec!["4"]), ("Step", vec!["5"])], vec![("Step", vec!["1"])]),
    ];
    for workers in [1, 2] {
        agree(text, &batches, workers);
    }
}

#[test]
fn a_division_by_zero_derives_nothing_for_that_binding() {
    // `10 / 0`, `10 mod 0` and `-2147483648 / -1` have no value: those bindings derive
    // nothing, in assignments and in comparisons alike; division truncates towards
    // zero and `+` wraps around.
    let text = "D(10,0).\nD(10,3).\nD(-2147483648,-1).\nD(-7,2).\nD(2147483647,1).\n\
        Quotient(X,Y,Q) <- D(X,Y), Q = X / Y\n\
        Remainder(X,Y,R) <- D(X,Y), R = X mod Y\n\
        Above(X,Y) <- D(X,Y), X / Y > 2\n\
        Wrapped(X,W) <- D(X,1), W = X + 1";
    let quotients = [[10, 3, 3], [-7, 2, -3], [2147483647, 1, 2147483647]];
    let remainders = [[10, 3, 1], [-7, 2, -1], [2147483647, 1, 0]];
    for workers in [1, 2] {
        assert_eq!(rows_of(text, "Quotient", workers), quotients.map(Vec::from).into_iter().collect());
        assert_eq!(rows_of(text, "Remainder", workers), remainders.map(Vec::from).into_iter().collect());
        assert_eq!(rows_of(text, "Above", workers), [[10, 3], [2147483647, 1]].map(Vec::from).into_iter().collect());
        assert_eq!(rows_of(text, "Wrapped", workers), [vec![2147483647, -2147483648]].into_iter().collect());
    }
    let batches = vec![
        (vec![("D", vec!["10", "3"])], vec![("D", vec!["0", "0"]), ("D", vec!["9", "-1"])]),
        (vec![("D", vec!["10", "0"])], vec![("D", vec!["10", "3"])]),
    ];
    for workers in [1, 2] {
        agree(text, &batches, workers);
    }
}

#[test]
fn unsigned_values_compute_and_order_as_unsigned() {
    // 3000000000 is above 5 as an unsigned (below it as a signed number), and the
    // largest unsigned plus one wraps to 0, which is not above it.
    let text = ".decl U(x:unsigned)\n.decl Big(x:unsigned)\n.decl Up(x:unsigned, y:unsigned)\n\
        U(3000000000).\nU(5).\nU(4294967295).\n\
        Big(x) :- U(x), x > 5.\n\
        Up(x, y) :- U(x), y = x + 1, y > x.\n";
    for workers in [1, 2] {
        assert_eq!(rows_of(text, "Big", workers), [vec![3000000000], vec![4294967295]].into_iter().collect());
        assert_eq!(rows_of(text, "Up", workers), [vec![5, 6], vec![3000000000, 3000000001]].into_iter().collect());
    }
    let batches = vec![(vec![("U", vec!["5"])], vec![("U", vec!["2147483648"]), ("U", vec!["0"])])];
    for workers in [1, 2] {
        agree(text, &batches, workers);
    }
}

#[test]
fn expressions_of_constants_are_computed_when_the_dataflow_is_planned() {
    // `W = Z * 3` with `Z = 2` is the constant 6: the scan of `V` selects it. `Z / 0`
    // has no value, so that rule derives nothing; `Y = Z + 1` needs no column.
    let text = "V(6).\nV(7).\nE(6,a).\nE(7,b).\n\
        Six(Y) <- Z = 2, W = Z * 3, V(W), E(W,Y)\n\
        Never(X) <- V(X), Z = 5, Y = Z / 0\n\
        Next(X,Y) <- V(X), Z = 5, Y = Z + 1";
    for workers in [1, 2] {
        let p = parse(text);
        let facts: Vec<(PredId, Vec<u32>)> = p.facts.iter().map(|f| (f.pred, f.values.clone())).collect();
        let mut flow = Flow::start(&plan::plan_program(&p), &p, Options { workers, cluster: None }).unwrap();
        let applied = flow.apply([], as_slices(&facts)).unwrap();
        let never = p.lookup_source("Never").unwrap();
        assert!(applied.derived_added.iter().all(|(q, _)| *q != never));
        agree(text, &[(vec![("V", vec!["6"])], vec![("V", vec!["8"]), ("E", vec!["6", "c"])])], workers);
    }
}

#[test]
fn computed_columns_count_towards_the_width_of_a_binding() {
    // Seven columns of `V` and the computed `S` fit; a second computed column does not.
    let p = parse("N(A,B,C,D,E,F,G,S) <- V(A,B,C,D,E,F,G), S = A + B");
    assert!(Flow::start(&plan::plan_program(&p), &p, Options { workers: 1, cluster: None }).is_ok());
    let p = parse("N(A,B,C,D,E,F,S,T) <- V(A,B,C,D,E,F,G), S = A + B, T = G + 1");
    let error = Flow::start(&plan::plan_program(&p), &p, Options { workers: 1, cluster: None }).unwrap_err();
    assert!(matches!(error, Error::TooWide { rule: Some(_), width: 9, .. }), "{error:?}");
}

#[test]
fn aggregates_agree_through_retractions_empty_groups_and_overflow() {
    // `count` and `sum` over a group without rows are 0 (through the rules lowering
    // adds around the reduction), `min` and `max` have no value there; a `sum` wraps
    // around; a group a batch empties loses its aggregate, and one it creates gets one.
    let text = "E(1,2).\nE(1,3).\nE(2,5).\nE(2,2147483647).\nN(1).\nN(2).\nN(3).\n\
        C(X,K) <- N(X), K = count : E(X,_)\n\
        S(X,K) <- N(X), K = sum Y : E(X,Y)\n\
        Least(X,K) <- N(X), K = min Y : E(X,Y)\n\
        Most(X,K) <- N(X), K = max Y : E(X,Y)\n\
        All(K) <- K = count : E(_,_)\n\
        P(X,Y) <- E(X,Y)\n\
        P(X,Z) <- P(X,Y), E(Y,Z)\n\
        Reach(X,K) <- N(X), K = count : P(X,_)";
    for workers in [1, 2] {
        assert_eq!(rows_of(text, "C", workers), [[1, 2], [2, 2], [3, 0]].map(Vec::from).into_iter().collect());
        let sums = [[1, 5], [2, -2147483644], [3, 0]];
        assert_eq!(rows_of(text, "S", workers), sums.map(Vec::from).into_iter().collect());
        assert_eq!(rows_of(text, "Least", workers), [[1, 2], [2, 5]].map(Vec::from).into_iter().collect());
        assert_eq!(rows_of(text, "Most", workers), [[1, 3], [2, 2147483647]].map(Vec::from).into_iter().collect());
        assert_eq!(rows_of(text, "All", workers), [vec![4]].into_iter().collect());
    }
    let batches = vec![
        (vec![("E", vec!["1", "2"]), ("E", vec!["1", "3"])], vec![("E", vec!["3", "-4"]), ("E", vec!["3", "1"])]),
        (vec![("N", vec!["2"])], vec![("E", vec!["1", "3"]), ("E", vec!["3", "3"]), ("N", vec!["4"])]),
        (vec![("E", vec!["3", "-4"]), ("E", vec!["3", "1"]), ("E", vec!["3", "3"])], vec![]),
        (vec![("E", vec!["1", "3"]), ("E", vec!["2", "5"]), ("E", vec!["2", "2147483647"])], vec![]),
    ];
    for workers in [1, 2, 3] {
        agree(text, &batches, workers);
    }
}

#[test]
fn min_and_max_order_by_the_value_column_type() {
    // 3000000000 is the greatest unsigned here; as a signed number it would be least.
    let text = ".decl U(g:number, x:unsigned)\n.decl Lo(g:number, x:unsigned)\n.decl Hi(g:number, x:unsigned)\n\
        U(1, 3000000000).\nU(1, 5).\nU(2, 7).\n\
        Lo(g, m) :- U(g, _), m = min x : { U(g, x) }.\n\
        Hi(g, m) :- U(g, _), m = max x : { U(g, x) }.\n";
    for workers in [1, 2] {
        assert_eq!(rows_of(text, "Lo", workers), [[1, 5], [2, 7]].map(Vec::from).into_iter().collect());
        assert_eq!(rows_of(text, "Hi", workers), [[1, 3000000000], [2, 7]].map(Vec::from).into_iter().collect());
        agree(text, &[(vec![("U", vec!["1", "5"])], vec![("U", vec!["2", "4294967295"])])], workers);
    }
}

/// `atoms` as input facts of `p`, their values interned.
fn encode(p: &mut Program, atoms: &Atoms<'_>) -> Vec<(PredId, Vec<u32>)> {
    let mut facts = Vec::new();
    for (name, args) in atoms {
        let pred = p.lookup_source(name).unwrap();
        let types = p.pred(pred).types.clone();
        facts.push((pred, args.iter().zip(types).map(|(arg, ty)| p.encode(ty, arg).unwrap()).collect()));
    }
    facts
}

/// The input changes of each epoch a process reported: inserted, then deleted rows.
type InputChanges = Vec<(BTreeSet<(PredId, Vec<u32>)>, BTreeSet<(PredId, Vec<u32>)>)>;

/// One process of a run with placement at the owner: it reads the inline facts whose
/// position `reads` picks (the shares of several processes may overlap), then requests
/// every batch; its derived rows must be the native engine's after each epoch. Returns
/// the input changes its workers owned, per epoch, for the caller to add up.
fn placed_as(text: &str, batches: &[Batch<'_>], options: Options, reads: impl Fn(usize) -> bool) -> InputChanges {
    let mut p = parse(text);
    let plan = plan::plan_program(&p);
    let facts: Vec<(PredId, Vec<u32>)> = p.facts.iter().map(|f| (f.pred, f.values.clone())).collect();
    let share: Vec<(PredId, Vec<u32>)> =
        facts.iter().enumerate().filter(|(i, _)| reads(*i)).map(|(_, f)| f.clone()).collect();
    let mut flow = Flow::start_placed(&plan, &p, options).unwrap();
    let mut mirror = Mirror::default();
    let mut changes = InputChanges::new();
    let rows = |v: &[(PredId, Row)]| v.iter().map(|(p, r)| (*p, r.values().to_vec())).collect::<BTreeSet<_>>();
    let applied = flow.request([], as_slices(&share), true).unwrap();
    mirror.absorb(&applied);
    changes.push((rows(&applied.inserted), rows(&applied.deleted)));
    let mut native = Maintained::new(plan.clone(), &p, Database::from_facts(&p, &p.facts));
    assert_eq!(mirror.0, derived(&p, native.db()), "{text}");
    for (deletes, inserts) in batches {
        let update = Update { deletes: encode(&mut p, deletes), inserts: encode(&mut p, inserts) };
        let applied = flow.request(as_slices(&update.deletes), as_slices(&update.inserts), false).unwrap();
        mirror.absorb(&applied);
        changes.push((rows(&applied.inserted), rows(&applied.deleted)));
        native.apply(&update);
        assert_eq!(mirror.0, derived(&p, native.db()), "{text} after {update:?}");
    }
    changes
}

/// What the native engine reports as the input changes of the same epochs, netted.
fn native_input_changes(text: &str, batches: &[Batch<'_>]) -> InputChanges {
    let mut p = parse(text);
    let mut native = Maintained::new(plan::plan_program(&p), &p, Database::new(&p));
    let facts: Vec<(PredId, Vec<u32>)> = p.facts.iter().map(|f| (f.pred, f.values.clone())).collect();
    let mut updates = vec![Update { deletes: Vec::new(), inserts: facts }];
    for (deletes, inserts) in batches {
        updates.push(Update { deletes: encode(&mut p, deletes), inserts: encode(&mut p, inserts) });
    }
    updates
        .iter()
        .map(|update| {
            // A fact deleted and inserted again in one batch is no net change.
            let report = native.apply(update);
            let inserted: BTreeSet<_> = report.edb_inserted.iter().cloned().collect();
            let deleted: BTreeSet<_> = report.edb_deleted.iter().cloned().collect();
            (&inserted - &deleted, &deleted - &inserted)
        })
        .collect()
}

/// The input changes of several processes' reports, epoch by epoch.
fn union(reports: Vec<InputChanges>) -> InputChanges {
    let mut total = InputChanges::new();
    for report in reports {
        total.resize(report.len().max(total.len()), Default::default());
        for (epoch, (inserted, deleted)) in report.into_iter().enumerate() {
            total[epoch].0.extend(inserted);
            total[epoch].1.extend(deleted);
        }
    }
    total
}

/// Atoms written out: a relation name and its values' texts.
type Written = &'static [(&'static str, &'static [&'static str])];

const PLACED_BATCHES: &[(Written, Written)] = &[
    (&[("E", &["d", "b"]), ("E", &["x", "y"])], &[]),
    (&[], &[("E", &["d", "a"]), ("E", &["d", "a"]), ("E", &["a", "b"])]),
    (&[("E", &["a", "b"])], &[("E", &["a", "b"]), ("E", &["a", "c"])]),
    (&[("E", &["a", "c"]), ("E", &["b", "c"])], &[]),
];

fn placed_batches() -> Vec<Batch<'static>> {
    let atoms = |a: Written| a.iter().map(|(n, v)| (*n, v.to_vec())).collect();
    PLACED_BATCHES.iter().map(|(d, i)| (atoms(d), atoms(i))).collect()
}

#[test]
fn rows_placed_at_their_owner_keep_set_semantics() {
    // Read twice (every fact requested twice in the first epoch), deleted when absent,
    // inserted when present, deleted and inserted in one batch: the owner's set is the
    // input the native engine holds, and its changes are the native engine's.
    let batches = placed_batches();
    let expected = native_input_changes(CLOSURE, &batches);
    for workers in [1, 2, 3] {
        let twice = format!("{CLOSURE}\nE(a,b).\nE(c,d).");
        let got = placed_as(&twice, &batches, Options { workers, cluster: None }, |_| true);
        assert_eq!(got, expected, "{workers} workers");
    }
}

#[test]
fn two_processes_each_reading_a_share_agree() {
    // Process I reads the facts at positions I, I + 2, ..., and both read the first:
    // no process holds the whole input, and together they hold it once.
    let batches = placed_batches();
    let expected = native_input_changes(CLOSURE, &batches);
    let runs: Vec<_> = local_cluster(2, &[11])
        .into_iter()
        .map(|cluster| {
            let batches = batches.clone();
            std::thread::spawn(move || {
                let process = cluster.process;
                let connection = Connection::open(&cluster, 2).unwrap();
                let options = Options { workers: 2, cluster: Some(connection) };
                placed_as(CLOSURE, &batches, options, move |i| i == 0 || i % 2 == process)
            })
        })
        .collect();
    let reports: Vec<InputChanges> = runs.into_iter().map(|run| run.join().unwrap()).collect();
    assert_eq!(union(reports), expected);
}

#[test]
fn owners_give_every_text_one_id_in_every_process() {
    // Three processes, overlapping reads, a text read by all and one by none but its
    // owner: every process receives the same dictionary, each text in it once, in the
    // part of the process its hash picks, each part sorted.
    let read: [&[&str]; 3] = [&["b", "a", "shared", "a"], &["shared", "c", "d"], &["shared", "e", "ö", ""]];
    let runs: Vec<_> = local_cluster(3, &[5])
        .into_iter()
        .map(|cluster| {
            let texts: Vec<String> = read[cluster.process].iter().map(|t| t.to_string()).collect();
            std::thread::spawn(move || {
                let (connection, dictionary) = Connection::open_with_texts(&cluster, 1, texts).unwrap();
                // The connection is for a dataflow: run one over it, so that it closes
                // the way a run closes it.
                let p = parse(CLOSURE);
                let options = Options { workers: 1, cluster: Some(connection) };
                let mut flow = Flow::start(&plan::plan_program(&p), &p, options).unwrap();
                flow.apply([], []).unwrap();
                dictionary
            })
        })
        .collect();
    let dictionaries: Vec<crate::Dictionary> = runs.into_iter().map(|run| run.join().unwrap()).collect();
    assert!(dictionaries.iter().all(|d| *d == dictionaries[0]));
    let parts = &dictionaries[0].parts;
    assert_eq!(parts.len(), 3);
    let mut all: Vec<&str> = parts.iter().flatten().map(String::as_str).collect();
    for (owner, part) in parts.iter().enumerate() {
        assert!(part.windows(2).all(|w| w[0] < w[1]), "{part:?}");
        assert!(part.iter().all(|t| crate::text_owner(t, 3) == owner), "{part:?}");
    }
    all.sort_unstable();
    assert_eq!(all, ["", "a", "b", "c", "d", "e", "shared", "ö"]);
}

/// A range (a generator, `X = range(A, Z)`) is a flat_map of each binding, through
/// deletes and inserts, in one process and in two.
#[test]
fn a_range_agrees_through_deletes_and_inserts() {
    let text = ".decl E(a:number, b:number)\n.decl G(a:number, x:number)\n.output G\nE(1,4).\nE(10,7).\nE(2,2).\n\
                G(A,X) :- E(A,Z), X = range(A, Z).\nG(A,X) :- E(A,Z), A < Z, X = range(Z, A * 3, 2).\n";
    assert!(parse(text).rules.iter().all(|r| r.generators.len() == 1), "{text}");
    let batches = vec![
        (vec![("E", vec!["1", "4"])], vec![("E", vec!["0", "3"]), ("E", vec!["5", "-1"])]),
        (vec![("E", vec!["10", "7"])], vec![]),
    ];
    for workers in [1, 2] {
        agree(text, &batches, workers);
    }
    let runs: Vec<_> = local_cluster(2, &[3])
        .into_iter()
        .map(|cluster| {
            let batches = batches.clone();
            std::thread::spawn(move || {
                let connection = Connection::open(&cluster, 2).unwrap();
                agree_as(text, &batches, Options { workers: 2, cluster: Some(connection) })
            })
        })
        .collect();
    for run in runs {
        run.join().unwrap();
    }
}

/// Shortest distances from node 1 and the least label of each node's connected
/// component, both recursive `min`s (lattice relations).
const LATTICES: &str = "Start(1).\nNode(1).\nNode(2).\nNode(3).\nNode(4).\nNode(5).\nNode(6).\n\
    Edge(1, 2, 7).\nEdge(1, 3, 2).\nEdge(3, 2, 1).\nEdge(2, 4, 1).\nEdge(4, 1, 1).\nEdge(5, 6, 3).\n\
    Dist(S, 0) <- Start(S)\n\
    Dist(Y, D) <- D = min D0 + W : { Dist(X, D0), Edge(X, Y, W) }\n\
    Comp(X, X) <- Node(X)\n\
    Comp(Y, L) <- L = min L0 : { Comp(X, L0), Edge(X, Y, _) }\n\
    Comp(X, L) <- L = min L0 : { Comp(Y, L0), Edge(X, Y, _) }";

/// Batches of `LATTICES`: a deleted shortcut brings a worse distance back, a deleted
/// bridge splits a component, an inserted edge improves both.
fn lattice_batches() -> Vec<Batch<'static>> {
    vec![
        (vec![("Edge", vec!["3", "2", "1"])], vec![]),
        (vec![], vec![("Edge", vec!["4", "5", "1"]), ("Edge", vec!["1", "6", "1"])]),
        (vec![("Edge", vec!["4", "5", "1"]), ("Edge", vec!["1", "3", "2"])], vec![("Edge", vec!["3", "2", "1"])]),
        (vec![("Start", vec!["1"])], vec![("Start", vec!["5"])]),
    ]
}

#[test]
fn recursive_min_agrees_through_deletes_that_bring_worse_values_back() {
    for workers in [1, 2, 3] {
        assert_eq!(rows_of(LATTICES, "Dist", workers), [[1, 0], [2, 3], [3, 2], [4, 4]].map(Vec::from).into());
        let labels = [[1, 1], [2, 1], [3, 1], [4, 1], [5, 5], [6, 5]];
        assert_eq!(rows_of(LATTICES, "Comp", workers), labels.map(Vec::from).into());
        agree(LATTICES, &lattice_batches(), workers);
    }
}

#[test]
fn recursive_min_on_two_processes_agrees_through_batches() {
    let runs: Vec<_> = local_cluster(2, &[13])
        .into_iter()
        .map(|cluster| {
            std::thread::spawn(move || {
                let connection = Connection::open(&cluster, 2).unwrap();
                agree_as(LATTICES, &lattice_batches(), Options { workers: 2, cluster: Some(connection) })
            })
        })
        .collect();
    for run in runs {
        run.join().unwrap();
    }
}

#[test]
fn subsumption_outside_recursion_agrees_through_batches() {
    // `Best` has two rules (the higher score, then the first label), applied at once;
    // `Both` a rule under which two facts dominate each other, and both go.
    let text = ".decl E(x:number, y:number, w:number)\n.decl Label(n:number, l:number, s:number)\n\
        .decl Best(n:number, l:number, s:number)\n.decl Near(x:number, y:number, w:number)\n\
        .decl Both(x:number, y:number, w:number)\n\
        E(1, 2, 5). E(1, 3, 2). E(2, 3, 4). E(2, 3, 7). E(3, 1, 1).\n\
        Label(1, 10, 3). Label(1, 11, 3). Label(1, 12, 1). Label(2, 10, 0).\n\
        Best(n, l, s) :- Label(n, l, s).\n\
        Best(n, l1, s1) <= Best(n, _, s2) :- s1 < s2.\n\
        Best(n, l1, s) <= Best(n, l2, s) :- l2 < l1.\n\
        Near(x, y, w) :- E(x, y, w).\n\
        Near(x, y1, w1) <= Near(x, y2, w2) :- w2 < w1.\n\
        Both(x, y, w) :- Near(x, y, w), E(y, _, _).\n\
        Both(x, y, w) :- E(x, y, w), w > 3.\n\
        Both(x, y, w) <= Both(x, y, w2) :- w != w2.\n";
    assert_eq!(rows_of(text, "Best", 2), [[1, 10, 3], [2, 10, 0]].map(Vec::from).into());
    let batches = vec![
        (vec![("Label", vec!["1", "10", "3"])], vec![("Label", vec!["2", "9", "0"])]),
        (vec![("E", vec!["1", "3", "2"])], vec![("E", vec!["2", "1", "1"])]),
        (vec![("Label", vec!["1", "11", "3"]), ("E", vec!["2", "3", "7"])], vec![("E", vec!["1", "3", "2"])]),
    ];
    for workers in [1, 2] {
        agree(text, &batches, workers);
    }
}

#[test]
fn subsumption_the_native_engines_run_otherwise_is_refused() {
    // A clause on a recursive relation: natively, what a removed fact derived stays.
    let text = ".decl E(x:number, y:number, w:number)\n.decl D(x:number, y:number, w:number)\n\
        D(x, y, w) :- E(x, y, w).\nD(x, z, d + w) :- D(x, y, d), E(y, z, w).\n\
        D(x, y, d1) <= D(x, y, d2) :- d2 < d1.\n";
    let p = parse(text);
    let plan = plan::plan_program(&p);
    let refused = check(&plan, &p);
    assert!(matches!(refused, Err(Error::Subsumption { lattice: false, plain: None, .. })), "{refused:?}");
    assert!(Flow::start(&plan, &p, Options { workers: 1, cluster: None }).is_err());
    assert!(refused.unwrap_err().message(&p).contains("`D` is recursive"));
}

#[test]
fn a_cycle_that_improves_a_value_for_ever_stops_every_worker() {
    let text = "Start(1).\nEdge(1, 2, 1).\nEdge(2, 3, 1).\nEdge(3, 2, 1).\n\
        Dist(S, 0) <- Start(S)\n\
        Dist(Y, D) <- D = min D0 + W : { Dist(X, D0), Edge(X, Y, W) }";
    let p = parse(text);
    let plan = plan::plan_program(&p);
    let dist = p.lookup_source("Dist").unwrap();
    let edge = p.lookup_source("Edge").unwrap();
    let facts: Vec<(PredId, Vec<u32>)> = p.facts.iter().map(|f| (f.pred, f.values.clone())).collect();
    for workers in [1, 2] {
        // From the start, and from a batch that makes the cycle negative.
        let negative = [(edge, vec![3, 2, (-3i32) as u32])];
        let mut flow = Flow::start(&plan, &p, Options { workers, cluster: None }).unwrap();
        let stopped = flow.apply([], as_slices(&facts).chain(as_slices(&negative)));
        assert!(matches!(stopped, Err(Error::ImprovingCycle { pred, .. }) if pred == dist), "{stopped:?}");
        let mut flow = Flow::start(&plan, &p, Options { workers, cluster: None }).unwrap();
        let first = flow.apply([], as_slices(&facts)).unwrap();
        assert_eq!(first.derived_added.iter().map(|(_, rows)| rows.len()).sum::<usize>(), 3);
        let stopped = flow.apply(as_slices(&[(edge, vec![3, 2, 1])]), as_slices(&[(edge, vec![3, 2, (-3i32) as u32])]));
        assert!(matches!(stopped, Err(Error::ImprovingCycle { pred, .. }) if pred == dist), "{stopped:?}");
        // The dataflow is gone: a later batch is an error, not a wait.
        assert!(flow.apply([], as_slices(&facts)).is_err());
    }
}
