//! Soufflé's components, expanded right after parsing as Soufflé 2.5 expands them: each
//! `.init inst = Name<A>` becomes the declarations, types, I/O directives and clauses of
//! `Name` and of its bases, its type parameters replaced by the arguments, the relations and
//! types it holds renamed `inst.r` and `inst.T` (and every use of them in it), so that no
//! later pass sees a component.
//!
//! What an instance holds, in order: the content of the instances its component makes
//! (`.init` in the `.comp`, named `inner.r` before the instance's own prefix), then its
//! bases' content (each base's own instances and bases first), then its own items. A clause
//! of a base is left out where a deriving component overrides its relation (`.override r`).
//! A clause whose head the instance does not hold (`glob(x) :- r(x).`) is an orphan: it goes
//! to the enclosing instance that holds its head, or to the program, renamed on the way
//! by every instance it passes, as in Soufflé.
//!
//! Soufflé's checks of components (its `ComponentChecker`) run first, over every component
//! whether instantiated or not, and are E0037: an unknown component, the wrong number of
//! type arguments, a cyclic inheritance (once per cycle), an override of a relation the
//! component declares itself or that a base does not declare `overridable`, a name given
//! to two components, instances, relations or types of the program. With any of them no
//! instance is expanded, and the uses of the instances' relations are not reported
//! again. A relation or type an instance holds twice is left to the checks of
//! declarations (E0020, E0034), which see `inst.r` twice; an `.input` or `.printsize` it
//! holds twice is E0034 here, since Soufflé checks that in an instance only.

use super::tree::{self, Component, ComponentType, Init, Item};
use crate::ast;
use diag::{Code, Diagnostic, Span};
use rustc_hash::{FxHashMap, FxHashSet};

/// How deeply instances may nest, counting each base, before the expansion stops (the
/// limit of Soufflé 2.5, which reaches it when a component instantiates itself).
pub(super) const MAX_INSTANTIATION_DEPTH: usize = 100;

/// How many declarations, types, directives and clauses one top-level instance may hold
/// (instances of instances multiply), so that expanding ends in reasonable time.
pub(super) const MAX_INSTANCE_ITEMS: usize = 1 << 18;

/// A program without components, and where the items of its instances came from.
pub(super) struct Expanded {
    pub program: tree::Program,
    /// The source of each item an instance holds, with the instance's name (`a.b`).
    pub origins: Vec<(Span, String)>,
    /// The top-level instances not expanded because of an error: their relations are
    /// not reported as undeclared where the program uses them.
    pub unexpanded: FxHashSet<String>,
}

/// Expands every instance of `program`; reports Soufflé's errors about components.
pub(super) fn expand(program: tree::Program, diagnostics: &mut Vec<Diagnostic>) -> Expanded {
    let has_components = program.items.iter().any(|item| matches!(item, Item::Component(_) | Item::Init(_)));
    if !has_components {
        return Expanded { program, origins: Vec::new(), unexpanded: FxHashSet::default() };
    }
    let mut components: Vec<Box<Component>> = Vec::new();
    let mut rest = Vec::new();
    for item in program.items {
        match item {
            Item::Component(component) => {
                rest.extend(qualifier_directives(&component));
                components.push(component);
            }
            other => rest.push(other),
        }
    }
    let mut expander = Expander::new(&components);
    expander.check(&rest);
    let checked = !diag::has_errors(&expander.diagnostics);
    let mut items = Vec::with_capacity(rest.len());
    let mut origins = Vec::new();
    let mut unexpanded = FxHashSet::default();
    for item in rest {
        let Item::Init(init) = item else {
            items.push(item);
            continue;
        };
        let expanded = if checked { expander.instantiate_program(&init) } else { None };
        let Some((pieces, unsupported)) = expanded else {
            unexpanded.insert(init.instance.text.clone());
            continue;
        };
        for piece in pieces {
            let path: Vec<&str> = piece.path.iter().rev().map(String::as_str).collect();
            origins.push((piece.origin, path.join(".")));
            items.push(piece.item);
        }
        items.extend(unsupported.into_iter().map(Item::Unsupported));
    }
    diagnostics.append(&mut expander.diagnostics);
    Expanded { program: tree::Program { items }, origins, unexpanded }
}

