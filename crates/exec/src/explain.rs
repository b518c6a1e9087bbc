//! Explanations of facts: a proof tree of a fact the database holds, and, for a fact it
//! does not hold, where each rule that could derive it fails.
//!
//! A proof is found on the ranks every row carries (see [`Database`]): every derived fact
//! has a derivation from facts of strictly lower rank, so a search that only looks at
//! lower-ranked body facts is well-founded and never loops, and it never re-evaluates the
//! program — it reads the facts the evaluation (or maintenance) left behind. Among the
//! proofs whose every step descends in rank, the one of smallest height is chosen: a
//! bounded search "is there a proof of height at most `h`?" is run for `h` = 1, 2, 4, …
//! until one succeeds, then bisected. Facts of the search are nodes of one memo table
//! (each fact's candidate derivations are enumerated once, and what is known about its
//! height is kept across the bounded searches), and the search runs on an explicit
//! stack, so a proof as deep as a 100,000-long chain costs heap, not call stack.
//!
//! Everything here works on relations; which of them are answers or demands of a magic
//! program is for the caller to say.

use crate::database::Database;
use crate::relation::{hash_values, Rank, Rows, NIL};
use hashbrown::HashTable;
use ir::{CmpOp, PredId, Program, RuleId, Symbol, TermKind, ValueStore};
use rustc_hash::FxHashMap;

/// How far [`Explainer::why_not`] looks for partial matches of one rule before it gives up.
const WHY_NOT_BUDGET: usize = 1_000_000;

/// How many partial matches [`Attempt::Failed`] keeps as examples (the least, by value).
const EXAMPLES: usize = 3;

/// A proof of one fact: a DAG of facts, each an input fact or the head of a rule instance
/// whose body facts are its children. A fact used twice is one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proof {
    /// The nodes; the proved fact is `nodes[0]`.
    pub nodes: Vec<ProofNode>,
}

impl Proof {
    /// The height of the proof: 0 for an input fact, else one more than its tallest child.
    pub fn height(&self) -> usize {
        self.nodes[0].height
    }
}

/// One fact of a [`Proof`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProofNode {
    pub pred: PredId,
    pub tuple: Vec<u32>,
    pub step: Step,
    /// The height of the sub-proof under this node.
    pub height: usize,
}

/// How a fact of a [`Proof`] holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A fact of an input predicate (one no rule derives).
    Input,
    /// A fact of a derived predicate that the database holds without any derivation from
    /// facts of lower rank: one given with the input. An evaluation or maintenance never
    /// leaves such a fact.
    Given,
    /// The head of an instance of `rule`; `body[i]` is the node of its i-th body atom,
    /// `leaves` its negated atoms and comparisons as that instance satisfies them.
    Rule { rule: RuleId, body: Vec<usize>, leaves: Vec<Leaf> },
    /// A fact of reduction `rule` (an aggregate): its group's keys and value, reduced
    /// from the `rows` rows of the group in the reduction's body relation; `shown` are
    /// the nodes of up to [`AGGREGATE_ROWS_SHOWN`] of those rows, each proved in turn.
    Aggregate { rule: RuleId, rows: usize, shown: Vec<usize> },
}

impl Step {
    /// The nodes this step reads: a rule instance's body facts, an aggregate's rows shown.
    pub fn children(&self) -> &[usize] {
        match self {
            Step::Rule { body, .. } => body,
            Step::Aggregate { shown, .. } => shown,
            Step::Input | Step::Given => &[],
        }
    }
}

/// How many of its group's rows a proof shows under an aggregate's fact.
pub const AGGREGATE_ROWS_SHOWN: usize = 8;

/// A negated atom or a comparison of a rule instance in a proof: a leaf, which holds by
/// the absence of facts or by its values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Leaf {
    /// Negated atom `negated` of the rule: no fact of `pred` matches `pattern` (a value
    /// per column, `None` for a wildcard).
    Absent { negated: usize, pred: PredId, pattern: Vec<Option<u32>> },
    /// Comparison `comparison` of the rule on these values, of type `ty`.
    Compared { comparison: usize, op: CmpOp, ty: ir::ValueType, left: u32, right: u32 },
    /// Generator `generator` of the rule: `value` is a value of the range with these
    /// bounds (`from`, `to`, then the step if it has one), of type `ty`.
    Generated { generator: usize, ty: ir::ValueType, value: u32, bounds: Vec<u32> },
}

/// Why a fact is not derived: what happens with each rule whose head is its predicate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WhyNot {
    /// Whether the database holds the fact after all.
    pub present: bool,
    /// One entry per rule of the predicate, in program order (none for an input predicate).
    pub rules: Vec<RuleAttempt>,
    /// When the predicate has a `choice-domain` ([`ir::Pred::choice`]) and holds a tuple
    /// with the same values of one of its keys as the fact: that tuple, which the choice
    /// kept instead (so a rule whose body matches derived a candidate it dropped).
    pub chosen: Option<Vec<u32>>,
    /// A fact of the predicate that dominates the fact by a subsumptive clause, which
    /// removes it whatever its rules derive (docs/semantics.md, Subsumption).
    pub dominated_by: Option<Vec<u32>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleAttempt {
    pub rule: RuleId,
    pub outcome: Attempt,
}

/// What matching one rule's body, left to right, under the bindings of its head found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attempt {
    /// The head's constants or repeated variables do not fit the fact.
    HeadMismatch,
    /// Body atom `atom` (source order) matches no fact under any binding the atoms before
    /// it allow. `examples` are the first few of those bindings by value (in the order of
    /// the values' ids), `(variable, value)` each, head bindings included; `partial` counts them.
    Failed { atom: usize, examples: Vec<Vec<(Symbol, u32)>>, partial: usize },
    /// The whole body matches: the fact has a derivation (present in a fixpoint).
    Matched,
    /// The positive atoms match, but under each of their matches a negated atom finds a
    /// fact or a comparison fails; `blocked` is the first match's first failing leaf (a
    /// negation's pattern with the fact that blocks it, or a comparison's values).
    Excluded { blocked: Blocked, matches: usize },
    /// The search gave up after so many partial matches; atoms up to `reached` matched.
    GaveUp { reached: usize },
    /// Body atom `atom` reads the value of an aggregate (the head of reduction
    /// `reduction`, or a relation that copies it) and matches no fact under the first
    /// binding of the atoms before it: its group, the values `group` of its key columns,
    /// has `rows` rows, and the reduction holds `value` for it (`None` when it has no
    /// rows: `min` and `max` then have no value, `count` and `sum` are 0); the atom asked
    /// for `wanted` (`None` when the binding leaves the value column free). With
    /// `excluded`, the atom matched, and what the first match then failed (a comparison
    /// of the value, mostly).
    Aggregate {
        atom: usize,
        reduction: RuleId,
        group: Vec<u32>,
        rows: usize,
        value: Option<u32>,
        wanted: Option<u32>,
        excluded: Option<Blocked>,
    },
}

