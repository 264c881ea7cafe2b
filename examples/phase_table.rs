fn main() {
    print!("{}", pair::protocol::markdown_table());
}
