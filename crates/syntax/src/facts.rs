//! Input that changes the EDB: facts files (ground atoms or delimited fields), update
//! batches and single update atoms. All atom forms go through the program's atom parser.

use crate::ast;
use crate::lexer::{lex, Spanned, Token};
use crate::lower::{ground_values, reserved_name, reserved_names};
use crate::parser::{fact_line, run, update_line, Sign};
use diag::{Code, Diagnostic, FileId, Span};
use ir::{Const, Fact, IrError, PredId, PredKind, PredName, Program};

/// One batch of EDB changes, applied together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpdateBatch {
    pub inserts: Vec<Fact>,
    pub deletes: Vec<Fact>,
    /// From the first to the last line of the batch.
    pub span: Span,
}

/// The lines of a source with their byte offsets, without the `\n` (and without a `\r`
/// before it, so that CRLF files read the same).
fn lines(src: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    src.split('\n').map(move |line| {
        let start = offset;
        offset += line.len() + 1;
        (start, line.strip_suffix('\r').unwrap_or(line))
    })
}

/// Splits a line at `separator` into `fields`, as `line.split(separator)` does. An ASCII
/// separator (all that facts files use) is found by comparing bytes, which for the short
/// fields of a facts file is much faster than the general searcher of `str::split`.
fn split_fields<'a>(line: &'a str, separator: char, fields: &mut Vec<&'a str>) {
    if !separator.is_ascii() {
        fields.extend(line.split(separator));
        return;
    }
    let separator = separator as u8;
    let mut start = 0;
    for (i, &byte) in line.as_bytes().iter().enumerate() {
        if byte == separator {
            // An ASCII byte is never inside a multi-byte character, so this is a boundary.
            fields.push(&line[start..i]);
            start = i + 1;
        }
    }
    fields.push(&line[start..]);
}

/// Lexes one line; spans are made relative to the whole file.
fn lex_line(line: &str, offset: usize) -> Vec<Spanned<'_>> {
    lex(line).into_iter().map(|(t, s)| (t, (s.start + offset..s.end + offset).into())).collect()
}

/// Turns a parsed ground atom into an input fact. New predicates are declared EDB;
/// a fact for an IDB predicate is reported with `idb_code` (E0005 for facts, E0015 for
/// updates), a wrong argument count with E0004, a variable with E0011.
fn input_fact(program: &mut Program, atom: &ast::Atom, idb_code: Code) -> Result<Fact, Vec<Diagnostic>> {
    let mut errors = reserved_names(atom);
    let values = ground_values(program, atom).unwrap_or_else(|e| {
        errors.extend(e);
        Vec::new()
    });
    if !errors.is_empty() {
        return Err(errors);
    }
    let pred = match program.lookup_source(&atom.pred.text) {
        Some(pred) => pred,
        None => {
            let name = PredName::Source(program.symbols.intern(&atom.pred.text));
            program.declare_pred(name, values.len(), PredKind::Edb, atom.span)
        }
    };
    if program.pred(pred).kind == PredKind::Idb {
        return Err(vec![idb_fact(program, pred, atom.span, idb_code)]);
    }
    if program.pred(pred).arity != values.len() {
        return Err(vec![IrError::ArityMismatch { pred, found: values.len(), span: atom.span }.to_diagnostic(program)]);
    }
    Ok(Fact { pred, values, span: atom.span })
}

/// The report for input facts of a predicate that rules define.
fn idb_fact(program: &Program, pred: PredId, span: Span, code: Code) -> Diagnostic {
    let head = program.rules_for(pred).next().map_or(program.pred(pred).span, |(_, rule)| rule.head.span);
    if code == Code::EDB_HEADS_RULE {
        return IrError::EdbHeadsRule { pred, fact: span, head }.to_diagnostic(program);
    }
    let name = program.pred_name(pred);
    Diagnostic::error(code, format!("`{name}` is derived by rules and cannot be updated directly"))
        .with_primary(span, "update of a derived predicate")
        .with_secondary(head, "defined by this rule")
}

