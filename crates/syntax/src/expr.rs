//! The one expression grammar of both dialects: precedence climbing over whatever token
//! stream an `ExprSource` reads (the dlc dialect's chumsky input, Soufflé's hand-written
//! reader). Precedence and associativity are Soufflé 2.5's ([`ir::BinOp::precedence`]).
//!
//! An expression nests at most [`MAX_DEPTH`] levels (each operator of a chain and each
//! parenthesis counts), so every pass that walks its tree recurses a bounded depth.

use crate::ast::{AggregateOp, Literal, Term, TermKind};
use diag::Span;
use ir::{BinOp, UnOp};

/// The deepest expression tree either dialect reads.
pub const MAX_DEPTH: usize = 64;

/// What can start an operand other than a plain term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Prefix {
    /// `-`, `bnot`, `lnot`.
    Unary(UnOp),
    /// `min(` or `max(`: the name and its parenthesis (both are taken by one `bump`).
    Function(BinOp),
    /// `cat(`, `strlen(`, `to_string(`, ...: a functor's name and its parenthesis (both
    /// taken by one `bump`); the arity is the count of arguments that follow. `@f(` is a
    /// declared functor, its signature unknown until the checks resolve the name.
    Call(ir::Functor),
    /// `range(`: the generator's name and its parenthesis (both taken by one `bump`).
    Range,
    /// `(`.
    Open,
    /// `count`, `sum`, `min`, `max`, `mean` starting an aggregate (`count :`, `sum e :`).
    Aggregate(AggregateOp),
}

/// The punctuation inside parentheses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Punct {
    Comma,
    Close,
}

/// A token stream the expression grammar reads.
pub(crate) trait ExprSource {
    type Error;
    /// The next token as an infix operator, with its span.
    fn infix(&mut self) -> Option<(BinOp, Span)>;
    /// The next token as the start of an operand that is not a plain term.
    fn prefix(&mut self) -> Option<(Prefix, Span)>;
    /// Consumes what [`ExprSource::infix`] or [`ExprSource::prefix`] saw.
    fn bump(&mut self, prefix: bool);
    /// Consumes `,` (when `comma` allows it) or `)`, or reports what was expected.
    fn punct(&mut self, comma: bool) -> Result<(Punct, Span), Self::Error>;
    /// Consumes the `)` right after a call's `(`, if it is there: a call without
    /// arguments, which only Soufflé's declared functors (`@f()`) may be.
    fn empty_call(&mut self) -> Option<Span> {
        None
    }
    /// A plain term: a variable, `_`, a constant.
    fn leaf(&mut self) -> Result<Term, Self::Error>;
    /// An aggregate's `:` and body: `{ literal, ... }` or one atom; with the span of its end.
    fn aggregate_body(&mut self) -> Result<(Vec<Literal>, Span), Self::Error>;
    /// A syntax error at `span`.
    fn error(&mut self, span: Span, message: String) -> Self::Error;
}

/// A token as the lookahead that tells an aggregate from a function or an atom sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// `(` or `{`.
    Open,
    /// `)` or `}`.
    Close,
    Comma,
    Colon,
    /// What ends an expression outside brackets: `;`, a rule's arrow, the end of a line
    /// in the dlc dialect, its `.`.
    Separator,
    /// What ends the scan inside brackets too: Soufflé's `.`, which ends every clause.
    Stop,
    Other,
}

/// Whether a `:` comes, in the tokens after a word, before the expression the word starts
/// could end: the word is an aggregate whose value (`(y * 2) - y`, `-1`) runs to the `:`.
pub(crate) fn colon_ahead(after: impl Iterator<Item = Shape>) -> bool {
    let mut depth = 0usize;
    for shape in after {
        match shape {
            Shape::Open => depth += 1,
            Shape::Close if depth == 0 => return false,
            Shape::Close => depth -= 1,
            Shape::Colon if depth == 0 => return true,
            Shape::Comma | Shape::Separator if depth == 0 => return false,
            Shape::Stop => return false,
            _ => {}
        }
    }
    false
}

