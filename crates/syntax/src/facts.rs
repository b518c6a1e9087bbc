//! Input that changes the EDB: facts files (ground atoms or delimited fields), update
//! batches and single update atoms. All atom forms go through the program's atom parser,
//! except that a facts line of plain constants `E(a,1).` is read by a recogniser that
//! accepts only what that parser reads the same way (see [`simple_atom`]).

use crate::ast;
use crate::lexer::{lex_values, Spanned, Token};
use crate::lower::{ground_values, reserved_name, reserved_names};
use crate::parser::{fact_line, run, update_line, Sign};
use diag::{Code, Diagnostic, FileId, Span};
use ir::{Fact, IrError, PredId, PredKind, PredName, Program, ValueType};

/// One batch of EDB changes, applied together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpdateBatch {
    /// The changes in the order of their lines: a later change of a fact overrides an
    /// earlier one, as if the lines were applied one by one.
    pub changes: Vec<(Sign, Fact)>,
    /// From the first to the last line of the batch.
    pub span: Span,
}

impl UpdateBatch {
    /// The facts of the changes with this sign, in line order.
    pub fn facts(&self, sign: Sign) -> Vec<Fact> {
        self.changes.iter().filter(|(s, _)| *s == sign).map(|(_, f)| f.clone()).collect()
    }
}

/// The longest line a facts or update file may have: 1 MiB, far more than any tuple
/// needs. A longer line is reported instead of read, and a reader of a stream stops at
/// it, so that a file without newlines (`/dev/zero`) cannot make dlc grow without bound.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The report of a line longer than [`MAX_LINE_BYTES`] at byte `start` of `file`, as a
/// `code` error (E0013 in facts files, E0014 in update files). The span is empty: the
/// line itself is too long to show.
pub fn line_too_long(file: FileId, start: usize, code: Code) -> Diagnostic {
    Diagnostic::error(code, format!("this line is longer than {MAX_LINE_BYTES} bytes"))
        .with_primary(Span::new(file, start..start), "a line longer than 1 MiB starts here")
        .with_help("each line holds one short tuple or update; is this the right file?")
}

/// The lines of a source with their byte offsets, without the `\n` (and without a `\r`
/// before it, so that CRLF files read the same). A UTF-8 byte-order mark at the start is
/// not part of the first line (offsets still count it, so spans index `src`).
fn lines(src: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = crate::bom_len(src);
    src[offset..].split('\n').map(move |line| {
        let start = offset;
        offset += line.len() + 1;
        (start, line.strip_suffix('\r').unwrap_or(line))
    })
}

/// Splits a line at `separator` into `fields`, as `line.split(separator)` does, except
/// that a field written in double quotes (`"a,b"`, with `""` for a quote inside) is one
/// field whatever it holds; its quotes stay in place for [`unquote`]. An ASCII separator
/// (all that facts files use) is found by comparing bytes, which for the short fields of
/// a facts file is much faster than the general searcher of `str::split`.
fn split_fields<'a>(line: &'a str, separator: char, fields: &mut Vec<&'a str>) {
    if line.contains('"') {
        split_quoted_fields(line, separator, fields);
        return;
    }
    if !separator.is_ascii() {
        fields.extend(line.split(separator));
        return;
    }
    let separator = separator as u8;
    let mut start = 0;
    for (i, &byte) in line.as_bytes().iter().enumerate() {
        if byte == separator {
            // An ASCII byte is never inside a multi-byte character, so this is a boundary.
            fields.push(&line[start..i]);
            start = i + 1;
        }
    }
    fields.push(&line[start..]);
}

/// [`split_fields`] of a line with a double quote. A field that starts with `"` and has
/// its closing quote right before a separator or the end of the line is quoted; any other
/// field (`a"b`, or a quote that is never closed) is taken up to the next separator.
fn split_quoted_fields<'a>(line: &'a str, separator: char, fields: &mut Vec<&'a str>) {
    let mut rest = line;
    loop {
        if let Some(end) = quoted_field_len(rest) {
            match rest[end..].chars().next() {
                None => {
                    fields.push(rest);
                    return;
                }
                Some(c) if c == separator => {
                    fields.push(&rest[..end]);
                    rest = &rest[end + c.len_utf8()..];
                    continue;
                }
                Some(_) => {}
            }
        }
        match rest.find(separator) {
            Some(at) => {
                fields.push(&rest[..at]);
                rest = &rest[at + separator.len_utf8()..];
            }
            None => {
                fields.push(rest);
                return;
            }
        }
    }
}

/// The length of the quoted field `"…"` that `text` starts with (`""` inside being one
/// quote), if it starts with one.
fn quoted_field_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.first() != Some(&b'"') {
        return None;
    }
    let mut i = 1;
    while i < bytes.len() {
        if bytes[i] == b'"' {
            if bytes.get(i + 1) == Some(&b'"') {
                i += 2;
                continue;
            }
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

/// The value of a field: a quoted field's text between its quotes with `""` read as `"`
/// (in `scratch` when it has one), any other field itself.
fn unquote<'a>(field: &'a str, scratch: &'a mut String) -> &'a str {
    if quoted_field_len(field) != Some(field.len()) {
        return field;
    }
    let inner = &field[1..field.len() - 1];
    if !inner.contains('"') {
        return inner;
    }
    scratch.clear();
    scratch.push_str(&inner.replace("\"\"", "\""));
    scratch
}

/// Whether a field holding `value` must be written in quotes for [`split_fields`] to
/// read it back as that value: it holds the separator or starts with a quote; or, as
/// the only field of a line, it would read as a blank line or as the empty tuple `()`.
/// (A value with a line break cannot be written as one line.)
fn needs_quotes(value: &str, separator: char, only_field: bool) -> bool {
    value.contains(separator) || value.starts_with('"') || (only_field && (value.trim().is_empty() || value == "()"))
}

/// `value` as a field that a delimited reader reads back as `value`: in quotes, with its
/// quotes doubled, when it needs them (see `needs_quotes`).
pub fn quote_field(value: &str, separator: char, only_field: bool) -> std::borrow::Cow<'_, str> {
    if needs_quotes(value, separator, only_field) {
        format!("\"{}\"", value.replace('"', "\"\"")).into()
    } else {
        value.into()
    }
}

/// The separator of a `.csv` facts file: a tab when its first line with content holds a
/// tab outside quotes, or when its predicate has one column (`arity`, if known), as
/// Soufflé and dlc's `-D` write `.csv` files; a comma otherwise.
pub fn csv_separator(src: &str, arity: Option<usize>) -> char {
    if arity == Some(1) {
        return '\t';
    }
    let Some((_, first)) = lines(src).find(|(_, l)| !l.trim().is_empty()) else { return ',' };
    let mut quoted = false;
    for byte in first.bytes() {
        match byte {
            b'"' => quoted = !quoted,
            b'\t' if !quoted => return '\t',
            _ => {}
        }
    }
    ','
}

/// Lexes one line; spans are made relative to the whole file.
fn lex_line(line: &str, offset: usize) -> Vec<Spanned<'_>> {
    lex_values(line).into_iter().map(|(t, s)| (t, (s.start + offset..s.end + offset).into())).collect()
}

