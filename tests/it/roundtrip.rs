//! What a write keeps: the typed frontmatter survives emit → parse unchanged and emission is
//! idempotent (property tests), rendering keeps the body, BOM and line endings byte for byte, and
//! hand comments, unknown keys and strings YAML cannot hold raw survive every command.

use crate::common::env::Env;
use crate::common::*;
use pair::board::document::{Document, Eol};
use pair::board::frontmatter::{
    self, Agent, Audit, Frontmatter, Phase, Pin, PinKind, Pins, Review, Role, Sha256, Status,
    Target, Timestamp, Verdict,
};
use pair::board::yaml::{self, Node, Value};
use proptest::prelude::*;
use std::fs;

#[test]
fn hand_comments_on_known_keys_survive_a_write() {
    let b = init_board(&["--reviewers", "alice"]);
    let text = b
        .read_string()
        .replace("yolo: false\n", "yolo: false  # ask me first\n")
        .replace(
            "work_type: feature\n",
            "# the user chose this\nwork_type: feature\n",
        )
        .replace("phase: DRAFT\n", "phase: DRAFT # where we are\n")
        .replace(
            "required_reviewers:\n  - alice\n",
            "required_reviewers: [alice]  # named by the user\n",
        );
    fs::write(&b.path, &text).unwrap();
    pair(["validate", b.p()]).code(0);
    pair([
        "note",
        b.p(),
        "--agent",
        "doer",
        "--section",
        "Evidence",
        "--note",
        "x",
    ])
    .code(0);
    let after = b.read_string();
    for kept in [
        "yolo: false  # ask me first\n",
        "# the user chose this\nwork_type: feature\n",
        "phase: DRAFT # where we are\n",
        "required_reviewers: [alice]  # named by the user\n",
    ] {
        assert!(after.contains(kept), "lost {kept:?}:\n{after}");
    }
    // A value that changes keeps the comment at the end of its line.
    pair([
        "advance",
        b.p(),
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ])
    .code(0);
    let after = b.read_string();
    assert!(
        after.contains("phase: PLANNING # where we are\n"),
        "{after}"
    );
    assert!(after.contains("yolo: false  # ask me first\n"), "{after}");
    pair(["validate", b.p()]).code(0);
}

#[test]
fn a_comment_on_a_line_that_goes_away_is_named_on_stderr() {
    let b = init_board(&["--reviewers", "alice"]);
    pair(["register", b.p(), "--agent", "alcie"]).code(0);
    let text = b.read_string();
    let at = text.find("  alcie:\n").expect("alcie's entry");
    let mut edited = text.clone();
    let status_at = at + edited[at..].find("    status: IDLE\n").unwrap();
    edited.replace_range(
        status_at..status_at + "    status: IDLE\n".len(),
        "    status: IDLE  # typo?\n",
    );
    fs::write(&b.path, &edited).unwrap();
    pair(["validate", b.p()]).code(0);
    let out = pair(["unregister", b.p(), "--agent", "alcie"]);
    out.code(0);
    assert!(
        out.stderr.contains("# typo?") && out.stderr.contains("could not be kept"),
        "{}",
        out.report()
    );
    assert!(!String::from_utf8(b.content()).unwrap().contains("alcie"));
}

#[test]
fn unknown_top_level_keys_survive_a_semantic_write_byte_for_byte() {
    let e = Env::new();
    e.ok(0, &["init", "k.md"]);
    let extra = "# why blob is here\nblob: !!binary aGVsbG8=\ncustom: !foo bar\nbig: 18446744073709551615\n0x10: hex key\noctal: 0o17\ninf: .inf\nnotes: |\n  multi\n  line\nnested:\n- a\n- {b: 1}\n";
    let text = e
        .read("k.md")
        .replacen("agents:\n", &format!("{extra}agents:\n"), 1);
    fs::write(e.path("k.md"), &text).unwrap();
    e.ok(0, &["validate", "k.md"]);
    e.ok(
        0,
        &[
            "note",
            "k.md",
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "x",
        ],
    );
    e.ok(
        0,
        &[
            "note",
            "k.md",
            "--agent",
            "doer",
            "--section",
            "Evidence",
            "--note",
            "y",
        ],
    );
    let after = e.read("k.md");
    assert!(after.contains(extra), "unknown entries changed:\n{after}");
    e.ok(0, &["validate", "k.md"]);
}