/// Adds to each diagnostic inside an instance the note naming it ("in instance `a.b`"),
/// and keeps one of identical diagnostics that instances of one component repeat.
pub(super) fn note_instances(diagnostics: Vec<Diagnostic>, origins: &[(Span, String)]) -> Vec<Diagnostic> {
    if origins.is_empty() {
        return diagnostics;
    }
    let mut kept: Vec<Diagnostic> = Vec::with_capacity(diagnostics.len());
    let mut noted: FxHashSet<String> = FxHashSet::default();
    for mut d in diagnostics {
        let Some(at) = d.primary_span() else {
            kept.push(d);
            continue;
        };
        let mut paths: Vec<&str> = Vec::new();
        for (origin, path) in origins {
            let inside = origin.file == at.file && origin.start <= at.start && at.end <= origin.end;
            if inside && !paths.contains(&path.as_str()) {
                paths.push(path);
            }
        }
        if paths.is_empty() {
            kept.push(d);
            continue;
        }
        // A report that names a relation of one of the instances (`g.r`) is about it.
        let named: Vec<&str> = paths.iter().copied().filter(|p| d.message.contains(&format!("`{p}."))).collect();
        if !named.is_empty() {
            paths = named;
        }
        let list = paths.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ");
        d.notes.push(if paths.len() == 1 { format!("in instance {list}") } else { format!("in instances {list}") });
        if noted.insert(format!("{d:?}")) {
            kept.push(d);
        }
    }
    kept
}

/// One item of an instance's content: a declaration of one relation, a type, an I/O
/// directive of one relation or a clause of one head.
struct Piece {
    item: Item,
    /// The instances it is in, the innermost first.
    path: Vec<String>,
    /// Where it is written.
    origin: Span,
}

/// A clause whose head is no relation of the instance that made it, with the number
/// telling which instantiation made it.
struct Orphan {
    piece: Piece,
    serial: usize,
}

/// Type parameters bound to their arguments.
#[derive(Clone, Default)]
struct Binding(FxHashMap<String, String>);

impl Binding {
    fn find(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// The binding of `parameters` to `arguments`, each argument read through this
    /// binding; only these parameters are bound (an enclosing component's are not), and a
    /// count that does not match (reported by the checks) keeps this binding, as in
    /// Soufflé.
    fn extend(&self, parameters: &[ast::Name], arguments: &[&str]) -> Binding {
        if parameters.len() != arguments.len() {
            return self.clone();
        }
        Binding(
            parameters
                .iter()
                .zip(arguments)
                .map(|(p, a)| (p.text.clone(), self.find(a).unwrap_or(a).to_string()))
                .collect(),
        )
    }
}

/// A component, where it is defined.
struct Scope<'c> {
    component: &'c Component,
    /// The component it is defined in.
    enclosing: Option<usize>,
    /// The components defined in it.
    nested: Vec<usize>,
}

struct Expander<'c> {
    scopes: Vec<Scope<'c>>,
    /// The components defined at the top level.
    global: Vec<usize>,
    diagnostics: Vec<Diagnostic>,
    /// Numbers the orphans of each instantiation.
    serial: usize,
    /// The components of the cycles of inheritance reported.
    reported_cycles: FxHashSet<usize>,
    /// The instances being expanded, the outermost first.
    path: Vec<String>,
    /// How many items the top-level instance being expanded has made so far.
    made: usize,
}

impl<'c> Expander<'c> {
    fn new(components: &'c [Box<Component>]) -> Self {
        let mut scopes: Vec<Scope<'c>> = Vec::new();
        let mut global = Vec::new();
        let mut worklist: Vec<(&'c Component, Option<usize>)> = components.iter().map(|c| (&**c, None)).collect();
        worklist.reverse();
        while let Some((component, enclosing)) = worklist.pop() {
            let id = scopes.len();
            scopes.push(Scope { component, enclosing, nested: Vec::new() });
            match enclosing {
                Some(outer) => scopes[outer].nested.push(id),
                None => global.push(id),
            }
            let nested = component.items.iter().rev().filter_map(|item| match item {
                Item::Component(nested) => Some((&**nested, Some(id))),
                _ => None,
            });
            worklist.extend(nested);
        }
        Expander {
            scopes,
            global,
            diagnostics: Vec::new(),
            serial: 0,
            reported_cycles: FxHashSet::default(),
            path: Vec::new(),
            made: 0,
        }
    }

    fn component(&self, id: usize) -> &'c Component {
        self.scopes[id].component
    }

    /// The component `name` names in `scope` (none: the top level), as Soufflé looks it
    /// up: `name` read through the binding, then the components defined in the scope, in
    /// its bases (and where those are defined), in the enclosing scopes, and at the top
    /// level.
    fn lookup(&self, scope: Option<usize>, name: &str, binding: &Binding) -> Option<usize> {
        self.search(scope, name, binding, &mut FxHashMap::default(), 0)
    }

