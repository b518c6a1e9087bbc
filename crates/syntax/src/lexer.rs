//! The logos lexer and the layout pass that decides which newlines end a statement.

use chumsky::span::SimpleSpan;
use logos::Logos;
use std::fmt;

/// A token of the rule language, of facts files and of update files.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq, Hash)]
// Comments run to the end of the line by design, hence the greedy repetition.
#[logos(skip(r"([ \t\r\f]+|%[^\n]*|//[^\n]*)", allow_greedy = true))]
pub enum Token<'a> {
    /// An identifier starting with a letter: a predicate name, a variable (upper case)
    /// or a constant (lower case), depending on its position and first letter.
    #[regex(r"[A-Za-z][A-Za-z0-9_]*")]
    Name(&'a str),
    /// `_x`: a named variable starting with an underscore.
    #[regex(r"_[A-Za-z0-9_]+")]
    UnderscoreName(&'a str),
    /// A lone `_`: the anonymous variable.
    #[token("_")]
    Underscore,
    /// An integer: decimal, hex `0x1F` or binary `0b101`, with an optional `u` suffix.
    /// A sign before it is a token of its own (`X-1` is a subtraction).
    #[regex(r"([0-9]+|0x[0-9a-fA-F]+|0b[01]+)u?")]
    Int(&'a str),
    /// `1.5`: not a value of the language, but lexed as one token so that it is one
    /// error, not `1`, `.` and `5` each out of place.
    #[regex(r"[0-9]+\.[0-9]+")]
    Float(&'a str),
    /// A double-quoted string, quotes and escapes still in place.
    #[regex(r#""([^"\\\n]|\\["\\ntr])*""#)]
    Str(&'a str),
    /// `@...`: reserved for generated names; lexed as one token so it can be reported.
    #[regex(r"@[A-Za-z0-9_:^]*")]
    Reserved(&'a str),
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token(",")]
    Comma,
    #[token(".")]
    Dot,
    #[token("<-")]
    Arrow,
    #[token(":-")]
    ColonDash,
    /// `:` between an aggregate and its body: `count : { E(X, _) }`.
    #[token(":")]
    Colon,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("?-")]
    QueryOp,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    /// `/` (two of them start a comment).
    #[token("/")]
    Slash,
    #[token("^")]
    Caret,
    #[token(";")]
    Semicolon,
    /// `!` before a negated atom.
    #[token("!")]
    Bang,
    /// A comparison operator: `=`, `!=`, `<`, `<=`, `>`, `>=`.
    #[regex(r"!=|<=|>=|<|>|=")]
    Compare(&'a str),
    #[token("\n")]
    Newline,
    /// `[`, `]` and `$` of a record value (`[1, nil]`, `$Circle(3)`) in a line read on its
    /// own; never produced by logos itself but by [`lex_values`], so that the rule
    /// language reads them as the unexpected characters they are there.
    LBracket,
    RBracket,
    Dollar,
    /// Text the lexer could not read; never produced by logos itself but by [`lex`].
    Error(&'a str),
}

impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Name(s) | Token::UnderscoreName(s) | Token::Int(s) | Token::Str(s) | Token::Reserved(s) => {
                write!(f, "`{s}`")
            }
            Token::Float(s) => write!(f, "`{s}`, a number that is not an integer"),
            Token::Underscore => f.write_str("`_`"),
            Token::LParen => f.write_str("`(`"),
            Token::RParen => f.write_str("`)`"),
            Token::Comma => f.write_str("`,`"),
            Token::Dot => f.write_str("`.`"),
            Token::Arrow => f.write_str("`<-`"),
            Token::ColonDash => f.write_str("`:-`"),
            Token::Colon => f.write_str("`:`"),
            Token::LBrace => f.write_str("`{`"),
            Token::RBrace => f.write_str("`}`"),
            Token::QueryOp => f.write_str("`?-`"),
            Token::Plus => f.write_str("`+`"),
            Token::Minus => f.write_str("`-`"),
            Token::Star => f.write_str("`*`"),
            Token::Slash => f.write_str("`/`"),
            Token::Caret => f.write_str("`^`"),
            Token::Semicolon => f.write_str("`;`"),
            Token::Bang => f.write_str("`!`"),
            Token::Compare(op) => write!(f, "`{op}`"),
            Token::Newline => f.write_str("end of line"),
            Token::LBracket => f.write_str("`[`"),
            Token::RBracket => f.write_str("`]`"),
            Token::Dollar => f.write_str("`$`"),
            Token::Error(s) if s.starts_with('"') => write!(f, "malformed string `{s}`"),
            Token::Error(s) => write!(f, "unexpected character(s) `{s}`"),
        }
    }
}

/// A token with its byte range in the source.
pub type Spanned<'a> = (Token<'a>, SimpleSpan);

/// Lexes the whole source, newlines included. Unreadable text becomes [`Token::Error`]
/// (adjacent unreadable characters are merged into one token) so that the parser can
/// report it in context and recover.
pub fn lex(src: &str) -> Vec<Spanned<'_>> {
    let mut tokens: Vec<Spanned<'_>> = Vec::new();
    for (result, range) in Token::lexer(src).spanned() {
        match result {
            Ok(token) => tokens.push((token, range.into())),
            Err(()) => match tokens.last_mut() {
                Some((Token::Error(text), span)) if span.end == range.start => {
                    span.end = range.end;
                    *text = &src[span.start..span.end];
                }
                _ => tokens.push((Token::Error(&src[range.clone()]), range.into())),
            },
        }
    }
    tokens
}