#[test]
fn strings_yaml_cannot_hold_raw_are_escaped_so_every_command_still_works() {
    let e = Env::new();
    e.ok(0, &["init", "b.md", "--reviewers", "alice"]);
    let text = e.read("b.md").replacen(
        "blocked_from: null\n",
        "blocked_from: null\ntopic_branch: \"feat\\u007f\\u0085\\u009f\\uFFFE\"\n",
        1,
    );
    fs::write(e.path("b.md"), &text).unwrap();
    e.ok(0, &["validate", "b.md"]);
    e.ok(0, &["register", "b.md", "--agent", "alice"]);
    e.ok(
        0,
        &["stop", "b.md", "--agent", "doer", "--reason", "user asked"],
    );
    e.ok(0, &["validate", "b.md"]);
    // The value did not change, so it is written back as the file spelled it.
    assert!(
        e.read("b.md")
            .contains("topic_branch: \"feat\\u007f\\u0085\\u009f\\uFFFE\"\n"),
        "{}",
        e.read("b.md")
    );
}

fn agent_id() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z0-9][A-Za-z0-9._-]{0,12}",
        // Ids YAML would read as something else when unquoted.
        Just("1".to_string()),
        Just("true".to_string()),
        Just("null".to_string()),
        Just("y".to_string()),
        Just("No".to_string()),
        Just("0x1F".to_string()),
        Just("1e3".to_string()),
        Just("007".to_string()),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,30}",
        "\\PC{0,20}",
        Just("a: b # not a comment".to_string()),
        Just("- dash".to_string()),
        Just("line one\nline two".to_string()),
        Just("  padded  ".to_string()),
        Just("".to_string()),
        Just("'quoted'".to_string()),
        Just("\"double\"".to_string()),
    ]
}

/// Whole seconds, as every time `pair` takes, or (as a later version may write them) with a
/// fraction.
fn timestamp() -> impl Strategy<Value = Timestamp> {
    (
        0i64..4_102_444_800,
        prop_oneof![3 => Just(0u32), 1 => 0u32..1_000_000_000],
    )
        .prop_map(|(s, nanos)| {
            Timestamp(chrono::DateTime::from_timestamp(s, nanos).expect("in range"))
        })
}

fn sha() -> impl Strategy<Value = Sha256> {
    any::<[u8; 32]>().prop_map(Sha256)
}

fn review() -> impl Strategy<Value = Review> {
    (
        proptest::option::of(0u32..1000),
        proptest::option::of(proptest::sample::select(Verdict::ALL.to_vec())),
        proptest::option::of(sha()),
    )
        .prop_map(|(reviewed, verdict, sha256)| Review {
            reviewed,
            verdict,
            sha256,
        })
}

