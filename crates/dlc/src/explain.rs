//! `--explain` and `--explain-missing` (and the repl's `:why` and `:whynot`): a proof
//! tree of a fact, or why a fact is not derived, in source terms.
//!
//! exec explains facts of relations; this module says which relations a source fact is
//! in and how to show them. Through the magic program a fact `R(a,d)` is a fact of an
//! answer relation `@a:R^α` (the query's adornment first), and is shown as `R(a,d)`;
//! demand facts `@m:R^α(a)` keep their names and are shown as the demands that enabled
//! a step; every generated rule is shown as the source rule (or query) it came from.

use crate::cli::{Emit, Format, RunArgs};
use diag::SourceMap;
use exec::{Attempt, Blocked, Database, Explainer, Leaf, Proof, Step, WhyNot};
use ir::{Fact, Origin, PredId, PredKind, PredName, Program, RuleId, Span, Symbol, TermKind};
use pipeline::explain::OwnDemand;
use pipeline::{Evaluator, Maintainer, Maintaining};
use serde::Serialize;
use std::fmt::Write as _;
use std::io::Write;

/// Text proofs deeper than this print the levels above it and a note: each level is
/// indented, so a chain of 100,000 steps would print gigabytes.
const MAX_TEXT_DEPTH: usize = 100;

/// What an explanation reads: the evaluated (or maintained) program and its database,
/// the source program it was made from, and the sources for locations.
pub struct Context<'a> {
    pub source: &'a Program,
    /// The program whose facts `db` holds (the magic rewrite or the source itself); its
    /// interner holds every constant of the fact asked about.
    pub program: &'a Program,
    pub db: &'a Database,
    pub sources: &'a SourceMap,
    /// Whether `program` is the magic rewrite.
    pub magic: bool,
    /// `--max-memory` and `--max-tuples`, for the evaluation of a fact's own demand
    /// ([`own_demand`]).
    pub limits: exec::Limits,
    /// Whether `program` is the rewrite for the fact's own demand, not the user's query.
    pub own_demand: bool,
}

/// How to print.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Text,
    Json,
    Dot,
}

/// An explanation, printed, and whether the fact asked about holds.
pub struct Explained {
    pub text: String,
    pub holds: bool,
}

impl Context<'_> {
    fn program_name(&self) -> &'static str {
        match (self.magic, self.own_demand) {
            (true, false) => "magic program",
            (true, true) => "magic program of its own demand",
            (false, _) => "original program",
        }
    }

    /// The user's query, `?- R(a,Y).`.
    fn query_text(&self) -> String {
        self.source.query.as_ref().map(|q| format!("?- {}.", ir::DisplayQuery(self.source, q))).unwrap_or_default()
    }

    /// Whether the magic program may lack `fact` although it holds: the rewrite derives
    /// every answer of the query, but of other facts only those the query demanded.
    fn outside_the_answers(&self, fact: &Fact) -> bool {
        let tuple = &fact.values;
        self.magic
            && !self.own_demand
            && self.source.pred(fact.pred).kind == PredKind::Idb
            && !self.source.query.as_ref().is_some_and(|q| q.atom.pred == fact.pred && q.matches(tuple))
    }

    /// The relations of `program` that hold the source fact's predicate.
    fn relations(&self, pred: PredId) -> Vec<PredId> {
        pipeline::explain::fact_relations(self.source, self.program, self.magic, pred)
    }

    /// `R(a,d)` for a fact of an answer relation, `@m:R^bf(a)` for a demand, `E(a,b)`.
    fn fact_text(&self, pred: PredId, tuple: &[u32]) -> String {
        let p = self.program;
        match &p.pred(pred).name {
            PredName::Answer(s, _) => format!("{}{}", p.symbols.text(*s), p.display_tuple(pred, tuple)),
            _ => format!("{}{}", p.display_pred(pred), p.display_tuple(pred, tuple)),
        }
    }

    fn is_demand(&self, pred: PredId) -> bool {
        matches!(self.program.pred(pred).name, PredName::Demand(..))
    }

    fn location(&self, span: Span) -> String {
        let (line, col) = self.sources.line_col(span.file, span.start);
        format!("{}:{line}:{col}", self.sources.name(span.file))
    }

    /// How a rule of `program` is shown: what it is, where, and its source text.
    /// The source rule a rule of the evaluated program with origin `Source` is: itself,
    /// or in a magic program, which copies some rules whole (a reduction and what it
    /// reads) at positions of its own, the source rule it equals.
    fn copied_source(&self, rule: RuleId) -> RuleId {
        let r = self.program.rule(rule);
        match self.source.rules.iter().position(|s| s == r) {
            Some(k) if self.magic => RuleId(k as u32),
            _ => rule,
        }
    }

    fn rule_text(&self, rule: RuleId) -> RuleShown {
        let r = self.program.rule(rule);
        // `r1`, as `--emit ir` and `--emit magic-ir` name source rule 1.
        let source_rule = |id: RuleId| (format!("rule r{}", id.0), self.source.rule(id));
        let (what, span, text) = match r.origin {
            Origin::Source => {
                let (what, rule) = source_rule(self.copied_source(rule));
                (what, rule.span, self.source.display_rule(rule).to_string())
            }
            Origin::Main { rule } => {
                let (what, rule) = source_rule(rule);
                (what, rule.span, self.source.display_rule(rule).to_string())
            }
            Origin::Demand { rule, position } => {
                let (what, rule) = source_rule(rule);
                let call = &rule.body[position];
                (
                    format!("the call {} of {what}", self.source.display_atom(call)),
                    call.span,
                    self.source.display_rule(rule).to_string(),
                )
            }
            Origin::Seed => {
                let query = self.source.query.as_ref().map(|q| format!("?- {}.", ir::DisplayQuery(self.source, q)));
                ("the query".to_string(), r.span, query.unwrap_or_default())
            }
        };
        RuleShown { what, at: self.location(span), text }
    }
}

