//! Lowering the AST to `ir::Program`: interning, predicate declaration (IDB iff it heads a
//! rule), anonymous-variable renaming, and the checks that need names resolved.

use crate::ast::{self, Statement, TermKind};
use diag::{Code, Diagnostic, Span};
use ir::{IrError, Origin, PredId, PredKind, PredName, Program, Query, Term, Value, ValueType};
use rustc_hash::{FxHashMap, FxHashSet};

/// Lowers a parsed file. Every problem is reported; the program is returned only when
/// there is no error.
pub fn lower(file: &ast::File) -> (Option<Program>, Vec<Diagnostic>) {
    let mut program = Program::new();
    program.consts.set_record_types(file.record_types.clone());
    let file = &crate::reductions::computed_facts_as_rules(file);
    // A recursive `min`/`max` becomes a plain rule and a dominance first, so the
    // aggregate checks see only the aggregates computed over complete relations.
    let (file, lattices, reports) = crate::lattice::rewrite(file);
    if !reports.is_empty() {
        return (None, reports);
    }
    let file = &*file;
    let mut diagnostics = crate::aggregates::check(file);
    if !diagnostics.is_empty() {
        return (None, diagnostics);
    }
    // From here on, an aggregate is ordinary rules around one reduction each.
    let (desugared, sentinels, reports) = crate::reductions::desugar(file);
    if !reports.is_empty() {
        return (None, reports);
    }
    // And each `range` a generator literal `R = range(..)` of its rule.
    let (desugared, reports) = crate::generators::desugar(&desugared);
    if !reports.is_empty() {
        return (None, reports);
    }
    let file = &desugared;
    for statement in &file.statements {
        for atom in statement_atoms(statement) {
            diagnostics.extend(reserved_names(atom));
        }
    }

    // A predicate is IDB iff it heads a rule, wherever that rule is in the file, so the
    // heads are collected before anything is declared.
    let heads: FxHashSet<&str> = file
        .statements
        .iter()
        .filter_map(|s| match s {
            Statement::Rule(rule) | Statement::Dominance(rule) => Some(rule.head.pred.text.as_str()),
            _ => None,
        })
        .collect();
    for statement in &file.statements {
        if matches!(statement, Statement::Query(_)) {
            continue;
        }
        for atom in statement_atoms(statement) {
            let kind = if heads.contains(atom.pred.text.as_str()) { PredKind::Idb } else { PredKind::Edb };
            declare(&mut program, atom, kind);
        }
    }
    let typing = crate::types::infer(&mut program, file);
    // A constant of the wrong type is reported by inference already; lowering reports
    // only numbers out of range then.
    let typed = typing.diagnostics.is_empty();
    diagnostics.extend(typing.diagnostics);
    let mut lowering = Lowering {
        program: &mut program,
        comparisons: &typing.comparisons,
        statement: 0,
        var_types: FxHashMap::default(),
        diagnostics: Vec::new(),
    };

    let mut reported_anonymous = Vec::new();
    let mut queries = Vec::new();
    for (index, statement) in file.statements.iter().enumerate() {
        lowering.statement = index;
        match statement {
            Statement::Rule(rule) => {
                let lowered = lower_rule(&mut lowering, rule, &mut reported_anonymous, &mut diagnostics);
                lowering.program.add_rule(lowered);
            }
            Statement::Dominance(rule) => {
                let lowered = lower_rule(&mut lowering, rule, &mut reported_anonymous, &mut diagnostics);
                if let [dominated, dominating, body @ ..] = lowered.body.as_slice() {
                    lowering.program.dominances.push(ir::Dominance {
                        lattice: lattices.contains(&rule.head.pred.text),
                        dominated: dominated.clone(),
                        dominating: dominating.clone(),
                        body: body.to_vec(),
                        negated: lowered.negated,
                        comparisons: lowered.comparisons,
                        span: lowered.span,
                    });
                }
            }
            Statement::Fact(atom) => match ground_values(lowering.program, lookup(lowering.program, atom), atom) {
                Ok(values) => {
                    let pred = lookup(lowering.program, atom);
                    lowering.program.facts.push(ir::Fact { pred, values, span: atom.span });
                }
                Err(errors) => {
                    diagnostics.extend(errors.into_iter().filter(|d| typed || d.code != Code::TYPE_MISMATCH))
                }
            },
            Statement::Query(query) => queries.push(query),
            Statement::Error(_) => {}
        }
    }
    // The sentinel rows of correlated `count`s and `sum`s, whose local columns hold a
    // fixed value of their inferred type: the empty symbol or 0.
    for sentinel in &sentinels {
        let Some(rows) = lowering.program.lookup_source(&sentinel.rows) else { continue };
        let types = lowering.program.preds[rows.index()].types.clone();
        let rule = sentinel.rule(|column| match types.get(column) {
            Some(ValueType::Symbol) => TermKind::Str(String::new()),
            _ => TermKind::Int("0".into()),
        });
        let lowered = lower_rule(&mut lowering, &rule, &mut reported_anonymous, &mut diagnostics);
        lowering.program.add_rule(lowered);
    }
    diagnostics.extend(lowering.diagnostics.into_iter().filter(|d| typed || d.code != Code::TYPE_MISMATCH));

    // The structural checks (safety, arities, facts for IDB predicates) live in `ir`.
    // A `_` in a head (E0006) or in a comparison (E0023) is already reported, so its
    // unboundness is not repeated. The query is attached afterwards and checked here, so it is not reported twice either.
    for error in ir::validate(&program) {
        if let IrError::UnsafeRule { span, .. } | IrError::UnboundInComparison { span, .. } = error {
            if reported_anonymous.contains(&span) {
                continue;
            }
        }
        diagnostics.push(error.to_diagnostic(&program));
    }

    if let Some((first, extra)) = queries.split_first() {
        // A query with a reserved name is already reported; it would only add E0007.
        if reserved_names(&first.atom).is_empty() {
            match lower_query(&mut program, &first.atom) {
                Ok(query) => program.query = Some(query),
                Err(error) if typed || error.code != Code::TYPE_MISMATCH => diagnostics.push(error),
                Err(_) => {}
            }
        }
        for query in extra {
            diagnostics.push(
                Diagnostic::error(Code::MULTIPLE_QUERIES, "more than one query in the program")
                    .with_primary(query.span, "another query here")
                    .with_secondary(first.span, "first query here"),
            );
        }
    }

    // Reports come from several passes; source order reads best.
    diagnostics.sort_by_key(|d| d.primary_span().map(|s| (s.file, s.start)));
    let program = (!diag::has_errors(&diagnostics)).then_some(program);
    (program, diagnostics)
}

