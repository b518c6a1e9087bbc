//! Flat relation storage: fixed-arity rows of `u32` in one vector, a hash set of row ids
//! for set semantics, and hash indexes on key columns that are maintained as rows are added.
//!
//! Rows are appended and never move until [`Relation::compact`], so a prefix of the rows is
//! a consistent older version of the relation: the engines read "old", "delta" and "full"
//! versions as row ranges. Deleted rows become tombstones that every reader skips.

use hashbrown::hash_table::{Entry, HashTable};
use rustc_hash::FxHasher;
use std::hash::Hasher;

/// Terminates an index chain.
pub(crate) const NIL: u32 = u32::MAX;

/// Hashes a sequence of values; rows, keys and probes all hash through this one function.
#[inline]
pub(crate) fn hash_values(values: impl Iterator<Item = u32>) -> u64 {
    let mut hasher = FxHasher::default();
    for v in values {
        hasher.write_u32(v);
    }
    hasher.finish()
}

/// A hash index on some columns: for each distinct key the newest row with that key, and
/// per row the next older row with the same key. Chains therefore list rows in descending
/// order, which lets a reader restricted to rows `lo..hi` skip and stop early.
#[derive(Clone, Debug)]
pub(crate) struct Index {
    pub(crate) cols: Vec<usize>,
    heads: HashTable<u32>,
    pub(crate) next: Vec<u32>,
}

impl Index {
    fn add(&mut self, data: &[u32], arity: usize, row: u32) {
        let cols = &self.cols;
        let at = |r: u32, c: usize| data[r as usize * arity + c];
        let hash = hash_values(cols.iter().map(|&c| at(row, c)));
        let entry = self.heads.entry(
            hash,
            |&h| cols.iter().all(|&c| at(h, c) == at(row, c)),
            |&h| hash_values(cols.iter().map(|&c| at(h, c))),
        );
        match entry {
            Entry::Occupied(mut e) => {
                self.next.push(*e.get());
                *e.get_mut() = row;
            }
            Entry::Vacant(v) => {
                self.next.push(NIL);
                v.insert(row);
            }
        }
    }

    /// The newest row whose key columns equal `key(i)` for each index column `i`, or [`NIL`].
    #[inline]
    pub(crate) fn first(&self, data: &[u32], arity: usize, hash: u64, key: impl Fn(usize) -> u32) -> u32 {
        let cols = &self.cols;
        self.heads
            .find(hash, |&h| cols.iter().enumerate().all(|(i, &c)| data[h as usize * arity + c] == key(i)))
            .copied()
            .unwrap_or(NIL)
    }
}

/// One relation: a set of tuples of fixed arity.
#[derive(Clone, Debug)]
pub(crate) struct Relation {
    pub(crate) arity: usize,
    pub(crate) data: Vec<u32>,
    /// Rows ever appended since the last compaction, tombstones included.
    rows: u32,
    /// Bitset of tombstoned rows; rows beyond its end are alive.
    dead: Vec<u64>,
    dead_count: u32,
    set: HashTable<u32>,
    pub(crate) indexes: Vec<Index>,
}

impl Relation {
    pub(crate) fn new(arity: usize) -> Self {
        Relation {
            arity,
            data: Vec::new(),
            rows: 0,
            dead: Vec::new(),
            dead_count: 0,
            set: HashTable::new(),
            indexes: Vec::new(),
        }
    }

    /// The end of the row range, tombstones included: the engines' version marker.
    #[inline]
    pub(crate) fn end(&self) -> u32 {
        self.rows
    }

    /// The number of tuples (live rows).
    pub(crate) fn len(&self) -> usize {
        (self.rows - self.dead_count) as usize
    }

    #[inline]
    pub(crate) fn row(&self, r: u32) -> &[u32] {
        let start = r as usize * self.arity;
        &self.data[start..start + self.arity]
    }

    #[inline]
    pub(crate) fn is_alive(&self, r: u32) -> bool {
        self.dead.get(r as usize / 64).is_none_or(|w| w & (1 << (r % 64)) == 0)
    }

    fn find(&self, tuple: &[u32]) -> Option<u32> {
        let (data, arity) = (&self.data, self.arity);
        let hash = hash_values(tuple.iter().copied());
        self.set.find(hash, |&r| &data[r as usize * arity..(r as usize + 1) * arity] == tuple).copied()
    }

    pub(crate) fn contains(&self, tuple: &[u32]) -> bool {
        tuple.len() == self.arity && self.find(tuple).is_some()
    }

