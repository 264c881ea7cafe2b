//! Format versions (SPEC §2.1): what this `pair` accepts on read from a later version.
//!
//! A reader is tolerant: what a later version adds without changing how an existing field is
//! read — unknown frontmatter keys, unknown words in a journal record, fractional seconds in a
//! timestamp, unknown fields of a pin — is accepted, and the keys are kept on every write.

use crate::model::FieldError;
use crate::yaml::Node;

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
}
