//! Datalog embedded in a Rust program: [`Datalog`] loads a program, takes facts as Rust
//! values, evaluates, and keeps the answers up to date under batches of changes, each
//! answer a row of [`Value`]s; it proves an answer on request.

use crate::backend::{Error, MaintainedBy};
use crate::compile::compile;
use crate::evaluate::Evaluator;
use crate::maintain::{Maintainer, Maintaining};
use crate::options::Options;
use crate::prepare::{prepare, Failed, LoadedProgram, NoInputs, ProgramText, Wanted};
use diag::SourceMap;
use exec::{Explainer, Leaf, Proof, Step};
use ir::{Origin, PredId, PredKind, PredName, Program, ValueType};
use std::fmt;

/// One value of a fact or an answer.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Value {
    /// A symbol (any text; in a dlc program every constant is one).
    Symbol(String),
    /// A signed 32-bit number (a Soufflé `number` column).
    Number(i64),
    /// An unsigned 32-bit number (a Soufflé `unsigned` column).
    Unsigned(u64),
    /// A float (a Soufflé `float` column), as the bits of its `f32`, so that values
    /// compare, order and hash as they do in relations ([`Value::float`] makes one).
    Float(u32),
    /// A record or a value of an algebraic data type (a Soufflé record column), as its
    /// text: `[1, [2, nil]]`, `$Circle(3)`.
    Record(String),
}

impl Value {
    /// The value of a float.
    pub fn float(value: f32) -> Value {
        Value::Float(value.to_bits())
    }
}

impl From<&str> for Value {
    fn from(text: &str) -> Self {
        Value::Symbol(text.to_string())
    }
}

impl From<String> for Value {
    fn from(text: String) -> Self {
        Value::Symbol(text)
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Value::Number(n)
    }
}

impl From<i32> for Value {
    fn from(n: i32) -> Self {
        Value::Number(n.into())
    }
}

impl From<u32> for Value {
    fn from(n: u32) -> Self {
        Value::Unsigned(n.into())
    }
}

impl fmt::Display for Value {
    /// The value's plain text: a symbol unquoted, a number in decimal, a float as Soufflé
    /// prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Symbol(text) | Value::Record(text) => f.write_str(text),
            Value::Number(n) => write!(f, "{n}"),
            Value::Unsigned(n) => write!(f, "{n}"),
            Value::Float(bits) => f.write_str(&ir::float_text(f32::from_bits(*bits))),
        }
    }
}

/// One answer, or one fact: its values in column order.
pub type Row = Vec<Value>;

/// Why a [`Datalog`] call failed: the reports, rendered as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatalogError {
    message: String,
}

impl DatalogError {
    fn new(message: impl Into<String>) -> Self {
        DatalogError { message: message.into() }
    }

    fn failed(failed: &Failed) -> Self {
        DatalogError::new(diag::render(&failed.diagnostics, &failed.sources, false))
    }

    fn stopped(error: &Error, program: &Program, sources: &SourceMap) -> Self {
        DatalogError::new(diag::render(&[error.to_diagnostic(program)], sources, false))
    }

    /// The reports, one or more lines.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for DatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message.trim_end())
    }
}

impl std::error::Error for DatalogError {}

/// What one [`Datalog::update`] changed of the answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Updated {
    /// Answers that hold now and did not before, sorted.
    pub added: Vec<Row>,
    /// Answers that held before and do not now, sorted.
    pub removed: Vec<Row>,
    /// How the engine maintained the batch.
    pub how: MaintainedBy,
}

/// A program evaluated for its query, and kept up to date.
struct Evaluated {
    sources: SourceMap,
    /// The source program (its query names the answers' relation).
    source: Program,
    maintainer: Maintainer,
    /// Whether the maintained program is the magic rewrite.
    magic: bool,
}

/// Where a [`Datalog`] is: loaded (facts may be added), evaluated (batches apply), or
/// spent by an evaluation that failed.
enum Stage {
    Loaded(Box<LoadedProgram>),
    Evaluated(Box<Evaluated>),
    Failed,
}

