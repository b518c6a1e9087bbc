//! The program: predicate arena, rules, inline facts and the query.

use crate::{parse_float, Adornment, Const, Expr, Interner, Span, Symbol, ValueStore};
use rustc_hash::{FxHashMap, FxHashSet};

/// Index of a predicate in [`Program::preds`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PredId(pub u32);

/// Index of a rule in [`Program::rules`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RuleId(pub u32);

impl PredId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl RuleId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A predicate's name. Generated names are structured so that they can never collide
/// with a source name (the printer renders them with a leading `@`, which the lexer
/// rejects in source text).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PredName {
    /// A name written by the user.
    Source(Symbol),
    /// `@a:p^α`: the answers of source predicate `p` called with adornment `α`.
    Answer(Symbol, Adornment),
    /// `@m:p^α`: the demand (magic) predicate of `p^α`; only the bound columns.
    Demand(Symbol, Adornment),
}

impl PredName {
    /// The source predicate this name is about.
    pub fn base(&self) -> Symbol {
        match self {
            PredName::Source(s) | PredName::Answer(s, _) | PredName::Demand(s, _) => *s,
        }
    }

    pub fn is_generated(&self) -> bool {
        !matches!(self, PredName::Source(_))
    }
}

/// What a column holds: an interned symbol, a 32-bit integer, signed (Soufflé's
/// `number`, every integer of the dlc dialect) or unsigned (Soufflé's `unsigned`), or a
/// 32-bit IEEE float (Soufflé's `float`), whose bits the tuple holds, or a record of a
/// declared record type or algebraic data type, whose id the tuple holds
/// (`records.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ValueType {
    #[default]
    Symbol,
    Number,
    Unsigned,
    Float,
    Record(crate::RecordTypeId),
}

impl ValueType {
    /// The name a report uses for the type.
    pub fn name(self) -> &'static str {
        match self {
            ValueType::Symbol => "symbol",
            ValueType::Number => "number",
            ValueType::Unsigned => "unsigned",
            ValueType::Float => "float",
            ValueType::Record(_) => "record",
        }
    }

    /// The type a name writes: `symbol`, `number`, `unsigned` or `float`.
    pub fn from_name(name: &str) -> Option<ValueType> {
        [ValueType::Symbol, ValueType::Number, ValueType::Unsigned, ValueType::Float]
            .into_iter()
            .find(|ty| ty.name() == name)
    }

    pub fn is_numeric(self) -> bool {
        matches!(self, ValueType::Number | ValueType::Unsigned | ValueType::Float)
    }

    pub fn is_record(self) -> bool {
        matches!(self, ValueType::Record(_))
    }

    /// The bits a column of this numeric type holds for the integer `text` writes (see
    /// [`parse_integer`]), or for a float column the float it writes (see
    /// [`parse_float`]); none for a symbol type, another text, or one out of range.
    pub fn number(self, text: &str) -> Option<u32> {
        if self == ValueType::Float {
            return parse_float(text).map(f32::to_bits);
        }
        let n = parse_integer(text)?;
        match self {
            ValueType::Symbol | ValueType::Float | ValueType::Record(_) => None,
            ValueType::Number => i32::try_from(n).ok().map(|n| n as u32),
            ValueType::Unsigned => u32::try_from(n).ok(),
        }
    }
}

/// A typed constant: an interned symbol, or a number held as itself. In a tuple every
/// value is its [`Value::raw`] `u32`, and the column's [`ValueType`] says how to read it
/// back ([`Value::from_raw`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    Symbol(Const),
    Number(i32),
    Unsigned(u32),
    /// A float, held as the bits of its `f32` (so that values compare and hash as
    /// tuples do).
    Float(u32),
    /// A record of the type, by its id in the value store (0 is `nil`).
    Record(crate::RecordTypeId, u32),
}

impl Value {
    /// The value as a tuple holds it: the symbol's id, or the number's 32 bits.
    pub fn raw(self) -> u32 {
        match self {
            Value::Symbol(c) => c.0,
            Value::Number(n) => n as u32,
            Value::Unsigned(n) | Value::Float(n) | Value::Record(_, n) => n,
        }
    }

    /// The value of type `ty` a tuple holds as `raw`.
    pub fn from_raw(ty: ValueType, raw: u32) -> Value {
        match ty {
            ValueType::Symbol => Value::Symbol(Const(raw)),
            ValueType::Number => Value::Number(raw as i32),
            ValueType::Unsigned => Value::Unsigned(raw),
            ValueType::Float => Value::Float(raw),
            ValueType::Record(ty) => Value::Record(ty, raw),
        }
    }