    /// Adds a tuple of the right arity; false when it was already present.
    pub(crate) fn insert(&mut self, tuple: &[u32]) -> bool {
        debug_assert_eq!(tuple.len(), self.arity, "callers check the arity");
        let (data, arity) = (&self.data, self.arity);
        let hash = hash_values(tuple.iter().copied());
        let entry = self.set.entry(
            hash,
            |&r| &data[r as usize * arity..(r as usize + 1) * arity] == tuple,
            |&r| hash_values(data[r as usize * arity..(r as usize + 1) * arity].iter().copied()),
        );
        let Entry::Vacant(vacant) = entry else { return false };
        let row = self.rows;
        vacant.insert(row);
        self.data.extend_from_slice(tuple);
        self.rows += 1;
        for index in &mut self.indexes {
            index.add(&self.data, arity, row);
        }
        true
    }

    /// Tombstones a tuple; false when it was absent.
    pub(crate) fn remove(&mut self, tuple: &[u32]) -> bool {
        if tuple.len() != self.arity {
            return false;
        }
        let (data, arity) = (&self.data, self.arity);
        let hash = hash_values(tuple.iter().copied());
        let Ok(entry) = self.set.find_entry(hash, |&r| &data[r as usize * arity..(r as usize + 1) * arity] == tuple)
        else {
            return false;
        };
        let (row, _) = entry.remove();
        let word = row as usize / 64;
        if self.dead.len() <= word {
            self.dead.resize(word + 1, 0);
        }
        self.dead[word] |= 1 << (row % 64);
        self.dead_count += 1;
        true
    }

    /// Empties the relation, keeping its allocations (indexes are dropped).
    pub(crate) fn clear(&mut self) {
        self.data.clear();
        self.rows = 0;
        self.dead.clear();
        self.dead_count = 0;
        self.set.clear();
        self.indexes.clear();
    }

    /// Returns the id of the index on `cols`, building it over the existing rows if new.
    pub(crate) fn ensure_index(&mut self, cols: &[usize]) -> usize {
        if let Some(i) = self.indexes.iter().position(|ix| ix.cols == cols) {
            return i;
        }
        let mut index =
            Index { cols: cols.to_vec(), heads: HashTable::new(), next: Vec::with_capacity(self.rows as usize) };
        for r in 0..self.rows {
            index.add(&self.data, self.arity, r);
        }
        self.indexes.push(index);
        self.indexes.len() - 1
    }

    /// Live rows in row order.
    pub(crate) fn live_rows(&self) -> impl Iterator<Item = &[u32]> + '_ {
        (0..self.rows).filter(|&r| self.is_alive(r)).map(|r| self.row(r))
    }

    /// Drops tombstones and renumbers rows when at least half of them are dead. Only safe
    /// between evaluations, since row ranges held by a reader become meaningless.
    pub(crate) fn compact_if_sparse(&mut self) {
        if self.dead_count == 0 || self.dead_count * 2 < self.rows {
            return;
        }
        let mut fresh = Relation::new(self.arity);
        for row in self.live_rows() {
            fresh.insert(row);
        }
        for index in &self.indexes {
            fresh.ensure_index(&index.cols);
        }
        *self = fresh;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_semantics_and_tombstones() {
        let mut r = Relation::new(2);
        assert!(r.insert(&[1, 2]));
        assert!(!r.insert(&[1, 2]));
        assert!(r.insert(&[1, 3]));
        assert_eq!(r.len(), 2);
        assert!(r.remove(&[1, 2]));
        assert!(!r.remove(&[1, 2]));
        assert!(!r.contains(&[1, 2]));
        assert_eq!(r.live_rows().collect::<Vec<_>>(), vec![&[1, 3][..]]);
        assert!(r.insert(&[1, 2]));
        assert_eq!(r.end(), 3);
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn index_chains_list_rows_newest_first() {
        let mut r = Relation::new(2);
        r.insert(&[1, 2]);
        let ix = r.ensure_index(&[0]);
        r.insert(&[5, 2]);
        r.insert(&[1, 4]);
        let index = &r.indexes[ix];
        let mut chain = Vec::new();
        let mut row = index.first(&r.data, 2, hash_values([1].into_iter()), |_| 1);
        while row != NIL {
            chain.push(row);
            row = index.next[row as usize];
        }
        assert_eq!(chain, vec![2, 0]);
    }

    #[test]
    fn zero_arity_relation_holds_at_most_the_empty_tuple() {
        let mut r = Relation::new(0);
        assert!(!r.contains(&[]));
        assert!(r.insert(&[]));
        assert!(!r.insert(&[]));
        assert_eq!(r.len(), 1);
        assert_eq!(r.live_rows().count(), 1);
    }

    #[test]
    fn compaction_keeps_tuples_and_indexes() {
        let mut r = Relation::new(1);
        r.ensure_index(&[0]);
        for v in 0..10 {
            r.insert(&[v]);
        }
        for v in 0..6 {
            r.remove(&[v]);
        }
        r.compact_if_sparse();
        assert_eq!(r.end(), 4);
        assert!(r.contains(&[7]));
        assert_eq!(r.indexes[0].next.len(), 4);
    }
}