/// Whether the parenthesis the tokens `from_open` start with holds a `,` outside any inner
/// one: the arguments of `min(a, b)`, not one parenthesized value (`min (x + 1) : ...`).
pub(crate) fn comma_in_parens(from_open: impl Iterator<Item = Shape>) -> bool {
    let mut depth = 0usize;
    for shape in from_open {
        match shape {
            Shape::Open => depth += 1,
            Shape::Close => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return false;
                }
            }
            Shape::Comma if depth == 1 => return true,
            Shape::Stop => return false,
            _ => {}
        }
    }
    false
}

/// Reads one expression (a lone term is one too).
pub(crate) fn expression<S: ExprSource>(source: &mut S) -> Result<Term, S::Error> {
    binary(source, 0, 0).map(|(term, _)| term)
}

/// An expression whose operators bind at least `min` tightly, at nesting `depth`; with
/// the height of its tree.
fn binary<S: ExprSource>(source: &mut S, min: u8, depth: usize) -> Result<(Term, usize), S::Error> {
    let (mut left, mut height) = operand(source, depth)?;
    while let Some((op, op_span)) = source.infix() {
        let precedence = op.precedence();
        if precedence < min {
            break;
        }
        if depth >= MAX_DEPTH {
            return Err(too_deep(source, op_span));
        }
        source.bump(false);
        let next = if op.right_associative() { precedence } else { precedence + 1 };
        let (right, right_height) = binary(source, next, depth + 1)?;
        height = 1 + height.max(right_height);
        if height > MAX_DEPTH {
            return Err(too_deep(source, op_span));
        }
        left = Term {
            span: left.span.to(right.span),
            kind: TermKind::Binary { op, op_span, left: Box::new(left), right: Box::new(right) },
        };
    }
    Ok((left, height))
}

fn operand<S: ExprSource>(source: &mut S, depth: usize) -> Result<(Term, usize), S::Error> {
    let Some((prefix, span)) = source.prefix() else { return source.leaf().map(|t| (t, 0)) };
    if depth >= MAX_DEPTH {
        return Err(too_deep(source, span));
    }
    source.bump(true);
    match prefix {
        Prefix::Unary(op) => {
            let (inner, height) = binary(source, ir::PREFIX_PRECEDENCE, depth + 1)?;
            let whole = span.to(inner.span);
            // `-7` is the number -7 (so -2147483648 is in range), not the negation of 7;
            // `-0.5` likewise the float.
            match (op, &inner.kind) {
                (UnOp::Neg, TermKind::Int(text)) if !text.starts_with('-') => {
                    return Ok((Term { kind: TermKind::Int(format!("-{text}")), span: whole }, height));
                }
                (UnOp::Neg, TermKind::Float(text)) if !text.starts_with('-') => {
                    return Ok((Term { kind: TermKind::Float(format!("-{text}")), span: whole }, height));
                }
                _ => {}
            }
            let kind = TermKind::Unary { op, op_span: span, operand: Box::new(inner) };
            Ok((Term { kind, span: whole }, height + 1))
        }
        Prefix::Aggregate(op) => {
            // The aggregated expression ends where the `:` is, which no operator reads.
            let (value, height) = match op.takes_value() {
                true => binary(source, 0, depth + 1).map(|(value, height)| (Some(Box::new(value)), height))?,
                false => (None, 0),
            };
            let (body, end) = source.aggregate_body()?;
            Ok((Term { kind: TermKind::Aggregate { op, op_span: span, value, body }, span: span.to(end) }, height + 1))
        }
        Prefix::Call(functor) => call(source, functor, span, depth),
        Prefix::Range => range(source, span, depth),
        Prefix::Open => {
            let (inner, height) = binary(source, 0, depth + 1)?;
            source.punct(false)?;
            Ok((inner, height))
        }
        Prefix::Function(op) => {
            let (mut acc, mut height) = binary(source, 0, depth + 1)?;
            let mut args = 1;
            loop {
                let (punct, end) = source.punct(true)?;
                if punct == Punct::Close {
                    if args < 2 {
                        let message = format!("`{}(...)` takes at least two arguments", op.text());
                        return Err(source.error(span.to(end), message));
                    }
                    acc.span = span.to(end);
                    return Ok((acc, height));
                }
                let (next, next_height) = binary(source, 0, depth + 1)?;
                height = 1 + height.max(next_height);
                if height > MAX_DEPTH {
                    return Err(too_deep(source, next.span));
                }
                acc = Term {
                    span: span.to(next.span),
                    kind: TermKind::Binary { op, op_span: span, left: Box::new(acc), right: Box::new(next) },
                };
                args += 1;
            }
        }
    }
}

