//! The input facts of a session, stored flat: per predicate, one `Vec<u32>` holding its
//! tuples one after another. A facts file of millions of lines then costs a handful of
//! allocations to hold (and to free at exit) instead of one per fact.

use diag::Span;
use ir::{PredId, Tuple};

/// Input tuples by predicate, each predicate's in the order they were added (duplicates
/// included: the database applies set semantics).
#[derive(Clone, Debug, Default)]
pub struct InputFacts {
    /// Indexed by [`PredId::index`].
    preds: Vec<PredFacts>,
}

#[derive(Clone, Debug, Default)]
struct PredFacts {
    /// The arity of the first tuple added; every tuple has it (see [`InputFacts::push`]).
    arity: usize,
    /// The number of tuples, which `values` alone does not tell for arity 0.
    len: usize,
    values: Vec<u32>,
}

impl InputFacts {
    /// Adds a tuple of `pred`.
    ///
    /// A tuple whose length differs from the arity of the predicate's first tuple is
    /// dropped. The loaders report every such fact as an error, so a session never holds
    /// one, and the database would reject it anyway.
    pub fn push(&mut self, pred: PredId, tuple: impl ExactSizeIterator<Item = u32>) {
        let index = pred.index();
        if index >= self.preds.len() {
            self.preds.resize_with(index + 1, PredFacts::default);
        }
        let facts = &mut self.preds[index];
        if facts.len == 0 {
            facts.arity = tuple.len();
        } else if tuple.len() != facts.arity {
            return;
        }
        facts.values.extend(tuple);
        facts.len += 1;
    }

    /// The predicates with at least one tuple, in id order.
    pub fn preds(&self) -> impl Iterator<Item = PredId> + '_ {
        self.preds.iter().enumerate().filter(|(_, f)| f.len > 0).map(|(i, _)| PredId(i as u32))
    }

    /// The tuples of `pred`: how many, and their values one tuple after another.
    pub fn of(&self, pred: PredId) -> (usize, &[u32]) {
        self.preds.get(pred.index()).map_or((0, &[][..]), |f| (f.len, &f.values[..]))
    }

    /// Replaces every value by `f(predicate, column, value)`.
    pub fn map_values(&mut self, mut f: impl FnMut(PredId, usize, u32) -> u32) {
        for (i, facts) in self.preds.iter_mut().enumerate() {
            let arity = facts.arity.max(1);
            for (at, value) in facts.values.iter_mut().enumerate() {
                *value = f(PredId(i as u32), at % arity, *value);
            }
        }
    }

    /// Every tuple, by predicate in id order, then in the order added.
    pub fn iter(&self) -> impl Iterator<Item = (PredId, &[u32])> + '_ {
        self.preds.iter().enumerate().flat_map(|(i, facts)| {
            let (pred, arity) = (PredId(i as u32), facts.arity);
            // By index rather than `chunks_exact`, which cannot cut the zero-width rows of a
            // nullary predicate.
            (0..facts.len).map(move |row| (pred, &facts.values[row * arity..(row + 1) * arity]))
        })
    }
}

impl<'a> FromIterator<&'a Tuple> for InputFacts {
    fn from_iter<I: IntoIterator<Item = &'a Tuple>>(tuples: I) -> Self {
        let mut facts = InputFacts::default();
        for (pred, tuple) in tuples {
            facts.push(*pred, tuple.iter().copied());
        }
        facts
    }
}

/// Loaded facts go straight into the flat store.
impl syntax::FactSink for InputFacts {
    fn fact(&mut self, pred: PredId, values: &[u32], _span: Span) {
        let index = pred.index();
        let Some(facts) = self.preds.get_mut(index).filter(|f| f.len > 0 && f.arity == values.len()) else {
            return self.push(pred, values.iter().copied());
        };
        // Value by value: `extend` copies a two-value tuple with a call to `memcpy`, which
        // costs more than the whole rest of storing it.
        for &v in values {
            facts.values.push(v);
        }
        facts.len += 1;
    }

    fn reserve(&mut self, pred: PredId, tuples: usize, arity: usize) {
        let index = pred.index();
        if index >= self.preds.len() {
            self.preds.resize_with(index + 1, PredFacts::default);
        }
        self.preds[index].values.reserve(tuples.saturating_mul(arity));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuples_come_back_by_predicate_in_the_order_added() {
        let mut facts = InputFacts::default();
        facts.push(PredId(2), [1, 2].into_iter());
        facts.push(PredId(0), std::iter::empty());
        facts.push(PredId(2), [3, 4].into_iter());
        facts.push(PredId(0), std::iter::empty());
        facts.push(PredId(2), [1, 2].into_iter());
        facts.push(PredId(2), [9].into_iter());
        let all: Vec<(PredId, Vec<u32>)> = facts.iter().map(|(p, t)| (p, t.to_vec())).collect();
        assert_eq!(
            all,
            [
                (PredId(0), vec![]),
                (PredId(0), vec![]),
                (PredId(2), vec![1, 2]),
                (PredId(2), vec![3, 4]),
                (PredId(2), vec![1, 2]),
            ]
        );
        assert_eq!(facts.preds().collect::<Vec<_>>(), [PredId(0), PredId(2)]);
        let copy: InputFacts = all.iter().collect();
        assert!(copy.iter().eq(facts.iter()));
    }
}
