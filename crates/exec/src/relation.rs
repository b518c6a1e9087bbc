//! Flat relation storage: fixed-arity rows of `u32` in one vector ([`Rows`], what joins
//! read, with hash indexes brought up to date when a join is about to probe them) and the
//! tuple set for set semantics ([`RowSet`]).
//!
//! The two halves are separate so that a join can read the rows of a relation while it
//! stages new tuples into the same relation's set: a staged tuple is deduplicated at once
//! (one probe per derivation) but becomes a row only at [`RowSet::commit`].
//!
//! Rows are appended and never move until compaction, so a prefix of the rows is a
//! consistent older version of the relation: the engines read "old", "delta" and "full"
//! versions as row ranges. Deleted rows become tombstones that every reader skips.

use crate::limits::ResourceKind;
use hashbrown::hash_table::{Entry, HashTable};
use rustc_hash::FxHasher;
use std::borrow::Cow;
use std::hash::Hasher;
use std::ops::ControlFlow;

/// The rank of a row: the commit that appended it (see `Database::commit`). Wide enough
/// that a long-lived maintained database never runs out of ranks.
pub(crate) type Rank = u64;

/// Terminates an index chain and marks an absent id.
pub(crate) const NIL: u32 = u32::MAX;

/// Hashes a sequence of values; keys and probes all hash through this one function.
#[inline]
pub(crate) fn hash_values(values: impl Iterator<Item = u32>) -> u64 {
    let mut hasher = FxHasher::default();
    for v in values {
        hasher.write_u32(v);
    }
    hasher.finish()
}

/// The heap bytes a vector holds: its capacity, used or not, since that is what the
/// process has allocated.
fn vec_bytes<T>(v: &Vec<T>) -> usize {
    v.capacity() * std::mem::size_of::<T>()
}

/// The heap bytes one relation holds, part by part ([`crate::Database::relation_bytes`]):
/// what `--emit trace` reports, to see where memory goes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RelationBytes {
    /// The rows (one `u32` per value), their tombstones and rank runs.
    pub rows: usize,
    /// The tuple set: groups by prefix and the last values of each.
    pub set: usize,
    /// Tuples staged and not yet committed, with the buffer's spare capacity.
    pub staged: usize,
    /// Each index: its key columns and bytes.
    pub indexes: Vec<(Vec<usize>, usize)>,
    /// The row locator of ranked maintenance, if any.
    pub locator: usize,
}

impl RelationBytes {
    /// All parts together.
    pub fn total(&self) -> usize {
        self.rows + self.set + self.staged + self.indexes.iter().map(|(_, b)| b).sum::<usize>() + self.locator
    }
}

/// Appends a short tuple; `extend_from_slice` would call `memcpy` for a few bytes.
#[inline]
fn push_tuple(out: &mut Vec<u32>, tuple: &[u32]) {
    match *tuple {
        [a] => out.push(a),
        [a, b] => out.extend([a, b]),
        [a, b, c] => out.extend([a, b, c]),
        _ => out.extend_from_slice(tuple),
    }
}

/// Dense ids `0..len` for keys of `width` values each: the keys of an index and the
/// groups of a set. The key values are kept here, so a lookup never reads the rows of
/// the relation (which would miss the cache on every probe of a large one). A key of one
/// value is looked up in a direct map while the values are small, as interned constants
/// are, and otherwise, like any wider key, in a hash table.
#[derive(Clone, Debug, Default)]
struct KeyMap {
    width: usize,
    /// The key of id `i` is `keys[i * width..(i + 1) * width]`.
    keys: Vec<u32>,
    len: u32,
    table: HashTable<u32>,
    /// For width 1: the id (or [`NIL`]) of every value below its length. Such values are
    /// never looked up in `table`.
    direct: Vec<u32>,
    /// The id [`KeyMap::insert`] returned last (when below `len`): a join derives its
    /// tuples in runs of one prefix (the inner loop binds the last column), so most
    /// inserts find their group here without the map's load, which may miss the cache.
    last: u32,
}

impl KeyMap {
    fn new(width: usize) -> Self {
        KeyMap { width, ..KeyMap::default() }
    }

    fn len(&self) -> usize {
        self.len as usize
    }

    /// The heap bytes it holds: keys, hash table and direct map.
    fn bytes(&self) -> usize {
        vec_bytes(&self.keys) + self.table.allocation_size() + vec_bytes(&self.direct)
    }

    #[inline]
    fn find(&self, key: impl Fn(usize) -> u32) -> Option<u32> {
        match self.width {
            0 => (self.len > 0).then_some(0),
            1 => match self.direct.get(key(0) as usize) {
                Some(&id) => (id != NIL).then_some(id),
                None => self.find_hashed(&key),
            },
            _ => self.find_hashed(&key),
        }
    }

    #[inline]
    fn find_hashed(&self, key: &impl Fn(usize) -> u32) -> Option<u32> {
        if self.table.is_empty() {
            return None;
        }
        let w = self.width;
        let keys = &self.keys;
        let hash = hash_values((0..w).map(key));
        self.table.find(hash, |&id| keys[id as usize * w..][..w].iter().enumerate().all(|(i, &v)| v == key(i))).copied()
    }

    /// The id of the key, added if new.
    #[inline]
    fn insert(&mut self, key: impl Fn(usize) -> u32) -> u32 {
        let (w, last) = (self.width, self.last);
        if last < self.len && w > 0 && self.keys[last as usize * w..][..w].iter().enumerate().all(|(i, &v)| v == key(i))
        {
            return last;
        }
        let id = self.insert_uncached(&key);
        self.last = id;
        id
    }

    #[inline]
    fn insert_uncached(&mut self, key: &impl Fn(usize) -> u32) -> u32 {
        match self.width {
            0 => {
                self.len = 1;
                0
            }
            1 => {
                let v = key(0) as usize;
                if v >= self.direct.len() && !self.grow_direct(v) {
                    return self.insert_hashed(key);
                }
                match self.direct[v] {
                    NIL => {
                        let id = self.push(key);
                        self.direct[v] = id;
                        id
                    }
                    id => id,
                }
            }
            _ => self.insert_hashed(key),
        }
    }

    fn push(&mut self, key: &impl Fn(usize) -> u32) -> u32 {
        self.keys.extend((0..self.width).map(key));
        self.len += 1;
        self.len - 1
    }

    fn insert_hashed(&mut self, key: &impl Fn(usize) -> u32) -> u32 {
        let w = self.width;
        let hash = hash_values((0..w).map(key));
        let keys = &self.keys;
        let entry = self.table.entry(
            hash,
            |&id| keys[id as usize * w..][..w].iter().enumerate().all(|(i, &v)| v == key(i)),
            |&id| hash_values(keys[id as usize * w..][..w].iter().copied()),
        );
        match entry {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(vacant) => {
                vacant.insert(self.len);
                self.push(key)
            }
        }
    }

    /// Extends the direct map to cover `v` if that keeps it within a few words per key,
    /// moving in the keys the table holds; false when `v` is too large.
    #[cold]
    fn grow_direct(&mut self, v: usize) -> bool {
        let limit = 1024 + 8 * self.len();
        if v >= limit {
            return false;
        }
        let old = self.direct.len();
        let len = (2 * old).clamp(v + 1, limit);
        self.direct.resize(len, NIL);
        for (id, &k) in self.keys.iter().enumerate() {
            if (old..len).contains(&(k as usize)) {
                self.direct[k as usize] = id as u32;
            }
        }
        true
    }
}

/// A hash index on some columns: for each distinct key the rows with that key, in
/// descending row order, which lets a reader restricted to rows `lo..hi` skip and stop
/// early.
///
/// The index covers the relation: each entry holds the row id and the values of the
/// columns outside the key (the key's values are the probe's), so a join reads a key's
/// entries as consecutive memory and never touches the rows themselves, which for a large
/// relation would miss the cache once per row.
///
/// Most rows are *packed*: sorted by key with a counting sort into one array of entries
/// and one offset per key, which costs the entries and a word per key and nothing else.
/// Rows appended after the packing go into chunks of consecutive arena slots per key,
/// linked from the newest chunk back, until they are as many as the packed rows; the
/// next sync then packs all rows again. Each packing at least doubles the packed rows, so
/// packing costs amortised O(1) per row, and the chunks, with their headers and unused
/// slots, hold at most half of the rows.
///
/// An index holds the rows `0..indexed` and is extended by [`Rows::sync_index`] only
/// when a join is about to probe it: an index that no join with a non-empty input needs
/// (in right-linear closure, the closure keyed for a join with the edge delta that exists
/// in the first round only) then costs nothing. A join that would probe it only a few
/// times may scan the relation instead ([`Rows::sync_index_or_defer`]): a step reads the
/// index only when it holds every row of the step's range ([`Index::covers`]).
#[derive(Clone, Debug)]
pub(crate) struct Index {
    pub(crate) cols: Vec<usize>,
    /// The columns outside the key, in order: what each entry holds after the row id.
    pub(crate) covered: Vec<usize>,
    keys: KeyMap,
    /// Whether a one-column key is its own id: the packing found its values no larger
    /// than [`identity_limit`] of the rows, so the offsets and tails are indexed by the
    /// value and `keys` stays empty, which saves two words per key.
    identity: bool,
    /// The entries of key id `k` among the packed rows are entries
    /// `offsets[k]..offsets[k + 1]` of `packed`; keys added since the packing have none.
    offsets: Vec<u32>,
    /// The entries of rows `0..packed_rows`, by key id, each key's in ascending row order.
    packed: Vec<u32>,
    packed_rows: u32,
    /// The keys with packed entries.
    packed_keys: u32,
    /// Per key id, the arena offset of its newest chunk of rows added since the packing
    /// (or [`NIL`]); keys beyond its end have none.
    tails: Vec<u32>,
    /// Chunks `[previous chunk or NIL, length, capacity, entries…]`.
    arena: Vec<u32>,
    indexed: u32,
    /// The rows joins scanned instead of probing the index while it was behind its
    /// relation ([`Rows::sync_index_or_defer`]), since it was last brought up to date.
    deferred: u64,
    /// Only the rows that pass it are entries (a semi-join filter,
    /// [`crate::join::PhysPlan::semijoin_filter`]); rows `0..indexed` have been looked at.
    keep: Option<Box<RowFilter>>,
}

/// Which rows an [`Index`] holds: those whose value in each named column is in that
/// column's set.
#[derive(Clone, Debug)]
pub(crate) struct RowFilter {
    pub(crate) tests: Vec<(usize, ValueSet)>,
}

impl RowFilter {
    #[inline]
    fn keeps(&self, row: &[u32]) -> bool {
        self.tests.iter().all(|(col, values)| values.contains(row[*col]))
    }

    /// Whether an index with filter `keep` (none: every row) holds `row`.
    #[inline]
    fn admits(keep: Option<&RowFilter>, row: &[u32]) -> bool {
        keep.is_none_or(|keep| keep.keeps(row))
    }

    fn bytes(&self) -> usize {
        self.tests.iter().map(|(_, values)| values.bytes()).sum()
    }
}

/// A set of values: a bitmap while they are small, as interned constants are, otherwise
/// a hash set.
#[derive(Clone, Debug)]
pub(crate) enum ValueSet {
    Bits(Vec<u64>),
    Hashed(rustc_hash::FxHashSet<u32>),
}

impl ValueSet {
    /// The values of column `col` of the rows of `rows`, tombstones included (a filter
    /// that keeps a little more than it must is still exact for the join it serves).
    pub(crate) fn of_column(rows: &Rows, col: usize) -> Self {
        let values = || rows.data[..rows.end as usize * rows.arity].iter().skip(col).step_by(rows.arity).copied();
        let max = values().max().unwrap_or(0) as usize;
        if max / 64 <= 1024 + 2 * rows.end as usize {
            let mut words = vec![0u64; max / 64 + 1];
            for v in values() {
                words[v as usize / 64] |= 1 << (v % 64);
            }
            ValueSet::Bits(words)
        } else {
            ValueSet::Hashed(values().collect())
        }
    }

    #[inline]
    fn contains(&self, v: u32) -> bool {
        match self {
            ValueSet::Bits(words) => words.get(v as usize / 64).is_some_and(|w| w & (1 << (v % 64)) != 0),
            ValueSet::Hashed(set) => set.contains(&v),
        }
    }

    fn bytes(&self) -> usize {
        match self {
            ValueSet::Bits(words) => vec_bytes(words),
            ValueSet::Hashed(set) => set.capacity() * (std::mem::size_of::<u32>() + 1),
        }
    }
}

/// The largest value a one-column key of an index over `rows` rows may have for the
/// index to use values as key ids ([`Index::identity`]): then its offsets take at most a
/// few words per row, as a key map would.
fn identity_limit(rows: usize) -> usize {
    1024 + 2 * rows
}

/// Chunk capacities (in entries) double from the first to the last, so a key with one
/// row costs a few words and a key with many wastes at most half a chunk.
const FIRST_CHUNK: u32 = 2;
const LAST_CHUNK: u32 = 1024;
const CHUNK_HEADER: usize = 3;

