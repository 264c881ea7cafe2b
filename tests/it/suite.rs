//! The test suite itself: every file under `tests/` is a module of the one `it` binary, so no
//! test is left out of `cargo test` by a file that nothing declares.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The modules a Rust file declares (`mod name;`, `pub mod name;`), as the files they load: a
/// `#[path = "…"]` attribute just above a declaration names its file, relative to the
/// declaring file's directory.
fn declared_files(file: &Path) -> BTreeSet<PathBuf> {
    let text = fs::read_to_string(file).unwrap();
    let dir = file.parent().unwrap();
    // `main.rs` and `mod.rs` declare modules in their own directory; `x.rs` in `x/`.
    let own = match file.file_name().unwrap().to_str().unwrap() {
        "main.rs" | "mod.rs" => dir.to_path_buf(),
        name => dir.join(name.trim_end_matches(".rs")),
    };
    let mut out = BTreeSet::new();
    let mut path_attr: Option<String> = None;
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("#[path = \"") {
            path_attr = rest.strip_suffix("\"]").map(str::to_string);
            continue;
        }
        let decl = line
            .strip_prefix("pub(crate) ")
            .or_else(|| line.strip_prefix("pub "))
            .unwrap_or(line);
        if let Some(name) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
            match path_attr.take() {
                Some(p) => out.insert(dir.join(p)),
                None if own.join(format!("{name}.rs")).is_file() => {
                    out.insert(own.join(format!("{name}.rs")))
                }
                None => out.insert(own.join(name).join("mod.rs")),
            };
        } else if !line.is_empty() && !line.starts_with("//") {
            path_attr = None;
        }
    }
    out
}

/// Every `.rs` file under `dir`, at any depth.
fn rust_files(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.insert(path);
        }
    }
    out
}

#[test]
fn no_forgotten_test_files() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let it = tests.join("it");

    // One test binary: no `tests/*.rs`, and no other `tests/*/main.rs`, which cargo would build
    // as test binaries of their own.
    let mut other_binaries = Vec::new();
    for entry in fs::read_dir(&tests).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs")
            || (path.is_dir() && path != it && path.join("main.rs").is_file())
        {
            other_binaries.push(path.strip_prefix(&tests).unwrap().display().to_string());
        }
    }
    assert!(
        other_binaries.is_empty(),
        "all integration tests are modules of the one binary tests/it; move these into \
         tests/it/ and declare them in tests/it/main.rs: {other_binaries:?}"
    );

    // Every file under tests/it is reached from main.rs through module declarations.
    let mut reached = BTreeSet::from([it.join("main.rs")]);
    let mut todo = vec![it.join("main.rs")];
    while let Some(file) = todo.pop() {
        for f in declared_files(&file) {
            if f.is_file() && reached.insert(f.clone()) {
                todo.push(f);
            }
        }
    }
    let forgotten: Vec<String> = rust_files(&it)
        .difference(&reached)
        .map(|p| p.strip_prefix(&tests).unwrap().display().to_string())
        .collect();
    assert!(
        forgotten.is_empty(),
        "these files are not declared as modules (in tests/it/main.rs, or in the mod.rs of their \
         folder), so their tests never run: {forgotten:?}"
    );
}
