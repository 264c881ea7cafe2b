//! Format versions (SPEC §2.1): which boards this `pair` may write, and what it accepts on read
//! from a later version.
//!
//! A board may say `format: N` in its frontmatter (absent means 1). This `pair` knows formats up
//! to [`CURRENT`]:
//!
//! * **Reading is tolerant.** What a later version adds without changing how an existing field is
//!   read — unknown frontmatter keys, unknown words in a journal record, fractional seconds in a
//!   timestamp, unknown fields of a pin — is accepted, and the keys are kept on every write. A
//!   board of a newer format is read as far as this version can, with a warning (a parse error
//!   on it says the format is newer, since that may be the cause).
//! * **Writing a newer board is refused** ([`crate::Error::Format`], exit [`crate::error::exit::FORMAT`]), the
//!   file untouched: a newer format may have changed what a field means, and a write by this
//!   version would judge and rewrite it by the old meaning. The check is in the one place every
//!   write goes through ([`crate::store::compose`], for files and git boards alike), on the
//!   board as found under the lock and on the new content.
//!
//! `format` is a setting ([`crate::board::field::Owner::Settings`]): set when a board is made, changed
//! only by a recorded human repair or by `pair migrate BOARD`, which upgrades a board to
//! [`CURRENT`]. `format: 1` and no `format` key are the same board (neither
//! is a change); the key is written only when the board has it, so a board without it stays
//! byte for byte what it was.

use std::path::Path;

use crate::board::frontmatter::Frontmatter;
use crate::board::yaml::{Node, Value};
use crate::error::FieldError;
use crate::error::{Error, Result};

/// The newest format this `pair` reads and writes.
///
/// * **1**: the protocol's board (no `format` key, or `format: 1`).
/// * **2**: the frontmatter also carries the journal's seal (`journal: {records, head}`, see
///   [`crate::board::journal::Seal`]), which every write sets, so that records removed from the
///   journal, or added to it by hand, are errors. A reader of format 1 would keep the key but not
///   set it, leaving a seal that no longer matches: hence a new format, which such a reader
///   refuses to write. `init` makes boards of this format; a board of format 1 stays format 1
///   through every write (an older `pair` may still share it) until `pair migrate BOARD`
///   upgrades it.
/// * **3**: a signed board. Every record also names the content its write left (`content=`)
///   and carries its writer's SSH signature (`sig=`, [`crate::board::journal::signed_message`]),
///   and the seal names the board's identity (`journal.board`). A reader of format 2 would
///   write unsigned records on it: hence a new format, which such a reader refuses to write.
///   `init --signed` makes one; `pair migrate BOARD --signed` turns a board signed. A board is
///   signed only when asked: `init` makes boards of format [`UNSIGNED`] by default.
pub const CURRENT: u32 = 3;

/// The newest format of an unsigned board: what `init` and `pair migrate BOARD` make unless
/// asked for a signed board.
pub const UNSIGNED: u32 = 2;

/// The format of a signed board.
pub const SIGNED: u32 = 3;

/// The frontmatter key.
pub const FIELD: &str = "format";

/// The format of a board (absent: 1).
pub fn of(fm: &Frontmatter) -> u32 {
    fm.format.unwrap_or(1)
}

/// The `format` value as the frontmatter writes it (`None`: the board has no `format` key).
pub fn value(fm: &Frontmatter) -> Option<String> {
    fm.format.map(|n| n.to_string())
}

/// Read the `format` value: a whole number from 1.
pub fn conv(v: &Value) -> std::result::Result<Option<u32>, String> {
    let expected = "expected the board's format version, a whole number from 1 (unquoted; \
                    absent means 1)";
    match v {
        Value::Int(i) if *i >= 1 && *i <= i128::from(u32::MAX) => Ok(Some(*i as u32)),
        Value::Int(i) => Err(format!("{expected}, found {i}")),
        Value::Seq(_) | Value::Map(_) | Value::Null => {
            Err(format!("{expected}, found {}", v.describe()))
        }
        other => Err(format!(
            "{expected}, found {} {}",
            other.kind(),
            other.describe()
        )),
    }
}

