//! The database: one set-semantics relation per predicate of a program.

use crate::relation::Relation;
use ir::{Fact, PredId, Program};

/// One relation per [`PredId`] (indexed by [`PredId::index`]); tuples are `u32` values
/// (`ir::Const.0`). Tuples of the wrong arity are rejected, never stored.
#[derive(Clone, Debug)]
pub struct Database {
    pub(crate) relations: Vec<Relation>,
}

impl Database {
    /// Empty relations with the arities of the program's predicates.
    pub fn new(program: &Program) -> Self {
        Database { relations: program.preds.iter().map(|p| Relation::new(p.arity)).collect() }
    }

    /// A database holding exactly `facts`; facts of unknown predicates or the wrong arity
    /// are skipped (the loader reports those before evaluation).
    pub fn from_facts(program: &Program, facts: &[Fact]) -> Self {
        let mut db = Database::new(program);
        let mut tuple = Vec::new();
        for fact in facts {
            tuple.clear();
            tuple.extend(fact.values.iter().map(|c| c.0));
            db.insert(fact.pred, &tuple);
        }
        db
    }

    /// Adds a tuple; false when it was present already or does not fit the predicate.
    pub fn insert(&mut self, pred: PredId, tuple: &[u32]) -> bool {
        match self.relations.get_mut(pred.index()) {
            Some(rel) if rel.arity == tuple.len() => rel.insert(tuple),
            _ => false,
        }
    }

    /// Removes a tuple; false when it was absent.
    pub fn remove(&mut self, pred: PredId, tuple: &[u32]) -> bool {
        self.relations.get_mut(pred.index()).is_some_and(|rel| rel.remove(tuple))
    }

    pub fn contains(&self, pred: PredId, tuple: &[u32]) -> bool {
        self.relations.get(pred.index()).is_some_and(|rel| rel.contains(tuple))
    }

    /// The number of tuples of `pred` (0 for an unknown predicate).
    pub fn len(&self, pred: PredId) -> usize {
        self.relations.get(pred.index()).map_or(0, Relation::len)
    }

    /// The number of tuples over all relations.
    pub fn total_len(&self) -> usize {
        self.relations.iter().map(Relation::len).sum()
    }

    /// The number of relations (the program's predicate count).
    pub fn relation_count(&self) -> usize {
        self.relations.len()
    }

    pub fn arity(&self, pred: PredId) -> usize {
        self.relations.get(pred.index()).map_or(0, |rel| rel.arity)
    }

    /// The tuples of `pred` in lexicographic order.
    pub fn sorted_tuples(&self, pred: PredId) -> Vec<Vec<u32>> {
        let Some(rel) = self.relations.get(pred.index()) else { return Vec::new() };
        let mut out: Vec<Vec<u32>> = rel.live_rows().map(<[u32]>::to_vec).collect();
        out.sort_unstable();
        out
    }

    /// Whether both databases hold the same tuples in every relation.
    pub fn same_tuples(&self, other: &Database) -> bool {
        self.relations.len() == other.relations.len()
            && (0..self.relations.len() as u32).all(|p| {
                let pred = PredId(p);
                self.len(pred) == other.len(pred) && self.sorted_tuples(pred) == other.sorted_tuples(pred)
            })
    }

    pub(crate) fn rel(&self, pred: PredId) -> &Relation {
        &self.relations[pred.index()]
    }

    pub(crate) fn rel_mut(&mut self, pred: PredId) -> &mut Relation {
        &mut self.relations[pred.index()]
    }

    /// Row-range ends of every relation: a version marker of the whole database.
    pub(crate) fn ends(&self) -> Vec<u32> {
        self.relations.iter().map(Relation::end).collect()
    }

    /// The tuples of `pred` in rows `from..` (the ones added since a marker), sorted.
    pub(crate) fn sorted_rows_since(&self, pred: PredId, from: u32) -> Vec<Vec<u32>> {
        let rel = self.rel(pred);
        let mut out: Vec<Vec<u32>> =
            (from..rel.end()).filter(|&r| rel.is_alive(r)).map(|r| rel.row(r).to_vec()).collect();
        out.sort_unstable();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plan::testing::program;

    #[test]
    fn facts_load_with_set_semantics_and_wrong_arities_are_rejected() {
        let p = program("E(a,b).\nE(a,b).\nE(b,c).\nR(X) <- E(X,Y)");
        let e = p.lookup_source("E").unwrap();
        let mut db = Database::from_facts(&p, &p.facts);
        assert_eq!(db.len(e), 2);
        assert!(!db.insert(e, &[1]));
        assert!(!db.contains(e, &[1]));
        let (a, b) = (p.consts.get("a").unwrap().0, p.consts.get("b").unwrap().0);
        assert!(db.contains(e, &[a, b]));
        assert_eq!(db.sorted_tuples(e)[0], vec![a, b]);
        assert!(!db.insert(PredId(99), &[]));
    }
}
