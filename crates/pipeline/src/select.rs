//! Reading a relation's rows: those a query admits, or all of them, in an order of the
//! values ([`ValueOrder`]) straight from the relation's storage, so writing a whole
//! relation copies none of it.

use exec::Database;
use ir::PredId;

/// How writers order the values of a column: by the `u32`s tuples hold (an `unsigned`
/// column's order; any fixed order for internal use), as signed numbers (a `number`
/// column's), or by a rank of their own (symbols: Soufflé's numeric order of the `-D`
/// files, numbers first, then text).
pub enum ValueOrder {
    /// By the values' ids.
    Ids,
    /// As signed numbers.
    Signed,
    /// As floats (the bits of `f32`s), by their value, negative "not a number"s first
    /// and positive ones last, `-0` before `0`.
    Float,
    /// By a rank of each value.
    Ranks {
        /// The rank of each value (indexed by id; values never ranked have none).
        rank: Vec<u32>,
        /// The value of each rank, `0..`: the inverse of `rank`.
        value_of_rank: Vec<u32>,
    },
}

/// The rank of a value a [`ValueOrder::Ranks`] does not rank.
const UNRANKED: u32 = u32::MAX;

impl ValueOrder {
    /// The values in `in_order`, ranked in that order.
    pub fn ranked(in_order: Vec<u32>) -> Self {
        let mut rank = vec![UNRANKED; in_order.iter().max().map_or(0, |&v| v as usize + 1)];
        for (r, &v) in in_order.iter().enumerate() {
            rank[v as usize] = r as u32;
        }
        ValueOrder::Ranks { rank, value_of_rank: in_order }
    }

    #[inline]
    fn key(&self, v: u32) -> u32 {
        match self {
            ValueOrder::Ids => v,
            // Flipping the sign bit maps `i32::MIN..=i32::MAX` onto `0..=u32::MAX` in order.
            ValueOrder::Signed => v ^ (1 << 31),
            // A negative float's bits order it backwards; flipping them all puts it
            // below the positive ones, whose sign bit is set instead.
            ValueOrder::Float if v >> 31 == 1 => !v,
            ValueOrder::Float => v | (1 << 31),
            ValueOrder::Ranks { rank, .. } => {
                let r = rank[v as usize];
                debug_assert_ne!(r, UNRANKED, "value {v} is sorted but was not ranked");
                r
            }
        }
    }

    /// Sorts distinct values. By id, in place; by rank, through the ranks, which are dense:
    /// a group with many values is sorted by setting their ranks' bits in `bits` and
    /// reading them back in order (linear in the group and the ranks), a small one by
    /// sorting its ranks.
    fn sort(&self, values: &mut [u32], bits: &mut Vec<u64>) {
        match self {
            ValueOrder::Ids => values.sort_unstable(),
            ValueOrder::Signed | ValueOrder::Float => values.sort_unstable_by_key(|&v| self.key(v)),
            ValueOrder::Ranks { rank, value_of_rank } => {
                let words = value_of_rank.len().div_ceil(64);
                if words <= 4 * values.len() {
                    bits.resize(words, 0);
                    for &v in values.iter() {
                        let r = rank[v as usize];
                        bits[r as usize / 64] |= 1 << (r % 64);
                    }
                    let mut at = 0;
                    for (w, word) in bits.iter_mut().enumerate() {
                        let mut b = std::mem::take(word);
                        while b != 0 {
                            values[at] = value_of_rank[w * 64 + b.trailing_zeros() as usize];
                            at += 1;
                            b &= b - 1;
                        }
                    }
                    debug_assert_eq!(at, values.len(), "the values of a group are distinct");
                } else {
                    for v in values.iter_mut() {
                        *v = rank[*v as usize];
                    }
                    values.sort_unstable();
                    for v in values.iter_mut() {
                        *v = value_of_rank[*v as usize];
                    }
                }
            }
        }
    }
}

/// The order of column `i` among `orders`: its own, or the last one for a column past
/// their end.
fn column(orders: &[ValueOrder], i: usize) -> &ValueOrder {
    &orders[i.min(orders.len() - 1)]
}

/// Some tuples of one relation of a database: those a query admits, or all of them.
/// Writers read them in order straight from the relation ([`SelectedRows::for_each_sorted`]),
/// so printing a whole relation copies none of it.
#[derive(Clone, Copy)]
pub struct SelectedRows<'a> {
    db: &'a Database,
    pred: PredId,
    /// The query whose answers these are; `None` for the whole relation.
    query: Option<&'a ir::Query>,
}