fn pin() -> impl Strategy<Value = Pin> {
    (
        1u32..1000,
        proptest::sample::select(PinKind::ALL.to_vec()),
        sha(),
        proptest::collection::vec(text().prop_map(|t| format!("/{t}")), 0..3),
        proptest::bool::ANY,
    )
        .prop_map(|(counter, kind, sha256, files, published)| {
            let files: Vec<String> = files
                .into_iter()
                .filter(|f| !f.chars().any(char::is_control))
                .collect();
            Pin {
                counter,
                kind,
                sha256,
                // A diff pin records the tree of the content it covers; no other kind does.
                tree: matches!(kind, PinKind::Staged | PinKind::Unstaged)
                    .then(|| "4b825dc642cb6eb9a060e54bf8d69288fbee4904".to_string()),
                // A published pin names its commit and ref, and for files each one's path in it.
                published: published.then(|| pair::board::frontmatter::Publication {
                    commit: "0123456789abcdef0123456789abcdef01234567".to_string(),
                    refname: format!("refs/pair-artifacts/task-0123456789/code-{counter}"),
                    paths: files
                        .iter()
                        .enumerate()
                        .map(|(i, _)| format!("tests/t{i}.py"))
                        .collect(),
                }),
                // Paths with control characters are refused; a pin never holds one.
                files,
                // Written by every submission; absent on an older pin.
                submitted_at: (counter % 2 == 0).then(|| {
                    pair::board::frontmatter::Timestamp::parse("2026-01-01T00:00:07Z").unwrap()
                }),
            }
        })
}

fn pins() -> impl Strategy<Value = Pins> {
    proptest::collection::vec(proptest::option::of(pin()), 4).prop_map(|v| {
        let mut pins = Pins::default();
        for (t, p) in Target::ALL.iter().zip(v) {
            pins.set(*t, p);
        }
        pins
    })
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| Value::Int(i.into())),
        (-1e9f64..1e9).prop_map(Value::Float),
        text().prop_map(Value::Str),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4)
                .prop_map(|v| Value::Seq(v.into_iter().map(node).collect())),
            proptest::collection::btree_map("[a-z][a-z_]{0,8}", inner, 0..4)
                .prop_map(|m| { Value::Map(m.into_iter().map(|(k, v)| (k, node(v))).collect()) }),
        ]
    })
}

fn node(value: Value) -> Node {
    Node {
        value,
        line: 0,
        raw: None,
    }
}

fn extras(known: &'static [&'static str]) -> impl Strategy<Value = Vec<(String, Node)>> {
    proptest::collection::btree_map("x_[a-z]{1,8}", value(), 0..3).prop_map(move |m| {
        m.into_iter()
            .filter(|(k, _)| !known.contains(&k.as_str()))
            .map(|(k, v)| (k, node(v)))
            .collect()
    })
}

fn agent(role: Role) -> impl Strategy<Value = Agent> {
    (
        proptest::sample::select(Status::ALL.to_vec()),
        proptest::option::of(timestamp()),
        [review(), review(), review(), review()],
        (
            extras(&[]),
            proptest::option::of((timestamp(), text())),
            proptest::option::of((proptest::sample::select(Target::ALL.to_vec()), 0u32..5)),
        ),
    )
        .prop_map(move |(status, last_seen, r, (extra, away, claim))| Agent {
            role,
            status,
            last_seen,
            analysis: r[0],
            plan: r[1],
            red_test: r[2],
            code: r[3],
            away: away.map(|(until, reason)| pair::board::frontmatter::Away { until, reason }),
            pool_claim: claim.map(|(target, counter)| pair::board::pool::Claim { target, counter }),
            extra,
        })
}

/// SLAs as `init --sla` leaves them: some names, each once, in table order.
fn sla() -> impl Strategy<Value = Vec<pair::board::sla::Limit>> {
    proptest::sample::subsequence(pair::board::sla::SlaName::ALL.to_vec(), 0..4).prop_flat_map(
        |names| {
            let n = names.len();
            proptest::collection::vec(1u64..=pair::board::sla::MAX_SECONDS, n).prop_map(
                move |secs| {
                    names
                        .iter()
                        .zip(secs)
                        .map(|(name, seconds)| pair::board::sla::Limit {
                            name: *name,
                            seconds,
                        })
                        .collect()
                },
            )
        },
    )
}

