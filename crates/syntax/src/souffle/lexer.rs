//! The tokens of the Soufflé dialect: newlines are insignificant, comments are `//` and
//! `/* */`, and a `#` line is a preprocessor directive read as one token.

use logos::Logos;

/// A token kind; its text is the source text under its span.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[logos(skip(r"([ \t\r\n\f]+|//[^\n]*|/\*([^*]|\*+[^*/])*\*+/)", allow_greedy = true))]
pub(crate) enum Kind {
    /// `#include "f"`, `#define N v`, any other `#...` line: the whole line, with the
    /// lines a backslash at a line's end joins to it.
    #[regex(r"#([^\n\\]|\\\r?\n|\\[^\n])*\\?", allow_greedy = true)]
    Hash,
    /// A directive: `.decl`, `.input`, ... (only the known words, so that `E(1).path(x)`
    /// still reads as `.` and `path`).
    #[regex(r"\.(decl|input|output|printsize|type|number_type|symbol_type|comp|init|plan|functor|pragma|limitsize|override|lattice|include|once)")]
    Directive,
    /// A name: a relation, a variable (in argument position), a type, a keyword.
    #[regex(r"[A-Za-z?][A-Za-z0-9_?]*|_[A-Za-z0-9_?]+")]
    Ident,
    #[token("_")]
    Underscore,
    #[regex(r"[0-9]+u?")]
    Number,
    /// `0x1F`, `0b101`: numbers dlc reads as their decimal value.
    #[regex(r"(0x[0-9a-fA-F]+|0b[01]+)u?")]
    RadixNumber,
    /// `1.2.3.4`: an IPv4 address, a number to Soufflé.
    #[regex(r"[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+")]
    Ipv4,
    /// `1.5`: a float (Soufflé writes no exponent).
    #[regex(r"[0-9]+\.[0-9]+")]
    Float,
    /// A double-quoted string, quotes and escapes in place.
    #[regex(r#""([^"\\\n]|\\.)*""#)]
    Str,
    /// `/*` without its `*/` (a whole comment is skipped above).
    #[token("/*")]
    OpenComment,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token(",")]
    Comma,
    #[token(".")]
    Dot,
    #[token(":-")]
    ColonDash,
    #[token(":")]
    Colon,
    #[token(";")]
    Semicolon,
    #[token("!")]
    Bang,
    #[token("?-")]
    QueryOp,
    #[token("=")]
    Eq,
    #[token("<:")]
    Subtype,
    #[regex(r"!=|<=|>=|<|>")]
    Compare,
    #[regex(r"[-+*/%^]")]
    Operator,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("|")]
    Bar,
    #[token("$")]
    Dollar,
    #[token("@")]
    At,
    /// Text the lexer cannot read (produced by [`lex`], not by logos).
    Error,
}

/// Lexes `text`, giving byte ranges offset by `offset`; adjacent unreadable characters
/// become one [`Kind::Error`] token.
pub(crate) fn lex(text: &str, offset: usize) -> Vec<(Kind, std::ops::Range<usize>)> {
    let mut tokens: Vec<(Kind, std::ops::Range<usize>)> = Vec::new();
    for (result, range) in Kind::lexer(text).spanned() {
        let range = range.start + offset..range.end + offset;
        match result {
            // An unclosed comment runs to the end of the file: nothing after it is text.
            Ok(Kind::OpenComment) => {
                tokens.push((Kind::OpenComment, range));
                break;
            }
            // `inst.init_state`, `g.output2`: a directive's word with more of a name right
            // after it is the `.` of a qualified name and that name, as Soufflé reads a
            // directive only before a blank.
            Ok(Kind::Ident | Kind::Number | Kind::RadixNumber | Kind::Underscore)
                if tokens.last().is_some_and(|(k, last)| *k == Kind::Directive && last.end == range.start) =>
            {
                let (_, directive) = tokens.pop().expect("just seen");
                tokens.push((Kind::Dot, directive.start..directive.start + 1));
                tokens.push((Kind::Ident, directive.start + 1..range.end));
            }
            Ok(kind) => tokens.push((kind, range)),
            Err(()) => match tokens.last_mut() {
                Some((Kind::Error, last)) if last.end == range.start => last.end = range.end,
                _ => tokens.push((Kind::Error, range)),
            },
        }
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Kind> {
        lex(text, 0).into_iter().map(|(k, _)| k).collect()
    }

    #[test]
    fn comments_and_newlines_are_skipped() {
        assert_eq!(kinds("a /* b\n c */ // d\n e"), [Kind::Ident, Kind::Ident]);
        assert_eq!(kinds("a /* b ) ("), [Kind::Ident, Kind::OpenComment]);
    }

    #[test]
    fn directives_and_dots() {
        assert_eq!(kinds(".decl E(x:number)"), {
            use Kind::*;
            [Directive, Ident, LParen, Ident, Colon, Ident, RParen]
        });
        assert_eq!(kinds("E(1).path(x)"), {
            use Kind::*;
            [Ident, LParen, Number, RParen, Dot, Ident, LParen, Ident, RParen]
        });
        assert_eq!(kinds("#include \"a.dl\"\nx"), [Kind::Hash, Kind::Ident]);
        // A directive's word that goes on is a qualified name's part.
        assert_eq!(kinds("g.init_state(x) .decl2"), {
            use Kind::*;
            [Ident, Dot, Ident, LParen, Ident, RParen, Dot, Ident]
        });
        assert_eq!(lex("a.output_b", 0)[2], (Kind::Ident, 2..10));
        assert_eq!(kinds("x != 1.5 <: :- !"), {
            use Kind::*;
            [Ident, Compare, Float, Subtype, ColonDash, Bang]
        });
    }
}