/// Turns a parsed ground atom into an input fact. New predicates are declared EDB;
/// a fact for an IDB predicate is reported with `idb_code` (E0005 for facts, E0015 for
/// updates), a wrong argument count with E0004, a variable with E0011.
fn input_fact(program: &mut Program, atom: &ast::Atom, idb_code: Code) -> Result<Fact, Vec<Diagnostic>> {
    let errors = reserved_names(atom);
    if !errors.is_empty() {
        return Err(errors);
    }
    let pred = input_pred(program, &atom.pred.text, atom.args.len(), atom.span, idb_code).map_err(|e| vec![e])?;
    let values = ground_values(program, pred, atom)?;
    Ok(Fact { pred, values, span: atom.span })
}

/// The predicate of an input fact named `name` with `arity` values, whose values are
/// interned already: declared EDB if new, E0005/E0015 (`idb_code`) if rules define it,
/// E0004 if its arity differs. Shared by [`input_fact`] and the fast path of
/// [`read_fact_atoms`], so that both resolve and report alike.
fn input_pred(
    program: &mut Program,
    name: &str,
    arity: usize,
    span: Span,
    idb_code: Code,
) -> Result<PredId, Diagnostic> {
    let pred = match program.lookup_source(name) {
        Some(pred) => pred,
        None => {
            let name = PredName::Source(program.symbols.intern(name));
            program.declare_pred(name, arity, PredKind::Edb, span)
        }
    };
    if program.pred(pred).kind == PredKind::Idb {
        return Err(idb_fact(program, pred, span, idb_code));
    }
    if program.pred(pred).arity != arity {
        return Err(IrError::ArityMismatch { pred, found: arity, span }.to_diagnostic(program));
    }
    Ok(pred)
}

/// The report for input facts of a predicate that rules define.
fn idb_fact(program: &Program, pred: PredId, span: Span, code: Code) -> Diagnostic {
    let head = program.rules_for(pred).next().map_or(program.pred(pred).span, |(_, rule)| rule.head.span);
    if code == Code::EDB_HEADS_RULE {
        return IrError::EdbHeadsRule { pred, fact: span, head }.to_diagnostic(program);
    }
    let name = program.pred_name(pred);
    let report = Diagnostic::error(code, format!("`{name}` is derived by rules and cannot be updated directly"))
        .with_primary(span, "update of a derived predicate")
        .with_secondary(head, "defined by this rule");
    // A Soufflé `.input` relation that rules also derive loads its facts into a relation
    // `r_input` of its own (see `souffle::check`); that is the one an update changes.
    let loaded = format!("{name}_input");
    match program.lookup_source(&loaded) {
        Some(input)
            if program.pred(input).kind == PredKind::Edb && program.pred(input).arity == program.pred(pred).arity =>
        {
            report.with_help(format!(
                "the facts `{name}` loads as an `.input` are the relation `{loaded}`: update `{loaded}(...)`"
            ))
        }
        _ => report,
    }
}

/// Reads a facts file of ground atoms `E(a,b).`, one per line; `%`/`//` comments and
/// blank lines are allowed.
pub fn parse_fact_atoms(src: &str, file: FileId, program: &mut Program) -> (Vec<Fact>, Vec<Diagnostic>) {
    let mut facts = Vec::new();
    let diagnostics = read_fact_atoms(src, file, program, &mut facts);
    (facts, diagnostics)
}

/// What the facts readers hand each fact to, in file order, as soon as it is read: a
/// caller that stores facts its own way (dlc keeps them flat, per predicate) need not
/// build a [`Fact`] with a `Vec` of its own for each of millions of lines.
pub trait FactSink {
    /// `values` as tuples hold them (see [`ir::Value::raw`]).
    fn fact(&mut self, pred: PredId, values: &[u32], span: Span);

    /// Told before the facts of a file arrive that at most `tuples` facts of `pred`, of
    /// `arity` values each, follow (one per line; blank and bad lines make fewer), so that
    /// a sink can size its buffer once instead of growing it through every doubling.
    fn reserve(&mut self, _pred: PredId, _tuples: usize, _arity: usize) {}
}

/// Collects whole facts, as [`parse_fact_atoms`] and [`parse_delimited_facts`] return them.
impl FactSink for Vec<Fact> {
    fn fact(&mut self, pred: PredId, values: &[u32], span: Span) {
        self.push(Fact { pred, values: values.to_vec(), span });
    }
}

/// [`parse_fact_atoms`], handing each fact to `sink` instead of returning them.
pub fn read_fact_atoms(src: &str, file: FileId, program: &mut Program, sink: &mut dyn FactSink) -> Vec<Diagnostic> {
    read_atoms(src, file, program, sink, true)
}

/// [`read_fact_atoms`]; with `fast_path` off every line goes through the lexer and the
/// parser, which the tests use as the reference the fast path must agree with.
fn read_atoms(
    src: &str,
    file: FileId,
    program: &mut Program,
    sink: &mut dyn FactSink,
    fast_path: bool,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    // Reused from line to line, as in `read_delimited_facts`.
    let mut args: Vec<&str> = Vec::new();
    let mut values: Vec<u32> = Vec::new();
    for (start, line) in lines(src) {
        if line.len() > MAX_LINE_BYTES {
            diagnostics.push(line_too_long(file, start, Code::BAD_FACTS_LINE));
            continue;
        }
        args.clear();
        if let Some(simple) = fast_path.then(|| simple_atom(line, &mut args)).flatten() {
            let span = Span::new(file, start + simple.span.start..start + simple.span.end);
            let pred = match input_pred(program, simple.pred, args.len(), span, Code::EDB_HEADS_RULE) {
                Ok(pred) => pred,
                Err(error) => {
                    diagnostics.push(error);
                    continue;
                }
            };
            // A field that is no value of its column goes the full path, which reports it
            // at its own span.
            values.clear();
            for (i, text) in args.iter().enumerate() {
                match program.preds[pred.index()].types[i] {
                    ValueType::Symbol => values.push(program.consts.intern(text).0),
                    ty => match ty.number(text) {
                        Some(raw) => values.push(raw),
                        None => break,
                    },
                }
            }
            if values.len() == args.len() {
                sink.fact(pred, &values, span);
                continue;
            }
        }
        let tokens = lex_line(line, start);
        if tokens.is_empty() {
            continue;
        }
        let (atom, errors) = run(fact_line(file), &tokens, start + line.len(), file, Code::BAD_FACTS_LINE);
        diagnostics.extend(errors);
        if let Some(atom) = atom {
            match input_fact(program, &atom, Code::EDB_HEADS_RULE) {
                Ok(fact) => sink.fact(fact.pred, &fact.values, fact.span),
                Err(errors) => diagnostics.extend(errors),
            }
        }
    }
    diagnostics
}

/// A line that [`simple_atom`] recognised: the predicate's text and the atom's byte range
/// within the line (from the name to the `)`, as the parser spans an atom).
#[derive(Debug, PartialEq, Eq)]
struct SimpleAtom<'a> {
    pred: &'a str,
    span: std::ops::Range<usize>,
}

/// The lexer's whitespace (`[ \t\r\f]`, see [`Token`]); comments are not skipped here, so
/// a line with one goes through the full path.
fn is_blank(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\x0c')
}