    pub fn value_type(self) -> ValueType {
        match self {
            Value::Symbol(_) => ValueType::Symbol,
            Value::Number(_) => ValueType::Number,
            Value::Unsigned(_) => ValueType::Unsigned,
            Value::Float(_) => ValueType::Float,
            Value::Record(ty, _) => ValueType::Record(ty),
        }
    }
}

/// EDB predicates hold input facts; IDB predicates head at least one rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PredKind {
    Edb,
    Idb,
}

#[derive(Clone, Debug)]
pub struct Pred {
    pub name: PredName,
    pub arity: usize,
    pub kind: PredKind,
    /// What each column holds. A source predicate's types are set when its program is
    /// lowered (declared in Soufflé, inferred in the dlc dialect); a generated one's
    /// follow from its source's when it is declared.
    pub types: Vec<ValueType>,
    /// The first place the predicate was mentioned (for generated ones: the call or
    /// query that created it).
    pub span: Span,
    /// Soufflé's `.limitsize`, if it has one.
    pub size_limit: Option<SizeLimit>,
    /// Soufflé's `choice-domain`, if the relation has one.
    pub choice: Option<ChoiceDomain>,
}

/// Soufflé's `choice-domain x, (y, z)` of a derived relation: each key (a column, or
/// several together) determines the rest of a tuple, so the relation holds at most one
/// tuple per value of each key. Of the candidate tuples one round of evaluation derives,
/// the engines keep them in ascending order of their values while no kept tuple has the
/// same value of some key (docs/semantics.md, Soufflé programs: `choice-domain`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChoiceDomain {
    /// Each key's columns, ascending.
    pub keys: Vec<Vec<usize>>,
    /// The qualifier in the relation's `.decl`.
    pub span: Span,
}

