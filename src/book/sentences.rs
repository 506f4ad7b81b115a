//! Sentence boundaries inside one block of prose, for splitting a single block too large for
//! the model's context or output limit ([`split_at_sentence`]). The parts are byte ranges of
//! the text, so joining them is exact.
//!
//! A **sentence boundary** is the position right after
//! - a CJK full stop, exclamation or question mark (`。！？`, also the full-width `．`) and any
//!   closing quotes or brackets after it (`”’」』）】》`), with no space needed; or
//! - a Latin `.`, `!`, `?` or `…`, any closing quotes or brackets (`"'”’)]`) after it, and the
//!   run of whitespace that follows, when the next character is not a lower-case letter (so
//!   `e.g. the` and `3.14` are not boundaries).
//!
//! Never a boundary: inside inline code (between backticks), inside a link or image target
//! (`](…)`), inside math (`$…$`), at the very start or end. A block that is not prose (a code
//! fence, an indented code block, a table, an HTML block) has no sentence boundary.

/// Byte offsets of the sentence boundaries of `text` (see the module docs), increasing; each
/// is a char boundary strictly inside `text`.
pub fn sentence_boundaries(text: &str) -> Vec<usize> {
    let first = text.trim_start();
    if first.starts_with("```")
        || first.starts_with("~~~")
        || first.starts_with('|')
        || first.starts_with('<')
        || text.starts_with("    ")
        || text.starts_with('\t')
    {
        return Vec::new();
    }
    const CJK_END: &[char] = &['。', '！', '？', '．'];
    const CJK_CLOSE: &[char] = &['”', '’', '」', '』', '）', '】', '》'];
    const LATIN_END: &[char] = &['.', '!', '?', '…'];
    const LATIN_CLOSE: &[char] = &['"', '\'', '”', '’', ')', ']'];
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let (mut in_code, mut in_math, mut in_target) = (false, false, false);
    let mut i = 0;
    while i < chars.len() {
        let (_, c) = chars[i];
        match c {
            '`' => in_code = !in_code,
            '$' if !in_code => in_math = !in_math,
            '(' if !in_code && i > 0 && chars[i - 1].1 == ']' => in_target = true,
            ')' if in_target => in_target = false,
            '\n' if !in_code => {
                // A blank line or a paragraph break ends any unclosed span.
                in_math = false;
                in_target = false;
            }
            _ => {}
        }
        if in_code || in_math || in_target {
            i += 1;
            continue;
        }
        let end_of = |j: usize| chars.get(j).map_or(text.len(), |&(b, _)| b);
        if CJK_END.contains(&c) {
            let mut j = i + 1;
            while j < chars.len() && CJK_CLOSE.contains(&chars[j].1) {
                j += 1;
            }
            let at = end_of(j);
            if at < text.len() && !text[at..].trim().is_empty() {
                out.push(at);
            }
            i = j;
            continue;
        }
        if LATIN_END.contains(&c) {
            let mut j = i + 1;
            while j < chars.len() && LATIN_CLOSE.contains(&chars[j].1) {
                j += 1;
            }
            let ws = j;
            while j < chars.len() && chars[j].1.is_whitespace() {
                j += 1;
            }
            if j > ws && j < chars.len() && !chars[j].1.is_lowercase() {
                out.push(end_of(j));
            }
            i = j.max(i + 1);
            continue;
        }
        i += 1;
    }
    out
}

/// The sentence boundary of `text` closest to its middle by characters, or `None` when it has
/// none (one sentence, or not prose).
pub fn split_at_sentence(text: &str) -> Option<usize> {
    let half = text.chars().count() / 2;
    sentence_boundaries(text)
        .into_iter()
        .min_by_key(|&pos| text[..pos].chars().count().abs_diff(half))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parts(text: &str) -> Vec<&str> {
        let mut v = Vec::new();
        let mut last = 0;
        for b in sentence_boundaries(text) {
            v.push(&text[last..b]);
            last = b;
        }
        v.push(&text[last..]);
        v
    }

    #[test]
    fn latin_and_cjk_sentences() {
        assert_eq!(
            parts("One. Two! \"Three?\" Four, e.g. five.\n"),
            vec!["One. ", "Two! ", "\"Three?\" ", "Four, e.g. five.\n"]
        );
        assert_eq!(
            parts("第一句。第二句！“第三句？”第四句。\n"),
            vec!["第一句。", "第二句！", "“第三句？”", "第四句。\n"]
        );
        // Not inside code, math or a link target; not before a lower-case word; 3.14 stays.
        assert_eq!(
            parts("Call `a. B` now. See [x](http://a.b/C. D) and $x. Y$ too. Pi is 3.14 here.\n"),
            vec![
                "Call `a. B` now. ",
                "See [x](http://a.b/C. D) and $x. Y$ too. ",
                "Pi is 3.14 here.\n"
            ]
        );
        assert!(sentence_boundaries("```\nA. B. C.\n```\n").is_empty());
        assert!(sentence_boundaries("| A. B | C. D |\n").is_empty());
    }

    #[test]
    fn split_nearest_the_middle() {
        let t = "Alpha beta. Gamma delta. Epsilon zeta. Eta theta.\n";
        let cut = split_at_sentence(t).unwrap();
        assert_eq!(&t[cut..], "Epsilon zeta. Eta theta.\n");
        assert_eq!(split_at_sentence("Only one sentence here.\n"), None);
    }

    proptest! {
        #[test]
        fn boundaries_cut_losslessly(s in "[a-zA-Z .!?。！？”`$\\[\\]()\\n]{0,80}") {
            let b = sentence_boundaries(&s);
            let mut last = 0;
            let mut joined = String::new();
            for &x in &b {
                prop_assert!(x > last && x < s.len() && s.is_char_boundary(x));
                joined.push_str(&s[last..x]);
                last = x;
            }
            joined.push_str(&s[last..]);
            prop_assert_eq!(joined, s);
        }
    }
}