/// What excluded a match of a rule's positive atoms ([`Attempt::Excluded`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Blocked {
    /// Negated atom `negated` found this fact.
    Negation { negated: usize, pred: PredId, fact: Vec<u32> },
    /// Comparison `comparison` does not hold of these values.
    Comparison { comparison: usize, op: CmpOp, ty: ir::ValueType, left: u32, right: u32 },
    /// An operand of comparison `comparison` has no value (it divides by zero).
    Undefined { comparison: usize },
    /// Generator `generator` gives no value that fits (`value`, when its variable has a
    /// value already; none when no value of the range leads to a derivation) from these
    /// bounds (none where a bound has no value).
    Generator { generator: usize, ty: ir::ValueType, value: Option<u32>, bounds: Option<Vec<u32>> },
}

/// A rule argument with variables numbered per rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arg {
    Var(usize),
    Const(u32),
}

struct CompiledAtom {
    pred: PredId,
    args: Vec<Arg>,
}

struct CompiledRule {
    id: RuleId,
    head: CompiledAtom,
    body: Vec<CompiledAtom>,
    /// The comparisons, in rule order.
    comparisons: Vec<(CmpOp, ir::ValueType, ir::Expr<Arg>, ir::Expr<Arg>)>,
    /// The negated atoms; a wildcard argument is `None`.
    negated: Vec<(PredId, Vec<Option<Arg>>)>,
    /// The generators: the variable each binds, its type and its bounds (`from`, `to`,
    /// then the step if it has one).
    generators: Vec<(usize, ir::ValueType, Vec<ir::Expr<Arg>>)>,
    /// Variable `i` is `vars[i]`.
    vars: Vec<Symbol>,
}

impl CompiledRule {
    fn new(program: &Program, id: RuleId) -> Self {
        let rule = program.rule(id);
        let mut vars = Vec::new();
        let mut atom = |a: &ir::Atom| CompiledAtom {
            pred: a.pred,
            args: a
                .args
                .iter()
                .map(|t| match t.kind {
                    TermKind::Const(c) => Arg::Const(c.raw()),
                    TermKind::Var(v) => Arg::Var(vars.iter().position(|&u| u == v).unwrap_or_else(|| {
                        vars.push(v);
                        vars.len() - 1
                    })),
                })
                .collect(),
        };
        let head = atom(&rule.head);
        let body = rule.body.iter().map(&mut atom).collect();
        let mut number = |t: &ir::Term| match t.kind {
            TermKind::Const(c) => Arg::Const(c.raw()),
            TermKind::Var(v) => Arg::Var(vars.iter().position(|&u| u == v).unwrap_or_else(|| {
                vars.push(v);
                vars.len() - 1
            })),
        };
        let mut operand = |e: &ir::Expr| e.map(|t| Some(number(t))).expect("every leaf maps");
        let comparisons = rule
            .comparisons
            .iter()
            .map(|c| {
                let left = operand(&c.left);
                (c.op, c.domain, left, operand(&c.right))
            })
            .collect();
        let generators = rule
            .generators
            .iter()
            .map(|g| {
                let var = operand(&ir::Expr::leaf(ir::Term { kind: TermKind::Var(g.var), span: g.span }));
                let Some(&Arg::Var(var)) = var.as_leaf() else { unreachable!("a variable numbers as one") };
                (var, g.domain, g.operands().map(&mut operand).collect())
            })
            .collect();
        let bindable = rule.bound_vars();
        let negated = rule
            .negated
            .iter()
            .map(|a| {
                let args =
                    a.args.iter().map(|t| t.var().is_none_or(|v| bindable.contains(&v)).then(|| number(t))).collect();
                (a.pred, args)
            })
            .collect();
        CompiledRule { id, head, body, comparisons, negated, generators, vars }
    }

