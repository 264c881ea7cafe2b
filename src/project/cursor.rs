//! A project's cursor: a position in the journal of every board of a project, as one token an
//! agent copies from one `poll PROJECT --after CURSOR` to the next.
//!
//! `0` is the start of every board. Any other cursor is [`TAG`] followed by the base64url
//! (unpadded) encoding of its entries, one per board past position 0, in key order: the first
//! [`KEY_BYTES`] bytes of the SHA-256 of the board's name in the project, then the position as
//! an unsigned LEB128 number. A board the cursor does not name is at position 0 (a board added
//! later is read from its first record); a board it names that is no longer in the project is
//! dropped from the next cursor.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

/// What a cursor other than `0` starts with: the version of the encoding.
pub const TAG: &str = "p1.";

/// How many bytes of the SHA-256 of a board's name identify it in a cursor.
pub const KEY_BYTES: usize = 8;

/// The longest cursor read, in characters: 64 KiB holds several thousand boards.
const MAX_LEN: usize = 64 * 1024;

type Key = [u8; KEY_BYTES];

/// A position per board of a project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cursor {
    positions: BTreeMap<Key, u64>,
}

fn key(name: &str) -> Key {
    let digest = Sha256::digest(name.as_bytes());
    let mut k = [0u8; KEY_BYTES];
    k.copy_from_slice(&digest[..KEY_BYTES]);
    k
}

impl Cursor {
    /// Read a cursor; the error says what is wrong with it.
    pub fn parse(text: &str) -> std::result::Result<Cursor, String> {
        let text = text.trim();
        if text == "0" {
            return Ok(Cursor::default());
        }
        if text.len() > MAX_LEN {
            return Err(format!("it is longer than {MAX_LEN} characters"));
        }
        let Some(body) = text.strip_prefix(TAG) else {
            return Err(format!(
                "a project's cursor is `0` or starts with `{TAG}` (a number is a position in one \
                 board's journal)"
            ));
        };
        let bytes = decode(body).ok_or("it is not base64url")?;
        let mut positions = BTreeMap::new();
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            if rest.len() <= KEY_BYTES {
                return Err("it ends inside an entry".into());
            }
            let mut k = [0u8; KEY_BYTES];
            k.copy_from_slice(&rest[..KEY_BYTES]);
            rest = &rest[KEY_BYTES..];
            let (n, used) = leb128(rest).ok_or("a position in it is cut short or too large")?;
            rest = &rest[used..];
            if positions.insert(k, n).is_some() {
                return Err("it names a board twice".into());
            }
        }
        Ok(Cursor { positions })
    }

    /// The position of the board named `name` in the project (0 if the cursor does not name
    /// it).
    pub fn get(&self, name: &str) -> u64 {
        self.positions.get(&key(name)).copied().unwrap_or(0)
    }

    /// The cursor of these boards at these positions (boards at 0 are left out).
    pub fn of<'a>(positions: impl IntoIterator<Item = (&'a str, u64)>) -> Cursor {
        Cursor {
            positions: positions
                .into_iter()
                .filter(|(_, n)| *n > 0)
                .map(|(name, n)| (key(name), n))
                .collect(),
        }
    }

    /// The token an agent passes back.
    pub fn token(&self) -> String {
        if self.positions.is_empty() {
            return "0".into();
        }
        let mut bytes = Vec::with_capacity(self.positions.len() * (KEY_BYTES + 3));
        for (k, n) in &self.positions {
            bytes.extend_from_slice(k);
            let mut n = *n;
            loop {
                let low = (n & 0x7f) as u8;
                n >>= 7;
                if n == 0 {
                    bytes.push(low);
                    break;
                }
                bytes.push(low | 0x80);
            }
        }
        format!("{TAG}{}", encode(&bytes))
    }
}

/// An unsigned LEB128 number at the start of `bytes`, and how many bytes it took.
fn leb128(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut n: u64 = 0;
    for (i, b) in bytes.iter().enumerate().take(10) {
        let part = u64::from(b & 0x7f);
        let shifted = part.checked_shl(7 * i as u32)?;
        if shifted >> (7 * i as u32) != part {
            return None;
        }
        n |= shifted;
        if b & 0x80 == 0 {
            return Some((n, i + 1));
        }
    }
    None
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 0x3f) as usize] as char);
        }
    }
    out
}

fn decode(text: &str) -> Option<Vec<u8>> {
    let digits: Vec<u32> = text
        .bytes()
        .map(|c| ALPHABET.iter().position(|a| *a == c).map(|p| p as u32))
        .collect::<Option<_>>()?;
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        if chunk.len() == 1 {
            return None;
        }
        let mut n = 0u32;
        for (i, d) in chunk.iter().enumerate() {
            n |= d << (18 - 6 * i);
        }
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_as_it_was_written() {
        for boards in 0..20usize {
            let names: Vec<String> = (0..boards).map(|i| format!("team/b{i}")).collect();
            let c = Cursor::of(names.iter().map(|n| (n.as_str(), (n.len() as u64) << 20)));
            let back = Cursor::parse(&c.token()).unwrap();
            assert_eq!(back, c);
            for n in &names {
                assert_eq!(back.get(n), (n.len() as u64) << 20);
            }
        }
        assert_eq!(Cursor::of([("a", 0)]).token(), "0");
        let big = Cursor::of([("a", u64::MAX)]);
        assert_eq!(Cursor::parse(&big.token()).unwrap().get("a"), u64::MAX);
    }

    #[test]
    fn a_damaged_cursor_is_refused() {
        let good = Cursor::of([("a", 300), ("b", 2)]).token();
        for bad in [
            "1",
            "p1.",
            "p1.!",
            "p2.AAAA",
            &good[..good.len() - 1],
            &format!("{good}A"),
        ] {
            if bad == "p1." {
                // No entry at all: every board at 0.
                assert_eq!(Cursor::parse(bad).unwrap(), Cursor::default());
                continue;
            }
            assert!(Cursor::parse(bad).is_err(), "{bad}");
        }
    }
}