impl Index {
    pub(crate) fn new(cols: &[usize], arity: usize) -> Self {
        Index {
            cols: cols.to_vec(),
            covered: (0..arity).filter(|c| !cols.contains(c)).collect(),
            keys: KeyMap::new(cols.len()),
            identity: false,
            offsets: Vec::new(),
            packed: Vec::new(),
            packed_rows: 0,
            packed_keys: 0,
            tails: Vec::new(),
            arena: Vec::new(),
            indexed: 0,
            deferred: 0,
            keep: None,
        }
    }

    /// Whether the index holds every row below `end`, so that a join reading rows
    /// `..end` of its relation may probe it.
    #[inline]
    pub(crate) fn covers(&self, end: u32) -> bool {
        self.indexed >= end
    }

    /// An index of the rows that pass `keep` only.
    pub(crate) fn filtered(cols: &[usize], arity: usize, keep: RowFilter) -> Self {
        Index { keep: Some(Box::new(keep)), ..Index::new(cols, arity) }
    }

    /// The mean number of packed entries of a key that has some: what a probe of a key
    /// that is there reads.
    pub(crate) fn mean_chain(&self) -> f64 {
        self.packed.len() as f64 / self.width() as f64 / f64::from(self.packed_keys.max(1))
    }

    /// The entries it holds.
    pub(crate) fn entries(&self) -> usize {
        (self.packed.len() + self.arena.len()) / self.width()
    }

    /// Values per entry: the row id and the covered columns.
    fn width(&self) -> usize {
        1 + self.covered.len()
    }

    /// The heap bytes it holds: keys, offsets, packed entries, chain tails and arena.
    fn bytes(&self) -> usize {
        self.keys.bytes()
            + self.keep.as_ref().map_or(0, |keep| keep.bytes())
            + vec_bytes(&self.offsets)
            + vec_bytes(&self.packed)
            + vec_bytes(&self.tails)
            + vec_bytes(&self.arena)
    }

    /// Adds row `r` with values `row` to the chunks; rows must come in ascending order,
    /// after every packed row. With [`Index::identity`], the key must be within
    /// [`identity_limit`] of the rows ([`Rows::sync_index`] packs again otherwise).
    pub(crate) fn add(&mut self, row: &[u32], r: u32) {
        let Index { cols, covered, keys, tails, arena, .. } = self;
        let width = 1 + covered.len();
        let id = if self.identity { row[cols[0]] as usize } else { keys.insert(|i| row[cols[i]]) as usize };
        if id >= tails.len() {
            tails.resize(id + 1, NIL);
        }
        let mut tail = tails[id];
        let full = tail == NIL || arena[tail as usize + 1] == arena[tail as usize + 2];
        if full {
            let capacity = if tail == NIL { FIRST_CHUNK } else { (2 * arena[tail as usize + 2]).min(LAST_CHUNK) };
            let start = arena.len();
            arena.extend([tail, 0, capacity]);
            arena.resize(start + CHUNK_HEADER + capacity as usize * width, 0);
            tail = start as u32;
            tails[id] = tail;
        }
        let t = tail as usize;
        let len = arena[t + 1];
        let at = t + CHUNK_HEADER + len as usize * width;
        arena[at] = r;
        for (slot, &c) in arena[at + 1..at + width].iter_mut().zip(covered.iter()) {
            *slot = row[c];
        }
        arena[t + 1] = len + 1;
    }

    /// Packs the `rows` (`arity > 0` values each, all the relation's rows) by a counting sort
    /// on their key ids, replacing the chunks; false, with nothing changed but the keys,
    /// when the memory is not there.
    fn pack(&mut self, rows: &[u32], arity: usize) -> bool {
        let count = rows.len() / arity;
        let width = self.width();
        // The chunks go first: the packed entries replace them, and both at once would
        // be the peak of the relation's memory.
        self.arena = Vec::new();
        self.tails = Vec::new();
        self.packed = Vec::new();
        let mut offsets: Vec<u32> = Vec::new();
        let cols = &self.cols;
        let keep = self.keep.as_deref();
        let kept = |row: &[u32]| RowFilter::admits(keep, row);
        self.identity = cols.len() == 1
            && rows.chunks_exact(arity).map(|row| row[cols[0]] as usize).max().unwrap_or(0) <= identity_limit(count);
        if self.identity {
            self.keys = KeyMap::new(1);
        }
        let mut entries = 0;
        for row in rows.chunks_exact(arity).filter(|row| kept(row)) {
            let id = if self.identity { row[cols[0]] as usize } else { self.keys.insert(|i| row[cols[i]]) as usize };
            if id >= offsets.len() {
                offsets.resize(id + 1, 0);
            }
            offsets[id] += 1;
            entries += 1;
        }
        let mut packed: Vec<u32> = Vec::new();
        if packed.try_reserve_exact(entries * width).is_err() {
            self.offsets = Vec::new();
            self.packed_rows = 0;
            return false;
        }
        // Exclusive prefix sums: the start of each key's entries, then one more for the end.
        let mut start = 0;
        for o in offsets.iter_mut() {
            let n = *o;
            *o = start;
            start += n;
        }
        offsets.push(start);
        packed.resize(entries * width, 0);
        // `offsets[k]` walks through key `k`'s slots as they fill, ending at the next
        // key's start; the starts are restored afterwards by shifting them back.
        for (r, row) in rows.chunks_exact(arity).enumerate().filter(|(_, row)| kept(row)) {
            let id = match self.identity {
                true => row[cols[0]] as usize,
                false => self.keys.find(|i| row[cols[i]]).expect("every key was inserted above") as usize,
            };
            let at = offsets[id] as usize * width;
            packed[at] = r as u32;
            for (slot, &c) in packed[at + 1..at + width].iter_mut().zip(&self.covered) {
                *slot = row[c];
            }
            offsets[id] += 1;
        }
        let keys = offsets.len() - 1;
        self.packed_keys = offsets.windows(2).filter(|w| w[0] < w[1]).count() as u32;
        offsets.copy_within(..keys, 1);
        offsets[0] = 0;
        self.offsets = offsets;
        self.packed = packed;
        self.packed_rows = count as u32;
        true
    }

    /// The entries of the rows whose key columns equal `key(i)` for each index column
    /// `i`, newest first: the row id and the values of [`Index::covered`].
    #[inline]
    pub(crate) fn chain(&self, key: impl Fn(usize) -> u32) -> Chain<'_> {
        let width = self.width();
        let id = match self.identity {
            true => Some(key(0) as usize),
            false => self.keys.find(key).map(|id| id as usize),
        };
        let Some(id) = id else {
            return Chain { arena: &self.arena, width, chunk: NIL, left: 0, packed: &[], packed_left: 0 };
        };
        let chunk = self.tails.get(id).copied().unwrap_or(NIL);
        let left = if chunk == NIL { 0 } else { self.arena[chunk as usize + 1] };
        let (packed, packed_left): (&[u32], u32) = match (self.offsets.get(id), self.offsets.get(id + 1)) {
            (Some(&from), Some(&to)) => (&self.packed[from as usize * width..to as usize * width], to - from),
            _ => (&[], 0),
        };
        Chain { arena: &self.arena, width, chunk, left, packed, packed_left }
    }
}

/// The entries of one key of an [`Index`], in descending row order: those of its chunks,
/// then its packed ones.
pub(crate) struct Chain<'a> {
    arena: &'a [u32],
    width: usize,
    chunk: u32,
    /// Entries of the current chunk not yet returned.
    left: u32,
    /// The key's packed entries, in ascending row order.
    packed: &'a [u32],
    /// Packed entries not yet returned: the first `packed_left`.
    packed_left: u32,
}

impl<'a> Chain<'a> {
    /// Calls `f` with each entry left, in the order [`Iterator::next`] returns them,
    /// until it breaks: the loop of a join's innermost step, which walks each chunk and
    /// the packed entries as slices instead of asking for one entry at a time.
    #[inline]
    pub(crate) fn for_each_until(self, mut f: impl FnMut(u32, &'a [u32]) -> ControlFlow<()>) {
        let Chain { arena, width, mut chunk, mut left, packed, packed_left } = self;
        loop {
            if left > 0 {
                let at = chunk as usize + CHUNK_HEADER;
                for entry in arena[at..at + left as usize * width].chunks_exact(width).rev() {
                    if f(entry[0], &entry[1..]).is_break() {
                        return;
                    }
                }
            }
            if chunk == NIL {
                break;
            }
            chunk = arena[chunk as usize];
            left = if chunk == NIL { 0 } else { arena[chunk as usize + 1] };
        }
        for entry in packed[..packed_left as usize * width].chunks_exact(width).rev() {
            if f(entry[0], &entry[1..]).is_break() {
                return;
            }
        }
    }
}

impl<'a> Iterator for Chain<'a> {
    type Item = (u32, &'a [u32]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        while self.left == 0 && self.chunk != NIL {
            self.chunk = self.arena[self.chunk as usize];
            if self.chunk != NIL {
                self.left = self.arena[self.chunk as usize + 1];
            }
        }
        let entry = if self.left > 0 {
            self.left -= 1;
            let at = self.chunk as usize + CHUNK_HEADER + self.left as usize * self.width;
            &self.arena[at..at + self.width]
        } else if self.packed_left > 0 {
            self.packed_left -= 1;
            let at = self.packed_left as usize * self.width;
            &self.packed[at..at + self.width]
        } else {
            return None;
        };
        Some((entry[0], &entry[1..]))
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
    /// `(first row, rank)` for each run of rows appended with one rank, in row order:
    /// ranks only grow as rows are appended ([`Rows::append_rank`]), so the rows of rank
    /// below `k` are a prefix of the rows ([`Rows::rank_end`]).
    ranks: Vec<(u32, Rank)>,
    /// Finds the row of a tuple, for the relations of a ranked maintained database.
    locator: Option<Locator>,
    /// The rows joins scanned instead of building the locator
    /// ([`Rows::ensure_locator_or_defer`]), since it was last brought up to date.
    locator_deferred: u64,
    /// Set when an index could not grow ([`Rows::sync_index`]); the relation's indexes
    /// are then incomplete and the evaluation reading them must stop.
    pub(crate) failure: Option<ResourceKind>,
}

impl Rows {
    pub(crate) fn new(arity: usize) -> Self {
        Rows {
            arity,
            data: Vec::new(),
            end: 0,
            dead: Vec::new(),
            dead_count: 0,
            indexes: Vec::new(),
            ranks: Vec::new(),
            locator: None,
            locator_deferred: 0,
            failure: None,
        }
    }

    /// Records that the rows from `first` to the end were appended with `rank`, which is
    /// at least the rank of every earlier row.
    fn append_rank(&mut self, first: u32, rank: Rank) {
        if first >= self.end {
            return;
        }
        match self.ranks.last() {
            Some(&(_, last)) if last == rank => {}
            last => {
                debug_assert!(last.is_none_or(|&(_, r)| r < rank), "ranks grow with the rows");
                self.ranks.push((first, rank));
            }
        }
    }

    /// The rank row `r` was appended with.
    pub(crate) fn rank_of(&self, r: u32) -> Rank {
        let run = self.ranks.partition_point(|&(first, _)| first <= r);
        run.checked_sub(1).map_or(0, |i| self.ranks[i].1)
    }

    /// The first row of rank `rank` or more: rows `0..rank_end(rank)` are those of lower rank.
    pub(crate) fn rank_end(&self, rank: Rank) -> u32 {
        let run = self.ranks.partition_point(|&(_, r)| r < rank);
        self.ranks.get(run).map_or(self.end, |&(first, _)| first)
    }

    /// The heap bytes of the rows with their tombstones and rank runs, of each index, and
    /// of the locator.
    fn bytes(&self) -> (usize, Vec<(Vec<usize>, usize)>, usize) {
        let rows = vec_bytes(&self.data) + vec_bytes(&self.dead) + vec_bytes(&self.ranks);
        let indexes = self.indexes.iter().map(|ix| (ix.cols.clone(), ix.bytes())).collect();
        (rows, indexes, self.locator.as_ref().map_or(0, |l| l.table.allocation_size()))
    }

    /// The heap bytes of [`Rows::bytes`] summed, without listing the indexes: what a
    /// memory budget measures at every commit.
    fn total_bytes(&self) -> usize {
        vec_bytes(&self.data)
            + vec_bytes(&self.dead)
            + vec_bytes(&self.ranks)
            + self.indexes.iter().map(Index::bytes).sum::<usize>()
            + self.locator.as_ref().map_or(0, |l| l.table.allocation_size())
    }

    /// Keeps a [`Locator`] of this relation from now on (see [`Rows::locate`]).
    pub(crate) fn ensure_locator(&mut self) {
        if self.locator.is_none() {
            self.locator = Some(Locator::default());
        }
        self.sync_locator();
    }

