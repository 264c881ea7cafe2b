//! The crate's layers: `src/lib.rs` declares its top-level modules in layer order, and no file
//! under `src/` may refer to a module declared after its own (tests inside a file may); only
//! `src/sys` has `unsafe`; only `src/repo/git.rs` starts git; no `static` but the listed ones.
//!
//! Each file is parsed (`syn`), not read as text: a path is seen wherever it is written (a
//! `use` tree however nested, with its renames and globs; `super::` climbing out of a layer; an
//! expression, a type, a pattern; the tokens of a macro call), a `static` at any visibility and
//! depth (a `thread_local!` too), and a process started through any name of
//! `std::process::Command` (an alias, a `use … as`), with whatever argument. The checks are
//! functions of a file's path and text, so the tests below feed them the ways around a text
//! lint and see each one fail.

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

/// The code of a file without comments and without its `#[cfg(test)]` module (for the check of
/// `unsafe`, which the crate's `#![deny(unsafe_code)]` backs).
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

/// The only `static` items of the crate, each with why it may be one: none carries a command's
/// results (those travel in return values and in the store's per-command `Session`).
const STATICS: &[(&str, &str)] = &[
    // The output settings, set once after parsing the command line.
    ("text.rs", "SETTINGS"),
    // The installed git's version, checked once per process.
    ("store/gitref/remote.rs", "CHECKED"),
    // What a signal that ends the process does first, read by its handler: the process group
    // of the git being waited for, killed with pair; the presence record a wait leaves behind;
    // the handler set once.
    ("sys.rs", "END_GROUP"),
    ("sys.rs", "END_WRITE"),
    ("sys.rs", "SET"),
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
    // The places a confined call may read files from, on the thread that runs it (a
    // thread-local, set and cleared by `commands::run_with` for the MCP server's calls): the
    // one reader of agents' files checks it however deep down the read is.
    ("input.rs", "PLACES"),
];

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

/// Processes started outside `src/repo/git.rs` whose program is not a string literal, each with
/// what it is: none may be git, and a new one is read before it is listed here.
const SPAWNS: &[(&str, &str)] = &[
    // The demo's agents: this binary itself (`std::env::current_exe`).
    ("commands/demo.rs", "exe"),
    ("commands/demo_project.rs", "exe"),
    // `pair check -- PROGRAM …`: the user's own command, run in the worktree.
    ("commands/lifecycle.rs", "& argv [0]"),
];

// ---------------------------------------------------------------------------------------------
// the parsed sources

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::visit::Visit;

/// What one file of `src/` names and does, found by parsing it. Paths are taken from the crate's
/// root (`["crate", "store", "read"]`), whatever way they were written.
#[derive(Default, Debug)]
struct Facts {
    /// Every path of the crate the file names.
    paths: Vec<Vec<String>>,
    /// Every `static` item, at any visibility and depth.
    statics: Vec<String>,
    /// Every start of a process (`std::process::Command::new` by any name): its argument as
    /// written, or what stands in its place.
    spawns: Vec<Spawn>,
    /// What cannot be checked at all: a glob of the crate's root, `extern crate self`, a
    /// module read from another path.
    escapes: Vec<String>,
}

#[derive(Debug)]
enum Spawn {
    /// `Command::new("…")`: the program, as written.
    Literal(String),
    /// `Command::new(expr)`: the expression's tokens.
    Other(String),
}

/// The module path of a file under `src/`: `store/local.rs` is `["store", "local"]`,
/// `store/mod.rs` is `["store"]`.
fn module_of(rel: &str) -> Vec<String> {
    let rel = rel.trim_end_matches(".rs");
    let mut m: Vec<String> = rel.split('/').map(str::to_string).collect();
    if matches!(m.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        m.pop();
    }
    m
}

/// Whether attributes hold `#[cfg(test)]` (the item is the file's tests).
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && matches!(&a.meta, syn::Meta::List(l) if {
                let t = l.tokens.to_string();
                t.split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w == "test")
                    && !t.contains("not")
            })
    })
}

