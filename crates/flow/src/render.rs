//! Builds one worker's dataflow from the [`Blueprint`]: an input per relation, then per
//! stratum either a union of its rules made distinct or, for a recursive stratum, one
//! iterative scope with one variable per predicate; every join step reads an arrangement
//! of its relation on its key columns, shared by every step of that scope asking for the
//! same relation and key.

use crate::blueprint::{Absent, Blueprint, Checks, Reduction, RowCheck, RuleDataflow, Undominated, ValueSource};
use crate::row::Row;
use differential_dataflow::input::{Input, InputSession};
use differential_dataflow::lattice::Lattice;
use differential_dataflow::operators::arrange::{Arranged, TraceAgent};
use differential_dataflow::operators::iterate::VecVariable;
use differential_dataflow::trace::implementations::{KeySpine, ValSpine};
use differential_dataflow::{AsCollection, VecCollection};
use ir::ValueStore;
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::rc::Rc;
use timely::dataflow::operators::probe::Handle as Probe;
use timely::dataflow::operators::Exchange;
use timely::order::Product;
use timely::progress::Timestamp;

/// Epochs of input changes: one per batch. 32 bits, not 64: every update an arrangement
/// holds carries a time, inside an iterative scope the pair (epoch, iteration), and the
/// narrower pair cut the peak memory of a large closure by an eighth.
pub(crate) type Epoch = u32;

/// A request for an input row: the epoch it was made in, and whether it inserts (else
/// it deletes).
pub(crate) type Request = (Epoch, bool);

/// The input of one relation's requests.
pub(crate) type Requests<const N: usize> = InputSession<Epoch, (Row<N>, Request), isize>;

/// A relation's rows as a collection of a scope with timestamps `T`.
type Relation<'s, T, const N: usize> = VecCollection<'s, T, Row<N>, isize>;

/// A relation arranged by a key row, each key holding the full rows.
type Arrangement<'s, T, const N: usize> = Arranged<'s, TraceAgent<ValSpine<Row<N>, Row<N>, T, isize>>>;

/// A negated relation and the columns a negated atom binds: what its blocked keys are.
type Negated = (usize, Vec<usize>);

/// Keys arranged by themselves: the rows a negated atom blocks, on its bound columns.
type KeyArrangement<'s, T, const N: usize> = Arranged<'s, TraceAgent<KeySpine<Row<N>, T, isize>>>;

/// Changes to derived relations that a worker saw in its part of the output, flat: per
/// change its relation's index, its diff (as an `i32`'s bits) and the row's values, as
/// many as the relation's arity ([`record`]). A closure records millions of changes, and
/// a `(usize, Row, isize)` per change took 56 bytes where a pair of values takes 16.
pub(crate) type SeenChanges = Rc<RefCell<ByEpoch<u32>>>;

/// Counts that processes add up ([`crate::Flow::sum_over_processes`]), as a process's
/// first worker received them: per count its slot and one process's part of it.
pub(crate) type SeenTallies = Rc<RefCell<ByEpoch<(u32, isize)>>>;

/// What a worker saw pass an output, kept apart by the epoch each piece belongs to. A
/// worker reports an epoch once its probe has passed it, and all of that epoch is then
/// here; but in a cluster a process whose workers saw the epoch pass first goes on to
/// the next one, and what it sends for that one (changes of rows this worker holds,
/// parts of counts) can reach this worker before it has seen the epoch pass. That
/// belongs to the next report, not to this one.
#[derive(Debug)]
pub(crate) struct ByEpoch<T> {
    /// Per epoch seen, what was seen of it; rarely more than two epochs.
    epochs: Vec<(Epoch, Vec<T>)>,
}

impl<T> Default for ByEpoch<T> {
    fn default() -> Self {
        ByEpoch { epochs: Vec::new() }
    }
}

impl<T> ByEpoch<T> {
    /// Where what was seen of `epoch` goes.
    pub(crate) fn at(&mut self, epoch: Epoch) -> &mut Vec<T> {
        let at = match self.epochs.iter().position(|(seen, _)| *seen == epoch) {
            Some(at) => at,
            None => {
                self.epochs.push((epoch, Vec::new()));
                self.epochs.len() - 1
            }
        };
        &mut self.epochs[at].1
    }