/// Called for every frontmatter read ([`crate::board::frontmatter::from_node`]): a board of a newer format
/// gets a warning, and an error list on it a last line saying the format may be why.
pub fn on_read(
    format: Option<u32>,
    line: Option<u32>,
    warnings: &mut Vec<FieldError>,
    errors: &mut Vec<FieldError>,
) {
    let Some(found) = format.filter(|f| *f > CURRENT) else {
        return;
    };
    let line = line.filter(|l| *l > 0);
    warnings.insert(
        0,
        FieldError {
        field: FIELD.into(),
        line,
        message: format!(
            "this board is format {found}, newer than this pair knows (format {CURRENT}): it is \
             read as far as this version can, and writes to it are refused; upgrade pair"
        ),
    },
    );
    if !errors.is_empty() {
        errors.push(FieldError {
            field: FIELD.into(),
            line,
            message: format!(
                "this board is format {found}, newer than this pair knows (format {CURRENT}), \
                 which may be why it does not read; upgrade pair"
            ),
        });
    }
}

/// The warning for a command that read a board of format `found`, newer than this `pair` knows.
pub fn read_notice(found: u32) -> String {
    format!(
        "the board read is format {found}, newer than this pair knows (format {CURRENT}): it \
         was read as far as this version can, and writes to it are refused; upgrade pair"
    )
}

/// The `format` a board's bytes declare, read without judging the rest of the frontmatter (a
/// newer format may not read as this one). `None` when it says none, or cannot be read.
pub fn declared(bytes: &[u8]) -> Option<u32> {
    // The form every write emits is read from its line, without splitting the board: a large
    // frontmatter is not split a second time just to learn its format.
    if let Some(end) = crate::board::document::frontmatter_end(bytes) {
        let head = &bytes[..end];
        memchr::memmem::find(head, FIELD.as_bytes())?;
        if let Ok(text) = std::str::from_utf8(head) {
            let open = text.find('\n').map_or(text.len(), |i| i + 1);
            let close = text
                .trim_end_matches(['\n', '\r'])
                .rfind('\n')
                .map_or(open, |i| (i + 1).max(open));
            if let Some(n) = declared_line(&text[open..close]) {
                return Some(n);
            }
        }
    }
    let doc = crate::board::document::Document::parse_frontmatter_only(bytes).ok()?;
    // Boards without the key cost one scan of the frontmatter, not a second parse.
    memchr::memmem::find(doc.fm_text.as_bytes(), FIELD.as_bytes())?;
    // The form every write emits (`format: N` on a line of its own at the top level) is read
    // from that line; any other form is left to the YAML parser.
    if let Some(n) = declared_line(&doc.fm_text) {
        return Some(n);
    }
    declared_by_parse(&doc.fm_text)
}

/// `N` when the frontmatter has exactly one top-level line `format: N` (a whole number from
/// one written in decimal without a leading zero, optionally followed by a comment), which is
/// what the YAML parser reads from such a frontmatter too.
fn declared_line(fm: &str) -> Option<u32> {
    let mut found = None;
    let key = "format:";
    let starts = std::iter::once(0)
        .filter(|_| fm.starts_with(key))
        .chain(memchr::memmem::find_iter(fm.as_bytes(), "\nformat:").map(|i| i + 1));
    for start in starts {
        let rest = &fm[start + key.len()..];
        let rest = &rest[..rest.find('\n').unwrap_or(rest.len())];
        let rest = rest.strip_suffix('\r').unwrap_or(rest);
        if found.is_some() {
            return None;
        }
        let value = match rest.find(" #") {
            Some(i) => &rest[..i],
            None => rest,
        };
        let value = value.trim_matches(' ');
        let digits = !value.is_empty()
            && !value.starts_with('0')
            && value.len() <= 9
            && value.bytes().all(|b| b.is_ascii_digit());
        if !digits || !rest.starts_with(' ') {
            return None;
        }
        found = value.parse::<u32>().ok();
    }
    found
}

