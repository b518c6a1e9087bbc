//! Column types. A Soufflé program declares them; the dlc dialect has no declarations, so
//! its types are inferred from use: every column of a predicate and every variable of a
//! rule is a node, an atom joins each variable with its column, `=` and `!=` join their
//! operands, and evidence says what a node holds — an integer literal or an ordering
//! comparison makes it numeric, a name or a string a symbol, a Soufflé `.decl` its
//! declared type. A class of joined nodes with evidence of both a number and a symbol
//! (or of `number` and `unsigned`) is E0028, at the use that met the earlier evidence.
//! A column with no evidence holds symbols; one with numeric evidence only, `number`s.

use crate::ast::{self, Statement, TermKind};
use diag::{Code, Diagnostic, Span};
use ir::{PredId, Program, ValueType};
use rustc_hash::FxHashMap;

/// What is known of a class: a number of either signedness (an integer literal, an
/// ordering comparison of the dlc dialect), or one type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Numeric,
    Exact(ValueType),
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Numeric => "number",
            Kind::Exact(t) => t.name(),
        }
    }

    /// The more precise of two kinds, or none when they contradict each other.
    fn meet(self, other: Kind) -> Option<Kind> {
        match (self, other) {
            (a, b) if a == b => Some(a),
            (Kind::Numeric, Kind::Exact(t)) | (Kind::Exact(t), Kind::Numeric) if t.is_numeric() => Some(Kind::Exact(t)),
            _ => None,
        }
    }
}

/// The first evidence of a class and where it was seen; `arithmetic` when it is an
/// operator computing with the class's values (whose contradiction is E0030).
#[derive(Clone, Copy, Debug)]
struct Evidence {
    kind: Kind,
    span: Span,
    arithmetic: bool,
}

/// Union-find over the nodes, each root with the evidence of its class.
struct Solver {
    parent: Vec<usize>,
    evidence: Vec<Option<Evidence>>,
    /// Per root: a contradiction was reported in its class, so no further one is.
    reported: Vec<bool>,
    diagnostics: Vec<Diagnostic>,
}

impl Solver {
    fn node(&mut self) -> usize {
        self.parent.push(self.parent.len());
        self.evidence.push(None);
        self.reported.push(false);
        self.parent.len() - 1
    }

    fn root(&mut self, mut node: usize) -> usize {
        while self.parent[node] != node {
            self.parent[node] = self.parent[self.parent[node]];
            node = self.parent[node];
        }
        node
    }

    /// Adds evidence to a root's class; a contradiction is reported at the new evidence.
    fn add(&mut self, root: usize, new: Evidence) {
        match self.evidence[root] {
            None => self.evidence[root] = Some(new),
            Some(old) => match old.kind.meet(new.kind) {
                Some(kind) => self.evidence[root] = Some(merged(old, new, kind)),
                None if self.reported[root] => {}
                None => {
                    self.reported[root] = true;
                    self.diagnostics.push(mismatch(old, new));
                }
            },
        }
    }

    fn evidence(&mut self, node: usize, kind: Kind, span: Span) {
        let root = self.root(node);
        self.add(root, Evidence { kind, span, arithmetic: false });
    }

    /// Joins two classes at a use spanned `span`.
    fn join(&mut self, a: usize, b: usize, span: Span) {
        let (a, b) = (self.root(a), self.root(b));
        if a == b {
            return;
        }
        self.parent[b] = a;
        let reported = self.reported[a] || self.reported[b];
        self.reported[a] = reported;
        let Some(theirs) = self.evidence[b].take() else { return };
        let Some(ours) = self.evidence[a] else {
            self.evidence[a] = Some(theirs);
            return;
        };
        match ours.kind.meet(theirs.kind) {
            Some(kind) => self.evidence[a] = Some(merged(ours, theirs, kind)),
            None if reported => {}
            None if ours.arithmetic || theirs.arithmetic => {
                self.reported[a] = true;
                self.diagnostics.push(mismatch(ours, theirs));
            }
            None => {
                self.reported[a] = true;
                let here = Evidence { kind: theirs.kind, span, arithmetic: false };
                let report = mismatch(ours, here).with_secondary(theirs.span, format!("a {} here", theirs.kind.name()));
                self.diagnostics.push(report);
            }
        }
    }

