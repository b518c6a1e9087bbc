//! Reading files: the program, facts files and directories, update files. With
//! [`crate::sqlite`], which reads Soufflé's SQLite databases, the only module of the
//! workspace that reads the file system.

use crate::cli::RunArgs;
use diag::{Code, Diagnostic, SourceMap};
use ir::Program;
use pipeline::{Dialect, Failed, ProgramText};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use syntax::{FactSink, MAX_LINE_BYTES};

/// Reads a file into the source map; an unreadable file (or one with a line longer than
/// [`MAX_LINE_BYTES`]) becomes an E0012 diagnostic.
pub fn read_source(path: &Path, sources: &mut SourceMap) -> Result<ir::FileId, Diagnostic> {
    read_text(path, sources, Code::UNREADABLE_FILE)
}

/// Reads the program given on the command line into a fresh source map.
pub fn read_program(args: &RunArgs) -> Result<ProgramText, Failed> {
    let mut sources = SourceMap::new();
    let Some(path) = &args.program else {
        let d = Diagnostic::error(Code::UNREADABLE_FILE, "no program file given")
            .with_help("pass the program as the last argument: `dlc prog.dl`; see `dlc --help`");
        return Err(Failed { sources, diagnostics: vec![d] });
    };
    if let Some(text) = &args.program_text {
        let file = sources.add(STDIN_NAME, text.as_str());
        return Ok(ProgramText { sources, file });
    }
    match read_source(path, &mut sources) {
        Ok(file) => Ok(ProgramText { sources, file }),
        Err(d) => Err(Failed { sources, diagnostics: vec![d] }),
    }
}

/// The files the command line names, read for the pipeline's load stage: `--facts`,
/// `-F`, a Soufflé program's includes and `.input` files, `--updates`. Records what it
/// read ([`Shares`]) for a cluster's digest.
pub struct Files<'a> {
    args: &'a RunArgs,
    pub shares: Shares,
}

impl<'a> Files<'a> {
    /// The files of `args`; in a cluster (`split`), each process reads its share.
    pub fn new(args: &'a RunArgs, split: Option<(usize, usize)>) -> Self {
        Files { args, shares: Shares { split, ..Shares::default() } }
    }
}

impl pipeline::Inputs for Files<'_> {
    fn includes<'s>(&'s mut self, sources: &'s mut SourceMap) -> Box<dyn syntax::souffle::Includes + 's> {
        Box::new(IncludeFiles::new(sources, &self.args.include_dir))
    }

    fn read_whole(&mut self, preds: &[ir::PredId]) {
        self.shares.whole.extend_from_slice(preds);
    }

    fn load_facts(
        &mut self,
        dialect: Dialect,
        program: &mut Program,
        sources: &mut SourceMap,
        diagnostics: &mut Vec<Diagnostic>,
        sink: &mut dyn FactSink,
    ) {
        // `-F` of a Soufflé program names the directory of its `.input` files.
        if let Some(dir) = self.args.fact_dir.as_ref().filter(|_| dialect == Dialect::Dlc) {
            load_facts(dir, program, sources, diagnostics, sink, &mut self.shares);
        }
        for path in &self.args.facts {
            load_facts(path, program, sources, diagnostics, sink, &mut self.shares);
        }
    }

    fn load_souffle_input(
        &mut self,
        input: &syntax::souffle::Io,
        program: &mut Program,
        sources: &mut SourceMap,
        diagnostics: &mut Vec<Diagnostic>,
        sink: &mut dyn FactSink,
    ) {
        let fact_dir = self.args.fact_dir.clone().unwrap_or_else(|| PathBuf::from("."));
        load_souffle_input(input, &fact_dir, program, sources, diagnostics, sink, &mut self.shares);
    }

    fn read_updates(&mut self, sources: &mut SourceMap) -> Option<Result<ir::FileId, Diagnostic>> {
        self.args.updates.as_ref().map(|path| read_source(path, sources))
    }

    fn gives_facts(&self) -> bool {
        !self.args.facts.is_empty() || self.args.fact_dir.is_some()
    }
}

/// Reads a program from standard input (`dlc -`), bounded as a file is, into the source
/// map under the name `<stdin>`.
pub fn read_stdin(input: &mut dyn Read, sources: &mut SourceMap) -> Result<ir::FileId, Diagnostic> {
    add_text(Path::new(STDIN_NAME), read_bounded_from(input, 0), sources, Code::UNREADABLE_FILE)
}

/// The name reports give a program read from standard input.
pub const STDIN_NAME: &str = "<stdin>";

