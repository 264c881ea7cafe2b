//! `pair validate`: check blackboard files, or every blackboard under directories, for CI.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;

use super::Outcome;
use crate::board::document::{SplitError, conflict_marker};
use crate::cli::{ValidateArgs, ValidateFormat};
use crate::error::FieldError;
use crate::error::{Error, Result, exit};
use crate::law::validate::{self, Report, Valid};
use crate::render::output::{self};
use crate::render::report::SCHEMA;
use crate::store;
use crate::store::Session;
use crate::store::gitref::OnRemote;
use crate::store::location::GitBoard;
use crate::text::escape;
use crate::text::sanitize;

#[derive(Debug, Serialize)]
struct FileReport {
    path: String,
    valid: bool,
    /// SHA-256 of the bytes checked (what `pair write --expect-sha256` wants); None when they
    /// could not be read.
    sha256: Option<String>,
    errors: Vec<FieldError>,
    warnings: Vec<FieldError>,
    /// Which checks of the git lifecycle apply to a valid blackboard.
    #[serde(skip_serializing_if = "Option::is_none")]
    lifecycle: Option<serde_json::Value>,
    /// On a board that uses the objection ledger: its stop reasons and open objections.
    #[serde(skip_serializing_if = "Option::is_none")]
    ledger: Option<String>,
    /// On a signed board: the trust root its records were checked against, how many verified,
    /// and the agents it could not vouch for.
    #[serde(skip_serializing_if = "Option::is_none")]
    signatures: Option<crate::signature::Checked>,
}

/// The lifecycle checks that apply to a board, as `validate` reports them, and a warning for
/// each recorded step a check now contradicts. `remote` is the board's remote, for a git board.
fn lifecycle(
    fm: &crate::board::frontmatter::Frontmatter,
    remote: Option<(&Path, &GitBoard)>,
) -> (serde_json::Value, Vec<FieldError>) {
    let checks: Vec<serde_json::Value> = crate::law::lifecycle::applicable(fm)
        .into_iter()
        .map(|(c, applies)| {
            json!({"name": c.name, "step": c.step, "applies": applies, "rule": c.rule})
        })
        .collect();
    let found = check_here(fm, remote);
    let warnings = found
        .ran
        .iter()
        .filter(|c| c["ok"] == false)
        .map(|c| FieldError {
            field: "lifecycle".into(),
            line: None,
            message: format!(
                "the recorded step no longer holds: {} failed: {}",
                c["name"].as_str().unwrap_or_default(),
                c["detail"].as_str().unwrap_or_default()
            ),
        })
        .collect();
    let value = json!({
        "verified": crate::law::lifecycle::verified(fm),
        "repo_root": fm.audit.repo_root,
        "checks": checks,
        "checked_here": found.here,
        "checked": found.ran,
        "not_checked": found.not_checked,
        "merged": found.merged,
    });
    (value, warnings)
}

/// What `validate` found of the recorded lifecycle just now.
#[derive(Default)]
struct Found {
    /// Whether it could check the recorded steps here (the repository is on this machine, or the
    /// board's remote has what a git board published), and did, as far as the board has come.
    here: bool,
    /// `{name, ok, detail}` of each check run.
    ran: Vec<serde_json::Value>,
    /// `{name, detail}` of each recorded step that could not be checked here, and why.
    not_checked: Vec<serde_json::Value>,
    /// Whether the branch the board records the merge into contains the commit: `None` when no
    /// merge is recorded or it could not be checked here.
    merged: Option<bool>,
}

impl Found {
    fn ran(&mut self, name: &str, ok: bool, detail: String) {
        self.ran
            .push(json!({"name": name, "ok": ok, "detail": detail}));
    }

    fn not_checked(&mut self, name: &str, detail: String) {
        self.not_checked
            .push(json!({"name": name, "detail": detail}));
    }
}

