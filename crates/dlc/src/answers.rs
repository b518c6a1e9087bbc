//! `--emit answers` and `--emit trace` of a program with a query: evaluate (the magic
//! program, the original, or both), apply the update batches, and print the answers,
//! a trace, a comparison or `-D` files.

use crate::cli::{Emit, Format, RunArgs};
use crate::{outputs, print_diagnostics, progress, report, stopped, to_json_text, use_color};
use crate::{EXIT_CHECK_FAILED, EXIT_INPUT_ERROR};
use pipeline::{Error, Evaluator, MagicMode, Maintainer, Maintaining, Options, Session};
use report::{BatchJson, EvaluationJson, TupleJson};
use serde::Serialize;
use std::io::{IsTerminal, Write};

/// `--emit answers` and `--emit trace`: evaluate (magic, original or both), then apply
/// the update batches incrementally.
pub fn run(args: &RunArgs, options: &Options, session: &Session, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let timing = !args.no_timing;
    let trace = args.emit == Emit::Trace;
    let json = args.format == Format::Json;
    let source = &session.program;
    // Rewritten unless `--magic off`, which `--compare` conflicts with.
    let magic_program = session.magic.as_ref().map_or(source, |m| &m.program);
    let queried = session.query.atom.pred;
    let mode = options.magic;
    let progress = || progress::reporter(err_is_terminal());
    let evaluator = Evaluator { record_rounds: trace, ..Evaluator::new(options) };

    // `--compare` evaluates the rewrite (and the original below) and maintains the
    // rewrite; `--magic auto` chooses the program to evaluate and maintain.
    let evaluated = if args.compare {
        evaluator.evaluate(magic_program, &session.facts, progress()).map(|run| {
            let choice = match session.magic.as_ref().filter(|_| mode == MagicMode::Auto) {
                Some(magic) => pipeline::auto_choice(source, magic, Some(&|p| run.eval.db.len(p))),
                None => pipeline::MagicChoice { magic: true, reason: "--magic on".into() },
            };
            (run, choice)
        })
    } else {
        evaluator.evaluate_chosen(source, session.magic.as_ref(), mode, &session.facts, &progress)
    };
    // The magic program's predicate table extends the source's: it names either's relations.
    let (main_run, choice) = match evaluated {
        Ok(evaluated) => evaluated,
        Err(e) => {
            // The original program's rules derive a source relation; the rewrite's the others.
            let derived_by_source = match &e {
                Error::Resource(e) => source.rules.iter().any(|r| r.head.pred == e.pred),
                _ => true,
            };
            let program = if derived_by_source { source } else { magic_program };
            return stopped(err, &session.sources, program, &e, args.color);
        }
    };
    // The program whose answers are reported (and maintained under updates).
    let (primary_name, primary) =
        if args.compare || choice.magic { ("magic", magic_program) } else { ("original", source) };
    let original_run = match args.compare.then(|| evaluator.evaluate(source, &session.facts, None)) {
        None => None,
        Some(Ok(run)) => Some(run),
        Some(Err(e)) => return stopped(err, &session.sources, source, &e, args.color),
    };

    let mut text = String::new();
    // The JSON document as far as the evaluations make it; the batches and the final
    // answers complete it.
    let mut doc = None;
    if trace {
        if json {
            doc = Some(RunJson::Trace(TraceJson {
                evaluation: report::evaluation_json(primary, &main_run, timing),
                program: primary_name,
                choice: choice_json(&choice),
                engine: format!("{:?}", args.engine).to_lowercase(),
                original: original_run.as_ref().map(|orig| report::evaluation_json(source, orig, timing)),
                agree: original_run.as_ref().map(|orig| orig.answers() == main_run.answers()),
                updates: None,
            }));
        } else {
            use std::fmt::Write as _;
            let _ = writeln!(text, "== {}", choice_line(&choice, args.compare));
            report::evaluation_text(&mut text, &format!("{primary_name} program"), primary, &main_run, timing);
            if let Some(orig) = &original_run {
                report::evaluation_text(&mut text, "original program", source, orig, timing);
                let agree = if orig.answers() == main_run.answers() { "yes" } else { "NO" };
                let _ = writeln!(text, "== answers agree: {agree}");
            }
        }
    } else if let Some(orig) = &original_run {
        if json {
            doc = Some(RunJson::Compare(CompareJson {
                magic: report::evaluation_json(magic_program, &main_run, timing),
                original: report::evaluation_json(source, orig, timing),
                agree: orig.answers() == main_run.answers(),
                choice: choice_json(&choice),
                updates: None,
                answers: Vec::new(),
            }));
        } else {
            report::compare_text(&mut text, magic_program, &main_run, source, orig, timing);
            use std::fmt::Write as _;
            let _ = writeln!(text, "{}", choice_line(&choice, true));
        }
    }

    // Incremental maintenance of the primary program over the batches.
    let mut exit = 0;
    let mut updates_json = None;
    let elapsed = main_run.elapsed;
    let last = if session.batches.is_empty() {
        Final::Evaluated(main_run)
    } else {
        // The evaluation just made is the maintained state's starting point.
        let how = Maintaining {
            whole: args.all,
            maintenance: options.maintenance,
            keep_record: trace || args.check,
            limits: options.limits,
        };
        let mut maintainer = match Maintainer::from_evaluation(primary.clone(), main_run, &session.facts, how) {
            Ok(maintainer) => maintainer,
            Err(e) => return stopped(err, &session.sources, primary, &e, args.color),
        };
        if args.full_report {
            maintainer.list_up_to = None;
        }
        let mut updates = Vec::new();
        for (i, batch) in session.batches.iter().enumerate() {
            let outcome = match maintainer.apply(&batch.update, trace || args.check, args.check) {
                Ok(outcome) => outcome,
                Err(e) => return stopped(err, &session.sources, primary, &e, args.color),
            };
            if json {
                updates.push(report::batch_json(primary, &session.query, i, batch, &outcome, timing, args.full_report));
            } else {
                report::batch_text(&mut text, primary, queried, i, batch, &outcome, timing, args.full_report);
            }
            if !outcome.mismatches.is_empty() {
                let names: Vec<String> = outcome.mismatches.iter().map(|p| primary.pred_name(*p)).collect();
                report::check_failed(err, i + 1, &names);
                exit = EXIT_CHECK_FAILED;
            }
        }
        if json {
            updates_json = Some(updates);
        }
        Final::Maintained(maintainer)
    };
    // Its answers are read straight from the relation by the writers below.
    let final_program = match &last {
        Final::Evaluated(_) => primary,
        Final::Maintained(m) => &m.program,
    };
    let final_answers = last.answers();
    // The caps as they are after the batches: an insertion can push a demand relation past
    // its cap, and the program chosen before is kept (maintained), which the summary says.
    let choice = match (&last, session.magic.as_ref()) {
        (Final::Maintained(m), Some(magic)) if choice.magic && mode == MagicMode::Auto && !args.compare => {
            let now = pipeline::auto_choice(source, magic, Some(&|p| m.state.len(p)));
            if now.magic {
                choice
            } else {
                let reason = now.reason.replace("--magic auto: ", "");
                pipeline::MagicChoice {
                    magic: true,
                    reason: format!("{}; after the updates {reason}, and the magic program is kept", choice.reason),
                }
            }
        }
        _ => choice,
    };

    if json {
        let answers = report::tuples_json(final_program, final_answers.pred(), final_answers.collect().iter());
        let doc = match doc {
            // The final answers replace the evaluation's.
            Some(RunJson::Trace(trace)) => RunJson::Trace(TraceJson {
                evaluation: EvaluationJson { answers, ..trace.evaluation },
                updates: updates_json,
                ..trace
            }),
            Some(RunJson::Compare(compare)) => {
                RunJson::Compare(CompareJson { updates: updates_json, answers, ..compare })
            }
            // The choice as it is after the batches.
            Some(RunJson::Answers(_)) | None => RunJson::Answers(AnswersJson {
                updates: updates_json,
                program: primary_name,
                choice: choice_json(&choice),
                answers,
            }),
        };
        let _ = write!(out, "{}", to_json_text(&doc));
    } else {
        let _ = write!(out, "{text}");
        if !trace {
            let mut summary = match &args.output_dir {
                // As in Soufflé's outputs: `<Pred>.csv`, tab-separated, `-` for standard output.
                Some(dir) => {
                    let relations = match args.all {
                        true => derived_source_preds(final_program)
                            .into_iter()
                            .map(|p| (p, last.rows(p), "row(s)"))
                            .collect(),
                        false => vec![(queried, final_answers, "answer(s)")],
                    };
                    let mut written = Vec::new();
                    for (pred, rows, unit) in relations {
                        let target = if dir.as_path() == std::path::Path::new("-") {
                            outputs::Target::Stdout
                        } else {
                            outputs::Target::File(dir.join(format!("{}.csv", source.pred_name(pred))))
                        };
                        let header = pipeline::attributes_of(&session.attributes, pred)
                            .filter(|_| matches!(target, outputs::Target::Stdout))
                            .map(|names| names.join("\t"));
                        let style = outputs::Style::dlc(header);
                        match outputs::write_relation(&target, final_program, pred, rows, &style, out) {
                            Ok((_, count)) => written.push(format!("{} ({count} {unit})", target.describe())),
                            Err(e) => {
                                let report = outputs::unwritable(&target, &e, None);
                                print_diagnostics(err, &[report], &session.sources, use_color(args.color));
                                return EXIT_INPUT_ERROR;
                            }
                        }
                    }
                    format!("wrote {}", written.join(", "))
                }
                None => {
                    // One buffered writer for millions of lines: standard output flushes every line.
                    let mut buffered = std::io::BufWriter::with_capacity(1 << 16, &mut *out);
                    let count = report::write_answers(&mut buffered, final_program, queried, final_answers);
                    let _ = buffered.flush();
                    // A failed write is reported by `Output` when the run ends.
                    format!("{} answer(s)", count.unwrap_or_else(|_| final_answers.count()))
                }
            };
            let sizes = pipeline::relation_sizes(final_program, |p| last.len(p));
            let program = if args.compare { "magic program".to_string() } else { choice.text() };
            summary += &format!("; {program}: {}", report::sizes_text(primary, &sizes));
            if timing {
                summary += &format!("; evaluated in {}", report::duration_text(elapsed));
            }
            let _ = writeln!(err, "{summary}");
        }
    }
    exit
}

