//! Join orders chosen from the data: the rederivation plans of DRed read a candidate fact
//! first, and which body atom to probe next depends on how many rows a probe returns,
//! which the relation sizes alone do not tell.

use crate::database::Database;
use crate::relation::hash_values;
use ir::{Program, Rule, RuleId, Symbol, TermKind};
use plan::AtomSource;
use rustc_hash::FxHashMap;

/// Rows sampled to estimate a fan-out.
const SAMPLE: u32 = 4096;

/// The average number of rows sharing the values of `cols` with a row of `pred`: the
/// length of the chain a probe on those columns walks, weighted as the data is
/// (`Σ g² / N` over groups of size `g`). Estimated from an evenly spread sample of rows
/// by counting the sampled pairs that share a key: a pair of rows shares one with
/// probability `Σ g(g - 1) / N(N - 1)`. (Rows per distinct sampled key would be far off:
/// a sample of a few thousand rows of a closure with millions sees each group a few
/// times and makes it look no larger than the edge relation's.) All rows for no columns.
pub(crate) fn fanout(db: &Database, pred: ir::PredId, cols: &[usize]) -> f64 {
    let rows = db.rel(pred);
    if cols.is_empty() || rows.len() == 0 {
        return rows.len() as f64;
    }
    let step = (rows.end() / SAMPLE).max(1);
    let mut keys: FxHashMap<u64, u64> =
        FxHashMap::with_capacity_and_hasher(rows.len().min(SAMPLE as usize), Default::default());
    let mut sampled = 0u64;
    for r in (0..rows.end()).step_by(step as usize).filter(|&r| rows.is_alive(r)) {
        let row = rows.row(r);
        *keys.entry(hash_values(cols.iter().map(|&c| row[c]))).or_default() += 1;
        sampled += 1;
    }
    // A sample may miss every live row of a relation full of tombstones.
    if sampled < 2 {
        return 1.0;
    }
    let sharing: u64 = keys.values().map(|&g| g * (g - 1) / 2).sum();
    let pairs = sampled * (sampled - 1) / 2;
    1.0 + sharing as f64 / pairs as f64 * (rows.len() as f64 - 1.0)
}

/// The order of a rederivation plan: the head (the candidate) first, then the body in
/// the order of [`data_order`].
pub(crate) fn guarded_order(program: &Program, rule: RuleId, db: &Database) -> Vec<AtomSource> {
    let rule = program.rule(rule);
    let mut order = vec![AtomSource::Head];
    order.extend(data_order(rule, rule.head.vars(), (0..rule.body.len()).collect(), db, false));
    order
}

/// The order of a rederivation plan for a batch of few candidates: like
/// [`guarded_order`], but an atom whose probe has an index already comes before one
/// whose index the plan would have to build. The selective order may probe an index
/// the evaluation never read (the edges by their target), whose first build costs as
/// much as recomputing; a handful of candidates are rederived sooner along the indexes
/// that exist.
pub(crate) fn guarded_order_on_built(program: &Program, rule: RuleId, db: &Database) -> Vec<AtomSource> {
    let rule = program.rule(rule);
    let mut order = vec![AtomSource::Head];
    order.extend(data_order(rule, rule.head.vars(), (0..rule.body.len()).collect(), db, true));
    order
}

/// The rows a rederivation plan of `order` visits per candidate, estimated from the
/// fan-outs of its probes: the sum over its steps of the product of the fan-outs so far.
pub(crate) fn probe_cost(program: &Program, rule: RuleId, order: &[AtomSource], db: &Database) -> f64 {
    let rule = program.rule(rule);
    let mut bound = rule.head.vars();
    let (mut rows, mut cost) = (1.0, 0.0);
    for source in order {
        let AtomSource::Body(i) = *source else { continue };
        let atom = &rule.body[i];
        let cols: Vec<usize> = (0..atom.args.len()).filter(|&c| is_bound(&atom.args[c], &bound)).collect();
        if cols.len() < atom.args.len() {
            rows *= fanout(db, atom.pred, &cols);
        }
        cost += rows;
        bound.extend(atom.vars());
    }
    cost
}

