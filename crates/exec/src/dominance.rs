//! Dominance (Soufflé's subsumption, `r(x, d1) <= r(x, d2) :- d2 <= d1.`): the facts of a
//! relation that another of its facts dominates are removed, round by round, inside
//! recursion too (docs/semantics.md, Subsumption).
//!
//! After each round of the stratum that derives such a relation, [`Dominances::reduce`]
//! first drops the round's new facts that any other fact of the relation dominates, new
//! or old, all at once (so two new facts that dominate each other both go), and then
//! removes the older facts that a surviving new fact dominates. The rounds after read
//! only what is left: a dominated fact derived again is dropped again, and a fact that a
//! removed one derived stays unless something dominates it too. In a program whose rules
//! are monotone in the dominated column (a longer path never makes a shorter distance)
//! the result is the relation's non-dominated facts, the result of the naive fixpoint
//! that removes the dominated facts after every round.
//!
//! Each rule finds the facts to compare through an index of the relation on the columns
//! one fact fixes in the other: those that hold a constant or a variable of the other
//! atom (`x` above), so a fact meets only the facts of its own group.

use crate::database::Database;
use crate::limits::{ResourceError, ResourceKind};
use ir::{Dominance, PredId, Program, TermKind, ValueStore};

/// The dominance rules of a program, grouped by relation.
#[derive(Clone, Debug, Default)]
pub(crate) struct Dominances {
    relations: Vec<(PredId, Vec<Compared>)>,
    values: ValueStore,
}

/// One dominance rule with how each of its atoms finds the facts of the other.
#[derive(Clone, Debug)]
struct Compared {
    rule: Dominance,
    /// The dominating facts of a dominated fact: the dominating atom's columns its
    /// values fix, each with where the value comes from.
    dominating: Vec<(usize, Source)>,
    /// The dominated facts of a dominating fact, the same way round.
    dominated: Vec<(usize, Source)>,
}

/// Where a key column's value comes from: a constant, or a column of the other fact.
#[derive(Clone, Copy, Debug)]
enum Source {
    Const(u32),
    Column(usize),
}

/// The columns of `probed` whose value a fact matching `known` fixes.
fn key(probed: &ir::Atom, known: &ir::Atom) -> Vec<(usize, Source)> {
    let mut key = Vec::new();
    for (column, term) in probed.args.iter().enumerate() {
        let source = match term.kind {
            TermKind::Const(c) => Some(Source::Const(c.raw())),
            TermKind::Var(v) => known.args.iter().position(|t| t.var() == Some(v)).map(Source::Column),
        };
        // A variable repeated in `probed` is keyed once.
        let repeated = probed.args[..column].iter().any(|t| t.var().is_some() && t.var() == term.var());
        if let (Some(source), false) = (source, repeated) {
            key.push((column, source));
        }
    }
    key
}

impl Dominances {
    /// The dominance rules of `program`.
    pub(crate) fn new(program: &Program) -> Self {
        let mut relations: Vec<(PredId, Vec<Compared>)> = Vec::new();
        for rule in &program.dominances {
            let compared = Compared {
                dominating: key(&rule.dominating, &rule.dominated),
                dominated: key(&rule.dominated, &rule.dominating),
                rule: rule.clone(),
            };
            match relations.iter_mut().find(|(p, _)| *p == rule.pred()) {
                Some((_, rules)) => rules.push(compared),
                None => relations.push((rule.pred(), vec![compared])),
            }
        }
        Dominances { relations, values: program.consts.clone() }
    }

    /// Whether the program has no dominance rule.
    pub(crate) fn is_empty(&self) -> bool {
        self.relations.is_empty()
    }