struct Reader {
    /// The module the visitor is in (the file's, then any inline `mod`).
    module: Vec<String>,
    /// Names a `use` or a `type` brings into the file, each with every path it stands for.
    aliases: BTreeMap<String, Vec<Vec<String>>>,
    facts: Facts,
}

impl Reader {
    /// A path as written, from the crate's root where it starts with `crate`, `$crate`,
    /// `super` or `self`, or through a name the file imported; `None` for any other (std, a
    /// dependency, a local name).
    fn absolute(&self, segments: &[String]) -> Option<Vec<String>> {
        let first = segments.first()?;
        match first.as_str() {
            "crate" | "$crate" => {
                let mut p = vec!["crate".to_string()];
                p.extend_from_slice(&segments[1..]);
                Some(p)
            }
            "super" | "self" => {
                let mut m = self.module.clone();
                let mut rest = segments;
                while let Some(s) = rest.first() {
                    match s.as_str() {
                        "super" => {
                            m.pop()?;
                        }
                        "self" => {}
                        _ => break,
                    }
                    rest = &rest[1..];
                }
                let mut p = vec!["crate".to_string()];
                p.extend(m);
                p.extend_from_slice(rest);
                Some(p)
            }
            _ => None,
        }
    }

    /// Every path a name stands for: through the file's imports, or as written.
    fn resolutions(&self, segments: &[String]) -> Vec<Vec<String>> {
        if let Some(p) = self.absolute(segments) {
            return vec![p];
        }
        match segments.first().and_then(|f| self.aliases.get(f)) {
            Some(targets) => targets
                .iter()
                .map(|t| {
                    let mut p = t.clone();
                    p.extend_from_slice(&segments[1..]);
                    p
                })
                .collect(),
            None => vec![segments.to_vec()],
        }
    }

    fn note_path(&mut self, segments: &[String]) {
        for p in self.resolutions(segments) {
            if p.first().map(String::as_str) == Some("crate") {
                self.facts.paths.push(p);
            }
        }
    }

    /// Whether a path names `Command::new` of `std::process` (or tokio's): through an import,
    /// an alias, or written whole. An unresolved `Command` (a glob import) counts.
    fn is_spawn(&self, segments: &[String]) -> bool {
        let n = segments.len();
        if n < 2 || segments[n - 1] != "new" {
            return false;
        }
        let ty = &segments[..n - 1];
        let resolved = self.resolutions(ty);
        resolved.iter().any(|p| {
            p.ends_with(&["process".to_string(), "Command".to_string()])
                || (p.len() == 1 && p[0] == "Command")
        })
    }