/// Soufflé's `.limitsize r(n=N)`: the fixpoint of the predicate's stratum ends before the
/// first iteration that starts with the predicate holding `tuples` tuples or more
/// (docs/semantics.md, Soufflé programs: `.limitsize`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeLimit {
    /// The `n` of the directive.
    pub tuples: u64,
    /// The relation's name in the directive.
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TermKind {
    Var(Symbol),
    Const(Value),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Term {
    pub kind: TermKind,
    pub span: Span,
}

impl Term {
    pub fn var(&self) -> Option<Symbol> {
        match self.kind {
            TermKind::Var(v) => Some(v),
            TermKind::Const(_) => None,
        }
    }

    pub fn constant(&self) -> Option<Value> {
        match self.kind {
            TermKind::Const(c) => Some(c),
            TermKind::Var(_) => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Atom {
    pub pred: PredId,
    pub args: Vec<Term>,
    pub span: Span,
}

impl Atom {
    /// The distinct variables of the atom in order of first occurrence.
    pub fn vars(&self) -> Vec<Symbol> {
        let mut out = Vec::new();
        for v in self.args.iter().filter_map(Term::var) {
            if !out.contains(&v) {
                out.push(v);
            }
        }
        out
    }
}

/// Where a rule came from: nemo-style provenance, so that a report about a generated
/// rule can point at the user's code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Written by the user.
    Source,
    /// The magic seed fact made from the query.
    Seed,
    /// The guarded copy of source rule `rule`.
    Main { rule: RuleId },
    /// The demand-propagation rule for the body atom at `position` of source rule `rule`.
    Demand { rule: RuleId, position: usize },
}

/// The integer a constant's text denotes, for the ordering comparisons: decimal digits
/// with an optional `-` (and Soufflé's `u` suffix, which types the literal, not its
/// value), within the 32-bit signed range Soufflé's `number` has.
pub fn integer_value(text: &str) -> Option<i64> {
    let text = text.strip_suffix('u').unwrap_or(text);
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<i32>().ok().map(i64::from)
}

/// The value of `text` as an unsigned 32-bit integer (Soufflé's `unsigned`): decimal
/// digits only, with an optional `u` suffix, within `0..=u32::MAX`; otherwise none.
pub fn unsigned_value(text: &str) -> Option<i64> {
    let text = text.strip_suffix('u').unwrap_or(text);
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<u32>().ok().map(i64::from)
}

/// The integer `text` writes: decimal with an optional sign, hex `0x1F`, binary `0b101`,
/// each with an optional `u` suffix; `None` for any other text or one beyond 64 bits.
pub fn parse_integer(text: &str) -> Option<i64> {
    let text = text.strip_suffix('u').unwrap_or(text);
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        (16, hex)
    } else if let Some(binary) = digits.strip_prefix("0b").or_else(|| digits.strip_prefix("0B")) {
        (2, binary)
    } else {
        (10, digits)
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let magnitude = i128::from_str_radix(digits, radix).ok()?;
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

/// A comparison operator of a constraint `left op right`, or a constraint on texts
/// written as a call: `contains(left, right)` (`left` is a part of `right`) and
/// `match(left, right)` (the regular expression `left` matches all of `right`), each
/// with its negation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Contains,
    NotContains,
    Match,
    NotMatch,
}

impl CmpOp {
    /// The operator as written in both dialects.
    pub fn text(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Contains => "contains",
            CmpOp::NotContains => "!contains",
            CmpOp::Match => "match",
            CmpOp::NotMatch => "!match",
        }
    }

    /// The constraint a call names (`contains(a, b)`, `match(a, b)`), if any.
    pub fn from_call(name: &str) -> Option<CmpOp> {
        match name {
            "contains" => Some(CmpOp::Contains),
            "match" => Some(CmpOp::Match),
            _ => None,
        }
    }

    /// Whether the constraint is written as a call, `contains(a, b)`, not between its
    /// operands.
    pub fn is_call(self) -> bool {
        matches!(self, CmpOp::Contains | CmpOp::NotContains | CmpOp::Match | CmpOp::NotMatch)
    }

    /// The constraint on `left` and `right` as both dialects write it: `a < b`,
    /// `contains(a, b)`, `!match(a, b)`.
    pub fn write(self, left: &str, right: &str) -> String {
        match self.is_call() {
            true => format!("{}({left}, {right})", self.text()),
            false => format!("{left} {} {right}", self.text()),
        }
    }

    /// The operator a written one names, if any.
    pub fn from_text(text: &str) -> Option<CmpOp> {
        [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge].into_iter().find(|op| op.text() == text)
    }

    /// The operator that holds exactly when this one does not (`<` for `>=`).
    pub fn negated(self) -> CmpOp {
        match self {
            CmpOp::Eq => CmpOp::Ne,
            CmpOp::Ne => CmpOp::Eq,
            CmpOp::Lt => CmpOp::Ge,
            CmpOp::Le => CmpOp::Gt,
            CmpOp::Gt => CmpOp::Le,
            CmpOp::Ge => CmpOp::Lt,
            CmpOp::Contains => CmpOp::NotContains,
            CmpOp::NotContains => CmpOp::Contains,
            CmpOp::Match => CmpOp::NotMatch,
            CmpOp::NotMatch => CmpOp::Match,
        }
    }

    /// Whether the operator orders its operands (as numbers, or symbols by text); the
    /// others compare values for identity or, written as calls, read texts.
    pub fn is_ordering(self) -> bool {
        matches!(self, CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge)
    }

    /// Whether the operator reads the texts of operands of type `ty`.
    pub fn reads_texts(self, ty: ValueType) -> bool {
        self.is_call() || (self.is_ordering() && ty == ValueType::Symbol)
    }

    /// Whether the values `a` and `b` of type `ty`, as tuples hold them, satisfy the
    /// operator: identity for `=` and `!=` (of floats: their equality as floats); for the
    /// others the order of the type: signed
    /// or unsigned 32-bit integers, floats by their value, or symbols by their text (`values`, which a caller
    /// without symbols to order may leave out), byte by byte.
    pub fn holds_for(self, a: u32, b: u32, ty: ValueType, values: Option<&ValueStore>) -> bool {
        let order = match (self, ty) {
            // Floats compare as floats: `-0.0 = 0.0`, and "not a number" equals nothing.
            (CmpOp::Eq, ValueType::Float) => return f32::from_bits(a) == f32::from_bits(b),
            (CmpOp::Ne, ValueType::Float) => return f32::from_bits(a) != f32::from_bits(b),
            (CmpOp::Eq, _) => return a == b,
            (CmpOp::Ne, _) => return a != b,
            (CmpOp::Contains | CmpOp::NotContains, _) => {
                let Some(values) = values else { return false };
                let texts = values.texts();
                return texts.text(Const(b)).contains(texts.text(Const(a))) == (self == CmpOp::Contains);
            }
            (CmpOp::Match | CmpOp::NotMatch, _) => {
                let Some(values) = values else { return false };
                return values.matches(Const(a), Const(b)) == Some(self == CmpOp::Match);
            }
            (_, ValueType::Number) => (a as i32).cmp(&(b as i32)),
            // The front end lets no ordering comparison of records through.
            (_, ValueType::Unsigned | ValueType::Record(_)) => a.cmp(&b),
            // Not a number is unordered: no ordering comparison holds of it.
            (_, ValueType::Float) => match f32::from_bits(a).partial_cmp(&f32::from_bits(b)) {
                Some(order) => order,
                None => return false,
            },
            (_, ValueType::Symbol) => match values {
                Some(values) => {
                    let texts = values.texts();
                    texts.text(Const(a)).cmp(texts.text(Const(b)))
                }
                None => return false,
            },
        };
        self.holds(order as i64, 0)
    }

    /// The outcome of the comparison of two numbers.
    pub fn holds(self, left: i64, right: i64) -> bool {
        match self {
            CmpOp::Eq => left == right,
            CmpOp::Ne => left != right,
            CmpOp::Lt => left < right,
            CmpOp::Le => left <= right,
            CmpOp::Gt => left > right,
            CmpOp::Ge => left >= right,
            CmpOp::Contains | CmpOp::NotContains | CmpOp::Match | CmpOp::NotMatch => false,
        }
    }
}

/// A constraint `left op right` of a rule body, each side an arithmetic expression (most
/// often a lone term). `X = e` where `X` occurs in no positive body atom is an
/// assignment: it binds `X` to the value of `e`. An instance where an expression has no
/// value (a division by zero) satisfies no comparison and binds nothing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Comparison {
    pub op: CmpOp,
    pub left: Expr,
    pub right: Expr,
    /// The operands' type, which an ordering comparison orders by.
    pub domain: ValueType,
    pub span: Span,
}

impl Comparison {
    /// The variables of both operands, with repeats.
    pub fn vars(&self) -> impl Iterator<Item = Symbol> + '_ {
        self.left.vars().chain(self.right.vars())
    }

    /// Whether an operand computes something.
    pub fn is_arithmetic(&self) -> bool {
        self.left.is_arithmetic() || self.right.is_arithmetic()
    }
}