fn declared_by_parse(fm: &str) -> Option<u32> {
    let node = crate::board::yaml::parse(fm, 0).ok()?;
    let Value::Map(entries) = node.value else {
        return None;
    };
    match entries.iter().find(|(k, _)| k == FIELD)?.1.value {
        Value::Int(i) if i >= 1 => Some(u32::try_from(i).unwrap_or(u32::MAX)),
        _ => None,
    }
}

/// Refuse a write to a board, as found under the lock, whose format is newer than this `pair`
/// knows.
pub fn check_board(path: &Path, bytes: Option<&[u8]>) -> Result<()> {
    match bytes.and_then(declared) {
        Some(found) if found > CURRENT => Err(Error::Format {
            path: path.to_path_buf(),
            found,
            known: CURRENT,
            new_content: false,
        }),
        _ => Ok(()),
    }
}

/// Refuse new content (a creation, a repair) that names a format newer than this `pair` knows.
pub fn check_new(path: &Path, fm: &Frontmatter) -> Result<()> {
    match of(fm) {
        found if found > CURRENT => Err(Error::Format {
            path: path.to_path_buf(),
            found,
            known: CURRENT,
            new_content: true,
        }),
        _ => Ok(()),
    }
}

/// Refuse new content that would make a signed board unsigned: once its records are signed
/// (format [`crate::board::journal::SIGNED_FROM`] or later), every write keeps the format, a
/// repair included, so no write can drop the signatures that vouch for the records before it.
pub fn check_kept_signed(old: Option<u32>, fm: &Frontmatter) -> Result<()> {
    let signed = crate::board::journal::SIGNED_FROM;
    match (old, of(fm)) {
        (Some(was), now) if was >= signed && now < signed => Err(Error::protocol(format!(
            "this board is signed (format {was}): a write may not make it format {now}, which \
             drops the signatures of its records, and a repair may not either; nothing was \
             written. Keep `format: {was}` (its records signed with your key: --signing-key)"
        ))),
        _ => Ok(()),
    }
}

/// The words of a journal record this version reads, in their order: a word whose key it does
/// not know (a later version's) is skipped, wherever it stands.
pub fn known_words<'a>(words: &'a str, known: &'a [&'a str]) -> impl Iterator<Item = &'a str> + 'a {
    words
        .split(' ')
        .filter(move |w| w.split_once('=').is_some_and(|(k, _)| known.contains(&k)))
}

/// A timestamp's whole-second text (`…:SSZ`) and its fraction in nanoseconds: a later version
/// may write fractional seconds (`2026-05-01T10:00:00.250Z`). Digits past the nanosecond are
/// dropped. `None`: a fraction that is not one.
pub fn split_fraction(s: &str) -> Option<(std::borrow::Cow<'_, str>, u32)> {
    let Some((whole, rest)) = s.split_once('.') else {
        return Some((s.into(), 0));
    };
    let digits = rest.strip_suffix('Z')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let nanos = digits
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(9)
        .fold(0u32, |n, b| n * 10 + u32::from(b - b'0'));
    Some((format!("{whole}Z").into(), nanos))
}

/// The fraction of a timestamp as written back: nothing for whole seconds (every time this
/// version takes), else milli-, micro- or nanoseconds, as precise as the value.
pub fn fraction(nanos: u32) -> String {
    match nanos {
        0 => String::new(),
        n if n % 1_000_000 == 0 => format!(".{:03}", n / 1_000_000),
        n if n % 1_000 == 0 => format!(".{:06}", n / 1_000),
        n => format!(".{n:09}"),
    }
}

/// Keys of a mapping this version does not know (a pin's), kept by value so that a write
/// carries them over.
#[derive(Debug, Clone, Default)]
pub struct Unknown(pub Vec<(String, Node)>);

impl PartialEq for Unknown {
    fn eq(&self, other: &Unknown) -> bool {
        self.0 == other.0
    }
}

