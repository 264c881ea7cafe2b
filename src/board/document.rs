//! The blackboard file as text: frontmatter/body split, line endings, BOM, sections, appends.
//!
//! One splitter serves every command, so `poll`, `status`, `validate` and the writers can never
//! disagree about where the frontmatter ends (SPEC §2). The body is kept as the exact string read
//! from disk; the only ways it changes are [`Document::append`] and [`Document::ensure_section`],
//! which insert new bytes and leave every existing byte where it was.

use std::fmt;

/// The UTF-8 byte-order mark.
pub const BOM: &str = "\u{feff}";

/// Level-2 sections in template order (SPEC §2.3). A missing section is created at its place in
/// this order.
pub const SECTION_ORDER: &[&str] = &[
    "Goal",
    "Evidence",
    "Root Cause Analysis",
    "Plan Revisions",
    "Plan Reviews",
    "Red Tests",
    "Implementation Notes",
    "Code Review Rounds",
    "Validation",
    "Decisions",
    "Journal",
];

/// Line-ending style of a file, detected from its first line and kept on every write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eol {
    Lf,
    CrLf,
}

impl Eol {
    pub fn as_str(self) -> &'static str {
        match self {
            Eol::Lf => "\n",
            Eol::CrLf => "\r\n",
        }
    }

    /// Convert text to this style, whatever line endings it came with.
    pub fn apply(self, text: &str) -> String {
        let text = normalize_newlines(text);
        match self {
            Eol::Lf => text,
            Eol::CrLf => text.replace('\n', "\r\n"),
        }
    }
}

/// Why a file could not be split into frontmatter and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitError {
    /// The file is empty.
    Empty,
    /// The frontmatter is not valid UTF-8 (1-based line of the first bad byte).
    NotUtf8 { line: u32, part: &'static str },
    /// The first line is not `---`.
    NoFrontmatter { found: String },
    /// No line `---` closes the frontmatter.
    Unclosed,
    /// Git conflict markers are present.
    ConflictMarkers { line: u32, marker: String },
    /// A delimiter line ends in `\r\r\n` (CRLF line endings converted to CRLF again).
    DoubledCr { line: u32 },
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitError::Empty => write!(
                f,
                "the file is empty; a blackboard starts with a `---` line, the YAML frontmatter, \
                 and a closing `---` line"
            ),
            SplitError::NotUtf8 { line, part } => {
                write!(f, "line {line}: the {part} is not valid UTF-8")
            }
            SplitError::NoFrontmatter { found } => write!(
                f,
                "line 1: no frontmatter: the first line must be `---`, found {found:?}"
            ),
            SplitError::Unclosed => write!(
                f,
                "the frontmatter is not closed: no line `---` follows the opening `---` on line 1"
            ),
            SplitError::ConflictMarkers { line, marker } => write!(
                f,
                "line {line}: unresolved git conflict marker `{marker}`; resolve the merge \
                 conflict, then run `pair validate` again"
            ),
            SplitError::DoubledCr { line } => write!(
                f,
                "line {line}: the `---` delimiter line ends in `\\r\\r\\n`, a doubled carriage \
                 return (CRLF line endings converted to CRLF a second time?); use LF or CRLF \
                 line endings"
            ),
        }
    }
}

/// A blackboard split into its parts. `fm_text` excludes the delimiter lines; `body` is
/// everything after the closing delimiter line, byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub bom: bool,
    pub eol: Eol,
    pub fm_text: String,
    /// 1-based line number of the first frontmatter line (the line after the opening `---`).
    pub fm_first_line: u32,
    pub body: String,
    /// 1-based line number on which the body starts.
    pub body_first_line: u32,
    /// The body's headings, found by the first pass that needed them and kept until a method
    /// of the document changes the body ([`Outline`]).
    pub outline: Outline,
}

/// The headings (levels 1 to 3, outside code fences) of a document's body, found once: every
/// pass a write made over the body for its sections, its entries and its blocks is one.
/// A cache, not part of the document's value: documents compare equal with or without it.
/// Every method that changes the body drops it; code that changes the body otherwise takes it
/// through [`Document::body_mut`], which drops it too. As a guard, it is also checked against
/// the body before each use (the body's length, and a heading's first byte at each offset)
/// and found again when that does not match.
#[derive(Clone, Default)]
pub struct Outline(std::sync::OnceLock<Headings>);

#[derive(Clone)]
struct Headings {
    /// The length of the body they were found in.
    len: usize,
    /// (byte offset of the line, 0-based line index in the body, level).
    at: Vec<(usize, u32, u8)>,
}

impl PartialEq for Outline {
    fn eq(&self, _: &Outline) -> bool {
        true
    }
}

impl Eq for Outline {}

impl std::fmt::Debug for Outline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Outline")
    }
}

impl Outline {
    fn of<'a>(&'a self, body: &str) -> Option<&'a Headings> {
        let h = self.0.get()?;
        let fits = h.len == body.len()
            && h.at.iter().all(|(offset, _, _)| {
                body.as_bytes()
                    .get(*offset)
                    .is_some_and(|b| *b == b'#' || b.is_ascii_whitespace())
            });
        fits.then_some(h)
    }
}

/// Follow a body's lines once: their blocks (a fence, HTML comment or `<details>` left open,
/// when `scan` is given) and their headings.
fn headings_of(body: &str, mut scan: Option<&mut BodyScan>) -> Headings {
    let mut at = Vec::new();
    let mut inside = None;
    let mut offset = 0;
    for (i, line) in raw_lines(body).enumerate() {
        let kind = match scan.as_deref_mut() {
            Some(scan) => scan.line(line),
            None => classify(&mut inside, line.trim_end_matches(['\n', '\r'])),
        };
        if let LineKind::Heading(level @ 1..=3) = kind {
            at.push((offset, i as u32, level));
        }
        offset += line.len();
    }
    Headings {
        len: body.len(),
        at,
    }
}

fn is_delimiter(line: &str) -> bool {
    is_delimiter_line(line.as_bytes())
}

/// Whether a line (with or without its ending) is a frontmatter delimiter: `---`, then spaces or
/// tabs, then one optional `\r` before the newline. The one definition of where a frontmatter
/// ends, used by the splitter and by the store's head-only read.
pub fn is_delimiter_line(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    &line[..end] == b"---"
}

