//! How a run is configured: one [`Options`] value, made once by the caller (the
//! command line, or an embedding program) and read by every stage.

use crate::backend::Engine;
use exec::{Maintenance, Threads};

/// Which language a program is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// dlc's own language.
    Dlc,
    /// Soufflé's stratified fragment.
    Souffle,
}

impl Dialect {
    /// The dialect `text` looks like: Soufflé if a line starts with `.decl` or `#include`.
    pub fn of(text: &str) -> Dialect {
        match syntax::souffle::looks_like_souffle(text) {
            true => Dialect::Souffle,
            false => Dialect::Dlc,
        }
    }
}

/// Which program evaluation uses: the magic-sets rewrite, the original, or a choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MagicMode {
    /// The exact rewrite, as `--emit magic-ir` shows it.
    On,
    /// The original program.
    Off,
    /// The rewrite with adornment subsumption, or the original program where the rewrite
    /// cannot narrow the demand ([`crate::auto_choice`]).
    Auto,
}

/// Everything the stages read of a run's configuration.
#[derive(Clone, Debug)]
pub struct Options {
    /// The program's language; `None` decides by its text ([`Dialect::of`]).
    pub dialect: Option<Dialect>,
    /// A query replacing the program's `?-` line, in the program's dialect.
    pub query: Option<String>,
    /// Which program to evaluate.
    pub magic: MagicMode,
    /// The most adorned predicates the rewrite may make.
    pub max_adornments: usize,
    /// The memory budget of the relations and the most tuples one may hold. The default
    /// limits nothing: a library reads nothing of its machine, and the command line sets
    /// the budget it derives from its memory.
    pub limits: exec::Limits,
    /// The engine that evaluates and maintains.
    pub engine: Engine,
    /// The threads of the native engine's joins.
    pub threads: Threads,
    /// How update batches are maintained by the native engine.
    pub maintenance: Maintenance,
    /// Whether every relation is evaluated, not only those the query reads.
    pub all: bool,
    /// Whether the run evaluates: facts are read only then.
    pub evaluates: bool,
    /// Whether the run shows the magic rewrite (it is then the exact rewrite, made even
    /// with [`MagicMode::Off`]).
    pub shows_magic: bool,
    /// Whether both the rewrite and the original program are evaluated (the rewrite is
    /// then needed whatever its size).
    pub compare: bool,
    /// Facts inserted, then deleted, as one batch after the first evaluation (atoms in
    /// the program's syntax: `E(a,b)`).
    pub insert: Vec<String>,
    /// See [`Options::insert`].
    pub delete: Vec<String>,
    /// The macros a Soufflé program is read with, as Soufflé's `-M` gives them: words
    /// `NAME=VALUE`, or `NAME` for `NAME=1` ([`syntax::souffle::command_line_macros`]).
    pub macros: Vec<String>,
    /// Whether warnings are reported (Soufflé's `-w` turns them off).
    pub warnings: bool,
    /// Where the functions of a Soufflé program's declared functors are found (`-L DIR
    /// -l NAME`'s shared libraries, or [`crate::Functions`] given in Rust); none: a
    /// program that calls one is refused (E0044).
    pub functors: Option<std::sync::Arc<dyn crate::FunctorLibrary>>,
}

impl Default for Options {
    /// A dlc program's answers through `--magic auto` on the semi-naive engine, with
    /// every core, as the command line runs it without flags.
    fn default() -> Self {
        Options {
            dialect: None,
            query: None,
            magic: MagicMode::Auto,
            max_adornments: magic::DEFAULT_MAX_ADORNMENTS,
            limits: exec::Limits::default(),
            engine: Engine::SEMINAIVE,
            threads: Threads::available(),
            maintenance: Maintenance::Auto,
            all: false,
            evaluates: true,
            shows_magic: false,
            compare: false,
            insert: Vec::new(),
            delete: Vec::new(),
            macros: Vec::new(),
            warnings: true,
            functors: None,
        }
    }
}

impl Options {
    /// The dialect of a program with this text.
    pub fn dialect_of(&self, text: &str) -> Dialect {
        self.dialect.unwrap_or_else(|| Dialect::of(text))
    }
}
