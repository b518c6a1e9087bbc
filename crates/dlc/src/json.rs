//! `IO=json` and `IO=jsonfile` of Soufflé programs: a relation read from and written to
//! JSON as Soufflé 2.5 reads and writes it (its `ReadStreamJSON.h` and
//! `WriteStreamJSON.h`). A relation is a JSON array of its tuples, each an array of its
//! fields, or under `format=object` an object keyed by the attributes' names; a record is
//! an array (an object keyed by its fields' names), `nil` is `null`.

use diag::{Code, Diagnostic, FileId, Span};
use ir::{PredId, Program, ValueType};
use pipeline::SelectedRows;
use serde_json::Value;
use std::io::Write;
use std::ops::Range;
use syntax::souffle::JsonLayout;
use syntax::FactSink;

/// Reads the JSON `text` of `.input` relation `pred` (file `file`), whose attributes are
/// named `attributes`: an array of tuples, laid out as the first one is (an array or an
/// object), as Soufflé reads it. Each value must be of its column's type (a number of
/// its 32 bits, a text, `null` or a record of the column's record type); what is not is
/// E0013 at its tuple, and text that is no JSON is E0013 where the parser stopped.
pub fn read_relation(
    text: &str,
    file: FileId,
    pred: PredId,
    attributes: &[String],
    program: &mut Program,
    sink: &mut dyn FactSink,
) -> Vec<Diagnostic> {
    let name = program.pred_name(pred);
    let tuples = match top_level_elements(text) {
        Ok(tuples) => tuples,
        Err((at, why)) => {
            let at = at.min(text.len());
            let at = (0..=at).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
            let span = Span::new(file, at..(at + 1).min(text.len()).max(at));
            return vec![Diagnostic::error(Code::BAD_FACTS_LINE, format!("the JSON file of `{name}` cannot be read"))
                .with_primary(span, why)
                .with_help(format!(
                    "`IO=jsonfile` reads an array of `{name}`'s tuples, each an array of its fields or an object \
                     keyed by its attributes' names"
                ))];
        }
    };
    let types = program.pred(pred).types.clone();
    let layout = match tuples.first() {
        Some((_, Value::Object(_))) => JsonLayout::Object,
        _ => JsonLayout::List,
    };
    let store = program.consts.clone();
    let mut reader = ValueReader { store: &store, layout };
    let mut diagnostics = Vec::new();
    let mut values = Vec::with_capacity(types.len());
    for (range, tuple) in &tuples {
        let span = Span::new(file, range.clone());
        values.clear();
        let read = match (layout, tuple) {
            (_, Value::Null) if types.is_empty() => Ok(()),
            (JsonLayout::List, Value::Array(fields)) => types.iter().enumerate().try_for_each(|(i, &ty)| {
                let field = fields.get(i).ok_or_else(|| {
                    format!("this tuple has {} field(s), but `{name}` has {} column(s)", fields.len(), types.len())
                })?;
                values.push(reader.value(ty, field)?);
                Ok(())
            }),
            (JsonLayout::Object, Value::Object(fields)) => {
                reader.object(fields, attributes, &types).map(|read| values.extend(read))
            }
            (JsonLayout::List, _) => Err("the first tuple is an array: this one must be an array too".to_string()),
            (JsonLayout::Object, _) => Err("the first tuple is an object: this one must be an object too".to_string()),
        };
        match read {
            Ok(()) => sink.fact(pred, &values, span),
            Err(why) => diagnostics.push(
                Diagnostic::error(Code::BAD_FACTS_LINE, format!("a tuple of `{name}`'s JSON file cannot be read"))
                    .with_primary(span, why)
                    .with_help(
                        "each value must be of its column's type: a text for a symbol, an integer of 32 bits for a \
                         number or `unsigned`, a number for a float, `null` or a record's fields for a record",
                    ),
            ),
        }
    }
    diagnostics
}

/// Reads the values of JSON fields into a relation's or a record's columns.
struct ValueReader<'s> {
    store: &'s ir::ValueStore,
    layout: JsonLayout,
}