    /// [`Expander::lookup`], each search remembered (one under way finds nothing, so a
    /// cycle of bases ends) and at most [`MAX_INSTANTIATION_DEPTH`] deep.
    fn search(
        &self,
        scope: Option<usize>,
        name: &str,
        binding: &Binding,
        searched: &mut FxHashMap<(Option<usize>, String), Option<usize>>,
        depth: usize,
    ) -> Option<usize> {
        let key = (scope, name.to_string());
        if depth > MAX_INSTANTIATION_DEPTH {
            return None;
        }
        if let Some(found) = searched.get(&key) {
            return *found;
        }
        searched.insert(key.clone(), None);
        let bound = binding.find(name).unwrap_or(name);
        let named = |id: &usize| self.component(*id).name.text == bound;
        let found = 'search: {
            let mut current = scope;
            while let Some(s) = current {
                if let Some(&found) = self.scopes[s].nested.iter().find(|id| named(id)) {
                    break 'search Some(found);
                }
                for base in &self.component(s).bases {
                    let base = self.search(self.scopes[s].enclosing, &base.name.text, binding, searched, depth + 1);
                    if base == Some(s) {
                        break 'search None;
                    }
                    if let Some(found) = base.and_then(|b| self.search(Some(b), name, binding, searched, depth + 1)) {
                        break 'search Some(found);
                    }
                }
                current = self.scopes[s].enclosing;
            }
            self.global.iter().copied().find(named)
        };
        searched.insert(key, found);
        found
    }

    // ---- The checks, over every component.

    /// Soufflé's checks of components, inheritance and overrides, and of the names of the
    /// program's components and instances.
    fn check(&mut self, program: &[Item]) {
        for g in self.global.clone() {
            self.check_component(g, None, &Binding::default());
        }
        for item in program {
            if let Item::Init(init) = item {
                self.check_reference(None, &init.component, &Binding::default());
            }
        }
        self.check_names(program);
    }

    /// The checks of a component and of what it defines and instantiates.
    fn check_component(&mut self, id: usize, enclosing: Option<usize>, binding: &Binding) {
        let mut worklist = vec![(id, enclosing, binding.clone())];
        while let Some((id, enclosing, binding)) = worklist.pop() {
            let component = self.component(id);
            // Its own type parameters stand for components not known here, and are not
            // looked up.
            let placeholders = vec!["<type parameter>"; component.parameters.len()];
            let own = binding.extend(&component.parameters, &placeholders);
            for base in &component.bases {
                self.check_reference(enclosing, base, &own);
            }
            let parents = self.parents(id, enclosing, &binding);
            self.check_overrides(component, &parents);
            if parents.contains(&id) && !self.reported_cycles.contains(&id) {
                let mut members: Vec<usize> = parents
                    .iter()
                    .copied()
                    .filter(|&p| p == id || self.parents(p, enclosing, &binding).contains(&id))
                    .collect();
                members.sort_by_key(|&m| self.component(m).name.span);
                self.reported_cycles.extend(members.iter().copied());
                let cycle = self.cycle(&members);
                self.diagnostics.push(cycle);
            }
            for init in instances(component) {
                self.check_reference(Some(id), &init.component, &own);
            }
            let nested = self.scopes[id].nested.iter().rev().map(|&n| (n, Some(id), own.clone()));
            worklist.extend(nested.collect::<Vec<_>>());
        }
    }

    /// The components `id` inherits from, directly or not, each base looked up from
    /// `enclosing` as Soufflé's check looks them up.
    fn parents(&self, id: usize, enclosing: Option<usize>, binding: &Binding) -> Vec<usize> {
        let mut parents = Vec::new();
        let mut worklist = vec![id];
        while let Some(current) = worklist.pop() {
            for base in &self.component(current).bases {
                if let Some(found) = self.lookup(enclosing, &base.name.text, binding) {
                    if !parents.contains(&found) {
                        parents.push(found);
                        worklist.push(found);
                    }
                }
            }
        }
        parents
    }

    /// E0037 for a component that is not defined where `reference` names it, or that is
    /// given another number of type arguments than it has parameters.
    fn check_reference(&mut self, scope: Option<usize>, reference: &ComponentType, binding: &Binding) {
        let name = &reference.name.text;
        if binding.find(name).is_some() {
            return;
        }
        let Some(found) = self.lookup(scope, name, binding) else {
            self.diagnostics.push(unknown_component(reference, None));
            return;
        };
        let parameters = &self.component(found).parameters;
        if parameters.len() != reference.arguments.len() {
            let (expected, given) = (parameters.len(), reference.arguments.len());
            self.diagnostics.push(
                Diagnostic::error(
                    Code::INVALID_COMPONENT,
                    format!("the component `{name}` takes {expected} type argument(s) but is given {given}"),
                )
                .with_primary(reference.span, format!("{given} type argument(s) here"))
                .with_secondary(
                    self.component(found).name.span,
                    format!("`{name}` is defined with {expected} type parameter(s) here"),
                ),
            );
        }
    }

    /// E0037 for each `.override` of `component` that names a relation it declares
    /// itself, or one a base declares without `overridable` (once per override).
    fn check_overrides(&mut self, component: &Component, parents: &[usize]) {
        let name = &component.name.text;
        for overridden in &component.overrides {
            let relation = &overridden.text;
            if let Some(own) = declarations(component).find(|(n, _)| &n.text == relation) {
                self.diagnostics.push(
                    Diagnostic::error(
                        Code::INVALID_COMPONENT,
                        format!("the component `{name}` overrides `{relation}`, which it declares itself"),
                    )
                    .with_primary(overridden.span, "overridden here")
                    .with_secondary(own.0.span, format!("declared in `{name}` here"))
                    .with_help(format!(
                        "`.override` replaces the clauses of a relation a base declares: drop it, or leave `{relation}` to the base"
                    )),
                );
            }
            let fixed = parents.iter().find_map(|&p| {
                let parent = self.component(p);
                declarations(parent).find(|(n, d)| &n.text == relation && !d.overridable).map(|(n, _)| (parent, n))
            });
            if let Some((parent, declared)) = fixed {
                self.diagnostics.push(
                    Diagnostic::error(
                        Code::INVALID_COMPONENT,
                        format!(
                            "the component `{name}` overrides `{relation}` of `{}`, which is not `overridable`",
                            parent.name.text
                        ),
                    )
                    .with_primary(overridden.span, "overridden here")
                    .with_secondary(declared.span, "declared here without `overridable`")
                    .with_help(format!("add the qualifier `overridable` to the `.decl` of `{relation}`")),
                );
            }
        }
    }

    /// E0037 for components that inherit from each other (`members`, in source order).
    fn cycle(&self, members: &[usize]) -> Diagnostic {
        let names: Vec<String> = members.iter().map(|&m| format!("`{}`", self.component(m).name.text)).collect();
        let message = match names.as_slice() {
            [one] => format!("the component {one} inherits from itself"),
            _ => format!("the components {} inherit from each other", names.join(", ")),
        };
        let first = self.component(members[0]);
        let mut d = Diagnostic::error(Code::INVALID_COMPONENT, message)
            .with_primary(first.name.span, format!("`{}` is defined here", first.name.text))
            .with_help("a component's bases, and theirs, may not lead back to it: drop one of the bases");
        for &m in &members[1..] {
            let name = &self.component(m).name;
            d = d.with_secondary(name.span, format!("`{}` here", name.text));
        }
        d
    }

    /// E0037 for a component or an instance named as a type, a relation, a component or
    /// an instance of the program is named before it (Soufflé's "name clash").
    fn check_names(&mut self, program: &[Item]) {
        let mut taken: FxHashMap<&str, (&str, Span)> = FxHashMap::default();
        for item in program {
            match item {
                Item::Type(def) => {
                    taken.entry(&def.name.text).or_insert(("a type", def.name.span));
                }
                Item::Decl(decl) => {
                    for name in &decl.names {
                        taken.entry(&name.text).or_insert(("a relation", name.span));
                    }
                }
                _ => {}
            }
        }
        let components = self.global.iter().map(|&g| ("a component", &self.component(g).name));
        let instances = program.iter().filter_map(|item| match item {
            Item::Init(init) => Some(("an instance", &init.instance)),
            _ => None,
        });
        let mut clashes = Vec::new();
        for (kind, name) in components.collect::<Vec<_>>().into_iter().chain(instances) {
            match taken.get(name.text.as_str()) {
                Some(&(first, at)) => clashes.push(
                    Diagnostic::error(
                        Code::INVALID_COMPONENT,
                        format!("the name `{}` is taken twice: by {first} and by {kind}", name.text),
                    )
                    .with_primary(name.span, format!("{kind} here"))
                    .with_secondary(at, format!("{first} here"))
                    .with_help("give each component, instance, relation and type of the program its own name"),
                ),
                None => {
                    taken.insert(&name.text, (kind, name.span));
                }
            }
        }
        self.diagnostics.extend(clashes);
    }

    // ---- The expansion.

    /// The content of a top-level instance with the orphans left over, and the
    /// unsupported constructs its components hold (once each); none after an error.
    fn instantiate_program(&mut self, init: &Init) -> Option<(Vec<Piece>, Vec<tree::Unsupported>)> {
        let mut orphans = Vec::new();
        let mut unsupported = Vec::new();
        self.made = 0;
        let content = self.instantiate(init, None, &Binding::default(), &mut orphans, &mut unsupported, 0)?;
        let mut pieces = content;
        pieces.extend(orphans.into_iter().map(|o| o.piece));
        Some((pieces, unsupported))
    }

    /// The content of the instance `init` makes in `scope`, renamed with its name.
    fn instantiate(
        &mut self,
        init: &Init,
        scope: Option<usize>,
        binding: &Binding,
        orphans: &mut Vec<Orphan>,
        unsupported: &mut Vec<tree::Unsupported>,
        depth: usize,
    ) -> Option<Vec<Piece>> {
        if depth >= MAX_INSTANTIATION_DEPTH {
            self.diagnostics.push(too_deep(init.span));
            return None;
        }
        let Some(id) = self.lookup(scope, &init.component.name.text, binding) else {
            let bound = binding.find(&init.component.name.text);
            let mut d = unknown_component(&init.component, bound);
            if !self.path.is_empty() {
                d = d.with_note(format!("in instance `{}`", self.path.join(".")));
            }
            self.diagnostics.push(d);
            return None;
        };
        self.path.push(init.instance.text.clone());
        let content = self.instance_content(init, id, binding, orphans, unsupported, depth);
        self.path.pop();
        content
    }

    /// [`Expander::instantiate`] of the component `id`, found.
    fn instance_content(
        &mut self,
        init: &Init,
        id: usize,
        binding: &Binding,
        orphans: &mut Vec<Orphan>,
        unsupported: &mut Vec<tree::Unsupported>,
        depth: usize,
    ) -> Option<Vec<Piece>> {
        let component = self.component(id);
        let first_serial = self.serial;
        let arguments: Vec<&str> = init.component.arguments.iter().map(|a| a.text.as_str()).collect();
        let active = binding.extend(&component.parameters, &arguments);
        let mut content = Vec::new();
        for nested in instances(component) {
            let nested = self.instantiate(nested, Some(id), &active, orphans, unsupported, depth + 1)?;
            self.merge(&mut content, nested);
        }
        self.collect(
            id,
            &active,
            self.scopes[id].enclosing,
            &mut content,
            orphans,
            &FxHashSet::default(),
            unsupported,
            depth,
        )?;
        // Every type and relation the instance holds is renamed, and so is every use of
        // them in what it holds and in the orphans on their way out. So are the branches
        // of its algebraic data types, as Soufflé names them (`$inst.B`, in outputs too).
        let prefix = &init.instance.text;
        let qualified = |name: &str| format!("{prefix}.{name}");
        let mut types = FxHashMap::default();
        let mut relations = FxHashMap::default();
        let mut branches = FxHashMap::default();
        for piece in &content {
            match &piece.item {
                Item::Type(def) => {
                    types.insert(def.name.text.clone(), qualified(&def.name.text));
                    if let tree::TypeDefinition::Adt(shapes) = &def.definition {
                        for name in shapes.iter().filter_map(|shape| shape.name.as_ref()) {
                            branches.insert(name.text.clone(), qualified(&name.text));
                        }
                    }
                }
                Item::Decl(decl) => {
                    relations.insert(decl.names[0].text.clone(), qualified(&decl.names[0].text));
                }
                _ => {}
            }
        }
        let renaming = Renaming { types: &types, relations: &relations, branches: &branches };
        for piece in &mut content {
            renaming.item(&mut piece.item);
            piece.path.push(prefix.clone());
        }
        for orphan in orphans.iter_mut() {
            renaming.item(&mut orphan.piece.item);
            if orphan.serial >= first_serial {
                orphan.piece.path.push(prefix.clone());
            }
        }
        Some(content)
    }

    /// Adds `pieces` to `content`, but for an `.input` or `.printsize` of a relation that
    /// `content` already has one of (E0034, as Soufflé rejects it within an instance).
    fn merge(&mut self, content: &mut Vec<Piece>, pieces: Vec<Piece>) {
        for piece in pieces {
            if let Item::Io(io) = &piece.item {
                let relation = &io.relations[0];
                let first = content.iter().find_map(|p| match &p.item {
                    Item::Io(other) if other.kind == io.kind && other.relations[0].text == relation.text => {
                        Some(other.relations[0].span)
                    }
                    _ => None,
                });
                if let Some(first) = first.filter(|_| io.kind != tree::IoKind::Output) {
                    let directive = if io.kind == tree::IoKind::Input { ".input" } else { ".printsize" };
                    self.diagnostics.push(
                        Diagnostic::error(
                            Code::INVALID_DECLARATION,
                            format!("`{directive}` of `{}` is given twice in one instance", relation.text),
                        )
                        .with_primary(relation.span, "given again here")
                        .with_secondary(first, "first given here")
                        .with_help(format!("keep one `{directive}` of the relation"))
                        .with_note(format!("in instance `{}`", self.path.join("."))),
                    );
                    continue;
                }
            }
            content.push(piece);
        }
    }

    /// Adds to `content` what the component `id` holds with `binding`: its bases'
    /// content, then its own types, relations, directives and clauses (none of a relation
    /// `overridden` by a component deriving from it); adopts the orphans whose head it
    /// now holds.
    #[allow(clippy::too_many_arguments)]
    fn collect(
        &mut self,
        id: usize,
        binding: &Binding,
        enclosing: Option<usize>,
        content: &mut Vec<Piece>,
        orphans: &mut Vec<Orphan>,
        overridden: &FxHashSet<&'c str>,
        unsupported: &mut Vec<tree::Unsupported>,
        depth: usize,
    ) -> Option<()> {
        let component = self.component(id);
        let mut overridden_in_bases = overridden.clone();
        overridden_in_bases.extend(component.overrides.iter().map(|o| o.text.as_str()));
        for base in &component.bases {
            // A base that a type argument names and that does not exist is skipped, as
            // Soufflé skips it.
            let Some(base_id) = self.lookup(enclosing, &base.name.text, binding) else { continue };
            if depth + 1 >= MAX_INSTANTIATION_DEPTH {
                self.diagnostics.push(too_deep(base.span));
                return None;
            }
            let base_component = self.component(base_id);
            let arguments: Vec<&str> = base.arguments.iter().map(|a| a.text.as_str()).collect();
            let active = binding.extend(&base_component.parameters, &arguments);
            for nested in instances(base_component) {
                let nested = self.instantiate(nested, Some(base_id), &active, orphans, unsupported, depth + 1)?;
                self.merge(content, nested);
            }
            let base_enclosing = self.scopes[base_id].enclosing;
            self.collect(
                base_id,
                &active,
                base_enclosing,
                content,
                orphans,
                &overridden_in_bases,
                unsupported,
                depth + 1,
            )?;
        }
        let (first_made, first_orphan) = (content.len(), self.serial);
        let piece = |item: Item, origin: Span| Piece { item, path: Vec::new(), origin };
        for item in &component.items {
            match item {
                Item::Type(def) => {
                    let mut def = def.clone();
                    substitute(&mut def.name, binding);
                    if let tree::TypeDefinition::Subtype(from) | tree::TypeDefinition::Equal(from) = &mut def.definition
                    {
                        from.iter_mut().for_each(|member| substitute(member, binding));
                    }
                    let origin = item_span(item);
                    content.push(piece(Item::Type(def), origin));
                }
                Item::Decl(decl) => {
                    for name in &decl.names {
                        let mut one = decl.clone();
                        one.names = vec![name.clone()];
                        // They stand for directives of the program's (`qualifier_directives`).
                        one.io.clear();
                        one.attributes.iter_mut().for_each(|a| substitute(&mut a.ty, binding));
                        content.push(piece(Item::Decl(one), item_span(item)));
                    }
                }
                _ => {}
            }
        }
        for item in &component.items {
            if let Item::Io(io) = item {
                for relation in &io.relations {
                    let mut one = io.clone();
                    one.relations = vec![relation.clone()];
                    self.merge(content, vec![piece(Item::Io(one), item_span(item))]);
                }
            }
        }
        let held: FxHashSet<String> = content
            .iter()
            .filter_map(|p| match &p.item {
                Item::Decl(decl) => Some(decl.names[0].text.clone()),
                _ => None,
            })
            .collect();
        // Where the last clause's last head went: a `.plan` after the clause goes with it,
        // since it is read as the plan of the item before it.
        let mut last_clause: Option<bool> = None;
        let mut previous: Option<&Item> = None;
        for item in &component.items {
            let before = previous.replace(item);
            match item {
                Item::Clause(clause) => {
                    last_clause = None;
                    for head in &clause.heads {
                        let first = head.pred.text.split('.').next().unwrap_or_default();
                        if overridden.contains(first) {
                            continue;
                        }
                        let one = piece(
                            Item::Clause(tree::Clause { heads: vec![head.clone()], ..clause.clone() }),
                            clause.span,
                        );
                        let held_here = held.contains(&head.pred.text);
                        if held_here {
                            content.push(one);
                        } else {
                            orphans.push(Orphan { piece: one, serial: self.serial });
                            self.serial += 1;
                        }
                        last_clause = Some(held_here);
                    }
                }
                Item::Plan(plan) => {
                    let one = piece(Item::Plan(plan.clone()), plan.span);
                    match last_clause.take() {
                        Some(true) => content.push(one),
                        Some(false) => {
                            orphans.push(Orphan { piece: one, serial: self.serial });
                            self.serial += 1;
                        }
                        // A `.plan` after no clause is reported where it stands; one of
                        // a clause dropped by an override goes with it.
                        None if !matches!(before, Some(Item::Clause(_))) => content.push(one),
                        None => {}
                    }
                }
                Item::LimitSize(limit) => {
                    last_clause = None;
                    content.push(piece(Item::LimitSize(limit.clone()), item_span(item)));
                }
                Item::Unsupported(u) if !unsupported.contains(u) => unsupported.push(u.clone()),
                _ => {}
            }
        }
        self.made += content.len() - first_made + self.serial - first_orphan;
        if self.made > MAX_INSTANCE_ITEMS {
            let at = self.component(id).name.span;
            self.diagnostics.push(
                Diagnostic::error(
                    Code::INVALID_COMPONENT,
                    format!("an instance holds more than {MAX_INSTANCE_ITEMS} declarations, types, directives and clauses"),
                )
                .with_primary(at, "a component of it")
                .with_help("each instance of a component copies it: a component making several instances of one making several, and so on, doubles its size at each level"),
            );
            return None;
        }
        // A `.plan` orphan follows the clause before it.
        let mut clause_adopted = false;
        let (adopted, left): (Vec<Orphan>, Vec<Orphan>) =
            std::mem::take(orphans).into_iter().partition(|o| match &o.piece.item {
                Item::Clause(clause) => {
                    clause_adopted = held.contains(&clause.heads[0].pred.text);
                    clause_adopted
                }
                Item::Plan(_) => std::mem::take(&mut clause_adopted),
                _ => false,
            });
        *orphans = left;
        content.extend(adopted.into_iter().map(|o| o.piece));
        Some(())
    }
}