fn frontmatter() -> impl Strategy<Value = Frontmatter> {
    let flags = (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>());
    let counters = ((0u32..50, 0u32..50, 0u32..50, 0u32..50), pins());
    let audit = (
        proptest::option::of(text()),
        proptest::option::of("[0-9a-f]{7,40}"),
        proptest::option::of(timestamp()),
        proptest::option::of(any::<bool>()),
    );
    (
        proptest::sample::select(Phase::ALL.to_vec()),
        timestamp(),
        flags,
        "[a-z][a-z0-9_-]{0,10}",
        proptest::collection::btree_set(agent_id(), 0..4),
        counters,
        proptest::option::of(text().prop_map(|t| format!("/{t}"))),
        proptest::option::of(proptest::sample::select(Phase::ALL.to_vec())),
        audit,
        (agent_id(), agent(Role::Doer)),
        proptest::collection::vec((agent_id(), agent(Role::Reviewer)), 0..4),
        (
            extras(&[]),
            sla(),
            proptest::option::of(1..=pair::board::format::CURRENT),
        ),
    )
        .prop_map(
            |(
                phase,
                at,
                (yolo, rca, red, no_review),
                work_type,
                required,
                ((a, p, r, c), pins),
                worktree,
                blocked_from,
                (root, sha, merged_at, removed),
                doer,
                reviewers,
                (extra, sla, format),
            )| {
                let mut agents = vec![doer];
                for (id, a) in reviewers {
                    if !agents.iter().any(|(k, _)| *k == id) {
                        agents.push((id, a));
                    }
                }
                Frontmatter {
                    format,
                    journal: None,
                    phase,
                    phase_updated_at: at,
                    yolo,
                    work_type,
                    rca_required: rca,
                    red_test_required: red,
                    required_reviewers: required.into_iter().collect(),
                    pool: None,
                    after: Vec::new(),
                    independent_review: yolo && no_review,
                    dissent: Default::default(),
                    handoffs: Vec::new(),
                    seconds: Vec::new(),
                    no_review,
                    analysis_revision: a,
                    plan_revision: p,
                    red_test_round: r,
                    code_review_round: c,
                    pins,
                    worktree,
                    blocked_from,
                    required_checks: Vec::new(),
                    check_runs: Vec::new(),
                    audit: Audit {
                        repo_root: root,
                        commit_sha: sha,
                        merged_at,
                        worktree_removed: removed,
                        ..Audit::default()
                    },
                    agents,
                    ledger: Default::default(),
                    sla,
                    extra,
                }
            },
        )
}

