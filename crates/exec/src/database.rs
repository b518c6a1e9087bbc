//! The database: one set-semantics relation per predicate of a program.

use crate::limits::{Limits, ResourceError};
use crate::relation::{
    relation_bytes, relation_total_bytes, remove_rows, remove_tuples, Groups, Rank, Relation, RelationBytes, RowSet,
    Rows, NIL,
};
use ir::{Fact, PredId, Program};
use std::collections::HashMap;

/// One relation per [`PredId`] (indexed by [`PredId::index`]); tuples are `u32` values
/// (`ir::Const.0`). Tuples of the wrong arity are rejected, never stored.
#[derive(Clone, Debug)]
pub struct Database {
    /// The rows of each relation, what joins read.
    pub(crate) rows: Vec<Rows>,
    /// The tuple set of each relation, kept apart so a join can stage into it.
    pub(crate) sets: Vec<RowSet>,
    /// The rank of the rows appended next. Every join's commit ([`Database::commit`])
    /// takes a new one, so a fact derived by a join has a derivation (the one that
    /// produced it) from facts of strictly lower rank: joins read committed rows only.
    /// Ranked maintenance relies on exactly that.
    rank: Rank,
    /// The memory budget and what the relations held at their last measurement.
    memory: Memory,
}

/// The memory budget of a database ([`Database::set_memory_budget`]) and the heap bytes
/// of each relation at its last measurement ([`Database::measure`]).
#[derive(Clone, Debug, Default)]
struct Memory {
    budget: Option<usize>,
    /// Per relation, its bytes when last measured (all zero without a budget).
    bytes: Vec<usize>,
    /// The sum of `bytes`.
    total: usize,
}

impl Database {
    /// Empty relations with the arities of the program's predicates.
    pub fn new(program: &Program) -> Self {
        let relations: Vec<Relation> = program.preds.iter().map(|p| Relation::new(p.arity)).collect();
        Self::from_relations(relations)
    }

    fn from_relations(relations: Vec<Relation>) -> Self {
        let (rows, sets) = relations.into_iter().map(|r| (r.rows, r.set)).unzip();
        Database { rows, sets, rank: 0, memory: Memory::default() }
    }

    /// A database holding exactly `facts`; facts of unknown predicates or the wrong arity
    /// are skipped (the loader reports those before evaluation).
    pub fn from_facts(program: &Program, facts: &[Fact]) -> Self {
        let mut db = Database::new(program);
        let mut tuple = Vec::new();
        for fact in facts {
            tuple.clear();
            tuple.extend_from_slice(&fact.values);
            db.insert(fact.pred, &tuple);
        }
        db
    }

    /// Applies `limits`: the tuple limit of every relation ([`Database::set_tuple_limit`],
    /// none: as many as row ids allow) and the memory budget
    /// ([`Database::set_memory_budget`]).
    pub fn set_limits(&mut self, limits: Limits) {
        self.set_tuple_limit(limits.max_tuples.unwrap_or(NIL));
        self.set_memory_budget(limits.max_memory);
    }

    /// Lets the relations together hold at most `budget` heap bytes (`None`: no budget),
    /// measured as [`Database::relation_bytes`] counts them, and measures them now. A
    /// relation whose growth passes it stops growing, and the evaluation or update that
    /// made it grow ends with [`crate::ResourceKind::MemoryBudget`]; `limits.rs` says
    /// when the relations are measured. Databases made from this one for maintenance
    /// have the same budget, each for its own relations.
    pub fn set_memory_budget(&mut self, budget: Option<usize>) {
        self.memory.budget = budget;
        if budget.is_none() {
            self.memory = Memory::default();
            for (rows, set) in self.rows.iter().zip(&mut self.sets) {
                set.clear_memory_share(rows);
            }
        }
        self.measure_memory();
    }

