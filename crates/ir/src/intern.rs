//! Interning of names and constant values to small integers.

use hashbrown::hash_table::{Entry, HashTable};
use rustc_hash::FxHasher;
use std::fmt;
use std::hash::Hasher;
use std::marker::PhantomData;
use std::sync::Arc;

/// An interned identifier: a predicate or variable name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Symbol(pub u32);

/// Maps strings to dense ids of type `T` and back.
///
/// The table is shared copy-on-write: cloning an interner (as every rewritten program
/// does with its source's) is O(1), and only a clone that interns a new string pays for
/// its own copy.
#[derive(Clone)]
pub struct Interner<T> {
    table: Arc<Table>,
    _id: PhantomData<T>,
}

/// The strings of an interner. Loading a large facts file interns millions of values, so
/// the texts live in one buffer (a new string is no allocation of its own, and dropping
/// the table frees three blocks, not one per string), and the index holds only ids with
/// their hashes: it finds a string's id by hashing the text once and comparing against
/// the buffer, and it grows without reading a single text.
#[derive(Clone)]
pub(crate) struct Table {
    /// Entries [`Slot`], found by the hash of their text.
    index: HashTable<Slot>,
    /// Every text, one after another, in id order.
    buffer: String,
    /// Text `i` is `buffer[bounds[i]..bounds[i + 1]]`; starts as `[0]`.
    bounds: Vec<usize>,
}

impl Default for Table {
    fn default() -> Self {
        Table { index: HashTable::new(), buffer: String::new(), bounds: vec![0] }
    }
}

/// An entry of the index: a text's id and 32 bits of its hash.
#[derive(Clone, Copy)]
struct Slot {
    id: u32,
    hash: u32,
}

/// 32 bits of the hash of a text; only the bytes are hashed (`str`'s `Hash` adds a
/// terminator byte, which a table of strings alone does not need).
pub(crate) fn hash_text(text: &str) -> u32 {
    let mut hasher = FxHasher::default();
    hasher.write(text.as_bytes());
    (hasher.finish() >> 32) as u32
}

/// The hash the index files a slot under, from the 32 bits it keeps. The index takes the
/// bucket from the low bits and a tag from the top 7, so the multiplication (by an odd
/// constant, the golden ratio's) spreads all 32 bits into the top.
fn table_hash(hash: u32) -> u64 {
    u64::from(hash).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Text `id` of a table, from its buffer and bounds; a free function so that the index's
/// callbacks can borrow these two fields while the index itself is borrowed mutably.
fn text_of<'a>(buffer: &'a str, bounds: &[usize], id: u32) -> &'a str {
    let id = id as usize;
    &buffer[bounds[id]..bounds[id + 1]]
}

impl Table {
    pub(crate) fn len(&self) -> usize {
        self.bounds.len() - 1
    }

    pub(crate) fn text(&self, id: u32) -> &str {
        text_of(&self.buffer, &self.bounds, id)
    }

    pub(crate) fn find(&self, hash: u32, text: &str) -> Option<u32> {
        let eq = |s: &Slot| s.hash == hash && text_of(&self.buffer, &self.bounds, s.id) == text;
        self.index.find(table_hash(hash), eq).map(|s| s.id)
    }

    /// The id of `text` (whose hash is `hash`), added if new: one probe of the index.
    pub(crate) fn intern(&mut self, hash: u32, text: &str) -> u32 {
        let Table { index, buffer, bounds } = self;
        let eq = |s: &Slot| s.hash == hash && text_of(buffer, bounds, s.id) == text;
        match index.entry(table_hash(hash), eq, |s| table_hash(s.hash)) {
            Entry::Occupied(entry) => entry.get().id,
            Entry::Vacant(entry) => {
                let id = u32::try_from(bounds.len() - 1).expect("fewer than 2^32 interned strings");
                buffer.push_str(text);
                bounds.push(buffer.len());
                entry.insert(Slot { id, hash });
                id
            }
        }
    }
}

impl fmt::Debug for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries((0..self.len() as u32).map(|id| text_of(&self.buffer, &self.bounds, id))).finish()
    }
}