/// A rule `head <- body, !negated, comparisons, generators`. The positive atoms bind variables; a
/// negated atom holds when no fact matches it once its bound variables are set (its
/// other variables are wildcards, as `_` is); a comparison holds or, as an assignment,
/// binds. Only the positive atoms have an order (the left-prefix SIPS reads it); the
/// negations and comparisons apply wherever their variables are bound.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    pub head: Atom,
    pub body: Vec<Atom>,
    pub negated: Vec<Atom>,
    pub comparisons: Vec<Comparison>,
    /// The generators `X = range(..)`: each binds its variable to every value of its
    /// range once the variables of its bounds are bound, as an assignment binds one.
    pub generators: Vec<crate::Generator>,
    pub span: Span,
    pub origin: Origin,
    /// Set on a *reduction*: the rule `r(k.., N) <- N = op v : { b(k.., l.., v) }`, whose
    /// one body atom holds the rows of an aggregate (group keys first, the aggregated
    /// value last) and whose head holds one fact per group with rows: its keys and the
    /// aggregate's value. Lowering makes one per aggregate of the source.
    pub aggregate: Option<Aggregation>,
}

/// The aggregate operators engines evaluate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AggregateOp {
    /// The number of rows.
    Count,
    /// The 32-bit wrapping sum of the values, one per row (of floats: their float sum).
    Sum,
    /// The least value, in the value column's order.
    Min,
    /// The greatest value.
    Max,
}