/// Reads a facts file of ground atoms `E(a,b).`, one per line; `%`/`//` comments and
/// blank lines are allowed.
pub fn parse_fact_atoms(src: &str, file: FileId, program: &mut Program) -> (Vec<Fact>, Vec<Diagnostic>) {
    let mut facts = Vec::new();
    let diagnostics = read_fact_atoms(src, file, program, &mut facts);
    (facts, diagnostics)
}

/// What the facts readers hand each fact to, in file order, as soon as it is read: a
/// caller that stores facts its own way (dlc keeps them flat, per predicate) need not
/// build a [`Fact`] with a `Vec` of its own for each of millions of lines.
pub trait FactSink {
    fn fact(&mut self, pred: PredId, values: &[Const], span: Span);
}

/// Collects whole facts, as [`parse_fact_atoms`] and [`parse_delimited_facts`] return them.
impl FactSink for Vec<Fact> {
    fn fact(&mut self, pred: PredId, values: &[Const], span: Span) {
        self.push(Fact { pred, values: values.to_vec(), span });
    }
}

/// [`parse_fact_atoms`], handing each fact to `sink` instead of returning them.
pub fn read_fact_atoms(src: &str, file: FileId, program: &mut Program, sink: &mut dyn FactSink) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for (start, line) in lines(src) {
        let tokens = lex_line(line, start);
        if tokens.is_empty() {
            continue;
        }
        let (atom, errors) = run(fact_line(file), &tokens, start + line.len(), file, Code::BAD_FACTS_LINE);
        diagnostics.extend(errors);
        if let Some(atom) = atom {
            match input_fact(program, &atom, Code::EDB_HEADS_RULE) {
                Ok(fact) => sink.fact(fact.pred, &fact.values, fact.span),
                Err(errors) => diagnostics.extend(errors),
            }
        }
    }
    diagnostics
}

/// Reads one delimited facts file for `pred_name` (`<Pred>.facts`/`.tsv` with `'\t'`,
/// `<Pred>.csv` with `','`), as Soufflé writes them: one tuple per line, fields unquoted
/// and taken verbatim (only a trailing `\r` is removed).
///
/// Blank lines are skipped. A zero-arity predicate's only tuple `()` is written as a line
/// holding exactly `()` (as Soufflé prints nullary relations), so an empty file means "no
/// tuple". Every line must have the same number of fields, equal to the arity when the
/// predicate is already known; otherwise E0013 at that line. An unknown predicate is
/// declared EDB with the arity of the first line.
pub fn parse_delimited_facts(
    src: &str,
    file: FileId,
    pred_name: &str,
    separator: char,
    program: &mut Program,
) -> (Vec<Fact>, Vec<Diagnostic>) {
    let mut facts = Vec::new();
    let diagnostics = read_delimited_facts(src, file, pred_name, separator, program, &mut facts);
    (facts, diagnostics)
}

/// [`parse_delimited_facts`], handing each fact to `sink` instead of returning them.
pub fn read_delimited_facts(
    src: &str,
    file: FileId,
    pred_name: &str,
    separator: char,
    program: &mut Program,
    sink: &mut dyn FactSink,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    if pred_name.starts_with('@') {
        diagnostics.push(reserved_name(pred_name, Span::new(file, 0..0)));
        return diagnostics;
    }
    let mut pred = program.lookup_source(pred_name);
    // Reused from line to line: a file of a million lines is then not a million
    // allocations of fields and values.
    let mut fields: Vec<&str> = Vec::new();
    let mut values: Vec<Const> = Vec::new();
    for (start, line) in lines(src) {
        if line.trim().is_empty() {
            continue;
        }
        let span = Span::new(file, start..start + line.len());
        fields.clear();
        if line != "()" {
            split_fields(line, separator, &mut fields);
        }
        let id = *pred.get_or_insert_with(|| {
            let name = PredName::Source(program.symbols.intern(pred_name));
            program.declare_pred(name, fields.len(), PredKind::Edb, span)
        });
        if program.pred(id).kind == PredKind::Idb {
            diagnostics.push(idb_fact(program, id, span, Code::EDB_HEADS_RULE));
            break;
        }
        let arity = program.pred(id).arity;
        if fields.len() != arity {
            diagnostics.push(
                Diagnostic::error(
                    Code::BAD_FACTS_LINE,
                    format!("this line has {} field(s), but `{pred_name}` has arity {arity}", fields.len()),
                )
                .with_primary(span, format!("{} field(s)", fields.len())),
            );
            continue;
        }
        values.clear();
        values.extend(fields.iter().map(|f| program.consts.intern(f)));
        sink.fact(id, &values, span);
    }
    diagnostics
}