    /// Takes what was seen of the epochs before `epoch`, in epoch order, and keeps what
    /// was seen of `epoch` and later ones.
    pub(crate) fn take_before(&mut self, epoch: Epoch) -> Vec<T> {
        self.epochs.sort_by_key(|(seen, _)| *seen);
        let later = self.epochs.iter().position(|(seen, _)| *seen >= epoch).unwrap_or(self.epochs.len());
        let mut earlier = self.epochs.drain(..later).map(|(_, seen)| seen);
        let mut taken = earlier.next().unwrap_or_default();
        for seen in earlier {
            taken.extend(seen);
        }
        taken
    }
}

/// Appends the change of `diff` copies of `row` of relation `pred` at `epoch` to
/// `changes`; a diff past an `i32` (which the `distinct` every recorded relation leaves
/// through never makes) is recorded in parts, which the reader adds up.
fn record<const N: usize>(changes: &SeenChanges, pred: usize, row: &Row<N>, epoch: Epoch, mut diff: isize) {
    let mut changes = changes.borrow_mut();
    let changes = changes.at(epoch);
    while diff != 0 {
        let part = diff.clamp(i32::MIN as isize, i32::MAX as isize);
        diff -= part;
        changes.push(pred as u32);
        changes.push(part as i32 as u32);
        changes.extend_from_slice(row.values());
    }
}

/// What a worker drives: the input sessions (by predicate index, and the one-row input
/// that fires rules without body atoms) and the probe on every output.
pub(crate) struct Handles<const N: usize> {
    pub inputs: Vec<InputSession<Epoch, Row<N>, isize>>,
    /// With placement at the owner: per input relation, the requests each process
    /// injects (a row, the epoch it was asked in, and whether it was an insert).
    pub requests: Vec<Option<Requests<N>>>,
    pub unit: InputSession<Epoch, Row<N>, isize>,
    /// Counts to add up over the processes: a one-value row (the count's slot) whose
    /// diff is this process's part of the count.
    pub tallies: InputSession<Epoch, Row<N>, isize>,
    pub probe: Probe<Epoch>,
    /// One per recursion of lattice relations.
    pub watches: Vec<Watch>,
}

/// Iterations past a recursion's largest size that a watched recursion still runs before
/// [`Watch::improving`] calls it a cycle that improves: room for the iteration that
/// starts from nothing and the one that finds nothing new.
const MARGIN: isize = 3;

/// What a worker watches of a recursion of lattice relations, to stop a cycle that
/// improves a value for ever: how far the iterations of its scope have gone (a probe
/// inside the scope, downstream of everything the iterations do) and the sizes the
/// recursion had, with the times it had them, as every worker receives them.
///
/// In a recursion that ends, an iteration `i` of an epoch changes a value only when a
/// chain of `i` facts, each derived from the one before, ends in it; each fact was in a
/// different group of the recursion at iteration `i - 1` (a group met twice would be a
/// cycle that improves, which does not end), so `i` is at most that size plus one. An
/// epoch also works at the iterations where the epoch before changed, up to that
/// epoch's size plus one. So iterating past the largest size seen before the current
/// iteration (plus [`MARGIN`]) is a cycle improving a value, and every worker, seeing
/// the same sizes and iterations, stops at the same point.
pub(crate) struct Watch {
    /// A lattice relation of the recursion, named in the report.
    pub pred: usize,
    probe: Probe<Iteration>,
    sizes: Rc<RefCell<Vec<(Iteration, isize)>>>,
}

/// A time inside an iterative scope: the epoch, and the iteration within it.
type Iteration = Product<Epoch, u32>;

impl Watch {
    /// The iteration the recursion has reached in `epoch` when that is more than a
    /// recursion that ends reaches, else `None`.
    pub fn improving(&self, epoch: Epoch) -> Option<usize> {
        let iteration = self.probe.with_frontier(|f| f.iter().filter(|t| t.outer == epoch).map(|t| t.inner).min())?;
        let sizes = self.sizes.borrow();
        let before = sizes.iter().filter(|(t, _)| t.outer < epoch || t.inner < iteration);
        let largest = before.map(|&(_, size)| size).max().unwrap_or(0);
        (isize::try_from(iteration).unwrap_or(isize::MAX) > largest.saturating_add(MARGIN))
            .then_some(iteration as usize)
    }
}