impl AggregateOp {
    /// The operator's keyword in both dialects.
    pub fn text(self) -> &'static str {
        match self {
            AggregateOp::Count => "count",
            AggregateOp::Sum => "sum",
            AggregateOp::Min => "min",
            AggregateOp::Max => "max",
        }
    }

    /// Whether the operator reads a value column (all but `count`).
    pub fn reads_value(self) -> bool {
        self != AggregateOp::Count
    }

    /// The result so far `acc` combined with one more row's `value` (a tuple's bits, of
    /// type `ty`); `None` before the first row.
    pub fn step(self, acc: Option<u32>, value: u32, ty: ValueType) -> u32 {
        if ty == ValueType::Float && self != AggregateOp::Count {
            return self.step_float(acc, value);
        }
        let Some(acc) = acc else {
            return if self == AggregateOp::Count { 1 } else { value };
        };
        let less = |a: u32, b: u32| match ty {
            ValueType::Unsigned => a < b,
            ValueType::Float => f32::from_bits(a) < f32::from_bits(b),
            _ => (a as i32) < (b as i32),
        };
        match self {
            AggregateOp::Count => acc.wrapping_add(1),
            AggregateOp::Sum if ty == ValueType::Float => (f32::from_bits(acc) + f32::from_bits(value)).to_bits(),
            AggregateOp::Sum => acc.wrapping_add(value),
            AggregateOp::Min if less(value, acc) => value,
            AggregateOp::Max if less(acc, value) => value,
            AggregateOp::Min | AggregateOp::Max => acc,
        }
    }
}

impl AggregateOp {
    /// [`AggregateOp::step`] of floats, as Soufflé computes it: from 0 for `sum`, and for
    /// `min` and `max` from the greatest and the least finite float, each row's value
    /// taken when it is less (greater): so "not a number" is never taken, and `min` of
    /// infinity alone is the greatest finite float.
    fn step_float(self, acc: Option<u32>, value: u32) -> u32 {
        let start = match self {
            AggregateOp::Min => f32::MAX,
            AggregateOp::Max => f32::MIN,
            AggregateOp::Sum | AggregateOp::Count => 0.0,
        };
        let (acc, v) = (acc.map_or(start, f32::from_bits), f32::from_bits(value));
        match self {
            AggregateOp::Sum | AggregateOp::Count => crate::float::float_result(acc + v, acc, v),
            AggregateOp::Min if v < acc => value,
            AggregateOp::Max if acc < v => value,
            AggregateOp::Min | AggregateOp::Max => acc.to_bits(),
        }
    }

    /// Whether a group whose aggregate is `acc` (of values of type `ty`) gives a fact: not
    /// when a float `sum` is "not a number", of which Soufflé derives none.
    pub fn yields(self, acc: u32, ty: ValueType) -> bool {
        !(self == AggregateOp::Sum && ty == ValueType::Float && f32::from_bits(acc).is_nan())
    }
}

/// What makes a rule a reduction (see [`Rule::aggregate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Aggregation {
    pub op: AggregateOp,
    /// How many leading columns of the body atom (and of the head) are the group keys.
    pub keys: usize,
    /// The type of the body atom's last column (the aggregated value), which `min` and
    /// `max` order by.
    pub domain: ValueType,
    /// The head's last variable, which the reduction binds to the aggregate's value.
    pub result: Symbol,
}

impl Rule {
    /// A rule of positive atoms only.
    pub fn positive(head: Atom, body: Vec<Atom>, span: Span, origin: Origin) -> Rule {
        Rule {
            head,
            body,
            negated: Vec::new(),
            comparisons: Vec::new(),
            generators: Vec::new(),
            span,
            origin,
            aggregate: None,
        }
    }

    /// Whether the body is positive atoms only (a reduction is not: its head is no
    /// projection of one body row).
    pub fn is_positive(&self) -> bool {
        self.negated.is_empty() && self.comparisons.is_empty() && self.generators.is_empty() && self.aggregate.is_none()
    }

    /// Distinct variables of the positive body atoms, in order of first occurrence.
    pub fn body_vars(&self) -> Vec<Symbol> {
        let mut seen: FxHashSet<Symbol> = FxHashSet::default();
        self.body.iter().flat_map(|atom| atom.args.iter().filter_map(Term::var)).filter(|&v| seen.insert(v)).collect()
    }

    /// The variables the body binds: those of positive atoms, then those the
    /// assignments and generators bind from them (in the order they become bound).
    pub fn bound_vars(&self) -> Vec<Symbol> {
        let mut bound = self.body_vars();
        if let Some(aggregation) = &self.aggregate {
            bound.push(aggregation.result);
        }
        let mut seen: FxHashSet<Symbol> = bound.iter().copied().collect();
        loop {
            let before = bound.len();
            for c in self.comparisons.iter().filter(|c| c.op == CmpOp::Eq) {
                for (target, source) in [(&c.left, &c.right), (&c.right, &c.left)] {
                    if let Some(v) = target.var() {
                        if !seen.contains(&v) && source.vars().all(|s| seen.contains(&s)) {
                            seen.insert(v);
                            bound.push(v);
                        }
                    }
                }
            }
            for g in &self.generators {
                if !seen.contains(&g.var) && g.reads().all(|s| seen.contains(&s)) {
                    seen.insert(g.var);
                    bound.push(g.var);
                }
            }
            if bound.len() == before {
                return bound;
            }
        }
    }
}

