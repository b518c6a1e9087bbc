//! What the suite measures (the default one and `--quick`), running every job in child
//! processes, and the cross-system checks that make a wrong answer fail the run.

use crate::dlc::Change;
use crate::measure::{self, Job, Sample, System};
use crate::oracle;
use crate::rng::SplitMix64;
use crate::workload::{ordered_list_sizes, Graph, Query, Rules, Shape, Workload};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// The random graph of the published comparison: 2,000 nodes, 10,000 distinct edges, seed 42.
pub const RANDOM: Graph = Graph::Random { nodes: 2000, edges: 10000, seed: 42 };
/// random500 of the published comparison: 500 nodes, 2,500 distinct edges, seed 42.
pub const RANDOM500: Graph = Graph::Random { nodes: 500, edges: 2500, seed: 42 };

/// The ordered list of the large-relation table ([`LargeRow`]): its `skipBlank` passes
/// 100 million tuples.
pub const LARGE_LIST: Workload = Workload::OrderedList { inserts: 330_000, max_run: 1000, seed: 42 };

/// The graph of the negation workload ([`Workload::Unreach`]): sparse enough that many
/// pairs of nodes do not reach each other.
pub const UNREACH_GRAPH: Graph = Graph::Random { nodes: 500, edges: 1500, seed: 42 };

/// A full-closure row: dlc against the peers.
#[derive(Clone, Debug)]
pub struct ClosureRow {
    pub workload: Workload,
}

impl ClosureRow {
    /// `--no-magic` evaluates the whole of `R` whatever the query; running it with the
    /// point query lets the same runs serve the magic comparison as well.
    pub fn no_magic(&self) -> Job {
        Job::new(self.workload, Query::Point(self.workload.point_node()), System::DlcNoMagic)
    }

    /// [`ClosureRow::no_magic`] with its joins split over two threads.
    pub fn no_magic_threads(&self) -> Job {
        Job { system: System::DlcNoMagic2, ..self.no_magic() }
    }

    /// The magic program of the all-free query `R(X,Y)`: what magic costs where it
    /// cannot help.
    pub fn magic_full(&self) -> Job {
        Job::new(self.workload, Query::Full, System::Dlc)
    }

    /// dlc's default (`--magic auto`) on the all-free query.
    pub fn auto_full(&self) -> Job {
        Job::new(self.workload, Query::Full, System::DlcAuto)
    }

    pub fn peer(&self, system: System) -> Job {
        Job::new(self.workload, Query::Full, system)
    }

    pub fn jobs(&self) -> Vec<Job> {
        let mut jobs = vec![self.no_magic(), self.no_magic_threads(), self.magic_full(), self.auto_full()];
        jobs.extend([System::Datafrog, System::Ascent, System::Crepe].map(|s| self.peer(s)));
        jobs
    }
}

/// A selection-query row: dlc with magic against `--no-magic`.
#[derive(Clone, Debug)]
pub struct QueryRow {
    pub workload: Workload,
    pub query: Query,
}

impl QueryRow {
    pub fn magic(&self) -> Job {
        Job::new(self.workload, self.query, System::Dlc)
    }

    pub fn no_magic(&self) -> Job {
        Job::new(self.workload, self.query, System::DlcNoMagic)
    }

    /// dlc's default, `--magic auto`.
    pub fn auto(&self) -> Job {
        Job::new(self.workload, self.query, System::DlcAuto)
    }
}

/// The semi-naive engine against the reference naive engine, full closure.
#[derive(Clone, Debug)]
pub struct ReferenceRow {
    pub workload: Workload,
}

impl ReferenceRow {
    pub fn seminaive(&self) -> Job {
        Job::new(self.workload, Query::Full, System::DlcNoMagic)
    }

    pub fn reference(&self) -> Job {
        Job::new(self.workload, Query::Full, System::DlcReference)
    }
}

/// One EDB change: DRed (DRed's and ranked) on the materialised magic program against
/// recomputation.
#[derive(Clone, Debug)]
pub struct UpdateRow {
    pub workload: Workload,
    pub query: Query,
    pub change: Change,
    /// Why this change: `random edge`, `worst case: the edge out of the query node`.
    pub note: String,
}

impl UpdateRow {
    /// The maintenance run of this change with `system` (`Dred` or `DredRanked`).
    pub fn maintenance(&self, system: System) -> Job {
        Job::new(self.workload, self.query, system).with_change(self.change)
    }

    pub fn dred(&self) -> Job {
        self.maintenance(System::Dred)
    }

    pub fn ranked(&self) -> Job {
        self.maintenance(System::DredRanked)
    }

    pub fn recompute(&self) -> Job {
        Job::new(self.workload, self.query, System::Recompute).with_change(self.change)
    }
}

/// A batch of random deletions or insertions on a whole closure (`R(X,Y)`): every
/// maintenance strategy against recomputation, time and peak memory.
#[derive(Clone, Debug)]
pub struct BatchRow {
    pub workload: Workload,
    /// `Change::Deletes(n)` or `Change::Inserts(n)`.
    pub change: Change,
}