/// The relations a scope can read, and the arrangements made of them so far.
struct Relations<'s, T: Timestamp + Lattice, const N: usize> {
    rows: Vec<Option<Relation<'s, T, N>>>,
    arranged: FxHashMap<(usize, Vec<usize>), Arrangement<'s, T, N>>,
    /// Per negated relation and bound columns: its rows cut down to those columns, each
    /// once, and that set arranged.
    blocked_keys: FxHashMap<Negated, Relation<'s, T, N>>,
    blocked: FxHashMap<Negated, KeyArrangement<'s, T, N>>,
}

impl<'s, T: Timestamp + Lattice + Ord, const N: usize> Relations<'s, T, N> {
    fn new(count: usize) -> Self {
        Relations {
            rows: vec![None; count],
            arranged: FxHashMap::default(),
            blocked_keys: FxHashMap::default(),
            blocked: FxHashMap::default(),
        }
    }

    fn get(&self, pred: usize) -> Relation<'s, T, N> {
        self.rows[pred].clone().expect("strata come after the relations they read")
    }

    /// The relation arranged on `key_cols`, made on first use and shared after.
    fn arranged(&mut self, pred: usize, key_cols: &[usize]) -> Arrangement<'s, T, N> {
        if let Some(arrangement) = self.arranged.get(&(pred, key_cols.to_vec())) {
            return arrangement.clone();
        }
        let cols = key_cols.to_vec();
        let arrangement = self.get(pred).map(move |row| (row.select(&cols), row)).arrange_by_key();
        self.arranged.insert((pred, key_cols.to_vec()), arrangement.clone());
        arrangement
    }

    /// The keys negated atom `absent` blocks: its relation's rows on its bound columns,
    /// made distinct. The projection (which drops the `_` columns) can map several rows
    /// to one key, and the anti-join subtracts the bindings matching each key as many
    /// times as the key occurs: it must occur once.
    fn blocked_keys(&mut self, absent: &Absent) -> Relation<'s, T, N> {
        let id = (absent.pred, absent.cols.clone());
        if let Some(keys) = self.blocked_keys.get(&id) {
            return keys.clone();
        }
        let rows = self.get(absent.pred);
        // A relation is a set already (an input, or a stratum's distinct output).
        let keys = match absent.whole {
            true => rows,
            false => {
                let cols = absent.cols.clone();
                rows.map(move |row| row.select(&cols)).distinct()
            }
        };
        self.blocked_keys.insert(id, keys.clone());
        keys
    }

    /// [`Self::blocked_keys`] arranged, made on first use and shared after.
    fn blocked(&mut self, absent: &Absent) -> KeyArrangement<'s, T, N> {
        let id = (absent.pred, absent.cols.clone());
        if let Some(arrangement) = self.blocked.get(&id) {
            return arrangement.clone();
        }
        let arrangement = self.blocked_keys(absent).arrange_by_self();
        self.blocked.insert(id, arrangement.clone());
        arrangement
    }
}

/// A row made of binding positions and constants.
fn build<const N: usize>(parts: &[ValueSource], binding: &Row<N>) -> Row<N> {
    let mut row = Row::EMPTY;
    for part in parts {
        row.push(match *part {
            ValueSource::Pos(p) => binding.values()[p],
            ValueSource::Const(c) => c,
        });
    }
    row
}

/// The bindings `binding` gives after the comparisons, computed columns and generators
/// `checks`: at most one without a generator; a rule without checks (most rules) does
/// not touch the dictionary.
fn checked<const N: usize>(checks: &[RowCheck], binding: Row<N>, values: &ValueStore) -> Checked<N> {
    if checks.is_empty() {
        Checked::One(Some(binding))
    } else if RowCheck::generates(checks) {
        Checked::Many(RowCheck::apply_all(checks, binding, values).into_iter())
    } else {
        Checked::One(RowCheck::apply(checks, binding, values))
    }
}

/// The bindings of [`checked`]: one or none, or those of a generator.
enum Checked<const N: usize> {
    One(Option<Row<N>>),
    Many(std::vec::IntoIter<Row<N>>),
}

impl<const N: usize> Iterator for Checked<N> {
    type Item = Row<N>;

