//! Workload generators: the graphs of the published comparison plus a grid, a forest, same-generation on a
//! tree and Andersen-style points-to, each with its rules as Datalog text and its EDB as
//! plain `u32` rows.
//!
//! A workload is named by a spec string (`tc-rlin:random:2000:10000:42`) so that the
//! harness can hand it to a child process on the command line and the child regenerates
//! exactly the same facts from the seed.

use crate::rng::SplitMix64;
use std::collections::HashSet;
use std::fmt::{self, Write as _};

/// The three ways of writing transitive closure that the published comparison measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rules {
    /// `R(X,Z) <- E(X,Y), R(Y,Z)`
    Rlin,
    /// `R(X,Z) <- R(X,Y), E(Y,Z)`
    Llin,
    /// `R(X,Z) <- R(X,Y), R(Y,Z)`
    NonLinear,
}

impl Rules {
    pub const ALL: [Rules; 3] = [Rules::Rlin, Rules::Llin, Rules::NonLinear];

    pub fn name(self) -> &'static str {
        match self {
            Rules::Rlin => "rlin",
            Rules::Llin => "llin",
            Rules::NonLinear => "nonlin",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        Rules::ALL.into_iter().find(|r| r.name() == text)
    }

    /// The recursive rule; every form also has the base rule `R(X,Y) <- E(X,Y)`.
    pub fn recursive_rule(self) -> &'static str {
        match self {
            Rules::Rlin => "R(X,Z) <- E(X,Y), R(Y,Z).",
            Rules::Llin => "R(X,Z) <- R(X,Y), E(Y,Z).",
            Rules::NonLinear => "R(X,Z) <- R(X,Y), R(Y,Z).",
        }
    }
}

/// The edge relations the closure is taken over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Graph {
    /// `edges` distinct directed edges between uniformly drawn endpoints, no self-loops.
    Random { nodes: u32, edges: u32, seed: u64 },
    /// `0 → 1 → … → nodes-1`.
    Chain { nodes: u32 },
    /// A `width × height` grid with edges to the right and downwards; node `r*width + c`.
    Grid { width: u32, height: u32 },
    /// `trees` disjoint random recursive trees of `size` nodes each, edges parent → child;
    /// tree `t` holds nodes `t*size ..`, with its root first.
    Forest { trees: u32, size: u32, seed: u64 },
    /// `count` disjoint chains of `len` nodes: the forest with the deepest components.
    Paths { count: u32, len: u32 },
}

impl Graph {
    pub fn nodes(self) -> u32 {
        match self {
            Graph::Random { nodes, .. } | Graph::Chain { nodes } => nodes,
            Graph::Grid { width, height } => width * height,
            Graph::Forest { trees, size, .. } => trees * size,
            Graph::Paths { count, len } => count * len,
        }
    }

    /// The edges in generation order.
    pub fn edges(self) -> Vec<(u32, u32)> {
        match self {
            Graph::Random { nodes, edges, seed } => random_edges(nodes, edges, seed),
            Graph::Chain { nodes } => (1..nodes).map(|v| (v - 1, v)).collect(),
            Graph::Grid { width, height } => {
                let mut out = Vec::new();
                for r in 0..height {
                    for c in 0..width {
                        let v = r * width + c;
                        if c + 1 < width {
                            out.push((v, v + 1));
                        }
                        if r + 1 < height {
                            out.push((v, v + width));
                        }
                    }
                }
                out
            }
            Graph::Forest { trees, size, seed } => {
                let mut rng = SplitMix64::new(seed);
                let mut out = Vec::new();
                for t in 0..trees {
                    let base = t * size;
                    for i in 1..size {
                        out.push((base + rng.below(i), base + i));
                    }
                }
                out
            }
            Graph::Paths { count, len } => {
                (0..count).flat_map(|p| (1..len).map(move |i| (p * len + i - 1, p * len + i))).collect()
            }
        }
    }

    /// A short human-readable name for tables.
    pub fn label(self) -> String {
        match self {
            Graph::Random { nodes: 2000, edges: 10000, seed: 42 } => "random".to_string(),
            Graph::Random { nodes, edges, .. } if edges == 5 * nodes => format!("random{nodes}"),
            Graph::Random { nodes, edges, .. } => format!("random{nodes}/{edges}"),
            Graph::Chain { nodes } => format!("chain{nodes}"),
            Graph::Grid { width, height } => format!("grid{width}x{height}"),
            Graph::Forest { trees, size, .. } => format!("forest{trees}x{size}"),
            Graph::Paths { count, len } => format!("paths{count}x{len}"),
        }
    }

    fn parse(parts: &[&str]) -> Option<Self> {
        let num = |i: usize| parts.get(i).and_then(|p| p.parse::<u32>().ok());
        let seed = |i: usize| parts.get(i).and_then(|p| p.parse::<u64>().ok());
        match parts.first().copied()? {
            "random" if parts.len() == 4 => Some(Graph::Random { nodes: num(1)?, edges: num(2)?, seed: seed(3)? }),
            "chain" if parts.len() == 2 => Some(Graph::Chain { nodes: num(1)? }),
            "grid" if parts.len() == 3 => Some(Graph::Grid { width: num(1)?, height: num(2)? }),
            "forest" if parts.len() == 4 => Some(Graph::Forest { trees: num(1)?, size: num(2)?, seed: seed(3)? }),
            "paths" if parts.len() == 3 => Some(Graph::Paths { count: num(1)?, len: num(2)? }),
            _ => None,
        }
    }
}