/// Where the frontmatter of a board's bytes ends: the offset just after its closing delimiter
/// line, found by looking only at lines that start with `---`. `None` when the first line does
/// not open a frontmatter or nothing closes it.
pub fn frontmatter_end(bytes: &[u8]) -> Option<usize> {
    let start = if bytes.starts_with(BOM.as_bytes()) {
        BOM.len()
    } else {
        0
    };
    let first_end = start + memchr::memchr(b'\n', &bytes[start..])? + 1;
    if !is_delimiter_line(&bytes[start..first_end]) {
        return None;
    }
    let mut from = first_end - 1;
    while let Some(off) = memchr::memmem::find(&bytes[from..], b"\n---") {
        let line = from + off + 1;
        let end = memchr::memchr(b'\n', &bytes[line..]).map_or(bytes.len(), |e| line + e + 1);
        if is_delimiter_line(&bytes[line..end]) {
            return Some(end);
        }
        from = line;
    }
    None
}

/// A line that would be a delimiter but for a doubled carriage return before its newline.
fn is_doubled_cr_delimiter(line: &[u8]) -> bool {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\r' | b'\n' | b' ' | b'\t') {
        end -= 1;
    }
    &line[..end] == b"---" && line.windows(2).any(|w| w == b"\r\r")
}

/// Whether a line (without its ending) is a git conflict marker.
pub fn conflict_marker(line: &str) -> Option<&'static str> {
    let line = line.trim_end_matches(['\r', '\n']);
    for marker in ["<<<<<<<", ">>>>>>>", "======="] {
        if let Some(rest) = line.strip_prefix(marker) {
            let ok = if marker == "=======" {
                rest.trim_end().is_empty()
            } else {
                rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')
            };
            if ok {
                return Some(marker);
            }
        }
    }
    None
}

