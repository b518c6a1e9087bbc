//! Command-line arguments.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  dlc fixtures/ok/reach.dl                       answers of the program's `?-` query (via magic sets)
  dlc fixtures/ok/reach.dl --compare             magic vs. original program, side by side
  dlc fixtures/ok/reach.dl --compare --engine reference
                                                 ... with row_tests of the naive reference engine
  dlc fixtures/ok/reach.dl --emit magic-ir       the rewritten program and the per-call table
  dlc fixtures/ok/reach.dl --emit adorned --format dot | dot -Tsvg > calls.svg
  dlc prog.dl --facts edges/ --query 'R(n0,Y)'   facts from a directory of E.facts/E.csv files
  dlc souffle.dl -F in -D out                    a Soufflé program: in/<Rel>.facts to out/<Rel>.csv
  dlc fixtures/ok/reach.dl --delete 'E(a,b)'     maintain the answers incrementally (DRed)
  dlc fixtures/ok/reach.dl --delete 'E(a,b)' --maintenance ranked
                                                 ... over-deleting only facts that lost their support
  dlc fixtures/ok/reach.dl --updates changes.txt --check --emit trace --format json
  dlc fixtures/ok/reach.dl --explain 'R(a,d)'   a proof of R(a,d) (add --format dot for a picture)
  dlc fixtures/ok/reach.dl --explain-missing 'R(a,u)'
                                                 ... and why R(a,u) is not derived
  dlc repl fixtures/ok/reach.dl                  type `-E(a,b).`, `;`, `?- R(a,Y).` interactively";

/// The most threads `--threads` takes: far more than any machine dlc runs on has cores,
/// and few enough that starting them for a join costs little.
pub const MAX_THREADS: usize = 256;

