//! How a dominance rule is evaluated: given one of the two facts it compares, a join of
//! the other fact's atom with the body's atoms, in an order fixed once per rule and side
//! ([`DominancePlan`]), over whatever holds the facts ([`DominanceFacts`]).

use crate::{Atom, CmpOp, Dominance, PredId, Symbol, Term, TermKind, ValueStore};

/// Which of the two facts of a dominance rule a search starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Known {
    /// The dominated fact: the search finds the facts that dominate it.
    Dominated,
    /// The dominating fact: the search finds the facts it dominates.
    Dominating,
}

/// The facts a dominance rule reads.
pub trait DominanceFacts {
    /// Calls `f` with each fact of `pred` whose column `c` holds `pattern[c]` wherever
    /// that is set (an id the caller gives the fact, and its values), until `f` returns
    /// true; returns whether it did.
    fn each(&self, pred: PredId, pattern: &[Option<u32>], f: &mut dyn FnMut(u32, &[u32]) -> bool) -> bool;
}

/// A positive atom of a search: the other fact's atom or a body atom, with the columns
/// the atoms before it fix (a constant, or a variable bound before), by which a caller
/// indexes its relation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DominanceStep {
    /// `None` for the other fact's atom, `Some(i)` for the body's `i`-th atom.
    pub body: Option<usize>,
    pub key: Vec<usize>,
    /// The comparisons to test or assign once the atom is matched, in order.
    checks: Vec<Check>,
}

/// What a comparison does at its place in a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Check {
    /// Both operands are bound: the comparison must hold.
    Test(usize),
    /// An equality whose one side is a lone unbound variable (the flag: the left
    /// one) binds it to the other side's value.
    Assign(usize, bool),
}

/// The order in which a search from one side of a dominance rule reads its atoms: the
/// atom with the most columns fixed next, a body atom before the other fact's (a body
/// atom that relates the two facts, `better(d2, d1)`, then leads to the few facts it
/// names rather than to every fact of the group), then the negated atoms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DominancePlan {
    pub known: Known,
    /// The comparisons to apply once the known fact is matched.
    first: Vec<Check>,
    pub steps: Vec<DominanceStep>,
    /// Each negated atom's columns that are fixed when it is tested, after every step.
    pub negated: Vec<Vec<usize>>,
}

/// The columns of `atom` whose value is fixed once the variables of `bound` are.
fn fixed(atom: &Atom, bound: &[Symbol]) -> Vec<usize> {
    let mut key = Vec::new();
    for (column, term) in atom.args.iter().enumerate() {
        let fixed = match term.kind {
            TermKind::Const(_) => true,
            // A variable repeated in the atom is keyed at its first place.
            TermKind::Var(v) => bound.contains(&v) && !atom.args[..column].iter().any(|t| t.var() == Some(v)),
        };
        if fixed {
            key.push(column);
        }
    }
    key
}

impl Dominance {
    /// The atom of the fact a search from `known` starts from, and of the other.
    fn atoms(&self, known: Known) -> (&Atom, &Atom) {
        match known {
            Known::Dominated => (&self.dominated, &self.dominating),
            Known::Dominating => (&self.dominating, &self.dominated),
        }
    }

