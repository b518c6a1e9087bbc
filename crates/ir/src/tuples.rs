//! The facts that pass between the pipeline and its engines: one fact ([`Tuple`]), a
//! batch of changes ([`Update`]), what a batch did to one relation ([`Tally`]), and sorted tuples of one arity stored flat
//! ([`Tuples`]): `arity` values per row in one vector, so that millions of facts (a
//! batch's net change, a query's answers) cost one allocation, not one per fact.

use crate::PredId;
use std::cmp::Ordering;

/// A fact of a relation: its predicate and its values, as the relation stores them (the
/// predicate's column types say how to read them). A fact written in a program is a
/// [`crate::Fact`], which adds where it was written.
pub type Tuple = (PredId, Vec<u32>);

/// How many facts of one relation each phase of a batch touched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Facts over-deleted.
    pub overdeleted: usize,
    /// Over-deleted facts rederived.
    pub rederived: usize,
    /// Facts the insertion phase derived that were over-deleted earlier in the batch.
    pub reinserted: usize,
    /// Facts the insertion phase derived that did not hold before the batch.
    pub inserted: usize,
}

impl Tally {
    /// The size of the relation's net change (facts removed, facts added): over-deleted
    /// facts that were neither rederived nor re-inserted went, and the inserted ones are
    /// new.
    pub fn net(&self) -> (usize, usize) {
        (self.overdeleted.saturating_sub(self.rederived + self.reinserted), self.inserted)
    }

    /// The net change of `pred` read off a report's tallies; none when no phase touched it.
    pub fn net_of(tallies: &[(PredId, Tally)], pred: PredId) -> (usize, usize) {
        tallies.iter().find(|(p, _)| *p == pred).map_or((0, 0), |(_, t)| t.net())
    }
}

/// One batch of input changes. Deletions are applied before insertions, so a tuple that
/// is both deleted and inserted ends up present.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Update {
    /// Facts to insert.
    pub inserts: Vec<Tuple>,
    /// Facts to delete.
    pub deletes: Vec<Tuple>,
}

/// Tuples of one arity in lexicographic order, without duplicates, stored flat.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tuples {
    arity: usize,
    /// Kept apart from `values` since nullary rows take no values.
    len: usize,
    values: Vec<u32>,
}

impl Tuples {
    /// The rows of `arity` values each in `values`, in any order and without duplicates,
    /// sorted in place.
    pub fn sorted(arity: usize, len: usize, mut values: Vec<u32>) -> Self {
        debug_assert_eq!(values.len(), arity * len);
        match arity {
            0 | 1 => values.sort_unstable(),
            2 => {
                // Packed keys sort as the pairs do. The values are dropped before the
                // sort takes its buffer, so that the peak stays at two copies.
                let mut keys: Vec<u64> =
                    values.chunks_exact(2).map(|t| u64::from(t[0]) << 32 | u64::from(t[1])).collect();
                drop(values);
                radix_sort(&mut keys);
                values = Vec::with_capacity(2 * len);
                values.extend(keys.iter().flat_map(|&k| [(k >> 32) as u32, k as u32]));
            }
            _ => {
                let row = |i: u32| &values[i as usize * arity..(i as usize + 1) * arity];
                let mut ids: Vec<u32> = (0..len as u32).collect();
                ids.sort_unstable_by(|&a, &b| row(a).cmp(row(b)));
                let mut sorted = Vec::with_capacity(values.len());
                for id in ids {
                    sorted.extend_from_slice(row(id));
                }
                values = sorted;
            }
        }
        Tuples { arity, len, values }
    }

    /// The rows of `arity` values each in `values`, already in order and distinct.
    pub fn from_sorted(arity: usize, len: usize, values: Vec<u32>) -> Self {
        debug_assert_eq!(values.len(), arity * len);
        let tuples = Tuples { arity, len, values };
        debug_assert!(tuples.iter().zip(tuples.iter().skip(1)).all(|(a, b)| a < b), "rows out of order");
        tuples
    }

    /// The number of values in each row.
    pub fn arity(&self) -> usize {
        self.arity
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The rows in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u32]> + '_ {
        let arity = self.arity;
        (0..self.len).map(move |i| &self.values[i * arity..(i + 1) * arity])
    }

    /// The rows in order, a vector each (for the few facts a report lists).
    pub fn to_vecs(&self) -> Vec<Vec<u32>> {
        self.iter().map(<[u32]>::to_vec).collect()
    }

    /// Whether `tuple` is one of the rows (binary search).
    pub fn contains(&self, tuple: &[u32]) -> bool {
        if tuple.len() != self.arity {
            return false;
        }
        if self.arity == 0 {
            return self.len > 0;
        }
        let rows = &self.values;
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match rows[mid * self.arity..(mid + 1) * self.arity].cmp(tuple) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return true,
            }
        }
        false
    }
}