struct RuleShown {
    what: String,
    at: String,
    text: String,
}

/// Evaluates the own demand of `fact`, which the magic program of the user's query did
/// not derive, over the input facts `ctx.db` holds now
/// ([`pipeline::explain::own_demand`]); the explained program's interner holds the
/// fact's constants and those of updates.
fn own_demand(ctx: &Context<'_>, fact: &Fact) -> Result<OwnDemand, String> {
    pipeline::explain::own_demand(ctx.source, &ctx.program.consts, ctx.db, fact, ctx.limits)
}

/// `--explain`: a proof of the fact, or a message that it does not hold.
pub fn explain(ctx: &Context<'_>, fact: &Fact, shape: Shape) -> Explained {
    let tuple = fact.values.clone();
    let asked = crate::report::fact_text(ctx.program, fact.pred, &tuple);
    let mut explainer = Explainer::new(ctx.program, ctx.db);
    let input = ctx.source.pred(fact.pred).kind == PredKind::Edb;
    let found = ctx.relations(fact.pred).into_iter().find_map(|p| explainer.prove(p, &tuple));
    if found.is_none() && ctx.outside_the_answers(fact) {
        return explain_outside(ctx, fact, &asked, shape, false);
    }
    let Some(proof) = found else {
        let why = if input {
            format!("{asked} is not an input fact")
        } else if ctx.magic && ctx.relations(fact.pred).is_empty() {
            format!("{asked} is not derived: the query never calls {}", ctx.source.pred_name(fact.pred))
        } else {
            format!("{asked} is not derived ({}); --explain-missing (:whynot in the repl) says why", ctx.program_name())
        };
        let text = match shape {
            Shape::Json => crate::to_json_text(&NotDerivedJson {
                asked: AskedJson { fact: &asked, program: program_key(ctx), holds: false },
                message: why,
            }),
            Shape::Text | Shape::Dot => why + "\n",
        };
        return Explained { text, holds: false };
    };
    let text = match shape {
        Shape::Text => proof_text(ctx, &asked, &proof),
        Shape::Json => crate::to_json_text(&proof_json(ctx, &asked, &proof)),
        Shape::Dot => proof_dot(ctx, &proof),
    };
    Explained { text, holds: true }
}

/// `--explain` (or, with `missing`, `--explain-missing`) of a fact outside the answers
/// of the user's query, which its magic program need not derive: explained in the
/// evaluation of the fact's own demand, after a line that says so.
fn explain_outside(ctx: &Context<'_>, fact: &Fact, asked: &str, shape: Shape, missing: bool) -> Explained {
    let query = ctx.query_text();
    let own = match own_demand(ctx, fact) {
        Ok(own) => own,
        Err(message) => {
            let why =
                format!("{asked} is not an answer of {query}, and evaluating the fact's own demand stopped: {message}");
            let text = match shape {
                Shape::Json => crate::to_json_text(&NotDerivedJson {
                    asked: AskedJson { fact: asked, program: "own-demand", holds: false },
                    message: why,
                }),
                Shape::Text | Shape::Dot => why + "\n",
            };
            return Explained { text, holds: false };
        }
    };
    let inner = Context {
        source: &own.source,
        program: &own.program,
        db: &own.db,
        sources: ctx.sources,
        magic: own.magic,
        limits: ctx.limits,
        own_demand: true,
    };
    let explained = if missing { explain_missing(&inner, fact, shape) } else { explain(&inner, fact, shape) };
    let text = match shape {
        Shape::Text => format!(
            "{asked} is not an answer of {query}, and the {} derives only what that query demands; \
             explained through the fact's own demand, ?- {asked}.\n{}",
            ctx.program_name(),
            explained.text
        ),
        // A proof's JSON and dot say which program in their own fields.
        Shape::Json | Shape::Dot => explained.text,
    };
    Explained { text, holds: explained.holds }
}

