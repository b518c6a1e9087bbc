//! The Rust peers of the published comparison computing the same closure relation `R` as dlc: datafrog
//! with hand-written joins, ascent and crepe with macro-compiled rules, one program per
//! rule form so that each peer evaluates the rules exactly as written.

use crate::workload::Rules;
use std::any::Any;
use std::fmt;

/// A system dlc is compared against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    Datafrog,
    Ascent,
    Crepe,
}

impl Peer {
    pub const ALL: [Peer; 3] = [Peer::Datafrog, Peer::Ascent, Peer::Crepe];

    pub fn name(self) -> &'static str {
        match self {
            Peer::Datafrog => "datafrog",
            Peer::Ascent => "ascent",
            Peer::Crepe => "crepe",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Peer::ALL.into_iter().find(|p| p.name() == text)
    }
}

impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A computed closure: its size, and the peer's own result structure kept alive so that
/// freeing it is not part of the measured time (dlc's database is dropped after the clock
/// stops too).
pub struct Closure {
    pub len: usize,
    pub keep: Box<dyn Any>,
}

/// Whether the peers are compiled in: the `peers` feature, which `cargo xtask bench`
/// enables and a plain `cargo test --workspace` leaves off.
pub const COMPILED: bool = cfg!(feature = "peers");

/// Computes the full closure `R` of `edges` with `peer`, from the edge list to the
/// finished relation: building the peer's input relations is part of the work. `None`
/// when the peers are not compiled in ([`COMPILED`]).
pub fn closure(peer: Peer, rules: Rules, edges: &[(u32, u32)]) -> Option<Closure> {
    #[cfg(feature = "peers")]
    return Some(match peer {
        Peer::Datafrog => frog::closure(rules, edges),
        Peer::Ascent => asc::closure(rules, edges),
        Peer::Crepe => crp::closure(rules, edges),
    });
    #[cfg(not(feature = "peers"))]
    {
        let _ = (peer, rules, edges);
        None
    }
}

/// The standard datafrog transitive closure: a `Variable` per join orientation and
/// `from_join` against the (static) edge `Relation`.
#[cfg(feature = "peers")]
mod frog {
    use super::Closure;
    use crate::workload::Rules;
    use datafrog::{Iteration, Relation};

    pub fn closure(rules: Rules, edges: &[(u32, u32)]) -> Closure {
        let mut iteration = Iteration::new();
        let result = match rules {
            Rules::Rlin => {
                // R(X,Z) <- E(X,Y), R(Y,Z): R keyed by its first column, E by its second.
                let edges_by_dst: Relation<(u32, u32)> = edges.iter().map(|&(x, y)| (y, x)).collect();
                let tc = iteration.variable::<(u32, u32)>("tc");
                tc.extend(edges.iter().copied());
                while iteration.changed() {
                    tc.from_join(&tc, &edges_by_dst, |_y, &z, &x| (x, z));
                }
                tc.complete()
            }
            Rules::Llin => {
                // R(X,Z) <- R(X,Y), E(Y,Z): R is stored reversed, (Y,X), to be keyed by Y.
                let edges: Relation<(u32, u32)> = edges.iter().copied().collect();
                let tc_rev = iteration.variable::<(u32, u32)>("tc_rev");
                tc_rev.extend(edges.iter().map(|&(x, y)| (y, x)));
                while iteration.changed() {
                    tc_rev.from_join(&tc_rev, &edges, |_y, &x, &z| (z, x));
                }
                tc_rev.complete()
            }
            Rules::NonLinear => {
                // R(X,Z) <- R(X,Y), R(Y,Z): both orientations of R are needed, and each is
                // derived from the same join.
                let tc = iteration.variable::<(u32, u32)>("tc");
                let tc_rev = iteration.variable::<(u32, u32)>("tc_rev");
                tc.extend(edges.iter().copied());
                tc_rev.extend(edges.iter().map(|&(x, y)| (y, x)));
                while iteration.changed() {
                    tc.from_join(&tc_rev, &tc, |_y, &x, &z| (x, z));
                    tc_rev.from_join(&tc_rev, &tc, |_y, &x, &z| (z, x));
                }
                drop(tc_rev.complete());
                tc.complete()
            }
        };
        Closure { len: result.len(), keep: Box::new(result) }
    }
}

