//! Soufflé's `IO=sqlite`: an `.input` read from, and an `.output` written to, an SQLite
//! database laid out as Soufflé 2.5 lays it out, so that a database either writes the
//! other reads. What follows is read from Soufflé's `src/include/souffle/io/`
//! `ReadStreamSQLite.h` and `WriteStreamSQLite.h`.
//!
//! - The database file is the `filename` parameter, else `dbname`, else `<Rel>.sqlite`;
//!   a name that is not absolute is taken in the fact directory (`-F`) for an `.input`
//!   and in the output directory (`-D`) for an `.output`, and a name starting with
//!   `file:` (an SQLite URI) or `:memory:` as it is.
//! - A relation `r` of arity n is written to the table `_r`, its columns named `0` to
//!   `n-1`, all `INTEGER`, with a primary key of all columns `WITHOUT ROWID` while
//!   `9n + 1 < 200` (a rowid table otherwise); writing empties the table first. A
//!   number (and an `unsigned`) is stored as the 32-bit value of Soufflé's default build,
//!   so an `unsigned` from 2^31 up is stored negative; a symbol as the `id` of its row in
//!   the table `__SymbolTable (id INTEGER PRIMARY KEY, symbol TEXT UNIQUE)`, which the
//!   relations of one database share.
//! - Beside it the view `r` shows the rows with each symbol's text: its columns are named
//!   after the declared attributes, a symbol column joined with `__SymbolTable`.
//! - Reading `r` selects every row of the table or view named `r` (the view Soufflé
//!   writes, or a table of one's own). A symbol column takes the text of the value (a
//!   `NULL` or empty one is the symbol `n/a`, as in Soufflé), a number column an integer
//!   or the text of one.
//!
//! Where Soufflé accepts more, dlc reports: a row of another number of columns than the
//! relation's arity (Soufflé reads missing columns as `n/a`), a `REAL` or `BLOB` value,
//! a number written with trailing text (Soufflé reads `12abc` as 12), a nullary
//! relation's `.output` (Soufflé's `CREATE TABLE` of no columns fails), and an `.input`
//! database that does not exist (Soufflé creates an empty one and then finds no table).

use diag::{Code, Diagnostic, Span};
use ir::{PredId, Program, ValueType};
use pipeline::SelectedRows;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use syntax::FactSink;

/// The table of the symbols of every relation of a database.
const SYMBOL_TABLE: &str = "__SymbolTable";

/// The database file of an `IO=sqlite` directive of relation `rel`, in `dir` (the fact
/// directory of an `.input`, the output directory of an `.output`).
pub fn database_path(io: &syntax::souffle::Io, dir: &Path, rel: &str) -> PathBuf {
    let name = io.filename.clone().or_else(|| io.dbname.clone()).unwrap_or_else(|| format!("{rel}.sqlite"));
    if name.starts_with("file:") || name.starts_with(":memory:") {
        PathBuf::from(name)
    } else {
        // `join` keeps an absolute name as it is.
        dir.join(name)
    }
}

/// Whether `path` is an SQLite URI or the in-memory database, not a file's name.
pub(crate) fn is_uri(path: &Path) -> bool {
    let text = path.to_string_lossy();
    text.starts_with("file:") || text.starts_with(":memory:")
}

