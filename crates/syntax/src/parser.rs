//! The chumsky grammar over logos tokens. One set of combinators (term, atom) serves the
//! program grammar and the line grammars of facts files, update files and the command
//! line, so every input is read by the same atom parser.

use crate::ast::{Atom, Comparison, File, Literal, Name, Query, Rule, Statement, Term, TermKind};
use crate::lexer::{unescape, Spanned, Token};
use chumsky::error::{RichPattern, RichReason};
use chumsky::input::{Input, InputRef, MappedInput, ValueInput};
use chumsky::prelude::*;
use diag::{Code, Diagnostic, FileId, Span};

pub(crate) type Extra<'t, 's> = extra::Err<Rich<'t, Token<'s>>>;

/// The concrete input every grammar runs on: a slice of spanned tokens.
pub(crate) type TokenInput<'t, 's> =
    MappedInput<'t, Token<'s>, SimpleSpan, &'t [Spanned<'s>], fn(&'t Spanned<'s>) -> (&'t Token<'s>, &'t SimpleSpan)>;

/// Whether an update line inserts or deletes its fact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sign {
    Insert,
    Delete,
}

pub(crate) fn to_span(file: FileId, span: SimpleSpan) -> Span {
    Span::new(file, span.into_range())
}

fn split_token<'t, 's>(spanned: &'t Spanned<'s>) -> (&'t Token<'s>, &'t SimpleSpan) {
    (&spanned.0, &spanned.1)
}

/// Runs a grammar over a token slice whose end of input is at byte `eoi`, turning every
/// syntax error into a diagnostic with the given code.
pub(crate) fn run<'t, 's: 't, O>(
    parser: impl Parser<'t, TokenInput<'t, 's>, O, Extra<'t, 's>>,
    tokens: &'t [Spanned<'s>],
    eoi: usize,
    file: FileId,
    code: Code,
) -> (Option<O>, Vec<Diagnostic>) {
    let mapper: fn(&'t Spanned<'s>) -> (&'t Token<'s>, &'t SimpleSpan) = split_token;
    let input = tokens.map(SimpleSpan::from(eoi..eoi), mapper);
    let (output, errors) = parser.parse(input).into_output_errors();
    let diagnostics = errors.iter().map(|e| syntax_diagnostic(e, file, code)).collect();
    (output, diagnostics)
}

/// "expected `<-`, `.` or end of line, found `)`", anchored at the offending token.
fn syntax_diagnostic(error: &Rich<'_, Token<'_>>, file: FileId, code: Code) -> Diagnostic {
    let span = to_span(file, *error.span());
    let found = error.found().map_or_else(|| "end of input".to_string(), |t| t.to_string());
    let message = match error.reason() {
        RichReason::Custom(message) => message.to_string(),
        RichReason::ExpectedFound { .. } => {
            let expected = describe_expected(error.expected());
            if expected.is_empty() {
                format!("unexpected {found}")
            } else {
                format!("expected {expected}, found {found}")
            }
        }
    };
    let label = match error.found() {
        // A lexer error already reads "unexpected character(s) ...".
        Some(Token::Error(_)) => found,
        Some(_) => format!("unexpected {found}"),
        None => "input ends here".to_string(),
    };
    Diagnostic::error(code, message).with_primary(span, label)
}

/// Lists the expected patterns, tokens first and ends of input last, without duplicates. `:-` is folded into
/// `<-`, and end of input into end of line when both are possible, to keep it short.
fn describe_expected<'a, 't: 'a, 's: 't>(patterns: impl Iterator<Item = &'a RichPattern<'t, Token<'s>>>) -> String {
    let mut items: Vec<(u8, String)> = Vec::new();
    for pattern in patterns {
        let item = match pattern {
            RichPattern::Token(token) => {
                let token: &Token<'_> = token;
                match token {
                    Token::ColonDash => (0, Token::Arrow.to_string()),
                    Token::Newline => (2, token.to_string()),
                    _ => (0, token.to_string()),
                }
            }
            RichPattern::Label(label) => (0, label.to_string()),
            RichPattern::Identifier(name) => (0, format!("`{name}`")),
            RichPattern::Any => (1, "more input".to_string()),
            RichPattern::EndOfInput => (3, "end of input".to_string()),
            _ => (1, "something else".to_string()),
        };
        if !items.contains(&item) {
            items.push(item);
        }
    }
    if items.iter().any(|(rank, _)| *rank == 2) {
        items.retain(|(rank, _)| *rank != 3);
    }
    // A stable sort by rank keeps the grammar's own order (`<-` before `.`) within a rank.
    items.sort_by_key(|(rank, _)| *rank);
    let words: Vec<String> = items.into_iter().map(|(_, text)| text).collect();
    match words.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// A term: variable, anonymous variable, constant (`-7` too), or a reserved `@` name.
fn term<'t, 's: 't, I>(file: FileId) -> impl Parser<'t, I, Term, Extra<'t, 's>> + Clone
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    let negative = just(Token::Minus)
        .ignore_then(select! { Token::Int(s) => s })
        .map(|s| TermKind::Int(crate::ast::integer_text(&format!("-{s}"))));
    let plain = select! {
        Token::Name(s) => if s.starts_with(|c: char| c.is_ascii_uppercase()) {
            TermKind::Var(s.to_string())
        } else {
            TermKind::Ident(s.to_string())
        },
        Token::UnderscoreName(s) => TermKind::Var(s.to_string()),
        Token::Underscore => TermKind::Anon,
        Token::Int(s) => TermKind::Int(crate::ast::integer_text(s)),
        Token::Str(s) => TermKind::Str(unescape(s)),
        Token::Reserved(s) => TermKind::Reserved(s.to_string()),
    };
    negative.or(plain).map_with(move |kind, e| Term { kind, span: to_span(file, e.span()) }).labelled("a term")
}

