//! Stable text printers for the IR. This text is what `--emit ir` prints and what
//! snapshot tests record, and the only place generated names become strings.

use crate::{
    Atom, Dominance, FieldPattern, PredId, PredKind, PredName, Program, Query, Rule, Term, TermKind, Value, ValueType,
};
use std::fmt;

/// Prints a predicate name: `R`, `@a:R^bf`, `@m:R^bf`.
pub struct DisplayPred<'a>(pub &'a Program, pub PredId);
/// Prints a value: a number in decimal, a symbol bare when it reads back as the same
/// constant, quoted otherwise.
pub struct DisplayValue<'a>(pub &'a Program, pub Value);
pub struct DisplayTerm<'a>(pub &'a Program, pub &'a Term);
/// Prints `R(X,a)`; a zero-arity atom prints as `P()`.
pub struct DisplayAtom<'a>(pub &'a Program, pub &'a Atom);
/// Prints `Head <- A, B` (an empty body prints as `Head <-`).
pub struct DisplayRule<'a>(pub &'a Program, pub &'a Rule);
/// Prints a rule as [`DisplayRule`] does, followed by the types its comparisons compute
/// and compare in and a `min`/`max`/`sum` reduces in, in body order, as a comment both
/// dialects skip: `P(X) <- E(X,Y), X < Y  // types: symbol`. The IR listings print rules
/// so, since that type decides how values order, and the rule still reads back.
pub struct DisplayTypedRule<'a>(pub &'a Program, pub &'a Rule);
/// Prints a tuple of predicate `.1` (values as tuples hold them) as `(a,b)`.
pub struct DisplayTuple<'a>(pub &'a Program, pub PredId, pub &'a [u32]);

impl fmt::Display for DisplayPred<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.0;
        match &p.pred(self.1).name {
            PredName::Source(s) => f.write_str(p.symbols.text(*s)),
            PredName::Answer(s, a) => write!(f, "@a:{}^{}", p.symbols.text(*s), a),
            PredName::Demand(s, a) => write!(f, "@m:{}^{}", p.symbols.text(*s), a),
        }
    }
}

/// True when `text` lexes back as a bare constant (lower-case identifier or integer).
pub fn is_bare_constant(text: &str) -> bool {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) if c.is_ascii_lowercase() => text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
        Some(c) if c.is_ascii_digit() || c == '-' => {
            let digits = if c == '-' { &text[1..] } else { text };
            !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
        }
        _ => false,
    }
}

/// Writes a constant's text, quoted and escaped unless it is bare.
pub fn write_constant(f: &mut impl fmt::Write, text: &str) -> fmt::Result {
    if is_bare_constant(text) {
        return f.write_str(text);
    }
    f.write_char('"')?;
    for c in text.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\t' => f.write_str("\\t")?,
            '\r' => f.write_str("\\r")?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

impl fmt::Display for DisplayValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Value::Symbol(c) => write_constant(f, &self.0.consts.text(c)),
            Value::Number(n) => write!(f, "{n}"),
            Value::Unsigned(n) => write!(f, "{n}"),
            Value::Float(bits) => f.write_str(&crate::float_text(f32::from_bits(bits))),
            Value::Record(ty, id) => {
                let mut text = String::new();
                self.0.consts.write_record(&mut text, ValueType::Record(ty), id);
                f.write_str(&text)
            }
        }
    }
}

impl fmt::Display for DisplayTerm<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1.kind {
            TermKind::Var(v) => f.write_str(self.0.symbols.text(v)),
            TermKind::Const(c) => DisplayValue(self.0, c).fmt(f),
        }
    }
}

impl fmt::Display for DisplayAtom<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", DisplayPred(self.0, self.1.pred))?;
        for (i, t) in self.1.args.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            DisplayTerm(self.0, t).fmt(f)?;
        }
        f.write_str(")")
    }
}

/// Prints a query's atom with its record patterns where they were written: `q([1, y],s)`.
pub struct DisplayQuery<'a>(pub &'a Program, pub &'a Query);

impl fmt::Display for DisplayQuery<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let DisplayQuery(program, query) = *self;
        let patterns = query.records.as_ref().map_or(&[][..], |r| &r.args[..]);
        write!(f, "{}(", DisplayPred(program, query.atom.pred))?;
        for (i, t) in query.atom.args.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            match patterns.iter().find(|(at, _)| *at == i) {
                Some((_, pattern)) => write_pattern(f, program, pattern)?,
                None => DisplayTerm(program, t).fmt(f)?,
            }
        }
        f.write_str(")")
    }
}

