//! The fields of a Soufflé program's `.input` and `.output` files, read and written as
//! Soufflé 2.5 reads and writes them: by default every field is its text, quotes
//! included; under `rfc4180=true` a field in double quotes is the text between them.
//! dlc's own facts files (`--facts`) follow dlc's rule instead (see `facts`).

use crate::facts::{atom_line_warning, looks_like_atom, not_a_number};
use crate::souffle::IoFormat;
use diag::{Code, Diagnostic, FileId, Span};
use ir::{PredId, Program, ValueType};
use std::borrow::Cow;
use std::ops::Range;

/// The lines of a file as Soufflé's reader takes them (`std::getline`): split at `\n`,
/// a final `\n` ending the last line rather than starting an empty one, and one `\r` at
/// the end of a line removed. An empty line is a line: it is a tuple of a nullary
/// relation, and the empty text in a one-column symbol relation.
fn souffle_lines(src: &str) -> impl Iterator<Item = (usize, &str)> {
    let body = src.strip_suffix('\n').unwrap_or(src);
    let mut offset = 0;
    body.split('\n').filter(move |_| !src.is_empty()).map(move |line| {
        let start = offset;
        offset += line.len() + 1;
        (start, line.strip_suffix('\r').unwrap_or(line))
    })
}

/// Why a line does not hold a tuple.
enum BadLine {
    /// The line ends before the field `found` (from 0).
    Missing { found: usize },
    /// An `rfc4180` field opens a quote the line never closes.
    Unclosed,
    /// An `rfc4180` field's closing quote is followed by something other than the delimiter.
    AfterQuote,
    /// Brackets that do not balance in a field of a file delimited by `,`, where
    /// Soufflé reads a field with `[` as a record up to its `]`.
    Record,
}

/// Splits `line` into its first `arity` fields as Soufflé 2.5's reader does: fields
/// past the relation's arity are ignored, a line with fewer fields is an error. Each
/// field is its range in the line and its value (the text between the quotes of a
/// quoted `rfc4180` field, with `""` read as `"`).
fn split_line<'a>(
    line: &'a str,
    delimiter: &str,
    rfc4180: bool,
    arity: usize,
    fields: &mut Vec<(Range<usize>, Cow<'a, str>)>,
) -> Result<(), BadLine> {
    let bytes = line.as_bytes();
    let step = delimiter.len();
    // A one-character delimiter is looked for as a character (`memchr`), much faster
    // than a text search on the long files this reader is made for.
    let mut chars = delimiter.chars();
    let single = chars.next().filter(|_| chars.next().is_none());
    let find = |from: usize| -> Option<usize> {
        let rest = line.get(from..)?;
        match single {
            Some(c) => rest.find(c),
            None => rest.find(delimiter),
        }
        .map(|i| from + i)
    };
    let mut start = 0;
    while fields.len() < arity {
        let missing = BadLine::Missing { found: fields.len() };
        if rfc4180 && bytes.get(start) == Some(&b'"') {
            let mut value = String::new();
            let mut pos = start + 1;
            let mut closed = false;
            // Bytes are copied one by one; a quote is ASCII and never inside a character,
            // so the copied runs are whole characters.
            let mut run = pos;
            while pos < bytes.len() {
                if bytes[pos] == b'"' {
                    value.push_str(&line[run..pos]);
                    if bytes.get(pos + 1) == Some(&b'"') {
                        value.push('"');
                        pos += 2;
                        run = pos;
                        continue;
                    }
                    pos += 1;
                    closed = true;
                    break;
                }
                pos += 1;
            }
            if !closed {
                return Err(BadLine::Unclosed);
            }
            if pos != bytes.len() && find(pos) != Some(pos) {
                return Err(BadLine::AfterQuote);
            }
            fields.push((start..pos, Cow::Owned(value)));
            start = pos + step;
            continue;
        }
        if start > line.len() {
            return Err(missing);
        }
        let mut end = find(start).unwrap_or(line.len());
        if !rfc4180 && delimiter.contains(',') {
            // Soufflé reads a field holding `[` up to its matching `]` when the delimiter
            // holds a comma, as a record does; brackets that do not balance are an error.
            let mut depth = 0usize;
            let mut next = end;
            let mut at = start;
            loop {
                if at >= line.len() {
                    if depth != 0 {
                        return Err(BadLine::Record);
                    }
                    break;
                }
                if at >= next && depth == 0 {
                    break;
                }
                match bytes[at] {
                    b'[' => depth += 1,
                    b']' if depth == 0 => return Err(BadLine::Record),
                    b']' => depth -= 1,
                    _ => {}
                }
                at += 1;
                if at == next && depth != 0 {
                    next = find(at).unwrap_or(line.len());
                }
            }
            end = at;
        }
        // A field ends at a character boundary: at the delimiter or the line's end.
        fields.push((start..end, Cow::Borrowed(&line[start..end])));
        start = end + step;
    }
    Ok(())
}

