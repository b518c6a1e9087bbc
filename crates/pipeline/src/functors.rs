//! The functions of a Soufflé program's declared functors (`.functor f(...)`, called as
//! `@f(...)`): where they come from ([`FunctorLibrary`]), a table of functions given by
//! name ([`Functions`], for a program that computes its functors in Rust), and their
//! binding to the program's declarations before evaluation, with the reports when one
//! is missing (E0044). Nothing here loads code: the command line's shared libraries are
//! one more [`FunctorLibrary`].

use diag::{Code, Diagnostic};
use ir::{UserFunction, UserFunctor};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use syntax::souffle::CalledFunctor;

/// Where the functions of declared functors are found.
pub trait FunctorLibrary: Send + Sync + fmt::Debug {
    /// The function that computes `functor`, as its declaration names and types it, or
    /// why there is none (a sentence, which the report shows).
    fn function(&self, functor: &UserFunctor) -> Result<Arc<dyn UserFunction>, String>;
}

/// Functions given by name: the library of a program that embeds dlc and computes its
/// functors in Rust. A function is called with one value of each declared parameter's
/// type and gives one of the declared result's type (another type is no value).
#[derive(Clone, Default)]
pub struct Functions {
    by_name: BTreeMap<String, Arc<dyn UserFunction>>,
}

impl Functions {
    /// No functions.
    pub fn new() -> Functions {
        Functions::default()
    }

    /// The table with `function` computing the functor `name` (replacing one given before).
    pub fn with(mut self, name: impl Into<String>, function: impl UserFunction + 'static) -> Functions {
        self.by_name.insert(name.into(), Arc::new(function));
        self
    }
}

impl fmt::Debug for Functions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.by_name.keys()).finish()
    }
}

impl FunctorLibrary for Functions {
    fn function(&self, functor: &UserFunctor) -> Result<Arc<dyn UserFunction>, String> {
        self.by_name.get(functor.name()).cloned().ok_or_else(|| "no function of this name is given".to_string())
    }
}

/// Binds a function from `library` to each functor the program calls; E0044 at the
/// first call of each one none is found for, or of every one when no library is given.
pub(crate) fn bind(functors: &[CalledFunctor], library: Option<&dyn FunctorLibrary>) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for called in functors.iter().filter(|c| !c.functor.is_bound()) {
        let name = called.functor.name();
        let why = match library {
            None => "no library of functors is given".to_string(),
            Some(library) => match library.function(&called.functor) {
                Ok(function) => {
                    called.functor.bind(function);
                    continue;
                }
                Err(why) => why,
            },
        };
        diagnostics.push(
            Diagnostic::error(Code::FUNCTOR_NOT_LOADED, format!("no function computes the functor `{name}`: {why}"))
                .with_primary(called.called, "called here")
                .with_secondary(called.declared, "declared here")
                .with_help(format!(
                    "pass the shared library that defines the C function `{name}` as Soufflé takes it: `-L DIR -l NAME` \
                     loads `DIR/libNAME.so` (a program embedding dlc gives its functions in `Options::functors`)"
                )),
        );
    }
    diagnostics
}