/// Which part of each facts file this process reads, and what it read: in a cluster of
/// several processes, each reads its share of every delimited facts file (the lines
/// whose first byte lies in its byte range, [`read_share`]), except the files of the
/// relations in `whole`, which the output reads directly.
#[derive(Clone, Debug, Default)]
pub struct Shares {
    /// `(process, processes)` when each process reads a share; `None` reads files whole.
    pub split: Option<(usize, usize)>,
    /// Relations whose files every process reads whole.
    pub whole: Vec<ir::PredId>,
    /// Every facts file read, in order: its path, its length, and the bytes of it read.
    pub read: Vec<(String, u64, u64)>,
}

impl Shares {
    /// The share of `pred`'s file to read: `None` for the whole file.
    fn split_for(&self, pred: Option<ir::PredId>) -> Option<(usize, usize)> {
        self.split.filter(|_| pred.is_none_or(|p| !self.whole.contains(&p)))
    }
}

/// Reads `path`, or with `split` its share, into the source map, and records what it read
/// in `shares`.
fn read_facts_text(
    path: &Path,
    sources: &mut SourceMap,
    split: Option<(usize, usize)>,
    shares: &mut Shares,
) -> Result<ir::FileId, Diagnostic> {
    let len = std::fs::metadata(path).map_or(0, |m| m.len());
    let Some((process, processes)) = split else {
        let file = read_text(path, sources, Code::BAD_FACTS_LINE)?;
        shares.read.push((path.display().to_string(), len, len));
        return Ok(file);
    };
    let read = std::fs::File::open(path)
        .and_then(|file| read_share(file, len, process, processes, MAX_LINE_BYTES))
        .and_then(|bytes| {
            shares.read.push((path.display().to_string(), len, bytes.len() as u64));
            String::from_utf8(bytes).map_err(|e| {
                let at = format!("its share holds bytes that are not UTF-8 text ({e})");
                std::io::Error::new(std::io::ErrorKind::InvalidData, at)
            })
        })
        .map_err(ReadError::Io);
    let (start, end) = share_bounds(len, process, processes);
    // Reports about the share point into its text: its name says which part it is.
    let shown = PathBuf::from(format!("{} (the lines from byte {start} to {end})", path.display()));
    add_text(&shown, read, sources, Code::BAD_FACTS_LINE)
}

/// The first line of the file at `path` (for a `.csv` file's separator when only a share
/// of it is read).
fn first_line(path: &Path) -> String {
    let mut line = Vec::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = bounded_line(&mut BufReader::new(file), &mut line, MAX_LINE_BYTES, 0);
    }
    String::from_utf8_lossy(&line).into_owned()
}

/// [`read_source`], reporting a line that is too long with `long_line` (E0013 in facts).
fn read_text(path: &Path, sources: &mut SourceMap, long_line: Code) -> Result<ir::FileId, Diagnostic> {
    add_text(path, read_bounded(path), sources, long_line)
}

/// The text read from `path` added to the source map, or the report of why it could not
/// be read.
fn add_text(
    path: &Path,
    read: Result<String, ReadError>,
    sources: &mut SourceMap,
    long_line: Code,
) -> Result<ir::FileId, Diagnostic> {
    match read {
        Ok(mut text) => {
            // A byte-order mark is no part of the text. The readers in `syntax` skip one
            // too, but dropped here it does not shift the columns of reports on line 1.
            if text.starts_with('\u{feff}') {
                text.drain(..'\u{feff}'.len_utf8());
            }
            Ok(sources.add(path.display().to_string(), text))
        }
        Err(ReadError::Io(e)) => Err(unreadable(path, &e)),
        Err(ReadError::LongLine { line }) => Err(Diagnostic::error(
            long_line,
            format!(
                "line {line} of `{}` is longer than {MAX_LINE_BYTES} bytes; dlc stopped reading it",
                path.display()
            ),
        )
        .with_help("each line holds one rule, tuple or update; is this the right file?")),
        Err(ReadError::NotUtf8 { line }) => Err(Diagnostic::error(
            Code::UNREADABLE_FILE,
            format!("cannot read `{}`: line {line} is not UTF-8 text", path.display()),
        )
        .with_help("dlc reads UTF-8 text; convert the file (e.g. with iconv)")),
    }
}

enum ReadError {
    Io(std::io::Error),
    /// Line `line` (from 1) is longer than [`MAX_LINE_BYTES`].
    LongLine {
        line: usize,
    },
    /// Line `line` holds bytes that are not UTF-8.
    NotUtf8 {
        line: usize,
    },
}

