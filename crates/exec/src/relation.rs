//! Flat relation storage: fixed-arity rows of `u32` in one vector ([`Rows`], what joins
//! read, with hash indexes maintained as rows are added) and a hash set of row ids for set
//! semantics ([`RowSet`]).
//!
//! The two halves are separate so that a join can read the rows of a relation while it
//! stages new tuples into the same relation's set: a staged tuple is deduplicated at once
//! (one probe per derivation) but becomes a row only at [`RowSet::commit`].
//!
//! Rows are appended and never move until compaction, so a prefix of the rows is a
//! consistent older version of the relation: the engines read "old", "delta" and "full"
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

/// The rows of a relation and their indexes.
#[derive(Clone, Debug)]
pub(crate) struct Rows {
    pub(crate) arity: usize,
    pub(crate) data: Vec<u32>,
    /// Rows ever appended since the last compaction, tombstones included.
    end: u32,
    /// Bitset of tombstoned rows; rows beyond its end are alive.
    dead: Vec<u64>,
    dead_count: u32,
    pub(crate) indexes: Vec<Index>,
}

impl Rows {
    fn new(arity: usize) -> Self {
        Rows { arity, data: Vec::new(), end: 0, dead: Vec::new(), dead_count: 0, indexes: Vec::new() }
    }

    /// The end of the row range, tombstones included: the engines' version marker.
    #[inline]
    pub(crate) fn end(&self) -> u32 {
        self.end
    }

    /// The number of live rows.
    pub(crate) fn len(&self) -> usize {
        (self.end - self.dead_count) as usize
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

    fn push(&mut self, tuple: &[u32]) {
        let row = self.end;
        self.data.extend_from_slice(tuple);
        self.end += 1;
        for index in &mut self.indexes {
            index.add(&self.data, self.arity, row);
        }
    }

    fn kill(&mut self, row: u32) {
        let word = row as usize / 64;
        if self.dead.len() <= word {
            self.dead.resize(word + 1, 0);
        }
        self.dead[word] |= 1 << (row % 64);
        self.dead_count += 1;
    }

    /// Live rows in row order.
    pub(crate) fn live_rows(&self) -> impl Iterator<Item = &[u32]> + '_ {
        (0..self.end).filter(|&r| self.is_alive(r)).map(|r| self.row(r))
    }

    /// Returns the id of the index on `cols`, building it over the existing rows if new.
    pub(crate) fn ensure_index(&mut self, cols: &[usize]) -> usize {
        if let Some(i) = self.indexes.iter().position(|ix| ix.cols == cols) {
            return i;
        }
        let mut index =
            Index { cols: cols.to_vec(), heads: HashTable::new(), next: Vec::with_capacity(self.end as usize) };
        for r in 0..self.end {
            index.add(&self.data, self.arity, r);
        }
        self.indexes.push(index);
        self.indexes.len() - 1
    }
}

/// The set of tuples of a relation: ids of its rows, plus staged tuples that will become
/// rows `rows.end()..` at the next commit.
#[derive(Clone, Debug, Default)]
pub(crate) struct RowSet {
    table: HashTable<u32>,
    staged: Vec<u32>,
    staged_count: u32,
}

/// Tuple equality without a `memcmp` call: tuples are short, and the call itself costs more
/// than the comparison in the innermost loops.
#[inline]
pub(crate) fn same(a: &[u32], b: &[u32]) -> bool {
    match (a, b) {
        ([], []) => true,
        ([a0], [b0]) => a0 == b0,
        ([a0, a1], [b0, b1]) => a0 == b0 && a1 == b1,
        ([a0, a1, a2], [b0, b1, b2]) => a0 == b0 && a1 == b1 && a2 == b2,
        _ => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y),
    }
}

/// The values of row `r`, committed or staged.
#[inline]
fn tuple_at<'a>(rows: &'a Rows, staged: &'a [u32], r: u32) -> &'a [u32] {
    if r < rows.end {
        rows.row(r)
    } else {
        let start = (r - rows.end) as usize * rows.arity;
        &staged[start..start + rows.arity]
    }
}

impl RowSet {
    fn find(&self, rows: &Rows, tuple: &[u32]) -> Option<u32> {
        let hash = hash_values(tuple.iter().copied());
        self.table.find(hash, |&r| same(tuple_at(rows, &self.staged, r), tuple)).copied()
    }

    pub(crate) fn contains(&self, rows: &Rows, tuple: &[u32]) -> bool {
        tuple.len() == rows.arity && self.find(rows, tuple).is_some()
    }