    /// The leaves of the instance the bindings `vals` of a full body match make, or what
    /// blocks it: assignments bind their variables first (as often as one feeds another),
    /// then every comparison must hold and no negated atom find a fact.
    /// A generator whose variable has no value yet tries each value of its range in
    /// turn (the first that leads to a derivation is the instance's).
    fn leaves(&self, vals: &[Binding], db: &Database, values: &ValueStore) -> Result<Vec<Leaf>, Blocked> {
        if self.comparisons.is_empty() && self.negated.is_empty() && self.generators.is_empty() {
            return Ok(Vec::new());
        }
        let mut vals = vals.to_vec();
        let value = |a: Arg, vals: &[Binding]| match a {
            Arg::Const(c) => Some(c),
            Arg::Var(i) => vals[i],
        };
        // `None` while a variable of the operand is unbound, `Some(None)` where the
        // operand has no value.
        let evaluate = |e: &ir::Expr<Arg>, vals: &[Binding]| {
            let bound = e.leaves().all(|&a| value(a, vals).is_some());
            bound.then(|| e.eval(values, |&a| value(a, vals).unwrap_or(0)))
        };
        loop {
            let mut bound = false;
            for (comparison, (op, _, left, right)) in self.comparisons.iter().enumerate() {
                if *op != CmpOp::Eq {
                    continue;
                }
                let target = |e: &ir::Expr<Arg>| match e.as_leaf() {
                    Some(&Arg::Var(i)) => Some(i),
                    _ => None,
                };
                let sides = [(left, right), (right, left)];
                for (lone, other) in sides {
                    let Some(i) = target(lone).filter(|&i| vals[i].is_none()) else { continue };
                    match evaluate(other, &vals) {
                        Some(Some(v)) => {
                            vals[i] = Some(v);
                            bound = true;
                        }
                        Some(None) => return Err(Blocked::Undefined { comparison }),
                        None => {}
                    }
                }
            }
            if !bound {
                break;
            }
        }
        let bounds = |operands: &[ir::Expr<Arg>], vals: &[Binding]| -> Option<Option<Vec<u32>>> {
            operands
                .iter()
                .map(|e| evaluate(e, vals))
                .collect::<Option<Vec<Option<u32>>>>()
                .map(|b| b.into_iter().collect())
        };
        let range =
            |ty: ir::ValueType, bounds: &[u32]| ir::RangeValues::new(ty, bounds[0], bounds[1], bounds.get(2).copied());
        // A generator whose variable nothing bound yet: each of its values in turn.
        let open = self.generators.iter().enumerate().find_map(|(generator, (var, ty, operands))| {
            vals[*var].is_none().then(|| bounds(operands, &vals).map(|b| (generator, *var, *ty, b))).flatten()
        });
        if let Some((generator, var, ty, bounds)) = open {
            let Some(bounds) = bounds else {
                return Err(Blocked::Generator { generator, ty, value: None, bounds: None });
            };
            let mut last = Blocked::Generator { generator, ty, value: None, bounds: Some(bounds.clone()) };
            for value in range(ty, &bounds) {
                vals[var] = Some(value);
                match self.leaves(&vals, db, values) {
                    Ok(leaves) => return Ok(leaves),
                    Err(why) => last = why,
                }
            }
            return Err(last);
        }
        let mut leaves = Vec::new();
        for (comparison, (op, domain, left, right)) in self.comparisons.iter().enumerate() {
            let (op, domain) = (*op, *domain);
            let (Some(a), Some(b)) = (evaluate(left, &vals), evaluate(right, &vals)) else {
                // Not for a valid rule, whose comparisons read bound variables only.
                return Err(Blocked::Comparison { comparison, op, ty: domain, left: 0, right: 0 });
            };
            let (Some(a), Some(b)) = (a, b) else { return Err(Blocked::Undefined { comparison }) };
            if !op.holds_for(a, b, domain, Some(values)) {
                return Err(Blocked::Comparison { comparison, op, ty: domain, left: a, right: b });
            }
            leaves.push(Leaf::Compared { comparison, op, ty: domain, left: a, right: b });
        }
        for (negated, (pred, args)) in self.negated.iter().enumerate() {
            let pattern: Vec<Option<u32>> = args.iter().map(|a| a.and_then(|a| value(a, &vals))).collect();
            let matches = |t: &[u32]| pattern.iter().zip(t).all(|(p, &v)| p.is_none_or(|p| p == v));
            if let Some(fact) = db.tuples(*pred).find(|t| matches(t)) {
                return Err(Blocked::Negation { negated, pred: *pred, fact: fact.to_vec() });
            }
            leaves.push(Leaf::Absent { negated, pred: *pred, pattern });
        }
        for (generator, (var, ty, operands)) in self.generators.iter().enumerate() {
            let (value, ty) = (vals[*var], *ty);
            let Some(Some(bounds)) = bounds(operands, &vals) else {
                return Err(Blocked::Generator { generator, ty, value, bounds: None });
            };
            match value {
                Some(v) if range(ty, &bounds).any(|r| r == v) => {
                    leaves.push(Leaf::Generated { generator, ty, value: v, bounds })
                }
                _ => return Err(Blocked::Generator { generator, ty, value, bounds: Some(bounds) }),
            }
        }
        Ok(leaves)
    }

    /// Binds the head's variables to `tuple` in `vals`; false when they do not fit.
    fn bind_head(&self, tuple: &[u32], vals: &mut [Binding]) -> bool {
        vals.fill(None);
        self.head.args.len() == tuple.len() && unify(&self.head.args, tuple, vals)
    }
}

/// Extends the bindings `vals` so that `args` read `row`; false (with `vals` partly
/// written) when they cannot.
#[inline]
fn unify(args: &[Arg], row: &[u32], vals: &mut [Binding]) -> bool {
    for (arg, &v) in args.iter().zip(row) {
        match *arg {
            Arg::Const(c) if c != v => return false,
            Arg::Const(_) => {}
            Arg::Var(i) => match vals[i] {
                None => vals[i] = Some(v),
                Some(w) if w != v => return false,
                Some(_) => {}
            },
        }
    }
    true
}

/// A variable's value in a partial match, `None` while unbound: no `u32` can stand for
/// "unbound", since a number column uses all of them.
type Binding = Option<u32>;

/// The live rows of one relation grouped by the value of one column: a hash table of
/// the first row of each value, and per row the next row with its value, in row order
/// (so rows of lower rank come first and a reader below a rank stops early). Built on
/// first use in one pass over the rows. One column, not all the bound ones: keys of
/// several columns of a closure are millions of distinct keys, whose table costs more to
/// build than the evaluation; a column has at most as many keys as there are constants,
/// and the rows of one value are few enough to filter.
struct KeyIndex {
    col: usize,
    /// `(value, first row)` pairs.
    first: HashTable<(u32, u32)>,
    /// `next[r]`: the next live row after `r` with the same value, or [`NIL`].
    next: Vec<u32>,
}

fn value_hash(v: u32) -> u64 {
    hash_values(std::iter::once(v))
}

impl KeyIndex {
    fn new(rows: &Rows, col: usize) -> Self {
        let mut first: HashTable<(u32, u32)> = HashTable::new();
        let mut next = vec![NIL; rows.end() as usize];
        // Walking down the rows and pushing each in front of its value's list leaves
        // every list in ascending row order.
        for r in (0..rows.end()).rev().filter(|&r| rows.is_alive(r)) {
            let v = rows.row(r)[col];
            match first.find_mut(value_hash(v), |&(u, _)| u == v) {
                Some((_, head)) => {
                    next[r as usize] = *head;
                    *head = r;
                }
                None => {
                    first.insert_unique(value_hash(v), (v, r), |&(u, _)| value_hash(u));
                }
            }
        }
        KeyIndex { col, first, next }
    }

    /// Appends to `out` the rows below `end` whose column holds `value`.
    fn lookup(&self, value: u32, end: u32, out: &mut Vec<u32>) {
        let mut r = self.first.find(value_hash(value), |&(u, _)| u == value).map_or(NIL, |&(_, r)| r);
        while r != NIL && r < end {
            out.push(r);
            r = self.next[r as usize];
        }
    }
}

