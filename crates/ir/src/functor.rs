//! The built-in functors: Soufflé 2.5's functions on strings (`cat`, `strlen`, `substr`,
//! `ord`) and its conversions between types (`to_number`, `to_unsigned`, `to_float`,
//! `to_string`) and its cast `as(x, T)`, each with its signature and its semantics on
//! values as tuples hold them; records and their fields ([`crate::records`]); and the
//! functors a Soufflé program declares (`.functor`), whose function the caller binds
//! ([`UserFunctor`]), so that evaluation loads no code itself.

use crate::float::{float_string, float_to_number, float_to_unsigned, leading_float};
use crate::{Const, RecordTypeId, ValueStore, ValueType};
use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

/// A functor, as an expression node calls it. A conversion carries the type of its
/// argument, which the front end resolves once (`to_string` of an `unsigned` prints it
/// as unsigned).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Functor {
    /// `cat(a, b, ...)`: the texts of its arguments one after another.
    Cat(u8),
    /// `strlen(s)`: the length of a text in bytes.
    Strlen,
    /// `substr(s, i, n)`: the bytes `i..i+n` of a text (to its end when `n` is negative
    /// or reaches past it); the empty text when `i` is outside `0..=strlen(s)`.
    Substr,
    /// `ord(x)` of a value of the type it holds: the value's 32 bits as a number, as
    /// Soufflé 2.5 has it: a symbol's or a record's id in the value store (which numbers
    /// symbols by when it first met them), a number itself, a float's bits.
    Ord(ValueType),
    /// `to_number(x)`: the integer a text writes, or another numeric value's bits.
    ToNumber(ValueType),
    /// `to_unsigned(x)`: likewise, as an `unsigned`.
    ToUnsigned(ValueType),
    /// `to_float(x)`: the float a text writes, or the float nearest an integer.
    ToFloat(ValueType),
    /// `to_string(x)`: a number's decimal text.
    ToString(ValueType),
    /// `as(x, T)`: the value of `x` (of the first type) taken as one of `T` (the
    /// second), its 32 bits unchanged, as Soufflé 2.5 reinterprets them: `as(1, float)`
    /// is the float whose bits are 1, `as(s, number)` a symbol's id. A number cast to a
    /// symbol must be the id of a text the store holds (Soufflé stops with a
    /// segmentation fault otherwise; here it has no value).
    Cast(ValueType, ValueType),
    /// `[a, b]` of a record type, or `$B(a, b)` of branch `B` of an algebraic data
    /// type: the record of the arguments (after the branch's index), made if new.
    Record { ty: RecordTypeId, branch: Option<u16>, arity: u8 },
    /// `nil` of a record type: the record 0.
    Nil(RecordTypeId),
    /// Field `index` (as stored: an algebraic data type's branch index is field 0) of a
    /// record of type `ty`, a value of type `result`; no value for `nil` or a record with
    /// fewer fields. The front end reads a record pattern (`r([a, b])`) with it.
    Field { ty: RecordTypeId, index: u8, result: ValueType },
    /// `@f(x, ...)`: a functor the program declares, computed by the function bound to
    /// its declaration. Every call of one declaration shares it.
    User(Arc<UserFunctor>),
}

impl Functor {
    /// The functor a name calls with `arity` arguments (a conversion as from a symbol,
    /// until the front end knows its argument's type); none for another name. `itou`
    /// and `utoi` are Soufflé's older names of two conversions.
    pub fn from_name(name: &str, arity: usize) -> Option<Functor> {
        Some(match name {
            "cat" => Functor::Cat(u8::try_from(arity).ok()?),
            "strlen" => Functor::Strlen,
            "substr" => Functor::Substr,
            "ord" => Functor::Ord(ValueType::Symbol),
            "to_number" => Functor::ToNumber(ValueType::Symbol),
            "to_unsigned" => Functor::ToUnsigned(ValueType::Symbol),
            "to_float" => Functor::ToFloat(ValueType::Symbol),
            "to_string" => Functor::ToString(ValueType::Number),
            "itou" => Functor::ToUnsigned(ValueType::Number),
            "utoi" => Functor::ToNumber(ValueType::Unsigned),
            // The front ends read the target type after the value (`as(x, float)`) and
            // give it with `with_target`.
            "as" => Functor::Cast(ValueType::Symbol, ValueType::Symbol),
            _ => return None,
        })
    }

    /// Whether `name` is the name of a functor.
    pub fn is_name(name: &str) -> bool {
        Functor::from_name(name, 1).is_some()
    }