/// [`lex`] of a line that holds values (a fact, an update, a fact to explain), where `[`,
/// `]` and `$` write records: each of them is a token of its own, and the other
/// unreadable characters stay [`Token::Error`]s as [`lex`] merges them.
pub fn lex_values(src: &str) -> Vec<Spanned<'_>> {
    let mut tokens: Vec<Spanned<'_>> = Vec::new();
    for (token, span) in lex(src) {
        let Token::Error(text) = token else {
            tokens.push((token, span));
            continue;
        };
        if text.starts_with('"') || !text.contains(['[', ']', '$']) {
            tokens.push((token, span));
            continue;
        }
        let mut rest_start: Option<usize> = None;
        for (i, c) in text.char_indices() {
            let at = span.start + i;
            let record = match c {
                '[' => Some(Token::LBracket),
                ']' => Some(Token::RBracket),
                '$' => Some(Token::Dollar),
                _ => None,
            };
            match record {
                Some(record) => {
                    if let Some(start) = rest_start.take() {
                        tokens.push((Token::Error(&src[start..at]), (start..at).into()));
                    }
                    tokens.push((record, (at..at + 1).into()));
                }
                None => {
                    rest_start.get_or_insert(at);
                }
            }
        }
        if let Some(start) = rest_start {
            tokens.push((Token::Error(&src[start..span.end]), (start..span.end).into()));
        }
    }
    tokens
}

/// Removes the newlines that do not end a statement, so that the grammar can treat a
/// remaining [`Token::Newline`] exactly like `.`.
///
/// A newline is dropped after `(`, `{`, `,` or `?-`, after `.` or another newline, at the
/// start or end of the input, or before `)`, `}`, `,`, `.`, `<-` or `:-` (a statement continued
/// on the next line). Parenthesis depth is deliberately not tracked: an unclosed `(` must
/// not swallow the following lines into one syntax error.
///
/// After `<-`/`:-` the rule continues on the next line only if that line is indented
/// deeper than the line of the arrow: a line at the same indentation after `P(a) <-`
/// starts a new statement, so `P(a) <-` on its own line stays an empty-body rule.
pub fn layout<'a>(src: &str, tokens: Vec<Spanned<'a>>) -> Vec<Spanned<'a>> {
    let mut out: Vec<Spanned<'a>> = Vec::with_capacity(tokens.len());
    // The position of the first token after the current run of newlines: found once per
    // run, so that a long run of blank or comment lines is read once, not once per line.
    let mut next_index = 0;
    for (index, &(token, span)) in tokens.iter().enumerate() {
        if token == Token::Newline {
            if next_index <= index {
                next_index = index + tokens[index..].iter().take_while(|(t, _)| *t == Token::Newline).count();
            }
            let next = tokens.get(next_index);
            let keep = match (out.last(), next) {
                (None, _) | (_, None) => false,
                (
                    Some((
                        Token::LParen | Token::LBrace | Token::Comma | Token::QueryOp | Token::Dot | Token::Newline,
                        _,
                    )),
                    _,
                ) => false,
                (
                    _,
                    Some((
                        Token::RParen | Token::RBrace | Token::Comma | Token::Dot | Token::Arrow | Token::ColonDash,
                        _,
                    )),
                ) => false,
                (Some((Token::Arrow | Token::ColonDash, arrow)), Some((_, next))) => {
                    indentation(src, next.start) <= indentation(src, arrow.start)
                }
                _ => true,
            };
            if !keep {
                continue;
            }
        }
        out.push((token, span));
    }
    out
}