impl<'a> SelectedRows<'a> {
    /// The answers of `query` (which names the relation to read) in `db`.
    pub fn of_query(db: &'a Database, query: &'a ir::Query) -> Self {
        SelectedRows { db, pred: query.atom.pred, query: Some(query) }
    }

    /// Every tuple of `pred`.
    pub fn relation(db: &'a Database, pred: PredId) -> Self {
        SelectedRows { db, pred, query: None }
    }

    /// The relation the tuples are selected from.
    pub fn pred(&self) -> PredId {
        self.pred
    }

    /// The number of values of each tuple.
    pub fn arity(&self) -> usize {
        self.db.arity(self.pred)
    }

    /// The number of tuples of the whole relation (selected or not): a bound on
    /// [`SelectedRows::count`] found without reading them.
    pub fn relation_len(&self) -> usize {
        self.db.len(self.pred)
    }

    /// Calls `f` with every selected tuple, in lexicographic order of the values as
    /// `order` orders each column (its last order orders the columns past its end: one
    /// order orders them all); stops at the first error. A ranked order needs to rank
    /// only the values of its columns of the selected tuples: no other value is sorted.
    ///
    /// The tuples are read through the relation's tuple set, which groups them by their
    /// prefix (every column but the last): a query that binds the whole prefix reads one
    /// group, found by one probe; a bound last value is one lookup per group; other
    /// bound columns skip the groups whose prefix differs. The groups are sorted by
    /// their prefix, then each group's last values, so the only memory taken is a group
    /// id per group and the values of one group.
    pub fn for_each_sorted<E>(&self, order: &[ValueOrder], f: impl FnMut(&[u32]) -> Result<(), E>) -> Result<(), E> {
        self.walk(Some(order), f)
    }

    /// Calls `f` with every selected tuple, in no particular order.
    pub fn for_each<E>(&self, f: impl FnMut(&[u32]) -> Result<(), E>) -> Result<(), E> {
        self.walk(None, f)
    }

