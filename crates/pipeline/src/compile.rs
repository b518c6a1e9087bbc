//! The compile stage: a prepared program with its query, rewritten with magic sets for
//! the mode the options ask for.

use crate::options::{Dialect, MagicMode, Options};
use crate::prepare::{no_query, Batch, Failed, LoadedProgram};
use crate::{rewrite_options, InputFacts};
use diag::{Diagnostic, SourceMap};
use ir::{PredId, Program, Query};
use magic::MagicProgram;

/// A program compiled for its query: everything evaluation and maintenance start from.
#[derive(Debug)]
pub struct Session {
    /// The program's text and every other text read, for reports.
    pub sources: SourceMap,
    /// The source program (with its query, and every input predicate any input mentions).
    pub program: Program,
    /// The program's query: a compiled session always has one.
    pub query: Query,
    /// The magic-sets rewrite of `program` for its query: the exact rewrite for
    /// [`MagicMode::On`] and where the output shows the rewrite, the rewrite with
    /// adornment subsumption for [`MagicMode::Auto`]; not made for [`MagicMode::Off`]
    /// unless the output shows it, nor for `auto` past the adornment limit.
    pub magic: Option<MagicProgram>,
    /// All input facts: inline in the program and loaded.
    pub facts: InputFacts,
    /// The update batches, in order.
    pub batches: Vec<Batch>,
    /// Warnings to show even when compilation succeeds.
    pub warnings: Vec<Diagnostic>,
    /// Whether the program is a Soufflé program (queries are read in its syntax).
    pub souffle: bool,
    /// A Soufflé program's attribute names of every declared relation.
    pub attributes: Vec<(PredId, Vec<String>)>,
}

impl Session {
    /// The magic rewrite when it was made, else the source program: the program whose
    /// predicate table names every relation either evaluation has.
    pub fn widest(&self) -> &Program {
        self.magic.as_ref().map_or(&self.program, |m| &m.program)
    }
}

/// Rewrites a prepared program for its query.
pub fn compile(prepared: LoadedProgram, options: &Options) -> Result<Session, Failed> {
    let LoadedProgram { sources, file, program, facts, batches, warnings: diagnostics, souffle, .. } = prepared;
    let Some(query) = program.query.clone() else {
        let dialect = if souffle.is_some() { Dialect::Souffle } else { Dialect::Dlc };
        let diagnostics = vec![no_query(&sources, file, dialect)];
        return Err(Failed { sources, diagnostics });
    };
    let attributes = souffle.as_ref().map(|io| io.attributes.clone()).unwrap_or_default();
    let souffle = souffle.is_some();
    // `MagicMode::Off` evaluates the original program: a rewrite too large to make must
    // not stop it, so it is made only when the output shows it.
    if options.magic == MagicMode::Off && !options.shows_magic {
        let warnings = diagnostics;
        return Ok(Session { sources, program, query, magic: None, facts, batches, warnings, souffle, attributes });
    }
    // What is shown is the exact rewrite; what `auto` evaluates serves calls by
    // subsuming adornments.
    let evaluated = if options.shows_magic { MagicMode::On } else { options.magic };
    let magic = match magic::rewrite_with(&program, &query, rewrite_options(evaluated, options.max_adornments)) {
        Ok(magic) => magic,
        // Past the limit `auto` evaluates the original program, but a comparison shows
        // the rewrite beside it, so it needs the rewrite.
        Err(_) if evaluated == MagicMode::Auto && !options.compare => {
            let warnings = diagnostics;
            return Ok(Session { sources, program, query, magic: None, facts, batches, warnings, souffle, attributes });
        }
        Err(limit) => {
            let mut diagnostics = diagnostics;
            diagnostics.push(limit.to_diagnostic(&program));
            return Err(Failed { sources, diagnostics });
        }
    };
    // The rewrite must produce a program that passes the source checks; if it does not,
    // that is a bug in dlc, reported as such instead of evaluating a broken program.
    let broken: Vec<Diagnostic> = ir::validate(&magic.program)
        .iter()
        .map(|e| {
            e.to_diagnostic(&magic.program)
                .with_note("internal error: the magic rewrite produced this rule; please report it")
        })
        .collect();
    if !broken.is_empty() {
        return Err(Failed { sources, diagnostics: broken });
    }
    if let Some(d) = options.engine.unsupported(&magic.program) {
        return Err(Failed { sources, diagnostics: vec![d] });
    }
    let warnings = diagnostics;
    Ok(Session { sources, program, query, magic: Some(magic), facts, batches, warnings, souffle, attributes })
}
