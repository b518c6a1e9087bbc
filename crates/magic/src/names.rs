//! The one place where generated predicates (`@a:p^α`, `@m:p^α`) are named and declared.

use ir::{Adornment, PredId, PredKind, PredName, Program, Span};

/// The answer predicate `@a:p^α` of source predicate `source` called with `adornment`:
/// same arity as the source predicate.
pub(crate) fn declare_answer(out: &mut Program, source: PredId, adornment: &Adornment, span: Span) -> PredId {
    let pred = out.pred(source);
    let name = PredName::Answer(pred.name.base(), adornment.clone());
    let arity = pred.arity;
    out.declare_pred(name, arity, PredKind::Idb, span)
}

/// The demand predicate `@m:p^α`: only the bound columns, so its arity is the number of
/// `b` positions (zero for an all-free adornment).
pub(crate) fn declare_demand(out: &mut Program, source: PredId, adornment: &Adornment, span: Span) -> PredId {
    let name = PredName::Demand(out.pred(source).name.base(), adornment.clone());
    out.declare_pred(name, adornment.bound_count(), PredKind::Idb, span)
}

/// The label of an adorned source predicate in graphs and tables: `R^bf`.
pub(crate) fn adorned_label(program: &Program, source: PredId, adornment: &Adornment) -> String {
    format!("{}^{}", program.pred_name(source), adornment)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::Bf;

    #[test]
    fn generated_names_print_with_prefix_and_adornment() {
        let mut p = Program::new();
        let r = p.symbols.intern("R");
        let source = p.declare_pred(PredName::Source(r), 2, PredKind::Idb, Span::default());
        let bf = Adornment(vec![Bf::Bound, Bf::Free]);
        let answer = declare_answer(&mut p, source, &bf, Span::default());
        let demand = declare_demand(&mut p, source, &bf, Span::default());
        assert_eq!(p.pred_name(answer), "@a:R^bf");
        assert_eq!(p.pred(answer).arity, 2);
        assert_eq!(p.pred_name(demand), "@m:R^bf");
        assert_eq!(p.pred(demand).arity, 1);
        assert_eq!(adorned_label(&p, source, &bf), "R^bf");
        // Declaring again returns the same predicate instead of a duplicate.
        assert_eq!(declare_demand(&mut p, source, &bf, Span::default()), demand);
    }
}
