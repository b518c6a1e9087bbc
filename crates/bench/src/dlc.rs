//! dlc driven in-process through its library crates, the way the `dlc` binary drives
//! them: parse the rules with `syntax`, intern the generated values into the program's
//! constants, build the EDB `Database`, rewrite with `magic`, plan with `plan`, evaluate
//! with `exec` — and, for updates, maintain the result with DRed (plain or ranked).

use crate::workload::{Edb, Query, Workload};
use exec::{Database, EvalOptions, Evaluation, Maintained, Maintenance, NativeEngine, Threads, UpdateCounts};
use ir::{PredId, Program, TermKind, Update};
use std::fmt;
use std::time::{Duration, Instant};

/// Whether the query is answered through the magic-sets rewrite or by evaluating the
/// source program and filtering (`dlc --no-magic`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    Magic,
    NoMagic,
    /// `dlc --magic auto` (the default): the rewrite with adornment subsumption, unless
    /// it narrows nothing or a demand relation passes its cap, then the source program.
    Auto,
}

/// The source program of a workload and query, with every generated value interned.
pub struct Source {
    pub program: Program,
    /// `values[n]` is the id of the symbol `n`, which a symbol column holds for the value
    /// `n` (a number column, which a literal of the query makes, holds `n` itself).
    pub values: Vec<u32>,
}

/// Parses the workload's rules and the query and interns the values `0..edb.values`.
pub fn source(workload: &Workload, query: Query, edb: &Edb) -> Result<Source, String> {
    let text = format!("{}{}\n", workload.rules_text(), query.text(workload.query_pred()));
    let (program, diagnostics) = syntax::parse_program(&text, ir::FileId(0));
    let Some(program) = program else {
        let messages: Vec<&str> = diagnostics.iter().map(|d| d.message.as_str()).collect();
        return Err(format!("dlc rejected the benchmark program: {}\n{text}", messages.join("; ")));
    };
    if program.query.is_none() {
        return Err(format!("the benchmark program has no query:\n{text}"));
    }
    let values = (0..edb.values).map(|n| program.consts.intern(&n.to_string()).0).collect();
    Ok(Source { program, values })
}

impl Source {
    /// The value `n` as column `column` of `pred` holds it: the symbol `n`'s id, or `n`.
    pub fn value(&self, program: &Program, pred: PredId, column: usize, n: u32) -> u32 {
        match program.column_type(pred, column) {
            ir::ValueType::Symbol => self.values[n as usize],
            _ => n,
        }
    }
}

/// The program dlc evaluates for this mode: the magic rewrite, or the source itself
/// (moved out of `source`, so that the harness adds no copy dlc would not make).
///
/// # Panics
/// For [`Mode::Auto`], which [`run`] drives itself.
pub fn evaluated_program(source: &mut Source, mode: Mode) -> Program {
    match mode {
        Mode::NoMagic => std::mem::take(&mut source.program),
        Mode::Magic => {
            let query = source.program.query.clone().expect("source() checked the query");
            magic::rewrite(&source.program, &query).program
        }
        Mode::Auto => panic!("--magic auto chooses its program while evaluating"),
    }
}

/// The EDB of `edb` as a database of `program` (the source or its rewrite, which share
/// the EDB predicate ids). Relations no rule mentions are not part of the program.
pub fn database(program: &Program, source: &Source, edb: &Edb) -> Database {
    let mut db = Database::new(program);
    let mut values = Vec::new();
    for relation in &edb.relations {
        let Some(pred) = program.lookup_source(relation.name) else { continue };
        values.clear();
        for tuple in relation.tuples() {
            values.extend(tuple.iter().enumerate().map(|(i, &v)| source.value(program, pred, i, v)));
        }
        // As the dlc binary loads a predicate's facts: one batch.
        debug_assert!(relation.arity > 0, "no workload has a nullary input relation");
        db.insert_all(pred, &values);
    }
    db
}

