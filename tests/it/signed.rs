//! Signed boards (format 3): each record carries its writer's SSH signature, checked against an
//! allowed-signers file that is not the board's. Real ed25519 keys made by `ssh-keygen`; a
//! forger is the doer, who can write the board's file (or push its git ref) but holds only its
//! own key.

use crate::common::phases::recipe;
use crate::common::signing::Signers;
use crate::common::*;
use std::fs;

/// A signed board, its agents' keys (doer, alice, bob, carol, each vouched for as itself) and a
/// git worktree for the code steps.
struct Signed {
    b: Board,
    keys: Signers,
    wt: String,
}

impl Signed {
    fn new() -> Signed {
        let keys = Signers::new(&["doer", "alice", "bob", "carol"]);
        Signed::with_keys(keys)
    }

    fn with_keys(keys: Signers) -> Signed {
        let b = Board::absent();
        let mut args: Vec<String> = [
            "init",
            b.p(),
            "--goal",
            "Make uploads retry",
            "--reviewers",
            "alice,bob",
            "--signed",
        ]
        .map(String::from)
        .to_vec();
        args.extend(keys.flags("doer"));
        pair(&args).code(0);
        let wt_dir = b.aux.path().join("worktree");
        git_worktree(&wt_dir);
        let wt = wt_dir.to_str().unwrap().to_string();
        Signed { b, keys, wt }
    }

    /// `pair WORD BOARD --agent ACTOR REST... ` signed with the key `key`.
    fn run_with(&self, actor: &str, key: &str, words: &[&str]) -> Out {
        let mut v = vec![words[0].to_string(), self.b.p().to_string()];
        v.extend(["--agent".to_string(), actor.to_string()]);
        v.extend(words[1..].iter().map(|w| w.replace("{wt}", &self.wt)));
        v.extend(self.keys.flags(key));
        pair(v)
    }

    /// A write by `actor` with its own key, which must succeed.
    #[track_caller]
    fn ok(&self, actor: &str, words: &[&str]) -> Out {
        let out = self.run_with(actor, actor, words);
        assert_eq!(out.code, Some(0), "{}", out.report());
        out
    }

    #[track_caller]
    fn steps(&self, steps: &[&str]) {
        for s in steps {
            let parts: Vec<&str> = s.split_whitespace().collect();
            let actor = if parts[0] == "DOER" { "doer" } else { parts[0] };
            self.ok(actor, &parts[1..]);
        }
    }

    /// `pair validate BOARD --json` against the agents' trust root.
    fn validate(&self) -> Out {
        validate_with(&self.b, &self.keys)
    }
}

fn validate_with(b: &Board, keys: &Signers) -> Out {
    let mut v = vec!["validate".to_string(), b.p().to_string(), "--json".into()];
    v.extend(keys.trust());
    pair(v)
}