/// A Datalog program with its query, for a Rust program: facts go in as Rust values,
/// answers come out as rows of [`Value`]s, kept up to date under batches of changes.
///
/// ```
/// use pipeline::{Datalog, Value};
///
/// let mut datalog = Datalog::new(
///     "Reach(X,Y) <- Edge(X,Y).\n\
///      Reach(X,Z) <- Reach(X,Y), Edge(Y,Z).\n\
///      ?- Reach(a,Y).",
/// )?;
/// datalog.add_fact("Edge", &["a".into(), "b".into()])?;
/// datalog.add_fact("Edge", &["b".into(), "c".into()])?;
/// let answers = datalog.evaluate()?;
/// let to: Vec<String> = answers.iter().map(|row| row[1].to_string()).collect();
/// assert_eq!(to, ["b", "c"]);
///
/// let updated = datalog.update(&[], &[("Edge", vec!["b".into(), "c".into()])])?;
/// assert_eq!(updated.removed, [vec![Value::from("a"), Value::from("c")]]);
/// assert!(updated.added.is_empty());
/// # Ok::<(), pipeline::DatalogError>(())
/// ```
pub struct Datalog {
    options: Options,
    stage: Stage,
}

impl fmt::Debug for Datalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stage = match self.stage {
            Stage::Loaded(_) => "loaded",
            Stage::Evaluated(_) => "evaluated",
            Stage::Failed => "failed",
        };
        f.debug_struct("Datalog").field("stage", &stage).finish()
    }
}

impl Datalog {
    /// Loads `program` (dlc's language, or Soufflé's when it looks like Soufflé), which
    /// must have a query, with the default [`Options`].
    pub fn new(program: &str) -> Result<Datalog, DatalogError> {
        Datalog::with_options(program, Options::default())
    }

    /// Loads `program` with `options`. An `#include` is refused: the program is one text.
    pub fn with_options(program: &str, options: Options) -> Result<Datalog, DatalogError> {
        let text = ProgramText::new("<program>", program);
        let wanted = Wanted { outputs: false, every_input: true };
        let prepared = prepare(text, &options, &mut NoInputs, wanted).map_err(|f| DatalogError::failed(&f))?;
        Ok(Datalog { options, stage: Stage::Loaded(Box::new(prepared)) })
    }

    /// Adds an input fact of `relation` before [`Datalog::evaluate`]; after it, facts
    /// change through [`Datalog::update`].
    pub fn add_fact(&mut self, relation: &str, values: &[Value]) -> Result<(), DatalogError> {
        let prepared = match &mut self.stage {
            Stage::Loaded(prepared) => prepared,
            Stage::Evaluated(_) => return Err(DatalogError::new("the program is evaluated: add facts with `update`")),
            Stage::Failed => return Err(failed_before()),
        };
        let (pred, tuple) = encode(&mut prepared.program, relation, values)?;
        prepared.facts.push(pred, tuple.into_iter());
        Ok(())
    }

    /// Compiles and evaluates the program over its facts; returns the query's answers.
    /// After a failed evaluation, every later call fails.
    pub fn evaluate(&mut self) -> Result<Vec<Row>, DatalogError> {
        let prepared = match std::mem::replace(&mut self.stage, Stage::Failed) {
            Stage::Loaded(prepared) => prepared,
            evaluated @ Stage::Evaluated(_) => {
                self.stage = evaluated;
                return self.answers();
            }
            Stage::Failed => return Err(failed_before()),
        };
        let session = compile(*prepared, &self.options).map_err(|f| DatalogError::failed(&f))?;
        // Every relation: an explanation may ask about any of them.
        let evaluator = Evaluator::new(&self.options).whole(true);
        let chosen = evaluator.evaluate_chosen(
            &session.program,
            session.magic.as_ref(),
            self.options.magic,
            &session.facts,
            &|| None,
        );
        let (run, choice) = chosen.map_err(|e| DatalogError::stopped(&e, session.widest(), &session.sources))?;
        let program = match &session.magic {
            Some(magic) if choice.magic => magic.program.clone(),
            _ => session.program.clone(),
        };
        let how = Maintaining {
            whole: true,
            maintenance: self.options.maintenance,
            keep_record: false,
            limits: self.options.limits,
        };
        let maintainer = Maintainer::from_evaluation(program, run, &session.facts, how)
            .map_err(|e| DatalogError::stopped(&e, session.widest(), &session.sources))?;
        let evaluated =
            Evaluated { sources: session.sources, source: session.program, maintainer, magic: choice.magic };
        self.stage = Stage::Evaluated(Box::new(evaluated));
        self.answers()
    }

    /// The query's answers as the last evaluation or update left them, sorted.
    pub fn answers(&self) -> Result<Vec<Row>, DatalogError> {
        let live = self.evaluated()?;
        let maintainer = &live.maintainer;
        let pred = maintainer.query.atom.pred;
        Ok(maintainer.answers().iter().map(|t| decode(&maintainer.program, pred, t)).collect())
    }

