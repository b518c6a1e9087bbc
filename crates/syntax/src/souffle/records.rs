//! Records and algebraic data types, resolved to calls the native lowering knows. Each
//! record a clause writes gets its type from its place (the column of an atom, the field
//! of an enclosing record, the variable it is compared with, a branch's name), and then:
//!
//! - in a head, a negated atom or an expression it is made: `[a, b]` becomes the call
//!   [`ir::Functor::Record`] of its type, `nil` [`ir::Functor::Nil`];
//! - as the argument of a positive body atom, it is a pattern: the atom holds a fresh
//!   variable `r`, and each field is read back from it with [`ir::Functor::Field`]
//!   (`a = field0(r)`, `field1(r) = 3`, a nested pattern on a further variable; a
//!   branch pattern also tests the branch's index), so a record matches exactly the
//!   records of that shape and no record is made to match one;
//! - `x = [a, b]` with `x` bound (by an atom or a pattern) reads `x` the same way;
//!   otherwise it makes the record.
//!
//! A record whose type its place does not give, of the wrong arity, or naming no branch
//! is E0045.

use super::check::Records;
use super::lower::Clause;
use super::record_inference;
use super::Relation;
use crate::ast::{self, Literal, Term, TermKind};
use diag::{Code, Diagnostic, Span};
use ir::{CmpOp, Functor, RecordType, RecordTypeId, ValueType};
use rustc_hash::{FxHashMap, FxHashSet};

/// The clauses with their records resolved; a clause with a record error is reported
/// and dropped.
pub(super) fn resolve(
    clauses: Vec<Clause>,
    relations: &[Relation],
    types: &FxHashMap<String, Vec<String>>,
    records: &mut Records,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Clause> {
    let writes_records = |c: &Clause| {
        let atoms = c.heads.iter().chain(c.body.iter().flatten().flatten().filter_map(ast::Literal::atom));
        let in_atoms = atoms.flat_map(|a| &a.args).any(has_record);
        let in_comparisons = c.body.iter().flatten().flatten().any(|l| match l {
            Literal::Compare(cmp) => has_record(&cmp.left) || has_record(&cmp.right),
            _ => false,
        });
        in_atoms || in_comparisons
    };
    if !clauses.iter().any(writes_records) {
        return clauses;
    }
    let columns: FxHashMap<&str, Vec<ValueType>> = relations
        .iter()
        .map(|r| (r.name.as_str(), r.types.iter().map(|t| super::typing::column_kind(t, types)).collect()))
        .collect();
    let mut resolver =
        Resolver { columns, records, structural: FxHashMap::default(), fresh: 0, diagnostics: Vec::new() };
    let mut kept = Vec::with_capacity(clauses.len());
    for mut clause in clauses {
        if !writes_records(&clause) {
            kept.push(clause);
            continue;
        }
        let before = resolver.diagnostics.len();
        clause = resolver.clause(clause);
        if resolver.diagnostics.len() == before {
            kept.push(clause);
        }
    }
    // A record an inlined relation's clause writes is resolved once per use: one report.
    let mut reported = FxHashSet::default();
    resolver.diagnostics.retain(|d| reported.insert((d.code, d.message.clone(), d.primary_span())));
    diagnostics.append(&mut resolver.diagnostics);
    kept
}

/// Whether `term` writes a record or `nil` anywhere, an aggregate's body included.
fn has_record(term: &Term) -> bool {
    term.subterms().any(|t| match &t.kind {
        TermKind::Record { .. } | TermKind::Nil => true,
        TermKind::Aggregate { value, body, .. } => {
            value.as_deref().is_some_and(has_record)
                || body.iter().any(|l| match l {
                    Literal::Atom(a) | Literal::Negated { atom: a, .. } => a.args.iter().any(has_record),
                    Literal::Compare(c) => has_record(&c.left) || has_record(&c.right),
                })
        }
        _ => false,
    })
}

struct Resolver<'a> {
    /// Each declared relation's column types.
    columns: FxHashMap<&'a str, Vec<ValueType>>,
    records: &'a mut Records,
    /// The structural record types made ([`record_inference`]), by name.
    structural: FxHashMap<String, RecordTypeId>,
    /// The count of fresh variables made, for their names.
    fresh: usize,
    diagnostics: Vec<Diagnostic>,
}

