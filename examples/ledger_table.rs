fn main() {
    print!("{}", pair::ledger::markdown_table());
}