fn program_key(ctx: &Context<'_>) -> &'static str {
    match (ctx.magic, ctx.own_demand) {
        (true, false) => "magic",
        (true, true) => "own-demand",
        (false, _) => "original",
    }
}

/// One line of a proof node: the fact and how it holds.
fn node_line(ctx: &Context<'_>, proof: &Proof, i: usize) -> String {
    let node = &proof.nodes[i];
    let fact = ctx.fact_text(node.pred, &node.tuple);
    let fact = if ctx.is_demand(node.pred) { format!("demand {fact}") } else { fact };
    match &node.step {
        Step::Input => format!("{fact}  input fact"),
        Step::Given => format!("{fact}  given with the input, not derived"),
        Step::Aggregate { rule, rows, .. } => {
            let shown = ctx.rule_text(*rule);
            format!("{fact}  aggregate of {rows} row(s) by {} at {}  {}", shown.what, shown.at, shown.text)
        }
        Step::Rule { rule, .. } => {
            let shown = ctx.rule_text(*rule);
            format!("{fact}  by {} at {}  {}", shown.what, shown.at, shown.text)
        }
    }
}

/// A value of type `ty` as the program prints it.
fn value_text(ctx: &Context<'_>, ty: ir::ValueType, v: u32) -> String {
    ir::DisplayValue(ctx.program, ir::Value::from_raw(ty, v)).to_string()
}

/// The comparison of `rule` as written, shown beside the values of one that computes
/// (`  (_0 = N + 1)`); nothing for a comparison of plain terms, whose values say it all.
fn computed_text(ctx: &Context<'_>, rule: &ir::Rule, comparison: usize) -> String {
    match rule.comparisons.get(comparison) {
        Some(c) if c.is_arithmetic() => {
            let (left, right) = (ir::DisplayExpr(ctx.program, &c.left), ir::DisplayExpr(ctx.program, &c.right));
            format!("  ({})", c.op.write(&left.to_string(), &right.to_string()))
        }
        _ => String::new(),
    }
}

/// A leaf of an instance of `rule`: `!Q(a,_)  no such fact`, `10 >= 7  holds`, or
/// `3 = 3  holds  (_0 = N + 1)`.
fn leaf_text(ctx: &Context<'_>, rule: &ir::Rule, leaf: &Leaf) -> String {
    match leaf {
        Leaf::Absent { pred, pattern, .. } => {
            let types = &ctx.program.pred(*pred).types;
            let text = |(v, &ty): (&Option<u32>, _)| v.map_or("_".to_string(), |v| value_text(ctx, ty, v));
            let args: Vec<String> = pattern.iter().zip(types).map(text).collect();
            format!("!{}({})  no such fact", ctx.program.pred_name(*pred), args.join(","))
        }
        Leaf::Compared { comparison, op, ty, left, right } => {
            let (left, right) = (value_text(ctx, *ty, *left), value_text(ctx, *ty, *right));
            format!("{}  holds{}", op.write(&left, &right), computed_text(ctx, rule, *comparison))
        }
        Leaf::Generated { ty, value, bounds, .. } => {
            format!("{} = {}  holds", value_text(ctx, *ty, *value), range_text(ctx, *ty, bounds))
        }
    }
}

/// `range(1, 5)` or `range(0, 10, 2)`: a range with its bounds' values.
fn range_text(ctx: &Context<'_>, ty: ir::ValueType, bounds: &[u32]) -> String {
    let bounds: Vec<String> = bounds.iter().map(|&b| value_text(ctx, ty, b)).collect();
    format!("range({})", bounds.join(", "))
}

/// What excluded the matches of the positive atoms of `rule`.
fn blocked_text(ctx: &Context<'_>, rule: &ir::Rule, blocked: &Blocked) -> String {
    match blocked {
        Blocked::Negation { pred, fact, .. } => {
            format!("a negated atom finds the fact {}", crate::report::fact_text(ctx.program, *pred, fact))
        }
        Blocked::Comparison { comparison, op, ty, left, right } => {
            let (left, right) = (value_text(ctx, *ty, *left), value_text(ctx, *ty, *right));
            format!("the comparison {} does not hold{}", op.write(&left, &right), computed_text(ctx, rule, *comparison))
        }
        Blocked::Undefined { comparison } => {
            format!(
                "an expression has no value (a division by zero, or a text that writes no integer){}",
                computed_text(ctx, rule, *comparison)
            )
        }
        Blocked::Generator { ty, value, bounds, .. } => match (value, bounds) {
            (_, None) => {
                "a bound of a range has no value (a division by zero, or a text that writes no integer)".into()
            }
            (Some(value), Some(bounds)) => {
                format!("{} is no value of {}", value_text(ctx, *ty, *value), range_text(ctx, *ty, bounds))
            }
            (None, Some(bounds)) => format!("no value of {} leads to a derivation", range_text(ctx, *ty, bounds)),
        },
    }
}

/// The proof as an indented tree; a derived fact met again is not expanded again.
fn proof_text(ctx: &Context<'_>, asked: &str, proof: &Proof) -> String {
    let mut out = format!("{asked}: a proof of height {} ({})\n", proof.height(), ctx.program_name());
    let mut expanded = vec![false; proof.nodes.len()];
    // A node to print, or (`Err`) how many rows of an aggregate's group it did not show.
    let mut stack: Vec<(Result<usize, usize>, usize)> = vec![(Ok(0), 0)];
    while let Some((item, depth)) = stack.pop() {
        let indent = "  ".repeat(depth);
        let i = match item {
            Ok(i) => i,
            Err(more) => {
                let _ = writeln!(out, "{indent}… and {more} more row(s) of the group");
                continue;
            }
        };
        let node = &proof.nodes[i];
        let (rule, body, leaves, more) = match &node.step {
            Step::Rule { rule, body, leaves } => (rule, body, leaves.as_slice(), 0),
            Step::Aggregate { rule, rows, shown } => (rule, shown, &[][..], rows.saturating_sub(shown.len())),
            Step::Input | Step::Given => {
                let _ = writeln!(out, "{indent}{}", node_line(ctx, proof, i));
                continue;
            }
        };
        if expanded[i] {
            let fact = ctx.fact_text(node.pred, &node.tuple);
            let fact = if ctx.is_demand(node.pred) { format!("demand {fact}") } else { fact };
            let _ = writeln!(out, "{indent}{fact}  (shown above)");
            continue;
        }
        expanded[i] = true;
        let _ = writeln!(out, "{indent}{}", node_line(ctx, proof, i));
        for leaf in leaves {
            let _ = writeln!(out, "{indent}  {}", leaf_text(ctx, ctx.program.rule(*rule), leaf));
        }
        if depth + 1 >= MAX_TEXT_DEPTH && !body.is_empty() {
            let _ =
                writeln!(out, "{indent}  … {} more level(s) below; --format json lists the whole proof", node.height);
            continue;
        }
        if more > 0 {
            // Printed after the rows shown, which the stack pops first.
            stack.push((Err(more), depth + 1));
        }
        stack.extend(body.iter().rev().map(|&c| (Ok(c), depth + 1)));
    }
    out
}

/// The first keys of every `--explain` and `--explain-missing` JSON document: the fact
/// asked about, the program it is explained in (`"magic"`, `"original"`, or
/// `"own-demand"` for the magic program of the fact's own demand), and whether it holds.
#[derive(Debug, Serialize)]
struct AskedJson<'a> {
    fact: &'a str,
    program: &'static str,
    holds: bool,
}

