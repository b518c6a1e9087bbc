//! Soufflé's own syntax tree: a program as the parser read it, item by item, before any
//! check or desugaring. Constructs the dlc dialect has no equivalent for (disjunctions,
//! negated groups, several heads, `.type` definitions, I/O parameters, components and
//! their instances) are kept as written; a qualified name (`inst.r`, `a.b.T`) is one
//! [`ast::Name`] whose text holds the dots; each construct dlc does not support yet is one
//! [`Unsupported`] node, which the checks report at its span (one report per distinct
//! construct, counting its uses).
//!
//! Expressions are the native AST's terms ([`ast::Term`]), read by the one expression
//! grammar both dialects share (`crate::expr`); atoms, comparisons and queries are the
//! native AST's too, since Soufflé writes them as dlc does.

use super::IoFormat;
use super::JsonLayout;
use crate::ast;
use diag::Span;

/// A Soufflé program: its items in the order of the (preprocessed) text.
#[derive(Clone, Debug, Default)]
pub(super) struct Program {
    pub items: Vec<Item>,
}

/// One item of a program.
#[derive(Clone, Debug)]
pub(super) enum Item {
    Decl(Decl),
    Type(TypeDef),
    Io(IoDirective),
    Pragma(Pragma),
    /// `.functor f(x: number, s: symbol): number`: a functor the program calls as `@f(...)`.
    Functor(FunctorDecl),
    Clause(Clause),
    /// `.plan 0:(2,1), 1:(1,2)`: the join orders of the clause before it.
    Plan(Plan),
    /// `?- r(1, y).`: a query in the file.
    Query(ast::Query),
    /// `.comp`: a component, which `components` expands where it is instantiated.
    Component(Box<Component>),
    /// `.init`: an instance of a component.
    Init(Init),
    /// `.limitsize r(n=N)`: the most tuples the fixpoint of `r` grows to.
    LimitSize(LimitSize),
    Unsupported(Unsupported),
}

/// `.limitsize a, b(n=N)`: the fixpoint of each relation's stratum ends once the relation
/// holds `N` tuples or more (docs/semantics.md, Soufflé programs: `.limitsize`).
#[derive(Clone, Debug)]
pub(super) struct LimitSize {
    pub relations: Vec<ast::Name>,
    /// The `n` parameter.
    pub tuples: u64,
    /// The directive's word.
    pub span: Span,
}

/// `.comp Name<T, U> : Base<T>, Other { ... }`: a component, with its body as written.
#[derive(Clone, Debug)]
pub(super) struct Component {
    pub name: ast::Name,
    /// The type parameters `T`, `U`.
    pub parameters: Vec<ast::Name>,
    /// The components it inherits from, each with its type arguments.
    pub bases: Vec<ComponentType>,
    /// The body's declarations, types, I/O directives, clauses, nested components and
    /// instances, in order, with the unsupported constructs met in it.
    pub items: Vec<Item>,
    /// `.override r`: the relations whose clauses in the bases are dropped.
    pub overrides: Vec<ast::Name>,
    /// From `.comp` to the closing `}`.
    pub span: Span,
}

/// `Name<number, T>`: a component named with its type arguments (in an `.init` or as a
/// base of a `.comp`).
#[derive(Clone, Debug)]
pub(super) struct ComponentType {
    pub name: ast::Name,
    pub arguments: Vec<ast::Name>,
    /// From the name to the closing `>`.
    pub span: Span,
}

/// `.init inst = Name<number>`: an instance of a component, whose relations and types are
/// named `inst.r`, `inst.T`.
#[derive(Clone, Debug)]
pub(super) struct Init {
    pub instance: ast::Name,
    pub component: ComponentType,
    /// From `.init` to the end of the component's type.
    pub span: Span,
}

/// Which I/O directive: `.input`, `.output` or `.printsize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum IoKind {
    Input,
    Output,
    Printsize,
}