    /// Walk a `use` tree, noting each leaf's path and the name it brings in.
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                let full = if name == "self" {
                    prefix.clone()
                } else {
                    let mut f = prefix.clone();
                    f.push(name);
                    f
                };
                self.bring(full, None);
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                if r.ident != "self" {
                    full.push(r.ident.to_string());
                }
                self.bring(full, Some(r.rename.to_string()));
            }
            syn::UseTree::Glob(_) => {
                let resolved = self.resolutions(prefix);
                if resolved.iter().any(|p| p.len() == 1 && p[0] == "crate") {
                    self.facts
                        .escapes
                        .push("`use crate::*` brings in every layer".to_string());
                }
                self.note_path(&prefix.clone());
            }
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(prefix, item);
                }
            }
        }
    }

    fn bring(&mut self, full: Vec<String>, rename: Option<String>) {
        let Some(last) = full.last().cloned() else {
            return;
        };
        let name = rename.unwrap_or(last);
        let targets = self.resolutions(&full);
        self.note_path(&full);
        if name != "_" {
            self.aliases.entry(name).or_default().extend(targets);
        }
    }

    /// The tokens of a macro call or definition, which the parser leaves unparsed: the paths,
    /// `static` items and process starts written in them.
    fn tokens(&mut self, tokens: TokenStream) {
        let flat = flatten(tokens);
        let word = |t: Option<&TokenTree>| match t {
            Some(TokenTree::Ident(i)) => Some(i.to_string()),
            _ => None,
        };
        let colons = |i: usize| {
            matches!((flat.get(i), flat.get(i + 1)),
                (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) if a.as_char() == ':' && b.as_char() == ':')
        };
        let mut i = 0;
        while i < flat.len() {
            let Some(w) = word(flat.get(i)) else {
                i += 1;
                continue;
            };
            let after_colons = i >= 2 && colons(i - 2);
            let after_dollar = matches!(flat.get(i.wrapping_sub(1)), Some(TokenTree::Punct(p)) if p.as_char() == '$');
            let after_quote = matches!(flat.get(i.wrapping_sub(1)), Some(TokenTree::Punct(p)) if p.as_char() == '\'');
            if w == "static" && !after_quote {
                let mut j = i + 1;
                if word(flat.get(j)).as_deref() == Some("mut") {
                    j += 1;
                }
                if let Some(name) = word(flat.get(j)) {
                    self.facts.statics.push(name);
                }
            }
            if after_colons {
                i += 1;
                continue;
            }
            // A path: NAME (:: NAME)*
            let mut segments = vec![if after_dollar { format!("${w}") } else { w }];
            let mut j = i + 1;
            while colons(j) {
                match word(flat.get(j + 2)) {
                    Some(next) => {
                        segments.push(next);
                        j += 3;
                    }
                    None => break,
                }
            }
            if segments.len() > 1 {
                self.note_path(&segments);
                if self.is_spawn(&segments) {
                    let arg = match flat.get(j) {
                        Some(TokenTree::Group(g)) => spawn_of(g.stream()),
                        _ => Spawn::Other("<taken as a value>".to_string()),
                    };
                    self.facts.spawns.push(arg);
                }
            }
            i = j.max(i + 1);
        }
    }
}

/// Every token of a stream, groups opened (each group also kept whole, after its contents, so
/// that a call's argument list follows its path).
fn flatten(tokens: TokenStream) -> Vec<TokenTree> {
    let mut out = Vec::new();
    for t in tokens {
        if let TokenTree::Group(g) = &t {
            out.push(t.clone());
            out.extend(flatten(g.stream()));
        } else {
            out.push(t);
        }
    }
    out
}

/// What a process start's argument tokens say: a string literal, or anything else.
fn spawn_of(arg: TokenStream) -> Spawn {
    match syn::parse2::<syn::Expr>(arg.clone()) {
        Ok(e) => spawn_arg(&e),
        Err(_) => Spawn::Other(arg.to_string()),
    }
}

fn spawn_arg(e: &syn::Expr) -> Spawn {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Spawn::Literal(s.value()),
        other => Spawn::Other(other.to_token_stream().to_string()),
    }
}

