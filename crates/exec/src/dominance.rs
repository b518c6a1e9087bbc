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
//! Each rule finds the facts to compare by a join from the fact it judges through the
//! body's atoms to the other fact ([`ir::DominancePlan`]), each atom probed through an
//! index of its relation on the columns the atoms before it fix: a fact meets only the
//! facts of its own group (`x` above), or only those a body atom relates it to.
//!
//! When a rule's body reads a relation of the stratum being evaluated (the relation
//! itself included), a round can make an old fact dominated without a new fact of the
//! relation: then every fact of the relation is judged after each round, all at once.

use crate::database::Database;
use crate::limits::{ResourceError, ResourceKind};
use ir::{Dominance, DominanceFacts, DominancePlan, Known, PredId, Program, ValueStore};
use std::ops::ControlFlow;

/// The dominance rules of a program, grouped by relation.
#[derive(Clone, Debug, Default)]
pub(crate) struct Dominances {
    relations: Vec<(PredId, Vec<Compared>)>,
    values: ValueStore,
}

/// One dominance rule with the order of its search from each of its facts.
#[derive(Clone, Debug)]
struct Compared {
    rule: Dominance,
    /// From a dominated fact to the facts that dominate it.
    dominating: DominancePlan,
    /// From a dominating fact to the facts it dominates.
    dominated: DominancePlan,
}

/// The facts of a [`Database`] as a dominance rule reads them: the live rows, through
/// the index on a pattern's fixed columns when there is one (a row's id is its row).
pub(crate) struct Rows<'a>(pub(crate) &'a Database);

impl DominanceFacts for Rows<'_> {
    fn each(&self, pred: PredId, pattern: &[Option<u32>], f: &mut dyn FnMut(u32, &[u32]) -> bool) -> bool {
        let rel = self.0.rel(pred);
        let columns: Vec<usize> = (0..pattern.len()).filter(|&c| pattern[c].is_some()).collect();
        let matches = |row: &[u32]| pattern.iter().zip(row).all(|(p, v)| p.is_none_or(|p| p == *v));
        let index = (!columns.is_empty()).then(|| rel.indexes.iter().position(|ix| ix.cols == columns)).flatten();
        let Some(id) = index else {
            return (0..rel.end()).any(|r| rel.is_alive(r) && matches(rel.row(r)) && f(r, rel.row(r)));
        };
        let mut stopped = false;
        rel.indexes[id].chain(|i| pattern[columns[i]].unwrap_or(0)).for_each_until(|r, _| {
            match rel.is_alive(r) && matches(rel.row(r)) && f(r, rel.row(r)) {
                true => {
                    stopped = true;
                    ControlFlow::Break(())
                }
                false => ControlFlow::Continue(()),
            }
        });
        stopped
    }
}

impl Dominances {
    /// The dominance rules of `program`.
    pub(crate) fn new(program: &Program) -> Self {
        let mut relations: Vec<(PredId, Vec<Compared>)> = Vec::new();
        for rule in &program.dominances {
            let compared = Compared {
                dominating: rule.plan(Known::Dominated),
                dominated: rule.plan(Known::Dominating),
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

    /// `None` for a program without dominance rules; otherwise whether they all come
    /// from recursive `min`s and `max`s (lattice relations) rather than subsumptive
    /// clauses.
    pub(crate) fn lattice(&self) -> Option<bool> {
        let mut rules = self.relations.iter().flat_map(|(_, rules)| rules).peekable();
        rules.peek()?;
        Some(rules.all(|c| c.rule.lattice))
    }

    /// Removes the dominated facts of each relation of `preds` that has dominance rules,
    /// whose rows from `from[i]` on (for `preds[i]`) are the round's new facts: first
    /// the new facts another fact dominates, then the older facts a new one left
    /// dominates (every fact at once when a rule's body reads a relation of `preds`).
    /// Returns how many new facts are left.
    pub(crate) fn reduce(&self, preds: &[PredId], from: &[u32], db: &mut Database) -> usize {
        let mut left = 0;
        for (&pred, &from) in preds.iter().zip(from) {
            let Some((_, rules)) = self.relations.iter().find(|(p, _)| *p == pred) else { continue };
            let whole = rules.iter().any(|c| c.rule.reads().any(|p| preds.contains(&p)));
            let judged_from = if whole { 0 } else { from };
            let end = db.rel(pred).end();
            let judged: Vec<u32> = (judged_from..end).filter(|&r| db.rel(pred).is_alive(r)).collect();
            if judged.is_empty() {
                continue;
            }
            for c in rules {
                for plan in [&c.dominating, &c.dominated] {
                    index(&c.rule, plan, db);
                }
            }
            // Judged against the relation as the round left it, then removed at once.
            let rejected: Vec<u32> = judged
                .iter()
                .copied()
                .filter(|&r| rules.iter().any(|c| self.dominated_by_any(c, pred, r, db)))
                .collect();
            db.remove_rows(pred, &rejected);
            let kept: Vec<u32> = judged.into_iter().filter(|r| rejected.binary_search(r).is_err()).collect();
            left += kept.iter().filter(|&&r| r >= from).count();
            if whole {
                continue;
            }
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
    fn dominated_by_any(&self, c: &Compared, pred: PredId, r: u32, db: &Database) -> bool {
        c.rule.search(&c.dominating, db.rel(pred).row(r), &self.values, &Rows(db), &mut |_, _| true)
    }

    /// Adds to `out` the live rows of `pred` before `before` that row `r` dominates by
    /// rule `c`.
    fn dominated_of(&self, c: &Compared, pred: PredId, r: u32, before: u32, db: &Database, out: &mut Vec<u32>) {
        c.rule.search(&c.dominated, db.rel(pred).row(r), &self.values, &Rows(db), &mut |s, _| {
            if s < before {
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
}

/// Declares and brings up to date the indexes a search by `plan` of `rule` probes: one per
/// atom on the columns the atoms before it fix.
fn index(rule: &Dominance, plan: &DominancePlan, db: &mut Database) {
    let (_, other) = match plan.known {
        Known::Dominated => (&rule.dominated, &rule.dominating),
        Known::Dominating => (&rule.dominating, &rule.dominated),
    };
    let steps = plan.steps.iter().map(|s| (s.body.map_or(other, |i| &rule.body[i]), &s.key));
    for (atom, key) in steps.chain(rule.negated.iter().zip(&plan.negated)) {
        if key.is_empty() {
            continue;
        }
        let rel = db.rel_mut(atom.pred);
        let id = rel.ensure_index(key);
        rel.sync_index(id);
    }
}