/// The directives that the I/O qualifiers of the `.decl`s in a component (and in those
/// it defines) stand for. Soufflé 2.5 adds them to the program as it reads the component,
/// naming the relations as the component does (`.decl r(x: number) output` in a
/// component is `.output r` of the program), whether the component is instantiated or
/// not; its instances' relations are not written by them.
fn qualifier_directives(component: &Component) -> Vec<Item> {
    let mut directives = Vec::new();
    let mut worklist = vec![component];
    while let Some(component) = worklist.pop() {
        for item in &component.items {
            match item {
                Item::Decl(decl) => {
                    for name in &decl.names {
                        // At the qualifier, which names the relation.
                        directives.extend(decl.io.iter().map(|&(kind, span)| {
                            let relation = ast::Name { text: name.text.clone(), span };
                            Item::Io(tree::IoDirective {
                                kind,
                                relations: vec![relation],
                                parameters: Vec::new(),
                                span,
                            })
                        }));
                    }
                }
                Item::Component(nested) => worklist.push(nested),
                _ => {}
            }
        }
    }
    directives
}

/// The `.init`s in a component's body.
fn instances(component: &Component) -> impl Iterator<Item = &Init> {
    component.items.iter().filter_map(|item| match item {
        Item::Init(init) => Some(init),
        _ => None,
    })
}