/// How much [`read_bounded`] reads at a time: far less than [`MAX_LINE_BYTES`], so a line
/// within one chunk is never too long and only the line across chunks needs counting.
const CHUNK_BYTES: u64 = 1 << 16;

/// Reads a whole file as text, but stops at the first line longer than
/// [`MAX_LINE_BYTES`] or the first bytes that are not UTF-8: a stream without newlines
/// (`/dev/zero`) is reported after 1 MiB, and one of random bytes (`/dev/urandom`) after
/// its first chunk, instead of filling the memory.
fn read_bounded(path: &Path) -> Result<String, ReadError> {
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let size = file.metadata().map_or(0, |m| m.len());
    read_bounded_from(file, usize::try_from(size).unwrap_or(0))
}

/// [`read_bounded`] of any reader; `size` is the number of bytes expected, if known.
fn read_bounded_from(mut reader: impl Read, size: usize) -> Result<String, ReadError> {
    let line_of = |bytes: &[u8], offset: usize| bytes[..offset].iter().filter(|&&b| b == b'\n').count() + 1;
    let mut bytes = Vec::with_capacity(size);
    // Where the line being read starts, in `bytes`.
    let mut line_start = 0;
    // How many bytes from the start are known to be UTF-8.
    let mut valid = 0;
    loop {
        let chunk_start = bytes.len();
        match (&mut reader).take(CHUNK_BYTES).read_to_end(&mut bytes) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(ReadError::Io(e)),
        }
        match std::str::from_utf8(&bytes[valid..]) {
            Ok(_) => valid = bytes.len(),
            // A character cut at the end of the chunk: the next one completes it.
            Err(e) if e.error_len().is_none() => valid += e.valid_up_to(),
            Err(e) => return Err(ReadError::NotUtf8 { line: line_of(&bytes, valid + e.valid_up_to()) }),
        }
        let chunk = &bytes[chunk_start..];
        if let Some(last) = chunk.iter().rposition(|&b| b == b'\n') {
            let first = chunk.iter().position(|&b| b == b'\n').expect("a last newline is a newline");
            if chunk_start + first - line_start > MAX_LINE_BYTES {
                break;
            }
            line_start = chunk_start + last + 1;
        }
        if bytes.len() - line_start > MAX_LINE_BYTES {
            break;
        }
    }
    // Either loop exit above with a long line: the first long line starts at `line_start`.
    let first_newline_after = bytes[line_start..].iter().position(|&b| b == b'\n');
    if first_newline_after.unwrap_or(bytes.len() - line_start) > MAX_LINE_BYTES {
        return Err(ReadError::LongLine { line: line_of(&bytes, line_start) });
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        ReadError::NotUtf8 { line: line_of(e.as_bytes(), valid) }
    })
}

fn unreadable(path: &Path, e: &std::io::Error) -> Diagnostic {
    let d = Diagnostic::error(Code::UNREADABLE_FILE, format!("cannot read `{}`: {e}", path.display()));
    match e.kind() {
        std::io::ErrorKind::InvalidData => d.with_help("dlc reads UTF-8 text; convert the file (e.g. with iconv)"),
        std::io::ErrorKind::IsADirectory => d.with_help("a program is one file; directories are for --facts"),
        _ => d,
    }
}

/// How a facts file is read, decided by its name.
enum FactsFormat {
    /// Ground atoms `E(a,b).` in the program's own syntax.
    Atoms,
    /// One tuple per line, fields separated by `separator` (`None`: a `.csv` file, whose
    /// first line decides, see [`syntax::csv_separator`]), of the predicate named by the
    /// file name without its extension (`stem`, possibly not a valid name: the reader
    /// reports that).
    Delimited { stem: String, separator: Option<char> },
}

fn facts_format(path: &Path) -> FactsFormat {
    // By the name's text rather than `Path::extension`, which sees none in `.csv`: that
    // is a file of the predicate with the empty name, which the reader rejects.
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    for (extension, separator) in [(".facts", Some('\t')), (".tsv", Some('\t')), (".csv", None)] {
        if let Some(stem) = name.strip_suffix(extension) {
            // A process's part of a relation a cluster wrote is a file of the relation.
            return FactsFormat::Delimited { stem: strip_part(stem).to_string(), separator };
        }
    }
    FactsFormat::Atoms
}

/// The mark of the part of a relation that process `process` of `processes` of a cluster
/// writes, put before the extension of the relation's file name: `.part-1-of-2` for
/// process 0 of 2.
pub fn part_suffix(process: usize, processes: usize) -> String {
    format!(".part-{}-of-{processes}", process + 1)
}