/// A term or an arithmetic expression, read by the grammar both dialects share
/// ([`crate::expr`]), an aggregate's body read by `body`.
fn expression<'t, 's: 't, I>(
    file: FileId,
    body: impl Parser<'t, I, Vec<Literal>, Extra<'t, 's>> + Clone,
) -> impl Parser<'t, I, Term, Extra<'t, 's>> + Clone
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    let leaf = term(file);
    custom(move |inp: &mut InputRef<'t, '_, I, Extra<'t, 's>>| {
        crate::expr::expression(&mut Tokens { inp, leaf: &leaf, body: &body, file })
    })
    .labelled("a term")
}

/// An expression outside every aggregate, which may hold aggregates: their bodies are
/// `{ literal, ... }` or one atom. A body may hold aggregates once more (a nested
/// aggregate); deeper than that is a syntax error, so the grammar does not recurse on
/// the input.
fn outer_expression<'t, 's: 't, I>(file: FileId) -> impl Parser<'t, I, Term, Extra<'t, 's>> + Clone
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    let too_deep = custom(move |inp: &mut InputRef<'t, '_, I, Extra<'t, 's>>| {
        // The error spans the `:` that starts the inner body (an empty span has no place).
        let before = inp.cursor();
        inp.next();
        Err(Rich::custom(
            inp.span_since(&before),
            "an aggregate inside an aggregate inside an aggregate is not supported",
        ))
    });
    // Boxed, so that the nested grammar's type (and the compiled code's size) does not
    // multiply with each level.
    let nested = aggregate_body(file, literal_of(file, expression(file, too_deep))).boxed();
    expression(file, aggregate_body(file, literal_of(file, expression(file, nested))).boxed())
}