/// The lexer's identifier continuation `[A-Za-z0-9_]`.
fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// Recognises the common shape of a facts line without the lexer and the parser, which
/// dominate loading a large file: `Pred(c1, ..., cn)` with an optional final `.`, blanks
/// between any of these tokens, and each `ci` a lower-case identifier or an integer
/// `-?[0-9]+` (its text kept verbatim, as the lexer keeps `007` and `-1`). The argument
/// texts are pushed to `args`.
///
/// Every token is scanned to its longest match over the lexer's own character classes
/// and must be followed by a blank or by the one punctuation byte the shape allows next,
/// so each token is the one logos would produce, and the tokens are a successful
/// `fact_line` parse with only constants. Anything else (`None`: strings, comments,
/// variables, `@`, bare names, several atoms, non-ASCII, any error) is left to the full
/// path, so nothing but plain facts has to be reproduced here.
fn simple_atom<'a>(line: &'a str, args: &mut Vec<&'a str>) -> Option<SimpleAtom<'a>> {
    let bytes = line.as_bytes();
    let at = |i: usize| bytes.get(i).copied();
    let skip_blanks = |mut i: usize| {
        while at(i).is_some_and(is_blank) {
            i += 1;
        }
        i
    };
    let skip_name = |mut i: usize| {
        while at(i).is_some_and(is_name_byte) {
            i += 1;
        }
        i
    };

    let name_start = skip_blanks(0);
    if !at(name_start)?.is_ascii_alphabetic() {
        return None;
    }
    let name_end = skip_name(name_start + 1);
    let mut i = skip_blanks(name_end);
    if at(i)? != b'(' {
        return None;
    }
    i = skip_blanks(i + 1);
    if at(i)? != b')' {
        loop {
            let arg_start = i;
            match at(i)? {
                b'a'..=b'z' => i = skip_name(i + 1),
                b'-' | b'0'..=b'9' => {
                    i += usize::from(at(i)? == b'-');
                    let digits = i;
                    while at(i).is_some_and(|b| b.is_ascii_digit()) {
                        i += 1;
                    }
                    // A lone `-` is the minus token, not an integer.
                    if i == digits {
                        return None;
                    }
                }
                _ => return None,
            }
            args.push(&line[arg_start..i]);
            i = skip_blanks(i);
            match at(i)? {
                b',' => i = skip_blanks(i + 1),
                b')' => break,
                _ => return None,
            }
        }
    }
    let atom_end = i + 1;
    i = skip_blanks(atom_end);
    if at(i) == Some(b'.') {
        i = skip_blanks(i + 1);
    }
    (i == bytes.len()).then(|| SimpleAtom { pred: &line[name_start..name_end], span: name_start..atom_end })
}

/// Reads one delimited facts file for `pred_name` (`<Pred>.facts`/`.tsv` with `'\t'`,
/// `<Pred>.csv` with [`csv_separator`]'s), as Soufflé writes them: one tuple per line,
/// fields taken verbatim (only a trailing `\r` is removed), except a field in double
/// quotes (`"a,b"`, `""` for a quote inside), which dlc writes for a value that holds the
/// separator or starts with a quote.
///
/// Blank lines are skipped. A zero-arity predicate's only tuple `()` is written as a line
/// holding exactly `()` (as Soufflé prints nullary relations), so an empty file means "no
/// tuple". Every line must have the same number of fields, equal to the arity when the
/// predicate is already known; otherwise E0013 at that line. An unknown predicate is
/// declared EDB with the arity of the first line.
pub fn parse_delimited_facts(
    src: &str,
    file: FileId,
    pred_name: &str,
    separator: char,
    program: &mut Program,
) -> (Vec<Fact>, Vec<Diagnostic>) {
    let mut facts = Vec::new();
    let diagnostics = read_delimited_facts(src, file, pred_name, separator, program, &mut facts);
    (facts, diagnostics)
}

/// [`parse_delimited_facts`], handing each fact to `sink` instead of returning them. A
/// field of a number column (`number`, `unsigned`, or a column the dlc dialect infers
/// numeric) is read as Soufflé reads it (`007` is 7, `+5` is 5) and must be an integer in
/// the type's range (E0013 at the field otherwise); other fields are taken verbatim.
pub fn read_delimited_facts(
    src: &str,
    file: FileId,
    pred_name: &str,
    separator: char,
    program: &mut Program,
    sink: &mut dyn FactSink,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    if pred_name.starts_with('@') {
        diagnostics.push(reserved_name(pred_name, Span::new(file, 0..0)));
        return diagnostics;
    }
    // A relation the program declares is named whatever its dialect allows (Soufflé's
    // `_x` and `a?b`); only a file naming an unknown predicate must spell a dlc name.
    if !is_pred_name(pred_name) && program.lookup_source(pred_name).is_none() {
        let message = if pred_name.is_empty() {
            "the file name gives no predicate name before its extension".to_string()
        } else {
            format!("the file name gives the predicate name `{pred_name}`, which is not a predicate name")
        };
        diagnostics.push(
            Diagnostic::error(Code::BAD_FACTS_LINE, message)
                .with_primary(Span::new(file, 0..0), "the facts of this file")
                .with_help(
                    "a .facts/.tsv/.csv file is named after its predicate: a letter, then letters, digits \
                 and `_` (`E.facts`, `edge_2.csv`)",
                ),
        );
        return diagnostics;
    }
    // The first line with content tells whether the file holds atoms, and the arity of
    // a new predicate; the predicate is resolved there, once.
    let mut lines = lines(src);
    let mut first = None;
    for (start, line) in lines.by_ref() {
        if line.trim().is_empty() {
            continue;
        }
        if line.len() > MAX_LINE_BYTES {
            diagnostics.push(line_too_long(file, start, Code::BAD_FACTS_LINE));
            continue;
        }
        first = Some((start, line));
        break;
    }
    let Some((first_start, first_line)) = first else { return diagnostics };
    let first_span = Span::new(file, first_start..first_start + first_line.len());
    // A file of atoms named like a delimited file reads as one-field (or, split at its
    // commas, garbled) tuples without a single error; the first line tells.
    if looks_like_atom(first_line) {
        diagnostics.push(atom_line_warning(first_span, separator.encode_utf8(&mut [0; 4]), pred_name));
    }
    // Reused from line to line: a file of a million lines is then not a million
    // allocations of fields and values.
    let mut fields: Vec<&str> = Vec::new();
    if first_line != "()" {
        split_fields(first_line, separator, &mut fields);
    }
    let pred = program.lookup_source(pred_name).unwrap_or_else(|| {
        let name = PredName::Source(program.symbols.intern(pred_name));
        program.declare_pred(name, fields.len(), PredKind::Edb, first_span)
    });
    if program.pred(pred).kind == PredKind::Idb {
        diagnostics.push(idb_fact(program, pred, first_span, Code::EDB_HEADS_RULE));
        return diagnostics;
    }
    let arity = program.pred(pred).arity;
    // Each line holds at most one tuple; counting bytes is cheap next to reading.
    sink.reserve(pred, src.as_bytes().iter().filter(|&&b| b == b'\n').count() + 1, arity);
    let mut values: Vec<u32> = Vec::new();
    // A field of a number column is read as Soufflé reads it: `007` is 7, `+5` is 5.
    let types = program.pred(pred).types.clone();
    // The value of a quoted field with a quote inside.
    let mut unquoted = String::new();
    // One handle for the whole file: interning through `program.consts` would check the
    // sharing of its table for every value, an atomic operation that stalls on the
    // memory writes of the value before.
    let mut consts = program.consts.interning();
    for (start, line) in std::iter::once((first_start, first_line)).chain(lines) {
        if line.trim().is_empty() {
            continue;
        }
        if line.len() > MAX_LINE_BYTES {
            diagnostics.push(line_too_long(file, start, Code::BAD_FACTS_LINE));
            continue;
        }
        let span = Span::new(file, start..start + line.len());
        fields.clear();
        if line != "()" {
            split_fields(line, separator, &mut fields);
        }
        if fields.len() != arity {
            diagnostics.push(
                Diagnostic::error(
                    Code::BAD_FACTS_LINE,
                    format!("this line has {} field(s), but `{pred_name}` has arity {arity}", fields.len()),
                )
                .with_primary(span, format!("{} field(s)", fields.len())),
            );
            continue;
        }
        values.clear();
        for (i, raw_field) in fields.iter().enumerate() {
            let field = unquote(raw_field, &mut unquoted);
            match types[i] {
                ValueType::Symbol => values.push(consts.intern(field).0),
                ty => match ty.number(field) {
                    Some(raw) => values.push(raw),
                    None => {
                        // The field is a slice of the line, so its offset is theirs apart.
                        let at = start + (raw_field.as_ptr() as usize - line.as_ptr() as usize);
                        diagnostics.push(not_a_number(ty, field, Span::new(file, at..at + raw_field.len())));
                        break;
                    }
                },
            }
        }
        if values.len() == arity {
            sink.fact(pred, &values, span);
        }
    }
    diagnostics
}

