//! What `pair check` keeps of a command's output: its last lines, plus the lines from earlier
//! that say what passed or failed (a test runner's summary, which a runner often prints before
//! more output: a doc-test run, a coverage table, a teardown log), in plain text (escape
//! sequences and control characters stripped, [`crate::text::strip_terminal`]) and bounded.
//! The output is read as it comes, one line at a time: a long run is never held whole.

use std::collections::VecDeque;

/// The most output a check's record keeps: its last lines, up to this many bytes.
pub const TAIL_LINES: usize = 30;
pub const TAIL_BYTES: usize = 4000;
/// The most summary lines kept from before the tail (the last ones), and their length each.
const SUMMARY_LINES: usize = 10;
const SUMMARY_CHARS: usize = 300;
/// The longest line read; the rest of a longer one is dropped.
const LINE_BYTES: usize = 16 * 1024;

/// A kind of line that says what passed or failed, and the runner it comes from (the summary
/// lines `pair check` keeps; docs/commands.md lists them).
pub struct Summary {
    pub runner: &'static str,
    pub example: &'static str,
    pub matches: fn(&str) -> bool,
}

/// Words that count a result, after a number: `3 passed`, `1 failing`.
const COUNTED: &[&str] = &[
    "passed", "failed", "passing", "failing", "pending", "skipped", "errors", "error", "failures",
    "failure", "examples", "example",
];

/// A number followed by one of [`COUNTED`].
fn counts(line: &str) -> bool {
    let words: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == '(' || c == ')')
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(2).any(|w| {
        w[0].bytes().all(|b| b.is_ascii_digit()) && COUNTED.contains(&w[1].trim_end_matches('.'))
    })
}

/// The summary lines `pair check` recognises, as data.
pub const SUMMARIES: &[Summary] = &[
    Summary {
        runner: "cargo test (libtest)",
        example: "test result: ok. 3 passed; 0 failed; 0 ignored",
        matches: |l| l.starts_with("test result: "),
    },
    Summary {
        runner: "pytest",
        example: "===== 3 passed, 1 skipped in 0.12s =====",
        matches: |l| {
            l.starts_with('=') && l.ends_with('=') && (counts(l) || l.contains("no tests ran"))
        },
    },
    Summary {
        runner: "jest, vitest",
        example: "Tests: 3 passed, 3 total",
        matches: |l| {
            let t = l.trim_start();
            (t.starts_with("Tests") || t.starts_with("Test Suites") || t.starts_with("Test Files"))
                && counts(t)
        },
    },
    Summary {
        runner: "go test",
        example: "ok  \texample.com/pkg\t0.01s",
        matches: |l| {
            matches!(l.trim_end(), "PASS" | "FAIL")
                || l.starts_with("ok  \t")
                || l.starts_with("FAIL\t")
        },
    },
    Summary {
        runner: "unittest",
        example: "Ran 3 tests in 0.001s",
        matches: |l| {
            (l.starts_with("Ran ") && l.contains(" test"))
                || l.trim_end() == "OK"
                || l.starts_with("OK (")
                || l.starts_with("FAILED (")
        },
    },
    Summary {
        runner: "any other that counts its results",
        example: "3 examples, 0 failures",
        matches: counts,
    },
];

/// The summary lines as a Markdown table, for docs/commands.md (checked against it by a test).
pub fn markdown_table() -> String {
    let mut t = String::from("| runner | a summary line it prints |\n|---|---|\n");
    for s in SUMMARIES {
        t.push_str(&format!(
            "| {} | `{}` |\n",
            s.runner,
            s.example.replace('\t', " ")
        ));
    }
    t
}

/// Whether a (stripped) line says what passed or failed.
pub fn is_summary(line: &str) -> bool {
    SUMMARIES.iter().any(|s| (s.matches)(line))
}

/// The output of a command, read as it comes.
#[derive(Debug, Default)]
pub struct Collector {
    /// The bytes of the line being read.
    partial: Vec<u8>,
    /// The last lines, stripped.
    tail: VecDeque<String>,
    /// Summary lines that left the tail, the last [`SUMMARY_LINES`].
    earlier: VecDeque<String>,
    /// Lines that left the tail.
    dropped: usize,
}

impl Collector {
    pub fn push(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some(i) = memchr::memchr(b'\n', rest) {
            self.extend(&rest[..i]);
            let line = std::mem::take(&mut self.partial);
            self.line(&line);
            rest = &rest[i + 1..];
        }
        self.extend(rest);
    }