/// `stem` without the mark of a part ([`part_suffix`]) at its end.
pub fn strip_part(stem: &str) -> &str {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let Some((base, part)) = stem.rsplit_once(".part-") else { return stem };
    match part.split_once("-of-") {
        Some((i, p)) if digits(i) && digits(p) && !base.is_empty() => base,
        _ => stem,
    }
}

/// A file name split where a part's mark goes: its stem, its extension with the dot (or
/// nothing) and `.gz` if it ends so (`R.csv.gz` is `R`, `.csv`, `.gz`).
pub fn split_file_name(name: &str) -> (&str, String, &'static str) {
    let (base, gz) = match name.strip_suffix(".gz") {
        Some(base) => (base, ".gz"),
        None => (name, ""),
    };
    match base.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() => (stem, format!(".{extension}"), gz),
        _ => (base, String::new(), gz),
    }
}

/// The parts of the file `path` that the processes of a cluster wrote, in process
/// order: the files beside it whose names are its name with a part's mark
/// ([`part_suffix`]) before the extension (and before a `.gz` after it). None when the
/// directory cannot be read.
fn parts_of(path: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().map(|n| n.to_string_lossy().into_owned())) else {
        return Vec::new();
    };
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let (stem, extension, gz) = split_file_name(&name);
    let mut parts: Vec<(usize, PathBuf)> = entries
        .flatten()
        .filter_map(|entry| {
            let entry_name = entry.file_name().to_string_lossy().into_owned();
            let marked = entry_name.strip_suffix(gz)?.strip_suffix(extension.as_str())?;
            let part = marked.strip_prefix(stem)?.strip_prefix(".part-")?;
            let (i, _) = part.split_once("-of-")?;
            (strip_part(marked) == stem).then(|| Some((i.parse().ok()?, entry.path()))).flatten()
        })
        .collect();
    parts.sort();
    parts.into_iter().map(|(_, path)| path).collect()
}

/// Loads `--facts PATH`: a file of ground atoms, one delimited file, or a directory of
/// delimited files (sorted by name for a stable order). Every bad line is reported, and
/// so is every entry of a directory that is not read; nothing is skipped silently. The
/// facts go to `sink` in file order.
pub fn load_facts(
    path: &Path,
    program: &mut Program,
    sources: &mut SourceMap,
    diagnostics: &mut Vec<Diagnostic>,
    sink: &mut dyn FactSink,
    shares: &mut Shares,
) {
    if path.is_dir() {
        for file in facts_directory(path, diagnostics) {
            load_facts_file(&file, program, sources, diagnostics, sink, shares);
        }
    } else {
        load_facts_file(path, program, sources, diagnostics, sink, shares);
    }
}

/// The facts files of a directory, sorted: its regular files named `<Pred>.facts`,
/// `.tsv` or `.csv`. Any other entry with such a name (a subdirectory, a FIFO, a broken
/// symbolic link, one that cannot be examined) is an error; entries with other names are
/// listed in one warning.
fn facts_directory(path: &Path, diagnostics: &mut Vec<Diagnostic>) -> Vec<PathBuf> {
    let entries = match std::fs::read_dir(path) {
        Ok(entries) => entries,
        Err(e) => {
            diagnostics.push(unreadable(path, &e));
            return Vec::new();
        }
    };
    let errors_before = diagnostics.len();
    let mut listed = Vec::new();
    for entry in entries {
        match entry {
            Ok(entry) => listed.push(entry.path()),
            Err(e) => diagnostics.push(Diagnostic::error(
                Code::UNREADABLE_FILE,
                format!("cannot list the entries of `{}`: {e}", path.display()),
            )),
        }
    }
    // By name, for a stable order of the files and of the reports.
    listed.sort();
    let (mut files, mut ignored) = (Vec::new(), Vec::new());
    for file in listed {
        if matches!(facts_format(&file), FactsFormat::Atoms) {
            ignored.push(file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
            continue;
        }
        // `metadata` follows symbolic links: a link to a facts file is a facts file.
        match std::fs::metadata(&file) {
            Ok(meta) if meta.is_file() => files.push(file),
            Ok(meta) => {
                let what = if meta.is_dir() { "a directory" } else { "not a regular file (a FIFO, socket or device)" };
                diagnostics.push(
                    Diagnostic::error(Code::UNREADABLE_FILE, format!("`{}` is {what}", file.display())).with_help(
                        "a facts directory holds regular files named after their predicates; rename or \
                         remove this entry, or pass it to --facts by itself",
                    ),
                );
            }
            Err(e) => {
                let link = std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_symlink());
                let d = Diagnostic::error(Code::UNREADABLE_FILE, format!("cannot read `{}`: {e}", file.display()));
                diagnostics.push(if link {
                    d.with_help("it is a symbolic link whose target is missing, unreadable or a loop of links")
                } else {
                    d
                });
            }
        }
    }
    if !ignored.is_empty() {
        const SHOWN: usize = 5;
        let mut names: Vec<String> = ignored.iter().take(SHOWN).map(|n| format!("`{n}`")).collect();
        if ignored.len() > SHOWN {
            names.push(format!("and {} more", ignored.len() - SHOWN));
        }
        diagnostics.push(
            Diagnostic::warning(
                Code::UNREAD_DIRECTORY_ENTRY,
                format!(
                    "`{}`: {} entr{} not read, not being named .facts, .tsv or .csv: {}",
                    path.display(),
                    ignored.len(),
                    if ignored.len() == 1 { "y is" } else { "ies are" },
                    names.join(", ")
                ),
            )
            .with_help("a facts directory holds `<Pred>.facts`/`.tsv` (tab-separated) and `<Pred>.csv` files"),
        );
    }
    if files.is_empty() && diagnostics.len() == errors_before {
        diagnostics.push(
            Diagnostic::warning(
                Code::UNREAD_DIRECTORY_ENTRY,
                format!("`{}` holds no .facts, .tsv or .csv files", path.display()),
            )
            .with_help("name each file after its predicate: `E.facts` (tab-separated) or `E.csv`"),
        );
    }
    files
}

