fn main() {
    print!("{}", pair::board::ledger::markdown_table());
}
