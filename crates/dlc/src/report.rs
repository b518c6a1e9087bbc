//! Text and JSON renderings of evaluation results and update reports.

use ir::{PredId, Program, Query};
use pipeline::{
    relation_sizes, Batch, BatchOutcome, Change, Evaluated, MaintainedBy, Phases, Tally, FULL_REPORT_MAX_FACTS,
};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use std::borrow::Cow;
use std::fmt::Write;
use std::time::Duration;

/// A JSON object keyed by relation name, `{"E": …, "R": …}`, in the order of the list:
/// what a relation maps to (its tuples, a count, its memory). Each relation is listed
/// once, as every list it is made from holds a predicate once.
#[derive(Debug)]
pub struct ByRelation<T>(pub Vec<(String, T)>);

impl<T: Serialize> Serialize for ByRelation<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

/// A tuple as JSON: the texts of its values.
pub type TupleJson = Vec<String>;

/// A tuple of `pred` as JSON: the values' texts.
pub fn tuple_json(program: &Program, pred: PredId, tuple: &[u32]) -> TupleJson {
    tuple.iter().enumerate().map(|(i, &v)| program.value_text(program.value(pred, i, v))).collect()
}

pub fn tuples_json<T: AsRef<[u32]>>(
    program: &Program,
    pred: PredId,
    tuples: impl IntoIterator<Item = T>,
) -> Vec<TupleJson> {
    tuples.into_iter().map(|t| tuple_json(program, pred, t.as_ref())).collect()
}

/// `{relation: [tuples]}` for grouped facts.
pub fn grouped_json(program: &Program, groups: &[(PredId, Vec<Vec<u32>>)]) -> ByRelation<Vec<TupleJson>> {
    ByRelation(
        groups.iter().map(|(pred, tuples)| (program.pred_name(*pred), tuples_json(program, *pred, tuples))).collect(),
    )
}

/// Groups loose facts by relation, in relation then tuple order.
pub fn group(facts: &[(PredId, Vec<u32>)]) -> Vec<(PredId, Vec<Vec<u32>>)> {
    let mut sorted = facts.to_vec();
    sorted.sort();
    let mut out: Vec<(PredId, Vec<Vec<u32>>)> = Vec::new();
    for (pred, tuple) in sorted {
        match out.last_mut() {
            Some((p, tuples)) if *p == pred => tuples.push(tuple),
            _ => out.push((pred, vec![tuple])),
        }
    }
    out
}

pub fn sizes_json(program: &Program, sizes: &[(PredId, usize)]) -> ByRelation<usize> {
    ByRelation(sizes.iter().map(|(p, n)| (program.pred_name(*p), *n)).collect())
}

pub fn sizes_text(program: &Program, sizes: &[(PredId, usize)]) -> String {
    let total: usize = sizes.iter().map(|(_, n)| n).sum();
    let parts: Vec<String> = sizes.iter().map(|(p, n)| format!("{} {n}", program.pred_name(*p))).collect();
    format!("{} ({total} derived)", parts.join(", "))
}

/// `R(a,b)`: an answer written over the source predicate `queried`.
pub fn answer_text(program: &Program, queried: PredId, tuple: &[u32]) -> String {
    format!("{}{}", program.display_pred(queried), program.display_tuple(queried, tuple))
}

/// Writes every answer as a line `R(a,b)` straight into `out`, read from the relation in
/// the order of `-D` files ([`crate::outputs::value_order`]), with no string per answer;
/// returns how many were written.
pub fn write_answers(
    out: &mut dyn std::io::Write,
    program: &Program,
    queried: PredId,
    answers: pipeline::SelectedRows<'_>,
) -> std::io::Result<usize> {
    let mut open = program.display_pred(queried).to_string();
    open.push('(');
    let mut texts = ConstTexts::new(program);
    let mut lines = Chunked::new(out);
    let mut count = 0;
    // The answers of a group share their prefix, whose text (`R(a,`) is made once per group.
    let (mut prefix, mut prefix_text) = (None::<Vec<u32>>, Chunked::detached());
    let (order, _) = crate::outputs::value_order(program, answers);
    answers.for_each_sorted(&order, |t| {
        count += 1;
        let Some((&last, row_prefix)) = t.split_last() else {
            lines.push(open.as_bytes())?;
            return lines.push(b")\n");
        };
        if prefix.as_deref() != Some(row_prefix) {
            prefix_text.buf.clear();
            prefix_text.buf.extend_from_slice(open.as_bytes());
            for (i, &v) in row_prefix.iter().enumerate() {
                texts.write(&mut prefix_text, queried, i, v)?;
                prefix_text.buf.push(b',');
            }
            prefix = Some(row_prefix.to_vec());
        }
        lines.push(&prefix_text.buf)?;
        texts.write(&mut lines, queried, row_prefix.len(), last)?;
        lines.push(b")\n")
    })?;
    lines.flush()?;
    Ok(count)
}

