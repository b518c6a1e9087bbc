//! The table of error codes: one place, so codes are never reused or invented ad hoc.
//! A test in the binary's suite checks that every code has a fixture triggering it.

use std::fmt;

/// An error or warning code such as `E0003`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Code(pub &'static str);

impl Code {
    /// The default one-line help of this code.
    pub fn help(self) -> &'static str {
        CODES.iter().find(|(c, _, _)| c.0 == self.0).map_or("", |(_, _, help)| help)
    }

    /// The help line of this code for a Soufflé program, where the default one shows
    /// dlc's syntax (`Q(X) <- E(X)`, quoting upper-case values), if it does.
    pub fn souffle_help(self) -> Option<&'static str> {
        SOUFFLE_HELP.iter().find(|(c, _)| c.0 == self.0).map(|(_, help)| *help)
    }

    /// The short title of this code.
    pub fn title(self) -> &'static str {
        CODES.iter().find(|(c, _, _)| c.0 == self.0).map_or("", |(_, title, _)| title)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

macro_rules! codes {
    ($($name:ident = $code:literal, $title:literal, $help:literal;)*) => {
        impl Code { $(pub const $name: Code = Code($code);)* }
        /// Every code with its title and default help line.
        pub const CODES: &[(Code, &str, &str)] = &[$((Code($code), $title, $help),)*];
    };
}