    /// The name both dialects write.
    pub fn name(&self) -> &str {
        match self {
            Functor::Cat(_) => "cat",
            Functor::Strlen => "strlen",
            Functor::Substr => "substr",
            Functor::Ord(_) => "ord",
            Functor::ToNumber(_) => "to_number",
            Functor::ToUnsigned(_) => "to_unsigned",
            Functor::ToFloat(_) => "to_float",
            Functor::ToString(_) => "to_string",
            Functor::Cast(..) => "as",
            Functor::Record { branch: None, .. } => "a record",
            Functor::Record { branch: Some(_), .. } => "a branch",
            Functor::Nil(_) => "nil",
            Functor::Field { .. } => "a record's field",
            Functor::User(user) => &user.name,
        }
    }

    /// How many arguments a call passes.
    pub fn arity(&self) -> usize {
        match self {
            Functor::Cat(n) | Functor::Record { arity: n, .. } => usize::from(*n),
            Functor::Substr => 3,
            Functor::Nil(_) => 0,
            Functor::User(user) => user.params.len(),
            _ => 1,
        }
    }

    /// The text of a call with arguments `args`, as the IR listings show it: `cat(a, b)`;
    /// a record as Soufflé writes it (`[a, b]`, `$Circle(r)`, `nil`, its branch named
    /// from `records`, the program's record types), and a field read as `r.0` (the
    /// field's place in the stored record).
    pub fn call_text(&self, args: &[String], records: &[crate::RecordType]) -> String {
        match self {
            Functor::Record { branch: None, .. } => format!("[{}]", args.join(", ")),
            Functor::Record { ty, branch: Some(b), .. } => {
                let name = records
                    .get(ty.0 as usize)
                    .and_then(|t| t.branches.get(usize::from(*b)))
                    .map_or_else(|| b.to_string(), |branch| branch.name.clone());
                match args.is_empty() {
                    true => format!("${name}"),
                    false => format!("${name}({})", args.join(", ")),
                }
            }
            Functor::Nil(_) => "nil".to_string(),
            Functor::Field { index, .. } => format!("{}.{index}", args.join(", ")),
            // A declared functor is called as Soufflé writes it: `@f(x)`.
            Functor::User(_) => format!("@{}({})", self.name(), args.join(", ")),
            other => format!("{}({})", other.name(), args.join(", ")),
        }
    }