/// Where a run's relations ended: its evaluation, or where the update batches left it.
enum Final {
    Evaluated(pipeline::Evaluated),
    Maintained(Maintainer),
}

impl Final {
    /// The query's answers.
    fn answers(&self) -> pipeline::SelectedRows<'_> {
        match self {
            Final::Evaluated(run) => run.selected(),
            Final::Maintained(m) => m.state.answers(&m.query),
        }
    }

    /// Every row of `pred`.
    fn rows(&self, pred: ir::PredId) -> pipeline::SelectedRows<'_> {
        match self {
            Final::Evaluated(run) => pipeline::SelectedRows::relation(&run.eval.db, pred),
            Final::Maintained(m) => m.state.rows(pred),
        }
    }

    /// The number of rows of `pred`.
    fn len(&self, pred: ir::PredId) -> usize {
        match self {
            Final::Evaluated(run) => run.eval.db.len(pred),
            Final::Maintained(m) => m.state.len(pred),
        }
    }
}

/// The line naming the program `--magic` chose, and why; with `--compare` (which
/// evaluates both), the one `--magic auto` would evaluate.
fn choice_line(choice: &pipeline::MagicChoice, compare: bool) -> String {
    match compare {
        true => format!("--magic chooses: {}", choice.text()),
        false => format!("evaluated: {}", choice.text()),
    }
}