    fn extend(&mut self, bytes: &[u8]) {
        let room = LINE_BYTES.saturating_sub(self.partial.len());
        self.partial
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn line(&mut self, bytes: &[u8]) {
        let mut l = crate::text::strip_terminal(&String::from_utf8_lossy(bytes));
        // A line that reads as a git conflict marker may not stand in a blackboard.
        if crate::board::document::conflict_marker(&l).is_some() {
            l.insert(0, ' ');
        }
        self.tail.push_back(l);
        if self.tail.len() > TAIL_LINES
            && let Some(old) = self.tail.pop_front()
        {
            self.dropped += 1;
            if is_summary(&old) {
                if self.earlier.len() == SUMMARY_LINES {
                    self.earlier.pop_front();
                }
                self.earlier
                    .push_back(old.chars().take(SUMMARY_CHARS).collect());
            }
        }
    }

    /// The summary lines anywhere in the output (the last [`SUMMARY_LINES`] from before the
    /// tail, and those in it).
    pub fn summary(&self) -> Vec<String> {
        self.earlier
            .iter()
            .chain(self.tail.iter().filter(|l| is_summary(l)))
            .cloned()
            .collect()
    }

    /// What the record keeps: the summary lines from before the tail, a line saying how many
    /// were left out, then the last lines, at most [`TAIL_BYTES`] in all (the tail gives way
    /// first, from its start).
    pub fn finish(mut self) -> (String, Vec<String>) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line);
        }
        while self.tail.back().is_some_and(|l| l.trim().is_empty()) {
            self.tail.pop_back();
        }
        let summary = self.summary();
        let mut head = String::new();
        if !self.earlier.is_empty() {
            for l in &self.earlier {
                head.push_str(l);
                head.push('\n');
            }
            head.push_str(&format!(
                "[… {} lines of output left out; the summary lines among them are above, the \
                 last {} lines follow]\n",
                self.dropped,
                self.tail.len()
            ));
        }
        let mut tail: String = self
            .tail
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n");
        let room = TAIL_BYTES.saturating_sub(head.len());
        if tail.len() > room {
            let mut cut = tail.len() - room;
            while !tail.is_char_boundary(cut) {
                cut += 1;
            }
            tail = tail[cut..].to_string();
        }
        (format!("{head}{tail}"), summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(output: &[u8]) -> (String, Vec<String>) {
        let mut c = Collector::default();
        // In small pieces, as a pipe may deliver it.
        for chunk in output.chunks(7) {
            c.push(chunk);
        }
        c.finish()
    }

    #[test]
    fn every_example_is_a_summary_and_noise_is_not() {
        for s in SUMMARIES {
            assert!((s.matches)(s.example), "{}", s.runner);
        }
        for noise in [
            "test tests::adds ... ok",
            "   Compiling pair v0.1.0",
            "running 3 tests",
            "tests/test_x.py ...                                         [100%]",
            "warning: unused variable",
            "version 3.2 passed to the linker",
        ] {
            assert!(!is_summary(noise), "{noise}");
        }
    }

    #[test]
    fn the_tail_is_bounded_stripped_and_keeps_the_summary_from_earlier() {
        let mut out = String::from("\x1b[1m\x1b[32mtest result:\x1b[0m ok. 3 passed; 0 failed\n");
        for i in 0..100 {
            out.push_str(&format!("\x1b]0;title\x07noise {i}\r\n"));
        }
        let (t, summary) = kept(out.as_bytes());
        assert!(
            t.starts_with("test result: ok. 3 passed; 0 failed\n[… 71 lines"),
            "{t}"
        );
        assert!(t.ends_with("noise 99"), "{t}");
        assert_eq!(t.lines().count(), TAIL_LINES + 2);
        assert!(!t.chars().any(|c| c.is_control() && c != '\n'), "{t:?}");
        assert_eq!(summary, ["test result: ok. 3 passed; 0 failed"]);
        let long = "x".repeat(10_000);
        assert_eq!(kept(long.as_bytes()).0.len(), TAIL_BYTES);
        let (markers, _) = kept(b"<<<<<<< HEAD\n=======\n>>>>>>> other\n\x1b[31mred\n");
        assert!(
            markers
                .lines()
                .all(|l| crate::board::document::conflict_marker(l).is_none()),
            "{markers}"
        );
        assert!(markers.ends_with("\nred"), "{markers}");
        // A progress bar keeps its last state; a backspace takes back a character.
        assert_eq!(kept(b"10%\r50%\r100%\nab\x08c\n").0, "100%\nac");
    }
}