/// The recorded lifecycle checked now: on a git board, against what its remote holds (the
/// commit `advance COMMITTED` published, the branch the merge went into), from any clone; on a
/// file board, against the repository where it is present. The worktree's removal is checked
/// where the repository is. Where nothing can be checked (no repository recorded, or neither it
/// nor a remote here), `here` is false and `ran` empty: the steps are recorded, not checked.
fn check_here(
    fm: &crate::board::frontmatter::Frontmatter,
    remote: Option<(&Path, &GitBoard)>,
) -> Found {
    let mut found = Found::default();
    let Some(root) = fm.audit.repo_root.as_deref().map(Path::new) else {
        return found;
    };
    let local = crate::repo::head(root).is_ok() && root.join(".git").exists();
    match remote {
        Some((board, g)) => check_on_remote(fm, board, g, &mut found),
        None if local => check_in_repository(fm, root, &mut found),
        None => return found,
    }
    if fm.audit.worktree_removed == Some(true)
        && let Some(wt) = fm.worktree.as_deref()
    {
        if local {
            let gone = !Path::new(wt).exists();
            found.ran(
                "worktree-removed",
                gone,
                format!("{wt} is {}", if gone { "gone" } else { "still there" }),
            );
        } else {
            found.not_checked(
                "worktree-removed",
                format!(
                    "the worktree {wt} was on the machine of the repository {} (not here)",
                    root.display()
                ),
            );
        }
    }
    found.here =
        !found.ran.is_empty() || (found.not_checked.is_empty() && (local || remote.is_some()));
    found
}

/// The checks of a file board's lifecycle, in the recorded repository on this machine.
fn check_in_repository(
    fm: &crate::board::frontmatter::Frontmatter,
    root: &Path,
    found: &mut Found,
) {
    let Some(sha) = fm.audit.commit_sha.as_deref() else {
        return;
    };
    match crate::repo::commit(root, sha) {
        Ok(Some(full)) => {
            found.ran(
                "commit-exists",
                true,
                format!("commit {full} is in {}", root.display()),
            );
            if let Some(want) = crate::law::lifecycle::approved_tree(fm) {
                let tree = crate::repo::tree_of(root, &full).unwrap_or_default();
                found.ran(
                    "commit-is-approved-tree",
                    tree == want,
                    format!("its tree is {tree}; the approved tree is {want}"),
                );
            }
            // Each step is checked when the board records it: the merge by `merged_into`.
            if let Some(into) = fm.audit.merged_into.as_deref() {
                let tip = crate::repo::branch(root, into).ok().flatten();
                let ok = tip
                    .as_deref()
                    .is_some_and(|t| crate::repo::is_ancestor(root, &full, t).unwrap_or(false));
                found.merged = Some(ok);
                found.ran(
                    "merged",
                    ok,
                    format!(
                        "{into} {} the commit",
                        if ok { "contains" } else { "does not contain" }
                    ),
                );
            }
        }
        _ => found.ran(
            "commit-exists",
            false,
            format!("no commit {sha} in {}", root.display()),
        ),
    }
}