codes! {
    PARSE = "E0001", "syntax error",
        "a rule is `Head(X) <- Body(X, Y), ...`; a query is `?- R(a, Y).`";
    RESERVED_NAME = "E0002", "reserved name",
        "names starting with `@` are reserved for generated predicates; rename it";
    UNSAFE_RULE = "E0003", "unsafe rule",
        "every head variable must also occur in a body atom";
    ARITY_MISMATCH = "E0004", "arity mismatch",
        "use the same number of arguments everywhere the predicate appears";
    EDB_HEADS_RULE = "E0005", "input predicate used as a rule head",
        "an EDB (input) predicate may not head a rule; rename one of them";
    ANON_IN_HEAD = "E0006", "anonymous variable in head",
        "`_` matches anything and has no value; name the variable and bind it in the body";
    QUERY_UNKNOWN = "E0007", "query on an unknown predicate",
        "query a predicate defined by a rule of the program";
    QUERY_EDB = "E0008", "query on an input predicate",
        "queries name a derived (IDB) predicate; add a rule `Q(X) <- E(X)` to query input facts";
    MULTIPLE_QUERIES = "E0009", "more than one query",
        "dlc compiles one selection query at a time; keep one `?-` line or pass `--query`";
    NO_QUERY = "E0010", "no query",
        "add a line `?- R(a, Y).` to the program or pass `--query 'R(a, Y)'`";
    NON_GROUND_FACT = "E0011", "non-ground fact",
        "input facts contain constants only; quote upper-case values: \"Alice\"";
    UNREADABLE_FILE = "E0012", "cannot read input",
        "check the path and its permissions";
    BAD_FACTS_LINE = "E0013", "malformed facts line",
        "each line holds one tuple: `E(a,b).`, or fields separated by a tab (.tsv/.facts) or comma (.csv)";
    BAD_UPDATE = "E0014", "malformed update",
        "an update line is `+E(a,b).` (insert) or `-E(a,b).` (delete); `;` or a blank line ends a batch";
    UPDATE_IDB = "E0015", "update of a derived predicate",
        "only input (EDB) facts can be inserted or deleted; derived facts follow from them";
    ADORNMENT_LIMIT = "E0016", "too many adorned predicates",
        "raise the limit with `--max-adornments N`, or let `--magic auto` (the default) or `--magic off` evaluate the original program";
    RESOURCE_LIMIT = "E0017", "relation too large",
        "raise the memory budget with `--max-memory SIZE` (or the tuple limit, `--max-tuples N`) if the machine has the memory";
    UNSUPPORTED_SOUFFLE = "E0018", "unsupported construct",
        "dlc does not run this construct (README lists what it runs and where it differs from Soufflé); rewrite this part, or run the program with Soufflé";
    UNDECLARED_RELATION = "E0019", "relation not declared",
        "a Soufflé program declares every relation it uses: `.decl r(x:symbol, y:number)`";
    DECLARED_TWICE = "E0020", "relation declared twice",
        "declare each relation once; remove one `.decl`";
    UNWRITABLE_OUTPUT = "E0021", "cannot write output",
        "-D names a directory dlc may create or write to; `-D -` prints to standard output";
    NEGATION_CYCLE = "E0022", "cycle through negation",
        "a predicate cannot depend on the negation of itself; stratify the program so every negated predicate is computed first";
    UNBOUND_IN_CONSTRAINT = "E0023", "unbound variable in a negation or comparison",
        "bind the variable with a positive atom of the body or an assignment `X = ...`, or write `_` for \"any value\" in a negated atom";
    NOT_AN_INTEGER = "E0024", "ordering comparison on a non-integer",
        "`<`, `<=`, `>` and `>=` compare 32-bit integers; compare symbols with `=` or `!=`";
    TYPE_CYCLE = "E0025", "cyclic type definition",
        "define one of the types from `symbol`, `number` or `unsigned`: `.type A <: symbol`";
    DIFFERENTIAL_UNSUPPORTED = "E0026", "program the differential engine cannot run",
        "evaluate it with the native engine (`--engine seminaive`); rows hold at most 8 values";
    CLUSTER = "E0027", "the processes of a cluster could not run together",
        "start every process with the same command line but `--process I`, each address of --hosts reachable from every process";
    TYPE_MISMATCH = "E0028", "numbers and symbols mixed",
        "a column, and a variable, holds either numbers or symbols: write `5` for a number and `\"5\"` or `five` for a symbol, and keep one kind per column";
    NUMBER_OUT_OF_RANGE = "E0029", "number out of range",
        "a `number` is a 32-bit signed integer (-2147483648 to 2147483647), an `unsigned` a 32-bit unsigned one (0 to 4294967295)";
    ARITHMETIC_ON_SYMBOL = "E0030", "arithmetic on a symbol",
        "arithmetic computes with numbers: keep symbols out of it, or make the column a number column (`5`, not `\"5\"`)";
    DIVISION_BY_ZERO = "E0031", "constant expression without a value",
        "a division or modulo by zero (or of -2147483648 by -1), or `to_number` of a text that writes no integer, has no value; change the constant";
    NEGATED_UNSIGNED = "E0032", "unary minus on an unsigned value",
        "an `unsigned` has no negative values: subtract from a value instead (`0 - x` wraps around), or use a `number`";
    AGGREGATE_CYCLE = "E0033", "cycle through an aggregate",
        "an aggregate reads complete relations: its body may not depend on the rule's own head; compute what it reads in rules that do not";
    INVALID_DECLARATION = "E0034", "invalid declaration",
        "Soufflé rejects this `.decl` or `.type`: give each attribute, type and qualifier once, and build a union type from types of one kind (all symbols or all numbers)";
    SUBTYPE_MISMATCH = "E0035", "values of unrelated types",
        "a variable holds values of one type: bind it in columns whose types share values (one a subtype of the other), and write it to a column of a type it is a subtype of";
    INLINE_RESTRICTION = "E0036", "relation that cannot be inlined",
        "an `inline` relation is unfolded into the rules that use it: it may not be recursive, read or written, aggregated over, or negated with variables of its own";
    INVALID_COMPONENT = "E0037", "invalid component",
        "`.init inst = Name<number>` instantiates a component defined where it is used, with one type argument per parameter; components may not inherit from themselves, and `.override r` names a relation a base declares `overridable`";
    UNKNOWN_CAST_TYPE = "E0038", "cast to an unknown type",
        "`as(x, T)` takes the value of `x` as one of type `T`, its bits unchanged: `T` is `number`, `unsigned`, `float`, `symbol` or a type the program defines with `.type`";
    INVALID_SUBSUMPTION = "E0039", "invalid subsumptive clause",
        "a subsumptive clause `r(x, d1) <= r(x, d2) :- d2 <= d1.` compares two facts of one relation: both atoms name it, and its constraints read only variables that its atoms bind";
    SIZE_LIMIT_UNSUPPORTED = "E0040", "size limit that cannot be kept",
        "a `.limitsize` ends a fixpoint where Soufflé's evaluation of the whole program ends it: run the program without a query, update batches or the differential engine, or drop the `.limitsize`";
    CHOICE_DOMAIN = "E0041", "`choice-domain` that cannot be kept",
        "a `choice-domain` keeps one tuple per key of what rules derive: give it to a derived relation that is not an `eqrel` and not read with `.input`, and evaluate it with the native engines, whose rounds decide which tuple is chosen";
    INVALID_FUNCTOR = "E0043", "invalid user-defined functor",
        "declare each functor once, `.functor f(x: number, s: symbol): number`, with the types `number`, `unsigned`, `float` and `symbol` (or types defined from them), and call it with `@f(...)` and as many arguments";
    FUNCTOR_NOT_LOADED = "E0044", "user-defined functor not found",
        "pass the shared library that defines the functor's C function as Soufflé takes it: `-L DIR -l NAME` loads `DIR/libNAME.so`";
    INVALID_RECORD = "E0045", "invalid record",
        "a record `[a, b]` has one value per field of its record type, `$Branch(a, b)` one per field of a branch an algebraic data type declares, and its place (a column, a variable of one) gives its type";
    RECURSIVE_EXTREMUM = "E0046", "recursive `min` or `max` that cannot be kept",
        "a `min` (`max`) over its rule's own recursion keeps the least (greatest) value per group: every relation of the recursion is such a relation, and each value read from it is used once, in `+`, `-` of a value the recursion does not give, `min` and `max`";
    IMPROVING_CYCLE = "E0047", "recursive `min` or `max` that improves for ever",
        "a cycle of the recursion gives a better value each time round (a negative cycle of a shortest path): remove the cycle from the input, or bound the value";
    UNDEFINED_PREDICATE = "W0001", "predicate has no rules and no facts",
        "this atom can never match; define the predicate or provide its facts";
    UNUSED_INPUT = "W0002", "input for a predicate the program does not use",
        "facts files are named after their predicate (`E.facts` holds `E`); check the file name";
    ATOM_IN_DELIMITED_FILE = "W0003", "atom in a delimited facts file",
        "a file of atoms `E(a,b).` needs an extension other than .facts, .tsv or .csv, such as .dl";
    PRAGMA_IGNORED = "W0004", "pragma ignored",
        "dlc reads its options from the command line: pass `-F`/`-D` (or the flag the pragma stands for) instead";
    UNREAD_DIRECTORY_ENTRY = "W0005", "facts directory entry not read",
        "a facts directory holds `<Pred>.facts`/`.tsv` (tab-separated) and `<Pred>.csv` files";
    DEPRECATED_SOUFFLE = "W0006", "deprecated Soufflé syntax",
        "Soufflé 2.5 still reads this older form and warns about it; dlc reads it the same way";
    UNKNOWN_IO_PARAMETER = "W0007", "unknown IO parameter",
        "Soufflé's IO parameters are `IO`, `filename`, `delimiter`, `rfc4180`, `headers`, `compress`, `attributeNames`, `dbname` and `columns`";
    PREPROCESSOR_WARNING = "W0008", "preprocessor warning",
        "a `#warning` in a section that is read prints its text and the program runs on, as the C preprocessor Soufflé runs does";
    PATTERN_MATCHES_NOTHING = "W0009", "regular expression that matches nothing",
        "`match` reads its pattern in the `regex` crate's syntax, which Soufflé's patterns mostly share (there are no backreferences or lookaround); a pattern that does not compile makes both `match` and `!match` false, as in Soufflé";
    INVALID_PLAN = "W0010", "invalid query plan",
        "a `.plan` follows a recursive clause and gives, for a version the clause has (one per body atom recursive with its head, from 0), an order of all its body atoms (numbered from 1); Soufflé rejects this plan; dlc reads it, warns and chooses its own order, so the program still runs";
}

/// Help lines for Soufflé programs, where the default help would show dlc's syntax.
const SOUFFLE_HELP: &[(Code, &str)] = &[
    (Code::PARSE, "a rule is `h(x, z) :- a(x, y), b(y, z).`; a query is `?- r(1, y).` or `--query 'r(1, y)'`"),
    (Code::QUERY_EDB, "queries name a derived relation; add a rule `q(x) :- e(x).` to query input facts"),
    (Code::NON_GROUND_FACT, "facts contain constants only: numbers, or strings in double quotes: \"alice\""),
    (
        Code::BAD_FACTS_LINE,
        "an `.input` file holds one tuple per line, tab-separated unless its `delimiter` parameter says otherwise",
    ),
    (Code::EDB_HEADS_RULE, "a relation is either read with `.input` or derived by rules; rename one of them"),
];