/// The atoms of a statement in source order.
fn statement_atoms(statement: &Statement) -> Vec<&ast::Atom> {
    match statement {
        Statement::Rule(rule) | Statement::Dominance(rule) => {
            std::iter::once(&rule.head).chain(rule.body.iter().filter_map(ast::Literal::atom)).collect()
        }
        Statement::Fact(atom) => vec![atom],
        Statement::Query(query) => vec![&query.atom],
        Statement::Error(_) => Vec::new(),
    }
}

/// E0002 for the predicate name and every term of the atom that starts with `@`.
pub(crate) fn reserved_names(atom: &ast::Atom) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if atom.pred.text.starts_with('@') {
        out.push(reserved_name(&atom.pred.text, atom.pred.span));
    }
    for term in &atom.args {
        if let TermKind::Reserved(text) = &term.kind {
            out.push(reserved_name(text, term.span));
        }
    }
    out
}

pub(crate) fn reserved_name(text: &str, span: Span) -> Diagnostic {
    Diagnostic::error(Code::RESERVED_NAME, format!("`{text}` is a reserved name"))
        .with_primary(span, "names starting with `@` are reserved")
}

fn declare(program: &mut Program, atom: &ast::Atom, kind: PredKind) -> PredId {
    let name = PredName::Source(program.symbols.intern(&atom.pred.text));
    program.declare_pred(name, atom.args.len(), kind, atom.span)
}

/// The id of a predicate that the declaration pass has already created.
fn lookup(program: &Program, atom: &ast::Atom) -> PredId {
    program.lookup_source(&atom.pred.text).expect("every rule and fact atom is declared before lowering")
}

/// Hands out fresh names `_0`, `_1`, ... for anonymous variables, skipping names the
/// rule (or query) already uses.
struct FreshVars<'t> {
    used: FxHashSet<&'t str>,
    next: usize,
}

impl<'t> FreshVars<'t> {
    fn new(terms: impl IntoIterator<Item = &'t ast::Term>) -> Self {
        let used = terms
            .into_iter()
            .filter_map(|t| match &t.kind {
                TermKind::Var(v) => Some(v.as_str()),
                _ => None,
            })
            .collect();
        FreshVars { used, next: 0 }
    }

    fn fresh(&mut self) -> String {
        loop {
            let name = format!("_{}", self.next);
            self.next += 1;
            if !self.used.contains(name.as_str()) {
                return name;
            }
        }
    }
}

/// The program being lowered, with the types inference found for its comparisons and
/// the reports of constants that are no value of their type.
struct Lowering<'a> {
    program: &'a mut Program,
    comparisons: &'a FxHashMap<crate::types::ComparisonSite, ValueType>,
    /// The index of the statement being lowered, which with a literal's position in its
    /// body finds the comparison's type.
    statement: usize,
    /// The types of the variables of the rule being lowered, by the columns and
    /// assignments that bind them (what a conversion converts from).
    var_types: FxHashMap<String, ValueType>,
    diagnostics: Vec<Diagnostic>,
}

/// An expression of the AST as an IR expression whose value is of type `ty` (postfix,
/// built with an explicit stack), its leaves lowered by `leaf` with the type each holds:
/// an operator's operands have its type, a functor's arguments their parameters' (a
/// conversion's argument its own, [`natural_type`]).
fn lower_expr(
    term: &ast::Term,
    ty: ValueType,
    var_types: &FxHashMap<String, ValueType>,
    store: &ir::ValueStore,
    leaf: &mut dyn FnMut(&ast::Term, ValueType) -> Term,
) -> ir::Expr {
    let mut nodes = Vec::new();
    // (term, its type, whether its operands are already emitted)
    let mut stack = vec![(term, ty, false)];
    while let Some((term, ty, done)) = stack.pop() {
        match (&term.kind, done) {
            (TermKind::Unary { op, .. }, true) => nodes.push(ir::ExprNode::Unary(*op, ty)),
            (TermKind::Binary { op, .. }, true) => nodes.push(ir::ExprNode::Binary(*op, ty)),
            (TermKind::Call { functor, args, .. }, true) => {
                nodes.push(ir::ExprNode::Call(resolved(store, functor, args, var_types)))
            }
            (TermKind::Unary { operand, .. }, false) => {
                stack.push((term, ty, true));
                stack.push((operand, ty, false));
            }
            (TermKind::Binary { left, right, .. }, false) => {
                stack.push((term, ty, true));
                stack.push((right, ty, false));
                stack.push((left, ty, false));
            }
            (TermKind::Call { functor, args, .. }, false) => {
                stack.push((term, ty, true));
                for (i, arg) in args.iter().enumerate().rev() {
                    stack.push((arg, argument_type(store, functor, i, arg, var_types), false));
                }
            }
            _ => nodes.push(ir::ExprNode::Leaf(leaf(term, ty))),
        }
    }
    ir::Expr { nodes }
}

