//! Unary guards implied by another atom of the same body, found from the rules alone and
//! left out of the joins of semi-naive evaluation.
//!
//! When every rule for `P` has `G(V)` in its body for the variable `V` at head position
//! `c` (directly, or through an atom whose position is already known to lie in `G`), then
//! every fact of `P` has its `c`-th value in `G`, and a body holding both `P(…X…)` and
//! `G(X)` needs no test of `G(X)`. A magic program is full of these: every answer fact
//! `@a:R^bf(X,Y)` was derived under the demand `@m:R^bf(X)`, which the non-linear rule
//! `@a:R^bf(X,Z) <- @m:R^bf(X), @a:R^bf(X,Y), @a:R^bf(Y,Z)` would otherwise test once per
//! derivation.
//!
//! Dropping such an atom derives exactly the same facts, since the atom holds whenever
//! the rest of the body does, but it changes which derivations the delta of `G` finds
//! first. So only the fixpoint loop uses the reduced rules; DRed's over-deletion keeps the
//! rules as written, because its waves are part of its report.

use crate::database::Database;
use ir::{PredId, Program, RuleId, Symbol, TermKind};
use rustc_hash::FxHashMap;

/// The program with the implied guards removed from the rule bodies (rule ids and
/// everything else unchanged), or `None` when there are none. `db` holds the facts the
/// evaluation starts from: a derived relation that already has facts there is assumed
/// to satisfy nothing — unless `rule_derived` says that every derived fact in it came
/// from these rules (it is their fixpoint, evaluated from no derived facts). `fires[id]`
/// says whether rule `id` is evaluated at all.
pub(crate) fn reduce(program: &Program, fires: &[bool], db: &Database, rule_derived: bool) -> Option<Program> {
    let mut inclusions = Inclusions::new(program, fires, db, rule_derived);
    let mut dropped: Vec<(usize, Vec<bool>)> = Vec::new();
    let mut columns: FxHashMap<Symbol, Vec<(usize, usize)>> = FxHashMap::default();
    for (id, rule) in program.rules.iter().enumerate() {
        if !fires.get(id).copied().unwrap_or(false) || !rule.body.iter().any(|a| a.args.len() == 1) {
            continue;
        }
        // Where each variable occurs in the atoms of arity two or more (never dropped
        // themselves), so that each unary atom looks only at the atoms sharing its variable.
        columns.clear();
        for (i, atom) in rule.body.iter().enumerate().filter(|(_, a)| a.args.len() >= 2) {
            for (c, t) in atom.args.iter().enumerate() {
                if let TermKind::Var(v) = t.kind {
                    columns.entry(v).or_default().push((i, c));
                }
            }
        }
        let implied: Vec<bool> = rule
            .body
            .iter()
            .map(|atom| {
                let [arg] = atom.args.as_slice() else { return false };
                let TermKind::Var(x) = arg.kind else { return false };
                columns.get(&x).is_some_and(|occurrences| {
                    occurrences.iter().any(|&(i, c)| inclusions.holds(rule.body[i].pred, c, atom.pred))
                })
            })
            .collect();
        if implied.iter().any(|&i| i) {
            dropped.push((id, implied));
        }
    }
    if dropped.is_empty() {
        return None;
    }
    let mut reduced = program.clone();
    for (id, implied) in dropped {
        let body = &mut reduced.rules[id].body;
        let mut flags = implied.iter();
        body.retain(|_| !flags.next().copied().unwrap_or(false));
    }
    Some(reduced)
}

/// A node of the inclusion problem: column `c` of predicate `P`, numbered
/// `first_column[P] + c`.
type Node = usize;

/// What is known of one node while the inclusions into one unary `G` are decided.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// On the component stack of the search, with its depth-first number and the lowest
    /// number it reaches.
    Open { number: usize, low: usize },
    /// Decided: every fact of `P` has its column `c` in `G`, or not.
    Done(bool),
}

/// A rule of a node that found no support known to hold: the nodes of the node's own
/// component that may still support it (none: the node fails).
struct Pending {
    node: Node,
    supports: Vec<Node>,
}

/// A frame of the explicit search stack: a node and where its search stands.
struct Frame {
    node: Node,
    /// The rule being looked at, an index into `rules_of[P]`.
    rule: usize,
    /// The next body atom and column of that rule to look at.
    atom: usize,
    column: usize,
    /// The open supports the current rule has met so far.
    open: Vec<Node>,
    /// The length of the pending list when the node was opened: the entries from there
    /// on belong to its component when it turns out to be the root.
    pending_mark: usize,
}