impl Resolver<'_> {
    fn clause(&mut self, clause: Clause) -> Clause {
        let Clause { heads, body, span, subsumes } = clause;
        let Some(body) = body else {
            // Facts: every record is made.
            let heads = heads.into_iter().map(|h| self.made_atom(h)).collect();
            return Clause { heads, body: None, span, subsumes };
        };
        // Each conjunction binds its own variables, so heads are resolved per
        // conjunction; a clause with several conjunctions is split into one clause each.
        let mut conjunctions = Vec::with_capacity(body.len());
        for conjunction in body {
            conjunctions.push(self.conjunction(conjunction, &heads));
        }
        let heads = heads.into_iter().map(|h| self.made_atom(h)).collect();
        Clause { heads, body: Some(conjunctions), span, subsumes }
    }

    /// An atom whose records are all made (a head, a negated atom).
    fn made_atom(&mut self, mut atom: ast::Atom) -> ast::Atom {
        let columns = self.columns.get(atom.pred.text.as_str()).cloned().unwrap_or_default();
        for (i, arg) in atom.args.iter_mut().enumerate() {
            if has_record(arg) {
                let ty = columns.get(i).copied();
                *arg = self.made(std::mem::replace(arg, placeholder()), ty);
            }
        }
        atom
    }

    /// The literals of `conjunction` with each record read or made; `heads` are the
    /// clause's heads, whose record columns type the variables they hold.
    fn conjunction(&mut self, conjunction: Vec<Literal>, heads: &[ast::Atom]) -> Vec<Literal> {
        let conjunction = self.records_opposite_variables(conjunction);
        let mut out = Vec::with_capacity(conjunction.len());
        // The type of each variable: the record types the whole conjunction gives, then
        // each positive atom's column or pattern's field.
        let mut var_types =
            record_inference::infer(&conjunction, heads, &self.columns, self.records, &mut self.structural);
        let mut bound: FxHashSet<String> = FxHashSet::default();
        let mut later = Vec::new();
        for literal in conjunction {
            match literal {
                Literal::Atom(mut atom) => {
                    let columns = self.columns.get(atom.pred.text.as_str()).cloned().unwrap_or_default();
                    let mut reads = Vec::new();
                    for (i, arg) in atom.args.iter_mut().enumerate() {
                        let ty = columns.get(i).copied();
                        match &arg.kind {
                            TermKind::Var(v) => {
                                bound.insert(v.clone());
                                if let Some(ty) = ty {
                                    var_types.entry(v.clone()).or_insert(ty);
                                }
                            }
                            TermKind::Record { .. } => {
                                let pattern = std::mem::replace(arg, placeholder());
                                let var = self.fresh_var(pattern.span);
                                *arg = var.clone();
                                match ty {
                                    Some(ty) => self.read(var, pattern, ty, &mut reads, &mut var_types, &mut bound),
                                    None => self.untyped(pattern.span),
                                }
                            }
                            _ if has_record(arg) => {
                                *arg = self.made(std::mem::replace(arg, placeholder()), ty);
                            }
                            _ => {}
                        }
                    }
                    out.push(Literal::Atom(atom));
                    out.extend(reads);
                }
                other => later.push(other),
            }
        }
        // Comparisons, each once what it needs is bound: a record compared with a bound
        // variable is read from it, any other is made.
        let mut later: std::collections::VecDeque<Literal> = later.into();
        while let Some(literal) = next_ready(&mut later, &bound) {
            if let Literal::Compare(ast::Comparison { op: CmpOp::Eq, left, right, .. }) = &literal {
                // `s = r` with `r` bound binds `s` (and the other way round).
                if let (TermKind::Var(l), TermKind::Var(r)) = (&left.kind, &right.kind) {
                    if bound.contains(l) || bound.contains(r) {
                        bound.insert(l.clone());
                        bound.insert(r.clone());
                    }
                }
            }
            match literal {
                Literal::Compare(c) if c.op == CmpOp::Eq && (is_record(&c.left) || is_record(&c.right)) => {
                    let (var, pattern) = if is_record(&c.right) { (c.left, c.right) } else { (c.right, c.left) };
                    let bound_var = match &var.kind {
                        TermKind::Var(v) if bound.contains(v) => var_types.get(v).copied(),
                        _ => None,
                    };
                    match bound_var {
                        Some(ty) => {
                            let mut reads = Vec::new();
                            self.read(var, pattern, ty, &mut reads, &mut var_types, &mut bound);
                            out.extend(reads);
                        }
                        None => {
                            let ty = match &var.kind {
                                TermKind::Var(v) => var_types.get(v).copied(),
                                _ => None,
                            };
                            let made = self.made(pattern, ty);
                            // A record on both sides (`$D() = $D()`) is made on both.
                            let var = match has_record(&var) {
                                true => self.made(var, ty.or_else(|| call_result(&made))),
                                false => var,
                            };
                            if let TermKind::Var(v) = &var.kind {
                                bound.insert(v.clone());
                                if let Some(ty) = ty.or_else(|| call_result(&made)) {
                                    var_types.entry(v.clone()).or_insert(ty);
                                }
                            }
                            out.push(Literal::Compare(ast::Comparison { left: var, right: made, ..c }));
                        }
                    }
                }
                Literal::Compare(mut c) => {
                    // An aggregate's body is a conjunction of its own.
                    for side in [&mut c.left, &mut c.right] {
                        side.rewrite_outermost(
                            |t| matches!(t.kind, TermKind::Aggregate { .. }),
                            |t| {
                                if let TermKind::Aggregate { body, .. } = &mut t.kind {
                                    *body = self.conjunction(std::mem::take(body), &[]);
                                }
                            },
                        );
                    }
                    if has_record(&c.left) || has_record(&c.right) {
                        let ty =
                            self.operand_type(&c.left, &var_types).or_else(|| self.operand_type(&c.right, &var_types));
                        c.left = self.made(c.left, ty);
                        c.right = self.made(c.right, ty);
                    }
                    out.push(Literal::Compare(c));
                }
                Literal::Negated { atom, span } => {
                    // A record there is made, and `_` makes no value: as Soufflé has it,
                    // such a record is not grounded (reported at its outermost record).
                    for arg in &atom.args {
                        let ungrounded = arg.subterms().find(|t| {
                            matches!(t.kind, TermKind::Record { .. })
                                && t.subterms().any(|f| matches!(f.kind, TermKind::Anon))
                        });
                        if let Some(record) = ungrounded {
                            self.diagnostics.push(
                                Diagnostic::error(Code::INVALID_RECORD, "a record with `_` in a negated atom is not grounded")
                                    .with_primary(record.span, "`_` gives this record no value to look for")
                                    .with_help(
                                        "each field of a record in a negated atom is a value the body gives (Soufflé reports an ungrounded record too): \
                                         name the field with a variable a positive atom binds, or negate an atom of a relation that holds the fields",
                                    ),
                            );
                        }
                    }
                    out.push(Literal::Negated { atom: self.made_atom(atom), span });
                }
                Literal::Atom(_) => unreachable!("atoms were taken first"),
            }
        }
        out
    }

    /// `conjunction` with each comparison of a record `[..]` with no variable split in
    /// two, through a fresh variable standing for each side (`[a] = [1]` is `r = [a], r
    /// = [1]`; `[1] != [2]` is `r = [1], s = [2], r != s`), so that every record is
    /// opposite a variable whose type [`record_inference`] finds.
    fn records_opposite_variables(&mut self, conjunction: Vec<Literal>) -> Vec<Literal> {
        let splits = |c: &ast::Comparison| {
            let plain_record = |t: &Term| matches!(t.kind, TermKind::Record { branch: None, .. });
            let var = |t: &Term| matches!(t.kind, TermKind::Var(_));
            (plain_record(&c.left) || plain_record(&c.right)) && !var(&c.left) && !var(&c.right)
        };
        if !conjunction.iter().any(|l| matches!(l, Literal::Compare(c) if splits(c))) {
            return conjunction;
        }
        let mut out = Vec::with_capacity(conjunction.len() + 2);
        for literal in conjunction {
            match literal {
                Literal::Compare(c) if splits(&c) => {
                    let left = self.fresh_var(c.left.span);
                    // `_ = [1]` holds once the record is made: `_` is no value to compare.
                    if !matches!(c.left.kind, TermKind::Anon) {
                        out.push(Literal::Compare(ast::Comparison::new(left.clone(), CmpOp::Eq, c.left)));
                    }
                    let right = match c.op {
                        CmpOp::Eq => left,
                        _ => {
                            let right = self.fresh_var(c.right.span);
                            out.push(Literal::Compare(ast::Comparison::new(left.clone(), c.op, right.clone())));
                            right
                        }
                    };
                    if !matches!(c.right.kind, TermKind::Anon) {
                        out.push(Literal::Compare(ast::Comparison::new(right, CmpOp::Eq, c.right)));
                    }
                }
                other => out.push(other),
            }
        }
        out
    }

    /// The type of a comparison operand that is a variable of known type.
    fn operand_type(&self, term: &Term, var_types: &FxHashMap<String, ValueType>) -> Option<ValueType> {
        match &term.kind {
            TermKind::Var(v) => var_types.get(v).copied(),
            _ => None,
        }
    }

    fn fresh_var(&mut self, span: Span) -> Term {
        self.fresh += 1;
        // A name no source variable has: `'` is no part of a Soufflé name.
        Term { kind: TermKind::Var(format!("record'{}", self.fresh)), span }
    }

    /// E0045: a record whose type its place does not give.
    fn untyped(&mut self, span: Span) {
        self.diagnostics.push(untyped(span));
    }

    /// [`shape`] with the program's record types; its report is kept.
    fn shape(&mut self, term: &Term, ty: Option<ValueType>) -> Option<(RecordTypeId, Option<u16>, Vec<ValueType>)> {
        let records = &*self.records;
        let branch_named = |name: &str| records.branches.get(name).copied();
        shape(&records.types, &branch_named, term, ty).map_err(|report| self.diagnostics.push(report)).ok()
    }

    /// `term` with each record made by a call of its type; `ty` is the type of `term`'s
    /// place, if known.
    fn made(&mut self, term: Term, ty: Option<ValueType>) -> Term {
        let span = term.span;
        match term.kind {
            TermKind::Nil => match ty {
                Some(ValueType::Record(id)) if !self.records.types[id.0 as usize].adt => {
                    Term { kind: TermKind::Call { functor: Functor::Nil(id), name_span: span, args: Vec::new() }, span }
                }
                _ => {
                    self.diagnostics.push(
                        Diagnostic::error(Code::INVALID_RECORD, "`nil` where no record type is expected")
                            .with_primary(span, "`nil` is the empty record of a record type"),
                    );
                    term_of(TermKind::Nil, span)
                }
            },
            TermKind::Record { .. } => {
                let Some((id, branch, fields)) = self.shape(&term, ty) else { return term };
                let TermKind::Record { args, .. } = term.kind else { unreachable!("a record") };
                let args: Vec<Term> =
                    args.into_iter().zip(fields).map(|(arg, field)| self.made(arg, Some(field))).collect();
                let functor = Functor::Record { ty: id, branch, arity: args.len() as u8 };
                Term { kind: TermKind::Call { functor, name_span: span, args }, span }
            }
            TermKind::Call { functor, name_span, args } => {
                let args = args.into_iter().map(|a| if has_record(&a) { self.made(a, None) } else { a }).collect();
                Term { kind: TermKind::Call { functor, name_span, args }, span }
            }
            kind => {
                let mut term = term_of(kind, span);
                if has_record(&term) {
                    term.rewrite_outermost(
                        |t| matches!(t.kind, TermKind::Record { .. } | TermKind::Nil),
                        |t| {
                            let inner = std::mem::replace(t, placeholder());
                            *t = self.made(inner, None);
                        },
                    );
                }
                term
            }
        }
    }

    /// The literals that read the record `pattern` (of type `ty`) from the bound `var`.
    fn read(
        &mut self,
        var: Term,
        pattern: Term,
        ty: ValueType,
        reads: &mut Vec<Literal>,
        var_types: &mut FxHashMap<String, ValueType>,
        bound: &mut FxHashSet<String>,
    ) {
        // (the variable holding the record, its pattern, its type)
        let mut work = vec![(var, pattern, ty)];
        while let Some((var, pattern, ty)) = work.pop() {
            if matches!(pattern.kind, TermKind::Nil) {
                let nil = self.made(pattern, Some(ty));
                reads.push(Literal::Compare(ast::Comparison::new(var, CmpOp::Eq, nil)));
                continue;
            }
            let Some((id, branch, fields)) = self.shape(&pattern, Some(ty)) else { continue };
            let TermKind::Record { args, .. } = pattern.kind else { unreachable!("a record") };
            let adt = self.records.types[id.0 as usize].adt;
            let field = |index: usize, result: ValueType, var: &Term| Term {
                kind: TermKind::Call {
                    functor: Functor::Field { ty: id, index: index as u8, result },
                    name_span: pattern.span,
                    args: vec![var.clone()],
                },
                span: pattern.span,
            };
            if let Some(b) = branch {
                let tag = Term { kind: TermKind::Int(b.to_string()), span: pattern.span };
                reads.push(Literal::Compare(ast::Comparison::new(field(0, ValueType::Number, &var), CmpOp::Eq, tag)));
            }
            for (i, (arg, field_ty)) in args.into_iter().zip(fields).enumerate() {
                let read = field(i + usize::from(adt), field_ty, &var);
                match &arg.kind {
                    TermKind::Anon => {}
                    TermKind::Var(v) => {
                        var_types.entry(v.clone()).or_insert(field_ty);
                        bound.insert(v.clone());
                        let mut c = ast::Comparison::new(arg, CmpOp::Eq, read);
                        c.domain = field_ty;
                        reads.push(Literal::Compare(c));
                    }
                    TermKind::Record { .. } => {
                        let inner = self.fresh_var(arg.span);
                        let TermKind::Var(name) = &inner.kind else { unreachable!("a variable") };
                        var_types.insert(name.clone(), field_ty);
                        let mut c = ast::Comparison::new(inner.clone(), CmpOp::Eq, read);
                        c.domain = field_ty;
                        reads.push(Literal::Compare(c));
                        work.push((inner, arg, field_ty));
                    }
                    _ => {
                        let value = self.made(arg, Some(field_ty));
                        let mut c = ast::Comparison::new(read, CmpOp::Eq, value);
                        c.domain = field_ty;
                        reads.push(Literal::Compare(c));
                    }
                }
            }
        }
    }
}

