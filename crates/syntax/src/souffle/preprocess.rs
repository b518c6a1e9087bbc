//! The preprocessor, run before the parser: reads a program as the C preprocessor that
//! Soufflé runs over it does. Each file is lexed; `#include` and `.include` splice in the
//! tokens of the files they name; `#define` (object-like and function-like, with `#`
//! and `##`) and `#undef` define the macros, expanded and rescanned as cpp expands them
//! (a macro does not expand inside its own expansion); `#if`/`#elif` evaluate integer
//! constant expressions; `#error` and `#warning` report; line markers, `#line` and
//! `#pragma` are passed over as Soufflé passes over them; `.once` is honoured.
//!
//! Tokens keep spans into the files they come from: a token of a macro's body points into
//! its `#define`, and records the expansion it came from, so that a report about it can
//! also point at the use.

use super::lexer::{lex, Kind};
use super::{unsupported, Includes, MAX_INCLUDE_DEPTH};
use crate::lexer::unescape;
use diag::{Code, Diagnostic, FileId, Label, Span};
use rustc_hash::{FxHashMap, FxHashSet};
use std::rc::Rc;

/// How many macro expansions one program may make: far more than any program needs, few
/// enough that macros that double their text at each level stop with a report instead
/// of filling the memory.
pub const MAX_EXPANSIONS: usize = 1 << 22;

/// The value of `RAM_DOMAIN_SIZE`, which Soufflé defines for its preprocessor: the bits
/// of a number.
const RAM_DOMAIN_SIZE: &str = "32";

/// A token: its kind, where it is, and where its text is.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tok {
    pub kind: Kind,
    pub span: Span,
    /// 0: the text is the source under `span`; n: `Texts::made[n - 1]`, a text the
    /// preprocessor made (a string of `#`, a token of `##`).
    made: u32,
    /// The macros this token may no longer invoke: an index into `Pre::hide_sets`.
    hide: u32,
    /// 0: written in a file; n: from the body of the macro of `Expansion` n - 1.
    expansion: u32,
}

impl Tok {
    /// A token written in a file.
    pub fn new(kind: Kind, span: Span) -> Tok {
        Tok { kind, span, made: 0, hide: 0, expansion: 0 }
    }
}

/// The texts of the files read, for the text of a token.
pub(super) struct Texts {
    /// Each file's text, by the file's id (a program of many files looks its texts up
    /// once a token).
    files: FxHashMap<FileId, String>,
    /// The texts the preprocessor made (see [`Tok`]).
    pub made: Vec<String>,
}

impl Texts {
    /// The texts of `files`, nothing made yet.
    pub fn new(files: Vec<(FileId, String)>) -> Texts {
        Texts { files: files.into_iter().collect(), made: Vec::new() }
    }

    /// Adds the text of a file.
    pub fn add(&mut self, file: FileId, text: String) {
        self.files.insert(file, text);
    }

    pub fn text(&self, span: Span) -> &str {
        self.file_text(span.file).get(span.range()).unwrap_or("")
    }

    /// The text of a token.
    pub fn tok_text(&self, tok: Tok) -> &str {
        match tok.made {
            0 => self.text(tok.span),
            n => self.made.get(n as usize - 1).map_or("", String::as_str),
        }
    }

    pub fn file_text(&self, file: FileId) -> &str {
        self.files.get(&file).map_or("", String::as_str)
    }

    fn make(&mut self, text: String) -> u32 {
        self.made.push(text);
        self.made.len() as u32
    }
}

/// One expansion of a macro: its name and where it was used.
#[derive(Clone, Debug)]
pub(super) struct Expansion {
    pub name: String,
    /// The use: the name, and for a function-like macro its arguments.
    pub at: Span,
    /// 0, or the expansion (n - 1) whose body the use itself came from.
    pub parent: u32,
}

/// What the preprocessor made of the files: one stream of tokens, and the expansions
/// their tokens came from.
pub(super) struct Preprocessed {
    pub tokens: Vec<Tok>,
    pub expansions: Vec<Expansion>,
}

impl Preprocessed {
    /// Marks each report about tokens of a macro's body with the uses they were expanded
    /// from (up to three, each with the uses it came from in turn): the report points at
    /// the `#define`, and says which expansion.
    pub fn mark_expansions(&self, diagnostics: &mut [Diagnostic]) {
        // The tokens of macros' bodies by where they are: (file, start, end, expansion).
        let mut marks: Vec<(FileId, u32, u32, u32)> = self
            .tokens
            .iter()
            .filter(|t| t.expansion != 0)
            .map(|t| (t.span.file, t.span.start, t.span.end, t.expansion))
            .collect();
        if marks.is_empty() {
            return;
        }
        marks.sort_unstable();
        for d in diagnostics {
            let Some(primary) = d.primary_span() else { continue };
            let first = marks.partition_point(|m| (m.0, m.1) < (primary.file, primary.start));
            let mut found: Vec<u32> = Vec::new();
            for &(file, start, end, expansion) in &marks[first..] {
                if file != primary.file || start >= primary.end.max(primary.start + 1) {
                    break;
                }
                if end <= primary.end && !found.contains(&expansion) {
                    found.push(expansion);
                    if found.len() == 3 {
                        break;
                    }
                }
            }
            for expansion in found {
                let mut at = expansion;
                for _ in 0..3 {
                    let Some(e) = self.expansions.get(at as usize - 1) else { break };
                    if !d.labels.iter().any(|l| l.span == e.at) {
                        let message = format!("in this expansion of `{}`", e.name);
                        d.labels.push(Label { span: e.at, message, primary: false });
                    }
                    if e.parent == 0 {
                        break;
                    }
                    at = e.parent;
                }
            }
        }
    }
}

/// E0012: includes nested deeper than [`MAX_INCLUDE_DEPTH`].
fn too_deep(span: Span) -> Diagnostic {
    Diagnostic::error(Code::UNREADABLE_FILE, format!("includes nested more than {MAX_INCLUDE_DEPTH} deep"))
        .with_primary(span, "this include")
        .with_help("does a file include itself?")
}

/// E0012: the file `path` cannot be included.
fn cannot_include(path: &str, error: &str, span: Span) -> Diagnostic {
    Diagnostic::error(Code::UNREADABLE_FILE, format!("cannot include `{path}`: {error}"))
        .with_primary(span, "included here")
        .with_help(
            "`#include \"file\"` looks beside the including file, then in the current directory, then in each \
             `-I DIR` in order; `#include <file>` in the last two",
        )
}

/// E0001: what the C preprocessor rejects.
fn malformed(span: Span, message: impl Into<String>, help: &str) -> Diagnostic {
    Diagnostic::error(Code::PARSE, message).with_primary(span, "here").with_help(help)
}

