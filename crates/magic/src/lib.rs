//! The magic-sets rewrite (docs/semantics.md, Magic sets): IR → IR with full left-prefix
//! SIPS, plus the adorned call graph and a trace of every call.
//!
//! [`rewrite()`] turns a source [`ir::Program`] and a selection [`ir::Query`] into a
//! [`MagicProgram`]: a new program over answer predicates `@a:p^α` and demand predicates
//! `@m:p^α` that shares every predicate id of the source (one EDB database serves both),
//! together with what is needed to explain it: for each generated rule its kind and
//! source rule, and for each call its adornment, the variables bound before it and the
//! prefix its demand rule uses.
//!
//! Invariant: every rule of the output program is safe when the source rules are, and
//! the output passes [`ir::validate`] whenever the source does.

mod display;
mod graph;
pub mod json;
mod names;
mod rewrite;
mod subsume;
#[cfg(test)]
mod testing;

pub use graph::{CallEdge, CallGraph};
pub use rewrite::{rewrite, rewrite_limited, rewrite_with};

use diag::{Code, Diagnostic};
use ir::{Adornment, Atom, DisplayPred, PredId, PredName, Program, Rule, RuleId, Span, Symbol};

/// The default limit on adorned predicates of [`rewrite_limited`].
///
/// Real programs call a predicate with a handful of adornments, so even a program of a
/// thousand predicates stays far below it; a predicate of arity `n` can be called with
/// up to `2^n` (12,870 for arity 16 with eight bound positions: 400 MB and seconds of
/// rewriting; arity 30: more memory than any machine has). Each adorned predicate costs
/// a copy of its predicate's rules, so the limit keeps the rewritten program within a
/// few thousand times the source.
pub const DEFAULT_MAX_ADORNMENTS: usize = 4096;

/// How [`rewrite_with`] rewrites.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RewriteOptions {
    /// Stop with an [`AdornmentLimit`] past this many adorned predicates.
    pub max_adornments: usize,
    /// Serve a call `p^β` by an adornment `p^γ` of the plain rewrite whose bound positions
    /// are all bound in `β` (adornment subsumption), so a predicate is not derived twice
    /// where one copy answers both calls. Off, the output is the plain rewrite
    /// (docs/semantics.md, Magic sets: generated rules).
    pub subsume: bool,
}

impl Default for RewriteOptions {
    fn default() -> Self {
        RewriteOptions { max_adornments: DEFAULT_MAX_ADORNMENTS, subsume: false }
    }
}

/// The rewrite stopped: a call would have created one adorned predicate more than the
/// limit allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdornmentLimit {
    /// The limit that was reached.
    pub limit: usize,
    /// The called (source) predicate and the adornment it would have got.
    pub pred: PredId,
    pub adornment: Adornment,
    /// The adornments of `pred` so far, this one included.
    pub pred_adornments: usize,
    /// The call (or the query) that would have created it.
    pub span: Span,
    /// The query the rewrite was for.
    pub query_span: Span,
}

impl AdornmentLimit {
    /// The report for a user, naming the predicate, its count and the limit. `program`
    /// is the source program the rewrite read.
    pub fn to_diagnostic(&self, program: &Program) -> Diagnostic {
        let name = DisplayPred(program, self.pred).to_string();
        let arity = program.pred(self.pred).arity;
        let mut d = Diagnostic::error(
            Code::ADORNMENT_LIMIT,
            format!("the magic rewrite needs more than {} adorned predicates", self.limit),
        )
        .with_primary(
            self.span,
            format!("this call would add `{name}^{}`, adornment {} of `{name}`", self.adornment, self.pred_adornments),
        );
        if self.query_span != self.span {
            d = d.with_secondary(self.query_span, "rewriting for this query");
        }
        let others = match self.pred_adornments {
            1 => format!("this would be the first of `{name}`"),
            n => format!("`{name}` (arity {arity}, at most 2^{arity}) would have {n} of them"),
        };
        d.with_note(format!(
            "the limit counts the adorned predicates of all predicates together: the rewrite has made {} so \
             far, and {others}",
            self.limit
        ))
        .with_help(format!(
            "raise the limit with `--max-adornments N` (now {}), or let `--magic auto` (the default) or `--magic off` \
             evaluate the original program",
            self.limit
        ))
    }
}

/// The result of the rewrite: the generated program and its trace.
#[derive(Clone, Debug)]
pub struct MagicProgram {
    /// The rewritten program. Its predicate table extends the source's, its inline facts
    /// are the source's, and its query is the source query's atom over [`Self::answer_pred`].
    pub program: Program,
    /// `@a:p^α` of the query: the answers are read from this predicate.
    pub answer_pred: PredId,
    /// `@m:p^α` of the query: the predicate of the seed fact.
    pub demand_pred: PredId,
    /// The query's predicate (a source predicate).
    pub query_pred: PredId,
    /// The adornment of the query: `b` at constants, `f` at variables (with subsumption,
    /// the adornment that serves it).
    pub query_adornment: Adornment,
    /// Every reachable adorned source predicate, in discovery (worklist) order; the
    /// first entry is the query's.
    pub adorned: Vec<(PredId, Adornment)>,
    /// One entry per rule of [`Self::program`], at the same index.
    pub rules: Vec<RuleTrace>,
    /// The demand rules dropped because they read `m(x) <- m(x)`, over the output's ids.
    pub dropped: Vec<Rule>,
    /// The adorned call graph.
    pub graph: CallGraph,
    /// Whether calls were served by subsuming adornments ([`RewriteOptions::subsume`]):
    /// then a call's adornment (in [`CallTrace::adornment`] and the graph) is the one
    /// that serves it, and the query's may have fewer bound positions than its constants.
    pub subsumed: bool,
}

