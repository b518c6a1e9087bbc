//! `IO=sqlite` end to end: an `.output` written as Soufflé 2.5 writes a database (the
//! table `_<rel>`, the view `<rel>`, the shared `__SymbolTable`), read back here with
//! rusqlite, and an `.input` read from a database made here in that layout; by the
//! native and the differential engine, both written through the same writer.

mod common;

use common::{dlc, scratch_in, write_file};
use rusqlite::Connection;
use std::path::Path;

/// The `type` and `sql` of every schema object of the database, by name.
fn schema(db: &Connection) -> Vec<(String, String, String)> {
    let mut select = db.prepare("SELECT name, type, sql FROM sqlite_master ORDER BY name").unwrap();
    let rows = select.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get::<_, Option<String>>(2)?)));
    rows.unwrap().map(|r| r.unwrap()).map(|(n, t, s)| (n, t, s.unwrap_or_default())).collect()
}

/// The rows of `query`, each value as text.
fn rows(db: &Connection, query: &str) -> Vec<Vec<String>> {
    let mut select = db.prepare(query).unwrap();
    let columns = select.column_count();
    let rows = select.query_map([], |row| {
        (0..columns)
            .map(|i| {
                Ok(match row.get_ref(i)? {
                    rusqlite::types::ValueRef::Integer(n) => n.to_string(),
                    rusqlite::types::ValueRef::Text(t) => format!("'{}'", String::from_utf8_lossy(t)),
                    other => format!("{other:?}"),
                })
            })
            .collect::<rusqlite::Result<Vec<String>>>()
    });
    rows.unwrap().map(|r| r.unwrap()).collect()
}

fn strings(rows: &[&[&str]]) -> Vec<Vec<String>> {
    rows.iter().map(|r| r.iter().map(|v| v.to_string()).collect()).collect()
}

/// The program of the writing tests: two outputs into one database (sharing its symbol
/// table), one of them also a `.csv`.
const WRITER: &str = ".decl e(x:symbol, n:number, u:unsigned)\n.input e\n\
    .decl r(name:symbol, n:number, u:unsigned)\n.output r(IO=sqlite, dbname=\"out.db\")\n\
    r(x, n, u) :- e(x, n, u).\n\
    .decl s(a:symbol, b:symbol)\n.output s(IO=sqlite, dbname=\"out.db\")\n.output s\n\
    s(x, y) :- e(x, _, _), e(y, _, _), x != y.\n";

#[test]
fn an_output_is_written_in_souffles_layout() {
    for engine in ["seminaive", "differential"] {
        let dir = scratch_in("sqlite", &format!("write-{engine}"));
        let prog = write_file(&dir.join("prog.dl"), WRITER);
        std::fs::create_dir_all(dir.join("in")).unwrap();
        write_file(&dir.join("in/e.facts"), "a\t-5\t4294967295\nb\t7\t3\n");
        let out = dir.join("out");
        let args = [&prog, "-F", &dir.join("in").display().to_string(), "-D", &out.display().to_string()];
        let run = dlc(&[&args[..], &["--engine", engine]].concat());
        assert_eq!(run.code, 0, "{engine}: {}", run.stderr);
        assert!(run.stderr.contains("out.db (2 row(s))"), "{}", run.stderr);
        let db = Connection::open(out.join("out.db")).unwrap();
        let names: Vec<(String, String)> = schema(&db).into_iter().map(|(n, t, _)| (n, t)).collect();
        let expected = [("__SymbolTable", "table"), ("_r", "table"), ("_s", "table"), ("r", "view"), ("s", "view")];
        let expected: Vec<(String, String)> = expected.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect();
        // SQLite's own indexes of the keys follow the tables.
        assert_eq!(names.iter().filter(|(_, t)| t != "index").cloned().collect::<Vec<_>>(), expected);
        let sql: Vec<String> = schema(&db).into_iter().map(|(_, _, s)| s).collect();
        assert!(sql.contains(
            &"CREATE TABLE '_r' ('0' INTEGER,'1' INTEGER,'2' INTEGER, PRIMARY KEY ('0','1' ,'2' )) WITHOUT ROWID"
                .to_string()
        ));
        // The view names the columns after the attributes and shows the symbols' texts.
        assert_eq!(
            rows(&db, "SELECT * FROM r ORDER BY name"),
            strings(&[&["'a'", "-5", "-1"], &["'b'", "7", "3"]]),
            "{engine}"
        );
        let columns: Vec<String> =
            db.prepare("SELECT * FROM r").unwrap().column_names().map(|c| c.to_string()).collect();
        assert_eq!(columns, ["name", "n", "u"]);
        assert_eq!(rows(&db, "SELECT * FROM s ORDER BY a"), strings(&[&["'a'", "'b'"], &["'b'", "'a'"]]));
        // The table holds the symbols' ids, each symbol once in the shared table.
        assert_eq!(rows(&db, "SELECT count(*), count(DISTINCT symbol) FROM __SymbolTable"), strings(&[&["2", "2"]]));
        assert_eq!(
            rows(&db, "SELECT t.symbol, r.'1' FROM _r AS r JOIN __SymbolTable AS t ON r.'0' = t.id ORDER BY 1"),
            strings(&[&["'a'", "-5"], &["'b'", "7"]])
        );
        assert_eq!(std::fs::read_to_string(out.join("s.csv")).unwrap(), "a\tb\nb\ta\n");
        // Written again, the tables hold the new rows only and the symbols keep their ids.
        let ids = rows(&db, "SELECT id, symbol FROM __SymbolTable ORDER BY id");
        drop(db);
        write_file(&dir.join("in/e.facts"), "c\t1\t1\na\t2\t2\n");
        let again = dlc(&[&args[..], &["--engine", engine]].concat());
        assert_eq!(again.code, 0, "{}", again.stderr);
        let db = Connection::open(out.join("out.db")).unwrap();
        assert_eq!(rows(&db, "SELECT * FROM r ORDER BY name"), strings(&[&["'a'", "2", "2"], &["'c'", "1", "1"]]));
        assert_eq!(rows(&db, "SELECT id, symbol FROM __SymbolTable ORDER BY id")[..2], ids[..]);
    }
}

