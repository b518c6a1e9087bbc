//! A tiny reader of rule text for tests, so that tests of `plan` and `exec` need not wait
//! for (or depend on) the real parser. It accepts `H(X,a) <- B(X), C(X,Y)`, negated atoms
//! `!C(X,_)`, empty bodies `H(a) <-`, ground facts `E(a,b).` and zero-arity atoms `P()`;
//! each `_` is a variable of its own. It assumes well-formed input, and refuses the rest of
//! the language (comparisons, `not`), so that a test cannot run another program silently.

use ir::{Atom, Fact, Origin, PredKind, PredName, Program, Rule, Span, Term, TermKind};

/// Builds a program from one rule or fact per line. A predicate is IDB when it heads a rule.
pub fn program(src: &str) -> Program {
    let lines: Vec<&str> = src.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let mut parsed = Vec::new();
    for line in &lines {
        let line = line.trim_end_matches('.');
        match line.split_once("<-") {
            Some((head, body)) => {
                let body = split_atoms(body);
                parsed.push((read_atom(head), Some(body.iter().map(|a| read_atom(a)).collect::<Vec<_>>())));
            }
            None => parsed.push((read_atom(line), None)),
        }
    }
    let heads: std::collections::HashSet<String> =
        parsed.iter().filter(|(_, b)| b.is_some()).map(|(h, _)| h.0.clone()).collect();
    let mut p = Program::new();
    let span = Span { file: Default::default(), start: 0, end: 0 };
    let anonymous = std::cell::Cell::new(0);
    let lower = |p: &mut Program, (name, args): &(String, Vec<String>)| {
        let kind = if heads.contains(name) { PredKind::Idb } else { PredKind::Edb };
        let sym = p.symbols.intern(name);
        let pred = p.declare_pred(PredName::Source(sym), args.len(), kind, span);
        let args = args
            .iter()
            .map(|a| {
                let kind = if a == "_" {
                    anonymous.set(anonymous.get() + 1);
                    TermKind::Var(p.symbols.intern(&format!("_{}", anonymous.get())))
                } else if a.starts_with(|c: char| c.is_ascii_uppercase() || c == '_') {
                    TermKind::Var(p.symbols.intern(a))
                } else {
                    TermKind::Const(ir::Value::Symbol(p.consts.intern(a)))
                };
                Term { kind, span }
            })
            .collect();
        Atom { pred, args, span }
    };
    for (head, body) in &parsed {
        let head = lower(&mut p, head);
        match body {
            Some(body) => {
                let (mut positive, mut negated) = (Vec::new(), Vec::new());
                for atom in body {
                    match atom.0.strip_prefix('!') {
                        Some(name) => negated.push(lower(&mut p, &(name.to_string(), atom.1.clone()))),
                        None => positive.push(lower(&mut p, atom)),
                    }
                }
                let mut rule = Rule::positive(head, positive, span, Origin::Source);
                rule.negated = negated;
                p.add_rule(rule);
            }
            None => {
                let values: Vec<u32> = head.args.iter().filter_map(Term::constant).map(ir::Value::raw).collect();
                p.facts.push(Fact { pred: head.pred, values, span });
            }
        }
    }
    p
}

/// Splits `A(X,Y), B(Y)` at the commas outside parentheses.
fn split_atoms(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut current = String::new();
    for c in body.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

fn read_atom(text: &str) -> (String, Vec<String>) {
    let text = text.trim();
    match text.split_once('(') {
        Some((name, rest)) => {
            // Comparisons, `not` and the rest of the language are the real parser's: a test
            // written with them would otherwise run a different program silently.
            let plain = name.trim().trim_start_matches('!');
            let name_is_plain = !plain.is_empty() && plain.chars().all(|c| c.is_alphanumeric() || c == '_');
            assert!(name_is_plain, "testing::program reads positive rules only, not `{text}`");
            let inner = rest.trim_end().trim_end_matches(')');
            let args = inner.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
            (name.trim().to_string(), args)
        }
        None => (text.to_string(), Vec::new()),
    }
}

/// The interned values of the given constants (interning any that are new).
pub fn values(program: &mut Program, texts: &[&str]) -> Vec<u32> {
    texts.iter().map(|t| program.consts.intern(t).0).collect()
}