    /// Measures every relation against the memory budget, if there is one. When they
    /// hold more than it together, the largest relation (the first of equals) fails,
    /// and the others are left no room to grow.
    pub fn measure_memory(&mut self) {
        let Some(budget) = self.memory.budget else { return };
        let bytes: Vec<usize> =
            self.rows.iter().zip(&self.sets).map(|(rows, set)| relation_total_bytes(rows, set)).collect();
        let total = bytes.iter().sum::<usize>();
        let largest = (0..bytes.len()).rev().max_by_key(|&p| bytes[p]);
        for (p, (rows, set)) in self.rows.iter().zip(&mut self.sets).enumerate() {
            // Only the largest is measured past the budget: the others see it as full.
            let others = match Some(p) == largest || total <= budget {
                true => total - bytes[p],
                false => budget.saturating_sub(bytes[p]),
            };
            set.set_memory_share(rows, budget, others, bytes[p]);
        }
        self.memory.bytes = bytes;
        self.memory.total = total;
    }

    /// Measures relation `pred` against the memory budget, if there is one: it fails
    /// when the relations then hold more than the budget, and is otherwise left the room
    /// the budget has for its tuples until its next measurement.
    pub(crate) fn measure(&mut self, pred: PredId) {
        let Some(budget) = self.memory.budget else { return };
        let p = pred.index();
        let bytes = relation_total_bytes(&self.rows[p], &self.sets[p]);
        let memory = &mut self.memory;
        memory.total = memory.total - memory.bytes[p] + bytes;
        memory.bytes[p] = bytes;
        self.sets[p].set_memory_share(&self.rows[p], budget, memory.total - bytes, bytes);
    }

    /// Lets every relation hold at most `limit` tuples (by default, as many as `u32` row
    /// ids allow), and drops every cap ([`Database::set_relation_cap`]). A relation that
    /// would grow past it stops growing, and the evaluation
    /// or update that made it grow ends with a [`ResourceError`]; so does a
    /// [`Database::insert`] of input facts past it, at the next evaluation.
    pub fn set_tuple_limit(&mut self, limit: u32) {
        for (rows, set) in self.rows.iter().zip(&mut self.sets) {
            set.set_limit(rows, limit);
        }
    }

    /// Gives back the tuple sets of the input relations that no rule `plan` fires can
    /// test a whole tuple of (an atom all of whose variables some other literal of its
    /// rule binds, or a negated atom): the evaluation then reads them only through their
    /// rows and the indexes its joins build, and the set, which kept the facts distinct as
    /// they were read, would hold as much as the rows and an index together (forest10000x50's
    /// edges: 10 MB beside 4 MB of rows). A set given back answers a membership test by
    /// scanning the rows, and is built again by the first insertion or removal, so the
    /// database stays correct for any later use; a caller that will maintain or query it
    /// tuple by tuple keeps the sets instead.
    pub fn release_unprobed_input_sets(&mut self, plan: &plan::ProgramPlan, program: &Program) {
        let mut kept = tested_whole(plan, program, self.relation_count());
        for rule in &program.rules {
            kept[rule.head.pred.index()] = true;
        }
        for (p, kept) in kept.into_iter().enumerate() {
            if !kept && p < self.rows.len() {
                self.sets[p].release(&self.rows[p]);
            }
        }
    }

    /// Makes each derived relation that no rule `plan` fires negates or aggregates over
    /// give its tuple set back as soon as the evaluation has finished the stratum that
    /// derives it (`Database::finish_stratum`): only its own stratum's joins stage into
    /// it, and the later strata read it through its rows and the indexes they build. The
    /// set of a closure is about as large as an index of it, so the peak of a program
    /// whose closure a later rule joins with is then the rows and one of the two, not
    /// both. A later join whose plan tests whole tuples of it builds the set again first
    /// (`Database::rebuild_released_set`); any other membership test scans the rows,
    /// and the first insertion or removal builds it again, as for the inputs
    /// ([`Database::release_unprobed_input_sets`]). A caller that will maintain or query
    /// the database tuple by tuple does not call this.
    pub fn release_unprobed_sets_once_derived(&mut self, plan: &plan::ProgramPlan, program: &Program) {
        let mut kept = vec![false; self.relation_count()];
        for rule in plan.rules.iter().filter(|r| r.fires()).map(|r| &program.rules[r.rule.index()]) {
            for atom in &rule.negated {
                kept[atom.pred.index()] = true;
            }
            if rule.aggregate.is_some() {
                for atom in &rule.body {
                    kept[atom.pred.index()] = true;
                }
            }
        }
        for rule in &program.rules {
            let p = rule.head.pred.index();
            if !kept[p] && p < self.sets.len() {
                self.sets[p].release_once_derived();
            }
        }
    }