fn write_pattern(f: &mut fmt::Formatter<'_>, program: &Program, pattern: &FieldPattern) -> fmt::Result {
    match pattern {
        FieldPattern::Value(value) => write!(f, "{}", DisplayValue(program, *value)),
        FieldPattern::Var(v) => f.write_str(program.symbols.text(*v)),
        FieldPattern::Any => f.write_str("_"),
        FieldPattern::Record { ty, branch, fields } => {
            let close = match branch {
                Some(b) => {
                    let record_type = program.consts.record_type(*ty);
                    let name = record_type.branches.get(usize::from(*b)).map_or("", |b| b.name.as_str());
                    write!(f, "${name}(")?;
                    ")"
                }
                None => {
                    f.write_str("[")?;
                    "]"
                }
            };
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write_pattern(f, program, field)?;
            }
            f.write_str(close)
        }
    }
}

impl fmt::Display for DisplayRule<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_rule(f, self.0, self.1, false)
    }
}

impl fmt::Display for DisplayTypedRule<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_rule(f, self.0, self.1, true)
    }
}

fn write_rule(f: &mut fmt::Formatter<'_>, program: &Program, rule: &Rule, typed: bool) -> fmt::Result {
    write!(f, "{} <-", DisplayAtom(program, &rule.head))?;
    if let (Some(aggregation), [rows]) = (&rule.aggregate, rule.body.as_slice()) {
        // `r(K,N) <- N = sum V : b(K,L,V)`: the one-atom form both dialects read.
        let result = program.symbols.text(aggregation.result);
        write!(f, " {result} = {}", aggregation.op.text())?;
        let value = rows.args.last().filter(|_| aggregation.op.reads_value());
        if let Some(value) = value {
            write!(f, " {}", DisplayTerm(program, value))?;
        }
        write!(f, " : {}", DisplayAtom(program, rows))?;
        if typed && value.is_some() {
            write!(f, "  // types: {}", aggregation.domain.name())?;
        }
        return Ok(());
    }
    let mut separator = " ";
    for a in &rule.body {
        write!(f, "{separator}{}", DisplayAtom(program, a))?;
        separator = ", ";
    }
    for a in &rule.negated {
        write!(f, "{separator}!{}", DisplayAtom(program, a))?;
        separator = ", ";
    }
    for c in &rule.comparisons {
        let (left, right) = (crate::DisplayExpr(program, &c.left), crate::DisplayExpr(program, &c.right));
        write!(f, "{separator}{}", c.op.write(&left.to_string(), &right.to_string()))?;
        separator = ", ";
    }
    for g in &rule.generators {
        write!(f, "{separator}{} = range(", program.symbols.text(g.var))?;
        for (k, operand) in g.operands().enumerate() {
            let comma = if k == 0 { "" } else { ", " };
            write!(f, "{comma}{}", crate::DisplayExpr(program, operand))?;
        }
        f.write_str(")")?;
        separator = ", ";
    }
    if typed && !(rule.comparisons.is_empty() && rule.generators.is_empty()) {
        let types = rule.comparisons.iter().map(|c| c.domain).chain(rule.generators.iter().map(|g| g.domain));
        let types: Vec<&str> = types.map(|t| t.name()).collect();
        write!(f, "  // types: {}", types.join(", "))?;
    }
    Ok(())
}

/// A dominance rule as Soufflé writes it, `r(x,d1) <= r(x,d2) :- better(d2, d1)`, with its
/// comparisons' types when `typed`.
pub struct DisplayDominance<'a>(pub &'a Program, pub &'a Dominance, pub bool);

