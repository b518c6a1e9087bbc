//! Expressions: the arithmetic operators both dialects write, their precedence and their
//! semantics on 32-bit values (Soufflé 2.5's), the functors on strings and the
//! conversions between types ([`Functor`]), and [`Expr`], an expression in postfix
//! order, which evaluates with a stack instead of recursion.

use crate::float::float_result;
use crate::{Functor, Program, Symbol, Term, ValueStore, ValueType};
use std::fmt;

/// A binary operator. `Min` and `Max` are written as functions: `min(a, b)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    ShrUnsigned,
    And,
    Or,
    Xor,
    Min,
    Max,
}

/// A prefix operator: `-`, `bnot`, `lnot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    BitNot,
    Not,
}

/// The binding strength of the prefix operators: above `*`, below `^` (`-2 ^ 2` is -4, as
/// in Soufflé).
pub const PREFIX_PRECEDENCE: u8 = 10;

/// The highest binding strength of a binary operator (`^`'s).
const ATOM_PRECEDENCE: u8 = 12;

impl BinOp {
    /// Every infix operator, in the order the parsers try their texts.
    pub const INFIX: [BinOp; 15] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Mod,
        BinOp::Pow,
        BinOp::BitAnd,
        BinOp::BitOr,
        BinOp::BitXor,
        BinOp::Shl,
        BinOp::Shr,
        BinOp::ShrUnsigned,
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
    ];

    /// The operator as the dlc dialect writes it. `%` starts a comment there, so modulo is
    /// `mod`; Soufflé writes `%` ([`BinOp::souffle_text`]).
    pub fn text(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "mod",
            BinOp::Pow => "^",
            BinOp::BitAnd => "band",
            BinOp::BitOr => "bor",
            BinOp::BitXor => "bxor",
            BinOp::Shl => "bshl",
            BinOp::Shr => "bshr",
            BinOp::ShrUnsigned => "bshru",
            BinOp::And => "land",
            BinOp::Or => "lor",
            BinOp::Xor => "lxor",
            BinOp::Min => "min",
            BinOp::Max => "max",
        }
    }

    /// The operator as Soufflé writes it.
    pub fn souffle_text(self) -> &'static str {
        match self {
            BinOp::Mod => "%",
            other => other.text(),
        }
    }

    /// How tightly the operator binds, as Soufflé 2.5's grammar has it (checked against
    /// its binary): `lor` < `lxor` < `land` < `bor` < `bxor` < `band` < shifts < `+ -` <
    /// `* / %` < prefix operators < `^`. Functions bind tightest.
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Or => 1,
            BinOp::Xor => 2,
            BinOp::And => 3,
            BinOp::BitOr => 4,
            BinOp::BitXor => 5,
            BinOp::BitAnd => 6,
            BinOp::Shl | BinOp::Shr | BinOp::ShrUnsigned => 7,
            BinOp::Add | BinOp::Sub => 8,
            BinOp::Mul | BinOp::Div | BinOp::Mod => 9,
            BinOp::Pow => 11,
            BinOp::Min | BinOp::Max => ATOM_PRECEDENCE,
        }
    }

    /// `^` groups to the right (`2 ^ 3 ^ 2` is 512); the others to the left.
    pub fn right_associative(self) -> bool {
        self == BinOp::Pow
    }

    /// Whether the operator is written as a function, `min(a, b)`.
    pub fn is_function(self) -> bool {
        matches!(self, BinOp::Min | BinOp::Max)
    }

    /// The operator of a function name.
    pub fn function(name: &str) -> Option<BinOp> {
        match name {
            "min" => Some(BinOp::Min),
            "max" => Some(BinOp::Max),
            _ => None,
        }
    }

    /// The operator of Soufflé's word operators (`band`, ..., `lxor`) and the dlc
    /// dialect's `mod` (`souffle`: whether `mod` is a word of the dialect).
    pub fn word(text: &str, souffle: bool) -> Option<BinOp> {
        Self::INFIX.into_iter().find(|op| {
            let written = if souffle { op.souffle_text() } else { op.text() };
            written == text && written.starts_with(|c: char| c.is_ascii_alphabetic())
        })
    }

    /// The operator of a symbol (`+`, `-`, `*`, `/`, `^`; `%` in Soufflé).
    pub fn symbol(text: &str, souffle: bool) -> Option<BinOp> {
        Self::INFIX.into_iter().find(|op| {
            let written = if souffle { op.souffle_text() } else { op.text() };
            written == text && !written.starts_with(|c: char| c.is_ascii_alphabetic())
        })
    }

    /// The operator applied to two values of type `ty` as tuples hold them; none when the
    /// result is undefined: division or modulo by zero, or of the least number by -1
    /// (which stop Soufflé with a floating-point exception).
    pub fn apply(self, a: u32, b: u32, ty: ValueType) -> Option<u32> {
        if ty == ValueType::Float {
            return self.apply_float(f32::from_bits(a), f32::from_bits(b));
        }
        let signed = ty != ValueType::Unsigned;
        let (sa, sb) = (a as i32, b as i32);
        Some(match self {
            BinOp::Add => a.wrapping_add(b),
            BinOp::Sub => a.wrapping_sub(b),
            BinOp::Mul => a.wrapping_mul(b),
            BinOp::Div if signed => sa.checked_div(sb)? as u32,
            BinOp::Div => a.checked_div(b)?,
            BinOp::Mod if signed => sa.checked_rem(sb)? as u32,
            BinOp::Mod => a.checked_rem(b)?,
            BinOp::Pow => power(a, b, signed),
            BinOp::BitAnd => a & b,
            BinOp::BitOr => a | b,
            BinOp::BitXor => a ^ b,
            BinOp::Shl => a << (b & 31),
            BinOp::Shr if signed => (sa >> (b & 31)) as u32,
            BinOp::Shr | BinOp::ShrUnsigned => a >> (b & 31),
            BinOp::And => u32::from(a != 0 && b != 0),
            BinOp::Or => u32::from(a != 0 || b != 0),
            BinOp::Xor => u32::from((a != 0) != (b != 0)),
            BinOp::Min if signed => sa.min(sb) as u32,
            BinOp::Min => a.min(b),
            BinOp::Max if signed => sa.max(sb) as u32,
            BinOp::Max => a.max(b),
        })
    }
}