/// An aggregate's body: `{ literal, ... }` or one atom.
fn aggregate_body<'t, 's: 't, I>(
    file: FileId,
    literal: impl Parser<'t, I, Literal, Extra<'t, 's>> + Clone,
) -> impl Parser<'t, I, Vec<Literal>, Extra<'t, 's>> + Clone
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    let braced = literal
        .separated_by(just(Token::Comma))
        .at_least(1)
        .collect::<Vec<_>>()
        .delimited_by(just(Token::LBrace), just(Token::RBrace));
    braced.or(atom(file).map(|atom| vec![Literal::Atom(atom)]))
}

/// The dlc dialect's tokens as [`crate::expr::ExprSource`] reads them.
struct Tokens<'r, 'p, 't: 'p, 's: 'p, I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>, L, B> {
    inp: &'r mut InputRef<'t, 'p, I, Extra<'t, 's>>,
    leaf: &'r L,
    body: &'r B,
    file: FileId,
}

impl<'t, 's: 't, I, L, B> Tokens<'_, '_, 't, 's, I, L, B>
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    /// The next two tokens and the first one's span, without consuming them.
    fn look(&mut self) -> (Option<Token<'s>>, Option<Token<'s>>, Span) {
        let checkpoint = self.inp.save();
        let before = self.inp.cursor();
        let first = self.inp.next();
        let span = to_span(self.file, self.inp.span_since(&before));
        let second = self.inp.next();
        self.inp.rewind(checkpoint);
        (first, second, span)
    }

    /// What `read` makes of the tokens after the next one, as the aggregates' lookahead
    /// sees them; nothing is consumed.
    fn ahead<T>(&mut self, read: impl FnOnce(&mut dyn Iterator<Item = crate::expr::Shape>) -> T) -> T {
        use crate::expr::Shape;
        let checkpoint = self.inp.save();
        self.inp.next();
        let inp = &mut *self.inp;
        let mut shapes = std::iter::from_fn(|| {
            inp.next().map(|token| match token {
                Token::LParen | Token::LBrace => Shape::Open,
                Token::RParen | Token::RBrace => Shape::Close,
                Token::Comma => Shape::Comma,
                Token::Colon => Shape::Colon,
                Token::Semicolon | Token::Dot | Token::Newline | Token::Arrow => Shape::Separator,
                _ => Shape::Other,
            })
        });
        let verdict = read(&mut shapes);
        self.inp.rewind(checkpoint);
        verdict
    }

    /// Whether a `:` follows the next token before the expression it starts can end: an
    /// aggregate whose value starts with `(` or `-` (`sum (Y * 2) :`, `sum -1 :`).
    fn colon_ahead(&mut self) -> bool {
        self.ahead(|shapes| crate::expr::colon_ahead(shapes))
    }

    /// Whether the next tokens call a functor: `cat(`, `strlen(`, ...
    fn functor_call(first: Option<Token<'s>>, second: Option<Token<'s>>) -> bool {
        matches!(first, Some(Token::Name(name)) if ir::Functor::is_name(name)) && second == Some(Token::LParen)
    }

    /// Whether the next tokens call `min(a, b)` or `max(a, b)`.
    fn function_call(&mut self, first: Option<Token<'s>>, second: Option<Token<'s>>) -> bool {
        matches!(first, Some(Token::Name(name)) if ir::BinOp::function(name).is_some())
            && second == Some(Token::LParen)
            && (self.ahead(|shapes| crate::expr::comma_in_parens(shapes)) || !self.colon_ahead())
    }
}