/// Where the time of one dlc run went.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Phases {
    /// Parsing the rules, interning the values, filling the EDB database.
    pub load: Duration,
    /// The magic rewrite (when used) and planning.
    pub compile: Duration,
    /// `exec::index_inputs`: the indexes on the input relations that evaluation probes.
    /// A database loads and indexes its input once and then answers queries against it,
    /// so this O(|EDB|) step is kept apart from the query's own work in `eval`.
    pub index: Duration,
    /// `exec::evaluate` on the loaded, indexed database.
    pub eval: Duration,
}

impl Phases {
    pub fn total(&self) -> Duration {
        self.load + self.compile + self.index + self.eval
    }
}

/// A finished evaluation.
pub struct Run {
    /// The evaluated program; its query names the relation holding the answers.
    pub program: Program,
    pub eval: Evaluation,
    pub phases: Phases,
}

/// Runs the whole pipeline from the generated EDB to the materialised answer relation:
/// parse and intern (load), rewrite and plan (compile), fill the database (load), index
/// the inputs (index), evaluate (eval). Answers are counted afterwards ([`count_answers`])
/// so that the clock stops when the relation is complete, as it does for the peers.
pub fn run(workload: &Workload, query: Query, edb: &Edb, mode: Mode, engine: NativeEngine) -> Result<Run, String> {
    run_with_threads(workload, query, edb, mode, engine, Threads::ONE)
}

/// [`run`] with the semi-naive engine's joins split over `threads` (`Mode::Auto` runs on one).
pub fn run_with_threads(
    workload: &Workload,
    query: Query,
    edb: &Edb,
    mode: Mode,
    engine: NativeEngine,
    threads: Threads,
) -> Result<Run, String> {
    if mode == Mode::Auto {
        return run_auto(workload, query, edb, engine).map(|(run, _)| run);
    }
    let start = Instant::now();
    let mut source = source(workload, query, edb)?;
    let parsed = Instant::now();
    let program = evaluated_program(&mut source, mode);
    let plan = plan::plan_program(&program);
    let planned = Instant::now();
    let mut db = database(&program, &source, edb);
    let filled = Instant::now();
    // The reference engine scans every relation and probes no index: building them would
    // charge it for work it never uses.
    if engine == NativeEngine::Seminaive {
        exec::index_inputs(&plan, &program, &mut db);
    }
    let indexed = Instant::now();
    let eval = exec::evaluate(&plan, &program, db, EvalOptions { engine, threads, ..EvalOptions::default() });
    let done = Instant::now();
    let phases = Phases {
        load: (parsed - start) + (filled - planned),
        compile: planned - parsed,
        index: indexed - filled,
        eval: done - indexed,
    };
    Ok(Run { program, eval, phases })
}

/// [`run`] as `dlc --magic auto` evaluates: rewrite with subsumption; the source program
/// when the rewrite narrows nothing; else the rewrite with every demand relation capped
/// ([`magic::MagicProgram::demand_caps`]), and when a cap is passed the source program
/// after all, its planning, loading, indexing and evaluation counted in `eval` with the
/// abandoned evaluation. Also returns whether the rewrite was kept.
pub fn run_auto(workload: &Workload, query: Query, edb: &Edb, engine: NativeEngine) -> Result<(Run, bool), String> {
    let start = Instant::now();
    let source = source(workload, query, edb)?;
    let parsed = Instant::now();
    let spec = source.program.query.clone().expect("source() checked the query");
    let options = magic::RewriteOptions { max_adornments: usize::MAX, subsume: true };
    let magic = magic::rewrite_with(&source.program, &spec, options).map_err(|e| format!("{e:?}"))?;
    let rewritten = Instant::now();
    // Evaluates `program` over the EDB: (plan, fill, index) and evaluation times.
    let evaluate = |program: &Program, caps: &[(PredId, u32)]| {
        let t0 = Instant::now();
        let plan = plan::plan_program(program);
        let mut db = database(program, &source, edb);
        for &(pred, cap) in caps {
            db.set_relation_cap(pred, cap);
        }
        if engine == NativeEngine::Seminaive {
            exec::index_inputs(&plan, program, &mut db);
        }
        let t1 = Instant::now();
        let eval = exec::try_evaluate(
            &plan,
            program,
            db,
            EvalOptions { engine, record_rounds: false, progress: None, threads: Threads::ONE },
        );
        (eval, t1 - t0, t1.elapsed())
    };
    let original = |before: Duration| {
        let (eval, prepare, evaluated) = evaluate(&source.program, &[]);
        let eval = eval.map_err(|e| format!("{e}"))?;
        let phases = Phases {
            load: parsed - start,
            compile: rewritten - parsed,
            index: Duration::ZERO,
            eval: before + prepare + evaluated,
        };
        Ok::<_, String>((Run { program: source.program.clone(), eval, phases }, false))
    };
    if magic.narrows_nothing() {
        return original(Duration::ZERO);
    }
    let caps = magic.demand_caps(source.program.consts.len());
    let (eval, prepare, evaluated) = evaluate(&magic.program, &caps);
    match eval {
        Ok(eval) => {
            let phases = Phases { load: parsed - start, compile: rewritten - parsed, index: prepare, eval: evaluated };
            Ok((Run { program: magic.program, eval, phases }, true))
        }
        Err(exec::ResourceError { kind: exec::ResourceKind::Cap { .. }, .. }) => original(prepare + evaluated),
        Err(e) => Err(format!("{e}")),
    }
}