/// Where the first line that is a conflict marker starts, and the marker: only a line starting
/// with seven of one marker's characters can be one, so each is looked for by a whole-text
/// search, not line by line.
fn first_conflict_marker(text: &str) -> Option<(usize, &'static str)> {
    let line_at = |start: usize| {
        let end =
            memchr::memchr(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |i| start + i);
        conflict_marker(&text[start..end])
    };
    let mut first: Option<(usize, &'static str)> = None;
    for pattern in ["<<<<<<<", ">>>>>>>", "======="] {
        let needle = format!("\n{pattern}");
        let starts = std::iter::once(0)
            .filter(|_| text.starts_with(pattern))
            .chain(memchr::memmem::find_iter(text.as_bytes(), needle.as_bytes()).map(|i| i + 1));
        for start in starts {
            if first.is_some_and(|(at, _)| at <= start) {
                break;
            }
            if let Some(marker) = line_at(start) {
                first = Some((start, marker));
                break;
            }
        }
    }
    first
}

fn line_of_offset(bytes: &[u8], offset: usize) -> u32 {
    memchr::memchr_iter(b'\n', &bytes[..offset.min(bytes.len())]).count() as u32 + 1
}

impl Document {
    /// Split the bytes of a whole file.
    pub fn parse(bytes: &[u8]) -> Result<Document, SplitError> {
        let (doc, _) = Self::split(bytes, true)?;
        Ok(doc)
    }

    /// Split only as far as the closing delimiter: the body is left empty and not checked.
    /// This is what `poll` uses so that its cost does not grow with the body.
    pub fn parse_frontmatter_only(bytes: &[u8]) -> Result<Document, SplitError> {
        let (doc, _) = Self::split(bytes, false)?;
        Ok(doc)
    }

    fn split(bytes: &[u8], with_body: bool) -> Result<(Document, usize), SplitError> {
        if bytes.is_empty() {
            return Err(SplitError::Empty);
        }
        let (bom, rest) = match bytes.strip_prefix(BOM.as_bytes()) {
            Some(rest) => (true, rest),
            None => (false, bytes),
        };
        // First line.
        let first_end = memchr::memchr(b'\n', rest)
            .map(|i| i + 1)
            .unwrap_or(rest.len());
        let first = &rest[..first_end];
        let first_str = String::from_utf8_lossy(first);
        if !is_delimiter(&first_str) || !first.ends_with(b"\n") {
            if is_delimiter(&first_str) {
                return Err(SplitError::Unclosed);
            }
            if is_doubled_cr_delimiter(first) {
                return Err(SplitError::DoubledCr { line: 1 });
            }
            let shown: String = first_str
                .trim_end_matches(['\r', '\n'])
                .chars()
                .take(40)
                .collect();
            return Err(SplitError::NoFrontmatter { found: shown });
        }
        let eol = if first.ends_with(b"\r\n") {
            Eol::CrLf
        } else {
            Eol::Lf
        };
        // Find the closing delimiter line: only lines that start with `---` are looked at,
        // found by one substring search (a large ledger is thousands of lines).
        let mut close: Option<(usize, usize)> = None;
        let mut doubled_cr: Option<usize> = None;
        for at in memchr::memmem::find_iter(&rest[first_end - 1..], b"\n---") {
            let pos = first_end + at;
            let end = memchr::memchr(b'\n', &rest[pos..])
                .map(|i| pos + i + 1)
                .unwrap_or(rest.len());
            let line = &rest[pos..end];
            if is_delimiter_line(line) {
                close = Some((pos, end));
                break;
            }
            if doubled_cr.is_none() && is_doubled_cr_delimiter(line) {
                doubled_cr = Some(pos);
            }
        }
        let Some((close_start, close_end)) = close else {
            return Err(match doubled_cr {
                Some(at) => SplitError::DoubledCr {
                    line: line_of_offset(rest, at),
                },
                None => SplitError::Unclosed,
            });
        };
        let fm_bytes = &rest[first_end..close_start];
        let fm_text = match std::str::from_utf8(fm_bytes) {
            Ok(s) => s.to_string(),
            Err(e) => {
                return Err(SplitError::NotUtf8 {
                    line: line_of_offset(rest, first_end + e.valid_up_to()),
                    part: "frontmatter",
                });
            }
        };
        let body_first_line = line_of_offset(rest, close_end);
        let body = if with_body {
            match std::str::from_utf8(&rest[close_end..]) {
                Ok(s) => s.to_string(),
                Err(e) => {
                    return Err(SplitError::NotUtf8 {
                        line: line_of_offset(rest, close_end + e.valid_up_to()),
                        part: "body",
                    });
                }
            }
        } else {
            String::new()
        };
        // Conflict markers anywhere: in the frontmatter always, in the body when it was read.
        let scan = |text: &str, first_line: u32| -> Result<(), SplitError> {
            match first_conflict_marker(text) {
                Some((at, marker)) => Err(SplitError::ConflictMarkers {
                    line: first_line + line_of_offset(text.as_bytes(), at) - 1,
                    marker: marker.to_string(),
                }),
                None => Ok(()),
            }
        };
        scan(&fm_text, 2)?;
        if with_body {
            scan(&body, body_first_line)?;
        }
        Ok((
            Document {
                bom,
                eol,
                fm_text,
                fm_first_line: 2,
                body,
                body_first_line,
                outline: Outline::default(),
            },
            close_end,
        ))
    }

    /// Assemble a file from a new frontmatter (written with `\n`, converted to the file's style)
    /// and this document's body, BOM and line-ending style.
    pub fn render(&self, frontmatter: &str) -> String {
        let mut out = self.head(frontmatter, self.body.len());
        out.push_str(&self.body);
        out
    }

    /// The BOM, the delimiters and the frontmatter in the file's style, with room for `extra`
    /// more bytes.
    fn head(&self, frontmatter: &str, extra: usize) -> String {
        let mut out = String::with_capacity(frontmatter.len() + 16 + extra);
        if self.bom {
            out.push_str(BOM);
        }
        let eol = self.eol.as_str();
        out.push_str("---");
        out.push_str(eol);
        out.push_str(&self.eol.apply(frontmatter));
        out.push_str("---");
        out.push_str(eol);
        out
    }

    /// [`Document::render`], consuming the document: the file is built in the body's own buffer,
    /// so a write does not hold a second copy of a large body.
    pub fn into_rendered(self, frontmatter: &str) -> String {
        let head = self.head(frontmatter, 0);
        let mut body = self.body;
        body.insert_str(0, &head);
        body
    }

    /// The body, to change it in place: the outline found so far is dropped.
    pub fn body_mut(&mut self) -> &mut String {
        self.outline = Outline::default();
        &mut self.body
    }

    /// The level-2 sections of the body.
    pub fn sections(&self) -> Vec<Section> {
        outline_from(&self.body, self.body_first_line, &self.headings(), false)
            .into_iter()
            .map(|(s, _)| s)
            .collect()
    }

    /// [`Document::sections`], each with its number of entries: level-3 headings in the form
    /// `pair` writes them ([`crate::board::entry::is_entry_heading`]), not the `###` headings
    /// of old notes. Only `status` counts them (reading an entry's heading is most of the cost
    /// of an outline).
    pub fn sections_with_entries(&self) -> Vec<(Section, usize)> {
        outline_from(&self.body, self.body_first_line, &self.headings(), true)
    }

    /// The body's headings of levels 1 to 3, outside code fences, in order: (byte offset of
    /// the line, the line with its ending, its file line, its level).
    pub fn heading_lines(&self) -> Vec<(usize, &str, u32, u8)> {
        let body = &self.body;
        self.headings()
            .iter()
            .map(|&(offset, index, level)| {
                let end = memchr::memchr(b'\n', &body.as_bytes()[offset..])
                    .map_or(body.len(), |e| offset + e + 1);
                (
                    offset,
                    &body[offset..end],
                    self.body_first_line + index,
                    level,
                )
            })
            .collect()
    }

    fn headings(&self) -> std::borrow::Cow<'_, [(usize, u32, u8)]> {
        use std::borrow::Cow;
        if let Some(h) = self.outline.of(&self.body) {
            return Cow::Borrowed(&h.at);
        }
        match self.outline.0.set(headings_of(&self.body, None)) {
            Ok(()) => match self.outline.0.get() {
                Some(h) => Cow::Borrowed(&h.at),
                None => Cow::Owned(headings_of(&self.body, None).at),
            },
            // A stale outline (the body changed behind the document's back): this read uses
            // what it found.
            Err(found) => Cow::Owned(found.at),
        }
    }

    /// Check the body's blocks (a code fence, an HTML comment or a `<details>` element left
    /// open, as [`unclosed_blocks`] finds them) in the pass that finds its headings, which the
    /// document keeps.
    pub fn unclosed_blocks(&self) -> (Option<u32>, Option<UnclosedHtml>) {
        let mut scan = BodyScan::default();
        let found = headings_of(&self.body, Some(&mut scan));
        let _ = self.outline.0.set(found);
        scan.unclosed()
    }

    /// Append an entry (text written with `\n`) to the end of a section, creating the section at
    /// its template position if it is missing. Existing bytes are not changed. Returns false, and
    /// changes nothing, when the section cannot be found or made (see [`valid_section_name`]).
    #[must_use]
    pub fn append(&mut self, section: &str, entry: &str) -> bool {
        if !valid_section_name(section) {
            return false;
        }
        // Undo by removing what `ensure_section` inserted, rather than by keeping a copy of the
        // body: on a large blackboard the copy alone was a third of a write's peak memory.
        // The body is scanned once when the section exists (the usual case).
        let mut secs = self.sections();
        let mut inserted = None;
        if !secs.iter().any(|s| s.name == section) {
            inserted = self.insert_section(section);
            secs = self.sections();
        }
        let Some(sec) = secs.iter().find(|s| s.name == section) else {
            if let Some(range) = inserted {
                self.body.replace_range(range, "");
                self.outline = Outline::default();
            }
            return false;
        };
        let insert_at = sec.end;
        let before = &self.body[..insert_at];
        let eol = self.eol.as_str();
        let mut text = String::new();
        if !before.ends_with('\n') {
            text.push_str(eol);
        }
        if !before.ends_with(&format!("{eol}{eol}")) && !before.ends_with("\n\n") {
            text.push_str(eol);
        }
        text.push_str(&self.eol.apply(entry.trim_end_matches('\n')));
        text.push_str(eol);
        if insert_at < self.body.len() {
            // A heading follows: keep one blank line before it.
            text.push_str(eol);
        }
        self.body.insert_str(insert_at, &text);
        self.outline = Outline::default();
        true
    }

    /// Remove a level-2 section whose content is only blank lines. Returns whether it did.
    pub fn remove_empty_section(&mut self, name: &str) -> bool {
        let secs = self.sections();
        let Some(sec) = secs.iter().find(|s| s.name == name) else {
            return false;
        };
        let text = &self.body[sec.start..sec.end];
        let after_heading = text.split_once('\n').map_or("", |(_, rest)| rest);
        if !after_heading.trim().is_empty() {
            return false;
        }
        self.body.replace_range(sec.start..sec.end, "");
        self.outline = Outline::default();
        true
    }

    /// Create a level-2 section if it is missing, at its template position (before the first
    /// existing section that comes after it in [`SECTION_ORDER`], else at the end of the body).
    pub fn ensure_section(&mut self, name: &str) {
        let _ = self.insert_section(name);
    }

    /// [`Document::ensure_section`], returning the byte range of the body it inserted, if any.
    fn insert_section(&mut self, name: &str) -> Option<std::ops::Range<usize>> {
        let secs = self.sections();
        if secs.iter().any(|s| s.name == name) {
            return None;
        }
        let eol = self.eol.as_str();
        let rank = SECTION_ORDER.iter().position(|s| *s == name);
        let next = rank.and_then(|r| {
            secs.iter().find(|s| {
                SECTION_ORDER
                    .iter()
                    .position(|t| *t == s.name)
                    .is_some_and(|sr| sr > r)
            })
        });
        match next {
            Some(sec) => {
                let text = format!("## {name}{eol}{eol}");
                self.body.insert_str(sec.start, &text);
                self.outline = Outline::default();
                Some(sec.start..sec.start + text.len())
            }
            None => {
                let mut text = String::new();
                if !self.body.is_empty() && !self.body.ends_with('\n') {
                    text.push_str(eol);
                }
                if !self.body.is_empty() && !self.body.ends_with(&format!("{eol}{eol}")) {
                    text.push_str(eol);
                }
                text.push_str(&format!("## {name}{eol}"));
                let start = self.body.len();
                self.body.push_str(&text);
                self.outline = Outline::default();
                Some(start..self.body.len())
            }
        }
    }
}