/// The JSON document of `--emit answers` and `--emit trace`, one shape per kind of run.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum RunJson {
    Trace(TraceJson),
    Compare(CompareJson),
    Answers(AnswersJson),
}

/// `--emit trace`: the evaluation of the reported program (with the final answers), which
/// program it is and why, the engine; with `--compare` the original program's evaluation
/// and whether the answers agree; with update batches their reports.
#[derive(Debug, Serialize)]
struct TraceJson {
    #[serde(flatten)]
    evaluation: EvaluationJson,
    program: &'static str,
    choice: ChoiceJson,
    engine: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    original: Option<EvaluationJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agree: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    updates: Option<Vec<BatchJson>>,
}

/// `--compare`: both evaluations, whether their answers agree, what `--magic` chose,
/// the batches' reports and the final answers.
#[derive(Debug, Serialize)]
struct CompareJson {
    magic: EvaluationJson,
    original: EvaluationJson,
    agree: bool,
    choice: ChoiceJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    updates: Option<Vec<BatchJson>>,
    answers: Vec<TupleJson>,
}

/// `--emit answers`: the batches' reports, the program evaluated and why, the answers.
#[derive(Debug, Serialize)]
struct AnswersJson {
    #[serde(skip_serializing_if = "Option::is_none")]
    updates: Option<Vec<BatchJson>>,
    program: &'static str,
    choice: ChoiceJson,
    answers: Vec<TupleJson>,
}

/// The program `--magic` chose (`"magic"` or `"original"`), and why.
#[derive(Debug, Serialize)]
struct ChoiceJson {
    program: &'static str,
    reason: String,
}

fn choice_json(choice: &pipeline::MagicChoice) -> ChoiceJson {
    ChoiceJson { program: choice.name(), reason: choice.reason.clone() }
}

/// Every derived relation of `program` named in the source (not `@a:`/`@m:` ones).
fn derived_source_preds(program: &ir::Program) -> Vec<ir::PredId> {
    pipeline::derived_preds(program)
        .into_iter()
        .filter(|&p| matches!(program.pred(p).name, ir::PredName::Source(_)))
        .collect()
}

fn err_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}