/// Runs the preprocessor over `file`, after the `#define` lines of `prelude` (the
/// macros of the command line), both in `texts`.
pub(super) fn preprocess(
    file: FileId,
    prelude: Option<FileId>,
    texts: &mut Texts,
    includes: &mut dyn Includes,
    diagnostics: &mut Vec<Diagnostic>,
) -> Preprocessed {
    let mut pre = Pre {
        texts,
        includes,
        diagnostics,
        macros: FxHashMap::default(),
        names: FxHashMap::default(),
        hide_sets: vec![Vec::new()],
        joined: FxHashMap::default(),
        expansions: Vec::new(),
        exhausted: false,
        once: FxHashSet::default(),
    };
    let value = pre.texts.make(RAM_DOMAIN_SIZE.to_string());
    let body = vec![Piece::Tok(Tok { made: value, ..Tok::new(Kind::Number, Span::new(file, 0..0)) })];
    pre.macros.insert("RAM_DOMAIN_SIZE".to_string(), Rc::new(Macro { params: None, variadic: false, body }));
    let mut stream = Stream { frames: vec![pre.file_frame(file, 0)] };
    if let Some(prelude) = prelude {
        stream.frames.push(pre.file_frame(prelude, 0));
    }
    let tokens = pre.run(&mut stream);
    Preprocessed { tokens, expansions: pre.expansions }
}

/// A macro: its parameters (`None` for an object-like macro) and its body.
struct Macro {
    params: Option<Vec<String>>,
    /// Whether the last parameter is `...` (`__VA_ARGS__`), taking the remaining arguments.
    variadic: bool,
    body: Vec<Piece>,
}

/// A piece of a macro's body.
#[derive(Clone, Copy)]
enum Piece {
    Tok(Tok),
    /// The argument of parameter n, expanded first (unless next to `##`).
    Param(usize),
    /// `#param`: the argument's spelling as a string.
    Stringise(usize, Span),
    /// `##`: the tokens either side pasted into one.
    Paste(Span),
}

/// An open conditional section.
struct Condition {
    /// Whether its tokens are read now.
    active: bool,
    /// Whether one of its branches has been read (so `#elif` and `#else` are not).
    taken: bool,
    /// Whether an `#else` has been seen.
    after_else: bool,
    span: Span,
}

/// Where tokens come from: the files being read, and the expansions waiting to be
/// rescanned above them.
struct Stream {
    frames: Vec<Frame>,
}

enum Frame {
    /// A file's tokens, reversed so that `pop` yields them in order, and how many
    /// conditional sections were open when it started.
    File { tokens: Vec<Tok>, conditions: usize },
    /// An expansion's tokens, reversed.
    Expansion(Vec<Tok>),
}

/// Tokens a macro's arguments are read from, and its expansion put back into.
trait Source {
    /// The next token, not crossing the end of a file.
    fn next(&mut self) -> Option<Tok>;
    fn peek(&self) -> Option<Tok>;
    fn push_front(&mut self, tokens: Vec<Tok>);
}

impl Source for Stream {
    fn next(&mut self) -> Option<Tok> {
        loop {
            match self.frames.last_mut()? {
                Frame::Expansion(tokens) => match tokens.pop() {
                    Some(t) => return Some(t),
                    None => {
                        self.frames.pop();
                    }
                },
                Frame::File { tokens, .. } => return tokens.pop(),
            }
        }
    }

    fn peek(&self) -> Option<Tok> {
        for frame in self.frames.iter().rev() {
            match frame {
                Frame::Expansion(tokens) if tokens.is_empty() => {}
                Frame::Expansion(tokens) | Frame::File { tokens, .. } => return tokens.last().copied(),
            }
        }
        None
    }

    fn push_front(&mut self, mut tokens: Vec<Tok>) {
        tokens.reverse();
        self.frames.push(Frame::Expansion(tokens));
    }
}

/// A list of tokens expanded on its own (a macro's argument, an `#if` condition).
struct List(Vec<Tok>);

impl Source for List {
    fn next(&mut self) -> Option<Tok> {
        self.0.pop()
    }

    fn peek(&self) -> Option<Tok> {
        self.0.last().copied()
    }

    fn push_front(&mut self, tokens: Vec<Tok>) {
        self.0.extend(tokens.into_iter().rev());
    }
}

/// The preprocessor's state.
struct Pre<'a> {
    texts: &'a mut Texts,
    includes: &'a mut dyn Includes,
    diagnostics: &'a mut Vec<Diagnostic>,
    macros: FxHashMap<String, Rc<Macro>>,
    /// Each macro name's number, for hide sets.
    names: FxHashMap<String, u32>,
    /// The sets of macro names tokens may no longer invoke (sorted); the first is empty.
    hide_sets: Vec<Vec<u32>>,
    /// The union of two hide sets, once computed.
    joined: FxHashMap<(u32, u32), u32>,
    expansions: Vec<Expansion>,
    /// Whether [`MAX_EXPANSIONS`] was reached (and reported).
    exhausted: bool,
    /// The files that have passed a `.once`.
    once: FxHashSet<String>,
}

