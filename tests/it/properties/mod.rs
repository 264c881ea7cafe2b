//! Property tests: random sequences of commands from random agents on one board.

mod consistent;
mod ledger;
mod protocol;
mod settle;