/// The errors of a `validate --json` as (field, line, message).
fn errors(out: &Out) -> Vec<(String, Option<u64>, String)> {
    out.json()["files"][0]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["field"].as_str().unwrap().to_string(),
                e["line"].as_u64(),
                e["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The 1-based file line of the journal record that holds `needle`, last first.
fn record_line(text: &str, needle: &str) -> u64 {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("- at=") && l.contains(needle))
        .map(|(i, _)| i as u64 + 1)
        .last()
        .unwrap_or_else(|| panic!("no record with {needle:?}"))
}

/// Seal a hand-made journal as pair would: the record count and the last record's digest,
/// the board's identity kept (what a forger who can read the code does).
fn reseal_signed(content: &str) -> String {
    let records = journal_lines(content.as_bytes());
    let last = records.last().unwrap();
    let unsealed: Vec<&str> = last
        .split(' ')
        .filter(|w| !w.starts_with("after="))
        .collect();
    let head = &sha256_hex(unsealed.join(" ").as_bytes())[..16];
    let board = content
        .lines()
        .find_map(|l| l.strip_prefix("journal: "))
        .and_then(|l| l.split("board: \"").nth(1))
        .map(|b| b[..32].to_string())
        .unwrap();
    set_top(
        content,
        "journal",
        &format!(
            "{{records: {}, head: \"{head}\", board: \"{board}\"}}",
            records.len()
        ),
    )
}

#[test]
fn three_agents_sign_their_records_to_cleaned_up() {
    let s = Signed::new();
    s.steps(&recipe("CLEANED_UP"));
    let text = s.b.read_string();
    assert!(
        text.starts_with("---\nformat: 3\njournal: {records: "),
        "{text}"
    );
    let records = journal_lines(text.as_bytes());
    assert!(records.len() >= 15, "{records:?}");
    for r in &records {
        assert!(
            r.contains(" content=") && r.contains(" sig="),
            "unsigned: {r}"
        );
    }
    for who in ["doer", "alice", "bob"] {
        assert!(
            records.iter().any(|r| r.contains(&format!(" by={who} "))),
            "{who} wrote nothing"
        );
    }
    let out = s.validate();
    out.code(0);
    let sig = &out.json()["files"][0]["signatures"];
    assert_eq!(sig["verified"], records.len(), "{}", out.report());
    assert_eq!(sig["unvouched"], serde_json::json!([]));
    assert_eq!(sig["source"], "--allowed-signers");
    assert_eq!(sig["trust_root"], s.keys.allowed().display().to_string());
    // The private keys reached no board and no output.
    for name in ["doer", "alice", "bob"] {
        let private = fs::read_to_string(s.keys.key(name)).unwrap();
        let body: String = private
            .lines()
            .filter(|l| !l.starts_with("-----"))
            .collect();
        assert!(
            !text.contains(&body[..40]),
            "{name}'s private key is on the board"
        );
        assert!(!out.stdout.contains(&body[..40]));
    }

    // A trust root that does not know alice names her, and the board is not vouched for.
    let other = Signers::new(&["doer", "bob", "carol"]);
    let out = validate_with(&s.b, &other);
    out.code(5);
    let sig = &out.json()["files"][0]["signatures"];
    assert_eq!(
        sig["unvouched"],
        serde_json::json!(["doer", "alice", "bob", "carol"])
    );
    // (Its doer's and bob's keys are other keys than the ones that signed.)
    let text_out = pair([
        "validate",
        s.b.p(),
        "--allowed-signers",
        other.allowed().to_str().unwrap(),
    ]);
    text_out
        .code(5)
        .mentions(&["not vouched for: doer, alice, bob, carol"]);
}

#[test]
fn a_write_without_a_key_the_trust_root_vouches_for_is_refused() {
    let s = Signed::new();
    s.steps(&recipe("PLANNING_SUBMITTED"));
    let before = s.b.read();
    let verdict = ["verdict", "APPROVED", "--revision", "1", "--note", "n"];
    // The doer, as alice, with its own key: refused before anything is written.
    let out = s.run_with("alice", "doer", &verdict);
    out.code(6)
        .mentions(&["alice", "vouches", "nothing was written"]);
    s.b.assert_untouched(&before);
    // No key, or no trust root: refused.
    let mut args: Vec<String> = ["verdict", s.b.p(), "--agent", "alice"]
        .map(String::from)
        .to_vec();
    args.extend(verdict[1..].iter().map(|w| w.to_string()));
    let mut no_key = args.clone();
    no_key.extend(s.keys.trust());
    pair(&no_key).code(6).mentions(&["--signing-key"]);
    let mut no_trust = args.clone();
    no_trust.extend([
        "--signing-key".into(),
        s.keys.key("alice").display().to_string(),
    ]);
    pair(&no_trust).code(6).mentions(&["--allowed-signers"]);
    s.b.assert_untouched(&before);

    // A raw write under alice's name with the doer's key, and one that names nobody.
    let content = format!("{}\nA line.\n", String::from_utf8(before.clone()).unwrap());
    let mut raw = vec!["--as", "alice"];
    let flags = s.keys.flags("doer");
    raw.extend(flags.iter().map(String::as_str));
    s.b.write_expect(&content, &s.b.sha(), &raw).code(6);
    let anonymous: Vec<&str> = flags.iter().map(String::as_str).collect();
    s.b.write_expect(&content, &s.b.sha(), &anonymous)
        .code(6)
        .mentions(&["name its agent"]);
    s.b.assert_untouched(&before);

    // A key the doer put on the board for alice changes nothing: the trust root is not the
    // board's.
    s.keys.make("doer-as-alice");
    let public =
        fs::read_to_string(format!("{}.pub", s.keys.key("doer-as-alice").display())).unwrap();
    let hinted = insert_before_closing(
        &String::from_utf8(before.clone()).unwrap(),
        &format!("signers: {{alice: \"{}\"}}\n", public.trim()),
    );
    let mut as_doer = vec!["--as", "doer"];
    as_doer.extend(flags.iter().map(String::as_str));
    s.b.write_expect(&hinted, &s.b.sha(), &as_doer).code(0);
    assert!(
        s.b.read_string()
            .contains("signers: {alice: \"ssh-ed25519 ")
    );
    let after_hint = s.b.read();
    s.run_with("alice", "doer-as-alice", &verdict).code(6);
    s.b.assert_untouched(&after_hint);
    // Alice herself signs her verdict.
    s.ok("alice", &verdict);
    s.validate().code(0);
}

/// The board as the doer forges it: alice's verdict signed by a key the doer made, through a
/// trust root of its own that calls that key alice's, written to the board's file as a plain
/// `git push` of a hand-made commit would (chain and seal as pair makes them).
fn forge_alice_verdict(s: &Signed) -> Vec<u8> {
    let fake = Signers::new(&["doer"]);
    fake.add("doer-as-alice", "alice");
    let copy = Board::new(s.b.read());
    let mut args: Vec<String> = ["verdict", copy.p(), "--agent", "alice", "APPROVED"]
        .map(String::from)
        .to_vec();
    args.extend(["--revision", "1", "--note", "Looks right."].map(String::from));
    args.extend(fake.flags("doer-as-alice"));
    // The doer's pair trusts the doer's file: the records before verify there too only if it
    // also vouches for the real writers, so it lists them.
    for who in ["doer", "alice", "bob", "carol"] {
        let public = fs::read_to_string(format!("{}.pub", s.keys.key(who).display())).unwrap();
        fake.vouch_line(&format!("{who} {}", public.trim()));
    }
    pair(&args).code(0);
    let forged = copy.read();
    fs::write(&s.b.path, &forged).unwrap();
    forged
}

#[test]
fn a_verdict_forged_under_alice_s_name_is_named_by_validate_and_refused_by_the_next_write() {
    let s = Signed::new();
    s.steps(&recipe("PLANNING_SUBMITTED"));
    let forged = forge_alice_verdict(&s);
    let text = String::from_utf8(forged.clone()).unwrap();
    let line = record_line(&text, " by=alice cmd=verdict ");
    let out = s.validate();
    out.code(5);
    let errs = errors(&out);
    assert!(
        errs.iter().any(|(f, l, m)| f == "journal.sig"
            && *l == Some(line)
            && m.contains("by alice does not verify")),
        "{}",
        out.report()
    );
    assert_eq!(
        out.json()["files"][0]["signatures"]["unvouched"],
        serde_json::json!(["alice"])
    );
    // The next write, bob's genuine verdict, is refused: the board is untouched.
    let out = s.run_with(
        "bob",
        "bob",
        &["verdict", "APPROVED", "--revision", "1", "--note", "n"],
    );
    out.code(5).mentions(&["by alice does not verify"]);
    s.b.assert_untouched(&forged);

    // A forged record with a genuine one on top: the doer forges alice's verdict, then writes
    // its own note over it with its real key (its own pair takes a trust root that calls the
    // forging key alice's). The next write of anyone else catches the record below.
    let s2 = Signed::new();
    s2.steps(&recipe("PLANNING_SUBMITTED"));
    let fake2 = Signers::new(&[]);
    fake2.add("doer-as-alice", "alice");
    for who in ["doer", "alice", "bob", "carol"] {
        let public = fs::read_to_string(format!("{}.pub", s2.keys.key(who).display())).unwrap();
        fake2.vouch_line(&format!("{who} {}", public.trim()));
    }
    let mut forge: Vec<String> = ["verdict", s2.b.p(), "--agent", "alice", "APPROVED"]
        .map(String::from)
        .to_vec();
    forge.extend(["--revision", "1", "--note", "Forged."].map(String::from));
    forge.extend(fake2.flags("doer-as-alice"));
    pair(&forge).code(0);
    let mut on_top: Vec<String> = ["note", s2.b.p(), "--agent", "doer", "--section", "Evidence"]
        .map(String::from)
        .to_vec();
    on_top.extend(["--note".into(), "Genuine, on top.".into()]);
    on_top.extend([
        "--signing-key".into(),
        s2.keys.key("doer").display().to_string(),
    ]);
    on_top.extend([
        "--allowed-signers".into(),
        fake2.allowed().display().to_string(),
    ]);
    pair(&on_top).code(0);
    let both = s2.b.read();
    let text = String::from_utf8(both.clone()).unwrap();
    let forged_line = record_line(&text, " by=alice cmd=verdict ");
    assert!(record_line(&text, " by=doer cmd=note ") > forged_line);
    // Against the real trust root: the doer's record on top verifies, the one below does not.
    let out = s2.validate();
    out.code(5);
    let errs = errors(&out);
    assert!(
        errs.iter()
            .any(|(f, l, _)| f == "journal.sig" && *l == Some(forged_line)),
        "{}",
        out.report()
    );
    assert_eq!(
        out.json()["files"][0]["signatures"]["unvouched"],
        serde_json::json!(["alice"])
    );
    let out = s2.run_with(
        "bob",
        "bob",
        &["verdict", "APPROVED", "--revision", "1", "--note", "n"],
    );
    out.code(5).mentions(&["by alice does not verify"]);
    s2.b.assert_untouched(&both);

    // A recorded repair, signed by its writer, lets the board go on; validate then says the
    // forged record as a warning, naming the repair.
    let mut repair = vec![
        "--repair",
        "--reason",
        "alice's verdict at that line is forged",
        "--agent",
        "bob",
    ];
    let bob = s2.keys.flags("bob");
    repair.extend(bob.iter().map(String::as_str));
    s2.b.write_expect(&both, &s2.b.sha(), &repair).code(0);
    let out = s2.validate();
    out.code(0);
    let warnings = out.json()["files"][0]["warnings"].to_string();
    assert!(warnings.contains("the repair at line"), "{}", out.report());
}

#[test]
fn a_hand_made_record_is_named_by_validate() {
    let s = Signed::new();
    s.steps(&recipe("PLANNING_SUBMITTED"));
    let text = s.b.read_string();
    // The board edited by hand with no record (the goal changed, as a plain push could): the
    // board is not the one its last signed record names.
    let edited = text.replacen("Make uploads retry", "Make uploads never retry", 1);
    assert_ne!(edited, text);
    fs::write(&s.b.path, &edited).unwrap();
    let out = s.validate();
    out.code(5);
    assert!(
        out.stdout
            .contains("not the one its last signed record names"),
        "{}",
        out.report()
    );
    // And the next write refuses it.
    let out = s.run_with(
        "bob",
        "bob",
        &["verdict", "APPROVED", "--revision", "1", "--note", "n"],
    );
    out.code(5)
        .mentions(&["not the one its last signed record names"]);
    s.b.assert_untouched(edited.as_bytes());
    fs::write(&s.b.path, &text).unwrap();
    // The format lowered by hand, so that no signature would be checked: named.
    let lowered = text.replacen("format: 3\n", "format: 2\n", 1);
    fs::write(&s.b.path, &lowered).unwrap();
    let out = s.validate();
    out.code(5);
    assert!(
        out.stdout.contains("was lowered outside pair"),
        "{}",
        out.report()
    );
    let out = s.run_with(
        "bob",
        "bob",
        &["verdict", "APPROVED", "--revision", "1", "--note", "n"],
    );
    out.code(5).mentions(&["was lowered outside pair"]);
    s.b.assert_untouched(lowered.as_bytes());
    fs::write(&s.b.path, &text).unwrap();
    // A record appended by hand under alice's name, unsigned, chained and sealed as pair would.
    let last = journal_lines(text.as_bytes()).last().unwrap().clone();
    let prev = &sha256_hex(last.as_bytes())[..16];
    let line = format!(
        "- at=2026-05-04T10:00:00.000Z by=alice cmd=verdict phase=PLANNING_SUBMITTED>PLANNING_SUBMITTED \
         verdict=plan:APPROVED turn=doer wait_us=1 uid=0 host=h pid=1 before={} after={} prev={prev}",
        s.b.sha(),
        "0".repeat(64)
    );
    let hand = reseal_signed(&format!("{text}{line}\n"));
    fs::write(&s.b.path, &hand).unwrap();
    let out = s.validate();
    out.code(5);
    let n = record_line(&hand, " by=alice cmd=verdict ");
    assert!(
        errors(&out).iter().any(|(f, l, m)| f == "journal.sig"
            && *l == Some(n)
            && m.contains("carries no signature")),
        "{}",
        out.report()
    );
}

#[test]
fn a_genuine_record_moved_to_another_board_or_place_does_not_verify() {
    let keys = Signers::new(&["doer", "alice", "bob", "carol"]);
    let a = Signed::new();
    a.steps(&["alice register", "bob register"]);
    let b = Signed::new();
    b.steps(&["alice register"]);
    // Alice's record from board A, in place of board B's last record (chain and seal made to
    // fit, as a forger would): the signature covers the board's identity, `before` and `prev`.
    drop(keys);
    let a_text = a.b.read_string();
    let moved = journal_lines(a_text.as_bytes())
        .into_iter()
        .find(|l| l.contains(" by=alice cmd=register "))
        .unwrap();
    let b_text = b.b.read_string();
    let b_last = journal_lines(b_text.as_bytes()).last().unwrap().clone();
    let swapped = reseal_signed(&b_text.replace(&b_last, &moved));
    let b_keys_validate = |text: &str| {
        fs::write(&b.b.path, text).unwrap();
        let out = b.validate();
        out.code(5);
        (out.clone(), errors(&out))
    };
    let (out, errs) = b_keys_validate(&swapped);
    let n = record_line(&swapped, " by=alice cmd=register ");
    // Board B's keys are other keys than board A's: the record fails as alice's on B. With the
    // same trust root it fails all the same (the message is for board A).
    assert!(
        errs.iter()
            .any(|(f, l, _)| f == "journal.sig" && *l == Some(n)),
        "{}",
        out.report()
    );
    let mut args = vec!["validate".to_string(), b.b.p().to_string(), "--json".into()];
    args.extend(a.keys.trust());
    let out = pair(&args);
    out.code(5);
    assert!(
        errors(&out)
            .iter()
            .any(|(f, l, m)| f == "journal.sig" && *l == Some(n) && m.contains("alice")),
        "{}",
        out.report()
    );

    // Within board A: alice's record and bob's swapped (each keeps its words).
    let recs = journal_lines(a_text.as_bytes());
    let (ia, ib) = (recs.len() - 2, recs.len() - 1);
    let swapped = a_text
        .replace(&recs[ia], "\u{0}")
        .replace(&recs[ib], &recs[ia])
        .replace('\u{0}', &recs[ib]);
    let swapped = reseal_signed(&swapped);
    fs::write(&a.b.path, &swapped).unwrap();
    let out = a.validate();
    out.code(5);
    let bad: Vec<u64> = errors(&out)
        .iter()
        .filter(|(f, _, _)| f == "journal.sig")
        .filter_map(|(_, l, _)| *l)
        .collect();
    assert!(
        bad.contains(&record_line(&swapped, " by=alice cmd=register ")),
        "{}",
        out.report()
    );
}

/// The shell lines of docs/signing.md that check a record without pair.
fn docs_check() -> String {
    let doc = fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/signing.md"),
    )
    .unwrap();
    let after = doc
        .split("## Checking a record without pair")
        .nth(1)
        .unwrap();
    let block = after.split("```sh\n").nth(1).unwrap();
    block.split("```").next().unwrap().to_string()
}

