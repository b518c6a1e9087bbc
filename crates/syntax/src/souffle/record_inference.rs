//! The record types of a conjunction's variables, found by unification as Soufflé finds
//! them: every atom's column types its argument, a record's declared type types its
//! fields, a constant types itself, and two sides of a comparison have one type. A
//! variable thus gets the record type of a column it never stands in (`h([x, n]) :- ...,
//! n = [a, b].` gives `n` the type of `h`'s record's second field), and a record no
//! declaration types (`[a] = [1]`, `r = [x, y], s = r, s = [v, w]`) gets a structural
//! type of its own, named by its fields (`[number, symbol]`): such a record never
//! reaches a column (one would type it), and records are stored by their field values,
//! so its type only says how its fields are read.

use super::check::Records;
use crate::ast::{Atom, Literal, Term, TermKind};
use ir::{Branch, Field, RecordType, RecordTypeId, ValueType};
use rustc_hash::FxHashMap;

/// A term's place in the unification.
type Node = usize;

/// What is known of a node's type.
#[derive(Clone, Debug)]
enum Shape {
    Unknown,
    /// A column's, a declared field's or a constant's type.
    Known(ValueType),
    /// A record `[..]` no declaration has typed yet: a node per field.
    Fields(Vec<Node>),
}

/// The record type of each variable of `conjunction` (with the clause's `heads`) that has
/// one, the structural types made for records no declaration types added to `records`
/// (`structural` names each so that one shape is one type). `columns` gives each
/// relation's column types.
pub(super) fn infer(
    conjunction: &[Literal],
    heads: &[Atom],
    columns: &FxHashMap<&str, Vec<ValueType>>,
    records: &mut Records,
    structural: &mut FxHashMap<String, RecordTypeId>,
) -> FxHashMap<String, ValueType> {
    let mut unifier = Unifier::default();
    let atoms = conjunction.iter().filter_map(Literal::atom).chain(heads);
    for atom in atoms {
        let types = columns.get(atom.pred.text.as_str());
        for (i, arg) in atom.args.iter().enumerate() {
            if let Some(&ty) = types.and_then(|t| t.get(i)) {
                let node = unifier.term(arg, records);
                let column = unifier.node(Shape::Known(ty));
                unifier.unify(node, column, records);
            }
        }
    }
    for literal in conjunction {
        if let Literal::Compare(c) = literal {
            let typed = |t: &Term| matches!(t.kind, TermKind::Var(_) | TermKind::Record { .. } | TermKind::Nil);
            if typed(&c.left) || typed(&c.right) {
                let (left, right) = (unifier.term(&c.left, records), unifier.term(&c.right, records));
                unifier.unify(left, right, records);
            }
        }
    }
    // In the order the variables first occur (their nodes' order), so that the
    // structural types are numbered as the source meets them.
    let mut vars: Vec<(String, Node)> = unifier.vars.iter().map(|(v, n)| (v.clone(), *n)).collect();
    vars.sort_unstable_by_key(|&(_, node)| node);
    let mut types = FxHashMap::default();
    for (var, node) in vars {
        if let Some(ty @ ValueType::Record(_)) = unifier.type_of(node, records, structural) {
            types.insert(var, ty);
        }
    }
    types
}

#[derive(Default)]
struct Unifier {
    parent: Vec<Node>,
    shape: Vec<Shape>,
    vars: FxHashMap<String, Node>,
}

impl Unifier {
    fn node(&mut self, shape: Shape) -> Node {
        self.parent.push(self.parent.len());
        self.shape.push(shape);
        self.parent.len() - 1
    }

    fn find(&mut self, mut node: Node) -> Node {
        let mut root = node;
        while self.parent[root] != root {
            root = self.parent[root];
        }
        while self.parent[node] != root {
            let next = self.parent[node];
            self.parent[node] = root;
            node = next;
        }
        root
    }