/// The whole pipeline on a program text with its own facts and query, timed from the
/// text: parse and lower (load), validate, magic rewrite and plan (compile), evaluate
/// (eval). What a program's size costs before any data does.
pub fn compile_program(text: &str) -> Result<Run, String> {
    let start = Instant::now();
    let (program, diagnostics) = syntax::parse_program(text, ir::FileId(0));
    let program = program.filter(|_| !diag::has_errors(&diagnostics)).ok_or("dlc rejected the program")?;
    let parsed = Instant::now();
    if !ir::validate(&program).is_empty() {
        return Err("the program does not validate".into());
    }
    let query = program.query.clone().ok_or("the program has no query")?;
    let magic = magic::rewrite(&program, &query).program;
    let plan = plan::plan_program(&magic);
    let db = Database::from_facts(&magic, &magic.facts);
    let planned = Instant::now();
    let eval = exec::evaluate(&plan, &magic, db, EvalOptions::default());
    let done = Instant::now();
    let phases =
        Phases { load: parsed - start, compile: planned - parsed, index: Duration::ZERO, eval: done - planned };
    Ok(Run { program: magic, eval, phases })
}

/// Times a proof of `R(from,to)` (the answer relation of the query's predicate in the
/// evaluated program) with a fresh `exec::Explainer`, as `dlc --explain` makes one:
/// the seconds, the proof's height and its number of facts.
pub fn explain_pair(run: &Run, from: u32, to: u32) -> Result<(f64, usize, usize), String> {
    let query = run.program.query.as_ref().expect("evaluated programs carry their query");
    let value = |column: usize, n: u32| match run.program.column_type(query.atom.pred, column) {
        ir::ValueType::Symbol => run.program.consts.get(&n.to_string()).map(|c| c.0).ok_or(format!("no node {n}")),
        _ => Ok(n),
    };
    let tuple = [value(0, from)?, value(1, to)?];
    let start = Instant::now();
    let proof = exec::Explainer::new(&run.program, &run.eval.db).prove(query.atom.pred, &tuple);
    let secs = start.elapsed().as_secs_f64();
    let proof = proof.ok_or_else(|| format!("R({from},{to}) has no proof"))?;
    Ok((secs, proof.height(), proof.nodes.len()))
}