impl Pre<'_> {
    fn file_frame(&self, file: FileId, conditions: usize) -> Frame {
        let tokens = lex(self.texts.file_text(file), 0).into_iter().rev();
        Frame::File { tokens: tokens.map(|(kind, range)| Tok::new(kind, Span::new(file, range))).collect(), conditions }
    }

    fn run(&mut self, stream: &mut Stream) -> Vec<Tok> {
        let mut out = Vec::new();
        let mut conditions: Vec<Condition> = Vec::new();
        while let Some(frame) = stream.frames.last_mut() {
            let tok = match frame {
                Frame::Expansion(tokens) => match tokens.pop() {
                    Some(t) => t,
                    None => {
                        stream.frames.pop();
                        continue;
                    }
                },
                Frame::File { tokens, conditions: base } => match tokens.pop() {
                    Some(t) => t,
                    None => {
                        // Sections a file opens, it closes: cpp reports the others at
                        // the file's end.
                        for open in conditions.drain(*base..) {
                            self.diagnostics.push(
                                Diagnostic::error(Code::PARSE, "this conditional section has no `#endif`")
                                    .with_primary(open.span, "opened here")
                                    .with_help("close it in the same file with `#endif`"),
                            );
                        }
                        stream.frames.pop();
                        continue;
                    }
                },
            };
            if tok.kind == Kind::Hash {
                self.directive(tok, stream, &mut conditions);
                continue;
            }
            if !conditions.iter().all(|c| c.active) {
                continue;
            }
            match tok.kind {
                // As in Soufflé 2.5: `.once` marks its file; reached again, in a file
                // included again, it skips the rest of that file (what precedes it is
                // read each time).
                Kind::Directive if self.texts.tok_text(tok) == ".once" => {
                    if !self.once(tok.span.file) {
                        if let Some(Frame::File { conditions: base, .. }) = stream.frames.pop() {
                            conditions.truncate(base);
                        }
                    }
                }
                Kind::Directive if self.texts.tok_text(tok) == ".include" => {
                    // What stands where the file name should be is dropped with the report
                    // (a directive is kept), so that the parser does not report it again.
                    let next = stream.peek();
                    if next.is_some_and(|t| t.kind != Kind::Directive) {
                        stream.next();
                    }
                    let Some(name) = next.filter(|t| t.kind == Kind::Str) else {
                        self.diagnostics.push(malformed(
                            tok.span,
                            "expected a quoted file name after `.include`",
                            "write `.include \"other.dl\"`",
                        ));
                        continue;
                    };
                    let path = unescape(self.texts.tok_text(name));
                    let span = if name.span.file == tok.span.file { tok.span.to(name.span) } else { tok.span };
                    self.include(stream, &conditions, tok.span.file, &path, false, span);
                }
                Kind::Ident if self.expand(tok, stream) => {}
                _ => out.push(tok),
            }
        }
        out
    }

    /// Whether the file passes its `.once` or `#pragma once` (false when it passed one
    /// before).
    fn once(&mut self, file: FileId) -> bool {
        self.once.insert(self.includes.identity(file))
    }

    /// Splices in the file `path` names, as included from `from` at `span`.
    fn include(
        &mut self,
        stream: &mut Stream,
        conditions: &[Condition],
        from: FileId,
        path: &str,
        angled: bool,
        span: Span,
    ) {
        // As in cpp, an include that fails ends the reading: what follows would mostly
        // report what the file would have declared.
        let files = stream.frames.iter().filter(|f| matches!(f, Frame::File { .. })).count();
        if files > MAX_INCLUDE_DEPTH {
            self.diagnostics.push(too_deep(span));
            stream.frames.clear();
            return;
        }
        match self.includes.include(from, path, angled) {
            Ok((id, text)) => {
                self.texts.add(id, text);
                stream.frames.push(self.file_frame(id, conditions.len()));
            }
            Err(e) => {
                self.diagnostics.push(cannot_include(path, &e, span));
                stream.frames.clear();
            }
        }
    }

    /// A `#` line.
    fn directive(&mut self, tok: Tok, stream: &mut Stream, conditions: &mut Vec<Condition>) {
        // A backslash at the end of a line joins the next one; blanks in its place keep
        // the offsets into the file.
        let line = self.texts.text(tok.span).replace("\\\r\n", "   ").replace("\\\n", "  ");
        let body = line[1..].trim_start();
        let word_len = body.find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(body.len());
        let (word, rest) = body.split_at(word_len);
        let rest_start = tok.span.start as usize + line.len() - rest.len();
        let file = tok.span.file;
        let enclosing = conditions.iter().all(|c| c.active);
        match word {
            "ifdef" | "ifndef" | "if" => {
                let active = enclosing && self.test(word, rest, rest_start, tok.span);
                conditions.push(Condition { active, taken: active, after_else: false, span: tok.span });
                return;
            }
            "elif" | "else" | "endif" => {
                let base = match stream.frames.iter().rev().find(|f| matches!(f, Frame::File { .. })) {
                    Some(Frame::File { conditions: base, .. }) => *base,
                    _ => 0,
                };
                if conditions.len() <= base {
                    self.diagnostics.push(malformed(
                        tok.span,
                        format!("`#{word}` without an `#if`"),
                        "open the section with `#ifdef NAME`, `#ifndef NAME` or `#if`",
                    ));
                    return;
                }
                let last = conditions.len() - 1;
                let outer = conditions[..last].iter().all(|c| c.active);
                if word != "endif" && conditions[last].after_else {
                    self.diagnostics.push(
                        malformed(tok.span, format!("`#{word}` after `#else`"), "a section has one `#else`, last")
                            .with_secondary(conditions[last].span, "the section opens here"),
                    );
                    return;
                }
                match word {
                    "elif" => {
                        let active = outer && !conditions[last].taken && self.test("if", rest, rest_start, tok.span);
                        conditions[last].active = active;
                        conditions[last].taken |= active;
                    }
                    "else" => {
                        conditions[last].active = outer && !conditions[last].taken;
                        conditions[last].taken = true;
                        conditions[last].after_else = true;
                    }
                    _ => {
                        conditions.pop();
                    }
                }
                return;
            }
            _ if !enclosing => return,
            _ => {}
        }
        match word {
            "include" => {
                let trimmed = rest.trim_start();
                let (open, close) = match trimmed.chars().next() {
                    Some('<') => ('<', '>'),
                    _ => ('"', '"'),
                };
                // The name, then nothing but a comment.
                let quoted = trimmed.strip_prefix(open).and_then(|p| p.split_once(close));
                let path = quoted.and_then(|(path, after)| {
                    let after = after.trim_start();
                    (after.is_empty() || after.starts_with("//") || after.starts_with("/*")).then_some(path)
                });
                // `#include NAME`: as cpp does, the macros of the line are expanded, and
                // what they give must be a name in quotes or `<>`.
                let (path, open) = match path {
                    Some(path) => (Some(path.to_string()), open),
                    None if !trimmed.starts_with(['"', '<']) => self.include_name(rest, rest_start, file),
                    None => (None, open),
                };
                let Some(path) = path else {
                    self.diagnostics.push(malformed(
                        tok.span,
                        "expected a file name in quotes or `<>` after `#include`",
                        "write `#include \"other.dl\"`",
                    ));
                    return;
                };
                self.include(stream, conditions, file, &path, open == '<', tok.span);
            }
            "define" => self.define(tok.span, rest, rest_start),
            "undef" => match first_name(rest) {
                Some(name) => {
                    self.macros.remove(name);
                }
                None => {
                    self.diagnostics.push(malformed(tok.span, "expected a name after `#undef`", "write `#undef NAME`"))
                }
            },
            "error" => self.diagnostics.push(
                Diagnostic::error(Code::PARSE, format!("`#error{}`", rest.trim_end()))
                    .with_primary(tok.span, "the program stops here")
                    .with_help(
                        "a `#error` in a section that is read ends the program; define the macros its conditions test",
                    ),
            ),
            "warning" => self.diagnostics.push(
                Diagnostic::warning(Code::PREPROCESSOR_WARNING, format!("`#warning{}`", rest.trim_end()))
                    .with_primary(tok.span, "here"),
            ),
            // cpp reads a file with `#pragma once` once: included again, nothing of it
            // is read (the pragma stands first, before what it keeps from being read twice).
            "pragma" if rest.trim() == "once" || rest.trim().starts_with("once ") => {
                if !self.once(file) {
                    if let Some(Frame::File { conditions: base, .. }) = stream.frames.pop() {
                        conditions.truncate(base);
                    }
                }
            }
            // What cpp passes on and Soufflé passes over: line markers (`# 12 "f.dl"`),
            // `#line` (Soufflé reports positions by them; dlc's reports point into the
            // files themselves), `#pragma`, `#ident`, and `#` alone.
            "" | "line" | "pragma" | "ident" | "sccs" => {}
            _ if word.bytes().all(|b| b.is_ascii_digit()) => {}
            "include_next" | "import" | "assert" | "unassert" => self.diagnostics.push(
                unsupported(tok.span, &format!("the preprocessor directive `#{word}`"))
                    .with_help("dlc's preprocessor reads what the C standard defines, and `#warning`"),
            ),
            _ => self.diagnostics.push(malformed(
                tok.span,
                format!("`#{word}` is no preprocessor directive"),
                "the directives are `#include`, `#define`, `#undef`, `#if`, `#ifdef`, `#ifndef`, `#elif`, \
                 `#else`, `#endif`, `#error`, `#warning`, `#line` and `#pragma`",
            )),
        }
    }

    /// `#define NAME body` or `#define NAME(params) body`; `rest` is the text after
    /// `define`, at `rest_start` in the file.
    fn define(&mut self, line: Span, rest: &str, rest_start: usize) {
        let lead = rest.len() - rest.trim_start().len();
        let after = &rest[lead..];
        let name_len = after.find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(after.len());
        let name = &after[..name_len];
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            self.diagnostics.push(malformed(line, "expected a name after `#define`", "write `#define NAME value`"));
            return;
        }
        let mut body_at = lead + name_len;
        let mut params = None;
        let mut variadic = false;
        if rest[body_at..].starts_with('(') {
            let Some(close) = rest[body_at..].find(')') else {
                self.diagnostics.push(malformed(
                    line,
                    format!("the parameters of `{name}` have no closing `)`"),
                    "write `#define NAME(a, b) body`",
                ));
                return;
            };
            let list = &rest[body_at + 1..body_at + close];
            let mut names = Vec::new();
            let items: Vec<&str> = list.split(',').map(str::trim).collect();
            for (i, item) in items.iter().enumerate() {
                let valid = !item.is_empty()
                    && !item.starts_with(|c: char| c.is_ascii_digit())
                    && item.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !names.contains(&item.to_string());
                if *item == "..." && i + 1 == items.len() {
                    variadic = true;
                    names.push("__VA_ARGS__".to_string());
                } else if valid {
                    names.push(item.to_string());
                } else if !(items.len() == 1 && item.is_empty()) {
                    self.diagnostics.push(malformed(
                        line,
                        format!("`{item}` is no parameter name of `{name}`"),
                        "the parameters are distinct names, the last may be `...`",
                    ));
                    return;
                }
            }
            params = Some(names);
            body_at += close + 1;
        }
        let Some(body) = self.body(line, &rest[body_at..], rest_start + body_at, params.as_deref()) else { return };
        self.macros.insert(name.to_string(), Rc::new(Macro { params, variadic, body }));
    }

    /// The pieces of a macro's body `text`, at `start` in the file of `line`.
    fn body(&mut self, line: Span, text: &str, start: usize, params: Option<&[String]>) -> Option<Vec<Piece>> {
        let file = line.file;
        // The text split at each `#` outside strings: the lexer reads a `#` as a line.
        let mut segments: Vec<(usize, usize)> = Vec::new();
        let mut hashes: Vec<usize> = Vec::new();
        let bytes = text.as_bytes();
        let (mut i, mut from, mut in_string) = (0, 0, false);
        while i < bytes.len() {
            match bytes[i] {
                b'\\' if in_string => i += 1,
                b'"' => in_string = !in_string,
                b'/' if !in_string && bytes.get(i + 1) == Some(&b'/') => break,
                b'#' if !in_string => {
                    segments.push((from, i));
                    hashes.push(i);
                    from = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        segments.push((from, bytes.len()));
        let mut pieces = Vec::new();
        for (n, &(a, b)) in segments.iter().enumerate() {
            if n > 0 {
                let at = hashes[n - 1];
                let span = Span::new(file, start + at..start + at + 1);
                match pieces.last() {
                    // `##`: the second `#` right after the first.
                    Some(Piece::Tok(t))
                        if t.kind == Kind::Error
                            && self.texts.text(t.span) == "#"
                            && t.span.end as usize == start + at =>
                    {
                        let first = t.span;
                        pieces.pop();
                        pieces.push(Piece::Paste(first.to(span)));
                    }
                    _ => pieces.push(Piece::Tok(Tok::new(Kind::Error, span))),
                }
            }
            for (kind, range) in lex(&text[a..b], start + a) {
                let tok = Tok::new(kind, Span::new(file, range));
                let word = self.texts.text(tok.span);
                let param = params.and_then(|p| p.iter().position(|p| p == word)).filter(|_| kind == Kind::Ident);
                match param {
                    Some(p) => {
                        // `#param`: a `#` right before the parameter (blanks between).
                        match pieces.last() {
                            Some(Piece::Tok(h)) if h.kind == Kind::Error && self.texts.text(h.span) == "#" => {
                                let h = h.span;
                                pieces.pop();
                                pieces.push(Piece::Stringise(p, h.to(tok.span)));
                            }
                            _ => pieces.push(Piece::Param(p)),
                        }
                    }
                    None => pieces.push(Piece::Tok(tok)),
                }
            }
        }
        for (n, piece) in pieces.iter().enumerate() {
            match piece {
                Piece::Paste(span) if n == 0 || n + 1 == pieces.len() => {
                    self.diagnostics.push(
                        malformed(
                            *span,
                            "`##` at an end of a macro's body",
                            "`##` pastes the tokens either side of it",
                        )
                        .with_secondary(line, "in this definition"),
                    );
                    return None;
                }
                Piece::Tok(t) if params.is_some() && t.kind == Kind::Error && self.texts.text(t.span) == "#" => {
                    self.diagnostics.push(
                        malformed(t.span, "`#` is not followed by a parameter", "`#param` is the argument as a string")
                            .with_secondary(line, "in this definition"),
                    );
                    return None;
                }
                _ => {}
            }
        }
        Some(pieces)
    }

    /// The value of the condition of `#ifdef NAME`, `#ifndef NAME` or `#if`/`#elif`
    /// (false, reported, when it has none).
    fn test(&mut self, word: &str, rest: &str, rest_start: usize, line: Span) -> bool {
        if word != "if" {
            let Some(name) = first_name(rest) else {
                self.diagnostics.push(malformed(
                    line,
                    format!("expected a name after `#{word}`"),
                    "write `#ifdef NAME`",
                ));
                return false;
            };
            return self.macros.contains_key(name) == (word == "ifdef");
        }
        let file = line.file;
        let raw: Vec<Tok> = lex(rest, rest_start).into_iter().map(|(k, r)| Tok::new(k, Span::new(file, r))).collect();
        // `defined NAME` and `defined(NAME)` are read before any macro is expanded.
        let mut tokens = Vec::new();
        let mut i = 0;
        while i < raw.len() {
            let t = raw[i];
            if t.kind != Kind::Ident || self.texts.tok_text(t) != "defined" {
                tokens.push(t);
                i += 1;
                continue;
            }
            let name = match (raw.get(i + 1), raw.get(i + 2), raw.get(i + 3)) {
                (Some(n), _, _) if n.kind == Kind::Ident => {
                    i += 2;
                    Some(*n)
                }
                (Some(o), Some(n), Some(c))
                    if o.kind == Kind::LParen && n.kind == Kind::Ident && c.kind == Kind::RParen =>
                {
                    i += 4;
                    Some(*n)
                }
                _ => None,
            };
            let Some(name) = name else {
                self.diagnostics.push(malformed(
                    t.span,
                    "expected a name after `defined`",
                    "write `defined NAME` or `defined(NAME)`",
                ));
                return false;
            };
            let value = if self.macros.contains_key(self.texts.tok_text(name)) { "1" } else { "0" };
            let made = self.texts.make(value.to_string());
            tokens.push(Tok { made, ..Tok::new(Kind::Number, t.span) });
        }
        let tokens = self.expand_list(tokens);
        match Expression::new(&tokens, self.texts).value() {
            Ok(value) => value != 0,
            Err(message) => {
                self.diagnostics.push(malformed(
                    line,
                    format!("the condition of `#{word}` {message}"),
                    "a condition is an integer constant expression, as in C",
                ));
                false
            }
        }
    }

    /// Expands `tok` if it names a macro it may invoke, reading a function-like macro's
    /// arguments from `source` and putting the expansion back in front of it.
    fn expand(&mut self, tok: Tok, source: &mut dyn Source) -> bool {
        let name = self.texts.tok_text(tok);
        let Some(m) = self.macros.get(name).cloned() else { return false };
        let name = name.to_string();
        let id = match self.names.get(&name) {
            Some(&id) => id,
            None => {
                let id = self.names.len() as u32 + 1;
                self.names.insert(name.clone(), id);
                id
            }
        };
        if self.hide_sets[tok.hide as usize].contains(&id) {
            return false;
        }
        if self.expansions.len() >= MAX_EXPANSIONS {
            if !self.exhausted {
                self.exhausted = true;
                self.diagnostics.push(malformed(
                    tok.span,
                    format!("more than {MAX_EXPANSIONS} macro expansions"),
                    "do the macros expand into ever more macros?",
                ));
            }
            return false;
        }
        let mut at = tok.span;
        let mut args: Vec<Vec<Tok>> = Vec::new();
        if let Some(params) = &m.params {
            if source.peek().is_none_or(|t| t.kind != Kind::LParen) {
                return false;
            }
            source.next();
            args.push(Vec::new());
            let mut depth = 0usize;
            let close = loop {
                let Some(t) = source.next() else { break None };
                match t.kind {
                    Kind::LParen => depth += 1,
                    Kind::RParen if depth == 0 => break Some(t),
                    Kind::RParen => depth -= 1,
                    Kind::Comma if depth == 0 && !(m.variadic && args.len() == params.len()) => {
                        args.push(Vec::new());
                        continue;
                    }
                    Kind::Hash => {
                        source.push_front(vec![t]);
                        break None;
                    }
                    _ => {}
                }
                args.last_mut().expect("never empty").push(t);
            };
            let Some(close) = close else {
                self.diagnostics.push(malformed(
                    tok.span,
                    format!("the arguments of `{name}` have no closing `)`"),
                    "close the macro's arguments before the end of the file or the next `#` line",
                ));
                return true;
            };
            if close.span.file == tok.span.file && close.expansion == tok.expansion {
                at = tok.span.to(close.span);
            }
            if params.is_empty() && args.len() == 1 && args[0].is_empty() {
                args.clear();
            }
            if m.variadic && args.len() + 1 == params.len() {
                args.push(Vec::new());
            }
            if args.len() != params.len() {
                self.diagnostics.push(malformed(
                    at,
                    format!("the macro `{name}` takes {} argument(s) but is given {}", params.len(), args.len()),
                    "give the macro as many arguments, separated by commas, as its `#define` has parameters",
                ));
                return true;
            }
        }
        self.expansions.push(Expansion { name, at, parent: tok.expansion });
        let expansion = self.expansions.len() as u32;
        let hide = self.join_one(tok.hide, id);
        let mut out: Vec<Tok> = Vec::new();
        let mut paste = None;
        for (n, piece) in m.body.iter().enumerate() {
            let pasted = paste.is_some() || matches!(m.body.get(n + 1), Some(Piece::Paste(_)));
            let chunk = match *piece {
                Piece::Tok(t) => vec![Tok { expansion, ..t }],
                Piece::Param(p) if pasted => args[p].clone(),
                Piece::Param(p) => self.expand_list(args[p].clone()),
                Piece::Stringise(p, span) => vec![self.stringise(&args[p], span, expansion)],
                Piece::Paste(span) => {
                    paste = Some(span);
                    continue;
                }
            };
            let mut chunk = chunk.into_iter();
            if let (Some(span), Some(left)) = (paste.take(), out.last().copied()) {
                if let Some(right) = chunk.next() {
                    out.pop();
                    let glued = self.paste(left, right, span, expansion);
                    out.extend(glued);
                }
            }
            out.extend(chunk);
        }
        for t in &mut out {
            t.hide = self.join(t.hide, hide);
        }
        source.push_front(out);
        true
    }

    /// The file an `#include` names through macros (`#include HEADER`): the line's tokens
    /// expanded, which must give one string (`"f.dl"`) or tokens from `<` to `>`, whose
    /// texts joined name the file, with `'"'` or `'<'` for how it is looked for.
    fn include_name(&mut self, rest: &str, rest_start: usize, file: FileId) -> (Option<String>, char) {
        let raw: Vec<Tok> = lex(rest, rest_start).into_iter().map(|(k, r)| Tok::new(k, Span::new(file, r))).collect();
        let expanded = self.expand_list(raw);
        let texts: Vec<&str> = expanded.iter().map(|t| self.texts.tok_text(*t)).collect();
        match texts.as_slice() {
            [one] if expanded[0].kind == Kind::Str => {
                let name = one.strip_prefix('"').and_then(|n| n.strip_suffix('"'));
                (name.map(str::to_string), '"')
            }
            ["<", inner @ .., ">"] if !inner.is_empty() => (Some(inner.concat()), '<'),
            _ => (None, '"'),
        }
    }

    /// The tokens of `tokens` with every macro expanded.
    fn expand_list(&mut self, mut tokens: Vec<Tok>) -> Vec<Tok> {
        tokens.reverse();
        let mut list = List(tokens);
        let mut out = Vec::new();
        while let Some(t) = list.next() {
            if t.kind != Kind::Ident || !self.expand(t, &mut list) {
                out.push(t);
            }
        }
        out
    }

    /// `#param`: the argument's tokens as a string, blanks between them where the source
    /// had some.
    fn stringise(&mut self, arg: &[Tok], span: Span, expansion: u32) -> Tok {
        let mut text = String::from("\"");
        for (n, t) in arg.iter().enumerate() {
            let adjacent = n == 0
                || (arg[n - 1].span.file == t.span.file
                    && arg[n - 1].span.end == t.span.start
                    && arg[n - 1].made == 0
                    && t.made == 0);
            if !adjacent {
                text.push(' ');
            }
            for c in self.texts.tok_text(*t).chars() {
                if c == '"' || c == '\\' {
                    text.push('\\');
                }
                text.push(c);
            }
        }
        text.push('"');
        let made = self.texts.make(text);
        Tok { made, expansion, ..Tok::new(Kind::Str, span) }
    }

    /// `left ## right`: one token of their texts together; both, reported, when that is
    /// not one token.
    fn paste(&mut self, left: Tok, right: Tok, span: Span, expansion: u32) -> Vec<Tok> {
        let text = format!("{}{}", self.texts.tok_text(left), self.texts.tok_text(right));
        let lexed = lex(&text, 0);
        if lexed.len() != 1 || lexed[0].1 != (0..text.len()) {
            self.diagnostics.push(malformed(
                span,
                format!(
                    "pasting `{}` and `{}` does not give one token",
                    self.texts.tok_text(left),
                    self.texts.tok_text(right)
                ),
                "`##` joins two pieces of one name or number",
            ));
            return vec![left, right];
        }
        let at = if left.span.file == right.span.file && left.expansion == right.expansion {
            left.span.to(right.span)
        } else {
            left.span
        };
        let made = self.texts.make(text);
        vec![Tok { made, hide: left.hide, expansion, ..Tok::new(lexed[0].0, at) }]
    }

    /// The hide set `set` with the name `id` added.
    fn join_one(&mut self, set: u32, id: u32) -> u32 {
        let key = (set, id | 1 << 31);
        if let Some(&joined) = self.joined.get(&key) {
            return joined;
        }
        let mut names = self.hide_sets[set as usize].clone();
        if let Err(at) = names.binary_search(&id) {
            names.insert(at, id);
        }
        self.hide_sets.push(names);
        let joined = self.hide_sets.len() as u32 - 1;
        self.joined.insert(key, joined);
        joined
    }

    /// The union of two hide sets.
    fn join(&mut self, a: u32, b: u32) -> u32 {
        if a == 0 || a == b {
            return b;
        }
        if b == 0 {
            return a;
        }
        if let Some(&set) = self.joined.get(&(a, b)) {
            return set;
        }
        let mut names = self.hide_sets[a as usize].clone();
        names.extend_from_slice(&self.hide_sets[b as usize]);
        names.sort_unstable();
        names.dedup();
        self.hide_sets.push(names);
        let set = self.hide_sets.len() as u32 - 1;
        self.joined.insert((a, b), set);
        set
    }
}

/// The first name of `text` (before a comment), if it starts with one.
fn first_name(text: &str) -> Option<&str> {
    let text = text.trim_start();
    let len = text.find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(text.len());
    let name = &text[..len];
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
}

/// An `#if` condition, its macros expanded, evaluated as C evaluates an integer constant
/// expression (64-bit, names left over are 0).
struct Expression {
    /// The operators and operands: `Ok(number)` or `Err(operator)`.
    items: Vec<Result<i64, &'static str>>,
    at: usize,
    /// Why the tokens are no condition, found while splitting them.
    error: Option<String>,
}

/// The operators of a condition, longest first.
const OPERATORS: &[&str] = &[
    "&&", "||", "==", "!=", "<=", ">=", "<<", ">>", "!", "~", "+", "-", "*", "/", "%", "<", ">", "&", "|", "^", "?",
    ":", "(", ")",
];

impl Expression {
    fn new(tokens: &[Tok], texts: &Texts) -> Expression {
        // The operators' characters, with where each token ends, so that `=` `=` next
        // to each other read as `==`.
        let mut chars = String::new();
        let mut items = Vec::new();
        let mut error = None;
        let mut last_end: Option<(FileId, u32)> = None;
        let flush = |chars: &mut String, items: &mut Vec<Result<i64, &'static str>>, error: &mut Option<String>| {
            let mut rest = chars.as_str();
            while !rest.is_empty() {
                match OPERATORS.iter().find(|op| rest.starts_with(**op)) {
                    Some(op) => {
                        items.push(Err(*op));
                        rest = &rest[op.len()..];
                    }
                    None => {
                        error.get_or_insert(format!("holds `{rest}`"));
                        break;
                    }
                }
            }
            chars.clear();
        };
        for t in tokens {
            let text = texts.tok_text(*t);
            let adjacent = last_end == Some((t.span.file, t.span.start)) && t.made == 0;
            match t.kind {
                Kind::Number | Kind::RadixNumber | Kind::Ident if !is_operator(text) => {
                    flush(&mut chars, &mut items, &mut error);
                    let value = match t.kind {
                        Kind::Ident => Some(0),
                        _ => number(text),
                    };
                    match value {
                        Some(v) => items.push(Ok(v)),
                        None => {
                            error.get_or_insert(format!("holds the number `{text}`, which is not one"));
                        }
                    }
                }
                Kind::Str | Kind::Float | Kind::Ipv4 | Kind::Directive | Kind::Hash | Kind::OpenComment => {
                    error.get_or_insert(format!("holds `{text}`"));
                }
                _ => {
                    if !adjacent {
                        flush(&mut chars, &mut items, &mut error);
                    }
                    chars.push_str(if t.kind == Kind::ColonDash { ":-" } else { text });
                }
            }
            last_end = Some((t.span.file, t.span.end));
        }
        flush(&mut chars, &mut items, &mut error);
        Expression { items, at: 0, error }
    }

    fn value(&mut self) -> Result<i64, String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if self.items.is_empty() {
            return Err("is empty".to_string());
        }
        let value = self.ternary(true)?;
        match self.items.get(self.at) {
            None => Ok(value),
            Some(Err(op)) => Err(format!("has `{op}` where it should end")),
            Some(Ok(n)) => Err(format!("has `{n}` where it should end")),
        }
    }

    fn eat(&mut self, op: &str) -> bool {
        let found = matches!(self.items.get(self.at), Some(Err(o)) if *o == op);
        self.at += usize::from(found);
        found
    }

    fn ternary(&mut self, live: bool) -> Result<i64, String> {
        let test = self.binary(0, live)?;
        if !self.eat("?") {
            return Ok(test);
        }
        let then = self.ternary(live && test != 0)?;
        if !self.eat(":") {
            return Err("has `?` without `:`".to_string());
        }
        let otherwise = self.ternary(live && test == 0)?;
        Ok(if test != 0 { then } else { otherwise })
    }

    /// Binary operators from precedence level `level` up, as in C.
    fn binary(&mut self, level: usize, live: bool) -> Result<i64, String> {
        const LEVELS: &[&[&str]] = &[
            &["||"],
            &["&&"],
            &["|"],
            &["^"],
            &["&"],
            &["==", "!="],
            &["<", "<=", ">", ">="],
            &["<<", ">>"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        let Some(ops) = LEVELS.get(level) else { return self.unary(live) };
        let mut left = self.binary(level + 1, live)?;
        loop {
            let Some(Err(op)) = self.items.get(self.at).copied() else { return Ok(left) };
            if !ops.contains(&op) {
                return Ok(left);
            }
            self.at += 1;
            let right_live = match op {
                "&&" => live && left != 0,
                "||" => live && left == 0,
                _ => live,
            };
            let right = self.binary(level + 1, right_live)?;
            left = match op {
                "||" => i64::from(left != 0 || right != 0),
                "&&" => i64::from(left != 0 && right != 0),
                "|" => left | right,
                "^" => left ^ right,
                "&" => left & right,
                "==" => i64::from(left == right),
                "!=" => i64::from(left != right),
                "<" => i64::from(left < right),
                "<=" => i64::from(left <= right),
                ">" => i64::from(left > right),
                ">=" => i64::from(left >= right),
                "<<" => left.wrapping_shl(right as u32),
                ">>" => left.wrapping_shr(right as u32),
                "+" => left.wrapping_add(right),
                "-" => left.wrapping_sub(right),
                "*" => left.wrapping_mul(right),
                _ if right == 0 && live => return Err("divides by zero".to_string()),
                _ if right == 0 => 0,
                "/" => left.wrapping_div(right),
                _ => left.wrapping_rem(right),
            };
        }
    }

    fn unary(&mut self, live: bool) -> Result<i64, String> {
        let item = self.items.get(self.at).copied();
        self.at += 1;
        match item {
            Some(Ok(n)) => Ok(n),
            Some(Err("!")) => Ok(i64::from(self.unary(live)? == 0)),
            Some(Err("~")) => Ok(!self.unary(live)?),
            Some(Err("-")) => Ok(self.unary(live)?.wrapping_neg()),
            Some(Err("+")) => self.unary(live),
            Some(Err("(")) => {
                let value = self.ternary(live)?;
                if self.eat(")") {
                    Ok(value)
                } else {
                    Err("has `(` without `)`".to_string())
                }
            }
            Some(Err(op)) => Err(format!("has `{op}` where a value should be")),
            None => Err("ends where a value should be".to_string()),
        }
    }
}

/// Whether a name the lexer reads is the operator `?`.
fn is_operator(text: &str) -> bool {
    text == "?"
}

/// A number of an `#if` condition: decimal, `0x`, `0b` or octal, with `u`/`l` suffixes.
fn number(text: &str) -> Option<i64> {
    let digits = text.trim_end_matches(['u', 'U', 'l', 'L']);
    let (digits, radix) = if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        (hex, 16)
    } else if let Some(bin) = digits.strip_prefix("0b").or_else(|| digits.strip_prefix("0B")) {
        (bin, 2)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (&digits[1..], 8)
    } else {
        (digits, 10)
    };
    u64::from_str_radix(digits, radix).ok().map(|n| n as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::souffle::{parse_program, NoIncludes};

    const FILE: FileId = FileId(0);

    /// The texts of the tokens `src` preprocesses to, one blank between two, and the
    /// reports.
    fn run(src: &str) -> (String, Vec<Diagnostic>) {
        let mut texts = Texts::new(vec![(FILE, src.to_string())]);
        let mut diagnostics = Vec::new();
        let tokens = preprocess(FILE, None, &mut texts, &mut NoIncludes, &mut diagnostics).tokens;
        let words: Vec<&str> = tokens.iter().map(|t| texts.tok_text(*t)).collect();
        (words.join(" "), diagnostics)
    }

    /// The tokens of a program that preprocesses without a report.
    fn expanded(src: &str) -> String {
        let (out, diagnostics) = run(src);
        assert!(diagnostics.is_empty(), "{src:?}: {diagnostics:#?}");
        out
    }

    /// The one report of `src`: its code and message.
    fn reported(src: &str) -> (&'static str, String) {
        let (_, diagnostics) = run(src);
        assert_eq!(diagnostics.len(), 1, "{src:?}: {diagnostics:#?}");
        (diagnostics[0].code.0, diagnostics[0].message.clone())
    }

    // The expected texts are what `gcc -x c -E -P` gives for the same lines.

    #[test]
    fn function_like_macros_take_their_arguments() {
        assert_eq!(expanded("#define F(a, b) a + b\nF((1,2), 3)"), "( 1 , 2 ) + 3");
        assert_eq!(expanded("#define E(x, y) e(x, y)\nr(x) :- E(x, 1)."), "r ( x ) :- e ( x , 1 ) .");
        assert_eq!(expanded("#define Z() zero\nZ() Z ( )"), "zero zero");
        // A function-like macro's name without `(` is a name.
        assert_eq!(expanded("#define F(a) a\nF + F"), "F + F");
    }

    #[test]
    fn a_macro_does_not_expand_inside_itself() {
        assert_eq!(expanded("#define A B\n#define B A\nA B"), "A B");
        assert_eq!(expanded("#define f(x) x f\nf(1)(2)"), "1 f ( 2 )");
        assert_eq!(expanded("#define G(x) G(x + 1)\nG(G(2))"), "G ( G ( 2 + 1 ) + 1 )");
    }

    #[test]
    fn arguments_are_expanded_first_and_the_result_rescanned() {
        assert_eq!(expanded("#define ID(x) x\n#define N 3\nID(N)"), "3");
        assert_eq!(expanded("#define N 3\n#define STR(x) #x\n#define XSTR(x) STR(x)\nXSTR(N) STR(N)"), "\"3\" \"N\"");
        assert_eq!(expanded("#define TWICE(f, x) f(f(x))\n#define INC(x) x + 1\nTWICE(INC, 0)"), "0 + 1 + 1");
        // A macro defined after another's definition, before its use, is expanded.
        assert_eq!(expanded("#define A B\n#define B 2\nA"), "2");
    }

    #[test]
    fn stringising_and_pasting() {
        assert_eq!(expanded("#define S(x) #x\nS(a  +  \"b\\\\\")"), r#""a + \"b\\\\\"""#);
        assert_eq!(expanded("#define CAT(a, b) a ## b\nCAT(x, 1) CAT(p, q) CAT(,y) CAT(x,)"), "x1 pq y x");
        // A pasted name is rescanned.
        assert_eq!(expanded("#define CAT(a, b) a##b\n#define xy 5\nCAT(x, y)"), "5");
        assert_eq!(expanded("#define REL(n) rel_ ## n\nREL(2)(x)"), "rel_2 ( x )");
        assert_eq!(
            reported("#define CAT(a, b) a ## b\nCAT(x, +)"),
            ("E0001", "pasting `x` and `+` does not give one token".to_string())
        );
        assert_eq!(reported("#define S(x) # y\nS(1)").0, "E0001");
        assert_eq!(reported("#define S(x) x ##\nS(1)").0, "E0001");
    }

    #[test]
    fn variadic_macros() {
        assert_eq!(expanded("#define V(a, ...) a: __VA_ARGS__\nV(1, 2, 3) V(1)"), "1 : 2 , 3 1 :");
    }

    #[test]
    fn the_wrong_number_of_arguments_is_one_report() {
        assert_eq!(
            reported("#define F(a, b) a + b\nr(x) :- e(F(1)).\n"),
            ("E0001", "the macro `F` takes 2 argument(s) but is given 1".to_string())
        );
        assert_eq!(
            reported("#define F(a) a\nF(1, 2)"),
            ("E0001", "the macro `F` takes 1 argument(s) but is given 2".to_string())
        );
        assert_eq!(reported("#define F(a) a\nF(1, 2").0, "E0001");
        // Soufflé stops when its preprocessor fails: nothing after the report.
        let (_, diagnostics) =
            parse_program("#define F(a) a\n.decl r(x:number)\nr(F(1, 2)) :- q(x).\n", FILE, &mut NoIncludes);
        assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    }

    #[test]
    fn undef_and_line_continuations() {
        assert_eq!(expanded("#define A 1\nA\n#undef A\nA"), "1 A");
        assert_eq!(expanded("#define LONG a \\\n  b\nLONG"), "a b");
        assert_eq!(expanded("#if 1 && \\\n 0\nno\n#else\nyes\n#endif"), "yes");
    }

    #[test]
    fn conditions_are_integer_constant_expressions() {
        let section = |condition: &str| {
            expanded(&format!("#define TWO 2\n#define F(x) x * 2\n#if {condition}\nyes\n#else\nno\n#endif"))
        };
        for condition in [
            "1",
            "TWO == 2",
            "(TWO + 3) * 4 == 20 && !defined X || 0",
            "defined TWO && defined(F)",
            "F(3) == 6",
            "UNDEFINED == 0",
            "-1 < 0",
            "0x10 == 16 && 010 == 8 && 1u",
            "1 << 4 == 16 && 7 % 4 == 3 && (6 & 3) == 2 && (5 ^ 1) == 4 && (4 | 1) == 5 && ~0 == -1",
            "TWO > 1 ? 1 : 0",
            "1 || 1 / 0",
            "RAM_DOMAIN_SIZE == 32",
        ] {
            assert_eq!(section(condition), "yes", "{condition}");
        }
        for condition in ["0", "TWO != 2", "defined X", "!TWO", "TWO >= 3 || 0", "1 ? 0 : 1", "0 && 1 / 0"] {
            assert_eq!(section(condition), "no", "{condition}");
        }
        assert_eq!(expanded("#if 0\na\n#elif 2 > 1\nb\n#elif 1\nc\n#else\nd\n#endif"), "b");
        assert_eq!(reported("#if 1 / 0\n#endif").1, "the condition of `#if` divides by zero");
        assert_eq!(reported("#if (1\n#endif").1, "the condition of `#if` has `(` without `)`");
        assert_eq!(reported("#if\n#endif").1, "the condition of `#if` is empty");
        assert_eq!(reported("#if 1\n#else\n#else\n#endif").1, "`#else` after `#else`");
    }

    #[test]
    fn an_unterminated_section_is_reported_once_at_its_file_end() {
        assert_eq!(
            reported("#if 1\na\n#ifdef B\n#endif\n"),
            ("E0001", "this conditional section has no `#endif`".to_string())
        );
    }

    #[test]
    fn warnings_markers_and_pragmas() {
        let (out, diagnostics) = run("#warning look here\na\n");
        assert_eq!(out, "a");
        assert_eq!(diagnostics[0].severity, diag::Severity::Warning);
        assert_eq!(diagnostics[0].code, Code::PREPROCESSOR_WARNING);
        assert_eq!(diagnostics[0].message, "`#warning look here`");
        // A `#warning` in a section not read says nothing.
        assert_eq!(expanded("#if 0\n#warning no\n#endif\na"), "a");
        assert_eq!(expanded("#line 40 \"z.dl\"\n# 1 \"a.dl\" 2\n#pragma omp\n#\na"), "a");
        assert_eq!(reported("#frobnicate\n").0, "E0001");
        assert_eq!(reported("#error stop\n"), ("E0001", "`#error stop`".to_string()));
    }

    #[test]
    fn command_line_macros_are_defined_first() {
        let prelude = crate::souffle::command_line_macros(&["N=5 BB".to_string(), "F(x)=x+1".to_string()]).unwrap();
        assert_eq!(prelude, "#define N 5\n#define BB 1\n#define F(x) x+1\n");
        let mut texts = Texts::new(vec![(FILE, "N BB F(2)".to_string()), (FileId(9), prelude)]);
        let mut diagnostics = Vec::new();
        let tokens = preprocess(FILE, Some(FileId(9)), &mut texts, &mut NoIncludes, &mut diagnostics).tokens;
        let words: Vec<&str> = tokens.iter().map(|t| texts.tok_text(*t)).collect();
        assert_eq!(words, ["5", "1", "2", "+", "1"]);
    }

    #[test]
    fn a_report_inside_an_expansion_points_at_the_definition_and_the_use() {
        let src = "#define EDGE(x) edge(x, y)\n.decl r(x:number)\nr(x) :- EDGE(x).\n";
        let (_, diagnostics) = parse_program(src, FILE, &mut NoIncludes);
        assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
        let d = &diagnostics[0];
        assert_eq!(d.code, Code::UNDECLARED_RELATION);
        assert_eq!(&src[d.primary_span().unwrap().range()], "edge");
        let uses: Vec<(&str, &str)> =
            d.labels.iter().filter(|l| !l.primary).map(|l| (&src[l.span.range()], l.message.as_str())).collect();
        assert_eq!(uses, [("EDGE(x)", "in this expansion of `EDGE`")]);
        // Through two macros: both uses are marked.
        let src = "#define INNER(x) edge(x, y)\n#define OUTER(x) INNER(x)\n.decl r(x:number)\nr(x) :- OUTER(x).\n";
        let (_, diagnostics) = parse_program(src, FILE, &mut NoIncludes);
        let uses: Vec<&str> =
            diagnostics[0].labels.iter().filter(|l| !l.primary).map(|l| &src[l.span.range()]).collect();
        assert_eq!(uses, ["INNER(x)", "OUTER(x)"]);
    }

    #[test]
    fn includes_say_how_they_name_their_file_and_a_failed_one_ends_the_reading() {
        struct Files(Vec<(String, bool)>);
        impl Includes for Files {
            fn include(&mut self, _from: FileId, path: &str, angled: bool) -> Result<(FileId, String), String> {
                self.0.push((path.to_string(), angled));
                match path {
                    "a.dl" => Ok((FileId(1), "#ifndef A\n#define A\nfrom_a\n#endif\n".to_string())),
                    _ => Err("it is in none of `.`".to_string()),
                }
            }
        }
        let mut files = Files(Vec::new());
        let src = "#include \"a.dl\"\n#include <a.dl> // again\nA\n#include <nope.dl>\nafter\n#error not reached\n";
        let mut texts = Texts::new(vec![(FILE, src.to_string())]);
        let mut diagnostics = Vec::new();
        let tokens = preprocess(FILE, None, &mut texts, &mut files, &mut diagnostics).tokens;
        let words: Vec<&str> = tokens.iter().map(|t| texts.tok_text(*t)).collect();
        assert_eq!(words, ["from_a"]);
        let asked: Vec<(&str, bool)> = files.0.iter().map(|(p, a)| (p.as_str(), *a)).collect();
        assert_eq!(asked, [("a.dl", false), ("a.dl", true), ("nope.dl", true)]);
        assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
        assert_eq!(diagnostics[0].message, "cannot include `nope.dl`: it is in none of `.`");
    }

    #[test]
    fn an_include_may_name_its_file_through_macros() {
        struct Files(Vec<(String, bool)>);
        impl Includes for Files {
            fn include(&mut self, _from: FileId, path: &str, angled: bool) -> Result<(FileId, String), String> {
                self.0.push((path.to_string(), angled));
                Ok((FileId(1 + self.0.len() as u32), format!("from_{}\n", self.0.len())))
            }
        }
        let mut files = Files(Vec::new());
        let src = "#define HEADER \"arch/x64.dl\"\n#define ANGLED <sub/b.dl>\n#define ARCH(f) HEADER\n\
                   #include HEADER\n#include ANGLED // a comment\n#include ARCH(1)\n#include NOT_DEFINED\nafter\n";
        let mut texts = Texts::new(vec![(FILE, src.to_string())]);
        let mut diagnostics = Vec::new();
        let tokens = preprocess(FILE, None, &mut texts, &mut files, &mut diagnostics).tokens;
        let asked: Vec<(&str, bool)> = files.0.iter().map(|(p, a)| (p.as_str(), *a)).collect();
        assert_eq!(asked, [("arch/x64.dl", false), ("sub/b.dl", true), ("arch/x64.dl", false)]);
        let words: Vec<&str> = tokens.iter().map(|t| texts.tok_text(*t)).collect();
        assert_eq!(words, ["from_1", "from_2", "from_3", "after"]);
        // A name that expands to no file name is an error where the include is.
        assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
        assert_eq!(diagnostics[0].code, Code::PARSE);
        assert_eq!(diagnostics[0].message, "expected a file name in quotes or `<>` after `#include`");
    }
}