    /// The node of `term`, its records' fields linked to their own nodes; records nest
    /// as deep as the source writes them, so the walk keeps its own stack.
    fn term(&mut self, term: &Term, records: &Records) -> Node {
        enum Step<'t> {
            Visit(&'t Term),
            Record(&'t Term, usize),
        }
        let mut steps = vec![Step::Visit(term)];
        let mut made: Vec<Node> = Vec::new();
        while let Some(step) = steps.pop() {
            let node = match step {
                Step::Visit(t) => match &t.kind {
                    TermKind::Record { args, .. } => {
                        steps.push(Step::Record(t, args.len()));
                        steps.extend(args.iter().rev().map(Step::Visit));
                        continue;
                    }
                    TermKind::Var(v) => match self.vars.get(v) {
                        Some(&node) => node,
                        None => {
                            let node = self.node(Shape::Unknown);
                            self.vars.insert(v.clone(), node);
                            node
                        }
                    },
                    TermKind::Int(text) if text.ends_with(['u', 'U']) => self.node(Shape::Known(ValueType::Unsigned)),
                    TermKind::Int(_) => self.node(Shape::Known(ValueType::Number)),
                    TermKind::Float(_) => self.node(Shape::Known(ValueType::Float)),
                    TermKind::Str(_) => self.node(Shape::Known(ValueType::Symbol)),
                    _ => self.node(Shape::Unknown),
                },
                Step::Record(t, arity) => {
                    let fields = made.split_off(made.len() - arity);
                    let TermKind::Record { branch, .. } = &t.kind else { unreachable!("a record step") };
                    match branch {
                        None => self.node(Shape::Fields(fields)),
                        Some(name) => match records.branches.get(name) {
                            Some(&(id, b)) => {
                                let declared = &records.types[id.0 as usize].branches[b].fields;
                                if declared.len() == fields.len() {
                                    for (field, f) in fields.into_iter().zip(declared) {
                                        let known = self.node(Shape::Known(f.ty));
                                        self.unify(field, known, records);
                                    }
                                }
                                self.node(Shape::Known(ValueType::Record(id)))
                            }
                            None => self.node(Shape::Unknown),
                        },
                    }
                }
            };
            made.push(node);
        }
        made.pop().expect("a term has a node")
    }

    /// Makes `a` and `b` one type. A conflict (a record where a number is known, records
    /// of two arities) keeps the first shape: resolution and typing report it.
    fn unify(&mut self, a: Node, b: Node, records: &Records) {
        let mut pending = vec![(a, b)];
        while let Some((a, b)) = pending.pop() {
            let (a, b) = (self.find(a), self.find(b));
            if a == b {
                continue;
            }
            let (first, second) = (
                std::mem::replace(&mut self.shape[a], Shape::Unknown),
                std::mem::replace(&mut self.shape[b], Shape::Unknown),
            );
            let merged = match (first, second) {
                (Shape::Unknown, shape) | (shape, Shape::Unknown) => shape,
                (Shape::Known(ty), Shape::Known(_)) => Shape::Known(ty),
                (Shape::Known(ty), Shape::Fields(fields)) | (Shape::Fields(fields), Shape::Known(ty)) => {
                    if let ValueType::Record(id) = ty {
                        let declared = &records.types[id.0 as usize];
                        if !declared.adt && declared.branches[0].fields.len() == fields.len() {
                            for (field, f) in fields.into_iter().zip(&declared.branches[0].fields) {
                                let known = self.node(Shape::Known(f.ty));
                                pending.push((field, known));
                            }
                        }
                    }
                    Shape::Known(ty)
                }
                (Shape::Fields(fields), Shape::Fields(others)) => {
                    if fields.len() == others.len() {
                        pending.extend(fields.iter().copied().zip(others));
                    }
                    Shape::Fields(fields)
                }
            };
            self.parent[b] = a;
            self.shape[a] = merged;
        }
    }

    /// The type `node` has: a known one, or the structural record type of its fields
    /// (made once per shape); none while a field's type is unknown or a record holds
    /// itself.
    fn type_of(
        &mut self,
        node: Node,
        records: &mut Records,
        structural: &mut FxHashMap<String, RecordTypeId>,
    ) -> Option<ValueType> {
        // Post-order over nested records, with the nodes on the current path to catch a
        // record that holds itself.
        let mut done: FxHashMap<Node, Option<ValueType>> = FxHashMap::default();
        let mut on_path: Vec<Node> = Vec::new();
        let mut steps = vec![(self.find(node), false)];
        while let Some((node, fields_done)) = steps.pop() {
            if done.contains_key(&node) {
                continue;
            }
            let ty = match self.shape[node].clone() {
                Shape::Unknown => None,
                Shape::Known(ty) => Some(ty),
                Shape::Fields(fields) if !fields_done => {
                    if on_path.contains(&node) {
                        done.insert(node, None);
                        continue;
                    }
                    on_path.push(node);
                    steps.push((node, true));
                    for field in fields {
                        let root = self.find(field);
                        steps.push((root, false));
                    }
                    continue;
                }
                Shape::Fields(fields) => {
                    on_path.retain(|n| *n != node);
                    let mut types = Vec::with_capacity(fields.len());
                    for field in fields {
                        let root = self.find(field);
                        types.push(done.get(&root).copied().flatten());
                    }
                    let types: Option<Vec<ValueType>> = types.into_iter().collect();
                    types.map(|types| ValueType::Record(structural_type(&types, records, structural)))
                }
            };
            done.insert(node, ty);
        }
        let root = self.find(node);
        done.get(&root).copied().flatten()
    }
}

/// The structural record type of fields of `types`, added to `records` the first time.
fn structural_type(
    types: &[ValueType],
    records: &mut Records,
    structural: &mut FxHashMap<String, RecordTypeId>,
) -> RecordTypeId {
    let names: Vec<&str> = types
        .iter()
        .map(|ty| match ty {
            ValueType::Record(id) => records.types[id.0 as usize].name.as_str(),
            plain => plain.name(),
        })
        .collect();
    let name = format!("[{}]", names.join(", "));
    if let Some(&id) = structural.get(&name) {
        return id;
    }
    let fields = types.iter().enumerate().map(|(i, &ty)| Field { name: i.to_string(), ty }).collect();
    let id = RecordTypeId(records.types.len() as u32);
    records.types.push(RecordType {
        name: name.clone(),
        branches: vec![Branch { name: name.clone(), fields }],
        adt: false,
    });
    structural.insert(name, id);
    id
}