    /// Builds the set of relation `pred` again if it was given back: a join is about to
    /// test whole tuples of it.
    pub(crate) fn rebuild_released_set(&mut self, pred: PredId) {
        let p = pred.index();
        self.sets[p].rebuild_if_released(&self.rows[p]);
    }

    /// Called when the evaluation has finished the stratum of the relations `heads`:
    /// those marked by [`Database::release_unprobed_sets_once_derived`] give their
    /// tuple sets back.
    pub(crate) fn finish_stratum(&mut self, heads: &[PredId]) {
        for &h in heads {
            let p = h.index();
            self.sets[p].finish_deriving(&self.rows[p]);
        }
    }

    /// Lets relation `pred` alone hold at most `cap` tuples (when that is below its
    /// limit), until the next [`Database::set_tuple_limit`]. Passing the cap ends an
    /// evaluation like the limit does, but with [`crate::ResourceKind::Cap`]: a caller
    /// that watches a relation's growth (to abandon an evaluation that is getting too
    /// large for its purpose) tells its own signal apart from the user's limit.
    pub fn set_relation_cap(&mut self, pred: PredId, cap: u32) {
        let p = pred.index();
        if let (Some(rows), Some(set)) = (self.rows.get(p), self.sets.get_mut(p)) {
            set.set_cap(rows, cap);
        }
    }

    /// Makes every tuple set of two or more columns take its flat form (a hash table of
    /// row ids) once its relation has `rows` rows, however small: the form a large sparse
    /// relation takes by itself, for tests to check it on small inputs. Databases made
    /// from this one (the empty copies maintenance makes) do the same.
    pub fn flat_sets_from(&mut self, rows: u32) {
        for set in &mut self.sets {
            set.force_flat_from(rows);
        }
    }

    /// The first relation, if any, that stopped growing, and why.
    pub fn failure(&self) -> Option<ResourceError> {
        (0..self.rows.len()).find_map(|p| self.failure_of(PredId(p as u32)))
    }

    /// Why relation `pred` stopped growing, if it did: a tuple over the limit, rows or
    /// an index without memory.
    pub(crate) fn failure_of(&self, pred: PredId) -> Option<ResourceError> {
        let p = pred.index();
        let kind = self.sets[p].failure.or(self.rows[p].failure)?;
        Some(ResourceError { pred, kind })
    }

    /// `Err` with [`Database::failure`], if any.
    pub(crate) fn check(&self) -> Result<(), ResourceError> {
        self.failure().map_or(Ok(()), Err)
    }

    /// `Err` when relation `pred` stopped growing.
    pub(crate) fn check_pred(&self, pred: PredId) -> Result<(), ResourceError> {
        self.failure_of(pred).map_or(Ok(()), Err)
    }

    /// Adds a tuple; false when it was present already or does not fit the predicate.
    pub fn insert(&mut self, pred: PredId, tuple: &[u32]) -> bool {
        let p = pred.index();
        match (self.rows.get_mut(p), self.sets.get_mut(p)) {
            (Some(rows), Some(set)) if rows.arity == tuple.len() => {
                let added = set.stage(rows, tuple);
                set.commit(rows, self.rank);
                added
            }
            _ => false,
        }
    }

    /// Stages a tuple (of `pred`'s arity) to become a row at the next
    /// [`Database::commit`]; false when it is present or staged already. Many tuples
    /// staged and committed together cost a commit, not one each.
    pub(crate) fn stage(&mut self, pred: PredId, tuple: &[u32]) -> bool {
        let p = pred.index();
        match (self.rows.get_mut(p), self.sets.get_mut(p)) {
            (Some(rows), Some(set)) if rows.arity == tuple.len() => set.stage(rows, tuple),
            _ => false,
        }
    }

