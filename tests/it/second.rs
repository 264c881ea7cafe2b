//! One finding, one objection: a reviewer seconds another reviewer's open objection instead of
//! raising a duplicate (`pair second`), requests changes naming it, and the doer resolves it
//! once; `object` says when an open objection of another reviewer is already at the same place;
//! the rules refuse every other second, the file untouched.

use crate::common::*;
use crate::ledger::{code_review, ledger, object, phase, state, verdict};
use crate::proto::*;
use serde_json::Value;

/// The reviewers who second `id`, as `pair objections --json` lists them.
fn seconded_by(p: &Proto, id: &str) -> Vec<String> {
    let l = ledger(p);
    let o = l["objections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {l}"))
        .clone();
    strs(&o["seconded_by"])
}

/// The objection as `pair show BOARD --id ID --json` prints it.
fn show(p: &Proto, id: &str) -> Value {
    pair(["show", p.p(), "--id", id, "--json"]).code(0).json()
}

#[test]
fn two_reviewers_with_one_finding_end_with_one_objection_the_doer_resolves_once() {
    let p = code_review(&["--max-rounds", "3"]);
    assert_eq!(
        object(&p, "alice", "blocking", "lib.txt:2", "Two is wrong", &[]),
        "BLK-1"
    );
    // bob finds the same thing a line away: the raise warns, naming BLK-1 and how to second it.
    let out = p.ok(
        "bob",
        &[
            "object",
            "--severity",
            "blocking",
            "--anchor",
            "lib.txt:1",
            "--title",
            "The second line is wrong",
            "--evidence",
            "It says two.",
            "--fix",
            "Say three.",
            "--json",
        ],
    );
    let json = out.json();
    assert_eq!(json["id"], "BLK-2");
    let warnings = strs(&json["warnings"]);
    let warning = warnings
        .iter()
        .find(|w| w.contains("BLK-1"))
        .unwrap_or_else(|| panic!("no warning names BLK-1: {warnings:?}"));
    for needle in [
        "pair second",
        "BLK-1 --agent bob",
        "pair withdraw",
        "BLK-2",
        "alice",
    ] {
        assert!(warning.contains(needle), "{needle:?} not in {warning}");
    }
    assert!(out.stderr.contains("pair second"), "{}", out.report());
    // What the warning says to do, done.
    let out = p.ok("bob", &["second", "BLK-1", "--json"]);
    assert_eq!(out.json()["summary"], "BLK-1: seconded by bob");
    p.ok("bob", &["withdraw", "BLK-2", "--reason", "Seconded BLK-1"]);
    assert_eq!(seconded_by(&p, "BLK-1"), ["bob"]);
    assert_eq!(state(&p, "BLK-2"), "withdrawn");
    pair(["objections", p.p()])
        .code(0)
        .mentions(&["Two is wrong (seconded by bob)"]);
    assert_eq!(strs(&show(&p, "BLK-1")["seconded_by"]), ["bob"]);
    pair(["show", p.p(), "--id", "BLK-1"])
        .code(0)
        .mentions(&["raised by alice (seconded by bob)", "Seconded BLK-1"]);
    p.assert_valid();

    // bob holds BLK-1: its poll names it for the verdict, APPROVED is refused while it is open,
    // and CHANGES_REQUESTED names it.
    let (_, poll) = p.poll("bob");
    let action = poll["next"]["action"].as_str().unwrap();
    assert!(action.contains("BLK-1"), "{action}");
    assert!(
        strs(&poll["next"]["command"]).contains(&"BLK-1".to_string()),
        "{poll}"
    );
    let before = p.b.read();
    verdict(&p, "bob", "APPROVED", &[])
        .code(6)
        .mentions(&["BLK-1", "pair second … --withdraw"]);
    p.b.assert_untouched(&before);
    verdict(&p, "bob", "CHANGES_REQUESTED", &["--objections", "BLK-1"]).code(0);
    verdict(&p, "alice", "CHANGES_REQUESTED", &["--objections", "BLK-1"]).code(0);
    assert_eq!(phase(&p), "CODE_CHANGES_REQUESTED");

    // The doer has one objection to resolve, and resolves it once.
    let (_, poll) = p.poll("doer");
    let action = poll["next"]["action"].as_str().unwrap();
    assert!(
        action.contains("Open blocking objections on the code: BLK-1."),
        "{action}"
    );
    p.ok(
        "doer",
        &["resolve", "BLK-1", "--resolution", "Line two says three."],
    );
    p.ok("doer", &["submit", "followup", "--note", "Three, not two."]);
    assert_eq!(phase(&p), "FOLLOWUP_REVIEW");
    // The raiser still accepts it; both approve.
    p.ok("alice", &["accept", "BLK-1"]);
    verdict(&p, "bob", "APPROVED", &[]).code(0);
    verdict(&p, "alice", "APPROVED", &[]).code(0);
    assert_eq!(phase(&p), "READY_TO_COMMIT");
    assert_eq!(state(&p, "BLK-1"), "accepted");
    assert_eq!(seconded_by(&p, "BLK-1"), ["bob"]);
    let resolutions = p.text().matches("### Resolution BLK-").count();
    assert_eq!(resolutions, 1, "{}", p.text());

    // stats names the seconder and counts the seconded objection.
    let stats = pair(["stats", p.p(), "--json"]).code(0).json();
    let list = &stats["boards"][0]["objections"]["list"];
    let blk1 = list
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "BLK-1")
        .unwrap_or_else(|| panic!("{stats}"));
    assert_eq!(strs(&blk1["seconded_by"]), ["bob"]);
    assert_eq!(stats["boards"][0]["objections"]["total"]["seconded"], 1);
    pair(["stats", p.p()])
        .code(0)
        .mentions(&["seconded by bob"]);
    p.assert_valid();
}