impl fmt::Display for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Graph::Random { nodes, edges, seed } => write!(f, "random:{nodes}:{edges}:{seed}"),
            Graph::Chain { nodes } => write!(f, "chain:{nodes}"),
            Graph::Grid { width, height } => write!(f, "grid:{width}:{height}"),
            Graph::Forest { trees, size, seed } => write!(f, "forest:{trees}:{size}:{seed}"),
            Graph::Paths { count, len } => write!(f, "paths:{count}:{len}"),
        }
    }
}

/// Draws `(u, v)` pairs until `edges` distinct ones without self-loops exist, the usual
/// reading of "n nodes / m distinct directed edges".
fn random_edges(nodes: u32, edges: u32, seed: u64) -> Vec<(u32, u32)> {
    let possible = u64::from(nodes) * u64::from(nodes.saturating_sub(1));
    assert!(u64::from(edges) <= possible, "{edges} distinct edges do not fit in {nodes} nodes");
    let mut rng = SplitMix64::new(seed);
    let mut seen = HashSet::with_capacity(edges as usize);
    let mut out = Vec::with_capacity(edges as usize);
    while out.len() < edges as usize {
        let (u, v) = (rng.below(nodes), rng.below(nodes));
        if u != v && seen.insert((u, v)) {
            out.push((u, v));
        }
    }
    out
}

/// A whole benchmark program: rules plus the EDB generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Workload {
    /// Transitive closure `R` of `E` in one of the three rule forms.
    Tc { rules: Rules, graph: Graph },
    /// Same generation on a complete tree with `fanout` children per node and `depth`
    /// levels below the root; `par(child, parent)`, nodes numbered breadth first.
    SameGen { fanout: u32, depth: u32 },
    /// The pairs of nodes (ends of edges) the first does not reach:
    /// `U(X,Y) <- N(X), N(Y), !R(X,Y)` over the left-linear closure `R` of the graph, a
    /// negation above a recursive relation.
    Unreach { graph: Graph },
    /// Andersen points-to on a random program of `vars` variables with `allocs`
    /// allocation sites (one object each) and as many assignments, loads and stores as
    /// given. Variables are values `0..vars`, objects `vars..vars+allocs`. With `fields`
    /// 0 it is field-insensitive (`load(v,p)`: `v = *p`, `store(p,w)`: `*p = w`, heap
    /// `hpt(b,o)`); otherwise loads and stores go through one of `fields` fields, values
    /// `0..fields` of their own column (`load(v,p,f)`: `v = p.f`, `store(p,f,w)`:
    /// `p.f = w`, heap `hpt(b,f,o)`), which is what analyses of real programs run.
    PointsTo { vars: u32, allocs: u32, fields: u32, assigns: u32, loads: u32, stores: u32, seed: u64 },
    /// A generated program whose size is the point: how compile time grows with it. Its
    /// few input facts are inline; the query is part of the text.
    Program { shape: Shape, size: u32 },
    /// Integer arithmetic: `Hop(X,Y)` when a walk of at most `hops` edges of `E` leads
    /// from X to Y, counted by `H(X,Y,N)` (`N + 1` while `N < hops`).
    Hops { hops: u32, graph: Graph },
    /// An aggregate: `Deg(X,D)`, the out-degree `D = count : E(X, _)` of every node `X`
    /// of the graph (0 for a node with in-edges only).
    Degree { graph: Graph },
    /// An aggregate over arithmetic: `Dist(Y,D)`, the fewest edges `D = min N : H(0,Y,N)`
    /// of a walk from node 0 to `Y`, over the walks of at most `hops` edges of
    /// [`Workload::Hops`].
    MinHops { hops: u32, graph: Graph },
    /// Shortest paths: `Dist(Y,D)`, the least total weight `D` of a path of at least one
    /// edge from node 0 to `Y` over the edges `E(X,Y,W)` of the graph, each weighing
    /// [`edge_weight`]. dlc computes it with a recursive `min`, or with `subsumption` by
    /// Soufflé's subsumptive clause over every candidate distance, the form Soufflé runs
    /// (it refuses the recursive `min`).
    ShortestPath { graph: Graph, subsumption: bool },
    /// Strings as program analyses build them: `methods` methods `M(m, c)` spread over
    /// `classes` classes, each class's qualified name and each method's signature made
    /// with `cat` and `to_string`, package prefixes with `substr` and `strlen`, and
    /// `Hit(m, c)` for the methods whose signature `contains` a pattern.
    Strings { classes: u32, methods: u32 },
    /// A Soufflé project of `parts` files ([`crate::project`]), read through the binary to
    /// its IR: compile time on a program of the size real analyses have.
    Project { parts: u32 },
    /// An ordered-list CRDT (a replicated growable array): `inserts` elements, each
    /// identified by a counter (its insertion's ordinal) and one of four replicas, typed
    /// one after another (each after the one typed before; one in fifty after a random
    /// earlier element, which starts a branch of the list's tree), then, along the list,
    /// runs of 1 to `max_run` consecutive elements removed with visible stretches of 1 to
    /// 19 between them, a run before each stretch with probability one half. The rules
    /// order the list from the tree and `skipBlank`, a recursive relation of four
    /// columns, links each element to the ones up to the next visible element: about
    /// `max_run²/6` tuples per run, the relation that dominates the memory.
    OrderedList { inserts: u32, max_run: u32, seed: u64 },
}

