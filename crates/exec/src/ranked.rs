//! Ranked over-deletion: the first phase of [`Maintenance::Ranked`](crate::Maintenance).
//!
//! Every row carries a rank: the commit that appended it ([`Database::commit`]). A join
//! reads committed rows only, so every derived fact has a derivation from facts of lower
//! rank — its *support*. That is the invariant this phase keeps: every fact left in the
//! database has a derivation from facts left in it and of lower rank. Induction on the
//! rank then shows every such fact is still derivable from the remaining input.
//!
//! DRed's over-deletion removes every fact with *some* derivation through a deleted
//! fact. Here a fact that lost a derivation is only a candidate; candidates are checked in
//! increasing rank, and one that still has a derivation from lower-ranked facts stays, and
//! its consequences are not even visited. Candidates of one rank are checked together: a
//! check reads lower ranks only, all of which are settled by then. A fact that fails the
//! check is removed, and the facts of higher rank derived through it become candidates;
//! a fact of equal or lower rank cannot have had it in its support.
//!
//! Removed facts that are still derivable (through facts of higher rank) come back in
//! DRed's rederive and insert phases, which follow unchanged: as with DRed, what
//! remains is closed under the rules except for the removed facts with a one-step
//! derivation from it.

use crate::database::Database;
use crate::dred::{derive_from, sync_delta_indexes};
use crate::join::View;
use crate::relation::{Rank, Rows};
use crate::seminaive::{Compiled, Run};
use ir::PredId;
use plan::AtomSource;
use std::collections::BTreeMap;

/// The work a support check counts for, in rule firings: it probes a row locator per
/// derivation it tries, several times a firing's cost, and fires nothing when it fails.
const CHECK_WORK: u64 = 4;

/// Candidates by rank, each a live row `(predicate, row)` of the database.
type Queue = BTreeMap<Rank, Vec<(u32, u32)>>;

/// Removes the input facts staged in `gone` (and committed) from `db`, then every derived
/// fact that loses its support, appending those to `gone` one batch per rank. Returns where
/// each batch begins in `gone` (the input facts come before the first), or `None` when the
/// work done passes `budget` (the rule firings counted in `run`, plus [`CHECK_WORK`] per
/// candidate checked, since a failing check fires nothing): the facts removed until then
/// are in `gone` and no longer in `db`, which is then no consistent state.
pub(crate) fn overdelete(
    c: &Compiled,
    db: &mut Database,
    gone: &mut Database,
    run: &mut Run,
    budget: u64,
) -> Option<Vec<Vec<u32>>> {
    // Facts are located in the derived relations a deletion can reach only: their
    // locators are built on the first deletion that reaches them (a relation nothing
    // deleted reaches never needs one). An input relation gets none: its deleted facts
    // are found through the index removal walks, and a locator over millions of edges
    // would make a batch that deletes one of them cost as much as recomputing.
    let reached = reachable(c, gone);
    for (_, rows) in db.rows.iter_mut().enumerate().filter(|&(p, _)| c.derived[p] && reached[p]) {
        rows.ensure_locator();
    }
    let mut pending = Pending { queue: Queue::new(), queued: vec![Vec::new(); db.relation_count()] };
    let mut lo = vec![0; db.relation_count()];
    let mut hi = gone.ends();
    let mut inputs: Vec<(u32, u32)> = Vec::new();
    for (p, deleted) in gone.rows.iter().enumerate().filter(|(_, rows)| rows.len() > 0) {
        let rows = &mut db.rows[p];
        inputs.extend(deleted.live_rows().filter_map(|tuple| input_row(rows, tuple)).map(|r| (p as u32, r)));
    }
    // Input facts need no support, so their removal is not checked. A fact ranked no
    // higher than every deleted input fact cannot rest on one.
    let floor = inputs.iter().map(|&(p, r)| db.rows[p as usize].rank_of(r)).min().unwrap_or(Rank::MAX);
    sync_delta_indexes(c, db, (&lo, &hi));
    pending.add_consequences(c, db, gone, (&lo, &hi), floor, run);
    remove(db, &inputs);
    let mut batches = Vec::new();
    let mut lost = Vec::new();
    let mut checked = 0;
    lo = hi;
    while let Some((rank, candidates)) = pending.queue.pop_first() {
        if run.stats.firings + checked > budget {
            return None;
        }
        let supported = check(c, db, &candidates, rank, run, budget.saturating_sub(checked))?;
        checked += CHECK_WORK * candidates.len() as u64;
        lost.clear();
        lost.extend(candidates.iter().zip(&supported).filter(|(_, &kept)| !kept).map(|(&fact, _)| fact));
        if lost.is_empty() {
            continue;
        }
        for &(p, r) in &lost {
            gone.insert(PredId(p), db.rows[p as usize].row(r));
        }
        hi = gone.ends();
        batches.push(lo.clone());
        sync_delta_indexes(c, db, (&lo, &hi));
        pending.add_consequences(c, db, gone, (&lo, &hi), rank, run);
        remove(db, &lost);
        lo = hi;
    }
    Some(batches)
}