/// Writes constants as the printers show them (`ir::write_constant`), as bytes: a bare
/// constant's interned text as it is, decided once per constant; the rare text that needs
/// quotes is escaped into a reused buffer.
pub struct ConstTexts<'p> {
    program: &'p Program,
    /// The value store, read under one lock for the whole listing.
    texts: ir::Texts<'p>,
    /// Per constant: 0 not yet seen, 1 bare, 2 quoted.
    form: Vec<u8>,
    quoted: String,
}

impl<'p> ConstTexts<'p> {
    pub fn new(program: &'p Program) -> Self {
        let texts = program.consts.texts();
        ConstTexts { program, form: vec![0; texts.len()], texts, quoted: String::new() }
    }

    /// Writes value `v` of column `column` of `pred`.
    #[inline]
    pub fn write(&mut self, out: &mut Chunked<'_>, pred: PredId, column: usize, v: u32) -> std::io::Result<()> {
        let ty = self.program.column_type(pred, column);
        if ty != ir::ValueType::Symbol {
            self.quoted.clear();
            let _ = write!(self.quoted, "{}", ir::DisplayValue(self.program, ir::Value::from_raw(ty, v)));
            return out.push(self.quoted.as_bytes());
        }
        let text = self.texts.text(ir::Const(v));
        let form = match self.form.get_mut(v as usize) {
            Some(0) | None => {
                let form = if ir::is_bare_constant(text) { 1 } else { 2 };
                if let Some(slot) = self.form.get_mut(v as usize) {
                    *slot = form;
                }
                form
            }
            Some(form) => *form,
        };
        if form == 1 {
            return out.push(text.as_bytes());
        }
        self.quoted.clear();
        let _ = ir::write_constant(&mut self.quoted, text);
        out.push(self.quoted.as_bytes())
    }
}

/// Bytes gathered in a buffer of its own and handed to the writer in large chunks: a
/// line of output is several short pieces, and a call through `dyn Write` per piece costs
/// more than copying it.
pub struct Chunked<'w> {
    /// `None` for a buffer that only gathers bytes ([`Chunked::detached`]).
    out: Option<&'w mut dyn std::io::Write>,
    buf: Vec<u8>,
}

impl<'w> Chunked<'w> {
    const SIZE: usize = 1 << 16;

    pub fn new(out: &'w mut dyn std::io::Write) -> Self {
        Chunked { out: Some(out), buf: Vec::with_capacity(Self::SIZE) }
    }

    /// A buffer that keeps what is pushed, for text made once and copied many times.
    pub fn detached() -> Self {
        Chunked { out: None, buf: Vec::new() }
    }

    #[inline]
    pub fn push(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= Self::SIZE - 256 {
            if let Some(out) = &mut self.out {
                out.write_all(&self.buf)?;
                self.buf.clear();
            }
        }
        Ok(())
    }

    /// Pushes `head`, `tail` and a newline.
    #[inline]
    pub fn push_line(&mut self, head: &[u8], tail: &[u8]) -> std::io::Result<()> {
        self.buf.extend_from_slice(head);
        self.buf.extend_from_slice(tail);
        self.push(b"\n")
    }

