//! Answers that never contradict themselves: for random interleavings of writers and a reader
//! following the journal with `poll --after N --wait`, on a file board and on a git board,
//! every answer's records end exactly at the version whose phase, turn and next step it reports.

use proptest::prelude::*;
use serde_json::Value;

use crate::common::*;
use crate::gitstore::{Machine, REF, Remote};

/// One write of the writers' sequence.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// A note by the doer or by alice (a record that wakes the reader).
    Note(bool),
    /// alice blocks the board, or the doer unblocks it (whichever applies).
    Toggle,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => any::<bool>().prop_map(Step::Note),
        2 => Just(Step::Toggle),
    ]
}

/// Runs `pair ARGS` where the board lives (a plain process, or one of a git remote's clones).
type Run<'a> = &'a (dyn Fn(&[&str]) -> Out + Sync);

/// The writers apply `steps` while the reader (bob, whose turn never comes) follows the journal
/// from position 0 with `poll --after N --wait`, until it has read every record. Returns the
/// reader's answers.
fn interleave(board: &str, write: Run<'_>, read: Run<'_>, steps: &[Step]) -> Vec<Value> {
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let mut blocked = false;
            for (i, s) in steps.iter().enumerate() {
                let text = format!("step {i}");
                let out = match s {
                    Step::Note(by_doer) => write(&[
                        "note",
                        board,
                        "--agent",
                        if *by_doer { "doer" } else { "alice" },
                        "--section",
                        "Evidence",
                        "--note",
                        &text,
                    ]),
                    Step::Toggle if blocked => {
                        write(&["unblock", board, "--agent", "doer", "--reason", &text])
                    }
                    Step::Toggle => write(&["block", board, "--agent", "alice", "--reason", &text]),
                };
                out.code(0);
                if matches!(s, Step::Toggle) {
                    blocked = !blocked;
                }
            }
            done.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        let mut answers = Vec::new();
        let mut position = 0u64;
        loop {
            let finished = done.load(std::sync::atomic::Ordering::SeqCst);
            let after = position.to_string();
            let out = read(&[
                "poll",
                board,
                "--agent",
                "bob",
                "--after",
                &after,
                "--wait",
                "--timeout",
                "2",
                "--json",
            ]);
            out.code_in(&[10, 12]);
            let v = out.json();
            position = v["position"].as_u64().expect("a position");
            answers.push(v);
            // Once the writers are done, one more answer read after their last write ends it.
            if finished {
                break;
            }
        }
        writer.join().unwrap();
        answers
    })
}

/// Every answer is one version: its records end at the position it reports, which is the
/// journal's length at that version; the phase it reports is the one its last record moved to
/// (the board's final journal tells it for answers without new records); its turn and exit
/// code follow that phase.
fn check(answers: &[Value], journal: &[Value]) -> Result<(), TestCaseError> {
    for v in answers {
        let position = v["position"].as_u64().unwrap();
        let records = v["records"].as_array().unwrap();
        prop_assert_eq!(
            v["version"]["records"].as_u64(),
            Some(position),
            "the seal and the position are one version: {}",
            v
        );
        if let Some(last) = records.last() {
            prop_assert_eq!(last["seq"].as_u64(), Some(position), "{}", v);
            prop_assert_eq!(
                &last["to"],
                &v["phase"],
                "the last record is the phase: {}",
                v
            );
        }
        let at = &journal[position as usize - 1];
        prop_assert_eq!(
            &at["to"],
            &v["phase"],
            "the phase of the version read: {}",
            v
        );
        let blocked = v["phase"] == "BLOCKED";
        prop_assert_eq!(v["your_turn"].as_bool(), Some(false), "{}", v);
        if blocked {
            prop_assert_eq!(v["next"]["actor"].as_str(), Some("none"), "{}", v);
        } else {
            prop_assert_eq!(
                &v["next"]["handoff_to"],
                &serde_json::json!(["doer"]),
                "{}",
                v
            );
        }
    }
    // The reader saw every record exactly once, in order.
    let seen: Vec<u64> = answers
        .iter()
        .flat_map(|v| v["records"].as_array().unwrap().iter())
        .map(|r| r["seq"].as_u64().unwrap())
        .collect();
    let all: Vec<u64> = (1..=journal.len() as u64).collect();
    prop_assert_eq!(seen, all);
    Ok(())
}

/// The whole journal as the board holds it at the end.
fn journal(read: Run<'_>, board: &str) -> Vec<Value> {
    let out = read(&["poll", board, "--agent", "bob", "--after", "0", "--json"]);
    out.code_in(&[10, 12]);
    out.json()["records"].as_array().unwrap().clone()
}

const INIT: &[&str] = &["--doer", "doer", "--reviewers", "alice,bob"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn every_poll_answer_on_a_file_board_is_one_version(
        steps in proptest::collection::vec(step(), 4..12)
    ) {
        let b = Board::absent();
        let mut init = vec!["init", b.p()];
        init.extend_from_slice(INIT);
        pair(&init).code(0);
        for r in ["alice", "bob"] {
            pair(["register", b.p(), "--agent", r]).code(0);
        }
        pair(["advance", b.p(), "--agent", "doer", "PLANNING", "--user-approved"]).code(0);
        let run = |args: &[&str]| pair(args);
        let answers = interleave(b.p(), &run, &run, &steps);
        check(&answers, &journal(&run, b.p()))?;
    }

    #[test]
    fn every_poll_answer_on_a_git_board_is_one_version(
        steps in proptest::collection::vec(step(), 4..10)
    ) {
        let remote = Remote::new();
        let writers = Machine::new(&remote);
        let reader = Machine::new(&remote);
        let b = remote.board(REF);
        let mut init = vec!["init", b.as_str()];
        init.extend_from_slice(INIT);
        writers.pair(&init).code(0);
        for r in ["alice", "bob"] {
            writers.pair(&["register", &b, "--agent", r]).code(0);
        }
        writers
            .pair(&["advance", &b, "--agent", "doer", "PLANNING", "--user-approved"])
            .code(0);
        let write = |args: &[&str]| writers.pair(args);
        let read = |args: &[&str]| {
            let mut a = args.to_vec();
            if a[0] == "poll" && a.contains(&"--wait") {
                a.extend_from_slice(&["--interval", "0.2"]);
            }
            reader.pair(&a)
        };
        let answers = interleave(&b, &write, &read, &steps);
        check(&answers, &journal(&read, &b))?;
    }
}
