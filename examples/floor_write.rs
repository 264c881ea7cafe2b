//! Benchmark floor: the least a process can do for a durable, locked replace of a file — start,
//! open `<file>.lock` and `flock` it, read the file, write a temporary file in the same
//! directory (old content plus one line), fsync it, rename it over the file, fsync the
//! directory, exit. Built and run by `examples/bench_pair.rs`.
//!
//! `floor_write FILE --sha256`: the same, and the SHA-256 of the old content and of the new, as
//! a write that records both (a journal record's `before` and `after`) must compute: the floor
//! of such a write (`examples/bench_matrix.rs`).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;

fn main() {
    let path = PathBuf::from(std::env::args_os().nth(1).expect("usage: floor_write FILE"));
    let mut lock_name = path.clone().into_os_string();
    lock_name.push(".lock");
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_name)
        .expect("open lock");
    // SAFETY: flock on a file descriptor we own.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    let hash = std::env::args().nth(2).is_some_and(|a| a == "--sha256");
    let mut bytes = std::fs::read(&path).expect("read");
    let mut digests = String::new();
    if hash {
        use sha2::{Digest, Sha256};
        let old = Sha256::digest(&bytes);
        bytes.extend_from_slice(b"floor line\n");
        let new = Sha256::digest(&bytes);
        digests = format!("{:02x}{:02x}", old[0], new[0]);
    } else {
        bytes.extend_from_slice(b"floor line\n");
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tmp = dir.join(format!(".floor-tmp-{}", std::process::id()));
    let mut f = File::create(&tmp).expect("create temp");
    f.write_all(&bytes).expect("write temp");
    f.sync_all().expect("fsync temp");
    drop(f);
    std::fs::rename(&tmp, &path).expect("rename");
    File::open(&dir)
        .and_then(|d| d.sync_all())
        .expect("fsync dir");
    drop(lock);
    let _ = writeln!(std::io::stdout().lock(), "{} {digests}", bytes.len());
}
