//! Interning of names and constant values to small integers.

use rustc_hash::FxHashMap;
use std::marker::PhantomData;

/// An interned identifier: a predicate or variable name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Symbol(pub u32);

/// An interned constant value. Values are untyped and identified by their text, so the
/// literal `a`, the string `"a"` and a facts-file field `a` are one `Const`. Evaluation
/// works on the raw `u32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Const(pub u32);

/// Maps strings to dense ids of type `T` and back.
#[derive(Clone, Debug)]
pub struct Interner<T> {
    ids: FxHashMap<Box<str>, u32>,
    texts: Vec<Box<str>>,
    _id: PhantomData<T>,
}

impl<T> Default for Interner<T> {
    fn default() -> Self {
        Interner { ids: FxHashMap::default(), texts: Vec::new(), _id: PhantomData }
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
        if let Some(&id) = self.ids.get(text) {
            return T::from_index(id);
        }
        let id = self.texts.len() as u32;
        self.texts.push(text.into());
        self.ids.insert(text.into(), id);
        T::from_index(id)
    }

    pub fn get(&self, text: &str) -> Option<T> {
        self.ids.get(text).map(|&id| T::from_index(id))
    }

    pub fn text(&self, id: T) -> &str {
        &self.texts[id.index() as usize]
    }

    pub fn len(&self) -> usize {
        self.texts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }
}
