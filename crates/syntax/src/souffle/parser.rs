//! The parser: the preprocessed tokens into Soufflé's syntax tree ([`tree::Program`]).
//!
//! The grammar is small and has no nesting except parenthesised disjunctions and
//! components (`.comp` in a `.comp`), whose depths are bounded ([`MAX_NESTING`]), so it is
//! parsed by hand: statements are `.`-terminated clauses or directives whose end their
//! shape decides, and newlines carry no meaning. After a syntax error the parser skips to
//! the end of the statement (in a component, at most to its `}`) and goes on.
//!
//! A construct dlc does not support becomes a [`tree::Unsupported`] item where the parser
//! meets it (the statement around it is dropped); the checks report it. How many rules a
//! clause expands to is bounded here, as each literal is read, by the expansion's shape
//! ([`Dnf`] of `()`): the lowering then expands it within that bound.

use super::lexer::{lex, Kind};
use super::lower::{self, Dnf};
use super::preprocess::{Texts, Tok};
use super::tree::{self, Construct, IoKind, Item};
use super::{MAX_EXPANSION, MAX_NESTING};
use crate::ast::{self, TermKind};
use crate::lexer::unescape;
use diag::{Code, Diagnostic, Span};

/// Soufflé's built-in functors that dlc does not compute (the others are
/// [`ir::Functor`]s).
/// The deepest aggregates nest in one another.
const MAX_AGGREGATE_NESTING: usize = 8;

const SOUFFLE_FUNCTORS: &[&str] = &["itof", "utof", "ftoi", "ftou", "autoinc"];

/// W0007 for an IO parameter Soufflé 2.5 does not know (a misspelling such as
/// `delimeter`), which it ignores: the warning names the nearest known parameter.
fn unknown_io_parameter(name: &str, span: Span, directive: &str) -> Diagnostic {
    let nearest = tree::IO_PARAMETERS
        .iter()
        .min_by_key(|known| strsim::damerau_levenshtein(&name.to_lowercase(), &known.to_lowercase()))
        .expect("the list is not empty");
    Diagnostic::warning(Code::UNKNOWN_IO_PARAMETER, format!("`{directive}` has no parameter `{name}`; it is ignored"))
        .with_primary(span, "ignored, as Soufflé ignores it")
        .with_help(format!(
            "did you mean `{nearest}`? The parameters are {}",
            tree::IO_PARAMETERS.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
        ))
}

/// A reported error; the parser then skips to the end of the statement.
struct Reported;

/// Parses a preprocessed program into its syntax tree, with the syntax errors and the
/// warnings about how it is written (the unsupported constructs are items of the tree).
pub(super) fn program(tokens: &[Tok], texts: &Texts, eof: Span) -> (tree::Program, Vec<Diagnostic>) {
    let mut parser = Parser::new(tokens, texts, eof);
    parser.program();
    (tree::Program { items: parser.items }, parser.diagnostics)
}

/// Parses a `--query` in Soufflé syntax: an atom, with or without `?-` and a final `.`.
/// The atom, if it reads, and the unsupported constructs and syntax errors met.
pub(super) fn query(src: &str, file: diag::FileId) -> (Option<ast::Atom>, Vec<tree::Unsupported>, Vec<Diagnostic>) {
    let texts = Texts::new(vec![(file, src.to_string())]);
    let tokens: Vec<Tok> =
        lex(src, 0).into_iter().map(|(kind, range)| Tok::new(kind, Span::new(file, range))).collect();
    let mut parser = Parser::new(&tokens, &texts, Span::new(file, src.len()..src.len()));
    parser.eat(Kind::QueryOp);
    let atom = parser.atom();
    if atom.is_ok() {
        parser.eat(Kind::Dot);
        if let Some(extra) = parser.peek() {
            let found = parser.describe(Some(extra));
            parser.syntax(extra.span, format!("expected the end of the query, found {found}"));
        }
    }
    let unsupported = parser
        .items
        .into_iter()
        .filter_map(|item| match item {
            Item::Unsupported(u) => Some(u),
            _ => None,
        })
        .collect();
    (atom.ok(), unsupported, parser.diagnostics)
}

struct Parser<'a> {
    tokens: &'a [Tok],
    pos: usize,
    texts: &'a Texts,
    eof: Span,
    /// The syntax errors and warnings.
    diagnostics: Vec<Diagnostic>,
    /// The items read, the unsupported constructs among them where they were met.
    items: Vec<Item>,
    /// How many aggregate bodies enclose the one being read: at most
    /// [`MAX_AGGREGATE_NESTING`], so that no pass recurses deeper on nested bodies.
    aggregate_depth: usize,
    /// How many component bodies enclose the current token (a `}` at their level ends
    /// the statement being skipped after an error).
    component_depth: usize,
    /// Where the statement being read starts.
    statement_start: usize,
    /// How many records enclose the term being read (at most [`crate::expr::MAX_DEPTH`],
    /// so that every pass over a term recurses a bounded depth).
    record_depth: usize,
}

impl<'a> Parser<'a> {
    fn new(tokens: &'a [Tok], texts: &'a Texts, eof: Span) -> Self {
        Parser {
            tokens,
            pos: 0,
            texts,
            eof,
            diagnostics: Vec::new(),
            items: Vec::new(),
            aggregate_depth: 0,
            component_depth: 0,
            statement_start: 0,
            record_depth: 0,
        }
    }

    fn peek(&self) -> Option<Tok> {
        self.tokens.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<Tok> {
        self.tokens.get(self.pos + ahead).copied()
    }

    /// Whether the current token starts a call of `min(a, b)` or `max(a, b)`, not an
    /// aggregate of a parenthesized value (`min (x + 1) : e(x)`, which has no `,` inside
    /// its parenthesis and a `:` after it).
    fn function_call(&self) -> bool {
        self.peek().is_some_and(|t| t.kind == Kind::Ident && ir::BinOp::function(self.text(t)).is_some())
            && self.peek_at(1).is_some_and(|t| t.kind == Kind::LParen)
            && (crate::expr::comma_in_parens(self.shapes()) || !self.colon_ahead())
    }

    /// Whether a `:` follows the current token before the expression it starts can end:
    /// the word is an aggregate, its value up to the `:` ([`crate::expr::colon_ahead`]).
    fn colon_ahead(&self) -> bool {
        crate::expr::colon_ahead(self.shapes())
    }

    /// The tokens after the current one, as the aggregates' lookahead sees them.
    fn shapes(&self) -> impl Iterator<Item = crate::expr::Shape> + '_ {
        use crate::expr::Shape;
        self.tokens.iter().skip(self.pos + 1).map(|t| match t.kind {
            Kind::LParen | Kind::LBrace => Shape::Open,
            Kind::RParen | Kind::RBrace => Shape::Close,
            Kind::Comma => Shape::Comma,
            Kind::Colon => Shape::Colon,
            Kind::Semicolon | Kind::ColonDash => Shape::Separator,
            Kind::Dot => Shape::Stop,
            _ => Shape::Other,
        })
    }

    fn at(&self, kind: Kind) -> bool {
        self.peek().is_some_and(|t| t.kind == kind)
    }