fn load_facts_file(
    path: &Path,
    program: &mut Program,
    sources: &mut SourceMap,
    diagnostics: &mut Vec<Diagnostic>,
    sink: &mut dyn FactSink,
    shares: &mut Shares,
) {
    let format = facts_format(path);
    // A file of atoms is read whole: an atom may span lines.
    let split = match &format {
        FactsFormat::Atoms => None,
        FactsFormat::Delimited { stem, .. } => shares.split_for(program.lookup_source(stem)),
    };
    let file = match read_facts_text(path, sources, split, shares) {
        Ok(file) => file,
        Err(d) => {
            diagnostics.push(d);
            return;
        }
    };
    let text = sources.text(file);
    let diags = match format {
        FactsFormat::Atoms => syntax::read_fact_atoms(text, file, program, sink),
        FactsFormat::Delimited { stem, separator } => {
            let separator = separator.unwrap_or_else(|| {
                let arity = program.lookup_source(&stem).map(|p| program.pred(p).arity);
                match split {
                    // The file's first line decides, not the share's.
                    Some(_) => syntax::csv_separator(&first_line(path), arity),
                    None => syntax::csv_separator(text, arity),
                }
            });
            syntax::read_delimited_facts(text, file, &stem, separator, program, sink)
        }
    };
    diagnostics.extend(diags);
}

/// Reads the files a Soufflé program `#include`s into the source map, relative to the
/// directory of the including file.
pub struct IncludeFiles<'a> {
    pub sources: &'a mut SourceMap,
    /// The directories of `-I`, in order.
    pub include_dirs: &'a [PathBuf],
    /// The file that included each included file, to find a file that includes itself.
    pub included_from: HashMap<ir::FileId, ir::FileId>,
}

impl<'a> IncludeFiles<'a> {
    pub fn new(sources: &'a mut SourceMap, include_dirs: &'a [PathBuf]) -> Self {
        IncludeFiles { sources, include_dirs, included_from: HashMap::new() }
    }

    /// The file as the file system knows it, so that two paths to one file are equal.
    fn identity(&self, file: ir::FileId) -> PathBuf {
        let name = Path::new(self.sources.name(file));
        std::fs::canonicalize(name).unwrap_or_else(|_| name.to_path_buf())
    }
}