#[cfg(feature = "peers")]
mod asc {
    use super::Closure;
    use crate::workload::Rules;
    use ascent::ascent;

    ascent! {
        struct Rlin;
        relation edge(u32, u32);
        relation tc(u32, u32);
        tc(x, y) <-- edge(x, y);
        tc(x, z) <-- edge(x, y), tc(y, z);
    }

    ascent! {
        struct Llin;
        relation edge(u32, u32);
        relation tc(u32, u32);
        tc(x, y) <-- edge(x, y);
        tc(x, z) <-- tc(x, y), edge(y, z);
    }

    ascent! {
        struct NonLinear;
        relation edge(u32, u32);
        relation tc(u32, u32);
        tc(x, y) <-- edge(x, y);
        tc(x, z) <-- tc(x, y), tc(y, z);
    }

    pub fn closure(rules: Rules, edges: &[(u32, u32)]) -> Closure {
        match rules {
            Rules::Rlin => {
                let mut p = Rlin { edge: edges.to_vec(), ..Default::default() };
                p.run();
                Closure { len: p.tc.len(), keep: Box::new(p) }
            }
            Rules::Llin => {
                let mut p = Llin { edge: edges.to_vec(), ..Default::default() };
                p.run();
                Closure { len: p.tc.len(), keep: Box::new(p) }
            }
            Rules::NonLinear => {
                let mut p = NonLinear { edge: edges.to_vec(), ..Default::default() };
                p.run();
                Closure { len: p.tc.len(), keep: Box::new(p) }
            }
        }
    }
}

#[cfg(feature = "peers")]
mod crp {
    use super::Closure;
    use crate::workload::Rules;

    // Each `crepe!` expands to a `Crepe` runtime struct, so every program gets a module.
    mod rlin {
        use crepe::crepe;
        crepe! {
            @input
            pub struct Edge(pub u32, pub u32);
            @output
            pub struct Tc(pub u32, pub u32);
            Tc(x, y) <- Edge(x, y);
            Tc(x, z) <- Edge(x, y), Tc(y, z);
        }
    }

    mod llin {
        use crepe::crepe;
        crepe! {
            @input
            pub struct Edge(pub u32, pub u32);
            @output
            pub struct Tc(pub u32, pub u32);
            Tc(x, y) <- Edge(x, y);
            Tc(x, z) <- Tc(x, y), Edge(y, z);
        }
    }

    mod nonlinear {
        use crepe::crepe;
        crepe! {
            @input
            pub struct Edge(pub u32, pub u32);
            @output
            pub struct Tc(pub u32, pub u32);
            Tc(x, y) <- Edge(x, y);
            Tc(x, z) <- Tc(x, y), Tc(y, z);
        }
    }

    /// Runs one of the programs above (the `crepe!` types of each are its own).
    macro_rules! run {
        ($program:ident, $edges:expr) => {{
            let mut runtime = $program::Crepe::new();
            runtime.extend($edges.iter().map(|&(x, y)| $program::Edge(x, y)));
            let (tc,) = runtime.run();
            Closure { len: tc.len(), keep: Box::new(tc) }
        }};
    }

    pub fn closure(rules: Rules, edges: &[(u32, u32)]) -> Closure {
        match rules {
            Rules::Rlin => run!(rlin, edges),
            Rules::Llin => run!(llin, edges),
            Rules::NonLinear => run!(nonlinear, edges),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Graph;

    #[test]
    fn every_peer_closes_a_small_chain() {
        let edges = Graph::Chain { nodes: 30 }.edges();
        for peer in Peer::ALL {
            for rules in Rules::ALL {
                let computed = closure(peer, rules, &edges).map(|c| c.len);
                let expected = COMPILED.then_some(30 * 29 / 2);
                assert_eq!(computed, expected, "{peer} {}", rules.name());
            }
        }
    }
}