/// The inclusions `(P, c, G)` (column `c` of every fact of `P` is a fact of the unary
/// `G`) that every rule justifies, decided on demand.
///
/// The answer is the greatest fixpoint of: `(P, c)` holds unless `P` may have facts of
/// its own, or some rule of `P` has no body atom with the head's `c`-th variable at a
/// column that holds (`G(V)` itself always holds). Induction on the height of
/// derivations makes what remains true of every fact the rules derive. A question is
/// answered by Tarjan's search (an explicit stack) over the nodes it reaches; a rule
/// stops at its first support known to hold, and each strongly connected component of
/// undecided nodes is decided by counting supports. Answers are kept per `G`, so each
/// node is searched at most once per guard asked about.
struct Inclusions<'a> {
    program: &'a Program,
    /// Whether a predicate may have facts the rules did not derive (so it implies nothing).
    own_facts: Vec<bool>,
    first_column: Vec<usize>,
    /// The well-formed rules of each predicate.
    rules_of: Vec<Vec<RuleId>>,
    /// Per unary `G`, what is decided so far.
    by_guard: FxHashMap<PredId, FxHashMap<Node, State>>,
}

impl<'a> Inclusions<'a> {
    fn new(program: &'a Program, fires: &[bool], db: &Database, rule_derived: bool) -> Self {
        let mut first_column = Vec::with_capacity(program.preds.len());
        let mut next = 0;
        for p in &program.preds {
            first_column.push(next);
            next += p.arity;
        }
        let mut rules_of = vec![Vec::new(); program.preds.len()];
        let mut derived = vec![false; program.preds.len()];
        for (id, rule) in program.rules.iter().enumerate() {
            derived[rule.head.pred.index()] = true;
            // A rule that never fires derives nothing to contradict an inclusion.
            if fires.get(id).copied().unwrap_or(false) {
                rules_of[rule.head.pred.index()].push(RuleId(id as u32));
            }
        }
        let own_facts = program.pred_ids().map(|p| !derived[p.index()] || !rule_derived && db.len(p) > 0).collect();
        Inclusions { program, own_facts, first_column, rules_of, by_guard: FxHashMap::default() }
    }

    fn node(&self, pred: PredId, column: usize) -> Node {
        self.first_column[pred.index()] + column
    }

    fn pred_of(&self, node: Node) -> (PredId, usize) {
        // Zero-arity predicates share their first column with the next predicate; the
        // last predicate starting at or before `node` is the one with a column there.
        let p = self.first_column.partition_point(|&first| first <= node) - 1;
        (PredId(p as u32), node - self.first_column[p])
    }

    /// Whether column `column` of every fact of `pred` is a fact of the unary `guard`.
    fn holds(&mut self, pred: PredId, column: usize, guard: PredId) -> bool {
        let start = self.node(pred, column);
        let mut states = self.by_guard.remove(&guard).unwrap_or_default();
        self.search(start, guard, &mut states);
        let answer = states.get(&start) == Some(&State::Done(true));
        self.by_guard.insert(guard, states);
        answer
    }

    /// Decides `start` and every node its search reaches.
    fn search(&self, start: Node, guard: PredId, states: &mut FxHashMap<Node, State>) {
        if states.contains_key(&start) {
            return;
        }
        let mut counter = 0;
        let mut frames: Vec<Frame> = Vec::new();
        let mut component: Vec<Node> = Vec::new();
        let mut pending: Vec<Pending> = Vec::new();
        self.open(start, guard, states, &mut frames, &mut component, pending.len(), &mut counter);
        while let Some(frame) = frames.last_mut() {
            let (pred, column) = self.pred_of(frame.node);
            let Some(&rule) = self.rules_of[pred.index()].get(frame.rule) else {
                // Every rule looked at: close the node, and its component if it is the root.
                let (node, mark) = (frame.node, frame.pending_mark);
                frames.pop();
                let State::Open { number, low } = states[&node] else { unreachable!("a framed node is open") };
                if let Some(parent) = frames.last() {
                    lower(states, parent.node, low);
                }
                if low == number {
                    let at = component.iter().rposition(|&n| n == node).expect("an open node is on the stack");
                    let members = component.split_off(at);
                    let entries = pending.split_off(mark);
                    resolve(&members, entries, states);
                }
                continue;
            };
            let rule = self.program.rule(rule);
            let var = rule.head.args.get(column).and_then(|t| t.var());
            // Look through the atoms holding the head variable for a support known to
            // hold, or one not searched yet (searched first, then looked at again).
            let mut satisfied = false;
            let mut unsearched = None;
            while let (Some(v), Some(atom)) = (var, rule.body.get(frame.atom)) {
                let Some(term) = atom.args.get(frame.column) else {
                    frame.atom += 1;
                    frame.column = 0;
                    continue;
                };
                let k = frame.column;
                if term.var() != Some(v) {
                    frame.column += 1;
                    continue;
                }
                if atom.pred == guard && atom.args.len() == 1 {
                    satisfied = true;
                    break;
                }
                let support = self.node(atom.pred, k);
                match states.get(&support) {
                    Some(State::Done(true)) => {
                        satisfied = true;
                        break;
                    }
                    Some(State::Done(false)) => {}
                    Some(&State::Open { number, .. }) => {
                        frame.open.push(support);
                        let node = frame.node;
                        lower(states, node, number);
                    }
                    None => {
                        unsearched = Some(support);
                        break;
                    }
                }
                frame.column += 1;
            }
            if let Some(support) = unsearched {
                let mark = pending.len();
                self.open(support, guard, states, &mut frames, &mut component, mark, &mut counter);
                continue;
            }
            let node = frame.node;
            let open = std::mem::take(&mut frame.open);
            if !satisfied {
                pending.push(Pending { node, supports: open });
            }
            frame.rule += 1;
            frame.atom = 0;
            frame.column = 0;
        }
    }