    /// Adds the tuples laid out one after another in `values` (`arity(pred)` values each),
    /// as one batch: each is deduplicated as it comes, and they become rows at once, which
    /// is what loading a large input wants. Returns how many were new. Nothing is added
    /// when `values` does not divide into tuples of the predicate, or the predicate is
    /// unknown or nullary (its one tuple goes through [`Database::insert`]).
    pub fn insert_all(&mut self, pred: PredId, values: &[u32]) -> usize {
        let p = pred.index();
        let (Some(rows), Some(set)) = (self.rows.get_mut(p), self.sets.get_mut(p)) else { return 0 };
        let arity = rows.arity;
        if arity == 0 || !values.len().is_multiple_of(arity) {
            return 0;
        }
        for tuple in values.chunks_exact(arity) {
            set.stage(rows, tuple);
        }
        let added = set.commit(rows, self.rank) as usize;
        self.measure(pred);
        added
    }

    /// Removes a tuple; false when it was absent.
    pub fn remove(&mut self, pred: PredId, tuple: &[u32]) -> bool {
        let p = pred.index();
        match (self.rows.get_mut(p), self.sets.get_mut(p)) {
            (Some(rows), Some(set)) => remove_tuples(rows, set, [tuple]) == 1,
            _ => false,
        }
    }

    pub fn contains(&self, pred: PredId, tuple: &[u32]) -> bool {
        let p = pred.index();
        match (self.rows.get(p), self.sets.get(p)) {
            (Some(rows), Some(set)) => set.contains(rows, tuple),
            _ => false,
        }
    }

    /// The number of tuples of `pred` (0 for an unknown predicate).
    pub fn len(&self, pred: PredId) -> usize {
        self.rows.get(pred.index()).map_or(0, Rows::len)
    }

    /// The number of tuples over all relations.
    pub fn total_len(&self) -> usize {
        self.rows.iter().map(Rows::len).sum()
    }

    /// The number of relations (the program's predicate count).
    pub fn relation_count(&self) -> usize {
        self.rows.len()
    }

    pub fn arity(&self, pred: PredId) -> usize {
        self.rows.get(pred.index()).map_or(0, |rows| rows.arity)
    }