/// W0003 for the first line of a delimited file of `pred_name` that looks like an atom.
pub(crate) fn atom_line_warning(first_span: Span, separator: &str, pred_name: &str) -> Diagnostic {
    let kind = match separator {
        "\t" => "tab-separated".to_string(),
        "," => "comma-separated".to_string(),
        other => format!("`{other}`-separated"),
    };
    Diagnostic::warning(
        Code::ATOM_IN_DELIMITED_FILE,
        format!("this line looks like an atom, but the file is read as {kind} fields of `{pred_name}`"),
    )
    .with_primary(first_span, format!("read as {kind} fields"))
    .with_help(
        "`.facts`/`.tsv` files hold tab-separated fields and `.csv` files comma-separated ones \
         (tab-separated when the first line holds a tab), one tuple per line; a file of atoms \
         `E(a,b).` needs another extension, such as `.dl`",
    )
}

/// E0013 for a field of a column of numeric type `ty` that is no number of the type.
pub(crate) fn not_a_number(ty: ValueType, field: &str, span: Span) -> Diagnostic {
    let why = match ir::parse_integer(field) {
        _ if ty == ValueType::Float => "not a float within a float's range, in a float column".to_string(),
        Some(_) => format!("outside the range of a {}", ty.name()),
        None => format!("not an integer, in a {} column", ty.name()),
    };
    Diagnostic::error(Code::BAD_FACTS_LINE, format!("`{field}` is {why}")).with_primary(span, why)
}

/// Whether `name` is a predicate name of the language (what the lexer reads as a name).
fn is_pred_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic()) && name.bytes().all(is_name_byte)
}

/// Whether a line of a delimited file has the shape of an atom, `Name(...)` with an
/// optional final `.`.
pub(crate) fn looks_like_atom(line: &str) -> bool {
    let line = line.trim();
    let line = line.strip_suffix('.').unwrap_or(line).trim_end();
    let Some(open) = line.find('(') else { return false };
    is_pred_name(line[..open].trim_end()) && line.ends_with(')')
}

/// Reads update batches: lines `+E(a,b).` (insert) and `-E(a,b).` (delete). A blank line
/// or a line `;` ends a batch; lines holding only a comment are ignored and do not.
/// Unknown predicates are declared EDB (they have no facts yet).
pub fn parse_updates(src: &str, file: FileId, program: &mut Program) -> (Vec<UpdateBatch>, Vec<Diagnostic>) {
    let mut batches = Vec::new();
    let mut current: Option<UpdateBatch> = None;
    let mut diagnostics = Vec::new();
    for (start, line) in lines(src) {
        if line.len() > MAX_LINE_BYTES {
            diagnostics.push(line_too_long(file, start, Code::BAD_UPDATE));
            continue;
        }
        let tokens = lex_line(line, start);
        let ends_batch = match tokens.as_slice() {
            [] => line.trim().is_empty(),
            [(Token::Semicolon, _)] => true,
            _ => false,
        };
        if ends_batch {
            batches.extend(current.take());
            continue;
        }
        if tokens.is_empty() {
            continue;
        }
        let span = Span::new(file, start..start + line.len());
        let batch = current.get_or_insert_with(|| UpdateBatch { changes: Vec::new(), span });
        batch.span = batch.span.to(span);
        let (update, errors) = run(update_line(file), &tokens, start + line.len(), file, Code::BAD_UPDATE);
        diagnostics.extend(errors);
        let Some((sign, atom)) = update else { continue };
        match input_fact(program, &atom, Code::UPDATE_IDB) {
            Ok(fact) => batch.changes.push((sign, fact)),
            Err(errors) => diagnostics.extend(errors),
        }
    }
    batches.extend(current);
    (batches, diagnostics)
}

/// Reads one update atom given on the command line, e.g. `E(a,b)` for `--insert`.
pub fn parse_update_atom(src: &str, file: FileId, program: &mut Program) -> (Option<Fact>, Vec<Diagnostic>) {
    let tokens: Vec<Spanned<'_>> = lex_values(src).into_iter().filter(|(t, _)| *t != Token::Newline).collect();
    let (atom, mut diagnostics) = run(fact_line(file), &tokens, src.len(), file, Code::BAD_UPDATE);
    let Some(atom) = atom else { return (None, diagnostics) };
    match input_fact(program, &atom, Code::UPDATE_IDB) {
        Ok(fact) => (Some(fact), diagnostics),
        Err(errors) => {
            diagnostics.extend(errors);
            (None, diagnostics)
        }
    }
}