/// A dominance rule, Soufflé's subsumptive clause `r(a..) <= r(b..) :- body.`: a fact of
/// `r` that matches `dominated` is removed when another fact of `r` matches `dominating`
/// and the body holds of the two (docs/semantics.md, Subsumption). Both atoms name the
/// relation the rule belongs to. The body is a rule body without a head: positive atoms
/// of any relation, read as the evaluation has them when the rule is applied, negated
/// atoms, and comparisons (assignments included); [`Dominance::search`] evaluates it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dominance {
    /// Whether the rule is a lattice relation's, made from a recursive `min` or `max`
    /// (docs/semantics.md, Recursive `min` and `max`): one fact per group, whose
    /// evaluation ends with E0047 when a cycle keeps improving a value.
    pub lattice: bool,
    pub dominated: Atom,
    pub dominating: Atom,
    /// The body's positive atoms.
    pub body: Vec<Atom>,
    /// The body's negated atoms: each holds when no fact matches it once the variables
    /// the rest of the body binds are set (its other variables are wildcards).
    pub negated: Vec<Atom>,
    pub comparisons: Vec<Comparison>,
    pub span: Span,
}

impl Dominance {
    /// The relation the rule removes facts of.
    pub fn pred(&self) -> PredId {
        self.dominated.pred
    }

    /// The relations the body reads besides the two facts compared, positively or not.
    pub fn reads(&self) -> impl Iterator<Item = PredId> + '_ {
        self.body.iter().chain(&self.negated).map(|a| a.pred)
    }
}

/// A ground EDB fact written inline in the program or read from a facts file, with
/// where it was written; engines and batches hold the fact alone, a [`crate::Tuple`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fact {
    pub pred: PredId,
    /// As tuples hold them: the predicate's column types say how to read them.
    pub values: Vec<u32>,
    pub span: Span,
}

impl Fact {
    /// The fact as a relation holds it, without where it was written.
    pub fn tuple(&self) -> crate::Tuple {
        (self.pred, self.values.clone())
    }
}

/// The selection query `?- p(t)`: constants are the bound positions; a variable repeated
/// in the query additionally requires equal columns in the answers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Query {
    pub atom: Atom,
    /// The record patterns of Soufflé's dialect (`?- q([1, y], s)`); the atom holds a
    /// fresh variable where each is, so that the rewrite and the engines see a free column.
    pub records: Option<RecordPatterns>,
}

/// The record patterns of a query, by argument, with the store that holds the records
/// they are matched against.
#[derive(Clone, Debug)]
pub struct RecordPatterns {
    pub args: Vec<(usize, FieldPattern)>,
    pub values: ValueStore,
}

impl PartialEq for RecordPatterns {
    fn eq(&self, other: &Self) -> bool {
        self.args == other.args && self.values.same_store(&other.values)
    }
}

impl Eq for RecordPatterns {}

impl std::hash::Hash for RecordPatterns {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.args.hash(state);
    }
}

/// What a value of a query's record pattern must be.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FieldPattern {
    /// This value (a record with no variable in it is one value: records are stored once).
    Value(Value),
    /// A query variable: the same value wherever the query names it.
    Var(Symbol),
    /// `_`: any value.
    Any,
    /// A record of type `ty` (of branch `branch`, for an algebraic data type) whose fields
    /// match these.
    Record { ty: crate::RecordTypeId, branch: Option<u16>, fields: Vec<FieldPattern> },
}

/// The values a query's variables took in one tuple, as [`Query::matches`] meets them.
struct Bindings(Vec<(Symbol, u32)>);

impl Bindings {
    /// Binds `var` to `value`, or says whether it was bound to `value` already.
    fn bind(&mut self, var: Symbol, value: u32) -> bool {
        match self.0.iter().find(|(v, _)| *v == var) {
            Some(&(_, seen)) => seen == value,
            None => {
                self.0.push((var, value));
                true
            }
        }
    }
}