fn segments(path: &syn::Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

impl<'ast> Visit<'ast> for Reader {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Use(u) => &u.attrs,
            syn::Item::Static(s) => &s.attrs,
            syn::Item::Const(c) => &c.attrs,
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Enum(e) => &e.attrs,
            syn::Item::Macro(m) => &m.attrs,
            syn::Item::Trait(t) => &t.attrs,
            syn::Item::Type(t) => &t.attrs,
            _ => &[],
        };
        if !is_test(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs: &[syn::Attribute] = match item {
            syn::ImplItem::Fn(f) => &f.attrs,
            syn::ImplItem::Const(c) => &c.attrs,
            _ => &[],
        };
        if !is_test(attrs) {
            syn::visit::visit_impl_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if m.attrs.iter().any(|a| a.path().is_ident("path")) {
            self.facts
                .escapes
                .push(format!("`mod {}` is read from another path", m.ident));
        }
        self.module.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.module.pop();
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_item_extern_crate(&mut self, e: &'ast syn::ItemExternCrate) {
        if e.ident == "self" {
            self.facts
                .escapes
                .push("`extern crate self` names the crate another way".to_string());
        }
    }

    fn visit_item_type(&mut self, t: &'ast syn::ItemType) {
        if let syn::Type::Path(p) = &*t.ty {
            let targets = self.resolutions(&segments(&p.path));
            self.aliases
                .entry(t.ident.to_string())
                .or_default()
                .extend(targets);
        }
        syn::visit::visit_item_type(self, t);
    }

    fn visit_foreign_item_static(&mut self, s: &'ast syn::ForeignItemStatic) {
        self.facts.statics.push(s.ident.to_string());
    }

    fn visit_item_static(&mut self, s: &'ast syn::ItemStatic) {
        self.facts.statics.push(s.ident.to_string());
        syn::visit::visit_item_static(self, s);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        self.note_path(&segments(p));
        syn::visit::visit_path(self, p);
    }

    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let syn::Expr::Path(f) = &*call.func
            && self.is_spawn(&segments(&f.path))
        {
            let arg = match call.args.first() {
                Some(a) => spawn_arg(a),
                None => Spawn::Other(String::new()),
            };
            self.facts.spawns.push(arg);
            for a in &call.args {
                self.visit_expr(a);
            }
            return;
        }
        syn::visit::visit_expr_call(self, call);
    }

    fn visit_expr_path(&mut self, e: &'ast syn::ExprPath) {
        if self.is_spawn(&segments(&e.path)) {
            self.facts
                .spawns
                .push(Spawn::Other("<taken as a value>".to_string()));
        }
        syn::visit::visit_expr_path(self, e);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.note_path(&segments(&m.path));
        self.tokens(m.tokens.clone());
    }

    /// An attribute's arguments are tokens too (`#[arg(default_value_t = crate::x::Y)]`): the
    /// paths written in them count as references.
    fn visit_attribute(&mut self, a: &'ast syn::Attribute) {
        if let syn::Meta::List(list) = &a.meta {
            self.tokens(list.tokens.clone());
        }
        syn::visit::visit_attribute(self, a);
    }
}

/// Parse one file of `src/` (`rel`, as `store/local.rs`) and read what it names and does. The
/// imports are read first, wherever they stand in the file, so a path written before its `use`
/// resolves too.
fn facts(rel: &str, text: &str) -> Facts {
    let file = syn::parse_file(text).unwrap_or_else(|e| panic!("{rel}: does not parse: {e}"));
    let mut first = Reader {
        module: module_of(rel),
        aliases: BTreeMap::new(),
        facts: Facts::default(),
    };
    first.visit_file(&file);
    let mut reader = Reader {
        module: module_of(rel),
        aliases: first.aliases,
        facts: Facts::default(),
    };
    reader.visit_file(&file);
    reader.facts
}

/// The layer each top-level name of the crate belongs to: the modules `lib.rs` declares, in
/// order, and the names it re-exports from them.
fn ranks() -> BTreeMap<String, usize> {
    let order = layers();
    let mut rank: BTreeMap<String, usize> = order
        .iter()
        .enumerate()
        .map(|(i, m)| (m.clone(), i))
        .collect();
    let lib = fs::read_to_string(src().join("lib.rs")).unwrap();
    let file = syn::parse_file(&lib).unwrap();
    for item in &file.items {
        if let syn::Item::Use(u) = item {
            let mut reader = Reader {
                module: vec![],
                aliases: BTreeMap::new(),
                facts: Facts::default(),
            };
            reader.use_tree(&mut Vec::new(), &u.tree);
            for (name, targets) in reader.aliases {
                for t in targets {
                    if let Some(&r) = t.first().and_then(|m| rank.get(m)) {
                        rank.insert(name.clone(), r);
                    }
                }
            }
        }
    }
    rank
}

/// What in one file goes against the layers: a path to a later layer, or to a name `lib.rs`
/// does not declare, and whatever cannot be checked.
fn layer_breaks(rel: &str, text: &str, rank: &BTreeMap<String, usize>) -> Vec<String> {
    let module = module_of(rel);
    let Some(top) = module.first() else {
        return vec![];
    };
    let Some(&own) = rank.get(top) else {
        return vec![format!("{rel}: module {top} is not declared in lib.rs")];
    };
    let f = facts(rel, text);
    let mut wrong: Vec<String> = f.escapes.iter().map(|e| format!("{rel}: {e}")).collect();
    for p in &f.paths {
        let Some(name) = p.get(1) else { continue };
        match rank.get(name) {
            Some(&used) if used > own => wrong.push(format!(
                "{rel} ({top}, layer {}) refers to crate::{} (layer {})",
                own + 1,
                p[1..].join("::"),
                used + 1
            )),
            Some(_) => {}
            None => wrong.push(format!(
                "{rel} refers to crate::{}, which lib.rs does not declare",
                p[1..].join("::")
            )),
        }
    }
    wrong.sort();
    wrong.dedup();
    wrong
}

/// The processes a file starts that may be git: any outside `src/repo/git.rs` whose program is
/// the literal `git` (or a path ending in it), or is not a literal and not listed in
/// [`SPAWNS`].
fn git_starts(rel: &str, text: &str) -> Vec<String> {
    if rel == "repo/git.rs" {
        return vec![];
    }
    let mut wrong = vec![];
    for s in facts(rel, text).spawns {
        match s {
            Spawn::Literal(program) => {
                let name = program.rsplit('/').next().unwrap_or(&program);
                if name == "git" || name.starts_with("git-") {
                    wrong.push(format!("{rel}: starts {program:?}"));
                }
            }
            Spawn::Other(arg) => {
                if !SPAWNS.contains(&(rel, arg.as_str())) {
                    wrong.push(format!(
                        "{rel}: starts a program named by `{arg}`, which may be git"
                    ));
                }
            }
        }
    }
    wrong
}

/// Every file of `src/` with its path relative to it.
fn sources() -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.sort();
    files
        .iter()
        .map(|f| {
            (
                f.strip_prefix(src()).unwrap().to_str().unwrap().to_string(),
                fs::read_to_string(f).unwrap(),
            )
        })
        .collect()
}

