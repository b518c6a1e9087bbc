//! Soufflé's user-defined functors from shared libraries: `-L DIR` and `-l NAME` as
//! Soufflé takes them (`DIR/libNAME.so`), each called functor's C function found by its
//! name in the first library that defines it, and called with the C types of its
//! `.functor`: `int32_t` for `number`, `uint32_t` for `unsigned`, `float` for `float`
//! and `const char*` for `symbol`, as arguments and as the result.
//!
//! This is the one module where dlc runs foreign code, and its `unsafe` stays here. What
//! makes it sound is the promise Soufflé asks of a functor's author, which no program
//! can check: the C function has the signature its `.functor` declares, it may be called
//! from several threads at once, and a `const char*` it returns is a NUL-terminated text
//! that stays valid until the call has returned. dlc copies such a text into its value
//! store at once and never frees it: the library owns it, as with Soufflé (a static or
//! thread-local buffer is the usual way). A null result is no value.

#![allow(unsafe_code)]

use ir::{FunctorValue, UserFunction, UserFunctor, ValueType};
use libloading::Library;
use pipeline::FunctorLibrary;
use std::borrow::Cow;
use std::ffi::{c_char, c_void, CStr, CString};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// The shared libraries `-L DIR -l NAME` name, opened when the first functor is looked
/// up (a run that calls none opens none).
#[derive(Debug)]
pub struct SharedLibraries {
    /// `-L`: the directories each library is looked for in, in order (by default the
    /// current directory, as in Soufflé); then where the system's loader looks.
    dirs: Vec<PathBuf>,
    /// `-l`: the libraries' names, in order: `fx` is the file `libfx.so`.
    names: Vec<String>,
    opened: OnceLock<Result<Vec<Opened>, String>>,
}

/// One library as opened, with the file it was found as.
#[derive(Debug)]
struct Opened {
    library: Arc<Library>,
    file: String,
}

impl SharedLibraries {
    pub fn new(dirs: Vec<PathBuf>, names: Vec<String>) -> SharedLibraries {
        SharedLibraries { dirs, names, opened: OnceLock::new() }
    }

    /// Every library named, in order; why not when one cannot be opened.
    fn open(&self) -> Result<Vec<Opened>, String> {
        let default = [PathBuf::from(".")];
        let dirs = if self.dirs.is_empty() { &default[..] } else { &self.dirs[..] };
        let mut opened = Vec::new();
        for name in &self.names {
            let file = format!("{}{name}{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
            let found = dirs.iter().map(|dir| dir.join(&file)).find(|path| path.is_file());
            let (target, shown) = match &found {
                Some(path) => (path.as_os_str().to_owned(), path.display().to_string()),
                None => (file.clone().into(), file.clone()),
            };
            // SAFETY: opening a library runs its initialisers; the user named it to be
            // loaded, as they would for Soufflé.
            match unsafe { Library::new(&target) } {
                Ok(library) => opened.push(Opened { library: Arc::new(library), file: shown }),
                Err(error) => {
                    let searched: Vec<String> = dirs.iter().map(|d| format!("`{}`", d.display())).collect();
                    return Err(match found {
                        Some(_) => format!("the library `{shown}` cannot be loaded ({error})"),
                        None => format!(
                            "the library `{file}` (`-l {name}`) is in none of {} nor where the system's loader looks",
                            searched.join(", ")
                        ),
                    });
                }
            }
        }
        Ok(opened)
    }
}

impl FunctorLibrary for SharedLibraries {
    fn function(&self, functor: &UserFunctor) -> Result<Arc<dyn UserFunction>, String> {
        let libraries = self.opened.get_or_init(|| self.open()).as_ref().map_err(Clone::clone)?;
        let name = functor.name();
        let symbol = CString::new(name).map_err(|_| "its name holds a NUL character".to_string())?;
        for opened in libraries {
            // SAFETY: the address is only read here; it is called as the declaration
            // types it (see the module's documentation).
            let Ok(address) = (unsafe { opened.library.get::<*mut c_void>(symbol.as_bytes_with_nul()) }) else {
                continue;
            };
            let address = *address;
            if address.is_null() {
                continue;
            }
            return c_function(opened.library.clone(), address, functor.params(), functor.result()).ok_or_else(|| {
                format!(
                    "dlc calls C functions of at most {MAX_ARITY} arguments; `{name}` declares {}",
                    functor.params().len()
                )
            });
        }
        let files: Vec<String> = libraries.iter().map(|o| format!("`{}`", o.file)).collect();
        Err(match files.as_slice() {
            [one] => format!("{one} defines no C function `{name}`"),
            _ => format!("none of {} defines a C function `{name}`", files.join(", ")),
        })
    }
}

/// The most arguments a functor's C function is called with.
const MAX_ARITY: usize = 4;

/// A C type of an argument, made from the value of a parameter of its declared type.
trait CArg: Copy + 'static {
    /// The C value of `value`; the text of a symbol is kept in `texts` until the call
    /// returns. None for a value of another type, or a text with a NUL character.
    fn arg(value: &FunctorValue<'_>, texts: &mut Vec<CString>) -> Option<Self>;
}

impl CArg for i32 {
    fn arg(value: &FunctorValue<'_>, _: &mut Vec<CString>) -> Option<i32> {
        match value {
            FunctorValue::Number(n) => Some(*n),
            _ => None,
        }
    }
}

impl CArg for u32 {
    fn arg(value: &FunctorValue<'_>, _: &mut Vec<CString>) -> Option<u32> {
        match value {
            FunctorValue::Unsigned(n) => Some(*n),
            _ => None,
        }
    }
}

impl CArg for f32 {
    fn arg(value: &FunctorValue<'_>, _: &mut Vec<CString>) -> Option<f32> {
        match value {
            FunctorValue::Float(x) => Some(*x),
            _ => None,
        }
    }
}

impl CArg for *const c_char {
    fn arg(value: &FunctorValue<'_>, texts: &mut Vec<CString>) -> Option<*const c_char> {
        let FunctorValue::Symbol(text) = value else { return None };
        let text = CString::new(text.as_bytes()).ok()?;
        // The pointer is to the text's own buffer, which moving the `CString` keeps.
        let pointer = text.as_ptr();
        texts.push(text);
        Some(pointer)
    }
}

/// A C type of a result, made into the value of its declared type.
trait CResult: 'static {
    fn value(self) -> Option<FunctorValue<'static>>;
}