#[test]
fn the_docs_line_checks_a_record_with_ssh_keygen_alone() {
    let s = Signed::new();
    s.steps(&[
        "alice register",
        "bob register",
        "DOER advance PLANNING --user-approved",
    ]);
    let script = format!("set -e\n{}", docs_check());
    assert!(script.contains("ssh-keygen -Y verify"), "{script}");
    let dir = tempfile::tempdir().unwrap();
    let run = |board: &[u8]| {
        fs::write(dir.path().join("board.md"), board).unwrap();
        fs::copy(s.keys.allowed(), dir.path().join("allowed_signers")).unwrap();
        std::process::Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(dir.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .output()
            .unwrap()
    };
    let board = s.b.read();
    let out = run(&board);
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("Good \"pair-record@pair\" signature for doer")
    );
    // One byte of the record changed: the check fails.
    let text = String::from_utf8(board).unwrap();
    let last = journal_lines(text.as_bytes()).last().unwrap().clone();
    let changed = last.replacen(" uid=", " uid=9", 1);
    let out = run(text.replace(&last, &changed).as_bytes());
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // One byte of the board's content changed: the content check fails.
    let out = run(text
        .replacen("Make uploads retry", "Make uploads retrx", 1)
        .as_bytes());
    assert!(!out.status.success());
}