    /// [`Rows::ensure_locator`] unless scanning the relation once for each of `probes`
    /// tests reads fewer rows than locating the missing rows would cost
    /// ([`SCAN_ROWS_PER_LOCATED`] each), counting the rows earlier tests scanned instead:
    /// the ski rental of [`Rows::sync_index_or_defer`]. A support check of ranked
    /// maintenance tests a handful of edges, where a locator would hold every edge.
    pub(crate) fn ensure_locator_or_defer(&mut self, probes: u64) {
        let missing = self.unlocated();
        if let Some(scan) = rental(self.locator_deferred, missing, SCAN_ROWS_PER_LOCATED, probes, self.end) {
            self.locator_deferred += scan;
            return;
        }
        self.locator_deferred = 0;
        self.ensure_locator();
    }

    /// Whether a live row in `lo..hi` holds the tuple `key(0), …, key(arity - 1)`: found
    /// through the locator when it holds every row, else by scanning the range (a
    /// deferred locator, [`Rows::ensure_locator_or_defer`]). Tuples are unique among
    /// live rows, so both find the same row.
    #[inline]
    pub(crate) fn holds_in(&self, key: impl Fn(usize) -> u32, lo: u32, hi: u32) -> bool {
        if let Some(locator) = self.locator.as_ref().filter(|l| l.located == self.end) {
            return locator.find(self, key).is_some_and(|r| lo <= r && r < hi);
        }
        let mut r = lo;
        while r < hi {
            if self.arity > 0 {
                r = self.next_with(r, hi, 0, key(0));
                if r >= hi {
                    break;
                }
            }
            if self.is_alive(r) && self.row(r).iter().enumerate().all(|(c, &v)| v == key(c)) {
                return true;
            }
            r += 1;
        }
        false
    }

    /// Extends the locator, if any, over every row; a reader must sync before locating.
    pub(crate) fn sync_locator(&mut self) {
        let Some(mut locator) = self.locator.take() else { return };
        locator.sync(self);
        self.locator = Some(locator);
    }

    /// The rows a sync of index `id` would add to it ([`Rows::sync_index`]).
    pub(crate) fn unindexed(&self, id: usize) -> u32 {
        self.end - self.indexes[id].indexed
    }

    /// The rows a first probe of an index on the columns `cols` (in any order) would add
    /// to it: all of them when there is no such index yet.
    pub(crate) fn unindexed_by(&self, cols: &[usize]) -> u32 {
        let mut want = cols.to_vec();
        want.sort_unstable();
        let same = |ix: &&Index| {
            let mut have = ix.cols.clone();
            have.sort_unstable();
            have == want
        };
        self.end - self.indexes.iter().filter(same).map(|ix| ix.indexed).max().unwrap_or(0)
    }

    /// The rows a sync of the locator would add: every row when there is none yet.
    pub(crate) fn unlocated(&self) -> u32 {
        self.end - self.locator.as_ref().map_or(0, |l| l.located)
    }

    /// The live row holding the tuple `key(0), …, key(arity - 1)`, found through the
    /// locator (which must exist and be synced).
    #[inline]
    pub(crate) fn locate(&self, key: impl Fn(usize) -> u32) -> Option<u32> {
        self.locator.as_ref().expect("a plan that locates rows keeps a locator of their relation").find(self, key)
    }

    /// The number of rows (tombstones included) of each rank run, in row order: a
    /// semi-naive evaluation appends at most one run per rule and round, so a run's
    /// ordinal is about the round that derived its facts, their derivation depth.
    pub(crate) fn run_lens(&self) -> impl Iterator<Item = u32> + '_ {
        let ends = self.ranks.iter().skip(1).map(|&(first, _)| first).chain(std::iter::once(self.end));
        self.ranks.iter().zip(ends).map(|(&(first, _), end)| end - first)
    }