impl BinOp {
    /// The operator applied to two floats: IEEE arithmetic (a division by zero is
    /// infinite, or not a number), `^` the power in double precision rounded to a float, `min` and `max` as
    /// C++'s `std::min` and `std::max` (the first operand unless the second is less,
    /// greater). None for the operators Soufflé has no float version of, which the front
    /// ends refuse.
    fn apply_float(self, a: f32, b: f32) -> Option<u32> {
        let result = match self {
            BinOp::Add => a + b,
            BinOp::Sub => a - b,
            BinOp::Mul => a * b,
            BinOp::Div => a / b,
            // C++'s `std::pow` of two floats computes in double precision.
            BinOp::Pow => f64::from(a).powf(f64::from(b)) as f32,
            BinOp::Min if b < a => b,
            BinOp::Max if a < b => b,
            BinOp::Min | BinOp::Max => a,
            _ => return None,
        };
        Some(float_result(result, a, b))
    }

    /// Whether Soufflé computes the operator on floats (the arithmetic, `^`, `min` and
    /// `max`; not `%`, the bitwise or the logical operators).
    pub fn takes_floats(self) -> bool {
        matches!(self, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Pow | BinOp::Min | BinOp::Max)
    }
}

/// `a ^ b` as Soufflé's compiled programs compute it: the power in double precision,
/// converted to a 64-bit integer (a result out of that range, or not a number, becomes
/// the least 64-bit integer, as the x86 conversion makes it), of which the low 32 bits
/// are kept. So `2 ^ 31` is -2147483648, `2 ^ 32` and `3 ^ 40` are 0, and a negative
/// exponent gives 0 unless the base is 1 or -1. (Soufflé's interpreter converts to 32
/// bits directly and gives -2147483648 for every overflow.)
fn power(a: u32, b: u32, signed: bool) -> u32 {
    let (base, exponent) =
        if signed { (f64::from(a as i32), f64::from(b as i32)) } else { (f64::from(a), f64::from(b)) };
    let p = base.powf(exponent);
    // 2^63: the first double a 64-bit integer cannot hold.
    let limit = 9_223_372_036_854_775_808.0;
    let wide = if p.is_nan() || p >= limit || p < -limit { i64::MIN } else { p as i64 };
    wide as u32
}