    fn resolved(&mut self, node: usize) -> ValueType {
        let root = self.root(node);
        match self.evidence[root] {
            Some(Evidence { kind: Kind::Exact(t), .. }) => t,
            Some(Evidence { kind: Kind::Numeric, .. }) => ValueType::Number,
            None => ValueType::Symbol,
        }
    }
}

/// The evidence of a class that has `old` and `new`, which meet in `kind`: the first,
/// unless only the second is an operator (a class computed with stays one, so that a
/// symbol meeting it later is E0030).
fn merged(old: Evidence, new: Evidence, kind: Kind) -> Evidence {
    let first = if new.arithmetic && !old.arithmetic { new } else { old };
    Evidence { kind, ..first }
}

fn mismatch(old: Evidence, new: Evidence) -> Diagnostic {
    if old.arithmetic || new.arithmetic {
        // E0030 points at the operator, beside the symbol it meets.
        let (operator, other) = if new.arithmetic { (new, old) } else { (old, new) };
        let what = match (other.kind, operator.kind) {
            (Kind::Exact(ValueType::Symbol), _) => "a symbol",
            (Kind::Exact(ValueType::Float), Kind::Exact(ValueType::Unsigned)) => {
                "a `float` where an `unsigned` is computed"
            }
            (Kind::Exact(ValueType::Float), _) => "a `float` where a `number` is computed",
            (_, Kind::Exact(ValueType::Float)) => "an integer where a `float` is computed",
            (Kind::Exact(ValueType::Unsigned), _) => "an `unsigned` where a `number` is computed",
            _ => "a `number` where an `unsigned` is computed",
        };
        let code =
            if other.kind == Kind::Exact(ValueType::Symbol) { Code::ARITHMETIC_ON_SYMBOL } else { Code::TYPE_MISMATCH };
        return Diagnostic::error(code, format!("an arithmetic operator meets {what}"))
            .with_primary(operator.span, "this operator computes with numbers")
            .with_secondary(other.span, format!("a {} here", other.kind.name()));
    }
    Diagnostic::error(
        Code::TYPE_MISMATCH,
        format!("a {} where the same column or variable holds a {}", new.kind.name(), old.kind.name()),
    )
    .with_primary(new.span, format!("a {} here", new.kind.name()))
    .with_secondary(old.span, format!("a {} here", old.kind.name()))
}

/// What a constant term is evidence of: an integer literal is a number (of any numeric
/// type, a float's too, as in Soufflé), a float literal a float, a name or a string a
/// symbol.
fn constant_kind(term: &ast::Term) -> Option<Kind> {
    match term.kind {
        TermKind::Int(_) => Some(Kind::Numeric),
        TermKind::Float(_) => Some(Kind::Exact(ValueType::Float)),
        TermKind::Ident(_) | TermKind::Str(_) => Some(Kind::Exact(ValueType::Symbol)),
        _ => None,
    }
}

/// The variables of one rule (or fact, or query) as nodes; each `_` and each
/// arithmetic subexpression is a node of its own.
struct Scope<'s> {
    solver: &'s mut Solver,
    vars: FxHashMap<String, usize>,
    /// The node of each operator, with the operator and its span: a `-` of an
    /// `unsigned` is E0032, an operator Soufflé has no float version of (`%`, `band`,
    /// `lnot`, ...) computing floats E0028.
    operators: &'s mut Vec<(usize, Operator, Span)>,
    /// The program's values, whose record types give the types of a record's fields.
    store: &'s ir::ValueStore,
}

/// An operator of an expression, as [`Scope::operators`] records it.
#[derive(Clone, Copy, Debug)]
enum Operator {
    Unary(ir::UnOp),
    Binary(ir::BinOp),
}

impl Operator {
    fn takes_floats(self) -> bool {
        match self {
            Operator::Unary(op) => op.takes_floats(),
            Operator::Binary(op) => op.takes_floats(),
        }
    }

