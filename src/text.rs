//! Text that is safe to show and to paste: escaping what a board's text could use to drive a
//! terminal, quoting words for a shell, and the hex form every SHA-256 is written in. The
//! lowest layer: it knows nothing of boards. The output settings of the run (colour, quiet,
//! verbose, JSON) are set once, after parsing, and read here by whoever prints.

use std::borrow::Cow;
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// Whether a character must not reach a terminal as it is: the C0 controls (newline and tab
/// included; callers decide where those two are allowed), DEL, the C1 controls, and the bidi
/// overrides and isolates (U+202A–U+202E, U+2066–U+2069) that make text read differently
/// from what it is.
fn is_unsafe(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
    }
}

/// One value on one line — a heading, a key name, a path, a worktree — made safe to print:
/// every control character, DEL, C1 control and bidi override is shown as an escape (`\x1b`,
/// `\n`, `\u{202e}`). A tab between other characters is kept; a leading or trailing one is
/// escaped.
pub fn escape(s: &str) -> Cow<'_, str> {
    let last = s.chars().count().saturating_sub(1);
    let keep = |i: usize, c: char| c == '\t' && i != 0 && i != last;
    if !s
        .chars()
        .enumerate()
        .any(|(i, c)| is_unsafe(c) && !keep(i, c))
    {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for (i, c) in s.chars().enumerate() {
        if is_unsafe(c) && !keep(i, c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Text of several lines about to be printed: like [`escape`], but newlines and tabs stay. With
/// `keep_sgr`, the colour sequences `pair` writes itself (`ESC [ digits and ; m`) stay too.
pub fn sanitize(s: &str, keep_sgr: bool) -> Cow<'_, str> {
    let bad = |c: char| is_unsafe(c) && c != '\n' && c != '\t';
    if !s.chars().any(bad) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if c == '\x1b'
            && keep_sgr
            && let Some(len) = sgr_len(rest)
        {
            out.push_str(&rest[..len]);
            rest = &rest[len..];
            continue;
        }
        if bad(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// One line of a program's output as a terminal would leave it, in plain text: escape sequences
/// removed (CSI such as colours and cursor moves, OSC such as titles and links, and the other
/// `ESC` sequences, in their 7-bit and C1 forms), a carriage return starting the line over (a
/// progress bar keeps its last state), a backspace taking back the character before it, and
/// every other control character, DEL and bidi override dropped. Tabs stay.
pub fn strip_terminal(line: &str) -> String {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let line = match line.rfind('\r') {
        Some(i) => &line[i + 1..],
        None => line,
    };
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // CSI: parameters and intermediates, then one final byte.
            '\x1b' if chars.peek() == Some(&'[') => {
                chars.next();
                skip_csi(&mut chars);
            }
            '\u{9b}' => skip_csi(&mut chars),
            // OSC (and the other string sequences: DCS, SOS, PM, APC): up to BEL or ST.
            '\x1b' if matches!(chars.peek(), Some(']' | 'P' | 'X' | '^' | '_')) => {
                chars.next();
                skip_string(&mut chars);
            }
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            // Any other escape: intermediates, then one final character.
            '\x1b' => {
                while chars.peek().is_some_and(|c| (' '..='/').contains(c)) {
                    chars.next();
                }
                chars.next();
            }
            '\x08' => {
                out.pop();
            }
            '\t' => out.push(c),
            c if is_unsafe(c) => {}
            c => out.push(c),
        }
    }
    out
}

fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if ('@'..='~').contains(&c) {
            break;
        }
        if !(' '..='?').contains(&c) {
            // Not a CSI after all: stop at the first character it cannot hold.
            break;
        }
    }
}

fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        if c == '\x07' || c == '\u{9c}' {
            break;
        }
        if c == '\x1b' && chars.peek() == Some(&'\\') {
            chars.next();
            break;
        }
    }
}

/// The length of a Select Graphic Rendition sequence at the start of `s`, if there is one.
fn sgr_len(s: &str) -> Option<usize> {
    let params = s.strip_prefix("\x1b[")?;
    let n = params
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (params.as_bytes().get(n) == Some(&b'm')).then_some(2 + n + 1)
}

/// Quote a path for a shell command line in an action sentence.
pub fn shell_word(s: &str) -> String {
    // A word starting with `-` would be read as a flag; `./-x.md` names the same file.
    if s.starts_with('-') {
        return shell_word(&format!("./{s}"));
    }
    shell_arg(s)
}

/// Quote one argument (a flag, a value) for a shell command line. The line stays one line and
/// shows no control character: an argument holding one (a newline in a file name, say) is
/// quoted as `$'…'`, with each such character written as its escape (`\n`, `\x1b`, `\u202e`),
/// which bash, zsh, ksh and POSIX sh (since 2024) read back as the same bytes.
pub fn shell_arg(s: &str) -> String {
    if s.chars().any(is_unsafe) {
        let mut out = String::with_capacity(s.len() + 8);
        out.push_str("$'");
        for c in s.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if (c as u32) < 0x80 && is_unsafe(c) => {
                    out.push_str(&format!("\\x{:02x}", c as u32));
                }
                c if is_unsafe(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('\'');
        return out;
    }
    if !s.is_empty()
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '/' | '.' | '_' | '-' | '+' | ':' | '@' | '%' | '=' | ',')
        })
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// An argument vector as one shell line.
pub fn shell_line(argv: &[String]) -> String {
    argv.iter()
        .map(|a| shell_arg(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Lower-case hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lower-case hex of a digest.
pub fn hex(digest: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(2 * digest.len());
    for b in digest {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    out
}

/// `--color`: when to colour human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal, unless `NO_COLOR` is set or `TERM=dumb`
    /// (`CLICOLOR_FORCE` forces it on).
    #[default]
    Auto,
    /// Always colour, whatever stdout is and whatever the environment says.
    Always,
    /// Never colour.
    Never,
}

/// The output settings of one run, chosen on the command line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Settings {
    pub color: ColorChoice,
    /// `-q`: print only errors.
    pub quiet: bool,
    /// `-v`: say what was read, checked and written, with timings, on stderr.
    pub verbose: bool,
    /// `--json`: the machine-readable result.
    pub json: bool,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// Record the settings of this run (the first call wins; the binary makes it once, after
/// parsing the command line).
pub fn init(settings: Settings) {
    let _ = SETTINGS.set(settings);
}

/// The settings of this run (the defaults when [`init`] was never called).
pub fn settings() -> Settings {
    SETTINGS.get().copied().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::shell_arg;

    #[test]
    fn a_word_with_a_control_character_is_quoted_on_one_line() {
        assert_eq!(shell_arg("a b"), "'a b'");
        assert_eq!(shell_arg("x\ny.md"), "$'x\\ny.md'");
        assert_eq!(shell_arg("it's\t\\\x1b"), "$'it\\'s\\t\\\\\\x1b'");
        assert_eq!(shell_arg("a\u{202e}b"), "$'a\\u202eb'");
        // bash reads it back as the same word, where bash is installed.
        let word = "x\n2099 forged.md: it's \\ \x1b[2J";
        if let Ok(out) = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("printf %s {}", shell_arg(word)))
            .output()
        {
            assert_eq!(String::from_utf8_lossy(&out.stdout), word);
        }
    }
}