#[test]
fn a_second_is_refused_to_the_raiser_the_doer_a_reviewer_who_seconds_already_and_a_settled_objection()
 {
    let p = code_review(&["--max-rounds", "3"]);
    p.ok("carol", &["register"]);
    object(&p, "alice", "blocking", "lib.txt:2", "Two is wrong", &[]);
    object(&p, "alice", "advisory", "## Goal", "Goal is vague", &[]);
    p.refused("alice", &["second", "BLK-1"], 6)
        .mentions(&["alice's own objection"]);
    p.refused("doer", &["second", "BLK-1"], 6)
        .mentions(&["doer"]);
    p.refused("carol", &["second", "BLK-1"], 6)
        .mentions(&["not a required reviewer"]);
    p.refused("bob", &["second", "BLK-9"], 4)
        .mentions(&["no objection \"BLK-9\"", "BLK-1"]);
    p.refused("bob", &["second", "BLK-1", "--withdraw"], 6)
        .mentions(&["bob does not second BLK-1"]);
    p.ok("bob", &["second", "BLK-1"]);
    p.refused("bob", &["second", "BLK-1"], 6)
        .mentions(&["already seconds BLK-1"]);
    // A seconder does not judge the resolution: the raiser does.
    verdict(&p, "bob", "CHANGES_REQUESTED", &["--objections", "BLK-1"]).code(0);
    verdict(&p, "alice", "CHANGES_REQUESTED", &["--objections", "BLK-1"]).code(0);
    p.ok("doer", &["resolve", "BLK-1", "--resolution", "Three."]);
    p.ok("doer", &["submit", "followup", "--note", "Three."]);
    p.refused("bob", &["accept", "BLK-1"], 6)
        .mentions(&["raised it (alice)"]);
    // Only an open objection is seconded; only an unsettled one's second is withdrawn.
    p.ok("alice", &["accept", "BLK-1"]);
    p.refused("bob", &["second", "BLK-1", "--withdraw"], 6)
        .mentions(&["settled"]);
    p.ok("alice", &["withdraw", "ADV-1", "--reason", "Vague is fine"]);
    p.refused("bob", &["second", "ADV-1"], 6)
        .mentions(&["`withdrawn`", "only an open objection"]);
    p.assert_valid();
}