/// E0045: a record whose type its place does not give.
fn untyped(span: Span) -> Diagnostic {
    Diagnostic::error(Code::INVALID_RECORD, "the type of this record is not known here")
        .with_primary(span, "no column, field or typed variable gives its type")
        .with_help("write the record as an atom's argument, or compare it with a variable of a record column")
}

/// The record type and branch of the record term `term` in a place of type `ty` (if
/// known), with its fields' types; E0045 when it has none. `branch_named` finds a branch
/// of an algebraic data type by its name.
pub(crate) fn shape(
    types: &[RecordType],
    branch_named: &dyn Fn(&str) -> Option<(RecordTypeId, usize)>,
    term: &Term,
    ty: Option<ValueType>,
) -> Result<(RecordTypeId, Option<u16>, Vec<ValueType>), Diagnostic> {
    let TermKind::Record { branch, args } = &term.kind else { return Err(untyped(term.span)) };
    let (id, branch_index) = match (branch, ty) {
        (Some(name), _) => match branch_named(name) {
            Some((id, b)) => (id, Some(b)),
            None => {
                return Err(Diagnostic::error(Code::INVALID_RECORD, format!("no type declares the branch `{name}`"))
                    .with_primary(term.span, "an unknown branch")
                    .with_help("declare it in an algebraic data type: `.type T = Name {x: number} | ...`"));
            }
        },
        (None, Some(ValueType::Record(id))) if !types[id.0 as usize].adt => (id, None),
        (None, Some(other)) => {
            let what = match other {
                ValueType::Record(_) => "a value of an algebraic data type (`$Branch(...)`)".to_string(),
                other => format!("a {}", other.name()),
            };
            return Err(Diagnostic::error(Code::INVALID_RECORD, format!("a record where {what} is expected"))
                .with_primary(term.span, "a record here"));
        }
        (None, None) => return Err(untyped(term.span)),
    };
    if let (Some(ValueType::Record(expected)), Some(_)) = (ty, branch_index) {
        if expected != id {
            let (want, have) = (&types[expected.0 as usize].name, &types[id.0 as usize].name);
            return Err(Diagnostic::error(
                Code::INVALID_RECORD,
                format!("a branch of `{have}` where a `{want}` is expected"),
            )
            .with_primary(term.span, format!("a value of `{have}`")));
        }
    }
    let record_type = &types[id.0 as usize];
    let fields: Vec<ValueType> = record_type.branches[branch_index.unwrap_or(0)].fields.iter().map(|f| f.ty).collect();
    if fields.len() != args.len() {
        let what = match branch {
            Some(name) => format!("the branch `{name}`"),
            None => format!("a record of `{}`", record_type.name),
        };
        return Err(Diagnostic::error(
            Code::INVALID_RECORD,
            format!("{what} has {} field(s); {} given", fields.len(), args.len()),
        )
        .with_primary(term.span, format!("{} value(s) here", args.len())));
    }
    Ok((id, branch_index.map(|b| b as u16), fields))
}

