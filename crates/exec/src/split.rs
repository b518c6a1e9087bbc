//! One join split over worker threads: the row range of its first step (the delta of a
//! semi-naive join, the candidates of a rederivation) is cut into consecutive chunks that
//! the threads take in turn, each staging into a set of its own, and the chunks' new
//! tuples are merged into the head relation's set in chunk order afterwards.
//!
//! The first step is the outermost loop of the join, so the tuples of the chunks in chunk
//! order are the tuples one thread would derive, in the same order. A worker stages a
//! tuple only when the head relation does not hold it yet (reading the head's set, which
//! nothing changes while the workers run) and its own set has not seen it: its first
//! sighting within the worker's chunks, and a worker takes chunks in ascending order, so
//! the merge, which keeps the first sighting of each tuple across chunks, stages exactly
//! the tuples one thread would have, in its order. The relation, its row order and its
//! ranks (one commit per join, as with one thread) are therefore identical.
//!
//! Threads are scoped to the join: a join is split only when its first step has enough
//! rows ([`Threads::min_split_rows`]) that the work dwarfs starting a thread, and the
//! many small joins of a long, thin fixpoint run on the calling thread alone.

use crate::join::{run_staged, JoinStats, PhysPlan, Scratch, View};
use crate::limits::ResourceKind;
use crate::relation::{RowSet, Rows};
use crate::Threads;
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Chunks per thread: more than one, so that a thread that drew rows of small fan-out
/// takes more of them and the threads finish together.
const CHUNKS_PER_THREAD: u32 = 4;

#[cfg(test)]
thread_local! {
    /// Joins this thread split: tests check that they exercise the split path.
    pub(crate) static SPLIT_JOINS: Cell<usize> = const { Cell::new(0) };
}

/// What one worker hands back: its new tuples, flat, and which of them each chunk it ran
/// staged.
struct Worker {
    staged: Vec<u32>,
    /// `(chunk, first tuple, end tuple)` in `staged`, chunks ascending.
    segments: Vec<(usize, u32, u32)>,
    stats: JoinStats,
    failure: Option<ResourceKind>,
}

/// [`run_staged`] over `threads`, when the first step's range is long enough to pay for
/// them; otherwise (and for a join that makes texts ([`PhysPlan::makes_texts`]), for a head of arity 0, whose one tuple there is nothing to split
/// for, or a first step that stops at its first match, which each chunk would find once)
/// on the calling thread.
pub(crate) fn run_staged_split(
    plan: &PhysPlan,
    views: &[View<'_>],
    rows: &Rows,
    set: &mut RowSet,
    threads: Threads,
    scratch: &mut Scratch,
    stats: &mut JoinStats,
) {
    let span = views.first().map_or(0, |v| v.hi.saturating_sub(v.lo));
    let count = threads.count();
    if count < 2
        || plan.makes_texts
        || span < threads.min_split_rows().max(2)
        || rows.arity == 0
        || !plan.scans_first()
        || plan.first_step_existential()
        || set.failure.is_some()
    {
        run_staged(plan, views, rows, set, scratch, stats);
        return;
    }
    #[cfg(test)]
    SPLIT_JOINS.set(SPLIT_JOINS.get() + 1);
    let chunks = (count as u32).saturating_mul(CHUNKS_PER_THREAD).min(span);
    let room = set.room(rows);
    let next = AtomicUsize::new(0);
    let head: &RowSet = set;
    let work = || worker(plan, views, rows, head, room, chunks, &next);
    let done: Vec<Worker> = std::thread::scope(|scope| {
        // Workers take chunks from the counter until none is left, so a helper the
        // system refuses to start (too many threads for its limits) only leaves its
        // share to the others: it is not an error.
        let helpers: Vec<_> =
            (1..count).map_while(|_| std::thread::Builder::new().spawn_scoped(scope, work).ok()).collect();
        let mut done = vec![work()];
        done.extend(helpers.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))));
        done
    });
    let mut segments: Vec<(usize, usize, u32, u32)> = done
        .iter()
        .enumerate()
        .flat_map(|(w, d)| d.segments.iter().map(move |&(chunk, from, to)| (chunk, w, from, to)))
        .collect();
    segments.sort_unstable();
    for d in &done {
        stats.firings += d.stats.firings;
        stats.row_tests += d.stats.row_tests;
    }
    let arity = rows.arity;
    'merge: for (_, w, from, to) in segments {
        let tuples = &done[w].staged[from as usize * arity..to as usize * arity];
        for tuple in tuples.chunks_exact(arity) {
            if !set.stage(rows, tuple) && set.failure.is_some() {
                break 'merge;
            }
        }
    }
    // A worker that could not allocate stopped early: its chunks are incomplete.
    if set.failure.is_none() {
        set.failure = done.iter().find_map(|d| d.failure);
    }
}

/// Runs the chunks `next` hands out until there are none left, staging into a set of its
/// own the tuples that `head` does not hold. Stops early when its set fails, or holds
/// more than the `room` the head relation has left, since then the merge fails too.
fn worker(
    plan: &PhysPlan,
    views: &[View<'_>],
    rows: &Rows,
    head: &RowSet,
    room: u32,
    chunks: u32,
    next: &AtomicUsize,
) -> Worker {
    let arity = rows.arity;
    // The own set's rows stay empty: it only ever stages, and is never committed.
    let empty = Rows::new(arity);
    let mut own = RowSet::new(arity);
    let mut scratch = Scratch::default();
    let mut stats = JoinStats::default();
    let mut segments = Vec::new();
    let mut chunk_views = views.to_vec();
    let (lo, span) = (views[0].lo, u64::from(views[0].hi - views[0].lo));
    let stop = Cell::new(false);
    let bound = |k: usize| lo + (span * k as u64 / u64::from(chunks)) as u32;
    while !stop.get() {
        let k = next.fetch_add(1, Ordering::Relaxed);
        if k >= chunks as usize {
            break;
        }
        chunk_views[0].lo = bound(k);
        chunk_views[0].hi = bound(k + 1);
        let first = own.staged_len();
        plan.run_until(&chunk_views, &mut scratch, &mut stats, &stop, &mut |tuple| {
            if head.contains(rows, tuple) {
                return;
            }
            if own.stage(&empty, tuple) {
                if own.staged_len() > room {
                    stop.set(true);
                }
            } else if own.failure.is_some() {
                stop.set(true);
            }
        });
        segments.push((k, first, own.staged_len()));
    }
    Worker { staged: own.take_staged(), segments, stats, failure: own.failure }
}