/// dlc: a Datalog compiler with magic-sets rewriting and incremental (DRed) maintenance.
///
/// dlc compiles a Datalog program (with stratified negation, comparisons and arithmetic) and one
/// selection query into a magic-sets program, lowers it to relational-algebra plans,
/// evaluates it bottom-up, and keeps the answers up to date under insertions and
/// deletions of input facts.
#[derive(Debug, Parser)]
#[command(name = "dlc", version, after_help = EXAMPLES, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Read updates (`+E(a,b).`, `-E(a,b).`, `;` to apply) and queries (`?- R(a,Y).`) from
    /// standard input and print what changes.
    ///
    /// A batch with a bad line is rejected whole. Every input fact is kept, whatever the
    /// current query reads. The flags below work as for `dlc`: the updates are applied
    /// first, --engine chooses the engine of the evaluations (the first, and after a new
    /// query), --check checks after every batch (exit status 3 if one differs). The repl
    /// prints answers and batch reports as text: `dlc`'s --emit, --format, --compare,
    /// -D/--output-dir, --all, --explain and --explain-missing are usage errors here
    /// (`:why` and `:whynot` explain), and so are --engine differential and --workers.
    #[command(
        mut_arg("emit", |a| a.hide(true)),
        mut_arg("format", |a| a.hide(true)),
        mut_arg("compare", |a| a.hide(true)),
        mut_arg("output_dir", |a| a.hide(true)),
        mut_arg("all", |a| a.hide(true)),
        mut_arg("explain", |a| a.hide(true)),
        mut_arg("explain_missing", |a| a.hide(true)),
        mut_arg("program", |a| a.help("The Datalog program file (rules, optional inline facts, optional `?-` query)")),
    )]
    Repl(RunArgs),
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The Datalog program (rules, optional inline facts `E(a,b).`, optional `?-` query);
    /// `-` reads it from standard input.
    pub program: Option<PathBuf>,

    /// The program's text when `program` is `-`, read before the run starts.
    #[arg(skip)]
    pub program_text: Option<String>,

    /// What to print.
    #[arg(long, value_enum, default_value_t = Emit::Answers)]
    pub emit: Emit,

    /// Output format: `json` for every --emit but `ast`, and for --explain and
    /// --explain-missing; `dot` for `--emit adorned` and --explain.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// The selection query, e.g. 'R(a,Y)'; replaces a `?-` line of the program.
    #[arg(long, value_name = "ATOM")]
    pub query: Option<String>,

    /// Input facts: a file of ground atoms `E(a,b).`, a single `<Pred>.facts`/`.tsv`/`.csv`
    /// file, or a directory of such files. Repeatable.
    #[arg(long, value_name = "PATH")]
    pub facts: Vec<PathBuf>,

    /// As Soufflé's -F: the directory of the `<Rel>.facts` file of every `.input` relation
    /// of a Soufflé program (default: the current directory). For a dlc program, the same
    /// as --facts DIR.
    #[arg(short = 'F', long, value_name = "DIR")]
    pub fact_dir: Option<PathBuf>,

    /// As Soufflé's -D: where a Soufflé program without --query writes `<Rel>.csv` for
    /// every `.output` relation (default: the current directory); with a query, the
    /// query's answers as `<Pred>.csv`, tab-separated, instead of printing them. `-`
    /// prints them.
    #[arg(short = 'D', long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,

    /// As Soufflé's -I: a directory a Soufflé program's `#include` looks in, after the
    /// including file's own directory (for `#include "file"`) and the current directory.
    /// Repeatable; searched in order.
    #[arg(short = 'I', long, value_name = "DIR")]
    pub include_dir: Vec<PathBuf>,

    /// As Soufflé's -M: macros a Soufflé program is read with, e.g. -M "N=5 DEBUG": each
    /// word `NAME=VALUE` defines NAME as VALUE, `NAME` alone as 1. Repeatable.
    #[arg(short = 'M', long = "macro", value_name = "MACROS")]
    pub macros: Vec<String>,

    /// As Soufflé's --show: `initial-ast` is `--emit ast`, `transformed-ast` and
    /// `transformed-datalog` are `--emit ir`, `transformed-ram`, `precedence-graph` and
    /// `scc-graph` are `--emit plan` (its plans and strata).
    #[arg(long, value_name = "FORM", value_parser = parse_show, conflicts_with = "emit")]
    pub show: Option<Emit>,

    /// As Soufflé's -w: report no warnings.
    #[arg(short = 'w', long)]
    pub no_warn: bool,

    /// As Soufflé's -L: a directory the shared libraries of -l are looked for in
    /// (default: the current directory), before where the system's loader looks.
    /// Repeatable; searched in order.
    #[arg(short = 'L', long, value_name = "DIR")]
    pub library_dir: Vec<PathBuf>,

    /// As Soufflé's -l: a shared library (`libNAME.so`) whose C functions compute a
    /// Soufflé program's user-defined functors (`.functor`, `@f(...)`). Repeatable; a
    /// functor's function is the first library's that defines it.
    #[arg(short = 'l', long = "libraries", value_name = "NAME")]
    pub libraries: Vec<String>,

    // Soufflé's flags of its own compilation and instrumentation, which dlc has no use
    // for: each is refused with what dlc does instead ([`RunArgs::souffle_only`]).
    #[command(flatten)]
    pub souffle_only: SouffleOnlyArgs,

    /// The language of the program: `auto` reads a file with a `.decl` or `#include` line as
    /// Soufflé.
    #[arg(long, value_enum, default_value_t = DialectArg::Auto)]
    pub dialect: DialectArg,

    /// Evaluation engine.
    #[arg(long, value_enum, default_value_t = EngineArg::Seminaive)]
    pub engine: EngineArg,

    /// Whether to evaluate through the magic-sets rewrite: `on` evaluates the rewrite
    /// `--emit magic-ir` shows, `off` the original program (filtered by the query), `auto`
    /// (the default) the rewrite with adornment subsumption, unless the rewrite narrows
    /// no demand or a demand relation grows past 1/16 of the tuples its columns can take;
    /// then the original program.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = MagicArg::Auto)]
    pub magic: MagicArg,

    /// The same as `--magic off`.
    #[arg(long, conflicts_with_all = ["compare", "magic"])]
    pub no_magic: bool,

    /// With -D: write every derived relation of the program as `<Pred>.csv`, not only
    /// the query's answers. Implies --no-magic: the rewrite derives the query's answers
    /// only, so the original program is evaluated.
    #[arg(long, requires = "output_dir", conflicts_with = "compare")]
    pub all: bool,

    /// Evaluate both the magic and the original program and report them side by side.
    #[arg(long)]
    pub compare: bool,

    /// Fail when the magic rewrite needs more than N adorned predicates (a predicate of
    /// arity n can be called with up to 2^n adornments, each a copy of its rules).
    #[arg(long, value_name = "N", default_value_t = magic::DEFAULT_MAX_ADORNMENTS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_adornments: usize,

    /// Stop with an error (E0017) when the relations would hold more than SIZE bytes
    /// together: `512M`, `4G`, `2GiB` (units are powers of 1024), or `none`. Default: 80%
    /// of the machine's memory, or of the process's cgroup memory limit when that is lower.
    #[arg(long, value_name = "SIZE", value_parser = crate::memory::parse_max_memory)]
    pub max_memory: Option<crate::memory::MaxMemory>,

    /// Stop with an error (E0017) when a relation would hold more than N tuples
    /// (default: no limit but the memory budget).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tuples: Option<u32>,

    /// Split the semi-naive engine's large joins over N threads, 1 to 256 (default: every
    /// core). Answers, traces and maintenance are the same with any N; the reference
    /// engine runs on one.
    #[arg(long, value_name = "N",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_THREADS as u64))]
    pub threads: Option<usize>,

    /// As Soufflé's -j: the same as --threads N; `auto` is every core.
    #[arg(short = 'j', long, value_name = "N", conflicts_with = "threads", value_parser = parse_jobs)]
    pub jobs: Option<Jobs>,

    // A struct of its own: clap's derived code builds every flag of `RunArgs` in one
    // function, whose unoptimised stack frame grows with each flag it holds.
    #[command(flatten)]
    pub dataflow: DataflowArgs,

    /// Print a proof of a fact, e.g. 'R(a,d)': the rules and facts it is derived from,
    /// down to input facts, smallest height first (`--format text|json|dot`). Exit
    /// status 1 when the fact does not hold.
    #[arg(long, value_name = "FACT", conflicts_with_all = ["compare", "explain_missing", "output_dir"])]
    pub explain: Option<String>,

    /// Explain why a fact, e.g. 'R(a,u)', is not derived: for each rule that could derive
    /// it, the first body atom that matches no fact, or the fact a negated atom finds or
    /// the comparison that fails under every match (`--format text|json`).
    #[arg(long, value_name = "FACT", conflicts_with_all = ["compare", "output_dir"])]
    pub explain_missing: Option<String>,

    /// Insert an input fact after the first evaluation, e.g. 'E(x,y)'. Repeatable; all
    /// --insert/--delete flags form one batch.
    #[arg(long, value_name = "ATOM")]
    pub insert: Vec<String>,

    /// Delete an input fact after the first evaluation. Repeatable.
    #[arg(long, value_name = "ATOM")]
    pub delete: Vec<String>,

    /// A file of update batches: `+E(a,b).` / `-E(a,b).` lines, batches separated by a
    /// blank line or `;`.
    #[arg(long, value_name = "FILE")]
    pub updates: Option<PathBuf>,

    /// After every update batch, recompute from scratch and fail if the incremental state differs.
    #[arg(long)]
    pub check: bool,

    /// How update batches are maintained.
    #[arg(long, value_enum, default_value_t = MaintenanceArg::Auto)]
    pub maintenance: MaintenanceArg,

    /// Colour in diagnostics.
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    pub color: ColorArg,

    /// Leave wall-clock times out of the output (for reproducible output).
    #[arg(long)]
    pub no_timing: bool,

    /// List every fact of an update report; by default a batch that changes more than
    /// 1,000 facts is summarised as counts per relation.
    #[arg(long)]
    pub full_report: bool,
}

