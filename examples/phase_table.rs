fn main() {
    print!("{}", pair::law::protocol::markdown_table());
}