/// Roughly how many distinct values each column of `rows` holds, from a sample of rows
/// spread over the relation: which bound column an index should key on, and how many
/// rows a bound value selects. A column whose sample is all distinct is taken to be a
/// key of the relation.
fn spread(rows: &Rows) -> Vec<usize> {
    const SAMPLE: u32 = 256;
    let step = (rows.end() / SAMPLE).max(1);
    let sample: Vec<u32> = (0..rows.end()).step_by(step as usize).filter(|&r| rows.is_alive(r)).collect();
    (0..rows.arity)
        .map(|c| {
            let mut values: Vec<u32> = sample.iter().map(|&r| rows.row(r)[c]).collect();
            values.sort_unstable();
            values.dedup();
            if values.len() == sample.len() {
                rows.len()
            } else {
                values.len()
            }
        })
        .collect()
}

/// The relations of a database with the indexes explanations probe.
struct Indexed<'a> {
    db: &'a Database,
    /// Per relation, its indexes so far (one per column keyed).
    indexes: Vec<Vec<KeyIndex>>,
    /// Per relation, [`spread`] once computed.
    spreads: Vec<Option<Vec<usize>>>,
    /// Candidate rows handed out so far: the work of the explanations.
    tried: u64,
}

impl<'a> Indexed<'a> {
    fn new(db: &'a Database) -> Self {
        let n = db.relation_count();
        Indexed { db, indexes: (0..n).map(|_| Vec::new()).collect(), spreads: vec![None; n], tried: 0 }
    }

    /// Appends to `out` the live rows below `end` of `pred` that can match `args` under
    /// `vals`: those agreeing on the most selective bound column (the caller unifies).
    fn candidates(&mut self, pred: PredId, args: &[Arg], vals: &[Binding], end: u32, out: &mut Vec<u32>) {
        out.clear();
        let rows = self.db.rel(pred);
        if rows.arity != args.len() {
            return;
        }
        let end = end.min(rows.end());
        let bound = |c: usize| match args[c] {
            Arg::Const(v) => Some(v),
            Arg::Var(i) => vals[i],
        };
        let spread = self.spreads[pred.index()].get_or_insert_with(|| spread(rows));
        let Some(col) = (0..args.len()).filter(|&c| bound(c).is_some()).max_by_key(|&c| (spread[c], usize::MAX - c))
        else {
            out.extend((0..end).filter(|&r| rows.is_alive(r)));
            self.tried += out.len() as u64;
            return;
        };
        let value = bound(col).expect("a bound column");
        let indexes = &mut self.indexes[pred.index()];
        let i = match indexes.iter().position(|ix| ix.col == col) {
            Some(i) => i,
            None => {
                indexes.push(KeyIndex::new(rows, col));
                indexes.len() - 1
            }
        };
        // Rows are alive when indexed, and the database does not change while borrowed.
        indexes[i].lookup(value, end, out);
        self.tried += out.len() as u64;
    }

    /// About how many rows of `pred` match `args` when the columns `bound(c)` are known:
    /// none for a fully bound atom (a lookup), the rows per value of its most spread bound
    /// column, or the whole relation.
    fn estimate(&mut self, pred: PredId, args: &[Arg], bound: impl Fn(usize) -> bool) -> usize {
        let rows = self.db.rel(pred);
        if (0..args.len()).all(&bound) {
            return 0;
        }
        let spread = self.spreads[pred.index()].get_or_insert_with(|| spread(rows));
        let distinct = (0..args.len()).filter(|&c| bound(c)).map(|c| spread[c]).max().unwrap_or(1);
        rows.len() / distinct.max(1)
    }

    /// The live row holding `tuple`.
    fn locate(&mut self, pred: PredId, tuple: &[u32]) -> Option<u32> {
        if pred.index() >= self.db.relation_count() || !self.db.contains(pred, tuple) {
            return None;
        }
        let args: Vec<Arg> = tuple.iter().map(|&v| Arg::Const(v)).collect();
        let mut out = Vec::new();
        self.candidates(pred, &args, &[], u32::MAX, &mut out);
        let rows = self.db.rel(pred);
        out.into_iter().find(|&r| rows.row(r) == tuple)
    }
}

/// What [`for_each_match`] tells its visitor: keep going or stop.
#[derive(PartialEq, Eq)]
enum Flow {
    Continue,
    Stop,
}

/// Told `(level, bindings, matched rows)` by [`for_each_match`].
type Visitor<'v> = dyn FnMut(usize, &[Binding], &[(PredId, u32)]) -> Flow + 'v;

/// Per-level buffers of [`for_each_match`], reused across calls.
#[derive(Default)]
struct MatchScratch {
    candidates: Vec<Vec<u32>>,
    position: Vec<usize>,
    vals: Vec<Binding>,
    matched: Vec<(PredId, u32)>,
}

/// Matches the body atoms of `rule` in the order `order`, starting from the bindings
/// `init`, against rows below `end(pred)`. Calls `visit(level, bindings, matched rows)`
/// each time the first `level` atoms of `order` have matched (level 0 included once);
/// a full match is `level == order.len()`. Iterative: one buffer of candidates per level.
fn for_each_match(
    ix: &mut Indexed<'_>,
    s: &mut MatchScratch,
    rule: &CompiledRule,
    order: &[usize],
    init: &[Binding],
    end: &dyn Fn(PredId) -> u32,
    visit: &mut Visitor<'_>,
) {
    let n = order.len();
    let nv = init.len();
    s.candidates.resize_with(n.max(1), Vec::new);
    s.position.clear();
    s.position.resize(n.max(1), 0);
    s.vals.clear();
    s.vals.extend_from_slice(init);
    s.vals.resize((n + 1) * nv, None);
    s.matched.clear();
    s.matched.resize(n, (PredId(0), 0));
    if visit(0, init, &[]) == Flow::Stop || n == 0 {
        return;
    }
    let first = &rule.body[order[0]];
    ix.candidates(first.pred, &first.args, &s.vals[..nv], end(first.pred), &mut s.candidates[0]);
    let mut level = 0;
    loop {
        if s.position[level] == s.candidates[level].len() {
            if level == 0 {
                return;
            }
            level -= 1;
            continue;
        }
        let r = s.candidates[level][s.position[level]];
        s.position[level] += 1;
        let atom = &rule.body[order[level]];
        let (before, after) = s.vals.split_at_mut((level + 1) * nv);
        let next = &mut after[..nv];
        next.copy_from_slice(&before[level * nv..]);
        if !unify(&atom.args, ix.db.rel(atom.pred).row(r), next) {
            continue;
        }
        s.matched[level] = (atom.pred, r);
        let reached = level + 1;
        if visit(reached, &s.vals[reached * nv..(reached + 1) * nv], &s.matched[..reached]) == Flow::Stop {
            return;
        }
        if reached == n {
            continue;
        }
        level = reached;
        let atom = &rule.body[order[level]];
        let vals = &s.vals[level * nv..(level + 1) * nv];
        ix.candidates(atom.pred, &atom.args, vals, end(atom.pred), &mut s.candidates[level]);
        s.position[level] = 0;
    }
}

