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
use ir::{PredId, Program, TermKind};

/// `(P, c, G)`: column `c` of every fact of `P` is a fact of the unary `G`.
type Inclusion = (PredId, usize, PredId);

/// The program with the implied guards removed from the rule bodies (rule ids and
/// everything else unchanged), or `None` when there are none. `db` holds the facts the
/// evaluation starts from: a derived relation that already has facts there is assumed
/// to satisfy nothing — unless `rule_derived` says that every derived fact in it came
/// from these rules (it is their fixpoint, evaluated from no derived facts).
pub(crate) fn reduce(program: &Program, well_formed: &[bool], db: &Database, rule_derived: bool) -> Option<Program> {
    let inclusions = inclusions(program, well_formed, db, rule_derived);
    if inclusions.is_empty() {
        return None;
    }
    let mut reduced = program.clone();
    let mut changed = false;
    for (id, rule) in reduced.rules.iter_mut().enumerate() {
        if !well_formed.get(id).copied().unwrap_or(false) {
            continue;
        }
        let body = &rule.body;
        let implied: Vec<bool> = body.iter().map(|atom| implied_guard(atom, body, &inclusions)).collect();
        if implied.iter().any(|&i| i) {
            let kept = body.iter().zip(&implied).filter(|(_, &i)| !i).map(|(a, _)| a.clone()).collect();
            rule.body = kept;
            changed = true;
        }
    }
    changed.then_some(reduced)
}

/// Whether `atom` is `G(X)` and another atom of `body`, of arity two or more (so never
/// dropped itself), has `X` at a column included in `G`.
fn implied_guard(atom: &ir::Atom, body: &[ir::Atom], inclusions: &[Inclusion]) -> bool {
    let [arg] = atom.args.as_slice() else { return false };
    let TermKind::Var(x) = arg.kind else { return false };
    body.iter().filter(|other| other.args.len() >= 2).any(|other| {
        other
            .args
            .iter()
            .enumerate()
            .any(|(c, t)| t.var() == Some(x) && inclusions.contains(&(other.pred, c, atom.pred)))
    })
}

/// The greatest set of inclusions that every rule justifies: assume all candidates, then
/// drop those some rule fails, until none fails. Induction on the height of derivations
/// makes what remains true of every fact the rules derive.
fn inclusions(program: &Program, well_formed: &[bool], db: &Database, rule_derived: bool) -> Vec<Inclusion> {
    let unary: Vec<PredId> = program.pred_ids().filter(|&p| program.pred(p).arity == 1).collect();
    let heads: Vec<PredId> = {
        let mut heads: Vec<PredId> = program.rules.iter().map(|r| r.head.pred).collect();
        heads.sort_unstable();
        heads.dedup();
        heads
    };
    let mut set: Vec<Inclusion> = Vec::new();
    for &p in heads.iter().filter(|&&p| rule_derived || db.len(p) == 0) {
        for c in 0..program.pred(p).arity {
            set.extend(unary.iter().filter(|&&g| g != p).map(|&g| (p, c, g)));
        }
    }
    loop {
        let before = set.len();
        let current = set.clone();
        set.retain(|&(p, c, g)| {
            program.rules.iter().enumerate().filter(|(_, r)| r.head.pred == p).all(|(id, rule)| {
                // A rule that never fires derives nothing to contradict the inclusion.
                if !well_formed.get(id).copied().unwrap_or(false) {
                    return true;
                }
                let Some(TermKind::Var(v)) = rule.head.args.get(c).map(|t| t.kind) else { return false };
                rule.body.iter().any(|atom| {
                    atom.args.iter().enumerate().any(|(k, t)| {
                        t.var() == Some(v)
                            && (atom.pred == g && atom.args.len() == 1 || current.contains(&(atom.pred, k, g)))
                    })
                })
            })
        });
        if set.len() == before {
            return set;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plan::testing::program;

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
}