impl<'t, 's: 't, I, L, B> crate::expr::ExprSource for Tokens<'_, '_, 't, 's, I, L, B>
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
    L: Parser<'t, I, Term, Extra<'t, 's>>,
    B: Parser<'t, I, Vec<Literal>, Extra<'t, 's>>,
{
    type Error = Rich<'t, Token<'s>>;

    fn infix(&mut self) -> Option<(ir::BinOp, Span)> {
        let (first, _, span) = self.look();
        let op = match first? {
            Token::Plus => ir::BinOp::Add,
            Token::Minus => ir::BinOp::Sub,
            Token::Star => ir::BinOp::Mul,
            Token::Slash => ir::BinOp::Div,
            Token::Caret => ir::BinOp::Pow,
            Token::Name(word) => ir::BinOp::word(word, false)?,
            _ => return None,
        };
        Some((op, span))
    }

    fn prefix(&mut self) -> Option<(crate::expr::Prefix, Span)> {
        use crate::expr::Prefix;
        let (first, second, span) = self.look();
        // A word is an operator only where an operand follows it (`E(bnot)` holds a symbol).
        let operand_follows = matches!(
            second,
            Some(Token::Name(_) | Token::UnderscoreName(_) | Token::Int(_) | Token::LParen | Token::Minus)
        );
        let prefix = match first? {
            // `-7` is a term of its own; `-X` and `-(...)` negate.
            Token::Minus if !matches!(second, Some(Token::Int(_))) => Prefix::Unary(ir::UnOp::Neg),
            Token::LParen => Prefix::Open,
            Token::Name(name) if self.function_call(first, second) => Prefix::Function(ir::BinOp::function(name)?),
            Token::Name(name) if Self::functor_call(first, second) => Prefix::Call(ir::Functor::from_name(name, 1)?),
            Token::Name("range") if second == Some(Token::LParen) => Prefix::Range,
            // `count :`; `sum X :` (`min(a, b)` is the function, `E(min, x)` a symbol); a
            // value may start with `(` or `-` when a `:` follows (`max (X + 1) :`).
            Token::Name(word) if crate::ast::AggregateOp::from_text(word).is_some() => {
                let op = crate::ast::AggregateOp::from_text(word)?;
                let value_follows = matches!(
                    second,
                    Some(Token::Name(_) | Token::UnderscoreName(_) | Token::Underscore | Token::Int(_) | Token::Str(_))
                ) || (matches!(second, Some(Token::LParen | Token::Minus)) && self.colon_ahead());
                match op.takes_value() {
                    true if value_follows => Prefix::Aggregate(op),
                    false if second == Some(Token::Colon) => Prefix::Aggregate(op),
                    _ => return None,
                }
            }
            Token::Name(word) if operand_follows => {
                Prefix::Unary(ir::UnOp::from_text(word).filter(|op| *op != ir::UnOp::Neg)?)
            }
            _ => return None,
        };
        Some((prefix, span))
    }

    fn bump(&mut self, prefix: bool) {
        let (first, second, _) = self.look();
        let range = matches!(first, Some(Token::Name("range"))) && second == Some(Token::LParen);
        let function = prefix && (self.function_call(first, second) || Self::functor_call(first, second) || range);
        self.inp.next();
        if function {
            self.inp.next();
        }
    }

    fn punct(&mut self, comma: bool) -> Result<(crate::expr::Punct, Span), Self::Error> {
        let before = self.inp.cursor();
        let found = self.inp.next();
        let span = self.inp.span_since(&before);
        match found {
            Some(Token::RParen) => Ok((crate::expr::Punct::Close, to_span(self.file, span))),
            Some(Token::Comma) if comma => Ok((crate::expr::Punct::Comma, to_span(self.file, span))),
            other => {
                let expected = if comma { "`,` or `)`" } else { "`)`" };
                let found = other.map_or_else(|| "end of input".to_string(), |t| t.to_string());
                Err(Rich::custom(span, format!("expected {expected}, found {found}")))
            }
        }
    }

    fn leaf(&mut self) -> Result<Term, Self::Error> {
        self.inp.parse(self.leaf)
    }

    fn aggregate_body(&mut self) -> Result<(Vec<Literal>, Span), Self::Error> {
        let before = self.inp.cursor();
        match self.inp.next() {
            Some(Token::Colon) => {}
            other => {
                let found = other.map_or_else(|| "end of input".to_string(), |t| t.to_string());
                let span = self.inp.span_since(&before);
                return Err(Rich::custom(span, format!("expected `:` before the aggregate's body, found {found}")));
            }
        }
        let start = self.inp.cursor();
        let body = self.inp.parse(self.body)?;
        let span = self.inp.span_since(&start);
        Ok((body, to_span(self.file, span)))
    }

    fn error(&mut self, span: Span, message: String) -> Self::Error {
        Rich::custom(SimpleSpan::from(span.start as usize..span.end as usize), message)
    }
}