impl syntax::souffle::Includes for IncludeFiles<'_> {
    /// Looks for `path` as Soufflé's preprocessor (`cpp -I . -I DIR...`) does: for
    /// `#include "path"` beside the including file first, then in the current directory
    /// and each `-I` directory in order; an absolute path as it is.
    fn include(&mut self, from: ir::FileId, path: &str, angled: bool) -> Result<(ir::FileId, String), String> {
        let mut dirs: Vec<PathBuf> = Vec::new();
        if !angled {
            dirs.push(Path::new(self.sources.name(from)).parent().unwrap_or(Path::new("")).to_path_buf());
        }
        dirs.push(PathBuf::from("."));
        dirs.extend(self.include_dirs.iter().cloned());
        // `join` of an absolute path is that path, in whichever directory.
        let found = dirs.iter().map(|dir| dir.join(path)).find(|p| p.is_file());
        let Some(full) = found.or_else(|| Path::new(path).is_absolute().then(|| PathBuf::from(path))) else {
            let mut shown: Vec<String> = Vec::new();
            for dir in &dirs {
                let dir = if dir.as_os_str().is_empty() { "`.`".to_string() } else { format!("`{}`", dir.display()) };
                if !shown.contains(&dir) {
                    shown.push(dir);
                }
            }
            return Err(format!("it is in none of {}", shown.join(", ")));
        };
        // A file that includes itself, directly or through others, would be spliced in
        // until the depth limit, each copy declaring its relations again: refuse it once.
        let target = std::fs::canonicalize(&full).unwrap_or_else(|_| full.clone());
        let mut chain = vec![from];
        while let Some(&parent) = self.included_from.get(chain.last().expect("never empty")) {
            chain.push(parent);
        }
        // A file that passes `.once` (or `#pragma once`) is read once, as Soufflé reads it:
        // the preprocessor skips the copy from there, so it may include itself.
        if let Some(at) = chain.iter().position(|&f| self.identity(f) == target) {
            let once = |line: &str| {
                matches!(line.split_whitespace().collect::<Vec<_>>()[..], [".once"] | ["#pragma", "once", ..])
            };
            if !self.sources.text(chain[at]).lines().any(|l| once(l.trim())) {
                let names: Vec<&str> = chain[..=at].iter().rev().map(|&f| self.sources.name(f)).collect();
                return Err(format!("it would include itself: {} includes {path}", names.join(" includes ")));
            }
        }
        match read_source(&full, self.sources) {
            Ok(file) => {
                self.included_from.insert(file, from);
                Ok((file, self.sources.text(file).to_string()))
            }
            Err(d) => Err(d.message),
        }
    }

    fn identity(&self, file: ir::FileId) -> String {
        IncludeFiles::identity(self, file).to_string_lossy().into_owned()
    }
}

/// Loads the facts of one `.input` relation of a Soufflé program: its SQLite database
/// under `IO=sqlite` (see [`crate::sqlite`]), its JSON file (`<Rel>.json` unless
/// `filename` names it) under `IO=jsonfile` (see [`crate::json`]), otherwise the file named by its
/// `filename` parameter or `<Rel>.facts`, relative to `fact_dir`, read as Soufflé 2.5
/// reads it (see [`syntax::read_souffle_facts`]); gzip-compressed content is read
/// decompressed whatever the parameters say, as Soufflé (built with zlib) reads it. A
/// missing file is an error, as in Soufflé.
pub fn load_souffle_input(
    io: &syntax::souffle::Io,
    fact_dir: &Path,
    program: &mut Program,
    sources: &mut SourceMap,
    diagnostics: &mut Vec<Diagnostic>,
    sink: &mut dyn FactSink,
    shares: &mut Shares,
) {
    let name = program.pred_name(io.pred);
    if io.sqlite {
        // A database is read whole, by every process of a cluster.
        let path = crate::sqlite::database_path(io, fact_dir, &name);
        if let Some(len) = crate::sqlite::read_relation(io, &path, program, diagnostics, sink) {
            shares.read.push((path.display().to_string(), len, len));
        }
        return;
    }
    if io.json.is_some() {
        // A JSON file is read whole, by every process of a cluster.
        let path = fact_dir.join(io.filename.clone().unwrap_or_else(|| format!("{name}.json")));
        match read_facts_text(&path, sources, None, shares) {
            Ok(file) => {
                let read = crate::json::read_relation(sources.text(file), file, io.pred, &io.attributes, program, sink);
                if read.is_empty() {
                    sources.release_text(file);
                }
                diagnostics.extend(read);
            }
            Err(d) => diagnostics.push(d.with_secondary(io.span, format!("`.input {name}` reads it"))),
        }
        return;
    }
    let path = fact_dir.join(io.filename.clone().unwrap_or_else(|| format!("{name}.facts")));
    // Where a cluster wrote the relation in parts, one per process, they are read
    // together.
    let parts = match path.exists() {
        true => Vec::new(),
        false => parts_of(&path),
    };
    if parts.is_empty() {
        load_souffle_file(io, &path, &name, program, sources, diagnostics, sink, shares);
    }
    for part in parts {
        load_souffle_file(io, &part, &name, program, sources, diagnostics, sink, shares);
    }
}