/// The number of answers of `program`'s query in `db`. Binary queries with one constant
/// probe every constant instead of listing the relation, so counting the answers of a
/// point query on a relation of millions of tuples allocates nothing.
pub fn count_answers(program: &Program, db: &Database) -> usize {
    let query = program.query.as_ref().expect("evaluated programs carry their query");
    let pred = query.atom.pred;
    let args = &query.atom.args;
    let vars: Vec<_> = args.iter().filter_map(|t| t.var()).collect();
    let distinct_vars = vars.iter().enumerate().all(|(i, v)| !vars[..i].contains(v));
    if distinct_vars && vars.len() == args.len() {
        return db.len(pred);
    }
    let mut tuple: Vec<u32> = args.iter().map(|t| if let TermKind::Const(c) = t.kind { c.raw() } else { 0 }).collect();
    match vars.as_slice() {
        [] => return usize::from(db.contains(pred, &tuple)),
        // A symbol column's values are the interned constants, few enough to try each; a
        // number column's could be any `u32`, so its answers are counted row by row below.
        [_] if program.column_type(pred, args.iter().position(|t| t.var().is_some()).unwrap_or(0))
            == ir::ValueType::Symbol =>
        {
            let free = args.iter().position(|t| t.var().is_some()).expect("one argument is a variable");
            return (0..program.consts.len() as u32)
                .filter(|&c| {
                    tuple[free] = c;
                    db.contains(pred, &tuple)
                })
                .count();
        }
        _ => {}
    }
    db.sorted_tuples(pred).iter().filter(|t| query.matches(t)).count()
}

/// The size of the source predicate the query is about (`R` of a closure workload) in
/// `db`: the full closure for `--no-magic`, empty for the magic program.
pub fn relation_len(program: &Program, workload: &Workload, db: &Database) -> usize {
    program.lookup_source(workload.query_pred()).map_or(0, |p| db.len(p))
}

/// One EDB change of a graph workload: an edge of `E` inserted or deleted, or a batch of
/// `n` random edges deleted or inserted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Change {
    Insert(u32, u32),
    Delete(u32, u32),
    /// `n` distinct edges of the graph, drawn with a fixed seed.
    Deletes(u32),
    /// `n` distinct new edges between the graph's nodes (no self-loops), drawn with a
    /// fixed seed.
    Inserts(u32),
}

impl Change {
    pub fn parse(spec: &str) -> Result<Self, String> {
        let parts: Vec<&str> = spec.split(':').collect();
        let edge = || -> Option<(u32, u32)> { Some((parts.get(1)?.parse().ok()?, parts.get(2)?.parse().ok()?)) };
        let count = || -> Option<u32> { parts.get(1)?.parse().ok() };
        match (parts.first().copied(), parts.len()) {
            (Some("ins"), 3) => edge().map(|(u, v)| Change::Insert(u, v)),
            (Some("del"), 3) => edge().map(|(u, v)| Change::Delete(u, v)),
            (Some("dels"), 2) => count().map(Change::Deletes),
            (Some("inss"), 2) => count().map(Change::Inserts),
            _ => None,
        }
        .ok_or_else(|| format!("not an update spec: `{spec}`"))
    }

    /// The edge of a one-edge change.
    pub fn edge(self) -> Option<(u32, u32)> {
        match self {
            Change::Insert(u, v) | Change::Delete(u, v) => Some((u, v)),
            Change::Deletes(_) | Change::Inserts(_) => None,
        }
    }

    /// Whether the change deletes.
    pub fn deletes(self) -> bool {
        matches!(self, Change::Delete(..) | Change::Deletes(_))
    }

    /// The edges of `edb` the change deletes and the edges it inserts.
    #[allow(clippy::type_complexity)]
    pub fn edges_of(self, edb: &Edb) -> (Vec<(u32, u32)>, Vec<(u32, u32)>) {
        let edges = edb.edges();
        let mut rng = crate::rng::SplitMix64::new(9);
        match self {
            Change::Insert(u, v) => (Vec::new(), vec![(u, v)]),
            Change::Delete(u, v) => (vec![(u, v)], Vec::new()),
            Change::Deletes(n) => {
                let want = (n as usize).min(edges.len());
                let mut picked = std::collections::HashSet::new();
                let mut out = Vec::new();
                while out.len() < want {
                    let e = edges[rng.below(edges.len() as u32) as usize];
                    if picked.insert(e) {
                        out.push(e);
                    }
                }
                (out, Vec::new())
            }
            Change::Inserts(n) => {
                let present: std::collections::HashSet<(u32, u32)> = edges.iter().copied().collect();
                let nodes = edb.values;
                let possible = u64::from(nodes) * u64::from(nodes.saturating_sub(1)) - present.len() as u64;
                let want = u64::from(n).min(possible) as usize;
                let mut picked = std::collections::HashSet::new();
                let mut out = Vec::new();
                while out.len() < want {
                    let e = (rng.below(nodes), rng.below(nodes));
                    if e.0 != e.1 && !present.contains(&e) && picked.insert(e) {
                        out.push(e);
                    }
                }
                (Vec::new(), out)
            }
        }
    }

