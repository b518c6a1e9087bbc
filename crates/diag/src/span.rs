//! Byte-offset spans and the table of source files they point into.

use std::fmt;

/// Index of a file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct FileId(pub u32);

/// A byte range `start..end` in one source file. The same type flows from logos
/// through chumsky to ariadne (which is configured with byte indexing).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, range: std::ops::Range<usize>) -> Self {
        Span { file, start: range.start as u32, end: range.end as u32 }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// The smallest span covering both (they must be in the same file).
    pub fn to(self, other: Span) -> Span {
        Span { file: self.file, start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// The source files a run has read: names (as the user wrote them) and their text.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<(String, String)>,
}

impl SourceMap {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        self.files.push((name.into(), text.into()));
        FileId(self.files.len() as u32 - 1)
    }

    pub fn name(&self, file: FileId) -> &str {
        &self.files[file.0 as usize].0
    }

    pub fn text(&self, file: FileId) -> &str {
        &self.files[file.0 as usize].1
    }

    /// Frees the text of `file`, which no report will point into any more (a facts file
    /// read without errors): a large input is then not held twice, as text and as
    /// tuples. Its name stays, and its text reads as empty.
    pub fn release_text(&mut self, file: FileId) {
        self.files[file.0 as usize].1 = String::new();
    }

    /// 1-based line and column of a byte offset, for plain-text locations.
    pub fn line_col(&self, file: FileId, offset: u32) -> (usize, usize) {
        let text = self.text(file);
        let offset = (offset as usize).min(text.len());
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let col = before.rfind('\n').map_or(offset, |nl| offset - nl - 1) + 1;
        (line, col)
    }
}