    /// The tuples of `pred` in no particular order, without copying them (none for an
    /// unknown predicate).
    pub fn tuples(&self, pred: PredId) -> impl Iterator<Item = &[u32]> + '_ {
        self.rows.get(pred.index()).into_iter().flat_map(Rows::live_rows)
    }

    /// The tuples of `pred` grouped by their prefix, to select and read them in order
    /// without copying (see [`Groups`]). An unknown predicate has no tuples.
    pub fn groups(&self, pred: PredId) -> Option<Groups<'_>> {
        let p = pred.index();
        Some(Groups::new(self.sets.get(p)?, self.rows.get(p)?))
    }

    /// The heap bytes relation `pred` holds, part by part (nothing for an unknown one).
    pub fn relation_bytes(&self, pred: PredId) -> RelationBytes {
        let p = pred.index();
        match (self.rows.get(p), self.sets.get(p)) {
            (Some(rows), Some(set)) => relation_bytes(rows, set),
            _ => RelationBytes::default(),
        }
    }

    /// The tuples of `pred` in lexicographic order.
    pub fn sorted_tuples(&self, pred: PredId) -> Vec<Vec<u32>> {
        if pred.index() >= self.rows.len() {
            return Vec::new();
        }
        self.sorted_rows_since(pred, 0)
    }

    /// Whether both databases hold the same tuples in every relation.
    pub fn same_tuples(&self, other: &Database) -> bool {
        self.rows.len() == other.rows.len()
            && (0..self.rows.len() as u32).all(|p| {
                let pred = PredId(p);
                self.len(pred) == other.len(pred) && self.sorted_tuples(pred) == other.sorted_tuples(pred)
            })
    }

    /// A fresh database with the same relations holding only the live rows of those that
    /// are not `derived`: the input alone, whose ranks then match those of any other
    /// evaluation from the same input.
    pub(crate) fn inputs_only(&self, derived: &[bool]) -> Database {
        let mut inputs = self.empty_like();
        for (p, rows) in self.rows.iter().enumerate().filter(|&(p, _)| !derived[p]) {
            let pred = PredId(p as u32);
            if rows.arity == 0 {
                for tuple in rows.live_rows() {
                    inputs.insert(pred, tuple);
                }
            } else {
                let copy = Relation::live_copy(rows, &self.sets[p], inputs.rank);
                (inputs.rows[p], inputs.sets[p]) = (copy.rows, copy.set);
            }
        }
        inputs
    }

    /// An empty database with the same relations (arities and tuple limits) and no
    /// indexes.
    pub(crate) fn empty_like(&self) -> Database {
        let relations = self
            .rows
            .iter()
            .zip(&self.sets)
            .map(|(rows, set)| {
                let mut rel = Relation::new(rows.arity);
                rel.set.copy_limit(&rel.rows, set);
                rel
            })
            .collect();
        let mut empty = Self::from_relations(relations);
        empty.set_memory_budget(self.memory.budget);
        empty
    }

    /// Takes the relations `which` marks out of the database, leaving them empty, and
    /// returns them in a database of their own (the others empty there).
    pub(crate) fn take(&mut self, which: &[bool]) -> Database {
        let mut taken = self.empty_like();
        for p in (0..self.rows.len()).filter(|&p| which.get(p).copied().unwrap_or(false)) {
            std::mem::swap(&mut self.rows[p], &mut taken.rows[p]);
            std::mem::swap(&mut self.sets[p], &mut taken.sets[p]);
        }
        self.measure_memory();
        taken.measure_memory();
        taken
    }

    pub(crate) fn rel(&self, pred: PredId) -> &Rows {
        &self.rows[pred.index()]
    }

    pub(crate) fn rel_mut(&mut self, pred: PredId) -> &mut Rows {
        &mut self.rows[pred.index()]
    }

    /// Removes every tuple of `tuples` from `pred` in one batch; returns how many were
    /// present.
    pub(crate) fn remove_all<'t>(&mut self, pred: PredId, tuples: impl IntoIterator<Item = &'t [u32]>) -> usize {
        let p = pred.index();
        remove_tuples(&mut self.rows[p], &mut self.sets[p], tuples)
    }

    /// Turns the tuples staged into `pred`'s set into rows, of a new rank, and measures
    /// the relation against the memory budget when it grew.
    pub(crate) fn commit(&mut self, pred: PredId) -> u32 {
        let set = &mut self.sets[pred.index()];
        if set.staged_len() > 0 {
            self.rank += 1;
        }
        let committed = set.commit(&mut self.rows[pred.index()], self.rank);
        if committed > 0 {
            self.measure(pred);
        }
        committed
    }

    /// Commits what is staged in every relation.
    pub(crate) fn commit_all(&mut self) {
        for p in 0..self.relation_count() {
            self.commit(PredId(p as u32));
        }
    }

    /// Starts a new rank for the tuples [`Database::insert`] adds next, above every row so
    /// far: facts inserted from now on may rest on any fact present.
    pub(crate) fn next_rank(&mut self) {
        self.rank += 1;
    }

    /// Removes the tuples of the live rows `ids` of `pred`.
    pub(crate) fn remove_rows(&mut self, pred: PredId, ids: &[u32]) {
        let p = pred.index();
        remove_rows(&mut self.rows[p], &mut self.sets[p], ids);
    }

    /// Compacts every relation that is mostly tombstones (between updates only).
    pub(crate) fn compact(&mut self) {
        let rows = std::mem::take(&mut self.rows);
        let sets = std::mem::take(&mut self.sets);
        let relations = rows
            .into_iter()
            .zip(sets)
            .map(|(rows, set)| {
                let mut rel = Relation { rows, set };
                rel.compact_if_sparse();
                rel
            })
            .collect();
        let (rank, budget) = (self.rank, self.memory.budget);
        *self = Self::from_relations(relations);
        self.rank = rank;
        self.set_memory_budget(budget);
    }

    /// Row-range ends of every relation: a version marker of the whole database.
    pub(crate) fn ends(&self) -> Vec<u32> {
        self.rows.iter().map(Rows::end).collect()
    }

    /// The tuples of `pred` in rows `from..` (the ones added since a marker), sorted.
    pub(crate) fn sorted_rows_since(&self, pred: PredId, from: u32) -> Vec<Vec<u32>> {
        self.sorted_rows_between(pred, from, self.rel(pred).end())
    }

    /// The tuples of `pred` in rows `from..to`, sorted. Sorting happens on packed keys or
    /// row ids, so that every tuple is allocated once, already in its place: reports of
    /// DRed list millions of tuples.
    pub(crate) fn sorted_rows_between(&self, pred: PredId, from: u32, to: u32) -> Vec<Vec<u32>> {
        let rel = self.rel(pred);
        let live = (from..to).filter(|&r| rel.is_alive(r));
        match rel.arity {
            0 => live.map(|_| Vec::new()).collect(),
            1 => {
                let mut values: Vec<u32> = live.map(|r| rel.row(r)[0]).collect();
                values.sort_unstable();
                values.into_iter().map(|v| vec![v]).collect()
            }
            2 => {
                let mut keys: Vec<u64> = live
                    .map(|r| {
                        let t = rel.row(r);
                        u64::from(t[0]) << 32 | u64::from(t[1])
                    })
                    .collect();
                ir::radix_sort(&mut keys);
                keys.into_iter().map(|k| vec![(k >> 32) as u32, k as u32]).collect()
            }
            _ => {
                let mut ids: Vec<u32> = live.collect();
                ids.sort_unstable_by(|&a, &b| rel.row(a).cmp(rel.row(b)));
                ids.into_iter().map(|r| rel.row(r).to_vec()).collect()
            }
        }
    }
}

