//! Pieces of the random-program generators that the property tests share: a term is an
//! index into a test's own variable or constant names, written out as program text.

#![allow(dead_code)]

use proptest::prelude::*;

/// A term of a generated atom: an index into the test's variable or constant names.
#[derive(Clone, Debug)]
pub enum Arg {
    Var(usize),
    Const(usize),
}

/// A term drawn from `vars` variables and `consts` constants, variables four times as
/// often, so that atoms share and repeat variables.
pub fn arg(vars: usize, consts: usize) -> impl Strategy<Value = Arg> {
    prop_oneof![4 => (0..vars).prop_map(Arg::Var), 1 => (0..consts).prop_map(Arg::Const)]
}

/// `name(args)`, each argument written with its name in `vars` or `consts`.
pub fn atom_text(name: &str, args: &[Arg], vars: &[&str], consts: &[&str]) -> String {
    let args: Vec<&str> = args
        .iter()
        .map(|a| match a {
            Arg::Var(v) => vars[*v],
            Arg::Const(c) => consts[*c],
        })
        .collect();
    format!("{name}({})", args.join(","))
}