/// Reads a ground atom naming a fact to explain (`--explain 'R(a,d)'`): any predicate the
/// program knows, input or derived. Syntax errors are E0001, an unknown predicate E0007,
/// a wrong argument count E0004, a variable E0011. New constants are interned (a fact
/// with one is simply not in any database); no predicate is declared.
pub fn parse_ground_atom(src: &str, file: FileId, program: &mut Program) -> (Option<Fact>, Vec<Diagnostic>) {
    let tokens: Vec<Spanned<'_>> = lex_values(src).into_iter().filter(|(t, _)| *t != Token::Newline).collect();
    let (atom, mut diagnostics) = run(fact_line(file), &tokens, src.len(), file, Code::PARSE);
    let Some(atom) = atom else { return (None, diagnostics) };
    let reserved = reserved_names(&atom);
    if !reserved.is_empty() {
        diagnostics.extend(reserved);
        return (None, diagnostics);
    }
    let Some(pred) = program.lookup_source(&atom.pred.text) else {
        diagnostics.push(
            Diagnostic::error(Code::QUERY_UNKNOWN, format!("`{}` is not a predicate of the program", atom.pred.text))
                .with_primary(atom.pred.span, "unknown predicate")
                .with_help("name a predicate the program's rules or facts mention"),
        );
        return (None, diagnostics);
    };
    if program.pred(pred).arity != atom.args.len() {
        diagnostics
            .push(IrError::ArityMismatch { pred, found: atom.args.len(), span: atom.span }.to_diagnostic(program));
        return (None, diagnostics);
    }
    match ground_values(program, pred, &atom) {
        Ok(values) => (Some(Fact { pred, values, span: atom.span }), diagnostics),
        Err(errors) => {
            diagnostics.extend(errors);
            (None, diagnostics)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const FILE: FileId = FileId(3);

    /// A program where `R` is IDB (arity 2) and `E` is EDB (arity 2).
    fn program() -> Program {
        crate::parse_program("R(X,Y) <- E(X,Y)\n", FileId(0)).0.expect("valid program")
    }

    fn show(program: &Program, facts: &[Fact]) -> Vec<String> {
        facts
            .iter()
            .map(|f| format!("{}{}", program.pred_name(f.pred), ir::DisplayTuple(program, f.pred, &f.values)))
            .collect()
    }

    fn codes_and_texts<'a>(src: &'a str, diagnostics: &[Diagnostic]) -> Vec<(&'static str, &'a str)> {
        diagnostics.iter().map(|d| (d.code.0, &src[d.primary_span().expect("has a span").range()])).collect()
    }

    #[test]
    fn ground_atoms_to_explain_name_known_predicates_of_either_kind() {
        let mut p = program();
        for src in ["R(a,b)", "E(a,\"b c\").", "R(a, zz)"] {
            let (fact, diagnostics) = parse_ground_atom(src, FILE, &mut p);
            assert!(diagnostics.is_empty() && fact.is_some(), "{src}: {diagnostics:#?}");
        }
        let cases =
            [("R(a,Y)", "E0011", "Y"), ("N(a)", "E0007", "N"), ("R(a)", "E0004", "R(a)"), ("R(a,", "E0001", "")];
        for (src, code, text) in cases {
            let (fact, diagnostics) = parse_ground_atom(src, FILE, &mut p);
            assert!(fact.is_none(), "{src}");
            assert_eq!(codes_and_texts(src, &diagnostics)[0], (code, text), "{src}");
        }
        assert!(p.lookup_source("N").is_none(), "nothing is declared");
    }

    #[test]
    fn fact_atoms_are_read_and_new_predicates_declared_edb() {
        let mut p = program();
        let src = "% edges\nE(a,b).\n\nE(b, \"c d\")  // no dot\r\nN(7).\nZ()\n";
        let (facts, diagnostics) = parse_fact_atoms(src, FILE, &mut p);
        assert!(diagnostics.is_empty(), "{diagnostics:#?}");
        assert_eq!(show(&p, &facts), ["E(a,b)", r#"E(b,"c d")"#, "N(7)", "Z()"]);
        let n = p.lookup_source("N").unwrap();
        assert_eq!((p.pred(n).kind, p.pred(n).arity), (PredKind::Edb, 1));
        assert_eq!(&src[facts[0].span.range()], "E(a,b)");
        assert_eq!(facts[0].span.file, FILE);
        // `a` in a facts file is the same constant as `a` in the program.
        assert_eq!(p.consts.get("a"), Some(ir::Const(facts[0].values[0])));
    }

    #[test]
    fn a_line_may_name_a_relation_of_a_component_instance() {
        // `net.link.pair` is how a Soufflé program names a relation of an instance; a
        // nullary `Z.` still ends at its `.`.
        let mut p = program();
        let (fact, diagnostics) = parse_update_atom("net.link.pair(9, 10)", FILE, &mut p);
        assert!(diagnostics.is_empty(), "{diagnostics:#?}");
        assert_eq!(show(&p, &fact.into_iter().collect::<Vec<_>>()), ["net.link.pair(9,10)"]);
        let (facts, diagnostics) = parse_fact_atoms(
            "Z.
g.r(1).
",
            FILE,
            &mut p,
        );
        assert!(diagnostics.is_empty(), "{diagnostics:#?}");
        assert_eq!(show(&p, &facts), ["Z()", "g.r(1)"]);
        let (updates, diagnostics) = parse_updates(
            "+g.r(2).
-g . r(1)
",
            FILE,
            &mut p,
        );
        assert!(diagnostics.is_empty(), "{diagnostics:#?}");
        assert_eq!(updates[0].changes.len(), 2);
    }

    #[test]
    fn fact_atom_errors_are_all_reported() {
        let mut p = program();
        let src = "E(a,b)) \nR(a,b).\nE(a).\nE(a,X).\n<- E(a)\nN(a).\nN(a,b).\n@x(a).\n";
        let (facts, diagnostics) = parse_fact_atoms(src, FILE, &mut p);
        assert_eq!(show(&p, &facts), ["N(a)"]);
        assert_eq!(
            codes_and_texts(src, &diagnostics),
            [
                ("E0013", ")"),
                ("E0005", "R(a,b)"),
                ("E0004", "E(a)"),
                ("E0011", "X"),
                ("E0013", "<-"),
                ("E0004", "N(a,b)"),
                ("E0002", "@x"),
            ]
        );
    }

    #[test]
    fn delimited_fields_are_taken_verbatim() {
        let mut p = program();
        let (facts, diagnostics) = parse_delimited_facts("a\tb\nb\tc d\r\n\n", FILE, "E", '\t', &mut p);
        assert!(diagnostics.is_empty());
        assert_eq!(show(&p, &facts), ["E(a,b)", r#"E(b,"c d")"#]);
        let (facts, diagnostics) = parse_delimited_facts("1,x\n2,\"y\"\n3,a\"b\n", FILE, "New", ',', &mut p);
        assert!(diagnostics.is_empty());
        assert_eq!(show(&p, &facts), ["New(1,x)", "New(2,y)", r#"New(3,"a\"b")"#]);
        let new = p.lookup_source("New").unwrap();
        assert_eq!((p.pred(new).kind, p.pred(new).arity), (PredKind::Edb, 2));
    }

    #[test]
    fn fields_split_as_str_split_does() {
        let mut fields = Vec::new();
        for line in ["", "a", "a,b", ",", "a,,b,", "ü,é€,x", "tab\there,and,ü"] {
            for separator in [',', '\t', 'é', '€'] {
                fields.clear();
                split_fields(line, separator, &mut fields);
                assert_eq!(fields, line.split(separator).collect::<Vec<_>>(), "{line:?} at {separator:?}");
            }
        }
    }

    #[test]
    fn quoted_fields_read_back_as_the_values_written() {
        let values = ["a,b", "tab\there", "\"q", "in\"side", "\"\"", "", " ", "()", "plain", "ü€"];
        for separator in [',', '\t'] {
            for (i, a) in values.iter().enumerate() {
                for only_field in [true, false] {
                    let b = values[(i + 3) % values.len()];
                    let line = match only_field {
                        true => quote_field(a, separator, true).into_owned(),
                        false => format!(
                            "{}{separator}{}",
                            quote_field(a, separator, false),
                            quote_field(b, separator, false)
                        ),
                    };
                    let mut p = program();
                    let (facts, diagnostics) = parse_delimited_facts(&line, FILE, "New", separator, &mut p);
                    assert!(diagnostics.is_empty(), "{line:?}: {diagnostics:?}");
                    let read: Vec<String> =
                        facts[0].values.iter().map(|&c| p.consts.text(ir::Const(c)).to_string()).collect();
                    let expected = if only_field { vec![*a] } else { vec![*a, b] };
                    assert_eq!(read, expected, "{line:?}");
                }
            }
        }
        let mut fields = Vec::new();
        split_fields("\"a\"x,\"b", ',', &mut fields);
        assert_eq!(fields, ["\"a\"x", "\"b"], "malformed quotes are verbatim");
    }

    #[test]
    fn a_csv_file_is_tab_separated_when_its_first_line_holds_a_tab() {
        assert_eq!(csv_separator("\na\tb,c\n", None), '\t');
        assert_eq!(csv_separator("a,b\n", None), ',');
        assert_eq!(csv_separator("\"a\tb\",c\n", None), ',');
        assert_eq!(csv_separator("a,b\n", Some(1)), '\t');
        assert_eq!(csv_separator("", Some(2)), ',');
    }

    #[test]
    fn delimited_facts_stream_into_a_sink_in_file_order() {
        struct Rows(Vec<(PredId, Vec<u32>, Span)>);
        impl FactSink for Rows {
            fn fact(&mut self, pred: PredId, values: &[u32], span: Span) {
                self.0.push((pred, values.to_vec(), span));
            }
        }
        let src = "a\tb\nx\n\nb\ta\n";
        let mut p = program();
        let (facts, diagnostics) = parse_delimited_facts(src, FILE, "E", '\t', &mut p);
        let mut rows = Rows(Vec::new());
        let streamed = read_delimited_facts(src, FILE, "E", '\t', &mut program(), &mut rows);
        assert_eq!(streamed, diagnostics);
        let expected: Vec<_> = facts.iter().map(|f| (f.pred, f.values.clone(), f.span)).collect();
        assert_eq!(rows.0, expected);
        assert_eq!(show(&p, &facts), ["E(a,b)", "E(b,a)"]);
    }

    #[test]
    fn zero_arity_tuple_is_written_as_parentheses() {
        let mut p = program();
        let (facts, diagnostics) = parse_delimited_facts("()\n", FILE, "Flag", ',', &mut p);
        assert!(diagnostics.is_empty());
        assert_eq!(show(&p, &facts), ["Flag()"]);
        let (facts, diagnostics) = parse_delimited_facts("\n", FILE, "Off", ',', &mut p);
        assert!(facts.is_empty() && diagnostics.is_empty());
    }

    #[test]
    fn delimited_field_count_errors() {
        let mut p = program();
        let src = "a\tb\nc\nd\te\tf\ng\th\n";
        let (facts, diagnostics) = parse_delimited_facts(src, FILE, "E", '\t', &mut p);
        assert_eq!(show(&p, &facts), ["E(a,b)", "E(g,h)"]);
        assert_eq!(codes_and_texts(src, &diagnostics), [("E0013", "c"), ("E0013", "d\te\tf")]);
        // For an unknown predicate the first line sets the arity.
        let src = "a,b\nc\n";
        let (_, diagnostics) = parse_delimited_facts(src, FILE, "New", ',', &mut p);
        assert_eq!(codes_and_texts(src, &diagnostics), [("E0013", "c")]);
        let (_, diagnostics) = parse_delimited_facts("a,b\n", FILE, "R", ',', &mut p);
        assert_eq!(diagnostics[0].code, Code::EDB_HEADS_RULE);
        let (_, diagnostics) = parse_delimited_facts("a\n", FILE, "@m:R^b", ',', &mut p);
        assert_eq!(diagnostics[0].code, Code::RESERVED_NAME);
    }

    #[test]
    fn a_byte_order_mark_is_skipped_and_spans_still_index_the_source() {
        let mut p = program();
        let src = "\u{feff}a,b\n";
        let (facts, diagnostics) = parse_delimited_facts(src, FILE, "E", ',', &mut p);
        assert!(diagnostics.is_empty());
        assert_eq!(show(&p, &facts), ["E(a,b)"]);
        assert_eq!(&src[facts[0].span.range()], "a,b");
        let src = "\u{feff}E(c,d).\n\u{feff}E(e,f).\n";
        let (facts, diagnostics) = parse_fact_atoms(src, FILE, &mut p);
        assert_eq!(show(&p, &facts), ["E(c,d)"]);
        // Only a mark at the very start is skipped; elsewhere it is a character like any other.
        assert_eq!(diagnostics.len(), 1);
        let (batches, diagnostics) = parse_updates("\u{feff}+E(a,b).\n", FILE, &mut p);
        assert!(diagnostics.is_empty());
        assert_eq!(show(&p, &batches[0].facts(Sign::Insert)), ["E(a,b)"]);
    }

    #[test]
    fn lines_longer_than_the_bound_are_reported_not_read() {
        let mut p = program();
        let long = format!("a\t{}\nb\tc\n", "x".repeat(MAX_LINE_BYTES));
        let (facts, diagnostics) = parse_delimited_facts(&long, FILE, "E", '\t', &mut p);
        assert_eq!(show(&p, &facts), ["E(b,c)"]);
        assert_eq!(codes_and_texts(&long, &diagnostics), [("E0013", "")]);
        let long = format!("E(a,{}).\n", "x".repeat(MAX_LINE_BYTES));
        let (facts, diagnostics) = parse_fact_atoms(&long, FILE, &mut p);
        assert!(facts.is_empty());
        assert_eq!(codes_and_texts(&long, &diagnostics), [("E0013", "")]);
        let long = format!("+E(a,{}).\n", "x".repeat(MAX_LINE_BYTES));
        let (_, diagnostics) = parse_updates(&long, FILE, &mut p);
        assert_eq!(codes_and_texts(&long, &diagnostics), [("E0014", "")]);
    }

    #[test]
    fn an_atom_in_a_delimited_file_is_warned_about_once() {
        let mut p = program();
        for (src, separator, pred) in
            [("E(a,b).\nE(b,c).\n", '\t', "edges"), ("E(a,b).\nE(b,c).\n", ',', "Pairs"), ("e (\"x y\")\n", '\t', "F")]
        {
            let (_, diagnostics) = parse_delimited_facts(src, FILE, pred, separator, &mut p);
            assert_eq!(diagnostics.len(), 1, "{src:?}: {diagnostics:#?}");
            assert_eq!((diagnostics[0].code, diagnostics[0].is_error()), (Code::ATOM_IN_DELIMITED_FILE, false));
        }
        for line in ["a\tb", "f(x", "(a)", "1(a)", "a b(c)", "x)"] {
            assert!(!looks_like_atom(line), "{line:?}");
        }
    }

    #[test]
    fn file_names_must_be_predicate_names() {
        let mut p = program();
        for name in ["E.x", "my pred", "", "1E", "_E", "é"] {
            let (facts, diagnostics) = parse_delimited_facts("a,b\n", FILE, name, ',', &mut p);
            assert!(facts.is_empty(), "{name:?}");
            assert_eq!(diagnostics.len(), 1, "{name:?}");
            assert_eq!(diagnostics[0].code, Code::BAD_FACTS_LINE, "{name:?}");
        }
        for name in ["E", "edge_2", "Zz9"] {
            assert!(is_pred_name(name), "{name:?}");
        }
    }

    #[test]
    fn updates_are_split_into_batches() {
        let mut p = program();
        let src = "+E(a,b).\n-E(b,c)\n% only a comment\n+E(c,d).\n\n  \n-E(a,b).\n;\n;\n+F(x).\n";
        let (batches, diagnostics) = parse_updates(src, FILE, &mut p);
        assert!(diagnostics.is_empty(), "{diagnostics:#?}");
        let summary: Vec<(Vec<String>, Vec<String>, &str)> = batches
            .iter()
            .map(|b| (show(&p, &b.facts(Sign::Insert)), show(&p, &b.facts(Sign::Delete)), &src[b.span.range()]))
            .collect();
        assert_eq!(
            summary,
            [
                (
                    vec!["E(a,b)".into(), "E(c,d)".into()],
                    vec!["E(b,c)".into()],
                    "+E(a,b).\n-E(b,c)\n% only a comment\n+E(c,d)."
                ),
                (vec![], vec!["E(a,b)".into()], "-E(a,b)."),
                (vec!["F(x)".into()], vec![], "+F(x)."),
            ]
        );
        let f = p.lookup_source("F").unwrap();
        assert_eq!(p.pred(f).kind, PredKind::Edb);
    }

    #[test]
    fn update_errors_are_all_reported() {
        let mut p = program();
        let src = "E(a,b).\n+R(a,b).\n-E(a).\n+E(a,_).\n+E(a,b)) \n* E(a,b)\n";
        let (batches, diagnostics) = parse_updates(src, FILE, &mut p);
        assert_eq!(batches.len(), 1);
        assert!(batches[0].changes.is_empty());
        assert_eq!(
            codes_and_texts(src, &diagnostics),
            [("E0014", "E"), ("E0015", "R(a,b)"), ("E0004", "E(a)"), ("E0011", "_"), ("E0014", ")"), ("E0014", "*")]
        );
        assert_eq!(diagnostics[0].message, "expected `+` or `-`, found `E`");
    }

    #[test]
    fn single_update_atoms() {
        let mut p = program();
        for src in ["E(a,b)", "E(a, b).", " E(a,b)\n"] {
            let (fact, diagnostics) = parse_update_atom(src, FILE, &mut p);
            assert!(diagnostics.is_empty());
            assert_eq!(show(&p, &[fact.unwrap()]), ["E(a,b)"]);
        }
        for (src, code, offending) in
            [("R(a,b)", "E0015", "R(a,b)"), ("E(a)", "E0004", "E(a)"), ("E(a,Y)", "E0011", "Y"), ("E(a,b", "E0014", "")]
        {
            let (fact, diagnostics) = parse_update_atom(src, FILE, &mut p);
            assert!(fact.is_none());
            assert_eq!(codes_and_texts(src, &diagnostics), [(code, offending)], "for {src}");
        }
    }

    #[test]
    fn simple_atoms_are_recognised_with_the_parsers_spans() {
        let cases: [(&str, &str, &[&str], &str); 7] = [
            ("E(a,b).", "E", &["a", "b"], "E(a,b)"),
            ("E(n0,n49)", "E", &["n0", "n49"], "E(n0,n49)"),
            (" \tedge ( x_1 , -7 ,007,0 ) . \r", "edge", &["x_1", "-7", "007", "0"], "edge ( x_1 , -7 ,007,0 )"),
            ("Z()", "Z", &[], "Z()"),
            ("Z( \t).", "Z", &[], "Z( \t)"),
            ("e2_(zZ9_)", "e2_", &["zZ9_"], "e2_(zZ9_)"),
            ("N(-0) .  ", "N", &["-0"], "N(-0)"),
        ];
        for (line, pred, expected_args, atom) in cases {
            let mut args = Vec::new();
            let simple = simple_atom(line, &mut args).unwrap_or_else(|| panic!("{line:?} is simple"));
            assert_eq!((simple.pred, &args[..], &line[simple.span]), (pred, expected_args, atom), "{line:?}");
        }
    }

    #[test]
    fn anything_else_is_left_to_the_parser() {
        let lines = [
            "",
            "  ",
            "E",
            "E.",
            "E(a,b",
            "E(a,b))",
            "E(a,,b)",
            "E(a,)",
            "E(,a)",
            "E(a b)",
            "E(a,b)..",
            "E(a,b). x",
            "E(a,b).E(c,d)",
            "E(a,b) // comment",
            "E(a,b) % comment",
            "E(\"a\",b)",
            "E(X,b)",
            "E(_,b)",
            "E(_x,b)",
            "E(@m,b)",
            "@m(a)",
            "_E(a)",
            "1(a)",
            "E(-,b)",
            "E(- 1,b)",
            "E(1a,b)",
            "E(1_,b)",
            "E(a-1,b)",
            "E(+1,b)",
            "E(1.5,b)",
            "E(é,b)",
            "É(a)",
            "E(a,b)\u{a0}",
            "E(a)\n",
            "E(a) <- F(a)",
            "E(a) :- F(a)",
            "+E(a)",
            "?- E(a)",
            "E(a);",
        ];
        for line in lines {
            assert_eq!(simple_atom(line, &mut Vec::new()), None, "{line:?}");
        }
    }

    /// Everything reading `src` leaves behind: the facts (ids, and the texts behind them),
    /// the diagnostics, and the program's predicates and constants afterwards.
    type Outcome = (Vec<Fact>, Vec<(String, Vec<String>)>, Vec<Diagnostic>, Vec<String>, Vec<String>);

    fn read_with(src: &str, fast_path: bool) -> Outcome {
        let mut p = program();
        let mut facts: Vec<Fact> = Vec::new();
        let diagnostics = read_atoms(src, FILE, &mut p, &mut facts, fast_path);
        let texts = facts
            .iter()
            .map(|f| {
                let text = |(i, &c): (usize, &u32)| p.value_text(p.value(f.pred, i, c));
                (p.pred_name(f.pred), f.values.iter().enumerate().map(text).collect())
            })
            .collect();
        let preds = p.preds.iter().map(|pred| format!("{pred:?}")).collect();
        let consts = (0..p.consts.len() as u32).map(|c| p.consts.text(ir::Const(c)).to_string()).collect();
        (facts, texts, diagnostics, preds, consts)
    }

    fn blank() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec!["", "", "", " ", "  ", "\t", "\r", "\x0c"])
    }

    /// A line of the shape the fast path takes, over predicates of the test program (`E`
    /// EDB and `R` IDB, both of arity 2) and new ones, with any arity.
    fn simple_line() -> impl Strategy<Value = String> {
        let pred = prop::sample::select(vec!["E", "E", "R", "N", "edge", "Z", "e2", "A_b"]);
        let constant = prop::sample::select(vec![
            "a",
            "b",
            "n0",
            "n49",
            "x_y",
            "abc_",
            "zZ9",
            "0",
            "7",
            "007",
            "-1",
            "-0",
            "-007",
            "123456789012345678901234567890",
        ]);
        let arg = (blank(), constant, blank()).prop_map(|(l, c, r)| format!("{l}{c}{r}"));
        let args = prop::collection::vec(arg, 0..4);
        let dot = prop::sample::select(vec!["", ".", "."]);
        (blank(), pred, blank(), args, blank(), blank(), dot, blank()).prop_map(
            |(b0, pred, b1, args, inside, b2, dot, b3)| {
                let args = if args.is_empty() { inside.to_string() } else { args.join(",") };
                format!("{b0}{pred}{b1}({args}){b2}{dot}{b3}")
            },
        )
    }

    /// A simple line with a few pieces inserted, or characters removed, anywhere: the
    /// near-misses whose every difference the fast path must notice.
    fn near_miss() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "\"", "\"s\"", "%c", "//c", "/", "X", "_", "_x", "@m", ":-", "<-", "-", "+", ".", ",", "(", ")", "é", "ü",
            "1", "a", " ", "\t", ";", "#", "E(a,b)", "?-", "\u{a0}", "Ａ", "\n", "",
        ]);
        let edit = (any::<prop::sample::Index>(), piece, any::<bool>());
        (simple_line(), prop::collection::vec(edit, 1..3)).prop_map(|(mut line, edits)| {
            for (at, piece, remove) in edits {
                let boundaries: Vec<usize> = line.char_indices().map(|(i, _)| i).chain([line.len()]).collect();
                let i = boundaries[at.index(boundaries.len())];
                if remove && i < line.len() {
                    line.remove(i);
                } else {
                    line.insert_str(i, piece);
                }
            }
            line
        })
    }

    fn facts_file() -> impl Strategy<Value = String> {
        let line = prop_oneof![
            4 => simple_line(),
            4 => near_miss(),
            1 => prop::sample::select(vec!["", "% comment", "  // c", "E(a) <- F(a)", "@x(a)."]).prop_map(String::from),
            1 => any::<String>(),
        ];
        let newline = prop::sample::select(vec!["\n", "\n", "\r\n"]);
        prop::collection::vec((line, newline), 0..12)
            .prop_map(|lines| lines.into_iter().flat_map(|(line, nl)| [line, nl.to_string()]).collect())
    }

    /// [`program`] with `N` declared an input of a number and a symbol column.
    fn number_program(types: [ValueType; 2]) -> Program {
        let mut p = program();
        let n = PredName::Source(p.symbols.intern("N"));
        let n = p.declare_pred(n, 2, PredKind::Edb, Span::new(FILE, 0..0));
        p.pred_mut(n).types = types.to_vec();
        p
    }

    #[test]
    fn number_columns_are_read_as_numbers_and_others_verbatim() {
        let mut p = number_program([ValueType::Number, ValueType::Symbol]);
        let src = "007\t007\n+5\tx\n-0\t-0\n-2147483648\ta\n";
        let mut facts: Vec<Fact> = Vec::new();
        let diagnostics = read_delimited_facts(src, FILE, "N", '\t', &mut p, &mut facts);
        assert!(diagnostics.is_empty());
        assert_eq!(show(&p, &facts), ["N(7,007)", "N(5,x)", "N(0,-0)", "N(-2147483648,a)"]);
        assert_eq!(facts[0].values[0], 7, "a number is held as itself");
        assert_eq!(p.consts.get("+5"), None, "a number's spellings are not constants");
        let src = "x\ty\n1\t2\n2147483648\tz\n";
        let diagnostics = read_delimited_facts(src, FILE, "N", '\t', &mut p, &mut facts);
        assert_eq!(codes_and_texts(src, &diagnostics), [("E0013", "x"), ("E0013", "2147483648")]);
        assert_eq!(facts.len(), 5, "only the good line is read");
    }

    /// A field of a number column: numbers of every length with signs and leading zeros,
    /// and near-misses.
    fn number_field() -> impl Strategy<Value = String> {
        let sign = prop::sample::select(vec!["", "", "-", "+", "--", "-+"]);
        let zeros = prop::sample::select(vec!["", "", "0", "00"]);
        let digits = prop::collection::vec(prop::sample::select(b"0123456789".to_vec()), 0..24);
        let suffix = prop::sample::select(vec!["", "", "", " ", "a", "\u{0660}", "."]);
        prop_oneof![
            4 => (sign, zeros, digits, suffix).prop_map(|(sign, zeros, digits, suffix)| {
                format!("{sign}{zeros}{}{suffix}", String::from_utf8(digits).expect("digits"))
            }),
            1 => any::<i64>().prop_map(|n| n.to_string()),
            1 => "[^\t\n\r]{0,6}",
        ]
    }

    /// A tab-separated file of 2-field lines (number column, then a text column) with the
    /// odd line of another width, blank lines, CRLF, trailing tabs and a byte-order mark.
    fn number_file() -> impl Strategy<Value = String> {
        let line = prop_oneof![
            8 => (number_field(), number_field()).prop_map(|(a, b)| format!("{a}\t{b}")),
            1 => number_field(),
            1 => (number_field(), number_field()).prop_map(|(a, b)| format!("{a}\t{b}\t")),
            1 => Just(String::new()),
        ];
        let newline = prop::sample::select(vec!["\n", "\n", "\r\n"]);
        let bom = prop::sample::select(vec!["", "", "\u{feff}"]);
        (bom, prop::collection::vec((line, newline), 0..10)).prop_map(|(bom, lines)| {
            bom.to_string() + &lines.into_iter().map(|(line, nl)| line + nl).collect::<String>()
        })
    }

    proptest::proptest! {
        #[test]
        fn number_columns_hold_the_numbers_their_fields_write(src in number_file()) {
            let mut typed = number_program([ValueType::Number, ValueType::Symbol]);
            let mut verbatim = number_program([ValueType::Symbol, ValueType::Symbol]);
            let mut typed_facts: Vec<Fact> = Vec::new();
            let typed_diagnostics = read_delimited_facts(&src, FILE, "N", '\t', &mut typed, &mut typed_facts);
            let (verbatim_facts, verbatim_diagnostics) = parse_delimited_facts(&src, FILE, "N", '\t', &mut verbatim);
            // The typed reading keeps a line the verbatim one keeps exactly when its first
            // field is a 32-bit integer, and holds that integer; the others are E0013.
            let mut typed_iter = typed_facts.iter();
            let mut refused = 0;
            for fact in &verbatim_facts {
                let field = verbatim.consts.text(ir::Const(fact.values[0])).to_string();
                let Some(number) = ir::parse_integer(&field).and_then(|n| i32::try_from(n).ok()) else {
                    refused += 1;
                    continue;
                };
                let read = typed_iter.next();
                proptest::prop_assert!(read.is_some(), "{:?}", field);
                let read = read.unwrap();
                proptest::prop_assert_eq!(read.values[0], number as u32);
                proptest::prop_assert_eq!(read.span, fact.span);
                let (a, b) = (typed.consts.text(ir::Const(read.values[1])).to_string(), verbatim.consts.text(ir::Const(fact.values[1])).to_string());
                proptest::prop_assert_eq!(a, b);
            }
            proptest::prop_assert!(typed_iter.next().is_none());
            proptest::prop_assert_eq!(typed_diagnostics.len(), verbatim_diagnostics.len() + refused);
            proptest::prop_assert!(typed_diagnostics.iter().all(|d| d.code == Code::BAD_FACTS_LINE));
        }

        #[test]
        fn simple_lines_take_the_fast_path(line in simple_line()) {
            let mut args = Vec::new();
            let simple = simple_atom(&line, &mut args);
            proptest::prop_assert!(simple.is_some(), "{:?}", line);
        }

        #[test]
        fn the_fast_path_reads_files_exactly_as_the_parser_does(src in facts_file()) {
            proptest::prop_assert_eq!(read_with(&src, true), read_with(&src, false), "{:?}", src);
        }
    }
}
