//! Interning of names and constant values to small integers.

use rustc_hash::FxHashMap;
use std::marker::PhantomData;
use std::sync::Arc;

/// An interned identifier: a predicate or variable name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Symbol(pub u32);

/// An interned constant value. Values are untyped and identified by their text, so the
/// literal `a`, the string `"a"` and a facts-file field `a` are one `Const`. Evaluation
/// works on the raw `u32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Const(pub u32);

/// Maps strings to dense ids of type `T` and back.
///
/// The table is shared copy-on-write: cloning an interner (as every rewritten program
/// does with its source's) is O(1), and only a clone that interns a new string pays for
/// its own copy.
#[derive(Clone, Debug)]
pub struct Interner<T> {
    table: Arc<Table>,
    _id: PhantomData<T>,
}

#[derive(Clone, Debug, Default)]
struct Table {
    ids: FxHashMap<Box<str>, u32>,
    texts: Vec<Box<str>>,
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

impl InternId for Const {
    fn from_index(index: u32) -> Self {
        Const(index)
    }
    fn index(self) -> u32 {
        self.0
    }
}

impl<T: InternId> Interner<T> {
    pub fn intern(&mut self, text: &str) -> T {
        if let Some(&id) = self.table.ids.get(text) {
            return T::from_index(id);
        }
        let table = Arc::make_mut(&mut self.table);
        let id = table.texts.len() as u32;
        table.texts.push(text.into());
        table.ids.insert(text.into(), id);
        T::from_index(id)
    }

    pub fn get(&self, text: &str) -> Option<T> {
        self.table.ids.get(text).map(|&id| T::from_index(id))
    }

    pub fn text(&self, id: T) -> &str {
        &self.table.texts[id.index() as usize]
    }

    pub fn len(&self) -> usize {
        self.table.texts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.texts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_until_one_interns_something_new() {
        let mut a: Interner<Const> = Interner::default();
        let x = a.intern("x");
        let mut b = a.clone();
        assert!(Arc::ptr_eq(&a.table, &b.table));
        assert_eq!(b.intern("x"), x, "an existing string does not copy the table");
        assert!(Arc::ptr_eq(&a.table, &b.table));
        let y = b.intern("y");
        assert_eq!(b.text(y), "y");
        assert_eq!(a.get("y"), None, "the original is unchanged");
        assert_eq!(a.len(), 1);
    }
}