/// Creates the database `path` in Soufflé's layout with the rows of `e(x:symbol,
/// n:number, u:unsigned)`, symbols by id.
fn souffle_database(path: &Path, symbols: &[&str], rows: &[(i64, i64, i64)]) {
    let db = Connection::open(path).unwrap();
    db.execute_batch(
        "CREATE TABLE IF NOT EXISTS '_e' ('0' INTEGER,'1' INTEGER,'2' INTEGER, PRIMARY KEY ('0','1' ,'2' )) WITHOUT ROWID;
         CREATE VIEW IF NOT EXISTS 'e' AS SELECT '_symtab_0'.symbol AS 'x','_e'.'1' AS 'n','_e'.'2' AS 'u'
           FROM '_e','__SymbolTable' AS '_symtab_0' WHERE '_e'.'0' = '_symtab_0'.id;
         CREATE TABLE IF NOT EXISTS '__SymbolTable' (id INTEGER PRIMARY KEY, symbol TEXT UNIQUE);",
    )
    .unwrap();
    for symbol in symbols {
        db.execute("INSERT INTO __SymbolTable VALUES(null, ?1)", [symbol]).unwrap();
    }
    for row in rows {
        db.execute("INSERT INTO _e VALUES (?1, ?2, ?3)", [row.0, row.1, row.2]).unwrap();
    }
}

const READER: &str = ".decl e(x:symbol, n:number, u:unsigned)\n.input e(IO=sqlite, dbname=\"in.db\")\n\
    .decl r(x:symbol, n:number, u:unsigned)\n.output r\nr(x, n, u) :- e(x, n, u).\n";