/// `.decl a, b(x: T, y: U) qualifiers`: one or more relations with the same attributes.
#[derive(Clone, Debug)]
pub(super) struct Decl {
    /// The relations declared, each with its span in the directive.
    pub names: Vec<ast::Name>,
    pub attributes: Vec<Attribute>,
    /// `input`, `output`, `printsize`: Soufflé's older form of the I/O directives, with
    /// the span of the qualifier (each kind once; a repeated one is reported by the parser).
    pub io: Vec<(IoKind, Span)>,
    /// The `inline` qualifier.
    pub inline: bool,
    /// The `no_inline` qualifier, which wins over `inline`.
    pub no_inline: bool,
    /// The `overridable` qualifier: a component deriving from the one declaring the
    /// relation may replace its clauses (`.override`).
    pub overridable: bool,
    /// The `eqrel` qualifier, where it is: the relation is an equivalence relation.
    pub eqrel: Option<Span>,
    /// The `choice-domain` qualifier and its keys.
    pub choice: Option<ChoiceKeys>,
}

/// `choice-domain x, (y, z)`: the keys, each one or more attribute names as written.
#[derive(Clone, Debug)]
pub(super) struct ChoiceKeys {
    pub keys: Vec<Vec<ast::Name>>,
    /// From `choice` to `domain`.
    pub span: Span,
}

/// An attribute of a `.decl`: its name and the name of its type.
#[derive(Clone, Debug)]
pub(super) struct Attribute {
    pub name: ast::Name,
    pub ty: ast::Name,
}

/// A `.type` (or `.number_type`, `.symbol_type`) definition.
#[derive(Clone, Debug)]
pub(super) struct TypeDef {
    pub name: ast::Name,
    pub definition: TypeDefinition,
}

/// What a type is defined as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum TypeDefinition {
    /// `.type T <: A` (or `<: A | B`): a subtype.
    Subtype(Vec<ast::Name>),
    /// `.type T = A` (another name of `A`) or `.type T = A | B` (a union).
    Equal(Vec<ast::Name>),
    /// `.number_type T`, `.symbol_type T`: a subtype of that primitive type.
    Primitive(&'static str),
    /// `.type T` alone, which Soufflé reads as `.type T <: symbol`.
    Bare,
    /// `.type T = [a: number, b: T]`: a record type.
    Record(RecordShape),
    /// `.type T = A {x: number} | B {}`: an algebraic data type, its branches in order,
    /// each with the branch's name as its first entry.
    Adt(Vec<RecordShape>),
    /// A definition the parser could not read (reported as a syntax error): the name is
    /// defined, from nothing.
    Unreadable,
}

/// The fields of a record type or of a branch: each name with its type's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct RecordShape {
    /// A branch's name; none for a record type.
    pub name: Option<ast::Name>,
    pub fields: Vec<(ast::Name, ast::Name)>,
    /// The `[` of a record type; a branch's name and `{`.
    pub span: Span,
}

/// `.input`, `.output` or `.printsize` of one or more relations, with its parameters.
#[derive(Clone, Debug)]
pub(super) struct IoDirective {
    pub kind: IoKind,
    pub relations: Vec<ast::Name>,
    /// `key=value` as written, in order (a quoted value unescaped).
    pub parameters: Vec<IoParameter>,
    /// The directive's word (`.input`, ...).
    pub span: Span,
}