/// An atom `p(t, ...)`, `p()` or a bare `p`, its arguments plain terms (as in facts
/// files, updates and queries).
pub(crate) fn atom<'t, 's: 't, I>(file: FileId) -> impl Parser<'t, I, Atom, Extra<'t, 's>> + Clone
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    atom_of(file, term(file))
}

/// The atom of a line read on its own (a fact, an update, a query): like [`atom`], and its
/// predicate may be a qualified name `inst.r`, as a Soufflé program names the relations
/// of a component's instance (the line ends after the atom, so a `.` before a name is no
/// end of a statement there).
fn line_atom<'t, 's: 't, I>(
    file: FileId,
    argument: impl Parser<'t, I, Term, Extra<'t, 's>> + Clone,
) -> impl Parser<'t, I, Atom, Extra<'t, 's>> + Clone
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    let part = select! { Token::Name(s) => s };
    let name = select! { Token::Name(s) => s, Token::Reserved(s) => s }
        .then(just(Token::Dot).ignore_then(part).repeated().collect::<Vec<_>>())
        .map_with(move |(first, rest), e| {
            let text = std::iter::once(first).chain(rest).collect::<Vec<_>>().join(".");
            Name { text, span: to_span(file, e.span()) }
        })
        .labelled("a predicate name");
    atom_named(file, name, argument)
}

/// A value of a line read on its own: a plain term or a float (`1.5`, `-0.5`), or a record
/// `[v, ...]` or branch `$B(v, ...)`, `$B` whose fields are values too, as Soufflé writes
/// records. Records nest at most [`crate::expr::MAX_DEPTH`] levels, read
/// with a stack of the records still open; their type is the column's, checked when the
/// line's values are made (see `souffle::records`).
fn line_value<'t, 's: 't, I>(file: FileId) -> impl Parser<'t, I, Term, Extra<'t, 's>> + Clone
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    let float =
        just(Token::Minus).or_not().then(select! { Token::Float(s) => s }).map_with(move |(minus, s), e| Term {
            kind: TermKind::Float(format!("{}{s}", if minus.is_some() { "-" } else { "" })),
            span: to_span(file, e.span()),
        });
    let value = float.or(term(file));
    let branch_name = select! { Token::Name(name) => name.to_string() }.labelled("a branch name");
    // Errors are made by parsers at the token they are about, so that each is reported
    // there (an error `custom` returns itself is placed where the value started).
    let too_deep = any().try_map(|_, span| {
        Err::<(), _>(Rich::custom(span, format!("records nest deeper than {} levels here", crate::expr::MAX_DEPTH)))
    });
    let separator = |close: Token<'s>| just(Token::Comma).to(false).or(just(close).to(true));
    custom(move |inp: &mut InputRef<'t, '_, I, Extra<'t, 's>>| {
        // Each open record: where it starts, its branch, the fields read so far, and the
        // token that closes it.
        let mut open: Vec<(_, Option<String>, Vec<Term>, Token<'s>)> = Vec::new();
        loop {
            let start = inp.cursor();
            let mut value = match inp.peek() {
                Some(opening @ (Token::LBracket | Token::Dollar)) => {
                    if open.len() >= crate::expr::MAX_DEPTH {
                        inp.parse(too_deep)?;
                    }
                    inp.next();
                    let (branch, close) = match opening {
                        Token::LBracket => (None, Token::RBracket),
                        _ => (Some(inp.parse(branch_name)?), Token::RParen),
                    };
                    let opens = branch.is_none() || inp.peek() == Some(Token::LParen);
                    if branch.is_some() && opens {
                        inp.next();
                    }
                    if !opens || inp.peek() == Some(close) {
                        // `$Empty`, `$Empty()`, `[]`: no fields.
                        if opens {
                            inp.next();
                        }
                        let span = to_span(file, inp.span_since(&start));
                        Term { kind: TermKind::Record { branch, args: Vec::new() }, span }
                    } else {
                        open.push((start, branch, Vec::new(), close));
                        continue;
                    }
                }
                _ => inp.parse(&value)?,
            };
            // The value completes a field of the innermost open record, or the whole term.
            loop {
                let Some((_, _, fields, close)) = open.last_mut() else { return Ok(value) };
                fields.push(value);
                if !inp.parse(separator(*close))? {
                    break;
                }
                let (start, branch, args, _) = open.pop().expect("an open record");
                let span = to_span(file, inp.span_since(&start));
                value = Term { kind: TermKind::Record { branch, args }, span };
            }
        }
    })
}

