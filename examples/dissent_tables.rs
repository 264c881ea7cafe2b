//! Print the dissent stage's tables as docs/protocol.md shows them.
fn main() {
    print!("{}", pair::law::dissent::markdown_tables());
}