fn parse(text: &str) -> Frontmatter {
    let node =
        yaml::parse(text, 1).unwrap_or_else(|e| panic!("emitted YAML does not parse: {e}\n{text}"));
    match frontmatter::from_node(&node) {
        Ok(p) => p.fm,
        Err(errs) => panic!("emitted frontmatter does not convert: {errs:?}\n{text}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn emitted_frontmatter_parses_back_to_the_same_model(fm in frontmatter()) {
        let emitted = fm.emit();
        let back = parse(&emitted);
        prop_assert_eq!(&back, &fm);
        // Idempotent: emitting what was parsed gives the same bytes.
        prop_assert_eq!(back.emit(), emitted);
    }

    #[test]
    fn rendering_keeps_body_bom_and_line_endings(
        fm in frontmatter(),
        body in "(\\PC{0,40}\n){0,6}",
        bom in any::<bool>(),
        crlf in any::<bool>(),
    ) {
        let eol = if crlf { Eol::CrLf } else { Eol::Lf };
        let body = eol.apply(&body.replace(['<', '>', '='], "."));
        let doc = Document {
            bom,
            eol,
            fm_text: String::new(),
            fm_first_line: 2,
            body: body.clone(),
            body_first_line: 0,
            outline: Default::default(),
        };
        let bytes = doc.render(&fm.emit());
        let back = Document::parse(bytes.as_bytes()).expect("rendered document splits");
        prop_assert_eq!(back.bom, bom);
        prop_assert_eq!(back.eol, eol);
        prop_assert_eq!(&back.body, &body);
        prop_assert_eq!(parse(&back.fm_text.replace("\r\n", "\n")), fm);
    }

    #[test]
    fn appends_never_change_existing_body_bytes(
        paragraphs in proptest::collection::vec("[a-z ]{0,20}", 0..5),
        section in proptest::sample::select(pair::board::document::SECTION_ORDER.to_vec()),
        note in "[a-z ]{1,20}(\n[a-z ]{0,20}){0,3}",
    ) {
        let mut body = String::from("# Title\n\n## Goal\n\n");
        for p in &paragraphs {
            body.push_str(p);
            body.push('\n');
        }
        body.push_str("\n## Decisions\n\nold decision\n");
        let text = format!("---\nphase: DRAFT\n---\n{body}");
        let mut doc = Document::parse(text.as_bytes()).unwrap();
        let before: Vec<String> = doc.body.lines().map(String::from).collect();
        let entry = format!("### entry\n\n{note}\n");
        prop_assert!(doc.append(section, &entry));
        // The old lines are all still there, in order.
        let after: Vec<&str> = doc.body.lines().collect();
        let mut it = after.iter();
        for line in &before {
            prop_assert!(it.any(|l| l == line), "lost line {:?}", line);
        }
        // The entry sits inside the requested section.
        let secs = doc.sections();
        let sec = secs.iter().find(|s| s.name == section).expect("section exists");
        prop_assert!(doc.body[sec.start..sec.end].contains("### entry"));
    }
}

#[test]
fn every_target_has_distinct_fields() {
    let mut fields: Vec<&str> = Target::ALL
        .iter()
        .flat_map(|t| [t.counter_field(), t.reviewed_field(), t.verdict_field()])
        .collect();
    let n = fields.len();
    fields.sort();
    fields.dedup();
    assert_eq!(fields.len(), n);
}

/// The frontmatter's text with hand comments: `# above N` lines before some lines and `# on N`
/// at the end of others; returns the text and every comment put in.
fn commented(text: &str, above: &[bool], after: &[bool]) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut comments = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if above.get(i % above.len().max(1)).copied().unwrap_or(false) {
            let c = format!("# above {i}");
            out.push_str(&c);
            out.push('\n');
            comments.push(c);
        }
        out.push_str(line);
        if after.get(i % after.len().max(1)).copied().unwrap_or(false) {
            let c = format!("# on {i}");
            out.push_str("  ");
            out.push_str(&c);
            comments.push(c);
        }
        out.push('\n');
    }
    (out, comments)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A write that changes values keeps every hand comment, and the text it writes is the new
    /// board exactly.
    #[test]
    fn hand_comments_survive_a_change_of_values(
        old in frontmatter(),
        phase in proptest::sample::select(Phase::ALL.to_vec()),
        yolo in any::<bool>(),
        counter in 0u32..60,
        status in proptest::sample::select(Status::ALL.to_vec()),
        seen in timestamp(),
        above in proptest::collection::vec(any::<bool>(), 1..7),
        after in proptest::collection::vec(any::<bool>(), 1..7),
    ) {
        let (text, comments) = commented(&old.emit(), &above, &after);
        prop_assert_eq!(&parse(&text), &old);
        let mut new = old.clone();
        new.phase = phase;
        new.yolo = yolo;
        new.plan_revision = counter;
        new.agents[0].1.status = status;
        new.agents[0].1.last_seen = Some(seen);
        let r = pair::board::rewrite::render(&text, &old, &new);
        prop_assert_eq!(&parse(&r.text), &new, "{}", r.text);
        prop_assert!(r.dropped.is_empty(), "{:?}\n{}", r.dropped, r.text);
        for c in &comments {
            prop_assert!(r.text.contains(c.as_str()), "lost {:?}\n{}", c, r.text);
        }
        // Nothing changed: the text is kept byte for byte.
        prop_assert_eq!(pair::board::rewrite::render(&text, &old, &old).text, text);
    }
}