impl FieldPattern {
    /// Whether `value` matches the pattern, with its variables bound as `bindings` holds
    /// them. Patterns nest no deeper than the query text wrote them, which the reader bounds.
    fn matches(&self, value: u32, values: &ValueStore, bindings: &mut Bindings) -> bool {
        match self {
            FieldPattern::Value(v) => v.raw() == value,
            FieldPattern::Var(var) => bindings.bind(*var, value),
            FieldPattern::Any => true,
            FieldPattern::Record { branch, fields, .. } => {
                let skip = usize::from(branch.is_some());
                if branch.is_some_and(|b| values.field(value, 0) != Some(u32::from(b))) {
                    return false;
                }
                fields
                    .iter()
                    .enumerate()
                    .all(|(i, field)| values.field(value, i + skip).is_some_and(|v| field.matches(v, values, bindings)))
            }
        }
    }
}

impl Query {
    /// `b` where the argument is a constant, `f` where it is a variable.
    pub fn adornment(&self) -> Adornment {
        Adornment(
            self.atom
                .args
                .iter()
                .map(|t| if t.constant().is_some() { crate::Bf::Bound } else { crate::Bf::Free })
                .collect(),
        )
    }

    /// The constants at the bound positions, in order.
    pub fn constants(&self) -> Vec<Value> {
        self.atom.args.iter().filter_map(Term::constant).collect()
    }

    /// The query of `atom`, with no record pattern.
    pub fn new(atom: Atom) -> Self {
        Query { atom, records: None }
    }

    /// Whether a tuple of the queried predicate is an answer: constants equal, repeated
    /// query variables equal, and each record pattern matched.
    pub fn matches(&self, tuple: &[u32]) -> bool {
        let args = &self.atom.args;
        if args.len() != tuple.len() {
            return false;
        }
        let mut bindings = Bindings(Vec::new());
        let plain = args.iter().zip(tuple).all(|(t, &value)| match t.kind {
            TermKind::Const(c) => c.raw() == value,
            TermKind::Var(v) => bindings.bind(v, value),
        });
        plain
            && self.records.as_ref().is_none_or(|records| {
                records.args.iter().all(|(i, pattern)| pattern.matches(tuple[*i], &records.values, &mut bindings))
            })
    }

    /// Whether [`Query::matches`] must see each row of the relation whose bound columns
    /// equal the query's constants: a variable repeats, or a record pattern is to match.
    pub fn tests_each_row(&self) -> bool {
        let vars: Vec<_> = self.atom.args.iter().filter_map(|t| t.var()).collect();
        self.records.is_some() || vars.iter().enumerate().any(|(i, v)| vars[..i].contains(v))
    }
}

/// A whole program. Generated programs (the magic rewrite) keep the same interners and
/// the same ids for every predicate they share with their source, so one EDB database
/// serves both.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub symbols: Interner<Symbol>,
    pub consts: ValueStore,
    pub preds: Vec<Pred>,
    pub rules: Vec<Rule>,
    pub facts: Vec<Fact>,
    pub query: Option<Query>,
    /// The dominance rules (Soufflé's subsumptive clauses), of derived relations only.
    pub dominances: Vec<Dominance>,
    by_name: FxHashMap<PredName, PredId>,
}

impl Program {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn pred(&self, id: PredId) -> &Pred {
        &self.preds[id.index()]
    }

    pub fn pred_mut(&mut self, id: PredId) -> &mut Pred {
        &mut self.preds[id.index()]
    }

    pub fn rule(&self, id: RuleId) -> &Rule {
        &self.rules[id.index()]
    }

    pub fn pred_ids(&self) -> impl Iterator<Item = PredId> {
        (0..self.preds.len() as u32).map(PredId)
    }

    pub fn rule_ids(&self) -> impl Iterator<Item = RuleId> {
        (0..self.rules.len() as u32).map(RuleId)
    }

    pub fn lookup(&self, name: &PredName) -> Option<PredId> {
        self.by_name.get(name).copied()
    }

    /// Looks a source predicate up by its text.
    pub fn lookup_source(&self, name: &str) -> Option<PredId> {
        self.symbols.get(name).and_then(|s| self.lookup(&PredName::Source(s)))
    }

    /// Returns the predicate with this name, creating it with the given arity and kind
    /// if it is new. The caller checks arity agreement (and reports mismatches with both
    /// spans); this function never changes an existing predicate.
    pub fn declare_pred(&mut self, name: PredName, arity: usize, kind: PredKind, span: Span) -> PredId {
        if let Some(id) = self.lookup(&name) {
            return id;
        }
        let id = PredId(self.preds.len() as u32);
        let types = self.generated_types(&name).unwrap_or_else(|| vec![ValueType::Symbol; arity]);
        self.preds.push(Pred { name: name.clone(), arity, kind, types, span, size_limit: None, choice: None });
        self.by_name.insert(name, id);
        id
    }

