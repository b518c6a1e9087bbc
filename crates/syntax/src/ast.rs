//! The syntax tree: what the user wrote, with a byte span on every node, before any
//! name is resolved. Its `Display` is the stable `--emit ast` tree.

use diag::Span;
use std::fmt;

/// A whole source file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct File {
    pub statements: Vec<Statement>,
    pub span: Span,
    /// The column types a Soufflé program declares, per relation, with the span of its
    /// `.decl`; empty in the dlc dialect, whose types are inferred from use.
    pub declared: Vec<(String, Vec<ir::ValueType>, Span)>,
    /// The record types and algebraic data types a Soufflé program declares, indexed by
    /// [`ir::RecordTypeId`].
    pub record_types: Vec<ir::RecordType>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Statement {
    /// `Head <- Body` (the body may be empty: `P(a) <-`).
    Rule(Rule),
    /// Soufflé's subsumptive clause `r(a..) <= r(b..) :- body.`, as the rule
    /// `r(..) <- r(a..), r(b..), body`: its first body atom is the dominated fact, its
    /// second the dominating one, the rest the body; the head names the relation (its
    /// arguments are not read). Lowered to an `ir::Dominance`, not to a rule.
    Dominance(Rule),
    /// A bare atom `E(a,b).`: an inline input fact.
    Fact(Atom),
    /// `?- R(a, Y).`
    Query(Query),
    /// Text the parser skipped after a syntax error (already reported).
    Error(Span),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub head: Atom,
    pub body: Vec<Literal>,
    pub span: Span,
}

impl Rule {
    /// The rule's top-level terms: the head's arguments, then each body literal's.
    pub fn terms(&self) -> impl Iterator<Item = &Term> + '_ {
        self.head.args.iter().chain(self.body.iter().flat_map(Literal::terms))
    }

    /// The rule's top-level terms, mutably: the head's arguments, then each body
    /// literal's (its atom's arguments, or a comparison's two sides).
    pub fn terms_mut(&mut self) -> Vec<&mut Term> {
        let mut terms: Vec<&mut Term> = self.head.args.iter_mut().collect();
        for literal in &mut self.body {
            match literal {
                Literal::Atom(atom) | Literal::Negated { atom, .. } => terms.extend(atom.args.iter_mut()),
                Literal::Compare(c) => terms.extend([&mut c.left, &mut c.right]),
            }
        }
        terms
    }
}

/// A body literal, in both dialects: an atom, a negated atom (`!p(X)`, or `not p(X)` in
/// the dlc dialect) or a comparison `t op t`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Literal {
    Atom(Atom),
    /// The negated atom; `span` covers the `!` or `not` too.
    Negated {
        atom: Atom,
        span: Span,
    },
    Compare(Comparison),
}

impl Literal {
    /// The atom of a positive or negated literal.
    pub fn atom(&self) -> Option<&Atom> {
        match self {
            Literal::Atom(atom) | Literal::Negated { atom, .. } => Some(atom),
            Literal::Compare(_) => None,
        }
    }

    /// The literal's top-level terms: its atom's arguments, or a comparison's two sides.
    pub fn terms(&self) -> impl Iterator<Item = &Term> + '_ {
        let (args, sides): (&[Term], [Option<&Term>; 2]) = match self {
            Literal::Atom(atom) | Literal::Negated { atom, .. } => (&atom.args, [None, None]),
            Literal::Compare(c) => (&[], [Some(&c.left), Some(&c.right)]),
        };
        args.iter().chain(sides.into_iter().flatten())
    }

    pub fn span(&self) -> Span {
        match self {
            Literal::Atom(atom) => atom.span,
            Literal::Negated { span, .. } => *span,
            Literal::Compare(c) => c.span,
        }
    }
}

/// `left op right`; both dialects build it through [`Comparison::new`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comparison {
    pub op: ir::CmpOp,
    pub left: Term,
    pub right: Term,
    /// Integers, unless the Soufflé front end found a symbol-typed operand.
    pub domain: ir::ValueType,
    pub span: Span,
}

impl Comparison {
    /// The comparison `left op right`, spanning both operands.
    pub fn new(left: Term, op: ir::CmpOp, right: Term) -> Comparison {
        let span = left.span.to(right.span);
        Comparison::spanning(left, op, right, span)
    }

