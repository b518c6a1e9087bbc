//! Test support: a small reader for program text (so tests can state programs the way
//! docs/semantics.md writes them) and a naive bottom-up evaluator (so tests can compare
//! the answers of a program and of its rewrite).

use ir::{Atom, Fact, Origin, PredKind, PredName, Program, Query, Rule, Span, Term, TermKind};
use std::collections::{HashMap, HashSet};

/// A raw atom: the predicate name, its arguments and spans.
struct RawAtom {
    name: String,
    span: Span,
    args: Vec<(String, Span)>,
}

enum Statement {
    Rule { head: RawAtom, body: Vec<RawAtom>, span: Span },
    Fact(RawAtom),
    Query(RawAtom),
}

struct Reader<'a> {
    src: &'a str,
    pos: usize,
}

impl Reader<'_> {
    fn span(&self, start: usize) -> Span {
        Span::new(Default::default(), start..self.pos)
    }

    fn skip_blanks(&mut self) {
        while self.src[self.pos..].starts_with([' ', '\t']) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_blanks();
        if self.src[self.pos..].starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn word(&mut self) -> (String, Span) {
        self.skip_blanks();
        let start = self.pos;
        let len = self.src[start..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(0);
        self.pos += len;
        assert!(len > 0, "test program: expected a name at byte {start}");
        (self.src[start..self.pos].to_string(), self.span(start))
    }

    fn atom(&mut self) -> RawAtom {
        self.skip_blanks();
        let start = self.pos;
        let (name, _) = self.word();
        assert!(self.eat("("), "test program: expected `(` after {name}");
        let mut args = Vec::new();
        if !self.eat(")") {
            loop {
                args.push(self.word());
                if self.eat(")") {
                    break;
                }
                assert!(self.eat(","), "test program: expected `,` or `)`");
            }
        }
        RawAtom { name, span: self.span(start), args }
    }

    fn statement(&mut self) -> Statement {
        let start = self.pos;
        if self.eat("?-") {
            return Statement::Query(self.atom());
        }
        let head = self.atom();
        if !self.eat("<-") {
            return Statement::Fact(head);
        }
        let mut body = Vec::new();
        self.skip_blanks();
        if self.pos < self.src.len() && !self.src[self.pos..].starts_with('.') {
            body.push(self.atom());
            while self.eat(",") {
                body.push(self.atom());
            }
        }
        Statement::Rule { head, body, span: self.span(start) }
    }
}

/// Reads one statement per line: `H(X) <- B(X), C(X)`, `P(a) <-`, inline facts `E(a,b).`
/// and `?- R(a,Y).`. Names starting upper-case or `_` are variables.
pub(crate) fn parse(src: &str) -> Program {
    let mut statements = Vec::new();
    let mut offset = 0;
    for line in src.split_inclusive('\n') {
        let text = line.trim_end();
        if !text.trim().is_empty() {
            let mut reader = Reader { src: &src[..offset + text.len()], pos: offset };
            statements.push(reader.statement());
        }
        offset += line.len();
    }
    let idb: HashSet<&str> = statements
        .iter()
        .filter_map(|s| match s {
            Statement::Rule { head, .. } => Some(head.name.as_str()),
            _ => None,
        })
        .collect();

    let mut p = Program::new();
    let lower = |p: &mut Program, raw: &RawAtom| -> Atom {
        let kind = if idb.contains(raw.name.as_str()) { PredKind::Idb } else { PredKind::Edb };
        let name = PredName::Source(p.symbols.intern(&raw.name));
        let pred = p.declare_pred(name, raw.args.len(), kind, raw.span);
        let args = raw
            .args
            .iter()
            .map(|(text, span)| {
                let kind = if text.starts_with(|c: char| c.is_ascii_uppercase() || c == '_') {
                    TermKind::Var(p.symbols.intern(text))
                } else {
                    TermKind::Const(ir::Value::Symbol(p.consts.intern(text)))
                };
                Term { kind, span: *span }
            })
            .collect();
        Atom { pred, args, span: raw.span }
    };
    for statement in &statements {
        match statement {
            Statement::Rule { head, body, span } => {
                let head = lower(&mut p, head);
                let body = body.iter().map(|a| lower(&mut p, a)).collect();
                p.add_rule(Rule::positive(head, body, *span, Origin::Source));
            }
            Statement::Fact(raw) => {
                let atom = lower(&mut p, raw);
                let values = atom.args.iter().map(|t| t.constant().expect("test facts are ground").raw()).collect();
                p.facts.push(Fact { pred: atom.pred, values, span: atom.span });
            }
            Statement::Query(raw) => {
                let atom = lower(&mut p, raw);
                p.query = Some(Query::new(atom));
            }
        }
    }
    p
}

/// Every relation of a program after naive evaluation to fixpoint, by predicate name.
pub(crate) type Database = HashMap<String, HashSet<Vec<u32>>>;

pub(crate) fn evaluate(p: &Program) -> Database {
    let mut db: HashMap<ir::PredId, HashSet<Vec<u32>>> = HashMap::new();
    for fact in &p.facts {
        db.entry(fact.pred).or_default().insert(fact.values.clone());
    }
    loop {
        let mut new = Vec::new();
        for rule in &p.rules {
            let mut bindings = Vec::new();
            join(&db, &rule.body, &mut HashMap::new(), &mut bindings);
            for binding in bindings {
                let tuple: Vec<u32> = rule.head.args.iter().map(|t| value(t, &binding).expect("safe rule")).collect();
                if !db.get(&rule.head.pred).is_some_and(|r| r.contains(&tuple)) {
                    new.push((rule.head.pred, tuple));
                }
            }
        }
        if new.is_empty() {
            break;
        }
        for (pred, tuple) in new {
            db.entry(pred).or_default().insert(tuple);
        }
    }
    db.into_iter().map(|(pred, rows)| (p.pred_name(pred), rows)).collect()
}

/// The tuples of the program's query predicate that match its query.
pub(crate) fn answers(p: &Program) -> HashSet<Vec<u32>> {
    let query = p.query.as_ref().expect("a query");
    let db = evaluate(p);
    db.get(&p.pred_name(query.atom.pred))
        .map(|rows| rows.iter().filter(|t| query.matches(t)).cloned().collect())
        .unwrap_or_default()
}

fn value(term: &Term, binding: &HashMap<ir::Symbol, u32>) -> Option<u32> {
    match term.kind {
        TermKind::Const(c) => Some(c.raw()),
        TermKind::Var(v) => binding.get(&v).copied(),
    }
}

fn join(
    db: &HashMap<ir::PredId, HashSet<Vec<u32>>>,
    body: &[Atom],
    binding: &mut HashMap<ir::Symbol, u32>,
    out: &mut Vec<HashMap<ir::Symbol, u32>>,
) {
    let Some((atom, rest)) = body.split_first() else {
        out.push(binding.clone());
        return;
    };
    let Some(rows) = db.get(&atom.pred) else { return };
    for row in rows {
        let mut extended = binding.clone();
        let matches = atom.args.iter().zip(row).all(|(term, &v)| match term.kind {
            TermKind::Const(c) => c.raw() == v,
            TermKind::Var(x) => *extended.entry(x).or_insert(v) == v,
        });
        if matches && row.len() == atom.args.len() {
            join(db, rest, &mut extended, out);
        }
    }
}