/// A join order for `rule`'s body given the variables bound in `vals`: at each step the
/// atom expected to match the fewest rows ([`Indexed::estimate`]), earlier atoms first on
/// ties. In `@a:R^bf(X,Z) <- @m:R^bf(X), @a:R^bf(X,Y), E(Y,Z)` with `X` and `Z` bound,
/// `E(Y,Z)` comes before `@a:R^bf(X,Y)`, all of whose rows share their `X`.
fn greedy_order(ix: &mut Indexed<'_>, rule: &CompiledRule, vals: &[Binding]) -> Vec<usize> {
    let mut bound: Vec<bool> = vals.iter().map(Option::is_some).collect();
    let mut left: Vec<usize> = (0..rule.body.len()).collect();
    let mut order = Vec::with_capacity(left.len());
    while !left.is_empty() {
        let mut best = 0;
        let mut best_cost = usize::MAX;
        for (k, &a) in left.iter().enumerate() {
            let atom = &rule.body[a];
            let known =
                |c: usize| matches!(atom.args[c], Arg::Const(_)) || matches!(atom.args[c], Arg::Var(i) if bound[i]);
            let cost = ix.estimate(atom.pred, &atom.args, known);
            if cost < best_cost {
                (best, best_cost) = (k, cost);
            }
        }
        let a = left.remove(best);
        for arg in &rule.body[a].args {
            if let Arg::Var(i) = *arg {
                bound[i] = true;
            }
        }
        order.push(a);
    }
    order
}

/// A fact met by the proof search.
struct Node {
    pred: PredId,
    row: u32,
    rank: Rank,
    /// Derivations `derivations[first..first + count]`, once enumerated.
    derivations: Option<(u32, u32)>,
    /// The largest height bound known not to suffice (-1: none).
    failed: i64,
    /// The smallest height bound known to suffice, and the derivation that does it.
    proved: Option<(u32, u32)>,
}

/// One rule instance deriving a node: its body facts are `body[first..first + len]`.
struct Derivation {
    rule: u32,
    first: u32,
    len: u32,
    leaves: Vec<Leaf>,
}

/// A frame of the bounded search: a node checked against `bound`, at derivation `d`,
/// body atom `j` of it.
struct Frame {
    node: u32,
    bound: u32,
    d: u32,
    j: u32,
}

/// Explains facts of one database of one program: [`Explainer::prove`] and
/// [`Explainer::why_not`]. Indexes it builds are kept for the next question.
pub struct Explainer<'a> {
    ix: Indexed<'a>,
    rules: Vec<CompiledRule>,
    /// Per predicate, the indices into `rules` of the rules deriving it.
    by_head: Vec<Vec<usize>>,
    /// Per predicate, whether a rule of the program derives it.
    derived: Vec<bool>,
    scratch: MatchScratch,
    /// The texts of values, for comparisons that order them as integers.
    values: ValueStore,
    /// Per predicate, the reduction deriving it, its rows' relation and its key count.
    reductions: Vec<Option<(RuleId, PredId, usize)>>,
    /// Per predicate, the keys of its `choice-domain`, if it has one.
    choices: Vec<Option<Vec<Vec<usize>>>>,
    /// The program's dominance rules.
    dominances: Vec<ir::Dominance>,
}

impl<'a> Explainer<'a> {
    /// `db` must be a database of `program` (evaluated or maintained).
    pub fn new(program: &Program, db: &'a Database) -> Self {
        let rules: Vec<CompiledRule> = program.rule_ids().map(|id| CompiledRule::new(program, id)).collect();
        let mut by_head = vec![Vec::new(); db.relation_count()];
        for (i, rule) in rules.iter().enumerate() {
            let fits = |a: &CompiledAtom| a.pred.index() < db.relation_count() && db.arity(a.pred) == a.args.len();
            // A reduction's fact is no projection of one body row: it is shown as given.
            let joins = program.rule(rule.id).aggregate.is_none();
            if joins && fits(&rule.head) && rule.body.iter().all(fits) {
                by_head[rule.head.pred.index()].push(i);
            }
        }
        let mut derived = vec![false; program.preds.len().max(db.relation_count())];
        for rule in &program.rules {
            derived[rule.head.pred.index()] = true;
        }
        let values = program.consts.clone();
        let mut reductions = vec![None; program.preds.len().max(db.relation_count())];
        for (id, rule) in program.rule_ids().zip(&program.rules) {
            if let (Some(aggregation), [rows]) = (&rule.aggregate, rule.body.as_slice()) {
                reductions[rule.head.pred.index()] = Some((id, rows.pred, aggregation.keys));
            }
        }
        let choices = program.preds.iter().map(|p| p.choice.as_ref().map(|c| c.keys.clone())).collect();
        let ix = Indexed::new(db);
        let dominances = program.dominances.clone();
        Explainer {
            ix,
            rules,
            by_head,
            derived,
            scratch: MatchScratch::default(),
            values,
            reductions,
            choices,
            dominances,
        }
    }

    /// The step of a fact of a reduction, showing the nodes `shown` of its rows: how many
    /// rows its group has.
    fn reduction_step(&self, pred: PredId, tuple: &[u32], shown: Vec<usize>) -> Option<Step> {
        let &(rule, rows, keys) = self.reductions.get(pred.index())?.as_ref()?;
        let group = tuple.get(..keys)?;
        let count = self.ix.db.tuples(rows).filter(|row| row.get(..keys) == Some(group)).count();
        Some(Step::Aggregate { rule, rows: count, shown })
    }

