//! The crate's layers: `src/lib.rs` declares its top-level modules in layer order, and no file
//! under `src/` may refer to a module declared after its own (tests inside a file may); only
//! `src/sys` has `unsafe`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level modules in the order `lib.rs` declares them.
fn layers() -> Vec<String> {
    fs::read_to_string(src().join("lib.rs"))
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';'))
        .map(str::to_string)
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without comments and without its `#[cfg(test)]` module.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.trim_start().starts_with("//") {
            true => "",
            false => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::name` a piece of code refers to, with `crate::{a, b::c}` groups opened.
fn references(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        let word_start = i == 0 || {
            let c = rest[..i].chars().next_back().unwrap();
            !(c.is_alphanumeric() || c == '_' || c == ':')
        };
        if word_start {
            if let Some(group) = after.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                for item in group[..end].split(',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    out.push(name);
                }
            } else {
                out.push(
                    after
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect(),
                );
            }
        }
        rest = after;
    }
    out
}

#[test]
fn every_reference_goes_to_a_layer_declared_before() {
    let order = layers();
    assert!(order.len() >= 10, "lib.rs declares the layers: {order:?}");
    let rank: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, m)| (m.as_str(), i))
        .collect();
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(src()).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap();
        let module = first.trim_end_matches(".rs");
        if module == "lib" || module == "main" {
            continue;
        }
        let Some(&own) = rank.get(module) else {
            panic!(
                "{}: module {module} is not declared in lib.rs",
                rel.display()
            );
        };
        for r in references(&code(&fs::read_to_string(f).unwrap())) {
            if let Some(&used) = rank.get(r.as_str())
                && used > own
            {
                wrong.push(format!(
                    "{} ({module}, layer {}) refers to crate::{r} (layer {})",
                    rel.display(),
                    own + 1,
                    used + 1
                ));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "references against the layer order declared in src/lib.rs:\n  {}",
        wrong.join("\n  ")
    );
}

#[test]
fn only_repo_starts_git() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(src()).unwrap();
        if rel.starts_with("repo") {
            continue;
        }
        let code = code(&fs::read_to_string(f).unwrap());
        if code.contains("Command::new(\"git\")") {
            wrong.push(rel.display().to_string());
        }
    }
    assert!(
        wrong.is_empty(),
        "git started outside src/repo/:\n  {}",
        wrong.join("\n  ")
    );
}

#[test]
fn the_reference_reader_sees_groups_and_paths() {
    let found = references("use crate::{a, b::c};\nlet x = crate::d::e(); notcrate::f;");
    assert_eq!(found, ["a", "b", "d"]);
    assert_eq!(
        code("x\n// crate::y\n#[cfg(test)]\nmod tests { crate::z }"),
        "x\n"
    );
}

/// The only `static` items of the crate, each with why it may be one: none carries a command's
/// results (those travel in return values and in the store's per-command `Session`).
const STATICS: &[(&str, &str)] = &[
    // The output settings, set once after parsing the command line.
    ("text.rs", "SETTINGS"),
    // The installed git's version, checked once per process.
    ("store/gitref/remote.rs", "CHECKED"),
    // The process group of the git being waited for, which a signal handler ends with pair.
    ("repo/git.rs", "GIT_GROUP"),
    // Whether the process was made the reaper of what git starts: a process-wide setting,
    // made once.
    ("repo/git.rs", "ADOPTING"),
    // The deadline of the command running on this thread (a thread-local, set and cleared by
    // `commands::run_with`, like CALL_ARGV): every session made while it runs, those made deep
    // down to read the boards a board waits for included, is bounded by it.
    ("store/clock.rs", "CURRENT"),
    // Flags a signal handler sets: the only thing it may safely do.
    ("commands/demo.rs", "INTERRUPTED"),
    ("commands/watch.rs", "STOP"),
    // The command line a call of the MCP server stands for, on the thread that runs it (a
    // thread-local, set and cleared by `commands::run_with`): what a record copies and a
    // refusal suggests, which on the command line is the process's own arguments.
    ("commands/mod.rs", "CALL_ARGV"),
];

#[test]
fn no_global_state_beyond_the_listed_statics() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut found = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(src()).unwrap().to_str().unwrap().to_string();
        for l in code(&fs::read_to_string(f).unwrap()).lines() {
            let t = l.trim_start();
            let t = t.strip_prefix("pub ").unwrap_or(t);
            if let Some(rest) = t.strip_prefix("static ") {
                let name: String = rest
                    .trim_start_matches("mut ")
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                found.push((rel.clone(), name));
            }
        }
    }
    found.sort();
    let mut allowed: Vec<(String, String)> = STATICS
        .iter()
        .map(|(f, n)| (f.to_string(), n.to_string()))
        .collect();
    allowed.sort();
    assert_eq!(
        found, allowed,
        "a new `static` is global state: pass it as a value (a command's results go in its \
         outcome or its store::Session), or list it here with why it must be global"
    );
}

/// A piece of code with its comments, string literals and character literals blanked (each
/// replaced by a space), so that a word in a message or a note is not taken for code.
fn without_literals(code: &str) -> String {
    let c: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1).copied() == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && c.get(i + 1).copied() == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1).copied() == Some('*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1).copied() == Some('/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c[i] == 'r'
            && (i == 0 || !ident(c[i - 1]) || c[i - 1] == 'b' || c[i - 1] == 'c')
            && matches!(c.get(i + 1).copied(), Some('"' | '#'))
        {
            // A raw string: r"…", r#"…"#, …
            let mut j = i + 1;
            while c.get(j) == Some(&'#') {
                j += 1;
            }
            if c.get(j) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            let hashes = j - i - 1;
            j += 1;
            while j < c.len() && !(c[j] == '"' && (1..=hashes).all(|k| c.get(j + k) == Some(&'#')))
            {
                j += 1;
            }
            i = j + 1 + hashes;
            out.push(' ');
        } else if c[i] == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(' ');
        } else if c[i] == '\'' && c.get(i + 1).copied() == Some('\\') {
            // An escaped character literal: '\n', '\'', '\u{1f}'.
            i += 3;
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push(' ');
        } else if c[i] == '\'' && c.get(i + 2).copied() == Some('\'') {
            i += 3;
            out.push(' ');
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// Whether `word` stands in `code` as a word of its own (not inside a longer name).
fn has_word(code: &str, word: &str) -> bool {
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    code.match_indices(word).any(|(i, _)| {
        !code[..i].chars().next_back().is_some_and(ident)
            && !code[i + word.len()..].chars().next().is_some_and(ident)
    })
}

#[test]
fn the_literal_reader_sees_code_only() {
    let code = without_literals(
        "let a = \"unsafe\"; let b = r#\"un\"safe\"#; /* unsafe /* x */ y */ f('\"', '\\'', 'x');\n\
         fn g<'a>(x: &'a str) {} // unsafe\nunsafe { h() }",
    );
    assert_eq!(code.matches("unsafe").count(), 1, "{code}");
    assert!(code.contains("fn g<'a>(x: &'a str)"), "{code}");
    assert!(has_word(&code, "unsafe"));
    assert!(!has_word("fn is_unsafe(); #![deny(unsafe_code)]", "unsafe"));
}

/// `unsafe` is confined to `src/sys`: every system call std does not offer is a small safe
/// function there, with its SAFETY note, and the crate denies `unsafe` everywhere else.
#[test]
fn only_sys_has_unsafe() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(src()).unwrap();
        if rel == Path::new("sys.rs") || rel.starts_with("sys") {
            continue;
        }
        let code = without_literals(&code(&fs::read_to_string(f).unwrap()));
        if has_word(&code, "unsafe") {
            wrong.push(rel.display().to_string());
        }
    }
    wrong.sort();
    assert!(
        wrong.is_empty(),
        "`unsafe` outside src/sys (move the call behind a safe function there):\n  {}",
        wrong.join("\n  ")
    );
    let lib = fs::read_to_string(src().join("lib.rs")).unwrap();
    assert!(
        lib.lines().any(|l| l.trim() == "#![deny(unsafe_code)]"),
        "src/lib.rs denies unsafe code: #![deny(unsafe_code)]"
    );
}

/// The store's functions that read a board without a snapshot. A command reads its board once,
/// as a `store::Snapshot` (`store::snapshot`), and answers and writes from that read; these
/// stay for the project's walks and the store's own use.
const DIRECT_READS: &[&str] = &["read", "read_head", "peek_head", "load", "load_frontmatter"];

/// The names a piece of code takes from `store::` (`store::x`, `store::{x, y::z}`), each once
/// per mention.
fn store_names(code: &str) -> Vec<String> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    for (i, _) in code.match_indices("store::") {
        if code[..i].chars().next_back().is_some_and(ident) {
            continue;
        }
        let after = code[i + "store::".len()..].trim_start();
        match after.strip_prefix('{') {
            Some(group) => {
                let end = group.find('}').unwrap_or(group.len());
                out.extend(
                    group[..end]
                        .split(',')
                        .map(|item| item.trim().chars().take_while(|c| ident(*c)).collect()),
                );
            }
            None => out.push(after.chars().take_while(|c| ident(*c)).collect()),
        }
    }
    out
}

#[test]
fn the_store_name_reader_sees_paths_and_groups() {
    let names = store_names(
        "use crate::store::{self, load_frontmatter as lf, Depth};\nlet b = store::read (p);\n\
         crate::store::snapshot(p); restore::read(x)",
    );
    assert_eq!(
        names,
        ["self", "load_frontmatter", "Depth", "read", "snapshot"]
    );
}

/// A handler reads its board through a snapshot, never by one of the store's direct reads: two
/// reads of one board in one command could answer from two versions.
#[test]
fn no_handler_reads_a_board_but_through_a_snapshot() {
    let dir = src().join("commands");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        let code = without_literals(&code(&fs::read_to_string(f).unwrap()));
        for name in store_names(&code) {
            if DIRECT_READS.contains(&name.as_str()) {
                wrong.push(format!(
                    "{}: store::{name}",
                    f.strip_prefix(src()).unwrap().display()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "a handler reads a board without a snapshot (take one with store::snapshot and derive \
         from it):\n  {}",
        wrong.join("\n  ")
    );
}