/// The shapes of [`Workload::Program`], each grown by its `size`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// `p_i(X) <- p_{i+1}(X)` for `i < size`, then `p_size(X) <- e(X)`; `?- p0(X)`.
    Chain,
    /// `p_i(X,Y) <- p_{i-1}(X,Z), e(Z,Y)` for `0 < i < size` over `p0(X,Y) <- e(X,Y)`, on
    /// a cycle of three; `?- p_{size-1}(a,Y)`.
    JoinChain,
    /// One rule `p(X0,Xn) <- e(X0,X1), ..., e(X(n-1),Xn)` of `size` atoms; `?- p(a,Y)`.
    Body,
    /// `size` independent rules `p_i(X,Y) <- e(X,Y), f(Y)`; `?- p0(a,Y)`.
    Rules,
    /// `p(X) <- e(X)`, then `size` blank and comment lines, then the fact and the query.
    Blank,
}

impl Shape {
    const ALL: [Shape; 5] = [Shape::Chain, Shape::JoinChain, Shape::Body, Shape::Rules, Shape::Blank];

    pub fn name(self) -> &'static str {
        match self {
            Shape::Chain => "chain",
            Shape::JoinChain => "joinchain",
            Shape::Body => "body",
            Shape::Rules => "rules",
            Shape::Blank => "blank",
        }
    }

    /// What `size` counts, for tables.
    pub fn label(self) -> &'static str {
        match self {
            Shape::Chain => "chain of unary predicates `p_i(X) <- p_{i+1}(X)` (predicates)",
            Shape::JoinChain => "chain `p_i(X,Y) <- p_{i-1}(X,Z), e(Z,Y)` (predicates)",
            Shape::Body => "one rule, a path of `e` atoms (body atoms)",
            Shape::Rules => "independent rules `p_i(X,Y) <- e(X,Y), f(Y)` (rules)",
            Shape::Blank => "blank and comment lines between two statements (lines)",
        }
    }

    /// The whole program text of this shape at `size`, with its facts and query.
    pub fn text(self, size: u32) -> String {
        let mut out = String::new();
        match self {
            Shape::Chain => {
                for i in 0..size {
                    let _ = writeln!(out, "p{i}(X) <- p{}(X)", i + 1);
                }
                let _ = writeln!(out, "p{size}(X) <- e(X)\ne(a). e(b).\n?- p0(X).");
            }
            Shape::JoinChain => {
                out.push_str("p0(X,Y) <- e(X,Y)\n");
                for i in 1..size {
                    let _ = writeln!(out, "p{i}(X,Y) <- p{}(X,Z), e(Z,Y)", i - 1);
                }
                let _ = writeln!(out, "e(a,b). e(b,c). e(c,a).\n?- p{}(a,Y).", size.max(1) - 1);
            }
            Shape::Body => {
                let body: Vec<String> = (0..size).map(|i| format!("e(X{i},X{})", i + 1)).collect();
                let _ = writeln!(out, "p(X0,X{size}) <- {}\ne(a,b). e(b,a).\n?- p(a,Y).", body.join(", "));
            }
            Shape::Rules => {
                for i in 0..size {
                    let _ = writeln!(out, "p{i}(X,Y) <- e(X,Y), f(Y)");
                }
                out.push_str("e(a,b). f(b).\n?- p0(a,Y).\n");
            }
            Shape::Blank => {
                out.push_str("p(X) <- e(X)\n");
                for i in 0..size {
                    out.push_str(if i % 2 == 0 { "\n" } else { "% a comment\n" });
                }
                out.push_str("e(a).\n?- p(X).\n");
            }
        }
        out
    }

    /// The answers of the query of [`Shape::text`].
    pub fn answers(self, size: u32) -> u64 {
        match self {
            Shape::Chain => 2,
            Shape::JoinChain | Shape::Body | Shape::Rules | Shape::Blank => {
                let _ = size;
                1
            }
        }
    }
}

/// One EDB relation as flat rows of `arity` values each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdbRelation {
    pub name: &'static str,
    pub arity: usize,
    pub rows: Vec<u32>,
}

impl EdbRelation {
    pub fn len(&self) -> usize {
        self.rows.len().checked_div(self.arity).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn tuples(&self) -> impl Iterator<Item = &[u32]> + '_ {
        self.rows.chunks_exact(self.arity.max(1))
    }
}

/// The input facts of a workload. Every value is a number in `0..values`; dlc interns it
/// by its decimal text, the peers use it as it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edb {
    pub relations: Vec<EdbRelation>,
    pub values: u32,
}

impl Edb {
    pub fn relation(&self, name: &str) -> Option<&EdbRelation> {
        self.relations.iter().find(|r| r.name == name)
    }

    /// The `E` relation of a closure workload as pairs, the input the peers take.
    pub fn edges(&self) -> Vec<(u32, u32)> {
        self.relation("E").map(|r| r.tuples().map(|t| (t[0], t[1])).collect()).unwrap_or_default()
    }

    pub fn fact_count(&self) -> usize {
        self.relations.iter().map(EdbRelation::len).sum()
    }
}

/// The weight of the edge `x -> y` of [`Workload::ShortestPath`]: 1 to 16, spread by a
/// hash of the two ends so that the shortest path is seldom the one of fewest edges.
pub fn edge_weight(x: u32, y: u32) -> u32 {
    1 + (x.wrapping_mul(2_654_435_761) ^ y.wrapping_mul(40_503)) % 16
}

fn pairs(name: &'static str, pairs: &[(u32, u32)]) -> EdbRelation {
    EdbRelation { name, arity: 2, rows: pairs.iter().flat_map(|&(a, b)| [a, b]).collect() }
}

