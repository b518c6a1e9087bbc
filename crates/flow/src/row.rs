//! Fixed-width rows: the values of one tuple (or one join key, or one partial binding)
//! inline in a small array, so that the dataflow moves and compares plain bytes rather
//! than allocating a vector per tuple.

use serde::{Deserialize, Serialize};

/// The most values a row holds: the widest relation, join key or set of live variables
/// the backend evaluates. Wider programs are refused before the dataflow is built
/// ([`crate::Error::TooWide`]).
pub const MAX_WIDTH: usize = 8;

/// Up to [`MAX_WIDTH`] values. The unused tail is always zero, so the derived order,
/// equality and hash are those of the used prefix (rows of one relation share a length).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Row {
    len: u8,
    values: [u32; MAX_WIDTH],
}

impl Row {
    /// The row of no values (nullary relations, empty join keys).
    pub const EMPTY: Row = Row { len: 0, values: [0; MAX_WIDTH] };

    /// The row of `values`; the caller has checked that there are at most [`MAX_WIDTH`].
    pub fn new(values: &[u32]) -> Row {
        let mut row = Row::EMPTY;
        for &v in values {
            row.push(v);
        }
        row
    }

    /// The row of `values`, or `None` when there are more than [`MAX_WIDTH`].
    pub fn try_new(values: &[u32]) -> Option<Row> {
        (values.len() <= MAX_WIDTH).then(|| Row::new(values))
    }

    /// Appends a value. Widths are checked when the dataflow is planned, so a push past
    /// the end is a bug in this crate.
    pub fn push(&mut self, value: u32) {
        self.values[usize::from(self.len)] = value;
        self.len += 1;
    }

    /// The values in the row.
    pub fn values(&self) -> &[u32] {
        &self.values[..usize::from(self.len)]
    }

    /// The values at `positions`, in that order.
    pub fn select(&self, positions: &[usize]) -> Row {
        let mut row = Row::EMPTY;
        for &p in positions {
            row.push(self.values[p]);
        }
        row
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_compare_as_their_values() {
        let (a, b) = (Row::new(&[1, 2]), Row::new(&[1, 3]));
        assert!(a < b);
        assert_eq!(Row::new(&[4, 5, 6]).select(&[2, 0]), Row::new(&[6, 4]));
        assert_eq!(Row::new(&[]).values(), &[] as &[u32]);
        assert!(Row::try_new(&[0; MAX_WIDTH + 1]).is_none());
        assert_eq!(Row::try_new(&[7; MAX_WIDTH]).map(|r| r.values().len()), Some(MAX_WIDTH));
    }
}