/// How [`read_record`] makes the value of what it reads: a value of the store, or a
/// query's pattern.
pub(crate) trait RecordReader {
    type Value;
    /// The value of `term`, no record, in a place of type `ty`.
    fn plain(&mut self, program: &mut ir::Program, ty: ValueType, term: &Term) -> Result<Self::Value, Diagnostic>;
    /// `nil` of the record type `ty`.
    fn nil(&mut self, ty: RecordTypeId) -> Self::Value;
    /// The record of type `ty` (of branch `branch`) with these fields.
    fn record(
        &mut self,
        program: &mut ir::Program,
        ty: RecordTypeId,
        branch: Option<u16>,
        fields: Vec<Self::Value>,
    ) -> Self::Value;
}

/// The value of the ground term `term` in a place of type `ty`, where a value is written
/// outside the program (an update line, a fact to explain, a query): a record, a branch
/// or `nil` is checked against the type its place gives it and packed into `program`'s
/// store, innermost first; any other term is `plain`'s value of it.
pub(crate) fn ground_record(
    program: &mut ir::Program,
    ty: ValueType,
    term: &Term,
    plain: &mut dyn FnMut(&mut ir::Program, ValueType, &Term) -> Result<u32, Diagnostic>,
) -> Result<u32, Vec<Diagnostic>> {
    struct Packing<'a>(&'a mut dyn FnMut(&mut ir::Program, ValueType, &Term) -> Result<u32, Diagnostic>);
    impl RecordReader for Packing<'_> {
        type Value = u32;
        fn plain(&mut self, program: &mut ir::Program, ty: ValueType, term: &Term) -> Result<u32, Diagnostic> {
            (self.0)(program, ty, term)
        }
        fn nil(&mut self, _: RecordTypeId) -> u32 {
            0
        }
        fn record(&mut self, program: &mut ir::Program, _: RecordTypeId, branch: Option<u16>, fields: Vec<u32>) -> u32 {
            let record: Vec<u32> = branch.map(u32::from).into_iter().chain(fields).collect();
            program.consts.pack(&record)
        }
    }
    read_record(program, ty, term, &mut Packing(plain))
}