impl ValueReader<'_> {
    /// The value of type `ty` that `json` writes, or why it writes none.
    fn value(&mut self, ty: ValueType, json: &Value) -> Result<u32, String> {
        let wrong = || format!("`{json}` is no {}", type_name(self.store, ty));
        match ty {
            ValueType::Symbol => json.as_str().map(|s| self.store.intern(s).0).ok_or_else(wrong),
            ValueType::Number => json.as_i64().and_then(|n| i32::try_from(n).ok()).map(|n| n as u32).ok_or_else(wrong),
            // Soufflé writes an `unsigned` as a signed 32-bit number: both read back.
            ValueType::Unsigned => json
                .as_i64()
                .filter(|n| (i64::from(i32::MIN)..=i64::from(u32::MAX)).contains(n))
                .map(|n| n as u32)
                .ok_or_else(wrong),
            ValueType::Float => json.as_f64().map(|f| (f as f32).to_bits()).ok_or_else(wrong),
            ValueType::Record(id) => {
                let record = self.store.record_type(id);
                let fields: Vec<(String, ValueType)> =
                    record.branches[0].fields.iter().map(|f| (f.name.clone(), f.ty)).collect();
                let raw = match (self.layout, json) {
                    (_, Value::Null) => return Ok(0),
                    (JsonLayout::List, Value::Array(items)) if items.len() == fields.len() => items
                        .iter()
                        .zip(&fields)
                        .map(|(item, &(_, ty))| self.value(ty, item))
                        .collect::<Result<Vec<u32>, String>>()?,
                    (JsonLayout::Object, Value::Object(items)) => {
                        let names: Vec<String> = fields.iter().map(|(name, _)| name.clone()).collect();
                        let types: Vec<ValueType> = fields.iter().map(|&(_, ty)| ty).collect();
                        self.object(items, &names, &types)?
                    }
                    _ => return Err(wrong()),
                };
                Ok(self.store.pack(&raw))
            }
        }
    }

    /// The values of an object's fields, in the order of `names` (the keys it must
    /// have, each once, and no other).
    fn object(
        &mut self,
        items: &serde_json::Map<String, Value>,
        names: &[String],
        types: &[ValueType],
    ) -> Result<Vec<u32>, String> {
        if let Some(key) = items.keys().find(|key| !names.contains(key)) {
            return Err(format!("`{key}` is none of the names {}", names_list(names)));
        }
        names
            .iter()
            .zip(types)
            .map(|(name, &ty)| match items.get(name) {
                Some(item) => self.value(ty, item),
                None => Err(format!("the key `{name}` is missing (the keys are {})", names_list(names))),
            })
            .collect()
    }
}

/// `a`, `b`, `c`.
fn names_list(names: &[String]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

/// How a report names a value type.
fn type_name(store: &ir::ValueStore, ty: ValueType) -> String {
    match ty {
        ValueType::Record(id) => format!("record of `{}`", store.record_type(id).name),
        other => other.name().to_string(),
    }
}

/// A JSON value with its byte range in the text.
type Element = (Range<usize>, Value);

/// The elements of the JSON array `text` holds, each with its byte range; or where and
/// why `text` is no JSON array.
fn top_level_elements(text: &str) -> Result<Vec<Element>, (usize, String)> {
    // The whole text first, for the parser's report of where it is no JSON.
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        return Err((offset_of(text, e.line(), e.column()), e.to_string()));
    }
    let skip = |at: usize| at + text[at..].len() - text[at..].trim_start().len();
    let mut at = skip(0);
    if !text[at..].starts_with('[') {
        return Err((at, "the file holds no JSON array of tuples".to_string()));
    }
    at = skip(at + 1);
    let mut elements = Vec::new();
    if text[at..].starts_with(']') {
        return Ok(elements);
    }
    loop {
        let mut stream = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        let value = match stream.next() {
            Some(Ok(value)) => value,
            Some(Err(e)) => return Err((at, e.to_string())),
            None => return Err((at, "a tuple is missing".to_string())),
        };
        let end = at + stream.byte_offset();
        elements.push((at..end, value));
        at = skip(end);
        match text[at..].chars().next() {
            Some(',') => at = skip(at + 1),
            Some(']') => return Ok(elements),
            _ => return Err((at, "expected `,` or `]`".to_string())),
        }
    }
}

/// The byte offset of 1-based `line` and `column` (as `serde_json` counts them) in `text`.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    (start + column.saturating_sub(1)).min(text.len())
}

