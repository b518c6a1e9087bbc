//! The dlc pipeline as a library, in typed stages: [`prepare()`] (read a program and its
//! inputs), [`compile()`] (its query, the magic-sets rewrite), [`Evaluator`] (evaluate the
//! program `--magic` chooses), [`Maintainer`] (apply update batches), [`SelectedRows`]
//! (read answers or a relation's rows). Every engine is reached through one seam,
//! [`Backend`]. Nothing here touches the file system or the process: files come in
//! through [`Inputs`], and every failure is a value.
//!
//! [`Datalog`] wraps the stages for a Rust program that embeds Datalog: facts in as Rust
//! values, answers out as rows of [`Value`]s, batches of changes, proofs.

// Every public item says what it is: this crate is what an embedding program reads.
#![deny(missing_docs)]

mod backend;
mod compile;
mod embed;
mod evaluate;
pub mod explain;
mod functors;
mod input_facts;
mod maintain;
mod options;
mod prepare;
mod select;

pub use backend::{
    cluster_stopped, maintain, Backend, Change, ClusterLink, Engine, Error, Listing, MaintainedBy, Phases,
    RunningDataflow,
};
pub use compile::{compile, Session};
pub use embed::{Datalog, DatalogError, Row, Updated, Value};
pub use evaluate::{
    auto_choice, demand_caps, derived_preds, edb_database, evaluation_plan, relation_sizes, resource_diagnostic,
    rewrite_for_mode, rewrite_options, Evaluated, Evaluator, MagicChoice, Progress,
};
pub use functors::{Functions, FunctorLibrary};
pub use input_facts::InputFacts;
/// How many facts of one relation each phase of a batch touched, as both engines count it.
pub use ir::Tally;
/// The values a declared functor's function takes and gives, and such a function.
pub use ir::{FunctorValue, UserFunction};
pub use maintain::{
    maintained_inputs, recompute, BatchOutcome, Maintainer, Maintaining, Recomputed, FULL_REPORT_MAX_FACTS,
};
pub use options::{Dialect, MagicMode, Options};
pub use prepare::{
    attributes_of, batch_of, change_text, fact_text, net_update, prepare, size_limit_refused, unused_input_warnings,
    Batch, Failed, Inputs, LoadedProgram, NoInputs, ProgramText, SouffleIo, Wanted, COMMAND_LINE,
};
pub use select::{SelectedRows, ValueOrder};