/// Soufflé's `-j`: a number of threads, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Jobs {
    Auto,
    Threads(usize),
}

fn parse_jobs(text: &str) -> Result<Jobs, String> {
    if text == "auto" {
        return Ok(Jobs::Auto);
    }
    match text.parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(Jobs::Threads(n)),
        _ => Err(format!("expected `auto` or a number of threads from 1 to {MAX_THREADS}")),
    }
}

/// What Soufflé's `--show FORM` prints, as the `--emit` form that prints it in dlc.
fn parse_show(form: &str) -> Result<Emit, String> {
    match form {
        "initial-ast" => Ok(Emit::Ast),
        "transformed-ast" | "transformed-datalog" => Ok(Emit::Ir),
        "transformed-ram" | "precedence-graph" | "scc-graph" => Ok(Emit::Plan),
        "parse-errors" | "type-analysis" => {
            Err(format!("dlc reports every error and type error with its span as it reads the program; `{form}` has no listing of its own (try `--emit ir`)"))
        }
        _ => Err("expected one of initial-ast, transformed-ast, transformed-datalog, transformed-ram, precedence-graph, scc-graph".to_string()),
    }
}

/// Soufflé's flags that make or instrument a compiled program: dlc refuses each, saying
/// what it does instead. Hidden from the help.
#[derive(Debug, Clone, Args)]
pub struct SouffleOnlyArgs {
    #[arg(short = 'o', long, value_name = "FILE", hide = true)]
    pub dl_program: Option<String>,
    #[arg(short = 'c', long, hide = true)]
    pub compile: bool,
    #[arg(short = 'p', long, value_name = "FILE", hide = true)]
    pub profile: Option<String>,
    #[arg(short = 't', long, value_name = "MODE", hide = true)]
    pub provenance: Option<String>,
}

