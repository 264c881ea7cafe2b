//! The one reader of the files `pair` reads on an agent's behalf: a note, goal or board given by
//! its file (`--note-file`, an MCP `note_file`), a review target, the files a red test pins, an
//! objection's anchor, a writer's transcript.
//!
//! Every such read holds to the same rules, whoever asked for it:
//!
//! * the open never blocks (`O_NONBLOCK`: a FIFO without a writer is refused, not waited on);
//! * only a regular file is read (a FIFO, a device such as `/dev/zero`, a socket or a directory
//!   is refused before a byte is read);
//! * at most [`Rules::limit`] bytes: a larger file is refused by its size, and a file that grows
//!   while it is read is refused when it passes the limit;
//! * where the read belongs to places ([`Within`]), the file actually opened (the kernel's path
//!   of the open descriptor, every link resolved) must be inside one of them, so neither a link
//!   nor `..` leads out;
//! * where links are not to be followed at all ([`Links::Never`]), a link in the file's own
//!   place is refused (`O_NOFOLLOW`);
//! * a digest is computed while reading ([`digest`]), so a large target costs a buffer, not its
//!   size in memory.
//!
//! An edge that serves callers it does not trust (the MCP server) confines every read of a
//! call to its places with [`confine`]; the command line reads what its user can read.

use std::cell::RefCell;
use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use crate::error::{Error, Result};
use crate::text::escape;

/// Whether a link in the file's own place is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Followed (then checked against [`Within`], when the read has places).
    Follow,
    /// Refused: the name must be the file itself.
    Never,
}

/// Where the file read must be.
#[derive(Debug, Clone, Copy)]
pub enum Within<'a> {
    /// Wherever the call may read: anywhere on the command line, the call's places when an
    /// edge confined it ([`confine`]).
    Call,
    /// Inside one of these directories (and the call's places, when it has some).
    Dirs(&'a [PathBuf]),
    /// Anywhere: a file the user of the edge named, not its caller (an MCP server's own
    /// transcript).
    Anywhere,
}

/// How one read is done.
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    /// The most bytes read.
    pub limit: u64,
    pub links: Links,
    pub within: Within<'a>,
}

impl Rules<'_> {
    /// A file named by its user, up to `limit` bytes, wherever the call may read.
    pub fn given(limit: u64) -> Rules<'static> {
        Rules {
            limit,
            links: Links::Follow,
            within: Within::Call,
        }
    }

    /// A file inside one of `dirs` (and the call's places), up to `limit` bytes.
    pub fn inside(dirs: &[PathBuf], limit: u64) -> Rules<'_> {
        Rules {
            within: Within::Dirs(dirs),
            ..Rules::given(limit)
        }
    }
}

thread_local! {
    /// The places the call running on this thread may read from, when an edge confined it.
    static PLACES: RefCell<Option<Vec<PathBuf>>> = const { RefCell::new(None) };
}

/// Gives the thread's places back when the confined call ends, however it ends.
pub struct Confined(());

impl Drop for Confined {
    fn drop(&mut self) {
        PLACES.with(|p| p.borrow_mut().take());
    }
}

/// Confine every read of the call running on this thread to `places` (directories) until the
/// guard is dropped. A place that does not exist is left out.
pub fn confine(places: &[PathBuf]) -> Confined {
    let real: Vec<PathBuf> = places
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    PLACES.with(|p| *p.borrow_mut() = Some(real));
    Confined(())
}

/// The call's places, when it is confined.
pub fn places() -> Option<Vec<PathBuf>> {
    PLACES.with(|p| p.borrow().clone())
}

/// How a kind of file is named in a refusal.
pub fn kind_of(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO (named pipe)"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_block_device() || ft.is_char_device() {
        "a device"
    } else if ft.is_symlink() {
        "a symlink"
    } else {
        "not a regular file"
    }
}

/// A regular file opened under the rules, not read yet.
#[derive(Debug)]
pub struct Opened {
    pub file: File,
    /// The file's length when it was opened.
    pub len: u64,
    /// Where the file is: every link resolved.
    pub real: PathBuf,
}

/// Open `path` for reading under `rules`; `what` names it in a refusal (`--note-file`, `the
/// review target`).
pub fn open(path: &Path, what: &str, rules: &Rules<'_>) -> Result<Opened> {
    let shown = || escape(&path.display().to_string()).into_owned();
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if rules.links == Links::Never {
        flags |= libc::O_NOFOLLOW;
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                Error::Usage(format!("{what} {}: no such file", shown()))
            }
            _ if e.raw_os_error() == Some(libc::ELOOP) && rules.links == Links::Never => {
                Error::Usage(format!(
                    "{what} {}: is a symlink, which is not followed here; name the file itself",
                    shown()
                ))
            }
            _ => match std::fs::metadata(path) {
                Ok(meta) if !meta.is_file() => not_regular(&shown(), what, &meta),
                _ => Error::io(path, "open", e),
            },
        })?;
    let meta = file.metadata().map_err(|e| Error::io(path, "stat", e))?;
    if !meta.is_file() {
        return Err(not_regular(&shown(), what, &meta));
    }
    let real = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .or_else(|_| std::fs::canonicalize(path))
        .map_err(|e| Error::io(path, "resolve", e))?;
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Within::Dirs(d) = rules.within {
        dirs.extend(d.iter().filter_map(|p| std::fs::canonicalize(p).ok()));
        if dirs.is_empty() || !dirs.iter().any(|d| real.starts_with(d)) {
            return Err(outside(&shown(), what, &real, &dirs));
        }
    }
    if let Some(places) = places().filter(|_| !matches!(rules.within, Within::Anywhere))
        && !places.iter().any(|d| real.starts_with(d))
    {
        return Err(outside(&shown(), what, &real, &places));
    }
    if meta.len() > rules.limit {
        return Err(too_large(&shown(), what, rules.limit));
    }
    Ok(Opened {
        file,
        len: meta.len(),
        real,
    })
}

