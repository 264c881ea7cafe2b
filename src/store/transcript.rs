//! Reading a writer's transcript for its write's journal record ([`crate::board::transcript`]):
//! from the position its previous write on the board left, never the whole file again, and at
//! most [`MAX_READ`] bytes per write.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use crate::board::transcript::{Position, Reader, fingerprint};

/// The most a write reads of a transcript: what is past it is left to the next write (the
/// position records where this one stopped).
pub const MAX_READ: u64 = 64 * 1024 * 1024;

/// What a write takes from its writer's transcript.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Measured {
    /// The tokens since the previous position; `None` when nothing could be measured (the first
    /// write on the board with this transcript, or a transcript that cannot be read).
    pub tokens: Option<u64>,
    /// Where reading stopped, for the write's record; `None` when the file cannot be read.
    pub position: Option<Position>,
    /// What the writer is told: why no usage was recorded, or what was assumed.
    pub warnings: Vec<String>,
}

/// Measure the transcript at `path` since `previous` (the agent's previous write's position on
/// the board, if any). Never fails: a problem is a warning and no usage.
pub fn measure(path: &Path, previous: Option<&Position>) -> Measured {
    match read(path, previous) {
        Ok(m) => m,
        Err(e) => Measured {
            tokens: None,
            position: None,
            warnings: vec![format!(
                "the transcript (--transcript/PAIR_TRANSCRIPT) cannot be read ({e}): this write \
                 records no usage; the next write counts from this agent's last recorded position"
            )],
        },
    }
}

/// How a transcript is opened: through the one reader of agents' files ([`crate::input`]),
/// never blocking (a FIFO is refused, not waited on while the board is locked), a regular file
/// only, and never through a link in its own place (a link planted there would have this
/// write record another file's size and fingerprint). It is the writer's own file, named by
/// the writer's user (an MCP server's, not its caller's): no place confines it.
const RULES: crate::input::Rules<'static> = crate::input::Rules {
    limit: u64::MAX,
    links: crate::input::Links::Never,
    within: crate::input::Within::Anywhere,
};

/// The most of a transcript's end that is searched for its last line end, at the first write
/// with it: a transcript whose last line is longer records no position yet.
const MAX_LAST_LINE: u64 = MAX_READ;

fn read(path: &Path, previous: Option<&Position>) -> std::io::Result<Measured> {
    let opened = crate::input::open(path, "the transcript", &RULES)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut file = opened.file;
    let len = opened.len;
    let mut warnings = Vec::new();
    // Where to start: after the previous position when the file is still the one it was read
    // at (as long, and the same first bytes); else from the start of the file as it is now.
    let start = match previous {
        None => None,
        Some(p) if p.offset > len => {
            warnings.push(format!(
                "the transcript is shorter than at this agent's previous write ({len} bytes, was \
                 at least {}): truncated or replaced, so it is counted from its start",
                p.offset
            ));
            Some(0)
        }
        Some(p) => {
            let mut head = vec![0; p.head_len() as usize];
            file.read_exact(&mut head)?;
            if fingerprint(&head) == p.head {
                Some(p.offset)
            } else {
                warnings.push(
                    "the transcript's first bytes changed since this agent's previous write: it \
                     was replaced (rotated), so it is counted from its start"
                        .to_string(),
                );
                Some(0)
            }
        }
    };
    // The first write with this transcript on the board counts nothing: what came before may
    // be another board's work. It records where the transcript stands.
    let Some(start) = start else {
        let Some(offset) = complete_end(&mut file, len)? else {
            return Err(std::io::Error::other(format!(
                "its last {} MiB hold no line end",
                MAX_LAST_LINE >> 20
            )));
        };
        return Ok(Measured {
            tokens: None,
            position: Some(position(&mut file, offset)?),
            warnings,
        });
    };
    file.seek(SeekFrom::Start(start))?;
    let limit = (len - start).min(MAX_READ);
    let mut input = BufReader::with_capacity(256 * 1024, (&mut file).take(limit));
    let mut reader = Reader::default();
    let mut line = Vec::new();
    let mut offset = start;
    loop {
        line.clear();
        let n = input.read_until(b'\n', &mut line)?;
        // A line still being written (no ending yet) is left for the next write.
        if n == 0 || line.last() != Some(&b'\n') {
            break;
        }
        offset += n as u64;
        reader.line(&line[..n - 1]);
    }
    drop(input);
    if len - start > MAX_READ {
        warnings.push(format!(
            "the transcript grew by {} bytes since this agent's previous write: the first {} MiB \
             are counted now, the rest by the next write",
            len - start,
            MAX_READ / (1024 * 1024)
        ));
    }
    let tally = reader.finish();
    if tally.malformed > 0 {
        warnings.push(format!(
            "{} line(s) of the transcript looked like usage but could not be read: skipped",
            tally.malformed
        ));
    }
    Ok(Measured {
        tokens: Some(tally.tokens),
        position: Some(position(&mut file, offset)?),
        warnings,
    })
}

/// The end of the last complete line of a file `len` bytes long (a line still being written is
/// not counted yet): found by reading back from the end, a block at a time, at most
/// [`MAX_LAST_LINE`] bytes; `None` when there is no line end in them (`Some(0)` for a file
/// shorter than that without one).
fn complete_end(file: &mut File, len: u64) -> std::io::Result<Option<u64>> {
    let mut end = len;
    let floor = len.saturating_sub(MAX_LAST_LINE);
    let mut block = vec![0u8; 64 * 1024];
    while end > floor {
        let from = end.saturating_sub(block.len() as u64).max(floor);
        let n = (end - from) as usize;
        file.seek(SeekFrom::Start(from))?;
        file.read_exact(&mut block[..n])?;
        if let Some(i) = memchr::memrchr(b'\n', &block[..n]) {
            return Ok(Some(from + i as u64 + 1));
        }
        end = from;
    }
    Ok((floor == 0).then_some(0))
}

/// The position at `offset`, with the fingerprint of the file's first bytes.
fn position(file: &mut File, offset: u64) -> std::io::Result<Position> {
    let mut head = vec![0; offset.min(crate::board::transcript::HEAD_BYTES) as usize];
    file.seek(SeekFrom::Start(0))?;
    file.read_exact(&mut head)?;
    Ok(Position {
        offset,
        head: fingerprint(&head),
    })
}
