//! The preprocessor, run before the parser: lexes each file, splices in the tokens of the
//! files `#include` and `.include` name, expands `#define`s, reads `#ifdef`/`#if`
//! sections and `.once`, and reports every other `#` line as E0018.

use super::lexer::{lex, Kind};
use super::{unsupported, Includes, MAX_INCLUDE_DEPTH};
use crate::lexer::unescape;
use diag::{Code, Diagnostic, FileId, Span};
use std::collections::{HashMap, HashSet};

/// A token: its kind, and where it is (its text is the source under the span).
#[derive(Clone, Copy, Debug)]
pub(super) struct Tok {
    pub kind: Kind,
    pub span: Span,
}

/// The texts of the files read, for the text of a token.
pub(super) struct Texts {
    pub files: Vec<(FileId, String)>,
}

impl Texts {
    pub fn text(&self, span: Span) -> &str {
        self.files.iter().find(|(f, _)| *f == span.file).map_or("", |(_, t)| t.get(span.range()).unwrap_or(""))
    }

    pub fn file_text(&self, file: FileId) -> &str {
        self.files.iter().find(|(f, _)| *f == file).map_or("", |(_, t)| t)
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
        .with_help("a relative path is relative to the including file's directory")
}

/// Runs the preprocessor: `#include "file"` splices the tokens of that file in (their
/// spans point into it), `#define NAME tokens` replaces later uses of the name; any other
/// `#` line is E0018. Included files are processed with an explicit stack.
pub(super) fn preprocess(
    file: FileId,
    texts: &mut Texts,
    includes: &mut dyn Includes,
    diagnostics: &mut Vec<Diagnostic>,
    skipped_macros: &mut HashSet<String>,
) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut defines: HashMap<String, Vec<Tok>> = HashMap::new();
    let lexed = |file: FileId, texts: &Texts| -> Vec<Tok> {
        lex(texts.file_text(file), 0)
            .into_iter()
            .map(|(kind, range)| Tok { kind, span: Span::new(file, range) })
            .collect()
    };
    // Each entry: a file's tokens, reversed so that `pop` yields them in order.
    let mut stack: Vec<Vec<Tok>> = vec![lexed(file, texts).into_iter().rev().collect()];
    // The files that have passed a `.once`.
    let mut once: HashSet<String> = HashSet::new();
    // The open conditional sections, innermost last.
    let mut conditions: Vec<Condition> = Vec::new();
    while let Some(top) = stack.last_mut() {
        let Some(tok) = top.pop() else {
            stack.pop();
            continue;
        };
        // Conditional sections, as the C preprocessor Soufflé runs reads them: the tokens
        // of a section whose condition fails are dropped.
        if tok.kind == Kind::Hash {
            let (word, rest) = hash_word(texts.text(tok.span));
            if matches!(word, "ifdef" | "ifndef" | "if" | "elif" | "else" | "endif") {
                let is_defined = |name: &str| defines.contains_key(name) || skipped_macros.contains(name);
                let enclosing = |conditions: &[Condition]| conditions.iter().all(|c| c.active);
                let mut test = |word: &str| match condition(word, rest, &is_defined, &defines, texts) {
                    Some(value) => value,
                    None => {
                        diagnostics.push(unsupported(tok.span, &format!("the condition of `#{word} {}`", rest.trim())));
                        false
                    }
                };
                match word {
                    "ifdef" | "ifndef" | "if" => {
                        let active = enclosing(&conditions) && test(word);
                        conditions.push(Condition { active, taken: active, span: tok.span });
                    }
                    _ if conditions.is_empty() => diagnostics.push(
                        Diagnostic::error(Code::PARSE, format!("`#{word}` without an `#if`"))
                            .with_primary(tok.span, "here")
                            .with_help("open the section with `#ifdef NAME`, `#ifndef NAME` or `#if`"),
                    ),
                    _ => {
                        let outer = enclosing(&conditions[..conditions.len() - 1]);
                        let last = conditions.len() - 1;
                        match word {
                            "elif" => {
                                let active = outer && !conditions[last].taken && test("if");
                                conditions[last].active = active;
                                conditions[last].taken |= active;
                            }
                            "else" => {
                                conditions[last].active = outer && !conditions[last].taken;
                                conditions[last].taken = true;
                            }
                            _ => {
                                conditions.pop();
                            }
                        }
                    }
                }
                continue;
            }
        }
        if !conditions.iter().all(|c| c.active) {
            continue;
        }
        match tok.kind {
            // As in Soufflé 2.5: `.once` marks its file; reached again, in a file included
            // again, it skips the rest of that file (what precedes it is read each time).
            Kind::Directive if texts.text(tok.span) == ".once" => {
                if !once.insert(includes.identity(tok.span.file)) {
                    stack.pop();
                }
            }
            Kind::Directive if texts.text(tok.span) == ".include" => {
                // What stands where the file name should be is dropped with the report (a
                // directive is kept), so that the parser does not report it again.
                let next = top.last().copied();
                if next.is_some_and(|t| t.kind != Kind::Directive) {
                    top.pop();
                }
                let Some(name) = next.filter(|t| t.kind == Kind::Str) else {
                    diagnostics.push(
                        Diagnostic::error(Code::PARSE, "expected a quoted file name after `.include`")
                            .with_primary(tok.span, "here")
                            .with_help("write `.include \"other.dl\"`"),
                    );
                    continue;
                };
                let path = unescape(texts.text(name.span));
                let span = tok.span.to(name.span);
                if stack.len() > MAX_INCLUDE_DEPTH {
                    diagnostics.push(too_deep(span));
                    continue;
                }
                match includes.include(tok.span.file, &path) {
                    Ok((id, text)) => {
                        texts.files.push((id, text));
                        let tokens = lexed(id, texts);
                        stack.push(tokens.into_iter().rev().collect());
                    }
                    Err(e) => diagnostics.push(cannot_include(&path, &e, span)),
                }
            }
            Kind::Hash => {
                let line = texts.text(tok.span).to_string();
                let body = line[1..].trim_start();
                let word_len = body.find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(body.len());
                let (word, rest) = body.split_at(word_len);
                // Where `rest` starts in the file.
                let rest_start = tok.span.start as usize + line.len() - rest.len();
                match word {
                    "include" => {
                        // The name in quotes, then nothing but a comment.
                        let quoted = rest.trim().strip_prefix('"').and_then(|p| p.split_once('"'));
                        let path = quoted.and_then(|(path, after)| {
                            let after = after.trim_start();
                            (after.is_empty() || after.starts_with("//") || after.starts_with("/*")).then_some(path)
                        });
                        let Some(path) = path else {
                            diagnostics.push(
                                Diagnostic::error(Code::PARSE, "expected a quoted file name after `#include`")
                                    .with_primary(tok.span, "here")
                                    .with_help("write `#include \"other.dl\"`"),
                            );
                            continue;
                        };
                        if stack.len() > MAX_INCLUDE_DEPTH {
                            diagnostics.push(too_deep(tok.span));
                            continue;
                        }
                        match includes.include(tok.span.file, path) {
                            Ok((id, text)) => {
                                texts.files.push((id, text));
                                let tokens = lexed(id, texts);
                                stack.push(tokens.into_iter().rev().collect());
                            }
                            Err(e) => diagnostics.push(cannot_include(path, &e, tok.span)),
                        }
                    }
                    "define" => {
                        let rest_trimmed = rest.trim_start();
                        let name_start = rest_start + rest.len() - rest_trimmed.len();
                        let name_len = rest_trimmed
                            .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                            .unwrap_or(rest_trimmed.len());
                        let name = &rest_trimmed[..name_len];
                        if name.is_empty() {
                            diagnostics.push(
                                Diagnostic::error(Code::PARSE, "expected a name after `#define`")
                                    .with_primary(tok.span, "here")
                                    .with_help("write `#define NAME value`"),
                            );
                            continue;
                        }
                        if rest_trimmed[name_len..].starts_with('(') {
                            diagnostics.push(unsupported(tok.span, "a function-like macro (`#define NAME(...)`)"));
                            skipped_macros.insert(name.to_string());
                            continue;
                        }
                        let value_start = name_start + name_len;
                        let value = &texts.file_text(tok.span.file)[value_start..tok.span.end as usize];
                        // A value naming an earlier macro is expanded now, so that later
                        // uses need one lookup and a macro can never expand itself.
                        let mut tokens = Vec::new();
                        for (kind, range) in lex(value, value_start) {
                            let t = Tok { kind, span: Span::new(tok.span.file, range) };
                            match defines.get(texts.text(t.span)).filter(|_| t.kind == Kind::Ident) {
                                Some(expansion) => tokens.extend(expansion.iter().copied()),
                                None => tokens.push(t),
                            }
                        }
                        defines.insert(name.to_string(), tokens);
                    }
                    "error" => diagnostics.push(
                        Diagnostic::error(Code::PARSE, format!("`#error{}`", rest.trim_end()))
                            .with_primary(tok.span, "the program stops here")
                            .with_help("a `#error` in a section that is read ends the program; define the macros its conditions test"),
                    ),
                    "undef" => {
                        defines.remove(rest.trim());
                    }
                    _ => {
                        let directive = if word.is_empty() { "#".to_string() } else { format!("#{word}") };
                        diagnostics.push(
                            unsupported(tok.span, &format!("the preprocessor directive `{directive}`"))
                                .with_help("dlc's preprocessor reads `#include \"file\"` and `#define NAME value`"),
                        );
                    }
                }
            }
            Kind::Ident if !defines.is_empty() => match defines.get(texts.text(tok.span)) {
                Some(expansion) => out.extend(expansion.iter().copied()),
                None => out.push(tok),
            },
            _ => out.push(tok),
        }
    }
    for open in conditions {
        diagnostics.push(
            Diagnostic::error(Code::PARSE, "this conditional section has no `#endif`")
                .with_primary(open.span, "opened here")
                .with_help("close it with `#endif`"),
        );
    }
    out
}

