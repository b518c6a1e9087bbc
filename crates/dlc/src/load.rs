//! Reading files: the program, facts files and directories, update files. The only
//! module of the workspace that touches the file system.

use diag::{Code, Diagnostic, SourceMap};
use ir::Program;
use std::path::Path;
use syntax::FactSink;

/// Reads a file into the source map; an unreadable file becomes an E0012 diagnostic.
pub fn read_source(path: &Path, sources: &mut SourceMap) -> Result<ir::FileId, Diagnostic> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(sources.add(path.display().to_string(), text)),
        Err(e) => Err(unreadable(path, &e)),
    }
}

fn unreadable(path: &Path, e: &std::io::Error) -> Diagnostic {
    let d = Diagnostic::error(Code::UNREADABLE_FILE, format!("cannot read `{}`: {e}", path.display()));
    match e.kind() {
        std::io::ErrorKind::InvalidData => d.with_help("dlc reads UTF-8 text; convert the file (e.g. with iconv)"),
        std::io::ErrorKind::IsADirectory => d.with_help("a program is one file; directories are for --facts"),
        _ => d,
    }
}

/// How a facts file is read, decided by its extension.
enum FactsFormat {
    /// Ground atoms `E(a,b).` in the program's own syntax.
    Atoms,
    /// One tuple per line, fields separated by this character; the predicate is the file stem.
    Delimited(char),
}

fn facts_format(path: &Path) -> FactsFormat {
    match path.extension().and_then(|e| e.to_str()) {
        Some("facts" | "tsv") => FactsFormat::Delimited('\t'),
        Some("csv") => FactsFormat::Delimited(','),
        _ => FactsFormat::Atoms,
    }
}

/// Loads `--facts PATH`: a file of ground atoms, one delimited file, or a directory of
/// delimited files (other files in the directory are ignored, sorted by name for a stable
/// order). Every bad line is reported; nothing is skipped silently. The facts go to
/// `sink` in file order.
pub fn load_facts(
    path: &Path,
    program: &mut Program,
    sources: &mut SourceMap,
    diagnostics: &mut Vec<Diagnostic>,
    sink: &mut dyn FactSink,
) {
    if path.is_dir() {
        let entries = match std::fs::read_dir(path) {
            Ok(entries) => entries,
            Err(e) => {
                diagnostics.push(unreadable(path, &e));
                return;
            }
        };
        let mut files: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file() && matches!(facts_format(p), FactsFormat::Delimited(_)))
            .collect();
        files.sort();
        if files.is_empty() {
            diagnostics.push(
                Diagnostic::warning(
                    Code::UNREADABLE_FILE,
                    format!("`{}` holds no .facts, .tsv or .csv files", path.display()),
                )
                .with_help("name each file after its predicate: `E.facts` (tab-separated) or `E.csv`"),
            );
        }
        for file in files {
            load_facts_file(&file, program, sources, diagnostics, sink);
        }
    } else {
        load_facts_file(path, program, sources, diagnostics, sink);
    }
}

fn load_facts_file(
    path: &Path,
    program: &mut Program,
    sources: &mut SourceMap,
    diagnostics: &mut Vec<Diagnostic>,
    sink: &mut dyn FactSink,
) {
    let file = match read_source(path, sources) {
        Ok(file) => file,
        Err(d) => {
            diagnostics.push(d);
            return;
        }
    };
    let text = sources.text(file);
    let diags = match facts_format(path) {
        FactsFormat::Atoms => syntax::read_fact_atoms(text, file, program, sink),
        FactsFormat::Delimited(separator) => {
            let pred = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
            syntax::read_delimited_facts(text, file, pred, separator, program, sink)
        }
    };
    diagnostics.extend(diags);
}