    fn text(self) -> &'static str {
        match self {
            Operator::Unary(op) => op.text(),
            Operator::Binary(op) => op.souffle_text(),
        }
    }
}

/// What [`infer`] found besides the column types.
pub(crate) struct Typing {
    /// The contradictions (E0028).
    pub diagnostics: Vec<Diagnostic>,
    /// The type of each comparison's operands, by where the comparison stands.
    pub comparisons: FxHashMap<ComparisonSite, ValueType>,
}

/// Where a comparison stands in the file: its statement and its literal in that rule's
/// body. Not its span: one `#define`d comparison used in two rules has one span and may
/// compare symbols in one and numbers in the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ComparisonSite {
    pub statement: usize,
    pub literal: usize,
}

/// Infers (dlc dialect) or checks (Soufflé) the column types of every predicate of the
/// program from `file` and sets them in the program.
pub(crate) fn infer(program: &mut Program, file: &ast::File) -> Typing {
    let mut solver = Solver { parent: Vec::new(), evidence: Vec::new(), reported: Vec::new(), diagnostics: Vec::new() };
    let mut compared = Vec::new();
    let mut operators = Vec::new();
    let store = program.consts.clone();
    // The first node of each predicate's columns.
    let mut columns: Vec<usize> = Vec::with_capacity(program.preds.len());
    for pred in &program.preds {
        columns.push(solver.parent.len());
        for _ in 0..pred.arity {
            solver.node();
        }
    }
    for (name, types, span) in &file.declared {
        let Some(pred) = program.lookup_source(name) else { continue };
        for (i, &t) in types.iter().enumerate().take(program.pred(pred).arity) {
            solver.evidence(columns[pred.index()] + i, Kind::Exact(t), *span);
        }
    }
    let column = |program: &Program, atom: &ast::Atom, i: usize| -> Option<usize> {
        let pred: PredId = program.lookup_source(&atom.pred.text)?;
        (i < program.pred(pred).arity).then(|| columns[pred.index()] + i)
    };
    for (index, statement) in file.statements.iter().enumerate() {
        let (atoms, comparisons): (Vec<&ast::Atom>, Vec<(usize, &ast::Comparison)>) = match statement {
            Statement::Rule(rule) | Statement::Dominance(rule) => {
                let mut atoms = vec![&rule.head];
                let mut comparisons = Vec::new();
                for (position, literal) in rule.body.iter().enumerate() {
                    match literal {
                        ast::Literal::Atom(atom) | ast::Literal::Negated { atom, .. } => atoms.push(atom),
                        ast::Literal::Compare(c) => {
                            // A reduction's rows (the only aggregates left, `reductions.rs`).
                            for side in [&c.left, &c.right] {
                                if let TermKind::Aggregate { body, .. } = &side.kind {
                                    atoms.extend(body.iter().filter_map(ast::Literal::atom));
                                }
                            }
                            comparisons.push((position, c))
                        }
                    }
                }
                (atoms, comparisons)
            }
            Statement::Fact(atom) => (vec![atom], Vec::new()),
            Statement::Query(query) => (vec![&query.atom], Vec::new()),
            Statement::Error(_) => continue,
        };
        let mut scope =
            Scope { solver: &mut solver, vars: FxHashMap::default(), operators: &mut operators, store: &store };
        for atom in atoms {
            for (i, term) in atom.args.iter().enumerate() {
                let Some(column) = column(program, atom, i) else { continue };
                scope.meet(column, term);
            }
        }
        for (position, c) in comparisons {
            // An ordering comparison of the dlc dialect compares integers; Soufflé's front
            // end has marked those of its symbols and unsigned values. A constant operand
            // is evidence of what the operator says it is (one that is no integer is
            // E0024 already); of `=` and `!=`, of what it writes.
            let ordering = c.op.is_ordering().then_some(match c.domain {
                ValueType::Number => Kind::Numeric,
                other => Kind::Exact(other),
            });
            let mut operand = |term: &ast::Term| {
                let node = scope.term(term).unwrap_or_else(|| scope.solver.node());
                match ordering {
                    Some(kind) => scope.solver.evidence(node, kind, term.span),
                    None => scope.constant(node, term),
                }
                node
            };
            let (left, right) = (operand(&c.left), operand(&c.right));
            if c.op.is_call() {
                // `contains` and `match` read two texts, which need not be one type.
                for (node, term) in [(left, &c.left), (right, &c.right)] {
                    scope.solver.evidence(node, Kind::Exact(ValueType::Symbol), term.span);
                }
                compared.push((ComparisonSite { statement: index, literal: position }, left));
                continue;
            }
            // A contradiction is shown at a constant operand, or else at the comparison.
            let site = [&c.right, &c.left].into_iter().find(|t| t.constant_text().is_some()).map_or(c.span, |t| t.span);
            scope.solver.join(left, right, site);
            compared.push((ComparisonSite { statement: index, literal: position }, left));
        }
    }
    for (pred, &first) in program.preds.iter_mut().zip(&columns) {
        pred.types = (0..pred.arity).map(|i| solver.resolved(first + i)).collect();
    }
    let comparisons = compared.into_iter().map(|(site, node)| (site, solver.resolved(node))).collect();
    for (node, operator, span) in operators {
        match solver.resolved(node) {
            ValueType::Unsigned if matches!(operator, Operator::Unary(ir::UnOp::Neg)) => solver.diagnostics.push(
                Diagnostic::error(Code::NEGATED_UNSIGNED, "`-` negates a value of an `unsigned` column or expression")
                    .with_primary(span, "`-` of an unsigned value"),
            ),
            ValueType::Float if !operator.takes_floats() => solver.diagnostics.push(
                Diagnostic::error(
                    Code::TYPE_MISMATCH,
                    format!("`{}` computes with integers, and its operands here are floats", operator.text()),
                )
                .with_primary(span, "no float version of this operator")
                .with_help("convert the floats first: `to_number(x)`"),
            ),
            _ => {}
        }
    }
    Typing { diagnostics: solver.diagnostics, comparisons }
}