impl Workload {
    /// Parses the spec [`fmt::Display`] writes.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let parts: Vec<&str> = spec.split(':').collect();
        let num = |i: usize| parts.get(i).and_then(|p| p.parse::<u32>().ok());
        let parsed = match parts.first().copied() {
            Some(kind) if kind.starts_with("tc-") => Rules::parse(&kind[3..])
                .and_then(|rules| Graph::parse(&parts[1..]).map(|graph| Workload::Tc { rules, graph })),
            Some("unreach") => Graph::parse(&parts[1..]).map(|graph| Workload::Unreach { graph }),
            Some("sg") if parts.len() == 3 => {
                num(1).zip(num(2)).map(|(fanout, depth)| Workload::SameGen { fanout, depth })
            }
            Some("pt") if parts.len() == 7 => (|| {
                Some(Workload::PointsTo {
                    vars: num(1)?,
                    allocs: num(2)?,
                    fields: 0,
                    assigns: num(3)?,
                    loads: num(4)?,
                    stores: num(5)?,
                    seed: parts[6].parse().ok()?,
                })
            })(),
            Some("degree") => Graph::parse(&parts[1..]).map(|graph| Workload::Degree { graph }),
            Some("sssp") => Graph::parse(&parts[1..]).map(|graph| Workload::ShortestPath { graph, subsumption: false }),
            Some("sssp-subsumption") => {
                Graph::parse(&parts[1..]).map(|graph| Workload::ShortestPath { graph, subsumption: true })
            }
            Some("minhops") if parts.len() > 2 => {
                num(1).zip(Graph::parse(&parts[2..])).map(|(hops, graph)| Workload::MinHops { hops, graph })
            }
            Some("hops") if parts.len() > 2 => {
                num(1).zip(Graph::parse(&parts[2..])).map(|(hops, graph)| Workload::Hops { hops, graph })
            }
            Some("ptf") if parts.len() == 8 => (|| {
                Some(Workload::PointsTo {
                    vars: num(1)?,
                    allocs: num(2)?,
                    fields: num(3).filter(|&f| f > 0)?,
                    assigns: num(4)?,
                    loads: num(5)?,
                    stores: num(6)?,
                    seed: parts[7].parse().ok()?,
                })
            })(),
            Some("project") if parts.len() == 2 => num(1).map(|parts| Workload::Project { parts }),
            Some("strings") if parts.len() == 3 => {
                num(1).zip(num(2)).map(|(classes, methods)| Workload::Strings { classes, methods })
            }
            Some("list") if parts.len() == 4 => {
                (|| Some(Workload::OrderedList { inserts: num(1)?, max_run: num(2)?, seed: parts[3].parse().ok()? }))()
            }
            Some(kind) if kind.starts_with("prog-") && parts.len() == 2 => Shape::ALL
                .into_iter()
                .find(|shape| shape.name() == &kind[5..])
                .zip(num(1))
                .map(|(shape, size)| Workload::Program { shape, size }),
            _ => None,
        };
        parsed.ok_or_else(|| format!("not a workload spec: `{spec}`"))
    }

    /// A short name for tables: `random, rlin`.
    pub fn label(&self) -> String {
        match *self {
            Workload::Tc { rules, graph } => format!("{}, {}", graph.label(), rules.name()),
            Workload::Unreach { graph } => format!("{}, unreach", graph.label()),
            Workload::SameGen { fanout, depth } => format!("same-generation, tree {fanout}^{depth}"),
            Workload::PointsTo { vars, fields: 0, .. } => format!("points-to, {vars} variables"),
            Workload::PointsTo { vars, fields, .. } => format!("points-to, {vars} variables, {fields} fields"),
            Workload::Program { shape, size } => format!("{}, {size}", shape.name()),
            Workload::Hops { hops, graph } => format!("{}, at most {hops} hops", graph.label()),
            Workload::Degree { graph } => format!("{}, degree count", graph.label()),
            Workload::MinHops { hops, graph } => format!("{}, min of at most {hops} hops", graph.label()),
            Workload::ShortestPath { graph, subsumption: false } => {
                format!("{}, shortest paths by recursive min", graph.label())
            }
            Workload::ShortestPath { graph, subsumption: true } => {
                format!("{}, shortest paths by subsumption", graph.label())
            }
            Workload::Strings { classes, methods } => format!("strings, {classes} classes, {methods} methods"),
            Workload::Project { parts } => format!("Soufflé project, {parts} files"),
            Workload::OrderedList { inserts, max_run, .. } => {
                format!("ordered list, {inserts} inserts, removed runs of at most {max_run}")
            }
        }
    }

    /// Whether Soufflé runs the workload's program: not a recursive `min`, which it
    /// refuses ("unable to stratify").
    pub fn souffle_runs(&self) -> bool {
        !matches!(self, Workload::ShortestPath { subsumption: false, .. })
    }

    /// The predicate queries ask about.
    pub fn query_pred(&self) -> &'static str {
        match self {
            Workload::Tc { .. } => "R",
            Workload::Unreach { .. } => "U",
            Workload::SameGen { .. } => "sg",
            Workload::PointsTo { .. } => "pt",
            Workload::Program { .. } => "p",
            Workload::Hops { .. } => "Hop",
            Workload::Degree { .. } => "Deg",
            Workload::MinHops { .. } | Workload::ShortestPath { .. } => "Dist",
            Workload::Strings { .. } => "Hit",
            Workload::Project { .. } => "p0_0",
            Workload::OrderedList { .. } => "nextVisible",
        }
    }

    /// The input relations [`Workload::generate`] makes, with their arities, in its order.
    pub fn inputs(&self) -> Vec<(&'static str, usize)> {
        match *self {
            Workload::Tc { .. }
            | Workload::Unreach { .. }
            | Workload::Hops { .. }
            | Workload::Degree { .. }
            | Workload::MinHops { .. } => vec![("E", 2)],
            Workload::ShortestPath { .. } => vec![("E", 3)],
            Workload::SameGen { .. } => vec![("par", 2)],
            Workload::Strings { .. } => vec![("M", 2)],
            Workload::PointsTo { fields, .. } => {
                let through = if fields == 0 { 2 } else { 3 };
                vec![("alloc", 2), ("assign", 2), ("load", through), ("store", through)]
            }
            Workload::Program { .. } | Workload::Project { .. } => Vec::new(),
            Workload::OrderedList { .. } => vec![("insert", 4), ("remove", 2)],
        }
    }

    /// The rules as dlc source text (no query, no facts).
    pub fn rules_text(&self) -> String {
        match self {
            Workload::Tc { rules, .. } => format!("R(X,Y) <- E(X,Y).\n{}\n", rules.recursive_rule()),
            Workload::Unreach { .. } => concat!(
                "R(X,Y) <- E(X,Y).\n",
                "R(X,Z) <- R(X,Y), E(Y,Z).\n",
                "N(X) <- E(X,_).\n",
                "N(Y) <- E(_,Y).\n",
                "U(X,Y) <- N(X), N(Y), !R(X,Y).\n",
            )
            .to_string(),
            Workload::SameGen { .. } => {
                "sg(X,Y) <- par(X,P), par(Y,P).\nsg(X,Y) <- par(X,P), sg(P,Q), par(Y,Q).\n".to_string()
            }
            Workload::PointsTo { fields: 0, .. } => concat!(
                "pt(V,O) <- alloc(V,O).\n",
                "pt(V,O) <- assign(V,W), pt(W,O).\n",
                "pt(V,O) <- load(V,P), pt(P,B), hpt(B,O).\n",
                "hpt(B,O) <- store(P,W), pt(P,B), pt(W,O).\n",
            )
            .to_string(),
            Workload::PointsTo { .. } => concat!(
                "pt(V,O) <- alloc(V,O).\n",
                "pt(V,O) <- assign(V,W), pt(W,O).\n",
                "pt(V,O) <- load(V,P,F), pt(P,B), hpt(B,F,O).\n",
                "hpt(B,F,O) <- store(P,F,W), pt(P,B), pt(W,O).\n",
            )
            .to_string(),
            Workload::Program { shape, size } => shape.text(*size),
            // A project is Soufflé text in files, read by the binary only
            // (`System::DlcBinaryIr`): as dlc rules it is the empty program.
            Workload::Project { .. } => String::new(),
            Workload::Hops { hops, .. } => {
                format!("H(X,Y,1) <- E(X,Y).\nH(X,Z,N + 1) <- H(X,Y,N), E(Y,Z), N < {hops}.\nHop(X,Y) <- H(X,Y,N).\n")
            }
            Workload::Degree { .. } => {
                "Node(X) <- E(X,_).\nNode(Y) <- E(_,Y).\nDeg(X,D) <- Node(X), D = count : E(X,_).\n".to_string()
            }
            Workload::MinHops { hops, .. } => format!(
                "H(X,Y,1) <- E(X,Y).\nH(X,Z,N + 1) <- H(X,Y,N), E(Y,Z), N < {hops}.\n\
                 Dist(Y,D) <- H(0,Y,_), D = min N : H(0,Y,N).\n"
            ),
            // The subsumption form is Soufflé's syntax only: in-process, both forms are the
            // recursive `min`, which computes the same relation.
            Workload::ShortestPath { .. } => {
                "Dist(Y,W) <- E(0,Y,W).\nDist(Y,D) <- D = min D0 + W : { Dist(X,D0), E(X,Y,W) }.\n".to_string()
            }
            Workload::Strings { .. } => concat!(
                "Name(C,N) <- M(_,C), N = cat(\"org.pkg\", to_string(C / 100), \".Class\", to_string(C)).\n",
                "Sig(X,S) <- M(X,C), Name(C,N), S = cat(N, \".m\", to_string(X), \"(I)V\").\n",
                "Prefix(C,P) <- Name(C,N), P = substr(N, 0, strlen(N) - 6).\n",
                "Hit(X,C) <- M(X,C), Sig(X,S), contains(\"7(\", S), Prefix(C,P), strlen(P) > 10.\n",
            )
            .to_string(),
            Workload::OrderedList { .. } => ORDERED_LIST_RULES.replace(":-", "<-"),
        }
    }

    /// Generates the input facts (deterministic in the spec).
    pub fn generate(&self) -> Edb {
        match *self {
            Workload::Tc { graph, .. }
            | Workload::Unreach { graph }
            | Workload::Hops { graph, .. }
            | Workload::Degree { graph }
            | Workload::MinHops { graph, .. } => {
                Edb { relations: vec![pairs("E", &graph.edges())], values: graph.nodes() }
            }
            Workload::ShortestPath { graph, .. } => {
                let rows = graph.edges().into_iter().flat_map(|(x, y)| [x, y, edge_weight(x, y)]).collect();
                Edb { relations: vec![EdbRelation { name: "E", arity: 3, rows }], values: graph.nodes() }
            }
            Workload::SameGen { fanout, depth } => {
                // Breadth-first numbering: the children of node p are p*fanout + 1 ..= p*fanout + fanout.
                let nodes = tree_size(fanout, depth);
                let par: Vec<(u32, u32)> = (1..nodes).map(|c| (c, (c - 1) / fanout)).collect();
                Edb { relations: vec![pairs("par", &par)], values: nodes }
            }
            Workload::PointsTo { vars, allocs, fields, assigns, loads, stores, seed } => {
                let mut rng = SplitMix64::new(seed);
                let alloc: Vec<(u32, u32)> = (0..allocs).map(|o| (rng.below(vars), vars + o)).collect();
                let mut var_pairs = |n: u32| -> Vec<(u32, u32)> {
                    let mut seen = HashSet::new();
                    let mut out = Vec::new();
                    while out.len() < n as usize {
                        let p = (rng.below(vars), rng.below(vars));
                        if p.0 != p.1 && seen.insert(p) {
                            out.push(p);
                        }
                    }
                    out
                };
                let assign = var_pairs(assigns);
                let load = var_pairs(loads);
                let store = var_pairs(stores);
                let (load, store) = if fields == 0 {
                    (pairs("load", &load), pairs("store", &store))
                } else {
                    // `load(v,p,f)` and `store(p,f,w)`: the field sits beside the base pointer.
                    let mut field = || rng.below(fields);
                    let load: Vec<u32> = load.iter().flat_map(|&(v, p)| [v, p, field()]).collect();
                    let store: Vec<u32> = store.iter().flat_map(|&(p, w)| [p, field(), w]).collect();
                    (
                        EdbRelation { name: "load", arity: 3, rows: load },
                        EdbRelation { name: "store", arity: 3, rows: store },
                    )
                };
                Edb {
                    relations: vec![pairs("alloc", &alloc), pairs("assign", &assign), load, store],
                    values: vars + allocs,
                }
            }
            // The program's few facts are inline.
            Workload::Program { .. } | Workload::Project { .. } => Edb { relations: Vec::new(), values: 0 },
            Workload::Strings { classes, methods } => {
                let m: Vec<(u32, u32)> = (0..methods).map(|x| (x, x % classes.max(1))).collect();
                Edb { relations: vec![pairs("M", &m)], values: methods }
            }
            Workload::OrderedList { inserts, max_run, seed } => ordered_list(inserts, max_run, seed).0,
        }
    }

    /// The node a point query of this workload binds: node 0 for a graph (a root of the
    /// forest, the corner of the grid), the last leaf for same-generation, the variable of
    /// the first allocation site for points-to.
    pub fn point_node(&self) -> u32 {
        match *self {
            Workload::SameGen { fanout, depth } => tree_size(fanout, depth) - 1,
            // Variable 0 may well point nowhere; the variable of the first allocation
            // site points at least to its object.
            Workload::PointsTo { .. } => {
                self.generate().relation("alloc").and_then(|r| r.rows.first().copied()).unwrap_or(0)
            }
            Workload::Tc { .. }
            | Workload::Unreach { .. }
            | Workload::Program { .. }
            | Workload::Strings { .. }
            | Workload::Project { .. }
            | Workload::Hops { .. }
            | Workload::Degree { .. }
            | Workload::MinHops { .. }
            | Workload::ShortestPath { .. }
            | Workload::OrderedList { .. } => 0,
        }
    }
}