/// Facts of several predicates, one flat sorted set for each predicate that has any.
pub type FactsByPred = Vec<(PredId, Tuples)>;

/// A few facts per relation, a vector each, as the lists of an update report hold them.
pub fn one_per_fact(lists: &[(PredId, Tuples)]) -> Vec<(PredId, Vec<Vec<u32>>)> {
    lists.iter().map(|(p, ts)| (*p, ts.to_vecs())).collect()
}

/// Sorts `keys` ascending: a least-significant-digit radix sort over bytes, which skips
/// the bytes all keys share. Interned values are small, so the packed pairs of a
/// relation's tuples differ in four of their eight bytes or fewer: four linear passes
/// where a comparison sort of millions of keys takes about twenty.
pub fn radix_sort(keys: &mut Vec<u64>) {
    const SMALL: usize = 1 << 10;
    if keys.len() <= SMALL {
        keys.sort_unstable();
        return;
    }
    let mut counts = vec![[0usize; 256]; 8];
    for &k in keys.iter() {
        for (digit, count) in counts.iter_mut().enumerate() {
            count[(k >> (8 * digit)) as usize & 0xff] += 1;
        }
    }
    let mut spare: Vec<u64> = vec![0; keys.len()];
    for (digit, count) in counts.iter().enumerate() {
        if count.contains(&keys.len()) {
            continue;
        }
        let mut next = [0usize; 256];
        let mut sum = 0;
        for (slot, &n) in next.iter_mut().zip(count) {
            *slot = sum;
            sum += n;
        }
        for &k in keys.iter() {
            let slot = &mut next[(k >> (8 * digit)) as usize & 0xff];
            spare[*slot] = k;
            *slot += 1;
        }
        std::mem::swap(keys, &mut spare);
    }
}

#[cfg(test)]
mod tests {
    use super::{radix_sort, Tuples};

    fn rows(a: &Tuples) -> Vec<Vec<u32>> {
        a.to_vecs()
    }

    #[test]
    fn tuples_sort_rows_lexicographically_at_every_arity() {
        let one = Tuples::sorted(1, 3, vec![5, 1, 3]);
        assert_eq!(rows(&one), vec![vec![1], vec![3], vec![5]]);
        let two = Tuples::sorted(2, 3, vec![2, 1, 1, 9, 2, 0]);
        assert_eq!(rows(&two), vec![vec![1, 9], vec![2, 0], vec![2, 1]]);
        assert!(two.contains(&[2, 0]) && !two.contains(&[2, 2]) && !two.contains(&[2]));
        let three = Tuples::sorted(3, 3, vec![1, 2, 3, 0, 9, 9, 1, 2, 0]);
        assert_eq!(rows(&three), vec![vec![0, 9, 9], vec![1, 2, 0], vec![1, 2, 3]]);
        let nullary = Tuples::sorted(0, 1, Vec::new());
        assert_eq!(rows(&nullary), vec![Vec::<u32>::new()]);
        assert!(nullary.contains(&[]));
        assert!(!Tuples::sorted(0, 0, Vec::new()).contains(&[]));
    }

    #[test]
    fn radix_sort_orders_keys_as_a_comparison_sort_does() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        // Small values (few distinct bytes), full-width ones, and a prefix shared by all:
        // each shape skips different bytes, around the size below which it compares.
        for len in [0, 1, 5, 1024, 1025, 3000, 20_000] {
            for shape in 0..3 {
                let mut keys: Vec<u64> = (0..len)
                    .map(|_| match shape {
                        0 => ((next() % 2048) << 32) | (next() % 3000),
                        1 => next(),
                        _ => 0xdead_0000_0000_0000 | (next() % 70_000),
                    })
                    .collect();
                let mut expected = keys.clone();
                expected.sort_unstable();
                radix_sort(&mut keys);
                assert_eq!(keys, expected, "{len} keys");
            }
        }
        let pairs: Vec<u32> = (0..5000u32).flat_map(|i| [(i * 7919) % 5000, 4999 - i]).collect();
        let sorted = Tuples::sorted(2, 5000, pairs);
        assert!(sorted.iter().zip(sorted.iter().skip(1)).all(|(a, b)| a < b));
    }
}