    /// The arities a call may have: `cat` takes one or more arguments.
    pub fn arity_text(&self) -> &'static str {
        match self {
            Functor::Cat(_) => "at least one argument",
            Functor::Substr => "three arguments",
            Functor::Cast(..) => "a value and a type",
            Functor::User(_) => "the arguments its declaration names",
            _ => "one argument",
        }
    }

    /// Whether the arity of a call is one the functor takes.
    pub fn takes(&self, arity: usize) -> bool {
        match self {
            Functor::Cat(_) => (1..=usize::from(u8::MAX)).contains(&arity),
            Functor::Record { .. } => arity <= usize::from(u8::MAX),
            other => other.arity() == arity,
        }
    }

    /// The type of argument `i`; none for a conversion's argument, which may be of any
    /// type ([`Functor::with_argument`] records which), and for a record's fields, which
    /// its type declares ([`ValueStore::parameter`]).
    pub fn parameter(&self, i: usize) -> Option<ValueType> {
        match self {
            Functor::Record { .. } | Functor::Nil(_) => None,
            Functor::Field { ty, .. } => Some(ValueType::Record(*ty)),
            Functor::Cat(_) | Functor::Strlen => Some(ValueType::Symbol),
            Functor::Substr if i == 0 => Some(ValueType::Symbol),
            Functor::Substr => Some(ValueType::Number),
            Functor::Ord(_)
            | Functor::ToNumber(_)
            | Functor::ToUnsigned(_)
            | Functor::ToFloat(_)
            | Functor::ToString(_)
            | Functor::Cast(..) => None,
            Functor::User(user) => user.params.get(i).copied(),
        }
    }

    /// The type of argument `i`, a conversion's or `ord`'s as the front end resolved it.
    pub fn argument(&self, i: usize) -> ValueType {
        match self {
            Functor::Ord(ty)
            | Functor::ToNumber(ty)
            | Functor::ToUnsigned(ty)
            | Functor::ToFloat(ty)
            | Functor::ToString(ty)
            | Functor::Cast(ty, _) => *ty,
            other => other.parameter(i).unwrap_or(ValueType::Symbol),
        }
    }

    /// The type of the result.
    pub fn result(&self) -> ValueType {
        match self {
            Functor::Cat(_) | Functor::Substr | Functor::ToString(_) => ValueType::Symbol,
            Functor::Strlen | Functor::Ord(_) | Functor::ToNumber(_) => ValueType::Number,
            Functor::ToUnsigned(_) => ValueType::Unsigned,
            Functor::ToFloat(_) => ValueType::Float,
            Functor::Cast(_, to) => *to,
            Functor::Record { ty, .. } | Functor::Nil(ty) => ValueType::Record(*ty),
            Functor::Field { result, .. } => *result,
            Functor::User(user) => user.result,
        }
    }

    /// The conversion (or `ord`) of an argument of type `ty` (other functors are unchanged).
    pub fn with_argument(&self, ty: ValueType) -> Functor {
        match self {
            Functor::ToNumber(_) => Functor::ToNumber(ty),
            Functor::ToUnsigned(_) => Functor::ToUnsigned(ty),
            Functor::ToFloat(_) => Functor::ToFloat(ty),
            Functor::ToString(_) => Functor::ToString(ty),
            Functor::Ord(_) => Functor::Ord(ty),
            Functor::Cast(_, to) => Functor::Cast(ty, *to),
            other => other.clone(),
        }
    }

    /// A cast to `ty` (other functors are unchanged).
    pub fn with_target(&self, ty: ValueType) -> Functor {
        match self {
            Functor::Cast(from, _) => Functor::Cast(*from, ty),
            other => other.clone(),
        }
    }

    /// Whether the signature is known: false only for a call of a declared functor
    /// whose declaration the front end has not found (or refused).
    pub fn is_typed(&self) -> bool {
        !matches!(self, Functor::User(user) if !user.declared)
    }

    /// Whether the result is a text or a record the functor makes, which may be new to
    /// the store (a declared functor's symbol result too).
    pub fn makes_text(&self) -> bool {
        match self {
            Functor::Cat(_) | Functor::Substr | Functor::ToString(_) | Functor::Record { .. } => true,
            Functor::User(user) => user.result == ValueType::Symbol,
            _ => false,
        }
    }

    /// Whether the functor reads the text of an argument.
    pub fn reads_text(&self) -> bool {
        match self {
            Functor::Cat(_) | Functor::Strlen | Functor::Substr => true,
            Functor::ToNumber(ty) | Functor::ToUnsigned(ty) | Functor::ToFloat(ty) => *ty == ValueType::Symbol,
            Functor::Ord(_)
            | Functor::ToString(_)
            | Functor::Cast(..)
            | Functor::Record { .. }
            | Functor::Nil(_)
            | Functor::Field { .. } => false,
            Functor::User(user) => user.params.contains(&ValueType::Symbol),
        }
    }

    /// The functor applied to `args` (as many as its arity, as tuples hold them); none
    /// when the result is no value: a text that writes no integer of the result's type,
    /// or no float; a declared functor's function, when none is bound or it gives no
    /// value of the declared result type.
    pub fn apply(&self, args: &[u32], values: &ValueStore) -> Option<u32> {
        let symbol = |i: usize| Const(args[i]);
        Some(match self {
            Functor::User(user) => user.apply(args, values)?,
            Functor::Cat(_) => {
                let text = {
                    let texts = values.texts();
                    args.iter().map(|&a| texts.text(Const(a))).collect::<String>()
                };
                values.intern(&text).0
            }
            Functor::Strlen => values.text(symbol(0)).len() as u32,
            Functor::Substr => {
                let text = substring(&values.text(symbol(0)), args[1] as i32, args[2] as i32);
                values.intern(&text).0
            }
            Functor::Ord(_) => args[0],
            Functor::ToNumber(ValueType::Symbol) => {
                i32::try_from(leading_integer(&values.text(symbol(0)))?).ok()? as u32
            }
            Functor::ToUnsigned(ValueType::Symbol) => u32::try_from(leading_integer(&values.text(symbol(0)))?).ok()?,
            Functor::ToFloat(ValueType::Symbol) => leading_float(&values.text(symbol(0)))?.to_bits(),
            Functor::ToFloat(ValueType::Number) => (args[0] as i32 as f32).to_bits(),
            Functor::ToFloat(ValueType::Unsigned) => (args[0] as f32).to_bits(),
            Functor::ToNumber(ValueType::Float) => float_to_number(f32::from_bits(args[0])) as u32,
            Functor::ToUnsigned(ValueType::Float) => float_to_unsigned(f32::from_bits(args[0])),
            // Between `number` and `unsigned`: the same 32 bits, as a C cast keeps them (a
            // float converted to a float is itself).
            Functor::ToNumber(_) | Functor::ToUnsigned(_) | Functor::ToFloat(_) => args[0],
            Functor::ToString(ValueType::Float) => values.intern(&float_string(f32::from_bits(args[0]))).0,
            Functor::ToString(ValueType::Unsigned) => values.intern(&args[0].to_string()).0,
            Functor::ToString(ValueType::Number) => values.intern(&(args[0] as i32).to_string()).0,
            Functor::ToString(ValueType::Symbol) => args[0],
            Functor::Cast(from, ValueType::Symbol) if *from != ValueType::Symbol => {
                (usize::try_from(args[0]).ok()? < values.len()).then_some(args[0])?
            }
            Functor::Cast(..) => args[0],
            Functor::ToString(_) => args[0],
            Functor::Record { branch: None, .. } => values.pack(args),
            Functor::Record { branch: Some(branch), .. } => {
                let mut fields = Vec::with_capacity(args.len() + 1);
                fields.push(u32::from(*branch));
                fields.extend_from_slice(args);
                values.pack(&fields)
            }
            Functor::Nil(_) => 0,
            Functor::Field { index, .. } => values.field(args[0], usize::from(*index))?,
        })
    }
}