#[test]
fn a_board_turned_signed_by_migrate_signs_from_then_on() {
    let keys = Signers::new(&["doer", "alice"]);
    let b = init_board(&["--goal", "g", "--reviewers", "alice"]);
    pair(["register", b.p(), "--agent", "alice"]).code(0);
    let unsigned = b.read();
    assert!(unsigned.starts_with(b"---\nformat: 2\n"));
    // Without a key the upgrade is refused, the board untouched.
    let mut args: Vec<String> = ["migrate", b.p(), "--signed", "--agent", "doer"]
        .map(String::from)
        .to_vec();
    let mut no_key = args.clone();
    no_key.extend(keys.trust());
    pair(&no_key).code(6);
    b.assert_untouched(&unsigned);
    args.extend(keys.flags("doer"));
    pair(&args).code(0).mentions(&["to format 3"]);
    assert!(b.read_string().starts_with("---\nformat: 3\n"));
    let mut note: Vec<String> = ["note", b.p(), "--agent", "alice", "--section", "Evidence"]
        .map(String::from)
        .to_vec();
    note.extend(["--note".into(), "Signed.".into()]);
    note.extend(keys.flags("alice"));
    pair(&note).code(0);
    let out = validate_with(&b, &keys);
    out.code(0);
    assert_eq!(out.json()["files"][0]["signatures"]["verified"], 2);
    // The records before the upgrade stay as they were, unsigned.
    let before = journal_lines(&unsigned);
    let after = journal_lines(&b.read());
    assert_eq!(after[..before.len()], before[..]);
}