/// An atom whose arguments `argument` reads.
fn atom_of<'t, 's: 't, I>(
    file: FileId,
    argument: impl Parser<'t, I, Term, Extra<'t, 's>> + Clone,
) -> impl Parser<'t, I, Atom, Extra<'t, 's>> + Clone
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    let name = select! { Token::Name(s) => s, Token::Reserved(s) => s }
        .map_with(move |s, e| Name { text: s.to_string(), span: to_span(file, e.span()) })
        .labelled("a predicate name");
    atom_named(file, name, argument)
}

/// An atom of the predicate `name` reads, whose arguments `argument` reads.
fn atom_named<'t, 's: 't, I>(
    file: FileId,
    name: impl Parser<'t, I, Name, Extra<'t, 's>> + Clone,
    argument: impl Parser<'t, I, Term, Extra<'t, 's>> + Clone,
) -> impl Parser<'t, I, Atom, Extra<'t, 's>> + Clone
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    let args = argument
        .separated_by(just(Token::Comma))
        .collect::<Vec<_>>()
        .delimited_by(just(Token::LParen), just(Token::RParen));
    name.then(args.or_not()).map_with(move |(pred, args), e| Atom {
        pred,
        args: args.unwrap_or_default(),
        span: to_span(file, e.span()),
    })
}

/// A body literal: `!p(..)` or `not p(..)`, a comparison `t op t`, or an atom.
fn literal<'t, 's: 't, I>(file: FileId) -> impl Parser<'t, I, Literal, Extra<'t, 's>> + Clone
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    literal_of(file, outer_expression(file))
}

/// A body literal whose arguments and operands `expression` reads.
fn literal_of<'t, 's: 't, I>(
    file: FileId,
    expression: impl Parser<'t, I, Term, Extra<'t, 's>> + Clone,
) -> impl Parser<'t, I, Literal, Extra<'t, 's>> + Clone
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    let atom = || atom_of(file, expression.clone());
    let not = just(Token::Bang).ignored().or(just(Token::Name("not")).ignored());
    let negated =
        not.ignore_then(atom()).map_with(move |atom, e| Literal::Negated { atom, span: to_span(file, e.span()) });
    let op = select! { Token::Compare(op) => op }.try_map(|op, span| {
        ir::CmpOp::from_text(op).ok_or_else(|| Rich::custom(span, format!("unknown comparison `{op}`")))
    });
    let comparison = expression
        .clone()
        .then(op)
        .then(expression.clone())
        .map(|((left, op), right)| Literal::Compare(Comparison::new(left, op, right)));
    // `contains(A, B)`, `match(P, S)`, and negated, `!contains(A, B)`: constraints on
    // texts written as calls, so those two names are no relations of this dialect.
    let constraint_name = select! { Token::Name(name) => name }.try_map(|name, span| {
        ir::CmpOp::from_call(name).ok_or_else(|| Rich::custom(span, "expected `contains` or `match`"))
    });
    let constraint = not
        .or_not()
        .then(constraint_name)
        .then(
            expression
                .clone()
                .then_ignore(just(Token::Comma))
                .then(expression.clone())
                .delimited_by(just(Token::LParen), just(Token::RParen)),
        )
        .map_with(move |((negated, op), (left, right)), e| {
            let op = if negated.is_some() { op.negated() } else { op };
            Literal::Compare(Comparison::spanning(left, op, right, to_span(file, e.span())))
        });
    choice((constraint, negated, comparison, atom().map(Literal::Atom))).labelled("a body literal")
}