/// Reads the file of a Soufflé `.input` relation `pred` (declared by the program, so
/// its arity and column types are known), with its `delimiter` and `format`, as Soufflé
/// 2.5 reads it: one tuple per line; fields verbatim (quotes too), or by RFC 4180 under
/// `rfc4180=true`; fields beyond the arity ignored; a line of a nullary relation, even
/// an empty one, is its tuple; an empty line of any other relation is a line with one
/// empty field (the empty text of a one-column symbol relation, an error otherwise);
/// with `headers=true` the first line is skipped. A field of a number column must be an
/// integer of its type. Every bad line is E0013 at its line or field.
pub fn read_souffle_facts(
    src: &str,
    file: FileId,
    pred: PredId,
    delimiter: &str,
    format: IoFormat,
    program: &mut Program,
    sink: &mut dyn crate::FactSink,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let name = program.pred_name(pred);
    let arity = program.pred(pred).arity;
    let types = program.pred(pred).types.clone();
    let mut lines = souffle_lines(src).skip(usize::from(format.headers)).peekable();
    if let Some(&(start, first)) = lines.peek() {
        if arity > 0 && looks_like_atom(first) {
            let span = Span::new(file, start..start + first.len());
            diagnostics.push(atom_line_warning(span, delimiter, &name));
        }
    }
    if arity == 0 {
        // Every line is the one tuple `()`; a file without lines leaves the relation empty.
        if let Some((start, line)) = lines.next() {
            sink.fact(pred, &[], Span::new(file, start..start + line.len()));
        }
        return diagnostics;
    }
    sink.reserve(pred, src.as_bytes().iter().filter(|&&b| b == b'\n').count() + 1, arity);
    let mut fields = Vec::with_capacity(arity);
    let mut values: Vec<u32> = Vec::with_capacity(arity);
    let store = program.consts.clone();
    let mut consts = store.interning();
    while let Some((start, first)) = lines.next() {
        let mut line = first;
        let result = loop {
            fields.clear();
            match split_line(line, delimiter, format.rfc4180, arity, &mut fields) {
                // Under RFC 4180 a quoted field may hold line breaks: the record goes on
                // over the lines up to the one that closes the field.
                Err(BadLine::Unclosed) => match continued_record(&mut lines) {
                    Some(end) => line = &src[start..end],
                    None => break Err(BadLine::Unclosed),
                },
                other => break other,
            }
        };
        let span = Span::new(file, start..start + line.len());
        if let Err(bad) = result {
            diagnostics.push(bad_line(bad, span, &name, arity, delimiter));
            continue;
        }
        values.clear();
        for (i, (range, field)) in fields.iter().enumerate() {
            match types[i] {
                ValueType::Symbol => values.push(consts.intern(field).0),
                ValueType::Record(ty) => match store.read_record_with(ty, field, &mut |s| consts.intern(s).0) {
                    Ok(raw) => values.push(raw),
                    Err(why) => {
                        let at = Span::new(file, start + range.start..start + range.end);
                        diagnostics.push(not_a_record(&store.record_type(ty).name, field, &why, at));
                        break;
                    }
                },
                ty => match souffle_number(ty, field) {
                    Some(raw) => values.push(raw),
                    None => {
                        let at = Span::new(file, start + range.start..start + range.end);
                        diagnostics.push(not_a_number(ty, field, at));
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

/// The end (in the file) of an RFC 4180 record whose lines so far leave a quoted field
/// open: the lines taken from `lines` up to the one whose quote closes it (a doubled
/// quote `""` is a quote inside the field). `None` when the file ends first. Each line
/// is scanned once for its closing quote.
fn continued_record<'a>(lines: &mut impl Iterator<Item = (usize, &'a str)>) -> Option<usize> {
    for (line_start, line) in lines.by_ref() {
        let bytes = line.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            if bytes[at] == b'"' {
                if bytes.get(at + 1) == Some(&b'"') {
                    at += 2;
                    continue;
                }
                return Some(line_start + line.len());
            }
            at += 1;
        }
    }
    None
}

/// The bits of a field of a number column as Soufflé 2.5 reads it: a `number` in decimal
/// after optional white space and a sign (as `std::stoi` reads it, but the whole field);
/// an `unsigned` in binary after `0b`, hexadecimal after `0x`, or else in decimal after
/// optional white space and `+`. None for any other text, and for a number outside the
/// type's 32 bits (where Soufflé wraps some of them around). A `float` as `std::stof`
/// reads it, the whole field ([`ir::parse_float`]).
fn souffle_number(ty: ValueType, field: &str) -> Option<u32> {
    let decimal = |text: &str, signs: &[char]| -> Option<i64> {
        let text = text.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
        let digits = text.strip_prefix(signs).unwrap_or(text);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        // Leading zeros are no reason to fail; past them, more than 18 digits are out of
        // the range of every type (and of `i64`).
        let value = digits.trim_start_matches('0');
        let magnitude: i64 = if value.is_empty() { 0 } else { value.parse().ok().filter(|_| value.len() <= 18)? };
        Some(if text.starts_with('-') { -magnitude } else { magnitude })
    };
    match ty {
        ValueType::Symbol | ValueType::Record(_) => None,
        ValueType::Float => ir::parse_float(field).map(f32::to_bits),
        ValueType::Number => decimal(field, &['+', '-']).and_then(|n| i32::try_from(n).ok()).map(|n| n as u32),
        ValueType::Unsigned => {
            let radix = |digits: &str, radix: u32| {
                let valid = !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix));
                let significant = digits.trim_start_matches('0');
                match significant.is_empty() {
                    true => valid.then_some(0),
                    false => valid.then(|| u32::from_str_radix(significant, radix).ok()).flatten(),
                }
            };
            if let Some(hex) = field.strip_prefix("0x") {
                radix(hex, 16)
            } else if let Some(binary) = field.strip_prefix("0b") {
                radix(binary, 2)
            } else {
                decimal(field, &['+']).and_then(|n| u32::try_from(n).ok())
            }
        }
    }
}

/// E0013 for a field of a record column that is no record of its type.
fn not_a_record(ty: &str, field: &str, why: &str, at: Span) -> Diagnostic {
    Diagnostic::error(Code::BAD_FACTS_LINE, format!("`{field}` is no record of type `{ty}`"))
        .with_primary(at, why.to_string())
        .with_help("a record is written `[1, b, nil]`, a branch of an algebraic data type `$Name(1, b)`")
}

/// E0013 for a line of `name`'s file that holds no tuple.
fn bad_line(bad: BadLine, span: Span, name: &str, arity: usize, delimiter: &str) -> Diagnostic {
    let (message, label) = match bad {
        BadLine::Missing { found } => (
            format!("this line has {found} field(s), but `{name}` has {arity} column(s)"),
            format!("{found} field(s), separated by {}", delimiter_name(delimiter)),
        ),
        BadLine::Unclosed => {
            ("a field of this line opens a double quote that it never closes".to_string(), "unclosed quote".to_string())
        }
        BadLine::AfterQuote => (
            format!("a quoted field of this line is followed by something other than {}", delimiter_name(delimiter)),
            "text after a closing quote".to_string(),
        ),
        BadLine::Record => (
            "the brackets `[` `]` of a field of this line do not balance".to_string(),
            "Soufflé reads a `,`-delimited field with `[` as a record, up to its `]`".to_string(),
        ),
    };
    Diagnostic::error(Code::BAD_FACTS_LINE, message).with_primary(span, label)
}

/// How a report names a delimiter.
fn delimiter_name(delimiter: &str) -> String {
    match delimiter {
        "\t" => "tabs".to_string(),
        "," => "commas".to_string(),
        c => format!("`{c}`"),
    }
}

/// A symbol as a Soufflé `.output` writes it: as it is, or under `rfc4180=true` in double
/// quotes, each quote inside written `\""` (Soufflé 2.5 writes a backslash and a doubled
/// quote, which its RFC 4180 reader reads back as `\"`).
pub fn souffle_field(value: &str, rfc4180: bool) -> Cow<'_, str> {
    if !rfc4180 {
        return Cow::Borrowed(value);
    }
    let mut field = String::with_capacity(value.len() + 2);
    push_rfc4180_symbol(&mut field, value, "\"");
    Cow::Owned(field)
}

