//! "Did you mean …?": the closest known word to a mistyped one (agent ids, section names,
//! phases), by edit distance.

/// The Levenshtein distance between two strings, in characters, ignoring case.
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().flat_map(char::to_lowercase).collect();
    let b: Vec<char> = b.chars().flat_map(char::to_lowercase).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != cb);
            cur[j + 1] = substitute.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `word`, if one is close enough to be what was meant: the same
/// word in another case first, else the nearest within a third of the word's length (at least
/// one edit, at most three). `word` itself is never suggested.
pub fn closest<'a, I>(word: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let limit = word.chars().count().div_ceil(3).clamp(1, 3);
    let mut best: Option<(usize, &'a str)> = None;
    for c in candidates {
        if c == word {
            continue;
        }
        let d = distance(word, c);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// The agent id on the blackboard (or required) closest to `id`, another one.
pub fn agent<'a>(fm: &'a crate::board::frontmatter::Frontmatter, id: &str) -> Option<&'a str> {
    let known = fm
        .agents
        .iter()
        .map(|(a, _)| a.as_str())
        .chain(fm.required_reviewers.iter().map(String::as_str));
    closest(id, known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_words_are_suggested_and_far_ones_are_not() {
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(closest("alcie", ["alice", "bob"]), Some("alice"));
        assert_eq!(
            closest("PLANING", ["PLANNING", "PLAN_APPROVED"]),
            Some("PLANNING")
        );
        assert_eq!(closest("evidence", ["Evidence", "Goal"]), Some("Evidence"));
        assert_eq!(closest("Evidnce", ["Evidence", "Goal"]), Some("Evidence"));
        assert_eq!(closest("zed", ["alice", "bob"]), None);
        assert_eq!(closest("alice", ["alice"]), None);
    }
}