    /// Visits the selected tuples group by group, sorted by `order` if given.
    fn walk<E>(&self, orders: Option<&[ValueOrder]>, mut f: impl FnMut(&[u32]) -> Result<(), E>) -> Result<(), E> {
        let Some(groups) = self.db.groups(self.pred) else { return Ok(()) };
        let arity = groups.arity();
        let bound: Vec<Option<u32>> = match self.query {
            Some(q) if q.atom.args.len() == arity => {
                q.atom.args.iter().map(|t| t.constant().map(|c| c.raw())).collect()
            }
            Some(_) => return Ok(()),
            None => vec![None; arity],
        };
        // Bound columns are selected below; only a repeated variable (`R(X,X)`) or a
        // record pattern needs each tuple checked against the query.
        let tested = self.query.is_some_and(ir::Query::tests_each_row);
        let accept = |t: &[u32]| !tested || self.query.is_none_or(|q| q.matches(t));
        if arity == 0 {
            return match groups.has_empty_tuple() && accept(&[]) {
                true => f(&[]),
                false => Ok(()),
            };
        }
        let (prefix_bound, last_bound) = bound.split_at(arity - 1);
        let mut ids: Vec<u32> = match prefix_bound.iter().copied().collect::<Option<Vec<u32>>>() {
            Some(prefix) => groups.find(&prefix).map(|g| g as u32).into_iter().collect(),
            None => (0..groups.len() as u32)
                .filter(|&g| groups.prefix(g as usize).iter().zip(prefix_bound).all(|(v, b)| b.is_none_or(|b| b == *v)))
                .collect(),
        };
        let mut row = vec![0u32; arity];
        let mut values = Vec::new();
        if let Some(orders) = orders {
            // An order may know only the values of the selected tuples (the `-D` writer
            // ranks just those), so only groups that hold a selected tuple are sorted,
            // and below, only a group's selected values.
            ids.retain(|&g| {
                let g = g as usize;
                row[..arity - 1].copy_from_slice(groups.prefix(g));
                match last_bound[0] {
                    Some(last) => {
                        row[arity - 1] = last;
                        groups.contains(g, last) && accept(&row)
                    }
                    None if !tested => groups.group_len(g) > 0,
                    None => {
                        values.clear();
                        groups.values(g, &mut values);
                        values.iter().any(|&v| {
                            row[arity - 1] = v;
                            accept(&row)
                        })
                    }
                }
            });
            let prefix_key =
                |g: u32| groups.prefix(g as usize).iter().enumerate().map(|(i, &v)| column(orders, i).key(v));
            let order = column(orders, 0);
            match arity {
                1 => {}
                2 => match order {
                    // The groups' one-value prefixes are distinct, and so are their dense
                    // ranks: when there are not many more ranks than groups, each group
                    // goes straight to its rank's slot (linear, no comparisons).
                    ValueOrder::Ranks { value_of_rank, .. } if value_of_rank.len() <= 4 * ids.len() => {
                        let mut by_rank = vec![u32::MAX; value_of_rank.len()];
                        for &g in &ids {
                            by_rank[order.key(groups.prefix(g as usize)[0]) as usize] = g;
                        }
                        ids.clear();
                        ids.extend(by_rank.into_iter().filter(|&g| g != u32::MAX));
                    }
                    _ => ids.sort_unstable_by_key(|&g| order.key(groups.prefix(g as usize)[0])),
                },
                _ => ids.sort_unstable_by(|&a, &b| prefix_key(a).cmp(prefix_key(b))),
            }
        }
        let mut scratch = Vec::new();
        for g in ids {
            let g = g as usize;
            row[..arity - 1].copy_from_slice(groups.prefix(g));
            if let Some(last) = last_bound[0] {
                if groups.contains(g, last) {
                    row[arity - 1] = last;
                    if accept(&row) {
                        f(&row)?;
                    }
                }
                continue;
            }
            values.clear();
            groups.values(g, &mut values);
            if let Some(orders) = orders {
                if tested {
                    values.retain(|&v| {
                        row[arity - 1] = v;
                        accept(&row)
                    });
                }
                column(orders, arity - 1).sort(&mut values, &mut scratch);
            }
            for &v in &values {
                row[arity - 1] = v;
                if accept(&row) {
                    f(&row)?;
                }
            }
        }
        Ok(())
    }

    /// The selected tuples copied out, sorted.
    pub fn collect(&self) -> ir::Tuples {
        let arity = self.db.arity(self.pred);
        let (mut values, mut len) = (Vec::new(), 0);
        let _ = self.for_each_sorted(&[ValueOrder::Ids], |t| {
            values.extend_from_slice(t);
            len += 1;
            Ok::<(), std::convert::Infallible>(())
        });
        ir::Tuples::from_sorted(arity, len, values)
    }

