//! Benchmark floor: the least a process can do to answer `poll` — start, read the whole file,
//! print one line, exit. Built and run by `examples/bench_pair.rs`.

use std::io::Write;

fn main() {
    let path = std::env::args_os().nth(1).expect("usage: floor_read FILE");
    let bytes = std::fs::read(&path).expect("read");
    let _ = writeln!(std::io::stdout().lock(), "{}", bytes.len());
}