/// The rules of [`Workload::OrderedList`] in Soufflé's syntax (`:-`), the ordering of a
/// replicated growable array: an element's children come after it, the newest first
/// (the larger counter, then the larger replica), and an element without children is
/// followed by the next sibling of its nearest ancestor (itself included) that has one.
pub const ORDERED_LIST_RULES: &str = "\
laterChild(PC, PN, C2, N2) :- insert(C1, _, PC, PN), insert(C2, N2, PC, PN), C1 > C2.
laterChild(PC, PN, C2, N2) :- insert(C1, N1, PC, PN), insert(C2, N2, PC, PN), C1 = C2, N1 > N2.
firstChild(PC, PN, C, N) :- insert(C, N, PC, PN), !laterChild(PC, PN, C, N).
sibling(C1, N1, C2, N2) :- insert(C1, N1, PC, PN), insert(C2, N2, PC, PN).
laterSibling(C1, N1, C2, N2) :- sibling(C1, N1, C2, N2), C1 > C2.
laterSibling(C1, N1, C2, N2) :- sibling(C1, N1, C2, N2), C1 = C2, N1 > N2.
laterSibling2(C1, N1, C3, N3) :- laterSibling(C1, N1, C2, N2), laterSibling(C2, N2, C3, N3).
nextSibling(C1, N1, C2, N2) :- laterSibling(C1, N1, C2, N2), !laterSibling2(C1, N1, C2, N2).
hasNextSibling(C, N) :- laterSibling(C, N, _, _).
nextSiblingAnc(SC, SN, NC, NN) :- nextSibling(SC, SN, NC, NN).
nextSiblingAnc(SC, SN, NC, NN) :- insert(SC, SN, PC, PN), !hasNextSibling(SC, SN), nextSiblingAnc(PC, PN, NC, NN).
hasChild(PC, PN) :- insert(_, _, PC, PN).
nextElem(PC, PN, NC, NN) :- firstChild(PC, PN, NC, NN).
nextElem(PC, PN, NC, NN) :- insert(PC, PN, _, _), !hasChild(PC, PN), nextSiblingAnc(PC, PN, NC, NN).
hasValue(C, N) :- insert(C, N, _, _), !remove(C, N).
skipBlank(FC, FN, TC, TN) :- nextElem(FC, FN, TC, TN).
skipBlank(FC, FN, TC, TN) :- nextElem(FC, FN, VC, VN), !hasValue(VC, VN), skipBlank(VC, VN, TC, TN).
nextVisible(PC, PN, NC, NN) :- hasValue(PC, PN), skipBlank(PC, PN, NC, NN), hasValue(NC, NN).
";

