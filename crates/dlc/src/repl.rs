//! `dlc repl`: a live materialised query. Update lines are staged and applied as one
//! DRed batch at `;` or an empty line; `?- ...` lines show (or recompile for) a query.

use crate::cli::RunArgs;
use crate::report;
use crate::session::{self, Maintainer};
use diag::SourceMap;
use ir::Program;
use std::io::{BufRead, Write};

const HELP: &str = "\
  +E(a,b).      stage an insertion        -E(a,b).   stage a deletion
  ;  or empty   apply the staged changes as one batch (DRed) and show what changed
  ?- R(a,Y).    show the answers (a different query is recompiled)
  :why R(a,d)   a proof of a fact         :whynot R(a,u)  why a fact is not derived
  :facts        list the input facts      :stats     relation sizes
  :help         this text                 :quit      leave (also end of input)";

struct Repl {
    /// The source program with the current query; the maintained program is derived from it.
    source: Program,
    maintainer: Maintainer,
    /// How batches are maintained; kept for the maintainer a new query recompiles.
    maintenance: exec::Maintenance,
    no_magic: bool,
    staged: exec::Update,
    staged_text: Vec<String>,
    sources: SourceMap,
    color: bool,
    batches: usize,
}

pub fn run(args: &RunArgs, input: &mut dyn BufRead, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let color = crate::use_color(args.color);
    if args.explain.is_some() || args.explain_missing.is_some() {
        return crate::usage_error(err, "the repl explains facts with `:why R(a,d)` and `:whynot R(a,u)`, not flags");
    }
    let session = match session::compile(args) {
        Ok(s) => s,
        Err(failed) => return crate::fail(err, failed, color),
    };
    crate::print_diagnostics(err, &session.warnings, &session.sources, color);
    let primary = if args.no_magic { session.program.clone() } else { session.magic.program.clone() };
    let maintenance = session::maintenance(args.maintenance);
    let mut repl = Repl {
        maintainer: Maintainer::new(primary, &session.facts, maintenance, false),
        maintenance,
        source: session.program,
        no_magic: args.no_magic,
        staged: exec::Update { inserts: Vec::new(), deletes: Vec::new() },
        staged_text: Vec::new(),
        sources: session.sources,
        color,
        batches: 0,
    };
    let _ = writeln!(
        out,
        "dlc repl: {} answer(s) to ?- {}. — `:help` lists the commands",
        session::answers(&repl.maintainer.program, repl.maintainer.state.db()).len(),
        repl.source.display_atom(&repl.source.query.as_ref().expect("compiled").atom)
    );
    for batch in session.batches {
        repl.staged = batch.update;
        repl.staged_text = batch.changes;
        repl.apply(out);
    }
    let mut line = String::new();
    let mut line_number = 0;
    loop {
        line.clear();
        line_number += 1;
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = line.trim();
        match text {
            "" | ";" => repl.apply(out),
            ":quit" | ":q" => break,
            ":help" => {
                let _ = writeln!(out, "{HELP}");
            }
            ":stats" => {
                let program = &repl.maintainer.program;
                let sizes = session::relation_sizes(program, repl.maintainer.state.db());
                let _ = writeln!(out, "{}", report::sizes_text(program, &sizes));
            }
            ":facts" => {
                let program = &repl.maintainer.program;
                let facts = repl.maintainer.input_facts();
                let mut listed: Vec<(ir::PredId, &[u32])> = facts.iter().collect();
                listed.sort_unstable();
                for (p, t) in listed {
                    let _ = writeln!(out, "{}.", report::fact_text(program, p, t));
                }
            }
            _ if text.starts_with("?-") => {
                repl.apply(out);
                repl.query(text, out, err);
            }
            _ if text.starts_with(":why") => {
                repl.apply(out);
                let state = crate::explain::ReplState {
                    source: &repl.source,
                    program: &repl.maintainer.program,
                    db: repl.maintainer.state.db(),
                    magic: !repl.no_magic,
                };
                crate::explain::repl_command(text, &state, &mut repl.sources, repl.color, out, err);
            }
            _ if text.starts_with('+') || text.starts_with('-') => repl.stage(line_number, text, err),
            _ => {
                let _ = writeln!(err, "not understood: `{text}` (`:help` lists the commands)");
            }
        }
        let _ = out.flush();
    }
    repl.apply(out);
    0
}