/// A functor's arguments after its `(`, up to its `)`; the call spans from `name_span`.
fn call<S: ExprSource>(
    source: &mut S,
    functor: ir::Functor,
    name_span: Span,
    depth: usize,
) -> Result<(Term, usize), S::Error> {
    if let ir::Functor::User(_) = functor {
        if let Some(end) = source.empty_call() {
            let span = name_span.to(end);
            return Ok((Term { kind: TermKind::Call { functor, name_span, args: Vec::new() }, span }, 1));
        }
    }
    let (args, height, span) = arguments(source, name_span, depth)?;
    if let ir::Functor::Cast(..) = functor {
        return cast(source, functor, name_span, span, args, height);
    }
    if let ir::Functor::User(_) = functor {
        return Ok((Term { kind: TermKind::Call { functor, name_span, args }, span }, height));
    }
    let Some(functor) = ir::Functor::from_name(functor.name(), args.len())
        // The argument type the functor was named with (`itou` converts from a
        // `number`), which the typing of its argument may still change.
        .map(|f| f.with_argument(functor.argument(0)))
        .filter(|f| f.takes(args.len()))
    else {
        let message = format!("`{}(...)` takes {}", functor.name(), functor.arity_text());
        return Err(source.error(span, message));
    };
    Ok((Term { kind: TermKind::Call { functor, name_span, args }, span }, height))
}

/// The arguments of a call after its `(`, up to its `)`: the terms, the height of the
/// deepest (at most [`MAX_DEPTH`]), and the call's span from `name_span`.
fn arguments<S: ExprSource>(
    source: &mut S,
    name_span: Span,
    depth: usize,
) -> Result<(Vec<Term>, usize, Span), S::Error> {
    let (mut args, mut height) = (Vec::new(), 0);
    loop {
        let (arg, arg_height) = binary(source, 0, depth + 1)?;
        height = height.max(arg_height + 1);
        args.push(arg);
        let (punct, end) = source.punct(true)?;
        if punct == Punct::Close {
            let span = name_span.to(end);
            if height > MAX_DEPTH {
                return Err(too_deep(source, span));
            }
            return Ok((args, height, span));
        }
    }
}

/// `as(x, T)` read as a call: its value, then the name of its target type. A target that
/// is a base type (`number`, `unsigned`, `float`, `symbol`) is resolved here; another name
/// stays the call's second argument, an identifier, for the Soufflé front end to resolve
/// once it knows the program's types (`souffle::typing::casts`).
fn cast<S: ExprSource>(
    source: &mut S,
    functor: ir::Functor,
    name_span: Span,
    span: Span,
    mut args: Vec<Term>,
    height: usize,
) -> Result<(Term, usize), S::Error> {
    let target = match args.as_slice() {
        [_, Term { kind: TermKind::Var(name) | TermKind::Ident(name), .. }] => name.clone(),
        _ => return Err(source.error(span, "`as(...)` takes a value and a type: `as(x, float)`".to_string())),
    };
    let functor = match ir::ValueType::from_name(&target) {
        Some(ty) => {
            args.pop();
            functor.with_target(ty)
        }
        None => {
            let type_span = args[1].span;
            args[1] = Term { kind: TermKind::Ident(target), span: type_span };
            functor
        }
    };
    Ok((Term { kind: TermKind::Call { functor, name_span, args }, span }, height))
}

/// `range(a, b)` or `range(a, b, step)` after its `(`, up to its `)`.
fn range<S: ExprSource>(source: &mut S, name_span: Span, depth: usize) -> Result<(Term, usize), S::Error> {
    let (args, height, span) = arguments(source, name_span, depth)?;
    if !(2..=3).contains(&args.len()) {
        let message = "`range(...)` takes two or three arguments: `range(from, to)`, `range(from, to, step)`";
        return Err(source.error(span, message.to_string()));
    }
    Ok((Term { kind: TermKind::Range { name_span, args }, span }, height))
}

fn too_deep<S: ExprSource>(source: &mut S, span: Span) -> S::Error {
    source.error(span, format!("an expression nested deeper than {MAX_DEPTH} levels"))
}