/// Appends `value` between two `quote`s, each quote inside written `\""`, as Soufflé
/// 2.5 writes a symbol under `rfc4180=true`.
fn push_rfc4180_symbol(out: &mut String, value: &str, quote: &str) {
    out.push_str(quote);
    for c in value.chars() {
        if c == '"' {
            out.push_str("\\\"");
        }
        out.push(c);
    }
    out.push_str(quote);
}

/// A record value of type `ty` as a Soufflé `.output` writes it: its text (`[1, a]`,
/// `$Couple(a, b)`), or under `rfc4180=true` in double quotes with each symbol inside
/// between doubled quotes (`"$Couple(""a"", ""b"")"`), as Soufflé 2.5 writes it.
pub fn souffle_record_field(store: &ir::ValueStore, ty: ValueType, raw: u32, rfc4180: bool) -> String {
    let mut field = String::new();
    if !rfc4180 {
        store.write_record(&mut field, ty, raw);
        return field;
    }
    field.push('"');
    store.write_record_with(&mut field, ty, raw, &|out, text| push_rfc4180_symbol(out, text, "\"\""));
    field.push('"');
    field
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::{PredKind, PredName};

    const FILE: FileId = FileId(0);

    /// A program with one input relation `r` of these column types.
    fn program(types: &[ValueType]) -> (Program, PredId) {
        let mut p = Program::default();
        let name = PredName::Source(p.symbols.intern("r"));
        let pred = p.declare_pred(name, types.len(), PredKind::Edb, Span::new(FILE, 0..0));
        p.pred_mut(pred).types = types.to_vec();
        (p, pred)
    }

    /// The tuples read (as texts) and the codes and spanned texts of the reports.
    fn read(src: &str, types: &[ValueType], delimiter: &str, format: IoFormat) -> (Vec<Vec<String>>, Vec<String>) {
        let (mut p, pred) = program(types);
        let mut facts: Vec<ir::Fact> = Vec::new();
        let diagnostics = read_souffle_facts(src, FILE, pred, delimiter, format, &mut p, &mut facts);
        let tuples = facts
            .iter()
            .map(|f| f.values.iter().enumerate().map(|(i, &v)| p.value_text(p.value(pred, i, v))).collect())
            .collect();
        let reports = diagnostics
            .iter()
            .map(|d| format!("{} {}", d.code, d.primary_span().map_or("", |s| &src[s.range()])))
            .collect();
        (tuples, reports)
    }

    fn rows(rows: &[&[&str]]) -> Vec<Vec<String>> {
        rows.iter().map(|r| r.iter().map(|s| s.to_string()).collect()).collect()
    }

    const SYMBOLS: &[ValueType] = &[ValueType::Symbol, ValueType::Symbol];
    const PLAIN: IoFormat = IoFormat { rfc4180: false, headers: false };
    const RFC: IoFormat = IoFormat { rfc4180: true, headers: false };

    #[test]
    fn quotes_are_text_by_default() {
        let (tuples, reports) = read("\"<http://a>\"\t\"<http://b>\"\na\"\"b\t\"c\r\n", SYMBOLS, "\t", PLAIN);
        assert_eq!(tuples, rows(&[&["\"<http://a>\"", "\"<http://b>\""], &["a\"\"b", "\"c"]]));
        assert!(reports.is_empty(), "{reports:?}");
    }

    #[test]
    fn an_rfc4180_quoted_field_may_span_lines() {
        let (rows_read, errors) = read("FOO,\"Line1\n\nLine3.\n\"\nBAR,\"a\"\"\nb\"\n", SYMBOLS, ",", RFC);
        assert_eq!(rows_read, rows(&[&["FOO", "Line1\n\nLine3.\n"], &["BAR", "a\"\nb"]]));
        assert!(errors.is_empty(), "{errors:?}");
        // A quote that never closes is one error, at its line.
        let (rows_read, errors) = read("A,\"open\nB,b\n", SYMBOLS, ",", RFC);
        assert!(rows_read.is_empty());
        assert_eq!(errors.len(), 1, "{errors:?}");
    }

    #[test]
    fn rfc4180_fields_are_unquoted() {
        let src = "\"a,b\",c\n\"x\"\"y\",\"\"\nplain\"q,\"z\"\n\"open,x\n\"q\"x,y\n";
        let (tuples, reports) = read(src, SYMBOLS, ",", RFC);
        assert_eq!(tuples, rows(&[&["a,b", "c"], &["x\"y", ""], &["plain\"q", "z"]]));
        // The open quote runs on to the next line's quote, which text follows: one
        // record, one error (Soufflé: "separator expected after quoted field").
        assert_eq!(reports, ["E0013 \"open,x\n\"q\"x,y"]);
    }

    #[test]
    fn extra_fields_are_ignored_and_missing_ones_are_errors() {
        let src = "a\tb\tc\td\na\t\na\n\n";
        let (tuples, reports) = read(src, SYMBOLS, "\t", PLAIN);
        assert_eq!(tuples, rows(&[&["a", "b"], &["a", ""]]));
        assert_eq!(reports, ["E0013 a", "E0013 "]);
    }

    #[test]
    fn an_empty_line_is_a_tuple_of_a_nullary_relation_and_an_empty_symbol() {
        assert_eq!(read("\n", &[], "\t", PLAIN).0, rows(&[&[]]));
        assert_eq!(read("x\ny\n", &[], "\t", PLAIN).0, rows(&[&[]]));
        assert_eq!(read("", &[], "\t", PLAIN).0, rows(&[]));
        assert_eq!(read("a\n\n  \nb", &[ValueType::Symbol], "\t", PLAIN).0, rows(&[&["a"], &[""], &["  "], &["b"]]));
        let (tuples, reports) = read("1\n\n", &[ValueType::Number], "\t", PLAIN);
        assert_eq!((tuples, reports), (rows(&[&["1"]]), vec!["E0013 ".to_string()]));
    }

    #[test]
    fn numbers_are_read_as_souffle_reads_them() {
        let number = |field: &str| souffle_number(ValueType::Number, field).map(|n| n as i32);
        let unsigned = |field: &str| souffle_number(ValueType::Unsigned, field);
        for (field, read) in [("5", Some(5)), (" 5", Some(5)), ("+5", Some(5)), (" -5", Some(-5)), ("007", Some(7))] {
            assert_eq!(number(field), read, "{field:?}");
        }
        assert_eq!(number("-2147483648"), Some(i32::MIN));
        for field in ["0x10", "0b11", "1e3", "5 ", "", "--5", "- 5", "2147483648", "12abc"] {
            assert_eq!(number(field), None, "{field:?}");
        }
        for (field, read) in
            [("0x10", 16), ("0b11", 3), (" 5", 5), ("+5", 5), ("4294967295", u32::MAX), ("0x00ff", 255), ("0x0", 0)]
        {
            assert_eq!(unsigned(field), Some(read), "{field:?}");
        }
        for field in ["-1", "-0", "0X10", " 0x10", "0x", "00x1", "0x+1", "4294967296", "0x100000000"] {
            assert_eq!(unsigned(field), None, "{field:?}");
        }
        let float = |field: &str| souffle_number(ValueType::Float, field).map(f32::from_bits);
        for (field, read) in [("1.5", 1.5), (" 2.5", 2.5), ("+3", 3.0), ("1e3", 1000.0), ("0x10", 16.0), (".5", 0.5)] {
            assert_eq!(float(field), Some(read), "{field:?}");
        }
        for field in ["2.5x", "2.5 ", "abc", "", "1e39", "1e-40"] {
            assert_eq!(float(field), None, "{field:?}");
        }
    }

    #[test]
    fn headers_skip_the_first_line() {
        let format = IoFormat { rfc4180: false, headers: true };
        assert_eq!(read("x\ty\na\tb\n", SYMBOLS, "\t", format).0, rows(&[&["a", "b"]]));
        assert_eq!(read("\n", &[], "\t", format).0, rows(&[]));
    }

    #[test]
    fn a_comma_delimited_field_with_brackets_reads_to_its_closing_bracket() {
        let (tuples, reports) = read("[a,b],c\nx]y,z\n[a,b\n[a],[b,c],d\n", SYMBOLS, ",", PLAIN);
        assert_eq!(tuples, rows(&[&["[a,b]", "c"], &["[a]", "[b,c]"]]));
        assert_eq!(reports, ["E0013 x]y,z", "E0013 [a,b"]);
    }

    #[test]
    fn a_delimiter_of_several_characters_splits_as_souffle_splits() {
        let (tuples, reports) = read("a, b, c\na,b, c\nx, \n, y\nonly\n", SYMBOLS, ", ", PLAIN);
        assert_eq!(tuples, rows(&[&["a", "b"], &["a,b", "c"], &["x", ""], &["", "y"]]));
        assert_eq!(reports, ["E0013 only"]);
        // A delimiter holding a comma reads a field with `[` up to its `]`.
        let (tuples, reports) = read("[a, b] , [c] , d\n[a , b\n", SYMBOLS, " , ", PLAIN);
        assert_eq!(tuples, rows(&[&["[a, b]", "[c]"]]));
        assert_eq!(reports, ["E0013 [a , b"]);
        let (tuples, reports) = read("\"a::b\"::c\n\"x\":y\n", SYMBOLS, "::", RFC);
        assert_eq!(tuples, rows(&[&["a::b", "c"]]));
        assert_eq!(reports, ["E0013 \"x\":y"]);
    }

    #[test]
    fn rfc4180_symbols_are_written_in_quotes_with_the_escape_souffle_writes() {
        assert_eq!(souffle_field("a\tb", false), "a\tb");
        assert_eq!(souffle_field("x\"y", false), "x\"y");
        assert_eq!(souffle_field("x\"y", true), "\"x\\\"\"y\"");
        assert_eq!(souffle_field("", true), "\"\"");
    }

    #[test]
    fn rfc4180_records_are_written_in_quotes_their_symbols_in_doubled_quotes() {
        let (mut p, pred) = program(&[]);
        let adt = ir::RecordType {
            name: "Adt".to_string(),
            adt: true,
            branches: vec![ir::Branch {
                name: "Couple".to_string(),
                fields: vec![
                    ir::Field { name: "first".to_string(), ty: ValueType::Symbol },
                    ir::Field { name: "second".to_string(), ty: ValueType::Symbol },
                ],
            }],
        };
        p.consts.set_record_types(vec![adt]);
        let ty = ir::RecordTypeId(0);
        p.pred_mut(pred).types = vec![ValueType::Record(ty)];
        let raw = p.consts.read_record(ty, "$Couple(\"quote:\\\"\", b c)").unwrap();
        let field = |rfc4180| souffle_record_field(&p.consts, ValueType::Record(ty), raw, rfc4180);
        assert_eq!(field(false), "$Couple(quote:\", b c)");
        assert_eq!(field(true), "\"$Couple(\"\"quote:\\\"\"\"\", \"\"b c\"\")\"");
    }
}