/// The relations [`ORDERED_LIST_RULES`] derives, with their arities.
pub const ORDERED_LIST_DERIVED: [(&str, usize); 13] = [
    ("laterChild", 4),
    ("firstChild", 4),
    ("sibling", 4),
    ("laterSibling", 4),
    ("laterSibling2", 4),
    ("nextSibling", 4),
    ("hasNextSibling", 2),
    ("nextSiblingAnc", 4),
    ("hasChild", 2),
    ("nextElem", 4),
    ("hasValue", 2),
    ("skipBlank", 4),
    ("nextVisible", 4),
];

/// The sizes of `skipBlank` and `nextVisible` of an [`Workload::OrderedList`], counted
/// on the list the generator made, not through the rules; `None` for other workloads.
pub fn ordered_list_sizes(workload: &Workload) -> Option<ListSizes> {
    match *workload {
        Workload::OrderedList { inserts, max_run, seed } => Some(ordered_list(inserts, max_run, seed).1),
        _ => None,
    }
}

/// What [`ordered_list_sizes`] counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListSizes {
    /// `skipBlank`: from each element (the head included) to each later one up to and
    /// including the next visible element, or to the end when none is left.
    pub skip_blank: u64,
    /// `nextVisible`: one pair per visible element but the last.
    pub next_visible: u64,
}