#[test]
fn the_key_and_trust_root_come_from_git_s_configuration() {
    let keys = Signers::new(&["doer"]);
    let config = keys.dir().join("gitconfig");
    fs::write(
        &config,
        format!(
            "[gpg]\n\tformat = ssh\n[gpg \"ssh\"]\n\tallowedSignersFile = {}\n[user]\n\tsigningkey = {}\n",
            keys.allowed().display(),
            keys.key("doer").display()
        ),
    )
    .unwrap();
    let env = [
        ("GIT_CONFIG_GLOBAL", config.to_str().unwrap()),
        ("GIT_CONFIG_NOSYSTEM", "1"),
    ];
    let b = Board::absent();
    pair_env(
        [
            "init",
            b.p(),
            "--goal",
            "g",
            "--reviewers",
            "alice",
            "--signed",
        ],
        &env,
    )
    .code(0);
    let out = pair_env(["validate", b.p(), "--json"], &env);
    out.code(0);
    let sig = &out.json()["files"][0]["signatures"];
    assert_eq!(sig["source"], "gpg.ssh.allowedSignersFile");
    assert_eq!(sig["verified"], 1);
}

#[test]
fn a_verdict_forged_and_pushed_with_plain_git_is_named_and_refused() {
    use crate::gitstore::{Machine, Remote};
    const REF: &str = "refs/pair/signed";
    let keys = Signers::new(&["doer", "alice", "bob"]);
    let remote = Remote::new();
    let m = Machine::new(&remote);
    let board = remote.board(REF);
    let run = |key: &str, args: &[&str]| -> Out {
        let mut v: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        v.extend(keys.flags(key));
        let refs: Vec<&str> = v.iter().map(String::as_str).collect();
        m.pair(&refs)
    };
    run(
        "doer",
        &[
            "init",
            &board,
            "--goal",
            "g",
            "--reviewers",
            "alice,bob",
            "--signed",
        ],
    )
    .code(0);
    run("alice", &["register", &board, "--agent", "alice"]).code(0);
    run("bob", &["register", &board, "--agent", "bob"]).code(0);
    run(
        "doer",
        &[
            "advance",
            &board,
            "--agent",
            "doer",
            "PLANNING",
            "--user-approved",
        ],
    )
    .code(0);
    run(
        "doer",
        &[
            "submit",
            &board,
            "--agent",
            "doer",
            "plan",
            "--note",
            "p",
            "--user-approved",
        ],
    )
    .code(0);

    // The doer forges alice's verdict on a copy of the board (its own pair, with a trust root
    // of its own that calls its key alice's) and pushes it as a hand-made commit.
    let spec = format!("{REF}:task.md");
    let genuine = git(&remote.bare(), &["cat-file", "blob", &spec]);
    let copy = Board::new(&genuine);
    let fake = Signers::new(&["doer", "bob"]);
    fake.add("doer-as-alice", "alice");
    for who in ["doer", "alice", "bob"] {
        let public = fs::read_to_string(format!("{}.pub", keys.key(who).display())).unwrap();
        fake.vouch_line(&format!("{who} {}", public.trim()));
    }
    let mut forge: Vec<String> = ["verdict", copy.p(), "--agent", "alice", "APPROVED"]
        .map(String::from)
        .to_vec();
    forge.extend(["--revision", "1", "--note", "Forged."].map(String::from));
    forge.extend(fake.flags("doer-as-alice"));
    pair(&forge).code(0);
    let work = tempfile::tempdir().unwrap();
    let url = format!("file://{}", remote.bare().display());
    git(work.path(), &["init", "-q", "."]);
    git(work.path(), &["fetch", "-q", &url, REF]);
    git(work.path(), &["checkout", "-q", "FETCH_HEAD"]);
    fs::write(work.path().join("task.md"), copy.read()).unwrap();
    git(work.path(), &["commit", "-qam", "alice approves"]);
    git(work.path(), &["push", "-q", &url, &format!("HEAD:{REF}")]);
    let pushed = remote.tip(REF).unwrap();

    let mut validate: Vec<String> = vec!["validate".into(), board.clone(), "--json".into()];
    validate.extend(keys.trust());
    let refs: Vec<&str> = validate.iter().map(String::as_str).collect();
    let out = m.pair(&refs);
    out.code(5);
    let forged_line = record_line(&copy.read_string(), " by=alice cmd=verdict ");
    assert!(
        errors(&out).iter().any(|(f, l, m)| f == "journal.sig"
            && *l == Some(forged_line)
            && m.contains("by alice does not verify")),
        "{}",
        out.report()
    );
    // Bob's next write is refused, and the ref stays where the forger left it.
    run(
        "bob",
        &[
            "verdict",
            &board,
            "--agent",
            "bob",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "n",
        ],
    )
    .code(5)
    .mentions(&["by alice does not verify"]);
    assert_eq!(remote.tip(REF).unwrap(), pushed);
}