impl SouffleOnlyArgs {
    /// The line refusing the first of these flags given, if one is.
    pub fn refusal(&self) -> Option<&'static str> {
        if self.dl_program.is_some() || self.compile {
            Some("-o/-c (Soufflé's compilation to an executable) is not needed: dlc compiles and evaluates the program in one run, `dlc prog.dl -F IN -D OUT`")
        } else if self.profile.is_some() {
            Some("-p/--profile (Soufflé's profile) is not written: `--emit trace` shows each round's work and sizes")
        } else if self.provenance.is_some() {
            Some("-t/--provenance (Soufflé's provenance) is not available: `--explain FACT` prints a proof of a fact")
        } else {
            None
        }
    }
}

/// The knobs of `--engine differential`.
#[derive(Debug, Clone, Args)]
pub struct DataflowArgs {
    /// Worker threads of `--engine differential` (default 1). Answers and files are the
    /// same with any N.
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub workers: Option<usize>,

    /// Run --engine differential as one of P processes (default 1), each started with
    /// the same command line but --process, -D and --connect-timeout; see "Running on
    /// several machines".
    #[arg(long, value_name = "P", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub processes: Option<usize>,

    /// This process's index in the cluster, 0 to P-1: its line in --hosts.
    #[arg(long, value_name = "I")]
    pub process: Option<usize>,

    /// A file of the cluster's `host:port` addresses, one a line, in process order.
    #[arg(long, value_name = "FILE")]
    pub hosts: Option<std::path::PathBuf>,

    /// Seconds to wait for every process of the cluster to connect.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub connect_timeout: u64,
}

impl DataflowArgs {
    /// The number of processes the run spans.
    pub fn processes(&self) -> usize {
        self.processes.unwrap_or(1)
    }
}