impl Repl {
    fn stage(&mut self, line: usize, text: &str, err: &mut dyn Write) {
        let file = self.sources.add(format!("<stdin:{line}>"), text.to_string());
        let (batches, diags) = syntax::parse_updates(text, file, &mut self.maintainer.program);
        crate::print_diagnostics(err, &diags, &self.sources, self.color);
        if diag::has_errors(&diags) {
            return;
        }
        for batch in batches {
            for (sign, facts) in [('-', &batch.deletes), ('+', &batch.inserts)] {
                for fact in facts {
                    let shown = session::fact_text(&self.maintainer.program, fact);
                    if !self.maintainer.reads(fact.pred) {
                        let _ = writeln!(err, "ignored: no rule reads {shown}");
                        continue;
                    }
                    let tuple = session::tuple_of(fact);
                    let list = if sign == '+' { &mut self.staged.inserts } else { &mut self.staged.deletes };
                    list.push(tuple);
                    self.staged_text.push(format!("{sign}{shown}"));
                }
            }
        }
    }

    /// Applies the staged changes, if any, and prints the batch report.
    fn apply(&mut self, out: &mut dyn Write) {
        if self.staged_text.is_empty() {
            return;
        }
        let update = std::mem::replace(&mut self.staged, exec::Update { inserts: Vec::new(), deletes: Vec::new() });
        let batch = session::Batch { changes: std::mem::take(&mut self.staged_text), update };
        let outcome = self.maintainer.apply(&batch.update, false, false);
        let mut text = String::new();
        let queried = self.queried();
        report::batch_text(&mut text, &self.maintainer.program, queried, self.batches, &batch, &outcome, true);
        self.batches += 1;
        let _ = write!(out, "{text}");
    }

    fn queried(&self) -> ir::PredId {
        self.source.query.as_ref().expect("the repl always has a query").atom.pred
    }

    /// Shows the answers of `?- ...`, recompiling when it is not the current query.
    fn query(&mut self, text: &str, out: &mut dyn Write, err: &mut dyn Write) {
        let file = self.sources.add("<query>", text.to_string());
        let mut candidate = self.source.clone();
        // Constants typed in earlier updates live in the maintained program's interner.
        candidate.consts = self.maintainer.program.consts.clone();
        let diags = syntax::parse_query(text, file, &mut candidate);
        crate::print_diagnostics(err, &diags, &self.sources, self.color);
        if diag::has_errors(&diags) {
            return;
        }
        let query = candidate.query.clone().expect("parse_query sets the query");
        let current = self.source.query.as_ref().expect("the repl always has a query");
        let same = query.atom.pred == current.atom.pred
            && query.atom.args.iter().map(|t| t.kind).eq(current.atom.args.iter().map(|t| t.kind));
        if !same {
            // A new query means new demand: recompile and evaluate the current facts from scratch.
            let facts = self.maintainer.input_facts();
            let primary = if self.no_magic { candidate.clone() } else { magic::rewrite(&candidate, &query).program };
            self.maintainer = Maintainer::new(primary, &facts, self.maintenance, false);
            let _ = writeln!(out, "recompiled for ?- {}.", candidate.display_atom(&query.atom));
            self.source = candidate;
        }
        let queried = self.queried();
        let answers = session::answers(&self.maintainer.program, self.maintainer.state.db());
        for t in &answers {
            let _ = writeln!(out, "{}", report::answer_text(&self.maintainer.program, queried, t));
        }
        let _ = writeln!(out, "{} answer(s)", answers.len());
    }
}