/// A call's functor with its conversion resolved to its argument's type.
fn resolved(
    store: &ir::ValueStore,
    functor: &ir::Functor,
    args: &[ast::Term],
    var_types: &FxHashMap<String, ValueType>,
) -> ir::Functor {
    match (functor.parameter(0), args.first()) {
        (None, Some(arg)) => functor.with_argument(argument_type(store, functor, 0, arg, var_types)),
        _ => functor.clone(),
    }
}

/// The type of a call's argument `i`: its parameter's, or a conversion's own
/// ([`natural_type`]). A number literal cast by `as` is a constant of the target type, as
/// Soufflé 2.5 types it: `as(1, float)` is 1.0, and `as(-1, unsigned)` and `as(2.5,
/// number)` are errors, where `as(1 + 2, float)` takes the bits of the number 3.
fn argument_type(
    store: &ir::ValueStore,
    functor: &ir::Functor,
    i: usize,
    arg: &ast::Term,
    var_types: &FxHashMap<String, ValueType>,
) -> ValueType {
    match (functor, &arg.kind) {
        (ir::Functor::Cast(_, to), TermKind::Int(_) | TermKind::Float(_)) if to.is_numeric() => *to,
        _ => store.parameter(functor, i).unwrap_or_else(|| natural_type(arg, var_types)),
    }
}

/// The type a term's value has by itself: a variable's (`var_types`, as its columns and
/// assignments type it), a literal's, an operator's operands', a functor's result. It
/// decides what a conversion converts from. The term is at most
/// [`crate::expr::MAX_DEPTH`] deep.
fn natural_type(term: &ast::Term, var_types: &FxHashMap<String, ValueType>) -> ValueType {
    match &term.kind {
        TermKind::Var(v) => var_types.get(v).copied().unwrap_or(ValueType::Number),
        TermKind::Ident(_) | TermKind::Str(_) | TermKind::Reserved(_) => ValueType::Symbol,
        TermKind::Unary { operand, .. } => natural_type(operand, var_types),
        TermKind::Binary { left, right, .. } => match natural_type(left, var_types) {
            ValueType::Symbol => natural_type(right, var_types),
            numeric => numeric,
        },
        TermKind::Call { functor, .. } => functor.result(),
        TermKind::Range { args, .. } => args.first().map_or(ValueType::Number, |a| natural_type(a, var_types)),
        TermKind::Float(_) => ValueType::Float,
        TermKind::Int(_) | TermKind::Anon | TermKind::Aggregate { .. } => ValueType::Number,
        // The Soufflé front end has made every record a call of its type.
        TermKind::Record { .. } | TermKind::Nil => ValueType::Symbol,
    }
}

/// E0031 for the first subexpression of `term` without variables that has no value (a
/// division by zero, `to_number` of a text that writes no number): Soufflé stops with a
/// floating-point exception there.
fn constant_without_value(program: &mut Program, ty: ValueType, term: &ast::Term) -> Option<Diagnostic> {
    // A declared functor's value is known only when rules run, and so is a record's
    // (made in the store, which holds any record).
    let ground = |t: &ast::Term| {
        !t.calls_user_functor()
            && t.subterms()
                .all(|s| !matches!(s.kind, TermKind::Var(_) | TermKind::Anon | TermKind::Record { .. } | TermKind::Nil))
    };
    // Each subterm with its type, operands after their operators.
    let mut typed = Vec::new();
    let mut stack = vec![(term, ty)];
    while let Some((term, ty)) = stack.pop() {
        typed.push((term, ty));
        match &term.kind {
            TermKind::Unary { operand, .. } => stack.push((operand, ty)),
            TermKind::Binary { left, right, .. } => stack.extend([(&**right, ty), (&**left, ty)]),
            TermKind::Call { functor, args, .. } => {
                let no_vars = FxHashMap::default();
                for (i, arg) in args.iter().enumerate().rev() {
                    stack.push((arg, argument_type(&program.consts, functor, i, arg, &no_vars)));
                }
            }
            _ => {}
        }
    }
    // Innermost first, so the report points at the division itself.
    for (sub, ty) in typed.into_iter().rev().filter(|(t, _)| t.is_arithmetic() && ground(t)) {
        if ground_value(program, ty, sub).is_some() {
            continue;
        }
        let report = match &sub.kind {
            // A cast between numbers always has a value, unless it is of a literal that is
            // no constant of the target type (`as(2.5, number)`, `as(-1, unsigned)`),
            // which lowering reports as it lowers an expression with variables.
            TermKind::Call { functor: ir::Functor::Cast(_, to), args, .. } if to.is_numeric() => match args.first() {
                Some(arg @ ast::Term { kind: TermKind::Int(_) | TermKind::Float(_), .. }) if ground(term) => {
                    match constant_value(program, *to, arg) {
                        Err(report) => report,
                        Ok(_) => continue,
                    }
                }
                _ => continue,
            },
            TermKind::Call { functor: ir::Functor::Cast(..), .. } => Diagnostic::error(
                Code::DIVISION_BY_ZERO,
                "this expression has no value: `as(..., symbol)` of a number that is no symbol's id",
            )
            .with_primary(sub.span, "no symbol here"),
            TermKind::Call { functor, .. } => Diagnostic::error(
                Code::DIVISION_BY_ZERO,
                format!("this expression has no value: `{}` of a text that writes no integer", functor.name()),
            )
            .with_primary(sub.span, format!("no {} here", functor.result().name())),
            _ => Diagnostic::error(Code::DIVISION_BY_ZERO, "this expression has no value: it divides by zero")
                .with_primary(sub.span, "a division or modulo by zero (or of -2147483648 by -1)"),
        };
        return Some(report);
    }
    None
}