    /// Hands over what is left; the writer itself is not flushed.
    pub fn flush(&mut self) -> std::io::Result<()> {
        if let Some(out) = &mut self.out {
            out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
}

/// `@a:R^bf(a,b)`: a fact of any relation.
pub fn fact_text(program: &Program, pred: PredId, tuple: &[u32]) -> String {
    format!("{}{}", program.display_pred(pred), program.display_tuple(pred, tuple))
}

pub fn duration_text(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms < 1000.0 {
        format!("{ms:.2} ms")
    } else {
        format!("{:.3} s", ms / 1e3)
    }
}

/// One evaluated program (`--emit trace`, `--compare`): its rounds, counters, relation
/// sizes, memory and answers, and with timing the seconds it took.
#[derive(Debug, Serialize)]
pub struct EvaluationJson {
    pub rounds: Vec<RoundJson>,
    pub iterations: usize,
    /// `null` unless the reference engine counted them.
    pub row_tests: Option<u64>,
    pub work: u64,
    pub relations: ByRelation<usize>,
    pub derived_facts: usize,
    pub memory: ByRelation<MemoryJson>,
    pub answers: Vec<TupleJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

/// One round of an evaluation: its number and the facts it derived first, by relation.
#[derive(Debug, Serialize)]
pub struct RoundJson {
    pub round: usize,
    pub new: ByRelation<Vec<TupleJson>>,
}

/// The heap bytes of one relation, part by part ([`exec::RelationBytes`]).
#[derive(Debug, Serialize)]
pub struct MemoryJson {
    pub rows: usize,
    pub set: usize,
    pub staged: usize,
    pub indexes: Vec<IndexMemoryJson>,
    pub locator: usize,
    pub total: usize,
}

/// One index of a relation: its key columns and bytes.
#[derive(Debug, Serialize)]
pub struct IndexMemoryJson {
    pub columns: Vec<usize>,
    pub bytes: usize,
}

/// The JSON object of one evaluated program: `rounds`, `row_tests`, `relations`, `memory`,
/// `answers`.
pub fn evaluation_json(program: &Program, run: &Evaluated, timing: bool) -> EvaluationJson {
    let rounds =
        run.eval.rounds.iter().map(|r| RoundJson { round: r.round, new: grouped_json(program, &r.new) }).collect();
    let sizes = relation_sizes(program, |p| run.eval.db.len(p));
    EvaluationJson {
        rounds,
        iterations: run.eval.iterations,
        row_tests: run.eval.row_tests,
        work: run.eval.work,
        relations: sizes_json(program, &sizes),
        derived_facts: sizes.iter().map(|(_, n)| n).sum::<usize>(),
        memory: memory_json(program, &run.eval.db),
        answers: tuples_json(program, run.selected().pred(), run.answers().iter()),
        seconds: timing.then_some(run.elapsed.as_secs_f64()),
    }
}

/// The heap bytes of every relation that holds any, in predicate order.
fn relation_memory(db: &exec::Database) -> Vec<(PredId, exec::RelationBytes)> {
    (0..db.relation_count() as u32)
        .map(|p| (PredId(p), db.relation_bytes(PredId(p))))
        .filter(|(_, bytes)| bytes.total() > 0)
        .collect()
}

/// `{"E": {"rows": …, "set": …, "staged": …, "indexes": [{"columns": [0], "bytes": …}],
/// "locator": …, "total": …}, …}`.
fn memory_json(program: &Program, db: &exec::Database) -> ByRelation<MemoryJson> {
    let memory = |bytes: exec::RelationBytes| MemoryJson {
        rows: bytes.rows,
        set: bytes.set,
        staged: bytes.staged,
        indexes: bytes.indexes.iter().map(|(cols, b)| IndexMemoryJson { columns: cols.clone(), bytes: *b }).collect(),
        locator: bytes.locator,
        total: bytes.total(),
    };
    ByRelation(relation_memory(db).into_iter().map(|(p, bytes)| (program.pred_name(p), memory(bytes))).collect())
}

/// One `memory:` line per relation: `E rows 64 B, set 120 B, staged 0 B, index(0) 88 B,
/// total 272 B` (a locator only when there is one).
fn memory_text(out: &mut String, program: &Program, db: &exec::Database) {
    for (p, bytes) in relation_memory(db) {
        let mut parts = vec![format!("rows {} B", bytes.rows), format!("set {} B", bytes.set)];
        parts.push(format!("staged {} B", bytes.staged));
        for (cols, b) in &bytes.indexes {
            let cols: Vec<String> = cols.iter().map(usize::to_string).collect();
            parts.push(format!("index({}) {b} B", cols.join(",")));
        }
        if bytes.locator > 0 {
            parts.push(format!("locator {} B", bytes.locator));
        }
        parts.push(format!("total {} B", bytes.total()));
        let _ = writeln!(out, "memory: {} {}", program.pred_name(p), parts.join(", "));
    }
}

/// The text trace of one evaluated program: rounds, row_tests, sizes, memory, answers.
pub fn evaluation_text(out: &mut String, title: &str, program: &Program, run: &Evaluated, timing: bool) {
    let _ = writeln!(out, "== {title}");
    for r in &run.eval.rounds {
        let facts: Vec<String> =
            r.new.iter().flat_map(|(p, tuples)| tuples.iter().map(move |t| fact_text(program, *p, t))).collect();
        let facts = if facts.is_empty() { "(nothing new)".to_string() } else { facts.join(" ") };
        let _ = writeln!(out, "round {}: {facts}", r.round);
    }
    let _ = writeln!(out, "iterations: {}", run.eval.iterations);
    match run.eval.row_tests {
        Some(n) => {
            let _ = writeln!(out, "row_tests: {n}");
        }
        None => {
            let _ = writeln!(out, "row_tests: (counted by --engine reference)");
        }
    }
    let _ = writeln!(out, "relations: {}", sizes_text(program, &relation_sizes(program, |p| run.eval.db.len(p))));
    memory_text(out, program, &run.eval.db);
    let queried = run.selected().pred();
    let answers: Vec<String> = run.answers().iter().map(|t| program.display_tuple(queried, t).to_string()).collect();
    let _ = writeln!(out, "answers ({}): {}", answers.len(), answers.join(" "));
    if timing {
        let _ = writeln!(out, "time: {}", duration_text(run.elapsed));
    }
}

/// The side-by-side table of `--compare`.
pub fn compare_text(
    out: &mut String,
    magic_program: &Program,
    magic: &Evaluated,
    source: &Program,
    original: &Evaluated,
    timing: bool,
) {
    let agree = magic.answers() == original.answers();
    let row = |out: &mut String, label: &str, a: String, b: String| {
        let _ = writeln!(out, "{label:<24}{a:<16}{b}");
    };
    row(out, "", "magic".into(), "original".into());
    row(out, "answers", magic.answers().len().to_string(), original.answers().len().to_string());
    row(out, "answers agree", if agree { "yes" } else { "NO" }.into(), String::new());
    let msizes = relation_sizes(magic_program, |p| magic.eval.db.len(p));
    let osizes = relation_sizes(source, |p| original.eval.db.len(p));
    let total = |s: &[(PredId, usize)]| s.iter().map(|(_, n)| n).sum::<usize>().to_string();
    row(out, "derived facts", total(&msizes), total(&osizes));
    for (p, n) in &msizes {
        row(out, &format!("  {}", magic_program.pred_name(*p)), n.to_string(), String::new());
    }
    for (p, n) in &osizes {
        row(out, &format!("  {}", source.pred_name(*p)), String::new(), n.to_string());
    }
    let rt = |e: &Evaluated| e.eval.row_tests.map_or("-".to_string(), |n| n.to_string());
    row(out, "row_tests", rt(magic), rt(original));
    row(out, "rounds/iterations", magic.eval.iterations.to_string(), original.eval.iterations.to_string());
    row(out, "work", magic.eval.work.to_string(), original.eval.work.to_string());
    if timing {
        row(out, "time", duration_text(magic.elapsed), duration_text(original.elapsed));
    }
}

/// Why the batch was maintained as it was, when it was not simply asked for: what
/// `--maintenance auto` chose, or a recomputation.
fn strategy_reason(outcome: &BatchOutcome) -> Option<&str> {
    match &outcome.change.how {
        MaintainedBy::Recomputed(phases) => Some(&phases.reason),
        MaintainedBy::Dred(phases) | MaintainedBy::Ranked(phases) if outcome.maintenance == exec::Maintenance::Auto => {
            Some(&phases.reason)
        }
        _ => None,
    }
}

/// The phases a batch report shows. The dataflow knows only the net change of a batch:
/// its report shows it in the phases' shape, the facts that went as over-deleted (in
/// one wave) and those that came as inserted, with nothing rederived.
fn phases(change: &Change) -> Cow<'_, Phases> {
    if let Some(phases) = change.how.phases() {
        return Cow::Borrowed(phases);
    }
    // A cluster with partitioned results added the counts up over its processes; the
    // lists are this process's part.
    let mut tallies: Vec<(PredId, Tally)> = change.gathered.clone().unwrap_or_default();
    let removed = change.removed.iter().map(|(p, ts)| (*p, ts.len(), 0));
    let lists = removed.chain(change.added.iter().map(|(p, ts)| (*p, 0, ts.len())));
    for (p, overdeleted, inserted) in lists.filter(|_| change.gathered.is_none()) {
        match tallies.iter_mut().find(|(q, _)| *q == p) {
            Some((_, tally)) => tally.inserted += inserted,
            None => tallies.push((p, Tally { overdeleted, inserted, ..Tally::default() })),
        }
    }
    tallies.sort_by_key(|(p, _)| *p);
    let waves = usize::from(tallies.iter().any(|(_, t)| t.overdeleted > 0));
    let listed = |facts: &ir::FactsByPred| match change.listed {
        true => ir::one_per_fact(facts),
        false => Vec::new(),
    };
    Cow::Owned(Phases {
        overdeleted_waves: Vec::new(),
        overdeleted: listed(&change.removed),
        rederived: Vec::new(),
        inserted: listed(&change.added),
        tallies,
        groups: Vec::new(),
        waves,
        reason: "the dataflow applies the batch as one epoch of changes".into(),
    })
}

type Grouped = Vec<(PredId, Vec<Vec<u32>>)>;

/// One phase's count in a relation's tally.
type Phase = fn(&Tally) -> usize;

/// The facts of DRed's insertion phase split by whether they held before the batch:
/// (those over-deleted earlier in the batch and derived again, those that are new). A
/// delete-only batch can re-insert facts but never make new ones.
fn split_inserted(r: &Phases) -> (Grouped, Grouped) {
    let over: std::collections::HashSet<(PredId, &[u32])> =
        r.overdeleted.iter().flat_map(|(p, ts)| ts.iter().map(move |t| (*p, t.as_slice()))).collect();
    let (mut restored, mut new): (Grouped, Grouped) = (Vec::new(), Vec::new());
    for (p, tuples) in &r.inserted {
        let (back, fresh): (Vec<Vec<u32>>, Vec<Vec<u32>>) =
            tuples.iter().cloned().partition(|t| over.contains(&(*p, t.as_slice())));
        for (list, tuples) in [(&mut restored, back), (&mut new, fresh)] {
            if !tuples.is_empty() {
                list.push((*p, tuples));
            }
        }
    }
    (restored, new)
}

/// Whether the batch's report lists every fact (see [`FULL_REPORT_MAX_FACTS`]): the
/// maintenance made the lists, and they are few or asked for.
fn lists_facts(outcome: &BatchOutcome, r: &Phases, full: bool) -> bool {
    let touched: usize = r.tallies.iter().map(|(_, t)| t.overdeleted + t.rederived + t.reinserted + t.inserted).sum();
    let facts = touched + outcome.answers_added.len() + outcome.answers_removed.len();
    outcome.change.listed && (full || facts <= FULL_REPORT_MAX_FACTS)
}

/// One phase's count per relation, from the report's tallies; only relations with any.
fn tallied(r: &Phases, phase: Phase) -> Vec<(PredId, usize)> {
    r.tallies.iter().map(|(p, t)| (*p, phase(t))).filter(|&(_, n)| n > 0).collect()
}

/// One update batch as JSON: its facts listed, or with too many of them a summary.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum BatchJson {
    Summary(BatchSummaryJson),
    Listed(BatchListJson),
}

/// A batch with more facts than [`FULL_REPORT_MAX_FACTS`]: counts per relation instead of
/// the facts, and `"summary": true`.
#[derive(Debug, Serialize)]
pub struct BatchSummaryJson {
    /// The batch's number, from 1.
    pub batch: usize,
    pub maintenance: &'static str,
    pub summary: bool,
    /// How many changes the batch asked for.
    pub changes: usize,
    pub overdeleted: ByRelation<usize>,
    pub overdeleted_waves: usize,
    pub rederived: ByRelation<usize>,
    pub reinserted: ByRelation<usize>,
    pub inserted: ByRelation<usize>,
    pub answers_added: usize,
    pub answers_removed: usize,
    pub relations: ByRelation<usize>,
    pub work: u64,
    pub recompute_work: Option<u64>,
    /// Why the batch was maintained as it was, when it was not simply asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups_recomputed: Option<ByRelation<usize>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

/// A batch with its facts listed: the changes, the no-ops, each phase's facts by relation
/// (the over-deleted ones also by wave), and the answers added and removed.
#[derive(Debug, Serialize)]
pub struct BatchListJson {
    /// The batch's number, from 1.
    pub batch: usize,
    pub maintenance: &'static str,
    /// `+E(a,b)` or `-E(a,b)` per change, as written.
    pub changes: Vec<String>,
    /// The changes that changed nothing, `-R(a)` or `+R(a)`.
    pub noop: Vec<String>,
    pub overdeleted: ByRelation<Vec<TupleJson>>,
    pub overdeleted_waves: Vec<ByRelation<Vec<TupleJson>>>,
    pub rederived: ByRelation<Vec<TupleJson>>,
    pub reinserted: ByRelation<Vec<TupleJson>>,
    pub inserted: ByRelation<Vec<TupleJson>>,
    pub answers_added: Vec<TupleJson>,
    pub answers_removed: Vec<TupleJson>,
    pub relations: ByRelation<usize>,
    pub work: u64,
    pub recompute_work: Option<u64>,
    /// Why the batch was maintained as it was, when it was not simply asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups_recomputed: Option<ByRelation<usize>>,
    /// With `recompute_work`, its ratio to `work` (`null` when the batch did no work).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work_ratio: Option<Option<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

/// One update batch as JSON; with more facts than [`FULL_REPORT_MAX_FACTS`] and not
/// `full`, counts per relation instead of the lists (and `"summary": true`).
pub fn batch_json(
    program: &Program,
    query: &Query,
    index: usize,
    batch: &Batch,
    outcome: &BatchOutcome,
    timing: bool,
    full: bool,
) -> BatchJson {
    let change = &outcome.change;
    let r = &*phases(change);
    let reason = strategy_reason(outcome).map(str::to_string);
    let groups_recomputed = (!r.groups.is_empty()).then(|| sizes_json(program, &r.groups));
    let seconds = timing.then_some(outcome.elapsed.as_secs_f64());
    if !lists_facts(outcome, r, full) {
        return BatchJson::Summary(BatchSummaryJson {
            batch: index + 1,
            maintenance: change.how.name(),
            summary: true,
            changes: batch.changes.len(),
            overdeleted: sizes_json(program, &tallied(r, |t| t.overdeleted)),
            overdeleted_waves: r.waves,
            rederived: sizes_json(program, &tallied(r, |t| t.rederived)),
            reinserted: sizes_json(program, &tallied(r, |t| t.reinserted)),
            inserted: sizes_json(program, &tallied(r, |t| t.inserted)),
            answers_added: outcome.answers_added.len(),
            answers_removed: outcome.answers_removed.len(),
            relations: sizes_json(program, &outcome.sizes),
            work: change.work,
            recompute_work: outcome.recompute_work,
            reason,
            groups_recomputed,
            seconds,
        });
    }
    let (restored, new) = split_inserted(r);
    let noop = change
        .noop_deletes
        .iter()
        .map(|(p, t)| format!("-{}", fact_text(program, *p, t)))
        .chain(change.noop_inserts.iter().map(|(p, t)| format!("+{}", fact_text(program, *p, t))))
        .collect();
    BatchJson::Listed(BatchListJson {
        batch: index + 1,
        maintenance: change.how.name(),
        changes: batch.changes.clone(),
        noop,
        overdeleted: grouped_json(program, &r.overdeleted),
        overdeleted_waves: r.overdeleted_waves.iter().map(|w| grouped_json(program, &group(w))).collect(),
        rederived: grouped_json(program, &r.rederived),
        reinserted: grouped_json(program, &restored),
        inserted: grouped_json(program, &new),
        answers_added: tuples_json(program, query.atom.pred, outcome.answers_added.iter()),
        answers_removed: tuples_json(program, query.atom.pred, outcome.answers_removed.iter()),
        relations: sizes_json(program, &outcome.sizes),
        work: change.work,
        recompute_work: outcome.recompute_work,
        reason,
        groups_recomputed,
        work_ratio: outcome.recompute_work.map(|w| (change.work != 0).then(|| w as f64 / change.work as f64)),
        seconds,
    })
}

/// One update batch as text; with more facts than [`FULL_REPORT_MAX_FACTS`] and not
/// `full`, counts per relation instead of the lists.
#[allow(clippy::too_many_arguments)]
pub fn batch_text(
    out: &mut String,
    program: &Program,
    queried: PredId,
    index: usize,
    batch: &Batch,
    outcome: &BatchOutcome,
    timing: bool,
    full: bool,
) {
    let change = &outcome.change;
    let r = &*phases(change);
    let lists = lists_facts(outcome, r, full);
    if lists || batch.changes.len() <= FULL_REPORT_MAX_FACTS {
        let _ = writeln!(out, "batch {}: {}", index + 1, batch.changes.join(" "));
    } else {
        let _ = writeln!(out, "batch {}: {} change(s)", index + 1, batch.changes.len());
    }
    if !lists {
        let _ =
            writeln!(out, "  (a summary: more than {FULL_REPORT_MAX_FACTS} facts changed; --full-report lists them)");
    }
    for (p, t) in &change.noop_deletes {
        let _ = writeln!(out, "  no-op: -{} is not present", fact_text(program, *p, t));
    }
    for (p, t) in &change.noop_inserts {
        let _ = writeln!(out, "  no-op: +{} is already present", fact_text(program, *p, t));
    }
    let facts = |g: &[(PredId, Vec<Vec<u32>>)]| {
        let v: Vec<String> = g.iter().flat_map(|(p, ts)| ts.iter().map(move |t| fact_text(program, *p, t))).collect();
        v.join(" ")
    };
    if let Some(reason) = strategy_reason(outcome) {
        let _ = writeln!(out, "  maintained by: {} ({reason})", change.how.name());
    }
    if let Some(groups) = groups_text(program, &r.groups) {
        let _ = writeln!(out, "  {groups}");
    }
    let waves = match change.how {
        MaintainedBy::Ranked(_) => "ranked wave(s)",
        _ => "wave(s)",
    };
    // Per relation, the number of facts: what a summary shows instead of the facts.
    let counts = |phase: Phase| {
        let v: Vec<String> = tallied(r, phase).iter().map(|(p, n)| format!("{} {n}", program.pred_name(*p))).collect();
        v.join(", ")
    };
    let total = |phase: Phase| r.tallies.iter().map(|(_, t)| phase(t)).sum::<usize>();
    let _ = writeln!(out, "  over-deleted {} in {} {waves}", total(|t| t.overdeleted), r.waves);
    if lists {
        for (i, wave) in r.overdeleted_waves.iter().enumerate() {
            let _ = writeln!(out, "    wave {}: {}", i + 1, facts(&group(wave)));
        }
    } else if total(|t| t.overdeleted) > 0 {
        let _ = writeln!(out, "    {}", counts(|t| t.overdeleted));
    }
    let (restored, new) = if lists { split_inserted(r) } else { (Vec::new(), Vec::new()) };
    // The insertion phase's facts that held before the batch are put back, not new.
    let phases: [(&str, &Grouped, Phase); 3] = [
        ("rederived", &r.rederived, |t| t.rederived),
        ("re-inserted", &restored, |t| t.reinserted),
        ("inserted", &new, |t| t.inserted),
    ];
    for (title, group, phase) in phases {
        match total(phase) {
            0 if title == "re-inserted" => Ok(()),
            0 => writeln!(out, "  {title} 0"),
            n if lists => writeln!(out, "  {title} {n}: {}", facts(group)),
            n => writeln!(out, "  {title} {n}: {}", counts(phase)),
        }
        .ok();
    }
    let answers = |ts: &ir::Tuples| {
        if ts.is_empty() {
            "(none)".to_string()
        } else if !lists {
            format!("{}", ts.len())
        } else {
            ts.iter().map(|t| answer_text(program, queried, t)).collect::<Vec<_>>().join(" ")
        }
    };
    let _ = writeln!(out, "  answers removed: {}", answers(&outcome.answers_removed));
    let _ = writeln!(out, "  answers added: {}", answers(&outcome.answers_added));
    let _ = writeln!(out, "  relations: {}", sizes_text(program, &outcome.sizes));
    match outcome.recompute_work {
        Some(w) => {
            let _ = writeln!(out, "  work: {} (recomputation from scratch: {w})", change.work);
        }
        None => {
            let _ = writeln!(out, "  work: {}", change.work);
        }
    }
    if timing {
        let _ = writeln!(out, "  time: {}", duration_text(outcome.elapsed));
    }
}

/// `aggregate groups recomputed: deg_agg 1`: per reduction whose rows a batch changed,
/// how many of its groups were read again (or, for a count, updated in place).
fn groups_text(program: &Program, groups: &[(PredId, usize)]) -> Option<String> {
    let v: Vec<String> = groups.iter().map(|(p, n)| format!("{} {n}", program.pred_name(*p))).collect();
    (!v.is_empty()).then(|| format!("aggregate groups recomputed: {}", v.join(", ")))
}

/// One update batch of a Soufflé program without a query: how it was maintained, the
/// counts of each phase, and the net change of every wanted (`.output`) relation.
pub fn outputs_batch_text(
    program: &Program,
    index: usize,
    batch: &Batch,
    change: &Change,
    wanted: &[PredId],
) -> String {
    let report = &*phases(change);
    let mut out = String::new();
    if batch.changes.len() <= FULL_REPORT_MAX_FACTS {
        let _ = writeln!(out, "batch {}: {}", index + 1, batch.changes.join(" "));
    } else {
        let _ = writeln!(out, "batch {}: {} change(s)", index + 1, batch.changes.len());
    }
    let noops = change.noop_deletes.len() + change.noop_inserts.len();
    if noops > 0 {
        let _ = writeln!(out, "  no-op: {noops} change(s) (deletes of absent facts, inserts of present ones)");
    }
    let _ = writeln!(out, "  maintained by: {} ({})", change.how.name(), report.reason);
    if let Some(groups) = groups_text(program, &report.groups) {
        let _ = writeln!(out, "  {groups}");
    }
    let total = |phase: Phase| report.tallies.iter().map(|(_, t)| phase(t)).sum::<usize>();
    let _ = writeln!(
        out,
        "  over-deleted {} in {} wave(s), rederived {}, re-inserted {}, inserted {}",
        total(|t| t.overdeleted),
        report.waves,
        total(|t| t.rederived),
        total(|t| t.reinserted),
        total(|t| t.inserted)
    );
    for &pred in wanted {
        let (removed, added) = change.net_count(pred);
        let _ = writeln!(out, "  {}: {removed} removed, {added} added", program.pred_name(pred));
    }
    let _ = writeln!(out, "  work: {}", change.work);
    out
}

/// The program listing of `--emit ir --format json`: its predicates, rules (as
/// `--emit ir` prints them), facts and query.
#[derive(Debug, Serialize)]
pub struct ProgramJson {
    pub predicates: Vec<PredicateJson>,
    pub rules: Vec<String>,
    pub facts: Vec<String>,
    pub query: Option<String>,
}

/// A predicate of the program: its name, arity, and whether it is input or derived.
#[derive(Debug, Serialize)]
pub struct PredicateJson {
    pub name: String,
    pub arity: usize,
    pub kind: PredicateKind,
}

/// `"edb"` for an input predicate, `"idb"` for a derived one.
#[derive(Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PredicateKind {
    Edb,
    Idb,
}

/// The program listing of `--emit ir --format json`.
pub fn program_json(program: &Program) -> ProgramJson {
    let predicates = program
        .pred_ids()
        .map(|p| {
            let pred = program.pred(p);
            PredicateJson {
                name: program.pred_name(p),
                arity: pred.arity,
                kind: match pred.kind {
                    ir::PredKind::Edb => PredicateKind::Edb,
                    ir::PredKind::Idb => PredicateKind::Idb,
                },
            }
        })
        .collect();
    ProgramJson {
        predicates,
        rules: program.rules.iter().map(|r| program.display_typed_rule(r).to_string()).collect(),
        facts: program.facts.iter().map(|f| pipeline::fact_text(program, f)).collect(),
        query: program.query.as_ref().map(|q| ir::DisplayQuery(program, q).to_string()),
    }
}

/// Tells on `err` that `--check` found the incremental state after batch `batch` (from
/// 1) different from a recomputation in the relations `names`.
pub fn check_failed(err: &mut dyn std::io::Write, batch: usize, names: &[String]) {
    let _ = writeln!(
        err,
        "dlc: --check failed after batch {batch}: incremental state differs from recomputation in {}",
        names.join(", ")
    );
}