/// Writes the rows of `pred` as Soufflé's JSON writer does, in the order of `-D` files:
/// `[`, the tuples separated by `,` and a line break, `]` and a line break; a nullary
/// relation's tuple as `null`. `attributes` are the keys of `format=object`. Returns the
/// number of rows.
pub fn write_relation(
    out: &mut dyn Write,
    program: &Program,
    rows: SelectedRows<'_>,
    layout: JsonLayout,
    attributes: &[String],
) -> std::io::Result<usize> {
    let (order, _) = crate::outputs::value_order(program, rows);
    let types: Vec<ValueType> = (0..rows.arity()).map(|i| program.column_type(rows.pred(), i)).collect();
    let keys: Vec<String> = attributes.iter().map(|name| json_string(name)).collect();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    out.write_all(b"[")?;
    let mut count = 0;
    let mut line = String::new();
    rows.for_each_sorted(&order, |row| {
        if count > 0 {
            out.write_all(b",\n")?;
        }
        count += 1;
        line.clear();
        if row.is_empty() {
            line.push_str("null\n");
        } else {
            let (open, close) = if layout == JsonLayout::Object { ('{', '}') } else { ('[', ']') };
            line.push(open);
            for (i, (&v, &ty)) in row.iter().zip(&types).enumerate() {
                if i > 0 {
                    line.push_str(", ");
                }
                if layout == JsonLayout::Object {
                    line.push_str(keys.get(i).map_or("\"\"", String::as_str));
                    line.push_str(": ");
                }
                push_value(&mut line, program, ty, v, layout);
            }
            line.push(close);
        }
        out.write_all(line.as_bytes())
    })?;
    out.write_all(b"]\n")?;
    out.flush()?;
    Ok(count)
}

/// Appends the JSON of value `v` of type `ty`, as Soufflé writes it: an `unsigned` as
/// its signed 32 bits, a float with six significant digits, a record as an array (an
/// object keyed by its fields' names under `format=object`), `nil` as `null`.
fn push_value(out: &mut String, program: &Program, ty: ValueType, v: u32, layout: JsonLayout) {
    use std::fmt::Write as _;
    let _ = match ty {
        ValueType::Symbol => {
            out.push_str(&json_string(&program.consts.text(ir::Const(v))));
            Ok(())
        }
        ValueType::Number | ValueType::Unsigned => write!(out, "{}", v as i32),
        ValueType::Float => {
            out.push_str(&ir::float_json_text(f32::from_bits(v)));
            Ok(())
        }
        ValueType::Record(id) => {
            // `nil` is the record 0.
            if v == 0 {
                out.push_str("null");
                return;
            }
            let record = program.consts.record_type(id);
            let (open, close) = if layout == JsonLayout::Object { ('{', '}') } else { ('[', ']') };
            out.push(open);
            for (i, field) in record.branches[0].fields.iter().enumerate() {
                let raw = program.consts.field(v, i).unwrap_or_default();
                if i > 0 {
                    out.push_str(", ");
                }
                if layout == JsonLayout::Object {
                    out.push_str(&json_string(&field.name));
                    out.push_str(": ");
                }
                push_value(out, program, field.ty, raw, layout);
            }
            out.push(close);
            Ok(())
        }
    };
}

/// `text` as a JSON string, escaped as Soufflé's JSON library escapes it (which also
/// escapes the line and paragraph separators U+2028 and U+2029).
fn json_string(text: &str) -> String {
    let json = serde_json::to_string(text).unwrap_or_default();
    if json.contains(['\u{2028}', '\u{2029}']) {
        json.replace('\u{2028}', "\\u2028").replace('\u{2029}', "\\u2029")
    } else {
        json
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_level_elements_have_their_ranges_and_bad_json_its_place() {
        let text = "[[1, \"a\"],\n {\"x\": null} ]\n";
        let elements = top_level_elements(text).unwrap();
        let ranges: Vec<&str> = elements.iter().map(|(r, _)| &text[r.clone()]).collect();
        assert_eq!(ranges, ["[1, \"a\"]", "{\"x\": null}"]);
        assert_eq!(top_level_elements(" [ ] ").unwrap().len(), 0);
        let (at, _) = top_level_elements("[[1],\n [2,]]").unwrap_err();
        assert_eq!(at, "[[1],\n [2,".len());
        assert!(top_level_elements("{\"a\": 1}").is_err());
    }

    #[test]
    fn strings_are_escaped_as_souffle_escapes_them() {
        assert_eq!(json_string("q\"\\x\t\u{1}\u{2028}é"), "\"q\\\"\\\\x\\t\\u0001\\u2028é\"");
    }
}