    fn bump(&mut self) -> Option<Tok> {
        let t = self.peek();
        self.pos += usize::from(t.is_some());
        t
    }

    fn eat(&mut self, kind: Kind) -> Option<Tok> {
        if self.at(kind) {
            self.bump()
        } else {
            None
        }
    }

    fn text(&self, tok: Tok) -> &'a str {
        self.texts.tok_text(tok)
    }

    /// The token as a name, with its span.
    fn name(&self, tok: Tok) -> ast::Name {
        ast::Name { text: self.text(tok).to_string(), span: tok.span }
    }

    fn here(&self) -> Span {
        self.peek().map_or(self.eof, |t| t.span)
    }

    /// How a token reads in an error message.
    fn describe(&self, tok: Option<Tok>) -> String {
        match tok {
            None => "end of input".to_string(),
            Some(t) if t.kind == Kind::Error => format!("unexpected character(s) `{}`", self.text(t)),
            Some(t) if t.kind == Kind::OpenComment => "`/*` without a closing `*/`".to_string(),
            Some(t) => format!("`{}`", self.text(t)),
        }
    }

    fn syntax(&mut self, span: Span, message: String) -> Reported {
        self.diagnostics.push(Diagnostic::error(Code::PARSE, message).with_primary(span, "here").with_help(
            "a Soufflé rule is `head(x, y) :- body(x, z), other(z, y).`; relations are declared with \
                 `.decl r(x:symbol, y:number)`",
        ));
        Reported
    }

    fn expected(&mut self, what: &str) -> Reported {
        let found = self.describe(self.peek());
        self.syntax(self.here(), format!("expected {what}, found {found}"))
    }

    fn expect(&mut self, kind: Kind, what: &str) -> Result<Tok, Reported> {
        self.eat(kind).ok_or_else(|| self.expected(what))
    }

    /// Records an unsupported construct, for the checks to report.
    fn unsupported(&mut self, span: Span, construct: impl Into<Construct>) -> Reported {
        self.items.push(Item::Unsupported(tree::Unsupported { construct: construct.into(), span }));
        Reported
    }

    /// Skips to the end of a clause after an error: past the next `.`, or up to the next
    /// directive or, in a component, up to the `}` that closes it.
    fn recover(&mut self) {
        // The braces the statement opened so far (of an aggregate) are its own.
        let mut braces = self.tokens[self.statement_start.min(self.pos)..self.pos.min(self.tokens.len())].iter().fold(
            0usize,
            |open, t| match t.kind {
                Kind::LBrace => open + 1,
                Kind::RBrace => open.saturating_sub(1),
                _ => open,
            },
        );
        while let Some(t) = self.peek() {
            match t.kind {
                Kind::LBrace => {
                    braces += 1;
                    self.bump();
                }
                Kind::RBrace if braces == 0 && self.component_depth > 0 => return,
                Kind::RBrace => {
                    braces = braces.saturating_sub(1);
                    self.bump();
                }
                // The `.` of `arch.jump` ends no clause.
                Kind::Dot if self.qualified_at(self.pos) => {
                    self.bump();
                }
                Kind::Dot => {
                    self.bump();
                    return;
                }
                Kind::Directive => return,
                _ => {
                    self.bump();
                }
            }
        }
    }

    /// Whether the token at `at` is the `.` of a qualified name, `arch.jump`: a name
    /// touching it on both sides.
    fn qualified_at(&self, at: usize) -> bool {
        let (Some(before), Some(dot), Some(after)) =
            (at.checked_sub(1).and_then(|b| self.tokens.get(b)), self.tokens.get(at), self.tokens.get(at + 1))
        else {
            return false;
        };
        dot.kind == Kind::Dot
            && before.kind == Kind::Ident
            && after.kind == Kind::Ident
            && before.span.file == dot.span.file
            && before.span.end == dot.span.start
            && dot.span.end == after.span.start
    }

    /// Skips the rest of the line of `start` (the arguments of a directive dlc does not
    /// support).
    fn skip_line(&mut self, start: Span) {
        while let Some(t) = self.peek() {
            let text = self.texts.file_text(t.span.file);
            let same_line = t.span.file == start.file
                && text.get(start.start as usize..t.span.start as usize).is_some_and(|s| !s.contains('\n'));
            if !same_line {
                return;
            }
            self.bump();
        }
    }

    fn program(&mut self) {
        while let Some(tok) = self.peek() {
            self.statement_start = self.pos;
            let result = match tok.kind {
                Kind::Directive => self.directive(),
                Kind::Ident => self.clause(),
                Kind::QueryOp => self.query(),
                Kind::OpenComment => {
                    self.bump();
                    Err(self.syntax(tok.span, "this comment has no closing `*/`".to_string()))
                }
                _ => {
                    let r = self.expected("a directive such as `.decl`, a rule or a fact");
                    self.bump();
                    Err(r)
                }
            };
            if result.is_err() {
                self.recover();
            }
        }
    }

    fn directive(&mut self) -> Result<(), Reported> {
        let tok = self.bump().expect("at a directive");
        match self.text(tok) {
            ".decl" => self.decl(),
            ".type" => self.type_decl(None),
            ".number_type" => self.type_decl(Some("number")),
            ".symbol_type" => self.type_decl(Some("symbol")),
            ".input" => self.io(IoKind::Input, tok),
            ".output" => self.io(IoKind::Output, tok),
            ".printsize" => self.io(IoKind::Printsize, tok),
            ".pragma" => {
                // Options of Soufflé's own run (jobs, magic-transform, ...): a quoted key
                // and, for most, a quoted value.
                let key = self.peek().filter(|t| t.kind == Kind::Str).map(|t| unescape(self.text(t)));
                let value = key
                    .as_ref()
                    .and_then(|_| self.peek_at(1))
                    .filter(|t| t.kind == Kind::Str)
                    .map(|t| unescape(self.text(t)));
                self.items.push(Item::Pragma(tree::Pragma { key, value, span: tok.span }));
                self.skip_line(tok.span);
                Ok(())
            }
            ".comp" => self.component(tok),
            ".init" => self.init(tok),
            ".override" => {
                // Soufflé's grammar has `.override` in a component's body only.
                self.syntax(tok.span, "`.override` is written inside a component (`.comp`)".to_string());
                self.eat(Kind::Ident);
                Ok(())
            }
            ".plan" => self.plan(tok),
            ".limitsize" => self.limitsize(tok),
            ".functor" => self.functor_decl(tok),
            other => {
                self.unsupported(tok.span, Construct::Directive(other.to_string()));
                self.skip_line(tok.span);
                Ok(())
            }
        }
    }

    /// `.functor name(x: type, ...): type`, each parameter's name optional, and the
    /// qualifier `stateful`.
    fn functor_decl(&mut self, directive: Tok) -> Result<(), Reported> {
        let name = self.expect(Kind::Ident, "the functor's name")?;
        self.expect(Kind::LParen, "`(`")?;
        let mut params = Vec::new();
        if self.eat(Kind::RParen).is_none() {
            loop {
                if self.at(Kind::Ident) && self.peek_at(1).is_some_and(|t| t.kind == Kind::Colon) {
                    self.bump();
                    self.bump();
                }
                params.push(self.qualified_name("a parameter's type")?);
                if self.eat(Kind::Comma).is_none() {
                    self.expect(Kind::RParen, "`,` or `)`")?;
                    break;
                }
            }
        }
        self.expect(Kind::Colon, "`:` and the result's type")?;
        let result = self.qualified_name("the result's type")?;
        let stateful = self.peek().filter(|t| t.kind == Kind::Ident && self.text(*t) == "stateful").map(|t| t.span);
        if stateful.is_some() {
            self.bump();
        }
        let span = directive.span.to(stateful.unwrap_or(result.span));
        self.items.push(Item::Functor(tree::FunctorDecl { name: self.name(name), params, result, stateful, span }));
        Ok(())
    }

    /// `.decl name(attr: type, ...) qualifiers`, or `.decl a, b, c(...)`: several
    /// relations with the same attributes.
    fn decl(&mut self) -> Result<(), Reported> {
        let mut names = Vec::new();
        let name = loop {
            let name = self.expect(Kind::Ident, "a relation name")?;
            if self.eat(Kind::Comma).is_none() {
                break name;
            }
            names.push(name);
        };
        names.push(name);
        self.expect(Kind::LParen, "`(`")?;
        let mut attributes: Vec<tree::Attribute> = Vec::new();
        if self.eat(Kind::RParen).is_none() {
            loop {
                let attribute = self.expect(Kind::Ident, "an attribute name")?;
                let attribute_name = self.text(attribute);
                if let Some(first) = attributes.iter().find(|a| a.name.text == attribute_name) {
                    self.diagnostics.push(
                        Diagnostic::error(
                            Code::INVALID_DECLARATION,
                            format!("the attribute name `{attribute_name}` is given twice"),
                        )
                        .with_primary(attribute.span, "named again here")
                        .with_secondary(first.name.span, "first named here")
                        .with_help("give each attribute of a relation its own name"),
                    );
                }
                self.expect(Kind::Colon, "`:` and the attribute's type")?;
                let ty = self.qualified_name("a type")?;
                attributes.push(tree::Attribute { name: self.name(attribute), ty });
                if self.eat(Kind::Comma).is_none() {
                    self.expect(Kind::RParen, "`,` or `)`")?;
                    break;
                }
            }
        }
        // Qualifiers that choose a data structure or an optimisation change no answer;
        // `input`, `output` and `printsize`, Soufflé's older form of the directives, act
        // as `.input r` and so on would; `no_inline` wins over `inline`, as in Soufflé.
        let mut io_qualifiers: Vec<(IoKind, Tok)> = Vec::new();
        let (mut inline, mut no_inline, mut overridable) = (false, false, false);
        let mut eqrel = None;
        let mut choice = None;
        while let Some(t) = self.peek().filter(|t| t.kind == Kind::Ident) {
            if self.peek_at(1).is_some_and(|n| n.kind == Kind::LParen) {
                break;
            }
            match self.text(t) {
                "inline" => {
                    inline = true;
                    self.bump();
                }
                "no_inline" => {
                    no_inline = true;
                    self.bump();
                }
                "overridable" => {
                    overridable = true;
                    self.bump();
                }
                "brie" | "btree" | "btree_delete" | "magic" | "no_magic" | "override" => {
                    self.bump();
                }
                qualifier @ ("input" | "output" | "printsize") => {
                    self.bump();
                    let kind = match qualifier {
                        "input" => IoKind::Input,
                        "output" => IoKind::Output,
                        _ => IoKind::Printsize,
                    };
                    if let Some((_, first)) = io_qualifiers.iter().find(|(k, _)| *k == kind) {
                        self.diagnostics.push(
                            Diagnostic::error(
                                Code::INVALID_DECLARATION,
                                format!("the qualifier `{qualifier}` is given twice"),
                            )
                            .with_primary(t.span, "given again here")
                            .with_secondary(first.span, "first given here")
                            .with_help(format!("remove one `{qualifier}`")),
                        );
                        continue;
                    }
                    self.diagnostics.push(
                        Diagnostic::warning(
                            Code::DEPRECATED_SOUFFLE,
                            format!("the qualifier `{qualifier}` is Soufflé's older form of `.{qualifier}`"),
                        )
                        .with_primary(t.span, format!("read as `.{qualifier}` of the relation"))
                        .with_help(format!("write `.{qualifier} <relation>` on a line of its own")),
                    );
                    io_qualifiers.push((kind, t));
                }
                "eqrel" => {
                    eqrel = Some(t.span);
                    self.bump();
                }
                "choice" => {
                    self.bump();
                    let dash = self.peek().filter(|d| d.kind == Kind::Operator && self.text(*d) == "-");
                    let word = self.peek_at(1).filter(|w| w.kind == Kind::Ident && self.text(*w) == "domain");
                    let (Some(_), Some(word)) = (dash, word) else {
                        return Err(self.expected("`-domain` after `choice`"));
                    };
                    self.bump();
                    self.bump();
                    let keys = self.choice_keys()?;
                    choice = Some(tree::ChoiceKeys { keys, span: t.span.to(word.span) });
                }
                _ => break,
            }
        }
        self.items.push(Item::Decl(tree::Decl {
            names: names.into_iter().map(|n| self.name(n)).collect(),
            attributes,
            io: io_qualifiers.into_iter().map(|(kind, t)| (kind, t.span)).collect(),
            inline,
            no_inline,
            overridable,
            eqrel,
            choice,
        }));
        Ok(())
    }

    /// The keys of `choice-domain`, after its word: `x`, `(x, y)`, or several of either
    /// separated by commas.
    fn choice_keys(&mut self) -> Result<Vec<Vec<ast::Name>>, Reported> {
        let mut keys = Vec::new();
        loop {
            let key = if self.eat(Kind::LParen).is_some() {
                let mut columns = Vec::new();
                loop {
                    let column = self.expect(Kind::Ident, "an attribute of the relation")?;
                    columns.push(self.name(column));
                    if self.eat(Kind::Comma).is_none() {
                        self.expect(Kind::RParen, "`,` or `)`")?;
                        break;
                    }
                }
                columns
            } else {
                let column = self.expect(Kind::Ident, "an attribute of the relation, or `(` and several")?;
                vec![self.name(column)]
            };
            keys.push(key);
            if self.eat(Kind::Comma).is_none() {
                return Ok(keys);
            }
        }
    }

    /// `.type T <: symbol`, `.type T = number`, `.type T = A | B`. `base` is the type of
    /// the old `.number_type T` / `.symbol_type T` forms. A definition that does not read
    /// still defines the name, so that it is not reported as undefined too.
    fn type_decl(&mut self, base: Option<&'static str>) -> Result<(), Reported> {
        let name_tok = self.expect(Kind::Ident, "a type name")?;
        let name = self.name(name_tok);
        let (definition, read) = match self.type_definition(&name, base) {
            Ok(definition) => (definition, Ok(())),
            Err((definition, reported)) => (definition, Err(reported)),
        };
        self.items.push(Item::Type(tree::TypeDef { name, definition }));
        read
    }

    /// What follows a `.type` name; on an error, the definition to record with it.
    fn type_definition(
        &mut self,
        name: &ast::Name,
        base: Option<&'static str>,
    ) -> Result<tree::TypeDefinition, (tree::TypeDefinition, Reported)> {
        use tree::TypeDefinition;
        if let Some(base) = base {
            return Ok(TypeDefinition::Primitive(base));
        }
        let subtype = self.eat(Kind::Subtype).is_some();
        if !subtype && self.eat(Kind::Eq).is_none() {
            // Soufflé reads a bare `.type T` as `.type T <: symbol` and warns.
            let (span, name) = (name.span, &name.text);
            self.diagnostics.push(
                Diagnostic::warning(Code::DEPRECATED_SOUFFLE, format!("`.type {name}` without a definition"))
                    .with_primary(span, format!("read as `.type {name} <: symbol`"))
                    .with_help(format!("write `.type {name} <: symbol`")),
            );
            return Ok(TypeDefinition::Bare);
        }
        let unreadable = |r| (TypeDefinition::Unreadable, r);
        if let Some(open) = self.eat(Kind::LBracket) {
            let fields = self.typed_fields(Kind::RBracket, "`,` or `]`").map_err(unreadable)?;
            return Ok(TypeDefinition::Record(tree::RecordShape { name: None, fields, span: open.span }));
        }
        let mut from = Vec::new();
        loop {
            let ty = self.qualified_name("a type").map_err(unreadable)?;
            if self.at(Kind::LBrace) && !subtype {
                return self.adt(ty).map_err(unreadable);
            }
            from.push(ty);
            if self.eat(Kind::Bar).is_none() {
                return Ok(if subtype { TypeDefinition::Subtype(from) } else { TypeDefinition::Equal(from) });
            }
        }
    }

    /// The branches of an algebraic data type, from the first's `{`: `A {x: number} | B {}`.
    fn adt(&mut self, first: ast::Name) -> Result<tree::TypeDefinition, Reported> {
        let mut branches = Vec::new();
        let mut name = first;
        loop {
            let open = self.expect(Kind::LBrace, "`{` and the branch's fields")?;
            let fields = self.typed_fields(Kind::RBrace, "`,` or `}`")?;
            let span = name.span.to(open.span);
            branches.push(tree::RecordShape { name: Some(name), fields, span });
            if self.eat(Kind::Bar).is_none() {
                return Ok(tree::TypeDefinition::Adt(branches));
            }
            name = self.qualified_name("a branch name")?;
        }
    }

    /// `name: type, ...` up to `close`.
    fn typed_fields(&mut self, close: Kind, expected: &str) -> Result<Vec<(ast::Name, ast::Name)>, Reported> {
        let mut fields = Vec::new();
        if self.eat(close).is_some() {
            return Ok(fields);
        }
        loop {
            let name = self.expect(Kind::Ident, "a field name")?;
            let name = self.name(name);
            self.expect(Kind::Colon, "`:` and the field's type")?;
            let ty = self.qualified_name("a type")?;
            fields.push((name, ty));
            if self.eat(Kind::Comma).is_none() {
                self.expect(close, expected)?;
                return Ok(fields);
            }
        }
    }

    /// `.input r1, r2(IO=file, filename="r.tsv", delimiter=",")`
    fn io(&mut self, kind: IoKind, directive: Tok) -> Result<(), Reported> {
        let mut relations = vec![self.qualified_name("a relation name")?];
        while self.eat(Kind::Comma).is_some() {
            relations.push(self.qualified_name("a relation name")?);
        }
        let mut parameters = Vec::new();
        if self.eat(Kind::LParen).is_some() && self.eat(Kind::RParen).is_none() {
            loop {
                let key = self.expect(Kind::Ident, "a parameter name")?;
                self.expect(Kind::Eq, "`=`")?;
                let value_tok = self.bump().ok_or_else(|| self.expected("a parameter value"))?;
                if !matches!(value_tok.kind, Kind::Str | Kind::Ident | Kind::Number) {
                    return Err(self.syntax(value_tok.span, "expected a parameter value".to_string()));
                }
                let raw = self.text(value_tok);
                let value = if value_tok.kind == Kind::Str { unescape(raw) } else { raw.to_string() };
                let parameter = tree::IoParameter { key: self.name(key), value, span: key.span.to(value_tok.span) };
                if let Some(construct) = parameter.refused(kind) {
                    return Err(self.unsupported(parameter.span, construct));
                }
                if !parameter.known() {
                    let warning = unknown_io_parameter(&parameter.key.text, key.span, self.text(directive));
                    self.diagnostics.push(warning);
                }
                parameters.push(parameter);
                if self.eat(Kind::Comma).is_none() {
                    self.expect(Kind::RParen, "`,` or `)`")?;
                    break;
                }
            }
        }
        let io = tree::IoDirective { kind, relations, parameters, span: directive.span };
        // Soufflé stops at such a directive: a quote cannot both delimit and quote fields.
        let settings = io.settings();
        if settings.format.rfc4180 && settings.delimiter.contains('"') {
            return Err(self.unsupported(io.span, "a delimiter holding `\"` with `rfc4180=true`"));
        }
        self.items.push(Item::Io(io));
        Ok(())
    }

    /// `?- r(1, y).`: a query in the file.
    fn query(&mut self) -> Result<(), Reported> {
        let start = self.bump().expect("at `?-`").span;
        let atom = self.atom()?;
        let end = self.expect(Kind::Dot, "`.`")?;
        self.items.push(Item::Query(ast::Query { atom, span: start.to(end.span) }));
        Ok(())
    }

    /// `.limitsize r1, r2(n=N)`, after the directive: Soufflé reads it as an I/O
    /// directive's list of relations and parameters, of which it needs `n` (a number, or
    /// a string holding one) and reads no other.
    fn limitsize(&mut self, directive: Tok) -> Result<(), Reported> {
        let mut relations = vec![self.qualified_name("a relation name")?];
        while self.eat(Kind::Comma).is_some() {
            relations.push(self.qualified_name("a relation name")?);
        }
        let open = self.expect(Kind::LParen, "`(` and the most tuples (`n=100`)")?;
        let mut tuples = None;
        let close = loop {
            if let Some(close) = self.eat(Kind::RParen) {
                break close;
            }
            let key = self.expect(Kind::Ident, "a parameter name")?;
            self.expect(Kind::Eq, "`=`")?;
            let value_tok = self.bump().ok_or_else(|| self.expected("a parameter value"))?;
            if !matches!(value_tok.kind, Kind::Str | Kind::Ident | Kind::Number) {
                return Err(self.syntax(value_tok.span, "expected a parameter value".to_string()));
            }
            if self.text(key) == "n" {
                let raw = self.text(value_tok);
                let value = if value_tok.kind == Kind::Str { unescape(raw) } else { raw.to_string() };
                let Ok(n) = value.trim().parse::<u64>() else {
                    return Err(self.syntax(
                        value_tok.span,
                        format!("the `n` of a `.limitsize` is a number of tuples, not `{value}`"),
                    ));
                };
                tuples = Some(n);
            }
            if self.eat(Kind::Comma).is_none() {
                break self.expect(Kind::RParen, "`,` or `)`")?;
            }
        };
        let Some(tuples) = tuples else {
            return Err(
                self.syntax(open.span.to(close.span), "a `.limitsize` gives the most tuples: `n=100`".to_string())
            );
        };
        self.items.push(Item::LimitSize(tree::LimitSize { relations, tuples, span: directive.span }));
        Ok(())
    }

    /// `.plan 0:(1,2), 1:(2,1)`, after the directive.
    fn plan(&mut self, directive: Tok) -> Result<(), Reported> {
        let mut orders = Vec::new();
        loop {
            let number = |p: &Self, t: Option<Tok>| {
                t.filter(|t| t.kind == Kind::Number).and_then(|t| p.text(t).parse::<u64>().ok().map(|n| (n, t.span)))
            };
            let Some((version, version_span)) = number(self, self.peek()) else {
                return Err(self.expected("a version number of the plan (`0:(2,1)`)"));
            };
            self.bump();
            if self.eat(Kind::Colon).is_none() {
                return Err(self.expected("`:`"));
            }
            let Some(open) = self.eat(Kind::LParen) else { return Err(self.expected("`(`")) };
            let mut atoms = 0;
            let close = loop {
                if let Some(close) = self.eat(Kind::RParen).filter(|_| atoms == 0) {
                    break close;
                }
                if number(self, self.peek()).is_none() {
                    return Err(self.expected("the number of an atom of the clause"));
                }
                self.bump();
                atoms += 1;
                if let Some(close) = self.eat(Kind::RParen) {
                    break close;
                }
                if self.eat(Kind::Comma).is_none() {
                    return Err(self.expected("`,` or `)`"));
                }
            };
            orders.push(tree::PlanOrder { version, version_span, atoms, order_span: open.span.to(close.span) });
            if self.eat(Kind::Comma).is_none() {
                break;
            }
        }
        self.items.push(Item::Plan(tree::Plan { span: directive.span, orders }));
        Ok(())
    }

    /// `h1(..), h2(..) :- body.` or the facts `f(..).`
    fn clause(&mut self) -> Result<(), Reported> {
        let start = self.here();
        let mut heads = vec![self.atom()?];
        while self.eat(Kind::Comma).is_some() {
            heads.push(self.atom()?);
        }
        if let Some(t) = self.peek().filter(|t| t.kind == Kind::Compare && self.text(*t) == "<=") {
            return self.subsumptive_clause(start, heads, t.span);
        }
        let body = if self.eat(Kind::ColonDash).is_some() {
            let (body, shape) = self.disjunction(0)?;
            if heads.len() * shape.len() > MAX_EXPANSION {
                return Err(self.unsupported(
                    start.to(self.here()),
                    format!("a clause expanding to more than {MAX_EXPANSION} rules"),
                ));
            }
            Some(body)
        } else {
            None
        };
        let end = match self.eat(Kind::Dot) {
            Some(dot) => dot,
            None if body.is_some() => return Err(self.expected("`,`, `;` or `.`")),
            None => return Err(self.expected("`,`, `.` or `:-`")),
        };
        self.items.push(Item::Clause(tree::Clause { heads, body, span: start.to(end.span), subsumes: None }));
        Ok(())
    }

    /// The rest of `dominated <= dominating :- body.` from its `<=` (at `subsumes`), held
    /// as the clause `dominated :- dominated, dominating, (body).` (see
    /// [`tree::Clause::subsumes`]).
    fn subsumptive_clause(&mut self, start: Span, heads: Vec<ast::Atom>, subsumes: Span) -> Result<(), Reported> {
        self.bump();
        if heads.len() > 1 {
            return Err(self.unsupported(subsumes, "a subsumptive clause with several atoms before `<=`"));
        }
        let dominated = heads.into_iter().next().expect("a clause has a head");
        let dominating = self.atom()?;
        self.expect(Kind::ColonDash, "`:-`")?;
        let (body, shape) = self.disjunction(0)?;
        if shape.len() > MAX_EXPANSION {
            return Err(self
                .unsupported(start.to(self.here()), format!("a clause expanding to more than {MAX_EXPANSION} rules")));
        }
        let end = self.expect(Kind::Dot, "`,`, `;` or `.`")?;
        let lead =
            vec![tree::Literal::Atom(dominated.clone()), tree::Literal::Atom(dominating), tree::Literal::Group(body)];
        let body = tree::Disjunction(vec![tree::Conjunction(lead)]);
        let clause = tree::Clause {
            heads: vec![dominated],
            body: Some(body),
            span: start.to(end.span),
            subsumes: Some(subsumes),
        };
        self.items.push(Item::Clause(clause));
        Ok(())
    }

    /// `conj ; conj ; ...`, with the shape of its expansion.
    fn disjunction(&mut self, depth: usize) -> Result<(tree::Disjunction, Dnf<()>), Reported> {
        let (first, mut shape) = self.conjunction(depth)?;
        let mut alternatives = vec![first];
        while self.eat(Kind::Semicolon).is_some() {
            let (more, more_shape) = self.conjunction(depth)?;
            alternatives.push(more);
            shape.extend(more_shape);
        }
        Ok((tree::Disjunction(alternatives), shape))
    }

    /// `lit, lit, ...`, with the shape of its expansion: the product of the literals'.
    fn conjunction(&mut self, depth: usize) -> Result<(tree::Conjunction, Dnf<()>), Reported> {
        let start = self.here();
        let mut literals = Vec::new();
        let mut shape: Dnf<()> = vec![Vec::new()];
        loop {
            let (literal, literal_shape) = self.literal(depth)?;
            if shape.len() * literal_shape.len() > MAX_EXPANSION {
                return Err(self.unsupported(
                    start.to(self.here()),
                    format!("a body expanding to more than {MAX_EXPANSION} rules"),
                ));
            }
            lower::and(&mut shape, literal_shape);
            literals.push(literal);
            if self.eat(Kind::Comma).is_none() {
                return Ok((tree::Conjunction(literals), shape));
            }
        }
    }

    /// One literal of a body, with the shape of its expansion.
    fn literal(&mut self, depth: usize) -> Result<(tree::Literal, Dnf<()>), Reported> {
        use tree::Literal;
        let Some(tok) = self.peek() else { return Err(self.expected("a body literal")) };
        match tok.kind {
            Kind::Bang => {
                // `!!a(x)` is `a(x)`; `!(b(x) ; c(x))`, `!(b(x), c(x))` and `!x > y` negate
                // what follows, pushed inward as Soufflé does (De Morgan) when lowered.
                let mut negations = 0usize;
                while self.eat(Kind::Bang).is_some() {
                    negations += 1;
                }
                let start = self.here();
                let (inner, shape) = self.literal(depth)?;
                if negations.is_multiple_of(2) {
                    return Ok((inner, shape));
                }
                match lower::negate(shape, |(), _| ()) {
                    Some(shape) => Ok((Literal::Not { bang: tok.span, inner: Box::new(inner) }, shape)),
                    None => Err(self.unsupported(
                        tok.span.to(start),
                        format!("a negation expanding to more than {MAX_EXPANSION} rules"),
                    )),
                }
            }
            Kind::LParen => {
                // `(x + 1) < y` is a comparison, `(a(x) ; b(x))` a disjunction: the
                // comparison is tried first, and its reports dropped if it is none.
                let (pos, reported, items) = (self.pos, self.diagnostics.len(), self.items.len());
                if let Ok(Some(comparison)) = self.comparison() {
                    return Ok((Literal::Compare(comparison), vec![vec![()]]));
                }
                self.pos = pos;
                self.diagnostics.truncate(reported);
                self.items.truncate(items);
                if depth >= MAX_NESTING {
                    return Err(self.unsupported(tok.span, format!("nesting deeper than {MAX_NESTING} parentheses")));
                }
                self.bump();
                let (group, shape) = self.disjunction(depth + 1)?;
                self.expect(Kind::RParen, "`,`, `;` or `)`")?;
                Ok((Literal::Group(group), shape))
            }
            // `arch.jump(x)`: a relation of a component instance (`true` and `false` are
            // words of Soufflé's, never a name: `true.` ends a clause).
            Kind::Ident if self.qualified_length() > 1 && !matches!(self.text(tok), "true" | "false") => {
                Ok((Literal::Atom(self.atom()?), vec![vec![()]]))
            }
            // `sum (z + 1) : { e(z, _) } > 0` starts with an aggregate, not an atom `sum(...)`.
            Kind::Ident
                if self.peek_at(1).is_some_and(|t| t.kind == Kind::LParen)
                    && ir::BinOp::function(self.text(tok)).is_none()
                    && ir::UnOp::from_text(self.text(tok)).is_none()
                    && !(ast::AggregateOp::from_text(self.text(tok)).is_some() && self.colon_ahead()) =>
            {
                let name = self.text(tok);
                if let Some(op) = ir::CmpOp::from_call(name) {
                    return Ok((Literal::Compare(self.call_constraint(op)?), vec![vec![()]]));
                }
                // `strlen(s) > 2`: Soufflé's functors (and `range`) start a comparison, not an
                // atom.
                if ir::Functor::is_name(name) || name == "range" {
                    return match self.comparison()? {
                        Some(comparison) => Ok((Literal::Compare(comparison), vec![vec![()]])),
                        None => Err(self.expected("a comparison after the functor's value")),
                    };
                }
                if SOUFFLE_FUNCTORS.contains(&name) {
                    return Err(self.unsupported(tok.span, format!("the functor `{name}(...)`")));
                }
                let atom = self.atom()?;
                if self.peek().is_some_and(|t| matches!(t.kind, Kind::Eq | Kind::Compare | Kind::Operator)) {
                    return Err(self.unsupported(tok.span, format!("the functor `{name}(...)`")));
                }
                Ok((Literal::Atom(atom), vec![vec![()]]))
            }
            Kind::Ident if matches!(self.text(tok), "true" | "false") => {
                self.bump();
                let holds = self.text(tok) == "true";
                Ok((Literal::Constant(holds), if holds { vec![Vec::new()] } else { Vec::new() }))
            }
            _ => match self.comparison()? {
                Some(comparison) => Ok((Literal::Compare(comparison), vec![vec![()]])),
                None => Err(self.expected("`(` after a relation name, or a comparison")),
            },
        }
    }

    /// A constraint `x < y`, `x = y + 1`; none when the expression is not followed by a
    /// comparison operator. `z = count : {...}` stops at the aggregate, which `term`
    /// reports as what it is.
    fn comparison(&mut self) -> Result<Option<ast::Comparison>, Reported> {
        let left = self.expression()?;
        let Some(op) = self.peek().filter(|t| matches!(t.kind, Kind::Eq | Kind::Compare)) else { return Ok(None) };
        self.bump();
        let right = self.expression()?;
        match ir::CmpOp::from_text(self.text(op)) {
            Some(cmp) => Ok(Some(ast::Comparison::new(left, cmp, right))),
            None => Err(self.unsupported(op.span, format!("the comparison `{}`", self.text(op)))),
        }
    }

    /// `contains(a, b)` or `match(a, b)`, a constraint on texts written as a call.
    fn call_constraint(&mut self, op: ir::CmpOp) -> Result<ast::Comparison, Reported> {
        let name = self.expect(Kind::Ident, "`contains` or `match`")?;
        self.expect(Kind::LParen, "`(`")?;
        let left = self.expression()?;
        self.expect(Kind::Comma, "`,`")?;
        let right = self.expression()?;
        let close = self.expect(Kind::RParen, "`)`")?;
        Ok(ast::Comparison::spanning(left, op, right, name.span.to(close.span)))
    }

    /// Whether the next tokens call a declared functor: `@f(`.
    fn user_functor_call(&self) -> bool {
        self.at(Kind::At)
            && self.peek_at(1).is_some_and(|t| t.kind == Kind::Ident)
            && self.peek_at(2).is_some_and(|t| t.kind == Kind::LParen)
    }

    /// Whether the next tokens call a functor: `cat(`, `strlen(`, ...
    fn functor_call(&self) -> bool {
        self.peek().is_some_and(|t| t.kind == Kind::Ident && ir::Functor::is_name(self.text(t)))
            && self.peek_at(1).is_some_and(|t| t.kind == Kind::LParen)
    }

    /// A term or an arithmetic expression, read by the grammar both dialects share.
    fn expression(&mut self) -> Result<ast::Term, Reported> {
        crate::expr::expression(self)
    }

    /// `name(t, ...)`
    fn atom(&mut self) -> Result<ast::Atom, Reported> {
        let name = self.qualified_name("a relation name")?;
        self.expect(Kind::LParen, "`(`")?;
        let mut args = Vec::new();
        let close = match self.eat(Kind::RParen) {
            Some(close) => close,
            None => loop {
                args.push(self.expression()?);
                if self.eat(Kind::Comma).is_none() {
                    break self.expect(Kind::RParen, "`,` or `)`")?;
                }
            },
        };
        let span = name.span.to(close.span);
        Ok(ast::Atom { pred: name, args, span })
    }

    /// A variable, `_`, a number or a string; anything else is unsupported.
    fn term(&mut self) -> Result<ast::Term, Reported> {
        let Some(tok) = self.peek() else { return Err(self.expected("a variable, a number or a string")) };
        let text = self.text(tok);
        let next = self.peek_at(1);
        let kind = match tok.kind {
            Kind::Ident if next.is_some_and(|n| n.kind == Kind::LParen) => {
                return Err(self.unsupported(tok.span, format!("the functor `{text}(...)`")));
            }
            Kind::Ident if text == "range" && next.is_some_and(|n| !matches!(n.kind, Kind::Comma | Kind::RParen)) => {
                return Err(self.unsupported(tok.span, "the aggregate `range`"));
            }
            Kind::Ident if text == "nil" => TermKind::Nil,
            Kind::Ident => TermKind::Var(text.to_string()),
            Kind::Underscore => TermKind::Anon,
            // As Soufflé reads it: `007` is 7, `0x10` 16, `5u` 5; the suffix stays, since
            // it types the literal (`0u - 1u > 0u` compares unsigned values).
            Kind::Number | Kind::RadixNumber => match ast::integer_literal(text) {
                Some(n) if text.ends_with('u') => TermKind::Int(format!("{n}u")),
                Some(n) => TermKind::Int(n.to_string()),
                None => return Err(self.unsupported(tok.span, "a number this large")),
            },
            Kind::Float => TermKind::Float(text.to_string()),
            // `1.2.3.4` is, to Soufflé, the number of those four bytes (as a `number`, so
            // `255.255.255.255` is -1).
            Kind::Ipv4 => match ipv4(text) {
                Some(n) => TermKind::Int(n.to_string()),
                None => return Err(self.unsupported(tok.span, "an IPv4 constant with a part above 255")),
            },
            Kind::Str => TermKind::Str(unescape(text)),
            Kind::Dollar if next.is_some_and(|n| n.kind == Kind::Ident) => return self.branch(),
            Kind::Dollar => return Err(self.unsupported(tok.span, "`$` (the counter)")),
            Kind::At => return Err(self.expected("a functor's name and `(` after `@`")),
            Kind::LBracket => return self.record(),
            _ => return Err(self.expected("a variable, a number or a string")),
        };
        self.bump();
        Ok(ast::Term { kind, span: tok.span })
    }
}

