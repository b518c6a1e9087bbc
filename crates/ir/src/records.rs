//! Records and algebraic data types. A record value is the id of its fields in the value
//! store's record table, as Soufflé keeps records: `nil` is 0, and every other record is
//! hash-consed, so two records are equal exactly when their ids are. A value of an
//! algebraic data type is a record too, holding its branch's index before the branch's
//! fields (`$Circle(3)` is the record `[0, 3]` when `Circle` is the first branch).
//!
//! Tuples hold only the id; this module gives a record type's shape, its text (as
//! Soufflé writes it in facts and outputs: `[1, [2, nil]]`, `$Rect(1, 2)`, `$Empty`),
//! reading that text back, and the order outputs list records in. Each walks nested
//! records with an explicit stack, so a list of any length costs no native stack.

use crate::intern::Table;
use crate::ValueType;
use rustc_hash::FxHashMap;
use std::cmp::Ordering;
use std::fmt::Write as _;
use std::sync::Arc;

/// A record type or algebraic data type: an index into the value store's record types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecordTypeId(pub u32);

/// A declared record type (`.type Pair = [a: number, b: symbol]`: one branch, named as
/// the type) or algebraic data type (`.type Shape = Circle {r: number} | Empty {}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordType {
    pub name: String,
    pub branches: Vec<Branch>,
    /// Whether this is an algebraic data type, whose values hold their branch's index.
    pub adt: bool,
}

/// One branch of a [`RecordType`]: its name and fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Branch {
    pub name: String,
    pub fields: Vec<Field>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub ty: ValueType,
}

impl RecordType {
    /// Where field `field` of branch `branch` is in the stored record: after the branch
    /// index of an algebraic data type.
    pub fn position(&self, field: usize) -> usize {
        field + usize::from(self.adt)
    }

    /// The branch named `name`.
    pub fn branch(&self, name: &str) -> Option<usize> {
        self.branches.iter().position(|b| b.name == name)
    }
}

/// The records of a store, each stored once.
#[derive(Default)]
pub(crate) struct RecordTable {
    ids: FxHashMap<Arc<[u32]>, u32>,
    /// The fields of record `id`, at `id - 1`.
    fields: Vec<Arc<[u32]>>,
}

impl RecordTable {
    pub fn find(&self, fields: &[u32]) -> Option<u32> {
        self.ids.get(fields).copied()
    }

    /// The id of the record of `fields`, added if new. Ids start at 1: 0 is `nil`.
    pub fn insert(&mut self, fields: &[u32]) -> u32 {
        if let Some(id) = self.find(fields) {
            return id;
        }
        let stored: Arc<[u32]> = fields.into();
        self.fields.push(stored.clone());
        let id = self.fields.len() as u32;
        self.ids.insert(stored, id);
        id
    }

    /// The fields of record `id`; none for `nil` or an id no record has.
    pub fn fields(&self, id: u32) -> Option<&[u32]> {
        self.fields.get(usize::try_from(id.checked_sub(1)?).ok()?).map(|f| &**f)
    }

    pub fn len(&self) -> usize {
        self.fields.len()
    }
}

/// What the writer and the order of record texts need of the store: the record types,
/// the records and the texts of symbols.
pub(crate) struct RecordView<'a> {
    pub types: &'a [RecordType],
    pub table: &'a RecordTable,
    pub texts: &'a Table,
}

/// One piece of a value's text still to write.
enum Piece<'a> {
    Value(ValueType, u32),
    Text(&'a str),
}

