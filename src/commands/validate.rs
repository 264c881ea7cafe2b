//! `pair validate`: check blackboard files, or every blackboard under directories, for CI.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;

use super::Outcome;
use crate::cli::{ValidateArgs, ValidateFormat};
use crate::error::{Error, Result};
use crate::model::FieldError;
use crate::output::{self, escape, sanitize};
use crate::report::SCHEMA;
use crate::store;
use crate::validate;

#[derive(Debug, Serialize)]
struct FileReport {
    path: String,
    valid: bool,
    errors: Vec<FieldError>,
    warnings: Vec<FieldError>,
}

/// Directories never searched: version control, build output, dependencies.
const SKIP_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "target",
    "node_modules",
    ".worktrees",
];

/// Whether a file found in a directory walk looks like a blackboard: a `.md` file whose
/// frontmatter has a `phase:` key. Other Markdown (with or without frontmatter) is not ours.
fn looks_like_blackboard(path: &Path) -> bool {
    if path.extension().and_then(|e| e.to_str()) != Some("md") {
        return false;
    }
    match store::read_head(path) {
        Ok(head) => {
            let head = head
                .strip_prefix(crate::document::BOM.as_bytes())
                .unwrap_or(&head);
            head.starts_with(b"---")
                && head
                    .split(|b| *b == b'\n')
                    .any(|l| l.starts_with(b"phase:"))
        }
        Err(_) => false,
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, errors: &mut Vec<FileReport>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            errors.push(FileReport {
                path: dir.display().to_string(),
                valid: false,
                errors: vec![FieldError {
                    field: "path".into(),
                    line: None,
                    message: format!("cannot read the directory: {e}"),
                }],
                warnings: vec![],
            });
            return;
        }
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let Ok(ft) = entry.file_type() else { continue };
        if ft.is_dir() {
            let name = entry.file_name();
            if !SKIP_DIRS.contains(&name.to_string_lossy().as_ref()) {
                walk(&path, out, errors);
            }
        } else if ft.is_file() && looks_like_blackboard(&path) {
            out.push(path);
        }
    }
}

fn check(path: &Path) -> FileReport {
    let shown = path.display().to_string();
    let fail = |message: String| FileReport {
        path: shown.clone(),
        valid: false,
        errors: vec![FieldError {
            field: "file".into(),
            line: None,
            message,
        }],
        warnings: vec![],
    };
    let bytes = match store::read(path) {
        Ok(b) => b,
        Err(e @ Error::Missing { .. }) => return fail(e.to_string()),
        Err(e) => return fail(e.to_string()),
    };
    match validate::check_bytes(&bytes) {
        Ok(v) => FileReport {
            path: shown,
            valid: true,
            errors: vec![],
            warnings: v.parsed.warnings,
        },
        Err(r) => FileReport {
            path: shown,
            valid: false,
            errors: r.errors,
            warnings: r.warnings,
        },
    }
}

pub fn run(a: ValidateArgs) -> Result<Outcome> {
    let mut reports = Vec::new();
    let mut missing = 0;
    for p in &a.paths {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => {
                let mut found = Vec::new();
                walk(p, &mut found, &mut reports);
                for f in found {
                    reports.push(check(&f));
                }
            }
            Ok(_) => reports.push(check(p)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                missing += 1;
                reports.push(FileReport {
                    path: p.display().to_string(),
                    valid: false,
                    errors: vec![FieldError {
                        field: "file".into(),
                        line: None,
                        message: "no such file or directory".into(),
                    }],
                    warnings: vec![],
                });
            }
            Err(e) => reports.push(check_err(p, e)),
        }
    }
    let invalid = reports.iter().filter(|r| !r.valid).count();
    let all_valid = invalid == 0;
    let code = if invalid > missing {
        5
    } else if missing > 0 {
        7
    } else {
        0
    };
    let json = json!({
        "schema": SCHEMA,
        "valid": all_valid,
        "checked": reports.len(),
        "invalid": invalid,
        "files": reports,
    });
    let quiet = output::settings().quiet;
    let text = match a.format {
        ValidateFormat::Text => render_text(&reports, invalid, quiet),
        ValidateFormat::Json => format!("{json}\n"),
        ValidateFormat::Github => render_github(&reports, invalid, quiet),
    };
    Ok(Outcome {
        json,
        text,
        code,
        warnings: vec![],
    })
}