#[test]
fn an_input_is_read_from_souffles_layout() {
    let dir = scratch_in("sqlite", "read");
    let prog = write_file(&dir.join("prog.dl"), READER);
    // The unsigned -1 is how Soufflé stores 4294967295.
    souffle_database(&dir.join("in.db"), &["a", "b c"], &[(1, -5, -1), (2, 7, 3)]);
    let run = dlc(&[&prog, "-F", &dir.display().to_string(), "-D", "-"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("===============\na\t-5\t4294967295\nb c\t7\t3\n==============="), "{}", run.stdout);
    // A database written by dlc reads back.
    let written = dlc(&[&prog, "-F", &dir.display().to_string(), "-D", &dir.join("out").display().to_string()]);
    assert_eq!(written.code, 0, "{}", written.stderr);
    let copy = write_file(&dir.join("copy.dl"), READER.replace(".output r\n", ".output r(IO=sqlite)\n"));
    let copied = dlc(&[&copy, "-F", &dir.display().to_string(), "-D", &dir.join("out").display().to_string()]);
    assert_eq!(copied.code, 0, "{}", copied.stderr);
    let db = Connection::open(dir.join("out/r.sqlite")).unwrap();
    assert_eq!(rows(&db, "SELECT * FROM r ORDER BY x"), strings(&[&["'a'", "-5", "-1"], &["'b c'", "7", "3"]]));
    // A table of one's own named after the relation is read too, numbers from their text,
    // and a NULL symbol is `n/a`, as in Soufflé.
    let own = dir.join("own");
    std::fs::create_dir_all(&own).unwrap();
    let db = Connection::open(own.join("in.db")).unwrap();
    db.execute_batch("CREATE TABLE e (x TEXT, n TEXT, u INTEGER); INSERT INTO e VALUES (NULL, ' 12', 4000000000);")
        .unwrap();
    drop(db);
    let run = dlc(&[&prog, "-F", &own.display().to_string(), "-D", "-"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("===============\nn/a\t12\t4000000000\n"), "{}", run.stdout);
}

/// What cannot be read or written is reported with a code, never a panic.
#[test]
fn a_bad_database_is_reported() {
    let dir = scratch_in("sqlite", "errors");
    let prog = write_file(&dir.join("prog.dl"), READER);
    let run_in = |facts: &Path| dlc(&[&prog, "-F", &facts.display().to_string(), "-D", "-", "--color", "never"]);
    // No database: E0012, and none is created.
    let missing = run_in(&dir);
    assert_eq!(missing.code, 1, "{}", missing.stderr);
    assert!(missing.stderr.contains("[E0012]") && missing.stderr.contains("no such file"), "{}", missing.stderr);
    assert!(!dir.join("in.db").exists());
    // Not a database: E0012.
    let junk = dir.join("junk");
    std::fs::create_dir_all(&junk).unwrap();
    write_file(&junk.join("in.db"), "this is not a database, only some text that is long enough for a header.");
    let run = run_in(&junk);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("[E0012]"), "{}", run.stderr);
    // No table or view `e`: E0012.
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    Connection::open(empty.join("in.db")).unwrap().execute_batch("CREATE TABLE f (x INTEGER);").unwrap();
    let run = run_in(&empty);
    assert!(run.stderr.contains("[E0012]") && run.stderr.contains("no table or view `e`"), "{}", run.stderr);
    // Another number of columns, a value of the wrong type, a number out of range: E0013.
    for (case, table, message) in [
        ("columns", "CREATE TABLE e (x TEXT, n INTEGER); INSERT INTO e VALUES ('a', 1);", "has 2 column(s)"),
        ("real", "CREATE TABLE e (x, n, u); INSERT INTO e VALUES ('a', 1.5, 1);", "the REAL value 1.5"),
        ("text", "CREATE TABLE e (x, n, u); INSERT INTO e VALUES ('a', '12abc', 1);", "`12abc` is not an integer"),
        ("range", "CREATE TABLE e (x, n, u); INSERT INTO e VALUES ('a', 2147483648, 1);", "outside the range"),
        ("blob", "CREATE TABLE e (x, n, u); INSERT INTO e VALUES (x'00', 1, 1);", "a BLOB"),
    ] {
        let at = dir.join(case);
        std::fs::create_dir_all(&at).unwrap();
        Connection::open(at.join("in.db")).unwrap().execute_batch(table).unwrap();
        let run = run_in(&at);
        assert_eq!(run.code, 1, "{case}: {}", run.stderr);
        assert!(run.stderr.contains("[E0013]") && run.stderr.contains(message), "{case}: {}", run.stderr);
    }
    // A database that cannot be written (its directory is a file), and a nullary
    // relation: E0021.
    write_file(&dir.join("file"), "");
    let out = write_file(&dir.join("out.dl"), ".decl r(x:number)\n.output r(IO=sqlite, dbname=\"file/r.db\")\nr(1).\n");
    let run = dlc(&[&out, "-D", &dir.display().to_string(), "--color", "never"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("[E0021]"), "{}", run.stderr);
    let nullary = write_file(&dir.join("nullary.dl"), ".decl r()\n.output r(IO=sqlite)\nr().\n");
    let run = dlc(&[&nullary, "-D", &dir.display().to_string(), "--color", "never"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("[E0021]") && run.stderr.contains("no attributes"), "{}", run.stderr);
}

/// Soufflé 2.5 gives every `.printsize` its own size printer, whatever its `IO` says:
/// `.printsize r(IO=sqlite, ...)` prints `r<TAB>size` and writes no database.
#[test]
fn a_printsize_prints_its_size_whatever_its_io() {
    let dir = scratch_in("sqlite", "printsize");
    let prog =
        write_file(&dir.join("prog.dl"), ".decl r(x:number)\nr(1). r(2).\n.printsize r(IO=sqlite, dbname=\"r.db\")\n");
    let out = dir.join("out");
    let run = dlc(&[&prog, "-D", &out.display().to_string(), "--no-timing"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "r\t2\n");
    assert!(!out.join("r.db").exists() && !dir.join("r.db").exists());
}