    fn next(&mut self) -> Option<Row<N>> {
        match self {
            Checked::One(binding) => binding.take(),
            Checked::Many(bindings) => bindings.next(),
        }
    }
}

fn repeats_hold<const N: usize>(row: &Row<N>, repeats: &[(usize, usize)]) -> bool {
    repeats.iter().all(|&(a, b)| row.values()[a] == row.values()[b])
}

/// The bindings that pass `checks`: the comparisons were tested (and the computed
/// columns added) as the bindings were made, so what is left are the negated atoms, each an anti-join: the bindings minus
/// those whose key is among the blocked keys.
fn anti_joins<'s, T: Timestamp + Lattice + Ord, const N: usize>(
    mut binding: Relation<'s, T, N>,
    checks: &Checks,
    relations: &mut Relations<'s, T, N>,
) -> Relation<'s, T, N> {
    for absent in &checks.absent {
        let key = absent.key.clone();
        let blocked = binding
            .clone()
            .map(move |b| (build(&key, &b), b))
            .arrange_by_key()
            .join_core(relations.blocked(absent), |_key, b: &Row<N>, _: &()| Some(*b));
        binding = binding.concat(blocked.negate());
    }
    binding
}

/// The head rows one rule derives from the relations of its scope.
fn render_rule<'s, T: Timestamp + Lattice + Ord, const N: usize>(
    rule: &RuleDataflow,
    relations: &mut Relations<'s, T, N>,
    unit: &Relation<'s, T, N>,
    values: &ValueStore,
) -> Relation<'s, T, N> {
    if let Some(reduction) = rule.reduce {
        return reduce(reduction, relations.get(reduction.pred));
    }
    let project = rule.project.clone();
    let row_checks = rule.checks.row.clone();
    let dictionary = values.clone();
    let Some(scan) = &rule.scan else {
        let start = unit.clone().flat_map(move |b| checked(&row_checks, b, &dictionary));
        return anti_joins(start, &rule.checks, relations).map(move |b| build(&project, &b));
    };
    let (consts, repeats, keep) = (scan.consts.clone(), scan.repeats.clone(), scan.keep.clone());
    let binding = relations.get(scan.pred).flat_map(move |row| {
        let selected = consts.iter().all(|&(col, value)| row.values()[col] == value) && repeats_hold(&row, &repeats);
        match selected {
            true => checked(&row_checks, row.select(&keep), &dictionary),
            false => Checked::One(None),
        }
    });
    let mut binding = anti_joins(binding, &rule.checks, relations);
    for join in &rule.joins {
        let right = relations.arranged(join.pred, &join.key_cols);
        let left_key = join.left_key.clone();
        let left = binding.map(move |b| (build(&left_key, &b), b)).arrange_by_key();
        let (repeats, keep_left, keep_right) = (join.repeats.clone(), join.keep_left.clone(), join.keep_right.clone());
        let (row_checks, dictionary) = (join.checks.row.clone(), values.clone());
        let joined = left.join_core(right, move |_key, b: &Row<N>, row: &Row<N>| {
            if !repeats_hold(row, &repeats) {
                return Checked::One(None);
            }
            let mut next = b.select(&keep_left);
            for &col in &keep_right {
                next.push(row.values()[col]);
            }
            checked(&row_checks, next, &dictionary)
        });
        binding = anti_joins(joined, &join.checks, relations);
    }
    binding.map(move |b| build(&project, &b))
}

/// The head rows of a reduction over `rows`: the rows keyed by their group's columns,
/// each group reduced to its aggregate. The rows relation is a set (an input, a lower
/// stratum's distinct output or, for a correlated aggregate of a recursive rule, a
/// variable of the same iterative scope, whose rows are made distinct too), so every row
/// a group holds counts once; when an epoch retracts rows, the operator recomputes the groups they touched
/// and retracts their old aggregates, and a group left without rows has none.
fn reduce<'s, T: Timestamp + Lattice + Ord, const N: usize>(
    reduction: Reduction,
    rows: Relation<'s, T, N>,
) -> Relation<'s, T, N> {
    let Reduction { keys, op, domain, .. } = reduction;
    rows.map(move |row| (Row::new(&row.values()[..keys]), row))
        .reduce(move |_key, group: &[(&Row<N>, isize)], out: &mut Vec<(u32, isize)>| {
            let mut value = None;
            for (row, _) in group.iter().filter(|&&(_, count)| count > 0) {
                value = Some(op.step(value, row.values().last().copied().unwrap_or(0), domain));
            }
            out.extend(value.filter(|&v| op.yields(v, domain)).map(|v| (v, 1)));
        })
        .map(|(mut key, value)| {
            key.push(value);
            key
        })
}