/// The checks of a git board's lifecycle, against its remote: the commit `advance COMMITTED`
/// published with its write is fetched from the board's artifact ref, its tree compared with
/// the approved one, and the branch the merge went into read on the same remote.
fn check_on_remote(
    fm: &crate::board::frontmatter::Frontmatter,
    board: &Path,
    g: &GitBoard,
    found: &mut Found,
) {
    let Some(sha) = fm.audit.commit_sha.as_deref() else {
        return;
    };
    let merge = fm.audit.merged_into.as_deref();
    let not_checked = |found: &mut Found, why: &str| {
        found.not_checked("commit-exists", why.to_string());
        if crate::law::lifecycle::approved_tree(fm).is_some() {
            found.not_checked("commit-is-approved-tree", why.to_string());
        }
        if let Some(into) = merge {
            found.not_checked("merged", format!("merged into {into}: {why}"));
        }
    };
    let Some(key) = super::published::board_key(board) else {
        return;
    };
    if !crate::repo::git::commit_id(sha) {
        found.ran(
            "commit-exists",
            false,
            format!("commit_sha {sha:?} is not a commit id"),
        );
        return;
    }
    let refname = super::published::committed_ref(&key, sha);
    let cache = match crate::store::gitref::artifact(g, &refname, sha) {
        Ok(dir) => dir,
        Err(e @ Error::ArtifactMismatch { .. }) => {
            found.ran("commit-exists", false, e.to_string());
            return;
        }
        Err(e) => {
            not_checked(
                found,
                &format!(
                    "the commit was not read from the board's remote ({e}); a board committed \
                     by an older pair did not publish it"
                ),
            );
            return;
        }
    };
    found.ran(
        "commit-exists",
        true,
        format!("commit {sha} is published on {} at {refname}", g.url),
    );
    if let Some(want) = crate::law::lifecycle::approved_tree(fm) {
        match crate::repo::tree_of(&cache, sha) {
            Ok(tree) => found.ran(
                "commit-is-approved-tree",
                tree == want,
                format!("its tree is {tree}; the approved tree is {want}"),
            ),
            Err(e) => found.not_checked("commit-is-approved-tree", e.to_string()),
        }
    }
    let Some(into) = merge else {
        return;
    };
    match crate::store::gitref::branch_contains(g, into, sha) {
        Ok(OnRemote::Tip { tip, contains }) => {
            found.merged = Some(contains);
            found.ran(
                "merged",
                contains,
                if contains {
                    format!("{into} on {} (at {tip}) contains the commit", g.url)
                } else {
                    format!(
                        "{into} on {} (at {tip}) does not contain the commit: the branch was \
                         moved away from it (force-pushed or reset), or the merge was never \
                         pushed there",
                        g.url
                    )
                },
            );
        }
        Ok(OnRemote::NoBranch) => found.not_checked(
            "merged",
            format!(
                "merged into {into}: the board's remote {} has no branch {into} (the \
                 repository pushes it elsewhere, or not at all)",
                g.url
            ),
        ),
        Err(e) => found.not_checked("merged", format!("merged into {into}: {e}")),
    }
}