    /// Adds to `search` the one derivation of a reduction's fact (`pred`, `tuple`, of rank
    /// `rank`): up to [`AGGREGATE_ROWS_SHOWN`] rows of its group of rank up to its own (a
    /// reduction runs on the rows its stratum's start found), the first appended, as its
    /// body. The rows lie in a lower stratum, so the search cannot loop through them.
    /// Nothing for a fact of another relation.
    fn expand_reduction(&self, search: &mut Search, pred: PredId, tuple: &[u32], rank: Rank) {
        let Some(&(rule, rows_pred, keys)) = self.reductions.get(pred.index()).and_then(Option::as_ref) else {
            return;
        };
        let db = self.ix.db;
        let Some(group) = tuple.get(..keys) else { return };
        let rows = db.rel(rows_pred);
        let at = search.body.len() as u32;
        let members = (0..rows.rank_end(rank.saturating_add(1)))
            .filter(|&r| rows.is_alive(r) && rows.row(r).get(..keys) == Some(group));
        for r in members.take(AGGREGATE_ROWS_SHOWN) {
            let child = search.node(db, rows_pred, r);
            search.body.push(child);
        }
        let len = search.body.len() as u32 - at;
        search.derivations.push(Derivation { rule: rule.index() as u32, first: at, len, leaves: Vec::new() });
    }

    /// Whether some rule derives `pred` (else its facts are input facts).
    pub fn is_derived(&self, pred: PredId) -> bool {
        self.derived.get(pred.index()).copied().unwrap_or(false)
    }

    /// The candidate rows tried so far while matching rule bodies: the work done, the
    /// measure `row_tests` is for evaluation.
    pub fn rows_tried(&self) -> u64 {
        self.ix.tried
    }

    /// Whether the database holds the fact.
    pub fn contains(&self, pred: PredId, tuple: &[u32]) -> bool {
        self.ix.db.contains(pred, tuple)
    }