/// The relations a component's body declares, each with its declaration.
fn declarations(component: &Component) -> impl Iterator<Item = (&ast::Name, &tree::Decl)> {
    component.items.iter().flat_map(|item| match item {
        Item::Decl(decl) => decl.names.iter().map(|n| (n, decl)).collect(),
        _ => Vec::new(),
    })
}

/// `name` replaced by the argument of the type parameter it names, if it names one.
fn substitute(name: &mut ast::Name, binding: &Binding) {
    if let Some(argument) = binding.find(&name.text) {
        name.text = argument.to_string();
    }
}

/// From the start of an item of a component's body to its end, as far as its parts tell.
fn item_span(item: &Item) -> Span {
    match item {
        Item::Decl(decl) => {
            let first = decl.names[0].span;
            decl.attributes.last().map_or(first, |a| first.to(a.ty.span)).to(decl.names[decl.names.len() - 1].span)
        }
        Item::Type(def) => match &def.definition {
            tree::TypeDefinition::Subtype(from) | tree::TypeDefinition::Equal(from) => {
                from.last().map_or(def.name.span, |last| def.name.span.to(last.span))
            }
            _ => def.name.span,
        },
        Item::Io(io) => {
            let last = io.parameters.last().map(|p| p.span).or(io.relations.last().map(|r| r.span));
            last.map_or(io.span, |last| io.span.to(last))
        }
        Item::Clause(clause) => clause.span,
        Item::Plan(plan) => plan.span,
        Item::Pragma(pragma) => pragma.span,
        Item::Functor(decl) => decl.span,
        Item::Query(query) => query.span,
        Item::Component(component) => component.span,
        Item::Init(init) => init.span,
        Item::LimitSize(limit) => {
            let last = limit.relations.last().map(|r| r.span);
            last.map_or(limit.span, |last| limit.span.to(last))
        }
        Item::Unsupported(u) => u.span,
    }
}