fn lifecycle_text(l: &serde_json::Value) -> String {
    let names = |applies: bool| -> Vec<String> {
        l["checks"]
            .as_array()
            .map(|cs| {
                cs.iter()
                    .filter(|c| c["applies"] == applies)
                    .filter_map(|c| c["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let listed = |key: &str, each: &dyn Fn(&serde_json::Value) -> String| -> Vec<String> {
        l[key]
            .as_array()
            .map(|cs| cs.iter().map(each).collect())
            .unwrap_or_default()
    };
    let checked = listed("checked", &|c| {
        format!(
            "{} {}",
            c["name"].as_str().unwrap_or_default(),
            if c["ok"] == true { "ok" } else { "FAILED" }
        )
    });
    let not_checked = listed("not_checked", &|c| {
        format!(
            "{} ({})",
            c["name"].as_str().unwrap_or_default(),
            c["detail"].as_str().unwrap_or_default()
        )
    });
    let (on, off) = (names(true), names(false));
    let root = l["repo_root"].as_str().unwrap_or_default();
    let state = if l["verified"] != true {
        "git lifecycle not verified (no repo_root recorded; `pair worktree create` records one)"
            .to_string()
    } else if l["checked_here"] != true && not_checked.is_empty() {
        format!(
            "git lifecycle recorded (repo_root {root}), not checked here (repository not present)"
        )
    } else {
        let mut parts = Vec::new();
        if l["checked_here"] == true {
            parts.push(format!(
                "checked here: {}",
                if checked.is_empty() {
                    "nothing recorded yet to check".to_string()
                } else {
                    checked.join(", ")
                }
            ));
        }
        if !not_checked.is_empty() {
            parts.push(format!(
                "recorded, not checked here: {}",
                not_checked.join(", ")
            ));
        }
        format!(
            "git lifecycle recorded (repo_root {root}), {}",
            parts.join("; ")
        )
    };
    format!(
        "  lifecycle: {}; checks that apply: {}{}\n",
        escape(&state),
        if on.is_empty() {
            "none".to_string()
        } else {
            on.join(", ")
        },
        if off.is_empty() {
            String::new()
        } else {
            format!("; not applicable: {}", off.join(", "))
        }
    )
}

impl FileReport {
    /// A path that could not be checked at all.
    fn failed(path: &Path, field: &str, message: String) -> FileReport {
        FileReport {
            path: path.display().to_string(),
            valid: false,
            sha256: None,
            ledger: None,
            errors: vec![FieldError {
                field: field.into(),
                line: None,
                message,
            }],
            warnings: vec![],
            lifecycle: None,
            signatures: None,
        }
    }
}

/// The blackboards in a directory (recursively, as `validate DIR` finds them), and one message
/// per part of it that could not be read.
pub(crate) fn boards_in(dir: &Path, s: &Session) -> (Vec<PathBuf>, Vec<String>) {
    let (out, errors) = crate::project::walk(dir, s);
    let messages = errors
        .into_iter()
        .map(|(p, m)| format!("{}: {m}", p.display()))
        .collect();
    (out, messages)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, errors: &mut Vec<FileReport>, s: &Session) {
    let (found, unreadable) = crate::project::walk(dir, s);
    out.extend(found);
    errors.extend(
        unreadable
            .into_iter()
            .map(|(p, m)| FileReport::failed(&p, "path", m)),
    );
}

/// Add to a git board's report what its ref's history says of its journal: records lost are
/// errors (the board is invalid), as is a history that cannot be read.
fn with_history(report: &mut FileReport, history: Result<(Vec<FieldError>, Vec<FieldError>)>) {
    let (errors, warnings) = history.unwrap_or_else(|e| {
        let error = FieldError {
            field: "journal".into(),
            line: None,
            message: format!("cannot check the journal against the ref's history: {e}"),
        };
        (vec![error], vec![])
    });
    if !errors.is_empty() {
        report.valid = false;
        report.lifecycle = None;
        report.ledger = None;
    }
    report.errors.extend(errors);
    report.warnings.extend(warnings);
}

/// Add to the reports of a directory's boards a cycle among them, as `ls DIR` refuses it
/// ([`crate::project::cycle`]): an error of the first board of the cycle.
fn with_cycle(dir: &Path, reports: &mut [FileReport], s: &Session) {
    let Ok(members) = crate::project::Project::open(dir).and_then(|p| p.read(s)) else {
        return;
    };
    let deps = crate::project::dependencies(&members);
    let Some((first, Error::Invalid { errors, .. })) = crate::project::cycle(&members, &deps)
    else {
        return;
    };
    let first = first.display().to_string();
    if let Some(r) = reports.iter_mut().find(|r| r.path == first) {
        r.valid = false;
        r.lifecycle = None;
        r.ledger = None;
        r.errors.extend(errors);
    }
}

/// How `-` (standard input) is named in reports.
const STDIN: &str = "<stdin>";

fn check(path: &Path, s: &Session) -> FileReport {
    let bytes = if path == Path::new("-") {
        super::read_input(path, "standard input")
    } else {
        store::snapshot(path, store::Depth::Whole, s).map(store::Snapshot::into_bytes)
    };
    check_read(path, bytes, s)
}

/// The report on what reading `path` gave.
fn check_read(path: &Path, bytes: Result<Vec<u8>>, s: &Session) -> FileReport {
    let bytes = match bytes {
        Ok(b) => b,
        // The store refused the file as a blackboard (too large): its own errors, not nested.
        Err(Error::Invalid { errors, .. }) => {
            let mut report = FileReport::failed(path, "file", String::new());
            report.errors = errors;
            return report;
        }
        Err(e) => return FileReport::failed(path, "file", e.to_string()),
    };
    let shown = if path == Path::new("-") {
        STDIN.to_string()
    } else {
        path.display().to_string()
    };
    let sha256 = Some(crate::text::sha256_hex(&bytes));
    let mut report = match check_all(&bytes) {
        Ok(v) => {
            let board = match crate::store::location::Location::of(path) {
                Ok(crate::store::location::Location::Git(g)) if path != Path::new("-") => Some(g),
                _ => None,
            };
            let (lifecycle, contradicted) =
                lifecycle(&v.parsed.fm, board.as_ref().map(|g| (path, g)));
            let mut warnings = v.parsed.warnings;
            warnings.extend(contradicted);
            FileReport {
                path: shown,
                valid: true,
                sha256,
                errors: vec![],
                lifecycle: Some(lifecycle),
                ledger: crate::board::ledger::describe(&v.parsed.fm),
                warnings,
                signatures: None,
            }
        }
        Err(r) => FileReport {
            path: shown,
            valid: false,
            ledger: None,
            sha256,
            errors: r.errors,
            warnings: r.warnings,
            lifecycle: None,
            signatures: None,
        },
    };
    // A signed board's records, checked against the trust root (`poll` checks none).
    let dir = crate::signature::config_dir(path);
    if let Some(mut checked) = crate::signature::check_board(&bytes, s.keys(), &dir) {
        if !checked.errors.is_empty() {
            report.valid = false;
            report.lifecycle = None;
            report.ledger = None;
        }
        report.errors.append(&mut checked.errors);
        report.warnings.append(&mut checked.warnings);
        report.signatures = Some(checked);
    }
    report
}

/// Check a whole file's bytes as every write checks the board it finds
/// ([`validate::check_board`]: the format, the body and frontmatter agreeing, the journal); when
/// the file holds unresolved git conflict markers, report every marker line, and whatever else
/// is wrong whichever side of each conflict is kept: the file is checked once with the first side
/// of every conflict and once with the second (conflicted lines blanked, so lines keep their
/// numbers), and an error found both times is reported.
pub(crate) fn check_all(bytes: &[u8]) -> std::result::Result<Valid, Report> {
    validate::check_rest(bytes, check_split(bytes)?)
}

/// [`validate::check_bytes`], reporting every conflict marker (see [`check_all`]).
fn check_split(bytes: &[u8]) -> std::result::Result<Valid, Report> {
    validate::check_bytes(bytes).map_err(|report| {
        let markers = marker_lines(bytes);
        if markers.is_empty() {
            return report;
        }
        let mut errors: Vec<FieldError> = markers
            .iter()
            .map(|(line, marker)| marker_error(*line, marker))
            .collect();
        let side = |keep: Side| match validate::check_bytes(&resolved(bytes, keep)) {
            Ok(v) => (vec![], v.parsed.warnings),
            Err(r) => (r.errors, r.warnings),
        };
        let (ours, ours_warnings) = side(Side::Ours);
        let (theirs, theirs_warnings) = side(Side::Theirs);
        errors.extend(ours.into_iter().filter(|e| theirs.contains(e)));
        let warnings = ours_warnings
            .into_iter()
            .filter(|w| theirs_warnings.contains(w))
            .collect();
        Report { errors, warnings }
    })
}

/// The unresolved conflict marker lines of a file, as the splitter recognises them: (1-based
/// line, marker).
fn marker_lines(bytes: &[u8]) -> Vec<(u32, &'static str)> {
    let bytes = bytes
        .strip_prefix(crate::board::document::BOM.as_bytes())
        .unwrap_or(bytes);
    bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .filter_map(|(i, line)| {
            conflict_marker(&String::from_utf8_lossy(line)).map(|m| (i as u32 + 1, m))
        })
        .collect()
}

/// The error for one marker line, worded as the splitter words the first.
fn marker_error(line: u32, marker: &str) -> FieldError {
    let message = SplitError::ConflictMarkers {
        line,
        marker: marker.to_string(),
    }
    .to_string();
    let message = message
        .strip_prefix(&format!("line {line}: "))
        .map(str::to_string)
        .unwrap_or(message);
    FieldError {
        field: "file".into(),
        line: Some(line),
        message,
    }
}

/// Which side of each conflict to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// Between `<<<<<<<` and `=======` (or the diff3 base marker `|||||||`).
    Ours,
    /// Between `=======` and `>>>>>>>`.
    Theirs,
}

/// The file with one side of every conflict kept: the marker lines, the other side and any
/// diff3 base section are replaced by empty lines (their line endings kept), so every line
/// keeps its number.
fn resolved(bytes: &[u8], keep: Side) -> Vec<u8> {
    #[derive(PartialEq)]
    enum In {
        Outside,
        Ours,
        Base,
        Theirs,
    }
    let mut state = In::Outside;
    let mut out = Vec::with_capacity(bytes.len());
    for (i, line) in bytes.split_inclusive(|b| *b == b'\n').enumerate() {
        let text = String::from_utf8_lossy(line);
        let text = if i == 0 {
            text.trim_start_matches(crate::board::document::BOM)
        } else {
            &text
        };
        let marker = conflict_marker(text);
        let base = text.starts_with("|||||||") && state == In::Ours;
        let kept = match (marker, &state) {
            (Some("<<<<<<<"), _) => {
                state = In::Ours;
                false
            }
            (Some("======="), In::Ours | In::Base) => {
                state = In::Theirs;
                false
            }
            (Some(">>>>>>>"), _) => {
                state = In::Outside;
                false
            }
            (Some(_), _) => false,
            (None, _) if base => {
                state = In::Base;
                false
            }
            (None, In::Outside) => true,
            (None, In::Ours) => keep == Side::Ours,
            (None, In::Theirs) => keep == Side::Theirs,
            (None, In::Base) => false,
        };
        if kept {
            out.extend_from_slice(line);
        } else {
            if i == 0 && line.starts_with(crate::board::document::BOM.as_bytes()) {
                out.extend_from_slice(crate::board::document::BOM.as_bytes());
            }
            let ending: &[u8] = if line.ends_with(b"\r\n") {
                b"\r\n"
            } else if line.ends_with(b"\n") {
                b"\n"
            } else {
                b""
            };
            out.extend_from_slice(ending);
        }
    }
    out
}

pub fn run(a: ValidateArgs, s: &Session) -> Result<Outcome> {
    if a.paths.iter().filter(|p| *p == Path::new("-")).count() > 1 {
        return Err(Error::Usage(
            "`-` (standard input) can be given only once".into(),
        ));
    }
    let mut reports = Vec::new();
    let mut missing = 0;
    let mut empty_dirs = Vec::new();
    let mut warnings = Vec::new();
    for p in &a.paths {
        // Standard input, and a git board (read at its remote's tip), are checked as one board.
        if p == Path::new("-") {
            reports.push(check(p, s));
            continue;
        }
        if crate::store::location::is_git(p) {
            let bytes = store::snapshot(p, store::Depth::Whole, s).map(store::Snapshot::into_bytes);
            // A ref (or a file in its tree) that is not there is missing, as a file would be.
            if matches!(bytes, Err(Error::Missing { .. })) {
                missing += 1;
            }
            let read = bytes.is_ok();
            let mut report = check_read(p, bytes, s);
            if read {
                with_history(&mut report, store::journal_history(p, s));
            }
            reports.push(report);
            continue;
        }
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => {
                let mut found = Vec::new();
                let unreadable = reports.len();
                walk(p, &mut found, &mut reports, s);
                if found.is_empty() && reports.len() == unreadable {
                    empty_dirs.push(p.display().to_string());
                    if a.require_some {
                        reports.push(FileReport::failed(
                            p,
                            "path",
                            "no blackboard found in this directory, and --require-some asks \
                             for at least one; check the path"
                                .into(),
                        ));
                    } else {
                        warnings.push(format!(
                            "{}: no blackboard found in this directory (a blackboard is a \
                             `*.md` file whose frontmatter has `phase`, `agents` or another \
                             blackboard key); check the path, or pass --require-some to make \
                             this an error",
                            output::path(p)
                        ));
                    }
                }
                let first = reports.len();
                for f in found {
                    reports.push(check(&f, s));
                }
                with_cycle(p, &mut reports[first..], s);
            }
            Ok(_) => reports.push(check(p, s)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                missing += 1;
                reports.push(FileReport::failed(
                    p,
                    "file",
                    "no such file or directory".into(),
                ));
            }
            Err(e) => reports.push(FileReport::failed(p, "file", format!("cannot stat: {e}"))),
        }
    }
    let invalid = reports.iter().filter(|r| !r.valid).count();
    let all_valid = invalid == 0;
    let code = if invalid > missing {
        exit::INVALID
    } else if missing > 0 {
        exit::MISSING
    } else {
        exit::OK
    };
    let json = json!({
        "schema": SCHEMA,
        "valid": all_valid,
        "checked": reports.len(),
        "invalid": invalid,
        "empty_dirs": empty_dirs,
        "files": reports,
    });
    let quiet = crate::text::settings().quiet;
    let text = match a.format {
        ValidateFormat::Text => render_text(&reports, invalid, quiet),
        ValidateFormat::Json => format!("{json}\n"),
        ValidateFormat::Github => render_github(&reports, invalid, quiet),
    };
    Ok(Outcome {
        json,
        text,
        code,
        warnings,
        printed: false,
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

/// One line per file (with its SHA-256), errors and warnings below it, the repair command under
/// an invalid one, then the summary. Quiet: only the invalid files and their errors.
/// A signed board's line: the trust root checked against, and what it vouched for.
fn signatures_text(c: &crate::signature::Checked) -> String {
    let root = match (&c.trust_root, c.source) {
        (Some(f), Some(src)) => format!("{} ({src})", escape(f)),
        _ => "no trust root named".to_string(),
    };
    let unvouched = if c.unvouched.is_empty() {
        String::new()
    } else {
        format!("; not vouched for: {}", escape(&c.unvouched.join(", ")))
    };
    format!(
        "  signatures: {} record{} verified against {root}{unvouched}\n",
        c.verified,
        if c.verified == 1 { "" } else { "s" }
    )
}

fn render_text(reports: &[FileReport], invalid: usize, quiet: bool) -> String {
    let mut text = String::new();
    for r in reports {
        let path = escape(&r.path);
        let sha = r
            .sha256
            .as_deref()
            .map(|s| format!("  sha256 {s}"))
            .unwrap_or_default();
        if r.valid {
            if !quiet {
                text.push_str(&format!("ok       {path}{sha}\n"));
                if let Some(l) = &r.lifecycle {
                    text.push_str(&lifecycle_text(l));
                }
                if let Some(l) = &r.ledger {
                    text.push_str(&format!("  ledger: {}\n", escape(l)));
                }
            }
        } else {
            text.push_str(&format!("invalid  {path}{sha}\n"));
        }
        if !quiet && let Some(c) = &r.signatures {
            text.push_str(&signatures_text(c));
        }
        if !r.valid {
            for e in &r.errors {
                text.push_str(&format!("  error: {}\n", e.escaped()));
            }
            // A trust root that is missing or unreadable is the verifier's to fix, not the
            // board's: no repair is suggested for it.
            let verifiers_only = r
                .errors
                .iter()
                .all(|e| e.field == crate::signature::TRUST_ROOT_FIELD);
            if let Some(sha) = &r.sha256
                && r.path != STDIN
                && !verifiers_only
            {
                text.push_str(&format!(
                    "  repair: {}\n",
                    escape(&output::repair_command(Path::new(&r.path), Some(sha)))
                ));
            }
        }
        if !quiet {
            for w in &r.warnings {
                text.push_str(&format!("  warning: {}\n", w.escaped()));
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