/// `--explain` of a fact that does not hold: why not, in a sentence.
#[derive(Debug, Serialize)]
struct NotDerivedJson<'a> {
    #[serde(flatten)]
    asked: AskedJson<'a>,
    message: String,
}

/// `--explain` of a fact that holds: the height of its proof and the proof's nodes, the
/// first of them the fact.
#[derive(Debug, Serialize)]
struct ProofJson<'a> {
    #[serde(flatten)]
    asked: AskedJson<'a>,
    height: usize,
    nodes: Vec<ProofNodeJson>,
}

/// One fact of a proof: its text, relation and values, whether it is a demand, the
/// height of the proof under it, and how it holds.
#[derive(Debug, Serialize)]
struct ProofNodeJson {
    id: usize,
    fact: String,
    relation: String,
    tuple: crate::report::TupleJson,
    demand: bool,
    height: usize,
    #[serde(flatten)]
    step: StepJson,
}

/// How a fact of a proof holds: each shape names its `kind`.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum StepJson {
    /// `"input"` or `"given"`: nothing below it.
    Leaf { kind: &'static str },
    /// `"aggregate"`: the rows of its group, the rule, the rows shown (node ids) and how
    /// many more there are.
    Aggregate { kind: &'static str, rows: usize, rule: RuleJson, children: Vec<usize>, more_rows: usize },
    /// `"derived"`: the instance's negations and comparisons (when it has any), the rule,
    /// and the facts of its body atoms (node ids).
    Derived {
        #[serde(skip_serializing_if = "Vec::is_empty")]
        leaves: Vec<String>,
        kind: &'static str,
        rule: RuleJson,
        children: Vec<usize>,
    },
}

/// A rule as an explanation shows it: what it is, where, and its source text; in a
/// proof's derived node also the source rule's name and the rule's position in the
/// rewrite.
#[derive(Debug, Serialize)]
struct RuleJson {
    by: String,
    at: String,
    text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rewritten: Option<u32>,
}

impl From<RuleShown> for RuleJson {
    fn from(shown: RuleShown) -> Self {
        RuleJson { by: shown.what, at: shown.at, text: shown.text, source: None, rewritten: None }
    }
}

/// The proof as JSON: a flat list of nodes (the first is the fact) with their children's
/// indices, since a proof is a DAG and can be far too deep to nest. A derived node's
/// `rule.source` names the source rule (`r1`, as `--emit ir` lists it; absent for the
/// query's seed), and through magic sets `rule.rewritten` is the position of the rule in
/// the evaluated rewrite (as `--emit plan` lists it); its children are the facts of that
/// rule's body atoms.
fn proof_json<'a>(ctx: &Context<'_>, asked: &'a str, proof: &Proof) -> ProofJson<'a> {
    let nodes = proof
        .nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            let step = match &node.step {
                Step::Input => StepJson::Leaf { kind: "input" },
                Step::Given => StepJson::Leaf { kind: "given" },
                Step::Aggregate { rule, rows, shown: children } => StepJson::Aggregate {
                    kind: "aggregate",
                    rows: *rows,
                    rule: ctx.rule_text(*rule).into(),
                    children: children.clone(),
                    more_rows: rows.saturating_sub(children.len()),
                },
                Step::Rule { rule, body, leaves } => {
                    let program_rule = ctx.program.rule(*rule);
                    StepJson::Derived {
                        leaves: leaves.iter().map(|l| leaf_text(ctx, program_rule, l)).collect(),
                        kind: "derived",
                        rule: RuleJson {
                            source: source_rule(ctx, *rule).map(|source| format!("r{}", source.0)),
                            rewritten: ctx.magic.then_some(rule.0),
                            ..ctx.rule_text(*rule).into()
                        },
                        children: body.clone(),
                    }
                }
            };
            ProofNodeJson {
                id: i,
                fact: ctx.fact_text(node.pred, &node.tuple),
                relation: ctx.program.pred_name(node.pred),
                tuple: crate::report::tuple_json(ctx.program, node.pred, &node.tuple),
                demand: ctx.is_demand(node.pred),
                height: node.height,
                step,
            }
        })
        .collect();
    ProofJson {
        asked: AskedJson { fact: asked, program: program_key(ctx), holds: true },
        height: proof.height(),
        nodes,
    }
}

/// The source rule a rule of the evaluated program is, or was made from.
fn source_rule(ctx: &Context<'_>, rule: RuleId) -> Option<RuleId> {
    match ctx.program.rule(rule).origin {
        Origin::Source => Some(ctx.copied_source(rule)),
        Origin::Main { rule } | Origin::Demand { rule, .. } => Some(rule),
        Origin::Seed => None,
    }
}

/// Where body atom `atom` of `rule` sits in its source rule: a magic main rule is its
/// source rule behind a demand guard (position 0), so its atom `k` is source atom `k - 1`;
/// `None` for the guard.
fn source_position(ctx: &Context<'_>, rule: &ir::Rule, atom: usize) -> Option<usize> {
    let guarded = ctx.magic && rule.body.first().is_some_and(|a| ctx.is_demand(a.pred));
    match (guarded, atom) {
        (true, 0) => None,
        (true, k) => Some(k - 1),
        (false, k) => Some(k),
    }
}

