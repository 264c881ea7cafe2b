//! `pair verdict` and `claim`: how verdicts count, comments, replacing a verdict while the round is
//! open, and verdicts refused as stale or from someone who may not give one.

use crate::common::env::{Env, write_as};
use crate::common::flow::plan_approved;
use crate::common::phases::board_in;
use crate::common::*;
use crate::proto::*;

#[test]
fn a_comment_only_round_moves_to_changes_requested() {
    let p = Proto::init(&["--reviewers", "alice,bob"]);
    p.steps(&[
        "alice register",
        "bob register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
    ]);
    p.ok(
        "alice",
        &["verdict", "COMMENT", "--revision", "1", "--note", "nit"],
    );
    let v = p.poll_expect("bob", 0);
    assert_eq!(v["review"]["complete"], false, "{v:#}");
    assert_eq!(
        strs(&v["review"]["reviewers"]["comment"]),
        sv(&["alice"]),
        "{v:#}"
    );
    p.ok_entry(
        "bob",
        &[
            "verdict",
            "COMMENT",
            "--revision",
            "1",
            "--note",
            "another nit",
        ],
        "Plan Reviews",
        Some(1),
        Some("COMMENT"),
    );
    p.assert_phase("PLAN_CHANGES_REQUESTED");
    let v = p.poll_expect("doer", 0);
    if !v["review"].is_null() {
        assert_eq!(v["review"]["comment_only"], true, "{v:#}");
        assert_eq!(v["review"]["approved"], false, "{v:#}");
    }
    let s = p.status();
    assert_eq!(
        s["agents"]["alice"]["reviews"]["plan"]["verdict"], "COMMENT",
        "{s:#}"
    );
    assert_eq!(
        s["agents"]["bob"]["reviews"]["plan"]["verdict"], "COMMENT",
        "{s:#}"
    );
}

#[test]
fn a_comment_never_approves_even_beside_approvals() {
    let p = Proto::init(&["--reviewers", "alice,bob"]);
    p.steps(&[
        "alice register",
        "bob register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
        "alice verdict APPROVED --revision 1 --note ok",
    ]);
    // bob's COMMENT completes the round: not approved
    p.ok(
        "bob",
        &["verdict", "COMMENT", "--revision", "1", "--note", "fyi"],
    );
    p.assert_phase("PLAN_CHANGES_REQUESTED");
    // single-reviewer code round with a COMMENT
    let q = plan_approved(&["alice"], &[]);
    q.ok(
        "doer",
        &["advance", "CODING", "--worktree", "{wt}", "--user-approved"],
    );
    q.ok("doer", &["submit", "code", "--note", "c"]);
    q.ok(
        "alice",
        &["verdict", "COMMENT", "--revision", "1", "--note", "hmm"],
    );
    q.assert_phase("CODE_CHANGES_REQUESTED");
}

#[test]
fn a_reviewer_may_replace_its_verdict_while_the_round_is_open() {
    let p = Proto::init(&["--reviewers", "alice,bob"]);
    p.steps(&[
        "alice register",
        "bob register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
    ]);
    p.ok(
        "alice",
        &[
            "verdict",
            "CHANGES_REQUESTED",
            "--revision",
            "1",
            "--note",
            "wait",
        ],
    );
    p.ok(
        "alice",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "fine after all",
        ],
    );
    p.ok(
        "bob",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.assert_phase("PLAN_APPROVED");
}

#[test]
fn a_verdict_for_an_old_revision_is_refused_and_not_counted() {
    let p = Proto::init(&["--reviewers", "alice,bob"]);
    p.steps(&[
        "alice register",
        "bob register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p1 --user-approved",
        "alice verdict CHANGES_REQUESTED --revision 1 --note no",
        "bob verdict CHANGES_REQUESTED --revision 1 --note no",
        "DOER submit plan --note p2 --user-approved",
    ]);
    p.assert_state("PLANNING_SUBMITTED", [0, 2, 0, 0]);
    p.refused(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "stale"],
        3,
    );
    let s = p.status();
    assert_eq!(
        s["agents"]["alice"]["reviews"]["plan"]["reviewed"], 1,
        "{s:#}"
    );
    assert_eq!(
        s["agents"]["alice"]["reviews"]["plan"]["verdict"], "CHANGES_REQUESTED",
        "{s:#}"
    );
    p.ok(
        "bob",
        &["verdict", "APPROVED", "--revision", "2", "--note", "ok"],
    );
    // alice's refused verdict did not count: the round is still open
    p.assert_phase("PLANNING_SUBMITTED");
    let v = p.poll_expect("alice", 0);
    assert_eq!(strs(&v["review"]["pending"]), sv(&["alice"]), "{v:#}");
    assert_eq!(strs(&v["review"]["stale"]), sv(&["alice"]), "{v:#}");
    assert_eq!(v["review"]["complete"], false, "{v:#}");
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "2", "--note", "ok"],
    );
    p.assert_phase("PLAN_APPROVED");
}