impl BatchRow {
    /// The maintenance strategies the batch tables compare, with their column names.
    pub const STRATEGIES: [(System, &'static str); 3] =
        [(System::DredAuto, "auto"), (System::Dred, "DRed"), (System::DredRanked, "ranked")];

    pub fn maintenance(&self, system: System) -> Job {
        Job::new(self.workload, Query::Full, system).with_change(self.change)
    }

    pub fn recompute(&self) -> Job {
        Job::new(self.workload, Query::Full, System::Recompute).with_change(self.change)
    }

    /// The `dlc` binaries that apply the batch, with their column names: each evaluates,
    /// then applies the batch with one strategy and writes the closure after it.
    pub const BINARIES: [(System, &'static str); 3] =
        [(System::DlcBinary, "auto"), (System::DlcBinaryDred, "DRed"), (System::DlcBinaryRanked, "ranked")];

    /// The batch applied through the `dlc` binary by `system` (one of [`Self::BINARIES`]).
    pub fn binary(&self, system: System) -> Job {
        Job::new(self.workload, Query::Full, system).with_change(self.change)
    }

    /// The `dlc` binary evaluating the workload without a batch: what the maintaining
    /// runs pay before their batch.
    pub fn binary_evaluation(&self) -> Job {
        Job::new(self.workload, Query::Full, System::DlcBinary)
    }

    /// The `dlc` binary evaluating the changed input, no batch: what a rerun costs, the
    /// baseline a batch must beat.
    pub fn binary_rerun(&self) -> Job {
        Job::new(self.workload, Query::Full, System::DlcBinaryRerun).with_change(self.change)
    }

    pub fn jobs(&self) -> Vec<Job> {
        let mut jobs: Vec<Job> = Self::STRATEGIES.iter().map(|&(system, _)| self.maintenance(system)).collect();
        jobs.push(self.recompute());
        jobs.extend(Self::BINARIES.iter().map(|&(system, _)| self.binary(system)));
        jobs.push(self.binary_evaluation());
        jobs.push(self.binary_rerun());
        jobs
    }
}

/// One point of a growth curve: a program (or a query) of some size. Rows of one family
/// grow by a factor each, and the report prints the exponent of the time between them.
#[derive(Clone, Debug)]
pub struct ScaleRow {
    /// What grows: rows with the same family form one curve, in order of size.
    pub family: String,
    pub size: u64,
    pub job: Job,
    /// The answers the query must have.
    pub answers: u64,
}

/// The `compile` group: each generated program shape at sizes a decade apart, and the
/// right-linear closure queried `R(X,c)` (adornment `fb`) on chains of growing length.
fn scaling(quick: bool) -> Vec<ScaleRow> {
    let decades = |from: u32, to: u32| -> Vec<u32> {
        std::iter::successors(Some(from), |&n| n.checked_mul(10)).take_while(|&n| n <= to).collect()
    };
    let shapes: [(Shape, u32, u32); 5] = if quick {
        [
            (Shape::Chain, 100, 1_000),
            (Shape::JoinChain, 100, 1_000),
            (Shape::Body, 10, 1_000),
            (Shape::Rules, 1_000, 10_000),
            (Shape::Blank, 10_000, 100_000),
        ]
    } else {
        [
            (Shape::Chain, 100, 100_000),
            (Shape::JoinChain, 100, 100_000),
            (Shape::Body, 10, 10_000),
            (Shape::Rules, 1_000, 1_000_000),
            (Shape::Blank, 10_000, 1_000_000),
        ]
    };
    let mut rows = Vec::new();
    for (shape, from, to) in shapes {
        for size in decades(from, to) {
            rows.push(ScaleRow {
                family: format!("compile: {}", shape.label()),
                size: u64::from(size),
                job: Job::new(Workload::Program { shape, size }, Query::Full, System::DlcCompile),
                answers: shape.answers(size),
            });
        }
    }
    // A Soufflé project read through the binary to its IR; the rows are the IR's lines:
    // a heading and a line per predicate, a heading and a line per rule.
    let parts: &[u32] = if quick { &[5, 20] } else { &[30, 100, 300] };
    for &parts in parts {
        let relations = u64::from(parts * crate::project::RELATIONS_PER_FILE);
        rows.push(ScaleRow {
            family: "compile through the binary: a Soufflé project to `--emit ir` (files)".into(),
            size: u64::from(parts),
            job: Job::new(Workload::Project { parts }, Query::Full, System::DlcBinaryIr),
            answers: 2 + (relations + 2) + 2 * relations,
        });
    }
    let (from, to) = if quick { (1_000, 10_000) } else { (10_000, 1_000_000) };
    for edges in decades(from, to) {
        // A chain of `edges` edges; `R(X,last)` has every other node as an answer.
        let workload = tc(Rules::Rlin, Graph::Chain { nodes: edges + 1 });
        rows.push(ScaleRow {
            family: "eval: right-linear `R(X,c)` on a chain, c its last node (edges)".into(),
            size: u64::from(edges),
            job: Job::new(workload, Query::Target(edges), System::Dlc),
            answers: u64::from(edges),
        });
    }
    rows
}

/// Proofs of answers `R(0,y)` against the evaluation that derived them.
#[derive(Clone, Debug)]
pub struct ExplainRow {
    pub workload: Workload,
}

impl ExplainRow {
    /// The explanation run through the magic program (`System::Explain`) or the
    /// `--no-magic` one (`System::ExplainNoMagic`).
    pub fn job(&self, system: System) -> Job {
        Job::new(self.workload, Query::Point(0), system)
    }
}

/// One program run end to end through the `dlc` binary on facts files (and through
/// Soufflé when given), beside the in-process evaluation of the same program.
#[derive(Clone, Debug)]
pub struct BinaryRow {
    pub workload: Workload,
    /// `Full` writes the whole query relation; `Point(c)` writes `Q(y) :- R(c, y).`
    pub query: Query,
}

impl BinaryRow {
    pub fn job(&self, system: System) -> Job {
        Job::new(self.workload, self.query, system)
    }

    /// The in-process run of the evaluation the binary makes: for the whole relation the
    /// source program (the `--no-magic` job of the other tables, which evaluates all of it
    /// whatever its query), for a selection the magic program of the point query.
    pub fn in_process(&self) -> Job {
        let point = Query::Point(self.workload.point_node());
        match self.query {
            Query::Full => Job::new(self.workload, point, System::DlcNoMagic),
            query => Job::new(self.workload, query, System::DlcAuto),
        }
    }

    /// The rows the output file must have: the size of the relation, or the answers of
    /// the point query, as the in-process run counted them.
    pub fn expected_rows(&self, results: &Results) -> Option<u64> {
        let s = results.summary(&self.in_process()).ok()?;
        match self.query {
            Query::Full => s.get("relation").map(|n| n as u64),
            _ => Some(s.answers),
        }
    }
}

/// A program whose largest relation is the point, run end to end through the `dlc`
/// binary on facts files (and Soufflé's compiled program when given): the time and peak
/// memory of a relation of many tuples. No in-process run: its relations have four
/// columns, which the in-process harness's queries do not read.
#[derive(Clone, Debug)]
pub struct LargeRow {
    pub workload: Workload,
}

impl LargeRow {
    /// The systems it runs on.
    pub const SYSTEMS: [System; 2] = [System::DlcBinary, System::SouffleCompiled];

    /// The whole output relation through `system`.
    pub fn job(&self, system: System) -> Job {
        Job::new(self.workload, Query::Full, system)
    }
}

/// One program run by the `dlc` binary on facts files natively and with `--engine
/// differential`, and with `change` an update batch of one edge after the evaluation
/// (`--updates`; the batch's own time is the sample's `batch`).
#[derive(Clone, Debug)]
pub struct DifferentialRow {
    pub workload: Workload,
    pub query: Query,
    pub change: Option<Change>,
}

impl DifferentialRow {
    pub fn job(&self, system: System) -> Job {
        let job = Job::new(self.workload, self.query, system);
        match self.change {
            Some(change) => job.with_change(change),
            None => job,
        }
    }
}

/// Everything one run of the harness measures.
#[derive(Clone, Debug)]
pub struct Suite {
    pub quick: bool,
    pub runs: usize,
    pub closure: Vec<ClosureRow>,
    pub queries: Vec<QueryRow>,
    pub reference: Vec<ReferenceRow>,
    pub updates: Vec<UpdateRow>,
    pub batches: Vec<BatchRow>,
    pub scaling: Vec<ScaleRow>,
    pub explain: Vec<ExplainRow>,
    pub binary: Vec<BinaryRow>,
    /// Programs whose largest relation is the point, through the binary.
    pub large: Vec<LargeRow>,
    /// Programs run by the `dlc` binary natively and with `--engine differential` on one
    /// and two workers and as two processes of one worker.
    pub differential: Vec<DifferentialRow>,
    /// Whether Soufflé runs too (`SOUFFLE` names its binary).
    pub souffle: bool,
}

fn tc(rules: Rules, graph: Graph) -> Workload {
    Workload::Tc { rules, graph }
}

impl Suite {
    /// The default suite (the published comparison's graphs) or the `--quick` smoke-test version.
    pub fn new(quick: bool) -> Self {
        let (random, random_nl, chain, chain_nl, grid, forest, paths, big_forest) = if quick {
            (
                RANDOM500,
                Graph::Random { nodes: 200, edges: 1000, seed: 42 },
                Graph::Chain { nodes: 500 },
                Graph::Chain { nodes: 200 },
                Graph::Grid { width: 20, height: 20 },
                Graph::Forest { trees: 200, size: 20, seed: 42 },
                Graph::Paths { count: 200, len: 20 },
                Graph::Forest { trees: 1000, size: 50, seed: 42 },
            )
        } else {
            (
                RANDOM,
                RANDOM500,
                Graph::Chain { nodes: 2000 },
                Graph::Chain { nodes: 500 },
                Graph::Grid { width: 40, height: 40 },
                Graph::Forest { trees: 1000, size: 20, seed: 42 },
                Graph::Paths { count: 1000, len: 20 },
                // Ten times the trees and 2.5 times their size: if magic's cost is one tree,
                // the speed-up over `--no-magic` grows with the forest; if it is O(|E|), not.
                Graph::Forest { trees: 10000, size: 50, seed: 42 },
            )
        };
        let peers_rows = [
            tc(Rules::Rlin, random),
            tc(Rules::Llin, random),
            tc(Rules::Rlin, chain),
            tc(Rules::Llin, chain),
            tc(Rules::NonLinear, random_nl),
            tc(Rules::NonLinear, chain_nl),
        ];
        let mut closure: Vec<ClosureRow> = peers_rows.iter().map(|&workload| ClosureRow { workload }).collect();
        closure.extend([tc(Rules::Rlin, grid), tc(Rules::Llin, grid)].map(|workload| ClosureRow { workload }));

        let mut queries: Vec<QueryRow> =
            closure.iter().map(|r| QueryRow { workload: r.workload, query: Query::Point(0) }).collect();
        for graph in [forest, big_forest, paths] {
            for rules in [Rules::Rlin, Rules::Llin] {
                queries.push(QueryRow { workload: tc(rules, graph), query: Query::Point(0) });
            }
        }
        let last = |g: Graph| g.nodes() - 1;
        for (graph, target) in [(chain, last(chain)), (random, last(random))] {
            for rules in [Rules::Rlin, Rules::Llin] {
                queries.push(QueryRow { workload: tc(rules, graph), query: Query::Pair(0, target) });
            }
        }
        let same_gen =
            if quick { Workload::SameGen { fanout: 3, depth: 4 } } else { Workload::SameGen { fanout: 3, depth: 6 } };
        let points_to = if quick {
            Workload::PointsTo { vars: 500, allocs: 100, fields: 0, assigns: 600, loads: 100, stores: 100, seed: 7 }
        } else {
            Workload::PointsTo { vars: 1500, allocs: 300, fields: 0, assigns: 1800, loads: 300, stores: 300, seed: 7 }
        };
        // Arithmetic: walks of at most four edges, counted in a column.
        let hops = Workload::Hops { hops: 4, graph: random };
        // Negation: the nodes a node does not reach, above the closure (`--magic auto`
        // keeps its guarantee on a program with negation).
        let unreach = Workload::Unreach {
            graph: if quick { Graph::Random { nodes: 200, edges: 600, seed: 42 } } else { UNREACH_GRAPH },
        };
        // Aggregates: a degree count, and the fewest hops from node 0 by `min`.
        let degree = Workload::Degree { graph: random };
        let min_hops = Workload::MinHops { hops: 4, graph: random };
        for workload in [same_gen, points_to, hops, unreach, degree, min_hops] {
            queries.push(QueryRow { workload, query: Query::Point(workload.point_node()) });
        }
        // Ten times the variables, assignments, loads and stores of `points_to`, the
        // loads and stores through 20 fields: how the analysis grows towards real
        // programs. A third of the objects keeps it near a second.
        let field_points_to = if quick {
            Workload::PointsTo { vars: 5000, allocs: 50, fields: 10, assigns: 6000, loads: 1000, stores: 1000, seed: 7 }
        } else {
            Workload::PointsTo {
                vars: 15000,
                allocs: 100,
                fields: 20,
                assigns: 18000,
                loads: 3000,
                stores: 3000,
                seed: 7,
            }
        };

        let reference = if quick {
            vec![
                tc(Rules::Rlin, Graph::Chain { nodes: 60 }),
                tc(Rules::Rlin, Graph::Random { nodes: 50, edges: 150, seed: 42 }),
            ]
        } else {
            let small_random = Graph::Random { nodes: 100, edges: 300, seed: 42 };
            vec![
                tc(Rules::Rlin, Graph::Chain { nodes: 150 }),
                tc(Rules::Llin, Graph::Chain { nodes: 150 }),
                tc(Rules::Rlin, small_random),
                tc(Rules::NonLinear, small_random),
            ]
        };
        let reference = reference.into_iter().map(|workload| ReferenceRow { workload }).collect();

        let mut updates = Vec::new();
        let point = Query::Point(0);
        let edges_per_kind = if quick { 2 } else { 5 };
        let llin = tc(Rules::Llin, random);
        for change in random_changes(random, edges_per_kind) {
            updates.push(UpdateRow { workload: llin, query: point, change, note: "random edge".into() });
        }
        // Random insertions rarely change `R(0,Y)`: almost every node is reachable already.
        let new_answers = new_answer_insert(random);
        let new_answers_note = "edge from node 0 to a node it did not reach: new answers";
        updates.push(UpdateRow { workload: llin, query: point, change: new_answers, note: new_answers_note.into() });
        if !quick {
            let rlin = tc(Rules::Rlin, random);
            for change in random_changes(random, 1) {
                updates.push(UpdateRow { workload: rlin, query: point, change, note: "random edge".into() });
            }
            updates.push(UpdateRow {
                workload: rlin,
                query: point,
                change: new_answers,
                note: new_answers_note.into(),
            });
        }
        let n = chain.nodes();
        updates.push(UpdateRow {
            workload: tc(Rules::Llin, chain),
            query: point,
            change: Change::Delete(0, 1),
            note: "worst case: the edge out of the query node".into(),
        });
        updates.push(UpdateRow {
            workload: tc(Rules::Llin, chain),
            query: point,
            change: Change::Delete(n / 2, n / 2 + 1),
            note: "the middle edge".into(),
        });
        updates.push(UpdateRow {
            workload: tc(Rules::Rlin, chain),
            query: point,
            change: Change::Delete(0, 1),
            note: "worst case: the edge out of the query node, demand on every node".into(),
        });

        // Local changes, where DRed should pay off: the queried component is one small tree
        // or path, so a change near its leaves, or outside it, touches few derived facts.
        for graph in [forest, paths, big_forest] {
            for rules in [Rules::Llin, Rules::Rlin] {
                for (change, note) in local_changes(graph) {
                    updates.push(UpdateRow { workload: tc(rules, graph), query: point, change, note: note.into() });
                }
            }
        }

        // Maintenance across a negation: `U(0,Y)`, the nodes 0 does not reach, above the
        // closure, for random edges deleted and inserted.
        let Workload::Unreach { graph: unreach_graph } = unreach else { unreachable!("built above") };
        for change in random_changes(unreach_graph, edges_per_kind) {
            updates.push(UpdateRow {
                workload: unreach,
                query: point,
                change,
                note: "random edge, under a negation".into(),
            });
        }

        // Maintenance of aggregates: one random edge deleted and one inserted under the
        // degree count of every node and the fewest hops from node 0 (a `min`), each
        // against recomputing the program on the changed input.
        for (workload, note) in [(degree, "random edge, degree count"), (min_hops, "random edge, min of hops")] {
            for change in random_changes(random, 1) {
                updates.push(UpdateRow { workload, query: Query::Full, change, note: note.into() });
            }
        }

        // Batches of 1 to 1,000 random deletions and insertions on the whole
        // left-linear closure of the random graph, the forest and the chain.
        let sizes: &[u32] = if quick { &[1, 10] } else { &[1, 10, 100, 1000] };
        let mut batches = Vec::new();
        for graph in [random, forest, chain] {
            for &n in sizes {
                for change in [Change::Deletes(n), Change::Inserts(n)] {
                    batches.push(BatchRow { workload: tc(Rules::Llin, graph), change });
                }
            }
        }

        let explain = [tc(Rules::Llin, random), tc(Rules::Rlin, random), tc(Rules::NonLinear, random_nl)]
            .map(|workload| ExplainRow { workload })
            .to_vec();

        let mut binary = Vec::new();
        for workload in [
            tc(Rules::Rlin, random),
            tc(Rules::Llin, random),
            tc(Rules::Rlin, chain),
            tc(Rules::Rlin, big_forest),
            points_to,
            unreach,
            hops,
            field_points_to,
        ] {
            for query in [Query::Full, Query::Point(workload.point_node())] {
                binary.push(BinaryRow { workload, query });
            }
        }
        // The non-linear closures through the binary, for the thread table: the joins
        // whose split pays most.
        for graph in [random_nl, chain_nl] {
            binary.push(BinaryRow { workload: tc(Rules::NonLinear, graph), query: Query::Full });
        }
        // Texts made by rules (`cat`, `to_string`, `substr`, `strlen`, `contains`), as
        // program analyses name classes and methods.
        let strings = if quick {
            Workload::Strings { classes: 2000, methods: 20000 }
        } else {
            Workload::Strings { classes: 20000, methods: 200000 }
        };
        binary.push(BinaryRow { workload: strings, query: Query::Full });
        // Shortest paths from node 0 by a recursive `min`, and by the subsumptive clause
        // that is the form Soufflé runs: the lattice's rounds, each group improved in place.
        let weighted = if quick {
            Graph::Random { nodes: 2000, edges: 10000, seed: 42 }
        } else {
            Graph::Random { nodes: 50000, edges: 250000, seed: 42 }
        };
        for subsumption in [false, true] {
            binary.push(BinaryRow {
                workload: Workload::ShortestPath { graph: weighted, subsumption },
                query: Query::Full,
            });
        }
        // One edge: a run that is start-up alone, the floor of every row's time and memory.
        binary.push(BinaryRow { workload: tc(Rules::Rlin, Graph::Chain { nodes: 2 }), query: Query::Full });

        // An ordered list whose `skipBlank` holds about 0.5 million tuples (quick) or more
        // than 100 million, the shape of a real CRDT's relation of 151.7 million.
        let list = match quick {
            true => Workload::OrderedList { inserts: 20_000, max_run: 100, seed: 42 },
            false => LARGE_LIST,
        };
        let large = vec![LargeRow { workload: list }];

        let forest_query = tc(Rules::Rlin, forest);
        let differential = vec![
            DifferentialRow { workload: tc(Rules::Rlin, random), query: Query::Full, change: None },
            DifferentialRow { workload: hops, query: Query::Full, change: None },
            DifferentialRow { workload: forest_query, query: Query::Point(forest_query.point_node()), change: None },
            DifferentialRow { workload: llin, query: point, change: Some(new_answers) },
        ];

        let scaling = scaling(quick);
        let runs = if quick { 1 } else { 3 };
        Suite {
            quick,
            runs,
            closure,
            queries,
            reference,
            updates,
            batches,
            scaling,
            explain,
            binary,
            large,
            differential,
            souffle: false,
        }
    }

    /// How many times `job` runs: the compile group's programs once (a growth curve
    /// spans decades, so noise of a few per cent does not move its exponents, and its
    /// largest programs take seconds each), the large relations once, every other job
    /// `runs` times.
    pub fn runs_of(&self, job: &Job) -> usize {
        // The large relations' runs take minutes and gigabytes each.
        if job.system == System::DlcCompile || matches!(job.workload, Workload::OrderedList { .. }) {
            1
        } else {
            self.runs
        }
    }

    /// Every distinct job, in a stable order.
    pub fn jobs(&self) -> Vec<Job> {
        let mut all: Vec<Job> = Vec::new();
        all.extend(self.closure.iter().flat_map(ClosureRow::jobs));
        all.extend(self.queries.iter().flat_map(|r| [r.magic(), r.no_magic(), r.auto()]));
        all.extend(self.reference.iter().flat_map(|r| [r.seminaive(), r.reference()]));
        all.extend(self.updates.iter().flat_map(|r| [r.dred(), r.ranked(), r.recompute()]));
        all.extend(self.batches.iter().flat_map(BatchRow::jobs));
        all.extend(self.scaling.iter().map(|r| r.job));
        all.extend(self.explain.iter().flat_map(|r| [r.job(System::Explain), r.job(System::ExplainNoMagic)]));
        for row in &self.binary {
            all.extend([row.in_process(), row.job(System::DlcBinary)]);
            if self.souffle && row.workload.souffle_runs() {
                all.extend([row.job(System::SouffleInterpreted), row.job(System::SouffleCompiled)]);
            }
        }
        for row in &self.large {
            all.push(row.job(System::DlcBinary));
            if self.souffle {
                all.push(row.job(System::SouffleCompiled));
            }
        }
        for row in &self.differential {
            all.extend(DIFFERENTIAL_SYSTEMS.map(|system| row.job(system)));
        }
        let mut seen = HashSet::new();
        all.retain(|j| seen.insert(j.key()));
        all
    }
}

/// The systems of the differential table, the native binary first.
pub const DIFFERENTIAL_SYSTEMS: [System; 4] =
    [System::DlcBinary, System::DlcDifferential, System::DlcDifferential2, System::DlcCluster2];

/// `count` edge deletions of random existing edges and `count` insertions of random new
/// edges (no self-loops), drawn with a fixed seed of their own.
fn random_changes(graph: Graph, count: usize) -> Vec<Change> {
    let edges = graph.edges();
    let present: HashSet<(u32, u32)> = edges.iter().copied().collect();
    let mut rng = SplitMix64::new(6);
    let mut out = Vec::new();
    let mut deleted = HashSet::new();
    while deleted.len() < count {
        let e = edges[rng.below(edges.len() as u32) as usize];
        if deleted.insert(e) {
            out.push(Change::Delete(e.0, e.1));
        }
    }
    let mut inserted = HashSet::new();
    while inserted.len() < count {
        let e = (rng.below(graph.nodes()), rng.below(graph.nodes()));
        if e.0 != e.1 && !present.contains(&e) && inserted.insert(e) {
            out.push(Change::Insert(e.0, e.1));
        }
    }
    out
}

/// What a local change is about; the report groups the DRed rows of the targets by it.
pub const LEAF_DELETE: &str = "leaf edge of the queried component";
pub const OUTSIDE_DELETE: &str = "edge outside the queried component";
pub const OUTSIDE_INSERT: &str = "insert between two other components";
pub const JOIN_INSERT: &str = "insert from a leaf of the queried component to the next one: new answers";

/// The local changes of a forest or paths graph, whose component 0 holds nodes
/// `0..size`: delete the edge into the last node of component 0 (a leaf: in a random
/// recursive tree no later node picks it as parent; in a path it is the end), delete the
/// last edge of the graph (in the last component), insert an edge between the last two
/// components, and join component 0's last node to the root of component 1.
pub fn local_changes(graph: Graph) -> Vec<(Change, &'static str)> {
    let (parts, size) = match graph {
        Graph::Forest { trees, size, .. } => (trees, size),
        Graph::Paths { count, len } => (count, len),
        _ => return Vec::new(),
    };
    let edges = graph.edges();
    let Some(&(leaf_parent, leaf)) = edges.iter().find(|&&(_, c)| c == size - 1) else { return Vec::new() };
    let Some(&(u, v)) = edges.last() else { return Vec::new() };
    vec![
        (Change::Delete(leaf_parent, leaf), LEAF_DELETE),
        (Change::Delete(u, v), OUTSIDE_DELETE),
        (Change::Insert(parts * size - 1, (parts - 2) * size), OUTSIDE_INSERT),
        (Change::Insert(size - 1, size), JOIN_INSERT),
    ]
}

/// Inserts the edge from node 0 to the first node that node 0 does not reach.
fn new_answer_insert(graph: Graph) -> Change {
    let reached = oracle::reachable_from(graph.nodes(), &graph.edges(), 0);
    let target = (1..graph.nodes()).find(|&v| !reached[v as usize]).unwrap_or(1);
    Change::Insert(0, target)
}

/// The samples of every job (failed runs keep their message).
#[derive(Clone, Debug, Default)]
pub struct Results {
    pub samples: HashMap<String, Vec<Result<Sample, String>>>,
    pub wall: Duration,
}

/// The median figures of one job.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub secs: f64,
    pub rss_mib: f64,
    pub answers: u64,
    /// Medians of the extra fields.
    pub extra: HashMap<String, f64>,
    pub runs: usize,
}

impl Summary {
    pub fn get(&self, key: &str) -> Option<f64> {
        self.extra.get(key).copied()
    }
}

impl Results {
    /// The medians of a job, or why it has none.
    pub fn summary(&self, job: &Job) -> Result<Summary, String> {
        let samples = self.samples.get(&job.key()).ok_or_else(|| "not run".to_string())?;
        let ok: Vec<&Sample> = samples.iter().filter_map(|s| s.as_ref().ok()).collect();
        if ok.is_empty() {
            let why = samples.iter().find_map(|s| s.as_ref().err()).cloned().unwrap_or_else(|| "not run".into());
            return Err(why);
        }
        let med = |f: &dyn Fn(&Sample) -> f64| measure::median(&ok.iter().map(|s| f(s)).collect::<Vec<_>>());
        let keys: HashSet<&String> = ok.iter().flat_map(|s| s.extra.keys()).collect();
        let extra = keys.into_iter().map(|k| (k.clone(), med(&|s: &Sample| s.get(k).unwrap_or(f64::NAN)))).collect();
        Ok(Summary {
            secs: med(&|s| s.secs),
            rss_mib: med(&|s| s.rss_mib),
            answers: ok[0].answers,
            extra,
            runs: ok.len(),
        })
    }
}

/// Runs every job `suite.runs` times, round-robin so that a burst of machine noise hits
/// all systems alike, each time in a fresh child process.
pub fn run(suite: &Suite, timeout: Duration, filter: Option<&str>) -> Results {
    let mut jobs = suite.jobs();
    if let Some(f) = filter {
        // A binary run is compared with its in-process run, which comes along.
        let companions: Vec<String> = suite
            .binary
            .iter()
            .filter(|r| {
                [System::DlcBinary, System::SouffleInterpreted, System::SouffleCompiled]
                    .iter()
                    .any(|&s| r.job(s).key().contains(f))
            })
            .map(|r| r.in_process().key())
            .collect();
        jobs.retain(|j| j.key().contains(f) || companions.contains(&j.key()));
    }
    let start = Instant::now();
    let mut results = Results::default();
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            let why = format!("cannot find the bench binary: {e}");
            results.samples.extend(jobs.iter().map(|j| (j.key(), vec![Err(why.clone())])));
            return results;
        }
    };
    let total: usize = jobs.iter().map(|j| suite.runs_of(j)).sum();
    let mut done = 0;
    for round in 0..suite.runs {
        for job in jobs.iter().filter(|j| round < suite.runs_of(j)) {
            done += 1;
            let outcome = measure::run_child(&exe, job, timeout);
            match &outcome {
                Ok(s) => eprintln!("[{done}/{total}] {}", run_line(round, &job.key(), s)),
                Err(e) => eprintln!("[{done}/{total}] run {} {:<60} FAILED: {e}", round + 1, job.key()),
            }
            results.samples.entry(job.key()).or_default().push(outcome);
        }
    }
    // Runs of a few milliseconds vary by about ten per cent from run to run, as much as
    // the differences the tables judge: such jobs run more often, in rounds of their own.
    if suite.runs > 1 {
        let short: Vec<&Job> = jobs
            .iter()
            .filter(|j| suite.runs_of(j) == suite.runs)
            .filter(|j| results.summary(j).is_ok_and(|s| s.secs < SHORT_JOB_SECS))
            .collect();
        for round in 0..SHORT_JOB_EXTRA_RUNS {
            for job in &short {
                let outcome = measure::run_child(&exe, job, timeout);
                if let Err(e) = &outcome {
                    eprintln!("[extra {}/{SHORT_JOB_EXTRA_RUNS}] {} FAILED: {e}", round + 1, job.key());
                }
                results.samples.entry(job.key()).or_default().push(outcome);
            }
            eprintln!("[extra {}/{SHORT_JOB_EXTRA_RUNS}] {} short job(s) ran again", round + 1, short.len());
        }
    }
    results.wall = start.elapsed();
    results
}

/// A job whose median after the regular runs is below this many seconds is short...
pub const SHORT_JOB_SECS: f64 = 0.01;
/// ...and runs this many more times, so that its median is one of `runs + 6`.
pub const SHORT_JOB_EXTRA_RUNS: usize = 6;

/// Every disagreement between runs or systems; an empty list means all answers agree.
pub fn check(suite: &Suite, results: &Results) -> Vec<String> {
    let mut problems = Vec::new();
    for (key, samples) in &results.samples {
        let counts: HashSet<(u64, u64)> = samples
            .iter()
            .filter_map(|s| s.as_ref().ok())
            .map(|s| (s.answers, s.get("relation").unwrap_or(-1.0) as u64))
            .collect();
        if counts.len() > 1 {
            problems.push(format!("{key}: the runs disagree: {counts:?}"));
        }
    }
    let answers = |job: &Job| results.summary(job).ok().map(|s| s.answers);
    for row in &suite.scaling {
        if let Some(got) = answers(&row.job).filter(|&n| n != row.answers) {
            problems.push(format!("{}: {got} answers, {} expected", row.job.key(), row.answers));
        }
    }
    let mut agree = |what: String, jobs: &[(&str, Option<u64>)]| {
        let known: Vec<&(&str, Option<u64>)> = jobs.iter().filter(|(_, n)| n.is_some()).collect();
        if known.windows(2).any(|w| w[0].1 != w[1].1) {
            let list: Vec<String> = known.iter().map(|(name, n)| format!("{name} {}", n.unwrap_or(0))).collect();
            problems.push(format!("{what}: answer counts differ: {}", list.join(", ")));
        }
    };
    let mut oracle_problems = Vec::new();
    let mut expect = |what: String, got: Option<u64>, want: u64| {
        if let Some(got) = got.filter(|&g| g != want) {
            oracle_problems.push(format!("{what}: {got} answers, breadth-first search says {want}"));
        }
    };
    let mut facts: HashMap<Graph, (u64, Vec<bool>)> = HashMap::new();
    let mut graph_facts = |g: Graph| facts.entry(g).or_insert_with(|| oracle::graph_facts(g)).clone();
    for row in &suite.closure {
        let Workload::Tc { graph, .. } = row.workload else { continue };
        let want = graph_facts(graph).0;
        for job in [row.no_magic(), row.no_magic_threads()] {
            let closure = results.summary(&job).ok().and_then(|s| s.get("relation")).map(|n| n as u64);
            expect(format!("full closure of {} ({})", row.workload.label(), job.system), closure, want);
        }
    }
    for row in &suite.queries {
        let Workload::Tc { graph, .. } = row.workload else { continue };
        let reached = graph_facts(graph).1;
        let want = match row.query {
            Query::Full => graph_facts(graph).0,
            Query::Point(0) => reached.iter().filter(|&&r| r).count() as u64,
            Query::Pair(0, b) => u64::from(reached[b as usize]),
            _ => continue,
        };
        expect(format!("{} {}", row.workload.label(), row.query.label("R")), answers(&row.magic()), want);
    }
    for row in &suite.updates {
        let (Workload::Tc { graph, .. }, Query::Point(0)) = (row.workload, row.query) else { continue };
        let edges = row.change.apply_to(&row.workload.generate()).edges();
        let want = oracle::reachable_from(graph.nodes(), &edges, 0).iter().filter(|&&r| r).count() as u64;
        let what = format!("{} R(0,Y) after {}", row.workload.label(), row.change);
        expect(format!("{what} (DRed)"), answers(&row.dred()), want);
        expect(format!("{what} (ranked DRed)"), answers(&row.ranked()), want);
    }
    let mut chain_problems = Vec::new();
    for row in &suite.closure {
        let closure = results.summary(&row.no_magic()).ok().and_then(|s| s.get("relation")).map(|n| n as u64);
        let mut counts = vec![
            ("dlc --no-magic (|R|)", closure),
            ("dlc magic R(X,Y)", answers(&row.magic_full())),
            ("dlc --magic auto R(X,Y)", answers(&row.auto_full())),
        ];
        for system in [System::Datafrog, System::Ascent, System::Crepe] {
            counts.push((system.name(), answers(&row.peer(system))));
        }
        agree(format!("full closure of {}", row.workload.label()), &counts);
        if let (Workload::Tc { graph: Graph::Chain { nodes }, .. }, Some(n)) = (row.workload, closure) {
            let expected = u64::from(nodes) * u64::from(nodes - 1) / 2;
            if n != expected {
                chain_problems
                    .push(format!("{}: closure {n}, but a chain of {nodes} has {expected}", row.workload.label()));
            }
        }
    }
    for row in &suite.queries {
        let label = format!("{} {}", row.workload.label(), row.query.label(row.workload.query_pred()));
        let counts = [
            ("magic", answers(&row.magic())),
            ("--no-magic", answers(&row.no_magic())),
            ("--magic auto", answers(&row.auto())),
        ];
        agree(label, &counts);
    }
    for row in &suite.reference {
        agree(
            format!("reference engine on {}", row.workload.label()),
            &[("semi-naive", answers(&row.seminaive())), ("reference", answers(&row.reference()))],
        );
    }
    for row in &suite.batches {
        let Workload::Tc { graph, .. } = row.workload else { continue };
        let edges = row.change.apply_to(&row.workload.generate()).edges();
        let want: u64 = (0..graph.nodes())
            .map(|source| oracle::reachable_from(graph.nodes(), &edges, source).iter().filter(|&&r| r).count() as u64)
            .sum();
        let what = format!("{} R(X,Y) after {}", row.workload.label(), row.change);
        for (system, name) in BatchRow::STRATEGIES {
            expect(format!("{what} ({name})"), answers(&row.maintenance(system)), want);
        }
        for (system, name) in BatchRow::BINARIES {
            expect(format!("{what} (dlc binary, {name})"), answers(&row.binary(system)), want);
        }
        expect(format!("{what} (dlc binary, rerun)"), answers(&row.binary_rerun()), want);
        expect(format!("{what} (recomputation)"), answers(&row.recompute()), want);
    }
    for row in &suite.updates {
        agree(
            format!("{} {} after {}", row.workload.label(), row.query.label("R"), row.change),
            &[
                ("DRed", answers(&row.dred())),
                ("ranked DRed", answers(&row.ranked())),
                ("recomputation", answers(&row.recompute())),
            ],
        );
    }
    for row in &suite.explain {
        let query = QueryRow { workload: row.workload, query: Query::Point(0) };
        agree(
            format!("explained {} R(0,Y)", row.workload.label()),
            &[
                ("magic", answers(&query.magic())),
                ("explain", answers(&row.job(System::Explain))),
                ("explain --no-magic", answers(&row.job(System::ExplainNoMagic))),
            ],
        );
    }
    for row in &suite.binary {
        let mut counts =
            vec![("in-process", row.expected_rows(results)), ("dlc binary", answers(&row.job(System::DlcBinary)))];
        if suite.souffle {
            counts.push(("Soufflé interpreted", answers(&row.job(System::SouffleInterpreted))));
            counts.push(("Soufflé compiled", answers(&row.job(System::SouffleCompiled))));
        }
        let label = format!("{} output {} rows", row.workload.label(), row.query.label(row.workload.query_pred()));
        agree(label, &counts);
    }
    let mut list_problems = Vec::new();
    for row in &suite.large {
        let Some(sizes) = ordered_list_sizes(&row.workload) else { continue };
        for system in LargeRow::SYSTEMS {
            let job = row.job(system);
            if let Some(got) = answers(&job).filter(|&got| got != sizes.next_visible) {
                let want = sizes.next_visible;
                list_problems.push(format!("{}: {got} rows, the generated list has {want}", job.key()));
            }
        }
    }
    for row in &suite.differential {
        let counts: Vec<(&str, Option<u64>)> =
            DIFFERENTIAL_SYSTEMS.iter().map(|&system| (system.name(), answers(&row.job(system)))).collect();
        let label = format!("{} output {} rows", row.workload.label(), row.query.label(row.workload.query_pred()));
        agree(label, &counts);
    }
    problems.extend(chain_problems);
    problems.extend(oracle_problems);
    problems.extend(list_problems);
    problems.sort();
    problems
}

/// The progress line of one finished run (`round` from 0): time, peak memory (`– MiB`
/// when the child ended before its memory could be read) and answers.
fn run_line(round: usize, key: &str, s: &Sample) -> String {
    format!(
        "run {} {:<60} {:>9.4} s {:>8} {:>9} answers",
        round + 1,
        key,
        s.secs,
        crate::report::mib(s.rss_mib),
        s.answers
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_run_whose_memory_was_not_read_prints_no_nan() {
        let sample = super::Sample { secs: 0.001, rss_mib: f64::NAN, answers: 3, extra: Default::default() };
        let line = super::run_line(0, "dlc-binary/chain", &sample);
        assert!(!line.contains("NaN") && line.contains("– MiB"), "{line}");
    }

    use super::*;

    #[test]
    fn suites_have_distinct_jobs_and_valid_specs() {
        for quick in [true, false] {
            let suite = Suite::new(quick);
            let jobs = suite.jobs();
            assert!(jobs.len() > 20);
            for job in &jobs {
                assert_eq!(&Job::parse(&job.args()[1..]).unwrap(), job);
            }
        }
    }

    #[test]
    fn check_reports_a_peer_that_disagrees_and_a_wrong_closure() {
        let suite = Suite::new(true);
        let row = &suite.closure[2];
        assert!(matches!(row.workload, Workload::Tc { graph: Graph::Chain { nodes: 500 }, .. }));
        let sample = |answers: u64, relation: f64| {
            let extra = [("relation".to_string(), relation)].into_iter().collect();
            Ok(Sample { secs: 1.0, rss_mib: 1.0, answers, extra })
        };
        let mut results = Results::default();
        results.samples.insert(row.no_magic().key(), vec![sample(499, 124_750.0)]);
        results.samples.insert(row.peer(System::Ascent).key(), vec![sample(124_750, 124_750.0)]);
        assert!(check(&suite, &results).is_empty());
        results.samples.insert(row.peer(System::Crepe).key(), vec![sample(124_749, 124_749.0)]);
        let problems = check(&suite, &results);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("crepe 124749"), "{problems:?}");
        results.samples.insert(row.no_magic().key(), vec![sample(499, 124_000.0)]);
        assert!(check(&suite, &results).iter().any(|p| p.contains("breadth-first search says 124750")));
    }

    #[test]
    fn check_reports_a_binary_output_with_other_rows_than_in_process() {
        let mut suite = Suite::new(true);
        let full = suite.binary.iter().find(|r| r.query == Query::Full).expect("a whole-relation row").clone();
        let point = suite.binary.iter().find(|r| r.query != Query::Full).expect("a point row").clone();
        let sample = |answers: u64, relation: f64| {
            let extra = [("relation".to_string(), relation)].into_iter().collect();
            Ok(Sample { secs: 1.0, rss_mib: 1.0, answers, extra })
        };
        let mut results = Results::default();
        results.samples.insert(full.in_process().key(), vec![sample(7, 300.0)]);
        results.samples.insert(full.job(System::DlcBinary).key(), vec![sample(300, 0.0)]);
        results.samples.insert(point.in_process().key(), vec![sample(12, 300.0)]);
        results.samples.insert(point.job(System::DlcBinary).key(), vec![sample(12, 0.0)]);
        let binary_problems = |results: &Results, suite: &Suite| {
            check(suite, results).into_iter().filter(|p| p.contains("output")).collect::<Vec<_>>()
        };
        assert!(binary_problems(&results, &suite).is_empty());
        results.samples.insert(full.job(System::DlcBinary).key(), vec![sample(299, 0.0)]);
        let problems = binary_problems(&results, &suite);
        assert!(problems.len() == 1 && problems[0].contains("dlc binary 299"), "{problems:?}");
        results.samples.insert(full.job(System::DlcBinary).key(), vec![sample(300, 0.0)]);
        suite.souffle = true;
        results.samples.insert(point.job(System::SouffleCompiled).key(), vec![sample(11, 0.0)]);
        let problems = binary_problems(&results, &suite);
        assert!(problems.len() == 1 && problems[0].contains("Soufflé compiled 11"), "{problems:?}");
        assert!(suite.jobs().contains(&point.job(System::SouffleInterpreted)));
    }

    #[test]
    fn check_reports_a_ranked_update_that_disagrees() {
        let suite = Suite::new(true);
        let row = suite.updates.iter().find(|r| r.note == LEAF_DELETE).expect("the quick suite has local changes");
        let Workload::Tc { graph, .. } = row.workload else { panic!("local changes are on graphs") };
        let edges = row.change.apply_to(&row.workload.generate()).edges();
        let want = oracle::reachable_from(graph.nodes(), &edges, 0).iter().filter(|&&r| r).count() as u64;
        let sample = |answers: u64| Ok(Sample { secs: 1.0, rss_mib: 1.0, answers, extra: Default::default() });
        let mut results = Results::default();
        for job in [row.dred(), row.ranked(), row.recompute()] {
            results.samples.insert(job.key(), vec![sample(want)]);
        }
        assert!(check(&suite, &results).is_empty(), "{:?}", check(&suite, &results));
        results.samples.insert(row.ranked().key(), vec![sample(want + 1)]);
        let problems = check(&suite, &results);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems.iter().any(|p| p.contains(&format!("ranked DRed {}", want + 1))), "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("(ranked DRed)") && p.contains("breadth-first")), "{problems:?}");
    }

    #[test]
    fn local_changes_stay_where_they_claim() {
        for graph in [Graph::Forest { trees: 5, size: 6, seed: 3 }, Graph::Paths { count: 5, len: 6 }] {
            let edges: HashSet<(u32, u32)> = graph.edges().into_iter().collect();
            let changes = local_changes(graph);
            assert_eq!(changes.len(), 4);
            let reached = |c: Change| {
                let after = c.apply_to(&tc(Rules::Llin, graph).generate()).edges();
                oracle::reachable_from(graph.nodes(), &after, 0).iter().filter(|&&r| r).count()
            };
            for (change, note) in changes {
                let (u, v) = change.edge().expect("local changes are of one edge");
                match (change, note) {
                    (Change::Delete(..), LEAF_DELETE) => {
                        assert!(edges.contains(&(u, v)) && v == 5 && !edges.iter().any(|&(p, _)| p == v));
                        assert_eq!(reached(change), 4);
                    }
                    (Change::Delete(..), OUTSIDE_DELETE) => {
                        assert!(edges.contains(&(u, v)) && u >= 24);
                        assert_eq!(reached(change), 5);
                    }
                    (Change::Insert(..), OUTSIDE_INSERT) => {
                        assert!(!edges.contains(&(u, v)) && u >= 6 && v >= 6);
                        assert_eq!(reached(change), 5);
                    }
                    (Change::Insert(..), JOIN_INSERT) => assert_eq!(reached(change), 11),
                    other => panic!("unexpected change {other:?}"),
                }
            }
        }
    }

    #[test]
    fn random_changes_delete_present_and_insert_absent_edges() {
        let g = Graph::Random { nodes: 30, edges: 100, seed: 1 };
        let edges: HashSet<(u32, u32)> = g.edges().into_iter().collect();
        let changes = random_changes(g, 3);
        assert_eq!(changes.len(), 6);
        for c in changes {
            match c {
                Change::Delete(u, v) => assert!(edges.contains(&(u, v))),
                Change::Insert(u, v) => assert!(u != v && !edges.contains(&(u, v))),
                other => panic!("random changes are of one edge: {other}"),
            }
        }
    }

    /// A batch deletes that many distinct present edges, or inserts that many distinct
    /// absent ones, and its update changes exactly those.
    #[test]
    fn batches_change_that_many_distinct_edges() {
        let workload = tc(Rules::Llin, Graph::Random { nodes: 30, edges: 100, seed: 1 });
        let edb = workload.generate();
        let before: HashSet<(u32, u32)> = edb.edges().into_iter().collect();
        for change in [Change::Deletes(10), Change::Inserts(10)] {
            let after: HashSet<(u32, u32)> = change.apply_to(&edb).edges().into_iter().collect();
            let (deleted, inserted) = change.edges_of(&edb);
            assert_eq!(deleted.len() + inserted.len(), 10, "{change}");
            assert_eq!(before.difference(&after).count(), deleted.len(), "{change}");
            assert_eq!(after.difference(&before).count(), inserted.len(), "{change}");
            assert!(inserted.iter().all(|&(u, v)| u != v && !before.contains(&(u, v))));
            assert_eq!(Change::parse(&change.to_string()), Ok(change));
        }
    }
}