    /// The number of selected tuples.
    pub fn count(&self) -> usize {
        match self.query {
            None => self.db.len(self.pred),
            Some(_) => {
                let mut n = 0;
                let _ = self.for_each(|_| {
                    n += 1;
                    Ok::<(), std::convert::Infallible>(())
                });
                n
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{SelectedRows, ValueOrder};
    use exec::Database;

    /// A program with derived relations of arity 1, 2 and 3 (`P`, `Q`, `T`), the constants
    /// `0..3000` interned as ids `0..3000`, and random tuples in each: dense values (whose
    /// groups become bitmaps), sparse ones (inline and hashed groups), then removals.
    fn random_database() -> (ir::Program, Database) {
        let text = "P(X) <- A(X).\nQ(X,Y) <- B(X,Y).\nT(X,Y,Z) <- C(X,Y,Z).\n";
        let (program, diagnostics) = syntax::parse_program(text, ir::FileId(0));
        let program = program.unwrap_or_else(|| panic!("{diagnostics:?}"));
        for n in 0..3000 {
            assert_eq!(program.consts.intern(&n.to_string()).0, n);
        }
        let mut db = Database::new(&program);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |bound: u32| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % u64::from(bound)) as u32
        };
        for (name, arity) in [("P", 1), ("Q", 2), ("T", 3)] {
            let pred = program.lookup_source(name).unwrap();
            let mut inserted = Vec::new();
            for i in 0..4000 {
                let tuple: Vec<u32> = (0..arity).map(|_| if i % 3 == 0 { next(3000) } else { next(12) }).collect();
                db.insert(pred, &tuple);
                inserted.push(tuple);
            }
            for tuple in inserted.iter().step_by(7) {
                db.remove(pred, tuple);
            }
        }
        (program, db)
    }

    /// Answers read through the relation's groups equal a scan of every tuple filtered by
    /// the query, for queries binding every combination of columns, with repeated
    /// variables, on relations of arity 1 to 3.
    #[test]
    fn selection_through_groups_equals_a_scan() {
        let (base, db) = random_database();
        let mut checked = 0;
        for (name, arity) in [("P", 1u32), ("Q", 2), ("T", 3)] {
            // Each column: a fresh variable, a constant, or the first column's variable again.
            for pattern in 0..3u32.pow(arity) {
                let args: Vec<String> = (0..arity)
                    .map(|i| match pattern / 3u32.pow(i) % 3 {
                        0 => format!("X{i}"),
                        1 => ["3", "7", "11", "2999"][(i as usize + pattern as usize) % 4].to_string(),
                        _ => "X0".to_string(),
                    })
                    .collect();
                let mut program = base.clone();
                let query = format!("{name}({})", args.join(","));
                let diagnostics = syntax::parse_query(&query, ir::FileId(1), &mut program);
                assert!(diagnostics.is_empty(), "{query}: {diagnostics:?}");
                let q = program.query.as_ref().unwrap();
                let mut scanned: Vec<Vec<u32>> =
                    db.tuples(q.atom.pred).filter(|t| q.matches(t)).map(<[u32]>::to_vec).collect();
                scanned.sort();
                let selected = SelectedRows::of_query(&db, q);
                assert_eq!(selected.collect().to_vecs(), scanned, "{query}");
                assert_eq!(selected.count(), scanned.len(), "{query}");
                // Ranking only the selected tuples' values (as the `-D` writer does) is
                // enough, even where a group matches the bound prefix but holds no
                // selected tuple (a bound last value it lacks, a repeated variable).
                let mut present: Vec<u32> = scanned.iter().flatten().copied().collect();
                present.sort_unstable_by(|a, b| b.cmp(a));
                present.dedup();
                let mut read = Vec::new();
                let _ = selected.for_each_sorted(&[ValueOrder::ranked(present)], |t| {
                    read.push(t.to_vec());
                    Ok::<(), ()>(())
                });
                let mut reversed = scanned.clone();
                reversed.sort_by(|a, b| b.cmp(a));
                assert_eq!(read, reversed, "{query} in reversed order");
                checked += scanned.len();
            }
            let pred = base.lookup_source(name).unwrap();
            let mut all = db.sorted_tuples(pred);
            assert_eq!(SelectedRows::relation(&db, pred).collect().to_vecs(), all);
            // In another order of the values: reversed ids, ranking every id or only those
            // of the relation (few ranks per group, which places groups by rank directly).
            let mut present: Vec<u32> = all.iter().flatten().copied().collect();
            present.sort_unstable_by(|a, b| b.cmp(a));
            present.dedup();
            all.sort_by(|a, b| b.cmp(a));
            for reversed in [ValueOrder::ranked((0..3000).rev().collect()), ValueOrder::ranked(present)] {
                let mut read = Vec::new();
                let _ = SelectedRows::relation(&db, pred).for_each_sorted(std::slice::from_ref(&reversed), |t| {
                    read.push(t.to_vec());
                    Ok::<(), ()>(())
                });
                assert_eq!(read, all);
            }
        }
        assert!(checked > 1000, "the queries select something");
    }

    #[test]
    fn ranked_sorts_agree_for_small_and_large_groups() {
        let order = ValueOrder::ranked(vec![9, 4, 0, 7, 1, 8, 2, 6, 3, 5]);
        let by_rank = |mut v: Vec<u32>| {
            let mut bits = Vec::new();
            order.sort(&mut v, &mut bits);
            assert!(bits.iter().all(|&w| w == 0), "the bitmap is left clear for the next group");
            v
        };
        assert_eq!(by_rank(vec![5, 9, 0]), vec![9, 0, 5]);
        assert_eq!(by_rank((0..10).collect()), vec![9, 4, 0, 7, 1, 8, 2, 6, 3, 5]);
        let large = ValueOrder::ranked((0..1000).rev().collect());
        let mut v = vec![3, 999, 500, 0];
        large.sort(&mut v, &mut Vec::new());
        assert_eq!(v, vec![999, 500, 3, 0]);
    }
}