/// Whether a section name can be written as a `## Name` heading and found again: one line, no
/// leading or trailing space, and no `#`, backtick or tilde that would change how it parses.
pub fn valid_section_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && name.trim() == name
        && !name.contains(['#', '`', '~', '\n', '\r'])
        && !name.chars().any(char::is_control)
        && conflict_marker(name).is_none()
}

/// The 1-based line (within `text`) of a code fence that is opened and never closed.
pub fn unclosed_fence(text: &str) -> Option<u32> {
    let mut open = None;
    for (i, (_, _, kind)) in lines(text).enumerate() {
        if kind == LineKind::Fence {
            open = match open {
                None => Some(i as u32 + 1),
                Some(_) => None,
            };
        }
    }
    open
}

/// An HTML comment or `<details>` element opened and never closed (see [`unclosed_html`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnclosedHtml {
    /// 1-based line of the opening, within the text checked.
    pub line: u32,
    /// What was opened, e.g. "an HTML comment (`<!--`)".
    pub what: &'static str,
    /// What would close it, e.g. "`-->`".
    pub closer: &'static str,
}

/// The first HTML comment (`<!--`) or `<details>` element in `text` that is opened and never
/// closed, outside fenced code and inline code spans: when the Markdown is rendered it hides
/// everything after it, the sections that follow included.
pub fn unclosed_html(text: &str) -> Option<UnclosedHtml> {
    unclosed_blocks(text).1
}

/// [`unclosed_fence`] and [`unclosed_html`] in one pass over the text.
pub fn unclosed_blocks(text: &str) -> (Option<u32>, Option<UnclosedHtml>) {
    let mut scan = BodyScan::default();
    for line in raw_lines(text) {
        scan.line(line);
    }
    scan.unclosed()
}

/// A body's block structure followed one line at a time, for a reader that never holds the
/// whole body: each line's kind (as [`lines`] gives it) and, at the end, the code fence, HTML
/// comment or `<details>` element left open (as [`unclosed_blocks`] gives them).
#[derive(Debug, Clone, Default)]
pub struct BodyScan {
    /// The fence the lines are in, as [`Lines`] tracks it.
    inside: Option<(char, usize)>,
    /// How many lines were taken.
    lines: u32,
    fence: Option<u32>,
    comment: Option<u32>,
    details: Vec<u32>,
}

impl BodyScan {
    /// Take the next line (with its ending); its kind.
    pub fn line(&mut self, line: &str) -> LineKind {
        self.lines += 1;
        let n = self.lines;
        let kind = classify(&mut self.inside, line.trim_end_matches(['\n', '\r']));
        if kind == LineKind::Fence {
            self.fence = match self.fence {
                None => Some(n),
                Some(_) => None,
            };
        }
        match self.comment {
            // Inside a comment, fences are comment text.
            Some(_) if !line.contains("-->") => return kind,
            None if matches!(kind, LineKind::Fence | LineKind::InFence) || !has_html_tag(line) => {
                return kind;
            }
            _ => {}
        }
        let masked = mask_code_spans(line);
        scan_html(masked.as_bytes(), n, &mut self.comment, &mut self.details);
        kind
    }

    /// The 1-based lines (within the lines taken) of a code fence, and of an HTML comment or
    /// `<details>` element, opened and not closed.
    pub fn unclosed(&self) -> (Option<u32>, Option<UnclosedHtml>) {
        let html = match (self.comment, self.details.first()) {
            (Some(line), _) => Some(UnclosedHtml {
                line,
                what: "an HTML comment (`<!--`)",
                closer: "`-->`",
            }),
            (None, Some(line)) => Some(UnclosedHtml {
                line: *line,
                what: "a `<details>` element",
                closer: "`</details>`",
            }),
            (None, None) => None,
        };
        (self.fence, html)
    }
}

/// Whether a line may open or close a comment or a `<details>` element (most lines cannot, and
/// are not looked at further).
fn has_html_tag(line: &str) -> bool {
    let b = line.as_bytes();
    line.match_indices('<').any(|(p, _)| {
        let rest = &b[p + 1..];
        rest.starts_with(b"!--")
            || rest
                .get(..7)
                .is_some_and(|w| w.eq_ignore_ascii_case(b"details"))
            || rest
                .get(..8)
                .is_some_and(|w| w.eq_ignore_ascii_case(b"/details"))
    })
}

/// Follow HTML comments and `<details>` elements through one line.
fn scan_html(b: &[u8], n: u32, comment: &mut Option<u32>, details: &mut Vec<u32>) {
    let find = |from: usize, pat: &[u8]| {
        b.get(from..)
            .and_then(|rest| rest.windows(pat.len()).position(|w| w == pat))
            .map(|p| from + p)
    };
    let tag_at = |p: usize, name: &[u8]| {
        b.len() >= p + name.len()
            && b[p..p + name.len()].eq_ignore_ascii_case(name)
            && matches!(
                b.get(p + name.len()),
                None | Some(b'>' | b' ' | b'\t' | b'\r' | b'\n' | b'/')
            )
    };
    let mut i = 0;
    while i < b.len() {
        if comment.is_some() {
            match find(i, b"-->") {
                Some(p) => {
                    *comment = None;
                    i = p + 3;
                }
                None => return,
            }
            continue;
        }
        let Some(p) = find(i, b"<") else { return };
        let rest = &b[p..];
        if rest.starts_with(b"<!--") {
            // `<!-->` and `<!--->` are complete, empty comments.
            if rest[4..].starts_with(b">") {
                i = p + 5;
            } else if rest[4..].starts_with(b"->") {
                i = p + 6;
            } else {
                *comment = Some(n);
                i = p + 4;
            }
        } else if tag_at(p, b"<details") {
            details.push(n);
            i = p + 8;
        } else if tag_at(p, b"</details") {
            details.pop();
            i = p + 9;
        } else {
            i = p + 1;
        }
    }
}