fn summary(reports: &[FileReport], invalid: usize) -> String {
    format!(
        "{} blackboard{} checked, {} invalid\n",
        reports.len(),
        if reports.len() == 1 { "" } else { "s" },
        invalid
    )
}

/// One line per file, errors and warnings below it, then the summary. Quiet: only the invalid
/// files and their errors.
fn render_text(reports: &[FileReport], invalid: usize, quiet: bool) -> String {
    let mut text = String::new();
    for r in reports {
        let path = escape(&r.path);
        if r.valid {
            if !quiet {
                text.push_str(&format!("ok       {path}\n"));
            }
        } else {
            text.push_str(&format!("invalid  {path}\n"));
            for e in &r.errors {
                text.push_str(&format!("  error: {}\n", output::field_error(e)));
            }
        }
        if !quiet {
            for w in &r.warnings {
                text.push_str(&format!("  warning: {}\n", output::field_error(w)));
            }
        }
    }
    if !quiet {
        text.push_str(&summary(reports, invalid));
    }
    text
}

/// GitHub Actions workflow commands: one `::error` per error and one `::warning` per warning,
/// each pointing at the file and, where known, the line; then the plain summary line.
fn render_github(reports: &[FileReport], invalid: usize, quiet: bool) -> String {
    let mut text = String::new();
    for r in reports {
        for (level, list) in [("error", &r.errors), ("warning", &r.warnings)] {
            if quiet && level == "warning" {
                continue;
            }
            for e in list {
                text.push_str(&annotation(level, &r.path, e));
                text.push('\n');
            }
        }
    }
    if !quiet {
        text.push_str(&summary(reports, invalid));
    }
    text
}

/// One workflow command, e.g. `::error file=task.md,line=3,title=pair validate: phase::…`. CR
/// and LF become GitHub's `%0D`/`%0A`; every other control character is escaped as in human
/// output, since the line is printed in the job's log.
pub(crate) fn annotation(level: &str, path: &str, e: &FieldError) -> String {
    let mut props = format!("file={}", sanitize(&escape_property(path), false));
    if let Some(line) = e.line {
        props.push_str(&format!(",line={line}"));
    }
    props.push_str(&format!(
        ",title={}",
        sanitize(
            &escape_property(&format!("pair validate: {}", e.field)),
            false
        )
    ));
    format!(
        "::{level} {props}::{}",
        sanitize(&escape_data(&e.message), false)
    )
}

/// Escape a workflow command's message (`%`, CR and LF).
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escape a workflow command's property value (also `:` and `,`).
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn check_err(p: &Path, e: std::io::Error) -> FileReport {
    FileReport {
        path: p.display().to_string(),
        valid: false,
        errors: vec![FieldError {
            field: "file".into(),
            line: None,
            message: format!("cannot stat: {e}"),
        }],
        warnings: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fe(field: &str, line: Option<u32>, message: &str) -> FieldError {
        FieldError {
            field: field.into(),
            line,
            message: message.into(),
        }
    }

    #[test]
    fn annotations_name_file_line_and_field() {
        assert_eq!(
            annotation(
                "error",
                "b/task.md",
                &fe("phase", Some(2), "not a phase: \"X\"")
            ),
            "::error file=b/task.md,line=2,title=pair validate%3A phase::not a phase: \"X\""
        );
        assert_eq!(
            annotation(
                "warning",
                "t.md",
                &fe("agents.x.color", None, "unknown key")
            ),
            "::warning file=t.md,title=pair validate%3A agents.x.color::unknown key"
        );
    }

    #[test]
    fn annotations_escape_what_github_would_misread() {
        assert_eq!(
            annotation(
                "error",
                "a,b:c%.md",
                &fe("f", Some(1), "50% done\nnext: line\r")
            ),
            "::error file=a%2Cb%3Ac%25.md,line=1,title=pair validate%3A f::50%25 done%0Anext: line%0D"
        );
    }

    #[test]
    fn annotations_escape_terminal_controls() {
        assert_eq!(
            annotation("warning", "t\x1b.md", &fe("k\u{202e}", None, "a\x07b\tc")),
            "::warning file=t\\x1b.md,title=pair validate%3A k\\u{202e}::a\\x07b\tc"
        );
    }
}