    /// Deletes the facts of `delete`, then inserts those of `insert` (each a relation and
    /// its values), as one batch; returns the change of the answers.
    pub fn update(&mut self, insert: &[(&str, Row)], delete: &[(&str, Row)]) -> Result<Updated, DatalogError> {
        let live = match &mut self.stage {
            Stage::Evaluated(live) => live,
            Stage::Loaded(_) => return Err(not_evaluated()),
            Stage::Failed => return Err(failed_before()),
        };
        let maintainer = &mut live.maintainer;
        let mut changes = ir::Update::default();
        for (relation, values) in delete {
            changes.deletes.push(encode(&mut maintainer.program, relation, values)?);
        }
        for (relation, values) in insert {
            changes.inserts.push(encode(&mut maintainer.program, relation, values)?);
        }
        maintainer.list_up_to = None;
        let outcome = maintainer
            .apply(&changes, false, false)
            .map_err(|e| DatalogError::stopped(&e, &maintainer.program, &live.sources))?;
        let pred = maintainer.query.atom.pred;
        let rows = |answers: &ir::Tuples| answers.iter().map(|t| decode(&maintainer.program, pred, t)).collect();
        Ok(Updated {
            added: rows(&outcome.answers_added),
            removed: rows(&outcome.answers_removed),
            how: outcome.change.how,
        })
    }

    /// A proof of the fact `relation(values)` in the current state, one line per fact
    /// (indented under the fact it supports), or `None` when the evaluated program does
    /// not hold it. Through the magic rewrite, a derived fact is found when the query
    /// demanded it: every answer is.
    pub fn explain(&self, relation: &str, values: &[Value]) -> Result<Option<String>, DatalogError> {
        let live = self.evaluated()?;
        let program = &live.maintainer.program;
        let Some(db) = live.maintainer.state.proofs() else {
            return Err(DatalogError::new("this engine keeps no derivations to prove facts with"));
        };
        let pred = relation_of(&live.source, relation, values)?;
        // Values the program never saw make a fact that does not hold.
        let Some(tuple) = lookup(program, pred, values) else { return Ok(None) };
        let relations = crate::explain::fact_relations(&live.source, program, live.magic, pred);
        let mut explainer = Explainer::new(program, db);
        let proof = relations.into_iter().find_map(|p| explainer.prove(p, &tuple));
        Ok(proof.map(|proof| proof_text(&live.source, program, &proof)))
    }

    fn evaluated(&self) -> Result<&Evaluated, DatalogError> {
        match &self.stage {
            Stage::Evaluated(live) => Ok(live),
            Stage::Loaded(_) => Err(not_evaluated()),
            Stage::Failed => Err(failed_before()),
        }
    }
}

/// The error of a call that needs the program evaluated, before it is.
fn not_evaluated() -> DatalogError {
    DatalogError::new("the program is not evaluated yet: call `evaluate` first")
}

/// The error of a call after an evaluation that failed.
fn failed_before() -> DatalogError {
    DatalogError::new("an earlier evaluation failed; load the program again")
}

/// The input relation `relation` of `program`, checked to take `values`.
fn input_relation(program: &Program, relation: &str, values: &[Value]) -> Result<PredId, DatalogError> {
    let pred = relation_of(program, relation, values)?;
    if program.pred(pred).kind == PredKind::Idb {
        return Err(DatalogError::new(format!("`{relation}` is derived by rules; only input relations take facts")));
    }
    Ok(pred)
}

/// The relation `relation` of `program`, checked to have as many columns as `values`.
fn relation_of(program: &Program, relation: &str, values: &[Value]) -> Result<PredId, DatalogError> {
    let Some(pred) = program.lookup_source(relation) else {
        return Err(DatalogError::new(format!("`{relation}` is not a relation of the program")));
    };
    let arity = program.pred(pred).arity;
    if values.len() != arity {
        return Err(DatalogError::new(format!("`{relation}` has {arity} column(s); {} value(s) given", values.len())));
    }
    Ok(pred)
}

/// A fact of input relation `relation` as a tuple of `program`, whose interner takes
/// new symbols.
fn encode(program: &mut Program, relation: &str, values: &[Value]) -> Result<ir::Tuple, DatalogError> {
    let pred = input_relation(program, relation, values)?;
    let mut tuple = Vec::with_capacity(values.len());
    for (i, value) in values.iter().enumerate() {
        let ty = program.column_type(pred, i);
        let raw = program
            .encode(ty, &value.to_string())
            .map_err(|why| DatalogError::new(format!("column {} of `{relation}`: `{value}` is {why}", i + 1)))?;
        tuple.push(raw);
    }
    Ok((pred, tuple))
}

