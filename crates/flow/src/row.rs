//! Fixed-width rows: the values of one tuple (or one join key, or one partial binding)
//! inline in a small array, so that the dataflow moves and compares plain bytes rather
//! than allocating a vector per tuple. A row is the dataflow's record, not a fact: it
//! has no predicate, and it leaves this crate only in an [`crate::Applied`] report, which
//! the pipeline turns into `ir`'s facts.

use serde::de::{Error as _, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The most values a row holds: the widest relation, join key or set of live variables
/// the backend evaluates. Wider programs are refused before the dataflow is built
/// ([`crate::Error::TooWide`]).
pub const MAX_WIDTH: usize = 8;

/// Up to `N` values. The unused tail is always zero, so the derived order, equality and
/// hash are those of the used prefix (rows of one relation share a length). The
/// dataflow's rows are as wide as its program needs (`N` of 2, 4 or 8, chosen once when
/// it is built): every arrangement holds rows, and a pair in a row of 8 took 36 bytes
/// where it takes 12 in a row of 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Row<const N: usize = MAX_WIDTH> {
    len: u8,
    values: [u32; N],
}

impl<const N: usize> Row<N> {
    /// The row of no values (nullary relations, empty join keys).
    pub const EMPTY: Row<N> = Row { len: 0, values: [0; N] };

    /// The row of `values`; the caller has checked that there are at most `N`.
    pub fn new(values: &[u32]) -> Row<N> {
        let mut row = Row::EMPTY;
        for &v in values {
            row.push(v);
        }
        row
    }

    /// The row of `values`, or `None` when there are more than `N`.
    pub fn try_new(values: &[u32]) -> Option<Row<N>> {
        (values.len() <= N).then(|| Row::new(values))
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
    pub fn select(&self, positions: &[usize]) -> Row<N> {
        let mut row = Row::EMPTY;
        for &p in positions {
            row.push(self.values[p]);
        }
        row
    }
}

/// A row crosses the network (between the processes of a cluster) as the sequence of
/// its values.
impl<const N: usize> Serialize for Row<N> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.values())
    }
}

impl<'de, const N: usize> Deserialize<'de> for Row<N> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Row<N>, D::Error> {
        struct Values<const N: usize>;
        impl<'de, const N: usize> Visitor<'de> for Values<N> {
            type Value = Row<N>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "a sequence of at most {N} values")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Row<N>, A::Error> {
                let mut row = Row::EMPTY;
                while let Some(value) = seq.next_element::<u32>()? {
                    if usize::from(row.len) == N {
                        return Err(A::Error::invalid_length(N + 1, &self));
                    }
                    row.push(value);
                }
                Ok(row)
            }
        }
        deserializer.deserialize_seq(Values::<N>)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_compare_as_their_values() {
        let (a, b): (Row, Row) = (Row::new(&[1, 2]), Row::new(&[1, 3]));
        assert!(a < b);
        assert_eq!(Row::<3>::new(&[4, 5, 6]).select(&[2, 0]), Row::new(&[6, 4]));
        assert_eq!(Row::<2>::new(&[]).values(), &[] as &[u32]);
        assert!(Row::<MAX_WIDTH>::try_new(&[0; MAX_WIDTH + 1]).is_none());
        assert_eq!(Row::<MAX_WIDTH>::try_new(&[7; MAX_WIDTH]).map(|r| r.values().len()), Some(MAX_WIDTH));
        assert!(Row::<2>::try_new(&[1, 2, 3]).is_none());
        assert_eq!(std::mem::size_of::<Row<2>>(), 12);
    }
}