impl IoDirective {
    /// What the parameters say, each read as Soufflé reads it, Soufflé's defaults where
    /// they say nothing. (The parser keeps no directive with a parameter dlc refuses.)
    pub fn settings(&self) -> IoSettings {
        let mut settings = IoSettings::default_for(self.kind);
        let mut delimiter = None;
        let mut objects = false;
        for parameter in &self.parameters {
            let value = &parameter.value;
            match parameter.key.text.as_str() {
                "IO" | "io" if value == "stdout" && self.kind != IoKind::Input => settings.stdout = true,
                // Soufflé 2.5 sets a `.printsize`'s `IO` to its own size printer whatever
                // the directive says: the size goes to standard output, never to a database.
                "IO" | "io" if value == "sqlite" && self.kind != IoKind::Printsize => settings.sqlite = true,
                // `IO=json` writes to standard output; `IO=jsonfile` to a file.
                "IO" | "io" if (value == "json" || value == "jsonfile") && self.kind != IoKind::Printsize => {
                    settings.json = Some(JsonLayout::List);
                    settings.stdout = value == "json";
                }
                "format" => objects = value == "object",
                "dbname" => settings.dbname = Some(value.clone()),
                "filename" => settings.filename = Some(value.clone()),
                "delimiter" => delimiter = Some(value.clone()),
                // Soufflé's readers and writers test for the text `true`; any other value
                // is `false`.
                "rfc4180" => settings.format.rfc4180 = value == "true",
                "headers" => settings.format.headers = value == "true",
                "compress" => settings.compress = self.kind == IoKind::Output,
                "attributeNames" => settings.attribute_names = Some(value.clone()),
                _ => {}
            }
        }
        // A header line joins the attribute names with the delimiter given, otherwise a
        // tab (also under `rfc4180=true`), as Soufflé joins them.
        if objects {
            settings.json = settings.json.map(|_| JsonLayout::Object);
        }
        let default = if settings.format.rfc4180 { "," } else { "\t" };
        settings.delimiter = delimiter.clone().unwrap_or_else(|| default.to_string());
        settings.names_delimiter = delimiter.unwrap_or_else(|| "\t".to_string());
        settings
    }
}

/// The IO parameters of Soufflé 2.5 that dlc knows: those it reads or writes by
/// (`dbname` only under `IO=sqlite`). Any other parameter is ignored with a warning
/// naming the nearest of these, as Soufflé ignores it silently.
pub(super) const IO_PARAMETERS: &[&str] =
    &["IO", "filename", "delimiter", "rfc4180", "headers", "compress", "attributeNames", "dbname", "columns", "format"];

/// One `key=value` parameter of an I/O directive.
#[derive(Clone, Debug)]
pub(super) struct IoParameter {
    pub key: ast::Name,
    pub value: String,
    /// From the key to the value.
    pub span: Span,
}

impl IoParameter {
    /// Why dlc refuses this parameter in a directive of `kind`, if it does: as the
    /// description of the construct it does not support.
    pub fn refused(&self, kind: IoKind) -> Option<String> {
        match self.key.text.as_str() {
            "IO" | "io" => match self.value.as_str() {
                "file" => None,
                "stdout" if kind != IoKind::Input => None,
                // A `.printsize` prints its count whatever `IO` says.
                "sqlite" => None,
                "jsonfile" => None,
                // `.input r(IO=json)` reads standard input.
                "json" if kind != IoKind::Input => None,
                other => Some(format!("`IO={other}`")),
            },
            // It picks and orders the columns of an input file; writers ignore it.
            "columns" if kind == IoKind::Input => Some("the `.input` parameter `columns`".to_string()),
            _ => None,
        }
    }

    /// Whether Soufflé 2.5 knows the parameter (`dbname` outside `IO=sqlite`, and
    /// `columns` of an output, are known and ignored).
    pub fn known(&self) -> bool {
        self.key.text == "io" || IO_PARAMETERS.contains(&self.key.text.as_str())
    }
}

/// What the parameters of an I/O directive say (Soufflé's defaults where they say
/// nothing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct IoSettings {
    pub filename: Option<String>,
    pub delimiter: String,
    pub stdout: bool,
    pub format: IoFormat,
    pub compress: bool,
    pub attribute_names: Option<String>,
    pub names_delimiter: String,
    pub sqlite: bool,
    pub dbname: Option<String>,
    /// `IO=json` or `IO=jsonfile`, with its layout (`format=object` or not).
    pub json: Option<JsonLayout>,
}

impl IoSettings {
    /// The settings of a directive without parameters (and of an I/O qualifier of a
    /// `.decl`): a tab-separated file, or standard output for `.printsize`.
    pub fn default_for(kind: IoKind) -> Self {
        IoSettings {
            filename: None,
            delimiter: "\t".to_string(),
            stdout: kind == IoKind::Printsize,
            format: IoFormat::default(),
            compress: false,
            attribute_names: None,
            names_delimiter: "\t".to_string(),
            sqlite: false,
            dbname: None,
            json: None,
        }
    }
}

