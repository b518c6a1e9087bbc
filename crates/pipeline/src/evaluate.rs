//! Evaluation: the plan a program runs, the database of its input, and the program
//! `--magic` chooses ([`Evaluator::evaluate_chosen`]).

use crate::backend::{Engine, Error, RunningDataflow};
use crate::input_facts::InputFacts;
use crate::options::{MagicMode, Options};
use crate::select::SelectedRows;
use diag::{Code, Diagnostic};
use exec::{Database, Evaluation, ResourceError, Threads};
use ir::{PredId, Program};
use magic::MagicProgram;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// A progress callback of one evaluation.
pub type Progress = Option<Box<dyn FnMut(exec::Progress)>>;

/// How evaluations run: the engine and its threads, the limits of every database, and
/// which relations are computed.
#[derive(Clone, Debug)]
pub struct Evaluator {
    /// The engine that evaluates.
    pub engine: Engine,
    /// The threads of the native engine's joins.
    pub threads: Threads,
    /// The memory budget of the relations and the most tuples one may hold.
    pub limits: exec::Limits,
    /// Every relation ([`evaluation_plan`]), not only those the query reads.
    pub whole: bool,
    /// Whether the facts each round derived are kept (for a trace).
    pub record_rounds: bool,
}

impl Evaluator {
    /// The evaluator `options` configure.
    pub fn new(options: &Options) -> Self {
        Evaluator {
            engine: options.engine.clone(),
            threads: options.threads,
            limits: options.limits,
            whole: options.all,
            record_rounds: false,
        }
    }

    /// The semi-naive engine on `threads`, over the relations the query reads: what a
    /// check or a proof's own demand recomputes with.
    pub fn recompute(threads: Threads, limits: exec::Limits) -> Self {
        Evaluator { engine: Engine::SEMINAIVE, threads, limits, whole: false, record_rounds: false }
    }

    /// This evaluator over every relation (`true`), or only those the query reads.
    pub fn whole(self, whole: bool) -> Self {
        Evaluator { whole, ..self }
    }

    /// Plans and evaluates `program` (which must have a query) from scratch over `facts`.
    pub fn evaluate(&self, program: &Program, facts: &InputFacts, progress: Progress) -> Result<Evaluated, Error> {
        self.evaluate_capped(program, facts, progress, &[])
    }

    /// [`Evaluator::evaluate`], with relation `pred` of each `(pred, cap)` of `caps` capped
    /// at `cap` tuples (an evaluation that passes one ends with [`exec::ResourceKind::Cap`]).
    fn evaluate_capped(
        &self,
        program: &Program,
        facts: &InputFacts,
        progress: Progress,
        caps: &[(PredId, u32)],
    ) -> Result<Evaluated, Error> {
        let start = Instant::now();
        let query = program.query.clone().ok_or(Error::NoQuery)?;
        let plan = evaluation_plan(program, self.whole);
        let mut edb = edb_database(program, facts, self.limits);
        for &(pred, cap) in caps {
            edb.set_relation_cap(pred, cap);
        }
        let (eval, live) = self.engine.evaluate(&plan, program, edb, self.record_rounds, progress, self.threads)?;
        Ok(Evaluated { eval, query, answers: std::cell::OnceCell::new(), elapsed: start.elapsed(), live })
    }

