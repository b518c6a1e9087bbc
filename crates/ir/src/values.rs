//! The value store: the texts behind the symbol values tuples hold by id. A program, the
//! programs rewritten from it and the engines evaluating them share one store, and
//! functors that make strings while a rule runs (`cat`, `substr`, `to_string`) add to it,
//! so a value made on any thread means the same text everywhere.

use crate::intern::{hash_text, Table};
use crate::records::{RecordTable, RecordType, RecordView};
use crate::{RecordTypeId, ValueType};
use parking_lot::{MappedRwLockReadGuard, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use regex::Regex;
use rustc_hash::FxHashMap;
use std::fmt;
use std::sync::Arc;

/// A symbol value: the id of a text in a [`ValueStore`]. Values are identified by their
/// text, so the literal `a`, the string `"a"`, a facts-file field `a` and a string a
/// functor computes as `"a"` are one `Const`. Evaluation works on the raw `u32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Const(pub u32);

/// The texts of a program's symbol values, each with a dense id, in the order they were
/// first met.
///
/// Clones share the store: a text added through one is seen through all, with the same
/// id. The store only grows: a value stays after the last fact holding it is deleted,
/// which is safe because an id is never reused for another text (a later fact with the
/// same text gets the same id back), and it costs only the text's bytes.
///
/// Reads share a lock and adding a text takes it alone, so a reader must not hold a
/// [`Text`] or [`Texts`] across an [`ValueStore::intern`] on the same thread.
#[derive(Clone, Default)]
pub struct ValueStore {
    table: Arc<RwLock<Table>>,
    /// The regular expressions `match` has compiled, by the value of their text; none
    /// for a text that is no regular expression. Shared, not cloned: a clone of a
    /// `Regex` starts with an empty cache, which each match would then rebuild.
    patterns: Arc<Mutex<FxHashMap<Const, Option<Arc<Regex>>>>>,
    /// The records made so far, each once (see [`crate::records`]).
    records: Arc<RwLock<RecordTable>>,
    /// The program's record types and algebraic data types, which tell how to read and
    /// write a record value.
    record_types: Arc<RwLock<Arc<[RecordType]>>>,
}

/// The text of one value, borrowed from the store (see [`ValueStore::text`]).
pub type Text<'a> = MappedRwLockReadGuard<'a, str>;

/// The store held for reading many texts in a row, with one lock (see
/// [`ValueStore::texts`]).
pub struct Texts<'a> {
    table: RwLockReadGuard<'a, Table>,
}

impl Texts<'_> {
    pub fn text(&self, id: Const) -> &str {
        self.table.text(id.0)
    }

    pub fn get(&self, text: &str) -> Option<Const> {
        self.table.find(hash_text(text), text).map(Const)
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.len() == 0
    }
}

/// See [`ValueStore::interning`].
pub struct Interning<'a> {
    table: RwLockWriteGuard<'a, Table>,
}

impl Interning<'_> {
    /// [`ValueStore::intern`].
    pub fn intern(&mut self, text: &str) -> Const {
        Const(self.table.intern(hash_text(text), text))
    }
}

impl ValueStore {
    /// The id of `text`, added if new.
    pub fn intern(&self, text: &str) -> Const {
        let hash = hash_text(text);
        // Most texts a running rule makes exist already: look them up without excluding
        // the other threads' readers.
        if let Some(id) = self.table.read_recursive().find(hash, text) {
            return Const(id);
        }
        Const(self.table.write().intern(hash, text))
    }