impl fmt::Display for DisplayDominance<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let DisplayDominance(program, dominance, typed) = *self;
        write!(f, "{} <= {}", DisplayAtom(program, &dominance.dominated), DisplayAtom(program, &dominance.dominating))?;
        let mut separator = " :- ";
        for atom in &dominance.body {
            write!(f, "{separator}{}", DisplayAtom(program, atom))?;
            separator = ", ";
        }
        for atom in &dominance.negated {
            write!(f, "{separator}!{}", DisplayAtom(program, atom))?;
            separator = ", ";
        }
        for c in &dominance.comparisons {
            let (left, right) = (crate::DisplayExpr(program, &c.left), crate::DisplayExpr(program, &c.right));
            write!(f, "{separator}{}", c.op.write(&left.to_string(), &right.to_string()))?;
            separator = ", ";
        }
        if typed && !dominance.comparisons.is_empty() {
            let types: Vec<&str> = dominance.comparisons.iter().map(|c| c.domain.name()).collect();
            write!(f, "  // types: {}", types.join(", "))?;
        }
        Ok(())
    }
}

impl fmt::Display for DisplayTuple<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, v) in self.2.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            DisplayValue(self.0, self.0.value(self.1, i, *v)).fmt(f)?;
        }
        f.write_str(")")
    }
}

impl Program {
    pub fn display_pred(&self, id: PredId) -> DisplayPred<'_> {
        DisplayPred(self, id)
    }

    pub fn display_atom<'a>(&'a self, atom: &'a Atom) -> DisplayAtom<'a> {
        DisplayAtom(self, atom)
    }

    pub fn display_rule<'a>(&'a self, rule: &'a Rule) -> DisplayRule<'a> {
        DisplayRule(self, rule)
    }

    /// The rule as the `--emit ir` listing prints it, with its comparisons' types.
    pub fn display_typed_rule<'a>(&'a self, rule: &'a Rule) -> DisplayTypedRule<'a> {
        DisplayTypedRule(self, rule)
    }

    pub fn display_tuple<'a>(&'a self, pred: PredId, tuple: &'a [u32]) -> DisplayTuple<'a> {
        DisplayTuple(self, pred, tuple)
    }

    /// The predicate name as a string (for JSON keys and tables).
    pub fn pred_name(&self, id: PredId) -> String {
        DisplayPred(self, id).to_string()
    }

    /// A value's text as the user would write it.
    pub fn const_text(&self, value: Value) -> String {
        DisplayValue(self, value).to_string()
    }

    /// A value's plain text, as facts files and `-D` hold it: a symbol's text unquoted.
    pub fn value_text(&self, value: Value) -> String {
        match value {
            Value::Symbol(c) => self.consts.text(c).to_string(),
            Value::Number(n) => n.to_string(),
            Value::Unsigned(n) => n.to_string(),
            Value::Float(bits) => crate::float_text(f32::from_bits(bits)),
            Value::Record(ty, id) => {
                let mut text = String::new();
                self.consts.write_record(&mut text, crate::ValueType::Record(ty), id);
                text
            }
        }
    }
}

/// The `--emit ir` listing: predicates with arity and kind, rules, inline facts, query.
impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "% predicates")?;
        for id in self.pred_ids() {
            let p = self.pred(id);
            let kind = match p.kind {
                PredKind::Edb => "edb",
                PredKind::Idb => "idb",
            };
            writeln!(f, "{}/{} {}", DisplayPred(self, id), p.arity, kind)?;
        }
        writeln!(f, "% rules")?;
        for id in self.rule_ids() {
            writeln!(f, "r{}: {}", id.0, DisplayTypedRule(self, self.rule(id)))?;
        }
        if !self.dominances.is_empty() {
            writeln!(f, "% dominance")?;
            for dominance in &self.dominances {
                writeln!(f, "{}", DisplayDominance(self, dominance, true))?;
            }
        }
        if !self.facts.is_empty() {
            writeln!(f, "% facts")?;
            for fact in &self.facts {
                writeln!(f, "{}{}.", DisplayPred(self, fact.pred), DisplayTuple(self, fact.pred, &fact.values))?;
            }
        }
        if let Some(q) = &self.query {
            writeln!(f, "% query")?;
            writeln!(f, "?- {}.", DisplayQuery(self, q))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_quoted_only_when_needed() {
        let mut s = String::new();
        write_constant(&mut s, "abc_1").unwrap();
        s.push(' ');
        write_constant(&mut s, "42").unwrap();
        s.push(' ');
        write_constant(&mut s, "Alice \"A\"").unwrap();
        s.push(' ');
        write_constant(&mut s, "").unwrap();
        assert_eq!(s, r#"abc_1 42 "Alice \"A\"" """#);
    }
}
