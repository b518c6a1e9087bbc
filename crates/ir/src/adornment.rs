//! Adornments: which argument positions of a call are bound (`b`) or free (`f`).

use std::fmt;

/// One position of an adornment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bf {
    Bound,
    Free,
}

/// A string of `b`/`f`, one per argument position. Kept as data; rendered as `bf` only
/// by [`fmt::Display`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Adornment(pub Vec<Bf>);

impl Adornment {
    pub fn all_free(arity: usize) -> Self {
        Adornment(vec![Bf::Free; arity])
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn is_bound(&self, position: usize) -> bool {
        self.0[position] == Bf::Bound
    }

    /// Positions marked `b`, in order: the columns a demand predicate keeps.
    pub fn bound_positions(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().filter(|(_, bf)| **bf == Bf::Bound).map(|(i, _)| i)
    }

    pub fn bound_count(&self) -> usize {
        self.bound_positions().count()
    }

    /// Parses `"bf"`; `None` on any other character.
    pub fn parse(text: &str) -> Option<Self> {
        text.chars()
            .map(|c| match c {
                'b' => Some(Bf::Bound),
                'f' => Some(Bf::Free),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .map(Adornment)
    }
}

impl fmt::Display for Adornment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for bf in &self.0 {
            f.write_str(match bf {
                Bf::Bound => "b",
                Bf::Free => "f",
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print_round_trip() {
        let a = Adornment::parse("bfb").unwrap();
        assert_eq!(a.to_string(), "bfb");
        assert_eq!(a.bound_positions().collect::<Vec<_>>(), vec![0, 2]);
        assert!(Adornment::parse("bx").is_none());
        assert_eq!(Adornment::all_free(0).to_string(), "");
    }
}