/// Reads the rows of the `.input` relation `io.pred` from the table or view named after
/// it in the database `path`, handing each to `sink` (the directive's span standing for
/// the row). A database that cannot be opened or lacks the table is E0012; a row of
/// another number of columns, or a value a column cannot take, is E0013, and reading
/// stops at it. Returns the size of the database file read, if it was read.
pub fn read_relation(
    io: &syntax::souffle::Io,
    path: &Path,
    program: &mut Program,
    diagnostics: &mut Vec<Diagnostic>,
    sink: &mut dyn FactSink,
) -> Option<u64> {
    let rel = program.pred_name(io.pred);
    let shown = path.display().to_string();
    let directive = |d: Diagnostic| d.with_secondary(io.span, format!("`.input {rel}` reads it"));
    let unreadable = |why: String| {
        let help = format!(
            "`.input {rel}(IO=sqlite)` reads the table or view `{rel}` of the database named by `filename` or \
             `dbname` (by default `{rel}.sqlite`), in the fact directory -F"
        );
        directive(Diagnostic::error(Code::UNREADABLE_FILE, format!("cannot read `{shown}`: {why}")).with_help(help))
    };
    // Read-only: a missing file is reported, not created empty.
    if !is_uri(path) && !path.is_file() {
        let why = if path.exists() { "it is not a file" } else { "no such file" };
        diagnostics.push(unreadable(why.to_string()));
        return None;
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let db = match Connection::open_with_flags(path, flags) {
        Ok(db) => db,
        Err(e) => {
            diagnostics.push(unreadable(e.to_string()));
            return None;
        }
    };
    let found: Result<i64, _> = db.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?1",
        [&rel],
        |row| row.get(0),
    );
    match found {
        Ok(0) => {
            diagnostics.push(unreadable(format!("it has no table or view `{rel}`")));
            return None;
        }
        Ok(_) => {}
        Err(e) => {
            diagnostics.push(unreadable(e.to_string()));
            return None;
        }
    }
    let arity = program.pred(io.pred).arity;
    let types = program.pred(io.pred).types.clone();
    let mut select = match db.prepare(&format!("SELECT * FROM '{rel}'")) {
        Ok(select) => select,
        Err(e) => {
            diagnostics.push(unreadable(e.to_string()));
            return None;
        }
    };
    let columns = select.column_count();
    // A nullary relation holds its one tuple when the table has a row, whatever its
    // columns, as Soufflé reads it.
    if arity > 0 && columns != arity {
        let message = format!("`{rel}` in `{shown}` has {columns} column(s); `{rel}` has {arity}");
        let help = "the table or view holds one column per attribute of the relation, in the declared order";
        diagnostics.push(directive(Diagnostic::error(Code::BAD_FACTS_LINE, message).with_help(help)));
        return None;
    }
    let bad_value = |row: usize, column: usize, why: String| {
        let message = format!("row {row} of `{rel}` in `{shown}`, column {}: {why}", column + 1);
        let help = "a symbol column holds text or an integer; a number column an integer (32 bits) or its text";
        directive(Diagnostic::error(Code::BAD_FACTS_LINE, message).with_help(help))
    };
    let mut rows = match select.query([]) {
        Ok(rows) => rows,
        Err(e) => {
            diagnostics.push(unreadable(e.to_string()));
            return None;
        }
    };
    let mut consts = program.consts.interning();
    let mut values: Vec<u32> = Vec::with_capacity(arity);
    let mut number = 0;
    loop {
        let row = match rows.next() {
            Ok(Some(row)) => row,
            Ok(None) => break,
            Err(e) => {
                diagnostics.push(unreadable(e.to_string()));
                return None;
            }
        };
        number += 1;
        values.clear();
        for (column, &ty) in types.iter().enumerate() {
            let value = match row.get_ref(column) {
                Ok(value) => value,
                Err(e) => {
                    diagnostics.push(bad_value(number, column, e.to_string()));
                    return None;
                }
            };
            let read = match ty {
                ValueType::Symbol => symbol_text(value).map(|text| consts.intern(&text).0),
                ty => number_value(ty, value),
            };
            match read {
                Ok(raw) => values.push(raw),
                Err(why) => {
                    diagnostics.push(bad_value(number, column, why));
                    return None;
                }
            }
        }
        sink.fact(io.pred, &values, io.span);
    }
    Some(std::fs::metadata(path).map_or(0, |m| m.len()))
}

/// The text of a value of a symbol column, as Soufflé takes it (`sqlite3_column_text`):
/// `n/a` for `NULL` and the empty text.
fn symbol_text(value: ValueRef<'_>) -> Result<String, String> {
    match value {
        ValueRef::Null | ValueRef::Text([]) => Ok("n/a".to_string()),
        ValueRef::Integer(n) => Ok(n.to_string()),
        ValueRef::Text(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => Ok(text.to_string()),
            Err(_) => Err("the text is not UTF-8".to_string()),
        },
        ValueRef::Real(x) => Err(format!("the REAL value {x}, in a symbol column")),
        ValueRef::Blob(_) => Err("a BLOB, in a symbol column".to_string()),
    }
}