    /// A proof of the fact of smallest height among those whose every step reads facts
    /// of lower rank, or `None` when the database does not hold the fact.
    pub fn prove(&mut self, pred: PredId, tuple: &[u32]) -> Option<Proof> {
        let row = self.ix.locate(pred, tuple)?;
        let mut search =
            Search { nodes: Vec::new(), ids: FxHashMap::default(), derivations: Vec::new(), body: Vec::new() };
        let root = search.node(self.ix.db, pred, row);
        // Every chain of derivations descends in rank, so no proof needs a bound above
        // the number of ranks below the fact; Given facts end every chain.
        let most = u32::try_from(search.nodes[0].rank.saturating_add(2)).unwrap_or(u32::MAX);
        let mut hi = 1u32;
        while !self.proves(&mut search, root, hi) {
            assert!(hi < most, "a fact of rank r has a proof of height at most r + 1");
            hi = hi.saturating_mul(2);
        }
        let mut lo = hi / 2;
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.proves(&mut search, root, mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(search.proof(self, root))
    }

    /// Enumerates the derivations of `node` from facts of lower rank, shallow-looking
    /// first (smallest highest body rank).
    fn expand(&mut self, search: &mut Search, node: u32) {
        if search.nodes[node as usize].derivations.is_some() {
            return;
        }
        let Node { pred, row, rank, .. } = search.nodes[node as usize];
        let db = self.ix.db;
        let tuple = db.rel(pred).row(row);
        let first = search.derivations.len() as u32;
        let end = |p: PredId| db.rel(p).rank_end(rank);
        // Each match as (highest body rank, rule, where its body starts in `bodies`).
        let mut found: Vec<(Rank, u32, usize, Vec<Leaf>)> = Vec::new();
        let mut bodies: Vec<(PredId, u32)> = Vec::new();
        let values = &self.values;
        for &ri in &self.by_head[pred.index()] {
            let rule = &self.rules[ri];
            let mut vals = vec![None; rule.vars.len()];
            if !rule.bind_head(tuple, &mut vals) {
                continue;
            }
            let order = greedy_order(&mut self.ix, rule, &vals);
            let n = order.len();
            for_each_match(&mut self.ix, &mut self.scratch, rule, &order, &vals, &end, &mut |level, bound, matched| {
                if level == n {
                    // A match the negations or comparisons exclude is no derivation.
                    let Ok(leaves) = rule.leaves(bound, db, values) else { return Flow::Continue };
                    let at = bodies.len();
                    bodies.resize(at + n, (PredId(0), 0));
                    for (k, &m) in matched.iter().enumerate() {
                        bodies[at + order[k]] = m;
                    }
                    let top = matched.iter().map(|&(p, r)| db.rel(p).rank_of(r)).max().unwrap_or(0);
                    found.push((top, ri as u32, at, leaves));
                }
                Flow::Continue
            });
        }
        found.sort_by_key(|&(top, rule, _, _)| (top, rule));
        for (_, rule, start, leaves) in found {
            let at = search.body.len() as u32;
            let len = self.rules[rule as usize].body.len();
            for &(p, r) in &bodies[start..start + len] {
                let child = search.node(db, p, r);
                search.body.push(child);
            }
            search.derivations.push(Derivation { rule, first: at, len: search.body.len() as u32 - at, leaves });
        }
        self.expand_reduction(search, pred, tuple, rank);
        let count = search.derivations.len() as u32 - first;
        search.nodes[node as usize].derivations = Some((first, count));
    }

    /// What is known of `node` under `bound` without searching: `Some(true)` for an
    /// input or Given fact and a bound known to suffice, `Some(false)` for a bound known
    /// not to.
    fn settled(&mut self, search: &mut Search, node: u32, bound: u32) -> Option<bool> {
        if !self.derived[search.nodes[node as usize].pred.index()] {
            return Some(true);
        }
        self.expand(search, node);
        let n = &search.nodes[node as usize];
        if matches!(n.derivations, Some((_, 0))) {
            return Some(true);
        }
        if bound == 0 || i64::from(bound) <= n.failed {
            return Some(false);
        }
        if n.proved.is_some_and(|(h, _)| bound >= h) {
            return Some(true);
        }
        None
    }

    /// Whether `root` has a proof of height at most `bound`, on an explicit stack.
    fn proves(&mut self, search: &mut Search, root: u32, bound: u32) -> bool {
        if let Some(known) = self.settled(search, root, bound) {
            return known;
        }
        let mut stack = vec![Frame { node: root, bound, d: 0, j: 0 }];
        let mut answer: Option<bool> = None;
        loop {
            let top = stack.last_mut().expect("the loop returns when the stack empties");
            match answer.take() {
                Some(true) => top.j += 1,
                Some(false) => {
                    top.d += 1;
                    top.j = 0;
                }
                None => {}
            }
            let node = &mut search.nodes[top.node as usize];
            let (first, count) = node.derivations.expect("expanded before pushed");
            let result = if top.d == count {
                node.failed = node.failed.max(i64::from(top.bound));
                Some(false)
            } else {
                let d = &search.derivations[(first + top.d) as usize];
                if top.j == d.len {
                    if node.proved.is_none_or(|(h, _)| top.bound < h) {
                        node.proved = Some((top.bound, first + top.d));
                    }
                    Some(true)
                } else {
                    let child = search.body[(d.first + top.j) as usize];
                    let child_bound = top.bound - 1;
                    match self.settled(search, child, child_bound) {
                        Some(known) => answer = Some(known),
                        None => stack.push(Frame { node: child, bound: child_bound, d: 0, j: 0 }),
                    }
                    None
                }
            };
            if let Some(result) = result {
                stack.pop();
                if stack.is_empty() {
                    return result;
                }
                answer = Some(result);
            }
        }
    }

    /// Why the fact is not derived: for each rule of its predicate, the first body atom
    /// (in source order) that no binding of the atoms before it lets match.
    /// The reduction whose head `pred` is, or copies: `pred` is derived by a rule whose
    /// head has the arguments of one of its positive body atoms, whose relation does (as
    /// `h_agg_all(K, N) <- h_agg(K, N)` and the magic rewrite's answer relations do),
    /// a few such steps at most.
    fn reduction_behind(&self, pred: PredId) -> Option<(RuleId, PredId, usize)> {
        let mut frontier = vec![pred];
        let mut seen = vec![pred];
        for _ in 0..4 {
            let mut next = Vec::new();
            for p in frontier {
                if let Some(found) = self.reductions.get(p.index()).and_then(Option::as_ref) {
                    return Some(*found);
                }
                for rule in self.rules.iter().filter(|r| r.head.pred == p) {
                    for atom in rule.body.iter().filter(|a| a.args == rule.head.args) {
                        if !seen.contains(&atom.pred) {
                            seen.push(atom.pred);
                            next.push(atom.pred);
                        }
                    }
                }
            }
            frontier = next;
        }
        None
    }

    /// [`Attempt::Aggregate`] for body atom `atom` of rule `ri` failing under `binding`
    /// (the first binding of the atoms before it), if the atom reads an aggregate whose
    /// key columns the binding sets.
    fn aggregate_attempt(
        &self,
        ri: usize,
        atom: usize,
        binding: Option<&Vec<(Symbol, u32)>>,
        excluded: Option<&Blocked>,
    ) -> Option<Attempt> {
        let rule = &self.rules[ri];
        let body = rule.body.get(atom)?;
        let (reduction, rows_pred, keys) = self.reductions_behind_arity(body)?;
        let value_of = |arg: &Arg| match *arg {
            Arg::Const(c) => Some(c),
            Arg::Var(v) => binding?.iter().find(|(s, _)| *s == rule.vars[v]).map(|&(_, x)| x),
        };
        let group: Vec<u32> = body.args[..keys].iter().map(value_of).collect::<Option<_>>()?;
        let wanted = if excluded.is_some() { None } else { body.args.last().and_then(value_of) };
        let db = self.ix.db;
        let rows = db.tuples(rows_pred).filter(|row| row.get(..keys) == Some(group.as_slice())).count();
        let head = self.rules[reduction.index()].head.pred;
        let value = db.tuples(head).find(|t| t.get(..keys) == Some(group.as_slice())).and_then(|t| t.last().copied());
        Some(Attempt::Aggregate { atom, reduction, group, rows, value, wanted, excluded: excluded.cloned() })
    }

    /// [`Explainer::reduction_behind`] of an atom with the arity of the reduction's head.
    fn reductions_behind_arity(&self, atom: &CompiledAtom) -> Option<(RuleId, PredId, usize)> {
        let found = self.reduction_behind(atom.pred)?;
        (atom.args.len() == found.2 + 1).then_some(found)
    }

    pub fn why_not(&mut self, pred: PredId, tuple: &[u32]) -> WhyNot {
        let present = self.contains(pred, tuple);
        let mut rules = Vec::new();
        let rule_ids: Vec<usize> = (0..self.rules.len()).filter(|&i| self.rules[i].head.pred == pred).collect();
        for ri in rule_ids {
            let rule = &self.rules[ri];
            let mut vals = vec![None; rule.vars.len()];
            let usable = self.by_head.get(pred.index()).is_some_and(|rules| rules.contains(&ri));
            if !usable || !rule.bind_head(tuple, &mut vals) {
                rules.push(RuleAttempt { rule: rule.id, outcome: Attempt::HeadMismatch });
                continue;
            }
            let order: Vec<usize> = (0..rule.body.len()).collect();
            let (mut deepest, mut partial, mut visits) = (0usize, 0usize, 0usize);
            let mut examples: Vec<Vec<(Symbol, u32)>> = Vec::new();
            let mut gave_up = false;
            let n = order.len();
            let everything = |_: PredId| u32::MAX;
            // Full matches of the positive atoms that a leaf excludes: how many, and what
            // blocked the first. A match that passes every leaf is a derivation.
            let (mut excluded, mut blocked, mut derived) = (0usize, None, false);
            let mut first_excluded: Option<Vec<(Symbol, u32)>> = None;
            let (db, values) = (self.ix.db, &self.values);
            for_each_match(
                &mut self.ix,
                &mut self.scratch,
                rule,
                &order,
                &vals,
                &everything,
                &mut |level, bound, _| {
                    visits += 1;
                    if level > deepest {
                        (deepest, partial) = (level, 0);
                        examples.clear();
                    }
                    if level == deepest {
                        partial += 1;
                        // The first few in the order of their values, not of the search:
                        // which rows an engine finds first is its own business.
                        let example: Vec<(Symbol, u32)> =
                            bound.iter().enumerate().filter_map(|(i, &v)| Some((rule.vars[i], v?))).collect();
                        if examples.len() < EXAMPLES || examples.last().is_some_and(|last| example < *last) {
                            let at = examples.partition_point(|e| *e < example);
                            examples.insert(at, example);
                            examples.truncate(EXAMPLES);
                        }
                    }
                    if level == n {
                        match rule.leaves(bound, db, values) {
                            Ok(_) => {
                                derived = true;
                                return Flow::Stop;
                            }
                            Err(why) => {
                                excluded += 1;
                                blocked.get_or_insert(why);
                                first_excluded.get_or_insert_with(|| {
                                    bound.iter().enumerate().filter_map(|(i, &v)| Some((rule.vars[i], v?))).collect()
                                });
                            }
                        }
                    }
                    if visits >= WHY_NOT_BUDGET {
                        gave_up = true;
                        return Flow::Stop;
                    }
                    Flow::Continue
                },
            );
            let outcome = if derived {
                Attempt::Matched
            } else if let (Some(blocked), false) = (blocked, gave_up) {
                // A match whose aggregate value a comparison then rejects: the group and
                // its value say why, where an atom reads one.
                (0..self.rules[ri].body.len())
                    .find_map(|k| self.aggregate_attempt(ri, k, first_excluded.as_ref(), Some(&blocked)))
                    .unwrap_or(Attempt::Excluded { blocked, matches: excluded })
            } else if gave_up {
                Attempt::GaveUp { reached: deepest }
            } else {
                self.aggregate_attempt(ri, deepest, examples.first(), None).unwrap_or(Attempt::Failed {
                    atom: deepest,
                    examples,
                    partial,
                })
            };
            rules.push(RuleAttempt { rule: rule.id, outcome });
        }
        let keys = self.choices.get(pred.index()).and_then(Option::as_ref).filter(|_| !present);
        let chosen = keys.and_then(|keys| {
            let same_key = |t: &&[u32]| keys.iter().any(|key| key.iter().all(|&c| t.get(c) == tuple.get(c)));
            self.ix.db.tuples(pred).find(same_key).map(<[u32]>::to_vec)
        });
        let dominated_by = self.dominances.iter().filter(|d| d.pred() == pred).find_map(|d| {
            let mut dominating = None;
            let facts = crate::dominance::Rows(self.ix.db);
            d.search(&d.plan(ir::Known::Dominated), tuple, &self.values, &facts, &mut |_, row| {
                dominating = Some(row.to_vec());
                true
            });
            dominating
        });
        WhyNot { present, rules, chosen, dominated_by }
    }
}

/// The memo table of one [`Explainer::prove`].
struct Search {
    nodes: Vec<Node>,
    ids: FxHashMap<(PredId, u32), u32>,
    derivations: Vec<Derivation>,
    body: Vec<u32>,
}

impl Search {
    /// The node of row `row` of `pred`, added if new.
    fn node(&mut self, db: &Database, pred: PredId, row: u32) -> u32 {
        let next = self.nodes.len() as u32;
        let id = *self.ids.entry((pred, row)).or_insert(next);
        if id == next {
            let rank = db.rel(pred).rank_of(row);
            self.nodes.push(Node { pred, row, rank, derivations: None, failed: -1, proved: None });
        }
        id
    }