    /// The EDB after the change.
    pub fn apply_to(self, edb: &Edb) -> Edb {
        let (deleted, inserted) = self.edges_of(edb);
        let deleted: std::collections::HashSet<(u32, u32)> = deleted.into_iter().collect();
        let mut out = edb.clone();
        if let Some(rel) = out.relations.iter_mut().find(|r| r.name == "E") {
            let mut kept: Vec<u32> =
                rel.tuples().filter(|t| !deleted.contains(&(t[0], t[1]))).flatten().copied().collect();
            kept.extend(inserted.iter().flat_map(|&(u, v)| [u, v]));
            rel.rows = kept;
        }
        out
    }

    /// The change of `edb` as an exec update of `program`.
    pub fn update(self, program: &Program, source: &Source, edb: &Edb) -> Update {
        let e: PredId = program.lookup_source("E").expect("graph workloads have an edge relation");
        let (deleted, inserted) = self.edges_of(edb);
        let tuples = |edges: Vec<(u32, u32)>| -> Vec<(PredId, Vec<u32>)> {
            edges
                .into_iter()
                .map(|(u, v)| (e, vec![source.value(program, e, 0, u), source.value(program, e, 1, v)]))
                .collect()
        };
        Update { inserts: tuples(inserted), deletes: tuples(deleted) }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Change::Insert(u, v) => write!(f, "ins:{u}:{v}"),
            Change::Delete(u, v) => write!(f, "del:{u}:{v}"),
            Change::Deletes(n) => write!(f, "dels:{n}"),
            Change::Inserts(n) => write!(f, "inss:{n}"),
        }
    }
}

/// A materialised magic program ready for an update; built before the clock starts.
pub struct Incremental {
    pub program: Program,
    pub source: Source,
    pub state: Maintained,
}

/// Materialises the magic program of `query`, to be maintained with `maintenance`.
pub fn maintained(
    workload: &Workload,
    query: Query,
    edb: &Edb,
    maintenance: Maintenance,
) -> Result<Incremental, String> {
    let mut source = source(workload, query, edb)?;
    let program = evaluated_program(&mut source, Mode::Magic);
    let db = database(&program, &source, edb);
    let state = Maintained::with_maintenance(plan::plan_program(&program), &program, db, maintenance);
    Ok(Incremental { program, source, state })
}

impl Incremental {
    /// Applies the change by the state's maintenance strategy; the returned duration covers
    /// `Maintained::apply_counting` only. The harness needs the counts, not the facts:
    /// `apply` would also list every over-deleted fact, which on a deletion that empties
    /// the closure of the random graph costs hundreds of MiB and seconds that are not
    /// DRed's own work.
    pub fn apply(&mut self, change: Change, edb: &Edb) -> (UpdateCounts, Duration) {
        let update = change.update(&self.program, &self.source, edb);
        let start = Instant::now();
        let counts = self.state.apply_counting(&update);
        (counts, start.elapsed())
    }
}

/// Recomputes the magic program from scratch on the changed EDB. The rewrite and the EDB
/// database are built before the clock starts, so the duration covers planning,
/// `exec::index_inputs` and `exec::evaluate` — the least a recomputation from the input
/// relations has to do, since it must index them before it can join them.
pub fn recompute(workload: &Workload, query: Query, edb: &Edb, change: Change) -> Result<(Run, Duration), String> {
    let changed = change.apply_to(edb);
    let mut source = source(workload, query, &changed)?;
    let program = evaluated_program(&mut source, Mode::Magic);
    let mut db = database(&program, &source, &changed);
    let start = Instant::now();
    let plan = plan::plan_program(&program);
    exec::index_inputs(&plan, &program, &mut db);
    let eval = exec::evaluate(&plan, &program, db, EvalOptions::default());
    let elapsed = start.elapsed();
    Ok((Run { program, eval, phases: Phases { eval: elapsed, ..Phases::default() } }, elapsed))
}