/// The value of a ground arithmetic expression in type `ty`; none when it has none (or a
/// constant in it is no number, which type inference reports).
fn ground_value(program: &mut Program, ty: ValueType, term: &ast::Term) -> Option<u32> {
    let mut ok = true;
    let no_vars = FxHashMap::default();
    let store = program.consts.clone();
    let expr = lower_expr(term, ty, &no_vars, &store, &mut |leaf, ty| match lower_term(
        program,
        ty,
        leaf,
        &mut FreshVars::new([]),
    ) {
        Ok(t) => t,
        Err(_) => {
            ok = false;
            Term { kind: ir::TermKind::Const(Value::Number(0)), span: leaf.span }
        }
    });
    let value = expr.eval(&program.consts, |t| t.constant().map_or(0, Value::raw));
    value.filter(|_| ok)
}

/// The value of a constant term of type `ty`, or the report of why it is none: a number
/// beyond the type's 32 bits is E0029, anything else (which type inference has reported
/// in a program, but a `--query` may hold) E0028.
fn constant_value(program: &mut Program, ty: ValueType, term: &ast::Term) -> Result<Value, Diagnostic> {
    let text = match &term.kind {
        TermKind::Ident(s) | TermKind::Int(s) | TermKind::Float(s) | TermKind::Str(s) | TermKind::Reserved(s) => s,
        _ => unreachable!("a constant term"),
    };
    if matches!(term.kind, TermKind::Float(_)) && ty.is_numeric() && ty != ValueType::Float {
        return Err(Diagnostic::error(Code::TYPE_MISMATCH, format!("`{text}` is a float, in a {} column", ty.name()))
            .with_primary(term.span, format!("a {} is expected here", ty.name())));
    }
    if ty.is_numeric() && !matches!(term.kind, TermKind::Int(_) | TermKind::Float(_)) {
        return Err(Diagnostic::error(Code::TYPE_MISMATCH, format!("`{text}` is a symbol, in a {} column", ty.name()))
            .with_primary(term.span, format!("a {} is expected here", ty.name())));
    }
    match program.encode(ty, text) {
        Ok(raw) => Ok(Value::from_raw(ty, raw)),
        Err(why) => {
            Err(Diagnostic::error(Code::NUMBER_OUT_OF_RANGE, format!("`{text}` is {why}")).with_primary(term.span, why))
        }
    }
}

/// Lowers one term whose value, if it is a constant, is of type `ty`. Reserved names
/// have been reported already; they are interned as constants so that lowering can go on
/// and find further errors, as is a constant that is no value of its type.
fn lower_term(
    program: &mut Program,
    ty: ValueType,
    term: &ast::Term,
    fresh: &mut FreshVars<'_>,
) -> Result<Term, Diagnostic> {
    let kind = match &term.kind {
        TermKind::Var(v) => ir::TermKind::Var(program.symbols.intern(v)),
        TermKind::Anon => ir::TermKind::Var(program.symbols.intern(&fresh.fresh())),
        TermKind::Reserved(s) => ir::TermKind::Const(Value::Symbol(program.consts.intern(s))),
        _ => ir::TermKind::Const(constant_value(program, ty, term)?),
    };
    Ok(Term { kind, span: term.span })
}

/// [`lower_term`], with a constant that is no value of its type reported and lowered as
/// the symbol of its text.
fn lower_term_or_report(
    lowering: &mut Lowering<'_>,
    ty: ValueType,
    term: &ast::Term,
    fresh: &mut FreshVars<'_>,
) -> Term {
    lower_term(lowering.program, ty, term, fresh).unwrap_or_else(|report| {
        lowering.diagnostics.push(report);
        lower_term(lowering.program, ValueType::Symbol, term, fresh).expect("every constant is a symbol")
    })
}