    /// Evaluates the program `mode` chooses: the original `source`, or `magic` (the
    /// session's rewrite, made for every mode but `off`). For `auto`, the rewrite is
    /// evaluated with a cap on each demand relation ([`demand_caps`]); when one passes it,
    /// that evaluation is abandoned and the original program evaluated instead, and the
    /// time of both is reported. `progress` makes the progress reporter of each evaluation.
    pub fn evaluate_chosen(
        &self,
        source: &Program,
        magic: Option<&MagicProgram>,
        mode: MagicMode,
        facts: &InputFacts,
        progress: &dyn Fn() -> Progress,
    ) -> Result<(Evaluated, MagicChoice), Error> {
        let magic = match (mode, magic) {
            (MagicMode::Off, _) | (_, None) => {
                // `auto` has no rewrite when it would pass the adornment limit.
                let reason = match mode {
                    MagicMode::Auto => "--magic auto: the rewrite needs more adorned predicates than --max-adornments",
                    _ => "--magic off",
                };
                let choice = MagicChoice { magic: false, reason: reason.into() };
                return Ok((self.evaluate(source, facts, progress())?, choice));
            }
            (MagicMode::On, Some(magic)) => {
                let choice = MagicChoice { magic: true, reason: "--magic on".into() };
                return Ok((self.evaluate(&magic.program, facts, progress())?, choice));
            }
            (MagicMode::Auto, Some(magic)) => magic,
        };
        let mut choice = auto_choice(source, magic, None);
        if choice.magic && self.engine.is_cluster() {
            choice.reason = "--magic auto: the rewrite narrows the demand (a cluster sets no caps)".into();
        }
        if !choice.magic {
            return Ok((self.evaluate(source, facts, progress())?, choice));
        }
        // A cluster evaluates once, and its processes must choose alike: no caps there.
        let caps = if self.engine.is_cluster() { Vec::new() } else { demand_caps(source, magic) };
        let start = Instant::now();
        match self.evaluate_capped(&magic.program, facts, progress(), &caps) {
            Ok(mut run) => {
                // Maintenance must not stop at a cap: from here on, only the user's limits hold.
                run.eval.db.set_limits(self.limits);
                Ok((run, choice))
            }
            Err(Error::Resource(ResourceError { pred, kind: exec::ResourceKind::Cap { cap } })) => {
                let abandoned = start.elapsed();
                let mut run = self.evaluate(source, facts, progress())?;
                run.elapsed += abandoned;
                Ok((run, over_cap(&magic.program, pred, cap)))
            }
            Err(e) => Err(e),
        }
    }
}

/// The rewrite `mode` evaluates, for `query`: none for `auto` when it would pass the
/// `--max-adornments` limit (a rewrite that large is no narrowing worth its size; the
/// original program is evaluated instead), the limit's error for `on` and `off` (whose
/// rewrite is made only to be shown).
pub fn rewrite_for_mode(
    program: &Program,
    query: &ir::Query,
    mode: MagicMode,
    max_adornments: usize,
) -> Result<Option<MagicProgram>, magic::AdornmentLimit> {
    match magic::rewrite_with(program, query, rewrite_options(mode, max_adornments)) {
        Ok(magic) => Ok(Some(magic)),
        Err(_) if mode == MagicMode::Auto => Ok(None),
        Err(limit) => Err(limit),
    }
}

/// The rewrite `mode` evaluates: with adornment subsumption for `auto`, the exact
/// rewrite (what `--emit magic-ir` shows) otherwise.
pub fn rewrite_options(mode: MagicMode, max_adornments: usize) -> magic::RewriteOptions {
    magic::RewriteOptions { max_adornments, subsume: mode == MagicMode::Auto }
}

/// The report of an evaluation or update that stopped because a relation of `program`
/// outgrew `--max-tuples`, the memory budget (`--max-memory`) or the memory.
pub fn resource_diagnostic(program: &Program, error: &ResourceError) -> Diagnostic {
    if let exec::ResourceKind::ImprovingCycle { .. } = error.kind {
        return improving_cycle(program, error);
    }
    let d = Diagnostic::error(Code::RESOURCE_LIMIT, error.message(program));
    let d = match error.kind {
        exec::ResourceKind::TupleLimit { .. }
        | exec::ResourceKind::Cap { .. }
        | exec::ResourceKind::MemoryBudget { .. } => d,
        _ => d.with_help("free memory or lower what the program derives; `--max-memory SIZE` stops it earlier"),
    };
    let pred = program.pred(error.pred);
    let what = match pred.name {
        ir::PredName::Source(_) => "first used here",
        _ => "generated for this atom",
    };
    let d = if pred.span == diag::Span::default() { d } else { d.with_primary(pred.span, what) };
    let d = match error.kind {
        exec::ResourceKind::TupleLimit { .. } => blame_rule(program, error.pred, d, "the limit with `--max-tuples N`"),
        exec::ResourceKind::MemoryBudget { .. } => {
            blame_rule(program, error.pred, d, "the budget with `--max-memory SIZE`")
        }
        _ => d,
    };
    d.with_note("nothing was printed: the relations are incomplete")
}