    /// The number of rank runs: the commits that appended rows to the relation.
    pub(crate) fn runs(&self) -> usize {
        self.ranks.len()
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

    /// The first row of `from..to` (tombstones included) whose column `col` holds
    /// `value`, or `to`: the tight loop of a scan that stands in for an index.
    #[inline]
    pub(crate) fn next_with(&self, from: u32, to: u32, col: usize, value: u32) -> u32 {
        if from >= to {
            return to;
        }
        // Whole rows, not a column stepped through: the compiler unrolls this loop,
        // about twice as fast as `step_by` (a one-edge deletion on forest1000x20 scans
        // the edges three times: 0.18 ms -> 0.08 ms through the binary).
        let rows = &self.data[from as usize * self.arity..to as usize * self.arity];
        rows.chunks_exact(self.arity).position(|row| row[col] == value).map_or(to, |i| from + i as u32)
    }

    /// Takes the row buffer, emptied but with its capacity, for another relation to
    /// adopt ([`Rows::adopt_buffer`]); the relation is left with none.
    pub(crate) fn take_buffer(&mut self) -> Vec<u32> {
        let mut data = std::mem::take(&mut self.data);
        data.clear();
        data
    }

    /// Appends into `buffer` (emptied, as [`Rows::take_buffer`] gives it) from now on,
    /// when it is larger than this relation's, which must have no rows yet.
    pub(crate) fn adopt_buffer(&mut self, buffer: Vec<u32>) {
        debug_assert!(self.end == 0 && buffer.is_empty(), "a relation adopts a buffer before it has rows");
        if buffer.capacity() > self.data.capacity() {
            self.data = buffer;
        }
    }

    /// Whether any row is a tombstone: when none is, readers need not test each row.
    #[inline]
    pub(crate) fn has_dead(&self) -> bool {
        self.dead_count > 0
    }

    #[inline]
    pub(crate) fn is_alive(&self, r: u32) -> bool {
        self.dead.get(r as usize / 64).is_none_or(|w| w & (1 << (r % 64)) == 0)
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

    /// Returns the id of the index on `cols`, declaring it if new; it is built when first
    /// synced.
    pub(crate) fn ensure_index(&mut self, cols: &[usize]) -> usize {
        if let Some(i) = self.indexes.iter().position(|ix| ix.cols == cols) {
            return i;
        }
        self.indexes.push(Index::new(cols, self.arity));
        self.indexes.len() - 1
    }

    /// Declares the index [`remove_tuples`] walks to find the rows of removed tuples.
    pub(crate) fn ensure_removal_index(&mut self) -> Option<usize> {
        let key_len = removal_key_len(self.arity);
        (key_len > 0).then(|| self.ensure_index(&(0..key_len).collect::<Vec<_>>()))
    }

    /// Makes room for a share more rows (and their index entries) than there are, so that
    /// the next appends do not move everything: a relation loaded in one batch has no
    /// spare capacity, and the first small update would then copy all of it.
    pub(crate) fn reserve_headroom(&mut self) {
        fn headroom<T>(v: &mut Vec<T>) {
            let want = v.len() / 8;
            if v.capacity() - v.len() < want {
                // Headroom only saves a copy later; without the memory, do without it.
                let _ = v.try_reserve_exact(want);
            }
        }
        headroom(&mut self.data);
        for index in &mut self.indexes {
            headroom(&mut index.arena);
        }
    }

    /// Extends every declared index over every row.
    pub(crate) fn sync_all_indexes(&mut self) {
        for id in 0..self.indexes.len() {
            self.sync_index(id);
        }
    }

    /// Extends index `id` over every row, unless scanning the relation once for each of
    /// `probes` probes reads fewer rows than adding the missing rows would cost
    /// ([`SCAN_ROWS_PER_ENTRY`] each), counting the rows earlier joins scanned instead:
    /// ski rental. A batch that probes a large relation a few times (a deleted edge of a
    /// tree looking for the paths that end at its source) scans it and builds nothing,
    /// and an index read again and again is built once its scans have cost as much, so
    /// a join never pays more than twice the cheaper of the two. A join reads a deferred
    /// index's relation by scanning its range ([`Index::covers`]).
    pub(crate) fn sync_index_or_defer(&mut self, id: usize, probes: u64) {
        if let Some(scan) = self.deferred_scan(id, probes) {
            self.indexes[id].deferred += scan;
            return;
        }
        self.indexes[id].deferred = 0;
        self.sync_index(id);
    }

    /// The rows `probes` scans would read, when [`Rows::sync_index_or_defer`] leaves index
    /// `id` behind for them.
    fn deferred_scan(&self, id: usize, probes: u64) -> Option<u64> {
        let index = &self.indexes[id];
        rental(index.deferred, self.end.saturating_sub(index.indexed), SCAN_ROWS_PER_ENTRY, probes, self.end)
    }

    /// What reading index `id` for `probes` probes (unknown: `None`) costs first, in rows
    /// added to an index: the rows a sync adds, or the rows scanned instead, each worth
    /// 1/[`SCAN_ROWS_PER_ENTRY`] of one ([`Rows::sync_index_or_defer`]).
    pub(crate) fn sync_cost(&self, id: usize, probes: Option<u64>) -> u64 {
        match probes.and_then(|probes| self.deferred_scan(id, probes)) {
            Some(scan) => scan / SCAN_ROWS_PER_ENTRY,
            None => u64::from(self.unindexed(id)),
        }
    }

    /// Empties index `id` (keeping its key columns and filter, and its id, which plans
    /// hold) to give its memory back: the next reader that syncs it builds it again.
    pub(crate) fn release_index(&mut self, id: usize) {
        let index = &mut self.indexes[id];
        let keep = index.keep.take();
        *index = Index { keep, ..Index::new(&index.cols, self.arity) };
    }

    /// Extends index `id` over every row; a reader must sync before probing. When the
    /// index cannot grow (its arena would pass the `u32` offsets its chains use, or the
    /// memory is not there) it is left as it is and [`Rows::failure`] set.
    pub(crate) fn sync_index(&mut self, id: usize) {
        if self.failure.is_some() {
            return;
        }
        if let Err(failure) = self.indexes[id].sync(&self.data, self.arity, self.end) {
            self.failure = Some(failure);
        }
    }
}

impl Index {
    /// Brings the index up to date with the `end` rows of `data` (`arity` values each),
    /// the relation it indexes; an error, with the index as it was or emptied, when it
    /// cannot grow.
    pub(crate) fn sync(&mut self, data: &[u32], arity: usize, end: u32) -> Result<(), ResourceKind> {
        let new_rows = (end - self.indexed) as usize;
        if new_rows == 0 {
            return Ok(());
        }
        // Packing all rows again once the chunks would hold as many as the packed part, or
        // when a new key is too large to be its own id (then the packing uses a key map,
        // and does so from then on: the rows keep that key).
        let limit = identity_limit(end as usize);
        let too_large =
            self.identity && (self.indexed..end).any(|r| data[r as usize * arity + self.cols[0]] as usize > limit);
        if arity > 0 && (too_large || end - self.packed_rows >= self.packed_rows) {
            if self.pack(&data[..end as usize * arity], arity) {
                self.indexed = end;
                return Ok(());
            }
            self.indexed = 0;
            return Err(ResourceKind::Allocation { bytes: end as usize * self.width() * 4 });
        }
        // Checked before the arena grows: each row adds an entry, and at worst (a new key
        // per row) a two-entry chunk with its header.
        let width = self.width();
        let worst = self.arena.len().saturating_add(new_rows.saturating_mul(2 * width + CHUNK_HEADER));
        if worst > NIL as usize {
            return Err(ResourceKind::IndexSize);
        }
        if self.arena.try_reserve(new_rows * width).is_err() {
            return Err(ResourceKind::Allocation { bytes: new_rows * width * 4 });
        }
        for r in self.indexed..end {
            let row = &data[r as usize * arity..][..arity];
            if RowFilter::admits(self.keep.as_deref(), row) {
                self.add(row, r);
            }
        }
        self.indexed = end;
        Ok(())
    }
}

/// The rows a join scans for the cost of adding one row to an index: the index sorts the
/// rows by key in passes and writes each entry at a scattered place, where a scan streams
/// one column and compares it ([`Rows::next_with`]); measured on the benchmarks' closures,
/// about 15 ns a row against under 1 ns.
const SCAN_ROWS_PER_ENTRY: u64 = 16;

/// The rows a test scans for the cost of adding one row to a row locator: a hash of the
/// row and an insertion into a table that misses the cache, about twice an index entry.
const SCAN_ROWS_PER_LOCATED: u64 = 32;

/// The ski rental of a structure over a relation of `end` rows that lacks `missing` of
/// them, each costing what `per_row` scanned rows do: the rows `probes` scans would read
/// when they and the `deferred` rows scanned before still cost less than adding the
/// missing rows, else `None` (build it).
fn rental(deferred: u64, missing: u32, per_row: u64, probes: u64, end: u32) -> Option<u64> {
    let build = u64::from(missing) * per_row;
    let scan = probes.saturating_mul(u64::from(end));
    (build > 0 && deferred.saturating_add(scan) < build).then_some(scan)
}

/// The row of each tuple: a hash table of row ids keyed by the rows' values, which it
/// reads from the relation instead of copying them (a few bytes per row). Ranked
/// maintenance needs the row, and so the rank, of the facts a deletion may affect, and a
/// join that tests a tuple of the relation it derives needs to know whether its row lies
/// in the version the join reads (the set also holds what the join staged); the tuple set
/// holds no row ids, and a full-key index would cost several times the memory.
/// Rows killed stay in the table until compaction and are skipped when found.
#[derive(Clone, Debug, Default)]
pub(crate) struct Locator {
    table: HashTable<u32>,
    /// Rows `0..located` are in the table.
    located: u32,
}

impl Locator {
    fn sync(&mut self, rows: &Rows) {
        // Reserved at once: growing the table row by row would rehash it many times.
        let hasher = |&id: &u32| hash_values(rows.row(id).iter().copied());
        self.table.reserve((rows.end - self.located) as usize, hasher);
        for r in self.located..rows.end {
            let hash = hash_values(rows.row(r).iter().copied());
            self.table.insert_unique(hash, r, |&id| hash_values(rows.row(id).iter().copied()));
        }
        self.located = rows.end;
    }

    #[inline]
    fn find(&self, rows: &Rows, key: impl Fn(usize) -> u32) -> Option<u32> {
        debug_assert_eq!(self.located, rows.end, "the locator is synced before use");
        let hash = hash_values((0..rows.arity).map(&key));
        self.table
            .find(hash, |&id| rows.is_alive(id) && rows.row(id).iter().enumerate().all(|(i, &v)| v == key(i)))
            .copied()
    }
}

/// The last-column values of the tuples of one group of a [`RowSet`], in the cheapest of
/// three forms for their number and spread. Closure-like relations are dense, and their
/// groups become bitmaps of a few hundred bytes: a whole set of millions of tuples then
/// fits in the cache, where a hash table of the tuples would miss it on every probe.
///
/// A record takes 16 bytes, since a sparse relation has about one group per tuple: the
/// bitmaps' words live in their set's [`Bitmaps`] arena, addressed by a `u32` offset,
/// which keeps the one hop to memory outside the record that a pointer would make.
#[derive(Clone, Debug)]
enum Values {
    /// Up to [`FEW`] values inline, unsorted: the groups of sparse relations.
    Few { len: u8, vals: [u32; FEW] },
    /// A hash set, for a group too spread out for a bitmap.
    Hashed(Box<HashTable<u32>>),
    /// The values `64 * base + i` for the set bits `i` of the words `at..at + len` of the
    /// arena. The count is not kept, since only the rare changes of form need it.
    Bits { base: u32, at: u32, len: u32 },
}

const FEW: usize = 3;

/// The words of every bitmap group of one set, each group's consecutive. A bitmap that
/// grows moves to the end and leaves its old words unused; once the unused words are a
/// quarter of the arena, [`RowSet::compact_bitmaps`] slides the live ones down, so the
/// arena holds at most a third more words than are in use, and each word is moved
/// amortised O(1) times.
#[derive(Clone, Debug, Default)]
struct Bitmaps {
    words: Vec<u64>,
    /// Words no group uses any more.
    unused: usize,
}

impl Bitmaps {
    /// `len` zero words at the end: their offset, or `None` past what a `u32` offset
    /// addresses (the group is then hashed instead).
    fn alloc(&mut self, len: usize) -> Option<u32> {
        let at = u32::try_from(self.words.len()).ok()?;
        u32::try_from(self.words.len() + len).ok()?;
        self.words.resize(self.words.len() + len, 0);
        Some(at)
    }

    /// The words of a group at `at`, `len` long.
    #[inline]
    fn of(&self, at: u32, len: u32) -> &[u64] {
        &self.words[at as usize..][..len as usize]
    }

    fn of_mut(&mut self, at: u32, len: u32) -> &mut [u64] {
        &mut self.words[at as usize..][..len as usize]
    }

    /// Whether the unused words are enough of the arena to pack it again: a quarter, so
    /// that a set whose bitmaps keep growing holds little more than their words.
    fn sparse(&self) -> bool {
        self.unused > 1024 && 4 * self.unused > self.words.len()
    }
}

/// A bitmap is used when it takes at most one word per value; it is given up only when
/// it would take more than `SPARSE_WORDS_PER_VALUE` words per value (plus slack), so that
/// a group near the threshold does not flip back and forth.
const SPARSE_WORDS_PER_VALUE: usize = 4;

#[inline]
fn hash_value(v: u32) -> u64 {
    // Fibonacci hashing: a bijection on the low bits the table indexes with, and good top
    // bits for its control bytes.
    u64::from(v).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// The word of `v` in a bitmap starting at word `base` with `len` words, if it is covered.
#[inline]
fn word_of(base: u32, len: u32, v: u32) -> Option<usize> {
    let w = (v >> 6).wrapping_sub(base);
    (w < len).then_some(w as usize)
}

fn bit_values(base: u32, words: &[u64]) -> impl Iterator<Item = u32> + '_ {
    words.iter().enumerate().flat_map(move |(i, &word)| {
        let first = (base + i as u32) << 6;
        (0..64).filter(move |b| word & (1 << b) != 0).map(move |b| first + b)
    })
}

impl Values {
    fn new() -> Self {
        Values::Few { len: 0, vals: [0; FEW] }
    }

    /// The heap bytes beside the record itself and its arena words.
    fn heap_bytes(&self) -> usize {
        match self {
            Values::Few { .. } | Values::Bits { .. } => 0,
            Values::Hashed(table) => std::mem::size_of::<HashTable<u32>>() + table.allocation_size(),
        }
    }

    fn len(&self, arena: &Bitmaps) -> usize {
        match *self {
            Values::Few { len, .. } => len as usize,
            Values::Hashed(ref table) => table.len(),
            Values::Bits { at, len, .. } => arena.of(at, len).iter().map(|w| w.count_ones() as usize).sum(),
        }
    }

    #[inline]
    fn contains(&self, arena: &Bitmaps, v: u32) -> bool {
        match *self {
            Values::Bits { base, at, len } => {
                word_of(base, len, v).is_some_and(|w| arena.words[at as usize + w] & (1 << (v & 63)) != 0)
            }
            Values::Few { len, ref vals } => vals[..len as usize].contains(&v),
            Values::Hashed(ref table) => table.find(hash_value(v), |&x| x == v).is_some(),
        }
    }

    /// Adds `v`; false when it was present. `hashed_bytes` (the [`Values::heap_bytes`] of
    /// every group of the set) follows a change of form or a hash set's growth.
    #[inline]
    fn insert(&mut self, arena: &mut Bitmaps, v: u32, hashed_bytes: &mut usize) -> bool {
        match self {
            Values::Bits { base, at, len } => {
                if let Some(w) = word_of(*base, *len, v) {
                    let word = &mut arena.words[*at as usize + w];
                    let bit = 1 << (v & 63);
                    let old = *word;
                    *word = old | bit;
                    return old & bit == 0;
                }
            }
            Values::Few { len, vals } if (*len as usize) < FEW => {
                if vals[..*len as usize].contains(&v) {
                    return false;
                }
                vals[*len as usize] = v;
                *len += 1;
                return true;
            }
            _ => {}
        }
        self.insert_slow(arena, v, hashed_bytes)
    }

    /// Insertion that may change the form: a full inline group, a value outside the
    /// bitmap's range, or a hash set that has become dense.
    #[cold]
    fn insert_slow(&mut self, arena: &mut Bitmaps, v: u32, hashed_bytes: &mut usize) -> bool {
        if self.contains(arena, v) {
            return false;
        }
        let before = self.heap_bytes();
        self.change_form(arena, v);
        *hashed_bytes = *hashed_bytes - before + self.heap_bytes();
        true
    }

    /// Adds `v`, which is absent, to a group whose present form cannot take it as it is.
    fn change_form(&mut self, arena: &mut Bitmaps, v: u32) {
        match self {
            Values::Few { vals, .. } => {
                let all: Vec<u32> = vals.iter().copied().chain([v]).collect();
                *self = Values::from_values(arena, &all);
            }
            Values::Hashed(table) => {
                table.insert_unique(hash_value(v), v, |&x| hash_value(x));
                let len = table.len();
                // Checking at powers of two keeps the scan for the range amortised O(1).
                if len >= 16 && len.is_power_of_two() {
                    let all: Vec<u32> = table.iter().copied().collect();
                    *self = Values::from_values(arena, &all);
                }
            }
            &mut Values::Bits { base, at, len } => {
                let (lo, hi) = (base.min(v >> 6), (base + len - 1).max(v >> 6));
                let span = (hi - lo) as usize + 1;
                let count = self.len(arena);
                let wider = match span > SPARSE_WORDS_PER_VALUE * (count + 1) + 4 {
                    true => None,
                    false => arena.alloc(span),
                };
                arena.unused += len as usize;
                match wider {
                    None => {
                        let all: Vec<u32> = bit_values(base, arena.of(at, len)).chain([v]).collect();
                        *self = Values::hashed(&all);
                    }
                    Some(new_at) => {
                        let offset = (base - lo) as usize;
                        arena.words.copy_within(at as usize..(at + len) as usize, new_at as usize + offset);
                        arena.words[new_at as usize + ((v >> 6) - lo) as usize] |= 1 << (v & 63);
                        *self = Values::Bits { base: lo, at: new_at, len: span as u32 };
                    }
                }
            }
        }
    }

    /// A bitmap when it takes at most a word per value (and the arena can address it),
    /// else a hash set.
    fn from_values(arena: &mut Bitmaps, all: &[u32]) -> Self {
        let (lo, hi) = (all.iter().min().copied().unwrap_or(0) >> 6, all.iter().max().copied().unwrap_or(0) >> 6);
        let span = (hi - lo) as usize + 1;
        if span <= all.len() {
            if let Some(at) = arena.alloc(span) {
                let words = arena.of_mut(at, span as u32);
                for &v in all {
                    words[((v >> 6) - lo) as usize] |= 1 << (v & 63);
                }
                return Values::Bits { base: lo, at, len: span as u32 };
            }
        }
        Values::hashed(all)
    }

    fn hashed(all: &[u32]) -> Self {
        let mut table = HashTable::with_capacity(all.len());
        for &v in all {
            table.insert_unique(hash_value(v), v, |&x| hash_value(x));
        }
        Values::Hashed(Box::new(table))
    }

    /// Removes `v`; false when it was absent.
    fn remove(&mut self, arena: &mut Bitmaps, v: u32) -> bool {
        match self {
            Values::Few { len, vals } => {
                let Some(i) = vals[..*len as usize].iter().position(|&x| x == v) else { return false };
                vals[i] = vals[*len as usize - 1];
                *len -= 1;
                true
            }
            Values::Hashed(table) => table.find_entry(hash_value(v), |&x| x == v).map(|e| e.remove()).is_ok(),
            Values::Bits { base, at, len } => {
                let Some(w) = word_of(*base, *len, v) else { return false };
                let word = &mut arena.words[*at as usize + w];
                let bit = 1 << (v & 63);
                let was = *word & bit != 0;
                *word &= !bit;
                was
            }
        }
    }
}

/// A set turns flat only from this many rows on: below, its groups are small anyway.
const FLAT_MIN_ROWS: usize = 1 << 14;

/// A set turns flat when its groups take more than `FLAT_GAIN.0 / FLAT_GAIN.1` times
/// the bytes of the flat table: then each group holds about one tuple. At a smaller
/// margin (3/2), the closure of the forest and the points-to relations turned flat and
/// their peaks grew: the grouped form and the new table are both held while it is built,
/// and a flat set reads a row on every probe.
const FLAT_GAIN: (usize, usize) = (2, 1);

/// The tuple of id `id` of a flat set: row `id`, or the staged tuple `id - rows.end()`.
#[inline]
fn flat_tuple<'r>(rows: &'r Rows, staged: &'r [u32], id: u32) -> &'r [u32] {
    match id.checked_sub(rows.end) {
        None => rows.row(id),
        Some(i) => &staged[i as usize * rows.arity..][..rows.arity],
    }
}

/// A staging buffer larger than this is freed after its commit rather than kept.
const MAX_KEPT_STAGING_BYTES: usize = 256 * 1024;

/// The set of tuples of a relation, plus staged tuples that will become rows
/// `rows.end()..` at the next commit.
///
/// Tuples are grouped by their prefix (every column but the last) and each group keeps
/// the set of its last values ([`Values`]). A probe finds the group through a [`KeyMap`]
/// with one entry per distinct prefix, which stays small and cache-resident for the
/// relations whose sets are large (a closure over `n` nodes has at most `n` groups), and
/// then tests a bit or a few values. The set holds no row ids: removal finds the rows
/// through an index on the prefix ([`remove_tuples`]).
///
/// A sparse relation, whose groups hold a tuple or two each, pays a group record, a key
/// and a table slot per tuple that way; once it has [`FLAT_MIN_ROWS`] rows and its
/// groups cost more than a flat table would ([`RowSet::flatten_if_sparse`]), the set
/// turns *flat*: a hash table of row ids keyed by the hash of the whole tuple, which
/// compares through the rows themselves (and the staged tuples, ids `rows.end()..`), a
/// few bytes per tuple. It stays flat from then on.
#[derive(Clone, Debug)]
pub(crate) struct RowSet {
    /// The flat form, if the set has taken it: the ids of the live rows and of the staged
    /// tuples (`rows.end() + i` for the `i`-th). `groups`, `values` and `bitmaps` are
    /// then empty.
    flat: Option<HashTable<u32>>,
    /// When set, the set turns flat once the relation has this many rows, whatever its
    /// groups cost ([`RowSet::force_flat_from`]).
    flat_from: Option<u32>,
    /// Group ids by prefix; `values` is indexed by them.
    groups: KeyMap,
    values: Vec<Values>,
    /// The words of the groups held as bitmaps.
    bitmaps: Bitmaps,
    /// Whether the empty tuple is in the set (arity 0 only).
    empty: bool,
    staged: Vec<u32>,
    staged_count: u32,
    /// At most this many live rows ([`RowSet::set_limit`]).
    limit: u32,
    /// Whether `limit` is a cap of this relation alone ([`RowSet::set_cap`]): passing it
    /// is [`ResourceKind::Cap`], a signal to the caller rather than a user's limit.
    capped: bool,
    /// How many more tuples may be staged before [`RowSet::stage`] looks again: at most
    /// what the limit leaves, and what keeps row ids within `u32`. Never more than the
    /// true room, which only grows behind its back (removals, compaction).
    room: u32,
    /// The [`Values::heap_bytes`] of every group, kept as groups change form, so that
    /// the set's bytes are counted in constant time at every commit.
    hashed_bytes: usize,
    /// What the memory budget left the relation at its last measurement
    /// ([`RowSet::set_memory_share`]); `None` without a budget.
    memory: Option<MemoryShare>,
    /// Why the set stopped taking tuples, if it did: a tuple over the limit, memory
    /// past the budget, or memory that could not be allocated. Staging then refuses
    /// everything new, so a runaway join ends with bounded memory, and the engine stops
    /// at its next commit.
    pub(crate) failure: Option<ResourceKind>,
    /// Whether the set gave its memory back ([`RowSet::release`]): it then holds nothing,
    /// answers a membership test by scanning the rows, and is built again from them before
    /// it takes or removes a tuple.
    released: bool,
    /// Whether the set is given back once its relation's stratum is evaluated
    /// ([`RowSet::finish_deriving`]).
    release_once_derived: bool,
}

impl RowSet {
    pub(crate) fn new(arity: usize) -> Self {
        RowSet {
            flat: None,
            flat_from: None,
            groups: KeyMap::new(arity.saturating_sub(1)),
            values: Vec::new(),
            bitmaps: Bitmaps::default(),
            empty: false,
            staged: Vec::new(),
            staged_count: 0,
            limit: NIL,
            capped: false,
            room: NIL,
            hashed_bytes: 0,
            memory: None,
            failure: None,
            released: false,
            release_once_derived: false,
        }
    }

    /// Gives back the memory of the set, keeping its limit, for an input relation that
    /// no join tests a whole tuple of: its rows and indexes answer every join, and the
    /// set, which only kept its facts distinct as they were read, is as large as the rows
    /// and an index together. Nothing may be staged.
    pub(crate) fn release(&mut self, rows: &Rows) {
        debug_assert_eq!(self.staged_count, 0, "a set is released between joins");
        if rows.arity == 0 {
            return;
        }
        let mut released = RowSet::new(rows.arity);
        // Released first: the room the limit leaves is then none.
        released.released = true;
        released.memory = self.memory;
        released.copy_limit(rows, self);
        released.failure = self.failure;
        *self = released;
    }

    /// Makes [`RowSet::finish_deriving`] give the set back: no join tests a whole tuple of
    /// the relation once the stratum that derives it is evaluated.
    pub(crate) fn release_once_derived(&mut self) {
        self.release_once_derived = true;
    }

    /// Called when the stratum that derives the relation is evaluated: gives the set back
    /// ([`RowSet::release`]) if [`RowSet::release_once_derived`] asked for it.
    pub(crate) fn finish_deriving(&mut self, rows: &Rows) {
        if self.release_once_derived && !self.released {
            self.release(rows);
        }
    }

    /// Builds the set again from the live rows if it was released: before a join that
    /// tests whole tuples of it, which would otherwise scan the rows for each.
    pub(crate) fn rebuild_if_released(&mut self, rows: &Rows) {
        if self.released {
            self.restore(rows);
        }
    }

    /// Builds a released set again from the live rows (regrouping sets its room anew).
    #[cold]
    fn restore(&mut self, rows: &Rows) {
        self.released = false;
        self.regroup(rows);
        self.flatten_if_sparse(rows, 0);
    }

    /// Whether the set gave its memory back ([`RowSet::release`]).
    #[cfg(test)]
    pub(crate) fn is_released(&self) -> bool {
        self.released
    }

    /// Lets the relation hold at most `limit` tuples; drops a cap.
    pub(crate) fn set_limit(&mut self, rows: &Rows, limit: u32) {
        self.limit = limit;
        self.capped = false;
        self.room = self.room_left(rows);
    }

    /// Lowers the limit to `cap` when that is lower; passing it is then
    /// [`ResourceKind::Cap`].
    pub(crate) fn set_cap(&mut self, rows: &Rows, cap: u32) {
        if cap < self.limit {
            self.limit = cap;
            self.capped = true;
            self.room = self.room_left(rows);
        }
    }

    /// The limit and cap of `other`, and when it turns flat.
    pub(crate) fn copy_limit(&mut self, rows: &Rows, other: &RowSet) {
        self.set_limit(rows, other.limit);
        self.capped = other.capped;
        self.flat_from = other.flat_from;
    }

    /// Makes the set turn flat once its relation has `rows` rows (and an arity of two or
    /// more), whatever its groups cost: tests hold small relations in the flat form too.
    pub(crate) fn force_flat_from(&mut self, rows: u32) {
        self.flat_from = Some(rows);
    }

    /// How many tuples may be staged between two commits: what the limit leaves of the
    /// live rows, and what keeps the row ids `end..` below [`NIL`].
    fn room_left(&self, rows: &Rows) -> u32 {
        if self.released {
            // Staging asks for room first, and finds the set to build again there.
            return 0;
        }
        let memory = self.memory.map_or(NIL, |share| share.tuples);
        self.limit.saturating_sub(rows.len() as u32).min(NIL - rows.end).min(memory)
    }

    /// Sets what the memory budget leaves this relation, measured at `bytes` with the
    /// other relations of its database at `others`: the tuples it may stage until its next
    /// measurement, each counted at [`staged_tuple_bytes`]. A relation measured past the
    /// budget fails at once (unless it failed already); one left less than a tuple's room
    /// fails at the next new tuple it stages.
    pub(crate) fn set_memory_share(&mut self, rows: &Rows, budget: usize, others: usize, bytes: usize) {
        let left = budget.saturating_sub(others.saturating_add(bytes));
        let more = left / staged_tuple_bytes(rows.arity);
        let tuples = u32::try_from(more).unwrap_or(NIL).saturating_add(self.staged_count);
        let share = MemoryShare { budget, others, bytes, staged: self.staged_count, tuples };
        self.memory = Some(share);
        if others.saturating_add(bytes) > budget && self.failure.is_none() {
            self.failure = Some(share.failure(rows.len(), self.staged_count, rows.arity));
        }
        if self.failure.is_none() {
            self.room = self.room_left(rows);
        } else {
            self.room = 0;
        }
    }

    /// Drops the memory budget of the relation.
    pub(crate) fn clear_memory_share(&mut self, rows: &Rows) {
        self.memory = None;
        if self.failure.is_none() {
            self.room = self.room_left(rows);
        }
    }

    /// The heap bytes of the set (groups and their values) and of the staging buffer.
    fn bytes(&self) -> (usize, usize) {
        let flat = self.flat.as_ref().map_or(0, HashTable::allocation_size);
        (flat + self.grouped_bytes(), vec_bytes(&self.staged))
    }

    /// The heap bytes of the grouped form: groups, their records and values.
    fn grouped_bytes(&self) -> usize {
        self.groups.bytes() + vec_bytes(&self.values) + vec_bytes(&self.bitmaps.words) + self.hashed_bytes
    }

    /// The heap bytes of [`RowSet::bytes`] together.
    fn total_bytes(&self) -> usize {
        let (set, staged) = self.bytes();
        set + staged
    }

    /// Turns the set flat when the relation has at least [`FLAT_MIN_ROWS`] rows and its
    /// groups take more than [`FLAT_GAIN`] times the bytes of a flat table of its tuples:
    /// about one tuple per group. Looked at when the rows pass a power of two, so the
    /// look (which sums the groups' bytes) costs amortised O(1) per row. Nothing may be
    /// staged.
    fn flatten_if_sparse(&mut self, rows: &Rows, before: u32) {
        if self.released {
            return;
        }
        let after = rows.end;
        if let Some(from) = self.flat_from {
            if self.flat.is_none() && rows.arity >= 2 && after >= from {
                self.flatten(rows);
            }
            return;
        }
        if self.flat.is_some()
            || rows.arity < 2
            || (after as usize) < FLAT_MIN_ROWS
            || before.checked_ilog2() == after.checked_ilog2()
        {
            return;
        }
        let live = rows.len();
        // A table of `u32` ids with one control byte per bucket, at most 7/8 full.
        let flat = (live * 8 / 7 + 1).next_power_of_two() * (std::mem::size_of::<u32>() + 1);
        if FLAT_GAIN.1 * self.grouped_bytes() > FLAT_GAIN.0 * flat {
            self.flatten(rows);
        }
    }

    /// Replaces the grouped form by the flat one, built from the live rows; nothing may
    /// be staged. Without the memory for the table, the set stays grouped.
    fn flatten(&mut self, rows: &Rows) {
        debug_assert_eq!(self.staged_count, 0, "a set turns flat between joins");
        let mut table = HashTable::new();
        if table.try_reserve(rows.len(), |&id: &u32| hash_values(rows.row(id).iter().copied())).is_err() {
            return;
        }
        for r in (0..rows.end).filter(|&r| rows.is_alive(r)) {
            table.insert_unique(hash_values(rows.row(r).iter().copied()), r, |&id| {
                hash_values(rows.row(id).iter().copied())
            });
        }
        self.flat = Some(table);
        self.groups = KeyMap::new(rows.arity - 1);
        self.values = Vec::new();
        self.hashed_bytes = 0;
        self.bitmaps = Bitmaps::default();
    }

    /// Builds the flat table again over the renumbered rows of a compaction.
    fn reflatten(&mut self, rows: &Rows) {
        if self.flat.take().is_some() {
            self.flatten(rows);
            if self.flat.is_none() {
                // No memory for the table: the grouped form, which grows tuple by tuple.
                for row in rows.live_rows() {
                    let (&last, prefix) = row.split_last().expect("a flat set has arity 2 or more");
                    self.insert(prefix, last);
                }
            }
        }
    }

    /// Builds the grouped form again from the live rows of a compaction. Removal empties
    /// a group's values but keeps its record and bitmap words, so a set that lost most of
    /// its tuples would otherwise hold the groups of all it had: as much as before, and
    /// so much more than the few tuples left need that [`RowSet::flatten_if_sparse`]
    /// would take them for sparse and turn the set flat as the relation grows again.
    /// Nothing may be staged.
    fn regroup(&mut self, rows: &Rows) {
        if self.flat.is_some() || rows.arity == 0 || self.released {
            return;
        }
        debug_assert_eq!(self.staged_count, 0, "a set is regrouped between joins");
        let mut fresh = RowSet::new(rows.arity);
        fresh.memory = self.memory;
        fresh.copy_limit(rows, self);
        fresh.failure = self.failure;
        for row in rows.live_rows() {
            let (&last, prefix) = row.split_last().expect("arity 1 or more");
            fresh.insert(prefix, last);
        }
        *self = fresh;
    }

    /// Whether the flat table holds the tuple `key(0), …, key(arity - 1)`.
    #[inline]
    fn flat_find(table: &HashTable<u32>, rows: &Rows, staged: &[u32], key: impl Fn(usize) -> u32) -> Option<u32> {
        let arity = rows.arity;
        let hash = hash_values((0..arity).map(&key));
        table.find(hash, |&id| flat_tuple(rows, staged, id).iter().enumerate().all(|(i, &v)| v == key(i))).copied()
    }

    /// Stages a tuple into the flat set; false when it was present, or refused (with the
    /// failure set).
    #[inline]
    fn stage_flat(&mut self, rows: &Rows, tuple: &[u32]) -> bool {
        let table = self.flat.as_ref().expect("a flat set");
        if Self::flat_find(table, rows, &self.staged, |i| tuple[i]).is_some() {
            return false;
        }
        if self.staged.capacity() - self.staged.len() < tuple.len() && !self.grow_staged(tuple.len()) {
            return false;
        }
        let id = rows.end + self.staged_count;
        push_tuple(&mut self.staged, tuple);
        self.staged_count += 1;
        let staged = &self.staged;
        let table = self.flat.as_mut().expect("a flat set");
        table.insert_unique(hash_values(tuple.iter().copied()), id, |&id| {
            hash_values(flat_tuple(rows, staged, id).iter().copied())
        });
        true
    }

    /// Takes a tuple out of the flat set: the id of its row, if it was there.
    fn unset_flat(&mut self, rows: &Rows, tuple: &[u32]) -> Option<u32> {
        let staged = &self.staged;
        let table = self.flat.as_mut()?;
        let hash = hash_values(tuple.iter().copied());
        match table.find_entry(hash, |&id| flat_tuple(rows, staged, id) == tuple) {
            Ok(entry) => Some(entry.remove().0),
            Err(_) => None,
        }
    }

    /// The group of the prefix `key(0), …`, if any tuple has it.
    #[inline]
    fn find_group(&self, key: impl Fn(usize) -> u32) -> Option<&Values> {
        self.groups.find(key).map(|g| &self.values[g as usize])
    }

    /// Adds `last` to the group of `prefix` (created empty if new); false when it was there.
    #[inline]
    fn insert(&mut self, prefix: &[u32], last: u32) -> bool {
        let g = self.groups.insert(|i| prefix[i]) as usize;
        if g == self.values.len() {
            self.values.push(Values::new());
        }
        let added = self.values[g].insert(&mut self.bitmaps, last, &mut self.hashed_bytes);
        if self.bitmaps.sparse() {
            self.compact_bitmaps();
        }
        added
    }

    /// Slides the words of the bitmap groups down over the unused ones, in arena order,
    /// within the arena itself: a second arena would be the peak of the set's memory.
    #[cold]
    fn compact_bitmaps(&mut self) {
        let mut groups: Vec<(u32, u32)> = (self.values.iter().enumerate())
            .filter_map(|(g, values)| match *values {
                Values::Bits { at, .. } => Some((at, g as u32)),
                _ => None,
            })
            .collect();
        groups.sort_unstable();
        let mut end = 0u32;
        for (_, g) in groups {
            if let Values::Bits { at, len, .. } = &mut self.values[g as usize] {
                let from = std::mem::replace(at, end) as usize;
                self.bitmaps.words.copy_within(from..from + *len as usize, end as usize);
                end += *len;
            }
        }
        self.bitmaps.words.truncate(end as usize);
        self.bitmaps.unused = 0;
    }

    /// Whether the tuple with values `key(0), …, key(arity - 1)` is in the set.
    #[inline]
    pub(crate) fn contains_by(&self, rows: &Rows, arity: usize, key: impl Fn(usize) -> u32) -> bool {
        if arity == 0 {
            return self.empty;
        }
        if let Some(table) = &self.flat {
            return Self::flat_find(table, rows, &self.staged, key).is_some();
        }
        if self.released {
            return rows.live_rows().any(|row| row.iter().enumerate().all(|(i, &v)| v == key(i)));
        }
        self.find_group(&key).is_some_and(|values| values.contains(&self.bitmaps, key(arity - 1)))
    }

    /// For a one-column set held as one bitmap, its first word and words: a join that
    /// tests membership once per derivation (a demand guard) then tests a bit directly.
    pub(crate) fn as_bitmap(&self) -> Option<(u32, &[u64])> {
        match self.values.as_slice() {
            &[Values::Bits { base, at, len }] if self.groups.width == 0 => Some((base, self.bitmaps.of(at, len))),
            _ => None,
        }
    }

    pub(crate) fn contains(&self, rows: &Rows, tuple: &[u32]) -> bool {
        tuple.len() == rows.arity && self.contains_by(rows, rows.arity, |i| tuple[i])
    }

    /// The number of tuples with this prefix.
    fn group_len(&self, prefix: &[u32]) -> usize {
        self.find_group(|i| prefix[i]).map_or(0, |values| values.len(&self.bitmaps))
    }

    /// Adds a tuple of the right arity to the set and the staging buffer; false when it was
    /// present (as a row or staged).
    ///
    /// A tuple over the limit, or one the staging buffer has no memory for, is refused
    /// and [`RowSet::failure`] set; from then on every new tuple is refused.
    #[inline]
    pub(crate) fn stage(&mut self, rows: &Rows, tuple: &[u32]) -> bool {
        debug_assert_eq!(tuple.len(), rows.arity, "callers check the arity");
        // One comparison per derivation; the limit itself is looked at only near it.
        if self.staged_count >= self.room && !self.make_room(rows, tuple) {
            return false;
        }
        if self.flat.is_some() {
            return self.stage_flat(rows, tuple);
        }
        let added = match tuple.split_last() {
            None => !std::mem::replace(&mut self.empty, true),
            Some((&last, prefix)) => self.insert(prefix, last),
        };
        if added {
            if self.staged.capacity() - self.staged.len() < tuple.len() && !self.grow_staged(tuple.len()) {
                self.unset(tuple);
                return false;
            }
            push_tuple(&mut self.staged, tuple);
            self.staged_count += 1;
        }
        added
    }

    /// Whether one more tuple may be staged now that `room` ran out: the room is counted
    /// again (removals may have made more), and a tuple that is new when there is none
    /// sets the failure. A tuple already present is no growth, so it fails nothing.
    #[cold]
    fn make_room(&mut self, rows: &Rows, tuple: &[u32]) -> bool {
        if self.released {
            self.restore(rows);
        }
        if self.failure.is_some() {
            return false;
        }
        self.room = self.room_left(rows);
        if self.staged_count < self.room {
            return true;
        }
        if !self.contains(rows, tuple) {
            let memory = self.memory.filter(|share| self.staged_count >= share.tuples);
            self.failure = Some(if self.limit <= rows.len() as u32 + self.staged_count {
                match self.capped {
                    true => ResourceKind::Cap { cap: self.limit },
                    false => ResourceKind::TupleLimit { limit: self.limit },
                }
            } else if let Some(share) = memory {
                share.failure(rows.len(), self.staged_count, rows.arity)
            } else {
                ResourceKind::RowIds
            });
        }
        false
    }

    /// Grows the staging buffer (doubling) for one more tuple of `width` values; false,
    /// with the failure set, when the memory is not there.
    #[cold]
    fn grow_staged(&mut self, width: usize) -> bool {
        if self.staged.try_reserve(width).is_ok() {
            return true;
        }
        // What the doubling asked for.
        let values = (2 * self.staged.capacity()).max(self.staged.len() + width);
        self.failure = Some(ResourceKind::Allocation { bytes: values * 4 });
        self.room = 0;
        false
    }

    /// The number of tuples staged and not yet committed.
    pub(crate) fn staged_len(&self) -> u32 {
        self.staged_count
    }

    /// Takes the staged tuples out, leaving nothing staged: what a worker's own set
    /// hands over for merging once its join is done.
    pub(crate) fn take_staged(&mut self) -> Vec<u32> {
        self.staged_count = 0;
        std::mem::take(&mut self.staged)
    }

    /// How many more tuples may be staged before the set fails: none once it has.
    pub(crate) fn room(&self, rows: &Rows) -> u32 {
        if self.failure.is_some() {
            0
        } else {
            self.room_left(rows).saturating_sub(self.staged_count)
        }
    }

    /// Turns the staged tuples into rows of `rank`; returns how many there were. When the
    /// rows cannot grow by that much, nothing is committed and the failure is set.
    pub(crate) fn commit(&mut self, rows: &mut Rows, rank: Rank) -> u32 {
        let count = self.staged_count;
        if count > 0 && !rows.data.is_empty() && rows.data.try_reserve(self.staged.len()).is_err() {
            self.failure = Some(ResourceKind::Allocation { bytes: (rows.data.len() + self.staged.len()) * 4 });
            self.room = 0;
            self.staged = Vec::new();
            self.staged_count = 0;
            // The flat ids of the staged tuples would point past the rows.
            if let Some(table) = &mut self.flat {
                table.retain(|id| *id < rows.end);
            }
            return 0;
        }
        let first = rows.end;
        if rows.data.is_empty() && rows.data.capacity() < self.staged.len() {
            // The first commit (an input loaded in one batch, a relation's first round)
            // hands the buffer over instead of copying it: the copy would double the
            // relation's peak memory. (Rows that adopted a buffer with the room keep it,
            // [`Rows::adopt_buffer`].)
            let spare = rows.data.capacity();
            rows.data = std::mem::take(&mut self.staged);
            rows.data.shrink_to_fit();
            self.staged = Vec::with_capacity(spare);
        } else {
            rows.data.extend_from_slice(&self.staged);
            self.staged.clear();
            // A large buffer staged one big round; the next rounds of most relations are
            // smaller, and the memory is better given back than kept for them.
            if vec_bytes(&self.staged) > MAX_KEPT_STAGING_BYTES {
                self.staged = Vec::new();
            }
        }
        rows.end += count;
        rows.append_rank(first, rank);
        self.staged_count = 0;
        self.flatten_if_sparse(rows, first);
        if self.failure.is_none() {
            self.room = self.room_left(rows);
        }
        count
    }

    /// Takes a tuple out of the set (not out of the rows); false when it was absent.
    fn unset(&mut self, tuple: &[u32]) -> bool {
        match tuple.split_last() {
            None => std::mem::replace(&mut self.empty, false),
            Some((&last, prefix)) => match self.groups.find(|i| prefix[i]) {
                None => false,
                Some(g) => self.values[g as usize].remove(&mut self.bitmaps, last),
            },
        }
    }
}

/// A read-only view of the tuples of one relation grouped by their prefix (every column
/// but the last), as its tuple set holds them: one group per distinct prefix, each with
/// the set of its last values. It is an index on all the columns that no join has to
/// build: a reader finds the tuples of a bound prefix with one probe and tests a bound
/// last value with one lookup per group, and reads a whole relation group by group in
/// the order of its choice without copying it. A flat or released tuple set has no
/// groups: its view groups a copy of the tuples, built when the view is made.
#[derive(Clone)]
pub struct Groups<'a> {
    set: Cow<'a, RowSet>,
    arity: usize,
}

impl<'a> Groups<'a> {
    pub(crate) fn new(set: &'a RowSet, rows: &Rows) -> Self {
        let arity = rows.arity;
        if set.flat.is_none() && !set.released {
            return Groups { set: Cow::Borrowed(set), arity };
        }
        let mut grouped = RowSet::new(arity);
        for row in rows.live_rows() {
            let (&last, prefix) = row.split_last().expect("a flat or released set has arity 1 or more");
            grouped.insert(prefix, last);
        }
        Groups { set: Cow::Owned(grouped), arity }
    }