/// A line with the content of its inline code spans (`` `x` ``, ``` ``x`` ```) blanked out, so
/// that HTML quoted in code is not taken for markup. A run of backticks opens a span closed by
/// the next run of the same length; one without such a run is literal.
fn mask_code_spans(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains('`') {
        return std::borrow::Cow::Borrowed(line);
    }
    let b = line.as_bytes();
    // The runs of backticks: (start, length).
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'`' {
            let start = i;
            while i < b.len() && b[i] == b'`' {
                i += 1;
            }
            runs.push((start, i - start));
        } else {
            i += 1;
        }
    }
    let mut out = b.to_vec();
    if runs.len() <= 16 {
        // The usual line: a few spans, matched by looking ahead.
        let mut k = 0;
        while k < runs.len() {
            let (start, len) = runs[k];
            match (k + 1..runs.len()).find(|&c| runs[c].1 == len) {
                Some(close) => {
                    for byte in &mut out[start + len..runs[close].0] {
                        *byte = b' ';
                    }
                    k = close + 1;
                }
                None => k += 1,
            }
        }
        return std::borrow::Cow::Owned(
            String::from_utf8(out).unwrap_or_else(|_| line.to_string()),
        );
    }
    // For each length, the indices of its runs in order; each queue is consumed front to back,
    // so the whole line costs linear time however its backticks are arranged.
    let mut by_len: std::collections::HashMap<usize, std::collections::VecDeque<usize>> =
        std::collections::HashMap::new();
    for (k, (_, len)) in runs.iter().enumerate() {
        by_len.entry(*len).or_default().push_back(k);
    }
    let mut k = 0;
    while k < runs.len() {
        let (start, len) = runs[k];
        let queue = by_len.get_mut(&len).expect("every run is queued");
        while queue.front().is_some_and(|&x| x <= k) {
            queue.pop_front();
        }
        match queue.front() {
            Some(&close) => {
                for byte in &mut out[start + len..runs[close].0] {
                    *byte = b' ';
                }
                k = close + 1;
            }
            None => k += 1,
        }
    }
    // Only whole characters between ASCII backticks were blanked: still UTF-8.
    std::borrow::Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| line.to_string()))
}

/// Normalize text from outside (notes, goals) to `\n` line endings: CRLF and lone CR (which
/// Markdown also reads as a line break) both become `\n`.
pub fn normalize_newlines(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// A level-2 section: its name, the byte range in the body from its heading to the next
/// level-1/2 heading (or the end), and the 1-based file line of its heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub start: usize,
    pub end: usize,
    pub line: u32,
}

impl Section {
    /// The name a `## Name` heading line gives its section.
    pub fn name_of(line: &str) -> String {
        heading_text(line)
    }
}

/// Markdown block structure just good enough to find ATX headings outside fenced code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Text,
    Blank,
    /// ATX heading of this level, outside a fence.
    Heading(u8),
    /// A fence line (opening or closing).
    Fence,
    /// A line inside a fenced code block.
    InFence,
}

/// Classify each line of some Markdown (fences tracked across lines).
pub fn classify_lines(text: &str) -> Vec<(usize, &str, LineKind)> {
    lines(text).collect()
}

/// [`classify_lines`] as an iterator: `(byte offset, line with its ending, kind)`. Scanning a
/// large body this way allocates nothing per line.
pub fn lines(text: &str) -> Lines<'_> {
    Lines {
        text,
        ends: memchr::memchr_iter(b'\n', text.as_bytes()),
        fence: None,
        offset: 0,
    }
}

/// The lines of a text with their endings, found with `memchr` (a large body is scanned several
/// times per write; a per-character search was most of a write's CPU time).
pub fn raw_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut ends = memchr::memchr_iter(b'\n', text.as_bytes());
    let mut start = 0;
    std::iter::from_fn(move || {
        let end = match ends.next() {
            Some(i) => i + 1,
            None if start < text.len() => text.len(),
            None => return None,
        };
        let line = &text[start..end];
        start = end;
        Some(line)
    })
}

/// The iterator of [`lines`].
pub struct Lines<'a> {
    text: &'a str,
    ends: memchr::Memchr<'a>,
    fence: Option<(char, usize)>,
    offset: usize,
}

impl<'a> Iterator for Lines<'a> {
    type Item = (usize, &'a str, LineKind);

    fn next(&mut self) -> Option<Self::Item> {
        let start = self.offset;
        let end = match self.ends.next() {
            Some(i) => i + 1,
            None if start < self.text.len() => self.text.len(),
            None => return None,
        };
        let line = &self.text[start..end];
        self.offset = end;
        let kind = classify(&mut self.fence, line.trim_end_matches(['\n', '\r']));
        Some((start, line, kind))
    }
}

/// The kind of one line (without its ending), given the fence the lines before it left open
/// (updated).
#[inline]
fn classify(fence: &mut Option<(char, usize)>, content: &str) -> LineKind {
    // Most lines start with a letter: only a line starting with a space, a tab, `#`, a fence
    // character or a non-ASCII byte (Unicode white space) needs a closer look.
    let plain = |b: u8| !matches!(b, b' ' | b'\t' | b'#' | b'`' | b'~' | 0x0b | 0x0c) && b < 0x80;
    let first = content.as_bytes().first().copied();
    match *fence {
        Some((ch, _)) if first.is_some_and(|b| plain(b) && b != ch as u8) => LineKind::InFence,
        Some((ch, len)) => {
            if closes_fence(content, ch, len) {
                *fence = None;
                LineKind::Fence
            } else {
                LineKind::InFence
            }
        }
        None if first.is_some_and(plain) => LineKind::Text,
        None => {
            if let Some(f) = opens_fence(content) {
                *fence = Some(f);
                LineKind::Fence
            } else if let Some(level) = atx_level(content) {
                LineKind::Heading(level)
            } else if content.trim().is_empty() {
                LineKind::Blank
            } else {
                LineKind::Text
            }
        }
    }
}

fn leading_spaces(s: &str) -> Option<&str> {
    let n = s.len() - s.trim_start_matches(' ').len();
    if n > 3 { None } else { Some(&s[n..]) }
}

fn opens_fence(line: &str) -> Option<(char, usize)> {
    let s = leading_spaces(line)?;
    let ch = s.chars().next()?;
    if ch != '`' && ch != '~' {
        return None;
    }
    let len = s.chars().take_while(|c| *c == ch).count();
    if len < 3 {
        return None;
    }
    if ch == '`' && s[len..].contains('`') {
        return None;
    }
    Some((ch, len))
}

fn closes_fence(line: &str, ch: char, len: usize) -> bool {
    let Some(s) = leading_spaces(line) else {
        return false;
    };
    let n = s.chars().take_while(|c| *c == ch).count();
    n >= len && s[n * ch.len_utf8()..].trim().is_empty()
}

/// The level of an ATX heading line, if it is one.
pub fn atx_level(line: &str) -> Option<u8> {
    let s = leading_spaces(line)?;
    let n = s.chars().take_while(|c| *c == '#').count();
    if n == 0 || n > 6 {
        return None;
    }
    let rest = &s[n..];
    if rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t') {
        Some(n as u8)
    } else {
        None
    }
}