/// Of [`MagicProgram::demand_caps`]: a demand relation `@m:p^β` may hold at most this
/// share of the `|adom|^k` tuples its `k` columns can take. Past it, the demand asks for
/// much of what a full evaluation of `p` computes, and the rewrite's guards and demand
/// rules only add work to it. Small, because a demand fed by answers (non-linear rules)
/// passes its cap only after the answers of the demand so far are derived: at a half, a
/// non-linear point query on a random graph derived half the closure before switching
/// (1.12× the original program's time); at 1/16 it switches after a few rounds. Where
/// magic sets win, the demand is a handful of values (a tree, the ancestors of a node).
pub const AUTO_DEMAND_SHARE: f64 = 0.0625;

/// Of [`MagicProgram::demand_caps`]: no cap is below this many tuples, so that small inputs
/// (the worked examples of docs/semantics.md among them) are evaluated through the rewrite,
/// whose cost there is nothing.
pub const AUTO_MIN_CAP: u32 = 64;

impl MagicProgram {
    /// A cap on every demand relation with at least one column, for an evaluation that
    /// gives up on the rewrite when its demand grows past it (`dlc --magic auto`):
    /// [`AUTO_DEMAND_SHARE`] of `adom^k` for `k` columns, at least [`AUTO_MIN_CAP`], where
    /// `adom` is the number of distinct constants of the program and its input. A nullary
    /// demand has no cap: it is all-free, which [`Self::narrows_nothing`] judges.
    pub fn demand_caps(&self, adom: usize) -> Vec<(PredId, u32)> {
        self.demand_preds()
            .into_iter()
            .filter_map(|pred| {
                let k = self.program.pred(pred).arity;
                let cap = AUTO_DEMAND_SHARE * (adom as f64).powi(k as i32);
                // `as` saturates: a cap past `u32` is no cap.
                (k > 0).then(|| (pred, (cap as u32).max(AUTO_MIN_CAP)))
            })
            .collect()
    }

    /// Whether every adorned predicate is all-free: the rewrite narrows no demand, and
    /// derives every tuple of each predicate it reaches (behind nullary guards).
    pub fn narrows_nothing(&self) -> bool {
        self.adorned.iter().all(|(_, adornment)| adornment.bound_count() == 0)
    }
}

impl MagicProgram {
    /// The answer predicates `@a:p^α` of [`Self::adorned`], in the same order.
    pub fn answer_preds(&self) -> Vec<PredId> {
        self.generated_preds(PredName::Answer)
    }

    /// The demand predicates `@m:p^α` of [`Self::adorned`], in the same order.
    pub fn demand_preds(&self) -> Vec<PredId> {
        self.generated_preds(PredName::Demand)
    }

    fn generated_preds(&self, name: impl Fn(Symbol, Adornment) -> PredName) -> Vec<PredId> {
        self.adorned
            .iter()
            .map(|(pred, adornment)| {
                let base = self.program.pred(*pred).name.base();
                self.program.lookup(&name(base, adornment.clone())).expect("every adorned predicate was declared")
            })
            .collect()
    }
}

/// Which of the three shapes of generated rule a rule is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuleKind {
    /// `@m:p^α(consts) <-`, made from the query.
    Seed,
    /// `@a:p^α(t) <- g, A1', ..., Ak'`, the guarded copy of a source rule.
    Main,
    /// `@m:q^β(u|b) <- g, A1', ..., A(j-1)'`, the demand of one call.
    Demand,
    /// A source rule copied unchanged: it derives a predicate that a negated atom reads
    /// (or one such a predicate depends on), evaluated whole, without demand.
    Unrewritten,
}

impl RuleKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Seed => "seed",
            RuleKind::Main => "main",
            RuleKind::Demand => "demand",
            RuleKind::Unrewritten => "unrewritten",
        }
    }
}

/// How one generated rule came about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleTrace {
    pub kind: RuleKind,
    /// The source rule it was generated from (`None` for the seed).
    pub source_rule: Option<RuleId>,
    /// For a main rule every IDB call of its body, in body order; for a demand rule the
    /// one call it serves; empty for the seed.
    pub calls: Vec<CallTrace>,
}

/// One IDB call in the body of a source rule, as adorned under one head adornment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallTrace {
    /// The index of the call in the source rule's body.
    pub position: usize,
    /// The adorned call `@a:q^β(u)` as it appears in the main rule.
    pub atom: Atom,
    /// `β`: `b` where the argument is a constant or a variable bound before the call.
    pub adornment: Adornment,
    /// The bound variables before the call, in the order they became bound.
    pub bound_before: Vec<Symbol>,
    /// The guard followed by the adorned atoms left of the call: exactly the body of the
    /// call's demand rule.
    pub prefix: Vec<Atom>,
    /// The index of the call's demand rule in the output program, or `None` when that
    /// rule was dropped as `m(x) <- m(x)`.
    pub demand_rule: Option<RuleId>,
}