fn dot_escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The proof as a Graphviz digraph, each fact once, edges from a fact to its body facts.
fn proof_dot(ctx: &Context<'_>, proof: &Proof) -> String {
    let mut out = String::from("digraph proof {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n");
    for (i, node) in proof.nodes.iter().enumerate() {
        let fact = ctx.fact_text(node.pred, &node.tuple);
        let (how, style) = match &node.step {
            Step::Input => ("input fact".to_string(), "shape=ellipse"),
            Step::Given => ("given".to_string(), "shape=ellipse, style=dotted"),
            Step::Aggregate { rows, .. } => (format!("aggregate of {rows} row(s)"), "shape=ellipse"),
            Step::Rule { rule, leaves, .. } => {
                let shown = ctx.rule_text(*rule);
                let style = if ctx.is_demand(node.pred) { "style=dashed" } else { "style=solid" };
                let mut how = format!("by {} at {}", shown.what, shown.at);
                for leaf in leaves {
                    how = format!("{how}\n{}", leaf_text(ctx, ctx.program.rule(*rule), leaf));
                }
                (how, style)
            }
        };
        // The rule, then a line per leaf of its instance.
        let how: Vec<String> = how.lines().map(dot_escape).collect();
        let label = format!("{}\\n{}", dot_escape(&fact), how.join("\\n"));
        let _ = writeln!(out, "  n{i} [label=\"{label}\", {style}];");
    }
    for (i, node) in proof.nodes.iter().enumerate() {
        for c in node.step.children() {
            let _ = writeln!(out, "  n{i} -> n{c};");
        }
    }
    out.push_str("}\n");
    out
}

/// `--explain-missing`: why the fact is not derived, rule by rule.
pub fn explain_missing(ctx: &Context<'_>, fact: &Fact, shape: Shape) -> Explained {
    let tuple = fact.values.clone();
    let asked = crate::report::fact_text(ctx.program, fact.pred, &tuple);
    let mut explainer = Explainer::new(ctx.program, ctx.db);
    let input = ctx.source.pred(fact.pred).kind == PredKind::Edb;
    let relations = ctx.relations(fact.pred);
    let holds = relations.iter().any(|&p| explainer.contains(p, &tuple));
    if !holds && ctx.outside_the_answers(fact) {
        return explain_outside(ctx, fact, &asked, shape, true);
    }
    let mut text = String::new();
    let mut doc = WhyNotJson {
        asked: AskedJson { fact: &asked, program: program_key(ctx), holds },
        input: None,
        called: None,
        relations: None,
    };
    if input {
        let what = if holds { "is an input fact" } else { "is not an input fact (its predicate has no rules)" };
        let _ = writeln!(text, "{asked} {what}");
        doc.input = Some(true);
    } else if holds {
        let _ = writeln!(text, "{asked} is derived ({}); --explain '{asked}' shows a proof", ctx.program_name());
    } else if relations.is_empty() {
        let name = ctx.source.pred_name(fact.pred);
        let _ = writeln!(
            text,
            "{asked} is not derived: the query never calls {name}, so the magic program has no rules for it; \
             --magic off explains it in the original program"
        );
        doc.called = Some(false);
    } else {
        let _ = writeln!(text, "{asked} is not derived ({})", ctx.program_name());
        let mut through = Vec::new();
        for &relation in &relations {
            let why = explainer.why_not(relation, &tuple);
            through.push(why_not_json(ctx, relation, &tuple, &why));
            why_not_text(ctx, relation, &tuple, &why, &mut text);
        }
        doc.relations = Some(through);
    }
    let text = match shape {
        Shape::Json => crate::to_json_text(&doc),
        Shape::Text | Shape::Dot => text,
    };
    Explained { text, holds }
}

/// The demand fact guarding `relation` for `tuple` (`@m:R^bf(a)` for `@a:R^bf(a,u)`), if
/// `relation` is an answer relation of the magic program.
fn demand_of(ctx: &Context<'_>, relation: PredId, tuple: &[u32]) -> Option<(PredId, Vec<u32>)> {
    let PredName::Answer(base, adornment) = &ctx.program.pred(relation).name else { return None };
    let demand = ctx.program.lookup(&PredName::Demand(*base, adornment.clone()))?;
    let bound = adornment.0.iter().zip(tuple).filter(|(bf, _)| **bf == ir::Bf::Bound).map(|(_, &v)| v).collect();
    Some((demand, bound))
}

/// `atom` with the bound variables of `example` replaced by their values, an answer
/// relation written as its source predicate.
fn instantiate(ctx: &Context<'_>, atom: &ir::Atom, example: &[(Symbol, u32)]) -> String {
    let p = ctx.program;
    let args: Vec<String> = atom
        .args
        .iter()
        .enumerate()
        .map(|(i, t)| match t.kind {
            TermKind::Var(v) => match example.iter().find(|(u, _)| *u == v) {
                Some(&(_, value)) => p.const_text(p.value(atom.pred, i, value)),
                None => p.symbols.text(v).to_string(),
            },
            TermKind::Const(c) => p.const_text(c),
        })
        .collect();
    let name = match &p.pred(atom.pred).name {
        PredName::Answer(s, _) => p.symbols.text(*s).to_string(),
        _ => p.pred_name(atom.pred),
    };
    format!("{name}({})", args.join(","))
}