/// Loads the facts of `.input {name}` from the file at `path`.
#[allow(clippy::too_many_arguments)]
fn load_souffle_file(
    io: &syntax::souffle::Io,
    path: &Path,
    name: &str,
    program: &mut Program,
    sources: &mut SourceMap,
    diagnostics: &mut Vec<Diagnostic>,
    sink: &mut dyn FactSink,
    shares: &mut Shares,
) {
    let compressed = is_gzip(path);
    // A compressed file cannot be entered in the middle, and a header line is the
    // first line of the file, not of a share: such files are read whole.
    let split = shares.split_for(Some(io.pred)).filter(|_| !compressed && !io.format.headers);
    let read = match compressed {
        true => read_gzip_text(path, sources, shares),
        false => read_facts_text(path, sources, split, shares),
    };
    let file = match read {
        Ok(file) => file,
        Err(d) => {
            let d = d.with_secondary(io.span, format!("`.input {name}` reads it"));
            diagnostics.push(if io.filename.is_none() {
                d.with_help(format!(
                    "the facts of `.input {name}` are read from `<fact dir>/{name}.facts` (tab-separated); pass \
                     the directory with -F DIR"
                ))
            } else {
                d
            });
            return;
        }
    };
    let text = sources.text(file);
    let read = syntax::read_souffle_facts(text, file, io.pred, &io.delimiter, io.format, program, sink);
    // The relation is declared in the program, so no later report points into a file
    // read without errors: its text, as large as the input, is freed before evaluation.
    if read.is_empty() {
        sources.release_text(file);
    }
    diagnostics.extend(read);
}

/// Whether the file at `path` starts with the two bytes of a gzip header.
fn is_gzip(path: &Path) -> bool {
    let mut magic = [0u8; 2];
    std::fs::File::open(path).and_then(|mut file| file.read_exact(&mut magic)).is_ok() && magic == [0x1f, 0x8b]
}

/// Reads the gzip-compressed file at `path` (every member, as zlib reads concatenated
/// ones) as text into the source map, bounded as any file is (a line longer than
/// [`MAX_LINE_BYTES`] stops it), and records it in `shares`.
fn read_gzip_text(path: &Path, sources: &mut SourceMap, shares: &mut Shares) -> Result<ir::FileId, Diagnostic> {
    let len = std::fs::metadata(path).map_or(0, |m| m.len());
    let read = std::fs::File::open(path).map_err(ReadError::Io).and_then(|file| {
        read_bounded_from(flate2::read::MultiGzDecoder::new(BufReader::new(file)), 0).map_err(|e| match e {
            // Past the opening, a read error is the decompressor's: say so, rather than
            // suggest a text encoding.
            ReadError::Io(e) => {
                ReadError::Io(std::io::Error::other(format!("its gzip content cannot be decompressed ({e})")))
            }
            other => other,
        })
    });
    if read.is_ok() {
        shares.read.push((path.display().to_string(), len, len));
    }
    add_text(path, read, sources, Code::BAD_FACTS_LINE)
}

/// The nominal byte range `[start, end)` of a file of `len` bytes that process `process`
/// of `processes` reads: the shares of all processes cover the file once, in order.
pub fn share_bounds(len: u64, process: usize, processes: usize) -> (u64, u64) {
    let at = |i: usize| (u128::from(len) * i as u128 / processes.max(1) as u128) as u64;
    (at(process), at(process + 1))
}

/// The lines of `reader` (a file of `len` bytes) whose first byte lies in process
/// `process`'s share ([`share_bounds`]): it seeks to the nominal start − 1, skips past
/// the next newline (unless the share starts the file) and stops at the first line
/// starting at or after the nominal end, so every line is read by exactly one process,
/// each reading its share and at most one line more. A line longer than `max_line`
/// stops the read with its offset (`InvalidData`), as a whole read stops there.
pub fn read_share(
    mut reader: impl Read + Seek,
    len: u64,
    process: usize,
    processes: usize,
    max_line: usize,
) -> std::io::Result<Vec<u8>> {
    let (start, end) = share_bounds(len, process, processes);
    let mut pos = start.saturating_sub(1);
    reader.seek(SeekFrom::Start(pos))?;
    let mut lines = BufReader::new(reader);
    let mut line = Vec::new();
    // The byte before the share ends the line it is in: the share's first line is the
    // one after that byte's line (the byte itself when it is a newline).
    if start > 0 {
        pos += bounded_line(&mut lines, &mut line, max_line, pos)?;
        line.clear();
    }
    let mut out = Vec::new();
    while pos < end {
        let n = bounded_line(&mut lines, &mut out, max_line, pos)?;
        if n == 0 {
            break;
        }
        pos += n;
    }
    Ok(out)
}