impl CResult for i32 {
    fn value(self) -> Option<FunctorValue<'static>> {
        Some(FunctorValue::Number(self))
    }
}

impl CResult for u32 {
    fn value(self) -> Option<FunctorValue<'static>> {
        Some(FunctorValue::Unsigned(self))
    }
}

impl CResult for f32 {
    fn value(self) -> Option<FunctorValue<'static>> {
        Some(FunctorValue::Float(self))
    }
}

impl CResult for *const c_char {
    fn value(self) -> Option<FunctorValue<'static>> {
        if self.is_null() {
            return None;
        }
        // SAFETY: a non-null result is a NUL-terminated text valid until the call has
        // returned (the module's documentation); it is copied before anything else runs.
        let text = unsafe { CStr::from_ptr(self) };
        Some(FunctorValue::Symbol(Cow::Owned(text.to_string_lossy().into_owned())))
    }
}

/// The closure calling a C function of each arity, which keeps its library loaded.
macro_rules! arity_functions {
    ($($function:ident($($arg:ident: $ty:ident),*);)*) => {$(
        fn $function<$($ty: CArg,)* R: CResult>(
            library: Arc<Library>,
            function: unsafe extern "C" fn($($ty),*) -> R,
        ) -> Arc<dyn UserFunction> {
            Arc::new(move |args: &[FunctorValue<'_>]| {
                let _loaded = &library;
                let mut kept = Vec::<CString>::new();
                let [$($arg),*] = args else { return None };
                $(let $arg = $ty::arg($arg, &mut kept)?;)*
                // SAFETY: the function has the declared signature (the module's
                // documentation); each text argument lives in `kept` until it returns.
                unsafe { function($($arg),*) }.value()
            })
        }
    )*};
}

/// A C function without arguments.
fn function0<R: CResult>(library: Arc<Library>, function: unsafe extern "C" fn() -> R) -> Arc<dyn UserFunction> {
    Arc::new(move |args: &[FunctorValue<'_>]| {
        let _loaded = &library;
        // SAFETY: the function has the declared signature (the module's documentation).
        args.is_empty().then(|| unsafe { function() }.value())?
    })
}

arity_functions! {
    function1(a: A);
    function2(a: A, b: B);
    function3(a: A, b: B, c: C);
    function4(a: A, b: B, c: C, d: D);
}

/// Runs `$body` with `$t` the C type of the value type `$ty`.
macro_rules! with_c_type {
    ($ty:expr, $t:ident, $body:expr) => {
        match $ty {
            ValueType::Number => {
                type $t = i32;
                $body
            }
            ValueType::Unsigned => {
                type $t = u32;
                $body
            }
            ValueType::Float => {
                type $t = f32;
                $body
            }
            ValueType::Symbol => {
                type $t = *const c_char;
                $body
            }
            // The front end declares no functor over records.
            ValueType::Record(_) => return None,
        }
    };
}

/// The function at `address` in `library` as a C function of the declared parameter and
/// result types; none for more than [`MAX_ARITY`] parameters (or a record type, which
/// no declaration has).
fn c_function(
    library: Arc<Library>,
    address: *mut c_void,
    params: &[ValueType],
    result: ValueType,
) -> Option<Arc<dyn UserFunction>> {
    // SAFETY (each transmute): the address is of a C function of the declared signature,
    // and a function pointer has the size of a data pointer on every platform dlc builds
    // for.
    Some(with_c_type!(
        result,
        R,
        match *params {
            [] => function0::<R>(library, unsafe {
                std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> R>(address)
            }),
            [a] => with_c_type!(
                a,
                A,
                function1::<A, R>(library, unsafe {
                    std::mem::transmute::<*mut c_void, unsafe extern "C" fn(A) -> R>(address)
                })
            ),
            [a, b] => with_c_type!(
                a,
                A,
                with_c_type!(
                    b,
                    B,
                    function2::<A, B, R>(library, unsafe {
                        std::mem::transmute::<*mut c_void, unsafe extern "C" fn(A, B) -> R>(address)
                    })
                )
            ),
            [a, b, c] => with_c_type!(
                a,
                A,
                with_c_type!(
                    b,
                    B,
                    with_c_type!(
                        c,
                        C,
                        function3::<A, B, C, R>(library, unsafe {
                            std::mem::transmute::<*mut c_void, unsafe extern "C" fn(A, B, C) -> R>(address)
                        })
                    )
                )
            ),
            [a, b, c, d] => with_c_type!(
                a,
                A,
                with_c_type!(
                    b,
                    B,
                    with_c_type!(
                        c,
                        C,
                        with_c_type!(
                            d,
                            D,
                            function4::<A, B, C, D, R>(library, unsafe {
                                std::mem::transmute::<*mut c_void, unsafe extern "C" fn(A, B, C, D) -> R>(address)
                            })
                        )
                    )
                )
            ),
            _ => return None,
        }
    ))
}