/// Per relation (`count` of them), whether a rule `plan` fires can test a whole tuple of
/// it: it is negated, aggregated over, or an atom of it has every variable bound by
/// another literal of its rule. The others are read through rows and indexes only.
fn tested_whole(plan: &plan::ProgramPlan, program: &Program, count: usize) -> Vec<bool> {
    let mut tested = vec![false; count];
    // Per variable of a rule, how many of its literals mention it: counted once per
    // rule, so a body of thousands of atoms is read in linear time.
    let mut literals: HashMap<ir::Symbol, usize> = HashMap::new();
    for rule in plan.rules.iter().filter(|r| r.fires()).map(|r| &program.rules[r.rule.index()]) {
        for atom in &rule.negated {
            tested[atom.pred.index()] = true;
        }
        if rule.aggregate.is_some() {
            for atom in &rule.body {
                tested[atom.pred.index()] = true;
            }
            continue;
        }
        literals.clear();
        let atom_vars = rule.body.iter().chain(&rule.negated).map(ir::Atom::vars);
        let comparison_vars = rule.comparisons.iter().map(|c| {
            let mut vars: Vec<ir::Symbol> = c.vars().collect();
            vars.sort_unstable();
            vars.dedup();
            vars
        });
        for v in atom_vars.chain(comparison_vars).flatten() {
            *literals.entry(v).or_default() += 1;
        }
        // An atom is tested whole when every variable of it is in another literal too.
        for atom in &rule.body {
            if atom.args.iter().all(|t| t.var().is_none_or(|v| literals[&v] > 1)) {
                tested[atom.pred.index()] = true;
            }
        }
    }
    tested
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

    #[test]
    fn a_batch_of_tuples_loads_with_set_semantics() {
        let p = program("Z().\nR(X) <- E(X,Y), Z()");
        let (e, z) = (p.lookup_source("E").unwrap(), p.lookup_source("Z").unwrap());
        let mut db = Database::new(&p);
        assert_eq!(db.insert_all(e, &[1, 2, 3, 4, 1, 2]), 2);
        assert_eq!(db.insert_all(e, &[3, 4, 5]), 0, "not a whole number of tuples");
        assert_eq!(db.insert_all(e, &[5, 6, 1, 2]), 1);
        assert_eq!(db.sorted_tuples(e), [[1, 2], [3, 4], [5, 6]]);
        assert_eq!(db.insert_all(z, &[]), 0, "nullary tuples go through insert");
        assert_eq!(db.insert_all(PredId(99), &[1]), 0);
        let mut listed: Vec<&[u32]> = db.tuples(e).collect();
        listed.sort();
        assert_eq!(listed, [&[1, 2][..], &[3, 4], &[5, 6]]);
        assert_eq!(db.tuples(PredId(99)).count(), 0);
    }
}