impl RecordView<'_> {
    /// Appends the text of `raw`, a value of type `ty`, as Soufflé writes it inside a
    /// record: symbols as `symbol` writes them, records in brackets, branches with `$`.
    pub fn write(&self, out: &mut String, ty: ValueType, raw: u32, symbol: &dyn Fn(&mut String, &str)) {
        let mut pieces = vec![Piece::Value(ty, raw)];
        while let Some(piece) = pieces.pop() {
            let (ty, raw) = match piece {
                Piece::Text(text) => {
                    out.push_str(text);
                    continue;
                }
                Piece::Value(ty, raw) => (ty, raw),
            };
            match ty {
                ValueType::Symbol => symbol(out, self.texts.text(raw)),
                ValueType::Number => {
                    let _ = write!(out, "{}", raw as i32);
                }
                ValueType::Unsigned => {
                    let _ = write!(out, "{raw}");
                }
                ValueType::Float => out.push_str(&crate::float_text(f32::from_bits(raw))),
                ValueType::Record(id) => {
                    let record_type = &self.types[id.0 as usize];
                    let Some(fields) = self.table.fields(raw) else {
                        out.push_str("nil");
                        continue;
                    };
                    let (branch, values) = match record_type.adt {
                        true => (&record_type.branches[fields[0] as usize], &fields[1..]),
                        false => (&record_type.branches[0], fields),
                    };
                    let (open, close) = match record_type.adt {
                        true if branch.fields.is_empty() => {
                            out.push('$');
                            out.push_str(&branch.name);
                            continue;
                        }
                        true => {
                            out.push('$');
                            out.push_str(&branch.name);
                            ("(", ")")
                        }
                        false => ("[", "]"),
                    };
                    out.push_str(open);
                    pieces.push(Piece::Text(close));
                    for (i, (field, &value)) in branch.fields.iter().zip(values).enumerate().rev() {
                        pieces.push(Piece::Value(field.ty, value));
                        if i > 0 {
                            pieces.push(Piece::Text(", "));
                        }
                    }
                }
            }
        }
    }

    /// The order of two values of type `ty`: numbers by value, symbols by text, records
    /// field by field (`nil` first, an algebraic data type's values by branch first).
    /// Two different records differ in some field, since records are stored once, so the
    /// first differing field decides, and the walk never returns to an outer record.
    pub fn compare(&self, mut ty: ValueType, mut a: u32, mut b: u32) -> Ordering {
        loop {
            if a == b {
                return Ordering::Equal;
            }
            let ValueType::Record(id) = ty else { return compare_plain(ty, a, b, self.texts) };
            let (fa, fb) = match (self.table.fields(a), self.table.fields(b)) {
                (None, _) => return Ordering::Less,
                (_, None) => return Ordering::Greater,
                (Some(fa), Some(fb)) => (fa, fb),
            };
            let record_type = &self.types[id.0 as usize];
            let (branch, start) = match record_type.adt {
                true if fa[0] != fb[0] => return fa[0].cmp(&fb[0]),
                true => (&record_type.branches[fa[0] as usize], 1),
                false => (&record_type.branches[0], 0),
            };
            let Some((i, field)) = branch.fields.iter().enumerate().find(|&(i, _)| fa[start + i] != fb[start + i])
            else {
                return fa.len().cmp(&fb.len());
            };
            (ty, a, b) = (field.ty, fa[start + i], fb[start + i]);
        }
    }
}

/// The order of two different values of a type that is no record.
fn compare_plain(ty: ValueType, a: u32, b: u32, texts: &Table) -> Ordering {
    match ty {
        ValueType::Number => (a as i32).cmp(&(b as i32)),
        ValueType::Float => f32::from_bits(a).total_cmp(&f32::from_bits(b)),
        ValueType::Symbol => texts.text(a).cmp(texts.text(b)),
        _ => a.cmp(&b),
    }
}

/// Why the text of a record field is no value of its type.
pub type ReadError = String;

/// One record being read: its type, branch, and the fields read so far.
struct Open {
    ty: crate::RecordTypeId,
    branch: usize,
    fields: Vec<u32>,
    /// The character that closes it: `]` or `)`.
    close: char,
}