impl Scope<'_> {
    /// The node of a variable term; none for a constant.
    fn term(&mut self, term: &ast::Term) -> Option<usize> {
        match &term.kind {
            TermKind::Var(name) => Some(match self.vars.get(name.as_str()) {
                Some(&node) => node,
                None => {
                    let node = self.solver.node();
                    self.vars.insert(name.clone(), node);
                    node
                }
            }),
            TermKind::Anon => Some(self.solver.node()),
            TermKind::Unary { .. } | TermKind::Binary { .. } => Some(self.expression(term)),
            TermKind::Call { .. } => Some(self.call(term)),
            TermKind::Range { .. } => Some(self.range(term)),
            // A `count` is a number; the other aggregates have their value's type, which
            // their operator orders or adds, so it is numeric.
            TermKind::Aggregate { value: None, op_span, .. } => {
                let node = self.solver.node();
                self.solver.evidence(node, Kind::Exact(ValueType::Number), *op_span);
                Some(node)
            }
            // `mean` is of floats, and a float (Soufflé 2.5 types its value as the
            // aggregate's, a float: `mean` of numbers is a type error there too).
            TermKind::Aggregate { op: ast::AggregateOp::Mean, value: Some(value), op_span, .. } => {
                let node = self.term(value).unwrap_or_else(|| self.solver.node());
                self.solver.evidence(node, Kind::Exact(ValueType::Float), *op_span);
                Some(node)
            }
            TermKind::Aggregate { value: Some(value), op_span, .. } => {
                let node = self.term(value).unwrap_or_else(|| self.solver.node());
                self.solver.evidence(node, Kind::Numeric, *op_span);
                Some(node)
            }
            _ => None,
        }
    }

    /// The node of an arithmetic expression: it, its operators' results and its operands
    /// hold one numeric type (each operator is evidence of it). The tree is at most
    /// [`crate::expr::MAX_DEPTH`] deep, so it is walked with an explicit stack.
    fn expression(&mut self, term: &ast::Term) -> usize {
        let node = self.solver.node();
        let mut stack = vec![term];
        while let Some(term) = stack.pop() {
            let (op_span, operands): (Span, Vec<&ast::Term>) = match &term.kind {
                TermKind::Unary { op, op_span, operand } => {
                    self.operators.push((node, Operator::Unary(*op), *op_span));
                    (*op_span, vec![operand])
                }
                TermKind::Binary { op, op_span, left, right } => {
                    self.operators.push((node, Operator::Binary(*op), *op_span));
                    (*op_span, vec![left, right])
                }
                _ => unreachable!("only expressions are pushed"),
            };
            let root = self.solver.root(node);
            self.solver.add(root, Evidence { kind: Kind::Numeric, span: op_span, arithmetic: true });
            for operand in operands {
                if matches!(operand.kind, TermKind::Unary { .. } | TermKind::Binary { .. }) {
                    stack.push(operand);
                } else if let Some(leaf) = self.term(operand) {
                    self.solver.join(node, leaf, operand.span);
                } else {
                    self.constant(node, operand);
                }
            }
        }
        node
    }

    /// The node of a range's values (`generators.rs` leaves them as `R = range(..)`): its
    /// bounds and step have its one numeric type, which it steps in as an operator
    /// computes (a symbol meeting it is E0030).
    fn range(&mut self, term: &ast::Term) -> usize {
        let TermKind::Range { args, .. } = &term.kind else { unreachable!("only ranges") };
        let node = self.solver.node();
        let root = self.solver.root(node);
        self.solver.add(root, Evidence { kind: Kind::Numeric, span: term.span, arithmetic: true });
        for arg in args {
            match self.term(arg) {
                Some(leaf) => self.solver.join(node, leaf, arg.span),
                None => self.constant(node, arg),
            }
        }
        node
    }

    /// The node of a functor's result, which has the functor's result type; each
    /// argument is evidence of its parameter's type (a conversion's argument may have
    /// any type).
    fn call(&mut self, term: &ast::Term) -> usize {
        let TermKind::Call { functor, name_span, args } = &term.kind else { unreachable!("only calls") };
        let node = self.solver.node();
        // A call of a functor not declared (reported) says nothing of its types.
        if functor.is_typed() {
            self.solver.evidence(node, Kind::Exact(functor.result()), *name_span);
        }
        // A cast whose type is no base type still names it (the Soufflé front end resolves
        // the types a program defines before this).
        if let (ir::Functor::Cast(..), [_, target]) = (functor, args.as_slice()) {
            let name = target.constant_text().unwrap_or_default();
            self.solver.diagnostics.push(
                Diagnostic::error(Code::UNKNOWN_CAST_TYPE, format!("`as(...)` casts to `{name}`, which is no type"))
                    .with_primary(target.span, "not `number`, `unsigned`, `float` or `symbol`"),
            );
            return node;
        }
        for (i, arg) in args.iter().enumerate() {
            let arg_node = self.term(arg).unwrap_or_else(|| {
                let node = self.solver.node();
                self.constant(node, arg);
                node
            });
            if let Some(param) = self.store.parameter(functor, i) {
                self.solver.evidence(arg_node, Kind::Exact(param), arg.span);
            }
        }
        node
    }

    /// A constant `term` is evidence for `node`.
    fn constant(&mut self, node: usize, term: &ast::Term) {
        if let Some(kind) = constant_kind(term) {
            self.solver.evidence(node, kind, term.span);
        }
    }

    /// An argument `term` in a column.
    fn meet(&mut self, column: usize, term: &ast::Term) {
        match self.term(term) {
            Some(node) => self.solver.join(column, node, term.span),
            None => self.constant(column, term),
        }
    }
}