/// `rows` (a set, as every relation is) without the rows another of its rows dominates
/// by one of `rules`, all at once: with one rule, the rows no row of their group
/// dominates, one `reduce` keyed by the group; with several, the rows minus those a
/// rule finds dominated.
fn undominated<'s, T: Timestamp + Lattice + Ord, const N: usize>(
    rows: Relation<'s, T, N>,
    rules: &[Undominated],
    values: &ValueStore,
) -> Relation<'s, T, N> {
    match rules {
        [] => rows,
        [rule] => judged(rows, rule, values, false),
        _ => {
            let dominated = rules.iter().map(|rule| judged(rows.clone(), rule, values, true));
            let dominated = dominated.reduce(|a, b| a.concat(b)).map(|d| d.distinct());
            match dominated {
                Some(dominated) => rows.concat(dominated.negate()),
                None => rows,
            }
        }
    }
}

/// The rows of `rows` that another row of their group dominates by `rule` when
/// `dominated`, else the others. The whole group is judged again whenever it changes.
fn judged<'s, T: Timestamp + Lattice + Ord, const N: usize>(
    rows: Relation<'s, T, N>,
    rule: &Undominated,
    values: &ValueStore,
    dominated: bool,
) -> Relation<'s, T, N> {
    let (group, rule, values) = (rule.group.clone(), rule.rule.clone(), values.clone());
    // The blueprint lets through rules whose body compares the two facts only: one is
    // judged against the other by a search over that other alone.
    let plan = rule.plan(ir::Known::Dominated);
    rows.map(move |row| (row.select(&group), row))
        .reduce(move |_group, rows: &[(&Row<N>, isize)], out: &mut Vec<(Row<N>, isize)>| {
            let rows: Vec<&Row<N>> = rows.iter().filter(|&&(_, count)| count > 0).map(|&(row, _)| row).collect();
            let holds = |row: &Row<N>, by: &Row<N>| {
                rule.search(&plan, row.values(), &values, &OneFact(by.values()), &mut |_, _| true)
            };
            let Some((&first, rest)) = rows.split_first() else { return };
            // Under a total order (a `min`, a `max`) the best row dominates every other,
            // so each row but the best is judged by the best alone: a group costs as
            // many tests as it has rows, not their square.
            let best = rest.iter().fold(first, |best, &row| if holds(best, row) { row } else { best });
            for &row in &rows {
                let beaten = holds(row, best) || rows.iter().any(|&other| holds(row, other));
                if beaten == dominated {
                    out.push((*row, 1));
                }
            }
        })
        .map(|(_, row)| row)
}

/// One fact, as the facts a dominance search reads ([`ir::DominanceFacts`]).
struct OneFact<'a>(&'a [u32]);

impl ir::DominanceFacts for OneFact<'_> {
    fn each(&self, _: ir::PredId, pattern: &[Option<u32>], f: &mut dyn FnMut(u32, &[u32]) -> bool) -> bool {
        let fits = pattern.iter().zip(self.0).all(|(p, v)| p.is_none_or(|p| p == *v));
        fits && f(0, self.0)
    }
}

/// The distinct union of what `rules` derive for `pred` and the rows given for it.
fn union<'s, T: Timestamp + Lattice + Ord, const N: usize>(
    blueprint_rules: &[RuleDataflow],
    pred: usize,
    given: Relation<'s, T, N>,
    relations: &mut Relations<'s, T, N>,
    unit: &Relation<'s, T, N>,
    values: &ValueStore,
) -> Relation<'s, T, N> {
    let mut all = given;
    for rule in blueprint_rules.iter().filter(|r| r.head == pred) {
        all = all.concat(render_rule(rule, relations, unit, values));
    }
    all.distinct()
}