    pub fn arity(&self) -> usize {
        self.arity
    }

    /// The number of groups, ids `0..len()`; a group whose tuples were all removed stays,
    /// empty.
    pub fn len(&self) -> usize {
        if self.arity == 0 {
            0
        } else {
            self.set.values.len()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// For a nullary relation: whether it holds the empty tuple.
    pub fn has_empty_tuple(&self) -> bool {
        self.set.empty
    }

    /// The prefix of group `g` (`arity - 1` values).
    pub fn prefix(&self, g: usize) -> &[u32] {
        let width = self.set.groups.width;
        &self.set.groups.keys[g * width..(g + 1) * width]
    }

    /// The group of the prefix `prefix`, if any tuple had it.
    pub fn find(&self, prefix: &[u32]) -> Option<usize> {
        debug_assert_eq!(prefix.len() + 1, self.arity.max(1));
        if self.arity == 0 {
            return None;
        }
        self.set.groups.find(|i| prefix[i]).map(|g| g as usize)
    }

    /// Whether group `g` holds the last value `last`.
    pub fn contains(&self, g: usize, last: u32) -> bool {
        self.set.values[g].contains(&self.set.bitmaps, last)
    }

    /// The number of tuples in group `g`.
    pub fn group_len(&self, g: usize) -> usize {
        self.set.values[g].len(&self.set.bitmaps)
    }

    /// Appends the last values of group `g` to `out`, in no particular order.
    pub fn values(&self, g: usize, out: &mut Vec<u32>) {
        match self.set.values[g] {
            Values::Few { len, ref vals } => out.extend_from_slice(&vals[..len as usize]),
            Values::Hashed(ref table) => out.extend(table.iter().copied()),
            Values::Bits { base, at, len } => {
                for (i, &word) in self.set.bitmaps.of(at, len).iter().enumerate() {
                    let first = (base + i as u32) << 6;
                    let mut bits = word;
                    while bits != 0 {
                        out.push(first + bits.trailing_zeros());
                        bits &= bits - 1;
                    }
                }
            }
        }
    }
}

/// The prefix columns that [`remove_tuples`] finds rows by: every column but the last,
/// or the only one (none for arity 0).
fn removal_key_len(arity: usize) -> usize {
    (arity.max(2) - 1).min(arity)
}

/// Removes `tuples` (of any arity; those of the wrong one are absent) from the set and
/// tombstones their rows; returns how many were present. Nothing may be staged.
///
/// The set holds no row ids, so the rows are found afterwards as the live rows whose
/// tuple is no longer in the set: by walking the chains of an index on the prefix columns
/// (every column but the last, or the only one) of the affected groups, or, when those
/// groups cover much of the relation anyway, by one scan of all rows.
pub(crate) fn remove_tuples<'t>(
    rows: &mut Rows,
    set: &mut RowSet,
    tuples: impl IntoIterator<Item = &'t [u32]>,
) -> usize {
    debug_assert_eq!(set.staged_count, 0, "removal happens between joins");
    if set.released {
        set.restore(rows);
    }
    let arity = rows.arity;
    if set.flat.is_some() {
        // The flat set holds the row ids themselves.
        let mut count = 0;
        for t in tuples.into_iter().filter(|t| t.len() == arity) {
            if let Some(r) = set.unset_flat(rows, t) {
                rows.kill(r);
                count += 1;
            }
        }
        return count;
    }
    // The removed tuples are kept for the chain walk only while they are few enough for
    // it: a removal of most of a relation scans it, and a list of all it removes would
    // cost more memory than the relation's rows. Tuples that may be that many (by their
    // iterator's bound: DRed removes everything it over-deleted at once) are not listed.
    let tuples = tuples.into_iter();
    let listed = tuples.size_hint().1.is_none_or(|most| most.saturating_mul(4) < rows.len());
    let mut removed: Vec<&[u32]> = Vec::new();
    let mut count = 0;
    for t in tuples.filter(|t| t.len() == arity && set.unset(t)) {
        count += 1;
        if listed && count * 4 < rows.len() {
            removed.push(t);
        } else if !removed.is_empty() {
            removed = Vec::new();
        }
    }
    if count == 0 {
        return 0;
    }
    let key_len = removal_key_len(arity);
    let mut chained = usize::MAX;
    if listed && key_len > 0 && count * 4 < rows.len() {
        removed.sort_unstable();
        removed.dedup_by(|a, b| a[..key_len] == b[..key_len]);
        // The rows the chains hold: each affected group, its removed rows included.
        chained = count + if arity == 1 { 0 } else { removed.iter().map(|t| set.group_len(&t[..key_len])).sum() };
    }
    if chained.saturating_mul(4) >= rows.len() {
        for r in 0..rows.end {
            if rows.is_alive(r) && !set.contains(rows, rows.row(r)) {
                rows.kill(r);
            }
        }
        return count;
    }
    let id = rows.ensure_removal_index().expect("a relation with a prefix key");
    rows.sync_index(id);
    let mut dead = Vec::new();
    for key in removed.iter().map(|t| &t[..key_len]) {
        for (r, _) in rows.indexes[id].chain(|i| key[i]) {
            if rows.is_alive(r) && !set.contains(rows, rows.row(r)) {
                dead.push(r);
            }
        }
    }
    for r in dead {
        rows.kill(r);
    }
    count
}

/// Removes the tuples of the live rows `ids` from the set and tombstones the rows, for a
/// caller that knows the rows already ([`Rows::locate`]). Nothing may be staged.
pub(crate) fn remove_rows(rows: &mut Rows, set: &mut RowSet, ids: &[u32]) {
    debug_assert_eq!(set.staged_count, 0, "removal happens between joins");
    if set.released {
        set.restore(rows);
    }
    for &r in ids {
        if rows.is_alive(r) {
            let start = r as usize * rows.arity;
            let tuple = &rows.data[start..start + rows.arity];
            match set.flat {
                Some(_) => {
                    set.unset_flat(rows, tuple);
                }
                None => {
                    set.unset(tuple);
                }
            }
            rows.kill(r);
        }
    }
}

/// The heap bytes a tuple staged into a relation of `arity` columns is counted at against
/// a memory budget, until the next measurement: its values are in the staging buffer,
/// which may be twice as long as what it holds while it doubles, and again in the rows
/// the commit copies them into, whose vector may double too (16 bytes a value in all),
/// and the set takes an entry for it (8 bytes, more than a flat table's and about a
/// sparse group's share).
pub(crate) fn staged_tuple_bytes(arity: usize) -> usize {
    16 * arity + 8
}

/// What the memory budget of a database left one relation at its last measurement.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MemoryShare {
    /// The budget, in bytes, of all the relations of the database together.
    budget: usize,
    /// The bytes the other relations held.
    others: usize,
    /// The bytes this relation held.
    bytes: usize,
    /// The tuples it had staged then.
    staged: u32,
    /// The most tuples it may have staged before it passes the budget.
    tuples: u32,
}

impl MemoryShare {
    /// The failure of a relation of `rows` rows and `staged` staged tuples (of `arity`
    /// columns) that this share no longer covers: what it held when measured, and its
    /// tuples staged since counted at [`staged_tuple_bytes`].
    fn failure(&self, rows: usize, staged: u32, arity: usize) -> ResourceKind {
        let since = (staged - self.staged.min(staged)) as usize;
        let bytes = self.bytes.saturating_add(since.saturating_mul(staged_tuple_bytes(arity)));
        let total = self.others.saturating_add(bytes);
        ResourceKind::MemoryBudget { budget: self.budget, tuples: rows + staged as usize, bytes, total }
    }
}

/// The heap bytes of a relation's rows and set together ([`RelationBytes::total`]).
pub(crate) fn relation_total_bytes(rows: &Rows, set: &RowSet) -> usize {
    rows.total_bytes() + set.total_bytes()
}

/// The heap bytes of a relation's rows and set, part by part.
pub(crate) fn relation_bytes(rows: &Rows, set: &RowSet) -> RelationBytes {
    let (rows, indexes, locator) = rows.bytes();
    let (set, staged) = set.bytes();
    RelationBytes { rows, set, staged, indexes, locator }
}

/// Rows with their set: a whole relation.
#[derive(Clone, Debug)]
pub(crate) struct Relation {
    pub(crate) rows: Rows,
    pub(crate) set: RowSet,
}

impl Relation {
    pub(crate) fn new(arity: usize) -> Self {
        Relation { rows: Rows::new(arity), set: RowSet::new(arity) }
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
    #[cfg(test)]
    pub(crate) fn insert(&mut self, tuple: &[u32]) -> bool {
        let added = self.set.stage(&self.rows, tuple);
        self.set.commit(&mut self.rows, 0);
        added
    }

    #[cfg(test)]
    pub(crate) fn remove(&mut self, tuple: &[u32]) -> bool {
        remove_tuples(&mut self.rows, &mut self.set, [tuple]) == 1
    }

    #[cfg(test)]
    pub(crate) fn live_rows(&self) -> impl Iterator<Item = &[u32]> + '_ {
        self.rows.live_rows()
    }