#[test]
fn no_write_makes_a_signed_board_unsigned_and_a_repair_is_signed_too() {
    let s = Signed::new();
    s.steps(&recipe("PLANNING_SUBMITTED"));
    let before = s.b.read();
    let text = String::from_utf8(before.clone()).unwrap();
    // The board as one who would drop the signatures makes it: format 2, every record's
    // `content=`/`sig=` words and the seal's board identity gone.
    let stripped: String = text
        .replacen("format: 3", "format: 2", 1)
        .lines()
        .map(|l| {
            let l = if l.starts_with("- at=") {
                l.split(' ')
                    .filter(|w| !w.starts_with("content=") && !w.starts_with("sig="))
                    .collect::<Vec<_>>()
                    .join(" ")
            } else {
                l.to_string()
            };
            match l.find(", board: \"") {
                Some(i) if l.starts_with("journal: ") => format!("{}}}", &l[..i]),
                _ => l,
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    assert!(!stripped.contains(" sig=") && stripped.contains("format: 2"));
    let trust = s.keys.trust();
    let repair = ["--repair", "--reason", "drop the signatures"];
    // A repair with no key: refused.
    let mut no_key: Vec<&str> = repair.to_vec();
    no_key.extend(trust.iter().map(String::as_str));
    s.b.write_expect(&stripped, &s.b.sha(), &no_key).code(6);
    s.b.assert_untouched(&before);
    // A repair by the doer with its own key: refused all the same, naming the format.
    let doer = s.keys.flags("doer");
    let mut with_key: Vec<&str> = repair.to_vec();
    with_key.extend(["--agent", "doer"]);
    with_key.extend(doer.iter().map(String::as_str));
    s.b.write_expect(&stripped, &s.b.sha(), &with_key)
        .code(6)
        .mentions(&["signed (format 3)", "format 2", "nothing was written"]);
    s.b.assert_untouched(&before);
    // A repair that keeps the format is a signed record of its writer.
    let kept = format!("{text}\nRepaired by hand.\n");
    s.b.write_expect(&kept, &s.b.sha(), &with_key).code(0);
    let last =
        s.b.read_string()
            .lines()
            .rfind(|l| l.starts_with("- at="))
            .unwrap()
            .to_string();
    assert!(
        last.contains("cmd=repair") && last.contains("by=doer") && last.contains(" sig="),
        "{last}"
    );
    s.validate().code(0);
}

#[test]
fn a_trust_root_that_cannot_be_read_is_the_verifiers_to_fix_not_a_forgery() {
    let s = Signed::new();
    s.steps(&recipe("PLANNING_SUBMITTED"));
    let before = s.b.read();
    let missing = s.keys.dir().join("no-such-file");
    let key = s.keys.key("alice");
    for (root, why) in [
        (missing.clone(), "no such file"),
        (s.keys.dir().to_path_buf(), "not a file"),
        (key.clone(), "private key"),
    ] {
        let root = root.display().to_string();
        // validate names the trust root and why, checks no record, and suggests no repair.
        let out = pair(["validate", s.b.p(), "--allowed-signers", &root]);
        out.code(5).mentions(&["cannot read the trust root", why]);
        assert!(!out.stdout.contains("repair:"), "{}", out.report());
        assert!(!out.stdout.contains("does not verify"), "{}", out.report());
        assert!(!out.report().contains("PRIVATE KEY"), "{}", out.report());
        let v = pair(["validate", s.b.p(), "--allowed-signers", &root, "--json"]);
        let errors = v.json()["files"][0]["errors"].clone();
        assert_eq!(errors.as_array().unwrap().len(), 1, "{errors:#}");
        assert_eq!(errors[0]["field"], "trust_root", "{errors:#}");
        // A write with it is refused, nothing written (exit 6, as without a trust root).
        pair([
            "note",
            s.b.p(),
            "--agent",
            "alice",
            "--section",
            "Evidence",
            "--note",
            "n",
            "--signing-key",
            &key.display().to_string(),
            "--allowed-signers",
            &root,
        ])
        .code(6)
        .mentions(&["cannot read the trust root", why, "nothing was written"]);
        s.b.assert_untouched(&before);
    }
}