/// The raw value of a number (`ty` `number`, `unsigned`, or `float` as its bits) from an
/// integer or the text of one. Soufflé reads both through a 32-bit signed integer, so an `unsigned` column takes
/// the negative values its writer stores (from 2^31 up) as well as 0 to 2^32 - 1.
fn number_value(ty: ValueType, value: ValueRef<'_>) -> Result<u32, String> {
    let n = match value {
        ValueRef::Integer(n) => n,
        ValueRef::Text(bytes) => {
            let text = String::from_utf8_lossy(bytes);
            match text.trim().parse::<i64>() {
                Ok(n) => n,
                Err(_) => return Err(format!("`{text}` is not an integer, in a {} column", ty.name())),
            }
        }
        ValueRef::Null => return Err(format!("NULL, in a {} column", ty.name())),
        ValueRef::Real(x) => return Err(format!("the REAL value {x}, in a {} column", ty.name())),
        ValueRef::Blob(_) => return Err(format!("a BLOB, in a {} column", ty.name())),
    };
    let raw = match ty {
        ValueType::Unsigned if n >= 0 => u32::try_from(n).ok(),
        _ => i32::try_from(n).ok().map(|n| n as u32),
    };
    raw.ok_or_else(|| format!("{n} is outside the range of a {}", ty.name()))
}

/// Writes the rows of `pred` to the database `path` as Soufflé does (see the module's
/// documentation), its view's columns named `attributes` (or by number); returns the
/// number of rows. The rows go in one transaction, in the order of `-D` files.
pub fn write_relation(
    path: &Path,
    program: &Program,
    pred: PredId,
    rows: SelectedRows<'_>,
    attributes: Option<&[String]>,
) -> Result<usize, String> {
    let rel = program.pred_name(pred);
    let arity = rows.arity();
    if arity == 0 {
        return Err(format!(
            "`{rel}` has no attributes, and an SQLite table has at least one column (Soufflé fails on it too)"
        ));
    }
    if !is_uri(path) {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
    }
    let types: Vec<ValueType> = (0..arity).map(|i| program.column_type(pred, i)).collect();
    let mut db = Connection::open(path).map_err(|e| e.to_string())?;
    let sql = |e: rusqlite::Error| e.to_string();
    db.execute_batch("PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY;").map_err(sql)?;
    db.execute_batch(&create_table_sql(&rel, arity)).map_err(sql)?;
    db.execute_batch(&format!("DELETE FROM '_{rel}';")).map_err(sql)?;
    db.execute_batch(&create_view_sql(&rel, &types, attributes)).map_err(sql)?;
    db.execute_batch(&format!(
        "CREATE TABLE IF NOT EXISTS '{SYMBOL_TABLE}' (id INTEGER PRIMARY KEY, symbol TEXT UNIQUE);"
    ))
    .map_err(sql)?;
    let transaction = db.transaction().map_err(sql)?;
    let mut count = 0;
    {
        let placeholders: Vec<String> = (0..arity).map(|i| format!("@V{i}")).collect();
        let mut insert =
            transaction.prepare(&format!("INSERT INTO '_{rel}' VALUES ({});", placeholders.join(","))).map_err(sql)?;
        let mut insert_symbol =
            transaction.prepare(&format!("INSERT INTO {SYMBOL_TABLE} VALUES(null,@V0);")).map_err(sql)?;
        let mut select_symbol =
            transaction.prepare(&format!("SELECT id FROM {SYMBOL_TABLE} WHERE symbol = @V0;")).map_err(sql)?;
        let texts = program.consts.texts();
        // The id of each symbol in the database, by the symbol's constant.
        let mut ids: HashMap<u32, i64> = HashMap::new();
        let mut symbol_id = |v: u32| -> rusqlite::Result<i64> {
            if let Some(&id) = ids.get(&v) {
                return Ok(id);
            }
            let text = texts.text(ir::Const(v));
            // A symbol an earlier relation wrote is there already: its row is selected.
            let id = match insert_symbol.insert([text]) {
                Ok(id) => id,
                Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::ConstraintViolation => {
                    select_symbol.query_row([text], |row| row.get(0))?
                }
                Err(e) => return Err(e),
            };
            ids.insert(v, id);
            Ok(id)
        };
        let (order, _) = crate::outputs::value_order(program, rows);
        let mut row_values: Vec<i64> = Vec::with_capacity(arity);
        rows.for_each_sorted(&order, |row| {
            row_values.clear();
            for (&v, ty) in row.iter().zip(&types) {
                row_values.push(match ty {
                    ValueType::Symbol => symbol_id(v)?,
                    // The 32-bit value, as Soufflé's default build binds every value that
                    // is no symbol (a float's bits too).
                    // A record is its id, as Soufflé stores it.
                    ValueType::Number | ValueType::Unsigned | ValueType::Float | ValueType::Record(_) => {
                        i64::from(v as i32)
                    }
                });
            }
            insert.execute(rusqlite::params_from_iter(&row_values))?;
            count += 1;
            Ok::<(), rusqlite::Error>(())
        })
        .map_err(sql)?;
    }
    transaction.commit().map_err(sql)?;
    Ok(count)
}