/// E0047: a lattice relation's recursion kept improving a value; the report points at
/// the relation and its rules that read their own recursion.
fn improving_cycle(program: &Program, error: &ResourceError) -> Diagnostic {
    let mut d = Diagnostic::error(Code::IMPROVING_CYCLE, error.message(program));
    let pred = program.pred(error.pred);
    if pred.span != diag::Span::default() {
        d = d.with_primary(pred.span, "this relation keeps the best value of each group");
    }
    let name = program.pred_name(error.pred);
    if let Some(rule) =
        program.rules.iter().find(|r| r.head.pred == error.pred && r.body.iter().any(|a| a.pred == error.pred))
    {
        d = d.with_secondary(rule.span, format!("this rule improves `{name}` from itself"));
    }
    d.with_note("nothing was printed: the relations are incomplete")
}

/// Points at the rule that grew `pred` past a limit: one whose body atoms fall apart
/// into groups sharing no variable (it derives the product of their sizes), else a rule
/// reading `pred` itself (a closure that is simply that large), else the first deriving it.
/// `raise` names the limit and its flag, as in "raise the limit with `--max-tuples N`".
fn blame_rule(program: &Program, pred: PredId, d: Diagnostic, raise: &str) -> Diagnostic {
    let rules: Vec<&ir::Rule> = program.rules.iter().filter(|r| r.head.pred == pred).collect();
    let name = program.pred_name(pred);
    if let Some(rule) = rules.iter().find(|r| is_product(r)) {
        return d.with_secondary(rule.span, "the groups of body atoms of this rule share no variable").with_help(
            format!("this rule derives the product of its groups' sizes; join them on a shared variable, or raise {raise} if `{name}` is meant to be that large"),
        );
    }
    // A relation that outgrows the limit without a product usually grows by recursion.
    let recursive = rules.iter().find(|r| r.body.iter().any(|a| a.pred == pred));
    let label = match recursive {
        Some(_) => format!("this rule grows `{name}` from itself"),
        None => format!("a rule deriving `{name}`"),
    };
    match recursive.or(rules.first()) {
        Some(rule) => d.with_secondary(rule.span, label).with_help(format!(
            "`{name}` is simply this large ({} rule(s) derive it); raise {raise} if the machine has the memory, or ask a narrower query",
            rules.len()
        )),
        None => d,
    }
}

/// Whether the body atoms of `rule` that have variables form more than one group of
/// atoms linked by shared variables: the rule then joins groups with no condition.
fn is_product(rule: &ir::Rule) -> bool {
    let atoms: Vec<Vec<ir::Symbol>> = rule.body.iter().map(ir::Atom::vars).filter(|v| !v.is_empty()).collect();
    let Some(first) = atoms.first() else { return false };
    // Grow the group of the first atom until no atom outside it shares a variable.
    let mut reached: BTreeSet<ir::Symbol> = first.iter().copied().collect();
    let mut joined = vec![false; atoms.len()];
    joined[0] = true;
    let mut grew = true;
    while grew {
        grew = false;
        for (i, vars) in atoms.iter().enumerate() {
            if !joined[i] && vars.iter().any(|v| reached.contains(v)) {
                joined[i] = true;
                reached.extend(vars.iter().copied());
                grew = true;
            }
        }
    }
    joined.contains(&false)
}

/// A database holding exactly these input tuples, within `limits`.
pub fn edb_database(program: &Program, facts: &InputFacts, limits: exec::Limits) -> Database {
    let mut db = Database::new(program);
    db.set_limits(limits);
    for pred in facts.preds() {
        match facts.of(pred) {
            // A nullary predicate's tuples are all the one empty tuple.
            (_, []) => {
                db.insert(pred, &[]);
            }
            (_, values) => {
                db.insert_all(pred, values);
            }
        }
    }
    db
}

/// One evaluated program: the original or the magic rewrite.
pub struct Evaluated {
    /// The engine's evaluation: its database, rounds and counts.
    pub eval: Evaluation,
    /// The evaluated program's query, which names the relation holding the answers.
    query: ir::Query,
    /// The answers copied out of the relation, when first asked for: printing them
    /// reads the relation itself ([`Evaluated::selected`]).
    answers: std::cell::OnceCell<ir::Tuples>,
    /// How long the evaluation took.
    pub elapsed: Duration,
    /// The running dataflow, when the differential engine evaluated it.
    pub(crate) live: Option<RunningDataflow>,
}

