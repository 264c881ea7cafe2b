//! How `pair` talks to people: the colour, quiet and verbose settings of the command line, the
//! escaping that keeps text read from a blackboard from driving the terminal, and the hints
//! (the repair command, the `.gitignore` lines) that several commands print.
//!
//! Every human renderer passes each value it did not write itself (a heading, a key name, a
//! path, a worktree) through [`escape`], and the binary passes the whole text through
//! [`sanitize`] before printing it. JSON needs neither: `serde_json` escapes control characters.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// Whether to colour what goes to stdout.
pub fn color_stdout() -> bool {
    use_color(
        settings().color,
        std::io::stdout().is_terminal(),
        |name: &str| std::env::var_os(name),
    )
}

/// The colour decision: `--color always`/`never` win; otherwise a non-empty `NO_COLOR` turns
/// colour off (<https://no-color.org>), a `CLICOLOR_FORCE` other than empty or `0` turns it on,
/// `TERM=dumb` turns it off, and else it is on exactly when the output is a terminal.
pub fn use_color(
    choice: ColorChoice,
    is_terminal: bool,
    env: impl Fn(&str) -> Option<OsString>,
) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            if env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
                false
            } else if env("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0") {
                true
            } else if env("TERM").is_some_and(|v| v == "dumb") {
                false
            } else {
                is_terminal
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// escaping

/// Print human text on stdout, [`sanitize`]d (keeping colour when stdout is coloured). A closed
/// pipe (`| head`) is not an error worth reporting.
pub fn print_stdout(text: &str) {
    use std::io::Write;
    let text = sanitize(text, color_stdout());
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// A path for a human, escaped.
pub fn path(p: &Path) -> String {
    escape(&p.display().to_string()).into_owned()
}

// ---------------------------------------------------------------------------------------------
// hints

use crate::text::{ColorChoice, settings};
use crate::text::{escape, sanitize, shell_word};

/// An error's whole message for a person: for a blackboard on disk that is invalid, the last
/// lines say how to repair it by hand, naming its current SHA-256 when it can be read.
pub fn message(e: &crate::Error) -> String {
    if let crate::Error::Missing { path } = e
        && let Some(board) = with_extension(path)
    {
        return format!(
            "{}: no such blackboard; did you mean {}, which exists? (a board is named with its \
             `.md`)",
            escape(&path.display().to_string()),
            escape(&shell_word(&board.display().to_string()))
        );
    }
    let mut text = e.to_string();
    if let crate::Error::Invalid {
        path,
        new_content: false,
        ..
    } = e
    {
        let sha = current_sha256(path);
        text.push_str(&format!(
            "\nto repair it by hand, write a fixed copy and replace the file with it:\n  {}",
            escape(&repair_command(path, sha.as_deref()))
        ));
    }
    text
}

/// `PATH.md`, when `path` (a file path, named without an extension) is missing and that is a
/// file: the board the caller most likely meant.
fn with_extension(path: &std::path::Path) -> Option<std::path::PathBuf> {
    if path.extension().is_some() || crate::store::location::is_git(path) {
        return None;
    }
    let mut name = path.file_name()?.to_os_string();
    name.push(".md");
    let board = path.with_file_name(name);
    std::fs::symlink_metadata(&board)
        .is_ok_and(|m| m.is_file())
        .then_some(board)
}

/// The JSON error envelope of docs/json.md: `{"schema", "error": {code, kind, message, …}}`.
/// An invalid blackboard also gets its path, every error, and (for the file on disk) its
/// current SHA-256 and the command that repairs it; a refusal with a step to take, the `hint`.
pub fn envelope(e: &crate::Error) -> serde_json::Value {
    use serde_json::json;
    let mut error = json!({"code": e.code(), "kind": e.kind(), "message": message(e)});
    if let crate::Error::Invalid {
        path,
        errors,
        new_content,
    } = e
    {
        error["path"] = json!(path.display().to_string());
        error["errors"] = json!(errors);
        if !new_content {
            let sha = current_sha256(path);
            error["repair"] = json!(repair_command(path, sha.as_deref()));
            error["sha256"] = json!(sha);
        }
    }
    if let Some(argv) = e.suggestion() {
        let mut full = vec!["pair".to_string()];
        full.extend(argv.iter().cloned());
        error["hint"] = json!({"argv": full, "command": command_line(argv)});
    }
    json!({"schema": crate::render::report::SCHEMA, "error": error})
}

/// A suggested command (the argument vector after `pair`) as one shell line.
pub fn command_line(argv: &[String]) -> String {
    format!("pair {}", crate::text::shell_line(argv))
}

/// The SHA-256 of a blackboard as it is on disk now, if it can be read.
pub fn current_sha256(path: &Path) -> Option<String> {
    crate::store::read(path, &crate::store::Session::default())
        .ok()
        .map(|bytes| crate::text::sha256_hex(&bytes))
}

/// The command that repairs an invalid blackboard by hand: write a fixed copy, then replace the
/// file with it, compare-and-swap on its current SHA-256 (`<sha256>` when it is not known).
pub fn repair_command(board: &Path, sha256: Option<&str>) -> String {
    format!(
        "pair write {} --content-file FIXED.md --expect-sha256 {} --repair --reason TEXT",
        shell_word(&board.display().to_string()),
        sha256.unwrap_or("<sha256>")
    )
}

/// The lines a repository's `.gitignore` should have for `pair`'s files beside a blackboard:
/// the lock and its owner file, the temporary file a killed writer may leave, the side
/// directory where `poll` keeps who is watching (`.<board>.pair/`), and the default worktrees. The lock patterns name `.md` files so that `Cargo.lock` and friends stay tracked.
pub const GITIGNORE_LINES: &[(&str, &str)] = &[
    ("*.md.lock", "task.md.lock"),
    ("*.md.lock.owner.json", "task.md.lock.owner.json"),
    (".*.md.pair-tmp-*", ".task.md.pair-tmp-x"),
    (
        ".*.md.lock.owner.json.pair-tmp-*",
        ".task.md.lock.owner.json.pair-tmp-x",
    ),
    (".*.md.pair/", ".task.md.pair/watch.json"),
    (".worktrees/", ".worktrees/task/x"),
];

/// When `board` is inside a git work tree whose ignore rules miss some of
/// [`GITIGNORE_LINES`], the text that suggests adding them (None when nothing is missing, or
/// when git or the work tree is not there).
pub fn gitignore_hint(board: &Path) -> Option<String> {
    let dir = match board.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let git = |args: &[&str]| crate::repo::git::as_user(&dir, args).ok();
    let top = crate::repo::git::toplevel(&dir).ok()??;
    let name = board.file_name()?.to_string_lossy().into_owned();
    let missing: Vec<&str> = GITIGNORE_LINES
        .iter()
        .filter(|(pattern, example)| {
            // A path like the one the pattern is for, next to this blackboard (or, for the
            // worktrees, at the top of the repository).
            let probe = if pattern.starts_with(".worktrees") {
                top.join(example)
            } else {
                dir.join(example.replace("task.md", &name))
            };
            // `check-ignore` exits 0 when the path is ignored, 1 when it is not.
            git(&[
                "check-ignore",
                "-q",
                "--no-index",
                &probe.display().to_string(),
            ])
            .is_some_and(|o| o.status.code() == Some(1))
        })
        .map(|(pattern, _)| *pattern)
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut text = format!(
        "hint: {} is in a git work tree; add these lines to its .gitignore so that pair's \
         lock files, side directory and worktrees are not committed (the blackboard {name} \
         itself may be committed, or ignored too: pair never commits it):\n",
        path(&top)
    );
    for line in missing {
        text.push_str(&format!("  {line}\n"));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_shows_controls_and_bidi_overrides_and_keeps_inner_tabs() {
        assert_eq!(escape("plain text"), "plain text");
        assert_eq!(
            escape("\x1b]0;title\x07\x1b[2J"),
            "\\x1b]0;title\\x07\\x1b[2J"
        );
        assert_eq!(escape("a\nb\rc"), "a\\nb\\rc");
        assert_eq!(escape("a\tb"), "a\tb");
        assert_eq!(escape("\ta\t"), "\\ta\\t");
        assert_eq!(escape("x\u{7f}\u{85}\u{9b}y"), "x\\x7f\\u{85}\\u{9b}y");
        assert_eq!(
            escape("\u{202e}evil\u{2066}\u{2069}"),
            "\\u{202e}evil\\u{2066}\\u{2069}"
        );
        assert_eq!(escape("café → ok"), "café → ok");
    }

    #[test]
    fn sanitize_keeps_lines_tabs_and_only_our_colour_sequences() {
        assert_eq!(sanitize("a\n\tb\n", false), "a\n\tb\n");
        assert_eq!(sanitize("\x1b[1mX\x1b[0m", true), "\x1b[1mX\x1b[0m");
        assert_eq!(sanitize("\x1b[1mX", false), "\\x1b[1mX");
        assert_eq!(
            sanitize("\x1b[2J\x1b]0;t\x07", true),
            "\\x1b[2J\\x1b]0;t\\x07"
        );
        assert_eq!(sanitize("r\r\n", true), "r\\r\n");
    }

    #[test]
    fn colour_follows_flag_then_no_color_then_clicolor_force_then_term() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        use ColorChoice::*;
        assert!(use_color(Auto, true, env(&[])));
        assert!(!use_color(Auto, false, env(&[])));
        assert!(!use_color(Auto, true, env(&[("NO_COLOR", "1")])));
        assert!(use_color(Auto, true, env(&[("NO_COLOR", "")])));
        assert!(use_color(Auto, false, env(&[("CLICOLOR_FORCE", "1")])));
        assert!(!use_color(Auto, false, env(&[("CLICOLOR_FORCE", "0")])));
        assert!(!use_color(
            Auto,
            false,
            env(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")])
        ));
        assert!(!use_color(Auto, true, env(&[("TERM", "dumb")])));
        assert!(use_color(Always, false, env(&[("NO_COLOR", "1")])));
        assert!(!use_color(Never, true, env(&[("CLICOLOR_FORCE", "1")])));
    }

    #[test]
    fn shell_words_quote_what_a_shell_would_split() {
        assert_eq!(shell_word("docs/task.md"), "docs/task.md");
        assert_eq!(shell_word("my task.md"), "'my task.md'");
        assert_eq!(shell_word("it's.md"), r"'it'\''s.md'");
        assert_eq!(shell_word("-x.md"), "./-x.md");
    }
}