/// Reads the text of a value of record type `ty` (as Soufflé writes it: `[1, [2, nil]]`,
/// `$Circle(3)`, symbols bare or in double quotes), interning the symbols with `intern`
/// and the records with `pack`.
pub(crate) fn read(
    types: &[RecordType],
    ty: crate::RecordTypeId,
    text: &str,
    intern: &mut dyn FnMut(&str) -> u32,
    pack: &mut dyn FnMut(&[u32]) -> u32,
) -> Result<u32, ReadError> {
    let mut rest = text.trim_start();
    let mut stack: Vec<Open> = Vec::new();
    let mut want = ValueType::Record(ty);
    loop {
        // Read one value of type `want` at `rest`, opening records as they start.
        let value: u32 = match want {
            ValueType::Record(id) => {
                let record_type = &types[id.0 as usize];
                if let Some(after) = rest.strip_prefix("nil") {
                    rest = after;
                    0
                } else if record_type.adt {
                    let after = rest
                        .strip_prefix('$')
                        .ok_or_else(|| format!("expected a branch of `{}` (`$Name(...)`)", record_type.name))?;
                    // A branch's name as Soufflé's reader reads it: ASCII letters and
                    // digits, `_`, `?`, and the `.` of a component instance's name.
                    let end = after
                        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '?' | '.')))
                        .unwrap_or(after.len());
                    let name = &after[..end];
                    let branch = record_type
                        .branch(name)
                        .ok_or_else(|| format!("`${name}` is no branch of `{}`", record_type.name))?;
                    rest = after[end..].trim_start();
                    let fields = &record_type.branches[branch].fields;
                    match rest.strip_prefix('(') {
                        Some(after) if !fields.is_empty() => {
                            rest = after.trim_start();
                            stack.push(Open { ty: id, branch, fields: vec![branch as u32], close: ')' });
                            want = fields[0].ty;
                            continue;
                        }
                        Some(after) => {
                            rest = after.trim_start().strip_prefix(')').ok_or("expected `)`")?;
                            pack(&[branch as u32])
                        }
                        None if fields.is_empty() => pack(&[branch as u32]),
                        None => return Err(format!("expected `(` and the fields of `${name}`")),
                    }
                } else {
                    let after = rest
                        .strip_prefix('[')
                        .ok_or_else(|| format!("expected a record of `{}` (`[...]` or `nil`)", record_type.name))?;
                    rest = after.trim_start();
                    let fields = &record_type.branches[0].fields;
                    if fields.is_empty() {
                        rest = rest.strip_prefix(']').ok_or("expected `]`")?;
                        pack(&[])
                    } else {
                        stack.push(Open { ty: id, branch: 0, fields: Vec::with_capacity(fields.len()), close: ']' });
                        want = fields[0].ty;
                        continue;
                    }
                }
            }
            plain => {
                let (field, after) = field_text(rest)?;
                rest = after;
                match plain {
                    ValueType::Symbol => intern(&field),
                    ty => ty.number(field.trim()).ok_or_else(|| format!("`{}` is no {}", field.trim(), ty.name()))?,
                }
            }
        };
        // The value completes a field of the innermost open record, or the whole text.
        let mut value = value;
        loop {
            rest = rest.trim_start();
            let Some(open) = stack.last_mut() else {
                return match rest.is_empty() {
                    true => Ok(value),
                    false => Err(format!("unexpected `{rest}` after the record")),
                };
            };
            open.fields.push(value);
            let record_type = &types[open.ty.0 as usize];
            let fields = &record_type.branches[open.branch].fields;
            let read = open.fields.len() - usize::from(record_type.adt);
            if read < fields.len() {
                rest = rest
                    .strip_prefix(',')
                    .ok_or_else(|| format!("expected `,` and {} more fields", fields.len() - read))?;
                rest = rest.trim_start();
                want = fields[read].ty;
                break;
            }
            rest = rest.strip_prefix(open.close).ok_or_else(|| format!("expected `{}`", open.close))?;
            let done = stack.pop().expect("an open record");
            value = pack(&done.fields);
        }
    }
}

/// The text of a plain field at the start of `rest`: a quoted string (with `\"` and `\\`
/// escapes), or the text up to the next `,`, `]` or `)`; and what follows it.
fn field_text(rest: &str) -> Result<(String, &str), ReadError> {
    if let Some(quoted) = rest.strip_prefix('"') {
        let mut text = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => return Ok((text, &quoted[i + 1..])),
                '\\' => match chars.next() {
                    Some((_, e)) => text.push(e),
                    None => break,
                },
                c => text.push(c),
            }
        }
        return Err("a quoted field is not closed".into());
    }
    let end = rest.find([',', ']', ')']).unwrap_or(rest.len());
    Ok((rest[..end].trim_end().to_string(), &rest[end..]))
}