#[cfg(test)]
mod tests {
    use diag::{Code, FileId};
    use ir::ValueType::{self, Number, Symbol, Unsigned};

    /// The column types of `pred` in the dlc-dialect program `src`, which must compile.
    fn types(src: &str, pred: &str) -> Vec<ValueType> {
        let (program, diagnostics) = crate::parse_program(src, FileId(0));
        let program = program.unwrap_or_else(|| panic!("{diagnostics:#?}"));
        program.pred(program.lookup_source(pred).unwrap()).types.clone()
    }

    /// The codes and primary spans' texts of the errors of `src`.
    fn errors(src: &str) -> Vec<(Code, &str)> {
        let (_, diagnostics) = crate::parse_program(src, FileId(0));
        diagnostics
            .iter()
            .map(|d| (d.code, d.primary_span().map_or("", |s| &src[s.start as usize..s.end as usize])))
            .collect()
    }

    #[test]
    fn literals_orderings_and_variables_type_the_columns_they_reach() {
        let src = "E(a, 1).\nR(X, N) <- E(X, M), F(M, N), N < K, G(K)\nH(Y) <- E(_, Y)\n?- R(X, N).\n";
        assert_eq!(types(src, "E"), [Symbol, Number]);
        assert_eq!(types(src, "F"), [Number, Number], "joined with E's column by M; N by the ordering");
        assert_eq!(types(src, "G"), [Number]);
        assert_eq!(types(src, "R"), [Symbol, Number]);
        assert_eq!(types(src, "H"), [Number]);
        assert_eq!(types("R(X) <- E(X, Y), Y = 3\n?- R(X).\n", "E"), [Symbol, Number], "`=` joins");
        assert_eq!(types("R(X) <- E(X)\n?- R(X).\n", "E"), [Symbol], "no evidence: symbols");
    }