/// `values` as a tuple of `pred`, if `program` knows every symbol and every number fits
/// its column (otherwise no fact of `program` has them).
fn lookup(program: &Program, pred: PredId, values: &[Value]) -> Option<Vec<u32>> {
    let value = |(i, value): (usize, &Value)| match program.column_type(pred, i) {
        ValueType::Symbol => program.consts.get(&value.to_string()).map(|c| c.0),
        ValueType::Record(record) => program.consts.read_record(record, &value.to_string()).ok(),
        ty => ty.number(&value.to_string()),
    };
    values.iter().enumerate().map(value).collect()
}

/// A tuple of `pred` as values.
fn decode(program: &Program, pred: PredId, tuple: &[u32]) -> Row {
    tuple
        .iter()
        .enumerate()
        .map(|(i, &v)| match program.value(pred, i, v) {
            ir::Value::Symbol(c) => Value::Symbol(program.consts.text(c).to_string()),
            ir::Value::Number(n) => Value::Number(n.into()),
            ir::Value::Unsigned(n) => Value::Unsigned(n.into()),
            ir::Value::Float(bits) => Value::Float(bits),
            ir::Value::Record(ty, id) => {
                let mut text = String::new();
                program.consts.write_record(&mut text, ValueType::Record(ty), id);
                Value::Record(text)
            }
        })
        .collect()
}

/// A proof as lines: each fact, how it holds, and under it the facts it was derived
/// from. Through the magic rewrite, answer relations are shown by their source names,
/// rules as the source rules they copy, and demand facts are left out.
fn proof_text(source: &Program, program: &Program, proof: &Proof) -> String {
    let fact = |pred: PredId, tuple: &[u32]| match &program.pred(pred).name {
        PredName::Answer(s, _) => format!("{}{}", program.symbols.text(*s), program.display_tuple(pred, tuple)),
        _ => format!("{}{}", program.display_pred(pred), program.display_tuple(pred, tuple)),
    };
    let rule = |id: ir::RuleId| {
        let r = program.rule(id);
        match r.origin {
            Origin::Main { rule } | Origin::Demand { rule, .. } => source.display_rule(source.rule(rule)).to_string(),
            Origin::Source | Origin::Seed => program.display_rule(r).to_string(),
        }
    };
    let mut text = String::new();
    // Depth-first from the proved fact, with a stack: a proof may be a long chain.
    let mut stack = vec![(0usize, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        let n = &proof.nodes[node];
        if matches!(program.pred(n.pred).name, PredName::Demand(..)) {
            continue;
        }
        let (how, children, leaves): (String, &[usize], &[Leaf]) = match &n.step {
            Step::Input => ("input fact".into(), &[], &[]),
            Step::Given => ("given with the input".into(), &[], &[]),
            Step::Rule { rule: r, body, leaves } => (format!("by {}", rule(*r)), body, leaves),
            Step::Aggregate { rule: r, rows, shown } => {
                (format!("aggregate of {rows} row(s) by {}", rule(*r)), shown, &[])
            }
        };
        let indent = "  ".repeat(depth);
        text.push_str(&format!("{indent}{}  {how}\n", fact(n.pred, &n.tuple)));
        // What the instance's negated atoms and comparisons found.
        for leaf in leaves {
            let value = |ty: ValueType, v: u32| program.const_text(ir::Value::from_raw(ty, v));
            let line = match leaf {
                Leaf::Absent { pred, pattern, .. } => {
                    let types = &program.pred(*pred).types;
                    let args: Vec<String> =
                        pattern.iter().zip(types).map(|(v, &ty)| v.map_or("_".into(), |v| value(ty, v))).collect();
                    format!("!{}({})  no such fact", program.pred_name(*pred), args.join(","))
                }
                Leaf::Compared { op, ty, left, right, .. } => {
                    format!("{}  holds", op.write(&value(*ty, *left), &value(*ty, *right)))
                }
                Leaf::Generated { ty, value: v, bounds, .. } => {
                    let bounds: Vec<String> = bounds.iter().map(|&b| value(*ty, b)).collect();
                    format!("{} = range({})  holds", value(*ty, *v), bounds.join(", "))
                }
            };
            text.push_str(&format!("{indent}  {line}\n"));
        }
        stack.extend(children.iter().rev().map(|&c| (c, depth + 1)));
    }
    text
}