/// Appends one line (its newline included) of `lines` to `out` and returns its length
/// in bytes, 0 at the end of the file; a line longer than `max_line` is an error naming
/// its offset `at`.
fn bounded_line(lines: &mut impl BufRead, out: &mut Vec<u8>, max_line: usize, at: u64) -> std::io::Result<u64> {
    let before = out.len();
    let n = lines.take(max_line as u64 + 1).read_until(b'\n', out)?;
    if n > max_line && out.last() != Some(&b'\n') {
        out.truncate(before);
        let message = format!("a line starting at byte {at} is longer than {max_line} bytes");
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, message));
    }
    Ok(n as u64)
}

#[cfg(test)]
mod tests {
    use super::{read_bounded_from, ReadError, CHUNK_BYTES};
    use super::{read_share, share_bounds};
    use proptest::prelude::*;
    use std::io::Read;

    proptest! {
        /// The shares of any number of processes hold every line of the file exactly
        /// once, in order, each starting at a line's start: blank lines, a last line
        /// without its newline and shares shorter than a line included.
        #[test]
        fn shares_hold_every_line_once(
            lines in proptest::collection::vec("[a-c\t]{0,12}", 0..20),
            trailing in any::<bool>(),
            processes in 1usize..7,
        ) {
            let mut text = lines.join("\n");
            if trailing && !lines.is_empty() {
                text.push('\n');
            }
            let len = text.len() as u64;
            let mut joined = Vec::new();
            for process in 0..processes {
                let share = read_share(std::io::Cursor::new(text.as_bytes()), len, process, processes, 64).unwrap();
                let (start, _) = share_bounds(len, process, processes);
                // A share is empty or starts where a line does.
                let begins = joined.len();
                prop_assert!(share.is_empty() || begins == 0 || text.as_bytes()[begins - 1] == b'\n');
                prop_assert!(share.is_empty() || begins as u64 >= start);
                joined.extend(share);
            }
            prop_assert_eq!(String::from_utf8(joined).unwrap(), text);
        }
    }

    #[test]
    fn a_share_stops_at_a_line_longer_than_the_bound() {
        let text = format!("short\n{}\nend\n", "x".repeat(100));
        let error = read_share(std::io::Cursor::new(text.as_bytes()), text.len() as u64, 0, 1, 64).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
        assert!(error.to_string().contains("byte 6"), "{error}");
        // The process whose share starts inside the long line skips the rest of it (53
        // bytes here) and reads the line after; the line's owner reports it.
        let tail = read_share(std::io::Cursor::new(text.as_bytes()), text.len() as u64, 1, 2, 64).unwrap();
        assert_eq!(tail, b"end\n");
        assert!(read_share(std::io::Cursor::new(text.as_bytes()), text.len() as u64, 0, 2, 64).is_err());
    }

    /// An endless stream: `start`, then `filler` repeated; counts the bytes it gave.
    struct Endless {
        start: Vec<u8>,
        filler: u8,
        given: u64,
    }

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            for (i, b) in buf.iter_mut().enumerate() {
                let at = self.given as usize + i;
                *b = self.start.get(at).copied().unwrap_or(self.filler);
            }
            self.given += buf.len() as u64;
            Ok(buf.len())
        }
    }

    #[test]
    fn an_endless_stream_of_bytes_that_are_not_utf8_stops_at_its_first_chunk() {
        let mut stream = Endless { start: b"E(a,b).\nE(b,\xff".to_vec(), filler: b'\n', given: 0 };
        let read = read_bounded_from(&mut stream, 0);
        assert!(matches!(read, Err(ReadError::NotUtf8 { line: 2 })));
        assert!(stream.given <= CHUNK_BYTES, "read {} bytes", stream.given);
    }

    #[test]
    fn a_character_cut_between_chunks_is_utf8() {
        // `é` is two bytes; the first chunk ends between them.
        let mut text = "a".repeat(CHUNK_BYTES as usize - 1);
        text.push_str("é\n");
        assert_eq!(read_bounded_from(text.as_bytes(), 0).ok(), Some(text.clone()));
        let cut = &text.as_bytes()[..text.len() - 2];
        assert!(matches!(read_bounded_from(cut, 0), Err(ReadError::NotUtf8 { line: 1 })));
    }
}