impl<T> fmt::Debug for Interner<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Interner").field("texts", &self.table).finish()
    }
}

impl<T> Default for Interner<T> {
    fn default() -> Self {
        Interner { table: Arc::default(), _id: PhantomData }
    }
}

/// Conversion between an id type and its index.
pub trait InternId: Copy {
    fn from_index(index: u32) -> Self;
    fn index(self) -> u32;
}

impl InternId for Symbol {
    fn from_index(index: u32) -> Self {
        Symbol(index)
    }
    fn index(self) -> u32 {
        self.0
    }
}

impl<T: InternId> Interner<T> {
    pub fn intern(&mut self, text: &str) -> T {
        let hash = hash_text(text);
        let table = match Arc::get_mut(&mut self.table) {
            Some(table) => table,
            None => {
                // A shared table is copied only for a string it lacks.
                if let Some(id) = self.table.find(hash, text) {
                    return T::from_index(id);
                }
                Arc::make_mut(&mut self.table)
            }
        };
        T::from_index(table.intern(hash, text))
    }

    /// A handle interning many strings in a row, which looks at the sharing of the table
    /// once instead of per string (an atomic operation each time): a table a clone shares
    /// is copied here, since a run of many strings will almost surely add one.
    pub fn interning(&mut self) -> Interning<'_, T> {
        Interning { table: Arc::make_mut(&mut self.table), _id: PhantomData }
    }

    pub fn get(&self, text: &str) -> Option<T> {
        self.table.find(hash_text(text), text).map(T::from_index)
    }

    pub fn text(&self, id: T) -> &str {
        text_of(&self.table.buffer, &self.table.bounds, id.index())
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.len() == 0
    }
}

/// See [`Interner::interning`].
pub struct Interning<'a, T> {
    table: &'a mut Table,
    _id: PhantomData<T>,
}

impl<T: InternId> Interning<'_, T> {
    /// [`Interner::intern`].
    pub fn intern(&mut self, text: &str) -> T {
        T::from_index(self.table.intern(hash_text(text), text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_until_one_interns_something_new() {
        let mut a: Interner<Symbol> = Interner::default();
        let x = a.intern("x");
        let mut b = a.clone();
        assert!(Arc::ptr_eq(&a.table, &b.table));
        assert_eq!(b.intern("x"), x, "an existing string does not copy the table");
        assert!(Arc::ptr_eq(&a.table, &b.table));
        let y = b.intern("y");
        assert_eq!(b.text(y), "y");
        assert_eq!(a.get("y"), None, "the original is unchanged");
        assert_eq!(a.len(), 1);
        let mut c = a.clone();
        let mut many = c.interning();
        assert_eq!((many.intern("x"), many.intern("z")), (x, Symbol(1)));
        assert_eq!((c.text(Symbol(1)), a.get("z")), ("z", None), "a handle interns into its own copy");
    }

    #[test]
    fn ids_are_dense_and_survive_the_index_growing() {
        let mut interner: Interner<Symbol> = Interner::default();
        assert!(interner.is_empty());
        let texts: Vec<String> = (0..5000).map(|i| format!("v{i}")).chain(["".into(), "ü,\t\"x\"".into()]).collect();
        for (i, text) in texts.iter().enumerate() {
            assert_eq!(interner.intern(text), Symbol(i as u32));
        }
        assert_eq!(interner.len(), texts.len());
        for (i, text) in texts.iter().enumerate() {
            assert_eq!(interner.intern(text), Symbol(i as u32), "interning again finds the same id");
            assert_eq!(interner.get(text), Some(Symbol(i as u32)));
            assert_eq!(interner.text(Symbol(i as u32)), text);
        }
        assert_eq!(interner.get("v5000"), None);
        assert_eq!(interner.len(), texts.len());
    }

    #[test]
    fn debug_lists_the_texts_in_id_order() {
        let mut interner: Interner<Symbol> = Interner::default();
        interner.intern("b");
        interner.intern("a");
        assert_eq!(format!("{interner:?}"), r#"Interner { texts: ["b", "a"] }"#);
    }
}