/// The report of a database [`write_relation`] could not write (E0021), `directive` the
/// `.output` asking for it.
pub fn unwritable(path: &Path, why: &str, directive: Span) -> Diagnostic {
    Diagnostic::error(Code::UNWRITABLE_OUTPUT, format!("cannot write the database `{}`: {why}", path.display()))
        .with_help("check the `filename` or `dbname` path, its directory and their permissions")
        .with_secondary(directive, "this `.output` writes it")
}

/// Soufflé's `CREATE TABLE` of the table `_<rel>`, text for text.
fn create_table_sql(rel: &str, arity: usize) -> String {
    // Soufflé's bound: a row of at most ~1/20 of a page is kept in the primary key's
    // tree without a rowid.
    let without_rowid = arity * 9 + 1 < 200;
    let mut sql = format!("CREATE TABLE IF NOT EXISTS '_{rel}' ('0' INTEGER");
    for i in 1..arity {
        sql += &format!(",'{i}' INTEGER");
    }
    if without_rowid {
        sql += ", PRIMARY KEY ('0'";
        for i in 1..arity {
            sql += &format!(",'{i}' ");
        }
        sql += ")) WITHOUT ROWID;";
    } else {
        sql += ");";
    }
    sql
}

/// Soufflé's `CREATE VIEW` of the view `<rel>`: each column named after its attribute,
/// a symbol column's text taken from `__SymbolTable`.
fn create_view_sql(rel: &str, types: &[ValueType], attributes: Option<&[String]>) -> String {
    let mut projection = Vec::new();
    let mut from = format!("'_{rel}'");
    let mut conditions = Vec::new();
    for (i, ty) in types.iter().enumerate() {
        let name = attributes.and_then(|names| names.get(i)).cloned().unwrap_or_else(|| i.to_string());
        if *ty == ValueType::Symbol {
            projection.push(format!("'_symtab_{i}'.symbol AS '{name}'"));
            from += &format!(",'{SYMBOL_TABLE}' AS '_symtab_{i}'");
            conditions.push(format!("'_{rel}'.'{i}' = '_symtab_{i}'.id"));
        } else {
            projection.push(format!("'_{rel}'.'{i}' AS '{name}'"));
        }
    }
    let mut sql = format!("CREATE VIEW IF NOT EXISTS '{rel}' AS SELECT {} FROM {from}", projection.join(","));
    if !conditions.is_empty() {
        sql += &format!(" WHERE {}", conditions.join(" AND "));
    }
    sql + ";"
}

#[cfg(test)]
mod tests {
    use super::{create_table_sql, create_view_sql};
    use ir::ValueType;

    /// The statements are Soufflé's, text for text (`WriteStreamSQLite.h`).
    #[test]
    fn the_statements_are_souffles() {
        assert_eq!(
            create_table_sql("r", 3),
            "CREATE TABLE IF NOT EXISTS '_r' ('0' INTEGER,'1' INTEGER,'2' INTEGER, PRIMARY KEY ('0','1' ,'2' )) \
             WITHOUT ROWID;"
        );
        assert!(create_table_sql("r", 22).ends_with("WITHOUT ROWID;"));
        assert!(create_table_sql("r", 23).ends_with("'22' INTEGER);"));
        let names = ["x".to_string(), "n".to_string(), "y".to_string()];
        let types = [ValueType::Symbol, ValueType::Number, ValueType::Symbol];
        assert_eq!(
            create_view_sql("r", &types, Some(&names)),
            "CREATE VIEW IF NOT EXISTS 'r' AS SELECT '_symtab_0'.symbol AS 'x','_r'.'1' AS 'n','_symtab_2'.symbol \
             AS 'y' FROM '_r','__SymbolTable' AS '_symtab_0','__SymbolTable' AS '_symtab_2' WHERE '_r'.'0' = \
             '_symtab_0'.id AND '_r'.'2' = '_symtab_2'.id;"
        );
        assert_eq!(
            create_view_sql("n", &[ValueType::Unsigned], None),
            "CREATE VIEW IF NOT EXISTS 'n' AS SELECT '_n'.'0' AS '0' FROM '_n';"
        );
    }
}