    /// Starts the search of `node`: decided at once when it cannot hold, else framed.
    #[allow(clippy::too_many_arguments)]
    fn open(
        &self,
        node: Node,
        guard: PredId,
        states: &mut FxHashMap<Node, State>,
        frames: &mut Vec<Frame>,
        component: &mut Vec<Node>,
        pending_mark: usize,
        counter: &mut usize,
    ) {
        let (pred, _) = self.pred_of(node);
        if pred == guard || self.own_facts[pred.index()] {
            states.insert(node, State::Done(false));
            return;
        }
        states.insert(node, State::Open { number: *counter, low: *counter });
        *counter += 1;
        component.push(node);
        frames.push(Frame { node, rule: 0, atom: 0, column: 0, open: Vec::new(), pending_mark });
    }
}

/// Lowers the lowest number `node` reaches to `to`, if smaller.
fn lower(states: &mut FxHashMap<Node, State>, node: Node, to: usize) {
    if let Some(State::Open { low, .. }) = states.get_mut(&node) {
        *low = (*low).min(to);
    }
}

/// Decides a finished component: the greatest set of its members in which every pending
/// rule keeps a support that holds. `entries` are the pending rules of its members.
fn resolve(members: &[Node], entries: Vec<Pending>, states: &mut FxHashMap<Node, State>) {
    for &m in members {
        states.insert(m, State::Done(true));
    }
    let mut supported_by: FxHashMap<Node, Vec<usize>> = FxHashMap::default();
    let mut count: Vec<usize> = Vec::with_capacity(entries.len());
    let mut failing: Vec<Node> = Vec::new();
    for (e, entry) in entries.iter().enumerate() {
        count.push(entry.supports.len());
        for &s in &entry.supports {
            supported_by.entry(s).or_default().push(e);
        }
        if entry.supports.is_empty() {
            failing.push(entry.node);
        }
    }
    while let Some(node) = failing.pop() {
        if states.insert(node, State::Done(false)) == Some(State::Done(false)) {
            continue;
        }
        for &e in supported_by.get(&node).map_or(&[][..], Vec::as_slice) {
            count[e] -= 1;
            if count[e] == 0 {
                failing.push(entries[e].node);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plan::testing::program;
    use proptest::prelude::*;

    #[test]
    fn demand_guards_implied_by_answers_are_dropped() {
        let p = program(
            "M(a) <-\nQ(X,Y) <- M(X), E(X,Y)\nM(Y) <- M(X), Q(X,Y)\nQ(X,Z) <- M(X), Q(X,Y), Q(Y,Z)\nS(X,Z) <- M(X), E(X,Y), Q(Y,Z)",
        );
        let db = Database::new(&p);
        let reduced = reduce(&p, &[true; 5], &db, false).expect("guards are implied");
        let body = |r: usize| reduced.rules[r].body.iter().map(|a| reduced.pred_name(a.pred)).collect::<Vec<_>>();
        assert_eq!(body(1), ["M", "E"], "an edge does not imply the demand");
        assert_eq!(body(2), ["Q"]);
        assert_eq!(body(3), ["Q", "Q"]);
        assert_eq!(body(4), ["M", "E", "Q"], "Q(Y,Z) puts Y in M, not X");
    }

    #[test]
    fn a_derived_relation_with_facts_of_its_own_implies_nothing() {
        let p = program("Q(X,Y) <- M(X), E(X,Y)\nR(X) <- M(X), Q(X,Y)");
        let mut db = Database::new(&p);
        assert!(reduce(&p, &[true; 2], &db, false).is_some());
        db.insert(p.lookup_source("Q").unwrap(), &[1, 2]);
        assert!(reduce(&p, &[true; 2], &db, false).is_none());
        // Unless the facts are known to come from the rules.
        assert!(reduce(&p, &[true; 2], &db, true).is_some());
    }

    /// The definition itself, computed the slow way: assume every candidate, drop those
    /// some rule fails, until none fails.
    fn greatest_fixpoint(program: &Program) -> Vec<(PredId, usize, PredId)> {
        let unary: Vec<PredId> = program.pred_ids().filter(|&p| program.pred(p).arity == 1).collect();
        let mut set = Vec::new();
        for p in program.pred_ids().filter(|&p| program.rules.iter().any(|r| r.head.pred == p)) {
            for c in 0..program.pred(p).arity {
                set.extend(unary.iter().filter(|&&g| g != p).map(|&g| (p, c, g)));
            }
        }
        loop {
            let current = set.clone();
            set.retain(|&(p, c, g)| {
                program.rules.iter().filter(|r| r.head.pred == p).all(|rule| {
                    let Some(v) = rule.head.args[c].var() else { return false };
                    rule.body.iter().any(|atom| {
                        atom.args.iter().enumerate().any(|(k, t)| {
                            t.var() == Some(v)
                                && (atom.pred == g && atom.args.len() == 1 || current.contains(&(atom.pred, k, g)))
                        })
                    })
                })
            });
            if set.len() == current.len() {
                return set;
            }
        }
    }

    /// A random program over unary `U0..U2` and binary `B0..B2` (`E` is input) whose
    /// rules copy head variables from their bodies in every way, recursion included.
    fn random_program() -> impl Strategy<Value = String> {
        let atom = (0..7usize, 0..3usize, 0..3usize).prop_map(|(p, x, y)| {
            let var = |i: usize| ["X", "Y", "Z"][i];
            match p {
                0..=2 => format!("U{p}({})", var(x)),
                3..=5 => format!("B{}({},{})", p - 3, var(x), var(y)),
                _ => format!("E({},{})", var(x), var(y)),
            }
        });
        let rule =
            (0..6usize, 0..3usize, 0..3usize, proptest::collection::vec(atom, 1..4)).prop_map(|(h, x, y, body)| {
                let var = |i: usize| ["X", "Y", "Z"][i];
                let head =
                    if h < 3 { format!("U{h}({})", var(x)) } else { format!("B{}({},{})", h - 3, var(x), var(y)) };
                // Every variable is bound: `E(X,Y), E(Y,Z)` closes the body.
                format!("{head} <- {}, E(X,Y), E(Y,Z)", body.join(", "))
            });
        proptest::collection::vec(rule, 1..9).prop_map(|rules| rules.join("\n"))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn inclusions_are_the_greatest_fixpoint(src in random_program()) {
            let p = program(&src);
            let expected = greatest_fixpoint(&p);
            let db = Database::new(&p);
            let mut inclusions = Inclusions::new(&p, &vec![true; p.rules.len()], &db, false);
            let unary: Vec<PredId> = p.pred_ids().filter(|&q| p.pred(q).arity == 1).collect();
            for q in p.pred_ids() {
                for c in 0..p.pred(q).arity {
                    for &g in &unary {
                        prop_assert_eq!(inclusions.holds(q, c, g), expected.contains(&(q, c, g)), "({}, {}, {})", p.pred_name(q), c, p.pred_name(g));
                    }
                }
            }
        }
    }

    #[test]
    fn a_long_chain_of_inclusions_is_decided_without_recursion() {
        // `@a:p_i(X,Y) <- @m:p_i(X), @a:p_{i-1}(X,Z), e(Z,Y)` style: every answer column lies
        // under its demand, over 20,000 predicates, checked on a small stack.
        let n = 20_000;
        let mut src = String::from("A0(X,Y) <- M0(X), E(X,Y)\nM0(X) <- S(X)\n");
        for i in 1..n {
            src.push_str(&format!("A{i}(X,Y) <- A{}(X,Z), E(Z,Y)\nM{i}(X) <- M{}(X)\n", i - 1, i - 1));
        }
        let p = program(&src);
        let last = p.lookup_source(&format!("A{}", n - 1)).unwrap();
        let guard = p.lookup_source(&format!("M{}", n / 2)).unwrap();
        let first_guard = p.lookup_source("M0").unwrap();
        let holds = std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(move || {
                let db = Database::new(&p);
                let mut inclusions = Inclusions::new(&p, &vec![true; p.rules.len()], &db, false);
                (
                    inclusions.holds(last, 0, first_guard),
                    inclusions.holds(last, 0, guard),
                    inclusions.holds(last, 1, first_guard),
                )
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(holds, (true, false, false));
    }
}