fn why_not_text(ctx: &Context<'_>, relation: PredId, tuple: &[u32], why: &WhyNot, out: &mut String) {
    let indent = if ctx.magic {
        let name = ctx.program.pred_name(relation);
        match demand_of(ctx, relation, tuple) {
            Some((demand, bound)) if !ctx.db.contains(demand, &bound) => {
                let _ = writeln!(
                    out,
                    "  as {name}: the demand {} was never raised, so no rule of {name} was tried for it",
                    crate::report::fact_text(ctx.program, demand, &bound)
                );
            }
            Some((demand, bound)) => {
                let _ = writeln!(
                    out,
                    "  as {name}: the demand {} was raised",
                    crate::report::fact_text(ctx.program, demand, &bound)
                );
            }
            None => {
                let _ = writeln!(out, "  as {name}:");
            }
        }
        "    "
    } else {
        "  "
    };
    if let Some(other) = &why.dominated_by {
        // A lattice relation's dominance is its recursive aggregate, which the user wrote.
        let remover = match ctx.program.dominances_of(relation).any(|d| d.lattice) {
            true => "its recursive `min`/`max` keeps the better value",
            false => "a subsumptive clause removes it",
        };
        let _ = writeln!(
            out,
            "{indent}{} dominates it: {remover}, whatever its rules derive",
            crate::report::fact_text(ctx.program, relation, other)
        );
    }
    for attempt in &why.rules {
        let shown = ctx.rule_text(attempt.rule);
        let _ = writeln!(out, "{indent}{} at {}  {}", shown.what, shown.at, shown.text);
        let rule = ctx.program.rule(attempt.rule);
        let line = match &attempt.outcome {
            Attempt::HeadMismatch => format!("its head {} does not fit", instantiate(ctx, &rule.head, &[])),
            Attempt::Failed { atom, examples, partial } => {
                let body = &rule.body[*atom];
                let shown: Vec<String> = examples.iter().map(|e| instantiate(ctx, body, e)).collect();
                let more = if *partial > examples.len() { ", …" } else { "" };
                let what = if ctx.is_demand(body.pred) { "demand" } else { "atom" };
                let prefix = if *atom == 0 {
                    "under the head's bindings".to_string()
                } else {
                    format!("under {partial} match(es) of the atoms before it")
                };
                // Atoms are counted as in the source rule shown above, from #0 as
                // `--emit magic-ir` counts calls.
                let source_len = source_rule(ctx, attempt.rule).map_or(0, |r| ctx.source.rule(r).body.len());
                let position = match source_position(ctx, rule, *atom) {
                    None => "the rule's demand guard".to_string(),
                    Some(k) => format!("body atom #{k} of {source_len}"),
                };
                format!(
                    "{what} {} ({position}) finds no fact {prefix}: {}{more}",
                    instantiate(ctx, body, &[]),
                    shown.join(", ")
                )
            }
            Attempt::Matched if why.dominated_by.is_some() => {
                "its body matches: it is derived, and removed".to_string()
            }
            Attempt::Matched => match &why.chosen {
                Some(kept) => format!(
                    "its body matches, but the relation's `choice-domain` kept {} for the same key",
                    crate::report::fact_text(ctx.program, relation, kept)
                ),
                None => "its body matches (the database is not at a fixpoint)".to_string(),
            },
            Attempt::Excluded { blocked, matches } => format!(
                "its atoms match {matches} time(s), but a negation or comparison excludes each: first {}",
                blocked_text(ctx, rule, blocked)
            ),
            Attempt::GaveUp { reached } => {
                format!("the search gave up after many partial matches; the first {reached} body atom(s) match")
            }
            Attempt::Aggregate { .. } => aggregate_text(ctx, rule, &attempt.outcome),
        };
        let _ = writeln!(out, "{indent}  {line}");
    }
}

/// Value `v` of column `column` of relation `pred`, as the program prints it.
fn column_text(ctx: &Context<'_>, pred: PredId, column: usize, v: u32) -> String {
    ctx.program.const_text(ctx.program.value(pred, column, v))
}

/// An aggregate's group: its key values, `(3)` (`()` for an aggregate over everything).
fn group_text(ctx: &Context<'_>, head: PredId, group: &[u32]) -> String {
    let keys: Vec<String> = group.iter().enumerate().map(|(k, &v)| column_text(ctx, head, k, v)).collect();
    format!("({})", keys.join(", "))
}

/// Why an atom reading an aggregate's value found no fact ([`Attempt::Aggregate`]): its
/// group had no rows, or its value is another (and then the comparison that rejected it).
fn aggregate_text(ctx: &Context<'_>, rule: &ir::Rule, attempt: &Attempt) -> String {
    let Attempt::Aggregate { atom, reduction, group, rows, value, wanted, excluded } = attempt else {
        return String::new();
    };
    let head = ctx.program.rule(*reduction).head.pred;
    let op = ctx.program.rule(*reduction).aggregate.map_or("aggregate", |a| a.op.text());
    let body = instantiate(ctx, &rule.body[*atom], &[]);
    let reads = format!("atom {body} reads the {op} of group {}", group_text(ctx, head, group));
    let column = |x: u32| column_text(ctx, head, group.len(), x);
    let mut text = match (value, wanted) {
        (None, _) if matches!(op, "count" | "sum") => {
            let wanted = wanted.map_or(String::new(), |w| format!(", not {}", column(w)));
            format!("{reads}, which had no rows: its {op} is 0{wanted}")
        }
        (None, _) => format!("{reads}, which had no rows: a {op} over none has no value"),
        (Some(v), Some(w)) => format!("{reads}: its {rows} row(s) give {}, not {}", column(*v), column(*w)),
        (Some(v), None) => format!("{reads}: its {rows} row(s) give {}", column(*v)),
    };
    if let Some(blocked) = excluded {
        let _ = write!(text, "; then {}", blocked_text(ctx, rule, blocked));
    }
    text
}