/// Lowers an atom. An arithmetic argument without variables is its value; one with
/// variables becomes a fresh variable and the comparison `_k = e` in `computed`, so
/// that atoms hold terms only.
fn lower_atom(
    lowering: &mut Lowering<'_>,
    pred: PredId,
    atom: &ast::Atom,
    fresh: &mut FreshVars<'_>,
    computed: &mut Vec<ir::Comparison>,
) -> ir::Atom {
    let types = lowering.program.pred(pred).types.clone();
    let mut args = Vec::with_capacity(atom.args.len());
    for (i, t) in atom.args.iter().enumerate() {
        let ty = types.get(i).copied().unwrap_or_default();
        if !t.is_arithmetic() {
            args.push(lower_term_or_report(lowering, ty, t, fresh));
            continue;
        }
        if let Some(report) = constant_without_value(lowering.program, ty, t) {
            lowering.diagnostics.push(report);
        }
        // A declared functor's call is computed as the rule runs, as an expression with
        // variables is.
        let has_vars =
            t.calls_user_functor() || t.subterms().any(|s| matches!(s.kind, TermKind::Var(_) | TermKind::Anon));
        if !has_vars {
            let value = ground_value(lowering.program, ty, t).unwrap_or(0);
            args.push(Term { kind: ir::TermKind::Const(Value::from_raw(ty, value)), span: t.span });
            continue;
        }
        let var = Term { kind: ir::TermKind::Var(lowering.program.symbols.intern(&fresh.fresh())), span: t.span };
        let expr = lower_operand(lowering, ty, t, fresh);
        computed.push(ir::Comparison {
            op: ir::CmpOp::Eq,
            left: ir::Expr::leaf(var),
            right: expr,
            domain: ty,
            span: t.span,
        });
        args.push(var);
    }
    ir::Atom { pred, args, span: atom.span }
}

/// A comparison operand or an atom's arithmetic argument as an IR expression of type
/// `ty`; a constant that is no value of it is reported (by inference, or here).
fn lower_operand(lowering: &mut Lowering<'_>, ty: ValueType, term: &ast::Term, fresh: &mut FreshVars<'_>) -> ir::Expr {
    if !term.is_arithmetic() {
        return ir::Expr::leaf(lower_term_or_report(lowering, ty, term, fresh));
    }
    let var_types = std::mem::take(&mut lowering.var_types);
    let store = lowering.program.consts.clone();
    let expr =
        lower_expr(term, ty, &var_types, &store, &mut |leaf, ty| lower_term_or_report(lowering, ty, leaf, fresh));
    lowering.var_types = var_types;
    expr
}

/// The types of a rule's variables: those of the columns its positive atoms bind them
/// in, then those its assignments (`v = e`) give them.
fn variable_types(lowering: &Lowering<'_>, rule: &ast::Rule) -> FxHashMap<String, ValueType> {
    let mut types = FxHashMap::default();
    for atom in rule.body.iter().filter_map(|l| match l {
        ast::Literal::Atom(atom) => Some(atom),
        _ => None,
    }) {
        let Some(pred) = lowering.program.lookup_source(&atom.pred.text) else { continue };
        for (term, &ty) in atom.args.iter().zip(&lowering.program.pred(pred).types) {
            if let TermKind::Var(v) = &term.kind {
                types.entry(v.clone()).or_insert(ty);
            }
        }
    }
    for (position, literal) in rule.body.iter().enumerate() {
        let ast::Literal::Compare(c) = literal else { continue };
        let site = crate::types::ComparisonSite { statement: lowering.statement, literal: position };
        if let (ir::CmpOp::Eq, Some(&ty)) = (c.op, lowering.comparisons.get(&site)) {
            for side in [&c.left, &c.right] {
                if let TermKind::Var(v) = &side.kind {
                    types.entry(v.clone()).or_insert(ty);
                }
            }
        }
    }
    types
}

