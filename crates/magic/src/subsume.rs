//! Adornment subsumption: which adorned predicate serves a call when the rewrite may
//! reuse one adornment of a predicate for calls with more bound positions.
//!
//! A call `p^β` may be answered from `p^γ` whenever every bound position of `γ` is bound
//! in `β`: `@a:p^γ` holds every tuple of `p` whose `γ` columns were demanded, and the
//! call's remaining bound arguments are joined like any bound variable. Computing one
//! copy instead of two saves the second derivation (`pt^bb` beside `pt^bf`), and an
//! all-free `p^ff` serves every call of `p`.

use ir::{Adornment, Bf, PredId};
use rustc_hash::FxHashMap;

/// The adornments of the plain rewrite, per predicate, each in discovery order: the
/// candidates that may serve a call.
#[derive(Clone, Debug, Default)]
pub(crate) struct Subsumption {
    candidates: FxHashMap<PredId, Vec<Adornment>>,
}

impl Subsumption {
    /// The table of `adorned`, the adorned predicates of a plain rewrite.
    pub(crate) fn new(adorned: &[(PredId, Adornment)]) -> Self {
        let mut candidates: FxHashMap<PredId, Vec<Adornment>> = FxHashMap::default();
        for (pred, adornment) in adorned {
            candidates.entry(*pred).or_default().push(adornment.clone());
        }
        Subsumption { candidates }
    }

    /// The adornment that serves a call `pred^call`: among the candidates whose bound
    /// positions are all bound in `call`, the one with the fewest bound positions (the
    /// first in discovery order on a tie); `call` itself when no candidate qualifies.
    ///
    /// The fewest, not the most: the served adornment must serve itself, so that
    /// `serve(serve(β)) = serve(β)` and no call is sent on to an adornment that the
    /// rewrite then never expands. A candidate below the chosen one would also be below
    /// `call` and have fewer bound positions, so the chosen one is minimal; taking the
    /// candidate with the most bound positions strictly below `call` would not be (`bb`
    /// to `bf`, then `bf` to `ff`).
    pub(crate) fn serve(&self, pred: PredId, call: &Adornment) -> Adornment {
        let Some(candidates) = self.candidates.get(&pred) else { return call.clone() };
        candidates
            .iter()
            .filter(|candidate| within(candidate, call))
            .min_by_key(|candidate| candidate.bound_count())
            .cloned()
            .unwrap_or_else(|| call.clone())
    }
}

/// Whether every bound position of `inner` is bound in `outer` (equal lengths).
fn within(inner: &Adornment, outer: &Adornment) -> bool {
    inner.0.len() == outer.0.len() && inner.0.iter().zip(&outer.0).all(|(i, o)| *i == Bf::Free || *o == Bf::Bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ad(text: &str) -> Adornment {
        Adornment::parse(text).unwrap()
    }

    #[test]
    fn a_call_is_served_by_the_least_bound_candidate_under_it() {
        let (p, q) = (PredId(0), PredId(1));
        let table = Subsumption::new(&[(p, ad("bf")), (p, ad("bb")), (p, ad("fb")), (q, ad("bb"))]);
        assert_eq!(table.serve(p, &ad("bb")), ad("bf"), "bf and fb tie; bf was found first");
        assert_eq!(table.serve(p, &ad("bf")), ad("bf"));
        assert_eq!(table.serve(p, &ad("fb")), ad("fb"));
        // No candidate under `ff`: a call is never served by more bound positions.
        assert_eq!(table.serve(p, &ad("ff")), ad("ff"));
        assert_eq!(table.serve(q, &ad("bb")), ad("bb"));
        assert_eq!(table.serve(PredId(2), &ad("bf")), ad("bf"));
    }

    #[test]
    fn serving_is_idempotent() {
        let p = PredId(0);
        let all = ["fff", "bff", "fbf", "ffb", "bbf", "bfb", "fbb", "bbb"];
        let some = [&all[1..], &all[3..], &["bbf", "bbb", "fbf"][..]];
        for candidates in some {
            let table = Subsumption::new(&candidates.iter().map(|a| (p, ad(a))).collect::<Vec<_>>());
            for call in all {
                let served = table.serve(p, &ad(call));
                assert!(within(&served, &ad(call)), "{call} served by {served}");
                assert_eq!(table.serve(p, &served), served, "{call} served by {served}");
            }
        }
    }
}