impl RunArgs {
    /// `--magic`, with `--no-magic` read as `off`.
    pub fn magic_mode(&self) -> MagicArg {
        if self.no_magic {
            MagicArg::Off
        } else {
            self.magic
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MagicArg {
    /// Magic sets: the exact rewrite `--emit magic-ir` shows.
    On,
    /// The original program.
    Off,
    /// Magic sets with adornment subsumption, or the original program where the rewrite
    /// cannot narrow the demand.
    Auto,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// The syntax tree with byte spans.
    Ast,
    /// The lowered program: predicates (arity, EDB/IDB), rules, facts, query.
    Ir,
    /// The adorned call graph reachable from the query.
    Adorned,
    /// The magic-sets program with every call's adornment, bound variables and prefix.
    MagicIr,
    /// Relational-algebra plans of every rule, and the strata.
    Plan,
    /// Evaluation trace: per-round deltas, row_tests, relation sizes, answers, updates.
    Trace,
    /// The query's answers (the default).
    Answers,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Dot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DialectArg {
    /// Soufflé if a line starts with `.decl` or `#include`, dlc otherwise.
    Auto,
    /// dlc's own language.
    Dlc,
    /// Soufflé's stratified fragment without arithmetic.
    Souffle,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    /// Semi-naive evaluation with indexes (fast).
    Seminaive,
    /// Naive synchronous rounds with nested-loop scans; counts row_tests.
    Reference,
    /// The program as one differential dataflow on --workers threads; update batches are
    /// epochs of input changes. Negation, comparisons, arithmetic and aggregates; no
    /// proofs (--explain) or rounds.
    Differential,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MaintenanceArg {
    /// Chosen per batch and reported: insertions alone are propagated; a batch deleting
    /// much of the input is recomputed; otherwise dred while its over-deletion stays
    /// small, then ranked, then recomputation, each past a work budget (a share of the
    /// evaluation's).
    Auto,
    /// Delete-and-rederive (docs/semantics.md, DRed): over-delete every fact with a derivation
    /// through a deleted fact, then rederive what is still derivable.
    Dred,
    /// DRed that over-deletes a fact only when no derivation from facts derived before it
    /// survives: usually far fewer facts, and the same final state.
    Ranked,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    Auto,
    Always,
    Never,
}

impl RunArgs {
    /// The pipeline's configuration these flags make: checked once here, read by every
    /// stage. A cluster's connection is added when the run joins it.
    pub fn options(&self) -> pipeline::Options {
        pipeline::Options {
            dialect: match self.dialect {
                DialectArg::Auto => None,
                DialectArg::Dlc => Some(pipeline::Dialect::Dlc),
                DialectArg::Souffle => Some(pipeline::Dialect::Souffle),
            },
            query: self.query.clone(),
            magic: match self.magic_mode() {
                MagicArg::On => pipeline::MagicMode::On,
                MagicArg::Off => pipeline::MagicMode::Off,
                MagicArg::Auto => pipeline::MagicMode::Auto,
            },
            max_adornments: self.max_adornments,
            limits: exec::Limits { max_tuples: self.max_tuples, max_memory: crate::memory::budget(self.max_memory) },
            engine: match self.engine {
                EngineArg::Seminaive => pipeline::Engine::Native(exec::NativeEngine::Seminaive),
                EngineArg::Reference => pipeline::Engine::Native(exec::NativeEngine::Reference),
                EngineArg::Differential => {
                    pipeline::Engine::Differential { workers: self.dataflow.workers.unwrap_or(1), cluster: None }
                }
            },
            threads: match (self.threads, self.jobs) {
                (Some(n), _) | (None, Some(Jobs::Threads(n))) => exec::Threads::new(n),
                _ => exec::Threads::available(),
            },
            maintenance: match self.maintenance {
                MaintenanceArg::Dred => exec::Maintenance::Dred,
                MaintenanceArg::Ranked => exec::Maintenance::Ranked,
                MaintenanceArg::Auto => exec::Maintenance::Auto,
            },
            all: self.all,
            evaluates: matches!(self.emit, Emit::Answers | Emit::Trace),
            shows_magic: matches!(self.emit, Emit::Adorned | Emit::MagicIr),
            compare: self.compare,
            insert: self.insert.clone(),
            delete: self.delete.clone(),
            macros: self.macros.clone(),
            warnings: !self.no_warn,
            functors: (!self.libraries.is_empty()).then(|| {
                let libraries = crate::functors::SharedLibraries::new(self.library_dir.clone(), self.libraries.clone());
                std::sync::Arc::new(libraries) as std::sync::Arc<dyn pipeline::FunctorLibrary>
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MaxMemory;

    fn options(args: &[&str]) -> pipeline::Options {
        let cli = Cli::try_parse_from(["dlc"].iter().chain(args)).unwrap();
        cli.run.options()
    }

    /// Without flags there is no tuple limit, only the budget derived from the machine;
    /// each flag sets its own limit alone.
    #[test]
    fn the_default_limits_are_the_memory_budget_and_no_tuple_limit() {
        let defaults = options(&["p.dl"]).limits;
        assert_eq!(defaults.max_tuples, None);
        assert_eq!(defaults.max_memory, crate::memory::budget(None));
        let explicit = options(&["p.dl", "--max-tuples", "1000", "--max-memory", "4G"]).limits;
        assert_eq!(explicit, exec::Limits { max_tuples: Some(1000), max_memory: Some(4 << 30) });
        assert_eq!(options(&["p.dl", "--max-memory", "none"]).limits, exec::Limits::default());
        let run = Cli::try_parse_from(["dlc", "p.dl", "--max-memory", "2GiB"]).unwrap().run;
        assert_eq!(run.max_memory, Some(MaxMemory::Bytes(2 << 30)));
        assert!(Cli::try_parse_from(["dlc", "p.dl", "--max-memory", "lots"]).is_err());
        assert!(Cli::try_parse_from(["dlc", "p.dl", "--max-tuples", "0"]).is_err());
    }
}
