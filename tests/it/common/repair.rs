//! The repair command that every error about an invalid board ends with.

/// The repair command for `path` at `sha`, as every message spells it.
pub fn repair(path: &str, sha: &str) -> String {
    format!(
        "pair write {path} --content-file FIXED.md --expect-sha256 {sha} --repair --reason TEXT"
    )
}