/// Records and the values of algebraic data types.
impl Parser<'_> {
    /// `[t, ...]` (possibly empty).
    fn record(&mut self) -> Result<ast::Term, Reported> {
        let open = self.expect(Kind::LBracket, "`[`")?;
        let (args, close) = self.record_fields(open, Kind::RBracket, "`,` or `]`")?;
        Ok(ast::Term { kind: TermKind::Record { branch: None, args }, span: open.span.to(close.span) })
    }

    /// `$Branch(t, ...)` or `$Branch`.
    fn branch(&mut self) -> Result<ast::Term, Reported> {
        let dollar = self.expect(Kind::Dollar, "`$`")?;
        let name = self.qualified_name("a branch name")?;
        let (args, end) = match self.eat(Kind::LParen) {
            Some(open) => {
                let (args, close) = self.record_fields(open, Kind::RParen, "`,` or `)`")?;
                (args, close.span)
            }
            None => (Vec::new(), name.span),
        };
        Ok(ast::Term { kind: TermKind::Record { branch: Some(name.text), args }, span: dollar.span.to(end) })
    }

    /// The fields of a record after its `open` token, up to `close`.
    fn record_fields(&mut self, open: Tok, close: Kind, expected: &str) -> Result<(Vec<ast::Term>, Tok), Reported> {
        if self.record_depth >= crate::expr::MAX_DEPTH {
            let message = format!("records nest deeper than {} levels here", crate::expr::MAX_DEPTH);
            return Err(self.syntax(open.span, message));
        }
        self.record_depth += 1;
        let fields = self.record_fields_inside(close, expected);
        self.record_depth -= 1;
        fields
    }

    fn record_fields_inside(&mut self, close: Kind, expected: &str) -> Result<(Vec<ast::Term>, Tok), Reported> {
        let mut args = Vec::new();
        if let Some(end) = self.eat(close) {
            return Ok((args, end));
        }
        loop {
            args.push(self.expression()?);
            if self.eat(Kind::Comma).is_none() {
                return Ok((args, self.expect(close, expected)?));
            }
        }
    }
}

