//! Writing a changed frontmatter without losing what a human wrote into it: comment lines,
//! comments at the end of a line, and the spelling of values that did not change.
//!
//! The typed board knows values, not text. So a write renders the canonical text of the old and
//! of the new board ([`crate::board::frontmatter::Frontmatter::emit`], which works from the field registry and
//! so covers fields added later without code here), and carries the change between those two
//! over to the file's own text, line by line:
//!
//! * a line whose value did not change is written back exactly as the file had it (its comment
//!   included);
//! * a line whose value changed is written canonically, keeping the comment lines above it and
//!   the comment at its end (`yolo: false  # ask me first` → `yolo: true  # ask me first`);
//! * comment lines above a line that went away stay where they were; a comment at the end of a
//!   line that went away cannot stay, and the write says so.
//!
//! The result is parsed again and must be the new board exactly; if it is not (a hand layout
//! this line matching cannot follow), the canonical text is written and the write says which
//! comments were dropped. The file's frontmatter is untouched when the board did not change.

use crate::board::frontmatter::Frontmatter;

/// The largest table the line matching fills (old lines × new lines) before it gives up and
/// writes the canonical text: a frontmatter with hand comments is small, and a huge one must
/// not make a write quadratic.
const MAX_CELLS: usize = 4_000_000;

/// The frontmatter text to write, and a warning for each comment that could not be kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub text: String,
    pub dropped: Vec<String>,
}

/// One line that carries content, with the comment and blank lines before it.
#[derive(Debug, Clone)]
struct Unit<'a> {
    lead: &'a str,
    line: &'a str,
    /// The line without its comment and trailing space: what is compared.
    content: &'a str,
    /// The comment at the end of the line, with the space before it (`"  # why"`), or "".
    comment: &'a str,
}

/// Split text (lines ending in `\n`) into content units and the trailing comment/blank lines.
fn units(text: &str) -> (Vec<Unit<'_>>, &str) {
    let mut out = Vec::new();
    let mut lead_start = 0;
    let mut pos = 0;
    while pos < text.len() {
        let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1);
        let line = &text[pos..end];
        let bare = line.trim_end_matches(['\n', '\r']);
        let t = bare.trim_start();
        if !(t.is_empty() || t.starts_with('#')) {
            let (content, comment) = split_comment(bare);
            out.push(Unit {
                lead: &text[lead_start..pos],
                line,
                content,
                comment,
            });
            lead_start = end;
        }
        pos = end;
    }
    (out, &text[lead_start..])
}

/// A line's content and its end-of-line comment: a `#` after white space, outside quotes.
fn split_comment(line: &str) -> (&str, &str) {
    let b = line.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(b'"') if c == b'\\' => i += 1,
            Some(q) if c == q => {
                // `''` inside a single-quoted scalar is an escaped quote.
                if q == b'\'' && b.get(i + 1) == Some(&b'\'') {
                    i += 1;
                } else {
                    quote = None;
                }
            }
            Some(_) => {}
            None if (c == b'"' || c == b'\'')
                && (i == 0
                    || matches!(b[i - 1], b' ' | b'\t' | b':' | b'-' | b'[' | b'{' | b',')) =>
            {
                quote = Some(c);
            }
            None if c == b'#' && i > 0 && matches!(b[i - 1], b' ' | b'\t') => {
                let content = line[..i].trim_end();
                return (content, &line[content.len()..]);
            }
            None => {}
        }
        i += 1;
    }
    (line.trim_end(), "")
}

/// The key part of a content line (`    status:`), to pair a changed line with the one it
/// replaces.
fn key_of(content: &str) -> Option<&str> {
    match content.find(": ") {
        Some(i) => Some(&content[..i + 1]),
        None if content.ends_with(':') => Some(content),
        None => None,
    }
}