#[test]
fn a_withdrawn_second_no_longer_names_the_objection_and_a_raisers_withdrawal_ends_it_for_all() {
    let p = code_review(&["--max-rounds", "3"]);
    object(&p, "alice", "blocking", "lib.txt:2", "Two is wrong", &[]);
    p.ok("bob", &["second", "BLK-1"]);
    p.ok("bob", &["second", "BLK-1", "--withdraw"]);
    assert!(seconded_by(&p, "BLK-1").is_empty());
    assert!(!p.frontmatter().contains("seconds:"), "{}", p.text());
    // Without its second, bob's verdict may not name BLK-1 (it is alice's), and may approve.
    let before = p.b.read();
    verdict(&p, "bob", "CHANGES_REQUESTED", &["--objections", "BLK-1"])
        .code(4)
        .mentions(&["BLK-1", "raised or seconds"]);
    p.b.assert_untouched(&before);
    p.ok("bob", &["second", "BLK-1"]);
    // The raiser withdraws it: withdrawn for the seconder too, who is told to raise its own.
    p.ok(
        "alice",
        &["withdraw", "BLK-1", "--reason", "Not a bug after all"],
    );
    assert_eq!(state(&p, "BLK-1"), "withdrawn");
    assert!(
        p.text()
            .contains("Seconded by bob: the objection is withdrawn for them too"),
        "{}",
        p.text()
    );
    verdict(&p, "bob", "APPROVED", &[]).code(0);
    p.assert_valid();
}

#[test]
fn a_raw_write_is_held_to_the_seconds_rules_and_validate_names_a_broken_second() {
    let p = code_review(&["--max-rounds", "3"]);
    object(&p, "alice", "blocking", "lib.txt:2", "Two is wrong", &[]);
    let with = |line: &str| {
        p.text().replacen(
            "agents:\n",
            &format!("seconds:\n  - \"{line}\"\nagents:\n"),
            1,
        )
    };
    // bob may not record a second under alice's name, nor alice one of her own objection.
    for (writer, line, codes, says) in [
        ("bob", "BLK-1 carol", &[6][..], "under its own id"),
        ("alice", "BLK-1 alice", &[5, 6][..], "own"),
    ] {
        let content = with(line);
        let before = p.b.read();
        p.b.write_expect(content.as_bytes(), &p.b.sha(), &["--as", writer])
            .code_in(codes)
            .mentions(&["BLK-1", says]);
        p.b.assert_untouched(&before);
    }
    // bob's own second, written raw, is what `pair second` writes.
    p.b.write_expect(with("BLK-1 bob").as_bytes(), &p.b.sha(), &["--as", "bob"])
        .code(0);
    assert_eq!(seconded_by(&p, "BLK-1"), ["bob"]);
    p.assert_valid();
    // A second of an objection the board does not have is an invalid board, naming the field.
    let broken = p.text().replace("\"BLK-1 bob\"", "\"BLK-7 bob\"");
    let b = Board::new(&broken);
    pair(["validate", b.p()])
        .code(5)
        .mentions(&["seconds.1", "BLK-7", "not an objection"]);
    let twice = p.text().replace(
        "  - \"BLK-1 bob\"\n",
        "  - \"BLK-1 bob\"\n  - \"BLK-1 bob\"\n",
    );
    let b = Board::new(&twice);
    pair(["validate", b.p()])
        .code(5)
        .mentions(&["seconds", "twice"]);
}

#[test]
fn a_second_after_approving_replaces_the_approval_and_object_warns_only_at_the_same_place() {
    let p = code_review(&["--max-rounds", "3"]);
    object(&p, "alice", "blocking", "lib.txt:2", "Two is wrong", &[]);
    // Another place (a heading, not a line of lib.txt): no warning.
    let out = p.ok(
        "bob",
        &[
            "object",
            "--severity",
            "advisory",
            "--anchor",
            "## Goal",
            "--title",
            "Goal is vague",
            "--evidence",
            "e",
            "--fix",
            "f",
            "--json",
        ],
    );
    assert!(strs(&out.json()["warnings"]).is_empty(), "{}", out.report());
    // bob approved, then finds alice's BLK-1 holds: his second replaces the approval.
    verdict(&p, "bob", "APPROVED", &[]).code(0);
    p.ok("bob", &["second", "BLK-1"]);
    let (_, poll) = p.poll("doer");
    let reviewers = &poll["review"]["reviewers"];
    assert_eq!(strs(&reviewers["changes_requested"]), ["bob"], "{poll}");
    assert!(strs(&reviewers["approved"]).is_empty(), "{poll}");
    assert!(
        p.text()
            .contains("bob's APPROVED on code 1 is replaced by CHANGES_REQUESTED naming BLK-1."),
        "{}",
        p.text()
    );
    p.assert_valid();
}