#[test]
fn a_string_counter_is_rejected_as_invalid_not_treated_as_stale() {
    let p = Proto::init(&["--reviewers", "alice"]);
    p.steps(&[
        "alice register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
    ]);
    let text = p.text();
    assert!(text.contains("plan_revision: 1"), "{text}");
    let bad = set_top(&text, "plan_revision", "'1'");
    let before = p.b.read();
    // raw write (plain, as the doer, and as a repair): invalid → 5, file unchanged
    let h = p.b.sha();
    p.b.write_expect(&bad, &h, &[])
        .code(5)
        .mentions(&["plan_revision"]);
    p.b.assert_untouched(&before);
    p.b.write_expect(&bad, &h, &["--as", "doer"]).code(5);
    p.b.assert_untouched(&before);
    p.b.write_expect(&bad, &h, &["--repair", "--reason", "x"])
        .code(5);
    p.b.assert_untouched(&before);
    // a file edited by hand that way is reported invalid, and commands refuse it with 5
    std::fs::write(&p.b.path, &bad).unwrap();
    pair(["validate", p.p()])
        .code(5)
        .mentions(&["plan_revision"]);
    let bad_bytes = p.b.read();
    let out = p.run(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    out.code(5);
    p.b.assert_untouched(&bad_bytes);
}

#[test]
fn concurrent_verdicts_from_two_reviewers_are_both_counted() {
    for _ in 0..4 {
        let p = Proto::init(&["--reviewers", "alice,bob"]);
        p.steps(&[
            "alice register",
            "bob register",
            "DOER advance PLANNING --user-approved",
            "DOER submit plan --note p --user-approved",
        ]);
        let board = p.p().to_string();
        let hs: Vec<_> = ["alice", "bob"]
            .into_iter()
            .map(|who| {
                let board = board.clone();
                std::thread::spawn(move || {
                    pair([
                        "verdict",
                        &board,
                        "--agent",
                        who,
                        "APPROVED",
                        "--revision",
                        "1",
                        "--note",
                        who,
                    ])
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap().code(0);
        }
        p.assert_valid();
        p.assert_phase("PLAN_APPROVED");
        let s = p.status();
        assert_eq!(
            s["agents"]["alice"]["reviews"]["plan"]["verdict"], "APPROVED",
            "{s:#}"
        );
        assert_eq!(
            s["agents"]["bob"]["reviews"]["plan"]["verdict"], "APPROVED",
            "{s:#}"
        );
        assert_eq!(
            entry_headings(&p.text(), "Plan Reviews").len(),
            2,
            "{}",
            p.text()
        );
    }
}

#[test]
fn verdict_on_stale_revision_is_refused_with_exit_3() {
    let p = board_in("PLAN_CHANGES_REQUESTED", &["--reviewers", "alice,bob"]);
    p.ok(
        "doer",
        &["submit", "plan", "--note", "v2", "--user-approved"],
    );
    p.assert_state("PLANNING_SUBMITTED", [0, 2, 0, 0]);
    let out = p.refused(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "late"],
        3,
    );
    out.mentions_any(&["stale", "revision", "counter"]);
    let out = p.refused(
        "alice",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "late",
            "--json",
        ],
        3,
    );
    out.json_error(3);
    p.refused(
        "alice",
        &["verdict", "APPROVED", "--revision", "3", "--note", "future"],
        4,
    );
}

#[test]
fn verdict_by_a_registered_reviewer_who_is_not_required_is_refused() {
    let p = board_in("PLANNING_SUBMITTED", &["--reviewers", "alice,bob"]);
    p.refused(
        "carol",
        &["verdict", "APPROVED", "--revision", "1", "--note", "n"],
        6,
    )
    .mentions_any(&["required"]);
    p.refused(
        "mallory",
        &["verdict", "APPROVED", "--revision", "1", "--note", "n"],
        6,
    );
}

#[test]
fn verdict_by_the_doer_is_refused() {
    let p = board_in("REVIEWING_PLAN", &["--reviewers", "alice,bob"]);
    p.refused(
        "doer",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "self-review",
        ],
        6,
    );
}

#[test]
fn a_reviewer_cannot_rewrite_its_verdict_after_the_round_closed() {
    let e = Env::new();
    e.ok(0, &["init", "d.md", "--rca", "--reviewers", "alice"]);
    e.ok(0, &["register", "d.md", "--agent", "alice"]);
    e.ok(
        0,
        &[
            "advance",
            "d.md",
            "--agent",
            "doer",
            "ANALYZING",
            "--user-approved",
        ],
    );
    e.ok(
        0,
        &[
            "submit",
            "d.md",
            "--agent",
            "doer",
            "analysis",
            "--note",
            "a",
            "--user-approved",
        ],
    );
    e.ok(
        0,
        &[
            "verdict",
            "d.md",
            "--agent",
            "alice",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "ok",
        ],
    );
    e.ok(0, &["advance", "d.md", "--agent", "doer", "PLANNING"]);
    let text = e.read("d.md");
    let forged = text.replacen(
        "    analysis_verdict: APPROVED\n",
        "    analysis_verdict: CHANGES_REQUESTED\n",
        1,
    );
    assert_ne!(forged, text);
    for writer in [Some("alice"), None] {
        let r = write_as(&e, "d.md", &forged, writer, &[]);
        assert_eq!(r.code, 6, "{writer:?}: {}", r.stderr);
    }
    assert_eq!(e.read("d.md"), text);
}

#[test]
fn a_review_is_corrected_after_its_round_closed_and_the_correction_is_shown_beside_it() {
    let p = Proto::init(&["--reviewers", "alice,bob", "--yolo", "--rca"]);
    p.ok("alice", &["register"]);
    p.ok("bob", &["register"]);
    p.ok("doer", &["advance", "ANALYZING"]);
    p.ok(
        "doer",
        &["submit", "analysis", "--note", "The lock is dropped early."],
    );
    // Nothing of alice's to correct yet.
    p.refused("alice", &["correct", "--note", "x"], 4)
        .mentions(&["no review"]);
    p.ok(
        "alice",
        &[
            "verdict",
            "APPROVED",
            "--revision",
            "1",
            "--note",
            "Right: line 42 drops the lock.",
        ],
    );
    // While the round is open, the verdict is replaced instead (the round counts it).
    p.refused("alice", &["correct", "--note", "x"], 6)
        .mentions(&["still open", "pair verdict"]);
    // Bob closes the round; alice's review had a wrong claim.
    p.ok(
        "bob",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.assert_phase("ANALYSIS_APPROVED");
    let out = p.ok(
        "alice",
        &[
            "correct",
            "--note",
            "Line 42 is fine: the lock is held there. The drop is at line 57.",
            "--json",
        ],
    );
    assert_eq!(
        out.json()["summary"],
        "alice corrected its review of analysis revision 1 (APPROVED; the verdict stands)"
    );
    // The doer and the other reviewer may not correct alice's review; nor may bob name a review
    // he did not give.
    p.refused("doer", &["correct", "--note", "x"], 6);
    p.refused("bob", &["correct", "--review", "plan:1", "--note", "x"], 4)
        .mentions(&["analysis:1"]);
    // show prints it right after alice's review, attributed; the verdict stands.
    let shown = pair(["show", p.p()]);
    shown.code(0);
    let text = &shown.stdout;
    let review = text
        .find("Right: line 42 drops the lock.")
        .expect("the review");
    let correction = text
        .find("### Correction — Analysis review — revision 1 — alice — ")
        .unwrap_or_else(|| panic!("the correction:\n{text}"));
    let bobs = text.find("— bob — APPROVED").expect("bob's review");
    assert!(review < correction && correction < bobs, "{text}");
    assert!(text.contains("The drop is at line 57."), "{text}");
    let v = pair(["show", p.p(), "--json"]).json();
    assert_eq!(v["corrections"][0]["kind"], "correction", "{v:#}");
    assert_eq!(v["corrections"][0]["agent"], "alice", "{v:#}");
    assert_eq!(v["corrections"][0]["counter"], 1, "{v:#}");
    assert_eq!(
        p.status()["agents"]["alice"]["reviews"]["analysis"]["verdict"],
        "APPROVED"
    );
    // The brief a reviewer rebuilds from shows it too.
    pair(["brief", p.p(), "--for", "reviewer", "--agent", "bob"])
        .code(0)
        .mentions(&[
            "Correction — Analysis review — revision 1 — alice",
            "line 57",
        ]);
    pair(["validate", p.p()]).code(0);
}

/// `verdict UNABLE --reason`: a reviewer whose tools failed says so. It is not a judgement: no
/// round is counted, the doer is asked for nothing, the watchdog and `stats` see it, and the
/// verdict then given on the same revision completes the round.
#[test]
fn an_unable_to_review_costs_no_round_and_the_same_revision_is_then_approved() {
    // A ledger board with a round cap of 1: a counted round would end the gate.
    let p = Proto::init(&["--reviewers", "alice,bob", "--max-rounds", "1"]);
    p.steps(&[
        "alice register",
        "bob register",
        "DOER advance PLANNING --user-approved",
        "DOER submit plan --note p --user-approved",
    ]);
    let before = p.counters();
    // A reason is required, and the word takes no artifact hash.
    p.refused("alice", &["verdict", "UNABLE", "--revision", "1"], 4)
        .mentions(&["--reason"]);
    p.refused(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--reason", "x"],
        4,
    );
    p.ok(
        "alice",
        &[
            "verdict",
            "UNABLE",
            "--revision",
            "1",
            "--reason",
            "the tests could not run: disk full",
        ],
    )
    .mentions(&["UNABLE", "no round counted", "nothing to resubmit"]);
    p.assert_state("PLANNING_SUBMITTED", before);
    let s = p.status();
    assert_eq!(s["agents"]["alice"]["status"], "BLOCKED", "{s:#}");
    assert!(
        s["agents"]["alice"]["reviews"]["plan"]["verdict"].is_null(),
        "{s:#}"
    );
    let text = p.text();
    let review = sect(&text, "Plan Reviews").unwrap();
    assert!(
        review.contains("### Unable to review — plan revision 1 — alice — "),
        "{review}"
    );
    assert!(
        review.contains("Reason: the tests could not run: disk full"),
        "{review}"
    );
    // The doer has nothing to do; it is still alice's turn, on the same revision.
    let v = p.poll_expect("doer", 10);
    assert_eq!(
        strs(&v["next"]["handoff_to"]),
        sv(&["alice", "bob"]),
        "{v:#}"
    );
    // The watchdog says it at once.
    let w = pair(["watch", p.p(), "--once", "--json"]);
    let events: Vec<serde_json::Value> = w
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|e: &serde_json::Value| e["event"] == "unable")
        .collect();
    assert_eq!(events.len(), 1, "{}", w.all());
    assert_eq!(events[0]["agent"], "alice", "{}", w.all());
    // bob's approval does not complete the round: alice's verdict is still pending.
    p.ok(
        "bob",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    )
    .mentions(&["still waiting for alice"]);
    // alice, once the cause is fixed, approves the same revision: the gate passes in round 1.
    p.ok(
        "alice",
        &["verdict", "APPROVED", "--revision", "1", "--note", "ok"],
    );
    p.assert_state("PLAN_APPROVED", before);
    let w = pair(["watch", p.p(), "--once", "--json"]);
    assert!(!w.stdout.contains("\"unable\""), "{}", w.all());
    // stats: the round shows who could not review; alice's count.
    let j = pair(["stats", p.p(), "--json"]).json();
    let b = &j["boards"][0];
    let rounds = b["gates"]["plan"]["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 1, "{b:#}");
    assert_eq!(rounds[0]["outcome"], "PLAN_APPROVED", "{b:#}");
    assert_eq!(strs(&rounds[0]["unable"]), sv(&["alice"]), "{b:#}");
    assert_eq!(b["agents"]["alice"]["unable"], 1, "{b:#}");
    assert_eq!(b["agents"]["bob"]["unable"], 0, "{b:#}");
}