#[test]
fn every_reference_goes_to_a_layer_declared_before() {
    let rank = ranks();
    assert!(rank.len() >= 10, "lib.rs declares the layers: {rank:?}");
    let mut wrong = vec![];
    for (rel, text) in sources() {
        if rel == "lib.rs" || rel == "main.rs" {
            continue;
        }
        wrong.extend(layer_breaks(&rel, &text, &rank));
    }
    assert!(
        wrong.is_empty(),
        "references against the layer order declared in src/lib.rs:\n  {}",
        wrong.join("\n  ")
    );
}

#[test]
fn only_the_git_module_starts_git() {
    let mut wrong = vec![];
    for (rel, text) in sources() {
        wrong.extend(git_starts(&rel, &text));
    }
    assert!(
        wrong.is_empty(),
        "git started outside src/repo/git.rs (or a program that may be git; list a checked one \
         in SPAWNS):\n  {}",
        wrong.join("\n  ")
    );
}

#[test]
fn no_global_state_beyond_the_listed_statics() {
    let mut found = vec![];
    for (rel, text) in sources() {
        for name in facts(&rel, &text).statics {
            found.push((rel.clone(), name));
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

/// A handler reads its board through a snapshot, never by one of the store's direct reads: two
/// reads of one board in one command could answer from two versions.
#[test]
fn no_handler_reads_a_board_but_through_a_snapshot() {
    let mut wrong = vec![];
    for (rel, text) in sources() {
        if rel.starts_with("commands/") {
            wrong.extend(direct_reads(&rel, &text));
        }
    }
    assert!(
        wrong.is_empty(),
        "a handler reads a board without a snapshot (take one with store::snapshot and derive \
         from it):\n  {}",
        wrong.join("\n  ")
    );
}

fn direct_reads(rel: &str, text: &str) -> Vec<String> {
    let mut wrong: Vec<String> = facts(rel, text)
        .paths
        .iter()
        .filter(|p| {
            p.get(1).map(String::as_str) == Some("store")
                && p.get(2).is_some_and(|n| DIRECT_READS.contains(&n.as_str()))
        })
        .map(|p| format!("{rel}: {}", p.join("::")))
        .collect();
    wrong.dedup();
    wrong
}

/// The ways around a text lint, each fed to the parsed check: every one is seen.
#[test]
fn the_parsed_checks_see_the_ways_around_a_text_lint() {
    let rank = ranks();
    let breaks = |rel: &str, code: &str| layer_breaks(rel, code, &rank);
    // A nested `use` tree with a rename.
    let found = breaks(
        "store/local.rs",
        "use crate::{text, board::{self, commands as _c}};\n",
    );
    assert!(
        found.is_empty(),
        "board::commands is no layer of its own: {found:?}"
    );
    let found = breaks("store/local.rs", "use crate::{text, commands as _c};\n");
    assert!(
        found.iter().any(|w| w.contains("crate::commands")),
        "a nested use with a rename: {found:?}"
    );
    for code in [
        "use crate::{text::{self, x}, {commands::run}};",
        "use super::super::commands;",
        "fn f() { let _ = crate::commands::run; }",
        "struct A { #[arg(default_value_t = crate::commands::project::MAX_HELD)] n: usize }",
        "fn f() -> crate::commands::Outcome { todo!() }",
        "fn f() { format!(\"{}\", crate::commands::NAME); }",
        "use crate::*;",
        "extern crate self as me;",
        "#[path = \"../commands/mod.rs\"] mod c;",
        "use crate::{self as root}; fn f() { root::commands::run(); }",
    ] {
        assert!(
            !breaks("store/local.rs", code).is_empty(),
            "not seen: {code}"
        );
    }
    // …but a path inside the file's tests is allowed, and a layer before is.
    assert!(
        breaks(
            "store/local.rs",
            "#[cfg(test)]\nmod t { use crate::commands; }"
        )
        .is_empty()
    );
    assert!(breaks("store/local.rs", "use crate::{text, board::Document};").is_empty());

    // A `static` at any visibility, in a function, in a macro.
    for code in [
        "pub(crate) static HIDDEN: u8 = 0;",
        "pub(in crate::store) static HIDDEN: u8 = 0;",
        "fn f() { static HIDDEN: u8 = 0; }",
        "thread_local! { pub(crate) static HIDDEN: u8 = 0; }",
        "static mut HIDDEN: u8 = 0;",
    ] {
        assert_eq!(facts("store/local.rs", code).statics, ["HIDDEN"], "{code}");
    }
    assert!(facts("x.rs", "fn f(s: &'static str) {}").statics.is_empty());

    // git started by another name.
    for code in [
        "fn f() { let g = \"git\"; std::process::Command::new(g).status(); }",
        "use std::process::Command as P; fn f() { P::new(\"git\"); }",
        "use std::process::{self, Command}; fn f() { process::Command::new(\"/usr/bin/git\"); }",
        "type P = std::process::Command; fn f(g: &str) { P::new(g); }",
        "use std::process::*; fn f(g: &str) { Command::new(g); }",
        "fn f() { let new = std::process::Command::new; new(\"git\"); }",
        "fn f() { vec![std::process::Command::new(\"git\")]; }",
    ] {
        assert!(
            !git_starts("store/local.rs", code).is_empty(),
            "not seen: {code}"
        );
    }
    assert!(
        git_starts(
            "repo/git.rs",
            "fn f() { std::process::Command::new(\"git\"); }"
        )
        .is_empty()
    );
    assert!(
        git_starts(
            "commands/x.rs",
            "fn f() { std::process::Command::new(\"sh\"); }"
        )
        .is_empty()
    );
    assert!(
        git_starts(
            "cli/x.rs",
            "use clap::Command; fn f() { Command::new(\"git\"); }"
        )
        .is_empty(),
        "clap's Command starts nothing"
    );

    // A direct read of the store in a handler, however imported.
    for code in [
        "use crate::{store::{self, Depth}}; fn f() { store::read(p); }",
        "use crate::store::{load as l};",
        "use super::super::store; fn f() { store::peek_head(p); }",
    ] {
        assert!(
            !direct_reads("commands/x.rs", code).is_empty(),
            "not seen: {code}"
        );
    }
}