/// What `reader` makes of the term `term` in a place of type `ty`, written outside the
/// program: each record, branch or `nil` checked against the type its place gives it,
/// innermost first; any other term is `reader`'s plain value of it. A record in a place
/// of no record type, a value of another type where a record goes, or `nil` where a
/// value of an algebraic data type goes is E0045 (as in a program).
pub(crate) fn read_record<R: RecordReader>(
    program: &mut ir::Program,
    ty: ValueType,
    term: &Term,
    reader: &mut R,
) -> Result<R::Value, Vec<Diagnostic>> {
    /// A term still to read in a place of its type, or a record whose fields (the last
    /// `fields` values read) are complete, after its branch's index if it has one.
    enum Step<'a> {
        Read(&'a Term, ValueType),
        Pack { ty: RecordTypeId, fields: usize, branch: Option<u16> },
    }
    let types = program.consts.record_types();
    let branch_named = |name: &str| {
        types
            .iter()
            .enumerate()
            .filter(|(_, t)| t.adt)
            .find_map(|(i, t)| Some((RecordTypeId(i as u32), t.branch(name)?)))
    };
    let mut steps = vec![Step::Read(term, ty)];
    // What each term read made; `None` after an error, which the result then reports.
    let mut values: Vec<Option<R::Value>> = Vec::new();
    let mut errors = Vec::new();
    while let Some(step) = steps.pop() {
        let term = match step {
            Step::Pack { ty, fields, branch } => {
                let start = values.len() - fields;
                let fields: Option<Vec<R::Value>> = values.drain(start..).collect();
                // A record with a bad field is reported, not stored.
                values.push(fields.map(|fields| reader.record(program, ty, branch, fields)));
                continue;
            }
            Step::Read(term, ty) => match (&term.kind, ty) {
                (TermKind::Record { branch: Some(_), .. }, plain_type) if !plain_type.is_record() => {
                    Err(Diagnostic::error(
                        Code::INVALID_RECORD,
                        format!("a value of an algebraic data type where a {} is expected", plain_type.name()),
                    )
                    .with_primary(term.span, "a branch here"))
                }
                (TermKind::Record { args, .. }, ty) => match shape(&types, &branch_named, term, Some(ty)) {
                    Ok((id, branch, fields)) => {
                        steps.push(Step::Pack { ty: id, fields: args.len(), branch });
                        steps.extend(args.iter().zip(fields).rev().map(|(arg, field)| Step::Read(arg, field)));
                        continue;
                    }
                    Err(report) => Err(report),
                },
                (TermKind::Nil, ValueType::Record(id)) | (TermKind::Ident(_), ValueType::Record(id))
                    if term.constant_text().is_none_or(|text| text == "nil") =>
                {
                    match types[id.0 as usize].adt {
                        false => Ok(reader.nil(id)),
                        true => Err(Diagnostic::error(
                            Code::INVALID_RECORD,
                            format!("`nil` where a value of `{}` is expected", types[id.0 as usize].name),
                        )
                        .with_primary(term.span, "`nil` is the empty record of a record type, no branch")),
                    }
                }
                (TermKind::Nil, plain_type) => Err(Diagnostic::error(
                    Code::INVALID_RECORD,
                    format!("`nil` where a {} is expected", plain_type.name()),
                )
                .with_primary(term.span, "`nil` is the empty record of a record type")),
                (TermKind::Ident(_) | TermKind::Int(_) | TermKind::Float(_), ValueType::Record(id)) => {
                    let record_type = &types[id.0 as usize];
                    let expected = match record_type.adt {
                        true => "a branch `$Name(...)`",
                        false => "a record `[...]` or `nil`",
                    };
                    Err(Diagnostic::error(
                        Code::INVALID_RECORD,
                        format!("`{}` is no value of `{}`", term.constant_text().unwrap_or_default(), record_type.name),
                    )
                    .with_primary(term.span, format!("{expected} is expected here")))
                }
                _ => reader.plain(program, ty, term),
            },
        };
        match term {
            Ok(value) => values.push(Some(value)),
            Err(report) => {
                errors.push(report);
                values.push(None);
            }
        }
    }
    match (errors.is_empty(), values.pop().flatten()) {
        (true, Some(value)) => Ok(value),
        _ => Err(errors),
    }
}