    /// The comparison, or the constraint on texts `op(left, right)`, spanning `span`.
    pub fn spanning(left: Term, op: ir::CmpOp, right: Term, span: Span) -> Comparison {
        let domain = if op.is_call() { ir::ValueType::Symbol } else { ir::ValueType::Number };
        Comparison { op, left, right, domain, span }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    pub atom: Atom,
    pub span: Span,
}

/// `p(t1, ..., tn)`; a zero-arity atom is written `p()` or `p`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Atom {
    pub pred: Name,
    pub args: Vec<Term>,
    pub span: Span,
}

impl Atom {
    /// Whether an argument holds an aggregate (at any depth of an expression).
    pub fn has_aggregate(&self) -> bool {
        self.args.iter().flat_map(Term::subterms).any(|t| matches!(t.kind, TermKind::Aggregate { .. }))
    }

    /// Whether an argument calls a functor the program declares (at any depth of an
    /// expression), whose value only evaluation knows.
    pub fn calls_user_functor(&self) -> bool {
        self.args.iter().any(Term::calls_user_functor)
    }
}

/// A predicate name as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Name {
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    pub kind: TermKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TermKind {
    /// A named variable: `X`, `_x`.
    Var(String),
    /// The anonymous variable `_`.
    Anon,
    /// A lower-case identifier constant: `a`.
    Ident(String),
    /// An integer constant, kept as its literal text: `-7`.
    Int(String),
    /// A float constant (Soufflé's), kept as its literal text: `-0.25`.
    Float(String),
    /// A string constant, escapes resolved: `"a b"` holds `a b`.
    Str(String),
    /// A name starting with `@` (rejected when lowering).
    Reserved(String),
    /// `-e`, `bnot e`, `lnot e`; `op_span` is the operator's.
    Unary { op: ir::UnOp, op_span: Span, operand: Box<Term> },
    /// `a + b`, `a band b`, `min(a, b)`, ...; `op_span` is the operator's (the function
    /// name's for `min` and `max`).
    Binary { op: ir::BinOp, op_span: Span, left: Box<Term>, right: Box<Term> },
    /// `cat(a, b)`, `strlen(s)`, `to_string(n)`, ...: a functor applied to its
    /// arguments; `name_span` is its name's.
    Call { functor: ir::Functor, name_span: Span, args: Vec<Term> },
    /// `range(a, b)`, `range(a, b, step)`: Soufflé's generator, a value for each step from
    /// `a` towards `b`; `name_span` is its name's. `generators.rs` leaves each only as the
    /// right side of a literal `R = range(..)` of its rule, which lowering makes a generator.
    Range { name_span: Span, args: Vec<Term> },
    /// Soufflé's `[a, b]` (`branch` none) or `$B(a, b)`, `$B` (a value of branch `B` of
    /// an algebraic data type): a record of the type its place gives it, which the
    /// Soufflé front end resolves into a call of [`ir::Functor::Record`] before the
    /// native lowering.
    Record { branch: Option<String>, args: Vec<Term> },
    /// Soufflé's `nil`, the empty record of any record type.
    Nil,
    /// `count : { body }`, `sum e : { body }`, `min e : a(x, e)`, ...: the reduction of
    /// the rows of `body`; `op_span` is the operator's, `value` the aggregated expression
    /// (none for `count`). The one-atom form without braces is a body of one literal.
    Aggregate { op: AggregateOp, op_span: Span, value: Option<Box<Term>>, body: Vec<Literal> },
}

/// An aggregate's reduction, as both dialects write it. Not [`ir::AggregateOp`], the
/// reductions engines evaluate: the source may also write `mean`, which `reductions.rs`
/// computes as a `sum` divided by a `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AggregateOp {
    Count,
    Sum,
    Min,
    Max,
    Mean,
}

impl AggregateOp {
    /// The operator of its word.
    pub fn from_text(text: &str) -> Option<AggregateOp> {
        Some(match text {
            "count" => AggregateOp::Count,
            "sum" => AggregateOp::Sum,
            "min" => AggregateOp::Min,
            "max" => AggregateOp::Max,
            "mean" => AggregateOp::Mean,
            _ => return None,
        })
    }