impl UnOp {
    /// The operator as both dialects write it.
    pub fn text(self) -> &'static str {
        match self {
            UnOp::Neg => "-",
            UnOp::BitNot => "bnot",
            UnOp::Not => "lnot",
        }
    }

    /// Whether Soufflé computes the operator on floats (`-` only).
    pub fn takes_floats(self) -> bool {
        self == UnOp::Neg
    }

    /// The operator of a prefix word or sign.
    pub fn from_text(text: &str) -> Option<UnOp> {
        [UnOp::Neg, UnOp::BitNot, UnOp::Not].into_iter().find(|op| op.text() == text)
    }

    /// The operator applied to a value of type `ty` as tuples hold it (`-` of a float
    /// flips its sign).
    pub fn apply(self, a: u32, ty: ValueType) -> u32 {
        match self {
            UnOp::Neg if ty == ValueType::Float => (-f32::from_bits(a)).to_bits(),
            UnOp::Neg => a.wrapping_neg(),
            UnOp::BitNot => !a,
            UnOp::Not => u32::from(a == 0),
        }
    }
}

/// One node of an expression in postfix order. An operator carries the type it
/// computes in, decided once by the front end (`/` of `unsigned` values divides them as
/// unsigned); a call pops its functor's arguments and pushes its result.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ExprNode<L> {
    Leaf(L),
    Unary(UnOp, ValueType),
    Binary(BinOp, ValueType),
    Call(Functor),
}

/// An arithmetic expression over leaves `L` (terms in the IR, variable slots and
/// constants in plans), its nodes in postfix order: `X + 1` is `[X, 1, +]`. A single
/// leaf is an expression of one node. Evaluation runs over the nodes with a stack, so
/// no expression, however deep, recurses.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Expr<L = Term> {
    pub nodes: Vec<ExprNode<L>>,
}

impl<L> Expr<L> {
    pub fn leaf(leaf: L) -> Self {
        Expr { nodes: vec![ExprNode::Leaf(leaf)] }
    }

    /// The leaf when the expression is only that.
    pub fn as_leaf(&self) -> Option<&L> {
        match self.nodes.as_slice() {
            [ExprNode::Leaf(l)] => Some(l),
            _ => None,
        }
    }

    pub fn leaves(&self) -> impl Iterator<Item = &L> {
        self.nodes.iter().filter_map(|n| match n {
            ExprNode::Leaf(l) => Some(l),
            _ => None,
        })
    }

    /// Whether the expression computes something (is more than a leaf).
    pub fn is_arithmetic(&self) -> bool {
        self.as_leaf().is_none()
    }

