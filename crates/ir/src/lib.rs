//! The intermediate representation every pass after parsing works on.
//!
//! A [`Program`] owns interned symbols and constants, an arena of predicates
//! ([`PredId`]), rules ([`RuleId`]) with provenance ([`Origin`]), inline EDB facts and at
//! most one [`Query`]. Every rule, atom and term carries the [`Span`] of the source text
//! it came from; generated rules carry the span of the source rule or query they were
//! derived from. Generated predicate names (`@a:p^bf`, `@m:p^bf`) are structured data
//! ([`PredName`]) and become text only in the printers of this crate.

mod adornment;
mod display;
mod dominance;
mod expr;
mod float;
mod functor;
mod generator;
mod graph;
mod intern;
mod program;
mod records;
mod tuples;
mod validate;
mod values;

pub use adornment::{Adornment, Bf};
pub use diag::{FileId, Span};
pub use display::{
    is_bare_constant, write_constant, DisplayAtom, DisplayDominance, DisplayPred, DisplayQuery, DisplayRule,
    DisplayTerm, DisplayTuple, DisplayTypedRule, DisplayValue,
};
pub use dominance::{DominanceFacts, DominancePlan, DominanceStep, Known};
pub use expr::{BinOp, DisplayExpr, Expr, ExprNode, UnOp, PREFIX_PRECEDENCE};
pub use float::{float_json_text, float_text, parse_float};
pub use functor::{Functor, FunctorValue, UserFunction, UserFunctor};
pub use generator::{in_range, Generator, RangeValues};
pub use graph::strongly_connected;
pub use intern::{InternId, Interner, Symbol};
pub use program::{
    integer_value, parse_integer, unsigned_value, AggregateOp, Aggregation, Atom, ChoiceDomain, CmpOp, Comparison,
    Dominance, Fact, FieldPattern, Origin, Pred, PredId, PredKind, PredName, Program, Query, RecordPatterns, Rule,
    RuleId, SizeLimit, Term, TermKind, Value, ValueType,
};
pub use records::{Branch, Field, RecordType, RecordTypeId};
pub use tuples::{one_per_fact, radix_sort, FactsByPred, Tally, Tuple, Tuples, Update};
pub use validate::{validate, IrError};
pub use values::{pattern_error, Const, Text, Texts, ValueStore};