    /// Adds a tuple of the right arity to the set and the staging buffer; false when it was
    /// present (as a row or staged).
    #[inline]
    pub(crate) fn stage(&mut self, rows: &Rows, tuple: &[u32]) -> bool {
        debug_assert_eq!(tuple.len(), rows.arity, "callers check the arity");
        let staged = &self.staged;
        let hash = hash_values(tuple.iter().copied());
        let entry = self.table.entry(
            hash,
            |&r| same(tuple_at(rows, staged, r), tuple),
            |&r| hash_values(tuple_at(rows, staged, r).iter().copied()),
        );
        let Entry::Vacant(vacant) = entry else { return false };
        vacant.insert(rows.end + self.staged_count);
        self.staged.extend_from_slice(tuple);
        self.staged_count += 1;
        true
    }

    /// Turns the staged tuples into rows (indexes included); returns how many there were.
    pub(crate) fn commit(&mut self, rows: &mut Rows) -> u32 {
        let count = self.staged_count;
        if rows.arity == 0 {
            for _ in 0..count {
                rows.push(&[]);
            }
        } else {
            for tuple in self.staged.chunks_exact(rows.arity) {
                rows.push(tuple);
            }
        }
        self.staged.clear();
        self.staged_count = 0;
        count
    }

    /// Tombstones a committed tuple; false when it was absent. Nothing may be staged.
    pub(crate) fn remove(&mut self, rows: &mut Rows, tuple: &[u32]) -> bool {
        debug_assert_eq!(self.staged_count, 0, "removal happens between joins");
        if tuple.len() != rows.arity {
            return false;
        }
        let hash = hash_values(tuple.iter().copied());
        let Ok(entry) = self.table.find_entry(hash, |&r| same(rows.row(r), tuple)) else { return false };
        let (row, _) = entry.remove();
        rows.kill(row);
        true
    }
}

/// Rows with their set: a whole relation.
#[derive(Clone, Debug)]
pub(crate) struct Relation {
    pub(crate) rows: Rows,
    pub(crate) set: RowSet,
}

impl Relation {
    pub(crate) fn new(arity: usize) -> Self {
        Relation { rows: Rows::new(arity), set: RowSet::default() }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    #[cfg(test)]
    pub(crate) fn contains(&self, tuple: &[u32]) -> bool {
        self.set.contains(&self.rows, tuple)
    }

    /// Adds a tuple of the right arity; false when it was already present.
    pub(crate) fn insert(&mut self, tuple: &[u32]) -> bool {
        let added = self.set.stage(&self.rows, tuple);
        self.set.commit(&mut self.rows);
        added
    }

    #[cfg(test)]
    pub(crate) fn remove(&mut self, tuple: &[u32]) -> bool {
        self.set.remove(&mut self.rows, tuple)
    }

    pub(crate) fn live_rows(&self) -> impl Iterator<Item = &[u32]> + '_ {
        self.rows.live_rows()
    }

    /// Drops tombstones and renumbers rows when at least half of them are dead. Only safe
    /// between evaluations, since row ranges held by a reader become meaningless.
    pub(crate) fn compact_if_sparse(&mut self) {
        if self.rows.dead_count == 0 || self.rows.dead_count * 2 < self.rows.end {
            return;
        }
        let mut fresh = Relation::new(self.rows.arity);
        for row in self.live_rows() {
            fresh.insert(row);
        }
        for index in &self.rows.indexes {
            fresh.rows.ensure_index(&index.cols);
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
        assert_eq!(r.rows.end(), 3);
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn staged_tuples_are_deduplicated_before_they_become_rows() {
        let mut r = Relation::new(1);
        r.insert(&[7]);
        assert!(r.set.stage(&r.rows, &[8]));
        assert!(!r.set.stage(&r.rows, &[8]));
        assert!(!r.set.stage(&r.rows, &[7]));
        assert_eq!(r.rows.end(), 1);
        assert_eq!(r.set.commit(&mut r.rows), 1);
        assert_eq!(r.rows.row(1), &[8]);
        assert!(r.contains(&[8]));
    }

    #[test]
    fn index_chains_list_rows_newest_first() {
        let mut r = Relation::new(2);
        r.insert(&[1, 2]);
        let ix = r.rows.ensure_index(&[0]);
        r.insert(&[5, 2]);
        r.insert(&[1, 4]);
        let index = &r.rows.indexes[ix];
        let mut chain = Vec::new();
        let mut row = index.first(&r.rows.data, 2, hash_values([1].into_iter()), |_| 1);
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
        r.rows.ensure_index(&[0]);
        for v in 0..10 {
            r.insert(&[v]);
        }
        for v in 0..6 {
            r.remove(&[v]);
        }
        r.compact_if_sparse();
        assert_eq!(r.rows.end(), 4);
        assert!(r.contains(&[7]));
        assert_eq!(r.rows.indexes[0].next.len(), 4);
    }
}
