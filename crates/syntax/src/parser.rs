//! The chumsky grammar over logos tokens. One set of combinators (term, atom) serves the
//! program grammar and the line grammars of facts files, update files and the command
//! line, so every input is read by the same atom parser.

use crate::ast::{Atom, Comparison, File, Literal, Name, Query, Rule, Statement, Term, TermKind};
use crate::lexer::{unescape, Spanned, Token};
use chumsky::error::{RichPattern, RichReason};
use chumsky::input::{Input, MappedInput, ValueInput};
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

/// A term: variable, anonymous variable, constant, or a reserved `@` name.
fn term<'t, 's: 't, I>(file: FileId) -> impl Parser<'t, I, Term, Extra<'t, 's>> + Clone
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    select! {
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
    }
    .map_with(move |kind, e| Term { kind, span: to_span(file, e.span()) })
    .labelled("a term")
}

/// An atom `p(t, ...)`, `p()` or a bare `p`.
pub(crate) fn atom<'t, 's: 't, I>(file: FileId) -> impl Parser<'t, I, Atom, Extra<'t, 's>> + Clone
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    let name = select! { Token::Name(s) => s, Token::Reserved(s) => s }
        .map_with(move |s, e| Name { text: s.to_string(), span: to_span(file, e.span()) })
        .labelled("a predicate name");
    let args = term(file)
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
    let not = just(Token::Bang).ignored().or(just(Token::Name("not")).ignored());
    let negated =
        not.ignore_then(atom(file)).map_with(move |atom, e| Literal::Negated { atom, span: to_span(file, e.span()) });
    let op = select! { Token::Compare(op) => op }.try_map(|op, span| {
        ir::CmpOp::from_text(op).ok_or_else(|| Rich::custom(span, format!("unknown comparison `{op}`")))
    });
    let comparison = term(file)
        .then(op)
        .then(term(file))
        .map(|((left, op), right)| Literal::Compare(Comparison::new(left, op, right)));
    choice((negated, comparison, atom(file).map(Literal::Atom))).labelled("a body literal")
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
    let rule_or_fact = atom(file).then(arrow.ignore_then(body).or_not()).map_with(move |(head, body), e| match body {
        Some(body) => Statement::Rule(Rule { head, body, span: to_span(file, e.span()) }),
        None => Statement::Fact(head),
    });
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
        .map(move |statements| File { statements, span: Span::new(file, 0..len), declared: Vec::new() })
}

/// One line of a facts file: `E(a,b).` (the `.` is optional).
pub(crate) fn fact_line<'t, 's: 't, I>(file: FileId) -> impl Parser<'t, I, Atom, Extra<'t, 's>>
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    atom(file).then_ignore(just(Token::Dot).or_not()).then_ignore(end())
}

/// One line of an update file: `+E(a,b).` or `-E(a,b).`.
pub(crate) fn update_line<'t, 's: 't, I>(file: FileId) -> impl Parser<'t, I, (Sign, Atom), Extra<'t, 's>>
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    let sign = select! { Token::Plus => Sign::Insert, Token::Minus => Sign::Delete }.labelled("`+` or `-`");
    sign.then(atom(file)).then_ignore(just(Token::Dot).or_not()).then_ignore(end())
}

/// A query given on its own: `R(a,Y)`, optionally with `?-` before and `.` after.
pub(crate) fn query_line<'t, 's: 't, I>(file: FileId) -> impl Parser<'t, I, Atom, Extra<'t, 's>>
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    just(Token::QueryOp).or_not().ignore_then(atom(file)).then_ignore(just(Token::Dot).or_not()).then_ignore(end())
}