/// The input rows a relation's requests leave, each once: set semantics kept at the
/// worker the row's hash picks (the reduce's exchange), not by the processes that read
/// or request it. A row holds when its latest epoch's requests include an insert (a
/// batch deletes before it inserts), so a row read by two processes is one row, a
/// delete of an absent row changes nothing, and a repeated insert neither.
fn owned_rows<'s, const N: usize>(
    requests: VecCollection<'s, Epoch, (Row<N>, Request), isize>,
) -> Relation<'s, Epoch, N> {
    requests
        .reduce(|_row, asked: &[(&Request, isize)], out: &mut Vec<((), isize)>| {
            // Requests are sorted by epoch, then deletes before inserts.
            if let Some(&(&(_, true), _)) = asked.iter().rfind(|&&(_, count)| count > 0) {
                out.push(((), 1));
            }
        })
        .map(|(row, ())| row)
}

/// Gives `watch` the size of the recursion whose relations at each iteration are
/// `relations`: counted once, and sent to every one of the `peers` workers.
fn watch_sizes<'s, const N: usize>(
    watch: &Watch,
    relations: impl Iterator<Item = Relation<'s, Iteration, N>>,
    peers: usize,
) {
    let Some(all) = relations.reduce(|a, b| a.concat(b)) else { return };
    let copies =
        all.map(|_| Row::<N>::EMPTY).count().flat_map(move |(_, size)| (0..peers).map(move |peer| (peer, size)));
    let sizes = Rc::clone(&watch.sizes);
    copies
        .inner
        .exchange(|((peer, _), _, _)| *peer as u64)
        .as_collection()
        .inspect(move |((_, size), time, diff)| {
            if *diff > 0 {
                sizes.borrow_mut().push((*time, *size));
            }
        })
        .probe_with(&watch.probe);
}

/// Where the changes to derived relations are recorded. In one process, and in a
/// cluster whose results are partitioned, each worker records its own part; otherwise
/// every change is copied to the first worker of every process, so that each process
/// sees the whole result.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Gather {
    pub processes: usize,
    /// Worker threads per process.
    pub workers: usize,
    /// Whether each process keeps only the rows its workers hold
    /// ([`crate::Connection::partition_results`]).
    pub partitioned: bool,
    /// Whether input rows are placed at their owner ([`owned_rows`]): each worker then
    /// records the changes of the input rows it owns as well.
    pub placed: bool,
}