/// A whole program: rules, inline facts and queries, each ended by `.`, a significant
/// newline (see [`crate::lexer::layout`]) or the end of input. A statement with a syntax
/// error is skipped up to the next `.` or newline, so later errors are reported too.
pub(crate) fn program<'t, 's: 't, I>(file: FileId, len: usize) -> impl Parser<'t, I, File, Extra<'t, 's>>
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    let arrow = just(Token::Arrow).or(just(Token::ColonDash));
    let body = literal(file).separated_by(just(Token::Comma)).collect::<Vec<_>>();
    let rule_or_fact = atom_of(file, outer_expression(file)).then(arrow.ignore_then(body).or_not()).map_with(
        move |(head, body), e| match body {
            Some(body) => Statement::Rule(Rule { head, body, span: to_span(file, e.span()) }),
            None => Statement::Fact(head),
        },
    );
    let query = just(Token::QueryOp)
        .ignore_then(atom(file))
        .map_with(move |atom, e| Statement::Query(Query { atom, span: to_span(file, e.span()) }));
    let terminator = choice((just(Token::Dot).ignored(), just(Token::Newline).ignored(), end()));
    let ends = [Token::Dot, Token::Newline];
    let skip_statement =
        choice((none_of(ends).repeated().at_least(1).then(one_of(ends).or_not()).ignored(), one_of(ends).ignored()))
            .map_with(move |(), e| Statement::Error(to_span(file, e.span())));
    choice((query, rule_or_fact))
        .then_ignore(terminator)
        .recover_with(via_parser(skip_statement))
        .repeated()
        .collect::<Vec<_>>()
        .then_ignore(end())
        .map(move |statements| File {
            statements,
            span: Span::new(file, 0..len),
            declared: Vec::new(),
            record_types: Vec::new(),
        })
}

/// One line of a facts file: `E(a,b).` (the `.` is optional).
pub(crate) fn fact_line<'t, 's: 't, I>(file: FileId) -> impl Parser<'t, I, Atom, Extra<'t, 's>>
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    line_atom(file, line_value(file)).then_ignore(just(Token::Dot).or_not()).then_ignore(end())
}

/// One line of an update file: `+E(a,b).` or `-E(a,b).`.
pub(crate) fn update_line<'t, 's: 't, I>(file: FileId) -> impl Parser<'t, I, (Sign, Atom), Extra<'t, 's>>
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    let sign = select! { Token::Plus => Sign::Insert, Token::Minus => Sign::Delete }.labelled("`+` or `-`");
    sign.then(line_atom(file, line_value(file))).then_ignore(just(Token::Dot).or_not()).then_ignore(end())
}

/// A query given on its own: `R(a,Y)`, optionally with `?-` before and `.` after.
pub(crate) fn query_line<'t, 's: 't, I>(file: FileId) -> impl Parser<'t, I, Atom, Extra<'t, 's>>
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    just(Token::QueryOp)
        .or_not()
        .ignore_then(line_atom(file, term(file)))
        .then_ignore(just(Token::Dot).or_not())
        .then_ignore(end())
}