/// The longest common subsequence of two sequences of lines: for each index of `a`, the index
/// of `b` it is matched with. `None` when the table would be too large.
fn lcs(a: &[&str], b: &[&str]) -> Option<Vec<Option<usize>>> {
    let mut map = vec![None; a.len()];
    // Equal heads and tails need no table.
    let mut head = 0;
    while head < a.len() && head < b.len() && a[head] == b[head] {
        map[head] = Some(head);
        head += 1;
    }
    let mut tail = 0;
    while tail < a.len() - head
        && tail < b.len() - head
        && a[a.len() - 1 - tail] == b[b.len() - 1 - tail]
    {
        map[a.len() - 1 - tail] = Some(b.len() - 1 - tail);
        tail += 1;
    }
    let (ma, mb) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    if ma.is_empty() || mb.is_empty() {
        return Some(map);
    }
    let (n, m) = (ma.len(), mb.len());
    if n.saturating_mul(m) > MAX_CELLS {
        return None;
    }
    // len[i][j]: the LCS of ma[i..] and mb[j..].
    let w = m + 1;
    let mut len = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            len[i * w + j] = if ma[i] == mb[j] {
                len[(i + 1) * w + j + 1] + 1
            } else {
                len[(i + 1) * w + j].max(len[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if ma[i] == mb[j] {
            map[head + i] = Some(head + j);
            i += 1;
            j += 1;
        } else if len[(i + 1) * w + j] >= len[i * w + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    Some(map)
}

/// Render `new` in the words of `old_text`, the frontmatter text `old` was read from (without
/// its delimiter lines).
pub fn render(old_text: &str, old: &Frontmatter, new: &Frontmatter) -> Rendered {
    let canonical_new = new.emit();
    let old_text = old_text.replace("\r\n", "\n");
    if old == new {
        return Rendered {
            text: old_text,
            dropped: vec![],
        };
    }
    let canonical_old = old.emit();
    if old_text == canonical_old {
        return Rendered {
            text: canonical_new,
            dropped: vec![],
        };
    }
    let fallback = |old_text: &str| Rendered {
        dropped: comments_of(old_text)
            .into_iter()
            .map(|c| format!("the comment {c:?} could not be kept"))
            .collect(),
        text: canonical_new.clone(),
    };
    match carry(&old_text, &canonical_old, &canonical_new) {
        Some((text, dropped)) if reads_as(&text, new) => {
            let kept = keep_unchanged(&old_text, &text);
            if kept != text && reads_as(&kept, new) {
                Rendered {
                    text: kept,
                    dropped,
                }
            } else {
                Rendered { text, dropped }
            }
        }
        _ => fallback(&old_text),
    }
}

/// The one entry a top-level segment of frontmatter text holds, parsed alone.
fn entry_of(segment: &str) -> Option<(String, crate::board::yaml::Node)> {
    match crate::board::yaml::parse(segment, 0) {
        Ok(crate::board::yaml::Node {
            value: crate::board::yaml::Value::Map(mut entries),
            ..
        }) if entries.len() == 1 => Some(entries.remove(0)),
        _ => None,
    }
}

/// Top-level entries whose value the write did not change, written back exactly as the file
/// had them, whatever their spelling (`required_reviewers: [alice, bob]` stays a flow list).
fn keep_unchanged(old_text: &str, carried: &str) -> String {
    let old: Vec<(String, (String, crate::board::yaml::Node))> =
        crate::board::yaml::top_level_segments(old_text)
            .into_iter()
            .filter_map(|s| entry_of(&s).map(|e| (s, e)))
            .collect();
    let mut out = String::with_capacity(carried.len());
    for segment in crate::board::yaml::top_level_segments(carried) {
        let same = entry_of(&segment).and_then(|(key, value)| {
            old.iter()
                .find(|(_, (k, v))| *k == key && *v == value)
                .map(|(s, _)| s)
        });
        out.push_str(same.map_or(segment.as_str(), String::as_str));
    }
    out
}

/// Every comment in a text, for the warning of a write that could not keep them.
fn comments_of(text: &str) -> Vec<String> {
    let (units, tail) = units(text);
    let lines = |block: &str| -> Vec<String> {
        block
            .lines()
            .filter(|l| l.trim_start().starts_with('#'))
            .map(|l| l.trim().to_string())
            .collect()
    };
    let mut out = Vec::new();
    for u in &units {
        out.extend(lines(u.lead));
        if !u.comment.is_empty() {
            out.push(u.comment.trim().to_string());
        }
    }
    out.extend(lines(tail));
    out
}

/// Whether a frontmatter text parses to exactly this board.
fn reads_as(text: &str, fm: &Frontmatter) -> bool {
    let Ok(node) = crate::board::yaml::parse(text, 1) else {
        return false;
    };
    matches!(crate::board::frontmatter::from_node(&node), Ok(p) if p.fm == *fm)
}

/// Carry the change from `c_old` to `c_new` over to `old_text`.
fn carry(old_text: &str, c_old: &str, c_new: &str) -> Option<(String, Vec<String>)> {
    let (old, old_tail) = units(old_text);
    let (cold, _) = units(c_old);
    let (cnew, cnew_tail) = units(c_new);
    let old_keys: Vec<&str> = old.iter().map(|u| u.content).collect();
    let cold_keys: Vec<&str> = cold.iter().map(|u| u.content).collect();
    let cnew_lines: Vec<&str> = cnew.iter().map(|u| u.line).collect();
    let cold_lines: Vec<&str> = cold.iter().map(|u| u.line).collect();
    // old line k ↔ canonical old line; canonical old ↔ canonical new.
    let old_to_cold = lcs(&old_keys, &cold_keys)?;
    let cold_to_cnew = lcs(&cold_lines, &cnew_lines)?;
    let mut cnew_source: Vec<Option<usize>> = vec![None; cnew.len()];
    for (k, c) in old_to_cold.iter().enumerate() {
        if let Some(j) = c.and_then(|c| cold_to_cnew[c]) {
            cnew_source[j] = Some(k);
        }
    }
    let mut used = vec![false; old.len()];
    for k in cnew_source.iter().flatten() {
        used[*k] = true;
    }
    let mut out = String::with_capacity(old_text.len() + 64);
    let mut dropped = Vec::new();
    let mut next_old = 0;
    // Pass the old units before `upto` that were not carried: their comment lines stay, an
    // end-of-line comment is lost.
    let flush = |out: &mut String, dropped: &mut Vec<String>, from: usize, upto: usize| {
        for u in &old[from..upto] {
            out.push_str(u.lead);
            if !u.comment.is_empty() {
                dropped.push(format!(
                    "the comment {:?} on `{}` could not be kept: that line is gone",
                    u.comment.trim(),
                    u.content.trim()
                ));
            }
        }
    };
    for (j, unit) in cnew.iter().enumerate() {
        if let Some(k) = cnew_source[j] {
            if k < next_old {
                return None;
            }
            flush(&mut out, &mut dropped, next_old, k);
            out.push_str(old[k].lead);
            out.push_str(old[k].line);
            next_old = k + 1;
            continue;
        }
        // A new or changed line: the old line it replaces is the next one not carried, before
        // the next carried line, with the same key.
        let limit = cnew_source[j..]
            .iter()
            .flatten()
            .next()
            .copied()
            .unwrap_or(old.len());
        let replaced = (next_old..limit.max(next_old)).find(|&k| {
            !used[k] && key_of(old[k].content).is_some_and(|o| Some(o) == key_of(unit.content))
        });
        match replaced {
            Some(k) => {
                flush(&mut out, &mut dropped, next_old, k);
                out.push_str(old[k].lead);
                out.push_str(unit.content);
                out.push_str(old[k].comment);
                out.push('\n');
                used[k] = true;
                next_old = k + 1;
            }
            None => {
                out.push_str(unit.lead);
                out.push_str(unit.line);
            }
        }
    }
    flush(&mut out, &mut dropped, next_old, old.len());
    // Lines the canonical text ends with (none today) and the file's own closing comments.
    out.push_str(cnew_tail);
    out.push_str(old_tail);
    Some((out, dropped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_split_off_outside_quotes() {
        assert_eq!(
            split_comment("yolo: false  # ask"),
            ("yolo: false", "  # ask")
        );
        assert_eq!(split_comment("a: \"x # y\""), ("a: \"x # y\"", ""));
        assert_eq!(
            split_comment("a: 'it''s # x'  # c"),
            ("a: 'it''s # x'", "  # c")
        );
        assert_eq!(split_comment("a: b#c"), ("a: b#c", ""));
    }

    #[test]
    fn lcs_matches_equal_lines_in_order() {
        let a = ["x", "a", "b", "c"];
        let b = ["a", "y", "c"];
        assert_eq!(lcs(&a, &b), Some(vec![None, Some(0), None, Some(2)]));
    }
}