    /// The same expression with every leaf replaced; none when `f` gives none for one.
    pub fn map<M>(&self, mut f: impl FnMut(&L) -> Option<M>) -> Option<Expr<M>> {
        let nodes = self
            .nodes
            .iter()
            .map(|n| {
                Some(match n {
                    ExprNode::Leaf(l) => ExprNode::Leaf(f(l)?),
                    ExprNode::Unary(op, ty) => ExprNode::Unary(*op, *ty),
                    ExprNode::Binary(op, ty) => ExprNode::Binary(*op, *ty),
                    ExprNode::Call(functor) => ExprNode::Call(functor.clone()),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Expr { nodes })
    }

    /// Whether a node makes a text (`cat`, `substr`, `to_string`): evaluating the
    /// expression may add to the value store.
    pub fn makes_texts(&self) -> bool {
        self.nodes.iter().any(|n| matches!(n, ExprNode::Call(f) if f.makes_text()))
    }

    /// Whether a node reads the text of a value (every string functor).
    pub fn reads_texts(&self) -> bool {
        self.nodes.iter().any(|n| matches!(n, ExprNode::Call(f) if f.reads_text() || f.makes_text()))
    }

    /// The value of the expression, the leaves valued by `leaf`, texts read from and
    /// added to `values`; none when an operation has no value (a division by zero, a
    /// text that is no number) or the nodes are no expression.
    pub fn eval(&self, values: &ValueStore, mut leaf: impl FnMut(&L) -> u32) -> Option<u32> {
        // Most expressions are shallow: a stack on the stack; a deeper one gets a vector
        // (its height never exceeds the count of nodes).
        let mut small = [0u32; 32];
        match self.eval_on(&mut small, values, &mut leaf) {
            Some(value) => value,
            None => self.eval_on(&mut vec![0; self.nodes.len()], values, &mut leaf).flatten(),
        }
    }

    /// [`Expr::eval`] on a given stack; none when the stack is too small.
    fn eval_on(&self, stack: &mut [u32], values: &ValueStore, leaf: &mut impl FnMut(&L) -> u32) -> Option<Option<u32>> {
        let mut height = 0usize;
        for node in &self.nodes {
            match node {
                ExprNode::Leaf(l) => {
                    *stack.get_mut(height)? = leaf(l);
                    height += 1;
                }
                ExprNode::Unary(op, ty) if height >= 1 => stack[height - 1] = op.apply(stack[height - 1], *ty),
                ExprNode::Binary(op, ty) if height >= 2 => {
                    height -= 1;
                    match op.apply(stack[height - 1], stack[height], *ty) {
                        Some(v) => stack[height - 1] = v,
                        None => return Some(None),
                    }
                }
                ExprNode::Call(functor) if height >= functor.arity() => {
                    let args = height - functor.arity();
                    match functor.apply(&stack[args..height], values) {
                        Some(v) => stack[args] = v,
                        None => return Some(None),
                    }
                    height = args + 1;
                }
                _ => return Some(None),
            }
        }
        Some((height == 1).then(|| stack[0]))
    }

    /// The type of each node's value in an expression whose value is of type `ty`: an
    /// operator's operands have its type, a functor's arguments their parameters', a
    /// record's its fields' (of `records`).
    pub fn node_types(&self, ty: ValueType, records: &[crate::RecordType]) -> Vec<ValueType> {
        let mut types = vec![ty; self.nodes.len()];
        // The types the nodes still to be met (from the end) must have: a node's
        // operands come right before it, its last operand first.
        let mut expected = vec![ty];
        for (i, node) in self.nodes.iter().enumerate().rev() {
            let t = expected.pop().unwrap_or(ty);
            types[i] = t;
            match node {
                ExprNode::Leaf(_) => {}
                ExprNode::Unary(_, operand) => expected.push(*operand),
                ExprNode::Binary(_, operands) => expected.extend([*operands, *operands]),
                ExprNode::Call(Functor::Record { ty: record, branch, arity }) => {
                    let declared = records.get(record.0 as usize);
                    let fields = declared.and_then(|r| r.branches.get(branch.map_or(0, usize::from)));
                    let field = |i: usize| fields.and_then(|b| b.fields.get(i)).map_or(ValueType::Number, |f| f.ty);
                    expected.extend((0..usize::from(*arity)).map(field));
                }
                ExprNode::Call(functor) => expected.extend((0..functor.arity()).map(|i| functor.argument(i))),
            }
        }
        types
    }

    /// Prints the expression, whose value is of type `ty`, in infix form with the
    /// parentheses precedence needs, each leaf by `leaf` (given the leaf's type), each
    /// operator by `op_text`.
    pub fn write_infix(
        &self,
        f: &mut dyn fmt::Write,
        ty: ValueType,
        leaf: &dyn Fn(&L, ValueType) -> String,
        op_text: &dyn Fn(BinOp) -> &'static str,
        records: &[crate::RecordType],
    ) -> fmt::Result {
        let types = self.node_types(ty, records);
        // Each entry: the text of a subexpression and the precedence of its operator.
        let mut stack: Vec<(String, u8)> = Vec::new();
        for (node, &ty) in self.nodes.iter().zip(&types) {
            match node {
                ExprNode::Leaf(l) => stack.push((leaf(l, ty), ATOM_PRECEDENCE + 1)),
                ExprNode::Unary(op, _) => {
                    let (text, p) = stack.pop().ok_or(fmt::Error)?;
                    let inner = if p < PREFIX_PRECEDENCE { format!("({text})") } else { text };
                    let space = if *op == UnOp::Neg { "" } else { " " };
                    stack.push((format!("{}{space}{inner}", op.text()), PREFIX_PRECEDENCE));
                }
                ExprNode::Call(functor) => {
                    let args = stack.split_off(stack.len().checked_sub(functor.arity()).ok_or(fmt::Error)?);
                    let mut args: Vec<String> = args.into_iter().map(|(text, _)| text).collect();
                    if let Functor::Cast(_, to) = functor {
                        args.push(to.name().to_string());
                    }
                    stack.push((functor.call_text(&args, records), ATOM_PRECEDENCE + 1));
                }
                ExprNode::Binary(op, _) => {
                    let (right, rp) = stack.pop().ok_or(fmt::Error)?;
                    let (left, lp) = stack.pop().ok_or(fmt::Error)?;
                    if op.is_function() {
                        stack.push((format!("{}({left}, {right})", op_text(*op)), ATOM_PRECEDENCE + 1));
                        continue;
                    }
                    let p = op.precedence();
                    let (left_min, right_min) = if op.right_associative() { (p + 1, p) } else { (p, p + 1) };
                    // A negative literal or prefix operator on the left of `^` binds looser.
                    let left = if lp < left_min || (*op == BinOp::Pow && left.starts_with('-')) {
                        format!("({left})")
                    } else {
                        left
                    };
                    let right = if rp < right_min { format!("({right})") } else { right };
                    stack.push((format!("{left} {} {right}", op_text(*op)), p));
                }
            }
        }
        match stack.as_slice() {
            [(text, _)] => f.write_str(text),
            _ => Err(fmt::Error),
        }
    }
}

impl Expr<Term> {
    /// The variable when the expression is a lone variable.
    pub fn var(&self) -> Option<Symbol> {
        self.as_leaf().and_then(Term::var)
    }

    /// The variables of the expression, in order, with repeats.
    pub fn vars(&self) -> impl Iterator<Item = Symbol> + '_ {
        self.leaves().filter_map(Term::var)
    }

    /// The span of its first leaf (a report about the expression points there).
    pub fn first_span(&self) -> crate::Span {
        self.leaves().next().map(|t| t.span).unwrap_or_default()
    }
}

/// Prints an IR expression in the dlc dialect (`mod` for modulo), which reads it back.
pub struct DisplayExpr<'a>(pub &'a Program, pub &'a Expr);

impl fmt::Display for DisplayExpr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // IR terms carry their own types.
        let leaf = |t: &Term, _| crate::DisplayTerm(self.0, t).to_string();
        let mut text = String::new();
        self.1.write_infix(&mut text, ValueType::Number, &leaf, &BinOp::text, &self.0.consts.record_types())?;
        f.write_str(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ValueType::{Number, Unsigned};

    fn n(v: i32) -> u32 {
        v as u32
    }

    #[test]
    fn operators_follow_souffles_semantics() {
        assert_eq!(BinOp::Div.apply(n(-7), 2, Number), Some(n(-3)), "truncates");
        assert_eq!(BinOp::Mod.apply(n(-7), 2, Number), Some(n(-1)));
        assert_eq!(BinOp::Div.apply(1, 0, Number), None);
        assert_eq!(BinOp::Div.apply(n(i32::MIN), n(-1), Number), None);
        assert_eq!(BinOp::Div.apply(u32::MAX, 2, Unsigned), Some(u32::MAX / 2));
        assert_eq!(BinOp::Add.apply(n(i32::MAX), 1, Number), Some(n(i32::MIN)), "wraps");
        assert_eq!(BinOp::Shl.apply(1, 33, Number), Some(2), "shift counts are taken mod 32");
        assert_eq!(BinOp::Shr.apply(n(-8), 1, Number), Some(n(-4)));
        assert_eq!(BinOp::ShrUnsigned.apply(n(-8), 1, Number), Some(2147483644));
        assert_eq!(BinOp::Shr.apply(3000000000, 1, Unsigned), Some(1500000000));
        for (a, b, p) in [(3, 40, 0), (2, 31, i32::MIN), (2, 32, 0), (-8, 33, 0), (2, -1, 0), (1, -1, 1), (-7, 2, 49)] {
            assert_eq!(BinOp::Pow.apply(n(a), n(b), Number), Some(n(p)), "{a} ^ {b}");
        }
        assert_eq!(BinOp::Min.apply(n(-4), 3, Number), Some(n(-4)));
        assert_eq!(BinOp::Min.apply(n(-4), 3, Unsigned), Some(3));
        assert_eq!(BinOp::Xor.apply(3, 0, Number), Some(1));
        assert_eq!(UnOp::Not.apply(0, Number), 1);
        assert_eq!(UnOp::BitNot.apply(5, Number), n(-6));
    }

    #[test]
    fn float_operators_follow_souffles_semantics() {
        use ValueType::Float;
        let f = |v: f32| v.to_bits();
        assert_eq!(BinOp::Div.apply(f(7.0), f(2.0), Float), Some(f(3.5)));
        assert_eq!(BinOp::Div.apply(f(1.0), f(0.0), Float), Some(f(f32::INFINITY)));
        assert_eq!(BinOp::Div.apply(f(0.0), f(0.0), Float), Some(0xffc0_0000), "x86's not a number");
        assert_eq!(BinOp::Pow.apply(f(2.0), f(0.5), Float), Some(f(std::f32::consts::SQRT_2)));
        assert_eq!(BinOp::Min.apply(f(1.0), f(-2.0), Float), Some(f(-2.0)));
        assert_eq!(BinOp::Max.apply(f(-0.0), f(0.0), Float), Some(f(-0.0)), "the first of equals");
        assert_eq!(BinOp::Mod.apply(f(1.0), f(2.0), Float), None);
        assert_eq!(UnOp::Neg.apply(f(0.0), Float), f(-0.0));
    }

    #[test]
    fn postfix_evaluation_and_infix_printing() {
        use ExprNode::*;
        // (1 - 2) - (3 ^ (2 ^ 1)): printed with the parentheses it needs.
        let e: Expr<i32> = Expr {
            nodes: vec![
                Leaf(1),
                Leaf(2),
                Binary(BinOp::Sub, Number),
                Leaf(3),
                Leaf(2),
                Leaf(1),
                Binary(BinOp::Pow, Number),
                Binary(BinOp::Pow, Number),
                Binary(BinOp::Sub, Number),
            ],
        };
        assert_eq!(e.eval(&ValueStore::default(), |&l| l as u32), Some(n(-10)));
        let mut text = String::new();
        e.write_infix(&mut text, Number, &|l, _| l.to_string(), &BinOp::text, &[]).unwrap();
        assert_eq!(text, "1 - 2 - 3 ^ 2 ^ 1");
        let e: Expr<i32> =
            Expr { nodes: vec![Leaf(1), Leaf(2), Leaf(3), Binary(BinOp::Sub, Number), Binary(BinOp::Sub, Number)] };
        let mut text = String::new();
        e.write_infix(&mut text, Number, &|l, _| l.to_string(), &BinOp::text, &[]).unwrap();
        assert_eq!(text, "1 - (2 - 3)");
        // A deep expression evaluates past the inline stack.
        let mut nodes: Vec<ExprNode<i32>> = (0..100).map(Leaf).collect();
        nodes.extend((0..99).map(|_| Binary(BinOp::Add, Number)));
        assert_eq!(Expr { nodes }.eval(&ValueStore::default(), |&l| l as u32), Some(4950));
    }
}