fn heading_text(line: &str) -> String {
    let s = line.trim_end_matches(['\n', '\r']).trim_start();
    let s = s.trim_start_matches('#').trim();
    // Optional closing sequence of #s.
    let trimmed = s.trim_end_matches('#');
    if trimmed.len() != s.len() && (trimmed.is_empty() || trimmed.ends_with(' ')) {
        trimmed.trim().to_string()
    } else {
        s.to_string()
    }
}

/// Find the level-2 sections of a body. `first_line` is the file line the body starts on.
pub fn sections(body: &str, first_line: u32) -> Vec<Section> {
    outline_from(body, first_line, &headings_of(body, None).at, false)
        .into_iter()
        .map(|(s, _)| s)
        .collect()
}

/// The sections a body's headings ([`headings_of`]) make.
fn outline_from(
    body: &str,
    first_line: u32,
    headings: &[(usize, u32, u8)],
    count: bool,
) -> Vec<(Section, usize)> {
    let mut out: Vec<(Section, usize)> = Vec::new();
    for &(offset, i, level) in headings {
        let end = memchr::memchr(b'\n', &body.as_bytes()[offset..])
            .map_or(body.len(), |e| offset + e + 1);
        let line = &body[offset..end];
        if level <= 2 {
            if let Some((last, _)) = out.last_mut()
                && last.end == usize::MAX
            {
                last.end = offset;
            }
            if level == 2 {
                out.push((
                    Section {
                        name: heading_text(line),
                        start: offset,
                        end: usize::MAX,
                        line: first_line + i,
                    },
                    0,
                ));
            }
        } else if count
            && crate::board::entry::is_entry_heading(line)
            && let Some((last, entries)) = out.last_mut()
            && last.end == usize::MAX
        {
            *entries += 1;
        }
    }
    if let Some((last, _)) = out.last_mut()
        && last.end == usize::MAX
    {
        last.end = body.len();
    }
    // The end of a section is where the next level-1/2 heading begins; for trailing blank lines
    // we keep the end as is so appends land after them (never inside the next heading).
    out
}

/// Demote the headings of a note one level when it has a level-3 heading outside a fence:
/// level-3 headings are the entries' own (SPEC §2.3), so `### Root cause` in a note would read as
/// an entry. Levels 3 to 5 go one down (6 stays 6), keeping the note's outline. Returns the text
/// (line endings as given) and the 1-based lines of the note that changed.
pub fn demote_note_headings(text: &str) -> (String, Vec<u32>) {
    let kinds: Vec<(usize, &str, LineKind)> = lines(text).collect();
    if !kinds
        .iter()
        .any(|(_, _, k)| matches!(k, LineKind::Heading(3)))
    {
        return (text.to_string(), Vec::new());
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut changed = Vec::new();
    for (i, (_, line, kind)) in kinds.iter().enumerate() {
        match kind {
            LineKind::Heading(3..=5) => {
                let spaces = line.len() - line.trim_start_matches(' ').len();
                out.push_str(&line[..spaces]);
                out.push('#');
                out.push_str(&line[spaces..]);
                changed.push(i as u32 + 1);
            }
            _ => out.push_str(line),
        }
    }
    (out, changed)
}

/// Why a note cannot be appended as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteProblem {
    /// 1-based line within the note.
    pub line: u32,
    pub message: String,
}