/// The inputs of [`Workload::OrderedList`]: `insert(counter, replica, parent counter,
/// parent replica)` and `remove(counter, replica)`, and the sizes the rules derive. The
/// list's head is the element `(0, 0)`, a parent that is never inserted.
fn ordered_list(inserts: u32, max_run: u32, seed: u64) -> (Edb, ListSizes) {
    let mut rng = SplitMix64::new(seed);
    let n = inserts as usize;
    // The list order as links: element `i` is inserted right after its parent (the
    // newest child comes first), so `next` is the list after each insertion.
    let mut next = vec![NIL_ELEMENT; n + 1];
    let mut replica = vec![0u32; n + 1];
    let mut insert = Vec::with_capacity(4 * n);
    for i in 1..=n {
        let parent = if rng.below(50) == 0 { rng.below(i as u32) as usize } else { i - 1 };
        replica[i] = rng.below(4);
        next[i] = next[parent];
        next[parent] = i as u32;
        insert.extend([i as u32, replica[i], parent as u32, replica[parent]]);
    }
    let mut remove = Vec::new();
    let mut removed = vec![false; n + 1];
    let mut at = next[0];
    while at != NIL_ELEMENT {
        if rng.below(2) == 0 {
            let mut run = 1 + rng.below(max_run.max(1));
            while run > 0 && at != NIL_ELEMENT {
                remove.extend([at, replica[at as usize]]);
                removed[at as usize] = true;
                at = next[at as usize];
                run -= 1;
            }
        }
        let mut visible = 1 + rng.below(19);
        while visible > 0 && at != NIL_ELEMENT {
            at = next[at as usize];
            visible -= 1;
        }
    }
    // From the end of the list back: the elements an element skips to are its successor
    // and, when that one is removed, what the successor skips to.
    let mut order = Vec::with_capacity(n + 1);
    let mut at = 0;
    while at != NIL_ELEMENT {
        order.push(at);
        at = next[at as usize];
    }
    let mut skips = vec![0u64; n + 1];
    for &e in order.iter().rev() {
        let s = next[e as usize];
        if s != NIL_ELEMENT {
            skips[e as usize] = 1 + if removed[s as usize] { skips[s as usize] } else { 0 };
        }
    }
    let visible = (n - removed.iter().filter(|&&r| r).count()) as u64;
    let sizes = ListSizes { skip_blank: skips.iter().sum(), next_visible: visible.saturating_sub(1) };
    let edb = Edb {
        relations: vec![
            EdbRelation { name: "insert", arity: 4, rows: insert },
            EdbRelation { name: "remove", arity: 2, rows: remove },
        ],
        values: inserts + 1,
    };
    (edb, sizes)
}

/// The end of the list in [`ordered_list`]'s links.
const NIL_ELEMENT: u32 = u32::MAX;

fn tree_size(fanout: u32, depth: u32) -> u32 {
    (0..=depth).map(|d| fanout.pow(d)).sum()
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Workload::Tc { rules, graph } => write!(f, "tc-{}:{graph}", rules.name()),
            Workload::Unreach { graph } => write!(f, "unreach:{graph}"),
            Workload::SameGen { fanout, depth } => write!(f, "sg:{fanout}:{depth}"),
            Workload::PointsTo { vars, allocs, fields: 0, assigns, loads, stores, seed } => {
                write!(f, "pt:{vars}:{allocs}:{assigns}:{loads}:{stores}:{seed}")
            }
            Workload::PointsTo { vars, allocs, fields, assigns, loads, stores, seed } => {
                write!(f, "ptf:{vars}:{allocs}:{fields}:{assigns}:{loads}:{stores}:{seed}")
            }
            Workload::Program { shape, size } => write!(f, "prog-{}:{size}", shape.name()),
            Workload::Hops { hops, graph } => write!(f, "hops:{hops}:{graph}"),
            Workload::Degree { graph } => write!(f, "degree:{graph}"),
            Workload::MinHops { hops, graph } => write!(f, "minhops:{hops}:{graph}"),
            Workload::ShortestPath { graph, subsumption: false } => write!(f, "sssp:{graph}"),
            Workload::ShortestPath { graph, subsumption: true } => write!(f, "sssp-subsumption:{graph}"),
            Workload::Strings { classes, methods } => write!(f, "strings:{classes}:{methods}"),
            Workload::Project { parts } => write!(f, "project:{parts}"),
            Workload::OrderedList { inserts, max_run, seed } => write!(f, "list:{inserts}:{max_run}:{seed}"),
        }
    }
}

