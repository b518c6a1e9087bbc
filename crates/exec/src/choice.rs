//! Soufflé's `choice-domain` in the native engines (docs/semantics.md, Soufflé programs:
//! `choice-domain`): a relation with one holds at most one tuple per value of each of its
//! keys. The joins of a round stage the heads of such a relation into a candidate set of
//! its own instead of the relation; when the round ends, [`Chooser::choose`] admits the
//! round's candidates in ascending order of their values (column by column, each in its
//! type's order, the order outputs list tuples in), each one none of whose keys a tuple
//! of the relation has yet, and drops the others.
//!
//! A round's candidates do not depend on the order its joins ran in, nor on the threads
//! they were split over, and the reference engine derives in each round of a stratum the
//! candidates the semi-naive engine derives (it runs a program with a choice stratum by
//! stratum), so the choice is the same with either engine and any number of threads.

use crate::database::Database;
use crate::limits::ResourceError;
use crate::relation::RowSet;
use ir::{PredId, Program, ValueStore, ValueType};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cmp::Ordering;

/// The keys of every relation of a program that has a `choice-domain`.
#[derive(Clone)]
pub(crate) struct ChoiceKeys {
    /// Per relation with a choice domain: its keys' columns and its column types.
    relations: FxHashMap<PredId, (Vec<Vec<usize>>, Vec<ValueType>)>,
    values: ValueStore,
}

impl ChoiceKeys {
    pub(crate) fn new(program: &Program) -> Self {
        let relations = program
            .pred_ids()
            .filter_map(|p| {
                let pred = program.pred(p);
                Some((p, (pred.choice.as_ref()?.keys.clone(), pred.types.clone())))
            })
            .collect();
        ChoiceKeys { relations, values: program.consts.clone() }
    }

    /// Whether `pred` has a choice domain.
    pub(crate) fn chooses(&self, pred: PredId) -> bool {
        self.relations.contains_key(&pred)
    }

    /// Whether no relation has a choice domain.
    pub(crate) fn is_empty(&self) -> bool {
        self.relations.is_empty()
    }
}

/// The choice of one evaluation: per relation with a choice domain, the round's
/// candidates and the key values its tuples hold.
pub(crate) struct Chooser<'k> {
    keys: &'k ChoiceKeys,
    chosen: FxHashMap<PredId, Chosen>,
}

/// One relation's state in a [`Chooser`].
struct Chosen {
    candidates: RowSet,
    /// Per key, the values the relation's tuples hold in its columns.
    taken: Vec<FxHashSet<Vec<u32>>>,
    /// The rows below this one are counted in `taken`.
    seen: u32,
}

impl<'k> Chooser<'k> {
    pub(crate) fn new(keys: &'k ChoiceKeys) -> Self {
        Chooser { keys, chosen: FxHashMap::default() }
    }

    /// The set the joins of a round stage `pred`'s heads into: its candidates when it has
    /// a choice domain, none otherwise (they go to the relation).
    pub(crate) fn candidates(&mut self, pred: PredId, arity: usize) -> Option<&mut RowSet> {
        let (keys, _) = self.keys.relations.get(&pred)?;
        let chosen = self.chosen.entry(pred).or_insert_with(|| Chosen {
            candidates: RowSet::new(arity),
            taken: vec![FxHashSet::default(); keys.len()],
            seen: 0,
        });
        Some(&mut chosen.candidates)
    }

    /// Ends a round: admits each relation's candidates in ascending order while their keys
    /// are free, as one commit per relation. Stops when a relation would grow past its
    /// limit.
    pub(crate) fn choose(&mut self, db: &mut Database) -> Result<(), ResourceError> {
        let mut preds: Vec<PredId> = self.chosen.keys().copied().collect();
        preds.sort_unstable();
        for pred in preds {
            let (keys, types) = &self.keys.relations[&pred];
            let chosen = self.chosen.get_mut(&pred).expect("listed above");
            let arity = types.len();
            let mut round = std::mem::replace(&mut chosen.candidates, RowSet::new(arity));
            let count = round.staged_len();
            let staged = round.take_staged();
            let rows = db.rel(pred);
            for r in chosen.seen..rows.end() {
                if rows.is_alive(r) {
                    take(keys, &mut chosen.taken, rows.row(r));
                }
            }
            chosen.seen = rows.end();
            if count == 0 {
                continue;
            }
            let mut candidates: Vec<&[u32]> = match arity {
                0 => vec![&[]],
                _ => staged.chunks_exact(arity).collect(),
            };
            candidates.sort_by(|a, b| compare(&self.keys.values, types, a, b));
            for tuple in candidates {
                let free = keys.iter().zip(&chosen.taken).all(|(key, taken)| !taken.contains(&key_of(key, tuple)));
                if free {
                    take(keys, &mut chosen.taken, tuple);
                    db.stage(pred, tuple);
                }
            }
            db.commit(pred);
            chosen.seen = db.rel(pred).end();
            db.check_pred(pred)?;
        }
        Ok(())
    }
}

/// The order of two tuples of column types `types`: column by column, each value in its
/// type's order.
fn compare(values: &ValueStore, types: &[ValueType], a: &[u32], b: &[u32]) -> Ordering {
    types
        .iter()
        .zip(a.iter().zip(b))
        .map(|(&ty, (&x, &y))| match x == y {
            true => Ordering::Equal,
            false => values.compare_records(ty, x, y),
        })
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

/// The values of `tuple` in the columns of `key`.
fn key_of(key: &[usize], tuple: &[u32]) -> Vec<u32> {
    key.iter().map(|&c| tuple[c]).collect()
}

/// Counts the key values of `tuple` as taken.
fn take(keys: &[Vec<usize>], taken: &mut [FxHashSet<Vec<u32>>], tuple: &[u32]) {
    for (key, taken) in keys.iter().zip(taken) {
        taken.insert(key_of(key, tuple));
    }
}