fn is_bound(term: &ir::Term, bound: &[Symbol]) -> bool {
    match term.kind {
        TermKind::Const(_) => true,
        TermKind::Var(v) => bound.contains(&v),
    }
}

/// The order of a semi-naive join reading body atom `position` first (the delta), then
/// the rest in the order of [`data_order`].
pub(crate) fn delta_order(rule: &Rule, position: usize, db: &Database) -> Vec<AtomSource> {
    let mut order = vec![AtomSource::Body(position)];
    let rest = (0..rule.body.len()).filter(|&i| i != position).collect();
    order.extend(data_order(rule, rule.body[position].vars(), rest, db, false));
    order
}

/// Orders the body atoms `rest` given the variables `bound`: repeatedly the atom sharing
/// a variable with what is bound or fully bound (no cross product while a join is
/// possible), preferring one that is then fully bound (a membership test), then the one
/// whose probe returns the fewest rows, then the leftmost. With `prefer_built`, an atom
/// probed through an index that lacks more rows than a sample (which cost nothing to add)
/// comes after every other connected one.
fn data_order(
    rule: &Rule,
    mut bound: Vec<Symbol>,
    mut rest: Vec<usize>,
    db: &Database,
    prefer_built: bool,
) -> Vec<AtomSource> {
    let mut order = Vec::with_capacity(rest.len());
    while !rest.is_empty() {
        // The last atom has no rival: sampling its fan-out would choose nothing.
        if let [last] = rest[..] {
            order.push(AtomSource::Body(last));
            break;
        }
        let rank = |&i: &usize| {
            let atom = &rule.body[i];
            let cols: Vec<usize> = (0..atom.args.len()).filter(|&c| is_bound(&atom.args[c], &bound)).collect();
            let all_bound = cols.len() == atom.args.len();
            let connected = all_bound || atom.args.iter().any(|t| t.var().is_some_and(|v| bound.contains(&v)));
            let cost = if all_bound { 0.0 } else { fanout(db, atom.pred, &cols) };
            let unbuilt =
                prefer_built && !all_bound && !cols.is_empty() && db.rel(atom.pred).unindexed_by(&cols) > SAMPLE;
            (!connected, unbuilt, !all_bound, cost, i)
        };
        let ranks: Vec<_> = rest.iter().map(rank).collect();
        let pick = (0..rest.len())
            .min_by(|&a, &b| ranks[a].partial_cmp(&ranks[b]).unwrap_or(std::cmp::Ordering::Equal))
            .unwrap_or(0);
        let i = rest.remove(pick);
        for v in rule.body[i].vars() {
            if !bound.contains(&v) {
                bound.push(v);
            }
        }
        order.push(AtomSource::Body(i));
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use plan::testing::program;

    /// A point-query closure keeps one first value: probing it by that value returns
    /// everything, probing the edges by their target returns one row.
    #[test]
    fn rederivation_probes_the_selective_atom_first() {
        let p = program("R(X,Z) <- M(X), R(X,Y), E(Y,Z)");
        let (m, r, e) = (p.lookup_source("M").unwrap(), p.lookup_source("R").unwrap(), p.lookup_source("E").unwrap());
        let mut db = Database::new(&p);
        db.insert(m, &[0]);
        for v in 1..100 {
            db.insert(e, &[v - 1, v]);
            db.insert(r, &[0, v]);
        }
        assert!(fanout(&db, r, &[0]) > 50.0);
        assert_eq!(fanout(&db, e, &[1]), 1.0);
        let order = guarded_order(&p, RuleId(0), &db);
        assert_eq!(order, [AtomSource::Head, AtomSource::Body(0), AtomSource::Body(2), AtomSource::Body(1)]);
    }
}