    /// The order of a search from `known`.
    pub fn plan(&self, known: Known) -> DominancePlan {
        let (start, _) = self.atoms(known);
        let mut bound: Vec<Symbol> = Vec::new();
        let mut placed = vec![false; self.comparisons.len()];
        let bind = |atom: &Atom, bound: &mut Vec<Symbol>| {
            for v in atom.args.iter().filter_map(Term::var) {
                if !bound.contains(&v) {
                    bound.push(v);
                }
            }
        };
        bind(start, &mut bound);
        let first = self.place_checks(&mut bound, &mut placed);
        let mut left: Vec<Option<usize>> = (0..self.body.len()).map(Some).chain([None]).collect();
        let mut steps = Vec::new();
        while !left.is_empty() {
            // The most columns fixed; among equals the first of `left`, a body atom.
            let (at, key) = left
                .iter()
                .enumerate()
                .map(|(at, &which)| (at, fixed(self.step_atom(known, which), &bound)))
                .fold(None::<(usize, Vec<usize>)>, |best, (at, key)| match best {
                    Some((_, ref k)) if k.len() >= key.len() => best,
                    _ => Some((at, key)),
                })
                .expect("an atom is left");
            let which = left.remove(at);
            bind(self.step_atom(known, which), &mut bound);
            let checks = self.place_checks(&mut bound, &mut placed);
            steps.push(DominanceStep { body: which, key, checks });
        }
        // A comparison with a variable nothing binds never holds (validation refuses
        // one); tested last, it fails the search.
        if let Some(last) = steps.last_mut() {
            last.checks.extend(placed.iter().enumerate().filter(|(_, &p)| !p).map(|(i, _)| Check::Test(i)));
        }
        let negated = self.negated.iter().map(|atom| fixed(atom, &bound)).collect();
        DominancePlan { known, first, steps, negated }
    }

    /// The atom of a step: the other fact's (`None`) or the body's `i`-th.
    fn step_atom(&self, known: Known, which: Option<usize>) -> &Atom {
        match which {
            Some(i) => &self.body[i],
            None => self.atoms(known).1,
        }
    }

    /// The comparisons not yet placed that the variables of `bound` allow, each a test
    /// or an assignment (which binds its variable), until no more can be placed.
    fn place_checks(&self, bound: &mut Vec<Symbol>, placed: &mut [bool]) -> Vec<Check> {
        let mut checks = Vec::new();
        loop {
            let before = checks.len();
            for (i, c) in self.comparisons.iter().enumerate() {
                if placed[i] {
                    continue;
                }
                if c.vars().all(|v| bound.contains(&v)) {
                    placed[i] = true;
                    checks.push(Check::Test(i));
                    continue;
                }
                if c.op != CmpOp::Eq {
                    continue;
                }
                for (left, (target, source)) in [(true, (&c.left, &c.right)), (false, (&c.right, &c.left))] {
                    let Some(v) = target.var() else { continue };
                    if !bound.contains(&v) && source.vars().all(|s| bound.contains(&s)) {
                        placed[i] = true;
                        bound.push(v);
                        checks.push(Check::Assign(i, left));
                        break;
                    }
                }
            }
            if checks.len() == before {
                return checks;
            }
        }
    }

    /// Searches for the facts that `fact` (which the `plan.known` atom reads) dominates
    /// or is dominated by: calls `found` with the id and values of each other fact of
    /// the relation, different from `fact`, for which the body holds, until it returns
    /// true (once per way the body holds); returns whether it did.
    pub fn search(
        &self,
        plan: &DominancePlan,
        fact: &[u32],
        values: &ValueStore,
        facts: &dyn DominanceFacts,
        found: &mut dyn FnMut(u32, &[u32]) -> bool,
    ) -> bool {
        let (start, _) = self.atoms(plan.known);
        let mut bound: Vec<(Symbol, u32)> = Vec::with_capacity(2 * fact.len());
        if !matches(start, fact, &mut bound) || !self.apply(&plan.first, values, &mut bound) {
            return false;
        }
        let mut search = Search { rule: self, plan, fact, values, facts, found };
        search.step(0, &mut bound, None)
    }