/// Reads update batches: lines `+E(a,b).` (insert) and `-E(a,b).` (delete). A blank line
/// or a line `;` ends a batch; lines holding only a comment are ignored and do not.
/// Unknown predicates are declared EDB (they have no facts yet).
pub fn parse_updates(src: &str, file: FileId, program: &mut Program) -> (Vec<UpdateBatch>, Vec<Diagnostic>) {
    let mut batches = Vec::new();
    let mut current: Option<UpdateBatch> = None;
    let mut diagnostics = Vec::new();
    for (start, line) in lines(src) {
        let tokens = lex_line(line, start);
        let ends_batch = match tokens.as_slice() {
            [] => line.trim().is_empty(),
            [(Token::Semicolon, _)] => true,
            _ => false,
        };
        if ends_batch {
            batches.extend(current.take());
            continue;
        }
        if tokens.is_empty() {
            continue;
        }
        let span = Span::new(file, start..start + line.len());
        let batch = current.get_or_insert_with(|| UpdateBatch { inserts: Vec::new(), deletes: Vec::new(), span });
        batch.span = batch.span.to(span);
        let (update, errors) = run(update_line(file), &tokens, start + line.len(), file, Code::BAD_UPDATE);
        diagnostics.extend(errors);
        let Some((sign, atom)) = update else { continue };
        match input_fact(program, &atom, Code::UPDATE_IDB) {
            Ok(fact) => match sign {
                Sign::Insert => batch.inserts.push(fact),
                Sign::Delete => batch.deletes.push(fact),
            },
            Err(errors) => diagnostics.extend(errors),
        }
    }
    batches.extend(current);
    (batches, diagnostics)
}

