//! The generator literal `X = range(from, to[, step])` of a rule body, and the values
//! it gives (docs/semantics.md, "Ranges").

use crate::{BinOp, CmpOp, Expr, Span, Symbol, Term, ValueType};

/// `var = range(from, to[, step])`: binds `var` to each value of the range, once the
/// variables its bounds (and step) read are bound by the rule's other literals. The
/// values are of type `domain` (`number`, `unsigned` or `float`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Generator {
    pub var: Symbol,
    pub from: Expr,
    pub to: Expr,
    pub step: Option<Expr>,
    pub domain: ValueType,
    pub span: Span,
}

impl Generator {
    /// The bounds and the step, in that order.
    pub fn operands(&self) -> impl Iterator<Item = &Expr> {
        [&self.from, &self.to].into_iter().chain(&self.step)
    }

    /// The variables the bounds and the step read, with repeats.
    pub fn reads(&self) -> impl Iterator<Item = Symbol> + '_ {
        self.operands().flat_map(Expr::vars)
    }

    /// The leaves of the bounds and the step.
    pub fn leaves(&self) -> impl Iterator<Item = &Term> {
        self.operands().flat_map(Expr::leaves)
    }
}

/// The values of one range, as Soufflé 2.5 steps it: from `from` while before `to`, by
/// `step` (`x = from; x < to; x += step` for a positive step, `to < x` for a negative
/// one; a step of 0, or "not a number", gives `from` once unless it is `to`). Without a
/// step a range counts up by 1 when `from < to` and down by 1 when `to < from`. A next
/// value must also lie past the last, so a step that wraps a 32-bit integer around, or
/// is too small to change a float, ends the range. Values are tuple bits of `domain`.
#[derive(Clone, Debug)]
pub struct RangeValues {
    domain: ValueType,
    to: u32,
    next: Option<u32>,
    /// How the value after one is made, and whether the range counts up; none when the
    /// range has one value at most.
    motion: Option<(BinOp, u32, bool)>,
}

impl RangeValues {
    /// The values of `range(from, to)` (`step` none) or `range(from, to, step)` over
    /// values of `domain`.
    pub fn new(domain: ValueType, from: u32, to: u32, step: Option<u32>) -> Self {
        let holds = |op: CmpOp, a: u32, b: u32| op.holds_for(a, b, domain, None);
        let one = if domain == ValueType::Float { 1.0f32.to_bits() } else { 1 };
        let (first, motion) = match step {
            None if holds(CmpOp::Lt, from, to) => (true, Some((BinOp::Add, one, true))),
            None if holds(CmpOp::Lt, to, from) => (true, Some((BinOp::Sub, one, false))),
            None => (false, None),
            Some(step) if holds(CmpOp::Gt, step, 0) => (holds(CmpOp::Lt, from, to), Some((BinOp::Add, step, true))),
            Some(step) if holds(CmpOp::Lt, step, 0) => (holds(CmpOp::Lt, to, from), Some((BinOp::Add, step, false))),
            Some(step) if holds(CmpOp::Eq, step, 0) || holds(CmpOp::Ne, step, step) => {
                (holds(CmpOp::Ne, from, to), None)
            }
            Some(_) => (false, None),
        };
        RangeValues { domain, to, next: first.then_some(from), motion }
    }
}

/// Whether `value` is a value of the range [`RangeValues::new`] makes of the same
/// arguments: for integers by arithmetic (no value before `to` wraps around, so none
/// is missed), for floats, whose steps round, by stepping through the range.
pub fn in_range(domain: ValueType, from: u32, to: u32, step: Option<u32>, value: u32) -> bool {
    let wide = |v: u32| match domain {
        ValueType::Unsigned => i64::from(v),
        _ => i64::from(v as i32),
    };
    match domain {
        ValueType::Number | ValueType::Unsigned => {
            let (from, to, value) = (wide(from), wide(to), wide(value));
            let step = match step {
                None if from < to => 1,
                None => -1,
                Some(step) => wide(step),
            };
            if step > 0 {
                from < to && from <= value && value < to && (value - from) % step == 0
            } else if step < 0 {
                to < from && to < value && value <= from && (from - value) % -step == 0
            } else {
                from != to && value == from
            }
        }
        _ => RangeValues::new(domain, from, to, step).any(|v| CmpOp::Eq.holds_for(v, value, domain, None)),
    }
}