    /// A handle adding many texts in a row under one lock (loading a facts file).
    pub fn interning(&self) -> Interning<'_> {
        Interning { table: self.table.write() }
    }

    pub fn get(&self, text: &str) -> Option<Const> {
        self.table.read_recursive().find(hash_text(text), text).map(Const)
    }

    /// The text of `id`, which must be a value of this store.
    pub fn text(&self, id: Const) -> Text<'_> {
        RwLockReadGuard::map(self.table.read_recursive(), |table| table.text(id.0))
    }

    /// The store held for reading: printers and comparisons that read many texts take
    /// the lock once.
    pub fn texts(&self) -> Texts<'_> {
        Texts { table: self.table.read_recursive() }
    }

    pub fn len(&self) -> usize {
        self.table.read_recursive().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the regular expression `pattern` matches all of `text`, as Soufflé's
    /// `match` (ECMAScript syntax, read here by the `regex` crate, which has no
    /// backreferences or lookaround); none when `pattern` is no regular expression, which
    /// makes Soufflé's `match` and `!match` both false (see [`pattern_error`]).
    pub fn matches(&self, pattern: Const, text: Const) -> Option<bool> {
        let compiled = {
            let mut patterns = self.patterns.lock();
            patterns.entry(pattern).or_insert_with(|| whole_match(&self.text(pattern)).ok().map(Arc::new)).clone()
        };
        compiled.map(|regex| regex.is_match(&self.text(text)))
    }

    /// The id of the record holding `fields` (for an algebraic data type, after the
    /// branch index), added if new.
    pub fn pack(&self, fields: &[u32]) -> u32 {
        if let Some(id) = self.records.read_recursive().find(fields) {
            return id;
        }
        self.records.write().insert(fields)
    }

    /// Field `index` of record `record` as stored; none for `nil`, or a record with
    /// fewer fields (another branch of an algebraic data type).
    pub fn field(&self, record: u32, index: usize) -> Option<u32> {
        self.records.read_recursive().fields(record)?.get(index).copied()
    }

    /// How many records the store holds.
    pub fn records_len(&self) -> usize {
        self.records.read_recursive().len()
    }

    /// Sets the record types the program declares (once, by the front end).
    pub fn set_record_types(&self, types: Vec<RecordType>) {
        *self.record_types.write() = types.into();
    }

    pub fn record_types(&self) -> Arc<[RecordType]> {
        self.record_types.read_recursive().clone()
    }

    pub fn record_type(&self, id: RecordTypeId) -> RecordType {
        self.record_types.read_recursive()[id.0 as usize].clone()
    }

    /// Calls `f` with a view of the records and their types.
    fn with_records<T>(&self, f: impl FnOnce(&RecordView<'_>) -> T) -> T {
        let types = self.record_types();
        let table = self.records.read_recursive();
        let texts = self.table.read_recursive();
        f(&RecordView { types: &types, table: &table, texts: &texts })
    }

    /// Appends the text of a record value of type `ty` as Soufflé writes it (`[1, nil]`,
    /// `$Circle(3)`); symbols inside it are written as they are.
    pub fn write_record(&self, out: &mut String, ty: ValueType, raw: u32) {
        self.write_record_with(out, ty, raw, &|out, text| out.push_str(text));
    }

    /// [`ValueStore::write_record`], each symbol inside written by `symbol`.
    pub fn write_record_with(&self, out: &mut String, ty: ValueType, raw: u32, symbol: &dyn Fn(&mut String, &str)) {
        self.with_records(|view| view.write(out, ty, raw, symbol));
    }

    /// The order outputs list two values of record type `ty` in (see
    /// `records.rs`).
    pub fn compare_records(&self, ty: ValueType, a: u32, b: u32) -> std::cmp::Ordering {
        self.with_records(|view| view.compare(ty, a, b))
    }

    /// Sorts record values of type `ty` in the order of [`ValueStore::compare_records`],
    /// under one lock.
    pub fn sort_records(&self, ty: ValueType, values: &mut [u32]) {
        self.with_records(|view| values.sort_by(|&a, &b| view.compare(ty, a, b)));
    }

    /// The record of type `ty` whose text is `text`, with its symbols and records added
    /// to the store; the reason when the text is none.
    pub fn read_record(&self, ty: RecordTypeId, text: &str) -> Result<u32, String> {
        self.read_record_with(ty, text, &mut |s| self.intern(s).0)
    }

    /// [`ValueStore::read_record`], adding symbols with `intern` (a caller holding an
    /// `Interning` passes its own).
    pub fn read_record_with(
        &self,
        ty: RecordTypeId,
        text: &str,
        intern: &mut dyn FnMut(&str) -> u32,
    ) -> Result<u32, String> {
        let types = self.record_types();
        crate::records::read(&types, ty, text, intern, &mut |fields| self.pack(fields))
    }

    /// The type of argument `i` of `functor`: a record's from its type's fields.
    pub fn parameter(&self, functor: &crate::Functor, i: usize) -> Option<ValueType> {
        match functor {
            crate::Functor::Record { ty, branch, .. } => {
                let types = self.record_types.read_recursive();
                let branch = &types[ty.0 as usize].branches[usize::from(branch.unwrap_or(0))];
                branch.fields.get(i).map(|f| f.ty)
            }
            other => other.parameter(i),
        }
    }

    /// Whether two handles are one store.
    pub fn same_store(&self, other: &ValueStore) -> bool {
        Arc::ptr_eq(&self.table, &other.table)
    }
}

/// `pattern` as a regular expression that must match a whole text.
fn whole_match(pattern: &str) -> Result<Regex, regex::Error> {
    Regex::new(&format!("^(?:{pattern})$"))
}

/// Why `pattern` is no regular expression `match` can use, if it is none: the front end
/// reports a constant pattern once, where Soufflé warns at each evaluation.
pub fn pattern_error(pattern: &str) -> Option<String> {
    match whole_match(pattern) {
        Ok(_) => None,
        Err(regex::Error::Syntax(why)) => Some(why.lines().last().unwrap_or_default().trim().to_string()),
        Err(other) => Some(other.to_string()),
    }
}

impl fmt::Debug for ValueStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValueStore").field("texts", &*self.table.read_recursive()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_store() {
        let a = ValueStore::default();
        let x = a.intern("x");
        let b = a.clone();
        assert!(a.same_store(&b));
        assert_eq!(b.intern("x"), x);
        let y = b.intern("y");
        assert_eq!((a.get("y"), &*a.text(y)), (Some(y), "y"), "a text added through a clone is seen by all");
        let mut many = a.interning();
        assert_eq!((many.intern("x"), many.intern("z")), (x, Const(2)));
        drop(many);
        let texts = b.texts();
        assert_eq!((texts.text(Const(2)), texts.get("z")), ("z", Some(Const(2))));
        // Reading again while a read is held does not wait.
        assert_eq!(&*a.text(x), "x");
    }

    #[test]
    fn threads_adding_the_same_texts_agree_on_their_ids() {
        let store = ValueStore::default();
        let ids: Vec<Vec<Const>> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..4)
                .map(|t| {
                    let store = store.clone();
                    s.spawn(move || (0..500).map(|i| store.intern(&format!("v{}", (i * (t + 1)) % 500))).collect())
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        assert_eq!(store.len(), 500);
        for (t, ids) in ids.iter().enumerate() {
            for (i, id) in ids.iter().enumerate() {
                assert_eq!(&*store.text(*id), format!("v{}", (i * (t + 1)) % 500));
            }
        }
    }

    #[test]
    fn match_compiles_a_pattern_once_and_matches_whole_texts() {
        let store = ValueStore::default();
        let (pattern, bad) = (store.intern("h.*o"), store.intern("["));
        let [hello, oh] = ["hello", "ohello!"].map(|t| store.intern(t));
        assert_eq!(store.matches(pattern, hello), Some(true));
        assert_eq!(store.matches(pattern, oh), Some(false), "the whole text must match");
        assert_eq!(store.matches(bad, hello), None, "no pattern");
        assert!(pattern_error("[").is_some());
        assert_eq!(pattern_error("a|b"), None);
    }

    #[test]
    fn debug_lists_the_texts_in_id_order() {
        let store = ValueStore::default();
        store.intern("b");
        store.intern("a");
        assert_eq!(format!("{store:?}"), r#"ValueStore { texts: ["b", "a"] }"#);
    }
}
