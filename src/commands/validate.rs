//! `pair validate`: check blackboard files, or every blackboard under directories, for CI.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;

use super::Outcome;
use crate::cli::ValidateArgs;
use crate::error::{Error, Result};
use crate::model::FieldError;
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
    let mut text = String::new();
    for r in &reports {
        if r.valid {
            text.push_str(&format!("ok       {}\n", r.path));
        } else {
            text.push_str(&format!("invalid  {}\n", r.path));
            for e in &r.errors {
                text.push_str(&format!("  error: {e}\n"));
            }
        }
        for w in &r.warnings {
            text.push_str(&format!("  warning: {w}\n"));
        }
    }
    text.push_str(&format!(
        "{} blackboard{} checked, {} invalid\n",
        reports.len(),
        if reports.len() == 1 { "" } else { "s" },
        invalid
    ));
    let json = json!({
        "schema": SCHEMA,
        "valid": all_valid,
        "checked": reports.len(),
        "invalid": invalid,
        "files": reports,
    });
    Ok(Outcome {
        json,
        text,
        code,
        warnings: vec![],
    })
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