/// `--explain-missing`: for an input fact `"input": true`; for a fact of a predicate the
/// query never calls `"called": false`; for any other fact that does not hold, why not in
/// each relation that could hold it.
#[derive(Debug, Serialize)]
struct WhyNotJson<'a> {
    #[serde(flatten)]
    asked: AskedJson<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    called: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    relations: Option<Vec<RelationWhyNotJson>>,
}

/// Why a relation lacks the fact: each of its rules tried, and through magic sets the
/// demand that guards it and whether it was raised.
#[derive(Debug, Serialize)]
struct RelationWhyNotJson {
    relation: String,
    rules: Vec<AttemptJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    demand: Option<DemandJson>,
    /// The tuple the relation's `choice-domain` kept for a key of the fact.
    #[serde(skip_serializing_if = "Option::is_none")]
    chosen: Option<String>,
    /// The fact that dominates the asked one by a subsumptive clause, if one does.
    #[serde(skip_serializing_if = "Option::is_none")]
    dominated_by: Option<String>,
}

/// The demand fact guarding an answer relation for the fact, and whether it was raised.
#[derive(Debug, Serialize)]
struct DemandJson {
    fact: String,
    raised: bool,
}

/// One rule tried for the fact, and how it failed.
#[derive(Debug, Serialize)]
struct AttemptJson {
    #[serde(flatten)]
    rule: RuleJson,
    #[serde(flatten)]
    outcome: OutcomeJson,
}

/// How a rule failed to derive the fact ([`Attempt`]), named by its `outcome`. `atom` is
/// the source rule's body position (from 0), `null` for a demand guard.
#[derive(Debug, Serialize)]
#[serde(tag = "outcome")]
enum OutcomeJson {
    #[serde(rename = "head does not fit")]
    HeadMismatch,
    #[serde(rename = "no match")]
    Failed { atom: Option<usize>, atom_text: String, demand: bool, partial_matches: usize, examples: Vec<String> },
    #[serde(rename = "matched")]
    Matched,
    #[serde(rename = "excluded")]
    Excluded { matches: usize, blocked: String },
    #[serde(rename = "gave up")]
    GaveUp { matched_atoms: usize },
    #[serde(rename = "aggregate")]
    Aggregate {
        atom: Option<usize>,
        atom_text: String,
        group: String,
        rows: usize,
        value: Option<String>,
        wanted: Option<String>,
        why: String,
    },
}

fn why_not_json(ctx: &Context<'_>, relation: PredId, tuple: &[u32], why: &WhyNot) -> RelationWhyNotJson {
    let rules = why
        .rules
        .iter()
        .map(|attempt| {
            let rule = ctx.program.rule(attempt.rule);
            let outcome = match &attempt.outcome {
                Attempt::HeadMismatch => OutcomeJson::HeadMismatch,
                Attempt::Failed { atom, examples, partial } => {
                    let body = &rule.body[*atom];
                    OutcomeJson::Failed {
                        atom: source_position(ctx, rule, *atom),
                        atom_text: instantiate(ctx, body, &[]),
                        demand: ctx.is_demand(body.pred),
                        partial_matches: *partial,
                        examples: examples.iter().map(|e| instantiate(ctx, body, e)).collect(),
                    }
                }
                Attempt::Matched => OutcomeJson::Matched,
                Attempt::Excluded { blocked, matches } => {
                    OutcomeJson::Excluded { matches: *matches, blocked: blocked_text(ctx, rule, blocked) }
                }
                Attempt::GaveUp { reached } => OutcomeJson::GaveUp { matched_atoms: *reached },
                Attempt::Aggregate { atom, reduction, group, rows, value, wanted, .. } => {
                    let head = ctx.program.rule(*reduction).head.pred;
                    OutcomeJson::Aggregate {
                        atom: source_position(ctx, rule, *atom),
                        atom_text: instantiate(ctx, &rule.body[*atom], &[]),
                        group: group_text(ctx, head, group),
                        rows: *rows,
                        value: value.map(|x| column_text(ctx, head, group.len(), x)),
                        wanted: wanted.map(|x| column_text(ctx, head, group.len(), x)),
                        why: aggregate_text(ctx, rule, &attempt.outcome),
                    }
                }
            };
            AttemptJson { rule: ctx.rule_text(attempt.rule).into(), outcome }
        })
        .collect();
    RelationWhyNotJson {
        relation: ctx.program.pred_name(relation),
        rules,
        demand: demand_of(ctx, relation, tuple).map(|(demand, bound)| DemandJson {
            fact: crate::report::fact_text(ctx.program, demand, &bound),
            raised: ctx.db.contains(demand, &bound),
        }),
        chosen: why.chosen.as_ref().map(|t| crate::report::fact_text(ctx.program, relation, t)),
        dominated_by: why.dominated_by.as_ref().map(|other| crate::report::fact_text(ctx.program, relation, other)),
    }
}