/// A value passed to, or returned by, a declared functor's function: what Soufflé
/// passes a C function for each of its types (`int32_t`, `uint32_t`, `float`, a text).
#[derive(Clone, Debug, PartialEq)]
pub enum FunctorValue<'a> {
    /// A `number`.
    Number(i32),
    /// An `unsigned`.
    Unsigned(u32),
    /// A `float`.
    Float(f32),
    /// A symbol's text: borrowed from the value store for an argument; a result is
    /// interned into the store when the call returns.
    Symbol(Cow<'a, str>),
}

/// The function that computes a declared functor: called with one value of each
/// declared parameter's type, it gives a value of the declared result type, or none
/// when the call has no value (the rule then derives nothing from it, as for a
/// division by zero). The engines call it from several threads at once.
pub trait UserFunction: Send + Sync {
    /// The value of a call with `args`, one a declared parameter; none for no value.
    fn call(&self, args: &[FunctorValue<'_>]) -> Option<FunctorValue<'static>>;
}

impl<F> UserFunction for F
where
    F: Fn(&[FunctorValue<'_>]) -> Option<FunctorValue<'static>> + Send + Sync,
{
    fn call(&self, args: &[FunctorValue<'_>]) -> Option<FunctorValue<'static>> {
        self(args)
    }
}

/// A functor a program declares (Soufflé's `.functor f(x: number, s: symbol): number`):
/// its name, the primitive types of its parameters and of its result, and the function
/// bound to it once the caller has found one ([`UserFunctor::bind`]). Two declarations
/// are equal when their names and signatures are.
pub struct UserFunctor {
    name: String,
    params: Vec<ValueType>,
    result: ValueType,
    /// False for a call's functor before the front end has found its declaration.
    declared: bool,
    function: OnceLock<Arc<dyn UserFunction>>,
}

impl UserFunctor {
    /// A declaration with no function bound yet.
    pub fn new(name: impl Into<String>, params: Vec<ValueType>, result: ValueType) -> UserFunctor {
        UserFunctor { name: name.into(), params, result, declared: true, function: OnceLock::new() }
    }

    /// The functor a call names before its declaration is looked up: no parameters, a
    /// `number` result, which type inference does not take as evidence
    /// ([`Functor::is_typed`]).
    pub fn undeclared(name: impl Into<String>) -> UserFunctor {
        UserFunctor { declared: false, ..UserFunctor::new(name, Vec::new(), ValueType::Number) }
    }

    /// The name it is declared and called by (`f` of `@f(...)`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The types of its parameters, in order.
    pub fn params(&self) -> &[ValueType] {
        &self.params
    }

    /// The type of its result.
    pub fn result(&self) -> ValueType {
        self.result
    }

    /// Binds the function every call computes with; false when one is bound already
    /// (which stays).
    pub fn bind(&self, function: Arc<dyn UserFunction>) -> bool {
        self.function.set(function).is_ok()
    }

    /// Whether a function is bound.
    pub fn is_bound(&self) -> bool {
        self.function.get().is_some()
    }

    /// The bound function applied to `args` as tuples hold them; none when no function
    /// is bound, or it gives no value or one of another type than the declared result.
    fn apply(&self, args: &[u32], values: &ValueStore) -> Option<u32> {
        let function = self.function.get()?;
        let result = {
            let texts = self.params.contains(&ValueType::Symbol).then(|| values.texts());
            let args: Vec<FunctorValue<'_>> = self
                .params
                .iter()
                .zip(args)
                .map(|(ty, &a)| match (ty, &texts) {
                    (ValueType::Number, _) => FunctorValue::Number(a as i32),
                    (ValueType::Unsigned, _) => FunctorValue::Unsigned(a),
                    (ValueType::Float, _) => FunctorValue::Float(f32::from_bits(a)),
                    (ValueType::Symbol, Some(texts)) => FunctorValue::Symbol(Cow::Borrowed(texts.text(Const(a)))),
                    (ValueType::Symbol, None) => FunctorValue::Symbol(Cow::Borrowed("")),
                    // The front end declares no functor over records; an id is an unsigned.
                    (ValueType::Record(_), _) => FunctorValue::Unsigned(a),
                })
                .collect();
            function.call(&args)?
        };
        Some(match (self.result, result) {
            (ValueType::Number, FunctorValue::Number(n)) => n as u32,
            (ValueType::Unsigned, FunctorValue::Unsigned(n)) => n,
            (ValueType::Float, FunctorValue::Float(x)) => x.to_bits(),
            (ValueType::Symbol, FunctorValue::Symbol(text)) => values.intern(&text).0,
            _ => return None,
        })
    }
}

impl PartialEq for UserFunctor {
    fn eq(&self, other: &Self) -> bool {
        (&self.name, &self.params, self.result, self.declared)
            == (&other.name, &other.params, other.result, other.declared)
    }
}

impl Eq for UserFunctor {}

impl Hash for UserFunctor {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (&self.name, &self.params, self.result, self.declared).hash(state);
    }
}

impl fmt::Debug for UserFunctor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserFunctor")
            .field("name", &self.name)
            .field("params", &self.params)
            .field("result", &self.result)
            .field("bound", &self.is_bound())
            .finish()
    }
}

/// Soufflé's `substr`: bytes `from..from+len` of `text`, cut at its end, and all of the
/// rest for a negative `len`; empty when `from` is outside `0..=text.len()`. A cut
/// inside a character of several bytes leaves a replacement character (a value is
/// valid UTF-8 text, where Soufflé keeps the lone bytes).
fn substring(text: &str, from: i32, len: i32) -> String {
    let Ok(from) = usize::try_from(from) else { return String::new() };
    if from > text.len() {
        return String::new();
    }
    let end = usize::try_from(len).map_or(text.len(), |len| text.len().min(from.saturating_add(len)));
    String::from_utf8_lossy(&text.as_bytes()[from..end]).into_owned()
}

/// The integer at the start of `text` as Soufflé's `to_number` reads it: leading white
/// space, a sign, then decimal digits, or hexadecimal after `0x`, or binary after `0b`,
/// up to the first character that is none (`12abc` is 12); none without a digit or
/// beyond 64 bits.
fn leading_integer(text: &str) -> Option<i64> {
    let text = text.trim_start();
    let (negative, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = match rest.get(..2) {
        Some("0x" | "0X") => (16, &rest[2..]),
        Some("0b" | "0B") => (2, &rest[2..]),
        _ => (10, rest),
    };
    let end = digits.find(|c: char| !c.is_digit(radix)).unwrap_or(digits.len());
    let magnitude = i128::from_str_radix(digits.get(..end).filter(|d| !d.is_empty())?, radix).ok()?;
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(values: &ValueStore, v: u32) -> String {
        values.text(Const(v)).to_string()
    }

    #[test]
    fn string_functors_follow_souffle() {
        let values = ValueStore::default();
        let (hello, dash) = (values.intern("hello").0, values.intern("-").0);
        let cat = Functor::Cat(3).apply(&[hello, dash, hello], &values).unwrap();
        assert_eq!(text(&values, cat), "hello-hello");
        assert_eq!(Functor::Strlen.apply(&[cat], &values), Some(11));
        for (from, len, expected) in [(1, 2, "el"), (3, 10, "lo"), (2, -1, "llo"), (5, 1, ""), (6, 1, ""), (-1, 2, "")]
        {
            let got = Functor::Substr.apply(&[hello, from as u32, len as u32], &values).unwrap();
            assert_eq!(text(&values, got), expected, "substr(\"hello\", {from}, {len})");
        }
        assert_eq!(Functor::Ord(ValueType::Symbol).apply(&[dash], &values), Some(dash));
    }

    #[test]
    fn conversions_follow_souffle() {
        let values = ValueStore::default();
        let number = |t: &str| Functor::ToNumber(ValueType::Symbol).apply(&[values.intern(t).0], &values);
        assert_eq!(number("12"), Some(12));
        assert_eq!(number(" 7"), Some(7));
        assert_eq!(number("0x10"), Some(16));
        assert_eq!(number("0b101"), Some(5));
        assert_eq!(number("12abc"), Some(12));
        assert_eq!(number("-5"), Some(-5i32 as u32));
        assert_eq!(number("010"), Some(10));
        assert_eq!((number("abc"), number(""), number("99999999999")), (None, None, None));
        let unsigned = Functor::ToUnsigned(ValueType::Symbol).apply(&[values.intern("4000000000").0], &values);
        assert_eq!(unsigned, Some(4_000_000_000));
        assert_eq!(Functor::ToUnsigned(ValueType::Number).apply(&[-1i32 as u32], &values), Some(u32::MAX));
        let shown = |ty, v: u32| text(&values, Functor::ToString(ty).apply(&[v], &values).unwrap());
        assert_eq!(shown(ValueType::Number, -7i32 as u32), "-7");
        assert_eq!(shown(ValueType::Unsigned, u32::MAX), "4294967295");
        assert_eq!(shown(ValueType::Float, 1.5f32.to_bits()), "1.500000");
        let float = |ty, v: u32| Functor::ToFloat(ty).apply(&[v], &values).map(f32::from_bits);
        assert_eq!(float(ValueType::Number, -3i32 as u32), Some(-3.0));
        assert_eq!(float(ValueType::Unsigned, u32::MAX), Some(4_294_967_296.0));
        assert_eq!(float(ValueType::Symbol, values.intern(" 12.5xyz").0), Some(12.5));
        assert_eq!(float(ValueType::Symbol, values.intern("abc").0), None);
        let to_number = Functor::ToNumber(ValueType::Float).apply(&[(-2.7f32).to_bits()], &values);
        assert_eq!(to_number, Some(-2i32 as u32));
        let to_unsigned = Functor::ToUnsigned(ValueType::Float).apply(&[(-2.5f32).to_bits()], &values);
        assert_eq!(to_unsigned, Some(4_294_967_294));
    }

    #[test]
    fn a_declared_functor_calls_its_bound_function() {
        let values = ValueStore::default();
        let params = vec![ValueType::Symbol, ValueType::Number, ValueType::Unsigned, ValueType::Float];
        let declared = Arc::new(UserFunctor::new("show", params, ValueType::Symbol));
        let call = Functor::User(declared.clone());
        let args = [values.intern("x").0, -2i32 as u32, u32::MAX, 0.5f32.to_bits()];
        assert_eq!(call.apply(&args, &values), None, "no function is bound yet");
        let show = |args: &[FunctorValue<'_>]| Some(FunctorValue::Symbol(Cow::Owned(format!("{args:?}"))));
        assert!(declared.bind(Arc::new(show)));
        assert!(!declared.bind(Arc::new(show)), "the first function stays");
        let shown = call.apply(&args, &values).unwrap();
        assert_eq!(text(&values, shown), r#"[Symbol("x"), Number(-2), Unsigned(4294967295), Float(0.5)]"#);
        assert!(call.makes_text() && call.reads_text() && call.is_typed());
        assert_eq!((call.arity(), call.result(), call.parameter(3)), (4, ValueType::Symbol, Some(ValueType::Float)));
        // A result of another type than the declared one is no value.
        let number = Arc::new(UserFunctor::new("n", Vec::new(), ValueType::Number));
        number.bind(Arc::new(|_: &[FunctorValue<'_>]| Some(FunctorValue::Float(1.0))));
        assert_eq!(Functor::User(number).apply(&[], &values), None);
        assert!(!Functor::User(Arc::new(UserFunctor::undeclared("u"))).is_typed());
    }

    #[test]
    fn substr_cuts_bytes() {
        assert_eq!(substring("héllo", 1, 2), "é");
        assert_eq!(substring("héllo", 1, 1), "\u{fffd}");
    }
}