impl Iterator for RangeValues {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let value = self.next.take()?;
        if let Some((op, by, up)) = self.motion {
            let holds = |op: CmpOp, a: u32, b: u32| op.holds_for(a, b, self.domain, None);
            self.next = op.apply(value, by, self.domain).filter(|&after| {
                if up {
                    holds(CmpOp::Lt, after, self.to) && holds(CmpOp::Lt, value, after)
                } else {
                    holds(CmpOp::Lt, self.to, after) && holds(CmpOp::Lt, after, value)
                }
            });
        }
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(from: i32, to: i32, step: Option<i32>) -> Vec<i32> {
        RangeValues::new(ValueType::Number, from as u32, to as u32, step.map(|s| s as u32)).map(|v| v as i32).collect()
    }

    fn floats(from: f32, to: f32, step: Option<f32>) -> Vec<f32> {
        RangeValues::new(ValueType::Float, from.to_bits(), to.to_bits(), step.map(f32::to_bits))
            .map(f32::from_bits)
            .collect()
    }

    #[test]
    fn integer_ranges_step_as_souffle_does() {
        assert_eq!(numbers(1, 4, None), [1, 2, 3]);
        assert_eq!(numbers(4, 1, None), [4, 3, 2]);
        assert_eq!(numbers(3, 3, None), Vec::<i32>::new());
        assert_eq!(numbers(0, 10, Some(4)), [0, 4, 8]);
        assert_eq!(numbers(10, 0, Some(-4)), [10, 6, 2]);
        assert_eq!(numbers(0, 10, Some(-1)), Vec::<i32>::new());
        assert_eq!(numbers(5, 9, Some(0)), [5]);
        assert_eq!(numbers(5, 5, Some(0)), Vec::<i32>::new());
        // A step past the largest number wraps around and ends the range.
        assert_eq!(numbers(i32::MAX - 1, i32::MAX, Some(i32::MAX)), [i32::MAX - 1]);
        let unsigned: Vec<u32> = RangeValues::new(ValueType::Unsigned, 3, 0, None).collect();
        assert_eq!(unsigned, [3, 2, 1]);
    }

    /// Membership agrees with the values stepped, for every small range and value.
    #[test]
    fn a_value_is_in_a_range_exactly_when_the_range_steps_onto_it() {
        for (from, to) in (-6..6).flat_map(|a| (-6..6).map(move |b| (a, b))) {
            for step in [None, Some(0), Some(1), Some(2), Some(3), Some(-1), Some(-4)] {
                let values = numbers(from, to, step);
                for value in -8..8 {
                    let raw = |n: i32| n as u32;
                    let found = in_range(ValueType::Number, raw(from), raw(to), step.map(raw), raw(value));
                    assert_eq!(found, values.contains(&value), "{value} in range({from}, {to}, {step:?})");
                }
            }
        }
        assert!(in_range(ValueType::Unsigned, 3, 0, None, 1));
        assert!(!in_range(ValueType::Unsigned, 3, 0, None, 0));
        assert!(in_range(ValueType::Float, 0f32.to_bits(), 1f32.to_bits(), Some(0.25f32.to_bits()), 0.5f32.to_bits()));
    }

    #[test]
    fn float_ranges_stop_where_a_step_changes_nothing() {
        assert_eq!(floats(0.0, 1.0, Some(0.25)), [0.0, 0.25, 0.5, 0.75]);
        assert_eq!(floats(1.0, 3.0, None), [1.0, 2.0]);
        assert_eq!(floats(1.0, 2.0, Some(f32::NAN)), [1.0]);
        assert_eq!(floats(1e9, 2e9, Some(1.0)), [1e9]);
    }
}