    /// The proof under `root` along each node's best derivation found.
    fn proof(&self, ex: &Explainer<'_>, root: u32) -> Proof {
        let db = ex.ix.db;
        let mut index: FxHashMap<u32, usize> = FxHashMap::default();
        let mut order = vec![root];
        index.insert(root, 0);
        let mut k = 0;
        while k < order.len() {
            let n = &self.nodes[order[k] as usize];
            if let Some((_, d)) = n.proved {
                let d = &self.derivations[d as usize];
                for &child in &self.body[d.first as usize..(d.first + d.len) as usize] {
                    if let std::collections::hash_map::Entry::Vacant(slot) = index.entry(child) {
                        slot.insert(order.len());
                        order.push(child);
                    }
                }
            }
            k += 1;
        }
        let mut nodes: Vec<ProofNode> = order
            .iter()
            .map(|&id| {
                let n = &self.nodes[id as usize];
                let step = match n.proved {
                    Some((_, d)) => {
                        let d = &self.derivations[d as usize];
                        let body: Vec<usize> =
                            self.body[d.first as usize..(d.first + d.len) as usize].iter().map(|c| index[c]).collect();
                        let rule = ex.rules[d.rule as usize].id;
                        match ex.reductions.get(n.pred.index()).and_then(Option::as_ref) {
                            Some(&(reduction, ..)) if reduction == rule => {
                                let tuple = db.rel(n.pred).row(n.row);
                                ex.reduction_step(n.pred, tuple, body).unwrap_or(Step::Given)
                            }
                            _ => Step::Rule { rule, body, leaves: d.leaves.clone() },
                        }
                    }
                    None if ex.is_derived(n.pred) => {
                        ex.reduction_step(n.pred, db.rel(n.pred).row(n.row), Vec::new()).unwrap_or(Step::Given)
                    }
                    None => Step::Input,
                };
                ProofNode { pred: n.pred, tuple: db.rel(n.pred).row(n.row).to_vec(), step, height: 0 }
            })
            .collect();
        // A rule's body facts have lower ranks, an aggregate's rows lower strata: the
        // proof is acyclic, and heights settle children first, on an explicit stack.
        let mut settled = vec![false; nodes.len()];
        let mut stack = vec![(0usize, false)];
        while let Some((i, children_done)) = stack.pop() {
            if settled[i] {
                continue;
            }
            if children_done {
                let height = match &nodes[i].step {
                    step @ (Step::Rule { .. } | Step::Aggregate { .. }) => {
                        1 + step.children().iter().map(|&c| nodes[c].height).max().unwrap_or(0)
                    }
                    _ => 0,
                };
                nodes[i].height = height;
                settled[i] = true;
                continue;
            }
            stack.push((i, true));
            stack.extend(nodes[i].step.children().iter().filter(|&&c| !settled[c]).map(|&c| (c, false)));
        }
        Proof { nodes }
    }
}

#[cfg(test)]
mod tests;