    #[test]
    fn a_column_or_variable_with_numbers_and_symbols_is_e0027_at_the_second() {
        assert_eq!(errors("E(a). E(1).\nR(X) <- E(X)\n?- R(X).\n"), [(Code::TYPE_MISMATCH, "1")]);
        assert_eq!(errors("E(a). F(1).\nR(X) <- E(X), F(X)\n?- R(X).\n"), [(Code::TYPE_MISMATCH, "X")]);
        assert_eq!(errors("E(\"a\").\nR(X) <- E(X), X > 2\n?- R(X).\n"), [(Code::TYPE_MISMATCH, "X")]);
        assert_eq!(errors("E(a).\nR(X) <- E(X), X != 2\n?- R(X).\n"), [(Code::TYPE_MISMATCH, "2")]);
    }

    #[test]
    fn souffle_declarations_are_the_types() {
        let src = ".decl e(x:symbol, n:number, u:unsigned)\n.decl r(n:number)\nr(n) :- e(_, n, _).\n";
        let (program, diagnostics) = crate::souffle::parse_program(src, FileId(0), &mut crate::souffle::NoIncludes);
        let program = program.unwrap_or_else(|| panic!("{diagnostics:#?}")).program;
        assert_eq!(program.pred(program.lookup_source("e").unwrap()).types, [Symbol, Number, Unsigned]);
        let src = ".decl e(x:symbol, n:number)\n.decl r(n:number)\nr(x) :- e(x, _).\ne(\"a\", \"b\").\n";
        let (program, diagnostics) = crate::souffle::parse_program(src, FileId(0), &mut crate::souffle::NoIncludes);
        assert!(program.is_none());
        let found: Vec<(Code, &str)> = diagnostics
            .iter()
            .map(|d| (d.code, d.primary_span().map_or("", |s| &src[s.start as usize..s.end as usize])))
            .collect();
        assert_eq!(found, [(Code::TYPE_MISMATCH, "x"), (Code::TYPE_MISMATCH, "\"b\"")]);
    }

    #[test]
    fn generated_predicates_take_their_sources_types() {
        let (program, _) = crate::parse_program("E(a, 1).\nR(X, N) <- E(X, N)\n?- R(a, N).\n", FileId(0));
        let mut program = program.unwrap();
        let r = program.symbols.get("R").unwrap();
        let (adornment, span) = (ir::Adornment(vec![ir::Bf::Bound, ir::Bf::Free]), program.preds[0].span);
        let answer = program.declare_pred(ir::PredName::Answer(r, adornment.clone()), 2, ir::PredKind::Idb, span);
        let demand = program.declare_pred(ir::PredName::Demand(r, adornment), 1, ir::PredKind::Idb, span);
        assert_eq!(program.pred(answer).types, [Symbol, Number]);
        assert_eq!(program.pred(demand).types, [Symbol], "the bound columns only");
    }
}