/// The new names of an instance's types, relations and branches.
struct Renaming<'m> {
    types: &'m FxHashMap<String, String>,
    relations: &'m FxHashMap<String, String>,
    branches: &'m FxHashMap<String, String>,
}

impl Renaming<'_> {
    fn rename(map: &FxHashMap<String, String>, name: &mut ast::Name) {
        if let Some(new) = map.get(&name.text) {
            name.text = new.clone();
        }
    }

    fn item(&self, item: &mut Item) {
        match item {
            Item::Decl(decl) => {
                decl.names.iter_mut().for_each(|n| Self::rename(self.relations, n));
                decl.attributes.iter_mut().for_each(|a| Self::rename(self.types, &mut a.ty));
            }
            Item::Type(def) => {
                Self::rename(self.types, &mut def.name);
                match &mut def.definition {
                    tree::TypeDefinition::Subtype(from) | tree::TypeDefinition::Equal(from) => {
                        from.iter_mut().for_each(|member| Self::rename(self.types, member));
                    }
                    tree::TypeDefinition::Record(shape) => {
                        shape.fields.iter_mut().for_each(|(_, ty)| Self::rename(self.types, ty));
                    }
                    tree::TypeDefinition::Adt(branches) => {
                        for branch in branches.iter_mut() {
                            if let Some(name) = &mut branch.name {
                                Self::rename(self.branches, name);
                            }
                            branch.fields.iter_mut().for_each(|(_, ty)| Self::rename(self.types, ty));
                        }
                    }
                    _ => {}
                }
            }
            Item::Io(io) => io.relations.iter_mut().for_each(|r| Self::rename(self.relations, r)),
            Item::LimitSize(limit) => limit.relations.iter_mut().for_each(|r| Self::rename(self.relations, r)),
            Item::Clause(clause) => self.clause(clause),
            _ => {}
        }
    }

    /// Renames the relation of every atom of the clause (heads, body atoms, in groups and
    /// negations too, and the atoms of aggregates' bodies) and the type of every cast.
    fn clause(&self, clause: &mut tree::Clause) {
        let mut terms: Vec<&mut ast::Term> = Vec::new();
        for head in &mut clause.heads {
            Self::rename(self.relations, &mut head.pred);
            terms.extend(head.args.iter_mut());
        }
        let mut literals: Vec<&mut tree::Literal> = Vec::new();
        if let Some(body) = &mut clause.body {
            literals.extend(body.0.iter_mut().flat_map(|c| c.0.iter_mut()));
        }
        while let Some(literal) = literals.pop() {
            match literal {
                tree::Literal::Atom(atom) => {
                    Self::rename(self.relations, &mut atom.pred);
                    terms.extend(atom.args.iter_mut());
                }
                tree::Literal::Not { inner, .. } => literals.push(inner),
                tree::Literal::Group(group) => literals.extend(group.0.iter_mut().flat_map(|c| c.0.iter_mut())),
                tree::Literal::Compare(c) => terms.extend([&mut c.left, &mut c.right]),
                tree::Literal::Constant(_) => {}
            }
        }
        while let Some(term) = terms.pop() {
            match &mut term.kind {
                ast::TermKind::Unary { operand, .. } => terms.push(operand),
                ast::TermKind::Binary { left, right, .. } => terms.extend([&mut **left, &mut **right]),
                // The type a cast names, which the parser left as its second argument.
                ast::TermKind::Range { args, .. } => terms.extend(args.iter_mut()),
                ast::TermKind::Record { branch, args } => {
                    if let Some(new) = branch.as_ref().and_then(|b| self.branches.get(b)) {
                        *branch = Some(new.clone());
                    }
                    terms.extend(args.iter_mut());
                }
                ast::TermKind::Call { functor, args, .. } => {
                    for arg in args.iter_mut() {
                        match &mut arg.kind {
                            ast::TermKind::Ident(ty) if matches!(functor, ir::Functor::Cast(..)) => {
                                if let Some(new) = self.types.get(ty.as_str()) {
                                    *ty = new.clone();
                                }
                            }
                            _ => terms.push(arg),
                        }
                    }
                }
                ast::TermKind::Aggregate { value, body, .. } => {
                    terms.extend(value.as_deref_mut());
                    for literal in body {
                        match literal {
                            ast::Literal::Atom(atom) | ast::Literal::Negated { atom, .. } => {
                                Self::rename(self.relations, &mut atom.pred);
                                terms.extend(atom.args.iter_mut());
                            }
                            ast::Literal::Compare(c) => terms.extend([&mut c.left, &mut c.right]),
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// E0037 for a component not defined where `reference` names it; `bound` is what a type
/// parameter of that name stands for.
fn unknown_component(reference: &ComponentType, bound: Option<&str>) -> Diagnostic {
    let written = &reference.name.text;
    let name = bound.unwrap_or(written);
    let d = Diagnostic::error(Code::INVALID_COMPONENT, format!("the component `{name}` is not defined"))
        .with_primary(reference.name.span, "used here")
        .with_help(format!(
            "define it with `.comp {name} {{ ... }}`; a component defined in another is known there and in the components deriving from that one"
        ));
    match bound {
        Some(bound) => d.with_note(format!("`{written}` is a type parameter, given `{bound}` here")),
        None => d,
    }
}

/// E0037 where instances nest deeper than [`MAX_INSTANTIATION_DEPTH`].
fn too_deep(span: Span) -> Diagnostic {
    Diagnostic::error(
        Code::INVALID_COMPONENT,
        format!("components are instantiated more than {MAX_INSTANTIATION_DEPTH} levels deep"),
    )
    .with_primary(span, "the instance at that depth")
    .with_help("a component that instantiates itself, directly or through the components it instantiates or derives from, never ends")
}