fn lower_rule(
    lowering: &mut Lowering<'_>,
    rule: &ast::Rule,
    reported_anonymous: &mut Vec<Span>,
    diagnostics: &mut Vec<Diagnostic>,
) -> ir::Rule {
    if let Some(reduction) = lower_reduction(lowering, rule) {
        return reduction;
    }
    let mut fresh = FreshVars::new(rule.terms().flat_map(ast::Term::subterms));
    for term in rule.head.args.iter().filter(|t| t.kind == TermKind::Anon) {
        reported_anonymous.push(term.span);
        diagnostics.push(
            Diagnostic::error(Code::ANON_IN_HEAD, "the anonymous variable `_` cannot appear in a rule head")
                .with_primary(term.span, "`_` in the head"),
        );
    }
    lowering.var_types = variable_types(lowering, rule);
    let head_pred = lookup(lowering.program, &rule.head);
    let mut computed = Vec::new();
    let head = lower_atom(lowering, head_pred, &rule.head, &mut fresh, &mut computed);
    let mut lowered = ir::Rule::positive(head, Vec::new(), rule.span, Origin::Source);
    for (position, literal) in rule.body.iter().enumerate() {
        match literal {
            ast::Literal::Atom(atom) => {
                let pred = lookup(lowering.program, atom);
                lowered.body.push(lower_atom(lowering, pred, atom, &mut fresh, &mut computed));
            }
            ast::Literal::Negated { atom, .. } => {
                let pred = lookup(lowering.program, atom);
                lowered.negated.push(lower_atom(lowering, pred, atom, &mut fresh, &mut computed));
            }
            ast::Literal::Compare(c) => {
                let site = crate::types::ComparisonSite { statement: lowering.statement, literal: position };
                // The type inference found for the comparison: an ordering of `unsigned`
                // expressions takes unsigned constants even where no operand is a column.
                let ty = lowering.comparisons.get(&site).copied().unwrap_or(c.domain);
                // `R = range(..)`, as `generators.rs` leaves each range.
                if let (TermKind::Var(name), TermKind::Range { args, .. }) = (&c.left.kind, &c.right.kind) {
                    let mut operands = args.iter().map(|arg| lower_operand(lowering, ty, arg, &mut fresh));
                    let (Some(from), Some(to)) = (operands.next(), operands.next()) else { continue };
                    let step = operands.next();
                    let var = lowering.program.symbols.intern(name);
                    lowered.generators.push(ir::Generator { var, from, to, step, domain: ty, span: c.right.span });
                    continue;
                }
                for term in [&c.left, &c.right].into_iter().flat_map(|t| t.subterms()) {
                    if term.kind == TermKind::Anon {
                        reported_anonymous.push(term.span);
                        diagnostics.push(
                            Diagnostic::error(
                                Code::UNBOUND_IN_CONSTRAINT,
                                "the anonymous variable `_` has no value to compare",
                            )
                            .with_primary(term.span, "`_` in a comparison"),
                        );
                    }
                }
                if c.op.is_ordering() && c.domain != ValueType::Symbol && ty != ValueType::Symbol {
                    let operands = [&c.left, &c.right].into_iter().flat_map(|t| t.same_type_subterms());
                    diagnostics.extend(operands.filter_map(|term| integer_operand(term, ty)));
                }
                for term in [&c.left, &c.right] {
                    if let Some(report) = constant_without_value(lowering.program, ty, term) {
                        lowering.diagnostics.push(report);
                    }
                }
                let plain = !c.left.is_arithmetic() && !c.right.is_arithmetic();
                let (left, right) = if plain && c.op.is_ordering() && c.domain != ValueType::Symbol {
                    // A constant that is no value of the type is E0024 already.
                    let mut quiet = |term| {
                        lower_term(lowering.program, ty, term, &mut fresh).unwrap_or_else(|_| {
                            lower_term(lowering.program, ValueType::Symbol, term, &mut fresh).expect("a symbol")
                        })
                    };
                    (ir::Expr::leaf(quiet(&c.left)), ir::Expr::leaf(quiet(&c.right)))
                } else {
                    let left = lower_operand(lowering, ty, &c.left, &mut fresh);
                    (left, lower_operand(lowering, ty, &c.right, &mut fresh))
                };
                if let (ir::CmpOp::Match | ir::CmpOp::NotMatch, TermKind::Str(pattern)) = (c.op, &c.left.kind) {
                    if let Some(why) = ir::pattern_error(pattern) {
                        diagnostics.push(
                            Diagnostic::warning(Code::PATTERN_MATCHES_NOTHING, "this pattern is no regular expression")
                                .with_primary(c.left.span, why),
                        );
                    }
                }
                lowered.comparisons.push(ir::Comparison { op: c.op, left, right, domain: ty, span: c.span });
            }
        }
    }
    lowered.comparisons.extend(computed);
    // A named variable of a negated atom must be bound by the positive part of the body
    // (in any order, as Soufflé has it); `_` there means "any value".
    let bound: FxHashSet<ir::Symbol> = lowered.bound_vars().into_iter().collect();
    let mut reported = FxHashSet::default();
    for atom in rule.body.iter().filter_map(|l| match l {
        ast::Literal::Negated { atom, .. } => Some(atom),
        _ => None,
    }) {
        for term in &atom.args {
            let TermKind::Var(name) = &term.kind else { continue };
            let symbol = lowering.program.symbols.intern(name);
            if !bound.contains(&symbol) && reported.insert(symbol) {
                diagnostics.push(
                    Diagnostic::error(
                        Code::UNBOUND_IN_CONSTRAINT,
                        format!("variable `{name}` of a negated atom is not bound by the body"),
                    )
                    .with_primary(term.span, format!("`{name}` is bound by no positive atom or assignment"))
                    .with_secondary(atom.span, "in this negated atom")
                    .with_help("bind it with a positive atom, or write `_` for \"any value\""),
                );
            }
        }
    }
    lowered
}

/// The IR reduction of a rule `r(K.., N) :- N = op V : rows(K.., _, V)`, the form
/// `reductions.rs` gives every aggregate (so no other rule lowered has an aggregate).
fn lower_reduction(lowering: &mut Lowering<'_>, rule: &ast::Rule) -> Option<ir::Rule> {
    let [ast::Literal::Compare(c)] = rule.body.as_slice() else { return None };
    let (TermKind::Var(result), TermKind::Aggregate { op, body, .. }) = (&c.left.kind, &c.right.kind) else {
        return None;
    };
    let [ast::Literal::Atom(rows)] = body.as_slice() else { return None };
    let op = match op {
        ast::AggregateOp::Count => ir::AggregateOp::Count,
        // `mean`'s reduction is the sum of its floats, which the rule reading it divides
        // by a count of the same rows (`reductions.rs`).
        ast::AggregateOp::Sum | ast::AggregateOp::Mean => ir::AggregateOp::Sum,
        ast::AggregateOp::Min => ir::AggregateOp::Min,
        ast::AggregateOp::Max => ir::AggregateOp::Max,
    };
    let mut fresh = FreshVars::new(rule.head.args.iter().chain(&rows.args));
    let mut computed = Vec::new();
    let head_pred = lookup(lowering.program, &rule.head);
    let head = lower_atom(lowering, head_pred, &rule.head, &mut fresh, &mut computed);
    let rows_pred = lookup(lowering.program, rows);
    let rows = lower_atom(lowering, rows_pred, rows, &mut fresh, &mut computed);
    let domain = lowering.program.pred(rows_pred).types.last().copied().unwrap_or(ValueType::Number);
    let result = lowering.program.symbols.intern(result);
    let aggregation = ir::Aggregation { op, keys: rule.head.args.len() - 1, domain, result };
    let mut lowered = ir::Rule::positive(head, vec![rows], rule.span, Origin::Source);
    lowered.aggregate = Some(aggregation);
    Some(lowered)
}