// Node equality compares values, floats by their bits: it is an equivalence.
impl Eq for Unknown {}

/// The warning for an unknown key that is kept.
pub fn unknown_key(field: String, node: &Node) -> FieldError {
    FieldError {
        field,
        line: (node.line > 0).then_some(node.line),
        message: "unknown field (kept as is; a newer version of pair may use it)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_read_and_write_back() {
        let (whole, n) = split_fraction("2026-05-01T10:00:00.250Z").unwrap();
        assert_eq!((whole.as_ref(), n), ("2026-05-01T10:00:00Z", 250_000_000));
        assert_eq!(fraction(n), ".250");
        assert_eq!(
            split_fraction("2026-05-01T10:00:00.5Z").unwrap().1,
            500_000_000
        );
        assert_eq!(fraction(500_000_000), ".500");
        assert_eq!(
            split_fraction("2026-05-01T10:00:00.000001Z").unwrap().1,
            1_000
        );
        assert_eq!(fraction(1_000), ".000001");
        assert_eq!(fraction(7), ".000000007");
        assert_eq!(
            split_fraction("2026-05-01T10:00:00.1234567891Z").unwrap().1,
            123_456_789
        );
        assert_eq!(fraction(0), "");
        for bad in [
            "2026-05-01T10:00:00.Z",
            "2026-05-01T10:00:00.2x5Z",
            "2026-05-01T10:00:00.25",
        ] {
            assert!(split_fraction(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn unknown_record_words_are_skipped() {
        let known = ["at", "by", "prev"];
        let words: Vec<_> = known_words("at=1 model=x by=a  stray prev=-", &known).collect();
        assert_eq!(words, ["at=1", "by=a", "prev=-"]);
    }

    #[test]
    fn the_declared_format_is_read_without_judging_the_board() {
        let board = |fm: &str| format!("---\n{fm}---\n# body\n");
        assert_eq!(declared(board("phase: DRAFT\n").as_bytes()), None);
        assert_eq!(
            declared(board("format: 2\nphase: NEW\n").as_bytes()),
            Some(2)
        );
        assert_eq!(
            declared(board("phase: X\nformat: 7 # c\n").as_bytes()),
            Some(7)
        );
        assert_eq!(declared(board("format: \"2\"\n").as_bytes()), None);
        assert_eq!(declared(b"no frontmatter"), None);
    }

    #[test]
    fn the_format_line_is_read_as_the_yaml_parser_reads_it() {
        for fm in [
            "format: 2\nphase: NEW\n",
            "phase: X\nformat: 7 # c\n",
            "format: 12\n",
            "format: 0\n",
            "format: 07\n",
            "format: -1\n",
            "format: 2.0\n",
            "format: \"2\"\n",
            "format: two\n",
            "format:\n",
            "format:  3  \n",
            "format: 3#c\n",
            "format: 4294967296\n",
            "format: 2\nformat: 3\n",
            "formats: 2\n",
            "title: format\nformat: 5\n",
            "a:\n  format: 3\n",
            "a: |\n  format: 3\nb: 1\n",
        ] {
            let by_parse = declared_by_parse(fm);
            if let Some(n) = declared_line(fm) {
                assert_eq!(Some(n), by_parse, "{fm:?}");
            }
            let board = format!("---\n{fm}---\n# body\n");
            assert_eq!(declared(board.as_bytes()), by_parse, "{fm:?}");
        }
    }

    #[test]
    fn the_format_value_is_a_whole_number_from_one() {
        assert_eq!(conv(&Value::Int(1)), Ok(Some(1)));
        assert_eq!(conv(&Value::Int(3)), Ok(Some(3)));
        for bad in [
            Value::Int(0),
            Value::Int(-1),
            Value::Str("2".into()),
            Value::Float(1.5),
            Value::Null,
        ] {
            let e = conv(&bad).unwrap_err();
            assert!(e.contains("format version"), "{e}");
        }
    }
}