/// The selection query, over the workload's query predicate (always binary here).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Query {
    /// `R(X,Y)`: the whole relation.
    Full,
    /// `R(c,Y)`.
    Point(u32),
    /// `R(a,b)`: does one tuple hold.
    Pair(u32, u32),
    /// `R(X,c)`: the second column bound (adornment `fb`).
    Target(u32),
}

impl Query {
    pub fn parse(spec: &str) -> Result<Self, String> {
        let parts: Vec<&str> = spec.split(':').collect();
        let num = |i: usize| parts.get(i).and_then(|p| p.parse::<u32>().ok());
        match (parts.as_slice(), num(1), num(2)) {
            (["full"], _, _) => Ok(Query::Full),
            (["point", _], Some(c), _) => Ok(Query::Point(c)),
            (["bb", _, _], Some(a), Some(b)) => Ok(Query::Pair(a, b)),
            (["fb", _], Some(c), _) => Ok(Query::Target(c)),
            _ => Err(format!("not a query spec: `{spec}`")),
        }
    }

    /// The query as dlc source text over `pred`.
    pub fn text(self, pred: &str) -> String {
        match self {
            Query::Full => format!("?- {pred}(X,Y)."),
            Query::Point(c) => format!("?- {pred}({c},Y)."),
            Query::Pair(a, b) => format!("?- {pred}({a},{b})."),
            Query::Target(c) => format!("?- {pred}(X,{c})."),
        }
    }

    /// `R(0,Y)` for tables.
    pub fn label(self, pred: &str) -> String {
        let text = self.text(pred);
        text.trim_start_matches("?- ").trim_end_matches('.').to_string()
    }

    /// Whether a `(x, y)` tuple of the query predicate is an answer.
    pub fn matches(self, x: u32, y: u32) -> bool {
        match self {
            Query::Full => true,
            Query::Point(c) => x == c,
            Query::Pair(a, b) => x == a && y == b,
            Query::Target(c) => y == c,
        }
    }
}

impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Query::Full => write!(f, "full"),
            Query::Point(c) => write!(f, "point:{c}"),
            Query::Pair(a, b) => write!(f, "bb:{a}:{b}"),
            Query::Target(c) => write!(f, "fb:{c}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip() {
        for spec in [
            "tc-rlin:random:2000:10000:42",
            "tc-nonlin:chain:500",
            "tc-llin:grid:30:20",
            "tc-llin:forest:1000:20:7",
            "tc-rlin:paths:1000:20",
            "sg:3:6",
            "pt:3000:600:3000:600:600:7",
            "unreach:random:500:1500:42",
            "hops:4:random:2000:10000:42",
            "ptf:15000:3000:20:18000:3000:3000:7",
            "strings:20000:200000",
            "project:300",
            "list:20000:100:42",
        ] {
            assert_eq!(Workload::parse(spec).unwrap().to_string(), spec);
        }
        for spec in ["full", "point:0", "bb:0:1999"] {
            assert_eq!(Query::parse(spec).unwrap().to_string(), spec);
        }
        assert!(Workload::parse("tc-xlin:chain:5").is_err());
        assert!(Query::parse("point").is_err());
    }

    #[test]
    fn random_graph_has_distinct_edges_and_no_self_loops() {
        let edges = Graph::Random { nodes: 50, edges: 200, seed: 42 }.edges();
        assert_eq!(edges.len(), 200);
        assert!(edges.iter().all(|&(u, v)| u != v && u < 50 && v < 50));
        let distinct: HashSet<_> = edges.iter().collect();
        assert_eq!(distinct.len(), 200);
        assert_eq!(edges, Graph::Random { nodes: 50, edges: 200, seed: 42 }.edges());
    }

    #[test]
    fn ordered_list_removes_runs_along_the_list() {
        let list = Workload::OrderedList { inserts: 2000, max_run: 30, seed: 42 };
        let edb = list.generate();
        let insert = edb.relation("insert").unwrap();
        let remove = edb.relation("remove").unwrap();
        assert_eq!(insert.len(), 2000);
        // Every element's parent was inserted before it (or is the head).
        assert!(insert.tuples().all(|t| t[2] < t[0]));
        let removed: HashSet<&[u32]> = remove.tuples().collect();
        assert_eq!(removed.len(), remove.len());
        assert!(remove.tuples().all(|t| insert.tuples().any(|i| i[..2] == *t)));
        let sizes = ordered_list_sizes(&list).unwrap();
        assert_eq!(sizes.next_visible, (2000 - remove.len() - 1) as u64);
        // At least one tuple per element, at most one per element and run length.
        assert!(sizes.skip_blank >= 2000 && sizes.skip_blank <= 2001 * 31, "{sizes:?}");
        assert_eq!(edb, list.generate());
    }

    #[test]
    fn shapes_have_the_expected_sizes() {
        assert_eq!(Graph::Chain { nodes: 5 }.edges(), vec![(0, 1), (1, 2), (2, 3), (3, 4)]);
        assert_eq!(Graph::Grid { width: 3, height: 2 }.edges().len(), 2 * 2 + 3);
        let forest = Graph::Forest { trees: 4, size: 5, seed: 1 }.edges();
        assert_eq!(forest.len(), 4 * 4);
        assert!(forest.iter().all(|&(p, c)| p < c && p / 5 == c / 5));
        assert_eq!(Graph::Paths { count: 2, len: 3 }.edges(), vec![(0, 1), (1, 2), (3, 4), (4, 5)]);
        let sg = Workload::SameGen { fanout: 2, depth: 3 }.generate();
        assert_eq!(sg.values, 15);
        assert_eq!(sg.relation("par").unwrap().len(), 14);
    }
}
