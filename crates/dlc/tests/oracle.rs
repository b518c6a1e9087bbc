//! A second, independent oracle: a textbook evaluator written against the IR alone (no
//! plans, no indexes, nothing of `exec`), and property tests holding every engine, the
//! magic rewrite and both maintenance strategies to it.
//!
//! The other property tests compare the engines with the reference engine, which shares
//! the planner, the join loop and the tuple sets with the others: a bug in those would
//! agree with itself. Here a rule is applied as a textbook writes it — substitutions
//! extended atom by atom over whole relations, held as sets of tuples — and the rules are
//! applied to everything derived so far until nothing changes.
//!
//! Programs with stratified negation, comparisons and arithmetic (its own evaluator,
//! [`arithmetic`], not `ir`'s) are evaluated stratum by stratum,
//! with strata the oracle computes itself: a predicate's level is at least that of each
//! predicate it reads, and above that of each one it reads negatively.
//!
//! The differential engine (`flow`) is held to the same oracle, from scratch and after
//! update batches, with one and two workers, on positive and on stratified programs, with
//! and without arithmetic, and on the aggregate cases.
//!
//! Subsumption is defined here first: after every round of its level, a relation with
//! dominance rules loses, all at once, each fact that another of its facts dominates
//! ([`dominate`]; a rule's body, atoms and negations included, is a rule body over the
//! relations as the round left them, whose relations are on the dominated relation's
//! level or below, below for a negation), and a level ends when a round leaves every
//! relation as it was. A
//! relation that reads a dominated one from outside is on a higher level, as for a
//! negation. The engines apply dominance round by round too (semi-naively, to each
//! round's new facts); on programs whose rules are monotone in the dominated column
//! (shortest distances) both reach the same relations, which the property tests check.
//! A recursive `min` or `max` is lowered to such a dominance (its relation keeps the best
//! value of each group), so this naive iteration of the lattice is its definition too.
//!
//! Programs with aggregates, `mean` and `range` are held instead to a direct computation of
//! their definition from the input ([`DefinedCase`]): lowering rewrites those constructs
//! into rules, which the textbook evaluator would only repeat.
//!
//! Case counts are modest for CI; `PROPTEST_CASES=5000 cargo test --test oracle` runs more.

mod generate;

use exec::{Database, EvalOptions, Explainer, Leaf, Maintained, Maintenance, NativeEngine, Step, Threads};
use generate::Arg;
use ir::{CmpOp, Comparison, FileId, PredId, Program, Rule, Symbol, Term, TermKind, Update};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// Every relation of a program: tuples of constant ids (`ir::Const.0`) per predicate.
type Relations = BTreeMap<PredId, BTreeSet<Vec<u32>>>;

/// A substitution: the value of each variable bound so far.
type Substitution = BTreeMap<Symbol, u32>;

/// The value of `term` under `subst`, if it has one.
fn value(term: &Term, subst: &Substitution) -> Option<u32> {
    match term.kind {
        TermKind::Const(c) => Some(c.raw()),
        TermKind::Var(v) => subst.get(&v).copied(),
    }
}

/// `subst` extended so that the atom's `args` match `tuple`, or `None` when a constant or
/// an already bound variable (repeated ones included) disagrees.
fn extend(subst: &Substitution, args: &[Term], tuple: &[u32]) -> Option<Substitution> {
    if args.len() != tuple.len() {
        return None;
    }
    let mut out = subst.clone();
    for (term, &v) in args.iter().zip(tuple) {
        match term.kind {
            TermKind::Const(c) if c.raw() != v => return None,
            TermKind::Const(_) => {}
            TermKind::Var(x) => match out.get(&x) {
                Some(&bound) if bound != v => return None,
                Some(_) => {}
                None => {
                    out.insert(x, v);
                }
            },
        }
    }
    Some(out)
}

/// The least model of `program` over the input facts `edb`, one level after another:
/// within a level, rules are applied to all facts known so far, all at once, until a
/// round adds nothing.
fn oracle(program: &Program, edb: &BTreeSet<(PredId, Vec<u32>)>) -> Relations {
    let mut known: Relations = program.pred_ids().map(|p| (p, BTreeSet::new())).collect();
    for (pred, tuple) in edb {
        known.entry(*pred).or_default().insert(tuple.clone());
    }
    let levels = levels(program);
    let top = levels.values().copied().max().unwrap_or(0);
    for level in 0..=top {
        let rules: Vec<&Rule> = program.rules.iter().filter(|r| levels[&r.head.pred] == level).collect();
        let mut dominated: Vec<PredId> =
            program.dominances.iter().map(|d| d.dominated.pred).filter(|p| levels[p] == level).collect();
        dominated.sort_unstable();
        dominated.dedup();
        loop {
            let before = (!dominated.is_empty()).then(|| known.clone());
            let mut derived: Vec<(PredId, Vec<u32>)> = Vec::new();
            for rule in &rules {
                for s in &matches(program, rule, &known) {
                    let head: Option<Vec<u32>> = rule.head.args.iter().map(|t| value(t, s)).collect();
                    derived.push((rule.head.pred, head.expect("generated rules are safe")));
                }
            }
            let mut changed = false;
            for (pred, tuple) in derived {
                changed |= known.get_mut(&pred).expect("every predicate has a relation").insert(tuple);
            }
            for &pred in &dominated {
                dominate(program, pred, &mut known);
            }
            if let Some(before) = before {
                changed = known != before;
            }
            if !changed {
                break;
            }
        }
    }
    known
}

/// Removes from `pred` every fact that another of its facts dominates by a dominance
/// rule of the program, all at once, the rules' bodies read in `known` as it is.
fn dominate(program: &Program, pred: PredId, known: &mut Relations) {
    let rules: Vec<&ir::Dominance> = program.dominances.iter().filter(|d| d.dominated.pred == pred).collect();
    let tuples = &known[&pred];
    let gone: Vec<Vec<u32>> = tuples
        .iter()
        .filter(|t| tuples.iter().any(|u| u != *t && rules.iter().any(|d| dominates(program, d, t, u, known))))
        .cloned()
        .collect();
    let relation = known.get_mut(&pred).expect("every predicate has a relation");
    for t in gone {
        relation.remove(&t);
    }
}

/// Whether fact `u` dominates fact `t` by `rule`: `t` matches its dominated atom and `u`
/// its dominating one under one substitution, which the rule's body, as a rule body
/// over `known`, extends at least once.
fn dominates(program: &Program, rule: &ir::Dominance, t: &[u32], u: &[u32], known: &Relations) -> bool {
    let Some(s) = extend(&Substitution::new(), &rule.dominated.args, t) else { return false };
    let Some(s) = extend(&s, &rule.dominating.args, u) else { return false };
    let body = Rule {
        body: rule.body.clone(),
        negated: rule.negated.clone(),
        comparisons: rule.comparisons.clone(),
        ..Rule::positive(rule.dominated.clone(), Vec::new(), rule.span, ir::Origin::Source)
    };
    !matches_from(program, &body, known, s).is_empty()
}

/// Each predicate's level: the least numbers with a head at least as high as each
/// predicate its rule reads and higher than each it reads negatively (the program is
/// stratified, so raising them until nothing changes ends).
fn levels(program: &Program) -> BTreeMap<PredId, usize> {
    let mut level: BTreeMap<PredId, usize> = program.pred_ids().map(|p| (p, 0)).collect();
    loop {
        let mut changed = false;
        // A dominance rule's body is read as a rule body is, into its relation.
        for dominance in &program.dominances {
            let positive = dominance.body.iter().map(|a| level[&a.pred]);
            let negative = dominance.negated.iter().map(|a| level[&a.pred] + 1);
            let need = positive.chain(negative).max().unwrap_or(0);
            if level[&dominance.dominated.pred] < need {
                level.insert(dominance.dominated.pred, need);
                changed = true;
            }
        }
        for rule in &program.rules {
            // A relation with dominance rules is complete only at the end of its level.
            let dominated = |p: PredId| p != rule.head.pred && program.dominances.iter().any(|d| d.dominated.pred == p);
            let positive = rule.body.iter().map(|a| level[&a.pred] + usize::from(dominated(a.pred)));
            let negative = rule.negated.iter().map(|a| level[&a.pred] + 1);
            let need = positive.chain(negative).max().unwrap_or(0);
            if level[&rule.head.pred] < need {
                level.insert(rule.head.pred, need);
                changed = true;
            }
        }
        if !changed {
            return level;
        }
    }
}

/// Every substitution that satisfies the body of `rule` in `known`: the positive atoms
/// extend it over whole relations, then the comparisons (assignments bind, in as many
/// passes as they need) and the negated atoms filter it.
fn matches(program: &Program, rule: &Rule, known: &Relations) -> Vec<Substitution> {
    matches_from(program, rule, known, Substitution::new())
}

/// Every extension of `start` that satisfies the body of `rule` in `known`, as
/// [`matches`] finds them.
fn matches_from(program: &Program, rule: &Rule, known: &Relations, start: Substitution) -> Vec<Substitution> {
    let values = &program.consts;
    let mut substs = vec![start];
    for atom in &rule.body {
        let relation = &known[&atom.pred];
        substs = substs.iter().flat_map(|s| relation.iter().filter_map(move |t| extend(s, &atom.args, t))).collect();
    }
    substs
        .into_iter()
        .filter_map(|mut s| {
            let mut pending: Vec<&Comparison> = rule.comparisons.iter().collect();
            while !pending.is_empty() {
                let before = pending.len();
                let mut failed = false;
                pending.retain(|c| match (arithmetic(&c.left, values, &s), arithmetic(&c.right, values, &s)) {
                    // Once one comparison failed the rest are moot (and may read a
                    // variable the failed one would have bound).
                    _ if failed => false,
                    // An operand without a value (a division by zero) satisfies nothing.
                    (Some(None), _) | (_, Some(None)) => {
                        failed = true;
                        false
                    }
                    (Some(Some(a)), Some(Some(b))) => {
                        failed |= !compare(program, c, a, b);
                        false
                    }
                    (None, Some(Some(v))) | (Some(Some(v)), None) if c.op == CmpOp::Eq => {
                        let target = if arithmetic(&c.left, values, &s).is_none() { &c.left } else { &c.right };
                        s.insert(target.var().expect("an unbound operand is a variable"), v);
                        false
                    }
                    _ => true,
                });
                if failed {
                    return None;
                }
                assert!(pending.len() < before, "generated comparisons are bound");
            }
            let blocked = rule.negated.iter().any(|atom| {
                let args: Vec<Term> = atom
                    .args
                    .iter()
                    .map(|t| match value(t, &s) {
                        // Only the value's bits are matched against tuples.
                        Some(v) => Term { kind: TermKind::Const(ir::Value::Unsigned(v)), span: t.span },
                        None => *t,
                    })
                    .collect();
                known[&atom.pred].iter().any(|t| extend(&Substitution::new(), &args, t).is_some())
            });
            (!blocked).then_some(s)
        })
        .collect()
}

/// The value of an operand under `subst`: `None` while one of its variables is unbound,
/// `Some(None)` where it has no value. The arithmetic is written out here on 64-bit
/// integers, wrapped to 32 bits after each operator, apart from `ir`'s evaluator: signed
/// unless the operator's type is `unsigned`; `/` and `mod` truncate and have no value for a zero
/// divisor or the least number over -1; shift counts are taken mod 32; `^` is Soufflé's
/// compiled power for the small operands the generated programs reach (exact below 2^53;
/// a negative exponent leaves 1 or -1 of a base 1 or -1 and 0 of any other). The
/// functors are written out too ([`functor`]); texts are read from and added to
/// `values`.
fn arithmetic(expr: &ir::Expr, values: &ir::ValueStore, subst: &Substitution) -> Option<Option<u32>> {
    let wrap = |n: i64| n as u32;
    let mut stack: Vec<u32> = Vec::new();
    for node in &expr.nodes {
        match node {
            ir::ExprNode::Leaf(term) => stack.push(value(term, subst)?),
            ir::ExprNode::Call(f) => {
                let args = stack.split_off(stack.len() - f.arity());
                match functor(f, &args, values) {
                    Some(v) => stack.push(v),
                    None => return Some(None),
                }
            }
            ir::ExprNode::Unary(ir::UnOp::Neg, ir::ValueType::Float) => {
                // A float's sign is its top bit.
                let a = stack.pop().expect("an operand");
                stack.push(a ^ 0x8000_0000);
            }
            ir::ExprNode::Binary(op, ir::ValueType::Float) => {
                let b = stack.pop().expect("an operand");
                let a = stack.pop().expect("an operand");
                match float_operator(*op, a, b) {
                    Some(v) => stack.push(v),
                    None => return Some(None),
                }
            }
            ir::ExprNode::Unary(op, _) => {
                let a = i64::from(stack.pop().expect("an operand") as i32);
                let r = match op {
                    ir::UnOp::Neg => -a,
                    ir::UnOp::BitNot => !a,
                    ir::UnOp::Not => i64::from(a == 0),
                };
                stack.push(wrap(r));
            }
            ir::ExprNode::Binary(op, ty) => {
                let unsigned = *ty == ir::ValueType::Unsigned;
                let int = |bits: u32| if unsigned { i64::from(bits) } else { i64::from(bits as i32) };
                let b = int(stack.pop().expect("an operand"));
                let a = int(stack.pop().expect("an operand"));
                let least = if unsigned { -1 } else { i64::from(i32::MIN) };
                let undefined = b == 0 || (!unsigned && a == least && b == -1);
                let shift = (b & 31) as u32;
                let r = match op {
                    ir::BinOp::Add => a + b,
                    ir::BinOp::Sub => a - b,
                    ir::BinOp::Mul => a * b,
                    ir::BinOp::Div | ir::BinOp::Mod if undefined => return Some(None),
                    ir::BinOp::Div => a / b,
                    ir::BinOp::Mod => a % b,
                    ir::BinOp::Pow if b < 0 => match a {
                        1 => 1,
                        -1 if b % 2 == 0 => 1,
                        -1 => -1,
                        _ => 0,
                    },
                    // Bases -1, 0 and 1 never overflow, so the product below would run the
                    // exponent's count (up to 2^32) of times: their powers are written out.
                    ir::BinOp::Pow if b == 0 => 1,
                    ir::BinOp::Pow if a == 0 || a == 1 => a,
                    ir::BinOp::Pow if a == -1 => {
                        if b % 2 == 0 {
                            1
                        } else {
                            -1
                        }
                    }
                    ir::BinOp::Pow => {
                        let mut p: i128 = 1;
                        for _ in 0..b {
                            p *= i128::from(a);
                            if p.unsigned_abs() >= 1 << 63 {
                                p = i128::from(i64::MIN);
                                break;
                            }
                        }
                        p as i64
                    }
                    ir::BinOp::BitAnd => a & b,
                    ir::BinOp::BitOr => a | b,
                    ir::BinOp::BitXor => a ^ b,
                    ir::BinOp::Shl => a << shift,
                    ir::BinOp::Shr if unsigned => a >> shift,
                    ir::BinOp::Shr => i64::from((a as i32) >> shift),
                    ir::BinOp::ShrUnsigned => i64::from((a as u32) >> shift),
                    ir::BinOp::And => i64::from(a != 0 && b != 0),
                    ir::BinOp::Or => i64::from(a != 0 || b != 0),
                    ir::BinOp::Xor => i64::from((a != 0) != (b != 0)),
                    ir::BinOp::Min => a.min(b),
                    ir::BinOp::Max => a.max(b),
                };
                stack.push(wrap(r));
            }
        }
    }
    Some(stack.pop())
}

/// A float operator on two floats' bits, written out apart from `ir`'s: IEEE single
/// precision, `^` through double precision, `min`/`max` keeping the first of equals;
/// "not a number" made of two numbers is x86's (sign bit set), one that came in stays.
fn float_operator(op: ir::BinOp, a: u32, b: u32) -> Option<u32> {
    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
    let r = match op {
        ir::BinOp::Add => x + y,
        ir::BinOp::Sub => x - y,
        ir::BinOp::Mul => x * y,
        ir::BinOp::Div => x / y,
        ir::BinOp::Pow => (f64::from(x).powf(f64::from(y))) as f32,
        ir::BinOp::Min => return Some(if y < x { b } else { a }),
        ir::BinOp::Max => return Some(if x < y { b } else { a }),
        _ => return None,
    };
    Some(match (x.is_nan(), y.is_nan(), r.is_nan()) {
        (false, false, true) => 0xffc0_0000,
        _ => r.to_bits(),
    })
}