/// The same tree, lines included.
fn same_tree(a: &Node, b: &Node) -> Result<(), String> {
    if a.line != b.line {
        return Err(format!(
            "line {} against {} at {:?}",
            a.line, b.line, a.value
        ));
    }
    match (&a.value, &b.value) {
        (Value::Seq(x), Value::Seq(y)) if x.len() == y.len() => {
            x.iter().zip(y).try_for_each(|(a, b)| same_tree(a, b))
        }
        (Value::Map(x), Value::Map(y)) if x.len() == y.len() => {
            x.iter().zip(y).try_for_each(|((ka, a), (kb, b))| {
                if ka == kb {
                    same_tree(a, b)
                } else {
                    Err(format!("key {ka:?} against {kb:?}"))
                }
            })
        }
        (Value::Seq(_) | Value::Map(_), _) => Err(format!("{:?} against {:?}", a.value, b.value)),
        (x, y) if x == y => Ok(()),
        (x, y) => Err(format!("{x:?} against {y:?}")),
    }
}

/// What the frontmatter's own reader accepts, it reads as the general parser does (lines
/// included); `None` when it leaves the text to the general parser.
fn plain_agrees(text: &str, offset: u32) -> Result<Option<()>, String> {
    let Some(plain) = pair::board::yaml_plain::parse(text, offset) else {
        return Ok(None);
    };
    let general = yaml::parse_general(text, offset)
        .map_err(|e| format!("the general parser refuses what the plain one read: {e}\n{text}"))?;
    same_tree(&plain, &general).map_err(|e| format!("{e}\n{text}"))?;
    typed_ledger_agrees(text, offset, &general)?;
    Ok(Some(()))
}

/// The frontmatter's reader with the ledger read straight into its type agrees with the tree
/// the general parser reads: the same tree with `ledger: null` (same line) in the ledger's place,
/// and the ledger the tree's own reader makes, without an error. `Some(true)` when the ledger
/// was read into its type.
fn typed_ledger_agrees(text: &str, offset: u32, general: &Node) -> Result<bool, String> {
    let Some((tree, typed)) = pair::board::yaml_plain::parse_frontmatter(text, offset) else {
        return Err(format!(
            "read without the typed ledger, not with it\n{text}"
        ));
    };
    let Some(typed) = typed else {
        same_tree(&tree, general).map_err(|e| format!("{e}\n{text}"))?;
        return Ok(false);
    };
    let Value::Map(entries) = &general.value else {
        return Err(format!("a typed ledger outside a mapping\n{text}"));
    };
    let mut expected = general.clone();
    let Value::Map(slots) = &mut expected.value else {
        unreachable!()
    };
    let (_, slot) = slots
        .iter_mut()
        .find(|(k, _)| k == "ledger")
        .ok_or_else(|| format!("a typed ledger without a `ledger` key\n{text}"))?;
    slot.value = Value::Null;
    same_tree(&tree, &expected).map_err(|e| format!("{e}\n{text}"))?;
    let (_, ledger_node) = entries.iter().find(|(k, _)| k == "ledger").unwrap();
    let mut errors = Vec::new();
    let from_tree = pair::board::ledger::from_node(ledger_node, &mut errors);
    if !errors.is_empty() {
        return Err(format!(
            "the typed reader took a ledger the tree finds wrong: {errors:?}\n{text}"
        ));
    }
    if from_tree != typed.ledger {
        return Err(format!(
            "typed {typed:?}\nagainst the tree's {from_tree:?}\n{text}"
        ));
    }
    Ok(true)
}

#[test]
fn the_plain_reader_reads_every_fixture_as_the_general_parser_does() {
    let mut read = 0;
    for dir in [
        "tests/fixtures",
        "tests/fixtures/formats/1",
        "tests/fixtures/formats/2",
    ] {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let Ok(doc) = Document::parse(&fs::read(&path).unwrap()) else {
                continue;
            };
            if plain_agrees(&doc.fm_text, doc.fm_first_line - 1)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                .is_some()
            {
                read += 1;
            }
        }
    }
    assert!(read > 20, "the plain reader read only {read} fixtures");
}