impl Evaluated {
    /// The evaluated program's query.
    pub fn query(&self) -> &ir::Query {
        &self.query
    }

    /// The query's answers, sorted (copied out of the relation on first use).
    pub fn answers(&self) -> &ir::Tuples {
        self.answers.get_or_init(|| self.selected().collect())
    }

    /// The query's answers as they lie in the relation.
    pub fn selected(&self) -> SelectedRows<'_> {
        SelectedRows::of_query(&self.eval.db, &self.query)
    }
}

/// The plan an evaluation of `program` runs: with `whole` (`--all`) every rule, else only
/// the rules of the relations the query depends on, so a relation nothing asked for is
/// not computed (a program without a query evaluates every rule).
pub fn evaluation_plan(program: &Program, whole: bool) -> plan::ProgramPlan {
    let mut plan = plan::plan_program(program);
    if let Some(query) = program.query.as_ref().filter(|_| !whole) {
        plan.restrict_to(program, &[query.atom.pred]);
    }
    plan
}

/// Which program an evaluation used, and why: what `--magic` chose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MagicChoice {
    /// The magic rewrite (else the original program).
    pub magic: bool,
    /// Why, in a phrase: the flag, or what `--magic auto` saw.
    pub reason: String,
}

impl MagicChoice {
    /// `magic` or `original`, as the outputs name the programs.
    pub fn name(&self) -> &'static str {
        if self.magic {
            "magic"
        } else {
            "original"
        }
    }

    /// `magic program (--magic auto: ...)`, the line the trace and `--compare` show.
    pub fn text(&self) -> String {
        format!("{} program ({})", self.name(), self.reason)
    }
}

/// The caps of `--magic auto` on the demand relations of `magic`
/// ([`MagicProgram::demand_caps`]), with `|adom|` the distinct constants of the program
/// and its input: what the interner holds.
pub fn demand_caps(source: &Program, magic: &MagicProgram) -> Vec<(PredId, u32)> {
    magic.demand_caps(source.consts.len().max(magic.program.consts.len()))
}

/// What `--magic auto` chooses for `magic`, the rewrite with subsumption, given the sizes
/// a full evaluation of it reached (`len` of each relation) or before any (`None`): the
/// original program when every adornment is all-free, or when a demand relation is past
/// its cap.
pub fn auto_choice(source: &Program, magic: &MagicProgram, len: Option<&dyn Fn(PredId) -> usize>) -> MagicChoice {
    if magic.narrows_nothing() {
        return MagicChoice { magic: false, reason: "--magic auto: the rewrite narrows no demand".into() };
    }
    let caps = demand_caps(source, magic);
    if let Some(len) = len {
        if let Some(&(pred, cap)) = caps.iter().find(|(pred, cap)| len(*pred) > *cap as usize) {
            return over_cap(&magic.program, pred, cap);
        }
    }
    MagicChoice { magic: true, reason: "--magic auto: the demand stayed within its caps".into() }
}

pub(crate) fn over_cap(program: &Program, pred: PredId, cap: u32) -> MagicChoice {
    let name = program.pred_name(pred);
    MagicChoice { magic: false, reason: format!("--magic auto: demand `{name}` passed its cap of {cap} tuples") }
}

/// The predicates that head a rule of `program`: the relations evaluation derives.
pub fn derived_preds(program: &Program) -> Vec<PredId> {
    let heads: BTreeSet<PredId> = program.rules.iter().map(|r| r.head.pred).collect();
    heads.into_iter().collect()
}

/// Sizes of the derived relations of `program`, each `len(relation)`.
pub fn relation_sizes(program: &Program, len: impl Fn(PredId) -> usize) -> Vec<(PredId, usize)> {
    // An empty relation the query does not depend on was usually not evaluated at all
    // ([`evaluation_plan`]): listing it as empty would suggest it was.
    let needed = match &program.query {
        Some(query) => plan::needed_preds(program, &[query.atom.pred]),
        None => vec![true; program.preds.len()],
    };
    derived_preds(program).into_iter().map(|p| (p, len(p))).filter(|&(p, len)| len > 0 || needed[p.index()]).collect()
}