/// The first of `literals` whose records can be resolved with the variables `bound`
/// binds (a record compared with a variable is read once the variable is bound, made
/// once its own variables are), or the first of all when none can; taken out.
fn next_ready(literals: &mut std::collections::VecDeque<Literal>, bound: &FxHashSet<String>) -> Option<Literal> {
    let ready = |literal: &Literal| match literal {
        Literal::Compare(c) if c.op == CmpOp::Eq && (is_record(&c.left) || is_record(&c.right)) => {
            let (var, record) = if is_record(&c.right) { (&c.left, &c.right) } else { (&c.right, &c.left) };
            let var_bound = matches!(&var.kind, TermKind::Var(v) if bound.contains(v));
            var_bound
                || record.subterms().all(|t| match &t.kind {
                    TermKind::Var(v) => bound.contains(v),
                    TermKind::Anon => false,
                    _ => true,
                })
        }
        _ => true,
    };
    let at = literals.iter().position(ready).unwrap_or(0);
    literals.remove(at)
}

/// Whether `term` is a record or a branch (not `nil`, which is compared as a value).
fn is_record(term: &Term) -> bool {
    matches!(term.kind, TermKind::Record { .. })
}

/// The type of a made record.
fn call_result(term: &Term) -> Option<ValueType> {
    match &term.kind {
        TermKind::Call { functor, .. } => Some(functor.result()),
        _ => None,
    }
}

fn term_of(kind: TermKind, span: Span) -> Term {
    Term { kind, span }
}

fn placeholder() -> Term {
    Term { kind: TermKind::Anon, span: Span::new(diag::FileId(0), 0..0) }
}