/// Check that text can be appended inside a section without changing the document's structure:
/// no level-1/2 heading (ATX or setext) outside a fence, no unclosed fence, no conflict marker.
pub fn check_note(text: &str) -> Result<(), NoteProblem> {
    let text = normalize_newlines(text);
    let lines = classify_lines(&text);
    let mut open_fence_line = None;
    let mut prev_text = false;
    for (i, (_, line, kind)) in lines.iter().enumerate() {
        let n = i as u32 + 1;
        let content = line.trim_end_matches(['\n', '\r']);
        if let Some(marker) = conflict_marker(content) {
            return Err(NoteProblem {
                line: n,
                message: format!(
                    "line {n} of the note is a git conflict marker `{marker}`; blackboards may not contain them"
                ),
            });
        }
        match kind {
            LineKind::Heading(level) if *level <= 2 => {
                return Err(NoteProblem {
                    line: n,
                    message: format!(
                        "line {n} of the note is a level-{level} heading ({:?}); it would split the \
                         section. Use `####` or deeper headings inside notes",
                        content.trim()
                    ),
                });
            }
            LineKind::Fence => {
                open_fence_line = match open_fence_line {
                    None => Some(n),
                    Some(_) => None,
                };
            }
            LineKind::Text if prev_text => {
                let t = content.trim();
                if let Some(s) = leading_spaces(content)
                    && !t.is_empty()
                    && (t.chars().all(|c| c == '=') || t.chars().all(|c| c == '-'))
                    && s.trim_end() == t
                {
                    return Err(NoteProblem {
                        line: n,
                        message: format!(
                            "line {n} of the note underlines the line above with {:?}, which makes \
                             it a level-1/2 heading and would split the section; add a blank line \
                             before it or use `####` headings",
                            t
                        ),
                    });
                }
            }
            _ => {}
        }
        prev_text = matches!(kind, LineKind::Text);
    }
    if let Some(n) = open_fence_line {
        return Err(NoteProblem {
            line: n,
            message: format!(
                "the code fence opened on line {n} of the note is never closed; it would swallow \
                 the sections after it. Close the fence"
            ),
        });
    }
    if let Some(h) = unclosed_html(&text) {
        return Err(NoteProblem {
            line: h.line,
            message: format!(
                "line {} of the note opens {} that is never closed with {}; it would hide \
                 everything after it, the sections that follow included. Close it, or put it in \
                 backticks or a code fence",
                h.line, h.what, h.closer
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "---\nphase: DRAFT\n---\n# T\n\n## Goal\n\ng\n\n## Plan Reviews\n\n```\n## not a heading\n```\n\n## Decisions\n";

    #[test]
    fn splits_frontmatter_and_body() {
        let d = Document::parse(DOC.as_bytes()).unwrap();
        assert_eq!(d.fm_text, "phase: DRAFT\n");
        assert!(d.body.starts_with("# T\n"));
        assert_eq!(d.body_first_line, 4);
        assert_eq!(d.render("phase: DRAFT\n"), DOC);
        assert_eq!(d.into_rendered("phase: DRAFT\n"), DOC);
    }

    #[test]
    fn the_closing_delimiter_is_the_first_line_that_is_one() {
        let d = Document::parse(b"---\n---\nbody\n").unwrap();
        assert_eq!((d.fm_text.as_str(), d.body.as_str()), ("", "body\n"));
        let d = Document::parse(b"---\na: ---\n--- x\n----\n---\n---\n").unwrap();
        assert_eq!(d.fm_text, "a: ---\n--- x\n----\n");
        assert_eq!((d.body.as_str(), d.body_first_line), ("---\n", 6));
        assert!(matches!(
            Document::parse(b"---\na: 1\n---\r\r\n"),
            Err(SplitError::DoubledCr { line: 3 })
        ));
        assert!(matches!(
            Document::parse(b"---\na: 1\n--- x\n"),
            Err(SplitError::Unclosed)
        ));
    }

    #[test]
    fn the_outline_found_once_follows_the_body() {
        let mut d = Document::parse(DOC.as_bytes()).unwrap();
        let fresh = |d: &Document| sections(&d.body, d.body_first_line);
        // Found in the pass that checks the blocks, and kept.
        assert_eq!(d.unclosed_blocks(), (None, None));
        assert_eq!(d.sections(), fresh(&d));
        // Changed through the document: found again.
        assert!(d.append("Evidence", "### e1\n\ntext\n"));
        assert!(d.append("Plan Reviews", "### r\n\nok\n"));
        assert_eq!(d.sections(), fresh(&d));
        assert!(d.sections().iter().any(|s| s.name == "Evidence"));
        // Changed behind its back: the outline no longer fits and is not used.
        d.body.insert_str(0, "## Early\n\n");
        assert_eq!(d.sections(), fresh(&d));
        assert_eq!(d.sections()[0].name, "Early");
        let heads: Vec<_> = d
            .heading_lines()
            .into_iter()
            .map(|(_, l, _, n)| (l, n))
            .collect();
        assert_eq!(heads[0], ("## Early\n", 2));
        // Changed in place to the same length, through `body_mut`: found again.
        let before = d.sections();
        let body = d.body_mut();
        let at = body.find("## Early").unwrap();
        body.replace_range(at..at + 2, "xx");
        assert_eq!(d.sections(), fresh(&d));
        assert_ne!(d.sections(), before);
    }

    proptest::proptest! {
        #[test]
        fn the_outline_kept_is_the_outline_found(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just("## A".to_string()),
                    proptest::strategy::Just("# T".to_string()),
                    proptest::strategy::Just("### x".to_string()),
                    proptest::strategy::Just("```".to_string()),
                    proptest::strategy::Just("   ## B ##".to_string()),
                    proptest::strategy::Just("<!--".to_string()),
                    proptest::strategy::Just("-->".to_string()),
                    "[a-z #`]{0,8}",
                ],
                0..40,
            ),
        ) {
            let body = lines.join("\n");
            let d = Document::parse(format!("---\na: 1\n---\n{body}").as_bytes()).unwrap();
            let blocks = d.unclosed_blocks();
            proptest::prop_assert_eq!(blocks, unclosed_blocks(&d.body));
            proptest::prop_assert_eq!(d.sections(), sections(&d.body, d.body_first_line));
            let plain: Vec<_> = lines_with_levels(&d.body);
            let kept: Vec<_> =
                d.heading_lines().into_iter().map(|(o, _, _, l)| (o, l)).collect();
            proptest::prop_assert_eq!(kept, plain);
        }
    }

    fn lines_with_levels(body: &str) -> Vec<(usize, u8)> {
        lines(body)
            .filter_map(|(o, _, k)| match k {
                LineKind::Heading(l @ 1..=3) => Some((o, l)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn crlf_bom_and_trailing_spaces_are_accepted() {
        let text = "\u{feff}---  \r\nphase: DRAFT\r\n--- \t\r\nbody\r\n";
        let d = Document::parse(text.as_bytes()).unwrap();
        assert!(d.bom);
        assert_eq!(d.eol, Eol::CrLf);
        assert_eq!(d.fm_text, "phase: DRAFT\r\n");
        assert_eq!(d.body, "body\r\n");
        assert_eq!(
            d.render("phase: X\n"),
            d.clone().into_rendered("phase: X\n")
        );
    }

    #[test]
    fn sections_skip_fenced_headings() {
        let d = Document::parse(DOC.as_bytes()).unwrap();
        let names: Vec<_> = d.sections().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["Goal", "Plan Reviews", "Decisions"]);
    }

    #[test]
    fn append_goes_to_section_end_and_keeps_other_bytes() {
        let mut d = Document::parse(DOC.as_bytes()).unwrap();
        assert!(d.append("Plan Reviews", "### review 1\n\nok\n"));
        let body = d.body.clone();
        assert!(
            body.contains("```\n\n### review 1\n\nok\n\n## Decisions"),
            "{body}"
        );
        assert!(
            body.starts_with(
                "# T\n\n## Goal\n\ng\n\n## Plan Reviews\n\n```\n## not a heading\n```\n"
            )
        );
    }

    #[test]
    fn missing_section_created_at_template_position() {
        let mut d = Document::parse(DOC.as_bytes()).unwrap();
        assert!(d.append("Evidence", "### e\n"));
        let names: Vec<_> = d.sections().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["Goal", "Evidence", "Plan Reviews", "Decisions"]);
        assert!(d.append("Validation", "### v\n"));
        let names: Vec<_> = d.sections().into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "Goal",
                "Evidence",
                "Plan Reviews",
                "Validation",
                "Decisions"
            ]
        );
    }

    #[test]
    fn crlf_append_keeps_style() {
        let text = "---\r\nphase: DRAFT\r\n---\r\n## Goal\r\n\r\ng\r\n";
        let mut d = Document::parse(text.as_bytes()).unwrap();
        assert!(d.append("Goal", "### x\n\nline\n"));
        assert!(!d.body.replace("\r\n", "").contains('\n'), "{:?}", d.body);
    }

    #[test]
    fn conflict_markers_are_errors() {
        let text = "---\nphase: DRAFT\n---\nok\n<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> b\n";
        let err = Document::parse(text.as_bytes()).unwrap_err();
        assert_eq!(
            err,
            SplitError::ConflictMarkers {
                line: 5,
                marker: "<<<<<<<".into()
            }
        );
    }

    #[test]
    fn the_first_conflict_marker_line_is_the_one_reported_whatever_its_kind() {
        let cases = [
            ("a\n======= x\n>>>>>>> b\n<<<<<<< c\n", 3, ">>>>>>>"),
            ("=======\n<<<<<<< HEAD\n", 1, "======="),
            ("x\n<<<<<<<<\n<<<<<<<\n", 3, "<<<<<<<"),
            ("x=======\n>>>>>>>\t\n", 2, ">>>>>>>"),
        ];
        for (body, line, marker) in cases {
            let text = format!("---\nphase: DRAFT\n---\n{body}");
            let err = Document::parse(text.as_bytes()).unwrap_err();
            assert_eq!(
                err,
                SplitError::ConflictMarkers {
                    line: line + 3,
                    marker: marker.into()
                },
                "{body:?}"
            );
        }
        let fm = "---\nphase: DRAFT\n=======\n---\nok\n";
        assert_eq!(
            Document::parse_frontmatter_only(fm.as_bytes()).unwrap_err(),
            SplitError::ConflictMarkers {
                line: 3,
                marker: "=======".into()
            }
        );
        assert!(Document::parse(b"---\nphase: DRAFT\n---\n==\n>>> x\n").is_ok());
    }

    #[test]
    fn notes_that_would_split_sections_are_refused() {
        assert!(check_note("fine\n### sub\ntext").is_ok());
        assert!(check_note("```\n## in fence\n```\n").is_ok());
        assert_eq!(check_note("a\n## Plan Reviews\n").unwrap_err().line, 2);
        assert_eq!(check_note("Title\n=====\n").unwrap_err().line, 2);
        assert_eq!(check_note("ok\n```\nunclosed\n").unwrap_err().line, 2);
        assert!(check_note("- a\n\n---\n").is_ok());
    }

    #[test]
    fn unclosed_html_comments_and_details_are_found_outside_code() {
        let line = |t: &str| unclosed_html(t).map(|h| (h.line, h.closer));
        assert_eq!(line("a\n<!-- open\nb"), Some((2, "`-->`")));
        assert_eq!(line("<!-- a -->\n<!--\nb\n-->\n"), None);
        assert_eq!(line("<!-- a --> x <!-- b"), Some((1, "`-->`")));
        assert_eq!(line("<!----> <!--> <!--->"), None);
        assert_eq!(
            line("<details>\n<Details open>\n</details>"),
            Some((1, "`</details>`"))
        );
        assert_eq!(
            line("<details><summary>s</summary>\n\nx\n</DETAILS >"),
            None
        );
        // not a details tag, closings without an opening, code
        assert_eq!(line("<detailsx> </details> <detail>"), None);
        assert_eq!(line("`<!--` and ``<details>`` and ` `` <!-- ` ``"), None);
        assert_eq!(line("```\n<!--\n<details>\n```\n"), None);
        // an unmatched backtick run is literal: the comment after it counts
        assert_eq!(line("`` <!-- `"), Some((1, "`-->`")));
        // a fence inside a comment is comment text
        assert_eq!(line("<!--\n```\n-->\n"), None);
        // notes say which line
        let p = check_note("ok\n\n<details>\n").unwrap_err();
        assert_eq!(p.line, 3);
        assert!(p.message.contains("never closed"), "{}", p.message);
    }

    #[test]
    fn one_pass_finds_what_the_separate_checks_find() {
        for text in [
            "a\n```\nx\n",
            "```\n<!--\n```\n<details>\n",
            "<!--\n```\n-->\n```\n",
            "~~~\n~~~\n<!-- a -->\n",
            "",
        ] {
            let (fence, html) = unclosed_blocks(text);
            assert_eq!(fence, unclosed_fence(text), "{text:?}");
            assert_eq!(html, unclosed_html(text), "{text:?}");
        }
        assert_eq!(unclosed_blocks("```\n<!--\n```\n<details>\n").0, None);
        assert_eq!(
            unclosed_blocks("```\n<!--\n```\n<details>\n")
                .1
                .map(|h| h.line),
            Some(4)
        );
    }

    #[test]
    fn code_spans_are_masked_in_linear_time() {
        // every run of backticks a different length: none closes, and none may rescan the line
        let mut line = String::new();
        for n in 1..2000 {
            line.push_str(&"`".repeat(n));
            line.push('x');
        }
        line.push_str("<!--");
        let start = std::time::Instant::now();
        assert!(unclosed_html(&line).is_some());
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
        assert_eq!(mask_code_spans("a `b<c` d"), "a `   ` d");
        assert_eq!(
            mask_code_spans("é `ü` ``x`` `"),
            "é `  ` ``x`` `".replace("x", " ")
        );
    }

    #[test]
    fn a_doubled_carriage_return_is_named() {
        assert_eq!(
            Document::parse(b"---\r\r\na: 1\r\r\n---\r\r\n"),
            Err(SplitError::DoubledCr { line: 1 })
        );
        assert_eq!(
            Document::parse(b"---\na: 1\n---\r\r\nbody\n"),
            Err(SplitError::DoubledCr { line: 3 })
        );
        // a plain unclosed frontmatter stays "not closed"
        assert_eq!(Document::parse(b"---\na: 1\n"), Err(SplitError::Unclosed));
    }

    #[test]
    fn split_errors() {
        assert_eq!(Document::parse(b""), Err(SplitError::Empty));
        assert!(matches!(
            Document::parse(b"hello\n"),
            Err(SplitError::NoFrontmatter { .. })
        ));
        assert_eq!(Document::parse(b"---\na: 1\n"), Err(SplitError::Unclosed));
        assert!(matches!(
            Document::parse(b"---\na: \xff\n---\n"),
            Err(SplitError::NotUtf8 { line: 2, .. })
        ));
    }
}