    /// The column types of a generated predicate, from its source predicate's: an answer
    /// relation has all of them, a demand relation those of the bound columns.
    fn generated_types(&self, name: &PredName) -> Option<Vec<ValueType>> {
        let (base, adornment, bound_only) = match name {
            PredName::Source(_) => return None,
            PredName::Answer(s, a) => (*s, a, false),
            PredName::Demand(s, a) => (*s, a, true),
        };
        let source = &self.pred(self.lookup(&PredName::Source(base))?).types;
        let keep = |i: usize| !bound_only || adornment.0.get(i) == Some(&crate::Bf::Bound);
        Some(source.iter().enumerate().filter(|&(i, _)| keep(i)).map(|(_, &t)| t).collect())
    }

    pub fn add_rule(&mut self, rule: Rule) -> RuleId {
        self.rules.push(rule);
        RuleId(self.rules.len() as u32 - 1)
    }

    /// The rules whose head is `pred`, in program order.
    pub fn rules_for(&self, pred: PredId) -> impl Iterator<Item = (RuleId, &Rule)> {
        self.rule_ids().map(|id| (id, self.rule(id))).filter(move |(_, r)| r.head.pred == pred)
    }

    /// The value column `column` of `pred` holds as `raw`.
    pub fn value(&self, pred: PredId, column: usize, raw: u32) -> Value {
        Value::from_raw(self.column_type(pred, column), raw)
    }

    /// The type of column `column` of `pred`; a symbol for a column the program does not
    /// know of.
    pub fn column_type(&self, pred: PredId, column: usize) -> ValueType {
        self.preds.get(pred.index()).and_then(|p| p.types.get(column)).copied().unwrap_or_default()
    }

    /// The value of type `ty` that `text` writes (a field of a facts file, a constant of a
    /// query): a symbol is interned; a number is read in decimal (with a sign and leading
    /// zeros, as Soufflé reads its facts), hex `0x1F`, binary `0b101` or with a `u` suffix,
    /// and must fit the type's 32 bits. `Err` says why a text is no value of the type.
    pub fn encode(&mut self, ty: ValueType, text: &str) -> Result<u32, &'static str> {
        match ty {
            ValueType::Symbol => Ok(self.consts.intern(text).0),
            ValueType::Record(record) => self.consts.read_record(record, text).map_err(|_| "no record of its type"),
            ValueType::Float => ty.number(text).ok_or("not a float within a float's range"),
            ty => ty.number(text).ok_or(match (parse_integer(text), ty) {
                (None, _) => "not an integer",
                (Some(_), ValueType::Unsigned) => "outside the range of an unsigned (0 to 4294967295)",
                (Some(_), _) => "outside the 32-bit range of a number",
            }),
        }
    }

    /// Whether a rule negates an atom: such a program is evaluated stratum by stratum and
    /// its updates are recomputed, since more input may then derive less.
    pub fn negates(&self) -> bool {
        self.rules.iter().any(|r| !r.negated.is_empty())
    }

    /// The dominance rules of `pred`, in program order.
    pub fn dominances_of(&self, pred: PredId) -> impl Iterator<Item = &Dominance> {
        self.dominances.iter().filter(move |d| d.pred() == pred)
    }

    /// The first predicate with a [`Pred::size_limit`], if any.
    pub fn size_limited(&self) -> Option<PredId> {
        self.pred_ids().find(|&p| self.pred(p).size_limit.is_some())
    }

    /// The first predicate with a [`Pred::choice`], if any.
    pub fn chooses(&self) -> Option<PredId> {
        self.pred_ids().find(|&p| self.pred(p).choice.is_some())
    }

    /// A copy with the same interners, predicate table and dominance rules but no rules,
    /// facts or query: the starting point of a rewritten program.
    pub fn empty_like(&self) -> Program {
        Program {
            symbols: self.symbols.clone(),
            consts: self.consts.clone(),
            preds: self.preds.clone(),
            rules: Vec::new(),
            facts: Vec::new(),
            query: None,
            dominances: self.dominances.clone(),
            by_name: self.by_name.clone(),
        }
    }
}