#[test]
fn a_written_board_with_objections_is_read_by_the_plain_reader() {
    let b = init_board(&["--reviewers", "alice"]);
    pair(["register", "--agent", "alice", b.p()]).code(0);
    pair([
        "advance",
        b.p(),
        "--agent",
        "doer",
        "PLANNING",
        "--user-approved",
    ])
    .code(0);
    pair([
        "submit",
        "--agent",
        "doer",
        b.p(),
        "plan",
        "--note",
        "the plan",
        "--user-approved",
    ])
    .code(0);
    for i in 0..3 {
        pair([
            "object",
            b.p(),
            "--agent",
            "alice",
            "--severity",
            "blocking",
            "--anchor",
            "## Plan Revisions",
            "--title",
            &format!("t: {i} \"q\" ü"),
            "--evidence",
            "e",
            "--fix",
            "f",
        ])
        .code(0);
    }
    let doc = Document::parse(b.read_string().as_bytes()).unwrap();
    assert_eq!(
        plain_agrees(&doc.fm_text, doc.fm_first_line - 1),
        Ok(Some(())),
        "{}",
        doc.fm_text
    );
    // Its ledger, as every write emits it, is read straight into its type.
    let general = yaml::parse_general(&doc.fm_text, doc.fm_first_line - 1).unwrap();
    assert_eq!(
        typed_ledger_agrees(&doc.fm_text, doc.fm_first_line - 1, &general),
        Ok(true),
        "{}",
        doc.fm_text
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_plain_reader_reads_every_emitted_frontmatter_as_the_general_parser_does(
        fm in frontmatter(),
        offset in 0u32..3,
    ) {
        let emitted = fm.emit();
        match plain_agrees(&emitted, offset) {
            Ok(_) => {}
            Err(e) => prop_assert!(false, "{}", e),
        }
    }

    #[test]
    fn the_plain_reader_reads_any_tree_as_the_general_parser_does(v in value()) {
        let mut text = String::new();
        yaml::emit_entry(&mut text, 0, "x", &node(v));
        match plain_agrees(&text, 1) {
            Ok(_) => {}
            Err(e) => prop_assert!(false, "{}", e),
        }
    }
}

/// A pool claim is written as two plain words (`plan 1`): the plain reader reads it, and any
/// words so written, as the general parser does, in a block and in a flow collection.
#[test]
fn the_plain_reader_reads_a_pool_claim_s_words_as_the_general_parser_does() {
    let text = "agents:\n  p2:\n    role: reviewer\n    pool_claim: plan 1\n";
    assert_eq!(plain_agrees(text, 1), Ok(Some(())), "{text}");
    for words in [
        "plan 1",
        "code_review 12",
        "a -b",
        "a - b",
        "/x y/z",
        "null x",
        "yes no",
        "_ 0",
        "a.b c-d e_f",
    ] {
        for text in [format!("x: {words}\n"), format!("x: [{words}, b]\n")] {
            assert_eq!(plain_agrees(&text, 0), Ok(Some(())), "{text}");
        }
    }
    // What is not a plain word is left to the general parser.
    for words in ["plan  1", "1 plan", "a #b", "a: b", "a 'b'", "-a b"] {
        let text = format!("x: {words}\n");
        assert_eq!(plain_agrees(&text, 0), Ok(None), "{text}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_plain_reader_reads_plain_words_as_the_general_parser_does(
        words in proptest::collection::vec("[a-zA-Z0-9_./-]{1,6}", 1..4),
        first in "[a-zA-Z/_][a-zA-Z0-9_./-]{0,5}",
    ) {
        let text = std::iter::once(first).chain(words).collect::<Vec<_>>().join(" ");
        for text in [format!("x: {text}\n"), format!("x: [{text}]\n")] {
            match plain_agrees(&text, 0) {
                Ok(_) => {}
                Err(e) => prop_assert!(false, "{}", e),
            }
        }
    }
}