    /// Applies `checks` to `bound`: false when a test fails or an assignment has no value.
    fn apply(&self, checks: &[Check], values: &ValueStore, bound: &mut Vec<(Symbol, u32)>) -> bool {
        for &check in checks {
            let value = |e: &crate::Expr, bound: &[(Symbol, u32)]| {
                e.eval(values, |t: &Term| match t.kind {
                    TermKind::Const(c) => c.raw(),
                    TermKind::Var(v) => lookup(bound, v).unwrap_or(0),
                })
            };
            match check {
                Check::Test(i) => {
                    let c = &self.comparisons[i];
                    let unbound = c.vars().any(|v| lookup(bound, v).is_none());
                    let holds = match (value(&c.left, bound), value(&c.right, bound)) {
                        (Some(l), Some(r)) => c.op.holds_for(l, r, c.domain, Some(values)),
                        _ => false,
                    };
                    if unbound || !holds {
                        return false;
                    }
                }
                Check::Assign(i, left) => {
                    let c = &self.comparisons[i];
                    let (target, source) = if left { (&c.left, &c.right) } else { (&c.right, &c.left) };
                    let (Some(v), Some(value)) = (target.var(), value(source, bound)) else { return false };
                    bound.push((v, value));
                }
            }
        }
        true
    }
}

/// The value `bound` gives `v`.
fn lookup(bound: &[(Symbol, u32)], v: Symbol) -> Option<u32> {
    bound.iter().find(|(w, _)| *w == v).map(|&(_, value)| value)
}

/// Matches `fact` against `atom`, binding its unbound variables: false when a constant
/// or a bound variable differs.
fn matches(atom: &Atom, fact: &[u32], bound: &mut Vec<(Symbol, u32)>) -> bool {
    if atom.args.len() != fact.len() {
        return false;
    }
    for (term, &value) in atom.args.iter().zip(fact) {
        let same = match term.kind {
            TermKind::Const(c) => c.raw() == value,
            TermKind::Var(v) => match lookup(bound, v) {
                Some(seen) => seen == value,
                None => {
                    bound.push((v, value));
                    true
                }
            },
        };
        if !same {
            return false;
        }
    }
    true
}

/// The pattern of `atom` under `bound` at its `key` columns.
fn pattern(atom: &Atom, key: &[usize], bound: &[(Symbol, u32)]) -> Vec<Option<u32>> {
    let mut pattern = vec![None; atom.args.len()];
    for &column in key {
        pattern[column] = match atom.args[column].kind {
            TermKind::Const(c) => Some(c.raw()),
            TermKind::Var(v) => lookup(bound, v),
        };
    }
    pattern
}

/// One search of [`Dominance::search`].
struct Search<'a> {
    rule: &'a Dominance,
    plan: &'a DominancePlan,
    fact: &'a [u32],
    values: &'a ValueStore,
    facts: &'a dyn DominanceFacts,
    found: &'a mut dyn FnMut(u32, &[u32]) -> bool,
}

impl Search<'_> {
    /// Matches the steps from `depth` on; `other` is the other fact once matched.
    fn step(&mut self, depth: usize, bound: &mut Vec<(Symbol, u32)>, other: Option<(u32, &[u32])>) -> bool {
        let (rule, plan) = (self.rule, self.plan);
        let Some(step) = plan.steps.get(depth) else {
            return self.negations_hold(bound) && other.is_some_and(|(id, row)| (self.found)(id, row));
        };
        let atom = rule.step_atom(plan.known, step.body);
        let pattern = pattern(atom, &step.key, bound);
        let facts = self.facts;
        facts.each(atom.pred, &pattern, &mut |id, row| {
            if step.body.is_none() && row == self.fact {
                return false;
            }
            let mark = bound.len();
            let stop = matches(atom, row, bound)
                && rule.apply(&step.checks, self.values, bound)
                && self.step(depth + 1, bound, if step.body.is_none() { Some((id, row)) } else { other });
            bound.truncate(mark);
            stop
        })
    }

    /// Whether no fact matches any negated atom of the rule under `bound`.
    fn negations_hold(&self, bound: &[(Symbol, u32)]) -> bool {
        self.rule.negated.iter().zip(&self.plan.negated).all(|(atom, key)| {
            let pattern = pattern(atom, key, bound);
            !self.facts.each(atom.pred, &pattern, &mut |_, row| {
                let mut scratch = bound.to_vec();
                matches(atom, row, &mut scratch)
            })
        })
    }
}