/// `.functor name(x: number, s: symbol): symbol`, or with the parameters' types alone
/// (`.functor name(number, symbol): symbol`), as Soufflé reads both.
#[derive(Clone, Debug)]
pub(super) struct FunctorDecl {
    pub name: ast::Name,
    /// The parameters' type names, in order.
    pub params: Vec<ast::Name>,
    /// The result's type name.
    pub result: ast::Name,
    /// The qualifier `stateful`, if written: the function then takes Soufflé's own
    /// symbol and record tables.
    pub stateful: Option<Span>,
    /// From `.functor` to the result's type (or `stateful`).
    pub span: Span,
}

/// `.pragma "key" "value"`: an option of Soufflé's own run.
#[derive(Clone, Debug)]
pub(super) struct Pragma {
    /// The quoted key, unescaped, when the pragma starts with one.
    pub key: Option<String>,
    /// The quoted value after the key, unescaped, if any.
    pub value: Option<String>,
    /// The `.pragma` directive.
    pub span: Span,
}

/// `.plan version:(atom, ...), ...`: a join order for versions of the clause before it.
#[derive(Clone, Debug)]
pub(super) struct Plan {
    /// The `.plan` directive.
    pub span: Span,
    /// Each version's number (and where it is) and how many atoms its order lists.
    pub orders: Vec<PlanOrder>,
}

/// `version:(atom, ...)` of a `.plan`.
#[derive(Clone, Debug)]
pub(super) struct PlanOrder {
    pub version: u64,
    pub version_span: Span,
    pub atoms: usize,
    /// The order in parentheses.
    pub order_span: Span,
}

/// `h1(..), h2(..) :- body.`, or the facts `f(..), g(..).` (no body).
#[derive(Clone, Debug)]
pub(super) struct Clause {
    pub heads: Vec<ast::Atom>,
    pub body: Option<Disjunction>,
    pub span: Span,
    /// The `<=` of a subsumptive clause `r(a..) <= r(b..) :- body.`, which is held as
    /// `r(a..) :- r(a..), r(b..), (body).`: one head, the dominated atom, and a body whose
    /// every alternative reads the dominated and then the dominating atom first.
    pub subsumes: Option<Span>,
}

/// `conj ; conj ; ...`: one or more alternatives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Disjunction(pub Vec<Conjunction>);

/// `lit, lit, ...`
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Conjunction(pub Vec<Literal>);

/// A literal of a body as Soufflé writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Literal {
    Atom(ast::Atom),
    /// `!lit`: a negated atom, comparison or group; `bang` is the first `!` (an even run
    /// of `!` cancels out and is no node).
    Not {
        bang: Span,
        inner: Box<Literal>,
    },
    /// `( disjunction )`.
    Group(Disjunction),
    /// A constraint `x < y`, `x = y + 1`, `c = count : { e(_) }` (aggregates are terms).
    Compare(ast::Comparison),
    /// `true` or `false`.
    Constant(bool),
}

/// A construct dlc does not support yet, where it is: reported as E0018, once per
/// distinct construct, by the checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Unsupported {
    pub construct: Construct,
    pub span: Span,
}

/// The kinds of construct dlc does not support.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Construct {
    /// `.functor ... stateful`: a functor given Soufflé's symbol and record tables.
    StatefulFunctor,
    /// Any other directive dlc does not read (`.limitsize`, `.lattice`, ...).
    Directive(String),
    /// Any other construct inside a clause or a directive, by its description (a functor,
    /// a record, an I/O parameter value, an expansion past a bound, ...).
    Other(String),
}

impl Construct {
    /// How a report names the construct: "`{it}` is not supported".
    pub fn describe(&self) -> String {
        match self {
            Construct::StatefulFunctor => "a stateful functor (`stateful`)".to_string(),
            Construct::Directive(directive) => format!("the directive `{directive}`"),
            Construct::Other(description) => description.clone(),
        }
    }
}

impl From<&str> for Construct {
    fn from(description: &str) -> Self {
        Construct::Other(description.to_string())
    }
}

impl From<String> for Construct {
    fn from(description: String) -> Self {
        Construct::Other(description)
    }
}