/// E0024 for a constant operand of `<`, `<=`, `>` or `>=` that is not a 32-bit integer
/// (an unsigned one in an unsigned comparison); a float one is the float comparison's
/// (whose constants type inference and lowering check).
fn integer_operand(term: &ast::Term, domain: ValueType) -> Option<Diagnostic> {
    let text = term.constant_text()?;
    let (value, range) = match domain {
        ValueType::Float => return None,
        ValueType::Unsigned => (ir::unsigned_value(text), "outside the unsigned 32-bit range"),
        _ => (ir::integer_value(text), "outside the 32-bit range"),
    };
    if value.is_some() {
        return None;
    }
    let what = if matches!(term.kind, TermKind::Int(_)) { range } else { "not an integer" };
    Some(
        Diagnostic::error(
            Code::NOT_AN_INTEGER,
            format!("`{text}` is {what}, and `<`, `<=`, `>`, `>=` compare integers"),
        )
        .with_primary(term.span, what),
    )
}

/// Checks and lowers a query atom against the program: the predicate must exist (E0007),
/// be IDB (E0008) and be used with its arity (E0004).
pub(crate) fn lower_query(program: &mut Program, atom: &ast::Atom) -> Result<Query, Diagnostic> {
    let Some(pred) = program.lookup_source(&atom.pred.text) else {
        return Err(Diagnostic::error(
            Code::QUERY_UNKNOWN,
            format!("the query names `{}`, which the program does not mention", atom.pred.text),
        )
        .with_primary(atom.pred.span, "unknown predicate"));
    };
    if program.pred(pred).arity != atom.args.len() {
        return Err(IrError::ArityMismatch { pred, found: atom.args.len(), span: atom.span }.to_diagnostic(program));
    }
    if program.pred(pred).kind == PredKind::Edb {
        return Err(IrError::QueryOnEdb { pred, span: atom.span }.to_diagnostic(program));
    }
    // A record argument (Soufflé's dialect) is a pattern the answers' record must match:
    // its variables are the query's, so `q([1, y], y)` asks for equal values. The atom is
    // lowered with a fresh variable in its place, which leaves the column free for the
    // rewrite and the engines; a record without variables is the one value it writes.
    let mut patterns = Vec::new();
    let mut without_records = std::borrow::Cow::Borrowed(atom);
    for (i, arg) in atom.args.iter().enumerate() {
        if !matches!(arg.kind, TermKind::Record { .. } | TermKind::Nil) {
            continue;
        }
        let ty = program.pred(pred).types.get(i).copied().unwrap_or_default();
        let pattern = match crate::souffle::records::read_record(program, ty, arg, &mut QueryPattern { atom }) {
            Ok(pattern) => pattern,
            Err(reports) => match reports.into_iter().next() {
                Some(first) => return Err(first),
                None => continue,
            },
        };
        patterns.push((i, pattern));
        without_records.to_mut().args[i] = ast::Term { kind: TermKind::Anon, span: arg.span };
    }
    // Fresh names avoid the variables inside the records too.
    let mut fresh = FreshVars::new(atom.args.iter().flat_map(ast::Term::subterms));
    let mut lowering = Lowering {
        program,
        comparisons: &Default::default(),
        statement: 0,
        var_types: FxHashMap::default(),
        diagnostics: Vec::new(),
    };
    let mut atom = lower_atom(&mut lowering, pred, &without_records, &mut fresh, &mut Vec::new());
    let mut records = Vec::new();
    for (i, pattern) in patterns {
        match pattern {
            ir::FieldPattern::Value(value) => atom.args[i].kind = ir::TermKind::Const(value),
            pattern => records.push((i, pattern)),
        }
    }
    let records =
        (!records.is_empty()).then(|| ir::RecordPatterns { args: records, values: lowering.program.consts.clone() });
    match lowering.diagnostics.into_iter().next() {
        Some(report) => Err(report),
        None => Ok(Query { atom, records }),
    }
}

/// Reads a query's record argument as a pattern: its variables and `_` match any value,
/// its other values are read as an update's are.
struct QueryPattern<'a> {
    atom: &'a ast::Atom,
}

impl crate::souffle::records::RecordReader for QueryPattern<'_> {
    type Value = ir::FieldPattern;

    fn plain(
        &mut self,
        program: &mut Program,
        ty: ValueType,
        term: &ast::Term,
    ) -> Result<ir::FieldPattern, Diagnostic> {
        Ok(match &term.kind {
            TermKind::Var(name) => ir::FieldPattern::Var(program.symbols.intern(name)),
            TermKind::Anon => ir::FieldPattern::Any,
            _ => ir::FieldPattern::Value(Value::from_raw(ty, ground_plain(program, ty, term, self.atom)?)),
        })
    }

    fn nil(&mut self, ty: ir::RecordTypeId) -> ir::FieldPattern {
        ir::FieldPattern::Value(Value::Record(ty, 0))
    }

    fn record(
        &mut self,
        program: &mut Program,
        ty: ir::RecordTypeId,
        branch: Option<u16>,
        fields: Vec<ir::FieldPattern>,
    ) -> ir::FieldPattern {
        let values: Option<Vec<u32>> = fields
            .iter()
            .map(|f| match f {
                ir::FieldPattern::Value(v) => Some(v.raw()),
                _ => None,
            })
            .collect();
        match values {
            Some(values) => {
                let record: Vec<u32> = branch.map(u32::from).into_iter().chain(values).collect();
                ir::FieldPattern::Value(Value::Record(ty, program.consts.pack(&record)))
            }
            None => ir::FieldPattern::Record { ty, branch, fields },
        }
    }
}