/// The bytes of `path`, read under `rules`.
pub fn read(path: &Path, what: &str, rules: &Rules<'_>) -> Result<Vec<u8>> {
    let opened = open(path, what, rules)?;
    let mut buf = Vec::with_capacity(opened.len.min(rules.limit) as usize);
    opened
        .file
        .take(rules.limit + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io(path, "read", e))?;
    if buf.len() as u64 > rules.limit {
        let shown = escape(&path.display().to_string()).into_owned();
        return Err(too_large(&shown, what, rules.limit));
    }
    Ok(buf)
}

/// What [`digest`] finds in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    /// The SHA-256 of its bytes, in hex.
    pub sha256: String,
    pub len: u64,
    /// Its lines: the line ends, and one more for a last line without one.
    pub lines: u64,
    /// Where the file is: every link resolved.
    pub real: PathBuf,
}

/// The digest of `path` read under `rules`, a buffer at a time.
pub fn digest(path: &Path, what: &str, rules: &Rules<'_>) -> Result<Digest> {
    let opened = open(path, what, rules)?;
    let mut input = opened.file.take(rules.limit + 1);
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    let (mut len, mut ends, mut last) = (0u64, 0u64, b'\n');
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(path, "read", e)),
        };
        hasher.update(&buf[..n]);
        ends += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
        last = buf[n - 1];
        len += n as u64;
    }
    if len > rules.limit {
        let shown = escape(&path.display().to_string()).into_owned();
        return Err(too_large(&shown, what, rules.limit));
    }
    Ok(Digest {
        sha256: crate::text::hex(&hasher.finalize()),
        len,
        lines: ends + u64::from(len > 0 && last != b'\n'),
        real: opened.real,
    })
}

fn not_regular(shown: &str, what: &str, meta: &std::fs::Metadata) -> Error {
    let kind = kind_of(&meta.file_type());
    Error::Usage(format!("{what} {shown}: is {kind}; give a regular file"))
}

fn too_large(shown: &str, what: &str, limit: u64) -> Error {
    Error::Usage(format!(
        "{what} {shown}: over the {} limit of what is read ({limit} bytes)",
        size(limit)
    ))
}

fn outside(shown: &str, what: &str, real: &Path, places: &[PathBuf]) -> Error {
    let list = if places.is_empty() {
        "(none exists)".to_string()
    } else {
        places
            .iter()
            .map(|p| escape(&p.display().to_string()).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    Error::Usage(format!(
        "{what} {shown}: is {}, outside the places it may be read from here ({list}); give a \
         file inside one of them",
        escape(&real.display().to_string())
    ))
}

/// A limit as people say it: `64 MiB`, `1 KiB`, `12 bytes`.
fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_counts_lines_as_a_reader_does() {
        let dir = tempfile::tempdir().unwrap();
        for (text, lines) in [("", 0), ("a", 1), ("a\n", 1), ("a\nb", 2), ("\n\n", 2)] {
            let p = dir.path().join("f");
            std::fs::write(&p, text).unwrap();
            let d = digest(&p, "f", &Rules::given(100)).unwrap();
            assert_eq!((d.lines, d.len), (lines, text.len() as u64), "{text:?}");
            assert_eq!(d.sha256, crate::text::sha256_hex(text.as_bytes()));
        }
    }

    #[test]
    fn limits_and_places_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let inside = dir.path().join("in");
        std::fs::create_dir(&inside).unwrap();
        let p = inside.join("f");
        std::fs::write(&p, "12345").unwrap();
        assert!(read(&p, "f", &Rules::given(4)).is_err());
        assert_eq!(read(&p, "f", &Rules::given(5)).unwrap(), b"12345");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        let never = Rules {
            links: Links::Never,
            ..Rules::given(5)
        };
        assert!(read(&link, "f", &never).is_err());
        let places = [inside.clone()];
        let within = Rules {
            within: Within::Dirs(&places),
            ..Rules::given(5)
        };
        assert!(
            read(&link, "f", &within).is_ok(),
            "a link that stays inside"
        );
        let out = dir.path().join("out");
        std::fs::write(&out, "x").unwrap();
        std::os::unix::fs::symlink(&out, inside.join("escape")).unwrap();
        assert!(read(&inside.join("escape"), "f", &within).is_err());
        assert!(read(&inside.join("../out"), "f", &within).is_err());
        {
            let _c = confine(&places);
            assert!(read(&out, "f", &Rules::given(5)).is_err());
            assert!(read(&p, "f", &Rules::given(5)).is_ok());
        }
        assert!(
            read(&out, "f", &Rules::given(5)).is_ok(),
            "the guard gives the places back"
        );
    }
}