/// The rows a ranked over-deletion of the facts staged in `gone` would add to the row
/// locators before it checks anything: those of the derived relations it reaches that
/// are not located yet. [`Maintenance::Auto`](crate::Maintenance) counts them against its budget.
pub(crate) fn locator_rows(c: &Compiled, db: &Database, gone: &Database) -> u64 {
    let reached = reachable(c, gone);
    (0..db.relation_count()).filter(|&p| c.derived[p] && reached[p]).map(|p| u64::from(db.rows[p].unlocated())).sum()
}

/// The live row of the input fact `tuple`, found by walking the chain of its key in the
/// index that removal walks (every column but the last, [`Rows::ensure_removal_index`]):
/// a group of one relation's facts, where a locator would have to hold every row.
fn input_row(rows: &mut Rows, tuple: &[u32]) -> Option<u32> {
    let Some(id) = rows.ensure_removal_index() else {
        // Arity 0: the relation holds at most the empty tuple.
        return (0..rows.end()).find(|&r| rows.is_alive(r));
    };
    rows.sync_index(id);
    let rows = &*rows;
    rows.indexes[id].chain(|i| tuple[i]).map(|(r, _)| r).find(|&r| rows.is_alive(r) && rows.row(r) == tuple)
}

/// Which relations hold facts with a derivation through a fact of `gone`: those of
/// `gone`, and the heads of the rules reading one of them.
fn reachable(c: &Compiled, gone: &Database) -> Vec<bool> {
    let mut readers: Vec<Vec<PredId>> = vec![Vec::new(); gone.relation_count()];
    for rule in &c.rules {
        for p in &rule.body_preds {
            readers[p.index()].push(rule.head);
        }
    }
    let mut reached: Vec<bool> = (0..gone.relation_count()).map(|p| gone.len(PredId(p as u32)) > 0).collect();
    let mut stack: Vec<usize> = (0..reached.len()).filter(|&p| reached[p]).collect();
    while let Some(p) = stack.pop() {
        for head in &readers[p] {
            if !std::mem::replace(&mut reached[head.index()], true) {
                stack.push(head.index());
            }
        }
    }
    reached
}

/// The candidates still to check.
struct Pending {
    queue: Queue,
    /// Per relation, a bitset of the rows queued so far: each is checked once.
    queued: Vec<Vec<u64>>,
}

