//! Property tests: random sequences of commands from random agents on one board.

mod ledger;
mod protocol;
mod settle;