/// The values of a ground atom of `pred` as its tuples hold them, or E0011 for each
/// variable in it and E0028/E0029 for each constant that is no value of its column's type.
pub(crate) fn ground_values(
    program: &mut Program,
    pred: PredId,
    atom: &ast::Atom,
) -> Result<Vec<u32>, Vec<Diagnostic>> {
    let types = program.pred(pred).types.clone();
    let mut errors = Vec::new();
    let mut values = Vec::new();
    for (i, term) in atom.args.iter().enumerate() {
        let ty = types.get(i).copied().unwrap_or_default();
        match ground_argument(program, ty, term, atom) {
            Ok(value) => values.push(value),
            Err(reports) => errors.extend(reports),
        }
    }
    if errors.is_empty() {
        Ok(values)
    } else {
        Err(errors)
    }
}

/// The value of `term`, an argument of the ground atom `atom` in a column of type `ty`:
/// a record (or `nil`, or a value where a record goes) as `souffle::records` reads one
/// written outside the program, anything else by [`ground_plain`]. A record column's text
/// in a string (`"[1, nil]"`) is read as a facts file holds it.
fn ground_argument(
    program: &mut Program,
    ty: ValueType,
    term: &ast::Term,
    atom: &ast::Atom,
) -> Result<u32, Vec<Diagnostic>> {
    let record = matches!(term.kind, TermKind::Record { .. } | TermKind::Nil)
        || (ty.is_record() && !matches!(term.kind, TermKind::Str(_) | TermKind::Var(_) | TermKind::Anon));
    if record {
        crate::souffle::records::ground_record(program, ty, term, &mut |program, ty, leaf| {
            ground_plain(program, ty, leaf, atom)
        })
    } else {
        ground_plain(program, ty, term, atom).map_err(|report| vec![report])
    }
}

/// The value of `term`, a plain argument (no record) of the ground atom `atom` in a
/// column of type `ty`, or the report of why it has none: E0011 for a variable.
fn ground_plain(program: &mut Program, ty: ValueType, term: &ast::Term, atom: &ast::Atom) -> Result<u32, Diagnostic> {
    match &term.kind {
        TermKind::Var(_) | TermKind::Anon => {
            let name = match &term.kind {
                TermKind::Var(v) => v.as_str(),
                _ => "_",
            };
            Err(Diagnostic::error(Code::NON_GROUND_FACT, format!("the fact for `{}` is not ground", atom.pred.text))
                .with_primary(term.span, format!("`{name}` is a variable"))
                .with_secondary(atom.span, "in this fact"))
        }
        TermKind::Reserved(s) => Ok(program.consts.intern(s).0),
        TermKind::Unary { .. } | TermKind::Binary { .. } | TermKind::Call { .. } => {
            let has_vars = term.subterms().any(|s| matches!(s.kind, TermKind::Var(_) | TermKind::Anon));
            if has_vars {
                return Err(Diagnostic::error(
                    Code::NON_GROUND_FACT,
                    format!("the fact for `{}` is not ground", atom.pred.text),
                )
                .with_primary(term.span, "an expression with a variable")
                .with_secondary(atom.span, "in this fact"));
            }
            match constant_without_value(program, ty, term) {
                Some(report) => Err(report),
                None => Ok(ground_value(program, ty, term).unwrap_or(0)),
            }
        }
        _ => constant_value(program, ty, term).map(Value::raw),
    }
}

/// W0001 for each EDB predicate used in a rule body (negated too) that has neither inline facts nor
/// facts from an input file (`facts_given_for`), reported once at its first body use.
/// Kept out of [`lower`] because facts files are read after the program.
pub fn undefined_predicate_warnings(program: &Program, facts_given_for: &[PredId]) -> Vec<Diagnostic> {
    let mut given: FxHashSet<PredId> = facts_given_for.iter().copied().collect();
    given.extend(program.facts.iter().map(|f| f.pred));
    let mut warned = FxHashSet::default();
    let mut out = Vec::new();
    for rule in &program.rules {
        let atoms = rule.body.iter().map(|a| (a, "this atom can never match"));
        let negated = rule.negated.iter().map(|a| (a, "this negation always holds"));
        for (atom, label) in atoms.chain(negated) {
            let pred = program.pred(atom.pred);
            if pred.kind == PredKind::Edb && !given.contains(&atom.pred) && warned.insert(atom.pred) {
                out.push(
                    Diagnostic::warning(
                        Code::UNDEFINED_PREDICATE,
                        format!("`{}` has no rules and no facts", program.pred_name(atom.pred)),
                    )
                    .with_primary(atom.span, label),
                );
            }
        }
    }
    out
}