impl Pending {
    /// Queues, under their ranks, the facts of rank above `floor` that have a derivation
    /// through one of the facts of rows `lo[p]..hi[p]` of `gone`, which `db` still holds.
    fn add_consequences(
        &mut self,
        c: &Compiled,
        db: &Database,
        gone: &Database,
        range: (&[u32], &[u32]),
        floor: Rank,
        run: &mut Run,
    ) {
        let Pending { queue, queued } = self;
        derive_from(c, db, &gone.rows, range, run, &mut |head, tuple| {
            let rel = db.rel(head);
            let Some(r) = rel.locate(|i| tuple[i]) else { return };
            let rank = rel.rank_of(r);
            let bits = &mut queued[head.index()];
            let (word, bit) = (r as usize / 64, 1u64 << (r % 64));
            if bits.len() <= word {
                bits.resize(word + 1, 0);
            }
            if rank > floor && bits[word] & bit == 0 {
                bits[word] |= bit;
                queue.entry(rank).or_default().push((head.0, r));
            }
        });
    }
}

/// Whether each candidate of rank `rank` still has a derivation from live facts of lower
/// rank. A candidate is a row of `db` itself, so a check reads it as a one-row range and
/// needs no copy; the rules are tried until one finds a derivation. `None` when the rule
/// firings counted, plus [`CHECK_WORK`] per candidate checked, pass `budget` first.
fn check(
    c: &Compiled,
    db: &mut Database,
    candidates: &[(u32, u32)],
    rank: Rank,
    run: &mut Run,
    budget: u64,
) -> Option<Vec<bool>> {
    let mut has = vec![false; db.relation_count()];
    for &(p, _) in candidates {
        has[p as usize] = true;
    }
    let rules: Vec<_> = c.rules.iter().filter(|rule| has[rule.head.index()]).collect();
    for rule in &rules {
        // A check that reads its head first, once per candidate: a few candidates test
        // the next step a few times.
        let check = rule.rank_check.as_ref().expect("a ranked state has rank checks");
        match check.steps.first().map(|s| s.source) {
            Some(AtomSource::Head) => {
                let heads = candidates.iter().filter(|&&(p, _)| p as usize == rule.head.index()).count();
                check.sync_indexes_deferring(&mut db.rows, u32::try_from(heads).unwrap_or(u32::MAX));
            }
            _ => check.sync_indexes(&mut db.rows),
        }
    }
    let db = &*db;
    // Per rule, the views of its check; the head's is set per candidate.
    let mut checks: Vec<_> = rules
        .iter()
        .filter_map(|rule| {
            let plan = rule.rank_check.as_ref().expect("a ranked state has rank checks");
            let views: Vec<View<'_>> = plan
                .steps
                .iter()
                .map(|s| match s.source {
                    AtomSource::Head => View::new(db.rel(s.pred), 0, 0),
                    AtomSource::Body(_) => View::new(db.rel(s.pred), 0, db.rel(s.pred).rank_end(rank)),
                })
                .chain(plan.negation_views(&db.rows))
                .collect();
            let head_step = plan.steps.iter().position(|s| s.source == AtomSource::Head)?;
            let hopeless = views.iter().zip(&plan.steps).any(|(v, s)| s.source != AtomSource::Head && v.hi == 0);
            (!hopeless).then_some((rule.head, plan, head_step, views))
        })
        .collect();
    let mut supported = Vec::with_capacity(candidates.len());
    for (i, &(p, r)) in candidates.iter().enumerate() {
        if run.stats.firings + CHECK_WORK * i as u64 > budget {
            return None;
        }
        let mut found = false;
        for (head, plan, head_step, views) in checks.iter_mut().filter(|check| check.0 .0 == p) {
            views[*head_step] = View::new(db.rel(*head), r, r + 1);
            plan.run(views, &mut run.scratch, &mut run.stats, &mut |_| found = true);
            if found {
                break;
            }
        }
        supported.push(found);
    }
    Some(supported)
}

/// Removes the facts of the live rows `(predicate, row)` from `db`.
fn remove(db: &mut Database, facts: &[(u32, u32)]) {
    let mut by_pred: Vec<Vec<u32>> = vec![Vec::new(); db.relation_count()];
    for &(p, r) in facts {
        by_pred[p as usize].push(r);
    }
    for (p, ids) in by_pred.iter().enumerate().filter(|(_, ids)| !ids.is_empty()) {
        db.remove_rows(PredId(p as u32), ids);
    }
}