/// Builds the dataflow in `worker` and returns its handles. Every change to a derived
/// relation this worker holds is appended to `changes` under its epoch as it passes:
/// once the probe has passed an epoch, they are all there, possibly several for one row
/// (an iteration may remove a row and a later one derive it again), which the caller
/// adds up. The first worker of each process appends every process's parts of the
/// counts given to the tally input to `tallies`, likewise under their epoch.
pub(crate) fn build_dataflow<const N: usize>(
    worker: &mut timely::worker::Worker,
    blueprint: &Blueprint,
    (changes, tallies): (SeenChanges, SeenTallies),
    gather: Gather,
    values: &ValueStore,
) -> Handles<N> {
    let count = blueprint.arity.len();
    worker.dataflow::<Epoch, _, _>(|scope| {
        let probe = Probe::new();
        let mut inputs = Vec::with_capacity(count);
        let mut requests = Vec::new();
        let mut given = Vec::with_capacity(count);
        for &derived in &blueprint.derived {
            let (input, mut rows) = scope.new_collection::<Row<N>, isize>();
            if gather.placed && !derived {
                let (asked, requested) = scope.new_collection::<(Row<N>, Request), isize>();
                let owned = owned_rows(requested);
                let (pred, changes) = (given.len(), Rc::clone(&changes));
                owned
                    .clone()
                    .inspect(move |(row, epoch, diff)| record(&changes, pred, row, *epoch, *diff))
                    .probe_with(&probe);
                rows = owned;
                requests.push(Some(asked));
            } else {
                requests.push(None);
            }
            inputs.push(input);
            given.push(rows);
        }
        let (unit_input, unit) = scope.new_collection::<Row<N>, isize>();
        let (tally_input, tally) = scope.new_collection::<Row<N>, isize>();
        let Gather { processes, workers, .. } = gather;
        let copies = tally.flat_map(move |row| (0..processes).map(move |process| (process, row)));
        let first_workers = copies.inner.exchange(move |((process, _), _, _)| (process * workers) as u64);
        first_workers
            .as_collection()
            .inspect(move |((_, row), epoch, diff)| tallies.borrow_mut().at(*epoch).push((row.values()[0], *diff)))
            .probe_with(&probe);
        let mut relations = Relations::new(count);
        let mut watches = Vec::new();
        for (p, rows) in given.iter().enumerate() {
            if !blueprint.derived[p] {
                relations.rows[p] = Some(rows.clone());
            }
        }
        for stratum in &blueprint.strata {
            if !stratum.recursive {
                for &pred in &stratum.preds {
                    let rows = union(&stratum.rules, pred, given[pred].clone(), &mut relations, &unit, values);
                    relations.rows[pred] = Some(undominated(rows, &blueprint.dominances[pred], values));
                }
                continue;
            }
            // A negated relation lies in a lower stratum (the program is stratified), so
            // it is complete before this scope starts and is entered as an outer
            // collection, constant across the iterations. Were it a variable of the
            // scope, the anti-join would not be monotone within the iteration: a row
            // derived late would retract bindings derived before it, and the iteration
            // could settle on something other than the stratified model, or not at all.
            // Its blocked keys are made distinct out here, once per epoch.
            let absent = stratum
                .rules
                .iter()
                .flat_map(|r| r.checks.absent.iter().chain(r.joins.iter().flat_map(|j| &j.checks.absent)));
            let blocked: Vec<(Negated, Relation<'_, Epoch, N>)> =
                absent.map(|a| ((a.pred, a.cols.clone()), relations.blocked_keys(a))).collect();
            let outer = &relations;
            let watched =
                stratum.lattice.then(|| Watch { pred: stratum.preds[0], probe: Probe::new(), sizes: Rc::default() });
            let results = scope.iterative::<u32, _, _>(|inner| {
                let mut local = Relations::new(count);
                for (id, keys) in blocked {
                    local.blocked_keys.insert(id, keys.enter(inner));
                }
                for rule in &stratum.rules {
                    for pred in rule.reads().filter(|p| !stratum.preds.contains(p)) {
                        if local.rows[pred].is_none() {
                            local.rows[pred] = Some(outer.get(pred).enter(inner));
                        }
                    }
                }
                let unit = unit.clone().enter(inner);
                let mut variables = Vec::with_capacity(stratum.preds.len());
                for &pred in &stratum.preds {
                    let (variable, rows) = VecVariable::new(inner, Product::new(Default::default(), 1));
                    local.rows[pred] = Some(rows);
                    variables.push((pred, variable));
                }
                if let Some(watch) = &watched {
                    watch_sizes(watch, stratum.preds.iter().map(|&p| local.get(p)), inner.peers());
                }
                let mut left = Vec::with_capacity(variables.len());
                for (pred, variable) in variables {
                    let rows = union(&stratum.rules, pred, given[pred].clone().enter(inner), &mut local, &unit, values);
                    let rows = undominated(rows, &blueprint.dominances[pred], values);
                    variable.set(rows.clone());
                    left.push((pred, rows.leave(scope)));
                }
                left
            });
            watches.extend(watched);
            for (pred, rows) in results {
                relations.rows[pred] = Some(rows);
            }
        }
        for (pred, &derived) in blueprint.derived.iter().enumerate() {
            // A derived relation that nothing the run wants reads has no stratum in a
            // restricted plan (`ProgramPlan::restrict_to`): it stays empty, as natively.
            let Some(rows) = relations.rows[pred].clone().filter(|_| derived) else { continue };
            let changes = Rc::clone(&changes);
            // No `consolidate` here: it would arrange every relation once more, and
            // `Flow::apply` nets the changes of an epoch itself.
            if gather.processes == 1 || gather.partitioned {
                rows.inspect(move |(row, epoch, diff)| record(&changes, pred, row, *epoch, *diff)).probe_with(&probe);
                continue;
            }
            let copies = rows.flat_map(move |row| (0..processes).map(move |process| (process, row)));
            let first_workers = copies.inner.exchange(move |((process, _), _, _)| (process * workers) as u64);
            first_workers
                .as_collection()
                .inspect(move |((_, row), epoch, diff)| record(&changes, pred, row, *epoch, *diff))
                .probe_with(&probe);
        }
        Handles { inputs, requests, unit: unit_input, tallies: tally_input, probe, watches }
    })
}