/// `dlc PROGRAM --explain FACT` / `--explain-missing FACT`: evaluates (and applies any
/// update batches), then explains the fact in the final state.
pub fn run(args: &RunArgs, out: &mut dyn Write, err: &mut dyn Write, color: bool) -> i32 {
    let (flag, text, missing) = match (&args.explain, &args.explain_missing) {
        (Some(text), _) => ("--explain", text, false),
        (None, Some(text)) => ("--explain-missing", text, true),
        (None, None) => unreachable!("called for --explain or --explain-missing"),
    };
    if args.emit != Emit::Answers {
        return crate::usage_error(err, &format!("{flag} prints an explanation; it does not combine with --emit"));
    }
    let shape = match args.format {
        Format::Text => Shape::Text,
        Format::Json => Shape::Json,
        Format::Dot if !missing => Shape::Dot,
        Format::Dot => return crate::usage_error(err, "--explain-missing does not support --format dot"),
    };
    let options = args.options();
    let session = match crate::compile(args, &options) {
        Ok(s) => s,
        Err(failed) => return crate::fail(err, failed, color),
    };
    crate::print_diagnostics(err, &session.warnings, &session.sources, color);
    let mut sources = session.sources.clone();
    // The rewrite's predicate table extends the source's, so the fact is read against it
    // before `--magic` has chosen the program.
    let widest = session.widest();
    let mut shown = widest.clone();
    let file = sources.add(flag, text.clone());
    let (fact, diagnostics) = syntax::parse_ground_atom(text, file, &mut shown);
    let Some(fact) = fact.filter(|_| !diag::has_errors(&diagnostics)) else {
        crate::print_diagnostics(err, &diagnostics, &sources, color);
        let errors = diagnostics.iter().filter(|d| d.is_error()).count();
        let _ = writeln!(err, "dlc: {errors} error(s); nothing was explained");
        return crate::EXIT_INPUT_ERROR;
    };
    // Every relation: a fact of any of them may be asked about.
    let evaluator = Evaluator::new(&options).whole(true);
    let chosen =
        evaluator.evaluate_chosen(&session.program, session.magic.as_ref(), options.magic, &session.facts, &|| None);
    let (run, choice) = match chosen {
        Ok(chosen) => chosen,
        Err(e) => return crate::stopped(err, &session.sources, widest, &e, args.color),
    };
    let primary = if choice.magic { widest } else { &session.program };
    if !choice.magic {
        // The source program, with the constants the fact brought.
        let consts = shown.consts;
        shown = session.program.clone();
        shown.consts = consts;
    }
    // After update batches, the maintained state: explanations then use present facts only.
    let maintained = if session.batches.is_empty() {
        Err(run.eval)
    } else {
        let how =
            Maintaining { whole: true, maintenance: options.maintenance, keep_record: false, limits: options.limits };
        let maintained = Maintainer::from_evaluation(primary.clone(), run, &session.facts, how);
        let mut maintainer = match maintained {
            Ok(maintainer) => maintainer,
            Err(e) => return crate::stopped(err, &session.sources, primary, &e, args.color),
        };
        for batch in &session.batches {
            if let Err(e) = maintainer.apply(&batch.update, false, false) {
                return crate::stopped(err, &session.sources, primary, &e, args.color);
            }
        }
        Ok(maintainer)
    };
    // The evaluation, or the state the batches left, on the native engine (the only one
    // `--explain` goes with), whose database proofs read.
    let db = match &maintained {
        Err(eval) => Some(&eval.db),
        Ok(maintainer) => maintainer.state.proofs(),
    };
    let Some(db) = db else {
        let _ =
            writeln!(err, "dlc: {flag} reads the native engine's derivation order, which this engine does not keep");
        return crate::EXIT_INPUT_ERROR;
    };
    let ctx = Context {
        source: &session.program,
        program: &shown,
        db,
        sources: &sources,
        magic: choice.magic,
        limits: options.limits,
        own_demand: false,
    };
    let explained = if missing { explain_missing(&ctx, &fact, shape) } else { explain(&ctx, &fact, shape) };
    let _ = write!(out, "{}", explained.text);
    if missing || explained.holds {
        0
    } else {
        crate::EXIT_INPUT_ERROR
    }
}

/// What the repl's `:why` and `:whynot` explain in: its current program and state.
pub struct ReplState<'a> {
    pub source: &'a Program,
    pub program: &'a Program,
    pub db: &'a Database,
    pub magic: bool,
    pub limits: exec::Limits,
}

/// The repl's `:why FACT` (a proof) and `:whynot FACT` (why it is not derived), in the
/// maintained state: a proof after a deletion uses only facts still present.
pub fn repl_command(
    line: &str,
    state: &ReplState<'_>,
    sources: &mut SourceMap,
    color: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) {
    let (command, rest, missing) = match line.strip_prefix(":whynot") {
        Some(rest) => (":whynot", rest, true),
        None => (":why", line.strip_prefix(":why").unwrap_or(line), false),
    };
    let text = rest.trim();
    if text.is_empty() || !rest.starts_with(char::is_whitespace) {
        let _ = writeln!(err, "usage: {command} R(a,b)   (a fact, constants only)");
        return;
    }
    let mut shown = state.program.clone();
    let file = sources.add(format!("<{command}>"), text.to_string());
    let (fact, diagnostics) = syntax::parse_ground_atom(text, file, &mut shown);
    crate::print_diagnostics(err, &diagnostics, sources, color);
    let Some(fact) = fact.filter(|_| !diag::has_errors(&diagnostics)) else { return };
    let ctx = Context {
        source: state.source,
        program: &shown,
        db: state.db,
        sources,
        magic: state.magic,
        limits: state.limits,
        own_demand: false,
    };
    let explained = if missing { explain_missing(&ctx, &fact, Shape::Text) } else { explain(&ctx, &fact, Shape::Text) };
    let _ = write!(out, "{}", explained.text);
}