/// A functor on values as tuples hold them, written out apart from `ir`'s: texts are
/// bytes; `substr(s, i, n)` is empty unless `0 <= i <= strlen(s)`, and runs to the end
/// for a negative or long `n`; `to_number` reads an optional sign and decimal digits
/// (the texts the generated programs convert), none for anything else or a value out of
/// range.
fn functor(f: &ir::Functor, args: &[u32], values: &ir::ValueStore) -> Option<u32> {
    let text = |v: u32| values.text(ir::Const(v)).to_string();
    let make = |t: String| values.intern(&t).0;
    let digits = |t: &str| {
        let t = t.trim_start();
        let unsigned = t.strip_prefix(['-', '+']).unwrap_or(t);
        let end = unsigned.find(|c: char| !c.is_ascii_digit()).unwrap_or(unsigned.len());
        let n: i64 = unsigned[..end].parse().ok()?;
        Some(if t.starts_with('-') { -n } else { n })
    };
    Some(match f {
        ir::Functor::Cat(_) => make(args.iter().map(|&a| text(a)).collect()),
        ir::Functor::Strlen => text(args[0]).len() as u32,
        ir::Functor::Substr => {
            let s = text(args[0]);
            let (from, len) = (args[1] as i32, args[2] as i32);
            if from < 0 || from as usize > s.len() {
                return Some(make(String::new()));
            }
            let end = if len < 0 { s.len() } else { (from as usize + len as usize).min(s.len()) };
            make(String::from_utf8_lossy(&s.as_bytes()[from as usize..end]).into_owned())
        }
        ir::Functor::Ord(_) => args[0],
        ir::Functor::ToNumber(ir::ValueType::Symbol) => i32::try_from(digits(&text(args[0]))?).ok()? as u32,
        ir::Functor::ToUnsigned(ir::ValueType::Symbol) => u32::try_from(digits(&text(args[0]))?).ok()?,
        ir::Functor::ToNumber(ir::ValueType::Float) => {
            let t = f64::from(f32::from_bits(args[0])).trunc();
            if (-2_147_483_648.0..=2_147_483_647.0).contains(&t) {
                t as i32 as u32
            } else {
                i32::MIN as u32
            }
        }
        ir::Functor::ToUnsigned(ir::ValueType::Float) => {
            let t = f64::from(f32::from_bits(args[0])).trunc();
            if t.abs() < 2f64.powi(63) {
                t as i64 as u32
            } else {
                0
            }
        }
        ir::Functor::ToFloat(ir::ValueType::Number) => (f64::from(args[0] as i32) as f32).to_bits(),
        ir::Functor::ToFloat(ir::ValueType::Unsigned) => (f64::from(args[0]) as f32).to_bits(),
        ir::Functor::ToFloat(ir::ValueType::Symbol) => text(args[0]).trim().parse::<f32>().ok()?.to_bits(),
        ir::Functor::ToFloat(_) => args[0],
        ir::Functor::ToString(ir::ValueType::Float) => make(format!("{:.6}", f32::from_bits(args[0]))),
        ir::Functor::ToNumber(_) | ir::Functor::ToUnsigned(_) => args[0],
        ir::Functor::ToString(ir::ValueType::Number) => make((args[0] as i32).to_string()),
        ir::Functor::ToString(ir::ValueType::Unsigned) => make(args[0].to_string()),
        ir::Functor::ToString(ir::ValueType::Symbol) => args[0],
        // A reinterpretation: the same bits, which as a symbol must name a text.
        ir::Functor::Cast(from, ir::ValueType::Symbol) if *from != ir::ValueType::Symbol => {
            (u64::from(args[0]) < values.len() as u64).then_some(args[0])?
        }
        ir::Functor::Cast(..) => args[0],
        ir::Functor::ToString(_) => args[0],
        // Records are ids the engines and the oracle must agree on, so both take them
        // from the one store: a record's fields in order, after a branch's index.
        ir::Functor::Record { branch, .. } => {
            values.pack(&branch.map(u32::from).into_iter().chain(args.iter().copied()).collect::<Vec<_>>())
        }
        ir::Functor::Nil(_) => 0,
        ir::Functor::Field { index, .. } => values.field(args[0], usize::from(*index))?,
        // The function bound to a declaration is the functor's meaning.
        ir::Functor::User(_) => f.apply(args, values)?,
    })
}

/// `a op b` on values: identity for `=` and `!=`; for the others integer order (a value
/// that is not an integer satisfies none), or text order for a Soufflé symbol comparison;
/// of floats, their IEEE comparison (`-0.0 = 0.0`, "not a number" is only `!=`).
fn compare(program: &Program, c: &Comparison, a: u32, b: u32) -> bool {
    let texts = program.consts.texts();
    let text = |v: u32| texts.text(ir::Const(v));
    let float = |bits: u32| f32::from_bits(bits);
    match (c.op, c.domain) {
        (op, ir::ValueType::Float) => match float(a).partial_cmp(&float(b)) {
            Some(order) => op.holds(order as i64, 0),
            None => op == CmpOp::Ne,
        },
        (CmpOp::Eq, _) => a == b,
        (CmpOp::Ne, _) => a != b,
        (CmpOp::Contains, _) => text(b).contains(text(a)),
        (CmpOp::NotContains, _) => !text(b).contains(text(a)),
        (CmpOp::Match | CmpOp::NotMatch, _) => {
            // A pattern that does not compile makes both false.
            let matched = regex::Regex::new(&format!("^(?:{})$", text(a))).ok().map(|r| r.is_match(text(b)));
            matched == Some(c.op == CmpOp::Match)
        }
        (op, ir::ValueType::Symbol) => op.holds(text(a).cmp(text(b)) as i64, 0),
        // A number column holds an `i32`'s bits, an unsigned one the number itself.
        (op, ir::ValueType::Number) => op.holds((a as i32).into(), (b as i32).into()),
        (op, ir::ValueType::Unsigned | ir::ValueType::Record(_)) => op.holds(a.into(), b.into()),
    }
}

/// The tuples of `relation` that the query atom of `program` matches: its constants, and
/// its repeated variables, equal.
fn query_answers(program: &Program, relations: &Relations) -> BTreeSet<Vec<u32>> {
    let query = program.query.as_ref().expect("generated programs have a query");
    relations[&query.atom.pred]
        .iter()
        .filter(|t| extend(&Substitution::new(), &query.atom.args, t).is_some())
        .cloned()
        .collect()
}

/// The relations of `db`, as the oracle holds them.
fn relations_of(program: &Program, db: &Database) -> Relations {
    program.pred_ids().map(|p| (p, db.sorted_tuples(p).into_iter().collect())).collect()
}

fn database(program: &Program, edb: &BTreeSet<(PredId, Vec<u32>)>) -> Database {
    let mut db = Database::new(program);
    // Half of the cases hold their relations in the flat form large sparse relations
    // take (a hash table of row ids), from their second row on.
    if edb.len() % 2 == 1 {
        db.flat_sets_from(2);
    }
    for (pred, tuple) in edb {
        db.insert(*pred, tuple);
    }
    db
}

fn evaluate(program: &Program, edb: &BTreeSet<(PredId, Vec<u32>)>, engine: NativeEngine) -> Relations {
    evaluate_with(program, edb, engine, Threads::ONE)
}

/// Threads that split every join of two rows of delta or more: small random inputs then
/// run the split path.
fn split_threads() -> Threads {
    Threads::new(3).splitting_from(2)
}

fn evaluate_with(
    program: &Program,
    edb: &BTreeSet<(PredId, Vec<u32>)>,
    engine: NativeEngine,
    threads: Threads,
) -> Relations {
    let options = EvalOptions { engine, threads, ..EvalOptions::default() };
    let plan = plan::plan_program(program);
    let eval = exec::evaluate(&plan, program, evaluated_database(program, &plan, edb), options);
    relations_of(program, &eval.db)
}

/// [`database`], whose input relations give back their tuple sets in a third of the cases
/// where no rule tests a whole tuple of them, as `dlc`'s outputs mode does before it
/// evaluates: the joins then read their rows and indexes only, and a membership test
/// (a proof's) scans the rows.
fn evaluated_database(program: &Program, plan: &plan::ProgramPlan, edb: &BTreeSet<(PredId, Vec<u32>)>) -> Database {
    let mut db = database(program, edb);
    if edb.len().is_multiple_of(3) {
        db.release_unprobed_input_sets(plan, program);
    }
    db
}

/// Input predicates (`e2` is zero-arity) and derived ones (`p2` is zero-arity).
const EDB: &[(&str, usize)] = &[("e0", 2), ("e1", 1), ("e2", 0), ("e3", 3)];
const IDB: &[(&str, usize)] = &[("p0", 2), ("p1", 1), ("p2", 0), ("p3", 3), ("p4", 2)];
/// Three variables, so that atoms repeat them often.
const VARS: &[&str] = &["X", "Y", "Z"];
/// Numbers only: a column holds numbers or symbols, and the ordering comparisons make
/// the columns they reach numeric, so a symbol among them would make most programs E0028.
/// `-1` is held as `u32::MAX`, the bits a sentinel is most likely to take.
const CONSTS: &[&str] = &["-1", "1", "2"];
/// The constants an ordering comparison may name (E0024 rejects a symbol there).
const NUMBERS: usize = 3;
/// The variable an assignment binds, which no positive atom does.
const ASSIGNED: &str = "W";

/// The constants of the programs whose `-D` output is checked: symbols that read as
/// numbers among them (strings, so that a column need not hold numbers and symbols at
/// once), which the written files sort numerically (`2` before `10`); and constants that
/// only queries use, so that a query may ask for a value that occurs nowhere in the data.
const OUTPUT_CONSTS: &[&str] = &["a", "b", "\"10\"", "\"2\""];
const ABSENT_CONSTS: &[&str] = &["k", "\"7\""];

fn arg() -> impl Strategy<Value = Arg> {
    generate::arg(VARS.len(), CONSTS.len())
}

fn atom_text(name: &str, args: &[Arg]) -> String {
    atom_text_over(name, args, CONSTS)
}

fn atom_text_over(name: &str, args: &[Arg], consts: &[&str]) -> String {
    generate::atom_text(name, args, VARS, consts)
}

/// A safe rule for IDB predicate `head`: zero to three body atoms over every predicate
/// (so recursion, mutual and non-linear, is common), and head arguments that are
/// constants or variables of the body. An empty body makes a ground fact of the head.
fn rule(head: usize) -> impl Strategy<Value = String> {
    rule_over(head, CONSTS)
}