    /// A relation of the live tuples of `rows` and their `set` (arity 1 or more), of rank
    /// `rank`, without tombstones, indexes or locator, its set of the same form as `set`.
    /// The tuples are distinct already, so none is staged or looked up twice: staged one by
    /// one into a set that then turned flat, the 18,000 edges of forest1000x20 took
    /// 1.5 ms, a quarter of evaluating its closure.
    pub(crate) fn live_copy(rows: &Rows, set: &RowSet, rank: Rank) -> Relation {
        debug_assert!(rows.arity > 0, "a relation of arity 0 holds one tuple at most");
        let mut copy = Relation::new(rows.arity);
        copy.rows.data.reserve_exact(rows.len() * rows.arity);
        for row in rows.live_rows() {
            push_tuple(&mut copy.rows.data, row);
        }
        copy.rows.end = rows.len() as u32;
        copy.rows.append_rank(0, rank);
        copy.set.copy_limit(&copy.rows, set);
        if set.flat.is_some() {
            copy.set.flatten(&copy.rows);
        }
        // Grouped, or flat without the memory for the table.
        copy.set.regroup(&copy.rows);
        copy
    }

    /// Drops tombstones and renumbers rows when at least half of them are dead. Only safe
    /// between evaluations, since row ranges held by a reader become meaningless.
    pub(crate) fn compact_if_sparse(&mut self) {
        if self.rows.dead_count == 0 || self.rows.dead_count * 2 < self.rows.end {
            return;
        }
        debug_assert_eq!(self.set.staged_count, 0, "compaction happens between joins");
        // A grouped set holds no row ids, so it stays as it is; a flat one is rebuilt.
        let mut fresh = Rows::new(self.rows.arity);
        // Compaction only saves memory and time later; without the memory for the copy,
        // the tombstones stay.
        if fresh.data.try_reserve_exact(self.rows.len() * self.rows.arity).is_err() {
            return;
        }
        for row in self.rows.live_rows() {
            push_tuple(&mut fresh.data, row);
        }
        fresh.end = self.rows.len() as u32;
        // Row numbers shift down past the tombstones; the rank of each surviving row stays.
        let mut live_before = 0;
        let mut runs = self.rows.ranks.iter().peekable();
        let mut rank = 0;
        for r in 0..self.rows.end {
            while let Some(&&(first, next)) = runs.peek() {
                if first > r {
                    break;
                }
                rank = next;
                runs.next();
            }
            if self.rows.is_alive(r) {
                fresh.append_rank(live_before, rank);
                live_before += 1;
            }
        }
        if self.rows.locator.is_some() {
            fresh.ensure_locator();
        }
        // Index ids are positions that compiled plans hold, so the order is kept; the
        // indexes in use are rebuilt now, so that the next update does not pay for it.
        for (id, index) in self.rows.indexes.iter().enumerate() {
            fresh.ensure_index(&index.cols);
            if index.indexed > 0 {
                fresh.sync_index(id);
            }
        }
        // Compaction happens between updates of a maintained database, which will append.
        fresh.reserve_headroom();
        self.rows = fresh;
        // A flat set holds row ids, which the compaction renumbered.
        self.set.reflatten(&self.rows);
        self.set.regroup(&self.rows);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// A deterministic xorshift generator from `seed`: each call a value below `bound`.
    fn xorshift(mut state: u64) -> impl FnMut(u64) -> u32 {
        move |bound| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % bound) as u32
        }
    }

