//! The explain stage's evaluation side: which relations of an evaluated program hold a
//! source fact, and the evaluation of a fact's own demand when the user's query did not
//! demand it. Proofs themselves are the native engine's (`exec::Explainer`).

use crate::evaluate::Evaluator;
use crate::input_facts::InputFacts;
use exec::{Database, Threads};
use ir::{Fact, PredId, PredKind, PredName, Program, TermKind};

/// The relations of `program` (evaluated from `source`, through the magic rewrite when
/// `magic`) that hold the facts of source relation `pred`: itself, or through magic
/// sets its answer relations, the query's adornment first.
pub fn fact_relations(source: &Program, program: &Program, magic: bool, pred: PredId) -> Vec<PredId> {
    if !magic || source.pred(pred).kind == PredKind::Edb {
        return vec![pred];
    }
    let base = source.pred(pred).name.base();
    let queried = program.query.as_ref().map(|q| q.atom.pred);
    let mut found: Vec<PredId> =
        program.pred_ids().filter(|&p| matches!(&program.pred(p).name, PredName::Answer(s, _) if *s == base)).collect();
    found.sort_by_key(|&p| (Some(p) != queried, p));
    found
}

/// A fact's own demand, evaluated: the program that derives what the fact needs, and
/// its database.
#[derive(Debug)]
pub struct OwnDemand {
    /// The source program with the fact as its query.
    pub source: Program,
    /// The magic rewrite of `source` (or `source` itself when the rewrite is too large).
    pub program: Program,
    /// Whether `program` is the rewrite.
    pub magic: bool,
    /// The evaluation's relations.
    pub db: Database,
}

/// Evaluates the own demand of `fact` (of `source`'s relations): the magic rewrite of
/// `source` for the query that is the fact itself (every position bound), over the
/// input facts `db` holds now, with `values` the interner that holds the fact's
/// constants. Only what the fact needs is derived, so the fact holds there exactly when
/// it holds in the original program. When even that rewrite is too large, the original
/// program is evaluated. An evaluation that stops says why, in a line.
pub fn own_demand(
    source: &Program,
    values: &ir::ValueStore,
    db: &Database,
    fact: &Fact,
    limits: exec::Limits,
) -> Result<OwnDemand, String> {
    let mut source = source.clone();
    source.consts = values.clone();
    let args = (fact.values.iter().enumerate())
        .map(|(i, &c)| ir::Term { kind: TermKind::Const(source.value(fact.pred, i, c)), span: fact.span })
        .collect();
    let query = ir::Query::new(ir::Atom { pred: fact.pred, args, span: fact.span });
    source.query = Some(query.clone());
    let mut facts = InputFacts::default();
    // A source program may know predicates the database does not (named by updates
    // only); no rule reads them.
    let known = |p: PredId| p.index() < db.relation_count();
    for pred in source.pred_ids().filter(|&p| source.pred(p).kind == PredKind::Edb && known(p)) {
        for tuple in db.tuples(pred) {
            facts.push(pred, tuple.iter().copied());
        }
    }
    let (program, magic) = match magic::rewrite_with(&source, &query, magic::RewriteOptions::default()) {
        Ok(rewrite) => (rewrite.program, true),
        Err(_) => (source.clone(), false),
    };
    match Evaluator::recompute(Threads::available(), limits).evaluate(&program, &facts, None) {
        Ok(run) => Ok(OwnDemand { source, program, magic, db: run.eval.db }),
        Err(e) => Err(e.to_diagnostic(&program).message),
    }
}