/// [`rule`] with constants drawn from `consts`.
fn rule_over(head: usize, consts: &'static [&'static str]) -> impl Strategy<Value = String> {
    let preds: Vec<(&'static str, usize)> = EDB.iter().chain(IDB).copied().collect();
    let body_atom = (0..preds.len()).prop_flat_map(move |i| {
        let (name, arity) = preds[i];
        proptest::collection::vec(generate::arg(VARS.len(), consts.len()), arity).prop_map(move |args| (name, args))
    });
    let (head_name, head_arity) = IDB[head];
    let head_pick = prop_oneof![4 => any::<prop::sample::Index>().prop_map(Ok), 1 => (0..consts.len()).prop_map(Err)];
    let body_len = prop_oneof![1 => Just(0usize), 8 => 1usize..4];
    (
        body_len.prop_flat_map(move |n| proptest::collection::vec(body_atom.clone(), n)),
        proptest::collection::vec(head_pick, head_arity),
    )
        .prop_map(move |(body, picks)| {
            let mut vars: Vec<usize> = Vec::new();
            for a in body.iter().flat_map(|(_, args)| args) {
                if let Arg::Var(v) = a {
                    if !vars.contains(v) {
                        vars.push(*v);
                    }
                }
            }
            let head_args: Vec<Arg> = picks
                .iter()
                .map(|pick| match pick {
                    Ok(ix) if !vars.is_empty() => Arg::Var(vars[ix.index(vars.len())]),
                    Ok(ix) => Arg::Const(ix.index(consts.len())),
                    Err(c) => Arg::Const(*c),
                })
                .collect();
            let body: Vec<String> = body.iter().map(|(n, a)| atom_text_over(n, a, consts)).collect();
            format!("{} <- {}", atom_text_over(head_name, &head_args, consts), body.join(", "))
        })
}

/// How a term of a negated atom, a comparison or a head is chosen: `0..=2` a variable of
/// the positive atoms (the index picks which; a constant when there is none), `3` a
/// constant, `4` the assigned variable when there is one (else a constant), `5` `_` in a
/// negated atom (else a constant).
type Pick = (u8, prop::sample::Index);

fn pick() -> impl Strategy<Value = Pick> {
    (0u8..6, any::<prop::sample::Index>())
}

/// The text of `pick` given the variables bound by positive atoms (and by the
/// assignment, with `assigned`); `numbers` restricts constants to the integers.
fn pick_text(pick: &Pick, vars: &[usize], assigned: bool, anon: bool, numbers: bool) -> String {
    let (kind, ix) = pick;
    let constant = || CONSTS[ix.index(if numbers { NUMBERS } else { CONSTS.len() })].to_string();
    match kind {
        0..=2 if !vars.is_empty() => VARS[vars[ix.index(vars.len())]].to_string(),
        4 if assigned => ASSIGNED.to_string(),
        5 if anon => "_".to_string(),
        _ => constant(),
    }
}

/// The dlc dialect's operators, with `min` and `max` written as functions.
const OPERATORS: &[&str] = &[
    "+", "-", "*", "/", "mod", "^", "band", "bor", "bxor", "bshl", "bshr", "bshru", "land", "lor", "lxor", "min", "max",
];
const PREFIX: &[&str] = &["-", "bnot ", "lnot "];

/// An arithmetic expression: a first term, then up to two operators each with a further
/// term (or a prefix operator applied to what is there so far).
type Arithmetic = (Pick, Vec<(usize, Pick, Option<usize>)>);

fn arithmetic_pick() -> impl Strategy<Value = Arithmetic> {
    (
        pick(),
        proptest::collection::vec((0..OPERATORS.len(), pick(), proptest::option::weighted(0.2, 0..PREFIX.len())), 0..3),
    )
}

/// The text of an expression over the bound variables and the numbers. `^` comes only
/// first, between two terms, so that powers stay small and exact.
fn arithmetic_text(expr: &Arithmetic, vars: &[usize], assigned: bool) -> String {
    let term = |p: &Pick| pick_text(&(p.0 % 5, p.1), vars, assigned, false, true);
    // A constant expression without a value is E0031, so the first term is a variable
    // (and a rule without variables gets a constant only).
    if vars.is_empty() {
        return term(&expr.0);
    }
    let mut text = term(&(expr.0 .0 % 3, expr.0 .1));
    for (k, (op, operand, prefix)) in expr.1.iter().enumerate() {
        let op = if OPERATORS[*op] == "^" && k > 0 { "+" } else { OPERATORS[*op] };
        text = match op {
            "min" | "max" => format!("{op}({text}, {})", term(operand)),
            _ => format!("({text}) {op} {}", term(operand)),
        };
        if let Some(prefix) = prefix {
            text = format!("{}({text})", PREFIX[*prefix]);
        }
    }
    text
}

/// A safe, stratified rule for IDB predicate `head` with negated atoms and comparisons:
/// positive atoms read input predicates and derived ones up to `head` (so recursion is
/// common), negated atoms read input predicates and derived ones below `head` (so every
/// program is stratified); an optional assignment binds [`ASSIGNED`].
fn stratified_rule(head: usize) -> impl Strategy<Value = String> {
    stratified_rule_with(head, false)
}

/// [`stratified_rule`]; with `arithmetic`, the assignment, comparisons and negated atoms
/// compute: `W = (X + 1) mod 2` (kept within -3..=3 by two comparisons, so that a
/// recursive counter stops), `(Y) band 2 < X`, `!p1(X - 1)`.
fn stratified_rule_with(head: usize, arithmetic: bool) -> impl Strategy<Value = String> {
    let positive: Vec<(&'static str, usize)> = EDB.iter().chain(&IDB[..=head]).copied().collect();
    let negative: Vec<(&'static str, usize)> = EDB.iter().chain(&IDB[..head]).copied().collect();
    let body_atom = (0..positive.len()).prop_flat_map(move |i| {
        let (name, arity) = positive[i];
        proptest::collection::vec(arg(), arity).prop_map(move |args| (name, args))
    });
    let negated = (0..negative.len()).prop_flat_map(move |i| {
        let (name, arity) = negative[i];
        proptest::collection::vec(pick(), arity).prop_map(move |picks| (name, picks))
    });
    let comparison = (0usize..6, pick(), pick(), arithmetic_pick(), arithmetic_pick());
    let (head_name, head_arity) = IDB[head];
    let body_len = prop_oneof![1 => Just(0usize), 8 => 1usize..4];
    (
        body_len.prop_flat_map(move |n| proptest::collection::vec(body_atom.clone(), n)),
        proptest::collection::vec(negated, 0..3),
        proptest::collection::vec(comparison, 0..3),
        proptest::option::of((pick(), arithmetic_pick())),
        proptest::collection::vec(pick(), head_arity),
        (any::<bool>(), arithmetic_pick()),
    )
        .prop_map(move |(body, negated, comparisons, assignment, head_picks, (bang, computed))| {
            let mut vars: Vec<usize> = Vec::new();
            for a in body.iter().flat_map(|(_, args)| args) {
                if let Arg::Var(v) = a {
                    if !vars.contains(v) {
                        vars.push(*v);
                    }
                }
            }
            let assigned = assignment.is_some();
            let mut literals: Vec<String> = body.iter().map(|(n, a)| atom_text(n, a)).collect();
            if let Some((value, computed)) = &assignment {
                if arithmetic {
                    literals.push(format!("{ASSIGNED} = {}", arithmetic_text(computed, &vars, false)));
                    literals.push(format!("{ASSIGNED} >= -3, {ASSIGNED} <= 3"));
                } else {
                    literals.push(format!("{ASSIGNED} = {}", pick_text(value, &vars, false, false, false)));
                }
            }
            for (k, (name, picks)) in negated.iter().enumerate() {
                let mut args: Vec<String> = picks.iter().map(|p| pick_text(p, &vars, assigned, true, false)).collect();
                if arithmetic && k == 0 && !args.is_empty() {
                    args[0] = arithmetic_text(&computed, &vars, assigned);
                }
                let not = if bang { "!" } else { "not " };
                literals.push(format!("{not}{name}({})", args.join(",")));
            }
            const OPS: [&str; 6] = ["=", "!=", "<", "<=", ">", ">="];
            for (op, left, right, left_computed, right_computed) in &comparisons {
                let numbers = *op >= 2 || arithmetic;
                let (l, r) = if arithmetic {
                    (arithmetic_text(left_computed, &vars, assigned), arithmetic_text(right_computed, &vars, assigned))
                } else {
                    (
                        pick_text(left, &vars, assigned, false, numbers),
                        pick_text(right, &vars, assigned, false, numbers),
                    )
                };
                literals.push(format!("{l} {} {r}", OPS[*op]));
            }
            let head_args: Vec<String> =
                head_picks.iter().map(|p| pick_text(&(p.0 % 5, p.1), &vars, assigned, false, false)).collect();
            format!("{}({}) <- {}", head_name, head_args.join(","), literals.join(", "))
        })
}

/// The constants of programs over texts: those of [`CONSTS`], quoted, so that every
/// column holds symbols (the same texts input facts hold).
const TEXTS: &[&str] = &["\"-1\"", "\"1\"", "\"2\""];

/// [`pick_text`] over [`TEXTS`].
fn text_pick(pick: &Pick, vars: &[usize], assigned: bool, anon: bool) -> String {
    let text = pick_text(pick, vars, assigned, anon, false);
    match CONSTS.iter().position(|c| *c == text) {
        Some(i) => TEXTS[i].to_string(),
        None => text,
    }
}

/// A safe, stratified rule over texts (as [`stratified_rule`]) whose assignment makes a
/// text, `W = cat(X, Y)`, `substr(X, 1, 2)`, `to_string(strlen(X))`, ..., kept shorter
/// than four bytes (so that a recursive rule stops), and whose comparisons read texts:
/// `contains(X, W)`, `!contains(...)`, `match(...)`, `strlen(X) < strlen(Y)`, `=`, `!=`.
/// Made texts reach heads, joins (a head read back) and negated atoms.
fn string_rule(head: usize) -> impl Strategy<Value = String> {
    let positive: Vec<(&'static str, usize)> = EDB.iter().chain(&IDB[..=head]).copied().collect();
    let negative: Vec<(&'static str, usize)> = EDB.iter().chain(&IDB[..head]).copied().collect();
    let body_atom = (0..positive.len()).prop_flat_map(move |i| {
        let (name, arity) = positive[i];
        proptest::collection::vec(arg(), arity).prop_map(move |args| (name, args))
    });
    let negated = (0..negative.len()).prop_flat_map(move |i| {
        let (name, arity) = negative[i];
        proptest::collection::vec(pick(), arity).prop_map(move |picks| (name, picks))
    });
    let (head_name, head_arity) = IDB[head];
    let body_len = prop_oneof![1 => Just(0usize), 8 => 1usize..4];
    (
        body_len.prop_flat_map(move |n| proptest::collection::vec(body_atom.clone(), n)),
        proptest::collection::vec(negated, 0..3),
        proptest::collection::vec((0usize..7, pick(), pick()), 0..3),
        proptest::option::weighted(0.8, (0usize..5, pick(), pick())),
        proptest::collection::vec(pick(), head_arity),
    )
        .prop_map(move |(body, negated, comparisons, assignment, head_picks)| {
            let mut vars: Vec<usize> = Vec::new();
            for a in body.iter().flat_map(|(_, args)| args) {
                if let Arg::Var(v) = a {
                    if !vars.contains(v) {
                        vars.push(*v);
                    }
                }
            }
            let assigned = assignment.is_some();
            let mut literals: Vec<String> = body.iter().map(|(n, a)| atom_text_over(n, a, TEXTS)).collect();
            if let Some((form, a, b)) = &assignment {
                let (a, b) =
                    (text_pick(&(a.0 % 4, a.1), &vars, false, false), text_pick(&(b.0 % 4, b.1), &vars, false, false));
                let made = match form {
                    0 => format!("cat({a}, {b})"),
                    1 => format!("substr({a}, 1, 2)"),
                    2 => format!("substr({a}, 0, strlen({b}))"),
                    3 => format!("to_string(strlen({a}))"),
                    _ => format!("cat(substr({a}, 0, 1), {b})"),
                };
                literals.push(format!("{ASSIGNED} = {made}, strlen({ASSIGNED}) < 4"));
            }
            for (name, picks) in &negated {
                let args: Vec<String> = picks.iter().map(|p| text_pick(p, &vars, assigned, true)).collect();
                literals.push(format!("!{name}({})", args.join(",")));
            }
            for (kind, left, right) in &comparisons {
                let (l, r) = (text_pick(left, &vars, assigned, false), text_pick(right, &vars, assigned, false));
                literals.push(match kind {
                    0 => format!("contains({l}, {r})"),
                    1 => format!("!contains({l}, {r})"),
                    2 => format!("strlen({l}) < strlen({r})"),
                    3 => format!("{l} = {r}"),
                    4 => format!("{l} != {r}"),
                    5 => format!("match(\"-?1.*\", {l})"),
                    _ => format!("!match(\"2|.1\", {l})"),
                });
            }
            let head_args: Vec<String> =
                head_picks.iter().map(|p| text_pick(&(p.0 % 5, p.1), &vars, assigned, false)).collect();
            format!("{}({}) <- {}", head_name, head_args.join(","), literals.join(", "))
        })
}

/// A whole stratified program over texts made as rules run ([`string_rule`]).
fn string_program_text() -> impl Strategy<Value = String> {
    let rules = (0..IDB.len()).map(|h| proptest::collection::vec(string_rule(h), 1..4).boxed()).collect::<Vec<_>>();
    with_query_over(rules, TEXTS)
}

/// The declarations of the record programs ([`record_program_text`]): the input
/// relations of [`EDB`] over numbers, a pair, a list and an algebraic data type.
const RECORD_DECLARATIONS: &str = "\
.type P = [a: number, b: number]
.type L = [h: number, t: L]
.type S = A {x: number} | B {x: number, y: number} | C {}
.decl e0(x: number, y: number)
.decl e1(x: number)
.decl e2()
.decl e3(x: number, y: number, z: number)
.decl pairs(p: P)
.decl lists(l: L, n: number)
.decl shapes(s: S)
.decl q0(x: number, y: number)
.decl q1(x: number)
";

/// The rules record programs draw from: records made in heads, read by patterns inside
/// joins and recursion, compared and negated; a list grows to a bounded length.
const RECORD_RULES: &[&str] = &[
    "pairs([x, y]) :- e0(x, y).",
    "pairs([y, z]) :- pairs([x, y]), e0(x, z).",
    "q0(x, z) :- e3(x, _, z), !pairs([z, x]).",
    "pairs(p) :- pairs(p), p = [x, x].",
    "lists([x, l], n + 1) :- lists(l, n), n < 2, e1(x).",
    "lists([y, l], n + 1) :- lists(l, n), l = [x, _], e0(x, y), n < 3.",
    "shapes($A(x)) :- e1(x).",
    "shapes($B(x, y)) :- pairs([x, y]), x != y.",
    "q0(x, y) :- pairs([x, y]), !e0(y, x).",
    "q0(x, n) :- lists([x, _], n).",
    "q0(x, y) :- pairs(p), pairs(r), p = [x, _], r = [_, y], p != r.",
    "q0(x, y) :- shapes($B(x, y)), shapes($A(y)).",
    "q0(x, y) :- pairs([x, y]), pairs([y, x]).",
    "q0(x, y) :- lists(l, 2), l = [x, [y, nil]].",
    "q1(x) :- shapes(s), s = $A(x), !shapes($B(x, x)).",
    "q1(x) :- shapes($B(x, x)).",
    "q1(n) :- lists(l, n), l != nil, shapes($C()).",
    "q1(x) :- q0(x, _), pairs([x, x]).",
];

/// A Soufflé program over records: a random selection of [`RECORD_RULES`] beside a
/// rule for each relation (so every relation a rule reads is defined), and a random
/// query on `q0` or `q1`.
fn record_program_text() -> impl Strategy<Value = String> {
    let chosen = proptest::collection::vec(any::<bool>(), RECORD_RULES.len());
    let query = prop_oneof![
        Just("q0(x, y)".to_string()),
        (0usize..NUMBERS).prop_map(|c| format!("q0({}, y)", CONSTS[c])),
        (0usize..NUMBERS).prop_map(|c| format!("q0(x, {})", CONSTS[c])),
        Just("q1(x)".to_string()),
        (0usize..NUMBERS).prop_map(|c| format!("q1({})", CONSTS[c])),
    ];
    (chosen, query).prop_map(|(chosen, query)| {
        let mut text = RECORD_DECLARATIONS.to_string();
        text += "q0(x, y) :- e0(x, y).\nq1(x) :- e1(x).\npairs([x, x]) :- e1(x).\n";
        text += "lists(nil, 0).\nshapes($C()) :- e2().\n";
        for (rule, _) in RECORD_RULES.iter().zip(&chosen).filter(|(_, &keep)| keep) {
            text += rule;
            text.push('\n');
        }
        text += &format!("?- {query}.\n");
        text
    })
}

/// A whole program: every IDB predicate gets at least one rule, so every query is valid.
fn program_text() -> impl Strategy<Value = String> {
    let rules = (0..IDB.len()).map(|h| proptest::collection::vec(rule(h), 1..4).boxed()).collect::<Vec<_>>();
    with_query(rules)
}

/// A whole stratified program with negations and comparisons; every IDB predicate gets
/// at least one rule.
fn stratified_program_text() -> impl Strategy<Value = String> {
    let rules = (0..IDB.len()).map(|h| proptest::collection::vec(stratified_rule(h), 1..4).boxed()).collect::<Vec<_>>();
    with_query(rules)
}

/// A whole stratified program with negations, comparisons and arithmetic.
fn arithmetic_program_text() -> impl Strategy<Value = String> {
    let rules = (0..IDB.len())
        .map(|h| proptest::collection::vec(stratified_rule_with(h, true), 1..4).boxed())
        .collect::<Vec<_>>();
    with_query(rules)
}

/// The rules of each IDB predicate and a random query, as program text.
fn with_query(rules: Vec<BoxedStrategy<Vec<String>>>) -> impl Strategy<Value = String> {
    with_query_over(rules, CONSTS)
}

/// [`with_query`] with the query's constants drawn from `consts`.
fn with_query_over(
    rules: Vec<BoxedStrategy<Vec<String>>>,
    consts: &'static [&'static str],
) -> impl Strategy<Value = String> {
    let query = (0..IDB.len()).prop_flat_map(move |i| {
        let (name, arity) = IDB[i];
        proptest::collection::vec(arg(), arity).prop_map(move |args| atom_text_over(name, &args, consts))
    });
    (rules, query).prop_map(|(rules, query)| {
        let mut text: String = rules.into_iter().flatten().map(|r| r + "\n").collect();
        text += &format!("?- {query}.\n");
        text
    })
}

/// A program over [`OUTPUT_CONSTS`] with its input facts inline, and a query whose
/// constants are drawn from those and from [`ABSENT_CONSTS`], which no rule or fact uses.
fn output_program_text() -> impl Strategy<Value = String> {
    let rules =
        (0..IDB.len()).map(|h| proptest::collection::vec(rule_over(h, OUTPUT_CONSTS), 1..4)).collect::<Vec<_>>();
    let query_consts: Vec<&'static str> = OUTPUT_CONSTS.iter().chain(ABSENT_CONSTS).copied().collect();
    let query = (0..IDB.len()).prop_flat_map(move |i| {
        let (name, arity) = IDB[i];
        let consts = query_consts.clone();
        proptest::collection::vec(generate::arg(VARS.len(), consts.len()), arity)
            .prop_map(move |args| atom_text_over(name, &args, &consts))
    });
    let fact = (0..EDB.len(), proptest::collection::vec(0..OUTPUT_CONSTS.len(), 3)).prop_map(|(which, values)| {
        let (name, arity) = EDB[which];
        let args: Vec<Arg> = values[..arity].iter().map(|&c| Arg::Const(c)).collect();
        atom_text_over(name, &args, OUTPUT_CONSTS)
    });
    (rules, proptest::collection::vec(fact, 0..16), query).prop_map(|(rules, facts, query)| {
        let mut text: String = rules.into_iter().flatten().map(|r| r + "\n").collect();
        text.extend(facts.into_iter().map(|f| f + ".\n"));
        text += &format!("?- {query}.\n");
        text
    })
}

/// The rows `dlc -D -` prints for one relation, in order, each a list of fields.
fn framed_rows(stdout: &str) -> Vec<Vec<String>> {
    let body = stdout.split("===============\n").nth(1).unwrap_or_else(|| panic!("a framed relation: {stdout:?}"));
    body.lines().map(|l| if l == "()" { Vec::new() } else { l.split('\t').map(str::to_string).collect() }).collect()
}

/// The order of the values in `-D` output: numbers numerically, then by text (every
/// number of [`OUTPUT_CONSTS`] sorts before every symbol by text too).
fn output_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<i64>(), b.parse::<i64>()) {
        (Ok(m), Ok(n)) => m.cmp(&n),
        _ => a.cmp(b),
    }
}

/// Input facts as (EDB index, values); values index [`CONSTS`] (the unused ones of a
/// short tuple are ignored).
fn input_fact() -> impl Strategy<Value = (prop::sample::Index, [usize; 3])> {
    (any::<prop::sample::Index>(), [0..CONSTS.len(), 0..CONSTS.len(), 0..CONSTS.len()])
}

/// The program of `text`, with every constant of [`CONSTS`] interned so that any input
/// fact can be stated, and the input facts of `picks` over it.
fn compile(text: &str, picks: &[(prop::sample::Index, [usize; 3])]) -> (Program, BTreeSet<(PredId, Vec<u32>)>) {
    let (program, diagnostics) = match syntax::souffle::looks_like_souffle(text) {
        true => {
            let (program, diagnostics) =
                syntax::souffle::parse_program(text, FileId(0), &mut syntax::souffle::NoIncludes);
            (program.map(|p| p.program), diagnostics)
        }
        false => syntax::parse_program(text, FileId(0)),
    };
    let program = program.unwrap_or_else(|| panic!("generated program must compile: {diagnostics:?}\n{text}"));
    assert!(ir::validate(&program).is_empty(), "generated program must validate:\n{text}");
    for c in CONSTS {
        program.consts.intern(c);
    }
    let edb = picks.iter().filter_map(|pick| fact(&program, pick)).collect();
    (program, edb)
}

/// The input fact `pick` stands for, if its predicate occurs in the program.
fn fact(program: &Program, (which, values): &(prop::sample::Index, [usize; 3])) -> Option<(PredId, Vec<u32>)> {
    let (name, arity) = EDB[which.index(EDB.len())];
    let pred = program.lookup_source(name)?;
    let types = &program.pred(pred).types;
    let tuple = (values[..arity].iter().zip(types))
        .map(|(&v, ty)| match ty {
            ir::ValueType::Symbol => program.consts.get(CONSTS[v]).expect("interned").0,
            ir::ValueType::Number => CONSTS[v].parse::<i32>().expect("a number") as u32,
            ir::ValueType::Unsigned => CONSTS[v].parse::<u32>().expect("a number"),
            ir::ValueType::Float => CONSTS[v].parse::<f32>().expect("a number").to_bits(),
            ir::ValueType::Record(_) => unreachable!("the generated programs' inputs hold no records"),
        })
        .collect();
    Some((pred, tuple))
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(128)
}

/// Both engines derive exactly the oracle's relations, and the magic program, under
/// both engines, exactly the oracle's answers (and the oracle's relations of the magic
/// program itself).
fn engines_agree(text: &str, picks: &[(prop::sample::Index, [usize; 3])]) -> Result<(), TestCaseError> {
    let (program, edb) = compile(text, picks);
    let expected = oracle(&program, &edb);
    for engine in [NativeEngine::Reference, NativeEngine::Seminaive] {
        prop_assert_eq!(&evaluate(&program, &edb, engine), &expected, "{:?}\n{}", engine, text);
    }
    prop_assert_eq!(
        &evaluate_with(&program, &edb, NativeEngine::Seminaive, split_threads()),
        &expected,
        "threads\n{}",
        text
    );
    let magic = magic::rewrite(&program, program.query.as_ref().unwrap()).program;
    // The rewrite with adornment subsumption, which `--magic auto` evaluates.
    let subsumed = subsumed(&program);
    for magic in [&magic, &subsumed] {
        let magic_expected = oracle(magic, &edb);
        prop_assert_eq!(
            query_answers(magic, &magic_expected),
            query_answers(&program, &expected),
            "oracle on magic\n{}",
            text
        );
        for engine in [NativeEngine::Reference, NativeEngine::Seminaive] {
            prop_assert_eq!(&evaluate(magic, &edb, engine), &magic_expected, "magic, {:?}\n{}", engine, text);
        }
        prop_assert_eq!(
            &evaluate_with(magic, &edb, NativeEngine::Seminaive, split_threads()),
            &magic_expected,
            "magic, threads\n{}",
            text
        );
    }
    Ok(())
}

/// A batch of changes: whether it inserts, and the fact.
type Batch = Vec<(bool, (prop::sample::Index, [usize; 3]))>;

/// The update a batch makes, which `current` (the input) takes: one change per fact, the
/// first the batch makes of it, so the expected input is unambiguous.
fn batch_update(program: &Program, batch: &Batch, current: &mut BTreeSet<(PredId, Vec<u32>)>) -> Update {
    update_of(batch.iter().filter_map(|(insert, pick)| Some((*insert, fact(program, pick)?))), current)
}

/// The update of `changes` (each an insertion or not, and its fact), which `current`
/// takes: one change per fact, the first.
fn update_of(
    changes: impl IntoIterator<Item = (bool, (PredId, Vec<u32>))>,
    current: &mut BTreeSet<(PredId, Vec<u32>)>,
) -> Update {
    let mut update = Update::default();
    let mut seen = BTreeSet::new();
    for (insert, fact) in changes {
        if !seen.insert(fact.clone()) {
            continue;
        }
        if insert {
            current.insert(fact.clone());
            update.inserts.push(fact);
        } else {
            current.remove(&fact);
            update.deletes.push(fact);
        }
    }
    update
}

/// After every batch of random insertions and deletions, every maintenance strategy,
/// over the original and the magic program, hold exactly the oracle's relations of the
/// new input.
fn maintenance_agrees(
    text: &str,
    picks: &[(prop::sample::Index, [usize; 3])],
    batches: &[Batch],
    split: bool,
) -> Result<(), TestCaseError> {
    let (program, edb) = compile(text, picks);
    // Half the cases evaluate and maintain with every join split over threads.
    let threads = if split { split_threads() } else { Threads::ONE };
    let magic = magic::rewrite(&program, program.query.as_ref().unwrap()).program;
    let subsumed = subsumed(&program);
    for maintained_program in [&program, &magic, &subsumed] {
        // Each batch's update and the oracle's relations after it, the same for every
        // strategy (the oracle is the slow part of a case).
        let mut current = edb.clone();
        let mut steps: Vec<(Update, Relations)> = Vec::new();
        for batch in batches {
            let update = batch_update(maintained_program, batch, &mut current);
            let expected = oracle(maintained_program, &current);
            steps.push((update, expected));
        }
        // `Auto` twice: as on any small state (ranked, or only insertions), and deciding as
        // on a large one, where batches deleting a twentieth of the input are recomputed
        // and over-deletion past its budget gives way to recomputation.
        for (maintenance, min_budget) in [
            (Maintenance::Dred, None),
            (Maintenance::Ranked, None),
            (Maintenance::Auto, None),
            (Maintenance::Auto, Some(0)),
        ] {
            let plan = plan::plan_program(maintained_program);
            let db = database(maintained_program, &edb);
            let mut state = Maintained::try_with_threads(plan, maintained_program, db, maintenance, threads).unwrap();
            if let Some(firings) = min_budget {
                state.set_auto_min_budget(firings);
            }
            for (update, expected) in &steps {
                let report = state.apply(update);
                // Negated atoms are maintained too: only `Auto` may recompute a batch, or
                // any strategy one of a program with subsumption.
                if maintenance != Maintenance::Auto && maintained_program.dominances.is_empty() {
                    prop_assert_ne!(report.strategy, exec::MaintainedBy::Recompute, "{}", text);
                }
                prop_assert_eq!(
                    &relations_of(maintained_program, state.db()),
                    expected,
                    "{:?} after {:?}\n{}",
                    maintenance,
                    update,
                    text
                );
            }
        }
    }
    Ok(())
}

fn batches() -> impl Strategy<Value = Vec<Batch>> {
    proptest::collection::vec(proptest::collection::vec((any::<bool>(), input_fact()), 1..6), 1..4)
}

/// The engines, the proofs and maintenance of `text` each agree with the oracle.
fn everything_agrees(
    text: &str,
    picks: &[(prop::sample::Index, [usize; 3])],
    batches: &[Batch],
    split: bool,
) -> Result<(), TestCaseError> {
    engines_agree(text, picks)?;
    proofs_hold(text, picks)?;
    maintenance_agrees(text, picks, batches, split)
}

/// Every derived fact of the evaluation has a proof, and every step of it holds in the
/// oracle's model: its fact and its body facts are there, each comparison leaf holds of
/// its values and no fact matches a negated leaf's pattern; the leaves are as many as
/// the rule's negations and comparisons.
fn proofs_hold(text: &str, picks: &[(prop::sample::Index, [usize; 3])]) -> Result<(), TestCaseError> {
    let (program, edb) = compile(text, picks);
    let expected = oracle(&program, &edb);
    let options = EvalOptions { engine: NativeEngine::Seminaive, ..EvalOptions::default() };
    let plan = plan::plan_program(&program);
    let eval = exec::evaluate(&plan, &program, evaluated_database(&program, &plan, &edb), options);
    let mut explainer = Explainer::new(&program, &eval.db);
    for rule in &program.rules {
        let pred = rule.head.pred;
        for tuple in &expected[&pred] {
            let proof = explainer.prove(pred, tuple);
            let Some(proof) = proof else { return Err(TestCaseError::fail(format!("no proof of {tuple:?}\n{text}"))) };
            for node in &proof.nodes {
                prop_assert!(expected[&node.pred].contains(&node.tuple), "{:?} is no fact\n{}", node, text);
                let Step::Rule { rule: id, body, leaves } = &node.step else { continue };
                let r = program.rule(*id);
                prop_assert_eq!(leaves.len(), r.negated.len() + r.comparisons.len() + r.generators.len(), "{}", text);
                prop_assert_eq!(body.len(), r.body.len(), "{}", text);
                for leaf in leaves {
                    match leaf {
                        Leaf::Absent { pred, pattern, .. } => {
                            let blocked = expected[pred]
                                .iter()
                                .any(|t| pattern.iter().zip(t).all(|(p, v)| p.is_none_or(|p| p == *v)));
                            prop_assert!(!blocked, "{:?} is blocked\n{}", leaf, text);
                        }
                        Leaf::Compared { comparison, left, right, .. } => {
                            let c = &r.comparisons[*comparison];
                            prop_assert!(compare(&program, c, *left, *right), "{:?} fails\n{}", leaf, text);
                        }
                        Leaf::Generated { value, bounds, .. } => {
                            let (from, to, step) =
                                (bounds[0] as i32, bounds[1] as i32, bounds.get(2).map(|&s| s as i32));
                            prop_assert!(
                                range_values(from, to, step).contains(&(*value as i32)),
                                "{:?} fails\n{}",
                                leaf,
                                text
                            );
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn every_fact_of_a_stratified_program_has_a_proof_that_holds_in_the_oracle(
        text in stratified_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
    ) {
        proofs_hold(&text, &picks)?;
    }

    #[test]
    fn engines_and_the_magic_rewrite_agree_with_the_oracle(
        text in program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
    ) {
        engines_agree(&text, &picks)?;
    }

    #[test]
    fn engines_and_the_magic_rewrite_agree_with_the_oracle_under_negation_and_comparisons(
        text in stratified_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
    ) {
        engines_agree(&text, &picks)?;
    }

    #[test]
    fn every_fact_of_a_program_with_arithmetic_has_a_proof_that_holds_in_the_oracle(
        text in arithmetic_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
    ) {
        proofs_hold(&text, &picks)?;
    }

    #[test]
    fn engines_and_the_magic_rewrite_agree_with_the_oracle_under_arithmetic(
        text in arithmetic_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
    ) {
        engines_agree(&text, &picks)?;
    }

    #[test]
    fn both_maintenance_strategies_agree_with_the_oracle_under_arithmetic(
        text in arithmetic_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
        batches in batches(),
        split in any::<bool>(),
    ) {
        maintenance_agrees(&text, &picks, &batches, split)?;
    }

    #[test]
    fn engines_and_the_magic_rewrite_agree_with_the_oracle_over_made_texts(
        text in string_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
    ) {
        engines_agree(&text, &picks)?;
    }

    #[test]
    fn every_fact_of_a_program_over_made_texts_has_a_proof_that_holds_in_the_oracle(
        text in string_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
    ) {
        proofs_hold(&text, &picks)?;
    }

    #[test]
    fn both_maintenance_strategies_agree_with_the_oracle_over_made_texts(
        text in string_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
        batches in batches(),
        split in any::<bool>(),
    ) {
        maintenance_agrees(&text, &picks, &batches, split)?;
    }

    #[test]
    fn engines_and_the_magic_rewrite_agree_with_the_oracle_over_records(
        text in record_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
    ) {
        engines_agree(&text, &picks)?;
    }

    #[test]
    fn every_fact_of_a_program_over_records_has_a_proof_that_holds_in_the_oracle(
        text in record_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
    ) {
        proofs_hold(&text, &picks)?;
    }

    #[test]
    fn both_maintenance_strategies_agree_with_the_oracle_over_records(
        text in record_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
        batches in batches(),
        split in any::<bool>(),
    ) {
        maintenance_agrees(&text, &picks, &batches, split)?;
    }

    #[test]
    fn both_maintenance_strategies_agree_with_the_oracle(
        text in program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
        batches in batches(),
        split in any::<bool>(),
    ) {
        maintenance_agrees(&text, &picks, &batches, split)?;
    }

    #[test]
    fn both_maintenance_strategies_agree_with_the_oracle_under_negation_and_comparisons(
        text in stratified_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
        batches in batches(),
        split in any::<bool>(),
    ) {
        maintenance_agrees(&text, &picks, &batches, split)?;
    }
}

/// A program over floats (made by `to_float`, as the dlc dialect writes no float
/// constant): arithmetic, a division by zero (infinities, and "not a number" of `0 / 0`),
/// `max` meeting "not a number", a negation and a comparison of floats (`W != W` holds of
/// "not a number" only), a conversion back to a number, and a recursion a float bound
/// stops.
const FLOAT_PROGRAM: &str = "\
p0(X, W) <- e0(X, Y), X > -5, Y > -5, W = to_float(Y) * 2 - 1
p1(W) <- e1(Y), Y < 5, W = (to_float(Y) + 1) / (to_float(Y) + 1)
p1(W) <- e3(_, _, Z), Z < 5, W = to_float(Z) / 0
p3(X, N, W) <- p0(X, W), N = to_number(W / 2), W <= 3, !p1(W)
p4(X, V) <- p0(X, W), p1(U), V = max(W, U) ^ 2 + to_float(X), V != 9
p4(X, V) <- p4(X, W), V = W / 2, V >= 1
p2() <- p1(W), W != W
?- p4(X, V).
";

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn engines_maintenance_and_proofs_agree_with_the_oracle_over_floats(
        picks in proptest::collection::vec(input_fact(), 0..24),
        batches in batches(),
        split in any::<bool>(),
    ) {
        engines_agree(FLOAT_PROGRAM, &picks)?;
        proofs_hold(FLOAT_PROGRAM, &picks)?;
        maintenance_agrees(FLOAT_PROGRAM, &picks, &batches, split)?;
    }
}

/// A Soufflé program with subsumption of the well-behaved shape, each relation
/// dominated on one column by rules monotone in it: the shortest distances `p3` (a
/// path's length bounded, so a maximum would end too; weights below 0 left out, so a
/// cycle never shortens a path), optionally the nearest nodes `p4` from them, a relation
/// `p1` reading those, and the best value `p0` a node reaches over `e0`, by a body of
/// comparisons, of an atom of a lower level, or of an atom of its own recursion and a
/// negation; strict or not, with a random query.
fn subsumption_program_text() -> impl Strategy<Value = String> {
    let query = prop::sample::select(vec![
        "p3(x, y, d)",
        "p3(1, y, d)",
        "p3(x, 2, d)",
        "p4(x, y, d)",
        "p4(-1, y, d)",
        "p1(x)",
        "p0(x, v)",
        "p0(2, v)",
    ]);
    (any::<bool>(), 1..6i32, any::<bool>(), any::<bool>(), 0..3usize, query).prop_map(
        |(strict, bound, nearest, reaching, body, query)| {
            let op = if strict { "<" } else { "<=" };
            let mut text = String::from(
                ".decl e0(x:number, y:number)\n.decl e1(x:number)\n.decl e3(x:number, y:number, w:number)\n\
                 .decl p0(x:number, v:number)\n.decl p1(x:number)\n\
                 .decl p3(x:number, y:number, d:number)\n.decl p4(x:number, y:number, d:number)\n\
                 p3(x, y, w) :- e3(x, y, w), w >= 0.\np3(x, x, 0) :- e1(x).\n",
            );
            text += &format!("p3(x, z, d + w) :- p3(x, y, d), e3(y, z, w), w >= 0, d + w <= {bound}.\n");
            text += &format!("p3(x, y, d1) <= p3(x, y, d2) :- d2 {op} d1.\n");
            text += "p4(x, y, d) :- p3(x, y, d).\np1(x) :- p4(x, _, _).\n";
            if nearest {
                text += "p4(x, y1, d1) <= p4(x, y2, d2) :- d2 < d1.\n";
            }
            text += "p0(x, v) :- e0(x, v).\n";
            if reaching {
                text += "p0(x, v) :- e0(x, y), p0(y, v).\n";
            }
            // The order of `p0`'s values as a comparison, as a relation of a lower level
            // (the values `e0` gives, all `p0` holds), or as a comparison restricted by
            // a negation, with an atom of `p0`'s own recursion: each an order, so each
            // reaches the same relation semi-naively as naively.
            text += &match body {
                0 => format!("p0(x, v1) <= p0(x, v2) :- v1 {op} v2.\n"),
                1 => format!(
                    ".decl p2(a:number, b:number)\np2(a, b) :- e0(_, a), e0(_, b), a {op} b.\n\
                     p0(x, v1) <= p0(x, v2) :- p2(v1, v2).\n"
                ),
                _ => format!("p0(x, v1) <= p0(x, v2) :- p0(_, v2), v1 {op} v2, !e1(v2).\n"),
            };
            text += &format!("?- {query}.\n");
            text
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn engines_maintenance_and_proofs_agree_with_the_oracle_under_subsumption(
        text in subsumption_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
        batches in batches(),
        split in any::<bool>(),
    ) {
        everything_agrees(&text, &picks, &batches, split)?;
    }
}

/// A Soufflé program with recursive `min` and `max` (docs/semantics.md, Recursive `min`
/// and `max`): the shortest distances `p3` from each node of `e1` over the non-negative
/// weights of `e3` (so no cycle shortens a path), seeded by the edges or not, and the
/// least or greatest label `p0` each node reaches over `e0`, with a random query.
/// Lowering makes each a lattice relation, which the oracle evaluates as the naive
/// iteration of the lattice: every round over all facts, then the dominated facts gone.
fn recursive_min_program_text() -> impl Strategy<Value = String> {
    let query = prop::sample::select(vec!["p3(x, y, d)", "p3(1, y, d)", "p3(x, 2, d)", "p0(x, v)", "p0(2, v)"]);
    (any::<bool>(), any::<bool>(), any::<bool>(), query).prop_map(|(seeded, greatest, from_edges, query)| {
        let mut text = String::from(
            ".decl e0(x:number, y:number)\n.decl e1(x:number)\n.decl e3(x:number, y:number, w:number)\n\
             .decl p0(x:number, v:number)\n.decl p3(x:number, y:number, d:number)\n\
             p3(x, x, 0) :- e1(x).\n\
             p3(x, z, d) :- d = min d0 + w : { p3(x, y, d0), e3(y, z, w), w >= 0 }.\n",
        );
        if seeded {
            text += "p3(x, y, w) :- e3(x, y, w), w >= 0.\n";
        }
        text += if from_edges { "p0(x, v) :- e0(x, v).\n" } else { "p0(x, x) :- e1(x).\n" };
        let op = if greatest { "max" } else { "min" };
        text += &format!("p0(y, l) :- l = {op} l0 : {{ p0(x, l0), e0(x, y) }}.\n?- {query}.\n");
        text
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn engines_maintenance_and_proofs_agree_with_the_oracle_under_recursive_min(
        text in recursive_min_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
        batches in batches(),
        split in any::<bool>(),
    ) {
        everything_agrees(&text, &picks, &batches, split)?;
    }
}

/// A Soufflé program with the dominance the differential engine runs (its `check`): the
/// lattice relations of `recursive_min_program_text`, and subsumptive clauses on
/// relations outside recursion — the nearest nodes `p4` of the shortest distances, the
/// best value `p0` of each node (its ties to the least, or to none when `mutual`: two
/// facts that dominate each other both go) — with a random query.
fn dataflow_subsumption_program_text() -> impl Strategy<Value = String> {
    let query =
        prop::sample::select(vec!["p3(x, y, d)", "p4(x, y, d)", "p4(-1, y, d)", "p1(x)", "p0(x, v)", "p0(2, v)"]);
    (recursive_min_program_text(), any::<bool>(), any::<bool>(), any::<bool>(), query).prop_map(
        |(lattices, strict, nearest, mutual, query)| {
            let op = if strict { "<" } else { "<=" };
            // The lattices' program without its query, `p0` renamed `p5`.
            let lattices = lattices.split("?-").next().unwrap_or_default().replace("p0", "p5");
            let mut text = lattices
                + ".decl p0(x:number, v:number)\n.decl p1(x:number)\n\
                .decl p4(x:number, y:number, d:number)\n\
                p4(x, y, d) :- p3(x, y, d).\np1(x) :- p4(x, _, _).\np0(x, v) :- e0(x, v).\n\
                p0(x, v) :- p5(x, v), v > 0.\n";
            if nearest {
                text += "p4(x, y1, d1) <= p4(x, y2, d2) :- d2 < d1.\n";
            }
            text += &format!("p0(x, v1) <= p0(x, v2) :- v1 {op} v2.\n");
            if mutual {
                text += "p0(x, v1) <= p0(x, v2) :- v1 != v2.\n";
            }
            text + &format!("?- {query}.\n")
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// The differential engine on recursive `min` and `max`, one and two workers, input
    /// rows placed at their owner or not, through batches that bring worse values back.
    #[test]
    fn the_differential_engine_agrees_with_the_oracle_under_recursive_min(
        text in recursive_min_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
        batches in batches(),
        workers in 1usize..3,
        placed in any::<bool>(),
    ) {
        dataflow_agrees(&text, &picks, &batches, workers, placed)?;
    }

    /// The differential engine on the subsumption it runs, one and two workers.
    #[test]
    fn the_differential_engine_agrees_with_the_oracle_under_subsumption(
        text in dataflow_subsumption_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
        batches in batches(),
        workers in 1usize..3,
    ) {
        everything_agrees(&text, &picks, &batches, false)?;
        dataflow_agrees(&text, &picks, &batches, workers, false)?;
    }
}

/// The relations the differential engine holds: its derived rows as the epochs so far
/// changed them, and the input as given.
struct Dataflow {
    flow: flow::Flow,
    derived: BTreeSet<(PredId, Vec<u32>)>,
}

impl Dataflow {
    fn apply(&mut self, deletes: &[(PredId, Vec<u32>)], inserts: &[(PredId, Vec<u32>)]) {
        let slices = |changes: &[(PredId, Vec<u32>)]| changes.iter().map(|(p, t)| (*p, t.clone())).collect::<Vec<_>>();
        let (deletes, inserts) = (slices(deletes), slices(inserts));
        let (deletes, inserts) =
            (deletes.iter().map(|(p, t)| (*p, t.as_slice())), inserts.iter().map(|(p, t)| (*p, t.as_slice())));
        // With placement at the owner, set semantics are kept inside the dataflow.
        let applied = match self.flow.placed() {
            true => self.flow.request(deletes, inserts, true),
            false => self.flow.apply(deletes, inserts),
        }
        .expect("the workers run");
        for (pred, rows) in applied.derived_removed {
            rows.iter().for_each(|row| assert!(self.derived.remove(&(pred, row.to_vec())), "a removed row was there"));
        }
        for (pred, rows) in applied.derived_added {
            rows.iter().for_each(|row| assert!(self.derived.insert((pred, row.to_vec())), "an added row was new"));
        }
    }

    fn relations(&self, program: &Program, input: &BTreeSet<(PredId, Vec<u32>)>) -> Relations {
        let mut relations: Relations = program.pred_ids().map(|p| (p, BTreeSet::new())).collect();
        for (pred, tuple) in self.derived.iter().chain(input) {
            relations.entry(*pred).or_default().insert(tuple.clone());
        }
        relations
    }
}

/// The differential engine, over the original program and both magic rewrites, holds
/// exactly the oracle's relations after the first epoch (the input) and after every
/// batch of random insertions and deletions.
fn dataflow_agrees(
    text: &str,
    picks: &[(prop::sample::Index, [usize; 3])],
    batches: &[Batch],
    workers: usize,
    placed: bool,
) -> Result<(), TestCaseError> {
    let (program, edb) = compile(text, picks);
    let magic = magic::rewrite(&program, program.query.as_ref().unwrap()).program;
    let subsumed = subsumed(&program);
    for evaluated in [&program, &magic, &subsumed] {
        let plan = plan::plan_program(evaluated);
        let options = flow::Options { workers, cluster: None };
        let flow = match placed {
            true => flow::Flow::start_placed(&plan, evaluated, options),
            false => flow::Flow::start(&plan, evaluated, options),
        }
        .unwrap_or_else(|e| panic!("{e:?}\n{text}"));
        let mut dataflow = Dataflow { flow, derived: BTreeSet::new() };
        let mut current = edb.clone();
        let mut input: Vec<_> = edb.iter().cloned().collect();
        if placed {
            // Overlapping shares: every fact read twice, as by two readers.
            input.extend(edb.iter().cloned());
        }
        dataflow.apply(&[], &input);
        prop_assert_eq!(
            &dataflow.relations(evaluated, &current),
            &oracle(evaluated, &current),
            "{} workers\n{}",
            workers,
            text
        );
        for batch in batches {
            let (mut deletes, mut inserts) = (Vec::new(), Vec::new());
            for (insert, pick) in batch {
                let Some(fact) = fact(evaluated, pick) else { continue };
                // Repeats and deletes of absent facts are sent on: the engine must
                // keep set semantics itself. Deletes apply before inserts.
                if *insert {
                    inserts.push(fact)
                } else {
                    deletes.push(fact)
                }
            }
            for fact in &deletes {
                current.remove(fact);
            }
            current.extend(inserts.iter().cloned());
            dataflow.apply(&deletes, &inserts);
            prop_assert_eq!(
                &dataflow.relations(evaluated, &current),
                &oracle(evaluated, &current),
                "{} workers after -{:?} +{:?}\n{}",
                workers,
                deletes,
                inserts,
                text
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// The differential engine with one and two workers, on positive programs.
    #[test]
    fn the_differential_engine_agrees_with_the_oracle(
        text in program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
        batches in batches(),
        workers in 1usize..3,
    ) {
        dataflow_agrees(&text, &picks, &batches, workers, false)?;
    }

    /// The differential engine with input rows placed at their owner worker (as a
    /// cluster reading shares runs it), one to three workers, every fact of the input
    /// read twice: set semantics kept inside the dataflow, through random batches of
    /// repeated inserts and deletes of absent facts, on stratified programs.
    #[test]
    fn the_differential_engine_with_placement_at_the_owner_agrees_with_the_oracle(
        text in stratified_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
        batches in batches(),
        workers in 1usize..4,
    ) {
        dataflow_agrees(&text, &picks, &batches, workers, true)?;
    }

    /// The differential engine with one and two workers, on stratified programs with
    /// negated atoms (anti-joins, inside recursive strata too), comparisons and
    /// assignments; under negation a deleted input fact can make facts appear.
    #[test]
    fn the_differential_engine_agrees_with_the_oracle_under_negation_and_comparisons(
        text in stratified_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
        batches in batches(),
        workers in 1usize..3,
    ) {
        dataflow_agrees(&text, &picks, &batches, workers, false)?;
    }

    /// The differential engine with one and two workers, on stratified programs whose
    /// assignments, comparisons and negated atoms compute (computed columns and
    /// filters over them; a division by zero drops the binding), from scratch and after
    /// random batches.
    #[test]
    fn the_differential_engine_agrees_with_the_oracle_under_arithmetic(
        text in arithmetic_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
        batches in batches(),
        workers in 1usize..3,
    ) {
        dataflow_agrees(&text, &picks, &batches, workers, false)?;
    }

    /// The differential engine on programs over texts made as rules run, with one and
    /// two workers (which share one value store).
    #[test]
    fn the_differential_engine_agrees_with_the_oracle_over_records(
        text in record_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
        batches in batches(),
        workers in 1usize..3,
    ) {
        dataflow_agrees(&text, &picks, &batches, workers, false)?;
    }

    #[test]
    fn the_differential_engine_agrees_with_the_oracle_over_made_texts(
        text in string_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..24),
        batches in batches(),
        workers in 1usize..3,
    ) {
        dataflow_agrees(&text, &picks, &batches, workers, false)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// `dlc -D -` never panics, whatever the query asks for (constants the data lacks
    /// included), and writes exactly the oracle's answers in the documented order, under
    /// every magic mode and every engine.
    #[test]
    fn output_files_hold_the_oracles_answers(text in output_program_text()) {
        let (program, diagnostics) = syntax::parse_program(&text, FileId(0));
        let program = program.unwrap_or_else(|| panic!("generated program must compile: {diagnostics:?}\n{text}"));
        let edb = program.facts.iter().map(|f| (f.pred, f.values.clone())).collect();
        let queried = program.query.as_ref().unwrap().atom.pred;
        let mut expected: Vec<Vec<String>> = query_answers(&program, &oracle(&program, &edb))
            .iter()
            .map(|t| t.iter().enumerate().map(|(i, &v)| program.value_text(program.value(queried, i, v))).collect())
            .collect();
        expected.sort_by(|a, b| a.iter().zip(b).map(|(x, y)| output_order(x, y)).find(|o| o.is_ne()).unwrap_or(std::cmp::Ordering::Equal));
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("oracle-output");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!("p{}.dl", std::process::id()));
        std::fs::write(&file, &text).unwrap();
        let file = file.display().to_string();
        for flags in [
            &["--magic", "auto"][..],
            &["--magic", "off"],
            &["--magic", "on"],
            &["--engine", "reference"],
            &["--engine", "differential", "--workers", "2"],
        ] {
            let mut args = vec!["dlc", file.as_str(), "-D", "-", "--no-timing"];
            args.extend_from_slice(flags);
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let code = dlc::run(args, &mut &b""[..], &mut out, &mut err);
            let (out, err) = (String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap());
            prop_assert_eq!(code, 0, "{:?}: {}\n{}", flags, err, text);
            prop_assert_eq!(framed_rows(&out), expected.clone(), "{:?}\n{}", flags, text);
        }
    }
}

/// The text of the input fact `pick` stands for: `e0(-1,2)`.
fn fact_text((which, values): &(prop::sample::Index, [usize; 3])) -> String {
    let (name, arity) = EDB[which.index(EDB.len())];
    let args: Vec<Arg> = values[..arity].iter().map(|&c| Arg::Const(c)).collect();
    atom_text_over(name, &args, CONSTS)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// Through the binary: a random stratified program with negations and comparisons,
    /// its facts inline, maintained over random batches (`--updates`) by every strategy
    /// and by the differential engine on two workers, through the original and the magic
    /// program, each batch checked against a recomputation (`--check` exits with status
    /// 3 on any difference).
    #[test]
    fn check_passes_after_every_batch_under_negation(
        text in stratified_program_text(),
        picks in proptest::collection::vec(input_fact(), 0..16),
        batches in batches(),
    ) {
        let mut program = text.clone();
        program.extend(picks.iter().map(|pick| fact_text(pick) + ".\n"));
        let updates: String = batches
            .iter()
            .map(|batch| {
                let lines: String = batch
                    .iter()
                    .map(|(insert, pick)| format!("{}{}.\n", if *insert { '+' } else { '-' }, fact_text(pick)))
                    .collect();
                lines + ";\n"
            })
            .collect();
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("oracle-check");
        std::fs::create_dir_all(&dir).unwrap();
        let (file, batch_file) = (dir.join(format!("p{}.dl", std::process::id())), dir.join(format!("p{}.updates", std::process::id())));
        std::fs::write(&file, &program).unwrap();
        std::fs::write(&batch_file, &updates).unwrap();
        let (file, batch_file) = (file.display().to_string(), batch_file.display().to_string());
        for maintenance in ["auto", "dred", "ranked"] {
            for magic in ["auto", "off", "on"] {
                let args = ["dlc", file.as_str(), "--updates", batch_file.as_str(), "--check", "--no-timing",
                    "--maintenance", maintenance, "--magic", magic];
                let (mut out, mut err) = (Vec::new(), Vec::new());
                let code = dlc::run(args.to_vec(), &mut &b""[..], &mut out, &mut err);
                let (out, err) = (String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap());
                prop_assert_eq!(code, 0, "{} {}: {}\n{}\n{}\n{}", maintenance, magic, err, out, program, updates);
                prop_assert!(out.contains("batch 1:"), "{}", out);
            }
        }
        // The dataflow applies each batch as an epoch; `--check` compares its relations
        // with the native engine's recomputation.
        for magic in ["auto", "off", "on"] {
            let args = ["dlc", file.as_str(), "--updates", batch_file.as_str(), "--check", "--no-timing",
                "--engine", "differential", "--workers", "2", "--magic", magic];
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let code = dlc::run(args.to_vec(), &mut &b""[..], &mut out, &mut err);
            let (out, err) = (String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap());
            prop_assert_eq!(code, 0, "differential {}: {}\n{}\n{}\n{}", magic, err, out, program, updates);
            prop_assert!(out.contains("batch 1:"), "{}", out);
        }
    }
}

/// The magic rewrite of `program` for its query, with adornment subsumption.
fn subsumed(program: &ir::Program) -> ir::Program {
    let options = magic::RewriteOptions { subsume: true, ..magic::RewriteOptions::default() };
    magic::rewrite_with(program, program.query.as_ref().unwrap(), options).expect("within the default limit").program
}

#[test]
fn the_oracle_computes_spec_example_1() {
    let text = "R(X,Y) <- E(X,Y)\nR(X,Z) <- R(X,Y), R(Y,Z)\n?- R(a,Y).\n\
                E(a,b).\nE(b,c).\nE(c,b).\nE(c,d).\nE(a,e).\nE(e,d).\nE(u,v).\nE(v,w).\nE(w,u).";
    let (program, _) = syntax::parse_program(text, FileId(0));
    let program = program.unwrap();
    let edb = program.facts.iter().map(|f| (f.pred, f.values.clone())).collect();
    let relations = oracle(&program, &edb);
    let r = program.lookup_source("R").unwrap();
    assert_eq!(relations[&r].len(), 20);
    assert_eq!(query_answers(&program, &relations).len(), 4);
    let magic = magic::rewrite(&program, program.query.as_ref().unwrap()).program;
    let magic_relations = oracle(&magic, &edb);
    let sizes: usize =
        magic.pred_ids().filter(|&p| magic.pred(p).kind == ir::PredKind::Idb).map(|p| magic_relations[&p].len()).sum();
    assert_eq!(sizes, 16, "11 answers and 5 demands");
}

// Aggregates. The oracle above evaluates IR, where lowering has already turned each
// aggregate into rules and a reduction; so programs with aggregates are generated as a
// description (`AggregateCase`) that this oracle evaluates straight from the source
// semantics — for each group, the distinct bindings of the aggregate's body, reduced —
// over the input facts alone, sharing nothing with lowering, plans or engines.

/// The values of the input relations `E(X, Y)` and `N(X)` of an aggregate case.
const AGG_VALUES: i32 = 4;

/// One aggregate program: `A` aggregates, over the rows of a body reading `R` (the
/// input `E`, or `P`, its transitive closure), per key `X` of `N` or over everything.
/// A `correlated` case is the other shape: `A` is recursive, and its aggregate's body
/// reads `A`'s variable `X` only in a comparison (see [`AggregateCase::correlated_text`]).
#[derive(Clone, Debug)]
struct AggregateCase {
    op: usize,
    keyed: bool,
    closure: bool,
    body: usize,
    value: usize,
    usage: usize,
    correlated: bool,
    /// Keyed by `X = max W : { N(W) }` instead of `N(X)`: a group key bound by another
    /// aggregate's value, which is computed first.
    chained: bool,
}

const AGG_OPS: &[&str] = &["count", "sum", "min", "max"];

/// `op` of `values` by its definition (32-bit sums wrap); none for `min` or `max` of no
/// values.
fn reduced(op: &str, values: &[i32]) -> Option<i32> {
    match op {
        "count" => Some(values.len() as i32),
        "sum" => Some(values.iter().fold(0i32, |a, &v| a.wrapping_add(v))),
        "min" => values.iter().copied().min(),
        _ => values.iter().copied().max(),
    }
}

fn aggregate_case() -> impl Strategy<Value = AggregateCase> {
    (0..AGG_OPS.len(), any::<bool>(), any::<bool>(), 0..4usize, 0..3usize, 0..3usize, any::<bool>(), any::<bool>())
        .prop_map(|(op, keyed, closure, body, value, usage, correlated, chained)| AggregateCase {
            op,
            keyed,
            closure,
            body,
            value,
            usage,
            correlated,
            chained,
        })
}

/// The bound below which a correlated case's `A(X)` steps on.
const AGG_STEP_BELOW: i32 = 12;

impl AggregateCase {
    /// The program's text (dlc dialect), query `A`.
    fn text(&self) -> String {
        if self.correlated {
            return self.correlated_text();
        }
        let r = if self.closure { "P" } else { "E" };
        let x = if self.keyed { "X" } else { "U" };
        let body = match self.body {
            0 => format!("{r}({x}, Y)"),
            1 => format!("{r}({x}, Y), Y > 1"),
            2 => format!("{r}({x}, Y), !E(Y, {x})"),
            _ => format!("{r}({x}, Y), {r}(Y, _)"),
        };
        let op = AGG_OPS[self.op];
        let value = match (op, self.value) {
            ("count", _) => String::new(),
            (_, 0) => "Y ".into(),
            (_, 1) => format!("Y * 2 + {x} "),
            _ => "Y - 3 ".into(),
        };
        let aggregate = format!("{op} {value}: {{ {body} }}");
        let key = match (self.keyed, self.chained) {
            (true, false) => "N(X), ",
            (true, true) => "X = max W : { N(W) }, ",
            (false, _) => "",
        };
        let head_key = if self.keyed { "X, " } else { "" };
        let rule = match self.usage {
            0 => format!("A({head_key}V) <- {key}V = {aggregate}"),
            1 => format!("A({head_key}V) <- {key}V = {aggregate} + 1"),
            _ => format!("A({head_key}1) <- {key}{aggregate} > 1"),
        };
        // `E` may be empty and `N` unused: both are declared by a fact no case reads.
        let b = format!("B(W) <- W = sum V : A({head_key}V)");
        format!("E(9, 9).\nN(9).\nP(X, Y) <- E(X, Y)\nP(X, Z) <- P(X, Y), E(Y, Z)\n{rule}\n{b}\n?- A({head_key}V).\n")
    }

    /// A correlated case's text: `A` starts from `N` and -1 (whose group is empty for
    /// the first two bodies) and steps from each `X` below
    /// [`AGG_STEP_BELOW`] to the aggregate of the rows of `E` (or `E` and `P`) that pass a
    /// comparison with `X`, a value per binding of `X`, as Soufflé 2.5 evaluates it.
    fn correlated_text(&self) -> String {
        let body = match self.body % 3 {
            0 => "E(Y, W), W < X",
            1 => "E(Y, W), Y <= X, W > 0",
            _ => "E(Y, W), P(W, _), Y != X",
        };
        let op = AGG_OPS[self.op];
        let value = match (op, self.value) {
            ("count", _) => "",
            (_, 0) => "W ",
            (_, 1) => "W + Y ",
            _ => "Y - 3 ",
        };
        let aggregate = format!("{op} {value}: {{ {body} }}");
        let below = AGG_STEP_BELOW;
        let rule = match self.usage {
            0 => format!("A(V) <- A(X), X < {below}, V = {aggregate}"),
            1 => format!("A(V) <- A(X), X < {below}, V = {aggregate} + 1"),
            _ => format!("A(Z) <- A(X), X < {below}, {aggregate} > 1, Z = X + 1"),
        };
        format!(
            "E(9, 9).\nN(9).\nP(X, Y) <- E(X, Y)\nP(X, Z) <- P(X, Y), E(Y, Z)\nA(-1) <-\nA(X) <- N(X)\n{rule}\n\
             B(S) <- S = sum V : A(V)\n?- A(V).\n"
        )
    }

    /// A correlated case's `A` by the definition: the least fixpoint of its two rules,
    /// computed directly, each step's aggregate over the distinct rows of its body for
    /// that `X`.
    fn correlated_expected(&self, e: &BTreeSet<(i32, i32)>, n: &BTreeSet<i32>) -> BTreeSet<Vec<i32>> {
        let p = closure(e);
        // The distinct rows `(Y, W)` of the body for `x`: one atom's tuples, or the
        // bindings of the named variables of two.
        let rows = |x: i32| -> BTreeSet<(i32, i32)> {
            e.iter()
                .copied()
                .filter(|&(y, w)| match self.body % 3 {
                    0 => w < x,
                    1 => y <= x && w > 0,
                    _ => p.iter().any(|&(a, _)| a == w) && y != x,
                })
                .collect()
        };
        let reduce = |x: i32| -> Option<i32> {
            let values: Vec<i32> = rows(x)
                .into_iter()
                .map(|(y, w)| match self.value {
                    0 => w,
                    1 => w.wrapping_add(y),
                    _ => y.wrapping_sub(3),
                })
                .collect();
            reduced(AGG_OPS[self.op], &values)
        };
        let mut a: BTreeSet<i32> = n.clone();
        a.insert(-1);
        loop {
            let next: Vec<i32> = a
                .iter()
                .filter(|&&x| x < AGG_STEP_BELOW)
                .filter_map(|&x| {
                    let v = reduce(x)?;
                    match self.usage {
                        0 => Some(v),
                        1 => Some(v.wrapping_add(1)),
                        _ => (v > 1).then_some(x + 1),
                    }
                })
                .collect();
            let before = a.len();
            a.extend(next);
            if a.len() == before {
                break a.into_iter().map(|x| vec![x]).collect();
            }
        }
    }

    /// `A` of the input `e`, `n`, by the definition.
    fn expected(&self, e: &BTreeSet<(i32, i32)>, n: &BTreeSet<i32>) -> BTreeSet<Vec<i32>> {
        if self.correlated {
            return self.correlated_expected(e, n);
        }
        let r: BTreeSet<(i32, i32)> = if self.closure { closure(e) } else { e.clone() };
        // The distinct rows of the body for key `x` (every `x` when unkeyed): over one
        // atom the tuples it matches, over two (`R(X, Y), R(Y, _)`) the bindings of the
        // named variables, as Soufflé 2.5 has it.
        let rows = |key: Option<i32>| -> BTreeSet<(i32, i32, i32)> {
            let mut out = BTreeSet::new();
            for &(x, y) in r.iter().filter(|&&(x, _)| key.is_none_or(|k| k == x)) {
                match self.body {
                    0 => {
                        out.insert((x, y, 0));
                    }
                    1 if y > 1 => {
                        out.insert((x, y, 0));
                    }
                    2 if !e.contains(&(y, x)) => {
                        out.insert((x, y, 0));
                    }
                    3 if r.iter().any(|&(a, _)| a == y) => {
                        out.insert((x, y, 0));
                    }
                    _ => {}
                }
            }
            out
        };
        // The variables of the aggregated value are the aggregate's own (Soufflé 2.5's
        // scoping): in `sum Y * 2 + X : { E(X, Y) }` the `X` is not the key bound by
        // `N(X)`, so every group sums the rows of every `X`.
        let value_names_x = self.value == 1 && AGG_OPS[self.op] != "count";
        let reduce = |key: Option<i32>| -> Option<i32> {
            let values: Vec<i32> = rows(if value_names_x { None } else { key })
                .into_iter()
                .map(|(x, y, _)| match self.value {
                    0 => y,
                    1 => y.wrapping_mul(2).wrapping_add(x),
                    _ => y.wrapping_sub(3),
                })
                .collect();
            reduced(AGG_OPS[self.op], &values)
        };
        let keys: Vec<Option<i32>> = match (self.keyed, self.chained) {
            (true, false) => n.iter().map(|&x| Some(x)).collect(),
            // The one group of the largest `N`, none when `N` is empty.
            (true, true) => n.iter().max().map(|&x| Some(x)).into_iter().collect(),
            (false, _) => vec![None],
        };
        let mut out = BTreeSet::new();
        for key in keys {
            let Some(v) = reduce(key) else { continue };
            let fact = match self.usage {
                0 => Some(v),
                1 => Some(v.wrapping_add(1)),
                _ => (v > 1).then_some(1),
            };
            if let Some(fact) = fact {
                out.insert(key.into_iter().chain([fact]).collect());
            }
        }
        out
    }
}

/// A generated program over the inputs `E(X, Y)` and `N(X)` whose query relation `A` a
/// direct computation defines, and whose `B` sums `A`'s last column.
trait DefinedCase {
    /// The program's text (dlc dialect), query `A`.
    fn text(&self) -> String;
    /// `A` of the input `e`, `n`, by the definition.
    fn expected(&self, e: &BTreeSet<(i32, i32)>, n: &BTreeSet<i32>) -> BTreeSet<Vec<i32>>;
    /// Whether every maintenance strategy recomputes an update (a reduction in a recursive
    /// stratum).
    fn recomputed(&self) -> bool;
    /// `B`'s one value given `A`: the 32-bit wrapping sum of `A`'s last column.
    fn b(&self, a: &BTreeSet<Vec<i32>>) -> u32 {
        a.iter().fold(0i32, |s, a| s.wrapping_add(*a.last().unwrap())) as u32
    }
}

impl DefinedCase for AggregateCase {
    fn text(&self) -> String {
        AggregateCase::text(self)
    }

    fn expected(&self, e: &BTreeSet<(i32, i32)>, n: &BTreeSet<i32>) -> BTreeSet<Vec<i32>> {
        AggregateCase::expected(self, e, n)
    }

    fn recomputed(&self) -> bool {
        self.correlated
    }
}

/// One program with an aggregate nested in another's body: per key `X` of `N`, the outer
/// aggregate (`count`, `sum` or `max`) runs over the `Y`s that `X` reaches by `E`, each
/// with `W`, the inner one (`count` or `sum`) over `Y`'s own edges — correlated with the
/// outer body's `Y`, and when `reads_key`, with the rule's `X` too (`Z != X`); `filtered`
/// keeps the `Y`s whose `W` passes 1.
#[derive(Clone, Debug)]
struct NestedCase {
    outer: usize,
    inner_sum: bool,
    reads_key: bool,
    filtered: bool,
}

fn nested_case() -> impl Strategy<Value = NestedCase> {
    (0..3usize, any::<bool>(), any::<bool>(), any::<bool>())
        .prop_map(|(outer, inner_sum, reads_key, filtered)| NestedCase { outer, inner_sum, reads_key, filtered })
}

impl DefinedCase for NestedCase {
    fn text(&self) -> String {
        let inner_body = if self.reads_key { "{ E(Y, Z), Z != X }" } else { "{ E(Y, Z) }" };
        let inner = if self.inner_sum { format!("sum Z : {inner_body}") } else { format!("count : {inner_body}") };
        let filter = if self.filtered { ", W > 1" } else { "" };
        let outer = ["count :", "sum W :", "max W :"][self.outer];
        format!("E(9, 9).\nN(9).\nA(X, V) <- N(X), V = {outer} {{ E(X, Y), W = {inner}{filter} }}\nB(S) <- S = sum V : A(_, V)\n?- A(K, V).\n")
    }

    fn expected(&self, e: &BTreeSet<(i32, i32)>, n: &BTreeSet<i32>) -> BTreeSet<Vec<i32>> {
        let mut out = BTreeSet::new();
        for &x in n {
            // Each distinct `Y` with its inner value (a function of `Y` and `X`).
            let ws: Vec<i32> = e
                .iter()
                .filter(|&&(a, _)| a == x)
                .map(|&(_, y)| {
                    let zs = e.iter().filter(|&&(b, z)| b == y && (!self.reads_key || z != x)).map(|&(_, z)| z);
                    match self.inner_sum {
                        true => zs.fold(0i32, i32::wrapping_add),
                        false => zs.count() as i32,
                    }
                })
                .filter(|&w| !self.filtered || w > 1)
                .collect();
            let value = match self.outer {
                0 => Some(ws.len() as i32),
                1 => Some(ws.iter().fold(0i32, |s, w| s.wrapping_add(*w))),
                _ => ws.iter().copied().max(),
            };
            out.extend(value.map(|v| vec![x, v]));
        }
        out
    }

    fn recomputed(&self) -> bool {
        false
    }
}

/// The values of Soufflé 2.5's `range(from, to, step)` (`step` none: 1 up to `to`, or -1
/// down to it), by its loop: from `from` while before `to`, each next value `step` on.
fn range_values(from: i32, to: i32, step: Option<i32>) -> Vec<i32> {
    let step = step.unwrap_or(if from <= to { 1 } else { -1 });
    let mut out = Vec::new();
    let mut x = from;
    match step.cmp(&0) {
        std::cmp::Ordering::Greater => {
            while x < to {
                out.push(x);
                x += step;
            }
        }
        std::cmp::Ordering::Less => {
            while to < x {
                out.push(x);
                x += step;
            }
        }
        std::cmp::Ordering::Equal if from != to => out.push(from),
        std::cmp::Ordering::Equal => {}
    }
    out
}

/// One program with `range`: `A` from ranges whose bounds the input gives, through
/// `shape`, with or without a `step` (-2..=2), its value used as is or in arithmetic.
#[derive(Clone, Debug)]
struct RangeCase {
    shape: usize,
    step: Option<i32>,
    plus_one: bool,
}

fn range_case() -> impl Strategy<Value = RangeCase> {
    (0..4usize, prop::option::of(-2..=2i32), any::<bool>()).prop_map(|(shape, step, plus_one)| RangeCase {
        shape,
        step,
        plus_one,
    })
}

/// The bound below which the recursive shape steps on.
const RANGE_STEP_BELOW: i32 = 6;

impl DefinedCase for RangeCase {
    fn text(&self) -> String {
        let step = self.step.map_or(String::new(), |k| format!(", {k}"));
        let v = if self.plus_one { "V + 1" } else { "V" };
        let rule = match self.shape {
            0 => format!("A(X, {v}) <- E(X, Y), V = range(X, Y{step})"),
            1 => format!("A(X, {v}) <- E(X, Y), V = range(Y * 2 - 3, X{step}), !N(V)"),
            2 => format!(
                "A(V, {}) <- N(X), V = range(0, X), W = range(V, X + 1{step})",
                if self.plus_one { "W + 1" } else { "W" }
            ),
            _ => format!("A(X) <- N(X)\nA({v}) <- A(X), X < {RANGE_STEP_BELOW}, V = range(X + 1, X + 3{step})"),
        };
        let head = if self.shape == 3 { "A(V)" } else { "A(X, V)" };
        let b = format!("B(S) <- S = sum V : {head}");
        format!("E(9, 9).\nN(9).\n{rule}\n{b}\n?- {head}.\n")
    }

    fn expected(&self, e: &BTreeSet<(i32, i32)>, n: &BTreeSet<i32>) -> BTreeSet<Vec<i32>> {
        let shift = i32::from(self.plus_one);
        match self.shape {
            0 => e
                .iter()
                .flat_map(|&(x, y)| range_values(x, y, self.step).into_iter().map(move |v| vec![x, v + shift]))
                .collect(),
            1 => e
                .iter()
                .flat_map(|&(x, y)| range_values(y * 2 - 3, x, self.step).into_iter().map(move |v| (x, v)))
                .filter(|(_, v)| !n.contains(v))
                .map(|(x, v)| vec![x, v + shift])
                .collect(),
            2 => n
                .iter()
                .flat_map(|&x| range_values(0, x, None).into_iter().map(move |v| (x, v)))
                .flat_map(|(x, v)| range_values(v, x + 1, self.step).into_iter().map(move |w| vec![v, w + shift]))
                .collect(),
            _ => {
                let mut a: BTreeSet<i32> = n.clone();
                loop {
                    let next: Vec<i32> = a
                        .iter()
                        .filter(|&&x| x < RANGE_STEP_BELOW)
                        .flat_map(|&x| range_values(x + 1, x + 3, self.step))
                        .map(|v| v + shift)
                        .collect();
                    let before = a.len();
                    a.extend(next);
                    if a.len() == before {
                        break a.into_iter().map(|x| vec![x]).collect();
                    }
                }
            }
        }
    }

    fn recomputed(&self) -> bool {
        false
    }
}

/// One program with `mean` (of floats: `to_float` of `E`'s numbers, as the dlc dialect
/// writes no float constant), per key `X` of `N` or over everything, its value used as
/// is, in arithmetic or in a comparison; `B` counts `A`.
#[derive(Clone, Debug)]
struct MeanCase {
    keyed: bool,
    filtered: bool,
    scaled: bool,
    usage: usize,
}

fn mean_case() -> impl Strategy<Value = MeanCase> {
    (any::<bool>(), any::<bool>(), any::<bool>(), 0..3usize).prop_map(|(keyed, filtered, scaled, usage)| MeanCase {
        keyed,
        filtered,
        scaled,
        usage,
    })
}

impl DefinedCase for MeanCase {
    fn text(&self) -> String {
        let (x, key, head_key) = if self.keyed { ("X", "N(X), ", "X") } else { ("U", "", "0") };
        let filter = if self.filtered { ", Y > 1" } else { "" };
        let value = if self.scaled { "to_float(Y) * 2 + 1" } else { "to_float(Y)" };
        let mean = format!("mean {value} : {{ E({x}, Y){filter} }}");
        let rule = match self.usage {
            0 => format!("A({head_key}, V) <- {key}V = {mean}"),
            1 => format!("A({head_key}, V) <- {key}V = {mean} + 1"),
            _ => format!("A({head_key}, 1) <- {key}{mean} > 1"),
        };
        format!("E(9, 9).\nN(9).\n{rule}\nB(C) <- C = count : A(_, _)\n?- A(K, V).\n")
    }

    fn expected(&self, e: &BTreeSet<(i32, i32)>, n: &BTreeSet<i32>) -> BTreeSet<Vec<i32>> {
        let keys: Vec<Option<i32>> = if self.keyed { n.iter().map(|&x| Some(x)).collect() } else { vec![None] };
        let mut out = BTreeSet::new();
        for key in keys {
            // The distinct rows of the one atom, each value a float: small integers, whose
            // float sum is exact in any order.
            let values: Vec<f32> = e
                .iter()
                .filter(|&&(x, y)| key.is_none_or(|k| k == x) && (!self.filtered || y > 1))
                .map(|&(_, y)| if self.scaled { y as f32 * 2.0 + 1.0 } else { y as f32 })
                .collect();
            if values.is_empty() {
                continue;
            }
            let mean = values.iter().sum::<f32>() / values.len() as f32;
            let value = match self.usage {
                0 => Some(mean.to_bits() as i32),
                1 => Some((mean + 1.0).to_bits() as i32),
                _ => (mean > 1.0).then_some(1),
            };
            if let Some(value) = value {
                out.insert(vec![key.unwrap_or(0), value]);
            }
        }
        out
    }

    fn recomputed(&self) -> bool {
        false
    }

    fn b(&self, a: &BTreeSet<Vec<i32>>) -> u32 {
        a.len() as u32
    }
}

/// The transitive closure of `e`.
fn closure(e: &BTreeSet<(i32, i32)>) -> BTreeSet<(i32, i32)> {
    let mut p = e.clone();
    loop {
        let next: BTreeSet<(i32, i32)> =
            p.iter().flat_map(|&(x, y)| e.iter().filter(move |&&(a, _)| a == y).map(move |&(_, z)| (x, z))).collect();
        let before = p.len();
        p.extend(next);
        if p.len() == before {
            break p;
        }
    }
}

/// The input facts of an aggregate case as IR tuples of `program`.
fn aggregate_input(program: &Program, e: &BTreeSet<(i32, i32)>, n: &BTreeSet<i32>) -> BTreeSet<(PredId, Vec<u32>)> {
    let (ep, np) = (program.lookup_source("E").unwrap(), program.lookup_source("N"));
    let mut input: BTreeSet<(PredId, Vec<u32>)> = e.iter().map(|&(x, y)| (ep, vec![x as u32, y as u32])).collect();
    if let Some(np) = np {
        input.extend(n.iter().map(|&x| (np, vec![x as u32])));
    }
    input
}

fn aggregate_relation(program: &Program, relations: &Relations) -> BTreeSet<Vec<i32>> {
    let a = program.lookup_source("A").unwrap();
    relations[&a].iter().map(|t| t.iter().map(|&v| v as i32).collect()).collect()
}

fn aggregate_answers(program: &Program, relations: &Relations) -> BTreeSet<Vec<i32>> {
    query_answers(program, relations).into_iter().map(|t| t.into_iter().map(|v| v as i32).collect()).collect()
}

/// Every engine, with and without threads, and the magic rewrite (exact and subsumed)
/// under both engines, give `A` exactly as the definition does; so does every
/// maintenance strategy after each batch.
fn aggregates_agree(
    case: &impl DefinedCase,
    e: &BTreeSet<(i32, i32)>,
    n: &BTreeSet<i32>,
    batches: &[Vec<(bool, bool, i32, i32)>],
) -> Result<(), TestCaseError> {
    let text = case.text();
    let (program, diagnostics) = syntax::parse_program(&text, FileId(0));
    let program = program.unwrap_or_else(|| panic!("generated program must compile: {diagnostics:?}\n{text}"));
    let expected = case.expected(e, n);
    let input = aggregate_input(&program, e, n);
    for engine in [NativeEngine::Reference, NativeEngine::Seminaive] {
        prop_assert_eq!(
            &aggregate_relation(&program, &evaluate(&program, &input, engine)),
            &expected,
            "{:?}\n{}",
            engine,
            text
        );
    }
    let split = evaluate_with(&program, &input, NativeEngine::Seminaive, split_threads());
    prop_assert_eq!(&aggregate_relation(&program, &split), &expected, "threads\n{}", text);
    let magic = magic::rewrite(&program, program.query.as_ref().unwrap()).program;
    for magic in [&magic, &subsumed(&program)] {
        for engine in [NativeEngine::Reference, NativeEngine::Seminaive] {
            let answers = aggregate_answers(magic, &evaluate(magic, &input, engine));
            prop_assert_eq!(&answers, &expected, "magic, {:?}\n{}", engine, text);
        }
    }
    // Maintained over the original program, the exact magic rewrite and the subsumed one,
    // with every strategy (auto also deciding as on a large state): `A` (or the query's
    // answers) as the definition gives it, `B` (the sum of `A`'s values, an aggregate over
    // an aggregate) too, and every relation as a new evaluation of the new input has it.
    for (k, maintained) in [&program, &magic, &subsumed(&program)].into_iter().enumerate() {
        for (maintenance, min_budget) in [
            (Maintenance::Dred, None),
            (Maintenance::Ranked, None),
            (Maintenance::Auto, None),
            (Maintenance::Auto, Some(0)),
        ] {
            let plan = plan::plan_program(maintained);
            let mut state =
                Maintained::try_with_threads(plan, maintained, database(maintained, &input), maintenance, Threads::ONE)
                    .unwrap();
            if let Some(firings) = min_budget {
                state.set_auto_min_budget(firings);
            }
            let (mut e, mut n) = (e.clone(), n.clone());
            for batch in batches {
                let update = aggregate_update(maintained, batch, &mut e, &mut n);
                let report = state.apply(&update);
                // Aggregates are maintained: only `Auto` may recompute a batch. A
                // correlated case's reduction lies in a recursive stratum, whose groups
                // DRed does not maintain: every strategy recomputes it, as it says.
                if case.recomputed() {
                    prop_assert_eq!(report.strategy, exec::MaintainedBy::Recompute, "{}", text);
                } else if maintenance != Maintenance::Auto {
                    prop_assert_ne!(report.strategy, exec::MaintainedBy::Recompute, "{}", text);
                }
                let relations = relations_of(maintained, state.db());
                let expected = case.expected(&e, &n);
                let fresh = evaluate(maintained, &aggregate_input(maintained, &e, &n), NativeEngine::Seminaive);
                prop_assert_eq!(&relations, &fresh, "{:?} ({}) after {:?}\n{}", maintenance, k, update, text);
                prop_assert_eq!(
                    &aggregate_answers(maintained, &relations),
                    &expected,
                    "{:?} ({}) after {:?}\n{}",
                    maintenance,
                    k,
                    update,
                    text
                );
                if k == 0 {
                    prop_assert_eq!(&aggregate_relation(&program, &relations), &expected);
                    let b = program.lookup_source("B").unwrap();
                    let want: BTreeSet<Vec<u32>> = [vec![case.b(&expected)]].into();
                    prop_assert_eq!(&relations[&b], &want, "B, {:?} after {:?}\n{}", maintenance, update, text);
                }
            }
        }
    }
    Ok(())
}

/// A batch of an aggregate case as an update of `program`, each fact changed once (the
/// first change of it in the batch), applied to `e` and `n` as well.
fn aggregate_update(
    program: &Program,
    batch: &[(bool, bool, i32, i32)],
    e: &mut BTreeSet<(i32, i32)>,
    n: &mut BTreeSet<i32>,
) -> Update {
    let mut update = Update::default();
    let mut seen = BTreeSet::new();
    for &(insert, edge, x, y) in batch {
        let fact = if edge { ("E", vec![x as u32, y as u32]) } else { ("N", vec![x as u32]) };
        let Some(pred) = program.lookup_source(fact.0) else { continue };
        if !seen.insert(fact.clone()) {
            continue;
        }
        match (insert, edge) {
            (true, true) => e.insert((x, y)),
            (false, true) => e.remove(&(x, y)),
            (true, false) => n.insert(x),
            (false, false) => n.remove(&x),
        };
        if insert {
            update.inserts.push((pred, fact.1));
        } else {
            update.deletes.push((pred, fact.1));
        }
    }
    update
}

/// The differential engine, over the original program and both magic rewrites, gives
/// `A` (the query's answers, through a rewrite) exactly as the definition does, from
/// scratch and after each batch: a batch's retractions must leave the reductions where
/// the native engine's recomputation leaves them.
fn aggregates_agree_on_the_dataflow(
    case: &impl DefinedCase,
    e: &BTreeSet<(i32, i32)>,
    n: &BTreeSet<i32>,
    batches: &[Vec<(bool, bool, i32, i32)>],
    workers: usize,
) -> Result<(), TestCaseError> {
    let text = case.text();
    let (program, diagnostics) = syntax::parse_program(&text, FileId(0));
    let program = program.unwrap_or_else(|| panic!("generated program must compile: {diagnostics:?}\n{text}"));
    let magic = magic::rewrite(&program, program.query.as_ref().unwrap()).program;
    let subsumed = subsumed(&program);
    for (evaluated, rewritten) in [(&program, false), (&magic, true), (&subsumed, true)] {
        let plan = plan::plan_program(evaluated);
        let flow = flow::Flow::start(&plan, evaluated, flow::Options { workers, cluster: None })
            .unwrap_or_else(|error| panic!("{error:?}\n{text}"));
        let mut dataflow = Dataflow { flow, derived: BTreeSet::new() };
        let (mut e, mut n) = (e.clone(), n.clone());
        let input = aggregate_input(evaluated, &e, &n);
        dataflow.apply(&[], &input.iter().cloned().collect::<Vec<_>>());
        let a = |relations: &Relations| match rewritten {
            true => aggregate_answers(evaluated, relations),
            false => aggregate_relation(evaluated, relations),
        };
        let relations = dataflow.relations(evaluated, &input);
        prop_assert_eq!(
            &a(&relations),
            &case.expected(&e, &n),
            "{} workers, rewritten: {}\n{}",
            workers,
            rewritten,
            text
        );
        for batch in batches {
            let update = aggregate_update(evaluated, batch, &mut e, &mut n);
            dataflow.apply(&update.deletes, &update.inserts);
            let relations = dataflow.relations(evaluated, &aggregate_input(evaluated, &e, &n));
            prop_assert_eq!(
                &a(&relations),
                &case.expected(&e, &n),
                "{} workers, rewritten: {}, after {:?}\n{}",
                workers,
                rewritten,
                update,
                text
            );
        }
    }
    Ok(())
}

fn agg_edges() -> impl Strategy<Value = BTreeSet<(i32, i32)>> {
    proptest::collection::btree_set((0..AGG_VALUES, 0..AGG_VALUES), 0..8)
}

fn agg_batches() -> impl Strategy<Value = Vec<Vec<(bool, bool, i32, i32)>>> {
    let change = (any::<bool>(), any::<bool>(), 0..AGG_VALUES, 0..AGG_VALUES);
    proptest::collection::vec(proptest::collection::vec(change, 1..4), 1..3)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases() / 2, ..ProptestConfig::default() })]

    #[test]
    fn engines_magic_and_maintenance_agree_with_the_oracle_on_aggregates(
        case in aggregate_case(),
        e in agg_edges(),
        n in proptest::collection::btree_set(0..AGG_VALUES, 0..4),
        batches in agg_batches(),
    ) {
        aggregates_agree(&case, &e, &n, &batches)?;
    }

    /// Programs with an aggregate nested in another's body, against their definition,
    /// in every engine, through the magic rewrites, under maintenance and on the
    /// differential engine.
    #[test]
    fn engines_magic_maintenance_and_the_dataflow_agree_with_the_definition_of_nested_aggregates(
        case in nested_case(),
        e in agg_edges(),
        n in proptest::collection::btree_set(0..AGG_VALUES, 0..4),
        batches in agg_batches(),
        workers in 1usize..3,
    ) {
        aggregates_agree(&case, &e, &n, &batches)?;
        aggregates_agree_on_the_dataflow(&case, &e, &n, &batches, workers)?;
    }

    /// Programs with `mean`, against its definition, likewise.
    #[test]
    fn engines_magic_maintenance_and_the_dataflow_agree_with_the_definition_of_mean(
        case in mean_case(),
        e in agg_edges(),
        n in proptest::collection::btree_set(0..AGG_VALUES, 0..4),
        batches in agg_batches(),
        workers in 1usize..3,
    ) {
        aggregates_agree(&case, &e, &n, &batches)?;
        aggregates_agree_on_the_dataflow(&case, &e, &n, &batches, workers)?;
    }

    /// Programs with `range`, against its definition, in every engine, through the
    /// magic rewrites, under maintenance and on the differential engine.
    #[test]
    fn engines_magic_maintenance_and_the_dataflow_agree_with_the_definition_of_range(
        case in range_case(),
        e in agg_edges(),
        n in proptest::collection::btree_set(0..AGG_VALUES, 0..4),
        batches in agg_batches(),
        workers in 1usize..3,
    ) {
        aggregates_agree(&case, &e, &n, &batches)?;
        aggregates_agree_on_the_dataflow(&case, &e, &n, &batches, workers)?;
    }

    /// The differential engine with one and two workers on the same cases.
    #[test]
    fn the_differential_engine_agrees_with_the_oracle_on_aggregates(
        case in aggregate_case(),
        e in agg_edges(),
        n in proptest::collection::btree_set(0..AGG_VALUES, 0..4),
        batches in agg_batches(),
        workers in 1usize..3,
    ) {
        aggregates_agree_on_the_dataflow(&case, &e, &n, &batches, workers)?;
    }
}

/// The model of `program` when relations of it have a `choice-domain`, by the definition
/// of docs/semantics.md (Soufflé programs: `choice-domain`): the strongly connected
/// components of the predicate graph one after another, dependencies first, each in
/// naive rounds over everything known; as a round ends, the tuples it derived for a
/// relation with a choice domain are taken in ascending order of their values, and each
/// is kept unless a kept tuple has its values in the columns of one of the keys.
fn choosing_oracle(program: &Program, edb: &BTreeSet<(PredId, Vec<u32>)>) -> Relations {
    let mut known: Relations = program.pred_ids().map(|p| (p, BTreeSet::new())).collect();
    for (pred, tuple) in edb {
        known.entry(*pred).or_default().insert(tuple.clone());
    }
    for component in components(program) {
        let rules: Vec<&Rule> = program.rules.iter().filter(|r| component.contains(&r.head.pred)).collect();
        loop {
            let mut derived: BTreeMap<PredId, BTreeSet<Vec<u32>>> = BTreeMap::new();
            for rule in &rules {
                for s in &matches(program, rule, &known) {
                    let head: Option<Vec<u32>> = rule.head.args.iter().map(|t| value(t, s)).collect();
                    derived.entry(rule.head.pred).or_default().insert(head.expect("generated rules are safe"));
                }
            }
            let mut changed = false;
            for (pred, candidates) in derived {
                let relation = known.get_mut(&pred).expect("every predicate has a relation");
                let Some(choice) = &program.pred(pred).choice else {
                    for tuple in candidates {
                        changed |= relation.insert(tuple);
                    }
                    continue;
                };
                let mut candidates: Vec<Vec<u32>> = candidates.into_iter().collect();
                candidates.sort_by(|a, b| tuple_order(program, pred, a, b));
                for tuple in candidates {
                    let same_key =
                        |kept: &Vec<u32>| choice.keys.iter().any(|key| key.iter().all(|&c| kept[c] == tuple[c]));
                    if !relation.iter().any(same_key) {
                        changed |= relation.insert(tuple);
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }
    known
}

/// The strongly connected components of the predicate graph of `program` (a head
/// depends on every predicate its body reads, negated or not), each after those it
/// depends on.
fn components(program: &Program) -> Vec<BTreeSet<PredId>> {
    let preds: Vec<PredId> = program.pred_ids().collect();
    let mut reaches: BTreeSet<(PredId, PredId)> = BTreeSet::new();
    for rule in &program.rules {
        for atom in rule.body.iter().chain(&rule.negated) {
            reaches.insert((rule.head.pred, atom.pred));
        }
    }
    // The transitive closure, by Warshall's algorithm.
    for &k in &preds {
        for &i in &preds {
            for &j in &preds {
                if reaches.contains(&(i, k)) && reaches.contains(&(k, j)) {
                    reaches.insert((i, j));
                }
            }
        }
    }
    let component_of = |p: PredId| -> BTreeSet<PredId> {
        preds.iter().copied().filter(|&q| q == p || (reaches.contains(&(p, q)) && reaches.contains(&(q, p)))).collect()
    };
    let mut done: BTreeSet<PredId> = BTreeSet::new();
    let mut order = Vec::new();
    while done.len() < preds.len() {
        let next = preds
            .iter()
            .copied()
            .filter(|p| !done.contains(p))
            .map(component_of)
            .find(|c| reaches.iter().all(|(from, to)| !c.contains(from) || c.contains(to) || done.contains(to)))
            .expect("some component depends only on those done");
        done.extend(next.iter().copied());
        order.push(next);
    }
    order
}

/// The order of two tuples of `pred`: column by column, numbers by value and symbols by
/// their text.
fn tuple_order(program: &Program, pred: PredId, a: &[u32], b: &[u32]) -> std::cmp::Ordering {
    let types = &program.pred(pred).types;
    types
        .iter()
        .zip(a.iter().zip(b))
        .map(|(ty, (&x, &y))| match ty {
            ir::ValueType::Number => (x as i32).cmp(&(y as i32)),
            ir::ValueType::Unsigned => x.cmp(&y),
            ir::ValueType::Float => f32::from_bits(x).total_cmp(&f32::from_bits(y)),
            ir::ValueType::Symbol => {
                let text = |v: u32| program.consts.text(ir::Const(v)).to_string();
                text(x).cmp(&text(y))
            }
            ir::ValueType::Record(_) => unreachable!("the generated programs hold no records"),
        })
        .find(|o| o.is_ne())
        .unwrap_or(std::cmp::Ordering::Equal)
}

/// Per derived predicate of [`IDB`], its keys (each a mask of columns; a predicate
/// without columns, or one without keys, gets no choice domain).
fn choice_keys() -> impl Strategy<Value = Vec<Vec<u8>>> {
    proptest::collection::vec(proptest::collection::vec(1u8..8, 0..3), IDB.len())
}

/// `program` with the choice domains of `keys` given to its derived predicates.
fn with_choices(mut program: Program, keys: &[Vec<u8>]) -> Program {
    for (&(name, arity), masks) in IDB.iter().zip(keys) {
        let Some(pred) = program.lookup_source(name) else { continue };
        let keys: Vec<Vec<usize>> = masks
            .iter()
            .map(|mask| (0..arity).filter(|c| mask & (1 << c) != 0).collect::<Vec<usize>>())
            .filter(|key| !key.is_empty())
            .collect();
        if !keys.is_empty() {
            let span = program.pred(pred).span;
            program.pred_mut(pred).choice = Some(ir::ChoiceDomain { keys, span });
        }
    }
    program
}

/// With choice domains on random derived relations: both engines, with one thread and
/// with split joins, derive exactly the oracle's relations; the magic program answers
/// the query as the oracle does; every maintenance strategy recomputes each batch and
/// then holds the oracle's relations of the new input. Without a choice domain the
/// oracle is the textbook one.
fn choices_agree(
    text: &str,
    keys: &[Vec<u8>],
    picks: &[(prop::sample::Index, [usize; 3])],
    batches: &[Batch],
) -> Result<(), TestCaseError> {
    let (program, edb) = compile(text, picks);
    let program = with_choices(program, keys);
    let expected = choosing_oracle(&program, &edb);
    if program.chooses().is_none() {
        prop_assert_eq!(&expected, &oracle(&program, &edb), "{}", text);
    }
    for engine in [NativeEngine::Reference, NativeEngine::Seminaive] {
        prop_assert_eq!(&evaluate(&program, &edb, engine), &expected, "{:?} {:?}\n{}", engine, keys, text);
    }
    let threads = evaluate_with(&program, &edb, NativeEngine::Seminaive, split_threads());
    prop_assert_eq!(&threads, &expected, "threads {:?}\n{}", keys, text);
    let magic = magic::rewrite(&program, program.query.as_ref().unwrap()).program;
    for engine in [NativeEngine::Reference, NativeEngine::Seminaive] {
        let answers = query_answers(&magic, &evaluate(&magic, &edb, engine));
        prop_assert_eq!(answers, query_answers(&program, &expected), "magic {:?} {:?}\n{}", engine, keys, text);
    }
    let mut current = edb.clone();
    let mut steps: Vec<(Update, Relations)> = Vec::new();
    for batch in batches {
        let update = batch_update(&program, batch, &mut current);
        steps.push((update, choosing_oracle(&program, &current)));
    }
    for maintenance in [Maintenance::Dred, Maintenance::Ranked, Maintenance::Auto] {
        let plan = plan::plan_program(&program);
        let db = database(&program, &edb);
        let mut state = Maintained::try_with_threads(plan, &program, db, maintenance, Threads::ONE).unwrap();
        prop_assert_eq!(&relations_of(&program, state.db()), &expected, "{:?}\n{}", maintenance, text);
        for (update, expected) in &steps {
            let report = state.apply(update);
            if program.chooses().is_some() {
                prop_assert_eq!(report.strategy, exec::MaintainedBy::Recompute, "{}", text);
            }
            prop_assert_eq!(
                &relations_of(&program, state.db()),
                expected,
                "{:?} after {:?}\n{}",
                maintenance,
                update,
                text
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn choice_domains_agree_with_the_oracle_in_every_engine_and_strategy(
        text in program_text(),
        keys in choice_keys(),
        picks in proptest::collection::vec(input_fact(), 0..24),
        batches in batches(),
    ) {
        choices_agree(&text, &keys, &picks, &batches)?;
    }

    #[test]
    fn choice_domains_agree_with_the_oracle_under_negation_and_comparisons(
        text in stratified_program_text(),
        keys in choice_keys(),
        picks in proptest::collection::vec(input_fact(), 0..24),
        batches in batches(),
    ) {
        choices_agree(&text, &keys, &picks, &batches)?;
    }
}

/// The equivalence relation `eqrel` defines over `pairs`, computed from its definition:
/// the values that appear in a pair, partitioned into classes (two values are in one
/// class when a chain of pairs, read in either direction, connects them), and every pair
/// of values of one class.
fn equivalence_closure(pairs: &BTreeSet<(u32, u32)>) -> BTreeSet<Vec<u32>> {
    let mut classes: Vec<BTreeSet<u32>> = Vec::new();
    for &(a, b) in pairs {
        let (with, without): (Vec<BTreeSet<u32>>, Vec<BTreeSet<u32>>) =
            classes.into_iter().partition(|c| c.contains(&a) || c.contains(&b));
        let mut merged: BTreeSet<u32> = with.into_iter().flatten().collect();
        merged.extend([a, b]);
        classes = without;
        classes.push(merged);
    }
    classes.iter().flat_map(|c| c.iter().flat_map(move |&x| c.iter().map(move |&y| vec![x, y]))).collect()
}

/// A Soufflé program whose `eqrel` relation `q` holds the facts `facts` (indices into
/// [`CONSTS`]) and the pairs of the input `e0`, and a query of `q` with the first value
/// bound to `bound` when there is one.
fn eqrel_program(facts: &[(usize, usize)], bound: Option<usize>) -> String {
    let mut text = String::from(
        ".decl e0(x:number, y:number)\n.input e0\n.decl q(x:number, y:number) eqrel\nq(x, y) :- e0(x, y).\n",
    );
    for (a, b) in facts {
        text += &format!("q({}, {}).\n", CONSTS[*a], CONSTS[*b]);
    }
    text += &match bound {
        Some(c) => format!("?- q({}, y).\n", CONSTS[c]),
        None => "?- q(x, y).\n".to_string(),
    };
    text
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// An `eqrel` relation holds the equivalence closure of its facts and of what its rule
    /// derives, in both engines, with split joins, through the magic rewrite, and after
    /// batches under every maintenance strategy (a deleted pair may split a class).
    #[test]
    fn an_equivalence_relation_holds_the_closure_of_its_pairs(
        facts in proptest::collection::vec((0..CONSTS.len(), 0..CONSTS.len()), 0..3),
        bound in proptest::option::of(0..CONSTS.len()),
        pairs in proptest::collection::vec((0..CONSTS.len(), 0..CONSTS.len()), 0..8),
        batches in proptest::collection::vec(
            proptest::collection::vec((any::<bool>(), (0..CONSTS.len(), 0..CONSTS.len())), 1..4),
            1..4,
        ),
    ) {
        let text = eqrel_program(&facts, bound);
        let (program, _) = compile(&text, &[]);
        let (e0, q) = (program.lookup_source("e0").expect("declared"), program.lookup_source("q").expect("declared"));
        let number = |c: usize| CONSTS[c].parse::<i32>().expect("a number") as u32;
        let pair = |(a, b): (usize, usize)| (e0, vec![number(a), number(b)]);
        let edb: BTreeSet<(PredId, Vec<u32>)> = pairs.iter().map(|&p| pair(p)).collect();
        let expected = |edb: &BTreeSet<(PredId, Vec<u32>)>| {
            let mut all: BTreeSet<(u32, u32)> = facts.iter().map(|&(a, b)| (number(a), number(b))).collect();
            all.extend(edb.iter().map(|(_, t)| (t[0], t[1])));
            equivalence_closure(&all)
        };
        let closure = expected(&edb);
        for engine in [NativeEngine::Reference, NativeEngine::Seminaive] {
            prop_assert_eq!(&evaluate(&program, &edb, engine)[&q], &closure, "{:?}\n{}", engine, text);
        }
        prop_assert_eq!(&evaluate_with(&program, &edb, NativeEngine::Seminaive, split_threads())[&q], &closure);
        let answers: BTreeSet<Vec<u32>> =
            closure.iter().filter(|t| bound.is_none_or(|c| t[0] == number(c))).cloned().collect();
        let magic = magic::rewrite(&program, program.query.as_ref().unwrap()).program;
        prop_assert_eq!(query_answers(&magic, &evaluate(&magic, &edb, NativeEngine::Seminaive)), answers, "{}", text);
        for maintenance in [Maintenance::Dred, Maintenance::Ranked, Maintenance::Auto] {
            let plan = plan::plan_program(&program);
            let mut state = Maintained::try_with_threads(plan, &program, database(&program, &edb), maintenance, Threads::ONE).unwrap();
            let mut current = edb.clone();
            for batch in &batches {
                let update = update_of(batch.iter().map(|&(insert, values)| (insert, pair(values))), &mut current);
                state.apply(&update);
                let held: BTreeSet<Vec<u32>> = state.db().sorted_tuples(q).into_iter().collect();
                prop_assert_eq!(held, expected(&current), "{:?} after {:?}\n{}", maintenance, update, text);
            }
        }
    }
}