    /// A tuple test of a row range finds the same rows by scanning (no locator yet) as
    /// through the locator, tombstones and ranges included.
    #[test]
    fn tuple_tests_scan_as_the_locator_finds() {
        for arity in [1, 2, 3] {
            let mut next = xorshift(arity as u64 * 7919 + 1);
            let mut r = Relation::new(arity);
            for _ in 0..600 {
                let tuple: Vec<u32> = (0..arity).map(|_| next(9)).collect();
                if next(4) == 0 {
                    r.remove(&tuple);
                } else {
                    r.insert(&tuple);
                }
            }
            let end = r.rows.end();
            let probes: Vec<(Vec<u32>, u32, u32)> = (0..400)
                .map(|_| {
                    let (a, b) = (next(u64::from(end) + 1), next(u64::from(end) + 1));
                    ((0..arity).map(|_| next(9)).collect(), a.min(b), a.max(b))
                })
                .collect();
            let expected: Vec<bool> = probes
                .iter()
                .map(|(t, lo, hi)| (*lo..*hi).any(|row| r.rows.is_alive(row) && r.rows.row(row) == &t[..]))
                .collect();
            let found = |rows: &Rows| -> Vec<bool> {
                probes.iter().map(|(t, lo, hi)| rows.holds_in(|c| t[c], *lo, *hi)).collect()
            };
            assert_eq!(found(&r.rows), expected, "scanning, arity {arity}");
            r.rows.ensure_locator();
            assert_eq!(found(&r.rows), expected, "located, arity {arity}");
            assert!(expected.iter().any(|&x| x) && expected.iter().any(|&x| !x));
        }
    }

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
        assert_eq!(r.set.commit(&mut r.rows, 0), 1);
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
        r.rows.sync_index(ix);
        let rows_of =
            |r: &Relation, key: u32| r.rows.indexes[ix].chain(|_| key).map(|(row, _)| row).collect::<Vec<_>>();
        assert_eq!(rows_of(&r, 1), vec![2, 0]);
        // Entries carry the columns outside the key.
        assert_eq!(r.rows.indexes[ix].chain(|_| 1).next(), Some((2, &[4][..])));
        // Enough rows for several chunks, still newest first.
        for b in 10..100 {
            r.insert(&[1, b]);
        }
        r.rows.sync_index(ix);
        let chain = rows_of(&r, 1);
        let mut expected: Vec<u32> = (0..r.rows.end()).filter(|&row| r.rows.row(row)[0] == 1).collect();
        expected.reverse();
        assert_eq!(chain, expected);
        assert!(rows_of(&r, 9).is_empty());
    }

    /// Indexes synced after batches of every size list each key's rows newest first,
    /// whether the rows are packed, in chunks since the packing, or both, with keys their
    /// own ids and, once a large key arrives, through a key map.
    #[test]
    fn packed_indexes_and_their_chunks_list_the_rows_of_each_key() {
        let mut r = Relation::new(3);
        let single = r.rows.ensure_index(&[1]);
        let pair = r.rows.ensure_index(&[0, 2]);
        let mut next = xorshift(7u64);
        for batch in 0..40u32 {
            // A large key from batch 30 on, past what values as ids allow.
            let big = if batch >= 30 { 1 << 30 } else { 0 };
            for _ in 0..next(3 * u64::from(batch) + 2) {
                r.insert(&[next(5), next(50) + big * next(2), next(4)]);
            }
            r.rows.sync_index(single);
            r.rows.sync_index(pair);
            assert_eq!(r.rows.indexes[single].identity, batch < 30, "small keys are their own ids");
            for key in (0..50).chain([1 << 30, (1 << 30) + 3, 99_999]) {
                let chain: Vec<u32> = r.rows.indexes[single].chain(|_| key).map(|(row, _)| row).collect();
                let expected: Vec<u32> = (0..r.rows.end()).rev().filter(|&row| r.rows.row(row)[1] == key).collect();
                assert_eq!(chain, expected, "key {key} after batch {batch}");
            }
            for (a, c) in (0..5).flat_map(|a| (0..4).map(move |c| (a, c))) {
                let entries: Vec<(u32, Vec<u32>)> =
                    r.rows.indexes[pair].chain(|i| [a, c][i]).map(|(row, e)| (row, e.to_vec())).collect();
                let expected: Vec<(u32, Vec<u32>)> = (0..r.rows.end())
                    .rev()
                    .filter(|&row| r.rows.row(row)[0] == a && r.rows.row(row)[2] == c)
                    .map(|row| (row, vec![r.rows.row(row)[1]]))
                    .collect();
                assert_eq!(entries, expected, "key ({a}, {c}) after batch {batch}");
            }
        }
        assert!(!r.rows.indexes[single].identity, "the large key turned the index to a key map");
    }

    #[test]
    fn zero_arity_relation_holds_at_most_the_empty_tuple() {
        let mut r = Relation::new(0);
        assert!(!r.contains(&[]));
        assert!(r.insert(&[]));
        assert!(!r.insert(&[]));
        assert_eq!(r.len(), 1);
        assert_eq!(r.live_rows().count(), 1);
        assert!(r.remove(&[]));
        assert_eq!(r.len(), 0);
        assert!(r.insert(&[]));
        assert_eq!(r.len(), 1);
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
        r.rows.sync_index(0);
        assert_eq!(r.rows.indexes[0].chain(|_| 7).collect::<Vec<_>>(), vec![(1, &[][..])]);
    }

    /// Groups pass through every form (inline, hashed, bitmap, and back to hashed when a
    /// far value arrives) and agree with a `BTreeSet` throughout, removals included.
    #[test]
    fn grouped_set_agrees_with_a_btree_set() {
        let mut r = Relation::new(3);
        let mut expected = BTreeSet::new();
        let mut next = xorshift(12345u64);
        for round in 0..6000 {
            let a = next(5);
            // Dense values, and in one group now and then a far one, so that its bitmap
            // gives up while the others stay bitmaps.
            let c = if a == 4 && round % 7 == 0 { next(1 << 30) } else { next(600) + 1000 * a };
            let tuple = [a, a % 2, c];
            assert_eq!(r.insert(&tuple), expected.insert(tuple), "{tuple:?}");
            if round % 5 == 0 {
                let victim = [next(5), next(2), next(600)];
                assert_eq!(r.remove(&victim), expected.remove(&victim), "{victim:?}");
            }
        }
        assert_eq!(r.len(), expected.len());
        for tuple in &expected {
            assert!(r.contains(tuple));
        }
        let live: BTreeSet<[u32; 3]> = r.live_rows().map(|t| [t[0], t[1], t[2]]).collect();
        assert_eq!(live, expected);
        assert!(r.set.values.iter().any(|v| matches!(v, Values::Bits { .. })));
        assert!(r.set.values.iter().any(|v| matches!(v, Values::Hashed(_))));
        // The bytes a memory budget measures follow the groups' changes of form.
        assert_eq!(r.set.hashed_bytes, r.set.values.iter().map(Values::heap_bytes).sum::<usize>());
        assert!(r.set.hashed_bytes > 0);
        // A probe's hop to the group: keep the group records small.
        assert!(std::mem::size_of::<Values>() <= 16);
    }

    /// A sparse relation (about one tuple per prefix) turns flat once it is large, and
    /// then agrees with a `BTreeSet` through staging in batches, membership of staged
    /// tuples, removals by tuple and by row, compaction and the grouped view.
    #[test]
    fn sparse_set_turns_flat_and_agrees_with_a_btree_set() {
        let mut r = Relation::new(2);
        let mut expected = BTreeSet::new();
        let mut next = xorshift(777u64);
        let n = 3 * FLAT_MIN_ROWS as u32;
        for batch in 0..6 {
            for _ in 0..n / 6 {
                let tuple = [next(u64::from(n)), next(1 << 20)];
                assert_eq!(r.set.stage(&r.rows, &tuple), expected.insert(tuple), "{tuple:?}");
                // Staged tuples are members already, and are not staged twice.
                assert!(r.set.contains(&r.rows, &tuple));
                assert!(!r.set.stage(&r.rows, &tuple));
            }
            r.set.commit(&mut r.rows, batch);
        }
        assert!(r.set.flat.is_some(), "one tuple per group: the flat form is cheaper");
        let (set_bytes, _) = r.set.bytes();
        assert!(set_bytes < 12 * expected.len(), "{set_bytes} B for {} tuples", expected.len());
        // Removal by tuple (present and absent), then by row.
        let victims: Vec<[u32; 2]> = expected.iter().step_by(3).copied().collect();
        for v in &victims {
            assert!(r.remove(v));
            assert!(!r.remove(v));
            expected.remove(v);
        }
        assert!(!r.remove(&[n + 1, 0]));
        let rows: Vec<u32> = (0..r.rows.end()).filter(|&id| r.rows.is_alive(id)).step_by(2).collect();
        for &id in &rows {
            let row = r.rows.row(id);
            expected.remove(&[row[0], row[1]]);
        }
        remove_rows(&mut r.rows, &mut r.set, &rows);
        r.compact_if_sparse();
        assert_eq!(r.rows.end() as usize, expected.len(), "compacted");
        assert!(r.set.flat.is_some());
        for tuple in &expected {
            assert!(r.contains(tuple), "{tuple:?}");
        }
        for tuple in &victims {
            assert!(!r.contains(tuple), "{tuple:?}");
        }
        // Inserting after the compaction finds the renumbered rows.
        let first = *expected.iter().next().unwrap();
        assert!(!r.set.stage(&r.rows, &first));
        assert!(r.set.stage(&r.rows, &[n + 5, 1]));
        assert_eq!(r.set.commit(&mut r.rows, 6), 1);
        expected.insert([n + 5, 1]);
        let live: BTreeSet<[u32; 2]> = r.live_rows().map(|t| [t[0], t[1]]).collect();
        assert_eq!(live, expected);
        let groups = Groups::new(&r.set, &r.rows);
        let mut seen = BTreeSet::new();
        let mut values = Vec::new();
        for g in 0..groups.len() {
            values.clear();
            groups.values(g, &mut values);
            seen.extend(values.iter().map(|&v| [groups.prefix(g)[0], v]));
        }
        assert_eq!(seen, expected);
    }

    /// A dense relation keeps its grouped form, however large.
    #[test]
    fn dense_set_stays_grouped() {
        let mut r = Relation::new(2);
        let n = 4 * FLAT_MIN_ROWS as u32;
        for i in 0..n {
            r.set.stage(&r.rows, &[i % 16, i]);
        }
        r.set.commit(&mut r.rows, 0);
        assert!(r.set.flat.is_none());
    }

    /// A set that lost most of its tuples is grouped again by the compaction and grows
    /// back grouped: kept, its emptied groups' bitmaps would look sparse against the few
    /// tuples left, and the set would turn flat as the relation grew again.
    #[test]
    fn a_compacted_set_grows_back_grouped() {
        let (groups, per_group) = (1024u32, 64u32);
        // Values a word apart: a bitmap of 64 words per group, 512 KiB in all.
        let fill = |r: &mut Relation| {
            for g in 0..groups {
                for k in 0..per_group {
                    r.set.stage(&r.rows, &[g, k * 64]);
                }
                r.set.commit(&mut r.rows, 0);
            }
        };
        let mut r = Relation::new(2);
        fill(&mut r);
        assert!(r.set.flat.is_none());
        let all: Vec<Vec<u32>> = r.rows.live_rows().skip(1).map(<[u32]>::to_vec).collect();
        remove_tuples(&mut r.rows, &mut r.set, all.iter().map(Vec::as_slice));
        r.compact_if_sparse();
        assert_eq!(r.len(), 1);
        fill(&mut r);
        assert!(r.set.flat.is_none(), "the set turned flat: {} bytes grouped", r.set.grouped_bytes());
        assert_eq!(r.len(), (groups * per_group) as usize);
        assert!(r.contains(&[groups - 1, 64 * (per_group - 1)]));
    }

    /// Bitmaps that grow move to the end of their arena; the words they leave are reused
    /// by packing the arena again, which keeps every group's values.
    #[test]
    fn growing_bitmaps_pack_their_arena_and_keep_their_values() {
        let mut r = Relation::new(2);
        let mut expected = BTreeSet::new();
        // Values arrive from the top of each group's range down, so each new word below
        // moves the group's bitmap.
        for v in (0..64 * 200).rev().step_by(61) {
            for g in 0..300 {
                let tuple = [g, v + g % 7];
                assert_eq!(r.insert(&tuple), expected.insert(tuple));
            }
        }
        let set = &r.set;
        let live: usize =
            set.values.iter().map(|v| if let Values::Bits { len, .. } = v { *len as usize } else { 0 }).sum();
        assert!(set.values.iter().all(|v| matches!(v, Values::Bits { .. })));
        let (words, unused) = (set.bitmaps.words.len(), set.bitmaps.unused);
        assert_eq!(words - unused, live, "the unused words are counted");
        assert!(unused <= (words / 4).max(1024), "{unused} of {words} words unused");
        assert_eq!(r.live_rows().count(), expected.len());
        for tuple in &expected {
            assert!(r.contains(tuple));
        }
        assert!(!r.contains(&[3, 64 * 200 + 100]));
    }

    /// The groups list every tuple of the set once, prefix and last value, in every form
    /// a group takes (inline, hashed, bitmap) and after removals.
    #[test]
    fn groups_hold_exactly_the_tuples() {
        for arity in 0..4 {
            let mut r = Relation::new(arity);
            let mut expected = BTreeSet::new();
            let mut next = xorshift(99u64);
            for round in 0..3000 {
                let tuple: Vec<u32> =
                    (0..arity).map(|_| if round % 4 == 0 { next(1 << 20) } else { next(40) }).collect();
                r.insert(&tuple);
                expected.insert(tuple);
                if round % 6 == 0 {
                    let victim: Vec<u32> = (0..arity).map(|_| next(40)).collect();
                    r.remove(&victim);
                    expected.remove(&victim);
                }
            }
            let groups = Groups::new(&r.set, &r.rows);
            let mut listed = BTreeSet::new();
            if arity == 0 {
                assert!(groups.is_empty());
                if groups.has_empty_tuple() {
                    listed.insert(Vec::new());
                }
            }
            let mut values = Vec::new();
            for g in 0..groups.len() {
                values.clear();
                groups.values(g, &mut values);
                assert_eq!(values.len(), groups.group_len(g));
                assert_eq!(groups.find(groups.prefix(g)), Some(g));
                for &v in &values {
                    assert!(groups.contains(g, v));
                    let tuple: Vec<u32> = groups.prefix(g).iter().copied().chain([v]).collect();
                    assert!(listed.insert(tuple), "listed once");
                }
            }
            assert_eq!(listed, expected, "arity {arity}");
        }
    }

    #[test]
    fn removing_many_tuples_at_once_scans_and_few_walk_chains() {
        let mut r = Relation::new(2);
        for a in 0..50 {
            for b in 0..40 {
                r.insert(&[a, b]);
            }
        }
        let few: Vec<[u32; 2]> = vec![[3, 4], [3, 5], [9, 0], [77, 1]];
        assert_eq!(remove_tuples(&mut r.rows, &mut r.set, few.iter().map(|t| &t[..])), 3);
        assert_eq!(r.len(), 50 * 40 - 3);
        assert!(!r.contains(&[3, 4]) && r.contains(&[3, 6]));
        let many: Vec<[u32; 2]> = (0..30).flat_map(|a| (0..40).map(move |b| [a, b])).collect();
        assert_eq!(remove_tuples(&mut r.rows, &mut r.set, many.iter().map(|t| &t[..])), 30 * 40 - 3);
        assert_eq!(r.len(), 20 * 40);
        assert_eq!(r.live_rows().filter(|t| t[0] < 30).count(), 0);
    }
}