/// Reads one update atom given on the command line, e.g. `E(a,b)` for `--insert`.
pub fn parse_update_atom(src: &str, file: FileId, program: &mut Program) -> (Option<Fact>, Vec<Diagnostic>) {
    let tokens: Vec<Spanned<'_>> = lex(src).into_iter().filter(|(t, _)| *t != Token::Newline).collect();
    let (atom, mut diagnostics) = run(fact_line(file), &tokens, src.len(), file, Code::BAD_UPDATE);
    let Some(atom) = atom else { return (None, diagnostics) };
    match input_fact(program, &atom, Code::UPDATE_IDB) {
        Ok(fact) => (Some(fact), diagnostics),
        Err(errors) => {
            diagnostics.extend(errors);
            (None, diagnostics)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: FileId = FileId(3);

    /// A program where `R` is IDB (arity 2) and `E` is EDB (arity 2).
    fn program() -> Program {
        crate::parse_program("R(X,Y) <- E(X,Y)\n", FileId(0)).0.expect("valid program")
    }

    fn show(program: &Program, facts: &[Fact]) -> Vec<String> {
        facts
            .iter()
            .map(|f| {
                let values: Vec<u32> = f.values.iter().map(|c| c.0).collect();
                format!("{}{}", program.pred_name(f.pred), ir::DisplayTuple(program, &values))
            })
            .collect()
    }

    fn codes_and_texts<'a>(src: &'a str, diagnostics: &[Diagnostic]) -> Vec<(&'static str, &'a str)> {
        diagnostics.iter().map(|d| (d.code.0, &src[d.primary_span().expect("has a span").range()])).collect()
    }

    #[test]
    fn fact_atoms_are_read_and_new_predicates_declared_edb() {
        let mut p = program();
        let src = "% edges\nE(a,b).\n\nE(b, \"c d\")  // no dot\r\nN(7).\nZ()\n";
        let (facts, diagnostics) = parse_fact_atoms(src, FILE, &mut p);
        assert!(diagnostics.is_empty(), "{diagnostics:#?}");
        assert_eq!(show(&p, &facts), ["E(a,b)", r#"E(b,"c d")"#, "N(7)", "Z()"]);
        let n = p.lookup_source("N").unwrap();
        assert_eq!((p.pred(n).kind, p.pred(n).arity), (PredKind::Edb, 1));
        assert_eq!(&src[facts[0].span.range()], "E(a,b)");
        assert_eq!(facts[0].span.file, FILE);
        // `a` in a facts file is the same constant as `a` in the program.
        assert_eq!(p.consts.get("a"), Some(facts[0].values[0]));
    }

    #[test]
    fn fact_atom_errors_are_all_reported() {
        let mut p = program();
        let src = "E(a,b)) \nR(a,b).\nE(a).\nE(a,X).\n<- E(a)\nN(a).\nN(a,b).\n@x(a).\n";
        let (facts, diagnostics) = parse_fact_atoms(src, FILE, &mut p);
        assert_eq!(show(&p, &facts), ["N(a)"]);
        assert_eq!(
            codes_and_texts(src, &diagnostics),
            [
                ("E0013", ")"),
                ("E0005", "R(a,b)"),
                ("E0004", "E(a)"),
                ("E0011", "X"),
                ("E0013", "<-"),
                ("E0004", "N(a,b)"),
                ("E0002", "@x"),
            ]
        );
    }

    #[test]
    fn delimited_fields_are_taken_verbatim() {
        let mut p = program();
        let (facts, diagnostics) = parse_delimited_facts("a\tb\nb\tc d\r\n\n", FILE, "E", '\t', &mut p);
        assert!(diagnostics.is_empty());
        assert_eq!(show(&p, &facts), ["E(a,b)", r#"E(b,"c d")"#]);
        let (facts, diagnostics) = parse_delimited_facts("1,x\n2,\"y\"\n", FILE, "New", ',', &mut p);
        assert!(diagnostics.is_empty());
        assert_eq!(show(&p, &facts), ["New(1,x)", r#"New(2,"\"y\"")"#]);
        let new = p.lookup_source("New").unwrap();
        assert_eq!((p.pred(new).kind, p.pred(new).arity), (PredKind::Edb, 2));
    }

    #[test]
    fn fields_split_as_str_split_does() {
        let mut fields = Vec::new();
        for line in ["", "a", "a,b", ",", "a,,b,", "ü,é€,x", "tab\there,and,ü"] {
            for separator in [',', '\t', 'é', '€'] {
                fields.clear();
                split_fields(line, separator, &mut fields);
                assert_eq!(fields, line.split(separator).collect::<Vec<_>>(), "{line:?} at {separator:?}");
            }
        }
    }

    #[test]
    fn delimited_facts_stream_into_a_sink_in_file_order() {
        struct Rows(Vec<(PredId, Vec<u32>, Span)>);
        impl FactSink for Rows {
            fn fact(&mut self, pred: PredId, values: &[Const], span: Span) {
                self.0.push((pred, values.iter().map(|c| c.0).collect(), span));
            }
        }
        let src = "a\tb\nx\n\nb\ta\n";
        let mut p = program();
        let (facts, diagnostics) = parse_delimited_facts(src, FILE, "E", '\t', &mut p);
        let mut rows = Rows(Vec::new());
        let streamed = read_delimited_facts(src, FILE, "E", '\t', &mut program(), &mut rows);
        assert_eq!(streamed, diagnostics);
        let expected: Vec<_> = facts.iter().map(|f| (f.pred, f.values.iter().map(|c| c.0).collect(), f.span)).collect();
        assert_eq!(rows.0, expected);
        assert_eq!(show(&p, &facts), ["E(a,b)", "E(b,a)"]);
    }

    #[test]
    fn zero_arity_tuple_is_written_as_parentheses() {
        let mut p = program();
        let (facts, diagnostics) = parse_delimited_facts("()\n", FILE, "Flag", ',', &mut p);
        assert!(diagnostics.is_empty());
        assert_eq!(show(&p, &facts), ["Flag()"]);
        let (facts, diagnostics) = parse_delimited_facts("\n", FILE, "Off", ',', &mut p);
        assert!(facts.is_empty() && diagnostics.is_empty());
    }

    #[test]
    fn delimited_field_count_errors() {
        let mut p = program();
        let src = "a\tb\nc\nd\te\tf\ng\th\n";
        let (facts, diagnostics) = parse_delimited_facts(src, FILE, "E", '\t', &mut p);
        assert_eq!(show(&p, &facts), ["E(a,b)", "E(g,h)"]);
        assert_eq!(codes_and_texts(src, &diagnostics), [("E0013", "c"), ("E0013", "d\te\tf")]);
        // For an unknown predicate the first line sets the arity.
        let src = "a,b\nc\n";
        let (_, diagnostics) = parse_delimited_facts(src, FILE, "New", ',', &mut p);
        assert_eq!(codes_and_texts(src, &diagnostics), [("E0013", "c")]);
        let (_, diagnostics) = parse_delimited_facts("a,b\n", FILE, "R", ',', &mut p);
        assert_eq!(diagnostics[0].code, Code::EDB_HEADS_RULE);
        let (_, diagnostics) = parse_delimited_facts("a\n", FILE, "@m:R^b", ',', &mut p);
        assert_eq!(diagnostics[0].code, Code::RESERVED_NAME);
    }

    #[test]
    fn updates_are_split_into_batches() {
        let mut p = program();
        let src = "+E(a,b).\n-E(b,c)\n% only a comment\n+E(c,d).\n\n  \n-E(a,b).\n;\n;\n+F(x).\n";
        let (batches, diagnostics) = parse_updates(src, FILE, &mut p);
        assert!(diagnostics.is_empty(), "{diagnostics:#?}");
        let summary: Vec<(Vec<String>, Vec<String>, &str)> =
            batches.iter().map(|b| (show(&p, &b.inserts), show(&p, &b.deletes), &src[b.span.range()])).collect();
        assert_eq!(
            summary,
            [
                (
                    vec!["E(a,b)".into(), "E(c,d)".into()],
                    vec!["E(b,c)".into()],
                    "+E(a,b).\n-E(b,c)\n% only a comment\n+E(c,d)."
                ),
                (vec![], vec!["E(a,b)".into()], "-E(a,b)."),
                (vec!["F(x)".into()], vec![], "+F(x)."),
            ]
        );
        let f = p.lookup_source("F").unwrap();
        assert_eq!(p.pred(f).kind, PredKind::Edb);
    }

    #[test]
    fn update_errors_are_all_reported() {
        let mut p = program();
        let src = "E(a,b).\n+R(a,b).\n-E(a).\n+E(a,_).\n+E(a,b)) \n* E(a,b)\n";
        let (batches, diagnostics) = parse_updates(src, FILE, &mut p);
        assert_eq!(batches.len(), 1);
        assert!(batches[0].inserts.is_empty() && batches[0].deletes.is_empty());
        assert_eq!(
            codes_and_texts(src, &diagnostics),
            [("E0014", "E"), ("E0015", "R(a,b)"), ("E0004", "E(a)"), ("E0011", "_"), ("E0014", ")"), ("E0014", "*")]
        );
        assert_eq!(diagnostics[0].message, "expected `+` or `-`, found `E`");
    }

    #[test]
    fn single_update_atoms() {
        let mut p = program();
        for src in ["E(a,b)", "E(a, b).", " E(a,b)\n"] {
            let (fact, diagnostics) = parse_update_atom(src, FILE, &mut p);
            assert!(diagnostics.is_empty());
            assert_eq!(show(&p, &[fact.unwrap()]), ["E(a,b)"]);
        }
        for (src, code, offending) in
            [("R(a,b)", "E0015", "R(a,b)"), ("E(a)", "E0004", "E(a)"), ("E(a,Y)", "E0011", "Y"), ("E(a,b", "E0014", "")]
        {
            let (fact, diagnostics) = parse_update_atom(src, FILE, &mut p);
            assert!(fact.is_none());
            assert_eq!(codes_and_texts(src, &diagnostics), [(code, offending)], "for {src}");
        }
    }
}