/// Components and qualified names.
impl Parser<'_> {
    /// How many tokens the qualified name at the current token has (`a.b.r` has five;
    /// none when it is not at a name). Soufflé reads `a . b` as `a.b` too.
    fn qualified_length(&self) -> usize {
        if !self.at(Kind::Ident) {
            return 0;
        }
        let mut length = 1;
        while self.peek_at(length).is_some_and(|t| t.kind == Kind::Dot)
            && self.peek_at(length + 1).is_some_and(|t| t.kind == Kind::Ident)
        {
            length += 2;
        }
        length
    }

    /// A name, qualified or not (`r`, `inst.r`, `a.b.T`): one name whose text holds the
    /// dots, spanning all its parts.
    fn qualified_name(&mut self, what: &str) -> Result<ast::Name, Reported> {
        let length = self.qualified_length();
        let first = self.expect(Kind::Ident, what)?;
        let mut name = self.name(first);
        for _ in 0..length.saturating_sub(1) / 2 {
            self.bump();
            let part = self.bump().expect("counted");
            name.text.push('.');
            name.text.push_str(self.text(part));
            name.span = name.span.to(part.span);
        }
        Ok(name)
    }

    /// Whether the current token is the operator `op` (`<` or `>` around type arguments).
    fn at_operator(&self, op: &str) -> bool {
        self.peek().is_some_and(|t| t.kind == Kind::Compare && self.text(t) == op)
    }

    /// `Name` or `Name<A, B>`: a component with its type arguments (or, after `.comp`,
    /// its type parameters), which Soufflé writes as plain names.
    fn component_type(&mut self) -> Result<tree::ComponentType, Reported> {
        let name = self.expect(Kind::Ident, "a component name")?;
        let mut arguments = Vec::new();
        let mut end = name.span;
        if self.at_operator("<") {
            self.bump();
            loop {
                let argument = self.expect(Kind::Ident, "a type name")?;
                arguments.push(self.name(argument));
                if self.eat(Kind::Comma).is_some() {
                    continue;
                }
                if !self.at_operator(">") {
                    return Err(self.expected("`,` or `>`"));
                }
                end = self.bump().expect("at `>`").span;
                break;
            }
        }
        Ok(tree::ComponentType { name: self.name(name), arguments, span: name.span.to(end) })
    }

    /// `.init inst = Name<number, T>`
    fn init(&mut self, keyword: Tok) -> Result<(), Reported> {
        let instance = self.expect(Kind::Ident, "an instance name")?;
        self.expect(Kind::Eq, "`=` and the component to instantiate")?;
        let component = self.component_type()?;
        let span = keyword.span.to(component.span);
        self.items.push(Item::Init(tree::Init { instance: self.name(instance), component, span }));
        Ok(())
    }

    /// `.comp Name<T> : Base<T>, Other { body }`. Components nest at most [`MAX_NESTING`]
    /// deep, so reading them recurses that deep at most.
    fn component(&mut self, keyword: Tok) -> Result<(), Reported> {
        let head = self.component_type()?;
        let mut bases = Vec::new();
        if self.eat(Kind::Colon).is_some() {
            bases.push(self.component_type()?);
            while self.eat(Kind::Comma).is_some() {
                bases.push(self.component_type()?);
            }
        }
        let open = self.expect(Kind::LBrace, "`{` and the component's body")?;
        if self.component_depth >= MAX_NESTING {
            return Err(self.unsupported(open.span, format!("components nested deeper than {MAX_NESTING}")));
        }
        let enclosing_items = std::mem::take(&mut self.items);
        let enclosing_start = self.statement_start;
        self.component_depth += 1;
        let body = self.component_body(&head.name, open);
        self.component_depth -= 1;
        self.statement_start = enclosing_start;
        let items = std::mem::replace(&mut self.items, enclosing_items);
        let (overrides, close) = body?;
        let tree::ComponentType { name, arguments: parameters, .. } = head;
        let span = keyword.span.to(close.span);
        self.items.push(Item::Component(Box::new(tree::Component { name, parameters, bases, items, overrides, span })));
        Ok(())
    }

    /// A component's body up to its `}`: the items go to `self.items`; returns the
    /// `.override`s and the `}`. After an error the body goes on with its next item.
    fn component_body(&mut self, name: &ast::Name, open: Tok) -> Result<(Vec<ast::Name>, Tok), Reported> {
        let mut overrides = Vec::new();
        loop {
            self.statement_start = self.pos;
            let Some(tok) = self.peek() else {
                let message = format!("the component `{}` has no closing `}}`", name.text);
                self.diagnostics.push(
                    Diagnostic::error(Code::PARSE, message)
                        .with_primary(open.span, "opened here, never closed")
                        .with_help("end the component's body with `}`"),
                );
                return Err(Reported);
            };
            let result = match tok.kind {
                Kind::RBrace => {
                    self.bump();
                    return Ok((overrides, tok));
                }
                Kind::Directive => match self.text(tok) {
                    ".override" => {
                        self.bump();
                        self.expect(Kind::Ident, "the name of a relation to override").map(|relation| {
                            overrides.push(self.name(relation));
                        })
                    }
                    // Soufflé's grammar has these at the top level only.
                    directive @ (".pragma" | ".functor") => {
                        self.bump();
                        self.syntax(tok.span, format!("`{directive}` cannot be written inside a component"));
                        self.skip_line(tok.span);
                        Ok(())
                    }
                    _ => self.directive(),
                },
                Kind::Ident => self.clause(),
                Kind::QueryOp => {
                    Err(self.syntax(tok.span, "a query (`?-`) cannot be written inside a component".to_string()))
                }
                Kind::OpenComment => {
                    self.bump();
                    Err(self.syntax(tok.span, "this comment has no closing `*/`".to_string()))
                }
                _ => {
                    let r = self.expected("a declaration, a rule, a fact or `}`");
                    self.bump();
                    Err(r)
                }
            };
            if result.is_err() {
                self.recover();
            }
        }
    }
}