/// An open `#if` section.
struct Condition {
    /// Whether its tokens are read now.
    active: bool,
    /// Whether one of its branches has been read (so `#elif` and `#else` are not).
    taken: bool,
    span: Span,
}

/// The directive word of a `#` line and the text after it, without a `//` comment.
fn hash_word(line: &str) -> (&str, &str) {
    let body = line[1..].trim_start();
    let word_len = body.find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(body.len());
    let (word, rest) = body.split_at(word_len);
    (word, rest.split("//").next().unwrap_or(""))
}

/// The value of the condition of `#ifdef NAME`, `#ifndef NAME` or `#if` (`#elif`): for
/// `#if`, terms `defined(NAME)`, `defined NAME`, a number or a macro of a number, each
/// possibly negated with `!`, joined by `&&` and `||` (`&&` first); none for anything else.
fn condition(
    word: &str,
    rest: &str,
    is_defined: &dyn Fn(&str) -> bool,
    defines: &HashMap<String, Vec<Tok>>,
    texts: &Texts,
) -> Option<bool> {
    fn name(text: &str) -> Option<&str> {
        let text = text.trim();
        (!text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then_some(text)
    }
    match word {
        "ifdef" => return Some(is_defined(name(rest)?)),
        "ifndef" => return Some(!is_defined(name(rest)?)),
        _ => {}
    }
    let term = |text: &str| -> Option<bool> {
        let mut text = text.trim();
        let mut negated = false;
        while let Some(after) = text.strip_prefix('!') {
            negated = !negated;
            text = after.trim_start();
        }
        let value = if let Some(after) = text.strip_prefix("defined") {
            let after = after.trim();
            let inner = after.strip_prefix('(').and_then(|a| a.strip_suffix(')')).unwrap_or(after);
            is_defined(name(inner)?)
        } else if let Ok(n) = text.parse::<i64>() {
            n != 0
        } else {
            // A macro of one number is that number; any other name is 0, as in C.
            match defines.get(name(text)?).map(Vec::as_slice) {
                Some([one]) => texts.text(one.span).parse::<i64>().ok()? != 0,
                Some(_) => return None,
                None => false,
            }
        };
        Some(value != negated)
    };
    let mut any = false;
    for disjunct in rest.split("||") {
        let mut all = true;
        for conjunct in disjunct.split("&&") {
            all &= term(conjunct)?;
        }
        any |= all;
    }
    Some(any)
}