    pub fn text(self) -> &'static str {
        match self {
            AggregateOp::Count => "count",
            AggregateOp::Sum => "sum",
            AggregateOp::Min => "min",
            AggregateOp::Max => "max",
            AggregateOp::Mean => "mean",
        }
    }

    /// Whether an expression to aggregate follows the word (all but `count`).
    pub fn takes_value(self) -> bool {
        self != AggregateOp::Count
    }
}

impl File {
    /// A file with this one's span, declarations and record types, and no statements: what
    /// a rewrite of the statements starts from.
    pub fn empty_like(&self) -> File {
        File {
            statements: Vec::new(),
            span: self.span,
            declared: self.declared.clone(),
            record_types: self.record_types.clone(),
        }
    }
}

impl Term {
    /// The constant's text (its identity) when the term is a constant.
    pub fn constant_text(&self) -> Option<&str> {
        match &self.kind {
            TermKind::Ident(s) | TermKind::Int(s) | TermKind::Float(s) | TermKind::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Whether the term is an arithmetic expression.
    pub fn is_arithmetic(&self) -> bool {
        matches!(
            self.kind,
            TermKind::Unary { .. } | TermKind::Binary { .. } | TermKind::Call { .. } | TermKind::Record { .. }
        )
    }

    /// Calls `f` on each outermost subterm that `picks` (the term itself included), in
    /// the order [`Term::subterms`] visits them; `f` may replace it, and what it picked is
    /// not searched further. The operands of the others are searched with a stack.
    pub fn rewrite_outermost(&mut self, picks: impl Fn(&Term) -> bool, mut f: impl FnMut(&mut Term)) {
        if !picks(self) && self.is_leaf() {
            return;
        }
        let mut stack = vec![self];
        while let Some(term) = stack.pop() {
            if picks(term) {
                f(term);
                continue;
            }
            match &mut term.kind {
                TermKind::Unary { operand, .. } => stack.push(operand),
                TermKind::Binary { left, right, .. } => {
                    stack.push(right);
                    stack.push(left);
                }
                TermKind::Call { args, .. } | TermKind::Range { args, .. } | TermKind::Record { args, .. } => {
                    stack.extend(args.iter_mut().rev())
                }
                _ => {}
            }
        }
    }

    /// Whether the term has no subterm: a variable or a constant (walks over a term start
    /// with it, so that the many leaves cost no stack).
    fn is_leaf(&self) -> bool {
        matches!(
            self.kind,
            TermKind::Var(_)
                | TermKind::Anon
                | TermKind::Ident(_)
                | TermKind::Int(_)
                | TermKind::Float(_)
                | TermKind::Str(_)
                | TermKind::Reserved(_)
                | TermKind::Nil
        )
    }

    /// Whether the term calls a functor the program declares, at any depth (an
    /// aggregate's value and body excepted, as in [`Term::subterms`]).
    pub fn calls_user_functor(&self) -> bool {
        self.subterms().any(|t| matches!(&t.kind, TermKind::Call { functor: ir::Functor::User(_), .. }))
    }

    /// Calls `f` on every functor call in the term, at any depth, with the call's name
    /// span and count of arguments: in operands, arguments, records' fields, ranges'
    /// bounds, and aggregates' values and bodies. An explicit stack walks it.
    pub fn for_each_call_mut(&mut self, f: &mut dyn FnMut(&mut ir::Functor, Span, usize)) {
        if self.is_leaf() {
            return;
        }
        let mut stack = vec![self];
        while let Some(term) = stack.pop() {
            match &mut term.kind {
                TermKind::Unary { operand, .. } => stack.push(operand),
                TermKind::Binary { left, right, .. } => stack.extend([&mut **left, &mut **right]),
                TermKind::Call { functor, name_span, args } => {
                    f(functor, *name_span, args.len());
                    stack.extend(args.iter_mut());
                }
                TermKind::Record { args, .. } | TermKind::Range { args, .. } => stack.extend(args.iter_mut()),
                TermKind::Aggregate { value, body, .. } => {
                    stack.extend(value.as_deref_mut());
                    for literal in body {
                        match literal {
                            Literal::Atom(atom) | Literal::Negated { atom, .. } => stack.extend(atom.args.iter_mut()),
                            Literal::Compare(c) => stack.extend([&mut c.left, &mut c.right]),
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// [`Term::subterms`] that hold a value of the term's own type: a functor's call, but
    /// not its arguments (`strlen(s)` is a number, its `s` a symbol).
    pub fn same_type_subterms(&self) -> Subterms<'_> {
        Subterms { next: Some(self), stack: Vec::new(), into_calls: false }
    }

    /// The term and, for an expression, its subterms, each before its operands (the
    /// tree is at most [`crate::expr::MAX_DEPTH`] deep, so an explicit stack suffices).
    /// An aggregate's value and body are a scope of their own: not its subterms.
    pub fn subterms(&self) -> Subterms<'_> {
        Subterms { next: Some(self), stack: Vec::new(), into_calls: true }
    }
}

/// The term and its operands, each before its own (a functor's arguments too when
/// `into_calls`): [`Term::subterms`], [`Term::same_type_subterms`]. The next term is held
/// apart from the stack, so a leaf or a chain of unary operators allocates nothing, and
/// the stack is explicit, so no depth recurses.
pub struct Subterms<'a> {
    next: Option<&'a Term>,
    stack: Vec<&'a Term>,
    into_calls: bool,
}

impl<'a> Iterator for Subterms<'a> {
    type Item = &'a Term;

    fn next(&mut self) -> Option<&'a Term> {
        let term = self.next.take().or_else(|| self.stack.pop())?;
        match &term.kind {
            TermKind::Unary { operand, .. } => self.next = Some(operand),
            TermKind::Binary { left, right, .. } => {
                self.stack.push(right);
                self.next = Some(left);
            }
            TermKind::Call { args, .. } | TermKind::Record { args, .. } if self.into_calls => self.push_args(args),
            // A range's values have its bounds' type.
            TermKind::Range { args, .. } => self.push_args(args),
            _ => {}
        }
        Some(term)
    }
}

impl<'a> Subterms<'a> {
    /// Visits `args` next, in order.
    fn push_args(&mut self, args: &'a [Term]) {
        if let Some((first, rest)) = args.split_first() {
            self.stack.extend(rest.iter().rev());
            self.next = Some(first);
        }
    }
}

/// The value of an integer literal in either dialect: decimal, hex `0x1F` or binary
/// `0b101`, optionally negative and with the `u` (unsigned) suffix. `None` when it is not
/// such a literal or does not fit 64 bits.
pub fn integer_literal(text: &str) -> Option<i64> {
    let (negative, magnitude) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let magnitude = magnitude.strip_suffix('u').unwrap_or(magnitude);
    let (digits, radix) = if let Some(hex) = magnitude.strip_prefix("0x") {
        (hex, 16)
    } else if let Some(binary) = magnitude.strip_prefix("0b") {
        (binary, 2)
    } else {
        (magnitude, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let value = i64::from_str_radix(digits, radix).ok()?;
    Some(if negative { -value } else { value })
}

/// The text of an integer literal of the dlc dialect: a decimal one as written (values
/// are identified by their text, so `007` stays `007`), the others (`0x10`, `0b11`, `7u`)
/// as their decimal value; one that does not fit 64 bits as written.
pub fn integer_text(text: &str) -> String {
    let plain = text.strip_prefix('-').unwrap_or(text).bytes().all(|b| b.is_ascii_digit());
    match integer_literal(text) {
        Some(value) if !plain => value.to_string(),
        _ => text.to_string(),
    }
}

fn span_text(span: Span) -> String {
    format!("{}..{}", span.start, span.end)
}

impl fmt::Display for File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "File {}", span_text(self.span))?;
        for statement in &self.statements {
            match statement {
                Statement::Rule(rule) => {
                    writeln!(f, "  Rule {}", span_text(rule.span))?;
                    write_atom(f, "    head ", &rule.head)?;
                    write_literals(f, "    body ", &rule.body)?;
                }
                Statement::Dominance(rule) => {
                    writeln!(f, "  Dominance {}", span_text(rule.span))?;
                    write_atom(f, "    head ", &rule.head)?;
                    write_literals(f, "    body ", &rule.body)?;
                }
                Statement::Fact(atom) => write_atom(f, "  Fact ", atom)?,
                Statement::Query(query) => {
                    writeln!(f, "  Query {}", span_text(query.span))?;
                    write_atom(f, "    ", &query.atom)?;
                }
                Statement::Error(span) => writeln!(f, "  Error {}", span_text(*span))?,
            }
        }
        Ok(())
    }
}

/// Body literals, each line starting with `prefix` (an indentation and a word).
fn write_literals(f: &mut fmt::Formatter<'_>, prefix: &str, literals: &[Literal]) -> fmt::Result {
    let indent = " ".repeat(prefix.len() - prefix.trim_start().len() + 2);
    for literal in literals {
        match literal {
            Literal::Atom(atom) => write_atom(f, prefix, atom)?,
            Literal::Negated { atom, span } => {
                writeln!(f, "{prefix}Not {}", span_text(*span))?;
                write_atom(f, &indent, atom)?;
            }
            Literal::Compare(c) => {
                writeln!(f, "{prefix}Compare {} {}", c.op.text(), span_text(c.span))?;
                write_terms(f, &indent, [&c.left, &c.right])?;
            }
        }
    }
    Ok(())
}

fn write_atom(f: &mut fmt::Formatter<'_>, prefix: &str, atom: &Atom) -> fmt::Result {
    writeln!(f, "{prefix}Atom {} {}", atom.pred.text, span_text(atom.span))?;
    let indent = " ".repeat(prefix.len() - prefix.trim_start().len() + 2);
    write_terms(f, &indent, &atom.args)
}

fn write_terms<'a>(f: &mut fmt::Formatter<'_>, indent: &str, terms: impl IntoIterator<Item = &'a Term>) -> fmt::Result {
    for term in terms {
        write!(f, "{indent}")?;
        match &term.kind {
            TermKind::Unary { op, operand, .. } => {
                writeln!(f, "Unary {} {}", op.text(), span_text(term.span))?;
                write_terms(f, &format!("{indent}  "), [&**operand])?;
                continue;
            }
            TermKind::Binary { op, left, right, .. } => {
                writeln!(f, "Binary {} {}", op.text(), span_text(term.span))?;
                write_terms(f, &format!("{indent}  "), [&**left, &**right])?;
                continue;
            }
            TermKind::Call { functor, args, .. } => {
                let at = if matches!(functor, ir::Functor::User(_)) { "@" } else { "" };
                writeln!(f, "Call {at}{} {}", functor.name(), span_text(term.span))?;
                write_terms(f, &format!("{indent}  "), args)?;
                continue;
            }
            TermKind::Range { args, .. } => {
                writeln!(f, "Range {}", span_text(term.span))?;
                write_terms(f, &format!("{indent}  "), args)?;
                continue;
            }
            TermKind::Record { branch, args } => {
                match branch {
                    Some(branch) => writeln!(f, "Branch ${branch} {}", span_text(term.span))?,
                    None => writeln!(f, "Record {}", span_text(term.span))?,
                }
                write_terms(f, &format!("{indent}  "), args)?;
                continue;
            }
            TermKind::Aggregate { op, value, body, .. } => {
                writeln!(f, "Aggregate {} {}", op.text(), span_text(term.span))?;
                let inner = format!("{indent}  ");
                if let Some(value) = value {
                    write_terms(f, &format!("{inner}value "), [&**value])?;
                }
                write_literals(f, &format!("{inner}body "), body)?;
                continue;
            }
            _ => {}
        }
        match &term.kind {
            TermKind::Var(v) => write!(f, "Var {v}")?,
            TermKind::Anon => write!(f, "Anon _")?,
            TermKind::Ident(s) => write!(f, "Const {s}")?,
            TermKind::Int(s) => write!(f, "Int {s}")?,
            TermKind::Float(s) => write!(f, "Float {s}")?,
            TermKind::Str(s) => {
                f.write_str("Str ")?;
                // Always quoted, so that the tree shows which form the user wrote.
                write!(f, "{s:?}")?;
            }
            TermKind::Reserved(s) => write!(f, "Reserved {s}")?,
            TermKind::Nil => write!(f, "Nil")?,
            TermKind::Unary { .. }
            | TermKind::Binary { .. }
            | TermKind::Call { .. }
            | TermKind::Range { .. }
            | TermKind::Record { .. }
            | TermKind::Aggregate { .. } => {}
        }
        writeln!(f, " {}", span_text(term.span))?;
    }
    Ok(())
}