/// The value Soufflé gives the IPv4 constant `text`: its four bytes, high first, as a
/// 32-bit signed number; none when a part is above 255.
fn ipv4(text: &str) -> Option<i32> {
    let mut value: u32 = 0;
    for part in text.split('.') {
        value = (value << 8) | u32::from(part.parse::<u8>().ok()?);
    }
    Some(value as i32)
}

/// Soufflé's tokens as the shared expression grammar reads them.
impl crate::expr::ExprSource for Parser<'_> {
    type Error = Reported;

    fn infix(&mut self) -> Option<(ir::BinOp, Span)> {
        let tok = self.peek()?;
        let op = match tok.kind {
            Kind::Operator => ir::BinOp::symbol(self.text(tok), true)?,
            Kind::Ident => ir::BinOp::word(self.text(tok), true)?,
            _ => return None,
        };
        Some((op, tok.span))
    }

    fn prefix(&mut self) -> Option<(crate::expr::Prefix, Span)> {
        use crate::expr::Prefix;
        let tok = self.peek()?;
        let text = self.text(tok);
        let next = self.peek_at(1).map(|t| t.kind);
        let prefix = match tok.kind {
            Kind::Operator if text == "-" => Prefix::Unary(ir::UnOp::Neg),
            Kind::LParen => Prefix::Open,
            Kind::Ident if self.function_call() => Prefix::Function(ir::BinOp::function(text)?),
            Kind::Ident if self.functor_call() => Prefix::Call(ir::Functor::from_name(text, 1)?),
            Kind::Ident if text == "range" && next == Some(Kind::LParen) => Prefix::Range,
            // Its signature is the declaration's, which the checks look up by name.
            Kind::At if self.user_functor_call() => {
                let name = self.peek_at(1)?;
                let functor = ir::UserFunctor::undeclared(self.text(name));
                return Some((Prefix::Call(ir::Functor::User(std::sync::Arc::new(functor))), tok.span.to(name.span)));
            }
            Kind::Ident if matches!(text, "bnot" | "lnot") => Prefix::Unary(ir::UnOp::from_text(text)?),
            // `count :`; `sum e :` (`min(a, b)` is the function, `f(min, x)` a variable).
            Kind::Ident => {
                let op = ast::AggregateOp::from_text(text)?;
                // A value may also start with `(` or `-` (`sum (y * 2) - y :`, `sum -1 :`); then
                // the `:` ahead tells an aggregate from a variable named `sum`.
                let value_follows =
                    matches!(next, Some(Kind::Ident | Kind::Underscore | Kind::Number | Kind::RadixNumber | Kind::Str))
                        || (matches!(next, Some(Kind::LParen | Kind::Operator)) && self.colon_ahead());
                match op.takes_value() {
                    true if value_follows => Prefix::Aggregate(op),
                    false if next == Some(Kind::Colon) => Prefix::Aggregate(op),
                    _ => return None,
                }
            }
            _ => return None,
        };
        Some((prefix, tok.span))
    }

    fn bump(&mut self, prefix: bool) {
        let range = self.peek().is_some_and(|t| t.kind == Kind::Ident && self.text(t) == "range")
            && self.peek_at(1).is_some_and(|t| t.kind == Kind::LParen);
        let user = prefix && self.user_functor_call();
        let function = prefix && (user || self.function_call() || self.functor_call() || range);
        Parser::bump(self);
        if function {
            Parser::bump(self);
        }
        if user {
            Parser::bump(self);
        }
    }

    fn punct(&mut self, comma: bool) -> Result<(crate::expr::Punct, Span), Reported> {
        if let Some(close) = self.eat(Kind::RParen) {
            return Ok((crate::expr::Punct::Close, close.span));
        }
        match self.eat(Kind::Comma) {
            Some(c) if comma => Ok((crate::expr::Punct::Comma, c.span)),
            _ => Err(self.expected(if comma { "`,` or `)`" } else { "`)`" })),
        }
    }

    fn empty_call(&mut self) -> Option<Span> {
        self.eat(Kind::RParen).map(|t| t.span)
    }

    fn leaf(&mut self) -> Result<ast::Term, Reported> {
        self.term()
    }

    fn aggregate_body(&mut self) -> Result<(Vec<ast::Literal>, Span), Reported> {
        let colon = self.expect(Kind::Colon, "`:` before the aggregate's body")?;
        if self.aggregate_depth >= MAX_AGGREGATE_NESTING {
            let message = format!("aggregates nested deeper than {MAX_AGGREGATE_NESTING} levels");
            return Err(self.unsupported(colon.span, message));
        }
        let Some(open) = self.eat(Kind::LBrace) else {
            self.aggregate_depth += 1;
            let atom = self.atom();
            self.aggregate_depth -= 1;
            let atom = atom?;
            let end = atom.span;
            return Ok((vec![ast::Literal::Atom(atom)], end));
        };
        self.aggregate_depth += 1;
        let body = self.disjunction(0);
        self.aggregate_depth -= 1;
        let (body, shape) = body?;
        let close = self.expect(Kind::RBrace, "`,` or `}`")?;
        if shape.len() != 1 {
            return Err(self.unsupported(open.span.to(close.span), "a disjunction inside an aggregate"));
        }
        Ok((lower::disjunction(body).pop().unwrap_or_default(), close.span))
    }

    fn error(&mut self, span: Span, message: String) -> Reported {
        self.syntax(span, message)
    }
}