/// The width in characters (a tab counts as one) of the leading whitespace of the line
/// containing `offset`.
fn indentation(src: &str, offset: usize) -> usize {
    let line_start = src[..offset].rfind('\n').map_or(0, |nl| nl + 1);
    let line = &src[line_start..];
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

/// The value of a string literal: quotes removed and escapes resolved. The lexer only
/// accepts the escapes `\" \\ \n \t \r`.
pub fn unescape(literal: &str) -> String {
    let inner = literal.strip_prefix('"').and_then(|s| s.strip_suffix('"')).unwrap_or(literal);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Token<'_>> {
        lex(src).into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn lexes_every_token_kind() {
        use Token::*;
        assert_eq!(
            kinds("R(X, _y, _, a, -7, \"s\") <- :- ?- . + - * / ^ ; @m:R^bf\n"),
            vec![
                Name("R"),
                LParen,
                Name("X"),
                Comma,
                UnderscoreName("_y"),
                Comma,
                Underscore,
                Comma,
                Name("a"),
                Comma,
                Minus,
                Int("7"),
                Comma,
                Str("\"s\""),
                RParen,
                Arrow,
                ColonDash,
                QueryOp,
                Dot,
                Plus,
                Minus,
                Star,
                Slash,
                Caret,
                Semicolon,
                Reserved("@m:R^bf"),
                Newline,
            ]
        );
    }

    #[test]
    fn comments_are_skipped() {
        assert_eq!(
            kinds("a % c <- d\nb // e\n"),
            vec![Token::Name("a"), Token::Newline, Token::Name("b"), Token::Newline]
        );
    }

    #[test]
    fn bad_characters_merge_into_one_error_token_with_span() {
        let tokens = lex("a ### b");
        assert_eq!(tokens[1], (Token::Error("###"), SimpleSpan::from(2..5)));
        assert_eq!(tokens.len(), 3);
    }

    #[test]
    fn string_escapes_are_resolved() {
        assert_eq!(unescape(r#""a\"b\\c\nd\te\r""#), "a\"b\\c\nd\te\r");
        // A bad escape makes the string unreadable; the error token starts at its quote.
        assert!(matches!(kinds(r#""bad \q""#)[0], Token::Error(text) if text.starts_with("\"bad")));
    }

    fn laid_out(src: &str) -> Vec<Token<'_>> {
        layout(src, lex(src)).into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn layout_keeps_only_statement_ending_newlines() {
        use Token::*;
        // Continuation after a comma and inside parentheses; blank lines collapse.
        assert_eq!(
            laid_out("\n\nA <- B,\n C\n\n\nD(x,\ny)\n"),
            vec![
                Name("A"),
                Arrow,
                Name("B"),
                Comma,
                Name("C"),
                Newline,
                Name("D"),
                LParen,
                Name("x"),
                Comma,
                Name("y"),
                RParen
            ]
        );
        // A newline after `.` is redundant.
        assert_eq!(laid_out("A.\nB."), vec![Name("A"), Dot, Name("B"), Dot]);
    }

    #[test]
    fn layout_after_arrow_depends_on_indentation() {
        use Token::*;
        assert_eq!(laid_out("P <-\nQ <- E"), vec![Name("P"), Arrow, Newline, Name("Q"), Arrow, Name("E")]);
        assert_eq!(laid_out("P <-\n  E"), vec![Name("P"), Arrow, Name("E")]);
        assert_eq!(laid_out("  P <-\n  Q <-"), vec![Name("P"), Arrow, Newline, Name("Q"), Arrow]);
        assert_eq!(laid_out("  P <-\n\n    E"), vec![Name("P"), Arrow, Name("E")]);
    }

    #[test]
    fn long_runs_of_blank_and_comment_lines_collapse() {
        use Token::*;
        let run = "\n% note\n\n".repeat(50_000);
        let src = format!("P <-{run}  E\nQ{run}R");
        assert_eq!(laid_out(&src), vec![Name("P"), Arrow, Name("E"), Newline, Name("Q"), Newline, Name("R")]);
    }
}