    /// Removes the dominated facts of each relation of `preds` that has dominance rules,
    /// whose rows from `from[i]` on (for `preds[i]`) are the round's new facts: first
    /// the new facts another fact dominates, then the older facts a new one left
    /// dominates. Returns how many new facts are left.
    pub(crate) fn reduce(&self, preds: &[PredId], from: &[u32], db: &mut Database) -> usize {
        let mut left = 0;
        for (&pred, &from) in preds.iter().zip(from) {
            let Some((_, rules)) = self.relations.iter().find(|(p, _)| *p == pred) else { continue };
            let end = db.rel(pred).end();
            let new: Vec<u32> = (from..end).filter(|&r| db.rel(pred).is_alive(r)).collect();
            if new.is_empty() {
                continue;
            }
            // Judged against the relation as the round left it, then removed at once.
            let rejected: Vec<u32> =
                new.iter().copied().filter(|&r| rules.iter().any(|c| self.dominated_by_any(c, pred, r, db))).collect();
            db.remove_rows(pred, &rejected);
            let kept: Vec<u32> = new.into_iter().filter(|r| rejected.binary_search(r).is_err()).collect();
            left += kept.len();
            let mut evicted: Vec<u32> = Vec::new();
            for &r in &kept {
                for c in rules {
                    self.dominated_of(c, pred, r, from, db, &mut evicted);
                }
            }
            evicted.sort_unstable();
            evicted.dedup();
            db.remove_rows(pred, &evicted);
        }
        left
    }

    /// Whether a live row of `pred` other than row `r` dominates row `r` by rule `c`.
    fn dominated_by_any(&self, c: &Compared, pred: PredId, r: u32, db: &mut Database) -> bool {
        let mut found = false;
        self.candidates(&c.dominating, pred, r, db, &mut |s, rel| {
            if s != r && c.rule.holds(rel.row(r), rel.row(s), &self.values) {
                found = true;
            }
            found
        });
        found
    }

    /// Adds to `out` the live rows of `pred` before `before` that row `r` dominates by
    /// rule `c`.
    fn dominated_of(&self, c: &Compared, pred: PredId, r: u32, before: u32, db: &mut Database, out: &mut Vec<u32>) {
        self.candidates(&c.dominated, pred, r, db, &mut |s, rel| {
            if s < before && c.rule.holds(rel.row(s), rel.row(r), &self.values) {
                out.push(s);
            }
            false
        });
    }

    /// E0047: the evaluation of a stratum holding a lattice relation (a recursive `min`
    /// or `max`) that ran `rounds` rounds and still improved a value, more rounds than the
    /// facts of `preds`, its relations, plus one. A fact a round keeps has a premise the
    /// round before kept, so the facts of a long run form a chain of that many facts;
    /// each plain fact is new once and each group keeps one value, so a chain longer than
    /// the facts meets a group twice, the later value better than the earlier one it was
    /// derived from: a cycle that improves a value, which it does again each time round.
    pub(crate) fn check_improving(&self, preds: &[PredId], rounds: usize, db: &Database) -> Result<(), ResourceError> {
        let lattice = preds
            .iter()
            .copied()
            .find(|&p| self.relations.iter().any(|(q, rules)| *q == p && rules.iter().any(|c| c.rule.lattice)));
        let Some(pred) = lattice else { return Ok(()) };
        let facts: usize = preds.iter().map(|&p| db.len(p)).sum();
        if rounds <= facts + 1 {
            return Ok(());
        }
        Err(ResourceError { pred, kind: ResourceKind::ImprovingCycle { rounds } })
    }

    /// Calls `f` with each live row of `pred` whose `key` columns hold the values row `r`
    /// gives them, until it returns true: through an index on those columns, or over
    /// every row when no column is fixed.
    fn candidates(
        &self,
        key: &[(usize, Source)],
        pred: PredId,
        r: u32,
        db: &mut Database,
        f: &mut dyn FnMut(u32, &crate::relation::Rows) -> bool,
    ) {
        if key.is_empty() {
            let rel = db.rel(pred);
            for s in (0..rel.end()).filter(|&s| rel.is_alive(s)) {
                if f(s, rel) {
                    return;
                }
            }
            return;
        }
        let columns: Vec<usize> = key.iter().map(|&(column, _)| column).collect();
        let rel = db.rel_mut(pred);
        let id = rel.ensure_index(&columns);
        rel.sync_index(id);
        let rel = db.rel(pred);
        let row = rel.row(r);
        let values: Vec<u32> = key
            .iter()
            .map(|&(_, source)| match source {
                Source::Const(value) => value,
                Source::Column(column) => row[column],
            })
            .collect();
        rel.indexes[id].chain(|i| values[i]).for_each_until(|s, _| match rel.is_alive(s) && f(s, rel) {
            true => std::ops::ControlFlow::Break(()),
            false => std::ops::ControlFlow::Continue(()),
        });
    }
}
